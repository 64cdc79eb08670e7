/*-------------------------------------------------------------------------
 *
 * service_admit.c
 *	  Admission in the GPU service, on the loopback service that
 *	  conformance.c started: with a memory budget on its CPU device that
 *	  holds one aggregation but not two, a second create waits (parked,
 *	  holding no request thread) and runs once the first is destroyed;
 *	  three waiters run in the order they came, and a younger create that
 *	  would fit the budget does not overtake them; a waiter whose wait is
 *	  over fails with GA_ERR_OUT_OF_MEMORY, counted as out of memory, its
 *	  wait counted as queue time; a waiter whose wait callback says stop
 *	  fails with GA_ERR_CANCELLED at once and leaves its slot usable; a
 *	  create larger than the budget fails at once; the device's memory in
 *	  use and budget are published; and a full arena parks a create as
 *	  the budget does, until a staging buffer is given back.
 *
 * Slots 1 to 3 are the waiters', 5 the holder's, 6 the younger create's;
 * every check destroys what it made.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "service/service_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rows of a batch of the big aggregation: about 400 kB of the arena. */
#define ADMIT_ROWS 100000

/* A budget that holds one big aggregation and a small one, not two big. */
#define ADMIT_BUDGET 600000

/* How long waiters wait, and the short wait that runs out. */
#define ADMIT_WAIT_MS 10000
#define ADMIT_SHORT_WAIT_MS 300

/* How long to wait for the service to get somewhere, in milliseconds. */
#define ADMIT_PATIENCE_MS 10000

#define HOLDER_SLOT 5
#define YOUNG_SLOT 6

/* One aggregation's request: an int32 key over batches of rows rows, COUNT_ROWS. */
typedef struct AdmitRequest
{
	GaAggRequest req;
	GaValueType type;
	int			keycol;
	GaAggSpec	spec;
} AdmitRequest;

/* A client thread that creates an aggregation and holds it until released. */
typedef struct Waiter
{
	GaService  *service;
	int			slot;
	int			wait_ms;
	AdmitRequest request;
	int			cancel;			/* its wait callback says stop; atomic */
	int			release;		/* destroy the object; atomic */
	int			order;			/* when the create returned, from 1; atomic */
	GaAgg	   *agg;
	GaStatus	st;
	double		waited_ms;		/* the create's time */
	double		queue_ms;		/* the object's queue time after the create */
	pthread_t	thread;
} Waiter;

/* Creates of waiters that returned so far. */
static int	admit_returned;

/* Sleep one millisecond. */
static void
admit_sleep(void)
{
	struct timespec pause = {0, 1000000L};

	nanosleep(&pause, NULL);
}

/* Fill the request of an aggregation of batches of rows rows. */
static void
admit_request(AdmitRequest *r, int64_t rows)
{
	memset(r, 0, sizeof(*r));
	r->type = GA_TYPE_INT32;
	r->spec.op = GA_AGG_COUNT_ROWS;
	r->spec.column = -1;
	r->spec.column2 = -1;
	r->req.ncolumns = 1;
	r->req.column_types = &r->type;
	r->req.nkeys = 1;
	r->req.key_columns = &r->keycol;
	r->req.naggs = 1;
	r->req.aggs = &r->spec;
	r->req.batch_rows = rows;
	r->req.estimated_groups = 10;
}

/* The waiter's wait callback: whether the main thread asked it to stop. */
static int
waiter_wait(void *arg)
{
	Waiter	   *w = arg;

	return SVC_LOAD(&w->cancel) != 0;
}

/* The waiter's thread: create, note when, hold until released, destroy. */
static void *
waiter_run(void *arg)
{
	Waiter	   *w = arg;
	GaDevice   *dev = ga_service_open(w->service, w->slot, GA_DEVICE_CPU, 0, &w->st);
	double		t0 = now_ms();

	if (dev != NULL)
	{
		ga_service_set_wait_ms(w->wait_ms);
		ga_service_set_wait_callback(waiter_wait, w);
		w->agg = ga_agg_create(dev, &w->request.req, &w->st);
	}
	w->waited_ms = now_ms() - t0;
	if (w->agg != NULL)
	{
		GaAggStats	stats;

		ga_agg_get_stats(w->agg, &stats);
		w->queue_ms = stats.queue_ms;
	}
	SVC_STORE(&w->order, __atomic_add_fetch(&admit_returned, 1, __ATOMIC_SEQ_CST));
	while (!SVC_LOAD(&w->release))
		admit_sleep();
	ga_agg_destroy(w->agg);
	return NULL;
}

