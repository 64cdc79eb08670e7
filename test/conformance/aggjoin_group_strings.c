/*-------------------------------------------------------------------------
 *
 * aggjoin_group_strings.c
 *	  The string group key cases of the strings suite: aggjoins grouped by
 *	  GA_TYPE_STRING columns of the probe side or of a build side's
 *	  payload, fed to every device run and checked against a reference
 *	  that joins the rows itself and groups them by exact bytes.
 *
 * A case has a probe side and one or two steps.  Step 0 joins the probe's
 * int64 key with its build side's (or, hashed, that key and the probe's
 * string with the build's string); a second step joins its build side on
 * a probe column (a star) or on a build column of step 0 (a snowflake), so
 * that step 0's columns reach the groups through a later step.  Each step
 * is INNER, LEFT, SEMI, ANTI, RIGHT or FULL, so a key is null where an
 * outer join null-extends its side, and a SEMI or ANTI step's build
 * columns are null.  The group keys are one to three string columns (the
 * probe's, step 0's build's, step 1's build's) in any order, with the
 * probe's small integer now and then; the aggregates count the rows, sum
 * a value of each side and count a string key's non-null rows.
 *
 * Every side draws its strings from one adversarial pool: empty ones,
 * blanks, char(n) values padded with trailing blanks next to the same
 * values unpadded, multibyte and decomposed UTF-8, a NUL byte, prefixes of
 * each other, ones equal but for the last byte around 8-byte boundaries,
 * several kB long ones equal but for the last byte, and a generated pool
 * of 3 to 100,000 more, so that a case has a few groups of many rows or
 * many groups over several batches and several of the device's pieces of
 * joined rows.  Probe batches are small in rows or in bytes.  A device
 * groups string keys by exact byte equality and returns each group's
 * bytes once (gpuagg_device.h): so a group's returned bytes must be
 * exactly its rows' bytes, and the order of the groups is free.  Cases
 * with at most GS_BITS_GROUPS groups run again with debug_hash_bits
 * keeping 1 and 3 bits of every key tuple's hash, so that only the bytes
 * keep unequal keys apart.  A device without string group keys of joins
 * (ga_device_kind_groups_join_strings) is reported as skipped.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "join.h"				/* conformance_set_current */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Columns: the probe side's, step 0's build side's, step 1's build side's. */
#define GS_P_KEY 0
#define GS_P_LINK 1
#define GS_P_STR 2
#define GS_P_SMALL 3
#define GS_P_VALUE 4
#define GS_B1_KEY 5
#define GS_B1_LINK 6
#define GS_B1_STR 7
#define GS_B1_VALUE 8
#define GS_B2_KEY 9
#define GS_B2_STR 10
#define GS_B2_VALUE 11
#define GS_NCOLUMNS 12
#define GS_ONE_STEP_COLUMNS 9

/* Sides of a case. */
#define GS_PROBE 0
#define GS_BUILD1 1
#define GS_BUILD2 2

#define GS_MAX_KEYS 4
#define GS_MAX_AGGS 6

/* The longest string drawn, and the most groups run with few hash bits. */
#define GS_MAX_STRING 5000
#define GS_BITS_GROUPS 3000

/* One row of a side. */
typedef struct GsRow
{
	uint32_t	at;				/* its string in the side's heap */
	uint32_t	len;
	uint8_t		snull;			/* the string is null */
	uint8_t		knull;			/* the key is null */
	uint8_t		lnull;			/* the link is null */
	uint8_t		vnull;			/* the value is null */
	uint8_t		small_null;		/* the small integer is null */
	int64_t		key;			/* step 0's key (probe, step 0's build) or
								 * step 1's (its build) */
	int64_t		link;			/* step 1's key: the probe's or step 0's
								 * build's */
	int64_t		small;			/* the probe's integer group key */
	int64_t		value;
} GsRow;

typedef struct GsSide
{
	int64_t		n;
	GsRow	   *rows;
	uint8_t    *heap;
	int64_t		heap_used;
} GsSide;

/* A group key's value, of the reference or of a device's result. */
typedef struct GsKey
{
	const uint8_t *bytes;
	uint32_t	len;
	int			isnull;
	int64_t		ival;
} GsKey;

/* A group: its keys (unused ones zero) and aggregates. */
typedef struct GsGroup
{
	GsKey		key[GS_MAX_KEYS];
	int64_t		agg[GS_MAX_AGGS];
} GsGroup;

/* A joined row: a row number of each side, -1 where the side is null. */
typedef struct GsTuple
{
	int32_t		row[3];
} GsTuple;

typedef struct GsTuples
{
	GsTuple    *t;
	int64_t		n;
	int64_t		cap;
} GsTuples;

