/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashagg_two_phase.cu
 *	  Group ids and the two-phase accumulation kernels, and the launch
 *	  helpers every kernel file uses.
 *
 * A batch is aggregated in two phases (Wu et al., "Efficiently Processing
 * Joins and Grouped Aggregations on GPUs", Algorithm 1) by the global,
 * partitioned and (for keys that cannot be packed) shared strategies, and
 * for the rows that escape the one-pass kernels of gpu/kernels/hashagg_fused.cu:
 *
 * Phase 1 (assign_group_ids_kernel) gives every position a dense group id
 * with find_or_insert() (gpu/kernels/hashagg_device.cuh).  Positions are rows, or a list
 * of rows: the partitioned strategy's permutation, or an escape list whose
 * length a previous kernel left in device memory.
 *
 * When the counter reaches the capacity of the dense arrays, the winner
 * poisons its slot and raises the overflow flag; everyone meeting poison
 * raises it too and gives up on the row.  The host then grows the table,
 * rebuilds the slots from the dense keys (rebuild_slots_kernel) and runs
 * the batch's kernels again (the Rapids report's "detect a full table and
 * relaunch").  Phase 1 is idempotent, and phase 2 does nothing while the
 * flag is set, so nothing is counted twice.
 *
 * Phase 2 accumulates every aggregate into the dense per-group arrays,
 * either with atomics straight into global memory through a small per-block
 * cache of hot groups (accumulate_cached_kernel: skewed keys keep their
 * atomics in shared memory), or, while the groups fit, into per-block
 * accumulators in shared memory that each block merges into the global
 * arrays at the end (accumulate_shared_kernel; Karnagel via Rosenfeld:
 * per-block tables avoid global contention for few groups).  The shared kernel reads the group count after phase 1 and falls
 * back to global atomics when it is too large.
 *
 * MOMENTS and COMOMENTS fold whole rows (two inputs, compensated sums,
 * the group's shift from the global array) in both phase 2 kernels, in
 * shared memory as in global memory (gpu/kernels/hashagg_device.cuh).
 *
 * Derived columns (compute_derived_kernel) are computed before any other
 * kernel of the rows, with derived_expr.h's exact arithmetic (the CPU
 * device's too): a block stages one program at a time in shared memory,
 * every thread evaluates it in its row, and each derived column's validity
 * bits for a warp's 32 rows are one __ballot_sync and one 32-bit store by
 * lane 0, so no two threads write one word.
 *
 * Every kernel uses grid-stride loops with 64-bit indices; grids and block
 * sizes come from the occupancy calculator for the device at hand
 * (Rosenfeld: launch parameters are GPU-specific).
 *
 *-------------------------------------------------------------------------
 */
#include "gpu/kernels/hashagg_device.cuh"
#include "derived_expr.h"

/* ------------------------------------------------------------------------
 * Kernels
 * ------------------------------------------------------------------------
 */

/*
 * Phase 1: group_ids[i] = dense group id of position i's key tuple, or -1
 * when the table overflowed.  NW = nkeys + 1 rounded up to an instantiated
 * size, so that the key words stay in registers.
 */
template <int NW>
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
assign_group_ids_kernel(const GaDevKeys keys, const GaDevTable table,
						int64_t nrows, const int32_t *rows,
						const unsigned long long *count, int32_t *group_ids)
{
	const int64_t n = positions(nrows, count);
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		const int64_t row = rows != nullptr ? (int64_t) __ldg(rows + i) : i;
		long long	words[NW];

		load_key_words<NW>(keys, row, words);
		group_ids[i] = find_or_insert<NW>(table, words, keys.nkeys + 1);
	}
}

/*
 * Growth: insert the ids [0, ngroups) into a table whose slots are all
 * EMPTY, hashing the dense keys already copied into it.  The keys are
 * distinct, so only an empty slot has to be found.
 */
template <int NW>
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
rebuild_slots_kernel(const GaDevTable table, int64_t ngroups)
{
	const int	nwords = table.nkeys + 1;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t g = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 g < ngroups; g += stride)
	{
		long long	words[NW];
		int64_t		slot;

#pragma unroll
		for (int w = 0; w < NW; w++)
			words[w] = w < nwords ? table.keys[w * table.capacity + g] : 0;
		slot = (int64_t) (hash_words<NW>(words, nwords) >> table.slot_shift);
		while (atomicCAS((int *) &table.slots[slot], GA_SLOT_EMPTY, (int) g) != GA_SLOT_EMPTY)
			slot = (slot + 1) & table.slot_mask;
	}
}

