/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashagg_chunks.cu
 *	  The partitioned strategy's aggregation of a partitioned batch, chunk
 *	  by chunk in shared memory.
 *
 * Wu et al.'s partition-based group-by ("Efficiently Processing Joins and
 * Grouped Aggregations on GPUs", section 4.3): once the rows are
 * partitioned by the top bits of their key hash (gpu/kernels/hashagg_partition.cu), a
 * block takes a chunk of up to GA_CHUNK_ROWS positions of one partition
 * and aggregates it in shared memory, so that the global table sees each
 * of the chunk's distinct keys once rather than each row.  In two kernels,
 * like the global strategy's two phases (and for the same reason: a full
 * group table must be growable and the batch redone, so nothing may be
 * merged before every key has its group):
 *
 * chunk_group_ids_kernel: the block hashes the chunk's packed keys (the
 * scatter wrote them in partition order) into a table of GA_CHUNK_SLOTS
 * slots in shared memory, numbers the distinct keys 0 .. d-1 (the chunk's
 * entries), looks them up in the global table a warp of consecutive
 * entries at a time (find_or_insert; the chunks in flight touch one small
 * run of its slots, which stays in the L2 cache) and writes every
 * position's entry.  A key that does not fit the block's table (or packs
 * to the empty slot's value) is looked up on its own.  Nothing here
 * accumulates, so it may run again after the table grows.
 *
 * chunk_accumulate_kernel: unless the group table overflowed, the block
 * folds the chunk's rows (their inputs in partition order when the scatter
 * copied them, else gathered through the permutation) into its d entries
 * in shared memory and merges each entry into its group's accumulators
 * with one atomic per aggregate.  A chunk of few entries (a hot key of
 * skewed data fills whole chunks) gets up to 32 copies of each, lane l
 * folding into copy l % copies, so that a warp's lanes do not serialise on
 * one shared word.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu/kernels/hashagg_device.cuh"

/* A chunk's positions [first, end) in the permutation, from its number. */
__device__ __forceinline__ void
chunk_positions(const GaDevPartitions &parts, unsigned int chunk, int64_t *first,
				int64_t *end)
{
	const int	npart = 1 << parts.pbits;
	int			lo = 0;
	int			hi = npart - 1;
	int64_t		part_end;

	/* the last partition whose first chunk is at or before `chunk` */
	while (lo < hi)
	{
		const int	mid = (lo + hi + 1) / 2;

		if (__ldg(&parts.chunk_first[mid]) <= chunk)
			lo = mid;
		else
			hi = mid - 1;
	}
	*first = (int64_t) __ldg(&parts.begin[lo]) +
		(int64_t) (chunk - __ldg(&parts.chunk_first[lo])) * GA_CHUNK_ROWS;
	part_end = (int64_t) __ldg(&parts.begin[lo]) + __ldg(&parts.hist[lo]);
	*end = *first + GA_CHUNK_ROWS < part_end ? *first + GA_CHUNK_ROWS : part_end;
}

/*
 * Entries of the chunks (see the file header).  NW is the instantiated
 * number of key words for the global lookups.
 */
