/*-------------------------------------------------------------------------
 *
 * service_api.c
 *	  The GPU service's own checks, on the loopback service that
 *	  conformance.c started (service/loopback.c): a call cancelled while
 *	  every request thread is busy returns GA_ERR_CANCELLED at once and
 *	  leaves its slot usable; a running call the service does not answer
 *	  is left to the service after SVC_GIVE_UP_MS of a cancel, and so is
 *	  the slot of a client that exits; after a lost service process (simulated:
 *	  serving stops, ga_service_lost as a supervisor calls it, serving
 *	  starts again), a call on an object of the lost generation fails
 *	  cleanly, the new service waits until that object is destroyed, and
 *	  then serves new objects; admission (service_admit.c); and queries
 *	  of several clients at once on one device (service_concurrent.c).
 *	  The suites of the other files run through the service's devices
 *	  too; these are what only a service has.
 *
 * Slot 0 is the main thread's (the suites'); these checks use slots 1 and
 * up, one per client thread.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "service/service_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long to wait for the service to reach a state, in milliseconds. */
#define SERVICE_WAIT_MS 10000

/* A client thread whose create is held by the paused service. */
typedef struct Blocker
{
	GaDevice   *dev;
	const GaAggRequest *req;
	GaAgg	   *agg;
	GaStatus	st;
	pthread_t	thread;
} Blocker;

/* Sleep one millisecond. */
static void
sleep_ms(void)
{
	struct timespec pause = {0, 1000000L};

	nanosleep(&pause, NULL);
}

/* The blocker's thread: a create, held until the service resumes. */
static void *
blocker_run(void *arg)
{
	Blocker    *b = arg;

	b->agg = ga_agg_create(b->dev, b->req, &b->st);
	return NULL;
}

/* The request of the small aggregation: an int32 key, COUNT_ROWS. */
static void
small_request(GaAggRequest *req, GaValueType *type, int *keycol, GaAggSpec *spec)
{
	*type = GA_TYPE_INT32;
	*keycol = 0;
	spec->op = GA_AGG_COUNT_ROWS;
	spec->column = -1;
	spec->column2 = -1;
	memset(req, 0, sizeof(*req));
	req->ncolumns = 1;
	req->column_types = type;
	req->nkeys = 1;
	req->key_columns = keycol;
	req->naggs = 1;
	req->aggs = spec;
	req->batch_rows = 1000;
	req->estimated_groups = 10;
}

/*
 * Open the CPU device of the service on slot `slot` (*dev) and create the
 * small aggregation there, its request in the caller's req, type, keycol
 * and spec; NULL, reported under `what`, when either fails.
 */
static GaAgg *
small_agg_on_slot(GaService *service, int slot, GaAggRequest *req, GaValueType *type,
				  int *keycol, GaAggSpec *spec, GaDevice **dev, RunReport *rr,
				  const char *what)
{
	GaStatus	st;
	GaAgg	   *agg;

	small_request(req, type, keycol, spec);
	*dev = ga_service_open(service, slot, GA_DEVICE_CPU, 0, &st);
	agg = *dev != NULL ? ga_agg_create(*dev, req, &st) : NULL;
	if (agg == NULL)
		report(rr, "%s: open or create failed: %s", what, st.message);
	return agg;
}

/* Fill one batch of 1000 rows, keys 0 to 9, and submit it; 0 on failure. */
static int
small_submit(GaAgg *agg, RunReport *rr, const char *what)
{
	GaStatus	st;
	GaBatch    *batch = ga_agg_next_batch(agg, NULL, NULL, &st);
	int			r;

	if (batch == NULL)
	{
		report(rr, "%s: next_batch failed: %s", what, st.message);
		return 0;
	}
	for (r = 0; r < 1000; r++)
		((int32_t *) batch->columns[0].values)[r] = r % 10;
	batch->nrows = 1000;
	if (!ga_agg_submit(agg, batch, NULL, NULL, &st))
	{
		report(rr, "%s: submit failed: %s", what, st.message);
		return 0;
	}
	return 1;
}

