/*-------------------------------------------------------------------------
 *
 * finalize/stats.h
 *	  The statistical aggregates, finalized by PostgreSQL's own final
 *	  functions: variance and stddev of integers and numerics from exact
 *	  sums (variance.c), of floats and the two-variable statistics from a
 *	  device's moments (moments.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_STATS_H
#define GPUAGG_STATS_H

#include "hashagg/catalog.h"
#include "hashagg/layout.h"
#include "gpuagg_device.h"

/* finalize/variance.c */
extern Datum GpuAggVarianceResult(GpuAggKind kind, int64 n, int64 nan, int64 pinf,
								  int64 ninf, Datum sum, Datum sum_squares,
								  int scale, bool *isnull);

/* finalize/moments.c */
extern void GpuAggCheckFloatSpread(double n, double min, double max);
extern Datum GpuAggMomentsResult(const GpuAggOutput *output, const GaAggResult *result,
								 int64 group, bool *isnull);

#endif							/* GPUAGG_STATS_H */
