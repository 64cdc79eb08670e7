/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashagg_device.cuh
 *	  Device building blocks of the aggregation kernels, shared by
 *	  gpu/kernels/hashagg_two_phase.cu, gpu/kernels/hashagg_fused.cu,
 *	  gpu/kernels/hashagg_partition.cu and gpu/kernels/hashagg_chunks.cu:
 *	  loading keys and aggregate inputs, hashing, the global table's
 *	  find-or-insert, folding values into accumulators in global and
 *	  shared memory, block caches, packed keys and direct indexes.
 *
 * Accumulating a value is split in two: load_agg_input() reads a row's
 * input as 64 bits (an integer widened to int64, float bits, or the ordered
 * integer of a float for MIN/MAX) and says whether it counts, and the fold
 * functions add it to an accumulator.  That lets the kernels issue all
 * loads of a few rows before their atomics.
 *
 * Integer sums are exact 128-bit two's-complement sums: the low word is
 * added atomically and the carry out of that very addition goes to the high
 * word together with the sign extension, so any number of rows sums exactly
 * (modulo 2^128).  Float MIN/MAX use an order-preserving map to int64 (NaN
 * largest) and integer atomicMin/atomicMax.  Float sums start at -0.0, the
 * exact additive identity.
 *
 * MOMENTS and COMOMENTS do not fit that split (two inputs, compensated
 * sums, a per-group shift): moments_fold() folds a whole row, in global
 * memory or in a block's shared copy whose shift is the global group's, so
 * that block partials merge by plain compensated addition.  Only the
 * two-phase kernels (gpu/kernels/hashagg_two_phase.cu) take them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHAGG_DEVICE_CUH
#define GPUAGG_HASHAGG_DEVICE_CUH

#include "gpuagg_hash.h"
#include "hashagg.cuh"

#include <cooperative_groups.h>
#include <limits.h>

namespace cg = cooperative_groups;

/* ------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------
 */

/* Whether row `row` of a column is null (validity NULL: no nulls). */
__device__ __forceinline__ bool
row_is_null(const uint8_t *validity, int64_t row)
{
	return validity != nullptr &&
		!((__ldg(validity + (row >> 3)) >> (row & 7)) & 1);
}

/* Read an integer value of any integer type, widened to int64. */
__device__ __forceinline__ long long
load_int(const void *values, int type, int64_t row)
{
	switch (type)
	{
		case GA_TYPE_INT8:
			return __ldg((const signed char *) values + row);
		case GA_TYPE_INT16:
			return __ldg((const short *) values + row);
		case GA_TYPE_INT32:
			return __ldg((const int *) values + row);
		default:
			return __ldg((const long long *) values + row);
	}
}

/* Read a float32 or float64 value as a double (exact for float32). */
__device__ __forceinline__ double
load_float(const void *values, int type, int64_t row)
{
	if (type == GA_TYPE_FLOAT32)
		return (double) __ldg((const float *) values + row);
	return __ldg((const double *) values + row);
}

/* Device copy of ga_float64_to_ordered(): NaN is INT64_MAX, order kept. */
__device__ __forceinline__ long long
float64_to_ordered(double value)
{
	long long	bits;

	if (isnan(value))
		return LLONG_MAX;
	bits = __double_as_longlong(value);
	return bits >= 0 ? bits : (bits ^ LLONG_MAX);
}

/*
 * Row `row`'s input to aggregate a, as 64 bits ready for the fold functions;
 * *present says whether it counts at all (null inputs count for COUNT_ROWS
 * only, COUNT_NONFINITE counts infinite and NaN values only).
 */
__device__ __forceinline__ long long
load_agg_input(const GaDevAgg &a, int64_t row, bool *present)
{
	if (a.op == GA_AGG_COUNT_ROWS)
	{
		*present = true;
		return 1;
	}
	if (row_is_null(a.input.validity, row))
	{
		*present = false;
		return 0;
	}
	*present = true;
	switch (a.op)
	{
		case GA_AGG_COUNT:
			return 1;
		case GA_AGG_COUNT_NONFINITE:
			*present = !isfinite(load_float(a.input.values, a.input.type, row));
			return 1;
		case GA_AGG_SUM_INT:
			return load_int(a.input.values, a.input.type, row);
		case GA_AGG_SUM_FLOAT32:
			return (long long) __float_as_uint(__ldg((const float *) a.input.values + row));
		case GA_AGG_SUM_FLOAT64:
			return __double_as_longlong(load_float(a.input.values, a.input.type, row));
		case GA_AGG_MIN:
		case GA_AGG_MAX:
			return a.input_is_float ?
				float64_to_ordered(load_float(a.input.values, a.input.type, row)) :
				load_int(a.input.values, a.input.type, row);
		default:
			*present = false;
			return 0;
	}
}

/* ------------------------------------------------------------------------
 * Folding into accumulators
 * ------------------------------------------------------------------------
 */

