/*-------------------------------------------------------------------------
 *
 * batch/scan_direct.c
 *	  Direct heap scan: when the child of GpuHashAgg or GpuAggPack is a
 *	  plain (parallel) sequential scan of a heap table whose output columns
 *	  are table columns, read the table's pages here and deform the visible
 *	  tuples' needed columns straight into arrays that the batch builder
 *	  encodes column by column, instead of pulling one tuple at a time
 *	  through the Seq Scan node (per tuple: a buffer pin, a slot store,
 *	  ExecScan and a projection).
 *
 * Pulling tuples one at a time through the scan and its projection takes
 * most of a GpuHashAgg's time, while the GPU is busy for a small part of
 * it (docs/benchmarks.md): the input path, not the aggregation, bounds an
 * accelerated group-by (see the "fill the GPU" discussion of the GFTR
 * paper).  This is the CPU half of what PG-Strom does on the GPU (reading
 * heap blocks directly).
 *
 * Reading a page follows heapam's page-at-a-time mode (heapgetpage in
 * PostgreSQL 15): pin the buffer, prune it opportunistically, take its
 * content lock in share mode, collect the offsets of the tuples visible to
 * the scan's snapshot (all of them when the page is all-visible and the
 * snapshot was not taken during recovery; PostgreSQL's own visibility test
 * otherwise, with the serializable conflict check), release the lock and
 * keep the pin while the tuples are read: a pinned page cannot be
 * pruned.  Blocks come in the
 * order the Seq Scan would read them: from the scan's start block (which
 * synchronized scans may move) around the table, or from the parallel
 * scan's shared block allocator.  A block is first looked for in the
 * buffer after the previous block's (direct_read_buffer).
 *
 * With no filter, a page's tuples (as many as the batch has room for) are
 * deformed as one run into per-column arrays, a tuple with no nulls by
 * steps compiled once per scan (DirectStep), and the builder encodes each
 * batch column in one loop (GpuAggBatchAppendColumns): per row, no slot, no
 * function call and no switch on a column's encoding, which takes less
 * than half the time of deforming and appending a row at a time
 * (docs/benchmarks.md).
 *
 * A Seq Scan with a filter is read the same way, but each visible tuple is
 * stored in the Seq Scan's own scan slot (the kind its filter was compiled
 * for; the slot keeps one buffer pin per page, not per tuple) and the
 * filter is evaluated by the executor as ExecScan would; the columns come
 * from that slot.  Only the tuple-at-a-time node calls and the projection
 * are saved there.
 *
 * With no filter and a device that deforms pages (gpuagg.page_scan), the
 * visible tuples are not deformed here at all: each page is copied, while
 * its content lock is held, into the batch's page area with the offsets
 * of its visible tuples (or none when it is all-visible), and the device
 * deforms it (batch/pages.c, docs/design/pages.md).  The pin and the lock
 * end with the copy.  A parallel participant whose leader's batch lies in
 * the GPU service's arena copies each page into that batch instead, in
 * room it reserves there (GpuAggDirectScanFillShared, batch/page_share.c).
 *
 * The Seq Scan node stays in the plan: its scan descriptor (created by it,
 * or here as SeqNext would), its rescans and its end are used as they are,
 * and its EXPLAIN ANALYZE counters are kept (rows returned, rows removed by
 * the filter, time reading pages).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/tupmacs.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "aggjoin/probe_filter.h"
#include "batch/batch.h"
#include "compat.h"
#include "guc.h"

/* Tuples ahead whose memory is prefetched (about a DRAM latency of work). */
#define DIRECT_PREFETCH_DISTANCE 4

/* How one table column is stepped over when deforming (direct_deform_run). */
typedef struct DirectColumn
{
	int16		attlen;
	uint8		alignby;		/* 1, 2, 4 or 8 */
	bool		byval;
	int			dest;			/* its deformed column, or -1 if not needed */
} DirectColumn;

/* A needed fixed-width column at a constant offset in its run (DirectStep). */
typedef struct DirectFetch
{
	int16		reloff;			/* bytes from the run's aligned start */
	int16		attlen;
	bool		byval;
	Datum	   *values;			/* its deformed column */
} DirectFetch;

/*
 * One step of the walk over a tuple with no nulls and every column needed:
 * a varlena or cstring column, or a run of fixed-width columns whose
 * alignments are at most the first one's.  Once the run's start is aligned
 * for its first column it is aligned for all of them, so their offsets from
 * it are constants (heap_deform_tuple's attcacheoff, from any start).
 */
