/*-------------------------------------------------------------------------
 *
 * gpu/hashagg.cu
 *	  The GPU device's aggregation (its GaDeviceOps entries, gpu_device.cuh):
 *	  the aggregation object from create to finish, its pinned
 *	  double-buffered batches, the aggjoin's entry points, and the groups
 *	  copied back as the result.  gpu/device.cu opens the GPU and holds the
 *	  table of entry points.
 *
 * Flow of one aggregation.  Two batches of pinned host memory are handed
 * out in turn, so that the caller fills one while the GPU works on the
 * other.  submit(N) first waits for batch N-1 to finish on the GPU (polling
 * an event and calling the wait callback, never blocking for good) and
 * handles its overflow, then enqueues on the aggregation's own stream: one
 * cudaMemcpyAsync per needed values array and per validity bitmap of a
 * column with nulls into the single device input buffer, the strategy's
 * kernels and an asynchronous copy of the control block (group counter,
 * overflow flag) back into pinned memory.  Only one batch is on the device
 * at a time, so its input is still there when it has to be redone.
 *
 * Strategies (gpuagg.strategy): perfect, shared, global and partitioned;
 * every one ends with the same dense group arrays, so they may change from
 * batch to batch and all give the same answers.  gpu/strategy.cu chooses a
 * batch's plan (its header has the rules); gpu/batch.cu runs the plan's
 * kernels, the first batch's probe, overflow growth and redo, and perfect's
 * final gather.  gpu/input.cu lays out the batches and the device input
 * buffer and copies a batch into it.
 *
 * Launch parameters come from the device's properties through the
 * occupancy calculator (gpu/kernels/hashagg_two_phase.cu), shared-memory
 * budgets from its shared memory per multiprocessor, and the partitioning
 * switch from its L2 size.  Device time is split into phases with events
 * (EXPLAIN ANALYZE).
 *
 * Aggjoin aggregations (gpu/aggjoin.cu, gpu/aggjoin_probe.cu) put the
 * joined rows of each probe batch into the same device input buffer, a
 * piece of at most batch_rows at a time, and run the same kernels on it
 * (ga_gpu_agg_launch_input); see gpu_agg_submit_joined.
 *
 * String keys (GA_TYPE_STRING key columns) travel as end offsets and
 * bytes, are grouped in the global table by their bytes and come back once
 * per group, offsets and bytes in group order (gpu/strings.cu).
 *
 * Derived columns are never sent: once the rows are in the input buffer
 * (copied, or gathered by a join), the first kernel of the rows computes
 * them there (ga_launch_compute_derived, once per rows, not again when an
 * overflow redoes them).  gpu/derived.cu plans what they need and
 * describes their programs.
 *
 * Failures.  Every CUDA error becomes a GaStatus (GA_ERR_OUT_OF_MEMORY for
 * allocation failures, GA_ERR_DEVICE otherwise); nothing throws, prints or
 * aborts.  The first failure is remembered and reported again by every
 * later call; agg_destroy synchronizes the stream and frees everything in
 * any state.
 *
 * Streams.  Each aggregation has its own non-blocking stream (its
 * aggjoin's builds and probes run on it too), so that aggregations of
 * other sessions run on the same GPU at the same time in the GPU service
 * (gpu_device.cuh, "Concurrency").
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Group capacity bounds: the smallest table, the largest initial one. */
#define GPU_MIN_CAPACITY 1024
#define GPU_MAX_INITIAL_CAPACITY (INT64_C(1) << 26)

/* Largest batch capacity accepted: keeps every size computation in range. */
#define GPU_MAX_BATCH_ROWS (INT64_C(1) << 40)

/* Largest block cache of hot groups (bits) and its bytes. */
#define GPU_CACHE_MAX_BITS 10
#define GPU_CACHE_MAX_BYTES (32 * 1024)

/* ------------------------------------------------------------------------
 * State and layout
 * ------------------------------------------------------------------------
 */

/* Make the aggregation's GPU current for this host thread. */
static int
select_device(GpuAgg *agg, GaStatus *status)
{
	GPU_TRY(cudaSetDevice(agg->device->ordinal), "selecting the GPU");
	return 1;
}

/* Remember the first failure so that every later call reports it; returns 0. */
static int
remember_failure(GpuAgg *agg, const GaStatus *status)
{
	if (!agg->failed)
	{
		agg->failed = 1;
		agg->error = *status;
		if (agg->error.code == GA_OK)
			ga_status_set(&agg->error, GA_ERR_DEVICE, "the GPU aggregation failed");
	}
	return 0;
}

/* Whether the aggregation can take another call; sets status either way. */
static int
agg_usable(const GpuAgg *agg, GaStatus *status)
{
	if (agg->failed)
	{
		*status = agg->error;
		return 0;
	}
	if (agg->finished)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the GPU aggregation has already finished");
	ga_status_ok(status);
	return 1;
}

