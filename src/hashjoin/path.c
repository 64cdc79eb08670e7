/*-------------------------------------------------------------------------
 *
 * hashjoin/path.c
 *	  Offers GpuHashJoin to the planner for an equi-join it can compute
 *	  (set_join_pathlist_hook).
 *
 * The restriction list is split the way PostgreSQL's hash_inner_and_outer()
 * and create_hashjoin_plan() split it: hashable equalities whose sides come
 * one from each input are the hash keys, the remaining conditions of the
 * join are join quals, and for outer joins the conditions pushed down from
 * above are a filter applied after null-extension.  The inputs are the
 * cheapest unparameterized paths of both relations; the inner one is held in
 * memory and built on the device.  The path is added with a cost and the
 * planner chooses, unless gpuagg.force says otherwise: then the first
 * GpuHashJoin path offered for a join, with the cost computed for it, is
 * the join's only path (join_force_path).
 *
 * Every unsupported case returns early with a reason logged at DEBUG1:
 *	SET client_min_messages = debug1;
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/regproc.h"
#include "utils/lsyscache.h"

#include "devices.h"
#include "guc.h"
#include "hashjoin/desc.h"
#include "hashjoin/hashjoin.h"
#include "hashjoin/private.h"

static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

static const CustomPathMethods gpujoin_path_methods = {
	.CustomName = GPUJOIN_NODE_NAME,
	.PlanCustomPath = GpuJoinPlanPath,
};

/*
 * GpuHashJoin paths kept aside for an aggjoin GpuHashAgg (aggjoin/path.c):
 * add_path drops a GpuHashJoin path that a native join path beats, yet the
 * aggregation above may still take the join over.  Each entry lives in the
 * planner's memory, which unlinks it when reset or deleted.
 */
typedef struct KeptJoinPath
{
	RelOptInfo *rel;
	CustomPath *path;
	bool		offered;		/* offered for the join itself (its build is not
								 * too large) */
	MemoryContextCallback forget;
	struct KeptJoinPath *prev;
	struct KeptJoinPath *next;
} KeptJoinPath;

static KeptJoinPath *kept_paths = NULL;

static void keep_join_path(CustomPath *path, bool offered);

/* The join's conditions, split like create_hashjoin_plan() splits them. */
typedef struct JoinClauses
{
	List	   *outer_keys;		/* per hash clause: the outer side's argument */
	List	   *inner_keys;		/* ... the inner side's argument */
	List	   *hash_clauses;	/* the equalities themselves (OpExpr) */
	List	   *join_quals;		/* other conditions of the join */
	List	   *other_quals;	/* outer joins: conditions above the join */
} JoinClauses;

/* Log why GpuHashJoin is not offered; always returns false. */
static bool
join_reject(const char *why)
{
	elog(DEBUG1, "gpuagg: GpuHashJoin not used: %s", why);
	return false;
}

/*
 * Whether the clause compares an expression of the outer relation with one
 * of the inner relation; sets *outer_is_left.  Like clause_sides_match_join()
 * in PostgreSQL's joinpath.c, without changing the RestrictInfo.
 */
static bool
join_clause_sides(RestrictInfo *rinfo, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, bool *outer_is_left)
{
	if (bms_is_subset(rinfo->left_relids, outerrel->relids) &&
		bms_is_subset(rinfo->right_relids, innerrel->relids))
	{
		*outer_is_left = true;
		return true;
	}
	if (bms_is_subset(rinfo->left_relids, innerrel->relids) &&
		bms_is_subset(rinfo->right_relids, outerrel->relids))
	{
		*outer_is_left = false;
		return true;
	}
	return false;
}

