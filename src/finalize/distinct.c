/*-------------------------------------------------------------------------
 *
 * finalize/distinct.c
 *	  count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x) with the device
 *	  doing the de-duplication.
 *
 * For each distinct argument x the node sends its batches to a second device
 * aggregation grouped by the keys plus x (the same batch columns, one more
 * key), so the device returns each distinct (keys, x) pair once.  The host
 * then walks those pairs, finds each one's group among the main
 * aggregation's groups by its keys, and counts or sums x there.  Its work is
 * proportional to the distinct pairs, not to the rows.
 *
 * Sums follow the plain aggregates' rules: integers exactly (int128), float4
 * in float4 and float8 in float8 as PostgreSQL accumulates them (the order of
 * additions is the device's, like a parallel plan's), with PostgreSQL's
 * overflow error.  A text x travels as its bytes (hashagg/catalog.c's
 * GpuAggDistinctAsBytes), or as a dictionary id, and is only counted.
 * A numeric x travels as its dictionary id (batch/key_dict.c);
 * the host looks each distinct value up and sums it exactly as 42-bit limbs
 * (finalize/numeric.c), at the argument's scale, which every value of a bounded
 * argument has (so equal values are the same value, and it does not matter
 * which of them DISTINCT keeps), and counts NaN and the infinities.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/numeric.h"

#include "batch/batch.h"
#include "batch/key_dict.h"
#include "finalize/finalize.h"
#include "finalize/numeric.h"
#include "gpuagg_hash.h"

/*
 * What float8_accum()'s overflow check needs of a group's distinct float
 * values, which PostgreSQL feeds it in ascending order (check_avg_spread).
 */
typedef struct DistinctSpread
{
	int64		finite;			/* finite values */
	double		sum;			/* their sum */
	double		negative_sum;	/* the sum of the negative ones */
	double		max;			/* the largest of them */
	bool		minus_infinity; /* -Infinity is among the values */
} DistinctSpread;

/* Per DISTINCT output, per main group: what the distinct values add up to. */
struct GpuAggDistinctSums
{
	int			noutputs;
	int64	  **count;			/* per output; NULL when not DISTINCT */
	int128	  **int_sum;
	double	  **double_sum;
	float	  **float_sum;
	int64	  **infinite;		/* infinite inputs, for the overflow check */
	DistinctSpread **spread;	/* avg of floats: see check_avg_spread */
	int128	  **numeric_limbs;	/* numeric: GPUAGG_NUMERIC_LIMBS per group */
	int64	  **specials;		/* numeric: NaN, +Infinity, -Infinity per group */
};

