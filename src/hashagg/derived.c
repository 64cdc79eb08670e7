/*-------------------------------------------------------------------------
 *
 * hashagg/derived.c
 *	  Numeric aggregate arguments (+, - and * of bounded operands, or one
 *	  such operand) computed by the device.
 *
 * sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) over numeric(15,2)
 * columns costs native PostgreSQL three numeric operations per row; computed
 * by the child, it would cost gpuagg the same plus four 42-bit limbs a row
 * to send.  Instead, the child computes only the operands, the device evaluates the
 * arithmetic exactly (gpuagg_device.h's derived columns), and only 8 bytes
 * per operand travel:
 *	- a numeric expression of at most 18 digits (a numeric(15,2) column,
 *	  any expression whose type modifier bounds it) as its value * 10^scale
 *	  in an int64, with a validity-only column flagging NaN;
 *	- an integer expression cast to numeric as the integer itself;
 *	- a constant inline, as value * 10^scale.
 * A plain operand (sum(l_quantity)) goes the same way: it then shares its
 * column with the arithmetic over it and needs no infinity flags.  Every
 * value of the argument has exactly the scale and at most the digits
 * finalize/numeric.c's GpuAggNumericBounds derives (PostgreSQL's numeric_add
 * and numeric_sub keep the larger scale, numeric_mul adds the scales), so the
 * device computes value * 10^scale of the whole argument from the operands'
 * scaled integers: an addition aligns its operands' scales by a power of ten,
 * a multiplication multiplies.  Every intermediate value has at most 57
 * digits (the device's 192-bit arithmetic holds 2^190), and the result is
 * summed through the same limbs, or the same int64, as a value computed on
 * the host would be, so the answers are identical.  NaN follows PostgreSQL:
 * an operation with a NaN operand gives NaN; a null operand gives null.  The
 * operands of a constrained type cannot be infinite (PostgreSQL rejects
 * infinity in numeric(p, s)), so neither can the result.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "finalize/numeric.h"
#include "guc.h"
#include "hashagg/catalog.h"
#include "hashagg/derived.h"

/* Most digits of an intermediate value: 10^57 < 2^190 (the device's bound). */
#define DERIVED_MAX_DIGITS 57
/* Most digits of an operand travelling as value * 10^scale in an int64. */
#define DERIVED_OPERAND_DIGITS GPUAGG_NUMERIC_INT64_DIGITS
/* Largest power of ten a SCALE step may apply (gpuagg_device.h). */
#define DERIVED_MAX_POWER 38

/* State of compiling one argument into a program. */
typedef struct DerivedCompile
{
	Aggref	   *aggref;			/* for FILTER */
	List	   *operands;		/* the child expressions of the operands */
	List	   *child_exprs;	/* compiling: the child's output, else NIL */
	GpuAggDerivedDesc *out;		/* compiling: the program, else NULL */
	int			nsteps;
	int			depth;			/* values on the stack */
	int			max_depth;
} DerivedCompile;


/* Append one step to the program; false when it would be too long or deep. */
static bool
derived_emit(DerivedCompile *c, GaExprOp op, const GpuAggDerivedStep *step)
{
	if (c->nsteps >= GA_EXPR_MAX_STEPS)
		return false;
	c->depth += (op == GA_EXPR_COLUMN || op == GA_EXPR_CONST) ? 1 :
		(op == GA_EXPR_SCALE) ? 0 : -1;
	c->max_depth = Max(c->max_depth, c->depth);
	if (c->max_depth > GA_EXPR_MAX_DEPTH)
		return false;
	if (c->out != NULL)
	{
		c->out->steps[c->nsteps] = *step;
		c->out->steps[c->nsteps].op = (int16) op;
	}
	c->nsteps++;
	return true;
}

/* Push an operand the child computes: a COLUMN step of its column. */
static bool
derived_operand(DerivedCompile *c, Expr *operand, Oid type, int scale)
{
	GpuAggDerivedStep step = {0};
	/* under a FILTER, null where the row does not pass: so is the argument */
	Expr	   *child = GpuAggUnderFilter(c->aggref, operand);

	step.type = type;
	step.scale = (int16) scale;
	if (c->out != NULL)
		step.attno = GpuAggChildAttno(c->child_exprs, (Node *) child);
	else if (!list_member(c->operands, child))
		c->operands = lappend(c->operands, child);
	return derived_emit(c, GA_EXPR_COLUMN, &step);
}

/* Multiply the top of the stack by 10^power (aligning an operand's scale). */
static bool
derived_scale(DerivedCompile *c, int power)
{
	GpuAggDerivedStep step = {0};

	if (power == 0)
		return true;
	if (power > DERIVED_MAX_POWER)
		return false;
	step.power = power;
	return derived_emit(c, GA_EXPR_SCALE, &step);
}

/* The function of an operator or function call node, else InvalidOid. */
static Oid
node_function(Node *node, List **args)
{
	if (IsA(node, FuncExpr))
	{
		*args = ((FuncExpr *) node)->args;
		return ((FuncExpr *) node)->funcid;
	}
	if (IsA(node, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) node;

		*args = op->args;
		return OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno);
	}
	return InvalidOid;
}

/*
 * Emit the program computing node * 10^scale, where (*precision, *scale)
 * are GpuAggNumericBounds' bounds of node; false when the node cannot be
 * computed on the device.
 */
