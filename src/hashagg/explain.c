/*-------------------------------------------------------------------------
 *
 * hashagg/explain.c
 *	  What EXPLAIN shows for GpuHashAgg.
 *
 *	EXPLAIN				Group Key, or with grouping sets a Hash Key line per
 *						set of keys and Group Key: () per empty set, as
 *						PostgreSQL's MixedAggregate shows them; Input when
 *						the child is a GpuHashJoin (join input) or when the
 *						device joins the children (aggjoin), with its Join
 *						Cond and Join Filter; Device Arithmetic when the
 *						device computes numeric arguments; with
 *						gpuagg.explain_device_details also Input when the
 *						child Seq Scan's pages are read directly
 *						(batch/scan_direct.c), Device and Strategy (with the
 *						estimated groups); with COSTS, Planned Partitions
 *						when the planner expects more groups than hash_mem
 *						holds (the input then spills to disk)
 *	EXPLAIN ANALYZE		Input Chunks, Input Rows, an aggjoin's Build Rows and
 *						Joined Rows, Groups, Fallback when the CPU
 *						finished the query, Batches (the partitions
 *						aggregated) when the input spilled to disk, Memory
 *						Not Bounded when groups past hash_mem could not
 *						spill; with TIMING, Host Time: reading
 *						an aggjoin's build sides, pulling child rows into
 *						batches (the child's own time included), inside
 *						device calls, finalizing groups; with device
 *						details also Batches with Memory Usage, Device
 *						Memory Usage and Disk Usage, Bytes Sent, Table
 *						Growths, input chunks per
 *						strategy, on the GPU Retries (batch kernels run
 *						again after a growth) and Launch (the last chunk's
 *						launch parameters: gpuagg.tuning) and, with TIMING, Device Time
 *						(on the GPU split by phase), Transfer Time and the
 *						CUDA context's creation time when this query paid it
 *
 * Plain EXPLAIN never touches the device: the strategy shown is computed
 * from the GPU's properties found at server start.  After ANALYZE on the
 * GPU, Strategy names the one most batches ran, with the groups the device
 * estimated from its sample of the first batch and the planned strategy
 * when that differs.  Turning gpuagg.explain_device_details off leaves only
 * lines that are the same on every machine, for regression tests.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "utils/builtins.h"
#include "utils/ruleutils.h"

#include "batch/batch.h"
#include "compat.h"
#include "devices.h"
#include "guc.h"
#include "hashagg/desc.h"
#include "hashagg/hashagg.h"
#include "hashagg/state.h"

/* The keys of key_mask, deparsed like PostgreSQL's own Agg. */
static List *
explain_keys(CustomScan *cscan, const GpuAggDesc *desc, uint32 key_mask,
			 List *context, bool useprefix)
{
	List	   *keys = NIL;
	int			i;

	for (i = 0; i < desc->nkeys; i++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, cscan->custom_scan_tlist, i);

		if (key_mask & ((uint32) 1 << i))
			keys = lappend(keys, deparse_expression((Node *) tle->expr, context,
													useprefix, false));
	}
	return keys;
}

/*
 * The grouping sets, in the shape of PostgreSQL's "Grouping Sets": the sets
 * of keys as Hash Keys (the node hashes each), then the empty sets as Group
 * Keys (one row each, like the plain aggregate of a MixedAggregate).
 */
static void
explain_grouping_sets(CustomScan *cscan, const GpuAggDesc *desc, List *context,
					  bool useprefix, ExplainState *es)
{
	int			empty = 0;
	int			s;

	ExplainOpenGroup("Grouping Sets", "Grouping Sets", false, es);
	ExplainOpenGroup("Grouping Set", NULL, true, es);
	ExplainOpenGroup("Hash Keys", "Hash Keys", false, es);
	for (s = 0; s < desc->nsets; s++)
	{
		List	   *keys = explain_keys(cscan, desc, desc->sets[s].key_mask, context,
										useprefix);

		if (keys == NIL)
			empty++;
		else
			ExplainPropertyListNested("Hash Key", keys, es);
	}
	ExplainCloseGroup("Hash Keys", "Hash Keys", false, es);
	ExplainCloseGroup("Grouping Set", NULL, true, es);
	if (empty > 0)
	{
		ExplainOpenGroup("Grouping Set", NULL, true, es);
		ExplainOpenGroup("Group Keys", "Group Keys", false, es);
		for (s = 0; s < empty; s++)
		{
			if (es->format == EXPLAIN_FORMAT_TEXT)
				ExplainPropertyText("Group Key", "()", es);
			else
				ExplainPropertyListNested("Group Key", NIL, es);
		}
		ExplainCloseGroup("Group Keys", "Group Keys", false, es);
		ExplainCloseGroup("Grouping Set", NULL, true, es);
	}
	ExplainCloseGroup("Grouping Sets", "Grouping Sets", false, es);
}