/* Run the small aggregation on dev and check its 10 groups of 100 rows. */
static void
small_check(GaDevice *dev, RunReport *rr, const char *what)
{
	GaAggRequest req;
	GaValueType type;
	int			keycol;
	GaAggSpec	spec;
	GaStatus	st;
	GaAgg	   *agg;
	const GaAggResult *res;
	int64_t		g;

	small_request(&req, &type, &keycol, &spec);
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(rr, "%s: create failed: %s", what, st.message);
		return;
	}
	if (small_submit(agg, rr, what))
	{
		res = ga_agg_finish(agg, NULL, NULL, &st);
		if (res == NULL)
			report(rr, "%s: finish failed: %s", what, st.message);
		else if (res->ngroups != 10)
			report(rr, "%s: %lld groups, not 10", what, (long long) res->ngroups);
		else
			for (g = 0; g < 10; g++)
				if (((const int64_t *) res->values[0])[g] != 100 || res->key_isnull[0][g] ||
					res->key_values[0][g] < 0 || res->key_values[0][g] > 9)
				{
					report(rr, "%s: group %lld is key %lld with %lld rows", what, (long long) g,
						   (long long) res->key_values[0][g],
						   (long long) ((const int64_t *) res->values[0])[g]);
					break;
				}
	}
	ga_agg_destroy(agg);
}

/* Wait until the service is in state; 0 after SERVICE_WAIT_MS. */
static int
wait_state(GaService *service, GaServiceState state)
{
	int			waited;

	for (waited = 0; waited < SERVICE_WAIT_MS; waited++)
	{
		if (ga_service_state(service, NULL, NULL, 0) == state)
			return 1;
		sleep_ms();
	}
	return 0;
}

/*
 * Wait until no device of the service has an object open (destroys are
 * not waited for by their clients); 0 after SERVICE_WAIT_MS.
 */
static int
wait_inactive(GaService *service)
{
	int			waited;

	for (waited = 0; waited < SERVICE_WAIT_MS; waited++)
	{
		GaServiceDeviceStats stats[GA_MAX_GPUS + 1];
		int			n = ga_service_stats(service, stats, GA_MAX_GPUS + 1);
		int			active = 0;
		int			d;

		for (d = 0; d < n; d++)
			active += stats[d].active != 0;
		if (active == 0)
			return 1;
		sleep_ms();
	}
	return 0;
}

/*
 * The statistics after the checks above: every device the service runs
 * listed, its CPU device having run queries, batches and their rows, no
 * request failed by a lost process (none ran when it was lost); and a
 * reset zeroes the counters.
 */
static void
check_stats(GaService *service, int with_gpu, RunReport *rr)
{
	GaServiceDeviceStats stats[GA_MAX_GPUS + 1];
	int			n = ga_service_stats(service, stats, GA_MAX_GPUS + 1);
	int			d;

	if (n != 1 + (with_gpu != 0) || stats[0].kind != GA_DEVICE_CPU ||
		(with_gpu && stats[1].kind != GA_DEVICE_GPU))
	{
		report(rr, "stats: %d devices listed, the first of kind %d", n, n > 0 ? (int) stats[0].kind : -1);
		return;
	}
	if (stats[0].queries < 1 || stats[0].batches < 1 || stats[0].rows < 1000 ||
		stats[0].bytes < 4000 || stats[0].device_ms < 0 || stats[0].queue_ms < 0 ||
		stats[0].failures != 0 || stats[0].active != 0)
		report(rr, "stats: CPU device queries %lld batches %lld rows %lld bytes %lld failures %lld active %lld",
			   (long long) stats[0].queries, (long long) stats[0].batches,
			   (long long) stats[0].rows, (long long) stats[0].bytes,
			   (long long) stats[0].failures, (long long) stats[0].active);
	ga_service_reset_stats(service);
	n = ga_service_stats(service, stats, GA_MAX_GPUS + 1);
	for (d = 0; d < n; d++)
		if (stats[d].queries != 0 || stats[d].batches != 0 || stats[d].rows != 0 ||
			stats[d].bytes != 0 || stats[d].device_ms != 0 || stats[d].queue_ms != 0)
			report(rr, "stats: device %d keeps counts after a reset", d);
}

/*
 * Cancel while queued: with every request thread holding a create (the
 * service paused), a call of another slot whose wait callback says stop
 * fails with GA_ERR_CANCELLED without waiting for a thread, its object
 * remembers it, and the slot serves the next request.
 */