typedef struct DirectStep
{
	int16		attlen;			/* -1 or -2; 1 for a run of fixed-width ones */
	uint8		alignby;
	int			runlen;			/* a run: its bytes */
	int			first_fetch;	/* a run: its needed columns' fetches */
	int			nfetch;
	Datum	   *values;			/* varlena, cstring: its deformed column, or
								 * NULL if not needed */
} DirectStep;

struct GpuAggDirectScan
{
	SeqScanState *scan;
	Relation	rel;
	TupleDesc	tupdesc;
	int			noutputs;		/* columns of the Seq Scan's output */
	AttrNumber *output_attnos;	/* per output column: its table column */
	int			max_attno;		/* table columns deformed per tuple */
	DirectColumn *columns;		/* table columns 1 .. max_attno */

	/*
	 * A run of a page's tuples deformed column by column: per table column
	 * needed (ndeformed of them), MaxHeapTuplesPerPage values and nulls.
	 * input presents them per output column, as GpuAggBatchAppendColumns
	 * takes them.
	 */
	int			ndeformed;
	Datum	   *deformed_values;
	bool	   *deformed_isnull;
	bool	   *deformed_hasnull;
	GpuAggInputColumn *input;
	int			nsteps;			/* the walk of a tuple with no nulls */
	DirectStep *steps;
	DirectFetch *fetches;

	TupleTableSlot *row;		/* virtual slot in the Seq Scan's output shape */
	ExprState  *qual;			/* the Seq Scan's filter, or NULL */
	HeapTupleData tuple;		/* the current tuple, when stored in its slot */

	/* position */
	bool		started;
	bool		finished;
	BlockNumber next_block;		/* serial scans: the next block to read */
	BlockNumber blocks_read;	/* serial scans: how many so far */
	Buffer		buffer;			/* the pinned page, or InvalidBuffer */
	Buffer		last_buffer;	/* the shared buffer of the last page read */
	int			ntuples;		/* visible tuples of the page */
	int			next_tuple;
	OffsetNumber visible[MaxHeapTuplesPerPage];

	/* an aggjoin probe side's key filter (aggjoin/probe_filter.c), or NULL */
	GpuAggProbeKeys *probe_keys;
	bool		keep[MaxHeapTuplesPerPage];

	/*
	 * Rows a full batch did not take (their text keys did not fit): the
	 * deformed run's rows [run_next, run_end), or the filtered scan's row
	 * in `row`; the next batch takes them first.
	 */
	int			run_next;
	int			run_end;
	bool		row_held;
	GpuAggInputColumn *run_input;	/* input from run_next on */

	/*
	 * Pages to the device: the page program of this run (NULL: rows), the
	 * one built for the node's layout, and what EXPLAIN ANALYZE shows.
	 */
	const GaPageInput *pages;
	GaPageInput *page_input;
	bool		page_input_built;
	const char *page_build_reason;	/* why page_input is NULL */
	const char *page_reason;	/* why pages went through the host */
	BlockNumber pending_block;	/* a page the last batch had no room for */
	int64		pages_device;
	int64		pages_host;
};

/*
 * Test the rows of a run of n deformed tuples against the probe-key filter
 * and move the ones that pass to the front of every deformed column, in
 * order; returns how many passed.
 */
static int
direct_filter_run(GpuAggDirectScan *ds, int n)
{
	int			kept = GpuAggProbeKeysRun(ds->probe_keys, ds->input, n, ds->keep);
	int			d;

	if (kept == n)
		return n;
	for (d = 0; d < ds->ndeformed; d++)
	{
		Datum	   *values = &ds->deformed_values[d * MaxHeapTuplesPerPage];
		bool	   *isnull = &ds->deformed_isnull[d * MaxHeapTuplesPerPage];
		int			to = 0;
		int			r;

		for (r = 0; r < n; r++)
		{
			if (!ds->keep[r])
				continue;
			values[to] = values[r];
			isnull[to] = isnull[r];
			to++;
		}
	}
	return kept;
}

/*
 * Let the scan drop the rows whose join keys an aggjoin's
 * probe-key filter rules out, before they are appended (NULL: none).
 */
void
GpuAggDirectScanSetProbeKeys(GpuAggDirectScan *ds, GpuAggProbeKeys *keys)
{
	ds->probe_keys = keys;
}

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
 * Compile the walk over table columns 1 .. max_attno of a tuple with no
 * nulls into steps (see DirectStep); needs ds->columns and the deformed
 * columns.
 */