/* Group Key, or the grouping sets. */
static void
explain_group_keys(CustomScanState *node, const GpuAggDesc *desc,
				   List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	bool		useprefix = GpuAggExplainRtableSize(es) > 1 || es->verbose;

	if (desc->nkeys == 0 && !desc->grouping_sets)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	if (desc->grouping_sets)
		explain_grouping_sets(cscan, desc, context, useprefix, es);
	else
		ExplainPropertyList("Group Key",
							explain_keys(cscan, desc, desc->sets[0].key_mask, context,
										 useprefix),
							es);
}

/* The strategy that ran the most batches, or -1 when none ran. */
static int
most_used_strategy(const GaAggStats *stats)
{
	int			best = -1;
	int			s;

	for (s = 0; s < GA_NUM_STRATEGIES; s++)
		if (stats->batches_by_strategy[s] > 0 &&
			(best < 0 || stats->batches_by_strategy[s] > stats->batches_by_strategy[best]))
			best = s;
	return best;
}

/*
 * The GPU's launch parameters of the last input chunk (gpuagg.tuning): its
 * kernel family, where they came from, the parameters (0: the kernels'
 * rule), and the input chunks that ran a candidate under test.
 */
static void
explain_launch(const GaAggStats *stats, ExplainState *es)
{
	const GaLaunchParams *p = &stats->launch;
	char	   *params;

	if (stats->batches == 0 || stats->launch_family == GA_TUNE_NONE)
		return;
	params = psprintf("threads=%d blocks_per_sm=%d replicas_max=%d cache_less=%d part_shift=%d",
					  p->threads, p->blocks_per_sm, p->replicas_max, p->cache_less,
					  p->part_shift);
	if (es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Launch",
							psprintf("%s kernels, %s: %s; %lld input chunks explored",
									 ga_tune_family_name(stats->launch_family),
									 ga_launch_source_name(stats->launch_source), params,
									 (long long) stats->batches_explored),
							es);
	else
	{
		ExplainPropertyText("Launch Kernels", ga_tune_family_name(stats->launch_family), es);
		ExplainPropertyText("Launch Source", ga_launch_source_name(stats->launch_source), es);
		ExplainPropertyText("Launch Parameters", params, es);
		ExplainPropertyInteger("Input Chunks Explored", NULL, stats->batches_explored, es);
	}
}

/*
 * Device and strategy: the planned one (needs no device), or after ANALYZE
 * on the GPU the one most batches ran, with the device's own estimate.
 */
static void
explain_device(const GpuAggDesc *desc, GaAggRequest *request,
			   const char *device_name, const GaAggStats *stats, bool executed,
			   ExplainState *es)
{
	const GaGpuInfo *gpu = GpuAggExplainDevice(device_name,
											   es->analyze && executed ? stats->gpu_ordinal : -1,
											   es);
	GaStrategy	planned;
	GaStrategy	strategy;
	int64		device_estimate = 0;
	bool		on_gpu = strcmp(device_name, "GPU") == 0;

	planned = ga_agg_planned_strategy(gpu, request);
	strategy = planned;
	if (es->analyze && executed && on_gpu)
	{
		int			used = most_used_strategy(stats);

		if (used >= 0)
			strategy = (GaStrategy) used;
		device_estimate = stats->device_estimated_groups;
	}
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfo(&buf, "%s (estimated groups: %.0f", ga_strategy_name(strategy),
						 desc->est_groups);
		if (device_estimate > 0)
			appendStringInfo(&buf, ", device estimate: " INT64_FORMAT, device_estimate);
		if (strategy != planned)
			appendStringInfo(&buf, ", planned: %s", ga_strategy_name(planned));
		appendStringInfoChar(&buf, ')');
		ExplainPropertyText("Strategy", buf.data, es);
	}
	else
	{
		ExplainPropertyText("Strategy", ga_strategy_name(strategy), es);
		ExplainPropertyFloat("Estimated Groups", NULL, desc->est_groups, 0, es);
		if (device_estimate > 0)
			ExplainPropertyInteger("Device Estimated Groups", NULL, device_estimate, es);
		if (strategy != planned)
			ExplainPropertyText("Planned Strategy", ga_strategy_name(planned), es);
	}
}

