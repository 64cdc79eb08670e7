/*-------------------------------------------------------------------------
 *
 * device_impl.h
 *	  What the device implementations (CPU, GPU) provide to the dispatcher
 *	  in device.c.  Internal to cuda/: src/ includes gpuagg_device.h only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DEVICE_IMPL_H
#define GPUAGG_DEVICE_IMPL_H

#include "gpuagg_device.h"
#include "gpuagg_hash.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* One implementation's aggregation entry points, over its own handles. */
typedef struct GaDeviceOps
{
	void	   *(*agg_create) (void *device_impl, const GaAggRequest *request,
							   GaStatus *status);
	GaBatch    *(*agg_next_batch) (void *agg_impl, GaWaitCallback wait,
								   void *arg, GaStatus *status);
	int			(*agg_submit) (void *agg_impl, GaBatch *batch,
							   GaWaitCallback wait, void *arg,
							   GaStatus *status);
	const GaAggResult *(*agg_finish) (void *agg_impl, GaWaitCallback wait,
									  void *arg, GaStatus *status);
	void		(*agg_get_stats) (const void *agg_impl, GaAggStats *stats);
	void		(*agg_destroy) (void *agg_impl);

	/*
	 * Aggjoin: the build side of step `step` (0-based).
	 * device.c has already checked that the request has a join spec, that
	 * the step exists and is given for the first time before any batch,
	 * and the arguments (n in range, every row below payload->nrows, the
	 * payload's shape and types); submits of an aggjoin reach
	 * agg_submit only after every step's build was given.  For a step of
	 * several keys, keys[i] is device.c's hash of build row rows[i]'s key
	 * under key_seed (join_key.h; free of collisions among the build's
	 * distinct keys, every listed row valid in every build key column):
	 * the device builds on the hashes as on single keys, hashes each row
	 * it looks up under key_seed, and rechecks the first candidate's key.
	 * key_seed is 0 and unused for a step of one key.
	 */
	int			(*aggjoin_build) (void *agg_impl, int step, const int64_t *keys,
								   const uint32_t *rows, int64_t n, uint64_t key_seed,
								   const GaBatch *payload, GaWaitCallback wait,
								   void *arg, GaStatus *status);

	/*
	 * Hash join.  device.c has already validated the request, the build's
	 * arguments (once, n in range) and that a probe follows the build, and
	 * handles fail_at_batch itself.
	 */
	void	   *(*join_create) (void *device_impl, const GaJoinRequest *request,
								GaStatus *status);
	int			(*join_build) (void *join_impl, const int64_t *keys,
							   const uint32_t *rows, int64_t n,
							   GaWaitCallback wait, void *arg, GaStatus *status);
	const uint32_t *(*join_sorted_rows) (const void *join_impl);
	GaBatch    *(*join_next_batch) (void *join_impl, GaWaitCallback wait,
									void *arg, GaStatus *status);
	const GaJoinMatches *(*join_probe) (void *join_impl, GaBatch *batch,
										GaWaitCallback wait, void *arg,
										GaStatus *status);
	void		(*join_get_stats) (const void *join_impl, GaJoinStats *stats);
	void		(*join_destroy) (void *join_impl);
} GaDeviceOps;

/*
 * A request's derived columns as the devices keep them: copied (the
 * caller may free its array after ga_agg_create) and grouped by program,
 * so that a device evaluates each distinct program once per row however
 * many parts (limbs, int64, NaN flag) are taken from it.  Program p's
 * steps are those of derived[program_spec[p]]; derived column d takes its
 * part from program program_of[d].
 */
typedef struct GaDerivedPlan
{
	int			nderived;
	GaDerivedColumn derived[GA_MAX_DERIVED];
	int			nprograms;
	int			program_of[GA_MAX_DERIVED];
	int			program_spec[GA_MAX_DERIVED];
} GaDerivedPlan;

/* cpu/hashagg.c */
extern const GaDeviceOps ga_cpu_ops;
extern void *ga_cpu_open(GaStatus *status);

/* cpu/hashjoin.c: the CPU device's join entries (in ga_cpu_ops) */
extern void *ga_cpu_join_create(void *device_impl, const GaJoinRequest *request,
								GaStatus *status);
extern int	ga_cpu_join_build(void *join_impl, const int64_t *keys,
							  const uint32_t *rows, int64_t n,
							  GaWaitCallback wait, void *arg, GaStatus *status);
extern const uint32_t *ga_cpu_join_sorted_rows(const void *join_impl);
extern GaBatch *ga_cpu_join_next_batch(void *join_impl, GaWaitCallback wait,
									   void *arg, GaStatus *status);
extern const GaJoinMatches *ga_cpu_join_probe(void *join_impl, GaBatch *batch,
											  GaWaitCallback wait, void *arg,
											  GaStatus *status);
extern void ga_cpu_join_get_stats(const void *join_impl, GaJoinStats *stats);
extern void ga_cpu_join_destroy(void *join_impl);

/*
 * cpu/aggjoin.c: the CPU device's aggjoin.  It forms the joined
 * rows of each probe batch in host batches of the request's layout and
 * hands them, a piece at a time, to the CPU aggregation through `aggregate`,
 * which computes the piece's derived columns in it (so it is writable)
 * before aggregating it.  finish aggregates the RIGHT and FULL steps'
 * unmatched build rows (through the steps after each) the same way, before
 * the groups are formed.
 */
typedef struct CpuAggJoin CpuAggJoin;
typedef int (*CpuAggregateFn) (void *agg, GaBatch *batch,
							   GaWaitCallback wait, void *arg, GaStatus *status);

