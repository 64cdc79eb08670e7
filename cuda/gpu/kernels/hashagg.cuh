/*-------------------------------------------------------------------------
 *
 * gpu/kernels/hashagg.cuh
 *	  The GPU hash aggregation kernels as seen by the host code of the
 *	  aggregation (gpu/hashagg.cu, gpu/batch.cu and the files they call):
 *	  the plain structs the kernels take by value, and one launch function
 *	  per kernel.  Kernel bodies live in gpu/kernels/hashagg_two_phase.cu
 *	  (group ids, the two-phase accumulation and the derived columns),
 *	  gpu/kernels/hashagg_fused.cu (direct indexing and the fused
 *	  shared-memory kernel), gpu/kernels/hashagg_partition.cu (the first
 *	  batch's probe and hash partitioning) and gpu/kernels/hashagg_chunks.cu
 *	  (the partitioned strategy's chunks); their device building blocks in
 *	  gpu/kernels/hashagg_device.cuh.
 *
 * Data layout on the device (one aggregation):
 *
 *	slots		int32[nslots], nslots = 2 * capacity (a power of two): the
 *				open-addressing table of Wu et al., Algorithm 1.  A key's home
 *				slot is the top bits of its hash, so that rows partitioned by
 *				the same top bits (the partitioned strategy) touch one small
 *				run of slots each.  A slot holds GA_SLOT_EMPTY, GA_SLOT_BUSY
 *				(its winner is writing the key), GA_SLOT_POISON (the winner
 *				found the group arrays full) or a dense group id.
 *	keys		int64[(nkeys + 1) * capacity], word-major: word 0 of group g is
 *				the null mask (bit k set when key k is null) at keys[g], word
 *				1 + k is key k widened to int64 (0 when null) at
 *				keys[(1 + k) * capacity + g].
 *	accumulators one array per aggregate, capacity elements of the result
 *				element type of gpuagg_device.h (16-byte GaInt128 for SUM_INT,
 *				float for SUM_FLOAT32, GaMoments and GaComoments for the
 *				moments, 8 bytes otherwise; float MIN/MAX hold
 *				ga_float64_to_ordered() integers).
 *	control		GaDevControl: group counter, overflow flag, escape count.
 *	perfect		(strategy perfect) one entry per point of the key ranges'
 *				product, each entry all aggregates' accumulators side by side
 *				(one random access per row reaches all of them), and a bitmap
 *				of the entries seen; gathered into the group arrays at the end.
 *	programs	GaDevDerivedProgram[nprograms]: the derived columns' distinct
 *				programs, with pointers into the input buffer; uploaded once.
 *	strings		(string keys, GaDevStrings) per group its tuple hash and
 *				per string key its length, and one heap of the groups' key
 *				bytes; a string key's word in keys is its heap offset.  Home
 *				slots are the hash's low bits; only the global strategy runs.
 *
 * Shared-memory tables hold one array per aggregate of `entries` elements of
 * the aggregate's shared width (ga_shared_width(): narrower counts and sums
 * where a block's rows cannot overflow them), widest arrays first.
 *
 * Derived columns (gpuagg_device.h) are computed in the input buffer by
 * compute_derived_kernel before any other kernel of the rows, after a
 * batch's copies or a join's gather: their values and validity bitmaps are
 * written there, in the slots the host never fills, and the aggregation
 * reads them like any column.  Their operands' and NaN flags' bitmaps are
 * always present in the buffer (copied, set to all valid, or gathered), so
 * that the descriptions never change between batches.
 *
 * MOMENTS and COMOMENTS (compensated sums shifted by a per-group value set
 * once in the global array, see gpu/kernels/hashagg_device.cuh) run in the two-phase
 * kernels only: the direct and fused kernels of gpu/kernels/hashagg_fused.cu do not
 * take them, and gpu/hashagg.cu never plans those for such a request.
 *
 * Every launch function returns the launch's cudaError_t (cudaSuccess or
 * the error of the launch itself; errors of the running kernel surface at
 * the next synchronisation).  None of them throws or prints.  Kernel
 * parameters above 4 KB need CUDA 12.1 or newer.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHAGG_KERNELS_CUH
#define GPUAGG_HASHAGG_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpuagg_device.h"
#include "sizing.h"

#if defined(CUDART_VERSION) && CUDART_VERSION < 12010
#error "gpuagg's GPU device needs CUDA 12.1 or newer (kernel parameters above 4 KB)"
#endif

/* Limits of the GPU device: requests beyond them are refused by agg_create. */
#define GA_GPU_MAX_KEYS GA_MAX_KEYS
#define GA_GPU_MAX_AGGS GA_MAX_AGG_OPS

