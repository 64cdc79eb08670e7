/*-------------------------------------------------------------------------
 *
 * aggjoin/plan.c
 *	  An aggjoin at plan time: the joins its path found (GpuAggJoinPath,
 *	  aggjoin/path.c) become the description's join fields, and the text
 *	  EXPLAIN shows for their conditions.
 *
 * The child expressions of the description are split by side: each side's
 * child computes its own expressions, then its keys
 * (GpuAggJoinNumberColumns; hashagg/layout.c orders the batch columns the
 * same way).
 *
 * A text, varchar or char(n) join key travels as its bytes where the
 * planned device and the CPU device join strings (GpuAggJoinKeyAsBytes):
 * each side's process writes its keys' bytes into its batches, the device
 * hashes and compares them, and no process maps them onto a dictionary
 * shared by the sides.  A text, varchar or char(n) group key does the same
 * where the planned device and the CPU device group joined rows by strings
 * (GpuAggJoinGroupKeyAsBytes).  The choices are kept in the plan, so that
 * the leader and every worker lay their batches out alike.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#include "aggjoin/aggjoin.h"
#include "batch/key_dict.h"
#include "devices.h"
#include "hashagg/catalog.h"
#include "hashagg/desc.h"

/*
 * Whether a dictionary join key (aggjoin/path.c's join_key_is_dictionary:
 * one type on both sides under a deterministic collation) travels as its
 * bytes: text or varchar on both sides, or char(n) of one length on both
 * (padded alike, so that equal values are equal bytes; another length or
 * an unconstrained bpchar compares without its trailing blanks and keeps
 * the dictionary), by the rule of group keys (GpuAggKeyAsBytes:
 * gpuagg.string_keys on), on a planned device that joins strings, as the
 * CPU device a failed GPU aggregation falls back to must too.
 */
bool
GpuAggJoinKeyAsBytes(Node *outer, Node *inner)
{
	bool		usable;
	Oid			type;

	if (!ga_device_kind_joins_strings(GpuAggPlannedDeviceKind(&usable)) ||
		!ga_device_kind_joins_strings(GA_DEVICE_CPU))
		return false;
	if (KeyDictIsPaddedBpchar(outer) || KeyDictIsPaddedBpchar(inner))
		return KeyDictIsPaddedBpchar(outer) && KeyDictIsPaddedBpchar(inner) &&
			exprTypmod(outer) == exprTypmod(inner) && GpuAggKeyAsBytes(TEXTOID);
	type = getBaseType(exprType(outer));
	return type == getBaseType(exprType(inner)) && GpuAggKeyAsBytes(type);
}

/*
 * Whether a group key of an aggjoin of this base type (TEXTOID for a
 * padded bpchar) travels as its bytes, by the rule of group keys
 * (GpuAggKeyAsBytes), on a planned device that groups joined rows by
 * strings, as the CPU device a failed GPU aggregation falls back to must
 * too: each side's process writes the key's bytes into its batches (the
 * probe batches or its build payload), the device gathers them into the
 * joined rows and groups those by their bytes.
 */
bool
GpuAggJoinGroupKeyAsBytes(Oid base_type)
{
	bool		usable;

	if (!ga_device_kind_groups_join_strings(GpuAggPlannedDeviceKind(&usable)) ||
		!ga_device_kind_groups_join_strings(GA_DEVICE_CPU))
		return false;
	return GpuAggKeyAsBytes(base_type);
}

/*
 * The joins' conditions as EXPLAIN shows them ("a.id = b.id", a chain's
 * steps bottom up, separated by "; "), made at plan time from the path's
 * joins: the node's children compute the keys, so its own expressions
 * cannot show them.  *filter gets the INNER joins'
 * other conditions, which the device's filter checks ("(a.v > b.w)", all
 * steps' ANDed; "" for none), as PostgreSQL's Join Filter shows them.
 * Both are deparsed over the query level's range table, as EXPLAIN would
 * name them.
 */
char *
GpuAggJoinConditionText(PlannerInfo *root, const GpuAggJoinPath *join, char **filter)
{
	StringInfoData buf;
	StringInfoData filter_buf;
	PlannedStmt *stmt = makeNode(PlannedStmt);
	int			t;
	List	   *context;

	stmt->rtable = root->parse->rtable;
	context = deparse_context_for_plan_tree(stmt,
											select_rtable_names_for_explain(stmt->rtable,
																			bms_add_range(NULL, 1,
																						  list_length(stmt->rtable))));
	initStringInfo(&buf);
	initStringInfo(&filter_buf);
	for (t = 0; t < join->nsteps; t++)
	{
		const char *separator = buf.len > 0 ? "; " : "";
		ListCell   *lc;

		foreach(lc, join->steps[t].hash_clauses)
		{
			OpExpr	   *op = lfirst_node(OpExpr, lc);

			appendStringInfo(&buf, "%s%s %s %s", separator,
							 deparse_expression(linitial(op->args), context, true, false),
							 get_opname(op->opno),
							 deparse_expression(lsecond(op->args), context, true, false));
			separator = " AND ";
		}
		foreach(lc, join->steps[t].filter_quals)
			appendStringInfo(&filter_buf, "%s%s", filter_buf.len > 0 ? " AND " : "",
							 deparse_expression(lfirst(lc), context, true, false));
	}
	*filter = filter_buf.data;
	return buf.data;
}

