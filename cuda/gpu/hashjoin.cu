/*-------------------------------------------------------------------------
 *
 * gpu/hashjoin.cu
 *	  The GPU device's hash join: host side of the join part of
 *	  gpuagg_device.h on CUDA, driving gpu/kernels/hashjoin.cu on the join's
 *	  own stream (gpu/device.cu opens the device; gpu/gpu_device.cuh shares
 *	  its helpers).
 *
 * Build.  The caller's keys and rows are copied to the device in chunks
 * (they live in ordinary, pageable memory; a chunk at a time keeps the wait
 * callback answered), sorted by key with CUB's stable radix sort, reduced
 * to distinct keys with their counts (run-length encoding) and offsets
 * (exclusive scan), and the distinct keys go into an open-addressing table
 * of twice their number or more (gpu/kernels/hashjoin.cu tells the details
 * and the papers they follow: Wu et al. for the stable radix-sort
 * transformation, the cuckoo hash join report for build/probe with counted
 * matches).  The sorted rows are then copied back once, in chunks,
 * for ga_join_sorted_rows; the sort's scratch buffers are freed and only
 * the table and its three arrays stay on the device.  This is the CPU
 * device's algorithm (cpu/hashjoin.c) step for step, so both order the build
 * rows identically: by the key's bits as uint64, ties in input order.  The
 * aggjoin (gpu/aggjoin.cu) builds through the same steps but
 * keeps the sorted rows on the device instead (ga_gpu_join_build_on_device),
 * since its joined rows are formed there.
 *
 * Probe.  One pinned batch (an int64 key column and its validity bitmap)
 * is handed out; a probe copies its keys (and the bitmap when it has
 * nulls) to the device, runs join_probe_kernel, copies first, count and
 * the total back into pinned memory and waits for them, polling an event
 * and calling the wait callback between polls.  The answer stays in pinned
 * memory until the next batch or probe.  Probes are synchronous (the API
 * answers each before the next is filled), so one batch suffices.
 *
 * Limits.  CUB's run-length encoding counts in int, so the GPU device
 * builds on at most INT_MAX rows (GA_ERR_OUT_OF_MEMORY beyond, which the
 * caller recovers from on the CPU device; that one takes up to
 * GA_JOIN_MAX_BUILD_ROWS).
 *
 * Failures.  Every CUDA error becomes a GaStatus (GA_ERR_OUT_OF_MEMORY for
 * allocation failures); nothing throws, prints or aborts.  The first
 * failure (device error, out of memory, cancel) is remembered and every
 * later call reports it; destroy synchronizes the stream and frees
 * everything in any state.
 *
 * Streams.  A join creates its own non-blocking stream, so that joins and
 * aggregations of other sessions run on the same GPU at the same time in
 * the GPU service; the aggjoin's joins run on their aggregation's stream
 * instead (ga_gpu_join_create_on_stream), ordered with its probes.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"
#include "kernels/hashjoin.cuh"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Smallest table of the build. */
#define GPU_JOIN_MIN_SLOTS 16

/* Most build rows the GPU device takes (CUB's run-length encoding uses int). */
#define GPU_JOIN_MAX_BUILD_ROWS ((int64_t) INT_MAX)

typedef struct GpuJoin
{
	GpuDevice  *device;
	cudaStream_t stream;		/* non-blocking; NULL until created */
	int			owns_stream;	/* created it (else the aggregation's) */
	int64_t		batch_rows;

	/* The build: the table on the device, the sorted rows on the host. */
	int			built;
	int64_t		nbuild;
	int64_t		ndistinct;
	int64_t		nslots;
	uint32_t   *dev_slots;
	unsigned long long *dev_keys;
	uint32_t   *dev_offsets;
	uint32_t   *dev_counts;
	uint32_t   *sorted_rows;	/* host provider's, nbuild entries (at least
								 * one); NULL when kept on the device */
	int			keep_on_device; /* the aggjoin's build */
	uint32_t   *dev_sorted_rows;	/* ... keeps the sorted rows here */

	/* The build's scratch, freed when the build is done (or by destroy). */
	unsigned long long *scratch_keys[2];
	uint32_t   *scratch_rows[2];
	long long  *dev_num_runs;
	void	   *dev_temp;
	size_t		temp_bytes;

	/* The probe batch and its answer: one pinned slab, one device buffer. */
	unsigned char *pinned;
	GaBatch		batch;
	GaColumn	column;
	uint32_t   *host_first;
	uint32_t   *host_count;
	unsigned long long *host_total;
	long long  *host_num_runs;
	unsigned char *dev_probe;
	unsigned long long *dev_probe_keys;
	uint8_t    *dev_probe_validity;
	uint32_t   *dev_first;
	uint32_t   *dev_count;
	unsigned long long *dev_total;
	GaJoinMatches matches;

	cudaEvent_t ev_copy_start;
	cudaEvent_t ev_copy_end;
	cudaEvent_t ev_kernel_start;
	cudaEvent_t ev_kernel_end;
	cudaEvent_t ev_done;

	GaJoinStats stats;
	int			failed;
	GaStatus	error;			/* the first failure, reported again */
} GpuJoin;

