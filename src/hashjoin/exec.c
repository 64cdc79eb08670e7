/*-------------------------------------------------------------------------
 *
 * hashjoin/exec.c
 *	  Executes GpuHashJoin: reads the inner child into memory and builds on
 *	  the device, then probes with batches of outer rows and emits the
 *	  joined rows.
 *
 * Build.  Every inner row is copied (a MinimalTuple) and its join keys
 * evaluated; rows with a NULL key never match and are kept only when they
 * must appear in the output (RIGHT and FULL joins).  The device receives one
 * int64 per row: the key itself for one integer-like key, otherwise a hash
 * of the keys (then equality is rechecked here with the join's own
 * operators, so a hash collision costs time, never a wrong row).
 *
 * Probe.  Outer rows are copied into a batch of gpuagg.batch_rows rows (at
 * most twice the planner's estimate), their keys go to the device, and the
 * device answers for each row the range of build rows with an equal key
 * (cuda/gpuagg_device.h).  The answer is bounded by the batch, however many
 * rows a key matches: the rows are produced here one at a time from those
 * ranges, so a join may produce any number of rows.  Each candidate pair
 * passes the recheck and the join quals, like a native HashJoin's; what
 * comes out depends on the join type:
 *	INNER, RIGHT	every passing pair
 *	LEFT, FULL		every passing pair, or the outer row null-extended
 *	SEMI			the outer row once, at its first passing pair
 *	ANTI			the outer row when no pair passes
 * RIGHT and FULL remember which inner rows matched and emit the others,
 * null-extended, after the last batch.  ExecScan then applies the filter
 * (an outer join's pushed-down conditions) and the projection.
 *
 * Memory.  A build holds at most GpuAggHashJoinBuildLimit's bytes (hash_mem
 * at most): past it, the inner rows read so far and the rest go to
 * partitions on disk by their device key, then the outer side's too, and
 * the join runs one partition after another, each built and probed as
 * above, its unmatched inner rows emitted at its end (spill.c).
 *
 * Failures.  A device failure (or gpuagg.debug_fail_at_batch) during the
 * build or a probe switches to the CPU device with a NOTICE: the keys of the
 * inner rows and of the current batch are still here, so the join goes on
 * from where it was without reading any input again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "portability/instr_time.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "batch/batch.h"
#include "batch/exact_key.h"
#include "devices.h"
#include "gpuagg_hash.h"
#include "gpuagg_service.h"
#include "guc.h"
#include "hashjoin/desc.h"
#include "hashjoin/hashjoin.h"
#include "hashjoin/private.h"
#include "hashjoin/state.h"

/* Rows per probe batch: at most this, whatever gpuagg.batch_rows says. */
#define JOIN_MAX_BATCH_ROWS (256 * 1024)

static void gpujoin_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpujoin_exec(CustomScanState *node);
static void gpujoin_end(CustomScanState *node);
static void gpujoin_rescan(CustomScanState *node);
static void join_add_stats(GpuJoinState *state);

static const CustomExecMethods gpujoin_exec_methods = {
	.CustomName = GPUJOIN_NODE_NAME,
	.BeginCustomScan = gpujoin_begin,
	.ExecCustomScan = gpujoin_exec,
	.EndCustomScan = gpujoin_end,
	.ReScanCustomScan = gpujoin_rescan,
	.ExplainCustomScan = GpuJoinExplain,
};

/* CreateCustomScanState: the state, before BeginCustomScan. */
Node *
GpuJoinCreateScanState(CustomScan *cscan)
{
	GpuJoinState *state = palloc0(sizeof(GpuJoinState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &gpujoin_exec_methods;
	state->desc = GpuJoinDescFromList(cscan->custom_private);
	return (Node *) state;
}

/* Whether rows of the outer side without a match appear null-extended. */
static inline bool
join_keeps_outer(JoinType jointype)
{
	return jointype == JOIN_LEFT || jointype == JOIN_FULL || jointype == JOIN_ANTI;
}

/* Whether rows of the inner side without a match appear null-extended. */
static inline bool
join_keeps_inner(JoinType jointype)
{
	return jointype == JOIN_RIGHT || jointype == JOIN_FULL;
}

/* Free the device's join, if any; safe to call repeatedly. */
static void
join_release_device(void *arg)
{
	GpuJoinState *state = (GpuJoinState *) arg;

	state->matches = NULL;
	state->sorted_rows = NULL;
	if (state->join != NULL)
	{
		GaJoin	   *join = state->join;

		state->join = NULL;
		ga_join_destroy(join);
	}
}

/* Whether an expression tree contains a Param. */
static bool
contain_param_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, contain_param_walker, context);
}