/* Split the restriction list; false (with *why) when the join is not for us. */
static bool
join_split_clauses(RelOptInfo *joinrel, RelOptInfo *outerrel,
				   RelOptInfo *innerrel, JoinType jointype, List *restrictlist,
				   JoinClauses *clauses, const char **why)
{
	bool		is_outer_join = IS_OUTER_JOIN(jointype);
	ListCell   *lc;

	memset(clauses, 0, sizeof(*clauses));
	foreach(lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		bool		outer_is_left;
		OpExpr	   *op;

		if (rinfo->pseudoconstant)
		{
			*why = "a join condition is constant (it reads no column of either side)";
			return false;
		}
		if (is_outer_join && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
		{
			clauses->other_quals = lappend(clauses->other_quals, rinfo->clause);
			continue;
		}
		if (!rinfo->can_join || !OidIsValid(rinfo->hashjoinoperator) ||
			!IsA(rinfo->clause, OpExpr) ||
			!join_clause_sides(rinfo, outerrel, innerrel, &outer_is_left))
		{
			clauses->join_quals = lappend(clauses->join_quals, rinfo->clause);
			continue;
		}
		op = (OpExpr *) rinfo->clause;
		if (list_length(op->args) != 2)
		{
			clauses->join_quals = lappend(clauses->join_quals, rinfo->clause);
			continue;
		}
		clauses->hash_clauses = lappend(clauses->hash_clauses, op);
		clauses->outer_keys = lappend(clauses->outer_keys,
									  outer_is_left ? linitial(op->args) : lsecond(op->args));
		clauses->inner_keys = lappend(clauses->inner_keys,
									  outer_is_left ? lsecond(op->args) : linitial(op->args));
	}
	if (clauses->hash_clauses == NIL)
	{
		*why = "no join condition is a hashable equality (=) between the two sides";
		return false;
	}
	if (list_length(clauses->hash_clauses) > GA_MAX_KEYS)
	{
		*why = psprintf("%d join keys, more than the %d a device request holds",
						list_length(clauses->hash_clauses), GA_MAX_KEYS);
		return false;
	}
	return true;
}

/* Whether an expression holds something the node cannot evaluate. */
static bool
join_expr_unsupported(Node *node, const char **why)
{
	List	   *vars;

	if (node == NULL)
		return false;
	if (contain_subplans(node))
	{
		*why = "a join condition or the join's output holds a subquery";
		return true;
	}
	vars = pull_var_clause(node, PVC_INCLUDE_PLACEHOLDERS |
						   PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS);
	if (list_length(vars) > 0)
	{
		ListCell   *lc;

		foreach(lc, vars)
		{
			if (!IsA(lfirst(lc), Var))
			{
				*why = "a join condition or the join's output holds a placeholder (a subquery's output under an outer join)";
				return true;
			}
		}
	}
	return false;
}

/* Pages that rows of width bytes take on disk, as costsize.c counts them. */
static double
join_pages(double rows, int width)
{
	return ceil(rows * (MAXALIGN(width) + MAXALIGN(SizeofHeapTupleHeader)) / BLCKSZ);
}

/*
 * Cost: reading both inputs; copying and keying every inner row and
 * building on the device; keying and copying every outer row and probing;
 * checking the candidates and emitting the joined rows.  The device itself
 * costs gpuagg.gpu_startup_cost plus gpuagg.gpu_tuple_cost per row; the
 * CPU device hashes, builds and probes in one process (four times
 * gpuagg.cpu_device_tuple_cost per row it joins, GPUAGG_CPU_DEVICE_JOIN_ROW).
 */
static void
join_cost_path(CustomPath *cpath, Path *outer_path, Path *inner_path,
			   GaDeviceKind device, const JoinClauses *clauses, double rows)
{
	QualCost	join_cost;
	QualCost	other_cost;
	double		nkeys = list_length(clauses->hash_clauses);
	double		outer_rows = outer_path->rows;
	double		inner_rows = inner_path->rows;
	Cost		startup;
	Cost		run;

	cost_qual_eval(&join_cost, clauses->join_quals, NULL);
	cost_qual_eval(&other_cost, clauses->other_quals, NULL);

	startup = inner_path->total_cost +
		inner_rows * (cpu_tuple_cost + cpu_operator_cost * nkeys);
	run = outer_path->total_cost +
		outer_rows * (0.5 * cpu_tuple_cost + cpu_operator_cost * nkeys);
	if (device == GA_DEVICE_GPU)
	{
		startup += gpuagg_gpu_startup_cost + inner_rows * 4 * gpuagg_gpu_tuple_cost;
		run += outer_rows * gpuagg_gpu_tuple_cost;
	}
	else
	{
		startup += inner_rows * (cpu_operator_cost * 4 +
								 gpuagg_cpu_device_tuple_cost * GPUAGG_CPU_DEVICE_JOIN_ROW);
		run += outer_rows * (cpu_operator_cost +
							 gpuagg_cpu_device_tuple_cost * GPUAGG_CPU_DEVICE_JOIN_ROW);
	}
	/* candidates: about one per output row */
	run += rows * (join_cost.per_tuple + other_cost.per_tuple + cpu_tuple_cost);
	run += join_cost.startup + other_cost.startup;

	/*
	 * A build past its memory partitions both sides on disk: each page
	 * written once and read once, as cost_hashjoin charges its batches.
	 */
	if (inner_rows * (inner_path->pathtarget->width + 48.0) >
		GpuAggHashJoinBuildLimit())
	{
		double		inner_pages = join_pages(inner_rows, inner_path->pathtarget->width);
		double		outer_pages = join_pages(outer_rows, outer_path->pathtarget->width);

		startup += seq_page_cost * inner_pages * 2;
		run += seq_page_cost * outer_pages * 2;
	}

	cpath->path.startup_cost = startup;
	cpath->path.total_cost = startup + run;
}

/* Whether path is a GpuHashJoin path. */
static bool
is_gpujoin_path(Path *path)
{
	return IsA(path, CustomPath) &&
		((CustomPath *) path)->methods == &gpujoin_path_methods;
}

/*
 * gpuagg.force: once a GpuHashJoin path has been offered for joinrel, make
 * the first one offered its only path, partial paths dropped too (a Gather
 * over them would compete), as enable_hashjoin = off would make the others
 * lose.  The planner offers a join's paths in several rounds (one per order
 * of its inputs), each ending in this hook, so the native paths of a later
 * round go too, even one that add_path let push the GpuHashJoin out.  The
 * path keeps the cost computed for it, which EXPLAIN shows; a fresh copy
 * goes in each time, since add_path frees the paths it drops.
 */
static void
join_force_path(RelOptInfo *joinrel)
{
	KeptJoinPath *first = NULL;
	KeptJoinPath *kept;
	CustomPath *path;

	for (kept = kept_paths; kept != NULL; kept = kept->next)
		if (kept->rel == joinrel && kept->offered)
			first = kept;		/* the list runs newest first */
	if (first == NULL)
		return;
	path = palloc(sizeof(CustomPath));
	memcpy(path, first->path, sizeof(CustomPath));
	joinrel->pathlist = NIL;
	joinrel->partial_pathlist = NIL;
	add_path(joinrel, &path->path);
}

/* Try to add a GpuHashJoin path to joinrel; logs why not when it can't. */
static bool
join_try_add_path(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer_path = outerrel->cheapest_total_path;
	Path	   *inner_path = innerrel->cheapest_total_path;
	JoinClauses clauses;
	CustomPath *cpath;
	GaDeviceKind device;
	const char *why = NULL;
	bool		usable;
	GpuJoinPathInfo info;
	ListCell   *lc;

	switch (jointype)
	{
		case JOIN_INNER:
		case JOIN_LEFT:
		case JOIN_RIGHT:
		case JOIN_FULL:
		case JOIN_SEMI:
		case JOIN_ANTI:
			break;
		default:
			return join_reject("the planner makes one side unique before this join");
	}
	device = GpuAggPlannedDeviceKind(&usable);
	if (!usable && gpuagg_device == GPUAGG_DEVICE_AUTO)
		return join_reject(psprintf("no usable GPU: %s; set gpuagg.device = cpu to use the CPU device",
									GpuAggNoGpuReason()));
	if (root->rowMarks != NIL)
		return join_reject("the query locks rows (FOR UPDATE or FOR SHARE)");
	if (root->parse->resultRelation > 0 &&
		bms_is_member(root->parse->resultRelation, joinrel->relids))
		return join_reject("the join contains the target of UPDATE, DELETE or MERGE");
	if (!bms_is_empty(joinrel->lateral_relids))
		return join_reject("a side refers to the other (LATERAL)");
	if (outer_path == NULL || inner_path == NULL ||
		outer_path->param_info != NULL || inner_path->param_info != NULL)
		return join_reject("a side has no path without parameters");

	if (!join_split_clauses(joinrel, outerrel, innerrel, jointype,
							extra->restrictlist, &clauses, &why))
		return join_reject(why);
	if (join_expr_unsupported((Node *) clauses.hash_clauses, &why) ||
		join_expr_unsupported((Node *) clauses.join_quals, &why) ||
		join_expr_unsupported((Node *) clauses.other_quals, &why) ||
		join_expr_unsupported((Node *) joinrel->reltarget->exprs, &why))
		return join_reject(why);
	foreach(lc, clauses.hash_clauses)
	{
		OpExpr	   *op = lfirst_node(OpExpr, lc);
		RegProcedure lhash;
		RegProcedure rhash;

		if (!get_op_hash_functions(op->opno, &lhash, &rhash))
			return join_reject(psprintf("the join key's operator %s has no hash functions",
										format_operator(op->opno)));
	}

	if (inner_path->rows > (double) GA_JOIN_MAX_BUILD_ROWS / 2)
		return join_reject(psprintf("the build side's estimated %.0f rows exceed the %.0f a device builds",
									inner_path->rows, (double) GA_JOIN_MAX_BUILD_ROWS / 2));
	info.jointype = jointype;
	info.outer_keys = clauses.outer_keys;
	info.inner_keys = clauses.inner_keys;
	info.hash_clauses = clauses.hash_clauses;
	info.join_quals = clauses.join_quals;
	info.other_quals = clauses.other_quals;
	info.inner_unique = extra->inner_unique;

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = joinrel->rows;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = list_make2(outer_path, inner_path);
	cpath->custom_private = GpuJoinPathToList(&info);
	cpath->methods = &gpujoin_path_methods;
	join_cost_path(cpath, outer_path, inner_path, device, &clauses, joinrel->rows);
	keep_join_path(cpath, true);
	/* under force, join_force_path puts the first one offered in */
	if (!gpuagg_force)
		add_path(joinrel, &cpath->path);
	return true;
}

/*
 * A GpuHashJoin path of rel (also under the projection the planner puts on
 * the scan/join relation's paths) whose output holds every expression of
 * exprs as a plain column, so that a GpuHashAgg above can take the joined
 * rows straight from its scan tuple (hashagg/path.c); the cheapest one, or
 * NULL.
 */
Path *
GpuJoinAggInputPath(RelOptInfo *rel, List *exprs)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, exprs)
	{
		if (!IsA(lfirst(lc), Var))
			return NULL;
	}
	foreach(lc, rel->pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);
		ListCell   *le;
		bool		all_there = true;

		/* the planner projects the join's output to the grouping's input */
		if (IsA(path, ProjectionPath))
			path = ((ProjectionPath *) path)->subpath;
		if (!is_gpujoin_path(path) || path->param_info != NULL)
			continue;
		foreach(le, exprs)
		{
			if (!list_member(path->pathtarget->exprs, lfirst(le)))
			{
				all_there = false;
				break;
			}
		}
		if (all_there && (best == NULL || path->total_cost < best->total_cost))
			best = path;
	}
	return best;
}

