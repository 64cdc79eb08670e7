/*-------------------------------------------------------------------------
 *
 * cpu/accumulate.c
 *	  The CPU device's accumulators (cpu_device.h): phase 2 of the CPU
 *	  aggregation (cpu/hashagg.c), which updates dense per-group arrays
 *	  once every row of a chunk has its group.
 *
 * For every aggregate one tight loop over the chunk, chosen by operation
 * and input type, updates its accumulators: counts and integer min/max in
 * int64, integer sums in __int128, float sums in float or double (float
 * for SUM_FLOAT32, like PostgreSQL's sum(float4)), float min/max as
 * ga_float64_to_ordered() integers, MOMENTS and COMOMENTS as compensated
 * sums shifted by a value of the group's first row (GaMoments).  At finish
 * the accumulators become the result's element types in place.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "util.h"

#include <math.h>
#include <string.h>

/* Pick the accumulator of aggregate spec over a column of type input. */
CpuAccKind
ga_cpu_acc_kind(const GaAggSpec *spec, GaValueType input)
{
	int			is_float = (input == GA_TYPE_FLOAT32 || input == GA_TYPE_FLOAT64);

	switch (spec->op)
	{
		case GA_AGG_COUNT_ROWS:
			return CPU_ACC_COUNT_ROWS;
		case GA_AGG_COUNT:
			return CPU_ACC_COUNT;
		case GA_AGG_COUNT_NONFINITE:
			return CPU_ACC_COUNT_NONFINITE;
		case GA_AGG_SUM_INT:
			return CPU_ACC_SUM_INT;
		case GA_AGG_SUM_FLOAT32:
			return CPU_ACC_SUM_FLOAT32;
		case GA_AGG_SUM_FLOAT64:
			return CPU_ACC_SUM_FLOAT64;
		case GA_AGG_MIN:
			return is_float ? CPU_ACC_MIN_FLOAT : CPU_ACC_MIN_INT;
		case GA_AGG_MAX:
			return is_float ? CPU_ACC_MAX_FLOAT : CPU_ACC_MAX_INT;
		case GA_AGG_MOMENTS:
			return CPU_ACC_MOMENTS;
		case GA_AGG_COMOMENTS:
			return CPU_ACC_COMOMENTS;
	}
	return CPU_ACC_COUNT;		/* not reached: the request was validated */
}

/* Bytes of one accumulator of a kind. */
size_t
ga_cpu_acc_width(CpuAccKind kind)
{
	switch (kind)
	{
		case CPU_ACC_SUM_INT:
			return sizeof(__int128);
		case CPU_ACC_SUM_FLOAT32:
			return sizeof(float);
		case CPU_ACC_MOMENTS:
			return sizeof(GaMoments);
		case CPU_ACC_COMOMENTS:
			return sizeof(GaComoments);
		default:
			return 8;
	}
}

/* Mark a moments shift as not yet chosen (GA_MOMENTS_NO_SHIFT). */
static void
cpu_moments_clear_shift(double *shift)
{
	uint64_t	bits = GA_MOMENTS_NO_SHIFT;

	memcpy(shift, &bits, sizeof(bits));
}

/*
 * The shift of a moments accumulator, chosen from x on the group's first
 * row (x itself when finite, else 0; see GaMoments).
 */
static double
cpu_moments_shift(double *shift, double x)
{
	uint64_t	bits;

	memcpy(&bits, shift, sizeof(bits));
	if (bits == GA_MOMENTS_NO_SHIFT)
		*shift = isfinite(x) ? x : 0.0;
	return *shift;
}

/* Add x to the compensated sum (sum, err): Knuth's TwoSum keeps the error. */
static inline void
cpu_add_compensated(double *sum, double *err, double x)
{
	double		old = *sum;
	double		s = old + x;
	double		bp = s - old;
	double		e = (old - (s - bp)) + (x - bp);

	*sum = s;
	if (isfinite(e))
		*err += e;
}

/* Add a * b to a compensated sum, with the product's own error (fma). */
static inline void
cpu_add_product_compensated(double *sum, double *err, double a, double b)
{
	double		p = a * b;
	double		pe = fma(a, b, -p);

	cpu_add_compensated(sum, err, p);
	if (isfinite(pe))
		*err += pe;
}

/*
 * Add one value x to the moments of one variable (n counted by the
 * caller); returns x - K for the cross product.
 */
static inline double
cpu_moments_add(double *shift, uint64_t *nonfinite, double *sum, double *sum_err,
				double *sumsq, double *sumsq_err, double x)
{
	double		d = x - cpu_moments_shift(shift, x);

	*nonfinite += !isfinite(x);
	cpu_add_compensated(sum, sum_err, d);
	cpu_add_product_compensated(sumsq, sumsq_err, d, d);
	return d;
}

