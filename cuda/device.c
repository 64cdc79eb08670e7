/*-------------------------------------------------------------------------
 *
 * device.c
 *	  The public device API of gpuagg_device.h: opens devices, validates
 *	  requests and dispatches every aggregation and join call to the CPU or
 *	  GPU implementation behind a small table of functions.
 *
 * Testing hook: a request's fail_at_batch makes that submit (aggregation)
 * or that probe (join) fail as a device error would, on either device, so
 * that the caller's recovery path (finish on the CPU, or a clear error) can
 * be exercised without a broken GPU.
 *
 * The join's call order (build once, then probes) is checked here, so that
 * both implementations see only well-formed sequences; so is an aggjoin
 * aggregation's (each step's build once, before the first batch; no batch
 * or submit before every step's build was given), with the builds'
 * arguments.
 *
 *-------------------------------------------------------------------------
 */
#include "device_impl.h"
#include "join_key.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct GaDevice
{
	GaDeviceKind kind;
	const GaDeviceOps *ops;
	void	   *impl;
	double		setup_ms;
};

struct GaAgg
{
	const GaDeviceOps *ops;
	void	   *impl;
	int64_t		submits;
	int64_t		fail_at_batch;

	/* aggjoins only */
	int			aggjoin;
	int			join_steps;
	int			ncolumns;
	GaValueType *column_types;	/* copied, to check the build's payload */
	GaAggJoinStep join_step[GA_AGG_MAX_JOIN_STEPS];	/* copied: the keys */
	uint8_t		join_build_called[GA_AGG_MAX_JOIN_STEPS];	/* per step: given */
	int			join_builds_called; /* steps whose build was given */
	int			batch_handed_out;	/* ga_agg_next_batch was called */
	GaFailure	build_failure;	/* a build that failed here, before any
								 * device saw it (hashing several keys) */
};

struct GaJoin
{
	const GaDeviceOps *ops;
	void	   *impl;
	int			build_called;	/* ga_join_build was called (success or not) */
	int			built;			/* ... and succeeded */
	int64_t		probes;
	int64_t		fail_at_batch;
	int64_t		probe_batch_rows;	/* capacity of every probe batch */
};

/* Largest probe batch capacity: keeps every size computation in range. */
#define GA_JOIN_MAX_PROBE_BATCH_ROWS (INT64_C(1) << 40)

/* The CPU device handle; the CPU device has no state of its own. */
static GaDevice cpu_device;

/* The per-process GPU device handles, created on first open. */
static GaDevice *gpu_devices[GA_MAX_GPUS];

/* Set status to success. */
void
ga_status_ok(GaStatus *status)
{
	status->code = GA_OK;
	status->message[0] = '\0';
}

/* Set status to a failure with a formatted message; returns 0 for chaining. */
int
ga_status_set(GaStatus *status, GaStatusCode code, const char *fmt,...)
{
	va_list		args;

	status->code = code;
	va_start(args, fmt);
	vsnprintf(status->message, sizeof(status->message), fmt, args);
	va_end(args);
	return 0;
}

/* Allocate n elements of size bytes (at least one), NULL on overflow or exhaustion. */
void *
ga_alloc_array(int64_t n, size_t size)
{
	if (n < 1)
		n = 1;
	if ((uint64_t) n > SIZE_MAX / size)
		return NULL;
	return malloc((size_t) n * size);
}

/* Milliseconds on a monotonic clock, for the CPU device's device_ms. */
double
ga_cpu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

/* Bytes per value of a column type. */
int
ga_type_width(GaValueType type)
{
	switch (type)
	{
		case GA_TYPE_NONE:
			return 0;
		case GA_TYPE_INT8:
			return 1;
		case GA_TYPE_INT16:
			return 2;
		case GA_TYPE_INT32:
		case GA_TYPE_FLOAT32:
			return 4;
		case GA_TYPE_INT64:
		case GA_TYPE_FLOAT64:
			return 8;
	}
	return 0;
}