typedef struct GsCase
{
	GsSide		side[3];
	GaAggJoinType type[2];
	int			nsteps;
	int			snowflake;		/* step 1 joins step 0's link, not the
								 * probe's */
	int			string_join;	/* step 0 joins the strings too (hashed) */
	int			nkeys;
	int			keys[GS_MAX_KEYS];	/* the group key columns */
	int			naggs;
	GaAggSpec	aggs[GS_MAX_AGGS];
	int64_t		batch_rows;
	int64_t		string_bytes;
	char		desc[224];
} GsCase;

/* The side of column c. */
static int
gs_column_side(int c)
{
	return c < GS_B1_KEY ? GS_PROBE : c < GS_B2_KEY ? GS_BUILD1 : GS_BUILD2;
}

/* The string column of a side. */
static int
gs_string_column(int side)
{
	return side == GS_PROBE ? GS_P_STR : side == GS_BUILD1 ? GS_B1_STR : GS_B2_STR;
}

/* Write one string of the pool into p (at most GS_MAX_STRING bytes); its length. */
static uint32_t
gs_gen_string(Rng *rng, uint8_t *p, int pool)
{
	static const struct
	{
		const char *s;
		uint32_t	len;
	}			fixed[] = {
#define GS_FIXED(s) {s, (uint32_t) sizeof(s) - 1}
		GS_FIXED(""), GS_FIXED(" "), GS_FIXED("  "), GS_FIXED("a"), GS_FIXED("a "),
		GS_FIXED("a    "), GS_FIXED("A"), GS_FIXED("ab"), GS_FIXED("ab   "), GS_FIXED("aB"),
		GS_FIXED("\xc3\xa9"), GS_FIXED("\xc3\xa9    "), GS_FIXED("\xc3\xbc"), GS_FIXED("u\xcc\x88"),
		GS_FIXED("\xe6\x97\xa5\xe6\x9c\xac"), GS_FIXED("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"),
		GS_FIXED("a\0b"), GS_FIXED("a\0c"), GS_FIXED("x\t"), GS_FIXED("0123456"),
		GS_FIXED("01234567"), GS_FIXED("012345678"), GS_FIXED("01234568"),
		GS_FIXED("0123456789abcdef"), GS_FIXED("0123456789abcdeg"),
		GS_FIXED("0123456789abcdef0")
#undef GS_FIXED
	};
	const int	nfixed = (int) (sizeof(fixed) / sizeof(fixed[0]));
	int64_t		pick = rng_range(rng, 0, pool + nfixed + 2);
	uint32_t	len;
	uint32_t	i;

	if (pick < nfixed)
	{
		memcpy(p, fixed[pick].s, fixed[pick].len);
		return fixed[pick].len;
	}
	if (pick >= nfixed + pool)
	{
		/* long: one of a few, equal but for the last byte */
		len = (uint32_t) (GS_MAX_STRING - 1000 * (pick - nfixed - pool));
		memset(p, 'L', len);
		p[len - 1] = (uint8_t) ('0' + rng_range(rng, 0, 2));
		return len;
	}
	/* the pool: a number's letters with a length of its own */
	pick -= nfixed;
	len = (uint32_t) (1 + pick % 21);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t) ('a' + (pick * 7 + i * 13) % 26);
	p[len - 1] = (uint8_t) (0x80 + pick % 64);	/* a byte no ASCII has */
	return len;
}

/* Draw side `s` of n rows: keys in [0, key_range), links in [0, link_range). */
static void
gs_draw_side(GsSide *side, Rng *rng, int64_t n, int pool, double null_rate,
			 int64_t key_range, int64_t link_range)
{
	uint8_t		buf[GS_MAX_STRING];
	int64_t		heap_size = 1024;
	int64_t		r;

	side->n = n;
	side->rows = calloc((size_t) (n + 1), sizeof(GsRow));
	side->heap = malloc((size_t) heap_size);
	side->heap_used = 0;
	for (r = 0; r < n; r++)
	{
		GsRow	   *row = &side->rows[r];

		row->at = (uint32_t) side->heap_used;
		row->snull = (uint8_t) rng_chance(rng, null_rate);
		if (!row->snull)
		{
			row->len = gs_gen_string(rng, buf, pool);
			if (side->heap_used + row->len > heap_size)
			{
				while (side->heap_used + row->len > heap_size)
					heap_size *= 2;
				side->heap = realloc(side->heap, (size_t) heap_size);
			}
			memcpy(side->heap + side->heap_used, buf, row->len);
			side->heap_used += row->len;
		}
		row->key = rng_range(rng, 0, key_range - 1);
		row->knull = (uint8_t) rng_chance(rng, null_rate / 2);
		row->link = rng_range(rng, 0, link_range - 1);
		row->lnull = (uint8_t) rng_chance(rng, null_rate / 2);
		row->small = rng_range(rng, -2, 2);
		row->small_null = (uint8_t) rng_chance(rng, null_rate);
		row->value = rng_range(rng, -1000, 1000);
		row->vnull = (uint8_t) rng_chance(rng, null_rate / 2);
	}
}

