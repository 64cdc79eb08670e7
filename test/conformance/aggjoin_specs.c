/*-------------------------------------------------------------------------
 *
 * aggjoin_specs.c
 *	  The aggjoin suite's fixed cases as specs (aggjoin.h), each one
 *	  scenario the random ones (aggjoin_random.c) may miss, and the
 *	  helpers both fill specs with.  aggjoin_case.c generates them and
 *	  aggjoin.c runs them.
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
 * filter drops count in no batch).
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.h"

#include <stdlib.h>
#include <string.h>

/* Set step i (0-based) of a spec: its type, key and build side. */
static void
aj_set_step(AjSpec *s, int i, GaAggJoinType type, AjKeyFrom key_from, int key_side,
			int64_t nbuild, AjBuildDist dist, int64_t key_domain)
{
	AjStepSpec *ss = &s->steps[i];

	memset(ss, 0, sizeof(*ss));
	ss->type = type;
	ss->key_from = key_from;
	ss->key_side = key_side;
	ss->nbuild = nbuild;
	ss->build_dist = dist;
	ss->key_domain = key_domain;
	if (s->nsteps < i + 1)
		s->nsteps = i + 1;
}

/*
 * Make step i (0-based) join on several keys, each of `domain` values, one
 * per word of `keys`: "p" a probe column, "bN" a column of build side N,
 * "=N" step N's key (of a step of several keys: its build key column).
 */
static void
aj_set_keys(AjSpec *s, int i, const char *keys, int64_t domain)
{
	AjStepSpec *ss = &s->steps[i];
	const char *k = keys;

	ss->nkeys = 0;
	ss->key_domain = domain;
	while (*k != '\0' && ss->nkeys < GA_AGG_MAX_JOIN_KEYS)
	{
		int			j = ss->nkeys++;

		ss->comp_from[j] = *k == 'p' ? AJ_KEY_PROBE : *k == 'b' ? AJ_KEY_BUILD : AJ_KEY_SHARED;
		ss->comp_side[j] = *k == 'p' ? 0 : (int) strtol(k + 1, NULL, 10);
		while (*k != '\0' && *k != ' ')
			k++;
		while (*k == ' ')
			k++;
	}
}