/*
 * Lay out the per-entry accumulators: in shared-memory tables (one array per
 * aggregate, ga_shared_width() bytes an entry) and in perfect entries (full
 * widths side by side, an entry padded to 8, 16 or 32 bytes so that it does
 * not straddle a 32-byte sector).  Widest first (16 bytes, then the moments,
 * multiples of 8, then 8 and 4), so that every element is aligned for any
 * number of entries.  Then the strategies' capacities on this GPU.
 */
static void
plan_shared_layout(GpuAgg *agg)
{
	static const int widths[] = {16, (int) sizeof(GaComoments), (int) sizeof(GaMoments), 8, 4};
	const int	nwidths = (int) (sizeof(widths) / sizeof(widths[0]));
	const GaGpuInfo *info = &agg->device->info;
	int64_t		offset = 0;
	int64_t		state;
	int64_t		bytes;

	agg->narrow = agg->batch_rows <= INT32_MAX;
	agg->rows_ok = agg->batch_rows <= INT32_MAX;
	for (int w = 0; w < nwidths; w++)
		for (int a = 0; a < agg->naggs; a++)
		{
			int			width = ga_shared_width(&agg->request, a, agg->narrow);

			if (width == widths[w])
			{
				agg->inflight_aggs.aggs[a].shared_width = width;
				agg->inflight_aggs.aggs[a].shared_unit_offset = offset;
				offset += width;
			}
		}
	agg->inflight_aggs.shared_state = (int32_t) offset;
	state = offset;

	offset = 0;
	for (int w = 0; w < nwidths; w++)
		for (int a = 0; a < agg->naggs; a++)
			if (agg->acc_width[a] == widths[w])
			{
				agg->inflight_aggs.aggs[a].perfect_offset = (int32_t) offset;
				offset += widths[w];
			}
	agg->dev_perfect.entry_bytes = (int32_t) (offset <= 8 ? 8 : offset <= 16 ? 16 :
											  offset <= 32 ? 32 : (offset + 7) / 8 * 8);

	agg->shared_budget = ga_shared_budget_bytes(info);
	agg->direct_budget = ga_direct_budget_bytes(info);
	agg->max_shared_groups = state > 0 ? agg->shared_budget / state : agg->shared_budget / 4;
	agg->max_fused_groups = agg->shared_budget / (8 + state) * GA_FUSED_LOAD_PERCENT / 100;
	agg->cache_bits = 0;
	bytes = agg->shared_budget < GPU_CACHE_MAX_BYTES ? agg->shared_budget : GPU_CACHE_MAX_BYTES;
	for (int bits = GPU_CACHE_MAX_BITS; bits >= 1; bits--)
		if ((int64_t) ga_cache_shared_bytes(bits, (int) state) <= bytes)
		{
			agg->cache_bits = bits;
			break;
		}
}

/* ------------------------------------------------------------------------
 * Aggregation: the GaDeviceOps entry points
 * ------------------------------------------------------------------------
 */

/* Copy the request's arrays; 0 when out of host memory. */
static int
copy_request(GpuAgg *agg, const GaAggRequest *request)
{
	agg->ncolumns = request->ncolumns;
	agg->nkeys = request->nkeys;
	agg->naggs = request->naggs;
	agg->batch_rows = request->batch_rows;
	agg->column_types = (GaValueType *) calloc(agg->ncolumns + 1, sizeof(GaValueType));
	agg->key_columns = (int *) calloc(agg->nkeys + 1, sizeof(int));
	agg->aggs = (GaAggSpec *) calloc(agg->naggs + 1, sizeof(GaAggSpec));
	agg->needs_values = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	agg->needs_validity = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	agg->host_values_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	agg->host_validity_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	agg->dev_values_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	agg->dev_validity_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	agg->host_bytes_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	agg->dev_bytes_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	agg->column_has_nulls = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	agg->column_is_derived = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	agg->derived_input = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	agg->page_column = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	agg->derived = ga_derived_plan_create(request);
	if (agg->column_types == NULL || agg->key_columns == NULL || agg->aggs == NULL ||
		agg->needs_values == NULL || agg->needs_validity == NULL ||
		agg->host_values_offset == NULL || agg->host_validity_offset == NULL ||
		agg->dev_values_offset == NULL || agg->dev_validity_offset == NULL ||
		agg->host_bytes_offset == NULL || agg->dev_bytes_offset == NULL ||
		agg->column_has_nulls == NULL || agg->column_is_derived == NULL ||
		agg->derived_input == NULL || agg->page_column == NULL || agg->derived == NULL)
		return 0;
	if (agg->ncolumns > 0)
		memcpy(agg->column_types, request->column_types, sizeof(GaValueType) * agg->ncolumns);
	if (agg->nkeys > 0)
		memcpy(agg->key_columns, request->key_columns, sizeof(int) * agg->nkeys);
	if (agg->naggs > 0)
		memcpy(agg->aggs, request->aggs, sizeof(GaAggSpec) * agg->naggs);
	agg->request = *request;
	agg->request.column_types = agg->column_types;
	agg->request.key_columns = agg->key_columns;
	agg->request.aggs = agg->aggs;
	agg->request.join = NULL;	/* the join spec is gpu/aggjoin.cu's copy */
	agg->request.derived = agg->derived->derived;
	agg->request.pages = NULL;	/* the page program is gpu/deform.cu's copy */
	for (int d = 0; d < agg->derived->nderived; d++)
		agg->column_is_derived[agg->derived->derived[d].column] = 1;
	if (request->pages != NULL)
	{
		agg->page_capacity = request->pages->page_capacity;
		for (int i = 0; i < request->pages->ncolumns; i++)
			agg->page_column[request->pages->columns[i].column] = 1;
	}
	return 1;
}

