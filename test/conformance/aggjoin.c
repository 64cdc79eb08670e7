/*-------------------------------------------------------------------------
 *
 * aggjoin.c
 *	  Device conformance test of the aggjoin (the "Aggregation
 *	  fed by a hash join" part of gpuagg_device.h): seeded random probe
 *	  sides and chains of 1 to GA_AGG_MAX_JOIN_STEPS build sides go to every
 *	  device run (the CPU, and the GPU under each strategy), and the groups
 *	  that come back are checked against the joined rows formed here, on
 *	  the host, independently of cuda/.
 *
 * The reference.  Every step's build rows with a key are sorted by key.
 * Each probe row, in order, is walked through the steps depth first: at
 * step s its row's key (the value of the step's key column, a probe column
 * or a build column of an earlier step; with several keys, the tuple of
 * the values of its key columns, compared as a tuple, never hashed) is
 * looked up by binary search and gives one row per build row with an
 * equal key, or, for a LEFT step, one row with null step-s columns when it
 * has no match (a null key, or a null in any of its key columns, never
 * matches); an ANTI step keeps only the rows without a match, with null
 * step-s columns, and a SEMI step only those with one, once each, with
 * null step-s columns.  A step with a filter of its own runs its program
 * (the same evaluation as the join's filter below, over the row's sources:
 * a side without a row reads as null) on every pair of a row and a build
 * row with its key, and only the pairs it leaves true are matches: LEFT
 * and ANTI null-extend a row none of whose pairs passes, SEMI keeps a row
 * once when one passes.  A RIGHT step joins like INNER and a FULL one like LEFT,
 * and the walk logs every build row of theirs that a row matched; after
 * every probe row, the RIGHT and FULL steps are taken from the first: each
 * build row of the step that the log does not hold starts one more walk
 * at the step after it, with its build columns and every earlier side
 * null (its walk logs the matches of later steps in turn).  The last
 * step's rows make an ordinary Case of
 * conformance.c, whose reference (sort_reference, check_result) checks the
 * device's groups exactly as it checks an aggregation of submitted
 * batches: there is one checker.  The rows every step forms are budgeted
 * (max_pairs): a probe row that would pass the budget has its probe key
 * columns made null, which leaves it at most one row per step.
 *
 * Besides the groups: the statistics (input_rows = probe rows, joined_rows
 * = the last step's rows, join_build_rows = keyed build rows of every step,
 * batches = max(1, ceil(rows / batch_rows)) per submit, plus
 * ceil(rows / batch_rows) for the rows that the RIGHT and FULL joins'
 * unmatched build rows give at finish, and on the CPU
 * device bytes_sent exactly), the batch contract, that build columns of a
 * submitted batch are ignored (they are filled with garbage and false
 * nulls), that a payload's columns of other origins are never read (their
 * arrays are NULL), that builds may come in any order, and the API
 * (aggjoin_api.c).
 *
 * Cases: one step (an empty build, INNER and LEFT; an empty probe side;
 * unique build keys, the PK-FK join; duplicates on both sides; one key on
 * thousands of build rows with pieces splitting a probe row's matches;
 * null keys on both sides; every value type on both sides with nulls;
 * grouping by the join key itself and by a build column holding the build
 * key; one-row pieces; all-null probe keys; a build whose columns are all
 * null; many groups from a wrong estimate; ANTI), then chains (a star of
 * probe keys, a snowflake of keys in earlier build sides, ANTI steps in a
 * chain, skew in two steps with small pieces, four steps of one-row
 * pieces, empty builds inside a chain, two steps on one key column, null
 * keys flowing from a LEFT step into the next, every type in two builds),
 * then RIGHT and FULL last steps (null keys on both sides, an empty probe
 * side, an empty build, every build row matched, none matched, small
 * pieces, two- and three-step chains ending in them), then steps of
 * several keys (2 to 4 keys of the probe side, of earlier build sides and
 * of earlier steps' keys mixed in one step; keys that share a component or
 * are permutations of each other; duplicates, nulls in some key columns
 * on both sides, every join type, chains mixing them with steps of one
 * key), then RIGHT and FULL steps below others (their unmatched rows
 * meeting an INNER, a LEFT, an ANTI and another RIGHT or FULL step, keyed
 * on the null-extended side or on the step's own build side; one step of
 * two keys), then a step of seven keys, chains of six and of eight steps,
 * then the join's filter (comparisons of integers and of floats with NaN,
 * infinities and -0, AND, OR, NOT over nulls from a LEFT step, booleans,
 * pieces of seven rows, a RIGHT last step whose unmatched rows it drops;
 * the reference runs the program itself over the joined rows and drops
 * them after the batches are counted), then SEMI steps and steps' own
 * filters (LEFT rows null-extended when every pair fails, ANTI, SEMI with
 * and without a filter over many build rows a key, floats with NaN and
 * -0, a filter reading an earlier LEFT step's null side, filtered steps
 * below a RIGHT and a FULL step and above them, one key on thousands of
 * build rows in small pieces with few pairs passing, a step's filter with
 * the join's, two keys, a chain of five filtered steps; the rows a step's
 * filter drops count in no batch), then random mixtures of all of it
 * (steps of 2 .. 6 keys, RIGHT or FULL steps below others, filters of
 * 1 .. 4 leaves, a SEMI step, and steps' filters of 1 .. 3 leaves, each
 * drawn from a stream of its own, so that the other random cases stay
 * those of a suite without them).
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "aggjoin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Most COMOMENTS per case (each takes two of the GPU's 64 aggregate slots). */
#define AJ_MAX_COMOMENTS 6

