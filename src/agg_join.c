/*-------------------------------------------------------------------------
 *
 * agg_join.c
 *	  GpuHashAgg fed by a join that the device computes: the joined rows
 *	  never reach the host, only the groups come back (issue 4 item 3).
 *
 * When the aggregation's input is an equi-join that GpuHashJoin could run
 * (join_path.c offered a path for it), the aggregation can take the join's
 * two inputs itself: the inner side's rows are read once into the device's
 * build (the join key and the columns the aggregation needs from that
 * side), and the outer side's rows arrive in batches (read by the node
 * itself, or packed by parallel workers' GpuAggPack nodes) that the device
 * probes, joins and aggregates in one go (cuda/gpuagg_device.h, "Aggregation
 * fed by a hash join").
 *
 * What qualifies (otherwise the other GpuHashAgg paths and the native plan
 * remain):
 *	- an INNER, LEFT or SEMI join (EXISTS, IN: its build keeps each key once,
 *	  and the device joins it as an inner join) with no other join condition
 *	  and, for LEFT, no condition above the join, on one equality whose
 *	  device key is exact (the integer-like types of GpuJoinKeyIsExact) or
 *	  the id of one key dictionary for both sides (text and the other
 *	  key_dict.c types, under a deterministic collation), or on two
 *	  equalities of int2/int4 keys (paired into one exact int8);
 *	- every group key, aggregate argument and FILTER computed from one side
 *	  by an expression that cannot fail (plain columns, leakproof functions:
 *	  each side computes it also for rows the join drops) — any expression
 *	  on the outer side of a LEFT join, which drops none —, a LEFT join's
 *	  inner side only by plain columns (an expression over a null-extended
 *	  row is not the expression's value null-extended);
 *	- no DISTINCT aggregate and no grouping sets; no float, numeric or
 *	  other key with a first-row spelling taken from the inner side;
 *	- a build (the inner side's needed columns and key) estimated within
 *	  gpuagg.hashjoin_build_limit.
 *
 * The child expressions of the description are split by side: each side's
 * child computes its own expressions, then the join key (agg_layout.c
 * orders the batch columns the same way).
 *
 *-------------------------------------------------------------------------
 */
#include "gpuagg.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