/* Initialise the key expressions and hash functions of one side. */
static void
join_init_keys(GpuJoinState *state, List *exprs, const Oid *hashfns,
			   ExprState ***keys, Oid **types, FmgrInfo **hash)
{
	GpuJoinDesc *desc = state->desc;
	ListCell   *lc;
	int			i = 0;

	*keys = palloc(sizeof(ExprState *) * desc->nkeys);
	*types = palloc(sizeof(Oid) * desc->nkeys);
	*hash = palloc0(sizeof(FmgrInfo) * desc->nkeys);
	foreach(lc, exprs)
	{
		Expr	   *expr = (Expr *) lfirst(lc);

		(*keys)[i] = ExecInitExpr(expr, &state->css.ss.ps);
		(*types)[i] = getBaseType(exprType((Node *) expr));
		if (desc->key_kinds[i] == GPUJOIN_KEY_HASH)
			fmgr_info(hashfns[i], &(*hash)[i]);
		i++;
	}
}

/* BeginCustomScan: start both children and prepare the expressions. */
static void
gpujoin_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuJoinState *state = (GpuJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	GpuJoinDesc *desc = state->desc;
	List	   *pair_quals;
	bool		usable;
	int			i;

	eflags &= ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	state->outer_ps = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	state->inner_ps = ExecInitNode(lsecond(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make2(state->outer_ps, state->inner_ps);

	join_init_keys(state, desc->outer_keys, desc->outer_hashfns,
				   &state->outer_keys, &state->outer_types, &state->outer_hash);
	join_init_keys(state, desc->inner_keys, desc->inner_hashfns,
				   &state->inner_keys, &state->inner_types, &state->inner_hash);
	state->inner_keys_use_params = contain_param_walker((Node *) desc->inner_keys, NULL);
	pair_quals = list_concat(desc->recheck ? list_copy(desc->hash_clauses) : NIL,
							 desc->join_quals);
	state->pair_qual = ExecInitQual(pair_quals, &node->ss.ps);

	state->outer_slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(state->outer_ps),
											   &TTSOpsMinimalTuple);
	state->inner_slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(state->inner_ps),
											   &TTSOpsMinimalTuple);
	for (i = 0; i < desc->nscan; i++)
	{
		if (desc->scan_sides[i] == GPUJOIN_OUTER)
			state->outer_natts = Max(state->outer_natts, desc->scan_attnos[i]);
		else
			state->inner_natts = Max(state->inner_natts, desc->scan_attnos[i]);
	}

	state->device_kind = GpuAggPlannedDeviceKind(&usable);
	state->request.probe_batch_rows =
		(int64) Min((double) Min(gpuagg_batch_rows, JOIN_MAX_BATCH_ROWS),
					Max(2.0 * desc->outer_rows, 1024.0));
	state->request.fail_at_batch = gpuagg_debug_fail_at_batch;
	state->batch_capacity = state->request.probe_batch_rows;
	state->build_limit = GpuAggHashJoinBuildLimit();
	state->build_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin build",
											 ALLOCSET_DEFAULT_SIZES);
	state->spill_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin partitions",
											 ALLOCSET_DEFAULT_SIZES);
	state->batch_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin batch",
											 ALLOCSET_DEFAULT_SIZES);
	state->cleanup.func = join_release_device;
	state->cleanup.arg = state;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &state->cleanup);
}

/*
 * The device key of the current row of one side (the econtext's outer or
 * inner tuple); false when a key is NULL, which never matches.
 */
static bool
join_row_key(GpuJoinState *state, int side, ExprContext *econtext, int64 *key)
{
	GpuJoinDesc *desc = state->desc;
	ExprState **keys = side == GPUJOIN_OUTER ? state->outer_keys : state->inner_keys;
	Oid		   *types = side == GPUJOIN_OUTER ? state->outer_types : state->inner_types;
	FmgrInfo   *hash = side == GPUJOIN_OUTER ? state->outer_hash : state->inner_hash;
	uint64		combined = 0;
	int			i;

	for (i = 0; i < desc->nkeys; i++)
	{
		bool		isnull;
		Datum		value = ExecEvalExpr(keys[i], econtext, &isnull);
		uint64		part;

		if (isnull)
			return false;
		if (desc->key_kinds[i] == GPUJOIN_KEY_EXACT)
			part = (uint64) GpuJoinExactKey(value, types[i]);
		else
			part = DatumGetUInt32(FunctionCall1Coll(&hash[i], desc->collations[i], value));
		if (desc->nkeys == 1)
		{
			*key = (int64) part;
			return true;
		}
		/* finalized first, so that small integers spread out */
		combined = hash_combine64(combined, ga_splitmix64(part));
	}
	*key = (int64) combined;
	return true;
}

