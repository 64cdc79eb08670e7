/*-------------------------------------------------------------------------
 *
 * agg.c
 *	  The aggregation suite's runs: a case fed to one device under one
 *	  strategy, its groups checked with the reference (agg_ref.c).
 *
 * Besides results, a run checks the batch contract (next_batch hands out
 * an empty batch of the requested shape), the statistics (batches, rows,
 * groups; on the CPU device bytes_sent and table growth too) and, on the
 * GPU, that a forced strategy ran where it applies.  The steps of a run
 * are shared with the aggjoin and derived column suites (conformance.h).
 *
 *-------------------------------------------------------------------------
 */
#include "agg.h"
#include "sizing.h"			/* the GPU strategy rules, to check them */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Driving a device
 * ------------------------------------------------------------------------
 */
/*
 * Print what one aggregation did (verbose runs), for both suites: "case" or
 * "aggjoin" cases, with the join's counts when aggjoin.
 */
void
print_stats(const char *suite, int case_no, const char *label, const GaAggStats *stats,
			int aggjoin)
{
	int			s;

	printf("%s %d [%s] stats: batches %lld rows %lld ", suite, case_no, label,
		   (long long) stats->batches, (long long) stats->input_rows);
	if (aggjoin)
		printf("joined %lld build %lld ", (long long) stats->joined_rows,
			   (long long) stats->join_build_rows);
	printf("groups %lld bytes %lld growths %lld retries %lld device estimate %lld by strategy:",
		   (long long) stats->groups, (long long) stats->bytes_sent,
		   (long long) stats->table_growths, (long long) stats->retries,
		   (long long) stats->device_estimated_groups);
	for (s = 0; s < GA_NUM_STRATEGIES; s++)
		if (stats->batches_by_strategy[s] > 0)
			printf(" %s=%lld", ga_strategy_name((GaStrategy) s),
				   (long long) stats->batches_by_strategy[s]);
	printf(" device %.2f ms transfer %.2f ms\n", stats->device_ms, stats->transfer_ms);
}

/* Fill a request describing the case. */
void
case_request(const Case *c, GaStrategy strategy, GaAggRequest *req)
{
	memset(req, 0, sizeof(*req));
	req->ncolumns = c->ncolumns;
	req->column_types = c->types;
	req->nkeys = c->nkeys;
	req->key_columns = c->key_columns;
	req->naggs = c->naggs;
	req->aggs = c->aggs;
	req->batch_rows = c->batch_rows;
	req->estimated_groups = c->estimated_groups;
	req->strategy = strategy;
}

/* Check that a batch from next_batch is empty and shaped as requested. */
void
check_empty_batch(const Case *c, const GaBatch *b, RunReport *rr)
{
	int			i;
	int64_t		j;

	if (b->nrows != 0 || b->capacity != c->batch_rows || b->ncolumns != c->ncolumns)
	{
		report(rr, "next_batch gave nrows %lld capacity %lld ncolumns %d, expected 0, %lld, %d",
			   (long long) b->nrows, (long long) b->capacity, b->ncolumns,
			   (long long) c->batch_rows, c->ncolumns);
		return;
	}
	for (i = 0; i < c->ncolumns; i++)
	{
		const GaColumn *col = &b->columns[i];

		if (col->type != c->types[i] || col->has_nulls != 0 || col->validity == NULL ||
			(ga_type_width(col->type) > 0 && col->values == NULL))
		{
			report(rr, "next_batch column %d: type %d has_nulls %d validity %p values %p",
				   i, col->type, col->has_nulls, (void *) col->validity, col->values);
			continue;
		}
		for (j = 0; j < c->batch_rows / 8; j++)
			if (col->validity[j] != 0xff)
				break;
		if (j < c->batch_rows / 8 ||
			(c->batch_rows % 8 != 0 &&
			 (uint8_t) (col->validity[j] | (uint8_t) (0xff << (c->batch_rows % 8))) != 0xff))
			report(rr, "next_batch column %d: validity bits not all set", i);
	}
}

/* Copy rows [start, start + n) of the case into a batch. */
static void
fill_batch(const Case *c, GaBatch *b, int64_t start, int64_t n)
{
	int			i;
	int64_t		r;

	for (i = 0; i < c->ncolumns; i++)
	{
		GaColumn   *col = &b->columns[i];
		int			width = ga_type_width(c->types[i]);

		if (width > 0 && n > 0)
			memcpy(col->values, (const char *) c->values[i] + start * width, (size_t) (n * width));
		if (c->has_nulls[i])
			for (r = 0; r < n; r++)
				if (c->isnull[i][start + r])
					ga_column_set_null(col, r);
		if (c->force_has_nulls)
			col->has_nulls = 1;
	}
	b->nrows = n;
}