/* Make the join's GPU current for this host thread. */
static int
join_select_device(GpuJoin *join, GaStatus *status)
{
	GPU_TRY(cudaSetDevice(join->device->ordinal), "selecting the GPU");
	return 1;
}

/* Remember the first failure so that every later call reports it; returns 0. */
static int
join_remember_failure(GpuJoin *join, const GaStatus *status)
{
	if (!join->failed)
	{
		join->failed = 1;
		join->error = *status;
		if (join->error.code == GA_OK)
			ga_status_set(&join->error, GA_ERR_DEVICE, "the GPU join failed");
	}
	return 0;
}

/* Whether the join can take another call; sets status either way. */
static int
join_usable(const GpuJoin *join, GaStatus *status)
{
	if (join->failed)
	{
		*status = join->error;
		return 0;
	}
	ga_status_ok(status);
	return 1;
}

/* Free the build's scratch buffers (the stream must be idle or synchronized). */
static void
join_free_scratch(GpuJoin *join)
{
	for (int b = 0; b < 2; b++)
	{
		device_free(&join->scratch_keys[b]);
		device_free(&join->scratch_rows[b]);
	}
	device_free(&join->dev_num_runs);
	device_free(&join->dev_temp);
	join->temp_bytes = 0;
}

/* Make the CUB scratch at least `bytes` large. */
static int
join_reserve_temp(GpuJoin *join, size_t bytes, GaStatus *status)
{
	if (join->dev_temp != NULL && join->temp_bytes >= bytes)
		return 1;
	device_free(&join->dev_temp);
	join->temp_bytes = 0;
	if (!device_alloc(&join->dev_temp, bytes, "the join's sort scratch", status))
		return 0;
	join->temp_bytes = bytes;
	return 1;
}

/* The kernels' view of the build's table. */
static GaDevJoinTable
join_dev_table(const GpuJoin *join)
{
	GaDevJoinTable table;

	table.slots = join->dev_slots;
	table.slot_mask = join->nslots - 1;
	table.keys = join->dev_keys;
	table.offsets = join->dev_offsets;
	table.counts = join->dev_counts;
	return table;
}

/*
 * Start a join on `stream`, or on a stream of its own when NULL: the pinned
 * probe batch with room for the answer, its device twin, and the events.
 */
