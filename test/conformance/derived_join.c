/*-------------------------------------------------------------------------
 *
 * derived_join.c
 *	  The derived column suite's aggjoin cases: derived columns whose
 *	  operands and NaN flags come from the probe side and from one or two
 *	  build sides, computed by the device in the rows of the join's last
 *	  step, checked against the join formed here, on the host.
 *
 * The reference.  Every step's keyed build rows are sorted by key; each
 * probe row is walked through the steps (a null or missing key gives no
 * match; a LEFT step then gives one row whose step columns are null, an
 * INNER step none), and the rows of the last step become the rows of a
 * derived case (derived.c), whose derived columns the reference computes
 * in those joined rows: a build column that a LEFT step left null makes
 * the expression null.  A RIGHT last step joins like INNER and a FULL one
 * like LEFT, and after every probe row each of its build rows that no row
 * matched gives one row with every other column null (so an expression
 * over its build columns alone keeps a value there).  The device's groups are checked by check_result
 * and the limb sums as in derived.c, the join's statistics as aggjoin.c
 * checks them, bytes_sent on the CPU device without derived columns.
 *
 * Columns (fixed places): a probe group key, the first step's probe key,
 * a probe int32 operand A with a probe NaN flag, a build int64 operand B
 * with a build NaN flag, the second step's key (a column of the first
 * build side), an int16 operand C (of the second build side, or of the
 * probe side when there is one step), then the derived columns.
 *
 *-------------------------------------------------------------------------
 */
#include "derived.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A row that found no build row at a step (LEFT, FULL), or no probe row. */
#define DJ_NO_ROW (-1)

/* The columns (the derived ones follow). */
enum
{
	J_G,						/* int16 group key, probe */
	J_K1,						/* int64 key of step 1, probe */
	J_A,						/* int32 operand, probe */
	J_FA,						/* NaN flag of A, probe */
	J_B,						/* int64 operand, build side 1 */
	J_FB,						/* NaN flag of B, build side 1 */
	J_K2,						/* int64 key of step 2, build side 1 */
	J_C,						/* int16 operand, build side 2 (probe with one step) */
	J_NCOLS
};

/* An aggjoin case: its sides, the device's builds, and the joined rows. */
typedef struct DjCase
{
	DvCase		dc;				/* the joined rows, the derived columns */
	GaAggJoinSpec spec;
	uint8_t		from_build[MAX_COLUMNS];

	/* every non-derived column over the rows of its side */
	int64_t		side_rows[3];	/* probe, build 1, build 2 */
	void	   *values[J_NCOLS];
	uint8_t    *isnull[J_NCOLS];
	uint8_t    *validity[J_NCOLS];	/* build columns with nulls: the bitmap */
	int			has_nulls[J_NCOLS];

	/* each step's keyed build rows: as given, and sorted */
	int64_t		nkeyed[2];
	int64_t    *keys[2];
	uint32_t   *rows[2];
	KeyEntry   *sorted[2];

	/* the probe batches and what they must give */
	int			nbatches;
	int64_t    *batch_sizes;
	int64_t		expected_batches;
	int64_t		expected_bytes;
} DjCase;

/* What case `index` is: steps, sizes, programs. */
typedef struct DjSpec
{
	const char *label;
	int			nsteps;
	GaAggJoinType types[2];
	int64_t		nprobe;
	int64_t		nbuild[2];
	int64_t		domain[2];		/* build keys drawn from */
	int64_t		probe_domain[2];	/* probe keys drawn from (more: misses) */
	int			grouped;
	int64_t		batch_rows;
	int			random_programs;
} DjSpec;