/* Expected bytes_sent of the CPU device: what a GPU would have shipped. */
static int64_t
expected_bytes_sent(const Case *c)
{
	int64_t		bytes = 0,
				start = 0;
	int			b,
				i;

	for (b = 0; b < c->nbatches; b++)
	{
		int64_t		n = c->batch_sizes[b];

		for (i = 0; i < c->ncolumns; i++)
		{
			int			nulls = c->force_has_nulls;
			int64_t		r;

			for (r = start; r < start + n && !nulls; r++)
				nulls = c->isnull[i][r];
			bytes += n * ga_type_width(c->types[i]) + (nulls ? (n + 7) / 8 : 0);
		}
		start += n;
	}
	return bytes;
}

/* The first GPU's properties, for check_gpu_strategy(). */
GaGpuInfo	gpu_info;

/*
 * Batch b of a run: the aggregation's next batch, which must come empty
 * (check_empty_batch against the case c).  NULL, reported, when it fails
 * or the run has problems.
 */
GaBatch *
run_next_batch(GaAgg *agg, const Case *c, int b, WaitState *ws, RunReport *rr)
{
	GaStatus	st;
	GaBatch    *batch = ga_agg_next_batch(agg, test_wait, ws, &st);

	if (batch == NULL)
	{
		report(rr, "next_batch %d failed: code %d: %s", b + 1, st.code, st.message);
		return NULL;
	}
	check_empty_batch(c, batch, rr);
	return rr->mismatches > 0 ? NULL : batch;
}

/* Submit batch b of a run; 0, reported, when it fails. */
int
run_submit(GaAgg *agg, GaBatch *batch, int b, WaitState *ws, RunReport *rr)
{
	GaStatus	st;

	if (ga_agg_submit(agg, batch, test_wait, ws, &st))
		return 1;
	report(rr, "submit %d failed: code %d: %s", b + 1, st.code, st.message);
	return 0;
}

/* Finish a run's aggregation; NULL, reported, when it fails. */
const GaAggResult *
run_finish(GaAgg *agg, WaitState *ws, RunReport *rr)
{
	GaStatus	st;
	const GaAggResult *res = ga_agg_finish(agg, test_wait, ws, &st);

	if (res == NULL)
		report(rr, "finish failed: code %d: %s", st.code, st.message);
	return res;
}

/* The wait callback of a run must never have answered stop. */
void
run_check_cancels(const WaitState *ws, RunReport *rr)
{
	if (ws->cancels > 0)
		report(rr, "the wait callback answered stop although not told to");
}

/*
 * End a run of one aggregation started at t0: check the wait callback,
 * destroy the aggregation, write the summary; returns the problems found.
 */
int64_t
run_end(GaAgg *agg, const WaitState *ws, RunReport *rr, const char *label, double t0,
		char *summary, size_t summary_len)
{
	run_check_cancels(ws, rr);
	ga_agg_destroy(agg);
	snprintf(summary, summary_len, "%s %s %.0fms", label, rr->mismatches ? "FAIL" : "ok",
			 now_ms() - t0);
	return rr->mismatches;
}

/* Order int64 values ascending (qsort). */
static int
int64_cmp(const void *pa, const void *pb)
{
	int64_t		a = *(const int64_t *) pa;
	int64_t		b = *(const int64_t *) pb;

	return a < b ? -1 : a > b;
}

/*
 * The batches the GPU must count as partitioned when forced to partition
 * (gpu/strategy.cu's rules): a batch with rows runs partitioned exactly
 * when the group table for its group count exceeds the L2 cache
 * (ga_partitioned_applies), that count being the estimate for the first
 * batch and the groups found in the rows before it for later ones; an
 * empty batch counts under the strategy planned for the last batch with
 * rows, or before any under the first one's plan.  No keys: never.
 */
