/*-------------------------------------------------------------------------
 *
 * hashagg/path.c
 *	  Offers GpuHashAgg to the planner for a grouping it can compute
 *	  (create_upper_paths_hook, stage UPPERREL_GROUP_AGG).
 *
 * The path has one child: the input relation's cheapest path with a
 * projection that computes, as plain columns, every group key, aggregate
 * argument and FILTER condition.  PostgreSQL evaluates those expressions
 * (so overflow errors, parameters and detoasting are its own); the device
 * only groups and reduces columns.  The path never replaces native paths:
 * it is added with an honest cost and the planner chooses, unless
 * gpuagg.force says otherwise: then one GpuHashAgg path, with the cost
 * computed for it, is the grouping's only path (agg_offer_path).
 *
 * GROUPING SETS, ROLLUP and CUBE: the planner has expanded them into a list
 * of sets of group keys (parse->groupingSets); the node aggregates every
 * set in the same pass over the input, and GROUPING(...) becomes a column
 * of its scan tuple that it fills per set (hashagg/exec.c).
 *
 * Every unsupported case returns early with a reason logged at DEBUG1, so
 * that "why isn't my query on the GPU?" has an answer:
 *	SET client_min_messages = debug1;
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_constraint.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"
#include "parser/parse_agg.h"
#include "parser/parse_clause.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "aggjoin/aggjoin.h"
#include "batch/key_dict.h"
#include "compat.h"
#include "devices.h"
#include "finalize/numeric.h"
#include "guc.h"
#include "hashagg/catalog.h"
#include "hashagg/derived.h"
#include "hashagg/desc.h"
#include "hashagg/hashagg.h"
#include "hashagg/layout.h"
#include "hashagg/private.h"
#include "hashjoin/hashjoin.h"

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

/*
 * Which GpuHashAgg path gpuagg.force keeps, best first: a parallel variant
 * (the aggjoin one, offered first, before the plain one), the serial aggjoin
 * variant, the join-input variant, the serial variant.
 */
typedef enum AggForceRank
{
	AGG_FORCE_PARALLEL,
	AGG_FORCE_AGGJOIN_SERIAL,
	AGG_FORCE_JOIN_INPUT,
	AGG_FORCE_SERIAL,
} AggForceRank;

/* Under gpuagg.force: the GpuHashAgg path offered so far that wins, and its rank. */
typedef struct ForcedAggPath
{
	CustomPath *path;
	AggForceRank rank;
} ForcedAggPath;

static const CustomPathMethods gpuagg_path_methods = {
	.CustomName = GPUAGG_NODE_NAME,
	.PlanCustomPath = GpuAggPlanPath,
};

/* What a walk over the grouping's output finds. */
typedef struct TargetCheck
{
	PlannerInfo *root;
	List	   *keys;			/* group key expressions */
	int			ngrouped;		/* how many of them the GROUP BY names */
	List	   *aggrefs;		/* distinct supported Aggrefs */
	List	   *groupings;		/* distinct GROUPING(...) expressions */
	List	   *variance_args;	/* (args, filter) of variance aggregates counted */
	int			device_ops;		/* device operations they need, at most */
	Aggref	   *distinct;		/* the first DISTINCT aggregate, or NULL */
	const char *why;			/* set when something is unsupported */
} TargetCheck;

/* Log why GpuHashAgg is not offered; always returns false. */
static bool
agg_reject(const char *why)
{
	elog(DEBUG1, "gpuagg: GpuHashAgg not used: %s", why);
	return false;
}

/* Walk an expression for its first set-returning function (*func_id). */
static bool
agg_set_returning_walker(Node *node, Oid *func_id)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcretset)
	{
		*func_id = ((FuncExpr *) node)->funcid;
		return true;
	}
	if (IsA(node, OpExpr) && ((OpExpr *) node)->opretset)
	{
		*func_id = ((OpExpr *) node)->opfuncid;
		return true;
	}
	return expression_tree_walker(node, agg_set_returning_walker, func_id);
}

/*
 * A group key for a message: a plain column by its name (column "x"), any
 * other expression by its place in the GROUP BY (group key 2).
 */
static char *
agg_key_name(PlannerInfo *root, Node *expr, int position)
{
	Var		   *var = IsA(expr, Var) ? (Var *) expr : NULL;

	if (var != NULL && var->varlevelsup == 0 && var->varattno > 0 &&
		var->varno >= 1 && var->varno <= list_length(root->parse->rtable))
		return psprintf("group key column \"%s\"",
						get_rte_attribute_name(rt_fetch(var->varno, root->parse->rtable),
											   var->varattno));
	return psprintf("group key %d", position);
}

/*
 * Whether var (of the query level being grouped, not a key) is functionally
 * dependent on the group keys: its table's primary key is among them
 * (PostgreSQL's own check_functional_grouping).
 */
static bool
agg_var_functionally_grouped(TargetCheck *check, Var *var)
{
	RangeTblEntry *rte;
	List	   *grouped = NIL;
	List	   *deps = NIL;
	ListCell   *lc;

	if (var->varlevelsup != 0 || var->varno < 1 ||
		var->varno >= check->root->simple_rel_array_size)
		return false;
	rte = check->root->simple_rte_array[var->varno];
	if (rte == NULL || rte->rtekind != RTE_RELATION)
		return false;
	foreach(lc, check->keys)
	{
		if (IsA(lfirst(lc), Var))
			grouped = lappend(grouped, lfirst(lc));
	}
	return check_functional_grouping(rte->relid, var->varno, 0, grouped, &deps);
}

