/*-------------------------------------------------------------------------
 *
 * hashagg_kernels.cu
 *	  GPU hash aggregation kernels and their launch functions.
 *
 * A batch is aggregated in two phases (Wu et al., "Efficiently Processing
 * Joins and Grouped Aggregations on GPUs", Algorithm 1):
 *
 * Phase 1 (assign_group_ids_kernel) gives every row a dense group id.  The
 * row's key words (the null mask, then every key widened to int64) are
 * hashed and looked up by linear probing in a global table of int32 slots.
 * A new key is inserted by CAS EMPTY -> BUSY; the winner takes the next id
 * from the group counter, writes the key words into the dense key arrays,
 * fences, and publishes the id in the slot.  Readers that meet BUSY spin
 * until the id appears; readers that meet an id compare the dense key words
 * with L2 loads (__ldcg): L1 is not coherent, and a line of the key arrays
 * may have entered L1 before the winner wrote it.
 *
 * When the counter reaches the capacity of the dense arrays, the winner
 * poisons its slot and raises the overflow flag; everyone meeting poison
 * raises it too and gives up on the row.  The host then grows the table,
 * rebuilds the slots from the dense keys (rebuild_slots_kernel) and runs
 * both phases of the batch again (the Rapids report's "detect a full table
 * and relaunch").  Phase 1 is idempotent, and phase 2 does nothing while
 * the flag is set, so nothing is counted twice.
 *
 * Phase 2 accumulates every aggregate into dense per-group arrays, either
 * with atomics straight into global memory (accumulate_global_kernel) or,
 * while the groups fit, into per-block accumulators in shared memory that
 * each block merges into the global arrays at the end (Karnagel et al. via
 * Rosenfeld et al.: per-block tables in shared memory avoid global
 * contention for few groups).  The shared kernel reads the group count
 * after phase 1 and falls back to global atomics when it is too large.
 *
 * Integer sums are exact 128-bit two's-complement sums: the low word is
 * added atomically and the carry out of that very addition goes to the high
 * word together with the sign extension, so any number of rows sums exactly
 * (modulo 2^128).  Float MIN/MAX use an order-preserving map to int64 (NaN
 * largest) and integer atomicMin/atomicMax.
 *
 * Derived columns (compute_derived_kernel) are computed before phase 1,
 * with derived_expr.h's exact arithmetic (the CPU device's too): a block
 * stages one program at a time in shared memory, every thread evaluates it
 * in its row, and each derived column's validity bits for a warp's 32
 * rows are one __ballot_sync and one 32-bit store by lane 0, so no two
 * threads write one word.
 *
 * Every kernel uses grid-stride loops with 64-bit indices; grids come from
 * the occupancy calculator for the device at hand.
 *
 *-------------------------------------------------------------------------
 */
#include "hashagg_kernels.cuh"
#include "gpuagg_device.h"
#include "derived_expr.h"

#include <limits.h>

/* ------------------------------------------------------------------------
 * Device building blocks
 * ------------------------------------------------------------------------
 */

/* MurmurHash3's 64-bit finaliser: every input bit affects every output bit. */
__device__ __forceinline__ uint64_t
fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

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
 * Add the 128-bit value (hi:lo) to the two's-complement int128 at p[0] (low
 * word) and p[1] (high word).  The carry out of this addition to the low
 * word is computed from the value the atomic returned, so it belongs to this
 * addition alone; the sum is exact whatever the interleaving.
 */
__device__ __forceinline__ void
add_int128(unsigned long long *p, unsigned long long lo, unsigned long long hi)
{
	unsigned long long old = atomicAdd(p, lo);
	unsigned long long high = hi + (old + lo < old ? 1ULL : 0ULL);

	if (high != 0)
		atomicAdd(p + 1, high);
}