/* Set the accumulators of groups [begin, end) to their identities. */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
init_accumulators_kernel(const GaDevAggs aggs, int64_t begin, int64_t end)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t g = begin + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 g < end; g += stride)
		for (int a = 0; a < aggs.naggs; a++)
			init_group(aggs.aggs[a].op, (unsigned char *) aggs.aggs[a].acc, g);
}

/*
 * Phase 2 with global atomics through a per-block cache of 2^cache_bits hot
 * groups in shared memory (cache_bits 0: no cache).  Nothing when phase 1
 * overflowed.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
accumulate_cached_kernel(const GaDevAggs aggs, const int32_t *group_ids,
						 int64_t nrows, const int32_t *rows,
						 const unsigned long long *count, GaDevControl *control,
						 int cache_bits)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int64_t cache_entries = cache_bits > 0 ? (1 << cache_bits) : 0;
	long long  *tags = (long long *) smem;
	unsigned char *cache = smem + 8 * cache_entries;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	int64_t		n;

	if (((volatile GaDevControl *) control)->overflow)
		return;
	n = positions(nrows, count);
	/*
	 * A block without positions (every block when no row escaped: the
	 * escape pass after a one-pass kernel, launched for nrows) leaves before
	 * setting up and scanning its cache.  n is the same for all its threads:
	 * no kernel of this launch writes *count.
	 */
	if ((int64_t) blockIdx.x * blockDim.x >= n)
		return;

	for (int64_t s = threadIdx.x; s < cache_entries; s += blockDim.x)
		tags[s] = GA_CACHE_EMPTY;
	shared_init_all(aggs, cache, cache_entries, cache_entries);
	__syncthreads();

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		const int64_t row = rows != nullptr ? (int64_t) __ldg(rows + i) : i;
		const int64_t g = group_ids != nullptr ? __ldg(group_ids + i) : 0;
		int			entry;

		if (g < 0)
			continue;			/* cannot happen without overflow */
		entry = cache_entries > 0 ? cache_entry(tags, cache_bits, g) : -1;
		if (entry >= 0)
			fold_row_shared(aggs, cache, cache_entries, entry, g, row);
		else
			fold_row_global(aggs, g, row);
	}
	__syncthreads();

	for (int64_t s = threadIdx.x; s < cache_entries; s += blockDim.x)
	{
		long long	g = tags[s];

		if (g < 0)
			continue;
		for (int a = 0; a < aggs.naggs; a++)
			shared_merge(aggs.aggs[a].op, aggs.aggs[a].shared_width,
						 shared_array(cache, aggs.aggs[a], cache_entries), s,
						 (unsigned char *) aggs.aggs[a].acc, g);
	}
}

/*
 * Phase 2 with per-block shared-memory accumulators for groups_alloc groups
 * of `replicas` copies each (lane l folds into copy l % replicas, so that
 * few groups do not serialise a warp on one address): initialise the
 * block's copies of the groups that exist, accumulate the block's rows with
 * shared atomics, merge the touched groups into global memory.  Falls back
 * to global atomics (a block-uniform branch) when phase 1 produced more
 * groups than the shared table holds.  Nothing when phase 1 overflowed.
 */
