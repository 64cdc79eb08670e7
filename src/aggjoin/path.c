/*-------------------------------------------------------------------------
 *
 * aggjoin/path.c
 *	  Finds, under an aggregation, the join or chain of joins that the
 *	  device can compute for it (GpuAggJoinSidesFor), and which side of
 *	  the joins computes each of its expressions.
 *
 * The input may be an equi-join that GpuHashJoin could run (hashjoin/path.c
 * offered a path for it: GpuJoinDevicePaths keeps it even where a native
 * join beat it), or a chain of them down the joins' outer sides
 * (aggjoin/aggjoin.h).  What qualifies (otherwise fewer joins of the
 * chain, then the other GpuHashAgg paths and the native plan remain):
 *	- INNER, LEFT, RIGHT, FULL (at any step: the device sends the build rows
 *	  nothing matched through the steps above), SEMI (EXISTS, IN: without
 *	  other conditions its build keeps each key once, and the device joins
 *	  it as an inner join) and ANTI (NOT EXISTS: the probe rows without a
 *	  match) joins whose other join conditions the device can check
 *	  (aggjoin/filter.c): an INNER join's below every RIGHT and FULL one of
 *	  the chain in its filter over the joined rows, any other's (not RIGHT or
 *	  FULL) as the step's own filter, for each pair of equal keys at the
 *	  step, from sides up to the step, by expressions that cannot fail; and
 *	  no condition above an outer join, on up to GA_AGG_MAX_JOIN_KEYS
 *	  equalities whose every device key is exact (the integer-like types of
 *	  GpuJoinKeyIsExact) or the id of one key dictionary for both sides
 *	  (text and the other batch/key_dict.c types, under a deterministic
 *	  collation; a dictionary per join key): one key as it is, two
 *	  int2/int4 keys of one side paired into one exact int8, any other keys
 *	  each in its own column (the device hashes them together and compares
 *	  them; the outer keys of one join may then come from different sides
 *	  below it);
 *	- every group key, aggregate argument, FILTER and join key above the
 *	  bottom join computed from one side by an expression that cannot fail
 *	  (plain columns, leakproof functions: each side computes it also for
 *	  rows the joins drop) — any expression on a probe side that only LEFT
 *	  joins meet, which drop none —, a LEFT join's inner side only by plain
 *	  columns (an expression over a null-extended row is not the
 *	  expression's value null-extended), as are the sides a RIGHT or FULL
 *	  join null-extends, a SEMI or ANTI join's inner side by nothing;
 *	  extract() of a whole date field counts as an expression that cannot
 *	  fail;
 *	- no DISTINCT aggregate and no grouping sets; no float key, and no
 *	  numeric or other dictionary key of a build side whose values have
 *	  several spellings (a char(n), a numeric(p,s) column and a whole date
 *	  field have one);
 *	- builds (each build side's needed columns and key) estimated within
 *	  what the device may hold of them together (GpuAggJoinBuildsLimit: on
 *	  the CPU device hash_mem, or gpuagg.hashjoin_build_limit when lower),
 *	  since an aggjoin cannot partition them.
 *
 * The chain is taken from the top join down its outer side, each join's
 * way chosen by better_join_step (far fewer rows to handle, else a build
 * side that reads fewer table rows, else the smaller build).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "aggjoin/aggjoin.h"
#include "batch/exact_key.h"
#include "batch/key_dict.h"
#include "compat.h"
#include "devices.h"
#include "finalize/numeric.h"
#include "guc.h"
#include "hashagg/catalog.h"
#include "hashagg/derived.h"
#include "hashjoin/desc.h"
#include "hashjoin/hashjoin.h"
#include "hashjoin/private.h"

/* Log why an aggjoin GpuHashAgg is not offered; always returns false. */
static bool
aggjoin_reject(const char *why)
{
	elog(DEBUG1, "gpuagg: aggjoin GpuHashAgg not used: %s", why);
	return false;
}

/* Whether node contains a PlaceHolderVar. */
static bool
has_placeholder_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, PlaceHolderVar))
		return true;
	return expression_tree_walker(node, has_placeholder_walker, context);
}

/*
 * Which side of the join (0 the probe side, s the build side of step s)
 * computes expr: the one whose relations hold all its columns; -1 with *why
 * set when it needs two sides (or a placeholder).
 */