/* Log why a join-fed GpuHashAgg is not offered; always returns false. */
static bool
join_fed_reject(const char *why)
{
	elog(DEBUG1, "gpuagg: join-fed GpuHashAgg not used: %s", why);
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
 * Which side of the join computes expr: false the outer, true the inner;
 * false with *why set when it needs both (or a placeholder).
 */
static bool
expr_from_inner(PlannerInfo *root, Node *expr, const GpuAggJoinSides *sides,
				const char **why)
{
	Relids		varnos = pull_varnos(root, GpuAggWithoutOuterJoinNulls(root, expr, NULL));

	if (has_placeholder_walker(expr, NULL))
	{
		*why = "an expression over a placeholder";
		return false;
	}
	if (bms_is_subset(varnos, sides->outer_rel->relids))
		return false;
	if (bms_is_subset(varnos, sides->inner_rel->relids))
		return true;
	*why = "an aggregate input or group key over both sides of the join";
	return false;
}

/*
 * Whether a join key can travel as the id of one key dictionary for both
 * sides (key_dict.c: text, varchar, bpchar, numeric, uuid, interval): the
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
		GpuAggKeyTypeSupported(type, clause->inputcollid, &why);
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

/*
 * The join's device key of one side, from its list of key expressions: the
 * one key, or two int2/int4 keys paired into one exact int8 (pair_key); NULL
 * when the join's keys are not of those forms.  (Every pair of keys is
 * exact: checked by the caller.)
 */
static Expr *
side_key(List *keys)
{
	if (list_length(keys) == 1)
		return linitial(keys);
	if (list_length(keys) == 2 && key_fits_32_bits(linitial(keys)) &&
		key_fits_32_bits(lsecond(keys)))
		return pair_key(linitial(keys), lsecond(keys));
	return NULL;
}

/*
 * Whether the aggregation over input_rel can be fed by the device's join of
 * input_rel's two inputs; fills sides (the inputs, each side's target: its
 * expressions of child_exprs, then the join key; the join's description for
 * path_private[GPUAGG_PRIVATE_JOIN]).  keys and aggrefs are the grouping's.
 */
bool
GpuAggJoinSidesFor(PlannerInfo *root, RelOptInfo *input_rel, List *child_exprs,
				   List *keys, List *aggrefs, bool grouping_sets,
				   GpuAggJoinSides *sides)
{
	CustomPath *join = NULL;
	JoinType	jointype = JOIN_INNER;
	Expr	   *outer_key = NULL;
	Expr	   *inner_key = NULL;
	List	   *from_build = NIL;
	const char *why = "the input is not a join GpuHashJoin can compute";
	double		build_bytes;
	double		build_limit;
	bool		usable;
	ListCell   *lc;

	memset(sides, 0, sizeof(*sides));
	if (!IS_JOIN_REL(input_rel) || !gpuagg_enable_join_fed_agg)
		return false;
	if (grouping_sets)
		return join_fed_reject("grouping sets");
	/* the GpuHashJoin path of the input that qualifies, smallest build first */
	foreach(lc, GpuJoinDevicePaths(input_rel))
	{
		CustomPath *path = lfirst(lc);
		JoinType	type = (JoinType) intVal(linitial(path->custom_private));
		OpExpr	   *clause = NULL;
		ListCell   *lc_clause;
		ListCell   *lc_outer;
		ListCell   *lc_inner;
		bool		exact;

		if (type != JOIN_INNER && type != JOIN_LEFT && type != JOIN_SEMI)
		{
			why = "join type other than INNER, LEFT and SEMI";
			continue;
		}
		if (list_nth(path->custom_private, 4) != NIL || list_nth(path->custom_private, 5) != NIL)
		{
			why = "join conditions other than the keys' equalities";
			continue;
		}
		exact = true;
		forthree(lc_clause, lfourth(path->custom_private),
				 lc_outer, lsecond(path->custom_private),
				 lc_inner, lthird(path->custom_private))
		{
			clause = lfirst_node(OpExpr, lc_clause);
			exact = exact && GpuJoinKeyIsExact(clause->opno, exprType(lfirst(lc_outer)),
											   exprType(lfirst(lc_inner)));
		}
		if (!(exact && side_key(lsecond(path->custom_private)) != NULL &&
			  side_key(lthird(path->custom_private)) != NULL) &&
			!(list_length(lfourth(path->custom_private)) == 1 &&
			  join_key_is_dictionary(clause,
									 exprType(linitial(lsecond(path->custom_private))),
									 exprType(linitial(lthird(path->custom_private))))))
		{
			why = "join keys other than one exact or dictionary key, or two int2/int4 keys";
			continue;
		}
		/* the smaller build side: it is read by one process and held whole */
		if (join == NULL ||
			((Path *) lsecond(path->custom_paths))->rows <
			((Path *) lsecond(join->custom_paths))->rows ||
			(((Path *) lsecond(path->custom_paths))->rows ==
			 ((Path *) lsecond(join->custom_paths))->rows &&
			 path->path.total_cost < join->path.total_cost))
		{
			join = path;
			jointype = type;
			outer_key = side_key(lsecond(path->custom_private));
			inner_key = side_key(lthird(path->custom_private));
		}
	}
	if (join == NULL)
		return join_fed_reject(why);
	why = NULL;

	sides->outer_path = linitial(join->custom_paths);
	sides->inner_path = lsecond(join->custom_paths);
	sides->outer_rel = sides->outer_path->parent;
	sides->inner_rel = sides->inner_path->parent;
	sides->outer_target = create_empty_pathtarget();
	sides->inner_target = create_empty_pathtarget();
	foreach(lc, child_exprs)
	{
		Node	   *expr = lfirst(lc);
		bool		inner = expr_from_inner(root, expr, sides, &why);

		if (why != NULL)
			return join_fed_reject(why);
		if (inner && jointype == JOIN_LEFT && !IsA(expr, Var))
			return join_fed_reject("an expression over the nullable side of a LEFT join");
		if (inner && jointype == JOIN_SEMI)
			return join_fed_reject("a column of a SEMI join's inner side");
		if (contain_volatile_functions(expr))
			return join_fed_reject("a volatile expression");
		/*
		 * Each side computes its expressions for all of its rows, also those
		 * the join then drops, where PostgreSQL computes them for joined rows
		 * only: so only expressions that cannot fail on a value (plain
		 * columns, leakproof functions: no overflow, no division by zero) —
		 * but on the outer side of a LEFT join, which drops no outer row.
		 */
		if (contain_leaked_vars(expr) && (inner || jointype != JOIN_LEFT))
			return join_fed_reject("an expression that may fail on rows the join drops");
		/* computed below the join: not nulled by it (by joins inside its side, yes) */
		add_column_to_pathtarget(inner ? sides->inner_target : sides->outer_target,
								 (Expr *) GpuAggWithoutOuterJoinNulls(root, expr,
																	  inner ? sides->inner_rel->relids :
																	  sides->outer_rel->relids),
								 0);
		from_build = lappend_int(from_build, inner ? 1 : 0);
	}

	/* a key whose first row's spelling is kept must come from the probe rows */
	foreach(lc, keys)
	{
		Node	   *key = lfirst(lc);
		Oid			type = getBaseType(exprType(key));
		bool		inner = expr_from_inner(root, key, sides, &why);

		if (inner && (type == FLOAT4OID || type == FLOAT8OID ||
					  (KeyDictTypeSupported(type) && KeyDictHasSpellings(type))))
			return join_fed_reject("a group key of the inner side with several spellings of one value");
	}
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		int			inner = -1;
		int			i;

		if (aggref->aggdistinct != NIL)
			return join_fed_reject("a DISTINCT aggregate");
		/* every column of one aggregate comes from the same side */
		for (i = 0; i < list_length(aggref->args) || (i == 0 && aggref->aggfilter); i++)
		{
			Node	   *arg = aggref->args != NIL ?
				(Node *) GpuAggChildArgument(aggref, i) : (Node *) aggref->aggfilter;
			int			side = expr_from_inner(root, arg, sides, &why) ? 1 : 0;

			if (inner >= 0 && side != inner)
				return join_fed_reject("an aggregate over both sides of the join");
			inner = side;
		}
	}

	add_column_to_pathtarget(sides->outer_target, outer_key, 0);
	add_column_to_pathtarget(sides->inner_target, inner_key, 0);
	set_pathtarget_cost_width(root, sides->outer_target);
	set_pathtarget_cost_width(root, sides->inner_target);

	/* the build holds the inner side's columns of the aggregation and its key */
	build_bytes = sides->inner_path->rows * (sides->inner_target->width + 24.0);
	build_limit = GpuAggHashJoinBuildLimit(GpuAggPlannedDeviceKind(&usable));
	if (build_bytes > build_limit)
		return join_fed_reject(psprintf("build side of about %.0f kB exceeds gpuagg.hashjoin_build_limit (%.0f kB)",
										build_bytes / 1024.0, build_limit / 1024.0));
	sides->join_private = lappend(list_make5(makeInteger(jointype), from_build, outer_key,
											 inner_key, list_make2_int(0, 0)),
								  lfourth(join->custom_private));
	return true;
}

