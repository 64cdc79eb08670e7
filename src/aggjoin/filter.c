/*-------------------------------------------------------------------------
 *
 * aggjoin/filter.c
 *	  An aggjoin's filter: an INNER join's conditions besides
 *	  its keys' equalities (ON a.k = b.k AND a.v > b.w, or a WHERE clause
 *	  over two sides, like TPC-H Q7's nation pair), compiled into the
 *	  device's filter program (gpuagg_device.h, GaAggJoinSpec's filter),
 *	  which the device runs over the chain's joined rows before it
 *	  aggregates them.
 *
 * A condition qualifies when it is AND, OR and NOT over leaves of two
 * kinds:
 *	- a boolean expression of one side (n1.n_name = 'FRANCE'), which that
 *	  side computes as a column: any expression aggjoin/path.c lets a side
 *	  compute (the caller's operand check);
 *	- a comparison (<, <=, =, <>, >=, >) of two expressions, each of one
 *	  side, by the default btree operator family of their types when those
 *	  are integers (int2, int4, int8, mixed), floats (float4, float8,
 *	  mixed), or both date, both timestamp, both timestamptz or both bool:
 *	  values the device holds exactly (integers, days, microseconds) or as
 *	  the doubles PostgreSQL compares (float8 comparisons, NaN above all);
 *	- = or <> of two expressions of one key dictionary type (text,
 *	  varchar, bpchar, numeric, uuid, interval; a deterministic collation),
 *	  by that type's own equality: both operands travel as ids of one
 *	  dictionary (hashagg/layout.c), equal exactly when the values are.
 * The device evaluates AND, OR and NOT with SQL's three values, a
 * comparison with a null operand is null, and a row is kept only where
 * the whole condition is true: as PostgreSQL's join qual does.
 *
 * The compiled program is a List of steps (it travels in the path's
 * custom_private), each a List of the fields FilterProgramIndex names: the
 * operation (Integer, GaFilterOp), the comparison (Integer, GaCompareOp),
 * then the step's operand expressions (one for BOOL, two for COMPARE);
 * several conditions are ANDed.  The operands are also returned, distinct,
 * for the sides to compute.  At plan time GpuAggJoinFilterDescribe turns
 * a program into the description's (GpuAggFilterDesc), each operand a
 * child column.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_am_d.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "aggjoin/aggjoin.h"
#include "batch/key_dict.h"
#include "compat.h"
#include "custom_private.h"
#include "hashagg/catalog.h"

/* The fields of a program's step. */
enum FilterProgramIndex
{
	FILTER_PROGRAM_OP,			/* Integer: GaFilterOp */
	FILTER_PROGRAM_CMP,			/* Integer: GaCompareOp */
	FILTER_PROGRAM_OPERAND,		/* BOOL, COMPARE: an expression */
	FILTER_PROGRAM_OPERAND2		/* COMPARE: the other expression */
};

/* What compiling the conditions builds up. */
typedef struct FilterCompile
{
	GpuAggJoinFilterOperandSide side_of;
	void	   *arg;
	List	   *program;
	List	   *operands;
	int			depth;			/* values the program holds at its end */
	int			max_depth;
	const char *why;
} FilterCompile;

/*
 * Which comparison family a type belongs to for the device: 1 integers,
 * 2 floats, or the type itself for types compared only with themselves
 * (date, timestamp, timestamptz, bool); 0 for none.
 */
static Oid
filter_type_class(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return 1;
		case FLOAT4OID:
		case FLOAT8OID:
			return 2;
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
			return type;
	}
	return 0;
}

/*
 * The device comparison of operator opno over (left, right) base types,
 * when it is a btree comparison of the left type's default btree family
 * (so its meaning is the types' natural order, not a user's opclass) and
 * the types are of one device class; or, for one type of a key dictionary
 * (batch/key_dict.c) on both sides under a deterministic collation (collid),
 * that type's own equality or its negator, which the device checks on the
 * ids of one dictionary for both operands (hashagg/layout.c); false otherwise.
 */