/*
 * Add the 128-bit value (hi:lo) to the two's-complement int128 at p[0] (low
 * word) and p[1] (high word).  The carry out of this addition to the low
 * word is computed from the value the atomic returned, so it belongs to this
 * addition alone; the sum is exact whatever the interleaving.  Works on
 * global and shared memory.
 */
__device__ __forceinline__ void
add_int128(unsigned long long *p, unsigned long long lo, unsigned long long hi)
{
	unsigned long long old = atomicAdd(p, lo);
	unsigned long long high = hi + (old + lo < old ? 1ULL : 0ULL);

	if (high != 0)
		atomicAdd(p + 1, high);
}

/*
 * Set the global accumulator of group g (array acc of operation op, full
 * widths) to its identity.  With g = 0, acc may point at one element.
 */
__device__ __forceinline__ void
init_group(int op, unsigned char *acc, int64_t g)
{
	switch (op)
	{
		case GA_AGG_SUM_INT:
			((unsigned long long *) acc)[2 * g] = 0;
			((unsigned long long *) acc)[2 * g + 1] = 0;
			break;
		case GA_AGG_SUM_FLOAT32:
			((float *) acc)[g] = -0.0f; /* -0 is the exact additive identity */
			break;
		case GA_AGG_SUM_FLOAT64:
			((double *) acc)[g] = -0.0;
			break;
		case GA_AGG_MIN:
			((long long *) acc)[g] = LLONG_MAX;
			break;
		case GA_AGG_MAX:
			((long long *) acc)[g] = LLONG_MIN;
			break;
		case GA_AGG_MOMENTS:
			{
				GaMoments  *m = (GaMoments *) acc + g;

				m->shift = __longlong_as_double((long long) GA_MOMENTS_NO_SHIFT);
				m->n = m->nonfinite = 0;
				m->sum = m->sum_err = m->sumsq = m->sumsq_err = 0.0;
			}
			break;
		case GA_AGG_COMOMENTS:
			{
				GaComoments *m = (GaComoments *) acc + g;

				for (int v = 0; v < 2; v++)
				{
					m->shift[v] = __longlong_as_double((long long) GA_MOMENTS_NO_SHIFT);
					m->nonfinite[v] = 0;
					m->sum[v] = m->sum_err[v] = m->sumsq[v] = m->sumsq_err[v] = 0.0;
				}
				m->n = 0;
				m->sumxy = m->sumxy_err = 0.0;
			}
			break;
		default:				/* the counts */
			((unsigned long long *) acc)[g] = 0;
			break;
	}
}

/* Whether op folds whole rows through moments_fold() (see the header). */
__device__ __forceinline__ bool
is_moments(int op)
{
	return op == GA_AGG_MOMENTS || op == GA_AGG_COMOMENTS;
}

/* ------------------------------------------------------------------------
 * Moments (MOMENTS and COMOMENTS; see GaMoments in gpuagg_device.h)
 * ------------------------------------------------------------------------
 */

/*
 * The shift of a moments accumulator (see GaMoments): the value already
 * chosen, or x (0 when x is not finite) if this thread is the first to set
 * it.  The shift is set once by compare-and-swap and never changes, so
 * every row of the group is shifted by the same value.  Always through the
 * atomic (it returns the value already there): a plain read beside other
 * threads' compare-and-swap would be a race in shared memory.
 */
__device__ __forceinline__ double
moments_shift(double *shift, double x)
{
	double		mine = isfinite(x) ? x : 0.0;
	unsigned long long old = atomicCAS((unsigned long long *) shift, GA_MOMENTS_NO_SHIFT,
									   (unsigned long long) __double_as_longlong(mine));

	return old == GA_MOMENTS_NO_SHIFT ? mine : __longlong_as_double((long long) old);
}

/*
 * Add x to the compensated sum (sum, err): atomicAdd returns the value it
 * added x to, so the rounding error of exactly that addition follows from
 * Knuth's TwoSum and goes into err.  __dadd_rn/__dsub_rn keep the compiler
 * from fusing or reordering the error-free transformation.
 */
__device__ __forceinline__ void
add_compensated(double *sum, double *err, double x)
{
	double		old = atomicAdd(sum, x);
	double		s = __dadd_rn(old, x);
	double		bp = __dsub_rn(s, old);
	double		e = __dadd_rn(__dsub_rn(old, __dsub_rn(s, bp)), __dsub_rn(x, bp));

	if (e != 0.0 && isfinite(e))
		atomicAdd(err, e);
}

/* Add the product a * b to a compensated sum, with the product's own error. */
__device__ __forceinline__ void
add_product_compensated(double *sum, double *err, double a, double b)
{
	double		p = __dmul_rn(a, b);
	double		pe = __fma_rn(a, b, -p);	/* exact: a * b = p + pe */

	add_compensated(sum, err, p);
	if (pe != 0.0 && isfinite(pe))
		atomicAdd(err, pe);
}

