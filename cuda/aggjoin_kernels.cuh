/*-------------------------------------------------------------------------
 *
 * aggjoin_kernels.cuh
 *	  The join-fed aggregation's kernels as seen by the host code in
 *	  aggjoin_gpu.cu: the column description the gather kernel reads, the
 *	  scan of the pairs, and the gather's launch.  Bodies live in
 *	  aggjoin_kernels.cu.
 *
 * After a probe (hashjoin_kernels.cu) a probe row r has count[r] build rows,
 * sorted_rows[first[r] .. first[r] + count[r]).  Its pairs are numbered
 * consecutively in probe order: pair_ends[r] is the inclusive prefix sum of
 * the pair counts (count[r], or 1 for a LEFT join's row with count 0, which
 * gives one pair without a build row), so probe row r owns the pairs
 * [pair_ends[r - 1], pair_ends[r]) and the last entry is the total.
 *
 * Every function returns the cudaError_t of the call or launch; none of
 * them throws, prints or allocates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_AGGJOIN_KERNELS_CUH
#define GPUAGG_AGGJOIN_KERNELS_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* Threads per block of the gather kernel (a multiple of the warp size). */
#define GA_AGGJOIN_BLOCK_THREADS 256

/*
 * One column the gather writes: from the probe batch on the device (row r)
 * or the build side's payload (row sorted_rows[first[r] + k]) into the
 * aggregation's device input buffer (row i of the piece).
 */
typedef struct GaDevGatherColumn
{
	const void *src_values;		/* NULL: no values to move */
	const uint8_t *src_validity;	/* NULL: every source row is valid */
	void	   *dst_values;		/* NULL: no values to move */
	uint8_t    *dst_validity;	/* NULL: validity not needed; else
								 * 4-byte aligned, the piece's bits */
	int32_t		width;			/* bytes per value: 0, 1, 2, 4 or 8 */
	int32_t		from_build;
} GaDevGatherColumn;

/*
 * pair_ends[r] for r in [0, n): the inclusive prefix sum of the pair counts
 * (count[r], or max(count[r], 1) when left is nonzero), in 64 bits.  CUB's
 * two-phase convention: temp NULL only sizes *temp_bytes.
 */
extern cudaError_t ga_aggjoin_pair_ends(void *temp, size_t *temp_bytes,
										const uint32_t *count,
										unsigned long long *pair_ends, int64_t n,
										int left, cudaStream_t stream);

/*
 * Write pairs [start, start + npairs) of a probed batch of nprobe rows as
 * rows [0, npairs) of the aggregation's input: every column of `columns`
 * (ncolumns of them, in device memory; none: nothing is launched).
 * sorted_rows may be NULL when no probe row has a match.
 */
extern cudaError_t ga_launch_aggjoin_gather(const GaDevGatherColumn *columns, int ncolumns,
											const unsigned long long *pair_ends,
											const uint32_t *first, const uint32_t *count,
											int64_t nprobe, const uint32_t *sorted_rows,
											int64_t start, int64_t npairs, int sm_count,
											cudaStream_t stream);

#endif							/* GPUAGG_AGGJOIN_KERNELS_CUH */
