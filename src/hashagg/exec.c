/*-------------------------------------------------------------------------
 *
 * hashagg/exec.c
 *	  Executes GpuHashAgg: on the first fetch it pulls every child row into
 *	  columnar batches, runs them through a device, and then returns one
 *	  scan tuple per group (ExecScan applies HAVING and the projection).
 *
 * Grouping sets: every batch goes to one device aggregation per set (the
 * first gets the batch, the others a copy of it, as DISTINCT sets do), each
 * grouping by its subset of the keys; a set of no keys is a plain aggregate,
 * one row even for no input.  The node returns the groups of every set in
 * turn, with the keys a set leaves out NULL and each GROUPING(...) the
 * bitmask PostgreSQL computes: one bit per argument, 1 where the set leaves
 * that key out, the first argument the most significant.
 *
 * Past hash_mem the node partitions its input on disk instead (spill.c),
 * one spill per grouping set of keys, and returns each set's groups one
 * partition at a time, a set's after the set before; docs/design/spill.md.
 *
 * Device memory and pinned buffers belong to the device layer; a reset
 * callback on the query's memory context releases them, because
 * EndCustomScan does not run after an ERROR.  While the device works, its
 * wait loop asks GpuAggDeviceWait whether the query was cancelled.
 *
 * A device failure (GPU out of memory, driver error) is recovered by running
 * the child again and aggregating on the CPU device, with a NOTICE, when the
 * query has nothing volatile (so the rows are the same); otherwise the query
 * fails with the device's message.  Once a spilled node returned groups,
 * the CPU device aggregates the partition a failure hit again from disk,
 * and the rest; a grouping set of no keys has its group in the node's
 * memory by then.  A failure injected for testing (gpuagg.debug_fail_at_batch)
 * takes the same path on any device.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "executor/instrument.h"
#include "portability/instr_time.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "aggjoin/aggjoin.h"
#include "aggjoin/probe_filter.h"
#include "batch/batch.h"
#include "devices.h"
#include "finalize/finalize.h"
#include "gpuagg_service.h"
#include "guc.h"
#include "hashagg/desc.h"
#include "hashagg/hashagg.h"
#include "hashagg/layout.h"
#include "hashagg/private.h"
#include "hashagg/state.h"
#include "hashjoin/hashjoin.h"

static void gpuagg_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpuagg_exec(CustomScanState *node);
static void gpuagg_end(CustomScanState *node);
static void gpuagg_rescan(CustomScanState *node);
static bool agg_spill_input(GpuAggState *state, GaStatus *status);

static const CustomExecMethods gpuagg_exec_methods = {
	.CustomName = GPUAGG_NODE_NAME,
	.BeginCustomScan = gpuagg_begin,
	.ExecCustomScan = gpuagg_exec,
	.EndCustomScan = gpuagg_end,
	.ReScanCustomScan = gpuagg_rescan,
	.ExplainCustomScan = GpuAggExplain,
};

/* CreateCustomScanState: allocate the node's state. */
Node *
GpuAggCreateScanState(CustomScan *cscan)
{
	GpuAggState *state = palloc0(sizeof(GpuAggState));

	NodeSetTag(state, T_CustomScanState);
	state->css.flags = cscan->flags;
	state->css.methods = &gpuagg_exec_methods;
	state->desc = GpuAggDescFromList(cscan->custom_private);
	state->current = -1;
	return (Node *) state;
}

/* Free the device's aggregations, if any; safe to call repeatedly. */
static void
agg_destroy(GpuAggState *state)
{
	int			d;

	for (d = 0; state->aggs != NULL && d < state->desc->nsets; d++)
	{
		GaAgg	   *agg = state->aggs[d];

		state->results[d] = NULL;
		state->aggs[d] = NULL;
		if (agg != NULL)
			ga_agg_destroy(agg);
	}
	for (d = 0; state->distinct_aggs != NULL && d < state->layout->ndistinct; d++)
	{
		GaAgg	   *agg = state->distinct_aggs[d];

		state->distinct_aggs[d] = NULL;
		if (agg != NULL)
			ga_agg_destroy(agg);
	}
}

/*
 * Reset callback of the query's memory context: free the device's
 * aggregations.  The partitions' temporary files are the resource owner's
 * to close after an error, so the spill is only forgotten here.
 */
static void
agg_release(void *arg)
{
	GpuAggState *state = (GpuAggState *) arg;

	agg_destroy(state);
	if (state->spills != NULL)
		memset(state->spills, 0, sizeof(GpuAggSpill *) * state->desc->nsets);
	state->spilled = false;
}

/* Close a set's partitions on disk, if any (not after an error). */
static void
agg_spill_close_set(GpuAggState *state, int set)
{
	if (state->spills[set] != NULL)
		GpuAggSpillEnd(state->spills[set]);
	state->spills[set] = NULL;
}

/* Close this run's partitions on disk (not after an error). */
static void
agg_spill_close(GpuAggState *state)
{
	int			s;

	for (s = 0; s < state->desc->nsets; s++)
		agg_spill_close_set(state, s);
	state->spilled = false;
}

