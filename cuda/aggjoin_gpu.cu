/*-------------------------------------------------------------------------
 *
 * aggjoin_gpu.cu
 *	  The GPU device's join-fed aggregation (the "Aggregation fed by a hash
 *	  join" part of gpuagg_device.h): the build side, the probe of every
 *	  submitted batch and the gather of its joined rows, on the device.
 *	  device_gpu.cu drives it (gpu_agg_submit_joined) and aggregates the
 *	  gathered rows with its usual kernels; aggjoin_cpu.c is the reference.
 *
 * Build.  The keyed rows go through the hash join's build (join_gpu.cu,
 * hashjoin_kernels.cu: stable radix sort of the (key, row) pairs, run
 * lengths, offsets, an open-addressing table over the distinct keys; Wu et
 * al.'s radix-sort transformation), with the key-sorted rows kept on the
 * device.  The build columns the aggregation reads are uploaded once into
 * one device buffer (values, and validity when the column has nulls).  All
 * of it counts against GPU memory: a build that does not fit fails with
 * GA_ERR_OUT_OF_MEMORY, and the caller moves to the CPU device.
 *
 * Submit (per probe batch), all on the device's stream:
 *
 * 1. Copy the probe columns the aggregation reads, and the key column, into
 *	  a probe buffer laid out like the batch (build columns are not sent).
 *	  A probe column whose validity is read but that has no nulls in this
 *	  batch gets its bitmap set on the device instead of sent.
 * 2. Probe (ga_launch_join_probe): first/count per probe row.
 * 3. Scan (ga_aggjoin_pair_ends): the inclusive prefix sum of the pair
 *	  counts, LEFT turning a count of 0 into one pair without a build row;
 *	  its last entry, the number of pairs, is copied back and waited for.
 *	  This is the count-then-write scheme of the GPU hash-join report (Gupta
 *	  and Murugavel) and of He et al. ("Relational joins on graphics
 *	  processors", section 4), which sizes the output before writing it.
 * 4. For each piece of at most batch_rows pairs (device_gpu.cu's loop):
 *	  the gather kernel writes the pairs as rows of the aggregation's device
 *	  input buffer, in the layout of a copied batch, and the aggregation
 *	  kernels run on it.  A piece is settled (its table overflow redone on
 *	  the same rows) before the next overwrites the buffer.
 *
 * For the PK-FK join (at most one match per probe row) that is three
 * passes over the probe rows (probe, scan, gather) besides the copies and
 * the aggregation, and one 8-byte copy back per batch.
 *
 * Nothing here prints or aborts; failures come back as a GaStatus and
 * device_gpu.cu remembers them.
 *
 *-------------------------------------------------------------------------
 */
#include "device_gpu.cuh"
#include "aggjoin_kernels.cuh"

#include <stdlib.h>
#include <string.h>

/* No slot for this column in the probe buffer. */
#define AGGJOIN_NO_SLOT SIZE_MAX

struct GpuAggJoin
{
	/* the join spec, copied */
	GaAggJoinType type;
	int			key_column;
	uint8_t    *from_build;		/* ncolumns */

	/* the probe buffer: per column a values and a validity slot, or none */
	size_t	   *probe_values_offset;
	size_t	   *probe_validity_offset;
	unsigned char *dev_probe;

	/* the probe's answer and its scan */
	uint32_t   *dev_first;		/* batch_rows each */
	uint32_t   *dev_count;
	unsigned long long *dev_pair_ends;
	unsigned long long *dev_inner_total;	/* the probe kernel's sum, unused */
	void	   *dev_scan_temp;
	size_t		scan_temp_bytes;
	unsigned long long *host_npairs;	/* pinned */

	/* the build side */
	void	   *build;			/* a GpuJoin of join_gpu.cu */
	int			built;
	GaDevJoinTable table;
	const uint32_t *dev_sorted_rows;
	unsigned char *dev_payload;
	uint8_t    *payload_has_nulls;	/* ncolumns */

	/* the gather's columns, in device memory */
	GaDevGatherColumn *dev_columns;
	int			ncolumns_gathered;

	cudaEvent_t ev_probe_start;
	cudaEvent_t ev_probe_end;
	cudaEvent_t ev_npairs_copied;
};

/*
 * Lay out the probe buffer: a values slot for every probe column whose
 * values the aggregation reads and for the key, a validity slot for every
 * probe column whose validity it reads and for the key.  Returns its size.
 */
