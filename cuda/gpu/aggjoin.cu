/*-------------------------------------------------------------------------
 *
 * gpu/aggjoin.cu
 *	  The GPU device's aggjoin (the "Aggregation fed by a hash join" part
 *	  of gpuagg_device.h), its setup and build side: the probe buffer and
 *	  every step's buffers at create, each step's build side, and the
 *	  descriptions of the columns the gather writes once every step is
 *	  built.  gpu/aggjoin_probe.cu walks each submitted batch through the
 *	  steps; gpu/aggjoin.cuh holds the state both share.  gpu/hashagg.cu
 *	  drives both (gpu_agg_submit_joined) and aggregates the rows they
 *	  gather with its usual kernels; cpu/aggjoin.c is the reference.
 *
 * Build (per step).  The keyed rows go through the hash join's build
 * (gpu/hashjoin.cu, gpu/kernels/hashjoin.cu: stable radix sort of the (key, row)
 * pairs, run lengths, offsets, an open-addressing table over the distinct
 * keys; Wu et al.'s radix-sort transformation), with the key-sorted rows
 * kept on the device.  The step's build columns that the aggregation or a
 * later step's key reads are uploaded once into one device buffer per step
 * (values, and validity when the column has nulls; a string key column's
 * end offsets and the bytes they use).  A hashed step (several keys, or
 * string keys: join_key.h) is built on the dispatcher's hashes of its
 * build rows' keys, and its build key columns are uploaded so that a
 * probe row's key can be compared with its candidate's.  When every step is
 * built, the descriptions of the columns the gather writes are uploaded.
 * A string group key's column is sent with its bytes as a string join
 * key's is (the probe buffer has a bytes slot for it, the payload its
 * bytes in use), and the gather writes only its validity: its offsets and
 * bytes go through the string kernels (gpu/aggjoin_probe.cu), whose
 * per-piece offsets are allocated here.
 * All of it counts against GPU memory: a build that does not fit fails
 * with GA_ERR_OUT_OF_MEMORY, and the caller moves to the CPU device.
 *
 * Nothing here prints or aborts; failures come back as a GaStatus and
 * gpu/hashagg.cu remembers them.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.cuh"

#include <stdlib.h>
#include <string.h>

/*
 * Lay out the probe buffer: a values slot for every probe column whose
 * values the aggregation reads and for every column a step reads (step_key:
 * its key columns, its own filter's operands), a validity slot for every
 * probe column whose validity it reads and for every column a step reads,
 * and a bytes slot of string_bytes for every string column a step reads
 * (a string join key) or the aggregation groups by.  Returns its size.
 */
static size_t
aggjoin_plan_probe(GpuAgg *agg, GpuAggJoin *aj, const uint8_t *step_key)
{
	size_t		values_bytes_per_row;
	size_t		validity_bytes = align_up((size_t) (agg->batch_rows + 7) / 8);
	size_t		bytes = 0;

	for (int c = 0; c < agg->ncolumns; c++)
	{
		aj->probe_values_offset[c] = AGGJOIN_NO_SLOT;
		aj->probe_validity_offset[c] = AGGJOIN_NO_SLOT;
		aj->probe_bytes_offset[c] = AGGJOIN_NO_SLOT;
		if (aj->from_build[c] || agg->column_is_derived[c])
			continue;			/* not sent; derived: computed after the gather */
		values_bytes_per_row = (size_t) ga_type_width(agg->column_types[c]);
		if ((agg->needs_values[c] || step_key[c]) && values_bytes_per_row > 0)
		{
			aj->probe_values_offset[c] = bytes;
			bytes += align_up(values_bytes_per_row * (size_t) agg->batch_rows);
		}
		if (agg->needs_validity[c] || step_key[c])
		{
			aj->probe_validity_offset[c] = bytes;
			bytes += align_up(validity_bytes);
		}
		if ((step_key[c] || aj->string_key[c]) && agg->column_types[c] == GA_TYPE_STRING)
		{
			aj->probe_bytes_offset[c] = bytes;
			bytes += align_up((size_t) agg->request.string_bytes);
		}
	}
	return bytes;
}

/* Create n CUDA events (timing ones); 0 with status on failure. */
static int
aggjoin_create_events(cudaEvent_t *const *events, int n, GaStatus *status)
{
	for (int e = 0; e < n; e++)
		if (cudaEventCreate(events[e]) != cudaSuccess)
		{
			*events[e] = NULL;
			return ga_status_set(status, GA_ERR_DEVICE, "could not create a CUDA event");
		}
	return 1;
}