/*
 * The shift for a row of value x of the accumulator whose shift is at
 * `shift`: in a block's shared-memory copy, the global table's shift for the
 * group (global_shift; chosen there first if need be), so that every block
 * shifts a group by the same value and the blocks' partial sums merge by
 * plain (compensated) addition, with no re-shifting and its rounding.
 */
__device__ __forceinline__ double
moments_shift_for(double *shift, double *global_shift, double x)
{
	unsigned long long seen;

	if (shift == global_shift)
		return moments_shift(shift, x);
	seen = atomicCAS((unsigned long long *) shift, GA_MOMENTS_NO_SHIFT, GA_MOMENTS_NO_SHIFT);
	if (seen != GA_MOMENTS_NO_SHIFT)
		return __longlong_as_double((long long) seen);
	return moments_shift(shift, moments_shift(global_shift, x));
}

/*
 * Add one value x to the moments of one variable (n counted by the
 * caller); returns x - K for the cross product.
 */
__device__ __forceinline__ double
moments_add(double *shift, double *global_shift, unsigned long long *nonfinite,
			double *sum, double *sum_err, double *sumsq, double *sumsq_err, double x)
{
	double		d = __dsub_rn(x, moments_shift_for(shift, global_shift, x));

	if (!isfinite(x))
		atomicAdd(nonfinite, 1ULL);
	add_compensated(sum, sum_err, d);
	add_product_compensated(sumsq, sumsq_err, d, d);
	return d;
}

/*
 * Fold row `row` into entry e of array arr of aggregate `index` (MOMENTS or
 * COMOMENTS) of aggs: arr is the global array (then e is the group g) or a
 * block's shared copy holding group g at entry e.  Null x (or y for
 * COMOMENTS, read from the partner entry's column) skips the row.
 */
__device__ __forceinline__ void
moments_fold(const GaDevAggs &aggs, int index, unsigned char *arr, int64_t e, int64_t g,
			 int64_t row)
{
	const GaDevAgg &a = aggs.aggs[index];
	double		x;

	if (row_is_null(a.input.validity, row))
		return;
	x = load_float(a.input.values, a.input.type, row);
	if (a.op == GA_AGG_MOMENTS)
	{
		GaMoments  *m = (GaMoments *) arr + e;
		GaMoments  *global = (GaMoments *) a.acc + g;

		atomicAdd((unsigned long long *) &m->n, 1ULL);
		moments_add(&m->shift, &global->shift, (unsigned long long *) &m->nonfinite,
					&m->sum, &m->sum_err, &m->sumsq, &m->sumsq_err, x);
	}
	else
	{
		const GaDevColumn &y_column = aggs.aggs[a.partner].input;
		GaComoments *m = (GaComoments *) arr + e;
		GaComoments *global = (GaComoments *) a.acc + g;
		double		y,
					dx,
					dy;

		if (row_is_null(y_column.validity, row))
			return;
		y = load_float(y_column.values, y_column.type, row);
		atomicAdd((unsigned long long *) &m->n, 1ULL);
		dx = moments_add(&m->shift[0], &global->shift[0], (unsigned long long *) &m->nonfinite[0],
						 &m->sum[0], &m->sum_err[0], &m->sumsq[0], &m->sumsq_err[0], x);
		dy = moments_add(&m->shift[1], &global->shift[1], (unsigned long long *) &m->nonfinite[1],
						 &m->sum[1], &m->sum_err[1], &m->sumsq[1], &m->sumsq_err[1], y);
		add_product_compensated(&m->sumxy, &m->sumxy_err, dx, dy);
	}
}

/* Merge one compensated sum of a block (value v, error e) into a global one. */
__device__ __forceinline__ void
merge_compensated(double *sum, double *err, double v, double e)
{
	add_compensated(sum, err, v);
	if (e != 0.0)
		atomicAdd(err, e);
}

/*
 * Merge entry e of a block's MOMENTS or COMOMENTS array arr into global
 * group g of acc.  The block shifted by the global shift (moments_shift_for),
 * so the sums add as they are; an entry without rows is skipped.
 */
__device__ __forceinline__ void
moments_merge(int op, const unsigned char *arr, int64_t e, unsigned char *acc, int64_t g)
{
	if (op == GA_AGG_MOMENTS)
	{
		const GaMoments *b = (const GaMoments *) arr + e;
		GaMoments  *m = (GaMoments *) acc + g;

		if (b->n == 0)
			return;
		atomicAdd((unsigned long long *) &m->n, (unsigned long long) b->n);
		if (b->nonfinite != 0)
			atomicAdd((unsigned long long *) &m->nonfinite, (unsigned long long) b->nonfinite);
		merge_compensated(&m->sum, &m->sum_err, b->sum, b->sum_err);
		merge_compensated(&m->sumsq, &m->sumsq_err, b->sumsq, b->sumsq_err);
	}
	else
	{
		const GaComoments *b = (const GaComoments *) arr + e;
		GaComoments *m = (GaComoments *) acc + g;

		if (b->n == 0)
			return;
		atomicAdd((unsigned long long *) &m->n, (unsigned long long) b->n);
		for (int v = 0; v < 2; v++)
		{
			if (b->nonfinite[v] != 0)
				atomicAdd((unsigned long long *) &m->nonfinite[v],
						  (unsigned long long) b->nonfinite[v]);
			merge_compensated(&m->sum[v], &m->sum_err[v], b->sum[v], b->sum_err[v]);
			merge_compensated(&m->sumsq[v], &m->sumsq_err[v], b->sumsq[v], b->sumsq_err[v]);
		}
		merge_compensated(&m->sumxy, &m->sumxy_err, b->sumxy, b->sumxy_err);
	}
}