/*
 * Start an aggregation: create its stream, copy the request, allocate the
 * two pinned batches and the device input buffer (unless the batches come
 * as device columns), the control block and the group table sized from
 * the estimate, and enqueue their initialisation.
 */
static void *
create_agg(GpuDevice *device, const GaAggRequest *request, int device_input,
		   GaStatus *status)
{
	cudaStream_t stream;
	GpuAgg	   *agg;
	int64_t		capacity;
	int			partners;		/* entries of inflight_aggs in use */

	ga_status_ok(status);
	if (request->nkeys > GA_GPU_MAX_KEYS)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "the GPU device supports at most %d grouping keys, not %d",
					  GA_GPU_MAX_KEYS, request->nkeys);
		return NULL;
	}
	partners = request->naggs;
	for (int a = 0; a < request->naggs; a++)
		if (request->aggs[a].op == GA_AGG_COMOMENTS)
			partners++;
	if (partners > GA_GPU_MAX_AGGS)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "the GPU device supports at most %d aggregates (a COMOMENTS counts twice), not %d",
					  GA_GPU_MAX_AGGS, partners);
		return NULL;
	}
	partners = request->naggs;
	if (request->batch_rows > GPU_MAX_BATCH_ROWS)
	{
		ga_status_set(status, GA_ERR_INVALID, "batch size %lld is too large",
					  (long long) request->batch_rows);
		return NULL;
	}

	agg = (GpuAgg *) calloc(1, sizeof(GpuAgg));
	if (agg == NULL || !copy_request(agg, request))
	{
		ga_gpu_agg_destroy(agg);
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "out of host memory starting an aggregation on the GPU");
		return NULL;
	}
	agg->device = device;
	agg->device_input = device_input;
	agg->key_bits = ga_keys_pack_bits(&agg->request, 0);
	agg->stats.launch_family = GA_TUNE_NONE;
	if (request->tuning != GA_TUNING_OFF)
		agg->tuner = ga_tuner_for(device->info.name);
	for (int a = 0; a < agg->naggs; a++)
	{
		GaDevAgg   *dagg = &agg->inflight_aggs.aggs[a];
		const GaAggSpec *spec = &agg->aggs[a];

		agg->acc_width[a] = ga_agg_result_width(&agg->request, a);
		dagg->op = spec->op;
		dagg->input_is_float = spec->op != GA_AGG_COUNT_ROWS &&
			(agg->column_types[spec->column] == GA_TYPE_FLOAT32 ||
			 agg->column_types[spec->column] == GA_TYPE_FLOAT64);
		if (spec->op == GA_AGG_COMOMENTS)
			dagg->partner = (int16_t) partners++;	/* an entry past naggs */
	}
	agg->inflight_aggs.naggs = agg->naggs;
	agg->inflight_keys.nkeys = agg->nkeys;
	agg->two_phase_only = ga_request_two_phase_only(&agg->request);
	if (request->join != NULL)
		ga_gpu_aggjoin_mark_filter_inputs(agg, request->join);
	ga_gpu_strings_plan(agg);
	ga_gpu_input_layout(agg);
	plan_shared_layout(agg);
	agg->known_groups = agg->nkeys > 0 ? 0 : 1;
	/* empty batches before the first one: what it would run without a probe */
	agg->last_strategy = ga_gpu_plan_strategy(agg, ga_gpu_plan_choose(agg));

	if (!select_device(agg, status) || !gpu_stream_create(&agg->stream, status))
		goto fail;
	stream = agg->stream;

	/* Pinned batches, each one slab; and the pinned control mirror. */
	for (int b = 0; b < 2 && !device_input; b++)
	{
		GpuHostBatch *hb = &agg->host[b];

		hb->columns = (GaColumn *) calloc(agg->ncolumns + 1, sizeof(GaColumn));
		if (hb->columns == NULL)
		{
			ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
						  "out of host memory starting an aggregation on the GPU");
			goto fail;
		}
		if (!pinned_alloc((void **) &hb->pinned, agg->host_batch_bytes, "a batch", status))
			goto fail;
		if (cudaEventCreateWithFlags(&hb->copied, cudaEventDisableTiming) != cudaSuccess)
		{
			hb->copied = NULL;
			ga_status_set(status, GA_ERR_DEVICE, "could not create a CUDA event");
			goto fail;
		}
		ga_gpu_input_reset_batch(agg, hb);
		hb->state = HOST_BATCH_FREE;
	}
	if (!pinned_alloc((void **) &agg->host_control, sizeof(GaDevControl),
					  "the control block", status))
		goto fail;
	memset(agg->host_control, 0, sizeof(GaDevControl));

	{
		cudaEvent_t *events[4 + GPU_MAX_MARKS];

		events[0] = &agg->ev_copy_start;
		events[1] = &agg->ev_copy_end;
		events[2] = &agg->ev_gather_start;
		events[3] = &agg->ev_gather_end;
		for (int m = 0; m < GPU_MAX_MARKS; m++)
			events[4 + m] = &agg->marks[m];
		for (int e = 0; e < 4 + GPU_MAX_MARKS; e++)
			if (cudaEventCreate(events[e]) != cudaSuccess)
			{
				*events[e] = NULL;
				ga_status_set(status, GA_ERR_DEVICE, "could not create a CUDA event");
				goto fail;
			}
	}

	/*
	 * Device input buffer (none for device columns) and the derived
	 * columns' programs in it; group ids, control block, table.
	 */
	if (!device_input &&
		(!device_alloc((void **) &agg->dev_input, agg->dev_input_bytes, "batch input", status) ||
		 !ga_gpu_derived_upload(agg, status) ||
		 (request->pages != NULL && !ga_gpu_pages_create(agg, request->pages, status))))
		goto fail;
	if (agg->nkeys > 0 &&
		!device_alloc((void **) &agg->dev_group_ids, (size_t) agg->batch_rows * sizeof(int32_t),
					  "the rows' group ids", status))
		goto fail;
	if (!device_alloc((void **) &agg->dev_control, sizeof(GaDevControl),
					  "the control block", status))
		goto fail;

	if (agg->nkeys == 0)
		capacity = 1;
	else
	{
		int64_t		estimate = request->estimated_groups;

		/* a batch cannot bring more groups than rows */
		if (estimate > agg->batch_rows)
			estimate = agg->batch_rows;
		if (estimate < GPU_MIN_CAPACITY)
			estimate = GPU_MIN_CAPACITY;
		if (estimate > GPU_MAX_INITIAL_CAPACITY)
			estimate = GPU_MAX_INITIAL_CAPACITY;
		/* and at most an eighth of the GPU's memory; growth does the rest */
		while (estimate > GPU_MIN_CAPACITY &&
			   (double) estimate * ga_table_bytes_per_group(&agg->request) >
			   (double) device->info.total_memory / 8)
			estimate /= 2;
		capacity = next_pow2(estimate);
	}
	if (!ga_gpu_agg_table_alloc(agg, capacity, &agg->table, status) ||
		!ga_gpu_strings_alloc_heap(agg, capacity, status))
		goto fail;

	{
		cudaError_t err = cudaMemsetAsync(agg->dev_control, 0, sizeof(GaDevControl), stream);

		if (err != cudaSuccess)
		{
			cuda_error(status, err, "clearing the control block");
			goto fail;
		}
	}
	if (!ga_gpu_agg_table_init_async(agg, &agg->table, 0, status))
		goto fail;
	if (agg->nkeys == 0)
	{
		/* A plain aggregate's single group exists from the start. */
		cudaError_t err = ga_launch_reset_control(agg->dev_control, 1, stream);

		if (err != cudaSuccess)
		{
			cuda_error(status, err, "launching the control reset kernel");
			goto fail;
		}
		agg->host_control->ngroups = 1;
	}
	if (request->join != NULL && !ga_gpu_aggjoin_create(agg, request, status))
		goto fail;
	ga_status_ok(status);
	return agg;

