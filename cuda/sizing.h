/*-------------------------------------------------------------------------
 *
 * sizing.h
 *	  The sizes of an aggregation and the strategy rules shared by EXPLAIN
 *	  and the GPU device (cuda/sizing.c; its banner has the rules).  The
 *	  boundary's ga_agg_planned_strategy (gpuagg_device.h) is defined there
 *	  too.  gpu/strategy.cu applies these rules to each batch.
 *
 * Internal to cuda/; plain C, no PostgreSQL and no CUDA runtime header
 * (the GPU kernels read the constants).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_SIZING_H
#define GPUAGG_SIZING_H

#include <stdint.h>

#include "gpuagg_device.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define GA_PERFECT_MAX_KEYS 4		/* keys a direct index combines */
#define GA_FUSED_LOAD_PERCENT 70	/* fill limit of the fused kernel's tables */
#define GA_PARTITIONED_L2_PERCENT 100	/* global table size, in % of L2, from
										 * which a forced partitioned runs */
#define GA_STRING_HEAP_BYTES 16		/* heap bytes a group's string key is
									 * given at first (the GPU's heap) */

/* Widths: results, and accumulators in the global arrays and in shared memory */
extern int	ga_agg_result_width(const GaAggRequest *request, int agg);
extern int64_t ga_agg_state_bytes_per_group(const GaAggRequest *request);
extern int	ga_shared_width(const GaAggRequest *request, int agg, int narrow);
extern int64_t ga_shared_state_bytes(const GaAggRequest *request, int narrow);
extern int64_t ga_table_bytes_per_group(const GaAggRequest *request);
extern int	ga_keys_pack_bits(const GaAggRequest *request, int assume_nullable);

/* Budgets of a GPU's shared memory, and what they hold */
extern int64_t ga_shared_budget_bytes(const GaGpuInfo *info);
extern int64_t ga_direct_budget_bytes(const GaGpuInfo *info);
extern int64_t ga_shared_strategy_max_groups(const GaGpuInfo *info,
											 const GaAggRequest *request);
extern int64_t ga_fused_max_groups(const GaGpuInfo *info, const GaAggRequest *request);
extern int64_t ga_perfect_shared_max_entries(const GaGpuInfo *info,
											 const GaAggRequest *request);

/* Strategy rules */
extern int	ga_request_two_phase_only(const GaAggRequest *request);
extern GaStrategy ga_auto_strategy_for_groups(const GaGpuInfo *info,
											  const GaAggRequest *request,
											  int64_t groups);
extern int	ga_partitioned_applies(const GaGpuInfo *info, const GaAggRequest *request,
								   int64_t groups);

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_SIZING_H */
