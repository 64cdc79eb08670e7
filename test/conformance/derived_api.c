/*-------------------------------------------------------------------------
 *
 * derived_api.c
 *	  The derived column suite's API checks on one device: every malformed
 *	  derived column must make ga_agg_create fail with GA_ERR_INVALID (and
 *	  never crash), and the edge requests that are well formed must be
 *	  accepted: garbage in the fields an operation does not use, no derived
 *	  columns and no array, operands and NaN flags on a join's build side,
 *	  and GA_MAX_DERIVED derived columns sharing one program, which are
 *	  also run on three rows.
 *
 *-------------------------------------------------------------------------
 */
#include "derived.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The base request's columns: a key, operands, a NaN flag, derived
 * columns, columns no operand may be, and spare ones.
 */
enum
{
	C_KEY,						/* int64, the grouping key */
	C_OP16,						/* int16 operand */
	C_OP64,						/* int64 operand */
	C_NAN,						/* NaN flag of C_OP16 */
	C_LIMB,						/* derived: limb 0 of P */
	C_FLAG,						/* derived: NaN flag of P */
	C_F64,						/* float64 */
	C_I8,						/* int8 */
	C_VALUE,					/* derived: int64 value of Q */
	C_OP32,						/* int32 operand */
	C_BUILD,					/* int64, a build column in the join checks */
	C_SPARE32,					/* int32, unused */
	C_SPARE_NONE,				/* validity-only, unused */
	C_SPARE64,					/* int64, unused */
	API_NCOLUMNS
};

static const GaValueType api_types[API_NCOLUMNS] = {
	GA_TYPE_INT64, GA_TYPE_INT16, GA_TYPE_INT64, GA_TYPE_NONE, GA_TYPE_INT64, GA_TYPE_NONE,
	GA_TYPE_FLOAT64, GA_TYPE_INT8, GA_TYPE_INT64, GA_TYPE_INT32, GA_TYPE_INT64,
	GA_TYPE_INT32, GA_TYPE_NONE, GA_TYPE_INT64
};

/* The base request's pieces, copied and modified by each check. */
typedef struct ApiRequest
{
	GaAggRequest req;
	int			key;
	GaAggSpec	aggs[3];
	GaDerivedColumn derived[3];
	GaAggJoinSpec join;
	uint8_t		from_build[API_NCOLUMNS];
} ApiRequest;

/*
 * The base request: P = op16 (NaN flag C_NAN) * op64, its limb 0 and NaN
 * flag; Q = op32 + 5, its value; grouped by C_KEY.
 */
static void
api_base(ApiRequest *a)
{
	GaDerivedColumn *p = &a->derived[0];
	int			d;

	memset(a, 0, sizeof(*a));
	p->column = C_LIMB;
	p->part = GA_DERIVED_LIMB;
	p->nsteps = 3;
	dv_set_step(&p->steps[0], GA_EXPR_COLUMN, C_OP16, C_NAN, 0, 0);
	dv_set_step(&p->steps[1], GA_EXPR_COLUMN, C_OP64, -1, 0, 0);
	dv_set_step(&p->steps[2], GA_EXPR_MUL, 0, -1, 0, 0);
	a->derived[1] = *p;
	a->derived[1].column = C_FLAG;
	a->derived[1].part = GA_DERIVED_NAN;
	a->derived[2].column = C_VALUE;
	a->derived[2].part = GA_DERIVED_INT64;
	a->derived[2].nsteps = 3;
	dv_set_step(&a->derived[2].steps[0], GA_EXPR_COLUMN, C_OP32, -1, 0, 0);
	dv_set_step(&a->derived[2].steps[1], GA_EXPR_CONST, 0, -1, 0, 5);
	dv_set_step(&a->derived[2].steps[2], GA_EXPR_ADD, 0, -1, 0, 0);
	a->key = C_KEY;
	a->aggs[0].op = GA_AGG_SUM_INT, a->aggs[0].column = C_LIMB;
	a->aggs[1].op = GA_AGG_COUNT, a->aggs[1].column = C_FLAG;
	a->aggs[2].op = GA_AGG_SUM_INT, a->aggs[2].column = C_VALUE;
	for (d = 0; d < 3; d++)
		a->aggs[d].column2 = -1;
	a->req.ncolumns = API_NCOLUMNS;
	a->req.column_types = api_types;
	a->req.nkeys = 1;
	a->req.key_columns = &a->key;
	a->req.naggs = 3;
	a->req.aggs = a->aggs;
	a->req.batch_rows = 16;
	a->req.estimated_groups = 4;
	a->req.nderived = 3;
	a->req.derived = a->derived;
}

