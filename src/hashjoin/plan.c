/*-------------------------------------------------------------------------
 *
 * hashjoin/plan.c
 *	  Turns a GpuHashJoin path into a CustomScan, and its description into
 *	  custom_private and back.
 *
 * The node's scan tuple (custom_scan_tlist) holds every Var that the
 * node's output and its filter (an outer join's pushed-down conditions)
 * need, each taken from one child; setrefs.c then makes the target list and
 * the filter reference that tuple, so ExecScan can project and filter as for
 * any scan.  The hash keys and join quals are evaluated on pairs of child
 * rows instead, so their Vars are rewritten here into OUTER_VAR / INNER_VAR
 * references to the children's output columns, as setrefs.c does for a
 * native HashJoin, and kept in custom_private where setrefs.c leaves them
 * alone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"

#include "batch/exact_key.h"
#include "custom_private.h"
#include "hashjoin/hashjoin.h"

static const CustomScanMethods gpujoin_scan_methods = {
	.CustomName = GPUJOIN_NODE_NAME,
	.CreateCustomScanState = GpuJoinCreateScanState,
};

/* Positions in custom_private (GpuJoinDescToList). */
enum
{
	JOIN_PRIVATE_JOINTYPE,
	JOIN_PRIVATE_OUTER_KEYS,
	JOIN_PRIVATE_INNER_KEYS,
	JOIN_PRIVATE_KEY_KINDS,
	JOIN_PRIVATE_OUTER_HASHFNS,
	JOIN_PRIVATE_INNER_HASHFNS,
	JOIN_PRIVATE_COLLATIONS,
	JOIN_PRIVATE_HASH_CLAUSES,
	JOIN_PRIVATE_RECHECK,
	JOIN_PRIVATE_JOIN_QUALS,
	JOIN_PRIVATE_SCAN_SIDES,
	JOIN_PRIVATE_SCAN_ATTNOS,
	JOIN_PRIVATE_INNER_ROWS,
	JOIN_PRIVATE_OUTER_ROWS,
	JOIN_PRIVATE_INNER_UNIQUE,
	JOIN_PRIVATE_COUNT
};

/* The path's private list, by position (hashjoin/path.c). */
enum
{
	PATH_PRIVATE_JOINTYPE,
	PATH_PRIVATE_OUTER_KEYS,
	PATH_PRIVATE_INNER_KEYS,
	PATH_PRIVATE_HASH_CLAUSES,
	PATH_PRIVATE_JOIN_QUALS,
	PATH_PRIVATE_OTHER_QUALS,
	PATH_PRIVATE_INNER_UNIQUE
};

/* Serialize a description into plain nodes for custom_private. */
List *
GpuJoinDescToList(const GpuJoinDesc *desc)
{
	List	   *kinds = NIL;
	List	   *outer_fns = NIL;
	List	   *inner_fns = NIL;
	List	   *collations = NIL;
	List	   *sides = NIL;
	List	   *attnos = NIL;
	List	   *list = NIL;
	int			i;

	for (i = 0; i < desc->nkeys; i++)
	{
		kinds = lappend_int(kinds, desc->key_kinds[i]);
		outer_fns = lappend_oid(outer_fns, desc->outer_hashfns[i]);
		inner_fns = lappend_oid(inner_fns, desc->inner_hashfns[i]);
		collations = lappend_oid(collations, desc->collations[i]);
	}
	for (i = 0; i < desc->nscan; i++)
	{
		sides = lappend_int(sides, desc->scan_sides[i]);
		attnos = lappend_int(attnos, desc->scan_attnos[i]);
	}
	list = lappend(list, makeInteger(desc->jointype));
	list = lappend(list, desc->outer_keys);
	list = lappend(list, desc->inner_keys);
	list = lappend(list, kinds);
	list = lappend(list, outer_fns);
	list = lappend(list, inner_fns);
	list = lappend(list, collations);
	list = lappend(list, desc->hash_clauses);
	list = lappend(list, makeInteger(desc->recheck ? 1 : 0));
	list = lappend(list, desc->join_quals);
	list = lappend(list, sides);
	list = lappend(list, attnos);
	list = lappend(list, GpuAggFloatNode(desc->inner_rows));
	list = lappend(list, GpuAggFloatNode(desc->outer_rows));
	list = lappend(list, makeInteger(desc->inner_unique ? 1 : 0));
	Assert(list_length(list) == JOIN_PRIVATE_COUNT);
	return list;
}

