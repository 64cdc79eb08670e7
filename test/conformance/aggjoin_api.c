/*-------------------------------------------------------------------------
 *
 * aggjoin_api.c
 *	  The aggjoin's API checks, for the suite in aggjoin.c:
 *	  malformed join specs (of one step and of chains), build arguments and
 *	  call orders are refused with GA_ERR_INVALID (and a refused build
 *	  leaves the aggregation buildable), fail_at_batch fails that submit,
 *	  LEFT, ANTI, RIGHT and FULL joins and two-step chains of a few known
 *	  rows (built in reverse order) give known results (RIGHT and FULL
 *	  as either step, their unmatched build rows going through the step
 *	  after them; finishing one before every step is built is refused), a
 *	  wait callback that says stop
 *	  cancels a build and a submit, also one whose rows all die in a
 *	  chain's last step (the CPU device must ask it), and later calls
 *	  report it, and destroy is safe in every state.  Steps of several keys
 *	  have their own checks in aggjoin_api_keys.c.  SEMI steps and steps' own
 *	  filters too: a filter on a RIGHT or FULL step, reading a later step's
 *	  or a derived column, or malformed, is refused; known rows give known
 *	  results (a SEMI row once, LEFT rows whose pairs all fail
 *	  null-extended once, a RIGHT step above a filtered one, a FULL or
 *	  RIGHT step's unmatched rows through a filtered step).
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.h"

#include <stdlib.h>
#include <string.h>

/*
 * A small aggjoin request: probe key (0), probe int32 (1), step 1's
 * float64 (2); a two-step chain adds step 1's int64 (3), step 2's key, and
 * step 2's float64 (4).
 */
#define AJ_API_COLUMNS 5

typedef struct AjApi
{
	GaValueType types[AJ_API_COLUMNS];
	uint8_t		from_build[AJ_API_COLUMNS];
	GaAggSpec	aggs[AJ_API_COLUMNS];
	GaAggJoinSpec spec;
	GaAggRequest req;
	GaColumn	columns[AJ_API_COLUMNS];
	GaBatch		payload;
	double		build_vals[4];
	int64_t		next_keys[4];	/* column 3 of step 1's rows */
	int64_t		keys[4];
	uint32_t	rows[4];

	/* step 2's build side: 3 rows with keys 10, 10, 12 */
	GaColumn	columns2[AJ_API_COLUMNS];
	GaBatch		payload2;
	double		build2_vals[3];
	int64_t		keys2[3];
	uint32_t	rows2[3];
} AjApi;

/* Set up the small request and a payload of 4 build rows with keys 1..4. */
static void
aj_api_init(AjApi *a, GaAggJoinType type, int64_t batch_rows)
{
	int			i;

	memset(a, 0, sizeof(*a));
	a->types[0] = GA_TYPE_INT64;
	a->types[1] = GA_TYPE_INT32;
	a->types[2] = GA_TYPE_FLOAT64;
	a->types[3] = GA_TYPE_INT64;
	a->types[4] = GA_TYPE_FLOAT64;
	a->from_build[2] = a->from_build[3] = 1;
	a->from_build[4] = 2;
	a->aggs[0].op = GA_AGG_COUNT_ROWS;
	a->aggs[0].column = -1;
	a->aggs[1].op = GA_AGG_SUM_FLOAT64;
	a->aggs[1].column = 2;
	a->aggs[2].op = GA_AGG_COUNT;
	a->aggs[2].column = 2;
	a->spec.nsteps = 1;
	a->spec.steps[0].type = type;
	a->spec.steps[0].key_column = 0;
	a->spec.from_build = a->from_build;
	a->req.ncolumns = 3;
	a->req.column_types = a->types;
	a->req.naggs = 3;
	a->req.aggs = a->aggs;
	a->req.batch_rows = batch_rows;
	a->req.estimated_groups = 1;
	a->req.join = &a->spec;
	for (i = 0; i < AJ_API_COLUMNS; i++)
		a->columns[i].type = a->columns2[i].type = a->types[i];
	for (i = 0; i < 4; i++)
	{
		a->build_vals[i] = i + 0.5;
		a->next_keys[i] = 10 + i % 2;
		a->keys[i] = i + 1;
		a->rows[i] = (uint32_t) (3 - i);
	}
	a->columns[2].values = a->build_vals;
	a->columns[3].values = a->next_keys;
	a->payload.nrows = 4;
	a->payload.capacity = 4;
	a->payload.ncolumns = 3;
	a->payload.columns = a->columns;
}

/*
 * Set up a two-step chain on the small request: step 1 as aj_api_init,
 * step 2 keyed on step 1's column 3 (row r holds 10 + r % 2) with build
 * rows 0, 1, 2 of keys 10, 10, 12 and values 100, 200, 300 in column 4,
 * whose SUM_FLOAT64 and COUNT are aggregates 3 and 4.
 */
static void
aj_api_init_chain(AjApi *a, GaAggJoinType type1, GaAggJoinType type2, int64_t batch_rows)
{
	int			i;

	aj_api_init(a, type1, batch_rows);
	a->spec.nsteps = 2;
	a->spec.steps[1].type = type2;
	a->spec.steps[1].key_column = 3;
	a->req.ncolumns = AJ_API_COLUMNS;
	a->aggs[3].op = GA_AGG_SUM_FLOAT64;
	a->aggs[3].column = 4;
	a->aggs[4].op = GA_AGG_COUNT;
	a->aggs[4].column = 4;
	a->req.naggs = 5;
	a->payload.ncolumns = AJ_API_COLUMNS;
	for (i = 0; i < 3; i++)
	{
		a->build2_vals[i] = 100.0 * (i + 1);
		a->keys2[i] = i < 2 ? 10 : 12;
		a->rows2[i] = (uint32_t) i;
	}
	a->columns2[4].values = a->build2_vals;
	a->payload2.nrows = 3;
	a->payload2.capacity = 3;
	a->payload2.ncolumns = AJ_API_COLUMNS;
	a->payload2.columns = a->columns2;
}

