/*-------------------------------------------------------------------------
 *
 * scan_direct.c
 *	  Direct heap scan: when the child of GpuHashAgg or GpuAggPack is a
 *	  plain (parallel) sequential scan of a heap table with no filter whose
 *	  output columns are table columns, read the table's pages here and
 *	  deform each visible tuple's needed columns straight into the batch
 *	  builder's row, instead of pulling one tuple at a time through the Seq
 *	  Scan node (per tuple: a buffer pin, a slot store, ExecScan and a
 *	  projection).
 *
 * Measured on the GPU host (16 cores, 1e8 rows, 8 GB in shared_buffers):
 * the workers' tuple-at-a-time scan and projection was most of GpuHashAgg's
 * time, while the GPU was busy for 1% of it.  This is the CPU half of what
 * PG-Strom does on the GPU (reading heap blocks directly); see the "fill
 * the GPU" discussion of the GFTR paper (papers/): the input path, not the
 * aggregation, bounds an accelerated group-by.
 *
 * Reading a page follows heapam's page-at-a-time mode (heapgetpage in
 * PostgreSQL 15): pin the buffer, prune it opportunistically, take its
 * content lock in share mode,
 * collect the offsets of the tuples visible to the scan's snapshot (all of
 * them when the page is all-visible and the snapshot was not taken during
 * recovery; PostgreSQL's own visibility test otherwise, with the
 * serializable conflict check), release the lock and keep the pin while
 * the tuples are read: a pinned page cannot be pruned.  Blocks come in the
 * order the Seq Scan would read them: from the scan's start block (which
 * synchronized scans may move) around the table, or from the parallel
 * scan's shared block allocator.
 *
 * A Seq Scan with a filter is read the same way, but each visible tuple is
 * stored in the Seq Scan's own scan slot (the kind its filter was compiled
 * for; the slot keeps one buffer pin per page, not per tuple) and the
 * filter is evaluated by the executor as ExecScan would; the columns come
 * from that slot.  Only the tuple-at-a-time node calls and the projection
 * are saved there.
 *
 * The Seq Scan node stays in the plan: its scan descriptor (created by it,
 * or here as SeqNext would), its rescans and its end are used as they are,
 * and its EXPLAIN ANALYZE counters are kept (rows returned, rows removed by
 * the filter, time reading pages).
 *
 *-------------------------------------------------------------------------
 */
#include "gpuagg.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/tupmacs.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* Tuples ahead whose memory is prefetched (about a DRAM latency of work). */
#define DIRECT_PREFETCH_DISTANCE 4

struct GpuAggDirectScan
{
	SeqScanState *scan;
	Relation	rel;
	TupleDesc	tupdesc;
	int			noutputs;		/* columns of the Seq Scan's output */
	AttrNumber *output_attnos;	/* per output column: its table column */
	int			max_attno;		/* table columns deformed per tuple */
	Datum	   *heap_values;	/* the deformed table columns */
	bool	   *heap_isnull;
	TupleTableSlot *row;		/* virtual slot in the Seq Scan's output shape */
	ExprState  *qual;			/* the Seq Scan's filter, or NULL */
	HeapTupleData tuple;		/* the current tuple, when stored in its slot */

	/* position */
	bool		started;
	bool		finished;
	BlockNumber next_block;		/* serial scans: the next block to read */
	BlockNumber blocks_read;	/* serial scans: how many so far */
	Buffer		buffer;			/* the pinned page, or InvalidBuffer */
	int			ntuples;		/* visible tuples of the page */
	int			next_tuple;
	OffsetNumber visible[MaxHeapTuplesPerPage];
};

/*
 * The table column that output column `tle` of a Seq Scan reads, or 0 when
 * it is anything but a plain column of the scanned table.
 */
static AttrNumber
output_table_column(TargetEntry *tle, Index scanrelid)
{
	Var		   *var = (Var *) tle->expr;

	if (var == NULL || !IsA(var, Var) || var->varno != scanrelid ||
		var->varlevelsup != 0 || var->varattno <= 0)
		return 0;
	return var->varattno;
}

/*
 * Set up a direct scan of `child`, or return NULL when the child is not a
 * Seq Scan this file can read (gpuagg.direct_scan off, computed output
 * columns, a table that is not heap, a serializable transaction).
 */
