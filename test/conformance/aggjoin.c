/*-------------------------------------------------------------------------
 *
 * aggjoin.c
 *	  Device conformance test of the aggjoin (an aggregation whose request
 *	  has a join spec, gpuagg_device.h): seeded random probe sides and
 *	  chains of 1 to GA_AGG_MAX_JOIN_STEPS build sides go to every device
 *	  run (the CPU, and the GPU under each strategy), and the groups that
 *	  come back are checked against the joined rows formed on the host,
 *	  independently of cuda/.  This file runs the cases; their specs are in
 *	  aggjoin_specs.c (the fixed ones) and aggjoin_random.c, aggjoin_case.c
 *	  generates them and aggjoin_ref.c forms the reference's rows.
 *
 * Besides the groups: the statistics (input_rows = probe rows, joined_rows
 * = the last step's rows, join_build_rows = keyed build rows of every step,
 * batches = max(1, ceil(rows / batch_rows)) per submit, plus
 * ceil(rows / batch_rows) for the rows that the RIGHT and FULL joins'
 * unmatched build rows give at finish, and on the CPU
 * device bytes_sent exactly), the batch contract, that build columns of a
 * submitted batch are ignored (they are filled with garbage and false
 * nulls), that a payload's columns of other origins are never read (their
 * arrays are NULL), that builds may come in any order, and the API
 * (aggjoin_api.c).
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Running a case on a device
 * ------------------------------------------------------------------------
 */

/* The request of a case (join spec included, pointing into the case). */
static void
aj_request(const AjCase *jc, GaStrategy strategy, GaAggJoinSpec *spec, GaAggRequest *req)
{
	memset(spec, 0, sizeof(*spec));
	spec->nsteps = jc->nsteps;
	memcpy(spec->steps, jc->steps, sizeof(GaAggJoinStep) * jc->nsteps);
	spec->from_build = jc->from_build;
	spec->nfilter = jc->nfilter;
	memcpy(spec->filter, jc->filter, sizeof(GaFilterStep) * jc->nfilter);
	case_request(&jc->joined, strategy, req);
	req->join = spec;
}

/*
 * The payload of step `step` (1-based): its build columns (validity only
 * with nulls); every other column has no arrays at all, so a device
 * reading one crashes.
 */
static void
aj_payload(const AjCase *jc, int step, GaColumn *columns, GaBatch *payload)
{
	int			c;

	memset(columns, 0, sizeof(GaColumn) * MAX_COLUMNS);
	for (c = 0; c < jc->joined.ncolumns; c++)
	{
		columns[c].type = jc->joined.types[c];
		if (jc->from_build[c] != step)
			continue;
		columns[c].values = jc->values[c];
		columns[c].validity = jc->validity[c];
		columns[c].has_nulls = jc->build_has_nulls[c];
	}
	payload->nrows = jc->builds[step - 1].nbuild;
	payload->capacity = payload->nrows + 3;
	payload->ncolumns = jc->joined.ncolumns;
	payload->columns = columns;
}

/*
 * Fill a probe batch with probe rows [start, start + n) of case c's
 * columns: a column where garbage[col] with garbage and a false null every
 * null_every rows (to be ignored), the others from their values and nulls
 * over the probe rows.
 */
void
fill_probe_batch(GaBatch *b, const Case *c, const uint8_t *garbage, void *const *values,
				 uint8_t *const *isnull, int null_every, int64_t start, int64_t n)
{
	int			col;
	int64_t		r;

	for (col = 0; col < c->ncolumns; col++)
	{
		GaColumn   *column = &b->columns[col];
		int			width = ga_type_width(c->types[col]);

		if (garbage[col])
		{
			if (width > 0 && n > 0)
				memset(column->values, 0xa5, (size_t) (n * width));
			for (r = 0; r < n; r += null_every)
				ga_column_set_null(column, r);
			continue;
		}
		if (width > 0 && n > 0)
			memcpy(column->values, (const char *) values[col] + start * width,
				   (size_t) (n * width));
		for (r = 0; r < n; r++)
			if (isnull[col][start + r])
				ga_column_set_null(column, r);
	}
	b->nrows = n;
}

/*
 * Fill a probe batch with probe rows [start, start + n): probe columns as
 * generated, build columns with garbage and false nulls to be ignored.
 */
static void
aj_fill_batch(const AjCase *jc, GaBatch *b, int64_t start, int64_t n)
{
	fill_probe_batch(b, &jc->joined, jc->from_build, jc->values, jc->isnull, 3, start, n);
}

/* The keyed build rows of every step. */
static int64_t
aj_keyed_rows(const AjCase *jc)
{
	int64_t		n = 0;
	int			s;

	for (s = 0; s < jc->nsteps; s++)
		n += jc->builds[s].nkeyed;
	return n;
}

