/*-------------------------------------------------------------------------
 *
 * device_gpu.cuh
 *	  Internal state of the GPU device (device_gpu.cu): the per-process
 *	  device with its stream, the pinned batches, the group table's device
 *	  arrays and the aggregation object.  Kept apart from the code so that
 *	  later GPU operators (joins) can share the device and its buffers.
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

/* One aggregation on the GPU. */
typedef struct GpuAgg
{
	GpuDevice  *device;

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
	GaDevControl *dev_control;
	GaDevControl *host_control; /* pinned mirror, copied after every batch */
	GpuTable	table;
	GpuTable	retired;		/* the previous table while a growth runs */
	int			acc_width[GA_GPU_MAX_AGGS];

	/* Shared-memory strategy. */
	int64_t		max_shared_groups;
	int64_t		shared_bytes_per_group;

	/* The batch on the device, if any. */
	int			inflight;
	int			inflight_copy_timed;
	int64_t		inflight_rows;
	GaStrategy	inflight_strategy;
	GaDevKeys	inflight_keys;
	GaDevAggs	inflight_aggs;	/* acc pointers filled at each launch */
	unsigned int fallbacks_seen;

	int64_t		known_groups;	/* groups after the last finished batch */
	int64_t		batches_launched;

	cudaEvent_t ev_copy_start;
	cudaEvent_t ev_copy_end;
	cudaEvent_t ev_kernel_start;
	cudaEvent_t ev_done;

	GaAggStats	stats;

	int			failed;
	GaStatus	error;			/* the first failure, reported again */

	int			finished;
	GaAggResult result;
} GpuAgg;

#endif							/* GPUAGG_DEVICE_GPU_CUH */
