/*-------------------------------------------------------------------------
 *
 * agg_specs.c
 *	  The aggregation suite's cases as specs (conformance.h): the fixed
 *	  edge cases, each one scenario the random ones may miss, and the
 *	  random ones.  agg_case.c generates them and agg.c runs them.
 *
 *-------------------------------------------------------------------------
 */
#include "agg.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Case generation: fixed edge cases first, then random ones
 * ------------------------------------------------------------------------
 */

/* A plain one-key case to modify. */
static void
default_spec(CaseSpec *s, const char *label)
{
	memset(s, 0, sizeof(*s));
	s->label = label;
	s->nkeys = 1;
	s->keys[0].type = GA_TYPE_INT32;
	s->keys[0].domain = 100;
	s->keys[0].dist = DIST_UNIFORM;
	s->nvals = 3;
	s->vals[0].type = GA_TYPE_INT64;
	s->vals[1].type = GA_TYPE_FLOAT64;
	s->vals[2].type = GA_TYPE_FLOAT32;
	s->nrows = 10000;
	s->batch_rows = 4096;
	s->estimated_groups = 100;
	s->split = SPLIT_FULL;
	s->all_aggs = 1;
}

/* Give every value column each type once, with one mode and null rate. */
static void
all_value_types(CaseSpec *s, ValMode int_mode, ValMode float_mode, double null_rate)
{
	GaValueType t[] = {GA_TYPE_INT8, GA_TYPE_INT16, GA_TYPE_INT32, GA_TYPE_INT64,
	GA_TYPE_FLOAT32, GA_TYPE_FLOAT64};
	int			i;

	s->nvals = 6;
	for (i = 0; i < 6; i++)
	{
		s->vals[i].type = t[i];
		s->vals[i].mode = i < 4 ? int_mode : float_mode;
		s->vals[i].null_rate = null_rate;
	}
}

