/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashjoin.cuh
 *	  The GPU hash join kernels as seen by the host code in gpu/hashjoin.cu: the
 *	  plain struct the kernels take by value, the CUB device-wide steps of
 *	  the build, and one launch function per kernel.  Bodies live in
 *	  gpu/kernels/hashjoin.cu.
 *
 * Data layout on the device (one join, after the build):
 *
 *	keys		uint64[ndistinct]: the distinct build keys, ascending as uint64
 *	offsets		uint32[ndistinct]: the first key-sorted build row of each key
 *	counts		uint32[ndistinct]: the build rows of each key
 *	slots		uint32[nslots], nslots a power of two >= 2 * ndistinct: the
 *				open-addressing table (linear probing from the key's hash),
 *				GA_JOIN_SLOT_EMPTY or the index of a distinct key
 *
 * The CUB steps follow CUB's two-phase convention: called with temp NULL
 * they only store the temporary storage they need in *temp_bytes.  Every
 * function returns the cudaError_t of the call or launch (errors of a
 * running kernel surface at the next synchronisation); none of them
 * throws, prints or allocates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHJOIN_KERNELS_CUH
#define GPUAGG_HASHJOIN_KERNELS_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* Threads per block of the join kernels. */
#define GA_JOIN_BLOCK_THREADS 256

/* An empty slot; distinct key indexes stay below it. */
#define GA_JOIN_SLOT_EMPTY 0xffffffffu

/* The build's table as the kernels see it (see the layout above). */
typedef struct GaDevJoinTable
{
	uint32_t   *slots;
	int64_t		slot_mask;		/* nslots - 1 */
	const unsigned long long *keys;
	const uint32_t *offsets;
	const uint32_t *counts;
} GaDevJoinTable;

/*
 * Sort n (key, row) pairs by key as uint64, stably (CUB's radix sort), in
 * the double buffers keys[0]/keys[1] and rows[0]/rows[1]; the input is in
 * buffers 0, and *key_current and *row_current say which buffers hold the
 * result (CUB flips them together, so they are equal).
 */
extern cudaError_t ga_join_sort_pairs(void *temp, size_t *temp_bytes,
									  unsigned long long *keys[2],
									  uint32_t *rows[2], int64_t n,
									  int *key_current, int *row_current,
									  cudaStream_t stream);

/*
 * The runs of equal keys of n sorted keys: unique[r], counts[r] for every
 * run r, and the number of runs in *num_runs (device memory).  n is at
 * most INT_MAX (CUB's run-length encoding counts in int).
 */
extern cudaError_t ga_join_run_lengths(void *temp, size_t *temp_bytes,
									   const unsigned long long *sorted_keys,
									   unsigned long long *unique,
									   uint32_t *counts, long long *num_runs,
									   int64_t n, cudaStream_t stream);

/* offsets[i] = counts[0] + ... + counts[i - 1] for i in [0, n). */
extern cudaError_t ga_join_exclusive_sum(void *temp, size_t *temp_bytes,
										 const uint32_t *counts,
										 uint32_t *offsets, int64_t n,
										 cudaStream_t stream);

/* Insert distinct keys [0, ndistinct) into the table's slots (all empty). */
extern cudaError_t ga_launch_join_insert(const GaDevJoinTable *table,
										 int64_t ndistinct, int sm_count,
										 cudaStream_t stream);

/*
 * For every probe row in [0, nrows): first[row], count[row] of its key's
 * range of sorted build rows, (0, 0) when the key is absent or null
 * (validity NULL: no nulls); adds the sum of the counts to *total.
 */
extern cudaError_t ga_launch_join_probe(const GaDevJoinTable *table,
										const unsigned long long *keys,
										const uint8_t *validity, int64_t nrows,
										uint32_t *first, uint32_t *count,
										unsigned long long *total, int sm_count,
										cudaStream_t stream);

#endif							/* GPUAGG_HASHJOIN_KERNELS_CUH */
