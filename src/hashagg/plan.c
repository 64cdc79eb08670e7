/*-------------------------------------------------------------------------
 *
 * hashagg/plan.c
 *	  Turns a GpuHashAgg path into a CustomScan plan, and keeps the
 *	  executor's description of it in custom_private.
 *
 * The plan's scan tuple (custom_scan_tlist) is the group keys followed by
 * the planner's own Aggref nodes and then its GroupingFunc nodes: setrefs.c
 * matches the node's target list and HAVING (plan.qual) against those
 * entries with equal(), so the Aggrefs must be the planner's, not rebuilt
 * ones.  The node fills a GROUPING(...) column itself for each grouping set
 * (PostgreSQL evaluates GroupingFunc only inside its own Agg node).
 * custom_private holds only plain nodes (Integer, Float, lists) because
 * plans are copied and serialized (plan cache, parallel query).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"

#include "aggjoin/aggjoin.h"
#include "batch/key_dict.h"
#include "compat.h"
#include "custom_private.h"
#include "hashagg/catalog.h"
#include "hashagg/derived.h"
#include "hashagg/desc.h"
#include "hashagg/hashagg.h"

static const CustomScanMethods gpuagg_scan_methods = {
	.CustomName = GPUAGG_NODE_NAME,
	.CreateCustomScanState = GpuAggCreateScanState,
};

/*
 * Serialize the executor's description into plain nodes (estimates as
 * GpuAggFloatNode: plans are serialized for parallel workers).
 */
List *
GpuAggDescToList(const GpuAggDesc *desc)
{
	List	   *keys = NIL;
	List	   *aggs = NIL;
	List	   *masks = NIL;
	List	   *estimates = NIL;
	List	   *groupings = NIL;
	List	   *derived = NIL;
	List	   *list;
	int			i;

	for (i = 0; i < desc->nkeys; i++)
		keys = lappend(keys, list_make3_int(desc->keys[i].child_attno,
											(int) desc->keys[i].type,
											desc->keys[i].one_spelling ? 1 : 0));
	for (i = 0; i < desc->naggs; i++)
	{
		const GpuAggAggDesc *agg = &desc->aggs[i];

		List	   *a = list_make5_int((int) agg->kind, (int) agg->input_type,
										   (int) agg->result_type, agg->arg_attno,
										   agg->filter_attno);

		a = lappend_int(a, agg->numeric_scale);
		a = lappend_int(a, agg->distinct);
		a = lappend_int(a, agg->numeric_precision);
		a = lappend_int(a, agg->arg2_attno);
		a = lappend_int(a, (int) agg->final_fn);
		a = lappend_int(a, (int) agg->arg_source_type);
		aggs = lappend(aggs, lappend_int(a, (int) agg->arg2_source_type));
		derived = lappend(derived, GpuAggDerivedToList(agg->derived));
	}
	for (i = 0; i < desc->nsets; i++)
	{
		masks = lappend_int(masks, (int) desc->sets[i].key_mask);
		estimates = lappend(estimates, GpuAggFloatNode(desc->sets[i].est_groups));
	}
	for (i = 0; i < desc->ngroupings; i++)
	{
		List	   *args = NIL;
		int			j;

		for (j = 0; j < desc->groupings[i].nargs; j++)
			args = lappend_int(args, desc->groupings[i].keys[j]);
		groupings = lappend(groupings, args);
	}
	list = list_make5(keys, aggs, GpuAggFloatNode(desc->est_groups),
					  makeInteger(desc->rescan_safe),
					  list_make2(GpuAggFloatNode(desc->input_rows),
								 makeInteger(desc->parallel ? 1 : desc->join_input ? 2 : 0)));
	list = lappend(list, list_make4(masks, estimates, makeInteger(desc->grouping_sets),
									groupings));
	list = lappend(list, GpuAggJoinDescToList(desc));
	list = lappend(list, makeString(pstrdup(desc->join_cond != NULL ? desc->join_cond : "")));
	list = lappend(list, derived);
	return lappend(list, makeString(pstrdup(desc->join_filter != NULL ? desc->join_filter : "")));
}