/*
 * Check one expression of the output target or HAVING: everything outside
 * aggregates must be a group key, and every aggregate must be supported.
 */
static bool
agg_check_walker(Node *node, TargetCheck *check)
{
	ListCell   *lc;

	if (node == NULL)
		return false;
	foreach(lc, check->keys)
	{
		if (equal(node, lfirst(lc)))
			return false;
	}
	if (IsA(node, Aggref))
	{
		GpuAggKind	kind;
		Oid			input_type;
		int			numeric_scale;
		int			numeric_precision;
		bool		distinct;

		if (!GpuAggClassifyAggref((Aggref *) node, &kind, &input_type, &numeric_scale,
								  &numeric_precision, &distinct, &check->why))
			return true;
		if (distinct && check->distinct == NULL)
			check->distinct = (Aggref *) node;
		if (!list_member(check->aggrefs, node))
		{
			Aggref	   *aggref = (Aggref *) node;
			List	   *variance_arg = list_make2(aggref->args, aggref->aggfilter);
			bool		shared = false;

			check->aggrefs = lappend(check->aggrefs, node);
			/* var_samp(x), var_pop(x), stddev(x) ... share all their operations */
			if (GPUAGG_KIND_IS_VARIANCE(kind))
			{
				shared = list_member(check->variance_args, variance_arg);
				if (!shared)
					check->variance_args = lappend(check->variance_args, variance_arg);
			}
			if (!distinct && !shared)
				check->device_ops += GpuAggDeviceOpsNeeded(kind, input_type,
														   numeric_precision);
		}
		return false;
	}
	if (IsA(node, Var))
	{
		/*
		 * Outside aggregates, PostgreSQL accepts only group keys and columns
		 * functionally dependent on them (GROUP BY a primary key).  Such a
		 * column is constant within a group, so grouping by it too changes
		 * nothing: it becomes one more key.  Anything else — a column the
		 * planner pulled out of a grouped expression (17 does, for a window
		 * over GROUP BY substr(x, 1, 2) shown twice), whose value differs
		 * within a group — keeps the native plan.
		 */
		Var		   *var = (Var *) node;
		const char *column = var->varno >= 1 &&
			var->varno <= list_length(check->root->parse->rtable) && var->varattno > 0 ?
			get_rte_attribute_name(rt_fetch(var->varno, check->root->parse->rtable),
								   var->varattno) : "?";

		if (!agg_var_functionally_grouped(check, var))
		{
			check->why = psprintf("column \"%s\" is used outside aggregates without being a "
								  "group key or determined by one (its table's primary key)",
								  column);
			return true;
		}
		if (!GpuAggKeyTypeSupported(exprType(node), exprCollation(node),
									psprintf("column \"%s\", grouped through its table's primary key,",
											 column),
									&check->why))
			return true;
		check->keys = lappend(check->keys, node);
		return false;
	}
	if (IsA(node, GroupingFunc))
	{
		/* a column of the scan tuple, filled per grouping set */
		if (((GroupingFunc *) node)->agglevelsup != 0)
			return (check->why = "GROUPING() of an outer query", true);
		if (!list_member(check->groupings, node))
			check->groupings = lappend(check->groupings, node);
		return false;
	}
	if (IsA(node, WindowFunc))
	{
		check->why = psprintf("the window function %s() is computed from the grouping's output",
							  quote_identifier(get_func_name(((WindowFunc *) node)->winfnoid)));
		return true;
	}
	if (IsA(node, PlaceHolderVar))
	{
		check->why = "the output holds a placeholder (a subquery's output under an outer join)";
		return true;
	}
	return expression_tree_walker(node, agg_check_walker, check);
}

/*
 * Collect the group key expressions; false if any is unsupported.  With
 * grouping sets, each key must be one GROUP BY column: the node's output
 * finds a key by its expression, so two columns of the same expression
 * could not be told apart where a set holds one and not the other.
 */
static bool
agg_collect_keys(PlannerInfo *root, GroupPathExtraData *extra, TargetCheck *check)
{
	ListCell   *lc;
	int			position = 0;

	foreach(lc, root->parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Node	   *expr = get_sortgroupclause_expr(sgc, extra->targetList);
		char	   *volatile_function;

		position++;
		if (!GpuAggKeyTypeSupported(exprType(expr), exprCollation(expr),
									agg_key_name(root, expr, position), &check->why))
			return false;
		if ((volatile_function = GpuAggVolatileFunction(expr)) != NULL)
		{
			check->why = psprintf("%s calls the volatile function %s",
								  agg_key_name(root, expr, position), volatile_function);
			return false;
		}
		if (!list_member(check->keys, expr))
			check->keys = lappend(check->keys, expr);
		else if (root->parse->groupingSets != NIL)
		{
			check->why = psprintf("%s repeats an earlier key in the grouping sets",
								  agg_key_name(root, expr, position));
			return false;
		}
	}
	check->ngrouped = list_length(check->keys);
	return true;
}

/*
 * The key expressions as the child computes them: without the marks of
 * grouping-set nulling that 18 puts on them (compat.h).
 */
static List *
agg_child_keys(List *keys, int relid)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, keys)
		result = lappend(result, GpuAggWithoutGroupingNulls(lfirst(lc), relid));
	return result;
}

