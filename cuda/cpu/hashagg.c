/*-------------------------------------------------------------------------
 *
 * cpu/hashagg.c
 *	  The CPU device: the reference implementation of gpuagg_device.h, and
 *	  the device a query falls back to when no GPU is usable.
 *
 * The CPU works synchronously: ga_agg_submit aggregates the whole batch
 * before it returns, so one batch object, allocated with malloc, is handed
 * out again and again.
 *
 * A batch is processed in chunks of CPU_CHUNK_ROWS rows, in two phases, the
 * same two phases the GPU uses (Wu et al., Algorithm 1):
 *
 * 1. Group assignment.  The key columns of the chunk are widened to int64
 *	  (a null key counts as 0 and is flagged), hashed column by column, and
 *	  looked up in an open-addressing table (linear probing, a power of two
 *	  of slots, at most half full, grown by rehashing).  A slot holds a
 *	  key tuple's hash and its dense group id; group ids are given in
 *	  insertion order and the keys themselves live in dense per-key arrays,
 *	  which become the result columns as they are.
 *
 * 2. Accumulation.  For every aggregate one tight loop over the chunk, chosen
 *	  by operation and input type, updates dense per-group accumulators:
 *	  counts and integer min/max in int64, integer sums in __int128, float
 *	  sums in float or double (float for SUM_FLOAT32, like PostgreSQL's
 *	  sum(float4)), float min/max as ga_float64_to_ordered() integers.
 *	  finish converts the accumulators in place into the result types.
 *
 * Without keys there is exactly one group, created with the aggregation, so
 * that a plain aggregate over no rows still yields its row.
 *
 * Derived columns (gpuagg_device.h) are computed in each chunk before
 * phase 1, in the batch itself (their submitted contents are ignored):
 * each distinct program once per row, with derived_expr.h's arithmetic,
 * the same the GPU kernels use.  An aggjoin piece (cpu/aggjoin.c) has its
 * operands gathered and its derived columns computed here the same way.
 *
 * The CPU device's hash join lives in cpu/hashjoin.c; its entries complete the
 * table of functions at the end of this file.  An aggjoin
 * (cpu/aggjoin.c) forms the joined rows of every probe batch in pieces and
 * hands each piece to cpu_aggregate, the path every submitted batch takes.
 *
 * Nothing here prints or aborts.  A failure (out of memory, cancel) leaves
 * the aggregation half-updated, so it is remembered and every later call
 * reports it again; ga_agg_destroy is always safe.
 *
 *-------------------------------------------------------------------------
 */
#include "device_impl.h"
#include "derived_expr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rows per processing chunk: the chunk's scratch arrays stay in cache. */
#define CPU_CHUNK_ROWS 2048

/* Rows aggregated between two calls of the wait callback. */
#define CPU_WAIT_EVERY_ROWS 65536

/*
 * Smallest table, and caps on the initial table and group arrays that an
 * estimate may ask for: a wild estimate must not cost a huge allocation,
 * and growing by doubling is cheap.
 */
#define CPU_MIN_SLOTS 16
#define CPU_MAX_INITIAL_SLOTS (INT64_C(1) << 20)
#define CPU_MAX_INITIAL_GROUPS (INT64_C(1) << 14)

#define CPU_HASH_SEED UINT64_C(0x243f6a8885a308d3)
#define CPU_HASH_MULT UINT64_C(0x9e3779b97f4a7c15)

/* How one aggregate accumulates; chosen from its op and input type. */
typedef enum CpuAccKind
{
	CPU_ACC_COUNT_ROWS,			/* int64 */
	CPU_ACC_COUNT,				/* int64 */
	CPU_ACC_COUNT_NONFINITE,	/* int64 */
	CPU_ACC_SUM_INT,			/* __int128, GaInt128 in the result */
	CPU_ACC_SUM_FLOAT32,		/* float */
	CPU_ACC_SUM_FLOAT64,		/* double */
	CPU_ACC_MIN_INT,			/* int64 */
	CPU_ACC_MAX_INT,			/* int64 */
	CPU_ACC_MIN_FLOAT,			/* ordered int64, double in the result */
	CPU_ACC_MAX_FLOAT,			/* ordered int64, double in the result */
	CPU_ACC_MOMENTS,			/* GaMoments */
	CPU_ACC_COMOMENTS			/* GaComoments */
} CpuAccKind;

