/*-------------------------------------------------------------------------
 *
 * gpu/gpu_device.cuh
 *	  Internal interface of the GPU device (cuda/gpu/): the per-process
 *	  device, the pinned batches, the group table's device arrays and the
 *	  aggregation object, and the functions each file of the folder gives
 *	  the others, grouped by that file.  The kernel
 *	  benchmark (test/bench/kernels) includes it too, to drive an
 *	  aggregation over data already on the GPU.
 *
 * The files call one way: gpu/device.cu (discovery, context, the table of
 * entry points) calls the aggregation (gpu/hashagg.cu) and the hash join
 * (gpu/hashjoin.cu); the aggregation calls its input (gpu/input.cu), its
 * batches (gpu/batch.cu), their plans (gpu/strategy.cu), its derived
 * columns (gpu/derived.cu), its string keys (gpu/strings.cu, which
 * gpu/batch.cu calls too) and the aggjoin (gpu/aggjoin.cu,
 * gpu/aggjoin_probe.cu), which calls the hash join's build and the
 * input and batches back to aggregate what it gathers; all of them
 * launch the kernels of gpu/kernels/ and take their device memory from
 * gpu/memory.cu, which counts it per GPU.
 *
 * Concurrency.  Every aggregation (its aggjoin part included) and every
 * join has a non-blocking stream of its own, created with it and destroyed
 * after its work is done, and all of its work (copies, kernels, CUB calls,
 * events, waits) runs on that stream; the aggjoin's builds run on their
 * aggregation's.  So objects of one GPU may be called at the same time
 * from different host threads (the GPU service's request threads), their
 * work overlapping on the GPU; one object is called by one thread at a
 * time.  What they share is safe so: the opened devices (gpu/device.cu)
 * are written before any object exists and only read after; the memory
 * counts (gpu/memory.cu) are atomics and a mutex; the kernels'
 * shared-memory opt-in (ga_opt_in_shared) sets the same value every time;
 * the last CUDA error is per host thread; each entry point makes its GPU
 * current for the calling thread.  cudaMalloc and cudaFree synchronize the
 * whole GPU, so an allocation on a batch's path (a group table's growth,
 * the first batch's lazily allocated buffers) waits for every stream.
 *
 * It also holds the small host helpers every GPU file uses (errors as a
 * GaStatus, allocation, streams, polled waits, event timing, chunked
 * copies), as static inline functions.  Host memory the caller reads or fills (the
 * batches, the results, a join's answers and sorted rows) comes from the
 * host provider (util.h) when one is set: pinned_alloc, ga_host_alloc.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DEVICE_GPU_CUH
#define GPUAGG_DEVICE_GPU_CUH

#include "device_impl.h"
#include "gpuagg_hash.h"
#include "sizing.h"
#include "tune.h"
#include "util.h"
#include "validate.h"
#include "kernels/hashagg.cuh"
#include "kernels/hashjoin.cuh"

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Pause between two polls of an event while waiting for the GPU. */
#define GPU_POLL_SLEEP_NS 50000L

/* Alignment of the arrays carved out of one allocation. */
#define GPU_ALIGN 256

/* Bytes of one chunk of a copy between pageable host memory and the GPU. */
#define GPU_COPY_CHUNK_BYTES ((size_t) 32 << 20)

/*
 * Heap pages a batch carries (gpu/deform.cu): 16 MB of images, one copy
 * over the link per batch; both pinned batches hold them, in the GPU
 * service's arena too.
 */
#define GPU_PAGE_BATCH_PAGES 2048

/*
 * One opened GPU: its ordinal and what discovery says about it.  Its
 * objects each have their own stream.
 */
typedef struct GpuDevice
{
	int			ordinal;
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
	unsigned char *pinned;		/* every column's values and validity, then
								 * the page area of a request with pages */
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
	unsigned long long *hashes; /* string keys: capacity tuple hashes */
	uint32_t   *lens;			/* string keys: nstrings * capacity lengths */
} GpuTable;

