/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashagg_partition.cu
 *	  The first batch's probe (key ranges and a group count sketch) and the
 *	  partitioned strategy's hash partitioning.
 *
 * Probe.  Before the first batch of an auto (or perfect) aggregation, one
 * kernel reads a sample of it: chunks of GA_PROBE_CHUNK consecutive rows
 * spread evenly over the batch, GA_PROBE_ROWS rows at most (all of a small
 * batch).  It records each key's min/max and whether it is ever null, for a
 * direct index (perfect), and a HyperLogLog sketch of the key tuples (the
 * hash the group table uses), from which the host estimates the groups
 * (the Rapids report samples for the same purpose).  It also counts the
 * sampled rows whose key tuple hashes as the previous row's of their chunk
 * (a 64-bit hash: equal tuples, but for a collision that only shifts the
 * count), whose share tells the launch tuner how often nearby rows update
 * one entry (ga_tune_contention).  The previous row is the neighbour lane's
 * row, in the cache lines the sample reads anyway.  The sample costs a few
 * percent of a large batch.
 *
 * Partitioning (Wu et al.'s partition-based group-by, section 4.3).  Rows
 * are partitioned by the top pbits bits of their key hash (at most
 * 2^GA_PART_MAX_BITS partitions, so that a block counts all of them in
 * shared memory), in three kernels: each block counts its own stretch of
 * rows per partition, one block scans the counts, and each block scatters
 * its row numbers into the places it reserved, one global atomic per block
 * and partition; it sorts each tile of its rows by partition in shared
 * memory first, so that each partition's rows of a tile are written as one
 * run (at most 2^8 partitions keep the runs long), with their packed keys
 * and (when no value has a null) the aggregates' input values, which the
 * chunks then read in order.  A warp whose lanes all
 * have one partition (skewed keys) counts them with one shared-memory
 * atomic.  With keys that pack into 64
 * bits, the scatter also writes each row's packed key, so that the chunks
 * read keys in order rather than gathering them.  gpu/kernels/hashagg_chunks.cu then aggregates the
 * partitions chunk by chunk.  Since a key's home slot in the global table
 * is the top bits of the same hash, the chunks in flight at one moment
 * touch one small run of the table's slots, which stays in the L2 cache
 * even when the whole table is far larger.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu/kernels/hashagg_device.cuh"

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
	{
		probe->rows = 0;
		probe->pairs = 0;
		probe->repeats = 0;
	}
}

/*
 * Sample chunks of 2^chunk_bits rows every `step` rows: min/max/nulls of the
 * first nrange keys, HyperLogLog registers of every row's key hash, and the
 * rows after another of their chunk (pairs) whose key hash is that row's
 * (repeats).
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
	unsigned long long pairs = 0;
	unsigned long long repeats = 0;

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
		if ((i & (chunk - 1)) != 0)
		{
			pairs++;
			repeats += hash_row(keys, row - 1) == h;
		}
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
	{
		sampled += __shfl_down_sync(0xffffffffu, sampled, offset);
		pairs += __shfl_down_sync(0xffffffffu, pairs, offset);
		repeats += __shfl_down_sync(0xffffffffu, repeats, offset);
	}
	if ((threadIdx.x & 31) == 0 && sampled > 0)
		atomicAdd(&probe->rows, sampled);
	if ((threadIdx.x & 31) == 0 && pairs > 0)
		atomicAdd(&probe->pairs, pairs);
	if ((threadIdx.x & 31) == 0 && repeats > 0)
		atomicAdd(&probe->repeats, repeats);
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
 * counters[p] += 1 for this lane, returning the old value: its place.  When
 * all the warp's active lanes have the same partition (skewed keys) they
 * share one atomic, so they do not serialise on one shared word.
 */
__device__ __forceinline__ unsigned int
claim_place(unsigned int *counters, unsigned int p)
{
	const unsigned int active = __activemask();
	const int	leader = __ffs(active) - 1;
	const unsigned int lane = threadIdx.x & 31;

	if (__all_sync(active, p == __shfl_sync(active, p, leader)))
	{
		unsigned int base = 0;

		if ((int) lane == leader)
			base = atomicAdd(&counters[p], (unsigned int) __popc(active));
		return __shfl_sync(active, base, leader) + __popc(active & ((1u << lane) - 1));
	}
	return atomicAdd(&counters[p], 1u);
}

