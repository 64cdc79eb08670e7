/*-------------------------------------------------------------------------
 *
 * hashagg/layout.c
 *	  Derives, from a GpuHashAgg description, the columns of its batches
 *	  and the device operations that compute its aggregates.
 *
 * Both the node that aggregates and the GpuAggPack nodes that pack batches
 * in parallel workers build the layout from the same description, so that
 * they agree on every column without shipping the layout around.
 *
 * Columns: one per group key (in key order), then one per distinct (argument,
 * FILTER, encoding) of the aggregates; count(x) shares a column of the same
 * source when there is one.  Operations are deduplicated, so sum(x) and
 * avg(x) share one SUM and one COUNT; avg of a float adds its MIN and MAX
 * (shared with min(x) and max(x)) for PostgreSQL's overflow error.  A float
 * key adds a ZERO_SIGN column and a MIN over it, a bpchar, numeric or
 * interval key a SPELLING column and a MIN over it (see batch/builder.c).
 * Variance and stddev of floats are one MOMENTS; corr, covar_* and regr_*
 * one COMOMENTS over the columns of x (the second argument) and y (the
 * first).
 *
 * An aggjoin's columns are then split by the side of its joins
 * that computes them (the probe side, then each build side), each side's
 * join keys after its other columns (layout_split_join).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "batch/key_dict.h"
#include "finalize/numeric.h"
#include "hashagg/catalog.h"
#include "hashagg/derived.h"
#include "hashagg/desc.h"
#include "hashagg/layout.h"

/*
 * The batch column for (attno, filter, encoding), added when new.  A
 * validity-only column (count(x)) reuses any column of the same source.
 */
static int
layout_column_part(GpuAggLayout *layout, AttrNumber attno, AttrNumber filter,
				   GpuAggEncoding encoding, Oid type, int scale, int part)
{
	int			i;

	for (i = 0; i < layout->ncolumns; i++)
	{
		GpuAggColumnSource *src = &layout->sources[i];

		if (src->attno != attno || src->filter_attno != filter)
			continue;
		if (encoding == GPUAGG_ENC_NONE && src->encoding != GPUAGG_ENC_NUMERIC_FLAG &&
			src->encoding != GPUAGG_ENC_NUMERIC_LIMB &&
			src->encoding != GPUAGG_ENC_NUMERIC_INT64 &&
			src->encoding != GPUAGG_ENC_NUMERIC_SQUARE_LIMB &&
			src->encoding != GPUAGG_ENC_DERIVED)
			return i;			/* a column null exactly where x is serves count(x) */
		if (src->encoding == encoding && src->part == part && src->scale == scale &&
			src->derived == 0)
			return i;
	}
	if (i >= layout->maxcolumns)
		elog(ERROR, "gpuagg: too many batch columns");
	layout->sources[i].attno = attno;
	layout->sources[i].filter_attno = filter;
	layout->sources[i].encoding = encoding;
	layout->sources[i].type = type;
	layout->sources[i].scale = scale;
	layout->sources[i].part = part;
	layout->column_types[i] = GpuAggEncodingType(encoding);
	return layout->ncolumns++;
}

static int	layout_op(GpuAggLayout *layout, GaAggOp op, int column);
static int	layout_op2(GpuAggLayout *layout, GaAggOp op, int column, int column2);
static int	layout_column(GpuAggLayout *layout, AttrNumber attno, AttrNumber filter,
						  GpuAggEncoding encoding, Oid type);

/* The batch column for (attno, filter, encoding), added when new. */
static int
layout_column(GpuAggLayout *layout, AttrNumber attno, AttrNumber filter,
			  GpuAggEncoding encoding, Oid type)
{
	return layout_column_part(layout, attno, filter, encoding, type, 0, 0);
}

/*
 * The column the device derives as `part` (limb `limb`) of expression
 * `expr` of the layout (hashagg/derived.c), added when new, with its entry in
 * the request's derived columns: the program, its operands' columns added
 * first (a numeric operand's scaled int64 and NaN flag, an integer
 * operand's value).
 */