void *
ga_gpu_join_create_on_stream(void *device_impl, const GaJoinRequest *request,
							 cudaStream_t stream, GaStatus *status)
{
	GpuDevice  *device = (GpuDevice *) device_impl;
	GpuJoin    *join;
	size_t		capacity = (size_t) request->probe_batch_rows;
	size_t		keys_bytes = align_up(capacity * sizeof(unsigned long long));
	size_t		validity_bytes = align_up((capacity + 7) / 8);
	size_t		answer_bytes = align_up(capacity * sizeof(uint32_t));
	size_t		word_bytes = align_up(sizeof(unsigned long long));
	size_t		offset;

	ga_status_ok(status);
	join = (GpuJoin *) calloc(1, sizeof(GpuJoin));
	if (join == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "out of host memory starting a join on the GPU");
		return NULL;
	}
	join->device = device;
	join->batch_rows = request->probe_batch_rows;
	if (!join_select_device(join, status))
		goto fail;
	join->stream = stream;
	if (stream == NULL)
	{
		if (!gpu_stream_create(&join->stream, status))
			goto fail;
		join->owns_stream = 1;
	}

	{
		cudaEvent_t *events[] = {&join->ev_copy_start, &join->ev_copy_end,
		&join->ev_kernel_start, &join->ev_kernel_end, &join->ev_done};

		for (int e = 0; e < 5; e++)
			if (cudaEventCreate(events[e]) != cudaSuccess)
			{
				*events[e] = NULL;
				ga_status_set(status, GA_ERR_DEVICE, "could not create a CUDA event");
				goto fail;
			}
	}

	/* Pinned: keys, validity, first, count, total, the build's run count. */
	if (!pinned_alloc((void **) &join->pinned,
					  keys_bytes + validity_bytes + 2 * answer_bytes + 2 * word_bytes,
					  "the join's probe batch", status))
		goto fail;
	offset = 0;
	join->column.values = join->pinned + offset;
	offset += keys_bytes;
	join->column.validity = join->pinned + offset;
	offset += validity_bytes;
	join->host_first = (uint32_t *) (join->pinned + offset);
	offset += answer_bytes;
	join->host_count = (uint32_t *) (join->pinned + offset);
	offset += answer_bytes;
	join->host_total = (unsigned long long *) (join->pinned + offset);
	offset += word_bytes;
	join->host_num_runs = (long long *) (join->pinned + offset);

	/* Device: keys, validity, first, count, total. */
	if (!device_alloc((void **) &join->dev_probe,
					  keys_bytes + validity_bytes + 2 * answer_bytes + word_bytes,
					  "the join's probe batch", status))
		goto fail;
	offset = 0;
	join->dev_probe_keys = (unsigned long long *) (join->dev_probe + offset);
	offset += keys_bytes;
	join->dev_probe_validity = join->dev_probe + offset;
	offset += validity_bytes;
	join->dev_first = (uint32_t *) (join->dev_probe + offset);
	offset += answer_bytes;
	join->dev_count = (uint32_t *) (join->dev_probe + offset);
	offset += answer_bytes;
	join->dev_total = (unsigned long long *) (join->dev_probe + offset);

	join->column.type = GA_TYPE_INT64;
	return join;

fail:
	ga_gpu_join_destroy(join);
	return NULL;
}

/* join_create of the GPU device: a join on a stream of its own. */
void *
ga_gpu_join_create(void *device_impl, const GaJoinRequest *request, GaStatus *status)
{
	return ga_gpu_join_create_on_stream(device_impl, request, NULL, status);
}