/*
 * join_private with its last element saying whether the build side is
 * packed by parallel workers and, for a GpuAggPack, which side it packs.
 */
List *
GpuAggJoinPrivate(List *join_private, bool build_packed, int pack_side)
{
	List	   *copy = list_copy(join_private);

	lfirst(list_nth_cell(copy, 4)) = list_make2_int(build_packed ? 1 : 0, pack_side);
	return copy;
}

/* A join key for EXPLAIN: a column as alias.column, anything else elided. */
static const char *
join_key_text(PlannerInfo *root, Expr *expr)
{
	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (IsA(expr, Var) && ((Var *) expr)->varno > 0 &&
		((Var *) expr)->varno < root->simple_rel_array_size &&
		((Var *) expr)->varattno > 0 && root->simple_rte_array[((Var *) expr)->varno] != NULL)
	{
		Var		   *var = (Var *) expr;
		RangeTblEntry *rte = root->simple_rte_array[var->varno];

		return psprintf("%s.%s", quote_identifier(rte->eref->aliasname),
						quote_identifier(get_rte_attribute_name(rte, var->varattno)));
	}
	return "(expression)";
}

/*
 * The join's condition as EXPLAIN shows it ("a.id = b.id"), made at plan
 * time from path_private[GPUAGG_PRIVATE_JOIN]: the node's children compute
 * the keys, so its own expressions cannot show them.
 */