/* Destroy the CUDA events of an array that were created. */
static void
aggjoin_destroy_events(const cudaEvent_t *events, int n)
{
	for (int e = 0; e < n; e++)
		if (events[e] != NULL)
			(void) cudaEventDestroy(events[e]);
}

/*
 * Allocate step i's buffers (0-based): the probe's answer and scan, sized
 * for a full level; the gathered keys after the first step (hashed: each
 * int64 key column, and the hashes at every step); the flags and
 * pair list of a step that checks its pairs; the level of its rows (probe
 * rows, build rows of steps 1 .. i + 1) before the last; its events; and
 * an empty hash join for its build.
 */
static int
aggjoin_alloc_step(GpuAgg *agg, GpuAggJoin *aj, int i, GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[i];
	size_t		rows = (size_t) agg->batch_rows;
	GaJoinRequest join_request;
	cudaEvent_t *events[] = {&step->ev_expand_start, &step->ev_expand_end};

	if (!aggjoin_create_events(events, 2, status) ||
		!device_alloc((void **) &step->dev_first, rows * sizeof(uint32_t),
					  "a join step's probe answer", status) ||
		!device_alloc((void **) &step->dev_count, rows * sizeof(uint32_t),
					  "a join step's probe answer", status) ||
		!device_alloc((void **) &step->dev_pair_ends, rows * sizeof(unsigned long long),
					  "a join step's row offsets", status))
		return 0;
	if ((i > 0 || step->hashed) &&
		!device_alloc((void **) &step->dev_keys, rows * sizeof(unsigned long long),
					  "a join step's keys", status))
		return 0;
	if (i > 0 && !step->hashed &&
		!device_alloc((void **) &step->dev_key_validity, align_up((rows + 7) / 8),
					  "a join step's keys", status))
		return 0;
	for (int k = 0; i > 0 && step->hashed && k < step->nkeys; k++)
	{
		if (agg->column_types[step->key_columns[k]] == GA_TYPE_STRING)
			continue;			/* read where it lives, not gathered */
		if (!device_alloc((void **) &step->dev_key_values[k], rows * sizeof(unsigned long long),
						  "a join step's key columns", status) ||
			!device_alloc((void **) &step->dev_key_values_validity[k], align_up((rows + 7) / 8),
						  "a join step's key columns", status))
			return 0;
	}
	if (aggjoin_checks_pairs(step) &&
		!device_alloc((void **) &step->dev_passed, rows, "a join step's matched rows", status))
		return 0;
	if (aggjoin_writes_passing_pairs(step) &&
		(!device_alloc((void **) &step->dev_pair_drop, rows, "a join step's filter flags",
					   status) ||
		 !device_alloc((void **) &step->dev_pair_list, rows * sizeof(uint32_t),
					   "a join step's filtered pairs", status)))
		return 0;
	if (i + 1 < aj->nsteps)
	{
		if (!device_alloc((void **) &step->level.probe_rows, rows * sizeof(int64_t),
						  "a join step's rows", status))
			return 0;
		for (int t = 1; t <= i + 1; t++)
			if (!device_alloc((void **) &step->level.build_rows[t], rows * sizeof(uint32_t),
							  "a join step's rows", status))
				return 0;
	}

	/*
	 * The hash join whose build we share, on the aggregation's stream, so
	 * that the probes follow its build in order; its own probe batch stays
	 * tiny.
	 */
	memset(&join_request, 0, sizeof(join_request));
	join_request.probe_batch_rows = 1;
	step->build = ga_gpu_join_create_on_stream(agg->device, &join_request, agg->stream,
											   status);
	return step->build != NULL;
}

/*
 * Allocate the string group keys' buffers: each key's end offsets over a
 * piece of batch_rows rows, the scan's scratch (sized for that many) and
 * the count of the rows that fit.  Nothing without string group keys.
 */