/* A plain spec to modify: one LEFT step, duplicates, a group column on each side. */
static void
aj_default_spec(AjSpec *s, const char *label, int64_t max_pairs)
{
	memset(s, 0, sizeof(*s));
	s->label = label;
	aj_set_step(s, 0, GA_AGGJOIN_LEFT, AJ_KEY_PROBE, 0, 5000, AJ_DUPS, 2000);
	s->nprobe = 20000;
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

/*
 * A chain to modify: the default's probe side and columns, with a value
 * column and a group column on every build side but the first one's.
 */
static void
aj_chain_spec(AjSpec *s, const char *label, int64_t max_pairs, int nsteps)
{
	int			i;

	aj_default_spec(s, label, max_pairs);
	s->nprobe = 10000;
	for (i = 1; i < nsteps && s->ncols + 2 <= AJ_MAX_COLS; i++)
	{
		aj_set_step(s, i, GA_AGGJOIN_INNER, AJ_KEY_PROBE, 0, 2000, AJ_DUPS, 1000);
		s->cols[s->ncols++] = (AjColSpec) {i + 1, GA_TYPE_FLOAT64, VAL_SMALL, 0.1, 0, 0, 0};
		s->cols[s->ncols++] = (AjColSpec) {i + 1, GA_TYPE_INT8, VAL_SMALL, 0.05, i < 2, 4, 0};
	}
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

/* The fixed one-step edge cases (index 0 .. 16): each a scenario random ones may miss. */
static void
aj_fixed_one_step(int index, AjSpec *s, int64_t max_pairs)
{
	AjStepSpec *s0 = &s->steps[0];

	switch (index)
	{
		case 0:
			aj_default_spec(s, "empty-build-inner", max_pairs);
			s0->type = GA_AGGJOIN_INNER;
			s0->nbuild = 0;
			break;
		case 1:
			aj_default_spec(s, "empty-build-left", max_pairs);
			s0->nbuild = 0;
			break;
		case 2:
			aj_default_spec(s, "empty-probe-plain", max_pairs);
			s->nprobe = 0;
			s->split = SPLIT_NONE;
			s->cols[0].group_key = s->cols[1].group_key = 0;
			break;
		case 3:
			aj_default_spec(s, "empty-probe-batch", max_pairs);
			s0->type = GA_AGGJOIN_INNER;
			s->nprobe = 0;
			break;
		case 4:
			aj_default_spec(s, "pk-fk-unique", max_pairs);
			s0->build_dist = AJ_UNIQUE;
			s0->nbuild = s0->key_domain = 50000;
			s->nprobe = 200000;
			s->batch_rows = 65536;
			s->probe_miss = 0.05;
			break;
		case 5:
			aj_default_spec(s, "many-to-many", max_pairs);
			s0->type = GA_AGGJOIN_INNER;
			s0->nbuild = 20000;
			s0->key_domain = 500;
			s->nprobe = 10000;
			s->batch_rows = 8192;
			break;
		case 6:
			aj_default_spec(s, "skew-pieces", max_pairs);
			s0->type = GA_AGGJOIN_INNER;
			s0->build_dist = AJ_SKEW;
			s0->nbuild = 12000;
			s0->skew_rows = 5000;
			s0->key_domain = 3000;
			s->probe_hot = 0.02;
			s->nprobe = 8000;
			s->batch_rows = 1000;
			s->split = SPLIT_RANDOM;
			break;
		case 7:
			aj_default_spec(s, "null-keys-both", max_pairs);
			s->probe_key_null = 0.3;
			s0->build_key_null = 0.3;
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
			s0->build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->scattered = 1;
			s->estimated_groups = 10;
			break;
		case 10:
			aj_default_spec(s, "one-row-pieces", max_pairs);
			s->nprobe = 300;
			s0->nbuild = 600;
			s0->key_domain = 100;
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
			s0->nbuild = 100000;
			s0->key_domain = 80000;
			s->nprobe = 300000;
			s->batch_rows = 1 << 17;
			s->cols[0].domain = 1000;
			s->cols[1].domain = 300;
			s->estimated_groups = 1;
			s->all_aggs = 0;
			break;
		case 14:
			aj_default_spec(s, "specials-inner-skew", max_pairs);
			s0->type = GA_AGGJOIN_INNER;
			s0->build_dist = AJ_SKEW;
			s0->skew_rows = 3000;
			s0->nbuild = 4000;
			s->probe_hot = 0.3;
			s->nprobe = 1000;
			s->batch_rows = 4096;
			s->ncols = 0;
			aj_all_types(s, 0, 1, 0.1, VAL_SPECIAL);
			s->cols[7] = (AjColSpec) {0, GA_TYPE_FLOAT32, VAL_SPECIAL, 0.1, 0, 0, 0};
			s->cols[8] = (AjColSpec) {0, GA_TYPE_INT8, VAL_SMALL, 0.1, 1, 30, 0};
			s->ncols = 9;
			break;
		case 15:
			aj_default_spec(s, "plain-left-scattered", max_pairs);
			s->scattered = 1;
			s->cols[0].group_key = s->cols[1].group_key = 0;
			s->split = SPLIT_RANDOM;
			break;
		default:
			/* ANTI: its build columns are named, so they must come back null */
			aj_default_spec(s, "anti-named-build-columns", max_pairs);
			s0->type = GA_AGGJOIN_ANTI;
			s0->build_dist = AJ_SKEW;
			s0->skew_rows = 2000;
			s->probe_hot = 0.2;
			s->probe_key_null = 0.1;
			s->batch_rows = 512;
			s->split = SPLIT_WITH_EMPTY;
			break;
	}
}

/* The fixed chain cases (index 17 .. 26). */
static void
aj_fixed_chain(int index, AjSpec *s, int64_t max_pairs)
{
	int			i;

	switch (index)
	{
		case 17:
			/* a star: every step on a probe column of its own */
			aj_chain_spec(s, "chain-star", max_pairs, 3);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->steps[1].type = GA_AGGJOIN_LEFT;
			s->steps[2].build_dist = AJ_UNIQUE;
			s->steps[2].nbuild = s->steps[2].key_domain = 3000;
			break;
		case 18:
			/* a snowflake: each step keyed on the previous build side */
			aj_chain_spec(s, "chain-snowflake", max_pairs, 3);
			s->steps[1].key_from = s->steps[2].key_from = AJ_KEY_BUILD;
			s->steps[1].key_side = 1;
			s->steps[2].key_side = 2;
			s->steps[1].type = GA_AGGJOIN_LEFT;
			s->steps[2].type = GA_AGGJOIN_LEFT;
			s->probe_miss = 0.2;
			s->split = SPLIT_RANDOM;
			break;
		case 19:
			/* ANTI inside a chain, then a step keyed on the first build side */
			aj_chain_spec(s, "chain-anti-middle", max_pairs, 3);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->steps[1].type = GA_AGGJOIN_ANTI;
			s->steps[1].key_domain = 200;
			s->steps[2].type = GA_AGGJOIN_LEFT;
			s->steps[2].key_from = AJ_KEY_BUILD;
			s->steps[2].key_side = 1;
			s->probe_key_null = 0.05;
			break;
		case 20:
			/* skew in two steps, pieces far smaller than one row's rows */
			aj_chain_spec(s, "chain-skew-small-pieces", max_pairs, 2);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->steps[0].build_dist = s->steps[1].build_dist = AJ_SKEW;
			s->steps[0].skew_rows = 300;
			s->steps[1].skew_rows = 400;
			s->steps[1].key_from = AJ_KEY_BUILD;
			s->steps[1].key_side = 1;
			s->probe_hot = 0.05;
			s->nprobe = 3000;
			s->batch_rows = 64;
			s->split = SPLIT_RANDOM;
			break;
		case 21:
			/* four steps, one-row pieces */
			aj_chain_spec(s, "chain-4-one-row-pieces", max_pairs, 4);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->steps[1].type = GA_AGGJOIN_LEFT;
			s->steps[2].type = GA_AGGJOIN_ANTI;
			s->steps[3].key_from = AJ_KEY_BUILD;
			s->steps[3].key_side = 2;
			s->steps[3].type = GA_AGGJOIN_LEFT;
			s->nprobe = 200;
			s->steps[0].nbuild = s->steps[1].nbuild = 300;
			s->steps[0].key_domain = s->steps[1].key_domain = 100;
			s->batch_rows = 1;
			break;
		case 22:
			/* empty builds inside a chain: LEFT keeps the rows, ANTI too */
			aj_chain_spec(s, "chain-empty-builds", max_pairs, 3);
			s->steps[1].type = GA_AGGJOIN_LEFT;
			s->steps[1].nbuild = 0;
			s->steps[2].type = GA_AGGJOIN_ANTI;
			s->steps[2].nbuild = 0;
			s->steps[2].key_from = AJ_KEY_BUILD;
			s->steps[2].key_side = 2;
			break;
		case 23:
			/* two steps on one probe key column */
			aj_chain_spec(s, "chain-shared-key", max_pairs, 3);
			s->steps[1].key_from = AJ_KEY_SHARED;
			s->steps[1].key_side = 1;
			s->steps[1].type = GA_AGGJOIN_LEFT;
			s->steps[2].key_from = AJ_KEY_SHARED;
			s->steps[2].key_side = 1;
			s->steps[2].type = GA_AGGJOIN_ANTI;
			s->steps[2].build_key_null = 0.5;
			s->group_by_probe_key = 1;
			s->scattered = 1;
			break;
		case 24:
			/* null keys flowing from a LEFT step into the next */
			aj_chain_spec(s, "chain-null-keys-flow", max_pairs, 2);
			s->steps[0].build_key_null = 0.3;
			s->steps[1].key_from = AJ_KEY_BUILD;
			s->steps[1].key_side = 1;
			s->steps[1].type = GA_AGGJOIN_LEFT;
			s->steps[1].build_key_null = 0.2;
			s->probe_key_null = 0.3;
			s->probe_miss = 0.3;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 25:
			/* every value type on two build sides */
			aj_chain_spec(s, "chain-all-types", max_pairs, 2);
			s->ncols = 0;
			aj_all_types(s, 0, 1, 0.2, VAL_MAGNITUDES);
			aj_all_types(s, 7, 2, 0.2, VAL_SMALL);
			s->cols[13] = (AjColSpec) {2, GA_TYPE_INT64, VAL_FULL, 0, 1, 0, 1};
			s->ncols = 14;		/* and two key columns */
			s->steps[1].key_from = AJ_KEY_BUILD;
			s->steps[1].key_side = 1;
			s->all_aggs = 0;
			break;
		default:
			/* a big PK-FK star in full pieces */
			aj_chain_spec(s, "chain-pk-fk-star", max_pairs, 4);
			s->nprobe = 200000;
			s->batch_rows = 32768;
			for (i = 0; i < 4; i++)
			{
				s->steps[i].build_dist = AJ_UNIQUE;
				s->steps[i].nbuild = s->steps[i].key_domain = 10000 * (i + 1);
				s->steps[i].type = i == 3 ? GA_AGGJOIN_LEFT : GA_AGGJOIN_INNER;
			}
			s->probe_miss = 0.02;
			break;
	}
}

/*
 * The fixed RIGHT and FULL cases (index 27 .. NUM_FIXED_AJ_CASES - 1):
 * the build rows nothing matched come back at finish, every other column
 * null, so each case varies what is matched and how the pieces fall.
 */
static void
aj_fixed_outer(int index, AjSpec *s, int64_t max_pairs)
{
	AjStepSpec *s0 = &s->steps[0];

	switch (index)
	{
		case 27:
			/* duplicates on both sides, null keys on both */
			aj_default_spec(s, "right-null-keys-dups", max_pairs);
			s0->type = GA_AGGJOIN_RIGHT;
			s0->key_domain = 4000;	/* about a third of the keys unmatched */
			s->probe_key_null = 0.3;
			s0->build_key_null = 0.3;
			s->nprobe = 3000;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 28:
			aj_default_spec(s, "full-null-keys-dups", max_pairs);
			s0->type = GA_AGGJOIN_FULL;
			s0->key_domain = 4000;
			s->probe_key_null = 0.3;
			s0->build_key_null = 0.3;
			s->nprobe = 3000;
			s->split = SPLIT_RANDOM;
			break;
		case 29:
			/* no probe rows: every build row comes back, in pieces */
			aj_default_spec(s, "right-empty-probe", max_pairs);
			s0->type = GA_AGGJOIN_RIGHT;
			s0->build_key_null = 0.1;
			s->nprobe = 0;
			s->batch_rows = 1000;
			break;
		case 30:
			aj_default_spec(s, "full-empty-build", max_pairs);
			s0->type = GA_AGGJOIN_FULL;
			s0->nbuild = 0;
			break;
		case 31:
			/* unique build keys, every one probed: nothing comes back at finish */
			aj_default_spec(s, "full-all-matched", max_pairs);
			s0->type = GA_AGGJOIN_FULL;
			s0->build_dist = AJ_UNIQUE;
			s0->nbuild = s0->key_domain = 500;
			s->probe_miss = 0;
			s->nprobe = 50000;
			s->batch_rows = 8192;
			break;
		case 32:
			/* every probe key misses: every build row comes back */
			aj_default_spec(s, "right-none-matched", max_pairs);
			s0->type = GA_AGGJOIN_RIGHT;
			s->probe_miss = 1.0;
			s->split = SPLIT_RANDOM;
			break;
		case 33:
			/* skew and pieces far smaller than the unmatched rows */
			aj_default_spec(s, "full-small-pieces", max_pairs);
			s0->type = GA_AGGJOIN_FULL;
			s0->build_dist = AJ_SKEW;
			s0->skew_rows = 300;
			s0->nbuild = 3000;
			s0->key_domain = 2500;
			s0->build_key_null = 0.05;
			s->probe_hot = 0.05;
			s->nprobe = 1500;
			s->batch_rows = 7;
			s->split = SPLIT_RANDOM;
			break;
		case 34:
			/* two steps: INNER, then RIGHT keyed on the first build side */
			aj_chain_spec(s, "chain-inner-right", max_pairs, 2);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->steps[1].type = GA_AGGJOIN_RIGHT;
			s->steps[1].key_from = AJ_KEY_BUILD;
			s->steps[1].key_side = 1;
			s->steps[1].key_domain = 1500;
			s->steps[1].build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->batch_rows = 256;
			break;
		default:
			/* three steps: LEFT, ANTI, then FULL on a probe key */
			aj_chain_spec(s, "chain-left-anti-full", max_pairs, 3);
			s->steps[0].type = GA_AGGJOIN_LEFT;
			s->steps[1].type = GA_AGGJOIN_ANTI;
			s->steps[1].key_domain = 200;
			s->steps[2].type = GA_AGGJOIN_FULL;
			s->steps[2].key_domain = 3000;
			s->steps[2].build_key_null = 0.2;
			s->probe_key_null = 0.05;
			s->split = SPLIT_WITH_EMPTY;
			break;
	}
}

/*
 * The fixed cases of steps of several keys (index 36 .. 47): small
 * domains per component, so that keys share components ((1, 2) and
 * (1, 3)) and are permutations of each other ((1, 2) and (2, 1)), with
 * duplicates on both sides, nulls in some key columns, every join type,
 * and chains that mix keys of the probe side, of earlier build sides and
 * of earlier steps with steps of one key.
 */
static void
aj_fixed_multikey(int index, AjSpec *s, int64_t max_pairs)
{
	AjStepSpec *s0 = &s->steps[0];

	switch (index)
	{
		case 36:
			aj_default_spec(s, "keys2-inner", max_pairs);
			s0->type = GA_AGGJOIN_INNER;
			aj_set_keys(s, 0, "p p", 40);
			s->probe_key_null = 0.05;
			s0->build_key_null = 0.05;
			break;
		case 37:
			/* 27 keys over 300 build rows: every key on about 11 rows */
			aj_default_spec(s, "keys3-left-many-to-many", max_pairs);
			aj_set_keys(s, 0, "p p p", 3);
			s0->nbuild = 300;
			s->nprobe = 3000;
			s->probe_key_null = 0.1;
			s0->build_key_null = 0.1;
			s->split = SPLIT_RANDOM;
			break;
		case 38:
			aj_default_spec(s, "keys4-anti-nulls", max_pairs);
			s0->type = GA_AGGJOIN_ANTI;
			aj_set_keys(s, 0, "p p p p", 3);
			s0->nbuild = 100;
			s->probe_key_null = 0.05;
			s0->build_key_null = 0.05;
			s->batch_rows = 512;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 39:
			aj_default_spec(s, "keys2-right-nulls-dups", max_pairs);
			s0->type = GA_AGGJOIN_RIGHT;
			aj_set_keys(s, 0, "p p", 30);
			s0->nbuild = 2000;
			s->nprobe = 3000;
			s->probe_key_null = 0.2;
			s0->build_key_null = 0.2;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 40:
			aj_default_spec(s, "keys3-full-skew-small-pieces", max_pairs);
			s0->type = GA_AGGJOIN_FULL;
			aj_set_keys(s, 0, "p p p", 8);
			s0->build_dist = AJ_SKEW;
			s0->skew_rows = 200;
			s0->nbuild = 1500;
			s0->build_key_null = 0.05;
			s->probe_hot = 0.05;
			s->nprobe = 1500;
			s->batch_rows = 7;
			s->split = SPLIT_RANDOM;
			break;
		case 41:
			/* a composite primary key: 250 x 250 keys, each on at most one row */
			aj_default_spec(s, "keys2-unique-scattered", max_pairs);
			aj_set_keys(s, 0, "p p", 250);
			s0->build_dist = AJ_UNIQUE;
			s0->nbuild = 50000;
			s->nprobe = 100000;
			s->scattered = 1;
			s->batch_rows = 65536;
			s->group_by_probe_key = 1;
			s->cols[0].group_key = 0;
			break;
		case 42:
			/* one key, then keys of build side 1 and the probe, then of steps 2 and 3 */
			aj_chain_spec(s, "keys-chain-mixed-sides", max_pairs, 3);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->steps[1].type = GA_AGGJOIN_LEFT;
			aj_set_keys(s, 1, "b1 p", 20);
			s->steps[2].type = GA_AGGJOIN_INNER;
			aj_set_keys(s, 2, "=2 b2 p", 5);
			s->probe_key_null = 0.05;
			s->split = SPLIT_RANDOM;
			break;
		case 43:
			/* several keys, then one key on its build key column, then ANTI */
			aj_chain_spec(s, "keys-chain-then-one-key", max_pairs, 3);
			aj_set_keys(s, 0, "p p", 30);
			s->steps[0].build_key_null = 0.1;
			s->steps[1].key_from = AJ_KEY_SHARED;
			s->steps[1].key_side = 1;
			s->steps[1].key_domain = 30;
			s->steps[2].type = GA_AGGJOIN_ANTI;
			s->steps[2].key_from = AJ_KEY_BUILD;
			s->steps[2].key_side = 2;
			s->steps[2].key_domain = 300;
			break;
		case 44:
			/* FULL last, keyed on step 1's key and a column of build side 1 */
			aj_chain_spec(s, "keys-chain-full-last", max_pairs, 2);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->steps[1].type = GA_AGGJOIN_FULL;
			aj_set_keys(s, 1, "=1 b1", 25);
			s->steps[1].build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->batch_rows = 256;
			break;
		case 45:
			/* four steps of one-row pieces, keys of every origin */
			aj_chain_spec(s, "keys-chain-4-one-row-pieces", max_pairs, 4);
			s->steps[0].type = GA_AGGJOIN_INNER;
			aj_set_keys(s, 0, "p p", 5);
			s->steps[1].type = GA_AGGJOIN_LEFT;
			aj_set_keys(s, 1, "=1 b1 p =1", 3);
			s->steps[2].type = GA_AGGJOIN_ANTI;
			s->steps[3].type = GA_AGGJOIN_RIGHT;
			aj_set_keys(s, 3, "b2 =2", 4);
			s->nprobe = 200;
			s->steps[0].nbuild = s->steps[1].nbuild = s->steps[3].nbuild = 100;
			s->steps[2].key_domain = 50;
			s->batch_rows = 1;
			break;
		case 46:
			/* grouped by the first key column and by a build key column */
			aj_default_spec(s, "keys2-group-by-keys", max_pairs);
			s0->type = GA_AGGJOIN_INNER;
			aj_set_keys(s, 0, "p p", 50);
			s->group_by_probe_key = 1;
			s->cols[0].group_key = 0;
			s->cols[1] = (AjColSpec) {1, GA_TYPE_INT64, VAL_FULL, 0, 1, 0, 1};
			s->probe_key_null = 0.1;
			s0->build_key_null = 0.1;
			s->estimated_groups = 10;
			break;
		default:
			/* no build row has all its keys: LEFT keeps every row, null */
			aj_default_spec(s, "keys3-no-keyed-build-row", max_pairs);
			aj_set_keys(s, 0, "p p p", 10);
			s0->build_key_null = 1.0;
			s->probe_key_null = 0.5;
			break;
	}
}

/*
 * The fixed cases of RIGHT and FULL steps below others (index 48 .. 51):
 * their unmatched build rows come back at finish through the steps after
 * them, with every earlier side null, so a later step keyed on the probe
 * side sees null keys, one keyed on their own build side may match them,
 * and a later RIGHT or FULL step counts those matches before its own
 * unmatched rows are listed.  Then a step of seven keys (52), and chains
 * of six and of eight steps (53, 54).
 */
static void
aj_fixed_outer_below(int index, AjSpec *s, int64_t max_pairs)
{
	switch (index)
	{
		case 48:
			/* RIGHT, then INNER keyed on its build side: its unmatched rows may match */
			aj_chain_spec(s, "chain-right-below-inner", max_pairs, 2);
			aj_set_step(s, 0, GA_AGGJOIN_RIGHT, AJ_KEY_PROBE, 0, 5000, AJ_DUPS, 4000);
			aj_set_step(s, 1, GA_AGGJOIN_INNER, AJ_KEY_BUILD, 1, 2000, AJ_UNIQUE, 2000);
			s->steps[0].build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->nprobe = 3000;
			s->batch_rows = 256;
			s->split = SPLIT_RANDOM;
			break;
		case 49:
			/* FULL, LEFT on a probe key (null for them), RIGHT on build side 1 */
			aj_chain_spec(s, "chain-full-below-left-right", max_pairs, 3);
			aj_set_step(s, 0, GA_AGGJOIN_FULL, AJ_KEY_PROBE, 0, 5000, AJ_DUPS, 4000);
			aj_set_step(s, 1, GA_AGGJOIN_LEFT, AJ_KEY_PROBE, 0, 2000, AJ_DUPS, 1000);
			aj_set_step(s, 2, GA_AGGJOIN_RIGHT, AJ_KEY_BUILD, 1, 1500, AJ_UNIQUE, 1500);
			s->steps[2].build_key_null = 0.1;
			s->probe_key_null = 0.05;
			s->nprobe = 3000;
			s->batch_rows = 100;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 50:
			/* RIGHT, ANTI on its build side, FULL on a probe key; tiny pieces */
			aj_chain_spec(s, "chain-right-below-anti-full", max_pairs, 3);
			aj_set_step(s, 0, GA_AGGJOIN_RIGHT, AJ_KEY_PROBE, 0, 2000, AJ_DUPS, 3000);
			aj_set_step(s, 1, GA_AGGJOIN_ANTI, AJ_KEY_BUILD, 1, 300, AJ_DUPS, 500);
			aj_set_step(s, 2, GA_AGGJOIN_FULL, AJ_KEY_PROBE, 0, 1000, AJ_DUPS, 800);
			s->steps[0].build_key_null = 0.2;
			s->nprobe = 1500;
			s->batch_rows = 3;
			s->split = SPLIT_RANDOM;
			break;
		case 51:
			/* several keys: RIGHT on two probe keys, then FULL on build side 1 and a probe key */
			aj_chain_spec(s, "keys-chain-right-below-full", max_pairs, 2);
			s->steps[0].type = GA_AGGJOIN_RIGHT;
			s->steps[0].nbuild = 2000;
			aj_set_keys(s, 0, "p p", 30);
			s->steps[1].type = GA_AGGJOIN_FULL;
			s->steps[1].nbuild = 300;
			aj_set_keys(s, 1, "b1 p", 20);
			s->steps[0].build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->nprobe = 2000;
			s->batch_rows = 64;
			break;
		case 52:
			/* seven keys of two values each (128 tuples), nulls on both sides */
			aj_default_spec(s, "keys7-left-nulls", max_pairs);
			aj_set_keys(s, 0, "p p p p p p p", 2);
			s->steps[0].nbuild = 300;
			s->steps[0].build_key_null = 0.05;
			s->probe_key_null = 0.05;
			s->nprobe = 5000;
			break;
		case 53:
			/* six steps: a star and a snowflake, LEFT, ANTI and RIGHT among them */
			aj_chain_spec(s, "chain-6-star-snowflake", max_pairs, 6);
			s->steps[0].type = GA_AGGJOIN_INNER;
			aj_set_step(s, 1, GA_AGGJOIN_LEFT, AJ_KEY_BUILD, 1, 1000, AJ_UNIQUE, 1000);
			aj_set_step(s, 2, GA_AGGJOIN_INNER, AJ_KEY_PROBE, 0, 2000, AJ_DUPS, 1500);
			aj_set_step(s, 3, GA_AGGJOIN_ANTI, AJ_KEY_BUILD, 3, 300, AJ_DUPS, 2000);
			aj_set_step(s, 4, GA_AGGJOIN_RIGHT, AJ_KEY_BUILD, 2, 800, AJ_UNIQUE, 800);
			aj_set_step(s, 5, GA_AGGJOIN_LEFT, AJ_KEY_PROBE, 0, 500, AJ_DUPS, 400);
			s->probe_key_null = 0.05;
			s->batch_rows = 512;
			s->split = SPLIT_RANDOM;
			break;
		case 54:
			/* eight steps (the most) of one-row-ish pieces */
			aj_chain_spec(s, "chain-8-small-pieces", max_pairs, 8);
			for (int i = 1; i < 8; i++)
				aj_set_step(s, i, i % 3 == 2 ? GA_AGGJOIN_LEFT : GA_AGGJOIN_INNER,
							i % 2 ? AJ_KEY_PROBE : AJ_KEY_BUILD, i % 2 ? 0 : i, 200, AJ_UNIQUE, 200);
			s->steps[7].type = GA_AGGJOIN_FULL;
			s->nprobe = 1500;
			s->batch_rows = 5;
			break;
	}
}

/* Append to a filter program (*n steps so far) a step over spec columns a and b (-1: none). */
static void
aj_push_filter_step(GaFilterStep *program, int *n, GaFilterOp op, GaCompareOp cmp, int a, int b)
{
	GaFilterStep *st = &program[(*n)++];

	st->op = op;
	st->cmp = cmp;
	st->column = a;
	st->column2 = b;
}

/* Append a step of the join's filter over spec columns a and b (-1: none). */
void
aj_filter_step(AjSpec *s, GaFilterOp op, GaCompareOp cmp, int a, int b)
{
	aj_push_filter_step(s->filter, &s->nfilter, op, cmp, a, b);
}

/*
 * The fixed cases of the join's filter (index 55 .. 57): comparisons of
 * two sides' integers and of floats with NaN, infinities and -0, NOT, AND
 * and OR over nulls from a LEFT step, booleans, pieces of a few rows that
 * the filter empties, and a RIGHT last step whose unmatched rows (null
 * probe columns) the filter drops.
 */
static void
aj_fixed_filter(int index, AjSpec *s, int64_t max_pairs)
{
	switch (index)
	{
		case 55:
			/* INNER: probe int32 >= build int16, AND NOT (probe float8 > build float4) */
			aj_default_spec(s, "filter-compare-floats", max_pairs);
			s->steps[0].type = GA_AGGJOIN_INNER;
			s->cols[2].mode = VAL_SPECIAL;
			s->cols[s->ncols++] = (AjColSpec) {1, GA_TYPE_FLOAT32, VAL_SPECIAL, 0.1, 0, 0, 0};
			aj_filter_step(s, GA_FILTER_COMPARE, GA_CMP_GE, 0, 1);
			aj_filter_step(s, GA_FILTER_COMPARE, GA_CMP_GT, 2, 4);
			aj_filter_step(s, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
			aj_filter_step(s, GA_FILTER_AND, GA_CMP_EQ, -1, -1);
			break;
		case 56:
			/* (build1 int16 < probe int32 OR bool of build 2) AND NOT bool of build 3; a LEFT step */
			aj_chain_spec(s, "filter-chain-left-small-pieces", max_pairs, 3);
			s->steps[1].type = GA_AGGJOIN_LEFT;
			aj_filter_step(s, GA_FILTER_COMPARE, GA_CMP_LT, 1, 0);
			aj_filter_step(s, GA_FILTER_BOOL, GA_CMP_EQ, 5, -1);
			aj_filter_step(s, GA_FILTER_OR, GA_CMP_EQ, -1, -1);
			aj_filter_step(s, GA_FILTER_BOOL, GA_CMP_EQ, 7, -1);
			aj_filter_step(s, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
			aj_filter_step(s, GA_FILTER_AND, GA_CMP_EQ, -1, -1);
			s->batch_rows = 7;
			s->split = SPLIT_RANDOM;
			break;
		default:
			/* RIGHT last: probe int32 = itself drops its unmatched rows; <> drops all */
			aj_chain_spec(s, "filter-right-unmatched", max_pairs, 2);
			s->steps[1].type = GA_AGGJOIN_RIGHT;
			s->steps[1].nbuild = 3000;
			aj_filter_step(s, GA_FILTER_COMPARE, GA_CMP_EQ, 0, 0);
			aj_filter_step(s, GA_FILTER_COMPARE, GA_CMP_NE, 3, 3);
			aj_filter_step(s, GA_FILTER_OR, GA_CMP_EQ, -1, -1);
			s->batch_rows = 100;
			break;
	}
}

/* Append a step of step i's (0-based) own filter over spec columns a and b (-1: none). */
void
aj_step_filter(AjSpec *s, int i, GaFilterOp op, GaCompareOp cmp, int a, int b)
{
	aj_push_filter_step(s->steps[i].filter, &s->steps[i].nfilter, op, cmp, a, b);
}

/*
 * The fixed cases of SEMI steps and steps' own filters (index 58 ..
 * NUM_FIXED_AJ_CASES - 1): a LEFT step whose rows keep only their passing
 * pairs or, none passing, one null-extended row; ANTI and SEMI (with and
 * without a filter) over many matches per key, a SEMI row coming once
 * however many pairs pass; floats with NaN, infinities and -0 on both
 * sides; a filter reading an earlier LEFT step's null-extended side;
 * filtered steps below a RIGHT and a FULL step (which count only the rows
 * the filter leaves) and above them (whose unmatched build rows go through
 * the filter, their earlier sides null); one key on thousands of build
 * rows, its pairs over many pieces with few passing; a step filter with
 * the join's filter; two keys; a chain of five filtered steps.
 */
static void
aj_fixed_step_filter(int index, AjSpec *s, int64_t max_pairs)
{
	AjStepSpec *s0 = &s->steps[0];

	switch (index)
	{
		case 58:
			/* LEFT JOIN ON k AND probe int32 >= build int16: ~10 pairs a key */
			aj_default_spec(s, "stepfilter-left-int", max_pairs);
			s0->key_domain = 500;
			s0->build_key_null = 0.05;
			s->probe_key_null = 0.05;
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_GE, 0, 1);
			s->batch_rows = 1024;
			s->split = SPLIT_RANDOM;
			break;
		case 59:
			/* ANTI: no pair with build int16 = probe int32 OR NOT bool(build int8) */
			aj_default_spec(s, "stepfilter-anti", max_pairs);
			s0->type = GA_AGGJOIN_ANTI;
			s0->key_domain = 500;
			s0->build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->cols[s->ncols++] = (AjColSpec) {1, GA_TYPE_INT8, VAL_SMALL, 0.3, 0, 0, 0};
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_EQ, 1, 0);
			aj_step_filter(s, 0, GA_FILTER_BOOL, GA_CMP_EQ, 4, -1);
			aj_step_filter(s, 0, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
			aj_step_filter(s, 0, GA_FILTER_OR, GA_CMP_EQ, -1, -1);
			s->batch_rows = 512;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 60:
			/* SEMI, ~40 build rows a key, its build columns grouped by (null) */
			aj_default_spec(s, "semi-many-to-many", max_pairs);
			s0->type = GA_AGGJOIN_SEMI;
			s0->nbuild = 20000;
			s0->key_domain = 500;
			s0->build_key_null = 0.1;
			s->probe_key_null = 0.1;
			s->probe_miss = 0.2;
			s->split = SPLIT_RANDOM;
			break;
		case 61:
			/* SEMI ON k AND probe int32 > build int16 AND NOT bool(build int8 of -1, 0, 1) */
			aj_default_spec(s, "semi-filter-many-to-many", max_pairs);
			s0->type = GA_AGGJOIN_SEMI;
			s0->nbuild = 20000;
			s0->key_domain = 500;
			s0->build_key_null = 0.05;
			s->probe_key_null = 0.05;
			s->cols[s->ncols++] = (AjColSpec) {1, GA_TYPE_INT8, VAL_SMALL, 0.1, 1, 3, 0};
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_GT, 0, 1);
			aj_step_filter(s, 0, GA_FILTER_BOOL, GA_CMP_EQ, 4, -1);
			aj_step_filter(s, 0, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
			aj_step_filter(s, 0, GA_FILTER_AND, GA_CMP_EQ, -1, -1);
			s->batch_rows = 1000;
			s->split = SPLIT_RANDOM;
			break;
		case 62:
			/* LEFT ON k AND (probe f64 <= build f32 OR probe f32 = build f64), specials */
			aj_default_spec(s, "stepfilter-floats-special", max_pairs);
			s0->nbuild = 3000;
			s0->key_domain = 300;
			s->probe_key_null = 0.05;
			s->cols[2].mode = VAL_SPECIAL;
			s->cols[s->ncols++] = (AjColSpec) {1, GA_TYPE_FLOAT32, VAL_SPECIAL, 0.1, 0, 0, 0};
			s->cols[s->ncols++] = (AjColSpec) {0, GA_TYPE_FLOAT32, VAL_SPECIAL, 0.1, 0, 0, 0};
			s->cols[s->ncols++] = (AjColSpec) {1, GA_TYPE_FLOAT64, VAL_SPECIAL, 0.1, 0, 0, 0};
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_LE, 2, 4);
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_EQ, 5, 6);
			aj_step_filter(s, 0, GA_FILTER_OR, GA_CMP_EQ, -1, -1);
			s->batch_rows = 777;
			break;
		case 63:
			/* LEFT (many misses), LEFT ON b1 int16 <= b2 int8, ANTI ON b1 int64 > b3 int8 */
			aj_chain_spec(s, "stepfilter-null-extended-earlier", max_pairs, 3);
			s->steps[1].type = GA_AGGJOIN_LEFT;
			s->steps[2].type = GA_AGGJOIN_ANTI;
			s->steps[2].key_domain = 300;
			s->probe_miss = 0.4;
			aj_step_filter(s, 1, GA_FILTER_COMPARE, GA_CMP_LE, 1, 5);
			aj_step_filter(s, 2, GA_FILTER_COMPARE, GA_CMP_GT, 3, 7);
			s->split = SPLIT_RANDOM;
			break;
		case 64:
			/* SEMI ON k AND probe int32 >= b1 int16, then RIGHT on ~unique probe keys */
			aj_chain_spec(s, "semi-filter-below-right", max_pairs, 2);
			s->steps[0].type = GA_AGGJOIN_SEMI;
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_GE, 0, 1);
			aj_set_step(s, 1, GA_AGGJOIN_RIGHT, AJ_KEY_PROBE, 0, 8000, AJ_UNIQUE, 8000);
			s->probe_miss = 0.05;
			s->batch_rows = 256;
			s->split = SPLIT_RANDOM;
			break;
		case 65:
			/* LEFT ON k AND probe int32 < b1 int16, then FULL on unique keys of build side 1 */
			aj_chain_spec(s, "left-filter-below-full", max_pairs, 2);
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_LT, 0, 1);
			aj_set_step(s, 1, GA_AGGJOIN_FULL, AJ_KEY_BUILD, 1, 3000, AJ_UNIQUE, 3000);
			s->steps[1].build_key_null = 0.05;
			s->batch_rows = 300;
			break;
		case 66:
			/* FULL, then LEFT on build side 1 ON b1 int16 < b2 int8 OR probe int32 >= b2 int8 */
			aj_chain_spec(s, "full-below-left-filter", max_pairs, 2);
			aj_set_step(s, 0, GA_AGGJOIN_FULL, AJ_KEY_PROBE, 0, 3000, AJ_DUPS, 4000);
			aj_set_step(s, 1, GA_AGGJOIN_LEFT, AJ_KEY_BUILD, 1, 2000, AJ_DUPS, 1000);
			aj_step_filter(s, 1, GA_FILTER_COMPARE, GA_CMP_LT, 1, 5);
			aj_step_filter(s, 1, GA_FILTER_COMPARE, GA_CMP_GE, 0, 5);
			aj_step_filter(s, 1, GA_FILTER_OR, GA_CMP_EQ, -1, -1);
			s->steps[0].build_key_null = 0.05;
			s->nprobe = 4000;
			s->batch_rows = 128;
			s->split = SPLIT_WITH_EMPTY;
			break;
		case 67:
			/* RIGHT, SEMI on build side 1 ON b1 >= b2, ANTI on it ON b3 > probe OR b1 < b3 */
			aj_chain_spec(s, "right-below-semi-anti-filters", max_pairs, 3);
			aj_set_step(s, 0, GA_AGGJOIN_RIGHT, AJ_KEY_PROBE, 0, 3000, AJ_DUPS, 4000);
			aj_set_step(s, 1, GA_AGGJOIN_SEMI, AJ_KEY_BUILD, 1, 2000, AJ_DUPS, 1000);
			aj_set_step(s, 2, GA_AGGJOIN_ANTI, AJ_KEY_BUILD, 1, 1000, AJ_DUPS, 600);
			aj_step_filter(s, 1, GA_FILTER_COMPARE, GA_CMP_GE, 1, 5);
			aj_step_filter(s, 2, GA_FILTER_COMPARE, GA_CMP_GT, 7, 0);
			aj_step_filter(s, 2, GA_FILTER_COMPARE, GA_CMP_LT, 3, 7);
			aj_step_filter(s, 2, GA_FILTER_OR, GA_CMP_EQ, -1, -1);
			s->steps[0].build_key_null = 0.05;
			s->nprobe = 4000;
			s->batch_rows = 200;
			s->split = SPLIT_RANDOM;
			break;
		case 68:
			/*
			 * one key on 5000 build rows, pieces of 64: LEFT ON probe int32 =
			 * b int16 AND b int64 > probe int64
			 */
			aj_default_spec(s, "stepfilter-skew-left-pieces", max_pairs);
			s0->build_dist = AJ_SKEW;
			s0->nbuild = 12000;
			s0->skew_rows = 5000;
			s0->key_domain = 3000;
			s->probe_hot = 0.02;
			s->nprobe = 8000;
			s->cols[s->ncols++] = (AjColSpec) {0, GA_TYPE_INT64, VAL_FULL, 0.05, 0, 0, 0};
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_EQ, 0, 1);
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_GT, 3, 4);
			aj_step_filter(s, 0, GA_FILTER_AND, GA_CMP_EQ, -1, -1);
			s->batch_rows = 64;
			s->split = SPLIT_RANDOM;
			break;
		case 69:
			/* one key on 5000 build rows: SEMI ON probe int32 = build int16 of -100 .. 100 */
			aj_default_spec(s, "semi-skew-rare-filter", max_pairs);
			s0->type = GA_AGGJOIN_SEMI;
			s0->build_dist = AJ_SKEW;
			s0->nbuild = 12000;
			s0->skew_rows = 5000;
			s0->key_domain = 3000;
			s->probe_hot = 0.03;
			s->nprobe = 8000;
			s->cols[s->ncols++] = (AjColSpec) {1, GA_TYPE_INT16, VAL_SMALL, 0.05, 0, 0, 0};
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_EQ, 0, 4);
			s->batch_rows = 64;
			break;
		case 70:
			/* the same as ANTI, in pieces of 3 rows */
			aj_default_spec(s, "anti-skew-rare-filter", max_pairs);
			s0->type = GA_AGGJOIN_ANTI;
			s0->build_dist = AJ_SKEW;
			s0->nbuild = 12000;
			s0->skew_rows = 5000;
			s0->key_domain = 3000;
			s->probe_hot = 0.03;
			s->nprobe = 8000;
			s->cols[s->ncols++] = (AjColSpec) {1, GA_TYPE_INT16, VAL_SMALL, 0.05, 0, 0, 0};
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_EQ, 4, 0);
			s->batch_rows = 3;
			s->split = SPLIT_RANDOM;
			break;
		case 71:
			/* LEFT ON probe >= b1, INNER ON b2 int8 <= probe, and the join's filter over both */
			aj_chain_spec(s, "stepfilter-and-join-filter", max_pairs, 2);
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_GE, 0, 1);
			aj_step_filter(s, 1, GA_FILTER_COMPARE, GA_CMP_LE, 5, 0);
			aj_filter_step(s, GA_FILTER_COMPARE, GA_CMP_NE, 2, 4);
			aj_filter_step(s, GA_FILTER_BOOL, GA_CMP_EQ, 5, -1);
			aj_filter_step(s, GA_FILTER_OR, GA_CMP_EQ, -1, -1);
			aj_filter_step(s, GA_FILTER_COMPARE, GA_CMP_LT, 1, 0);
			aj_filter_step(s, GA_FILTER_NOT, GA_CMP_EQ, -1, -1);
			aj_filter_step(s, GA_FILTER_AND, GA_CMP_EQ, -1, -1);
			s->batch_rows = 100;
			s->split = SPLIT_RANDOM;
			break;
		case 72:
			/* SEMI on two probe keys ON b1 int16 < probe int32; ANTI on them too */
			aj_chain_spec(s, "keys2-semi-anti-filters", max_pairs, 2);
			s->steps[0].type = GA_AGGJOIN_SEMI;
			s->steps[0].nbuild = 2000;
			aj_set_keys(s, 0, "p p", 20);
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_LT, 1, 0);
			s->steps[1].type = GA_AGGJOIN_ANTI;
			aj_set_keys(s, 1, "p =1", 20);
			aj_step_filter(s, 1, GA_FILTER_COMPARE, GA_CMP_GT, 5, 0);
			s->steps[0].build_key_null = s->steps[1].build_key_null = 0.05;
			s->probe_key_null = 0.05;
			s->batch_rows = 512;
			break;
		default:
			/*
			 * INNER ON probe >= b1, LEFT on build side 1 ON probe f64 <= b2 f64,
			 * SEMI ON bool(b3 int8) AND b1 int64 not null, ANTI on build side 2
			 * ON b4 int8 = b2 int8, LEFT; pieces of 5 rows
			 */
			aj_chain_spec(s, "chain-5-step-filters", max_pairs, 5);
			s->nprobe = 1500;
			aj_set_step(s, 0, GA_AGGJOIN_INNER, AJ_KEY_PROBE, 0, 600, AJ_DUPS, 200);
			aj_set_step(s, 1, GA_AGGJOIN_LEFT, AJ_KEY_BUILD, 1, 600, AJ_DUPS, 300);
			aj_set_step(s, 2, GA_AGGJOIN_SEMI, AJ_KEY_PROBE, 0, 600, AJ_DUPS, 100);
			aj_set_step(s, 3, GA_AGGJOIN_ANTI, AJ_KEY_BUILD, 2, 300, AJ_DUPS, 100);
			aj_set_step(s, 4, GA_AGGJOIN_LEFT, AJ_KEY_PROBE, 0, 400, AJ_DUPS, 200);
			aj_step_filter(s, 0, GA_FILTER_COMPARE, GA_CMP_GE, 0, 1);
			aj_step_filter(s, 1, GA_FILTER_COMPARE, GA_CMP_LE, 2, 4);
			aj_step_filter(s, 2, GA_FILTER_BOOL, GA_CMP_EQ, 7, -1);
			aj_step_filter(s, 2, GA_FILTER_COMPARE, GA_CMP_EQ, 3, 3);	/* b1 not null */
			aj_step_filter(s, 2, GA_FILTER_AND, GA_CMP_EQ, -1, -1);
			aj_step_filter(s, 3, GA_FILTER_COMPARE, GA_CMP_EQ, 9, 5);
			s->probe_key_null = 0.05;
			s->batch_rows = 5;
			s->split = SPLIT_RANDOM;
			break;
	}
}

