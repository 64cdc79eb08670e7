/*-------------------------------------------------------------------------
 *
 * hashagg/private.c
 *	  What a GpuHashAgg, and each GpuAggPack under it, keeps in its private
 *	  lists: packed and unpacked here and nowhere else.
 *
 * A path's custom_private holds the grouping as hashagg/path.c found it
 * (GpuAggPathInfo): expressions, estimates, grouping sets, the child's
 * kind and, for an aggjoin, its joins.  At plan time GpuAggDescFromPath
 * makes the executor's description from it (GpuAggDesc): each key,
 * argument and FILTER as a column of the child, each aggregate classified.
 * A plan's custom_private holds that description as plain nodes (see
 * custom_private.h); the executor reads it back with GpuAggDescFromList, in
 * the leader and in every parallel worker.
 *
 * Each list is laid out by an enum of its fields (custom_private.h): a list
 * of nodes where a field is a node or a list, an integer list where every
 * field is an integer.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"

#include "aggjoin/aggjoin.h"
#include "batch/key_dict.h"
#include "compat.h"
#include "custom_private.h"
#include "finalize/numeric.h"
#include "hashagg/catalog.h"
#include "hashagg/derived.h"
#include "hashagg/desc.h"
#include "hashagg/private.h"

/* A path's custom_private (GpuAggPathInfo). */
enum GpuAggPathIndex
{
	PATH_KEYS,
	PATH_AGGREFS,
	PATH_CHILD_EXPRS,
	PATH_HAVING,
	PATH_EST_GROUPS,			/* Float */
	PATH_RESCAN_SAFE,			/* Integer */
	PATH_INPUT_ROWS,			/* Float */
	PATH_SET_MASKS,				/* integer list */
	PATH_SET_GROUPS,			/* Floats */
	PATH_GROUPING_SETS,			/* Integer */
	PATH_GROUPING_RELID,		/* Integer */
	PATH_GROUPINGS,
	PATH_GROUPING_KEYS,			/* integer lists */
	PATH_CHILD_KIND,			/* Integer */
	PATH_JOIN,					/* enum GpuAggJoinPathIndex, or NIL */
	PATH_NFIELDS
};

/* An aggjoin path's joins (GpuAggJoinPath). */
enum GpuAggJoinPathIndex
{
	JOIN_PATH_STEPS,			/* enum GpuAggJoinPathStepIndex, each */
	JOIN_PATH_CHILD_SIDES,		/* integer list */
	JOIN_PATH_FILTER_PROGRAM,
	JOIN_PATH_PACKED_SIDES,		/* Integer */
	JOIN_PATH_PACK_SIDE,		/* Integer */
	JOIN_PATH_NFIELDS
};

/* One step of them (GpuAggJoinPathStep). */
enum GpuAggJoinPathStepIndex
{
	JOIN_PATH_STEP_TYPE,		/* Integer */
	JOIN_PATH_STEP_OUTER_KEYS,
	JOIN_PATH_STEP_INNER_KEYS,
	JOIN_PATH_STEP_KEY_SIDES,	/* integer list */
	JOIN_PATH_STEP_HASH_CLAUSES,
	JOIN_PATH_STEP_FILTER_QUALS,
	JOIN_PATH_STEP_MATCH,		/* Integer: thousandths */
	JOIN_PATH_STEP_PROGRAM,
	JOIN_PATH_STEP_NFIELDS
};

/* A plan's custom_private (GpuAggDesc). */
enum GpuAggPlanIndex
{
	PLAN_KEYS,					/* enum GpuAggPlanKeyIndex, each */
	PLAN_AGGS,					/* enum GpuAggPlanAggIndex, each */
	PLAN_EST_GROUPS,			/* Float */
	PLAN_RESCAN_SAFE,			/* Integer */
	PLAN_INPUT_ROWS,			/* Float */
	PLAN_CHILD_KIND,			/* Integer */
	PLAN_SET_MASKS,				/* integer list */
	PLAN_SET_GROUPS,			/* Floats */
	PLAN_GROUPING_SETS,			/* Integer */
	PLAN_GROUPINGS,				/* integer lists: each one's keys */
	PLAN_JOIN,					/* enum GpuAggPlanJoinIndex, or NIL */
	PLAN_JOIN_COND,				/* String */
	PLAN_JOIN_FILTER,			/* String */
	PLAN_NFIELDS
};

/* One group key (GpuAggKeyDesc): an integer list. */
enum GpuAggPlanKeyIndex
{
	PLAN_KEY_CHILD_ATTNO,
	PLAN_KEY_TYPE,
	PLAN_KEY_ONE_SPELLING,
	PLAN_KEY_AS_BYTES,
	PLAN_KEY_NUMERIC_SCALE,
	PLAN_KEY_WIDTH,
	PLAN_KEY_NFIELDS
};

/* One aggregate (GpuAggAggDesc): Integers, and the derived program. */
enum GpuAggPlanAggIndex
{
	PLAN_AGG_KIND,
	PLAN_AGG_INPUT_TYPE,
	PLAN_AGG_RESULT_TYPE,
	PLAN_AGG_ARG_ATTNO,
	PLAN_AGG_ARG2_ATTNO,
	PLAN_AGG_FILTER_ATTNO,
	PLAN_AGG_FINAL_FN,
	PLAN_AGG_ARG_SOURCE_TYPE,
	PLAN_AGG_ARG2_SOURCE_TYPE,
	PLAN_AGG_NUMERIC_SCALE,
	PLAN_AGG_NUMERIC_PRECISION,
	PLAN_AGG_DISTINCT,
	PLAN_AGG_AS_BYTES,
	PLAN_AGG_ARG_WIDTH,
	PLAN_AGG_DERIVED,			/* enum GpuAggPlanDerivedIndex, each step;
								 * NIL: none */
	PLAN_AGG_NFIELDS
};