/* The grouping sets of a description from their masks and estimates. */
static void
desc_set_sets(GpuAggDesc *desc, List *masks, List *estimates)
{
	int			i;

	desc->nsets = list_length(masks);
	desc->sets = palloc0(sizeof(GpuAggSetDesc) * Max(desc->nsets, 1));
	for (i = 0; i < desc->nsets; i++)
	{
		desc->sets[i].key_mask = (uint32) list_nth_int(masks, i);
		desc->sets[i].est_groups = floatVal(list_nth(estimates, i));
	}
}

/* The GROUPING(...) columns of a description: a list of key lists. */
static void
desc_set_groupings(GpuAggDesc *desc, List *groupings)
{
	int			i;

	desc->ngroupings = list_length(groupings);
	desc->groupings = palloc0(sizeof(GpuAggGroupingDesc) * Max(desc->ngroupings, 1));
	for (i = 0; i < desc->ngroupings; i++)
	{
		List	   *args = list_nth(groupings, i);
		int			j;

		desc->groupings[i].nargs = list_length(args);
		desc->groupings[i].keys = palloc(sizeof(int) * Max(list_length(args), 1));
		for (j = 0; j < list_length(args); j++)
			desc->groupings[i].keys[j] = list_nth_int(args, j);
	}
}

/* Rebuild the description from custom_private. */
GpuAggDesc *
GpuAggDescFromList(List *list)
{
	GpuAggDesc *desc = palloc0(sizeof(GpuAggDesc));
	List	   *keys = linitial(list);
	List	   *aggs = lsecond(list);
	ListCell   *lc;
	int			i;

	desc->nkeys = list_length(keys);
	desc->keys = palloc0(sizeof(GpuAggKeyDesc) * Max(desc->nkeys, 1));
	i = 0;
	foreach(lc, keys)
	{
		List	   *k = lfirst(lc);

		desc->keys[i].child_attno = linitial_int(k);
		desc->keys[i].type = (Oid) lsecond_int(k);
		desc->keys[i].one_spelling = lthird_int(k) != 0;
		i++;
	}
	desc->naggs = list_length(aggs);
	desc->aggs = palloc0(sizeof(GpuAggAggDesc) * Max(desc->naggs, 1));
	i = 0;
	foreach(lc, aggs)
	{
		List	   *a = lfirst(lc);

		desc->aggs[i].kind = (GpuAggKind) list_nth_int(a, 0);
		desc->aggs[i].input_type = (Oid) list_nth_int(a, 1);
		desc->aggs[i].result_type = (Oid) list_nth_int(a, 2);
		desc->aggs[i].arg_attno = (AttrNumber) list_nth_int(a, 3);
		desc->aggs[i].filter_attno = (AttrNumber) list_nth_int(a, 4);
		desc->aggs[i].numeric_scale = list_nth_int(a, 5);
		desc->aggs[i].distinct = list_nth_int(a, 6) != 0;
		desc->aggs[i].numeric_precision = list_nth_int(a, 7);
		desc->aggs[i].arg2_attno = (AttrNumber) list_nth_int(a, 8);
		desc->aggs[i].final_fn = (Oid) list_nth_int(a, 9);
		desc->aggs[i].arg_source_type = (Oid) list_nth_int(a, 10);
		desc->aggs[i].arg2_source_type = (Oid) list_nth_int(a, 11);
		desc->aggs[i].derived = GpuAggDerivedFromList(list_nth(list_nth(list, 8), i));
		i++;
	}
	desc->est_groups = floatVal(lthird(list));
	desc->rescan_safe = intVal(lfourth(list)) != 0;
	desc->input_rows = floatVal(linitial(list_nth(list, 4)));
	desc->parallel = intVal(lsecond(list_nth(list, 4))) == 1;
	desc->join_input = intVal(lsecond(list_nth(list, 4))) == 2;
	desc_set_sets(desc, linitial(list_nth(list, 5)), lsecond(list_nth(list, 5)));
	desc->grouping_sets = intVal(lthird(list_nth(list, 5))) != 0;
	desc_set_groupings(desc, lfourth(list_nth(list, 5)));
	GpuAggJoinDescFromList(desc, list_nth(list, 6));
	desc->join_cond = strVal(list_nth(list, 7));
	desc->join_filter = strVal(list_nth(list, 9));
	return desc;
}

