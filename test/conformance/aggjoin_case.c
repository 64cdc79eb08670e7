/*-------------------------------------------------------------------------
 *
 * aggjoin_case.c
 *	  The aggjoin suite's cases generated from their specs (aggjoin.h):
 *	  the key tables, every side's columns and rows (build keys with
 *	  duplicates, skew and nulls, listed for the device in a random order),
 *	  the join's and the steps' filters over the placed columns, the
 *	  batches, the aggregates and the case line.  aggjoin_ref.c forms the
 *	  reference's rows from them.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most COMOMENTS per case (each takes two of the GPU's 64 aggregate slots). */
#define AJ_MAX_COMOMENTS 6

/* Key values past a key column's domain: keys no build side has. */
#define AJ_MISSES 64

static const char *const aj_dist_names[] = {"unique", "dups", "skew"};
static const char *const aj_type_names[] = {"inner", "left", "anti", "right", "full", "semi"};

/* Rows of side t of a case: the probe rows (0) or step t's payload rows. */
static int64_t
aj_side_rows(const AjCase *jc, int side)
{
	return side == 0 ? jc->nprobe : jc->builds[side - 1].nbuild;
}

/* The first key column of step s (0-based): its only one, or its first of several. */
static int
aj_first_key(const AjCase *jc, int s)
{
	return jc->steps[s].nkeys > 1 ? jc->steps[s].key_columns[0] : jc->steps[s].key_column;
}

/* Fill one value of a non-key column, or mark it null (keeping garbage). */
static void
aj_gen_value(Rng *rng, const AjColSpec *cs, void *values, uint8_t *isnull, int64_t i)
{
	if (cs->group_key)
	{
		int64_t		v = rng_range(rng, 0, cs->domain - 1) - cs->domain / 2;

		if (cs->type == GA_TYPE_INT64 && cs->domain > 2)
			v = (int64_t) ((uint64_t) v * UINT64_C(0x9e3779b97f4a7c1));	/* spread over int64 */
		store_int(values, cs->type, i, v);
	}
	else if (type_is_int(cs->type))
		gen_int_value(rng, values, cs->type, cs->mode, i);
	else if (cs->type == GA_TYPE_FLOAT32)
		((float *) values)[i] = (float) gen_float_value(rng, cs->type, cs->mode);
	else if (cs->type == GA_TYPE_FLOAT64)
		((double *) values)[i] = gen_float_value(rng, cs->type, cs->mode);
	if (cs->null_rate > 0 && rng_chance(rng, cs->null_rate))
		isnull[i] = 1;
}

/*
 * A key column's keys: a table of distinct-ish values (the first `domain`
 * for the build sides keyed on it, AJ_MISSES more for misses), sequential
 * or scattered over int64 with its extremes.
 */
static int64_t *
aj_key_table(const AjSpec *s, Rng *rng, int64_t domain)
{
	int64_t		n = domain + AJ_MISSES;
	int64_t    *table = malloc(sizeof(int64_t) * n);
	int64_t		start = rng_range(rng, -(INT64_C(1) << 40), INT64_C(1) << 40);
	int64_t		i;

	for (i = 0; i < n; i++)
		table[i] = s->scattered ? (int64_t) rng_next(rng) : start + i;
	if (s->scattered && n > 8)
	{
		table[1] = INT64_MIN;
		table[2] = INT64_MAX;
		table[3] = 0;
		table[4] = -1;
	}
	return table;
}

/*
 * List a build side's rows whose key is not null (key_null[b]) in a
 * random order (the device keeps it per key).
 */
static void
aj_list_keyed_rows(AjBuild *build, Rng *rng, const uint8_t *key_null)
{
	int64_t		b,
				i;

	build->rows = malloc(sizeof(uint32_t) * (build->nbuild > 0 ? build->nbuild : 1));
	build->nkeyed = 0;
	for (b = 0; b < build->nbuild; b++)
		if (!key_null[b])
			build->rows[build->nkeyed++] = (uint32_t) b;
	for (i = build->nkeyed - 1; i > 0; i--)
	{
		int64_t		k = rng_range(rng, 0, i);
		uint32_t	t = build->rows[i];

		build->rows[i] = build->rows[k];
		build->rows[k] = t;
	}
}

/*
 * Draw step i's build side: its rows' keys (with nulls) from the key
 * table of its key column, the keyed rows in a random order (the device
 * keeps it per key), and the sorted entries of the reference.
 */
