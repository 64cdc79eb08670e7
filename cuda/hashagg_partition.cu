/*-------------------------------------------------------------------------
 *
 * hashagg_partition.cu
 *	  The first batch's probe (key ranges and a group count sketch) and the
 *	  partitioned strategy's hash partitioning.
 *
 * Probe.  Before the first batch of an auto (or perfect) aggregation, one
 * kernel reads a sample of it: chunks of GA_PROBE_CHUNK consecutive rows
 * spread evenly over the batch, GA_PROBE_ROWS rows at most (all of a small
 * batch).  It records each key's min/max and whether it is ever null, for a
 * direct index (perfect), and a HyperLogLog sketch of the key tuples (the
 * hash the group table uses), from which the host estimates the groups
 * (the Rapids report samples for the same purpose).  The sample costs a few
 * percent of a large batch.
 *
 * Partitioning (Wu et al.'s partition-based group-by, section 4.3).  Rows
 * are partitioned by the top pbits bits of their key hash, in three
 * kernels: a histogram, a one-block scan of it, and a scatter of row
 * numbers into place.  The two-phase kernels then run over the rows in
 * partition order.  Since a key's home slot in the global table is the top
 * bits of the same hash, the blocks working on a stretch of the permutation
 * touch one small run of slots, and the group ids inserted there are handed
 * out close together, so the table's slots, keys and accumulators that a
 * moment of work needs stay in the L2 cache even when the whole table is
 * far larger.  Rows of one partition with equal keys end up close, which
 * the phase 2 block caches turn into shared-memory atomics.  Counters are
 * bumped in shared memory for the partitions a block meets first (the hot
 * ones of skewed keys) and once per group of warp lanes with the same
 * partition for the others (labeled_partition), so few or skewed
 * partitions do not serialise on a handful of global counters.
 *
 *-------------------------------------------------------------------------
 */
#include "hashagg_device.cuh"

/* ------------------------------------------------------------------------
 * Probe
 * ------------------------------------------------------------------------
 */

/* Empty the probe's result (one block). */
__global__ void
probe_init_kernel(GaDevProbe *probe)
{
	for (int i = threadIdx.x; i < GA_HLL_REGISTERS; i += blockDim.x)
		probe->hll[i] = 0;
	if (threadIdx.x < GA_PERFECT_MAX_KEYS)
	{
		probe->min[threadIdx.x] = LLONG_MAX;
		probe->max[threadIdx.x] = LLONG_MIN;
		probe->has_null[threadIdx.x] = 0;
	}
	if (threadIdx.x == 0)
		probe->rows = 0;
}