static int
aggjoin_alloc_strings(GpuAgg *agg, GpuAggJoin *aj, GaStatus *status)
{
	size_t		rows = (size_t) agg->batch_rows;

	if (aj->nstrings == 0)
		return 1;
	for (int s = 0; s < aj->nstrings; s++)
		if (!device_alloc((void **) &aj->dev_string_ends[s], rows * sizeof(unsigned long long),
						  "the string group keys' offsets of joined rows", status))
			return 0;
	GPU_TRY(ga_aggjoin_string_ends(NULL, &aj->string_temp_bytes, NULL, NULL, NULL, 0,
								   agg->batch_rows, aj->dev_string_ends[0],
								   agg->device->info.multiprocessors, agg->stream),
			"sizing the prefix sum of the string group keys of joined rows");
	return device_alloc(&aj->dev_string_temp, aj->string_temp_bytes,
						"the prefix sum of the string group keys of joined rows", status) &&
		device_alloc((void **) &aj->dev_string_fit, sizeof(unsigned long long),
					 "the joined rows that fit the string group keys' bytes", status);
}

/*
 * Mark the columns the join's filter reads (values and validity) as read
 * by the aggregation, so that the input buffer holds them and the gather
 * writes them.  Before the buffer is laid out.
 */
void
ga_gpu_aggjoin_mark_filter_inputs(GpuAgg *agg, const GaAggJoinSpec *join)
{
	for (int i = 0; i < join->nfilter; i++)
	{
		const GaFilterStep *step = &join->filter[i];

		if (step->op != GA_FILTER_BOOL && step->op != GA_FILTER_COMPARE)
			continue;
		agg->needs_values[step->column] = agg->needs_validity[step->column] = 1;
		if (step->op == GA_FILTER_COMPARE)
			agg->needs_values[step->column2] = agg->needs_validity[step->column2] = 1;
	}
}

/*
 * Start the aggjoin part: copy the join spec, lay out and allocate the
 * probe buffer, every step's buffers, the scan's scratch (sized for a full
 * level), the pinned row count and the events; with a filter, its flags,
 * row list and compaction scratch.
 */
