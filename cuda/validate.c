/*-------------------------------------------------------------------------
 *
 * validate.c
 *	  The checks a request passes before any device sees it (validate.h),
 *	  so that both devices can trust it: an aggregation's columns, keys and
 *	  aggregates, its join spec (steps, keys, filters) and derived columns,
 *	  and a hash join's request.  Also the derived-column plan the devices
 *	  keep: the request's derived columns grouped by program.
 *
 * Every check names what is wrong in a full sentence (GA_ERR_INVALID) and
 * reads only the fields the request's shape says are there: a field that
 * an operation does not use is never read.
 *
 *-------------------------------------------------------------------------
 */
#include "validate.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest probe batch capacity: keeps every size computation in range. */
#define GA_JOIN_MAX_PROBE_BATCH_ROWS (INT64_C(1) << 40)

/* Whether a column type holds integers (int8 .. int64). */
static int
type_is_integer(GaValueType type)
{
	return type >= GA_TYPE_INT8 && type <= GA_TYPE_INT64;
}

/* Whether a column type holds floats (float32, float64). */
static int
type_is_float(GaValueType type)
{
	return type == GA_TYPE_FLOAT32 || type == GA_TYPE_FLOAT64;
}

/*
 * Check a key column `key` of join step s (0-based): a column of
 * GA_TYPE_INT64 (or, in a hashed step, GA_TYPE_STRING: strings) that the
 * step's rows already have, a probe column or a build column of an
 * earlier step.
 */
static int
join_key_column_validate(const GaAggRequest *request, int s, int key, int strings,
						 GaStatus *status)
{
	const GaAggJoinSpec *join = request->join;

	if (key < 0 || key >= request->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the key column %d of join step %d does not exist",
							 key, s + 1);
	if (join->from_build[key] > s)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the key column %d of join step %d is a build column of step %d, not a probe column or a build column of an earlier step",
							 key, s + 1, (int) join->from_build[key]);
	if (request->column_types[key] != GA_TYPE_INT64 &&
		!(strings && request->column_types[key] == GA_TYPE_STRING))
		return ga_status_set(status, GA_ERR_INVALID,
							 "the key column %d of join step %d is not of type int64%s",
							 key, s + 1, strings ? " or string" : "");
	return 1;
}

/*
 * Check the keys of join step s (0-based): its key_column on its own;
 * hashed (ga_join_step_hashed), each of its key_columns as a key_column
 * (int64 or string) and each of its build_key_columns a build column of
 * the step itself of its partner's type.
 */
static int
join_step_keys_validate(const GaAggRequest *request, int s, GaStatus *status)
{
	const GaAggJoinStep *step = &request->join->steps[s];
	int			i;

	if (step->nkeys < 0 || step->nkeys > GA_AGG_MAX_JOIN_KEYS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "join step %d of the aggjoin has %d keys; 0 to %d are supported",
							 s + 1, step->nkeys, GA_AGG_MAX_JOIN_KEYS);
	if (!ga_join_step_hashed(step))
		return join_key_column_validate(request, s, step->key_column, 0, status);
	for (i = 0; i < step->nkeys; i++)
	{
		int			build_key = step->build_key_columns[i];

		if (!join_key_column_validate(request, s, step->key_columns[i], 1, status))
			return 0;
		if (build_key < 0 || build_key >= request->ncolumns)
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d does not exist",
								 build_key, s + 1);
		if (request->join->from_build[build_key] != s + 1)
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d is not a build column of that step (its from_build is %d)",
								 build_key, s + 1, (int) request->join->from_build[build_key]);
		if (request->column_types[build_key] != request->column_types[step->key_columns[i]])
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d is not of the type of its key column %d",
								 build_key, s + 1, step->key_columns[i]);
	}
	return 1;
}

/* Whether column c of a request is filled by one of its derived columns. */
static int	column_is_derived(const GaAggRequest *request, int c);