/* The name EXPLAIN shows for a strategy. */
const char *
ga_strategy_name(GaStrategy strategy)
{
	switch (strategy)
	{
		case GA_STRATEGY_AUTO:
			return "auto";
		case GA_STRATEGY_SHARED:
			return "shared";
		case GA_STRATEGY_GLOBAL:
			return "global";
		case GA_STRATEGY_CPU:
			return "cpu hash";
		case GA_STRATEGY_PERFECT:
			return "perfect";
		case GA_STRATEGY_PARTITIONED:
			return "partitioned";
		case GA_NUM_STRATEGIES:
			break;
	}
	return "unknown";
}

/* The name EXPLAIN shows for a phase of the device work. */
const char *
ga_phase_name(GaPhase phase)
{
	switch (phase)
	{
		case GA_PHASE_PROBE:
			return "probe";
		case GA_PHASE_DERIVED:
			return "derived";
		case GA_PHASE_PARTITION:
			return "partition";
		case GA_PHASE_GROUP_IDS:
			return "group ids";
		case GA_PHASE_AGGREGATE:
			return "aggregate";
		case GA_PHASE_GROW:
			return "grow";
		case GA_PHASE_FINISH:
			return "finish";
		case GA_NUM_PHASES:
			break;
	}
	return "unknown";
}

static int
type_is_integer(GaValueType type)
{
	return type >= GA_TYPE_INT8 && type <= GA_TYPE_INT64;
}

static int
type_is_float(GaValueType type)
{
	return type == GA_TYPE_FLOAT32 || type == GA_TYPE_FLOAT64;
}

/*
 * Check a key column `key` of join step s (0-based): a column of
 * GA_TYPE_INT64 that the step's rows already have, a probe column or a
 * build column of an earlier step.
 */
static int
join_key_column_validate(const GaAggRequest *request, int s, int key, GaStatus *status)
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
	if (request->column_types[key] != GA_TYPE_INT64)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the key column %d of join step %d is not of type int64",
							 key, s + 1);
	return 1;
}

/*
 * Check the keys of join step s (0-based): its key_column with nkeys 0 or
 * 1; with 2 .. GA_AGG_MAX_JOIN_KEYS, each of its key_columns as a
 * key_column and each of its build_key_columns a GA_TYPE_INT64 build
 * column of the step itself.
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
	if (step->nkeys <= 1)
		return join_key_column_validate(request, s, step->key_column, status);
	for (i = 0; i < step->nkeys; i++)
	{
		int			build_key = step->build_key_columns[i];

		if (!join_key_column_validate(request, s, step->key_columns[i], status))
			return 0;
		if (build_key < 0 || build_key >= request->ncolumns)
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d does not exist",
								 build_key, s + 1);
		if (request->join->from_build[build_key] != s + 1)
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d is not a build column of that step (its from_build is %d)",
								 build_key, s + 1, (int) request->join->from_build[build_key]);
		if (request->column_types[build_key] != GA_TYPE_INT64)
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d is not of type int64",
								 build_key, s + 1);
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

	if (step->nkeys <= 1)
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
		if (request->column_types[i] < GA_TYPE_NONE ||
			request->column_types[i] > GA_TYPE_FLOAT64)
			return ga_status_set(status, GA_ERR_INVALID,
								 "column %d has an unknown type", i);
	for (i = 0; i < request->nkeys; i++)
	{
		int			col = request->key_columns[i];

		if (col < 0 || col >= request->ncolumns ||
			!type_is_integer(request->column_types[col]))
			return ga_status_set(status, GA_ERR_INVALID,
								 "key %d is not an integer column", i);
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

/* Whether aggregate `agg` of a request produces floats (float or double). */
int
ga_agg_result_type_is_float(const GaAggRequest *request, int agg)
{
	const GaAggSpec *spec = &request->aggs[agg];

	switch (spec->op)
	{
		case GA_AGG_SUM_FLOAT32:
		case GA_AGG_SUM_FLOAT64:
			return 1;
		case GA_AGG_MIN:
		case GA_AGG_MAX:
			return type_is_float(request->column_types[spec->column]);
		default:
			return 0;
	}
}

