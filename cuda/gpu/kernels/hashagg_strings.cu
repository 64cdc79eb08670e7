/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashagg_strings.cu
 *	  The kernels of a GPU aggregation with string keys (GA_TYPE_STRING):
 *	  group ids by exact byte equality in the global table, the slots
 *	  rebuilt after growth, and the groups' bytes gathered in group order
 *	  at the end (docs/design/strings.md).
 *
 * A row's key tuple is hashed as the CPU device hashes it (cpu/hashagg.c:
 * ga_hash_bytes of a string key, an integer key's value, a tag per null
 * key, folded by a rotation and a multiply, finished by ga_mix64 and cut
 * to debug_hash_bits), so that the testing hook makes the same keys
 * collide on both devices.  Its home slot is the hash's low bits.
 *
 * Find-or-insert (string_find_or_insert).  A slot goes EMPTY -> BUSY by a
 * compare-and-swap; its winner reserves the bytes of all the row's string
 * keys in the heap (each rounded up to 8 bytes, so that a lookup reads a
 * group's bytes a word at a time) with one atomic add per warp
 * (heap_used), then takes a
 * group id (take_group_id), copies the bytes, writes the null mask, the
 * integer keys, each string key's heap offset and length and the tuple
 * hash, fences, and publishes the id in the slot.  Readers load a slot as
 * the integer table's find_or_insert does (a volatile load: an acquire
 * load at GPU scope would also invalidate the multiprocessor's L1 for
 * every row), and everything they read of a group has an address that
 * depends on the id they loaded, through L2 (__ldcg), as L1 is not
 * coherent: the group's stored hash first, and only on an equal hash the
 * null mask, the integer keys, the lengths and the bytes.  A reader that
 * waited out a BUSY slot loads the published id once more with acquire
 * semantics.  The heap is reserved before the id, so every id
 * below the capacity has its key written: when the heap is full the
 * winner poisons its slot and raises overflow and heap_overflow without
 * taking an id; when the ids run out it poisons the slot as the integer
 * table does (its reserved bytes stay unused).  Reservations that fit
 * form a prefix of the heap (heap_used only grows within a batch), so
 * after an overflow the heap's valid bytes end at or before its capacity,
 * and the host grows the heap and the table, rebuilds the slots from the
 * stored hashes and redoes the batch (gpu/batch.cu).
 *
 * Offsets into the heap are 64-bit; a batch's end offsets and a single
 * string's length are 32-bit (a batch's bytes are at most UINT32_MAX).
 * The kernels clamp a row's offsets to the column's bytes in the input
 * buffer, so malformed offsets read nothing outside them.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu/kernels/hashagg_device.cuh"

#include <cooperative_groups/scan.h>
#include <cub/device/device_scan.cuh>

/* ------------------------------------------------------------------------
 * Device building blocks
 * ------------------------------------------------------------------------
 */

/* Load a slot with acquire semantics: a published id's key is visible after it. */
__device__ __forceinline__ int32_t
load_slot_acquire(const int32_t *slot)
{
	int32_t		v;

	asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(slot) : "memory");
	return v;
}

/*
 * Row `row`'s value of a string key column: where its bytes start and
 * their length, clamped to the column's bytes in the input buffer
 * (malformed offsets read nothing outside them).
 */
__device__ __forceinline__ void
string_value(const GaDevStrings &strings, const GaDevColumn &column, int64_t row,
			 uint32_t *start, uint32_t *len)
{
	const uint32_t *ends = (const uint32_t *) column.values;
	uint32_t	end = __ldg(ends + row);
	uint32_t	begin = row > 0 ? __ldg(ends + row - 1) : 0;

	if (end > strings.bytes_capacity)
		end = strings.bytes_capacity;
	if (begin > end)
		begin = end;
	*start = begin;
	*len = end - begin;
}

/*
 * The key tuple hash of row `row`, as the CPU device computes it, and its
 * null mask (bit k set when key k is null).
 */
