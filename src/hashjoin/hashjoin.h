/*-------------------------------------------------------------------------
 *
 * hashjoin/hashjoin.h
 *	  GpuHashJoin, the node that replaces Hash Join:
 *	path.c		splits the join's conditions, adds a costed CustomPath
 *				(set_join_pathlist_hook)
 *	plan.c		builds the CustomScan; keys and join quals reference the
 *				two children (OUTER_VAR / INNER_VAR)
 *	exec.c		builds on the inner side's keys on a device, probes with
 *				batches of outer keys and forms the joined rows
 *	spill.c		past the build's memory, both sides in partitions on disk
 *	explain.c	shows what it planned and did
 * and below them, with their own headers:
 *	desc.h		the description of a node (GpuJoinDesc) and of its path
 *	private.c	both packed into private lists
 *	state.h		the executor state that exec.c runs and explain.c reads
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHJOIN_H
#define GPUAGG_HASHJOIN_H

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#include "batch/batch.h"
#include "compat.h"
#include "gpuagg_device.h"

#define GPUJOIN_NODE_NAME "GpuHashJoin"

/* hashjoin/path.c */
extern Path *GpuJoinAggInputPath(RelOptInfo *rel, List *exprs);
extern List *GpuJoinDevicePaths(RelOptInfo *rel);
extern void GpuJoinPathInit(void);

/* hashjoin/plan.c */
extern Plan *GpuJoinPlanPath(PlannerInfo *root, RelOptInfo *rel,
							 CustomPath *best_path, List *tlist,
							 List *clauses, List *custom_plans);
extern void GpuJoinPlanInit(void);

/* hashjoin/exec.c */
extern Node *GpuJoinCreateScanState(CustomScan *cscan);
extern bool GpuJoinFillBatch(CustomScanState *node, GpuAggBatchBuilder *builder,
							 GaBatch *batch);

/* hashjoin/explain.c */
extern void GpuJoinExplain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif							/* GPUAGG_HASHJOIN_H */