/* Room for at least one more element in a build-side array (doubling). */
static void *
join_grow(GpuJoinState *state, void *array, int64 *capacity, Size element)
{
	int64		grown = Max(*capacity * 2, 1024);

	array = array == NULL ?
		MemoryContextAllocHuge(state->build_cxt, element * grown) :
		repalloc_huge(array, element * grown);
	*capacity = grown;
	return array;
}

/*
 * Deform the columns the scan tuple needs of every inner row once, so that
 * emitting a pair copies them from an array instead of storing and
 * deforming the inner tuple again for each of its matches (a small build
 * side is matched millions of times).  By-reference values point into the
 * stored tuples, which live as long.  Skipped for a build side of more than
 * GPUJOIN_DEFORM_MAX values (memory), which keeps the per-pair path.
 */
#define GPUJOIN_DEFORM_MAX (INT64CONST(4) * 1024 * 1024)

static void
join_deform_inner(GpuJoinState *state)
{
	int			natts = state->inner_natts;
	int64		row;

	state->inner_values = NULL;
	state->inner_isnull = NULL;
	if (natts <= 0 || state->ninner == 0 || state->ninner > GPUJOIN_DEFORM_MAX / natts)
		return;
	state->inner_values = MemoryContextAllocHuge(state->build_cxt,
												 sizeof(Datum) * state->ninner * natts);
	state->inner_isnull = MemoryContextAllocHuge(state->build_cxt,
												 sizeof(bool) * state->ninner * natts);
	for (row = 0; row < state->ninner; row++)
	{
		ExecStoreMinimalTuple(state->inner_tuples[row], state->inner_slot, false);
		slot_getsomeattrs(state->inner_slot, natts);
		memcpy(&state->inner_values[row * natts], state->inner_slot->tts_values,
			   sizeof(Datum) * natts);
		memcpy(&state->inner_isnull[row * natts], state->inner_slot->tts_isnull,
			   sizeof(bool) * natts);
	}
	ExecClearTuple(state->inner_slot);
}

/* Forget the build side held in memory. */
static void
join_reset_build(GpuJoinState *state)
{
	MemoryContextReset(state->build_cxt);
	state->inner_tuples = NULL;
	state->ninner = state->inner_capacity = 0;
	state->build_keys = NULL;
	state->build_rows = NULL;
	state->nbuild = state->build_capacity = 0;
	state->inner_matched = NULL;
	state->inner_values = NULL;
	state->inner_isnull = NULL;
}

/*
 * Add an inner row to the build in memory: its tuple (in build_cxt) and,
 * when it has one, its device key.
 */
static void
join_add_inner(GpuJoinState *state, MinimalTuple tuple, bool has_key, int64 key)
{
	if (state->ninner >= GA_JOIN_MAX_BUILD_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuHashJoin's build side has more than %lld rows",
						(long long) GA_JOIN_MAX_BUILD_ROWS),
				 errhint("Set gpuagg.enable_hashjoin = off for this query.")));
	if (state->ninner >= state->inner_capacity)
		state->inner_tuples = join_grow(state, state->inner_tuples,
										&state->inner_capacity, sizeof(MinimalTuple));
	state->inner_tuples[state->ninner] = tuple;
	if (has_key)
	{
		if (state->nbuild >= state->build_capacity)
		{
			int64		capacity = state->build_capacity;

			state->build_keys = join_grow(state, state->build_keys, &capacity, sizeof(int64));
			state->build_rows = join_grow(state, state->build_rows,
										  &state->build_capacity, sizeof(uint32));
		}
		state->build_keys[state->nbuild] = key;
		state->build_rows[state->nbuild] = (uint32) state->ninner;
		state->nbuild++;
	}
	state->ninner++;
}

/*
 * The bytes the build in memory holds, with what join_finish_inner adds to
 * it (the deformed columns, the matched flags).
 */