/* Start a waiter on slot with a request of rows rows; 0 when it cannot. */
static int
waiter_start(Waiter *w, GaService *service, int slot, int wait_ms, int64_t rows, int release)
{
	memset(w, 0, sizeof(*w));
	w->service = service;
	w->slot = slot;
	w->wait_ms = wait_ms;
	w->release = release;
	admit_request(&w->request, rows);
	return pthread_create(&w->thread, NULL, waiter_run, w) == 0;
}

/* Wait until *counter reaches n; 0 after ADMIT_PATIENCE_MS. */
static int
wait_for(int *counter, int n)
{
	int			waited;

	for (waited = 0; waited < ADMIT_PATIENCE_MS; waited++)
	{
		if (SVC_LOAD(counter) >= n)
			return 1;
		admit_sleep();
	}
	return 0;
}

/* Wait until exactly n requests are parked; 0 after ADMIT_PATIENCE_MS. */
static int
wait_parked(GaService *service, int n)
{
	int			waited;

	for (waited = 0; waited < ADMIT_PATIENCE_MS; waited++)
	{
		if (SVC_LOAD(&service->parked) == n)
			return 1;
		admit_sleep();
	}
	return 0;
}

/* The CPU device's statistics (the first device the service runs). */
static GaServiceDeviceStats
cpu_stats(GaService *service)
{
	GaServiceDeviceStats stats[GA_MAX_GPUS + 1];

	memset(stats, 0, sizeof(stats));
	(void) ga_service_stats(service, stats, GA_MAX_GPUS + 1);
	return stats[0];
}

/*
 * Create the holder's big aggregation on its slot, waiting for the
 * destroys of an earlier check to give the memory back; NULL reported.
 */
static GaAgg *
holder_create(GaService *service, AdmitRequest *r, RunReport *rr, const char *what)
{
	GaStatus	st;
	GaDevice   *dev = ga_service_open(service, HOLDER_SLOT, GA_DEVICE_CPU, 0, &st);
	GaAgg	   *agg;

	admit_request(r, ADMIT_ROWS);
	ga_service_set_wait_ms(ADMIT_WAIT_MS);
	agg = dev != NULL ? ga_agg_create(dev, &r->req, &st) : NULL;
	ga_service_set_wait_ms(0);
	if (agg == NULL)
		report(rr, "%s: the first aggregation was refused: %s", what, st.message);
	return agg;
}

/*
 * Three waiters behind a holder: each runs when the one before it is
 * destroyed, in the order they came; a younger create that fits the
 * budget's remaining room is refused (it would overtake them); the
 * device's memory in use and budget are published.
 */