/* Check the statistics of a finished run against what the case implies. */
static void
aj_check_stats(const AjCase *jc, GaDevice *dev, const GaAggStats *stats,
			   const GaAggResult *res, RunReport *rr)
{
	int64_t		by = 0;
	int			s;

	for (s = 0; s < GA_NUM_STRATEGIES; s++)
		by += stats->batches_by_strategy[s];
	if (stats->batches != jc->expected_batches || stats->input_rows != jc->nprobe ||
		stats->joined_rows != jc->joined.nrows || stats->join_build_rows != aj_keyed_rows(jc) ||
		stats->groups != res->ngroups)
		report(rr, "stats: batches %lld input_rows %lld joined_rows %lld join_build_rows %lld groups %lld, expected %lld, %lld, %lld, %lld, %lld",
			   (long long) stats->batches, (long long) stats->input_rows,
			   (long long) stats->joined_rows, (long long) stats->join_build_rows,
			   (long long) stats->groups, (long long) jc->expected_batches,
			   (long long) jc->nprobe, (long long) jc->joined.nrows,
			   (long long) aj_keyed_rows(jc), (long long) res->ngroups);
	if (by != stats->batches)
		report(rr, "stats: batches_by_strategy add up to %lld, not %lld",
			   (long long) by, (long long) stats->batches);
	if (stats->device_ms < 0 || stats->transfer_ms < 0 || stats->bytes_sent < 0 ||
		stats->table_growths < 0)
		report(rr, "stats: negative figures");
	if (ga_device_kind(dev) == GA_DEVICE_CPU)
	{
		if (stats->bytes_sent != jc->expected_bytes)
			report(rr, "stats: bytes_sent %lld, expected %lld",
				   (long long) stats->bytes_sent, (long long) jc->expected_bytes);
		if (stats->batches_by_strategy[GA_STRATEGY_CPU] != stats->batches)
			report(rr, "stats: CPU batches not counted as the cpu strategy");
	}
}

/* Give every step's build side, in the case's order; 0 with status on failure. */
static int
aj_build_all(const AjCase *jc, GaAgg *agg, WaitState *ws, GaStatus *st)
{
	GaColumn	columns[MAX_COLUMNS];
	GaBatch		payload;
	int			i;

	for (i = 0; i < jc->nsteps; i++)
	{
		int			s = jc->build_order[i];
		const AjBuild *build = &jc->builds[s];

		aj_payload(jc, s + 1, columns, &payload);
		if (!ga_aggjoin_build(agg, s, build->keys, build->rows, build->nkeyed, &payload,
							   test_wait, ws, st))
			return 0;
	}
	return 1;
}

/*
 * Run a case on one device under one strategy and compare with the
 * reference.  Returns the number of problems.
 */
static int64_t
aj_run_case(const AjCase *jc, int case_no, GaDevice *dev, GaStrategy strategy,
			const char *label, int verbose, char *summary, size_t summary_len)
{
	RunReport	rr = {case_no, label, 0, 0, "aggjoin"};
	WaitState	ws = {0, 0, 0};
	GaAggJoinSpec spec;
	GaAggRequest req;
	GaAgg	   *agg;
	GaStatus	st;
	GaAggStats	stats;
	const GaAggResult *res;
	int64_t		start = 0;
	double		t0 = now_ms();
	int			b;

	aj_request(jc, strategy, &spec, &req);
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		goto done;
	}
	if (!aj_build_all(jc, agg, &ws, &st))
	{
		report(&rr, "build failed: code %d: %s", st.code, st.message);
		goto done;
	}
	for (b = 0; b < jc->nbatches; b++)
	{
		GaBatch    *batch = run_next_batch(agg, &jc->joined, b, &ws, &rr);

		if (batch == NULL)
			goto done;
		aj_fill_batch(jc, batch, start, jc->batch_sizes[b]);
		if (!run_submit(agg, batch, b, &ws, &rr))
			goto done;
		start += jc->batch_sizes[b];
	}
	res = run_finish(agg, &ws, &rr);
	if (res == NULL)
		goto done;
	check_result(&jc->joined, res, &rr);
	ga_agg_get_stats(agg, &stats);
	aj_check_stats(jc, dev, &stats, res, &rr);
	if (verbose)
		print_stats("aggjoin", case_no, label, &stats, 1);

done:
	return run_end(agg, &ws, &rr, label, t0, summary, summary_len);
}

/* ------------------------------------------------------------------------
 * The suite
 * ------------------------------------------------------------------------
 */

/* Run the API checks and every case from first on, on every device run. */
int64_t
conformance_aggjoin(GaDevice *const *devices, const GaStrategy *strategies,
					const char *const *labels, int nruns, uint64_t seed, int first,
					int ncases, int64_t max_rows, int timeout, int verbose, int64_t *checks)
{
	int64_t		failures = 0;
	int			i,
				j;

	for (j = 0; j < nruns; j++)
	{
		int64_t		f;

		conformance_set_current("aggjoin api", j);
		alarm((unsigned) timeout);
		f = aggjoin_api_checks(devices[j], strategies[j], labels[j]);
		printf("aggjoin api %-10s invalid, chains, cancel, fail_at_batch, destroy: %s\n",
			   labels[j], f ? "FAIL" : "ok");
		failures += f;
		(*checks)++;
	}

	for (i = first; i < NUM_FIXED_AJ_CASES + ncases; i++)
	{
		AjSpec		spec;
		AjCase		jc;
		Rng			rng;
		char		line[1800];
		size_t		len;

		conformance_set_current("aggjoin", i);
		alarm((unsigned) timeout);
		rng_seed(&rng, seed * UINT64_C(0x100000001b3) + UINT64_C(0xa99) * (uint64_t) (i + 1));
		if (i < NUM_FIXED_AJ_CASES)
			aj_fixed_spec(i, &spec, max_rows);
		else
			aj_random_spec(&rng, &spec, max_rows);
		aj_cap_spec(&spec, max_rows);
		aj_build_case(&jc, &spec, &rng);

		len = (size_t) snprintf(line, sizeof(line), "aggjoin %3d groups=%lld %s",
								i, (long long) jc.joined.ngroups, jc.desc);
		for (j = 0; j < nruns; j++)
		{
			char		summary[160];

			failures += aj_run_case(&jc, i, devices[j], strategies[j], labels[j], verbose,
									summary, sizeof(summary));
			(*checks)++;
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s", summary);
		}
		printf("%s\n", line);
		fflush(stdout);
		aj_free_case(&jc);
	}
	return failures;
}