/* Set accumulators [from, to) of a kind to the operation's identity. */
void
ga_cpu_acc_init(void *acc, CpuAccKind kind, int64_t from, int64_t to)
{
	int64_t		g;

	switch (kind)
	{
		case CPU_ACC_SUM_INT:
			for (g = from; g < to; g++)
				((__int128 *) acc)[g] = 0;
			break;
		case CPU_ACC_SUM_FLOAT32:
			/* -0 is the exact additive identity: all -0 inputs sum to -0 */
			for (g = from; g < to; g++)
				((float *) acc)[g] = -0.0f;
			break;
		case CPU_ACC_SUM_FLOAT64:
			for (g = from; g < to; g++)
				((double *) acc)[g] = -0.0;
			break;
		case CPU_ACC_MIN_INT:
		case CPU_ACC_MIN_FLOAT:
			for (g = from; g < to; g++)
				((int64_t *) acc)[g] = INT64_MAX;
			break;
		case CPU_ACC_MAX_INT:
		case CPU_ACC_MAX_FLOAT:
			for (g = from; g < to; g++)
				((int64_t *) acc)[g] = INT64_MIN;
			break;
		case CPU_ACC_MOMENTS:
			memset((GaMoments *) acc + from, 0, (size_t) (to - from) * sizeof(GaMoments));
			for (g = from; g < to; g++)
				cpu_moments_clear_shift(&((GaMoments *) acc)[g].shift);
			break;
		case CPU_ACC_COMOMENTS:
			memset((GaComoments *) acc + from, 0, (size_t) (to - from) * sizeof(GaComoments));
			for (g = from; g < to; g++)
			{
				cpu_moments_clear_shift(&((GaComoments *) acc)[g].shift[0]);
				cpu_moments_clear_shift(&((GaComoments *) acc)[g].shift[1]);
			}
			break;
		default:
			for (g = from; g < to; g++)
				((int64_t *) acc)[g] = 0;
			break;
	}
}

/*
 * Run BODY for every non-null row i of the chunk (v = the row's value,
 * g = its group); the null test is hoisted out when the column has none.
 */
#define CPU_FOR_VALID(T, BODY) \
	do { \
		const T    *vals = (const T *) col->values + base; \
		if (!col->has_nulls) \
		{ \
			for (i = 0; i < n; i++) \
			{ \
				T			v = vals[i]; \
				int64_t		g = groups[i]; \
				BODY; \
			} \
		} \
		else \
		{ \
			for (i = 0; i < n; i++) \
			{ \
				int64_t		row = base + i; \
				if (col->validity[row >> 3] & (1u << (row & 7))) \
				{ \
					T			v = vals[i]; \
					int64_t		g = groups[i]; \
					BODY; \
				} \
			} \
		} \
	} while (0)

/* Expand CPU_FOR_VALID for the column's integer type. */
#define CPU_FOR_VALID_INT(BODY) \
	do { \
		switch (col->type) \
		{ \
			case GA_TYPE_INT8: CPU_FOR_VALID(int8_t, BODY); break; \
			case GA_TYPE_INT16: CPU_FOR_VALID(int16_t, BODY); break; \
			case GA_TYPE_INT32: CPU_FOR_VALID(int32_t, BODY); break; \
			default: CPU_FOR_VALID(int64_t, BODY); break; \
		} \
	} while (0)

/* Expand CPU_FOR_VALID for the column's float type. */
#define CPU_FOR_VALID_FLOAT(BODY) \
	do { \
		if (col->type == GA_TYPE_FLOAT32) \
			CPU_FOR_VALID(float, BODY); \
		else \
			CPU_FOR_VALID(double, BODY); \
	} while (0)

/* A float column's value at row (float32 or float64) as a double. */
static inline double
cpu_float_value(const GaColumn *col, int64_t row)
{
	return col->type == GA_TYPE_FLOAT32 ? (double) ((const float *) col->values)[row] :
		((const double *) col->values)[row];
}

/*
 * Update COMOMENTS accumulators with rows [base, base + n): rows where
 * neither x (column x) nor y is null.
 */
static void
cpu_accumulate_comoments(GaComoments *m, const GaColumn *x, const GaColumn *y,
						 const int64_t *groups, int64_t base, int64_t n)
{
	int64_t		i;

	for (i = 0; i < n; i++)
	{
		int64_t		row = base + i;
		GaComoments *c = &m[groups[i]];
		double		vx,
					vy,
					dx,
					dy;

		if (ga_column_is_null(x, row) || ga_column_is_null(y, row))
			continue;
		vx = cpu_float_value(x, row);
		vy = cpu_float_value(y, row);
		c->n++;
		dx = cpu_moments_add(&c->shift[0], &c->nonfinite[0], &c->sum[0], &c->sum_err[0],
							 &c->sumsq[0], &c->sumsq_err[0], vx);
		dy = cpu_moments_add(&c->shift[1], &c->nonfinite[1], &c->sum[1], &c->sum_err[1],
							 &c->sumsq[1], &c->sumsq_err[1], vy);
		cpu_add_product_compensated(&c->sumxy, &c->sumxy_err, dx, dy);
	}
}

