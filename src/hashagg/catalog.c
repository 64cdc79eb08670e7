/*-------------------------------------------------------------------------
 *
 * hashagg/catalog.c
 *	  The table of what GpuHashAgg supports: aggregates (by name, argument
 *	  type and result type, all in pg_catalog) and group key types, and how
 *	  each value is encoded into a batch column: integers, dates, times and
 *	  timestamps as integers, floats as canonical bits, bool as 0/1, text,
 *	  varchar, bpchar, numeric, uuid and interval through dictionaries.
 *
 * Anything not listed keeps PostgreSQL's plan.  Results must equal
 * PostgreSQL's, so each entry also states the result type PostgreSQL
 * declares; an Aggref whose type differs is not ours.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "batch/key_dict.h"
#include "devices.h"
#include "finalize/numeric.h"
#include "guc.h"
#include "hashagg/catalog.h"

/* One supported aggregate: name(input) returns result. */
typedef struct SupportedAggregate
{
	const char *name;
	GpuAggKind	kind;
	Oid			input_type;		/* InvalidOid: any type (count) */
	Oid			result_type;	/* InvalidOid: same as the input */
} SupportedAggregate;

static const SupportedAggregate supported_aggregates[] = {
	{"count", GPUAGG_COUNT, InvalidOid, INT8OID},
	{"sum", GPUAGG_SUM, INT2OID, INT8OID},
	{"sum", GPUAGG_SUM, INT4OID, INT8OID},
	{"sum", GPUAGG_SUM, INT8OID, NUMERICOID},
	{"sum", GPUAGG_SUM, FLOAT4OID, FLOAT4OID},
	{"sum", GPUAGG_SUM, FLOAT8OID, FLOAT8OID},
	{"avg", GPUAGG_AVG, INT2OID, NUMERICOID},
	{"avg", GPUAGG_AVG, INT4OID, NUMERICOID},
	{"avg", GPUAGG_AVG, INT8OID, NUMERICOID},
	{"avg", GPUAGG_AVG, FLOAT4OID, FLOAT8OID},
	{"avg", GPUAGG_AVG, FLOAT8OID, FLOAT8OID},
	{"min", GPUAGG_MIN, INT2OID, InvalidOid},
	{"min", GPUAGG_MIN, INT4OID, InvalidOid},
	{"min", GPUAGG_MIN, INT8OID, InvalidOid},
	{"min", GPUAGG_MIN, FLOAT4OID, InvalidOid},
	{"min", GPUAGG_MIN, FLOAT8OID, InvalidOid},
	{"min", GPUAGG_MIN, DATEOID, InvalidOid},
	{"min", GPUAGG_MIN, TIMESTAMPOID, InvalidOid},
	{"max", GPUAGG_MAX, INT2OID, InvalidOid},
	{"max", GPUAGG_MAX, INT4OID, InvalidOid},
	{"max", GPUAGG_MAX, INT8OID, InvalidOid},
	{"max", GPUAGG_MAX, FLOAT4OID, InvalidOid},
	{"max", GPUAGG_MAX, FLOAT8OID, InvalidOid},
	{"max", GPUAGG_MAX, DATEOID, InvalidOid},
	{"max", GPUAGG_MAX, TIMESTAMPOID, InvalidOid},
	{"min", GPUAGG_MIN, TIMESTAMPTZOID, InvalidOid},
	{"max", GPUAGG_MAX, TIMESTAMPTZOID, InvalidOid},
	{"min", GPUAGG_MIN, TIMEOID, InvalidOid},
	{"max", GPUAGG_MAX, TIMEOID, InvalidOid},
	{"bool_and", GPUAGG_BOOL_AND, BOOLOID, BOOLOID},
	{"every", GPUAGG_BOOL_AND, BOOLOID, BOOLOID},
	{"bool_or", GPUAGG_BOOL_OR, BOOLOID, BOOLOID},
	{"var_samp", GPUAGG_VAR_SAMP, INT2OID, NUMERICOID},
	{"var_samp", GPUAGG_VAR_SAMP, INT4OID, NUMERICOID},
	{"var_samp", GPUAGG_VAR_SAMP, INT8OID, NUMERICOID},
	{"var_samp", GPUAGG_VAR_SAMP, NUMERICOID, NUMERICOID},
	{"variance", GPUAGG_VAR_SAMP, INT2OID, NUMERICOID},
	{"variance", GPUAGG_VAR_SAMP, INT4OID, NUMERICOID},
	{"variance", GPUAGG_VAR_SAMP, INT8OID, NUMERICOID},
	{"variance", GPUAGG_VAR_SAMP, NUMERICOID, NUMERICOID},
	{"var_pop", GPUAGG_VAR_POP, INT2OID, NUMERICOID},
	{"var_pop", GPUAGG_VAR_POP, INT4OID, NUMERICOID},
	{"var_pop", GPUAGG_VAR_POP, INT8OID, NUMERICOID},
	{"var_pop", GPUAGG_VAR_POP, NUMERICOID, NUMERICOID},
	{"stddev_samp", GPUAGG_STDDEV_SAMP, INT2OID, NUMERICOID},
	{"stddev_samp", GPUAGG_STDDEV_SAMP, INT4OID, NUMERICOID},
	{"stddev_samp", GPUAGG_STDDEV_SAMP, INT8OID, NUMERICOID},
	{"stddev_samp", GPUAGG_STDDEV_SAMP, NUMERICOID, NUMERICOID},
	{"stddev", GPUAGG_STDDEV_SAMP, INT2OID, NUMERICOID},
	{"stddev", GPUAGG_STDDEV_SAMP, INT4OID, NUMERICOID},
	{"stddev", GPUAGG_STDDEV_SAMP, INT8OID, NUMERICOID},
	{"stddev", GPUAGG_STDDEV_SAMP, NUMERICOID, NUMERICOID},
	{"stddev_pop", GPUAGG_STDDEV_POP, INT2OID, NUMERICOID},
	{"stddev_pop", GPUAGG_STDDEV_POP, INT4OID, NUMERICOID},
	{"stddev_pop", GPUAGG_STDDEV_POP, INT8OID, NUMERICOID},
	{"stddev_pop", GPUAGG_STDDEV_POP, NUMERICOID, NUMERICOID},
	{"sum", GPUAGG_SUM, NUMERICOID, NUMERICOID},
	{"avg", GPUAGG_AVG, NUMERICOID, NUMERICOID},
	{"min", GPUAGG_MIN, NUMERICOID, NUMERICOID},
	{"max", GPUAGG_MAX, NUMERICOID, NUMERICOID},
	{"var_samp", GPUAGG_FLOAT_MOMENTS, FLOAT4OID, FLOAT8OID},
	{"var_samp", GPUAGG_FLOAT_MOMENTS, FLOAT8OID, FLOAT8OID},
	{"variance", GPUAGG_FLOAT_MOMENTS, FLOAT4OID, FLOAT8OID},
	{"variance", GPUAGG_FLOAT_MOMENTS, FLOAT8OID, FLOAT8OID},
	{"var_pop", GPUAGG_FLOAT_MOMENTS, FLOAT4OID, FLOAT8OID},
	{"var_pop", GPUAGG_FLOAT_MOMENTS, FLOAT8OID, FLOAT8OID},
	{"stddev_samp", GPUAGG_FLOAT_MOMENTS, FLOAT4OID, FLOAT8OID},
	{"stddev_samp", GPUAGG_FLOAT_MOMENTS, FLOAT8OID, FLOAT8OID},
	{"stddev", GPUAGG_FLOAT_MOMENTS, FLOAT4OID, FLOAT8OID},
	{"stddev", GPUAGG_FLOAT_MOMENTS, FLOAT8OID, FLOAT8OID},
	{"stddev_pop", GPUAGG_FLOAT_MOMENTS, FLOAT4OID, FLOAT8OID},
	{"stddev_pop", GPUAGG_FLOAT_MOMENTS, FLOAT8OID, FLOAT8OID},
};