template <int NW>
__global__ void __launch_bounds__(GA_CHUNK_THREADS)
chunk_group_ids_kernel(const GaDevKeys keys, const GaDevPack pack, const GaDevTable table,
					   const GaDevPartitions parts)
{
	extern __shared__ __align__(16) unsigned char smem[];
	unsigned long long *slot_keys = (unsigned long long *) smem;
	unsigned long long *entry_keys = slot_keys + GA_CHUNK_SLOTS;
	int		   *counter = (int *) (entry_keys + GA_CHUNK_ROWS);
	const unsigned int nchunks = parts.chunk_first[1 << parts.pbits];
	const int	nwords = keys.nkeys + 1;

	for (int s = threadIdx.x; s < GA_CHUNK_SLOTS; s += blockDim.x)
		slot_keys[s] = GA_PACK_EMPTY;
	if (threadIdx.x == 0)
		*counter = 0;
	__syncthreads();

	for (unsigned int c = blockIdx.x; c < nchunks; c += gridDim.x)
	{
		int64_t		first,
					end;
		int			slot[GA_ITEMS];

		chunk_positions(parts, c, &first, &end);
#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			const int64_t i = first + (int64_t) j * blockDim.x + threadIdx.x;

			slot[j] = -1;
			if (i < end)
			{
				const unsigned long long packed = __ldg(&parts.packed[i]);

				if (packed != GA_PACK_EMPTY)
					slot[j] = local_slot(slot_keys, GA_CHUNK_SLOTS, packed);
				if (slot[j] < 0)
				{
					/* not in the block's table: this row's key on its own */
					long long	words[NW];
					int32_t		g;

					load_key_words<NW>(keys, __ldg(&parts.perm[i]), words);
					g = find_or_insert<NW>(table, words, nwords);
					parts.local_ids[i] = g < 0 ? -1 : -2 - g;
				}
			}
		}
		__syncthreads();

		/* number the distinct keys; each slot then holds its entry */
		for (int s = threadIdx.x; s < GA_CHUNK_SLOTS; s += blockDim.x)
		{
			const unsigned long long k = slot_keys[s];

			if (k != GA_PACK_EMPTY)
			{
				const int	e = atomicAdd(counter, 1);

				entry_keys[e] = k;
				slot_keys[s] = (unsigned long long) e;
			}
		}
		__syncthreads();

		/*
		 * Their groups, a warp's lanes looking up consecutive entries
		 * together (the lanes that insert share one atomic for their ids).
		 */
		{
			const int	distinct = *counter;

			for (int e = threadIdx.x; e < distinct; e += blockDim.x)
			{
				long long	words[NW];

				unpack_key<NW>(pack, entry_keys[e], words);
				parts.chunk_groups[first + e] = find_or_insert<NW>(table, words, nwords);
			}
#pragma unroll
			for (int j = 0; j < GA_ITEMS; j++)
				if (slot[j] >= 0)
					parts.local_ids[first + (int64_t) j * blockDim.x + threadIdx.x] =
						(int32_t) slot_keys[slot[j]];
			if (threadIdx.x == 0)
				parts.chunk_distinct[c] = distinct;
		}
		__syncthreads();

		for (int s = threadIdx.x; s < GA_CHUNK_SLOTS; s += blockDim.x)
			slot_keys[s] = GA_PACK_EMPTY;
		if (threadIdx.x == 0)
			*counter = 0;
		__syncthreads();
	}
}

/*
 * Copies of each of a chunk's d entries: as many, up to 32, as keep d *
 * copies within a quarter of the chunk's rows and the table within
 * table_bytes (0: the entries do not fit; fold into global memory).
 */
__device__ __forceinline__ int
chunk_replicas(int d, int state, int64_t table_bytes)
{
	int			replicas;

	if ((int64_t) d * state > table_bytes)
		return 0;
	replicas = 1;
	while (replicas < 32 && d * replicas * 2 <= GA_CHUNK_ROWS / 4 &&
		   (int64_t) d * replicas * 2 * state <= table_bytes)
		replicas *= 2;
	return replicas;
}

/*
 * Accumulation of the chunks (see the file header), with table_bytes of
 * dynamic shared memory per block.  Nothing when the group table overflowed.
 */
__global__ void __launch_bounds__(GA_CHUNK_THREADS)
chunk_accumulate_kernel(const GaDevAggs aggs, const GaDevPartitions parts,
						bool inputs_in_order, GaDevControl *control, int64_t table_bytes)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const unsigned int nchunks = parts.chunk_first[1 << parts.pbits];

	if (((volatile GaDevControl *) control)->overflow)
		return;

	for (unsigned int c = blockIdx.x; c < nchunks; c += gridDim.x)
	{
		const int	d = __ldg(&parts.chunk_distinct[c]);
		const int	replicas = chunk_replicas(d, aggs.shared_state, table_bytes);
		const int64_t entries = (int64_t) d * replicas;
		const int	copy = replicas > 0 ? (int) (threadIdx.x & (replicas - 1)) : 0;
		int64_t		first,
					end;

		chunk_positions(parts, c, &first, &end);
		shared_init_all(aggs, smem, entries, entries);
		__syncthreads();

#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			const int64_t i = first + (int64_t) j * blockDim.x + threadIdx.x;

			if (i < end)
			{
				const int64_t row = inputs_in_order ? i : __ldg(&parts.perm[i]);
				const int32_t e = __ldg(&parts.local_ids[i]);

				if (e >= 0)
				{
					const int64_t g = __ldg(&parts.chunk_groups[first + e]);

					if (replicas > 0)
						fold_row_shared(aggs, smem, entries, (int64_t) e * replicas + copy, g,
										row);
					else
						fold_row_global(aggs, g, row);
				}
				else if (e <= -2)
					fold_row_global(aggs, -2 - (int64_t) e, row);
			}
		}
		__syncthreads();

		if (replicas > 0)
			for (int e = threadIdx.x; e < d; e += blockDim.x)
			{
				const int64_t g = __ldg(&parts.chunk_groups[first + e]);

				for (int a = 0; a < aggs.naggs; a++)
					shared_merge_replicas(aggs.aggs[a], shared_array(smem, aggs.aggs[a], entries),
										  e, replicas, (unsigned char *) aggs.aggs[a].acc, g);
			}
		__syncthreads();
	}
}

