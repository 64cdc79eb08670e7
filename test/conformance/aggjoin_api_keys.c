/*-------------------------------------------------------------------------
 *
 * aggjoin_api_keys.c
 *	  The aggjoin's API checks of steps of several keys, for the suite in
 *	  aggjoin.c (aggjoin_api.c runs them): malformed keys and builds are
 *	  refused, the keys of a few known rows (nulls, keys sharing a
 *	  component, keys swapped) join as they should under every join type,
 *	  a cancelled build is remembered; and the seed choice of their hashes
 *	  (cuda/join_key.c) is checked directly, on hashes made to collide.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.h"
#include "join_key.h"

#include <stdlib.h>
#include <string.h>

/*
 * A small request joined on two keys: probe keys (0, 1), a probe int32
 * (2), step 1's build keys (3, 4), its float64 value (5) and int32 (6),
 * and an int64 (7) of the probe side, or of step 2 where a check needs
 * one.  The build side has 6 rows: keys (1, 2), (1, 3), (2, 1), (1, 2),
 * (null, 5), (3, null) and values 1, 2, 4, 8, 16, 32; rows 3, 0, 2, 1 are
 * listed.  Aggregates: COUNT_ROWS, SUM_FLOAT64 and COUNT of the value.
 */
#define AJ_MK_COLUMNS 8
#define AJ_MK_BUILD_ROWS 6

/* A null in the probe keys of aj_mk_known. */
#define AJ_MK_NULL INT64_MIN

typedef struct AjMk
{
	GaValueType types[AJ_MK_COLUMNS];
	uint8_t		from_build[AJ_MK_COLUMNS];
	GaAggSpec	aggs[3];
	GaAggJoinSpec spec;
	GaAggRequest req;
	GaColumn	columns[AJ_MK_COLUMNS];
	GaBatch		payload;
	int64_t		build_keys[2][AJ_MK_BUILD_ROWS];
	uint8_t		build_validity[2];
	double		vals[AJ_MK_BUILD_ROWS];
	uint32_t	rows[4];
} AjMk;

/* Set up the request of two keys (a step of type `type`) and its build side. */
static void
aj_mk_init(AjMk *a, GaAggJoinType type, int64_t batch_rows)
{
	static const int64_t keys0[AJ_MK_BUILD_ROWS] = {1, 1, 2, 1, 77, 3};
	static const int64_t keys1[AJ_MK_BUILD_ROWS] = {2, 3, 1, 2, 5, 77};
	static const GaValueType types[AJ_MK_COLUMNS] = {
		GA_TYPE_INT64, GA_TYPE_INT64, GA_TYPE_INT32, GA_TYPE_INT64, GA_TYPE_INT64,
	GA_TYPE_FLOAT64, GA_TYPE_INT32, GA_TYPE_INT64};
	int			i;

	memset(a, 0, sizeof(*a));
	memcpy(a->types, types, sizeof(types));
	a->from_build[3] = a->from_build[4] = a->from_build[5] = a->from_build[6] = 1;
	a->aggs[0].op = GA_AGG_COUNT_ROWS;
	a->aggs[0].column = -1;
	a->aggs[1].op = GA_AGG_SUM_FLOAT64;
	a->aggs[1].column = 5;
	a->aggs[2].op = GA_AGG_COUNT;
	a->aggs[2].column = 5;
	a->spec.nsteps = 1;
	a->spec.steps[0].type = type;
	a->spec.steps[0].key_column = -1;	/* ignored */
	a->spec.steps[0].nkeys = 2;
	a->spec.steps[0].key_columns[0] = 0;
	a->spec.steps[0].key_columns[1] = 1;
	a->spec.steps[0].build_key_columns[0] = 3;
	a->spec.steps[0].build_key_columns[1] = 4;
	a->spec.from_build = a->from_build;
	a->req.ncolumns = AJ_MK_COLUMNS;
	a->req.column_types = a->types;
	a->req.naggs = 3;
	a->req.aggs = a->aggs;
	a->req.batch_rows = batch_rows;
	a->req.estimated_groups = 1;
	a->req.join = &a->spec;
	for (i = 0; i < AJ_MK_BUILD_ROWS; i++)
	{
		a->build_keys[0][i] = keys0[i];
		a->build_keys[1][i] = keys1[i];
		a->vals[i] = (double) (1 << i);
	}
	a->build_validity[0] = 0x2f;	/* row 4's first key is null */
	a->build_validity[1] = 0x1f;	/* row 5's second key is null */
	for (i = 0; i < AJ_MK_COLUMNS; i++)
		a->columns[i].type = a->types[i];
	for (i = 0; i < 2; i++)
	{
		a->columns[3 + i].values = a->build_keys[i];
		a->columns[3 + i].validity = &a->build_validity[i];
		a->columns[3 + i].has_nulls = 1;
	}
	a->columns[5].values = a->vals;
	a->rows[0] = 3;
	a->rows[1] = 0;
	a->rows[2] = 2;
	a->rows[3] = 1;
	a->payload.nrows = AJ_MK_BUILD_ROWS;
	a->payload.capacity = AJ_MK_BUILD_ROWS;
	a->payload.ncolumns = AJ_MK_COLUMNS;
	a->payload.columns = a->columns;
}