static int
layout_derived_column(GpuAggLayout *layout, int expr, GaDerivedPart part, int limb)
{
	const GpuAggDerivedDesc *program = layout->exprs[expr];
	GaDerivedColumn derived = {0};
	int			column;
	int			i;

	for (i = 0; i < layout->ncolumns; i++)
	{
		GpuAggColumnSource *src = &layout->sources[i];

		if (src->derived == expr + 1 && src->part == (int16) part && src->scale == limb)
			return i;
	}
	derived.part = part;
	derived.limb = limb;
	derived.nsteps = program->nsteps;
	for (i = 0; i < program->nsteps; i++)
	{
		const GpuAggDerivedStep *step = &program->steps[i];
		GaExprStep *out = &derived.steps[i];

		out->op = (GaExprOp) step->op;
		out->nan_column = -1;
		out->power = step->power;
		out->constant = step->constant;
		if (step->op != GA_EXPR_COLUMN)
			continue;
		if (step->type == NUMERICOID)
		{
			out->column = layout_column_part(layout, step->attno, 0, GPUAGG_ENC_NUMERIC_OPERAND,
											 NUMERICOID, step->scale, 0);
			out->nan_column = layout_column_part(layout, step->attno, 0, GPUAGG_ENC_NUMERIC_FLAG,
												 NUMERICOID, step->scale, GPUAGG_NUMERIC_NAN);
		}
		else
			out->column = layout_column(layout, step->attno, 0,
										GpuAggInputEncoding(step->type), step->type);
	}

	if (layout->ncolumns >= layout->maxcolumns)
		elog(ERROR, "gpuagg: too many batch columns");
	column = layout->ncolumns++;
	layout->sources[column].encoding = GPUAGG_ENC_DERIVED;
	layout->sources[column].type = NUMERICOID;
	layout->sources[column].part = (int16) part;
	layout->sources[column].scale = (int16) limb;
	layout->sources[column].derived = (int16) (expr + 1);
	layout->column_types[column] = part == GA_DERIVED_NAN ? GA_TYPE_NONE : GA_TYPE_INT64;
	derived.column = column;
	layout->derived[layout->nderived++] = derived;
	return column;
}

/* Whether two programs of hashagg/derived.c are the same, step by step. */
static bool
derived_equal(const GpuAggDerivedDesc *a, const GpuAggDerivedDesc *b)
{
	int			i;

	if (a->nsteps != b->nsteps)
		return false;
	for (i = 0; i < a->nsteps; i++)
	{
		const GpuAggDerivedStep *x = &a->steps[i];
		const GpuAggDerivedStep *y = &b->steps[i];

		if (x->op != y->op || x->scale != y->scale || x->attno != y->attno ||
			x->type != y->type || x->power != y->power || x->constant != y->constant)
			return false;
	}
	return true;
}

/*
 * A numeric aggregate whose argument the device computes (hashagg/derived.c):
 * sum and avg from the 128-bit sum of the int64 value (at most 18 digits)
 * or of as few limbs as hold it, min and max of the int64 value; its finite
 * values counted from that column, its NaN from the NaN flag.  Such an
 * argument is never infinite.
 */
static void
layout_derived_output(GpuAggLayout *layout, const GpuAggAggDesc *agg, GpuAggOutput *out)
{
	int			expr;
	int			value;
	int			k;

	for (expr = 0; expr < layout->nexprs; expr++)
		if (derived_equal(layout->exprs[expr], agg->derived))
			break;
	if (expr == layout->nexprs)
		layout->exprs[layout->nexprs++] = agg->derived;

	out->op_nan = layout_op(layout, GA_AGG_COUNT,
							layout_derived_column(layout, expr, GA_DERIVED_NAN, 0));
	out->op_pinf = -1;
	out->op_ninf = -1;
	if ((agg->kind == GPUAGG_SUM || agg->kind == GPUAGG_AVG) &&
		agg->numeric_precision > GPUAGG_NUMERIC_INT64_DIGITS)
	{
		out->nlimbs = GpuAggLimbsForDigits(agg->numeric_precision);
		for (k = 0; k < out->nlimbs; k++)
			out->op_limbs[k] = layout_op(layout, GA_AGG_SUM_INT,
										 layout_derived_column(layout, expr, GA_DERIVED_LIMB, k));
		out->op_count = layout_op(layout, GA_AGG_COUNT,
								  layout_derived_column(layout, expr, GA_DERIVED_LIMB, 0));
		return;
	}
	value = layout_derived_column(layout, expr, GA_DERIVED_INT64, 0);
	out->op_count = layout_op(layout, GA_AGG_COUNT, value);
	out->op_value = layout_op(layout,
							  agg->kind == GPUAGG_MIN ? GA_AGG_MIN :
							  agg->kind == GPUAGG_MAX ? GA_AGG_MAX : GA_AGG_SUM_INT,
							  value);
}