static void
aj_gen_build(AjBuild *build, const AjStepSpec *ss, Rng *rng, const int64_t *key_table,
			 int64_t domain, int64_t *key_of, uint8_t *key_null)
{
	int64_t		n = build->nbuild;
	int64_t		b,
				i;

	for (b = 0; b < n; b++)
	{
		int64_t		j;

		key_null[b] = ss->build_key_null > 0 && rng_chance(rng, ss->build_key_null);
		if (ss->build_dist == AJ_UNIQUE)
			j = b % domain;
		else if (ss->build_dist == AJ_SKEW && rng_chance(rng, (double) ss->skew_rows / (double) n))
			j = 0;
		else
			j = rng_range(rng, 0, domain - 1);
		key_of[b] = key_table[j];
	}

	build->keys = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
	build->entries = malloc(sizeof(KeyEntry) * (n > 0 ? n : 1));
	aj_list_keyed_rows(build, rng, key_null);
	for (i = 0; i < build->nkeyed; i++)
	{
		build->keys[i] = key_of[build->rows[i]];
		build->entries[i].key = build->keys[i];
		build->entries[i].row = build->rows[i];
	}
	qsort(build->entries, (size_t) build->nkeyed, sizeof(KeyEntry), key_entry_cmp);
}

/*
 * Draw the build side of step i (0-based), of several keys, into its
 * build key columns (allocated here): per row, each component from the
 * key table of its key column (AJ_UNIQUE: the row's digits in base
 * domain; AJ_SKEW: every component the hot key for skew_rows rows), null
 * at build_key_null; then the rows with no null component, listed for the
 * device in a random order, and their keys sorted for the reference.
 * key_of and key_null get the first component (for a column holding the
 * step's build key).
 */
static void
aj_gen_build_tuples(AjCase *jc, int i, const AjStepSpec *ss, Rng *rng,
					int64_t *const *key_table, const int64_t *domain, int64_t *key_of,
					uint8_t *key_null)
{
	const GaAggJoinStep *step = &jc->steps[i];
	AjBuild    *build = &jc->builds[i];
	int64_t		n = build->nbuild;
	uint8_t    *any_null = calloc(n > 0 ? n : 1, 1);
	int64_t		b,
				r;
	int			j;

	for (j = 0; j < step->nkeys; j++)
	{
		int			bc = step->build_key_columns[j];

		jc->values[bc] = calloc(n > 0 ? n : 1, sizeof(int64_t));
		jc->isnull[bc] = calloc(n > 0 ? n : 1, 1);
	}
	for (b = 0; b < n; b++)
	{
		int			hot = ss->build_dist == AJ_SKEW &&
			rng_chance(rng, (double) ss->skew_rows / (double) n);
		int64_t		digits = b;

		for (j = 0; j < step->nkeys; j++)
		{
			int			bc = step->build_key_columns[j];
			int			t = jc->table_of[bc];
			int64_t		x;

			if (ss->build_dist == AJ_UNIQUE)
			{
				x = digits % domain[t];
				digits /= domain[t];
			}
			else
				x = hot ? 0 : rng_range(rng, 0, domain[t] - 1);
			((int64_t *) jc->values[bc])[b] = key_table[t][x];
			if (ss->build_key_null > 0 && rng_chance(rng, ss->build_key_null))
				jc->isnull[bc][b] = any_null[b] = 1;
		}
		key_of[b] = ((int64_t *) jc->values[step->build_key_columns[0]])[b];
		key_null[b] = jc->isnull[step->build_key_columns[0]][b];
	}

	aj_list_keyed_rows(build, rng, any_null);
	build->tuples = calloc(build->nkeyed > 0 ? build->nkeyed : 1, sizeof(AjTuple));
	for (r = 0; r < build->nkeyed; r++)
	{
		build->tuples[r].row = build->rows[r];
		for (j = 0; j < step->nkeys; j++)
			build->tuples[r].k[j] =
				((int64_t *) jc->values[step->build_key_columns[j]])[build->rows[r]];
	}
	qsort(build->tuples, (size_t) build->nkeyed, sizeof(AjTuple), aj_tuple_cmp);
	free(any_null);
}

/*
 * Draw the rows of a step's key column: null (carrying a key that does
 * match: it must not), a miss, the hot key or a key of the domain.
 */
