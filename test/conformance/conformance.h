/*-------------------------------------------------------------------------
 *
 * conformance.h
 *	  What the aggregation suite shares with the suites that reuse its
 *	  cases: the seeded random numbers (common.c), the case (columns, rows,
 *	  aggregates; agg_case.c) and the reference check of a finished
 *	  aggregation's groups (agg_ref.c).  The aggjoin suite (aggjoin.c)
 *	  forms a join's rows on the host into a Case and checks the device's
 *	  groups against it with check_result, so there is one reference for
 *	  every aggregation.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CONFORMANCE_H
#define GPUAGG_CONFORMANCE_H

#include "gpuagg_device.h"
#include "gpuagg_service.h"
#include "join.h"

#define MAX_KEYS 3
#define MAX_VALS 6
#define MAX_COLUMNS 16			/* the aggregation suite uses MAX_KEYS + MAX_VALS */
#define MAX_AGGS 40

/* xoshiro256** state, seeded through splitmix64. */
typedef struct Rng
{
	uint64_t	s[4];
} Rng;

typedef enum KeyDist
{
	DIST_UNIFORM,
	DIST_ZIPF,					/* P(j) roughly 1/(j+1) */
	DIST_HOT,					/* half the rows on one key */
	DIST_SEQUENTIAL				/* row % domain: every key appears */
} KeyDist;

typedef enum ValMode
{
	VAL_SMALL,					/* integers in [-100, 100], floats in +-1000 */
	VAL_FULL,					/* integers over the whole type range */
	VAL_EXTREME,				/* integers at the type's ends */
	VAL_MAGNITUDES,				/* floats from 2^-60 to 2^60, both signs */
	VAL_SPECIAL,				/* floats with many NaN, +-Inf, -0 */
	VAL_CANCEL,					/* floats +-1e15 and small ones: cancellation */
	VAL_EXTREME_FINITE			/* floats at FLT_MAX/DBL_MAX, denormals: not summed */
} ValMode;

typedef struct KeySpec
{
	GaValueType type;
	int64_t		domain;			/* distinct key values drawn from */
	KeyDist		dist;
	int			scattered;		/* values spread over the range (incl. ends) */
	int			edge;			/* a range (not scattered) ending at the type's
								 * largest value (1) or starting at its
								 * smallest (-1); 0: anywhere */
	double		null_rate;
} KeySpec;

typedef struct ValSpec
{
	GaValueType type;
	ValMode		mode;
	double		null_rate;
} ValSpec;

typedef enum SplitMode
{
	SPLIT_FULL,					/* full batches, the last one partial */
	SPLIT_RANDOM,				/* random fill levels */
	SPLIT_WITH_EMPTY,			/* random, with empty batches mixed in */
	SPLIT_NONE					/* no batch at all (only for 0 rows) */
} SplitMode;

typedef struct CaseSpec
{
	const char *label;
	int			nkeys;
	KeySpec		keys[MAX_KEYS];
	int			nvals;
	ValSpec		vals[MAX_VALS];
	int64_t		nrows;
	int64_t		batch_rows;
	int64_t		estimated_groups;
	SplitMode	split;
	int			all_aggs;		/* every valid op on every column */
	int			values_only;	/* with all_aggs: none over the key columns */
	int			no_aggs;
	int			interleave;		/* feed two aggregations alternately */
	int			force_has_nulls;	/* has_nulls set on columns without nulls */
} CaseSpec;

typedef struct Case
{
	char		desc[512];
	int			ncolumns;
	GaValueType types[MAX_COLUMNS];
	int			has_nulls[MAX_COLUMNS];
	void	   *values[MAX_COLUMNS];
	uint8_t    *isnull[MAX_COLUMNS];
	int			nkeys;
	int			key_columns[MAX_KEYS];
	int			naggs;
	GaAggSpec	aggs[MAX_AGGS];
	int64_t		nrows;
	int64_t		batch_rows;
	int64_t		estimated_groups;
	int			nbatches;
	int64_t    *batch_sizes;
	int			interleave;
	int			force_has_nulls;
	int64_t		range_entries;	/* product of the key ranges (+ null slot),
								 * 0 when a key is scattered over its type */
	/* the reference's rows, sorted by key */
	struct RowKey *sorted;
	int64_t		ngroups;		/* distinct key tuples */
} Case;