static const DjSpec dj_specs[DV_NUM_JOIN_CASES] = {
	{"left", 1, {GA_AGGJOIN_LEFT}, 3000, {500}, {400}, {450}, 0, 1024, 0},
	{"left-grouped-small-pieces", 1, {GA_AGGJOIN_LEFT}, 2000, {300}, {100}, {120}, 1, 7, 0},
	{"inner-left-chain", 2, {GA_AGGJOIN_INNER, GA_AGGJOIN_LEFT}, 2000, {400, 200}, {300, 150},
	{320, 170}, 1, 512, 0},
	{"inner-build-only", 1, {GA_AGGJOIN_INNER}, 1500, {1000}, {1000}, {1100}, 1, 256, 0},
	{"left-left-random", 2, {GA_AGGJOIN_LEFT, GA_AGGJOIN_LEFT}, 1500, {300, 200}, {250, 100},
	{300, 130}, 1, 333, 1},
	{"left-random-tiny", 1, {GA_AGGJOIN_LEFT}, 200, {50}, {30}, {40}, 0, 3, 1},
	{"right-build-operands", 1, {GA_AGGJOIN_RIGHT}, 1500, {600}, {500}, {700}, 1, 64, 0},
	{"inner-full-chain", 2, {GA_AGGJOIN_INNER, GA_AGGJOIN_FULL}, 2000, {400, 300}, {300, 250},
	{320, 300}, 1, 100, 0},
	{"left-right-random", 2, {GA_AGGJOIN_LEFT, GA_AGGJOIN_RIGHT}, 1000, {300, 200}, {250, 150},
	{300, 200}, 0, 13, 1},
};

/*
 * Draw column col's rows on its side: integers of at most `bits` bits (a
 * key: from [0, domain)), nulls at null_rate (a NaN flag: valid, i.e. NaN,
 * at 1 - null_rate); null rows hold garbage.
 */
static void
dj_gen_column(DjCase *jc, Rng *rng, int col, int bits, int64_t domain, double null_rate)
{
	GaValueType type = jc->dc.c.types[col];
	int64_t		n = jc->side_rows[jc->from_build[col]];
	int			width = ga_type_width(type);
	int64_t		i;

	jc->values[col] = calloc(n > 0 ? n : 1, width > 0 ? width : 1);
	jc->isnull[col] = calloc(n > 0 ? n : 1, 1);
	for (i = 0; i < n; i++)
	{
		int64_t		m = bits >= 63 ? INT64_MAX : (INT64_C(1) << bits) - 1;
		int64_t		v = domain > 0 ? rng_range(rng, 0, domain - 1) : rng_range(rng, -m, m);

		jc->isnull[col][i] = (uint8_t) rng_chance(rng, null_rate);
		jc->has_nulls[col] |= jc->isnull[col][i];
		if (width == 0)
			continue;
		if (jc->isnull[col][i])
			v = domain > 0 ? -1 : INT64_C(0x7a7a7a7a7a7a7a7a);
		store_int(jc->values[col], type, i, v);
	}
	if (jc->from_build[col] && jc->has_nulls[col])
	{
		jc->validity[col] = malloc((size_t) (n + 7) / 8 + 1);
		memset(jc->validity[col], 0xff, (size_t) (n + 7) / 8 + 1);
		for (i = 0; i < n; i++)
			if (jc->isnull[col][i])
				jc->validity[col][i >> 3] &= (uint8_t) ~(1u << (i & 7));
	}
}

/* Draw step s's build keys (nulls left out of the keyed rows) and sort them. */
static void
dj_gen_build(DjCase *jc, Rng *rng, int s, int64_t domain)
{
	int64_t		n = jc->side_rows[s + 1];
	int64_t		i;

	jc->keys[s] = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
	jc->rows[s] = malloc(sizeof(uint32_t) * (n > 0 ? n : 1));
	jc->sorted[s] = malloc(sizeof(KeyEntry) * (n > 0 ? n : 1));
	jc->nkeyed[s] = 0;
	for (i = 0; i < n; i++)
	{
		if (rng_chance(rng, 0.05))
			continue;			/* a null build key: never matches */
		jc->keys[s][jc->nkeyed[s]] = rng_range(rng, 0, domain - 1);
		jc->rows[s][jc->nkeyed[s]] = (uint32_t) i;
		jc->sorted[s][jc->nkeyed[s]].key = jc->keys[s][jc->nkeyed[s]];
		jc->sorted[s][jc->nkeyed[s]].row = i;
		jc->nkeyed[s]++;
	}
	qsort(jc->sorted[s], (size_t) jc->nkeyed[s], sizeof(KeyEntry), key_entry_cmp);
}