/* Build case `no` from the rng. */
static void
gs_build_case(GsCase *c, int no, Rng *rng)
{
	static const GaAggJoinType types[] = {
		GA_AGGJOIN_INNER, GA_AGGJOIN_LEFT, GA_AGGJOIN_SEMI, GA_AGGJOIN_ANTI,
		GA_AGGJOIN_RIGHT, GA_AGGJOIN_FULL
	};
	static const char *const type_names[] = {"inner", "left", "semi", "anti", "right", "full"};
	static const char *const column_names[GS_NCOLUMNS] = {
		"p.key", "p.link", "p.str", "p.small", "p.value", "b1.key", "b1.link", "b1.str",
		"b1.value", "b2.key", "b2.str", "b2.value"
	};
	static const int64_t probe_choices[] = {0, 1, 500, 5000, 20000};
	static const int pools[] = {3, 50, 2000, 100000};
	static const int64_t domains[] = {1, 10, 100, 1000};
	int			pool = pools[rng_range(rng, 0, 3)];
	double		null_rate = rng_chance(rng, 0.5) ? 0.1 : 0;
	int64_t		d1 = domains[rng_range(rng, 0, 3)];
	int64_t		d2 = domains[rng_range(rng, 0, 2)];
	int64_t		nprobe = no < 5 ? probe_choices[no] : probe_choices[rng_range(rng, 1, 4)];
	int64_t		nbuild1 = rng_chance(rng, 0.08) ? 0 : d1 * rng_range(rng, 1, 3);
	int64_t		nbuild2 = rng_chance(rng, 0.08) ? 0 : d2 * rng_range(rng, 1, 2);
	int			t0 = (int) rng_range(rng, 0, 5);
	int			t1 = (int) rng_range(rng, 0, 5);
	const int	cand[3] = {GS_P_STR, GS_B1_STR, GS_B2_STR};
	int			perm[3];
	int			ncand = 0;
	int			want;
	int			i;
	size_t		len;

	memset(c, 0, sizeof(*c));
	c->nsteps = rng_chance(rng, 0.5) ? 2 : 1;
	c->type[0] = types[t0];
	c->type[1] = types[t1];
	/* a SEMI or ANTI step's build columns are null: a star then */
	c->snowflake = c->nsteps == 2 && c->type[0] != GA_AGGJOIN_SEMI &&
		c->type[0] != GA_AGGJOIN_ANTI && rng_chance(rng, 0.5);
	c->string_join = rng_chance(rng, 0.25);
	c->batch_rows = rng_chance(rng, 0.5) ? 777 : 10000;
	c->string_bytes = rng_chance(rng, 0.5) ? 8192 : 1 << 20;
	gs_draw_side(&c->side[GS_PROBE], rng, nprobe, pool, null_rate, d1 + d1 / 5 + 1, d2 + 1);
	gs_draw_side(&c->side[GS_BUILD1], rng, nbuild1, pool, null_rate, d1, d2 + 1);
	gs_draw_side(&c->side[GS_BUILD2], rng, c->nsteps == 2 ? nbuild2 : 0, pool, null_rate, d2, 1);

	/* the group keys: one to three strings, the small integer now and then */
	ncand = c->nsteps == 2 ? 3 : 2;
	rng_permutation(rng, perm, ncand);
	want = (int) rng_range(rng, 1, ncand);
	for (i = 0; i < want; i++)
		c->keys[c->nkeys++] = cand[perm[i]];
	if (rng_chance(rng, 0.3))
	{
		int			at = (int) rng_range(rng, 0, c->nkeys);

		memmove(&c->keys[at + 1], &c->keys[at], sizeof(int) * (size_t) (c->nkeys - at));
		c->keys[at] = GS_P_SMALL;
		c->nkeys++;
	}

	/* the aggregates */
	c->aggs[c->naggs++] = (GaAggSpec) {GA_AGG_COUNT_ROWS, -1, 0};
	c->aggs[c->naggs++] = (GaAggSpec) {GA_AGG_SUM_INT, GS_P_VALUE, 0};
	c->aggs[c->naggs++] = (GaAggSpec) {GA_AGG_COUNT, GS_B1_VALUE, 0};
	c->aggs[c->naggs++] = (GaAggSpec) {GA_AGG_SUM_INT, GS_B1_VALUE, 0};
	c->aggs[c->naggs++] = (GaAggSpec) {GA_AGG_COUNT, c->keys[c->keys[0] == GS_P_SMALL], 0};
	if (c->nsteps == 2)
		c->aggs[c->naggs++] = (GaAggSpec) {GA_AGG_SUM_INT, GS_B2_VALUE, 0};

	len = (size_t) snprintf(c->desc, sizeof(c->desc), "%s", type_names[t0]);
	if (c->string_join)
		len += (size_t) snprintf(c->desc + len, sizeof(c->desc) - len, "(+strings)");
	if (c->nsteps == 2)
		len += (size_t) snprintf(c->desc + len, sizeof(c->desc) - len, " %s %s",
								 c->snowflake ? "snowflake" : "star", type_names[t1]);
	len += (size_t) snprintf(c->desc + len, sizeof(c->desc) - len, " by");
	for (i = 0; i < c->nkeys; i++)
		len += (size_t) snprintf(c->desc + len, sizeof(c->desc) - len, "%s%s",
								 i > 0 ? "," : " ", column_names[c->keys[i]]);
	snprintf(c->desc + len, sizeof(c->desc) - len,
			 " probe=%lld build=%lld/%lld pool=%d nulls=%.1f batch=%lld/%lld",
			 (long long) nprobe, (long long) c->side[GS_BUILD1].n,
			 (long long) c->side[GS_BUILD2].n, pool, null_rate, (long long) c->batch_rows,
			 (long long) c->string_bytes);
}