/* Whether a column type is an integer one (a filter compares it as int64). */
static int
filter_type_is_integer(GaValueType type)
{
	return type == GA_TYPE_INT8 || type == GA_TYPE_INT16 || type == GA_TYPE_INT32 ||
		type == GA_TYPE_INT64;
}

/*
 * Check filter step s's column: one of the request's, not derived, of a
 * type with values, and from a side the filter may read (from_build at
 * most max_side).  `what` names the filter in messages.
 */
static int
filter_column_validate(const GaAggRequest *request, const char *what, int max_side, int s,
					   int column, GaStatus *status)
{
	GaValueType type;

	if (column < 0 || column >= request->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of %s reads column %d, which does not exist",
							 s, what, column);
	if (column_is_derived(request, column))
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of %s reads column %d, which is derived",
							 s, what, column);
	if (request->join->from_build[column] > max_side)
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of %s reads column %d, a build column of join step %d, which comes later",
							 s, what, column, (int) request->join->from_build[column]);
	type = request->column_types[column];
	if (!filter_type_is_integer(type) && type != GA_TYPE_FLOAT32 && type != GA_TYPE_FLOAT64)
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of %s reads column %d, which has no integer or float values",
							 s, what, column);
	return 1;
}

/*
 * Check a filter program (gpuagg_device.h) of nfilter steps, named `what`
 * in messages, whose columns come from sides 0 .. max_side: 0 ..
 * GA_FILTER_MAX_STEPS known steps; BOOL over an int8 column, COMPARE of
 * two integer or two float columns by a known comparison; a stack that
 * never underflows, never holds more than GA_FILTER_MAX_DEPTH values and
 * ends with one.  The join's filter and every step's own use it.
 */
static int
filter_program_validate(const GaAggRequest *request, const GaFilterStep *filter, int nfilter,
						const char *what, int max_side, GaStatus *status)
{
	int			depth = 0;
	int			s;

	if (nfilter < 0 || nfilter > GA_FILTER_MAX_STEPS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "%s has %d steps; 0 to %d are supported",
							 what, nfilter, GA_FILTER_MAX_STEPS);
	for (s = 0; s < nfilter; s++)
	{
		const GaFilterStep *step = &filter[s];

		switch (step->op)
		{
			case GA_FILTER_BOOL:
				if (!filter_column_validate(request, what, max_side, s, step->column, status))
					return 0;
				if (request->column_types[step->column] != GA_TYPE_INT8)
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of %s reads column %d as a boolean, but it is not an int8 column",
										 s, what, step->column);
				depth++;
				break;
			case GA_FILTER_COMPARE:
				if (!filter_column_validate(request, what, max_side, s, step->column, status) ||
					!filter_column_validate(request, what, max_side, s, step->column2, status))
					return 0;
				if (filter_type_is_integer(request->column_types[step->column]) !=
					filter_type_is_integer(request->column_types[step->column2]))
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of %s compares an integer column with a float column",
										 s, what);
				if (step->cmp < GA_CMP_LT || step->cmp > GA_CMP_GT)
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of %s has an unknown comparison %d",
										 s, what, (int) step->cmp);
				depth++;
				break;
			case GA_FILTER_AND:
			case GA_FILTER_OR:
				if (depth < 2)
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of %s needs two values, but the stack holds %d",
										 s, what, depth);
				depth--;
				break;
			case GA_FILTER_NOT:
				if (depth < 1)
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of %s needs a value, but the stack is empty",
										 s, what);
				break;
			default:
				return ga_status_set(status, GA_ERR_INVALID,
									 "step %d of %s has an unknown operation %d",
									 s, what, (int) step->op);
		}
		if (depth > GA_FILTER_MAX_DEPTH)
			return ga_status_set(status, GA_ERR_INVALID,
								 "%s holds more than %d values at step %d",
								 what, GA_FILTER_MAX_DEPTH, s);
	}
	if (nfilter > 0 && depth != 1)
		return ga_status_set(status, GA_ERR_INVALID,
							 "%s leaves %d values; it must leave one", what, depth);
	return 1;
}