/* The value of int64 key column col in a row of sources; 0 when null. */
static int
dj_key(const DjCase *jc, int col, const int64_t *tuple, int64_t *key)
{
	int64_t		src = tuple[jc->from_build[col]];

	if (src == DJ_NO_ROW || jc->isnull[col][src])
		return 0;
	*key = ((const int64_t *) jc->values[col])[src];
	return 1;
}

/* The joined rows: sources (probe row, build row of each step) per row. */
typedef struct DjRows
{
	int64_t		n;
	int64_t		capacity;
	int64_t    *tuples;			/* 3 per row */
} DjRows;

/* Walk a row of level s (its sources in tuple) through steps s + 1 ... */
static void
dj_walk(const DjCase *jc, int s, int64_t *tuple, DjRows *out)
{
	int64_t		key,
				first = 0,
				m = 0,
				k;

	if (s == jc->spec.nsteps)
	{
		if (out->n == out->capacity)
		{
			out->capacity = out->capacity > 0 ? 2 * out->capacity : 1024;
			out->tuples = realloc(out->tuples, sizeof(int64_t) * 3 * out->capacity);
		}
		memcpy(out->tuples + 3 * out->n, tuple, sizeof(int64_t) * 3);
		out->n++;
		return;
	}
	if (dj_key(jc, jc->spec.steps[s].key_column, tuple, &key))
		m = key_entry_matches(jc->sorted[s], jc->nkeyed[s], key, &first);
	for (k = 0; k < m; k++)
	{
		tuple[s + 1] = jc->sorted[s][first + k].row;
		dj_walk(jc, s + 1, tuple, out);
	}
	if (m == 0 && (jc->spec.steps[s].type == GA_AGGJOIN_LEFT ||
				   jc->spec.steps[s].type == GA_AGGJOIN_FULL))
	{
		tuple[s + 1] = DJ_NO_ROW;
		dj_walk(jc, s + 1, tuple, out);
	}
}

/*
 * After every probe row, for a RIGHT or FULL last step, append a row for
 * each of its build rows that no joined row holds (no source on any other
 * side).  Returns the rows appended.
 */
static int64_t
dj_add_unmatched(const DjCase *jc, DjRows *rows)
{
	int			last = jc->spec.nsteps;
	GaAggJoinType type = jc->spec.steps[last - 1].type;
	int64_t		nbuild = jc->side_rows[last];
	uint8_t    *matched;
	int64_t		appended = 0,
				i,
				b;

	if (type != GA_AGGJOIN_RIGHT && type != GA_AGGJOIN_FULL)
		return 0;
	matched = calloc(nbuild > 0 ? nbuild : 1, 1);
	for (i = 0; i < rows->n; i++)
		if (rows->tuples[3 * i + last] != DJ_NO_ROW)
			matched[rows->tuples[3 * i + last]] = 1;
	for (b = 0; b < nbuild; b++)
	{
		int64_t		tuple[3] = {DJ_NO_ROW, DJ_NO_ROW, DJ_NO_ROW};

		if (matched[b])
			continue;
		tuple[last] = b;
		if (rows->n == rows->capacity)
		{
			rows->capacity = rows->capacity > 0 ? 2 * rows->capacity : 1024;
			rows->tuples = realloc(rows->tuples, sizeof(int64_t) * 3 * rows->capacity);
		}
		memcpy(rows->tuples + 3 * rows->n, tuple, sizeof(tuple));
		rows->n++;
		appended++;
	}
	free(matched);
	return appended;
}

/*
 * Form the joined rows into the derived case (every non-derived column
 * from its side, null where its side has no row), and count the batches
 * each probe batch makes (and the pieces of a RIGHT or FULL join's
 * unmatched build rows at finish) and the CPU device's bytes_sent.
 */