static void
direct_plan_steps(GpuAggDirectScan *ds)
{
	int			i = 0;

	ds->steps = palloc0(sizeof(DirectStep) * Max(ds->max_attno, 1));
	ds->fetches = palloc0(sizeof(DirectFetch) * Max(ds->max_attno, 1));
	ds->nsteps = 0;
	while (i < ds->max_attno)
	{
		const DirectColumn *col = &ds->columns[i];
		DirectStep *step = &ds->steps[ds->nsteps++];
		int			nfetches = step - ds->steps > 0 ?
			step[-1].first_fetch + step[-1].nfetch : 0;
		int			off = 0;

		step->alignby = col->alignby;
		step->first_fetch = nfetches;
		if (col->attlen < 0)
		{
			step->attlen = col->attlen;
			if (col->dest >= 0)
				step->values = &ds->deformed_values[col->dest * MaxHeapTuplesPerPage];
			i++;
			continue;
		}
		step->attlen = 1;
		for (; i < ds->max_attno && ds->columns[i].attlen > 0 &&
			 ds->columns[i].alignby <= step->alignby; i++)
		{
			col = &ds->columns[i];
			off = TYPEALIGN(col->alignby, off);
			if (col->dest >= 0)
			{
				DirectFetch *f = &ds->fetches[step->first_fetch + step->nfetch++];

				f->reloff = off;
				f->attlen = col->attlen;
				f->byval = col->byval;
				f->values = &ds->deformed_values[col->dest * MaxHeapTuplesPerPage];
			}
			off += col->attlen;
		}
		step->runlen = off;
	}
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
	ds->columns = palloc(sizeof(DirectColumn) * Max(ds->max_attno, 1));
	for (i = 0; i < ds->max_attno; i++)
	{
		Form_pg_attribute att = TupleDescAttr(ds->tupdesc, i);
		DirectColumn *col = &ds->columns[i];

		col->attlen = att->attlen;
		col->byval = att->attbyval;
		col->alignby = GpuAggAttAlignBytes(att->attalign);
		col->dest = -1;
	}
	for (i = 0; i < ds->noutputs; i++)
	{
		DirectColumn *col = &ds->columns[ds->output_attnos[i] - 1];

		if (col->dest < 0)
			col->dest = ds->ndeformed++;
	}
	ds->deformed_values = palloc0(sizeof(Datum) * MaxHeapTuplesPerPage * Max(ds->ndeformed, 1));
	ds->deformed_isnull = palloc0(sizeof(bool) * MaxHeapTuplesPerPage * Max(ds->ndeformed, 1));
	ds->deformed_hasnull = palloc0(sizeof(bool) * Max(ds->ndeformed, 1));
	direct_plan_steps(ds);
	ds->input = palloc0(sizeof(GpuAggInputColumn) * Max(ds->noutputs, 1));
	ds->run_input = palloc0(sizeof(GpuAggInputColumn) * Max(ds->noutputs, 1));
	for (i = 0; i < ds->noutputs; i++)
	{
		int			dest = ds->columns[ds->output_attnos[i] - 1].dest;

		ds->input[i].values = &ds->deformed_values[dest * MaxHeapTuplesPerPage];
		ds->input[i].isnull = &ds->deformed_isnull[dest * MaxHeapTuplesPerPage];
	}
	ds->row = MakeSingleTupleTableSlot(ExecGetResultType(child), &TTSOpsVirtual);
	ds->qual = child->qual;
	ds->buffer = InvalidBuffer;
	ds->pending_block = InvalidBlockNumber;
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

/*
 * Send the scan's pages to the device from the next batch on, for a
 * GpuHashAgg of batch columns `sources` whose device takes the page
 * program returned (which the aggregation's request must carry), with
 * batches of up to page_capacity pages (the device's); NULL when the
 * pages go through the host instead: off_reason, when the caller gives
 * one, a filter on the scan, or a column the device cannot read from
 * pages.  The reason is kept for EXPLAIN.
 */
const GaPageInput *
GpuAggDirectScanUsePages(GpuAggDirectScan *ds, int ncolumns, const GpuAggColumnSource *sources,
						 int64 batch_rows, int64 page_capacity, const char *off_reason)
{
	ds->pages = NULL;
	if (off_reason != NULL)
	{
		ds->page_reason = off_reason;
		return NULL;
	}
	if (ds->qual != NULL)
	{
		ds->page_reason = "a filter on the scan";
		return NULL;
	}
	if (!ds->page_input_built)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(ds));

		ds->page_input = GpuAggPageInputBuild(ds->tupdesc, ds->output_attnos, ds->noutputs,
											  ncolumns, sources, batch_rows,
											  &ds->page_build_reason);
		MemoryContextSwitchTo(old);
		ds->page_input_built = true;
	}
	if (ds->page_input == NULL)
	{
		ds->page_reason = ds->page_build_reason;
		return NULL;
	}
	ds->page_input->page_capacity = Max(Min(batch_rows, page_capacity), 1);
	ds->pages = ds->page_input;
	return ds->pages;
}

