/*-------------------------------------------------------------------------
 *
 * batch/page_share.c
 *	  Heap pages that the participants of a parallel scan write straight
 *	  into the leader's current batch, where that batch lies in the GPU
 *	  service's arena.
 *
 * The GPU service's arena is part of PostgreSQL's main shared memory
 * segment, mapped at the same address in every process of the cluster,
 * parallel workers included.  So a worker can copy the page images it
 * reads into the batch the leader's device reads, once, instead of into a
 * message that the leader copies again (batch/message.c): on a GPU the
 * leader's copy of every page, one process for the whole table, is what
 * bounds the parallel page path (docs/design/pages.md).  The device
 * interface is unchanged: the leader submits an ordinary batch whose
 * page area others filled.
 *
 *	leader		opens its batch: publishes the page area (address,
 *				capacities) under a new generation, and wakes the
 *				participants waiting for one;
 *	participant	per page, under its share lock: reserves the batch's next
 *				page and as many rows as the page has visible tuples, with
 *				one compare-and-swap on the reservation word (generation,
 *				closed, pages, rows), copies the image and its description
 *				there and counts the page written; when the batch has no
 *				room left, sends the leader a notice naming the generation
 *				through Gather and waits for the next one;
 *	leader		on a notice of the open generation, or when Gather says
 *				every participant is done, closes the batch (sets the
 *				closed bit: no reservation succeeds after it), waits until
 *				every reserved page is written (a memcpy: microseconds),
 *				and submits it.
 *
 * While a batch is on the device the next one is open (a GPU gives the
 * leader two); a device with one batch (the CPU device) leaves the
 * participants waiting meanwhile.  Nothing here waits without bound: a
 * worker waits on a condition variable in steps of a millisecond, looking
 * each time for a new generation or the end of the run, which the leader
 * announces before it rescans the Gather (whose rescan waits for its
 * workers), and after a few steps packs its next pages into a message of
 * its own instead (hashagg/pack.c), as the exchange's bounded wait does;
 * an error or a cancel in the leader terminates the workers with the
 * parallel query, and the leader's wait for reserved pages checks for
 * interrupts, which raise a worker's error.  A participant never holds
 * a reservation across anything that can fail or wait.  Notices are padded
 * past a quarter of Gather's tuple queue, as the exchange's references are
 * (batch/exchange.c), so that each reaches the leader when sent.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"

#include "batch/batch.h"

#define SHARE_NOTICE_MAGIC 0x4741474e	/* "GAGN" */

/*
 * The reservation word: the generation (15 bits), whether the batch is
 * closed, the pages reserved (16 bits) and the rows reserved (32 bits).
 */
#define SHARE_GEN_SHIFT 49
#define SHARE_GEN_MASK 0x7FFF
#define SHARE_CLOSED (UINT64CONST(1) << 48)
#define SHARE_PAGES_SHIFT 32
#define SHARE_PAGES_MAX 0xFFFF
#define SHARE_ROWS_MAX UINT64CONST(0xFFFFFFFF)

#define WORD_GEN(w) ((uint32) (((w) >> SHARE_GEN_SHIFT) & SHARE_GEN_MASK))
#define WORD_PAGES(w) ((int64) (((w) >> SHARE_PAGES_SHIFT) & SHARE_PAGES_MAX))
#define WORD_ROWS(w) ((int64) ((w) & SHARE_ROWS_MAX))
#define MAKE_WORD(gen, closed, pages, rows) \
	((((uint64) (gen) & SHARE_GEN_MASK) << SHARE_GEN_SHIFT) | ((closed) ? SHARE_CLOSED : 0) | \
	 ((uint64) (pages) << SHARE_PAGES_SHIFT) | (uint64) (rows))

/* Where a generation's batch takes pages. */
typedef struct ShareArea
{
	uint8	   *pages;
	GaPageDesc *page_desc;
	int64		page_capacity;
	int64		capacity;		/* rows */
} ShareArea;

/* In the parallel query's dynamic shared memory (hashagg/pack.c). */
struct GpuAggPageShare
{
	pg_atomic_uint64 word;
	pg_atomic_uint32 written;	/* pages of the open batch copied in */
	pg_atomic_uint32 stop;		/* the run is over: waiting ends */
	pg_atomic_uint32 run_opened;	/* a batch was opened in this run */
	ConditionVariable opened;	/* a batch opened, or the run is over */
	/*
	 * Generation g's area is area[g % 2]: the leader writes the next one's
	 * while the open one is read, and a reservation reads its area after
	 * its compare-and-swap succeeded (the generation cannot end before
	 * the reserved page is written).
	 */
	ShareArea	area[2];
	int64		base_pages;		/* the open batch's pages before it opened */
	/* for EXPLAIN ANALYZE, all runs */
	pg_atomic_uint64 in_place;	/* pages written in place */
	pg_atomic_uint64 batches;	/* batches opened */
	pg_atomic_uint64 waits;		/* participants' waits for an open batch */
};

/* A notice through Gather: a participant found the batch full, or went on. */
typedef struct ShareNotice
{
	uint32		magic;
	uint32		gen;
	int32		full;
} ShareNotice;