/*
 * A numeric aggregate: limbs or a scaled int64 (sum, avg), a scaled int64
 * (min, max), and counts of finite values, NaN, +Infinity and -Infinity
 * (finalize/numeric.c).  sum(x) is the SUM_INT of the scaled int64 when the
 * argument has at most 18 digits, else of as few limbs as hold it.
 * Variance and stddev add sum(x * x) as the limbs of each value's square.
 * An argument the device computes: layout_derived_output.
 */
static void
layout_numeric_output(GpuAggLayout *layout, const GpuAggAggDesc *agg, GpuAggOutput *out)
{
	int			k;
	int			col;

#define NUMERIC_COLUMN(enc, part) \
	layout_column_part(layout, agg->arg_attno, agg->filter_attno, (enc), NUMERICOID, \
					   agg->numeric_scale, (part))

	out->numeric_scale = agg->numeric_scale;
	if (agg->derived != NULL)
	{
		layout_derived_output(layout, agg, out);
		return;
	}
	out->op_count = layout_op(layout, GA_AGG_COUNT,
							  NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_FINITE));
	out->op_nan = layout_op(layout, GA_AGG_COUNT,
							NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_NAN));
	out->op_pinf = layout_op(layout, GA_AGG_COUNT,
							 NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_PINF));
	out->op_ninf = layout_op(layout, GA_AGG_COUNT,
							 NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_NINF));
	if (agg->kind == GPUAGG_SUM || agg->kind == GPUAGG_AVG ||
		GPUAGG_KIND_IS_VARIANCE(agg->kind))
	{
		/* sum(x): the 128-bit sum of int64 values, or as few limbs as hold x */
		if (agg->numeric_precision <= GPUAGG_NUMERIC_INT64_DIGITS)
			out->op_value = layout_op(layout, GA_AGG_SUM_INT,
									  NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_INT64, 0));
		else
		{
			out->nlimbs = GpuAggLimbsForDigits(agg->numeric_precision);
			for (k = 0; k < out->nlimbs; k++)
				out->op_limbs[k] = layout_op(layout, GA_AGG_SUM_INT,
											 NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_LIMB, k));
		}
		if (!GPUAGG_KIND_IS_VARIANCE(agg->kind))
			return;
		out->nsquares = GpuAggLimbsForDigits(2 * agg->numeric_precision);
		for (k = 0; k < out->nsquares; k++)
			out->op_squares[k] = layout_op(layout, GA_AGG_SUM_INT,
										   NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_SQUARE_LIMB, k));
		return;
	}
	col = NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_INT64, 0);
	out->op_value = layout_op(layout, agg->kind == GPUAGG_MIN ? GA_AGG_MIN : GA_AGG_MAX, col);
#undef NUMERIC_COLUMN
}

/* The device operation (op, column, column2 for COMOMENTS), added when new. */
static int
layout_op2(GpuAggLayout *layout, GaAggOp op, int column, int column2)
{
	int			i;

	for (i = 0; i < layout->nops; i++)
		if (layout->ops[i].op == op && layout->ops[i].column == column &&
			(op != GA_AGG_COMOMENTS || layout->ops[i].column2 == column2))
			return i;
	layout->ops[i].op = op;
	layout->ops[i].column = column;
	layout->ops[i].column2 = column2;
	return layout->nops++;
}

/* The device operation (op, column), added when new. */
static int
layout_op(GpuAggLayout *layout, GaAggOp op, int column)
{
	return layout_op2(layout, op, column, -1);
}