/* Expect a failed call with code `want`. */
void
aj_expect(RunReport *rr, int ok, const GaStatus *st, GaStatusCode want, const char *what)
{
	if (ok || st->code != want)
		report(rr, "%s: ok %d code %d (%s), expected code %d", what, ok, st->code,
			   ok ? "" : st->message, want);
}

/* Expect ga_agg_create to refuse a request with GA_ERR_INVALID. */
void
aj_expect_request_refused(RunReport *rr, GaDevice *dev, const GaAggRequest *req,
						  const char *what)
{
	GaStatus	st;
	GaAgg	   *agg = ga_agg_create(dev, req, &st);

	aj_expect(rr, agg != NULL, &st, GA_ERR_INVALID, what);
	ga_agg_destroy(agg);
}

/* Expect ga_agg_create to refuse a's request with GA_ERR_INVALID. */
static void
aj_expect_refused(RunReport *rr, GaDevice *dev, const AjApi *a, const char *what)
{
	aj_expect_request_refused(rr, dev, &a->req, what);
}

/* Malformed specs, build arguments and call orders: GA_ERR_INVALID. */
static int64_t
aj_api_invalid(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjApi		a;
	GaStatus	st;
	GaAgg	   *agg;
	GaBatch    *batch;

	/* Bad join specs. */
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.steps[0].type = (GaAggJoinType) 7;
	aj_expect_refused(&rr, dev, &a, "an unknown join type");
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.steps[0].key_column = 1;	/* int32 */
	aj_expect_refused(&rr, dev, &a, "an int32 probe key");
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.steps[0].key_column = 3;
	aj_expect_refused(&rr, dev, &a, "a probe key beyond the columns");
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.from_build[0] = 1;
	aj_expect_refused(&rr, dev, &a, "a probe key from the build side");
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.from_build = NULL;
	aj_expect_refused(&rr, dev, &a, "no from_build array");
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.nsteps = 0;
	aj_expect_refused(&rr, dev, &a, "no join step");
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.from_build[2] = 2;
	aj_expect_refused(&rr, dev, &a, "a column of step 2 in a join of one step");

	/* A build given to a plain aggregation. */
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.req.join = NULL;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
		report(&rr, "create without a join failed: %s", st.message);
	else
		aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
				  &st, GA_ERR_INVALID, "a build on an aggregation without a join");
	ga_agg_destroy(agg);

	/* Call order and build arguments on one aggregation. */
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: %s", st.message);
		return rr.mismatches;
	}
	batch = ga_agg_next_batch(agg, NULL, NULL, &st);
	aj_expect(&rr, batch != NULL, &st, GA_ERR_INVALID, "a batch before the build");
	aj_expect(&rr, ga_agg_submit(agg, NULL, NULL, NULL, &st), &st, GA_ERR_INVALID,
			  "a submit before the build");
	a.payload.ncolumns = 2;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a payload with too few columns");
	a.payload.ncolumns = 3;
	a.columns[2].type = GA_TYPE_FLOAT32;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a payload column of another type");
	a.columns[2].type = GA_TYPE_FLOAT64;
	a.rows[2] = 4;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a build row beyond the payload");
	a.rows[2] = 1;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 5, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "more keyed rows than payload rows");
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, -1, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a negative number of keyed rows");
	aj_expect(&rr, ga_aggjoin_build(agg, 0, NULL, NULL, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "keyed rows without arrays");
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, NULL, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "no payload");
	a.payload.capacity = 3;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a payload holding more rows than its capacity");
	a.payload.capacity = 4;

	/* The refused builds left the aggregation unbuilt: this one must work. */
	if (!ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st))
		report(&rr, "a valid build after refused ones failed: %s", st.message);
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a second build");
	batch = ga_agg_next_batch(agg, NULL, NULL, &st);
	if (batch == NULL)
		report(&rr, "next_batch after the build failed: %s", st.message);
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * One probe batch of the small request: key k matches build row 4 - k
 * (value 3.5 - (k - 1)), so a few known results can be checked; the
 * probe int32 (column 1) of row i is values[i] (NULL: i).
 */
static int
aj_api_submit_values(GaAgg *agg, const int64_t *keys, const int32_t *values, int n,
					 WaitState *ws, GaStatus *st)
{
	GaBatch    *batch = ga_agg_next_batch(agg, test_wait, ws, st);
	int			i;

	if (batch == NULL)
		return 0;
	for (i = 0; i < n; i++)
	{
		((int64_t *) batch->columns[0].values)[i] = keys[i];
		((int32_t *) batch->columns[1].values)[i] = values != NULL ? values[i] : i;
	}
	batch->nrows = n;
	return ga_agg_submit(agg, batch, test_wait, ws, st);
}

/* The same, the probe int32 (column 1) of row i being i. */
static int
aj_api_submit(GaAgg *agg, const int64_t *keys, int n, WaitState *ws, GaStatus *st)
{
	return aj_api_submit_values(agg, keys, NULL, n, ws, st);
}

/* Give the small request's build sides, the last step first. */
static int
aj_api_build(GaAgg *agg, AjApi *a, GaStatus *st)
{
	if (a->spec.nsteps > 1 &&
		!ga_aggjoin_build(agg, 1, a->keys2, a->rows2, 3, &a->payload2, NULL, NULL, st))
		return 0;
	return ga_aggjoin_build(agg, 0, a->keys, a->rows, 4, &a->payload, NULL, NULL, st);
}

