/*-------------------------------------------------------------------------
 *
 * service/admit.c
 *	  Admission in the GPU service: a create (an aggregation or a join)
 *	  and a staging ALLOC run only when they fit, in the arena and under
 *	  their device's memory budget; one that does not fit is parked,
 *	  holding no thread, until memory comes back, its deadline passes or
 *	  its client cancels.  A create that may go to any GPU goes to the one
 *	  with the least memory in use among those it fits on.
 *
 * The budget.  GaService.gpu_budget (gpuagg.gpu_memory_budget, which the
 * supervisor writes at start and on each reload) bounds the device memory
 * the service holds on each GPU, 0 meaning 90% of the GPU's memory.  The
 * GPU device also refuses any allocation past it (ga_gpu_memory_limit), so
 * that an object growing past the budget fails as on a full GPU and its
 * query finishes on the CPU device.  On the CPU device the budget bounds
 * the device's share of the arena (0: only the arena does).
 *
 * What a create needs at first, estimated from its request: on a GPU, the
 * device input buffer of one batch (every column's values and validity),
 * the rows' group ids and the group table at its first size (the
 * estimated groups, within 1024 and a batch's rows, rounded up to a power
 * of two, times ga_table_bytes_per_group); in the arena, its batches (the
 * GPU's two, the CPU device's one).  A join needs its probe batch and its
 * answer (keys, validity, two counts per row), in the arena and on the
 * device.  The estimate only decides whether to try: a create that then
 * fails for lack of memory (GA_ERR_OUT_OF_MEMORY from its device) waits
 * all the same, unless no object is open at all, when it can never fit.
 *
 * Fairness.  Parked requests are retried oldest first (by ticket), each
 * one only when memory came back since it last found no room
 * (SvcServer.freed counts destroys, releases, staging buffers given back
 * and budget changes).  Staging ALLOCs, which serve queries already
 * admitted (whose memory comes back when they finish), go before every
 * create.  A create never overtakes an older parked create on the same
 * device: a device that an older create still waits for is closed to
 * younger ones (a create for any GPU waits for, and closes, every GPU).
 * A parked request fails with GA_ERR_OUT_OF_MEMORY once its client's
 * wait (SvcArgs.wait_ms, from when it was posted) is over, and with
 * GA_ERR_CANCELLED when its client cancels; one with no wait fails at
 * once.
 *
 * One mutex (admit_lock) guards the parked requests and serializes the
 * admissions, so that two creates never both take the last room; a
 * create runs while it is held, beside the calls on other objects, which
 * take no lock.
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "sizing.h"
#include "tune.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Share of a GPU's memory the budget is when the setting is 0. */
#define ADMIT_GPU_SHARE 0.9

/* Smallest first group table of the GPU device, in groups. */
#define ADMIT_MIN_GROUPS 1024
#define ADMIT_MAX_GROUPS (INT64_C(1) << 26)

/* What admit_try did with a request. */
typedef enum AdmitResult
{
	ADMIT_DONE,					/* ran, or failed for good: answer it */
	ADMIT_WAIT					/* found no room: park it */
} AdmitResult;

/* ------------------------------------------------------------------------
 * Budgets and memory in use
 * ------------------------------------------------------------------------
 */

/* The budget of device d in bytes, 0: none (the CPU device's arena share). */
static int64_t
admit_budget(SvcServer *server, int d)
{
	const SvcServerDevice *device = &server->devices[d];
	int64_t		budget = SVC_LOAD(&server->service->gpu_budget);

	if (device->kind == GA_DEVICE_GPU && budget <= 0)
		budget = (int64_t) ((double) ga_gpu_memory_total(device->ordinal) * ADMIT_GPU_SHARE);
	return budget > 0 ? budget : 0;
}

/* The memory device d holds: a GPU's device memory, the CPU device's arena share. */
static int64_t
admit_used(SvcServer *server, int d)
{
	const SvcServerDevice *device = &server->devices[d];

	if (device->kind == GA_DEVICE_GPU)
		return ga_gpu_memory_used(device->ordinal);
	return svc_arena_used(d);
}