/* Map one SQL aggregate onto device operations (see finalize/finalize.c). */
static void
layout_output(GpuAggLayout *layout, const GpuAggAggDesc *agg, GpuAggOutput *out)
{
	int			col;
	bool		is_float = agg->input_type == FLOAT4OID || agg->input_type == FLOAT8OID;

	out->kind = agg->kind;
	out->input_type = agg->input_type;
	out->result_type = agg->result_type;
	out->op_value = -1;
	out->op_nonfinite = -1;
	out->op_min = -1;
	out->op_max = -1;
	out->op_nan = -1;
	out->op_pinf = -1;
	out->op_ninf = -1;
	out->numeric_scale = agg->numeric_scale;
	out->distinct_set = -1;

	if (agg->distinct)
	{
		GpuAggEncoding encoding = agg->as_bytes ? GPUAGG_ENC_STRING_KEY :
			GpuAggKeyEncoding(agg->input_type);
		int			column = layout_column(layout, agg->arg_attno, agg->filter_attno,
										   encoding, agg->input_type);
		int			d;

		for (d = 0; d < layout->ndistinct; d++)
			if (layout->distinct_sets[d].column == column)
				break;
		if (d == layout->ndistinct)
		{
			layout->distinct_sets[d].column = column;
			layout->distinct_sets[d].encoding = encoding;
			if (agg->as_bytes)
			{
				layout->distinct_sets[d].string_width = agg->arg_width;
				layout->string_width = Max(layout->string_width, agg->arg_width);
			}
			layout->ndistinct++;
		}
		out->distinct_set = d;
		return;
	}

	if (agg->kind == GPUAGG_COUNT_STAR && agg->filter_attno == 0)
	{
		out->op_count = layout_op(layout, GA_AGG_COUNT_ROWS, -1);
		return;
	}
	if (agg->kind == GPUAGG_COUNT_STAR || agg->kind == GPUAGG_COUNT)
	{
		col = layout_column(layout, agg->arg_attno, agg->filter_attno, GPUAGG_ENC_NONE,
							agg->input_type);
		out->op_count = layout_op(layout, GA_AGG_COUNT, col);
		return;
	}
	if (agg->input_type == NUMERICOID)
	{
		layout_numeric_output(layout, agg, out);
		return;
	}
	if (OidIsValid(agg->final_fn))
	{
		out->final_fn = palloc(sizeof(FmgrInfo));
		fmgr_info(agg->final_fn, out->final_fn);
	}
	if (agg->kind == GPUAGG_FLOAT_MOMENTS)
	{
		col = layout_column(layout, agg->arg_attno, agg->filter_attno,
							GpuAggInputEncoding(agg->input_type), agg->arg_source_type);
		out->op_value = layout_op(layout, GA_AGG_MOMENTS, col);
		return;
	}
	if (GPUAGG_KIND_IS_COMOMENTS(agg->kind))
	{
		/* corr(y, x): float8_regr_accum()'s x is the second argument */
		int			x = layout_column(layout, agg->arg2_attno, agg->filter_attno,
									  GPUAGG_ENC_FLOAT8, agg->arg2_source_type);
		int			y = layout_column(layout, agg->arg_attno, agg->filter_attno,
									  GPUAGG_ENC_FLOAT8, agg->arg_source_type);

		out->op_value = layout_op2(layout, GA_AGG_COMOMENTS, x, y);
		return;
	}

	/* (a float8 argument's column may hold integers or float4: batch/builder.c converts) */
	col = layout_column(layout, agg->arg_attno, agg->filter_attno,
						GpuAggInputEncoding(agg->input_type), agg->arg_source_type);
	out->op_count = layout_op(layout, GA_AGG_COUNT, col);
	switch (agg->kind)
	{
		case GPUAGG_SUM:
		case GPUAGG_AVG:
			if (agg->kind == GPUAGG_SUM && agg->input_type == FLOAT4OID)
				out->op_value = layout_op(layout, GA_AGG_SUM_FLOAT32, col);
			else if (is_float)
				out->op_value = layout_op(layout, GA_AGG_SUM_FLOAT64, col);
			else
				out->op_value = layout_op(layout, GA_AGG_SUM_INT, col);
			if (is_float)
				out->op_nonfinite = layout_op(layout, GA_AGG_COUNT_NONFINITE, col);
			if (is_float && agg->kind == GPUAGG_AVG)
			{
				/* the spread, for float8_accum()'s overflow (finalize.c) */
				out->op_min = layout_op(layout, GA_AGG_MIN, col);
				out->op_max = layout_op(layout, GA_AGG_MAX, col);
			}
			break;
		case GPUAGG_VAR_SAMP:
		case GPUAGG_VAR_POP:
		case GPUAGG_STDDEV_SAMP:
		case GPUAGG_STDDEV_POP:
			/* N (above), the exact sum and the exact sum of squares */
			out->op_value = layout_op(layout, GA_AGG_SUM_INT, col);
			/* squares of int2: 30 bits, int4: 62 bits, int8: up to 2^126 */
			out->nsquares = agg->input_type == INT2OID ? 1 :
				agg->input_type == INT4OID ? 2 : 4;
			{
				int			k;

				for (k = 0; k < out->nsquares; k++)
					out->op_squares[k] =
						layout_op(layout, GA_AGG_SUM_INT,
								  layout_column_part(layout, agg->arg_attno, agg->filter_attno,
													 GPUAGG_ENC_SQUARE_LIMB, agg->input_type,
													 0, k));
			}
			break;
		case GPUAGG_MIN:
		case GPUAGG_BOOL_AND:
			out->op_value = layout_op(layout, GA_AGG_MIN, col);
			break;
		case GPUAGG_MAX:
		case GPUAGG_BOOL_OR:
			out->op_value = layout_op(layout, GA_AGG_MAX, col);
			break;
		default:
			elog(ERROR, "gpuagg: unexpected aggregate kind %d", (int) agg->kind);
	}
}