/* ------------------------------------------------------------------------
 * Launch functions
 * ------------------------------------------------------------------------
 */

/* Launch the chunks' group ids instantiated for NW key words. */
template <int NW>
static cudaError_t
launch_chunk_group_ids(const GaDevKeys *keys, const GaDevPack *pack, const GaDevTable *table,
					   const GaDevPartitions *parts, int sm_count, const GaLaunchParams *launch,
					   cudaStream_t stream)
{
	const void *kernel = (const void *) chunk_group_ids_kernel<NW>;
	const size_t shared_bytes = GA_CHUNK_SLOTS * 8 + GA_CHUNK_ROWS * 8 + 16;
	int			grid;
	cudaError_t err;

	err = ga_opt_in_shared(kernel, shared_bytes);
	if (err != cudaSuccess)
		return err;
	err = ga_grid_size_tuned(kernel, GA_CHUNK_THREADS, shared_bytes, sm_count, launch,
							 parts->max_chunks, 1, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	chunk_group_ids_kernel<NW><<<grid, GA_CHUNK_THREADS, shared_bytes, stream>>>(*keys, *pack,
																				  *table, *parts);
	return cudaGetLastError();
}

/* Launch the chunks' group ids with the instantiation for nkeys + 1 words. */
cudaError_t
ga_launch_chunk_group_ids(const GaDevKeys *keys, const GaDevPack *pack, const GaDevTable *table,
						  const GaDevPartitions *parts, int sm_count,
						  const GaLaunchParams *launch, cudaStream_t stream)
{
	const int	nwords = keys->nkeys + 1;

	if (nwords <= 2)
		return launch_chunk_group_ids<2>(keys, pack, table, parts, sm_count, launch, stream);
	if (nwords <= 3)
		return launch_chunk_group_ids<3>(keys, pack, table, parts, sm_count, launch, stream);
	if (nwords <= 5)
		return launch_chunk_group_ids<5>(keys, pack, table, parts, sm_count, launch, stream);
	if (nwords <= GA_PACK_MAX_KEYS + 1)
		return launch_chunk_group_ids<GA_PACK_MAX_KEYS + 1>(keys, pack, table, parts,
															sm_count, launch, stream);
	return cudaErrorNotSupported;
}

/*
 * Launch the chunks' accumulation, with a shared table big enough for a
 * chunk of all distinct keys (GA_CHUNK_ROWS entries) where the device has
 * that much shared memory per block.
 */
cudaError_t
ga_launch_chunk_accumulate(const GaDevAggs *aggs, const GaDevPartitions *parts,
						   int inputs_in_order, GaDevControl *control, int sm_count,
						   const GaLaunchParams *launch, cudaStream_t stream)
{
	const void *kernel = (const void *) chunk_accumulate_kernel;
	int64_t		table_bytes = (int64_t) GA_CHUNK_ROWS * aggs->shared_state;
	int			max_bytes = 0;
	int			device = 0;
	int			grid;
	cudaError_t err;

	err = cudaGetDevice(&device);
	if (err == cudaSuccess)
		err = cudaDeviceGetAttribute(&max_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
	if (err != cudaSuccess)
		return err;
	if (table_bytes > max_bytes)
		table_bytes = max_bytes;
	err = ga_opt_in_shared(kernel, (size_t) table_bytes);
	if (err != cudaSuccess)
		return err;
	err = ga_grid_size_tuned(kernel, GA_CHUNK_THREADS, (size_t) table_bytes, sm_count, launch,
							 parts->max_chunks, 1, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	chunk_accumulate_kernel<<<grid, GA_CHUNK_THREADS, table_bytes, stream>>>(*aggs, *parts,
																			  inputs_in_order != 0,
																			  control,
																			  table_bytes);
	return cudaGetLastError();
}