/*
 * Number the columns of each side's child (see GpuAggDesc): its
 * expressions in child order, then its build keys, then the outer keys it
 * gives, in step order.
 */
void
GpuAggJoinNumberColumns(GpuAggDesc *desc)
{
	AttrNumber	next[GA_AGG_MAX_JOIN_STEPS + 1];
	int			s;
	int			t;
	int			k;
	int			i;

	for (s = 0; s <= desc->njoin_steps; s++)
		next[s] = 1;
	for (i = 0; i < desc->nchild; i++)
		desc->child_side_attno[i] = next[desc->child_side[i]]++;
	for (s = 0; s <= desc->njoin_steps; s++)
	{
		for (k = 0; s > 0 && k < desc->join_steps[s - 1].nkeys; k++)
			desc->join_steps[s - 1].keys[k].build_attno = next[s]++;
		for (t = 0; t < desc->njoin_steps; t++)
		{
			for (k = 0; k < desc->join_steps[t].nkeys; k++)
			{
				if (desc->join_steps[t].keys[k].side == s)
					desc->join_steps[t].keys[k].attno = next[s]++;
			}
		}
		desc->side_ncolumns[s] = next[s] - 1;
	}
}

/* Room for desc's child_side and child_side_attno arrays. */
static void
join_desc_alloc_children(GpuAggDesc *desc, int nchild)
{
	desc->nchild = nchild;
	desc->child_side = palloc0(sizeof(int) * Max(nchild, 1));
	desc->child_side_attno = palloc0(sizeof(AttrNumber) * Max(nchild, 1));
}

/* Fill desc's join fields from a path's joins (NULL: not aggjoin). */
void
GpuAggJoinDescFromPath(GpuAggDesc *desc, const GpuAggJoinPath *join, List *child_exprs)
{
	ListCell   *lc;
	int			t;
	int			i = 0;

	desc->njoin_steps = 0;
	if (join == NULL)
		return;
	for (t = 0; t < join->nsteps; t++)
	{
		const GpuAggJoinPathStep *step = &join->steps[t];
		JoinType	type = step->type;
		int			k;

		/* a SEMI join with conditions of its own checks its pairs; else each key once */
		desc->join_steps[t].type = type == JOIN_LEFT ? GA_AGGJOIN_LEFT :
			type == JOIN_ANTI ? GA_AGGJOIN_ANTI :
			type == JOIN_RIGHT ? GA_AGGJOIN_RIGHT :
			type == JOIN_FULL ? GA_AGGJOIN_FULL :
			type == JOIN_SEMI && step->program != NIL ? GA_AGGJOIN_SEMI : GA_AGGJOIN_INNER;
		desc->join_steps[t].build_unique = type == JOIN_SEMI && step->program == NIL;
		GpuAggJoinFilterDescribe(&desc->join_steps[t].filter, child_exprs, step->program);
		desc->join_steps[t].match_fraction = step->match_permille / 1000.0;
		desc->join_steps[t].nkeys = list_length(step->outer_keys);
		for (k = 0; k < desc->join_steps[t].nkeys; k++)
		{
			desc->join_steps[t].keys[k].type =
				getBaseType(exprType(list_nth(step->outer_keys, k)));
			desc->join_steps[t].keys[k].build_type =
				getBaseType(exprType(list_nth(step->inner_keys, k)));
			desc->join_steps[t].keys[k].side = list_nth_int(step->key_sides, k);
			desc->join_steps[t].keys[k].as_bytes =
				GpuAggJoinKeyAsBytes(list_nth(step->outer_keys, k),
									 list_nth(step->inner_keys, k));
		}
	}
	desc->njoin_steps = join->nsteps;
	join_desc_alloc_children(desc, list_length(join->child_sides));
	foreach(lc, join->child_sides)
		desc->child_side[i++] = lfirst_int(lc);
	GpuAggJoinFilterDescribe(&desc->filter, child_exprs, join->filter_program);
	desc->packed_sides = join->packed_sides;
	desc->pack_side = join->pack_side;
	GpuAggJoinNumberColumns(desc);
}