/* The fixed edge cases: each index is one scenario the random ones may miss. */
void
fixed_spec(int index, CaseSpec *s)
{
	switch (index)
	{
		case 0:
			default_spec(s, "empty-no-batches");
			s->nrows = 0;
			s->split = SPLIT_NONE;
			break;
		case 1:
			default_spec(s, "empty-one-empty-batch");
			s->nkeys = 2;
			s->keys[1] = s->keys[0];
			s->nrows = 0;
			break;
		case 2:
			default_spec(s, "plain-empty");
			s->nkeys = 0;
			s->nrows = 0;
			s->split = SPLIT_NONE;
			all_value_types(s, VAL_SMALL, VAL_SMALL, 0);
			break;
		case 3:
			default_spec(s, "plain-all-null");
			s->nkeys = 0;
			all_value_types(s, VAL_FULL, VAL_SPECIAL, 1.0);
			s->nrows = 1000;
			s->batch_rows = 300;
			break;
		case 4:
			default_spec(s, "single-row");
			all_value_types(s, VAL_FULL, VAL_MAGNITUDES, 0);
			s->nrows = 1;
			break;
		case 5:
			default_spec(s, "all-keys-null");
			s->nkeys = 2;
			s->keys[0].null_rate = 1.0;
			s->keys[1] = s->keys[0];
			s->keys[1].type = GA_TYPE_INT8;
			all_value_types(s, VAL_SMALL, VAL_SMALL, 0.1);
			break;
		case 6:
			default_spec(s, "int-extremes-128bit-sums");
			s->keys[0].domain = 5;
			all_value_types(s, VAL_EXTREME, VAL_SMALL, 0.05);
			s->vals[3].null_rate = 0;
			s->nrows = 200000;
			s->batch_rows = 65536;
			break;
		case 7:
			default_spec(s, "special-floats");
			s->keys[0].domain = 20;
			all_value_types(s, VAL_SMALL, VAL_SPECIAL, 0.1);
			s->nrows = 50000;
			break;
		case 8:
			default_spec(s, "extreme-finite-floats");
			s->keys[0].domain = 50;
			all_value_types(s, VAL_FULL, VAL_EXTREME_FINITE, 0.1);
			s->nrows = 50000;
			break;
		case 9:
			default_spec(s, "1e6-groups-est-1");
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 1000000;
			s->keys[0].dist = DIST_SEQUENTIAL;
			s->keys[0].scattered = 1;
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT32;
			s->vals[0].mode = VAL_FULL;
			s->nrows = 1200000;
			s->batch_rows = 1 << 18;
			s->estimated_groups = 1;
			break;
		case 10:
			default_spec(s, "batch-of-one-row");
			s->nrows = 300;
			s->batch_rows = 1;
			s->keys[0].null_rate = 0.2;
			break;
		case 11:
			default_spec(s, "hot-key");
			s->keys[0].domain = 100000;
			s->keys[0].dist = DIST_HOT;
			s->nrows = 300000;
			s->batch_rows = 100000;
			s->estimated_groups = 1000;
			break;
		case 12:
			default_spec(s, "zipf-3-keys-nulls");
			s->nkeys = 3;
			s->keys[0].type = GA_TYPE_INT8;
			s->keys[0].domain = 256;
			s->keys[0].dist = DIST_ZIPF;
			s->keys[0].null_rate = 0.05;
			s->keys[1].type = GA_TYPE_INT16;
			s->keys[1].domain = 50;
			s->keys[1].dist = DIST_ZIPF;
			s->keys[1].scattered = 1;
			s->keys[1].null_rate = 0.3;
			s->keys[2].type = GA_TYPE_INT64;
			s->keys[2].domain = 30;
			s->keys[2].scattered = 1;
			s->keys[2].dist = DIST_ZIPF;
			all_value_types(s, VAL_SMALL, VAL_MAGNITUDES, 0.3);
			s->nrows = 200000;
			s->estimated_groups = 10;
			break;
		case 13:
			default_spec(s, "no-aggregates");
			s->nkeys = 2;
			s->keys[1].type = GA_TYPE_INT16;
			s->keys[1].null_rate = 0.5;
			s->no_aggs = 1;
			break;
		case 14:
			default_spec(s, "plain-many-batches");
			s->nkeys = 0;
			all_value_types(s, VAL_FULL, VAL_MAGNITUDES, 0.2);
			s->nrows = 300000;
			s->batch_rows = 20000;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 15:
			default_spec(s, "interleaved");
			s->keys[0].domain = 5000;
			s->nrows = 100000;
			s->batch_rows = 8192;
			s->interleave = 1;
			s->split = SPLIT_RANDOM;
			break;
		case 16:
			default_spec(s, "estimate-far-too-large");
			s->estimated_groups = INT64_C(1000000000000);
			s->keys[0].domain = 10;
			break;
		case 17:
			default_spec(s, "has_nulls-without-nulls");
			s->nkeys = 2;
			s->keys[1].type = GA_TYPE_INT64;
			s->force_has_nulls = 1;
			all_value_types(s, VAL_SMALL, VAL_SMALL, 0);
			break;
		case 18:
			default_spec(s, "int8-key-full-domain");
			s->keys[0].type = GA_TYPE_INT8;
			s->keys[0].domain = 256;
			s->keys[0].dist = DIST_SEQUENTIAL;
			s->keys[0].null_rate = 0.01;
			s->estimated_groups = 0;
			all_value_types(s, VAL_FULL, VAL_CANCEL, 0.01);
			s->nrows = 100000;
			break;
		case 19:
			default_spec(s, "int16-key-extremes");
			s->keys[0].type = GA_TYPE_INT16;
			s->keys[0].domain = 65536;
			s->keys[0].scattered = 1;
			s->keys[0].dist = DIST_ZIPF;
			s->estimated_groups = 16;
			s->nrows = 400000;
			s->batch_rows = 1 << 16;
			break;
		case 20:
			default_spec(s, "int64-key-ends");
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 6;
			s->keys[0].scattered = 1;	/* INT64_MIN, INT64_MAX, 0, -1 among them */
			s->keys[0].null_rate = 0.1;
			all_value_types(s, VAL_EXTREME, VAL_SPECIAL, 0);
			break;
		case 22:
			/* sorted keys: later batches lie outside the first one's range */
			default_spec(s, "sorted-keys-escape-range");
			s->keys[0].domain = 300000;
			s->keys[0].dist = DIST_SEQUENTIAL;
			s->nvals = 2;
			s->vals[0].type = GA_TYPE_INT64;
			s->vals[0].mode = VAL_FULL;
			s->vals[1].type = GA_TYPE_FLOAT64;
			s->nrows = 600000;
			s->batch_rows = 65536;
			s->estimated_groups = 1000;
			break;
		case 23:
			/* two int32 keys fill 64 bits; (1, INT32_MIN) is the packed empty slot */
			default_spec(s, "two-int32-keys-pack-64");
			s->nkeys = 2;
			s->keys[0].domain = 40;
			s->keys[0].scattered = 1;
			s->keys[1] = s->keys[0];
			s->nrows = 200000;
			s->batch_rows = 50000;
			s->estimated_groups = 1600;
			break;
		case 24:
			default_spec(s, "perfect-three-keys-nulls");
			s->nkeys = 3;
			s->keys[0].type = GA_TYPE_INT8;
			s->keys[0].domain = 5;
			s->keys[0].null_rate = 0.1;
			s->keys[1].type = GA_TYPE_INT16;
			s->keys[1].domain = 7;
			s->keys[1].dist = DIST_ZIPF;
			s->keys[2].type = GA_TYPE_INT64;
			s->keys[2].domain = 11;
			s->keys[2].null_rate = 0.02;
			all_value_types(s, VAL_SMALL, VAL_SMALL, 0.05);
			s->nrows = 150000;
			s->batch_rows = 40000;
			s->estimated_groups = 300;
			break;
		case 25:
			/* a range too large for shared memory: direct indexing in global memory */
			default_spec(s, "large-range-uniform");
			s->keys[0].domain = 200000;
			s->nrows = 400000;
			s->batch_rows = 1 << 17;
			s->estimated_groups = 150000;
			break;
		case 26:
			/* the fused kernel's tables overflow and the global table grows */
			default_spec(s, "int16-few-estimated-many");
			s->keys[0].type = GA_TYPE_INT16;
			s->keys[0].domain = 5000;
			s->keys[0].scattered = 1;
			s->keys[0].null_rate = 0.05;
			s->nrows = 300000;
			s->batch_rows = 1 << 16;
			s->estimated_groups = 10;
			break;
		case 27:
			default_spec(s, "int64-zipf-range");
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 100000;
			s->keys[0].dist = DIST_ZIPF;
			s->nrows = 500000;
			s->batch_rows = 1 << 17;
			s->estimated_groups = 20000;
			break;
		case 28:
			/* big enough batches for auto to partition */
			default_spec(s, "scattered-many-groups");
			s->keys[0].domain = 400000;
			s->keys[0].scattered = 1;
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT32;
			s->nrows = 1200000;
			s->batch_rows = 1 << 19;
			s->estimated_groups = 400000;
			break;
		case 29:
			/*
			 * Few groups of keys that do not pack into 64 bits and span
			 * their types (no direct index): the two-phase shared kernel,
			 * with every width of shared accumulator.
			 */
			default_spec(s, "two-phase-shared-mixed-widths");
			s->nkeys = 2;
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 8;
			s->keys[0].scattered = 1;
			s->keys[0].null_rate = 0.1;
			s->keys[1].type = GA_TYPE_INT32;
			s->keys[1].domain = 5;
			s->keys[1].scattered = 1;
			all_value_types(s, VAL_EXTREME, VAL_SPECIAL, 0.05);
			s->nrows = 60000;
			s->batch_rows = 16384;
			s->estimated_groups = 40;
			break;
		case 30:
			/* direct index next to INT64_MAX and INT32_MIN, sampled first batch */
			default_spec(s, "perfect-at-type-ends");
			s->nkeys = 2;
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 50;
			s->keys[0].edge = 1;
			s->keys[0].null_rate = 0.05;
			s->keys[1].type = GA_TYPE_INT32;
			s->keys[1].domain = 40;
			s->keys[1].edge = -1;
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT32;
			s->nrows = 1500000;
			s->batch_rows = 1200000;
			s->estimated_groups = 2000;
			break;
		case 31:
			/* keys from INT64_MIN up, in order: later batches escape the range */
			default_spec(s, "perfect-escapes-from-int64-min");
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 100000;
			s->keys[0].edge = -1;
			s->keys[0].dist = DIST_SEQUENTIAL;
			s->nrows = 250000;
			s->batch_rows = 20000;
			s->estimated_groups = 100;
			break;
		case 32:
			/*
			 * Packable keys, the fused kernel's block tables sized from an
			 * estimate larger than the global table's first capacity: the
			 * one-pass kernel overflows the global table and runs again.
			 */
			default_spec(s, "fused-overflows-global-table");
			s->nkeys = 2;
			s->keys[0].type = GA_TYPE_INT16;
			s->keys[0].domain = 50;
			s->keys[0].scattered = 1;
			s->keys[1].type = GA_TYPE_INT8;
			s->keys[1].domain = 50;
			s->keys[1].null_rate = 0.02;
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT32;
			s->nrows = 200000;
			s->batch_rows = 65536;
			s->estimated_groups = 1000;
			break;
		case 33:
			/* an estimate whose group table exceeds the L2 cache: partitioned */
			default_spec(s, "partitioned-beyond-l2");
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 300000;
			s->keys[0].scattered = 1;
			s->keys[0].null_rate = 0.01;
			s->nvals = 2;
			s->vals[0].type = GA_TYPE_INT32;
			s->vals[1].type = GA_TYPE_FLOAT64;
			s->nrows = 700000;
			s->batch_rows = 1 << 18;
			s->estimated_groups = 8000000;
			break;
		case 34:
			/* a plain aggregate over many batches with every width */
			default_spec(s, "plain-mixed-widths");
			s->nkeys = 0;
			all_value_types(s, VAL_EXTREME, VAL_MAGNITUDES, 0.2);
			s->nrows = 100000;
			s->batch_rows = 3000;
			break;
		case 35:
			/*
			 * perfect's narrow kernel (one int32 key and int32 inputs, no
			 * nulls): COUNT, SUM_INT, MIN and MAX of full-range values, rows
			 * that are not a multiple of 4 in every batch, and keys of later
			 * batches beyond the first batch's range (escapes)
			 */
			default_spec(s, "narrow-int32-escapes");
			s->values_only = 1;
			s->keys[0].domain = 3000;
			s->keys[0].dist = DIST_SEQUENTIAL;
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT32;
			s->vals[0].mode = VAL_FULL;
			s->nrows = 20003;
			s->batch_rows = 1001;
			s->estimated_groups = 3000;
			break;
		case 36:
			/* the narrow kernel with int64 keys and int64 extremes: 128-bit sums */
			default_spec(s, "narrow-int64-extremes");
			s->values_only = 1;
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 7;
			s->keys[0].dist = DIST_HOT;
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT64;
			s->vals[0].mode = VAL_EXTREME;
			s->nrows = 300001;
			s->batch_rows = 65537;
			s->estimated_groups = 7;
			break;
		case 37:
			/* the narrow kernel with an int32 key and int64 inputs, skewed */
			default_spec(s, "narrow-int32-key-int64-values");
			s->values_only = 1;
			s->keys[0].domain = 500;
			s->keys[0].dist = DIST_ZIPF;
			s->keys[0].edge = -1;	/* from the type's smallest value */
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT64;
			s->vals[0].mode = VAL_FULL;
			s->nrows = 100002;
			s->batch_rows = 1 << 15;
			s->estimated_groups = 500;
			break;
		case 38:
			/*
			 * Forced partitioned over keys that pack (gpu/kernels/hashagg_chunks.cu):
			 * an int32 key with nulls, every aggregate (moments included;
			 * a chunk whose entries do not fit shared memory folds into
			 * global memory), chunks of mostly distinct keys.
			 */
			default_spec(s, "partitioned-chunks");
			s->keys[0].domain = 400000;
			s->keys[0].scattered = 1;
			s->keys[0].null_rate = 0.01;
			s->nrows = 1000000;
			s->batch_rows = 1 << 19;
			s->estimated_groups = 8000000;
			break;
		case 39:
			/* the same with two skewed keys: chunks of few entries, copied */
			default_spec(s, "partitioned-chunks-zipf");
			s->nkeys = 2;
			s->keys[0].type = GA_TYPE_INT16;
			s->keys[0].domain = 20000;
			s->keys[0].dist = DIST_ZIPF;
			s->keys[0].scattered = 1;
			s->keys[0].null_rate = 0.02;
			s->keys[1].type = GA_TYPE_INT32;
			s->keys[1].domain = 40;
			s->keys[1].dist = DIST_ZIPF;
			s->nvals = 2;
			s->vals[0].type = GA_TYPE_INT32;
			s->vals[1].type = GA_TYPE_FLOAT64;
			s->nrows = 800000;
			s->batch_rows = 1 << 20;
			s->estimated_groups = 10000000;
			break;
		case 40:
			/* an int64 key without nulls (all 64 bits packed), a hot key, 128-bit sums */
			default_spec(s, "partitioned-chunks-hot-int64");
			s->values_only = 1;
			s->keys[0].type = GA_TYPE_INT64;
			s->keys[0].domain = 300000;
			s->keys[0].dist = DIST_HOT;
			s->keys[0].scattered = 1;
			s->nvals = 1;
			s->vals[0].type = GA_TYPE_INT64;
			s->vals[0].mode = VAL_FULL;
			s->nrows = 700000;
			s->batch_rows = 1 << 20;
			s->estimated_groups = 8000000;
			break;
		default:
			default_spec(s, "one-group-many-rows");
			s->keys[0].domain = 1;
			all_value_types(s, VAL_FULL, VAL_MAGNITUDES, 0.01);
			s->nrows = 500000;
			s->batch_rows = 1 << 17;
			s->estimated_groups = 1;
			break;
	}
}

