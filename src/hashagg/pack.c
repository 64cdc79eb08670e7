/*-------------------------------------------------------------------------
 *
 * hashagg/pack.c
 *	  GpuAggPack: the node that parallel workers run under a Gather to feed
 *	  one GpuHashAgg.  Each participant scans its share of the input, packs
 *	  the rows into the GpuHashAgg's batch layout and emits every batch as a
 *	  single bytea tuple (a message, see batch/message.c):
 *
 *		Custom Scan (GpuHashAgg)			leader: one CUDA context
 *		  ->  Gather
 *				->  Custom Scan (GpuAggPack)	every participant
 *					  ->  Parallel Seq Scan ...
 *
 * Reusing Gather gives the worker launch, the shared-memory tuple queues,
 * parameters and rescans for free; the leader receives a few large tuples
 * instead of one per row, and only copies columns.  (Per-worker GPU
 * aggregation would need a CUDA context per worker and query, whose
 * creation takes longer than many queries, and a second combining step.)
 *
 * With gpuagg.page_scan, the participants send heap pages instead of rows
 * when the leader's GpuHashAgg says so for the run (GpuAggPackUsePages):
 * each direct scan copies its pages into its batch (batch/pages.c) and
 * the message carries them (batch/message.c); the device deforms them.
 * The decision, and the page counts EXPLAIN ANALYZE adds up, travel in
 * the node's shared memory (PackShared), written for every run, so that a
 * run restarted with pages off (spilling, a device failure) rescans with
 * the workers on the row path.  Where the leader's batches lie in the GPU
 * service's arena, every participant writes its pages into the leader's
 * open batch itself (batch/page_share.c, whose area follows PackShared)
 * and sends only a notice when that batch is full.
 *
 * Under an aggjoin GpuHashAgg, the probe side's GpuAggPack also tests
 * every row's join keys against the leader's Bloom filters of the build
 * keys (aggjoin/probe_filter.c), which it puts in the parallel query's shared
 * memory ahead of the exchange, and packs only the rows that pass.
 *
 * The node's only output column is the expression gpuagg_batch(), a marker
 * function of the extension (it is never called: setrefs matches it to the
 * scan tuple), so the parallel plan exists only where CREATE EXTENSION
 * gpuagg was run.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "catalog/dependency.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "port/atomics.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "aggjoin/probe_filter.h"
#include "batch/batch.h"
#include "compat.h"
#include "guc.h"
#include "hashagg/desc.h"
#include "hashagg/hashagg.h"
#include "hashagg/layout.h"
#include "hashagg/private.h"

PG_FUNCTION_INFO_V1(gpuagg_batch);

/*
 * The start of a GpuAggPack's shared memory, before the probe-key filter's
 * area and the exchange: the run's page decision, and the pages the
 * workers read.
 */
typedef struct PackShared
{
	bool		pages;			/* the run's participants send pages */
	bool		in_place;		/* ... into the leader's batch (page_share.c) */
	int64		page_capacity;	/* pages a message carries at most */
	pg_atomic_uint64 pages_device;	/* the workers' pages sent as images */
	pg_atomic_uint64 pages_host;	/* ... and those deformed by them */
} PackShared;

/* PackShared, then the page share */
#define PACK_SHARED_BYTES (MAXALIGN(sizeof(PackShared)) + GpuAggPageShareSize())