extern CpuAggJoin *ga_cpu_aggjoin_create(const GaAggRequest *request,
										 GaStatus *status);
extern int	ga_cpu_aggjoin_build(CpuAggJoin *aj, int step, const int64_t *keys,
								 const uint32_t *rows, int64_t n, uint64_t key_seed,
								 const GaBatch *payload, GaAggStats *stats,
								 GaWaitCallback wait, void *arg, GaStatus *status);
extern int	ga_cpu_aggjoin_submit(CpuAggJoin *aj, const GaBatch *probe,
								  CpuAggregateFn aggregate, void *agg,
								  GaAggStats *stats, GaWaitCallback wait,
								  void *arg, GaStatus *status);
extern int	ga_cpu_aggjoin_finish(CpuAggJoin *aj, CpuAggregateFn aggregate,
								  void *agg, GaAggStats *stats,
								  GaWaitCallback wait, void *arg,
								  GaStatus *status);
extern void ga_cpu_aggjoin_destroy(CpuAggJoin *aj);

/* gpu/hashagg.cu (or gpu/none.c in builds without CUDA) */
extern const GaDeviceOps ga_gpu_ops;
extern void *ga_gpu_open(int ordinal, double *setup_ms, GaStatus *status);

/* device.c: helpers shared by the implementations */
extern void ga_status_ok(GaStatus *status);
extern int	ga_status_set(GaStatus *status, GaStatusCode code,
						  const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 3, 4)))
#endif
			;
extern int	ga_request_validate(const GaAggRequest *request, GaStatus *status);
extern GaDerivedPlan *ga_derived_plan_create(const GaAggRequest *request);
extern int	ga_join_request_validate(const GaJoinRequest *request, GaStatus *status);
extern int	ga_agg_result_type_is_float(const GaAggRequest *request, int agg);
extern int	ga_agg_result_width(const GaAggRequest *request, int agg);
extern int64_t ga_agg_state_bytes_per_group(const GaAggRequest *request);

/* device.c: strategy planning (see the notes there) */
#define GA_PERFECT_MAX_KEYS 4		/* keys a direct index combines */
#define GA_FUSED_LOAD_PERCENT 70	/* fill limit of the fused kernel's tables */
#define GA_PARTITIONED_L2_PERCENT 100	/* global table size, in % of L2, from
										 * which a forced partitioned runs */
extern int	ga_shared_width(const GaAggRequest *request, int agg, int narrow);
extern int	ga_request_two_phase_only(const GaAggRequest *request);
extern int64_t ga_shared_state_bytes(const GaAggRequest *request, int narrow);
extern int64_t ga_shared_budget_bytes(const GaGpuInfo *info);
extern int64_t ga_direct_budget_bytes(const GaGpuInfo *info);
extern int	ga_keys_pack_bits(const GaAggRequest *request, int assume_nullable);
extern int64_t ga_table_bytes_per_group(const GaAggRequest *request);
extern int64_t ga_shared_strategy_max_groups(const GaGpuInfo *info,
											 const GaAggRequest *request);
extern int64_t ga_fused_max_groups(const GaGpuInfo *info, const GaAggRequest *request);
extern int64_t ga_perfect_shared_max_entries(const GaGpuInfo *info,
											 const GaAggRequest *request);
extern GaStrategy ga_auto_strategy_for_groups(const GaGpuInfo *info,
											  const GaAggRequest *request,
											  int64_t groups);
extern int	ga_partitioned_applies(const GaGpuInfo *info, const GaAggRequest *request,
								   int64_t groups);


/* device.c: malloc of n elements (at least one), NULL on overflow or exhaustion */
extern void *ga_alloc_array(int64_t n, size_t size);
/* device.c: milliseconds on a monotonic clock, for the CPU device's device_ms */
extern double ga_cpu_now_ms(void);

/*
 * A failure that poisons a device object (an aggregation, a join): every
 * later call reports it again, so a half-updated object is never used.
 */
typedef struct GaFailure
{
	int			failed;
	GaStatus	status;
} GaFailure;

/* Record a failure in failure and status; returns 0 like ga_status_set. */
static inline int
ga_failure_set(GaFailure *failure, GaStatus *status, GaStatusCode code,
			   const char *message)
{
	ga_status_set(status, code, "%s", message);
	failure->failed = 1;
	failure->status = *status;
	return 0;
}

/* 1 when nothing failed yet; else 0 with the earlier failure in status. */
static inline int
ga_failure_check(const GaFailure *failure, GaStatus *status)
{
	if (!failure->failed)
		return 1;
	*status = failure->status;
	return 0;
}

/*
 * Order-preserving map of a double to int64 (NaN above +Infinity, every NaN
 * the same), so that MIN/MAX of floats are integer MIN/MAX; and back.
 */
static inline int64_t
ga_float64_to_ordered(double value)
{
	union
	{
		double		d;
		int64_t		i;
	}			u;

	if (value != value)
		return INT64_MAX;
	u.d = value;
	return u.i >= 0 ? u.i : (int64_t) (u.i ^ INT64_MAX);
}

static inline double
ga_ordered_to_float64(int64_t ordered)
{
	union
	{
		double		d;
		int64_t		i;
	}			u;

	if (ordered == INT64_MAX)
	{
		u.i = INT64_C(0x7ff8000000000000);	/* the canonical quiet NaN */
		return u.d;
	}
	u.i = ordered >= 0 ? ordered : (int64_t) (ordered ^ INT64_MAX);
	return u.d;
}

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_DEVICE_IMPL_H */