/* The aggjoin part of an aggregation (gpu/aggjoin.cu). */
typedef struct GpuAggJoin GpuAggJoin;

/*
 * How one batch runs: the kernels behind a strategy (gpu/strategy.cu
 * explains each).
 */
typedef enum GpuPlan
{
	PLAN_DIRECT_SHARED = 0,		/* perfect, small range; plain aggregates */
	PLAN_DIRECT_GLOBAL,			/* perfect, large range */
	PLAN_FUSED,					/* shared, packed keys, one pass */
	PLAN_SHARED,				/* shared, two phases */
	PLAN_GLOBAL,				/* global, two phases */
	PLAN_PARTITIONED			/* partitioned, chunk by chunk (or two phases
								 * over the permutation) */
} GpuPlan;

/* Events that split a batch's device time into phases. */
#define GPU_MAX_MARKS 12

/* A request's page program as the deform kernel reads it (gpu/deform.cu). */
typedef struct GpuDeformColumn
{
	void	   *values;			/* the device column; NULL: the kernels read
								 * only its validity */
	uint32_t   *validity;		/* its validity bitmap, as 32-bit words */
	int		   *has_nulls;		/* set to 1 when a row is null */
	int			type;			/* GaValueType */
	int			convert;		/* GaPageConvert */
	int			attlen;
	int			slot;			/* its attribute's entry of a walk's values */
} GpuDeformColumn;

typedef struct GpuPageProgram
{
	const GaPageAttr *attrs;	/* device memory, one allocation */
	const int16_t *slots;
	const GpuDeformColumn *columns;
	int			natts;
	int			ncolumns;
} GpuPageProgram;