static void
aj_gen_keys(const AjSpec *s, Rng *rng, const int64_t *key_table, int64_t domain,
			int64_t *keys, uint8_t *nulls, int64_t n)
{
	int64_t		r;

	for (r = 0; r < n; r++)
	{
		if (s->probe_key_null > 0 && rng_chance(rng, s->probe_key_null))
		{
			nulls[r] = 1;
			keys[r] = key_table[0];
		}
		else if (rng_chance(rng, s->probe_miss))
			keys[r] = key_table[domain + rng_range(rng, 0, AJ_MISSES - 1)];
		else if (rng_chance(rng, s->probe_hot))
			keys[r] = key_table[0];
		else
			keys[r] = key_table[rng_range(rng, 0, domain - 1)];
	}
}

/* Choose the aggregates: every valid one, or a random subset. */
static void
aj_add_aggs(AjCase *jc, const AjSpec *s, int ncols, Rng *rng, const int *col_of)
{
	Case	   *c = &jc->joined;
	double		p = s->all_aggs ? 1.0 : rng_pick(rng, (const double[]) {0.3, 0.6, 0.9}, 3);
	int			ncomoments = 0;
	int			first,
				i,
				k;

	if (s->all_aggs || rng_chance(rng, 0.7))
		add_agg(c, GA_AGG_COUNT_ROWS, -1);
	/* From a random column on, so that MAX_AGGS starves no side for good. */
	first = ncols > 0 ? (int) rng_range(rng, 0, ncols - 1) : 0;
	for (k = 0; k < ncols; k++)
	{
		i = (first + k) % ncols;
		add_column_aggs(c, rng, col_of[i],
						s->cols[i].group_key || mode_summable(s->cols[i].mode),
						s->all_aggs && !s->cols[i].group_key,
						s->cols[i].group_key ? 0.3 : p);
	}
	if (rng_chance(rng, 0.3))
		add_agg(c, GA_AGG_COUNT, aj_first_key(jc, (int) rng_range(rng, 0, jc->nsteps - 1)));
	for (i = 0; i < ncols; i++)
		for (k = 0; k < ncols; k++)
		{
			int			x = col_of[i],
						y = col_of[k];

			if (type_is_float(c->types[x]) && type_is_float(c->types[y]) &&
				mode_summable(s->cols[i].mode) && mode_summable(s->cols[k].mode) &&
				ncomoments < AJ_MAX_COMOMENTS && (s->all_aggs || rng_chance(rng, p / 2)))
			{
				add_agg2(c, GA_AGG_COMOMENTS, x, y);
				ncomoments++;
			}
		}
	if (c->naggs == 0)
		add_agg(c, GA_AGG_COUNT_ROWS, -1);
}

/* The key column of step s (1-based) that AJ_KEY_SHARED component j takes. */
static int
aj_shared_key(const AjCase *jc, int s, int j)
{
	const GaAggJoinStep *step = &jc->steps[s - 1];

	return step->nkeys > 1 ? step->build_key_columns[j % step->nkeys] : step->key_column;
}

/* The columns a step's keys add: new key columns, and build key columns. */
static int
aj_step_new_columns(const AjStepSpec *ss)
{
	int			n = 0,
				j;

	if (ss->nkeys <= 1)
		return ss->key_from != AJ_KEY_SHARED;
	for (j = 0; j < ss->nkeys; j++)
		n += 1 + (ss->comp_from[j] != AJ_KEY_SHARED);
	return n;
}

/*
 * Place a key column of a step (from, side as in its spec; j: its
 * component): an earlier step's for AJ_KEY_SHARED, else a new int64 column
 * from perm, on the probe side or an earlier build side, with a key table
 * of its own.  Returns the column.
 */
static int
aj_place_key(AjCase *jc, AjKeyFrom from, int side, int j, const int *perm, int *next)
{
	int			col;

	if (from == AJ_KEY_SHARED)
		return aj_shared_key(jc, side, j);
	col = perm[(*next)++];
	jc->joined.types[col] = GA_TYPE_INT64;
	jc->from_build[col] = (uint8_t) (from == AJ_KEY_BUILD ? side : 0);
	jc->probe_key[col] = from == AJ_KEY_PROBE;
	jc->table_of[col] = col;
	return col;
}

/*
 * Place the columns: the steps' key columns (new ones for AJ_KEY_PROBE and
 * AJ_KEY_BUILD, an earlier step's for AJ_KEY_SHARED; a step of several
 * keys also a new build key column per component, its key_column -1,
 * which the device ignores) and the other columns, at shuffled positions.
 * col_of[k] is where spec column k went; *ncols may shrink so that every
 * column fits.
 */