/*
 * Sample chunks of 2^chunk_bits rows every `step` rows: min/max/nulls of the
 * first nrange keys, HyperLogLog registers of every row's key hash.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
probe_kernel(const GaDevKeys keys, int64_t nrows, int chunk_bits, int64_t step, int nrange,
			 GaDevProbe *probe)
{
	__shared__ unsigned int hll[GA_HLL_REGISTERS];
	__shared__ long long block_min[GA_PERFECT_MAX_KEYS];
	__shared__ long long block_max[GA_PERFECT_MAX_KEYS];
	__shared__ unsigned int block_null[GA_PERFECT_MAX_KEYS];
	const int64_t chunk = INT64_C(1) << chunk_bits;
	const int64_t nchunks = (nrows + step - 1) / step;
	const int64_t total = nchunks * chunk;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	long long	lo[GA_PERFECT_MAX_KEYS];
	long long	hi[GA_PERFECT_MAX_KEYS];
	unsigned int nulls = 0;
	unsigned long long sampled = 0;

	for (int i = threadIdx.x; i < GA_HLL_REGISTERS; i += blockDim.x)
		hll[i] = 0;
	if (threadIdx.x < GA_PERFECT_MAX_KEYS)
	{
		block_min[threadIdx.x] = LLONG_MAX;
		block_max[threadIdx.x] = LLONG_MIN;
		block_null[threadIdx.x] = 0;
	}
#pragma unroll
	for (int k = 0; k < GA_PERFECT_MAX_KEYS; k++)
	{
		lo[k] = LLONG_MAX;
		hi[k] = LLONG_MIN;
	}
	__syncthreads();

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride)
	{
		const int64_t row = (i >> chunk_bits) * step + (i & (chunk - 1));
		uint64_t	h;

		if (row >= nrows)
			continue;
		sampled++;
#pragma unroll
		for (int k = 0; k < GA_PERFECT_MAX_KEYS; k++)
		{
			if (k < nrange)
			{
				const GaDevColumn &column = keys.columns[k];

				if (row_is_null(column.validity, row))
					nulls |= 1u << k;
				else
				{
					long long	v = load_int(column.values, column.type, row);

					lo[k] = min(lo[k], v);
					hi[k] = max(hi[k], v);
				}
			}
		}
		h = hash_row(keys, row);
		{
			unsigned int *reg = &hll[h >> (64 - GA_HLL_BITS)];
			const unsigned int rank =
				(unsigned int) __clzll((long long) ((h << GA_HLL_BITS) |
													(1ULL << (GA_HLL_BITS - 1)))) + 1;

			/*
			 * A register only grows, and soon stops growing: read it first,
			 * so that few keys (every lane on one register) do not serialise
			 * on its atomic.
			 */
			if (*(volatile unsigned int *) reg < rank)
				atomicMax(reg, rank);
		}
	}

	/* each warp's min/max first: the block's lanes would all hit one word */
#pragma unroll
	for (int k = 0; k < GA_PERFECT_MAX_KEYS; k++)
	{
		if (k < nrange)
		{
			for (int offset = 16; offset > 0; offset >>= 1)
			{
				lo[k] = min(lo[k], __shfl_down_sync(0xffffffffu, lo[k], offset));
				hi[k] = max(hi[k], __shfl_down_sync(0xffffffffu, hi[k], offset));
			}
			if ((threadIdx.x & 31) == 0 && lo[k] != LLONG_MAX)
				atomicMin(&block_min[k], lo[k]);
			if ((threadIdx.x & 31) == 0 && hi[k] != LLONG_MIN)
				atomicMax(&block_max[k], hi[k]);
		}
	}
	if (nulls != 0)
		atomicOr(&block_null[0], nulls);
	for (int offset = 16; offset > 0; offset >>= 1)
		sampled += __shfl_down_sync(0xffffffffu, sampled, offset);
	if ((threadIdx.x & 31) == 0 && sampled > 0)
		atomicAdd(&probe->rows, sampled);
	__syncthreads();

	for (int i = threadIdx.x; i < GA_HLL_REGISTERS; i += blockDim.x)
		if (hll[i] > probe->hll[i])
			atomicMax(&probe->hll[i], hll[i]);
	if (threadIdx.x < (unsigned int) nrange)
	{
		const int	k = threadIdx.x;

		if (block_min[k] != LLONG_MAX)
			atomicMin(&probe->min[k], block_min[k]);
		if (block_max[k] != LLONG_MIN)
			atomicMax(&probe->max[k], block_max[k]);
		if ((block_null[0] >> k) & 1)
			atomicOr(&probe->has_null[k], 1u);
	}
}

/* ------------------------------------------------------------------------
 * Partitioning
 * ------------------------------------------------------------------------
 */

/* A row's partition: the top pbits bits of its key hash. */
__device__ __forceinline__ unsigned int
row_partition(const GaDevKeys &keys, int64_t row, int pbits)
{
	return (unsigned int) (hash_row(keys, row) >> (64 - pbits));
}

/*
 * Count or place one row of a partition that missed the block's cache of
 * hot partitions: the warp's lanes with the same partition share one
 * atomic.  Returns the row's place (for the scatter).
 */
__device__ __forceinline__ unsigned int
partition_add_global(unsigned int *counters, unsigned int p)
{
	cg::coalesced_group active = cg::coalesced_threads();
	cg::coalesced_group same = cg::labeled_partition(active, p);
	unsigned int place = 0;

	if (same.thread_rank() == 0)
		place = atomicAdd(&counters[p], same.num_threads());
	return same.shfl(place, 0) + same.thread_rank();
}