int
ga_gpu_aggjoin_create(GpuAgg *agg, const GaAggRequest *request, GaStatus *status)
{
	const GaAggJoinSpec *spec = request->join;
	GpuAggJoin *aj;
	uint8_t    *step_key;
	size_t		probe_bytes;
	int			n = agg->ncolumns + 1;

	aj = (GpuAggJoin *) calloc(1, sizeof(GpuAggJoin));
	if (aj == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory starting an aggjoin on the GPU");
	agg->join = aj;
	aj->nsteps = spec->nsteps;
	aj->from_build = (uint8_t *) calloc(n, 1);
	aj->later_key = (uint8_t *) calloc(n, 1);
	aj->build_key = (uint8_t *) calloc(n, 1);
	aj->step_operand = (uint8_t *) calloc(n, 1);
	aj->payload_has_nulls = (uint8_t *) calloc(n, 1);
	aj->probe_values_offset = (size_t *) calloc(n, sizeof(size_t));
	aj->probe_validity_offset = (size_t *) calloc(n, sizeof(size_t));
	aj->probe_bytes_offset = (size_t *) calloc(n, sizeof(size_t));
	aj->column_values = (const void **) calloc(n, sizeof(void *));
	aj->column_validity = (const uint8_t **) calloc(n, sizeof(uint8_t *));
	aj->column_bytes = (const uint8_t **) calloc(n, sizeof(uint8_t *));
	aj->column_bytes_used = (int64_t *) calloc(n, sizeof(int64_t));
	aj->string_key = (uint8_t *) calloc(n, 1);
	step_key = (uint8_t *) calloc(n, 1);
	if (aj->from_build == NULL || aj->later_key == NULL || aj->build_key == NULL ||
		aj->step_operand == NULL || aj->payload_has_nulls == NULL ||
		aj->probe_values_offset == NULL || aj->probe_validity_offset == NULL ||
		aj->probe_bytes_offset == NULL || aj->column_values == NULL ||
		aj->column_validity == NULL || aj->column_bytes == NULL ||
		aj->column_bytes_used == NULL || aj->string_key == NULL || step_key == NULL)
	{
		free(step_key);
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory starting an aggjoin on the GPU");
	}
	if (agg->ncolumns > 0)
		memcpy(aj->from_build, spec->from_build, agg->ncolumns);
	for (int i = 0; i < aj->nsteps; i++)
	{
		const GaAggJoinStep *given = &spec->steps[i];
		GpuAggJoinStep *step = &aj->steps[i];

		step->type = given->type;
		step->hashed = ga_join_step_hashed(given);
		step->nkeys = step->hashed ? given->nkeys : 1;
		if (step->hashed)
		{
			memcpy(step->key_columns, given->key_columns, sizeof(int) * given->nkeys);
			memcpy(step->build_key_columns, given->build_key_columns,
				   sizeof(int) * given->nkeys);
		}
		else
			step->key_columns[0] = given->key_column;
		for (int k = 0; k < step->nkeys; k++)
		{
			step_key[step->key_columns[k]] = 1;
			if (i > 0)
				aj->later_key[step->key_columns[k]] = 1;
			if (step->hashed)
				aj->build_key[step->build_key_columns[k]] = 1;
		}
		step->nfilter = given->nfilter;
		memcpy(step->filter, given->filter, sizeof(GaFilterStep) * given->nfilter);
		for (int f = 0; f < step->nfilter; f++)
		{
			const GaFilterStep *fs = &step->filter[f];

			if (fs->op == GA_FILTER_BOOL || fs->op == GA_FILTER_COMPARE)
				aj->step_operand[fs->column] = step_key[fs->column] = 1;
			if (fs->op == GA_FILTER_COMPARE)
				aj->step_operand[fs->column2] = step_key[fs->column2] = 1;
		}
	}
	for (int k = 0; k < agg->nkeys; k++)
	{
		int			c = agg->key_columns[k];

		if (agg->inflight_strings.string_of_key[k] >= 0 && !aj->string_key[c])
		{
			aj->string_key[c] = 1;
			aj->string_columns[aj->nstrings++] = c;
		}
	}
	probe_bytes = aggjoin_plan_probe(agg, aj, step_key);
	free(step_key);

	{
		cudaEvent_t *events[] = {&aj->ev_probe_start, &aj->ev_probe_end, &aj->ev_nrows_copied};

		if (!aggjoin_create_events(events, 3, status))
			return 0;
	}
	if (!device_alloc((void **) &aj->dev_probe, probe_bytes, "the join's probe batch", status) ||
		!device_alloc((void **) &aj->dev_inner_total, sizeof(unsigned long long),
					  "the join's probe total", status))
		return 0;
	for (int i = 0; i < aj->nsteps; i++)
		if (!aggjoin_alloc_step(agg, aj, i, status))
			return 0;
	GPU_TRY(ga_aggjoin_pair_ends(NULL, &aj->scan_temp_bytes, aj->steps[0].dev_count,
								 aj->steps[0].dev_pair_ends, agg->batch_rows, GA_AGGJOIN_INNER,
								 agg->stream),
			"sizing the join's row scan");
	if (!device_alloc(&aj->dev_scan_temp, aj->scan_temp_bytes, "the join's row scan", status) ||
		!pinned_alloc((void **) &aj->host_nrows, sizeof(unsigned long long),
					  "the join's row count", status))
		return 0;
	if (!aggjoin_alloc_strings(agg, aj, status))
		return 0;
	aj->nfilter = spec->nfilter;
	memcpy(aj->filter, spec->filter, sizeof(GaFilterStep) * spec->nfilter);
	if (aj->nfilter > 0 &&
		(!device_alloc((void **) &aj->dev_filter_drop, (size_t) agg->batch_rows,
					   "the join filter's flags", status) ||
		 !device_alloc((void **) &aj->dev_filter_rows, (size_t) agg->batch_rows * sizeof(uint32_t),
					   "the join filter's rows", status) ||
		 !device_alloc((void **) &aj->dev_filter_scratch, agg->dev_input_bytes,
					   "the join filter's compaction", status)))
		return 0;
	if (aggjoin_any_keeps_unmatched(aj) || aj->nfilter > 0 || aggjoin_any_filtered_step(aj))
	{
		GPU_TRY(ga_aggjoin_select_unmatched(NULL, &aj->select_temp_bytes, NULL, 0, NULL, NULL,
											aggjoin_unmatched_chunk(agg), agg->stream),
				"sizing the listing of a right or full join's unmatched build rows");
		if (!device_alloc(&aj->dev_select_temp, aj->select_temp_bytes,
						  "the listing of a right or full join's unmatched build rows", status) ||
			!device_alloc((void **) &aj->dev_unmatched_count, sizeof(unsigned long long),
						  "the count of a right or full join's unmatched build rows", status))
			return 0;
	}
	return 1;
}

/*
 * Whether every value of a build side's string group key column fits the
 * bytes the aggregation's input buffer has for that key (a probe batch's
 * values fit by its own bytes).  Out of GPU memory when one does not, so
 * that the aggregation finishes on the CPU device, whose pieces grow for
 * it.
 */
static int
aggjoin_string_values_fit(const GpuAgg *agg, const GaColumn *col, int64_t nrows,
						  GaStatus *status)
{
	const uint32_t *ends = (const uint32_t *) col->values;

	for (int64_t r = 0; r < nrows; r++)
	{
		int64_t		len = (int64_t) (ends[r] - ga_string_start(col, r));

		if (len > agg->request.string_bytes)
			return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
								 "a text group key of %lld bytes of a join's build side does not fit the %lld bytes a batch of the GPU holds of it",
								 (long long) len, (long long) agg->request.string_bytes);
	}
	return 1;
}