/* The side computing child column attno (0: none, computed by the probe side). */
static int
layout_side(const GpuAggDesc *desc, AttrNumber attno)
{
	return attno > 0 ? desc->child_side[attno - 1] : 0;
}

/*
 * Append the column of join step's (0-based) key number key to the split
 * layout's arrays: its bytes (as_bytes), a dictionary id or an exact value.
 */
static void
layout_join_key(GpuAggColumnSource *sources, GaValueType *types, uint8 *from_build,
				int column, int side, int step, int key, AttrNumber attno, Oid type,
				bool as_bytes)
{
	sources[column].attno = attno;
	sources[column].encoding = as_bytes ? GPUAGG_ENC_STRING_KEY :
		KeyDictTypeSupported(type) ? GPUAGG_ENC_DICT_JOIN_KEY : GPUAGG_ENC_JOIN_KEY;
	sources[column].join_key = (int16) (step * GA_AGG_MAX_JOIN_KEYS + key);
	sources[column].type = type;
	types[column] = GpuAggEncodingType(sources[column].encoding);
	from_build[column] = (uint8) side;
}

/* Point a filter program's operands at their columns' new places. */
static void
layout_move_filter(GaFilterStep *steps, int nsteps, const int *moved)
{
	int			c;

	for (c = 0; c < nsteps; c++)
	{
		GaFilterStep *step = &steps[c];

		if (step->op == GA_FILTER_BOOL || step->op == GA_FILTER_COMPARE)
			step->column = moved[step->column];
		if (step->op == GA_FILTER_COMPARE)
			step->column2 = moved[step->column2];
	}
}

/*
 * Aggjoin (aggjoin/aggjoin.h): reorder the columns as the device's join spec
 * wants them, side by side: the probe side's columns (those of its
 * expressions, and those of no expression), then each build side's, bottom
 * join first; each side's keys after its other columns: a build side's own
 * key (the build reads it; no operation does), then the outer keys of the
 * joins it gives them to.  Point each column's source at its side's child,
 * and every key, operation and DISTINCT set at the column's new place.
 */