GpuAggDirectScan *
GpuAggDirectScanCreate(PlanState *child, MemoryContext cxt)
{
	SeqScanState *scan;
	Scan	   *plan;
	Relation	rel;
	GpuAggDirectScan *ds;
	MemoryContext old;
	ListCell   *lc;
	int			i;

	if (!gpuagg_direct_scan || child == NULL || !IsA(child, SeqScanState))
		return NULL;
	scan = (SeqScanState *) child;
	plan = (Scan *) child->plan;
	rel = scan->ss.ss_currentRelation;
	if (rel == NULL ||
		rel->rd_tableam != GetHeapamTableAmRoutine() ||
		IsolationIsSerializable())
		return NULL;
	foreach(lc, plan->plan.targetlist)
	{
		if (output_table_column(lfirst_node(TargetEntry, lc), plan->scanrelid) == 0)
			return NULL;
	}

	old = MemoryContextSwitchTo(cxt);
	ds = palloc0(sizeof(GpuAggDirectScan));
	ds->scan = scan;
	ds->rel = rel;
	ds->tupdesc = RelationGetDescr(rel);
	ds->noutputs = list_length(plan->plan.targetlist);
	ds->output_attnos = palloc(sizeof(AttrNumber) * Max(ds->noutputs, 1));
	i = 0;
	foreach(lc, plan->plan.targetlist)
	{
		AttrNumber	attno = output_table_column(lfirst_node(TargetEntry, lc),
												plan->scanrelid);

		ds->output_attnos[i++] = attno;
		ds->max_attno = Max(ds->max_attno, attno);
	}
	ds->heap_values = palloc(sizeof(Datum) * Max(ds->max_attno, 1));
	ds->heap_isnull = palloc(sizeof(bool) * Max(ds->max_attno, 1));
	ds->row = MakeSingleTupleTableSlot(ExecGetResultType(child), &TTSOpsVirtual);
	ds->qual = child->qual;
	ds->buffer = InvalidBuffer;
	MemoryContextSwitchTo(old);
	return ds;
}

/* Unpin the current page, if any (and the scan slot's pin on it). */
static void
direct_release_page(GpuAggDirectScan *ds)
{
	if (ds->qual != NULL)
		ExecClearTuple(ds->scan->ss.ss_ScanTupleSlot);
	if (BufferIsValid(ds->buffer))
		ReleaseBuffer(ds->buffer);
	ds->buffer = InvalidBuffer;
	ds->ntuples = 0;
	ds->next_tuple = 0;
}

/* Start over (the Seq Scan was rescanned): the next read begins a new pass. */
void
GpuAggDirectScanReset(GpuAggDirectScan *ds)
{
	direct_release_page(ds);
	ExecClearTuple(ds->row);
	ds->started = false;
	ds->finished = false;
}

/* Release the page and the slot (before the Seq Scan itself ends). */
void
GpuAggDirectScanEnd(GpuAggDirectScan *ds)
{
	direct_release_page(ds);
	ExecDropSingleTupleTableSlot(ds->row);
}

/* The scan descriptor: the Seq Scan's, created as SeqNext would if needed. */
static HeapScanDesc
direct_scan_desc(GpuAggDirectScan *ds)
{
	ScanState  *ss = &ds->scan->ss;

	if (ss->ss_currentScanDesc == NULL)
		ss->ss_currentScanDesc = table_beginscan(ss->ss_currentRelation,
												 ss->ps.state->es_snapshot,
												 0, NULL);
	return (HeapScanDesc) ss->ss_currentScanDesc;
}

/* The next block to read, or InvalidBlockNumber at the end of the scan. */
static BlockNumber
direct_next_block(GpuAggDirectScan *ds, HeapScanDesc hscan)
{
	ParallelBlockTableScanDesc pbscan =
		(ParallelBlockTableScanDesc) hscan->rs_base.rs_parallel;
	BlockNumber block;

	if (pbscan != NULL)
	{
		if (!ds->started)
			table_block_parallelscan_startblock_init(ds->rel,
													 hscan->rs_parallelworkerdata,
													 pbscan);
		ds->started = true;
		return table_block_parallelscan_nextpage(ds->rel,
												 hscan->rs_parallelworkerdata,
												 pbscan);
	}
	if (!ds->started)
	{
		ds->next_block = hscan->rs_startblock;
		ds->blocks_read = 0;
		ds->started = true;
	}
	if (ds->blocks_read >= hscan->rs_nblocks)
		return InvalidBlockNumber;
	block = ds->next_block;
	ds->blocks_read++;
	ds->next_block = (block + 1 >= hscan->rs_nblocks) ? 0 : block + 1;
	return block;
}