/* Bytes of one result element of aggregate `agg` (see GaAggOp). */
int
ga_agg_result_width(const GaAggRequest *request, int agg)
{
	switch (request->aggs[agg].op)
	{
		case GA_AGG_SUM_INT:
			return (int) sizeof(GaInt128);
		case GA_AGG_SUM_FLOAT32:
			return (int) sizeof(float);
		case GA_AGG_MOMENTS:
			return (int) sizeof(GaMoments);
		case GA_AGG_COMOMENTS:
			return (int) sizeof(GaComoments);
		default:
			return 8;
	}
}

/* Accumulator bytes one group needs in the global arrays. */
int64_t
ga_agg_state_bytes_per_group(const GaAggRequest *request)
{
	int64_t		bytes = 0;
	int			i;

	for (i = 0; i < request->naggs; i++)
		bytes += ga_agg_result_width(request, i);
	return bytes > 0 ? bytes : 8;
}

/* ------------------------------------------------------------------------
 * Strategy planning, shared by EXPLAIN (no device needed) and the GPU device
 *
 * The rules follow the papers in the design notes: direct indexing when the
 * key range is small (Karnagel et al., MapD's perfect hashing), per-block
 * tables in shared memory while the groups fit them (Rosenfeld et al.), one
 * device-memory table while it fits the L2 cache, and partitioning by key
 * hash beyond that (Wu et al.).  Sizes come from the GPU's own properties.
 * ------------------------------------------------------------------------
 */

/*
 * Bytes of aggregate `agg`'s accumulator in a block's shared-memory table.
 * With `narrow` (batches of at most 2^31 rows, so a block never sees more)
 * counts take 4 bytes and sums of inputs up to 32 bits take 8: a block's
 * partial sum of at most 2^31 such values cannot overflow 64 bits.  The
 * global arrays always use the full widths of ga_agg_result_width().
 */
int
ga_shared_width(const GaAggRequest *request, int agg, int narrow)
{
	const GaAggSpec *spec = &request->aggs[agg];

	switch (spec->op)
	{
		case GA_AGG_COUNT_ROWS:
		case GA_AGG_COUNT:
		case GA_AGG_COUNT_NONFINITE:
			return narrow ? 4 : 8;
		case GA_AGG_SUM_INT:
			return narrow && ga_type_width(request->column_types[spec->column]) <= 4 ? 8 : 16;
		case GA_AGG_SUM_FLOAT32:
			return 4;
		case GA_AGG_MOMENTS:
		case GA_AGG_COMOMENTS:
			return ga_agg_result_width(request, agg);
		default:
			return 8;
	}
}

/*
 * Whether a request runs in the two-phase kernels only: MOMENTS and
 * COMOMENTS fold whole rows with compensated sums shifted by the global
 * group's value, which the direct (perfect) and fused (one-pass shared)
 * kernels do not do; shared then means the two-phase shared kernel.
 */
int
ga_request_two_phase_only(const GaAggRequest *request)
{
	int			i;

	for (i = 0; i < request->naggs; i++)
		if (request->aggs[i].op == GA_AGG_MOMENTS || request->aggs[i].op == GA_AGG_COMOMENTS)
			return 1;
	return 0;
}

/* Shared-memory accumulator bytes of one group (all aggregates). */
int64_t
ga_shared_state_bytes(const GaAggRequest *request, int narrow)
{
	int64_t		bytes = 0;
	int			i;

	for (i = 0; i < request->naggs; i++)
		bytes += ga_shared_width(request, i, narrow);
	return bytes;
}

/*
 * Shared memory one block of the shared-memory kernels may use: half a
 * multiprocessor's (two blocks resident per multiprocessor keep enough rows
 * in flight), less what the runtime reserves per block, and never above the
 * per-block opt-in maximum.
 */
int64_t
ga_shared_budget_bytes(const GaGpuInfo *info)
{
	int64_t		per_sm = info->shared_memory_per_multiprocessor;
	int64_t		budget;

	if (per_sm <= 0)
		per_sm = info->shared_memory_per_block;
	budget = per_sm / 2 - 1024;
	if (budget > info->shared_memory_per_block)
		budget = info->shared_memory_per_block;
	return budget > 0 ? budget : 0;
}