static int64_t
expected_partitioned_batches(const Case *c, const GaAggRequest *req)
{
	int64_t    *firsts;			/* each group's first row, ascending */
	int64_t		ngroups = 0;
	int64_t		seen = 0;		/* groups whose first row is before start */
	int64_t		start = 0;
	int64_t		count = 0;
	int			launched = 0;
	int			last;
	int64_t		r;
	int			b;

	if (c->nkeys == 0)
		return 0;
	firsts = malloc(sizeof(int64_t) * (c->nrows > 0 ? c->nrows : 1));
	for (r = 0; r < c->nrows; r++)
	{
		if (r == 0 || rowkey_compare(&c->sorted[r - 1], &c->sorted[r], c->nkeys) != 0)
			firsts[ngroups++] = c->sorted[r].index;
		else if (c->sorted[r].index < firsts[ngroups - 1])
			firsts[ngroups - 1] = c->sorted[r].index;
	}
	qsort(firsts, (size_t) ngroups, sizeof(int64_t), int64_cmp);

	last = ga_partitioned_applies(&gpu_info, req, c->estimated_groups > 1 ? c->estimated_groups : 1);
	for (b = 0; b < c->nbatches; b++)
	{
		while (seen < ngroups && firsts[seen] < start)
			seen++;
		if (c->batch_sizes[b] > 0)
		{
			int64_t		groups = launched ? seen : c->estimated_groups;

			last = ga_partitioned_applies(&gpu_info, req, groups > 1 ? groups : 1);
			launched = 1;
		}
		count += last;
		start += c->batch_sizes[b];
	}
	free(firsts);
	return count;
}

/*
 * On the GPU, check that a forced strategy ran where it applies and only
 * there, so that every strategy's kernels are exercised rather than
 * silently falling back: global always; partitioned exactly in the batches
 * expected_partitioned_batches() finds; auto (and perfect or shared where
 * they fall back to auto's choice) only where some estimate of the groups
 * makes the table outgrow L2, and global never; perfect when the keys are
 * ranges small enough (not scattered over their types) and no aggregate
 * keeps it off (ga_request_two_phase_only); shared when the groups and
 * their estimate are few and fit a block's shared memory.  Empty batches
 * are counted under the previous batch's strategy, so for perfect and
 * shared only the others must match.
 */
static void
check_gpu_strategy(const Case *c, GaStrategy strategy, const GaAggRequest *req,
				   const GaAggStats *stats, RunReport *rr)
{
	GaStrategy	want = GA_STRATEGY_AUTO;
	int64_t		nonempty = 0;
	int64_t		most = c->ngroups > c->estimated_groups ? c->ngroups : c->estimated_groups;
	int64_t		partitioned = strategy == GA_STRATEGY_PARTITIONED ?
		expected_partitioned_batches(c, req) : 0;
	int64_t		ran_partitioned = stats->batches_by_strategy[GA_STRATEGY_PARTITIONED];
	int64_t		largest = most > c->nrows ? most : c->nrows;
	int			b;

	for (b = 0; b < c->nbatches; b++)
		if (c->batch_sizes[b] > 0)
			nonempty++;
	if (strategy != GA_STRATEGY_PARTITIONED && strategy != GA_STRATEGY_GLOBAL)
	{
		/*
		 * auto (and perfect or shared where they do not apply, which run as
		 * auto) partitions only when some estimate of the groups (at most
		 * the rows) makes the table outgrow L2
		 */
		if (ran_partitioned > 0 &&
			!ga_partitioned_applies(&gpu_info, req, largest > 1 ? largest : 1))
			report(rr, "stats: %s partitioned %lld batches though no group table could "
				   "exceed L2", ga_strategy_name(strategy), (long long) ran_partitioned);
	}
	else if (ran_partitioned != partitioned)
		report(rr, "stats: %lld batches partitioned under %s, expected %lld (the group table "
			   "exceeds L2 for that many)",
			   (long long) ran_partitioned, ga_strategy_name(strategy), (long long) partitioned);
	if (strategy == GA_STRATEGY_GLOBAL)
		want = GA_STRATEGY_GLOBAL;
	else if (strategy == GA_STRATEGY_PERFECT && c->nkeys > 0 && c->nkeys <= 4 &&
			 c->range_entries > 0 && c->range_entries <= (INT64_C(1) << 20) &&
			 !ga_request_two_phase_only(req))
		want = GA_STRATEGY_PERFECT;
	else if (strategy == GA_STRATEGY_SHARED && c->nkeys > 0 && most <= 100 &&
			 most <= ga_shared_strategy_max_groups(&gpu_info, req))
		want = GA_STRATEGY_SHARED;
	if (want != GA_STRATEGY_AUTO && stats->batches_by_strategy[want] < nonempty)
		report(rr, "stats: forced %s ran %lld of %lld batches",
			   ga_strategy_name(want), (long long) stats->batches_by_strategy[want],
			   (long long) nonempty);
}

