/*-------------------------------------------------------------------------
 *
 * aggjoin_kernels.cu
 *	  The join-fed aggregation's device steps between the probe
 *	  (hashjoin_kernels.cu) and the aggregation kernels (hashagg_kernels.cu):
 *	  the scan that numbers the pairs and the gather that writes them as
 *	  rows of the aggregation's input.
 *
 * This is the two-pass output scheme of the GPU hash-join report (Gupta and
 * Murugavel, "Hash-Join Implementation on GPU"): a first pass (the probe)
 * counts each probe row's matches, a prefix sum gives every row its place
 * in the output, and a second pass writes the output without any atomics
 * or overflow, as He et al. ("Relational joins on graphics processors",
 * section 4: count, scan, write) do for their joins.  Here the second pass
 * is split into pieces of at most batch_rows pairs, so that a skewed key
 * never needs more memory than a batch, and it is driven by output rows:
 * a thread takes pair j, finds its probe row by binary search in the
 * scanned counts, and its build row as the (j - start of the row)-th of
 * the row's key-sorted range, so the work is even however skewed the
 * matches are.
 *
 * Scan: cub::DeviceScan::InclusiveSum over the uint32 counts seen through
 * a transform iterator that widens them to 64 bits and turns a LEFT join's
 * 0 into 1, so the pair counts are never stored: probe, scan and gather
 * are the only passes over the probe rows.
 *
 * Gather: one thread per output row in a grid-stride loop whose steps keep
 * every warp on 32 consecutive rows, so that a column's validity bits for
 * those rows are one __ballot_sync and one 32-bit store by lane 0 (bit i of
 * byte i / 8 is row i, as in GaColumn, on a little-endian device).  The
 * column descriptions are staged in shared memory once per block.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin_kernels.cuh"

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <limits.h>

/* A probe row's pair count: its matches, or one null pair for LEFT. */
struct PairCount
{
	int			left;

	__host__ __device__ unsigned long long
	operator() (uint32_t count) const
	{
		return count == 0 && left ? 1ULL : (unsigned long long) count;
	}
};

/*
 * Write pairs [start, start + npairs) as rows [0, npairs) of every column.
 * Pair j belongs to the first probe row r with pair_ends[r] > j.
 */
__global__ void __launch_bounds__(GA_AGGJOIN_BLOCK_THREADS)
aggjoin_gather_kernel(const GaDevGatherColumn *columns, int ncolumns,
					  const unsigned long long *pair_ends, const uint32_t *first,
					  const uint32_t *count, int64_t nprobe, const uint32_t *sorted_rows,
					  int64_t start, int64_t npairs)
{
	extern __shared__ GaDevGatherColumn shared_columns[];
	const int	lane = threadIdx.x & 31;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int k = threadIdx.x; k < ncolumns; k += blockDim.x)
		shared_columns[k] = columns[k];
	__syncthreads();

	/* base: the warp's first row; the same in every lane, so loops agree */
	for (int64_t base = (int64_t) blockIdx.x * blockDim.x + threadIdx.x - lane;
		 base < npairs; base += stride)
	{
		const int64_t i = base + lane;
		const bool	active = i < npairs;
		int64_t		r = 0;
		int64_t		b = -1;		/* the build row; -1: none (LEFT) */

		if (active)
		{
			unsigned long long j = (unsigned long long) (start + i);
			int64_t		lo = 0,
						hi = nprobe;

			while (lo < hi)
			{
				int64_t		mid = lo + (hi - lo) / 2;

				if (__ldg(pair_ends + mid) <= j)
					lo = mid + 1;
				else
					hi = mid;
			}
			r = lo;
			if (__ldg(count + r) > 0)
			{
				unsigned long long row_start = r > 0 ? __ldg(pair_ends + r - 1) : 0ULL;

				b = __ldg(sorted_rows + __ldg(first + r) + (j - row_start));
			}
		}

		for (int k = 0; k < ncolumns; k++)
		{
			const GaDevGatherColumn *col = &shared_columns[k];
			const int64_t src = col->from_build ? b : r;
			bool		valid = active && src >= 0;

			if (valid && col->src_validity != nullptr)
				valid = (__ldg(col->src_validity + (src >> 3)) >> (src & 7)) & 1;
			if (valid && col->dst_values != nullptr)
			{
				switch (col->width)
				{
					case 1:
						((uint8_t *) col->dst_values)[i] =
							__ldg((const unsigned char *) col->src_values + src);
						break;
					case 2:
						((uint16_t *) col->dst_values)[i] =
							__ldg((const unsigned short *) col->src_values + src);
						break;
					case 4:
						((uint32_t *) col->dst_values)[i] =
							__ldg((const unsigned int *) col->src_values + src);
						break;
					case 8:
						((unsigned long long *) col->dst_values)[i] =
							__ldg((const unsigned long long *) col->src_values + src);
						break;
					default:
						break;
				}
			}
			if (col->dst_validity != nullptr)
			{
				unsigned int word = __ballot_sync(0xffffffffu, valid);

				if (lane == 0)
					((unsigned int *) col->dst_validity)[base >> 5] = word;
			}
		}
	}
}

/* Inclusive prefix sum of the pair counts (LEFT: 0 counts as 1), 64-bit. */
cudaError_t
ga_aggjoin_pair_ends(void *temp, size_t *temp_bytes, const uint32_t *count,
					 unsigned long long *pair_ends, int64_t n, int left,
					 cudaStream_t stream)
{
	PairCount	op = {left};
	thrust::transform_iterator<PairCount, const uint32_t *, unsigned long long> pairs(count, op);

	return cub::DeviceScan::InclusiveSum(temp, *temp_bytes, pairs, pair_ends, n, stream);
}

/*
 * Launch the gather of npairs pairs: as many blocks as fit the device at
 * once (occupancy calculator, with the staged columns' shared memory), but
 * no more than there are blocks of rows.
 */
cudaError_t
ga_launch_aggjoin_gather(const GaDevGatherColumn *columns, int ncolumns,
						 const unsigned long long *pair_ends, const uint32_t *first,
						 const uint32_t *count, int64_t nprobe, const uint32_t *sorted_rows,
						 int64_t start, int64_t npairs, int sm_count, cudaStream_t stream)
{
	size_t		shared = (size_t) (ncolumns > 0 ? ncolumns : 1) * sizeof(GaDevGatherColumn);
	int			per_sm = 0;
	int64_t		blocks;
	cudaError_t err;

	if (npairs <= 0 || ncolumns <= 0)
		return cudaSuccess;		/* nothing to write (COUNT_ROWS only) */
	err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, aggjoin_gather_kernel,
														 GA_AGGJOIN_BLOCK_THREADS, shared);
	if (err != cudaSuccess)
		return err;
	if (per_sm < 1)
		per_sm = 1;				/* the launch will report why it cannot run */
	blocks = (npairs + GA_AGGJOIN_BLOCK_THREADS - 1) / GA_AGGJOIN_BLOCK_THREADS;
	if (blocks > (int64_t) (sm_count > 0 ? sm_count : 1) * per_sm)
		blocks = (int64_t) (sm_count > 0 ? sm_count : 1) * per_sm;
	if (blocks > INT_MAX)
		blocks = INT_MAX;
	(void) cudaGetLastError();	/* clear a stale, already handled error */
	aggjoin_gather_kernel<<<(int) blocks, GA_AGGJOIN_BLOCK_THREADS, shared, stream>>>(
		columns, ncolumns, pair_ends, first, count, nprobe, sorted_rows, start, npairs);
	return cudaGetLastError();
}