/* Malformed chains and their call orders: GA_ERR_INVALID. */
static int64_t
aj_api_invalid_chain(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjApi		a;
	GaStatus	st;
	GaAgg	   *agg;

	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.spec.nsteps = GA_AGG_MAX_JOIN_STEPS + 1;
	aj_expect_refused(&rr, dev, &a, "too many join steps");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.spec.steps[1].type = (GaAggJoinType) 9;
	aj_expect_refused(&rr, dev, &a, "an unknown type of step 2");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.from_build[4] = 3;
	aj_expect_refused(&rr, dev, &a, "a column of step 3 in a join of two steps");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.spec.steps[1].key_column = 4;
	aj_expect_refused(&rr, dev, &a, "step 2 keyed on its own build column");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.spec.steps[0].key_column = 3;
	aj_expect_refused(&rr, dev, &a, "step 1 keyed on its own build column");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.from_build[3] = 2;
	a.from_build[4] = 1;
	aj_expect_refused(&rr, dev, &a, "step 2 keyed on a column of step 2");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.spec.steps[1].key_column = 2;
	aj_expect_refused(&rr, dev, &a, "step 2 keyed on a float64 column");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.spec.steps[1].key_column = AJ_API_COLUMNS;
	aj_expect_refused(&rr, dev, &a, "step 2 keyed beyond the columns");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.spec.steps[1].key_column = -1;
	aj_expect_refused(&rr, dev, &a, "step 2 keyed on column -1");

	/* RIGHT last: finishing before every step is built is refused. */
	aj_api_init_chain(&a, GA_AGGJOIN_INNER, GA_AGGJOIN_RIGHT, 16);
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
		report(&rr, "create of a chain ending in RIGHT failed: %s", st.message);
	else
	{
		if (!ga_aggjoin_build(agg, 1, a.keys2, a.rows2, 3, &a.payload2, NULL, NULL, &st))
			report(&rr, "the build of a RIGHT step 2 failed: %s", st.message);
		aj_expect(&rr, ga_agg_finish(agg, NULL, NULL, &st) != NULL, &st, GA_ERR_INVALID,
				  "a finish of a chain ending in RIGHT before step 1's build");
	}
	ga_agg_destroy(agg);

	/* Builds: steps in range, each once, all before the first batch. */
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
	{
		report(&rr, "create of a chain failed: %s", st.message);
		return rr.mismatches;
	}
	aj_expect(&rr, ga_aggjoin_build(agg, -1, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a build of step -1");
	aj_expect(&rr, ga_aggjoin_build(agg, 2, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a build of a third step in a join of two");
	if (!ga_aggjoin_build(agg, 1, a.keys2, a.rows2, 3, &a.payload2, NULL, NULL, &st))
		report(&rr, "the build of step 2 (0-based 1) failed: %s", st.message);
	aj_expect(&rr, ga_agg_next_batch(agg, NULL, NULL, &st) != NULL, &st, GA_ERR_INVALID,
			  "a batch before the first step's build");
	aj_expect(&rr, ga_agg_submit(agg, NULL, NULL, NULL, &st), &st, GA_ERR_INVALID,
			  "a submit before the first step's build");
	aj_expect(&rr, ga_aggjoin_build(agg, 1, a.keys2, a.rows2, 3, &a.payload2, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a second build of step 2");
	if (!ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st))
		report(&rr, "the build of step 1 after step 2 failed: %s", st.message);
	if (ga_agg_next_batch(agg, NULL, NULL, &st) == NULL)
		report(&rr, "next_batch after both builds failed: %s", st.message);
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * Check the statistics of a run of n probe rows in one submit that gave
 * `rows` joined rows, `unmatched` of them a RIGHT or FULL join's unmatched
 * build rows (their own pieces at finish), over build_rows keyed build
 * rows.
 */
void
aj_check_known_stats(RunReport *rr, GaAgg *agg, int64_t batch_rows, int n, int64_t rows,
					 int64_t unmatched, int64_t build_rows, const char *what)
{
	GaAggStats	stats;
	int64_t		probe_rows = rows - unmatched;
	int64_t		batches = (probe_rows == 0 ? 1 : (probe_rows + batch_rows - 1) / batch_rows) +
		(unmatched + batch_rows - 1) / batch_rows;

	ga_agg_get_stats(agg, &stats);
	if (stats.joined_rows != rows || stats.batches != batches || stats.input_rows != n ||
		stats.join_build_rows != build_rows)
		report(rr, "%s: stats joined_rows %lld batches %lld input_rows %lld join_build_rows %lld",
			   what, (long long) stats.joined_rows, (long long) stats.batches,
			   (long long) stats.input_rows, (long long) stats.join_build_rows);
}

/*
 * Run the small request a on probe keys (the probe int32 of row i
 * values[i], or i) and check its one group's aggregates against want
 * (COUNT_ROWS, SUM and COUNT of column 2, for a chain SUM and COUNT of
 * column 4) and the statistics they imply, of which `unmatched` rows are
 * the rows a RIGHT or FULL join's unmatched build rows give (their own
 * pieces at finish).
 */
static void
aj_api_known_values(RunReport *rr, GaDevice *dev, AjApi *a, const int64_t *keys,
					const int32_t *values, int n, const double *want, int64_t unmatched,
					const char *what)
{
	WaitState	ws = {0, 0, 0};
	GaStatus	st;
	GaAgg	   *agg = ga_agg_create(dev, &a->req, &st);
	const GaAggResult *res = NULL;
	int			i;

	if (agg == NULL || !aj_api_build(agg, a, &st) ||
		!aj_api_submit_values(agg, keys, values, n, &ws, &st) ||
		(res = ga_agg_finish(agg, test_wait, &ws, &st)) == NULL)
		report(rr, "%s failed: %s", what, st.message);
	else if (res->ngroups != 1)
		report(rr, "%s gave %lld groups, not 1", what, (long long) res->ngroups);
	else
	{
		for (i = 0; i < a->req.naggs; i++)
		{
			double		got = i % 2 == 1 ? ((const double *) res->values[i])[0] :
				(double) ((const int64_t *) res->values[i])[0];

			if (got != want[i])
				report(rr, "%s: aggregate %d is %g, expected %g", what, i, got, want[i]);
		}
		aj_check_known_stats(rr, agg, a->req.batch_rows, n, (int64_t) want[0], unmatched,
							 a->spec.nsteps > 1 ? 7 : 4, what);
	}
	ga_agg_destroy(agg);
}

/* The same, the probe int32 of row i being i. */
static void
aj_api_known(RunReport *rr, GaDevice *dev, AjApi *a, const int64_t *keys, int n,
			 const double *want, int64_t unmatched, const char *what)
{
	aj_api_known_values(rr, dev, a, keys, NULL, n, want, unmatched, what);
}

/*
 * Known results of probe keys 1, 2, 9 (key k matches step 1's build row
 * 4 - k, of value 4.5 - k and next key 10 + (4 - k) % 2; 9 matches none):
 * one step of each type, and chains whose step 2 (on keys 10, 10, 12 of
 * values 100, 200, 300) is of each type, given in reverse order.
 */
static int64_t
aj_api_known_results(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjApi		a;
	int64_t		keys[3] = {1, 2, 9};

	aj_api_init(&a, GA_AGGJOIN_LEFT, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {3, 6.0, 2}, 0, "LEFT of 1, 2, 9");
	aj_api_init(&a, GA_AGGJOIN_INNER, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {2, 6.0, 2}, 0, "INNER of 1, 2, 9");
	aj_api_init(&a, GA_AGGJOIN_ANTI, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {1, 0.0, 0}, 0, "ANTI of 1, 2, 9");

	/* key 1: next key 11, no match in step 2; key 2: next key 10, two matches */
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {2, 5.0, 2, 300.0, 2}, 0,
				 "LEFT then INNER of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_LEFT, 3);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {4, 8.5, 3, 300.0, 2}, 0,
				 "LEFT then LEFT of 1, 2, 9 in pieces of 3 rows");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_ANTI, 3);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {2, 3.5, 1, 0.0, 0}, 0,
				 "LEFT then ANTI of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_INNER, GA_AGGJOIN_ANTI, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {1, 3.5, 1, 0.0, 0}, 0,
				 "INNER then ANTI of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_ANTI, GA_AGGJOIN_LEFT, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {1, 0.0, 0, 0.0, 0}, 0,
				 "ANTI then LEFT of 1, 2, 9");

	/* RIGHT and FULL: build rows 0 and 1 (0.5, 1.5) match no key */
	aj_api_init(&a, GA_AGGJOIN_RIGHT, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {4, 8.0, 4}, 2, "RIGHT of 1, 2, 9");
	aj_api_init(&a, GA_AGGJOIN_FULL, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {5, 8.0, 4}, 2, "FULL of 1, 2, 9");
	aj_api_init(&a, GA_AGGJOIN_RIGHT, 3);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {4, 8.0, 4}, 2,
				 "RIGHT of 1, 2, 9 in pieces of 3 rows");
	aj_api_init(&a, GA_AGGJOIN_FULL, 1);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 0, (const double[]) {4, 8.0, 4}, 4,
				 "FULL of no probe rows in one-row pieces");

	/* step 2's build row 2 (key 12, 300) matches no key */
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_RIGHT, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {3, 5.0, 2, 600.0, 3}, 1,
				 "LEFT then RIGHT of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_INNER, GA_AGGJOIN_FULL, 3);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {4, 8.5, 3, 600.0, 3}, 1,
				 "INNER then FULL of 1, 2, 9 in pieces of 3 rows");

	/*
	 * RIGHT and FULL below: step 1's build rows 0 (0.5, next key 10) and 1
	 * (1.5, next key 11) match no key and go through step 2 at finish,
	 * row 0 matching step 2's rows 0 and 1
	 */
	aj_api_init_chain(&a, GA_AGGJOIN_RIGHT, GA_AGGJOIN_INNER, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {4, 6.0, 4, 600.0, 4}, 2,
				 "RIGHT then INNER of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_FULL, GA_AGGJOIN_LEFT, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {7, 11.0, 6, 600.0, 4}, 3,
				 "FULL then LEFT of 1, 2, 9");
	/* step 2's row 2 (12, 300) is matched by no row, not even at finish */
	aj_api_init_chain(&a, GA_AGGJOIN_FULL, GA_AGGJOIN_RIGHT, 3);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {5, 6.0, 4, 900.0, 5}, 3,
				 "FULL then RIGHT of 1, 2, 9 in pieces of 3 rows");
	return rr.mismatches;
}