/* BeginCustomScan: start the child, derive the request; no device yet. */
static void
gpuagg_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuAggState *state = (GpuAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	bool		usable;
	int			i;

	state->child = ExecInitNode(linitial(cscan->custom_plans), estate,
								eflags & ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	node->custom_ps = list_make1(state->child);
	for (i = 0; i < state->desc->njoin_steps; i++)
	{
		state->inners[i] = ExecInitNode(list_nth(cscan->custom_plans, i + 1), estate,
										eflags & ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
		node->custom_ps = lappend(node->custom_ps, state->inners[i]);
	}
	if (state->desc->child_kind == GPUAGG_CHILD_PROJECTION)
		state->direct = GpuAggDirectScanCreate(state->child, estate->es_query_cxt);
	state->info.direct_scan = state->direct != NULL;
	GpuAggBuildRequests(state);
	state->device_kind = GpuAggPlannedDeviceKind(&usable);
	/* a plan whose aggjoin groups by strings runs where joined strings group */
	if (state->desc->njoin_steps > 0 && !ga_device_kind_groups_join_strings(state->device_kind))
		for (i = 0; i < state->desc->nkeys; i++)
			if (state->desc->keys[i].as_bytes)
				state->device_kind = GA_DEVICE_CPU;
	GpuAggPlanMemory(state, eflags);
	state->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "gpuagg run",
										   ALLOCSET_DEFAULT_SIZES);
	state->cleanup.func = agg_release;
	state->cleanup.arg = state;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &state->cleanup);
}

/* Copy a filled batch into another batch of the same layout. */
static void
agg_copy_batch(const GaBatch *from, GaBatch *to)
{
	int			c;

	if (to->ncolumns != from->ncolumns || to->capacity < from->nrows)
		elog(ERROR, "gpuagg: DISTINCT batch does not match the main batch");
	for (c = 0; c < from->ncolumns; c++)
	{
		const GaColumn *src = &from->columns[c];
		GaColumn   *dst = &to->columns[c];
		int			width = ga_type_width(src->type);

		if (width > 0)
			memcpy(dst->values, src->values, width * from->nrows);
		if (src->type == GA_TYPE_STRING)
			memcpy(dst->bytes, src->bytes, ga_string_used(src, from->nrows));
		dst->has_nulls = src->has_nulls;
		if (src->has_nulls)
			memcpy(dst->validity, src->validity, (from->nrows + 7) / 8);
	}
	to->nrows = from->nrows;
}

/*
 * Combine the DISTINCT aggregations' results with the first grouping set's
 * groups (result), in memory of cxt.
 */
static void
agg_combine_distinct(GpuAggState *state, const GaAggResult *result, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	state->distinct_sums = GpuAggDistinctCombine(state->layout, state->desc->naggs,
												 state->desc->nkeys, result,
												 state->distinct_results,
												 state->builder);
	MemoryContextSwitchTo(old);
}

/*
 * Add a finished aggregation's statistics to the node's totals (all loops):
 * batches and rows of the first grouping set's, the groups of every set's,
 * the launch parameters of the last one's.
 */
static void
agg_add_stats(GpuAggState *state, const GaAgg *agg, bool first, bool groups)
{
	GaAggStats	run;
	GaAggStats *total = &state->info.stats;
	int			i;

	ga_agg_get_stats(agg, &run);
	if (first)
	{
		total->batches += run.batches;
		total->input_rows += run.input_rows;
	}
	if (groups)
		total->groups += run.groups;
	total->join_build_rows += run.join_build_rows;
	total->joined_rows += run.joined_rows;
	total->bytes_sent += run.bytes_sent;
	total->table_growths += run.table_growths;
	for (i = 0; i < GA_NUM_STRATEGIES; i++)
		total->batches_by_strategy[i] += run.batches_by_strategy[i];
	total->device_ms += run.device_ms;
	total->transfer_ms += run.transfer_ms;
	total->queue_ms += run.queue_ms;
	total->gpu_ordinal = run.gpu_ordinal;
	total->retries += run.retries;
	if (run.device_estimated_groups > total->device_estimated_groups)
		total->device_estimated_groups = run.device_estimated_groups;
	for (i = 0; i < GA_NUM_PHASES; i++)
		total->phase_ms[i] += run.phase_ms[i];
	/* the launch parameters of the last input chunk that ran */
	if (run.batches > 0)
	{
		total->launch_family = run.launch_family;
		total->launch_source = run.launch_source;
		total->launch = run.launch;
		total->launch_contention = run.launch_contention;
	}
	total->batches_explored += run.batches_explored;
}

/*
 * Fill a batch from the child: its rows (serial), or the batch messages that
 * GpuAggPack nodes send through a Gather (parallel; a message that does not
 * fit waits for the next batch).  Returns true at the end of the input.
 *
 * Where the GpuAggPack's participants write their pages into this batch
 * (batch/page_share.c), it is open to them while the Gather is read (from
 * its first call on, which sets the shared memory up), and is closed when
 * a participant's notice says it is full, at the end of the input, or
 * before a message is appended.
 */