/* Make the request aggjoin: one LEFT step keyed by key_column, C_BUILD from the build side. */
static void
api_join(ApiRequest *a, int key_column)
{
	a->join.nsteps = 1;
	a->join.steps[0].type = GA_AGGJOIN_LEFT;
	a->join.steps[0].key_column = key_column;
	a->from_build[C_BUILD] = 1;
	a->join.from_build = a->from_build;
	a->req.join = &a->join;
}

/* Create and destroy; report unless the outcome is the expected one. */
static void
api_expect(GaDevice *dev, const ApiRequest *a, int accept, const char *what, RunReport *rr)
{
	GaStatus	st;
	GaAgg	   *agg = ga_agg_create(dev, &a->req, &st);

	if (accept && agg == NULL)
		report(rr, "%s was refused: code %d: %s", what, st.code, st.message);
	else if (!accept && (agg != NULL || st.code != GA_ERR_INVALID))
		report(rr, "%s was not refused as invalid (code %d: %s)", what,
			   agg != NULL ? 0 : st.code, agg != NULL ? "accepted" : st.message);
	else if (!accept && strlen(st.message) < 10)
		report(rr, "%s was refused without a message", what);
	ga_agg_destroy(agg);
}

/* Every malformed derived column, one at a time. */
static void
api_refused(GaDevice *dev, RunReport *rr)
{
	ApiRequest	a;
	GaDerivedColumn many[GA_MAX_DERIVED + 1];
	int			i;

#define REFUSE(what, change) \
	do { api_base(&a); change; api_expect(dev, &a, 0, (what), rr); } while (0)

	REFUSE("a negative number of derived columns", a.req.nderived = -1);
	for (i = 0; i < GA_MAX_DERIVED + 1; i++)
	{
		many[i] = a.derived[0];
		many[i].column = i;
	}
	REFUSE("more than GA_MAX_DERIVED derived columns",
		   (a.req.nderived = GA_MAX_DERIVED + 1, a.req.derived = many));
	REFUSE("derived columns without an array", a.req.derived = NULL);
	REFUSE("a derived column -1", a.derived[0].column = -1);
	REFUSE("a derived column past the last", a.derived[0].column = API_NCOLUMNS);
	REFUSE("a column derived twice", a.derived[2].column = C_LIMB);
	REFUSE("a limb in a validity-only column", a.derived[0].column = C_SPARE_NONE);
	REFUSE("a NaN flag in an int64 column", a.derived[1].column = C_SPARE64);
	REFUSE("an int64 value in an int32 column", a.derived[2].column = C_SPARE32);
	REFUSE("limb -1", a.derived[0].limb = -1);
	REFUSE("limb 4", a.derived[0].limb = 4);
	REFUSE("an unknown part", a.derived[0].part = (GaDerivedPart) 7);
	REFUSE("a program of no steps", a.derived[0].nsteps = 0);
	REFUSE("a program of 25 steps", a.derived[0].nsteps = GA_EXPR_MAX_STEPS + 1);
	REFUSE("a negative number of steps", a.derived[0].nsteps = -3);
	REFUSE("an ADD on an empty stack",
		   (a.derived[0].nsteps = 1, dv_set_step(&a.derived[0].steps[0], GA_EXPR_ADD, 0, -1, 0, 0)));
	REFUSE("a MUL on one value", a.derived[0].steps[1].op = GA_EXPR_SCALE);
	REFUSE("a SCALE on an empty stack",
		   (a.derived[0].nsteps = 2, dv_set_step(&a.derived[0].steps[0], GA_EXPR_SCALE, 0, -1, 2, 0),
			dv_set_step(&a.derived[0].steps[1], GA_EXPR_CONST, 0, -1, 0, 1)));
	api_base(&a);
	for (i = 0; i < 9; i++)
		dv_set_step(&a.derived[0].steps[i], GA_EXPR_CONST, 0, -1, 0, i);
	for (i = 9; i < 17; i++)
		dv_set_step(&a.derived[0].steps[i], GA_EXPR_ADD, 0, -1, 0, 0);
	a.derived[0].nsteps = 17;
	api_expect(dev, &a, 0, "a stack of nine values", rr);
	REFUSE("a program leaving two values", a.derived[0].nsteps = 2);
	REFUSE("a program leaving three values",
		   (a.derived[0].nsteps = 3, a.derived[0].steps[2].op = GA_EXPR_CONST));
	REFUSE("an operand column -1", a.derived[0].steps[0].column = -1);
	REFUSE("an operand column past the last", a.derived[0].steps[1].column = API_NCOLUMNS);
	REFUSE("an int8 operand", a.derived[0].steps[0].column = C_I8);
	REFUSE("a float64 operand", a.derived[0].steps[0].column = C_F64);
	REFUSE("a validity-only operand", a.derived[0].steps[1].column = C_SPARE_NONE);
	REFUSE("a derived operand", a.derived[0].steps[1].column = C_VALUE);
	REFUSE("an operand of itself", a.derived[2].steps[0].column = C_VALUE);
	REFUSE("a NaN flag column -2", a.derived[0].steps[0].nan_column = -2);
	REFUSE("a NaN flag column past the last", a.derived[0].steps[0].nan_column = API_NCOLUMNS);
	REFUSE("an int16 NaN flag column", a.derived[0].steps[0].nan_column = C_OP16);
	REFUSE("a derived NaN flag column", a.derived[0].steps[1].nan_column = C_FLAG);
	REFUSE("SCALE by 10^-1",
		   (a.derived[2].nsteps = 4,
			dv_set_step(&a.derived[2].steps[3], GA_EXPR_SCALE, 0, -1, -1, 0)));
	REFUSE("SCALE by 10^39",
		   (a.derived[2].nsteps = 4,
			dv_set_step(&a.derived[2].steps[3], GA_EXPR_SCALE, 0, -1, 39, 0)));
	REFUSE("an unknown operation", a.derived[2].steps[2].op = (GaExprOp) 99);
	REFUSE("a derived grouping key", a.key = C_LIMB);
	REFUSE("a derived join key", api_join(&a, C_VALUE));
	REFUSE("a derived key column of a step of several keys",
		   (api_join(&a, C_SPARE64), a.join.steps[0].nkeys = 2,
			a.join.steps[0].key_columns[0] = C_SPARE64, a.join.steps[0].key_columns[1] = C_VALUE,
			a.join.steps[0].build_key_columns[0] = a.join.steps[0].build_key_columns[1] = C_BUILD));
	REFUSE("a derived column from a build side",
		   (api_join(&a, C_SPARE64), a.from_build[C_LIMB] = 1));
#undef REFUSE
}