/* ------------------------------------------------------------------------
 * SEMI steps and steps' own filters
 * ------------------------------------------------------------------------
 */

/* Append a step to step i's (0-based) own filter of a's request. */
static void
aj_api_filter(AjApi *a, int i, GaFilterOp op, GaCompareOp cmp, int column, int column2)
{
	GaAggJoinStep *step = &a->spec.steps[i];
	GaFilterStep *st = &step->filter[step->nfilter++];

	st->op = op;
	st->cmp = cmp;
	st->column = column;
	st->column2 = column2;
}

/*
 * Give step 1 of a's request a filter holding `values` values at once:
 * that many comparisons of probe int32 < probe key, then ANDs of them all.
 */
static void
aj_api_deep_filter(AjApi *a, int values)
{
	int			i;

	for (i = 0; i < values; i++)
		aj_api_filter(a, 0, GA_FILTER_COMPARE, GA_CMP_LT, 1, 0);
	for (i = 1; i < values; i++)
		aj_api_filter(a, 0, GA_FILTER_AND, GA_CMP_EQ, -1, -1);
}

/*
 * Give step 1 of a's request a filter of nsteps steps, valid as far as
 * GA_FILTER_MAX_STEPS holds them: a comparison, then NOTs (nfilter says
 * nsteps; the array holds GA_FILTER_MAX_STEPS).
 */