/*
 * Shared memory a block of a one-pass direct kernel (perfect in shared
 * memory) may use: all that one block may opt in to, so one block per
 * multiprocessor when the table is large; at least the two-block budget.
 * A direct table in shared memory at half the threads is still far ahead of
 * direct_global's atomics in device memory (issue 5 measured direct_global
 * at 10.8 G rows/s on the H100 for 2^13 keys, which the two-block budget
 * could not hold with the range's slack).
 */
int64_t
ga_direct_budget_bytes(const GaGpuInfo *info)
{
	int64_t		two_blocks = ga_shared_budget_bytes(info);

	return info->shared_memory_per_block > two_blocks ?
		info->shared_memory_per_block : two_blocks;
}

/*
 * Bits of the key tuple packed into one 64-bit word (the fused shared
 * kernel's local table keys): each key's width, plus a null bit for a key
 * that may be null.  Above 64 the keys cannot be packed.
 */
int
ga_keys_pack_bits(const GaAggRequest *request, int assume_nullable)
{
	int			bits = 0;
	int			i;

	for (i = 0; i < request->nkeys; i++)
		bits += 8 * ga_type_width(request->column_types[request->key_columns[i]]) +
			(assume_nullable ? 1 : 0);
	return bits;
}

/* Device-memory bytes of one group in the global table (slots, keys, accumulators). */
int64_t
ga_table_bytes_per_group(const GaAggRequest *request)
{
	return 2 * 4 + 8 * (int64_t) (request->nkeys + 1) +
		ga_agg_state_bytes_per_group(request);
}

/*
 * The most groups the shared strategy's per-block tables hold on this GPU:
 * accumulators only, indexed by dense group id (the fused kernel, which
 * also keeps the packed keys, holds fewer: ga_fused_max_groups).
 */
int64_t
ga_shared_strategy_max_groups(const GaGpuInfo *info, const GaAggRequest *request)
{
	int64_t		state = ga_shared_state_bytes(request, 1);

	if (state <= 0)
		state = 4;
	return ga_shared_budget_bytes(info) / state;
}

/*
 * The most groups the fused shared kernel's per-block hash table holds: a
 * packed 64-bit key and the accumulators per slot, at most
 * GA_FUSED_LOAD_PERCENT percent of the slots used.
 */
int64_t
ga_fused_max_groups(const GaGpuInfo *info, const GaAggRequest *request)
{
	int64_t		slot_bytes = 8 + ga_shared_state_bytes(request, 1);

	return ga_shared_budget_bytes(info) / slot_bytes * GA_FUSED_LOAD_PERCENT / 100;
}

/*
 * The most direct-indexed entries (the product of the key ranges, a null
 * slot per key included) a block's shared memory holds for `perfect`.
 */
int64_t
ga_perfect_shared_max_entries(const GaGpuInfo *info, const GaAggRequest *request)
{
	int64_t		state = ga_shared_state_bytes(request, 1);

	/* accumulators plus one bit per entry for "seen" */
	return ga_direct_budget_bytes(info) * 8 / (8 * (state > 0 ? state : 0) + 1);
}

/*
 * Whether a request's keys fit 64 bits side by side (the fused and chunk
 * kernels pack them; a key column with nulls also needs a null bit, which
 * the GPU device checks batch by batch).
 */
static int
keys_fit_64_bits(const GaAggRequest *request)
{
	int			bytes = 0;

	for (int i = 0; i < request->nkeys; i++)
		bytes += ga_type_width(request->column_types[request->key_columns[i]]);
	return request->nkeys > 0 && bytes <= 8;
}

/*
 * The hash-based strategy auto uses for `groups` groups: shared while they
 * fit a block's shared memory; beyond, partitioned when the group table no
 * longer fits the L2 cache (ga_partitioned_applies) and the keys pack into
 * 64 bits, where the H100 measured it faster than global (kernel benchmark,
 * issue 5); else global.
 */
GaStrategy
ga_auto_strategy_for_groups(const GaGpuInfo *info, const GaAggRequest *request,
							int64_t groups)
{
	if (groups < 1)
		groups = 1;
	if (request->nkeys == 0 || groups <= ga_shared_strategy_max_groups(info, request))
		return GA_STRATEGY_SHARED;
	if (keys_fit_64_bits(request) && ga_partitioned_applies(info, request, groups))
		return GA_STRATEGY_PARTITIONED;
	return GA_STRATEGY_GLOBAL;
}