/* One hash table slot: group + 1 (0 = empty) and the key tuple's hash. */
typedef struct CpuSlot
{
	uint64_t	hash;
	int64_t		group_plus1;
} CpuSlot;

typedef struct CpuAgg
{
	/* the request, copied */
	int			ncolumns;
	GaValueType *column_types;
	int			nkeys;
	int		   *key_columns;
	int			naggs;
	GaAggSpec  *aggs;
	CpuAccKind *acc_kinds;

	/* the one batch, reused */
	GaBatch		batch;
	int64_t		validity_bytes;

	/* hash table */
	CpuSlot    *slots;
	int64_t		nslots;			/* a power of two */

	/* groups, dense; these arrays become the result */
	int64_t		ngroups;
	int64_t		group_capacity;
	int64_t   **keys;			/* [nkeys][group_capacity] */
	uint8_t   **key_isnull;		/* [nkeys][group_capacity] */
	void	  **acc;			/* [naggs][group_capacity], by acc_kinds */

	/* per-chunk scratch */
	int64_t    *chunk_keys;		/* [nkeys][CPU_CHUNK_ROWS] */
	uint8_t    *chunk_nulls;	/* [nkeys][CPU_CHUNK_ROWS] */
	uint64_t   *chunk_hash;		/* [CPU_CHUNK_ROWS] */
	int64_t    *chunk_group;	/* [CPU_CHUNK_ROWS] */

	/* aggjoins: the build side and the joined pieces */
	CpuAggJoin *join;

	/* derived columns: the request's, copied and grouped by program */
	GaDerivedPlan *derived;
	uint8_t    *column_is_derived;	/* per column */

	GaAggResult result;
	int			finished;
	GaFailure	failure;
	GaAggStats	stats;
} CpuAgg;

/* The CPU device has no state; ga_cpu_open returns this token. */
static int	cpu_device_token;

/* Open the CPU device: always possible, nothing to set up. */
void *
ga_cpu_open(GaStatus *status)
{
	ga_status_ok(status);
	return &cpu_device_token;
}

/* Grow an array to n elements of size bytes, keeping *p on failure. */
static int
cpu_realloc_array(void **p, int64_t n, size_t size)
{
	void	   *q;

	if (n < 1)
		n = 1;
	if ((uint64_t) n > SIZE_MAX / size)
		return 0;
	q = realloc(*p, (size_t) n * size);
	if (q == NULL)
		return 0;
	*p = q;
	return 1;
}

/* Pick the accumulator of aggregate spec over a column of type input. */
static CpuAccKind
cpu_acc_kind(const GaAggSpec *spec, GaValueType input)
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
static size_t
cpu_acc_width(CpuAccKind kind)
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
static void
cpu_acc_init(void *acc, CpuAccKind kind, int64_t from, int64_t to)
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
 * Make room for capacity groups in every dense array.  On failure the
 * arrays already grown keep their larger size, which is harmless.
 */
static int
cpu_grow_groups(CpuAgg *agg, int64_t capacity)
{
	int			i;

	for (i = 0; i < agg->nkeys; i++)
	{
		if (!cpu_realloc_array((void **) &agg->keys[i], capacity, sizeof(int64_t)) ||
			!cpu_realloc_array((void **) &agg->key_isnull[i], capacity, sizeof(uint8_t)))
			return 0;
	}
	for (i = 0; i < agg->naggs; i++)
		if (!cpu_realloc_array(&agg->acc[i], capacity, cpu_acc_width(agg->acc_kinds[i])))
			return 0;
	for (i = 0; i < agg->naggs; i++)
		cpu_acc_init(agg->acc[i], agg->acc_kinds[i], agg->group_capacity, capacity);
	agg->group_capacity = capacity;
	return 1;
}