/* Threads per block of the two-phase kernels. */
#define GA_GPU_BLOCK_THREADS 256

/* Largest block of the shared-memory kernels (the launch picks 256 or 512). */
#define GA_SHARED_BLOCK_MAX 512

/* Rows each thread of a fused or direct kernel loads before using them. */
#define GA_ITEMS 4

/* Most aggregates reading a column that direct_narrow_kernel takes. */
#define GA_NARROW_MAX_INPUTS 3

/* direct_narrow_kernel's block for tables of at least GA_NARROW_LARGE_ENTRIES. */
#define GA_NARROW_BLOCK_MAX 1024
#define GA_NARROW_LARGE_ENTRIES 512

/* Slot states of the group table; dense group ids are >= 0. */
#define GA_SLOT_EMPTY (-1)		/* all bits set: cudaMemset(0xff) makes it */
#define GA_SLOT_BUSY (-2)
#define GA_SLOT_POISON (-3)

/* Largest group capacity: group ids are int32 and slots 2 * capacity. */
#define GA_GPU_MAX_CAPACITY (INT64_C(1) << 30)

/* Keys packed into one word for the fused kernel; the empty local slot. */
#define GA_PACK_MAX_KEYS 8
#define GA_PACK_EMPTY 0x8000000000000001ULL

/* Probes before a fused kernel's row gives up on its block's table. */
#define GA_LOCAL_PROBES 64

/* The block caches of hot groups: empty tag, probes per lookup. */
#define GA_CACHE_EMPTY (-1LL)
#define GA_CACHE_PROBES 4

/*
 * The partitioned strategy (gpu/kernels/hashagg_partition.cu, gpu/kernels/hashagg_chunks.cu): at
 * most 2^GA_PART_MAX_BITS partitions, made by at most GA_PART_MAX_BLOCKS
 * blocks of GA_PART_THREADS threads, with at most GA_PART_MAX_VALUES input
 * columns copied into partition order; then blocks of GA_CHUNK_THREADS
 * threads aggregate chunks of GA_CHUNK_ROWS positions of one partition,
 * hashing packed keys into GA_CHUNK_SLOTS slots of shared memory.
 */
#define GA_PART_MAX_BITS 8
#define GA_PART_MAX_BLOCKS 1024
#define GA_PART_THREADS 512
#define GA_CHUNK_THREADS 512
#define GA_CHUNK_ROWS (GA_CHUNK_THREADS * GA_ITEMS)
#define GA_CHUNK_SLOTS (2 * GA_CHUNK_ROWS)
#define GA_PART_MAX_VALUES 4

/* HyperLogLog registers of the first batch's probe (2^bits). */
#define GA_HLL_BITS 10
#define GA_HLL_REGISTERS (1 << GA_HLL_BITS)

/* Rows the probe samples at most (chunks of GA_PROBE_CHUNK spread evenly). */
#define GA_PROBE_ROWS (1 << 20)
#define GA_PROBE_CHUNK_BITS 10
#define GA_PROBE_CHUNK (1 << GA_PROBE_CHUNK_BITS)

/* Shared by the kernels of one aggregation; lives in device memory. */
typedef struct GaDevControl
{
	unsigned long long ngroups;	/* group ids handed out; may pass capacity */
	int			overflow;		/* set when a group did not fit */
	unsigned int shared_fallbacks;	/* shared-memory launches that fell back */
	unsigned long long escapes; /* rows in this batch's escape list */
	unsigned int merged;		/* the fused kernel merged its partials */
	unsigned int pad;
	unsigned long long counter; /* scratch: the perfect gather's output */
	unsigned long long heap_used;	/* string keys: bytes of the heap handed
									 * out; may pass its capacity */
	int			heap_overflow;	/* string keys: a group's bytes did not fit */
	unsigned int pad2;
} GaDevControl;