/*
 * Update the accumulators acc (of kind `kind`, aggregate spec) with rows
 * [base, base + n) of the batch, row base + i going to group groups[i].
 */
void
ga_cpu_accumulate(void *acc, CpuAccKind kind, const GaAggSpec *spec, const GaBatch *batch,
				  const int64_t *groups, int64_t base, int64_t n)
{
	const GaColumn *col = NULL;
	int64_t		i;

	if (spec->op != GA_AGG_COUNT_ROWS)
		col = &batch->columns[spec->column];

	switch (kind)
	{
		case CPU_ACC_COUNT_ROWS:
			{
				int64_t    *cnt = acc;

				for (i = 0; i < n; i++)
					cnt[groups[i]]++;
				break;
			}
		case CPU_ACC_COUNT:
			{
				int64_t    *cnt = acc;

				if (!col->has_nulls)
				{
					for (i = 0; i < n; i++)
						cnt[groups[i]]++;
				}
				else
				{
					for (i = 0; i < n; i++)
					{
						int64_t		row = base + i;

						cnt[groups[i]] += (col->validity[row >> 3] >> (row & 7)) & 1;
					}
				}
				break;
			}
		case CPU_ACC_COUNT_NONFINITE:
			{
				int64_t    *cnt = acc;

				CPU_FOR_VALID_FLOAT(cnt[g] += isfinite(v) ? 0 : 1);
				break;
			}
		case CPU_ACC_SUM_INT:
			{
				__int128   *sum = acc;

				CPU_FOR_VALID_INT(sum[g] += v);
				break;
			}
		case CPU_ACC_SUM_FLOAT32:
			{
				float	   *sum = acc;

				CPU_FOR_VALID(float, sum[g] += v);
				break;
			}
		case CPU_ACC_SUM_FLOAT64:
			{
				double	   *sum = acc;

				CPU_FOR_VALID_FLOAT(sum[g] += (double) v);
				break;
			}
		case CPU_ACC_MIN_INT:
			{
				int64_t    *m = acc;

				CPU_FOR_VALID_INT(if ((int64_t) v < m[g]) m[g] = v);
				break;
			}
		case CPU_ACC_MAX_INT:
			{
				int64_t    *m = acc;

				CPU_FOR_VALID_INT(if ((int64_t) v > m[g]) m[g] = v);
				break;
			}
		case CPU_ACC_MIN_FLOAT:
			{
				int64_t    *m = acc;

				CPU_FOR_VALID_FLOAT(
									int64_t o = ga_float64_to_ordered((double) v);
									if (o < m[g]) m[g] = o);
				break;
			}
		case CPU_ACC_MAX_FLOAT:
			{
				int64_t    *m = acc;

				CPU_FOR_VALID_FLOAT(
									int64_t o = ga_float64_to_ordered((double) v);
									if (o > m[g]) m[g] = o);
				break;
			}
		case CPU_ACC_MOMENTS:
			{
				GaMoments  *m = acc;

				CPU_FOR_VALID_FLOAT(
									m[g].n++;
									cpu_moments_add(&m[g].shift, &m[g].nonfinite, &m[g].sum,
													&m[g].sum_err, &m[g].sumsq,
													&m[g].sumsq_err, (double) v));
				break;
			}
		case CPU_ACC_COMOMENTS:
			cpu_accumulate_comoments(acc, col, &batch->columns[spec->column2], groups, base,
									 n);
			break;
	}
}

/*
 * Turn ngroups accumulators of a kind into the result's element type, in
 * place: an __int128 sum into a GaInt128, an ordered float MIN/MAX into a
 * double (each as wide as what it replaces); the others already are.
 */
void
ga_cpu_acc_finish(void *acc, CpuAccKind kind, int64_t ngroups)
{
	int64_t		g;

	switch (kind)
	{
		case CPU_ACC_SUM_INT:
			for (g = 0; g < ngroups; g++)
			{
				__int128	v = ((__int128 *) acc)[g];
				GaInt128	r;

				r.lo = (uint64_t) v;
				r.hi = (int64_t) (v >> 64);
				memcpy((char *) acc + g * sizeof(GaInt128), &r, sizeof(r));
			}
			break;
		case CPU_ACC_MIN_FLOAT:
		case CPU_ACC_MAX_FLOAT:
			for (g = 0; g < ngroups; g++)
			{
				double		d = ga_ordered_to_float64(((int64_t *) acc)[g]);

				memcpy((char *) acc + g * sizeof(double), &d, sizeof(d));
			}
			break;
		default:
			break;
	}
}