/* Double the hash table and reinsert every group by its stored hash. */
static int
cpu_grow_table(CpuAgg *agg)
{
	int64_t		nslots = agg->nslots * 2;
	uint64_t	mask = (uint64_t) nslots - 1;
	CpuSlot    *slots;
	int64_t		i;

	if ((uint64_t) nslots > SIZE_MAX / sizeof(CpuSlot))
		return 0;
	slots = calloc((size_t) nslots, sizeof(CpuSlot));
	if (slots == NULL)
		return 0;
	for (i = 0; i < agg->nslots; i++)
	{
		const CpuSlot *old = &agg->slots[i];
		uint64_t	pos;

		if (old->group_plus1 == 0)
			continue;
		pos = old->hash & mask;
		while (slots[pos].group_plus1 != 0)
			pos = (pos + 1) & mask;
		slots[pos] = *old;
	}
	free(agg->slots);
	agg->slots = slots;
	agg->nslots = nslots;
	agg->stats.table_growths++;
	return 1;
}

/*
 * Widen key column `key` of rows [base, base + n) into the chunk scratch
 * (null keys become 0 and are flagged) and fold it into the rows' hashes.
 */
static void
cpu_load_key(CpuAgg *agg, const GaColumn *col, int key, int64_t base, int64_t n)
{
	int64_t    *dst = agg->chunk_keys + (int64_t) key * CPU_CHUNK_ROWS;
	uint8_t    *nulls = agg->chunk_nulls + (int64_t) key * CPU_CHUNK_ROWS;
	uint64_t   *hash = agg->chunk_hash;
	uint64_t	null_tag = ga_mix64(CPU_HASH_SEED + (uint64_t) key + 1);
	int64_t		i;

#define CPU_WIDEN(T) \
	do { \
		const T    *src = (const T *) col->values + base; \
		for (i = 0; i < n; i++) \
			dst[i] = (int64_t) src[i]; \
	} while (0)

	switch (col->type)
	{
		case GA_TYPE_INT8:
			CPU_WIDEN(int8_t);
			break;
		case GA_TYPE_INT16:
			CPU_WIDEN(int16_t);
			break;
		case GA_TYPE_INT32:
			CPU_WIDEN(int32_t);
			break;
		default:
			CPU_WIDEN(int64_t);
			break;
	}
#undef CPU_WIDEN

	if (!col->has_nulls)
	{
		memset(nulls, 0, (size_t) n);
		for (i = 0; i < n; i++)
			hash[i] = (((hash[i] << 27) | (hash[i] >> 37)) ^ (uint64_t) dst[i]) * CPU_HASH_MULT;
	}
	else
	{
		const uint8_t *validity = col->validity;

		for (i = 0; i < n; i++)
		{
			int64_t		row = base + i;
			int			isnull = !(validity[row >> 3] & (1u << (row & 7)));

			nulls[i] = (uint8_t) isnull;
			if (isnull)
				dst[i] = 0;
			hash[i] = (((hash[i] << 27) | (hash[i] >> 37)) ^
					   (uint64_t) dst[i] ^ (isnull ? null_tag : 0)) * CPU_HASH_MULT;
		}
	}
}

/* Whether group g has the key tuple of chunk row i. */
static inline int
cpu_keys_equal(const CpuAgg *agg, int64_t g, int64_t i)
{
	int			k;

	for (k = 0; k < agg->nkeys; k++)
	{
		int64_t		off = (int64_t) k * CPU_CHUNK_ROWS + i;

		if (agg->keys[k][g] != agg->chunk_keys[off] ||
			agg->key_isnull[k][g] != agg->chunk_nulls[off])
			return 0;
	}
	return 1;
}

/*
 * Assign a group to every row [base, base + n) of the batch, creating groups
 * for key tuples not seen before.  Returns 0 when memory ran out.
 */
