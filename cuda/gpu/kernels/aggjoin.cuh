/*-------------------------------------------------------------------------
 *
 * gpu/kernels/aggjoin.cuh
 *	  The aggjoin's kernels as seen by the host code in gpu/aggjoin.cu
 *	  and gpu/aggjoin_probe.cu: where a level's rows come from, a step's
 *	  pairs, the column description the gather kernel reads, the scan of
 *	  the pairs, the gather's and the expansion's launches.  Bodies live in
 *	  gpu/kernels/aggjoin.cu.
 *
 * Levels.  The rows of a join step are kept as their sources: a row of
 * level s (the rows of step s) is its probe row and its build row of every
 * step t <= s (GA_AGGJOIN_NO_ROW where a LEFT or ANTI step found none).
 * Level 0 is the probe batch itself.
 *
 * Pairs.  After a step's probe (gpu/kernels/hashjoin.cu) of a level's rows,
 * row r has count[r] build rows, sorted_rows[first[r] .. first[r] +
 * count[r]).  The step's rows are numbered consecutively in the level's
 * order: pair_ends[r] is the inclusive prefix sum of the rows each level
 * row gives (count[r] for INNER and RIGHT; max(count[r], 1) for LEFT and
 * FULL; count[r] == 0 for ANTI),
 * so row r owns the step's rows [pair_ends[r - 1], pair_ends[r]) and the
 * last entry is the total.  A step's row j of level row r is r's
 * (j - pair_ends[r - 1])-th match, or no build row when r has none.
 *
 * Hashed steps (join_key.h).  A step of several keys, or of string keys,
 * probes the hashes of its rows' keys (ga_launch_aggjoin_key_hash, under
 * the step's seed), and ga_launch_aggjoin_key_recheck then clears the
 * count of every row whose key differs from that of the first build row
 * of its range, or that has a null key column.  An int64 key column is
 * read by level row (gathered after the first step); a string key column
 * is read where it lives, through the level's sources, as end offsets and
 * bytes (a string is never gathered for a join key).
 *
 * String group keys.  A GA_TYPE_STRING group key of the last step's rows
 * is gathered into the aggregation's input buffer as end offsets and
 * bytes, which the aggregation's string kernels read as a copied batch's:
 * per piece, the values' lengths over its rows and their prefix sum
 * (ga_aggjoin_string_ends), how many rows fit the bytes the buffer has
 * left (ga_launch_aggjoin_string_fit, so the host cuts a piece by bytes as
 * well as by rows), then the end offsets and the bytes
 * (ga_launch_aggjoin_string_write); the gather writes their validity as
 * any column's.  The join's filter compacts them the same way, over the
 * kept rows of the input buffer.
 *
 * Unmatched build rows (a RIGHT or FULL step).  The gather (the last step)
 * or the expansion (any other) marks, in a byte per build row of the step
 * (pairs->matched), every build row it writes a row of; at finish
 * ga_aggjoin_select_unmatched lists the build rows left unmarked, a chunk
 * at a time, and the gather or the expansion writes them as rows whose
 * every earlier side is null (pairs->unmatched_rows; in a level, probe row
 * -1 and build rows GA_AGGJOIN_NO_ROW).
 *
 * The filter (a join's conditions besides its keys' equalities, moved
 * after the chain): once the input buffer holds a piece, a kernel runs the
 * filter's program (row_filter.h) over its rows, the kept rows are listed
 * (ga_aggjoin_select_unmatched over the drop flags), and every gathered
 * column is compacted into a scratch buffer that is copied back.
 *
 * A step's own filter (gpuagg_device.h) runs over the step's pairs instead
 * (ga_launch_aggjoin_pair_filter: each operand read where the pair's row
 * or build row has it), flags the pairs it drops and the level rows that
 * had a pair pass; the pairs it keeps are listed and written through
 * pairs->pair_list, and the rows a LEFT, ANTI or SEMI step gives without a
 * build row follow as the pairs of counts rewritten from those flags
 * (ga_launch_aggjoin_pass_counts) under ANTI's scan.
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

#include "gpuagg_device.h"

/* Threads per block of the gather and expansion kernels (a multiple of 32). */
#define GA_AGGJOIN_BLOCK_THREADS 256

