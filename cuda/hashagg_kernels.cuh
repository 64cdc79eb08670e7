/*-------------------------------------------------------------------------
 *
 * hashagg_kernels.cuh
 *	  The GPU hash aggregation kernels as seen by the host code in
 *	  device_gpu.cu: the plain structs the kernels take by value, and one
 *	  launch function per kernel.  Kernel bodies live in hashagg_kernels.cu.
 *
 * Data layout on the device (one aggregation):
 *
 *	slots		int32[nslots], nslots = 2 * capacity (a power of two): the
 *				open-addressing table of Wu et al., Algorithm 1.  A slot holds
 *				GA_SLOT_EMPTY, GA_SLOT_BUSY (its winner is writing the key),
 *				GA_SLOT_POISON (the winner found the group arrays full) or a
 *				dense group id.
 *	keys		int64[(nkeys + 1) * capacity], word-major: word 0 of group g is
 *				the null mask (bit k set when key k is null) at keys[g], word
 *				1 + k is key k widened to int64 (0 when null) at
 *				keys[(1 + k) * capacity + g].
 *	accumulators one array per aggregate, capacity elements of the result
 *				element type of gpuagg_device.h (16-byte GaInt128 for SUM_INT,
 *				float for SUM_FLOAT32, GaMoments and GaComoments for the
 *				moments, 8 bytes otherwise; float MIN/MAX hold
 *				ga_float64_to_ordered() integers).
 *	control		GaDevControl: the group counter and the overflow flag.
 *	programs	GaDevDerivedProgram[nprograms]: the derived columns' distinct
 *				programs, with pointers into the input buffer; uploaded once.
 *
 * Derived columns (gpuagg_device.h) are computed in the input buffer by
 * compute_derived_kernel before phase 1, after a batch's copies or a
 * join's gather: their values and validity bitmaps are written there, in
 * the slots the host never fills, and the aggregation reads them like any
 * column.  Their operands' and NaN flags' bitmaps are always present in
 * the buffer (copied, set to all valid, or gathered), so that the
 * descriptions never change between batches.
 *
 * Every launch function returns the launch's cudaError_t (cudaSuccess or
 * the error of the launch itself; errors of the running kernel surface at
 * the next synchronisation).  None of them throws or prints.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHAGG_KERNELS_CUH
#define GPUAGG_HASHAGG_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpuagg_device.h"

/*
 * Limits of the GPU device: keys and aggregates travel to the kernels as
 * kernel parameters (constant bank, no per-batch upload), which must stay
 * under 4 KB.  Requests beyond them are refused by agg_create.
 */
#define GA_GPU_MAX_KEYS GA_MAX_KEYS
#define GA_GPU_MAX_AGGS GA_MAX_AGG_OPS

/* Threads per block of every kernel. */
#define GA_GPU_BLOCK_THREADS 256

/* Slot states of the group table; dense group ids are >= 0. */
#define GA_SLOT_EMPTY (-1)		/* all bits set: cudaMemset(0xff) makes it */
#define GA_SLOT_BUSY (-2)
#define GA_SLOT_POISON (-3)

/* Largest group capacity: group ids are int32 and slots 2 * capacity. */
#define GA_GPU_MAX_CAPACITY (INT64_C(1) << 30)

/* Shared by the kernels of one aggregation; lives in device memory. */
typedef struct GaDevControl
{
	unsigned long long ngroups;	/* group ids handed out; may pass capacity */
	int			overflow;		/* set when a group did not fit */
	unsigned int shared_fallbacks;	/* shared-memory launches that fell back */
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
	int32_t		pad;
	GaDevControl *control;
} GaDevTable;

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
									 * array, per group of the shared table */
} GaDevAgg;

typedef struct GaDevAggs
{
	int32_t		naggs;
	int32_t		pad;
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

/* Phase 1: group_ids[row] for rows [0, nrows), inserting new keys. */
extern cudaError_t ga_launch_assign_group_ids(const GaDevKeys *keys,
											  const GaDevTable *table,
											  int64_t nrows, int32_t *group_ids,
											  int sm_count, cudaStream_t stream);

/* Growth: insert groups [0, ngroups) of table's dense keys into its empty slots. */
extern cudaError_t ga_launch_rebuild_slots(const GaDevTable *table, int64_t ngroups,
										   int sm_count, cudaStream_t stream);

/* Set accumulators of groups [begin, end) to their identities. */
extern cudaError_t ga_launch_init_accumulators(const GaDevAggs *aggs, int64_t begin,
											   int64_t end, int sm_count,
											   cudaStream_t stream);

/*
 * Phase 2 with global atomics.  group_ids NULL means every row is group 0
 * (no keys).  Does nothing when control->overflow is set.
 */
extern cudaError_t ga_launch_accumulate_global(const GaDevAggs *aggs,
											   const int32_t *group_ids,
											   int64_t nrows, GaDevControl *control,
											   int sm_count, cudaStream_t stream);

/*
 * Phase 2 with per-block shared-memory accumulators for groups_alloc groups
 * (shared_bytes = groups_alloc * bytes per group); falls back to global
 * atomics inside the kernel when more groups exist.
 */
extern cudaError_t ga_launch_accumulate_shared(const GaDevAggs *aggs,
											   const int32_t *group_ids,
											   int64_t nrows, GaDevControl *control,
											   int64_t groups_alloc,
											   size_t shared_bytes, int sm_count,
											   cudaStream_t stream);

/* Set control's group counter to ngroups and clear its overflow flag. */
extern cudaError_t ga_launch_reset_control(GaDevControl *control, int64_t ngroups,
										   cudaStream_t stream);

#endif							/* GPUAGG_HASHAGG_KERNELS_CUH */