/*
 * The aggregates of two float8 arguments (y, x), all with the transition
 * float8_regr_accum() (regr_count: a count of the same rows), computed
 * from device COMOMENTS (finalize/moments.c).
 */
static const SupportedAggregate supported_float8_pairs[] = {
	{"corr", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"covar_pop", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"covar_samp", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_avgx", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_avgy", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_intercept", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_r2", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_slope", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_sxx", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_sxy", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_syy", GPUAGG_FLOAT_COMOMENTS, FLOAT8OID, FLOAT8OID},
	{"regr_count", GPUAGG_REGR_COUNT, FLOAT8OID, INT8OID},
};

/*
 * An aggregate call as PostgreSQL names a function in its messages, with
 * the types of the arguments it is called with: string_agg(text, text),
 * count(*), percentile_cont(double precision ORDER BY double precision);
 * schema-qualified outside pg_catalog.
 */
char *
GpuAggAggrefName(Aggref *aggref)
{
	StringInfoData buf;
	char	   *name = get_func_name(aggref->aggfnoid);
	Oid			namespace = get_func_namespace(aggref->aggfnoid);
	ListCell   *lc;
	bool		first = true;

	initStringInfo(&buf);
	if (name == NULL)
	{
		appendStringInfo(&buf, "aggregate %u", aggref->aggfnoid);
		return buf.data;
	}
	if (namespace != PG_CATALOG_NAMESPACE)
		appendStringInfo(&buf, "%s.", quote_identifier(get_namespace_name(namespace)));
	appendStringInfo(&buf, "%s(", quote_identifier(name));
	if (aggref->aggstar)
		appendStringInfoChar(&buf, '*');
	foreach(lc, aggref->aggdirectargs)
	{
		appendStringInfo(&buf, "%s%s", first ? "" : ", ",
						 format_type_be(exprType((Node *) lfirst(lc))));
		first = false;
	}
	if (AGGKIND_IS_ORDERED_SET(aggref->aggkind))
	{
		appendStringInfoString(&buf, first ? "ORDER BY " : " ORDER BY ");
		first = true;
	}
	else if (aggref->aggdistinct != NIL)
		appendStringInfoString(&buf, "DISTINCT ");
	foreach(lc, aggref->args)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (tle->resjunk)
			continue;
		appendStringInfo(&buf, "%s%s", first ? "" : ", ",
						 format_type_be(exprType((Node *) tle->expr)));
		first = false;
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/*
 * The argument types a device takes for aggregates named name, as a list
 * for a message ("smallint, integer, bigint and numeric"); NULL when no
 * aggregate of that name runs on a device.
 */
static char *
supported_input_types(const char *name)
{
	Oid			types[lengthof(supported_aggregates)];
	int			ntypes = 0;
	StringInfoData buf;
	int			i;
	int			t;

	for (i = 0; i < lengthof(supported_aggregates); i++)
	{
		if (strcmp(supported_aggregates[i].name, name) != 0)
			continue;
		for (t = 0; t < ntypes; t++)
			if (types[t] == supported_aggregates[i].input_type)
				break;
		if (t == ntypes)
			types[ntypes++] = supported_aggregates[i].input_type;
	}
	if (ntypes == 0)
		return NULL;
	initStringInfo(&buf);
	for (t = 0; t < ntypes; t++)
		appendStringInfo(&buf, "%s%s", t == 0 ? "" : t == ntypes - 1 ? " and " : ", ",
						 OidIsValid(types[t]) ? format_type_be(types[t]) : "any type");
	return buf.data;
}

/*
 * Classify an aggregate of two arguments: one of supported_float8_pairs
 * over two float8 expressions.
 */
static bool
classify_float8_pair(Aggref *aggref, const char *name, GpuAggKind *kind, Oid *input_type,
					 const char **why)
{
	int			i;
	ListCell   *lc;

	foreach(lc, aggref->args)
	{
		Node	   *arg = (Node *) lfirst_node(TargetEntry, lc)->expr;

		if (getBaseType(exprType(arg)) != FLOAT8OID)
			break;
	}
	for (i = 0; lc == NULL && i < lengthof(supported_float8_pairs); i++)
	{
		if (strcmp(supported_float8_pairs[i].name, name) != 0 ||
			getBaseType(aggref->aggtype) != supported_float8_pairs[i].result_type)
			continue;
		*kind = supported_float8_pairs[i].kind;
		*input_type = FLOAT8OID;
		return true;
	}
	*why = psprintf("%s does not run on a device: of the aggregates of two arguments, "
					"only corr, covar_pop, covar_samp and the regr_* family of double precision do",
					GpuAggAggrefName(aggref));
	return false;
}

/*
 * Whether an aggregate over DISTINCT values can run on a device (see
 * finalize/distinct.c): count of any key type, sum and avg of integers, floats
 * and bounded numerics (their values all have one scale, so that equal
 * values are the same value); min, max, bool_and and bool_or do not care
 * about duplicates.
 */
static bool
distinct_supported(Aggref *aggref, GpuAggKind kind, Oid argtype, Oid collation,
				   bool *distinct, const char **why)
{
	switch (kind)
	{
		case GPUAGG_MIN:
		case GPUAGG_MAX:
		case GPUAGG_BOOL_AND:
		case GPUAGG_BOOL_OR:
			*distinct = false;	/* the same result without DISTINCT */
			return true;
		case GPUAGG_COUNT:
			break;
		case GPUAGG_SUM:
		case GPUAGG_AVG:
			if (argtype != INT2OID && argtype != INT4OID && argtype != INT8OID &&
				argtype != FLOAT4OID && argtype != FLOAT8OID && argtype != NUMERICOID)
			{
				*why = psprintf("%s does not run on a device: sum and avg of DISTINCT values do "
								"for integers, floats and numeric",
								GpuAggAggrefName(aggref));
				return false;
			}
			break;
		default:
			*why = psprintf("%s does not run on a device: of the aggregates over DISTINCT values, "
							"only count, sum, avg, min, max, bool_and, bool_or and every do",
							GpuAggAggrefName(aggref));
			return false;
	}
	if (!GpuAggKeyTypeSupported(argtype, collation,
								psprintf("the DISTINCT argument of %s", GpuAggAggrefName(aggref)),
								why))
		return false;
	*distinct = true;
	return true;
}

/*
 * Whether a numeric aggregate of this kind over expr can run on a device,
 * and at which scale and with how many digits its values travel.
 */
static bool
numeric_supported(Aggref *aggref, GpuAggKind kind, Node *expr, int *scale, int *precision,
				  const char **why)
{
	int			max_digits = (kind == GPUAGG_MIN || kind == GPUAGG_MAX) ?
		GPUAGG_NUMERIC_INT64_DIGITS : GPUAGG_NUMERIC_MAX_DIGITS;

	if (!GpuAggNumericBounds(expr, precision, scale))
	{
		*why = psprintf("%s: its numeric argument has no precision and scale (a column "
						"without a type modifier, a division or a function); cast the "
						"argument to numeric(p,s) with p at most %d",
						GpuAggAggrefName(aggref), max_digits);
		return false;
	}
	if (*precision > max_digits)
	{
		*why = psprintf("%s: its numeric argument may have %d digits, more than the %d a "
						"device holds exactly; cast the argument to numeric(p,s) with p at most %d",
						GpuAggAggrefName(aggref), *precision, max_digits, max_digits);
		return false;
	}
	return true;
}

/* check_functions_in_node() callback: remember a volatile function. */
static bool
volatile_function_checker(Oid func_id, void *context)
{
	if (func_volatile(func_id) != PROVOLATILE_VOLATILE)
		return false;
	*(Oid *) context = func_id;
	return true;
}

/* Walk an expression for its first volatile function (*func_id). */
static bool
volatile_function_walker(Node *node, Oid *func_id)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, volatile_function_checker, func_id))
		return true;
	if (IsA(node, NextValueExpr))
	{
		*func_id = F_NEXTVAL;
		return true;
	}
	return expression_tree_walker(node, volatile_function_walker, func_id);
}

