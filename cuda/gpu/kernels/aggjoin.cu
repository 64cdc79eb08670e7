/*-------------------------------------------------------------------------
 *
 * gpu/kernels/aggjoin.cu
 *	  The aggjoin's device steps between a join step's probe
 *	  (gpu/kernels/hashjoin.cu) and the aggregation kernels
 *	  (gpu/kernels/hashagg*.cu):
 *	  the scan that numbers a step's rows, the expansion that writes them as
 *	  a level of sources for the next step, and the gather that writes
 *	  columns of them (the last step's rows into the aggregation's input, a
 *	  level's key column for the next probe).
 *
 * This is the two-pass output scheme of the cuckoo hash join report: a
 * first pass (the probe) counts each row's matches, a prefix sum gives every row its place in the
 * output, and a second pass writes the output without any atomics or
 * overflow, as He et al. ("Relational joins on graphics processors",
 * section 4: count, scan, write) do for their joins.  Here the second pass
 * is split into pieces of at most batch_rows rows, so that a skewed key
 * never needs more memory than a batch, and it is driven by output rows:
 * a thread takes output row j, finds its level row by binary search in the
 * scanned counts, and its build row as the (j - start of the row)-th of
 * the row's key-sorted range, so the work is even however skewed the
 * matches are.  A piece may be appended after rows already written
 * (dst_offset), so that every piece but a submit's last is full.
 *
 * Scan: cub::DeviceScan::InclusiveSum over the uint32 counts seen through
 * a transform iterator that widens them to 64 bits and applies the join
 * type (LEFT, FULL: 0 counts 1; ANTI: only 0 counts, as 1), so the rows per
 * level row are never stored: probe, scan and write are the only passes.
 *
 * Gather: one thread per output row in a grid-stride loop whose steps keep
 * every warp on 32 consecutive destination rows aligned to 32, so that a
 * column's validity bits for those rows are one __ballot_sync and one
 * 32-bit store by lane 0 (bit i of byte i / 8 is row i, as in GaColumn, on
 * a little-endian device); a word that also holds rows outside the piece
 * (before dst_offset, or past its end) is merged with what it holds, which
 * is safe because one warp owns each word in a launch and launches are
 * stream-ordered.  The column descriptions are staged in shared memory
 * once per block.  For a RIGHT or FULL step the gather (last step) or the
 * expansion (any other) also stores 1 in the matched byte of every build
 * row it writes a row of (a plain store: every writer stores the same
 * value, so no atomics are needed); at finish cub::DeviceSelect::Flagged
 * lists the unmarked build rows a chunk at a time (the flags a transform
 * iterator over the bytes, the items a counting iterator), and the gather
 * or the expansion writes them with every earlier side's columns null.
 *
 * Hashed steps (several keys, or string keys): one thread per level row
 * in a grid-stride loop, before the probe (the hash of the row's key
 * columns, join_key.h's, the same as the host's: a string's as
 * ga_hash_bytes of its bytes) and after it (the recheck of the row's key
 * against its first candidate's build key columns, strings by length and
 * then byte by byte: the Rapids report's compare of the keys themselves
 * after a hash of all of them).  A null key column is dealt with by the
 * recheck alone (its count cleared), so the hash kernel writes no bitmap
 * and the probe reads none.  A string's end offsets are clamped to the
 * bytes copied, so every read stays within them.
 *
 * String group keys: one thread per row of a piece writes its value's
 * length (read where it lives, through the row's sources, as the gather
 * reads a column), an in-place cub::DeviceScan::InclusiveSum gives the end
 * offsets within the piece, one thread finds by binary search how many
 * rows fit the bytes the destination has left after the rows before the
 * piece (atomicMin over the keys), and one thread per row then writes its
 * end offset after those rows' and copies its bytes, a byte at a time
 * (as the string gather of GpuHashAgg's results does).  Each row's bytes
 * are a range of their own, so no two threads write one byte, and every
 * write is clamped to the destination's capacity.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.cuh"
#include "join_key.h"
#include "row_filter.h"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <limits.h>

/* The rows a level row gives at a step of one join type, from its matches. */
struct PairCount
{
	int			type;

	__host__ __device__ unsigned long long
	operator() (uint32_t count) const
	{
		if (type == GA_AGGJOIN_ANTI)
			return count == 0 ? 1ULL : 0ULL;
		if ((type == GA_AGGJOIN_LEFT || type == GA_AGGJOIN_FULL) && count == 0)
			return 1ULL;
		return (unsigned long long) count;
	}
};

