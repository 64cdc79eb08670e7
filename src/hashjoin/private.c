/*-------------------------------------------------------------------------
 *
 * hashjoin/private.c
 *	  What a GpuHashJoin keeps in its private lists, packed and unpacked
 *	  here and nowhere else: a path's (GpuJoinPathInfo, hashjoin/path.c's
 *	  split of the join's conditions) and a plan's (GpuJoinDesc, what the
 *	  executor needs).  Each list is laid out by an enum of its fields
 *	  (custom_private.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"

#include "custom_private.h"
#include "hashjoin/desc.h"
#include "hashjoin/private.h"

/* A path's custom_private (GpuJoinPathInfo). */
enum GpuJoinPathIndex
{
	PATH_PRIVATE_JOINTYPE,		/* Integer */
	PATH_PRIVATE_OUTER_KEYS,
	PATH_PRIVATE_INNER_KEYS,
	PATH_PRIVATE_HASH_CLAUSES,
	PATH_PRIVATE_JOIN_QUALS,
	PATH_PRIVATE_OTHER_QUALS,
	PATH_PRIVATE_INNER_UNIQUE,	/* Integer */
	PATH_PRIVATE_COUNT
};

/* A plan's custom_private (GpuJoinDesc). */
enum GpuJoinPlanIndex
{
	JOIN_PRIVATE_JOINTYPE,		/* Integer */
	JOIN_PRIVATE_OUTER_KEYS,
	JOIN_PRIVATE_INNER_KEYS,
	JOIN_PRIVATE_KEY_KINDS,		/* integer list */
	JOIN_PRIVATE_OUTER_HASHFNS, /* OID lists */
	JOIN_PRIVATE_INNER_HASHFNS,
	JOIN_PRIVATE_COLLATIONS,
	JOIN_PRIVATE_HASH_CLAUSES,
	JOIN_PRIVATE_RECHECK,		/* Integer */
	JOIN_PRIVATE_JOIN_QUALS,
	JOIN_PRIVATE_SCAN_SIDES,	/* integer lists */
	JOIN_PRIVATE_SCAN_ATTNOS,
	JOIN_PRIVATE_INNER_ROWS,	/* Floats */
	JOIN_PRIVATE_OUTER_ROWS,
	JOIN_PRIVATE_INNER_UNIQUE,	/* Integer */
	JOIN_PRIVATE_COUNT
};

/* A GpuHashJoin path's custom_private. */
List *
GpuJoinPathToList(const GpuJoinPathInfo *info)
{
	List	   *list = GpuAggPrivateFields(PATH_PRIVATE_COUNT);

	GpuAggPrivateSet(list, PATH_PRIVATE_JOINTYPE, makeInteger(info->jointype));
	GpuAggPrivateSet(list, PATH_PRIVATE_OUTER_KEYS, info->outer_keys);
	GpuAggPrivateSet(list, PATH_PRIVATE_INNER_KEYS, info->inner_keys);
	GpuAggPrivateSet(list, PATH_PRIVATE_HASH_CLAUSES, info->hash_clauses);
	GpuAggPrivateSet(list, PATH_PRIVATE_JOIN_QUALS, info->join_quals);
	GpuAggPrivateSet(list, PATH_PRIVATE_OTHER_QUALS, info->other_quals);
	GpuAggPrivateSet(list, PATH_PRIVATE_INNER_UNIQUE,
					 makeInteger(info->inner_unique ? 1 : 0));
	return list;
}

/* Read back what GpuJoinPathToList wrote. */
GpuJoinPathInfo *
GpuJoinPathFromList(List *list)
{
	GpuJoinPathInfo *info = palloc0(sizeof(GpuJoinPathInfo));

	GpuAggPrivateCheck(list, PATH_PRIVATE_COUNT, "GpuHashJoin path");
	info->jointype = (JoinType) intVal(list_nth(list, PATH_PRIVATE_JOINTYPE));
	info->outer_keys = list_nth(list, PATH_PRIVATE_OUTER_KEYS);
	info->inner_keys = list_nth(list, PATH_PRIVATE_INNER_KEYS);
	info->hash_clauses = list_nth(list, PATH_PRIVATE_HASH_CLAUSES);
	info->join_quals = list_nth(list, PATH_PRIVATE_JOIN_QUALS);
	info->other_quals = list_nth(list, PATH_PRIVATE_OTHER_QUALS);
	info->inner_unique = intVal(list_nth(list, PATH_PRIVATE_INNER_UNIQUE)) != 0;
	return info;
}

/* A GpuHashJoin plan's custom_private (estimates as GpuAggFloatNode). */
List *
GpuJoinDescToList(const GpuJoinDesc *desc)
{
	List	   *kinds = NIL;
	List	   *outer_fns = NIL;
	List	   *inner_fns = NIL;
	List	   *collations = NIL;
	List	   *sides = NIL;
	List	   *attnos = NIL;
	List	   *list = GpuAggPrivateFields(JOIN_PRIVATE_COUNT);
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
	GpuAggPrivateSet(list, JOIN_PRIVATE_JOINTYPE, makeInteger(desc->jointype));
	GpuAggPrivateSet(list, JOIN_PRIVATE_OUTER_KEYS, desc->outer_keys);
	GpuAggPrivateSet(list, JOIN_PRIVATE_INNER_KEYS, desc->inner_keys);
	GpuAggPrivateSet(list, JOIN_PRIVATE_KEY_KINDS, kinds);
	GpuAggPrivateSet(list, JOIN_PRIVATE_OUTER_HASHFNS, outer_fns);
	GpuAggPrivateSet(list, JOIN_PRIVATE_INNER_HASHFNS, inner_fns);
	GpuAggPrivateSet(list, JOIN_PRIVATE_COLLATIONS, collations);
	GpuAggPrivateSet(list, JOIN_PRIVATE_HASH_CLAUSES, desc->hash_clauses);
	GpuAggPrivateSet(list, JOIN_PRIVATE_RECHECK, makeInteger(desc->recheck ? 1 : 0));
	GpuAggPrivateSet(list, JOIN_PRIVATE_JOIN_QUALS, desc->join_quals);
	GpuAggPrivateSet(list, JOIN_PRIVATE_SCAN_SIDES, sides);
	GpuAggPrivateSet(list, JOIN_PRIVATE_SCAN_ATTNOS, attnos);
	GpuAggPrivateSet(list, JOIN_PRIVATE_INNER_ROWS, GpuAggFloatNode(desc->inner_rows));
	GpuAggPrivateSet(list, JOIN_PRIVATE_OUTER_ROWS, GpuAggFloatNode(desc->outer_rows));
	GpuAggPrivateSet(list, JOIN_PRIVATE_INNER_UNIQUE,
					 makeInteger(desc->inner_unique ? 1 : 0));
	return list;
}

/* Read back what GpuJoinDescToList wrote. */
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

	GpuAggPrivateCheck(list, JOIN_PRIVATE_COUNT, "GpuHashJoin description");
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