/* Publish device d's memory in use and budget (publish_lock held). */
static void
admit_publish_locked(SvcServer *server, int d)
{
	SvcDeviceEntry *entry = &server->service->devices[d];
	int64_t		budget = admit_budget(server, d);
	int64_t		arena = (int64_t) server->service->arena_bytes;

	if (server->devices[d].kind == GA_DEVICE_CPU && (budget == 0 || budget > arena))
		budget = arena;
	SVC_STORE(&entry->memory_used, admit_used(server, d));
	SVC_STORE(&entry->memory_budget, budget);
	if (server->devices[d].kind == GA_DEVICE_GPU)
	{
		GaTuneSummary tune;

		ga_tune_summary_all(&tune);
		SVC_STORE(&entry->tune_tuned, tune.tuned);
		SVC_STORE(&entry->tune_exploring, tune.exploring);
		SVC_STORE(&entry->tune_loaded, tune.loaded);
		SVC_STORE(&entry->tune_file, tune.file_state);
	}
}

/*
 * Write device d's memory in use and budget into the shared header; under
 * a lock, so that a value read earlier by another thread is never
 * published after a later one.
 */
void
svc_admit_publish(SvcServer *server, int d)
{
	pthread_mutex_lock(&server->publish_lock);
	admit_publish_locked(server, d);
	pthread_mutex_unlock(&server->publish_lock);
}

/*
 * Apply a changed budget (admit_lock held): the GPUs' limits, and a retry
 * of every parked request.
 */
static void
admit_apply_budget(SvcServer *server)
{
	int64_t		budget = SVC_LOAD(&server->service->gpu_budget);
	int			d;

	if (budget == SVC_LOAD(&server->budget))
		return;
	SVC_STORE(&server->budget, budget);
	for (d = 0; d < server->ndevices; d++)
	{
		if (server->devices[d].kind == GA_DEVICE_GPU)
			ga_gpu_memory_limit(server->devices[d].ordinal, admit_budget(server, d));
		svc_admit_publish(server, d);
	}
	svc_server_freed(server);
}

/* ------------------------------------------------------------------------
 * What a request needs
 * ------------------------------------------------------------------------
 */

/*
 * Bytes of one batch of the request's columns: values and validity, a
 * string column's bytes, and the page area of a request with a page
 * program (its images and their descriptions).
 */
static int64_t
admit_batch_bytes(const GaAggRequest *request)
{
	int64_t		rows = request->batch_rows > 0 ? request->batch_rows : 1;
	int64_t		bytes = 0;
	int			c;

	for (c = 0; c < request->ncolumns; c++)
		bytes += (int64_t) svc_align((size_t) rows * (size_t) ga_type_width(request->column_types[c])) +
			(int64_t) svc_align((size_t) (rows + 7) / 8) +
			(request->column_types[c] == GA_TYPE_STRING ?
			 (int64_t) svc_align((size_t) request->string_bytes) : 0);
	if (request->pages != NULL)
		bytes += request->pages->page_capacity * (int64_t) (GA_PAGE_SIZE + sizeof(GaPageDesc));
	return bytes;
}

/* Round up to a power of two. */
static int64_t
admit_pow2(int64_t n)
{
	int64_t		p = 1;

	while (p < n)
		p *= 2;
	return p;
}

/*
 * What an aggregation needs at first on a device of kind: *device counts
 * against the device's budget, *arena is taken from the arena.
 */
static void
admit_agg_needs(GaDeviceKind kind, const GaAggRequest *request, int64_t *device,
				int64_t *arena)
{
	int64_t		batch = admit_batch_bytes(request);
	int64_t		rows = request->batch_rows > 0 ? request->batch_rows : 1;
	int64_t		groups = request->estimated_groups;

	if (kind == GA_DEVICE_CPU)
	{
		*device = *arena = batch;
		return;
	}
	if (request->nkeys == 0)
		groups = 1;
	else
	{
		if (groups > rows)
			groups = rows;
		if (groups < ADMIT_MIN_GROUPS)
			groups = ADMIT_MIN_GROUPS;
		if (groups > ADMIT_MAX_GROUPS)
			groups = ADMIT_MAX_GROUPS;
		groups = admit_pow2(groups);
	}
	*device = batch + (request->nkeys > 0 ? rows * (int64_t) sizeof(int32_t) : 0) +
		groups * ga_table_bytes_per_group(request);
	*arena = 2 * batch;
}

/* What a join needs at first: its probe batch and answer, here and there. */
static void
admit_join_needs(const GaJoinRequest *request, int64_t *device, int64_t *arena)
{
	int64_t		rows = request->probe_batch_rows > 0 ? request->probe_batch_rows : 1;

	*device = *arena = rows * (int64_t) (sizeof(int64_t) + 2 * sizeof(uint32_t)) + (rows + 7) / 8;
}