/* Zeroed memory of any size in the current context. */
static void *
alloc_zeroed(Size size)
{
	return palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/*
 * Mix one 64-bit word into a hash (of this file's table of groups only, so
 * any good mixing serves).
 */
static inline uint64
mix_word(uint64 h, uint64 w)
{
	return (h ^ ga_mix64(w)) * GA_HASH_GOLDEN;
}

/* Where group g's value of string key k starts in the key's bytes. */
static inline int64
string_start(const GaAggResult *result, int k, int64 g)
{
	return g > 0 ? result->key_values[k][g - 1] : 0;
}

/* Whether key k of a result is a string key (its values are offsets). */
static inline bool
is_string_key(const GaAggResult *result, int k)
{
	return result->key_bytes != NULL && result->key_bytes[k] != NULL;
}

/* Hash of the first nkeys keys of group g of a result. */
static uint64
key_hash(const GaAggResult *result, int nkeys, int64 g)
{
	uint64		h = UINT64CONST(0x243f6a8885a308d3);
	int			k;

	for (k = 0; k < nkeys; k++)
	{
		uint64		w = (uint64) result->key_values[k][g];

		if (result->key_isnull[k][g])
			w = UINT64CONST(0x8000000000000001);
		else if (is_string_key(result, k))
		{
			int64		start = string_start(result, k, g);

			w = ga_hash_bytes(result->key_bytes[k] + start,
							  (uint32) (result->key_values[k][g] - start));
		}
		h = mix_word(h, w);
	}
	return h;
}

/* Whether the first nkeys keys of group a of ra equal those of b of rb. */
static bool
keys_equal(const GaAggResult *ra, int64 a, const GaAggResult *rb, int64 b, int nkeys)
{
	int			k;

	for (k = 0; k < nkeys; k++)
	{
		bool		na = ra->key_isnull[k][a] != 0;
		bool		nb = rb->key_isnull[k][b] != 0;

		if (na != nb)
			return false;
		if (na)
			continue;
		if (is_string_key(ra, k))
		{
			int64		sa = string_start(ra, k, a);
			int64		sb = string_start(rb, k, b);
			int64		len = ra->key_values[k][a] - sa;

			if (len != rb->key_values[k][b] - sb ||
				memcmp(ra->key_bytes[k] + sa, rb->key_bytes[k] + sb, len) != 0)
				return false;
		}
		else if (ra->key_values[k][a] != rb->key_values[k][b])
			return false;
	}
	return true;
}

/* The value of a distinct argument as the device returned it, as a double. */
static double
distinct_double(GpuAggEncoding encoding, int64 value)
{
	if (encoding == GPUAGG_ENC_FLOAT8_KEY)
	{
		double		d;

		memcpy(&d, &value, sizeof(d));
		return d;
	}
	else
	{
		int32		bits = (int32) value;
		float		f;

		memcpy(&f, &bits, sizeof(f));
		return f;
	}
}

/* Add a distinct float value to its group's DistinctSpread. */
static void
add_spread(DistinctSpread *spread, double v)
{
	if (v == -get_float8_infinity())
		spread->minus_infinity = true;
	if (!isfinite(v))
		return;
	if (spread->finite == 0 || v > spread->max)
		spread->max = v;
	spread->finite++;
	spread->sum += v;
	if (v < 0)
		spread->negative_sum += v;
}

/*
 * Raise float8_accum()'s overflow error where PostgreSQL's avg(DISTINCT x)
 * of floats raises it.  It feeds the distinct values in ascending order,
 * so the outcome is fixed: -Infinity, first, spares every value (as in
 * finalize/moments.c); else the finite values come first (+Infinity and NaN
 * last raise nothing), each step's tmp = N (x - mean) is at least the one
 * before and ends at n (max - mean), Sxx stays below that last tmp^2, and
 * the running sum falls to the sum of the negative values and climbs back
 * to the whole sum.
 */
static void
check_avg_spread(const DistinctSpread *spread)
{
	long double mean;

	if (spread->minus_infinity || spread->finite == 0)
		return;
	if (!isfinite(spread->sum) || !isfinite(spread->negative_sum))
		float_overflow_error();
	mean = (long double) spread->sum / spread->finite;
	if (spread->finite * ((long double) spread->max - mean) > sqrtl(DBL_MAX))
		float_overflow_error();
}

/* Add a distinct numeric value to group m of output o (see above). */
static void
add_numeric(GpuAggDistinctSums *sums, int o, int64 m, int scale, Datum value)
{
	int128	   *limbs = &sums->numeric_limbs[o][m * GPUAGG_NUMERIC_LIMBS];
	GpuAggNumericValue v;
	int			k;

	GpuAggNumericRead(value, scale, &v);
	if (v.part != GPUAGG_NUMERIC_FINITE)
	{
		sums->specials[o][m * 3 + (v.part - GPUAGG_NUMERIC_NAN)]++;
		return;
	}
	for (k = 0; k < GPUAGG_NUMERIC_LIMBS; k++)
	{
		bool		absent;

		limbs[k] += GpuAggNumericEncodeValue(&v, GPUAGG_ENC_NUMERIC_LIMB, k, &absent);
	}
}

/*
 * Count and sum the distinct values of every DISTINCT output per group of
 * the main result.  sets[d] is the result of distinct set d (keys + x);
 * builder holds the dictionaries of numeric arguments.
 */
GpuAggDistinctSums *
GpuAggDistinctCombine(const GpuAggLayout *layout, int noutputs, int nkeys,
					  const GaAggResult *main, const GaAggResult *const *sets,
					  GpuAggBatchBuilder *builder)
{
	GpuAggDistinctSums *sums = palloc0(sizeof(GpuAggDistinctSums));
	int64		ngroups = main->ngroups;
	uint64		mask = 1;
	int64	   *slots;
	int64		g;
	int			o;
	int			d;

	sums->noutputs = noutputs;
	sums->count = palloc0(sizeof(int64 *) * Max(noutputs, 1));
	sums->int_sum = palloc0(sizeof(int128 *) * Max(noutputs, 1));
	sums->double_sum = palloc0(sizeof(double *) * Max(noutputs, 1));
	sums->float_sum = palloc0(sizeof(float *) * Max(noutputs, 1));
	sums->infinite = palloc0(sizeof(int64 *) * Max(noutputs, 1));
	sums->spread = palloc0(sizeof(DistinctSpread *) * Max(noutputs, 1));
	sums->numeric_limbs = palloc0(sizeof(int128 *) * Max(noutputs, 1));
	sums->specials = palloc0(sizeof(int64 *) * Max(noutputs, 1));
	for (o = 0; o < noutputs; o++)
	{
		if (layout->outputs[o].distinct_set < 0)
			continue;
		if (layout->outputs[o].input_type == NUMERICOID &&
			layout->outputs[o].kind != GPUAGG_COUNT)
		{
			sums->numeric_limbs[o] = alloc_zeroed(sizeof(int128) * GPUAGG_NUMERIC_LIMBS *
												  Max(ngroups, 1));
			sums->specials[o] = alloc_zeroed(sizeof(int64) * 3 * Max(ngroups, 1));
		}
		sums->count[o] = alloc_zeroed(sizeof(int64) * Max(ngroups, 1));
		sums->int_sum[o] = alloc_zeroed(sizeof(int128) * Max(ngroups, 1));
		sums->double_sum[o] = alloc_zeroed(sizeof(double) * Max(ngroups, 1));
		sums->float_sum[o] = alloc_zeroed(sizeof(float) * Max(ngroups, 1));
		sums->infinite[o] = alloc_zeroed(sizeof(int64) * Max(ngroups, 1));
		if (layout->outputs[o].kind == GPUAGG_AVG &&
			(layout->outputs[o].input_type == FLOAT4OID ||
			 layout->outputs[o].input_type == FLOAT8OID))
			sums->spread[o] = alloc_zeroed(sizeof(DistinctSpread) * Max(ngroups, 1));
	}

	/* the main groups by their keys: open addressing, group + 1, 0 = empty */
	while (mask < (uint64) Max(ngroups, 1) * 2)
		mask = mask * 2;
	mask = mask * 2 - 1;
	slots = alloc_zeroed(sizeof(int64) * (mask + 1));
	for (g = 0; g < ngroups; g++)
	{
		uint64		s = key_hash(main, nkeys, g) & mask;

		while (slots[s] != 0)
			s = (s + 1) & mask;
		slots[s] = g + 1;
	}

	for (d = 0; d < layout->ndistinct; d++)
	{
		const GaAggResult *set = sets[d];
		const GpuAggDistinctSet *ds = &layout->distinct_sets[d];

		for (g = 0; g < set->ngroups; g++)
		{
			uint64		s = key_hash(set, nkeys, g) & mask;
			int64		m = -1;
			int64		x;

			if (set->key_isnull[nkeys][g])
				continue;		/* DISTINCT aggregates skip NULL */
			while (slots[s] != 0)
			{
				if (keys_equal(main, slots[s] - 1, set, g, nkeys))
				{
					m = slots[s] - 1;
					break;
				}
				s = (s + 1) & mask;
			}
			if (m < 0)
				elog(ERROR, "gpuagg: a DISTINCT value's group is missing from the main aggregation");
			x = set->key_values[nkeys][g];
			for (o = 0; o < noutputs; o++)
			{
				if (layout->outputs[o].distinct_set != d)
					continue;
				sums->count[o][m]++;
				if (sums->numeric_limbs[o] != NULL)
					add_numeric(sums, o, m, layout->outputs[o].numeric_scale,
								KeyDictKeyValue(GpuAggBatchDict(builder, ds->column),
												(int32) x, 0));
				else if (ds->encoding == GPUAGG_ENC_FLOAT8_KEY || ds->encoding == GPUAGG_ENC_FLOAT4_KEY)
				{
					double		v = distinct_double(ds->encoding, x);

					sums->double_sum[o][m] += v;
					sums->float_sum[o][m] += (float) v;
					if (isinf(v))
						sums->infinite[o][m]++;
					if (sums->spread[o] != NULL)
						add_spread(&sums->spread[o][m], v);
				}
				else
					sums->int_sum[o][m] += x;
			}
		}
	}
	return sums;
}

/* The final value of DISTINCT output `o` for main group `group`. */
Datum
GpuAggDistinctFinalize(const GpuAggDistinctSums *sums, const GpuAggOutput *out, int o,
					   int64 group, bool *isnull)
{
	int64		count = sums->count[o][group];
	Oid			type = out->input_type;
	bool		is_float = type == FLOAT4OID || type == FLOAT8OID;

	*isnull = false;
	if (out->kind == GPUAGG_COUNT)
		return Int64GetDatum(count);
	if (count == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (is_float)
	{
		double		sum = type == FLOAT4OID && out->kind == GPUAGG_SUM ?
			(double) sums->float_sum[o][group] : sums->double_sum[o][group];

		if (isinf(sum) && sums->infinite[o][group] == 0)
			float_overflow_error();
		if (sums->spread[o] != NULL)
			check_avg_spread(&sums->spread[o][group]);
		if (out->kind == GPUAGG_SUM)
			return type == FLOAT4OID ? Float4GetDatum((float) sum) : Float8GetDatum(sum);
		return Float8GetDatum((sum + 0.0) / (double) count);
	}
	if (sums->numeric_limbs[o] != NULL)
	{
		const int64 *specials = &sums->specials[o][group * 3];
		int64		finite = count - specials[0] - specials[1] - specials[2];
		Datum		result;

		if (GpuAggNumericSpecialResult(finite, specials[0], specials[1], specials[2],
									   &result, isnull))
			return result;
		result = GpuAggNumericFromInt128Limbs(&sums->numeric_limbs[o][group * GPUAGG_NUMERIC_LIMBS],
											  GPUAGG_NUMERIC_LIMBS, out->numeric_scale);
		if (out->kind == GPUAGG_SUM)
			return result;
		return DirectFunctionCall2(numeric_div, result,
								   NumericGetDatum(int64_to_numeric(finite)));
	}
	if (out->kind == GPUAGG_SUM && out->result_type == INT8OID)
	{
		int128		sum = sums->int_sum[o][group];

		if (sum < PG_INT64_MIN || sum > PG_INT64_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("bigint out of range")));
		return Int64GetDatum((int64) sum);
	}
	if (out->kind == GPUAGG_SUM)
		return GpuAggInt128ToNumeric(sums->int_sum[o][group]);
	return DirectFunctionCall2(numeric_div, GpuAggInt128ToNumeric(sums->int_sum[o][group]),
							   NumericGetDatum(int64_to_numeric(count)));
}