/* A row's (or a device group's) key tuple, for sorting. */
typedef struct RowKey
{
	int64_t		v[MAX_KEYS];
	uint8_t		n[MAX_KEYS];
	int64_t		index;
} RowKey;


typedef struct WaitState
{
	int64_t		calls;
	int			cancel;			/* answer "stop" */
	int64_t		cancels;		/* times it answered "stop" */
} WaitState;

/* common.c: random numbers */
extern void rng_seed(Rng *rng, uint64_t seed);
extern uint64_t rng_next(Rng *rng);
extern double rng_unit(Rng *rng);
extern int64_t rng_range(Rng *rng, int64_t lo, int64_t hi);
extern int	rng_chance(Rng *rng, double p);
extern double rng_pick(Rng *rng, const double *choices, int n);
extern void rng_permutation(Rng *rng, int *perm, int n);

/* common.c: value types */
extern const char *type_name(GaValueType type);
extern int	type_is_int(GaValueType type);
extern int	type_is_float(GaValueType type);
extern void store_int(void *values, GaValueType type, int64_t i, int64_t v);
extern int64_t load_int(const void *values, GaValueType type, int64_t i);
extern double load_float(const void *values, GaValueType type, int64_t i);

/* common.c: the clock and the wait callback */
extern double now_ms(void);
extern int	test_wait(void *arg);

/* agg_case.c: generating a case's values, aggregates and batches */
extern void gen_int_value(Rng *rng, void *values, GaValueType type, ValMode mode,
						  int64_t i);
extern double gen_float_value(Rng *rng, GaValueType type, ValMode mode);
extern int	mode_summable(ValMode mode);
extern int	split_batches(Rng *rng, SplitMode split, int64_t nrows, int64_t batch_rows,
						  int64_t **sizes);
extern void add_agg2(Case *c, GaAggOp op, int column, int column2);
extern void add_agg(Case *c, GaAggOp op, int column);
extern void add_column_aggs(Case *c, Rng *rng, int column, int summable, int all,
							double p);
extern void free_case(Case *c);

/* agg_ref.c: the reference */
extern void sort_reference(Case *c);
extern int	rowkey_compare(const RowKey *a, const RowKey *b, int nkeys);
extern RowKey *sorted_result_keys(const GaAggResult *res, int nkeys);
extern void check_result(const Case *c, const GaAggResult *res, RunReport *rr);

/* agg.c: the steps of running a case on a device (reported where they fail) */
extern void case_request(const Case *c, GaStrategy strategy, GaAggRequest *req);
extern void check_empty_batch(const Case *c, const GaBatch *b, RunReport *rr);
extern GaBatch *run_next_batch(GaAgg *agg, const Case *c, int b, WaitState *ws,
							   RunReport *rr);
extern int	run_submit(GaAgg *agg, GaBatch *batch, int b, WaitState *ws, RunReport *rr);
extern const GaAggResult *run_finish(GaAgg *agg, WaitState *ws, RunReport *rr);
extern void run_check_cancels(const WaitState *ws, RunReport *rr);
extern int64_t run_end(GaAgg *agg, const WaitState *ws, RunReport *rr, const char *label,
					   double t0, char *summary, size_t summary_len);
extern void print_stats(const char *suite, int case_no, const char *label,
						const GaAggStats *stats, int aggjoin);

/* aggjoin_ref.c: the join references' sorted lookup and counts */

/* One build row with a key, for a join reference's sorted lookup. */
typedef struct KeyEntry
{
	int64_t		key;
	int64_t		row;
} KeyEntry;

/* qsort's order of entries: by key, then row. */
extern int	key_entry_cmp(const void *pa, const void *pb);