static void
check_cancel_queued(GaService *service, RunReport *rr)
{
	int			nthreads = service->nthreads;
	Blocker		blockers[4];
	GaAggRequest req;
	GaValueType type;
	int			keycol;
	GaAggSpec	spec;
	GaStatus	st;
	GaDevice   *dev;
	GaAgg	   *agg;
	WaitState	ws = {0, 1, 0};
	int			queued_slot = nthreads + 1;
	int			waited;
	int			b;

	if (nthreads > 4 || queued_slot >= service->nslots)
	{
		report(rr, "the loopback service has %d threads and %d slots: too many or too few",
			   nthreads, service->nslots);
		return;
	}
	agg = small_agg_on_slot(service, queued_slot, &req, &type, &keycol, &spec, &dev, rr,
							"cancel while queued");
	if (agg == NULL)
		return;

	ga_service_loopback_pause(1);
	for (b = 0; b < nthreads; b++)
	{
		blockers[b].dev = ga_service_open(service, 1 + b, GA_DEVICE_CPU, 0, &blockers[b].st);
		blockers[b].req = &req;
		blockers[b].agg = NULL;
		if (blockers[b].dev == NULL ||
			pthread_create(&blockers[b].thread, NULL, blocker_run, &blockers[b]) != 0)
		{
			report(rr, "cancel while queued: could not start client thread %d", b);
			ga_service_loopback_pause(0);
			while (--b >= 0)
				pthread_join(blockers[b].thread, NULL);
			ga_agg_destroy(agg);
			return;
		}
	}
	for (waited = 0; waited < SERVICE_WAIT_MS && ga_service_loopback_held() < nthreads; waited++)
		sleep_ms();
	if (ga_service_loopback_held() != nthreads)
		report(rr, "cancel while queued: %d of %d request threads got busy",
			   ga_service_loopback_held(), nthreads);
	else
	{
		if (ga_agg_next_batch(agg, test_wait, &ws, &st) != NULL || st.code != GA_ERR_CANCELLED)
			report(rr, "cancel while queued: next_batch gave code %d (%s), not GA_ERR_CANCELLED",
				   st.code, st.message);
		if (ws.cancels == 0)
			report(rr, "cancel while queued: the wait callback was never asked");
		if (ga_service_loopback_held() != nthreads)
			report(rr, "cancel while queued: a thread ran the cancelled request");
		if (SVC_LOAD(&service->slots[queued_slot].state) != SVC_SLOT_IDLE)
			report(rr, "cancel while queued: the slot is left in state %u",
				   SVC_LOAD(&service->slots[queued_slot].state));
	}
	ga_service_loopback_pause(0);
	for (b = 0; b < nthreads; b++)
	{
		pthread_join(blockers[b].thread, NULL);
		if (blockers[b].agg == NULL)
			report(rr, "cancel while queued: the held create %d failed: %s", b,
				   blockers[b].st.message);
		ga_agg_destroy(blockers[b].agg);
	}
	if (ga_agg_finish(agg, NULL, NULL, &st) != NULL || st.code != GA_ERR_CANCELLED)
		report(rr, "cancel while queued: finish after the cancel gave code %d, not GA_ERR_CANCELLED",
			   st.code);
	ga_agg_destroy(agg);
	small_check(dev, rr, "the slot of a cancelled request");
}

/* A wait callback that says stop once a request thread holds a request. */
static int
stop_when_held(void *arg)
{
	(void) arg;
	return ga_service_loopback_held() > 0;
}

/* Wait until the slot is IDLE; 0 after SERVICE_WAIT_MS. */
static int
wait_idle(GaService *service, int slot)
{
	int			waited;

	for (waited = 0; waited < SERVICE_WAIT_MS; waited++)
	{
		if (SVC_LOAD(&service->slots[slot].state) == SVC_SLOT_IDLE)
			return 1;
		sleep_ms();
	}
	return 0;
}

/*
 * Requests the service does not answer (held by the paused service): a
 * call whose wait callback says stop once a thread holds its request
 * fails with GA_ERR_CANCELLED after SVC_GIVE_UP_MS, leaving the request
 * to the service; the object's destroy then returns at once, and a create
 * fails with GA_ERR_DEVICE while the slot stays busy; the service ends the
 * left request once it runs again, and the slot serves the next query.
 * A client that exits while its slot is busy (ga_service_release) leaves
 * the slot to the service within SVC_GIVE_UP_MS, which drops the slot's
 * objects when the request ends.
 */