/*
 * Submit n probe rows of the request of two keys (AJ_MK_NULL: a null key,
 * holding a key that matches) and finish; NULL with status on failure.
 */
static const GaAggResult *
aj_mk_run(GaAgg *agg, const int64_t (*keys)[2], int n, WaitState *ws, GaStatus *st)
{
	GaBatch    *batch = ga_agg_next_batch(agg, test_wait, ws, st);
	int			i,
				k;

	if (batch == NULL)
		return NULL;
	for (i = 0; i < n; i++)
	{
		for (k = 0; k < 2; k++)
		{
			((int64_t *) batch->columns[k].values)[i] = keys[i][k] == AJ_MK_NULL ? 1 : keys[i][k];
			if (keys[i][k] == AJ_MK_NULL)
				ga_column_set_null(&batch->columns[k], i);
		}
		((int32_t *) batch->columns[2].values)[i] = i;
	}
	batch->nrows = n;
	if (!ga_agg_submit(agg, batch, test_wait, ws, st))
		return NULL;
	return ga_agg_finish(agg, test_wait, ws, st);
}

/*
 * Run the request of two keys on n probe rows and check its one group
 * (rows, the sum and count of the value) and the statistics, `unmatched`
 * of the rows being RIGHT or FULL's unmatched build rows.
 */
static void
aj_mk_known(RunReport *rr, GaDevice *dev, AjMk *a, const int64_t (*keys)[2], int n,
			int64_t want_rows, double want_sum, int64_t want_count, int64_t unmatched,
			const char *what)
{
	WaitState	ws = {0, 0, 0};
	GaStatus	st;
	GaAgg	   *agg = ga_agg_create(dev, &a->req, &st);
	const GaAggResult *res = NULL;

	if (agg == NULL ||
		!ga_aggjoin_build(agg, 0, NULL, a->rows, 4, &a->payload, NULL, NULL, &st) ||
		(res = aj_mk_run(agg, keys, n, &ws, &st)) == NULL)
		report(rr, "%s failed: %s", what, st.message);
	else if (res->ngroups != 1)
		report(rr, "%s gave %lld groups, not 1", what, (long long) res->ngroups);
	else
	{
		int64_t		rows = ((const int64_t *) res->values[0])[0];
		double		sum = ((const double *) res->values[1])[0];
		int64_t		count = ((const int64_t *) res->values[2])[0];

		if (rows != want_rows || sum != want_sum || count != want_count)
			report(rr, "%s: %lld rows, sum %g, count %lld; expected %lld, %g, %lld", what,
				   (long long) rows, sum, (long long) count, (long long) want_rows, want_sum,
				   (long long) want_count);
		aj_check_known_stats(rr, agg, a->req.batch_rows, n, want_rows, unmatched, 4, what);
	}
	ga_agg_destroy(agg);
}

/* Give the step of a's request of two keys the filter column < column2. */
static void
aj_mk_filter_lt(AjMk *a, int column, int column2)
{
	GaFilterStep *st = &a->spec.steps[0].filter[a->spec.steps[0].nfilter++];

	st->op = GA_FILTER_COMPARE;
	st->cmp = GA_CMP_LT;
	st->column = column;
	st->column2 = column2;
}