/*
 * Check the join's filter and every step's own (filter_program_validate):
 * a step's reads the probe side and the build sides up to its own, and
 * only an INNER, LEFT, SEMI or ANTI step has one.
 */
static int
join_filter_validate(const GaAggRequest *request, GaStatus *status)
{
	const GaAggJoinSpec *join = request->join;
	int			s;

	if (!filter_program_validate(request, join->filter, join->nfilter, "the join's filter",
								 join->nsteps, status))
		return 0;
	for (s = 0; s < join->nsteps; s++)
	{
		const GaAggJoinStep *step = &join->steps[s];
		char		what[64];

		if (step->nfilter == 0)
			continue;
		snprintf(what, sizeof(what), "join step %d's filter", s + 1);
		if (step->type == GA_AGGJOIN_RIGHT || step->type == GA_AGGJOIN_FULL)
			return ga_status_set(status, GA_ERR_INVALID,
								 "join step %d is a right or full join, which takes no filter of its own",
								 s + 1);
		if (!filter_program_validate(request, step->filter, step->nfilter, what, s + 1, status))
			return 0;
	}
	return 1;
}

/*
 * Check a request's join spec: 1 .. GA_AGG_MAX_JOIN_STEPS steps of known
 * types, a from_build entry (0 .. nsteps) per column, every step's keys (see
 * join_step_keys_validate) and the filter (join_filter_validate).
 */
static int
join_spec_validate(const GaAggRequest *request, GaStatus *status)
{
	const GaAggJoinSpec *join = request->join;
	int			i,
				s;

	if (join->nsteps < 1 || join->nsteps > GA_AGG_MAX_JOIN_STEPS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the aggjoin has %d join steps; 1 to %d are supported",
							 join->nsteps, GA_AGG_MAX_JOIN_STEPS);
	for (s = 0; s < join->nsteps; s++)
	{
		GaAggJoinType type = join->steps[s].type;

		if (type != GA_AGGJOIN_INNER && type != GA_AGGJOIN_LEFT && type != GA_AGGJOIN_ANTI &&
			type != GA_AGGJOIN_RIGHT && type != GA_AGGJOIN_FULL && type != GA_AGGJOIN_SEMI)
			return ga_status_set(status, GA_ERR_INVALID,
								 "join step %d of the aggjoin has an unknown join type %d",
								 s + 1, (int) type);
	}
	if (join->from_build == NULL && request->ncolumns > 0)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the aggjoin does not say which columns come from the build side");
	for (i = 0; i < request->ncolumns; i++)
		if (join->from_build[i] > join->nsteps)
			return ga_status_set(status, GA_ERR_INVALID,
								 "column %d of the aggjoin has from_build %d, but the join has %d steps",
								 i, (int) join->from_build[i], join->nsteps);
	for (s = 0; s < join->nsteps; s++)
		if (!join_step_keys_validate(request, s, status))
			return 0;
	return join_filter_validate(request, status);
}

/*
 * Whether column c is a key column of join step s: its key_column, or one
 * of its key_columns when it has several keys.
 */
static int
join_step_keyed_on(const GaAggJoinStep *step, int c)
{
	int			i;

	if (!ga_join_step_hashed(step))
		return step->key_column == c;
	for (i = 0; i < step->nkeys; i++)
		if (step->key_columns[i] == c)
			return 1;
	return 0;
}

/* Whether column c of a request is filled by one of its derived columns. */
static int
column_is_derived(const GaAggRequest *request, int c)
{
	int			d;

	for (d = 0; d < request->nderived; d++)
		if (request->derived[d].column == c)
			return 1;
	return 0;
}

/*
 * Check a COLUMN step's operand: an int16, int32 or int64 column that is
 * not derived, with a NaN flag that is -1 or a GA_TYPE_NONE column that is
 * not derived.
 */