static int
cpu_assign_groups(CpuAgg *agg, const GaBatch *batch, int64_t base, int64_t n)
{
	int64_t		i;
	int			k;

	for (i = 0; i < n; i++)
		agg->chunk_hash[i] = CPU_HASH_SEED;
	for (k = 0; k < agg->nkeys; k++)
		cpu_load_key(agg, &batch->columns[agg->key_columns[k]], k, base, n);

	for (i = 0; i < n; i++)
	{
		uint64_t	h = ga_mix64(agg->chunk_hash[i]);
		uint64_t	mask = (uint64_t) agg->nslots - 1;
		uint64_t	pos = h & mask;
		int64_t		g;

		for (;;)
		{
			CpuSlot    *slot = &agg->slots[pos];

			if (slot->group_plus1 == 0)
				break;
			if (slot->hash == h && cpu_keys_equal(agg, slot->group_plus1 - 1, i))
				break;
			pos = (pos + 1) & mask;
		}
		if (agg->slots[pos].group_plus1 != 0)
		{
			agg->chunk_group[i] = agg->slots[pos].group_plus1 - 1;
			continue;
		}

		/* A new group: keep the table at most half full, then insert. */
		if ((agg->ngroups + 1) * 2 > agg->nslots)
		{
			if (!cpu_grow_table(agg))
				return 0;
			mask = (uint64_t) agg->nslots - 1;
			pos = h & mask;
			while (agg->slots[pos].group_plus1 != 0)
				pos = (pos + 1) & mask;
		}
		if (agg->ngroups == agg->group_capacity &&
			!cpu_grow_groups(agg, agg->group_capacity * 2))
			return 0;
		g = agg->ngroups++;
		for (k = 0; k < agg->nkeys; k++)
		{
			agg->keys[k][g] = agg->chunk_keys[(int64_t) k * CPU_CHUNK_ROWS + i];
			agg->key_isnull[k][g] = agg->chunk_nulls[(int64_t) k * CPU_CHUNK_ROWS + i];
		}
		agg->slots[pos].hash = h;
		agg->slots[pos].group_plus1 = g + 1;
		agg->chunk_group[i] = g;
	}
	return 1;
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

/* Update aggregate a's accumulators with rows [base, base + n) of the batch. */
static void
cpu_accumulate(CpuAgg *agg, const GaBatch *batch, int a, int64_t base, int64_t n)
{
	const int64_t *groups = agg->chunk_group;
	const GaColumn *col = NULL;
	void	   *acc = agg->acc[a];
	int64_t		i;

	if (agg->aggs[a].op != GA_AGG_COUNT_ROWS)
		col = &batch->columns[agg->aggs[a].column];

	switch (agg->acc_kinds[a])
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
			cpu_accumulate_comoments(acc, col, &batch->columns[agg->aggs[a].column2],
									 groups, base, n);
			break;
	}
}

/* An integer operand's value in a row (int16, int32 or int64, validated). */
static inline int64_t
cpu_operand_value(const GaColumn *col, int64_t row)
{
	switch (col->type)
	{
		case GA_TYPE_INT16:
			return ((const int16_t *) col->values)[row];
		case GA_TYPE_INT32:
			return ((const int32_t *) col->values)[row];
		default:
			return ((const int64_t *) col->values)[row];
	}
}

/*
 * Evaluate a derived column's program in one row of a batch: null when a
 * COLUMN operand is null, else NaN when an operand's NaN flag is valid,
 * else finite with the value in *value.
 */
static GaExprRow
cpu_derived_row(const GaDerivedColumn *program, const GaBatch *batch, int64_t row,
				GaInt192 *value)
{
	GaExprStack stack;
	int			nan = 0;
	int			s;

	stack.depth = 0;
	for (s = 0; s < program->nsteps; s++)
	{
		const GaExprStep *step = &program->steps[s];
		int64_t		operand = step->constant;

		if (step->op == GA_EXPR_COLUMN)
		{
			const GaColumn *col = &batch->columns[step->column];

			if (ga_column_is_null(col, row))
				return GA_EXPR_ROW_NULL;
			if (step->nan_column >= 0 &&
				!ga_column_is_null(&batch->columns[step->nan_column], row))
				nan = 1;
			operand = cpu_operand_value(col, row);
		}
		if (!nan)
			ga_expr_apply(&stack, step->op, step->power, operand);
	}
	if (nan)
		return GA_EXPR_ROW_NAN;
	*value = stack.v[0];
	return GA_EXPR_ROW_FINITE;
}

/*
 * Store derived column dc's part of row `row`: its value (0 when the part
 * is not valid) and its validity bit (NaN flags are valid in NaN rows,
 * values in finite ones).
 */
static inline void
cpu_derived_store(GaColumn *col, const GaDerivedColumn *dc, int64_t row, GaExprRow state,
				  GaInt192 value)
{
	int			valid = dc->part == GA_DERIVED_NAN ? state == GA_EXPR_ROW_NAN :
		state == GA_EXPR_ROW_FINITE;
	uint8_t		bit = (uint8_t) (1u << (row & 7));

	if (col->values != NULL)
		((int64_t *) col->values)[row] = valid ? ga_expr_part(value, dc->part, dc->limb) : 0;
	if (valid)
		col->validity[row >> 3] |= bit;
	else
		col->validity[row >> 3] &= (uint8_t) ~bit;
}