/* One aggregation on the GPU. */
typedef struct GpuAgg
{
	GpuDevice  *device;
	cudaStream_t stream;		/* its own, non-blocking; NULL until created */
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
	size_t	   *host_bytes_offset;	/* per string column: its bytes */
	size_t	   *dev_bytes_offset;	/* per string key column: its bytes */
	size_t		validity_bytes; /* per column: (batch_rows + 7) / 8 */
	size_t		host_batch_bytes;
	size_t		dev_input_bytes;

	GpuHostBatch host[2];
	int			next_host;		/* the batch next_batch hands out */

	/* Device state. */
	unsigned char *dev_input;
	int32_t    *dev_group_ids;	/* batch_rows ids; NULL without keys */
	int32_t    *dev_rows;		/* escape list or permutation; lazily */
	unsigned int *dev_part_counters;	/* partitioned, lazily: hist, begin,
										 * cursor, chunk_first */
	unsigned int *dev_block_counts; /* rows per partitioning block and
									 * partition */
	int32_t    *dev_chunk_groups;	/* group ids of the chunks' entries */
	int32_t    *dev_chunk_distinct; /* entries per chunk */
	unsigned long long *dev_packed_keys;	/* packed keys in partition order */
	void	   *dev_part_values[GA_PART_MAX_VALUES];	/* input values in partition
														 * order, 8 bytes a row */
	GaDevControl *dev_control;
	GaDevControl *host_control; /* pinned mirror, copied after every batch */
	GaDevProbe *dev_probe;		/* lazily */
	GaDevProbe *host_probe;		/* pinned */
	GpuTable	table;
	GpuTable	retired;		/* the previous table while a growth runs */
	int			acc_width[GA_GPU_MAX_AGGS];

	/*
	 * String keys (gpu/strings.cu): the kernels' view (which keys are
	 * strings, the batch's bytes; the table's and heap's pointers are set
	 * at each launch), and the heap of the groups' key bytes.
	 */
	int			nstrings;		/* string keys; 0: none */
	GaDevStrings inflight_strings;
	unsigned char *dev_heap;
	int64_t		heap_capacity;

	/* Strategy state. */
	int			narrow;			/* shared widths narrow: batches <= 2^31 rows */
	int			rows_ok;		/* row numbers fit int32 (lists, escapes) */
	int			cache_bits;		/* block caches of the global kernels */
	int64_t		shared_budget;	/* bytes of shared memory per block */
	int64_t		direct_budget;	/* the same for a direct kernel's block */
	int64_t		max_shared_groups;	/* two-phase shared table */
	int64_t		max_fused_groups;	/* fused shared table */
	int			fused_failed;	/* cooperative launch impossible here */
	int			two_phase_only; /* MOMENTS or COMOMENTS: the direct and
								 * fused kernels do not take them */
	int			probed;
	int64_t		device_estimate;	/* groups estimated from the probe */
	int			contention;		/* the probe's contention level (tuner's
								 * shape classes; 0 unprobed), kept for
								 * every batch */
	int			perfect;		/* direct index chosen (for the whole run) */
	int			perfect_in_shared;	/* its range fits a block's shared memory */
	int			perfect_replicas;
	int			perfect_needs_init;
	int			perfect_gathered;
	GaDevPerfect dev_perfect;	/* the kernels' view, device pointers */
	GaTuner    *tuner;			/* the launch tuner of this GPU's model; NULL:
								 * tuning off */
	int			key_bits;		/* the keys' packed width (shape classes) */
	GaStrategy	last_strategy;	/* planned for the last batch launched (before
								 * any: the first one's plan without a probe);
								 * empty batches are counted under it */

	/* The batch on the device, if any. */
	int			inflight;
	int			inflight_copy_timed;
	int			inflight_gather_timed;	/* aggjoin: ev_gather_* to add */
	int64_t		inflight_rows;
	GpuPlan		inflight_plan;
	int64_t		inflight_groups_alloc;	/* PLAN_SHARED */
	int64_t		inflight_nslots;	/* PLAN_FUSED */
	int			inflight_replicas;	/* PLAN_SHARED, PLAN_FUSED */
	int			inflight_packed;	/* PLAN_PARTITIONED: keys pack (the chunk
									 * kernels), else two phases over the
									 * permutation */
	GaDevPack	inflight_pack;	/* PLAN_FUSED, PLAN_PARTITIONED */
	GaLaunchParams inflight_launch; /* the kernels' launch parameters */
	GaTuneTicket inflight_ticket;	/* the tuner's ticket for its time */
	int			inflight_redone;	/* its kernels ran again after a growth:
									 * its time is not reported */
	int			partitions_ready;	/* PLAN_PARTITIONED: this batch's
									 * partitioning, as partitioned_as says,
									 * is on the device (a redo reuses it);
									 * cleared for every new batch */
	GaDevPartitions partitioned_as; /* the partitioning's buffers and shape */
	int64_t		partitioned_rows;	/* rows it partitioned */
	GaDevKeys	inflight_keys;
	GaDevAggs	inflight_aggs;	/* acc pointers filled at each launch */
	unsigned int fallbacks_seen;

	int64_t		known_groups;	/* groups after the last finished batch */
	int64_t		batches_launched;

	cudaEvent_t ev_copy_start;
	cudaEvent_t ev_copy_end;
	cudaEvent_t ev_gather_start;	/* aggjoin: around a piece's gather */
	cudaEvent_t ev_gather_end;
	cudaEvent_t marks[GPU_MAX_MARKS];	/* marks[0] starts, the last ends */
	GaPhase		mark_phase[GPU_MAX_MARKS];	/* phase ending at each mark */
	int			nmarks;

	/* Aggjoin aggregations: the build side, the probe, the gather. */
	GpuAggJoin *join;
	uint8_t    *column_has_nulls;	/* per column, for the batch on the device */

	/*
	 * Derived columns: the request's (copied and grouped by program), and
	 * the programs with a read part as the kernel reads them.
	 */
	GaDerivedPlan *derived;
	uint8_t    *column_is_derived;	/* per column: computed on the device,
									 * never sent */
	uint8_t    *derived_input;	/* per column: an operand or NaN flag of a
								 * derived column that is read; its bitmap
								 * is always on the device */
	GaDevDerivedProgram *host_programs;
	GaDevDerivedProgram *dev_programs;
	int			nprograms;
	int			derived_pending;	/* the input's derived columns are yet to
									 * be computed */

	/*
	 * Heap pages (gpu/deform.cu), for a request with a page program: each
	 * pinned batch's page area after its columns, the device's copy of it
	 * (images, then descriptions), the program, and the deform's failure
	 * flag and has_nulls scratch (per column) with the flag's pinned
	 * mirror, copied after every deform.  The columns pages fill always
	 * have their bitmap on the device and are read with it.
	 */
	int64_t		page_capacity;	/* 0: no page program */
	uint8_t    *page_column;	/* per column: pages fill it */
	size_t		host_pages_offset;
	size_t		host_page_desc_offset;
	unsigned char *dev_pages;
	int		   *dev_deform;
	int		   *host_deform_failed;
	GpuPageProgram page_program;

	GaAggStats	stats;

	int			failed;
	GaStatus	error;			/* the first failure, reported again */

	int			finished;
	GaAggResult result;
} GpuAgg;