static void
aj_api_long_filter(AjApi *a, int nsteps)
{
	int			i;

	aj_api_filter(a, 0, GA_FILTER_COMPARE, GA_CMP_LT, 1, 0);
	for (i = 1; i < nsteps && i < GA_FILTER_MAX_STEPS; i++)
		aj_api_filter(a, 0, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
	a->spec.steps[0].nfilter = nsteps;
}

/* Expect ga_agg_create to accept a request. */
void
aj_expect_request_accepted(RunReport *rr, GaDevice *dev, const GaAggRequest *req,
						   const char *what)
{
	GaStatus	st;
	GaAgg	   *agg = ga_agg_create(dev, req, &st);

	if (agg == NULL)
		report(rr, "%s was refused: %s", what, st.message);
	ga_agg_destroy(agg);
}

/*
 * A step's own filter: refused (GA_ERR_INVALID) on a RIGHT or FULL step,
 * reading a column of a later step, a derived column, a column that does
 * not exist, an int32 as a boolean, an integer against a float, with an
 * unknown operation or comparison, too few values on the stack, too many
 * (more than GA_FILTER_MAX_DEPTH) or more than one left, and with nfilter
 * out of range; accepted on INNER, LEFT, ANTI and SEMI steps (reading the
 * probe side and build sides up to its own), at the deepest stack allowed,
 * and ignored on a RIGHT step whose nfilter is 0.  SEMI steps are accepted
 * with and without one.
 */
static int64_t
aj_api_step_filter_invalid(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjApi		a;
	GaDerivedColumn derived;

#define SF_ACCEPT(what, init, change) \
	do { init; change; aj_expect_request_accepted(&rr, dev, &a.req, (what)); } while (0)
#define SF_REFUSE(what, init, change) \
	do { init; change; aj_expect_request_refused(&rr, dev, &a.req, (what)); } while (0)
#define ONE(type) aj_api_init(&a, (type), 16)
#define TWO(type1, type2) aj_api_init_chain(&a, (type1), (type2), 16)
#define CMP(i, cmp, x, y) aj_api_filter(&a, (i), GA_FILTER_COMPARE, (cmp), (x), (y))
#define OP(i, op) aj_api_filter(&a, (i), (op), GA_CMP_EQ, -1, -1)

	SF_ACCEPT("a SEMI step", ONE(GA_AGGJOIN_SEMI), (void) 0);
	SF_ACCEPT("a chain of a LEFT and a SEMI step", TWO(GA_AGGJOIN_LEFT, GA_AGGJOIN_SEMI),
			  (void) 0);
	SF_ACCEPT("a SEMI step with a filter", ONE(GA_AGGJOIN_SEMI), CMP(0, GA_CMP_LT, 1, 0));
	SF_ACCEPT("an INNER step's filter of build float64 = itself", ONE(GA_AGGJOIN_INNER),
			  CMP(0, GA_CMP_EQ, 2, 2));
	SF_ACCEPT("a LEFT step's filter", ONE(GA_AGGJOIN_LEFT), CMP(0, GA_CMP_GE, 0, 1));
	SF_ACCEPT("an ANTI step's filter", ONE(GA_AGGJOIN_ANTI), CMP(0, GA_CMP_NE, 1, 1));
	SF_ACCEPT("step 1's filter reading its build int64", TWO(GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER),
			  CMP(0, GA_CMP_LT, 1, 3));
	SF_ACCEPT("step 2's filter reading build sides 1 and 2",
			  TWO(GA_AGGJOIN_LEFT, GA_AGGJOIN_SEMI), CMP(1, GA_CMP_LT, 2, 4));
	SF_ACCEPT("filters on both steps and on the join", TWO(GA_AGGJOIN_INNER, GA_AGGJOIN_ANTI),
			  (CMP(0, GA_CMP_LT, 1, 3), CMP(1, GA_CMP_GT, 4, 2), OP(1, GA_FILTER_NOT),
			   a.spec.nfilter = 1, a.spec.filter[0] = a.spec.steps[0].filter[0]));
	SF_ACCEPT("a RIGHT step with garbage in filter[] and nfilter 0", ONE(GA_AGGJOIN_RIGHT),
			  (CMP(0, GA_CMP_LT, 1, 0), a.spec.steps[0].nfilter = 0,
			   a.spec.steps[0].filter[0].column = 99));
	SF_ACCEPT("a step filter of GA_FILTER_MAX_DEPTH values at once", ONE(GA_AGGJOIN_LEFT),
			  aj_api_deep_filter(&a, GA_FILTER_MAX_DEPTH));

	SF_REFUSE("a RIGHT step with a filter", ONE(GA_AGGJOIN_RIGHT), CMP(0, GA_CMP_LT, 1, 0));
	SF_REFUSE("a FULL step with a filter", ONE(GA_AGGJOIN_FULL), CMP(0, GA_CMP_LT, 1, 0));
	SF_REFUSE("a RIGHT step 2 with a filter", TWO(GA_AGGJOIN_INNER, GA_AGGJOIN_RIGHT),
			  CMP(1, GA_CMP_LT, 2, 4));
	SF_REFUSE("a FULL step 2 with a filter", TWO(GA_AGGJOIN_LEFT, GA_AGGJOIN_FULL),
			  CMP(1, GA_CMP_LT, 1, 3));
	SF_REFUSE("step 1's filter reading step 2's column", TWO(GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER),
			  CMP(0, GA_CMP_LT, 2, 4));
	SF_REFUSE("step 1's filter reading step 2's column second",
			  TWO(GA_AGGJOIN_SEMI, GA_AGGJOIN_INNER), CMP(0, GA_CMP_LT, 4, 2));
	SF_REFUSE("step 1's filter reading step 2's int8 as a boolean",
			  TWO(GA_AGGJOIN_INNER, GA_AGGJOIN_INNER),
			  (a.types[4] = GA_TYPE_INT8, a.req.naggs = 3,	/* none of column 4 */
			   aj_api_filter(&a, 0, GA_FILTER_BOOL, GA_CMP_EQ, 4, -1)));
	SF_REFUSE("a step filter reading column -1", ONE(GA_AGGJOIN_INNER),
			  CMP(0, GA_CMP_LT, -1, 0));
	SF_REFUSE("a step filter reading a column beyond the columns", ONE(GA_AGGJOIN_INNER),
			  CMP(0, GA_CMP_LT, 1, 3));
	SF_REFUSE("a step filter comparing an integer with a float", ONE(GA_AGGJOIN_INNER),
			  CMP(0, GA_CMP_LT, 1, 2));
	SF_REFUSE("a step filter reading an int32 as a boolean", ONE(GA_AGGJOIN_LEFT),
			  aj_api_filter(&a, 0, GA_FILTER_BOOL, GA_CMP_EQ, 1, -1));
	SF_REFUSE("a step filter of an unknown operation", ONE(GA_AGGJOIN_INNER),
			  (CMP(0, GA_CMP_LT, 1, 0), a.spec.steps[0].filter[0].op = (GaFilterOp) 9));
	SF_REFUSE("a step filter of an unknown comparison", ONE(GA_AGGJOIN_INNER),
			  CMP(0, (GaCompareOp) 17, 1, 0));
	SF_REFUSE("a step filter of AND alone", ONE(GA_AGGJOIN_INNER), OP(0, GA_FILTER_AND));
	SF_REFUSE("a step filter of NOT alone", ONE(GA_AGGJOIN_SEMI), OP(0, GA_FILTER_NOT));
	SF_REFUSE("a step filter of OR on one value", ONE(GA_AGGJOIN_ANTI),
			  (CMP(0, GA_CMP_LT, 1, 0), OP(0, GA_FILTER_OR)));
	SF_REFUSE("a step filter leaving two values", ONE(GA_AGGJOIN_LEFT),
			  (CMP(0, GA_CMP_LT, 1, 0), CMP(0, GA_CMP_LT, 0, 1)));
	SF_REFUSE("a step filter of GA_FILTER_MAX_DEPTH + 1 values at once", ONE(GA_AGGJOIN_LEFT),
			  aj_api_deep_filter(&a, GA_FILTER_MAX_DEPTH + 1));
	SF_REFUSE("a step filter of -1 steps", ONE(GA_AGGJOIN_INNER),
			  (CMP(0, GA_CMP_LT, 1, 0), a.spec.steps[0].nfilter = -1));
	SF_ACCEPT("a step filter of GA_FILTER_MAX_STEPS steps", ONE(GA_AGGJOIN_INNER),
			  aj_api_long_filter(&a, GA_FILTER_MAX_STEPS));
	SF_REFUSE("a step filter of GA_FILTER_MAX_STEPS + 1 steps", ONE(GA_AGGJOIN_INNER),
			  aj_api_long_filter(&a, GA_FILTER_MAX_STEPS + 1));
	SF_REFUSE("step 2 of a filter-free chain with -1 filter steps",
			  TWO(GA_AGGJOIN_INNER, GA_AGGJOIN_LEFT), a.spec.steps[1].nfilter = -1);

	/* a derived int64 (column 3, probe int32 + 0) refused in a step filter only */
	memset(&derived, 0, sizeof(derived));
	derived.column = 3;
	derived.part = GA_DERIVED_INT64;
	derived.nsteps = 1;
	derived.steps[0].op = GA_EXPR_COLUMN;
	derived.steps[0].column = 1;
	derived.steps[0].nan_column = -1;
#define DERIVED() (ONE(GA_AGGJOIN_LEFT), a.req.ncolumns = 4, a.from_build[3] = 0, \
				   a.req.nderived = 1, a.req.derived = &derived)
	SF_ACCEPT("a request with a derived column", DERIVED(), (void) 0);
	SF_ACCEPT("a step filter beside a derived column", DERIVED(), CMP(0, GA_CMP_LT, 1, 0));
	SF_REFUSE("a step filter reading a derived column", DERIVED(), CMP(0, GA_CMP_EQ, 3, 0));
	SF_REFUSE("a step filter reading a derived column second", DERIVED(),
			  CMP(0, GA_CMP_EQ, 1, 3));
#undef DERIVED
#undef OP
#undef CMP
#undef TWO
#undef ONE
#undef SF_REFUSE
#undef SF_ACCEPT
	return rr.mismatches;
}