static bool
filter_comparison(Oid opno, Oid left, Oid right, Oid collid, GaCompareOp *cmp)
{
	Oid			opclass;
	Oid			family;
	List	   *interpretations;
	ListCell   *lc;
	const char *why;

	if (left == right && KeyDictTypeSupported(left) &&
		GpuAggKeyTypeSupported(left, collid, "the comparison", &why))
	{
		Oid			eq = lookup_type_cache(left, TYPECACHE_EQ_OPR)->eq_opr;

		if (!OidIsValid(eq) || (opno != eq && opno != get_negator(eq)))
			return false;
		*cmp = opno == eq ? GA_CMP_EQ : GA_CMP_NE;
		return true;
	}
	if (filter_type_class(left) == 0 || filter_type_class(left) != filter_type_class(right))
		return false;
	opclass = GetDefaultOpClass(left, BTREE_AM_OID);
	if (!OidIsValid(opclass))
		return false;
	family = get_opclass_family(opclass);
	interpretations = GpuAggOpInterpretations(opno);
	foreach(lc, interpretations)
	{
		GpuAggOpInterpretation *interp = lfirst(lc);

		if (interp->opfamily_id != family || interp->oplefttype != left ||
			interp->oprighttype != right)
			continue;
		/* compat.h: 1 <, 2 <=, 3 =, 4 >=, 5 >, 6 <> on every version */
		switch (GpuAggOpComparison(interp))
		{
			case 1:
				*cmp = GA_CMP_LT;
				return true;
			case 2:
				*cmp = GA_CMP_LE;
				return true;
			case 3:
				*cmp = GA_CMP_EQ;
				return true;
			case 4:
				*cmp = GA_CMP_GE;
				return true;
			case 5:
				*cmp = GA_CMP_GT;
				return true;
			case 6:
				*cmp = GA_CMP_NE;
				return true;
		}
	}
	return false;
}

/* Append a step (op, cmp, operands) to the program, noting its depth. */
static void
filter_emit(FilterCompile *fc, GaFilterOp op, GaCompareOp cmp, Node *a, Node *b)
{
	List	   *step = GpuAggPrivateFields(FILTER_PROGRAM_OPERAND);

	GpuAggPrivateSet(step, FILTER_PROGRAM_OP, makeInteger((int) op));
	GpuAggPrivateSet(step, FILTER_PROGRAM_CMP, makeInteger((int) cmp));
	if (a != NULL)
	{
		step = lappend(step, a);
		fc->operands = list_append_unique(fc->operands, a);
	}
	if (b != NULL)
	{
		step = lappend(step, b);
		fc->operands = list_append_unique(fc->operands, b);
	}
	fc->program = lappend(fc->program, step);
	if (op == GA_FILTER_BOOL || op == GA_FILTER_COMPARE)
		fc->depth++;
	else if (op != GA_FILTER_NOT)
		fc->depth--;
	fc->max_depth = Max(fc->max_depth, fc->depth);
}

/* Whether expr is computed by one side that may compute it (the caller's check). */
static bool
filter_one_side(FilterCompile *fc, Node *expr)
{
	const char *why = NULL;

	if (fc->side_of(expr, fc->arg, &why) >= 0)
		return true;
	if (why != NULL && fc->why == NULL)
		fc->why = why;
	return false;
}

