/*-------------------------------------------------------------------------
 *
 * hashagg/hashagg.h
 *	  GpuHashAgg, the node that replaces HashAggregate / Agg, and
 *	  GpuAggPack, the node parallel workers run under it:
 *	path.c		decides whether a grouping can run on a device and adds a
 *				costed CustomPath (create_upper_paths_hook)
 *	plan.c		turns it into a CustomScan whose custom_scan_tlist is the
 *				group keys followed by the planner's own Aggrefs
 *	exec.c		pulls child rows into columnar batches (batch/builder.c),
 *				runs them through a device (cuda/gpuagg_device.h) and
 *				returns the groups, finalized by finalize/finalize.c
 *	explain.c	shows what it planned and did
 *	pack.c		GpuAggPack: packs a parallel worker's rows into batch
 *				messages for the GpuHashAgg above a Gather
 * and below them, with their own headers:
 *	catalog.c	the aggregates and key types a device computes
 *	derived.c	numeric arguments the device computes from their operands
 *	desc.h		the description of a node (GpuAggDesc) and of its path
 *	private.c	the description made from a path, and both packed into
 *				private lists
 *	layout.c	the batch columns and device operations of a description
 *	state.h		the executor state that exec.c runs and explain.c reads
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHAGG_H
#define GPUAGG_HASHAGG_H

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#include "aggjoin/probe_filter.h"
#include "batch/batch.h"
#include "compat.h"

#define GPUAGG_NODE_NAME "GpuHashAgg"
#define GPUAGG_PACK_NAME "GpuAggPack"

/* hashagg/path.c */
extern void GpuAggPathInit(void);

/* hashagg/plan.c */
extern Plan *GpuAggPlanPath(PlannerInfo *root, RelOptInfo *rel,
							CustomPath *best_path, List *tlist,
							List *clauses, List *custom_plans);
extern void GpuAggPlanInit(void);

/* hashagg/exec.c */
extern Node *GpuAggCreateScanState(CustomScan *cscan);

/* hashagg/explain.c */
extern void GpuAggExplain(CustomScanState *node, List *ancestors, ExplainState *es);

/* hashagg/pack.c */
extern Expr *GpuAggBatchMarker(void);
extern int	GpuAggPackWorkers(double input_rows, int workers);
extern Path *GpuAggPackPath(RelOptInfo *rel, Path *child, PathTarget *target,
							List *path_private, int ncolumns);
extern void GpuAggPackSetProbeFilter(PlanState *gather, const GpuAggProbeFilter *filter);
extern GpuAggExchange *GpuAggPackExchange(PlanState *gather);
extern const GaPageInput *GpuAggPackUsePages(PlanState *gather, int64 device_pages,
											 int64 batch_rows, const char *off_reason,
											 bool in_place, MemoryContext cxt);
extern GpuAggPageShare *GpuAggPackPageShare(PlanState *gather);
extern void GpuAggPackStopRun(PlanState *gather);
extern bool GpuAggPackPageCounts(PlanState *gather, int64 *to_device, int64 *in_place,
								 int64 *through_host, const char **reason);
extern void GpuAggPackInit(void);

#endif							/* GPUAGG_HASHAGG_H */
