/*-------------------------------------------------------------------------
 *
 * agg_layout.c
 *	  Derives, from a GpuHashAgg description, the columns of its batches
 *	  and the device operations that compute its aggregates.
 *
 * Both the node that aggregates and the GpuAggPack nodes that pack batches
 * in parallel workers build the layout from the same description, so that
 * they agree on every column without shipping the layout around.
 *
 * Columns: one per group key (in key order), then one per distinct
 * (argument, FILTER, encoding) of the aggregates; count(x) shares a column
 * of the same source when there is one.  Operations are deduplicated, so
 * sum(x) and avg(x) share one SUM and one COUNT.  A float key adds a
 * ZERO_SIGN column and a MIN over it, a bpchar, numeric or interval key a
 * SPELLING column and a MIN over it (see batch.c).  Variance and stddev of
 * floats are one MOMENTS; corr, covar_* and regr_* one COMOMENTS over the
 * columns of x (the second argument) and y (the first).
 *
 * A join-fed aggregation's columns are then split by the side of its joins
 * that computes them (the probe side, then each build side), each side's
 * join keys after its other columns (layout_split_join).
 *
 *-------------------------------------------------------------------------
 */
#include "gpuagg.h"

#include "catalog/pg_type.h"

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
			src->encoding != GPUAGG_ENC_NUMERIC_SQUARE_LIMB)
			return i;			/* a column null exactly where x is serves count(x) */
		if (src->encoding == encoding && src->part == part && src->scale == scale)
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

/* The batch column for (attno, filter, encoding), added when new. */
static int
layout_column(GpuAggLayout *layout, AttrNumber attno, AttrNumber filter,
			  GpuAggEncoding encoding, Oid type)
{
	return layout_column_part(layout, attno, filter, encoding, type, 0, 0);
}