/* The index in check->keys of the GROUP BY column with sortgroupref ref. */
static int
agg_key_of_ref(PlannerInfo *root, GroupPathExtraData *extra, TargetCheck *check,
			   Index ref)
{
	SortGroupClause *sgc = get_sortgroupref_clause(ref, root->parse->groupClause);
	Node	   *expr = get_sortgroupclause_expr(sgc, extra->targetList);
	int			i = 0;
	ListCell   *lc;

	foreach(lc, check->keys)
	{
		if (equal(lfirst(lc), expr))
			return i;
		i++;
	}
	elog(ERROR, "gpuagg: grouping column %u is not a group key", ref);
	return -1;					/* keep compiler quiet */
}

/*
 * The grouping sets as masks of key indexes (info's sets), largest sets
 * first (so the node emits and EXPLAIN lists them as PostgreSQL's rollups
 * do), each with the planner's estimate of its groups; info->est_groups is
 * their sum.  Without grouping sets, one set of every key.  Keys that only
 * the output names (columns functionally dependent on the GROUP BY, which
 * PostgreSQL allows only when they depend on columns common to every set)
 * are in every set.  Returns false, with check->why set, when there are too
 * many sets or a set leaves out a constant key: setrefs.c never replaces a
 * Const of the output by a reference to the scan tuple, so the node could
 * not show it as NULL (18 wraps such keys in a PlaceHolderVar, which it
 * does replace).
 */
static bool
agg_grouping_sets(PlannerInfo *root, GroupPathExtraData *extra, TargetCheck *check,
				  double input_rows, int relid, GpuAggPathInfo *info)
{
	List	   *gsets = root->parse->groupingSets;
	uint32		dependent = 0;
	int			maxlen = 0;
	int			len;
	int			i;
	ListCell   *lc;

	for (i = check->ngrouped; i < list_length(check->keys); i++)
		dependent |= (uint32) 1 << i;
	if (gsets == NIL)
	{
		double		estimate = 1;

		if (check->keys != NIL)
			estimate = estimate_num_groups(root, agg_child_keys(check->keys, relid),
										   input_rows, NULL, NULL);
		info->est_groups = estimate;
		info->nsets = 1;
		info->set_masks[0] = ((uint32) 1 << list_length(check->keys)) - 1;
		info->set_groups[0] = estimate;
		return true;
	}

	/* expanded by the planner (preprocess_grouping_sets) before this hook */
	foreach(lc, gsets)
	{
		if (lfirst(lc) != NIL && IsA(lfirst(lc), GroupingSet))
		{
			gsets = expand_grouping_sets(gsets, root->parse->groupDistinct, -1);
			break;
		}
	}
	if (list_length(gsets) > GPUAGG_MAX_GROUPING_SETS)
	{
		check->why = psprintf("%d grouping sets, more than the %d a device aggregates in one pass",
							  list_length(gsets), GPUAGG_MAX_GROUPING_SETS);
		return false;
	}
	foreach(lc, gsets)
		maxlen = Max(maxlen, list_length((List *) lfirst(lc)));

	info->est_groups = 0;
	info->nsets = 0;
	for (len = maxlen; len >= 0; len--)
	{
		foreach(lc, gsets)
		{
			List	   *set = (List *) lfirst(lc);
			uint32		mask = dependent;
			List	   *exprs = NIL;
			double		estimate = 1;
			ListCell   *lc2;

			if (list_length(set) != len)
				continue;
			foreach(lc2, set)
				mask |= (uint32) 1 << agg_key_of_ref(root, extra, check, lfirst_int(lc2));
			for (i = 0; i < list_length(check->keys); i++)
			{
				Node	   *key = list_nth(check->keys, i);

				if (mask & ((uint32) 1 << i))
					exprs = lappend(exprs, key);
				else if (IsA(key, Const))
				{
					check->why = psprintf("a grouping set leaves out group key %d, a constant", i + 1);
					return false;
				}
			}
			if (exprs != NIL)
				estimate = estimate_num_groups(root, agg_child_keys(exprs, relid),
											   input_rows, NULL, NULL);
			info->set_masks[info->nsets] = mask;
			info->set_groups[info->nsets] = estimate;
			info->nsets++;
			info->est_groups += estimate;
		}
	}
	return true;
}

/* For each GROUPING(...) of check->groupings, the keys of its arguments. */
static List *
agg_grouping_keys(PlannerInfo *root, GroupPathExtraData *extra, TargetCheck *check)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, check->groupings)
	{
		GroupingFunc *gf = lfirst_node(GroupingFunc, lc);
		List	   *keys = NIL;
		ListCell   *lc2;

		foreach(lc2, gf->refs)
			keys = lappend_int(keys, agg_key_of_ref(root, extra, check, lfirst_int(lc2)));
		result = lappend(result, keys);
	}
	return result;
}

/*
 * The child's output: keys, then each aggregate's argument and FILTER (or
 * the operands of an argument the device computes).  Only the
 * expressions; GpuAggDescFromPath finds their positions again.
 */
