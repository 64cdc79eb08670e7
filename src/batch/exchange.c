/*-------------------------------------------------------------------------
 *
 * batch/exchange.c
 *	  The shared-memory exchange through which GpuAggPack workers hand
 *	  their batch messages to the leader's GpuHashAgg.
 *
 * Gather's tuple queues are 64 kB rings: a batch message of a megabyte
 * crosses one in sixteen pieces, each a latch round trip, and is copied
 * twice on the leader (reassembled, then appended), so that with many
 * workers the leader takes longer to receive the batches than the workers
 * take to pack them (docs/benchmarks.md).  So the messages travel through
 * slots in the parallel query's dynamic shared memory instead:
 *
 *	worker	builds a message, claims a free slot (waiting on a condition
 *			variable while none is), copies the message in, marks the
 *			slot ready and sends through Gather only a small reference
 *			message naming the slot;
 *	leader	reads the message in place and frees the slot.
 *
 * Gather still launches the workers, carries parameters and rescans, and
 * tells the leader when every worker is done.  A message larger than a
 * slot goes through the tuple queue, and so do the leader's own messages
 * when it packs (the leader must never wait for a slot: only it frees
 * them).
 *
 * Two details keep it from deadlocking.  In PostgreSQL 15 and later a tuple
 * queue makes what a worker sent visible to the leader only once a quarter of
 * the ring is pending, so a tiny reference could sit in the worker while the
 * worker waits for the very slot the leader would free on reading it:
 * references are padded past a quarter of the 64 kB ring, which flushes each
 * one.  And a worker waits for a free slot at most EXCHANGE_WAIT_MS at a
 * time, twice, then sends its message through the queue instead.  GpuAggPack
 * is therefore parallel-aware: its DSM hooks (hashagg/pack.c) size, place and
 * reset the exchange.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/dsm_impl.h"

#include "batch/batch.h"
#include "compat.h"

#define EXCHANGE_REF_MAGIC 0x4741475a	/* "GAGZ" */
#define EXCHANGE_REF_BYTES GPUAGG_FLUSHED_MESSAGE_BYTES
#define EXCHANGE_WAIT_MS 10

enum
{
	SLOT_FREE = 0,
	SLOT_FILLING = 1,
	SLOT_READY = 2
};

/* In the DSM segment: the header, the slot states, then the slots. */
typedef struct ExchangeShared
{
	int32		nslots;
	Size		slot_bytes;
	ConditionVariable slot_freed;
	/* what the workers did, for EXPLAIN ANALYZE */
	pg_atomic_uint64 through_slots;	/* messages put in a slot */
	pg_atomic_uint64 through_queue;	/* messages sent in full instead */
	pg_atomic_uint64 waits;		/* puts that found no free slot at first */
	pg_atomic_uint32 state[FLEXIBLE_ARRAY_MEMBER];
} ExchangeShared;

/* A reference message: which slot holds the real one. */
typedef struct ExchangeRef
{
	uint32		magic;
	int32		slot;
} ExchangeRef;

struct GpuAggExchange
{
	ExchangeShared *shared;
	char	   *slots;			/* slot i at slots + i * slot_bytes */
	StringInfoData ref;			/* the reference message being sent */
	int32		next_claim;		/* where this process looks first */
};

/* Bytes of the header and slot states, before the slots (aligned). */
static Size
exchange_header_bytes(int nslots)
{
	return MAXALIGN(offsetof(ExchangeShared, state) + sizeof(pg_atomic_uint32) * nslots);
}

/* The most shared memory an exchange takes, whatever the host. */
#define EXCHANGE_MAX_BYTES ((Size) 512 * 1024 * 1024)

/*
 * The most shared memory an exchange may take here: EXCHANGE_MAX_BYTES, but
 * with POSIX shared memory no more than a quarter of what /dev/shm has free
 * (containers often give it 64 MB, and a parallel query whose segment does
 * not fit fails instead of running without workers).
 */
Size
GpuAggExchangeMaxBytes(void)
{
	struct statvfs fs;
	Size		limit = EXCHANGE_MAX_BYTES;

	if (dynamic_shared_memory_type == DSM_IMPL_POSIX && statvfs("/dev/shm", &fs) == 0)
	{
		double		quarter = (double) fs.f_bavail * (double) fs.f_frsize / 4.0;

		if (quarter < (double) limit)
			limit = (Size) quarter;
	}
	return limit;
}

/* Shared memory an exchange of nslots slots of slot_bytes each needs. */
Size
GpuAggExchangeSize(int nslots, Size slot_bytes)
{
	return add_size(exchange_header_bytes(nslots), mul_size(nslots, MAXALIGN(slot_bytes)));
}

/* Attach this process to an exchange in shared memory at `place`. */
static GpuAggExchange *
exchange_attach(void *place, MemoryContext cxt)
{
	GpuAggExchange *x = MemoryContextAllocZero(cxt, sizeof(GpuAggExchange));
	MemoryContext old = MemoryContextSwitchTo(cxt);

	x->shared = (ExchangeShared *) place;
	x->slots = (char *) place + exchange_header_bytes(x->shared->nslots);
	initStringInfo(&x->ref);
	MemoryContextSwitchTo(old);
	x->next_claim = MyProcPid % Max(x->shared->nslots, 1);
	return x;
}