/* Whether a build row's matched byte is still 0 (a select flag). */
struct IsUnmatched
{
	__host__ __device__ bool
	operator() (uint8_t matched) const
	{
		return matched == 0;
	}
};

/*
 * Step row j's level row *p (the first with pair_ends[*p] > j) and build
 * row *b (GA_AGGJOIN_NO_ROW when *p has no match: LEFT, FULL, ANTI).
 * Without pairs, j is level row j; for unmatched build rows, *p is -1 (no
 * level row: every other side null) and *b the listed build row.  With a
 * pair list, j is first mapped to the pair it lists.
 */
__device__ __forceinline__ void
aggjoin_pair_source(const GaDevPairs &pairs, int64_t j, int64_t *p, uint32_t *b)
{
	int64_t		lo = 0,
				hi = pairs.nlevel;

	*b = GA_AGGJOIN_NO_ROW;
	if (pairs.pair_list != nullptr)
		j = pairs.pair_list_base + (int64_t) __ldg(pairs.pair_list + j);
	if (pairs.unmatched_rows != nullptr)
	{
		*p = -1;
		*b = __ldg(pairs.unmatched_rows + j);
		return;
	}
	if (pairs.pair_ends == nullptr)
	{
		*p = j;
		return;
	}
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (__ldg(pairs.pair_ends + mid) <= (unsigned long long) j)
			lo = mid + 1;
		else
			hi = mid;
	}
	*p = lo;
	if (__ldg(pairs.count + lo) > 0)
	{
		unsigned long long row_start = lo > 0 ? __ldg(pairs.pair_ends + lo - 1) : 0ULL;

		*b = __ldg(pairs.sorted_rows + __ldg(pairs.first + lo) +
				   ((unsigned long long) j - row_start));
	}
}

/* Level row p's row on side `side` (its probe row, or build row of step side); -1: none. */
__device__ __forceinline__ int64_t
aggjoin_level_source(const GaDevLevel &level, int side, int64_t p)
{
	uint32_t	b;

	if (side == 0)
		return level.probe_rows == nullptr ? p :
			(int64_t) __ldg((const long long *) level.probe_rows + p);
	b = __ldg(level.build_rows[side] + p);
	return b == GA_AGGJOIN_NO_ROW ? -1 : (int64_t) b;
}

/*
 * Write rows [start, start + n) of pairs as destination rows
 * [dst_offset, dst_offset + n) of every column: a column of the pairs'
 * step takes the row's build row, any other its level row's source (null
 * for an unmatched build row, which has no level row); mark each build
 * row written in pairs.matched when it is given.
 */
__global__ void __launch_bounds__(GA_AGGJOIN_BLOCK_THREADS)
aggjoin_gather_kernel(const GaDevGatherColumn *columns, int ncolumns, GaDevPairs pairs,
					  GaDevLevel from, int64_t start, int64_t n, int64_t dst_offset)
{
	extern __shared__ GaDevGatherColumn shared_columns[];
	const int	lane = threadIdx.x & 31;
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	const int64_t dst_end = dst_offset + n;

	for (int k = threadIdx.x; k < ncolumns; k += blockDim.x)
		shared_columns[k] = columns[k];
	__syncthreads();

	/* base: the warp's first row, a multiple of 32, the same in every lane */
	for (int64_t base = (dst_offset & ~(int64_t) 31) +
		 (int64_t) blockIdx.x * blockDim.x + threadIdx.x - lane;
		 base < dst_end; base += stride)
	{
		const int64_t d = base + lane;
		const bool	active = d >= dst_offset && d < dst_end;
		int64_t		p = 0;
		uint32_t	b = GA_AGGJOIN_NO_ROW;

		if (active)
		{
			aggjoin_pair_source(pairs, start + (d - dst_offset), &p, &b);
			if (pairs.matched != nullptr && b != GA_AGGJOIN_NO_ROW)
				pairs.matched[b] = 1;
		}

		for (int k = 0; k < ncolumns; k++)
		{
			const GaDevGatherColumn *col = &shared_columns[k];
			int64_t		src = -1;
			bool		valid;

			if (active)
				src = col->side == pairs.step ?
					(b == GA_AGGJOIN_NO_ROW ? -1 : (int64_t) b) :
					(p < 0 ? -1 : aggjoin_level_source(from, col->side, p));
			valid = src >= 0;
			if (valid && col->src_validity != nullptr)
				valid = (__ldg(col->src_validity + (src >> 3)) >> (src & 7)) & 1;
			if (valid && col->dst_values != nullptr)
			{
				switch (col->width)
				{
					case 1:
						((uint8_t *) col->dst_values)[d] =
							__ldg((const unsigned char *) col->src_values + src);
						break;
					case 2:
						((uint16_t *) col->dst_values)[d] =
							__ldg((const unsigned short *) col->src_values + src);
						break;
					case 4:
						((uint32_t *) col->dst_values)[d] =
							__ldg((const unsigned int *) col->src_values + src);
						break;
					case 8:
						((unsigned long long *) col->dst_values)[d] =
							__ldg((const unsigned long long *) col->src_values + src);
						break;
					default:
						break;
				}
			}
			if (col->dst_validity != nullptr)
			{
				unsigned int word = __ballot_sync(0xffffffffu, valid);
				unsigned int mine = __ballot_sync(0xffffffffu, active);

				if (lane == 0)
				{
					unsigned int *dst = (unsigned int *) col->dst_validity + (base >> 5);

					*dst = mine == 0xffffffffu ? word : (*dst & ~mine) | word;
				}
			}
		}
	}
}

