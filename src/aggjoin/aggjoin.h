/*-------------------------------------------------------------------------
 *
 * aggjoin/aggjoin.h
 *	  Aggjoin: a GpuHashAgg whose input is an equi-join, or a chain of
 *	  them, that the device computes below the aggregation.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_AGGJOIN_H
#define GPUAGG_AGGJOIN_H

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

#include "aggjoin/probe_filter.h"
#include "batch/batch.h"
#include "hashagg/desc.h"
#include "hashagg/layout.h"
#include "gpuagg_device.h"

/* The sides of a join chain the device can compute under an aggregation. */
typedef struct GpuAggJoinSides
{
	int			nsides;			/* join steps + 1 */
	RelOptInfo *rels[GA_AGG_MAX_JOIN_STEPS + 1];	/* side 0: the probe side;
													 * s: step s's build side */
	Path	   *paths[GA_AGG_MAX_JOIN_STEPS + 1];	/* their cheapest
													 * unparameterized paths */
	PathTarget *targets[GA_AGG_MAX_JOIN_STEPS + 1]; /* each side's child
													 * expressions, then its
													 * keys */
	GpuAggJoinPath join;		/* the joins, for the path's custom_private */
	int			nkeys;			/* device join keys of all the steps */
	List	   *extra_exprs;	/* child expressions to add after the given
								 * ones: the filter's other operands */
} GpuAggJoinSides;

/* aggjoin/aggjoin.c */
extern bool GpuAggJoinSidesFor(PlannerInfo *root, RelOptInfo *input_rel,
							   List *child_exprs, List *keys, List *aggrefs,
							   bool grouping_sets, GpuAggJoinSides *sides);
extern char *GpuAggJoinConditionText(PlannerInfo *root, const GpuAggJoinPath *join,
									 char **filter);
extern void GpuAggJoinDescFromPath(GpuAggDesc *desc, const GpuAggJoinPath *join,
								   List *child_exprs);
extern void GpuAggJoinNumberColumns(GpuAggDesc *desc);
extern bool GpuAggJoinBuild(GaAgg *agg, const GpuAggDesc *desc,
							const GpuAggLayout *layout, int step,
							GpuAggBatchBuilder *builder,
							GpuAggMessageReceiver *receiver, PlanState *inner,
							MemoryContext cxt, GpuAggProbeFilter *filter,
							GaStatus *status);

/* aggjoin/filter.c: an INNER join's other conditions as the device's filter */
typedef int (*GpuAggJoinFilterOperandSide) (Node *expr, void *arg, const char **why);

extern bool GpuAggJoinFilterCompile(List *quals, GpuAggJoinFilterOperandSide side_of,
									void *arg, List **program, List **operands,
									const char **why);
extern void GpuAggJoinFilterDescribe(GpuAggFilterDesc *filter, List *child_exprs,
									 List *program);

#endif							/* GPUAGG_AGGJOIN_H */