/*
 * Whether a forced partitioned strategy runs as itself for `groups` groups:
 * only when the global table (GA_PARTITIONED_L2_PERCENT percent of the L2
 * cache) no longer fits L2, where partitioning can pay; elsewhere global runs.
 */
int
ga_partitioned_applies(const GaGpuInfo *info, const GaAggRequest *request,
					   int64_t groups)
{
	int64_t		l2 = info->l2_cache_size > 0 ? info->l2_cache_size : 4 * 1024 * 1024;

	return request->nkeys > 0 &&
		(double) groups * ga_table_bytes_per_group(request) >
		(double) l2 * GA_PARTITIONED_L2_PERCENT / 100;
}

/*
 * The strategy EXPLAIN announces before anything runs.  A forced strategy
 * is shown as forced (where it does not apply the device falls back, and
 * EXPLAIN ANALYZE shows what ran).  For auto, keys whose types alone bound
 * the range (bool, int2) to what a block's shared memory can index directly
 * plan `perfect`; wider keys get their range from a sample of the first
 * batch on the device, so the plan names the hash-based strategy for the
 * estimated groups and the device may still pick perfect.
 */
GaStrategy
ga_agg_planned_strategy(const GaGpuInfo *info, const GaAggRequest *request)
{
	double		entries = 1;
	int			i;

	if (info == NULL)
		return GA_STRATEGY_CPU;
	if (request->strategy != GA_STRATEGY_AUTO)
		return request->strategy;
	if (request->nkeys == 0)
		return GA_STRATEGY_SHARED;
	for (i = 0; i < request->nkeys; i++)
	{
		int			width = ga_type_width(request->column_types[request->key_columns[i]]);

		entries *= width <= 2 ? (double) (INT64_C(1) << (8 * width)) + 1 : 1e30;
	}
	if (request->nkeys <= GA_PERFECT_MAX_KEYS && !ga_request_two_phase_only(request) &&
		entries <= (double) ga_perfect_shared_max_entries(info, request))
		return GA_STRATEGY_PERFECT;
	return ga_auto_strategy_for_groups(info, request, request->estimated_groups);
}

/* Open the CPU device or GPU `gpu_ordinal`, reusing a GPU already opened. */
GaDevice *
ga_device_open(GaDeviceKind kind, int gpu_ordinal, GaStatus *status)
{
	GaDevice   *device;

	ga_status_ok(status);
	if (kind == GA_DEVICE_CPU)
	{
		if (cpu_device.ops == NULL)
		{
			cpu_device.impl = ga_cpu_open(status);
			if (status->code != GA_OK)
				return NULL;
			cpu_device.kind = GA_DEVICE_CPU;
			cpu_device.ops = &ga_cpu_ops;
		}
		return &cpu_device;
	}

	if (gpu_ordinal < 0 || gpu_ordinal >= GA_MAX_GPUS)
	{
		ga_status_set(status, GA_ERR_INVALID, "GPU %d does not exist", gpu_ordinal);
		return NULL;
	}
	if (gpu_devices[gpu_ordinal] != NULL)
	{
		gpu_devices[gpu_ordinal]->setup_ms = 0;
		return gpu_devices[gpu_ordinal];
	}
	device = calloc(1, sizeof(GaDevice));
	if (device == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory opening GPU %d", gpu_ordinal);
		return NULL;
	}
	device->kind = GA_DEVICE_GPU;
	device->ops = &ga_gpu_ops;
	device->impl = ga_gpu_open(gpu_ordinal, &device->setup_ms, status);
	if (device->impl == NULL)
	{
		free(device);
		return NULL;
	}
	gpu_devices[gpu_ordinal] = device;
	return device;
}

GaDeviceKind
ga_device_kind(const GaDevice *device)
{
	return device->kind;
}

double
ga_device_setup_ms(const GaDevice *device)
{
	return device->setup_ms;
}

/* Free the dispatcher's aggregation handle (not the implementation's). */
static void
agg_free(GaAgg *agg)
{
	free(agg->column_types);
	free(agg);
}

