/*-------------------------------------------------------------------------
 *
 * cpu/cpu_device.h
 *	  Internal interface of the CPU device (cuda/cpu/), grouped by the file
 *	  that defines each part.  cpu/device.c opens the device and fills its
 *	  table of entry points (GaDeviceOps, device_impl.h) from the
 *	  aggregation (cpu/hashagg.c) and the hash join (cpu/hashjoin.c); the
 *	  aggregation uses its accumulators (cpu/accumulate.c), its derived
 *	  columns (cpu/derived.c), the heap pages its batches carry
 *	  (cpu/deform.c) and, for an aggjoin, cpu/aggjoin.c, which gathers the
 *	  joined rows' columns with cpu/gather.c.
 *
 * Plain C, no PostgreSQL and no CUDA runtime header; nothing here prints
 * or aborts.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CPU_DEVICE_H
#define GPUAGG_CPU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuagg_device.h"
#include "validate.h"

/* cpu/hashagg.c: the aggregation's entries of ga_cpu_ops */
extern void *ga_cpu_agg_create(void *device_impl, const GaAggRequest *request,
							   GaStatus *status);
extern GaBatch *ga_cpu_agg_next_batch(void *agg_impl, GaWaitCallback wait, void *arg,
									  GaStatus *status);
extern int	ga_cpu_agg_submit(void *agg_impl, GaBatch *batch, GaWaitCallback wait,
							  void *arg, GaStatus *status);
extern int	ga_cpu_agg_aggjoin_build(void *agg_impl, int step, const int64_t *keys,
									 const uint32_t *rows, int64_t n, uint64_t key_seed,
									 const GaBatch *payload, GaWaitCallback wait,
									 void *arg, GaStatus *status);
extern const GaAggResult *ga_cpu_agg_finish(void *agg_impl, GaWaitCallback wait,
											void *arg, GaStatus *status);
extern void ga_cpu_agg_get_stats(const void *agg_impl, GaAggStats *stats);
extern void ga_cpu_agg_destroy(void *agg_impl);

/* cpu/hashjoin.c: the hash join's entries of ga_cpu_ops */
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

/* cpu/accumulate.c: how one aggregate accumulates, from its op and input type */
typedef enum CpuAccKind
{
	CPU_ACC_COUNT_ROWS,			/* int64 */
	CPU_ACC_COUNT,				/* int64 */
	CPU_ACC_COUNT_NONFINITE,	/* int64 */
	CPU_ACC_SUM_INT,			/* __int128, GaInt128 in the result */
	CPU_ACC_SUM_FLOAT32,		/* float */
	CPU_ACC_SUM_FLOAT64,		/* double */
	CPU_ACC_MIN_INT,			/* int64 */
	CPU_ACC_MAX_INT,			/* int64 */
	CPU_ACC_MIN_FLOAT,			/* ordered int64, double in the result */
	CPU_ACC_MAX_FLOAT,			/* ordered int64, double in the result */
	CPU_ACC_MOMENTS,			/* GaMoments */
	CPU_ACC_COMOMENTS			/* GaComoments */
} CpuAccKind;

extern CpuAccKind ga_cpu_acc_kind(const GaAggSpec *spec, GaValueType input);
extern size_t ga_cpu_acc_width(CpuAccKind kind);
extern void ga_cpu_acc_init(void *acc, CpuAccKind kind, int64_t from, int64_t to);
extern void ga_cpu_accumulate(void *acc, CpuAccKind kind, const GaAggSpec *spec,
							  const GaBatch *batch, const int64_t *groups, int64_t base,
							  int64_t n);
extern void ga_cpu_acc_finish(void *acc, CpuAccKind kind, int64_t ngroups);

/* cpu/derived.c: the derived columns of rows [base, base + n) of a batch */
extern void ga_cpu_compute_derived(const GaDerivedPlan *plan, GaBatch *batch, int64_t base,
								   int64_t n);

/*
 * cpu/deform.c: a request's page program, and the pages of a batch
 * deformed into its columns (gpuagg_device.h, "Heap pages")
 */
typedef struct CpuPagePlan CpuPagePlan;

extern CpuPagePlan *ga_cpu_page_plan_create(const GaPageInput *pages);
extern void ga_cpu_page_plan_free(CpuPagePlan *plan);
extern int	ga_cpu_deform_pages(const CpuPagePlan *plan, GaBatch *batch, GaStatus *status);

/*
 * cpu/aggjoin.c: the CPU device's aggjoin.  It forms the joined rows of
 * each probe batch in host batches of the request's layout and hands
 * them, a piece at a time, to the CPU aggregation through `aggregate`,
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

/*
 * cpu/gather.c: a column of joined rows.  Row i of dst takes row
 * source[rows[i]] (source[i] when rows is NULL) of where the column lives,
 * null when that is GA_CPU_NO_ROW or null there.  Values: `width` bytes
 * each (validity NULL when the column has no nulls).  Strings: the source
 * column src (NULL: every row null), whose rows' bytes are appended to
 * dst's, which grow to fit; 0 with status when they cannot.
 */
#define GA_CPU_NO_ROW (-1)

extern void ga_cpu_gather_values(GaColumn *dst, const void *values,
								 const uint8_t *validity, const int64_t *source,
								 const int64_t *rows, int64_t n, int width);
extern int	ga_cpu_gather_strings(GaColumn *dst, const GaColumn *src,
								  const int64_t *source, const int64_t *rows,
								  int64_t n, GaStatus *status);

#endif							/* GPUAGG_CPU_DEVICE_H */