/*
 * Known results of SEMI steps and steps' own filters, on the small
 * request's probe keys 1, 2, 9 (key 1 gives step 1's row 3: 3.5, next key
 * 11; key 2 row 2: 2.5, next key 10; step 2's rows 0, 1, 2 have keys 10,
 * 10, 12): a SEMI row comes once however many pairs pass; a LEFT row whose
 * pairs all fail comes once, null-extended, and one with a passing pair
 * keeps only those; an ANTI row whose pairs all fail is kept; a RIGHT
 * step above a filtered LEFT step counts only the rows the filter left,
 * and the unmatched build rows of a FULL or RIGHT step below a filtered
 * step go through its filter, their probe side null.
 */
static int64_t
aj_api_step_filter_known(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjApi		a;
	int64_t		keys[3] = {1, 2, 9};

	aj_api_init(&a, GA_AGGJOIN_SEMI, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {2, 0.0, 0}, 0, "SEMI of 1, 2, 9");
	aj_api_init(&a, GA_AGGJOIN_SEMI, 16);
	a.req.strategy = strategy;
	aj_api_filter(&a, 0, GA_FILTER_COMPARE, GA_CMP_LT, 0, 1);	/* key < row number: never */
	aj_api_known(&rr, dev, &a, (const int64_t[]) {1, 2, 9, 0}, 4,
				 (const double[]) {0, 0.0, 0}, 0, "SEMI of 1, 2, 9, 0 ON key < row: none");

	/* key 2's row matches step 2's rows 0 and 1: one row */
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_SEMI, 16);
	a.req.strategy = strategy;
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {1, 2.5, 1, 0.0, 0}, 0,
				 "LEFT then SEMI of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_INNER, GA_AGGJOIN_SEMI, 3);
	a.req.strategy = strategy;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 2, 4);	/* 2.5 < 100, 200: both */
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {1, 2.5, 1, 0.0, 0}, 0,
				 "INNER then SEMI ON b1 < b2 of 1, 2, 9 in pieces of 3 rows");

	/* step 2's values 0.25, 200, 300: of key 2's pairs only (2.5, 0.25) has b2 < b1 */
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_LEFT, 16);
	a.req.strategy = strategy;
	a.build2_vals[0] = 0.25;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 4, 2);
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {3, 6.0, 2, 0.25, 1}, 0,
				 "LEFT then LEFT ON b2 < b1 of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_LEFT, 3);
	a.req.strategy = strategy;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 4, 2);	/* none passes */
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {3, 6.0, 2, 0.0, 0}, 0,
				 "LEFT then LEFT ON b2 < b1 (none) of 1, 2, 9 in pieces of 3 rows");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_ANTI, 16);
	a.req.strategy = strategy;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 4, 2);	/* none passes: key 2 kept */
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {3, 6.0, 2, 0.0, 0}, 0,
				 "LEFT then ANTI ON b2 < b1 (none) of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_ANTI, 16);
	a.req.strategy = strategy;
	a.build2_vals[0] = 0.25;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 4, 2);	/* (2.5, 0.25) passes */
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {2, 3.5, 1, 0.0, 0}, 0,
				 "LEFT then ANTI ON b2 < b1 of 1, 2, 9");

	/*
	 * Step 1 ON probe int32 < next key, the probe int32s 5, 20, 0: key 1
	 * (next 11) passes, key 2 (next 10) is null-extended, so step 2's rows
	 * 0 and 1 are matched by no row and come back at finish, with row 2
	 */
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_RIGHT, 16);
	a.req.strategy = strategy;
	aj_api_filter(&a, 0, GA_FILTER_COMPARE, GA_CMP_LT, 1, 3);
	aj_api_known_values(&rr, dev, &a, keys, (const int32_t[]) {5, 20, 0}, 3,
						(const double[]) {3, 0.0, 0, 600.0, 3}, 3,
						"LEFT ON probe < next key, then RIGHT of 1, 2, 9");
	aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_RIGHT, 16);
	a.req.strategy = strategy;
	aj_api_filter(&a, 0, GA_FILTER_COMPARE, GA_CMP_LT, 1, 3);
	aj_api_known_values(&rr, dev, &a, keys, (const int32_t[]) {20, 5, 0}, 3,
						(const double[]) {3, 5.0, 2, 600.0, 3}, 1,
						"LEFT ON probe < next key (key 2 passes), then RIGHT of 1, 2, 9");

	/*
	 * FULL, then LEFT ON b2 < b1 (step 2's values 0.25, 200, 300): step
	 * 1's unmatched rows 0 (0.5, next 10) and 1 (1.5, next 11) come at
	 * finish; row 0's pair with (0.25) passes, row 1 is null-extended
	 */
	aj_api_init_chain(&a, GA_AGGJOIN_FULL, GA_AGGJOIN_LEFT, 16);
	a.req.strategy = strategy;
	a.build2_vals[0] = 0.25;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 4, 2);
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {5, 8.0, 4, 0.5, 2}, 2,
				 "FULL then LEFT ON b2 < b1 of 1, 2, 9");
	/* RIGHT, then SEMI ON b1 < b2: key 2's row and unmatched row 0 (0.5, next 10) */
	aj_api_init_chain(&a, GA_AGGJOIN_RIGHT, GA_AGGJOIN_SEMI, 3);
	a.req.strategy = strategy;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 2, 4);
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {2, 3.0, 2, 0.0, 0}, 1,
				 "RIGHT then SEMI ON b1 < b2 of 1, 2, 9 in pieces of 3 rows");
	/*
	 * The same ON probe int32 < probe key: key 2's row (1 < 2) alone, the
	 * unmatched rows' probe side being null
	 */
	aj_api_init_chain(&a, GA_AGGJOIN_RIGHT, GA_AGGJOIN_SEMI, 3);
	a.req.strategy = strategy;
	aj_api_filter(&a, 1, GA_FILTER_COMPARE, GA_CMP_LT, 1, 0);
	aj_api_known(&rr, dev, &a, keys, 3, (const double[]) {1, 2.5, 1, 0.0, 0}, 0,
				 "RIGHT then SEMI ON probe int32 < probe key of 1, 2, 9");
	return rr.mismatches;
}