/*
 * Compute the derived columns of rows [base, base + n) of a batch, each
 * program once per row.  A column without storage (in a joined piece, a
 * derived column no aggregate reads) is skipped.
 */
static void
cpu_compute_derived(const CpuAgg *agg, GaBatch *batch, int64_t base, int64_t n)
{
	const GaDerivedPlan *plan = agg->derived;
	int			p,
				d;
	int64_t		row;

	for (d = 0; d < plan->nderived; d++)
		if (batch->columns[plan->derived[d].column].validity != NULL)
			batch->columns[plan->derived[d].column].has_nulls = 1;
	for (p = 0; p < plan->nprograms; p++)
	{
		const GaDerivedColumn *program = &plan->derived[plan->program_spec[p]];
		int			stored = 0;

		for (d = 0; d < plan->nderived; d++)
			stored |= plan->program_of[d] == p &&
				batch->columns[plan->derived[d].column].validity != NULL;
		if (!stored)
			continue;
		for (row = base; row < base + n; row++)
		{
			GaInt192	value = {{0, 0, 0}};
			GaExprRow	state = cpu_derived_row(program, batch, row, &value);

			for (d = 0; d < plan->nderived; d++)
			{
				GaColumn   *col = &batch->columns[plan->derived[d].column];

				if (plan->program_of[d] == p && col->validity != NULL)
					cpu_derived_store(col, &plan->derived[d], row, state, value);
			}
		}
	}
}

/* Free everything an aggregation holds; NULL and half-built ones included. */
static void
cpu_agg_destroy(void *agg_impl)
{
	CpuAgg	   *agg = agg_impl;
	int			i;

	if (agg == NULL)
		return;
	ga_cpu_aggjoin_destroy(agg->join);
	if (agg->batch.columns != NULL)
	{
		for (i = 0; i < agg->batch.ncolumns; i++)
		{
			free(agg->batch.columns[i].values);
			free(agg->batch.columns[i].validity);
		}
		free(agg->batch.columns);
	}
	if (agg->keys != NULL)
		for (i = 0; i < agg->nkeys; i++)
			free(agg->keys[i]);
	if (agg->key_isnull != NULL)
		for (i = 0; i < agg->nkeys; i++)
			free(agg->key_isnull[i]);
	if (agg->acc != NULL)
		for (i = 0; i < agg->naggs; i++)
			free(agg->acc[i]);
	free(agg->keys);
	free(agg->key_isnull);
	free(agg->acc);
	free(agg->slots);
	free(agg->chunk_keys);
	free(agg->chunk_nulls);
	free(agg->chunk_hash);
	free(agg->chunk_group);
	free(agg->column_types);
	free(agg->key_columns);
	free(agg->aggs);
	free(agg->acc_kinds);
	free(agg->derived);
	free(agg->column_is_derived);
	free(agg);
}

/* Allocate the batch: capacity values and a validity bitmap per column. */
static int
cpu_alloc_batch(CpuAgg *agg, int64_t capacity)
{
	int			i;

	agg->batch.capacity = capacity;
	agg->batch.ncolumns = agg->ncolumns;
	agg->batch.columns = calloc(agg->ncolumns > 0 ? agg->ncolumns : 1, sizeof(GaColumn));
	if (agg->batch.columns == NULL)
		return 0;
	agg->validity_bytes = (capacity + 7) / 8;
	for (i = 0; i < agg->ncolumns; i++)
	{
		GaColumn   *col = &agg->batch.columns[i];
		int			width = ga_type_width(agg->column_types[i]);

		col->type = agg->column_types[i];
		if (width > 0)
		{
			col->values = ga_alloc_array(capacity, (size_t) width);
			if (col->values == NULL)
				return 0;
		}
		col->validity = ga_alloc_array(agg->validity_bytes, 1);
		if (col->validity == NULL)
			return 0;
	}
	return 1;
}