static void
layout_split_join(GpuAggLayout *layout, const GpuAggDesc *desc)
{
	int			nsides = desc->njoin_steps + 1;
	int			ncolumns = layout->ncolumns;
	GpuAggColumnSource *sources;
	GaValueType *types;
	uint8	   *from_build;
	int		   *moved = palloc(sizeof(int) * Max(layout->ncolumns, 1));
	int			next = 0;
	int			side;
	int			c;
	int			t;
	int			k;

	for (t = 0; t < desc->njoin_steps; t++)
	{
		ncolumns += 2 * desc->join_steps[t].nkeys;
		layout->join_spec.steps[t].type = (GaAggJoinType) desc->join_steps[t].type;
		/*
		 * one key: key_column; several, or one that travels as bytes: the
		 * device hashes and rechecks them
		 */
		layout->join_spec.steps[t].nkeys =
			desc->join_steps[t].nkeys > 1 ? desc->join_steps[t].nkeys : 0;
		for (k = 0; k < desc->join_steps[t].nkeys; k++)
			if (desc->join_steps[t].keys[k].as_bytes)
				layout->join_spec.steps[t].hashed = 1;
		if (layout->join_spec.steps[t].hashed)
			layout->join_spec.steps[t].nkeys = desc->join_steps[t].nkeys;
	}
	sources = palloc0(sizeof(GpuAggColumnSource) * ncolumns);
	types = palloc0(sizeof(GaValueType) * ncolumns);
	from_build = palloc0(ncolumns);
	for (side = 0; side < nsides; side++)
	{
		layout->side_first[side] = next;
		for (c = 0; c < layout->ncolumns; c++)
		{
			GpuAggColumnSource *src = &layout->sources[c];

			/* a column of no expression: its FILTER's side, else the probe side */
			if (layout_side(desc, src->attno > 0 ? src->attno : src->filter_attno) != side)
				continue;
			if (src->attno > 0 && src->filter_attno > 0 &&
				layout_side(desc, src->filter_attno) != side)
				elog(ERROR, "gpuagg: a batch column mixes two sides of its joins");
			sources[next] = *src;
			if (src->attno > 0)
				sources[next].attno = desc->child_side_attno[src->attno - 1];
			if (src->filter_attno > 0)
				sources[next].filter_attno = desc->child_side_attno[src->filter_attno - 1];
			types[next] = layout->column_types[c];
			from_build[next] = (uint8) side;
			moved[c] = next++;
		}
		for (k = 0; side > 0 && k < desc->join_steps[side - 1].nkeys; k++)
		{
			layout->build_key_columns[side][k] = next;
			layout->join_spec.steps[side - 1].build_key_columns[k] = next;
			layout_join_key(sources, types, from_build, next++, side, side - 1, k,
							desc->join_steps[side - 1].keys[k].build_attno,
							desc->join_steps[side - 1].keys[k].build_type,
							desc->join_steps[side - 1].keys[k].as_bytes);
		}
		for (t = 0; t < desc->njoin_steps; t++)
		{
			GaAggJoinStep *step = &layout->join_spec.steps[t];

			for (k = 0; k < desc->join_steps[t].nkeys; k++)
			{
				if (desc->join_steps[t].keys[k].side != side)
					continue;
				step->key_columns[k] = next;
				if (k == 0)
					step->key_column = next;
				layout_join_key(sources, types, from_build, next++, side, t, k,
								desc->join_steps[t].keys[k].attno,
								desc->join_steps[t].keys[k].type,
								desc->join_steps[t].keys[k].as_bytes);
			}
		}
	}
	layout->nsides = nsides;
	layout->side_first[nsides] = next;
	Assert(next == ncolumns);

	for (c = 0; c < desc->nkeys; c++)
		layout->key_columns[c] = moved[layout->key_columns[c]];
	for (c = 0; c < layout->nops; c++)
	{
		if (layout->ops[c].column >= 0)
			layout->ops[c].column = moved[layout->ops[c].column];
		if (layout->ops[c].op == GA_AGG_COMOMENTS)
			layout->ops[c].column2 = moved[layout->ops[c].column2];
	}
	for (c = 0; c < layout->ndistinct; c++)
		layout->distinct_sets[c].column = moved[layout->distinct_sets[c].column];
	layout_move_filter(layout->join_spec.filter, layout->join_spec.nfilter, moved);
	for (t = 0; t < desc->njoin_steps; t++)
		layout_move_filter(layout->join_spec.steps[t].filter,
						   layout->join_spec.steps[t].nfilter, moved);
	for (c = 0; c < layout->nderived; c++)
	{
		GaDerivedColumn *derived = &layout->derived[c];

		derived->column = moved[derived->column];
		for (t = 0; t < derived->nsteps; t++)
		{
			if (derived->steps[t].op != GA_EXPR_COLUMN)
				continue;
			derived->steps[t].column = moved[derived->steps[t].column];
			if (derived->steps[t].nan_column >= 0)
				derived->steps[t].nan_column = moved[derived->steps[t].nan_column];
		}
	}
	layout->ncolumns = layout->maxcolumns = ncolumns;
	layout->sources = sources;
	layout->column_types = types;
	layout->from_build = from_build;
	layout->join_spec.nsteps = desc->njoin_steps;
	layout->join_spec.from_build = from_build;
}