static PathTarget *
agg_child_target(PlannerInfo *root, TargetCheck *check, int relid)
{
	PathTarget *target = create_empty_pathtarget();
	ListCell   *lc;

	foreach(lc, agg_child_keys(check->keys, relid))
		add_new_column_to_pathtarget(target, (Expr *) lfirst(lc));
	foreach(lc, check->aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		List	   *operands;
		ListCell   *lc2;
		int			argno;

		/* an argument the device computes: its operands (hashagg/derived.c) */
		if (GpuAggDerivedArgument(aggref, &operands))
		{
			foreach(lc2, operands)
				add_new_column_to_pathtarget(target, (Expr *) lfirst(lc2));
			continue;
		}
		for (argno = 0; argno < list_length(aggref->args); argno++)
			add_new_column_to_pathtarget(target, GpuAggChildArgument(aggref, argno));
		if (aggref->args == NIL && aggref->aggfilter != NULL)
			add_new_column_to_pathtarget(target, aggref->aggfilter);	/* count(*) */
	}
	/* a plain count(*) needs no column, but a plan row must have a shape */
	if (target->exprs == NIL)
		add_new_column_to_pathtarget(target, (Expr *) makeBoolConst(true, false));
	return set_pathtarget_cost_width(root, target);
}

/*
 * What one input row puts into batches, in 8-byte values: the layout's
 * columns by their widths (a numeric argument computed on the host is up
 * to four limbs and four flags; a column the device computes travels not
 * at all; a text key or DISTINCT argument that travels as bytes, its
 * offset and its average width), so that packing and copying are charged
 * by the bytes rather than by the child's columns.
 */
static double
agg_batch_values(const GpuAggPathInfo *info)
{
	GpuAggDesc *desc = GpuAggDescFromPath(info, NULL);
	GpuAggLayout *layout = GpuAggLayoutBuild(desc);
	double		bytes = 0;
	int			c;

	for (c = 0; c < layout->ncolumns; c++)
	{
		const GpuAggColumnSource *src = &layout->sources[c];

		if (src->encoding == GPUAGG_ENC_DERIVED)
			continue;
		bytes += ga_type_width(layout->column_types[c]) + 0.125;
		if (src->encoding == GPUAGG_ENC_STRING_KEY && src->attno > 0)
		{
			Node	   *expr = list_nth(info->child_exprs, src->attno - 1);

			bytes += get_typavgwidth(exprType(expr), exprTypmod(expr));
		}
	}
	return Max(bytes / 8.0, 1.0);
}

/*
 * What the leader's work on a dictionary group key (text, numeric and the
 * other types of batch/key_dict.c) costs, in batch values: interning a
 * value the node's dictionary does not hold yet (hashing, copying,
 * growing), and mapping an entry of a batch message's own dictionary to
 * the node's (each message carries the distinct values of its rows).
 * Interning is the dear one: a grouping by millions of distinct long keys
 * (TPC-H Q10's customer names, addresses and comments) spends more time
 * there than PostgreSQL's parallel plan takes for the whole query, while
 * mapping the entries of short keys ('id001') costs little.  The weights
 * below are fitted to the measurements in docs/benchmarks.md.
 */
#define GPU_DICT_NEW_VALUE_BATCH_VALUES 200.0
#define GPU_DICT_MESSAGE_ENTRY_BATCH_VALUES 10.0

/*
 * The leader's cost of the dictionary group keys among keys (expressions
 * over an input of `rows` rows): per key, its distinct values interned
 * once, and mapped once in every batch message that holds them.  With
 * as_bytes, text keys that travel as their bytes (GpuAggKeyAsBytes; an
 * aggjoin's where GpuAggJoinGroupKeyAsBytes says so) cost nothing here:
 * their bytes are counted with the batches' values.
 */
static Cost
agg_dictionary_keys_cost(PlannerInfo *root, List *keys, double rows, bool as_bytes)
{
	double		messages = Max(1.0, ceil(Max(rows, 1.0) / (double) GpuAggMessageCapacity()));
	Cost		cost = 0;
	ListCell   *lc;

	foreach(lc, keys)
	{
		Node	   *key = lfirst(lc);
		double		distinct;

		if (GpuAggKeyEncoding(getBaseType(exprType(key))) != GPUAGG_ENC_DICT_KEY ||
			GpuAggNumericKeyScale(key) >= 0)
			continue;
		if (as_bytes && GpuAggKeyAsBytes(KeyDictIsPaddedBpchar(key) ? TEXTOID :
										 getBaseType(exprType(key))))
			continue;
		distinct = estimate_num_groups(root, list_make1(key), Max(rows, 1.0), NULL, NULL);
		cost += gpuagg_batch_value_cost *
			(distinct * GPU_DICT_NEW_VALUE_BATCH_VALUES +
			 Min(rows, distinct * messages) * GPU_DICT_MESSAGE_ENTRY_BATCH_VALUES);
	}
	return cost;
}

/*
 * The group keys among keys that side s of an aggjoin path computes (its
 * target's expressions), in the side's form.
 */
static List *
aggjoin_side_keys(PlannerInfo *root, const GpuAggJoinSides *sides, int s, List *keys)
{
	List	   *side_keys = NIL;
	ListCell   *lc;

	foreach(lc, keys)
	{
		Node	   *key = GpuAggWithoutOuterJoinNulls(root, lfirst(lc), sides->rels[s]->relids);

		if (list_member(sides->targets[s]->exprs, key))
			side_keys = lappend(side_keys, key);
	}
	return side_keys;
}

/*
 * Cost the node: the child; copying every value into batches (in the leader
 * for a serial child; for a parallel child the workers packed and the
 * leader only copies messages, a tenth of it); the leader's dictionary
 * work on the group keys (dictionary_cost); the GPU's startup and
 * per-row work once per grouping set, or the CPU device's (taking each row
 * from its batch, in one process whatever the workers that packed it, and
 * hashing it once per set); a copy of each batch for every set but the
 * first (a tenth of packing it); finalizing and emitting the groups.
 *
 * The CPU device takes the rows that parallel workers packed in one
 * process, as a Gather's leader takes their tuples: each costs
 * parallel_tuple_cost, as it does through a Gather, where PostgreSQL's
 * parallel aggregation sends partial groups only and hashes the rows in
 * every worker (over a parallel join, TPC-H Q3 and Q9, the CPU device ran
 * no faster than that plan: docs/benchmarks.md).  The GPU device copies
 * the batches whole.
 */