/* Set the accumulator of group g (array acc of operation op) to its identity. */
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
			((float *) acc)[g] = -0.0f;	/* -0 is the exact additive identity */
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
 * `shift`: in a block's shared-memory table, the global table's shift for the
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
 * Fold a MOMENTS or COMOMENTS row into group g of acc (the global array
 * a.acc, or a block's shared copy).  y_column is the partner entry's column
 * (COMOMENTS only).
 */
__device__ __forceinline__ void
accumulate_moments(const GaDevAgg &a, const GaDevColumn *y_column, unsigned char *acc,
				   int64_t g, int64_t row)
{
	double		x = load_float(a.input.values, a.input.type, row);

	if (a.op == GA_AGG_MOMENTS)
	{
		GaMoments  *m = (GaMoments *) acc + g;
		GaMoments  *global = (GaMoments *) a.acc + g;

		atomicAdd((unsigned long long *) &m->n, 1ULL);
		moments_add(&m->shift, &global->shift, (unsigned long long *) &m->nonfinite,
					&m->sum, &m->sum_err, &m->sumsq, &m->sumsq_err, x);
	}
	else
	{
		GaComoments *m = (GaComoments *) acc + g;
		GaComoments *global = (GaComoments *) a.acc + g;
		double		y,
					dx,
					dy;

		if (row_is_null(y_column->validity, row))
			return;
		y = load_float(y_column->values, y_column->type, row);
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
 * Merge group g of a block's MOMENTS or COMOMENTS into the global array.
 * The block shifted by the global shift (moments_shift_for), so the sums
 * add as they are.
 */
__device__ __forceinline__ void
merge_moments(const GaDevAgg &a, const unsigned char *shared, int64_t g)
{
	if (a.op == GA_AGG_MOMENTS)
	{
		const GaMoments *b = (const GaMoments *) shared + g;
		GaMoments  *m = (GaMoments *) a.acc + g;

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
		const GaComoments *b = (const GaComoments *) shared + g;
		GaComoments *m = (GaComoments *) a.acc + g;

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
 * Fold row `row` into group g's accumulator of aggregate `index` of aggs,
 * whose array is acc (global or shared memory: the same atomics work on
 * both).  Null inputs count for COUNT_ROWS only.
 */
__device__ __forceinline__ void
accumulate_value(const GaDevAggs &aggs, int index, unsigned char *acc, int64_t g,
				 int64_t row)
{
	const GaDevAgg &a = aggs.aggs[index];
	const int	op = a.op;

	if (op == GA_AGG_COUNT_ROWS)
	{
		atomicAdd((unsigned long long *) acc + g, 1ULL);
		return;
	}
	if (row_is_null(a.input.validity, row))
		return;
	switch (op)
	{
		case GA_AGG_COUNT:
			atomicAdd((unsigned long long *) acc + g, 1ULL);
			break;
		case GA_AGG_COUNT_INF:
			if (isinf(load_float(a.input.values, a.input.type, row)))
				atomicAdd((unsigned long long *) acc + g, 1ULL);
			break;
		case GA_AGG_SUM_INT:
			{
				long long	v = load_int(a.input.values, a.input.type, row);

				add_int128((unsigned long long *) acc + 2 * g,
						   (unsigned long long) v, v < 0 ? ~0ULL : 0ULL);
			}
			break;
		case GA_AGG_SUM_FLOAT32:
			atomicAdd((float *) acc + g, __ldg((const float *) a.input.values + row));
			break;
		case GA_AGG_SUM_FLOAT64:
			atomicAdd((double *) acc + g, load_float(a.input.values, a.input.type, row));
			break;
		case GA_AGG_MIN:
			atomicMin((long long *) acc + g,
					  a.input_is_float ?
					  float64_to_ordered(load_float(a.input.values, a.input.type, row)) :
					  load_int(a.input.values, a.input.type, row));
			break;
		case GA_AGG_MAX:
			atomicMax((long long *) acc + g,
					  a.input_is_float ?
					  float64_to_ordered(load_float(a.input.values, a.input.type, row)) :
					  load_int(a.input.values, a.input.type, row));
			break;
		case GA_AGG_MOMENTS:
		case GA_AGG_COMOMENTS:
			accumulate_moments(a, &aggs.aggs[a.partner].input, acc, g, row);
			break;
		default:
			break;
	}
}

/*
 * Merge group g of a block's shared accumulators (shared) into the global
 * array of aggregate a.  Groups the block never touched still hold the
 * identity and are skipped, which saves most global atomics when the block
 * saw only some of the groups.  (Float sums start at -0.0, the exact additive
 * identity, so that a group of -0 values sums to -0 as in PostgreSQL; only a
 * partial sum that is still exactly -0.0 can be skipped.)
 */
__device__ __forceinline__ void
merge_group(const GaDevAgg &a, const unsigned char *shared, int64_t g)
{
	switch (a.op)
	{
		case GA_AGG_SUM_INT:
			{
				unsigned long long lo = ((const unsigned long long *) shared)[2 * g];
				unsigned long long hi = ((const unsigned long long *) shared)[2 * g + 1];

				if ((lo | hi) != 0)
					add_int128((unsigned long long *) a.acc + 2 * g, lo, hi);
			}
			break;
		case GA_AGG_SUM_FLOAT32:
			{
				float		v = ((const float *) shared)[g];

				if (__float_as_uint(v) != 0x80000000u)
					atomicAdd((float *) a.acc + g, v);
			}
			break;
		case GA_AGG_SUM_FLOAT64:
			{
				double		v = ((const double *) shared)[g];

				if (__double_as_longlong(v) != (long long) 0x8000000000000000ULL)
					atomicAdd((double *) a.acc + g, v);
			}
			break;
		case GA_AGG_MIN:
			{
				long long	v = ((const long long *) shared)[g];

				if (v != LLONG_MAX)
					atomicMin((long long *) a.acc + g, v);
			}
			break;
		case GA_AGG_MAX:
			{
				long long	v = ((const long long *) shared)[g];

				if (v != LLONG_MIN)
					atomicMax((long long *) a.acc + g, v);
			}
			break;
		case GA_AGG_MOMENTS:
		case GA_AGG_COMOMENTS:
			merge_moments(a, shared, g);
			break;
		default:				/* the counts */
			{
				unsigned long long v = ((const unsigned long long *) shared)[g];

				if (v != 0)
					atomicAdd((unsigned long long *) a.acc + g, v);
			}
			break;
	}
}

/* Hash the first nwords of a key tuple (NW is the unrolled maximum). */
template <int NW>
__device__ __forceinline__ uint64_t
hash_words(const long long (&words)[NW], int nwords)
{
	uint64_t	h = 0x243f6a8885a308d3ULL;

#pragma unroll
	for (int w = 0; w < NW; w++)
		if (w < nwords)
			h = fmix64(h ^ (uint64_t) words[w]) + 0x9e3779b97f4a7c15ULL;
	return fmix64(h);
}

/*
 * Find the dense group id of a key tuple, inserting it when new (Wu et al.,
 * Algorithm 1, stage 1).  Returns -1 when the group arrays are full: the
 * overflow flag is then set and the host will grow the table and redo the
 * batch.
 */
template <int NW>
__device__ __forceinline__ int32_t
find_or_insert(const GaDevTable &table, const long long (&words)[NW], int nwords)
{
	volatile int32_t *vslots = table.slots;
	const int64_t capacity = table.capacity;
	int64_t		slot = (int64_t) (hash_words<NW>(words, nwords) & (uint64_t) table.slot_mask);

	for (;;)
	{
		int32_t		v = vslots[slot];

		if (v == GA_SLOT_EMPTY)
		{
			v = atomicCAS((int *) &table.slots[slot], GA_SLOT_EMPTY, GA_SLOT_BUSY);
			if (v == GA_SLOT_EMPTY)
			{
				/* This thread owns the slot: take an id, write key, publish. */
				unsigned long long g = atomicAdd(&table.control->ngroups, 1ULL);

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
 * Kernels
 * ------------------------------------------------------------------------
 */

/*
 * Phase 1: group_ids[row] = dense group id of the row's key tuple, or -1
 * when the table overflowed.  NW = nkeys + 1 rounded up to an instantiated
 * size, so that the key words stay in registers.
 */
template <int NW>
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
assign_group_ids_kernel(const GaDevKeys keys, const GaDevTable table,
						int64_t nrows, int32_t *group_ids)
{
	const int	nkeys = keys.nkeys;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t row = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 row < nrows; row += stride)
	{
		long long	words[NW];
		long long	mask = 0;

#pragma unroll
		for (int k = 0; k < NW - 1; k++)
		{
			words[k + 1] = 0;
			if (k < nkeys)
			{
				const GaDevColumn &column = keys.columns[k];

				if (row_is_null(column.validity, row))
					mask |= 1LL << k;
				else
					words[k + 1] = load_int(column.values, column.type, row);
			}
		}
		words[0] = mask;
		group_ids[row] = find_or_insert<NW>(table, words, nkeys + 1);
	}
}

/*
 * Growth: insert the ids [0, ngroups) into a table whose slots are all
 * EMPTY, hashing the dense keys already copied into it.  The keys are
 * distinct, so only an empty slot has to be found.
 */
template <int NW>
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
rebuild_slots_kernel(const GaDevTable table, int64_t ngroups)
{
	const int	nwords = table.nkeys + 1;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t g = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 g < ngroups; g += stride)
	{
		long long	words[NW];
		int64_t		slot;

#pragma unroll
		for (int w = 0; w < NW; w++)
			words[w] = w < nwords ? table.keys[w * table.capacity + g] : 0;
		slot = (int64_t) (hash_words<NW>(words, nwords) & (uint64_t) table.slot_mask);
		while (atomicCAS((int *) &table.slots[slot], GA_SLOT_EMPTY, (int) g) != GA_SLOT_EMPTY)
			slot = (slot + 1) & table.slot_mask;
	}
}

/* Set the accumulators of groups [begin, end) to their identities. */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
init_accumulators_kernel(const GaDevAggs aggs, int64_t begin, int64_t end)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t g = begin + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 g < end; g += stride)
		for (int a = 0; a < aggs.naggs; a++)
			init_group(aggs.aggs[a].op, (unsigned char *) aggs.aggs[a].acc, g);
}

/* Accumulate rows [0, nrows) straight into the global accumulators. */
__device__ __forceinline__ void
accumulate_rows_global(const GaDevAggs &aggs, const int32_t *group_ids, int64_t nrows)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t row = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 row < nrows; row += stride)
	{
		int64_t		g = group_ids != nullptr ? __ldg(group_ids + row) : 0;

		if (g < 0)
			continue;			/* cannot happen without overflow */
		for (int a = 0; a < aggs.naggs; a++)
			accumulate_value(aggs, a, (unsigned char *) aggs.aggs[a].acc, g, row);
	}
}

/* Phase 2 with global atomics; nothing when phase 1 overflowed. */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
accumulate_global_kernel(const GaDevAggs aggs, const int32_t *group_ids,
						 int64_t nrows, GaDevControl *control)
{
	if (((volatile GaDevControl *) control)->overflow)
		return;
	accumulate_rows_global(aggs, group_ids, nrows);
}

/*
 * Phase 2 with per-block shared-memory accumulators for groups_alloc groups
 * (Karnagel et al.): initialise the block's copy of the groups that exist,
 * accumulate the block's rows with shared atomics, merge the touched groups
 * into global memory.  Falls back to global atomics (a block-uniform
 * branch) when phase 1 produced more groups than the shared table holds.
 * Nothing when phase 1 overflowed.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
accumulate_shared_kernel(const GaDevAggs aggs, const int32_t *group_ids,
						 int64_t nrows, GaDevControl *control, int64_t groups_alloc)
{
	extern __shared__ __align__(16) unsigned char shared_acc[];
	volatile GaDevControl *vcontrol = control;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	int64_t		ngroups;

	if (vcontrol->overflow)
		return;
	ngroups = (int64_t) vcontrol->ngroups;
	if (ngroups > groups_alloc)
	{
		if (blockIdx.x == 0 && threadIdx.x == 0)
			atomicAdd(&control->shared_fallbacks, 1u);
		accumulate_rows_global(aggs, group_ids, nrows);
		return;
	}

	for (int64_t g = threadIdx.x; g < ngroups; g += blockDim.x)
		for (int a = 0; a < aggs.naggs; a++)
			init_group(aggs.aggs[a].op,
					   shared_acc + aggs.aggs[a].shared_unit_offset * groups_alloc, g);
	__syncthreads();

	for (int64_t row = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 row < nrows; row += stride)
	{
		int64_t		g = group_ids != nullptr ? __ldg(group_ids + row) : 0;

		if (g < 0 || g >= ngroups)
			continue;			/* cannot happen without overflow */
		for (int a = 0; a < aggs.naggs; a++)
			accumulate_value(aggs, a,
							 shared_acc + aggs.aggs[a].shared_unit_offset * groups_alloc,
							 g, row);
	}
	__syncthreads();

	for (int64_t g = threadIdx.x; g < ngroups; g += blockDim.x)
		for (int a = 0; a < aggs.naggs; a++)
			merge_group(aggs.aggs[a],
						shared_acc + aggs.aggs[a].shared_unit_offset * groups_alloc, g);
}

/*
 * Evaluate a derived column's program in one row of the input buffer:
 * null when a COLUMN operand is null, else NaN when an operand's NaN flag
 * is valid, else finite with the value in *value.
 */
__device__ __forceinline__ int
derived_row(const GaDevDerivedProgram &program, int64_t row, GaInt192 *value)
{
	GaExprStack stack;
	bool		nan = false;

	stack.depth = 0;
	for (int s = 0; s < program.nsteps; s++)
	{
		const GaDevExprStep &step = program.steps[s];
		long long	operand = step.constant;

		if (step.op == GA_EXPR_COLUMN)
		{
			if (row_is_null(step.validity, row))
				return GA_EXPR_ROW_NULL;
			if (step.nan_validity != nullptr && !row_is_null(step.nan_validity, row))
				nan = true;
			operand = load_int(step.values, step.type, row);
		}
		if (!nan)
			ga_expr_apply(&stack, step.op, step.power, (int64_t) operand);
	}
	if (nan)
		return GA_EXPR_ROW_NAN;
	*value = stack.v[0];
	return GA_EXPR_ROW_FINITE;
}

static_assert(sizeof(GaDevDerivedProgram) % sizeof(long long) == 0,
			  "a derived program is staged in 8-byte words");

/*
 * Derived columns: for each program, the block stages it in shared memory,
 * then every thread evaluates it in its row and writes each output's value
 * and, through a warp ballot, the warp's validity word.  The row loop
 * keeps each warp on 32 consecutive rows starting at a multiple of 32, so
 * every lane reaches the ballots (the loop bound is uniform in a warp).
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
compute_derived_kernel(const GaDevDerivedProgram *programs, int nprograms, int64_t nrows)
{
	__shared__ GaDevDerivedProgram program;
	const int	lane = threadIdx.x & 31;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	const int	words = (int) (sizeof(GaDevDerivedProgram) / sizeof(long long));

	for (int p = 0; p < nprograms; p++)
	{
		__syncthreads();		/* every thread is done with the previous one */
		for (int i = threadIdx.x; i < words; i += blockDim.x)
			((long long *) &program)[i] = __ldg((const long long *) (programs + p) + i);
		__syncthreads();

		for (int64_t base = (int64_t) blockIdx.x * blockDim.x + threadIdx.x - lane;
			 base < nrows; base += stride)
		{
			const int64_t row = base + lane;
			const bool	active = row < nrows;
			GaInt192	value;
			int			state = GA_EXPR_ROW_NULL;

			value.w[0] = value.w[1] = value.w[2] = 0;
			if (active)
				state = derived_row(program, row, &value);
			for (int o = 0; o < program.noutputs; o++)
			{
				const GaDevDerivedOutput &out = program.outputs[o];
				const bool	valid = out.part == GA_DERIVED_NAN ?
					state == GA_EXPR_ROW_NAN : state == GA_EXPR_ROW_FINITE;

				if (active && out.values != nullptr)
					out.values[row] = valid ? (long long) ga_expr_part(value, out.part, out.limb) : 0;
				if (out.validity != nullptr)
				{
					unsigned int word = __ballot_sync(0xffffffffu, valid);

					if (lane == 0)
						out.validity[base >> 5] = word;
				}
			}
		}
	}
}