/*
 * In entries sorted by key_entry_cmp: the first entry whose key is key
 * (*first) and how many there are (0: none).
 */
extern int64_t key_entry_matches(const KeyEntry *entries, int64_t n, int64_t key,
								 int64_t *first);

/*
 * What the submits of an aggjoin case's probe batches must count (batches,
 * and the probe columns' bytes sent); adds to *batches and *bytes.
 */
extern void expect_probe_submits(const Case *c, int ncolumns, int nbatches,
								 const int64_t *batch_sizes,
								 const int64_t *per_row, const uint8_t *from_build,
								 uint8_t *const *isnull, int64_t unmatched,
								 int64_t *batches, int64_t *bytes);

/* aggjoin.c */

/*
 * Fill an aggjoin probe batch with probe rows [start, start + n): columns
 * where garbage[col] with garbage and a false null every null_every rows,
 * the others from values and isnull (over the probe rows).
 */
extern void fill_probe_batch(GaBatch *b, const Case *c, const uint8_t *garbage,
							 void *const *values, uint8_t *const *isnull, int null_every,
							 int64_t start, int64_t n);

/*
 * Run the aggjoin's API checks and cases (from case first on)
 * on each device run (device, strategy, label) and compare every result
 * with the reference.  Adds to *checks; returns the problems found.
 */
extern int64_t conformance_aggjoin(GaDevice *const *devices, const GaStrategy *strategies,
								   const char *const *labels, int nruns, uint64_t seed,
								   int first, int ncases, int64_t max_rows, int timeout,
								   int verbose, int64_t *checks);

/*
 * strings.c: ncases cases of string keys on each device run (device,
 * strategy, label), each checked with a sorting reference.  Adds to
 * *checks; returns the problems found.
 */
extern int64_t strings_suite(GaDevice *const *devices, const GaStrategy *strategies,
							 const char *const *labels, int ndevices, int ncases,
							 uint64_t seed, int64_t *checks);

/*
 * aggjoin_strings.c: ncases aggjoin cases joined on string keys on each
 * device run, each checked with a reference that joins every pair of rows.
 * Adds to *checks; returns the problems found.
 */
extern int64_t aggjoin_strings_suite(GaDevice *const *devices, const GaStrategy *strategies,
									 const char *const *labels, int ndevices, int ncases,
									 uint64_t seed, int64_t *checks);

/*
 * aggjoin_group_strings.c: ncases aggjoin cases grouped by string keys of
 * the probe side or of a build side on each device run, each checked with
 * a reference that joins the rows and groups them by exact bytes.  Adds to
 * *checks; returns the problems found.
 */
extern int64_t aggjoin_group_strings_suite(GaDevice *const *devices,
										   const GaStrategy *strategies,
										   const char *const *labels, int ndevices,
										   int ncases, uint64_t seed, int64_t *checks);

/* aggjoin_api.c: the aggjoin's API checks on one device run */
extern int64_t aggjoin_api_checks(GaDevice *dev, GaStrategy strategy, const char *label);

/*
 * service_api.c: the GPU service's own checks on the loopback service
 * (slots 1 to 3; with_gpu: it runs GPU 0 too): a cancel while every
 * request thread is busy, admission, concurrent queries, and calls after
 * the service process was lost.  Returns the problems found.
 */
extern int64_t service_api_checks(GaService *service, int with_gpu);

/*
 * service_admit.c: admission in the loopback service, on its CPU device
 * (slots 1 to 6), with no object open: the fair queue, its timeout and
 * cancel, the budget and the arena as the walls.  Problems go to rr.
 */
extern void service_admit_checks(GaService *service, RunReport *rr);

/*
 * service_concurrent.c: aggregations and joins of several client threads
 * at once on one device of the loopback service (slots 1 to 4), its CPU
 * device and, with_gpu, its GPU; every answer checked.  Problems go to rr.
 */
extern void service_concurrent_checks(GaService *service, int with_gpu, RunReport *rr);

#endif							/* GPUAGG_CONFORMANCE_H */