static void
aj_place_columns(AjCase *jc, const AjSpec *s, Rng *rng, int *col_of, int *ncols)
{
	Case	   *c = &jc->joined;
	int			perm[MAX_COLUMNS];
	int			nkeycols = 0;
	int			next = 0;
	int			i,
				j;

	for (i = 0; i < MAX_COLUMNS; i++)
		jc->table_of[i] = -1;
	for (i = 0; i < s->nsteps; i++)
		nkeycols += aj_step_new_columns(&s->steps[i]);
	*ncols = s->ncols < MAX_COLUMNS - nkeycols ? s->ncols : MAX_COLUMNS - nkeycols;
	c->ncolumns = nkeycols + *ncols;
	rng_permutation(rng, perm, c->ncolumns);
	for (i = 0; i < s->nsteps; i++)
	{
		const AjStepSpec *ss = &s->steps[i];
		GaAggJoinStep *step = &jc->steps[i];

		step->type = ss->type;
		if (ss->nkeys <= 1)
		{
			step->key_column = aj_place_key(jc, ss->key_from, ss->key_side, 0, perm, &next);
			continue;
		}
		step->nkeys = ss->nkeys;
		step->key_column = -1;
		for (j = 0; j < ss->nkeys; j++)
			step->key_columns[j] = aj_place_key(jc, ss->comp_from[j], ss->comp_side[j], j,
												perm, &next);
		for (j = 0; j < ss->nkeys; j++)
		{
			int			col = perm[next++];

			c->types[col] = GA_TYPE_INT64;
			jc->from_build[col] = (uint8_t) (i + 1);
			jc->table_of[col] = jc->table_of[step->key_columns[j]];
			step->build_key_columns[j] = col;
		}
	}
	for (i = 0; i < *ncols; i++)
	{
		col_of[i] = perm[next++];
		c->types[col_of[i]] = s->cols[i].type;
		jc->from_build[col_of[i]] = (uint8_t) s->cols[i].from_build;
	}
}

/*
 * Draw every column's rows: the key columns from their key tables, the
 * columns holding a step's build key from it, the rest from their specs
 * (the build key columns of steps of several keys are drawn already); a
 * build column with nulls gets its payload bitmap.
 */
static void
aj_gen_columns(AjCase *jc, const AjSpec *s, Rng *rng, const int *col_of, int ncols,
			   int64_t *const *key_table, const int64_t *domain, int64_t *const *key_of,
			   uint8_t *const *key_null)
{
	Case	   *c = &jc->joined;
	int			col,
				k;
	int64_t		i;

	for (col = 0; col < c->ncolumns; col++)
	{
		int64_t		n = aj_side_rows(jc, jc->from_build[col]);
		int			width = ga_type_width(c->types[col]);

		if (jc->values[col] != NULL)
			continue;			/* a build key column, drawn with its build */
		jc->values[col] = calloc(n > 0 ? n : 1, width > 0 ? width : 1);
		jc->isnull[col] = calloc(n > 0 ? n : 1, 1);
		if (key_table[col] != NULL)
			aj_gen_keys(s, rng, key_table[col], domain[col], jc->values[col], jc->isnull[col], n);
	}
	for (k = 0; k < ncols; k++)
	{
		const AjColSpec *cs = &s->cols[k];
		int			side = cs->from_build;

		col = col_of[k];
		for (i = 0; i < aj_side_rows(jc, side); i++)
		{
			if (cs->join_key)
			{
				((int64_t *) jc->values[col])[i] = key_of[side - 1][i];
				jc->isnull[col][i] = key_null[side - 1][i];
			}
			else
				aj_gen_value(rng, cs, jc->values[col], jc->isnull[col], i);
		}
	}
	for (col = 0; col < c->ncolumns; col++)
	{
		int64_t		n = aj_side_rows(jc, jc->from_build[col]);

		if (!jc->from_build[col])
			continue;
		for (i = 0; i < n && !jc->build_has_nulls[col]; i++)
			jc->build_has_nulls[col] = jc->isnull[col][i];
		if (!jc->build_has_nulls[col])
			continue;
		jc->validity[col] = malloc((size_t) (n + 7) / 8 + 1);
		memset(jc->validity[col], 0xff, (size_t) (n + 7) / 8 + 1);
		for (i = 0; i < n; i++)
			if (jc->isnull[col][i])
				jc->validity[col][i >> 3] &= (uint8_t) ~(1u << (i & 7));
	}
}