/* Free a case's sides. */
static void
gs_free_case(GsCase *c)
{
	int			s;

	for (s = 0; s < 3; s++)
	{
		free(c->side[s].rows);
		free(c->side[s].heap);
	}
}

/* ------------------------------------------------------------------------
 * The reference
 * ------------------------------------------------------------------------
 */

/* Append a joined row. */
static void
gs_push(GsTuples *v, int32_t p, int32_t b1, int32_t b2)
{
	if (v->n == v->cap)
	{
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->t = realloc(v->t, sizeof(GsTuple) * (size_t) v->cap);
	}
	v->t[v->n].row[GS_PROBE] = p;
	v->t[v->n].row[GS_BUILD1] = b1;
	v->t[v->n].row[GS_BUILD2] = b2;
	v->n++;
}

/* Whether probe row p and step 0's build row b hold equal strings (both non-null). */
static int
gs_strings_equal(const GsCase *c, const GsRow *p, const GsRow *b)
{
	return !p->snull && !b->snull && p->len == b->len &&
		(p->len == 0 || memcmp(c->side[GS_PROBE].heap + p->at,
							   c->side[GS_BUILD1].heap + b->at, p->len) == 0);
}

/*
 * Step s over the rows `in`: every row's matches among the step's build
 * rows (those with a key; with the strings too for a string join), as the
 * step's type forms them, then, for RIGHT and FULL, the build rows no row
 * matched, every other side null.
 */
static void
gs_step(const GsCase *c, int s, const GsTuples *in, GsTuples *out)
{
	const GsSide *build = &c->side[s + 1];
	GaAggJoinType type = c->type[s];
	int64_t		range = 1;
	int64_t    *first;
	int64_t    *next;
	uint8_t    *matched = calloc((size_t) (build->n + 1), 1);
	int64_t		i,
				b;

	for (b = 0; b < build->n; b++)
		if (build->rows[b].key + 1 > range)
			range = build->rows[b].key + 1;
	first = malloc(sizeof(int64_t) * (size_t) range);
	next = malloc(sizeof(int64_t) * (size_t) (build->n + 1));
	for (i = 0; i < range; i++)
		first[i] = -1;
	for (b = build->n - 1; b >= 0; b--)
	{
		const GsRow *row = &build->rows[b];

		if (row->knull || (s == 0 && c->string_join && row->snull))
			continue;
		next[b] = first[row->key];
		first[row->key] = b;
	}
	for (i = 0; i < in->n; i++)
	{
		const GsTuple *t = &in->t[i];
		const GsRow *from = NULL;
		int64_t		key = -1;
		int64_t		matches = 0;

		/* the row's key: step 0's of the probe; step 1's of the probe or step 0's build */
		if (s == 0)
		{
			from = &c->side[GS_PROBE].rows[t->row[GS_PROBE]];
			if (!from->knull)
				key = from->key;
		}
		else
		{
			int			side = c->snowflake ? GS_BUILD1 : GS_PROBE;

			if (t->row[side] >= 0 && !c->side[side].rows[t->row[side]].lnull)
				key = c->side[side].rows[t->row[side]].link;
		}
		for (b = key >= 0 && key < range ? first[key] : -1; b >= 0; b = next[b])
		{
			int32_t		row[3];

			if (s == 0 && c->string_join && !gs_strings_equal(c, from, &build->rows[b]))
				continue;
			matches++;
			matched[b] = 1;
			if (type == GA_AGGJOIN_SEMI || type == GA_AGGJOIN_ANTI)
				continue;
			memcpy(row, t->row, sizeof(row));
			row[s + 1] = (int32_t) b;
			gs_push(out, row[0], row[1], row[2]);
		}
		if ((matches == 0 && (type == GA_AGGJOIN_LEFT || type == GA_AGGJOIN_FULL ||
							  type == GA_AGGJOIN_ANTI)) ||
			(matches > 0 && type == GA_AGGJOIN_SEMI))
			gs_push(out, t->row[0], t->row[1], t->row[2]);
	}
	if (type == GA_AGGJOIN_RIGHT || type == GA_AGGJOIN_FULL)
		for (b = 0; b < build->n; b++)
			if (!matched[b])
				gs_push(out, -1, s == 0 ? (int32_t) b : -1, s == 1 ? (int32_t) b : -1);
	free(first);
	free(next);
	free(matched);
}