/*
 * hist[p] += rows of partition p.  A block counts the partitions it meets
 * first (the hot ones of skewed keys) in shared memory and adds them to
 * hist at its end, so that few or skewed partitions do not serialise on a
 * handful of global counters.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
partition_count_kernel(const GaDevKeys keys, int64_t nrows, int pbits, unsigned int *hist)
{
	__shared__ long long tags[1 << GA_PART_CACHE_BITS];
	__shared__ unsigned int counts[1 << GA_PART_CACHE_BITS];
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int s = threadIdx.x; s < (1 << GA_PART_CACHE_BITS); s += blockDim.x)
	{
		tags[s] = GA_CACHE_EMPTY;
		counts[s] = 0;
	}
	__syncthreads();
	for (int64_t row = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; row < nrows;
		 row += stride)
	{
		unsigned int p = row_partition(keys, row, pbits);
		int			entry = cache_entry(tags, GA_PART_CACHE_BITS, p);

		if (entry >= 0)
			atomicAdd(&counts[entry], 1u);
		else
			(void) partition_add_global(hist, p);
	}
	__syncthreads();
	for (int s = threadIdx.x; s < (1 << GA_PART_CACHE_BITS); s += blockDim.x)
		if (tags[s] != GA_CACHE_EMPTY && counts[s] > 0)
			atomicAdd(&hist[tags[s]], counts[s]);
}

/*
 * Exclusive scan of hist into cursor (one block of GA_GPU_BLOCK_THREADS
 * threads, each summing a run of npart / threads partitions).
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
partition_scan_kernel(const unsigned int *hist, unsigned int *cursor, int npart)
{
	__shared__ unsigned int sums[GA_GPU_BLOCK_THREADS];
	const int	per_thread = (npart + blockDim.x - 1) / blockDim.x;
	const int	begin = threadIdx.x * per_thread;
	const int	end = begin + per_thread < npart ? begin + per_thread : npart;
	unsigned int sum = 0;

	for (int p = begin; p < end; p++)
		sum += hist[p];
	sums[threadIdx.x] = sum;
	__syncthreads();
	for (int offset = 1; offset < (int) blockDim.x; offset <<= 1)
	{
		unsigned int add = threadIdx.x >= (unsigned int) offset ? sums[threadIdx.x - offset] : 0;

		__syncthreads();
		sums[threadIdx.x] += add;
		__syncthreads();
	}
	sum = sums[threadIdx.x] - sum;	/* exclusive prefix of this thread's run */
	for (int p = begin; p < end; p++)
	{
		cursor[p] = sum;
		sum += hist[p];
	}
}

/*
 * perm[cursor[p]++] = row, for every row of partition p.  Tile by tile, a
 * block ranks the rows of the partitions it caches in shared memory, then
 * reserves each cached partition's places with one global atomic; the
 * other rows take theirs a warp at a time.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
partition_scatter_kernel(const GaDevKeys keys, int64_t nrows, int pbits,
						 unsigned int *cursor, int32_t *perm)
{
	__shared__ long long tags[1 << GA_PART_CACHE_BITS];
	__shared__ unsigned int counts[1 << GA_PART_CACHE_BITS];
	__shared__ unsigned int bases[1 << GA_PART_CACHE_BITS];
	const int64_t tile = (int64_t) blockDim.x * GA_ITEMS;

	for (int s = threadIdx.x; s < (1 << GA_PART_CACHE_BITS); s += blockDim.x)
	{
		tags[s] = GA_CACHE_EMPTY;
		counts[s] = 0;
	}
	__syncthreads();

	/* the loop runs the same number of times for the whole block */
	for (int64_t first = (int64_t) blockIdx.x * tile; first < nrows;
		 first += (int64_t) gridDim.x * tile)
	{
		int			entry[GA_ITEMS];
		unsigned int rank[GA_ITEMS];

#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			const int64_t row = first + (int64_t) j * blockDim.x + threadIdx.x;

			entry[j] = -1;
			rank[j] = 0;
			if (row < nrows)
			{
				unsigned int p = row_partition(keys, row, pbits);

				entry[j] = cache_entry(tags, GA_PART_CACHE_BITS, p);
				if (entry[j] >= 0)
					rank[j] = atomicAdd(&counts[entry[j]], 1u);
				else
					perm[partition_add_global(cursor, p)] = (int32_t) row;
			}
		}
		__syncthreads();
		for (int s = threadIdx.x; s < (1 << GA_PART_CACHE_BITS); s += blockDim.x)
			if (counts[s] > 0)
				bases[s] = atomicAdd(&cursor[tags[s]], counts[s]);
		__syncthreads();
