/*-------------------------------------------------------------------------
 *
 * sizing.c
 *	  The sizes of an aggregation (result and accumulator widths, table
 *	  bytes, shared-memory budgets) and the strategy rules built on them
 *	  (sizing.h), shared by EXPLAIN, which plans without a device
 *	  (ga_agg_planned_strategy), and the GPU device (gpu/strategy.cu), which
 *	  applies them batch by batch.  Plain C: no CUDA; sizes come from the
 *	  GPU's properties in a GaGpuInfo.
 *
 * The rules: direct indexing when the key range is small (Karnagel; MapD's
 * perfect hashing), per-block tables in shared memory while the groups fit
 * them (Rosenfeld), one device-memory table while it fits the L2 cache,
 * and partitioning by key hash beyond that (Wu et al.).  docs/references.md
 * lists the papers.
 *
 *-------------------------------------------------------------------------
 */
#include "sizing.h"

/* Bytes of one result element of aggregate `agg` (see GaAggOp). */
int
ga_agg_result_width(const GaAggRequest *request, int agg)
{
	switch (request->aggs[agg].op)
	{
		case GA_AGG_SUM_INT:
			return (int) sizeof(GaInt128);
		case GA_AGG_SUM_FLOAT32:
			return (int) sizeof(float);
		case GA_AGG_MOMENTS:
			return (int) sizeof(GaMoments);
		case GA_AGG_COMOMENTS:
			return (int) sizeof(GaComoments);
		default:
			return 8;
	}
}

/* Accumulator bytes one group needs in the global arrays. */
int64_t
ga_agg_state_bytes_per_group(const GaAggRequest *request)
{
	int64_t		bytes = 0;
	int			i;

	for (i = 0; i < request->naggs; i++)
		bytes += ga_agg_result_width(request, i);
	return bytes > 0 ? bytes : 8;
}

/*
 * Bytes of aggregate `agg`'s accumulator in a block's shared-memory table.
 * With `narrow` (batches of at most 2^31 rows, so a block never sees more)
 * counts take 4 bytes and sums of inputs up to 32 bits take 8: a block's
 * partial sum of at most 2^31 such values cannot overflow 64 bits.  The
 * global arrays always use the full widths of ga_agg_result_width().
 */
int
ga_shared_width(const GaAggRequest *request, int agg, int narrow)
{
	const GaAggSpec *spec = &request->aggs[agg];

	switch (spec->op)
	{
		case GA_AGG_COUNT_ROWS:
		case GA_AGG_COUNT:
		case GA_AGG_COUNT_NONFINITE:
			return narrow ? 4 : 8;
		case GA_AGG_SUM_INT:
			return narrow && ga_type_width(request->column_types[spec->column]) <= 4 ? 8 : 16;
		case GA_AGG_SUM_FLOAT32:
			return 4;
		case GA_AGG_MOMENTS:
		case GA_AGG_COMOMENTS:
			return ga_agg_result_width(request, agg);
		default:
			return 8;
	}
}

/*
 * Whether a request runs in the two-phase kernels only: MOMENTS and
 * COMOMENTS fold whole rows with compensated sums shifted by the global
 * group's value, which the direct (perfect) and fused (one-pass shared)
 * kernels do not do; shared then means the two-phase shared kernel.
 */
int
ga_request_two_phase_only(const GaAggRequest *request)
{
	int			i;

	for (i = 0; i < request->naggs; i++)
		if (request->aggs[i].op == GA_AGG_MOMENTS || request->aggs[i].op == GA_AGG_COMOMENTS)
			return 1;
	return 0;
}

/* Shared-memory accumulator bytes of one group (all aggregates). */
int64_t
ga_shared_state_bytes(const GaAggRequest *request, int narrow)
{
	int64_t		bytes = 0;
	int			i;

	for (i = 0; i < request->naggs; i++)
		bytes += ga_shared_width(request, i, narrow);
	return bytes;
}

/*
 * Shared memory one block of the shared-memory kernels may use: half a
 * multiprocessor's (two blocks resident per multiprocessor keep enough rows
 * in flight), less what the runtime reserves per block, and never above the
 * per-block opt-in maximum.
 */