/* Start an aggregation: copy the request, allocate batch, table and groups. */
static void *
cpu_agg_create(void *device_impl, const GaAggRequest *request, GaStatus *status)
{
	CpuAgg	   *agg;
	int64_t		estimate;
	int64_t		nslots;
	int			i;

	(void) device_impl;
	if (request->batch_rows > INT64_MAX / 16)
	{
		ga_status_set(status, GA_ERR_INVALID, "batch size %lld is too large",
					  (long long) request->batch_rows);
		return NULL;
	}
	agg = calloc(1, sizeof(CpuAgg));
	if (agg == NULL)
		goto oom;
	agg->ncolumns = request->ncolumns;
	agg->nkeys = request->nkeys;
	agg->naggs = request->naggs;

	agg->column_types = ga_alloc_array(request->ncolumns, sizeof(GaValueType));
	agg->key_columns = ga_alloc_array(request->nkeys, sizeof(int));
	agg->aggs = ga_alloc_array(request->naggs, sizeof(GaAggSpec));
	agg->acc_kinds = ga_alloc_array(request->naggs, sizeof(CpuAccKind));
	agg->keys = calloc(request->nkeys > 0 ? request->nkeys : 1, sizeof(int64_t *));
	agg->key_isnull = calloc(request->nkeys > 0 ? request->nkeys : 1, sizeof(uint8_t *));
	agg->acc = calloc(request->naggs > 0 ? request->naggs : 1, sizeof(void *));
	agg->derived = ga_derived_plan_create(request);
	agg->column_is_derived = calloc(request->ncolumns > 0 ? request->ncolumns : 1, 1);
	if (agg->column_types == NULL || agg->key_columns == NULL ||
		agg->aggs == NULL || agg->acc_kinds == NULL || agg->keys == NULL ||
		agg->key_isnull == NULL || agg->acc == NULL || agg->derived == NULL ||
		agg->column_is_derived == NULL)
		goto oom;
	for (i = 0; i < agg->derived->nderived; i++)
		agg->column_is_derived[agg->derived->derived[i].column] = 1;
	if (request->ncolumns > 0)
		memcpy(agg->column_types, request->column_types,
			   sizeof(GaValueType) * request->ncolumns);
	if (request->nkeys > 0)
		memcpy(agg->key_columns, request->key_columns, sizeof(int) * request->nkeys);
	if (request->naggs > 0)
		memcpy(agg->aggs, request->aggs, sizeof(GaAggSpec) * request->naggs);
	for (i = 0; i < agg->naggs; i++)
	{
		GaValueType input = agg->aggs[i].op == GA_AGG_COUNT_ROWS ? GA_TYPE_NONE :
			agg->column_types[agg->aggs[i].column];

		agg->acc_kinds[i] = cpu_acc_kind(&agg->aggs[i], input);
	}

	if (!cpu_alloc_batch(agg, request->batch_rows))
		goto oom;

	agg->chunk_keys = ga_alloc_array((int64_t) agg->nkeys * CPU_CHUNK_ROWS, sizeof(int64_t));
	agg->chunk_nulls = ga_alloc_array((int64_t) agg->nkeys * CPU_CHUNK_ROWS, 1);
	agg->chunk_hash = ga_alloc_array(CPU_CHUNK_ROWS, sizeof(uint64_t));
	agg->chunk_group = calloc(CPU_CHUNK_ROWS, sizeof(int64_t));
	if (agg->chunk_keys == NULL || agg->chunk_nulls == NULL ||
		agg->chunk_hash == NULL || agg->chunk_group == NULL)
		goto oom;

	/* Size the table from the estimate, which may be wrong either way. */
	estimate = request->nkeys == 0 ? 1 : request->estimated_groups;
	if (estimate < CPU_MIN_SLOTS / 2)
		estimate = CPU_MIN_SLOTS / 2;
	nslots = CPU_MIN_SLOTS;
	while (nslots < CPU_MAX_INITIAL_SLOTS && nslots / 2 < estimate)
		nslots *= 2;
	agg->slots = calloc((size_t) nslots, sizeof(CpuSlot));
	if (agg->slots == NULL)
		goto oom;
	agg->nslots = nslots;
	if (!cpu_grow_groups(agg, estimate < CPU_MAX_INITIAL_GROUPS ? estimate : CPU_MAX_INITIAL_GROUPS))
		goto oom;

	/* A plain aggregate has its single group from the start. */
	if (agg->nkeys == 0)
		agg->ngroups = 1;

	if (request->join != NULL)
	{
		agg->join = ga_cpu_aggjoin_create(request, status);
		if (agg->join == NULL)
		{
			cpu_agg_destroy(agg);
			return NULL;
		}
	}

	ga_status_ok(status);
	return agg;

oom:
	cpu_agg_destroy(agg);
	ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
				  "out of host memory starting an aggregation on the CPU device");
	return NULL;
}

