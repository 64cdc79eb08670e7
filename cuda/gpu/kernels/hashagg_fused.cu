/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashagg_fused.cu
 *	  One-pass aggregation kernels: direct indexing (the perfect strategy,
 *	  and plain aggregates) and the fused shared-memory hash table (the
 *	  shared strategy for keys that pack into 64 bits), plus the perfect
 *	  entries' initialisation and their gathering into the group arrays.
 *
 * For few groups the two-phase kernels are bound by phase 1: every row
 * probes the global table and writes its id, and phase 2 reads it back.
 * These kernels read each row once and keep everything else in shared
 * memory, so global memory sees little more than the streaming read of the
 * batch:
 *
 * direct_shared_kernel (Karnagel's "perfect hashing" as MapD uses it): a row's entry is the mixed-radix index of its keys over ranges the
 * host took from a sample of the first batch; each block accumulates into
 * `replicas` copies of every entry in shared memory (lane l uses copy
 * l % replicas, so a warp whose rows share a group does not serialise on
 * one address), then merges the entries it saw into the perfect entries in
 * global memory.  A row whose key lies outside its range "escapes": its
 * row number goes to an escape list that the two-phase kernels aggregate
 * through the global table right after.  Nothing here can overflow, so the
 * host never redoes this kernel.
 *
 * direct_global_kernel: the same index for ranges too large for shared
 * memory; atomics go straight to the perfect entries (all aggregates of an
 * entry side by side, one random access per row) except for the entries a
 * block finds in its small shared cache of hot entries (skewed keys).
 *
 * fused_shared_kernel: each block inserts packed keys into its own
 * open-addressing table in shared memory and accumulates there; rows whose
 * keys do not fit escape as above.  Then every block looks its keys up in
 * the global table (inserting new ones), and the grid synchronises: a
 * cooperative launch, so all blocks are resident.  If any insert found the
 * global table full, no block merges anything and the host grows the table
 * and runs the kernel again; otherwise every block merges its accumulators
 * into the group arrays and control->merged tells the host that only the
 * escapes would need redoing.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu/kernels/hashagg_device.cuh"

/* ------------------------------------------------------------------------
 * Direct indexing
 * ------------------------------------------------------------------------
 */

/*
 * Where aggregate a's accumulator of perfect entry e lives: inside the
 * entry, or (no perfect arrays: a plain aggregate) element e of the
 * aggregate's own array.  Sets *g to the element index for global_fold.
 */
__device__ __forceinline__ unsigned char *
perfect_target(const GaDevPerfect &perfect, const GaDevAgg &a, long long e, int64_t *g)
{
	if (perfect.acc == nullptr)
	{
		*g = e;
		return (unsigned char *) a.acc;
	}
	*g = 0;
	return perfect.acc + e * perfect.entry_bytes + a.perfect_offset;
}

/*
 * Load aggregate agg's input in GA_ITEMS rows rows[j] (those with index[j]
 * >= 0) into v[j]; present[j] says whether it counts (load_agg_input).
 */
__device__ __forceinline__ void
load_items(const GaDevAgg &agg, const int64_t (&rows)[GA_ITEMS],
		   const long long (&index)[GA_ITEMS], long long (&v)[GA_ITEMS],
		   bool (&present)[GA_ITEMS])
{
#pragma unroll
	for (int j = 0; j < GA_ITEMS; j++)
	{
		bool		counts = false;

		v[j] = index[j] >= 0 ? load_agg_input(agg, rows[j], &counts) : 0;
		present[j] = counts;
	}
}

/*
 * Fold GA_ITEMS rows at positions rows[j] (those with index[j] >= 0) into
 * entries index[j] of a shared table of `entries` entries.  All loads of an
 * aggregate come before its atomics.
 */
__device__ __forceinline__ void
fold_items_shared(const GaDevAggs &aggs, unsigned char *table, int64_t entries,
				  const int64_t (&rows)[GA_ITEMS], const long long (&index)[GA_ITEMS])
{
	for (int a = 0; a < aggs.naggs; a++)
	{
		const GaDevAgg &agg = aggs.aggs[a];
		unsigned char *arr = shared_array(table, agg, entries);
		long long	v[GA_ITEMS];
		bool		present[GA_ITEMS];

		load_items(agg, rows, index, v, present);
#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
			if (present[j] && index[j] >= 0)
				shared_fold(agg.op, agg.shared_width, arr, index[j], v[j]);
	}
}

/* Value of a count's shared entry e (width 4 or 8). */
__device__ __forceinline__ unsigned long long
shared_count(const GaDevAgg &a, const unsigned char *arr, int64_t e)
{
	return a.shared_width == 4 ? ((const unsigned int *) arr)[e] :
		((const unsigned long long *) arr)[e];
}

/*
 * The end of a one-pass direct kernel: merge the block's shared entries
 * (replicas copies each, table_entries in all) into the perfect entries or
 * a plain aggregate's arrays, marking the entries seen.  An entry the
 * block never met is skipped: by the block's bitmap `seen` when it kept
 * one, else (count_agg >= 0) by its count being zero.
 */
__device__ __forceinline__ void
merge_direct_entries(const GaDevPerfect &perfect, const GaDevAggs &aggs, unsigned char *smem,
					 int64_t table_entries, const unsigned int *seen, int replicas,
					 int count_agg)
{
	for (int64_t i = threadIdx.x; i < perfect.entries; i += blockDim.x)
	{
		const int64_t e = staggered(i, perfect.entries);
		int			merged = -1;	/* the aggregate whose replicas are folded */

		if (seen != nullptr && !((seen[e >> 5] >> (e & 31)) & 1))
			continue;
		if (perfect.seen != nullptr && count_agg >= 0)
		{
			const GaDevAgg &c = aggs.aggs[count_agg];
			unsigned char *arr = shared_array(smem, c, table_entries);

			for (int r = 1; r < replicas; r++)
				shared_combine(c.op, c.shared_width, arr, e * replicas, e * replicas + r);
			if (shared_count(c, arr, e * replicas) == 0)
				continue;
			merged = count_agg;
		}
		if (perfect.seen != nullptr)
			mark_seen(perfect.seen, e);
		for (int a = 0; a < aggs.naggs; a++)
		{
			int64_t		g;
			unsigned char *target = perfect_target(perfect, aggs.aggs[a], e, &g);
			unsigned char *arr = shared_array(smem, aggs.aggs[a], table_entries);

			if (a == merged)
				shared_merge(aggs.aggs[a].op, aggs.aggs[a].shared_width, arr, e * replicas,
							 target, g);
			else
				shared_merge_replicas(aggs.aggs[a], arr, e, replicas, target, g);
		}
	}
}

/*
 * perfect with a range that fits a block's shared memory, or a plain
 * aggregate (nkeys = 0: one entry, the aggregates' own arrays).  An entry
 * is "seen" when a row of the batch fell on it.  With count_agg >= 0 (an
 * aggregate that counts every row: COUNT_ROWS, or COUNT of a column without
 * nulls in this batch) that is its count being nonzero, so rows skip the
 * block's bitmap; without perfect entries (a plain aggregate) nothing is
 * tracked, as merging an entry still at its identities adds nothing.
 */
__global__ void __launch_bounds__(GA_SHARED_BLOCK_MAX, 2)
direct_shared_kernel(const GaDevKeys keys, const GaDevPerfect perfect,
					 const GaDevAggs aggs, int64_t nrows, GaDevControl *control,
					 int32_t *escape_rows, int replicas, int count_agg)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int64_t entries = perfect.entries;
	const int64_t table_entries = entries * replicas;
	unsigned int *seen = (unsigned int *) (smem + table_entries * aggs.shared_state);
	const int	copy = threadIdx.x & (replicas - 1);
	const int64_t tile = (int64_t) blockDim.x * GA_ITEMS;
	const bool	mark_rows = perfect.seen != nullptr && count_agg < 0;

	shared_init_all(aggs, smem, table_entries, table_entries);
	for (int64_t w = threadIdx.x; w < (entries + 31) / 32; w += blockDim.x)
		seen[w] = 0;
	__syncthreads();

	for (int64_t base = (int64_t) blockIdx.x * tile; base < nrows;
		 base += (int64_t) gridDim.x * tile)
	{
		int64_t		rows[GA_ITEMS];
		long long	index[GA_ITEMS];

#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			rows[j] = base + (int64_t) j * blockDim.x + threadIdx.x;
			index[j] = rows[j] < nrows ? perfect_index(keys, perfect, rows[j]) : -2;
		}
#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			if (index[j] == -1)
				append_escape(control, escape_rows, rows[j]);
			else if (index[j] >= 0)
			{
				if (mark_rows)
					mark_seen(seen, index[j]);
				index[j] = index[j] * replicas + copy;
			}
		}
		fold_items_shared(aggs, smem, table_entries, rows, index);
	}
	__syncthreads();
	merge_direct_entries(perfect, aggs, smem, table_entries, mark_rows ? seen : nullptr,
						 replicas, count_agg);
}

