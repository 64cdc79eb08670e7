/*-------------------------------------------------------------------------
 *
 * hashagg/layout.h
 *	  The batch columns and device operations of a GpuHashAgg description
 *	  (layout.c), and how each SQL aggregate is computed from them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_LAYOUT_H
#define GPUAGG_LAYOUT_H

#include "fmgr.h"

#include "batch/encoding.h"
#include "finalize/numeric.h"
#include "hashagg/catalog.h"
#include "hashagg/desc.h"
#include "gpuagg_device.h"

/* How one SQL aggregate is computed from device operations. */
typedef struct GpuAggOutput
{
	GpuAggKind	kind;
	Oid			input_type;
	Oid			result_type;
	int			op_value;		/* SUM/MIN/MAX result, or -1 */
	int			op_count;		/* COUNT / COUNT_ROWS result (numeric: finite) */
	int			op_nonfinite;	/* COUNT_NONFINITE result, or -1 */
	int			op_min;			/* avg of floats: MIN and MAX, for */
	int			op_max;			/* PostgreSQL's overflow error, or -1 */
	/* numeric arguments (finalize/numeric.c) */
	int			numeric_scale;
	int			nlimbs;			/* numeric sum(x) in limbs: how many */
	int			op_limbs[GPUAGG_NUMERIC_LIMBS]; /* SUM_INT of each limb */
	int			nsquares;		/* variance: limbs of sum(x * x) */
	int			op_squares[GPUAGG_SQUARE_LIMBS];	/* SUM_INT of each */
	int			op_nan;			/* COUNT of NaN, +Infinity, -Infinity */
	int			op_pinf;
	int			op_ninf;
	int			distinct_set;	/* DISTINCT aggregate: its set, else -1 */
	FmgrInfo   *final_fn;		/* moments: the aggregate's final function,
								 * looked up once with the layout */
} GpuAggOutput;

/*
 * A DISTINCT argument: the device groups by the keys plus this column (a
 * second request), and the host counts or sums the distinct values per group
 * (finalize/distinct.c).
 */
typedef struct GpuAggDistinctSet
{
	int			column;			/* batch column of the argument, key-encoded */
	GpuAggEncoding encoding;
	int32		string_width;	/* bytes: the argument's average, else 0 */
} GpuAggDistinctSet;

/* The batch columns and device operations of a description. */
typedef struct GpuAggLayout
{
	int			ncolumns;
	int			maxcolumns;
	GpuAggColumnSource *sources;
	GaValueType *column_types;
	int		   *key_columns;	/* batch column of each key */
	int		   *key_first_ops;	/* MIN over a key's ZERO_SIGN or SPELLING, or -1 */
	int			nops;
	GaAggSpec  *ops;
	GpuAggOutput *outputs;		/* one per aggregate of the description */
	int			ndistinct;
	GpuAggDistinctSet *distinct_sets;

	/*
	 * The planner's average bytes of the string columns' values (keys and
	 * DISTINCT arguments that travel as bytes): the widest column's, and a
	 * group's keys' together.
	 */
	int32		string_width;
	int32		key_string_bytes;

	/*
	 * Aggjoin: the columns of side s (desc's sides) are [side_first[s],
	 * side_first[s + 1]), side 0's first, each side's keys after its other
	 * columns; sources' attnos are columns of that side's child.  Otherwise
	 * one side, all columns.
	 */
	int			nsides;
	int			side_first[GA_AGG_MAX_JOIN_STEPS + 2];
	int			build_key_columns[GA_AGG_MAX_JOIN_STEPS + 1][GA_AGG_MAX_JOIN_KEYS]; /* per build side and key */
	uint8	   *from_build;		/* per column: its side */
	GaAggJoinSpec join_spec;
	int			nfilter_dicts;	/* join filter comparisons of dictionary
								 * ids (hashagg/layout.c) */

	/* columns the device computes (hashagg/derived.c), for the request */
	int			nderived;
	GaDerivedColumn *derived;
	int			nexprs;			/* distinct expressions among them */
	const struct GpuAggDerivedDesc **exprs;
} GpuAggLayout;

/* hashagg/layout.c */
extern GpuAggLayout *GpuAggLayoutBuild(const GpuAggDesc *desc);
extern int64 GpuAggLayoutStringBytes(const GpuAggLayout *layout, int64 rows);

#endif							/* GPUAGG_LAYOUT_H */