/* Executor state of one GpuAggPack. */
typedef struct GpuAggPackState
{
	CustomScanState css;
	GpuAggDesc *desc;
	GpuAggLayout *layout;
	PlanState  *child;
	GpuAggDirectScan *direct;	/* reads the child Seq Scan's pages, or NULL */
	GpuAggExchange *exchange;	/* slots for workers' messages (parallel) */
	int			exchange_slots; /* as estimated for the DSM segment */
	Size		exchange_slot_bytes;
	GpuAggExchangeStats exchange_stats; /* copied before the DSM goes away */
	bool		have_exchange_stats;
	MemoryContext run_cxt;		/* builder, batch, message of one run */
	GpuAggBatchBuilder *builder;
	GaBatch    *batch;
	TupleTableSlot *pending_row;	/* the child's row whose text keys did
									 * not fit the last batch, or NULL */
	int32	   *dict_sent;		/* per column: entries sent, -1 if not text */
	int			first_column;	/* the layout column of the batch's first */
	StringInfoData message;
	uint64		sender;
	bool		done;

	/* the probe side's key filter (aggjoin/probe_filter.c) */
	const GpuAggProbeFilter *probe_filter;	/* leader: the one to share */
	Size		filter_room;	/* its shared area, as estimated */
	void	   *filter_area;	/* the shared area; NULL: none */
	GpuAggProbeKeys *probe_keys;	/* this participant's view; NULL: none */
	bool		have_filter_stats;	/* copied before the DSM goes away */
	int			filter_nsteps;
	int64		filter_nkeys;
	uint64		filter_rows_tested;
	uint64		filter_rows_removed;

	/* heap pages instead of rows (leader: its decision for the run) */
	PackShared *shared;			/* NULL: no parallel setup */
	bool		pages;			/* this run's messages carry pages */
	int64		page_capacity;	/* pages a message carries at most */
	const char *page_off_reason;	/* why not, when the leader knows */
	bool		pages_counted;	/* worker: its counts are in shared */
	int64		worker_pages_device;	/* leader: the workers', all runs */
	int64		worker_pages_host;

	/* pages written into the leader's batch (batch/page_share.c) */
	GpuAggPageShare *share;		/* in the shared memory; NULL: none */
	bool		in_place;		/* this run's participants write there */
	bool		share_ready;	/* leader: the share is set up for this run */
	bool		full_noticed;	/* worker: wait for the batch after full_gen */
	uint32		full_gen;
	int64		pages_in_place; /* leader: every participant's, all runs */
	int64		share_batches;
	int64		share_waits;
} GpuAggPackState;

static Plan *pack_plan_path(PlannerInfo *root, RelOptInfo *rel,
							CustomPath *best_path, List *tlist,
							List *clauses, List *custom_plans);
static Node *pack_create_state(CustomScan *cscan);
static void pack_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *pack_exec(CustomScanState *node);
static void pack_end(CustomScanState *node);
static void pack_rescan(CustomScanState *node);
static void pack_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size pack_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void pack_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								void *coordinate);
static void pack_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								  void *coordinate);
static void pack_initialize_worker(CustomScanState *node, shm_toc *toc,
								   void *coordinate);
static void pack_shutdown(CustomScanState *node);

static const CustomPathMethods pack_path_methods = {
	.CustomName = GPUAGG_PACK_NAME,
	.PlanCustomPath = pack_plan_path,
};

static const CustomScanMethods pack_scan_methods = {
	.CustomName = GPUAGG_PACK_NAME,
	.CreateCustomScanState = pack_create_state,
};

static const CustomExecMethods pack_exec_methods = {
	.CustomName = GPUAGG_PACK_NAME,
	.BeginCustomScan = pack_begin,
	.ExecCustomScan = pack_exec,
	.EndCustomScan = pack_end,
	.ReScanCustomScan = pack_rescan,
	.ExplainCustomScan = pack_explain,
	.EstimateDSMCustomScan = pack_estimate_dsm,
	.InitializeDSMCustomScan = pack_initialize_dsm,
	.ReInitializeDSMCustomScan = pack_reinitialize_dsm,
	.InitializeWorkerCustomScan = pack_initialize_worker,
	.ShutdownCustomScan = pack_shutdown,
};

/* gpuagg_batch(): the marker of GpuAggPack's output; never meant to run. */
Datum
gpuagg_batch(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("gpuagg_batch() is an internal marker of GpuAggPack and cannot be called")));
	PG_RETURN_NULL();
}

/*
 * Rows per message packed by this process.  The leader packs only while no
 * worker's message is ready (Gather runs the local copy of the plan then),
 * so its messages are small: a long local batch would leave every worker
 * blocked on a full tuple queue meanwhile.
 */
static int64
pack_message_capacity(void)
{
	return IsParallelWorker() ? GpuAggMessageCapacity() : Min(GpuAggMessageCapacity(), 1024);
}

/*
 * The marker expression gpuagg_batch(), or NULL when the extension is not
 * installed in this database (then no parallel plan is offered).
 */
Expr *
GpuAggBatchMarker(void)
{
	Oid			extension = get_extension_oid("gpuagg", true);
	Oid			func = InvalidOid;
	CatCList   *candidates;
	int			i;

	if (!OidIsValid(extension))
		return NULL;
	/* the extension's own gpuagg_batch(), whatever its schema */
	candidates = SearchSysCacheList1(PROCNAMEARGSNSP, CStringGetDatum("gpuagg_batch"));
	for (i = 0; i < candidates->n_members; i++)
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(&candidates->members[i]->tuple);

		if (proc->pronargs == 0 &&
			getExtensionOfObject(ProcedureRelationId, proc->oid) == extension)
		{
			func = proc->oid;
			break;
		}
	}
	ReleaseSysCacheList(candidates);
	if (!OidIsValid(func))
		return NULL;
	return (Expr *) makeFuncExpr(func, BYTEAOID, NIL, InvalidOid, InvalidOid,
								 COERCE_EXPLICIT_CALL);
}