/*
 * Write rows [start, start + n) of a step's pairs over level `from` as
 * rows [dst_offset, dst_offset + n) of level `to`: the level row's
 * sources (none for an unmatched build row: probe row -1, earlier build
 * rows NO_ROW), then the step's build row; mark each build row written in
 * pairs.matched when it is given.
 */
__global__ void __launch_bounds__(GA_AGGJOIN_BLOCK_THREADS)
aggjoin_expand_kernel(GaDevPairs pairs, GaDevLevel from, GaDevLevel to, int64_t start,
					  int64_t n, int64_t dst_offset)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		const int64_t d = dst_offset + i;
		int64_t		p;
		uint32_t	b;

		aggjoin_pair_source(pairs, start + i, &p, &b);
		if (pairs.matched != nullptr && b != GA_AGGJOIN_NO_ROW)
			pairs.matched[b] = 1;
		to.probe_rows[d] = p < 0 ? -1 : aggjoin_level_source(from, 0, p);
		for (int t = 1; t < pairs.step; t++)
			to.build_rows[t][d] = p < 0 ? GA_AGGJOIN_NO_ROW : __ldg(from.build_rows[t] + p);
		to.build_rows[pairs.step][d] = b;
	}
}

/*
 * Row `row`'s string of a GA_TYPE_STRING column (end offsets `ends`):
 * where its bytes start and their length, clamped to the `capacity` bytes
 * that were copied (malformed offsets read nothing outside them).
 */
__device__ __forceinline__ void
aggjoin_string_at(const uint32_t *ends, uint32_t capacity, int64_t row, uint32_t *start,
				  uint32_t *len)
{
	uint32_t	end = __ldg(ends + row);
	uint32_t	begin = row > 0 ? __ldg(ends + row - 1) : 0;

	if (end > capacity)
		end = capacity;
	if (begin > end)
		begin = end;
	*start = begin;
	*len = end - begin;
}

/*
 * The row of level row r that string key column `str` reads (its source
 * on the column's side), or -1 when it has none or its value is null.
 */
__device__ __forceinline__ int64_t
aggjoin_string_row(const GaDevJoinString &str, const GaDevLevel &level, int64_t r)
{
	int64_t		src = aggjoin_level_source(level, str.side, r);

	if (src >= 0 && str.validity != nullptr &&
		!((__ldg(str.validity + (src >> 3)) >> (src & 7)) & 1))
		return -1;
	return src;
}

/*
 * Hash every row's key under the build's seed (join_key.h's, folded a
 * value at a time, so no key is held; a string as ga_hash_bytes of its
 * bytes; any value for a key with a null, which the recheck clears).
 */
