/*-------------------------------------------------------------------------
 *
 * aggjoin/probe_filter.h
 *	  An aggjoin's probe-key filter (probe_filter.c): Bloom filters of
 *	  build keys, built by the leader and tested by the parallel workers
 *	  that pack the probe side.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_PROBE_FILTER_H
#define GPUAGG_PROBE_FILTER_H

#include "batch/batch.h"
#include "hashagg/desc.h"
#include "hashagg/layout.h"

/* The leader's filters, one per qualifying join step. */
typedef struct GpuAggProbeFilter GpuAggProbeFilter;

/* A participant's view of the filters in shared memory. */
typedef struct GpuAggProbeKeys GpuAggProbeKeys;

/* aggjoin/probe_filter.c */
extern bool GpuAggProbeFilterStepQualifies(const GpuAggDesc *desc,
										   const GpuAggLayout *layout,
										   int step, int *column);
extern GpuAggProbeFilter *GpuAggProbeFilterCreate(void);
extern void GpuAggProbeFilterAdd(GpuAggProbeFilter *filter, int column,
								 const int64 *keys, int64 n);
extern Size GpuAggProbeFilterSharedBytes(const GpuAggProbeFilter *filter);
extern void GpuAggProbeFilterShare(const GpuAggProbeFilter *filter, void *place,
								   Size room);
extern Size GpuAggProbeFilterAreaBytes(const void *place);
extern bool GpuAggProbeFilterCounts(const void *place, int *nsteps, int64 *nkeys,
									uint64 *tested, uint64 *removed);
extern GpuAggProbeKeys *GpuAggProbeKeysAttach(void *place, const GpuAggLayout *layout,
											  MemoryContext cxt);
extern bool GpuAggProbeKeysRow(GpuAggProbeKeys *keys, const Datum *values,
							   const bool *isnull);
extern int	GpuAggProbeKeysRun(GpuAggProbeKeys *keys, const GpuAggInputColumn *input,
							   int n, bool *keep);
extern void GpuAggProbeKeysFlush(GpuAggProbeKeys *keys);

#endif							/* GPUAGG_PROBE_FILTER_H */