/* Lay out an exchange at `place` (the leader, at DSM setup) and attach. */
GpuAggExchange *
GpuAggExchangeCreate(void *place, int nslots, Size slot_bytes, MemoryContext cxt)
{
	ExchangeShared *shared = (ExchangeShared *) place;
	int			i;

	shared->nslots = nslots;
	shared->slot_bytes = MAXALIGN(slot_bytes);
	ConditionVariableInit(&shared->slot_freed);
	pg_atomic_init_u64(&shared->through_slots, 0);
	pg_atomic_init_u64(&shared->through_queue, 0);
	pg_atomic_init_u64(&shared->waits, 0);
	for (i = 0; i < nslots; i++)
		pg_atomic_init_u32(&shared->state[i], SLOT_FREE);
	return exchange_attach(place, cxt);
}

/* Attach a worker to the leader's exchange. */
GpuAggExchange *
GpuAggExchangeAttach(void *place, MemoryContext cxt)
{
	return exchange_attach(place, cxt);
}

/* Free every slot (a rescan: the workers of the last run are gone). */
void
GpuAggExchangeReset(GpuAggExchange *x)
{
	int			i;

	for (i = 0; i < x->shared->nslots; i++)
		pg_atomic_write_u32(&x->shared->state[i], SLOT_FREE);
}

/* What the workers have done so far (counters kept across rescans). */
void
GpuAggExchangeCounts(GpuAggExchange *x, GpuAggExchangeStats *stats)
{
	stats->through_slots = pg_atomic_read_u64(&x->shared->through_slots);
	stats->through_queue = pg_atomic_read_u64(&x->shared->through_queue);
	stats->waits = pg_atomic_read_u64(&x->shared->waits);
	stats->nslots = x->shared->nslots;
	stats->slot_bytes = x->shared->slot_bytes;
}

/* Claim a free slot, or return -1 when none is free now. */
static int32
exchange_claim(GpuAggExchange *x)
{
	int32		n = x->shared->nslots;
	int32		i;

	for (i = 0; i < n; i++)
	{
		int32		s = (x->next_claim + i) % n;
		uint32		expected = SLOT_FREE;

		if (pg_atomic_compare_exchange_u32(&x->shared->state[s], &expected, SLOT_FILLING))
		{
			x->next_claim = (s + 1) % n;
			return s;
		}
	}
	return -1;
}

/*
 * A worker's message into a slot: waits for a free slot (see the file
 * header), copies the message there and returns the reference message to
 * send instead (valid until the next call), or NULL when the message is
 * larger than a slot or no slot came free (send the message itself).
 */
bytea *
GpuAggExchangePut(GpuAggExchange *x, bytea *message)
{
	Size		len = VARSIZE(message);
	ExchangeRef ref;
	int32		slot;

	if (len > x->shared->slot_bytes || x->shared->nslots == 0)
	{
		pg_atomic_fetch_add_u64(&x->shared->through_queue, 1);
		return NULL;
	}
	slot = exchange_claim(x);
	if (slot < 0)
	{
		int			timeouts = 0;

		pg_atomic_fetch_add_u64(&x->shared->waits, 1);
		ConditionVariablePrepareToSleep(&x->shared->slot_freed);
		while ((slot = exchange_claim(x)) < 0 && timeouts < 2)
		{
			if (ConditionVariableTimedSleep(&x->shared->slot_freed, EXCHANGE_WAIT_MS,
											PG_WAIT_EXTENSION))
				timeouts++;
		}
		ConditionVariableCancelSleep();
		if (slot < 0)
		{
			pg_atomic_fetch_add_u64(&x->shared->through_queue, 1);
			return NULL;
		}
	}
	pg_atomic_fetch_add_u64(&x->shared->through_slots, 1);
	memcpy(x->slots + (Size) slot * x->shared->slot_bytes, message, len);
	pg_write_barrier();
	pg_atomic_write_u32(&x->shared->state[slot], SLOT_READY);

	ref.magic = EXCHANGE_REF_MAGIC;
	ref.slot = slot;
	resetStringInfo(&x->ref);
	appendStringInfoSpaces(&x->ref, VARHDRSZ);
	appendBinaryStringInfo(&x->ref, (const char *) &ref, sizeof(ref));
	appendStringInfoSpaces(&x->ref, EXCHANGE_REF_BYTES - x->ref.len);
	SET_VARSIZE(x->ref.data, x->ref.len);
	return (bytea *) x->ref.data;
}

/* Whether a message received through Gather is a reference to a slot. */
bool
GpuAggExchangeIsRef(bytea *message)
{
	ExchangeRef ref;

	if (VARSIZE_ANY(message) != EXCHANGE_REF_BYTES)
		return false;
	memcpy(&ref, VARDATA_ANY(message), sizeof(ref));
	return ref.magic == EXCHANGE_REF_MAGIC;
}

/*
 * The message a reference names, read in place; *slot is what to release
 * once it has been appended.
 */
bytea *
GpuAggExchangeGet(GpuAggExchange *x, bytea *ref_message, int32 *slot)
{
	ExchangeRef ref;

	if (x == NULL)
		elog(ERROR, "gpuagg: a batch message names a slot but there is no exchange");
	memcpy(&ref, VARDATA_ANY(ref_message), sizeof(ref));
	if (ref.slot < 0 || ref.slot >= x->shared->nslots ||
		pg_atomic_read_u32(&x->shared->state[ref.slot]) != SLOT_READY)
		elog(ERROR, "gpuagg: batch message slot %d is not ready", ref.slot);
	pg_read_barrier();
	*slot = ref.slot;
	return (bytea *) (x->slots + (Size) ref.slot * x->shared->slot_bytes);
}

/* Free a slot the leader has read, and wake a worker waiting for one. */
void
GpuAggExchangeRelease(GpuAggExchange *x, int32 slot)
{
	pg_atomic_write_u32(&x->shared->state[slot], SLOT_FREE);
	ConditionVariableSignal(&x->shared->slot_freed);
}