static bool
agg_fill_batch(GpuAggState *state, GaBatch *batch)
{
	GpuAggPageShare *share = NULL;	/* the batch is open to participants */

	for (;;)
	{
		TupleTableSlot *slot;
		bool		isnull;
		Datum		message;
		uint32		gen;
		bool		full;

		if (state->desc->child_kind == GPUAGG_CHILD_JOIN_INPUT)
			return GpuJoinFillBatch((CustomScanState *) state->child, state->builder, batch);
		if (state->direct)
			return GpuAggDirectScanFill(state->direct, state->builder, batch);
		if (state->desc->child_kind == GPUAGG_CHILD_PROJECTION)
		{
			if (batch->nrows >= batch->capacity)
				return false;
			/* a row whose text keys did not fit the last batch comes first */
			slot = state->pending_row != NULL ? state->pending_row :
				ExecProcNode(state->child);
			state->pending_row = NULL;
			if (TupIsNull(slot))
				return true;
			if (!GpuAggBatchAppend(state->builder, batch, slot))
			{
				state->pending_row = slot;
				return false;
			}
			continue;
		}

		if (share == NULL && state->pending == NULL &&
			(share = GpuAggPackPageShare(state->child)) != NULL)
			GpuAggPageShareOpen(share, batch);
		if (state->pending == NULL)
		{
			slot = ExecProcNode(state->child);
			if (TupIsNull(slot))
			{
				if (share != NULL)
					GpuAggPageShareClose(share, batch);
				return true;
			}
			message = slot_getattr(slot, 1, &isnull);
			if (isnull)
				elog(ERROR, "gpuagg: empty batch message");
			state->pending = DatumGetByteaPP(message);
			if (GpuAggPageShareIsNotice(state->pending, &gen, &full))
			{
				state->pending = NULL;
				if (share != NULL && full && GpuAggPageShareIsOpen(share, gen))
				{
					GpuAggPageShareClose(share, batch);
					return false;
				}
				continue;
			}
			if (GpuAggExchangeIsRef(state->pending))
				state->pending = GpuAggExchangeGet(GpuAggPackExchange(state->child),
												   state->pending, &state->pending_slot);
		}
		if (share != NULL)
		{
			GpuAggPageShareClose(share, batch);
			share = NULL;
		}
		if (!GpuAggMessageFits(state->pending, batch))
		{
			if (batch->nrows == 0)
				elog(ERROR, "gpuagg: batch message larger than a batch");
			return false;
		}
		GpuAggMessageAppend(state->receiver, state->builder, batch, state->pending);
		state->pending = NULL;
		if (state->pending_slot >= 0)
			GpuAggExchangeRelease(GpuAggPackExchange(state->child), state->pending_slot);
		state->pending_slot = -1;
	}
}

/*
 * Submit a filled batch to the first grouping set's aggregation, after a
 * copy of it to every other set's and each DISTINCT set's aggregation
 * (submit hands the batch over).
 */
static bool
agg_submit_batch(GpuAggState *state, GaBatch *batch, GaStatus *status)
{
	int			d;

	for (d = 1; d < state->desc->nsets; d++)
	{
		GaBatch    *copy = ga_agg_next_batch(state->aggs[d], GpuAggDeviceWait, NULL, status);

		if (copy == NULL)
			return false;
		agg_copy_batch(batch, copy);
		if (!ga_agg_submit(state->aggs[d], copy, GpuAggDeviceWait, NULL, status))
			return false;
	}

	for (d = 0; d < state->layout->ndistinct; d++)
	{
		GaBatch    *copy = ga_agg_next_batch(state->distinct_aggs[d],
											 GpuAggDeviceWait, NULL, status);

		if (copy == NULL)
			return false;
		agg_copy_batch(batch, copy);
		if (!ga_agg_submit(state->distinct_aggs[d], copy, GpuAggDeviceWait, NULL, status))
			return false;
	}
	return ga_agg_submit(state->aggs[0], batch, GpuAggDeviceWait, NULL, status);
}

/*
 * Collect the groups of every aggregation and combine the DISTINCT sets.
 * The node's results are ready when results[0] is set.
 */
static bool
agg_finish_all(GpuAggState *state, GaStatus *status)
{
	const GaAggResult *first;
	int			d;

	for (d = state->desc->nsets - 1; d >= 1; d--)
	{
		state->results[d] = ga_agg_finish(state->aggs[d], GpuAggDeviceWait, NULL, status);
		if (state->results[d] == NULL)
			return false;
		agg_add_stats(state, state->aggs[d], false, true);
	}
	first = ga_agg_finish(state->aggs[0], GpuAggDeviceWait, NULL, status);
	if (first == NULL)
		return false;
	/* a partition's batches and rows were counted as the input was read */
	agg_add_stats(state, state->aggs[0], true, true);
	for (d = 0; d < state->layout->ndistinct; d++)
	{
		state->distinct_results[d] = ga_agg_finish(state->distinct_aggs[d],
												   GpuAggDeviceWait, NULL, status);
		if (state->distinct_results[d] == NULL)
			return false;
		agg_add_stats(state, state->distinct_aggs[d], false, false);
	}
	if (state->layout->ndistinct > 0)
		agg_combine_distinct(state, first, state->run_cxt);
	state->results[0] = first;
	return true;
}

/*
 * Whether the groups of the grouping sets' aggregations passed max_groups,
 * so that the input must be partitioned (never once partitioned: a
 * partition's groups fit by its estimate).
 */
static bool
agg_over_limit(GpuAggState *state)
{
	GaAggStats	stats;
	int64		groups = 0;
	int			s;

	if (state->max_groups <= 0 || state->spilled)
		return false;
	for (s = 0; s < state->desc->nsets; s++)
	{
		ga_agg_get_stats(state->aggs[s], &stats);
		groups += stats.groups;
	}
	return groups > state->max_groups;
}

