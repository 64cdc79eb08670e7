/*-------------------------------------------------------------------------
 *
 * aggjoin_random.c
 *	  The aggjoin suite's random cases as specs (aggjoin.h): mixtures of
 *	  steps, sides, keys, skew, nulls and columns, with steps of 2 .. 6
 *	  keys, RIGHT or FULL steps below others, filters of 1 .. 4 leaves, a
 *	  SEMI step, and steps' filters of 1 .. 3 leaves, each drawn from a
 *	  stream of its own, so that the other random cases stay those of a
 *	  suite without them.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.h"

#include <math.h>
#include <string.h>

/* Null rates of random key columns and build keys. */
static const double aj_key_null_rates[] = {0, 0, 0, 0, 0.01, 0.2, 0.2, 1.0};

/*
 * A random step i: its type, where its key is, its build side.  Steps
 * after the first are less often empty or keyless, and seldom keyed on an
 * ANTI step's (always null) columns, so that chains keep some rows.
 */
static void
aj_random_step(Rng *rng, AjSpec *s, int i, double size_exp)
{
	AjStepSpec *ss = &s->steps[i];
	double		t = rng_unit(rng);

	ss->type = t < 0.45 ? GA_AGGJOIN_INNER : t < 0.8 ? GA_AGGJOIN_LEFT : GA_AGGJOIN_ANTI;
	t = rng_unit(rng);
	ss->key_from = i == 0 || t < 0.4 ? AJ_KEY_PROBE : t < 0.8 ? AJ_KEY_BUILD : AJ_KEY_SHARED;
	ss->key_side = i > 0 ? (int) rng_range(rng, 1, i) : 0;
	if (ss->key_from == AJ_KEY_BUILD && s->steps[ss->key_side - 1].type == GA_AGGJOIN_ANTI &&
		rng_chance(rng, 0.75))
		ss->key_from = AJ_KEY_PROBE;
	ss->nbuild = rng_chance(rng, i == 0 ? 0.08 : 0.03) ? 0 :
		(int64_t) pow(10.0, rng_unit(rng) * size_exp);
	ss->build_dist = (AjBuildDist) rng_range(rng, AJ_UNIQUE, AJ_SKEW);
	ss->key_domain = ss->build_dist == AJ_UNIQUE ? ss->nbuild :
		ss->nbuild / rng_range(rng, 1, 50);
	if (ss->key_domain < 1)
		ss->key_domain = 1;
	ss->skew_rows = rng_range(rng, 1, 6000);
	ss->build_key_null = rng_pick(rng, aj_key_null_rates, i == 0 ? 8 : 7);
}

/*
 * Make some steps of a random spec join on several keys (each step with
 * probability 0.2), drawn from a stream of their own, so that the draws of
 * every other random case stay what they were: 2 .. 6 keys of the probe
 * side, of earlier build sides and of earlier steps' keys, each of a few
 * values (a root of the step's domain, or 2 .. 5), within room for 11
 * key columns in all.
 */
static void
aj_random_multikey(const Rng *rng, AjSpec *s)
{
	Rng			mk;
	int			ncolumns = 0,
				i,
				j;

	rng_seed(&mk, rng->s[0] ^ rng->s[3] ^ UINT64_C(0x6b657973));
	for (i = 0; i < s->nsteps; i++)
		ncolumns += s->steps[i].key_from != AJ_KEY_SHARED;
	for (i = 0; i < s->nsteps; i++)
	{
		AjStepSpec *ss = &s->steps[i];
		AjStepSpec	multi = *ss;
		int			added = 0;

		if (!rng_chance(&mk, 0.2))
			continue;
		multi.nkeys = (int) rng_range(&mk, 2, 6);
		for (j = 0; j < multi.nkeys; j++)
		{
			double		t = rng_unit(&mk);

			multi.comp_from[j] = i == 0 || t < 0.4 ? AJ_KEY_PROBE :
				t < 0.75 ? AJ_KEY_BUILD : AJ_KEY_SHARED;
			multi.comp_side[j] = i > 0 ? (int) rng_range(&mk, 1, i) : 0;
			added += 1 + (multi.comp_from[j] != AJ_KEY_SHARED);
		}
		if (ncolumns - (ss->key_from != AJ_KEY_SHARED) + added > 11)
			continue;
		ncolumns += added - (ss->key_from != AJ_KEY_SHARED);
		multi.key_domain = rng_chance(&mk, 0.5) ? rng_range(&mk, 2, 5) :
			(int64_t) ceil(pow((double) (ss->key_domain > 1 ? ss->key_domain : 1),
							   1.0 / multi.nkeys));
		if (multi.key_domain < 1)
			multi.key_domain = 1;
		*ss = multi;
	}
}