/* Validate the request and start it on the device's implementation. */
GaAgg *
ga_agg_create(GaDevice *device, const GaAggRequest *request, GaStatus *status)
{
	GaAgg	   *agg;

	if (!ga_request_validate(request, status))
		return NULL;
	agg = calloc(1, sizeof(GaAgg));
	if (agg == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting an aggregation");
		return NULL;
	}
	agg->ops = device->ops;
	agg->fail_at_batch = request->fail_at_batch;
	if (request->join != NULL)
	{
		agg->aggjoin = 1;
		agg->join_steps = request->join->nsteps;
		agg->ncolumns = request->ncolumns;
		agg->column_types = ga_alloc_array(request->ncolumns, sizeof(GaValueType));
		if (agg->column_types == NULL)
		{
			agg_free(agg);
			ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting an aggregation");
			return NULL;
		}
		if (request->ncolumns > 0)
			memcpy(agg->column_types, request->column_types,
				   sizeof(GaValueType) * request->ncolumns);
		memcpy(agg->join_step, request->join->steps,
			   sizeof(GaAggJoinStep) * request->join->nsteps);
	}
	agg->impl = device->ops->agg_create(device->impl, request, status);
	if (agg->impl == NULL)
	{
		agg_free(agg);
		return NULL;
	}
	return agg;
}

/*
 * Check the build side's payload: the request's columns and types, a row
 * count within its capacity and the limit, and arrays where rows need them.
 */
static int
join_payload_validate(const GaAgg *agg, const GaBatch *payload, GaStatus *status)
{
	int			c;

	if (payload == NULL || (payload->ncolumns > 0 && payload->columns == NULL))
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side has no payload");
	if (payload->ncolumns != agg->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's payload has %d columns, but the request has %d",
							 payload->ncolumns, agg->ncolumns);
	if (payload->nrows < 0 || payload->nrows > payload->capacity ||
		payload->nrows > GA_JOIN_MAX_BUILD_ROWS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's payload holds %lld rows, with room for %lld and a limit of %lld",
							 (long long) payload->nrows, (long long) payload->capacity,
							 (long long) GA_JOIN_MAX_BUILD_ROWS);
	for (c = 0; c < payload->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];

		if (col->type != agg->column_types[c])
			return ga_status_set(status, GA_ERR_INVALID,
								 "column %d of an aggjoin's payload has type %d, but the request says %d",
								 c, (int) col->type, (int) agg->column_types[c]);
	}
	return 1;
}

/*
 * Check the payload's build key columns of a step of several keys: arrays
 * where rows need them, and every listed build row valid in each.
 */
static int
join_build_keys_validate(const GaAggJoinStep *js, int step, const uint32_t *rows, int64_t n,
						 const GaBatch *payload, GaStatus *status)
{
	int64_t		i;
	int			k;

	for (k = 0; k < js->nkeys && n > 0; k++)
	{
		const GaColumn *col = &payload->columns[js->build_key_columns[k]];

		if (col->values == NULL || (col->has_nulls && col->validity == NULL))
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d has no values in the payload",
								 js->build_key_columns[k], step + 1);
		for (i = 0; i < n; i++)
			if (ga_column_is_null(col, rows[i]))
				return ga_status_set(status, GA_ERR_INVALID,
									 "build row %u of join step %d is listed, but its build key column %d is null",
									 rows[i], step + 1, js->build_key_columns[k]);
	}
	return 1;
}

/*
 * Check the build's arguments and call order (an aggjoin, a
 * step it has, the step's first build, before any batch; n and every row
 * in range; keys for a step of one key, none for a step of several), then
 * build.  A step of several keys is built on the hashes of its build rows'
 * keys (join_key.h), with the seed that keeps them free of collisions.  A
 * step whose build failed counts as given: the device, or for a failure
 * here (hashing) this layer, remembers the failure and reports it from
 * then on.
 */