/*
 * Note the peak memory of the aggregations just finished, for EXPLAIN
 * ANALYZE: the node's own (batches, dictionaries, partitions' buffers) and
 * the device's, counted from its groups.
 */
static void
agg_note_memory(GpuAggState *state)
{
	GaAggStats	stats;
	double		device = 0;
	int			d;

	for (d = 0; d < state->desc->nsets; d++)
	{
		if (state->aggs[d] == NULL)
			continue;
		ga_agg_get_stats(state->aggs[d], &stats);
		device += stats.groups * GpuAggGroupBytes(state);
	}
	state->info.device_memory_kb = Max(state->info.device_memory_kb,
									   (int64) (device / 1024));
	state->info.memory_kb = Max(state->info.memory_kb,
								(int64) (MemoryContextMemAllocated(state->run_cxt, true) / 1024));
	if (state->spilled)
	{
		int64		disk = 0;

		for (d = 0; d < state->desc->nsets; d++)
			if (state->spills[d] != NULL)
				disk += GpuAggSpillDiskKB(state->spills[d]);
		state->info.disk_kb = Max(state->info.disk_kb, disk);
	}
}

/*
 * Why the direct scan's pages cannot go to the device in this run, or NULL
 * when they may (the scan itself has further reasons).
 */
static const char *
agg_page_off_reason(GpuAggState *state)
{
	if (!gpuagg_page_scan)
		return "gpuagg.page_scan is off";	/* EXPLAIN shows no pages then */
	if (!ga_device_takes_pages(state->device))
		return "the device takes no pages";
	if (state->spill_now)
		return "the input spills to disk";
	if (state->desc->nsets > 1)
		return "grouping sets";
	if (state->layout->ndistinct > 0)
		return "a DISTINCT aggregate";
	if (state->desc->njoin_steps > 0)
		return "a join on the device";
	return NULL;
}

/*
 * One attempt at the whole aggregation on state->device.  Returns false
 * with status set when the device fails; errors of PostgreSQL's own (in the
 * child plan, say) are raised as usual.  Times the input and the device
 * calls for EXPLAIN ANALYZE.
 */
static bool
agg_try_run(GpuAggState *state, GaStatus *status)
{
	bool		eof = false;
	instr_time	start;
	GpuAggProbeFilter *probe_filter = NULL;
	int			d;

	if (state->desc->njoin_steps > 0 && state->desc->child_kind == GPUAGG_CHILD_PACKED)
		GpuAggPackSetProbeFilter(state->child, NULL);	/* freed just below */
	agg_spill_close(state);
	MemoryContextReset(state->run_cxt);
	state->requests[0].fail_at_batch = state->fail_at_batch;
	state->builder = GpuAggBatchBuilderCreate(state->layout->ncolumns,
											  state->layout->sources, state->run_cxt);
	state->info.pages_possible = gpuagg_page_scan && ga_device_takes_pages(state->device);
	if (state->direct != NULL)
		state->requests[0].pages =
			GpuAggDirectScanUsePages(state->direct, state->layout->ncolumns,
									 state->layout->sources, state->requests[0].batch_rows,
									 ga_device_page_capacity(state->device),
									 agg_page_off_reason(state));
	else if (state->desc->child_kind == GPUAGG_CHILD_PACKED)
		state->requests[0].pages =
			GpuAggPackUsePages(state->child, ga_device_page_capacity(state->device),
							   state->requests[0].batch_rows, agg_page_off_reason(state),
							   ga_device_is_service(state->device), state->run_cxt);
	if (state->spill_now)
		return agg_spill_input(state, status);
	for (d = 0; d < state->desc->nsets; d++)
	{
		state->aggs[d] = ga_agg_create(state->device, &state->requests[d], status);
		if (state->aggs[d] == NULL)
			return false;
	}
	/* only this run's aggregation reads pages, not a spill's partitions */
	state->requests[0].pages = NULL;
	state->receiver = GpuAggMessageReceiverCreate(state->layout->ncolumns, state->run_cxt);
	if (state->desc->njoin_steps > 0 && state->desc->child_kind == GPUAGG_CHILD_PACKED)
	{
		MemoryContext old = MemoryContextSwitchTo(state->run_cxt);

		probe_filter = GpuAggProbeFilterCreate();
		MemoryContextSwitchTo(old);
	}
	for (d = 1; d <= state->desc->njoin_steps; d++)
	{
		/* aggjoin: each build side into its build; then probe batches */
		bool		built;

		INSTR_TIME_SET_CURRENT(start);
		built = GpuAggJoinBuild(state->aggs[0], state->desc, state->layout, d, state->builder,
								state->receiver, state->inners[d - 1], state->run_cxt,
								probe_filter, status);
		state->info.build_ms += GpuAggElapsedMs(start);
		if (!built)
			return false;
	}
	/* the probe side's workers drop rows no build key matches */
	if (probe_filter != NULL)
		GpuAggPackSetProbeFilter(state->child, probe_filter);
	for (d = 0; d < state->layout->ndistinct; d++)
	{
		state->distinct_aggs[d] = ga_agg_create(state->device, &state->distinct_requests[d],
												status);
		if (state->distinct_aggs[d] == NULL)
			return false;
	}

	state->pending = NULL;
	state->pending_slot = -1;
	state->pending_row = NULL;
	while (!eof)
	{
		GaBatch    *batch;
		bool		ok;

		INSTR_TIME_SET_CURRENT(start);
		batch = ga_agg_next_batch(state->aggs[0], GpuAggDeviceWait, NULL, status);
		state->info.wait_ms += GpuAggElapsedMs(start);
		if (batch == NULL)
			return false;

		INSTR_TIME_SET_CURRENT(start);
		GpuAggBatchBuilderStart(state->builder, batch);
		eof = agg_fill_batch(state, batch);
		state->info.input_ms += GpuAggElapsedMs(start);

		INSTR_TIME_SET_CURRENT(start);
		ok = batch->nrows == 0 || agg_submit_batch(state, batch, status);
		state->info.wait_ms += GpuAggElapsedMs(start);
		if (!ok)
			return false;
		if (agg_over_limit(state))
		{
			state->spill_now = true;
			state->restart = true;
			return false;
		}
		CHECK_FOR_INTERRUPTS();
	}
	INSTR_TIME_SET_CURRENT(start);
	eof = agg_finish_all(state, status);
	state->info.wait_ms += GpuAggElapsedMs(start);
	agg_note_memory(state);
	if (eof)
		state->info.partitions++;
	return eof;
}