/*
 * Known joins on two keys: probe keys (1, 2) (matching build rows 0 and
 * 3), (1, 3), (2, 1) (one each), (2, 2), (null, 2), (1, null), (3, 1)
 * (none: they share a component with a build key, or hold a matching one
 * under their null), under every join type (RIGHT and FULL add build rows
 * 4 and 5, which have a null key; SEMI gives (1, 2) once), and LEFT, SEMI
 * and ANTI with a filter of their own that (2, 1) fails; then (1, 2) and
 * (3, 1) with the key columns swapped, which join (2, 1) and (1, 3)
 * instead.
 */
int64_t
aj_mk_known_results(GaDevice *dev, GaStrategy strategy, const char *label)
{
	static const int64_t keys[7][2] = {
		{1, 2}, {1, 3}, {2, 1}, {2, 2}, {AJ_MK_NULL, 2}, {1, AJ_MK_NULL}, {3, 1}
	};
	static const int64_t two[2][2] = {{1, 2}, {3, 1}};
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjMk		a;

	aj_mk_init(&a, GA_AGGJOIN_INNER, 16);
	a.req.strategy = strategy;
	aj_mk_known(&rr, dev, &a, keys, 7, 4, 15.0, 4, 0, "INNER on two keys");
	aj_mk_init(&a, GA_AGGJOIN_LEFT, 7);
	a.req.strategy = strategy;
	aj_mk_known(&rr, dev, &a, keys, 7, 8, 15.0, 4, 0, "LEFT on two keys in pieces of 7 rows");
	aj_mk_init(&a, GA_AGGJOIN_ANTI, 16);
	a.req.strategy = strategy;
	aj_mk_known(&rr, dev, &a, keys, 7, 4, 0.0, 0, 0, "ANTI on two keys");
	aj_mk_init(&a, GA_AGGJOIN_RIGHT, 16);
	a.req.strategy = strategy;
	aj_mk_known(&rr, dev, &a, keys, 7, 6, 63.0, 6, 2, "RIGHT on two keys");
	aj_mk_init(&a, GA_AGGJOIN_FULL, 7);
	a.req.strategy = strategy;
	aj_mk_known(&rr, dev, &a, keys, 7, 10, 63.0, 6, 2, "FULL on two keys in pieces of 7 rows");

	aj_mk_init(&a, GA_AGGJOIN_SEMI, 16);
	a.req.strategy = strategy;
	aj_mk_known(&rr, dev, &a, keys, 7, 3, 0.0, 0, 0, "SEMI on two keys");

	/*
	 * ON probe int32 (the row number) < build key 2: (1, 2) of row 0 and
	 * (1, 3) of row 1 pass, (2, 1) of row 2 fails
	 */
	aj_mk_init(&a, GA_AGGJOIN_LEFT, 7);
	a.req.strategy = strategy;
	aj_mk_filter_lt(&a, 2, 4);
	aj_mk_known(&rr, dev, &a, keys, 7, 8, 11.0, 3, 0,
				"LEFT on two keys ON probe int32 < build key 2 in pieces of 7 rows");
	aj_mk_init(&a, GA_AGGJOIN_SEMI, 16);
	a.req.strategy = strategy;
	aj_mk_filter_lt(&a, 2, 4);
	aj_mk_known(&rr, dev, &a, keys, 7, 2, 0.0, 0, 0,
				"SEMI on two keys ON probe int32 < build key 2");
	aj_mk_init(&a, GA_AGGJOIN_ANTI, 16);
	a.req.strategy = strategy;
	aj_mk_filter_lt(&a, 2, 4);
	aj_mk_known(&rr, dev, &a, keys, 7, 5, 0.0, 0, 0,
				"ANTI on two keys ON probe int32 < build key 2");
	aj_mk_init(&a, GA_AGGJOIN_INNER, 16);
	a.req.strategy = strategy;
	aj_mk_known(&rr, dev, &a, two, 2, 2, 9.0, 2, 0, "INNER of (1, 2), (3, 1)");
	a.spec.steps[0].key_columns[0] = 1;
	a.spec.steps[0].key_columns[1] = 0;
	aj_mk_known(&rr, dev, &a, two, 2, 2, 6.0, 2, 0, "INNER of (1, 2), (3, 1) on swapped keys");
	return rr.mismatches;
}