/* Compile one condition (a node of AND, OR, NOT over leaves); false if it does not qualify. */
static bool
filter_compile_node(FilterCompile *fc, Node *node)
{
	if (IsA(node, BoolExpr))
	{
		BoolExpr   *b = (BoolExpr *) node;
		ListCell   *lc;
		bool		first = true;

		foreach(lc, b->args)
		{
			if (!filter_compile_node(fc, lfirst(lc)))
				return false;
			if (b->boolop == NOT_EXPR)
				filter_emit(fc, GA_FILTER_NOT, GA_CMP_EQ, NULL, NULL);
			else if (!first)
				filter_emit(fc, b->boolop == AND_EXPR ? GA_FILTER_AND : GA_FILTER_OR,
							GA_CMP_EQ, NULL, NULL);
			first = false;
		}
		return true;
	}
	if (IsA(node, OpExpr) && list_length(((OpExpr *) node)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) node;
		Node	   *left = linitial(op->args);
		Node	   *right = lsecond(op->args);
		GaCompareOp cmp;

		/* a comparison of two sides' values, unless one side computes it whole */
		if (filter_comparison(op->opno, getBaseType(exprType(left)),
							  getBaseType(exprType(right)), op->inputcollid, &cmp) &&
			!filter_one_side(fc, node))
		{
			fc->why = NULL;
			if (!filter_one_side(fc, left) || !filter_one_side(fc, right))
				return false;
			filter_emit(fc, GA_FILTER_COMPARE, cmp, left, right);
			return true;
		}
	}
	if (getBaseType(exprType(node)) == BOOLOID && filter_one_side(fc, node))
	{
		filter_emit(fc, GA_FILTER_BOOL, GA_CMP_EQ, node, NULL);
		return true;
	}
	if (fc->why == NULL)
		fc->why = "a join condition that is neither a comparison of two sides' values nor AND, OR, NOT over such comparisons and one side's conditions";
	return false;
}

/*
 * Compile an INNER join's conditions besides its keys (quals, ANDed) into
 * the device's filter program (see the head of this file), appending to
 * *program (ANDed with what it holds) and the distinct operands to
 * *operands.  side_of(expr, arg, &why) says which side computes an
 * operand, or -1 (with why) when none may.  False with *why set when a
 * condition does not qualify or the program grows beyond the device's
 * limits; *program and *operands are then unchanged.
 */
bool
GpuAggJoinFilterCompile(List *quals, GpuAggJoinFilterOperandSide side_of, void *arg,
						List **program, List **operands, const char **why)
{
	FilterCompile fc;
	ListCell   *lc;

	memset(&fc, 0, sizeof(fc));
	fc.side_of = side_of;
	fc.arg = arg;
	fc.program = list_copy(*program);
	fc.operands = list_copy(*operands);
	fc.depth = fc.program != NIL ? 1 : 0;
	fc.max_depth = fc.depth;
	foreach(lc, quals)
	{
		bool		had = fc.depth > 0;

		if (!filter_compile_node(&fc, lfirst(lc)))
		{
			*why = fc.why;
			return false;
		}
		if (had)
			filter_emit(&fc, GA_FILTER_AND, GA_CMP_EQ, NULL, NULL);
	}
	if (list_length(fc.program) > GA_FILTER_MAX_STEPS || fc.max_depth > GA_FILTER_MAX_DEPTH)
	{
		*why = "join conditions too long for the device's filter";
		return false;
	}
	*program = fc.program;
	*operands = fc.operands;
	return true;
}

/*
 * The description's form of a compiled program: each step's operation,
 * comparison and operands as columns of the child whose output is
 * child_exprs.
 */
void
GpuAggJoinFilterDescribe(GpuAggFilterDesc *filter, List *child_exprs, List *program)
{
	ListCell   *lc;
	int			i = 0;

	memset(filter, 0, sizeof(*filter));
	filter->nsteps = list_length(program);
	if (filter->nsteps > GA_FILTER_MAX_STEPS)
		elog(ERROR, "gpuagg: a join filter of %d steps", filter->nsteps);
	foreach(lc, program)
	{
		List	   *step = lfirst(lc);

		filter->steps[i].op = (int16) intVal(list_nth(step, FILTER_PROGRAM_OP));
		filter->steps[i].cmp = (int16) intVal(list_nth(step, FILTER_PROGRAM_CMP));
		if (list_length(step) > FILTER_PROGRAM_OPERAND)
		{
			Node	   *operand = list_nth(step, FILTER_PROGRAM_OPERAND);

			filter->steps[i].attno = GpuAggChildAttno(child_exprs, operand);
			filter->steps[i].type = getBaseType(exprType(operand));
		}
		if (list_length(step) > FILTER_PROGRAM_OPERAND2)
		{
			Node	   *operand = list_nth(step, FILTER_PROGRAM_OPERAND2);

			filter->steps[i].attno2 = GpuAggChildAttno(child_exprs, operand);
			filter->steps[i].type2 = getBaseType(exprType(operand));
		}
		i++;
	}
}