/*
 * Four consecutive values of a column of T (int or long long) from the
 * 16-byte aligned quad q (rows 4q .. 4q+3), in vector loads.
 */
template <typename T>
__device__ __forceinline__ void
load_quad(const void *column, int64_t q, T (&out)[4])
{
	if (sizeof(T) == 4)
	{
		const int4	v = __ldg((const int4 *) column + q);

		out[0] = (T) v.x;
		out[1] = (T) v.y;
		out[2] = (T) v.z;
		out[3] = (T) v.w;
	}
	else
	{
		const longlong2 a = __ldg((const longlong2 *) column + 2 * q);
		const longlong2 b = __ldg((const longlong2 *) column + 2 * q + 1);

		out[0] = (T) a.x;
		out[1] = (T) a.y;
		out[2] = (T) b.x;
		out[3] = (T) b.y;
	}
}

/*
 * What a narrow batch folds (see direct_narrow_kernel), set up by the host:
 * the aggregates that read a column, in order, and log2 of the replicas.
 * Every other aggregate counts every row, so only count_agg is accumulated
 * and the other counts copy it at the end.
 */
typedef struct GaDevNarrow
{
	int32_t		ninputs;
	int32_t		agg[GA_NARROW_MAX_INPUTS];
	int32_t		replica_bits;
} GaDevNarrow;

/* Whether op counts every row of a narrow batch (no nulls to skip). */
__device__ __forceinline__ bool
narrow_counts(int op)
{
	return op == GA_AGG_COUNT_ROWS || op == GA_AGG_COUNT;
}

/*
 * A narrow row's key minus the range's low end, as an unsigned number that
 * is below the range's width exactly when the key lies in the range (32-bit
 * arithmetic for int32 keys, whose range lies within int32).
 */
template <typename KeyT>
__device__ __forceinline__ unsigned long long
narrow_offset(KeyT key, long long lo)
{
	if (sizeof(KeyT) == 4)
		return (unsigned int) key - (unsigned int) lo;
	return (unsigned long long) key - (unsigned long long) lo;
}

/*
 * The entry (replica copy included) of a narrow row with key `key`, or -1
 * after sending the row to the escape list when the key is outside the
 * range (width `values`).
 */