static bool
derived_walk(Node *node, DerivedCompile *c, int *precision, int *scale)
{
	List	   *args = NIL;
	Oid			func;
	GpuAggDerivedStep step = {0};
	int			p1,
				s1,
				p2,
				s2;

	while (IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (exprType(node) != NUMERICOID ||
		!GpuAggNumericBounds(node, precision, scale) ||
		*precision > DERIVED_MAX_DIGITS)
		return false;

	if (IsA(node, Const))
	{
		bool		isnan;

		if (((Const *) node)->constisnull || *precision > DERIVED_OPERAND_DIGITS)
			return false;
		step.constant = GpuAggNumericOperand(((Const *) node)->constvalue, *scale, &isnan);
		return !isnan && derived_emit(c, GA_EXPR_CONST, &step);
	}

	func = node_function(node, &args);
	switch (func)
	{
		case F_NUMERIC_INT2:
			return derived_operand(c, linitial(args), INT2OID, 0);
		case F_NUMERIC_INT4:
			return derived_operand(c, linitial(args), INT4OID, 0);
		case F_NUMERIC_INT8:
			return derived_operand(c, linitial(args), INT8OID, 0);
		case F_NUMERIC_UPLUS:
			return derived_walk(linitial(args), c, precision, scale);
		case F_NUMERIC_UMINUS:
			/* -x as 0 - x */
			step.constant = 0;
			return derived_emit(c, GA_EXPR_CONST, &step) &&
				derived_walk(linitial(args), c, &p1, &s1) &&
				derived_emit(c, GA_EXPR_SUB, &step);
		case F_NUMERIC_ADD:
		case F_NUMERIC_SUB:
			/* both operands at the larger scale, as numeric_add computes */
			if (!derived_walk(linitial(args), c, &p1, &s1) ||
				!derived_scale(c, *scale - s1) ||
				!derived_walk(lsecond(args), c, &p2, &s2) ||
				!derived_scale(c, *scale - s2))
				return false;
			return derived_emit(c, func == F_NUMERIC_ADD ?
								GA_EXPR_ADD : GA_EXPR_SUB, &step);
		case F_NUMERIC_MUL:
			return derived_walk(linitial(args), c, &p1, &s1) &&
				derived_walk(lsecond(args), c, &p2, &s2) &&
				derived_emit(c, GA_EXPR_MUL, &step);
	}

	/* anything else of a bounded type is an operand the child computes */
	if (*precision > DERIVED_OPERAND_DIGITS)
		return false;
	return derived_operand(c, (Expr *) node, NUMERICOID, *scale);
}

/*
 * The aggregate's argument, when the setting lets the device compute it.
 * A plain operand (sum(l_quantity)) qualifies too: it then shares its
 * column with the arithmetic over it (TPC-H Q1 sums l_quantity and
 * multiplies it), and needs no flags for the infinities.
 */
static Node *
derived_root(Aggref *aggref)
{
	Node	   *arg;

	if (!gpuagg_numeric_on_device || list_length(aggref->args) != 1 ||
		aggref->aggdistinct != NIL || aggref->aggorder != NIL)
		return NULL;
	arg = (Node *) linitial_node(TargetEntry, aggref->args)->expr;
	while (IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	return arg;
}

/*
 * Whether the device computes this aggregate's argument: sum, avg, min or
 * max of a numeric +, -, * expression whose operands qualify, or of one
 * operand (see the file comment); *operands is then the list of the child
 * expressions the device needs instead of the argument.  The same answer
 * for the same aggregate every time (hashagg/path.c's child target,
 * aggjoin/path.c's sides and hashagg/private.c's description all ask).
 */
bool
GpuAggDerivedArgument(Aggref *aggref, List **operands)
{
	DerivedCompile c = {0};
	Node	   *root = derived_root(aggref);
	GpuAggKind	kind;
	Oid			input_type;
	int			scale,
				precision,
				arg_scale,
				arg_precision;
	bool		distinct;
	const char *why;

	*operands = NIL;
	if (root == NULL ||
		!GpuAggClassifyAggref(aggref, &kind, &input_type, &scale, &precision,
							  &distinct, &why) ||
		input_type != NUMERICOID ||
		(kind != GPUAGG_SUM && kind != GPUAGG_AVG && kind != GPUAGG_MIN && kind != GPUAGG_MAX))
		return false;
	c.aggref = aggref;
	if (!derived_walk(root, &c, &arg_precision, &arg_scale) ||
		arg_scale != scale || arg_precision != precision)
		return false;
	*operands = c.operands;
	return true;
}

/*
 * The program of an aggregate GpuAggDerivedArgument accepted, its operands
 * columns of the child whose output is child_exprs.
 */
GpuAggDerivedDesc *
GpuAggDerivedCompile(Aggref *aggref, List *child_exprs)
{
	DerivedCompile c = {0};
	int			precision,
				scale;

	c.aggref = aggref;
	c.child_exprs = child_exprs;
	c.out = palloc0(sizeof(GpuAggDerivedDesc));
	if (!derived_walk(derived_root(aggref), &c, &precision, &scale))
		elog(ERROR, "gpuagg: a numeric argument computed on the device no longer compiles");
	c.out->nsteps = c.nsteps;
	return c.out;
}
