/*-------------------------------------------------------------------------
 *
 * join_api.c
 *	  The hash join's API checks on one device, for the suite in join.c:
 *	  bad requests and call orders are refused with GA_ERR_INVALID,
 *	  fail_at_batch fails that probe with GA_ERR_INJECTED, a wait callback
 *	  that says stop cancels a build and a probe (the CPU device must ask
 *	  it) and the cancel is reported again by the next call, two joins live
 *	  side by side without touching each other's answers or batches, and
 *	  destroy is safe in every state.
 *
 *-------------------------------------------------------------------------
 */
#include "join.h"

#include <stdlib.h>
#include <string.h>

/* Fill the probe batch with n keys 0..n-1 (no nulls). */
static GaBatch *
simple_probe_batch(GaJoin *join, int64_t n, JoinWait *ws, RunReport *rr)
{
	GaStatus	st;
	GaBatch    *batch = ga_join_next_batch(join, join_wait, ws, &st);
	int64_t		i;

	if (batch == NULL)
	{
		report(rr, "next_batch failed: code %d: %s", st.code, st.message);
		return NULL;
	}
	for (i = 0; i < n; i++)
		((int64_t *) batch->columns[0].values)[i] = i % 1000;
	batch->nrows = n;
	return batch;
}

/* Malformed requests and calls out of order are refused, not crashes. */
int64_t
api_join_invalid(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "join"};
	JoinWait	ws = {0, 0, 0};
	GaJoinRequest req;
	GaJoin	   *join;
	GaStatus	st;
	GaBatch    *batch;
	int64_t		keys[3] = {5, -5, 5};
	uint32_t	rows[3] = {10, 11, 12};

	memset(&req, 0, sizeof(req));
	join = ga_join_create(dev, &req, &st);
	if (join != NULL || st.code != GA_ERR_INVALID)
		report(&rr, "a probe batch size of 0 was accepted (code %d)", st.code);
	ga_join_destroy(join);
	req.probe_batch_rows = -5;
	join = ga_join_create(dev, &req, &st);
	if (join != NULL || st.code != GA_ERR_INVALID)
		report(&rr, "a negative probe batch size was accepted (code %d)", st.code);
	ga_join_destroy(join);

	req.probe_batch_rows = 16;
	join = ga_join_create(dev, &req, &st);
	if (join == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		return rr.mismatches;
	}
	batch = simple_probe_batch(join, 4, &ws, &rr);
	if (batch != NULL &&
		(ga_join_probe(join, batch, join_wait, &ws, &st) != NULL || st.code != GA_ERR_INVALID))
		report(&rr, "a probe before the build was accepted (code %d)", st.code);
	if (ga_join_build(join, keys, rows, -1, join_wait, &ws, &st) || st.code != GA_ERR_INVALID)
		report(&rr, "a build of -1 rows was accepted (code %d)", st.code);
	if (ga_join_build(join, keys, rows, GA_JOIN_MAX_BUILD_ROWS + 1, join_wait, &ws, &st) ||
		st.code != GA_ERR_INVALID)
		report(&rr, "a build beyond GA_JOIN_MAX_BUILD_ROWS was accepted (code %d)", st.code);
	if (ga_join_build(join, NULL, rows, 3, join_wait, &ws, &st) || st.code != GA_ERR_INVALID)
		report(&rr, "a build without keys was accepted (code %d)", st.code);
	if (!ga_join_build(join, keys, rows, 3, join_wait, &ws, &st))
		report(&rr, "build failed: code %d: %s", st.code, st.message);
	else if (ga_join_build(join, keys, rows, 3, join_wait, &ws, &st) ||
			 st.code != GA_ERR_INVALID)
		report(&rr, "a second build was accepted (code %d)", st.code);
	batch = simple_probe_batch(join, 8, &ws, &rr);
	if (batch != NULL)
	{
		const GaJoinMatches *m;

		batch->nrows = batch->capacity + 1;
		if (ga_join_probe(join, batch, join_wait, &ws, &st) != NULL || st.code != GA_ERR_INVALID)
			report(&rr, "a probe batch over its capacity was accepted (code %d)", st.code);
		/* refused calls leave the join usable: key 5 of row 5 matches rows 10, 12 */
		batch->nrows = 8;
		m = ga_join_probe(join, batch, join_wait, &ws, &st);
		if (m == NULL)
			report(&rr, "probe after refused calls failed: code %d: %s", st.code, st.message);
		else if (m->total != 2 || m->count[5] != 2 ||
				 ga_join_sorted_rows(join)[m->first[5]] != 10 ||
				 ga_join_sorted_rows(join)[m->first[5] + 1] != 12)
			report(&rr, "probe after refused calls: total %lld count[5] %u",
					(long long) m->total, m->count[5]);
	}
	ga_join_destroy(join);
	ga_join_destroy(NULL);
	return rr.mismatches;
}

