/*-------------------------------------------------------------------------
 *
 * aggjoin.h
 *	  What the aggjoin suite's two files share: the spec of a
 *	  case (its join steps, sides and columns), which aggjoin_specs.c fills
 *	  (the fixed edge cases and random ones) and aggjoin.c turns into
 *	  generated sides, the reference's rows and device runs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CONFORMANCE_AGGJOIN_H
#define GPUAGG_CONFORMANCE_AGGJOIN_H

#include "conformance.h"

#define AJ_MAX_STEPS GA_AGG_MAX_JOIN_STEPS

/* Most columns besides the steps' key columns. */
#define AJ_MAX_COLS (MAX_COLUMNS - 1)

/* How a build side's keys are drawn. */
typedef enum AjBuildDist
{
	AJ_UNIQUE,					/* every keyed build row its own key */
	AJ_DUPS,					/* uniform over a smaller domain */
	AJ_SKEW						/* one key on skew_rows rows, the rest uniform */
} AjBuildDist;

/* Where a step's key column (or a key column of a step of several) is. */
typedef enum AjKeyFrom
{
	AJ_KEY_PROBE,				/* a probe column of its own */
	AJ_KEY_BUILD,				/* a column of its own on an earlier build side */
	AJ_KEY_SHARED				/* the key column of an earlier step (of one of
								 * several keys: its build key column) */
} AjKeyFrom;

/*
 * One join step: its type, its key column(s) and its build side.  A step
 * of several keys (nkeys 2 .. GA_AGG_MAX_JOIN_KEYS) has one key column per
 * component, placed as a single key is (comp_from[i], comp_side[i]), and one
 * new int64 build column of its own per component holding the build rows'
 * keys; its build keys are drawn per component (key_domain values each,
 * the same values for every component the step draws a new table for, so
 * that (1, 2) and (2, 1) both occur), a component null at build_key_null.
 * AJ_UNIQUE then makes build row b's key the digits of b in base
 * key_domain.
 */
typedef struct AjStepSpec
{
	GaAggJoinType type;
	AjKeyFrom	key_from;
	int			key_side;		/* AJ_KEY_BUILD: the earlier step (1-based)
								 * whose build side holds the key;
								 * AJ_KEY_SHARED: the earlier step whose key
								 * column this one reuses (a step of several
								 * keys: its build key column of this
								 * component, modulo its keys) */
	int			nkeys;			/* 0: the key above; 2 .. 4: the components */
	AjKeyFrom	comp_from[GA_AGG_MAX_JOIN_KEYS];	/* as key_from, per component */
	int			comp_side[GA_AGG_MAX_JOIN_KEYS];	/* as key_side, per component */
	int64_t		nbuild;			/* payload rows */
	AjBuildDist build_dist;
	int64_t		key_domain;		/* distinct build keys drawn from (several
								 * keys: per component) */
	int64_t		skew_rows;		/* AJ_SKEW: build rows on the hot key */
	double		build_key_null;
	int			nfilter;		/* the step's own filter (gpuagg_device.h), */
	GaFilterStep filter[GA_FILTER_MAX_STEPS];	/* its columns indexes into
												 * the spec's cols */
} AjStepSpec;

/* One column besides the steps' key columns. */
typedef struct AjColSpec
{
	int			from_build;		/* 0 probe, s a build column of step s */
	GaValueType type;
	ValMode		mode;
	double		null_rate;
	int			group_key;		/* a grouping key, drawn from `domain` values */
	int64_t		domain;
	int			join_key;		/* build int64 column holding its step's build
								 * key */
} AjColSpec;

typedef struct AjSpec
{
	const char *label;
	int			nsteps;
	AjStepSpec	steps[AJ_MAX_STEPS];
	int64_t		nprobe;
	int			scattered;		/* keys over all of int64, extremes included */
	/* the rows of every key column (probe or build side): */
	double		probe_hot;		/* on the hot key (the key table's first) */
	double		probe_miss;		/* on a key no build side has */
	double		probe_key_null;
	int			group_by_probe_key; /* group by the first step's key column */
	int			ncols;
	AjColSpec	cols[AJ_MAX_COLS];
	int64_t		batch_rows;
	int64_t		estimated_groups;
	SplitMode	split;
	int			all_aggs;
	int64_t		max_pairs;		/* rows all steps may form (the budget) */
	int			nfilter;		/* the join's filter (gpuagg_device.h), its */
	GaFilterStep filter[GA_FILTER_MAX_STEPS];	/* columns indexes into cols */
} AjSpec;

/* aggjoin_specs.c */

/* How many fixed cases there are (indexes 0 .. NUM_FIXED_AJ_CASES - 1). */
#define NUM_FIXED_AJ_CASES 74

/* The fixed case `index`, and a random one; max_pairs is the budget. */
extern void aj_fixed_spec(int index, AjSpec *s, int64_t max_pairs);
extern void aj_random_spec(Rng *rng, AjSpec *s, int64_t max_pairs);

/* Keep a spec within max_rows rows on every side. */
extern void aj_cap_spec(AjSpec *s, int64_t max_rows);

#endif							/* GPUAGG_CONFORMANCE_AGGJOIN_H */