/* One input column of the batch on the device. */
typedef struct GaDevColumn
{
	const void *values;			/* NULL for GA_TYPE_NONE or when not needed */
	const uint8_t *validity;	/* NULL when the batch has no nulls here */
	int32_t		type;			/* GaValueType */
	int32_t		pad;
} GaDevColumn;

/* The key columns of the batch. */
typedef struct GaDevKeys
{
	int32_t		nkeys;
	int32_t		pad;
	GaDevColumn columns[GA_GPU_MAX_KEYS];
} GaDevKeys;

/* The group table (see the layout above). */
typedef struct GaDevTable
{
	int32_t    *slots;
	int64_t		slot_mask;		/* nslots - 1 */
	long long  *keys;
	int64_t		capacity;		/* groups the dense arrays hold */
	int32_t		nkeys;
	int32_t		slot_shift;		/* 64 - log2(nslots): home slot = hash >> shift */
	GaDevControl *control;
} GaDevTable;

/*
 * String keys (gpu/kernels/hashagg_strings.cu): which keys are strings,
 * the batch's bytes of each, and the group table's arrays that only string
 * layouts have.  A string key's word in the dense keys (the table's keys
 * array) is the heap offset of the group's bytes for that key; its length
 * is in lens.  A group's string keys lie side by side in the heap, one
 * reservation per group.
 */
typedef struct GaDevStrings
{
	int32_t		nstrings;		/* string keys */
	int32_t		hash_bits;		/* debug_hash_bits: low bits of each tuple
								 * hash kept (0: all) */
	int8_t		string_of_key[GA_GPU_MAX_KEYS];	/* per key: its index among
												 * the string keys, -1 for an
												 * integer key */
	const uint8_t *bytes[GA_GPU_MAX_KEYS];	/* per key: the batch column's
											 * bytes (string keys) */
	uint32_t	bytes_capacity; /* bytes of each such column (string_bytes) */
	uint32_t	pad;
	unsigned long long *hashes; /* capacity: each group's tuple hash */
	uint32_t   *lens;			/* nstrings * capacity: each group's bytes
								 * per string key (0 when null) */
	unsigned char *heap;		/* the groups' key bytes */
	int64_t		heap_capacity;
} GaDevStrings;

/*
 * One aggregate: operation, input column and accumulator array.  COMOMENTS
 * reads its second column from the input of entry `partner` of the same
 * GaDevAggs, an entry past naggs that only carries a column (so that every
 * entry stays small: the whole GaDevAggs is a kernel parameter).
 */
typedef struct GaDevAgg
{
	int32_t		op;				/* GaAggOp */
	int16_t		input_is_float; /* MIN/MAX: the column is float32/float64 */
	int16_t		partner;		/* COMOMENTS: entry holding column y */
	GaDevColumn input;			/* unused for COUNT_ROWS */
	void	   *acc;			/* global accumulators, capacity elements */
	int64_t		shared_unit_offset; /* bytes before this aggregate's shared
									 * array, per entry of the shared table */
	int32_t		shared_width;	/* bytes per entry in shared memory */
	int32_t		perfect_offset; /* bytes before it in a perfect entry */
} GaDevAgg;

typedef struct GaDevAggs
{
	int32_t		naggs;
	int32_t		shared_state;	/* shared bytes of one entry, all aggregates */
	GaDevAgg	aggs[GA_GPU_MAX_AGGS];
} GaDevAggs;

/*
 * One step of a derived column's program as the kernel reads it (see
 * GaExprStep); a COLUMN step's operand and NaN flag are read in the input
 * buffer.
 */
typedef struct GaDevExprStep
{
	const void *values;			/* COLUMN: the operand's values */
	const uint8_t *validity;	/* COLUMN: its validity bitmap */
	const uint8_t *nan_validity;	/* COLUMN: its NaN flag's bitmap; NULL:
									 * no NaN flag */
	long long	constant;		/* CONST */
	int32_t		op;				/* GaExprOp */
	int32_t		type;			/* COLUMN: the operand's GaValueType */
	int32_t		power;			/* SCALE */
	int32_t		pad;
} GaDevExprStep;

/* One derived column a program fills, in the input buffer. */
typedef struct GaDevDerivedOutput
{
	long long  *values;			/* int64 per row; NULL: not read */
	unsigned int *validity;		/* 32 rows a word; NULL: not read */
	int32_t		part;			/* GaDerivedPart */
	int32_t		limb;			/* GA_DERIVED_LIMB: 0 .. 3 */
} GaDevDerivedOutput;