/*
 * Set shared entry e (shared width `width`) to op's identity: init_group()
 * but for the narrow widths (8-byte integer sums, 4-byte counts).
 */
__device__ __forceinline__ void
shared_init(int op, int width, unsigned char *arr, int64_t e)
{
	if (op == GA_AGG_SUM_INT && width == 8)
		((unsigned long long *) arr)[e] = 0;
	else if (width == 4 && op != GA_AGG_SUM_FLOAT32)
		((unsigned int *) arr)[e] = 0;
	else
		init_group(op, arr, e);
}

/*
 * Add x to a 32-bit word of shared memory when x is not zero.  The branch is
 * spelled with a volatile red: with a plain atomicAdd the compiler drops the
 * test and adds 0, an atomic for every lane instead of for the few that
 * carry.
 */
__device__ __forceinline__ void
shared_add_if_nonzero(unsigned int *word, unsigned int x)
{
	if (x != 0)
		asm volatile("red.shared.add.u32 [%0], %1;" ::
					 "r"((unsigned int) __cvta_generic_to_shared(word)), "r"(x) : "memory");
}

/*
 * Add the 64-bit value v, sign-extended to `words` 32-bit words, to the
 * two's-complement integer held in that many words of shared memory (word[0]
 * the lowest), with 32-bit atomics: a 64-bit shared atomicAdd is a
 * compare-and-swap loop on the GPU, which serialises the lanes that hit one
 * entry (few groups, skewed keys).  The carry out of each word's addition,
 * computed from the value that very atomic returned, goes to the next word
 * with the next part of v, as add_int128 does with 64-bit words, so the sum
 * is exact (modulo 2^(32 words)) whatever the interleaving.  Words above
 * v's own are only touched by a carry or a negative v's sign extension.
 */
template <int WORDS>
__device__ __forceinline__ void
shared_add_by_words(unsigned int *word, long long v)
{
	const unsigned int sign = v < 0 ? 0xffffffffu : 0u;
	unsigned int carry = 0;

#pragma unroll
	for (int w = 0; w < WORDS; w++)
	{
		const unsigned int part = w == 0 ? (unsigned int) v :
			w == 1 ? (unsigned int) ((unsigned long long) v >> 32) : sign;
		const unsigned int x = part + carry;
		const unsigned int wrapped = x < part ? 1u : 0u;	/* part + carry == 2^32 */

		if (w == 0)
		{
			const unsigned int old = atomicAdd(word, x);

			carry = old + x < old ? 1u : 0u;
		}
		else if (w == WORDS - 1)
			shared_add_if_nonzero(word + w, x);
		else if (x != 0)
		{
			const unsigned int old = atomicAdd(word + w, x);

			carry = wrapped + (old + x < old ? 1u : 0u);
		}
		else
			carry = wrapped;
	}
}

/*
 * Fold a loaded input v into shared entry e.  Integer sums go by 32-bit
 * words (shared_add_by_words): a narrow (8-byte) one adds v, an input of at
 * most 32 bits, as a 64-bit value (a block's partial of at most 2^31 such
 * inputs cannot overflow it); a 16-byte one as a 128-bit value.
 */
__device__ __forceinline__ void
shared_fold(int op, int width, unsigned char *arr, int64_t e, long long v)
{
	switch (op)
	{
		case GA_AGG_SUM_INT:
			if (width == 8)
				shared_add_by_words<2>((unsigned int *) arr + 2 * e, v);
			else
				shared_add_by_words<4>((unsigned int *) arr + 4 * e, v);
			break;
		case GA_AGG_SUM_FLOAT32:
			atomicAdd((float *) arr + e, __uint_as_float((unsigned int) v));
			break;
		case GA_AGG_SUM_FLOAT64:
			atomicAdd((double *) arr + e, __longlong_as_double(v));
			break;
		case GA_AGG_MIN:
			atomicMin((long long *) arr + e, v);
			break;
		case GA_AGG_MAX:
			atomicMax((long long *) arr + e, v);
			break;
		default:
			if (width == 4)
				atomicAdd((unsigned int *) arr + e, (unsigned int) v);
			else
				atomicAdd((unsigned long long *) arr + e, (unsigned long long) v);
			break;
	}
}