/* Device time per phase, e.g. "probe=0.120 group ids=1.500 aggregate=2.000 ms". */
static char *
phase_times(const GaAggStats *stats)
{
	StringInfoData buf;
	int			p;

	initStringInfo(&buf);
	for (p = 0; p < GA_NUM_PHASES; p++)
	{
		if (stats->phase_ms[p] <= 0)
			continue;
		appendStringInfo(&buf, "%s%s=%.3f", buf.len > 0 ? " " : "",
						 ga_phase_name((GaPhase) p), stats->phase_ms[p]);
	}
	if (buf.len == 0)
		return NULL;
	appendStringInfoString(&buf, " ms");
	return buf.data;
}

/* Batches per strategy, e.g. "shared=3 global=1". */
static char *
strategy_batches(const GaAggStats *stats)
{
	StringInfoData buf;
	int			s;

	initStringInfo(&buf);
	for (s = 0; s < GA_NUM_STRATEGIES; s++)
	{
		if (stats->batches_by_strategy[s] == 0)
			continue;
		appendStringInfo(&buf, "%s%s=" INT64_FORMAT, buf.len > 0 ? " " : "",
						 ga_strategy_name((GaStrategy) s), stats->batches_by_strategy[s]);
	}
	return buf.len > 0 ? buf.data : "none";
}

/* The kind of join step (0-based) of an aggjoin, in words. */
static const char *
explain_join_step_type(const GpuAggDesc *desc, int step)
{
	switch (desc->join_steps[step].type)
	{
		case GA_AGGJOIN_LEFT:
			return "left";
		case GA_AGGJOIN_ANTI:
			return "anti";
		case GA_AGGJOIN_RIGHT:
			return "right";
		case GA_AGGJOIN_FULL:
			return "full";
		case GA_AGGJOIN_SEMI:
			return "semi";
		default:
			return desc->join_steps[step].build_unique ? "semi" : "inner";
	}
}

/*
 * The Input line of an aggjoin over a chain of joins, e.g.
 * "joins of its 3 children on the device, bottom up: inner, left (first:
 * probe side, then each join's build side)".
 */
static char *
explain_join_chain(const GpuAggDesc *desc)
{
	StringInfoData buf;
	int			t;

	initStringInfo(&buf);
	appendStringInfo(&buf, "joins of its %d children on the device, bottom up: ",
					 desc->njoin_steps + 1);
	for (t = 0; t < desc->njoin_steps; t++)
		appendStringInfo(&buf, "%s%s", t > 0 ? ", " : "", explain_join_step_type(desc, t));
	appendStringInfoString(&buf, " (first: probe side, then each join's build side)");
	return buf.data;
}

/*
 * How many aggregate arguments the device computes from their operands
 * (hashagg/derived.c), when any: the plan then differs from one that sends the
 * arguments' values, and gpuagg.numeric_on_device tells why.
 */
static void
explain_device_arithmetic(const GpuAggDesc *desc, ExplainState *es)
{
	int			n = 0;
	int			i;

	for (i = 0; i < desc->naggs; i++)
		if (desc->aggs[i].derived != NULL)
			n++;
	if (n > 0)
		ExplainPropertyText("Device Arithmetic",
							psprintf("%d numeric aggregate argument%s computed from %s operands",
									 n, n > 1 ? "s" : "", n > 1 ? "their" : "its"),
							es);
}

/*
 * The direct scan's pages, like Bitmap Heap Scan's "Heap Blocks": how many
 * went to the device as page images and how many through the host (their
 * rows deformed by the scan), and why; only where gpuagg.page_scan is on
 * and the device takes pages.  Under a Gather, those of every participant
 * of the GpuAggPack below, and how many of them the participants wrote
 * into the node's batches themselves (batch/page_share.c).
 */