int
ga_aggjoin_build(GaAgg *agg, int step, const int64_t *keys, const uint32_t *rows, int64_t n,
				  const GaBatch *payload, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	const GaAggJoinStep *js;
	int64_t    *hashes = NULL;
	uint64_t	key_seed = 0;
	int64_t		i;
	int			ok;

	if (!agg->aggjoin)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a build side was given to an aggregation that is not fed by a join");
	if (step < 0 || step >= agg->join_steps)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a build side was given for step argument %d, but the aggjoin's steps are 0 to %d",
							 step, agg->join_steps - 1);
	js = &agg->join_step[step];
	if (agg->join_build_called[step])
		return ga_status_set(status, GA_ERR_INVALID,
							 "the build side of join step %d (step argument %d) of an aggjoin was given twice",
							 step + 1, step);
	if (agg->batch_handed_out)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side was given after its first batch");
	if (!join_payload_validate(agg, payload, status))
		return 0;
	if (n < 0 || n > payload->nrows || n > GA_JOIN_MAX_BUILD_ROWS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side has %lld keyed rows, but its payload has %lld rows (at most %lld are supported)",
							 (long long) n, (long long) payload->nrows,
							 (long long) GA_JOIN_MAX_BUILD_ROWS);
	if (js->nkeys >= 2 && keys != NULL)
		return ga_status_set(status, GA_ERR_INVALID,
							 "join step %d joins on %d keys, so its build side takes no keys: the device reads them from its build key columns",
							 step + 1, js->nkeys);
	if (n > 0 && ((js->nkeys <= 1 && keys == NULL) || rows == NULL))
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side has rows but no key or row arrays");
	for (i = 0; i < n; i++)
		if ((int64_t) rows[i] >= payload->nrows)
			return ga_status_set(status, GA_ERR_INVALID,
								 "build row %lld of an aggjoin is %u, beyond the payload's %lld rows",
								 (long long) i, rows[i], (long long) payload->nrows);
	if (js->nkeys >= 2 && !join_build_keys_validate(js, step, rows, n, payload, status))
		return 0;
	agg->join_build_called[step] = 1;
	agg->join_builds_called++;
	if (js->nkeys >= 2)
	{
		hashes = ga_alloc_array(n, sizeof(int64_t));
		if (hashes == NULL)
			return ga_failure_set(&agg->build_failure, status, GA_ERR_OUT_OF_MEMORY,
								  "out of host memory hashing the keys of an aggjoin's build side");
		if (!ga_join_key_hash_build(payload, js->build_key_columns, js->nkeys, rows, n, hashes,
									&key_seed, wait, arg, status))
		{
			GaStatus	failed = *status;

			free(hashes);
			return ga_failure_set(&agg->build_failure, status, failed.code, failed.message);
		}
		keys = hashes;
	}
	ok = agg->ops->aggjoin_build(agg->impl, step, keys, rows, n, key_seed, payload, wait, arg,
								  status);
	free(hashes);
	return ok;
}

/*
 * Whether an aggjoin still lacks the build side of a step, or
 * one of its builds failed here (then sets status); a plain one never does.
 */
static int
join_builds_missing(const GaAgg *agg, const char *what, GaStatus *status)
{
	if (!ga_failure_check(&agg->build_failure, status))
		return 1;
	if (!agg->aggjoin || agg->join_builds_called == agg->join_steps)
		return 0;
	ga_status_set(status, GA_ERR_INVALID,
				  "an aggjoin's batch was %s before the build sides of all its %d join steps were given",
				  what, agg->join_steps);
	return 1;
}

/*
 * Hand out a batch; an aggjoin needs every step's build side
 * first (after a failed build, the implementation reports the failure it
 * remembers).
 */
GaBatch *
ga_agg_next_batch(GaAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	if (join_builds_missing(agg, "requested", status))
		return NULL;
	agg->batch_handed_out = 1;
	return agg->ops->agg_next_batch(agg->impl, wait, arg, status);
}

/*
 * Submit a batch (a probe batch when aggjoin, after the build);
 * fail_at_batch counts every submit that reaches the device.
 */
int
ga_agg_submit(GaAgg *agg, GaBatch *batch, GaWaitCallback wait, void *arg,
			  GaStatus *status)
{
	if (join_builds_missing(agg, "submitted", status))
		return 0;
	agg->submits++;
	if (agg->fail_at_batch > 0 && agg->submits == agg->fail_at_batch)
		return ga_status_set(status, GA_ERR_INJECTED,
							 "injected device failure at batch %lld (gpuagg.debug_fail_at_batch)",
							 (long long) agg->submits);
	return agg->ops->agg_submit(agg->impl, batch, wait, arg, status);
}