/* ------------------------------------------------------------------------
 * Host helpers shared by the GPU operators
 * ------------------------------------------------------------------------
 */

/*
 * gpu/memory.cu: every device allocation, counted per GPU against the
 * GPU's limit (device_impl.h: ga_gpu_memory_used, ga_gpu_memory_limit).
 * The malloc sets *over_limit when the limit, not the GPU, refuses.
 */
extern cudaError_t ga_gpu_malloc(void **ptr, size_t bytes, int *over_limit);
extern void ga_gpu_free(void *ptr);

/* Monotonic clock in milliseconds, for the context creation time and timings. */
static inline double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Round up to a multiple of GPU_ALIGN. */
static inline size_t
align_up(size_t n)
{
	return (n + GPU_ALIGN - 1) & ~(size_t) (GPU_ALIGN - 1);
}

/* Smallest power of two >= n (n >= 1). */
static inline int64_t
next_pow2(int64_t n)
{
	int64_t		p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* Turn a CUDA error into a status: out of memory or a device error. */
static inline int
cuda_error(GaStatus *status, cudaError_t err, const char *what)
{
	GaStatusCode code = GA_ERR_DEVICE;

	if (err == cudaErrorMemoryAllocation)
		code = GA_ERR_OUT_OF_MEMORY;
	else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
			 err == cudaErrorDevicesUnavailable || err == cudaErrorInvalidDevice)
		code = GA_ERR_NO_DEVICE;
	return ga_status_set(status, code, "GPU error while %s: %s", what,
						 cudaGetErrorString(err));
}

#define GPU_TRY(call, what) \
	do { \
		cudaError_t gpu_err_ = (call); \
		if (gpu_err_ != cudaSuccess) \
			return cuda_error(status, gpu_err_, (what)); \
	} while (0)

/*
 * Device memory, counted per GPU (gpu/memory.cu), with a message naming
 * the purpose and size on failure.
 */
static inline int
device_alloc(void **ptr, size_t bytes, const char *purpose, GaStatus *status)
{
	int			over_limit = 0;
	cudaError_t err = ga_gpu_malloc(ptr, bytes > 0 ? bytes : 1, &over_limit);

	if (err == cudaSuccess)
		return 1;
	if (over_limit)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "could not allocate %.1f MB of GPU memory for %s: the GPU's memory budget (gpuagg.gpu_memory_budget) is reached",
							 bytes / 1048576.0, purpose);
	return ga_status_set(status,
						 err == cudaErrorMemoryAllocation ? GA_ERR_OUT_OF_MEMORY : GA_ERR_DEVICE,
						 "could not allocate %.1f MB of GPU memory for %s: %s",
						 bytes / 1048576.0, purpose, cudaGetErrorString(err));
}

/*
 * Pinned host memory with a message on failure: from the host provider
 * when one is set (util.h: the GPU service's arena, registered with the
 * GPU once), else cudaHostAlloc.
 */