__global__ void __launch_bounds__(GA_SHARED_BLOCK_MAX, 2)
accumulate_shared_kernel(const GaDevAggs aggs, const int32_t *group_ids,
						 int64_t nrows, GaDevControl *control, int64_t groups_alloc,
						 int replicas)
{
	extern __shared__ __align__(16) unsigned char smem[];
	volatile GaDevControl *vcontrol = control;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	const int	copy = threadIdx.x & (replicas - 1);
	int64_t		ngroups;
	int64_t		entries;

	if (vcontrol->overflow)
		return;
	ngroups = (int64_t) vcontrol->ngroups;
	if (ngroups > groups_alloc)
	{
		if (blockIdx.x == 0 && threadIdx.x == 0)
			atomicAdd(&control->shared_fallbacks, 1u);
		for (int64_t row = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
			 row < nrows; row += stride)
		{
			const int64_t g = group_ids != nullptr ? __ldg(group_ids + row) : 0;

			if (g >= 0)
				fold_row_global(aggs, g, row);
		}
		return;
	}

	entries = groups_alloc * replicas;
	shared_init_all(aggs, smem, entries, ngroups * replicas < entries ? ngroups * replicas : entries);
	__syncthreads();

	for (int64_t row = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 row < nrows; row += stride)
	{
		const int64_t g = group_ids != nullptr ? __ldg(group_ids + row) : 0;

		if (g >= 0 && g < ngroups)	/* always, without overflow */
			fold_row_shared(aggs, smem, entries, g * replicas + copy, g, row);
	}
	__syncthreads();

	for (int64_t i = threadIdx.x; i < ngroups; i += blockDim.x)
	{
		const int64_t g = staggered(i, ngroups);

		for (int a = 0; a < aggs.naggs; a++)
			shared_merge_replicas(aggs.aggs[a], shared_array(smem, aggs.aggs[a], entries),
								  g, replicas, (unsigned char *) aggs.aggs[a].acc, g);
	}
}

/*
 * Evaluate a derived column's program in one row of the input buffer:
 * null when a COLUMN operand is null, else NaN when an operand's NaN flag
 * is valid, else finite with the value in *value.
 */
__device__ __forceinline__ int
derived_row(const GaDevDerivedProgram &program, int64_t row, GaInt192 *value)
{
	GaExprStack stack;
	bool		nan = false;

	stack.depth = 0;
	for (int s = 0; s < program.nsteps; s++)
	{
		const GaDevExprStep &step = program.steps[s];
		long long	operand = step.constant;

		if (step.op == GA_EXPR_COLUMN)
		{
			if (row_is_null(step.validity, row))
				return GA_EXPR_ROW_NULL;
			if (step.nan_validity != nullptr && !row_is_null(step.nan_validity, row))
				nan = true;
			operand = load_int(step.values, step.type, row);
		}
		if (!nan)
			ga_expr_apply(&stack, step.op, step.power, (int64_t) operand);
	}
	if (nan)
		return GA_EXPR_ROW_NAN;
	*value = stack.v[0];
	return GA_EXPR_ROW_FINITE;
}

static_assert(sizeof(GaDevDerivedProgram) % sizeof(long long) == 0,
			  "a derived program is staged in 8-byte words");

/*
 * Derived columns: for each program, the block stages it in shared memory,
 * then every thread evaluates it in its row and writes each output's value
 * and, through a warp ballot, the warp's validity word.  The row loop
 * keeps each warp on 32 consecutive rows starting at a multiple of 32, so
 * every lane reaches the ballots (the loop bound is uniform in a warp).
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
compute_derived_kernel(const GaDevDerivedProgram *programs, int nprograms, int64_t nrows)
{
	__shared__ GaDevDerivedProgram program;
	const int	lane = threadIdx.x & 31;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	const int	words = (int) (sizeof(GaDevDerivedProgram) / sizeof(long long));

	for (int p = 0; p < nprograms; p++)
	{
		__syncthreads();		/* every thread is done with the previous one */
		for (int i = threadIdx.x; i < words; i += blockDim.x)
			((long long *) &program)[i] = __ldg((const long long *) (programs + p) + i);
		__syncthreads();

		for (int64_t base = (int64_t) blockIdx.x * blockDim.x + threadIdx.x - lane;
			 base < nrows; base += stride)
		{
			const int64_t row = base + lane;
			const bool	active = row < nrows;
			GaInt192	value;
			int			state = GA_EXPR_ROW_NULL;

			value.w[0] = value.w[1] = value.w[2] = 0;
			if (active)
				state = derived_row(program, row, &value);
			for (int o = 0; o < program.noutputs; o++)
			{
				const GaDevDerivedOutput &out = program.outputs[o];
				const bool	valid = out.part == GA_DERIVED_NAN ?
					state == GA_EXPR_ROW_NAN : state == GA_EXPR_ROW_FINITE;

				if (active && out.values != nullptr)
					out.values[row] = valid ? (long long) ga_expr_part(value, out.part, out.limb) : 0;
				if (out.validity != nullptr)
				{
					unsigned int word = __ballot_sync(0xffffffffu, valid);

					if (lane == 0)
						out.validity[base >> 5] = word;
				}
			}
		}
	}
}