/* The rows [*first, *end) that block `block` of the partitioning takes. */
__device__ __forceinline__ void
block_rows(const GaDevPartitions &parts, int64_t nrows, int64_t *first, int64_t *end)
{
	*first = (int64_t) blockIdx.x * parts.rows_per_block;
	*end = *first + parts.rows_per_block < nrows ? *first + parts.rows_per_block : nrows;
}

/*
 * Count the rows of each partition among the block's rows in shared
 * memory; record the counts per block (for the scatter) and add them to
 * hist.  One global atomic per block and partition met.
 */
__global__ void __launch_bounds__(GA_PART_THREADS)
partition_count_kernel(const GaDevKeys keys, int64_t nrows, const GaDevPartitions parts)
{
	__shared__ unsigned int counts[1 << GA_PART_MAX_BITS];
	const int	npart = 1 << parts.pbits;
	int64_t		first,
				end;

	for (int p = threadIdx.x; p < npart; p += blockDim.x)
		counts[p] = 0;
	__syncthreads();
	block_rows(parts, nrows, &first, &end);
	for (int64_t row = first + threadIdx.x; row < end; row += blockDim.x)
		(void) claim_place(counts, row_partition(keys, row, parts.pbits));
	__syncthreads();
	for (int p = threadIdx.x; p < npart; p += blockDim.x)
	{
		const unsigned int c = counts[p];

		parts.block_counts[(int64_t) blockIdx.x * npart + p] = c;
		if (c > 0)
			atomicAdd(&parts.hist[p], c);
	}
}

/*
 * Exclusive prefix sums of counts[0 .. n) into starts, by the block's first
 * n threads (n <= blockDim.x, whose warps are whole): thread i reads
 * counts[i] and writes starts[i] only, so a thread may fill its own count
 * just before and read its own start just after without a barrier.  Every
 * thread of the block must call it (it synchronises the block); warp_sums
 * holds blockDim.x / 32 words, and a barrier must separate two calls
 * sharing it (the later call writes it while the earlier one may still
 * read it).
 */
__device__ __forceinline__ void
block_exclusive_scan(const unsigned int *counts, unsigned int *starts, int n,
					 unsigned int *warp_sums)
{
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	unsigned int v = (int) threadIdx.x < n ? counts[threadIdx.x] : 0;
	unsigned int inclusive = v;

	for (int offset = 1; offset < 32; offset <<= 1)
	{
		const unsigned int up = __shfl_up_sync(0xffffffffu, inclusive, offset);

		if (lane >= offset)
			inclusive += up;
	}
	if (lane == 31)
		warp_sums[warp] = inclusive;
	__syncthreads();
	if ((int) threadIdx.x < n)
	{
		unsigned int before = 0;

		for (int w = 0; w < warp; w++)
			before += warp_sums[w];
		starts[threadIdx.x] = before + inclusive - v;
	}
}

/*
 * Exclusive scans of the partition sizes (into begin and cursor) and of
 * their chunk counts (into chunk_first, with the total at [npart]), by one
 * block of GA_GPU_BLOCK_THREADS threads, thread p taking partition p.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
partition_scan_kernel(const GaDevPartitions parts)
{
	__shared__ unsigned int chunks[1 << GA_PART_MAX_BITS];
	__shared__ unsigned int warp_sums[GA_GPU_BLOCK_THREADS / 32];
	const int	npart = 1 << parts.pbits;
	const int	p = threadIdx.x;

	static_assert((1 << GA_PART_MAX_BITS) <= GA_GPU_BLOCK_THREADS,
				  "the scan's block has a thread per partition");
	if (p < npart)
		chunks[p] = (parts.hist[p] + GA_CHUNK_ROWS - 1) / GA_CHUNK_ROWS;
	block_exclusive_scan(parts.hist, parts.begin, npart, warp_sums);
	__syncthreads();			/* the second scan rewrites warp_sums */
	block_exclusive_scan(chunks, parts.chunk_first, npart, warp_sums);
	if (p < npart)
	{
		parts.cursor[p] = parts.begin[p];
		if (p == npart - 1)
			parts.chunk_first[npart] = parts.chunk_first[p] + chunks[p];
	}
}