/* Set the group counter and clear the overflow flag (one thread). */
__global__ void
reset_control_kernel(GaDevControl *control, int64_t ngroups)
{
	control->ngroups = (unsigned long long) ngroups;
	control->overflow = 0;
}

/* ------------------------------------------------------------------------
 * Launch functions (host)
 * ------------------------------------------------------------------------
 */

/*
 * Grid size for `kernel`: as many blocks as can be resident on the device
 * (occupancy calculator), but no more than there are items_per_block chunks
 * of work.  Rosenfeld et al. show launch parameters are GPU-specific, so
 * they come from the device rather than constants.
 */
static cudaError_t
grid_size(const void *kernel, size_t shared_bytes, int sm_count, int64_t items,
		  int64_t items_per_block, int *grid)
{
	int			per_sm = 0;
	int64_t		resident;
	int64_t		needed;
	int64_t		blocks;
	cudaError_t err;

	err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
														 GA_GPU_BLOCK_THREADS,
														 shared_bytes);
	if (err != cudaSuccess)
		return err;
	if (per_sm < 1)
		per_sm = 1;				/* the launch will report why it cannot run */
	resident = (int64_t) (sm_count > 0 ? sm_count : 1) * per_sm;
	needed = (items + items_per_block - 1) / items_per_block;
	blocks = needed < resident ? needed : resident;
	if (blocks < 1)
		blocks = 1;
	if (blocks > INT_MAX)
		blocks = INT_MAX;
	*grid = (int) blocks;
	return cudaSuccess;
}