/* Expect ga_agg_create to accept a's request of several keys. */
static void
aj_mk_expect_accepted(RunReport *rr, GaDevice *dev, const AjMk *a, const char *what)
{
	aj_expect_request_accepted(rr, dev, &a->req, what);
}

/*
 * Malformed steps of several keys and their builds: GA_ERR_INVALID; the
 * fields a step of one key or of several does not use are ignored.
 */
int64_t
aj_mk_invalid(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjMk		a;
	GaStatus	st;
	GaAgg	   *agg;

#define MK_REFUSE(what, change) \
	do { aj_mk_init(&a, GA_AGGJOIN_INNER, 16); change; \
		 aj_expect_request_refused(&rr, dev, &a.req, (what)); } while (0)

	MK_REFUSE("GA_AGG_MAX_JOIN_KEYS + 1 keys", a.spec.steps[0].nkeys = GA_AGG_MAX_JOIN_KEYS + 1);
	MK_REFUSE("-1 keys", a.spec.steps[0].nkeys = -1);
	MK_REFUSE("a key column beyond the columns", a.spec.steps[0].key_columns[1] = AJ_MK_COLUMNS);
	MK_REFUSE("a key column -1", a.spec.steps[0].key_columns[1] = -1);
	MK_REFUSE("a key column of the step's own build side", a.spec.steps[0].key_columns[0] = 3);
	MK_REFUSE("an int32 key column", a.spec.steps[0].key_columns[0] = 2);
	MK_REFUSE("a probe column as a build key column", a.spec.steps[0].build_key_columns[0] = 0);
	MK_REFUSE("an int32 build key column", a.spec.steps[0].build_key_columns[1] = 6);
	MK_REFUSE("a build key column beyond the columns",
			  a.spec.steps[0].build_key_columns[1] = AJ_MK_COLUMNS);
	MK_REFUSE("a build key column -1", a.spec.steps[0].build_key_columns[0] = -1);
	MK_REFUSE("a key column of a later step",
			  (a.spec.nsteps = 2, a.spec.steps[1].key_column = 0, a.from_build[7] = 2,
			   a.spec.steps[0].key_columns[1] = 7));
	MK_REFUSE("a build key column of a later step",
			  (a.spec.nsteps = 2, a.spec.steps[1].key_column = 0, a.from_build[7] = 2,
			   a.spec.steps[0].build_key_columns[1] = 7));
	MK_REFUSE("a build key column of an earlier step",
			  (a.spec.nsteps = 2, a.spec.steps[1] = a.spec.steps[0],
			   a.spec.steps[0].nkeys = 0, a.spec.steps[0].key_column = 0));
#undef MK_REFUSE

	aj_mk_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.steps[0].key_column = 5;	/* a float64, ignored */
	aj_mk_expect_accepted(&rr, dev, &a, "a step of two keys whose key_column is a float64");
	aj_mk_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.steps[0].nkeys = 1;
	a.spec.steps[0].key_column = 0;
	a.spec.steps[0].key_columns[0] = 99;
	a.spec.steps[0].build_key_columns[1] = -4;
	aj_mk_expect_accepted(&rr, dev, &a, "a step of one key with garbage in key_columns");
	aj_mk_init(&a, GA_AGGJOIN_INNER, 16);
	a.spec.steps[0].nkeys = 4;
	a.spec.steps[0].key_columns[2] = 7;
	a.spec.steps[0].key_columns[3] = 0;
	a.spec.steps[0].build_key_columns[2] = 4;
	a.spec.steps[0].build_key_columns[3] = 3;
	aj_mk_expect_accepted(&rr, dev, &a, "a step of four keys, columns used twice");

	/* Builds of a step of several keys. */
	aj_mk_init(&a, GA_AGGJOIN_INNER, 16);
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
	{
		report(&rr, "create of a step of two keys failed: %s", st.message);
		return rr.mismatches;
	}
	aj_expect(&rr, ga_aggjoin_build(agg, 0, a.build_keys[0], a.rows, 4, &a.payload, NULL, NULL,
									 &st),
			  &st, GA_ERR_INVALID, "keys given for a step of two keys");
	aj_expect(&rr, ga_aggjoin_build(agg, 0, NULL, NULL, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "listed rows without an array");
	a.rows[2] = 4;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, NULL, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a listed row with a null first build key");
	a.rows[2] = 5;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, NULL, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a listed row with a null second build key");
	a.rows[2] = 2;
	a.columns[4].values = NULL;
	aj_expect(&rr, ga_aggjoin_build(agg, 0, NULL, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a build key column without values");
	a.columns[4].values = a.build_keys[1];
	if (!ga_aggjoin_build(agg, 0, NULL, a.rows, 4, &a.payload, NULL, NULL, &st))
		report(&rr, "a valid build of two keys after refused ones failed: %s", st.message);
	aj_expect(&rr, ga_aggjoin_build(agg, 0, NULL, a.rows, 4, &a.payload, NULL, NULL, &st),
			  &st, GA_ERR_INVALID, "a second build of a step of two keys");
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * A wait callback that says stop during the hashing of a build of 300K
 * rows of two keys: the build fails with GA_ERR_CANCELLED (device.c asks
 * it whatever the device), and so do the next batch and the finish.
 */
int64_t
aj_mk_cancel(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	WaitState	ws = {0, 1, 0};
	AjMk		a;
	GaStatus	st;
	GaAgg	   *agg;
	int64_t		n = 300000;
	int64_t    *keys = malloc(sizeof(int64_t) * n);
	uint32_t   *rows = malloc(sizeof(uint32_t) * n);
	double	   *vals = calloc((size_t) n, sizeof(double));
	int64_t		i;
	int			ok;

	for (i = 0; i < n; i++)
	{
		keys[i] = i % 1000;
		rows[i] = (uint32_t) i;
	}
	aj_mk_init(&a, GA_AGGJOIN_INNER, 1 << 16);
	a.req.strategy = strategy;
	a.columns[3].values = a.columns[4].values = keys;
	a.columns[3].has_nulls = a.columns[4].has_nulls = 0;
	a.columns[5].values = vals;
	a.payload.nrows = a.payload.capacity = n;
	agg = ga_agg_create(dev, &a.req, &st);
	if (agg == NULL)
		report(&rr, "create failed: %s", st.message);
	else
	{
		ok = ga_aggjoin_build(agg, 0, NULL, rows, n, &a.payload, test_wait, &ws, &st);
		if (ws.cancels == 0)
			report(&rr, "the build of %lld rows of two keys did not ask the wait callback",
				   (long long) n);
		aj_expect(&rr, ok, &st, GA_ERR_CANCELLED, "a cancelled build of two keys");
		aj_expect(&rr, ga_agg_next_batch(agg, NULL, NULL, &st) != NULL, &st, GA_ERR_CANCELLED,
				  "a batch after a cancelled build of two keys");
		aj_expect(&rr, ga_agg_finish(agg, NULL, NULL, &st) != NULL, &st, GA_ERR_CANCELLED,
				  "a finish after a cancelled build of two keys");
	}
	ga_agg_destroy(agg);
	free(keys);
	free(rows);
	free(vals);
	return rr.mismatches;
}

/*
 * Whether n rows' hashes are equal exactly where their keys of three
 * columns are (every pair compared: the rows are few).
 */
static int
aj_mk_hashes_exact(const int64_t (*tuples)[3], const int64_t *hashes, int64_t n)
{
	int64_t		i,
				j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if ((hashes[i] == hashes[j]) !=
				(memcmp(tuples[i], tuples[j], sizeof(tuples[i])) == 0))
				return 0;
	return 1;
}

/*
 * The seed choice of join_key.c, directly: the hash of a key depends on
 * its order and on the seed; the collision check sees equal hashes of
 * different keys (hashes made to collide) and accepts equal hashes of
 * equal keys; and the hashes of a build with many duplicates come out
 * under the first seed, each the hash of its row's key, equal exactly
 * where the keys are.
 */
int64_t
aj_mk_seed_choice(const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "aggjoin"};
	AjMk		a;
	GaStatus	st;
	int			columns[2] = {3, 4};
	int64_t		k12[2] = {1, 2},
				k21[2] = {2, 1},
				k13[2] = {1, 3};
	enum
	{
		NROWS = 3000
	};
	static int64_t tuples[NROWS][3];
	static int64_t values[3][NROWS];
	static uint32_t rows[NROWS];
	static int64_t hashes[NROWS];
	GaColumn	cols[3];
	GaBatch		payload;
	int			three[3] = {0, 1, 2};
	uint64_t	seed = 0;
	Rng			rng;
	int64_t		i;

	if (ga_join_key_hash(1, k12, 2) == ga_join_key_hash(1, k21, 2) ||
		ga_join_key_hash(1, k12, 2) == ga_join_key_hash(1, k13, 2) ||
		ga_join_key_hash(1, k12, 2) == ga_join_key_hash(2, k12, 2) ||
		ga_join_key_hash(1, k12, 2) != ga_join_key_hash(1, k12, 2) ||
		ga_join_key_seed(0) == ga_join_key_seed(1))
		report(&rr, "the hash of a key of several columns ignores their order, a value or the seed");

	aj_mk_init(&a, GA_AGGJOIN_INNER, 16);
	/* rows 3, 0, 2, 1: keys (1, 2), (1, 2), (2, 1), (1, 3) */
	if (ga_join_key_collision_free(&a.payload, columns, 2, a.rows,
								   (const int64_t[]) {5, 5, 6, 7}, 4) != 1)
		report(&rr, "equal hashes of equal keys were taken for a collision");
	if (ga_join_key_collision_free(&a.payload, columns, 2, a.rows,
								   (const int64_t[]) {5, 6, 5, 7}, 4) != 0)
		report(&rr, "equal hashes of keys (1, 2) and (2, 1) were not seen as a collision");
	if (ga_join_key_collision_free(&a.payload, columns, 2, a.rows,
								   (const int64_t[]) {9, 9, 9, 9}, 4) != 0)
		report(&rr, "one hash for every key was not seen as a collision");
	if (ga_join_key_collision_free(&a.payload, columns, 2, a.rows,
								   (const int64_t[]) {5, 6, 7, 6}, 4) != 0)
		report(&rr, "equal hashes of keys (1, 2) and (1, 3) were not seen as a collision");

	rng_seed(&rng, 77);
	memset(cols, 0, sizeof(cols));
	for (i = 0; i < NROWS; i++)
	{
		int			k;

		for (k = 0; k < 3; k++)
			tuples[i][k] = values[k][i] = rng_range(&rng, -3, 3);
		rows[i] = (uint32_t) (NROWS - 1 - i);
	}
	for (i = 0; i < 3; i++)
	{
		cols[i].type = GA_TYPE_INT64;
		cols[i].values = values[i];
	}
	payload.nrows = payload.capacity = NROWS;
	payload.ncolumns = 3;
	payload.columns = cols;
	if (!ga_join_key_hash_build(&payload, three, 3, rows, NROWS, hashes, &seed, NULL, NULL, &st))
		report(&rr, "hashing a build of three keys failed: %s", st.message);
	else
	{
		static int64_t listed[NROWS][3];

		if (seed != ga_join_key_seed(0))
			report(&rr, "a build of 343 keys needed more than one seed");
		for (i = 0; i < NROWS; i++)
		{
			memcpy(listed[i], tuples[rows[i]], sizeof(listed[i]));
			if (hashes[i] != ga_join_key_hash(seed, listed[i], 3))
				report(&rr, "the hash of listed row %lld is not that of its key", (long long) i);
		}
		if (!aj_mk_hashes_exact((const int64_t (*)[3]) listed, hashes, NROWS))
			report(&rr, "the hashes of a build of three keys are not equal exactly where the keys are");
		if (ga_join_key_collision_free(&payload, three, 3, rows, hashes, NROWS) != 1)
			report(&rr, "the chosen hashes were taken for a collision");
	}
	return rr.mismatches;
}