/* Build an empty table: no rows, every probe answers (0, 0). */
static int
join_build_empty(GpuJoin *join, GaStatus *status)
{
	cudaStream_t stream = join->stream;

	join->sorted_rows = (uint32_t *) ga_host_alloc(sizeof(uint32_t));
	if (join->sorted_rows == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory building a join on the GPU");
	join->nslots = GPU_JOIN_MIN_SLOTS;
	if (!device_alloc((void **) &join->dev_slots, GPU_JOIN_MIN_SLOTS * sizeof(uint32_t),
					  "the join's hash table", status) ||
		!device_alloc((void **) &join->dev_keys, sizeof(unsigned long long),
					  "the join's keys", status) ||
		!device_alloc((void **) &join->dev_offsets, sizeof(uint32_t),
					  "the join's offsets", status) ||
		!device_alloc((void **) &join->dev_counts, sizeof(uint32_t),
					  "the join's counts", status))
		return 0;
	GPU_TRY(cudaMemsetAsync(join->dev_slots, 0xff, GPU_JOIN_MIN_SLOTS * sizeof(uint32_t),
							stream),
			"clearing the join's hash table");
	return 1;
}

/*
 * Copy the pairs to the device, sort them, encode the runs of equal keys,
 * and wait for the number of distinct keys.  *key_current and *row_current
 * are the scratch buffers that hold the sorted keys and rows; the other
 * two receive the distinct keys and their counts.
 */
static int
join_sort_and_count(GpuJoin *join, const int64_t *keys, const uint32_t *rows, int64_t n,
					int *key_current, int *row_current, GaWaitCallback wait, void *arg,
					GaStatus *status)
{
	cudaStream_t stream = join->stream;
	size_t		sort_bytes = 0;
	size_t		encode_bytes = 0;

	for (int b = 0; b < 2; b++)
		if (!device_alloc((void **) &join->scratch_keys[b], (size_t) n * sizeof(unsigned long long),
						  "the join's build keys", status) ||
			!device_alloc((void **) &join->scratch_rows[b], (size_t) n * sizeof(uint32_t),
						  "the join's build rows", status))
			return 0;
	if (!device_alloc((void **) &join->dev_num_runs, sizeof(long long),
					  "the join's key count", status))
		return 0;
	GPU_TRY(ga_join_sort_pairs(NULL, &sort_bytes, join->scratch_keys, join->scratch_rows, n,
							   key_current, row_current, stream),
			"sizing the join's sort");
	GPU_TRY(ga_join_run_lengths(NULL, &encode_bytes, join->scratch_keys[0],
								join->scratch_keys[1], join->scratch_rows[1],
								join->dev_num_runs, n, stream),
			"sizing the join's key count");
	if (!join_reserve_temp(join, sort_bytes > encode_bytes ? sort_bytes : encode_bytes, status))
		return 0;

	/* The stream must be idle before synchronous chunked copies start. */
	GPU_TRY(cudaEventRecord(join->ev_copy_start, stream), "recording an event");
	if (!wait_event(join->ev_copy_start, wait, arg, "waiting for the GPU", status) ||
		!gpu_copy_chunked(join->scratch_keys[0], keys, (size_t) n * sizeof(int64_t),
						  cudaMemcpyHostToDevice, stream, wait, arg,
						  "copying the join's build keys to the GPU", status) ||
		!gpu_copy_chunked(join->scratch_rows[0], rows, (size_t) n * sizeof(uint32_t),
						  cudaMemcpyHostToDevice, stream, wait, arg,
						  "copying the join's build rows to the GPU", status))
		return 0;
	GPU_TRY(cudaEventRecord(join->ev_copy_end, stream), "recording an event");
	join->stats.bytes_sent += n * (int64_t) (sizeof(int64_t) + sizeof(uint32_t));

	GPU_TRY(cudaEventRecord(join->ev_kernel_start, stream), "recording an event");
	sort_bytes = join->temp_bytes;
	GPU_TRY(ga_join_sort_pairs(join->dev_temp, &sort_bytes, join->scratch_keys,
							   join->scratch_rows, n, key_current, row_current, stream),
			"sorting the join's build keys");
	/* The distinct keys and counts go to the buffers the sort left free. */
	encode_bytes = join->temp_bytes;
	GPU_TRY(ga_join_run_lengths(join->dev_temp, &encode_bytes, join->scratch_keys[*key_current],
								join->scratch_keys[1 - *key_current],
								join->scratch_rows[1 - *row_current], join->dev_num_runs, n,
								stream),
			"counting the join's distinct keys");
	GPU_TRY(cudaMemcpyAsync(join->host_num_runs, join->dev_num_runs, sizeof(long long),
							cudaMemcpyDeviceToHost, stream),
			"copying the join's key count from the GPU");
	GPU_TRY(cudaEventRecord(join->ev_kernel_end, stream), "recording an event");
	if (!wait_event(join->ev_kernel_end, wait, arg, "sorting the join's build keys", status))
		return 0;
	add_elapsed(&join->stats.transfer_ms, join->ev_copy_start, join->ev_copy_end);
	add_elapsed(&join->stats.device_ms, join->ev_kernel_start, join->ev_kernel_end);
	join->ndistinct = *join->host_num_runs;
	if (join->ndistinct < 1 || join->ndistinct > n)
		return ga_status_set(status, GA_ERR_DEVICE,
							 "the GPU counted %lld distinct keys among %lld build rows",
							 (long long) join->ndistinct, (long long) n);
	return 1;
}

/*
 * Keep the distinct keys and counts, compute the offsets, fill the table,
 * and bring the sorted rows back to the host.
 */
static int
join_make_table(GpuJoin *join, int64_t n, int key_current, int row_current,
				GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = join->stream;
	int64_t		d = join->ndistinct;
	size_t		scan_bytes = 0;
	GaDevJoinTable table;

	join->nslots = next_pow2(2 * d > GPU_JOIN_MIN_SLOTS ? 2 * d : GPU_JOIN_MIN_SLOTS);
	if (!device_alloc((void **) &join->dev_keys, (size_t) d * sizeof(unsigned long long),
					  "the join's keys", status) ||
		!device_alloc((void **) &join->dev_offsets, (size_t) d * sizeof(uint32_t),
					  "the join's offsets", status) ||
		!device_alloc((void **) &join->dev_counts, (size_t) d * sizeof(uint32_t),
					  "the join's counts", status) ||
		!device_alloc((void **) &join->dev_slots, (size_t) join->nslots * sizeof(uint32_t),
					  "the join's hash table", status))
		return 0;
	GPU_TRY(ga_join_exclusive_sum(NULL, &scan_bytes, join->dev_counts, join->dev_offsets, d,
								  stream),
			"sizing the join's offsets");
	if (!join_reserve_temp(join, scan_bytes, status))
		return 0;
	if (!join->keep_on_device)
	{
		join->sorted_rows = (uint32_t *) ga_host_alloc((size_t) n * sizeof(uint32_t));
		if (join->sorted_rows == NULL)
			return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
								 "out of host memory for the %lld sorted rows of a join",
								 (long long) n);
	}

	GPU_TRY(cudaEventRecord(join->ev_kernel_start, stream), "recording an event");
	GPU_TRY(cudaMemcpyAsync(join->dev_keys, join->scratch_keys[1 - key_current],
							(size_t) d * sizeof(unsigned long long), cudaMemcpyDeviceToDevice,
							stream),
			"keeping the join's distinct keys");
	GPU_TRY(cudaMemcpyAsync(join->dev_counts, join->scratch_rows[1 - row_current],
							(size_t) d * sizeof(uint32_t), cudaMemcpyDeviceToDevice, stream),
			"keeping the join's key counts");
	scan_bytes = join->temp_bytes;
	GPU_TRY(ga_join_exclusive_sum(join->dev_temp, &scan_bytes, join->dev_counts,
								  join->dev_offsets, d, stream),
			"computing the join's offsets");
	GPU_TRY(cudaMemsetAsync(join->dev_slots, 0xff, (size_t) join->nslots * sizeof(uint32_t),
							stream),
			"clearing the join's hash table");
	table = join_dev_table(join);
	GPU_TRY(ga_launch_join_insert(&table, d, join->device->info.multiprocessors, stream),
			"launching the join's table build");
	GPU_TRY(cudaEventRecord(join->ev_kernel_end, stream), "recording an event");
	if (!wait_event(join->ev_kernel_end, wait, arg, "building the join's hash table", status))
		return 0;
	add_elapsed(&join->stats.device_ms, join->ev_kernel_start, join->ev_kernel_end);

	/* Kept on the device: take the sorted rows out of the scratch. */
	if (join->keep_on_device)
	{
		join->dev_sorted_rows = join->scratch_rows[row_current];
		join->scratch_rows[row_current] = NULL;
		return 1;
	}

	/* The stream is idle: bring the sorted rows back, a chunk at a time. */
	GPU_TRY(cudaEventRecord(join->ev_copy_start, stream), "recording an event");
	if (!gpu_copy_chunked(join->sorted_rows, join->scratch_rows[row_current],
						  (size_t) n * sizeof(uint32_t), cudaMemcpyDeviceToHost, stream,
						  wait, arg, "copying the join's sorted rows from the GPU", status))
		return 0;
	GPU_TRY(cudaEventRecord(join->ev_copy_end, stream), "recording an event");
	if (!wait_event(join->ev_copy_end, wait, arg, "copying the join's sorted rows from the GPU",
					status))
		return 0;
	add_elapsed(&join->stats.transfer_ms, join->ev_copy_start, join->ev_copy_end);
	return 1;
}

