/*-------------------------------------------------------------------------
 *
 * aggjoin.c
 *	  Device conformance test of the join-fed aggregation (the "Aggregation
 *	  fed by a hash join" part of gpuagg_device.h): seeded random probe and
 *	  build sides go to every device run (the CPU, and the GPU under each
 *	  strategy), and the groups that come back are checked against the
 *	  joined rows formed here, on the host, independently of cuda/.
 *
 * The reference.  The build rows with a key are sorted by key; every probe
 * row, in order, is looked up by binary search and gives one joined row per
 * build row with an equal key (probe columns from the probe row, build
 * columns from the build row), or, for a LEFT join, one row with null build
 * columns when it has no match (a null key never matches).  The joined
 * rows make an ordinary Case of conformance.c, whose reference
 * (sort_reference, check_result) checks the device's groups exactly as it
 * checks an aggregation of submitted batches: there is one checker.
 *
 * Besides the groups: the statistics (input_rows = probe rows, joined_rows
 * = pairs, join_build_rows = keyed build rows, batches = the pieces of at
 * most batch_rows joined rows with at least one per submit, and on the CPU
 * device bytes_sent exactly), the batch contract, that build columns of a
 * submitted batch are ignored (they are filled with garbage and false
 * nulls), that the payload's probe columns are never read (their arrays
 * are NULL), and the API (aggjoin_api.c).
 *
 * Cases: an empty build (INNER and LEFT), an empty probe side, unique
 * build keys (the PK-FK join), duplicates on both sides, one key on
 * thousands of build rows with pieces splitting a probe row's matches,
 * null keys on both sides, every value type on both sides with nulls,
 * grouping by the join key itself and by a build column holding the build
 * key, one-row pieces, all-null probe keys, a build whose columns are all
 * null, many groups from a wrong estimate (table growth), then random
 * mixtures.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Most columns besides the probe key. */
#define AJ_MAX_COLS (MAX_COLUMNS - 1)

/* Most COMOMENTS per case (each takes two of the GPU's 64 aggregate slots). */
#define AJ_MAX_COMOMENTS 6

/* How the build side's keys are drawn. */
typedef enum AjBuildDist
{
	AJ_UNIQUE,					/* every keyed build row its own key */
	AJ_DUPS,					/* uniform over a smaller domain */
	AJ_SKEW						/* one key on skew_rows rows, the rest uniform */
} AjBuildDist;

static const char *const aj_dist_names[] = {"unique", "dups", "skew"};

/* One column besides the probe key. */
typedef struct AjColSpec
{
	int			from_build;
	GaValueType type;
	ValMode		mode;
	double		null_rate;
	int			group_key;		/* a grouping key, drawn from `domain` values */
	int64_t		domain;
	int			join_key;		/* build int64 column holding the build key */
} AjColSpec;

typedef struct AjSpec
{
	const char *label;
	GaAggJoinType type;
	int64_t		nprobe;
	int64_t		nbuild;			/* payload rows */
	AjBuildDist build_dist;
	int64_t		key_domain;		/* distinct build keys drawn from */
	int64_t		skew_rows;		/* AJ_SKEW: build rows on the hot key */
	int			scattered;		/* keys over all of int64, extremes included */
	double		probe_hot;		/* probe rows on the hot key (key_table[0]) */
	double		probe_miss;		/* probe rows with a key the build lacks */
	double		probe_key_null;
	double		build_key_null;
	int			group_by_probe_key;
	int			ncols;
	AjColSpec	cols[AJ_MAX_COLS];
	int64_t		batch_rows;
	int64_t		estimated_groups;
	SplitMode	split;
	int			all_aggs;
	int64_t		max_pairs;		/* probe rows beyond this many pairs miss */
} AjSpec;

/* A generated case: both sides, the batches, and the joined rows. */
typedef struct AjCase
{
	Case		joined;			/* the reference's rows */
	GaAggJoinType type;
	int			key_column;
	uint8_t		from_build[MAX_COLUMNS];

	int64_t		nprobe;
	void	   *probe_values[MAX_COLUMNS];
	uint8_t    *probe_isnull[MAX_COLUMNS];

	int64_t		nbuild;
	void	   *build_values[MAX_COLUMNS];
	uint8_t    *build_validity[MAX_COLUMNS];	/* NULL without nulls */
	uint8_t    *build_isnull[MAX_COLUMNS];
	int			build_has_nulls[MAX_COLUMNS];
	int64_t		nkeyed;
	int64_t    *build_keys;		/* nkeyed, in the order given to the device */
	uint32_t   *build_rows;

	int			nbatches;
	int64_t    *batch_sizes;
	int64_t		expected_batches;
	int64_t		expected_bytes;	/* the CPU device's bytes_sent */
	char		desc[640];
} AjCase;

/* One build row with a key, for the reference's sorted lookup. */
typedef struct AjEntry
{
	int64_t		key;
	int64_t		row;
} AjEntry;

/* ------------------------------------------------------------------------
 * Generating a case
 * ------------------------------------------------------------------------
 */