/*
 * Starting a parallel worker takes about as long as packing this many rows
 * (docs/benchmarks.md, "Measurements behind design choices").
 */
#define PACK_ROWS_PER_WORKER_START 50000.0

/*
 * The workers GpuAggPack nodes packing input_rows rows ask for, at most
 * `workers`.  The node waits for every worker it starts, and workers start
 * one after another: n workers take about input_rows / (n + 1) rows' packing
 * plus n starts, least at n = sqrt(input_rows / rows per start) - 1.  The
 * starts matter only when many workers start: up to two of the planner's
 * workers always stay (the serial plan competes by cost).
 */
int
GpuAggPackWorkers(double input_rows, int workers)
{
	double		best = rint(sqrt(Max(input_rows, 0.0) / PACK_ROWS_PER_WORKER_START) - 1.0);

	return Max(Min(workers, 2), (int) Min((double) workers, best));
}

/*
 * A GpuAggPack path over a partial path of rel whose output is the
 * GpuHashAgg's child expressions; target holds the marker expression.
 * Cost: the child, plus copying every value into a batch, per worker.
 */
Path *
GpuAggPackPath(RelOptInfo *rel, Path *child, PathTarget *target,
			   List *path_private, int ncolumns)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = target;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = true;	/* for its DSM: batch/exchange.c */
	cpath->path.parallel_safe = true;
	cpath->path.parallel_workers = child->parallel_workers;
	cpath->path.rows = Max(1.0, ceil(child->rows / (double) GpuAggMessageCapacity()));
	cpath->path.startup_cost = child->startup_cost;
	cpath->path.total_cost = child->total_cost +
		child->rows * ncolumns * gpuagg_batch_value_cost;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = list_make1(child);
	cpath->custom_private = path_private;
	cpath->methods = &pack_path_methods;
	return &cpath->path;
}

/* PlanCustomPath of GpuAggPack: one output column, the marker. */
static Plan *
pack_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	GpuAggDesc *desc = GpuAggDescFromPath(GpuAggPathFromList(best_path->custom_private),
										  NULL);
	Expr	   *marker = linitial(best_path->path.pathtarget->exprs);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = NIL;
	cscan->custom_private = GpuAggDescToList(desc);
	cscan->custom_scan_tlist = list_make1(makeTargetEntry(marker, 1, NULL, false));
	cscan->methods = &pack_scan_methods;
	return &cscan->scan.plan;
}

/* CreateCustomScanState of GpuAggPack. */
static Node *
pack_create_state(CustomScan *cscan)
{
	GpuAggPackState *state = palloc0(sizeof(GpuAggPackState));

	NodeSetTag(state, T_CustomScanState);
	state->css.flags = cscan->flags;
	state->css.methods = &pack_exec_methods;
	state->desc = GpuAggDescFromList(cscan->custom_private);
	return (Node *) state;
}

/*
 * Give this participant's direct scan and batch the run's page decision:
 * a page area and the page program (returned) where pages go to the
 * device, none (NULL) where rows do.
 */
static const GaPageInput *
pack_set_pages(GpuAggPackState *state)
{
	const GaPageInput *program;

	if (state->direct == NULL)
		return NULL;
	program = GpuAggDirectScanUsePages(state->direct, state->batch->ncolumns,
									   state->layout->sources + state->first_column,
									   state->batch->capacity, state->page_capacity,
									   state->pages ? NULL : state->page_off_reason);
	state->pages = program != NULL;
	GpuAggPageAreaSet(state->batch, program != NULL ? program->page_capacity : 0,
					  state->run_cxt);
	return program;
}

