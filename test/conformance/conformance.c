/*-------------------------------------------------------------------------
 *
 * conformance.c
 *	  Device conformance test: feeds seeded random batches to every available
 *	  aggregation device (the CPU always, the GPU when one is found, under
 *	  each GPU strategy) and compares what comes back with a naive reference
 *	  computed here, independently of cuda/.
 *
 * The reference sorts all rows of a case by key tuple and folds each run of
 * equal keys; the device's groups are sorted the same way and the two
 * sorted lists are merged, so missing, extra and wrong groups all show.
 * Integer results must be exact.  Float sums may differ by the rounding of
 * a different order of additions: the bound used is Higham's
 * |computed - exact| <= gamma_n * sum|x| (gamma_n = n u / (1 - n u)), which
 * holds for every summation order, so a pass is never luck and a fail is a
 * real error.  Inputs that could overflow a partial sum are never summed.
 * MIN/MAX of floats must be bit-exact (NaN is the largest value, every NaN
 * equal; -0 is below +0, as ga_float64_to_ordered orders them).
 * MOMENTS and COMOMENTS: counts exact; the shift a finite value within the
 * group's range; sum(x) = n K + sum, sum((x - mean)^2) and the co-moment
 * checked against Welford's updates in long double, within the rounding
 * bound of sums of n terms of the shifted values (gamma_n times the sum of
 * their magnitudes, bounded through the reference's mean and |x|).
 *
 * Values of null rows are filled with garbage (NaN, extremes) that a device
 * must ignore.  MIN/MAX of a group without any non-null input is left
 * unchecked: the caller derives NULL from COUNT there.
 *
 * Besides results, it checks the batch contract (next_batch hands out an
 * empty batch of the requested shape), the statistics (batches, rows,
 * groups; on the CPU device bytes_sent and table growth too), cancellation
 * through the wait callback, fail_at_batch, and refusal of bad requests.
 *
 * The hash join has its own suite in join.c, run after the aggregation's;
 * then the aggjoin (aggjoin.c) and derived columns (derived.c),
 * which check their groups with this file's reference (conformance.h).
 *
 * Usage: conformance [--device cpu|gpu|all] [--suite agg|join|aggjoin|derived|all]
 *                    [--cases N] [--join-cases N] [--aggjoin-cases N] [--aggjoin-first I]
 *                    [--derived-cases N] [--seed S] [--only I] [--max-rows R]
 *                    [--timeout S] [--verbose]
 * (build and run it with test/conformance/run.sh).
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "derived.h"
#include "sizing.h"			/* the GPU strategy rules, to check them */
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPORTS 6			/* mismatch lines printed per run */

/* ------------------------------------------------------------------------
 * Random numbers: xoshiro256** seeded through splitmix64
 * ------------------------------------------------------------------------
 */
/* One splitmix64 step: spreads a seed into well-mixed state words. */
static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Seed a generator; every case gets its own, so one case can be rerun alone. */
void
rng_seed(Rng *rng, uint64_t seed)
{
	int			i;

	for (i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&seed);
}