static void
dj_form_joined(DjCase *jc, Rng *rng)
{
	Case	   *c = &jc->dc.c;
	DjRows		rows = {0, 0, NULL};
	int64_t    *per_probe = calloc(jc->side_rows[0] + 1, sizeof(int64_t));
	int64_t		r,
				i,
				unmatched;
	int			col,
				s;

	for (r = 0; r < jc->side_rows[0]; r++)
	{
		int64_t		tuple[3] = {r, DJ_NO_ROW, DJ_NO_ROW};
		int64_t		before = rows.n;

		dj_walk(jc, 0, tuple, &rows);
		per_probe[r] = rows.n - before;
	}
	unmatched = dj_add_unmatched(jc, &rows);
	dv_alloc_rows(&jc->dc, rows.n);
	for (col = 0; col < J_NCOLS; col++)
	{
		int			width = ga_type_width(c->types[col]);

		for (i = 0; i < rows.n; i++)
		{
			int64_t		src = rows.tuples[3 * i + jc->from_build[col]];

			c->isnull[col][i] = (uint8_t) (src == DJ_NO_ROW || jc->isnull[col][src]);
			c->has_nulls[col] |= c->isnull[col][i];
			if (width > 0 && src != DJ_NO_ROW)
				memcpy((char *) c->values[col] + i * width,
					   (const char *) jc->values[col] + src * width, (size_t) width);
		}
	}

	jc->nbatches = split_batches(rng, SPLIT_RANDOM, jc->side_rows[0], c->batch_rows,
								 &jc->batch_sizes);
	jc->expected_batches = 0;
	jc->expected_bytes = 0;
	for (s = 0; s < jc->spec.nsteps; s++)
	{
		jc->expected_bytes += jc->nkeyed[s] * (int64_t) (sizeof(int64_t) + sizeof(uint32_t));
		for (col = 0; col < J_NCOLS; col++)
			if (jc->from_build[col] == s + 1)
				jc->expected_bytes += jc->side_rows[s + 1] * ga_type_width(c->types[col]) +
					(jc->has_nulls[col] ? (jc->side_rows[s + 1] + 7) / 8 : 0);
	}
	expect_probe_submits(c, J_NCOLS, jc->nbatches, jc->batch_sizes, per_probe, jc->from_build,
						 jc->isnull, unmatched, &jc->expected_batches, &jc->expected_bytes);
	free(rows.tuples);
	free(per_probe);
}

/*
 * The derived columns of case `spec`: fixed programs over A, B and C (and
 * their NaN flags), or random ones within the bounds of the sides' values.
 */