/* Hand out the batch, emptied: no rows, every validity bit set, no nulls. */
static GaBatch *
cpu_agg_next_batch(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	int			i;

	(void) wait;
	(void) arg;
	if (!ga_failure_check(&agg->failure, status))
		return NULL;
	if (agg->finished)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "a batch was requested after the aggregation finished");
		return NULL;
	}
	agg->batch.nrows = 0;
	for (i = 0; i < agg->batch.ncolumns; i++)
	{
		GaColumn   *col = &agg->batch.columns[i];

		col->has_nulls = 0;
		memset(col->validity, 0xff, (size_t) agg->validity_bytes);
	}
	ga_status_ok(status);
	return &agg->batch;
}

/*
 * Aggregate the rows of a batch, a chunk at a time (its derived columns
 * computed first), asking the wait callback every CPU_WAIT_EVERY_ROWS rows
 * whether to give up; counts the batch.  Every submitted batch and every
 * piece of joined rows comes here.
 */
static int
cpu_aggregate(void *agg_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
			  GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	int64_t		nrows = batch->nrows;
	int64_t		base;
	int64_t		since_wait = 0;

	for (base = 0; base < nrows; base += CPU_CHUNK_ROWS)
	{
		int64_t		n = nrows - base < CPU_CHUNK_ROWS ? nrows - base : CPU_CHUNK_ROWS;
		int			a;

		if (agg->derived->nprograms > 0)
			cpu_compute_derived(agg, batch, base, n);
		if (agg->nkeys > 0 && !cpu_assign_groups(agg, batch, base, n))
			return ga_failure_set(&agg->failure, status, GA_ERR_OUT_OF_MEMORY,
							"out of host memory growing the CPU device's hash table");
		for (a = 0; a < agg->naggs; a++)
			cpu_accumulate(agg, batch, a, base, n);

		since_wait += n;
		if (since_wait >= CPU_WAIT_EVERY_ROWS && base + n < nrows)
		{
			since_wait = 0;
			if (wait != NULL && wait(arg))
				return ga_failure_set(&agg->failure, status, GA_ERR_CANCELLED,
								"the aggregation was cancelled");
		}
	}
	agg->stats.batches++;
	agg->stats.batches_by_strategy[GA_STRATEGY_CPU]++;
	return 1;
}

/*
 * Aggregate a filled batch before returning: its rows, or, when the
 * aggregation is aggjoin, the rows of its join with the build side.
 */
static int
cpu_agg_submit(void *agg_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
			   GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	double		start = ga_cpu_now_ms();
	int64_t		nrows;
	int			i;

	if (!ga_failure_check(&agg->failure, status))
		return 0;
	if (agg->finished)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch was submitted after the aggregation finished");
	if (batch != &agg->batch)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the submitted batch does not belong to this aggregation");
	nrows = batch->nrows;
	if (nrows < 0 || nrows > batch->capacity)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch holds %lld rows but has room for %lld",
							 (long long) nrows, (long long) batch->capacity);

	if (agg->join != NULL)
	{
		/* Any failure leaves groups half-updated: remember it. */
		if (!ga_cpu_aggjoin_submit(agg->join, batch, cpu_aggregate, agg, &agg->stats,
								   wait, arg, status))
		{
			if (!agg->failure.failed)
			{
				agg->failure.failed = 1;
				agg->failure.status = *status;
			}
			return 0;
		}
		agg->stats.device_ms += ga_cpu_now_ms() - start;
		return 1;
	}

	if (!cpu_aggregate(agg, batch, wait, arg, status))
		return 0;
	agg->stats.input_rows += nrows;
	for (i = 0; i < batch->ncolumns; i++)
	{
		const GaColumn *col = &batch->columns[i];

		if (agg->column_is_derived[i])
			continue;			/* computed here, never sent */
		agg->stats.bytes_sent += nrows * ga_type_width(col->type);
		if (col->has_nulls)
			agg->stats.bytes_sent += (nrows + 7) / 8;
	}
	agg->stats.device_ms += ga_cpu_now_ms() - start;
	ga_status_ok(status);
	return 1;
}

