/*-------------------------------------------------------------------------
 *
 * row_filter.h
 *	  The evaluation of an aggjoin's row filter (the filter of
 *	  GaAggJoinSpec in gpuagg_device.h), shared by the CPU device (plain C)
 *	  and the GPU kernels (every function is GA_INLINE: compiled for the
 *	  host and, under nvcc, for the device), so that the two cannot
 *	  disagree.  Internal to cuda/; no PostgreSQL and no CUDA runtime
 *	  header.
 *
 * A device evaluates the program for one row by feeding its steps, in
 * order, to ga_filter_apply (a BOOL or COMPARE step with the row's values
 * of its columns, read by the device from wherever they live with
 * ga_filter_read), and keeps the row when ga_filter_result says true.
 *
 * Booleans are SQL's three values: GA_FILTER_FALSE, GA_FILTER_TRUE and
 * GA_FILTER_NULL, combined as PostgreSQL's AND, OR and NOT combine them.
 * Floats compare as PostgreSQL's float8_cmp_internal orders them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_ROW_FILTER_H
#define GPUAGG_ROW_FILTER_H

#include <stdint.h>

#include "gpuagg_device.h"

#define GA_FILTER_FALSE 0
#define GA_FILTER_TRUE 1
#define GA_FILTER_NULL 2

/* One operand of a step: null, or an integer or a float value. */
typedef struct GaFilterValue
{
	int			valid;
	int			is_float;
	int64_t		i;
	double		f;
} GaFilterValue;

/* The values a row's program holds. */
typedef struct GaFilterStack
{
	int			depth;
	uint8_t		v[GA_FILTER_MAX_DEPTH];
} GaFilterStack;

/*
 * Element row of a column of type `type` as an operand (valid as given):
 * integers sign-extended to int64, floats widened to double.
 */
GA_INLINE GaFilterValue
ga_filter_read(const void *values, GaValueType type, int64_t row, int valid)
{
	GaFilterValue v;

	v.valid = valid;
	v.is_float = 0;
	v.i = 0;
	v.f = 0;
	if (!valid)
		return v;
	switch (type)
	{
		case GA_TYPE_INT8:
			v.i = ((const int8_t *) values)[row];
			break;
		case GA_TYPE_INT16:
			v.i = ((const int16_t *) values)[row];
			break;
		case GA_TYPE_INT32:
			v.i = ((const int32_t *) values)[row];
			break;
		case GA_TYPE_INT64:
			v.i = ((const int64_t *) values)[row];
			break;
		case GA_TYPE_FLOAT32:
			v.is_float = 1;
			v.f = ((const float *) values)[row];
			break;
		case GA_TYPE_FLOAT64:
			v.is_float = 1;
			v.f = ((const double *) values)[row];
			break;
		default:
			v.valid = 0;		/* no values: the request check refuses it */
			break;
	}
	return v;
}

/*
 * -1, 0 or 1 as a is below, equal to or above b (both valid): integers by
 * value, floats in PostgreSQL's order (NaN equal to NaN and above all).
 */
GA_INLINE int
ga_filter_order(GaFilterValue a, GaFilterValue b)
{
	if (!a.is_float)
		return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
	if (a.f != a.f)
		return b.f != b.f ? 0 : 1;
	if (b.f != b.f)
		return -1;
	return a.f < b.f ? -1 : a.f > b.f ? 1 : 0;
}

/* The comparison a cmp b, null when either is null. */
GA_INLINE uint8_t
ga_filter_compare(GaCompareOp cmp, GaFilterValue a, GaFilterValue b)
{
	int			order;

	if (!a.valid || !b.valid)
		return GA_FILTER_NULL;
	order = ga_filter_order(a, b);
	switch (cmp)
	{
		case GA_CMP_LT:
			return order < 0;
		case GA_CMP_LE:
			return order <= 0;
		case GA_CMP_EQ:
			return order == 0;
		case GA_CMP_NE:
			return order != 0;
		case GA_CMP_GE:
			return order >= 0;
		default:
			return order > 0;
	}
}

/* SQL's a AND b over three values. */
GA_INLINE uint8_t
ga_filter_and(uint8_t a, uint8_t b)
{
	if (a == GA_FILTER_FALSE || b == GA_FILTER_FALSE)
		return GA_FILTER_FALSE;
	return a == GA_FILTER_NULL || b == GA_FILTER_NULL ? GA_FILTER_NULL : GA_FILTER_TRUE;
}

/* SQL's a OR b over three values. */
GA_INLINE uint8_t
ga_filter_or(uint8_t a, uint8_t b)
{
	if (a == GA_FILTER_TRUE || b == GA_FILTER_TRUE)
		return GA_FILTER_TRUE;
	return a == GA_FILTER_NULL || b == GA_FILTER_NULL ? GA_FILTER_NULL : GA_FILTER_FALSE;
}

/*
 * Apply one step to a row's stack: a and b are the step's operands (BOOL:
 * a; COMPARE: a and b; ignored otherwise).  A malformed program (which the
 * request check refuses) cannot write outside the stack.
 */
GA_INLINE void
ga_filter_apply(GaFilterStack *stack, const GaFilterStep *step, GaFilterValue a,
				GaFilterValue b)
{
	uint8_t		x;
	int			d = stack->depth;

	switch (step->op)
	{
		case GA_FILTER_BOOL:
			x = !a.valid ? GA_FILTER_NULL : (a.i != 0 ? GA_FILTER_TRUE : GA_FILTER_FALSE);
			break;
		case GA_FILTER_COMPARE:
			x = ga_filter_compare(step->cmp, a, b);
			break;
		case GA_FILTER_NOT:
			if (d < 1 || d > GA_FILTER_MAX_DEPTH)
				return;
			x = stack->v[d - 1];
			stack->v[d - 1] = x == GA_FILTER_NULL ? x : (uint8_t) (1 - x);
			return;
		default:
			if (d < 2 || d > GA_FILTER_MAX_DEPTH)
				return;
			x = step->op == GA_FILTER_AND ? ga_filter_and(stack->v[d - 2], stack->v[d - 1]) :
				ga_filter_or(stack->v[d - 2], stack->v[d - 1]);
			stack->v[d - 2] = x;
			stack->depth = d - 1;
			return;
	}
	if (d < GA_FILTER_MAX_DEPTH)
		stack->v[d] = x;
	stack->depth = d + 1;
}

/* Whether the program left true: the row is kept. */
GA_INLINE int
ga_filter_result(const GaFilterStack *stack)
{
	return stack->depth == 1 && stack->v[0] == GA_FILTER_TRUE;
}

#endif							/* GPUAGG_ROW_FILTER_H */