/* Rows a block of the scatter stages in shared memory at a time. */
#define GA_SCATTER_ITEMS 6
#define GA_SCATTER_TILE (GA_PART_THREADS * GA_SCATTER_ITEMS)

/*
 * Value columns a scatter block stages in shared memory; further ones are
 * copied from the cache.
 */
#define GA_SCATTER_STAGED_VALUES 2

/* Dynamic shared memory of the scatter for `staged` staged value columns. */
static inline size_t
scatter_shared_bytes(int staged)
{
	return (size_t) GA_SCATTER_TILE * (8 + 8 * staged + 4 + 1);
}

/* Element `row` of a column of `width` bytes, widened to 8 bytes. */
__device__ __forceinline__ unsigned long long
load_element(const void *column, int64_t row, int width)
{
	switch (width)
	{
		case 1:
			return __ldg((const uint8_t *) column + row);
		case 2:
			return __ldg((const uint16_t *) column + row);
		case 4:
			return __ldg((const uint32_t *) column + row);
		default:
			return __ldg((const unsigned long long *) column + row);
	}
}

/* Store the low `width` bytes of v as element `row` of a column. */
__device__ __forceinline__ void
store_element(void *column, int64_t row, int width, unsigned long long v)
{
	switch (width)
	{
		case 1:
			((uint8_t *) column)[row] = (uint8_t) v;
			break;
		case 2:
			((uint16_t *) column)[row] = (uint16_t) v;
			break;
		case 4:
			((uint32_t *) column)[row] = (uint32_t) v;
			break;
		default:
			((unsigned long long *) column)[row] = v;
			break;
	}
}

/*
 * perm[place] = row (and packed[place] = its packed key, and the value
 * columns' elements, when asked) for the block's rows.  The block reserves
 * its places in each partition with one global atomic (its count from
 * partition_count_kernel); then, tile by tile, it sorts the tile's rows by
 * partition in shared memory and writes each partition's run of them
 * together, so that global memory sees whole sectors rather than scattered
 * words.  The first GA_SCATTER_STAGED_VALUES value columns are read with
 * the keys and staged too; further ones are copied from the cache.
 */