/* The next 64 random bits (xoshiro256**). */
uint64_t
rng_next(Rng *rng)
{
	uint64_t   *s = rng->s;
	uint64_t	result = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* A uniform double in [0, 1). */
double
rng_unit(Rng *rng)
{
	return (double) (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* A uniform integer in [lo, hi]. */
int64_t
rng_range(Rng *rng, int64_t lo, int64_t hi)
{
	uint64_t	span = (uint64_t) hi - (uint64_t) lo + 1;

	if (span == 0)
		return (int64_t) rng_next(rng);
	return (int64_t) ((uint64_t) lo + rng_next(rng) % span);
}

/* True with probability p. */
int
rng_chance(Rng *rng, double p)
{
	return rng_unit(rng) < p;
}

/* One of n doubles, uniformly. */
double
rng_pick(Rng *rng, const double *choices, int n)
{
	return choices[rng_range(rng, 0, n - 1)];
}

/* ------------------------------------------------------------------------
 * Value types
 * ------------------------------------------------------------------------
 */

/* Short name of a column type, for the case lines. */
const char *
type_name(GaValueType type)
{
	static const char *const names[] = {"none", "i8", "i16", "i32", "i64", "f32", "f64"};

	return (type >= GA_TYPE_NONE && type <= GA_TYPE_FLOAT64) ? names[type] : "?";
}

int
type_is_int(GaValueType type)
{
	return type >= GA_TYPE_INT8 && type <= GA_TYPE_INT64;
}

/* Whether a column type holds floats. */
int
type_is_float(GaValueType type)
{
	return type == GA_TYPE_FLOAT32 || type == GA_TYPE_FLOAT64;
}

/* Smallest and largest value of an integer type. */
void
int_type_range(GaValueType type, int64_t *lo, int64_t *hi)
{
	switch (type)
	{
		case GA_TYPE_INT8:
			*lo = INT8_MIN, *hi = INT8_MAX;
			break;
		case GA_TYPE_INT16:
			*lo = INT16_MIN, *hi = INT16_MAX;
			break;
		case GA_TYPE_INT32:
			*lo = INT32_MIN, *hi = INT32_MAX;
			break;
		default:
			*lo = INT64_MIN, *hi = INT64_MAX;
			break;
	}
}

/* Store an integer into element i of a column of an integer type. */
void
store_int(void *values, GaValueType type, int64_t i, int64_t v)
{
	switch (type)
	{
		case GA_TYPE_INT8:
			((int8_t *) values)[i] = (int8_t) v;
			break;
		case GA_TYPE_INT16:
			((int16_t *) values)[i] = (int16_t) v;
			break;
		case GA_TYPE_INT32:
			((int32_t *) values)[i] = (int32_t) v;
			break;
		default:
			((int64_t *) values)[i] = v;
			break;
	}
}

/* Element i of an integer column, widened. */
int64_t
load_int(const void *values, GaValueType type, int64_t i)
{
	switch (type)
	{
		case GA_TYPE_INT8:
			return ((const int8_t *) values)[i];
		case GA_TYPE_INT16:
			return ((const int16_t *) values)[i];
		case GA_TYPE_INT32:
			return ((const int32_t *) values)[i];
		default:
			return ((const int64_t *) values)[i];
	}
}

/* Element i of a float column, widened. */
double
load_float(const void *values, GaValueType type, int64_t i)
{
	if (type == GA_TYPE_FLOAT32)
		return ((const float *) values)[i];
	return ((const double *) values)[i];
}

/* ------------------------------------------------------------------------
 * Cases: what to generate (CaseSpec) and the generated data (Case)
 * ------------------------------------------------------------------------
 */
static int	sort_nkeys;

/* Order key tuples of nkeys keys: per key, non-null values ascending, then null. */
int
rowkey_compare(const RowKey *a, const RowKey *b, int nkeys)
{
	int			k;

	for (k = 0; k < nkeys; k++)
	{
		if (a->n[k] != b->n[k])
			return a->n[k] ? 1 : -1;
		if (a->n[k])
			continue;
		if (a->v[k] != b->v[k])
			return a->v[k] < b->v[k] ? -1 : 1;
	}
	return 0;
}

/* qsort's form of rowkey_compare, over sort_nkeys keys. */
static int
rowkey_cmp(const void *pa, const void *pb)
{
	return rowkey_compare(pa, pb, sort_nkeys);
}

/* Fill an integer value of the column's mode into element i. */
void
gen_int_value(Rng *rng, void *values, GaValueType type, ValMode mode, int64_t i)
{
	int64_t		lo,
				hi,
				v;

	int_type_range(type, &lo, &hi);
	switch (mode)
	{
		case VAL_FULL:
			v = (int64_t) rng_next(rng);
			break;
		case VAL_EXTREME:
			{
				int64_t		ends[] = {lo, hi, hi, lo, hi, lo + 1, hi - 1, 0, -1, 1};

				v = ends[rng_range(rng, 0, 9)];
				break;
			}
		default:
			v = rng_range(rng, -100, 100);
			break;
	}
	store_int(values, type, i, v);
}

/* A float of the column's mode (double; narrowed by the caller for f32). */
double
gen_float_value(Rng *rng, GaValueType type, ValMode mode)
{
	double		sign = rng_chance(rng, 0.5) ? -1.0 : 1.0;

	switch (mode)
	{
		case VAL_MAGNITUDES:
			return sign * ldexp(0.5 + rng_unit(rng), (int) rng_range(rng, -60, 60));
		case VAL_SPECIAL:
			if (rng_chance(rng, 0.3))
			{
				switch (rng_range(rng, 0, 6))
				{
					case 0:
						return NAN;
					case 1:
						return -NAN;
					case 2:
						return INFINITY;
					case 3:
						return -INFINITY;
					case 4:
						return -0.0;
					case 5:
						return 0.0;
					default:
						return sign * 1e-3;
				}
			}
			return sign * rng_unit(rng) * 1000.0;
		case VAL_CANCEL:
			return rng_chance(rng, 0.5) ? sign * 1e15 : sign * rng_unit(rng);
		case VAL_EXTREME_FINITE:
			{
				int			f32 = (type == GA_TYPE_FLOAT32);

				switch (rng_range(rng, 0, 7))
				{
					case 0:
						return sign * (f32 ? FLT_MAX : DBL_MAX);
					case 1:
						return sign * (f32 ? FLT_MIN : DBL_MIN);
					case 2:
						return sign * (f32 ? (double) FLT_TRUE_MIN : DBL_TRUE_MIN);
					case 3:
						return rng_chance(rng, 0.5) ? INFINITY : -INFINITY;
					case 4:
						return NAN;
					case 5:
						return -0.0;
					default:
						return sign * ldexp(rng_unit(rng), (int) rng_range(rng, -120, 120));
				}
			}
		default:
			return sign * (double) rng_range(rng, 0, 1000000) / 1000.0;
	}
}

/* Whether sums over a column of this mode are well defined (no overflow). */
int
mode_summable(ValMode mode)
{
	return mode != VAL_EXTREME_FINITE;
}

/*
 * Split nrows rows into batches of at most batch_rows by the split mode;
 * returns how many, their sizes in *sizes (malloc'd).  Both suites of
 * aggregation cases (this file and aggjoin.c) split their input with it.
 */
int
split_batches(Rng *rng, SplitMode split, int64_t nrows, int64_t batch_rows, int64_t **sizes)
{
	int64_t		left = nrows;
	int			cap = 16;
	int			n = 0;

	*sizes = malloc(sizeof(int64_t) * cap);
	if (split == SPLIT_NONE && left == 0)
		return 0;
	do
	{
		int64_t		rows;

		if (split == SPLIT_WITH_EMPTY && rng_chance(rng, 0.2))
			rows = 0;
		else if (split == SPLIT_FULL)
			rows = left < batch_rows ? left : batch_rows;
		else
		{
			rows = rng_chance(rng, 0.5) ? batch_rows : rng_range(rng, 1, batch_rows);
			if (rows > left)
				rows = left;
		}
		if (n + 1 >= cap)
		{
			cap *= 2;
			*sizes = realloc(*sizes, sizeof(int64_t) * cap);
		}
		(*sizes)[n++] = rows;
		left -= rows;
	} while (left > 0);
	if (split == SPLIT_WITH_EMPTY)
		(*sizes)[n++] = 0;		/* an empty last batch */
	return n;
}

/*
 * Print what one aggregation did (verbose runs), for both suites: "case" or
 * "aggjoin" cases, with the join's counts when aggjoin.
 */
void
print_stats(const char *suite, int case_no, const char *label, const GaAggStats *stats,
			int aggjoin)
{
	int			s;

	printf("%s %d [%s] stats: batches %lld rows %lld ", suite, case_no, label,
		   (long long) stats->batches, (long long) stats->input_rows);
	if (aggjoin)
		printf("joined %lld build %lld ", (long long) stats->joined_rows,
			   (long long) stats->join_build_rows);
	printf("groups %lld bytes %lld growths %lld retries %lld device estimate %lld by strategy:",
		   (long long) stats->groups, (long long) stats->bytes_sent,
		   (long long) stats->table_growths, (long long) stats->retries,
		   (long long) stats->device_estimated_groups);
	for (s = 0; s < GA_NUM_STRATEGIES; s++)
		if (stats->batches_by_strategy[s] > 0)
			printf(" %s=%lld", ga_strategy_name((GaStrategy) s),
				   (long long) stats->batches_by_strategy[s]);
	printf(" device %.2f ms transfer %.2f ms\n", stats->device_ms, stats->transfer_ms);
}

/* perm[0 .. n) = a random permutation of 0 .. n - 1 (Fisher-Yates). */
void
rng_permutation(Rng *rng, int *perm, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--)
	{
		int			j = (int) rng_range(rng, 0, i);
		int			t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Add one aggregate to a case (column2: COMOMENTS' second column). */
void
add_agg2(Case *c, GaAggOp op, int column, int column2)
{
	if (c->naggs < MAX_AGGS)
	{
		c->aggs[c->naggs].op = op;
		c->aggs[c->naggs].column = column;
		c->aggs[c->naggs].column2 = column2;
		c->naggs++;
	}
}

/* Add one single-column aggregate to a case. */
void
add_agg(Case *c, GaAggOp op, int column)
{
	add_agg2(c, op, column, -1);
}

/*
 * Add the aggregates valid over one column (all of them, or a random
 * subset); summable says whether its sums cannot overflow.
 */
void
add_column_aggs(Case *c, Rng *rng, int column, int summable, int all, double p)
{
	GaValueType type = c->types[column];
	GaAggOp		ops[7];
	int			nops = 0;
	int			i;

	ops[nops++] = GA_AGG_COUNT;
	if (type_is_int(type))
	{
		ops[nops++] = GA_AGG_SUM_INT;
		ops[nops++] = GA_AGG_MIN;
		ops[nops++] = GA_AGG_MAX;
	}
	else if (type != GA_TYPE_NONE)
	{
		ops[nops++] = GA_AGG_COUNT_NONFINITE;
		ops[nops++] = GA_AGG_MIN;
		ops[nops++] = GA_AGG_MAX;
		if (summable)
			ops[nops++] = GA_AGG_SUM_FLOAT64;
		if (summable)
			ops[nops++] = GA_AGG_MOMENTS;
		if (summable && type == GA_TYPE_FLOAT32)
			ops[nops++] = GA_AGG_SUM_FLOAT32;
	}
	for (i = 0; i < nops; i++)
		if (all || rng_chance(rng, p))
			add_agg(c, ops[i], column);
}

/* Generate a case's columns, rows, aggregates and batches from its spec. */
static void
build_case(Case *c, const CaseSpec *spec, Rng *rng)
{
	int			perm[MAX_COLUMNS];
	int64_t    *key_tables[MAX_KEYS];
	int64_t		domains[MAX_KEYS];
	int			val_summable[MAX_COLUMNS];
	int			i,
				k;
	int64_t		r;
	char	   *d;

	memset(c, 0, sizeof(*c));
	c->nkeys = spec->nkeys;
	c->ncolumns = spec->nkeys + spec->nvals;
	c->nrows = spec->nrows;
	c->batch_rows = spec->batch_rows;
	c->estimated_groups = spec->estimated_groups;
	c->interleave = spec->interleave;
	c->force_has_nulls = spec->force_has_nulls;

	/* Shuffle where keys and values sit among the columns. */
	rng_permutation(rng, perm, c->ncolumns);

	/* Key columns: a table of domain values per key, rows draw from it. */
	for (k = 0; k < c->nkeys; k++)
	{
		const KeySpec *ks = &spec->keys[k];
		int			col = perm[k];
		int64_t		lo,
					hi;
		int64_t		dom = ks->domain < 1 ? 1 : ks->domain;

		c->key_columns[k] = col;
		c->types[col] = ks->type;
		int_type_range(ks->type, &lo, &hi);
		if (ks->type != GA_TYPE_INT64 && dom > hi - lo + 1)
			dom = hi - lo + 1;
		domains[k] = dom;
		if (k == 0)
			c->range_entries = 1;
		if (ks->scattered || c->range_entries == 0 || c->range_entries > (INT64_C(1) << 40))
			c->range_entries = 0;
		else
			c->range_entries *= dom + 1;
		key_tables[k] = malloc(sizeof(int64_t) * dom);
		if (ks->scattered)
		{
			for (r = 0; r < dom; r++)
				key_tables[k][r] = rng_range(rng, lo, hi);
			if (dom > 4)
			{
				key_tables[k][0] = lo;
				key_tables[k][1] = hi;
				key_tables[k][2] = 0;
				key_tables[k][3] = -1;
			}
			if (dom > 6)
			{
				/* INT64_MIN + 1, or 1 with INT32_MIN: the GPU's packed empty slot */
				key_tables[k][4] = lo + 1;
				key_tables[k][5] = 1;
			}
		}
		else
		{
			int64_t		start;

			if (ks->edge > 0)
				start = hi - (dom - 1); /* the last value is the type's largest */
			else if (ks->edge < 0)
				start = lo;
			else if (ks->type == GA_TYPE_INT64)
				start = rng_range(rng, -(INT64_C(1) << 40), INT64_C(1) << 40);
			else
				start = rng_range(rng, lo, hi - dom + 1);
			for (r = 0; r < dom; r++)
				key_tables[k][r] = start + r;
		}
	}
	for (i = 0; i < spec->nvals; i++)
	{
		c->types[perm[c->nkeys + i]] = spec->vals[i].type;
		val_summable[perm[c->nkeys + i]] = mode_summable(spec->vals[i].mode);
	}

	for (i = 0; i < c->ncolumns; i++)
	{
		int			width = ga_type_width(c->types[i]);

		c->values[i] = width > 0 ? malloc((size_t) width * (c->nrows > 0 ? c->nrows : 1)) : NULL;
		c->isnull[i] = calloc(c->nrows > 0 ? c->nrows : 1, 1);
	}

	/* Rows.  A null row keeps a drawn value: garbage the device must ignore. */
	for (k = 0; k < c->nkeys; k++)
	{
		const KeySpec *ks = &spec->keys[k];
		int			col = c->key_columns[k];

		for (r = 0; r < c->nrows; r++)
		{
			int64_t		j;

			switch (ks->dist)
			{
				case DIST_ZIPF:
					j = (int64_t) floor(pow((double) domains[k] + 1.0, rng_unit(rng))) - 1;
					break;
				case DIST_HOT:
					j = rng_chance(rng, 0.5) ? 0 : rng_range(rng, 0, domains[k] - 1);
					break;
				case DIST_SEQUENTIAL:
					j = r % domains[k];
					break;
				default:
					j = rng_range(rng, 0, domains[k] - 1);
					break;
			}
			if (j < 0 || j >= domains[k])
				j = 0;
			store_int(c->values[col], ks->type, r, key_tables[k][j]);
			if (ks->null_rate > 0 && rng_chance(rng, ks->null_rate))
			{
				c->isnull[col][r] = 1;
				c->has_nulls[col] = 1;
			}
		}
		free(key_tables[k]);
	}
	for (i = 0; i < spec->nvals; i++)
	{
		const ValSpec *vs = &spec->vals[i];
		int			col = perm[c->nkeys + i];

		for (r = 0; r < c->nrows; r++)
		{
			if (type_is_int(vs->type))
				gen_int_value(rng, c->values[col], vs->type, vs->mode, r);
			else if (vs->type == GA_TYPE_FLOAT32)
				((float *) c->values[col])[r] = (float) gen_float_value(rng, vs->type, vs->mode);
			else if (vs->type == GA_TYPE_FLOAT64)
				((double *) c->values[col])[r] = gen_float_value(rng, vs->type, vs->mode);
			if (vs->null_rate > 0 && rng_chance(rng, vs->null_rate))
			{
				c->isnull[col][r] = 1;
				c->has_nulls[col] = 1;
			}
		}
	}

	/* Aggregates. */
	if (!spec->no_aggs)
	{
		double		p = spec->all_aggs ? 1.0 : rng_pick(rng, (const double[]) {0.3, 0.6, 0.9}, 3);

		if (spec->all_aggs || rng_chance(rng, 0.7))
			add_agg(c, GA_AGG_COUNT_ROWS, -1);
		for (i = 0; i < spec->nvals; i++)
		{
			int			col = perm[c->nkeys + i];

			add_column_aggs(c, rng, col, val_summable[col], spec->all_aggs, p);
		}
		for (k = 0; k < c->nkeys && !spec->values_only; k++)
			if (spec->all_aggs || rng_chance(rng, 0.2))
				add_column_aggs(c, rng, c->key_columns[k], 1, spec->all_aggs, 0.5);
		/* COMOMENTS of ordered pairs of summable float columns (x = y too) */
		for (i = 0; i < spec->nvals; i++)
			for (k = 0; k < spec->nvals; k++)
			{
				int			x = perm[c->nkeys + i];
				int			y = perm[c->nkeys + k];

				if (type_is_float(c->types[x]) && type_is_float(c->types[y]) &&
					val_summable[x] && val_summable[y] &&
					(spec->all_aggs || rng_chance(rng, p / 2)))
					add_agg2(c, GA_AGG_COMOMENTS, x, y);
			}
		if (c->naggs == 0)
			add_agg(c, GA_AGG_COUNT_ROWS, -1);
	}

	c->nbatches = split_batches(rng, spec->split, c->nrows, c->batch_rows, &c->batch_sizes);

	/* A short description for the case line. */
	d = c->desc;
	d += sprintf(d, "%s keys=%d[", spec->label, c->nkeys);
	for (k = 0; k < c->nkeys; k++)
		d += sprintf(d, "%s%s%s", k ? "," : "", type_name(spec->keys[k].type),
					 spec->keys[k].null_rate > 0 ? "?" : "");
	d += sprintf(d, "] vals=[");
	for (i = 0; i < spec->nvals; i++)
		d += sprintf(d, "%s%s%s", i ? "," : "", type_name(spec->vals[i].type),
					 spec->vals[i].null_rate > 0 ? "?" : "");
	d += sprintf(d, "] rows=%lld batch=%lldx%d est=%lld aggs=%d%s%s",
				 (long long) c->nrows, (long long) c->batch_rows, c->nbatches,
				 (long long) c->estimated_groups, c->naggs,
				 c->interleave ? " interleaved" : "",
				 c->force_has_nulls ? " forced-has_nulls" : "");
}

/* Sort the case's rows by key tuple for the reference, and count groups. */
void
sort_reference(Case *c)
{
	int64_t		r;
	int			k;

	c->sorted = malloc(sizeof(RowKey) * (c->nrows > 0 ? c->nrows : 1));
	for (r = 0; r < c->nrows; r++)
	{
		RowKey	   *rk = &c->sorted[r];

		memset(rk, 0, sizeof(*rk));
		for (k = 0; k < c->nkeys; k++)
		{
			int			col = c->key_columns[k];

			rk->n[k] = c->isnull[col][r];
			rk->v[k] = rk->n[k] ? 0 : load_int(c->values[col], c->types[col], r);
		}
		rk->index = r;
	}
	sort_nkeys = c->nkeys;
	qsort(c->sorted, (size_t) c->nrows, sizeof(RowKey), rowkey_cmp);
	if (c->nkeys == 0)
		c->ngroups = 1;
	else
	{
		c->ngroups = 0;
		for (r = 0; r < c->nrows; r++)
			if (r == 0 || rowkey_cmp(&c->sorted[r - 1], &c->sorted[r]) != 0)
				c->ngroups++;
	}
}

/* Free a case's data. */
void
free_case(Case *c)
{
	int			i;

	for (i = 0; i < c->ncolumns; i++)
	{
		free(c->values[i]);
		free(c->isnull[i]);
	}
	free(c->batch_sizes);
	free(c->sorted);
}

/* ------------------------------------------------------------------------
 * The reference: fold one group's rows
 * ------------------------------------------------------------------------
 */
typedef struct RefAcc
{
	int64_t		rows;
	int64_t		nvalid;
	int64_t		ninf;
	int64_t		nnan;
	int64_t		npinf;
	int64_t		nninf;
	__int128	isum;
	double		fsum;			/* Neumaier-compensated sum of finite values */
	double		fcomp;
	double		fabs;			/* sum of |x| of finite values */
	int64_t		imin;
	int64_t		imax;
	double		fmin;
	double		fmax;
	/* MOMENTS (variable 0) and COMOMENTS (x, y): Welford in long double */
	int64_t		mn;				/* rows counted */
	int64_t		mnonfinite[2];
	long double mmean[2];		/* of the finite rows (all, when checked) */
	long double mm2[2];
	long double mcxy;
	double		mabs[2];		/* sum of |x| */
	double		mmin[2];		/* finite range */
	double		mmax[2];
} RefAcc;

/* Float order of the contract: NaN above everything, -0 below +0. */
static int
ref_float_less(double a, double b)
{
	if (isnan(a))
		return 0;
	if (isnan(b))
		return 1;
	if (a != b)
		return a < b;
	return signbit(a) && !signbit(b);
}

/*
 * Add one row to the reference of MOMENTS (one variable) or COMOMENTS (two;
 * rows with either null skipped): Welford's running mean and sums of
 * squared deviations and of cross products, in long double.
 */
static void
ref_add_moments(RefAcc *acc, const Case *c, const GaAggSpec *spec, int64_t row)
{
	int			nv = spec->op == GA_AGG_COMOMENTS ? 2 : 1;
	long double v[2];
	long double d[2];
	int			i;

	for (i = 0; i < nv; i++)
	{
		int			col = i == 0 ? spec->column : spec->column2;

		if (c->isnull[col][row])
			return;
		v[i] = load_float(c->values[col], c->types[col], row);
	}
	acc->mn++;
	for (i = 0; i < nv; i++)
	{
		if (!isfinite((double) v[i]))
		{
			acc->mnonfinite[i]++;
			continue;
		}
		if (acc->mn - acc->mnonfinite[i] == 1 || (double) v[i] < acc->mmin[i])
			acc->mmin[i] = (double) v[i];
		if (acc->mn - acc->mnonfinite[i] == 1 || (double) v[i] > acc->mmax[i])
			acc->mmax[i] = (double) v[i];
		acc->mabs[i] += fabs((double) v[i]);
	}
	if (acc->mnonfinite[0] > 0 || acc->mnonfinite[1] > 0)
		return;					/* only the counts are checked then */
	for (i = 0; i < nv; i++)
	{
		d[i] = v[i] - acc->mmean[i];
		acc->mmean[i] += d[i] / acc->mn;
		acc->mm2[i] += d[i] * (v[i] - acc->mmean[i]);
	}
	if (nv == 2)
		acc->mcxy += d[0] * (v[1] - acc->mmean[1]);
}

/* Add one row (of the case's row index) to the reference accumulator. */
static void
ref_add(RefAcc *acc, const Case *c, const GaAggSpec *spec, int64_t row)
{
	GaValueType type;

	if (spec->op == GA_AGG_MOMENTS || spec->op == GA_AGG_COMOMENTS)
	{
		ref_add_moments(acc, c, spec, row);
		return;
	}
	acc->rows++;
	if (spec->op == GA_AGG_COUNT_ROWS || c->isnull[spec->column][row])
		return;
	type = c->types[spec->column];
	acc->nvalid++;
	if (type == GA_TYPE_NONE)
		return;
	if (type_is_int(type))
	{
		int64_t		v = load_int(c->values[spec->column], type, row);

		acc->isum += v;
		if (acc->nvalid == 1 || v < acc->imin)
			acc->imin = v;
		if (acc->nvalid == 1 || v > acc->imax)
			acc->imax = v;
	}
	else
	{
		double		v = load_float(c->values[spec->column], type, row);

		if (isnan(v))
			acc->nnan++;
		else if (isinf(v))
		{
			acc->ninf++;
			if (v > 0)
				acc->npinf++;
			else
				acc->nninf++;
		}
		else
		{
			double		t = acc->fsum + v;

			if (fabs(acc->fsum) >= fabs(v))
				acc->fcomp += (acc->fsum - t) + v;
			else
				acc->fcomp += (v - t) + acc->fsum;
			acc->fsum = t;
			acc->fabs += fabs(v);
		}
		if (acc->nvalid == 1 || ref_float_less(v, acc->fmin))
			acc->fmin = v;
		if (acc->nvalid == 1 || ref_float_less(acc->fmax, v))
			acc->fmax = v;
	}
}

/* ------------------------------------------------------------------------
 * Comparing one device run with the reference
 * ------------------------------------------------------------------------
 */
/*
 * Print one mismatch line (the first few per run only): "case N [label]" or
 * "api [label]", with the suite's name in front for the join suite.
 */
void
report(RunReport *rr, const char *fmt,...)
{
	va_list		args;

	rr->mismatches++;
	if (rr->printed >= MAX_REPORTS)
		return;
	rr->printed++;
	if (rr->case_no >= 0)
		printf("%s %d [%s] MISMATCH: ", rr->suite ? rr->suite : "case",
			   rr->case_no, rr->label);
	else
		printf("%s%sapi [%s] MISMATCH: ", rr->suite ? rr->suite : "",
			   rr->suite ? " " : "", rr->label);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	printf("\n");
}

/* Format a 128-bit integer in decimal. */
static const char *
i128_str(__int128 v, char *buf)
{
	char		tmp[48];
	int			n = 0,
				neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128) v : (unsigned __int128) v;
	char	   *p = buf;

	do
	{
		tmp[n++] = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	if (neg)
		*p++ = '-';
	while (n > 0)
		*p++ = tmp[--n];
	*p = '\0';
	return buf;
}

/* Format a key tuple for mismatch lines. */
static const char *
key_str(const RowKey *k, int nkeys, char *buf)
{
	char	   *p = buf;
	int			i;

	*p++ = '(';
	for (i = 0; i < nkeys; i++)
	{
		if (k->n[i])
			p += sprintf(p, "%sNULL", i ? "," : "");
		else
			p += sprintf(p, "%s%lld", i ? "," : "", (long long) k->v[i]);
	}
	*p++ = ')';
	*p = '\0';
	return buf;
}

/* Higham's gamma_n for unit roundoff u: bounds any order of n additions. */
static double
gamma_n(int64_t n, double u)
{
	double		nu = (double) n * u;

	return nu < 0.5 ? nu / (1.0 - nu) : INFINITY;
}

/* Whether a device float sum matches the reference for unit roundoff u. */
static int
float_sum_ok(const RefAcc *acc, double got, double u, double *expected)
{
	double		exact = acc->fsum + acc->fcomp;
	double		tol;

	*expected = exact;
	if (acc->nnan > 0 || (acc->npinf > 0 && acc->nninf > 0))
	{
		*expected = NAN;
		return isnan(got);
	}
	if (acc->npinf > 0 || acc->nninf > 0)
	{
		*expected = acc->npinf > 0 ? INFINITY : -INFINITY;
		return got == *expected;
	}
	if (!isfinite(got))
		return 0;
	tol = gamma_n(acc->nvalid + 1, u) * acc->fabs + 4 * DBL_EPSILON * fabs(exact);
	return fabs(got - exact) <= tol;
}

/* Whether two float min/max results are the same (bits, or both NaN). */
static int
float_same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return memcmp(&a, &b, sizeof(double)) == 0;
}

/*
 * Check one variable of device moments against the reference (variable i
 * of acc): count of non-finite values, and without any: the shift inside
 * the group's range, sum(x) and sum((x - mean)^2).  bound (set) is the sum
 * of squared shifted values, the scale of the co-moment's error.
 */
static void
check_moment_var(RunReport *rr, const char *what, const RefAcc *acc, int i, uint64_t n,
				 double shift, uint64_t nonfinite, double sum, double sumsq, double *bound)
{
	double		u = DBL_EPSILON / 2;
	long double shifted_mean;

	*bound = 0;
	if ((int64_t) nonfinite != acc->mnonfinite[i])
	{
		report(rr, "%s: %llu non-finite values, expected %lld", what,
			   (unsigned long long) nonfinite, (long long) acc->mnonfinite[i]);
		return;
	}
	if (n == 0)
		return;
	if (acc->mnonfinite[0] > 0 || acc->mnonfinite[1] > 0)
	{
		if (nonfinite > 0 && isfinite(sum))
			report(rr, "%s: sum %.17g is finite over non-finite values", what, sum);
		return;
	}
	if (!isfinite(shift) || shift < acc->mmin[i] || shift > acc->mmax[i])
	{
		report(rr, "%s: shift %.17g outside the group's values [%.17g, %.17g]", what,
			   shift, acc->mmin[i], acc->mmax[i]);
		return;
	}
	{
		double		total = (double) n * shift + sum;
		long double exact = acc->mmean[i] * (long double) n;
		double		tol = 4 * gamma_n((int64_t) n + 3, u) *
			(acc->mabs[i] + (double) n * fabs(shift)) + 1e-300;

		if (fabsl((long double) total - exact) > tol)
			report(rr, "%s: sum(x) = n K + sum = %.17g, expected %.17Lg (tolerance %.3g)",
				   what, total, exact, tol);
	}
	shifted_mean = acc->mmean[i] - shift;
	*bound = (double) (acc->mm2[i] + (long double) n * shifted_mean * shifted_mean);
	{
		double		m2 = sumsq - sum * sum / (double) n;
		double		tol = 8 * gamma_n((int64_t) n + 4, u) * *bound + 1e-300;

		if (!(fabsl((long double) m2 - acc->mm2[i]) <= tol))
			report(rr, "%s: sum((x - mean)^2) = %.17g, expected %.17Lg (tolerance %.3g)",
				   what, m2, acc->mm2[i], tol);
	}
}

/* Compare a group's MOMENTS or COMOMENTS (agg a, result entry g) with the reference. */
static void
compare_moments(const Case *c, const GaAggResult *res, int64_t g, int a,
				const RefAcc *acc, const char *key, RunReport *rr)
{
	const GaAggSpec *spec = &c->aggs[a];
	char		what[200];
	double		bx,
				by;

	if (spec->op == GA_AGG_MOMENTS)
	{
		const GaMoments *m = &((const GaMoments *) res->values[a])[g];

		snprintf(what, sizeof(what), "group %s agg %d (moments col %d)", key, a, spec->column);
		if ((int64_t) m->n != acc->mn)
			report(rr, "%s: n %llu, expected %lld", what, (unsigned long long) m->n,
				   (long long) acc->mn);
		else
			check_moment_var(rr, what, acc, 0, m->n, m->shift, m->nonfinite,
							 m->sum + m->sum_err, m->sumsq + m->sumsq_err, &bx);
		return;
	}
	{
		const GaComoments *m = &((const GaComoments *) res->values[a])[g];
		double		u = DBL_EPSILON / 2;

		snprintf(what, sizeof(what), "group %s agg %d (comoments cols %d, %d)", key, a,
				 spec->column, spec->column2);
		if ((int64_t) m->n != acc->mn)
		{
			report(rr, "%s: n %llu, expected %lld", what, (unsigned long long) m->n,
				   (long long) acc->mn);
			return;
		}
		check_moment_var(rr, what, acc, 0, m->n, m->shift[0], m->nonfinite[0],
						 m->sum[0] + m->sum_err[0], m->sumsq[0] + m->sumsq_err[0], &bx);
		check_moment_var(rr, what, acc, 1, m->n, m->shift[1], m->nonfinite[1],
						 m->sum[1] + m->sum_err[1], m->sumsq[1] + m->sumsq_err[1], &by);
		if (m->n > 0 && acc->mnonfinite[0] == 0 && acc->mnonfinite[1] == 0)
		{
			long double sx = (long double) m->sum[0] + m->sum_err[0];
			long double sy = (long double) m->sum[1] + m->sum_err[1];
			double		cxy = (double) ((long double) m->sumxy + m->sumxy_err - sx * sy / m->n);
			double		tol = 8 * gamma_n((int64_t) m->n + 4, u) * sqrt(bx * by) + 1e-300;

			if (!(fabsl((long double) cxy - acc->mcxy) <= tol))
				report(rr, "%s: sum((x - mean_x)(y - mean_y)) = %.17g, expected %.17Lg (tolerance %.3g)",
					   what, cxy, acc->mcxy, tol);
		}
	}
}

/* Compare aggregate results of device group g with the reference group. */
static void
compare_group(const Case *c, const GaAggResult *res, int64_t g,
			  const RefAcc *accs, const RowKey *key, RunReport *rr)
{
	char		kb[160];
	int			a;

	for (a = 0; a < c->naggs; a++)
	{
		const GaAggSpec *spec = &c->aggs[a];
		const RefAcc *acc = &accs[a];
		const void *vals = res->values[a];
		GaValueType type = spec->column >= 0 ? c->types[spec->column] : GA_TYPE_NONE;

		switch (spec->op)
		{
			case GA_AGG_COUNT_ROWS:
			case GA_AGG_COUNT:
			case GA_AGG_COUNT_NONFINITE:
				{
					int64_t		got = ((const int64_t *) vals)[g];
					int64_t		want = spec->op == GA_AGG_COUNT_ROWS ? acc->rows :
						spec->op == GA_AGG_COUNT ? acc->nvalid : acc->ninf + acc->nnan;

					if (got != want)
						report(rr, "group %s agg %d (op %d col %d %s): count %lld, expected %lld",
							   key_str(key, c->nkeys, kb), a, spec->op, spec->column,
							   type_name(type), (long long) got, (long long) want);
					break;
				}
			case GA_AGG_SUM_INT:
				{
					GaInt128	r = ((const GaInt128 *) vals)[g];
					__int128	got = (__int128) (((unsigned __int128) (uint64_t) r.hi << 64) | r.lo);
					char		b1[48],
								b2[48];

					if (got != acc->isum)
						report(rr, "group %s agg %d (sum_int col %d %s): %s, expected %s",
							   key_str(key, c->nkeys, kb), a, spec->column, type_name(type),
							   i128_str(got, b1), i128_str(acc->isum, b2));
					break;
				}
			case GA_AGG_SUM_FLOAT32:
			case GA_AGG_SUM_FLOAT64:
				{
					double		got,
								want,
								u;

					if (spec->op == GA_AGG_SUM_FLOAT32)
						got = ((const float *) vals)[g], u = FLT_EPSILON / 2;
					else
						got = ((const double *) vals)[g], u = DBL_EPSILON / 2;
					if (!float_sum_ok(acc, got, u, &want))
						report(rr, "group %s agg %d (sum_float%s col %d %s over %lld values): %.17g, expected %.17g (sum|x| %.6g)",
							   key_str(key, c->nkeys, kb), a,
							   spec->op == GA_AGG_SUM_FLOAT32 ? "32" : "64", spec->column,
							   type_name(type), (long long) acc->nvalid, got, want, acc->fabs);
					break;
				}
			case GA_AGG_MIN:
			case GA_AGG_MAX:
				{
					int			is_min = spec->op == GA_AGG_MIN;

					if (acc->nvalid == 0)
						break;	/* the caller makes it NULL from COUNT */
					if (type_is_int(type))
					{
						int64_t		got = ((const int64_t *) vals)[g];
						int64_t		want = is_min ? acc->imin : acc->imax;

						if (got != want)
							report(rr, "group %s agg %d (%s col %d %s): %lld, expected %lld",
								   key_str(key, c->nkeys, kb), a, is_min ? "min" : "max",
								   spec->column, type_name(type), (long long) got, (long long) want);
					}
					else
					{
						double		got = ((const double *) vals)[g];
						double		want = is_min ? acc->fmin : acc->fmax;

						if (!float_same(got, want))
							report(rr, "group %s agg %d (%s col %d %s): %.17g, expected %.17g",
								   key_str(key, c->nkeys, kb), a, is_min ? "min" : "max",
								   spec->column, type_name(type), got, want);
					}
					break;
				}
			case GA_AGG_MOMENTS:
			case GA_AGG_COMOMENTS:
				compare_moments(c, res, g, a, acc, key_str(key, c->nkeys, kb), rr);
				break;
		}
	}
}

/*
 * A finished aggregation's groups as key tuples (index: the group; a null
 * key's value 0), sorted by rowkey_compare.  The caller frees them.
 */
RowKey *
sorted_result_keys(const GaAggResult *res, int nkeys)
{
	RowKey	   *dev = malloc(sizeof(RowKey) * (res->ngroups > 0 ? res->ngroups : 1));
	int64_t		g;
	int			k;

	for (g = 0; g < res->ngroups; g++)
	{
		memset(&dev[g], 0, sizeof(RowKey));
		for (k = 0; k < nkeys; k++)
		{
			dev[g].n[k] = res->key_isnull[k][g] ? 1 : 0;
			dev[g].v[k] = dev[g].n[k] ? 0 : res->key_values[k][g];
		}
		dev[g].index = g;
	}
	sort_nkeys = nkeys;
	qsort(dev, (size_t) (res->ngroups > 0 ? res->ngroups : 0), sizeof(RowKey), rowkey_cmp);
	return dev;
}

/*
 * Check a finished aggregation's groups against the reference: sort the
 * device's groups by key, then merge them with the sorted reference rows.
 */
void
check_result(const Case *c, const GaAggResult *res, RunReport *rr)
{
	RowKey	   *dev;
	RefAcc	   *accs;
	int64_t		g,
				r,
				dg = 0;
	int			a;
	char		kb[160];

	if (res->nkeys != c->nkeys || res->naggs != c->naggs)
	{
		report(rr, "result has %d keys and %d aggregates, expected %d and %d",
			   res->nkeys, res->naggs, c->nkeys, c->naggs);
		return;
	}
	if (res->ngroups != c->ngroups)
		report(rr, "%lld groups, expected %lld", (long long) res->ngroups,
			   (long long) c->ngroups);
	if (res->ngroups < 0)
		return;

	dev = sorted_result_keys(res, c->nkeys);
	accs = malloc(sizeof(RefAcc) * (c->naggs > 0 ? c->naggs : 1));
	sort_nkeys = c->nkeys;
	for (g = 1; g < res->ngroups; g++)
		if (rowkey_cmp(&dev[g - 1], &dev[g]) == 0)
			report(rr, "group %s appears twice", key_str(&dev[g], c->nkeys, kb));

	/* Walk reference groups (runs of equal keys) and device groups together. */
	r = 0;
	while (r < c->nrows || (c->nkeys == 0 && r == 0))
	{
		int64_t		end = r;
		const RowKey *key = c->nrows > 0 ? &c->sorted[r] : NULL;
		RowKey		empty;
		int			cmp;

		if (key == NULL)
		{
			memset(&empty, 0, sizeof(empty));
			key = &empty;
		}
		while (end < c->nrows && rowkey_cmp(&c->sorted[end], key) == 0)
			end++;

		while (dg < res->ngroups && (cmp = rowkey_cmp(&dev[dg], key)) < 0)
		{
			report(rr, "extra group %s", key_str(&dev[dg], c->nkeys, kb));
			dg++;
		}
		if (dg >= res->ngroups || rowkey_cmp(&dev[dg], key) != 0)
			report(rr, "missing group %s", key_str(key, c->nkeys, kb));
		else
		{
			memset(accs, 0, sizeof(RefAcc) * (c->naggs > 0 ? c->naggs : 1));
			for (a = 0; a < c->naggs; a++)
			{
				int64_t		i;

				for (i = r; i < end; i++)
					ref_add(&accs[a], c, &c->aggs[a], c->sorted[i].index);
			}
			compare_group(c, res, dev[dg].index, accs, key, rr);
			dg++;
		}
		if (end == r)
			break;				/* the one group of an empty plain aggregate */
		r = end;
	}
	for (; dg < res->ngroups; dg++)
		report(rr, "extra group %s", key_str(&dev[dg], c->nkeys, kb));
	free(dev);
	free(accs);
}

/* ------------------------------------------------------------------------
 * Driving a device
 * ------------------------------------------------------------------------
 */
/* The wait callback: counts calls, and asks to stop when told to. */
int
test_wait(void *arg)
{
	WaitState  *w = arg;

	w->calls++;
	if (w->cancel)
	{
		w->cancels++;
		return 1;
	}
	return 0;
}

/* Milliseconds on a monotonic clock. */
double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

/* Fill a request describing the case. */
void
case_request(const Case *c, GaStrategy strategy, GaAggRequest *req)
{
	memset(req, 0, sizeof(*req));
	req->ncolumns = c->ncolumns;
	req->column_types = c->types;
	req->nkeys = c->nkeys;
	req->key_columns = c->key_columns;
	req->naggs = c->naggs;
	req->aggs = c->aggs;
	req->batch_rows = c->batch_rows;
	req->estimated_groups = c->estimated_groups;
	req->strategy = strategy;
}

/* Check that a batch from next_batch is empty and shaped as requested. */
void
check_empty_batch(const Case *c, const GaBatch *b, RunReport *rr)
{
	int			i;
	int64_t		j;

	if (b->nrows != 0 || b->capacity != c->batch_rows || b->ncolumns != c->ncolumns)
	{
		report(rr, "next_batch gave nrows %lld capacity %lld ncolumns %d, expected 0, %lld, %d",
			   (long long) b->nrows, (long long) b->capacity, b->ncolumns,
			   (long long) c->batch_rows, c->ncolumns);
		return;
	}
	for (i = 0; i < c->ncolumns; i++)
	{
		const GaColumn *col = &b->columns[i];

		if (col->type != c->types[i] || col->has_nulls != 0 || col->validity == NULL ||
			(ga_type_width(col->type) > 0 && col->values == NULL))
		{
			report(rr, "next_batch column %d: type %d has_nulls %d validity %p values %p",
				   i, col->type, col->has_nulls, (void *) col->validity, col->values);
			continue;
		}
		for (j = 0; j < c->batch_rows / 8; j++)
			if (col->validity[j] != 0xff)
				break;
		if (j < c->batch_rows / 8 ||
			(c->batch_rows % 8 != 0 &&
			 (uint8_t) (col->validity[j] | (uint8_t) (0xff << (c->batch_rows % 8))) != 0xff))
			report(rr, "next_batch column %d: validity bits not all set", i);
	}
}

/* Copy rows [start, start + n) of the case into a batch. */
static void
fill_batch(const Case *c, GaBatch *b, int64_t start, int64_t n)
{
	int			i;
	int64_t		r;

	for (i = 0; i < c->ncolumns; i++)
	{
		GaColumn   *col = &b->columns[i];
		int			width = ga_type_width(c->types[i]);

		if (width > 0 && n > 0)
			memcpy(col->values, (const char *) c->values[i] + start * width, (size_t) (n * width));
		if (c->has_nulls[i])
			for (r = 0; r < n; r++)
				if (c->isnull[i][start + r])
					ga_column_set_null(col, r);
		if (c->force_has_nulls)
			col->has_nulls = 1;
	}
	b->nrows = n;
}

/* Expected bytes_sent of the CPU device: what a GPU would have shipped. */
static int64_t
expected_bytes_sent(const Case *c)
{
	int64_t		bytes = 0,
				start = 0;
	int			b,
				i;

	for (b = 0; b < c->nbatches; b++)
	{
		int64_t		n = c->batch_sizes[b];

		for (i = 0; i < c->ncolumns; i++)
		{
			int			nulls = c->force_has_nulls;
			int64_t		r;

			for (r = start; r < start + n && !nulls; r++)
				nulls = c->isnull[i][r];
			bytes += n * ga_type_width(c->types[i]) + (nulls ? (n + 7) / 8 : 0);
		}
		start += n;
	}
	return bytes;
}

/* The first GPU's properties, for check_gpu_strategy(). */
static GaGpuInfo gpu_info;

/*
 * Batch b of a run: the aggregation's next batch, which must come empty
 * (check_empty_batch against the case c).  NULL, reported, when it fails
 * or the run has problems.
 */
GaBatch *
run_next_batch(GaAgg *agg, const Case *c, int b, WaitState *ws, RunReport *rr)
{
	GaStatus	st;
	GaBatch    *batch = ga_agg_next_batch(agg, test_wait, ws, &st);

	if (batch == NULL)
	{
		report(rr, "next_batch %d failed: code %d: %s", b + 1, st.code, st.message);
		return NULL;
	}
	check_empty_batch(c, batch, rr);
	return rr->mismatches > 0 ? NULL : batch;
}

/* Submit batch b of a run; 0, reported, when it fails. */
int
run_submit(GaAgg *agg, GaBatch *batch, int b, WaitState *ws, RunReport *rr)
{
	GaStatus	st;

	if (ga_agg_submit(agg, batch, test_wait, ws, &st))
		return 1;
	report(rr, "submit %d failed: code %d: %s", b + 1, st.code, st.message);
	return 0;
}

/* Finish a run's aggregation; NULL, reported, when it fails. */
const GaAggResult *
run_finish(GaAgg *agg, WaitState *ws, RunReport *rr)
{
	GaStatus	st;
	const GaAggResult *res = ga_agg_finish(agg, test_wait, ws, &st);

	if (res == NULL)
		report(rr, "finish failed: code %d: %s", st.code, st.message);
	return res;
}

/* The wait callback of a run must never have answered stop. */
void
run_check_cancels(const WaitState *ws, RunReport *rr)
{
	if (ws->cancels > 0)
		report(rr, "the wait callback answered stop although not told to");
}

/*
 * End a run of one aggregation started at t0: check the wait callback,
 * destroy the aggregation, write the summary; returns the problems found.
 */
int64_t
run_end(GaAgg *agg, const WaitState *ws, RunReport *rr, const char *label, double t0,
		char *summary, size_t summary_len)
{
	run_check_cancels(ws, rr);
	ga_agg_destroy(agg);
	snprintf(summary, summary_len, "%s %s %.0fms", label, rr->mismatches ? "FAIL" : "ok",
			 now_ms() - t0);
	return rr->mismatches;
}

/* Order int64 values ascending (qsort). */
static int
int64_cmp(const void *pa, const void *pb)
{
	int64_t		a = *(const int64_t *) pa;
	int64_t		b = *(const int64_t *) pb;

	return a < b ? -1 : a > b;
}

/*
 * The batches the GPU must count as partitioned when forced to partition
 * (gpu/strategy.cu's rules): a batch with rows runs partitioned exactly
 * when the group table for its group count exceeds the L2 cache
 * (ga_partitioned_applies), that count being the estimate for the first
 * batch and the groups found in the rows before it for later ones; an
 * empty batch counts under the strategy planned for the last batch with
 * rows, or before any under the first one's plan.  No keys: never.
 */
static int64_t
expected_partitioned_batches(const Case *c, const GaAggRequest *req)
{
	int64_t    *firsts;			/* each group's first row, ascending */
	int64_t		ngroups = 0;
	int64_t		seen = 0;		/* groups whose first row is before start */
	int64_t		start = 0;
	int64_t		count = 0;
	int			launched = 0;
	int			last;
	int64_t		r;
	int			b;

	if (c->nkeys == 0)
		return 0;
	firsts = malloc(sizeof(int64_t) * (c->nrows > 0 ? c->nrows : 1));
	for (r = 0; r < c->nrows; r++)
	{
		if (r == 0 || rowkey_compare(&c->sorted[r - 1], &c->sorted[r], c->nkeys) != 0)
			firsts[ngroups++] = c->sorted[r].index;
		else if (c->sorted[r].index < firsts[ngroups - 1])
			firsts[ngroups - 1] = c->sorted[r].index;
	}
	qsort(firsts, (size_t) ngroups, sizeof(int64_t), int64_cmp);

	last = ga_partitioned_applies(&gpu_info, req, c->estimated_groups > 1 ? c->estimated_groups : 1);
	for (b = 0; b < c->nbatches; b++)
	{
		while (seen < ngroups && firsts[seen] < start)
			seen++;
		if (c->batch_sizes[b] > 0)
		{
			int64_t		groups = launched ? seen : c->estimated_groups;

			last = ga_partitioned_applies(&gpu_info, req, groups > 1 ? groups : 1);
			launched = 1;
		}
		count += last;
		start += c->batch_sizes[b];
	}
	free(firsts);
	return count;
}

/*
 * On the GPU, check that a forced strategy ran where it applies and only
 * there, so that every strategy's kernels are exercised rather than
 * silently falling back: global always; partitioned exactly in the batches
 * expected_partitioned_batches() finds; auto (and perfect or shared where
 * they fall back to auto's choice) only where some estimate of the groups
 * makes the table outgrow L2, and global never; perfect when the keys are
 * ranges small enough (not scattered over their types) and no aggregate
 * keeps it off (ga_request_two_phase_only); shared when the groups and
 * their estimate are few and fit a block's shared memory.  Empty batches
 * are counted under the previous batch's strategy, so for perfect and
 * shared only the others must match.
 */
static void
check_gpu_strategy(const Case *c, GaStrategy strategy, const GaAggRequest *req,
				   const GaAggStats *stats, RunReport *rr)
{
	GaStrategy	want = GA_STRATEGY_AUTO;
	int64_t		nonempty = 0;
	int64_t		most = c->ngroups > c->estimated_groups ? c->ngroups : c->estimated_groups;
	int64_t		partitioned = strategy == GA_STRATEGY_PARTITIONED ?
		expected_partitioned_batches(c, req) : 0;
	int64_t		ran_partitioned = stats->batches_by_strategy[GA_STRATEGY_PARTITIONED];
	int64_t		largest = most > c->nrows ? most : c->nrows;
	int			b;

	for (b = 0; b < c->nbatches; b++)
		if (c->batch_sizes[b] > 0)
			nonempty++;
	if (strategy != GA_STRATEGY_PARTITIONED && strategy != GA_STRATEGY_GLOBAL)
	{
		/*
		 * auto (and perfect or shared where they do not apply, which run as
		 * auto) partitions only when some estimate of the groups (at most
		 * the rows) makes the table outgrow L2
		 */
		if (ran_partitioned > 0 &&
			!ga_partitioned_applies(&gpu_info, req, largest > 1 ? largest : 1))
			report(rr, "stats: %s partitioned %lld batches though no group table could "
				   "exceed L2", ga_strategy_name(strategy), (long long) ran_partitioned);
	}
	else if (ran_partitioned != partitioned)
		report(rr, "stats: %lld batches partitioned under %s, expected %lld (the group table "
			   "exceeds L2 for that many)",
			   (long long) ran_partitioned, ga_strategy_name(strategy), (long long) partitioned);
	if (strategy == GA_STRATEGY_GLOBAL)
		want = GA_STRATEGY_GLOBAL;
	else if (strategy == GA_STRATEGY_PERFECT && c->nkeys > 0 && c->nkeys <= 4 &&
			 c->range_entries > 0 && c->range_entries <= (INT64_C(1) << 20) &&
			 !ga_request_two_phase_only(req))
		want = GA_STRATEGY_PERFECT;
	else if (strategy == GA_STRATEGY_SHARED && c->nkeys > 0 && most <= 100 &&
			 most <= ga_shared_strategy_max_groups(&gpu_info, req))
		want = GA_STRATEGY_SHARED;
	if (want != GA_STRATEGY_AUTO && stats->batches_by_strategy[want] < nonempty)
		report(rr, "stats: forced %s ran %lld of %lld batches",
			   ga_strategy_name(want), (long long) stats->batches_by_strategy[want],
			   (long long) nonempty);
}

/*
 * Run a case on one device under one strategy (on one aggregation, or two
 * fed alternately) and compare with the reference.  Returns the number of
 * problems.
 */
static int64_t
run_case(const Case *c, int case_no, GaDevice *dev, GaStrategy strategy,
		 const char *label, int verbose, char *summary, size_t summary_len)
{
	RunReport	rr = {case_no, label, 0, 0, NULL};
	WaitState	ws = {0, 0, 0};
	GaAggRequest req;
	GaAgg	   *aggs[2] = {NULL, NULL};
	int			nagg = c->interleave ? 2 : 1;
	GaStatus	st;
	int64_t		start = 0;
	int64_t		growths = 0;
	int			b,
				j;
	double		t0 = now_ms();
	GaAggStats	stats;
	const GaAggResult *res;

	case_request(c, strategy, &req);
	for (j = 0; j < nagg; j++)
	{
		aggs[j] = ga_agg_create(dev, &req, &st);
		if (aggs[j] == NULL)
		{
			report(&rr, "create failed: code %d: %s", st.code, st.message);
			goto done;
		}
	}
	for (b = 0; b < c->nbatches; b++)
	{
		int64_t		n = c->batch_sizes[b];

		for (j = 0; j < nagg; j++)
		{
			GaBatch    *batch = run_next_batch(aggs[j], c, b, &ws, &rr);

			if (batch == NULL)
				goto done;
			fill_batch(c, batch, start, n);
			if (!run_submit(aggs[j], batch, b, &ws, &rr))
				goto done;
		}
		start += n;
	}
	for (j = 0; j < nagg; j++)
	{
		int64_t		by = 0;
		int			s;

		res = run_finish(aggs[j], &ws, &rr);
		if (res == NULL)
			goto done;
		check_result(c, res, &rr);

		ga_agg_get_stats(aggs[j], &stats);
		growths += stats.table_growths;
		for (s = 0; s < GA_NUM_STRATEGIES; s++)
			by += stats.batches_by_strategy[s];
		if (stats.batches != c->nbatches || stats.input_rows != c->nrows ||
			stats.groups != res->ngroups)
			report(&rr, "stats: batches %lld rows %lld groups %lld, expected %d, %lld, %lld",
				   (long long) stats.batches, (long long) stats.input_rows,
				   (long long) stats.groups, c->nbatches, (long long) c->nrows,
				   (long long) res->ngroups);
		if (by != stats.batches)
			report(&rr, "stats: batches_by_strategy add up to %lld, not %lld",
				   (long long) by, (long long) stats.batches);
		if (stats.device_ms < 0 || stats.transfer_ms < 0 || stats.bytes_sent < 0 ||
			stats.table_growths < 0)
			report(&rr, "stats: negative figures");
		if (ga_device_kind(dev) == GA_DEVICE_CPU)
		{
			int64_t		want = expected_bytes_sent(c);

			if (stats.bytes_sent != want)
				report(&rr, "stats: bytes_sent %lld, expected %lld",
					   (long long) stats.bytes_sent, (long long) want);
			if (stats.batches_by_strategy[GA_STRATEGY_CPU] != stats.batches)
				report(&rr, "stats: CPU batches not counted as the cpu strategy");
			if (c->ngroups >= 1000 && c->estimated_groups <= c->ngroups / 100 &&
				stats.table_growths == 0)
				report(&rr, "stats: %lld groups from an estimate of %lld but no table growth",
					   (long long) c->ngroups, (long long) c->estimated_groups);
		}
		if (ga_device_kind(dev) == GA_DEVICE_GPU)
			check_gpu_strategy(c, strategy, &req, &stats, &rr);
		if (stats.retries < 0 || stats.device_estimated_groups < 0)
			report(&rr, "stats: negative figures");
		if (verbose)
			print_stats("case", case_no, label, &stats, 0);
	}

done:
	run_check_cancels(&ws, &rr);
	for (j = 0; j < nagg; j++)
		ga_agg_destroy(aggs[j]);
	snprintf(summary, summary_len, "%s %s %.0fms g+%lld", label,
			 rr.mismatches ? "FAIL" : "ok", now_ms() - t0, (long long) growths);
	return rr.mismatches;
}

/* ------------------------------------------------------------------------
 * API behaviour beyond results: cancel, injected failure, bad requests
 * ------------------------------------------------------------------------
 */

/*
 * Cancel: a wait callback that answers "stop".  Any call during which it
 * answered must fail with GA_ERR_CANCELLED; the CPU device must ask at
 * least once for a batch of 200K rows.
 */
static int64_t
api_cancel(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, NULL};
	WaitState	ws = {0, 1, 0};
	GaValueType types[2] = {GA_TYPE_INT32, GA_TYPE_INT64};
	int			keycol = 0;
	GaAggSpec	spec[2] = {{GA_AGG_COUNT_ROWS, -1, -1}, {GA_AGG_SUM_INT, 1, -1}};
	GaAggRequest req;
	GaAgg	   *agg;
	GaStatus	st;
	int			b;
	int64_t		r,
				before;
	int			cancelled = 0;

	memset(&req, 0, sizeof(req));
	req.ncolumns = 2;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = &keycol;
	req.naggs = 2;
	req.aggs = spec;
	req.batch_rows = 200000;
	req.estimated_groups = 10;
	req.strategy = strategy;
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		return rr.mismatches;
	}
	for (b = 0; b < 3 && !cancelled; b++)
	{
		GaBatch    *batch;

		before = ws.cancels;
		batch = ga_agg_next_batch(agg, test_wait, &ws, &st);
		if (batch == NULL)
		{
			if (st.code != GA_ERR_CANCELLED)
				report(&rr, "next_batch failed: code %d: %s", st.code, st.message);
			cancelled = 1;
			break;
		}
		if (ws.cancels != before)
			report(&rr, "next_batch succeeded although the callback said stop");
		for (r = 0; r < batch->capacity; r++)
		{
			((int32_t *) batch->columns[0].values)[r] = (int32_t) (r % 1000);
			((int64_t *) batch->columns[1].values)[r] = r;
		}
		batch->nrows = batch->capacity;
		before = ws.cancels;
		if (!ga_agg_submit(agg, batch, test_wait, &ws, &st))
		{
			if (st.code != GA_ERR_CANCELLED)
				report(&rr, "submit failed: code %d: %s", st.code, st.message);
			cancelled = 1;
		}
		else if (ws.cancels != before)
			report(&rr, "submit succeeded although the callback said stop");
	}
	if (!cancelled)
	{
		before = ws.cancels;
		if (ga_agg_finish(agg, test_wait, &ws, &st) == NULL)
		{
			if (st.code != GA_ERR_CANCELLED)
				report(&rr, "finish failed: code %d: %s", st.code, st.message);
			cancelled = 1;
		}
		else if (ws.cancels != before)
			report(&rr, "finish succeeded although the callback said stop");
	}
	if (ga_device_kind(dev) == GA_DEVICE_CPU && !cancelled)
		report(&rr, "the CPU device never asked the wait callback during 600K rows");
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * fail_at_batch: the second submit must fail with a status and a message
 * (device.c injects it; any code but GA_OK), and the aggregation must still
 * be destroyable.
 */
static int64_t
api_fail_at_batch(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, NULL};
	WaitState	ws = {0, 0, 0};
	GaValueType types[1] = {GA_TYPE_INT16};
	int			keycol = 0;
	GaAggSpec	spec[1] = {{GA_AGG_COUNT_ROWS, -1, -1}};
	GaAggRequest req;
	GaAgg	   *agg;
	GaStatus	st;
	int			b;

	memset(&req, 0, sizeof(req));
	req.ncolumns = 1;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = &keycol;
	req.naggs = 1;
	req.aggs = spec;
	req.batch_rows = 100;
	req.estimated_groups = 10;
	req.strategy = strategy;
	req.fail_at_batch = 2;
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		return rr.mismatches;
	}
	for (b = 1; b <= 2; b++)
	{
		GaBatch    *batch = ga_agg_next_batch(agg, test_wait, &ws, &st);
		int			ok;

		if (batch == NULL)
		{
			report(&rr, "next_batch %d failed: code %d: %s", b, st.code, st.message);
			break;
		}
		batch->nrows = 50;
		memset(batch->columns[0].values, 0, 100);
		ok = ga_agg_submit(agg, batch, test_wait, &ws, &st);
		if (b == 1 && !ok)
			report(&rr, "submit 1 failed: code %d: %s", st.code, st.message);
		if (b == 2 && (ok || st.code == GA_OK || st.message[0] == '\0'))
			report(&rr, "submit 2 should fail (injected), got ok=%d code %d", ok, st.code);
	}
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/* Malformed requests must be refused with GA_ERR_INVALID, not crash. */
static int64_t
api_invalid(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, NULL};
	GaValueType types[3] = {GA_TYPE_FLOAT64, GA_TYPE_INT32, GA_TYPE_FLOAT32};
	int			float_key = 0,
				int_key = 1;
	GaAggSpec	bad_aggs[][1] = {
		{{GA_AGG_SUM_INT, 0, -1}},	/* integer sum of a float */
		{{GA_AGG_SUM_FLOAT64, 1, -1}},	/* float sum of an integer */
		{{GA_AGG_SUM_FLOAT32, 0, -1}},	/* float32 sum of a float64 */
		{{GA_AGG_COUNT_NONFINITE, 1, -1}},	/* infinities of an integer */
		{{GA_AGG_MIN, 7, -1}},		/* no such column */
		{{(GaAggOp) 99, 1, -1}},	/* no such operation */
	};
	GaAggRequest req;
	GaStatus	st;
	GaAgg	   *agg;
	size_t		i;

	memset(&req, 0, sizeof(req));
	req.ncolumns = 3;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = &float_key;
	req.naggs = 0;
	req.batch_rows = 10;
	agg = ga_agg_create(dev, &req, &st);
	if (agg != NULL || st.code != GA_ERR_INVALID)
		report(&rr, "a float key column was accepted (code %d)", st.code);
	ga_agg_destroy(agg);

	req.key_columns = &int_key;
	req.naggs = 1;
	for (i = 0; i < sizeof(bad_aggs) / sizeof(bad_aggs[0]); i++)
	{
		req.aggs = bad_aggs[i];
		agg = ga_agg_create(dev, &req, &st);
		if (agg != NULL || st.code != GA_ERR_INVALID)
			report(&rr, "bad aggregate %zu was accepted (code %d)", i, st.code);
		ga_agg_destroy(agg);
	}

#ifdef GA_MAX_AGG_OPS
	{
		GaAggSpec	many[GA_MAX_AGG_OPS + 1];

		for (i = 0; i < GA_MAX_AGG_OPS + 1; i++)
			many[i].op = GA_AGG_COUNT_ROWS, many[i].column = -1;
		req.aggs = many;
		req.naggs = GA_MAX_AGG_OPS + 1;
		agg = ga_agg_create(dev, &req, &st);
		if (agg != NULL || st.code != GA_ERR_INVALID)
			report(&rr, "more than GA_MAX_AGG_OPS aggregates were accepted (code %d)", st.code);
		ga_agg_destroy(agg);
	}
#endif

	req.naggs = 0;
	req.batch_rows = 0;
	agg = ga_agg_create(dev, &req, &st);
	if (agg != NULL || st.code != GA_ERR_INVALID)
		report(&rr, "a batch size of 0 was accepted (code %d)", st.code);
	ga_agg_destroy(agg);
	return rr.mismatches;
}

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

#define NUM_FIXED_CASES 41

/* The fixed edge cases: each index is one scenario the random ones may miss. */
static void
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
static void
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

/* ------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------
 */
typedef struct DeviceRun
{
	GaDevice   *device;
	GaStrategy	strategy;
	char		label[32];
} DeviceRun;

/* The case being run, for the watchdog's message. */
static volatile sig_atomic_t current_case = -1;
static const char *volatile current_suite = "case";

/* Name the case running now (join.c uses it too). */
void
conformance_set_current(const char *suite, int case_no)
{
	current_suite = suite;
	current_case = case_no;
}

/*
 * SIGALRM handler: a case ran past --timeout, so the device hangs (or is far
 * too slow); say so and fail rather than wait forever.
 */
static void
watchdog(int sig)
{
	char		msg[96];
	int			n;

	(void) sig;
	n = snprintf(msg, sizeof(msg), "%s %d TIMED OUT: the device hangs or is far too slow\n",
				 current_suite, (int) current_case);
	if (n > 0 && write(STDOUT_FILENO, msg, (size_t) n) < 0)
		_exit(3);
	_exit(3);
}

/* Print how to call the program. */
static void
usage(const char *prog)
{
	fprintf(stderr,
			"usage: %s [--device cpu|gpu|all] [--suite agg|join|aggjoin|derived|all]\n"
			"          [--cases N] [--join-cases N] [--aggjoin-cases N] [--aggjoin-first I]\n"
			"          [--derived-cases N] [--seed S] [--only I]\n"
			"          [--max-rows R] [--timeout SECONDS] [--verbose]\n"
			"  --device   devices to test (default all: the CPU, and the GPU when found;\n"
			"             gpu fails when there is none)\n"
			"  --suite    aggregation, hash join, aggjoin, derived columns\n"
			"             or all (default all)\n"
			"  --cases    random aggregation cases after the %d fixed ones (default 300)\n"
			"  --join-cases random join cases after the fixed ones (default 40)\n"
			"  --aggjoin-cases random aggjoin cases after the fixed ones\n"
			"             (default 40)\n"
			"  --aggjoin-first skip the aggjoin cases before case I\n"
			"             (the fixed chains of joins start at 17; default 0)\n"
			"  --derived-cases random derived column cases after the fixed ones\n"
			"             (default 60; the aggjoin ones always run)\n"
			"  --seed     seed of the random cases (default 1)\n"
			"  --only     run aggregation case I only, no join (fixed cases are 0..%d)\n"
			"  --max-rows cap on the rows of a random case, and on the joined rows of\n"
			"             an aggjoin one (default 1500000)\n"
			"  --timeout  fail when one case (all devices) takes longer (default 300)\n",
			prog, NUM_FIXED_CASES, NUM_FIXED_CASES - 1);
}

/* Parse options, open the devices, run every case on every device run. */
int
main(int argc, char **argv)
{
	const char *device_opt = "all";
	const char *suite_opt = "all";
	int			ncases = 300;
	int			njoin_cases = 40;
	int			naggjoin_cases = 40;
	int			nderived_cases = 60;
	uint64_t	seed = 1;
	int			only = -1;
	int			aggjoin_first = 0;
	int64_t		max_rows = 1500000;
	int			verbose = 0;
	int			timeout = 300;
	DeviceRun	runs[8];
	int			nruns = 0;
	GaDevice   *run_devices[8];	/* runs as the aggjoin and derived suites take them */
	GaStrategy	run_strategies[8];
	const char *run_labels[8];
	int64_t		failures = 0,
				checks = 0;
	GaDevice   *cpu = NULL,
			   *gpu = NULL;
	GaStatus	st;
	int			i,
				j;
	double		t0 = now_ms();

	for (i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
			device_opt = argv[++i];
		else if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc)
			ncases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--suite") == 0 && i + 1 < argc)
			suite_opt = argv[++i];
		else if (strcmp(argv[i], "--join-cases") == 0 && i + 1 < argc)
			njoin_cases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--aggjoin-cases") == 0 && i + 1 < argc)
			naggjoin_cases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--aggjoin-first") == 0 && i + 1 < argc)
			aggjoin_first = atoi(argv[++i]);
		else if (strcmp(argv[i], "--derived-cases") == 0 && i + 1 < argc)
			nderived_cases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = atoi(argv[++i]);
		else if (strcmp(argv[i], "--max-rows") == 0 && i + 1 < argc)
			max_rows = strtoll(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout = atoi(argv[++i]);
		else if (strcmp(argv[i], "--verbose") == 0)
			verbose = 1;
		else
		{
			usage(argv[0]);
			return 2;
		}
	}
	if ((strcmp(device_opt, "cpu") != 0 && strcmp(device_opt, "gpu") != 0 &&
		 strcmp(device_opt, "all") != 0) ||
		(strcmp(suite_opt, "agg") != 0 && strcmp(suite_opt, "join") != 0 &&
		 strcmp(suite_opt, "aggjoin") != 0 && strcmp(suite_opt, "derived") != 0 &&
		 strcmp(suite_opt, "all") != 0))
	{
		usage(argv[0]);
		return 2;
	}

	if (strcmp(device_opt, "gpu") != 0)
	{
		cpu = ga_device_open(GA_DEVICE_CPU, 0, &st);
		if (cpu == NULL)
		{
			printf("cannot open the CPU device: %s\n", st.message);
			return 1;
		}
		runs[nruns].device = cpu;
		runs[nruns].strategy = GA_STRATEGY_AUTO;
		strcpy(runs[nruns].label, "cpu");
		nruns++;
	}
	if (strcmp(device_opt, "cpu") != 0)
	{
		GaGpuInfo	info[GA_MAX_GPUS];
		int			n = ga_gpu_compiled() ? ga_gpu_discover(info, GA_MAX_GPUS, &st) : 0;

		if (!ga_gpu_compiled())
			snprintf(st.message, sizeof(st.message), "this build has no GPU device");
		if (n > 0)
			gpu = ga_device_open(GA_DEVICE_GPU, 0, &st);
		if (gpu != NULL)
		{
			static const GaStrategy strategies[] = {GA_STRATEGY_AUTO, GA_STRATEGY_PERFECT,
				GA_STRATEGY_SHARED, GA_STRATEGY_GLOBAL, GA_STRATEGY_PARTITIONED};
			const int	nstrategies = (int) (sizeof(strategies) / sizeof(strategies[0]));

			gpu_info = info[0];
			printf("GPU 0: %s, compute capability %d.%d, %d SMs, context %.0f ms\n",
				   info[0].name, info[0].cc_major, info[0].cc_minor,
				   info[0].multiprocessors, ga_device_setup_ms(gpu));
			for (j = 0; j < nstrategies; j++)
			{
				runs[nruns].device = gpu;
				runs[nruns].strategy = strategies[j];
				snprintf(runs[nruns].label, sizeof(runs[nruns].label), "gpu/%s",
						 ga_strategy_name(strategies[j]));
				nruns++;
			}
		}
		else if (strcmp(device_opt, "gpu") == 0)
		{
			printf("no GPU device: %s\n", st.message);
			return 1;
		}
		else
			printf("no GPU device (%s); testing the CPU device only\n", st.message);
	}

	signal(SIGALRM, watchdog);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* API behaviour, once per device run. */
	if (only < 0 && (strcmp(suite_opt, "agg") == 0 || strcmp(suite_opt, "all") == 0))
	{
		for (j = 0; j < nruns; j++)
		{
			char		label[64];
			int64_t		f;

			snprintf(label, sizeof(label), "%s", runs[j].label);
			alarm((unsigned) timeout);
			f = api_cancel(runs[j].device, runs[j].strategy, label);
			f += api_fail_at_batch(runs[j].device, runs[j].strategy, label);
			if (runs[j].strategy == GA_STRATEGY_AUTO)
				f += api_invalid(runs[j].device, label);
			printf("api  %-10s cancel, fail_at_batch, invalid requests: %s\n",
				   runs[j].label, f ? "FAIL" : "ok");
			failures += f;
			checks++;
		}
	}

	for (i = 0; i < NUM_FIXED_CASES + ncases &&
		 (strcmp(suite_opt, "agg") == 0 || strcmp(suite_opt, "all") == 0); i++)
	{
		CaseSpec	spec;
		Case		c;
		Rng			rng;
		char		line[1024];
		size_t		len;

		if (only >= 0 && i != only)
			continue;
		conformance_set_current("case", i);
		alarm((unsigned) timeout);
		rng_seed(&rng, seed * UINT64_C(0x100000001b3) + (uint64_t) i);
		if (i < NUM_FIXED_CASES)
			fixed_spec(i, &spec);
		else
			random_spec(&rng, &spec, max_rows);
		build_case(&c, &spec, &rng);
		sort_reference(&c);

		len = (size_t) snprintf(line, sizeof(line), "case %3d groups=%lld %s",
								i, (long long) c.ngroups, c.desc);
		for (j = 0; j < nruns; j++)
		{
			char		summary[160];

			failures += run_case(&c, i, runs[j].device, runs[j].strategy,
								 runs[j].label, verbose, summary, sizeof(summary));
			checks++;
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s", summary);
		}
		printf("%s\n", line);
		fflush(stdout);
		free_case(&c);
	}

	/* The hash join: the CPU device and the GPU (one strategy) side by side. */
	if (only < 0 && (strcmp(suite_opt, "join") == 0 || strcmp(suite_opt, "all") == 0))
		failures += conformance_join(cpu, gpu, seed, njoin_cases, timeout, verbose, &checks);

	/* The device runs as the aggjoin and derived suites take them. */
	for (j = 0; j < nruns; j++)
	{
		run_devices[j] = runs[j].device;
		run_strategies[j] = runs[j].strategy;
		run_labels[j] = runs[j].label;
	}

	/* The aggjoin: every device run, as the aggregation's cases. */
	if (only < 0 && (strcmp(suite_opt, "aggjoin") == 0 || strcmp(suite_opt, "all") == 0))
		failures += conformance_aggjoin(run_devices, run_strategies, run_labels, nruns, seed,
										aggjoin_first, naggjoin_cases, max_rows, timeout,
										verbose, &checks);

	/* Derived columns: every device run, plain and aggjoin. */
	if (only < 0 && (strcmp(suite_opt, "derived") == 0 || strcmp(suite_opt, "all") == 0))
		failures += conformance_derived(run_devices, run_strategies, run_labels, nruns, seed,
										nderived_cases, max_rows, timeout, verbose, &checks);

	alarm(0);
	printf("conformance: %lld checks, %lld problems, seed %llu, %.1f s: %s\n",
		   (long long) checks, (long long) failures, (unsigned long long) seed,
		   (now_ms() - t0) / 1000.0, failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