/*
 * Fold a loaded input v into global accumulator g (full widths, atomics):
 * 16-byte integer sums by 64-bit words (global 64-bit atomics are native),
 * the rest as shared_fold() at 8 bytes (counts, MIN/MAX, float sums).
 */
__device__ __forceinline__ void
global_fold(int op, unsigned char *acc, int64_t g, long long v)
{
	if (op == GA_AGG_SUM_INT)
		add_int128((unsigned long long *) acc + 2 * g, (unsigned long long) v,
				   v < 0 ? ~0ULL : 0ULL);
	else
		shared_fold(op, 8, acc, g, v);
}

/*
 * Fold shared entry src into shared entry dst of the same array, without
 * atomics (the caller owns both): folding a block's replicas together.
 */
__device__ __forceinline__ void
shared_combine(int op, int width, unsigned char *arr, int64_t dst, int64_t src)
{
	switch (op)
	{
		case GA_AGG_SUM_INT:
			if (width == 8)
				((unsigned long long *) arr)[dst] += ((unsigned long long *) arr)[src];
			else
			{
				unsigned long long *d = (unsigned long long *) arr + 2 * dst;
				const unsigned long long *s = (unsigned long long *) arr + 2 * src;
				unsigned long long lo = d[0] + s[0];

				d[1] += s[1] + (lo < d[0] ? 1ULL : 0ULL);
				d[0] = lo;
			}
			break;
		case GA_AGG_SUM_FLOAT32:
			((float *) arr)[dst] += ((float *) arr)[src];
			break;
		case GA_AGG_SUM_FLOAT64:
			((double *) arr)[dst] += ((double *) arr)[src];
			break;
		case GA_AGG_MIN:
			((long long *) arr)[dst] = min(((long long *) arr)[dst], ((long long *) arr)[src]);
			break;
		case GA_AGG_MAX:
			((long long *) arr)[dst] = max(((long long *) arr)[dst], ((long long *) arr)[src]);
			break;
		default:
			if (width == 4)
				((unsigned int *) arr)[dst] += ((unsigned int *) arr)[src];
			else
				((unsigned long long *) arr)[dst] += ((unsigned long long *) arr)[src];
			break;
	}
}

/*
 * Merge shared entry e into global accumulator g of array acc (full widths).
 * Entries still at the identity are skipped, which saves most global
 * atomics when the block saw only some of the groups.  (Only a float sum
 * that is still exactly -0.0 can be skipped, so a group of -0 values sums
 * to -0 as in PostgreSQL.)
 */
__device__ __forceinline__ void
shared_merge(int op, int width, const unsigned char *arr, int64_t e,
			 unsigned char *acc, int64_t g)
{
	switch (op)
	{
		case GA_AGG_SUM_INT:
			{
				unsigned long long lo,
							hi;

				if (width == 8)
				{
					long long	v = ((const long long *) arr)[e];

					lo = (unsigned long long) v;
					hi = v < 0 ? ~0ULL : 0ULL;
				}
				else
				{
					lo = ((const unsigned long long *) arr)[2 * e];
					hi = ((const unsigned long long *) arr)[2 * e + 1];
				}
				if ((lo | hi) != 0)
					add_int128((unsigned long long *) acc + 2 * g, lo, hi);
			}
			break;
		case GA_AGG_SUM_FLOAT32:
			{
				float		v = ((const float *) arr)[e];

				if (__float_as_uint(v) != 0x80000000u)
					atomicAdd((float *) acc + g, v);
			}
			break;
		case GA_AGG_SUM_FLOAT64:
			{
				double		v = ((const double *) arr)[e];

				if (__double_as_longlong(v) != (long long) 0x8000000000000000ULL)
					atomicAdd((double *) acc + g, v);
			}
			break;
		case GA_AGG_MIN:
			{
				long long	v = ((const long long *) arr)[e];

				if (v != LLONG_MAX)
					atomicMin((long long *) acc + g, v);
			}
			break;
		case GA_AGG_MAX:
			{
				long long	v = ((const long long *) arr)[e];

				if (v != LLONG_MIN)
					atomicMax((long long *) acc + g, v);
			}
			break;
		case GA_AGG_MOMENTS:
		case GA_AGG_COMOMENTS:
			moments_merge(op, arr, e, acc, g);
			break;
		default:				/* the counts */
			{
				unsigned long long v = width == 4 ?
					((const unsigned int *) arr)[e] :
					((const unsigned long long *) arr)[e];

				if (v != 0)
					atomicAdd((unsigned long long *) acc + g, v);
			}
			break;
	}
}

/* Base of aggregate a's array in a shared table of `entries` entries. */
__device__ __forceinline__ unsigned char *
shared_array(unsigned char *table, const GaDevAgg &a, int64_t entries)
{
	return table + a.shared_unit_offset * entries;
}

/*
 * Initialise entries [0, count) of every aggregate's array in a shared table
 * of `entries` entries (the arrays' stride; count <= entries).
 */