char *
GpuAggJoinConditionText(PlannerInfo *root, List *join_private)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, (List *) list_nth(join_private, 5))
	{
		OpExpr	   *op = lfirst_node(OpExpr, lc);

		appendStringInfo(&buf, "%s%s %s %s", buf.len > 0 ? " AND " : "",
						 join_key_text(root, linitial(op->args)), get_opname(op->opno),
						 join_key_text(root, lsecond(op->args)));
	}
	return buf.data;
}

/*
 * Fill desc's join fields from path_private[GPUAGG_PRIVATE_JOIN] (absent or
 * NIL: not join-fed).
 */
void
GpuAggJoinDescFromPath(GpuAggDesc *desc, List *path_private)
{
	List	   *join;
	List	   *from_build;
	AttrNumber	next[2] = {1, 1};
	int			i;

	desc->join_type = -1;
	if (list_length(path_private) <= GPUAGG_PRIVATE_JOIN ||
		list_nth(path_private, GPUAGG_PRIVATE_JOIN) == NIL)
		return;
	join = list_nth(path_private, GPUAGG_PRIVATE_JOIN);
	from_build = lsecond(join);
	desc->join_type = intVal(linitial(join)) == JOIN_LEFT ? GA_AGG_JOIN_LEFT : GA_AGG_JOIN_INNER;
	desc->nchild = list_length(from_build);
	desc->child_from_build = palloc0(sizeof(bool) * Max(desc->nchild, 1));
	desc->child_side_attno = palloc0(sizeof(AttrNumber) * Max(desc->nchild, 1));
	for (i = 0; i < desc->nchild; i++)
	{
		int			side = list_nth_int(from_build, i);

		desc->child_from_build[i] = side != 0;
		desc->child_side_attno[i] = next[side]++;
	}
	desc->probe_key_attno = next[0];
	desc->build_key_attno = next[1];
	desc->probe_key_type = getBaseType(exprType(lthird(join)));
	desc->build_key_type = getBaseType(exprType(lfourth(join)));
	desc->build_packed = linitial_int(list_nth(join, 4)) != 0;
	desc->pack_side = lsecond_int(list_nth(join, 4));
	desc->build_unique = intVal(linitial(join)) == JOIN_SEMI;
}

/* The join fields of desc as plain nodes for custom_private (see below). */
List *
GpuAggJoinDescToList(const GpuAggDesc *desc)
{
	List	   *list = list_make1_int(desc->join_type);
	int			i;

	if (desc->join_type < 0)
		return list;
	list = lappend_int(list, desc->probe_key_attno);
	list = lappend_int(list, desc->build_key_attno);
	list = lappend_int(list, (int) desc->probe_key_type);
	list = lappend_int(list, (int) desc->build_key_type);
	list = lappend_int(list, desc->build_packed ? 1 : 0);
	list = lappend_int(list, desc->pack_side);
	list = lappend_int(list, desc->build_unique ? 1 : 0);
	for (i = 0; i < desc->nchild; i++)
	{
		list = lappend_int(list, desc->child_from_build[i] ? 1 : 0);
		list = lappend_int(list, desc->child_side_attno[i]);
	}
	return list;
}