/* The build row of a row that found none at a step (LEFT, ANTI). */
#define GA_AGGJOIN_NO_ROW 0xffffffffu

/*
 * Where the rows of one level come from: probe_rows[i] is row i's probe
 * row (NULL: level 0, row i is probe row i; -1: none, an unmatched build
 * row of a RIGHT or FULL step), build_rows[t][i] its build row of step t
 * (GA_AGGJOIN_NO_ROW: none), for t = 1 .. the level ([0] is unused).
 */
typedef struct GaDevLevel
{
	int64_t    *probe_rows;
	uint32_t   *build_rows[GA_AGG_MAX_JOIN_STEPS + 1];
} GaDevLevel;

/*
 * A step's rows over the rows of the level it probed (see Pairs above).
 * pair_ends NULL stands for the level's rows themselves (no step: row j is
 * level row j, with no build row).
 */
typedef struct GaDevPairs
{
	const unsigned long long *pair_ends;
	const uint32_t *first;
	const uint32_t *count;
	const uint32_t *sorted_rows;	/* NULL when no row has a match */
	int64_t		nlevel;			/* rows of the level probed */
	int32_t		step;			/* the step, 1-based; columns of this side
								 * take its build row */
	uint8_t    *matched;		/* non-NULL: the gather or expansion stores
								 * 1 at every build row of `step` it writes
								 * a row of */
	const uint32_t *unmatched_rows;	/* non-NULL: row j is build row
									 * unmatched_rows[j] of `step` alone,
									 * every earlier side null (no
									 * pair_ends, no level) */
	const uint32_t *pair_list;	/* non-NULL: row j is the pair numbered
								 * pair_list_base + pair_list[j] above (the
								 * pairs a step's own filter passed) */
	int64_t		pair_list_base;
} GaDevPairs;

/*
 * One column the gather writes: from where its side's values live (the
 * probe batch on the device, side 0, or step `side`'s payload) into rows
 * of a destination (the aggregation's device input buffer, or a step's
 * key array).
 */
typedef struct GaDevGatherColumn
{
	const void *src_values;		/* NULL: no values to move */
	const uint8_t *src_validity;	/* NULL: every source row is valid */
	void	   *dst_values;		/* NULL: no values to move */
	uint8_t    *dst_validity;	/* NULL: validity not needed; else
								 * 4-byte aligned, bit d is row d */
	int32_t		width;			/* bytes per value: 0, 1, 2, 4 or 8 */
	int32_t		side;			/* 0 probe, s a build column of step s */
} GaDevGatherColumn;

/*
 * A string group key column the last step's rows carry into the
 * aggregation's input buffer (or that the join's filter compacts): the
 * value of a row is read as the gather reads a column of `side` (its
 * source row, at src_ends[src] into src_bytes, null when src_validity's bit
 * is clear or there is no source row), clamped to src_capacity bytes, and
 * written as GA_TYPE_STRING end offsets dst_ends into dst_bytes, whose
 * capacity is dst_capacity.
 */
typedef struct GaDevGatherString
{
	const uint32_t *src_ends;
	const uint8_t *src_bytes;
	const uint8_t *src_validity;	/* NULL: every source row is valid */
	uint32_t   *dst_ends;
	uint8_t    *dst_bytes;
	uint32_t	src_capacity;
	uint32_t	dst_capacity;
	int32_t		side;			/* 0 probe, s a build column of step s */
} GaDevGatherString;

/*
 * A string key column of a hashed step, as the key kernels read it: the
 * value of level row r is that of row src = its source on `side` (the
 * probe row, or its build row of step `side`; none: null), at ends[src]
 * (GA_TYPE_STRING's end offsets) into bytes, null when src's validity bit
 * is clear (validity NULL: no nulls); a build row b's value is at
 * build_ends[b] into build_bytes.  Offsets are clamped to the bytes that
 * were copied (capacity, build_capacity), so that malformed offsets read
 * nothing outside them.
 */
typedef struct GaDevJoinString
{
	const uint32_t *ends;		/* NULL: an int64 key column */
	const uint8_t *bytes;
	const uint8_t *validity;
	const uint32_t *build_ends;
	const uint8_t *build_bytes;
	uint32_t	capacity;
	uint32_t	build_capacity;
	int32_t		side;
} GaDevJoinString;