/*
 * The pages read so far: copied to the device, read through the host,
 * and why pages went through the host (NULL: no reason known).
 */
void
GpuAggDirectScanPageCounts(GpuAggDirectScan *ds, int64 *to_device, int64 *through_host,
						   const char **reason)
{
	*to_device = ds->pages_device;
	*through_host = ds->pages_host;
	*reason = ds->page_reason;
}

/* Start over (the Seq Scan was rescanned): the next read begins a new pass. */
void
GpuAggDirectScanReset(GpuAggDirectScan *ds)
{
	direct_release_page(ds);
	ExecClearTuple(ds->row);
	ds->started = false;
	ds->finished = false;
	ds->run_next = ds->run_end = 0;
	ds->row_held = false;
	ds->pending_block = InvalidBlockNumber;
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
 * Pin block `block` of the table: ReadBufferExtended, unless the block is in
 * the shared buffer after the previous block's, which is checked first.
 *
 * The buffer mapping lookup of ReadBufferExtended is a sizeable part of a
 * serial scan's time (cache and TLB misses in the mapping table of a large
 * shared_buffers), while a table read into shared buffers in order
 * (pg_prewarm, or a first scan into free buffers) sits mostly in
 * consecutive buffers.
 * ReadRecentBuffer checks the guessed buffer's tag and pins it; it counts a
 * shared hit for EXPLAIN (BUFFERS), and the relation's statistics count it
 * here as ReadBufferExtended would.  Unlike ReadBufferExtended, it does not
 * raise the buffer's usage count: the pages a direct scan finds this way
 * are not marked as recently used for the clock sweep, as a bulk read's
 * ring strategy also keeps a large scan from claiming the cache.
 */
static Buffer
direct_read_buffer(GpuAggDirectScan *ds, HeapScanDesc hscan, BlockNumber block)
{
	Buffer		buffer;

	if (BufferIsValid(ds->last_buffer) && ds->last_buffer < NBuffers &&
		ReadRecentBuffer(GpuAggRelFileLocator(ds->rel), MAIN_FORKNUM, block,
						 ds->last_buffer + 1))
	{
		pgstat_count_buffer_read(ds->rel);
		pgstat_count_buffer_hit(ds->rel);
		buffer = ds->last_buffer + 1;
	}
	else
		buffer = ReadBufferExtended(ds->rel, MAIN_FORKNUM, block, RBM_NORMAL,
									hscan->rs_strategy);
	/* local buffers (temporary tables) have negative numbers: no guess */
	ds->last_buffer = BufferIsLocal(buffer) ? InvalidBuffer : buffer;
	return buffer;
}

/*
 * Collect the tuples of the pinned and share-locked current page visible
 * to the scan's snapshot into ds->visible (heapgetpage's page-at-a-time
 * visibility, see the file header); returns how many, *all_visible
 * whether the page is all-visible for the snapshot (then every normal line
 * pointer's tuple is).
 */
static int
direct_page_visible(GpuAggDirectScan *ds, HeapScanDesc hscan, BlockNumber block,
					bool *all_visible_out)
{
	Snapshot	snapshot = hscan->rs_base.rs_snapshot;
	Page		page = BufferGetPage(ds->buffer);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	bool		all_visible;
	int			n = 0;

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
	*all_visible_out = all_visible;
	return n;
}

/*
 * Pin block `block` and collect its tuples visible to the scan's snapshot;
 * the pin stays while they are read.
 */
static void
direct_read_page(GpuAggDirectScan *ds, HeapScanDesc hscan, BlockNumber block)
{
	bool		all_visible;

	ds->buffer = direct_read_buffer(ds, hscan, block);
	/* as heapam does: prune the page when that is cheap and worthwhile */
	heap_page_prune_opt(ds->rel, ds->buffer);
	LockBuffer(ds->buffer, BUFFER_LOCK_SHARE);
	ds->ntuples = direct_page_visible(ds, hscan, block, &all_visible);
	LockBuffer(ds->buffer, BUFFER_LOCK_UNLOCK);
	ds->next_tuple = 0;
	ds->pages_host++;
}

/*
 * Read block `block` into the batch's next page: pin it, prune it, and
 * under its share lock collect its visible tuples and copy the page; then
 * release it.  Returns its visible tuples, or -1 when the batch has no
 * rows left for them (the page is not copied: the next batch reads it
 * again).
 */