/*
 * The column of child column attno (of a key dictionary type) as an id of the
 * dictionary `pair` names, which it shares with the other operand of its
 * filter comparison (batch/builder.c shares the dictionaries of columns whose
 * join_key is the same): the pair's own column, never another's.
 */
static int
layout_filter_dict_column(GpuAggLayout *layout, AttrNumber attno, Oid type, int16 pair)
{
	int			column = layout_column_part(layout, attno, 0, GPUAGG_ENC_DICT_JOIN_KEY, type,
											0, pair);

	layout->sources[column].join_key = pair;
	return column;
}

/*
 * A join filter (aggjoin/filter.c: the one after the chain, or a step's
 * own) into the join spec's program steps[0 .. *nsteps), each
 * operand a column of its child column in its type's input encoding
 * (integers, dates and timestamps as they are, floats, bools as 0/1);
 * layout_split_join moves its columns with the others.
 */
static void
layout_filter(GpuAggLayout *layout, const GpuAggFilterDesc *filter, GaFilterStep *steps,
			  int *nsteps)
{
	int			i;

	*nsteps = filter->nsteps;
	for (i = 0; i < filter->nsteps; i++)
	{
		GaFilterStep *step = &steps[i];

		step->op = (GaFilterOp) filter->steps[i].op;
		step->cmp = (GaCompareOp) filter->steps[i].cmp;
		if (step->op == GA_FILTER_COMPARE && KeyDictTypeSupported(filter->steps[i].type))
		{
			/* = or <> of a dictionary type: both operands ids of one dictionary */
			int16		pair = (int16) (GPUAGG_FILTER_DICT_FIRST + layout->nfilter_dicts++);

			step->column = layout_filter_dict_column(layout, filter->steps[i].attno,
													 filter->steps[i].type, pair);
			step->column2 = layout_filter_dict_column(layout, filter->steps[i].attno2,
													  filter->steps[i].type2, pair);
			continue;
		}
		if (step->op == GA_FILTER_BOOL || step->op == GA_FILTER_COMPARE)
			step->column = layout_column(layout, filter->steps[i].attno, 0,
										 GpuAggInputEncoding(filter->steps[i].type),
										 filter->steps[i].type);
		if (step->op == GA_FILTER_COMPARE)
			step->column2 = layout_column(layout, filter->steps[i].attno2, 0,
										  GpuAggInputEncoding(filter->steps[i].type2),
										  filter->steps[i].type2);
	}
}

/*
 * How a group key travels: as its bytes, as a scaled integer (a numeric
 * column of bounded precision), or by its type's encoding.
 */
static GpuAggEncoding
layout_key_encoding(const GpuAggKeyDesc *key)
{
	if (key->as_bytes)
		return GPUAGG_ENC_STRING_KEY;
	if (key->type == NUMERICOID && key->numeric_scale >= 0)
		return GPUAGG_ENC_NUMERIC_KEY;
	return GpuAggKeyEncoding(key->type);
}