/* Set the group counter and clear the overflow flag (one thread). */
__global__ void
reset_control_kernel(GaDevControl *control, int64_t ngroups)
{
	control->ngroups = (unsigned long long) ngroups;
	control->overflow = 0;
}

/* Start a batch: empty escape list, nothing merged (one thread). */
__global__ void
reset_batch_kernel(GaDevControl *control)
{
	control->escapes = 0;
	control->merged = 0;
	control->counter = 0;
}

/* ------------------------------------------------------------------------
 * Launch helpers
 * ------------------------------------------------------------------------
 */

/*
 * Grid size for `kernel` run with `threads` per block: as many blocks as
 * can be resident on the device (occupancy calculator), but no more than
 * there are items_per_block chunks of work.  Rosenfeld shows launch
 * parameters are GPU-specific, so they come from the device rather than
 * constants.
 */
cudaError_t
ga_grid_size(const void *kernel, int threads, size_t shared_bytes, int sm_count,
			 int64_t items, int64_t items_per_block, int *grid)
{
	int			per_sm = 0;
	int64_t		resident;
	int64_t		needed;
	int64_t		blocks;
	cudaError_t err;

	err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads,
														 shared_bytes);
	if (err != cudaSuccess)
		return err;
	if (per_sm < 1)
		per_sm = 1;				/* the launch will report why it cannot run */
	resident = (int64_t) (sm_count > 0 ? sm_count : 1) * per_sm;
	needed = (items + items_per_block - 1) / items_per_block;
	blocks = needed < resident ? needed : resident;
	if (blocks < 1)
		blocks = 1;
	if (blocks > INT_MAX)
		blocks = INT_MAX;
	*grid = (int) blocks;
	return cudaSuccess;
}

/*
 * Let `kernel` take shared_bytes of dynamic shared memory per block on the
 * current GPU.  Above the default 48 KB the kernel is opted in to the most
 * the GPU allows a block beside the kernel's static shared memory: always
 * that most, never the launch's own size, so that launches of one kernel
 * with different sizes from several host threads (concurrent queries in
 * the GPU service) never lower the limit under one another.  A size past
 * the most fails as cudaFuncSetAttribute would.
 */
cudaError_t
ga_opt_in_shared(const void *kernel, size_t shared_bytes)
{
	struct cudaFuncAttributes attr;
	int			device = 0;
	int			most = 0;
	cudaError_t err;

	if (shared_bytes <= 48 * 1024)
		return cudaSuccess;
	err = cudaGetDevice(&device);
	if (err == cudaSuccess)
		err = cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
	if (err == cudaSuccess)
		err = cudaFuncGetAttributes(&attr, kernel);
	if (err != cudaSuccess)
		return err;
	most -= (int) attr.sharedSizeBytes;
	if (most <= 0 || shared_bytes > (size_t) most)
		return cudaErrorInvalidValue;
	if (attr.maxDynamicSharedSizeBytes == most)
		return cudaSuccess;
	return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most);
}