/* Order groups by their keys: null first, then bytes, length, integer. */
static int
gs_group_compare(const void *pa, const void *pb)
{
	const GsGroup *a = pa;
	const GsGroup *b = pb;
	int			k;

	for (k = 0; k < GS_MAX_KEYS; k++)
	{
		const GsKey *x = &a->key[k];
		const GsKey *y = &b->key[k];
		uint32_t	n = x->len < y->len ? x->len : y->len;
		int			cmp;

		if (x->isnull != y->isnull)
			return x->isnull ? -1 : 1;
		if (x->isnull)
			continue;
		cmp = n > 0 ? memcmp(x->bytes, y->bytes, n) : 0;
		if (cmp != 0)
			return cmp;
		if (x->len != y->len)
			return x->len < y->len ? -1 : 1;
		if (x->ival != y->ival)
			return x->ival < y->ival ? -1 : 1;
	}
	return 0;
}

/* The row of column c's side in a joined row, or NULL where that side is null. */
static const GsRow *
gs_tuple_row(const GsCase *c, const GsTuple *t, int col)
{
	int			side = gs_column_side(col);

	return t->row[side] < 0 ? NULL : &c->side[side].rows[t->row[side]];
}

/*
 * The reference: the case's joined rows grouped by their keys' exact
 * bytes, sorted; their count in *ngroups, the joined rows in *njoined.
 */
static GsGroup *
gs_reference(const GsCase *c, int64_t *ngroups, int64_t *njoined)
{
	GsTuples	level = {0},
				next = {0};
	GsGroup    *groups;
	int64_t		n = 0;
	int64_t		i;
	int			s,
				k,
				a;

	for (i = 0; i < c->side[GS_PROBE].n; i++)
		gs_push(&level, (int32_t) i, -1, -1);
	for (s = 0; s < c->nsteps; s++)
	{
		next.n = 0;
		gs_step(c, s, &level, &next);
		{
			GsTuples	swap = level;

			level = next;
			next = swap;
		}
	}
	*njoined = level.n;
	groups = calloc((size_t) (level.n + 1), sizeof(GsGroup));
	for (i = 0; i < level.n; i++)
	{
		const GsTuple *t = &level.t[i];
		GsGroup    *g = &groups[i];

		for (k = 0; k < c->nkeys; k++)
		{
			int			col = c->keys[k];
			const GsRow *row = gs_tuple_row(c, t, col);

			if (col == GS_P_SMALL)
			{
				g->key[k].isnull = row == NULL || row->small_null;
				g->key[k].ival = g->key[k].isnull ? 0 : row->small;
			}
			else
			{
				g->key[k].isnull = row == NULL || row->snull;
				if (!g->key[k].isnull)
				{
					g->key[k].bytes = c->side[gs_column_side(col)].heap + row->at;
					g->key[k].len = row->len;
				}
			}
		}
		for (a = 0; a < c->naggs; a++)
		{
			const GaAggSpec *spec = &c->aggs[a];
			const GsRow *row = spec->column < 0 ? NULL : gs_tuple_row(c, t, spec->column);

			if (spec->op == GA_AGG_COUNT_ROWS)
				g->agg[a] = 1;
			else if (row == NULL)
				continue;
			else if (spec->column == gs_string_column(gs_column_side(spec->column)))
				g->agg[a] = !row->snull;
			else if (!row->vnull)
				g->agg[a] = spec->op == GA_AGG_COUNT ? 1 : row->value;
		}
	}
	free(level.t);
	free(next.t);
	qsort(groups, (size_t) *njoined, sizeof(GsGroup), gs_group_compare);
	for (i = 0; i < *njoined; i++)
	{
		if (n > 0 && gs_group_compare(&groups[n - 1], &groups[i]) == 0)
			for (a = 0; a < c->naggs; a++)
				groups[n - 1].agg[a] += groups[i].agg[a];
		else
			groups[n++] = groups[i];
	}
	*ngroups = n;
	return groups;
}