__device__ __forceinline__ void
shared_init_all(const GaDevAggs &aggs, unsigned char *table, int64_t entries,
				int64_t count)
{
	for (int64_t e = threadIdx.x; e < count; e += blockDim.x)
		for (int a = 0; a < aggs.naggs; a++)
			shared_init(aggs.aggs[a].op, aggs.aggs[a].shared_width,
						shared_array(table, aggs.aggs[a], entries), e);
}

/*
 * Fold the replicas of shared group `group` (entries group * replicas + r)
 * into its first replica and merge that into global accumulator g of
 * aggregate a's array acc.  Moments merge each replica on its own (their
 * compensated sums do not combine in place).
 */
__device__ __forceinline__ void
shared_merge_replicas(const GaDevAgg &a, unsigned char *arr, int64_t group,
					  int replicas, unsigned char *acc, int64_t g)
{
	const int64_t first = group * replicas;

	if (is_moments(a.op))
	{
		for (int r = 0; r < replicas; r++)
			moments_merge(a.op, arr, first + r, acc, g);
		return;
	}
	for (int r = 1; r < replicas; r++)
		shared_combine(a.op, a.shared_width, arr, first, first + r);
	shared_merge(a.op, a.shared_width, arr, first, acc, g);
}

/*
 * Fold row `row` into entry e of every aggregate's array in a shared table
 * of `entries` entries; g is the entry's group (moments take its shift).
 */
__device__ __forceinline__ void
fold_row_shared(const GaDevAggs &aggs, unsigned char *table, int64_t entries, int64_t e,
				int64_t g, int64_t row)
{
	for (int a = 0; a < aggs.naggs; a++)
	{
		const GaDevAgg &agg = aggs.aggs[a];
		bool		present;
		long long	v;

		if (is_moments(agg.op))
		{
			moments_fold(aggs, a, shared_array(table, agg, entries), e, g, row);
			continue;
		}
		v = load_agg_input(agg, row, &present);
		if (present)
			shared_fold(agg.op, agg.shared_width, shared_array(table, agg, entries), e, v);
	}
}

/* Fold row `row` into group g of every aggregate's global array. */
__device__ __forceinline__ void
fold_row_global(const GaDevAggs &aggs, int64_t g, int64_t row)
{
	for (int a = 0; a < aggs.naggs; a++)
	{
		const GaDevAgg &agg = aggs.aggs[a];
		bool		present;
		long long	v;

		if (is_moments(agg.op))
		{
			moments_fold(aggs, a, (unsigned char *) agg.acc, g, g, row);
			continue;
		}
		v = load_agg_input(agg, row, &present);
		if (present)
			global_fold(agg.op, (unsigned char *) agg.acc, g, v);
	}
}

/* ------------------------------------------------------------------------
 * Keys, hashing and the global table
 * ------------------------------------------------------------------------
 */

/* Load a row's key words: the null mask, then every key widened to int64. */
template <int NW>
__device__ __forceinline__ void
load_key_words(const GaDevKeys &keys, int64_t row, long long (&words)[NW])
{
	long long	mask = 0;

#pragma unroll
	for (int k = 0; k < NW - 1; k++)
	{
		words[k + 1] = 0;
		if (k < keys.nkeys)
		{
			const GaDevColumn &column = keys.columns[k];

			if (row_is_null(column.validity, row))
				mask |= 1LL << k;
			else
				words[k + 1] = load_int(column.values, column.type, row);
		}
	}
	words[0] = mask;
}

/* One step of the key-tuple hash. */
__device__ __forceinline__ uint64_t
hash_step(uint64_t h, long long word)
{
	return ga_mix64(h ^ (uint64_t) word) + GA_HASH_GOLDEN;
}

/* Hash the first nwords of a key tuple (NW is the unrolled maximum). */
template <int NW>
__device__ __forceinline__ uint64_t
hash_words(const long long (&words)[NW], int nwords)
{
	uint64_t	h = GA_HASH_SEED;

#pragma unroll
	for (int w = 0; w < NW; w++)
		if (w < nwords)
			h = hash_step(h, words[w]);
	return ga_mix64(h);
}

/* The same hash as hash_words() of load_key_words(), without the array. */
__device__ __forceinline__ uint64_t
hash_row(const GaDevKeys &keys, int64_t row)
{
	long long	mask = 0;
	uint64_t	h = GA_HASH_SEED;

	for (int k = 0; k < keys.nkeys; k++)
		if (row_is_null(keys.columns[k].validity, row))
			mask |= 1LL << k;
	h = hash_step(h, mask);
	for (int k = 0; k < keys.nkeys; k++)
	{
		const GaDevColumn &column = keys.columns[k];

		h = hash_step(h, (mask >> k) & 1 ? 0 : load_int(column.values, column.type, row));
	}
	return ga_mix64(h);
}

/*
 * Take a fresh group id from the counter: the converged lanes of the warp
 * that won a slot at the same moment take consecutive ids with one atomic,
 * which keeps the counter from being the bottleneck when most keys are new.
 */
