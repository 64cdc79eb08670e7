/*-------------------------------------------------------------------------
 *
 * aggjoin_api.c
 *	  The join-fed aggregation's API checks, for the suite in aggjoin.c:
 *	  malformed join specs, build arguments and call orders are refused
 *	  with GA_ERR_INVALID (and a refused build leaves the aggregation
 *	  buildable), fail_at_batch fails that submit, a LEFT join of a few
 *	  known rows gives known results, a wait callback that says stop
 *	  cancels a build and a submit (the CPU device must ask it) and later
 *	  calls report it, and destroy is safe in every state.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"

#include <stdlib.h>
#include <string.h>

/* A small join-fed request: probe key (0), probe int32 (1), build float64 (2). */
typedef struct AjApi
{
	GaValueType types[3];
	uint8_t		from_build[3];
	GaAggSpec	aggs[3];
	GaAggJoinSpec spec;
	GaAggRequest req;
	GaColumn	columns[3];
	GaBatch		payload;
	double		build_vals[4];
	int64_t		keys[4];
	uint32_t	rows[4];
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
	a->from_build[2] = 1;
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
	for (i = 0; i < 3; i++)
		a->columns[i].type = a->types[i];
	for (i = 0; i < 4; i++)
	{
		a->build_vals[i] = i + 0.5;
		a->keys[i] = i + 1;
		a->rows[i] = (uint32_t) (3 - i);
	}
	a->columns[2].values = a->build_vals;
	a->payload.nrows = 4;
	a->payload.capacity = 4;
	a->payload.ncolumns = 3;
	a->payload.columns = a->columns;
}