/* One step of a derived argument (GpuAggDerivedStep): an integer list. */
enum GpuAggPlanDerivedIndex
{
	PLAN_DERIVED_OP,
	PLAN_DERIVED_SCALE,
	PLAN_DERIVED_ATTNO,
	PLAN_DERIVED_TYPE,
	PLAN_DERIVED_POWER,
	PLAN_DERIVED_CONSTANT_HIGH, /* the int64 constant's two halves */
	PLAN_DERIVED_CONSTANT_LOW,
	PLAN_DERIVED_NFIELDS
};

/* An aggjoin's joins (GpuAggDesc's join fields). */
enum GpuAggPlanJoinIndex
{
	PLAN_JOIN_STEPS,			/* enum GpuAggPlanStepIndex, each */
	PLAN_JOIN_FILTER_STEPS,		/* enum GpuAggPlanFilterIndex, each */
	PLAN_JOIN_CHILD_SIDES,		/* integer list */
	PLAN_JOIN_PACKED_SIDES,		/* Integer */
	PLAN_JOIN_PACK_SIDE,		/* Integer */
	PLAN_JOIN_NFIELDS
};

/* One join step. */
enum GpuAggPlanStepIndex
{
	PLAN_STEP_TYPE,				/* Integer: GaAggJoinType */
	PLAN_STEP_BUILD_UNIQUE,		/* Integer */
	PLAN_STEP_MATCH,			/* Integer: thousandths */
	PLAN_STEP_KEYS,				/* enum GpuAggPlanStepKeyIndex, each */
	PLAN_STEP_FILTER_STEPS,		/* enum GpuAggPlanFilterIndex, each */
	PLAN_STEP_NFIELDS
};

/* One key of a join step: an integer list. */
enum GpuAggPlanStepKeyIndex
{
	PLAN_STEP_KEY_SIDE,
	PLAN_STEP_KEY_TYPE,
	PLAN_STEP_KEY_BUILD_TYPE,
	PLAN_STEP_KEY_AS_BYTES,
	PLAN_STEP_KEY_NFIELDS
};

/* One step of a filter program (GpuAggFilterDesc): an integer list. */
enum GpuAggPlanFilterIndex
{
	PLAN_FILTER_OP,
	PLAN_FILTER_CMP,
	PLAN_FILTER_ATTNO,
	PLAN_FILTER_ATTNO2,
	PLAN_FILTER_TYPE,
	PLAN_FILTER_TYPE2,
	PLAN_FILTER_NFIELDS
};

/* An aggjoin path's joins as a list (enum GpuAggJoinPathIndex). */
static List *
join_path_to_list(const GpuAggJoinPath *join)
{
	List	   *list = GpuAggPrivateFields(JOIN_PATH_NFIELDS);
	List	   *steps = NIL;
	int			t;

	for (t = 0; t < join->nsteps; t++)
	{
		const GpuAggJoinPathStep *step = &join->steps[t];
		List	   *s = GpuAggPrivateFields(JOIN_PATH_STEP_NFIELDS);

		GpuAggPrivateSet(s, JOIN_PATH_STEP_TYPE, makeInteger(step->type));
		GpuAggPrivateSet(s, JOIN_PATH_STEP_OUTER_KEYS, step->outer_keys);
		GpuAggPrivateSet(s, JOIN_PATH_STEP_INNER_KEYS, step->inner_keys);
		GpuAggPrivateSet(s, JOIN_PATH_STEP_KEY_SIDES, step->key_sides);
		GpuAggPrivateSet(s, JOIN_PATH_STEP_HASH_CLAUSES, step->hash_clauses);
		GpuAggPrivateSet(s, JOIN_PATH_STEP_FILTER_QUALS, step->filter_quals);
		GpuAggPrivateSet(s, JOIN_PATH_STEP_MATCH, makeInteger(step->match_permille));
		GpuAggPrivateSet(s, JOIN_PATH_STEP_PROGRAM, step->program);
		steps = lappend(steps, s);
	}
	GpuAggPrivateSet(list, JOIN_PATH_STEPS, steps);
	GpuAggPrivateSet(list, JOIN_PATH_CHILD_SIDES, join->child_sides);
	GpuAggPrivateSet(list, JOIN_PATH_FILTER_PROGRAM, join->filter_program);
	GpuAggPrivateSet(list, JOIN_PATH_PACKED_SIDES, makeInteger(join->packed_sides));
	GpuAggPrivateSet(list, JOIN_PATH_PACK_SIDE, makeInteger(join->pack_side));
	return list;
}