/*
 * Clear a stale error left by an earlier, already handled failure (such as
 * a failed allocation), so that the check after a launch reports the
 * launch's own error.  Sticky errors cannot be cleared and still show.
 */
static inline void
clear_stale_error(void)
{
	(void) cudaGetLastError();
}

/* Launch phase 1 instantiated for up to NW key words. */
template <int NW>
static cudaError_t
launch_assign_group_ids(const GaDevKeys *keys, const GaDevTable *table,
						int64_t nrows, int32_t *group_ids, int sm_count,
						cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	err = grid_size((const void *) assign_group_ids_kernel<NW>, 0, sm_count,
					nrows, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	clear_stale_error();
	assign_group_ids_kernel<NW><<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*keys, *table,
																		  nrows, group_ids);
	return cudaGetLastError();
}

/* Launch phase 1 with the smallest instantiation that holds nkeys + 1 words. */
cudaError_t
ga_launch_assign_group_ids(const GaDevKeys *keys, const GaDevTable *table,
						   int64_t nrows, int32_t *group_ids, int sm_count,
						   cudaStream_t stream)
{
	int			nwords = keys->nkeys + 1;

	if (nrows <= 0)
		return cudaSuccess;
	if (nwords <= 2)
		return launch_assign_group_ids<2>(keys, table, nrows, group_ids, sm_count, stream);
	if (nwords <= 3)
		return launch_assign_group_ids<3>(keys, table, nrows, group_ids, sm_count, stream);
	if (nwords <= 5)
		return launch_assign_group_ids<5>(keys, table, nrows, group_ids, sm_count, stream);
	if (nwords <= 9)
		return launch_assign_group_ids<9>(keys, table, nrows, group_ids, sm_count, stream);
	if (nwords <= 17)
		return launch_assign_group_ids<17>(keys, table, nrows, group_ids, sm_count, stream);
	return launch_assign_group_ids<GA_GPU_MAX_KEYS + 1>(keys, table, nrows, group_ids,
													   sm_count, stream);
}

