/*-------------------------------------------------------------------------
 *
 * aggjoin_ref.c
 *	  The aggjoin suite's reference: the joined rows that a case's sides
 *	  give, formed on the host independently of cuda/, and what the
 *	  devices must count while they form them.
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
 * step's rows make an ordinary Case (conformance.h), whose reference
 * (agg_ref.c: sort_reference, check_result) checks the
 * device's groups exactly as it checks an aggregation of submitted
 * batches: there is one checker.  The rows every step forms are budgeted
 * (max_pairs): a probe row that would pass the budget has its probe key
 * columns made null, which leaves it at most one row per step.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Sorted build keys
 * ------------------------------------------------------------------------
 */

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

/* Order tuples by key, component by component, then row (qsort's form). */
int
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

/* ------------------------------------------------------------------------
 * The walk of the probe rows through the steps
 * ------------------------------------------------------------------------
 */

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
void
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
int64_t
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
void
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