template <typename KeyT>
__device__ __forceinline__ int
narrow_entry(KeyT key, long long lo, unsigned long long values, int replica_bits, int copy,
			 GaDevControl *control, int32_t *escape_rows, int64_t row)
{
	const unsigned long long d = narrow_offset<KeyT>(key, lo);

	if (d >= values)
	{
		append_escape(control, escape_rows, row);
		return -1;
	}
	return ((int) d << replica_bits) | copy;
}

/*
 * Where and how a thread of direct_narrow_kernel folds: each reading
 * aggregate's operation, shared width and shared array, and the count's
 * (count_agg's) width and array, fetched once before the row loop.
 */
typedef struct NarrowFold
{
	int			ninputs;
	int			op[GA_NARROW_MAX_INPUTS];
	int			width[GA_NARROW_MAX_INPUTS];
	unsigned char *arr[GA_NARROW_MAX_INPUTS];
	int			count_op;
	int			count_width;
	unsigned char *count_arr;
} NarrowFold;

/*
 * Fold one narrow row on entry e: input[s] into the s-th reading aggregate
 * and 1 into the count.  SUM32 (the batch's only input is an 8-byte integer
 * sum, the count 4 bytes wide) spells that out, so that the row costs two
 * 32-bit shared atomics (the sum's low word, as shared_fold adds it, and
 * the count).
 */
template <typename ValT, bool SUM32>
__device__ __forceinline__ void
narrow_fold(const NarrowFold &f, int e, const ValT (&input)[GA_NARROW_MAX_INPUTS])
{
	if constexpr (SUM32)
	{
		shared_add_by_words<2>((unsigned int *) f.arr[0] + 2 * e, (long long) input[0]);
		atomicAdd((unsigned int *) f.count_arr + e, 1u);
	}
	else
	{
#pragma unroll
		for (int s = 0; s < GA_NARROW_MAX_INPUTS; s++)
			if (s < f.ninputs)
				shared_fold(f.op[s], f.width[s], f.arr[s], e, (long long) input[s]);
		shared_fold(f.count_op, f.count_width, f.count_arr, e, 1);
	}
}

/*
 * After a narrow kernel's rows: every count aggregate other than count_agg
 * takes count_agg's shared entries (they count the same rows).  The caller
 * synchronises the block before and after.
 */
__device__ __forceinline__ void
narrow_copy_counts(const GaDevAggs &aggs, unsigned char *smem, int64_t table_entries,
				   int count_agg)
{
	const GaDevAgg &c = aggs.aggs[count_agg];
	const unsigned char *from = shared_array(smem, c, table_entries);

	for (int a = 0; a < aggs.naggs; a++)
	{
		unsigned char *to = shared_array(smem, aggs.aggs[a], table_entries);

		if (a == count_agg || !narrow_counts(aggs.aggs[a].op))
			continue;
		for (int64_t e = threadIdx.x; e < table_entries; e += blockDim.x)
		{
			if (aggs.aggs[a].shared_width == 4)
				((unsigned int *) to)[e] = (unsigned int) shared_count(c, from, e);
			else
				((unsigned long long *) to)[e] = shared_count(c, from, e);
		}
	}
}

/*
 * perfect for the commonest shape, specialised: one integer key (KeyT)
 * without nulls in the batch; aggregates that count every row (COUNT_ROWS,
 * COUNT of a column without nulls in the batch), and at most
 * GA_NARROW_MAX_INPUTS integer SUM/MIN/MAX of columns of ValT without nulls
 * (narrow_shape() on the host checks it; count_agg >= 0).  The generic
 * direct_shared_kernel runs the type, null and operation switches and the
 * key loop for every row, and loads a row's inputs only after its key, so
 * for few groups it stays far below the memory bandwidth (the kernel
 * benchmark, docs/benchmarks.md, compares the two).  Here each thread
 * loads U quads of keys and of every input column in 16-byte vector
 * loads, all before any atomic, then folds them into its replica of the
 * block's shared entries (MapD's perfect hashing, Karnagel; replicas as in
 * direct_shared_kernel), one count for all the counts.
 * Rows past the last whole quad go through the same code one by one.  The
 * merge at the end is direct_shared_kernel's.
 */
template <typename KeyT, typename ValT, int U, bool SUM32>
__global__ void __launch_bounds__(GA_NARROW_BLOCK_MAX, 1)
direct_narrow_kernel(const GaDevKeys keys, const GaDevPerfect perfect,
					 const GaDevAggs aggs, const GaDevNarrow narrow, int64_t nrows,
					 GaDevControl *control, int32_t *escape_rows, int count_agg)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int	replicas = 1 << narrow.replica_bits;
	const int64_t table_entries = perfect.entries * replicas;
	const int	copy = threadIdx.x & (replicas - 1);
	const KeyT *key_column = (const KeyT *) keys.columns[0].values;
	const long long lo = perfect.lo[0];
	const unsigned long long values = (unsigned long long) (perfect.base[0] - 1);
	const int64_t quads = nrows / 4;
	const int64_t step = (int64_t) gridDim.x * blockDim.x * U;
	const ValT *input_column[GA_NARROW_MAX_INPUTS];
	NarrowFold	f;

	f.ninputs = narrow.ninputs;
