/*-------------------------------------------------------------------------
 *
 * hashjoin/hashjoin.h
 *	  GpuHashJoin, the node that replaces Hash Join:
 *	path.c		splits the join's conditions, adds a costed CustomPath
 *				(set_join_pathlist_hook)
 *	plan.c		builds the CustomScan; keys and join quals reference the
 *				two children (OUTER_VAR / INNER_VAR)
 *	exec.c		builds on the inner side's keys on a device, probes with
 *				batches of outer keys and forms the joined rows
 *	explain.c	shows what it planned and did
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHJOIN_H
#define GPUAGG_HASHJOIN_H

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#include "batch/batch.h"
#include "compat.h"
#include "gpuagg_device.h"

#define GPUJOIN_NODE_NAME "GpuHashJoin"

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
 * What the executor needs, stored in CustomScan.custom_private (see
 * GpuJoinDescToList).  Expressions reference the children's output with
 * OUTER_VAR / INNER_VAR Vars, like a native HashJoin's.  The node's scan
 * tuple (custom_scan_tlist) is filled column by column from one side.
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

/* hashjoin/path.c */
extern Path *GpuJoinAggInputPath(RelOptInfo *rel, List *exprs);
extern List *GpuJoinDevicePaths(RelOptInfo *rel);
extern void GpuJoinPathInit(void);

/* hashjoin/plan.c */
extern List *GpuJoinDescToList(const GpuJoinDesc *desc);
extern GpuJoinDesc *GpuJoinDescFromList(List *list);
extern Plan *GpuJoinPlanPath(PlannerInfo *root, RelOptInfo *rel,
							 CustomPath *best_path, List *tlist,
							 List *clauses, List *custom_plans);
extern void GpuJoinPlanInit(void);

/* hashjoin/exec.c */
extern Node *GpuJoinCreateScanState(CustomScan *cscan);
extern bool GpuJoinFillBatch(CustomScanState *node, GpuAggBatchBuilder *builder,
							 GaBatch *batch);

/* hashjoin/explain.c */
extern void GpuJoinExplain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif							/* GPUAGG_HASHJOIN_H */