__global__ void __launch_bounds__(GA_AGGJOIN_BLOCK_THREADS)
aggjoin_key_hash_kernel(GaDevJoinKey key, int64_t n, unsigned long long *hashes)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; r < n; r += stride)
	{
		uint64_t	h = ga_join_key_hash_start(key.seed);

		for (int i = 0; i < key.nkeys; i++)
		{
			const GaDevJoinString &str = key.strings[i];
			int64_t		v = 0;

			if (str.ends == nullptr)
				v = (int64_t) __ldg(key.values[i] + r);
			else
			{
				int64_t		src = aggjoin_string_row(str, key.level, r);
				uint32_t	start,
							len;

				if (src >= 0)
				{
					aggjoin_string_at(str.ends, str.capacity, src, &start, &len);
					v = (int64_t) ga_hash_bytes(str.bytes + start, len);
				}
			}
			h = ga_join_key_hash_add(h, v, i);
		}
		hashes[r] = (unsigned long long) h;
	}
}

/*
 * Whether string key column `str`'s value of level row r equals build row
 * b's: not null, of one length, and equal byte by byte.
 */
__device__ __forceinline__ bool
aggjoin_string_equal(const GaDevJoinString &str, const GaDevLevel &level, int64_t r, uint32_t b)
{
	int64_t		src = aggjoin_string_row(str, level, r);
	uint32_t	start,
				len,
				build_start,
				build_len;

	if (src < 0)
		return false;
	aggjoin_string_at(str.ends, str.capacity, src, &start, &len);
	aggjoin_string_at(str.build_ends, str.build_capacity, b, &build_start, &build_len);
	if (len != build_len)
		return false;
	for (uint32_t i = 0; i < len; i++)
		if (__ldg(str.bytes + start + i) != __ldg(str.build_bytes + build_start + i))
			return false;
	return true;
}

/*
 * Clear the count of every row whose key has a null or differs from its
 * first candidate's (all candidates of a hash hold one key: join_key.h).
 */
__global__ void __launch_bounds__(GA_AGGJOIN_BLOCK_THREADS)
aggjoin_key_recheck_kernel(GaDevJoinKey key, int64_t n, const uint32_t *sorted_rows,
						   const uint32_t *first, uint32_t *count)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; r < n; r += stride)
	{
		bool		same = true;
		uint32_t	b;

		if (count[r] == 0)
			continue;
		b = __ldg(sorted_rows + __ldg(first + r));
		for (int i = 0; i < key.nkeys && same; i++)
		{
			const uint8_t *validity = key.validity[i];

			if (key.strings[i].ends != nullptr)
				same = aggjoin_string_equal(key.strings[i], key.level, r, b);
			else
				same = (validity == nullptr || ((__ldg(validity + (r >> 3)) >> (r & 7)) & 1)) &&
					__ldg(key.values[i] + r) == __ldg(key.build_values[i] + b);
		}
		if (!same)
			count[r] = 0;
	}
}

/*
 * The source row of string group key `str` for row j of pairs (over level
 * `from`), as the gather kernel reads a column of the string's side: the
 * pair's build row for a column of the pairs' step, any other its level
 * row's source; -1 when there is none or the value there is null.
 */
__device__ __forceinline__ int64_t
aggjoin_gather_string_row(const GaDevGatherString &str, const GaDevPairs &pairs,
						  const GaDevLevel &from, int64_t j)
{
	int64_t		p = 0;
	uint32_t	b = GA_AGGJOIN_NO_ROW;
	int64_t		src;

	aggjoin_pair_source(pairs, j, &p, &b);
	src = str.side == pairs.step ?
		(b == GA_AGGJOIN_NO_ROW ? -1 : (int64_t) b) :
		(p < 0 ? -1 : aggjoin_level_source(from, str.side, p));
	if (src >= 0 && str.src_validity != nullptr &&
		!((__ldg(str.src_validity + (src >> 3)) >> (src & 7)) & 1))
		return -1;
	return src;
}

/* ends[i] = the length of row start + i's value of `str` (0: null or none). */
__global__ void __launch_bounds__(GA_AGGJOIN_BLOCK_THREADS)
aggjoin_string_lengths_kernel(GaDevGatherString str, GaDevPairs pairs, GaDevLevel from,
							  int64_t start, int64_t n, unsigned long long *ends)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		int64_t		src = aggjoin_gather_string_row(str, pairs, from, start + i);
		uint32_t	begin = 0,
					len = 0;

		if (src >= 0)
			aggjoin_string_at(str.src_ends, str.src_capacity, src, &begin, &len);
		ends[i] = (unsigned long long) len;
	}
}