static double
join_build_bytes(GpuJoinState *state)
{
	return (double) MemoryContextMemAllocated(state->build_cxt, true) +
		(double) state->ninner * (state->inner_natts * (sizeof(Datum) + sizeof(bool)) + 1);
}

/*
 * The build outgrew its memory: write the inner rows held so far to
 * partitions on disk, enough of them for the rows the planner expects (or
 * twice those read, if more), and free them.
 */
static void
join_start_spill(GpuJoinState *state)
{
	double		rows = Max(state->desc->inner_rows, 2.0 * state->ninner);
	double		expected = join_build_bytes(state) * rows / Max(state->ninner, 1);
	bool	   *keyed = MemoryContextAllocZero(state->build_cxt, Max(state->ninner, 1));
	int64		i;

	state->info.memory_kb = Max(state->info.memory_kb,
								(int64) (MemoryContextMemAllocated(state->build_cxt, true) / 1024));
	state->spill = GpuJoinSpillCreate(GpuJoinSpillPartitions(expected, state->build_limit),
									  state->spill_cxt);
	for (i = 0; i < state->nbuild; i++)
	{
		keyed[state->build_rows[i]] = true;
		GpuJoinSpillWrite(state->spill, GPUJOIN_INNER, true, state->build_keys[i],
						  state->inner_tuples[state->build_rows[i]]);
	}
	for (i = 0; i < state->ninner; i++)
	{
		if (!keyed[i])			/* a NULL key, kept for RIGHT and FULL */
			GpuJoinSpillWrite(state->spill, GPUJOIN_INNER, false, 0, state->inner_tuples[i]);
	}
	join_reset_build(state);
}

/* The build is complete: the matched flags, the deformed columns. */
static void
join_finish_inner(GpuJoinState *state)
{
	if (join_keeps_inner(state->desc->jointype))
		state->inner_matched = MemoryContextAllocHuge(state->build_cxt,
													  sizeof(bool) * Max(state->ninner, 1));
	if (state->inner_matched != NULL)
		memset(state->inner_matched, 0, sizeof(bool) * Max(state->ninner, 1));
	join_deform_inner(state);
	state->info.memory_kb = Max(state->info.memory_kb,
								(int64) (MemoryContextMemAllocated(state->build_cxt, true) / 1024));
}

/*
 * Read every inner row: copy it and compute its device key, into memory
 * or, past the build's memory, into partitions on disk.
 */
static void
join_read_inner(GpuJoinState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	bool		keep_null_keys = join_keeps_inner(state->desc->jointype);

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(state->inner_ps);
		int64		key;
		bool		has_key;
		MemoryContext old;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		state->info.inner_rows_read++;
		ResetExprContext(econtext);
		econtext->ecxt_innertuple = slot;
		has_key = join_row_key(state, GPUJOIN_INNER, econtext, &key);
		if (!has_key)
		{
			state->info.null_key_rows++;
			if (!keep_null_keys)
				continue;
			key = 0;
		}
		if (state->spill != NULL)
		{
			bool		should_free;
			MinimalTuple tuple = ExecFetchSlotMinimalTuple(slot, &should_free);

			GpuJoinSpillWrite(state->spill, GPUJOIN_INNER, has_key, key, tuple);
			if (should_free)
				pfree(tuple);
			continue;
		}
		old = MemoryContextSwitchTo(state->build_cxt);
		join_add_inner(state, ExecCopySlotMinimalTuple(slot), has_key, key);
		MemoryContextSwitchTo(old);
		if (join_build_bytes(state) > state->build_limit)
			join_start_spill(state);
	}
	if (state->spill == NULL)
		join_finish_inner(state);
}

/* Load partition p's inner rows into memory, to be built and probed. */
static void
join_load_partition(GpuJoinState *state, int p)
{
	MinimalTuple tuple;
	int64		key;
	bool		has_key;

	join_reset_build(state);
	state->partition = p;
	state->outer_done = false;
	state->unmatched_next = 0;
	while (GpuJoinSpillRead(state->spill, GPUJOIN_INNER, p, &has_key, &key, &tuple,
							state->build_cxt))
	{
		CHECK_FOR_INTERRUPTS();
		join_add_inner(state, tuple, has_key, key);
	}
	join_finish_inner(state);
}

/*
 * Partitioned: write every outer row to its partition (a row whose key is
 * NULL only when the join emits it unmatched), then join the first one.
 */