/*
 * Pin block `block` and collect its tuples visible to the scan's snapshot
 * (heapgetpage's page-at-a-time visibility, see the file header).
 */
static void
direct_read_page(GpuAggDirectScan *ds, HeapScanDesc hscan, BlockNumber block)
{
	Snapshot	snapshot = hscan->rs_base.rs_snapshot;
	Page		page;
	OffsetNumber maxoff;
	OffsetNumber off;
	bool		all_visible;
	int			n = 0;

	ds->buffer = ReadBufferExtended(ds->rel, MAIN_FORKNUM, block, RBM_NORMAL,
									hscan->rs_strategy);
	/* as heapam does: prune the page when that is cheap and worthwhile */
	heap_page_prune_opt(ds->rel, ds->buffer);
	LockBuffer(ds->buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(ds->buffer);
	maxoff = PageGetMaxOffsetNumber(page);
	all_visible = PageIsAllVisible(page) && !snapshot->takenDuringRecovery;
	for (off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
	{
		ItemId		item = PageGetItemId(page, off);
		HeapTupleData tuple;
		bool		valid;

		if (!ItemIdIsNormal(item))
			continue;
		if (all_visible)
		{
			ds->visible[n++] = off;
			continue;
		}
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, item);
		tuple.t_len = ItemIdGetLength(item);
		tuple.t_tableOid = RelationGetRelid(ds->rel);
		ItemPointerSet(&tuple.t_self, block, off);
		valid = HeapTupleSatisfiesVisibility(&tuple, snapshot, ds->buffer);
		HeapCheckForSerializableConflictOut(valid, ds->rel, &tuple, ds->buffer,
											snapshot);
		if (valid)
			ds->visible[n++] = off;
	}
	LockBuffer(ds->buffer, BUFFER_LOCK_UNLOCK);
	ds->ntuples = n;
	ds->next_tuple = 0;
}

/*
 * Deform table columns 1 .. ds->max_attno of one tuple into heap_values /
 * heap_isnull: the walk of heap_deform_tuple, stopped at the last column
 * needed (offsets computed, not taken from attcacheoff, which PostgreSQL 18
 * moved out of pg_attribute); columns the tuple predates (added later) take
 * their missing value.
 */
static void
direct_deform(GpuAggDirectScan *ds, HeapTupleHeader tup)
{
	TupleDesc	tupdesc = ds->tupdesc;
	int			natts = Min((int) HeapTupleHeaderGetNatts(tup), ds->max_attno);
	bool		hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	bits8	   *bits = tup->t_bits;
	char	   *data = (char *) tup + tup->t_hoff;
	uint32		off = 0;
	int			i;

	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (hasnulls && att_isnull(i, bits))
		{
			ds->heap_values[i] = (Datum) 0;
			ds->heap_isnull[i] = true;
			continue;
		}
		ds->heap_isnull[i] = false;
		if (att->attlen == -1)
			off = att_align_pointer(off, att->attalign, -1, data + off);
		else
			off = att_align_nominal(off, att->attalign);
		ds->heap_values[i] = fetchatt(att, data + off);
		off = att_addlength_pointer(off, att->attlen, data + off);
	}
	for (; i < ds->max_attno; i++)
		ds->heap_values[i] = getmissingattr(tupdesc, i + 1, &ds->heap_isnull[i]);
}

/*
 * The next tuple of the current page, reading pages as needed, or NULL at
 * the end of the scan.  *item is its line pointer's offset.
 */
static HeapTupleHeader
direct_next_tuple(GpuAggDirectScan *ds, HeapScanDesc hscan, OffsetNumber *item)
{
	Instrumentation *instr = ds->scan->ss.ps.instrument;
	Page		page;

	while (ds->next_tuple >= ds->ntuples)
	{
		BlockNumber block;

		direct_release_page(ds);
		if (ds->finished)
			return NULL;
		CHECK_FOR_INTERRUPTS();
		block = direct_next_block(ds, hscan);
		if (block == InvalidBlockNumber)
		{
			ds->finished = true;
			return NULL;
		}
		if (instr)
			InstrStartNode(instr);
		direct_read_page(ds, hscan, block);
		if (instr)
			InstrStopNode(instr, 0);
	}
	page = BufferGetPage(ds->buffer);
	*item = ds->visible[ds->next_tuple];
	ds->next_tuple++;
	/* a later tuple's header is read soon: fetch it meanwhile */
	if (ds->next_tuple + DIRECT_PREFETCH_DISTANCE < ds->ntuples)
	{
		char	   *ahead = PageGetItem(page, PageGetItemId(page,
														   ds->visible[ds->next_tuple + DIRECT_PREFETCH_DISTANCE]));

		__builtin_prefetch(ahead);
		__builtin_prefetch(ahead + 64);
	}
	return (HeapTupleHeader) PageGetItem(page, PageGetItemId(page, *item));
}

