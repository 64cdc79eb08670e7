/*-------------------------------------------------------------------------
 *
 * aggjoin/aggjoin.h
 *	  Aggjoin: a GpuHashAgg that also computes on the device the equi-join
 *	  below it, or a chain of them; the joined rows never reach the host,
 *	  only the groups come back.
 *
 * The inner side's rows are read once into the device's build (the join
 * key and the columns the aggregation needs from that side), and the outer
 * side's rows arrive in batches (read by the node itself, or packed by
 * parallel workers' GpuAggPack nodes) that the device probes, joins and
 * aggregates in one go (cuda/gpuagg_device.h, "Aggregation fed by a hash
 * join").  When the outer side is itself such a join, and so on down (a
 * chain: a star or snowflake schema's joins), every join of the chain is
 * joined on the device, up to GA_AGG_MAX_JOIN_STEPS: the node has a child
 * per side (the probe side, the bottom join's outer side; then each join's
 * build side, bottom up), and each join's outer key comes from the probe
 * side or from a build side below it.
 *	path.c			finds the chain under an aggregation and the side of each
 *					expression (planning)
 *	filter.c		compiles the joins' other conditions into the device's
 *					filter programs
 *	plan.c			turns the chain into the description's join fields
 *	build.c			reads each build side into the device (executor)
 *	probe_filter.c	Bloom filters of build keys for the probe side's workers
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

/* aggjoin/path.c */
extern bool GpuAggJoinSidesFor(PlannerInfo *root, RelOptInfo *input_rel,
							   List *child_exprs, List *keys, List *aggrefs,
							   bool grouping_sets, GpuAggJoinSides *sides);

/* aggjoin/plan.c */
extern bool GpuAggJoinKeyAsBytes(Node *outer, Node *inner);
extern bool GpuAggJoinGroupKeyAsBytes(Oid base_type);
extern char *GpuAggJoinConditionText(PlannerInfo *root, const GpuAggJoinPath *join,
									 char **filter);
extern void GpuAggJoinDescFromPath(GpuAggDesc *desc, const GpuAggJoinPath *join,
								   List *child_exprs);
extern void GpuAggJoinNumberColumns(GpuAggDesc *desc);

/* aggjoin/build.c */
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