/* Launch the slot rebuild instantiated for up to NW key words. */
template <int NW>
static cudaError_t
launch_rebuild_slots(const GaDevTable *table, int64_t ngroups, int sm_count,
					 cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	err = grid_size((const void *) rebuild_slots_kernel<NW>, 0, sm_count,
					ngroups, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	clear_stale_error();
	rebuild_slots_kernel<NW><<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*table, ngroups);
	return cudaGetLastError();
}

/* Launch the slot rebuild with the instantiation that holds the key words. */
cudaError_t
ga_launch_rebuild_slots(const GaDevTable *table, int64_t ngroups, int sm_count,
						cudaStream_t stream)
{
	int			nwords = table->nkeys + 1;

	if (ngroups <= 0)
		return cudaSuccess;
	if (nwords <= 2)
		return launch_rebuild_slots<2>(table, ngroups, sm_count, stream);
	if (nwords <= 3)
		return launch_rebuild_slots<3>(table, ngroups, sm_count, stream);
	if (nwords <= 5)
		return launch_rebuild_slots<5>(table, ngroups, sm_count, stream);
	if (nwords <= 9)
		return launch_rebuild_slots<9>(table, ngroups, sm_count, stream);
	if (nwords <= 17)
		return launch_rebuild_slots<17>(table, ngroups, sm_count, stream);
	return launch_rebuild_slots<GA_GPU_MAX_KEYS + 1>(table, ngroups, sm_count, stream);
}