/* Free grouping set `set`'s aggregation (and the DISTINCT sets', of set 0). */
static void
agg_destroy_set(GpuAggState *state, int set)
{
	int			d;

	state->results[set] = NULL;
	if (state->aggs[set] != NULL)
		ga_agg_destroy(state->aggs[set]);
	state->aggs[set] = NULL;
	for (d = 0; set == 0 && d < state->layout->ndistinct; d++)
	{
		if (state->distinct_aggs[d] != NULL)
			ga_agg_destroy(state->distinct_aggs[d]);
		state->distinct_aggs[d] = NULL;
	}
}

/*
 * Aggregate grouping set `set`'s next partition on disk (again: the one
 * just read, from its start) with a fresh aggregation (and DISTINCT sets'
 * ones); returns false with status set when the device fails.  When no
 * partition is left the result is empty.
 */
static bool
agg_run_partition(GpuAggState *state, int set, bool again, GaStatus *status)
{
	static const GaAggResult empty = {0};
	GpuAggSpill *spill = state->spills[set];
	const GaAggResult *result;
	instr_time	start;
	int64		rows;
	bool		eof = false;
	int			d;

	agg_destroy_set(state, set);
	state->current = -1;
	state->distinct_sums = NULL;
	MemoryContextReset(state->partition_cxt);
	if (again)
		GpuAggSpillRewind(spill);
	else if (!GpuAggSpillNextPartition(spill, &rows))
	{
		state->results[set] = &empty;
		return true;
	}
	if (set == 0)				/* injected: the partitions' batches count together */
		state->requests[0].fail_at_batch = state->fail_at_batch > state->partition_batches ?
			state->fail_at_batch - state->partition_batches : 0;
	state->aggs[set] = ga_agg_create(state->device, &state->requests[set], status);
	if (state->aggs[set] == NULL)
		return false;
	for (d = 0; set == 0 && d < state->layout->ndistinct; d++)
	{
		state->distinct_aggs[d] = ga_agg_create(state->device, &state->distinct_requests[d],
												status);
		if (state->distinct_aggs[d] == NULL)
			return false;
	}
	while (!eof)
	{
		GaBatch    *batch;
		bool		ok = true;

		INSTR_TIME_SET_CURRENT(start);
		batch = ga_agg_next_batch(state->aggs[set], GpuAggDeviceWait, NULL, status);
		state->info.wait_ms += GpuAggElapsedMs(start);
		if (batch == NULL)
			return false;
		INSTR_TIME_SET_CURRENT(start);
		eof = GpuAggSpillFill(spill, batch);
		state->info.input_ms += GpuAggElapsedMs(start);
		INSTR_TIME_SET_CURRENT(start);
		for (d = 0; ok && batch->nrows > 0 && set == 0 && d < state->layout->ndistinct; d++)
		{
			GaBatch    *copy = ga_agg_next_batch(state->distinct_aggs[d],
												 GpuAggDeviceWait, NULL, status);

			ok = copy != NULL;
			if (ok)
			{
				agg_copy_batch(batch, copy);
				ok = ga_agg_submit(state->distinct_aggs[d], copy, GpuAggDeviceWait, NULL,
								   status);
			}
		}
		ok = ok && (batch->nrows == 0 ||
					ga_agg_submit(state->aggs[set], batch, GpuAggDeviceWait, NULL, status));
		state->info.wait_ms += GpuAggElapsedMs(start);
		if (set == 0 && batch->nrows > 0)
			state->partition_batches++;
		if (!ok)
			return false;
		CHECK_FOR_INTERRUPTS();
	}

	/* the partition's batches and rows were counted as the input was read */
	INSTR_TIME_SET_CURRENT(start);
	result = ga_agg_finish(state->aggs[set], GpuAggDeviceWait, NULL, status);
	if (result == NULL)
		return false;
	agg_add_stats(state, state->aggs[set], false, true);
	for (d = 0; set == 0 && d < state->layout->ndistinct; d++)
	{
		state->distinct_results[d] = ga_agg_finish(state->distinct_aggs[d],
												   GpuAggDeviceWait, NULL, status);
		if (state->distinct_results[d] == NULL)
			return false;
		agg_add_stats(state, state->distinct_aggs[d], false, false);
	}
	if (set == 0 && state->layout->ndistinct > 0)
		agg_combine_distinct(state, result, state->partition_cxt);
	state->info.wait_ms += GpuAggElapsedMs(start);
	state->results[set] = result;
	agg_note_memory(state);
	state->info.partitions++;
	return true;
}