/* Finish on the device; a build that failed in this layer fails it too. */
const GaAggResult *
ga_agg_finish(GaAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	if (!ga_failure_check(&agg->build_failure, status))
		return NULL;
	return agg->ops->agg_finish(agg->impl, wait, arg, status);
}

void
ga_agg_get_stats(const GaAgg *agg, GaAggStats *stats)
{
	memset(stats, 0, sizeof(*stats));
	agg->ops->agg_get_stats(agg->impl, stats);
}

void
ga_agg_destroy(GaAgg *agg)
{
	if (agg == NULL)
		return;
	agg->ops->agg_destroy(agg->impl);
	agg_free(agg);
}

/* ------------------------------------------------------------------------
 * Hash join
 * ------------------------------------------------------------------------
 */

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

/* Validate the request and start the join on the device's implementation. */
GaJoin *
ga_join_create(GaDevice *device, const GaJoinRequest *request, GaStatus *status)
{
	GaJoin	   *join;

	if (!ga_join_request_validate(request, status))
		return NULL;
	join = calloc(1, sizeof(GaJoin));
	if (join == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting a join");
		return NULL;
	}
	join->ops = device->ops;
	join->fail_at_batch = request->fail_at_batch;
	join->probe_batch_rows = request->probe_batch_rows;
	join->impl = device->ops->join_create(device->impl, request, status);
	if (join->impl == NULL)
	{
		free(join);
		return NULL;
	}
	return join;
}

/* Check the build's arguments (once, n in range, arrays given), then build. */
int
ga_join_build(GaJoin *join, const int64_t *keys, const uint32_t *rows, int64_t n,
			  GaWaitCallback wait, void *arg, GaStatus *status)
{
	if (join->build_called)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join's build side was given twice");
	if (n < 0 || n > GA_JOIN_MAX_BUILD_ROWS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join's build side has %lld rows; at most %lld are supported",
							 (long long) n, (long long) GA_JOIN_MAX_BUILD_ROWS);
	if (n > 0 && (keys == NULL || rows == NULL))
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join's build side has rows but no key or row arrays");
	join->build_called = 1;
	if (!join->ops->join_build(join->impl, keys, rows, n, wait, arg, status))
		return 0;
	join->built = 1;
	return 1;
}

const uint32_t *
ga_join_sorted_rows(const GaJoin *join)
{
	if (!join->built)
		return NULL;
	return join->ops->join_sorted_rows(join->impl);
}

GaBatch *
ga_join_next_batch(GaJoin *join, GaWaitCallback wait, void *arg, GaStatus *status)
{
	return join->ops->join_next_batch(join->impl, wait, arg, status);
}

/* Probe after a successful build; fail_at_batch counts every call. */
const GaJoinMatches *
ga_join_probe(GaJoin *join, GaBatch *batch, GaWaitCallback wait, void *arg,
			  GaStatus *status)
{
	join->probes++;
	if (join->fail_at_batch > 0 && join->probes == join->fail_at_batch)
	{
		ga_status_set(status, GA_ERR_INJECTED,
					  "injected device failure at probe batch %lld (gpuagg.debug_fail_at_batch)",
					  (long long) join->probes);
		return NULL;
	}
	if (!join->built)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "a join was probed before its build side was built");
		return NULL;
	}
	if (batch == NULL)
	{
		ga_status_set(status, GA_ERR_INVALID, "a join was probed without a batch");
		return NULL;
	}
	if (batch->nrows < 0 || batch->nrows > join->probe_batch_rows)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "a probe batch holds %lld rows but has room for %lld",
					  (long long) batch->nrows, (long long) join->probe_batch_rows);
		return NULL;
	}
	return join->ops->join_probe(join->impl, batch, wait, arg, status);
}

void
ga_join_get_stats(const GaJoin *join, GaJoinStats *stats)
{
	memset(stats, 0, sizeof(*stats));
	join->ops->join_get_stats(join->impl, stats);
}

void
ga_join_destroy(GaJoin *join)
{
	if (join == NULL)
		return;
	join->ops->join_destroy(join->impl);
	free(join);
}