#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
			if (entry[j] >= 0)
				perm[bases[entry[j]] + rank[j]] =
					(int32_t) (first + (int64_t) j * blockDim.x + threadIdx.x);
		__syncthreads();
		for (int s = threadIdx.x; s < (1 << GA_PART_CACHE_BITS); s += blockDim.x)
		{
			tags[s] = GA_CACHE_EMPTY;
			counts[s] = 0;
		}
		__syncthreads();
	}
}

/* ------------------------------------------------------------------------
 * Launch functions
 * ------------------------------------------------------------------------
 */

/* Launch the probe of a batch's sample. */
cudaError_t
ga_launch_probe(const GaDevKeys *keys, int64_t nrows, int nrange, GaDevProbe *probe,
				int sm_count, cudaStream_t stream)
{
	int			chunk_bits = GA_PROBE_CHUNK_BITS;
	int64_t		step;
	int64_t		sampled;
	int			grid;
	cudaError_t err;

	if (nrows <= GA_PROBE_ROWS)
	{
		/* one chunk of the whole batch (and more): every row, in order */
		while ((INT64_C(1) << chunk_bits) < nrows)
			chunk_bits++;
		step = INT64_C(1) << chunk_bits;
		sampled = nrows;
	}
	else
	{
		step = nrows / (GA_PROBE_ROWS >> chunk_bits);
		sampled = ((nrows + step - 1) / step) << chunk_bits;
	}
	ga_clear_stale_error();
	probe_init_kernel<<<1, GA_GPU_BLOCK_THREADS, 0, stream>>>(probe);
	err = cudaGetLastError();
	if (err != cudaSuccess || nrows <= 0)
		return err;
	/*
	 * Few blocks, as each merges its registers at its end, but enough (four
	 * per multiprocessor, about eight rows a thread) that the sample's
	 * loads are in flight together rather than one after another.
	 */
	err = ga_grid_size((const void *) probe_kernel, GA_GPU_BLOCK_THREADS, 0, sm_count,
					   sampled, 8 * GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	if (grid > 4 * sm_count && sm_count > 0)
		grid = 4 * sm_count;
	probe_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*keys, nrows, chunk_bits, step,
														   nrange, probe);
	return cudaGetLastError();
}

/* Launch the three partitioning kernels. */
cudaError_t
ga_launch_partition(const GaDevKeys *keys, int64_t nrows, int pbits, unsigned int *hist,
					unsigned int *cursor, int32_t *perm, int sm_count, cudaStream_t stream)
{
	const int	npart = 1 << pbits;
	int			grid;
	cudaError_t err;

	if (nrows <= 0)
		return cudaSuccess;
	err = cudaMemsetAsync(hist, 0, sizeof(unsigned int) * npart, stream);
	if (err != cudaSuccess)
		return err;
	err = ga_grid_size((const void *) partition_count_kernel, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, nrows, 16 * GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	partition_count_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*keys, nrows, pbits, hist);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	partition_scan_kernel<<<1, GA_GPU_BLOCK_THREADS, 0, stream>>>(hist, cursor, npart);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	partition_scatter_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*keys, nrows, pbits,
																	   cursor, perm);
	return cudaGetLastError();
}