static size_t
aggjoin_plan_probe(GpuAgg *agg, GpuAggJoin *aj)
{
	size_t		values_bytes_per_row;
	size_t		validity_bytes = align_up((size_t) (agg->batch_rows + 7) / 8);
	size_t		bytes = 0;

	for (int c = 0; c < agg->ncolumns; c++)
	{
		int			is_key = c == aj->key_column;

		aj->probe_values_offset[c] = AGGJOIN_NO_SLOT;
		aj->probe_validity_offset[c] = AGGJOIN_NO_SLOT;
		if (aj->from_build[c])
			continue;
		values_bytes_per_row = (size_t) ga_type_width(agg->column_types[c]);
		if ((agg->needs_values[c] || is_key) && values_bytes_per_row > 0)
		{
			aj->probe_values_offset[c] = bytes;
			bytes += align_up(values_bytes_per_row * (size_t) agg->batch_rows);
		}
		if (agg->needs_validity[c] || is_key)
		{
			aj->probe_validity_offset[c] = bytes;
			bytes += validity_bytes;
		}
	}
	return bytes;
}

/*
 * Start the join-fed part: copy the join spec, lay out and allocate the
 * probe buffer, the probe's answer, the scan and its scratch (sized for a
 * full batch), the pinned pair count, the events, and an empty hash join
 * for the build.
 */