/* The fixed edge cases: each index is one scenario random ones may miss. */
void
aj_fixed_spec(int index, AjSpec *s, int64_t max_pairs)
{
	if (index <= 16)
		aj_fixed_one_step(index, s, max_pairs);
	else if (index <= 26)
		aj_fixed_chain(index, s, max_pairs);
	else if (index <= 35)
		aj_fixed_outer(index, s, max_pairs);
	else if (index <= 47)
		aj_fixed_multikey(index, s, max_pairs);
	else if (index <= 54)
		aj_fixed_outer_below(index, s, max_pairs);
	else if (index <= 57)
		aj_fixed_filter(index, s, max_pairs);
	else
		aj_fixed_step_filter(index, s, max_pairs);
}

/* Keep a spec within --max-rows on every side (small runs under a sanitizer). */
void
aj_cap_spec(AjSpec *s, int64_t max_rows)
{
	int			i;

	if (s->nprobe > max_rows)
		s->nprobe = max_rows;
	for (i = 0; i < s->nsteps; i++)
	{
		AjStepSpec *ss = &s->steps[i];

		if (ss->nbuild > max_rows)
			ss->nbuild = max_rows;
		if (ss->key_domain > ss->nbuild && ss->nbuild > 0)
			ss->key_domain = ss->nbuild;
	}
}