/* Start packing afresh: new builder, batch, dictionary and sender id. */
static void
pack_reset(GpuAggPackState *state)
{
	static uint32 runs = 0;
	GpuAggLayout *layout = state->layout;
	MemoryContext old;
	int			ncolumns;
	int			c;

	MemoryContextReset(state->run_cxt);
	old = MemoryContextSwitchTo(state->run_cxt);
	/* an aggjoin's workers pack the columns of one side */
	state->first_column = layout->side_first[state->desc->pack_side];
	ncolumns = layout->side_first[state->desc->pack_side + 1] - state->first_column;
	state->builder = GpuAggBatchBuilderCreate(ncolumns, layout->sources + state->first_column,
											  state->run_cxt);
	GpuAggBatchBuilderSetSender(state->builder);
	state->batch = GpuAggLocalBatchCreate(ncolumns, layout->column_types + state->first_column,
										  pack_message_capacity(),
										  GpuAggLayoutStringBytes(layout, pack_message_capacity()),
										  state->run_cxt);
	state->dict_sent = palloc(sizeof(int32) * Max(ncolumns, 1));
	for (c = 0; c < ncolumns; c++)
		state->dict_sent[c] =
			GPUAGG_ENC_IS_DICT(layout->sources[state->first_column + c].encoding) ? 0 : -1;
	initStringInfo(&state->message);
	MemoryContextSwitchTo(old);
	state->sender = ((uint64) MyProcPid << 32) | ++runs;
	state->done = false;
	state->full_noticed = false;
	state->pending_row = NULL;
	state->probe_keys = NULL;	/* attached again (rescan: reinitialized) */
	if (state->direct)
		GpuAggDirectScanSetProbeKeys(state->direct, NULL);
	pack_set_pages(state);
}

/*
 * Test the rows this participant packs against the filters in the shared
 * area (none when it holds none).
 */
static void
pack_attach_probe_keys(GpuAggPackState *state)
{
	state->probe_keys = GpuAggProbeKeysAttach(state->filter_area, state->layout,
											  state->run_cxt);
	if (state->direct)
		GpuAggDirectScanSetProbeKeys(state->direct, state->probe_keys);
}

/*
 * Whether this node packs the probe side of an aggjoin: its
 * shared memory then starts with the probe-key filter's area.
 */
static bool
pack_has_filter_area(const GpuAggPackState *state)
{
	return state->desc->njoin_steps > 0 && state->desc->pack_side == 0;
}

/* BeginCustomScan of GpuAggPack. */
static void
pack_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuAggPackState *state = (GpuAggPackState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	state->child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(state->child);
	state->direct = GpuAggDirectScanCreate(state->child, estate->es_query_cxt);
	state->layout = GpuAggLayoutBuild(state->desc);
	state->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "gpuagg pack",
										   ALLOCSET_DEFAULT_SIZES);
	state->page_off_reason = "gpuagg.page_scan is off";	/* until told */
	pack_reset(state);
}

/*
 * How long a worker that found the leader's batch full waits for the next
 * one before it packs its next pages into a message instead: a GPU's
 * second batch opens within a service round trip, while the CPU device's
 * one batch opens only once the device is done with it.
 */
#define PACK_SHARE_WAIT_MS 2

/*
 * The next notice of a participant that writes its pages into the
 * leader's batch (batch/page_share.c): that the batch is full, or (the
 * leader's own GpuAggPack, a message's worth of rows at a time, so that
 * Gather goes back to the workers' queues) that it went on; an empty slot
 * at the end of its scan.  A worker that found a batch full waits for the
 * next one first, and returns NULL when none opened within
 * PACK_SHARE_WAIT_MS: its next pages go in a message.  The leader never
 * waits, since only it opens batches.
 */
static TupleTableSlot *
pack_next_in_place(GpuAggPackState *state, TupleTableSlot *slot)
{
	bool		worker = IsParallelWorker();
	GpuAggShareFill fill;
	uint32		gen;
	bytea	   *notice;

	if (state->full_noticed && worker)
	{
		bool		timed_out;

		if (!GpuAggPageShareWait(state->share, state->full_gen, PACK_SHARE_WAIT_MS,
								 &timed_out))
		{
			state->done = true; /* the leader ended the run */
			return slot;
		}
		state->full_noticed = false;
		if (timed_out)
			return NULL;
	}
	state->full_noticed = false;
	fill = GpuAggDirectScanFillShared(state->direct, state->share,
									  worker ? -1 : pack_message_capacity(), &gen);
	if (fill == GPUAGG_SHARE_END)
	{
		state->done = true;
		return slot;
	}
	if (fill == GPUAGG_SHARE_FULL)
	{
		state->full_noticed = true;
		state->full_gen = gen;
	}
	notice = GpuAggPageShareNotice(gen, fill == GPUAGG_SHARE_FULL, worker, &state->message);
	slot->tts_values[0] = PointerGetDatum(notice);
	slot->tts_isnull[0] = false;
	return ExecStoreVirtualTuple(slot);
}