int64_t
ga_shared_budget_bytes(const GaGpuInfo *info)
{
	int64_t		per_sm = info->shared_memory_per_multiprocessor;
	int64_t		budget;

	if (per_sm <= 0)
		per_sm = info->shared_memory_per_block;
	budget = per_sm / 2 - 1024;
	if (budget > info->shared_memory_per_block)
		budget = info->shared_memory_per_block;
	return budget > 0 ? budget : 0;
}

/*
 * Shared memory a block of a one-pass direct kernel (perfect in shared
 * memory) may use: all that one block may opt in to, so one block per
 * multiprocessor when the table is large; at least the two-block budget.
 * A direct table in shared memory at half the threads still beats
 * direct_global, whose atomics go to device memory, so ranges too large
 * for the two-block budget (2^13 keys with the range's slack) stay in
 * shared memory; the kernel benchmark (docs/benchmarks.md) compares them.
 */
int64_t
ga_direct_budget_bytes(const GaGpuInfo *info)
{
	int64_t		two_blocks = ga_shared_budget_bytes(info);

	return info->shared_memory_per_block > two_blocks ?
		info->shared_memory_per_block : two_blocks;
}

/*
 * Bits of the key tuple packed into one 64-bit word (the fused shared
 * kernel's local table keys): each key's width, plus a null bit for a key
 * that may be null.  Above 64 the keys cannot be packed.
 */
int
ga_keys_pack_bits(const GaAggRequest *request, int assume_nullable)
{
	int			bits = 0;
	int			i;

	for (i = 0; i < request->nkeys; i++)
		bits += 8 * ga_type_width(request->column_types[request->key_columns[i]]) +
			(assume_nullable ? 1 : 0);
	return bits;
}

/*
 * Device-memory bytes of one group in the global table (slots, keys,
 * accumulators; with string keys the tuple's hash, and per string key a
 * length and GA_STRING_HEAP_BYTES of bytes in the heap).
 */
int64_t
ga_table_bytes_per_group(const GaAggRequest *request)
{
	int64_t		strings = 0;

	for (int i = 0; i < request->nkeys; i++)
		if (request->column_types[request->key_columns[i]] == GA_TYPE_STRING)
			strings++;
	return 2 * 4 + 8 * (int64_t) (request->nkeys + 1) +
		ga_agg_state_bytes_per_group(request) +
		(strings > 0 ? 8 + strings * (4 + GA_STRING_HEAP_BYTES) : 0);
}

/*
 * The most groups the shared strategy's per-block tables hold on this GPU:
 * accumulators only, indexed by dense group id (the fused kernel, which
 * also keeps the packed keys, holds fewer: ga_fused_max_groups).
 */
int64_t
ga_shared_strategy_max_groups(const GaGpuInfo *info, const GaAggRequest *request)
{
	int64_t		state = ga_shared_state_bytes(request, 1);

	if (state <= 0)
		state = 4;
	return ga_shared_budget_bytes(info) / state;
}

/*
 * The most groups the fused shared kernel's per-block hash table holds: a
 * packed 64-bit key and the accumulators per slot, at most
 * GA_FUSED_LOAD_PERCENT percent of the slots used.
 */
int64_t
ga_fused_max_groups(const GaGpuInfo *info, const GaAggRequest *request)
{
	int64_t		slot_bytes = 8 + ga_shared_state_bytes(request, 1);

	return ga_shared_budget_bytes(info) / slot_bytes * GA_FUSED_LOAD_PERCENT / 100;
}

/*
 * The most direct-indexed entries (the product of the key ranges, a null
 * slot per key included) a block's shared memory holds for `perfect`.
 */
int64_t
ga_perfect_shared_max_entries(const GaGpuInfo *info, const GaAggRequest *request)
{
	int64_t		state = ga_shared_state_bytes(request, 1);

	/* accumulators plus one bit per entry for "seen" */
	return ga_direct_budget_bytes(info) * 8 / (8 * (state > 0 ? state : 0) + 1);
}