static void
agg_cost_path(CustomPath *cpath, Path *child, double input_rows, bool parallel,
			  GaDeviceKind device, int nkeys, int naggs, double ncolumns, int nsets,
			  double groups, List *having, Cost dictionary_cost)
{
	QualCost	having_cost;
	Cost		startup = child->total_cost + dictionary_cost;

	startup += input_rows * ncolumns * gpuagg_batch_value_cost *
		((parallel ? 0.1 : 1.0) + 0.1 * (nsets - 1));
	if (device == GA_DEVICE_GPU)
		startup += gpuagg_gpu_startup_cost + input_rows * gpuagg_gpu_tuple_cost * nsets;
	else
	{
		startup += input_rows * (gpuagg_cpu_device_tuple_cost +
								 cpu_operator_cost * (nkeys + naggs + 1) * nsets);
		if (parallel)
			startup += input_rows * parallel_tuple_cost;
	}
	startup += groups * cpu_operator_cost * naggs;

	cost_qual_eval(&having_cost, having, NULL);
	cpath->path.startup_cost = startup + having_cost.startup;
	cpath->path.total_cost = cpath->path.startup_cost +
		groups * (cpu_tuple_cost + having_cost.per_tuple) +
		cpath->path.pathtarget->cost.per_tuple * groups;
}

/*
 * Offer a costed GpuHashAgg path to rel: to add_path, or under gpuagg.force
 * to forced, which keeps the best ranked (the first of equal ranks) for
 * agg_force_path.
 */
static void
agg_offer_path(RelOptInfo *rel, CustomPath *cpath, AggForceRank rank, ForcedAggPath *forced)
{
	if (!gpuagg_force)
		add_path(rel, &cpath->path);
	else if (forced->path == NULL || rank < forced->rank)
	{
		forced->path = cpath;
		forced->rank = rank;
	}
}

/*
 * gpuagg.force: make the forced GpuHashAgg path rel's only path.  Its cost
 * stays the one computed, so that EXPLAIN shows what the planner weighed;
 * the native paths go, as enable_hashagg = off would make them lose.
 */
static void
agg_force_path(RelOptInfo *rel, const ForcedAggPath *forced)
{
	if (forced->path == NULL)
		return;
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	add_path(rel, &forced->path->path);
}

/*
 * The executor's per-tuple cost that the direct scan (batch/scan_direct.c)
 * saves when it reads scan's pages itself: scan is a Seq Scan whose output,
 * the child's target, is plain columns of its table, and
 * gpuagg.direct_scan is on; 0 otherwise.  PostgreSQL charges
 * cpu_tuple_cost for every tuple a Seq Scan passes through the executor;
 * the direct scan deforms a page's tuples in one run straight into batch
 * columns.  Without this saving the two plans of a grouping into few
 * groups cost about the same, and the planner could keep the native one
 * where GpuHashAgg is several times as fast (docs/benchmarks.md).
 */
static Cost
agg_direct_scan_saving(Path *scan, PathTarget *target)
{
	RelOptInfo *rel = scan->parent;
	ListCell   *lc;

	if (!gpuagg_direct_scan || scan->pathtype != T_SeqScan ||
		rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION ||
		scan->param_info != NULL || rel->rows <= 0)
		return 0;
	foreach(lc, target->exprs)
	{
		Var		   *var = lfirst(lc);

		if (!IsA(var, Var) || var->varno != rel->relid || var->varattno <= 0 ||
			var->varlevelsup != 0)
			return 0;
	}
	return cpu_tuple_cost * rel->tuples * (scan->rows / rel->rows);
}

/* A GpuHashAgg path over child, not yet costed. */
static CustomPath *
agg_make_path(RelOptInfo *output_rel, Path *child, List *path_private, double groups)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = groups;
	cpath->path.pathkeys = NIL;
	cpath->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
	cpath->custom_paths = list_make1(child);
	cpath->custom_private = path_private;
	cpath->methods = &gpuagg_path_methods;
	return cpath;
}

/*
 * The share of a partial path's rows each participant takes, as
 * PostgreSQL's costs count it (costsize.c's get_parallel_divisor).
 */
static double
parallel_divisor(int workers)
{
	double		divisor = workers;
	double		leader = 1.0 - 0.3 * workers;

	if (parallel_leader_participation && leader > 0)
		divisor += leader;
	return divisor;
}

/*
 * The part of a partial path's run cost that PostgreSQL does not divide
 * among the participants: a Parallel Seq Scan's page reads, which cost the
 * same whatever the number of workers that share them (costsize.c's
 * cost_seqscan divides only the CPU cost).  Taking fewer workers than the
 * partial path was costed for makes each one process more rows, not read
 * more pages: scaling the page reads too would price the parallel variant
 * of a grouping over a table whose pages cost most of its scan above the
 * serial variant, which packs every row in the leader.  0 for other
 * partial paths, whose whole run cost is scaled.
 */
