/*-------------------------------------------------------------------------
 *
 * agg_case.c
 *	  The aggregation suite's cases: a case's columns, rows, aggregates and
 *	  batches generated from its spec (agg_specs.c), and the value and
 *	  batch generators that the aggjoin and derived column suites reuse.
 *
 * Values of null rows are filled with garbage (NaN, extremes) that a device
 * must ignore.
 *
 *-------------------------------------------------------------------------
 */
#include "agg.h"
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fill an integer value of the column's mode into element i. */
void
gen_int_value(Rng *rng, void *values, GaValueType type, ValMode mode, int64_t i)
{
	int64_t		lo,
				hi,
				v;

	ga_int_type_range(type, &lo, &hi);
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
 * aggregation cases (this suite and aggjoin.c) split their input with it.
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
void
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
		ga_int_type_range(ks->type, &lo, &hi);
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