static int
derived_operand_validate(const GaAggRequest *request, int d, int s,
						 const GaExprStep *step, GaStatus *status)
{
	GaValueType type;

	if (step->column < 0 || step->column >= request->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of derived column %d reads column %d, which does not exist",
							 s, d, step->column);
	type = request->column_types[step->column];
	if (type != GA_TYPE_INT16 && type != GA_TYPE_INT32 && type != GA_TYPE_INT64)
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of derived column %d reads column %d, which is not an int16, int32 or int64 column",
							 s, d, step->column);
	if (column_is_derived(request, step->column))
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of derived column %d reads column %d, which is itself derived",
							 s, d, step->column);
	if (step->nan_column == -1)
		return 1;
	if (step->nan_column < 0 || step->nan_column >= request->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of derived column %d takes its NaN flag from column %d, which does not exist",
							 s, d, step->nan_column);
	if (request->column_types[step->nan_column] != GA_TYPE_NONE)
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of derived column %d takes its NaN flag from column %d, which is not a validity-only column",
							 s, d, step->nan_column);
	if (column_is_derived(request, step->nan_column))
		return ga_status_set(status, GA_ERR_INVALID,
							 "step %d of derived column %d takes its NaN flag from column %d, which is itself derived",
							 s, d, step->nan_column);
	return 1;
}

/*
 * Check derived column d's program: 1 .. GA_EXPR_MAX_STEPS known steps,
 * valid operands, SCALE powers 0 .. 38, and a stack that never
 * underflows, never holds more than GA_EXPR_MAX_DEPTH values and ends
 * with exactly one.  Fields a step's operation does not use are not read.
 */
static int
derived_program_validate(const GaAggRequest *request, int d, GaStatus *status)
{
	const GaDerivedColumn *dc = &request->derived[d];
	int			depth = 0;
	int			s;

	if (dc->nsteps < 1 || dc->nsteps > GA_EXPR_MAX_STEPS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "derived column %d has %d steps; 1 to %d are supported",
							 d, dc->nsteps, GA_EXPR_MAX_STEPS);
	for (s = 0; s < dc->nsteps; s++)
	{
		const GaExprStep *step = &dc->steps[s];

		switch (step->op)
		{
			case GA_EXPR_COLUMN:
				if (!derived_operand_validate(request, d, s, step, status))
					return 0;
				depth++;
				break;
			case GA_EXPR_CONST:
				depth++;
				break;
			case GA_EXPR_ADD:
			case GA_EXPR_SUB:
			case GA_EXPR_MUL:
				if (depth < 2)
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of derived column %d needs two values, but the stack holds %d",
										 s, d, depth);
				depth--;
				break;
			case GA_EXPR_SCALE:
				if (depth < 1)
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of derived column %d scales an empty stack", s, d);
				if (step->power < 0 || step->power > 38)
					return ga_status_set(status, GA_ERR_INVALID,
										 "step %d of derived column %d scales by 10^%d; powers 0 to 38 are supported",
										 s, d, step->power);
				break;
			default:
				return ga_status_set(status, GA_ERR_INVALID,
									 "step %d of derived column %d has an unknown operation %d",
									 s, d, (int) step->op);
		}
		if (depth > GA_EXPR_MAX_DEPTH)
			return ga_status_set(status, GA_ERR_INVALID,
								 "step %d of derived column %d makes the stack hold %d values; at most %d are supported",
								 s, d, depth, GA_EXPR_MAX_DEPTH);
	}
	if (depth != 1)
		return ga_status_set(status, GA_ERR_INVALID,
							 "derived column %d leaves %d values on the stack instead of one",
							 d, depth);
	return 1;
}

/*
 * Check derived column d: a column of the request, derived once, of the
 * type its part needs, never a grouping key, a join key or a build column,
 * and a valid program.
 */