/*
 * Block size of a shared-memory kernel with shared_bytes per block: 512 or
 * 256 threads, whichever keeps more threads resident per multiprocessor
 * (512 on a tie: more threads share one table, fewer tables to merge).  Also
 * opts the kernel in to shared_bytes above the default 48 KB.
 */
cudaError_t
ga_shared_shape(const void *kernel, size_t shared_bytes, GaLaunchShape *shape)
{
	static const int candidates[] = {GA_SHARED_BLOCK_MAX, GA_SHARED_BLOCK_MAX / 2};
	int			best_threads = 0;
	int			best_blocks = 0;
	cudaError_t err;

	err = ga_opt_in_shared(kernel, shared_bytes);
	if (err != cudaSuccess)
		return err;
	for (int c = 0; c < 2; c++)
	{
		int			per_sm = 0;

		err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, candidates[c],
															 shared_bytes);
		if (err != cudaSuccess)
			return err;
		if (per_sm * candidates[c] > best_blocks * best_threads)
		{
			best_threads = candidates[c];
			best_blocks = per_sm;
		}
	}
	shape->threads = best_threads > 0 ? best_threads : GA_SHARED_BLOCK_MAX / 2;
	shape->blocks_per_sm = best_blocks;
	return cudaSuccess;
}

/*
 * ga_grid_size, then at most launch->blocks_per_sm resident blocks per
 * multiprocessor (launch NULL or 0: no cap).
 */
cudaError_t
ga_grid_size_tuned(const void *kernel, int threads, size_t shared_bytes, int sm_count,
				   const GaLaunchParams *launch, int64_t items, int64_t items_per_block,
				   int *grid)
{
	cudaError_t err = ga_grid_size(kernel, threads, shared_bytes, sm_count, items,
								   items_per_block, grid);

	if (err == cudaSuccess && launch != NULL && launch->blocks_per_sm > 0)
	{
		int64_t		cap = (int64_t) (sm_count > 0 ? sm_count : 1) * launch->blocks_per_sm;

		if (*grid > cap)
			*grid = (int) cap;
	}
	return err;
}

/* Threads per block of a launch: launch->threads cut to bound, or rule when 0. */
int
ga_tuned_threads(const GaLaunchParams *launch, int rule, int bound)
{
	if (launch == NULL || launch->threads <= 0)
		return rule;
	return launch->threads < bound ? launch->threads : bound;
}

/*
 * ga_shared_shape, with launch->threads (cut to GA_SHARED_BLOCK_MAX) when
 * set and a block of it fits, and at most launch->blocks_per_sm blocks
 * per multiprocessor.
 */
cudaError_t
ga_shared_shape_tuned(const void *kernel, size_t shared_bytes, const GaLaunchParams *launch,
					  GaLaunchShape *shape)
{
	cudaError_t err = ga_shared_shape(kernel, shared_bytes, shape);
	int			threads = ga_tuned_threads(launch, 0, GA_SHARED_BLOCK_MAX);

	if (err != cudaSuccess)
		return err;
	if (threads > 0)
	{
		int			per_sm = 0;

		err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads,
															 shared_bytes);
		if (err != cudaSuccess)
			return err;
		if (per_sm >= 1)
		{
			shape->threads = threads;
			shape->blocks_per_sm = per_sm;
		}
	}
	if (launch != NULL && launch->blocks_per_sm > 0 && shape->blocks_per_sm > launch->blocks_per_sm)
		shape->blocks_per_sm = launch->blocks_per_sm;
	return cudaSuccess;
}

/*
 * Clear a stale error left by an earlier, already handled failure (such as
 * a failed allocation), so that the check after a launch reports the
 * launch's own error.  Sticky errors cannot be cleared and still show.
 */
void
ga_clear_stale_error(void)
{
	(void) cudaGetLastError();
}

/* ------------------------------------------------------------------------
 * Launch functions
 * ------------------------------------------------------------------------
 */