/* One distinct program and the derived columns taken from its value. */
typedef struct GaDevDerivedProgram
{
	int32_t		nsteps;
	int32_t		noutputs;
	GaDevExprStep steps[GA_EXPR_MAX_STEPS];
	GaDevDerivedOutput outputs[GA_MAX_DERIVED];
} GaDevDerivedProgram;

/*
 * Derived columns: evaluate the nprograms programs (device memory) in rows
 * [0, nrows) of the input buffer, each once per row, and write every
 * output's value (0 where the part is not valid) and validity.
 */
extern cudaError_t ga_launch_compute_derived(const GaDevDerivedProgram *programs,
											 int nprograms, int64_t nrows,
											 int sm_count, cudaStream_t stream);

/*
 * A direct index over the product of the key ranges (mixed radix): key k
 * contributes digit (value - lo[k]), or base[k] - 1 when null, times
 * stride[k].  A row with a key outside its range escapes (to the global
 * table).  entry_bytes = 0 means no perfect arrays: accumulate into the
 * aggregates' own arrays at the index (a plain aggregate, nkeys = 0).
 */
typedef struct GaDevPerfect
{
	int32_t		nkeys;
	int32_t		entry_bytes;	/* stride of the perfect entries */
	long long	lo[GA_PERFECT_MAX_KEYS];
	long long	base[GA_PERFECT_MAX_KEYS];	/* values in range + 1 (null) */
	long long	stride[GA_PERFECT_MAX_KEYS];
	long long	entries;		/* product of the bases */
	unsigned char *acc;			/* entries * entry_bytes; NULL: see above */
	unsigned int *seen;			/* bitmap of entries seen; NULL: untracked */
} GaDevPerfect;

/*
 * How the fused kernel packs a key tuple into 64 bits: key k's low bits[k]
 * bits at bit shift[k], and above them its null bit when null_bit[k].
 */
typedef struct GaDevPack
{
	int32_t		nkeys;
	int32_t		pad;
	int32_t		shift[GA_PACK_MAX_KEYS];
	int32_t		bits[GA_PACK_MAX_KEYS];
	int32_t		null_bit[GA_PACK_MAX_KEYS];
} GaDevPack;

/*
 * A batch partitioned by key hash (the partitioned strategy), in device
 * memory.  The partitioning kernels each take rows_per_block consecutive
 * rows per block, `blocks` blocks.  Partition p holds positions begin[p] ..
 * begin[p] + hist[p] of perm, cut into chunks of GA_CHUNK_ROWS positions
 * (the last one shorter), numbered from chunk_first[p]; chunk_first[npart]
 * is the number of chunks.  With a GaDevPack, the scatter also writes each
 * row's packed key next to its row number, and copies the nvalues value
 * columns value_src (value_width bytes a row) into value_dst in partition
 * order.  For the chunk kernels: local_ids[i] is position i's entry in its
 * chunk (or -2 - its group id when it was looked up on its own, -1 when the
 * table overflowed); a chunk starting at position b with d =
 * chunk_distinct[c] entries has their group ids at chunk_groups[b .. b + d).
 */
typedef struct GaDevPartitions
{
	int32_t		pbits;
	int32_t		blocks;
	int64_t		rows_per_block;
	unsigned int *hist;
	unsigned int *begin;
	unsigned int *cursor;
	unsigned int *chunk_first;	/* npart + 1 entries */
	unsigned int *block_counts; /* blocks * npart: rows per block and partition */
	int32_t    *perm;
	unsigned long long *packed; /* the rows' packed keys in perm's order;
								 * NULL: keys that do not pack */
	int32_t    *local_ids;
	int32_t    *chunk_groups;
	int32_t    *chunk_distinct;
	int64_t		max_chunks;		/* chunk_distinct's length */
	int32_t		nvalues;		/* value columns copied into partition order */
	int32_t		value_width[GA_PART_MAX_VALUES];
	const void *value_src[GA_PART_MAX_VALUES];
	void	   *value_dst[GA_PART_MAX_VALUES];
} GaDevPartitions;