/* Expect a failed call with code `want`. */
static void
aj_expect(RunReport *rr, int ok, const GaStatus *st, GaStatusCode want, const char *what)
{
	if (ok || st->code != want)
		report(rr, "%s: ok %d code %d (%s), expected code %d", what, ok, st->code,
			   ok ? "" : st->message, want);
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
	aj_api_init(&a, GA_AGG_JOIN_INNER, 16);
	a.spec.steps[0].type = (GaAggJoinType) 7;
	agg = ga_agg_create(dev, &a.req, &st);
	aj_expect(&rr, agg != NULL, &st, GA_ERR_INVALID, "an unknown join type");
	ga_agg_destroy(agg);
	aj_api_init(&a, GA_AGG_JOIN_INNER, 16);
	a.spec.steps[0].key_column = 1;	/* int32 */
	agg = ga_agg_create(dev, &a.req, &st);
	aj_expect(&rr, agg != NULL, &st, GA_ERR_INVALID, "an int32 probe key");
	ga_agg_destroy(agg);
	aj_api_init(&a, GA_AGG_JOIN_INNER, 16);
	a.spec.steps[0].key_column = 3;
	agg = ga_agg_create(dev, &a.req, &st);
	aj_expect(&rr, agg != NULL, &st, GA_ERR_INVALID, "a probe key beyond the columns");
	ga_agg_destroy(agg);
	aj_api_init(&a, GA_AGG_JOIN_INNER, 16);
	a.from_build[0] = 1;
	agg = ga_agg_create(dev, &a.req, &st);
	aj_expect(&rr, agg != NULL, &st, GA_ERR_INVALID, "a probe key from the build side");
	ga_agg_destroy(agg);
	aj_api_init(&a, GA_AGG_JOIN_INNER, 16);
	a.spec.from_build = NULL;
	agg = ga_agg_create(dev, &a.req, &st);
	aj_expect(&rr, agg != NULL, &st, GA_ERR_INVALID, "no from_build array");
	ga_agg_destroy(agg);

	/* A build given to a plain aggregation. */
	aj_api_init(&a, GA_AGG_JOIN_INNER, 16);
	a.req.join = NULL;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
		report(&rr, "create without a join failed: %s", st.message);
	else
		aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
				  &st, GA_ERR_INVALID, "a build on an aggregation without a join");
	ga_agg_destroy(agg);

	/* Call order and build arguments on one aggregation. */
	aj_api_init(&a, GA_AGG_JOIN_INNER, 16);
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
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a payload with too few columns");
	a.payload.ncolumns = 3;
	a.columns[2].type = GA_TYPE_FLOAT32;
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a payload column of another type");
	a.columns[2].type = GA_TYPE_FLOAT64;
	a.rows[2] = 4;
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a build row beyond the payload");
	a.rows[2] = 1;
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 5, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "more keyed rows than payload rows");
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, -1, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a negative number of keyed rows");
	aj_expect(&rr, ga_agg_join_build(agg, 0, NULL, NULL, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "keyed rows without arrays");
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 4, NULL, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "no payload");
	a.payload.capacity = 3;
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a payload holding more rows than its capacity");
	a.payload.capacity = 4;

	/* The refused builds left the aggregation unbuilt: this one must work. */
	if (!ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st))
		report(&rr, "a valid build after refused ones failed: %s", st.message);
	aj_expect(&rr, ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a second build");
	batch = ga_agg_next_batch(agg, NULL, NULL, &st);
	if (batch == NULL)
		report(&rr, "next_batch after the build failed: %s", st.message);
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * One probe batch of the small request: key k matches build row 4 - k
 * (value 3.5 - (k - 1)), so a few known results can be checked.
 */
static int
aj_api_submit(GaAgg *agg, const int64_t *keys, int n, WaitState *ws, GaStatus *st)
{
	GaBatch    *batch = ga_agg_next_batch(agg, test_wait, ws, st);
	int			i;

	if (batch == NULL)
		return 0;
	for (i = 0; i < n; i++)
	{
		((int64_t *) batch->columns[0].values)[i] = keys[i];
		((int32_t *) batch->columns[1].values)[i] = i;
	}
	batch->nrows = n;
	return ga_agg_submit(agg, batch, test_wait, ws, st);
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

	aj_api_init(&a, GA_AGG_JOIN_LEFT, 16);
	a.req.strategy = strategy;
	a.req.fail_at_batch = 2;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL || !ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st))
		report(&rr, "create or build failed: %s", st.message);
	else
	{
		if (!aj_api_submit(agg, keys, 3, &ws, &st))
			report(&rr, "submit 1 failed: %s", st.message);
		aj_expect(&rr, aj_api_submit(agg, keys, 3, &ws, &st), &st, GA_ERR_INJECTED,
				  "submit 2 with fail_at_batch 2");
	}
	ga_agg_destroy(agg);

	/* Without injection: LEFT, keys 1, 2 match, 9 does not. */
	a.req.fail_at_batch = 0;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL || !ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st))
		report(&rr, "create or build failed: %s", st.message);
	else if (!aj_api_submit(agg, keys, 3, &ws, &st))
		report(&rr, "submit failed: %s", st.message);
	else
	{
		const GaAggResult *res = ga_agg_finish(agg, test_wait, &ws, &st);

		/* key 1 is build row 3 (3.5), key 2 row 2 (2.5) */
		if (res == NULL)
			report(&rr, "finish failed: %s", st.message);
		else if (res->ngroups != 1 || ((int64_t *) res->values[0])[0] != 3 ||
				 ((double *) res->values[1])[0] != 6.0 ||
				 ((int64_t *) res->values[2])[0] != 2)
			report(&rr, "a LEFT join of keys 1, 2, 9 gave %lld rows, sum %g, count %lld; expected 3, 6, 2",
				   res->ngroups > 0 ? (long long) ((int64_t *) res->values[0])[0] : -1LL,
				   res->ngroups > 0 ? ((double *) res->values[1])[0] : 0.0,
				   res->ngroups > 0 ? (long long) ((int64_t *) res->values[2])[0] : -1LL);
	}
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * Cancel: a wait callback that says stop.  A build or submit during which
 * it answered must fail with GA_ERR_CANCELLED, and the next call must fail
 * too; the CPU device must ask it for a build of 300K rows and a submit of
 * 300K joined rows.
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
	int64_t		probe_keys[4] = {7, 7, 7, 7};
	int64_t		i;
	int			ok;

	for (i = 0; i < n; i++)
	{
		keys[i] = 7;			/* one key on every row: 4 probe rows give 1.2M pairs */
		rows[i] = (uint32_t) i;
	}

	/* Cancel the build. */
	aj_api_init(&a, GA_AGG_JOIN_INNER, 1 << 16);
	a.req.strategy = strategy;
	a.columns[2].values = vals;
	a.payload.nrows = a.payload.capacity = n;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
		report(&rr, "create failed: %s", st.message);
	else
	{
		ok = ga_agg_join_build(agg, 0, keys, rows, n, &a.payload, test_wait, &ws, &st);
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

	/* Cancel a submit of many joined rows. */
	ws.cancels = 0;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL || !ga_agg_join_build(agg, 0, keys, rows, n, &a.payload, NULL, NULL, &st))
		report(&rr, "create or build failed: %s", st.message);
	else
	{
		ok = aj_api_submit(agg, probe_keys, 4, &ws, &st);
		if (ws.cancels > 0)
		{
			aj_expect(&rr, ok, &st, GA_ERR_CANCELLED, "a cancelled submit");
			aj_expect(&rr, ga_agg_finish(agg, NULL, NULL, &st) != NULL, &st,
					  GA_ERR_CANCELLED, "finish after a cancelled submit");
		}
		else if (ga_device_kind(dev) == GA_DEVICE_CPU)
			report(&rr, "the CPU device did not ask the wait callback joining 1.2M rows");
		else if (!ok)
			report(&rr, "a submit failed without a cancel: %s", st.message);
	}
	ga_agg_destroy(agg);
	free(keys);
	free(rows);
	free(vals);
	return rr.mismatches;
}

/* Destroy is safe in every state: created, built, with a batch out, finished. */
static int64_t
aj_api_destroy_states(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	WaitState	ws = {0, 0, 0};
	AjApi		a;
	GaStatus	st;
	GaAgg	   *agg;
	int64_t		keys[2] = {3, 4};
	int			state;

	aj_api_init(&a, GA_AGG_JOIN_INNER, 4);
	a.req.strategy = strategy;
	for (state = 0; state < 5; state++)
	{
		agg = ga_agg_create(dev, &a.req, &st);
		if (agg == NULL)
		{
			report(&rr, "create failed: %s", st.message);
			continue;
		}
		if (state >= 1 && !ga_agg_join_build(agg, 0, a.keys, a.rows, 4, &a.payload, NULL, NULL, &st))
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
 * cancel only under the AUTO strategy); returns the problems found.
 */
int64_t
aggjoin_api_checks(GaDevice *dev, GaStrategy strategy, const char *label)
{
	int64_t		f = 0;

	if (strategy == GA_STRATEGY_AUTO)
	{
		f += aj_api_invalid(dev, label);
		f += aj_api_cancel(dev, strategy, label);
	}
	f += aj_api_fail_at_batch(dev, strategy, label);
	f += aj_api_destroy_states(dev, strategy, label);
	return f;
}