static inline int
pinned_alloc(void **ptr, size_t bytes, const char *purpose, GaStatus *status)
{
	cudaError_t err;

	*ptr = NULL;
	if (ga_host_allocator_set())
	{
		*ptr = ga_host_alloc(bytes);
		if (*ptr != NULL)
			return 1;
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "could not allocate %.1f MB of shared host memory for %s",
							 bytes / 1048576.0, purpose);
	}
	err = cudaHostAlloc(ptr, bytes > 0 ? bytes : 1, cudaHostAllocDefault);
	if (err == cudaSuccess)
		return 1;
	*ptr = NULL;
	return ga_status_set(status,
						 err == cudaErrorMemoryAllocation ? GA_ERR_OUT_OF_MEMORY : GA_ERR_DEVICE,
						 "could not allocate %.1f MB of pinned host memory for %s: %s",
						 bytes / 1048576.0, purpose, cudaGetErrorString(err));
}

/* Free what pinned_alloc returned (NULL is allowed). */
static inline void
pinned_free(void *ptr)
{
	if (ptr == NULL)
		return;
	if (ga_host_allocator_set())
		ga_host_free(ptr);
	else
		(void) cudaFreeHost(ptr);
}

/*
 * Create an object's own stream, non-blocking: it never waits for work on
 * the legacy default stream, nor that for it.
 */
static inline int
gpu_stream_create(cudaStream_t *stream, GaStatus *status)
{
	cudaError_t err = cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);

	if (err == cudaSuccess)
		return 1;
	*stream = NULL;
	return cuda_error(status, err, "creating a CUDA stream");
}

/*
 * Wait for everything on an object's stream (NULL: none was created), then
 * destroy it; the caller frees what the work used afterwards.
 */
static inline void
gpu_stream_destroy(cudaStream_t *stream)
{
	if (*stream == NULL)
		return;
	(void) cudaStreamSynchronize(*stream);
	(void) cudaStreamDestroy(*stream);
	*stream = NULL;
}

/* Free device memory if allocated and clear the pointer. */
static inline void
device_free(void *ptr_address)
{
	void	  **ptr = (void **) ptr_address;

	if (*ptr != NULL)
		ga_gpu_free(*ptr);
	*ptr = NULL;
}

/*
 * Wait until `event` has completed, polling it and calling the wait
 * callback between polls, so that a query cancel is never stuck behind the
 * GPU.
 */
static inline int
wait_event(cudaEvent_t event, GaWaitCallback wait, void *arg, const char *what,
		   GaStatus *status)
{
	struct timespec pause = {0, GPU_POLL_SLEEP_NS};

	for (;;)
	{
		cudaError_t err = cudaEventQuery(event);

		if (err == cudaSuccess)
			return 1;
		if (err != cudaErrorNotReady)
			return cuda_error(status, err, what);
		if (wait != NULL && wait(arg) != 0)
			return ga_status_set(status, GA_ERR_CANCELLED,
								 "cancelled while %s", what);
		nanosleep(&pause, NULL);
	}
}

/* Add the milliseconds between two completed events to *total. */
static inline void
add_elapsed(double *total, cudaEvent_t start, cudaEvent_t end)
{
	float		ms = 0;

	if (cudaEventElapsedTime(&ms, start, end) == cudaSuccess && ms > 0)
		*total += ms;
}

/*
 * Copy `bytes` between pageable host memory and the device a chunk at a
 * time, asking the wait callback between chunks.  The stream must be idle:
 * such copies are synchronous for the host.
 */
static inline int
gpu_copy_chunked(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
				 cudaStream_t stream, GaWaitCallback wait, void *arg,
				 const char *what, GaStatus *status)
{
	for (size_t done = 0; done < bytes; done += GPU_COPY_CHUNK_BYTES)
	{
		size_t		n = bytes - done < GPU_COPY_CHUNK_BYTES ?
			bytes - done : GPU_COPY_CHUNK_BYTES;

		if (done > 0 && wait != NULL && wait(arg) != 0)
			return ga_status_set(status, GA_ERR_CANCELLED, "cancelled while %s", what);
		GPU_TRY(cudaMemcpyAsync((char *) dst + done, (const char *) src + done, n, kind,
								stream),
				what);
	}
	return 1;
}