/* A random case: keys, values, skew, nulls, sizes and estimate all drawn. */
void
random_spec(Rng *rng, CaseSpec *s, int64_t max_rows)
{
	static const double null_rates[] = {0, 0, 0, 0.001, 0.05, 0.3, 1.0};
	static const double val_null_rates[] = {0, 0, 0.01, 0.3, 1.0};
	double		groups_exp;
	int64_t		groups;
	int			k,
				i;

	memset(s, 0, sizeof(*s));
	s->label = "random";
	s->nkeys = rng_chance(rng, 0.1) ? 0 : (int) rng_range(rng, 1, MAX_KEYS);

	/* Target groups: log-uniform, 1 .. 1e6 (large ones rarer). */
	groups_exp = rng_unit(rng) * (rng_chance(rng, 0.1) ? 6.0 : 4.5);
	groups = (int64_t) pow(10.0, groups_exp);
	if (groups < 1)
		groups = 1;
	for (k = 0; k < s->nkeys; k++)
	{
		KeySpec    *ks = &s->keys[k];

		ks->type = (GaValueType) rng_range(rng, GA_TYPE_INT8, GA_TYPE_INT64);
		ks->domain = (int64_t) ceil(pow((double) groups, 1.0 / s->nkeys));
		ks->dist = (KeyDist) rng_range(rng, DIST_UNIFORM, DIST_SEQUENTIAL);
		ks->scattered = rng_chance(rng, 0.5);
		ks->null_rate = rng_pick(rng, null_rates, 7);
	}

	s->nvals = (int) rng_range(rng, 0, MAX_VALS);
	for (i = 0; i < s->nvals; i++)
	{
		ValSpec    *vs = &s->vals[i];
		int			t = (int) rng_range(rng, 0, 12);

		vs->type = t == 0 ? GA_TYPE_NONE : (GaValueType) (1 + t % 6);
		if (type_is_int(vs->type))
			vs->mode = (ValMode) rng_range(rng, VAL_SMALL, VAL_EXTREME);
		else
			vs->mode = (ValMode) rng_range(rng, VAL_SMALL, VAL_EXTREME_FINITE);
		vs->null_rate = rng_pick(rng, val_null_rates, 5);
	}

	/* Rows: usually a few per group, sometimes many, sometimes almost none. */
	if (rng_chance(rng, 0.08))
		s->nrows = rng_range(rng, 0, 10);
	else
		s->nrows = (int64_t) ((double) groups * (0.5 + rng_unit(rng) * (rng_chance(rng, 0.3) ? 20 : 3)));
	if (s->nrows > max_rows)
		s->nrows = max_rows;

	/* Batches: tiny to large, but at most ~2000 of them. */
	s->batch_rows = (int64_t) pow(2.0, rng_range(rng, 0, 20));
	if (s->batch_rows < s->nrows / 2000)
		s->batch_rows = s->nrows / 2000 + 1;
	s->split = (SplitMode) rng_range(rng, SPLIT_FULL, SPLIT_WITH_EMPTY);
	if (s->nrows == 0 && rng_chance(rng, 0.5))
		s->split = SPLIT_NONE;

	/* Estimate: right, far too small, zero or far too large. */
	switch (rng_range(rng, 0, 4))
	{
		case 0:
			s->estimated_groups = groups;
			break;
		case 1:
			s->estimated_groups = 1;
			break;
		case 2:
			s->estimated_groups = groups / 1000;
			break;
		case 3:
			s->estimated_groups = 0;
			break;
		default:
			s->estimated_groups = groups * 100;
			break;
	}
	s->all_aggs = rng_chance(rng, 0.3);
	s->interleave = rng_chance(rng, 0.1);
	s->force_has_nulls = rng_chance(rng, 0.05);

	/*
	 * Key ranges at the ends of their types (direct indexing's range
	 * arithmetic), from a side stream so that the draws above and the
	 * case's data keep their seeds.
	 */
	{
		Rng			side = *rng;

		rng_seed(&side, rng_next(&side) ^ UINT64_C(0x5851f42d4c957f2d));
		for (k = 0; k < s->nkeys; k++)
			if (!s->keys[k].scattered && rng_chance(&side, 0.25))
				s->keys[k].edge = rng_chance(&side, 0.5) ? 1 : -1;
	}
}