/*
 * The devices the request of slot index may run on (a create for any GPU:
 * every GPU; an ALLOC for one: the first), and what it needs on them; 0
 * with the reply's status when its request is malformed.
 */
static int
admit_needs(SvcServer *server, int index, int *devices, int *ndevices, int64_t *device,
			int64_t *arena)
{
	SvcArgs    *args = &server->service->slots[index].args;
	GaDeviceKind kind;
	int			d;

	*ndevices = 0;
	for (d = 0; d < server->ndevices; d++)
		if (d == args->device ||
			(args->device == SVC_DEVICE_ANY_GPU && server->devices[d].kind == GA_DEVICE_GPU &&
			 (args->op != SVC_OP_ALLOC || *ndevices == 0)))
			devices[(*ndevices)++] = d;
	kind = server->devices[devices[0]].kind;
	if (args->op == SVC_OP_ALLOC)
	{
		*arena = (int64_t) args->buffer_bytes;
		*device = kind == GA_DEVICE_CPU ? *arena : 0;
	}
	else if (args->op == SVC_OP_JOIN_CREATE)
		admit_join_needs(&args->join, device, arena);
	else
	{
		const GaAggRequest *request = svc_exec_agg_request(server, index);

		if (request == NULL)
			return 0;
		admit_agg_needs(kind, request, device, arena);
	}
	return 1;
}

/* ------------------------------------------------------------------------
 * Admission
 * ------------------------------------------------------------------------
 */

/* Whether no device has an object open: memory held now never comes back. */
static int
admit_idle(SvcServer *server)
{
	int			d;

	for (d = 0; d < server->ndevices; d++)
		if (SVC_LOAD(&server->service->devices[d].active) != 0)
			return 0;
	return 1;
}

/* Order devices by memory in use, then by objects open. */
static void
admit_sort(SvcServer *server, int *devices, int n)
{
	int64_t		used[SVC_MAX_DEVICES];
	int64_t		active[SVC_MAX_DEVICES];
	int			i;

	for (i = 0; i < n; i++)
	{
		used[i] = admit_used(server, devices[i]);
		active[i] = SVC_LOAD(&server->service->devices[devices[i]].active);
	}
	for (i = 1; i < n; i++)
	{
		int			j = i;

		while (j > 0 && (used[j] < used[j - 1] ||
						 (used[j] == used[j - 1] && active[j] < active[j - 1])))
		{
			int64_t		u = used[j],
						a = active[j];
			int			d = devices[j];

			used[j] = used[j - 1];
			active[j] = active[j - 1];
			devices[j] = devices[j - 1];
			used[j - 1] = u;
			active[j - 1] = a;
			devices[j - 1] = d;
			j--;
		}
	}
}

/*
 * Try the request of slot index (admit_lock held) on the devices it may
 * run on that `closed` leaves open (ALLOCs ignore it), least memory in
 * use first, where it fits its budget and the arena.  ADMIT_DONE with
 * *device the device it ran on or counts against (the reply's status says
 * how it went); ADMIT_WAIT when it found no room; *wanted gets the devices
 * it may run on.
 */
static AdmitResult
admit_try(SvcServer *server, int index, uint32_t closed, uint32_t *wanted, int *device)
{
	SvcSlot    *slot = &server->service->slots[index];
	GaStatus   *status = &slot->reply.status;
	int			create = slot->args.op != SVC_OP_ALLOC;
	int			devices[SVC_MAX_DEVICES];
	int			n;
	int64_t		need;
	int64_t		need_arena;
	int			may_fit = 0;
	int			tried = 0;
	int			i;

	*wanted = 0;
	*device = -1;
	if (!admit_needs(server, index, devices, &n, &need, &need_arena))
	{
		/* a malformed request: running it fails it and frees its staging */
		*device = devices[0];
		(void) svc_exec_admitted(server, index, devices[0]);
		return ADMIT_DONE;
	}
	*device = devices[0];
	admit_sort(server, devices, n);
	for (i = 0; i < n; i++)
	{
		int			d = devices[i];
		int64_t		budget = admit_budget(server, d);

		*wanted |= UINT32_C(1) << d;
		if ((budget > 0 && need > budget) || need_arena > (int64_t) server->service->arena_bytes)
			continue;			/* never fits there */
		may_fit = 1;
		if ((create && (closed & (UINT32_C(1) << d)) != 0) ||
			(budget > 0 && admit_used(server, d) + need > budget) ||
			svc_arena_free_bytes() < need_arena)
			continue;
		tried = 1;
		if (svc_exec_admitted(server, index, d) == SVC_RUN_DONE)
		{
			*device = d;
			return ADMIT_DONE;
		}
	}
	if (!may_fit)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "the request needs %.1f MB of device memory and %.1f MB of the GPU service's shared memory, more than its budget (gpuagg.gpu_memory_budget) or gpuagg.service_memory allows",
					  (double) need / 1048576.0, (double) need_arena / 1048576.0);
		return ADMIT_DONE;
	}
	if (tried && admit_idle(server))
		return ADMIT_DONE;		/* the device's own out-of-memory status */
	return ADMIT_WAIT;
}

