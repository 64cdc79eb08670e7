/*-------------------------------------------------------------------------
 *
 * hashagg/catalog.h
 *	  What GpuHashAgg supports (catalog.c): the aggregates and key types a
 *	  device computes, how each value is encoded into a batch column, and
 *	  the child expression that computes an aggregate's argument.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CATALOG_H
#define GPUAGG_CATALOG_H

#include "nodes/pg_list.h"
#include "nodes/primnodes.h"

#include "batch/encoding.h"
#include "gpuagg_device.h"

/* The aggregates a device computes, by how they are computed. */
typedef enum GpuAggKind
{
	GPUAGG_COUNT_STAR,
	GPUAGG_COUNT,
	GPUAGG_SUM,
	GPUAGG_AVG,
	GPUAGG_MIN,
	GPUAGG_MAX,
	GPUAGG_BOOL_AND,			/* bool_and, every: MIN over 0/1 */
	GPUAGG_BOOL_OR,				/* bool_or: MAX over 0/1 */
	GPUAGG_VAR_SAMP,			/* var_samp, variance (finalize/variance.c) */
	GPUAGG_VAR_POP,				/* var_pop */
	GPUAGG_STDDEV_SAMP,			/* stddev_samp, stddev */
	GPUAGG_STDDEV_POP,			/* stddev_pop */
	GPUAGG_FLOAT_MOMENTS,		/* variance and stddev of floats: the
								 * aggregate's final function over device
								 * MOMENTS (finalize/moments.c) */
	GPUAGG_FLOAT_COMOMENTS,		/* corr, covar_*, regr_* but regr_count:
								 * the final function over COMOMENTS */
	GPUAGG_REGR_COUNT			/* regr_count: COMOMENTS' n */
} GpuAggKind;

/* The aggregates finalized from N, sum(x) and sum(x * x) (finalize/variance.c). */
#define GPUAGG_KIND_IS_VARIANCE(kind) \
	((kind) == GPUAGG_VAR_SAMP || (kind) == GPUAGG_VAR_POP || \
	 (kind) == GPUAGG_STDDEV_SAMP || (kind) == GPUAGG_STDDEV_POP)

/* The aggregates of two float8 arguments, over device COMOMENTS. */
#define GPUAGG_KIND_IS_COMOMENTS(kind) \
	((kind) == GPUAGG_FLOAT_COMOMENTS || (kind) == GPUAGG_REGR_COUNT)

/* hashagg/catalog.c */
extern char *GpuAggAggrefName(Aggref *aggref);
extern char *GpuAggVolatileFunction(Node *node);
extern bool GpuAggClassifyAggref(Aggref *aggref, GpuAggKind *kind, Oid *input_type,
								 int *numeric_scale, int *numeric_precision,
								 bool *distinct, const char **why);
extern Expr *GpuAggUnderFilter(Aggref *aggref, Expr *expr);
extern Expr *GpuAggChildArgument(Aggref *aggref, int argno);
extern AttrNumber GpuAggChildAttno(List *child_exprs, Node *expr);
extern Oid	GpuAggFinalFunction(Oid aggfnoid);
extern int	GpuAggDeviceOpsNeeded(GpuAggKind kind, Oid input_type,
								  int numeric_precision);
extern bool GpuAggKeyTypeSupported(Oid type, Oid collation, const char *what,
								   const char **why);
extern GpuAggEncoding GpuAggKeyEncoding(Oid type);
extern bool GpuAggKeyAsBytes(Oid base_type);
extern bool GpuAggDistinctAsBytes(Aggref *aggref);
extern GpuAggEncoding GpuAggInputEncoding(Oid type);

#endif							/* GPUAGG_CATALOG_H */