#pragma unroll
	for (int s = 0; s < GA_NARROW_MAX_INPUTS; s++)
	{
		const GaDevAgg &agg = aggs.aggs[s < narrow.ninputs ? narrow.agg[s] : count_agg];

		f.op[s] = agg.op;
		f.width[s] = agg.shared_width;
		f.arr[s] = shared_array(smem, agg, table_entries);
		input_column[s] = (const ValT *) agg.input.values;
	}
	f.count_op = aggs.aggs[count_agg].op;
	f.count_width = aggs.aggs[count_agg].shared_width;
	f.count_arr = shared_array(smem, aggs.aggs[count_agg], table_entries);

	shared_init_all(aggs, smem, table_entries, table_entries);
	__syncthreads();

	for (int64_t first = (int64_t) blockIdx.x * blockDim.x * U + threadIdx.x; first < quads;
		 first += step)
	{
		KeyT		key[U][4];
		ValT		input[GA_NARROW_MAX_INPUTS][U][4];

#pragma unroll
		for (int u = 0; u < U; u++)
			if (first + (int64_t) u * blockDim.x < quads)
				load_quad<KeyT>(key_column, first + (int64_t) u * blockDim.x, key[u]);
#pragma unroll
		for (int s = 0; s < GA_NARROW_MAX_INPUTS; s++)
			if (s < f.ninputs)
			{
#pragma unroll
				for (int u = 0; u < U; u++)
					if (first + (int64_t) u * blockDim.x < quads)
						load_quad<ValT>(input_column[s], first + (int64_t) u * blockDim.x,
										input[s][u]);
			}
#pragma unroll
		for (int u = 0; u < U; u++)
		{
			const int64_t q = first + (int64_t) u * blockDim.x;

			if (q >= quads)
				continue;
#pragma unroll
			for (int r = 0; r < 4; r++)
			{
				const int	e = narrow_entry<KeyT>(key[u][r], lo, values, narrow.replica_bits,
												   copy, control, escape_rows, 4 * q + r);
				ValT		row_input[GA_NARROW_MAX_INPUTS];

				if (e < 0)
					continue;
#pragma unroll
				for (int s = 0; s < GA_NARROW_MAX_INPUTS; s++)
					row_input[s] = input[s][u][r];
				narrow_fold<ValT, SUM32>(f, e, row_input);
			}
		}
	}

	/* the rows after the last whole quad (fewer than 4): block 0 */
	if (blockIdx.x == 0 && threadIdx.x < nrows - 4 * quads)
	{
		const int64_t row = 4 * quads + threadIdx.x;
		const int	e = narrow_entry<KeyT>(key_column[row], lo, values, narrow.replica_bits,
										   copy, control, escape_rows, row);
		ValT		row_input[GA_NARROW_MAX_INPUTS];

#pragma unroll
		for (int s = 0; s < GA_NARROW_MAX_INPUTS; s++)
			row_input[s] = s < f.ninputs ? input_column[s][row] : 0;
		if (e >= 0)
			narrow_fold<ValT, SUM32>(f, e, row_input);
	}
	__syncthreads();
	narrow_copy_counts(aggs, smem, table_entries, count_agg);
	__syncthreads();
	merge_direct_entries(perfect, aggs, smem, table_entries, nullptr, replicas, count_agg);
}

/* perfect with a range beyond shared memory: global atomics, block caches. */
__global__ void __launch_bounds__(GA_SHARED_BLOCK_MAX, 2)
direct_global_kernel(const GaDevKeys keys, const GaDevPerfect perfect,
					 const GaDevAggs aggs, int64_t nrows, GaDevControl *control,
					 int32_t *escape_rows, int cache_bits)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const int64_t cache_entries = 1 << cache_bits;
	long long  *tags = (long long *) smem;
	unsigned char *cache = smem + 8 * cache_entries;
	const int64_t tile = (int64_t) blockDim.x * GA_ITEMS;

	for (int64_t s = threadIdx.x; s < cache_entries; s += blockDim.x)
		tags[s] = GA_CACHE_EMPTY;
	shared_init_all(aggs, cache, cache_entries, cache_entries);
	__syncthreads();

	for (int64_t base = (int64_t) blockIdx.x * tile; base < nrows;
		 base += (int64_t) gridDim.x * tile)
	{
		int64_t		rows[GA_ITEMS];
		long long	index[GA_ITEMS];
		long long	entry[GA_ITEMS];

#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			rows[j] = base + (int64_t) j * blockDim.x + threadIdx.x;
			index[j] = rows[j] < nrows ? perfect_index(keys, perfect, rows[j]) : -2;
		}
#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			entry[j] = -1;
			if (index[j] == -1)
				append_escape(control, escape_rows, rows[j]);
			else if (index[j] >= 0)
			{
				entry[j] = cache_entry(tags, cache_bits, index[j]);
				if (entry[j] < 0)
					mark_seen(perfect.seen, index[j]);
			}
		}
		for (int a = 0; a < aggs.naggs; a++)
		{
			const GaDevAgg &agg = aggs.aggs[a];
			unsigned char *arr = shared_array(cache, agg, cache_entries);
			long long	v[GA_ITEMS];
			bool		present[GA_ITEMS];

			load_items(agg, rows, index, v, present);
#pragma unroll
			for (int j = 0; j < GA_ITEMS; j++)
			{
				if (!present[j] || index[j] < 0)
					continue;
				if (entry[j] >= 0)
					shared_fold(agg.op, agg.shared_width, arr, entry[j], v[j]);
				else
				{
					int64_t		g;
					unsigned char *target = perfect_target(perfect, agg, index[j], &g);

					global_fold(agg.op, target, g, v[j]);
				}
			}
		}
	}
	__syncthreads();

	for (int64_t s = threadIdx.x; s < cache_entries; s += blockDim.x)
	{
		long long	e = tags[s];

		if (e < 0)
			continue;
		mark_seen(perfect.seen, e);
		for (int a = 0; a < aggs.naggs; a++)
		{
			int64_t		g;
			unsigned char *target = perfect_target(perfect, aggs.aggs[a], e, &g);

			shared_merge(aggs.aggs[a].op, aggs.aggs[a].shared_width,
						 shared_array(cache, aggs.aggs[a], cache_entries), s, target, g);
		}
	}
}