static void
check_fifo(GaService *service, RunReport *rr)
{
	AdmitRequest held;
	AdmitRequest small;
	GaAgg	   *agg = holder_create(service, &held, rr, "fifo");
	Waiter		w[3];
	GaServiceDeviceStats stats = cpu_stats(service);
	GaStatus	st;
	GaDevice   *dev;
	int			started = 0;
	int			i;

	if (agg == NULL)
		return;
	if (stats.memory_budget != ADMIT_BUDGET || stats.memory_used < ADMIT_ROWS * 4 ||
		stats.memory_used > ADMIT_BUDGET)
		report(rr, "fifo: the CPU device shows %lld bytes in use and a budget of %lld, not about %d and %d",
			   (long long) stats.memory_used, (long long) stats.memory_budget,
			   ADMIT_ROWS * 4, ADMIT_BUDGET);
	SVC_STORE(&admit_returned, 0);
	for (i = 0; i < 3; i++)
	{
		if (!waiter_start(&w[i], service, 1 + i, ADMIT_WAIT_MS, ADMIT_ROWS, 0))
		{
			report(rr, "fifo: could not start waiter %d", i);
			break;
		}
		started++;
		if (!wait_parked(service, i + 1))
		{
			report(rr, "fifo: waiter %d was not parked (%d parked, its create returned: %d)",
				   i, SVC_LOAD(&service->parked), SVC_LOAD(&w[i].order));
			break;
		}
	}

	/* a younger create that fits the room left may not overtake them */
	admit_request(&small, 1000);
	dev = ga_service_open(service, YOUNG_SLOT, GA_DEVICE_CPU, 0, &st);
	if (started == 3 && dev != NULL)
	{
		GaAgg	   *young = ga_agg_create(dev, &small.req, &st);

		if (young != NULL || st.code != GA_ERR_OUT_OF_MEMORY)
			report(rr, "fifo: a younger create overtook the waiters (code %d: %s)",
				   st.code, st.message);
		ga_agg_destroy(young);
	}

	ga_agg_destroy(agg);
	for (i = 0; i < started; i++)
	{
		if (!wait_for(&w[i].order, 1))
			report(rr, "fifo: waiter %d did not run after the memory came back", i);
		else if (SVC_LOAD(&w[i].order) != i + 1 || w[i].agg == NULL)
			report(rr, "fifo: waiter %d returned as number %d (code %d: %s)", i,
				   SVC_LOAD(&w[i].order), w[i].st.code, w[i].st.message);
		else if (w[i].queue_ms <= 0)
			report(rr, "fifo: waiter %d shows no queue time", i);
		if (i + 1 < started && SVC_LOAD(&w[i + 1].order) != 0)
			report(rr, "fifo: waiter %d ran while waiter %d held the memory", i + 1, i);
		SVC_STORE(&w[i].release, 1);
	}
	for (i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
}

/*
 * A waiter whose wait runs out fails with GA_ERR_OUT_OF_MEMORY, and the
 * device counts it as out of memory, its wait as queue time.
 */
static void
check_timeout(GaService *service, RunReport *rr)
{
	AdmitRequest held;
	GaAgg	   *agg = holder_create(service, &held, rr, "timeout");
	GaServiceDeviceStats before = cpu_stats(service);
	GaServiceDeviceStats after;
	Waiter		w;

	if (agg == NULL)
		return;
	SVC_STORE(&admit_returned, 0);
	if (!waiter_start(&w, service, 1, ADMIT_SHORT_WAIT_MS, ADMIT_ROWS, 1))
	{
		report(rr, "timeout: could not start the waiter");
		ga_agg_destroy(agg);
		return;
	}
	pthread_join(w.thread, NULL);
	after = cpu_stats(service);
	if (w.agg != NULL || w.st.code != GA_ERR_OUT_OF_MEMORY ||
		strstr(w.st.message, "gpuagg.service_wait") == NULL)
		report(rr, "timeout: the create gave code %d (%s), not GA_ERR_OUT_OF_MEMORY",
			   w.st.code, w.st.message);
	if (w.waited_ms < ADMIT_SHORT_WAIT_MS - 20 || w.waited_ms > ADMIT_PATIENCE_MS)
		report(rr, "timeout: the create waited %.0f ms, not %d", w.waited_ms,
			   ADMIT_SHORT_WAIT_MS);
	if (after.out_of_memory < before.out_of_memory + 1)
		report(rr, "timeout: out_of_memory went from %lld to %lld",
			   (long long) before.out_of_memory, (long long) after.out_of_memory);
	if (after.queue_ms < before.queue_ms + ADMIT_SHORT_WAIT_MS - 20)
		report(rr, "timeout: queue time went from %.1f to %.1f ms only", before.queue_ms,
			   after.queue_ms);
	ga_agg_destroy(agg);
}

/*
 * A parked create whose wait callback says stop fails with
 * GA_ERR_CANCELLED at once, and its slot serves the next create.
 */
static void
check_cancel_parked(GaService *service, RunReport *rr)
{
	AdmitRequest held;
	GaAgg	   *agg = holder_create(service, &held, rr, "cancel while parked");
	Waiter		w;
	double		t0;

	if (agg == NULL)
		return;
	SVC_STORE(&admit_returned, 0);
	if (!waiter_start(&w, service, 2, ADMIT_WAIT_MS, ADMIT_ROWS, 1))
	{
		report(rr, "cancel while parked: could not start the waiter");
		ga_agg_destroy(agg);
		return;
	}
	if (!wait_parked(service, 1))
		report(rr, "cancel while parked: the create was not parked");
	t0 = now_ms();
	SVC_STORE(&w.cancel, 1);
	pthread_join(w.thread, NULL);
	if (w.agg != NULL || w.st.code != GA_ERR_CANCELLED)
		report(rr, "cancel while parked: the create gave code %d (%s), not GA_ERR_CANCELLED",
			   w.st.code, w.st.message);
	if (now_ms() - t0 > 2000)
		report(rr, "cancel while parked: the create took %.0f ms to give up", now_ms() - t0);
	if (!wait_parked(service, 0))
		report(rr, "cancel while parked: %d requests stay parked", SVC_LOAD(&service->parked));
	ga_agg_destroy(agg);

	/* the slot serves again */
	if (!waiter_start(&w, service, 2, ADMIT_WAIT_MS, ADMIT_ROWS, 1))
		return;
	pthread_join(w.thread, NULL);
	if (w.agg == NULL)
		report(rr, "cancel while parked: the slot's next create failed: %s", w.st.message);
}

/* A create that needs more than the budget fails at once. */
static void
check_too_large(GaService *service, RunReport *rr)
{
	Waiter		w;

	if (!waiter_start(&w, service, 3, ADMIT_WAIT_MS, 2 * ADMIT_ROWS, 1))
		return;
	pthread_join(w.thread, NULL);
	if (w.agg != NULL || w.st.code != GA_ERR_OUT_OF_MEMORY ||
		strstr(w.st.message, "budget") == NULL)
		report(rr, "too large: the create gave code %d (%s), not GA_ERR_OUT_OF_MEMORY",
			   w.st.code, w.st.message);
	if (w.waited_ms > ADMIT_WAIT_MS / 2)
		report(rr, "too large: the create waited %.0f ms for room it can never have",
			   w.waited_ms);
}

/* Make a raw request of the holder's slot on the CPU device; 1 on success. */
static int
raw_call(GaService *service, SvcOp op, void *buffer, uint64_t bytes, GaStatus *st)
{
	SvcSlot    *slot = &service->slots[HOLDER_SLOT];

	(void) svc_slot_collect(service, slot, NULL, NULL, 60000);
	memset(&slot->args, 0, sizeof(slot->args));
	slot->args.op = op;
	slot->args.device = 0;
	slot->args.buffer = buffer;
	slot->args.buffer_bytes = bytes;
	slot->reply.buffer = NULL;
	return svc_slot_call(service, slot, SVC_LOAD(&service->generation), NULL, NULL, 0, st) == 1;
}

/*
 * No budget, but an arena nearly full of a staging buffer: a create waits
 * until the buffer is given back.
 */
static void
check_arena_full(GaService *service, RunReport *rr)
{
	int64_t		free_bytes = svc_arena_free_bytes();
	GaStatus	st;
	void	   *buffer;
	Waiter		w;

	if (!raw_call(service, SVC_OP_ALLOC, NULL, (uint64_t) (free_bytes - 200000), &st))
	{
		report(rr, "arena full: could not take %lld bytes of the arena: %s",
			   (long long) (free_bytes - 200000), st.message);
		return;
	}
	buffer = service->slots[HOLDER_SLOT].reply.buffer;
	SVC_STORE(&admit_returned, 0);
	if (!waiter_start(&w, service, 1, ADMIT_WAIT_MS, ADMIT_ROWS, 1))
	{
		(void) raw_call(service, SVC_OP_FREE, buffer, 0, &st);
		return;
	}
	if (!wait_parked(service, 1))
		report(rr, "arena full: the create was not parked (it returned: %d)",
			   SVC_LOAD(&w.order));
	if (!raw_call(service, SVC_OP_FREE, buffer, 0, &st))
		report(rr, "arena full: could not give the buffer back: %s", st.message);
	pthread_join(w.thread, NULL);
	if (w.agg == NULL)
		report(rr, "arena full: the create failed after the arena had room again: %s",
			   w.st.message);
}

/* Admission's checks (conformance.h); the service has no object open. */
void
service_admit_checks(GaService *service, RunReport *rr)
{
	ga_service_set_gpu_budget(service, ADMIT_BUDGET);
	check_fifo(service, rr);
	check_timeout(service, rr);
	check_cancel_parked(service, rr);
	check_too_large(service, rr);
	ga_service_set_gpu_budget(service, 0);
	check_arena_full(service, rr);
	ga_service_set_wait_ms(0);
}