/*
 * Take an aggjoin's build side (cpu/aggjoin.c); a failure is
 * remembered, as the aggregation cannot run without it.
 */
static int
cpu_aggjoin_build(void *agg_impl, int step, const int64_t *keys, const uint32_t *rows,
				   int64_t n, uint64_t key_seed, const GaBatch *payload, GaWaitCallback wait,
				   void *arg, GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	double		start = ga_cpu_now_ms();

	if (!ga_failure_check(&agg->failure, status))
		return 0;
	if (agg->join == NULL)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a build side was given to an aggregation that is not fed by a join");
	if (!ga_cpu_aggjoin_build(agg->join, step, keys, rows, n, key_seed, payload, &agg->stats,
							  wait, arg, status))
	{
		agg->failure.failed = 1;
		agg->failure.status = *status;
		return 0;
	}
	agg->stats.device_ms += ga_cpu_now_ms() - start;
	return 1;
}

/*
 * Aggregate what an aggjoin adds at finish (the unmatched build
 * rows of its RIGHT and FULL steps, cpu/aggjoin.c), then turn the
 * accumulators into result columns, in place (a GaInt128 and a double are
 * as wide as __int128 and the ordered int64), once; later calls return the
 * same result.
 */
static const GaAggResult *
cpu_agg_finish(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	double		start;
	int			a;

	if (!ga_failure_check(&agg->failure, status))
		return NULL;
	if (agg->finished)
	{
		ga_status_ok(status);
		return &agg->result;
	}
	start = ga_cpu_now_ms();

	/* Any failure leaves groups half-updated: remember it. */
	if (agg->join != NULL &&
		!ga_cpu_aggjoin_finish(agg->join, cpu_aggregate, agg, &agg->stats, wait, arg, status))
	{
		if (!agg->failure.failed)
		{
			agg->failure.failed = 1;
			agg->failure.status = *status;
		}
		return NULL;
	}

	for (a = 0; a < agg->naggs; a++)
	{
		void	   *acc = agg->acc[a];
		int64_t		g;

		switch (agg->acc_kinds[a])
		{
			case CPU_ACC_SUM_INT:
				for (g = 0; g < agg->ngroups; g++)
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
				for (g = 0; g < agg->ngroups; g++)
				{
					double		d = ga_ordered_to_float64(((int64_t *) acc)[g]);

					memcpy((char *) acc + g * sizeof(double), &d, sizeof(d));
				}
				break;
			default:
				break;
		}
	}

	agg->result.ngroups = agg->ngroups;
	agg->result.nkeys = agg->nkeys;
	agg->result.key_values = agg->nkeys > 0 ? agg->keys : NULL;
	agg->result.key_isnull = agg->nkeys > 0 ? agg->key_isnull : NULL;
	agg->result.naggs = agg->naggs;
	agg->result.values = agg->naggs > 0 ? agg->acc : NULL;
	agg->finished = 1;
	agg->stats.device_ms += ga_cpu_now_ms() - start;
	ga_status_ok(status);
	return &agg->result;
}

/* Report what the aggregation did so far. */
static void
cpu_agg_get_stats(const void *agg_impl, GaAggStats *stats)
{
	const CpuAgg *agg = agg_impl;

	*stats = agg->stats;
	stats->groups = agg->ngroups;
	stats->transfer_ms = 0;
}

const GaDeviceOps ga_cpu_ops = {
	.agg_create = cpu_agg_create,
	.agg_next_batch = cpu_agg_next_batch,
	.agg_submit = cpu_agg_submit,
	.agg_finish = cpu_agg_finish,
	.agg_get_stats = cpu_agg_get_stats,
	.agg_destroy = cpu_agg_destroy,
	.aggjoin_build = cpu_aggjoin_build,
	.join_create = ga_cpu_join_create,
	.join_build = ga_cpu_join_build,
	.join_sorted_rows = ga_cpu_join_sorted_rows,
	.join_next_batch = ga_cpu_join_next_batch,
	.join_probe = ga_cpu_join_probe,
	.join_get_stats = ga_cpu_join_get_stats,
	.join_destroy = ga_cpu_join_destroy,
};