/* Unlink a kept path whose planner memory goes away (reset callback). */
static void
kept_path_forget(void *arg)
{
	KeptJoinPath *kept = (KeptJoinPath *) arg;

	if (kept->prev != NULL)
		kept->prev->next = kept->next;
	else
		kept_paths = kept->next;
	if (kept->next != NULL)
		kept->next->prev = kept->prev;
}

/*
 * Keep a copy of path aside for an aggjoin above (see KeptJoinPath) and,
 * when offered for the join itself, for join_force_path; a copy, since
 * add_path frees the paths it rejects (not what they point to).
 */
static void
keep_join_path(CustomPath *path, bool offered)
{
	MemoryContext cxt = GetMemoryChunkContext(path);
	KeptJoinPath *kept = MemoryContextAllocZero(cxt, sizeof(KeptJoinPath));

	kept->rel = path->path.parent;
	kept->offered = offered;
	kept->path = MemoryContextAlloc(cxt, sizeof(CustomPath));
	memcpy(kept->path, path, sizeof(CustomPath));
	kept->next = kept_paths;
	if (kept_paths != NULL)
		kept_paths->prev = kept;
	kept_paths = kept;
	kept->forget.func = kept_path_forget;
	kept->forget.arg = kept;
	MemoryContextRegisterResetCallback(cxt, &kept->forget);
}

/*
 * The GpuHashJoin paths offered for rel, whether or not add_path kept them:
 * what an aggjoin GpuHashAgg (aggjoin/path.c) takes its join from.
 */
List *
GpuJoinDevicePaths(RelOptInfo *rel)
{
	List	   *paths = NIL;
	KeptJoinPath *kept;

	for (kept = kept_paths; kept != NULL; kept = kept->next)
		if (kept->rel == rel)
			paths = lappend(paths, kept->path);
	return paths;
}

/* set_join_pathlist_hook: offer GpuHashJoin next to the native join paths. */
static void
gpujoin_set_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel,
						  RelOptInfo *outerrel, RelOptInfo *innerrel,
						  JoinType jointype, JoinPathExtraData *extra)
{
	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!gpuagg_enabled || !gpuagg_enable_hashjoin)
		return;
	join_try_add_path(root, joinrel, outerrel, innerrel, jointype, extra);
	if (gpuagg_force)
		join_force_path(joinrel);
}

/* Install the planner hook. */
void
GpuJoinPathInit(void)
{
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = gpujoin_set_join_pathlist;
}