/* 1-based position of expr in the child's output, which must have it. */
AttrNumber
GpuAggChildAttno(List *child_exprs, Node *expr)
{
	ListCell   *lc;
	AttrNumber	attno = 1;

	foreach(lc, child_exprs)
	{
		if (equal(lfirst(lc), expr))
			return attno;
		attno++;
	}
	elog(ERROR, "gpuagg: expression missing from the child's target list");
	return InvalidAttrNumber;	/* keep compiler quiet */
}

/*
 * The executor's description of a GpuHashAgg or GpuAggPack path, from its
 * custom_private (see agg_try_add_path in hashagg/path.c); with scan_tlist
 * non-NULL, also the node's scan tuple: keys, then Aggrefs, then
 * GroupingFuncs.
 */
GpuAggDesc *
GpuAggDescFromPath(List *path_private, List **scan_tlist)
{
	List	   *keys = list_nth(path_private, GPUAGG_PRIVATE_KEYS);
	List	   *aggrefs = list_nth(path_private, GPUAGG_PRIVATE_AGGREFS);
	List	   *child_exprs = list_nth(path_private, GPUAGG_PRIVATE_CHILD_EXPRS);
	List	   *sets = list_nth(path_private, GPUAGG_PRIVATE_SETS);
	List	   *groupings = list_nth(path_private, GPUAGG_PRIVATE_GROUPINGS);
	int			relid = intVal(lfourth(sets));
	GpuAggDesc *desc = palloc0(sizeof(GpuAggDesc));
	List	   *tlist = NIL;
	ListCell   *lc;
	int			i;

	desc->nkeys = list_length(keys);
	desc->keys = palloc0(sizeof(GpuAggKeyDesc) * Max(desc->nkeys, 1));
	i = 0;
	foreach(lc, keys)
	{
		Node	   *key = lfirst(lc);

		desc->keys[i].child_attno = GpuAggChildAttno(child_exprs,
												GpuAggWithoutGroupingNulls(key, relid));
		desc->keys[i].type = getBaseType(exprType(key));

		/*
		 * A bpchar of a declared length: its dictionary is a text one, with
		 * one spelling per key and no spelling column to find a group's
		 * first row by (TPC-H's l_returnflag char(1)).
		 */
		if (KeyDictIsPaddedBpchar(key))
			desc->keys[i].type = TEXTOID;
		desc->keys[i].one_spelling = KeyDictKeyHasOneSpelling(key);
		tlist = lappend(tlist, makeTargetEntry((Expr *) key, list_length(tlist) + 1,
											   NULL, false));
		i++;
	}

	desc->naggs = list_length(aggrefs);
	desc->aggs = palloc0(sizeof(GpuAggAggDesc) * Max(desc->naggs, 1));
	i = 0;
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		GpuAggAggDesc *agg = &desc->aggs[i];
		const char *why;
		List	   *operands;

		if (!GpuAggClassifyAggref(aggref, &agg->kind, &agg->input_type,
								  &agg->numeric_scale, &agg->numeric_precision,
								  &agg->distinct, &why))
			elog(ERROR, "gpuagg: aggregate became unsupported: %s", why);
		agg->result_type = getBaseType(aggref->aggtype);
		/* a FILTER is folded into the argument (GpuAggChildArgument) */
		if (GpuAggDerivedArgument(aggref, &operands))
			agg->derived = GpuAggDerivedCompile(aggref, child_exprs, GpuAggChildAttno);
		else if (aggref->args != NIL)
		{
			Expr	   *arg = GpuAggChildArgument(aggref, 0);

			agg->arg_attno = GpuAggChildAttno(child_exprs, (Node *) arg);
			agg->arg_source_type = getBaseType(exprType((Node *) arg));
		}
		else if (aggref->aggfilter != NULL)
			agg->filter_attno = GpuAggChildAttno(child_exprs, (Node *) aggref->aggfilter);
		if (list_length(aggref->args) > 1)
		{
			Expr	   *arg = GpuAggChildArgument(aggref, 1);

			agg->arg2_attno = GpuAggChildAttno(child_exprs, (Node *) arg);
			agg->arg2_source_type = getBaseType(exprType((Node *) arg));
		}
		if (agg->kind == GPUAGG_FLOAT_MOMENTS || agg->kind == GPUAGG_FLOAT_COMOMENTS)
			agg->final_fn = GpuAggFinalFunction(aggref->aggfnoid);
		tlist = lappend(tlist, makeTargetEntry((Expr *) aggref, list_length(tlist) + 1,
											   NULL, false));
		i++;
	}
	desc->est_groups = floatVal(list_nth(path_private, GPUAGG_PRIVATE_GROUPS));
	desc->rescan_safe = intVal(list_nth(path_private, GPUAGG_PRIVATE_RESCAN_SAFE)) != 0;
	desc->input_rows = floatVal(list_nth(path_private, GPUAGG_PRIVATE_INPUT_ROWS));
	desc->parallel = intVal(list_nth(path_private, GPUAGG_PRIVATE_PARALLEL)) == 1;
	desc->join_input = intVal(list_nth(path_private, GPUAGG_PRIVATE_PARALLEL)) == 2;
	desc_set_sets(desc, linitial(sets), lsecond(sets));
	desc->grouping_sets = intVal(lthird(sets)) != 0;
	desc_set_groupings(desc, lsecond(groupings));
	GpuAggJoinDescFromPath(desc, path_private);
	foreach(lc, (List *) linitial(groupings))
		tlist = lappend(tlist, makeTargetEntry((Expr *) lfirst(lc), list_length(tlist) + 1,
											   NULL, false));
	if (scan_tlist != NULL)
		*scan_tlist = tlist;
	return desc;
}