/*
 * A copy in the node's memory of the one group of set `set`, a set of no
 * keys, whose aggregation ran beside the partitioning pass: the groups of
 * the sets before it come from partitions, and a device failure there (the
 * GPU service's, whose memory holds the device's result) leaves the copy
 * for the CPU device to go on with.
 */
static const GaAggResult *
agg_copy_keyless_result(GpuAggState *state, int set, const GaAggResult *result)
{
	const GaAggRequest *request = &state->requests[set];
	GaAggResult *copy = MemoryContextAllocZero(state->run_cxt, sizeof(GaAggResult));
	int			a;

	Assert(result->nkeys == 0);
	copy->ngroups = result->ngroups;
	copy->naggs = result->naggs;
	copy->values = MemoryContextAllocZero(state->run_cxt, sizeof(void *) * Max(result->naggs, 1));
	for (a = 0; a < result->naggs; a++)
	{
		Size		bytes = (Size) ga_agg_result_width(request, a) * result->ngroups;

		copy->values[a] = MemoryContextAlloc(state->run_cxt, Max(bytes, 1));
		if (bytes > 0)
			memcpy(copy->values[a], result->values[a], bytes);
	}
	return copy;
}

/*
 * Read the whole input into partitions on disk, one spill per grouping set
 * of keys (a set of no keys, one group, is aggregated as the input goes
 * by), then start returning the first set's groups.  The input's batches
 * are the node's own, of the requests' capacity.
 */
static bool
agg_spill_input(GpuAggState *state, GaStatus *status)
{
	const GpuAggDesc *desc = state->desc;
	const GpuAggLayout *layout = state->layout;
	const GaAggResult *result;
	GaBatch    *batch;
	instr_time	start;
	bool		eof = false;
	int			nspills = 0;
	int			s;

	state->spilled = true;
	state->partition_batches = 0;
	state->partition_cxt = AllocSetContextCreate(state->run_cxt, "gpuagg partition",
												 ALLOCSET_DEFAULT_SIZES);
	for (s = 0; s < desc->nsets; s++)
		nspills += desc->sets[s].key_mask != 0;
	for (s = 0; s < desc->nsets; s++)
	{
		const GaAggRequest *request = &state->requests[s];

		if (desc->sets[s].key_mask != 0)
			state->spills[s] = GpuAggSpillCreate(layout->ncolumns, layout->column_types,
												 request->nkeys, request->key_columns,
												 state->max_groups, desc->sets[s].est_groups,
												 nspills, state->run_cxt);
		else if ((state->aggs[s] = ga_agg_create(state->device, request, status)) == NULL)
			return false;
	}
	state->receiver = GpuAggMessageReceiverCreate(layout->ncolumns, state->run_cxt);
	/* its strings start within a quarter of hash_mem, and grow for long values */
	batch = GpuAggLocalBatchCreate(layout->ncolumns, layout->column_types,
								   state->requests[0].batch_rows,
								   Min(GpuAggLayoutStringBytes(layout, state->requests[0].batch_rows),
									   (int64) (get_hash_memory_limit() / 4)),
								   state->run_cxt);
	state->pending = NULL;
	state->pending_slot = -1;
	state->pending_row = NULL;
	while (!eof)
	{
		GpuAggLocalBatchReset(batch);
		INSTR_TIME_SET_CURRENT(start);
		GpuAggBatchBuilderStart(state->builder, batch);
		eof = agg_fill_batch(state, batch);
		for (s = 0; s < desc->nsets; s++)
			if (state->spills[s] != NULL)
				GpuAggSpillBatch(state->spills[s], batch);
		state->info.input_ms += GpuAggElapsedMs(start);
		for (s = 0; s < desc->nsets && batch->nrows > 0; s++)
		{
			GaBatch    *copy;

			if (state->spills[s] != NULL)
				continue;
			copy = ga_agg_next_batch(state->aggs[s], GpuAggDeviceWait, NULL, status);
			if (copy == NULL)
				return false;
			agg_copy_batch(batch, copy);
			if (!ga_agg_submit(state->aggs[s], copy, GpuAggDeviceWait, NULL, status))
				return false;
		}
		if (batch->nrows > 0)
			state->info.stats.batches++;
		state->info.stats.input_rows += batch->nrows;
		CHECK_FOR_INTERRUPTS();
	}
	for (s = 0; s < desc->nsets; s++)
	{
		if (state->spills[s] != NULL)
			continue;
		result = ga_agg_finish(state->aggs[s], GpuAggDeviceWait, NULL, status);
		if (result == NULL)
			return false;
		agg_add_stats(state, state->aggs[s], false, true);
		state->results[s] = agg_copy_keyless_result(state, s, result);
		ga_agg_destroy(state->aggs[s]);
		state->aggs[s] = NULL;
	}
	state->emit_set = 0;
	state->current = -1;
	return state->spills[0] == NULL || agg_run_partition(state, 0, false, status);
}