/*
 * Make one step below the last of a random chain (with probability 0.3) a
 * RIGHT or FULL join, drawn from a stream of its own so that the draws of
 * every other random case stay what they were.  Its unmatched build rows
 * go through the later steps at finish with no budget, so each later step
 * keyed on a build side (where they may match) gets unique build keys,
 * leaving them at most one row a step; a later step of several keys with
 * one there leaves the chain as it was.  The step's build rows are capped
 * at ~2000 pieces.
 */
static void
aj_random_outer_below(const Rng *rng, AjSpec *s)
{
	Rng			ob;
	int			i,
				j,
				k;

	rng_seed(&ob, rng->s[1] ^ rng->s[2] ^ UINT64_C(0x6f75746572));
	if (s->nsteps < 2 || !rng_chance(&ob, 0.3))
		return;
	i = (int) rng_range(&ob, 0, s->nsteps - 2);
	for (j = i + 1; j < s->nsteps; j++)
		for (k = 0; s->steps[j].nkeys > 1 && k < s->steps[j].nkeys; k++)
			if (s->steps[j].comp_from[k] != AJ_KEY_PROBE)
				return;
	s->steps[i].type = rng_chance(&ob, 0.5) ? GA_AGGJOIN_RIGHT : GA_AGGJOIN_FULL;
	if (s->steps[i].nbuild > s->batch_rows * 2000)
		s->steps[i].nbuild = s->batch_rows * 2000;
	for (j = i + 1; j < s->nsteps; j++)
		if (s->steps[j].nkeys <= 1 && s->steps[j].key_from != AJ_KEY_PROBE)
		{
			s->steps[j].build_dist = AJ_UNIQUE;
			s->steps[j].key_domain = s->steps[j].nbuild > 0 ? s->steps[j].nbuild : 1;
		}
}

/*
 * Give a random spec a filter (with probability 0.25), drawn from a stream
 * of its own so that the draws of every other random case stay what they
 * were: 1 .. 4 leaves, each a comparison of two integer or two float
 * columns (added when the spec has none, on random sides) or a bool of an
 * int8 column, combined by random ANDs and ORs, some negated.
 */