int
ga_gpu_aggjoin_create(GpuAgg *agg, const GaAggRequest *request, GaStatus *status)
{
	GpuAggJoin *aj;
	size_t		rows = (size_t) agg->batch_rows;
	size_t		probe_bytes;
	GaJoinRequest join_request;

	if (request->join->nsteps != 1 || request->join->steps[0].type == GA_AGG_JOIN_ANTI)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the GPU device does not run chains of join steps or anti joins yet");
	aj = (GpuAggJoin *) calloc(1, sizeof(GpuAggJoin));
	if (aj == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory starting a join-fed aggregation on the GPU");
	agg->join = aj;
	aj->type = request->join->steps[0].type;
	aj->key_column = request->join->steps[0].key_column;
	aj->from_build = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	aj->payload_has_nulls = (uint8_t *) calloc(agg->ncolumns + 1, 1);
	aj->probe_values_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	aj->probe_validity_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	if (aj->from_build == NULL || aj->payload_has_nulls == NULL ||
		aj->probe_values_offset == NULL || aj->probe_validity_offset == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory starting a join-fed aggregation on the GPU");
	if (agg->ncolumns > 0)
		memcpy(aj->from_build, request->join->from_build, agg->ncolumns);

	{
		cudaEvent_t *events[] = {&aj->ev_probe_start, &aj->ev_probe_end,
		&aj->ev_npairs_copied};

		for (int e = 0; e < 3; e++)
			if (cudaEventCreate(events[e]) != cudaSuccess)
			{
				*events[e] = NULL;
				return ga_status_set(status, GA_ERR_DEVICE, "could not create a CUDA event");
			}
	}

	probe_bytes = aggjoin_plan_probe(agg, aj);
	if (!device_alloc((void **) &aj->dev_probe, probe_bytes, "the join's probe batch", status) ||
		!device_alloc((void **) &aj->dev_first, rows * sizeof(uint32_t),
					  "the join's probe answer", status) ||
		!device_alloc((void **) &aj->dev_count, rows * sizeof(uint32_t),
					  "the join's probe answer", status) ||
		!device_alloc((void **) &aj->dev_pair_ends, rows * sizeof(unsigned long long),
					  "the join's pair offsets", status) ||
		!device_alloc((void **) &aj->dev_inner_total, sizeof(unsigned long long),
					  "the join's probe total", status))
		return 0;
	GPU_TRY(ga_aggjoin_pair_ends(NULL, &aj->scan_temp_bytes, aj->dev_count, aj->dev_pair_ends,
								 agg->batch_rows, aj->type == GA_AGG_JOIN_LEFT,
								 agg->device->stream),
			"sizing the join's pair scan");
	if (!device_alloc(&aj->dev_scan_temp, aj->scan_temp_bytes, "the join's pair scan", status) ||
		!pinned_alloc((void **) &aj->host_npairs, sizeof(unsigned long long),
					  "the join's pair count", status))
		return 0;

	/* The hash join whose build we share; its own probe batch stays tiny. */
	memset(&join_request, 0, sizeof(join_request));
	join_request.probe_batch_rows = 1;
	aj->build = ga_gpu_join_create(agg->device, &join_request, status);
	if (aj->build == NULL)
		return 0;
	return 1;
}

/*
 * Upload the build columns the aggregation reads (values; validity when
 * the column has nulls) into one device buffer, and describe every column
 * the gather writes: its source (probe buffer or payload) and its place in
 * the aggregation's input buffer.
 */
static int
aggjoin_upload_payload(GpuAgg *agg, GpuAggJoin *aj, const GaBatch *payload,
					   GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->device->stream;
	size_t		nrows = (size_t) payload->nrows;
	size_t	   *values_offset = NULL;
	size_t	   *validity_offset = NULL;
	GaDevGatherColumn *columns = NULL;
	size_t		bytes = 0;
	int64_t		bytes_sent = 0;
	int			n = 0;
	int			ok = 0;

	values_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	validity_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	columns = (GaDevGatherColumn *) calloc(agg->ncolumns + 1, sizeof(GaDevGatherColumn));
	if (values_offset == NULL || validity_offset == NULL || columns == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "out of host memory uploading the build side of a join-fed aggregation");
		goto done;
	}

	/* Lay out the payload buffer. */
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];

		if (!aj->from_build[c])
			continue;
		aj->payload_has_nulls[c] = (uint8_t) (col->has_nulls != 0);
		values_offset[c] = bytes;
		if (agg->needs_values[c])
			bytes += align_up(nrows * (size_t) ga_type_width(agg->column_types[c]));
		validity_offset[c] = bytes;
		if (agg->needs_validity[c] && col->has_nulls)
			bytes += align_up((nrows + 7) / 8);
	}
	if (!device_alloc((void **) &aj->dev_payload, bytes, "the join's build columns", status))
		goto done;

	/* Describe the gathered columns: every column the aggregation reads. */
	for (int c = 0; c < agg->ncolumns; c++)
	{
		GaDevGatherColumn *g = &columns[n];

		if (!agg->needs_values[c] && !agg->needs_validity[c])
			continue;
		n++;
		g->from_build = aj->from_build[c];
		g->width = agg->needs_values[c] ? ga_type_width(agg->column_types[c]) : 0;
		if (agg->needs_values[c])
			g->dst_values = agg->dev_input + agg->dev_values_offset[c];
		if (agg->needs_validity[c])
			g->dst_validity = agg->dev_input + agg->dev_validity_offset[c];
		if (!aj->from_build[c])
		{
			if (agg->needs_values[c])
				g->src_values = aj->dev_probe + aj->probe_values_offset[c];
			if (agg->needs_validity[c])
				g->src_validity = aj->dev_probe + aj->probe_validity_offset[c];
		}
		else
		{
			if (agg->needs_values[c])
				g->src_values = aj->dev_payload + values_offset[c];
			if (agg->needs_validity[c] && aj->payload_has_nulls[c])
				g->src_validity = aj->dev_payload + validity_offset[c];
		}
	}
	aj->ncolumns_gathered = n;
	if (!device_alloc((void **) &aj->dev_columns, (size_t) (n > 0 ? n : 1) * sizeof(GaDevGatherColumn),
					  "the join's column descriptions", status))
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

		if (!aj->from_build[c])
			continue;
		if (agg->needs_values[c] && nrows > 0)
		{
			size_t		vbytes = nrows * (size_t) ga_type_width(agg->column_types[c]);

			if (!gpu_copy_chunked(aj->dev_payload + values_offset[c], col->values, vbytes,
								  cudaMemcpyHostToDevice, stream, wait, arg,
								  "copying the join's build columns to the GPU", status))
				goto done;
			bytes_sent += (int64_t) vbytes;
		}
		if (agg->needs_validity[c] && aj->payload_has_nulls[c] && nrows > 0)
		{
			if (!gpu_copy_chunked(aj->dev_payload + validity_offset[c], col->validity,
								  (nrows + 7) / 8, cudaMemcpyHostToDevice, stream, wait, arg,
								  "copying the join's build columns to the GPU", status))
				goto done;
			bytes_sent += (int64_t) ((nrows + 7) / 8);
		}
	}
	if (n > 0 &&
		!gpu_copy_chunked(aj->dev_columns, columns, (size_t) n * sizeof(GaDevGatherColumn),
						  cudaMemcpyHostToDevice, stream, wait, arg,
						  "copying the join's column descriptions to the GPU", status))
		goto done;
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
	free(columns);
	return ok;
}