/*
 * The volatile function an expression calls, as "name()" for a message;
 * NULL when it calls none (contain_volatile_functions()'s test).
 */
char *
GpuAggVolatileFunction(Node *node)
{
	Oid			func_id = InvalidOid;

	if (!volatile_function_walker(node, &func_id))
		return NULL;
	return psprintf("%s()", quote_identifier(get_func_name(func_id)));
}

/* Set *why to "<the aggregate> <what>"; always returns false. */
static bool
aggref_reject(Aggref *aggref, const char *what, const char **why)
{
	*why = psprintf("%s %s", GpuAggAggrefName(aggref), what);
	return false;
}

/*
 * Decide whether an Aggref can run on a device; on success set its kind,
 * the argument's type, the scale and precision of a numeric argument and
 * whether it aggregates DISTINCT values.  *why says what is unsupported
 * otherwise.
 */
bool
GpuAggClassifyAggref(Aggref *aggref, GpuAggKind *kind, Oid *input_type,
					 int *numeric_scale, int *numeric_precision, bool *distinct,
					 const char **why)
{
	const char *name;
	Oid			argtype = InvalidOid;
	Node	   *arg;
	char	   *types;
	int			i;

	*numeric_scale = 0;
	*numeric_precision = 0;
	*distinct = false;
	if (AGGKIND_IS_ORDERED_SET(aggref->aggkind))
		return aggref_reject(aggref, "is an ordered-set aggregate (WITHIN GROUP)", why);
	if (aggref->aggorder != NIL)
		return aggref_reject(aggref, "orders its input (ORDER BY in the call), and a device "
							 "aggregates rows in no order", why);
	if (aggref->aggdistinct != NIL && list_length(aggref->args) != 1)
		return aggref_reject(aggref, "takes DISTINCT over several arguments", why);
	if (aggref->agglevelsup != 0)
		return aggref_reject(aggref, "is an aggregate of an outer query", why);
	if (aggref->aggsplit != AGGSPLIT_SIMPLE)
		return aggref_reject(aggref, "is a partial aggregation", why);
	if (aggref->aggvariadic)
		return aggref_reject(aggref, "is called with VARIADIC", why);
	if (get_func_namespace(aggref->aggfnoid) != PG_CATALOG_NAMESPACE)
		return aggref_reject(aggref, "is not a built-in aggregate (a device runs only "
							 "aggregates of pg_catalog)", why);
	name = get_func_name(aggref->aggfnoid);
	if (name == NULL)
		return aggref_reject(aggref, "does not exist", why);

	if (aggref->aggstar)
	{
		if (strcmp(name, "count") != 0)
			return aggref_reject(aggref, "does not run on a device", why);
		*kind = GPUAGG_COUNT_STAR;
		*input_type = InvalidOid;
		return true;
	}
	if (list_length(aggref->args) == 2)
		return classify_float8_pair(aggref, name, kind, input_type, why);
	if (list_length(aggref->args) != 1)
		return aggref_reject(aggref, "does not run on a device: aggregates of more than two "
							 "arguments do not", why);
	arg = (Node *) linitial_node(TargetEntry, aggref->args)->expr;
	argtype = getBaseType(exprType(arg));

	for (i = 0; i < lengthof(supported_aggregates); i++)
	{
		const SupportedAggregate *entry = &supported_aggregates[i];
		Oid			result_type;

		if (strcmp(entry->name, name) != 0)
			continue;
		if (OidIsValid(entry->input_type) && entry->input_type != argtype)
			continue;
		result_type = OidIsValid(entry->result_type) ? entry->result_type : argtype;
		if (getBaseType(aggref->aggtype) != result_type)
			continue;
		*kind = entry->kind;
		*input_type = OidIsValid(entry->input_type) ? argtype : InvalidOid;
		if (aggref->aggdistinct != NIL)
		{
			if (!distinct_supported(aggref, entry->kind, argtype, exprCollation(arg),
									distinct, why))
				return false;
			if (*distinct)
				*input_type = argtype;	/* count(DISTINCT x) needs x's type */
		}
		if (*input_type == NUMERICOID && (!*distinct || entry->kind != GPUAGG_COUNT) &&
			!numeric_supported(aggref, entry->kind, arg, numeric_scale, numeric_precision, why))
			return false;
		return true;
	}
	types = supported_input_types(name);
	if (types != NULL)
		*why = psprintf("%s does not run on a device: %s does over %s",
						GpuAggAggrefName(aggref), name, types);
	else
		*why = psprintf("%s does not run on a device: of the aggregates of one argument, "
						"only count, sum, avg, min, max, bool_and, bool_or, every and the "
						"variances and standard deviations do",
						GpuAggAggrefName(aggref));
	return false;
}

