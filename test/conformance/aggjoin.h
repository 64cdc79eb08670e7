/*-------------------------------------------------------------------------
 *
 * aggjoin.h
 *	  What the aggjoin suite's files share: the spec of a case (its join
 *	  steps, sides and columns), which aggjoin_specs.c (the fixed edge
 *	  cases) and aggjoin_random.c fill, the generated case that
 *	  aggjoin_case.c makes of it, the reference's walk (aggjoin_ref.c), and
 *	  the expectations of the API checks (aggjoin_api.c,
 *	  aggjoin_api_keys.c).  aggjoin.c runs the cases.
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

/* A row's source at a step where it found no build row (LEFT, ANTI). */
#define AJ_NO_ROW (-1)

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

/* aggjoin_case.c */

/* Generate a case from its spec: every side, batches, joined rows; and free it. */
extern void aj_build_case(AjCase *jc, const AjSpec *s, Rng *rng);
extern void aj_free_case(AjCase *jc);

/* aggjoin_ref.c */

/* qsort's order of tuples: by key, component by component, then row. */
extern int	aj_tuple_cmp(const void *pa, const void *pb);

/*
 * Walk every probe row through the steps within the budget (per_row[r]:
 * the last step's rows of probe row r), then the RIGHT and FULL steps'
 * unmatched build rows (returns the rows they give); form the joined rows
 * into the case's Case and count what the devices must report.
 */
extern void aj_walk_all(AjCase *jc, AjWalk *w, int64_t budget, int64_t *per_row);
extern int64_t aj_walk_unmatched(AjCase *jc, AjWalk *w);
extern void aj_form_joined(AjCase *jc, const AjWalk *w, const int64_t *per_row,
						   int64_t unmatched);

/* aggjoin_specs.c */

/* How many fixed cases there are (indexes 0 .. NUM_FIXED_AJ_CASES - 1). */
#define NUM_FIXED_AJ_CASES 74

/* The fixed case `index`; max_pairs is the budget. */
extern void aj_fixed_spec(int index, AjSpec *s, int64_t max_pairs);

/* Keep a spec within max_rows rows on every side. */
extern void aj_cap_spec(AjSpec *s, int64_t max_rows);

/*
 * Append a step of the join's filter, or of step i's (0-based) own
 * filter, over spec columns a and b (-1: none).
 */
extern void aj_filter_step(AjSpec *s, GaFilterOp op, GaCompareOp cmp, int a, int b);
extern void aj_step_filter(AjSpec *s, int i, GaFilterOp op, GaCompareOp cmp, int a, int b);

/* aggjoin_random.c */

/* A random case; max_pairs is the budget. */
extern void aj_random_spec(Rng *rng, AjSpec *s, int64_t max_pairs);

/* aggjoin_api.c: the expectations every API check uses */

/* Expect a failed call with code `want`. */
extern void aj_expect(RunReport *rr, int ok, const GaStatus *st, GaStatusCode want,
					  const char *what);

/* Expect ga_agg_create to refuse a request with GA_ERR_INVALID, or to accept it. */
extern void aj_expect_request_refused(RunReport *rr, GaDevice *dev, const GaAggRequest *req,
									  const char *what);
extern void aj_expect_request_accepted(RunReport *rr, GaDevice *dev,
									   const GaAggRequest *req, const char *what);

/*
 * Check the statistics of a run of n probe rows in one submit that gave
 * `rows` joined rows, `unmatched` of them a RIGHT or FULL join's unmatched
 * build rows, over build_rows keyed build rows.
 */
extern void aj_check_known_stats(RunReport *rr, GaAgg *agg, int64_t batch_rows, int n,
								 int64_t rows, int64_t unmatched, int64_t build_rows,
								 const char *what);

/* aggjoin_api_keys.c: the API checks of steps of several keys (problems found) */
extern int64_t aj_mk_invalid(GaDevice *dev, const char *label);
extern int64_t aj_mk_cancel(GaDevice *dev, GaStrategy strategy, const char *label);
extern int64_t aj_mk_seed_choice(const char *label);
extern int64_t aj_mk_known_results(GaDevice *dev, GaStrategy strategy, const char *label);

#endif							/* GPUAGG_CONFORMANCE_AGGJOIN_H */