/* Set every perfect entry to the identities (full widths). */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
init_perfect_kernel(const GaDevPerfect perfect, const GaDevAggs aggs)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		 e < perfect.entries; e += stride)
		for (int a = 0; a < aggs.naggs; a++)
			init_group(aggs.aggs[a].op,
					   perfect.acc + e * perfect.entry_bytes + aggs.aggs[a].perfect_offset, 0);
}

/* *counter += the bits set in the perfect bitmap. */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
count_perfect_kernel(const GaDevPerfect perfect, unsigned long long *counter)
{
	const int64_t words = (perfect.entries + 31) / 32;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	unsigned long long n = 0;

	for (int64_t w = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; w < words; w += stride)
		n += __popc(perfect.seen[w]);
	for (int offset = 16; offset > 0; offset >>= 1)
		n += __shfl_down_sync(0xffffffffu, n, offset);
	if ((threadIdx.x & 31) == 0 && n > 0)
		atomicAdd(counter, n);
}

/*
 * Append the perfect entries seen to the group arrays, from group id `base`
 * on: one thread per entry, a warp covering one word of the bitmap reserves
 * the places of its entries seen with one atomic (their order within the
 * word from a ballot), then each entry's keys are decoded from its index and
 * its accumulators copied (the group arrays at those ids still hold
 * identities and nothing else touches them).  A thread per entry, not per
 * word: the decoding divides, and 32 entries one after another in one
 * thread made this a single slow block for small tables.
 */