/*
 * One thread: the rows of ends[0 .. n) (non-decreasing) that fit the
 * bytes left after destination row dst_offset - 1's end, folded into *fit
 * by a minimum over the string keys.
 */
__global__ void
aggjoin_string_fit_kernel(GaDevGatherString str, const unsigned long long *ends, int64_t n,
						  int64_t dst_offset, unsigned long long *fit)
{
	unsigned long long base = dst_offset > 0 ? (unsigned long long) str.dst_ends[dst_offset - 1] : 0;
	unsigned long long room = base < str.dst_capacity ? str.dst_capacity - base : 0;
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (ends[mid] <= room)
			lo = mid + 1;
		else
			hi = mid;
	}
	atomicMin(fit, (unsigned long long) lo);
}

/*
 * Write row start + i's value of `str` as destination row dst_offset + i:
 * its end offset (base, the end of row dst_offset - 1, plus ends[i]) and
 * its bytes, from the end before it.  Offsets are clamped to dst_capacity
 * and a copy to the length the scan gave, so no write leaves the
 * destination's bytes.
 */
__global__ void __launch_bounds__(GA_AGGJOIN_BLOCK_THREADS)
aggjoin_string_write_kernel(GaDevGatherString str, GaDevPairs pairs, GaDevLevel from,
							int64_t start, int64_t n, const unsigned long long *ends,
							int64_t dst_offset)
{
	const int64_t stride = (int64_t) gridDim.x * blockDim.x;
	const unsigned long long base = dst_offset > 0 ?
		(unsigned long long) str.dst_ends[dst_offset - 1] : 0;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		unsigned long long end = base + ends[i];
		unsigned long long begin = base + (i > 0 ? ends[i - 1] : 0ULL);

		if (end > str.dst_capacity)
			end = str.dst_capacity;
		if (begin > end)
			begin = end;
		str.dst_ends[dst_offset + i] = (uint32_t) end;
		if (end > begin)
		{
			int64_t		src = aggjoin_gather_string_row(str, pairs, from, start + i);
			uint32_t	src_start = 0,
						len = 0;

			if (src >= 0)
				aggjoin_string_at(str.src_ends, str.src_capacity, src, &src_start, &len);
			if ((unsigned long long) len > end - begin)
				len = (uint32_t) (end - begin);
			for (uint32_t k = 0; k < len; k++)
				str.dst_bytes[begin + k] = __ldg(str.src_bytes + src_start + k);
		}
	}
}

/* Inclusive prefix sum of the rows per level row at a step of `type`, 64-bit. */
cudaError_t
ga_aggjoin_pair_ends(void *temp, size_t *temp_bytes, const uint32_t *count,
					 unsigned long long *pair_ends, int64_t n, int type,
					 cudaStream_t stream)
{
	PairCount	op = {type};
	thrust::transform_iterator<PairCount, const uint32_t *, unsigned long long> pairs(count, op);

	return cub::DeviceScan::InclusiveSum(temp, *temp_bytes, pairs, pair_ends, n, stream);
}

/*
 * List the unmatched build rows of [base, base + n) in order: a stream
 * compaction of the row numbers flagged by a 0 matched byte.
 */
cudaError_t
ga_aggjoin_select_unmatched(void *temp, size_t *temp_bytes, const uint8_t *matched,
							uint32_t base, uint32_t *rows, unsigned long long *num_selected,
							int n, cudaStream_t stream)
{
	thrust::counting_iterator<uint32_t> items(base);
	thrust::transform_iterator<IsUnmatched, const uint8_t *, bool> flags(matched + base,
																		   IsUnmatched());

	return cub::DeviceSelect::Flagged(temp, *temp_bytes, items, flags, rows, num_selected, n,
									  stream);
}

/*
 * Blocks for a kernel over `rows` rows: as many as fit the device at once
 * (occupancy calculator, with `shared` bytes of dynamic shared memory per
 * block), but no more than there are blocks of rows.
 */