/* ExecScan access method: the next batch of this participant, as a message. */
static TupleTableSlot *
pack_next(ScanState *ss)
{
	GpuAggPackState *state = (GpuAggPackState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	GaBatch    *batch = state->batch;
	bytea	   *message;

	ExecClearTuple(slot);
	if (state->done)
		return slot;
	if (state->in_place && state->share != NULL)
	{
		TupleTableSlot *notice = pack_next_in_place(state, slot);

		if (notice != NULL)
			return notice;
	}
	GpuAggLocalBatchReset(batch);
	GpuAggBatchBuilderStart(state->builder, batch);

	/* (a probe-key filter drops rows before they are appended) */
	if (state->direct)
		state->done = GpuAggDirectScanFill(state->direct, state->builder, batch);
	while (state->direct == NULL && batch->nrows < batch->capacity)
	{
		TupleTableSlot *row = state->pending_row != NULL ? state->pending_row :
			ExecProcNode(state->child);

		state->pending_row = NULL;
		if (TupIsNull(row))
		{
			state->done = true;
			break;
		}
		if (state->probe_keys != NULL)
		{
			slot_getallattrs(row);
			if (!GpuAggProbeKeysRow(state->probe_keys, row->tts_values, row->tts_isnull))
				continue;
		}
		if (!GpuAggBatchAppend(state->builder, batch, row))
		{
			state->pending_row = row;	/* the next message's first row */
			break;
		}
	}
	if (state->done)
		GpuAggProbeKeysFlush(state->probe_keys);
	if (batch->nrows == 0)
		return slot;
	message = GpuAggMessageBuild(state->builder, batch, state->sender, state->first_column,
								 state->dict_sent, &state->message);
	/* a worker's message goes through a shared slot when it fits one */
	if (state->exchange != NULL && IsParallelWorker())
	{
		bytea	   *ref = GpuAggExchangePut(state->exchange, message);

		if (ref != NULL)
			message = ref;
	}
	slot->tts_values[0] = PointerGetDatum(message);
	slot->tts_isnull[0] = false;
	return ExecStoreVirtualTuple(slot);
}

/* ExecScan recheck method: messages need none. */
static bool
pack_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

/* ExecCustomScan of GpuAggPack. */
static TupleTableSlot *
pack_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, pack_next, pack_recheck);
}

/* EndCustomScan of GpuAggPack. */
static void
pack_end(CustomScanState *node)
{
	GpuAggPackState *state = (GpuAggPackState *) node;

	if (state->direct)
		GpuAggDirectScanEnd(state->direct);
	ExecEndNode(state->child);
}

/* ReScanCustomScan of GpuAggPack: start over with the (new) input. */
static void
pack_rescan(CustomScanState *node)
{
	GpuAggPackState *state = (GpuAggPackState *) node;

	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(state->child, node->ss.ps.chgParam);
	if (state->child->chgParam == NULL)
		ExecReScan(state->child);
	if (state->direct)
		GpuAggDirectScanReset(state->direct);
	pack_reset(state);
}

/*
 * ExplainCustomScan of GpuAggPack, with device details: how it reads its
 * input and, under ANALYZE, how the workers' batches reached the leader.
 */
static void
pack_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuAggPackState *state = (GpuAggPackState *) node;
	const GpuAggExchangeStats *x = &state->exchange_stats;

	if (es->analyze && state->have_filter_stats)
	{
		if (es->format == EXPLAIN_FORMAT_TEXT)
			ExplainPropertyText("Probe Key Filter",
								psprintf("Bloom filters of %d join step%s " INT64_FORMAT " build keys, "
										 UINT64_FORMAT " of " UINT64_FORMAT " rows removed",
										 state->filter_nsteps, state->filter_nsteps > 1 ? "s'" : "'s",
										 state->filter_nkeys, state->filter_rows_removed,
										 state->filter_rows_tested), es);
		else
		{
			ExplainPropertyInteger("Probe Filter Steps", NULL, state->filter_nsteps, es);
			ExplainPropertyInteger("Probe Filter Keys", NULL, state->filter_nkeys, es);
			ExplainPropertyInteger("Probe Filter Rows Tested", NULL,
								   (int64) state->filter_rows_tested, es);
			ExplainPropertyInteger("Probe Filter Rows Removed", NULL,
								   (int64) state->filter_rows_removed, es);
		}
	}
	if (!gpuagg_explain_device_details)
		return;
	if (state->direct != NULL)
		ExplainPropertyText("Input", GPUAGG_DIRECT_SCAN_TEXT, es);
	if (!es->analyze || !state->have_exchange_stats)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Batch Exchange",
							psprintf(UINT64_FORMAT " in shared memory (%d slots of %zu kB), "
									 UINT64_FORMAT " through the Gather queue, "
									 UINT64_FORMAT " waits for a free slot",
									 x->through_slots, x->nslots, x->slot_bytes / 1024,
									 x->through_queue, x->waits), es);
	else
	{
		ExplainPropertyInteger("Batches in Shared Memory", NULL, (int64) x->through_slots, es);
		ExplainPropertyInteger("Batches through Queue", NULL, (int64) x->through_queue, es);
		ExplainPropertyInteger("Slot Waits", NULL, (int64) x->waits, es);
		ExplainPropertyInteger("Exchange Slots", NULL, x->nslots, es);
	}
	/* the leader's batches that the participants wrote pages into */
	if (state->share_batches > 0)
	{
		if (es->format == EXPLAIN_FORMAT_TEXT)
			ExplainPropertyText("Shared Page Batches",
								psprintf(INT64_FORMAT " opened to the participants, "
										 INT64_FORMAT " waits of a worker for one",
										 state->share_batches, state->share_waits), es);
		else
		{
			ExplainPropertyInteger("Shared Page Batches", NULL, state->share_batches, es);
			ExplainPropertyInteger("Shared Page Batch Waits", NULL, state->share_waits, es);
		}
	}
}