/* ------------------------------------------------------------------------
 * A device run
 * ------------------------------------------------------------------------
 */

/* Write side row `row` into row r of the side's columns of batch (those typed). */
static void
gs_put_row(const GsCase *c, int side, const GsRow *row, GaBatch *batch, int64_t r)
{
	const int	key_col[3] = {GS_P_KEY, GS_B1_KEY, GS_B2_KEY};
	const int	link_col[3] = {GS_P_LINK, GS_B1_LINK, -1};
	const int	value_col[3] = {GS_P_VALUE, GS_B1_VALUE, GS_B2_VALUE};
	GaColumn   *scol = &batch->columns[gs_string_column(side)];
	GaColumn   *col;

	if (scol->type == GA_TYPE_STRING)
	{
		uint32_t	used = ga_string_used(scol, r);

		if (row->snull)
			ga_column_set_null(scol, r);
		else
			memcpy(scol->bytes + used, c->side[side].heap + row->at, row->len);
		((uint32_t *) scol->values)[r] = used + (row->snull ? 0 : row->len);
	}
	col = &batch->columns[key_col[side]];
	((int64_t *) col->values)[r] = row->key;
	if (row->knull)
		ga_column_set_null(col, r);
	if (link_col[side] >= 0)
	{
		col = &batch->columns[link_col[side]];
		((int64_t *) col->values)[r] = row->link;
		if (row->lnull)
			ga_column_set_null(col, r);
	}
	col = &batch->columns[value_col[side]];
	((int32_t *) col->values)[r] = (int32_t) row->value;
	if (row->vnull)
		ga_column_set_null(col, r);
	if (side == GS_PROBE)
	{
		col = &batch->columns[GS_P_SMALL];
		((int16_t *) col->values)[r] = (int16_t) row->small;
		if (row->small_null)
			ga_column_set_null(col, r);
	}
}

/*
 * Give step s its build side: a payload of every column (the step's
 * filled), and the rows with a key (keys listed unless the step is hashed).
 */
static int
gs_build(const GsCase *c, GaAgg *agg, int s, const GaValueType *types, int ncolumns,
		 int hashed, GaStatus *st)
{
	const GsSide *side = &c->side[s + 1];
	int64_t		n = side->n;
	GaColumn	cols[GS_NCOLUMNS];
	GaBatch		payload;
	int64_t    *keys = calloc((size_t) (n + 1), sizeof(int64_t));
	uint32_t   *rows = calloc((size_t) (n + 1), sizeof(uint32_t));
	int64_t		nrows = 0;
	int64_t		r;
	int			col;
	int			ok;

	memset(cols, 0, sizeof(cols));
	for (col = 0; col < ncolumns; col++)
	{
		cols[col].type = types[col];
		cols[col].values = calloc((size_t) (n + 1), 8);
		cols[col].validity = malloc((size_t) (n + 8) / 8 + 1);
		memset(cols[col].validity, 0xff, (size_t) (n + 8) / 8 + 1);
		if (types[col] == GA_TYPE_STRING)
		{
			cols[col].bytes = malloc((size_t) side->heap_used + 1);
			cols[col].bytes_capacity = side->heap_used + 1;
		}
	}
	memset(&payload, 0, sizeof(payload));
	payload.nrows = payload.capacity = n;
	payload.ncolumns = ncolumns;
	payload.columns = cols;
	for (r = 0; r < n; r++)
	{
		const GsRow *row = &side->rows[r];

		gs_put_row(c, s + 1, row, &payload, r);
		if (row->knull || (hashed && row->snull))
			continue;
		keys[nrows] = row->key;
		rows[nrows++] = (uint32_t) r;
	}
	ok = ga_aggjoin_build(agg, s, hashed ? NULL : keys, rows, nrows, &payload, NULL, NULL, st);
	for (col = 0; col < ncolumns; col++)
	{
		free(cols[col].values);
		free(cols[col].validity);
		free(cols[col].bytes);
	}
	free(keys);
	free(rows);
	return ok;
}

/* Whether key column col is typed as a string in case c. */
static int
gs_is_string_key(const GsCase *c, int col)
{
	int			k;

	if (c->string_join && (col == GS_P_STR || col == GS_B1_STR))
		return 1;
	for (k = 0; k < c->nkeys; k++)
		if (c->keys[k] == col)
			return 1;
	return 0;
}