/* Read a description back from custom_private. */
GpuJoinDesc *
GpuJoinDescFromList(List *list)
{
	GpuJoinDesc *desc = palloc0(sizeof(GpuJoinDesc));
	List	   *kinds = list_nth(list, JOIN_PRIVATE_KEY_KINDS);
	List	   *outer_fns = list_nth(list, JOIN_PRIVATE_OUTER_HASHFNS);
	List	   *inner_fns = list_nth(list, JOIN_PRIVATE_INNER_HASHFNS);
	List	   *collations = list_nth(list, JOIN_PRIVATE_COLLATIONS);
	List	   *sides = list_nth(list, JOIN_PRIVATE_SCAN_SIDES);
	List	   *attnos = list_nth(list, JOIN_PRIVATE_SCAN_ATTNOS);
	int			i;

	if (list_length(list) != JOIN_PRIVATE_COUNT)
		elog(ERROR, "gpuagg: malformed GpuHashJoin description");
	desc->jointype = (JoinType) intVal(list_nth(list, JOIN_PRIVATE_JOINTYPE));
	desc->outer_keys = list_nth(list, JOIN_PRIVATE_OUTER_KEYS);
	desc->inner_keys = list_nth(list, JOIN_PRIVATE_INNER_KEYS);
	desc->nkeys = list_length(desc->outer_keys);
	desc->key_kinds = palloc(sizeof(GpuJoinKeyKind) * desc->nkeys);
	desc->outer_hashfns = palloc(sizeof(Oid) * desc->nkeys);
	desc->inner_hashfns = palloc(sizeof(Oid) * desc->nkeys);
	desc->collations = palloc(sizeof(Oid) * desc->nkeys);
	for (i = 0; i < desc->nkeys; i++)
	{
		desc->key_kinds[i] = (GpuJoinKeyKind) list_nth_int(kinds, i);
		desc->outer_hashfns[i] = list_nth_oid(outer_fns, i);
		desc->inner_hashfns[i] = list_nth_oid(inner_fns, i);
		desc->collations[i] = list_nth_oid(collations, i);
	}
	desc->hash_clauses = list_nth(list, JOIN_PRIVATE_HASH_CLAUSES);
	desc->recheck = intVal(list_nth(list, JOIN_PRIVATE_RECHECK)) != 0;
	desc->join_quals = list_nth(list, JOIN_PRIVATE_JOIN_QUALS);
	desc->nscan = list_length(sides);
	desc->scan_sides = palloc(sizeof(int) * Max(desc->nscan, 1));
	desc->scan_attnos = palloc(sizeof(AttrNumber) * Max(desc->nscan, 1));
	for (i = 0; i < desc->nscan; i++)
	{
		desc->scan_sides[i] = list_nth_int(sides, i);
		desc->scan_attnos[i] = (AttrNumber) list_nth_int(attnos, i);
	}
	desc->inner_rows = floatVal(list_nth(list, JOIN_PRIVATE_INNER_ROWS));
	desc->outer_rows = floatVal(list_nth(list, JOIN_PRIVATE_OUTER_ROWS));
	desc->inner_unique = intVal(list_nth(list, JOIN_PRIVATE_INNER_UNIQUE)) != 0;
	return desc;
}

/*
 * The child output column that holds var, or 0.  Vars match on varno and
 * varattno only: nullingrels (PostgreSQL 16+) describe where a value may
 * have been nulled, not a different value.
 */
