/*-------------------------------------------------------------------------
 *
 * hashjoin/explain.c
 *	  What EXPLAIN shows for GpuHashJoin.
 *
 *	EXPLAIN				Join Type, Hash Cond, Join Filter (the filter of
 *						an outer join is PostgreSQL's own "Filter" line); with
 *						gpuagg.explain_device_details also Device and Key
 *						(exact or hashed and rechecked)
 *	EXPLAIN ANALYZE		Build Rows (read from the inner side), Probe
 *						Batches, Probe Rows, Candidates, Matched Rows,
 *						Batches (partitions joined, as a Hash node's;
 *						with device details Memory Usage, the largest
 *						build's, and Disk Usage) when the build did not
 *						fit its memory, and Fallback when the CPU
 *						finished the join; with
 *						TIMING, Host Time (reading the inner side and
 *						building, probing); with device details also
 *						Distinct Keys, Bytes Sent, Device Time, Transfer
 *						Time and the context's creation time
 *
 * The conditions reference the children's output (OUTER_VAR, INNER_VAR),
 * so they are deparsed against a HashJoin-shaped stand-in whose outer and
 * inner plans are the node's children, as ruleutils.c expects.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "nodes/makefuncs.h"
#include "nodes/plannodes.h"
#include "utils/ruleutils.h"

#include "compat.h"
#include "devices.h"
#include "guc.h"
#include "hashjoin/hashjoin.h"
#include "hashjoin/state.h"

/* The name EXPLAIN uses for a join type, as in "Hash Left Join". */
static const char *
join_type_name(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_LEFT:
			return "Left";
		case JOIN_RIGHT:
			return "Right";
		case JOIN_FULL:
			return "Full";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "???";
	}
}

/* Deparse a list of conditions over the children as one AND-ed text. */
static char *
deparse_conditions(CustomScanState *node, List *conditions, List *ancestors,
				   ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	HashJoin   *standin = makeNode(HashJoin);
	List	   *context;
	Node	   *expr;

	standin->join.plan.lefttree = linitial(cscan->custom_plans);
	standin->join.plan.righttree = lsecond(cscan->custom_plans);
	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) standin, ancestors);
	expr = list_length(conditions) == 1 ? linitial(conditions) :
		(Node *) make_andclause(conditions);
	return deparse_expression(expr, context,
							  GpuAggExplainRtableSize(es) > 1 || es->verbose, false);
}

/*
 * The partitions and memory of a join, in a Hash node's words: Batches
 * counts the partitions joined; Memory Usage, the largest build held, and
 * Disk Usage depend on the machine, so they show only with device details,
 * and Batches without them only when the join partitioned its sides.
 */
static void
explain_memory(const GpuJoinRunInfo *info, ExplainState *es)
{
	bool		spilled = info->disk_kb > 0;

	if (!gpuagg_explain_device_details && !spilled)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		appendStringInfoSpaces(es->str, es->indent * 2);
		appendStringInfo(es->str, "Batches: " INT64_FORMAT, info->batches);
		if (gpuagg_explain_device_details)
		{
			appendStringInfo(es->str, "  Memory Usage: " INT64_FORMAT "kB", info->memory_kb);
			if (spilled)
				appendStringInfo(es->str, "  Disk Usage: " INT64_FORMAT "kB", info->disk_kb);
		}
		appendStringInfoChar(es->str, '\n');
		return;
	}
	ExplainPropertyInteger("Hash Batches", NULL, info->batches, es);
	if (gpuagg_explain_device_details)
	{
		ExplainPropertyInteger("Peak Memory Usage", "kB", info->memory_kb, es);
		ExplainPropertyInteger("Disk Usage", "kB", info->disk_kb, es);
	}
}

/* ExplainCustomScan for GpuHashJoin. */
void
GpuJoinExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuJoinState *state = (GpuJoinState *) node;
	const GpuJoinDesc *desc = state->desc;
	GpuJoinRunInfo *info = palloc(sizeof(GpuJoinRunInfo));
	const GaJoinStats *stats = &info->stats;
	const char *device_name = GpuAggDeviceName(state->device, state->device_kind);

	/* the totals, with a join still open (a LIMIT above stopped reading) */
	*info = state->info;
	if (state->join != NULL)
		GpuJoinAddStats(&info->stats, state->join);

	ExplainPropertyText("Join Type", join_type_name(desc->jointype), es);
	ExplainPropertyText("Hash Cond", deparse_conditions(node, desc->hash_clauses, ancestors, es), es);
	if (desc->join_quals != NIL)
		ExplainPropertyText("Join Filter",
							deparse_conditions(node, desc->join_quals, ancestors, es), es);
	if (gpuagg_explain_device_details)
	{
		GpuAggExplainDevice(device_name,
							es->analyze && info->executed ? stats->gpu_ordinal : -1, es);
		ExplainPropertyText("Key", desc->recheck ? "hashed, rechecked" : "exact", es);
	}

	if (!es->analyze || !info->executed)
		return;
	ExplainPropertyInteger("Build Rows", NULL, info->inner_rows_read, es);
	ExplainPropertyInteger("Probe Batches", NULL, stats->probe_batches, es);
	ExplainPropertyInteger("Probe Rows", NULL, stats->probe_rows, es);
	ExplainPropertyInteger("Candidates", NULL, stats->candidates, es);
	ExplainPropertyInteger("Matched Rows", NULL, info->matched_rows, es);
	explain_memory(info, es);
	if (info->fallback != NULL)
		ExplainPropertyText("Fallback", psprintf("finished on the CPU after: %s", info->fallback), es);
	if (es->timing && es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Host Time",
							psprintf("build %.3f ms, probe calls %.3f ms",
									 info->build_ms, info->probe_ms), es);
	else if (es->timing)
	{
		ExplainPropertyFloat("Build Time", "ms", info->build_ms, 3, es);
		ExplainPropertyFloat("Probe Calls Time", "ms", info->probe_ms, 3, es);
	}
	if (!gpuagg_explain_device_details)
		return;
	ExplainPropertyInteger("Distinct Keys", NULL, stats->distinct_keys, es);
	ExplainPropertyInteger("Bytes Sent", "bytes", stats->bytes_sent, es);
	if (es->timing)
	{
		ExplainPropertyFloat("Device Time", "ms", stats->device_ms, 3, es);
		ExplainPropertyFloat("Transfer Time", "ms", stats->transfer_ms, 3, es);
		if (info->service)
			ExplainPropertyFloat("Service Queue Time", "ms", stats->queue_ms, 3, es);
		if (info->setup_ms > 0)
			ExplainPropertyFloat("Context Setup", "ms", info->setup_ms, 3, es);
	}
}