/*
 * Run the case on a device with hash_bits; the failures (0 or 1), or -1
 * when the device does not group joined rows by strings.
 */
static int
gs_run(const GsCase *c, const GsGroup *ref, int64_t nref, GaDevice *device,
	   GaStrategy strategy, int hash_bits, const char *label, int no)
{
	GaValueType types[GS_NCOLUMNS] = {
		GA_TYPE_INT64, GA_TYPE_INT64, GA_TYPE_STRING, GA_TYPE_INT16, GA_TYPE_INT32,
		GA_TYPE_INT64, GA_TYPE_INT64, GA_TYPE_STRING, GA_TYPE_INT32,
		GA_TYPE_INT64, GA_TYPE_STRING, GA_TYPE_INT32
	};
	uint8_t		from_build[GS_NCOLUMNS];
	int			ncolumns = c->nsteps == 2 ? GS_NCOLUMNS : GS_ONE_STEP_COLUMNS;
	const GsSide *probe = &c->side[GS_PROBE];
	GaAggJoinSpec spec;
	GaAggRequest req;
	const GaAggResult *res;
	GaStatus	st;
	GaAgg	   *agg;
	GsGroup    *got = NULL;
	int64_t		r;
	int			fail = 0;
	int			col,
				k,
				a;

	for (col = 0; col < GS_NCOLUMNS; col++)
	{
		from_build[col] = (uint8_t) gs_column_side(col);
		if (types[col] == GA_TYPE_STRING && !gs_is_string_key(c, col))
			types[col] = GA_TYPE_INT8;	/* no key: unused */
	}
	memset(&spec, 0, sizeof(spec));
	spec.nsteps = c->nsteps;
	spec.steps[0].type = c->type[0];
	spec.steps[0].key_column = GS_P_KEY;
	if (c->string_join)
	{
		spec.steps[0].hashed = 1;
		spec.steps[0].nkeys = 2;
		spec.steps[0].key_columns[0] = GS_P_STR;
		spec.steps[0].build_key_columns[0] = GS_B1_STR;
		spec.steps[0].key_columns[1] = GS_P_KEY;
		spec.steps[0].build_key_columns[1] = GS_B1_KEY;
	}
	spec.steps[1].type = c->type[1];
	spec.steps[1].key_column = c->snowflake ? GS_B1_LINK : GS_P_LINK;
	spec.from_build = from_build;
	memset(&req, 0, sizeof(req));
	req.ncolumns = ncolumns;
	req.column_types = types;
	req.nkeys = c->nkeys;
	req.key_columns = c->keys;
	req.naggs = c->naggs;
	req.aggs = c->aggs;
	req.batch_rows = c->batch_rows;
	req.estimated_groups = 100;
	req.strategy = strategy;
	req.join = &spec;
	req.string_bytes = c->string_bytes;
	req.debug_hash_bits = hash_bits;
	agg = ga_agg_create(device, &req, &st);
	if (agg == NULL)
	{
		if (st.code == GA_ERR_INVALID &&
			!ga_device_kind_groups_join_strings(ga_device_kind(device)))
			return -1;
		printf("aggjoin group strings %d [%s] create failed: %s\n", no, label, st.message);
		return 1;
	}
	if (!gs_build(c, agg, 0, types, ncolumns, c->string_join, &st) ||
		(c->nsteps == 2 && !gs_build(c, agg, 1, types, ncolumns, 0, &st)))
		goto failed;

	/* the probe side, in batches that keep to their rows and bytes */
	for (r = 0; r < probe->n;)
	{
		GaBatch    *batch = ga_agg_next_batch(agg, NULL, NULL, &st);
		GaColumn   *scol;

		if (batch == NULL)
			goto failed;
		scol = &batch->columns[GS_P_STR];
		while (r < probe->n && batch->nrows < batch->capacity &&
			   (scol->type != GA_TYPE_STRING ||
				ga_string_used(scol, batch->nrows) + probe->rows[r].len <=
				(uint64_t) scol->bytes_capacity))
		{
			gs_put_row(c, GS_PROBE, &probe->rows[r], batch, batch->nrows);
			batch->nrows++;
			r++;
		}
		if (!ga_agg_submit(agg, batch, NULL, NULL, &st))
			goto failed;
	}
	res = ga_agg_finish(agg, NULL, NULL, &st);
	if (res == NULL)
		goto failed;

	/* the groups, as the reference has them */
	got = calloc((size_t) (res->ngroups + 1), sizeof(GsGroup));
	for (r = 0; !fail && r < res->ngroups; r++)
	{
		for (k = 0; k < c->nkeys; k++)
		{
			GsKey	   *key = &got[r].key[k];

			key->isnull = res->key_isnull[k][r] != 0;
			if (c->keys[k] == GS_P_SMALL)
				key->ival = key->isnull ? 0 : res->key_values[k][r];
			else
			{
				int64_t		start = r > 0 ? res->key_values[k][r - 1] : 0;
				int64_t		end = res->key_values[k][r];

				if (res->key_bytes == NULL || res->key_bytes[k] == NULL || end < start ||
					(key->isnull && end != start))
				{
					printf("aggjoin group strings %d [%s] group %lld: string key %d has no bytes, or bytes %lld .. %lld%s\n",
						   no, label, (long long) r, k, (long long) start, (long long) end,
						   key->isnull ? " though null" : "");
					fail = 1;
					break;
				}
				key->bytes = res->key_bytes[k] + start;
				key->len = (uint32_t) (end - start);
			}
		}
		for (a = 0; a < c->naggs; a++)
			got[r].agg[a] = c->aggs[a].op == GA_AGG_SUM_INT ?
				(int64_t) ((const GaInt128 *) res->values[a])[r].lo :
				((const int64_t *) res->values[a])[r];
	}
	if (!fail)
	{
		qsort(got, (size_t) res->ngroups, sizeof(GsGroup), gs_group_compare);
		if (res->ngroups != nref)
		{
			printf("aggjoin group strings %d [%s] bits %d: %lld groups, expected %lld\n",
				   no, label, hash_bits, (long long) res->ngroups, (long long) nref);
			fail = 1;
		}
	}
	for (r = 0; !fail && r < nref; r++)
		if (gs_group_compare(&got[r], &ref[r]) != 0 ||
			memcmp(got[r].agg, ref[r].agg, sizeof(int64_t) * (size_t) c->naggs) != 0)
		{
			printf("aggjoin group strings %d [%s] bits %d: group %lld differs:", no, label,
				   hash_bits, (long long) r);
			for (k = 0; k < c->nkeys; k++)
				printf(" key %d %s %u bytes / expected %s %u bytes;", k,
					   got[r].key[k].isnull ? "null" : "value of", got[r].key[k].len,
					   ref[r].key[k].isnull ? "null" : "value of", ref[r].key[k].len);
			for (a = 0; a < c->naggs; a++)
				printf(" agg %d %lld / %lld", a, (long long) got[r].agg[a],
					   (long long) ref[r].agg[a]);
			printf("\n");
			fail = 1;
		}
	free(got);
	ga_agg_destroy(agg);
	return fail;

failed:
	printf("aggjoin group strings %d [%s] failed: %s\n", no, label, st.message);
	ga_agg_destroy(agg);
	return 1;
}