/*
 * The key of a hashed step over the rows of a level, as the key kernels
 * read it: an int64 column i's row r is values[i][r], null when a validity
 * bit is clear (validity[i] NULL: no nulls), and a build row b's is
 * build_values[i][b] (valid: only keyed build rows are in the table); a
 * string column i is strings[i], read through `level` (the level probed).
 */
typedef struct GaDevJoinKey
{
	const unsigned long long *values[GA_AGG_MAX_JOIN_KEYS];
	const uint8_t *validity[GA_AGG_MAX_JOIN_KEYS];
	const unsigned long long *build_values[GA_AGG_MAX_JOIN_KEYS];
	GaDevJoinString strings[GA_AGG_MAX_JOIN_KEYS];
	GaDevLevel	level;
	unsigned long long seed;	/* the build's (join_key.h) */
	int32_t		nkeys;			/* 1 .. GA_AGG_MAX_JOIN_KEYS */
} GaDevJoinKey;

/*
 * hashes[r] for r in [0, n): the hash of row r's key under key->seed
 * (join_key.h; any value when the key has a null).
 */
extern cudaError_t ga_launch_aggjoin_key_hash(const GaDevJoinKey *key, int64_t n,
											  unsigned long long *hashes, int sm_count,
											  cudaStream_t stream);

/*
 * After the probe of the hashes: count[r] = 0 for every row r in [0, n)
 * with a count whose key has a null or differs from the key of build row
 * sorted_rows[first[r]].
 */
extern cudaError_t ga_launch_aggjoin_key_recheck(const GaDevJoinKey *key, int64_t n,
												 const uint32_t *sorted_rows,
												 const uint32_t *first, uint32_t *count,
												 int sm_count, cudaStream_t stream);

/*
 * pair_ends[r] for r in [0, n): the inclusive prefix sum of the rows each
 * level row gives at a step of type `type` (GaAggJoinType), in 64 bits.
 * CUB's two-phase convention: temp NULL only sizes *temp_bytes.
 */
extern cudaError_t ga_aggjoin_pair_ends(void *temp, size_t *temp_bytes,
										const uint32_t *count,
										unsigned long long *pair_ends, int64_t n,
										int type, cudaStream_t stream);

/*
 * Write rows [start, start + n) of pairs (level rows themselves when
 * pairs->pair_ends is NULL), whose earlier sources are in `from`, as rows
 * [dst_offset, dst_offset + n) of every column of `columns` (ncolumns of
 * them, in device memory; none and no pairs->matched: nothing is
 * launched).  Validity bits of rows below dst_offset are kept.
 */
extern cudaError_t ga_launch_aggjoin_gather(const GaDevGatherColumn *columns, int ncolumns,
											const GaDevPairs *pairs, const GaDevLevel *from,
											int64_t start, int64_t n, int64_t dst_offset,
											int sm_count, cudaStream_t stream);

/*
 * ends[i] for i in [0, n): the bytes of string `str`'s values over rows
 * [start, start + i] of pairs (over level `from`; a null or missing value
 * takes none), an inclusive prefix sum in 64 bits.  CUB's two-phase
 * convention: temp NULL only sizes *temp_bytes (for n rows).
 */
extern cudaError_t ga_aggjoin_string_ends(void *temp, size_t *temp_bytes,
										  const GaDevGatherString *str,
										  const GaDevPairs *pairs, const GaDevLevel *from,
										  int64_t start, int64_t n, unsigned long long *ends,
										  int sm_count, cudaStream_t stream);

/*
 * *fit = min(*fit, the rows i in [0, n) whose ends[i] (from
 * ga_aggjoin_string_ends) fits the bytes str->dst_bytes has left after
 * its first dst_offset rows), so that a piece of that many rows fits
 * every string key it carries.
 */
extern cudaError_t ga_launch_aggjoin_string_fit(const GaDevGatherString *str,
												const unsigned long long *ends, int64_t n,
												int64_t dst_offset, unsigned long long *fit,
												cudaStream_t stream);

/*
 * Write string `str`'s values over rows [start, start + n) of pairs (over
 * level `from`) as rows [dst_offset, dst_offset + n) of its destination:
 * end offsets after those of the rows below dst_offset, from `ends`
 * (ga_aggjoin_string_ends over the same rows, which must fit), and the
 * bytes.  Validity is the gather's.
 */