/* Launch phase 1 instantiated for up to NW key words. */
template <int NW>
static cudaError_t
launch_assign_group_ids(const GaDevKeys *keys, const GaDevTable *table, int64_t nrows,
						const int32_t *rows, const unsigned long long *count,
						int32_t *group_ids, int sm_count, const GaLaunchParams *launch,
						cudaStream_t stream)
{
	const int	threads = ga_tuned_threads(launch, GA_GPU_BLOCK_THREADS, GA_GPU_BLOCK_THREADS);
	int			grid;
	cudaError_t err;

	err = ga_grid_size_tuned((const void *) assign_group_ids_kernel<NW>, threads, 0, sm_count,
							 launch, nrows, threads, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	assign_group_ids_kernel<NW><<<grid, threads, 0, stream>>>(*keys, *table, nrows, rows, count,
															  group_ids);
	return cudaGetLastError();
}

/* Launch phase 1 with the smallest instantiation that holds nkeys + 1 words. */
cudaError_t
ga_launch_assign_group_ids(const GaDevKeys *keys, const GaDevTable *table,
						   int64_t nrows, const int32_t *rows,
						   const unsigned long long *count, int32_t *group_ids,
						   int sm_count, const GaLaunchParams *launch, cudaStream_t stream)
{
	int			nwords = keys->nkeys + 1;

	if (nrows <= 0)
		return cudaSuccess;
	if (nwords <= 2)
		return launch_assign_group_ids<2>(keys, table, nrows, rows, count, group_ids,
										  sm_count, launch, stream);
	if (nwords <= 3)
		return launch_assign_group_ids<3>(keys, table, nrows, rows, count, group_ids,
										  sm_count, launch, stream);
	if (nwords <= 5)
		return launch_assign_group_ids<5>(keys, table, nrows, rows, count, group_ids,
										  sm_count, launch, stream);
	if (nwords <= 9)
		return launch_assign_group_ids<9>(keys, table, nrows, rows, count, group_ids,
										  sm_count, launch, stream);
	if (nwords <= 17)
		return launch_assign_group_ids<17>(keys, table, nrows, rows, count, group_ids,
										   sm_count, launch, stream);
	return launch_assign_group_ids<GA_GPU_MAX_KEYS + 1>(keys, table, nrows, rows, count,
													   group_ids, sm_count, launch, stream);
}

/* Launch the slot rebuild instantiated for up to NW key words. */
template <int NW>
static cudaError_t
launch_rebuild_slots(const GaDevTable *table, int64_t ngroups, int sm_count,
					 cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	err = ga_grid_size((const void *) rebuild_slots_kernel<NW>, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, ngroups, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	rebuild_slots_kernel<NW><<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*table, ngroups);
	return cudaGetLastError();
}

/* Launch the slot rebuild with the instantiation that holds the key words. */
cudaError_t
ga_launch_rebuild_slots(const GaDevTable *table, int64_t ngroups, int sm_count,
						cudaStream_t stream)
{
	int			nwords = table->nkeys + 1;

	if (ngroups <= 0)
		return cudaSuccess;
	if (nwords <= 2)
		return launch_rebuild_slots<2>(table, ngroups, sm_count, stream);
	if (nwords <= 3)
		return launch_rebuild_slots<3>(table, ngroups, sm_count, stream);
	if (nwords <= 5)
		return launch_rebuild_slots<5>(table, ngroups, sm_count, stream);
	if (nwords <= 9)
		return launch_rebuild_slots<9>(table, ngroups, sm_count, stream);
	if (nwords <= 17)
		return launch_rebuild_slots<17>(table, ngroups, sm_count, stream);
	return launch_rebuild_slots<GA_GPU_MAX_KEYS + 1>(table, ngroups, sm_count, stream);
}

/* Launch the accumulator initialisation for groups [begin, end). */
cudaError_t
ga_launch_init_accumulators(const GaDevAggs *aggs, int64_t begin, int64_t end,
							int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (aggs->naggs == 0 || end <= begin)
		return cudaSuccess;
	err = ga_grid_size((const void *) init_accumulators_kernel, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, end - begin, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	init_accumulators_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*aggs, begin, end);
	return cudaGetLastError();
}

/* Launch phase 2 with global atomics and block caches. */
cudaError_t
ga_launch_accumulate_cached(const GaDevAggs *aggs, const int32_t *group_ids,
							int64_t nrows, const int32_t *rows,
							const unsigned long long *count, GaDevControl *control,
							int cache_bits, int sm_count, const GaLaunchParams *launch,
							cudaStream_t stream)
{
	size_t		shared_bytes = ga_cache_shared_bytes(cache_bits, aggs->shared_state);
	const int	threads = ga_tuned_threads(launch, GA_GPU_BLOCK_THREADS, GA_GPU_BLOCK_THREADS);
	int			grid;
	cudaError_t err;

	if (aggs->naggs == 0 || nrows <= 0)
		return cudaSuccess;
	err = ga_opt_in_shared((const void *) accumulate_cached_kernel, shared_bytes);
	if (err != cudaSuccess)
		return err;
	/* each block initialises and merges its cache: give it rows enough */
	err = ga_grid_size_tuned((const void *) accumulate_cached_kernel, threads, shared_bytes,
							 sm_count, launch, nrows,
							 cache_bits > 0 ? 16 * (int64_t) threads : threads, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	accumulate_cached_kernel<<<grid, threads, shared_bytes, stream>>>(*aggs,
																				 group_ids,
																				 nrows, rows,
																				 count,
																				 control,
																				 cache_bits);
	return cudaGetLastError();
}

/* Launch phase 2 with per-block shared-memory accumulators. */
cudaError_t
ga_launch_accumulate_shared(const GaDevAggs *aggs, const int32_t *group_ids,
							int64_t nrows, GaDevControl *control,
							int64_t groups_alloc, int replicas, int sm_count,
							const GaLaunchParams *launch, cudaStream_t stream)
{
	size_t		shared_bytes = (size_t) groups_alloc * replicas * aggs->shared_state;
	GaLaunchShape shape;
	int			grid;
	cudaError_t err;

	if (aggs->naggs == 0 || nrows <= 0)
		return cudaSuccess;
	err = ga_shared_shape_tuned((const void *) accumulate_shared_kernel, shared_bytes, launch,
								&shape);
	if (err != cudaSuccess)
		return err;
	/*
	 * Every block initialises and merges the whole shared table, so give
	 * each block rows enough to pay for that.
	 */
	err = ga_grid_size_tuned((const void *) accumulate_shared_kernel, shape.threads, shared_bytes,
							 sm_count, launch, nrows,
					   4 * (int64_t) shape.threads > 8 * groups_alloc ?
					   4 * (int64_t) shape.threads : 8 * groups_alloc, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	accumulate_shared_kernel<<<grid, shape.threads, shared_bytes, stream>>>(*aggs, group_ids,
																		   nrows, control,
																		   groups_alloc,
																		   replicas);
	return cudaGetLastError();
}

/* Launch the derived columns' kernel over rows [0, nrows) (nothing without programs). */
cudaError_t
ga_launch_compute_derived(const GaDevDerivedProgram *programs, int nprograms, int64_t nrows,
						  int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (nprograms <= 0 || nrows <= 0)
		return cudaSuccess;
	err = ga_grid_size((const void *) compute_derived_kernel, GA_GPU_BLOCK_THREADS, 0,
					   sm_count, nrows, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	compute_derived_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(programs, nprograms,
																	  nrows);
	return cudaGetLastError();
}

/* Launch the one-thread control reset, ordered on the stream. */
cudaError_t
ga_launch_reset_control(GaDevControl *control, int64_t ngroups, cudaStream_t stream)
{
	ga_clear_stale_error();
	reset_control_kernel<<<1, 1, 0, stream>>>(control, ngroups);
	return cudaGetLastError();
}

/* Launch the one-thread batch reset, ordered on the stream. */
cudaError_t
ga_launch_reset_batch(GaDevControl *control, cudaStream_t stream)
{
	ga_clear_stale_error();
	reset_batch_kernel<<<1, 1, 0, stream>>>(control);
	return cudaGetLastError();
}