/* What the probe of a first batch found (device memory, then pinned). */
typedef struct GaDevProbe
{
	long long	min[GA_PERFECT_MAX_KEYS];	/* of the non-null values */
	long long	max[GA_PERFECT_MAX_KEYS];
	unsigned int has_null[GA_PERFECT_MAX_KEYS];
	unsigned int hll[GA_HLL_REGISTERS];
	unsigned long long rows;	/* rows sampled */
	unsigned long long pairs;	/* sampled rows after another of their chunk */
	unsigned long long repeats; /* of them, with that row's key tuple */
} GaDevProbe;

/* ------------------------------------------------------------------------
 * Shared-memory layouts (host and device agree through these)
 * ------------------------------------------------------------------------
 */

/* accumulate_cached / direct_global: tags, then the accumulator arrays. */
static inline size_t
ga_cache_shared_bytes(int cache_bits, int shared_state)
{
	size_t		entries = cache_bits > 0 ? ((size_t) 1 << cache_bits) : 0;

	return entries * 8 + entries * (size_t) shared_state;
}

/* direct_shared: the accumulator arrays, then the bitmap of entries seen. */
static inline size_t
ga_direct_shared_bytes(int64_t entries, int replicas, int shared_state)
{
	return (size_t) entries * replicas * shared_state +
		4 * (size_t) ((entries + 31) / 32);
}

/* fused_shared: packed keys (later group ids), then the accumulator arrays. */
static inline size_t
ga_fused_shared_bytes(int64_t nslots, int replicas, int shared_state)
{
	return (size_t) nslots * 8 + (size_t) nslots * replicas * shared_state;
}

/* ------------------------------------------------------------------------
 * Launches
 *
 * The launches of the aggregation itself take the batch's GaLaunchParams
 * (gpuagg_device.h; the tuner's, cuda/tune.h): threads per block within
 * the kernel's bound, resident blocks per multiprocessor at most.  Every
 * kernel loops over its rows with the grid's stride and sizes its shared
 * memory from the launch's own arguments, so that any parameters give the
 * same answers.  launch NULL: the rules.
 * ------------------------------------------------------------------------
 */

/* A kernel's block size and resident blocks per multiprocessor. */
typedef struct GaLaunchShape
{
	int			threads;
	int			blocks_per_sm;
} GaLaunchShape;

/*
 * Phase 1: group_ids[i] for positions i in [0, n) where n = nrows, or
 * *count when count is not NULL and smaller; position i is row rows[i]
 * (rows NULL: row i).  New keys are inserted.
 */
extern cudaError_t ga_launch_assign_group_ids(const GaDevKeys *keys,
											  const GaDevTable *table,
											  int64_t nrows, const int32_t *rows,
											  const unsigned long long *count,
											  int32_t *group_ids, int sm_count,
											  const GaLaunchParams *launch,
											  cudaStream_t stream);

/* Growth: insert groups [0, ngroups) of table's dense keys into its empty slots. */
extern cudaError_t ga_launch_rebuild_slots(const GaDevTable *table, int64_t ngroups,
										   int sm_count, cudaStream_t stream);

/* Set accumulators of groups [begin, end) to their identities. */
extern cudaError_t ga_launch_init_accumulators(const GaDevAggs *aggs, int64_t begin,
											   int64_t end, int sm_count,
											   cudaStream_t stream);

/*
 * Phase 2 with global atomics, positions as for phase 1 (group_ids NULL:
 * every row is group 0).  A cache of 2^cache_bits hot groups per block in
 * shared memory (0: none) takes the contention of skewed keys.  Does
 * nothing when control->overflow is set.
 */
extern cudaError_t ga_launch_accumulate_cached(const GaDevAggs *aggs,
											   const int32_t *group_ids,
											   int64_t nrows, const int32_t *rows,
											   const unsigned long long *count,
											   GaDevControl *control, int cache_bits,
											   int sm_count, const GaLaunchParams *launch,
											   cudaStream_t stream);

/*
 * Phase 2 with per-block shared-memory accumulators for groups_alloc groups,
 * each kept `replicas` times (lanes spread over the copies); falls back to
 * global atomics inside the kernel when more groups exist.
 */
extern cudaError_t ga_launch_accumulate_shared(const GaDevAggs *aggs,
											   const int32_t *group_ids,
											   int64_t nrows, GaDevControl *control,
											   int64_t groups_alloc, int replicas,
											   int sm_count, const GaLaunchParams *launch,
											   cudaStream_t stream);