/* Launch the accumulator initialisation for groups [begin, end). */
cudaError_t
ga_launch_init_accumulators(const GaDevAggs *aggs, int64_t begin, int64_t end,
							int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (aggs->naggs == 0 || end <= begin)
		return cudaSuccess;
	err = grid_size((const void *) init_accumulators_kernel, 0, sm_count,
					end - begin, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	clear_stale_error();
	init_accumulators_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*aggs, begin, end);
	return cudaGetLastError();
}

/* Launch phase 2 with global atomics (nothing to do without aggregates). */
cudaError_t
ga_launch_accumulate_global(const GaDevAggs *aggs, const int32_t *group_ids,
							int64_t nrows, GaDevControl *control, int sm_count,
							cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (aggs->naggs == 0 || nrows <= 0)
		return cudaSuccess;
	err = grid_size((const void *) accumulate_global_kernel, 0, sm_count,
					nrows, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	clear_stale_error();
	accumulate_global_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*aggs, group_ids,
																	   nrows, control);
	return cudaGetLastError();
}

/* Launch phase 2 with per-block shared-memory accumulators. */
cudaError_t
ga_launch_accumulate_shared(const GaDevAggs *aggs, const int32_t *group_ids,
							int64_t nrows, GaDevControl *control,
							int64_t groups_alloc, size_t shared_bytes,
							int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (aggs->naggs == 0 || nrows <= 0)
		return cudaSuccess;
	if (shared_bytes > 48 * 1024)
	{
		/* Above 48 KB a kernel must opt in to its dynamic shared memory. */
		err = cudaFuncSetAttribute((const void *) accumulate_shared_kernel,
								   cudaFuncAttributeMaxDynamicSharedMemorySize,
								   (int) shared_bytes);
		if (err != cudaSuccess)
			return err;
	}
	/*
	 * Every block initialises and merges the whole shared table, so give
	 * each block at least a few rows per thread.
	 */
	err = grid_size((const void *) accumulate_shared_kernel, shared_bytes, sm_count,
					nrows, 4 * GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	clear_stale_error();
	accumulate_shared_kernel<<<grid, GA_GPU_BLOCK_THREADS, shared_bytes, stream>>>(*aggs,
																				 group_ids,
																				 nrows,
																				 control,
																				 groups_alloc);
	return cudaGetLastError();
}

/* Launch the derived columns' kernel over rows [0, nrows) (nothing without programs). */
cudaError_t
ga_launch_compute_derived(const GaDevDerivedProgram *programs, int nprograms, int64_t nrows,
						  int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (nprograms <= 0 || nrows <= 0)
		return cudaSuccess;
	err = grid_size((const void *) compute_derived_kernel, 0, sm_count, nrows,
					GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	clear_stale_error();
	compute_derived_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(programs, nprograms,
																	  nrows);
	return cudaGetLastError();
}

/* Launch the one-thread control reset, ordered on the stream. */
cudaError_t
ga_launch_reset_control(GaDevControl *control, int64_t ngroups, cudaStream_t stream)
{
	clear_stale_error();
	reset_control_kernel<<<1, 1, 0, stream>>>(control, ngroups);
	return cudaGetLastError();
}
