/*-------------------------------------------------------------------------
 *
 * hashjoin/desc.h
 *	  The description of a GpuHashJoin: what its path keeps for the plan,
 *	  and what its plan keeps for the executor (hashjoin/private.c packs
 *	  both into private lists).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHJOIN_DESC_H
#define GPUAGG_HASHJOIN_DESC_H

#include "access/attnum.h"
#include "nodes/nodes.h"
#include "nodes/pg_list.h"

/* Which side of the join a value comes from. */
#define GPUJOIN_OUTER 0
#define GPUJOIN_INNER 1

/* How one hash key becomes (part of) the device's int64 key. */
typedef enum GpuJoinKeyKind
{
	GPUJOIN_KEY_EXACT,			/* integer-like value, equality is identity */
	GPUJOIN_KEY_HASH			/* the type's hash function; rechecked */
} GpuJoinKeyKind;

/*
 * What the executor needs, stored in CustomScan.custom_private (packed by
 * GpuJoinDescToList, read back by GpuJoinDescFromList).  Expressions
 * reference the children's output with OUTER_VAR / INNER_VAR Vars, like a
 * native HashJoin's.  The node's scan tuple (custom_scan_tlist) is filled
 * column by column from one side.
 */
typedef struct GpuJoinDesc
{
	JoinType	jointype;		/* INNER, LEFT, RIGHT, FULL, SEMI or ANTI */
	int			nkeys;
	List	   *outer_keys;		/* key expressions over the outer child */
	List	   *inner_keys;		/* ... and over the inner child */
	GpuJoinKeyKind *key_kinds;
	Oid		   *outer_hashfns;	/* hash functions (GPUJOIN_KEY_HASH) */
	Oid		   *inner_hashfns;
	Oid		   *collations;
	List	   *hash_clauses;	/* the equalities, for EXPLAIN and rechecks */
	bool		recheck;		/* device key equality is not SQL equality */
	List	   *join_quals;		/* other join conditions */
	int			nscan;			/* columns of the scan tuple */
	int		   *scan_sides;		/* GPUJOIN_OUTER or GPUJOIN_INNER */
	AttrNumber *scan_attnos;	/* column of that side's child */
	double		inner_rows;		/* planner's estimates */
	double		outer_rows;
	bool		inner_unique;	/* each outer row matches at most one row */
} GpuJoinDesc;

/*
 * What a GpuHashJoin path keeps in custom_private (packed by
 * GpuJoinPathToList, read back by GpuJoinPathFromList): the join's
 * conditions, split as create_hashjoin_plan() splits them (hashjoin/path.c).
 */
typedef struct GpuJoinPathInfo
{
	JoinType	jointype;
	List	   *outer_keys;		/* per hash clause: the outer side's argument */
	List	   *inner_keys;		/* ... the inner side's argument */
	List	   *hash_clauses;	/* the equalities themselves (OpExpr) */
	List	   *join_quals;		/* other conditions of the join */
	List	   *other_quals;	/* outer joins: conditions above the join */
	bool		inner_unique;	/* each outer row matches at most one row */
} GpuJoinPathInfo;

#endif							/* GPUAGG_HASHJOIN_DESC_H */
