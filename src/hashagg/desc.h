/*-------------------------------------------------------------------------
 *
 * hashagg/desc.h
 *	  The description of a GpuHashAgg: what its executor (and each
 *	  GpuAggPack under it) needs to know, kept in CustomScan.custom_private.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DESC_H
#define GPUAGG_DESC_H

#include "nodes/nodes.h"
#include "nodes/pg_list.h"

#include "hashagg/catalog.h"
#include "gpuagg_device.h"

struct GpuAggDerivedDesc;		/* hashagg/derived.h */

/* One group key. */
typedef struct GpuAggKeyDesc
{
	AttrNumber	child_attno;	/* column of the child's output */
	Oid			type;			/* base type of the key; TEXTOID for a bpchar
								 * of a declared length, whose values are
								 * padded alike and so group by their bytes
								 * (GpuAggDescFromPath) */
	bool		one_spelling;	/* every value spelt one way
								 * (KeyDictKeyHasOneSpelling): no first-row
								 * spelling column */
	bool		as_bytes;		/* a text key that travels as its bytes
								 * (GpuAggKeyAsBytes), not as dictionary ids */
	int16		numeric_scale;	/* a numeric(p, s) key that travels as value *
								 * 10^s (GpuAggNumericKeyScale): s, else -1 */
	int32		width;			/* the planner's average bytes of a value */
} GpuAggKeyDesc;

/* One aggregate. */
typedef struct GpuAggAggDesc
{
	GpuAggKind	kind;
	Oid			input_type;		/* base type of the argument, or InvalidOid */
	Oid			result_type;
	AttrNumber	arg_attno;		/* child column of the argument, 0 if none */
	AttrNumber	arg2_attno;		/* ... of the second argument (corr(y, x):
								 * x), 0 if none */
	AttrNumber	filter_attno;	/* child column of FILTER, 0 if none */
	Oid			final_fn;		/* FLOAT_MOMENTS, FLOAT_COMOMENTS: the
								 * aggregate's final function */
	Oid			arg_source_type;	/* base type of the child columns of the
									 * arguments: input_type, or a type that
									 * batch/builder.c converts to float8 */
	Oid			arg2_source_type;
	int			numeric_scale;	/* numeric argument: its scale, else 0 */
	int			numeric_precision;	/* ... and its most digits, else 0 */
	bool		distinct;		/* over DISTINCT values (finalize/distinct.c) */
	bool		as_bytes;		/* DISTINCT: a text argument that travels as
								 * its bytes (GpuAggDistinctAsBytes), not as
								 * dictionary ids */
	int32		arg_width;		/* the planner's average bytes of the
								 * argument, 0 if none */
	struct GpuAggDerivedDesc *derived;	/* numeric argument computed by the
										 * device from its operands
										 * (hashagg/derived.c; arg_attno is 0),
										 * else NULL */
} GpuAggAggDesc;

/*
 * One grouping set: the keys it groups by.  A plain GROUP BY (or none) is
 * one set of every key; GROUPING SETS, ROLLUP and CUBE give one per
 * expanded set, and the node aggregates the input once per set.
 */
typedef struct GpuAggSetDesc
{
	uint32		key_mask;		/* bit i: keys[i] is in the set */
	double		est_groups;		/* the planner's estimate for this set */
} GpuAggSetDesc;

/* Most grouping sets one GpuHashAgg computes (each is a device aggregation). */
#define GPUAGG_MAX_GROUPING_SETS 16

/* One GROUPING(...) of the output: the key of each argument, in order. */
typedef struct GpuAggGroupingDesc
{
	int			nargs;
	int		   *keys;			/* index into GpuAggDesc.keys */
} GpuAggGroupingDesc;

/*
 * A filter program of the device (aggjoin/filter.c, GaAggJoinSpec's form),
 * each operand a child column (attno, attno2; 0: none) of base type type,
 * type2.
 */