/* Read back what join_path_to_list wrote. */
static GpuAggJoinPath *
join_path_from_list(List *list)
{
	GpuAggJoinPath *join = palloc0(sizeof(GpuAggJoinPath));
	ListCell   *lc;

	GpuAggPrivateCheck(list, JOIN_PATH_NFIELDS, "aggjoin path");
	foreach(lc, (List *) list_nth(list, JOIN_PATH_STEPS))
	{
		List	   *s = lfirst(lc);
		GpuAggJoinPathStep *step = &join->steps[join->nsteps++];

		GpuAggPrivateCheck(s, JOIN_PATH_STEP_NFIELDS, "aggjoin path step");
		step->type = (JoinType) intVal(list_nth(s, JOIN_PATH_STEP_TYPE));
		step->outer_keys = list_nth(s, JOIN_PATH_STEP_OUTER_KEYS);
		step->inner_keys = list_nth(s, JOIN_PATH_STEP_INNER_KEYS);
		step->key_sides = list_nth(s, JOIN_PATH_STEP_KEY_SIDES);
		step->hash_clauses = list_nth(s, JOIN_PATH_STEP_HASH_CLAUSES);
		step->filter_quals = list_nth(s, JOIN_PATH_STEP_FILTER_QUALS);
		step->match_permille = intVal(list_nth(s, JOIN_PATH_STEP_MATCH));
		step->program = list_nth(s, JOIN_PATH_STEP_PROGRAM);
	}
	join->child_sides = list_nth(list, JOIN_PATH_CHILD_SIDES);
	join->filter_program = list_nth(list, JOIN_PATH_FILTER_PROGRAM);
	join->packed_sides = intVal(list_nth(list, JOIN_PATH_PACKED_SIDES));
	join->pack_side = intVal(list_nth(list, JOIN_PATH_PACK_SIDE));
	return join;
}

/*
 * A GpuHashAgg or GpuAggPack path's custom_private (see the head of this
 * file).  Estimates become Floats (GpuAggFloatNode), read back rounded to
 * a tenth.
 */
List *
GpuAggPathToList(const GpuAggPathInfo *info)
{
	List	   *list = GpuAggPrivateFields(PATH_NFIELDS);
	List	   *masks = NIL;
	List	   *groups = NIL;
	int			s;

	for (s = 0; s < info->nsets; s++)
	{
		masks = lappend_int(masks, (int) info->set_masks[s]);
		groups = lappend(groups, GpuAggFloatNode(info->set_groups[s]));
	}
	GpuAggPrivateSet(list, PATH_KEYS, info->keys);
	GpuAggPrivateSet(list, PATH_AGGREFS, info->aggrefs);
	GpuAggPrivateSet(list, PATH_CHILD_EXPRS, info->child_exprs);
	GpuAggPrivateSet(list, PATH_HAVING, info->having);
	GpuAggPrivateSet(list, PATH_EST_GROUPS, GpuAggFloatNode(info->est_groups));
	GpuAggPrivateSet(list, PATH_RESCAN_SAFE, makeInteger(info->rescan_safe ? 1 : 0));
	GpuAggPrivateSet(list, PATH_INPUT_ROWS, GpuAggFloatNode(info->input_rows));
	GpuAggPrivateSet(list, PATH_SET_MASKS, masks);
	GpuAggPrivateSet(list, PATH_SET_GROUPS, groups);
	GpuAggPrivateSet(list, PATH_GROUPING_SETS, makeInteger(info->grouping_sets ? 1 : 0));
	GpuAggPrivateSet(list, PATH_GROUPING_RELID, makeInteger(info->grouping_relid));
	GpuAggPrivateSet(list, PATH_GROUPINGS, info->groupings);
	GpuAggPrivateSet(list, PATH_GROUPING_KEYS, info->grouping_keys);
	GpuAggPrivateSet(list, PATH_CHILD_KIND, makeInteger((int) info->child_kind));
	GpuAggPrivateSet(list, PATH_JOIN, info->join != NULL ? join_path_to_list(info->join) : NIL);
	return list;
}

/* Read back what GpuAggPathToList wrote. */
GpuAggPathInfo *
GpuAggPathFromList(List *list)
{
	GpuAggPathInfo *info = palloc0(sizeof(GpuAggPathInfo));
	List	   *masks;
	List	   *groups;
	int			s;

	GpuAggPrivateCheck(list, PATH_NFIELDS, "GpuHashAgg path");
	info->keys = list_nth(list, PATH_KEYS);
	info->aggrefs = list_nth(list, PATH_AGGREFS);
	info->child_exprs = list_nth(list, PATH_CHILD_EXPRS);
	info->having = list_nth(list, PATH_HAVING);
	info->est_groups = floatVal(list_nth(list, PATH_EST_GROUPS));
	info->rescan_safe = intVal(list_nth(list, PATH_RESCAN_SAFE)) != 0;
	info->input_rows = floatVal(list_nth(list, PATH_INPUT_ROWS));
	masks = list_nth(list, PATH_SET_MASKS);
	groups = list_nth(list, PATH_SET_GROUPS);
	info->nsets = list_length(masks);
	if (info->nsets > GPUAGG_MAX_GROUPING_SETS)
		elog(ERROR, "gpuagg: %d grouping sets in a GpuHashAgg path", info->nsets);
	for (s = 0; s < info->nsets; s++)
	{
		info->set_masks[s] = (uint32) list_nth_int(masks, s);
		info->set_groups[s] = floatVal(list_nth(groups, s));
	}
	info->grouping_sets = intVal(list_nth(list, PATH_GROUPING_SETS)) != 0;
	info->grouping_relid = intVal(list_nth(list, PATH_GROUPING_RELID));
	info->groupings = list_nth(list, PATH_GROUPINGS);
	info->grouping_keys = list_nth(list, PATH_GROUPING_KEYS);
	info->child_kind = (GpuAggChildKind) intVal(list_nth(list, PATH_CHILD_KIND));
	if (list_nth(list, PATH_JOIN) != NIL)
		info->join = join_path_from_list(list_nth(list, PATH_JOIN));
	return info;
}