fail:
	ga_gpu_agg_destroy(agg);
	return NULL;
}

/* agg_create of the GPU device. */
void *
ga_gpu_agg_create(void *device_impl, const GaAggRequest *request, GaStatus *status)
{
	return create_agg((GpuDevice *) device_impl, request, 0, status);
}

/*
 * Hand out the next pinned batch, emptied.  Its previous use (the copy to
 * the device of the batch before last) is normally long done; if not, wait
 * for it.
 */
GaBatch *
ga_gpu_agg_next_batch(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAgg	   *agg = (GpuAgg *) agg_impl;
	GpuHostBatch *hb;

	if (!agg_usable(agg, status))
		return NULL;
	if (agg->device_input)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "this aggregation takes device columns, not batches");
		return NULL;
	}
	hb = &agg->host[agg->next_host];
	if (hb->state == HOST_BATCH_IN_FLIGHT)
	{
		if (!select_device(agg, status) ||
			!wait_event(hb->copied, wait, arg, "waiting for a batch buffer", status))
		{
			remember_failure(agg, status);
			return NULL;
		}
		hb->state = HOST_BATCH_FREE;
	}
	ga_gpu_input_reset_batch(agg, hb);
	hb->state = HOST_BATCH_FILLING;
	return &hb->batch;
}