/*
 * Upload step `step`'s build columns that are read (values the aggregation
 * or a later step's key reads, and of the step's own build key columns;
 * validity where they are read and the column has nulls; a string key
 * column's bytes in use) into one device buffer, and note where each
 * lives.
 */
static int
aggjoin_upload_payload(GpuAgg *agg, GpuAggJoin *aj, int step, const GaBatch *payload,
					   GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAggJoinStep *st = &aj->steps[step];
	cudaStream_t stream = agg->stream;
	size_t		nrows = (size_t) payload->nrows;
	size_t	   *values_offset = NULL;
	size_t	   *validity_offset = NULL;
	size_t	   *bytes_offset = NULL;
	size_t		bytes = 0;
	int64_t		bytes_sent = 0;
	int			ok = 0;

	values_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	validity_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	bytes_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	if (values_offset == NULL || validity_offset == NULL || bytes_offset == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "out of host memory uploading the build side of an aggjoin");
		goto done;
	}

	/* Lay out the payload buffer: AGGJOIN_NO_SLOT where nothing is sent. */
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];
		int			key = aj->later_key[c] || aj->step_operand[c];

		values_offset[c] = validity_offset[c] = bytes_offset[c] = AGGJOIN_NO_SLOT;
		if (aj->from_build[c] != step + 1)
			continue;
		aj->payload_has_nulls[c] = (uint8_t) (col->has_nulls != 0);
		if ((agg->needs_values[c] || key || aj->build_key[c]) &&
			ga_type_width(agg->column_types[c]) > 0)
		{
			values_offset[c] = bytes;
			bytes += align_up(nrows * (size_t) ga_type_width(agg->column_types[c]));
		}
		if ((agg->needs_validity[c] || key) && col->has_nulls)
		{
			validity_offset[c] = bytes;
			bytes += align_up((nrows + 7) / 8);
		}
		if (values_offset[c] != AGGJOIN_NO_SLOT && agg->column_types[c] == GA_TYPE_STRING)
		{
			if (aj->string_key[c] && !aggjoin_string_values_fit(agg, col, (int64_t) nrows, status))
				goto done;
			aj->column_bytes_used[c] = (int64_t) ga_string_used(col, (int64_t) nrows);
			bytes_offset[c] = bytes;
			bytes += align_up((size_t) aj->column_bytes_used[c]);
		}
	}
	if (!device_alloc((void **) &st->dev_payload, bytes, "a join step's build columns", status))
		goto done;

	/* Copies from pageable memory: the stream is idle after the build. */
	if (cudaEventRecord(agg->ev_copy_start, stream) != cudaSuccess)
	{
		ga_status_set(status, GA_ERR_DEVICE, "could not record a CUDA event");
		goto done;
	}
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];

		if (values_offset[c] != AGGJOIN_NO_SLOT)
		{
			size_t		vbytes = nrows * (size_t) ga_type_width(agg->column_types[c]);

			aj->column_values[c] = st->dev_payload + values_offset[c];
			if (!gpu_copy_chunked(st->dev_payload + values_offset[c], col->values, vbytes,
								  cudaMemcpyHostToDevice, stream, wait, arg,
								  "copying the join's build columns to the GPU", status))
				goto done;
			bytes_sent += (int64_t) vbytes;
		}
		if (validity_offset[c] != AGGJOIN_NO_SLOT)
		{
			aj->column_validity[c] = st->dev_payload + validity_offset[c];
			if (!gpu_copy_chunked(st->dev_payload + validity_offset[c], col->validity,
								  (nrows + 7) / 8, cudaMemcpyHostToDevice, stream, wait, arg,
								  "copying the join's build columns to the GPU", status))
				goto done;
			bytes_sent += (int64_t) ((nrows + 7) / 8);
		}
		if (bytes_offset[c] != AGGJOIN_NO_SLOT)
		{
			aj->column_bytes[c] = st->dev_payload + bytes_offset[c];
			if (aj->column_bytes_used[c] > 0 &&
				!gpu_copy_chunked(st->dev_payload + bytes_offset[c], col->bytes,
								  (size_t) aj->column_bytes_used[c], cudaMemcpyHostToDevice,
								  stream, wait, arg,
								  "copying the join's build strings to the GPU", status))
				goto done;
			bytes_sent += aj->column_bytes_used[c];
		}
	}
	if (cudaEventRecord(agg->ev_copy_end, stream) != cudaSuccess)
	{
		ga_status_set(status, GA_ERR_DEVICE, "could not record a CUDA event");
		goto done;
	}
	/* The host arrays must outlive the copies: wait for them. */
	if (!wait_event(agg->ev_copy_end, wait, arg, "copying the join's build columns to the GPU",
					status))
		goto done;
	add_elapsed(&agg->stats.transfer_ms, agg->ev_copy_start, agg->ev_copy_end);
	agg->stats.bytes_sent += bytes_sent;
	ok = 1;