static int
derived_column_validate(const GaAggRequest *request, int d, GaStatus *status)
{
	const GaDerivedColumn *dc = &request->derived[d];
	int			c = dc->column;
	int			i;

	if (c < 0 || c >= request->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "derived column %d fills column %d, which does not exist", d, c);
	for (i = 0; i < d; i++)
		if (request->derived[i].column == c)
			return ga_status_set(status, GA_ERR_INVALID,
								 "column %d is filled by derived columns %d and %d", c, i, d);
	switch (dc->part)
	{
		case GA_DERIVED_LIMB:
			if (dc->limb < 0 || dc->limb > 3)
				return ga_status_set(status, GA_ERR_INVALID,
									 "derived column %d takes limb %d; limbs 0 to 3 exist",
									 d, dc->limb);
			/* FALLTHROUGH */
		case GA_DERIVED_INT64:
			if (request->column_types[c] != GA_TYPE_INT64)
				return ga_status_set(status, GA_ERR_INVALID,
									 "derived column %d fills column %d with integers, but the column is not of type int64",
									 d, c);
			break;
		case GA_DERIVED_NAN:
			if (request->column_types[c] != GA_TYPE_NONE)
				return ga_status_set(status, GA_ERR_INVALID,
									 "derived column %d fills column %d with a NaN flag, but the column is not validity-only",
									 d, c);
			break;
		default:
			return ga_status_set(status, GA_ERR_INVALID,
								 "derived column %d takes an unknown part %d", d, (int) dc->part);
	}
	for (i = 0; i < request->nkeys; i++)
		if (request->key_columns[i] == c)
			return ga_status_set(status, GA_ERR_INVALID,
								 "derived column %d fills column %d, which is grouping key %d",
								 d, c, i);
	if (request->join != NULL)
	{
		for (i = 0; i < request->join->nsteps; i++)
			if (join_step_keyed_on(&request->join->steps[i], c))
				return ga_status_set(status, GA_ERR_INVALID,
									 "derived column %d fills column %d, which is a key column of join step %d",
									 d, c, i + 1);
		if (request->join->from_build[c] != 0)
			return ga_status_set(status, GA_ERR_INVALID,
								 "derived column %d fills column %d, which is a build column of join step %d; derived columns are computed in the joined rows and come from no side",
								 d, c, (int) request->join->from_build[c]);
	}
	return derived_program_validate(request, d, status);
}

/* Check a request's derived columns (after its columns and join spec). */
static int
derived_validate(const GaAggRequest *request, GaStatus *status)
{
	int			d;

	if (request->nderived < 0 || request->nderived > GA_MAX_DERIVED)
		return ga_status_set(status, GA_ERR_INVALID,
							 "aggregation request has %d derived columns; 0 to %d are supported",
							 request->nderived, GA_MAX_DERIVED);
	if (request->nderived > 0 && request->derived == NULL)
		return ga_status_set(status, GA_ERR_INVALID,
							 "aggregation request has %d derived columns but no array describing them",
							 request->nderived);
	for (d = 0; d < request->nderived; d++)
		if (!derived_column_validate(request, d, status))
			return 0;
	return 1;
}

/* Check one column of a page program (gpuagg_device.h, "Heap pages"). */
static int
page_column_validate(const GaAggRequest *request, const GaPageColumn *pc, int i,
					 const uint8_t *filled, GaStatus *status)
{
	const GaPageInput *pages = request->pages;
	const GaPageAttr *a;
	GaValueType type;
	int			d;

	if (pc->column < 0 || pc->column >= request->ncolumns || filled[pc->column])
		return ga_status_set(status, GA_ERR_INVALID,
							 "page column %d fills column %d, which does not exist or another fills",
							 i, pc->column);
	if (pc->attnum < 1 || pc->attnum > pages->natts)
		return ga_status_set(status, GA_ERR_INVALID,
							 "page column %d reads attribute %d; the program has %d",
							 i, pc->attnum, pages->natts);
	for (d = 0; d < request->nderived; d++)
		if (request->derived[d].column == pc->column)
			return ga_status_set(status, GA_ERR_INVALID,
								 "page column %d fills derived column %d", i, pc->column);
	a = &pages->attrs[pc->attnum - 1];
	type = request->column_types[pc->column];
	switch (pc->convert)
	{
		case GA_PAGE_COPY:
			if (!a->byval || (a->attlen != 1 && a->attlen != 2 && a->attlen != 4 &&
							  a->attlen != 8) ||
				!((type_is_integer(type) && ga_type_width(type) >= a->attlen) ||
				  (type_is_float(type) && ga_type_width(type) == a->attlen)))
				return ga_status_set(status, GA_ERR_INVALID,
									 "page column %d copies attribute %d of length %d into a column of type %d",
									 i, pc->attnum, (int) a->attlen, (int) type);
			break;
		case GA_PAGE_VALIDITY:
			if (type != GA_TYPE_NONE)
				return ga_status_set(status, GA_ERR_INVALID,
									 "page column %d gives validity only, to a column of type %d",
									 i, (int) type);
			break;
		default:
			return ga_status_set(status, GA_ERR_INVALID,
								 "page column %d has an unknown conversion", i);
	}
	return 1;
}