/*
 * Take a filled probe batch of an aggjoin: settle the batch on
 * the device, then let gpu/aggjoin.cu join it through every step and
 * aggregate the joined rows a piece at a time in the device input buffer
 * (each piece settled before the next overwrites it; the last stays in
 * flight, as a plain batch does).
 */
static int
gpu_agg_submit_joined(GpuAgg *agg, GpuHostBatch *hb, int index, GaWaitCallback wait,
					  void *arg, GaStatus *status)
{
	if (!select_device(agg, status) ||
		!ga_gpu_agg_settle(agg, wait, arg, status) ||
		!ga_gpu_aggjoin_submit(agg, hb, wait, arg, status))
		return remember_failure(agg, status);
	hb->state = HOST_BATCH_IN_FLIGHT;
	agg->next_host = 1 - index;
	return 1;
}

/*
 * Take a filled batch: wait for the previous one and settle its overflow
 * (its input must stay on the device until then), then enqueue this one's
 * copies and kernels and return without waiting for them (except for the
 * first batch's probe).
 */
int
ga_gpu_agg_submit(void *agg_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	GpuAgg	   *agg = (GpuAgg *) agg_impl;
	GpuHostBatch *hb = NULL;
	int			index;

	if (!agg_usable(agg, status))
		return 0;
	for (index = 0; index < 2 && !agg->device_input; index++)
		if (batch == &agg->host[index].batch)
		{
			hb = &agg->host[index];
			break;
		}
	/* Misuse leaves the aggregation intact, so it is reported, not remembered. */
	if (hb == NULL || hb->state != HOST_BATCH_FILLING)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the submitted batch was not handed out by this aggregation");
	if (batch->nrows < 0 || batch->nrows > agg->batch_rows ||
		batch->ncolumns != agg->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch holds %lld rows but has room for %lld",
							 (long long) batch->nrows, (long long) agg->batch_rows);
	if (batch->npages < 0 || batch->npages > agg->page_capacity)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch holds %lld pages but has room for %lld",
							 (long long) batch->npages, (long long) agg->page_capacity);
	/* an aggjoin checks the string columns it reads (build columns are not filled) */
	for (int c = 0; c < agg->ncolumns && agg->join == NULL; c++)
		if (agg->column_types[c] == GA_TYPE_STRING && batch->nrows > 0 &&
			(int64_t) ga_string_used(&batch->columns[c], batch->nrows) >
			agg->request.string_bytes)
			return ga_status_set(status, GA_ERR_INVALID,
								 "string column %d of a batch ends past its %lld bytes", c,
								 (long long) agg->request.string_bytes);
	if (batch->nrows == 0)
	{
		/* Nothing to send; counted like the CPU device counts it. */
		hb->state = HOST_BATCH_FREE;
		ga_gpu_agg_count_empty_batch(agg);
		return 1;
	}

	if (agg->join != NULL)
		return gpu_agg_submit_joined(agg, hb, index, wait, arg, status);

	if (!select_device(agg, status) ||
		!ga_gpu_agg_settle(agg, wait, arg, status) ||
		!ga_gpu_input_copy_batch(agg, hb, status) ||
		!ga_gpu_pages_deform(agg, batch, status))
		return remember_failure(agg, status);
	hb->state = HOST_BATCH_IN_FLIGHT;
	agg->next_host = 1 - index;

	/* a column pages fill is read with its bitmap: only the GPU knows */
	for (int c = 0; c < agg->ncolumns; c++)
		agg->column_has_nulls[c] = (uint8_t) (batch->columns[c].has_nulls != 0 ||
											  (agg->page_column[c] && batch->npages > 0));
	ga_gpu_input_point_columns(agg);
	agg->inflight_copy_timed = 1;
	agg->derived_pending = agg->nprograms > 0;
	agg->stats.input_rows += batch->nrows;
	if (!ga_gpu_agg_start_batch(agg, batch->nrows, wait, arg, status))
		return remember_failure(agg, status);
	return 1;
}

/*
 * Take the build side of one step of an aggjoin
 * (gpu/aggjoin.cu): it waits for the device, so nothing is in flight
 * afterwards.  A failure, out of GPU memory included, is remembered: the
 * caller restarts on the CPU device.
 */