static void
join_spill_outer(GpuJoinState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;

	GpuJoinSpillEndSide(state->spill, GPUJOIN_INNER);
	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(state->outer_ps);
		MinimalTuple tuple;
		bool		should_free;
		bool		has_key;
		int64		key = 0;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		econtext->ecxt_outertuple = slot;
		has_key = join_row_key(state, GPUJOIN_OUTER, econtext, &key);
		if (!has_key)
		{
			state->info.null_key_rows++;
			if (!join_keeps_outer(state->desc->jointype))
				continue;
			key = 0;
		}
		tuple = ExecFetchSlotMinimalTuple(slot, &should_free);
		GpuJoinSpillWrite(state->spill, GPUJOIN_OUTER, has_key, key, tuple);
		if (should_free)
			pfree(tuple);
	}
	GpuJoinSpillEndSide(state->spill, GPUJOIN_OUTER);
	state->info.disk_kb = Max(state->info.disk_kb, GpuJoinSpillDiskKB(state->spill));
	state->info.batches += GpuJoinSpillCount(state->spill);
	join_load_partition(state, 0);
}

/*
 * Partitioned: close the partition just joined and load the next; false
 * after the last.
 */
static bool
join_next_partition(GpuJoinState *state)
{
	join_add_stats(state);
	join_release_device(state);
	GpuJoinSpillClosePartition(state->spill, state->partition);
	if (state->partition + 1 >= GpuJoinSpillCount(state->spill))
		return false;
	join_load_partition(state, state->partition + 1);
	return true;
}

/* Create the device join and build it from the inner keys. */
static bool
join_try_build(GpuJoinState *state, GaStatus *status)
{
	state->join = ga_join_create(state->device, &state->request, status);
	if (state->join == NULL)
		return false;
	if (!ga_join_build(state->join, state->build_keys, state->build_rows, state->nbuild,
					   GpuAggDeviceWait, NULL, status))
		return false;
	state->sorted_rows = ga_join_sorted_rows(state->join);
	return true;
}

/*
 * After a device failure: continue on the CPU device with a NOTICE when
 * that is possible, else fail with the device's message.
 */
static void
join_handle_failure(GpuJoinState *state, GaStatus *status)
{
	bool		recoverable;

	join_release_device(state);
	if (status->code == GA_ERR_CANCELLED)
		GpuAggRaiseCancel();
	recoverable = GpuAggDeviceFailureRecoverable(state->device, status) &&
		state->info.fallback == NULL;
	if (!recoverable)
		ereport(ERROR,
				(errcode(status->code == GA_ERR_OUT_OF_MEMORY ?
						 ERRCODE_OUT_OF_MEMORY : ERRCODE_SYSTEM_ERROR),
				 errmsg("GpuHashJoin failed on its device"),
				 errdetail("%s", status->message),
				 errhint("Set gpuagg.enable_hashjoin = off to run the query without GpuHashJoin.")));
	ereport(NOTICE,
			(errmsg("gpuagg: the device failed; finishing the join on the CPU"),
			 errdetail("%s", status->message)));
	state->info.fallback = pstrdup(status->message);
	state->request.fail_at_batch = 0;
	state->device = GpuAggOpenFallbackDevice(state->device, &state->info.setup_ms);
}

/* Add the device join's statistics to the node's totals (all loops). */
static void
join_add_stats(GpuJoinState *state)
{
	if (state->join != NULL)
		GpuJoinAddStats(&state->info.stats, state->join);
}

/* Read the inner side and build on the device (the CPU after a failure). */
static void
join_build(GpuJoinState *state)
{
	GaStatus	status;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	state->info.executed = true;
	join_read_inner(state);
	if (state->spill != NULL)
		join_spill_outer(state);
	else
		state->info.batches++;
	if (state->device == NULL)
	{
		state->device = GpuAggOpenDevice(state->device_kind, &state->info.setup_ms);
		state->info.service = ga_device_is_service(state->device);
	}
	while (!join_try_build(state, &status))
		join_handle_failure(state, &status);
	state->built = true;
	state->info.build_ms += GpuAggElapsedMs(start);
}

/*
 * Read the next batch of outer rows and probe it.  Returns false when the
 * outer side is exhausted.
 */