/*
 * For an argument that converts a plain column to float8 (int2, int4, int8 or
 * float4 to float8, implicitly as in corr(int_column, ...) or by a cast): the
 * column itself, so that the child plan outputs table columns (which the
 * direct scan reads without projecting) and batch/builder.c converts the
 * value while encoding it, exactly as those casts do (a C conversion to
 * double; all but int8's are exact, and int8's rounds the same way).  Only
 * for aggregates that read the argument as a float8 column (not DISTINCT,
 * whose values are keys); any other argument is returned unchanged.
 */
static Expr *
float8_source_column(Aggref *aggref, Expr *arg)
{
	FuncExpr   *cast = (FuncExpr *) arg;

	if (aggref->aggdistinct != NIL || !IsA(arg, FuncExpr) || list_length(cast->args) != 1 ||
		!IsA(linitial(cast->args), Var))
		return arg;
	if (cast->funcid != F_FLOAT8_INT2 && cast->funcid != F_FLOAT8_INT4 &&
		cast->funcid != F_FLOAT8_INT8 && cast->funcid != F_FLOAT8_FLOAT4)
		return arg;
	return (Expr *) linitial(cast->args);
}

/*
 * expr as the child computes it for an aggregate: under FILTER, CASE WHEN
 * filter THEN expr END.  PostgreSQL only evaluates the arguments of rows
 * that pass the filter (so 10 / x FILTER (WHERE x <> 0) raises no error),
 * and a row that does not pass then carries NULL, which every aggregate we
 * run skips (all are strict).
 */