/* Shared memory a page share takes. */
Size
GpuAggPageShareSize(void)
{
	return MAXALIGN(sizeof(GpuAggPageShare));
}

/* Lay out a page share at `place`, no batch open (the leader, at DSM setup). */
GpuAggPageShare *
GpuAggPageShareInit(void *place)
{
	GpuAggPageShare *share = (GpuAggPageShare *) place;

	memset(share, 0, sizeof(GpuAggPageShare));
	pg_atomic_init_u64(&share->word, MAKE_WORD(0, true, 0, 0));
	pg_atomic_init_u32(&share->written, 0);
	pg_atomic_init_u32(&share->stop, 0);
	pg_atomic_init_u32(&share->run_opened, 0);
	ConditionVariableInit(&share->opened);
	pg_atomic_init_u64(&share->in_place, 0);
	pg_atomic_init_u64(&share->batches, 0);
	pg_atomic_init_u64(&share->waits, 0);
	return share;
}

/*
 * Make a page share ready for a new run (a rescan: the last run's workers
 * are gone): no batch open, nothing stopped; the generation goes on, so
 * that the last run's notices are stale.
 */
void
GpuAggPageShareReset(GpuAggPageShare *share)
{
	uint64		word = pg_atomic_read_u64(&share->word);

	pg_atomic_write_u64(&share->word, MAKE_WORD(WORD_GEN(word) + 1, true, 0, 0));
	pg_atomic_write_u32(&share->written, 0);
	pg_atomic_write_u32(&share->stop, 0);
	pg_atomic_write_u32(&share->run_opened, 0);
}

/* Whether batches of these pages and rows fit the reservation word. */
bool
GpuAggPageShareFits(int64 page_capacity, int64 capacity)
{
	return page_capacity > 0 && page_capacity <= SHARE_PAGES_MAX &&
		capacity > 0 && (uint64) capacity <= SHARE_ROWS_MAX;
}

/*
 * Leader: open `batch` (whose page area the participants can reach) to
 * the participants, after the pages and rows it
 * already holds, and wake those waiting for it.
 */
void
GpuAggPageShareOpen(GpuAggPageShare *share, GaBatch *batch)
{
	uint32		gen = WORD_GEN(pg_atomic_read_u64(&share->word)) + 1;
	ShareArea  *area = &share->area[gen % 2];

	if (batch->pages == NULL || !GpuAggPageShareFits(batch->page_capacity, batch->capacity))
		elog(ERROR, "gpuagg: a batch of " INT64_FORMAT " pages and " INT64_FORMAT " rows cannot take pages in place",
			 batch->page_capacity, batch->capacity);
	area->pages = batch->pages;
	area->page_desc = batch->page_desc;
	area->page_capacity = batch->page_capacity;
	area->capacity = batch->capacity;
	share->base_pages = batch->npages;
	pg_atomic_write_u32(&share->written, 0);
	pg_write_barrier();
	pg_atomic_write_u64(&share->word, MAKE_WORD(gen, false, batch->npages, batch->nrows));
	pg_atomic_write_u32(&share->run_opened, 1);
	pg_atomic_fetch_add_u64(&share->batches, 1);
	ConditionVariableBroadcast(&share->opened);
}

/* Whether generation gen's batch is the open one. */
bool
GpuAggPageShareIsOpen(GpuAggPageShare *share, uint32 gen)
{
	uint64		word = pg_atomic_read_u64(&share->word);

	return !(word & SHARE_CLOSED) && WORD_GEN(word) == (gen & SHARE_GEN_MASK);
}

/*
 * Leader: close the open batch, wait until every page reserved in it is
 * written, and set its pages and rows: it is ready to submit.
 */
void
GpuAggPageShareClose(GpuAggPageShare *share, GaBatch *batch)
{
	uint64		word = pg_atomic_read_u64(&share->word);
	int			spins = 0;
	int64		reserved;

	while (!(word & SHARE_CLOSED) &&
		   !pg_atomic_compare_exchange_u64(&share->word, &word, word | SHARE_CLOSED))
		;
	reserved = WORD_PAGES(word) - share->base_pages;
	/* a participant writes its reserved page at once, under the page's lock */
	while ((int64) pg_atomic_read_u32(&share->written) < reserved)
	{
		if (++spins < 1000)
			pg_spin_delay();
		else
		{
			CHECK_FOR_INTERRUPTS();
			pg_usleep(50);
		}
	}
	pg_read_barrier();
	batch->npages = WORD_PAGES(word);
	batch->nrows = WORD_ROWS(word);
}

/*
 * Leader: end the run (it fails or starts over): participants waiting for
 * a batch end their scans instead.
 */
void
GpuAggPageShareStop(GpuAggPageShare *share)
{
	pg_atomic_write_u32(&share->stop, 1);
	ConditionVariableBroadcast(&share->opened);
}