typedef struct GpuAggFilterDesc
{
	int			nsteps;			/* 0: no filter */
	struct
	{
		int16		op;			/* GaFilterOp */
		int16		cmp;		/* GaCompareOp */
		AttrNumber	attno;
		AttrNumber	attno2;
		Oid			type;
		Oid			type2;
	}			steps[GA_FILTER_MAX_STEPS];
} GpuAggFilterDesc;

/* What the child of a GpuHashAgg (its probe side's, for an aggjoin) is. */
typedef enum GpuAggChildKind
{
	GPUAGG_CHILD_PROJECTION,	/* the input's rows, projected to the child
								 * expressions (or its pages read directly) */
	GPUAGG_CHILD_PACKED,		/* a Gather of GpuAggPack nodes, whose workers
								 * send the rows packed into batch messages */
	GPUAGG_CHILD_JOIN_INPUT		/* a GpuHashJoin whose joined rows go straight
								 * into batches (join input: its scan tuple's
								 * columns are the child_attnos) */
} GpuAggChildKind;

/*
 * What the executor needs, stored in CustomScan.custom_private (packed by
 * GpuAggDescToList, read back by GpuAggDescFromList).  The node's
 * scan tuple (custom_scan_tlist) is the keys, then the aggregates, then the
 * GROUPING(...) expressions, in order.
 */
typedef struct GpuAggDesc
{
	int			nkeys;
	GpuAggKeyDesc *keys;
	int			naggs;
	GpuAggAggDesc *aggs;
	double		est_groups;		/* all sets together */
	bool		rescan_safe;	/* child can be re-run for a CPU fallback */
	double		input_rows;		/* rows the planner expects from the input */
	GpuAggChildKind child_kind;
	int			nsets;			/* at least one */
	GpuAggSetDesc *sets;
	bool		grouping_sets;	/* GROUPING SETS, ROLLUP or CUBE in the query */
	int			ngroupings;
	GpuAggGroupingDesc *groupings;

	/*
	 * Aggjoin (aggjoin/): the input is an equi-join, or a chain of them,
	 * computed on the device.  Side 0 is the probe side (the bottom join's
	 * outer side), side s (1 .. njoin_steps) the build (inner) side of join
	 * step s, bottom up; each is a child of the node.  Every child expression
	 * is computed by one side, as its column child_side_attno there; each
	 * side's child outputs its expressions, then (a build side) its own join
	 * keys, then the outer keys of the steps it gives them to (keys' side).
	 * A step joins on one device key (an exact value, a dictionary id, or
	 * two int2/int4 keys paired), or on keys that the device hashes
	 * together and rechecks: 2 .. GA_AGG_MAX_JOIN_KEYS of them, or any
	 * number of which one travels as its bytes (each exact, a dictionary
	 * id or bytes; their outer keys may come from different sides).
	 */
	int			njoin_steps;	/* 0: not aggjoin */
	struct
	{
		int			type;		/* GaAggJoinType */
		bool		build_unique;	/* a SEMI join: each key built once, so
									 * that the inner join matches a row at
									 * most once */
		double		match_fraction; /* of the rows it probes, the share the
									 * planner expects it to keep (at most 1;
									 * aggjoin/probe_filter.c) */
		int			nkeys;		/* 1 .. GA_AGG_MAX_JOIN_KEYS */
		GpuAggFilterDesc filter;	/* the step's own (an outer, semi or
									 * anti join's other conditions, or an
									 * INNER join's below a RIGHT or FULL
									 * one): checked at the step */
		struct
		{
			int			side;	/* the side computing the outer key */
			Oid			type;	/* base types of the outer and build keys */
			Oid			build_type;
			AttrNumber	attno;	/* the outer key's column in side's child */
			AttrNumber	build_attno;	/* the build key's in side step's */
			bool		as_bytes;	/* both travel as their bytes
									 * (GpuAggJoinKeyAsBytes), not as ids
									 * of a dictionary */
		}			keys[GA_AGG_MAX_JOIN_KEYS];
	}			join_steps[GA_AGG_MAX_JOIN_STEPS];
	int			nchild;			/* child expressions */
	int		   *child_side;		/* per child column (attno - 1) */
	AttrNumber *child_side_attno;	/* ... its column in its side's child */
	AttrNumber	side_ncolumns[GA_AGG_MAX_JOIN_STEPS + 1];	/* each side child's */
	int			packed_sides;	/* bit s: side s's child is a Gather of
								 * GpuAggPack nodes packing it */

	/*
	 * The device's filter over the joined rows (aggjoin/filter.c): INNER
	 * joins' conditions besides their keys, checked after the chain.
	 */
	GpuAggFilterDesc filter;
	char	   *join_cond;		/* for EXPLAIN: the joins' keys, as text */
	char	   *join_filter;	/* ... and the device's filter (aggjoin/filter.c) */
	int			pack_side;		/* a GpuAggPack's: the side it packs */
} GpuAggDesc;

