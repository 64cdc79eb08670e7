/*-------------------------------------------------------------------------
 *
 * device_gpu.cuh
 *	  Internal state of the GPU device (device_gpu.cu): the per-process
 *	  device with its stream, the pinned batches, the group table's device
 *	  arrays and the aggregation object.  Kept apart from the code so that
 *	  later GPU operators (joins) can share the device and its buffers, and
 *	  so that the kernel benchmark (test/bench/kernels) can drive an
 *	  aggregation over data already on the GPU.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DEVICE_GPU_CUH
#define GPUAGG_DEVICE_GPU_CUH

#include "device_impl.h"
#include "hashagg_kernels.cuh"

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* One opened GPU: its ordinal, stream and what discovery says about it. */
typedef struct GpuDevice
{
	int			ordinal;
	cudaStream_t stream;
	GaGpuInfo	info;
	int			cooperative;	/* supports cooperative launches */
} GpuDevice;

/* Where a pinned host batch is in its cycle. */
typedef enum GpuHostBatchState
{
	HOST_BATCH_FREE = 0,		/* nobody uses it */
	HOST_BATCH_FILLING,			/* handed out, not submitted yet */
	HOST_BATCH_IN_FLIGHT		/* submitted; copied is pending or done */
} GpuHostBatchState;

/* One of the two pinned batches. */
typedef struct GpuHostBatch
{
	GaBatch		batch;
	GaColumn   *columns;
	unsigned char *pinned;		/* every column's values and validity */
	cudaEvent_t copied;			/* recorded after its copies to the device */
	GpuHostBatchState state;
} GpuHostBatch;

/* The group table's device arrays at one capacity. */
typedef struct GpuTable
{
	int64_t		capacity;		/* 0: nothing allocated */
	int32_t    *slots;			/* 2 * capacity slots; NULL without keys */
	long long  *keys;			/* (nkeys + 1) * capacity words; NULL without keys */
	void	   *acc[GA_GPU_MAX_AGGS];	/* per aggregate, capacity elements */
} GpuTable;

/*
 * How one batch runs: the kernels behind a strategy (device_gpu.cu
 * explains each).
 */
typedef enum GpuPlan
{
	PLAN_DIRECT_SHARED = 0,		/* perfect, small range; plain aggregates */
	PLAN_DIRECT_GLOBAL,			/* perfect, large range */
	PLAN_FUSED,					/* shared, packed keys, one pass */
	PLAN_SHARED,				/* shared, two phases */
	PLAN_GLOBAL,				/* global, two phases */
	PLAN_PARTITIONED			/* partitioned, two phases over the permutation */
} GpuPlan;

/* Events that split a batch's device time into phases. */
#define GPU_MAX_MARKS 12

/* One aggregation on the GPU. */
typedef struct GpuAgg
{
	GpuDevice  *device;
	int			device_input;	/* batches come as device columns (benchmark) */

	/* The request, copied. */
	GaAggRequest request;
	GaValueType *column_types;
	int		   *key_columns;
	GaAggSpec  *aggs;
	int			ncolumns;
	int			nkeys;
	int			naggs;
	int64_t		batch_rows;

	/* Column layout, in the pinned batches and in the device input buffer. */
	uint8_t    *needs_values;	/* per column: values go to the device */
	uint8_t    *needs_validity; /* per column: validity goes when it has nulls */
	size_t	   *host_values_offset;
	size_t	   *host_validity_offset;
	size_t	   *dev_values_offset;
	size_t	   *dev_validity_offset;
	size_t		validity_bytes; /* per column: (batch_rows + 7) / 8 */
	size_t		host_batch_bytes;
	size_t		dev_input_bytes;

	GpuHostBatch host[2];
	int			next_host;		/* the batch next_batch hands out */

	/* Device state. */
	unsigned char *dev_input;
	int32_t    *dev_group_ids;	/* batch_rows ids; NULL without keys */
	int32_t    *dev_rows;		/* escape list or permutation; lazily */
	unsigned int *dev_hist;		/* partition counters; lazily */
	unsigned int *dev_cursor;
	GaDevControl *dev_control;
	GaDevControl *host_control; /* pinned mirror, copied after every batch */
	GaDevProbe *dev_probe;		/* lazily */
	GaDevProbe *host_probe;		/* pinned */
	GpuTable	table;
	GpuTable	retired;		/* the previous table while a growth runs */
	int			acc_width[GA_GPU_MAX_AGGS];

	/* Strategy state. */
	int			narrow;			/* shared widths narrow: batches <= 2^31 rows */
	int			rows_ok;		/* row numbers fit int32 (lists, escapes) */
	int			cache_bits;		/* block caches of the global kernels */
	int64_t		shared_budget;	/* bytes of shared memory per block */
	int64_t		max_shared_groups;	/* two-phase shared table */
	int64_t		max_fused_groups;	/* fused shared table */
	int			fused_failed;	/* cooperative launch impossible here */
	int			probed;
	int64_t		device_estimate;	/* groups estimated from the probe */
	int			perfect;		/* direct index chosen (for the whole run) */
	int			perfect_in_shared;	/* its range fits a block's shared memory */
	int			perfect_replicas;
	int			perfect_needs_init;
	int			perfect_gathered;
	GaDevPerfect dev_perfect;	/* the kernels' view, device pointers */
	GaStrategy	last_strategy;

	/* The batch on the device, if any. */
	int			inflight;
	int			inflight_copy_timed;
	int64_t		inflight_rows;
	GpuPlan		inflight_plan;
	int64_t		inflight_groups_alloc;	/* PLAN_SHARED */
	int64_t		inflight_nslots;	/* PLAN_FUSED */
	int			inflight_replicas;	/* PLAN_SHARED, PLAN_FUSED */
	int			inflight_pbits; /* PLAN_PARTITIONED */
	GaDevPack	inflight_pack;	/* PLAN_FUSED */
	GaDevKeys	inflight_keys;
	GaDevAggs	inflight_aggs;	/* acc pointers filled at each launch */
	unsigned int fallbacks_seen;

	int64_t		known_groups;	/* groups after the last finished batch */
	int64_t		batches_launched;

	cudaEvent_t ev_copy_start;
	cudaEvent_t ev_copy_end;
	cudaEvent_t marks[GPU_MAX_MARKS];	/* marks[0] starts, the last ends */
	GaPhase		mark_phase[GPU_MAX_MARKS];	/* phase ending at each mark */
	int			nmarks;

	GaAggStats	stats;

	int			failed;
	GaStatus	error;			/* the first failure, reported again */

	int			finished;
	GaAggResult result;
} GpuAgg;

/*
 * For test/bench/kernels: an aggregation whose batches are columns already
 * in device memory (no pinned batches, no device input buffer), one batch
 * of up to request->batch_rows rows per submit, and a settle that finishes
 * all device work except copying the groups out (ga_gpu_ops.agg_finish
 * does that, and agg_get_stats / agg_destroy work as usual).  values[c] and
 * validity[c] (NULL: no nulls) are device pointers per request column.
 */
extern void *ga_gpu_bench_create(void *device_impl, const GaAggRequest *request,
								 GaStatus *status);
extern int	ga_gpu_bench_submit(void *agg_impl, const void *const *values,
								const uint8_t *const *validity, int64_t nrows,
								GaStatus *status);
extern int	ga_gpu_bench_settle(void *agg_impl, GaStatus *status);

#endif							/* GPUAGG_DEVICE_GPU_CUH */