static AttrNumber
child_column(Plan *child, Var *var)
{
	ListCell   *lc;

	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *cvar = (Var *) tle->expr;

		if (IsA(cvar, Var) && cvar->varno == var->varno &&
			cvar->varattno == var->varattno && cvar->varlevelsup == 0)
			return tle->resno;
	}
	return 0;
}

/* Children of the join, for the Var rewriting mutator. */
typedef struct JoinChildren
{
	Plan	   *outer;
	Plan	   *inner;
} JoinChildren;

/* Find var in one of the children; errors when neither has it. */
static void
locate_var(JoinChildren *children, Var *var, int *side, AttrNumber *attno)
{
	*attno = child_column(children->outer, var);
	*side = GPUJOIN_OUTER;
	if (*attno == 0)
	{
		*attno = child_column(children->inner, var);
		*side = GPUJOIN_INNER;
	}
	if (*attno == 0)
		elog(ERROR, "gpuagg: variable %d/%d not found in GpuHashJoin's inputs",
			 var->varno, var->varattno);
}

/* Rewrite Vars into OUTER_VAR / INNER_VAR references to the children. */
static Node *
to_child_refs_mutator(Node *node, JoinChildren *children)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		Var		   *var = (Var *) node;
		int			side;
		AttrNumber	attno;

		locate_var(children, var, &side, &attno);
		return (Node *) makeVar(side == GPUJOIN_OUTER ? OUTER_VAR : INNER_VAR, attno,
								var->vartype, var->vartypmod, var->varcollid, 0);
	}
	return expression_tree_mutator(node, to_child_refs_mutator, children);
}

/* A copy of an expression list over the children, ready for the executor. */
static List *
to_child_refs(List *exprs, JoinChildren *children)
{
	List	   *result = (List *) to_child_refs_mutator((Node *) exprs, children);

	fix_opfuncids((Node *) result);
	return result;
}

/*
 * The scan tuple: every Var of the output and of the filter, once, with the
 * child column it comes from.
 */
static List *
build_scan_tlist(List *tlist, List *other_quals, JoinChildren *children,
				 GpuJoinDesc *desc)
{
	List	   *vars;
	List	   *scan_tlist = NIL;
	ListCell   *lc;
	int			i = 0;

	vars = pull_var_clause((Node *) list_concat(list_copy(tlist), other_quals), 0);
	desc->scan_sides = palloc(sizeof(int) * Max(list_length(vars), 1));
	desc->scan_attnos = palloc(sizeof(AttrNumber) * Max(list_length(vars), 1));
	foreach(lc, vars)
	{
		Var		   *var = lfirst_node(Var, lc);

		if (tlist_member((Expr *) var, scan_tlist) != NULL)
			continue;
		locate_var(children, var, &desc->scan_sides[i], &desc->scan_attnos[i]);
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(var), i + 1, NULL, false));
		i++;
	}
	desc->nscan = i;
	return scan_tlist;
}

/* Hash functions and key kind of each equality. */
static void
describe_keys(GpuJoinDesc *desc, List *hash_clauses, List *outer_keys)
{
	ListCell   *lc;
	int			i = 0;

	desc->nkeys = list_length(hash_clauses);
	desc->key_kinds = palloc(sizeof(GpuJoinKeyKind) * desc->nkeys);
	desc->outer_hashfns = palloc0(sizeof(Oid) * desc->nkeys);
	desc->inner_hashfns = palloc0(sizeof(Oid) * desc->nkeys);
	desc->collations = palloc0(sizeof(Oid) * desc->nkeys);
	desc->recheck = false;
	foreach(lc, hash_clauses)
	{
		OpExpr	   *op = lfirst_node(OpExpr, lc);
		Node	   *outer_key = list_nth(outer_keys, i);
		bool		outer_is_left = (linitial(op->args) == (void *) outer_key);
		Oid			outer_type = exprType(outer_key);
		Oid			inner_type = exprType(outer_is_left ? lsecond(op->args) : linitial(op->args));
		RegProcedure lhash;
		RegProcedure rhash;

		if (!get_op_hash_functions(op->opno, &lhash, &rhash))
			elog(ERROR, "gpuagg: operator %u has no hash functions", op->opno);
		desc->outer_hashfns[i] = outer_is_left ? lhash : rhash;
		desc->inner_hashfns[i] = outer_is_left ? rhash : lhash;
		desc->collations[i] = op->inputcollid;
		if (GpuJoinKeyIsExact(op->opno, outer_type, inner_type))
			desc->key_kinds[i] = GPUJOIN_KEY_EXACT;
		else
		{
			desc->key_kinds[i] = GPUJOIN_KEY_HASH;
			desc->recheck = true;
		}
		i++;
	}
	/* several keys share one 64-bit device key: a hash of them */
	if (desc->nkeys > 1)
		desc->recheck = true;
}