static Cost
agg_partial_undivided_cost(Path *partial)
{
	RelOptInfo *rel = partial->parent;
	double		spc_seq_page_cost;

	if (partial->pathtype != T_SeqScan || rel->reloptkind != RELOPT_BASEREL ||
		rel->rtekind != RTE_RELATION)
		return 0;
	get_tablespace_page_costs(rel->reltablespace, NULL, &spc_seq_page_cost);
	return spc_seq_page_cost * rel->pages;
}

/*
 * The parallel variant's child: a Gather of GpuAggPack nodes over the
 * cheapest partial path of the input, or NULL when there is none or the
 * child's expressions are not parallel safe.
 */
static Path *
agg_parallel_child(PlannerInfo *root, RelOptInfo *input_rel,
				   PathTarget *child_target, List *path_private, double input_rows)
{
	Path	   *partial;
	Path	   *projected;
	Path	   *pack;
	PathTarget *pack_target;
	Expr	   *marker;
	double		messages;
	int			workers;

	if (input_rel->partial_pathlist == NIL ||
		!is_parallel_safe(root, (Node *) child_target->exprs))
		return NULL;
	marker = GpuAggBatchMarker();
	if (marker == NULL)
		return NULL;
	partial = linitial(input_rel->partial_pathlist);
	projected = (Path *) create_projection_path(root, input_rel, partial, child_target);
	if (!projected->parallel_safe)
		return NULL;

	pack_target = create_empty_pathtarget();
	add_column_to_pathtarget(pack_target, marker, 0);
	pack_target->width = (int) Min(GpuAggMessageCapacity() * 8, 1024 * 1024);
	pack = GpuAggPackPath(input_rel, projected, pack_target, path_private,
						  list_length(child_target->exprs));
	pack->total_cost = Max(pack->startup_cost,
						   pack->total_cost - agg_direct_scan_saving(partial, child_target));
	workers = GpuAggPackWorkers(input_rows, pack->parallel_workers);
	if (workers < pack->parallel_workers)
	{
		/* fewer participants: each packs more rows, but reads no more pages */
		Cost		run = pack->total_cost - pack->startup_cost;
		Cost		undivided = Min(agg_partial_undivided_cost(partial), run);

		pack->total_cost = pack->startup_cost + undivided + (run - undivided) *
			parallel_divisor(pack->parallel_workers) / parallel_divisor(workers);
		pack->parallel_workers = workers;
	}
	messages = Max(1.0, ceil(input_rows / (double) GpuAggMessageCapacity()));
	return (Path *) create_gather_path(root, input_rel, pack, pack_target, NULL, &messages);
}

/*
 * Add the aggjoin GpuHashAgg paths (aggjoin/path.c) when the input is a
 * join, or a chain of joins, the device can compute: the node reads the probe
 * side itself (serial), or parallel workers pack it; each build side is
 * read into the device's build (packed by workers too when it can be, in
 * the parallel variant).  Under gpuagg.force they are preferred to the
 * other GpuHashAgg paths.
 */
static bool
agg_add_aggjoin_paths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					   TargetCheck *check, PathTarget *child_target,
					   const GpuAggPathInfo *grouping, double batch_values,
					   GaDeviceKind device, ForcedAggPath *forced)
{
	GpuAggJoinSides sides;
	GpuAggPathInfo info = *grouping;
	double		groups = grouping->est_groups;
	int			parallel;
	double		ncolumns;

	if (!GpuAggJoinSidesFor(root, input_rel, child_target->exprs, check->keys,
							check->aggrefs, grouping->grouping_sets, &sides))
		return false;
	ncolumns = batch_values + 2 * sides.nkeys;	/* and the join keys */
	if (sides.extra_exprs != NIL)
	{
		/* the device's filter reads more child expressions (aggjoin/path.c) */
		info.child_exprs = list_concat_copy(info.child_exprs, sides.extra_exprs);
		ncolumns += list_length(sides.extra_exprs);
	}

	/*
	 * The batches are the probe side's rows (and pieces of joined rows):
	 * size them for the larger of the two, not for the join's output alone
	 * (TPC-H Q5 expects 1e5 joined rows of 6e7 probe rows: batches sized for
	 * the joined rows would cost a round trip per join step every 64K probe
	 * rows).
	 */
	info.input_rows = Max(info.input_rows, sides.paths[0]->rows);
	info.join = &sides.join;
	for (parallel = 0; parallel <= 1; parallel++)
	{
		double		probe_rows = sides.paths[0]->rows;
		Path	   *builds[GA_AGG_MAX_JOIN_STEPS + 1];
		int			packed_sides = 0;
		Path	   *probe;
		CustomPath *cpath;
		List	   *priv;
		int			s;

		/* parallel: workers pack the probe side, and the build sides when they can */
		for (s = 1; s < sides.nsides; s++)
		{
			builds[s] = NULL;
			if (parallel)
			{
				/* a GpuAggPack of build side s */
				info.child_kind = GPUAGG_CHILD_PACKED;
				sides.join.packed_sides = 0;
				sides.join.pack_side = s;
				builds[s] = agg_parallel_child(root, sides.rels[s], sides.targets[s],
											   GpuAggPathToList(&info), sides.paths[s]->rows);
			}
			if (builds[s] != NULL)
				packed_sides |= 1 << s;
			else
				builds[s] = (Path *) create_projection_path(root, sides.rels[s], sides.paths[s],
															sides.targets[s]);
		}
		info.child_kind = parallel ? GPUAGG_CHILD_PACKED : GPUAGG_CHILD_PROJECTION;
		sides.join.packed_sides = packed_sides;
		sides.join.pack_side = 0;
		priv = GpuAggPathToList(&info);
		if (parallel)
			probe = agg_parallel_child(root, sides.rels[0], sides.targets[0], priv, probe_rows);
		else
			probe = (Path *) create_projection_path(root, sides.rels[0], sides.paths[0],
													sides.targets[0]);
		if (probe == NULL)
			continue;
		cpath = agg_make_path(output_rel, probe, priv, groups);
		agg_cost_path(cpath, probe, probe_rows, parallel, device,
					  list_length(check->keys), list_length(check->aggrefs), ncolumns,
					  info.nsets, groups, info.having,
					  agg_dictionary_keys_cost(root, aggjoin_side_keys(root, &sides, 0, check->keys),
											   probe_rows, GpuAggJoinGroupKeyAsBytes(TEXTOID)));
		for (s = 1; s < sides.nsides; s++)
		{
			Path	   *build = builds[s];
			Cost		build_cost;

			cpath->custom_paths = lappend(cpath->custom_paths, build);
			/* the build: reading the side, one copy of each row, its dictionary keys */
			build_cost = build->total_cost + build->rows * ncolumns * gpuagg_batch_value_cost +
				agg_dictionary_keys_cost(root, aggjoin_side_keys(root, &sides, s, check->keys),
										 sides.paths[s]->rows,
										 GpuAggJoinGroupKeyAsBytes(TEXTOID));
			cpath->path.startup_cost += build_cost;
			cpath->path.total_cost += build_cost;
		}
		if (device == GA_DEVICE_CPU)
		{
			/* the CPU device's joins: every probe and build row, in one process */
			Cost		join_cost = probe_rows;

			for (s = 1; s < sides.nsides; s++)
				join_cost += sides.paths[s]->rows;
			join_cost *= gpuagg_cpu_device_tuple_cost * GPUAGG_CPU_DEVICE_JOIN_ROW;
			cpath->path.startup_cost += join_cost;
			cpath->path.total_cost += join_cost;
		}
		agg_offer_path(output_rel, cpath,
					   parallel ? AGG_FORCE_PARALLEL : AGG_FORCE_AGGJOIN_SERIAL, forced);
	}
	return true;
}