static void
explain_pages(GpuAggState *state, ExplainState *es)
{
	int64		to_device;
	int64		in_place = 0;
	int64		through_host;
	const char *reason;
	bool		why;

	if (state->direct != NULL)
		GpuAggDirectScanPageCounts(state->direct, &to_device, &through_host, &reason);
	else if (state->desc->child_kind != GPUAGG_CHILD_PACKED ||
			 !GpuAggPackPageCounts(state->child, &to_device, &in_place, &through_host,
								   &reason))
		return;
	if (to_device == 0 && (through_host == 0 || !state->info.pages_possible))
		return;
	why = through_host > 0 && reason != NULL;
	if (es->format != EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyInteger("Heap Pages to Device", NULL, to_device, es);
		ExplainPropertyInteger("Heap Pages Written in Place", NULL, in_place, es);
		ExplainPropertyInteger("Heap Pages through Host", NULL, through_host, es);
		if (why)
			ExplainPropertyText("Heap Pages through Host Because", reason, es);
		return;
	}
	ExplainPropertyText("Heap Pages",
						psprintf("%lld to the device, %lld through the host%s%s%s",
								 (long long) to_device, (long long) through_host,
								 why ? " (" : "", why ? reason : "", why ? ")" : ""),
						es);
	if (in_place > 0)
		ExplainPropertyText("Heap Pages in Place",
							psprintf("%lld written into the batches by the processes that read them",
									 (long long) in_place),
							es);
}

/*
 * The partitions and memory, in HashAggregate's words: Batches counts the
 * aggregations run (one per partition read back from disk, 1 when nothing
 * spilled), Memory Usage the node's peak host memory (with the CPU device
 * in this process, its groups too), Device Memory Usage the device's
 * aggregations at their peak, counted from their groups, Disk Usage the
 * partitions' peak on disk.  The sizes depend on the machine, so without
 * device details only Batches shows, and only when the input spilled.
 * Memory Not Bounded says why an aggregation held more groups than
 * hash_mem allows.
 */
static void
explain_memory(GpuAggState *state, bool device_in_process, ExplainState *es)
{
	const GpuAggRunInfo *info = &state->info;
	int64		memory_kb = info->memory_kb + (device_in_process ? info->device_memory_kb : 0);
	bool		spilled = info->partitions > 1 || info->disk_kb > 0;

	if (!gpuagg_explain_device_details && !spilled)
		;
	else if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		appendStringInfoSpaces(es->str, es->indent * 2);
		appendStringInfo(es->str, "Batches: " INT64_FORMAT, info->partitions);
		if (gpuagg_explain_device_details)
		{
			appendStringInfo(es->str, "  Memory Usage: " INT64_FORMAT "kB", memory_kb);
			appendStringInfo(es->str, "  Device Memory Usage: " INT64_FORMAT "kB",
							 info->device_memory_kb);
			if (spilled)
				appendStringInfo(es->str, "  Disk Usage: " INT64_FORMAT "kB", info->disk_kb);
		}
		appendStringInfoChar(es->str, '\n');
	}
	else
	{
		ExplainPropertyInteger("HashAgg Batches", NULL, info->partitions, es);
		if (gpuagg_explain_device_details)
		{
			ExplainPropertyInteger("Peak Memory Usage", "kB", memory_kb, es);
			ExplainPropertyInteger("Device Memory Usage", "kB", info->device_memory_kb, es);
			ExplainPropertyInteger("Disk Usage", "kB", info->disk_kb, es);
		}
	}
	if (info->unbounded != NULL && state->limit_groups > 0 &&
		info->stats.groups > state->limit_groups)
		ExplainPropertyText("Memory Not Bounded", info->unbounded, es);
}