static void
aj_random_filter(const Rng *rng, AjSpec *s)
{
	Rng			fr;
	int			nleaves,
				i;

	rng_seed(&fr, rng->s[0] ^ rng->s[2] ^ UINT64_C(0x66696c746572));
	if (!rng_chance(&fr, 0.25))
		return;
	nleaves = (int) rng_range(&fr, 1, 4);
	for (i = 0; i < nleaves; i++)
	{
		int			want_float = rng_chance(&fr, 0.4);
		int			want_bool = !want_float && rng_chance(&fr, 0.2);
		int			found[AJ_MAX_COLS];
		int			nfound = 0,
					k;

		for (k = 0; k < s->ncols; k++)
			if (!s->cols[k].join_key &&
				(want_bool ? s->cols[k].type == GA_TYPE_INT8 :
				 want_float ? type_is_float(s->cols[k].type) : type_is_int(s->cols[k].type)))
				found[nfound++] = k;
		while (nfound < 2 && s->ncols < AJ_MAX_COLS)
		{
			AjColSpec  *cs = &s->cols[s->ncols];

			memset(cs, 0, sizeof(*cs));
			cs->from_build = (int) rng_range(&fr, 0, s->nsteps);
			cs->type = want_bool ? GA_TYPE_INT8 : want_float ?
				(rng_chance(&fr, 0.5) ? GA_TYPE_FLOAT64 : GA_TYPE_FLOAT32) :
				(GaValueType) rng_range(&fr, GA_TYPE_INT8, GA_TYPE_INT64);
			cs->mode = want_float ? (rng_chance(&fr, 0.3) ? VAL_SPECIAL : VAL_SMALL) : VAL_SMALL;
			cs->null_rate = rng_chance(&fr, 0.5) ? 0.1 : 0;
			found[nfound++] = s->ncols++;
		}
		if (nfound < 2)
			break;				/* no room: the filter so far stands */
		if (want_bool)
			aj_filter_step(s, GA_FILTER_BOOL, GA_CMP_EQ, found[rng_range(&fr, 0, nfound - 1)], -1);
		else
			aj_filter_step(s, GA_FILTER_COMPARE, (GaCompareOp) rng_range(&fr, GA_CMP_LT, GA_CMP_GT),
						   found[rng_range(&fr, 0, nfound - 1)],
						   found[rng_range(&fr, 0, nfound - 1)]);
		if (rng_chance(&fr, 0.2))
			aj_filter_step(s, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
		if (i > 0)
			aj_filter_step(s, rng_chance(&fr, 0.5) ? GA_FILTER_AND : GA_FILTER_OR, GA_CMP_EQ,
						   -1, -1);
	}
}

/*
 * Make one step of a random chain (with probability 0.2) a SEMI join,
 * drawn from a stream of its own so that the draws of every other random
 * case stay what they were: an INNER, LEFT or ANTI step on whose build
 * side no later step is keyed (its build columns are null in every row,
 * as an ANTI step's, so such a chain would keep few rows).
 */
static void
aj_random_semi(const Rng *rng, AjSpec *s)
{
	Rng			sr;
	int			candidates[AJ_MAX_STEPS];
	int			n = 0,
				i,
				j,
				k;

	rng_seed(&sr, rng->s[1] ^ rng->s[3] ^ UINT64_C(0x73656d69));
	if (!rng_chance(&sr, 0.2))
		return;
	for (i = 0; i < s->nsteps; i++)
	{
		int			keyed_on = 0;

		if (s->steps[i].type == GA_AGGJOIN_RIGHT || s->steps[i].type == GA_AGGJOIN_FULL)
			continue;
		for (j = i + 1; j < s->nsteps; j++)
		{
			const AjStepSpec *later = &s->steps[j];

			if (later->nkeys <= 1)
				keyed_on |= later->key_from != AJ_KEY_PROBE && later->key_side == i + 1;
			for (k = 0; later->nkeys > 1 && k < later->nkeys; k++)
				keyed_on |= later->comp_from[k] != AJ_KEY_PROBE && later->comp_side[k] == i + 1;
		}
		if (!keyed_on)
			candidates[n++] = i;
	}
	if (n > 0)
		s->steps[candidates[rng_range(&sr, 0, n - 1)]].type = GA_AGGJOIN_SEMI;
}

/*
 * Whether a spec has room for one more column besides its steps' key
 * columns (new key columns, and build key columns of steps of several
 * keys; aggjoin.c drops the columns past MAX_COLUMNS, and a filter with
 * them).
 */
static int
aj_column_room(const AjSpec *s)
{
	int			n = s->ncols,
				i,
				j;

	for (i = 0; i < s->nsteps; i++)
	{
		const AjStepSpec *ss = &s->steps[i];

		if (ss->nkeys <= 1)
			n += ss->key_from != AJ_KEY_SHARED;
		for (j = 0; ss->nkeys > 1 && j < ss->nkeys; j++)
			n += 1 + (ss->comp_from[j] != AJ_KEY_SHARED);
	}
	return s->ncols < AJ_MAX_COLS && n < MAX_COLUMNS;
}

/*
 * A spec column for a step filter, of type kind (0 integer, 1 float, 2
 * int8), on side `side` (exact) or on any side 0 .. side (a step's filter
 * reads no later side): one of the spec's (not a step's build key) or,
 * when none is there or at random, a new one (integers small or at their
 * type's ends, floats sometimes NaN, infinities and -0, nulls at times);
 * -1 when there is neither.
 */
static int
aj_filter_column(Rng *fr, AjSpec *s, int kind, int side, int exact)
{
	int			found[AJ_MAX_COLS];
	int			nfound = 0,
				k;
	AjColSpec  *cs;

	for (k = 0; k < s->ncols; k++)
		if (!s->cols[k].join_key &&
			(exact ? s->cols[k].from_build == side : s->cols[k].from_build <= side) &&
			(kind == 2 ? s->cols[k].type == GA_TYPE_INT8 :
			 kind == 1 ? type_is_float(s->cols[k].type) : type_is_int(s->cols[k].type)))
			found[nfound++] = k;
	if (nfound > 0 && (!aj_column_room(s) || rng_chance(fr, 0.7)))
		return found[rng_range(fr, 0, nfound - 1)];
	if (!aj_column_room(s))
		return -1;
	cs = &s->cols[s->ncols];
	memset(cs, 0, sizeof(*cs));
	cs->from_build = exact ? side : (int) rng_range(fr, 0, side);
	cs->type = kind == 2 ? GA_TYPE_INT8 : kind == 1 ?
		(rng_chance(fr, 0.5) ? GA_TYPE_FLOAT64 : GA_TYPE_FLOAT32) :
		(GaValueType) rng_range(fr, GA_TYPE_INT8, GA_TYPE_INT64);
	cs->mode = kind == 1 && rng_chance(fr, 0.3) ? VAL_SPECIAL : VAL_SMALL;
	if (kind == 0 && rng_chance(fr, 0.5))
		cs->mode = VAL_EXTREME; /* a few values: equalities pass now and then */
	cs->null_rate = rng_chance(fr, 0.5) ? 0.1 : 0;
	return s->ncols++;
}

/*
 * Give the INNER, LEFT, SEMI and ANTI steps of a random spec filters of
 * their own (a case with probability 0.3, then each such step with
 * probability 0.6), drawn from a stream of their own so that the draws
 * of every other random case stay what they were: 1 .. 3 leaves, each a
 * comparison of a column of the step's build side with one of the probe
 * side or any build side up to the step's, of two integer or two float
 * columns, or a bool of an int8 column, combined by random ANDs and ORs,
 * some negated.
 */
static void
aj_random_step_filters(const Rng *rng, AjSpec *s)
{
	Rng			fr;
	int			i,
				j;

	rng_seed(&fr, rng->s[0] ^ rng->s[1] ^ UINT64_C(0x7374657066));
	if (!rng_chance(&fr, 0.3))
		return;
	for (i = 0; i < s->nsteps; i++)
	{
		AjStepSpec *ss = &s->steps[i];
		int			nleaves;

		if (ss->type == GA_AGGJOIN_RIGHT || ss->type == GA_AGGJOIN_FULL ||
			!rng_chance(&fr, 0.6))
			continue;
		nleaves = (int) rng_range(&fr, 1, 3);
		for (j = 0; j < nleaves; j++)
		{
			int			kind = rng_chance(&fr, 0.4) ? 1 : rng_chance(&fr, 0.2) ? 2 : 0;
			int			a = aj_filter_column(&fr, s, kind, i + 1, rng_chance(&fr, 0.8));
			int			b = kind == 2 ? -1 : aj_filter_column(&fr, s, kind, i + 1, 0);

			if (a < 0 || (kind != 2 && b < 0))
				break;			/* no room: the filter so far stands */
			if (kind == 2)
				aj_step_filter(s, i, GA_FILTER_BOOL, GA_CMP_EQ, a, -1);
			else if (rng_chance(&fr, 0.5))
				aj_step_filter(s, i, GA_FILTER_COMPARE,
							   (GaCompareOp) rng_range(&fr, GA_CMP_LT, GA_CMP_GT), a, b);
			else
				aj_step_filter(s, i, GA_FILTER_COMPARE,
							   (GaCompareOp) rng_range(&fr, GA_CMP_LT, GA_CMP_GT), b, a);
			if (rng_chance(&fr, 0.2))
				aj_step_filter(s, i, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
			if (j > 0)
				aj_step_filter(s, i, rng_chance(&fr, 0.5) ? GA_FILTER_AND : GA_FILTER_OR,
							   GA_CMP_EQ, -1, -1);
		}
	}
}

/* A random case: steps, sides, keys, skew, nulls, columns, sizes all drawn. */
void
aj_random_spec(Rng *rng, AjSpec *s, int64_t max_pairs)
{
	static const double val_null_rates[] = {0, 0, 0.01, 0.3, 1.0};
	double		size_exp;
	int			any_skew = 0,
				ngroup,
				nvals,
				i;

	memset(s, 0, sizeof(*s));
	s->label = "random";
	s->nsteps = (int) rng_pick(rng, (const double[]) {1, 1, 1, 2, 2, 3, 3, 4}, 8);
	size_exp = s->nsteps == 1 ? 5.3 : 4.5;
	for (i = 0; i < s->nsteps; i++)
	{
		aj_random_step(rng, s, i, size_exp);
		any_skew |= s->steps[i].build_dist == AJ_SKEW;
	}
	/* RIGHT and FULL last steps (below the last: aj_random_outer_below) */
	if (rng_chance(rng, 0.3))
		s->steps[s->nsteps - 1].type = rng_chance(rng, 0.5) ? GA_AGGJOIN_RIGHT : GA_AGGJOIN_FULL;
	s->nprobe = rng_chance(rng, 0.08) ? rng_range(rng, 0, 5) :
		(int64_t) pow(10.0, rng_unit(rng) * size_exp);
	s->scattered = rng_chance(rng, 0.5);
	s->probe_hot = any_skew ? rng_unit(rng) * 0.05 : 0;
	s->probe_miss = rng_unit(rng) * 0.5;
	s->probe_key_null = rng_pick(rng, aj_key_null_rates, 8);
	s->group_by_probe_key = rng_chance(rng, 0.15);

	ngroup = (int) rng_range(rng, 0, 2);
	nvals = (int) rng_range(rng, 0, 6);
	for (i = 0; i < ngroup + nvals; i++)
	{
		AjColSpec  *cs = &s->cols[s->ncols++];

		cs->from_build = rng_chance(rng, 0.4) ? 0 : (int) rng_range(rng, 1, s->nsteps);
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

		/* a step's build key as a build column, grouped by */
		cs->from_build = (int) rng_range(rng, 1, s->nsteps);
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
	/* at most ~2000 pieces of any step per case, and at most max_pairs rows */
	s->max_pairs = max_pairs < s->batch_rows * 2000 ? max_pairs : s->batch_rows * 2000;
	/* and at most ~2000 pieces of unmatched build rows at finish */
	if ((s->steps[s->nsteps - 1].type == GA_AGGJOIN_RIGHT ||
		 s->steps[s->nsteps - 1].type == GA_AGGJOIN_FULL) &&
		s->steps[s->nsteps - 1].nbuild > s->batch_rows * 2000)
		s->steps[s->nsteps - 1].nbuild = s->batch_rows * 2000;
	aj_random_multikey(rng, s);
	aj_random_outer_below(rng, s);
	aj_random_filter(rng, s);
	aj_random_semi(rng, s);
	aj_random_step_filters(rng, s);
}