/* A row's source at a step where it found no build row (LEFT, ANTI). */
#define AJ_NO_ROW (-1)

/* Key values past a key column's domain: keys no build side has. */
#define AJ_MISSES 64

static const char *const aj_dist_names[] = {"unique", "dups", "skew"};
static const char *const aj_type_names[] = {"inner", "left", "anti", "right", "full", "semi"};

/* A keyed build row of a step of several keys, for the reference. */
typedef struct AjTuple
{
	int64_t		k[GA_AGG_MAX_JOIN_KEYS];	/* unused components 0 */
	int64_t		row;
} AjTuple;

/* One step's build side as given to the device, and sorted for the reference. */
typedef struct AjBuild
{
	int64_t		nbuild;			/* payload rows */
	int64_t		nkeyed;
	int64_t    *keys;			/* nkeyed, in the order given to the device
								 * (NULL for a step of several keys) */
	uint32_t   *rows;
	KeyEntry   *entries;		/* the same, sorted by key and row */
	AjTuple    *tuples;			/* several keys: the same, sorted by key
								 * (as a tuple) and row */
} AjBuild;

/* A generated case: every side, the batches, and the joined rows. */
typedef struct AjCase
{
	Case		joined;			/* the reference's rows */
	int			nsteps;
	GaAggJoinStep steps[AJ_MAX_STEPS];
	AjBuild		builds[AJ_MAX_STEPS];
	int			build_order[AJ_MAX_STEPS];	/* the order the builds are given */
	uint8_t		from_build[MAX_COLUMNS];
	int			probe_key[MAX_COLUMNS]; /* a step's key column on the probe side */
	int			table_of[MAX_COLUMNS];	/* a key column's or build key
										 * column's key table (that of the
										 * column it was drawn for); -1 */

	/* every column's values, over the rows of its side */
	int64_t		nprobe;
	void	   *values[MAX_COLUMNS];
	uint8_t    *isnull[MAX_COLUMNS];
	uint8_t    *validity[MAX_COLUMNS];	/* build columns with nulls: the bitmap */
	int			build_has_nulls[MAX_COLUMNS];

	int			nfilter;		/* the join's filter, over the joined columns */
	GaFilterStep filter[GA_FILTER_MAX_STEPS];

	int			nbatches;
	int64_t    *batch_sizes;
	int64_t		expected_batches;
	int64_t		expected_bytes;	/* the CPU device's bytes_sent */
	char		desc[900];
} AjCase;

/* ------------------------------------------------------------------------
 * Generating a case
 * ------------------------------------------------------------------------
 */

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

