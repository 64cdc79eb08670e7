/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashjoin.cu
 *	  GPU hash join: the CUB steps of the build, the table kernels and their
 *	  launch functions.
 *
 * Build (gpu/hashjoin.cu drives it):
 *
 * 1. cub::DeviceRadixSort::SortPairs sorts the (key, row) pairs by the key's
 *	  bits as uint64.  CUB's radix sort is stable, so rows with equal keys
 *	  keep the order they were given, and the result is the same on every
 *	  run and the same as the CPU device's (cpu/hashjoin.c): Wu et al.,
 *	  "Efficiently Processing Joins and Grouped Aggregations on GPUs",
 *	  sections 3.1 and 4.1.4, use radix-sort-based partitioning for exactly
 *	  these properties (deterministic, immune to skew, lookup by index).
 * 2. cub::DeviceRunLengthEncode::Encode gives the distinct keys and how
 *	  many rows each has; cub::DeviceScan::ExclusiveSum turns the counts
 *	  into the offset of each key's first sorted row.
 * 3. join_insert_kernel puts the index of every distinct key into an
 *	  open-addressing table: atomicCAS claims an empty slot, linear probing
 *	  moves on from a taken one.  Keys are distinct, so an insert never
 *	  compares keys; the table is at least twice the keys, so runs stay
 *	  short.
 *
 * Probe (join_probe_kernel): one thread per probe row hashes the key, walks
 * the slots until the key or an empty slot, and writes (first, count), so
 * the answer is one pair per row whatever the duplicates: the build/probe
 * split of the cuckoo hash join report, with the matches counted rather
 * than chained, as that report says an inner join of unknown output size
 * needs.  The block
 * sums its counts (cub::BlockReduce) and adds them to the total with one
 * atomic.
 *
 * Grid-stride loops with 64-bit indices; grids from the occupancy
 * calculator for the device at hand.
 *
 *-------------------------------------------------------------------------
 */
#include "hashjoin.cuh"
#include "gpuagg_hash.h"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include <limits.h>

/* ------------------------------------------------------------------------
 * Kernels
 * ------------------------------------------------------------------------
 */

/* Insert distinct keys [0, ndistinct) by atomicCAS on empty slots. */
__global__ void __launch_bounds__(GA_JOIN_BLOCK_THREADS)
join_insert_kernel(GaDevJoinTable table, int64_t ndistinct)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t d = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; d < ndistinct;
		 d += stride)
	{
		unsigned long long pos = ga_mix64(table.keys[d]) & (unsigned long long) table.slot_mask;

		while (atomicCAS(&table.slots[pos], GA_JOIN_SLOT_EMPTY, (unsigned int) d) !=
			   GA_JOIN_SLOT_EMPTY)
			pos = (pos + 1) & (unsigned long long) table.slot_mask;
	}
}

/* Answer (first, count) for every probe row and add the counts to *total. */
__global__ void __launch_bounds__(GA_JOIN_BLOCK_THREADS)
join_probe_kernel(GaDevJoinTable table, const unsigned long long *keys,
				  const uint8_t *validity, int64_t nrows, uint32_t *first,
				  uint32_t *count, unsigned long long *total)
{
	typedef cub::BlockReduce<unsigned long long, GA_JOIN_BLOCK_THREADS> BlockSum;
	__shared__ typename BlockSum::TempStorage reduce_storage;
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;
	unsigned long long mask = (unsigned long long) table.slot_mask;
	unsigned long long local = 0;
	unsigned long long block_total;

	for (int64_t row = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; row < nrows;
		 row += stride)
	{
		uint32_t	f = 0;
		uint32_t	c = 0;

		if (validity == nullptr || ((__ldg(validity + (row >> 3)) >> (row & 7)) & 1))
		{
			unsigned long long key = __ldg(keys + row);

			for (unsigned long long pos = ga_mix64(key) & mask;; pos = (pos + 1) & mask)
			{
				uint32_t	d = __ldg(table.slots + pos);

				if (d == GA_JOIN_SLOT_EMPTY)
					break;
				if (__ldg(table.keys + d) == key)
				{
					f = __ldg(table.offsets + d);
					c = __ldg(table.counts + d);
					break;
				}
			}
		}
		first[row] = f;
		count[row] = c;
		local += c;
	}
	block_total = BlockSum(reduce_storage).Sum(local);
	if (threadIdx.x == 0 && block_total != 0)
		atomicAdd(total, block_total);
}