/*
 * Participant: reserve the open batch's next page and n rows for a page of
 * n visible tuples (n > 0).  True with *image, *desc and *first_row where
 * to write it (then GpuAggPageShareWritten); false with *gen naming the
 * batch when it is closed or has no room (a page that does not fit even an
 * empty batch is an error).
 */
bool
GpuAggPageShareReserve(GpuAggPageShare *share, int n, uint32 *gen, uint8 **image,
					   GaPageDesc **desc, uint32 *first_row)
{
	uint64		word = pg_atomic_read_u64(&share->word);

	for (;;)
	{
		const ShareArea *area = &share->area[WORD_GEN(word) % 2];
		int64		pages = WORD_PAGES(word);
		int64		rows = WORD_ROWS(word);

		*gen = WORD_GEN(word);
		if (word & SHARE_CLOSED)
			return false;
		if (pages + 1 > area->page_capacity || rows + n > area->capacity)
		{
			/* the area read may be a later generation's: then the word moved */
			if (pages == 0 && rows == 0 && pg_atomic_read_u64(&share->word) == word)
				elog(ERROR, "gpuagg: a page holds more tuples than a batch");
			return false;
		}
		if (pg_atomic_compare_exchange_u64(&share->word, &word,
										   word + ((uint64) 1 << SHARE_PAGES_SHIFT) + (uint64) n))
			break;
	}
	/* the generation stays open until this page is written */
	{
		const ShareArea *area = &share->area[WORD_GEN(word) % 2];

		*image = area->pages + WORD_PAGES(word) * (Size) BLCKSZ;
		*desc = &area->page_desc[WORD_PAGES(word)];
		*first_row = (uint32) WORD_ROWS(word);
	}
	return true;
}

/* Participant: the page it reserved is written. */
void
GpuAggPageShareWritten(GpuAggPageShare *share)
{
	pg_atomic_fetch_add_u64(&share->in_place, 1);
	pg_atomic_fetch_add_u32(&share->written, 1);
}

/*
 * Participant (a worker): wait until generation gen's batch is no longer
 * the last opened, in steps of a millisecond, at most max_ms of them
 * (*timed_out then says so) once the run's first batch opened (which the
 * leader opens on the first notice it reads); false when the run is over
 * instead.
 */
bool
GpuAggPageShareWait(GpuAggPageShare *share, uint32 gen, int max_ms, bool *timed_out)
{
	bool		waited = false;
	int			steps = 0;

	*timed_out = false;
	for (;;)
	{
		uint64		word = pg_atomic_read_u64(&share->word);

		if (pg_atomic_read_u32(&share->stop) != 0)
			break;
		if (WORD_GEN(word) != (gen & SHARE_GEN_MASK))
			break;
		if (!waited)
		{
			pg_atomic_fetch_add_u64(&share->waits, 1);
			ConditionVariablePrepareToSleep(&share->opened);
			waited = true;
			continue;			/* look again, now that a wakeup is caught */
		}
		if (steps >= max_ms && pg_atomic_read_u32(&share->run_opened) != 0)
		{
			*timed_out = true;
			break;
		}
		if (ConditionVariableTimedSleep(&share->opened, 1, PG_WAIT_EXTENSION))
			steps++;
	}
	if (waited)
		ConditionVariableCancelSleep();
	return pg_atomic_read_u32(&share->stop) == 0;
}

/*
 * What the participants did so far, all runs; *in_place is taken (reset),
 * the others read.
 */
void
GpuAggPageShareCounts(GpuAggPageShare *share, int64 *in_place, int64 *batches, int64 *waits)
{
	*in_place = (int64) pg_atomic_exchange_u64(&share->in_place, 0);
	*batches = (int64) pg_atomic_read_u64(&share->batches);
	*waits = (int64) pg_atomic_read_u64(&share->waits);
}

/*
 * A notice for the leader in buf (reset first): a participant found
 * generation gen's batch without room (full), or only went on with its
 * scan; padded to reach the leader at once when a worker sends it.
 */
bytea *
GpuAggPageShareNotice(uint32 gen, bool full, bool pad, StringInfo buf)
{
	ShareNotice notice;

	notice.magic = SHARE_NOTICE_MAGIC;
	notice.gen = gen;
	notice.full = full;
	resetStringInfo(buf);
	appendStringInfoSpaces(buf, VARHDRSZ);
	appendBinaryStringInfo(buf, (const char *) &notice, sizeof(notice));
	if (pad)
		appendStringInfoSpaces(buf, GPUAGG_FLUSHED_MESSAGE_BYTES + 8 - buf->len);
	SET_VARSIZE(buf->data, buf->len);
	return (bytea *) buf->data;
}

/* Whether a message is a notice; if so, its generation and whether full. */
bool
GpuAggPageShareIsNotice(bytea *message, uint32 *gen, bool *full)
{
	ShareNotice notice;

	if (VARSIZE_ANY_EXHDR(message) < sizeof(notice))
		return false;
	memcpy(&notice, VARDATA_ANY(message), sizeof(notice));
	if (notice.magic != SHARE_NOTICE_MAGIC)
		return false;
	*gen = notice.gen;
	*full = notice.full != 0;
	return true;
}