/* Build the layout of a description, in the current memory context. */
GpuAggLayout *
GpuAggLayoutBuild(const GpuAggDesc *desc)
{
	GpuAggLayout *layout = palloc0(sizeof(GpuAggLayout));
	int			peragg = GPUAGG_NUMERIC_LIMBS + GPUAGG_SQUARE_LIMBS + 4;
	int			maxcols = 2 * desc->nkeys + desc->naggs * peragg + 1;
	int			i;

	/* an argument the device computes: two columns an operand, six results */
	for (i = 0; i < desc->naggs; i++)
		if (desc->aggs[i].derived != NULL)
			maxcols += 2 * desc->aggs[i].derived->nsteps + GPUAGG_NUMERIC_LIMBS + 2;
	maxcols += 2 * desc->filter.nsteps;
	for (i = 0; i < desc->njoin_steps; i++)
		maxcols += 2 * desc->join_steps[i].filter.nsteps;

	layout->maxcolumns = maxcols;
	layout->sources = palloc0(sizeof(GpuAggColumnSource) * maxcols);
	layout->column_types = palloc0(sizeof(GaValueType) * maxcols);
	layout->key_columns = palloc0(sizeof(int) * Max(desc->nkeys, 1));
	layout->key_first_ops = palloc0(sizeof(int) * Max(desc->nkeys, 1));
	layout->ops = palloc0(sizeof(GaAggSpec) * (desc->naggs * peragg + desc->nkeys + 1));
	layout->outputs = palloc0(sizeof(GpuAggOutput) * Max(desc->naggs, 1));
	layout->distinct_sets = palloc0(sizeof(GpuAggDistinctSet) * Max(desc->naggs, 1));
	layout->derived = palloc0(sizeof(GaDerivedColumn) * maxcols);
	layout->exprs = palloc0(sizeof(GpuAggDerivedDesc *) * Max(desc->naggs, 1));

	for (i = 0; i < desc->nkeys; i++)
	{
		layout->key_columns[i] = layout_column_part(layout, desc->keys[i].child_attno, 0,
													layout_key_encoding(&desc->keys[i]),
													desc->keys[i].type,
													Max(desc->keys[i].numeric_scale, 0), 0);
		if (desc->keys[i].as_bytes)
		{
			layout->key_string_bytes += desc->keys[i].width;
			layout->string_width = Max(layout->string_width, desc->keys[i].width);
		}
	}
	for (i = 0; i < desc->nkeys; i++)
	{
		GpuAggEncoding encoding = layout_key_encoding(&desc->keys[i]);

		GpuAggEncoding first = GPUAGG_ENC_NONE;

		if (encoding == GPUAGG_ENC_FLOAT8_KEY || encoding == GPUAGG_ENC_FLOAT4_KEY)
			first = GPUAGG_ENC_ZERO_SIGN;
		else if (encoding == GPUAGG_ENC_DICT_KEY && KeyDictHasSpellings(desc->keys[i].type) &&
				 !desc->keys[i].one_spelling)
			first = GPUAGG_ENC_SPELLING;
		layout->key_first_ops[i] = -1;
		if (first != GPUAGG_ENC_NONE)
			layout->key_first_ops[i] =
				layout_op(layout, GA_AGG_MIN,
						  layout_column(layout, desc->keys[i].child_attno, 0,
										first, desc->keys[i].type));
	}
	/* typed inputs first, so that count(x) can share their columns */
	for (i = 0; i < desc->naggs; i++)
		if ((desc->aggs[i].kind != GPUAGG_COUNT && desc->aggs[i].kind != GPUAGG_COUNT_STAR) ||
			desc->aggs[i].distinct)
			layout_output(layout, &desc->aggs[i], &layout->outputs[i]);
	for (i = 0; i < desc->naggs; i++)
		if ((desc->aggs[i].kind == GPUAGG_COUNT || desc->aggs[i].kind == GPUAGG_COUNT_STAR) &&
			!desc->aggs[i].distinct)
			layout_output(layout, &desc->aggs[i], &layout->outputs[i]);
	layout_filter(layout, &desc->filter, layout->join_spec.filter, &layout->join_spec.nfilter);
	for (i = 0; i < desc->njoin_steps; i++)
		layout_filter(layout, &desc->join_steps[i].filter, layout->join_spec.steps[i].filter,
					  &layout->join_spec.steps[i].nfilter);
	layout->nsides = 1;
	layout->side_first[0] = 0;
	layout->side_first[1] = layout->ncolumns;
	if (desc->njoin_steps > 0)
		layout_split_join(layout, desc);
	return layout;
}

/*
 * The bytes a local batch of `rows` rows starts each string column with:
 * the rows at the widest column's average width (batch/builder.c grows a
 * column past that where the values are longer).
 */
int64
GpuAggLayoutStringBytes(const GpuAggLayout *layout, int64 rows)
{
	return rows * (int64) Max(layout->string_width, 1);
}