static cudaError_t
aggjoin_grid(const void *kernel, size_t shared, int64_t rows, int sm_count, int *grid)
{
	int			per_sm = 0;
	int64_t		blocks;
	cudaError_t err;

	err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
														 GA_AGGJOIN_BLOCK_THREADS, shared);
	if (err != cudaSuccess)
		return err;
	if (per_sm < 1)
		per_sm = 1;				/* the launch will report why it cannot run */
	blocks = (rows + GA_AGGJOIN_BLOCK_THREADS - 1) / GA_AGGJOIN_BLOCK_THREADS;
	if (blocks > (int64_t) (sm_count > 0 ? sm_count : 1) * per_sm)
		blocks = (int64_t) (sm_count > 0 ? sm_count : 1) * per_sm;
	if (blocks > INT_MAX)
		blocks = INT_MAX;
	*grid = (int) blocks;
	return cudaSuccess;
}

/* Launch the gather of n rows (the warps start at dst_offset rounded down to 32). */
cudaError_t
ga_launch_aggjoin_gather(const GaDevGatherColumn *columns, int ncolumns,
						 const GaDevPairs *pairs, const GaDevLevel *from, int64_t start,
						 int64_t n, int64_t dst_offset, int sm_count, cudaStream_t stream)
{
	size_t		shared = (size_t) (ncolumns > 0 ? ncolumns : 1) * sizeof(GaDevGatherColumn);
	int			grid = 0;
	cudaError_t err;

	if (n <= 0 || (ncolumns <= 0 && pairs->matched == nullptr))
		return cudaSuccess;		/* nothing to write (COUNT_ROWS only) */
	err = aggjoin_grid((const void *) aggjoin_gather_kernel, shared, n + (dst_offset & 31),
					   sm_count, &grid);
	if (err != cudaSuccess)
		return err;
	(void) cudaGetLastError();	/* clear a stale, already handled error */
	aggjoin_gather_kernel<<<grid, GA_AGGJOIN_BLOCK_THREADS, shared, stream>>>(
		columns, ncolumns, *pairs, *from, start, n, dst_offset);
	return cudaGetLastError();
}

/*
 * Launch a kernel of one thread per row over n rows (a grid-stride loop:
 * aggjoin_grid's blocks, no dynamic shared memory) with its arguments;
 * nothing for n <= 0.
 */
template <typename... Params, typename... Args>
static cudaError_t
aggjoin_launch_rows(void (*kernel) (Params...), int64_t n, int sm_count, cudaStream_t stream,
					Args... args)
{
	int			grid = 0;
	cudaError_t err;

	if (n <= 0)
		return cudaSuccess;
	err = aggjoin_grid((const void *) kernel, 0, n, sm_count, &grid);
	if (err != cudaSuccess)
		return err;
	(void) cudaGetLastError();	/* clear a stale, already handled error */
	kernel<<<grid, GA_AGGJOIN_BLOCK_THREADS, 0, stream>>>(args...);
	return cudaGetLastError();
}

/* Launch the expansion of n rows of a step into its level. */
cudaError_t
ga_launch_aggjoin_expand(const GaDevPairs *pairs, const GaDevLevel *from, const GaDevLevel *to,
						 int64_t start, int64_t n, int64_t dst_offset, int sm_count,
						 cudaStream_t stream)
{
	return aggjoin_launch_rows(aggjoin_expand_kernel, n, sm_count, stream, *pairs, *from, *to,
							   start, n, dst_offset);
}

/* The lengths of n rows' values of a string group key, then their prefix sum. */
cudaError_t
ga_aggjoin_string_ends(void *temp, size_t *temp_bytes, const GaDevGatherString *str,
					   const GaDevPairs *pairs, const GaDevLevel *from, int64_t start, int64_t n,
					   unsigned long long *ends, int sm_count, cudaStream_t stream)
{
	cudaError_t err;

	if (temp == NULL)
		return cub::DeviceScan::InclusiveSum(NULL, *temp_bytes, ends, ends, n, stream);
	if (n <= 0)
		return cudaSuccess;
	err = aggjoin_launch_rows(aggjoin_string_lengths_kernel, n, sm_count, stream, *str, *pairs,
							  *from, start, n, ends);
	if (err != cudaSuccess)
		return err;
	return cub::DeviceScan::InclusiveSum(temp, *temp_bytes, ends, ends, n, stream);
}

/* Launch the fit of n rows of a string group key (one thread). */
cudaError_t
ga_launch_aggjoin_string_fit(const GaDevGatherString *str, const unsigned long long *ends,
							 int64_t n, int64_t dst_offset, unsigned long long *fit,
							 cudaStream_t stream)
{
	(void) cudaGetLastError();	/* clear a stale, already handled error */
	aggjoin_string_fit_kernel<<<1, 1, 0, stream>>>(*str, ends, n, dst_offset, fit);
	return cudaGetLastError();
}