/* Set control's group counter to ngroups and clear its overflow flag. */
extern cudaError_t ga_launch_reset_control(GaDevControl *control, int64_t ngroups,
										   cudaStream_t stream);

/* Start a batch: no escapes, nothing merged. */
extern cudaError_t ga_launch_reset_batch(GaDevControl *control, cudaStream_t stream);

/*
 * perfect, small ranges (and plain aggregates): per-block direct-indexed
 * shared-memory accumulators, `replicas` copies, merged into the perfect
 * entries (or the aggregates' arrays).  Rows outside the ranges go to
 * escape_rows (control->escapes counts them).
 */
extern cudaError_t ga_launch_direct_shared(const GaDevKeys *keys,
										   const GaDevPerfect *perfect,
										   const GaDevAggs *aggs, int64_t nrows,
										   GaDevControl *control, int32_t *escape_rows,
										   int replicas, int sm_count,
										   const GaLaunchParams *launch, cudaStream_t stream);

/*
 * perfect, large ranges: atomics straight into the perfect entries, with a
 * per-block cache of 2^cache_bits hot entries in shared memory.
 */
extern cudaError_t ga_launch_direct_global(const GaDevKeys *keys,
										   const GaDevPerfect *perfect,
										   const GaDevAggs *aggs, int64_t nrows,
										   GaDevControl *control, int32_t *escape_rows,
										   int cache_bits, int sm_count,
										   const GaLaunchParams *launch, cudaStream_t stream);

/*
 * shared, packed keys: one pass per batch.  Each block aggregates its rows
 * in a shared-memory hash table of nslots packed keys; then every block
 * finds its keys' group ids in the global table, the grid synchronises
 * (cooperative launch), and unless the global table overflowed the blocks
 * merge into the group arrays and set control->merged.  Rows that do not
 * fit go to escape_rows.  Returns cudaErrorNotSupported when the device
 * cannot launch it cooperatively (the caller uses the two-phase kernels).
 */
extern cudaError_t ga_launch_fused_shared(const GaDevKeys *keys, const GaDevPack *pack,
										  const GaDevTable *table, const GaDevAggs *aggs,
										  int64_t nrows, GaDevControl *control,
										  int32_t *escape_rows, int64_t nslots,
										  int replicas, int sm_count,
										  const GaLaunchParams *launch, cudaStream_t stream);

/* Set every perfect entry to the aggregates' identities. */
extern cudaError_t ga_launch_init_perfect(const GaDevPerfect *perfect,
										  const GaDevAggs *aggs, int sm_count,
										  cudaStream_t stream);

/* *counter += entries seen in the perfect bitmap. */
extern cudaError_t ga_launch_count_perfect(const GaDevPerfect *perfect,
										   unsigned long long *counter, int sm_count,
										   cudaStream_t stream);

/*
 * Append every perfect entry seen to the group arrays of table, from group
 * id base on (counter, zero before, counts them): keys decoded from the
 * index, accumulators copied.
 */
extern cudaError_t ga_launch_gather_perfect(const GaDevPerfect *perfect,
											const GaDevAggs *aggs,
											const GaDevTable *table, int64_t base,
											unsigned long long *counter, int sm_count,
											cudaStream_t stream);

/*
 * Probe a sample of the batch (up to GA_PROBE_ROWS rows): min/max and nulls
 * of the first nrange keys, a HyperLogLog sketch of the key tuples.
 */
extern cudaError_t ga_launch_probe(const GaDevKeys *keys, int64_t nrows, int nrange,
								   GaDevProbe *probe, int sm_count, cudaStream_t stream);

/*
 * Partition a batch's rows by the top pbits bits of their key hash: perm
 * lists the rows partition by partition, and the partitions' sizes, first
 * positions and chunks of GA_CHUNK_ROWS positions are set (GaDevPartitions).
 */
extern cudaError_t ga_launch_partition(const GaDevKeys *keys, const GaDevPack *pack,
									   int64_t nrows, const GaDevPartitions *parts,
									   cudaStream_t stream);

/*
 * The partitioned strategy's group ids, chunk by chunk: each chunk's
 * distinct packed keys are looked up (inserted) in the global table once,
 * and every position gets its key's entry in the chunk (local_ids).
 */