/* Read back what GpuAggJoinDescToList wrote. */
void
GpuAggJoinDescFromList(GpuAggDesc *desc, List *list)
{
	int			i;

	desc->join_type = linitial_int(list);
	if (desc->join_type < 0)
		return;
	desc->probe_key_attno = (AttrNumber) list_nth_int(list, 1);
	desc->build_key_attno = (AttrNumber) list_nth_int(list, 2);
	desc->probe_key_type = (Oid) list_nth_int(list, 3);
	desc->build_key_type = (Oid) list_nth_int(list, 4);
	desc->build_packed = list_nth_int(list, 5) != 0;
	desc->pack_side = list_nth_int(list, 6);
	desc->build_unique = list_nth_int(list, 7) != 0;
	desc->nchild = (list_length(list) - 8) / 2;
	desc->child_from_build = palloc0(sizeof(bool) * Max(desc->nchild, 1));
	desc->child_side_attno = palloc0(sizeof(AttrNumber) * Max(desc->nchild, 1));
	for (i = 0; i < desc->nchild; i++)
	{
		desc->child_from_build[i] = list_nth_int(list, 8 + 2 * i) != 0;
		desc->child_side_attno[i] = (AttrNumber) list_nth_int(list, 9 + 2 * i);
	}
}

/*
 * Make room for at least want rows in the build columns of payload, whose
 * memory is in cxt.
 */
static void
payload_reserve(GaBatch *payload, const GpuAggLayout *layout, int64 want, MemoryContext cxt)
{
	int64		capacity = Max(payload->capacity, 1024);
	int			c;

	if (want <= payload->capacity)
		return;
	while (capacity < want)
		capacity *= 2;
	for (c = layout->nprobe_columns; c < payload->ncolumns; c++)
	{
		GaColumn   *col = &payload->columns[c];
		int			width = ga_type_width(col->type);
		int64		old_bytes = (payload->capacity + 7) / 8;

		if (width > 0)
			col->values = col->values == NULL ?
				MemoryContextAllocExtended(cxt, width * capacity, MCXT_ALLOC_HUGE) :
				repalloc_huge(col->values, width * capacity);
		col->validity = col->validity == NULL ?
			MemoryContextAllocExtended(cxt, (capacity + 7) / 8, MCXT_ALLOC_HUGE) :
			repalloc_huge(col->validity, (capacity + 7) / 8);
		memset(col->validity + old_bytes, 0xff, (capacity + 7) / 8 - old_bytes);
	}
	payload->capacity = capacity;
}

/* qsort comparator of int64 keys. */
static int
key_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * A SEMI join's build: each key once (the first row of each does; a SEMI
 * join's aggregation reads no build column), so that the device's inner
 * join matches each probe row at most once.  Returns the number left in
 * keys and rows.
 */
static int64
build_distinct_keys(int64 *keys, uint32 *rows, int64 n)
{
	int64		kept = 0;
	int64		i;

	qsort(keys, n, sizeof(int64), key_cmp);
	for (i = 0; i < n; i++)
	{
		if (kept > 0 && keys[kept - 1] == keys[i])
			continue;
		keys[kept] = keys[i];
		rows[kept] = rows[i];	/* any row: none of its columns is read */
		kept++;
	}
	return kept;
}

/* Fail clearly when the build side has more rows than a device join takes. */
static void
build_check_rows(int64 nrows)
{
	if (nrows > GA_JOIN_MAX_BUILD_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the inner side of a join-fed GpuHashAgg has more than " INT64_FORMAT " rows",
						(int64) GA_JOIN_MAX_BUILD_ROWS),
				 errhint("Set gpuagg.enable_join_fed_agg = off to join these rows another way.")));
}

/*
 * Read the inner child's next batch message (parallel workers packing the
 * build side) into payload; false at the end.
 */