/*
 * Build on n (key, row) pairs: sort, count, table, sorted rows back; then
 * free the scratch.
 */
int
ga_gpu_join_build(void *join_impl, const int64_t *keys, const uint32_t *rows, int64_t n,
				  GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuJoin    *join = (GpuJoin *) join_impl;
	int			key_current = 0;
	int			row_current = 0;

	if (!join_usable(join, status))
		return 0;

	/*
	 * A build this large is within the contract (GA_JOIN_MAX_BUILD_ROWS), so
	 * it is not GA_ERR_INVALID, which callers treat as a malformed request
	 * and do not recover from: it is a capacity limit of this device, told
	 * as GA_ERR_OUT_OF_MEMORY (it would need 24 bytes per row of GPU memory
	 * anyway), so that the caller finishes the join on the CPU device.
	 */
	if (n > GPU_JOIN_MAX_BUILD_ROWS)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "the GPU device builds a join on at most %lld rows, not %lld",
					  (long long) GPU_JOIN_MAX_BUILD_ROWS, (long long) n);
		return join_remember_failure(join, status);
	}
	if (!join_select_device(join, status))
		return join_remember_failure(join, status);
	if (n == 0)
	{
		if (!join_build_empty(join, status))
			return join_remember_failure(join, status);
		join->ndistinct = 0;
	}
	else if (!join_sort_and_count(join, keys, rows, n, &key_current, &row_current, wait, arg,
								  status) ||
			 !join_make_table(join, n, key_current, row_current, wait, arg, status))
		return join_remember_failure(join, status);
	/* Every use of the scratch has completed (waited for above). */
	join_free_scratch(join);

	join->nbuild = n;
	join->built = 1;
	join->stats.build_rows = n;
	join->stats.distinct_keys = join->ndistinct;
	ga_status_ok(status);
	return 1;
}

