/*-------------------------------------------------------------------------
 *
 * finalize/finalize.h
 *	  From a device's per-group results to the datums PostgreSQL's own
 *	  aggregates return: finalize.c, and distinct.c for DISTINCT
 *	  aggregates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_FINALIZE_H
#define GPUAGG_FINALIZE_H

#include "batch/batch.h"
#include "hashagg/layout.h"
#include "gpuagg_device.h"

/* finalize/finalize.c */
extern Datum GpuAggFinalize(const GpuAggOutput *output, const GaAggResult *result,
							int64 group, bool *isnull);
extern Datum GpuAggInt128ToNumeric(int128 value);

/* finalize/distinct.c */
typedef struct GpuAggDistinctSums GpuAggDistinctSums;

extern GpuAggDistinctSums *GpuAggDistinctCombine(const GpuAggLayout *layout,
												 int noutputs, int nkeys,
												 const GaAggResult *main,
												 const GaAggResult *const *sets,
												 GpuAggBatchBuilder *builder);
extern Datum GpuAggDistinctFinalize(const GpuAggDistinctSums *sums,
									const GpuAggOutput *out, int o,
									int64 group, bool *isnull);

#endif							/* GPUAGG_FINALIZE_H */