/* fail_at_batch = 2: the second probe fails with GA_ERR_INJECTED. */
int64_t
api_join_fail_at_batch(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "join"};
	JoinWait	ws = {0, 0, 0};
	GaJoinRequest req;
	GaJoin	   *join;
	GaStatus	st;
	int64_t		keys[2] = {1, 2};
	uint32_t	rows[2] = {0, 1};
	int			p;

	memset(&req, 0, sizeof(req));
	req.probe_batch_rows = 100;
	req.fail_at_batch = 2;
	join = ga_join_create(dev, &req, &st);
	if (join == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		return rr.mismatches;
	}
	if (!ga_join_build(join, keys, rows, 2, join_wait, &ws, &st))
		report(&rr, "build failed: code %d: %s", st.code, st.message);
	for (p = 1; p <= 2 && rr.mismatches == 0; p++)
	{
		GaBatch    *batch = simple_probe_batch(join, 50, &ws, &rr);
		const GaJoinMatches *m;

		if (batch == NULL)
			break;
		m = ga_join_probe(join, batch, join_wait, &ws, &st);
		if (p == 1 && m == NULL)
			report(&rr, "probe 1 failed: code %d: %s", st.code, st.message);
		if (p == 2 && (m != NULL || st.code != GA_ERR_INJECTED || st.message[0] == '\0'))
			report(&rr, "probe 2 should fail with GA_ERR_INJECTED, got %s code %d",
					m != NULL ? "an answer" : "no answer", st.code);
	}
	ga_join_destroy(join);
	return rr.mismatches;
}

/*
 * Cancel: a wait callback that answers "stop".  A call during which it
 * answered must fail with GA_ERR_CANCELLED; the CPU device must ask it
 * during a build of 300K rows and during a probe of 200K rows.
 */