static void
check_left(GaService *service, RunReport *rr)
{
	int			slot = service->nthreads + 3;
	GaAggRequest req;
	GaValueType type;
	int			keycol;
	GaAggSpec	spec;
	GaStatus	st;
	GaDevice   *dev;
	GaAgg	   *agg;
	GaAgg	   *other;
	double		start;
	double		took;
	int			waited;

	if (slot >= service->nslots)
	{
		report(rr, "left: the loopback service has only %d slots", service->nslots);
		return;
	}
	agg = small_agg_on_slot(service, slot, &req, &type, &keycol, &spec, &dev, rr, "left");
	if (agg == NULL)
		return;

	ga_service_loopback_pause(1);
	start = now_ms();
	if (ga_agg_next_batch(agg, stop_when_held, NULL, &st) != NULL || st.code != GA_ERR_CANCELLED)
		report(rr, "left: next_batch gave code %d (%s), not GA_ERR_CANCELLED", st.code,
			   st.message);
	took = now_ms() - start;
	if (took < SVC_GIVE_UP_MS || took > SVC_GIVE_UP_MS + 2000)
		report(rr, "left: the cancelled call returned after %.0f ms, not %d", took,
			   SVC_GIVE_UP_MS);
	if ((SVC_LOAD(&service->slots[slot].state) & SVC_SLOT_LEFT) == 0)
		report(rr, "left: the running request was not left to the service (state %u)",
			   SVC_LOAD(&service->slots[slot].state));
	start = now_ms();
	ga_agg_destroy(agg);
	if ((took = now_ms() - start) > 100)
		report(rr, "left: the destroy waited %.0f ms for the busy slot", took);
	other = ga_agg_create(dev, &req, &st);
	if (other != NULL || st.code != GA_ERR_DEVICE)
		report(rr, "left: a create on the busy slot gave code %d (%s), not GA_ERR_DEVICE",
			   st.code, st.message);
	ga_agg_destroy(other);
	ga_service_loopback_pause(0);
	if (!wait_idle(service, slot))
		report(rr, "left: the service did not end the left request (state %u)",
			   SVC_LOAD(&service->slots[slot].state));
	small_check(dev, rr, "the slot of a request left to the service");

	/* a client that exits while a thread holds its destroy */
	agg = ga_agg_create(dev, &req, &st);
	other = agg != NULL ? ga_agg_create(dev, &req, &st) : NULL;
	if (other == NULL)
	{
		report(rr, "left: the creates before the release failed: %s", st.message);
		ga_agg_destroy(agg);
		return;
	}
	ga_service_loopback_pause(1);
	ga_agg_destroy(agg);
	for (waited = 0; waited < SERVICE_WAIT_MS && ga_service_loopback_held() < 1; waited++)
		sleep_ms();
	start = now_ms();
	ga_service_release(service, slot);
	took = now_ms() - start;
	if (took > SVC_GIVE_UP_MS + 2000)
		report(rr, "left: the release of a busy slot took %.0f ms", took);
	if ((SVC_LOAD(&service->slots[slot].state) & SVC_SLOT_GONE) == 0)
		report(rr, "left: the release did not leave the busy slot to the service (state %u)",
			   SVC_LOAD(&service->slots[slot].state));
	ga_service_loopback_pause(0);
	if (!wait_idle(service, slot))
		report(rr, "left: the service did not end the slot left at the release (state %u)",
			   SVC_LOAD(&service->slots[slot].state));
	/* the release dropped it in the service: only the mirror is freed here */
	ga_agg_destroy(other);
	small_check(dev, rr, "the slot of a release left to the service");
}

/*
 * A lost service process: an aggregation and a join of the lost
 * generation fail every call with GA_ERR_DEVICE, the new service waits
 * (STARTING, saying so) until they are destroyed, then serves, on every
 * device it runs, with no object left open.
 */