/* ------------------------------------------------------------------------
 * CUB steps and launch functions (host)
 * ------------------------------------------------------------------------
 */

/* Sort the pairs with CUB's stable radix sort over all 64 key bits. */
cudaError_t
ga_join_sort_pairs(void *temp, size_t *temp_bytes, unsigned long long *keys[2],
				   uint32_t *rows[2], int64_t n, int *key_current, int *row_current,
				   cudaStream_t stream)
{
	cub::DoubleBuffer<unsigned long long> key_buffers(keys[0], keys[1]);
	cub::DoubleBuffer<uint32_t> row_buffers(rows[0], rows[1]);
	cudaError_t err;

	err = cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, key_buffers, row_buffers, n,
										  0, 64, stream);
	/* CUB sets the selectors on the host before it returns. */
	*key_current = key_buffers.selector;
	*row_current = row_buffers.selector;
	return err;
}

/* Encode the runs of equal sorted keys (n <= INT_MAX). */
cudaError_t
ga_join_run_lengths(void *temp, size_t *temp_bytes, const unsigned long long *sorted_keys,
					unsigned long long *unique, uint32_t *counts, long long *num_runs,
					int64_t n, cudaStream_t stream)
{
	if (n > INT_MAX)
		return cudaErrorInvalidValue;
	return cub::DeviceRunLengthEncode::Encode(temp, *temp_bytes, sorted_keys, unique, counts,
											  num_runs, (int) n, stream);
}

/* Exclusive prefix sum of the counts. */
cudaError_t
ga_join_exclusive_sum(void *temp, size_t *temp_bytes, const uint32_t *counts,
					  uint32_t *offsets, int64_t n, cudaStream_t stream)
{
	return cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, counts, offsets, n, stream);
}

/*
 * Grid size for `kernel`: as many blocks as can be resident on the device
 * (occupancy calculator), but no more than there are blocks of items.
 */
static cudaError_t
join_grid_size(const void *kernel, int sm_count, int64_t items, int *grid)
{
	int			per_sm = 0;
	int64_t		resident;
	int64_t		blocks;
	cudaError_t err;

	err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
														 GA_JOIN_BLOCK_THREADS, 0);
	if (err != cudaSuccess)
		return err;
	if (per_sm < 1)
		per_sm = 1;				/* the launch will report why it cannot run */
	resident = (int64_t) (sm_count > 0 ? sm_count : 1) * per_sm;
	blocks = (items + GA_JOIN_BLOCK_THREADS - 1) / GA_JOIN_BLOCK_THREADS;
	if (blocks > resident)
		blocks = resident;
	if (blocks < 1)
		blocks = 1;
	if (blocks > INT_MAX)
		blocks = INT_MAX;
	*grid = (int) blocks;
	return cudaSuccess;
}

/* Launch the insertion of the distinct keys. */
cudaError_t
ga_launch_join_insert(const GaDevJoinTable *table, int64_t ndistinct, int sm_count,
					  cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (ndistinct <= 0)
		return cudaSuccess;
	err = join_grid_size((const void *) join_insert_kernel, sm_count, ndistinct, &grid);
	if (err != cudaSuccess)
		return err;
	(void) cudaGetLastError();	/* clear a stale, already handled error */
	join_insert_kernel<<<grid, GA_JOIN_BLOCK_THREADS, 0, stream>>>(*table, ndistinct);
	return cudaGetLastError();
}

/* Launch the probe of nrows rows. */
cudaError_t
ga_launch_join_probe(const GaDevJoinTable *table, const unsigned long long *keys,
					 const uint8_t *validity, int64_t nrows, uint32_t *first,
					 uint32_t *count, unsigned long long *total, int sm_count,
					 cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (nrows <= 0)
		return cudaSuccess;
	err = join_grid_size((const void *) join_probe_kernel, sm_count, nrows, &grid);
	if (err != cudaSuccess)
		return err;
	(void) cudaGetLastError();	/* clear a stale, already handled error */
	join_probe_kernel<<<grid, GA_JOIN_BLOCK_THREADS, 0, stream>>>(*table, keys, validity,
																 nrows, first, count, total);
	return cudaGetLastError();
}