/* Try to add GpuHashAgg paths to output_rel; logs why not when it can't. */
static bool
agg_try_add_path(PlannerInfo *root, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, GroupPathExtraData *extra,
				 ForcedAggPath *forced)
{
	Query	   *parse = root->parse;
	TargetCheck check = {.root = root};
	List	   *having = (List *) extra->havingQual;
	Path	   *input_path = input_rel->cheapest_total_path;
	PathTarget *child_target;
	Path	   *child_path;
	CustomPath *cpath;
	GaDeviceKind device;
	bool		usable;
	bool		plain_parallel;
	Cost		dictionary_cost;
	Cost		saving;
	double		groups;
	double		input_rows;
	GpuAggPathInfo info = {0};
	List	   *path_private;
	int			relid = GpuAggGroupingRelid(root);
	double		ncolumns;
	ListCell   *lc;

	if (parse->hasTargetSRFs)
	{
		Oid			func_id = InvalidOid;

		agg_set_returning_walker((Node *) parse->targetList, &func_id);
		return agg_reject(psprintf("the SELECT list calls the set-returning function %s(); "
								   "call it in a FROM clause over the grouped query",
								   OidIsValid(func_id) ?
								   quote_identifier(get_func_name(func_id)) : "?"));
	}
	if (extra->patype == PARTITIONWISE_AGGREGATE_PARTIAL)
		return agg_reject("partial partitionwise aggregation (the group keys do not hold the partition key)");
	if (input_path == NULL || input_path->param_info != NULL)
		return agg_reject("the input has no path without parameters");

	device = GpuAggPlannedDeviceKind(&usable);
	if (!usable && gpuagg_device == GPUAGG_DEVICE_AUTO)
		return agg_reject(psprintf("no usable GPU: %s; set gpuagg.device = cpu to use the CPU device",
								   GpuAggNoGpuReason()));

	if (!agg_collect_keys(root, extra, &check))
		return agg_reject(check.why);
	foreach(lc, output_rel->reltarget->exprs)
	{
		if (agg_check_walker((Node *) lfirst(lc), &check))
			return agg_reject(check.why);
	}
	if (agg_check_walker((Node *) having, &check))
		return agg_reject(check.why);
	foreach(lc, check.aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		char	   *volatile_function = GpuAggVolatileFunction((Node *) aggref->args);

		if (volatile_function == NULL)
			volatile_function = GpuAggVolatileFunction((Node *) aggref->aggfilter);
		if (volatile_function != NULL)
			return agg_reject(psprintf("%s: its argument or FILTER calls the volatile function %s",
									   GpuAggAggrefName(aggref), volatile_function));
	}
	/* + 1: a DISTINCT aggregate groups by the keys and its argument */
	if (list_length(check.keys) + 1 > GA_MAX_KEYS)
		return agg_reject(psprintf("%d group keys, more than the %d a device request holds",
								   list_length(check.keys), GA_MAX_KEYS - 1));
	if (check.device_ops + list_length(check.keys) > GA_MAX_AGG_OPS)
		return agg_reject(psprintf("the aggregates and group keys need %d device operations, "
								   "more than the %d a device request holds; split the "
								   "aggregates over two queries",
								   check.device_ops + list_length(check.keys), GA_MAX_AGG_OPS));
	if (parse->groupingSets != NIL && check.distinct != NULL)
		return agg_reject(psprintf("%s with grouping sets: a device runs DISTINCT aggregates "
								   "only without them",
								   GpuAggAggrefName(check.distinct)));

	/*
	 * A plain aggregate (counts and sums, no GROUP BY) runs no faster on a
	 * device than in PostgreSQL's parallel aggregation, whose per-row work
	 * is as cheap as packing the row for the device (docs/benchmarks.md).
	 * So where PostgreSQL can aggregate in parallel, a plain aggregate
	 * without DISTINCT (which the device de-duplicates) is left to it
	 * unless forced.
	 */
	plain_parallel = !gpuagg_force && check.keys == NIL && parse->groupingSets == NIL &&
		check.distinct == NULL && input_rel->partial_pathlist != NIL;

	input_rows = input_path->rows;
	if (!agg_grouping_sets(root, extra, &check, input_rows, relid, &info))
		return agg_reject(check.why);
	groups = info.est_groups;
	child_target = agg_child_target(root, &check, relid);

	info.keys = check.keys;
	info.aggrefs = check.aggrefs;
	info.child_exprs = child_target->exprs;
	info.having = having;

	/*
	 * A device failure is recovered by running the child again on the CPU
	 * device; that is only the same input when nothing in the query is
	 * volatile.
	 */
	info.rescan_safe = !contain_volatile_functions((Node *) parse);
	info.input_rows = input_rows;
	info.grouping_sets = parse->groupingSets != NIL;
	info.grouping_relid = relid;
	info.groupings = check.groupings;
	info.grouping_keys = agg_grouping_keys(root, extra, &check);
	info.child_kind = GPUAGG_CHILD_PROJECTION;
	info.join = NULL;
	ncolumns = agg_batch_values(&info);

	/*
	 * aggjoin: the device joins the input's two sides itself, which the
	 * case above does not cover, so a plain aggregate over a join keeps
	 * only these paths.
	 */
	if (agg_add_aggjoin_paths(root, input_rel, output_rel, &check, child_target,
							   &info, ncolumns, device, forced))
	{
		if (plain_parallel)
			return true;
	}
	else if (plain_parallel)
		return agg_reject("plain aggregate that PostgreSQL can run in parallel (as fast; gpuagg.force plans it anyway)");

	/* the leader's dictionary work on the group keys (text as bytes: none) */
	dictionary_cost = agg_dictionary_keys_cost(root, check.keys, input_rows, true);

	/* serial: the projection of the input's cheapest path */
	child_path = (Path *) create_projection_path(root, input_rel, input_path, child_target);
	info.child_kind = GPUAGG_CHILD_PROJECTION;
	cpath = agg_make_path(output_rel, child_path, GpuAggPathToList(&info), groups);
	agg_cost_path(cpath, child_path, input_rows, false, device,
				  list_length(check.keys), list_length(check.aggrefs), ncolumns,
				  info.nsets, groups, having, dictionary_cost);
	saving = agg_direct_scan_saving(input_path, child_target);
	cpath->path.startup_cost -= saving;
	cpath->path.total_cost -= saving;
	agg_offer_path(output_rel, cpath, AGG_FORCE_SERIAL, forced);

	/*
	 * join input: the input is a GpuHashJoin and the child's columns are plain
	 * columns of its output; its joined rows go into batches without being
	 * projected (between the parallel and the serial variant under force)
	 */
	child_path = GpuJoinAggInputPath(input_rel, child_target->exprs);
	if (child_path != NULL)
	{
		info.child_kind = GPUAGG_CHILD_JOIN_INPUT;
		cpath = agg_make_path(output_rel, child_path, GpuAggPathToList(&info), groups);
		agg_cost_path(cpath, child_path, input_rows, false, device,
					  list_length(check.keys), list_length(check.aggrefs), ncolumns,
					  info.nsets, groups, having, dictionary_cost);
		agg_offer_path(output_rel, cpath, AGG_FORCE_JOIN_INPUT, forced);
	}

	/* parallel: workers pack batches, the leader aggregates them */
	info.child_kind = GPUAGG_CHILD_PACKED;
	path_private = GpuAggPathToList(&info);
	child_path = agg_parallel_child(root, input_rel, child_target, path_private, input_rows);
	if (child_path != NULL)
	{
		cpath = agg_make_path(output_rel, child_path, path_private, groups);
		agg_cost_path(cpath, child_path, input_rows, true, device,
					  list_length(check.keys), list_length(check.aggrefs), ncolumns,
					  info.nsets, groups, having, dictionary_cost);
		agg_offer_path(output_rel, cpath, AGG_FORCE_PARALLEL, forced);
	}
	return true;
}

/* create_upper_paths_hook: offer GpuHashAgg for grouping and plain aggregation. */
static void
gpuagg_create_upper_paths(PlannerInfo *root, UpperRelationKind stage,
						  RelOptInfo *input_rel, RelOptInfo *output_rel,
						  void *extra)
{
	ForcedAggPath forced = {NULL, AGG_FORCE_SERIAL};

	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_GROUP_AGG || !gpuagg_enabled || !gpuagg_enable_hashagg)
		return;
	agg_try_add_path(root, input_rel, output_rel, (GroupPathExtraData *) extra, &forced);
	agg_force_path(output_rel, &forced);
}

/* Install the planner hook. */
void
GpuAggPathInit(void)
{
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gpuagg_create_upper_paths;
}
