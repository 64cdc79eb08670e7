/*-------------------------------------------------------------------------
 *
 * hashjoin/plan.c
 *	  Turns a GpuHashJoin path into a CustomScan, whose custom_private is
 *	  the executor's description of it (hashjoin/private.c).
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
#include "hashjoin/desc.h"
#include "hashjoin/hashjoin.h"
#include "hashjoin/private.h"

static const CustomScanMethods gpujoin_scan_methods = {
	.CustomName = GPUJOIN_NODE_NAME,
	.CreateCustomScanState = GpuJoinCreateScanState,
};

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
	GpuJoinPathInfo *path = GpuJoinPathFromList(best_path->custom_private);
	JoinChildren children;
	GpuJoinDesc *desc = palloc0(sizeof(GpuJoinDesc));
	CustomScan *cscan = makeNode(CustomScan);

	children.outer = linitial(custom_plans);
	children.inner = lsecond(custom_plans);

	desc->jointype = path->jointype;
	describe_keys(desc, path->hash_clauses, path->outer_keys);
	desc->outer_keys = to_child_refs(path->outer_keys, &children);
	desc->inner_keys = to_child_refs(path->inner_keys, &children);
	desc->hash_clauses = to_child_refs(path->hash_clauses, &children);
	desc->join_quals = to_child_refs(path->join_quals, &children);
	desc->inner_unique = path->inner_unique;
	desc->outer_rows = ((Path *) linitial(best_path->custom_paths))->rows;
	desc->inner_rows = ((Path *) lsecond(best_path->custom_paths))->rows;

	cscan->custom_scan_tlist = build_scan_tlist(tlist, path->other_quals, &children, desc);
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = path->other_quals;
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