/*
 * Answer the request of slot index (admit_lock held), unparking it: the
 * time it was parked counts as queued, against device, whose memory in
 * use is published before the client sees the answer.
 */
static void
admit_answer(SvcServer *server, int index, int device)
{
	SvcSlot    *slot = &server->service->slots[index];
	SvcServerSlot *ss = &server->slots[index];
	int			valid = device >= 0 && device < server->ndevices;

	if (ss->parked)
	{
		int64_t		waited = svc_now_ns() - ss->parked_ns;

		ss->parked = 0;
		SVC_ADD(&server->nparked, -1);
		SVC_ADD(&server->service->parked, -1);
		slot->reply.queued_ns += waited;
		if (valid)
			SVC_ADD(&server->service->devices[device].queue_ns, waited);
	}
	if (valid)
		svc_admit_publish(server, device);
	svc_exec_reply(server, index, device);
}

/* The device a request that did not run counts against (any GPU: the first). */
static int
admit_home(SvcServer *server, int index)
{
	int			device = server->service->slots[index].args.device;
	int			d;

	for (d = 0; device == SVC_DEVICE_ANY_GPU && d < server->ndevices; d++)
		if (server->devices[d].kind == GA_DEVICE_GPU)
			return d;
	return device;
}

/* The parked slots (admit_lock held) into order, oldest ticket first; how many. */
static int
admit_parked(SvcServer *server, int *order)
{
	GaService  *service = server->service;
	int			n = 0;
	int			i;

	for (i = 0; i < service->nslots; i++)
	{
		int			j;

		if (!server->slots[i].parked)
			continue;
		for (j = n++; j > 0 && service->slots[order[j - 1]].ticket > service->slots[i].ticket; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	return n;
}

/*
 * Look at every parked request, oldest first, ALLOCs before creates
 * (admit_lock held): answer those cancelled, past their deadline or of a
 * client that is gone, and run those that fit since memory came back.
 * Returns the devices the creates still parked close to younger ones.
 */
static uint32_t
admit_retry(SvcServer *server)
{
	GaService  *service = server->service;
	uint64_t	epoch = SVC_LOAD(&server->freed);
	int64_t		now = svc_now_ns();
	uint32_t	closed = 0;
	int		   *order;
	int			n;
	int			pass;
	int			i;

	SVC_STORE(&server->retried, epoch);
	if (SVC_LOAD(&server->nparked) == 0)
		return 0;
	order = malloc((size_t) service->nslots * sizeof(int));
	if (order == NULL)
		return ~UINT32_C(0);	/* retried on the next look */
	n = admit_parked(server, order);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
		{
			int			index = order[i];
			SvcSlot    *slot = &service->slots[index];
			SvcServerSlot *ss = &server->slots[index];
			int			alloc = slot->args.op == SVC_OP_ALLOC;
			uint32_t	wanted;
			int			device;

			if (!ss->parked || alloc != (pass == 0))
				continue;
			if (SVC_LOAD(&slot->cancel))
				ga_status_set(&slot->reply.status, GA_ERR_CANCELLED,
							  "cancelled while waiting for room in the GPU service");
			else if (now >= ss->deadline_ns)
				ga_status_set(&slot->reply.status, GA_ERR_OUT_OF_MEMORY,
							  "no room in the GPU service within gpuagg.service_wait (%d ms)",
							  slot->args.wait_ms);
			else if (!svc_pid_alive(SVC_LOAD(&slot->client_pid)))
				ga_status_set(&slot->reply.status, GA_ERR_DEVICE,
							  "the session waiting for room in the GPU service is gone");
			else if (ss->tried_epoch == epoch)
			{
				closed |= alloc ? 0 : ss->wanted;
				continue;
			}
			else if (admit_try(server, index, closed, &wanted, &device) == ADMIT_WAIT)
			{
				ss->tried_epoch = epoch;
				closed |= alloc ? 0 : wanted;
				continue;
			}
			else
			{
				admit_answer(server, index, device);
				continue;
			}
			admit_answer(server, index, admit_home(server, index));
		}
	free(order);
	return closed;
}

/*
 * Admit the create or ALLOC of slot index (RUNNING): older parked
 * requests get their turn first; then it runs where it fits and is
 * answered, or is parked until it fits, its client's wait is over or its
 * client cancels.  A request with no wait that finds no room fails at once.
 */
void
svc_admit(SvcServer *server, int index)
{
	SvcSlot    *slot = &server->service->slots[index];
	SvcServerSlot *ss = &server->slots[index];
	uint64_t	epoch;
	uint32_t	closed;
	uint32_t	wanted;
	int			device;

	pthread_mutex_lock(&server->admit_lock);
	admit_apply_budget(server);
	closed = admit_retry(server);
	epoch = SVC_LOAD(&server->freed);
	if (admit_try(server, index, closed, &wanted, &device) == ADMIT_DONE)
		admit_answer(server, index, device);
	else if (slot->args.wait_ms <= 0 || SVC_LOAD(&slot->cancel))
	{
		ga_status_set(&slot->reply.status,
					  SVC_LOAD(&slot->cancel) ? GA_ERR_CANCELLED : GA_ERR_OUT_OF_MEMORY,
					  "no room in the GPU service now (gpuagg.service_wait is 0)");
		admit_answer(server, index, admit_home(server, index));
	}
	else
	{
		ss->parked = 1;
		ss->parked_ns = svc_now_ns();
		ss->deadline_ns = slot->posted_ns + (int64_t) slot->args.wait_ms * 1000000;
		ss->tried_epoch = epoch;
		ss->wanted = wanted;
		ga_status_ok(&slot->reply.status);
		SVC_ADD(&server->nparked, 1);
		SVC_ADD(&server->service->parked, 1);
	}
	pthread_mutex_unlock(&server->admit_lock);
}

/*
 * Between requests, in every request thread: publish every device's
 * memory in use, apply a changed budget, and while requests are parked,
 * retry them when memory came back and answer those that waited too long
 * or were cancelled (at least every SVC_WAIT_STEP_MS, by whichever thread
 * gets there first).
 */
void
svc_admit_after(SvcServer *server)
{
	int64_t		now;
	int			d;

	pthread_mutex_lock(&server->publish_lock);
	for (d = 0; d < server->ndevices; d++)
		admit_publish_locked(server, d);
	pthread_mutex_unlock(&server->publish_lock);
	if (SVC_LOAD(&server->service->gpu_budget) == SVC_LOAD(&server->budget) &&
		SVC_LOAD(&server->nparked) == 0)
		return;
	now = svc_now_ns();
	if (SVC_LOAD(&server->service->gpu_budget) == SVC_LOAD(&server->budget) &&
		SVC_LOAD(&server->freed) == SVC_LOAD(&server->retried) &&
		now - SVC_LOAD(&server->swept_ns) < (int64_t) SVC_WAIT_STEP_MS * 1000000)
		return;
	if (pthread_mutex_trylock(&server->admit_lock) != 0)
		return;					/* its holder looks after it */
	SVC_STORE(&server->swept_ns, now);
	admit_apply_budget(server);
	(void) admit_retry(server);
	pthread_mutex_unlock(&server->admit_lock);
}

/* Answer every parked request with code (a service that stops). */
void
svc_admit_fail_parked(SvcServer *server, GaStatusCode code, const char *message)
{
	int			i;

	pthread_mutex_lock(&server->admit_lock);
	for (i = 0; i < server->service->nslots && server->slots != NULL; i++)
		if (server->slots[i].parked)
		{
			ga_status_set(&server->service->slots[i].reply.status, code, "%s", message);
			admit_answer(server, i, admit_home(server, i));
		}
	pthread_mutex_unlock(&server->admit_lock);
}