extern cudaError_t ga_launch_aggjoin_string_write(const GaDevGatherString *str,
												  const GaDevPairs *pairs,
												  const GaDevLevel *from, int64_t start,
												  int64_t n, const unsigned long long *ends,
												  int64_t dst_offset, int sm_count,
												  cudaStream_t stream);

/*
 * The build rows in [base, base + n) whose matched byte is 0, in order,
 * into rows[0 .. *num_selected) (num_selected in device memory).  CUB's
 * two-phase convention: temp NULL only sizes *temp_bytes.
 */
extern cudaError_t ga_aggjoin_select_unmatched(void *temp, size_t *temp_bytes,
											   const uint8_t *matched, uint32_t base,
											   uint32_t *rows, unsigned long long *num_selected,
											   int n, cudaStream_t stream);

/*
 * Write rows [start, start + n) of a step's pairs over level `from` as
 * rows [dst_offset, dst_offset + n) of level `to` (the step's level): the
 * sources of their level rows, and the step's build row (marked in
 * pairs->matched when given).
 */
extern cudaError_t ga_launch_aggjoin_expand(const GaDevPairs *pairs, const GaDevLevel *from,
											const GaDevLevel *to, int64_t start, int64_t n,
											int64_t dst_offset, int sm_count,
											cudaStream_t stream);

/*
 * The join's filter (gpuagg_device.h) over the rows of the input buffer:
 * each step's columns where they were gathered (values, and validity:
 * NULL when every row is valid) and their types.
 */
typedef struct GaDevFilter
{
	int32_t		nsteps;
	GaFilterStep steps[GA_FILTER_MAX_STEPS];
	const void *values[GA_FILTER_MAX_STEPS][2];
	const uint8_t *validity[GA_FILTER_MAX_STEPS][2];
	GaValueType types[GA_FILTER_MAX_STEPS][2];
	int32_t		sides[GA_FILTER_MAX_STEPS][2];	/* a step's own filter: the
												 * operand's side (0 probe,
												 * t build of step t) */
} GaDevFilter;

/* drop[r] = 1 for every row r in [0, n) the filter does not keep, else 0. */
extern cudaError_t ga_launch_aggjoin_filter(const GaDevFilter *filter, int64_t n, uint8_t *drop,
											int sm_count, cudaStream_t stream);

/*
 * A step's own filter over pairs [start, start + n) of `pairs` (over level
 * `from`; operands of side pairs->step read at the pair's build row, any
 * other at its level row's source of that side, values and validity
 * indexed by those rows): drop[i] = 1 when pair start + i fails, else 0
 * (drop NULL: not stored), and passed[p] = 1 for the level row p of every
 * pair that passes.
 */
extern cudaError_t ga_launch_aggjoin_pair_filter(const GaDevFilter *filter,
												 const GaDevPairs *pairs,
												 const GaDevLevel *from, int64_t start,
												 int64_t n, uint8_t *drop, uint8_t *passed,
												 int sm_count, cudaStream_t stream);

/*
 * The counts of a step's second pass over n level rows: count[r] = 0 for
 * the rows that give a row without a build row (those whose "had a match"
 * equals keep_had: had = passed[r], or count[r] > 0 when passed is NULL),
 * 1 for the others, so that ANTI's scan gives each of the first one row.
 */
extern cudaError_t ga_launch_aggjoin_pass_counts(const uint8_t *passed, int keep_had,
												 int64_t n, uint32_t *count, int sm_count,
												 cudaStream_t stream);

/*
 * Compact the input buffer's rows: row j of every column of `columns`
 * (ncolumns, in device memory, each written into `input`: values and
 * validity) becomes its row rows[j], for j in [0, m), written at the same
 * offsets of `scratch` (as large as the input buffer); validity bits past
 * m are cleared.  The caller copies scratch back.
 */
extern cudaError_t ga_launch_aggjoin_compact(const GaDevGatherColumn *columns, int ncolumns,
											 const uint32_t *rows, int64_t m,
											 const unsigned char *input,
											 unsigned char *scratch, int sm_count,
											 cudaStream_t stream);

#endif							/* GPUAGG_AGGJOIN_KERNELS_CUH */