/* Describe a case in one line: steps, sides, keys, columns, batches. */
static void
aj_describe(AjCase *jc, const AjSpec *s, int ncols)
{
	const Case *c = &jc->joined;
	char	   *d = jc->desc;
	int			k;

	d += sprintf(d, "%s probe=%lld%s rows=%lld steps=[", s->label, (long long) jc->nprobe,
				 s->scattered ? "/scattered" : "", (long long) c->nrows);
	for (k = 0; k < jc->nsteps; k++)
	{
		const AjStepSpec *ss = &s->steps[k];
		int			j;

		d += sprintf(d, "%s%s%s", k ? "; " : "", aj_type_names[ss->type],
					 ss->nkeys > 1 ? "[" : "(");
		for (j = 0; j < (ss->nkeys > 1 ? ss->nkeys : 1); j++)
		{
			AjKeyFrom	from = ss->nkeys > 1 ? ss->comp_from[j] : ss->key_from;

			d += sprintf(d, "%s%s%d", j ? "," : "",
						 from == AJ_KEY_PROBE ? "p" : from == AJ_KEY_BUILD ? "b" : "=",
						 from == AJ_KEY_PROBE ? 0 : ss->nkeys > 1 ? ss->comp_side[j] : ss->key_side);
		}
		d += sprintf(d, "%s build=%lld/%lld %s", ss->nkeys > 1 ? "]" : ")",
					 (long long) jc->builds[k].nkeyed, (long long) jc->builds[k].nbuild,
					 aj_dist_names[ss->build_dist]);
		if (jc->steps[k].nfilter > 0)
			d += sprintf(d, " filter=%d", jc->steps[k].nfilter);
	}
	d += sprintf(d, "] keys=[");
	for (k = 0; k < c->nkeys; k++)
	{
		int			col = c->key_columns[k];

		d += sprintf(d, "%s%s%d:%s", k ? "," : "", col == aj_first_key(jc, 0) ? "joinkey" : "",
					 jc->from_build[col], type_name(c->types[col]));
	}
	d += sprintf(d, "] cols=[");
	for (k = 0; k < ncols; k++)
		d += sprintf(d, "%s%d:%s%s", k ? "," : "", s->cols[k].from_build,
					 type_name(s->cols[k].type), s->cols[k].null_rate > 0 ? "?" : "");
	d += sprintf(d, "] batch=%lldx%d est=%lld aggs=%d", (long long) c->batch_rows,
				 jc->nbatches, (long long) c->estimated_groups, c->naggs);
	if (jc->nfilter > 0)
		sprintf(d, " filter=%d", jc->nfilter);
}

/*
 * Copy a spec's filter program (the join's or a step's) into the case's,
 * its spec column indexes turned into the columns they went to; returns
 * its steps, 0 (no filter) when one of its columns did not fit.
 */
static int
aj_map_filter(const GaFilterStep *from, int nsteps, const int *col_of, int ncols,
			  GaFilterStep *to)
{
	int			i;

	for (i = 0; i < nsteps; i++)
		if ((from[i].op == GA_FILTER_BOOL || from[i].op == GA_FILTER_COMPARE) &&
			(from[i].column >= ncols ||
			 (from[i].op == GA_FILTER_COMPARE && from[i].column2 >= ncols)))
			return 0;
	for (i = 0; i < nsteps; i++)
	{
		to[i] = from[i];
		if (from[i].op == GA_FILTER_BOOL || from[i].op == GA_FILTER_COMPARE)
			to[i].column = col_of[from[i].column];
		if (from[i].op == GA_FILTER_COMPARE)
			to[i].column2 = col_of[from[i].column2];
	}
	return nsteps;
}