int
ga_gpu_agg_aggjoin_build(void *agg_impl, int step, const int64_t *keys,
						 const uint32_t *rows, int64_t n, uint64_t key_seed,
						 const GaBatch *payload, GaWaitCallback wait, void *arg,
						 GaStatus *status)
{
	GpuAgg	   *agg = (GpuAgg *) agg_impl;

	if (!agg_usable(agg, status))
		return 0;
	if (agg->join == NULL)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a build side was given to an aggregation that is not fed by a join");
	if (!select_device(agg, status) ||
		!ga_gpu_aggjoin_build(agg, step, keys, rows, n, key_seed, payload, wait, arg, status))
		return remember_failure(agg, status);
	ga_status_ok(status);
	return 1;
}

/* ------------------------------------------------------------------------
 * Aggregation over device columns (test/bench/kernels)
 * ------------------------------------------------------------------------
 */

/*
 * See gpu/gpu_device.cuh; requests with a join, derived columns or a page
 * program are refused.
 */
void *
ga_gpu_bench_create(void *device_impl, const GaAggRequest *request, GaStatus *status)
{
	if (!ga_request_validate(request, status))
		return NULL;
	if (request->join != NULL || request->nderived > 0 || request->pages != NULL)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "an aggregation over device columns takes no join, no derived columns and no pages");
		return NULL;
	}
	for (int c = 0; c < request->ncolumns; c++)
		if (request->column_types[c] == GA_TYPE_STRING)
		{
			ga_status_set(status, GA_ERR_INVALID,
						  "an aggregation over device columns takes no string columns");
			return NULL;
		}
	return create_agg((GpuDevice *) device_impl, request, 1, status);
}

/* The kernels' view of request column c given as device arrays. */
static GaDevColumn
bench_column(const GpuAgg *agg, int c, const void *const *values,
			 const uint8_t *const *validity)
{
	GaDevColumn column;

	memset(&column, 0, sizeof(column));
	column.type = agg->column_types[c];
	column.values = values[c];
	column.validity = validity != NULL ? validity[c] : NULL;
	return column;
}

/* See gpu/gpu_device.cuh. */
int
ga_gpu_bench_submit(void *agg_impl, const void *const *values,
					const uint8_t *const *validity, int64_t nrows, GaStatus *status)
{
	GpuAgg	   *agg = (GpuAgg *) agg_impl;

	if (!agg_usable(agg, status))
		return 0;
	if (!agg->device_input || nrows < 0 || nrows > agg->batch_rows)
		return ga_status_set(status, GA_ERR_INVALID, "bad device batch of %lld rows",
							 (long long) nrows);
	if (nrows == 0)
		return 1;
	if (!select_device(agg, status) || !ga_gpu_agg_settle(agg, NULL, NULL, status))
		return remember_failure(agg, status);
	for (int k = 0; k < agg->nkeys; k++)
		agg->inflight_keys.columns[k] = bench_column(agg, agg->key_columns[k], values, validity);
	for (int a = 0; a < agg->naggs; a++)
	{
		GaDevAgg   *dagg = &agg->inflight_aggs.aggs[a];

		if (agg->aggs[a].op != GA_AGG_COUNT_ROWS)
			dagg->input = bench_column(agg, agg->aggs[a].column, values, validity);
		if (agg->aggs[a].op == GA_AGG_COMOMENTS)
			agg->inflight_aggs.aggs[dagg->partner].input =
				bench_column(agg, agg->aggs[a].column2, values, validity);
	}
	agg->inflight_copy_timed = 0;
	agg->stats.input_rows += nrows;
	if (!ga_gpu_agg_start_batch(agg, nrows, NULL, NULL, status))
		return remember_failure(agg, status);
	return 1;
}

/* See gpu/gpu_device.cuh. */
int
ga_gpu_bench_settle(void *agg_impl, GaStatus *status)
{
	GpuAgg	   *agg = (GpuAgg *) agg_impl;

	if (!agg_usable(agg, status))
		return 0;
	if (!select_device(agg, status) ||
		!ga_gpu_agg_settle(agg, NULL, NULL, status) ||
		!ga_gpu_agg_gather_perfect(agg, NULL, NULL, status))
		return remember_failure(agg, status);
	return 1;
}

/* ------------------------------------------------------------------------
 * Aggregation: results
 * ------------------------------------------------------------------------
 */
/*
 * Allocate the result arrays for ngroups groups, from the host provider
 * (the caller reads them); 0 when out of host memory.
 */