Expr *
GpuAggUnderFilter(Aggref *aggref, Expr *expr)
{
	CaseExpr   *result;
	CaseWhen   *when;

	if (aggref->aggfilter == NULL)
		return expr;
	when = makeNode(CaseWhen);
	when->expr = aggref->aggfilter;
	when->result = expr;
	when->location = -1;
	result = makeNode(CaseExpr);
	result->casetype = exprType((Node *) expr);
	result->casecollid = exprCollation((Node *) expr);
	result->arg = NULL;
	result->args = list_make1(when);
	result->defresult = (Expr *) makeNullConst(exprType((Node *) expr),
											   exprTypmod((Node *) expr),
											   exprCollation((Node *) expr));
	result->location = -1;
	return (Expr *) result;
}

/*
 * The expression the child plan computes for argument argno (0-based) of an
 * aggregate, under its FILTER (GpuAggUnderFilter).  A conversion of a column
 * to float8 is left to batch/builder.c (float8_source_column).
 */
Expr *
GpuAggChildArgument(Aggref *aggref, int argno)
{
	return GpuAggUnderFilter(aggref,
							 float8_source_column(aggref,
												  list_nth_node(TargetEntry, aggref->args,
																argno)->expr));
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
 * The final function of an aggregate (pg_aggregate.aggfinalfn): the
 * moments aggregates are finalized by PostgreSQL's own final functions
 * (finalize/moments.c).
 */
Oid
GpuAggFinalFunction(Oid aggfnoid)
{
	HeapTuple	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Oid			finalfn;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggfnoid);
	finalfn = ((Form_pg_aggregate) GETSTRUCT(tuple))->aggfinalfn;
	ReleaseSysCache(tuple);
	return finalfn;
}