__global__ void __launch_bounds__(GA_PART_THREADS, 2)
partition_scatter_kernel(const GaDevKeys keys, const GaDevPack pack, int64_t nrows,
						 const GaDevPartitions parts)
{
	__shared__ unsigned int places[1 << GA_PART_MAX_BITS];
	__shared__ unsigned int tile_count[1 << GA_PART_MAX_BITS];
	__shared__ unsigned int tile_start[1 << GA_PART_MAX_BITS];
	__shared__ unsigned int warp_sums[GA_PART_THREADS / 32];
	extern __shared__ __align__(16) unsigned char smem[];
	const int	npart = 1 << parts.pbits;
	const bool	packed = parts.packed != nullptr;
	const int	staged = parts.nvalues < GA_SCATTER_STAGED_VALUES ? parts.nvalues :
		GA_SCATTER_STAGED_VALUES;
	unsigned long long *stage_keys = (unsigned long long *) smem;
	unsigned long long *stage_values = stage_keys + GA_SCATTER_TILE;
	int32_t    *stage_rows = (int32_t *) (stage_values + (size_t) staged * GA_SCATTER_TILE);
	unsigned char *stage_part = (unsigned char *) (stage_rows + GA_SCATTER_TILE);
	int64_t		first,
				end;

	static_assert(GA_PART_MAX_BITS <= 8, "stage_part holds a partition in a byte");
	for (int p = threadIdx.x; p < npart; p += blockDim.x)
	{
		const unsigned int c = parts.block_counts[(int64_t) blockIdx.x * npart + p];

		places[p] = c > 0 ? atomicAdd(&parts.cursor[p], c) : 0;
		tile_count[p] = 0;
	}
	__syncthreads();
	block_rows(parts, nrows, &first, &end);

	/* the loop runs the same number of times for the whole block */
	for (int64_t tile = first; tile < end; tile += GA_SCATTER_TILE)
	{
		const int	n = end - tile < GA_SCATTER_TILE ? (int) (end - tile) : GA_SCATTER_TILE;
		unsigned int part[GA_SCATTER_ITEMS];
		unsigned int rank[GA_SCATTER_ITEMS];
		unsigned long long key[GA_SCATTER_ITEMS];
		unsigned long long value[GA_SCATTER_STAGED_VALUES][GA_SCATTER_ITEMS];

#pragma unroll
		for (int j = 0; j < GA_SCATTER_ITEMS; j++)
		{
			const int	t = j * GA_PART_THREADS + threadIdx.x;

			if (t < n)
			{
#pragma unroll
				for (int v = 0; v < GA_SCATTER_STAGED_VALUES; v++)
					if (v < staged)
						value[v][j] = load_element(parts.value_src[v], tile + t,
												   parts.value_width[v]);
				part[j] = row_partition(keys, tile + t, parts.pbits);
				key[j] = packed ? pack_key(keys, pack, tile + t) : 0;
				rank[j] = claim_place(tile_count, part[j]);
			}
		}
		__syncthreads();
		block_exclusive_scan(tile_count, tile_start, npart, warp_sums);
		__syncthreads();
#pragma unroll
		for (int j = 0; j < GA_SCATTER_ITEMS; j++)
		{
			const int	t = j * GA_PART_THREADS + threadIdx.x;

			if (t < n)
			{
				const unsigned int s = tile_start[part[j]] + rank[j];

				stage_rows[s] = (int32_t) (tile + t);
				stage_keys[s] = key[j];
				stage_part[s] = (unsigned char) part[j];
#pragma unroll
				for (int v = 0; v < GA_SCATTER_STAGED_VALUES; v++)
					if (v < staged)
						stage_values[v * GA_SCATTER_TILE + s] = value[v][j];
			}
		}
		__syncthreads();
		for (int s = threadIdx.x; s < n; s += blockDim.x)
		{
			const unsigned int p = stage_part[s];
			const unsigned int place = places[p] + (s - tile_start[p]);

			parts.perm[place] = stage_rows[s];
			if (packed)
				parts.packed[place] = stage_keys[s];
			for (int v = 0; v < parts.nvalues; v++)
				store_element(parts.value_dst[v], place, parts.value_width[v],
							  v < staged ? stage_values[v * GA_SCATTER_TILE + s] :
							  load_element(parts.value_src[v], stage_rows[s],
										   parts.value_width[v]));
		}
		__syncthreads();
		for (int p = threadIdx.x; p < npart; p += blockDim.x)
		{
			places[p] += tile_count[p];
			tile_count[p] = 0;
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

/*
 * Launch the three partitioning kernels (parts->blocks blocks each, the
 * scan one).
 */
cudaError_t
ga_launch_partition(const GaDevKeys *keys, const GaDevPack *pack, int64_t nrows,
					const GaDevPartitions *parts, cudaStream_t stream)
{
	const int	npart = 1 << parts->pbits;
	cudaError_t err;

	/* also for an empty batch: the chunk kernels then find no chunks */
	err = cudaMemsetAsync(parts->hist, 0, sizeof(unsigned int) * npart, stream);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	partition_count_kernel<<<parts->blocks, GA_PART_THREADS, 0, stream>>>(*keys, nrows, *parts);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	partition_scan_kernel<<<1, GA_GPU_BLOCK_THREADS, 0, stream>>>(*parts);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	{
		const int	staged = parts->nvalues < GA_SCATTER_STAGED_VALUES ? parts->nvalues :
			GA_SCATTER_STAGED_VALUES;
		const size_t shared_bytes = scatter_shared_bytes(staged);

		err = ga_opt_in_shared((const void *) partition_scatter_kernel, shared_bytes);
		if (err != cudaSuccess)
			return err;
		partition_scatter_kernel<<<parts->blocks, GA_PART_THREADS, shared_bytes, stream>>>(
			*keys, *pack, nrows, *parts);
	}
	return cudaGetLastError();
}