static void
dj_programs(DjCase *jc, const DjSpec *spec, Rng *rng)
{
	DvCase	   *dc = &jc->dc;
	GaAggJoinType last_type = spec->types[spec->nsteps - 1];
	GaDerivedColumn p,
				q,
				r;

	if (spec->random_programs)
	{
		static const int operands[] = {J_A, J_B, J_C};
		static const int nan_cols[] = {J_FA, J_FB};
		Big			maxabs[J_NCOLS];
		int			k,
					col,
					tries,
					final_bits = 0;
		int64_t		i;

		for (col = 0; col < J_NCOLS; col++)
		{
			big_from_i64(&maxabs[col], 0);
			if (dc->c.types[col] == GA_TYPE_NONE)
				continue;
			for (i = 0; i < jc->side_rows[jc->from_build[col]]; i++)
			{
				Big			v;

				big_from_i64(&v, load_int(jc->values[col], dc->c.types[col], i));
				v.neg = 0;
				if (!jc->isnull[col][i] && big_cmp(&v, &maxabs[col]) > 0)
					maxabs[col] = v;
			}
		}
		for (k = 0; k < 2; k++)
		{
			for (tries = 0; tries < 500; tries++)
			{
				dv_random_program(rng, &p, operands, 3, nan_cols, 2);
				if (dv_bound_bits(&p, maxabs, &final_bits) <= DV_MAX_BITS &&
					final_bits <= DV_LIMB_VALUE_BITS)
					break;
			}
			if (tries == 500)
			{
				dv_program(&p);
				DV_COL(&p, J_B, J_FB);
				final_bits = 64;
			}
			/* the first: its limbs summed, its flag (and value); the second: what fits */
			if (k == 0)
				dv_add_limbs_summed(dc, &p);
			else
				dv_add_part_all_aggs(dc, &p, GA_DERIVED_LIMB, 2);
			if (dc->c.ncolumns < MAX_COLUMNS)
				dv_add_part_all_aggs(dc, &p, GA_DERIVED_NAN, 0);
			if (final_bits <= DV_INT64_VALUE_BITS && dc->c.ncolumns < MAX_COLUMNS)
				dv_add_part_all_aggs(dc, &p, GA_DERIVED_INT64, 0);
		}
		return;
	}

	/* P = A (flag FA) * B (flag FB) * C + 1000: both sides, both flags */
	dv_program(&p);
	DV_COL(&p, J_A, J_FA);
	DV_COL(&p, J_B, J_FB);
	DV_OP(&p, GA_EXPR_MUL);
	DV_COL(&p, J_C, -1);
	DV_OP(&p, GA_EXPR_MUL);
	DV_CONST(&p, 1000);
	DV_OP(&p, GA_EXPR_ADD);
	/* Q = B (flag FB) * 100 + 7 - C: the build sides only (C: probe with one step) */
	dv_program(&q);
	DV_COL(&q, J_B, J_FB);
	DV_SCALE(&q, 2);
	DV_CONST(&q, 7);
	DV_OP(&q, GA_EXPR_ADD);
	DV_COL(&q, J_C, -1);
	DV_OP(&q, GA_EXPR_SUB);
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &p, GA_DERIVED_NAN, 0);
	dv_add_part_all_aggs(dc, &q, GA_DERIVED_INT64, 0);
	if (last_type != GA_AGGJOIN_RIGHT && last_type != GA_AGGJOIN_FULL)
	{
		dv_add_part_all_aggs(dc, &q, GA_DERIVED_NAN, 0);
		dv_add_part_all_aggs(dc, &q, GA_DERIVED_LIMB, 1);
		return;
	}
	/*
	 * Instead of Q's flag and limb (a case holds 16 columns): R = 3 * (the
	 * last build side's operand) + 5, real in its unmatched build rows.
	 */
	dv_program(&r);
	if (spec->nsteps == 2)
		DV_COL(&r, J_C, -1);
	else
		DV_COL(&r, J_B, J_FB);
	DV_CONST(&r, 3);
	DV_OP(&r, GA_EXPR_MUL);
	DV_CONST(&r, 5);
	DV_OP(&r, GA_EXPR_ADD);
	dv_add_part_all_aggs(dc, &r, GA_DERIVED_INT64, 0);
	dv_add_part_all_aggs(dc, &r, GA_DERIVED_NAN, 0);
}