static GpuAggEncoding integer_encoding(Oid base_type);

/*
 * How many device operations an aggregate takes (see hashagg/layout.c), so that
 * the planner keeps a request within GA_MAX_AGG_OPS.
 */
int
GpuAggDeviceOpsNeeded(GpuAggKind kind, Oid input_type, int numeric_precision)
{
	if (kind == GPUAGG_FLOAT_MOMENTS)
		return 1;
	if (GPUAGG_KIND_IS_COMOMENTS(kind))
		return 2;				/* the GPU device carries y in a second entry */
	if (input_type == NUMERICOID && GPUAGG_KIND_IS_VARIANCE(kind))
		return 4 + (numeric_precision <= GPUAGG_NUMERIC_INT64_DIGITS ? 1 :
					GpuAggLimbsForDigits(numeric_precision)) +
			GpuAggLimbsForDigits(2 * numeric_precision);
	if (input_type == NUMERICOID)
		return (kind == GPUAGG_SUM || kind == GPUAGG_AVG) ?
			4 + (numeric_precision <= GPUAGG_NUMERIC_INT64_DIGITS ? 1 :
				 GpuAggLimbsForDigits(numeric_precision)) : 5;
	if (GPUAGG_KIND_IS_VARIANCE(kind))
		return 2 + GPUAGG_NUMERIC_LIMBS;
	if (input_type == FLOAT4OID || input_type == FLOAT8OID)
		return kind == GPUAGG_AVG ? 5 : 3;
	return 2;
}

/*
 * Whether a group key of this type (and collation) can go to a device;
 * else *why names what (the key, the column, the argument) and says why.
 */