/*
 * Run ncases aggjoin cases grouped by strings on every device run; returns
 * the failures and adds the checks made to *checks.
 */
int64_t
aggjoin_group_strings_suite(GaDevice *const *devices, const GaStrategy *strategies,
							const char *const *labels, int ndevices, int ncases,
							uint64_t seed, int64_t *checks)
{
	static const int hash_bits[] = {0, 1, 3};
	int64_t		failures = 0;
	int			i;

	for (i = 0; i < ncases; i++)
	{
		GsCase		c;
		GsGroup    *ref;
		int64_t		nref,
					njoined;
		Rng			rng;
		char		line[1024];
		size_t		len;
		int			nbits;
		int			j,
					h;

		conformance_set_current("aggjoin group strings", i);
		rng_seed(&rng, seed * UINT64_C(0x94d049bb133111eb) + (uint64_t) i);
		gs_build_case(&c, i, &rng);
		ref = gs_reference(&c, &nref, &njoined);
		nbits = nref <= GS_BITS_GROUPS ? 3 : 1;
		len = (size_t) snprintf(line, sizeof(line),
								"aggjoin group strings %3d groups=%lld joined=%lld %s%s", i,
								(long long) nref, (long long) njoined, c.desc,
								nbits == 3 ? " bits=all,1,3" : "");
		for (j = 0; j < ndevices; j++)
		{
			const char *verdict = "ok";

			for (h = 0; h < nbits; h++)
			{
				int			f = gs_run(&c, ref, nref, devices[j], strategies[j],
									   hash_bits[h], labels[j], i);

				if (f < 0)
				{
					verdict = "skipped (groups no strings of joined rows)";
					break;
				}
				failures += f;
				(*checks)++;
				if (f)
					verdict = "FAIL";
			}
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s %s",
										 labels[j], verdict);
		}
		printf("%s\n", line);
		free(ref);
		gs_free_case(&c);
	}
	return failures;
}
