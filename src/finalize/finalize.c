/*-------------------------------------------------------------------------
 *
 * finalize/finalize.c
 *	  Turns a device's per-group accumulators into the datums PostgreSQL's
 *	  own final functions would return.
 *
 * The rules follow PostgreSQL 15's aggregates exactly:
 *	count				int8, 0 for no rows
 *	sum(int2/int4)		int8; sum(int8) numeric from the exact 128-bit sum
 *	avg(int2/4/8)		numeric_div(sum, count), hence PostgreSQL's display scale
 *	sum(float4)			float4; sum(float8) float8; avg(float4/8) float8 = sum / n;
 *						"value out of range: overflow" when the sum is not
 *						finite though every input was (float_overflow_error),
 *						and for avg also where float8_accum()'s running sum
 *						of squares overflows (the rule: finalize/moments.c)
 *	min, max			the input type
 *	bool_and, every, bool_or	bool
 *	var_samp, variance, var_pop, stddev_samp, stddev, stddev_pop of integers
 *	and numerics	numeric, PostgreSQL's own final function over the exact
 *					count, sum and sum of squares (finalize/variance.c)
 *	sum, avg, min, max(numeric)	numeric, see finalize_numeric()
 *	variance and stddev of floats, corr, covar_*, regr_*	PostgreSQL's final
 *					functions over the state rebuilt from device moments
 *					(finalize/moments.c)
 * and everything but count is NULL when the group had no non-null input.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "finalize/finalize.h"
#include "finalize/numeric.h"
#include "finalize/stats.h"

/* The exact value of a device 128-bit sum. */
static int128
int128_from_device(const GaInt128 *value)
{
	return (int128) (((uint128) (uint64) value->hi << 64) | (uint128) value->lo);
}

/* A numeric datum holding an int128 (display scale 0). */
Datum
GpuAggInt128ToNumeric(int128 value)
{
	return GpuAggInt128Scaled(value, 0);
}

/*
 * Raise PostgreSQL's overflow error for a float sum that is not finite
 * though every input was.  Infinite, or NaN: the device adds partial sums
 * (blocks, copies of an entry), and two that overflowed the opposite ways
 * add up to NaN where PostgreSQL's running sum had stopped at the overflow.
 */
static void
check_float_sum(double sum, int64 nonfinite_inputs)
{
	if (!isfinite(sum) && nonfinite_inputs == 0)
		float_overflow_error();
}

/* A min/max result (int64 or double on the device) as a datum of type. */
static Datum
extreme_to_datum(Oid type, const void *values, int64 group)
{
	int64		i = ((const int64 *) values)[group];
	double		d = ((const double *) values)[group];

	switch (type)
	{
		case INT2OID:
			return Int16GetDatum((int16) i);
		case INT4OID:
			return Int32GetDatum((int32) i);
		case DATEOID:
			return DateADTGetDatum((DateADT) i);
		case INT8OID:
			return Int64GetDatum(i);
		case TIMESTAMPOID:
			return TimestampGetDatum((Timestamp) i);
		case TIMESTAMPTZOID:
			return TimestampTzGetDatum((TimestampTz) i);
		case TIMEOID:
			return TimeADTGetDatum((TimeADT) i);
		case FLOAT4OID:
			return Float4GetDatum((float4) d);
		case FLOAT8OID:
			return Float8GetDatum(d);
	}
	elog(ERROR, "gpuagg: unexpected min/max type %u", type);
	return (Datum) 0;			/* keep compiler quiet */
}

/*
 * Element `group` of the int64 result array of device operation op; 0 for
 * no operation (op -1: a count that cannot be but zero, as the infinities
 * of a numeric argument the device computes).
 */
static int64
op_int64(const GaAggResult *result, int op, int64 group)
{
	if (op < 0)
		return 0;
	return ((const int64 *) result->values[op])[group];
}

/*
 * The exact sum of a group's values as numeric at the argument's scale:
 * from limb sums, or from the 128-bit sum of the (scaled) values.
 */
static Datum
exact_sum(const GpuAggOutput *output, const GaAggResult *result, int64 group)
{
	const GaInt128 *limbs[GPUAGG_NUMERIC_LIMBS];
	int			k;

	if (output->nlimbs == 0)
		return GpuAggInt128Scaled(int128_from_device(&((const GaInt128 *)
														result->values[output->op_value])[group]),
								  output->numeric_scale);
	for (k = 0; k < output->nlimbs; k++)
		limbs[k] = (const GaInt128 *) result->values[output->op_limbs[k]];
	return GpuAggNumericFromLimbs(limbs, output->nlimbs, group, output->numeric_scale);
}

/* The exact sum of the squares of a group's values, at twice the scale. */
static Datum
exact_sum_of_squares(const GpuAggOutput *output, const GaAggResult *result, int64 group)
{
	const GaInt128 *limbs[GPUAGG_SQUARE_LIMBS];
	int			k;

	for (k = 0; k < output->nsquares; k++)
		limbs[k] = (const GaInt128 *) result->values[output->op_squares[k]];
	return GpuAggNumericFromLimbs(limbs, output->nsquares, group, 2 * output->numeric_scale);
}

/*
 * sum, avg, min, max over numeric (finalize/numeric.c): PostgreSQL's rules
 * for NaN and the infinities, else the exact finite result at the argument's
 * scale.  Variance and stddev: PostgreSQL's final function
 * (finalize/variance.c).
 */