/* Whether a child (the probe side or a build side) must be rescanned. */
static bool
agg_children_changed(GpuAggState *state)
{
	int			i;

	for (i = 0; i < state->desc->njoin_steps; i++)
	{
		if (state->inners[i]->chgParam != NULL)
			return true;
	}
	return state->child->chgParam != NULL;
}

/*
 * Rescan the child (and an aggjoin's build sides) now, and
 * start its direct scan over; a child whose parameters changed is rescanned
 * by the executor when next read.
 */
static void
agg_rescan_children(GpuAggState *state)
{
	int			i;

	for (i = 0; i < state->desc->njoin_steps; i++)
	{
		if (state->inners[i]->chgParam == NULL)
			ExecReScan(state->inners[i]);
	}
	GpuAggPackStopRun(state->child);	/* workers waiting for a batch end */
	if (state->child->chgParam == NULL)
		ExecReScan(state->child);
	if (state->direct)
		GpuAggDirectScanReset(state->direct);
}

/*
 * Fail the query with the device's message in status; volatile: the CPU
 * device could have finished it but for the query's volatile functions.
 */
static void
agg_device_error(const GaStatus *status, bool volatile_input)
{
	ereport(ERROR,
			(errcode(status->code == GA_ERR_OUT_OF_MEMORY ?
					 ERRCODE_OUT_OF_MEMORY : ERRCODE_SYSTEM_ERROR),
			 errmsg("GpuHashAgg failed on its device"),
			 errdetail("%s", status->message),
			 volatile_input ?
			 errhint("The query could not be finished on the CPU because it contains volatile functions. Run it again, or set gpuagg.device = cpu.") :
			 errhint("Set gpuagg.enabled = off to run the query without gpuagg.")));
}

/* Say that the device failed with status, and go on on the CPU device. */
static void
agg_fall_back(GpuAggState *state, const GaStatus *status)
{
	ereport(NOTICE,
			(errmsg("gpuagg: the device failed; finishing the query on the CPU"),
			 errdetail("%s", status->message)));
	state->info.fallback = pstrdup(status->message);
	state->fail_at_batch = 0;
	state->device = GpuAggOpenFallbackDevice(state->device, &state->info.setup_ms);
}

/*
 * Aggregate all input.  On a device failure, retry once on the CPU device
 * when the child can be run again, else fail with the device's message.
 */
static void
agg_run(GpuAggState *state)
{
	GaStatus	status;

	state->info.executed = true;
	state->device = GpuAggOpenDevice(state->device_kind, &state->info.setup_ms);
	state->info.service = ga_device_is_service(state->device);
	for (;;)
	{
		bool		recoverable;

		state->restart = false;
		if (agg_try_run(state, &status))
			return;
		agg_destroy(state);
		agg_spill_close(state);
		if (state->restart)
		{
			/* too many groups for hash_mem: read the input again, partitioned */
			agg_rescan_children(state);
			continue;
		}
		if (status.code == GA_ERR_CANCELLED)
			GpuAggRaiseCancel();

		recoverable = GpuAggDeviceFailureRecoverable(state->device, &status) &&
			state->info.fallback == NULL;
		if (!recoverable || !state->desc->rescan_safe)
			agg_device_error(&status, recoverable);
		agg_fall_back(state, &status);
		agg_rescan_children(state);
	}
}

/*
 * Aggregate set `set`'s next partition, the groups before all returned.  On
 * a device failure the CPU device aggregates that partition again from its
 * start, and the ones after it, as the groups returned came from the
 * partitions before; a failure the CPU cannot take over fails the query.
 */
static void
agg_next_partition(GpuAggState *state, int set)
{
	GaStatus	status;

	if (agg_run_partition(state, set, false, &status))
		return;
	agg_destroy_set(state, set);
	if (status.code == GA_ERR_CANCELLED)
		GpuAggRaiseCancel();
	/* a later set of no keys has its group in the node's memory already */
	if (GpuAggDeviceFailureRecoverable(state->device, &status) &&
		state->info.fallback == NULL)
	{
		agg_fall_back(state, &status);
		if (agg_run_partition(state, set, true, &status))
			return;
		agg_destroy_set(state, set);
		if (status.code == GA_ERR_CANCELLED)
			GpuAggRaiseCancel();
	}
	agg_destroy(state);
	agg_device_error(&status, false);
}

/*
 * Spilled: make the next piece of groups current, the emitting set's next
 * partition or the next set's first; false after the last set.  A set's
 * partitions and aggregation are freed once its groups went out.
 */
static bool
agg_next_piece(GpuAggState *state)
{
	int			set = state->emit_set;

	if (state->spills[set] != NULL && GpuAggSpillPending(state->spills[set]) > 0)
	{
		agg_next_partition(state, set);
		return true;
	}
	if (set + 1 >= state->desc->nsets)
		return false;
	agg_spill_close_set(state, set);
	agg_destroy_set(state, set);
	state->emit_set = ++set;
	state->current = -1;
	if (state->spills[set] != NULL)
		agg_next_partition(state, set);
	return true;
}