__device__ __forceinline__ uint64_t
string_tuple_hash(const GaDevKeys &keys, const GaDevStrings &strings, int64_t row,
				  long long *mask_out)
{
	uint64_t	h = GA_HASH_SEED;
	long long	mask = 0;

	for (int k = 0; k < keys.nkeys; k++)
	{
		const GaDevColumn &column = keys.columns[k];
		const bool	isnull = row_is_null(column.validity, row);
		uint64_t	v;

		if (isnull)
		{
			mask |= 1LL << k;
			v = ga_mix64(GA_HASH_SEED + (uint64_t) k + 1);
		}
		else if (strings.string_of_key[k] >= 0)
		{
			uint32_t	start;
			uint32_t	len;

			string_value(strings, column, row, &start, &len);
			v = ga_hash_bytes(strings.bytes[k] + start, len);
		}
		else
			v = (uint64_t) load_int(column.values, column.type, row);
		h = (((h << 27) | (h >> 37)) ^ v) * GA_HASH_GOLDEN;
	}
	*mask_out = mask;
	return ga_hash_keep_bits(ga_mix64(h), strings.hash_bits);
}

/*
 * Whether published group g holds row `row`'s key tuple (null mask
 * `mask`): the mask, the integer keys, then each string key's length and
 * bytes, read through L2.
 */
__device__ __forceinline__ bool
string_group_equal(const GaDevKeys &keys, const GaDevStrings &strings,
				   const GaDevTable &table, int32_t g, int64_t row, long long mask)
{
	const int64_t capacity = table.capacity;

	if (__ldcg(&table.keys[g]) != mask)
		return false;
	for (int k = 0; k < keys.nkeys; k++)
	{
		const GaDevColumn &column = keys.columns[k];
		const int	s = strings.string_of_key[k];
		const long long word = __ldcg(&table.keys[(1 + k) * capacity + g]);

		if ((mask >> k) & 1)
			continue;
		if (s < 0)
		{
			if (word != load_int(column.values, column.type, row))
				return false;
		}
		else
		{
			const unsigned char *heap = strings.heap + word;
			const uint8_t *bytes;
			uint32_t	start;
			uint32_t	len;

			string_value(strings, column, row, &start, &len);
			if (__ldcg(&strings.lens[(int64_t) s * capacity + g]) != len)
				return false;
			bytes = strings.bytes[k] + start;
			/* the group's bytes start 8-aligned: a word of them per load */
			for (uint32_t i = 0; i < len; i += 8)
			{
				const unsigned long long w =
					__ldcg((const unsigned long long *) (heap + i));
				const uint32_t n = len - i < 8 ? len - i : 8;

				for (uint32_t b = 0; b < n; b++)
					if ((unsigned char) (w >> (8 * b)) != __ldg(bytes + i + b))
						return false;
			}
		}
	}
	return true;
}

/*
 * Heap bytes a string of len bytes takes: rounded up to 8, so that every
 * group's bytes of every key start 8-aligned and a lookup reads them a
 * word at a time (the heap itself is 256-aligned).
 */
__device__ __forceinline__ unsigned long long
heap_span(uint32_t len)
{
	return ((unsigned long long) len + 7) & ~7ULL;
}

/*
 * Reserve `bytes` bytes of the heap; the converged lanes of the warp
 * reserve theirs side by side with one atomic.  Returns the first byte's
 * offset, which may lie past the heap's capacity.
 */
__device__ __forceinline__ unsigned long long
reserve_heap(GaDevControl *control, unsigned long long bytes)
{
	cg::coalesced_group active = cg::coalesced_threads();
	const unsigned long long before = cg::exclusive_scan(active, bytes);
	const unsigned int last = active.num_threads() - 1;
	unsigned long long base = 0;

	if (active.thread_rank() == last)
		base = atomicAdd(&control->heap_used, before + bytes);
	base = active.shfl(base, last);
	return base + before;
}

/* Poison a slot this thread owns and raise the overflow flag; returns -1. */
__device__ __forceinline__ int32_t
poison_slot(const GaDevTable &table, int64_t slot, bool heap_full)
{
	atomicExch((int *) &table.slots[slot], GA_SLOT_POISON);
	if (heap_full)
		atomicExch(&table.control->heap_overflow, 1);
	atomicExch(&table.control->overflow, 1);
	return -1;
}

/*
 * Insert row `row`'s key tuple (hash h, null mask `mask`) as a new group
 * in `slot`, which this thread holds BUSY: heap bytes first, then the id,
 * the key and the publication (see the file header).
 */