/*
 * A join input child (a GpuHashJoin, hashjoin/path.c's GpuJoinAggInputPath) hands over
 * its scan tuples, not projected rows: point every key, argument and FILTER
 * column at the scan tuple's column that holds the child expression.
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
 * GpuHashJoin whose joined rows go straight into batches (join input).  A
 * aggjoin (aggjoin/aggjoin.c) has a child per side: the probe side
 * (serial or parallel as above), then each join's build side.
 */
Plan *
GpuAggPlanPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	List	   *child_exprs = list_nth(best_path->custom_private, GPUAGG_PRIVATE_CHILD_EXPRS);
	Plan	   *child = linitial(custom_plans);
	CustomScan *cscan = makeNode(CustomScan);
	List	   *scan_tlist;
	GpuAggDesc *desc = GpuAggDescFromPath(best_path->custom_private, &scan_tlist);

	if (desc->join_input)
		join_input_columns(desc, child_exprs, (CustomScan *) child);
	else if (desc->njoin_steps > 0)
	{
		int			s;

		desc->join_cond = GpuAggJoinConditionText(root, list_nth(best_path->custom_private,
																 GPUAGG_PRIVATE_JOIN),
												  &desc->join_filter);
		/* aggjoin (aggjoin/aggjoin.c): each side's expressions, then its keys */
		for (s = 0; s <= desc->njoin_steps; s++)
		{
			bool		packed = s == 0 ? desc->parallel : (desc->packed_sides & (1 << s)) != 0;

			if (!packed &&
				list_length(((Plan *) list_nth(custom_plans, s))->targetlist) != desc->side_ncolumns[s])
				elog(ERROR, "gpuagg: the sides of an aggjoin have unexpected columns");
		}
	}
	else if (!desc->parallel && list_length(child->targetlist) != list_length(child_exprs))
		elog(ERROR, "gpuagg: child plan has %d columns, expected %d",
			 list_length(child->targetlist), list_length(child_exprs));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = list_nth(best_path->custom_private, GPUAGG_PRIVATE_HAVING);
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