/*
 * The executor's description of a GpuHashAgg or GpuAggPack path; with
 * scan_tlist non-NULL, also the node's scan tuple: keys, then Aggrefs,
 * then GroupingFuncs.
 */
GpuAggDesc *
GpuAggDescFromPath(const GpuAggPathInfo *info, List **scan_tlist)
{
	List	   *child_exprs = info->child_exprs;
	GpuAggDesc *desc = palloc0(sizeof(GpuAggDesc));
	List	   *tlist = NIL;
	ListCell   *lc;
	int			i;

	desc->nkeys = list_length(info->keys);
	desc->keys = palloc0(sizeof(GpuAggKeyDesc) * Max(desc->nkeys, 1));
	i = 0;
	foreach(lc, info->keys)
	{
		Node	   *key = lfirst(lc);

		desc->keys[i].child_attno =
			GpuAggChildAttno(child_exprs,
							 GpuAggWithoutGroupingNulls(key, info->grouping_relid));
		desc->keys[i].type = getBaseType(exprType(key));

		/*
		 * A bpchar of a declared length: its dictionary is a text one, with
		 * one spelling per key and no spelling column to find a group's
		 * first row by (TPC-H's l_returnflag char(1)).
		 */
		if (KeyDictIsPaddedBpchar(key))
			desc->keys[i].type = TEXTOID;
		desc->keys[i].one_spelling = KeyDictKeyHasOneSpelling(key);
		desc->keys[i].numeric_scale = (int16) GpuAggNumericKeyScale(key);
		desc->keys[i].width = get_typavgwidth(exprType(key), exprTypmod(key));
		tlist = lappend(tlist, makeTargetEntry((Expr *) key, list_length(tlist) + 1,
											   NULL, false));
		i++;
	}

	desc->naggs = list_length(info->aggrefs);
	desc->aggs = palloc0(sizeof(GpuAggAggDesc) * Max(desc->naggs, 1));
	i = 0;
	foreach(lc, info->aggrefs)
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
			agg->derived = GpuAggDerivedCompile(aggref, child_exprs);
		else if (aggref->args != NIL)
		{
			Expr	   *arg = GpuAggChildArgument(aggref, 0);

			agg->arg_attno = GpuAggChildAttno(child_exprs, (Node *) arg);
			agg->arg_source_type = getBaseType(exprType((Node *) arg));
			agg->arg_width = get_typavgwidth(exprType((Node *) arg), exprTypmod((Node *) arg));
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
	desc->est_groups = info->est_groups;
	desc->rescan_safe = info->rescan_safe;
	desc->input_rows = info->input_rows;
	desc->child_kind = info->child_kind;
	desc->nsets = info->nsets;
	desc->sets = palloc0(sizeof(GpuAggSetDesc) * Max(desc->nsets, 1));
	for (i = 0; i < desc->nsets; i++)
	{
		desc->sets[i].key_mask = info->set_masks[i];
		desc->sets[i].est_groups = info->set_groups[i];
	}
	desc->grouping_sets = info->grouping_sets;
	desc->ngroupings = list_length(info->grouping_keys);
	desc->groupings = palloc0(sizeof(GpuAggGroupingDesc) * Max(desc->ngroupings, 1));
	for (i = 0; i < desc->ngroupings; i++)
	{
		List	   *args = list_nth(info->grouping_keys, i);
		int			j;

		desc->groupings[i].nargs = list_length(args);
		desc->groupings[i].keys = palloc(sizeof(int) * Max(list_length(args), 1));
		for (j = 0; j < list_length(args); j++)
			desc->groupings[i].keys[j] = list_nth_int(args, j);
	}
	GpuAggJoinDescFromPath(desc, info->join, child_exprs);

	/*
	 * Text keys and DISTINCT arguments travel as bytes where the batches are
	 * packed row by row from the child, its workers or the GpuHashJoin
	 * below, an aggjoin's keys where the device groups joined rows by
	 * strings (an aggjoin takes no DISTINCT argument).
	 */
	for (i = 0; i < desc->nkeys; i++)
		desc->keys[i].as_bytes = desc->njoin_steps > 0 ?
			GpuAggJoinGroupKeyAsBytes(desc->keys[i].type) :
			GpuAggKeyAsBytes(desc->keys[i].type);
	i = 0;
	foreach(lc, info->aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		GpuAggAggDesc *agg = &desc->aggs[i++];

		agg->as_bytes = agg->distinct && desc->njoin_steps == 0 &&
			GpuAggDistinctAsBytes(aggref);
	}
	foreach(lc, info->groupings)
		tlist = lappend(tlist, makeTargetEntry((Expr *) lfirst(lc), list_length(tlist) + 1,
											   NULL, false));
	if (scan_tlist != NULL)
		*scan_tlist = tlist;
	return desc;
}

/* A filter program as a list (enum GpuAggPlanFilterIndex, each step). */
static List *
filter_to_list(const GpuAggFilterDesc *filter)
{
	List	   *list = NIL;
	int			i;

	for (i = 0; i < filter->nsteps; i++)
	{
		List	   *step = GpuAggPrivateIntFields(PLAN_FILTER_NFIELDS);

		GpuAggPrivateSetInt(step, PLAN_FILTER_OP, filter->steps[i].op);
		GpuAggPrivateSetInt(step, PLAN_FILTER_CMP, filter->steps[i].cmp);
		GpuAggPrivateSetInt(step, PLAN_FILTER_ATTNO, filter->steps[i].attno);
		GpuAggPrivateSetInt(step, PLAN_FILTER_ATTNO2, filter->steps[i].attno2);
		GpuAggPrivateSetInt(step, PLAN_FILTER_TYPE, (int) filter->steps[i].type);
		GpuAggPrivateSetInt(step, PLAN_FILTER_TYPE2, (int) filter->steps[i].type2);
		list = lappend(list, step);
	}
	return list;
}

/* Read back what filter_to_list wrote. */
static void
filter_from_list(GpuAggFilterDesc *filter, List *list)
{
	int			i;

	memset(filter, 0, sizeof(*filter));
	filter->nsteps = list_length(list);
	if (filter->nsteps > GA_FILTER_MAX_STEPS)
		elog(ERROR, "gpuagg: a join filter of %d steps", filter->nsteps);
	for (i = 0; i < filter->nsteps; i++)
	{
		List	   *step = list_nth(list, i);

		GpuAggPrivateCheck(step, PLAN_FILTER_NFIELDS, "filter step");
		filter->steps[i].op = (int16) list_nth_int(step, PLAN_FILTER_OP);
		filter->steps[i].cmp = (int16) list_nth_int(step, PLAN_FILTER_CMP);
		filter->steps[i].attno = (AttrNumber) list_nth_int(step, PLAN_FILTER_ATTNO);
		filter->steps[i].attno2 = (AttrNumber) list_nth_int(step, PLAN_FILTER_ATTNO2);
		filter->steps[i].type = (Oid) list_nth_int(step, PLAN_FILTER_TYPE);
		filter->steps[i].type2 = (Oid) list_nth_int(step, PLAN_FILTER_TYPE2);
	}
}

/* An aggjoin's joins as a list (enum GpuAggPlanJoinIndex). */
static List *
join_to_list(const GpuAggDesc *desc)
{
	List	   *list = GpuAggPrivateFields(PLAN_JOIN_NFIELDS);
	List	   *steps = NIL;
	List	   *child_sides = NIL;
	int			i;
	int			k;

	for (i = 0; i < desc->njoin_steps; i++)
	{
		List	   *step = GpuAggPrivateFields(PLAN_STEP_NFIELDS);
		List	   *keys = NIL;

		for (k = 0; k < desc->join_steps[i].nkeys; k++)
		{
			List	   *key = GpuAggPrivateIntFields(PLAN_STEP_KEY_NFIELDS);

			GpuAggPrivateSetInt(key, PLAN_STEP_KEY_SIDE, desc->join_steps[i].keys[k].side);
			GpuAggPrivateSetInt(key, PLAN_STEP_KEY_TYPE, (int) desc->join_steps[i].keys[k].type);
			GpuAggPrivateSetInt(key, PLAN_STEP_KEY_BUILD_TYPE,
							(int) desc->join_steps[i].keys[k].build_type);
			GpuAggPrivateSetInt(key, PLAN_STEP_KEY_AS_BYTES,
								desc->join_steps[i].keys[k].as_bytes ? 1 : 0);
			keys = lappend(keys, key);
		}
		GpuAggPrivateSet(step, PLAN_STEP_TYPE, makeInteger(desc->join_steps[i].type));
		GpuAggPrivateSet(step, PLAN_STEP_BUILD_UNIQUE,
					makeInteger(desc->join_steps[i].build_unique ? 1 : 0));
		GpuAggPrivateSet(step, PLAN_STEP_MATCH,
					makeInteger((int) (desc->join_steps[i].match_fraction * 1000.0 + 0.5)));
		GpuAggPrivateSet(step, PLAN_STEP_KEYS, keys);
		GpuAggPrivateSet(step, PLAN_STEP_FILTER_STEPS, filter_to_list(&desc->join_steps[i].filter));
		steps = lappend(steps, step);
	}
	for (i = 0; i < desc->nchild; i++)
		child_sides = lappend_int(child_sides, desc->child_side[i]);
	GpuAggPrivateSet(list, PLAN_JOIN_STEPS, steps);
	GpuAggPrivateSet(list, PLAN_JOIN_FILTER_STEPS, filter_to_list(&desc->filter));
	GpuAggPrivateSet(list, PLAN_JOIN_CHILD_SIDES, child_sides);
	GpuAggPrivateSet(list, PLAN_JOIN_PACKED_SIDES, makeInteger(desc->packed_sides));
	GpuAggPrivateSet(list, PLAN_JOIN_PACK_SIDE, makeInteger(desc->pack_side));
	return list;
}

/*
 * Read back what join_to_list wrote; the columns of the sides' children
 * are numbered again from it (GpuAggJoinNumberColumns).
 */
static void
join_from_list(GpuAggDesc *desc, List *list)
{
	List	   *steps;
	List	   *child_sides;
	int			i;
	int			k;

	GpuAggPrivateCheck(list, PLAN_JOIN_NFIELDS, "aggjoin description");
	steps = list_nth(list, PLAN_JOIN_STEPS);
	desc->njoin_steps = list_length(steps);
	if (desc->njoin_steps > GA_AGG_MAX_JOIN_STEPS)
		elog(ERROR, "gpuagg: an aggjoin of %d join steps", desc->njoin_steps);
	for (i = 0; i < desc->njoin_steps; i++)
	{
		List	   *step = list_nth(steps, i);
		List	   *keys;

		GpuAggPrivateCheck(step, PLAN_STEP_NFIELDS, "aggjoin step");
		keys = list_nth(step, PLAN_STEP_KEYS);
		desc->join_steps[i].type = intVal(list_nth(step, PLAN_STEP_TYPE));
		desc->join_steps[i].build_unique = intVal(list_nth(step, PLAN_STEP_BUILD_UNIQUE)) != 0;
		desc->join_steps[i].match_fraction = intVal(list_nth(step, PLAN_STEP_MATCH)) / 1000.0;
		desc->join_steps[i].nkeys = list_length(keys);
		if (desc->join_steps[i].nkeys > GA_AGG_MAX_JOIN_KEYS)
			elog(ERROR, "gpuagg: an aggjoin step of %d keys", desc->join_steps[i].nkeys);
		for (k = 0; k < desc->join_steps[i].nkeys; k++)
		{
			List	   *key = list_nth(keys, k);

			GpuAggPrivateCheck(key, PLAN_STEP_KEY_NFIELDS, "aggjoin key");
			desc->join_steps[i].keys[k].side = list_nth_int(key, PLAN_STEP_KEY_SIDE);
			desc->join_steps[i].keys[k].type = (Oid) list_nth_int(key, PLAN_STEP_KEY_TYPE);
			desc->join_steps[i].keys[k].build_type =
				(Oid) list_nth_int(key, PLAN_STEP_KEY_BUILD_TYPE);
			desc->join_steps[i].keys[k].as_bytes =
				list_nth_int(key, PLAN_STEP_KEY_AS_BYTES) != 0;
		}
		filter_from_list(&desc->join_steps[i].filter, list_nth(step, PLAN_STEP_FILTER_STEPS));
	}
	filter_from_list(&desc->filter, list_nth(list, PLAN_JOIN_FILTER_STEPS));
	desc->packed_sides = intVal(list_nth(list, PLAN_JOIN_PACKED_SIDES));
	desc->pack_side = intVal(list_nth(list, PLAN_JOIN_PACK_SIDE));
	child_sides = list_nth(list, PLAN_JOIN_CHILD_SIDES);
	desc->nchild = list_length(child_sides);
	desc->child_side = palloc0(sizeof(int) * Max(desc->nchild, 1));
	desc->child_side_attno = palloc0(sizeof(AttrNumber) * Max(desc->nchild, 1));
	for (i = 0; i < desc->nchild; i++)
		desc->child_side[i] = list_nth_int(child_sides, i);
	GpuAggJoinNumberColumns(desc);
}

/* A derived argument's program as a list (enum GpuAggPlanDerivedIndex, each step). */
static List *
derived_to_list(const GpuAggDerivedDesc *derived)
{
	List	   *list = NIL;
	int			i;

	if (derived == NULL)
		return NIL;
	for (i = 0; i < derived->nsteps; i++)
	{
		const GpuAggDerivedStep *step = &derived->steps[i];
		List	   *s = GpuAggPrivateIntFields(PLAN_DERIVED_NFIELDS);

		GpuAggPrivateSetInt(s, PLAN_DERIVED_OP, step->op);
		GpuAggPrivateSetInt(s, PLAN_DERIVED_SCALE, step->scale);
		GpuAggPrivateSetInt(s, PLAN_DERIVED_ATTNO, step->attno);
		GpuAggPrivateSetInt(s, PLAN_DERIVED_TYPE, (int) step->type);
		GpuAggPrivateSetInt(s, PLAN_DERIVED_POWER, step->power);
		GpuAggPrivateSetInt(s, PLAN_DERIVED_CONSTANT_HIGH,
						(int) (uint32) ((uint64) step->constant >> 32));
		GpuAggPrivateSetInt(s, PLAN_DERIVED_CONSTANT_LOW, (int) (uint32) (uint64) step->constant);
		list = lappend(list, s);
	}
	return list;
}

/* The program derived_to_list wrote; NULL for NIL. */
static GpuAggDerivedDesc *
derived_from_list(List *list)
{
	GpuAggDerivedDesc *derived;
	int			i;

	if (list == NIL)
		return NULL;
	derived = palloc0(sizeof(GpuAggDerivedDesc));
	derived->nsteps = list_length(list);
	if (derived->nsteps > GA_EXPR_MAX_STEPS)
		elog(ERROR, "gpuagg: a derived argument of %d steps", derived->nsteps);
	for (i = 0; i < derived->nsteps; i++)
	{
		GpuAggDerivedStep *step = &derived->steps[i];
		List	   *s = list_nth(list, i);

		GpuAggPrivateCheck(s, PLAN_DERIVED_NFIELDS, "derived step");
		step->op = (int16) list_nth_int(s, PLAN_DERIVED_OP);
		step->scale = (int16) list_nth_int(s, PLAN_DERIVED_SCALE);
		step->attno = (AttrNumber) list_nth_int(s, PLAN_DERIVED_ATTNO);
		step->type = (Oid) list_nth_int(s, PLAN_DERIVED_TYPE);
		step->power = list_nth_int(s, PLAN_DERIVED_POWER);
		step->constant =
			(int64) (((uint64) (uint32) list_nth_int(s, PLAN_DERIVED_CONSTANT_HIGH) << 32) |
					 (uint64) (uint32) list_nth_int(s, PLAN_DERIVED_CONSTANT_LOW));
	}
	return derived;
}

/*
 * A plan's custom_private: the description as plain nodes (see the head of
 * this file), estimates as Floats (GpuAggFloatNode).
 */
List *
GpuAggDescToList(const GpuAggDesc *desc)
{
	List	   *list = GpuAggPrivateFields(PLAN_NFIELDS);
	List	   *keys = NIL;
	List	   *aggs = NIL;
	List	   *masks = NIL;
	List	   *groups = NIL;
	List	   *groupings = NIL;
	int			i;

	for (i = 0; i < desc->nkeys; i++)
	{
		List	   *key = GpuAggPrivateIntFields(PLAN_KEY_NFIELDS);

		GpuAggPrivateSetInt(key, PLAN_KEY_CHILD_ATTNO, desc->keys[i].child_attno);
		GpuAggPrivateSetInt(key, PLAN_KEY_TYPE, (int) desc->keys[i].type);
		GpuAggPrivateSetInt(key, PLAN_KEY_ONE_SPELLING, desc->keys[i].one_spelling ? 1 : 0);
		GpuAggPrivateSetInt(key, PLAN_KEY_AS_BYTES, desc->keys[i].as_bytes ? 1 : 0);
		GpuAggPrivateSetInt(key, PLAN_KEY_NUMERIC_SCALE, desc->keys[i].numeric_scale);
		GpuAggPrivateSetInt(key, PLAN_KEY_WIDTH, desc->keys[i].width);
		keys = lappend(keys, key);
	}
	for (i = 0; i < desc->naggs; i++)
	{
		const GpuAggAggDesc *agg = &desc->aggs[i];
		List	   *a = GpuAggPrivateFields(PLAN_AGG_NFIELDS);

		GpuAggPrivateSet(a, PLAN_AGG_KIND, makeInteger((int) agg->kind));
		GpuAggPrivateSet(a, PLAN_AGG_INPUT_TYPE, makeInteger((int) agg->input_type));
		GpuAggPrivateSet(a, PLAN_AGG_RESULT_TYPE, makeInteger((int) agg->result_type));
		GpuAggPrivateSet(a, PLAN_AGG_ARG_ATTNO, makeInteger(agg->arg_attno));
		GpuAggPrivateSet(a, PLAN_AGG_ARG2_ATTNO, makeInteger(agg->arg2_attno));
		GpuAggPrivateSet(a, PLAN_AGG_FILTER_ATTNO, makeInteger(agg->filter_attno));
		GpuAggPrivateSet(a, PLAN_AGG_FINAL_FN, makeInteger((int) agg->final_fn));
		GpuAggPrivateSet(a, PLAN_AGG_ARG_SOURCE_TYPE, makeInteger((int) agg->arg_source_type));
		GpuAggPrivateSet(a, PLAN_AGG_ARG2_SOURCE_TYPE, makeInteger((int) agg->arg2_source_type));
		GpuAggPrivateSet(a, PLAN_AGG_NUMERIC_SCALE, makeInteger(agg->numeric_scale));
		GpuAggPrivateSet(a, PLAN_AGG_NUMERIC_PRECISION, makeInteger(agg->numeric_precision));
		GpuAggPrivateSet(a, PLAN_AGG_DISTINCT, makeInteger(agg->distinct ? 1 : 0));
		GpuAggPrivateSet(a, PLAN_AGG_AS_BYTES, makeInteger(agg->as_bytes ? 1 : 0));
		GpuAggPrivateSet(a, PLAN_AGG_ARG_WIDTH, makeInteger(agg->arg_width));
		GpuAggPrivateSet(a, PLAN_AGG_DERIVED, derived_to_list(agg->derived));
		aggs = lappend(aggs, a);
	}
	for (i = 0; i < desc->nsets; i++)
	{
		masks = lappend_int(masks, (int) desc->sets[i].key_mask);
		groups = lappend(groups, GpuAggFloatNode(desc->sets[i].est_groups));
	}
	for (i = 0; i < desc->ngroupings; i++)
	{
		List	   *args = NIL;
		int			j;

		for (j = 0; j < desc->groupings[i].nargs; j++)
			args = lappend_int(args, desc->groupings[i].keys[j]);
		groupings = lappend(groupings, args);
	}
	GpuAggPrivateSet(list, PLAN_KEYS, keys);
	GpuAggPrivateSet(list, PLAN_AGGS, aggs);
	GpuAggPrivateSet(list, PLAN_EST_GROUPS, GpuAggFloatNode(desc->est_groups));
	GpuAggPrivateSet(list, PLAN_RESCAN_SAFE, makeInteger(desc->rescan_safe ? 1 : 0));
	GpuAggPrivateSet(list, PLAN_INPUT_ROWS, GpuAggFloatNode(desc->input_rows));
	GpuAggPrivateSet(list, PLAN_CHILD_KIND, makeInteger((int) desc->child_kind));
	GpuAggPrivateSet(list, PLAN_SET_MASKS, masks);
	GpuAggPrivateSet(list, PLAN_SET_GROUPS, groups);
	GpuAggPrivateSet(list, PLAN_GROUPING_SETS, makeInteger(desc->grouping_sets ? 1 : 0));
	GpuAggPrivateSet(list, PLAN_GROUPINGS, groupings);
	GpuAggPrivateSet(list, PLAN_JOIN, desc->njoin_steps > 0 ? join_to_list(desc) : NIL);
	GpuAggPrivateSet(list, PLAN_JOIN_COND,
				makeString(pstrdup(desc->join_cond != NULL ? desc->join_cond : "")));
	GpuAggPrivateSet(list, PLAN_JOIN_FILTER,
				makeString(pstrdup(desc->join_filter != NULL ? desc->join_filter : "")));
	return list;
}

/* Read the description back from a plan's custom_private. */
GpuAggDesc *
GpuAggDescFromList(List *list)
{
	GpuAggDesc *desc = palloc0(sizeof(GpuAggDesc));
	List	   *keys;
	List	   *aggs;
	List	   *masks;
	List	   *groups;
	List	   *groupings;
	int			i;

	GpuAggPrivateCheck(list, PLAN_NFIELDS, "GpuHashAgg description");
	keys = list_nth(list, PLAN_KEYS);
	desc->nkeys = list_length(keys);
	desc->keys = palloc0(sizeof(GpuAggKeyDesc) * Max(desc->nkeys, 1));
	for (i = 0; i < desc->nkeys; i++)
	{
		List	   *key = list_nth(keys, i);

		GpuAggPrivateCheck(key, PLAN_KEY_NFIELDS, "group key");
		desc->keys[i].child_attno = (AttrNumber) list_nth_int(key, PLAN_KEY_CHILD_ATTNO);
		desc->keys[i].type = (Oid) list_nth_int(key, PLAN_KEY_TYPE);
		desc->keys[i].one_spelling = list_nth_int(key, PLAN_KEY_ONE_SPELLING) != 0;
		desc->keys[i].as_bytes = list_nth_int(key, PLAN_KEY_AS_BYTES) != 0;
		desc->keys[i].numeric_scale = (int16) list_nth_int(key, PLAN_KEY_NUMERIC_SCALE);
		desc->keys[i].width = list_nth_int(key, PLAN_KEY_WIDTH);
	}
	aggs = list_nth(list, PLAN_AGGS);
	desc->naggs = list_length(aggs);
	desc->aggs = palloc0(sizeof(GpuAggAggDesc) * Max(desc->naggs, 1));
	for (i = 0; i < desc->naggs; i++)
	{
		List	   *a = list_nth(aggs, i);
		GpuAggAggDesc *agg = &desc->aggs[i];

		GpuAggPrivateCheck(a, PLAN_AGG_NFIELDS, "aggregate");
		agg->kind = (GpuAggKind) intVal(list_nth(a, PLAN_AGG_KIND));
		agg->input_type = (Oid) intVal(list_nth(a, PLAN_AGG_INPUT_TYPE));
		agg->result_type = (Oid) intVal(list_nth(a, PLAN_AGG_RESULT_TYPE));
		agg->arg_attno = (AttrNumber) intVal(list_nth(a, PLAN_AGG_ARG_ATTNO));
		agg->arg2_attno = (AttrNumber) intVal(list_nth(a, PLAN_AGG_ARG2_ATTNO));
		agg->filter_attno = (AttrNumber) intVal(list_nth(a, PLAN_AGG_FILTER_ATTNO));
		agg->final_fn = (Oid) intVal(list_nth(a, PLAN_AGG_FINAL_FN));
		agg->arg_source_type = (Oid) intVal(list_nth(a, PLAN_AGG_ARG_SOURCE_TYPE));
		agg->arg2_source_type = (Oid) intVal(list_nth(a, PLAN_AGG_ARG2_SOURCE_TYPE));
		agg->numeric_scale = intVal(list_nth(a, PLAN_AGG_NUMERIC_SCALE));
		agg->numeric_precision = intVal(list_nth(a, PLAN_AGG_NUMERIC_PRECISION));
		agg->distinct = intVal(list_nth(a, PLAN_AGG_DISTINCT)) != 0;
		agg->as_bytes = intVal(list_nth(a, PLAN_AGG_AS_BYTES)) != 0;
		agg->arg_width = intVal(list_nth(a, PLAN_AGG_ARG_WIDTH));
		agg->derived = derived_from_list(list_nth(a, PLAN_AGG_DERIVED));
	}
	desc->est_groups = floatVal(list_nth(list, PLAN_EST_GROUPS));
	desc->rescan_safe = intVal(list_nth(list, PLAN_RESCAN_SAFE)) != 0;
	desc->input_rows = floatVal(list_nth(list, PLAN_INPUT_ROWS));
	desc->child_kind = (GpuAggChildKind) intVal(list_nth(list, PLAN_CHILD_KIND));
	masks = list_nth(list, PLAN_SET_MASKS);
	groups = list_nth(list, PLAN_SET_GROUPS);
	desc->nsets = list_length(masks);
	desc->sets = palloc0(sizeof(GpuAggSetDesc) * Max(desc->nsets, 1));
	for (i = 0; i < desc->nsets; i++)
	{
		desc->sets[i].key_mask = (uint32) list_nth_int(masks, i);
		desc->sets[i].est_groups = floatVal(list_nth(groups, i));
	}
	desc->grouping_sets = intVal(list_nth(list, PLAN_GROUPING_SETS)) != 0;
	groupings = list_nth(list, PLAN_GROUPINGS);
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
	if (list_nth(list, PLAN_JOIN) != NIL)
		join_from_list(desc, list_nth(list, PLAN_JOIN));
	desc->join_cond = strVal(list_nth(list, PLAN_JOIN_COND));
	desc->join_filter = strVal(list_nth(list, PLAN_JOIN_FILTER));
	return desc;
}