/* fail_at_batch fails that submit (and only that one) with GA_ERR_INJECTED. */
static int64_t
aj_api_fail_at_batch(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	WaitState	ws = {0, 0, 0};
	AjApi		a;
	GaStatus	st;
	GaAgg	   *agg;
	int64_t		keys[3] = {1, 2, 9};

	aj_api_init(&a, GA_AGGJOIN_LEFT, 16);
	a.req.strategy = strategy;
	a.req.fail_at_batch = 2;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL || !ga_aggjoin_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st))
		report(&rr, "create or build failed: %s", st.message);
	else
	{
		if (!aj_api_submit(agg, keys, 3, &ws, &st))
			report(&rr, "submit 1 failed: %s", st.message);
		aj_expect(&rr, aj_api_submit(agg, keys, 3, &ws, &st), &st, GA_ERR_INJECTED,
				  "submit 2 with fail_at_batch 2");
	}
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * Build a's steps, step 1 with n keyed rows, submit 4 probe rows of key 7
 * under a wait callback that says stop, and expect the submit and the
 * finish after it to fail with GA_ERR_CANCELLED; the CPU device must have
 * asked the callback (`what` says during what).
 */
static void
aj_api_cancel_submit(RunReport *rr, GaDevice *dev, AjApi *a, const int64_t *keys,
					 const uint32_t *rows, int64_t n, const char *what)
{
	WaitState	ws = {0, 1, 0};
	GaStatus	st;
	GaAgg	   *agg = ga_agg_create(dev, &a->req, &st);
	int64_t		probe_keys[4] = {7, 7, 7, 7};
	int			ok;

	if (agg == NULL ||
		(a->spec.nsteps > 1 &&
		 !ga_aggjoin_build(agg, 1, a->keys2, a->rows2, 3, &a->payload2, NULL, NULL, &st)) ||
		!ga_aggjoin_build(agg, 0, keys, rows, n, &a->payload, NULL, NULL, &st))
		report(rr, "create or build failed: %s", st.message);
	else
	{
		ok = aj_api_submit(agg, probe_keys, 4, &ws, &st);
		if (ws.cancels > 0)
		{
			aj_expect(rr, ok, &st, GA_ERR_CANCELLED, "a cancelled submit");
			aj_expect(rr, ga_agg_finish(agg, NULL, NULL, &st) != NULL, &st,
					  GA_ERR_CANCELLED, "finish after a cancelled submit");
		}
		else if (ga_device_kind(dev) == GA_DEVICE_CPU)
			report(rr, "the CPU device did not ask the wait callback %s", what);
		else if (!ok)
			report(rr, "a submit failed without a cancel: %s", st.message);
	}
	ga_agg_destroy(agg);
}