/*
 * A numeric aggregate: limbs (sum, avg) or a scaled int64 (min, max), and
 * counts of finite values, NaN, +Infinity and -Infinity (agg_numeric.c).
 * Variance and stddev: sum(x) as limbs, or as the SUM_INT of the scaled
 * int64 when the argument has at most 18 digits, and sum(x * x) as the
 * limbs of each value's square.
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
	out->op_count = layout_op(layout, GA_AGG_COUNT,
							  NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_FINITE));
	out->op_nan = layout_op(layout, GA_AGG_COUNT,
							NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_NAN));
	out->op_pinf = layout_op(layout, GA_AGG_COUNT,
							 NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_PINF));
	out->op_ninf = layout_op(layout, GA_AGG_COUNT,
							 NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_FLAG, GPUAGG_NUMERIC_NINF));
	if (agg->kind == GPUAGG_SUM || agg->kind == GPUAGG_AVG)
	{
		out->nlimbs = GPUAGG_NUMERIC_LIMBS;
		for (k = 0; k < GPUAGG_NUMERIC_LIMBS; k++)
			out->op_limbs[k] = layout_op(layout, GA_AGG_SUM_INT,
										 NUMERIC_COLUMN(GPUAGG_ENC_NUMERIC_LIMB, k));
		return;
	}
	if (GPUAGG_KIND_IS_VARIANCE(agg->kind))
	{
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

/* Map one SQL aggregate onto device operations (see agg_finalize.c). */
static void
layout_output(GpuAggLayout *layout, const GpuAggAggDesc *agg, GpuAggOutput *out)
{
	int			col;
	bool		is_float = agg->input_type == FLOAT4OID || agg->input_type == FLOAT8OID;

	out->kind = agg->kind;
	out->input_type = agg->input_type;
	out->result_type = agg->result_type;
	out->op_value = -1;
	out->op_inf = -1;
	out->op_nan = -1;
	out->op_pinf = -1;
	out->op_ninf = -1;
	out->numeric_scale = agg->numeric_scale;
	out->distinct_set = -1;

	if (agg->distinct)
	{
		GpuAggEncoding encoding = GpuAggKeyEncoding(agg->input_type);
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

	/* (a float8 argument's column may hold integers or float4: batch.c converts) */
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
				out->op_inf = layout_op(layout, GA_AGG_COUNT_INF, col);
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
 * Append the column of join step's (0-based) key to the split layout's
 * arrays.
 */
static void
layout_join_key(GpuAggColumnSource *sources, GaValueType *types, uint8 *from_build,
				int column, int side, int step, AttrNumber attno, Oid type)
{
	sources[column].attno = attno;
	sources[column].encoding = KeyDictTypeSupported(type) ?
		GPUAGG_ENC_DICT_JOIN_KEY : GPUAGG_ENC_JOIN_KEY;
	sources[column].join_step = (int16) step;
	sources[column].type = type;
	types[column] = GA_TYPE_INT64;
	from_build[column] = (uint8) side;
}

/*
 * Join-fed (agg_join.c): reorder the columns as the device's join spec
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
	int			ncolumns = layout->ncolumns + 2 * desc->njoin_steps;
	GpuAggColumnSource *sources = palloc0(sizeof(GpuAggColumnSource) * ncolumns);
	GaValueType *types = palloc0(sizeof(GaValueType) * ncolumns);
	uint8	   *from_build = palloc0(ncolumns);
	int		   *moved = palloc(sizeof(int) * Max(layout->ncolumns, 1));
	int			next = 0;
	int			side;
	int			c;
	int			t;

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
		if (side > 0)
		{
			layout->build_key_column[side] = next;
			layout_join_key(sources, types, from_build, next++, side, side - 1,
							desc->join_steps[side - 1].build_key_attno,
							desc->join_steps[side - 1].build_key_type);
		}
		for (t = 0; t < desc->njoin_steps; t++)
		{
			if (desc->join_steps[t].key_side != side)
				continue;
			layout->join_spec.steps[t].type = (GaAggJoinType) desc->join_steps[t].type;
			layout->join_spec.steps[t].key_column = next;
			layout_join_key(sources, types, from_build, next++, side, t,
							desc->join_steps[t].key_attno, desc->join_steps[t].key_type);
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
	layout->ncolumns = layout->maxcolumns = ncolumns;
	layout->sources = sources;
	layout->column_types = types;
	layout->from_build = from_build;
	layout->join_spec.nsteps = desc->njoin_steps;
	layout->join_spec.from_build = from_build;
}

/* Build the layout of a description, in the current memory context. */
GpuAggLayout *
GpuAggLayoutBuild(const GpuAggDesc *desc)
{
	GpuAggLayout *layout = palloc0(sizeof(GpuAggLayout));
	int			peragg = GPUAGG_NUMERIC_LIMBS + GPUAGG_SQUARE_LIMBS + 4;
	int			maxcols = 2 * desc->nkeys + desc->naggs * peragg + 1;
	int			i;

	layout->maxcolumns = maxcols;
	layout->sources = palloc0(sizeof(GpuAggColumnSource) * maxcols);
	layout->column_types = palloc0(sizeof(GaValueType) * maxcols);
	layout->key_columns = palloc0(sizeof(int) * Max(desc->nkeys, 1));
	layout->key_first_ops = palloc0(sizeof(int) * Max(desc->nkeys, 1));
	layout->ops = palloc0(sizeof(GaAggSpec) * (desc->naggs * peragg + desc->nkeys + 1));
	layout->outputs = palloc0(sizeof(GpuAggOutput) * Max(desc->naggs, 1));
	layout->distinct_sets = palloc0(sizeof(GpuAggDistinctSet) * Max(desc->naggs, 1));

	for (i = 0; i < desc->nkeys; i++)
		layout->key_columns[i] = layout_column(layout, desc->keys[i].child_attno, 0,
											   GpuAggKeyEncoding(desc->keys[i].type),
											   desc->keys[i].type);
	for (i = 0; i < desc->nkeys; i++)
	{
		GpuAggEncoding encoding = GpuAggKeyEncoding(desc->keys[i].type);

		GpuAggEncoding first = GPUAGG_ENC_NONE;

		if (encoding == GPUAGG_ENC_FLOAT8_KEY || encoding == GPUAGG_ENC_FLOAT4_KEY)
			first = GPUAGG_ENC_ZERO_SIGN;
		else if (encoding == GPUAGG_ENC_DICT_KEY && KeyDictHasSpellings(desc->keys[i].type))
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
	layout->nsides = 1;
	layout->side_first[0] = 0;
	layout->side_first[1] = layout->ncolumns;
	if (desc->njoin_steps > 0)
		layout_split_join(layout, desc);
	return layout;
}