static int
alloc_result(GpuAgg *agg, int64_t ngroups)
{
	GaAggResult *result = &agg->result;
	size_t		n = (size_t) (ngroups > 0 ? ngroups : 1);

	result->ngroups = ngroups;
	result->nkeys = agg->nkeys;
	result->naggs = agg->naggs;
	result->key_values = (int64_t **) calloc(agg->nkeys + 1, sizeof(int64_t *));
	result->key_isnull = (uint8_t **) calloc(agg->nkeys + 1, sizeof(uint8_t *));
	result->key_bytes = (uint8_t **) calloc(agg->nkeys + 1, sizeof(uint8_t *));
	result->values = (void **) calloc(agg->naggs + 1, sizeof(void *));
	if (result->key_values == NULL || result->key_isnull == NULL ||
		result->key_bytes == NULL || result->values == NULL)
		return 0;
	for (int k = 0; k < agg->nkeys; k++)
	{
		result->key_values[k] = (int64_t *) ga_host_alloc(n * sizeof(int64_t));
		result->key_isnull[k] = (uint8_t *) ga_host_alloc(n);
		if (result->key_values[k] == NULL || result->key_isnull[k] == NULL)
			return 0;
	}
	for (int a = 0; a < agg->naggs; a++)
	{
		result->values[a] = ga_host_alloc(n * agg->acc_width[a]);
		if (result->values[a] == NULL)
			return 0;
	}
	return 1;
}

/* Free the result arrays (any of them may be missing). */
static void
free_result(GpuAgg *agg)
{
	GaAggResult *result = &agg->result;

	for (int k = 0; k < agg->nkeys; k++)
	{
		if (result->key_values != NULL)
			ga_host_free(result->key_values[k]);
		if (result->key_isnull != NULL)
			ga_host_free(result->key_isnull[k]);
		if (result->key_bytes != NULL)
			ga_host_free(result->key_bytes[k]);
	}
	for (int a = 0; a < agg->naggs; a++)
		if (result->values != NULL)
			ga_host_free(result->values[a]);
	free(result->key_values);
	free(result->key_isnull);
	free(result->key_bytes);
	free(result->values);
	memset(result, 0, sizeof(*result));
}

/*
 * Copy the groups back: keys (already int64), null flags from the mask
 * word, accumulators (float MIN/MAX turned from ordered integers back into
 * doubles).
 */
static int
copy_out_result(GpuAgg *agg, int64_t ngroups, GaWaitCallback wait, void *arg,
				GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	GaAggResult *result = &agg->result;
	int64_t		capacity = agg->table.capacity;
	int64_t    *mask = NULL;
	int			ok = 1;

	if (!alloc_result(agg, ngroups) ||
		(agg->nkeys > 0 &&
		 (mask = (int64_t *) malloc((size_t) (ngroups > 0 ? ngroups : 1) * sizeof(int64_t))) == NULL))
	{
		free(mask);
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory collecting %lld groups from the GPU",
							 (long long) ngroups);
	}
	if (ngroups == 0)
	{
		free(mask);
		return 1;
	}

#define COPY_OUT(dst, src, bytes) \
	do { \
		cudaError_t e_ = cudaMemcpyAsync((dst), (src), (bytes), cudaMemcpyDeviceToHost, stream); \
		if (e_ != cudaSuccess) { ok = cuda_error(status, e_, "copying the groups from the GPU"); goto done; } \
	} while (0)

	if (cudaEventRecord(agg->ev_copy_start, stream) != cudaSuccess)
	{
		ok = ga_status_set(status, GA_ERR_DEVICE, "could not record a CUDA event");
		goto done;
	}
	if (agg->nkeys > 0)
	{
		COPY_OUT(mask, agg->table.keys, (size_t) ngroups * sizeof(int64_t));
		for (int k = 0; k < agg->nkeys; k++)
			if (agg->inflight_strings.string_of_key[k] < 0)
				COPY_OUT(result->key_values[k], agg->table.keys + (size_t) (k + 1) * capacity,
						 (size_t) ngroups * sizeof(int64_t));
	}
	for (int a = 0; a < agg->naggs; a++)
		COPY_OUT(result->values[a], agg->table.acc[a], (size_t) ngroups * agg->acc_width[a]);
#undef COPY_OUT
	if (cudaEventRecord(agg->ev_copy_end, stream) != cudaSuccess)
	{
		ok = ga_status_set(status, GA_ERR_DEVICE, "could not record a CUDA event");
		goto done;
	}
	if (!wait_event(agg->ev_copy_end, wait, arg, "copying the groups from the GPU", status))
	{
		ok = 0;
		goto done;
	}
	add_elapsed(&agg->stats.transfer_ms, agg->ev_copy_start, agg->ev_copy_end);

	for (int k = 0; k < agg->nkeys; k++)
		for (int64_t g = 0; g < ngroups; g++)
			result->key_isnull[k][g] = (uint8_t) (((uint64_t) mask[g] >> k) & 1);
	for (int a = 0; a < agg->naggs; a++)
	{
		const GaAggSpec *spec = &agg->aggs[a];

		if ((spec->op == GA_AGG_MIN || spec->op == GA_AGG_MAX) &&
			agg->inflight_aggs.aggs[a].input_is_float)
		{
			unsigned char *values = (unsigned char *) result->values[a];

			for (int64_t g = 0; g < ngroups; g++)
			{
				int64_t		ordered;
				double		value;

				memcpy(&ordered, values + 8 * g, 8);
				value = ga_ordered_to_float64(ordered);
				memcpy(values + 8 * g, &value, 8);
			}
		}
	}