int64_t
api_join_cancel(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "join"};
	JoinWait	ws = {0, 1, 0};
	JoinWait	calm = {0, 0, 0};
	GaJoinRequest req;
	GaJoin	   *join;
	GaStatus	st;
	int64_t		n = 300000;
	int64_t    *keys = malloc(sizeof(int64_t) * (size_t) n);
	uint32_t   *rows = malloc(sizeof(uint32_t) * (size_t) n);
	int64_t		i,
				before;
	int			phase;

	for (i = 0; i < n; i++)
	{
		keys[i] = (int64_t) join_mix((uint64_t) i) % 5000;
		rows[i] = (uint32_t) i;
	}
	memset(&req, 0, sizeof(req));
	req.probe_batch_rows = 200000;
	for (phase = 0; phase < 2; phase++)
	{
		int			cancelled = 0;

		join = ga_join_create(dev, &req, &st);
		if (join == NULL)
		{
			report(&rr, "create failed: code %d: %s", st.code, st.message);
			break;
		}
		before = ws.cancels;
		if (phase == 0)
		{
			/* cancel the build */
			if (!ga_join_build(join, keys, rows, n, join_wait, &ws, &st))
			{
				if (st.code != GA_ERR_CANCELLED)
					report(&rr, "build failed: code %d: %s", st.code, st.message);
				cancelled = 1;
			}
			else if (ws.cancels != before)
				report(&rr, "build succeeded although the callback said stop");
		}
		else if (!ga_join_build(join, keys, rows, n, join_wait, &calm, &st))
			report(&rr, "build failed: code %d: %s", st.code, st.message);
		else
		{
			/* cancel the probe */
			GaBatch    *batch = simple_probe_batch(join, 200000, &calm, &rr);

			before = ws.cancels;
			if (batch != NULL && ga_join_probe(join, batch, join_wait, &ws, &st) == NULL)
			{
				if (st.code != GA_ERR_CANCELLED)
					report(&rr, "probe failed: code %d: %s", st.code, st.message);
				cancelled = 1;
			}
			else if (batch != NULL && ws.cancels != before)
				report(&rr, "probe succeeded although the callback said stop");
		}

		/*
		 * A cancel is remembered: the next call reports it again (and must
		 * not hand out the batch a cancelled probe may still be copying).
		 * Destroy then runs with the device's work possibly in flight.
		 */
		if (cancelled)
		{
			GaBatch    *again = ga_join_next_batch(join, join_wait, &calm, &st);

			if (again != NULL || st.code != GA_ERR_CANCELLED)
				report(&rr, "next_batch after a cancelled %s: %s, code %d",
						phase == 0 ? "build" : "probe",
						again != NULL ? "a batch" : "no batch", st.code);
		}
		if (ga_device_kind(dev) == GA_DEVICE_CPU && !cancelled && rr.mismatches == 0)
			report(&rr, "the CPU device never asked the wait callback during the %s",
					phase == 0 ? "build of 300K rows" : "probe of 200K rows");
		ga_join_destroy(join);
	}
	if (calm.cancels > 0)
		report(&rr, "the wait callback answered stop although not told to");
	free(keys);
	free(rows);
	return rr.mismatches;
}

/* Check one small answer: counts, firsts and the rows they point at. */
static void
check_small_answer(RunReport *rr, const char *what, const GaJoinMatches *m,
				   const uint32_t *sorted, int n, const uint32_t *want_first,
				   const uint32_t *want_count, const uint32_t *want_row, int64_t want_total)
{
	int			i;

	if (m == NULL)
	{
		report(rr, "%s: no answer", what);
		return;
	}
	if (m->nrows != n || m->total != want_total)
	{
		report(rr, "%s: nrows %lld total %lld, expected %d %lld", what,
				(long long) m->nrows, (long long) m->total, n, (long long) want_total);
		return;
	}
	for (i = 0; i < n; i++)
		if (m->first[i] != want_first[i] || m->count[i] != want_count[i] ||
			(want_count[i] > 0 && sorted[m->first[i]] != want_row[i]))
		{
			report(rr, "%s: row %d answered (%u, %u), expected (%u, %u)", what, i,
					m->first[i], m->count[i], want_first[i], want_count[i]);
			return;
		}
}

/* Fill a probe batch with n keys. */
static void
fill_probe_batch(GaBatch *batch, const int64_t *keys, int n)
{
	memcpy(batch->columns[0].values, keys, sizeof(int64_t) * (size_t) n);
	batch->nrows = n;
}

/*
 * Two joins at once on one device: their builds, batches and answers are
 * their own (a batch of one is refused by the other), and an answer stays
 * valid while the other join probes.
 */