/*
 * Take the build side: the hash join's build with the sorted rows kept on
 * the device, then the payload's columns; the join's own statistics are
 * added to the aggregation's.
 */
int
ga_gpu_aggjoin_build(GpuAgg *agg, const int64_t *keys, const uint32_t *rows, int64_t n,
					 const GaBatch *payload, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAggJoin *aj = agg->join;
	GaJoinStats join_stats;

	if (!ga_gpu_join_build_on_device(aj->build, keys, rows, n, wait, arg, status))
		return 0;
	ga_gpu_join_get_stats(aj->build, &join_stats);
	agg->stats.bytes_sent += join_stats.bytes_sent;
	agg->stats.device_ms += join_stats.device_ms;
	agg->stats.transfer_ms += join_stats.transfer_ms;
	ga_gpu_join_device_view(aj->build, &aj->table, &aj->dev_sorted_rows);
	if (!aggjoin_upload_payload(agg, aj, payload, wait, arg, status))
		return 0;
	aj->built = 1;
	agg->stats.join_build_rows = n;
	ga_status_ok(status);
	return 1;
}

/*
 * Enqueue the probe columns' copies into the probe buffer (a bitmap the
 * gather reads but the batch does not have is set on the device), with
 * events around them and the batch's reuse event after them.
 */
static int
aggjoin_enqueue_probe_copies(GpuAgg *agg, GpuAggJoin *aj, GpuHostBatch *hb, GaStatus *status)
{
	cudaStream_t stream = agg->device->stream;
	const GaBatch *batch = &hb->batch;
	size_t		nrows = (size_t) batch->nrows;
	size_t		validity_bytes = (nrows + 7) / 8;
	int64_t		bytes_sent = 0;

	GPU_TRY(cudaEventRecord(agg->ev_copy_start, stream), "recording an event");
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *column = &batch->columns[c];

		if (aj->probe_values_offset[c] != AGGJOIN_NO_SLOT)
		{
			size_t		bytes = nrows * (size_t) ga_type_width(agg->column_types[c]);

			GPU_TRY(cudaMemcpyAsync(aj->dev_probe + aj->probe_values_offset[c], column->values,
									bytes, cudaMemcpyHostToDevice, stream),
					"copying a probe batch to the GPU");
			bytes_sent += (int64_t) bytes;
		}
		if (aj->probe_validity_offset[c] == AGGJOIN_NO_SLOT)
			continue;
		if (column->has_nulls)
		{
			GPU_TRY(cudaMemcpyAsync(aj->dev_probe + aj->probe_validity_offset[c],
									column->validity, validity_bytes,
									cudaMemcpyHostToDevice, stream),
					"copying a probe batch's null bitmap to the GPU");
			bytes_sent += (int64_t) validity_bytes;
		}
		else if (agg->needs_validity[c])
			GPU_TRY(cudaMemsetAsync(aj->dev_probe + aj->probe_validity_offset[c], 0xff,
									validity_bytes, stream),
					"setting a probe batch's null bitmap on the GPU");
	}
	GPU_TRY(cudaEventRecord(agg->ev_copy_end, stream), "recording an event");
	GPU_TRY(cudaEventRecord(hb->copied, stream), "recording an event");
	agg->stats.bytes_sent += bytes_sent;
	return 1;
}

/*
 * Probe a filled batch (nrows > 0): copy its probe columns, probe, scan
 * the pair counts, and wait for the number of pairs.  Nothing of the
 * aggregation may be in flight (device_gpu.cu settled it).
 */