done:
	free(mask);
	return ok;
}

/*
 * Aggregate what an aggjoin adds at finish (its RIGHT and FULL
 * steps' unmatched build rows, gpu/aggjoin.cu), wait for every piece
 * (growing the table as needed) and return the groups; a second call
 * returns the same result.
 */
const GaAggResult *
ga_gpu_agg_finish(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAgg	   *agg = (GpuAgg *) agg_impl;

	if (agg->finished)
	{
		ga_status_ok(status);
		return &agg->result;
	}
	if (!agg_usable(agg, status))
		return NULL;
	if (!select_device(agg, status) ||
		(agg->join != NULL && !ga_gpu_aggjoin_finish(agg, wait, arg, status)) ||
		!ga_gpu_agg_settle(agg, wait, arg, status) ||
		!ga_gpu_agg_gather_perfect(agg, wait, arg, status) ||
		!copy_out_result(agg, agg->known_groups, wait, arg, status) ||
		!ga_gpu_strings_copy_out(agg, agg->known_groups, wait, arg, status))
	{
		remember_failure(agg, status);
		return NULL;
	}
	agg->stats.groups = agg->known_groups;
	agg->finished = 1;
	ga_status_ok(status);
	return &agg->result;
}

/* Report what the aggregation did so far. */
void
ga_gpu_agg_get_stats(const void *agg_impl, GaAggStats *stats)
{
	const GpuAgg *agg = (const GpuAgg *) agg_impl;

	*stats = agg->stats;
	stats->groups = agg->known_groups;
	stats->gpu_ordinal = agg->device->ordinal;
}

/*
 * Free everything, in any state: first wait for the stream (work may still
 * be in flight after a cancel or an error), then device memory, pinned
 * memory, events, the stream and host memory.
 */
void
ga_gpu_agg_destroy(void *agg_impl)
{
	GpuAgg	   *agg = (GpuAgg *) agg_impl;

	if (agg == NULL)
		return;
	if (agg->device != NULL)
		(void) cudaSetDevice(agg->device->ordinal);
	if (agg->stream != NULL)
		(void) cudaStreamSynchronize(agg->stream);
	ga_gpu_aggjoin_destroy(agg);
	ga_gpu_agg_table_free(agg, &agg->table);
	ga_gpu_agg_table_free(agg, &agg->retired);
	ga_gpu_plan_perfect_free(agg);
	ga_gpu_strings_free_heap(agg);
	ga_gpu_pages_free(agg);
	device_free(&agg->dev_input);
	device_free(&agg->dev_programs);
	device_free(&agg->dev_group_ids);
	device_free(&agg->dev_rows);
	device_free(&agg->dev_part_counters);
	device_free(&agg->dev_block_counts);
	device_free(&agg->dev_chunk_groups);
	device_free(&agg->dev_chunk_distinct);
	device_free(&agg->dev_packed_keys);
	for (int v = 0; v < GA_PART_MAX_VALUES; v++)
		device_free(&agg->dev_part_values[v]);
	device_free(&agg->dev_probe);
	device_free(&agg->dev_control);
	for (int b = 0; b < 2; b++)
	{
		pinned_free(agg->host[b].pinned);
		if (agg->host[b].copied != NULL)
			(void) cudaEventDestroy(agg->host[b].copied);
		free(agg->host[b].columns);
	}
	pinned_free(agg->host_control);
	pinned_free(agg->host_probe);
	{
		cudaEvent_t events[] = {agg->ev_copy_start, agg->ev_copy_end,
		agg->ev_gather_start, agg->ev_gather_end};

		for (int e = 0; e < 4; e++)
			if (events[e] != NULL)
				(void) cudaEventDestroy(events[e]);
	}
	for (int m = 0; m < GPU_MAX_MARKS; m++)
		if (agg->marks[m] != NULL)
			(void) cudaEventDestroy(agg->marks[m]);
	gpu_stream_destroy(&agg->stream);	/* the aggjoin's joins used it too */
	(void) cudaGetLastError();	/* leave no error behind for later checks */

	free_result(agg);
	free(agg->column_types);
	free(agg->key_columns);
	free(agg->aggs);
	free(agg->needs_values);
	free(agg->needs_validity);
	free(agg->host_values_offset);
	free(agg->host_validity_offset);
	free(agg->dev_values_offset);
	free(agg->dev_validity_offset);
	free(agg->host_bytes_offset);
	free(agg->dev_bytes_offset);
	free(agg->column_has_nulls);
	free(agg->column_is_derived);
	free(agg->derived_input);
	free(agg->page_column);
	free(agg->derived);
	free(agg->host_programs);
	free(agg);
}