static Datum
finalize_numeric(const GpuAggOutput *output, const GaAggResult *result,
				 int64 group, bool *isnull)
{
	int64		finite = op_int64(result, output->op_count, group);
	int64		nan = op_int64(result, output->op_nan, group);
	int64		pinf = op_int64(result, output->op_pinf, group);
	int64		ninf = op_int64(result, output->op_ninf, group);

	*isnull = false;
	if (GPUAGG_KIND_IS_VARIANCE(output->kind))
		return GpuAggVarianceResult(output->kind, finite, nan, pinf, ninf,
									exact_sum(output, result, group),
									exact_sum_of_squares(output, result, group),
									output->numeric_scale, isnull);
	if (finite + nan + pinf + ninf == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (output->kind)
	{
		case GPUAGG_SUM:
		case GPUAGG_AVG:
			{
				Datum		sum;

				if (GpuAggNumericSpecialResult(finite, nan, pinf, ninf, &sum, isnull))
					return sum;
				sum = exact_sum(output, result, group);
				if (output->kind == GPUAGG_SUM)
					return sum;
				return DirectFunctionCall2(numeric_div, sum,
										   NumericGetDatum(int64_to_numeric(finite)));
			}
		case GPUAGG_MIN:
			if (ninf > 0)
				return GpuAggNumericSpecial("-Infinity");
			if (finite > 0)
				return GpuAggNumericFromInt64(op_int64(result, output->op_value, group),
											  output->numeric_scale);
			return GpuAggNumericSpecial(pinf > 0 ? "Infinity" : "NaN");
		case GPUAGG_MAX:
			if (nan > 0)
				return GpuAggNumericSpecial("NaN");
			if (pinf > 0)
				return GpuAggNumericSpecial("Infinity");
			if (finite > 0)
				return GpuAggNumericFromInt64(op_int64(result, output->op_value, group),
											  output->numeric_scale);
			return GpuAggNumericSpecial("-Infinity");
		default:
			break;
	}
	elog(ERROR, "gpuagg: unexpected numeric aggregate kind %d", (int) output->kind);
	return (Datum) 0;			/* keep compiler quiet */
}

/* The final value of one SQL aggregate for one group. */
Datum
GpuAggFinalize(const GpuAggOutput *output, const GaAggResult *result,
			   int64 group, bool *isnull)
{
	int64		count;
	const void *values = output->op_value >= 0 ? result->values[output->op_value] : NULL;
	int64		nonfinite = output->op_nonfinite >= 0 ?
		((const int64 *) result->values[output->op_nonfinite])[group] : 0;

	*isnull = false;
	if (output->kind == GPUAGG_FLOAT_MOMENTS || GPUAGG_KIND_IS_COMOMENTS(output->kind))
		return GpuAggMomentsResult(output, result, group, isnull);
	count = ((const int64 *) result->values[output->op_count])[group];
	if (output->kind == GPUAGG_COUNT || output->kind == GPUAGG_COUNT_STAR)
		return Int64GetDatum(count);
	if (output->input_type == NUMERICOID)
		return finalize_numeric(output, result, group, isnull);
	if (count == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}

	switch (output->kind)
	{
		case GPUAGG_SUM:
			if (output->input_type == FLOAT4OID)
			{
				float		sum = ((const float *) values)[group];

				check_float_sum(sum, nonfinite);
				return Float4GetDatum(sum);
			}
			if (output->input_type == FLOAT8OID)
			{
				double		sum = ((const double *) values)[group];

				check_float_sum(sum, nonfinite);
				return Float8GetDatum(sum);
			}
			else
			{
				int128		sum = int128_from_device(&((const GaInt128 *) values)[group]);

				if (output->result_type == NUMERICOID)
					return GpuAggInt128ToNumeric(sum);
				if (sum < PG_INT64_MIN || sum > PG_INT64_MAX)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("bigint out of range")));
				return Int64GetDatum((int64) sum);
			}
		case GPUAGG_AVG:
			if (output->input_type == FLOAT4OID || output->input_type == FLOAT8OID)
			{
				double		sum = ((const double *) values)[group];

				check_float_sum(sum, nonfinite);
				if (nonfinite == 0 && output->op_min >= 0)
					GpuAggCheckFloatSpread((double) count,
										   ((const double *) result->values[output->op_min])[group],
										   ((const double *) result->values[output->op_max])[group]);
				/* PostgreSQL's avg starts from +0, so -0 inputs average to 0 */
				return Float8GetDatum((sum + 0.0) / (double) count);
			}
			else
			{
				int128		sum = int128_from_device(&((const GaInt128 *) values)[group]);

				return DirectFunctionCall2(numeric_div, GpuAggInt128ToNumeric(sum),
										   NumericGetDatum(int64_to_numeric(count)));
			}
		case GPUAGG_MIN:
		case GPUAGG_MAX:
			return extreme_to_datum(output->input_type, values, group);
		case GPUAGG_BOOL_AND:
		case GPUAGG_BOOL_OR:
			return BoolGetDatum(((const int64 *) values)[group] != 0);
		case GPUAGG_VAR_SAMP:
		case GPUAGG_VAR_POP:
		case GPUAGG_STDDEV_SAMP:
		case GPUAGG_STDDEV_POP:
			return GpuAggVarianceResult(output->kind, count, 0, 0, 0,
										exact_sum(output, result, group),
										exact_sum_of_squares(output, result, group),
										0, isnull);
		default:
			break;
	}
	elog(ERROR, "gpuagg: unexpected aggregate kind %d", (int) output->kind);
	return (Datum) 0;			/* keep compiler quiet */
}