/*
 * gpu/hashagg.cu: the aggregation's entries of ga_gpu_ops (gpu/device.cu).
 * A failure is remembered and reported again by every later call.
 */
extern void *ga_gpu_agg_create(void *device_impl, const GaAggRequest *request,
							   GaStatus *status);
extern GaBatch *ga_gpu_agg_next_batch(void *agg_impl, GaWaitCallback wait, void *arg,
									  GaStatus *status);
extern int	ga_gpu_agg_submit(void *agg_impl, GaBatch *batch, GaWaitCallback wait,
							  void *arg, GaStatus *status);
extern int	ga_gpu_agg_aggjoin_build(void *agg_impl, int step, const int64_t *keys,
									 const uint32_t *rows, int64_t n, uint64_t key_seed,
									 const GaBatch *payload, GaWaitCallback wait,
									 void *arg, GaStatus *status);
extern const GaAggResult *ga_gpu_agg_finish(void *agg_impl, GaWaitCallback wait,
											void *arg, GaStatus *status);
extern void ga_gpu_agg_get_stats(const void *agg_impl, GaAggStats *stats);
extern void ga_gpu_agg_destroy(void *agg_impl);

/* cpu/hashjoin.c's twin on the GPU, gpu/hashjoin.cu: the entries of ga_gpu_ops. */
extern void *ga_gpu_join_create(void *device_impl, const GaJoinRequest *request,
								GaStatus *status);
extern int	ga_gpu_join_build(void *join_impl, const int64_t *keys,
							  const uint32_t *rows, int64_t n,
							  GaWaitCallback wait, void *arg, GaStatus *status);
extern const uint32_t *ga_gpu_join_sorted_rows(const void *join_impl);
extern GaBatch *ga_gpu_join_next_batch(void *join_impl, GaWaitCallback wait,
									   void *arg, GaStatus *status);
extern const GaJoinMatches *ga_gpu_join_probe(void *join_impl, GaBatch *batch,
											  GaWaitCallback wait, void *arg,
											  GaStatus *status);
extern void ga_gpu_join_get_stats(const void *join_impl, GaJoinStats *stats);
extern void ga_gpu_join_destroy(void *join_impl);

/*
 * gpu/hashjoin.cu: a join on a given stream (NULL: its own), which the
 * aggjoin builds through on the aggregation's stream (the join does not
 * destroy a stream it was given), and the aggjoin's build.
 */
extern void *ga_gpu_join_create_on_stream(void *device_impl, const GaJoinRequest *request,
										  cudaStream_t stream, GaStatus *status);
extern int	ga_gpu_join_build_on_device(void *join_impl, const int64_t *keys,
										const uint32_t *rows, int64_t n,
										GaWaitCallback wait, void *arg,
										GaStatus *status);
extern void ga_gpu_join_device_view(const void *join_impl, GaDevJoinTable *table,
									const uint32_t **sorted_rows);

/*
 * gpu/aggjoin.cu (mark_filter_inputs, create, build, destroy) and
 * gpu/aggjoin_probe.cu (submit, finish): the aggjoin, driven by
 * gpu/hashagg.cu.  mark_filter_inputs marks the filter's columns as read,
 * before the input buffer is laid out; create runs after the
 * aggregation's layout is planned and its device input buffer allocated;
 * the rest after select_device; none of them remembers a failure
 * (gpu/hashagg.cu does).  submit takes a filled batch of at least one row
 * with nothing in flight.  finish aggregates the RIGHT and FULL steps'
 * unmatched build rows (once, before the groups are copied out), leaving
 * the last piece in flight.
 */
extern void ga_gpu_aggjoin_mark_filter_inputs(GpuAgg *agg, const GaAggJoinSpec *join);
extern int	ga_gpu_aggjoin_create(GpuAgg *agg, const GaAggRequest *request,
								  GaStatus *status);