/*
 * Store a filtered scan's tuple in the Seq Scan's scan slot and evaluate the
 * filter as ExecScan does; true when the tuple passes (its columns are then
 * deformed up to the last one needed).
 */
static bool
direct_filter(GpuAggDirectScan *ds, HeapTupleHeader tup, OffsetNumber item)
{
	TupleTableSlot *scanslot = ds->scan->ss.ss_ScanTupleSlot;
	ExprContext *econtext = ds->scan->ss.ps.ps_ExprContext;
	Page		page = BufferGetPage(ds->buffer);

	ds->tuple.t_data = tup;
	ds->tuple.t_len = ItemIdGetLength(PageGetItemId(page, item));
	ds->tuple.t_tableOid = RelationGetRelid(ds->rel);
	ItemPointerSet(&ds->tuple.t_self, BufferGetBlockNumber(ds->buffer), item);
	ExecStoreBufferHeapTuple(&ds->tuple, scanslot, ds->buffer);
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = scanslot;
	if (!ExecQual(ds->qual, econtext))
	{
		InstrCountFiltered1(ds->scan, 1);
		return false;
	}
	slot_getsomeattrs(scanslot, ds->max_attno);
	return true;
}

/*
 * The next visible tuple of the table that passes the filter, as a virtual
 * slot in the Seq Scan's output shape (its by-reference values point into
 * the pinned page, valid until the next call), or NULL at the end.
 */
static TupleTableSlot *
direct_next(GpuAggDirectScan *ds, HeapScanDesc hscan)
{
	Instrumentation *instr = ds->scan->ss.ps.instrument;
	TupleTableSlot *row = ds->row;
	const Datum *values;
	const bool *isnull;
	HeapTupleHeader tup;
	OffsetNumber item;
	int			c;

	for (;;)
	{
		tup = direct_next_tuple(ds, hscan, &item);
		if (tup == NULL)
			return NULL;
		if (ds->qual == NULL)
		{
			direct_deform(ds, tup);
			values = ds->heap_values;
			isnull = ds->heap_isnull;
			break;
		}
		if (direct_filter(ds, tup, item))
		{
			values = ds->scan->ss.ss_ScanTupleSlot->tts_values;
			isnull = ds->scan->ss.ss_ScanTupleSlot->tts_isnull;
			break;
		}
	}
	if (instr)
		instr->tuplecount += 1;	/* rows the Seq Scan returned, as EXPLAIN counts them */

	/* the slot stays stored (see GpuAggDirectScanFill): only its values change */
	for (c = 0; c < ds->noutputs; c++)
	{
		AttrNumber	attno = ds->output_attnos[c];

		row->tts_values[c] = values[attno - 1];
		row->tts_isnull[c] = isnull[attno - 1];
	}
	return row;
}

/*
 * Append the scan's next rows to `batch` until it is full or the table is
 * read; returns true at the end of the table.
 */
bool
GpuAggDirectScanFill(GpuAggDirectScan *ds, GpuAggBatchBuilder *builder, GaBatch *batch)
{
	HeapScanDesc hscan;

	/* what ExecProcNode would do first: changed parameters mean a rescan */
	if (ds->scan->ss.ps.chgParam != NULL)
	{
		ExecReScan(&ds->scan->ss.ps);
		GpuAggDirectScanReset(ds);
	}
	hscan = direct_scan_desc(ds);
	/* a stored virtual tuple whose values direct_next overwrites per row */
	if (TTS_EMPTY(ds->row))
		ExecStoreVirtualTuple(ds->row);
	while (batch->nrows < batch->capacity)
	{
		TupleTableSlot *row = direct_next(ds, hscan);

		if (row == NULL)
			return true;
		GpuAggBatchAppend(builder, batch, row);
	}
	return false;
}
