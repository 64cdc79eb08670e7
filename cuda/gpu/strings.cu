/*-------------------------------------------------------------------------
 *
 * gpu/strings.cu
 *	  The host side of a GPU aggregation's string keys (GA_TYPE_STRING key
 *	  columns, docs/design/strings.md): which keys are strings, the heap
 *	  that keeps each group's key bytes once, its growth, the kernels' view
 *	  of both, and the result's offsets and bytes per string key at finish.
 *
 * The group table of a layout with string keys has two more arrays per
 * capacity (gpu/batch.cu allocates them with the table): each group's tuple
 * hash, which growth rebuilds the slots from and which a lookup compares
 * before any byte, and each group's length per string key.  A string key's
 * dense key word is the heap offset of the group's bytes.  The heap is
 * one device array for every string key of the aggregation, filled by an
 * atomic bump allocator in the group id kernel
 * (gpu/kernels/hashagg_strings.cu); when it is full the batch overflows
 * like a full table, and gpu/batch.cu grows the heap here before it redoes
 * the batch.
 *
 * At finish, per string key, a prefix sum of the groups' lengths gives the
 * result's end offsets (GaAggResult.key_values) and a gather copies the
 * groups' bytes into group order (key_bytes), so that the caller reads
 * them as the CPU device returns them.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <string.h>

/*
 * The least heap: small, so that the conformance suite's string cases
 * (a hundred estimated groups, up to 40000 found) grow it on the way.
 */
#define GPU_HEAP_MIN_BYTES ((int64_t) 64 << 10)

/* Mark the string keys and set the kernels' view of which they are. */
void
ga_gpu_strings_plan(GpuAgg *agg)
{
	GaDevStrings *view = &agg->inflight_strings;

	memset(view, 0, sizeof(*view));
	view->hash_bits = agg->request.debug_hash_bits;
	view->bytes_capacity = (uint32_t) agg->request.string_bytes;
	agg->nstrings = 0;
	for (int k = 0; k < GA_GPU_MAX_KEYS; k++)
		view->string_of_key[k] = -1;
	for (int k = 0; k < agg->nkeys; k++)
		if (agg->column_types[agg->key_columns[k]] == GA_TYPE_STRING)
			view->string_of_key[k] = (int8_t) agg->nstrings++;
	view->nstrings = agg->nstrings;
}

/* Allocate the heap for a table of `groups` groups (nothing without string keys). */
int
ga_gpu_strings_alloc_heap(GpuAgg *agg, int64_t groups, GaStatus *status)
{
	int64_t		bytes;

	if (agg->nstrings == 0)
		return 1;
	bytes = groups * GA_STRING_HEAP_BYTES * agg->nstrings;
	if (bytes < GPU_HEAP_MIN_BYTES)
		bytes = GPU_HEAP_MIN_BYTES;
	bytes = (int64_t) align_up((size_t) bytes);	/* reservations are 8-aligned */
	if (!device_alloc((void **) &agg->dev_heap, (size_t) bytes, "the string keys' bytes",
					  status))
		return 0;
	agg->heap_capacity = bytes;
	return 1;
}

/* The kernels' view of the string keys over `table` and the heap. */
GaDevStrings
ga_gpu_strings_view(const GpuAgg *agg, const GpuTable *table)
{
	GaDevStrings view = agg->inflight_strings;

	view.hashes = table->hashes;
	view.lens = table->lens;
	view.heap = agg->dev_heap;
	view.heap_capacity = agg->heap_capacity;
	return view;
}

/*
 * Replace the heap by one of at least `wanted` bytes (and at least twice
 * the old), its first `valid` bytes copied over; waits for the copy so
 * that the old heap can be freed.
 */
int
ga_gpu_strings_grow_heap(GpuAgg *agg, unsigned long long wanted, int64_t valid,
						 GaWaitCallback wait, void *arg, GaStatus *status)
{
	unsigned char *old = agg->dev_heap;
	unsigned char *grown = NULL;
	int64_t		bytes = 2 * agg->heap_capacity;
	cudaError_t err;

	if (wanted > (unsigned long long) INT64_MAX / 2)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "the string keys' bytes do not fit the GPU");
	if ((int64_t) wanted + (int64_t) wanted / 2 > bytes)
		bytes = (int64_t) wanted + (int64_t) wanted / 2;
	bytes = (int64_t) align_up((size_t) bytes);	/* reservations are 8-aligned */
	if (!device_alloc((void **) &grown, (size_t) bytes, "the string keys' bytes", status))
		return 0;
	if (valid > agg->heap_capacity)
		valid = agg->heap_capacity;
	err = valid > 0 ? cudaMemcpyAsync(grown, old, (size_t) valid, cudaMemcpyDeviceToDevice,
									  agg->stream) : cudaSuccess;
	if (err == cudaSuccess)
		err = cudaEventRecord(agg->ev_copy_end, agg->stream);
	if (err != cudaSuccess)
	{
		ga_gpu_free(grown);
		return cuda_error(status, err, "copying the string keys' bytes on the GPU");
	}
	if (!wait_event(agg->ev_copy_end, wait, arg, "growing the string keys' bytes", status))
	{
		/* the copy may still run: keep both until destroy synchronizes */
		agg->dev_heap = grown;
		agg->heap_capacity = bytes;
		(void) cudaStreamSynchronize(agg->stream);
		ga_gpu_free(old);
		return 0;
	}
	ga_gpu_free(old);
	agg->dev_heap = grown;
	agg->heap_capacity = bytes;
	return 1;
}