bool
GpuAggKeyTypeSupported(Oid type, Oid collation, const char *what, const char **why)
{
	Oid			base = getBaseType(type);

	switch (base)
	{
		case BOOLOID:
		case FLOAT4OID:
		case FLOAT8OID:
			return true;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			/* equal bytes are equal values only under deterministic collations */
			if (OidIsValid(collation) && !get_collation_isdeterministic(collation))
			{
				*why = psprintf("%s, of type %s, has the nondeterministic collation %s, and a "
								"device compares bytes; give it a deterministic collation "
								"(COLLATE \"C\")",
								what, format_type_be(type),
								quote_identifier(get_collation_name(collation)));
				return false;
			}
			return true;
	}
	if (integer_encoding(base) != GPUAGG_ENC_NONE || KeyDictTypeSupported(base))
		return true;
	*why = psprintf("%s is of type %s, which a device does not compare: keys are integers, "
					"floats, bool, date and time types, text, varchar, char, numeric, "
					"uuid or interval",
					what, format_type_be(type));
	return false;
}

/*
 * Whether a group key of this base type (TEXTOID for a padded bpchar, see
 * GpuAggKeyDesc) travels to the device as its bytes (batch/encode.c's
 * STRING_KEY): text and varchar, whose equality under a deterministic
 * collation is byte equality, and uuid, whose 16 bytes are its value, while gpuagg.string_keys is on and the
 * planned device groups strings (and the CPU device, which a failed GPU
 * aggregation falls back to, does too).
 */
bool
GpuAggKeyAsBytes(Oid base_type)
{
	bool		usable;

	if (!gpuagg_string_keys ||
		(base_type != TEXTOID && base_type != VARCHAROID && base_type != UUIDOID))
		return false;
	return ga_device_kind_groups_strings(GpuAggPlannedDeviceKind(&usable)) &&
		ga_device_kind_groups_strings(GA_DEVICE_CPU);
}

/*
 * Whether the DISTINCT argument of aggref travels to the device as its
 * bytes, by the rule of group keys (GpuAggKeyAsBytes; a char(n) as text,
 * its values padded alike).  The device then pairs each group with each
 * distinct argument by their bytes, which is the type's equality; a count
 * of them shows no value, so no spelling needs keeping.
 */
bool
GpuAggDistinctAsBytes(Aggref *aggref)
{
	Node	   *arg;

	if (aggref->aggdistinct == NIL || list_length(aggref->args) != 1)
		return false;
	arg = (Node *) linitial_node(TargetEntry, aggref->args)->expr;
	return GpuAggKeyAsBytes(KeyDictIsPaddedBpchar(arg) ? TEXTOID : getBaseType(exprType(arg)));
}

/* The encoding of integer-like types (also dates, timestamps); NONE otherwise. */
static GpuAggEncoding
integer_encoding(Oid base_type)
{
	switch (base_type)
	{
		case INT2OID:
			return GPUAGG_ENC_INT16;
		case INT4OID:
		case DATEOID:
			return GPUAGG_ENC_INT32;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case TIMEOID:
			return GPUAGG_ENC_INT64;
	}
	return GPUAGG_ENC_NONE;
}

/* The integer encoding of a type the planner accepted; an error otherwise. */
static GpuAggEncoding
required_integer_encoding(Oid base_type, const char *what)
{
	GpuAggEncoding encoding = integer_encoding(base_type);

	if (encoding == GPUAGG_ENC_NONE)
		elog(ERROR, "gpuagg: no %s encoding for type %u", what, base_type);
	return encoding;
}

/* How a group key of this type is encoded in a batch. */
GpuAggEncoding
GpuAggKeyEncoding(Oid type)
{
	Oid			base = getBaseType(type);

	switch (base)
	{
		case BOOLOID:
			return GPUAGG_ENC_BOOL;
		case FLOAT8OID:
			return GPUAGG_ENC_FLOAT8_KEY;
		case FLOAT4OID:
			return GPUAGG_ENC_FLOAT4_KEY;
	}
	if (KeyDictTypeSupported(base))
		return GPUAGG_ENC_DICT_KEY;
	return required_integer_encoding(base, "key");
}

/* How an aggregate input of this type is encoded in a batch. */
GpuAggEncoding
GpuAggInputEncoding(Oid type)
{
	Oid			base = getBaseType(type);

	switch (base)
	{
		case BOOLOID:
			return GPUAGG_ENC_BOOL;
		case FLOAT4OID:
			return GPUAGG_ENC_FLOAT4;
		case FLOAT8OID:
			return GPUAGG_ENC_FLOAT8;
	}
	return required_integer_encoding(base, "input");
}