done:
	free(values_offset);
	free(validity_offset);
	free(bytes_offset);
	return ok;
}

/*
 * Wait for everything enqueued on the stream so far, polling an event and
 * asking the wait callback.
 */
static int
aggjoin_wait_stream(GpuAggJoin *aj, cudaStream_t stream, GaWaitCallback wait, void *arg,
					GaStatus *status)
{
	GPU_TRY(cudaEventRecord(aj->ev_nrows_copied, stream), "recording an event");
	return wait_event(aj->ev_nrows_copied, wait, arg, "copying the join's columns to the GPU",
					  status);
}

/* One column the gather writes, read where column c lives. */
static GaDevGatherColumn
aggjoin_describe_column(const GpuAggJoin *aj, int c, int width)
{
	GaDevGatherColumn g;

	memset(&g, 0, sizeof(g));
	g.side = aj->from_build[c];
	g.width = width;
	if (width > 0)
		g.src_values = aj->column_values[c];
	g.src_validity = aj->column_validity[c];
	return g;
}

/*
 * A filter program as the kernels read it: each operand's type, side, and
 * values and validity where the kernel finds them: in the aggregation's
 * input buffer, where the gather wrote them (in_input: the join's filter,
 * over a piece of the last step's rows), or where its column lives (the
 * probe buffer, or its step's payload: a step's own filter, over pairs).
 */
static void
aggjoin_describe_filter(const GpuAgg *agg, const GpuAggJoin *aj, const GaFilterStep *steps,
						int nsteps, int in_input, GaDevFilter *filter)
{
	memset(filter, 0, sizeof(*filter));
	filter->nsteps = nsteps;
	for (int i = 0; i < nsteps; i++)
	{
		int			columns[2] = {steps[i].column, steps[i].column2};
		int			operands = steps[i].op == GA_FILTER_COMPARE ? 2 :
			steps[i].op == GA_FILTER_BOOL ? 1 : 0;

		filter->steps[i] = steps[i];
		for (int k = 0; k < operands; k++)
		{
			int			c = columns[k];

			filter->values[i][k] = in_input ? agg->dev_input + agg->dev_values_offset[c] :
				aj->column_values[c];
			filter->validity[i][k] = in_input ? agg->dev_input + agg->dev_validity_offset[c] :
				aj->column_validity[c];
			filter->types[i][k] = agg->column_types[c];
			filter->sides[i][k] = aj->from_build[c];
		}
	}
}

/*
 * Once every step is built: describe every column the gather writes (the
 * aggregation's columns into its input buffer, derived ones aside, then
 * the int64 key columns of every step after the first into the step's key
 * arrays) and upload the descriptions; describe the join's filter and the
 * steps' own.  Note where the probe buffer holds each probe column.
 */