/*
 * Run a case on one device under one strategy (on one aggregation, or two
 * fed alternately) and compare with the reference.  Returns the number of
 * problems.
 */
int64_t
run_case(const Case *c, int case_no, GaDevice *dev, GaStrategy strategy,
		 const char *label, int verbose, char *summary, size_t summary_len)
{
	RunReport	rr = {case_no, label, 0, 0, NULL};
	WaitState	ws = {0, 0, 0};
	GaAggRequest req;
	GaAgg	   *aggs[2] = {NULL, NULL};
	int			nagg = c->interleave ? 2 : 1;
	GaStatus	st;
	int64_t		start = 0;
	int64_t		growths = 0;
	int			b,
				j;
	double		t0 = now_ms();
	GaAggStats	stats;
	const GaAggResult *res;

	case_request(c, strategy, &req);
	for (j = 0; j < nagg; j++)
	{
		aggs[j] = ga_agg_create(dev, &req, &st);
		if (aggs[j] == NULL)
		{
			report(&rr, "create failed: code %d: %s", st.code, st.message);
			goto done;
		}
	}
	for (b = 0; b < c->nbatches; b++)
	{
		int64_t		n = c->batch_sizes[b];

		for (j = 0; j < nagg; j++)
		{
			GaBatch    *batch = run_next_batch(aggs[j], c, b, &ws, &rr);

			if (batch == NULL)
				goto done;
			fill_batch(c, batch, start, n);
			if (!run_submit(aggs[j], batch, b, &ws, &rr))
				goto done;
		}
		start += n;
	}
	for (j = 0; j < nagg; j++)
	{
		int64_t		by = 0;
		int			s;

		res = run_finish(aggs[j], &ws, &rr);
		if (res == NULL)
			goto done;
		check_result(c, res, &rr);

		ga_agg_get_stats(aggs[j], &stats);
		growths += stats.table_growths;
		for (s = 0; s < GA_NUM_STRATEGIES; s++)
			by += stats.batches_by_strategy[s];
		if (stats.batches != c->nbatches || stats.input_rows != c->nrows ||
			stats.groups != res->ngroups)
			report(&rr, "stats: batches %lld rows %lld groups %lld, expected %d, %lld, %lld",
				   (long long) stats.batches, (long long) stats.input_rows,
				   (long long) stats.groups, c->nbatches, (long long) c->nrows,
				   (long long) res->ngroups);
		if (by != stats.batches)
			report(&rr, "stats: batches_by_strategy add up to %lld, not %lld",
				   (long long) by, (long long) stats.batches);
		if (stats.device_ms < 0 || stats.transfer_ms < 0 || stats.bytes_sent < 0 ||
			stats.table_growths < 0)
			report(&rr, "stats: negative figures");
		if (ga_device_kind(dev) == GA_DEVICE_CPU)
		{
			int64_t		want = expected_bytes_sent(c);

			if (stats.bytes_sent != want)
				report(&rr, "stats: bytes_sent %lld, expected %lld",
					   (long long) stats.bytes_sent, (long long) want);
			if (stats.batches_by_strategy[GA_STRATEGY_CPU] != stats.batches)
				report(&rr, "stats: CPU batches not counted as the cpu strategy");
			if (c->ngroups >= 1000 && c->estimated_groups <= c->ngroups / 100 &&
				stats.table_growths == 0)
				report(&rr, "stats: %lld groups from an estimate of %lld but no table growth",
					   (long long) c->ngroups, (long long) c->estimated_groups);
		}
		if (ga_device_kind(dev) == GA_DEVICE_GPU)
			check_gpu_strategy(c, strategy, &req, &stats, &rr);
		if (stats.retries < 0 || stats.device_estimated_groups < 0)
			report(&rr, "stats: negative figures");
		if (verbose)
			print_stats("case", case_no, label, &stats, 0);
	}

done:
	run_check_cancels(&ws, &rr);
	for (j = 0; j < nagg; j++)
		ga_agg_destroy(aggs[j]);
	snprintf(summary, summary_len, "%s %s %.0fms g+%lld", label,
			 rr.mismatches ? "FAIL" : "ok", now_ms() - t0, (long long) growths);
	return rr.mismatches;
}