extern int	ga_gpu_aggjoin_build(GpuAgg *agg, int step, const int64_t *keys,
								 const uint32_t *rows, int64_t n, uint64_t key_seed,
								 const GaBatch *payload, GaWaitCallback wait, void *arg,
								 GaStatus *status);
extern int	ga_gpu_aggjoin_submit(GpuAgg *agg, GpuHostBatch *hb, GaWaitCallback wait,
								  void *arg, GaStatus *status);
extern int	ga_gpu_aggjoin_finish(GpuAgg *agg, GaWaitCallback wait, void *arg,
								  GaStatus *status);
extern void ga_gpu_aggjoin_destroy(GpuAgg *agg);

/*
 * gpu/derived.cu: the derived columns' needs, marked while the input
 * buffer is laid out, and their programs, described and uploaded once the
 * buffer is allocated (0 with status on failure).
 */
extern void ga_gpu_derived_mark_inputs(GpuAgg *agg);
extern int	ga_gpu_derived_upload(GpuAgg *agg, GaStatus *status);

/*
 * gpu/input.cu: the aggregation's input.  layout decides which columns the
 * device needs and lays out the pinned batches and the device input
 * buffer (before it is allocated); reset_batch empties a pinned batch for
 * the caller; copy_batch enqueues a filled batch's copies into the input
 * buffer; point_columns points the in-flight keys and aggregates at the
 * buffer (column_has_nulls set for its rows); launch_input aggregates the
 * nrows rows a join gathered into the buffer, leaving them in flight with
 * their gather timed (the first piece of an auto or perfect aggregation
 * waits for its probe first, calling wait).
 */
extern void ga_gpu_input_layout(GpuAgg *agg);
extern void ga_gpu_input_reset_batch(GpuAgg *agg, GpuHostBatch *hb);
extern int	ga_gpu_input_copy_batch(GpuAgg *agg, GpuHostBatch *hb, GaStatus *status);
extern void ga_gpu_input_point_columns(GpuAgg *agg);
extern int	ga_gpu_agg_launch_input(GpuAgg *agg, int64_t nrows, GaWaitCallback wait,
									void *arg, GaStatus *status);

/*
 * gpu/batch.cu: the group table's arrays (alloc frees what it got on
 * failure; init_async sets slots empty and groups [begin, capacity) to
 * their identities, on the stream); start_batch launches the batch whose
 * columns are in inflight_keys/aggs (counted as a batch, its input rows
 * the caller's to count: the probe first when it is the first batch of an
 * auto or perfect aggregation, then the plan's kernels), without waiting;
 * settle waits for the batch in flight, if any, redoing it after growth on
 * overflow (also before a join's next piece overwrites the input);
 * gather_perfect appends perfect's entries to the group arrays at the end;
 * count_empty_batch counts a submit without rows.
 */
extern void ga_gpu_agg_table_free(GpuAgg *agg, GpuTable *table);
extern int	ga_gpu_agg_table_alloc(GpuAgg *agg, int64_t capacity, GpuTable *table,
								   GaStatus *status);
extern int	ga_gpu_agg_table_init_async(GpuAgg *agg, const GpuTable *table, int64_t begin,
										GaStatus *status);
extern int	ga_gpu_agg_start_batch(GpuAgg *agg, int64_t nrows, GaWaitCallback wait, void *arg,
								   GaStatus *status);
extern int	ga_gpu_agg_settle(GpuAgg *agg, GaWaitCallback wait, void *arg,
							  GaStatus *status);
extern int	ga_gpu_agg_gather_perfect(GpuAgg *agg, GaWaitCallback wait, void *arg,
									  GaStatus *status);
extern void ga_gpu_agg_count_empty_batch(GpuAgg *agg);

/*
 * gpu/strings.cu: string keys.  plan marks the string keys (at create,
 * before the input is laid out); alloc_heap allocates the heap for a
 * table of `groups` groups; view is the kernels' view of them over a
 * table; grow_heap replaces the heap by one of at least `wanted` bytes,
 * keeping its first `valid` bytes (waits for the copy); copy_out sets
 * the result's key_values and key_bytes of every string key for the
 * ngroups groups of the table; free_heap frees the heap.
 */