int64_t
api_join_two(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "join"};
	JoinWait	ws = {0, 0, 0};
	GaJoinRequest req;
	GaJoin	   *a = NULL,
			   *b = NULL;
	GaStatus	st;
	GaBatch    *ba,
			   *bb;
	const GaJoinMatches *ma,
			   *mb;
	static const int64_t akeys[3] = {1, 1, 2};
	static const uint32_t arows[3] = {7, 8, 9};
	static const int64_t bkeys[2] = {3, 2};
	static const uint32_t brows[2] = {6, 5};
	static const int64_t aprobe[3] = {1, 2, 3};
	static const int64_t bprobe[3] = {2, 3, 4};

	/* a: sorted rows 7 8 9; keys 1 2 3 answer (0, 2) (2, 1) (0, 0) */
	static const uint32_t a_first[3] = {0, 2, 0},
				a_count[3] = {2, 1, 0},
				a_row[3] = {7, 9, 0};

	/* b: sorted rows 5 6; keys 2 3 4 answer (0, 1) (1, 1) (0, 0) */
	static const uint32_t b_first[3] = {0, 1, 0},
				b_count[3] = {1, 1, 0},
				b_row[3] = {5, 6, 0};

	memset(&req, 0, sizeof(req));
	req.probe_batch_rows = 64;
	a = ga_join_create(dev, &req, &st);
	if (a != NULL)
	{
		req.probe_batch_rows = 100;
		b = ga_join_create(dev, &req, &st);
	}
	if (a == NULL || b == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		goto done;
	}
	if (!ga_join_build(a, akeys, arows, 3, join_wait, &ws, &st) ||
		!ga_join_build(b, bkeys, brows, 2, join_wait, &ws, &st))
	{
		report(&rr, "build failed: code %d: %s", st.code, st.message);
		goto done;
	}
	ba = ga_join_next_batch(a, join_wait, &ws, &st);
	bb = ga_join_next_batch(b, join_wait, &ws, &st);
	if (ba == NULL || bb == NULL || ba == bb ||
		ba->columns[0].values == bb->columns[0].values)
	{
		report(&rr, "next_batch of two joins: %p and %p", (void *) ba, (void *) bb);
		goto done;
	}
	fill_probe_batch(ba, aprobe, 3);
	fill_probe_batch(bb, bprobe, 3);
	if (ga_join_probe(b, ba, join_wait, &ws, &st) != NULL || st.code != GA_ERR_INVALID)
		report(&rr, "a join accepted another join's batch (code %d)", st.code);
	ma = ga_join_probe(a, ba, join_wait, &ws, &st);
	check_small_answer(&rr, "join a", ma, ga_join_sorted_rows(a), 3, a_first, a_count, a_row, 3);
	mb = ga_join_probe(b, bb, join_wait, &ws, &st);
	check_small_answer(&rr, "join b", mb, ga_join_sorted_rows(b), 3, b_first, b_count, b_row, 2);
	/* a's answer is still a's after b probed */
	check_small_answer(&rr, "join a after b's probe", ma, ga_join_sorted_rows(a), 3,
					   a_first, a_count, a_row, 3);

done:
	ga_join_destroy(b);
	ga_join_destroy(a);
	if (ws.cancels > 0)
		report(&rr, "the wait callback answered stop although not told to");
	return rr.mismatches;
}

/*
 * Destroy in every state: right after create, with a batch handed out and
 * never probed, after an empty build, after a build with no probe, and
 * after a probe whose answer was never read.
 */
int64_t
api_join_destroy_states(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "join"};
	JoinWait	ws = {0, 0, 0};
	GaJoinRequest req;
	GaStatus	st;
	static const int64_t keys[4] = {4, 3, 4, -9};
	static const uint32_t rows[4] = {0, 1, 2, 3};
	int			state;

	memset(&req, 0, sizeof(req));
	req.probe_batch_rows = 1000;
	for (state = 0; state < 5; state++)
	{
		GaJoin	   *join = ga_join_create(dev, &req, &st);
		GaBatch    *batch;

		if (join == NULL)
		{
			report(&rr, "create failed: code %d: %s", st.code, st.message);
			continue;
		}
		if (state == 1)
			(void) simple_probe_batch(join, 500, &ws, &rr);
		if (state == 2 && !ga_join_build(join, NULL, NULL, 0, join_wait, &ws, &st))
			report(&rr, "empty build failed: code %d: %s", st.code, st.message);
		if (state >= 3 && !ga_join_build(join, keys, rows, 4, join_wait, &ws, &st))
			report(&rr, "build failed: code %d: %s", st.code, st.message);
		if (state == 4 && (batch = simple_probe_batch(join, 1000, &ws, &rr)) != NULL &&
			ga_join_probe(join, batch, join_wait, &ws, &st) == NULL)
			report(&rr, "probe failed: code %d: %s", st.code, st.message);
		ga_join_destroy(join);
	}
	if (ws.cancels > 0)
		report(&rr, "the wait callback answered stop although not told to");
	return rr.mismatches;
}