/* Order entries by key, then row. */
static int
aj_entry_cmp(const void *pa, const void *pb)
{
	const AjEntry *a = pa;
	const AjEntry *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* The range [*first, *first + count) of entries whose key is key. */
static int64_t
aj_matches(const AjEntry *entries, int64_t n, int64_t key, int64_t *first)
{
	int64_t		lo = 0,
				hi = n,
				end;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (entries[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (end = lo; end < n && entries[end].key == key; end++)
		;
	return end - lo;
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
 * The join keys: a table of distinct-ish values (the first key_domain for
 * the build, the rest for probe misses), sequential or scattered over int64
 * with its extremes.
 */
static int64_t *
aj_key_table(const AjSpec *s, Rng *rng, int64_t n)
{
	int64_t    *table = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
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

/* Draw the build side: keys (with nulls), the row order given, values. */
static void
aj_gen_build(AjCase *jc, const AjSpec *s, Rng *rng, const int64_t *key_table,
			 int64_t *key_of, uint8_t *key_null)
{
	int64_t		b,
				i;
	int			c;

	for (b = 0; b < jc->nbuild; b++)
	{
		int64_t		j;

		key_null[b] = s->build_key_null > 0 && rng_chance(rng, s->build_key_null);
		if (s->build_dist == AJ_UNIQUE)
			j = b % s->key_domain;
		else if (s->build_dist == AJ_SKEW &&
				 rng_chance(rng, (double) s->skew_rows / (double) jc->nbuild))
			j = 0;
		else
			j = rng_range(rng, 0, s->key_domain - 1);
		key_of[b] = key_table[j];
	}

	/* The keyed rows, in a random order (the device keeps it per key). */
	jc->build_keys = malloc(sizeof(int64_t) * (jc->nbuild > 0 ? jc->nbuild : 1));
	jc->build_rows = malloc(sizeof(uint32_t) * (jc->nbuild > 0 ? jc->nbuild : 1));
	jc->nkeyed = 0;
	for (b = 0; b < jc->nbuild; b++)
		if (!key_null[b])
			jc->build_rows[jc->nkeyed++] = (uint32_t) b;
	for (i = jc->nkeyed - 1; i > 0; i--)
	{
		int64_t		k = rng_range(rng, 0, i);
		uint32_t	t = jc->build_rows[i];

		jc->build_rows[i] = jc->build_rows[k];
		jc->build_rows[k] = t;
	}
	for (i = 0; i < jc->nkeyed; i++)
		jc->build_keys[i] = key_of[jc->build_rows[i]];

	for (c = 0; c < jc->joined.ncolumns; c++)
	{
		int			width = ga_type_width(jc->joined.types[c]);

		if (!jc->from_build[c])
			continue;
		jc->build_values[c] = calloc(jc->nbuild > 0 ? jc->nbuild : 1, width > 0 ? width : 1);
		jc->build_isnull[c] = calloc(jc->nbuild > 0 ? jc->nbuild : 1, 1);
	}
}

/* Draw the probe side's keys, keeping the joined rows under max_pairs. */
static void
aj_gen_probe_keys(AjCase *jc, const AjSpec *s, Rng *rng, const int64_t *key_table,
				  int64_t nmiss, const AjEntry *entries)
{
	int64_t    *keys = jc->probe_values[jc->key_column];
	uint8_t    *nulls = jc->probe_isnull[jc->key_column];
	int64_t		pairs = 0;
	int64_t		r;

	for (r = 0; r < jc->nprobe; r++)
	{
		int64_t		first,
					m;

		if (s->probe_key_null > 0 && rng_chance(rng, s->probe_key_null))
		{
			/* a null key carries a key that does match: it must not */
			nulls[r] = 1;
			keys[r] = key_table[0];
			pairs += jc->type == GA_AGG_JOIN_LEFT;
			continue;
		}
		if (rng_chance(rng, s->probe_miss))
			keys[r] = key_table[s->key_domain + rng_range(rng, 0, nmiss - 1)];
		else if (rng_chance(rng, s->probe_hot))
			keys[r] = key_table[0];
		else
			keys[r] = key_table[rng_range(rng, 0, s->key_domain - 1)];
		m = aj_matches(entries, jc->nkeyed, keys[r], &first);
		if (pairs + m > s->max_pairs)
		{
			nulls[r] = 1;		/* past the budget: a null key, no pairs */
			m = 0;
		}
		pairs += m > 0 ? m : jc->type == GA_AGG_JOIN_LEFT;
	}
}

/* Copy value row src_row of a column into joined row dst. */
static void
aj_copy_value(void *dst, int64_t d, const void *src, int64_t s, int width)
{
	memcpy((char *) dst + d * width, (const char *) src + s * width, (size_t) width);
}

/*
 * Form the joined rows into the case's Case, batch by batch in probe
 * order, and count what the devices must report: the pieces and the CPU
 * device's bytes.
 */
static void
aj_form_joined(AjCase *jc, const AjEntry *entries)
{
	Case	   *c = &jc->joined;
	const int64_t *keys = jc->probe_values[jc->key_column];
	const uint8_t *key_nulls = jc->probe_isnull[jc->key_column];
	int64_t		total = 0,
				r,
				start = 0,
				row = 0;
	int			b,
				col;

	/* Count first, then fill. */
	for (r = 0; r < jc->nprobe; r++)
	{
		int64_t		first,
					m = key_nulls[r] ? 0 : aj_matches(entries, jc->nkeyed, keys[r], &first);

		total += m > 0 ? m : jc->type == GA_AGG_JOIN_LEFT;
	}
	c->nrows = total;
	for (col = 0; col < c->ncolumns; col++)
	{
		int			width = ga_type_width(c->types[col]);

		c->values[col] = width > 0 ? malloc((size_t) width * (total > 0 ? total : 1)) : NULL;
		c->isnull[col] = calloc(total > 0 ? total : 1, 1);
	}

	jc->expected_batches = 0;
	jc->expected_bytes = jc->nkeyed * (int64_t) (sizeof(int64_t) + sizeof(uint32_t));
	for (col = 0; col < c->ncolumns; col++)
		if (jc->from_build[col])
			jc->expected_bytes += jc->nbuild * ga_type_width(c->types[col]) +
				(jc->build_has_nulls[col] ? (jc->nbuild + 7) / 8 : 0);

	for (b = 0; b < jc->nbatches; b++)
	{
		int64_t		n = jc->batch_sizes[b];
		int64_t		batch_pairs = 0;

		for (r = start; r < start + n; r++)
		{
			int64_t		first = 0,
						m = key_nulls[r] ? 0 : aj_matches(entries, jc->nkeyed, keys[r], &first),
						k;

			if (m == 0 && jc->type != GA_AGG_JOIN_LEFT)
				continue;
			for (k = 0; k < (m > 0 ? m : 1); k++)
			{
				int64_t		brow = m > 0 ? entries[first + k].row : -1;

				for (col = 0; col < c->ncolumns; col++)
				{
					int			width = ga_type_width(c->types[col]);

					if (!jc->from_build[col])
					{
						c->isnull[col][row] = jc->probe_isnull[col][r];
						if (width > 0)
							aj_copy_value(c->values[col], row, jc->probe_values[col], r, width);
					}
					else if (brow < 0)
					{
						c->isnull[col][row] = 1;
						if (width > 0)
							memset((char *) c->values[col] + row * width, 0x7f, (size_t) width);
					}
					else
					{
						c->isnull[col][row] = jc->build_isnull[col][brow];
						if (width > 0)
							aj_copy_value(c->values[col], row, jc->build_values[col], brow, width);
					}
					if (c->isnull[col][row])
						c->has_nulls[col] = 1;
				}
				row++;
				batch_pairs++;
			}
		}
		jc->expected_batches += batch_pairs == 0 ? 1 :
			(batch_pairs + c->batch_rows - 1) / c->batch_rows;
		for (col = 0; col < c->ncolumns; col++)
		{
			int			nulls = 0;

			if (jc->from_build[col])
				continue;
			for (r = start; r < start + n && !nulls; r++)
				nulls = jc->probe_isnull[col][r];
			jc->expected_bytes += n * ga_type_width(c->types[col]) + (nulls ? (n + 7) / 8 : 0);
		}
		start += n;
	}
}

/* Choose the aggregates: every valid one, or a random subset. */
static void
aj_add_aggs(AjCase *jc, const AjSpec *s, Rng *rng, const int *col_of)
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
	first = s->ncols > 0 ? (int) rng_range(rng, 0, s->ncols - 1) : 0;
	for (k = 0; k < s->ncols; k++)
	{
		i = (first + k) % s->ncols;
		add_column_aggs(c, rng, col_of[i],
						s->cols[i].group_key || mode_summable(s->cols[i].mode),
						s->all_aggs && !s->cols[i].group_key,
						s->cols[i].group_key ? 0.3 : p);
	}
	if (rng_chance(rng, 0.3))
		add_agg(c, GA_AGG_COUNT, jc->key_column);
	for (i = 0; i < s->ncols; i++)
		for (k = 0; k < s->ncols; k++)
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

/* Generate a case from its spec: both sides, batches, joined rows. */
static void
aj_build_case(AjCase *jc, const AjSpec *s, Rng *rng)
{
	Case	   *c = &jc->joined;
	int			perm[MAX_COLUMNS];
	int			col_of[AJ_MAX_COLS];
	int64_t		nmiss = 64;
	int64_t    *key_table;
	int64_t    *key_of;
	uint8_t    *key_null;
	AjEntry    *entries;
	int64_t		i;
	int			k;
	char	   *d;

	memset(jc, 0, sizeof(*jc));
	jc->type = s->type;
	jc->nprobe = s->nprobe;
	jc->nbuild = s->nbuild;
	c->ncolumns = 1 + s->ncols;
	c->batch_rows = s->batch_rows;
	c->estimated_groups = s->estimated_groups;

	/* Shuffle where the probe key and the other columns sit. */
	rng_permutation(rng, perm, c->ncolumns);
	jc->key_column = perm[0];
	c->types[jc->key_column] = GA_TYPE_INT64;
	for (k = 0; k < s->ncols; k++)
	{
		col_of[k] = perm[1 + k];
		c->types[col_of[k]] = s->cols[k].type;
		jc->from_build[col_of[k]] = (uint8_t) s->cols[k].from_build;
	}

	/* Grouping keys: the probe key first if asked, then the group columns. */
	if (s->group_by_probe_key)
		c->key_columns[c->nkeys++] = jc->key_column;
	for (k = 0; k < s->ncols && c->nkeys < MAX_KEYS; k++)
		if (s->cols[k].group_key)
			c->key_columns[c->nkeys++] = col_of[k];

	/* Build side. */
	key_table = aj_key_table(s, rng, s->key_domain + nmiss);
	key_of = malloc(sizeof(int64_t) * (jc->nbuild > 0 ? jc->nbuild : 1));
	key_null = calloc(jc->nbuild > 0 ? jc->nbuild : 1, 1);
	aj_gen_build(jc, s, rng, key_table, key_of, key_null);
	for (k = 0; k < s->ncols; k++)
	{
		int			col = col_of[k];

		if (!s->cols[k].from_build)
			continue;
		for (i = 0; i < jc->nbuild; i++)
		{
			if (s->cols[k].join_key)
			{
				((int64_t *) jc->build_values[col])[i] = key_of[i];
				jc->build_isnull[col][i] = key_null[i];
			}
			else
				aj_gen_value(rng, &s->cols[k], jc->build_values[col], jc->build_isnull[col], i);
			if (jc->build_isnull[col][i])
				jc->build_has_nulls[col] = 1;
		}
		if (jc->build_has_nulls[col])
		{
			jc->build_validity[col] = malloc((size_t) (jc->nbuild + 7) / 8 + 1);
			memset(jc->build_validity[col], 0xff, (size_t) (jc->nbuild + 7) / 8 + 1);
			for (i = 0; i < jc->nbuild; i++)
				if (jc->build_isnull[col][i])
					jc->build_validity[col][i >> 3] &= (uint8_t) ~(1u << (i & 7));
		}
	}
	entries = malloc(sizeof(AjEntry) * (jc->nkeyed > 0 ? jc->nkeyed : 1));
	for (i = 0; i < jc->nkeyed; i++)
	{
		entries[i].key = jc->build_keys[i];
		entries[i].row = jc->build_rows[i];
	}
	qsort(entries, (size_t) jc->nkeyed, sizeof(AjEntry), aj_entry_cmp);

	/* Probe side. */
	for (k = 0; k < c->ncolumns; k++)
	{
		int			width = ga_type_width(c->types[k]);

		if (jc->from_build[k])
			continue;
		jc->probe_values[k] = calloc(jc->nprobe > 0 ? jc->nprobe : 1, width > 0 ? width : 1);
		jc->probe_isnull[k] = calloc(jc->nprobe > 0 ? jc->nprobe : 1, 1);
	}
	aj_gen_probe_keys(jc, s, rng, key_table, nmiss, entries);
	for (k = 0; k < s->ncols; k++)
	{
		if (s->cols[k].from_build)
			continue;
		for (i = 0; i < jc->nprobe; i++)
			aj_gen_value(rng, &s->cols[k], jc->probe_values[col_of[k]],
						 jc->probe_isnull[col_of[k]], i);
	}

	jc->nbatches = split_batches(rng, s->split, jc->nprobe, s->batch_rows, &jc->batch_sizes);
	aj_form_joined(jc, entries);
	aj_add_aggs(jc, s, rng, col_of);
	sort_reference(c);

	d = jc->desc;
	d += sprintf(d, "%s %s build=%lld/%lld %s%s probe=%lld pairs=%lld keys=[",
				 s->label, s->type == GA_AGG_JOIN_LEFT ? "left" : "inner",
				 (long long) jc->nkeyed, (long long) jc->nbuild, aj_dist_names[s->build_dist],
				 s->scattered ? "/scattered" : "", (long long) jc->nprobe,
				 (long long) c->nrows);
	for (k = 0; k < c->nkeys; k++)
	{
		int			col = c->key_columns[k];

		d += sprintf(d, "%s%s%s", k ? "," : "", col == jc->key_column ? "joinkey" :
					 jc->from_build[col] ? "b:" : "p:",
					 col == jc->key_column ? "" : type_name(c->types[col]));
	}
	d += sprintf(d, "] cols=[");
	for (k = 0; k < s->ncols; k++)
		d += sprintf(d, "%s%s%s%s", k ? "," : "", s->cols[k].from_build ? "b:" : "p:",
					 type_name(s->cols[k].type), s->cols[k].null_rate > 0 ? "?" : "");
	d += sprintf(d, "] batch=%lldx%d est=%lld aggs=%d", (long long) c->batch_rows,
				 jc->nbatches, (long long) c->estimated_groups, c->naggs);

	free(entries);
	free(key_table);
	free(key_of);
	free(key_null);
}

/* Free a case's data. */
static void
aj_free_case(AjCase *jc)
{
	int			c;

	for (c = 0; c < MAX_COLUMNS; c++)
	{
		free(jc->probe_values[c]);
		free(jc->probe_isnull[c]);
		free(jc->build_values[c]);
		free(jc->build_validity[c]);
		free(jc->build_isnull[c]);
	}
	free(jc->build_keys);
	free(jc->build_rows);
	free(jc->batch_sizes);
	free_case(&jc->joined);
}

/* ------------------------------------------------------------------------
 * Running a case on a device
 * ------------------------------------------------------------------------
 */

/* The request of a case (join spec included, pointing into the case). */
static void
aj_request(const AjCase *jc, GaStrategy strategy, GaAggJoinSpec *spec, GaAggRequest *req)
{
	const Case *c = &jc->joined;

	memset(spec, 0, sizeof(*spec));
	spec->nsteps = 1;
	spec->steps[0].type = jc->type;
	spec->steps[0].key_column = jc->key_column;
	spec->from_build = jc->from_build;
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
	req->join = spec;
}

/*
 * The payload of a case: its build columns (validity only with nulls); the
 * probe columns have no arrays at all, so a device reading them crashes.
 */
static void
aj_payload(const AjCase *jc, GaColumn *columns, GaBatch *payload)
{
	int			c;

	memset(columns, 0, sizeof(GaColumn) * MAX_COLUMNS);
	for (c = 0; c < jc->joined.ncolumns; c++)
	{
		columns[c].type = jc->joined.types[c];
		if (!jc->from_build[c])
			continue;
		columns[c].values = jc->build_values[c];
		columns[c].validity = jc->build_validity[c];
		columns[c].has_nulls = jc->build_has_nulls[c];
	}
	payload->nrows = jc->nbuild;
	payload->capacity = jc->nbuild + 3;
	payload->ncolumns = jc->joined.ncolumns;
	payload->columns = columns;
}

/*
 * Fill a probe batch with probe rows [start, start + n): probe columns as
 * generated, build columns with garbage and false nulls to be ignored.
 */
static void
aj_fill_batch(const AjCase *jc, GaBatch *b, int64_t start, int64_t n)
{
	int			c;
	int64_t		r;

	for (c = 0; c < jc->joined.ncolumns; c++)
	{
		GaColumn   *col = &b->columns[c];
		int			width = ga_type_width(jc->joined.types[c]);

		if (jc->from_build[c])
		{
			if (width > 0 && n > 0)
				memset(col->values, 0xa5, (size_t) (n * width));
			for (r = 0; r < n; r += 3)
				ga_column_set_null(col, r);
			continue;
		}
		if (width > 0 && n > 0)
			memcpy(col->values, (const char *) jc->probe_values[c] + start * width,
				   (size_t) (n * width));
		for (r = 0; r < n; r++)
			if (jc->probe_isnull[c][start + r])
				ga_column_set_null(col, r);
	}
	b->nrows = n;
}

/* Check the statistics of a finished run against what the case implies. */
static void
aj_check_stats(const AjCase *jc, GaDevice *dev, const GaAggStats *stats,
			   const GaAggResult *res, RunReport *rr)
{
	int64_t		by = 0;
	int			s;

	for (s = 0; s < GA_NUM_STRATEGIES; s++)
		by += stats->batches_by_strategy[s];
	if (stats->batches != jc->expected_batches || stats->input_rows != jc->nprobe ||
		stats->joined_rows != jc->joined.nrows || stats->join_build_rows != jc->nkeyed ||
		stats->groups != res->ngroups)
		report(rr, "stats: batches %lld input_rows %lld joined_rows %lld join_build_rows %lld groups %lld, expected %lld, %lld, %lld, %lld, %lld",
			   (long long) stats->batches, (long long) stats->input_rows,
			   (long long) stats->joined_rows, (long long) stats->join_build_rows,
			   (long long) stats->groups, (long long) jc->expected_batches,
			   (long long) jc->nprobe, (long long) jc->joined.nrows,
			   (long long) jc->nkeyed, (long long) res->ngroups);
	if (by != stats->batches)
		report(rr, "stats: batches_by_strategy add up to %lld, not %lld",
			   (long long) by, (long long) stats->batches);
	if (stats->device_ms < 0 || stats->transfer_ms < 0 || stats->bytes_sent < 0 ||
		stats->table_growths < 0)
		report(rr, "stats: negative figures");
	if (ga_device_kind(dev) == GA_DEVICE_CPU)
	{
		if (stats->bytes_sent != jc->expected_bytes)
			report(rr, "stats: bytes_sent %lld, expected %lld",
				   (long long) stats->bytes_sent, (long long) jc->expected_bytes);
		if (stats->batches_by_strategy[GA_STRATEGY_CPU] != stats->batches)
			report(rr, "stats: CPU batches not counted as the cpu strategy");
	}
}

/*
 * Run a case on one device under one strategy and compare with the
 * reference.  Returns the number of problems.
 */
static int64_t
aj_run_case(const AjCase *jc, int case_no, GaDevice *dev, GaStrategy strategy,
			const char *label, int verbose, char *summary, size_t summary_len)
{
	RunReport	rr = {case_no, label, 0, 0, "aggjoin"};
	WaitState	ws = {0, 0, 0};
	GaAggJoinSpec spec;
	GaAggRequest req;
	GaColumn	columns[MAX_COLUMNS];
	GaBatch		payload;
	GaAgg	   *agg;
	GaStatus	st;
	GaAggStats	stats;
	const GaAggResult *res;
	int64_t		start = 0;
	double		t0 = now_ms();
	int			b;

	aj_request(jc, strategy, &spec, &req);
	aj_payload(jc, columns, &payload);
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		goto done;
	}
	if (!ga_agg_join_build(agg, 0, jc->build_keys, jc->build_rows, jc->nkeyed, &payload,
						   test_wait, &ws, &st))
	{
		report(&rr, "build failed: code %d: %s", st.code, st.message);
		goto done;
	}
	for (b = 0; b < jc->nbatches; b++)
	{
		GaBatch    *batch = ga_agg_next_batch(agg, test_wait, &ws, &st);

		if (batch == NULL)
		{
			report(&rr, "next_batch %d failed: code %d: %s", b + 1, st.code, st.message);
			goto done;
		}
		check_empty_batch(&jc->joined, batch, &rr);
		if (rr.mismatches > 0)
			goto done;
		aj_fill_batch(jc, batch, start, jc->batch_sizes[b]);
		if (!ga_agg_submit(agg, batch, test_wait, &ws, &st))
		{
			report(&rr, "submit %d failed: code %d: %s", b + 1, st.code, st.message);
			goto done;
		}
		start += jc->batch_sizes[b];
	}
	res = ga_agg_finish(agg, test_wait, &ws, &st);
	if (res == NULL)
	{
		report(&rr, "finish failed: code %d: %s", st.code, st.message);
		goto done;
	}
	check_result(&jc->joined, res, &rr);
	ga_agg_get_stats(agg, &stats);
	aj_check_stats(jc, dev, &stats, res, &rr);
	if (verbose)
		print_stats("aggjoin", case_no, label, &stats, 1);

done:
	if (ws.cancels > 0)
		report(&rr, "the wait callback answered stop although not told to");
	ga_agg_destroy(agg);
	snprintf(summary, summary_len, "%s %s %.0fms", label, rr.mismatches ? "FAIL" : "ok",
			 now_ms() - t0);
	return rr.mismatches;
}

/* ------------------------------------------------------------------------
 * Cases: fixed edge cases, then random ones
 * ------------------------------------------------------------------------
 */

/* A plain spec to modify: LEFT, duplicates, a group column on each side. */
static void
aj_default_spec(AjSpec *s, const char *label, int64_t max_pairs)
{
	memset(s, 0, sizeof(*s));
	s->label = label;
	s->type = GA_AGG_JOIN_LEFT;
	s->nprobe = 20000;
	s->nbuild = 5000;
	s->build_dist = AJ_DUPS;
	s->key_domain = 2000;
	s->probe_miss = 0.1;
	s->ncols = 4;
	s->cols[0] = (AjColSpec) {0, GA_TYPE_INT32, VAL_SMALL, 0.05, 1, 20, 0};
	s->cols[1] = (AjColSpec) {1, GA_TYPE_INT16, VAL_SMALL, 0.05, 1, 7, 0};
	s->cols[2] = (AjColSpec) {0, GA_TYPE_FLOAT64, VAL_SMALL, 0.1, 0, 0, 0};
	s->cols[3] = (AjColSpec) {1, GA_TYPE_INT64, VAL_FULL, 0.1, 0, 0, 0};
	s->batch_rows = 4096;
	s->estimated_groups = 100;
	s->split = SPLIT_FULL;
	s->all_aggs = 1;
	s->max_pairs = max_pairs;
}

/* Put a column of every value type on one side (from `first` on). */
static void
aj_all_types(AjSpec *s, int first, int from_build, double null_rate, ValMode float_mode)
{
	static const GaValueType types[] = {GA_TYPE_NONE, GA_TYPE_INT8, GA_TYPE_INT16,
	GA_TYPE_INT32, GA_TYPE_INT64, GA_TYPE_FLOAT32, GA_TYPE_FLOAT64};
	int			i;

	for (i = 0; i < 7 && first + i < AJ_MAX_COLS; i++)
	{
		AjColSpec  *cs = &s->cols[first + i];

		memset(cs, 0, sizeof(*cs));
		cs->from_build = from_build;
		cs->type = types[i];
		cs->mode = type_is_float(types[i]) ? float_mode : VAL_FULL;
		cs->null_rate = null_rate;
	}
	if (s->ncols < first + i)
		s->ncols = first + i;
}

#define NUM_FIXED_AJ_CASES 16

/* The fixed edge cases: each index is one scenario random ones may miss. */
static void
aj_fixed_spec(int index, AjSpec *s, int64_t max_pairs)
{
	switch (index)
	{
		case 0:
			aj_default_spec(s, "empty-build-inner", max_pairs);
			s->type = GA_AGG_JOIN_INNER;
			s->nbuild = 0;
			break;
		case 1:
			aj_default_spec(s, "empty-build-left", max_pairs);
			s->nbuild = 0;
			break;
		case 2:
			aj_default_spec(s, "empty-probe-plain", max_pairs);
			s->nprobe = 0;
			s->split = SPLIT_NONE;
			s->cols[0].group_key = s->cols[1].group_key = 0;
			break;
		case 3:
			aj_default_spec(s, "empty-probe-batch", max_pairs);
			s->type = GA_AGG_JOIN_INNER;
			s->nprobe = 0;
			break;
		case 4:
			aj_default_spec(s, "pk-fk-unique", max_pairs);
			s->build_dist = AJ_UNIQUE;
			s->nbuild = s->key_domain = 50000;
			s->nprobe = 200000;
			s->batch_rows = 65536;
			s->probe_miss = 0.05;
			break;
		case 5:
			aj_default_spec(s, "many-to-many", max_pairs);
			s->type = GA_AGG_JOIN_INNER;
			s->nbuild = 20000;
			s->key_domain = 500;
			s->nprobe = 10000;
			s->batch_rows = 8192;
			break;
		case 6:
			aj_default_spec(s, "skew-pieces", max_pairs);
			s->type = GA_AGG_JOIN_INNER;
			s->build_dist = AJ_SKEW;
			s->nbuild = 12000;
			s->skew_rows = 5000;
			s->key_domain = 3000;
			s->probe_hot = 0.02;
			s->nprobe = 8000;
			s->batch_rows = 1000;
			s->split = SPLIT_RANDOM;
			break;
		case 7:
			aj_default_spec(s, "null-keys-both", max_pairs);
			s->probe_key_null = 0.3;
			s->build_key_null = 0.3;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 8:
			aj_default_spec(s, "all-types-both-sides", max_pairs);
			s->ncols = 0;
			aj_all_types(s, 0, 0, 0.2, VAL_SMALL);
			aj_all_types(s, 7, 1, 0.2, VAL_MAGNITUDES);
			s->cols[14] = (AjColSpec) {1, GA_TYPE_INT8, VAL_SMALL, 0.1, 1, 5, 0};
			s->ncols = 15;
			s->all_aggs = 0;	/* every op would pass MAX_AGGS */
			break;
		case 9:
			aj_default_spec(s, "group-by-join-keys", max_pairs);
			s->group_by_probe_key = 1;
			s->cols[0].group_key = 0;
			s->cols[1] = (AjColSpec) {1, GA_TYPE_INT64, VAL_FULL, 0, 1, 0, 1};
			s->build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->scattered = 1;
			s->estimated_groups = 10;
			break;
		case 10:
			aj_default_spec(s, "one-row-pieces", max_pairs);
			s->nprobe = 300;
			s->nbuild = 600;
			s->key_domain = 100;
			s->batch_rows = 1;
			break;
		case 11:
			aj_default_spec(s, "all-probe-keys-null", max_pairs);
			s->probe_key_null = 1.0;
			break;
		case 12:
			aj_default_spec(s, "build-columns-all-null", max_pairs);
			s->ncols = 0;
			aj_all_types(s, 0, 1, 1.0, VAL_SMALL);
			s->cols[7] = (AjColSpec) {0, GA_TYPE_INT32, VAL_SMALL, 0, 1, 10, 0};
			s->ncols = 8;
			break;
		case 13:
			aj_default_spec(s, "many-groups-growth", max_pairs);
			s->nbuild = 100000;
			s->key_domain = 80000;
			s->nprobe = 300000;
			s->batch_rows = 1 << 17;
			s->cols[0].domain = 1000;
			s->cols[1].domain = 300;
			s->estimated_groups = 1;
			s->all_aggs = 0;
			break;
		case 14:
			aj_default_spec(s, "specials-inner-skew", max_pairs);
			s->type = GA_AGG_JOIN_INNER;
			s->build_dist = AJ_SKEW;
			s->skew_rows = 3000;
			s->nbuild = 4000;
			s->probe_hot = 0.3;
			s->nprobe = 1000;
			s->batch_rows = 4096;
			s->ncols = 0;
			aj_all_types(s, 0, 1, 0.1, VAL_SPECIAL);
			s->cols[7] = (AjColSpec) {0, GA_TYPE_FLOAT32, VAL_SPECIAL, 0.1, 0, 0, 0};
			s->cols[8] = (AjColSpec) {0, GA_TYPE_INT8, VAL_SMALL, 0.1, 1, 30, 0};
			s->ncols = 9;
			break;
		default:
			aj_default_spec(s, "plain-left-scattered", max_pairs);
			s->scattered = 1;
			s->cols[0].group_key = s->cols[1].group_key = 0;
			s->split = SPLIT_RANDOM;
			break;
	}
}

/* A random case: sides, keys, skew, nulls, columns, sizes all drawn. */
static void
aj_random_spec(Rng *rng, AjSpec *s, int64_t max_pairs)
{
	static const double key_null_rates[] = {0, 0, 0, 0, 0.01, 0.2, 0.2, 1.0};
	static const double val_null_rates[] = {0, 0, 0.01, 0.3, 1.0};
	int			ngroup,
				nvals,
				i;

	memset(s, 0, sizeof(*s));
	s->label = "random";
	s->type = rng_chance(rng, 0.5) ? GA_AGG_JOIN_LEFT : GA_AGG_JOIN_INNER;
	s->nbuild = rng_chance(rng, 0.08) ? 0 :
		(int64_t) pow(10.0, rng_unit(rng) * 5.3);
	s->nprobe = rng_chance(rng, 0.08) ? rng_range(rng, 0, 5) :
		(int64_t) pow(10.0, rng_unit(rng) * 5.3);
	s->build_dist = (AjBuildDist) rng_range(rng, AJ_UNIQUE, AJ_SKEW);
	s->key_domain = s->build_dist == AJ_UNIQUE ? s->nbuild :
		s->nbuild / rng_range(rng, 1, 50);
	if (s->key_domain < 1)
		s->key_domain = 1;
	s->skew_rows = rng_range(rng, 1, 6000);
	s->scattered = rng_chance(rng, 0.5);
	s->probe_hot = s->build_dist == AJ_SKEW ? rng_unit(rng) * 0.05 : 0;
	s->probe_miss = rng_unit(rng) * 0.5;
	s->probe_key_null = rng_pick(rng, key_null_rates, 8);
	s->build_key_null = rng_pick(rng, key_null_rates, 8);
	s->group_by_probe_key = rng_chance(rng, 0.15);

	ngroup = (int) rng_range(rng, 0, 2);
	nvals = (int) rng_range(rng, 0, 6);
	for (i = 0; i < ngroup + nvals; i++)
	{
		AjColSpec  *cs = &s->cols[s->ncols++];

		cs->from_build = rng_chance(rng, 0.5);
		if (i < ngroup)
		{
			cs->group_key = 1;
			cs->type = (GaValueType) rng_range(rng, GA_TYPE_INT8, GA_TYPE_INT64);
			cs->domain = (int64_t) pow(10.0, rng_unit(rng) * (ngroup > 1 ? 2.0 : 3.0)) + 1;
			cs->null_rate = rng_pick(rng, val_null_rates, 5);
			cs->mode = VAL_SMALL;
		}
		else
		{
			int			t = (int) rng_range(rng, 0, 12);

			cs->type = t == 0 ? GA_TYPE_NONE : (GaValueType) (1 + t % 6);
			cs->mode = type_is_int(cs->type) ? (ValMode) rng_range(rng, VAL_SMALL, VAL_EXTREME) :
				(ValMode) rng_range(rng, VAL_SMALL, VAL_EXTREME_FINITE);
			cs->null_rate = rng_pick(rng, val_null_rates, 5);
		}
	}
	if (rng_chance(rng, 0.2) && s->ncols < AJ_MAX_COLS)
	{
		AjColSpec  *cs = &s->cols[s->ncols++];

		/* the build key as a build column, grouped by */
		cs->from_build = 1;
		cs->type = GA_TYPE_INT64;
		cs->group_key = 1;
		cs->join_key = 1;
	}

	s->batch_rows = (int64_t) pow(2.0, (double) rng_range(rng, 0, 17));
	if (s->batch_rows < s->nprobe / 1000)
		s->batch_rows = s->nprobe / 1000 + 1;
	s->split = (SplitMode) rng_range(rng, SPLIT_FULL, SPLIT_WITH_EMPTY);
	if (s->nprobe == 0 && rng_chance(rng, 0.5))
		s->split = SPLIT_NONE;
	switch (rng_range(rng, 0, 3))
	{
		case 0:
			s->estimated_groups = 0;
			break;
		case 1:
			s->estimated_groups = 1;
			break;
		case 2:
			s->estimated_groups = 1000;
			break;
		default:
			s->estimated_groups = 1000000;
			break;
	}
	s->all_aggs = rng_chance(rng, 0.3);
	/* at most ~2000 pieces per case, and at most max_pairs joined rows */
	s->max_pairs = max_pairs < s->batch_rows * 2000 ? max_pairs : s->batch_rows * 2000;
}

/* ------------------------------------------------------------------------
 * The suite
 * ------------------------------------------------------------------------
 */

/* Run the API checks and every case on every device run. */
int64_t
conformance_aggjoin(GaDevice *const *devices, const GaStrategy *strategies,
					const char *const *labels, int nruns, uint64_t seed, int ncases,
					int64_t max_rows, int timeout, int verbose, int64_t *checks)
{
	int64_t		failures = 0;
	int			i,
				j;

	for (j = 0; j < nruns; j++)
	{
		int64_t		f;

		conformance_set_current("aggjoin api", j);
		alarm((unsigned) timeout);
		f = aggjoin_api_checks(devices[j], strategies[j], labels[j]);
		printf("aggjoin api %-10s invalid, cancel, fail_at_batch, destroy: %s\n",
			   labels[j], f ? "FAIL" : "ok");
		failures += f;
		(*checks)++;
	}

	for (i = 0; i < NUM_FIXED_AJ_CASES + ncases; i++)
	{
		AjSpec		spec;
		AjCase		jc;
		Rng			rng;
		char		line[1400];
		size_t		len;

		conformance_set_current("aggjoin", i);
		alarm((unsigned) timeout);
		rng_seed(&rng, seed * UINT64_C(0x100000001b3) + UINT64_C(0xa99) * (uint64_t) (i + 1));
		if (i < NUM_FIXED_AJ_CASES)
			aj_fixed_spec(i, &spec, max_rows);
		else
			aj_random_spec(&rng, &spec, max_rows);
		/* --max-rows caps both sides too (small runs under a sanitizer) */
		if (spec.nprobe > max_rows)
			spec.nprobe = max_rows;
		if (spec.nbuild > max_rows)
			spec.nbuild = max_rows;
		if (spec.key_domain > spec.nbuild && spec.nbuild > 0)
			spec.key_domain = spec.nbuild;
		aj_build_case(&jc, &spec, &rng);

		len = (size_t) snprintf(line, sizeof(line), "aggjoin %3d groups=%lld %s",
								i, (long long) jc.joined.ngroups, jc.desc);
		for (j = 0; j < nruns; j++)
		{
			char		summary[160];

			failures += aj_run_case(&jc, i, devices[j], strategies[j], labels[j], verbose,
									summary, sizeof(summary));
			(*checks)++;
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s", summary);
		}
		printf("%s\n", line);
		fflush(stdout);
		aj_free_case(&jc);
	}
	return failures;
}
