/*-------------------------------------------------------------------------
 *
 * hashagg/derived.h
 *	  Numeric aggregate arguments of +, - and * that the device computes
 *	  from their operands (derived.c; gpuagg_device.h's derived columns).
 *
 * The child computes the operands: numeric(p <= 18, s) expressions as
 * scaled int64 (and a NaN flag), integer expressions cast to numeric as
 * they are; constants are inline.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DERIVED_H
#define GPUAGG_DERIVED_H

#include "nodes/pg_list.h"
#include "nodes/primnodes.h"

#include "gpuagg_device.h"

/* One step of an argument's program (GaExprStep's form). */
typedef struct GpuAggDerivedStep
{
	int16		op;				/* GaExprOp */
	int16		scale;			/* COLUMN of a numeric operand: its scale */
	AttrNumber	attno;			/* COLUMN: the child column of the operand */
	Oid			type;			/* COLUMN: NUMERICOID, INT2OID, INT4OID or INT8OID */
	int32		power;			/* SCALE */
	int64		constant;		/* CONST */
} GpuAggDerivedStep;

/* An argument the device computes: its program, in postfix order. */
typedef struct GpuAggDerivedDesc
{
	int			nsteps;
	GpuAggDerivedStep steps[GA_EXPR_MAX_STEPS];
} GpuAggDerivedDesc;

/* hashagg/derived.c */
extern bool GpuAggDerivedArgument(Aggref *aggref, List **operands);
extern GpuAggDerivedDesc *GpuAggDerivedCompile(Aggref *aggref, List *child_exprs);

#endif							/* GPUAGG_DERIVED_H */