/* ExecScan access method: the next group in the scan direction. */
static TupleTableSlot *
agg_next(ScanState *ss)
{
	GpuAggState *state = (GpuAggState *) ss;
	const GpuAggDesc *desc = state->desc;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ExprContext *econtext = ss->ps.ps_ExprContext;
	const GaAggResult *result;
	MemoryContext old;
	instr_time	start;
	bool		timed;
	int64		total = 0;
	int64		group;
	int			set;
	int			key;
	int			i;

	if (state->results[0] == NULL && !state->spilled)
		agg_run(state);
	ExecClearTuple(slot);
	if (state->spilled)
	{
		/* partitioned (forward only): a set's partitions, then the next set */
		while (state->current + 1 >= state->results[state->emit_set]->ngroups)
		{
			if (!agg_next_piece(state))
				return slot;
		}
		state->current++;
		set = state->emit_set;
		group = state->current;
		result = state->results[set];
		goto form;
	}

	for (set = 0; set < desc->nsets; set++)
		total += state->results[set]->ngroups;
	if (ScanDirectionIsBackward(ss->ps.state->es_direction))
	{
		if (state->current >= 0)
			state->current--;
		if (state->current < 0)
			return slot;
	}
	else
	{
		if (state->current < total)
			state->current++;
		if (state->current >= total)
			return slot;
	}
	/* the sets' groups in turn: which set, and which of its groups */
	group = state->current;
	for (set = 0; group >= state->results[set]->ngroups; set++)
		group -= state->results[set]->ngroups;
	result = state->results[set];

form:

	timed = ss->ps.instrument != NULL && ss->ps.instrument->need_timer;
	if (timed)
		INSTR_TIME_SET_CURRENT(start);
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	key = 0;					/* the set's keys are the result's, in order */
	for (i = 0; i < desc->nkeys; i++)
	{
		int64		first = 0;

		if ((desc->sets[set].key_mask & ((uint32) 1 << i)) == 0)
		{
			slot->tts_isnull[i] = true; /* not in this set */
			slot->tts_values[i] = (Datum) 0;
			continue;
		}
		slot->tts_isnull[i] = result->key_isnull[key][group] != 0;
		if (state->layout->key_first_ops[i] >= 0)
			first = ((const int64 *) result->values[state->layout->key_first_ops[i]])[group];
		if (slot->tts_isnull[i])
			slot->tts_values[i] = (Datum) 0;
		else if (desc->keys[i].as_bytes)
			slot->tts_values[i] = GpuAggStringKeyDatum(result, key, group, desc->keys[i].type);
		else
			slot->tts_values[i] =
				GpuAggDecodeKey(state->builder, state->layout->key_columns[i],
								desc->keys[i].type, result->key_values[key][group],
								first);
		key++;
	}
	for (i = 0; i < desc->ngroupings; i++)
	{
		int			att = desc->nkeys + desc->naggs + i;

		slot->tts_isnull[att] = false;
		slot->tts_values[att] = Int32GetDatum(state->grouping_values[set][i]);
	}
	for (i = 0; i < desc->naggs; i++)
	{
		int			att = desc->nkeys + i;
		const GpuAggOutput *out = &state->layout->outputs[i];

		if (out->distinct_set >= 0)
			slot->tts_values[att] = GpuAggDistinctFinalize(state->distinct_sums, out, i, group,
														   &slot->tts_isnull[att]);
		else
			slot->tts_values[att] = GpuAggFinalize(out, result, group,
												   &slot->tts_isnull[att]);
	}
	MemoryContextSwitchTo(old);
	if (timed)
		state->info.result_ms += GpuAggElapsedMs(start);
	return ExecStoreVirtualTuple(slot);
}

/* ExecScan recheck method: groups need no recheck. */
static bool
agg_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

/* ExecCustomScan: return the next group that passes HAVING, projected. */
static TupleTableSlot *
gpuagg_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, agg_next, agg_recheck);
}

/* EndCustomScan: shut down the child and release the device's memory. */
static void
gpuagg_end(CustomScanState *node)
{
	GpuAggState *state = (GpuAggState *) node;
	int			i;

	agg_destroy(state);
	agg_spill_close(state);
	if (state->direct)
		GpuAggDirectScanEnd(state->direct);
	ExecEndNode(state->child);
	for (i = 0; i < state->desc->njoin_steps; i++)
		ExecEndNode(state->inners[i]);
}

/*
 * ReScanCustomScan: return the same groups again when the child's inputs did
 * not change; otherwise aggregate afresh on the next fetch.
 */
static void
gpuagg_rescan(CustomScanState *node)
{
	GpuAggState *state = (GpuAggState *) node;
	int			i;

	state->current = -1;
	if (node->ss.ps.chgParam != NULL)
	{
		UpdateChangedParamSet(state->child, node->ss.ps.chgParam);
		for (i = 0; i < state->desc->njoin_steps; i++)
			UpdateChangedParamSet(state->inners[i], node->ss.ps.chgParam);
	}
	if (state->results[0] != NULL && !state->spilled && !agg_children_changed(state))
		return;
	agg_destroy(state);
	agg_spill_close(state);
	state->spill_now = state->max_groups > 0 && GpuAggExpectsSpill(state);
	state->info.fallback = NULL;
	state->fail_at_batch = gpuagg_debug_fail_at_batch;
	agg_rescan_children(state);
}