static bool
build_read_message(PlanState *inner, GaBatch *payload, const GpuAggLayout *layout,
				   GpuAggBatchBuilder *builder, GpuAggMessageReceiver *receiver,
				   MemoryContext cxt)
{
	TupleTableSlot *slot = ExecProcNode(inner);
	bytea	   *message;
	int32		exchange_slot = -1;
	bool		isnull;

	if (TupIsNull(slot))
		return false;
	message = DatumGetByteaPP(slot_getattr(slot, 1, &isnull));
	if (isnull)
		elog(ERROR, "gpuagg: empty batch message");
	if (GpuAggExchangeIsRef(message))
		message = GpuAggExchangeGet(GpuAggPackExchange(inner), message, &exchange_slot);
	build_check_rows(payload->nrows + GpuAggMessageRows(message));
	payload_reserve(payload, layout, payload->nrows + GpuAggMessageRows(message), cxt);
	GpuAggBatchBuilderStart(builder, payload);
	GpuAggMessageAppend(receiver, builder, payload, message);
	if (exchange_slot >= 0)
		GpuAggExchangeRelease(GpuAggPackExchange(inner), exchange_slot);
	return true;
}

/*
 * Read every row of the inner child into agg's build: its build columns and
 * build key through builder (which then fills the probe columns again),
 * from its tuples or, packed by parallel workers, from its batch messages
 * (receiver maps their dictionary ids); the rows are held in cxt until the
 * device has them (the child itself runs in the executor's memory).
 * Returns false with status set when the device fails.
 */
bool
GpuAggJoinBuild(GaAgg *agg, const GpuAggDesc *desc, const GpuAggLayout *layout,
				GpuAggBatchBuilder *builder, GpuAggMessageReceiver *receiver,
				PlanState *inner, MemoryContext cxt, GaStatus *status)
{
	GaBatch    *payload = MemoryContextAllocZero(cxt, sizeof(GaBatch));
	const GaColumn *key_column;
	int64	   *keys;
	uint32	   *rows;
	int64		nkeys = 0;
	int64		r;
	bool		ok;
	int			c;

	payload->ncolumns = layout->ncolumns;
	payload->columns = MemoryContextAllocZero(cxt, sizeof(GaColumn) * layout->ncolumns);
	for (c = 0; c < layout->ncolumns; c++)
		payload->columns[c].type = layout->column_types[c];
	GpuAggBatchBuilderSetColumns(builder, layout->nprobe_columns, layout->ncolumns);
	if (desc->build_packed)
	{
		while (build_read_message(inner, payload, layout, builder, receiver, cxt))
			CHECK_FOR_INTERRUPTS();
	}
	else
	{
		for (;;)
		{
			TupleTableSlot *slot = ExecProcNode(inner);

			if (TupIsNull(slot))
				break;
			build_check_rows(payload->nrows + 1);
			payload_reserve(payload, layout, payload->nrows + 1, cxt);
			/* detoasted values of the build columns: one batch's worth at a time */
			if (payload->nrows % 65536 == 0)
				GpuAggBatchBuilderStart(builder, payload);
			GpuAggBatchAppend(builder, payload, slot);
			CHECK_FOR_INTERRUPTS();
		}
	}
	GpuAggBatchBuilderSetColumns(builder, 0, layout->nprobe_columns);

	/* the build rows with a key (a null key never matches) */
	key_column = &payload->columns[layout->build_key_column];
	keys = MemoryContextAllocExtended(cxt, sizeof(int64) * Max(payload->nrows, 1), MCXT_ALLOC_HUGE);
	rows = MemoryContextAllocExtended(cxt, sizeof(uint32) * Max(payload->nrows, 1), MCXT_ALLOC_HUGE);
	for (r = 0; r < payload->nrows; r++)
	{
		if (ga_column_is_null(key_column, r))
			continue;
		keys[nkeys] = ((const int64 *) key_column->values)[r];
		rows[nkeys++] = (uint32) r;
	}
	if (desc->build_unique)
		nkeys = build_distinct_keys(keys, rows, nkeys);
	ok = ga_agg_join_build(agg, 0, keys, rows, nkeys, payload, GpuAggDeviceWait, NULL, status);
	for (c = layout->nprobe_columns; c < payload->ncolumns; c++)
	{
		if (payload->columns[c].values != NULL)
			pfree(payload->columns[c].values);
		if (payload->columns[c].validity != NULL)
			pfree(payload->columns[c].validity);
	}
	pfree(keys);
	pfree(rows);
	return ok;
}