/*
 * Account for the pages read through the shared memory: a worker adds its
 * own there once, when its scan is over; the leader moves what the
 * workers added to its totals (they finished: every worker's shutdown
 * runs before the Gather reads the end of its input).
 */
static void
pack_count_pages(GpuAggPackState *state)
{
	int64		to_device;
	int64		through_host;
	const char *reason;

	if (state->shared == NULL)
		return;
	if (!IsParallelWorker())
	{
		int64		in_place;

		state->worker_pages_device +=
			(int64) pg_atomic_exchange_u64(&state->shared->pages_device, 0);
		state->worker_pages_host +=
			(int64) pg_atomic_exchange_u64(&state->shared->pages_host, 0);
		GpuAggPageShareCounts(state->share, &in_place, &state->share_batches,
							  &state->share_waits);
		state->pages_in_place += in_place;
		return;
	}
	if (state->direct == NULL || state->pages_counted)
		return;
	GpuAggDirectScanPageCounts(state->direct, &to_device, &through_host, &reason);
	pg_atomic_fetch_add_u64(&state->shared->pages_device, (uint64) to_device);
	pg_atomic_fetch_add_u64(&state->shared->pages_host, (uint64) through_host);
	state->pages_counted = true;
}

/*
 * ShutdownCustomScan: a worker's page counts into the shared memory; the
 * leader keeps the workers' counts and the exchange's for EXPLAIN
 * ANALYZE, since the parallel query's shared memory goes away after this.
 */
static void
pack_shutdown(CustomScanState *node)
{
	GpuAggPackState *state = (GpuAggPackState *) node;

	pack_count_pages(state);
	if (!IsParallelWorker())
	{
		/* the parallel query's memory goes away */
		state->shared = NULL;
		state->share = NULL;
	}
	if (state->exchange != NULL && !IsParallelWorker())
	{
		GpuAggExchangeCounts(state->exchange, &state->exchange_stats);
		state->have_exchange_stats = true;
	}
	GpuAggProbeKeysFlush(state->probe_keys);
	if (state->filter_area != NULL && !IsParallelWorker())
		state->have_filter_stats =
			GpuAggProbeFilterCounts(state->filter_area, &state->filter_nsteps,
									&state->filter_nkeys, &state->filter_rows_tested,
									&state->filter_rows_removed);
	state->filter_area = NULL;	/* the parallel query's memory goes away */
	state->probe_keys = NULL;
	if (state->direct)
		GpuAggDirectScanSetProbeKeys(state->direct, NULL);
}

/*
 * Room for dictionary entries in an exchange slot, on top of the columns:
 * a message whose new text keys need more goes through the tuple queue.
 */
#define EXCHANGE_DICT_BYTES (256 * 1024)
/*
 * EstimateDSMCustomScan: PackShared, then two exchange slots per worker,
 * each a full message (of rows, or of pages where the run sends them),
 * fewer (down to none: every message through the tuple queue) where
 * shared memory is scarce (GpuAggExchangeMaxBytes).
 */