static int
expr_side(PlannerInfo *root, Node *expr, const GpuAggJoinSides *sides, const char **why)
{
	Relids		varnos = pull_varnos(root, GpuAggWithoutOuterJoinNulls(root, expr, NULL));
	int			s;

	if (has_placeholder_walker(expr, NULL))
	{
		*why = "an expression over a placeholder (a subquery's output under an outer join)";
		return -1;
	}
	for (s = 0; s < sides->nsides; s++)
	{
		if (bms_is_subset(varnos, sides->rels[s]->relids))
			return s;
	}
	*why = "an aggregate input, group key or join key over two sides of the joins";
	return -1;
}

/*
 * Whether a join key can travel as the id of one key dictionary for both
 * sides (batch/key_dict.c: text, varchar, bpchar, numeric, uuid, interval): the
 * same type on both sides, compared with that type's own equality under a
 * deterministic collation, whose classes are the dictionary's keys.
 */
static bool
join_key_is_dictionary(OpExpr *clause, Oid outer_type, Oid inner_type)
{
	Oid			type = getBaseType(outer_type);
	const char *why;

	return type == getBaseType(inner_type) && KeyDictTypeSupported(type) &&
		clause->opno == lookup_type_cache(type, TYPECACHE_EQ_OPR)->eq_opr &&
		GpuAggKeyTypeSupported(type, clause->inputcollid, "the join key", &why);
}

/* expr (int2 or int4) as int8. */
static Expr *
int8_of(Expr *expr)
{
	Oid			type = getBaseType(exprType((Node *) expr));

	return (Expr *) makeFuncExpr(type == INT2OID ? F_INT8_INT2 : F_INT8_INT4, INT8OID,
								 list_make1(expr), InvalidOid, InvalidOid,
								 COERCE_EXPLICIT_CAST);
}

/*
 * One exact int8 key for two int2/int4 keys: (first << 32) | (second &
 * 0xFFFFFFFF), equal exactly when both keys are equal (each fits 32 bits),
 * NULL when either is.  None of its operations can fail.
 */