extern cudaError_t ga_launch_chunk_group_ids(const GaDevKeys *keys, const GaDevPack *pack,
											 const GaDevTable *table,
											 const GaDevPartitions *parts, int sm_count,
											 const GaLaunchParams *launch,
											 cudaStream_t stream);

/*
 * The partitioned strategy's accumulation, chunk by chunk in shared memory,
 * each chunk's entries merged into their groups.  inputs_in_order: the
 * aggregates' inputs are the scatter's copies (position i is their row i),
 * else rows perm[i] of the batch.  Nothing when the group ids overflowed.
 */
extern cudaError_t ga_launch_chunk_accumulate(const GaDevAggs *aggs,
											  const GaDevPartitions *parts,
											  int inputs_in_order, GaDevControl *control,
											  int sm_count, const GaLaunchParams *launch,
											  cudaStream_t stream);

/*
 * String keys (gpu/kernels/hashagg_strings.cu).  Phase 1 for a layout with
 * string keys: group_ids[i] for positions as ga_launch_assign_group_ids
 * takes them, each tuple hashed as the CPU device hashes it and its new
 * groups' bytes copied into the heap (a full table or heap raises the
 * overflow flag, a full heap heap_overflow too, and the row gets -1).
 */
extern cudaError_t ga_launch_string_group_ids(const GaDevKeys *keys,
											  const GaDevStrings *strings,
											  const GaDevTable *table, int64_t nrows,
											  const int32_t *rows,
											  const unsigned long long *count,
											  int32_t *group_ids, int sm_count,
											  cudaStream_t stream);

/* Growth: insert groups [0, ngroups) into the table's empty slots by their stored hashes. */
extern cudaError_t ga_launch_string_rebuild_slots(const GaDevStrings *strings,
												  const GaDevTable *table, int64_t ngroups,
												  int sm_count, cudaStream_t stream);

/*
 * Set control's group counter to ngroups and its heap to heap_used bytes,
 * and clear both overflow flags.
 */
extern cudaError_t ga_launch_string_reset_control(GaDevControl *control, int64_t ngroups,
												  int64_t heap_used, cudaStream_t stream);

/*
 * Finish: ends[g] = the end offset of group g's bytes of string key s when
 * the groups' bytes lie one after another in group order (the lengths'
 * inclusive prefix sum), for g in [0, ngroups).  temp/temp_bytes as CUB's
 * (temp NULL: only *temp_bytes is set); ngroups at most INT_MAX.
 */
extern cudaError_t ga_string_ends(void *temp, size_t *temp_bytes,
								  const GaDevStrings *strings, int s, int64_t capacity,
								  long long *ends, int64_t ngroups, int sm_count,
								  cudaStream_t stream);

/*
 * Finish: copy every group's bytes of string key s (its heap offsets in
 * offsets, capacity entries apart per word) to out, at ends[g] - length.
 */
extern cudaError_t ga_launch_string_gather(const GaDevStrings *strings, int s,
										   int64_t capacity, const long long *offsets,
										   const long long *ends, int64_t ngroups,
										   unsigned char *out, int sm_count,
										   cudaStream_t stream);

/* gpu/kernels/hashagg_two_phase.cu: launch helpers shared by the kernel files */
extern cudaError_t ga_grid_size(const void *kernel, int threads, size_t shared_bytes,
								int sm_count, int64_t items, int64_t items_per_block,
								int *grid);
extern cudaError_t ga_opt_in_shared(const void *kernel, size_t shared_bytes);
extern cudaError_t ga_shared_shape(const void *kernel, size_t shared_bytes,
								   GaLaunchShape *shape);
extern cudaError_t ga_grid_size_tuned(const void *kernel, int threads, size_t shared_bytes,
									  int sm_count, const GaLaunchParams *launch,
									  int64_t items, int64_t items_per_block, int *grid);
extern cudaError_t ga_shared_shape_tuned(const void *kernel, size_t shared_bytes,
										 const GaLaunchParams *launch, GaLaunchShape *shape);
extern int	ga_tuned_threads(const GaLaunchParams *launch, int rule, int bound);
extern void ga_clear_stale_error(void);

#endif							/* GPUAGG_HASHAGG_KERNELS_CUH */