/* Requests at the edges that are well formed. */
static void
api_accepted(GaDevice *dev, RunReport *rr)
{
	ApiRequest	a;
	int			d,
				s;

	api_base(&a);
	api_expect(dev, &a, 1, "the base request", rr);

	for (d = 0; d < 3; d++)
		for (s = 0; s < a.derived[d].nsteps; s++)
		{
			GaExprStep *step = &a.derived[d].steps[s];

			if (step->op != GA_EXPR_COLUMN)
				step->column = -99 - s, step->nan_column = 12345;
			if (step->op != GA_EXPR_SCALE)
				step->power = -7;
			if (step->op != GA_EXPR_CONST)
				step->constant = INT64_MIN + s;
		}
	a.derived[0].limb = 3;
	a.derived[1].limb = 99;		/* a NaN flag has no limb */
	a.derived[2].limb = -5;
	api_expect(dev, &a, 1, "garbage in fields an operation does not use", rr);

	api_base(&a);
	a.req.nderived = 0;
	a.req.derived = NULL;
	a.aggs[0].column = C_OP64;
	a.aggs[1].column = C_NAN;
	a.aggs[2].column = C_OP32;
	api_expect(dev, &a, 1, "no derived columns and no array", rr);

	api_base(&a);
	a.req.naggs = 0;
	api_expect(dev, &a, 1, "derived columns nobody reads", rr);

	api_base(&a);
	api_join(&a, C_SPARE64);
	a.from_build[C_SPARE_NONE] = 1;
	a.derived[0].steps[1].column = C_BUILD;
	a.derived[0].steps[1].nan_column = C_SPARE_NONE;
	a.derived[1] = a.derived[0];
	a.derived[1].column = C_FLAG;
	a.derived[1].part = GA_DERIVED_NAN;
	api_expect(dev, &a, 1, "an operand and a NaN flag on a join's build side", rr);

	/* a step of several keys ignores its key_column, derived or not */
	api_base(&a);
	api_join(&a, C_VALUE);
	a.join.steps[0].nkeys = 2;
	a.join.steps[0].key_columns[0] = C_SPARE64;
	a.join.steps[0].key_columns[1] = C_KEY;
	a.join.steps[0].build_key_columns[0] = a.join.steps[0].build_key_columns[1] = C_BUILD;
	api_expect(dev, &a, 1, "a step of several keys whose unused key_column is derived", rr);
}