static int
aggjoin_upload_columns(GpuAgg *agg, GpuAggJoin *aj, GaWaitCallback wait, void *arg,
					   GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	GaDevGatherColumn *columns;
	int			n = 0;
	int			ok;

	/* A probe column's validity slot is read only where it has one. */
	for (int c = 0; c < agg->ncolumns; c++)
		if (!aj->from_build[c])
		{
			if (aj->probe_values_offset[c] != AGGJOIN_NO_SLOT)
				aj->column_values[c] = aj->dev_probe + aj->probe_values_offset[c];
			if (aj->probe_validity_offset[c] != AGGJOIN_NO_SLOT)
				aj->column_validity[c] = aj->dev_probe + aj->probe_validity_offset[c];
			if (aj->probe_bytes_offset[c] != AGGJOIN_NO_SLOT)
				aj->column_bytes[c] = aj->dev_probe + aj->probe_bytes_offset[c];
		}

	columns = (GaDevGatherColumn *) calloc(agg->ncolumns + aj->nsteps * GA_AGG_MAX_JOIN_KEYS,
										   sizeof(GaDevGatherColumn));
	if (columns == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory describing the join's columns");
	for (int c = 0; c < agg->ncolumns; c++)
	{
		if ((!agg->needs_values[c] && !agg->needs_validity[c]) || agg->column_is_derived[c])
			continue;
		/* a string group key: its offsets and bytes by gpu/aggjoin_probe.cu */
		columns[n] = aggjoin_describe_column(aj, c, agg->needs_values[c] && !aj->string_key[c] ?
											 ga_type_width(agg->column_types[c]) : 0);
		if (agg->needs_values[c] && !aj->string_key[c])
			columns[n].dst_values = agg->dev_input + agg->dev_values_offset[c];
		if (agg->needs_validity[c])
			columns[n].dst_validity = agg->dev_input + agg->dev_validity_offset[c];
		else
			columns[n].src_validity = NULL;
		n++;
	}
	aj->ncolumns_gathered = n;
	for (int i = 1; i < aj->nsteps; i++)
	{
		GpuAggJoinStep *step = &aj->steps[i];

		step->key_gather_first = n;
		for (int k = 0; k < step->nkeys; k++)
		{
			if (agg->column_types[step->key_columns[k]] == GA_TYPE_STRING)
				continue;		/* read where it lives (aggjoin_key_columns) */
			columns[n] = aggjoin_describe_column(aj, step->key_columns[k],
												 (int) sizeof(unsigned long long));
			columns[n].dst_values = step->hashed ? step->dev_key_values[k] : step->dev_keys;
			columns[n].dst_validity = step->hashed ? step->dev_key_values_validity[k] :
				step->dev_key_validity;
			n++;
		}
		step->key_gathered = n - step->key_gather_first;
	}
	aggjoin_describe_filter(agg, aj, aj->filter, aj->nfilter, 1, &aj->input_filter);
	for (int i = 0; i < aj->nsteps; i++)
		aggjoin_describe_filter(agg, aj, aj->steps[i].filter, aj->steps[i].nfilter, 0,
								&aj->steps[i].pair_filter);
	/* The host array must outlive the copy: wait for it. */
	ok = device_alloc((void **) &aj->dev_columns,
					  (size_t) (n > 0 ? n : 1) * sizeof(GaDevGatherColumn),
					  "the join's column descriptions", status) &&
		(n == 0 ||
		 gpu_copy_chunked(aj->dev_columns, columns, (size_t) n * sizeof(GaDevGatherColumn),
						  cudaMemcpyHostToDevice, stream, wait, arg,
						  "copying the join's column descriptions to the GPU", status)) &&
		aggjoin_wait_stream(aj, stream, wait, arg, status);
	free(columns);
	return ok;
}

/*
 * Take step `step`'s build side (0-based): the hash join's build with the
 * sorted rows kept on the device (a hashed step: on device.c's hashes,
 * whose seed is kept for the probes), then the payload's columns
 * (and, for a RIGHT or FULL step, its cleared matched flags); the
 * join's own statistics are added to the aggregation's.  After the last
 * step's build, the gather's columns are described.
 */
int
ga_gpu_aggjoin_build(GpuAgg *agg, int step, const int64_t *keys, const uint32_t *rows,
					 int64_t n, uint64_t key_seed, const GaBatch *payload, GaWaitCallback wait,
					 void *arg, GaStatus *status)
{
	GpuAggJoin *aj = agg->join;
	GpuAggJoinStep *st = &aj->steps[step];
	GaJoinStats join_stats;

	st->key_seed = (unsigned long long) key_seed;

	if (!ga_gpu_join_build_on_device(st->build, keys, rows, n, wait, arg, status))
		return 0;
	ga_gpu_join_get_stats(st->build, &join_stats);
	agg->stats.bytes_sent += join_stats.bytes_sent;
	agg->stats.device_ms += join_stats.device_ms;
	agg->stats.transfer_ms += join_stats.transfer_ms;
	ga_gpu_join_device_view(st->build, &st->table, &st->dev_sorted_rows);
	if (!aggjoin_upload_payload(agg, aj, step, payload, wait, arg, status))
		return 0;
	st->payload_rows = payload->nrows;
	if (aggjoin_keeps_unmatched_build(st->type))
	{
		if (!device_alloc((void **) &st->dev_matched,
						  (size_t) (payload->nrows > 0 ? payload->nrows : 1),
						  "the matched flags of a right or full join's build rows", status))
			return 0;
		GPU_TRY(cudaMemsetAsync(st->dev_matched, 0,
								(size_t) (payload->nrows > 0 ? payload->nrows : 1),
								agg->stream),
				"clearing the matched flags of a right or full join's build rows");
	}
	agg->stats.join_build_rows += n;
	if (++aj->nbuilt == aj->nsteps && !aggjoin_upload_columns(agg, aj, wait, arg, status))
		return 0;
	ga_status_ok(status);
	return 1;
}

/*
 * Free the aggjoin part, in any state (the caller has synchronized the
 * stream).
 */
void
ga_gpu_aggjoin_destroy(GpuAgg *agg)
{
	GpuAggJoin *aj = agg->join;

	if (aj == NULL)
		return;
	for (int i = 0; i < GA_AGG_MAX_JOIN_STEPS; i++)
	{
		GpuAggJoinStep *step = &aj->steps[i];
		cudaEvent_t events[] = {step->ev_expand_start, step->ev_expand_end};

		if (step->build != NULL)
			ga_gpu_join_destroy(step->build);
		device_free(&step->dev_payload);
		device_free(&step->dev_matched);
		device_free(&step->dev_passed);
		device_free(&step->dev_pair_drop);
		device_free(&step->dev_pair_list);
		device_free(&step->dev_keys);
		device_free(&step->dev_key_validity);
		for (int k = 0; k < GA_AGG_MAX_JOIN_KEYS; k++)
		{
			device_free(&step->dev_key_values[k]);
			device_free(&step->dev_key_values_validity[k]);
		}
		device_free(&step->dev_first);
		device_free(&step->dev_count);
		device_free(&step->dev_pair_ends);
		device_free(&step->level.probe_rows);
		for (int t = 0; t <= GA_AGG_MAX_JOIN_STEPS; t++)
			device_free(&step->level.build_rows[t]);
		aggjoin_destroy_events(events, 2);
	}
	device_free(&aj->dev_probe);
	device_free(&aj->dev_inner_total);
	device_free(&aj->dev_scan_temp);
	device_free(&aj->dev_select_temp);
	device_free(&aj->dev_unmatched_count);
	device_free(&aj->dev_filter_drop);
	device_free(&aj->dev_filter_rows);
	device_free(&aj->dev_filter_scratch);
	device_free(&aj->dev_columns);
	for (int s = 0; s < GA_GPU_MAX_KEYS; s++)
		device_free(&aj->dev_string_ends[s]);
	device_free(&aj->dev_string_temp);
	device_free(&aj->dev_string_fit);
	pinned_free(aj->host_nrows);
	{
		cudaEvent_t events[] = {aj->ev_probe_start, aj->ev_probe_end, aj->ev_nrows_copied};

		aggjoin_destroy_events(events, 3);
	}
	free(aj->from_build);
	free(aj->later_key);
	free(aj->build_key);
	free(aj->step_operand);
	free(aj->payload_has_nulls);
	free(aj->probe_values_offset);
	free(aj->probe_validity_offset);
	free(aj->probe_bytes_offset);
	free(aj->column_values);
	free(aj->column_validity);
	free(aj->column_bytes);
	free(aj->column_bytes_used);
	free(aj->string_key);
	free(aj);
	agg->join = NULL;
}