/*
 * Cancel: a wait callback that says stop.  A build or submit during which
 * it answered must fail with GA_ERR_CANCELLED, and the next call must fail
 * too; the CPU device must ask it for a build of 300K rows, a submit of
 * 300K joined rows, and a chain's submit whose 1.2M rows of step 1 all die
 * in step 2.
 */
static int64_t
aj_api_cancel(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	WaitState	ws = {0, 1, 0};
	AjApi		a;
	GaStatus	st;
	GaAgg	   *agg;
	int64_t		n = 300000;
	int64_t    *keys = malloc(sizeof(int64_t) * n);
	uint32_t   *rows = malloc(sizeof(uint32_t) * n);
	double	   *vals = calloc((size_t) n, sizeof(double));
	int64_t    *next_keys = malloc(sizeof(int64_t) * n);
	int64_t		i;
	int			ok;

	for (i = 0; i < n; i++)
	{
		keys[i] = 7;			/* one key on every row: 4 probe rows give 1.2M pairs */
		rows[i] = (uint32_t) i;
		next_keys[i] = 99;		/* no key of step 2 */
	}

	/* Cancel the build. */
	aj_api_init(&a, GA_AGGJOIN_INNER, 1 << 16);
	a.req.strategy = strategy;
	a.columns[2].values = vals;
	a.payload.nrows = a.payload.capacity = n;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
		report(&rr, "create failed: %s", st.message);
	else
	{
		ok = ga_aggjoin_build(agg, 0, keys, rows, n, &a.payload, test_wait, &ws, &st);
		if (ws.cancels > 0)
		{
			GaBatch    *batch;

			aj_expect(&rr, ok, &st, GA_ERR_CANCELLED, "a cancelled build");
			batch = ga_agg_next_batch(agg, NULL, NULL, &st);
			if (batch != NULL || st.code == GA_OK)
				report(&rr, "next_batch after a cancelled build did not fail");
		}
		else if (ga_device_kind(dev) == GA_DEVICE_CPU)
			report(&rr, "the CPU device did not ask the wait callback during a build of %lld rows",
				   (long long) n);
	}
	ga_agg_destroy(agg);

	/* Cancel a submit of many joined rows, then a chain's that ends in none. */
	aj_api_cancel_submit(&rr, dev, &a, keys, rows, n, "joining 1.2M rows");
	aj_api_init_chain(&a, GA_AGGJOIN_INNER, GA_AGGJOIN_INNER, 1 << 16);
	a.req.strategy = strategy;
	a.columns[2].values = vals;
	a.columns[3].values = next_keys;
	a.payload.nrows = a.payload.capacity = n;
	aj_api_cancel_submit(&rr, dev, &a, keys, rows, n,
						 "joining 1.2M rows of step 1 that step 2 drops");
	free(keys);
	free(rows);
	free(vals);
	free(next_keys);
	return rr.mismatches;
}

/*
 * Destroy is safe in every state: created, built (a chain: one of its two
 * steps), with a batch out, submitted, finished; for one step and a chain.
 */
static int64_t
aj_api_destroy_states(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	WaitState	ws = {0, 0, 0};
	AjApi		a;
	GaStatus	st;
	GaAgg	   *agg;
	int64_t		keys[2] = {3, 4};
	int			run;

	for (run = 0; run < 10; run++)
	{
		int			chain = run >= 5;
		int			state = run % 5;
		int			ok = 1;

		if (chain)
			aj_api_init_chain(&a, GA_AGGJOIN_LEFT, GA_AGGJOIN_INNER, 4);
		else
			aj_api_init(&a, GA_AGGJOIN_INNER, 4);
		a.req.strategy = strategy;
		agg = ga_agg_create(dev, &a.req, &st);
		if (agg == NULL)
		{
			report(&rr, "create failed: %s", st.message);
			continue;
		}
		if (state == 1 && chain)
			ok = ga_aggjoin_build(agg, 1, a.keys2, a.rows2, 3, &a.payload2, NULL, NULL, &st);
		else if (state >= 1)
			ok = aj_api_build(agg, &a, &st);
		if (!ok)
			report(&rr, "build failed: %s", st.message);
		if (state == 2 && ga_agg_next_batch(agg, NULL, NULL, &st) == NULL)
			report(&rr, "next_batch failed: %s", st.message);
		if (state >= 3 && !aj_api_submit(agg, keys, 2, &ws, &st))
			report(&rr, "submit failed: %s", st.message);
		if (state == 4 && ga_agg_finish(agg, NULL, NULL, &st) == NULL)
			report(&rr, "finish failed: %s", st.message);
		ga_agg_destroy(agg);
	}
	return rr.mismatches;
}

/*
 * Run the API checks on one device run (the invalid requests and the
 * cancel only under the AUTO strategy; the seed choice, which no device
 * runs, on the CPU device alone); returns the problems found.
 */
int64_t
aggjoin_api_checks(GaDevice *dev, GaStrategy strategy, const char *label)
{
	int64_t		f = 0;

	if (strategy == GA_STRATEGY_AUTO)
	{
		f += aj_api_invalid(dev, label);
		f += aj_api_invalid_chain(dev, label);
		f += aj_api_cancel(dev, strategy, label);
		f += aj_mk_invalid(dev, label);
		f += aj_mk_cancel(dev, strategy, label);
		f += aj_api_step_filter_invalid(dev, label);
	}
	if (strategy == GA_STRATEGY_AUTO && ga_device_kind(dev) == GA_DEVICE_CPU)
		f += aj_mk_seed_choice(label);
	f += aj_api_known_results(dev, strategy, label);
	f += aj_mk_known_results(dev, strategy, label);
	f += aj_api_step_filter_known(dev, strategy, label);
	f += aj_api_fail_at_batch(dev, strategy, label);
	f += aj_api_destroy_states(dev, strategy, label);
	return f;
}