/*
 * GA_MAX_DERIVED derived columns, each limb 0 of x * x (one program), each
 * summed, over x = 1, 2, 3 with a null and a NaN: every sum must be 14.
 */
static void
api_most_derived(GaDevice *dev, RunReport *rr)
{
	GaValueType types[GA_MAX_DERIVED + 2];
	GaDerivedColumn derived[GA_MAX_DERIVED];
	GaAggSpec	aggs[GA_MAX_DERIVED];
	GaAggRequest req;
	GaStatus	st;
	GaAgg	   *agg;
	GaBatch    *b;
	const GaAggResult *res;
	static const int64_t x[] = {1, 2, 3, 77, 99};
	int			d,
				r;

	memset(&req, 0, sizeof(req));
	types[0] = GA_TYPE_INT64;
	types[1] = GA_TYPE_NONE;
	for (d = 0; d < GA_MAX_DERIVED; d++)
	{
		types[d + 2] = GA_TYPE_INT64;
		memset(&derived[d], 0, sizeof(derived[d]));
		derived[d].column = d + 2;
		derived[d].part = GA_DERIVED_LIMB;
		derived[d].nsteps = 3;
		dv_set_step(&derived[d].steps[0], GA_EXPR_COLUMN, 0, 1, 0, 0);
		dv_set_step(&derived[d].steps[1], GA_EXPR_COLUMN, 0, -1, 0, 0);
		dv_set_step(&derived[d].steps[2], GA_EXPR_MUL, 0, -1, 0, 0);
		aggs[d].op = GA_AGG_SUM_INT;
		aggs[d].column = d + 2;
		aggs[d].column2 = -1;
	}
	req.ncolumns = GA_MAX_DERIVED + 2;
	req.column_types = types;
	req.naggs = GA_MAX_DERIVED;
	req.aggs = aggs;
	req.batch_rows = 8;
	req.nderived = GA_MAX_DERIVED;
	req.derived = derived;
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(rr, "GA_MAX_DERIVED derived columns were refused: code %d: %s", st.code,
			   st.message);
		return;
	}
	b = ga_agg_next_batch(agg, NULL, NULL, &st);
	if (b == NULL)
	{
		report(rr, "next_batch failed: code %d: %s", st.code, st.message);
		ga_agg_destroy(agg);
		return;
	}
	for (r = 0; r < 5; r++)
	{
		((int64_t *) b->columns[0].values)[r] = x[r];
		if (r != 4)
			ga_column_set_null(&b->columns[1], r);	/* row 4: NaN */
	}
	ga_column_set_null(&b->columns[0], 3);	/* row 3: null */
	b->nrows = 5;
	if (!ga_agg_submit(agg, b, NULL, NULL, &st) ||
		(res = ga_agg_finish(agg, NULL, NULL, &st)) == NULL)
		report(rr, "GA_MAX_DERIVED derived columns failed: code %d: %s", st.code, st.message);
	else
		for (d = 0; d < GA_MAX_DERIVED; d++)
		{
			GaInt128	v = ((const GaInt128 *) res->values[d])[0];

			if (v.lo != 14 || v.hi != 0)
			{
				report(rr, "derived column %d of GA_MAX_DERIVED sums to %llu (high word %lld), expected 14",
					   d, (unsigned long long) v.lo, (long long) v.hi);
				break;
			}
		}
	ga_agg_destroy(agg);
}

/* All the checks on one device; returns the problems found. */
int64_t
derived_api_checks(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, "derived"};

	api_refused(dev, &rr);
	api_accepted(dev, &rr);
	api_most_derived(dev, &rr);
	return rr.mismatches;
}