/* Generate case `index`: sides, builds, programs, joined rows. */
static void
dj_build_case(DjCase *jc, int index, Rng *rng)
{
	const DjSpec *spec = &dj_specs[index];
	DvCase	   *dc = &jc->dc;
	static const GaValueType types[J_NCOLS] = {
		GA_TYPE_INT16, GA_TYPE_INT64, GA_TYPE_INT32, GA_TYPE_NONE, GA_TYPE_INT64,
		GA_TYPE_NONE, GA_TYPE_INT64, GA_TYPE_INT16
	};
	int			col,
				s;

	memset(jc, 0, sizeof(*jc));
	for (col = 0; col < J_NCOLS; col++)
		dv_add_column(dc, types[col]);
	jc->from_build[J_B] = jc->from_build[J_FB] = jc->from_build[J_K2] = 1;
	jc->from_build[J_C] = (uint8_t) (spec->nsteps == 2 ? 2 : 0);
	jc->spec.nsteps = spec->nsteps;
	jc->spec.steps[0].type = spec->types[0];
	jc->spec.steps[0].key_column = J_K1;
	jc->spec.steps[1].type = spec->types[1];
	jc->spec.steps[1].key_column = J_K2;
	jc->spec.from_build = jc->from_build;
	dc->join = &jc->spec;
	dc->c.batch_rows = spec->batch_rows;
	dc->c.estimated_groups = 8;
	if (spec->grouped)
		dc->c.key_columns[dc->c.nkeys++] = J_G;
	add_agg(&dc->c, GA_AGG_COUNT_ROWS, -1);

	jc->side_rows[0] = spec->nprobe;
	for (s = 0; s < spec->nsteps; s++)
		jc->side_rows[s + 1] = spec->nbuild[s];
	dj_gen_column(jc, rng, J_G, 0, 5, 0.1);
	dj_gen_column(jc, rng, J_K1, 0, spec->probe_domain[0], 0.05);
	dj_gen_column(jc, rng, J_A, 31, 0, 0.1);
	dj_gen_column(jc, rng, J_FA, 0, 0, 0.95);
	dj_gen_column(jc, rng, J_B, 40, 0, 0.1);
	dj_gen_column(jc, rng, J_FB, 0, 0, 0.95);
	dj_gen_column(jc, rng, J_K2, 0, spec->nsteps == 2 ? spec->probe_domain[1] : 10, 0.05);
	dj_gen_column(jc, rng, J_C, 15, 0, 0.1);
	for (s = 0; s < spec->nsteps; s++)
		dj_gen_build(jc, rng, s, spec->domain[s]);
	dj_programs(jc, spec, rng);
	dj_form_joined(jc, rng);
	dv_fill_derived(dc);
	sort_reference(&dc->c);
	dc->c.nbatches = jc->nbatches;	/* for the description only */
	dv_describe(dc, spec->label);
}

/* Free a case's data. */
static void
dj_free_case(DjCase *jc)
{
	int			i;

	for (i = 0; i < J_NCOLS; i++)
	{
		free(jc->values[i]);
		free(jc->isnull[i]);
		free(jc->validity[i]);
	}
	for (i = 0; i < 2; i++)
	{
		free(jc->keys[i]);
		free(jc->rows[i]);
		free(jc->sorted[i]);
	}
	free(jc->batch_sizes);
	free_case(&jc->dc.c);
}

/*
 * Give step s's build side: its keyed rows, and a payload with its build
 * columns only (every other column without arrays, so reading one
 * crashes).
 */
static int
dj_build(const DjCase *jc, GaAgg *agg, int s, WaitState *ws, GaStatus *st)
{
	GaColumn	columns[MAX_COLUMNS];
	GaBatch		payload;
	int			col;

	memset(columns, 0, sizeof(columns));
	for (col = 0; col < jc->dc.c.ncolumns; col++)
	{
		columns[col].type = jc->dc.c.types[col];
		if (col >= J_NCOLS || jc->from_build[col] != s + 1)
			continue;
		columns[col].values = jc->values[col];
		columns[col].validity = jc->validity[col];
		columns[col].has_nulls = jc->has_nulls[col];
	}
	payload.nrows = jc->side_rows[s + 1];
	payload.capacity = payload.nrows + 5;
	payload.ncolumns = jc->dc.c.ncolumns;
	payload.columns = columns;
	return ga_aggjoin_build(agg, s, jc->keys[s], jc->rows[s], jc->nkeyed[s], &payload,
							 test_wait, ws, st);
}

/*
 * Fill a probe batch with probe rows [start, start + n): probe columns as
 * drawn, build and derived columns with garbage and false nulls.
 */
static void
dj_fill_batch(const DjCase *jc, GaBatch *b, int64_t start, int64_t n)
{
	uint8_t		garbage[MAX_COLUMNS];
	int			col;

	for (col = 0; col < jc->dc.c.ncolumns; col++)
		garbage[col] = col >= J_NCOLS || jc->from_build[col];
	fill_probe_batch(b, &jc->dc.c, garbage, jc->values, jc->isnull, 2, start, n);
}