int
ga_gpu_aggjoin_probe(GpuAgg *agg, GpuHostBatch *hb, int64_t *npairs, GaWaitCallback wait,
					 void *arg, GaStatus *status)
{
	GpuAggJoin *aj = agg->join;
	cudaStream_t stream = agg->device->stream;
	int64_t		nrows = hb->batch.nrows;
	const GaColumn *key = &hb->batch.columns[aj->key_column];
	const uint8_t *key_validity = NULL;
	size_t		scan_bytes = aj->scan_temp_bytes;

	if (!aj->built)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join-fed aggregation's batch was submitted before its build side was given");
	if (!aggjoin_enqueue_probe_copies(agg, aj, hb, status))
		return 0;
	if (key->has_nulls)
		key_validity = aj->dev_probe + aj->probe_validity_offset[aj->key_column];

	GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
	GPU_TRY(ga_launch_join_probe(&aj->table,
								 (const unsigned long long *) (aj->dev_probe +
															   aj->probe_values_offset[aj->key_column]),
								 key_validity, nrows, aj->dev_first, aj->dev_count,
								 aj->dev_inner_total, agg->device->info.multiprocessors, stream),
			"launching the join's probe kernel");
	GPU_TRY(ga_aggjoin_pair_ends(aj->dev_scan_temp, &scan_bytes, aj->dev_count,
								 aj->dev_pair_ends, nrows, aj->type == GA_AGG_JOIN_LEFT, stream),
			"scanning the join's pair counts");
	GPU_TRY(cudaEventRecord(aj->ev_probe_end, stream), "recording an event");
	GPU_TRY(cudaMemcpyAsync(aj->host_npairs, aj->dev_pair_ends + (nrows - 1),
							sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream),
			"copying the join's pair count from the GPU");
	GPU_TRY(cudaEventRecord(aj->ev_npairs_copied, stream), "recording an event");
	if (!wait_event(aj->ev_npairs_copied, wait, arg, "waiting for the GPU to probe a batch",
					status))
		return 0;

	add_elapsed(&agg->stats.transfer_ms, agg->ev_copy_start, agg->ev_copy_end);
	add_elapsed(&agg->stats.device_ms, aj->ev_probe_start, aj->ev_probe_end);
	add_elapsed(&agg->stats.transfer_ms, aj->ev_probe_end, aj->ev_npairs_copied);
	*npairs = (int64_t) *aj->host_npairs;
	agg->stats.input_rows += nrows;
	agg->stats.joined_rows += *npairs;
	return 1;
}

/*
 * Enqueue the gather of pairs [start, start + n) of the batch just probed
 * into the aggregation's input buffer (between the gather events), and say
 * which of its columns may hold nulls: a probe column when the batch has
 * nulls there, a build column when the payload has or the join is LEFT.
 */
int
ga_gpu_aggjoin_gather(GpuAgg *agg, const GaBatch *probe, int64_t start, int64_t n,
					  GaStatus *status)
{
	GpuAggJoin *aj = agg->join;
	cudaStream_t stream = agg->device->stream;

	for (int c = 0; c < agg->ncolumns; c++)
		agg->column_has_nulls[c] = aj->from_build[c] ?
			(uint8_t) (aj->payload_has_nulls[c] || aj->type == GA_AGG_JOIN_LEFT) :
			(uint8_t) (probe->columns[c].has_nulls != 0);
	GPU_TRY(cudaEventRecord(agg->ev_gather_start, stream), "recording an event");
	GPU_TRY(ga_launch_aggjoin_gather(aj->dev_columns, aj->ncolumns_gathered, aj->dev_pair_ends,
									 aj->dev_first, aj->dev_count, probe->nrows,
									 aj->dev_sorted_rows, start, n,
									 agg->device->info.multiprocessors, stream),
			"launching the join's gather kernel");
	GPU_TRY(cudaEventRecord(agg->ev_gather_end, stream), "recording an event");
	return 1;
}

/*
 * Free the join-fed part, in any state (the caller has synchronized the
 * stream).
 */
void
ga_gpu_aggjoin_destroy(GpuAgg *agg)
{
	GpuAggJoin *aj = agg->join;

	if (aj == NULL)
		return;
	ga_gpu_join_destroy(aj->build);
	device_free(&aj->dev_probe);
	device_free(&aj->dev_first);
	device_free(&aj->dev_count);
	device_free(&aj->dev_pair_ends);
	device_free(&aj->dev_inner_total);
	device_free(&aj->dev_scan_temp);
	device_free(&aj->dev_payload);
	device_free(&aj->dev_columns);
	if (aj->host_npairs != NULL)
		(void) cudaFreeHost(aj->host_npairs);
	{
		cudaEvent_t events[] = {aj->ev_probe_start, aj->ev_probe_end, aj->ev_npairs_copied};

		for (int e = 0; e < 3; e++)
			if (events[e] != NULL)
				(void) cudaEventDestroy(events[e]);
	}
	free(aj->from_build);
	free(aj->payload_has_nulls);
	free(aj->probe_values_offset);
	free(aj->probe_validity_offset);
	free(aj);
	agg->join = NULL;
}