extern void ga_gpu_strings_plan(GpuAgg *agg);
extern int	ga_gpu_strings_alloc_heap(GpuAgg *agg, int64_t groups, GaStatus *status);
extern GaDevStrings ga_gpu_strings_view(const GpuAgg *agg, const GpuTable *table);
extern int	ga_gpu_strings_grow_heap(GpuAgg *agg, unsigned long long wanted, int64_t valid,
									 GaWaitCallback wait, void *arg, GaStatus *status);
extern int	ga_gpu_strings_copy_out(GpuAgg *agg, int64_t ngroups, GaWaitCallback wait,
									void *arg, GaStatus *status);
extern void ga_gpu_strings_free_heap(GpuAgg *agg);

/*
 * gpu/strategy.cu: the plan of a batch (choose sets the plan's sizes in
 * agg->inflight_*; shared is the shared strategy's plan for `groups`
 * groups, forced or not), the strategy a plan stands for, whether it may
 * leave escaped rows, the copies of a shared table's entries, the groups
 * estimated from the first batch's probe, and whether (and how) a direct
 * index applies after it.
 */
extern GpuPlan ga_gpu_plan_choose(GpuAgg *agg);
extern GpuPlan ga_gpu_plan_shared(GpuAgg *agg, int64_t groups, int forced);
extern void ga_gpu_plan_launch(GpuAgg *agg);
extern int	ga_gpu_plan_replicas_capped(const GpuAgg *agg, int replicas);
extern int	ga_gpu_plan_cache_bits(const GpuAgg *agg);
extern GaStrategy ga_gpu_plan_strategy(const GpuAgg *agg, GpuPlan plan);
extern int	ga_gpu_plan_has_escapes(const GpuAgg *agg, GpuPlan plan);
extern int	ga_gpu_plan_replicas(const GpuAgg *agg, int64_t hot, int64_t entries,
								 int64_t other_bytes, int64_t budget);
extern int64_t ga_gpu_plan_estimate_groups(const GaDevProbe *probe, int64_t nrows);
extern void ga_gpu_plan_decide_perfect(GpuAgg *agg, int64_t nrows);
extern void ga_gpu_plan_perfect_free(GpuAgg *agg);

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

/*
 * gpu/deform.cu: heap pages on the GPU.  A request's page program in
 * device memory and the kernel that deforms a batch's page images
 * (already on the GPU) into its device columns; over them, an
 * aggregation's page area (create, free), the copy of a batch's pages,
 * their deform into the device input buffer, and the check of its
 * failure flag once the batch settled (GA_ERR_INVALID).
 */

extern int	ga_gpu_page_program_create(const GaPageInput *pages,
									   const GaValueType *column_types, void *const *values,
									   uint32_t *const *validity, int *has_nulls,
									   GpuPageProgram *prog, cudaStream_t stream,
									   GaStatus *status);
extern void ga_gpu_page_program_free(GpuPageProgram *prog);
extern int	ga_gpu_deform_pages(const GpuPageProgram *prog, const uint8_t *d_pages,
								const GaPageDesc *d_descs, int64_t npages, int64_t nrows,
								int *failed, cudaStream_t stream, GaStatus *status);
extern int	ga_gpu_pages_create(GpuAgg *agg, const GaPageInput *pages, GaStatus *status);
extern void ga_gpu_pages_free(GpuAgg *agg);
extern int	ga_gpu_pages_copy(GpuAgg *agg, const GaBatch *batch, int64_t *bytes_sent,
							  GaStatus *status);
extern int	ga_gpu_pages_deform(GpuAgg *agg, const GaBatch *batch, GaStatus *status);
extern int	ga_gpu_pages_check(GpuAgg *agg, GaStatus *status);

#endif							/* GPUAGG_DEVICE_GPU_CUH */