/* Run a case on one device run; returns the problems found. */
static int64_t
dj_run(const DjCase *jc, int index, GaDevice *dev, GaStrategy strategy, const char *label,
	   int verbose, char *summary, size_t summary_len)
{
	const Case *c = &jc->dc.c;
	RunReport	rr = {index, label, 0, 0, "derived join"};
	WaitState	ws = {0, 0, 0};
	GaAgg	   *agg;
	GaStatus	st;
	GaAggStats	stats;
	const GaAggResult *res;
	int64_t		start = 0,
				keyed = 0,
				by = 0;
	double		t0 = now_ms();
	int			s,
				b;

	agg = dv_create(&jc->dc, dev, strategy, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		goto done;
	}
	for (s = jc->spec.nsteps - 1; s >= 0; s--)	/* any order: the last first */
		if (!dj_build(jc, agg, s, &ws, &st))
		{
			report(&rr, "build of step %d failed: code %d: %s", s, st.code, st.message);
			goto done;
		}
	for (b = 0; b < jc->nbatches; b++)
	{
		GaBatch    *batch = run_next_batch(agg, c, b, &ws, &rr);

		if (batch == NULL)
			goto done;
		dj_fill_batch(jc, batch, start, jc->batch_sizes[b]);
		if (!run_submit(agg, batch, b, &ws, &rr))
			goto done;
		start += jc->batch_sizes[b];
	}
	res = run_finish(agg, &ws, &rr);
	if (res == NULL)
		goto done;
	check_result(c, res, &rr);
	dv_check_limb_sums(&jc->dc, res, &rr);

	ga_agg_get_stats(agg, &stats);
	for (s = 0; s < jc->spec.nsteps; s++)
		keyed += jc->nkeyed[s];
	for (s = 0; s < GA_NUM_STRATEGIES; s++)
		by += stats.batches_by_strategy[s];
	if (stats.batches != jc->expected_batches || by != stats.batches ||
		stats.input_rows != jc->side_rows[0] || stats.joined_rows != c->nrows ||
		stats.join_build_rows != keyed || stats.groups != res->ngroups)
		report(&rr, "stats: batches %lld (by strategy %lld) input_rows %lld joined_rows %lld join_build_rows %lld groups %lld, expected %lld, %lld, %lld, %lld, %lld",
			   (long long) stats.batches, (long long) by, (long long) stats.input_rows,
			   (long long) stats.joined_rows, (long long) stats.join_build_rows,
			   (long long) stats.groups, (long long) jc->expected_batches,
			   (long long) jc->side_rows[0], (long long) c->nrows, (long long) keyed,
			   (long long) res->ngroups);
	if (ga_device_kind(dev) == GA_DEVICE_CPU && stats.bytes_sent != jc->expected_bytes)
		report(&rr, "stats: bytes_sent %lld, expected %lld (derived columns are never sent)",
			   (long long) stats.bytes_sent, (long long) jc->expected_bytes);
	if (verbose)
		print_stats("derived join", index, label, &stats, 1);

done:
	return run_end(agg, &ws, &rr, label, t0, summary, summary_len);
}

/* Generate aggjoin case `index` and run it on every device run. */
int64_t
dv_join_case(int index, GaDevice *const *devices, const GaStrategy *strategies,
			 const char *const *labels, int nruns, uint64_t seed, int verbose, int64_t *checks)
{
	DjCase	   *jc = malloc(sizeof(DjCase));
	Rng			rng;
	char		line[1400];
	size_t		len;
	int64_t		failures = 0;
	int			j;

	rng_seed(&rng, seed * UINT64_C(0x100000001b3) + UINT64_C(0x701d) * (uint64_t) (index + 1));
	dj_build_case(jc, index, &rng);
	len = (size_t) snprintf(line, sizeof(line),
							"derived join %d groups=%lld probe=%lld steps=%d %s", index,
							(long long) jc->dc.c.ngroups, (long long) jc->side_rows[0],
							jc->spec.nsteps, jc->dc.desc);
	for (j = 0; j < nruns; j++)
	{
		char		summary[160];

		failures += dj_run(jc, index, devices[j], strategies[j], labels[j], verbose, summary,
						   sizeof(summary));
		(*checks)++;
		if (len < sizeof(line))
			len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s", summary);
	}
	printf("%s\n", line);
	fflush(stdout);
	dj_free_case(jc);
	free(jc);
	return failures;
}