__device__ __forceinline__ int32_t
string_insert(const GaDevKeys &keys, const GaDevStrings &strings, const GaDevTable &table,
			  int64_t slot, uint64_t h, long long mask, int64_t row)
{
	const int64_t capacity = table.capacity;
	unsigned long long total = 0;
	unsigned long long offset;
	unsigned long long g;

	for (int k = 0; k < keys.nkeys; k++)
		if (strings.string_of_key[k] >= 0 && !((mask >> k) & 1))
		{
			uint32_t	start;
			uint32_t	len;

			string_value(strings, keys.columns[k], row, &start, &len);
			total += heap_span(len);
		}
	offset = reserve_heap(table.control, total);
	if (offset > (unsigned long long) strings.heap_capacity ||
		total > (unsigned long long) strings.heap_capacity - offset)
		return poison_slot(table, slot, true);
	g = take_group_id(table.control);
	if (g >= (unsigned long long) capacity)
		return poison_slot(table, slot, false);

	table.keys[g] = mask;
	for (int k = 0; k < keys.nkeys; k++)
	{
		const GaDevColumn &column = keys.columns[k];
		const int	s = strings.string_of_key[k];
		long long	word = 0;

		if (s >= 0)
		{
			uint32_t	start = 0;
			uint32_t	len = 0;

			if (!((mask >> k) & 1))
			{
				const uint8_t *bytes;

				string_value(strings, column, row, &start, &len);
				bytes = strings.bytes[k] + start;
				for (uint32_t i = 0; i < len; i++)
					strings.heap[offset + i] = __ldg(bytes + i);
			}
			word = (long long) offset;
			strings.lens[(int64_t) s * capacity + (int64_t) g] = len;
			offset += heap_span(len);
		}
		else if (!((mask >> k) & 1))
			word = load_int(column.values, column.type, row);
		table.keys[(1 + k) * capacity + (int64_t) g] = word;
	}
	strings.hashes[g] = h;
	__threadfence();			/* the key visible device-wide before the id */
	atomicExch((int *) &table.slots[slot], (int) g);
	return (int32_t) g;
}

/*
 * The dense group id of row `row`'s key tuple, inserting it when new; -1
 * when the table or the heap is full (overflow raised).
 */
__device__ __forceinline__ int32_t
string_find_or_insert(const GaDevKeys &keys, const GaDevStrings &strings,
					  const GaDevTable &table, int64_t row)
{
	long long	mask;
	const uint64_t h = string_tuple_hash(keys, strings, row, &mask);
	int64_t		slot = (int64_t) (h & (uint64_t) table.slot_mask);

	volatile int32_t *vslots = table.slots;

	for (;;)
	{
		int32_t		v = vslots[slot];

		if (v == GA_SLOT_EMPTY)
		{
			v = atomicCAS((int *) &table.slots[slot], GA_SLOT_EMPTY, GA_SLOT_BUSY);
			if (v == GA_SLOT_EMPTY)
				return string_insert(keys, strings, table, slot, h, mask, row);
			/* lost the race: v is the winner's state */
		}
		if (v == GA_SLOT_BUSY)
		{
			while (v == GA_SLOT_BUSY)
			{
				__nanosleep(32);
				v = vslots[slot];
			}
			/* published while this thread watched: take it with acquire */
			v = load_slot_acquire(&table.slots[slot]);
		}
		if (v == GA_SLOT_POISON)
		{
			atomicExch(&table.control->overflow, 1);
			return -1;
		}
		if (__ldcg(&strings.hashes[v]) == h &&
			string_group_equal(keys, strings, table, v, row, mask))
			return v;
		slot = (slot + 1) & table.slot_mask;
	}
}

/* ------------------------------------------------------------------------
 * Kernels
 * ------------------------------------------------------------------------
 */

/* Phase 1 with string keys: group_ids[i] of position i, -1 on overflow. */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
string_group_ids_kernel(const GaDevKeys keys, const GaDevStrings strings,
						const GaDevTable table, int64_t nrows, const int32_t *rows,
						const unsigned long long *count, int32_t *group_ids)
{
	const int64_t n = positions(nrows, count);
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		const int64_t row = rows != nullptr ? (int64_t) __ldg(rows + i) : i;

		group_ids[i] = string_find_or_insert(keys, strings, table, row);
	}
}