/*
 * Whether a request's keys fit 64 bits side by side (the fused and chunk
 * kernels pack them; a key column with nulls also needs a null bit, which
 * the GPU device checks batch by batch).
 */
static int
keys_fit_64_bits(const GaAggRequest *request)
{
	int			bytes = 0;

	for (int i = 0; i < request->nkeys; i++)
		bytes += ga_type_width(request->column_types[request->key_columns[i]]);
	return request->nkeys > 0 && bytes <= 8;
}

/* Whether a request groups by a string key, which the GPU groups globally only. */
static int
has_string_keys(const GaAggRequest *request)
{
	for (int i = 0; i < request->nkeys; i++)
		if (request->column_types[request->key_columns[i]] == GA_TYPE_STRING)
			return 1;
	return 0;
}

/*
 * The hash-based strategy auto uses for `groups` groups: global for string
 * keys (only the global table compares bytes); else shared while they
 * fit a block's shared memory; beyond, partitioned when the group table
 * does not fit the L2 cache (ga_partitioned_applies) and the keys pack into
 * 64 bits: then global's random accesses to the table miss L2, and
 * partitioning by key hash keeps each chunk's groups in shared memory (the
 * kernel benchmark, docs/benchmarks.md, compares them); else global.
 */
GaStrategy
ga_auto_strategy_for_groups(const GaGpuInfo *info, const GaAggRequest *request,
							int64_t groups)
{
	if (groups < 1)
		groups = 1;
	if (has_string_keys(request))
		return GA_STRATEGY_GLOBAL;
	if (request->nkeys == 0 || groups <= ga_shared_strategy_max_groups(info, request))
		return GA_STRATEGY_SHARED;
	if (keys_fit_64_bits(request) && ga_partitioned_applies(info, request, groups))
		return GA_STRATEGY_PARTITIONED;
	return GA_STRATEGY_GLOBAL;
}

/*
 * Whether a forced partitioned strategy runs as itself for `groups` groups:
 * only when the global table does not fit GA_PARTITIONED_L2_PERCENT percent
 * of the L2 cache, where partitioning can pay; elsewhere global runs.
 */
int
ga_partitioned_applies(const GaGpuInfo *info, const GaAggRequest *request,
					   int64_t groups)
{
	int64_t		l2 = info->l2_cache_size > 0 ? info->l2_cache_size : 4 * 1024 * 1024;

	return request->nkeys > 0 &&
		(double) groups * ga_table_bytes_per_group(request) >
		(double) l2 * GA_PARTITIONED_L2_PERCENT / 100;
}

/*
 * The strategy EXPLAIN announces before anything runs.  A forced strategy
 * is shown as forced (where it does not apply the device falls back, and
 * EXPLAIN ANALYZE shows what ran).  For auto, keys whose types alone bound
 * the range (bool, int2) to what a block's shared memory can index directly
 * plan `perfect`; wider keys get their range from a sample of the first
 * batch on the device, so the plan names the hash-based strategy for the
 * estimated groups and the device may still pick perfect.
 */
GaStrategy
ga_agg_planned_strategy(const GaGpuInfo *info, const GaAggRequest *request)
{
	double		entries = 1;
	int			i;

	if (info == NULL)
		return GA_STRATEGY_CPU;
	if (request->strategy != GA_STRATEGY_AUTO)
		return request->strategy;
	if (request->nkeys == 0)
		return GA_STRATEGY_SHARED;
	for (i = 0; i < request->nkeys; i++)
	{
		int			width = ga_type_width(request->column_types[request->key_columns[i]]);

		entries *= width <= 2 ? (double) (INT64_C(1) << (8 * width)) + 1 : 1e30;
	}
	if (request->nkeys <= GA_PERFECT_MAX_KEYS && !ga_request_two_phase_only(request) &&
		!has_string_keys(request) &&
		entries <= (double) ga_perfect_shared_max_entries(info, request))
		return GA_STRATEGY_PERFECT;
	return ga_auto_strategy_for_groups(info, request, request->estimated_groups);
}