static Expr *
pair_key(Expr *first, Expr *second)
{
	Expr	   *high = (Expr *) makeFuncExpr(F_INT8SHL, INT8OID,
											 list_make2(int8_of(first),
														makeConst(INT4OID, -1, InvalidOid, 4,
																  Int32GetDatum(32), false, true)),
											 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	Expr	   *low = (Expr *) makeFuncExpr(F_INT8AND, INT8OID,
											list_make2(int8_of(second),
													   makeConst(INT8OID, -1, InvalidOid, 8,
																 Int64GetDatum(INT64CONST(0xFFFFFFFF)),
																 false, FLOAT8PASSBYVAL)),
											InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);

	return (Expr *) makeFuncExpr(F_INT8OR, INT8OID, list_make2(high, low),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
}

/* Whether a key expression is an int2 or int4 value (fits 32 bits). */
static bool
key_fits_32_bits(Expr *key)
{
	Oid			type = getBaseType(exprType((Node *) key));

	return type == INT2OID || type == INT4OID;
}

/* One join of a chain, as the planner found it. */
typedef struct JoinStepFound
{
	CustomPath *path;			/* the GpuHashJoin path kept for it */
	JoinType	type;
	int			nkeys;			/* its equalities, 1 .. GA_AGG_MAX_JOIN_KEYS */
	Expr	   *outer_keys[GA_AGG_MAX_JOIN_KEYS];	/* each one's sides, each */
	Expr	   *inner_keys[GA_AGG_MAX_JOIN_KEYS];	/* exact or a dictionary id */
	bool		pairable;		/* two int2/int4 keys on each side */
	List	   *hash_clauses;	/* its equalities */
	List	   *filter_quals;	/* its conditions besides the keys (not RIGHT
								 * or FULL) */
} JoinStepFound;

/*
 * Whether the device can join on path's equalities (clauses, with the
 * outer and inner keys of each): every one exact (GpuJoinKeyIsExact) or of
 * one key dictionary for both sides, at most GA_AGG_MAX_JOIN_KEYS of them
 * (several are hashed together and rechecked by the device); fills found's
 * keys.
 */
static bool
join_step_keys(List *clauses, List *outer_keys, List *inner_keys, JoinStepFound *found,
			   const char **why)
{
	ListCell   *lc_clause;
	ListCell   *lc_outer;
	ListCell   *lc_inner;
	bool		all_exact = true;
	int			k = 0;

	if (list_length(clauses) > GA_AGG_MAX_JOIN_KEYS)
	{
		*why = psprintf("%d join keys in one join, more than the %d a device joins on",
						list_length(clauses), GA_AGG_MAX_JOIN_KEYS);
		return false;
	}
	forthree(lc_clause, clauses, lc_outer, outer_keys, lc_inner, inner_keys)
	{
		OpExpr	   *clause = lfirst_node(OpExpr, lc_clause);
		Oid			outer_type = exprType(lfirst(lc_outer));
		Oid			inner_type = exprType(lfirst(lc_inner));
		bool		exact = GpuJoinKeyIsExact(clause->opno, outer_type, inner_type);

		if (!exact && !join_key_is_dictionary(clause, outer_type, inner_type))
		{
			*why = psprintf("a join key of type %s%s%s: a device joins integer-like keys, or "
							"keys of one type on both sides among text, varchar, char, numeric, "
							"uuid and interval (under a deterministic collation)",
							format_type_be(outer_type), inner_type == outer_type ? "" : " with ",
							inner_type == outer_type ? "" : format_type_be(inner_type));
			return false;
		}
		all_exact = all_exact && exact;
		found->outer_keys[k] = lfirst(lc_outer);
		found->inner_keys[k] = lfirst(lc_inner);
		k++;
	}
	found->nkeys = k;
	found->pairable = k == 2 && all_exact &&
		key_fits_32_bits(found->outer_keys[0]) && key_fits_32_bits(found->outer_keys[1]) &&
		key_fits_32_bits(found->inner_keys[0]) && key_fits_32_bits(found->inner_keys[1]);
	return k > 0;
}

/* Rows of a GpuHashJoin path's build (inner) side. */
static double
join_build_rows(CustomPath *path)
{
	return ((Path *) lsecond(path->custom_paths))->rows;
}

/*
 * Rows the device handles at a join path's step: its probe (outer) side's,
 * which the joins below it produced, and its build side's, which it holds.
 */
static double
join_step_rows(CustomPath *path)
{
	return ((Path *) linitial(path->custom_paths))->rows + join_build_rows(path);
}

/*
 * The rows of the tables a GpuHashJoin path's build (inner) side reads:
 * what producing it costs, in one process, whatever its joins' estimates
 * (and whatever gpuagg.force makes of its paths' costs).
 */
static double
join_build_input(PlannerInfo *root, CustomPath *path)
{
	Relids		relids = ((Path *) lsecond(path->custom_paths))->parent->relids;
	double		rows = 0;
	int			relid = -1;

	while ((relid = bms_next_member(relids, relid)) >= 0)
	{
		RelOptInfo *rel = relid < root->simple_rel_array_size ? root->simple_rel_array[relid] : NULL;

		if (rel != NULL)
			rows += rel->reloptkind == RELOPT_BASEREL && rel->rtekind == RTE_RELATION ?
				rel->tuples : rel->rows;
	}
	return rows;
}

/*
 * Whether join path a suits the top of a chain better than b: the one with
 * far fewer rows to handle (GPU_CHAIN_FEWER_ROWS times; of two orders of
 * the same joins, the one that joins a selective side first rather than
 * multiplying the rows below and dropping them only at the top), else the
 * build side that reads fewer table rows (GPU_CHAIN_FEWER_INPUT times: it
 * is produced by one process and held whole, while the probe side is
 * packed by parallel workers, so a build side that joins the fact table
 * loses to a dimension even when its rows are underestimated, as TPC-H
 * Q9's two-key join with partsupp is), else the smaller build side, else
 * the cheaper path (under gpuagg.force, the one offered later: the kept
 * paths come newest first).
 */
#define GPU_CHAIN_FEWER_ROWS 100.0
#define GPU_CHAIN_FEWER_INPUT 2.0

static bool
better_join_step(PlannerInfo *root, CustomPath *a, CustomPath *b)
{
	if (join_step_rows(a) * GPU_CHAIN_FEWER_ROWS < join_step_rows(b))
		return true;
	if (join_step_rows(b) * GPU_CHAIN_FEWER_ROWS < join_step_rows(a))
		return false;
	if (join_build_input(root, a) * GPU_CHAIN_FEWER_INPUT < join_build_input(root, b))
		return true;
	if (join_build_input(root, b) * GPU_CHAIN_FEWER_INPUT < join_build_input(root, a))
		return false;
	if (join_build_rows(a) != join_build_rows(b))
		return join_build_rows(a) < join_build_rows(b);
	if (gpuagg_force)
		return false;
	return a->path.total_cost < b->path.total_cost;
}

/*
 * The GpuHashJoin path of rel that the device can join under an
 * aggregation, the best for the top of a chain (better_join_step); false
 * with *why set when none qualifies.  Any step may be RIGHT or FULL: the
 * device sends the unmatched build rows of each through the steps above it.
 */
static bool
find_join_step(PlannerInfo *root, RelOptInfo *rel, JoinStepFound *found, const char **why)
{
	ListCell   *lc;

	found->path = NULL;
	foreach(lc, GpuJoinDevicePaths(rel))
	{
		CustomPath *path = lfirst(lc);
		GpuJoinPathInfo *join = GpuJoinPathFromList(path->custom_private);
		JoinType	type = join->jointype;
		JoinStepFound candidate;

		if (type != JOIN_INNER && type != JOIN_LEFT && type != JOIN_SEMI && type != JOIN_ANTI &&
			type != JOIN_RIGHT && type != JOIN_FULL)
		{
			*why = "a join other than INNER, LEFT, RIGHT, FULL, SEMI and ANTI";
			continue;
		}
		/*
		 * A join's other conditions may become the device's filter (after
		 * the chain, or the step's own); conditions above an outer join's
		 * null-extension may not.
		 */
		if (join->other_quals != NIL)
		{
			*why = "conditions on an outer join's null-extended rows (a WHERE above the join)";
			continue;
		}
		if (join->join_quals != NIL &&
			(type == JOIN_RIGHT || type == JOIN_FULL))
		{
			*why = "join conditions other than the keys' equalities on a RIGHT or FULL join";
			continue;
		}
		if (!join_step_keys(join->hash_clauses, join->outer_keys, join->inner_keys,
							&candidate, why))
			continue;
		candidate.hash_clauses = join->hash_clauses;
		candidate.filter_quals = join->join_quals;
		if (found->path == NULL || better_join_step(root, path, found->path))
		{
			*found = candidate;
			found->path = path;
			found->type = type;
		}
	}
	return found->path != NULL;
}

/*
 * Whether rows of side may be dropped by the chain's joins before step
 * (1-based; nsteps + 1: before the aggregation): a probe row by any join
 * but a LEFT one, a build row whenever it has no match.  An expression
 * computed for such rows must not be able to fail.
 */
static bool
side_rows_dropped_before(const JoinStepFound *steps, int side, int step)
{
	int			t;

	if (side > 0)
		return true;
	for (t = 1; t < step; t++)
	{
		if (steps[t - 1].type != JOIN_LEFT)
			return true;
	}
	return false;
}

/*
 * Whether expr is numeric arithmetic whose every step is bounded: +, -, *
 * and signs of numeric columns of a declared precision (their values fit
 * it), integers cast to numeric, and numeric constants.  Such an expression
 * cannot fail when its digits stay far below the numeric format's limit
 * (numeric_mul and the others are not leakproof only because unbounded
 * inputs can overflow that format): TPC-H's l_extendedprice * (1 -
 * l_discount).
 */
static bool
numeric_arithmetic_walker(Node *expr)
{
	if (IsA(expr, RelabelType))
		return numeric_arithmetic_walker((Node *) ((RelabelType *) expr)->arg);
	if (IsA(expr, Const))
		return exprType(expr) == NUMERICOID;
	if (IsA(expr, Var))
		return exprType(expr) == NUMERICOID && exprTypmod(expr) >= (int32) VARHDRSZ;
	if (IsA(expr, FuncExpr) || IsA(expr, OpExpr))
	{
		Oid			func = IsA(expr, FuncExpr) ? ((FuncExpr *) expr)->funcid :
			get_opcode(((OpExpr *) expr)->opno);
		List	   *args = IsA(expr, FuncExpr) ? ((FuncExpr *) expr)->args :
			((OpExpr *) expr)->args;
		ListCell   *lc;

		switch (func)
		{
			case F_NUMERIC_INT2:
			case F_NUMERIC_INT4:
			case F_NUMERIC_INT8:
				return !contain_leaked_vars((Node *) args);
			case F_NUMERIC_ADD:
			case F_NUMERIC_SUB:
			case F_NUMERIC_MUL:
			case F_NUMERIC_UMINUS:
			case F_NUMERIC_UPLUS:
				foreach(lc, args)
				{
					if (!numeric_arithmetic_walker(lfirst(lc)))
						return false;
				}
				return true;
		}
	}
	return false;
}

static bool expr_cannot_fail(Node *expr);

/*
 * Whether expr is a whole field of a date (KeyDictWholeDateField) whose
 * date cannot fail: then it cannot fail either.
 */
static bool
whole_date_field(Node *expr)
{
	Node	   *arg;

	return KeyDictWholeDateField(expr, &arg) && expr_cannot_fail(arg);
}

/*
 * Whether expr cannot fail on any row (see above; numeric arithmetic of at
 * most 1000 digits, and whole fields of dates).
 */
static bool
expr_cannot_fail(Node *expr)
{
	int			precision;
	int			scale;

	if (!contain_leaked_vars(expr))
		return true;
	if (whole_date_field(expr))
		return true;
	return numeric_arithmetic_walker(expr) &&
		GpuAggNumericBounds(expr, &precision, &scale) && precision <= 1000;
}

/*
 * Whether the chain's joins below step (1-based; nsteps + 1: before the
 * aggregation) null-extend side: a RIGHT join each side below it, a FULL
 * join also its own.
 */
static bool
side_null_extended_below(const JoinStepFound *steps, int side, int step)
{
	int			u;

	for (u = 1; u < step; u++)
	{
		if ((steps[u - 1].type == JOIN_RIGHT && side < u) ||
			(steps[u - 1].type == JOIN_FULL && side <= u))
			return true;
	}
	return false;
}

/* The volatile function expr calls, for a message. */
static const char *
volatile_function_name(Node *expr)
{
	char	   *name = GpuAggVolatileFunction(expr);

	return name != NULL ? name : "?";
}

/*
 * Why an expression of side cannot be computed there for a chain whose
 * rows reach step (see side_rows_dropped_before), or NULL when it can: a
 * LEFT join's inner side gives plain columns only (an expression over a
 * null-extended row is not the expression's value null-extended), as do
 * the sides a RIGHT or FULL join below step null-extends (for a join key
 * too: COALESCE over a null-extended row need not be null), a SEMI or ANTI
 * join's inner side gives nothing, and each side computes expressions
 * also for rows the joins drop, where PostgreSQL computes them for joined
 * rows only: so only expressions that cannot fail on a value (plain
 * columns, leakproof functions: no overflow, no division by zero; bounded
 * numeric arithmetic) where rows are dropped.
 */
static const char *
side_expr_problem(const JoinStepFound *steps, int side, int step, Node *expr)
{
	Node	   *bare = expr;

	while (IsA(bare, RelabelType))
		bare = (Node *) ((RelabelType *) bare)->arg;
	if (side > 0 && steps[side - 1].type == JOIN_LEFT && !IsA(bare, Var))
		return "an expression over the nullable side of a LEFT join";
	if (!IsA(bare, Var) && side_null_extended_below(steps, side, step))
		return "an expression over a nullable side of a RIGHT or FULL join";
	if (side > 0 && steps[side - 1].type == JOIN_SEMI)
		return "a column of a SEMI join's inner side";
	if (side > 0 && steps[side - 1].type == JOIN_ANTI)
		return "a column of an ANTI join's inner side";
	if (contain_volatile_functions(expr))
		return psprintf("an expression calling the volatile function %s",
						volatile_function_name(expr));
	if (!expr_cannot_fail(expr) && side_rows_dropped_before(steps, side, step))
		return "an expression that may fail on rows the join drops";
	return NULL;
}

/* A join step's device keys, and the side computing each outer key. */
typedef struct StepDeviceKeys
{
	int			nkeys;
	Expr	   *outer[GA_AGG_MAX_JOIN_KEYS];
	Expr	   *inner[GA_AGG_MAX_JOIN_KEYS];
	int			side[GA_AGG_MAX_JOIN_KEYS];
} StepDeviceKeys;

/*
 * The device keys of join step t (1-based) of steps: every outer key from
 * one side below the step (the probe side or an earlier build side) that
 * may compute it; two int2/int4 keys from one side paired into one exact
 * int8 (one column a side, and no hashing), any other keys apart (the
 * device hashes and rechecks them).  False with *why set when a key does
 * not qualify.
 */
static bool
step_device_keys(PlannerInfo *root, const JoinStepFound *steps, int t,
				 const GpuAggJoinSides *sides, StepDeviceKeys *keys, const char **why)
{
	const JoinStepFound *step = &steps[t - 1];
	int			k;

	keys->nkeys = step->nkeys;
	for (k = 0; k < step->nkeys; k++)
	{
		keys->outer[k] = step->outer_keys[k];
		keys->inner[k] = step->inner_keys[k];
		keys->side[k] = expr_side(root, (Node *) keys->outer[k], sides, why);
		if (keys->side[k] < 0 || keys->side[k] >= t)
		{
			*why = "a join key over two of the joined sides";
			return false;
		}
		if (t > 1 &&
			(*why = side_expr_problem(steps, keys->side[k], t, (Node *) keys->outer[k])) != NULL)
		{
			*why = psprintf("%s (a join key)", *why);
			return false;
		}
	}
	if (step->pairable && keys->side[0] == keys->side[1])
	{
		Expr	   *paired = pair_key(keys->outer[0], keys->outer[1]);

		if (t == 1 || side_expr_problem(steps, keys->side[0], t, (Node *) paired) == NULL)
		{
			keys->nkeys = 1;
			keys->outer[0] = paired;
			keys->inner[0] = pair_key(keys->inner[0], keys->inner[1]);
		}
	}
	return true;
}

/* What the filter's operand check needs (filter_operand_side). */
typedef struct FilterSideArg
{
	PlannerInfo *root;
	const JoinStepFound *steps;
	int			nsteps;
	const GpuAggJoinSides *sides;
	int			step;			/* 0: the filter after the chain; t: step
								 * t's own */
} FilterSideArg;

/*
 * The side that computes a filter operand (aggjoin/filter.c), or -1 with
 * *why: one side must hold all its columns.  After the chain, it must be
 * able to compute it for the rows that reach the aggregation, as for any
 * child expression.  In step t's own filter it must be one of the sides
 * the step reads (the probe side and the build sides up to t's), computed
 * as for rows reaching step t, its own build side's as for its build rows;
 * and since the step checks its conditions only for pairs of equal keys,
 * it must be an expression that cannot fail.
 */
static int
filter_operand_side(Node *expr, void *arg, const char **why)
{
	FilterSideArg *a = arg;
	int			side = expr_side(a->root, expr, a->sides, why);

	if (side < 0)
		return -1;
	if (a->step == 0)
		*why = side_expr_problem(a->steps, side, a->nsteps + 1, expr);
	else if (side > a->step)
		*why = "a join condition over a side joined later";
	else if (contain_volatile_functions(expr))
		*why = psprintf("a join condition calling the volatile function %s",
						volatile_function_name(expr));
	else if (!expr_cannot_fail(expr))
		*why = "an expression that may fail in a join condition";
	else if (side < a->step)
		*why = side_expr_problem(a->steps, side, a->step, expr);
	else
		*why = NULL;
	return *why != NULL ? -1 : side;
}

/*
 * The joins' conditions besides their keys, as the device's filters
 * (aggjoin/filter.c): *program the filter after the chain, of the INNER
 * joins' below no RIGHT or FULL join (whose matches their dropped rows
 * would count); step_programs[t - 1] step t's own, of any other join's
 * (an outer, semi or anti join checks its conditions at the join: they
 * decide which rows it null-extends or keeps); *operands the operands to
 * compute.  False with *why when a condition does not qualify.
 */
static bool
join_filter_try(PlannerInfo *root, const JoinStepFound *steps, int nsteps,
				const GpuAggJoinSides *sides, List **program, List **step_programs,
				List **operands, const char **why)
{
	FilterSideArg arg = {root, steps, nsteps, sides, 0};
	int			t;
	int			u;

	*program = NIL;
	*operands = NIL;
	for (t = 1; t <= nsteps; t++)
	{
		bool		after_chain = steps[t - 1].type == JOIN_INNER;

		step_programs[t - 1] = NIL;
		if (steps[t - 1].filter_quals == NIL)
			continue;
		for (u = t + 1; u <= nsteps; u++)
		{
			if (steps[u - 1].type == JOIN_RIGHT || steps[u - 1].type == JOIN_FULL)
				after_chain = false;
		}
		arg.step = after_chain ? 0 : t;
		if (!GpuAggJoinFilterCompile(steps[t - 1].filter_quals, filter_operand_side, &arg,
									 after_chain ? program : &step_programs[t - 1], operands,
									 why))
			return false;
	}
	return true;
}

/*
 * Whether the aggregation can be fed by the device joining the chain steps
 * (bottom up: steps[0]'s outer side is the probe side, each later step's
 * outer side the join of the steps before it); fills sides.  Every child
 * expression, aggregate and join key must come from one side.
 */
static bool
join_sides_try(PlannerInfo *root, const JoinStepFound *steps, int nsteps,
			   List *child_exprs, List *keys, List *aggrefs, GpuAggJoinSides *sides)
{
	List	   *child_sides = NIL;
	List	   *filter_program = NIL;
	List	   *step_programs[GA_AGG_MAX_JOIN_STEPS];
	List	   *filter_operands = NIL;
	StepDeviceKeys step_keys[GA_AGG_MAX_JOIN_STEPS];
	const char *why = NULL;
	double		build_bytes = 0;
	double		build_limit;
	bool		usable;
	ListCell   *lc;
	int			s;
	int			t;
	int			k;

	memset(sides, 0, sizeof(*sides));
	sides->nsides = nsteps + 1;
	sides->paths[0] = linitial(steps[0].path->custom_paths);
	for (s = 1; s <= nsteps; s++)
		sides->paths[s] = lsecond(steps[s - 1].path->custom_paths);
	for (s = 0; s <= nsteps; s++)
	{
		sides->rels[s] = sides->paths[s]->parent;
		sides->targets[s] = create_empty_pathtarget();
	}

	/* each step's outer keys, each from one side below it */
	for (t = 1; t <= nsteps; t++)
	{
		if (!step_device_keys(root, steps, t, sides, &step_keys[t - 1], &why))
			return aggjoin_reject(why);
	}
	foreach(lc, child_exprs)
	{
		Node	   *expr = lfirst(lc);
		int			side = expr_side(root, expr, sides, &why);

		if (side < 0)
			return aggjoin_reject(why);
		if ((why = side_expr_problem(steps, side, nsteps + 1, expr)) != NULL)
			return aggjoin_reject(why);
		/* computed below the joins: not nulled by them (by joins inside its side, yes) */
		add_column_to_pathtarget(sides->targets[side],
								 (Expr *) GpuAggWithoutOuterJoinNulls(root, expr,
																	  sides->rels[side]->relids),
								 0);
		child_sides = lappend_int(child_sides, side);
	}

	/* the filters' operands not among them: more child expressions, last */
	if (!join_filter_try(root, steps, nsteps, sides, &filter_program, step_programs,
						 &filter_operands, &why))
		return aggjoin_reject(why);
	foreach(lc, filter_operands)
	{
		Node	   *expr = lfirst(lc);
		int			side = expr_side(root, expr, sides, &why);

		if (list_member(child_exprs, expr))
			continue;
		add_column_to_pathtarget(sides->targets[side],
								 (Expr *) GpuAggWithoutOuterJoinNulls(root, expr,
																	  sides->rels[side]->relids),
								 0);
		child_sides = lappend_int(child_sides, side);
		sides->extra_exprs = lappend(sides->extra_exprs, expr);
	}

	/* a key whose first row's spelling is kept must come from the probe rows */
	foreach(lc, keys)
	{
		Node	   *key = lfirst(lc);
		Oid			type = getBaseType(exprType(key));

		if (expr_side(root, key, sides, &why) > 0 &&
			(type == FLOAT4OID || type == FLOAT8OID ||
			 (KeyDictTypeSupported(type) && KeyDictHasSpellings(type) &&
			  !KeyDictKeyHasOneSpelling(key))))
			return aggjoin_reject("a group key of a build side with several spellings of one value");
	}
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		int			side = -1;
		List	   *operands;
		int			i;

		if (aggref->aggdistinct != NIL)
			return aggjoin_reject(psprintf("%s: the device joins feed no DISTINCT aggregate",
										   GpuAggAggrefName(aggref)));
		/* the device computes an argument after the joins from any sides' operands */
		if (GpuAggDerivedArgument(aggref, &operands))
			continue;
		/* every column of one aggregate comes from the same side */
		for (i = 0; i < list_length(aggref->args) || (i == 0 && aggref->aggfilter); i++)
		{
			Node	   *arg = aggref->args != NIL ?
				(Node *) GpuAggChildArgument(aggref, i) : (Node *) aggref->aggfilter;
			int			arg_side = expr_side(root, arg, sides, &why);

			if (side >= 0 && arg_side != side)
				return aggjoin_reject(psprintf("%s reads columns of two sides of the joins",
											   GpuAggAggrefName(aggref)));
			side = arg_side;
		}
	}

	/* each side's keys after its expressions: its build key, the outer keys it gives */
	for (s = 0; s <= nsteps; s++)
	{
		for (k = 0; s > 0 && k < step_keys[s - 1].nkeys; k++)
			add_column_to_pathtarget(sides->targets[s],
									 (Expr *) GpuAggWithoutOuterJoinNulls(root,
																		  (Node *) step_keys[s - 1].inner[k],
																		  sides->rels[s]->relids),
									 0);
		for (t = 1; t <= nsteps; t++)
		{
			for (k = 0; k < step_keys[t - 1].nkeys; k++)
			{
				if (step_keys[t - 1].side[k] == s)
					add_column_to_pathtarget(sides->targets[s],
											 (Expr *) GpuAggWithoutOuterJoinNulls(root,
																				  (Node *) step_keys[t - 1].outer[k],
																				  sides->rels[s]->relids),
											 0);
			}
		}
		set_pathtarget_cost_width(root, sides->targets[s]);
		/* a build holds its side's columns of the aggregation and its key */
		if (s > 0)
			build_bytes += sides->paths[s]->rows * (sides->targets[s]->width + 24.0);
	}
	build_limit = GpuAggJoinBuildsLimit(GpuAggPlannedDeviceKind(&usable));
	if (build_bytes > build_limit)
		return aggjoin_reject(psprintf("build sides of about %.0f kB exceed the %.0f kB the device may hold of them (on the CPU device hash_mem, or gpuagg.hashjoin_build_limit when lower)",
										build_bytes / 1024.0, build_limit / 1024.0));

	for (t = 1; t <= nsteps; t++)
	{
		GpuAggJoinPathStep *step = &sides->join.steps[t - 1];
		double		probed = ((Path *) linitial(steps[t - 1].path->custom_paths))->rows;
		double		fraction = Min(1.0, steps[t - 1].path->path.rows / Max(probed, 1.0));

		sides->nkeys += step_keys[t - 1].nkeys;
		step->type = steps[t - 1].type;
		for (k = 0; k < step_keys[t - 1].nkeys; k++)
		{
			step->outer_keys = lappend(step->outer_keys, step_keys[t - 1].outer[k]);
			step->inner_keys = lappend(step->inner_keys, step_keys[t - 1].inner[k]);
			step->key_sides = lappend_int(step->key_sides, step_keys[t - 1].side[k]);
		}
		step->hash_clauses = steps[t - 1].hash_clauses;
		step->filter_quals = steps[t - 1].filter_quals;
		step->match_permille = (int) (fraction * 1000.0 + 0.5);
		step->program = step_programs[t - 1];
	}
	sides->join.nsteps = nsteps;
	sides->join.child_sides = child_sides;
	sides->join.filter_program = filter_program;
	return true;
}

/*
 * Whether the aggregation over input_rel can be fed by the device's join of
 * input_rel's inputs, or of a chain of joins below it (each join's outer
 * side the join below, down to the probe side; as many as qualify, up to
 * GA_AGG_MAX_JOIN_STEPS, fewer when an expression needs a join's result);
 * fills sides (the inputs, each side's target: its expressions of
 * child_exprs, then its keys; the joins' description for
 * the path's custom_private).  keys and aggrefs are the grouping's.
 */
bool
GpuAggJoinSidesFor(PlannerInfo *root, RelOptInfo *input_rel, List *child_exprs,
				   List *keys, List *aggrefs, bool grouping_sets,
				   GpuAggJoinSides *sides)
{
	JoinStepFound found[GA_AGG_MAX_JOIN_STEPS];	/* top down */
	JoinStepFound steps[GA_AGG_MAX_JOIN_STEPS]; /* bottom up */
	RelOptInfo *rel = input_rel;
	const char *why = "the input is not a join GpuHashJoin can compute";
	int			nfound = 0;
	int			depth;
	int			i;

	memset(sides, 0, sizeof(*sides));
	if (!IS_JOIN_REL(input_rel) || !gpuagg_enable_aggjoin)
		return false;
	if (grouping_sets)
		return aggjoin_reject("grouping sets: the device joins feed one grouping");
	while (nfound < GA_AGG_MAX_JOIN_STEPS && IS_JOIN_REL(rel) &&
		   find_join_step(root, rel, &found[nfound], &why))
	{
		rel = ((Path *) linitial(found[nfound].path->custom_paths))->parent;
		nfound++;
	}
	if (nfound == 0)
		return aggjoin_reject(why);
	for (depth = nfound; depth >= 1; depth--)
	{
		for (i = 0; i < depth; i++)
			steps[i] = found[depth - 1 - i];
		if (join_sides_try(root, steps, depth, child_exprs, keys, aggrefs, sides))
			return true;
	}
	return false;
}