/* Collect every Param of an expression tree (see GpuJoinPlanPath). */
static bool
collect_params_walker(Node *node, List **params)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
	{
		*params = lappend(*params, copyObject(node));
		return false;
	}
	return expression_tree_walker(node, collect_params_walker, params);
}

/*
 * PlanCustomPath of GpuHashJoin: outer child first, inner child second.
 * The filter (other_quals) and the target list reference the scan tuple;
 * keys and join quals reference the children directly.
 */
Plan *
GpuJoinPlanPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				List *tlist, List *clauses, List *custom_plans)
{
	List	   *path_private = best_path->custom_private;
	List	   *outer_keys = list_nth(path_private, PATH_PRIVATE_OUTER_KEYS);
	List	   *hash_clauses = list_nth(path_private, PATH_PRIVATE_HASH_CLAUSES);
	List	   *other_quals = list_nth(path_private, PATH_PRIVATE_OTHER_QUALS);
	JoinChildren children;
	GpuJoinDesc *desc = palloc0(sizeof(GpuJoinDesc));
	CustomScan *cscan = makeNode(CustomScan);

	children.outer = linitial(custom_plans);
	children.inner = lsecond(custom_plans);

	desc->jointype = (JoinType) intVal(list_nth(path_private, PATH_PRIVATE_JOINTYPE));
	describe_keys(desc, hash_clauses, outer_keys);
	desc->outer_keys = to_child_refs(outer_keys, &children);
	desc->inner_keys = to_child_refs(list_nth(path_private, PATH_PRIVATE_INNER_KEYS), &children);
	desc->hash_clauses = to_child_refs(hash_clauses, &children);
	desc->join_quals = to_child_refs(list_nth(path_private, PATH_PRIVATE_JOIN_QUALS), &children);
	desc->inner_unique = intVal(list_nth(path_private, PATH_PRIVATE_INNER_UNIQUE)) != 0;
	desc->outer_rows = ((Path *) linitial(best_path->custom_paths))->rows;
	desc->inner_rows = ((Path *) lsecond(best_path->custom_paths))->rows;

	cscan->custom_scan_tlist = build_scan_tlist(tlist, other_quals, &children, desc);
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = other_quals;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	/*
	 * The keys and join quals live in custom_private, which the planner does
	 * not look into; their Params (a correlated subquery's outer values) are
	 * listed in custom_exprs so that the node's changed-parameter sets include
	 * them and a rescan with new values is not answered from stale results.
	 */
	cscan->custom_exprs = NIL;
	collect_params_walker((Node *) list_make4(desc->outer_keys, desc->inner_keys,
											  desc->hash_clauses, desc->join_quals),
						  &cscan->custom_exprs);
	cscan->custom_private = GpuJoinDescToList(desc);
	cscan->methods = &gpujoin_scan_methods;
	return &cscan->scan.plan;
}

/* Register the scan methods so that copied or serialized plans find them. */
void
GpuJoinPlanInit(void)
{
	RegisterCustomScanMethods(&gpujoin_scan_methods);
}