/* Check a request's page program (gpuagg_device.h, "Heap pages"). */
static int
pages_validate(const GaAggRequest *request, GaStatus *status)
{
	const GaPageInput *pages = request->pages;
	uint8_t    *filled;
	int			i;

	if (request->join != NULL)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggregation fed by a join takes no pages");
	if (pages->natts < 1 || pages->natts > GA_PAGE_MAX_ATTRS ||
		pages->ncolumns < 1 || pages->ncolumns > request->ncolumns ||
		pages->page_capacity < 1 || pages->page_capacity > request->batch_rows ||
		pages->page_capacity > (INT64_C(1) << 20))
		return ga_status_set(status, GA_ERR_INVALID,
							 "the page program has %d attributes, %d columns and %lld pages a batch, out of range",
							 pages->natts, pages->ncolumns, (long long) pages->page_capacity);
	for (i = 0; i < pages->natts; i++)
	{
		const GaPageAttr *a = &pages->attrs[i];

		if ((a->attlen <= 0 && a->attlen != -1 && a->attlen != -2) ||
			(a->alignby != 1 && a->alignby != 2 && a->alignby != 4 && a->alignby != 8) ||
			(a->has_missing && (!a->byval || a->attlen <= 0 || a->attlen > 8)))
			return ga_status_set(status, GA_ERR_INVALID,
								 "attribute %d of the page program has length %d and alignment %d%s",
								 i + 1, (int) a->attlen, (int) a->alignby,
								 a->has_missing ? " and a missing value" : "");
	}
	filled = calloc((size_t) request->ncolumns, 1);
	if (filled == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory checking a page program");
	for (i = 0; i < pages->ncolumns; i++)
	{
		if (!page_column_validate(request, &pages->columns[i], i, filled, status))
		{
			free(filled);
			return 0;
		}
		filled[pages->columns[i].column] = 1;
	}
	free(filled);
	return 1;
}

/*
 * Whether string column c of an aggjoin is a key: a key column or build
 * key column of a hashed step, or a group key (gathered into the joined
 * rows, on a device that groups joined strings: device.c), read by no
 * aggregate but a COUNT (of a group key, which shares its column).
 */
static int
join_string_column(const GaAggRequest *request, int c)
{
	const GaAggJoinSpec *join = request->join;
	int			keyed = 0;
	int			s,
				i;

	for (s = 0; join->nsteps <= GA_AGG_MAX_JOIN_STEPS && s < join->nsteps; s++)
	{
		const GaAggJoinStep *step = &join->steps[s];

		if (!ga_join_step_hashed(step) || step->nkeys > GA_AGG_MAX_JOIN_KEYS)
			continue;
		for (i = 0; i < step->nkeys; i++)
			if (step->key_columns[i] == c || step->build_key_columns[i] == c)
				keyed = 1;
	}
	for (i = 0; i < request->nkeys; i++)
		if (request->key_columns[i] == c)
			keyed = 1;
	for (i = 0; keyed && i < request->naggs; i++)
		if (request->aggs[i].op != GA_AGG_COUNT_ROWS && request->aggs[i].op != GA_AGG_COUNT &&
			(request->aggs[i].column == c ||
			 (request->aggs[i].op == GA_AGG_COMOMENTS && request->aggs[i].column2 == c)))
			return 0;
	return keyed;
}

/*
 * Check that a request makes sense before any device sees it, so that the
 * implementations can trust it.
 */
int
ga_request_validate(const GaAggRequest *request, GaStatus *status)
{
	int			i;

	if (request->ncolumns < 0 || request->nkeys < 0 || request->naggs < 0 ||
		request->batch_rows <= 0)
		return ga_status_set(status, GA_ERR_INVALID,
							 "aggregation request has negative counts or no batch size");
	if (request->nkeys > GA_MAX_KEYS || request->naggs > GA_MAX_AGG_OPS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "aggregation request has %d keys and %d aggregates; at most %d and %d are supported",
							 request->nkeys, request->naggs, GA_MAX_KEYS, GA_MAX_AGG_OPS);
	for (i = 0; i < request->ncolumns; i++)
	{
		if (request->column_types[i] < GA_TYPE_NONE ||
			request->column_types[i] > GA_TYPE_STRING)
			return ga_status_set(status, GA_ERR_INVALID,
								 "column %d has an unknown type", i);
		if (request->column_types[i] != GA_TYPE_STRING)
			continue;
		if (request->string_bytes < 1 || request->string_bytes > (int64_t) UINT32_MAX)
			return ga_status_set(status, GA_ERR_INVALID,
								 "string column %d needs between 1 and %lld bytes a batch, not %lld",
								 i, (long long) UINT32_MAX, (long long) request->string_bytes);
		if (request->join != NULL && !join_string_column(request, i))
			return ga_status_set(status, GA_ERR_INVALID,
								 "string column %d is in an aggregation fed by a join, but is no group key and no key of a hashed join step",
								 i);
	}
	if (request->debug_hash_bits < 0 || request->debug_hash_bits > 63)
		return ga_status_set(status, GA_ERR_INVALID,
							 "debug_hash_bits is %d; it must be between 0 and 63",
							 request->debug_hash_bits);
	for (i = 0; i < request->nkeys; i++)
	{
		int			col = request->key_columns[i];

		if (col < 0 || col >= request->ncolumns ||
			(!type_is_integer(request->column_types[col]) &&
			 request->column_types[col] != GA_TYPE_STRING))
			return ga_status_set(status, GA_ERR_INVALID,
								 "key %d is neither an integer nor a string column", i);
	}
	for (i = 0; i < request->naggs; i++)
	{
		const GaAggSpec *spec = &request->aggs[i];
		GaValueType type;

		if (spec->op == GA_AGG_COUNT_ROWS)
			continue;
		if (spec->column < 0 || spec->column >= request->ncolumns)
			return ga_status_set(status, GA_ERR_INVALID,
								 "aggregate %d has no input column", i);
		type = request->column_types[spec->column];
		if (type == GA_TYPE_STRING && spec->op != GA_AGG_COUNT)
			return ga_status_set(status, GA_ERR_INVALID,
								 "aggregate %d takes a string column, which only a key or a COUNT may",
								 i);
		switch (spec->op)
		{
			case GA_AGG_COUNT:
				break;
			case GA_AGG_COUNT_NONFINITE:
			case GA_AGG_SUM_FLOAT64:
				if (!type_is_float(type))
					return ga_status_set(status, GA_ERR_INVALID,
										 "aggregate %d needs a float column", i);
				break;
			case GA_AGG_SUM_FLOAT32:
				if (type != GA_TYPE_FLOAT32)
					return ga_status_set(status, GA_ERR_INVALID,
										 "aggregate %d needs a float32 column", i);
				break;
			case GA_AGG_SUM_INT:
				if (!type_is_integer(type))
					return ga_status_set(status, GA_ERR_INVALID,
										 "aggregate %d needs an integer column", i);
				break;
			case GA_AGG_MIN:
			case GA_AGG_MAX:
				if (!type_is_integer(type) && !type_is_float(type))
					return ga_status_set(status, GA_ERR_INVALID,
										 "aggregate %d needs a numeric column", i);
				break;
			case GA_AGG_MOMENTS:
				if (!type_is_float(type))
					return ga_status_set(status, GA_ERR_INVALID,
										 "aggregate %d needs a float column", i);
				break;
			case GA_AGG_COMOMENTS:
				if (spec->column2 < 0 || spec->column2 >= request->ncolumns)
					return ga_status_set(status, GA_ERR_INVALID,
										 "aggregate %d has no second input column", i);
				if (!type_is_float(type) ||
					!type_is_float(request->column_types[spec->column2]))
					return ga_status_set(status, GA_ERR_INVALID,
										 "aggregate %d needs two float columns", i);
				break;
			default:
				return ga_status_set(status, GA_ERR_INVALID,
									 "aggregate %d has an unknown operation", i);
		}
	}
	if (request->join != NULL && !join_spec_validate(request, status))
		return 0;
	if (!derived_validate(request, status))
		return 0;
	if (request->pages != NULL && !pages_validate(request, status))
		return 0;
	ga_status_ok(status);
	return 1;
}

/* Whether two program steps do the same (fields their operation ignores aside). */
static int
expr_steps_equal(const GaExprStep *a, const GaExprStep *b)
{
	if (a->op != b->op)
		return 0;
	switch (a->op)
	{
		case GA_EXPR_COLUMN:
			return a->column == b->column && a->nan_column == b->nan_column;
		case GA_EXPR_CONST:
			return a->constant == b->constant;
		case GA_EXPR_SCALE:
			return a->power == b->power;
		default:
			return 1;
	}
}

/* Whether two derived columns have the same program. */
static int
derived_programs_equal(const GaDerivedColumn *a, const GaDerivedColumn *b)
{
	int			s;

	if (a->nsteps != b->nsteps)
		return 0;
	for (s = 0; s < a->nsteps; s++)
		if (!expr_steps_equal(&a->steps[s], &b->steps[s]))
			return 0;
	return 1;
}

/*
 * Copy a validated request's derived columns and group them by program
 * (see GaDerivedPlan), in the order of their first appearance.  NULL when
 * out of host memory; a request without derived columns gets an empty
 * plan.
 */
GaDerivedPlan *
ga_derived_plan_create(const GaAggRequest *request)
{
	GaDerivedPlan *plan = calloc(1, sizeof(GaDerivedPlan));
	int			d,
				p;

	if (plan == NULL)
		return NULL;
	plan->nderived = request->nderived;
	if (request->nderived > 0)
		memcpy(plan->derived, request->derived, sizeof(GaDerivedColumn) * request->nderived);
	for (d = 0; d < plan->nderived; d++)
	{
		for (p = 0; p < plan->nprograms; p++)
			if (derived_programs_equal(&plan->derived[plan->program_spec[p]], &plan->derived[d]))
				break;
		if (p == plan->nprograms)
			plan->program_spec[plan->nprograms++] = d;
		plan->program_of[d] = p;
	}
	return plan;
}

/* Check a join request before any device sees it. */
int
ga_join_request_validate(const GaJoinRequest *request, GaStatus *status)
{
	if (request == NULL)
		return ga_status_set(status, GA_ERR_INVALID, "join request is missing");
	if (request->probe_batch_rows <= 0)
		return ga_status_set(status, GA_ERR_INVALID,
							 "join request has no probe batch size");
	if (request->probe_batch_rows > GA_JOIN_MAX_PROBE_BATCH_ROWS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "probe batch size %lld is too large",
							 (long long) request->probe_batch_rows);
	ga_status_ok(status);
	return 1;
}