/* Generate a case from its spec: every side, batches, joined rows. */
void
aj_build_case(AjCase *jc, const AjSpec *s, Rng *rng)
{
	Case	   *c = &jc->joined;
	int			col_of[AJ_MAX_COLS];
	int64_t    *key_table[MAX_COLUMNS] = {0};
	int64_t		domain[MAX_COLUMNS] = {0};
	int64_t    *key_of[AJ_MAX_STEPS] = {0};
	uint8_t    *key_null[AJ_MAX_STEPS] = {0};
	int64_t    *per_row;
	int64_t		unmatched;
	AjWalk		walk;
	int			ncols,
				i,
				k;

	memset(jc, 0, sizeof(*jc));
	jc->nsteps = s->nsteps;
	jc->nprobe = s->nprobe;
	c->batch_rows = s->batch_rows;
	c->estimated_groups = s->estimated_groups;
	aj_place_columns(jc, s, rng, col_of, &ncols);

	/* Grouping keys: the first step's key if asked, then the group columns. */
	if (s->group_by_probe_key)
		c->key_columns[c->nkeys++] = aj_first_key(jc, 0);
	for (k = 0; k < ncols && c->nkeys < MAX_KEYS; k++)
		if (s->cols[k].group_key)
			c->key_columns[c->nkeys++] = col_of[k];

	/* Build sides, each keyed from its key columns' tables. */
	for (i = 0; i < s->nsteps; i++)
	{
		const GaAggJoinStep *step = &jc->steps[i];
		int			nkeys = step->nkeys > 1 ? step->nkeys : 1;
		int			first_table = -1;
		AjBuild    *build = &jc->builds[i];

		for (k = 0; k < nkeys; k++)
		{
			int			t = jc->table_of[step->nkeys > 1 ? step->key_columns[k] : step->key_column];

			if (key_table[t] != NULL)
				continue;
			domain[t] = s->steps[i].key_domain > 0 ? s->steps[i].key_domain : 1;
			if (first_table < 0)
			{
				key_table[t] = aj_key_table(s, rng, domain[t]);
				first_table = t;
			}
			else
			{
				/* the step's other new tables hold the same keys */
				key_table[t] = malloc(sizeof(int64_t) * (domain[t] + AJ_MISSES));
				memcpy(key_table[t], key_table[first_table],
					   sizeof(int64_t) * (domain[t] + AJ_MISSES));
			}
		}
		build->nbuild = s->steps[i].nbuild;
		key_of[i] = malloc(sizeof(int64_t) * (build->nbuild > 0 ? build->nbuild : 1));
		key_null[i] = calloc(build->nbuild > 0 ? build->nbuild : 1, 1);
		if (step->nkeys > 1)
			aj_gen_build_tuples(jc, i, &s->steps[i], rng, key_table, domain, key_of[i],
								key_null[i]);
		else
			aj_gen_build(build, &s->steps[i], rng, key_table[jc->table_of[step->key_column]],
						 domain[jc->table_of[step->key_column]], key_of[i], key_null[i]);
		jc->build_order[i] = i;
	}
	rng_permutation(rng, jc->build_order, jc->nsteps);
	aj_gen_columns(jc, s, rng, col_of, ncols, key_table, domain, key_of, key_null);
	jc->nfilter = aj_map_filter(s->filter, s->nfilter, col_of, ncols, jc->filter);
	for (i = 0; i < s->nsteps; i++)
		jc->steps[i].nfilter = aj_map_filter(s->steps[i].filter, s->steps[i].nfilter, col_of,
											 ncols, jc->steps[i].filter);

	/* The reference's rows, within the budget, then the batches' counts. */
	per_row = malloc(sizeof(int64_t) * (jc->nprobe > 0 ? jc->nprobe : 1));
	aj_walk_all(jc, &walk, s->max_pairs, per_row);
	unmatched = aj_walk_unmatched(jc, &walk);
	jc->nbatches = split_batches(rng, s->split, jc->nprobe, s->batch_rows, &jc->batch_sizes);
	aj_form_joined(jc, &walk, per_row, unmatched);
	aj_add_aggs(jc, s, ncols, rng, col_of);
	sort_reference(c);
	aj_describe(jc, s, ncols);

	free(walk.rows);
	free(walk.marks);
	free(per_row);
	for (i = 0; i < MAX_COLUMNS; i++)
		free(key_table[i]);
	for (i = 0; i < AJ_MAX_STEPS; i++)
	{
		free(key_of[i]);
		free(key_null[i]);
	}
}

/* Free a case's data. */
void
aj_free_case(AjCase *jc)
{
	int			c,
				s;

	for (c = 0; c < MAX_COLUMNS; c++)
	{
		free(jc->values[c]);
		free(jc->isnull[c]);
		free(jc->validity[c]);
	}
	for (s = 0; s < AJ_MAX_STEPS; s++)
	{
		free(jc->builds[s].keys);
		free(jc->builds[s].rows);
		free(jc->builds[s].entries);
		free(jc->builds[s].tuples);
	}
	free(jc->batch_sizes);
	free_case(&jc->joined);
}