/* Launch the write of n rows of a string group key. */
cudaError_t
ga_launch_aggjoin_string_write(const GaDevGatherString *str, const GaDevPairs *pairs,
							   const GaDevLevel *from, int64_t start, int64_t n,
							   const unsigned long long *ends, int64_t dst_offset, int sm_count,
							   cudaStream_t stream)
{
	return aggjoin_launch_rows(aggjoin_string_write_kernel, n, sm_count, stream, *str, *pairs,
							   *from, start, n, ends, dst_offset);
}

/* Launch the hash of n rows' keys. */
cudaError_t
ga_launch_aggjoin_key_hash(const GaDevJoinKey *key, int64_t n, unsigned long long *hashes,
						   int sm_count, cudaStream_t stream)
{
	return aggjoin_launch_rows(aggjoin_key_hash_kernel, n, sm_count, stream, *key, n, hashes);
}

/* Launch the recheck of n rows' candidates. */
cudaError_t
ga_launch_aggjoin_key_recheck(const GaDevJoinKey *key, int64_t n, const uint32_t *sorted_rows,
							  const uint32_t *first, uint32_t *count, int sm_count,
							  cudaStream_t stream)
{
	return aggjoin_launch_rows(aggjoin_key_recheck_kernel, n, sm_count, stream, *key, n,
							   sorted_rows, first, count);
}

/* Whether bit r of a validity bitmap is set (NULL: every row valid). */
__device__ __forceinline__ int
aggjoin_valid(const uint8_t *validity, int64_t r)
{
	return validity == nullptr || ((validity[r >> 3] >> (r & 7)) & 1);
}

/*
 * Whether the filter's program leaves true for one row whose operand k of
 * step i is element row_of(i, k) of that operand's column (-1: null).
 */
template <typename RowOf>
__device__ __forceinline__ bool
aggjoin_filter_passes(const GaDevFilter &filter, RowOf row_of)
{
	GaFilterStack stack;

	stack.depth = 0;
	for (int i = 0; i < filter.nsteps; i++)
	{
		const GaFilterStep *step = &filter.steps[i];
		GaFilterValue v[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
		int			operands = step->op == GA_FILTER_COMPARE ? 2 :
			step->op == GA_FILTER_BOOL ? 1 : 0;

		for (int k = 0; k < operands; k++)
		{
			int64_t		r = row_of(i, k);

			v[k] = ga_filter_read(filter.values[i][k], filter.types[i][k], r,
								  r >= 0 && aggjoin_valid(filter.validity[i][k], r));
		}
		ga_filter_apply(&stack, step, v[0], v[1]);
	}
	return ga_filter_result(&stack);
}

/* One thread per row: run the filter's program and flag the rows it drops. */
__global__ void
aggjoin_filter_kernel(const GaDevFilter filter, int64_t n, uint8_t *drop)
{
	for (int64_t r = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; r < n;
		 r += (int64_t) gridDim.x * blockDim.x)
		drop[r] = aggjoin_filter_passes(filter, [r] (int, int) { return r; }) ? 0 : 1;
}

/*
 * One thread per pair: run a step's own filter over pair start + i (its
 * step's operands at its build row, the others at its level row's
 * sources), flag it when dropped, and mark its level row when it passes.
 */
__global__ void
aggjoin_pair_filter_kernel(const GaDevFilter filter, GaDevPairs pairs, GaDevLevel from,
						   int64_t start, int64_t n, uint8_t *drop, uint8_t *passed)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		p;
		uint32_t	b;
		bool		keep;

		aggjoin_pair_source(pairs, start + i, &p, &b);
		keep = aggjoin_filter_passes(filter, [&] (int step, int k) -> int64_t {
			int			side = filter.sides[step][k];

			if (side == pairs.step)
				return b == GA_AGGJOIN_NO_ROW ? -1 : (int64_t) b;
			return p < 0 ? -1 : aggjoin_level_source(from, side, p);
		});
		if (keep && p >= 0)
			passed[p] = 1;		/* every writer stores the same value */
		if (drop != nullptr)
			drop[i] = keep ? 0 : 1;
	}
}