static int
direct_copy_page(GpuAggDirectScan *ds, HeapScanDesc hscan, BlockNumber block, GaBatch *batch)
{
	bool		all_visible;
	int			n;

	ds->buffer = direct_read_buffer(ds, hscan, block);
	heap_page_prune_opt(ds->rel, ds->buffer);
	LockBuffer(ds->buffer, BUFFER_LOCK_SHARE);
	n = direct_page_visible(ds, hscan, block, &all_visible);
	if (n > batch->capacity - batch->nrows)
		n = -1;
	else if (n > 0)
		GpuAggPageAppend(batch, BufferGetPage(ds->buffer), ds->visible, n, all_visible);
	LockBuffer(ds->buffer, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(ds->buffer);
	ds->buffer = InvalidBuffer;
	if (n >= 0)
		ds->pages_device++;
	return n;
}

/*
 * The block a page loop reads next: the one held back for the next batch
 * (pending_block), else the scan's next; InvalidBlockNumber, with the scan
 * marked finished, at the end of the table.
 */
static BlockNumber
direct_take_block(GpuAggDirectScan *ds, HeapScanDesc hscan)
{
	BlockNumber block = ds->pending_block;

	ds->pending_block = InvalidBlockNumber;
	if (ds->finished)
		return InvalidBlockNumber;
	CHECK_FOR_INTERRUPTS();
	if (block == InvalidBlockNumber)
		block = direct_next_block(ds, hscan);
	if (block == InvalidBlockNumber)
		ds->finished = true;
	return block;
}

/*
 * Copy the scan's next pages into `batch` until its pages or rows are
 * used up or the table is read; true at the end of the table.  A page
 * whose visible tuples the batch has no room for waits for the next batch
 * (pending_block), which reads it again: its visibility then is that of
 * the same snapshot, so the same tuples.
 */
static bool
direct_fill_pages(GpuAggDirectScan *ds, HeapScanDesc hscan, GaBatch *batch)
{
	Instrumentation *instr = ds->scan->ss.ps.instrument;

	while (batch->npages < batch->page_capacity && batch->nrows < batch->capacity)
	{
		BlockNumber block = direct_take_block(ds, hscan);
		int			n;

		if (block == InvalidBlockNumber)
			return true;
		if (instr)
			InstrStartNode(instr);
		n = direct_copy_page(ds, hscan, block, batch);
		if (instr)
			InstrStopNode(instr, 0);
		if (n < 0)
		{
			if (batch->nrows == 0)
				elog(ERROR, "gpuagg: a page holds more tuples than a batch");
			ds->pending_block = block;
			return false;
		}
		if (instr)
			instr->tuplecount += n; /* rows the Seq Scan returned */
	}
	return false;
}

/*
 * Read block `block` into the open batch of `share`, as direct_copy_page
 * does into a local batch, reserving its page and rows there under the
 * page's lock; returns its visible tuples, or -1 with *gen naming the
 * batch when that has no room for them.
 */
static int
direct_share_page(GpuAggDirectScan *ds, HeapScanDesc hscan, BlockNumber block,
				  GpuAggPageShare *share, uint32 *gen)
{
	bool		all_visible;
	uint8	   *image;
	GaPageDesc *desc;
	uint32		first_row;
	int			n;

	ds->buffer = direct_read_buffer(ds, hscan, block);
	heap_page_prune_opt(ds->rel, ds->buffer);
	LockBuffer(ds->buffer, BUFFER_LOCK_SHARE);
	n = direct_page_visible(ds, hscan, block, &all_visible);
	if (n > 0)
	{
		if (GpuAggPageShareReserve(share, n, gen, &image, &desc, &first_row))
		{
			GpuAggPageCopy(image, desc, BufferGetPage(ds->buffer), ds->visible, n,
						   all_visible, first_row);
			GpuAggPageShareWritten(share);
		}
		else
			n = -1;
	}
	LockBuffer(ds->buffer, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(ds->buffer);
	ds->buffer = InvalidBuffer;
	if (n >= 0)
		ds->pages_device++;
	return n;
}

/*
 * Copy the scan's next pages straight into the open batch of `share`
 * (batch/page_share.c) until the table is read, the batch has no room for
 * the next page (*gen names it; the page waits in pending_block for the
 * next batch, as in direct_fill_pages) or, with max_rows >= 0, that many
 * rows went in.
 */
GpuAggShareFill
GpuAggDirectScanFillShared(GpuAggDirectScan *ds, GpuAggPageShare *share, int64 max_rows,
						   uint32 *gen)
{
	Instrumentation *instr = ds->scan->ss.ps.instrument;
	HeapScanDesc hscan;
	int64		rows = 0;

	if (ds->scan->ss.ps.chgParam != NULL)
	{
		ExecReScan(&ds->scan->ss.ps);
		GpuAggDirectScanReset(ds);
	}
	hscan = direct_scan_desc(ds);
	*gen = 0;
	for (;;)
	{
		BlockNumber block;
		int			n;

		if (!ds->finished && max_rows >= 0 && rows >= max_rows)
			return GPUAGG_SHARE_MORE;	/* pending_block waits as it is */
		block = direct_take_block(ds, hscan);
		if (block == InvalidBlockNumber)
			return GPUAGG_SHARE_END;
		if (instr)
			InstrStartNode(instr);
		n = direct_share_page(ds, hscan, block, share, gen);
		if (instr)
			InstrStopNode(instr, 0);
		if (n < 0)
		{
			ds->pending_block = block;
			return GPUAGG_SHARE_FULL;
		}
		rows += n;
		if (instr)
			instr->tuplecount += n; /* rows the Seq Scan returned */
	}
}

/*
 * Make the next page with visible tuples the current one; false at the end
 * of the scan.
 */
static bool
direct_next_page(GpuAggDirectScan *ds, HeapScanDesc hscan)
{
	Instrumentation *instr = ds->scan->ss.ps.instrument;

	while (ds->next_tuple >= ds->ntuples)
	{
		BlockNumber block;

		direct_release_page(ds);
		if (ds->finished)
			return false;
		CHECK_FOR_INTERRUPTS();
		block = direct_next_block(ds, hscan);
		if (block == InvalidBlockNumber)
		{
			ds->finished = true;
			return false;
		}
		if (instr)
			InstrStartNode(instr);
		direct_read_page(ds, hscan, block);
		if (instr)
			InstrStopNode(instr, 0);
	}
	return true;
}

/* The header of visible tuple i of the current page. */
static inline HeapTupleHeader
direct_tuple(GpuAggDirectScan *ds, Page page, int i)
{
	return (HeapTupleHeader) PageGetItem(page, PageGetItemId(page, ds->visible[i]));
}

/*
 * Deform table columns 1 .. ds->max_attno of one tuple as row r of the
 * deformed columns, any tuple: the walk of heap_deform_tuple, stopped at the
 * last column needed (offsets computed, not taken from attcacheoff, which
 * PostgreSQL 18 moved out of pg_attribute); columns the tuple predates
 * (added later) take their missing value.  The rows' null flags must have
 * been cleared.
 */
static void
direct_deform_tuple(GpuAggDirectScan *ds, HeapTupleHeader tup, int r)
{
	const DirectColumn *columns = ds->columns;
	Datum	   *values = ds->deformed_values;
	bool	   *isnull = ds->deformed_isnull;
	int			natts = Min((int) HeapTupleHeaderGetNatts(tup), ds->max_attno);
	bool		hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	bits8	   *bits = tup->t_bits;
	char	   *data = (char *) tup + tup->t_hoff;
	uint32		off = 0;
	int			i;

	for (i = 0; i < natts; i++)
	{
		const DirectColumn *col = &columns[i];
		char	   *p;

		if (hasnulls && att_isnull(i, bits))
		{
			if (col->dest >= 0)
			{
				values[col->dest * MaxHeapTuplesPerPage + r] = (Datum) 0;
				isnull[col->dest * MaxHeapTuplesPerPage + r] = true;
				ds->deformed_hasnull[col->dest] = true;
			}
			continue;
		}
		if (col->attlen > 0)
		{
			off = TYPEALIGN(col->alignby, off);
			p = data + off;
			off += col->attlen;
		}
		else if (col->attlen == -1)
		{
			/* att_align_pointer: a 1-byte header is never padded */
			if (!VARATT_NOT_PAD_BYTE(data + off))
				off = TYPEALIGN(col->alignby, off);
			p = data + off;
			off += VARSIZE_ANY(p);
		}
		else
		{
			off = TYPEALIGN(col->alignby, off);
			p = data + off;
			off += strlen(p) + 1;
		}
		if (col->dest >= 0)
			values[col->dest * MaxHeapTuplesPerPage + r] =
				fetch_att(p, col->byval, col->attlen);
	}
	for (; i < ds->max_attno; i++)
	{
		int			dest = columns[i].dest;
		bool		null;

		if (dest < 0)
			continue;
		values[dest * MaxHeapTuplesPerPage + r] =
			getmissingattr(ds->tupdesc, i + 1, &null);
		if (null)
		{
			values[dest * MaxHeapTuplesPerPage + r] = (Datum) 0;
			isnull[dest * MaxHeapTuplesPerPage + r] = true;
			ds->deformed_hasnull[dest] = true;
		}
	}
}

/*
 * Deform the next n visible tuples of the current page into the deformed
 * columns (row r of the run at index r).  A tuple with no nulls and all the
 * columns needed (the common case) is walked by the precompiled steps; any
 * other by direct_deform_tuple.  A null's value is 0; by-reference values
 * point into the pinned page.
 *
 * The tuples are visited last to first: a page is filled from its end, so
 * that is usually ascending addresses, which the CPU's own prefetchers
 * follow better than descending ones.  Only the order of the memory
 * accesses changes, not that of the rows.
 */
static void
direct_deform_run(GpuAggDirectScan *ds, int n)
{
	Page		page = BufferGetPage(ds->buffer);
	const DirectStep *steps = ds->steps;
	const DirectStep *steps_end = ds->steps + ds->nsteps;
	const DirectFetch *fetches = ds->fetches;
	int			first = ds->next_tuple;
	int			r;
	int			d;

	for (d = 0; d < ds->ndeformed; d++)
	{
		memset(&ds->deformed_isnull[d * MaxHeapTuplesPerPage], 0, n);
		ds->deformed_hasnull[d] = false;
	}
	for (r = n - 1; r >= 0; r--)
	{
		HeapTupleHeader tup = direct_tuple(ds, page, first + r);
		char	   *data;
		const DirectStep *step;
		uint32		off = 0;

		/* a later tuple's header is read soon: fetch it meanwhile */
		if (r - DIRECT_PREFETCH_DISTANCE >= 0)
		{
			char	   *ahead = (char *) direct_tuple(ds, page,
													  first + r - DIRECT_PREFETCH_DISTANCE);

			__builtin_prefetch(ahead);
			__builtin_prefetch(ahead + 64);
		}

		if (unlikely((tup->t_infomask & HEAP_HASNULL) != 0 ||
					 HeapTupleHeaderGetNatts(tup) < ds->max_attno))
		{
			direct_deform_tuple(ds, tup, r);
			continue;
		}
		data = (char *) tup + tup->t_hoff;
		for (step = steps; step < steps_end; step++)
		{
			if (step->attlen > 0)
			{
				const DirectFetch *f = &fetches[step->first_fetch];
				const DirectFetch *fend = f + step->nfetch;
				char	   *run;

				off = TYPEALIGN(step->alignby, off);
				run = data + off;
				for (; f < fend; f++)
					f->values[r] = fetch_att(run + f->reloff, f->byval, f->attlen);
				off += step->runlen;
			}
			else if (step->attlen == -1)
			{
				char	   *p;

				/* att_align_pointer: a 1-byte header is never padded */
				if (!VARATT_NOT_PAD_BYTE(data + off))
					off = TYPEALIGN(step->alignby, off);
				p = data + off;
				if (step->values != NULL)
					step->values[r] = PointerGetDatum(p);
				off += VARSIZE_ANY(p);
			}
			else
			{
				char	   *p;

				off = TYPEALIGN(step->alignby, off);
				p = data + off;
				if (step->values != NULL)
					step->values[r] = PointerGetDatum(p);
				off += strlen(p) + 1;
			}
		}
	}
	for (r = 0; r < ds->noutputs; r++)
		ds->input[r].hasnull =
			ds->deformed_hasnull[ds->columns[ds->output_attnos[r] - 1].dest];
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
 * Append the filtered scan's next rows to `batch`, one at a time through the
 * Seq Scan's scan slot, until the batch is full or the table is read; true
 * at the end of the table.
 */
static bool
direct_fill_filtered(GpuAggDirectScan *ds, HeapScanDesc hscan,
					 GpuAggBatchBuilder *builder, GaBatch *batch)
{
	Instrumentation *instr = ds->scan->ss.ps.instrument;
	TupleTableSlot *scanslot = ds->scan->ss.ss_ScanTupleSlot;
	TupleTableSlot *row = ds->row;

	if (ds->row_held)
	{
		ds->row_held = false;
		if (!GpuAggBatchAppend(builder, batch, row))
			ds->row_held = true;	/* an empty batch: rejected with an error */
	}
	while (!ds->row_held && batch->nrows < batch->capacity)
	{
		Page		page;
		OffsetNumber item;
		int			c;

		if (!direct_next_page(ds, hscan))
			return true;
		page = BufferGetPage(ds->buffer);
		item = ds->visible[ds->next_tuple];
		ds->next_tuple++;
		if (!direct_filter(ds, (HeapTupleHeader) PageGetItem(page, PageGetItemId(page, item)),
						   item))
			continue;
		if (instr)
			instr->tuplecount += 1; /* rows the Seq Scan returned */

		/* the slot stays stored (GpuAggDirectScanFill): its values change */
		for (c = 0; c < ds->noutputs; c++)
		{
			AttrNumber	attno = ds->output_attnos[c];

			row->tts_values[c] = scanslot->tts_values[attno - 1];
			row->tts_isnull[c] = scanslot->tts_isnull[attno - 1];
		}
		if (ds->probe_keys != NULL &&
			!GpuAggProbeKeysRow(ds->probe_keys, row->tts_values, row->tts_isnull))
			continue;
		if (!GpuAggBatchAppend(builder, batch, row))
			ds->row_held = true;
	}
	return false;
}

/*
 * Append the deformed run's rows from run_next on, column by column or a
 * row at a time; returns whether all of them went in (else the batch is
 * full and run_next says where the next batch starts).
 */
static bool
direct_append_run(GpuAggDirectScan *ds, GpuAggBatchBuilder *builder, GaBatch *batch,
				  bool columnar)
{
	int			first = ds->run_next;
	int			c;

	if (columnar)
	{
		const GpuAggInputColumn *input = ds->input;

		if (first > 0)
		{
			/* the run's rest, as columns of its own */
			for (c = 0; c < ds->noutputs; c++)
			{
				ds->run_input[c].values = ds->input[c].values + first;
				ds->run_input[c].isnull = ds->input[c].isnull + first;
				ds->run_input[c].hasnull = ds->input[c].hasnull;
			}
			input = ds->run_input;
		}
		ds->run_next += GpuAggBatchAppendColumns(builder, batch, ds->run_end - first, input);
	}
	else
	{
		TupleTableSlot *row = ds->row;

		for (; ds->run_next < ds->run_end; ds->run_next++)
		{
			for (c = 0; c < ds->noutputs; c++)
			{
				row->tts_values[c] = ds->input[c].values[ds->run_next];
				row->tts_isnull[c] = ds->input[c].isnull[ds->run_next];
			}
			if (!GpuAggBatchAppend(builder, batch, row))
				break;
		}
	}
	return ds->run_next == ds->run_end;
}

/*
 * Append the scan's next rows to `batch` until it is full or the table is
 * read; returns true at the end of the table.  With no filter, the rows of
 * a page are deformed column by column and appended as one run.
 */
bool
GpuAggDirectScanFill(GpuAggDirectScan *ds, GpuAggBatchBuilder *builder, GaBatch *batch)
{
	Instrumentation *instr = ds->scan->ss.ps.instrument;
	bool		columnar = GpuAggBatchBuilderColumnar(builder);
	HeapScanDesc hscan;

	/* what ExecProcNode would do first: changed parameters mean a rescan */
	if (ds->scan->ss.ps.chgParam != NULL)
	{
		ExecReScan(&ds->scan->ss.ps);
		GpuAggDirectScanReset(ds);
	}
	hscan = direct_scan_desc(ds);
	/* a stored virtual tuple whose values are overwritten per row */
	if (TTS_EMPTY(ds->row))
		ExecStoreVirtualTuple(ds->row);
	if (ds->qual != NULL)
		return direct_fill_filtered(ds, hscan, builder, batch);
	if (ds->pages != NULL && batch->page_capacity > 0 && ds->probe_keys == NULL &&
		ds->run_next >= ds->run_end && ds->next_tuple >= ds->ntuples)
		return direct_fill_pages(ds, hscan, batch);

	if (ds->run_next < ds->run_end && !direct_append_run(ds, builder, batch, columnar))
		return false;
	while (batch->nrows < batch->capacity)
	{
		int			n;

		if (!direct_next_page(ds, hscan))
			return true;
		n = (int) Min((int64) (ds->ntuples - ds->next_tuple),
					  batch->capacity - batch->nrows);
		direct_deform_run(ds, n);
		ds->next_tuple += n;
		if (instr)
			instr->tuplecount += n; /* rows the Seq Scan returned */
		if (ds->probe_keys != NULL)
			n = direct_filter_run(ds, n);
		ds->run_next = 0;
		ds->run_end = n;
		if (!direct_append_run(ds, builder, batch, columnar))
			return false;
	}
	return false;
}