static void
check_lost(GaService *service, int with_gpu, RunReport *rr)
{
	int			slot = service->nthreads + 2;
	GaAggRequest req;
	GaValueType type;
	int			keycol;
	GaAggSpec	spec;
	GaJoinRequest jreq = {100, 0};
	int64_t		keys[3] = {1, 2, 3};
	uint32_t	rows[3] = {0, 1, 2};
	GaStatus	st;
	GaDevice   *dev;
	GaAgg	   *agg = NULL;
	GaJoin	   *join = NULL;
	char		note[256] = "";
	int			waited;

	small_request(&req, &type, &keycol, &spec);
	dev = ga_service_open(service, slot, GA_DEVICE_CPU, 0, &st);
	if (dev != NULL)
		agg = ga_agg_create(dev, &req, &st);
	if (agg != NULL)
		join = ga_join_create(dev, &jreq, &st);
	if (join == NULL || !small_submit(agg, rr, "before the loss") ||
		!ga_join_build(join, keys, rows, 3, NULL, NULL, &st))
	{
		report(rr, "lost service: setting up failed: %s", st.message);
		ga_agg_destroy(agg);
		ga_join_destroy(join);
		return;
	}

	if (!ga_service_loopback_restart(service, "simulated loss", &st))
	{
		report(rr, "lost service: serving again failed: %s", st.message);
		ga_agg_destroy(agg);
		ga_join_destroy(join);
		return;
	}
	for (waited = 0; waited < SERVICE_WAIT_MS && strstr(note, "waiting") == NULL; waited++)
	{
		if (ga_service_state(service, NULL, note, sizeof(note)) != GA_SERVICE_STARTING)
			break;
		sleep_ms();
	}
	if (ga_service_state(service, NULL, note, sizeof(note)) != GA_SERVICE_STARTING ||
		strstr(note, "waiting for 1 session") == NULL)
		report(rr, "lost service: the new service does not wait for the old objects (state %d, note \"%s\")",
			   (int) ga_service_state(service, NULL, NULL, 0), note);

	if (ga_agg_next_batch(agg, NULL, NULL, &st) != NULL || st.code != GA_ERR_DEVICE ||
		strstr(st.message, "restarted") == NULL)
		report(rr, "lost service: next_batch of an old aggregation gave code %d (%s)",
			   st.code, st.message);
	if (ga_agg_finish(agg, NULL, NULL, &st) != NULL || st.code != GA_ERR_DEVICE)
		report(rr, "lost service: finish of an old aggregation gave code %d (%s)",
			   st.code, st.message);
	if (ga_join_next_batch(join, NULL, NULL, &st) != NULL || st.code != GA_ERR_DEVICE)
		report(rr, "lost service: next_batch of an old join gave code %d (%s)",
			   st.code, st.message);
	{
		GaAgg	   *early = ga_agg_create(dev, &req, &st);

		if (early != NULL || st.code != GA_ERR_NO_DEVICE)
			report(rr, "lost service: a create before the service was ready gave code %d (%s)",
				   st.code, st.message);
		ga_agg_destroy(early);
	}
	ga_agg_destroy(agg);
	ga_join_destroy(join);

	if (!wait_state(service, GA_SERVICE_READY))
	{
		report(rr, "lost service: not ready %d s after the old objects were destroyed",
			   SERVICE_WAIT_MS / 1000);
		return;
	}
	small_check(dev, rr, "the CPU device after the loss");
	if (with_gpu)
	{
		GaDevice   *gpu = ga_service_open(service, slot, GA_DEVICE_GPU, 0, &st);

		if (gpu == NULL)
			report(rr, "lost service: the GPU cannot be opened: %s", st.message);
		else
			small_check(gpu, rr, "the GPU after the loss");
	}
	if (!wait_inactive(service))
		report(rr, "lost service: objects stay open after every client destroyed its own");
	check_stats(service, with_gpu, rr);
}

/* The service's own checks (conformance.h). */
int64_t
service_api_checks(GaService *service, int with_gpu)
{
	RunReport	rr = {-1, "svc", 0, 0, "service"};

	check_cancel_queued(service, &rr);
	if (!wait_inactive(service))
		report(&rr, "objects stay open after the cancel's check");
	check_left(service, &rr);
	if (!wait_inactive(service))
		report(&rr, "objects stay open after the checks of requests left to the service");
	service_admit_checks(service, &rr);
	if (!wait_inactive(service))
		report(&rr, "objects stay open after admission's checks");
	service_concurrent_checks(service, with_gpu, &rr);
	if (!wait_inactive(service))
		report(&rr, "objects stay open after the concurrent queries");
	check_lost(service, with_gpu, &rr);
	return rr.mismatches;
}