/*
 * One join of an aggjoin path's chain, as the path search found it
 * (aggjoin/path.c).
 */
typedef struct GpuAggJoinPathStep
{
	JoinType	type;
	List	   *outer_keys;		/* device keys over the sides below the step */
	List	   *inner_keys;		/* ... and over its build side */
	List	   *key_sides;		/* integers: the side computing each outer key */
	List	   *hash_clauses;	/* the join's equalities, for EXPLAIN */
	List	   *filter_quals;	/* its other conditions, for EXPLAIN */
	int			match_permille; /* of the rows it probes, the thousandths
								 * the planner expects it to keep */
	List	   *program;		/* the step's own filter program
								 * (aggjoin/filter.c), or NIL */
} GpuAggJoinPathStep;

/* The joins of an aggjoin path, bottom up. */
typedef struct GpuAggJoinPath
{
	int			nsteps;
	GpuAggJoinPathStep steps[GA_AGG_MAX_JOIN_STEPS];
	List	   *child_sides;	/* integers: the side computing each child
								 * expression */
	List	   *filter_program; /* the filter after the chain
								 * (aggjoin/filter.c), or NIL */
	int			packed_sides;	/* bit s: side s's child is a Gather of
								 * GpuAggPack nodes packing it */
	int			pack_side;		/* a GpuAggPack's path: the side it packs */
} GpuAggJoinPath;

/*
 * What a GpuHashAgg or GpuAggPack path keeps in custom_private (packed by
 * GpuAggPathToList, read back by GpuAggPathFromList): the grouping as
 * hashagg/path.c found it, from which hashagg/private.c's
 * GpuAggDescFromPath makes the description at plan time.
 */
typedef struct GpuAggPathInfo
{
	List	   *keys;			/* group key expressions, as the output has them */
	List	   *aggrefs;		/* the planner's Aggrefs */
	List	   *child_exprs;	/* the child's output expressions */
	List	   *having;
	double		est_groups;		/* all grouping sets together */
	bool		rescan_safe;	/* nothing volatile: the child can run again */
	double		input_rows;
	int			nsets;			/* grouping sets, largest first */
	uint32		set_masks[GPUAGG_MAX_GROUPING_SETS];	/* see GpuAggSetDesc */
	double		set_groups[GPUAGG_MAX_GROUPING_SETS];
	bool		grouping_sets;	/* GROUPING SETS, ROLLUP or CUBE in the query */
	int			grouping_relid; /* compat.h's GpuAggGroupingRelid */
	List	   *groupings;		/* the GROUPING(...) expressions */
	List	   *grouping_keys;	/* per GROUPING(...), the keys of its
								 * arguments (integer lists) */
	GpuAggChildKind child_kind;
	GpuAggJoinPath *join;		/* aggjoin: its joins; else NULL */
} GpuAggPathInfo;

#endif							/* GPUAGG_DESC_H */
