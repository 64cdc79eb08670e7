/*-------------------------------------------------------------------------
 *
 * hashagg/plan.c
 *	  Turns a GpuHashAgg path into a CustomScan plan, whose custom_private
 *	  is the executor's description of it (hashagg/private.c).
 *
 * The plan's scan tuple (custom_scan_tlist) is the group keys followed by
 * the planner's own Aggref nodes and then its GroupingFunc nodes: setrefs.c
 * matches the node's target list and HAVING (plan.qual) against those
 * entries with equal(), so the Aggrefs must be the planner's, not rebuilt
 * ones.  The node fills a GROUPING(...) column itself for each grouping set
 * (PostgreSQL evaluates GroupingFunc only inside its own Agg node).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"

#include "aggjoin/aggjoin.h"
#include "hashagg/derived.h"
#include "hashagg/desc.h"
#include "hashagg/hashagg.h"
#include "hashagg/private.h"

static const CustomScanMethods gpuagg_scan_methods = {
	.CustomName = GPUAGG_NODE_NAME,
	.CreateCustomScanState = GpuAggCreateScanState,
};

/*
 * A join input child (a GpuHashJoin, hashjoin/path.c's GpuJoinAggInputPath)
 * hands over its scan tuples, not projected rows: point every key, argument
 * and FILTER column at the scan tuple's column that holds the child
 * expression.
 */
static void
join_input_columns(GpuAggDesc *desc, List *child_exprs, CustomScan *join)
{
	int			nexprs = list_length(child_exprs);
	AttrNumber *map = palloc0(sizeof(AttrNumber) * (nexprs + 1));
	int			i;

	for (i = 0; i < nexprs; i++)
	{
		ListCell   *lc;

		foreach(lc, join->custom_scan_tlist)
		{
			TargetEntry *tle = lfirst_node(TargetEntry, lc);

			if (equal(tle->expr, list_nth(child_exprs, i)))
			{
				map[i + 1] = tle->resno;
				break;
			}
		}
		if (map[i + 1] == 0)
			elog(ERROR, "gpuagg: GpuHashJoin input lacks column %d of its aggregation", i + 1);
	}
	for (i = 0; i < desc->nkeys; i++)
		desc->keys[i].child_attno = map[desc->keys[i].child_attno];
	for (i = 0; i < desc->naggs; i++)
	{
		desc->aggs[i].arg_attno = map[desc->aggs[i].arg_attno];
		desc->aggs[i].arg2_attno = map[desc->aggs[i].arg2_attno];
		desc->aggs[i].filter_attno = map[desc->aggs[i].filter_attno];
		if (desc->aggs[i].derived != NULL)
		{
			GpuAggDerivedDesc *derived = desc->aggs[i].derived;
			int			s;

			for (s = 0; s < derived->nsteps; s++)
				derived->steps[s].attno = map[derived->steps[s].attno];
		}
	}
}

/*
 * PlanCustomPath of GpuHashAgg: the scan tuple is keys then Aggrefs, HAVING
 * is the qual.  The child is the projection of the input (serial), a
 * Gather of GpuAggPack nodes sending batch messages (parallel), or a
 * GpuHashJoin whose joined rows go straight into batches (join input).  An
 * aggjoin (aggjoin/) has a child per side: the probe side (serial or
 * parallel as above), then each join's build side.
 */
Plan *
GpuAggPlanPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	GpuAggPathInfo *info = GpuAggPathFromList(best_path->custom_private);
	Plan	   *child = linitial(custom_plans);
	CustomScan *cscan = makeNode(CustomScan);
	List	   *scan_tlist;
	GpuAggDesc *desc = GpuAggDescFromPath(info, &scan_tlist);

	if (desc->child_kind == GPUAGG_CHILD_JOIN_INPUT)
		join_input_columns(desc, info->child_exprs, (CustomScan *) child);
	else if (desc->njoin_steps > 0)
	{
		int			s;

		desc->join_cond = GpuAggJoinConditionText(root, info->join, &desc->join_filter);
		/* aggjoin: each side's expressions, then its keys */
		for (s = 0; s <= desc->njoin_steps; s++)
		{
			bool		packed = s == 0 ? desc->child_kind == GPUAGG_CHILD_PACKED :
				(desc->packed_sides & (1 << s)) != 0;

			if (!packed &&
				list_length(((Plan *) list_nth(custom_plans, s))->targetlist) != desc->side_ncolumns[s])
				elog(ERROR, "gpuagg: the sides of an aggjoin have unexpected columns");
		}
	}
	else if (desc->child_kind != GPUAGG_CHILD_PACKED &&
			 list_length(child->targetlist) != list_length(info->child_exprs))
		elog(ERROR, "gpuagg: child plan has %d columns, expected %d",
			 list_length(child->targetlist), list_length(info->child_exprs));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = info->having;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = NIL;
	cscan->custom_private = GpuAggDescToList(desc);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = &gpuagg_scan_methods;
	return &cscan->scan.plan;
}

/* Register the scan methods so that copied or serialized plans find them. */
void
GpuAggPlanInit(void)
{
	RegisterCustomScanMethods(&gpuagg_scan_methods);
}