static bool
join_next_batch(GpuJoinState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	GaStatus	status;
	instr_time	start;
	MemoryContext old;

	MemoryContextReset(state->batch_cxt);
	state->matches = NULL;
	state->nouter = 0;
	state->cur_row = 0;
	state->cur_pair = 0;
	state->cur_matched = false;
	state->row_loaded = false;
	if (state->outer_done)
		return false;

	state->outer_tuples = MemoryContextAllocHuge(state->batch_cxt,
												 sizeof(MinimalTuple) * state->batch_capacity);
	state->probe_keys = MemoryContextAllocHuge(state->batch_cxt,
											   sizeof(int64) * state->batch_capacity);
	state->probe_null = MemoryContextAllocHuge(state->batch_cxt,
											   sizeof(bool) * state->batch_capacity);
	/* the child runs in the caller's context: its own state must outlive batches */
	while (state->nouter < state->batch_capacity)
	{
		TupleTableSlot *slot;
		int64		n = state->nouter;

		if (state->spill != NULL)
		{
			/* partitioned: the partition's rows, NULL keys already dropped */
			MinimalTuple tuple;
			bool		has_key;

			if (!GpuJoinSpillRead(state->spill, GPUJOIN_OUTER, state->partition, &has_key,
								  &state->probe_keys[n], &tuple, state->batch_cxt))
			{
				state->outer_done = true;
				break;
			}
			state->probe_null[n] = !has_key;
			state->outer_tuples[n] = tuple;
			state->nouter++;
			continue;
		}
		slot = ExecProcNode(state->outer_ps);
		if (TupIsNull(slot))
		{
			state->outer_done = true;
			break;
		}
		ResetExprContext(econtext);
		econtext->ecxt_outertuple = slot;
		state->probe_null[n] = !join_row_key(state, GPUJOIN_OUTER, econtext,
											 &state->probe_keys[n]);
		if (state->probe_null[n])
		{
			state->probe_keys[n] = 0;
			state->info.null_key_rows++;
			/* INNER, RIGHT, SEMI: a row that cannot match is not needed */
			if (!join_keeps_outer(state->desc->jointype))
				continue;
		}
		old = MemoryContextSwitchTo(state->batch_cxt);
		state->outer_tuples[n] = ExecCopySlotMinimalTuple(slot);
		MemoryContextSwitchTo(old);
		state->nouter++;
	}
	if (state->nouter == 0)
		return false;

	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		GaBatch    *batch = NULL;
		int64		i;

		CHECK_FOR_INTERRUPTS();
		if (state->join == NULL && !join_try_build(state, &status))
		{
			join_handle_failure(state, &status);
			continue;
		}
		batch = ga_join_next_batch(state->join, GpuAggDeviceWait, NULL, &status);
		if (batch != NULL)
		{
			GaColumn   *column = &batch->columns[0];

			memcpy(column->values, state->probe_keys, sizeof(int64) * state->nouter);
			for (i = 0; i < state->nouter; i++)
			{
				if (state->probe_null[i])
					ga_column_set_null(column, i);
			}
			batch->nrows = state->nouter;
			state->matches = ga_join_probe(state->join, batch, GpuAggDeviceWait, NULL, &status);
		}
		if (state->matches != NULL)
			break;
		join_add_stats(state);
		join_handle_failure(state, &status);
	}
	state->info.probe_ms += GpuAggElapsedMs(start);
	return true;
}

/*
 * Fill the scan tuple from the stored outer row and inner row inner_row
 * (from the deformed inner values, or from inner_slot where the caller
 * stored it); NULLs for an absent side (with_outer false, inner_row < 0).
 */
static TupleTableSlot *
join_emit(GpuJoinState *state, bool with_outer, int64 inner_row)
{
	GpuJoinDesc *desc = state->desc;
	TupleTableSlot *scan = state->css.ss.ss_ScanTupleSlot;
	bool		with_inner = inner_row >= 0;
	const Datum *inner_values = NULL;
	const bool *inner_isnull = NULL;
	int			i;

	ExecClearTuple(scan);
	if (with_outer && state->outer_natts > 0)
		slot_getsomeattrs(state->outer_slot, state->outer_natts);
	if (with_inner && state->inner_natts > 0)
	{
		if (state->inner_values != NULL)
		{
			inner_values = &state->inner_values[inner_row * state->inner_natts];
			inner_isnull = &state->inner_isnull[inner_row * state->inner_natts];
		}
		else
		{
			slot_getsomeattrs(state->inner_slot, state->inner_natts);
			inner_values = state->inner_slot->tts_values;
			inner_isnull = state->inner_slot->tts_isnull;
		}
	}
	for (i = 0; i < desc->nscan; i++)
	{
		bool		outer = desc->scan_sides[i] == GPUJOIN_OUTER;
		int			column = desc->scan_attnos[i] - 1;

		if (outer && with_outer)
		{
			scan->tts_values[i] = state->outer_slot->tts_values[column];
			scan->tts_isnull[i] = state->outer_slot->tts_isnull[column];
		}
		else if (!outer && with_inner)
		{
			scan->tts_values[i] = inner_values[column];
			scan->tts_isnull[i] = inner_isnull[column];
		}
		else
		{
			scan->tts_values[i] = (Datum) 0;
			scan->tts_isnull[i] = true;
		}
	}
	return ExecStoreVirtualTuple(scan);
}