/*
 * Build for the aggjoin (gpu/aggjoin.cu): the same steps, but
 * the key-sorted rows stay on the device, where the joined rows are formed,
 * and nothing comes back to the host.
 */
int
ga_gpu_join_build_on_device(void *join_impl, const int64_t *keys, const uint32_t *rows,
							int64_t n, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuJoin    *join = (GpuJoin *) join_impl;

	join->keep_on_device = 1;
	return ga_gpu_join_build(join_impl, keys, rows, n, wait, arg, status);
}

/*
 * The table of a build on the device and its sorted rows on the device
 * (NULL for an empty build, whose probes never match).
 */
void
ga_gpu_join_device_view(const void *join_impl, GaDevJoinTable *table,
						const uint32_t **sorted_rows)
{
	const GpuJoin *join = (const GpuJoin *) join_impl;

	*table = join_dev_table(join);
	*sorted_rows = join->dev_sorted_rows;
}

/* The build rows in key order; NULL before a successful build. */
const uint32_t *
ga_gpu_join_sorted_rows(const void *join_impl)
{
	const GpuJoin *join = (const GpuJoin *) join_impl;

	return join->built ? join->sorted_rows : NULL;
}

/*
 * Hand out the pinned probe batch, emptied.  Nothing of a probe is in
 * flight once it has answered, so the batch is free.
 */
GaBatch *
ga_gpu_join_next_batch(void *join_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuJoin    *join = (GpuJoin *) join_impl;

	(void) wait;
	(void) arg;
	if (!join_usable(join, status))
		return NULL;
	join->column.type = GA_TYPE_INT64;
	join->column.values = join->pinned;
	join->column.has_nulls = 0;
	memset(join->column.validity, 0xff, (size_t) (join->batch_rows + 7) / 8);
	join->batch.nrows = 0;
	join->batch.capacity = join->batch_rows;
	join->batch.ncolumns = 1;
	join->batch.columns = &join->column;
	return &join->batch;
}

/*
 * Probe: keys (and the null bitmap) to the device, the probe kernel, the
 * answer back to pinned memory; wait for it.
 */