/*
 * Growth: insert ids [0, ngroups) into a table whose slots are all EMPTY,
 * each at the home of its stored hash.  The groups are distinct, so only
 * an empty slot has to be found.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
string_rebuild_slots_kernel(const GaDevStrings strings, const GaDevTable table,
							int64_t ngroups)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t g = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 g < ngroups; g += stride)
	{
		int64_t		slot = (int64_t) (strings.hashes[g] & (uint64_t) table.slot_mask);

		while (atomicCAS((int *) &table.slots[slot], GA_SLOT_EMPTY, (int) g) != GA_SLOT_EMPTY)
			slot = (slot + 1) & table.slot_mask;
	}
}

/* Set the counters of a table with string keys (one thread). */
__global__ void
string_reset_control_kernel(GaDevControl *control, int64_t ngroups, int64_t heap_used)
{
	control->ngroups = (unsigned long long) ngroups;
	control->heap_used = (unsigned long long) heap_used;
	control->overflow = 0;
	control->heap_overflow = 0;
}

/* ends[g] = group g's length of string key s, widened for the prefix sum. */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
string_lengths_kernel(const uint32_t *lens, long long *ends, int64_t ngroups)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t g = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 g < ngroups; g += stride)
		ends[g] = (long long) lens[g];
}

/* Copy every group's bytes of one string key to its place in group order. */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
string_gather_kernel(const unsigned char *heap, const uint32_t *lens,
					 const long long *offsets, const long long *ends, int64_t ngroups,
					 unsigned char *out)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t g = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 g < ngroups; g += stride)
	{
		const uint32_t len = lens[g];
		const unsigned char *src = heap + offsets[g];
		unsigned char *dst = out + (ends[g] - (long long) len);

		for (uint32_t i = 0; i < len; i++)
			dst[i] = src[i];
	}
}

/* ------------------------------------------------------------------------
 * Launches
 * ------------------------------------------------------------------------
 */

/* See gpu/kernels/hashagg.cuh. */
cudaError_t
ga_launch_string_group_ids(const GaDevKeys *keys, const GaDevStrings *strings,
						   const GaDevTable *table, int64_t nrows, const int32_t *rows,
						   const unsigned long long *count, int32_t *group_ids,
						   int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (nrows <= 0)
		return cudaSuccess;
	err = ga_grid_size((const void *) string_group_ids_kernel, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, nrows, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	string_group_ids_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*keys, *strings, *table,
																	   nrows, rows, count,
																	   group_ids);
	return cudaGetLastError();
}

/* See gpu/kernels/hashagg.cuh. */
cudaError_t
ga_launch_string_rebuild_slots(const GaDevStrings *strings, const GaDevTable *table,
							   int64_t ngroups, int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (ngroups <= 0)
		return cudaSuccess;
	err = ga_grid_size((const void *) string_rebuild_slots_kernel, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, ngroups, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	string_rebuild_slots_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*strings, *table,
																		   ngroups);
	return cudaGetLastError();
}

/* See gpu/kernels/hashagg.cuh. */
cudaError_t
ga_launch_string_reset_control(GaDevControl *control, int64_t ngroups, int64_t heap_used,
							   cudaStream_t stream)
{
	ga_clear_stale_error();
	string_reset_control_kernel<<<1, 1, 0, stream>>>(control, ngroups, heap_used);
	return cudaGetLastError();
}

/* See gpu/kernels/hashagg.cuh. */
cudaError_t
ga_string_ends(void *temp, size_t *temp_bytes, const GaDevStrings *strings, int s,
			   int64_t capacity, long long *ends, int64_t ngroups, int sm_count,
			   cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (ngroups > INT_MAX)
		return cudaErrorInvalidValue;
	if (temp == NULL)
		return cub::DeviceScan::InclusiveSum(NULL, *temp_bytes, ends, ends, (int) ngroups,
											 stream);
	if (ngroups <= 0)
		return cudaSuccess;
	err = ga_grid_size((const void *) string_lengths_kernel, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, ngroups, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	string_lengths_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(strings->lens +
																	 (int64_t) s * capacity,
																	 ends, ngroups);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	return cub::DeviceScan::InclusiveSum(temp, *temp_bytes, ends, ends, (int) ngroups, stream);
}

/* See gpu/kernels/hashagg.cuh. */
cudaError_t
ga_launch_string_gather(const GaDevStrings *strings, int s, int64_t capacity,
						const long long *offsets, const long long *ends, int64_t ngroups,
						unsigned char *out, int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (ngroups <= 0)
		return cudaSuccess;
	err = ga_grid_size((const void *) string_gather_kernel, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, ngroups, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	string_gather_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(strings->heap,
																	strings->lens +
																	(int64_t) s * capacity,
																	offsets, ends, ngroups,
																	out);
	return cudaGetLastError();
}