/* ExplainCustomScan for GpuHashAgg. */
void
GpuAggExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuAggState *state = (GpuAggState *) node;
	const GpuAggDesc *desc = state->desc;
	GaAggRequest *request = &state->requests[0];
	const GpuAggRunInfo *info = &state->info;
	const GaAggStats *stats = &info->stats;
	const char *device_name = GpuAggDeviceName(state->device, state->device_kind);

	explain_group_keys(node, desc, ancestors, es);
	if (desc->child_kind == GPUAGG_CHILD_JOIN_INPUT)
		ExplainPropertyText("Input", "joined rows of the GpuHashJoin below, unprojected", es);
	if (desc->njoin_steps == 1)
		ExplainPropertyText("Input",
							psprintf("%s join of its two children on the device (first: probe side, second: build side)",
									 explain_join_step_type(desc, 0)),
							es);
	else if (desc->njoin_steps > 1)
		ExplainPropertyText("Input", explain_join_chain(desc), es);
	if (desc->njoin_steps > 0 && desc->join_cond[0] != '\0')
		ExplainPropertyText("Join Cond", desc->join_cond, es);
	if (desc->njoin_steps > 0 && desc->join_filter != NULL && desc->join_filter[0] != '\0')
		ExplainPropertyText("Join Filter", desc->join_filter, es);
	explain_device_arithmetic(desc, es);
	if (gpuagg_explain_device_details)
	{
		if (info->direct_scan)
			ExplainPropertyText("Input", GPUAGG_DIRECT_SCAN_TEXT, es);
		explain_device(desc, request, device_name, stats, info->executed, es);
	}

	/* HashAggregate's planned partitions, when the planner expects a spill */
	if (es->costs && GpuAggPlannedPartitions(state) > 0)
		ExplainPropertyInteger("Planned Partitions", NULL, GpuAggPlannedPartitions(state), es);
	if (!es->analyze || !info->executed)
		return;
	/* not "Batches", which in HashAggregate counts the partitions spilled to disk */
	ExplainPropertyInteger("Input Chunks", NULL, stats->batches, es);
	ExplainPropertyInteger("Input Rows", NULL, stats->input_rows, es);
	explain_pages(state, es);
	if (desc->njoin_steps > 0)
	{
		ExplainPropertyInteger("Build Rows", NULL, stats->join_build_rows, es);
		ExplainPropertyInteger("Joined Rows", NULL, stats->joined_rows, es);
	}
	ExplainPropertyInteger("Groups", NULL, stats->groups, es);
	if (info->fallback != NULL)
		ExplainPropertyText("Fallback", psprintf("finished on the CPU after: %s", info->fallback), es);
	explain_memory(state, !info->service && strcmp(device_name, "CPU") == 0, es);
	if (es->timing && es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Host Time",
							psprintf("%sinput %.3f ms, device calls %.3f ms, results %.3f ms",
									 desc->njoin_steps > 0 ?
									 psprintf("build %.3f ms, ", info->build_ms) : "",
									 info->input_ms, info->wait_ms, info->result_ms), es);
	else if (es->timing)
	{
		if (desc->njoin_steps > 0)
			ExplainPropertyFloat("Build Time", "ms", info->build_ms, 3, es);
		ExplainPropertyFloat("Input Time", "ms", info->input_ms, 3, es);
		ExplainPropertyFloat("Device Calls Time", "ms", info->wait_ms, 3, es);
		ExplainPropertyFloat("Results Time", "ms", info->result_ms, 3, es);
	}
	if (!gpuagg_explain_device_details)
		return;
	ExplainPropertyInteger("Bytes Sent", "bytes", stats->bytes_sent, es);
	ExplainPropertyInteger("Table Growths", NULL, stats->table_growths, es);
	if (strcmp(device_name, "GPU") == 0)
	{
		ExplainPropertyInteger("Retries", NULL, stats->retries, es);
		explain_launch(stats, es);
	}
	ExplainPropertyText("Input Chunks by Strategy", strategy_batches(stats), es);
	if (es->timing)
	{
		char	   *phases = phase_times(stats);

		ExplainPropertyFloat("Device Time", "ms", stats->device_ms, 3, es);
		if (phases != NULL && es->format == EXPLAIN_FORMAT_TEXT)
			ExplainPropertyText("Device Phases", phases, es);
		else if (phases != NULL)
		{
			int			p;

			for (p = 0; p < GA_NUM_PHASES; p++)
				if (stats->phase_ms[p] > 0)
					ExplainPropertyFloat(psprintf("Device Time (%s)", ga_phase_name((GaPhase) p)),
										 "ms", stats->phase_ms[p], 3, es);
		}
		ExplainPropertyFloat("Transfer Time", "ms", stats->transfer_ms, 3, es);
		if (info->service)
			ExplainPropertyFloat("Service Queue Time", "ms", stats->queue_ms, 3, es);
		if (info->setup_ms > 0)
			ExplainPropertyFloat("Context Setup", "ms", info->setup_ms, 3, es);
	}
}