/* Order entries by key, then row (qsort's form). */
int
key_entry_cmp(const void *pa, const void *pb)
{
	const KeyEntry *a = pa;
	const KeyEntry *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* The range [*first, *first + count) of entries whose key is key (count 0: none). */
int64_t
key_entry_matches(const KeyEntry *entries, int64_t n, int64_t key, int64_t *first)
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

/* Order tuples by key, component by component, then row (qsort's form). */
static int
aj_tuple_cmp(const void *pa, const void *pb)
{
	const AjTuple *a = pa;
	const AjTuple *b = pb;
	int			i;

	for (i = 0; i < GA_AGG_MAX_JOIN_KEYS; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
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

/* The reference's depth-first walk of one probe row through the steps. */
typedef struct AjWalk
{
	const AjCase *jc;
	int64_t		tuple[AJ_MAX_STEPS + 1];	/* probe row, build row per step */
	int64_t    *rows;			/* the last step's rows, nsteps + 1 sources
								 * each */
	int64_t		nrows;
	int64_t		capacity;
	int64_t		work;			/* rows every step formed so far */
	int64_t		limit;			/* the most work allowed */
	int64_t    *marks;			/* RIGHT and FULL steps' matched build rows,
								 * each b * AJ_MAX_STEPS + step (0-based) */
	int64_t		nmarks;
	int64_t		marks_capacity;
} AjWalk;

/*
 * The value of int64 column c in a row given by its sources; 0 when null
 * (also when the row has no build row on the column's side).
 */
static int
aj_key_value(const AjCase *jc, int c, const int64_t *tuple, int64_t *key)
{
	int64_t		src = tuple[jc->from_build[c]];

	if (src == AJ_NO_ROW || jc->isnull[c][src])
		return 0;
	*key = ((const int64_t *) jc->values[c])[src];
	return 1;
}

/*
 * The build rows of step s (0-based) whose key equals that of the row of
 * step s - 1 given by its sources: their first index in the build's
 * sorted entries (*first) and how many (0: none; also for a null key or a
 * null in any key column).  Several keys are compared as a tuple.
 */
static int64_t
aj_step_matches(const AjCase *jc, int s, const int64_t *tuple, int64_t *first)
{
	const GaAggJoinStep *step = &jc->steps[s];
	const AjBuild *build = &jc->builds[s];
	AjTuple		key;
	int64_t		lo = 0,
				hi = build->nkeyed,
				end;
	int			j;

	*first = 0;
	if (step->nkeys <= 1)
	{
		int64_t		k;

		return aj_key_value(jc, step->key_column, tuple, &k) ?
			key_entry_matches(build->entries, build->nkeyed, k, first) : 0;
	}
	memset(&key, 0, sizeof(key));
	key.row = -1;				/* before every row of an equal key */
	for (j = 0; j < step->nkeys; j++)
		if (!aj_key_value(jc, step->key_columns[j], tuple, &key.k[j]))
			return 0;
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (aj_tuple_cmp(&build->tuples[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (end = lo; end < build->nkeyed &&
		 memcmp(build->tuples[end].k, key.k, sizeof(key.k)) == 0; end++)
		;
	return end - lo;
}

/*
 * Where a filter program reads its operands: joined row i of a formed
 * Case (the join's filter), or a row of the walk given by its sources
 * (a step's filter, tuple[t] the row of side t or AJ_NO_ROW).
 */
typedef struct AjOperands
{
	const AjCase *jc;
	const Case *c;				/* non-NULL: joined row i of c */
	int64_t		i;
	const int64_t *tuple;		/* c NULL: the walk's row */
} AjOperands;

/*
 * The row's value of column col as an integer (*is_float 0) or a double
 * (1); 0 when it is null (also when the row has no row on the column's
 * side: null-extended, or an earlier side of a RIGHT or FULL step's
 * unmatched build row).
 */
static int
aj_filter_operand(const AjOperands *o, int col, int64_t *iv, double *fv, int *is_float)
{
	const AjCase *jc = o->jc;
	const void *values;
	GaValueType type = jc->joined.types[col];
	int64_t		row;

	*is_float = type_is_float(type);
	if (o->c != NULL)
	{
		if (o->c->isnull[col][o->i])
			return 0;
		values = o->c->values[col];
		row = o->i;
	}
	else
	{
		row = o->tuple[jc->from_build[col]];
		if (row == AJ_NO_ROW || jc->isnull[col][row])
			return 0;
		values = jc->values[col];
	}
	if (*is_float)
		*fv = load_float(values, type, row);
	else
		*iv = load_int(values, type, row);
	return 1;
}

/*
 * Whether a filter program (the join's or a step's) leaves true for a
 * row: the program run over SQL's three values (0 false, 1 true, 2 null),
 * written here apart from the devices' row_filter.h.  Floats are ordered
 * as PostgreSQL orders float8: NaN equal to NaN and above everything.
 */
static int
aj_program_true(const GaFilterStep *program, int nsteps, const AjOperands *o)
{
	int			stack[GA_FILTER_MAX_STEPS];
	int			depth = 0;
	int			k;

	for (k = 0; k < nsteps; k++)
	{
		const GaFilterStep *st = &program[k];
		int64_t		a = 0,
					b = 0;
		double		fa = 0,
					fb = 0;
		int			af,
					bf,
					order;

		switch (st->op)
		{
			case GA_FILTER_BOOL:
				stack[depth++] = !aj_filter_operand(o, st->column, &a, &fa, &af) ? 2 : a != 0;
				break;
			case GA_FILTER_COMPARE:
				if (!aj_filter_operand(o, st->column, &a, &fa, &af) ||
					!aj_filter_operand(o, st->column2, &b, &fb, &bf))
				{
					stack[depth++] = 2;
					break;
				}
				if (!af)
					order = a < b ? -1 : a > b;
				else if (isnan(fa) || isnan(fb))
					order = isnan(fa) - isnan(fb);
				else
					order = fa < fb ? -1 : fa > fb;
				stack[depth++] = st->cmp == GA_CMP_LT ? order < 0 :
					st->cmp == GA_CMP_LE ? order <= 0 :
					st->cmp == GA_CMP_EQ ? order == 0 :
					st->cmp == GA_CMP_NE ? order != 0 :
					st->cmp == GA_CMP_GE ? order >= 0 : order > 0;
				break;
			case GA_FILTER_NOT:
				stack[depth - 1] = stack[depth - 1] == 2 ? 2 : !stack[depth - 1];
				break;
			default:
				depth--;
				if (st->op == GA_FILTER_AND)
					stack[depth - 1] = stack[depth - 1] == 0 || stack[depth] == 0 ? 0 :
						stack[depth - 1] == 2 || stack[depth] == 2 ? 2 : 1;
				else
					stack[depth - 1] = stack[depth - 1] == 1 || stack[depth] == 1 ? 1 :
						stack[depth - 1] == 2 || stack[depth] == 2 ? 2 : 0;
				break;
		}
	}
	return depth == 1 && stack[0] == 1;
}

/* Whether the join's filter keeps joined row i of c. */
static int
aj_filter_keeps(const AjCase *jc, const Case *c, int64_t i)
{
	AjOperands	o = {jc, c, i, NULL};

	return aj_program_true(jc->filter, jc->nfilter, &o);
}

/*
 * Whether the pair in tuple (a row of step s - 1, 0-based s, and in
 * tuple[s + 1] a build row of step s with its key) passes step s's own
 * filter; always with none.
 */
static int
aj_step_filter_passes(const AjCase *jc, int s, const int64_t *tuple)
{
	AjOperands	o = {jc, NULL, 0, tuple};

	if (jc->steps[s].nfilter == 0)
		return 1;
	return aj_program_true(jc->steps[s].filter, jc->steps[s].nfilter, &o);
}

/* Append the row in w->tuple to the last step's rows. */
static void
aj_walk_emit(AjWalk *w)
{
	int			width = w->jc->nsteps + 1;

	if (w->nrows == w->capacity)
	{
		w->capacity = w->capacity > 0 ? 2 * w->capacity : 1024;
		w->rows = realloc(w->rows, sizeof(int64_t) * width * w->capacity);
	}
	memcpy(w->rows + w->nrows * width, w->tuple, sizeof(int64_t) * width);
	w->nrows++;
}

/* Log that build row b of RIGHT or FULL step s (0-based) matched a row. */
static void
aj_walk_mark(AjWalk *w, int s, int64_t b)
{
	if (w->nmarks == w->marks_capacity)
	{
		w->marks_capacity = w->marks_capacity > 0 ? 2 * w->marks_capacity : 1024;
		w->marks = realloc(w->marks, sizeof(int64_t) * w->marks_capacity);
	}
	w->marks[w->nmarks++] = b * AJ_MAX_STEPS + s;
}

/* Whether step type `type` also gives the build rows that nothing matched. */
static int
aj_keeps_unmatched(GaAggJoinType type)
{
	return type == GA_AGGJOIN_RIGHT || type == GA_AGGJOIN_FULL;
}

/*
 * Form the rows of steps s + 1 .. nsteps (0-based s) from the row of step
 * s in w->tuple, logging the matches of RIGHT and FULL steps; 0 as soon
 * as the work passes the limit.  With a step filter, only the pairs it
 * passes are matches: every passing pair gives a row (INNER, LEFT, RIGHT,
 * FULL), a LEFT, FULL or ANTI row none of whose pairs passes (also one
 * with no key match or a null key) one row with the step's build side
 * null, and a SEMI row one of whose pairs passes one such row (once,
 * however many pass).  Every pair the filter sees counts as work, and so
 * does every row formed.
 */
static int
aj_walk(AjWalk *w, int s)
{
	const AjCase *jc = w->jc;
	const GaAggJoinStep *step;
	const AjBuild *build;
	int64_t		first = 0,
				m = 0,
				k;
	int			once,
				passed = 0;

	if (s == jc->nsteps)
	{
		aj_walk_emit(w);
		return 1;
	}
	step = &jc->steps[s];
	build = &jc->builds[s];
	once = step->type == GA_AGGJOIN_ANTI || step->type == GA_AGGJOIN_SEMI;
	m = aj_step_matches(jc, s, w->tuple, &first);
	for (k = 0; k < m; k++)
	{
		if (once && step->nfilter == 0)
		{
			passed = 1;			/* any match will do */
			break;
		}
		if (++w->work > w->limit)
			return 0;
		w->tuple[s + 1] = step->nkeys > 1 ? build->tuples[first + k].row :
			build->entries[first + k].row;
		if (!aj_step_filter_passes(jc, s, w->tuple))
			continue;
		passed = 1;
		if (once)
			break;
		if (aj_keeps_unmatched(step->type))
			aj_walk_mark(w, s, w->tuple[s + 1]);
		if (!aj_walk(w, s + 1))
			return 0;
	}
	if (step->type == GA_AGGJOIN_SEMI ? !passed :
		passed || step->type == GA_AGGJOIN_INNER || step->type == GA_AGGJOIN_RIGHT)
		return 1;
	if (++w->work > w->limit)
		return 0;
	w->tuple[s + 1] = AJ_NO_ROW;
	return aj_walk(w, s + 1);
}

/*
 * Walk every probe row through the steps within the budget: a row whose
 * walk passes what is left (or, after such a row, half the last try) has
 * its probe key columns made null and is walked again (at most one row a
 * step now).  Returns the last step's rows of each probe row in *per_row.
 */
static void
aj_walk_all(AjCase *jc, AjWalk *w, int64_t budget, int64_t *per_row)
{
	int64_t		attempt = budget;
	int64_t		r;
	int			c;

	memset(w, 0, sizeof(*w));
	w->jc = jc;
	for (r = 0; r < jc->nprobe; r++)
	{
		int64_t		nrows = w->nrows;
		int64_t		nmarks = w->nmarks;
		int64_t		work = w->work;
		int64_t		left = budget - work;

		w->tuple[0] = r;
		w->limit = work + (left < attempt ? left : attempt);
		if (!aj_walk(w, 0))
		{
			w->nrows = nrows;
			w->nmarks = nmarks;
			w->work = work;
			for (c = 0; c < jc->joined.ncolumns; c++)
				if (jc->probe_key[c])
					jc->isnull[c][r] = 1;
			w->limit = INT64_MAX;
			aj_walk(w, 0);
			attempt = attempt / 2 > 0 ? attempt / 2 : 0;
		}
		per_row[r] = w->nrows - nrows;
	}
}

/*
 * After the walk of every probe row: for each RIGHT or FULL step, from the
 * first, walk each of its build rows (keyed or not) that the log does not
 * hold from the step after it, with no source on any earlier side (so its
 * keys there are null, and its walk logs the matches of the later RIGHT
 * and FULL steps before their turn).  Logging during the walk (and
 * dropping the log of a walk that passed the budget and was redone) marks
 * a build row matched even when a later step drops the row.  These walks
 * have no budget (the specs keep them small).  Returns the rows they give.
 */
static int64_t
aj_walk_unmatched(AjCase *jc, AjWalk *w)
{
	int64_t		before = w->nrows;
	int			s,
				t;

	w->limit = INT64_MAX;
	for (s = 0; s < jc->nsteps; s++)
	{
		const AjBuild *build = &jc->builds[s];
		uint8_t    *matched;
		int64_t		i,
					b;

		if (!aj_keeps_unmatched(jc->steps[s].type))
			continue;
		matched = calloc(build->nbuild > 0 ? build->nbuild : 1, 1);
		for (i = 0; i < w->nmarks; i++)
			if (w->marks[i] % AJ_MAX_STEPS == s)
				matched[w->marks[i] / AJ_MAX_STEPS] = 1;
		for (b = 0; b < build->nbuild; b++)
		{
			if (matched[b])
				continue;
			for (t = 0; t <= s; t++)
				w->tuple[t] = AJ_NO_ROW;
			w->tuple[s + 1] = b;
			aj_walk(w, s + 1);
		}
		free(matched);
	}
	return w->nrows - before;
}

/* Drop the joined rows the join's filter does not keep, in place. */
static void
aj_filter_joined(const AjCase *jc, Case *c)
{
	int64_t		kept = 0;
	int64_t		i;
	int			col;

	for (col = 0; col < c->ncolumns; col++)
		c->has_nulls[col] = 0;
	for (i = 0; i < c->nrows; i++)
	{
		if (!aj_filter_keeps(jc, c, i))
			continue;
		for (col = 0; col < c->ncolumns; col++)
		{
			int			vw = ga_type_width(c->types[col]);

			if (vw > 0)
				memmove((char *) c->values[col] + kept * vw, (char *) c->values[col] + i * vw,
						(size_t) vw);
			c->isnull[col][kept] = c->isnull[col][i];
			c->has_nulls[col] |= c->isnull[col][kept];
		}
		kept++;
	}
	c->nrows = kept;
}

/* Copy value row src_row of a column into joined row dst. */
static void
aj_copy_value(void *dst, int64_t d, const void *src, int64_t s, int width)
{
	memcpy((char *) dst + d * width, (const char *) src + s * width, (size_t) width);
}

/*
 * Form the joined rows into the case's Case from the walk's rows, and
 * count what the devices must report: the pieces of every submit and of
 * the `unmatched` rows aggregated at finish, and the CPU device's bytes.
 */
static void
aj_form_joined(AjCase *jc, const AjWalk *w, const int64_t *per_row, int64_t unmatched)
{
	Case	   *c = &jc->joined;
	int			width = jc->nsteps + 1;
	int64_t		i;
	int			col,
				s;

	c->nrows = w->nrows;
	for (col = 0; col < c->ncolumns; col++)
	{
		int			vw = ga_type_width(c->types[col]);
		int			side = jc->from_build[col];

		c->values[col] = vw > 0 ? malloc((size_t) vw * (w->nrows > 0 ? w->nrows : 1)) : NULL;
		c->isnull[col] = calloc(w->nrows > 0 ? w->nrows : 1, 1);
		for (i = 0; i < w->nrows; i++)
		{
			int64_t		src = w->rows[i * width + side];

			if (src == AJ_NO_ROW)
			{
				c->isnull[col][i] = 1;
				if (vw > 0)
					memset((char *) c->values[col] + i * vw, 0x7f, (size_t) vw);
			}
			else
			{
				c->isnull[col][i] = jc->isnull[col][src];
				if (vw > 0)
					aj_copy_value(c->values[col], i, jc->values[col], src, vw);
			}
			if (c->isnull[col][i])
				c->has_nulls[col] = 1;
		}
	}
	if (jc->nfilter > 0)
		aj_filter_joined(jc, c);	/* the batches count the rows before it */

	jc->expected_bytes = 0;
	for (s = 0; s < jc->nsteps; s++)
	{
		const AjBuild *build = &jc->builds[s];

		jc->expected_bytes += build->nkeyed * (int64_t) (sizeof(int64_t) + sizeof(uint32_t));
		for (col = 0; col < c->ncolumns; col++)
			if (jc->from_build[col] == s + 1)
				jc->expected_bytes += build->nbuild * ga_type_width(c->types[col]) +
					(jc->build_has_nulls[col] ? (build->nbuild + 7) / 8 : 0);
	}
	jc->expected_batches = 0;
	expect_probe_submits(c, c->ncolumns, jc->nbatches, jc->batch_sizes, per_row, jc->from_build,
						 jc->isnull, unmatched, &jc->expected_batches, &jc->expected_bytes);
}

/*
 * What the submits of an aggjoin case's probe batches must count: each
 * submit the batches its joined rows fill (at least one), the unmatched
 * build rows of a RIGHT/FULL last step their pieces at finish; and the
 * probe columns' bytes sent (values, and a bitmap for a batch with a null).
 * per_row[r]: the rows of the last step that probe row r gives; the
 * columns with an origin (from_build, isnull) are the first ncolumns of c's.
 * Adds to *batches and *bytes.
 */
void
expect_probe_submits(const Case *c, int ncolumns, int nbatches, const int64_t *batch_sizes,
					 const int64_t *per_row, const uint8_t *from_build,
					 uint8_t *const *isnull, int64_t unmatched,
					 int64_t *batches, int64_t *bytes)
{
	int64_t		start = 0;
	int			b;

	for (b = 0; b < nbatches; b++)
	{
		int64_t		n = batch_sizes[b];
		int64_t		rows = 0;
		int64_t		r;
		int			col;

		for (r = start; r < start + n; r++)
			rows += per_row[r];
		*batches += rows == 0 ? 1 : (rows + c->batch_rows - 1) / c->batch_rows;
		for (col = 0; col < ncolumns; col++)
		{
			int			nulls = 0;

			if (from_build[col])
				continue;
			for (r = start; r < start + n && !nulls; r++)
				nulls = isnull[col][r];
			*bytes += n * ga_type_width(c->types[col]) + (nulls ? (n + 7) / 8 : 0);
		}
		start += n;
	}
	*batches += (unmatched + c->batch_rows - 1) / c->batch_rows;
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
static void
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
static void
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

/* ------------------------------------------------------------------------
 * Running a case on a device
 * ------------------------------------------------------------------------
 */

/* The request of a case (join spec included, pointing into the case). */
static void
aj_request(const AjCase *jc, GaStrategy strategy, GaAggJoinSpec *spec, GaAggRequest *req)
{
	memset(spec, 0, sizeof(*spec));
	spec->nsteps = jc->nsteps;
	memcpy(spec->steps, jc->steps, sizeof(GaAggJoinStep) * jc->nsteps);
	spec->from_build = jc->from_build;
	spec->nfilter = jc->nfilter;
	memcpy(spec->filter, jc->filter, sizeof(GaFilterStep) * jc->nfilter);
	case_request(&jc->joined, strategy, req);
	req->join = spec;
}

/*
 * The payload of step `step` (1-based): its build columns (validity only
 * with nulls); every other column has no arrays at all, so a device
 * reading one crashes.
 */
static void
aj_payload(const AjCase *jc, int step, GaColumn *columns, GaBatch *payload)
{
	int			c;

	memset(columns, 0, sizeof(GaColumn) * MAX_COLUMNS);
	for (c = 0; c < jc->joined.ncolumns; c++)
	{
		columns[c].type = jc->joined.types[c];
		if (jc->from_build[c] != step)
			continue;
		columns[c].values = jc->values[c];
		columns[c].validity = jc->validity[c];
		columns[c].has_nulls = jc->build_has_nulls[c];
	}
	payload->nrows = jc->builds[step - 1].nbuild;
	payload->capacity = payload->nrows + 3;
	payload->ncolumns = jc->joined.ncolumns;
	payload->columns = columns;
}

/*
 * Fill a probe batch with probe rows [start, start + n) of case c's
 * columns: a column where garbage[col] with garbage and a false null every
 * null_every rows (to be ignored), the others from their values and nulls
 * over the probe rows.
 */
void
fill_probe_batch(GaBatch *b, const Case *c, const uint8_t *garbage, void *const *values,
				 uint8_t *const *isnull, int null_every, int64_t start, int64_t n)
{
	int			col;
	int64_t		r;

	for (col = 0; col < c->ncolumns; col++)
	{
		GaColumn   *column = &b->columns[col];
		int			width = ga_type_width(c->types[col]);

		if (garbage[col])
		{
			if (width > 0 && n > 0)
				memset(column->values, 0xa5, (size_t) (n * width));
			for (r = 0; r < n; r += null_every)
				ga_column_set_null(column, r);
			continue;
		}
		if (width > 0 && n > 0)
			memcpy(column->values, (const char *) values[col] + start * width,
				   (size_t) (n * width));
		for (r = 0; r < n; r++)
			if (isnull[col][start + r])
				ga_column_set_null(column, r);
	}
	b->nrows = n;
}

/*
 * Fill a probe batch with probe rows [start, start + n): probe columns as
 * generated, build columns with garbage and false nulls to be ignored.
 */
static void
aj_fill_batch(const AjCase *jc, GaBatch *b, int64_t start, int64_t n)
{
	fill_probe_batch(b, &jc->joined, jc->from_build, jc->values, jc->isnull, 3, start, n);
}

/* The keyed build rows of every step. */
static int64_t
aj_keyed_rows(const AjCase *jc)
{
	int64_t		n = 0;
	int			s;

	for (s = 0; s < jc->nsteps; s++)
		n += jc->builds[s].nkeyed;
	return n;
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
		stats->joined_rows != jc->joined.nrows || stats->join_build_rows != aj_keyed_rows(jc) ||
		stats->groups != res->ngroups)
		report(rr, "stats: batches %lld input_rows %lld joined_rows %lld join_build_rows %lld groups %lld, expected %lld, %lld, %lld, %lld, %lld",
			   (long long) stats->batches, (long long) stats->input_rows,
			   (long long) stats->joined_rows, (long long) stats->join_build_rows,
			   (long long) stats->groups, (long long) jc->expected_batches,
			   (long long) jc->nprobe, (long long) jc->joined.nrows,
			   (long long) aj_keyed_rows(jc), (long long) res->ngroups);
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

/* Give every step's build side, in the case's order; 0 with status on failure. */
static int
aj_build_all(const AjCase *jc, GaAgg *agg, WaitState *ws, GaStatus *st)
{
	GaColumn	columns[MAX_COLUMNS];
	GaBatch		payload;
	int			i;

	for (i = 0; i < jc->nsteps; i++)
	{
		int			s = jc->build_order[i];
		const AjBuild *build = &jc->builds[s];

		aj_payload(jc, s + 1, columns, &payload);
		if (!ga_aggjoin_build(agg, s, build->keys, build->rows, build->nkeyed, &payload,
							   test_wait, ws, st))
			return 0;
	}
	return 1;
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
	GaAgg	   *agg;
	GaStatus	st;
	GaAggStats	stats;
	const GaAggResult *res;
	int64_t		start = 0;
	double		t0 = now_ms();
	int			b;

	aj_request(jc, strategy, &spec, &req);
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		goto done;
	}
	if (!aj_build_all(jc, agg, &ws, &st))
	{
		report(&rr, "build failed: code %d: %s", st.code, st.message);
		goto done;
	}
	for (b = 0; b < jc->nbatches; b++)
	{
		GaBatch    *batch = run_next_batch(agg, &jc->joined, b, &ws, &rr);

		if (batch == NULL)
			goto done;
		aj_fill_batch(jc, batch, start, jc->batch_sizes[b]);
		if (!run_submit(agg, batch, b, &ws, &rr))
			goto done;
		start += jc->batch_sizes[b];
	}
	res = run_finish(agg, &ws, &rr);
	if (res == NULL)
		goto done;
	check_result(&jc->joined, res, &rr);
	ga_agg_get_stats(agg, &stats);
	aj_check_stats(jc, dev, &stats, res, &rr);
	if (verbose)
		print_stats("aggjoin", case_no, label, &stats, 1);

done:
	return run_end(agg, &ws, &rr, label, t0, summary, summary_len);
}

/* ------------------------------------------------------------------------
 * The suite
 * ------------------------------------------------------------------------
 */

/* Run the API checks and every case from first on, on every device run. */
int64_t
conformance_aggjoin(GaDevice *const *devices, const GaStrategy *strategies,
					const char *const *labels, int nruns, uint64_t seed, int first,
					int ncases, int64_t max_rows, int timeout, int verbose, int64_t *checks)
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
		printf("aggjoin api %-10s invalid, chains, cancel, fail_at_batch, destroy: %s\n",
			   labels[j], f ? "FAIL" : "ok");
		failures += f;
		(*checks)++;
	}

	for (i = first; i < NUM_FIXED_AJ_CASES + ncases; i++)
	{
		AjSpec		spec;
		AjCase		jc;
		Rng			rng;
		char		line[1800];
		size_t		len;

		conformance_set_current("aggjoin", i);
		alarm((unsigned) timeout);
		rng_seed(&rng, seed * UINT64_C(0x100000001b3) + UINT64_C(0xa99) * (uint64_t) (i + 1));
		if (i < NUM_FIXED_AJ_CASES)
			aj_fixed_spec(i, &spec, max_rows);
		else
			aj_random_spec(&rng, &spec, max_rows);
		aj_cap_spec(&spec, max_rows);
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