__global__ void __launch_bounds__(GA_GPU_BLOCK_THREADS)
gather_perfect_kernel(const GaDevPerfect perfect, const GaDevAggs aggs,
					  const GaDevTable table, int64_t base, unsigned long long *counter)
{
	const int64_t words = (perfect.entries + 31) / 32;
	const int64_t warps = (int64_t) gridDim.x * (blockDim.x / 32);
	const unsigned int lane = threadIdx.x & 31;
	const int64_t capacity = table.capacity;

	for (int64_t w = (int64_t) blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; w < words;
		 w += warps)
	{
		const unsigned int bits = perfect.seen[w];
		const long long e = w * 32 + lane;
		unsigned long long start = 0;
		int64_t		g;
		long long	mask = 0;

		if (bits == 0)
			continue;			/* warp-uniform: the whole warp reads one word */
		if (lane == 0)
			start = atomicAdd(counter, (unsigned long long) __popc(bits));
		start = __shfl_sync(0xffffffffu, start, 0);
		if (!((bits >> lane) & 1))
			continue;
		g = base + (int64_t) start + __popc(bits & ((1u << lane) - 1));
		for (int k = 0; k < perfect.nkeys; k++)
		{
			long long	digit = (e / perfect.stride[k]) % perfect.base[k];

			if (digit == perfect.base[k] - 1)
			{
				mask |= 1LL << k;
				table.keys[(int64_t) (k + 1) * capacity + g] = 0;
			}
			else
				table.keys[(int64_t) (k + 1) * capacity + g] = perfect.lo[k] + digit;
		}
		table.keys[g] = mask;
		for (int a = 0; a < aggs.naggs; a++)
		{
			const unsigned char *src = perfect.acc + e * perfect.entry_bytes +
				aggs.aggs[a].perfect_offset;
			unsigned char *dst = (unsigned char *) aggs.aggs[a].acc;

			switch (aggs.aggs[a].op)
			{
				case GA_AGG_SUM_INT:
					((unsigned long long *) dst)[2 * g] = ((const unsigned long long *) src)[0];
					((unsigned long long *) dst)[2 * g + 1] = ((const unsigned long long *) src)[1];
					break;
				case GA_AGG_SUM_FLOAT32:
					((float *) dst)[g] = *(const float *) src;
					break;
				default:
					((unsigned long long *) dst)[g] = *(const unsigned long long *) src;
					break;
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * The fused shared-memory hash table
 * ------------------------------------------------------------------------
 */

/*
 * shared with packed keys, one pass (see the file header).  NW is the
 * instantiated number of key words for the global lookups.
 */
template <int NW>
__global__ void __launch_bounds__(GA_SHARED_BLOCK_MAX, 2)
fused_shared_kernel(const GaDevKeys keys, const GaDevPack pack, const GaDevTable table,
					const GaDevAggs aggs, int64_t nrows, GaDevControl *control,
					int32_t *escape_rows, int nslots, int replicas)
{
	extern __shared__ __align__(16) unsigned char smem[];
	unsigned long long *slot_keys = (unsigned long long *) smem;
	unsigned char *accs = smem + 8 * (int64_t) nslots;
	const int64_t table_entries = (int64_t) nslots * replicas;
	const int	copy = threadIdx.x & (replicas - 1);
	const int64_t tile = (int64_t) blockDim.x * GA_ITEMS;

	for (int s = threadIdx.x; s < nslots; s += blockDim.x)
		slot_keys[s] = GA_PACK_EMPTY;
	shared_init_all(aggs, accs, table_entries, table_entries);
	__syncthreads();

	for (int64_t base = (int64_t) blockIdx.x * tile; base < nrows;
		 base += (int64_t) gridDim.x * tile)
	{
		int64_t		rows[GA_ITEMS];
		unsigned long long packed[GA_ITEMS];
		long long	index[GA_ITEMS];

#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			rows[j] = base + (int64_t) j * blockDim.x + threadIdx.x;
			packed[j] = rows[j] < nrows ? pack_key(keys, pack, rows[j]) : 0;
		}
#pragma unroll
		for (int j = 0; j < GA_ITEMS; j++)
		{
			index[j] = -2;
			if (rows[j] < nrows)
			{
				int			s = packed[j] == GA_PACK_EMPTY ? -1 :
					local_slot(slot_keys, nslots, packed[j]);

				if (s < 0)
					append_escape(control, escape_rows, rows[j]);
				else
					index[j] = (long long) s * replicas + copy;
			}
		}
		fold_items_shared(aggs, accs, table_entries, rows, index);
	}
	__syncthreads();

	/* the group ids of this block's keys; the slot keeps the id from here on */
	for (int i = threadIdx.x; i < nslots; i += blockDim.x)
	{
		const int	s = (int) staggered(i, nslots);
		unsigned long long k = slot_keys[s];

		if (k != GA_PACK_EMPTY)
		{
			long long	words[NW];

			unpack_key<NW>(pack, k, words);
			slot_keys[s] = (unsigned long long) (long long) find_or_insert<NW>(table, words,
																			 keys.nkeys + 1);
		}
	}

	cg::this_grid().sync();
	if (((volatile GaDevControl *) control)->overflow)
		return;					/* the host grows the table and runs us again */

	for (int i = threadIdx.x; i < nslots; i += blockDim.x)
	{
		const int	s = (int) staggered(i, nslots);
		long long	g = (long long) slot_keys[s];

		if (slot_keys[s] == GA_PACK_EMPTY || g < 0)
			continue;
		for (int a = 0; a < aggs.naggs; a++)
			shared_merge_replicas(aggs.aggs[a], shared_array(accs, aggs.aggs[a], table_entries),
								  s, replicas, (unsigned char *) aggs.aggs[a].acc, g);
	}
	if (blockIdx.x == 0 && threadIdx.x == 0)
		control->merged = 1;
}

/* ------------------------------------------------------------------------
 * Launch functions
 * ------------------------------------------------------------------------
 */

/*
 * Rows a block of a one-pass kernel should get at least, so that its
 * table's initialisation and merge (table_entries) stay a small part of
 * its work.
 */
static int64_t
rows_per_block(int threads, int64_t table_entries)
{
	int64_t		rows = 4 * (int64_t) threads * GA_ITEMS;

	return rows > 4 * table_entries ? rows : 4 * table_entries;
}

/* Whether a device pointer allows the narrow kernel's 16-byte loads. */
static bool
aligned16(const void *p)
{
	return ((uintptr_t) p & 15) == 0;
}

/*
 * Whether direct_narrow_kernel takes this batch (see it), which of its
 * aggregates read a column (*narrow), and with which widths: *key_wide /
 * *value_wide say int64 rather than int32 (the columns the aggregates read
 * must have one width); *sum32 says that the only one is an 8-byte integer
 * sum and the counts are 4 bytes wide.
 */
static bool
narrow_shape(const GaDevKeys *keys, const GaDevPerfect *perfect, const GaDevAggs *aggs,
			 int count_agg, int replicas, GaDevNarrow *narrow, bool *key_wide,
			 bool *value_wide, bool *sum32)
{
	const GaDevColumn *key = &keys->columns[0];
	int			value_type = -1;

	memset(narrow, 0, sizeof(*narrow));
	if (keys->nkeys != 1 || perfect->nkeys != 1 || perfect->seen == nullptr ||
		perfect->stride[0] != 1 || count_agg < 0 || key->validity != nullptr ||
		(key->type != GA_TYPE_INT32 && key->type != GA_TYPE_INT64) || !aligned16(key->values) ||
		perfect->entries * replicas > INT_MAX)
		return false;
	for (int a = 0; a < aggs->naggs; a++)
	{
		const GaDevAgg *agg = &aggs->aggs[a];

		if (agg->op == GA_AGG_COUNT_ROWS ||
			(agg->op == GA_AGG_COUNT && agg->input.validity == nullptr))
			continue;
		if ((agg->op != GA_AGG_SUM_INT && agg->op != GA_AGG_MIN && agg->op != GA_AGG_MAX) ||
			agg->input_is_float || agg->input.validity != nullptr ||
			(agg->input.type != GA_TYPE_INT32 && agg->input.type != GA_TYPE_INT64) ||
			(value_type >= 0 && agg->input.type != value_type) ||
			!aligned16(agg->input.values) || narrow->ninputs == GA_NARROW_MAX_INPUTS)
			return false;
		value_type = agg->input.type;
		narrow->agg[narrow->ninputs++] = a;
	}
	while ((1 << narrow->replica_bits) < replicas)
		narrow->replica_bits++;
	*key_wide = key->type == GA_TYPE_INT64;
	*value_wide = value_type == GA_TYPE_INT64;
	*sum32 = narrow->ninputs == 1 && !*value_wide &&
		aggs->aggs[narrow->agg[0]].op == GA_AGG_SUM_INT &&
		aggs->aggs[narrow->agg[0]].shared_width == 8 &&
		aggs->aggs[count_agg].shared_width == 4;
	return true;
}

/* Launch one instantiation of direct_narrow_kernel. */
template <typename KeyT, typename ValT, int U, bool SUM32>
static cudaError_t
launch_direct_narrow(const GaDevKeys *keys, const GaDevPerfect *perfect,
					 const GaDevAggs *aggs, const GaDevNarrow *narrow, int64_t nrows,
					 GaDevControl *control, int32_t *escape_rows, int count_agg,
					 size_t shared_bytes, int sm_count, const GaLaunchParams *launch,
					 cudaStream_t stream)
{
	const void *kernel = (const void *) direct_narrow_kernel<KeyT, ValT, U, SUM32>;
	GaLaunchShape shape;
	int			threads;
	int			grid;
	cudaError_t err;

	err = ga_shared_shape_tuned(kernel, shared_bytes, launch, &shape);
	if (err != cudaSuccess)
		return err;
	/*
	 * Every block merges its whole table into the perfect entries with
	 * global atomics at its end, all blocks at about the same moment, so
	 * the merges of many blocks over a table of many entries contend: for
	 * such a table, blocks of GA_NARROW_BLOCK_MAX threads when one fits, a
	 * few times fewer blocks to merge for about as many threads.
	 */
	threads = shape.threads;
	if (perfect->entries >= GA_NARROW_LARGE_ENTRIES && ga_tuned_threads(launch, 0, 1024) == 0)
	{
		int			per_sm = 0;

		err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
															 GA_NARROW_BLOCK_MAX, shared_bytes);
		if (err != cudaSuccess)
			return err;
		if (per_sm >= 1)
			threads = GA_NARROW_BLOCK_MAX;
	}
	err = ga_grid_size_tuned(kernel, threads, shared_bytes, sm_count, launch, nrows,
							 rows_per_block(threads, perfect->entries << narrow->replica_bits),
							 &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	direct_narrow_kernel<KeyT, ValT, U, SUM32><<<grid, threads, shared_bytes, stream>>>(
		*keys, *perfect, *aggs, *narrow, nrows, control, escape_rows, count_agg);
	return cudaGetLastError();
}

/* Launch the direct_narrow_kernel instantiation for a narrow batch's widths. */
static cudaError_t
launch_direct_narrow_for(const GaDevKeys *keys, const GaDevPerfect *perfect,
						 const GaDevAggs *aggs, const GaDevNarrow *narrow, bool key_wide,
						 bool value_wide, bool sum32, int64_t nrows, GaDevControl *control,
						 int32_t *escape_rows, int count_agg, size_t shared_bytes,
						 int sm_count, const GaLaunchParams *launch, cudaStream_t stream)
{
#define GA_NARROW_LAUNCH(K, V, U, S) \
	launch_direct_narrow<K, V, U, S>(keys, perfect, aggs, narrow, nrows, control, escape_rows, \
									 count_agg, shared_bytes, sm_count, launch, stream)
	if (!key_wide)
	{
		if (sum32)
			return GA_NARROW_LAUNCH(int, int, 2, true);
		return value_wide ? GA_NARROW_LAUNCH(int, long long, 1, false) :
			GA_NARROW_LAUNCH(int, int, 2, false);
	}
	if (sum32)
		return GA_NARROW_LAUNCH(long long, int, 2, true);
	return value_wide ? GA_NARROW_LAUNCH(long long, long long, 1, false) :
		GA_NARROW_LAUNCH(long long, int, 2, false);
#undef GA_NARROW_LAUNCH
}

/* Launch direct_shared_kernel. */
cudaError_t
ga_launch_direct_shared(const GaDevKeys *keys, const GaDevPerfect *perfect,
						const GaDevAggs *aggs, int64_t nrows, GaDevControl *control,
						int32_t *escape_rows, int replicas, int sm_count,
						const GaLaunchParams *launch, cudaStream_t stream)
{
	size_t		shared_bytes = ga_direct_shared_bytes(perfect->entries, replicas,
													  aggs->shared_state);
	const void *kernel = (const void *) direct_shared_kernel;
	GaLaunchShape shape;
	int			grid;
	cudaError_t err;
	int			count_agg = -1;
	GaDevNarrow narrow;
	bool		key_wide;
	bool		value_wide;
	bool		sum32;

	if (nrows <= 0)
		return cudaSuccess;
	/* an aggregate that counts every row of this batch tells the entries seen */
	for (int a = 0; a < aggs->naggs && count_agg < 0; a++)
		if (aggs->aggs[a].op == GA_AGG_COUNT_ROWS ||
			(aggs->aggs[a].op == GA_AGG_COUNT && aggs->aggs[a].input.validity == NULL))
			count_agg = a;
	if (narrow_shape(keys, perfect, aggs, count_agg, replicas, &narrow, &key_wide, &value_wide,
					 &sum32))
		return launch_direct_narrow_for(keys, perfect, aggs, &narrow, key_wide, value_wide,
										sum32, nrows, control, escape_rows, count_agg,
										shared_bytes, sm_count, launch, stream);
	err = ga_shared_shape_tuned(kernel, shared_bytes, launch, &shape);
	if (err != cudaSuccess)
		return err;
	err = ga_grid_size_tuned(kernel, shape.threads, shared_bytes, sm_count, launch, nrows,
							 rows_per_block(shape.threads, perfect->entries * replicas), &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	direct_shared_kernel<<<grid, shape.threads, shared_bytes, stream>>>(*keys, *perfect, *aggs,
																	  nrows, control,
																	  escape_rows, replicas,
																	  count_agg);
	return cudaGetLastError();
}

/* Launch direct_global_kernel. */
cudaError_t
ga_launch_direct_global(const GaDevKeys *keys, const GaDevPerfect *perfect,
						const GaDevAggs *aggs, int64_t nrows, GaDevControl *control,
						int32_t *escape_rows, int cache_bits, int sm_count,
						const GaLaunchParams *launch, cudaStream_t stream)
{
	size_t		shared_bytes = ga_cache_shared_bytes(cache_bits, aggs->shared_state);
	const void *kernel = (const void *) direct_global_kernel;
	GaLaunchShape shape;
	int			grid;
	cudaError_t err;

	if (nrows <= 0)
		return cudaSuccess;
	err = ga_shared_shape_tuned(kernel, shared_bytes, launch, &shape);
	if (err != cudaSuccess)
		return err;
	err = ga_grid_size_tuned(kernel, shape.threads, shared_bytes, sm_count, launch, nrows,
							 rows_per_block(shape.threads, (int64_t) 1 << cache_bits), &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	direct_global_kernel<<<grid, shape.threads, shared_bytes, stream>>>(*keys, *perfect, *aggs,
																	  nrows, control,
																	  escape_rows, cache_bits);
	return cudaGetLastError();
}

/* Launch the fused kernel instantiated for NW key words, cooperatively. */
template <int NW>
static cudaError_t
launch_fused_shared(const GaDevKeys *keys, const GaDevPack *pack, const GaDevTable *table,
					const GaDevAggs *aggs, int64_t nrows, GaDevControl *control,
					int32_t *escape_rows, int64_t nslots, int replicas, int sm_count,
					const GaLaunchParams *launch, cudaStream_t stream)
{
	size_t		shared_bytes = ga_fused_shared_bytes(nslots, replicas, aggs->shared_state);
	const void *kernel = (const void *) fused_shared_kernel<NW>;
	GaLaunchShape shape;
	int64_t		needed;
	int			grid;
	int			nslots_arg = (int) nslots;
	cudaError_t err;
	void	   *args[] = {(void *) keys, (void *) pack, (void *) table, (void *) aggs,
		(void *) &nrows, (void *) &control, (void *) &escape_rows,
	(void *) &nslots_arg, (void *) &replicas};

	err = ga_shared_shape_tuned(kernel, shared_bytes, launch, &shape);
	if (err != cudaSuccess)
		return err;
	if (shape.blocks_per_sm < 1)
		return cudaErrorNotSupported;
	/* every block must be resident for the grid synchronisation */
	needed = (nrows + rows_per_block(shape.threads, nslots * replicas) - 1) /
		rows_per_block(shape.threads, nslots * replicas);
	grid = (int) (needed < (int64_t) shape.blocks_per_sm * sm_count ?
				  needed : (int64_t) shape.blocks_per_sm * sm_count);
	if (grid < 1)
		grid = 1;
	ga_clear_stale_error();
	err = cudaLaunchCooperativeKernel(kernel, grid, shape.threads, args, shared_bytes, stream);
	if (err == cudaErrorCooperativeLaunchTooLarge || err == cudaErrorNotSupported)
	{
		ga_clear_stale_error();
		return cudaErrorNotSupported;
	}
	return err;
}

/* Launch the fused kernel with the instantiation that holds nkeys + 1 words. */
cudaError_t
ga_launch_fused_shared(const GaDevKeys *keys, const GaDevPack *pack, const GaDevTable *table,
					   const GaDevAggs *aggs, int64_t nrows, GaDevControl *control,
					   int32_t *escape_rows, int64_t nslots, int replicas, int sm_count,
					   const GaLaunchParams *launch, cudaStream_t stream)
{
	int			nwords = keys->nkeys + 1;

	if (nrows <= 0)
		return cudaSuccess;
	if (nwords <= 2)
		return launch_fused_shared<2>(keys, pack, table, aggs, nrows, control, escape_rows,
									  nslots, replicas, sm_count, launch, stream);
	if (nwords <= 3)
		return launch_fused_shared<3>(keys, pack, table, aggs, nrows, control, escape_rows,
									  nslots, replicas, sm_count, launch, stream);
	if (nwords <= 5)
		return launch_fused_shared<5>(keys, pack, table, aggs, nrows, control, escape_rows,
									  nslots, replicas, sm_count, launch, stream);
	if (nwords <= GA_PACK_MAX_KEYS + 1)
		return launch_fused_shared<GA_PACK_MAX_KEYS + 1>(keys, pack, table, aggs, nrows,
														 control, escape_rows, nslots,
														 replicas, sm_count, launch, stream);
	return cudaErrorNotSupported;
}

/* Launch the perfect entries' initialisation. */
cudaError_t
ga_launch_init_perfect(const GaDevPerfect *perfect, const GaDevAggs *aggs, int sm_count,
					   cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	if (aggs->naggs == 0 || perfect->entries <= 0)
		return cudaSuccess;
	err = ga_grid_size((const void *) init_perfect_kernel, GA_GPU_BLOCK_THREADS, 0, sm_count,
					   perfect->entries, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	init_perfect_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*perfect, *aggs);
	return cudaGetLastError();
}

/* Launch the count of perfect entries seen. */
cudaError_t
ga_launch_count_perfect(const GaDevPerfect *perfect, unsigned long long *counter,
						int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	err = ga_grid_size((const void *) count_perfect_kernel, GA_GPU_BLOCK_THREADS, 0, sm_count,
					   (perfect->entries + 31) / 32, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	count_perfect_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*perfect, counter);
	return cudaGetLastError();
}

/* Launch the gathering of the perfect entries into the group arrays. */
cudaError_t
ga_launch_gather_perfect(const GaDevPerfect *perfect, const GaDevAggs *aggs,
						 const GaDevTable *table, int64_t base,
						 unsigned long long *counter, int sm_count, cudaStream_t stream)
{
	int			grid;
	cudaError_t err;

	err = ga_grid_size((const void *) gather_perfect_kernel, GA_GPU_BLOCK_THREADS, 0, sm_count,
					   perfect->entries, GA_GPU_BLOCK_THREADS, &grid);
	if (err != cudaSuccess)
		return err;
	ga_clear_stale_error();
	gather_perfect_kernel<<<grid, GA_GPU_BLOCK_THREADS, 0, stream>>>(*perfect, *aggs, *table,
																	base, counter);
	return cudaGetLastError();
}