/*
 * The candidates of the current outer row: the next joined row, or NULL
 * when the row is done (its null-extended or SEMI/ANTI row, if any, is the
 * caller's).
 */
static TupleTableSlot *
join_next_pair(GpuJoinState *state)
{
	GpuJoinDesc *desc = state->desc;
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	const GaJoinMatches *matches = state->matches;
	int64		row = state->cur_row;
	uint32		count = state->probe_null[row] ? 0 : matches->count[row];

	while (state->cur_pair < count)
	{
		uint32		inner_row = state->sorted_rows[matches->first[row] + state->cur_pair];

		state->cur_pair++;
		if ((++state->pairs_tried & 0x3fff) == 0)
			CHECK_FOR_INTERRUPTS();	/* one key may match millions of rows */
		if (state->pair_qual != NULL || state->inner_values == NULL)
			ExecStoreMinimalTuple(state->inner_tuples[inner_row], state->inner_slot, false);
		if (state->pair_qual != NULL)
		{
			ResetExprContext(econtext);
			econtext->ecxt_outertuple = state->outer_slot;
			econtext->ecxt_innertuple = state->inner_slot;
			if (!ExecQual(state->pair_qual, econtext))
				continue;
		}

		state->cur_matched = true;
		state->info.matched_rows++;
		if (state->inner_matched != NULL)
			state->inner_matched[inner_row] = true;
		switch (desc->jointype)
		{
			case JOIN_ANTI:
				state->cur_pair = count;	/* the row is out */
				return NULL;
			case JOIN_SEMI:
				state->cur_pair = count;	/* once is enough */
				return join_emit(state, true, -1);
			default:
				if (desc->inner_unique)
					state->cur_pair = count;	/* no other pair can pass */
				return join_emit(state, true, inner_row);
		}
	}
	return NULL;
}

/* After the outer side: the inner rows no pair matched (RIGHT, FULL). */
static TupleTableSlot *
join_next_unmatched_inner(GpuJoinState *state)
{
	while (state->unmatched_next < state->ninner)
	{
		int64		row = state->unmatched_next++;

		if (state->inner_matched[row])
			continue;
		if (state->inner_values == NULL)
			ExecStoreMinimalTuple(state->inner_tuples[row], state->inner_slot, false);
		return join_emit(state, false, row);
	}
	return NULL;
}

/*
 * The next joined row of the build in memory (of the partition being
 * joined), or NULL when it is done.
 */
static TupleTableSlot *
join_next_in_build(GpuJoinState *state)
{
	JoinType	jointype = state->desc->jointype;

	for (;;)
	{
		TupleTableSlot *slot;

		if (state->matches == NULL || state->cur_row >= state->nouter)
		{
			if (!join_next_batch(state))
				break;
			continue;
		}
		if (!state->row_loaded)
		{
			ExecStoreMinimalTuple(state->outer_tuples[state->cur_row],
								  state->outer_slot, false);
			state->row_loaded = true;
		}
		slot = join_next_pair(state);
		if (slot != NULL)
			return slot;

		/* the row is done */
		state->cur_row++;
		state->cur_pair = 0;
		state->row_loaded = false;
		if (!state->cur_matched && join_keeps_outer(jointype))
		{
			state->cur_matched = false;
			return join_emit(state, true, -1);
		}
		state->cur_matched = false;
	}
	if (join_keeps_inner(jointype))
		return join_next_unmatched_inner(state);
	return NULL;
}