/* One thread per level row: its count for the second pass (see the header). */
__global__ void
aggjoin_pass_counts_kernel(const uint8_t *passed, int keep_had, int64_t n, uint32_t *count)
{
	for (int64_t r = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; r < n;
		 r += (int64_t) gridDim.x * blockDim.x)
	{
		int			had = passed != nullptr ? passed[r] != 0 : count[r] > 0;

		count[r] = had == keep_had ? 0 : 1;
	}
}

/*
 * Block row blockIdx.y is column blockIdx.y: its rows rows[j] become rows
 * j (values by width), then its validity a byte (8 rows) per thread, so
 * that no two threads write one byte.
 */
__global__ void
aggjoin_compact_kernel(const GaDevGatherColumn *columns, const uint32_t *rows, int64_t m,
					   const unsigned char *input, unsigned char *scratch)
{
	const GaDevGatherColumn col = columns[blockIdx.y];
	int64_t		first = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	if (col.dst_values != nullptr)
	{
		const unsigned char *src = (const unsigned char *) col.dst_values;
		unsigned char *dst = scratch + (src - input);

		for (int64_t j = first; j < m; j += stride)
		{
			uint32_t	r = __ldg(rows + j);

			switch (col.width)
			{
				case 1:
					dst[j] = src[r];
					break;
				case 2:
					((uint16_t *) dst)[j] = ((const uint16_t *) src)[r];
					break;
				case 4:
					((uint32_t *) dst)[j] = ((const uint32_t *) src)[r];
					break;
				case 8:
					((unsigned long long *) dst)[j] = ((const unsigned long long *) src)[r];
					break;
				default:
					break;
			}
		}
	}
	if (col.dst_validity != nullptr)
	{
		const uint8_t *src = col.dst_validity;
		uint8_t    *dst = scratch + (src - input);

		for (int64_t q = first; q < (m + 7) / 8; q += stride)
		{
			uint8_t		byte = 0;

			for (int bit = 0; bit < 8 && q * 8 + bit < m; bit++)
				byte |= (uint8_t) (aggjoin_valid(src, __ldg(rows + q * 8 + bit)) << bit);
			dst[q] = byte;
		}
	}
}

/* Launch the filter over n rows. */
cudaError_t
ga_launch_aggjoin_filter(const GaDevFilter *filter, int64_t n, uint8_t *drop, int sm_count,
						 cudaStream_t stream)
{
	return aggjoin_launch_rows(aggjoin_filter_kernel, n, sm_count, stream, *filter, n, drop);
}

/* Launch a step's own filter over n of its pairs. */
cudaError_t
ga_launch_aggjoin_pair_filter(const GaDevFilter *filter, const GaDevPairs *pairs,
							  const GaDevLevel *from, int64_t start, int64_t n, uint8_t *drop,
							  uint8_t *passed, int sm_count, cudaStream_t stream)
{
	return aggjoin_launch_rows(aggjoin_pair_filter_kernel, n, sm_count, stream, *filter, *pairs,
							   *from, start, n, drop, passed);
}

/* Launch the second pass's counts over n level rows. */
cudaError_t
ga_launch_aggjoin_pass_counts(const uint8_t *passed, int keep_had, int64_t n, uint32_t *count,
							  int sm_count, cudaStream_t stream)
{
	return aggjoin_launch_rows(aggjoin_pass_counts_kernel, n, sm_count, stream, passed, keep_had,
							   n, count);
}

/* Launch the compaction of m rows of ncolumns columns (grid.y: the columns). */
cudaError_t
ga_launch_aggjoin_compact(const GaDevGatherColumn *columns, int ncolumns, const uint32_t *rows,
						  int64_t m, const unsigned char *input, unsigned char *scratch,
						  int sm_count, cudaStream_t stream)
{
	int			grid = 0;
	cudaError_t err;

	if (m <= 0 || ncolumns <= 0)
		return cudaSuccess;
	err = aggjoin_grid((const void *) aggjoin_compact_kernel, 0, m, sm_count, &grid);
	if (err != cudaSuccess)
		return err;
	grid = (grid + ncolumns - 1) / ncolumns;	/* about one device-full in all */
	(void) cudaGetLastError();	/* clear a stale, already handled error */
	aggjoin_compact_kernel<<<dim3((unsigned) grid, (unsigned) ncolumns),
		GA_AGGJOIN_BLOCK_THREADS, 0, stream>>>(columns, rows, m, input, scratch);
	return cudaGetLastError();
}