const GaJoinMatches *
ga_gpu_join_probe(void *join_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	GpuJoin    *join = (GpuJoin *) join_impl;
	cudaStream_t stream = join->stream;
	const uint8_t *dev_validity = NULL;
	GaDevJoinTable table;
	int64_t		nrows;
	int64_t		bytes_sent;
	cudaError_t err;

	if (!join_usable(join, status))
		return NULL;
	if (batch != &join->batch || batch->columns != &join->column ||
		join->column.values != join->pinned)
	{
		ga_status_set(status, GA_ERR_INVALID, "the probe batch was not handed out by this join");
		return NULL;
	}
	nrows = batch->nrows;		/* within the capacity: device.c checked */
	join->matches.nrows = nrows;
	join->matches.first = join->host_first;
	join->matches.count = join->host_count;
	join->matches.total = 0;
	if (nrows == 0)
	{
		join->stats.probe_batches++;
		return &join->matches;
	}
	bytes_sent = nrows * (int64_t) sizeof(int64_t);

#define PROBE_TRY(call, what) \
	do { \
		err = (call); \
		if (err != cudaSuccess) \
		{ \
			cuda_error(status, err, (what)); \
			goto fail; \
		} \
	} while (0)

	if (!join_select_device(join, status))
		goto fail;
	PROBE_TRY(cudaEventRecord(join->ev_copy_start, stream), "recording an event");
	PROBE_TRY(cudaMemcpyAsync(join->dev_probe_keys, join->column.values,
							  (size_t) nrows * sizeof(int64_t), cudaMemcpyHostToDevice, stream),
			  "copying a probe batch to the GPU");
	if (join->column.has_nulls)
	{
		PROBE_TRY(cudaMemcpyAsync(join->dev_probe_validity, join->column.validity,
								  (size_t) (nrows + 7) / 8, cudaMemcpyHostToDevice, stream),
				  "copying a probe batch's null bitmap to the GPU");
		dev_validity = join->dev_probe_validity;
		bytes_sent += (nrows + 7) / 8;
	}
	PROBE_TRY(cudaEventRecord(join->ev_copy_end, stream), "recording an event");
	PROBE_TRY(cudaEventRecord(join->ev_kernel_start, stream), "recording an event");
	PROBE_TRY(cudaMemsetAsync(join->dev_total, 0, sizeof(unsigned long long), stream),
			  "clearing the probe's total");
	table = join_dev_table(join);
	PROBE_TRY(ga_launch_join_probe(&table, join->dev_probe_keys, dev_validity, nrows,
								   join->dev_first, join->dev_count, join->dev_total,
								   join->device->info.multiprocessors, stream),
			  "launching the join's probe kernel");
	PROBE_TRY(cudaEventRecord(join->ev_kernel_end, stream), "recording an event");
	PROBE_TRY(cudaMemcpyAsync(join->host_first, join->dev_first, (size_t) nrows * sizeof(uint32_t),
							  cudaMemcpyDeviceToHost, stream),
			  "copying the probe's answer from the GPU");
	PROBE_TRY(cudaMemcpyAsync(join->host_count, join->dev_count, (size_t) nrows * sizeof(uint32_t),
							  cudaMemcpyDeviceToHost, stream),
			  "copying the probe's answer from the GPU");
	PROBE_TRY(cudaMemcpyAsync(join->host_total, join->dev_total, sizeof(unsigned long long),
							  cudaMemcpyDeviceToHost, stream),
			  "copying the probe's answer from the GPU");
	PROBE_TRY(cudaEventRecord(join->ev_done, stream), "recording an event");
#undef PROBE_TRY
	if (!wait_event(join->ev_done, wait, arg, "waiting for the GPU to probe a batch", status))
		goto fail;

	add_elapsed(&join->stats.transfer_ms, join->ev_copy_start, join->ev_copy_end);
	add_elapsed(&join->stats.transfer_ms, join->ev_kernel_end, join->ev_done);
	add_elapsed(&join->stats.device_ms, join->ev_kernel_start, join->ev_kernel_end);
	join->matches.total = (int64_t) *join->host_total;
	join->stats.probe_batches++;
	join->stats.probe_rows += nrows;
	join->stats.candidates += join->matches.total;
	join->stats.bytes_sent += bytes_sent;
	ga_status_ok(status);
	return &join->matches;

fail:
	join_remember_failure(join, status);
	return NULL;
}

/* Report what the join did so far. */
void
ga_gpu_join_get_stats(const void *join_impl, GaJoinStats *stats)
{
	const GpuJoin *join = (const GpuJoin *) join_impl;

	*stats = join->stats;
	stats->gpu_ordinal = join->device->ordinal;
}

/*
 * Free everything, in any state: first wait for the stream (a cancelled
 * build or probe may still run), then device memory, pinned memory, events,
 * the stream if it is the join's own, and host memory.
 */
void
ga_gpu_join_destroy(void *join_impl)
{
	GpuJoin    *join = (GpuJoin *) join_impl;

	if (join == NULL)
		return;
	if (join->device != NULL)
		(void) cudaSetDevice(join->device->ordinal);
	if (join->stream != NULL)
		(void) cudaStreamSynchronize(join->stream);
	join_free_scratch(join);
	device_free(&join->dev_slots);
	device_free(&join->dev_keys);
	device_free(&join->dev_offsets);
	device_free(&join->dev_counts);
	device_free(&join->dev_sorted_rows);
	device_free(&join->dev_probe);
	pinned_free(join->pinned);
	{
		cudaEvent_t events[] = {join->ev_copy_start, join->ev_copy_end,
		join->ev_kernel_start, join->ev_kernel_end, join->ev_done};

		for (int e = 0; e < 5; e++)
			if (events[e] != NULL)
				(void) cudaEventDestroy(events[e]);
	}
	if (join->owns_stream)
		gpu_stream_destroy(&join->stream);
	(void) cudaGetLastError();	/* leave no error behind for later checks */
	ga_host_free(join->sorted_rows);
	free(join);
}