/* ExecScan access method: the next joined row, or an empty slot at the end. */
static TupleTableSlot *
join_next(ScanState *ss)
{
	GpuJoinState *state = (GpuJoinState *) ss;

	if (!state->built)
		join_build(state);
	for (;;)
	{
		TupleTableSlot *slot = join_next_in_build(state);

		if (slot != NULL)
			return slot;
		if (state->spill == NULL || !join_next_partition(state))
			break;
	}
	join_add_stats(state);
	join_release_device(state);
	return ExecClearTuple(ss->ss_ScanTupleSlot);
}

/*
 * The join input of the GpuHashAgg above (hashagg/exec.c): append the joined
 * rows that pass the node's filter to batch, as their scan tuples, through
 * the aggregation's batch builder; no ExecProcNode, projection or result slot
 * per row.  A row whose text keys do not fit what the batch's string columns
 * have left stays in its slot, and comes first into the next batch.
 * Returns true when the join is done, false when batch is full.
 */
bool
GpuJoinFillBatch(CustomScanState *node, GpuAggBatchBuilder *builder, GaBatch *batch)
{
	GpuJoinState *state = (GpuJoinState *) node;
	ExprState  *filter = node->ss.ps.qual;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	/* what ExecProcNode does first: a changed parameter means start over */
	if (node->ss.ps.chgParam != NULL)
		ExecReScan(&node->ss.ps);
	if (state->fill_pending != NULL)
	{
		if (batch->nrows >= batch->capacity ||
			!GpuAggBatchAppend(builder, batch, state->fill_pending))
			return false;
		state->fill_pending = NULL;
	}
	while (batch->nrows < batch->capacity)
	{
		TupleTableSlot *slot;

		ResetExprContext(econtext);
		slot = join_next(&node->ss);
		if (TupIsNull(slot))
			return true;
		if (filter != NULL)
		{
			econtext->ecxt_scantuple = slot;
			if (!ExecQual(filter, econtext))
				continue;
		}
		if (!GpuAggBatchAppend(builder, batch, slot))
		{
			state->fill_pending = slot;
			return false;
		}
	}
	return false;
}

/* ExecScan recheck method: nothing to recheck. */
static bool
join_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

/* ExecCustomScan: the next joined row that passes the filter, projected. */
static TupleTableSlot *
gpujoin_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, join_next, join_recheck);
}

/* Close the partitions on disk, if any. */
static void
join_end_spill(GpuJoinState *state)
{
	if (state->spill != NULL)
		GpuJoinSpillEnd(state->spill);
	state->spill = NULL;
	MemoryContextReset(state->spill_cxt);
}

/* EndCustomScan: release the device and shut down both children. */
static void
gpujoin_end(CustomScanState *node)
{
	GpuJoinState *state = (GpuJoinState *) node;

	join_add_stats(state);
	join_release_device(state);
	join_end_spill(state);
	ExecEndNode(state->outer_ps);
	ExecEndNode(state->inner_ps);
}

/*
 * ReScanCustomScan: probe again with the same build when the inner side's
 * inputs did not change; otherwise build afresh.
 */
static void
gpujoin_rescan(CustomScanState *node)
{
	GpuJoinState *state = (GpuJoinState *) node;

	if (node->ss.ps.chgParam != NULL)
	{
		UpdateChangedParamSet(state->outer_ps, node->ss.ps.chgParam);
		UpdateChangedParamSet(state->inner_ps, node->ss.ps.chgParam);
	}
	join_add_stats(state);
	join_release_device(state);
	MemoryContextReset(state->batch_cxt);
	state->matches = NULL;
	state->nouter = 0;
	state->outer_done = false;
	state->fill_pending = NULL;
	state->unmatched_next = 0;

	/*
	 * The device join is rebuilt from the kept keys on the next batch, unless
	 * the inner rows or their keys (a key over an outer query's value) changed.
	 */
	if (state->inner_ps->chgParam != NULL || !state->built || state->spill != NULL ||
		(node->ss.ps.chgParam != NULL && state->inner_keys_use_params))
	{
		/* partitions on disk are read once: a partitioned join starts over */
		join_end_spill(state);
		join_reset_build(state);
		state->built = false;
		if (state->inner_ps->chgParam == NULL)
			ExecReScan(state->inner_ps);
	}
	else if (state->inner_matched != NULL)
		memset(state->inner_matched, 0, sizeof(bool) * Max(state->ninner, 1));
	state->info.fallback = NULL;
	state->request.fail_at_batch = gpuagg_debug_fail_at_batch;
	if (state->outer_ps->chgParam == NULL)
		ExecReScan(state->outer_ps);
}