static Size
pack_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	GpuAggPackState *state = (GpuAggPackState *) node;
	GpuAggLayout *layout = state->layout;
	Size		budget = GpuAggExchangeMaxBytes();

	state->exchange_slot_bytes =
		GpuAggMessageBytes(layout->ncolumns, layout->column_types,
						   GpuAggMessageCapacity()) + EXCHANGE_DICT_BYTES;
	/* a message of pages, where the run's scans send them */
	if (state->pages)
		state->exchange_slot_bytes =
			Max(state->exchange_slot_bytes,
				GpuAggMessagePageBytes(layout->ncolumns, state->page_capacity));
	state->exchange_slots = 2 * pcxt->nworkers + 2;
	/* the probe side's filter first: the leader built it before this runs */
	state->filter_room = pack_has_filter_area(state) ?
		GpuAggProbeFilterSharedBytes(state->probe_filter) : 0;
	if (state->filter_room > budget / 2)
		state->filter_room = GpuAggProbeFilterSharedBytes(NULL);	/* no room: none */
	while (state->exchange_slots > 0 &&
		   GpuAggExchangeSize(state->exchange_slots, state->exchange_slot_bytes) +
		   state->filter_room + PACK_SHARED_BYTES > budget)
		state->exchange_slots--;
	return PACK_SHARED_BYTES + state->filter_room +
		GpuAggExchangeSize(state->exchange_slots, state->exchange_slot_bytes);
}

/* Leader: tell the run's workers whether they send pages. */
static void
pack_share_pages(GpuAggPackState *state)
{
	state->shared->pages = state->pages;
	state->shared->in_place = state->in_place;
	state->shared->page_capacity = state->page_capacity;
	state->share_ready = true;
}

/*
 * Leader: copy the probe-key filter built for this scan into its area of
 * the parallel query's shared memory (when the node has one) and test this
 * participant's rows against it.
 */
static void
pack_share_probe_filter(GpuAggPackState *state, void *coordinate)
{
	state->filter_area = NULL;
	if (state->filter_room > 0)
	{
		GpuAggProbeFilterShare(state->probe_filter, coordinate, state->filter_room);
		state->filter_area = coordinate;
	}
	pack_attach_probe_keys(state);
}

/*
 * InitializeDSMCustomScan (leader): lay out the run's page decision, the
 * probe-key filter's area (the probe side of an aggjoin), then the
 * exchange.
 */
static void
pack_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuAggPackState *state = (GpuAggPackState *) node;
	char	   *area = (char *) coordinate + PACK_SHARED_BYTES;

	state->shared = (PackShared *) coordinate;
	pg_atomic_init_u64(&state->shared->pages_device, 0);
	pg_atomic_init_u64(&state->shared->pages_host, 0);
	state->share = GpuAggPageShareInit((char *) coordinate + MAXALIGN(sizeof(PackShared)));
	pack_share_pages(state);
	pack_share_probe_filter(state, area);
	state->exchange = GpuAggExchangeCreate(area + state->filter_room,
										   state->exchange_slots,
										   state->exchange_slot_bytes,
										   node->ss.ps.state->es_query_cxt);
}

/*
 * ReInitializeDSMCustomScan (leader, rescan): this run's page decision,
 * the filter as built for this scan (the build sides were read again),
 * every slot free again.
 */
static void
pack_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuAggPackState *state = (GpuAggPackState *) node;

	state->shared = (PackShared *) coordinate;
	state->share = (GpuAggPageShare *) ((char *) coordinate + MAXALIGN(sizeof(PackShared)));
	pack_count_pages(state);	/* the last run's workers' */
	GpuAggPageShareReset(state->share);
	pack_share_pages(state);
	pack_share_probe_filter(state, (char *) coordinate + PACK_SHARED_BYTES);
	if (state->exchange != NULL)
		GpuAggExchangeReset(state->exchange);
}

/*
 * InitializeWorkerCustomScan: take the run's page decision, attach to the
 * leader's filter and exchange.
 */
static void
pack_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuAggPackState *state = (GpuAggPackState *) node;
	char	   *area = (char *) coordinate + PACK_SHARED_BYTES;
	Size		room = 0;

	state->shared = (PackShared *) coordinate;
	state->share = (GpuAggPageShare *) ((char *) coordinate + MAXALIGN(sizeof(PackShared)));
	state->pages = state->shared->pages;
	state->page_capacity = state->shared->page_capacity;
	state->page_off_reason = "the leader reads rows";
	pack_set_pages(state);
	state->in_place = state->shared->in_place && state->pages;
	if (pack_has_filter_area(state))
	{
		state->filter_area = area;
		room = GpuAggProbeFilterAreaBytes(area);
		pack_attach_probe_keys(state);
	}
	state->exchange = GpuAggExchangeAttach(area + room,
										   node->ss.ps.state->es_query_cxt);
}

/*
 * Give the probe side's GpuAggPack under `gather` (the leader's copy) the
 * filter to share with its participants (NULL: none), before the gather
 * starts; nothing when the child is not a GpuAggPack.
 */
void
GpuAggPackSetProbeFilter(PlanState *gather, const GpuAggProbeFilter *filter)
{
	PlanState  *pack = outerPlanState(gather);

	if (pack == NULL || !IsA(pack, CustomScanState) ||
		((CustomScanState *) pack)->methods != &pack_exec_methods)
		return;
	((GpuAggPackState *) pack)->probe_filter = filter;
}