__device__ __forceinline__ unsigned long long
take_group_id(GaDevControl *control)
{
	cg::coalesced_group active = cg::coalesced_threads();
	unsigned long long base = 0;

	if (active.thread_rank() == 0)
		base = atomicAdd(&control->ngroups, (unsigned long long) active.num_threads());
	base = active.shfl(base, 0);
	return base + active.thread_rank();
}

/*
 * Find the dense group id of a key tuple, inserting it when new (Wu et al.,
 * Algorithm 1, stage 1).  A new key is inserted by CAS EMPTY -> BUSY; the
 * winner takes the next id, writes the key words into the dense key
 * arrays, fences, and publishes the id in the slot.  Readers that meet BUSY
 * spin until the id appears; readers that meet an id compare the dense key
 * words with L2 loads (__ldcg): L1 is not coherent, and a line of the key
 * arrays may have entered L1 before the winner wrote it.  Returns -1 when
 * the group arrays are full: the overflow flag is then set and the host
 * will grow the table and redo the work.
 */
template <int NW>
__device__ __forceinline__ int32_t
find_or_insert(const GaDevTable &table, const long long (&words)[NW], int nwords)
{
	volatile int32_t *vslots = table.slots;
	const int64_t capacity = table.capacity;
	int64_t		slot = (int64_t) (hash_words<NW>(words, nwords) >> table.slot_shift);

	for (;;)
	{
		int32_t		v = vslots[slot];

		if (v == GA_SLOT_EMPTY)
		{
			v = atomicCAS((int *) &table.slots[slot], GA_SLOT_EMPTY, GA_SLOT_BUSY);
			if (v == GA_SLOT_EMPTY)
			{
				/* This thread owns the slot: take an id, write key, publish. */
				unsigned long long g = take_group_id(table.control);

				if (g >= (unsigned long long) capacity)
				{
					atomicExch((int *) &table.slots[slot], GA_SLOT_POISON);
					atomicExch(&table.control->overflow, 1);
					return -1;
				}
#pragma unroll
				for (int w = 0; w < NW; w++)
					if (w < nwords)
						table.keys[w * capacity + (int64_t) g] = words[w];
				__threadfence();	/* keys visible device-wide before the id */
				atomicExch((int *) &table.slots[slot], (int) g);
				return (int32_t) g;
			}
			/* Lost the race: v is what the winner put there. */
		}
		while (v == GA_SLOT_BUSY)
		{
			__nanosleep(32);
			v = vslots[slot];
		}
		if (v == GA_SLOT_POISON)
		{
			atomicExch(&table.control->overflow, 1);
			return -1;
		}

		/* v is a published id: compare its key words, from L2. */
		{
			bool		same = true;

#pragma unroll
			for (int w = 0; w < NW; w++)
				if (w < nwords && __ldcg(&table.keys[w * capacity + v]) != words[w])
					same = false;
			if (same)
				return v;
		}
		slot = (slot + 1) & table.slot_mask;
	}
}

/* ------------------------------------------------------------------------
 * Block-local structures
 * ------------------------------------------------------------------------
 */

/*
 * The entry of `key` (>= 0) in a block's cache of 2^cache_bits hot keys,
 * claiming a free one among its GA_CACHE_PROBES candidates; -1 when they all
 * hold other keys.  Keys that arrive early and often (the hot ones of a
 * skewed distribution) end up cached, so their atomics stay in shared
 * memory; the block merges the cache into global memory at its end.
 */
__device__ __forceinline__ int
cache_entry(long long *tags, int cache_bits, long long key)
{
	volatile long long *vtags = tags;
	const int	mask = (1 << cache_bits) - 1;
	int			s = (int) (ga_mix64((uint64_t) key) >> (64 - cache_bits));

	for (int probe = 0; probe < GA_CACHE_PROBES; probe++)
	{
		long long	t = vtags[s];

		if (t == key)
			return s;
		if (t == GA_CACHE_EMPTY)
		{
			t = (long long) atomicCAS((unsigned long long *) &tags[s],
									  (unsigned long long) GA_CACHE_EMPTY,
									  (unsigned long long) key);
			if (t == GA_CACHE_EMPTY || t == key)
				return s;
		}
		s = (s + 1) & mask;
	}
	return -1;
}

/*
 * A row's key tuple packed into 64 bits (see GaDevPack).  The result is
 * GA_PACK_EMPTY only for a tuple that fills all 64 bits with exactly that
 * pattern; callers treat such a row like one that does not fit.
 */
__device__ __forceinline__ unsigned long long
pack_key(const GaDevKeys &keys, const GaDevPack &pack, int64_t row)
{
	unsigned long long packed = 0;

#pragma unroll
	for (int k = 0; k < GA_PACK_MAX_KEYS; k++)
	{
		if (k < pack.nkeys)
		{
			const GaDevColumn &column = keys.columns[k];
			const int	bits = pack.bits[k];
			unsigned long long field;

			if (row_is_null(column.validity, row))
				field = 1ULL << bits;	/* null bit; bits < 64 when nullable */
			else
			{
				field = (unsigned long long) load_int(column.values, column.type, row);
				if (bits < 64)
					field &= (1ULL << bits) - 1;
			}
			packed |= field << pack.shift[k];
		}
	}
	return packed;
}