/*
 * Wait for the copy the aggregation's stream ends with (timed from
 * ev_copy_start) and count its time as transfer time; 0 with status.
 */
static int
strings_copy_wait(GpuAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaError_t err = cudaEventRecord(agg->ev_copy_end, agg->stream);

	if (err != cudaSuccess)
		return cuda_error(status, err, "recording an event");
	if (!wait_event(agg->ev_copy_end, wait, arg, "copying the string keys from the GPU", status))
		return 0;
	add_elapsed(&agg->stats.transfer_ms, agg->ev_copy_start, agg->ev_copy_end);
	return 1;
}

/*
 * Set the result's key_values (end offsets in group order) and key_bytes
 * of every string key for the table's first ngroups groups: a prefix sum
 * of the lengths and a gather of the bytes on the GPU, then copies back.
 */
int
ga_gpu_strings_copy_out(GpuAgg *agg, int64_t ngroups, GaWaitCallback wait, void *arg,
						GaStatus *status)
{
	const int	sms = agg->device->info.multiprocessors;
	cudaStream_t stream = agg->stream;
	GaAggResult *result = &agg->result;
	GaDevStrings view = ga_gpu_strings_view(agg, &agg->table);
	int64_t		capacity = agg->table.capacity;
	long long  *ends = NULL;
	void	   *temp = NULL;
	size_t		temp_bytes = 0;
	unsigned char *out = NULL;
	int64_t		out_bytes = 0;
	int			ok = 1;

	if (agg->nstrings == 0)
		return 1;
	if (ngroups > 0)
	{
		cudaError_t err = ga_string_ends(NULL, &temp_bytes, &view, 0, capacity, NULL,
										 ngroups, sms, stream);

		if (err != cudaSuccess)
			return cuda_error(status, err, "sizing the string keys' prefix sum");
		if (!device_alloc((void **) &ends, (size_t) ngroups * sizeof(long long),
						  "the string keys' offsets", status) ||
			!device_alloc(&temp, temp_bytes, "the string keys' prefix sum", status))
		{
			device_free(&ends);
			return 0;
		}
	}

#define STRINGS_TRY(call, what) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) { ok = cuda_error(status, e_, (what)); goto done; } \
	} while (0)

	for (int k = 0; k < agg->nkeys; k++)
	{
		const int	s = view.string_of_key[k];
		int64_t		total;

		if (s < 0)
			continue;
		if (ngroups == 0)
		{
			result->key_bytes[k] = (uint8_t *) ga_host_alloc(1);
			if (result->key_bytes[k] == NULL)
			{
				ok = ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
								   "out of host memory collecting the string keys");
				goto done;
			}
			continue;
		}

		/* the end offsets, back to the host for the bytes' size */
		STRINGS_TRY(cudaEventRecord(agg->ev_copy_start, stream), "recording an event");
		STRINGS_TRY(ga_string_ends(temp, &temp_bytes, &view, s, capacity, ends, ngroups, sms,
								   stream),
					"summing the string keys' lengths");
		STRINGS_TRY(cudaMemcpyAsync(result->key_values[k], ends,
									(size_t) ngroups * sizeof(long long),
									cudaMemcpyDeviceToHost, stream),
					"copying the string keys' offsets from the GPU");
		if (!strings_copy_wait(agg, wait, arg, status))
		{
			ok = 0;
			goto done;
		}
		total = result->key_values[k][ngroups - 1];

		/* the bytes in group order */
		result->key_bytes[k] = (uint8_t *) ga_host_alloc((size_t) (total > 0 ? total : 1));
		if (result->key_bytes[k] == NULL)
		{
			ok = ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							   "out of host memory collecting %lld bytes of string keys",
							   (long long) total);
			goto done;
		}
		if (total == 0)
			continue;
		if (total > out_bytes)
		{
			device_free(&out);
			out_bytes = 0;
			if (!device_alloc((void **) &out, (size_t) total, "the string keys' bytes",
							  status))
			{
				ok = 0;
				goto done;
			}
			out_bytes = total;
		}
		STRINGS_TRY(cudaEventRecord(agg->ev_copy_start, stream), "recording an event");
		STRINGS_TRY(ga_launch_string_gather(&view, s, capacity,
											agg->table.keys + (size_t) (1 + k) * capacity,
											ends, ngroups, out, sms, stream),
					"launching the string gather kernel");
		STRINGS_TRY(cudaMemcpyAsync(result->key_bytes[k], out, (size_t) total,
									cudaMemcpyDeviceToHost, stream),
					"copying the string keys' bytes from the GPU");
		if (!strings_copy_wait(agg, wait, arg, status))
		{
			ok = 0;
			goto done;
		}
	}
#undef STRINGS_TRY

done:
	/* a failed wait may leave work on the stream that uses the buffers */
	if (!ok)
		(void) cudaStreamSynchronize(stream);
	device_free(&ends);
	device_free(&temp);
	device_free(&out);
	return ok;
}

/* Free the heap. */
void
ga_gpu_strings_free_heap(GpuAgg *agg)
{
	device_free(&agg->dev_heap);
	agg->heap_capacity = 0;
}