/* The GpuAggPack under `gather` (the leader's copy), or NULL. */
static GpuAggPackState *
pack_under(PlanState *gather)
{
	PlanState  *pack = outerPlanState(gather);

	if (pack == NULL || !IsA(pack, CustomScanState) ||
		((CustomScanState *) pack)->methods != &pack_exec_methods)
		return NULL;
	return (GpuAggPackState *) pack;
}

/*
 * Decide for the next run of the GpuAggPack under `gather` (the leader's
 * copy, before the Gather starts its workers) whether its participants
 * send heap pages, as the serial scan decides: not where off_reason says
 * why not, else where its direct scan can read the GpuHashAgg's batch
 * columns from pages.  Their messages carry at most GPUAGG_MESSAGE_PAGES
 * pages, which fit an empty batch of any device.  With in_place (the
 * device's batches lie in the GPU service's arena) they write their pages
 * into the leader's batches instead (GpuAggPackPageShare).  Returns the
 * page program for the aggregation's request, with batches of batch_rows
 * rows and up to device_pages pages (the device's), allocated in cxt;
 * NULL when rows go.
 */
const GaPageInput *
GpuAggPackUsePages(PlanState *gather, int64 device_pages, int64 batch_rows,
				   const char *off_reason, bool in_place, MemoryContext cxt)
{
	GpuAggPackState *state = pack_under(gather);
	const GaPageInput *program;
	GaPageInput *request;

	if (state == NULL || state->direct == NULL)
		return NULL;
	state->pages = off_reason == NULL;
	state->page_capacity = Min(device_pages, GPUAGG_MESSAGE_PAGES);
	state->page_off_reason = off_reason;
	state->in_place = false;
	state->share_ready = false; /* until the Gather sets this run up */
	program = pack_set_pages(state);
	if (program == NULL)
		return NULL;
	request = MemoryContextAlloc(cxt, sizeof(GaPageInput));
	*request = *program;
	request->page_capacity = Max(Min(batch_rows, device_pages), 1);
	state->in_place = in_place && GpuAggPageShareFits(request->page_capacity, batch_rows);
	return request;
}

/*
 * Where the participants of the GpuAggPack under `gather` write their
 * pages into the leader's batches, once the Gather set this run up; NULL
 * when they send them in messages (or rows), or before that.
 */
GpuAggPageShare *
GpuAggPackPageShare(PlanState *gather)
{
	GpuAggPackState *state = pack_under(gather);

	if (state == NULL || !state->in_place || !state->share_ready || state->shared == NULL)
		return NULL;
	return state->share;
}

/*
 * Tell the participants of the GpuAggPack under `gather` that the run is
 * over, before the Gather is rescanned (which waits for its workers): a
 * worker waiting for the leader's next batch ends its scan.
 */
void
GpuAggPackStopRun(PlanState *gather)
{
	GpuAggPackState *state = pack_under(gather);

	if (state != NULL && state->shared != NULL && state->share != NULL)
		GpuAggPageShareStop(state->share);
}

/*
 * The heap pages that every participant of the GpuAggPack under `gather`
 * read, all runs: copied to the device (in_place of them written into the
 * leader's batches by the participants), read through the host, and why
 * pages went through the host; false when it reads no pages directly.
 */
bool
GpuAggPackPageCounts(PlanState *gather, int64 *to_device, int64 *in_place,
					 int64 *through_host, const char **reason)
{
	GpuAggPackState *state = pack_under(gather);

	if (state == NULL || state->direct == NULL)
		return false;
	pack_count_pages(state);
	GpuAggDirectScanPageCounts(state->direct, to_device, through_host, reason);
	*to_device += state->worker_pages_device;
	*through_host += state->worker_pages_host;
	*in_place = state->pages_in_place;
	return true;
}

/*
 * The exchange of the GpuAggPack under `gather` (the leader's copy of the
 * node), or NULL when there is none (no parallel setup).
 */
GpuAggExchange *
GpuAggPackExchange(PlanState *gather)
{
	PlanState  *pack = outerPlanState(gather);

	if (pack == NULL || !IsA(pack, CustomScanState) ||
		((CustomScanState *) pack)->methods != &pack_exec_methods)
		return NULL;
	return ((GpuAggPackState *) pack)->exchange;
}

/* Register GpuAggPack's scan methods, for plans copied to workers. */
void
GpuAggPackInit(void)
{
	RegisterCustomScanMethods(&pack_scan_methods);
}
