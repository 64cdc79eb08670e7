/*-------------------------------------------------------------------------
 *
 * hashagg/state.h
 *	  The executor state of a GpuHashAgg: built and run by exec.c, read by
 *	  explain.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHAGG_STATE_H
#define GPUAGG_HASHAGG_STATE_H

#include "nodes/execnodes.h"

#include "batch/batch.h"
#include "finalize/finalize.h"
#include "hashagg/desc.h"
#include "hashagg/layout.h"
#include "gpuagg_device.h"

/* A GpuHashAgg's input partitioned on disk (spill.c) */
typedef struct GpuAggSpill GpuAggSpill;

/* What a GpuHashAgg did, for EXPLAIN ANALYZE (all loops together). */
typedef struct GpuAggRunInfo
{
	bool		executed;
	GaAggStats	stats;			/* the device's own counts and times */
	double		setup_ms;		/* CUDA context creation paid by this query */
	bool		service;		/* the device ran in the GPU service */
	char	   *fallback;		/* why the CPU finished the query, or NULL */
	double		build_ms;		/* aggjoin: reading the inner side, building */
	double		input_ms;		/* pulling child rows into batches */
	double		wait_ms;		/* in device calls (submit, next batch, finish) */
	double		result_ms;		/* decoding and finalizing groups (timed runs) */
	bool		direct_scan;	/* the child Seq Scan's pages are read directly */
	bool		pages_possible; /* gpuagg.page_scan is on and its device takes
								 * pages (gpuagg_device.h) */
	int64		partitions;		/* aggregations run, one per partition read
								 * back from disk (1: no spill) */
	int64		disk_kb;		/* peak disk space of the partitions */
	int64		memory_kb;		/* peak host memory: batches, groups, tapes */
	int64		device_memory_kb;	/* peak memory of the device's
									 * aggregations (host memory for the
									 * CPU device) */
	const char *unbounded;		/* why the groups are not bounded by
								 * hash_mem, or NULL */
} GpuAggRunInfo;

/* The executor state of one GpuHashAgg (its CustomScanState). */
typedef struct GpuAggState
{
	CustomScanState css;
	GpuAggDesc *desc;
	PlanState  *child;			/* aggjoin: the probe side */
	PlanState  *inners[GA_AGG_MAX_JOIN_STEPS];	/* aggjoin: step s's build
												 * side is inners[s - 1] */
	GpuAggDirectScan *direct;	/* serial: reads the child Seq Scan's pages */

	GpuAggLayout *layout;		/* batch columns and device operations */
	GaAggRequest *requests;		/* per grouping set; [0] injects failures */
	GaAggRequest *distinct_requests;	/* per DISTINCT set: keys + argument */
	int32	  **grouping_values;	/* per set, per GROUPING(...): its value */

	/* running */
	GaDeviceKind device_kind;
	GaDevice   *device;
	GaAgg	  **aggs;			/* per grouping set */
	GaAgg	  **distinct_aggs;	/* per DISTINCT set, see finalize/distinct.c */
	MemoryContext run_cxt;		/* builder and dictionaries of one run */
	GpuAggBatchBuilder *builder;
	GpuAggMessageReceiver *receiver;	/* parallel: maps senders' text ids */
	bytea	   *pending;		/* parallel: a message for the next batch */
	TupleTableSlot *pending_row;	/* serial: the child's row whose text
									 * keys did not fit the last batch */
	int32		pending_slot;	/* its exchange slot, or -1 (batch/exchange.c) */
	const GaAggResult **results;	/* per grouping set; NULL until finished */
	const GaAggResult **distinct_results;
	GpuAggDistinctSums *distinct_sums;
	int64		current;		/* last returned row of all sets' groups in
								 * turn (spilled: of results[emit_set]);
								 * -1 before the first */

	/* bounded memory: partitions on disk past max_groups (spill.c) */
	int64		limit_groups;	/* groups that fit hash_mem */
	int64		max_groups;		/* limit_groups where partitions bound
								 * them; 0: no limit */
	bool		spill_now;		/* the next run partitions its input */
	bool		restart;		/* this run found too many groups: run
								 * again, partitioned */
	GpuAggSpill **spills;		/* per grouping set: this run's partitions,
								 * NULL for a set of no keys or no spill */
	bool		spilled;		/* this run partitioned its input */
	int64		partition_batches;	/* batches set 0's partitions took so
									 * far in this run */
	int64		fail_at_batch;	/* gpuagg.debug_fail_at_batch for this run,
								 * 0 once the CPU device took over */
	int			emit_set;		/* spilled: the set whose groups go out */
	MemoryContext partition_cxt;	/* what one partition's groups need (the
									 * DISTINCT sets' sums), reset per
									 * partition */
	MemoryContextCallback cleanup;

	/* what happened, for EXPLAIN ANALYZE */
	GpuAggRunInfo info;
} GpuAggState;

/* spill.c */
extern double GpuAggGroupBytes(const GpuAggState *state);
extern bool GpuAggExpectsSpill(const GpuAggState *state);
extern int	GpuAggPlannedPartitions(const GpuAggState *state);
extern void GpuAggPlanMemory(GpuAggState *state, int eflags);
extern GpuAggSpill *GpuAggSpillCreate(int ncolumns, const GaValueType *types, int nkeys,
									  const int *key_columns, int64 max_groups,
									  double est_groups, int nspills, MemoryContext cxt);
extern int	GpuAggSpillPartitions(int64 max_groups, double est_groups, int nspills);
extern void GpuAggSpillBatch(GpuAggSpill *spill, const GaBatch *batch);
extern bool GpuAggSpillNextPartition(GpuAggSpill *spill, int64 *rows);
extern bool GpuAggSpillFill(GpuAggSpill *spill, GaBatch *batch);
extern void GpuAggSpillRewind(GpuAggSpill *spill);
extern int64 GpuAggSpillDiskKB(const GpuAggSpill *spill);
extern int	GpuAggSpillPending(const GpuAggSpill *spill);
extern void GpuAggSpillEnd(GpuAggSpill *spill);

/* request.c */
extern void GpuAggBuildRequests(GpuAggState *state);

#endif							/* GPUAGG_HASHAGG_STATE_H */