/* The key words of a packed tuple (the inverse of pack_key). */
template <int NW>
__device__ __forceinline__ void
unpack_key(const GaDevPack &pack, unsigned long long packed, long long (&words)[NW])
{
	long long	mask = 0;

#pragma unroll
	for (int k = 0; k < NW - 1; k++)
	{
		words[k + 1] = 0;
		if (k < pack.nkeys)
		{
			const int	bits = pack.bits[k];
			unsigned long long field = packed >> pack.shift[k];

			if (pack.null_bit[k] && ((field >> bits) & 1))
				mask |= 1LL << k;
			else if (bits >= 64)
				words[k + 1] = (long long) field;
			else
				words[k + 1] = ((long long) (field << (64 - bits))) >> (64 - bits);
		}
	}
	words[0] = mask;
}

/*
 * The slot of a packed key in a block's open-addressing table of nslots
 * slots, claiming an empty one; -1 when GA_LOCAL_PROBES slots from its home
 * hold other keys.  Slots are never emptied, so a key present in the table
 * lies within that many slots of its home and is always found there.
 */
__device__ __forceinline__ int
local_slot(unsigned long long *slot_keys, int nslots, unsigned long long packed)
{
	volatile unsigned long long *vkeys = slot_keys;
	int			s = (int) __umul64hi(ga_mix64(packed), (unsigned long long) nslots);

	for (int probe = 0; probe < GA_LOCAL_PROBES; probe++)
	{
		unsigned long long k = vkeys[s];

		if (k == packed)
			return s;
		if (k == GA_PACK_EMPTY)
		{
			k = atomicCAS(&slot_keys[s], GA_PACK_EMPTY, packed);
			if (k == GA_PACK_EMPTY || k == packed)
				return s;
		}
		if (++s == nslots)
			s = 0;
	}
	return -1;
}

/*
 * A row's entry in a direct index (GaDevPerfect), or -1 when a key lies
 * outside its range (the row escapes).
 */
__device__ __forceinline__ long long
perfect_index(const GaDevKeys &keys, const GaDevPerfect &perfect, int64_t row)
{
	long long	index = 0;

#pragma unroll
	for (int k = 0; k < GA_PERFECT_MAX_KEYS; k++)
	{
		if (k < perfect.nkeys)
		{
			const GaDevColumn &column = keys.columns[k];
			const long long values = perfect.base[k] - 1;	/* non-null digits */
			long long	digit;

			if (row_is_null(column.validity, row))
				digit = values;
			else
			{
				unsigned long long d =
					(unsigned long long) load_int(column.values, column.type, row) -
					(unsigned long long) perfect.lo[k];

				if (d >= (unsigned long long) values)
					return -1;
				digit = (long long) d;
			}
			index += digit * perfect.stride[k];
		}
	}
	return index;
}

/* Set bit e of a bitmap (global or shared), reading first to spare atomics. */
__device__ __forceinline__ void
mark_seen(unsigned int *bits, long long e)
{
	unsigned int bit = 1u << (e & 31);
	unsigned int *word = bits + (e >> 5);

	if (!(*(volatile unsigned int *) word & bit))
		atomicOr(word, bit);
}

/*
 * Append a row to the escape list; the converged lanes of the warp reserve
 * their places with one atomic.
 */
__device__ __forceinline__ void
append_escape(GaDevControl *control, int32_t *escape_rows, int64_t row)
{
	cg::coalesced_group active = cg::coalesced_threads();
	unsigned long long base = 0;

	if (active.thread_rank() == 0)
		base = atomicAdd(&control->escapes, (unsigned long long) active.num_threads());
	base = active.shfl(base, 0);
	escape_rows[base + active.thread_rank()] = (int32_t) row;
}

/*
 * The i-th (0 <= i < n) of n entries a block merges into global memory at
 * its end, counted from a start that differs from block to block.  Blocks
 * of a one-pass kernel end at about the same moment (a cooperative one
 * exactly together); in the same order they would all hit the same global
 * accumulators, or insert the same keys, at once, and serialise there.
 */
__device__ __forceinline__ int64_t
staggered(int64_t i, int64_t n)
{
	const int64_t e = i + (int64_t) blockIdx.x * n / gridDim.x;

	return e < n ? e : e - n;
}

/* Positions a launch covers: nrows, or fewer when a device count says so. */
__device__ __forceinline__ int64_t
positions(int64_t nrows, const unsigned long long *count)
{
	if (count != nullptr)
	{
		unsigned long long n = *(volatile const unsigned long long *) count;

		if (n < (unsigned long long) nrows)
			return (int64_t) n;
	}
	return nrows;
}

#endif							/* GPUAGG_HASHAGG_DEVICE_CUH */
