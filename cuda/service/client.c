/*-------------------------------------------------------------------------
 *
 * service/client.c
 *	  The clients of the GPU service: ga_service_open gives a backend an
 *	  ordinary GaDevice whose table of entry points (ga_service_ops) turns
 *	  every call into a request of the backend's slot, carried out by the
 *	  service on its own device of the same kind.  The dispatcher
 *	  (device.c) validates and orders the calls here, in the client, as
 *	  for any device.
 *
 * Zero copy.  The service's devices take their batches and results from
 * the arena (their host provider), which the client maps at the same
 * address.  A client object keeps mirrors: a GaBatch per batch the device
 * handed out, whose columns point at the device's own arrays (a submit
 * sends the row count, each column's has_nulls and the count of heap pages
 * a batch carries in its page area, also in the arena), and a GaAggResult
 * whose arrays are the device's.  So a backend writes a batch once, where
 * the device reads it, and reads the groups where the device wrote them.
 * A build side lies in the caller's memory: it is copied once into a
 * staging buffer of the arena that the service allocates and frees; one
 * larger than svc_stage_piece_bytes goes in pieces into the service
 * process's memory, so that no build is too large for the arena.
 *
 * Creates.  A create waits for room in the service as long as the
 * thread's wait says (ga_service_set_wait_ms), asking the thread's wait
 * callback in between; a GPU opened as ordinal -1 is the service's choice,
 * which the create's reply names.  A create cancelled after the service
 * made its object destroys that object.
 *
 * Failures.  The service's devices remember their own failures, as local
 * devices do; what fails here (a cancel, a service that went away) is
 * remembered by the client object, so every later call reports it.  An
 * object of a generation the service no longer serves fails every call
 * with "the GPU service restarted while this query ran" (GA_ERR_DEVICE),
 * and its destroy only frees the mirrors.  Destroys are not waited for:
 * the slot's next request collects their replies.
 *
 * Bounded waits.  A call waits for its slot (a destroy's reply, or a
 * request left to the service) as long as gpuagg.service_wait, at least
 * SVC_GIVE_UP_MS, asking its wait callback, and then fails with
 * GA_ERR_DEVICE, so that its query finishes on the CPU device.  Cleanup
 * has no callback: a destroy (or a FREE) that finds the slot busy for
 * SVC_GIVE_UP_MS is kept in the process's list of the slot and posted
 * before the slot's next request; once a wait gave up, cleanup waits no
 * more until the slot is seen IDLE again.  A backend that exits leaves a
 * slot that stays busy to the service, which drops the slot's objects
 * when the request in flight ends (slot.c).
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLIENT_RESTARTED "the GPU service restarted while this query ran"

size_t		svc_stage_piece_bytes = SVC_STAGE_PIECE_BYTES;

/* A device of the service as this process opened it: its GaDevice's impl. */
typedef struct ClientDevice
{
	GaService  *service;
	int			slot;
	SvcClientSlot *cslot;
	GaDeviceKind kind;
	int			ordinal;
	int			pid;			/* the process that opened it */
	GaDevice   *device;
	struct ClientDevice *next;
} ClientDevice;

/* The devices this process opened; they live as long as it does. */
static pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;
static ClientDevice *client_devices;

/* How this thread's creates wait for room (ga_service_set_wait_ms). */
static __thread int client_wait_ms;
static __thread GaWaitCallback client_wait;
static __thread void *client_wait_arg;

/* A batch the service's device handed out, mirrored here. */
typedef struct ClientBatch
{
	uint64_t	token;			/* 0: unused */
	GaBatch		batch;
	GaColumn   *columns;
	int			ncolumns;		/* entries of columns */
	SvcColumnDesc *descs;		/* the service's, in the arena */
} ClientBatch;

/* What an aggregation and a join of the service share on the client. */
typedef struct ClientObject
{
	ClientDevice *device;
	uint64_t	generation;		/* the one it was created in */
	int			device_index;	/* in GaService.devices, or
								 * SVC_DEVICE_ANY_GPU until created */
	int			gpu_ordinal;	/* the GPU that runs it, -1: the CPU device */
	int			object;			/* the service's id, 0: none */
	int			held;			/* counted in the slot's held_objects */
	int			left;			/* its last call was left to the service */
	int64_t		queue_ns;		/* its requests' time in the service's queue */
	GaFailure	failure;
	ClientBatch batches[SVC_MAX_BATCHES];
} ClientObject;

typedef struct ClientAgg
{
	ClientObject base;
	int			ncolumns;
	uint8_t    *from_build;		/* an aggjoin's, copied; else NULL */
	int			finished;
	GaAggResult result;
	GaAggStats	stats;
} ClientAgg;

typedef struct ClientJoin
{
	ClientObject base;
	const uint32_t *sorted_rows;	/* once built */
	GaJoinMatches matches;
	GaJoinStats stats;
} ClientJoin;

/* A run of a build side's layout: len bytes of src go to offset at. */
typedef struct ClientRun
{
	const void *src;
	size_t		at;
	size_t		len;
} ClientRun;

/* ------------------------------------------------------------------------
 * Devices and slots
 * ------------------------------------------------------------------------
 */

/*
 * Open, for the client of slot `slot`, the service's device of kind
 * (gpu_ordinal for a GPU, -1: the service's choice); the same device again
 * on later opens.  The first open of a slot in a process clears what an
 * earlier client of the slot (an exited process) left counted as held.
 */
GaDevice *
ga_service_open(GaService *service, int slot, GaDeviceKind kind, int gpu_ordinal,
				GaStatus *status)
{
	ClientDevice *d;
	int			pid = (int) getpid();
	int			slot_known = 0;
	int			ndevices;
	int			found = 0;
	int			i;

	ga_status_ok(status);
	if (service == NULL || SVC_LOAD(&service->magic) != SVC_MAGIC ||
		slot < 0 || slot >= service->nslots)
	{
		ga_status_set(status, GA_ERR_INVALID, "there is no slot %d of the GPU service", slot);
		return NULL;
	}
	if (kind == GA_DEVICE_CPU)
		gpu_ordinal = 0;
	ndevices = SVC_LOAD(&service->ndevices);
	for (i = 0; i < ndevices && !found; i++)
		found = SVC_LOAD(&service->devices[i].kind) == (int32_t) kind &&
			(SVC_LOAD(&service->devices[i].ordinal) == gpu_ordinal ||
			 (kind == GA_DEVICE_GPU && gpu_ordinal == -1));
	if (!found)
	{
		if (ndevices == 0)
			ga_status_set(status, GA_ERR_NO_DEVICE, "the GPU service has not started");
		else if (kind == GA_DEVICE_CPU)
			ga_status_set(status, GA_ERR_NO_DEVICE, "the GPU service does not run the CPU device");
		else if (gpu_ordinal == -1)
			ga_status_set(status, GA_ERR_NO_DEVICE, "the GPU service runs no GPU");
		else
			ga_status_set(status, GA_ERR_NO_DEVICE, "the GPU service does not run GPU %d",
						  gpu_ordinal);
		return NULL;
	}

	pthread_mutex_lock(&client_lock);
	for (d = client_devices; d != NULL; d = d->next)
		if (d->service == service && d->slot == slot && d->pid == pid)
		{
			if (d->kind == kind && d->ordinal == gpu_ordinal)
				break;
			slot_known = 1;
		}
	if (d == NULL && (d = calloc(1, sizeof(ClientDevice))) == NULL)
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory opening a device");
	else if (d->device == NULL)
	{
		d->service = service;
		d->slot = slot;
		d->cslot = svc_client_slot(service, slot, 1);
		d->kind = kind;
		d->ordinal = gpu_ordinal;
		d->pid = pid;
		d->device = d->cslot == NULL ? NULL :
			ga_device_wrap(kind, &ga_service_ops, d, status);
		if (d->cslot == NULL)
			ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory opening a device");
		if (d->device == NULL)
		{
			free(d);
			d = NULL;
		}
		else
		{
			if (!slot_known)
			{
				service->slots[slot].held_objects = 0;
				SVC_STORE(&service->slots[slot].held_generation, 0);
			}
			d->next = client_devices;
			client_devices = d;
		}
	}
	pthread_mutex_unlock(&client_lock);
	return d != NULL ? d->device : NULL;
}

/* How long this thread's creates wait for room in the service (ms). */
void
ga_service_set_wait_ms(int ms)
{
	client_wait_ms = ms > 0 ? ms : 0;
}

/* What this thread's creates ask while they wait for room. */
void
ga_service_set_wait_callback(GaWaitCallback wait, void *arg)
{
	client_wait = wait;
	client_wait_arg = arg;
}

/* Whether device is a device of the service. */
int
ga_device_is_service(const GaDevice *device)
{
	return device != NULL && ga_device_ops(device) == &ga_service_ops;
}

/*
 * Destroy every object the client of slot holds in the service, after its
 * request in flight; its objects no longer count as held.  For a client
 * about to exit: no wait here lasts more than SVC_GIVE_UP_MS, and a slot
 * still busy then is left to the service, which drops the slot's objects
 * once the request in flight ends.
 */
void
ga_service_release(GaService *service, int slot_index)
{
	SvcSlot    *slot;
	SvcClientSlot *cs;
	uint64_t	generation;
	GaStatus	status;
	int			limit_ms = SVC_GIVE_UP_MS;

	if (service == NULL || slot_index < 0 || slot_index >= service->nslots)
		return;
	slot = &service->slots[slot_index];
	if ((cs = svc_client_slot(service, slot_index, 0)) != NULL)
	{
		limit_ms = svc_client_cleanup_ms(cs);
		cs->npending = 0;		/* the release drops them all */
	}
	generation = SVC_LOAD(&service->generation);
	SVC_STORE(&slot->cancel, 1);	/* a request left waiting for room gives up */
	/* a slot still busy is left to the service, which then releases it */
	if ((svc_slot_collect(service, slot, NULL, NULL, limit_ms) > 0 ||
		 !svc_slot_leave(slot, SVC_SLOT_LEFT | SVC_SLOT_GONE)) &&
		svc_serving(service, generation) &&
		svc_slot_collect(service, slot, NULL, NULL, 0) > 0)
	{
		memset(&slot->args, 0, sizeof(slot->args));
		slot->args.op = SVC_OP_RELEASE;
		slot->args.device = -1;
		(void) svc_slot_call(service, slot, generation, NULL, NULL,
							 limit_ms > 0 ? limit_ms : 1, &status);
	}
	slot->held_objects = 0;
	SVC_STORE(&slot->held_generation, 0);
}

/* The slot of a client device. */
static SvcSlot *
client_slot(const ClientDevice *device)
{
	return &device->service->slots[device->slot];
}

/*
 * Start an object for device: the generation the service serves and the
 * index of the device there (SVC_DEVICE_ANY_GPU for the service's choice
 * of GPU); 0 with status (GA_ERR_NO_DEVICE) when the service is not ready
 * or no longer runs the device.
 */
static int
object_start(ClientObject *obj, ClientDevice *device, GaStatus *status)
{
	GaService  *service = device->service;
	uint64_t	generation = SVC_LOAD(&service->generation);
	int			ndevices;
	int			i;

	obj->device = device;
	obj->gpu_ordinal = device->kind == GA_DEVICE_GPU ? device->ordinal : -1;
	if (!svc_serving(service, generation))
		return ga_status_set(status, GA_ERR_NO_DEVICE, "the GPU service is not ready");
	ndevices = SVC_LOAD(&service->ndevices);
	for (i = 0; i < ndevices; i++)
		if (SVC_LOAD(&service->devices[i].kind) == (int32_t) device->kind &&
			(SVC_LOAD(&service->devices[i].ordinal) == device->ordinal ||
			 (device->kind == GA_DEVICE_GPU && device->ordinal == -1)))
		{
			obj->generation = generation;
			obj->device_index = device->ordinal == -1 && device->kind == GA_DEVICE_GPU ?
				SVC_DEVICE_ANY_GPU : i;
			return 1;
		}
	return ga_status_set(status, GA_ERR_NO_DEVICE, "the GPU service no longer runs this device");
}

/*
 * The object the service made (the create's reply): its id, and the device
 * that runs it.
 */
static void
object_created(ClientObject *obj, const SvcReply *reply)
{
	GaService  *service = obj->device->service;

	obj->object = reply->object;
	if (reply->device >= 0 && reply->device < SVC_MAX_DEVICES)
	{
		obj->device_index = reply->device;
		obj->gpu_ordinal = SVC_LOAD(&service->devices[reply->device].kind) == GA_DEVICE_GPU ?
			SVC_LOAD(&service->devices[reply->device].ordinal) : -1;
	}
}

/*
 * Count the object as held in the slot (its arena memory), or no longer:
 * the first held object names the generation, the last one clears it.
 */
static void
object_hold(ClientObject *obj, int hold)
{
	SvcSlot    *slot = client_slot(obj->device);

	if (hold == obj->held)
		return;
	obj->held = hold;
	if (hold && slot->held_objects++ == 0)
	{
		SVC_STORE(&slot->client_pid, (int32_t) getpid());
		SVC_STORE(&slot->held_generation, obj->generation);
	}
	else if (!hold && --slot->held_objects <= 0)
	{
		slot->held_objects = 0;
		SVC_STORE(&slot->held_generation, 0);
	}
}

/*
 * The slot for a call on the object, idle, its arguments cleared to op;
 * NULL with status when the object failed before, its generation is not
 * served, or the slot stays busy longer than the query may wait (asking
 * wait meanwhile).
 */
static SvcSlot *
object_begin(ClientObject *obj, SvcOp op, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GaService  *service = obj->device->service;
	SvcSlot    *slot = client_slot(obj->device);
	int			limit_ms = client_wait_ms > SVC_GIVE_UP_MS ? client_wait_ms : SVC_GIVE_UP_MS;
	int			rc;

	if (!ga_failure_check(&obj->failure, status))
		return NULL;
	if (!svc_serving(service, obj->generation))
	{
		ga_failure_set(&obj->failure, status, GA_ERR_DEVICE, CLIENT_RESTARTED);
		return NULL;
	}
	rc = svc_client_ready(obj->device->cslot, wait, arg, limit_ms);
	if (rc < 0)
	{
		ga_failure_set(&obj->failure, status, GA_ERR_CANCELLED,
					   "cancelled while waiting for the GPU service");
		return NULL;
	}
	if (rc == 0)
	{
		ga_status_set(status, GA_ERR_DEVICE,
					  "the GPU service did not finish this session's previous request within %d ms",
					  limit_ms);
		ga_failure_set(&obj->failure, status, status->code, status->message);
		return NULL;
	}
	memset(&slot->args, 0, sizeof(slot->args));
	slot->args.op = op;
	slot->args.device = obj->device_index;
	slot->args.object = obj->object;
	return slot;
}

/*
 * Remember whether the object's last call (svc_slot_call's rc) was left to
 * the service: its reply is not to be read, and the slot stays busy until
 * the service ends it, so that cleanup does not wait for it.
 */
static void
object_left(ClientObject *obj, int rc)
{
	obj->left = rc == SVC_CALL_LEFT;
	if (obj->left)
		obj->device->cslot->stuck = 1;
}

/*
 * Settle the object's call whose svc_slot_await (or svc_slot_call) gave
 * rc: add its time queued, remember a failure of the call itself (the
 * service's object may be ahead of what the caller was told) and a call
 * left to the service.  1 when the reply is a success, else 0 with status.
 */
static int
object_settle(ClientObject *obj, int rc, GaStatus *status)
{
	if (rc >= 0)
		obj->queue_ns += client_slot(obj->device)->reply.queued_ns;
	if (rc < 0)
		ga_failure_set(&obj->failure, status, status->code, status->message);
	object_left(obj, rc);
	return rc > 0;
}

/* Wait for the reply of the request posted in the object's slot; as object_settle. */
static int
object_await(ClientObject *obj, GaWaitCallback wait, void *arg, GaStatus *status)
{
	return object_settle(obj, svc_slot_await(obj->device->service, client_slot(obj->device),
											 obj->generation, wait, arg, 0, status),
						 status);
}

/*
 * Make the call prepared by object_begin; 1, or 0 with status.  A failure
 * of the call itself (a cancel, a service gone) is remembered: the
 * service's object may be ahead of what the caller was told.
 */
static int
object_call(ClientObject *obj, GaWaitCallback wait, void *arg, GaStatus *status)
{
	svc_slot_post(obj->device->service, client_slot(obj->device), obj->generation);
	return object_await(obj, wait, arg, status);
}

/*
 * Post an operation on the slot that nobody waits for (its reply is
 * collected later); one that finds the slot busy longer than cleanup waits
 * is kept in the slot's pending list.
 */
static void
object_post(ClientObject *obj, SvcOp op, void *buffer)
{
	SvcPending	request = {op, obj->device_index, obj->object, obj->generation, buffer};

	svc_client_post(obj->device->cslot, &request);
}

/*
 * A staging buffer of bytes in the arena for the object's next call; NULL
 * with status (remembered: the call it was for fails).
 */
static void *
object_staging(ClientObject *obj, size_t bytes, GaWaitCallback wait, void *arg, GaStatus *status)
{
	SvcSlot    *slot = object_begin(obj, SVC_OP_ALLOC, wait, arg, status);
	int			rc;

	if (slot == NULL)
		return NULL;
	slot->args.buffer_bytes = bytes;
	slot->args.wait_ms = client_wait_ms;
	slot->reply.buffer = NULL;
	rc = svc_slot_call(obj->device->service, slot, obj->generation, wait, arg, 0, status);
	object_left(obj, rc);
	if (rc > 0)
		return slot->reply.buffer;
	if (rc == -1 && slot->reply.buffer != NULL)
		object_post(obj, SVC_OP_FREE, slot->reply.buffer);
	ga_failure_set(&obj->failure, status, status->code, status->message);
	return NULL;
}

/*
 * Call with a staging buffer the service frees when it runs the call; one
 * the call never reached is given back.  1, or 0 with status.
 */
static int
object_call_staged(ClientObject *obj, void *buffer, GaWaitCallback wait, void *arg,
				   GaStatus *status)
{
	int			rc = svc_slot_call(obj->device->service, client_slot(obj->device),
								   obj->generation, wait, arg, 0, status);

	/* refused if the call took it; the service frees it for a call left to it */
	if (rc == -1)
		object_post(obj, SVC_OP_FREE, buffer);
	return object_settle(obj, rc, status);
}

/* Copy into dest (the layout's bytes [at, at + len)) what the runs hold there. */
static void
runs_copy(unsigned char *dest, size_t at, size_t len, const ClientRun *runs, int nruns)
{
	int			i;

	for (i = 0; i < nruns; i++)
	{
		size_t		lo = runs[i].at > at ? runs[i].at : at;
		size_t		hi = runs[i].at + runs[i].len < at + len ? runs[i].at + runs[i].len : at + len;

		if (lo < hi)
			memcpy(dest + (lo - at), (const unsigned char *) runs[i].src + (lo - runs[i].at),
				   hi - lo);
	}
}

/*
 * Send a build side of `bytes`, whose layout the runs give, to the
 * object's staged bytes in the service, in pieces of at most
 * svc_stage_piece_bytes through two staging buffers the service keeps
 * between pieces: the next piece is copied into one while the service
 * copies the last one out of the other.  1, or 0 with status.
 */
static int
object_stage(ClientObject *obj, SvcOp op, const ClientRun *runs, int nruns, size_t bytes,
			 GaWaitCallback wait, void *arg, GaStatus *status)
{
	size_t		piece = bytes < svc_stage_piece_bytes ? bytes : svc_stage_piece_bytes;
	unsigned char *buffers[2] = {NULL, NULL};
	int			in_flight = 0;
	int			ok = 1;
	size_t		at = 0;
	int			i;

	for (i = 0; i < 2 && ok; i++)
		ok = (buffers[i] = object_staging(obj, piece, wait, arg, status)) != NULL;
	for (i = 0; ok && at < bytes; i ^= 1)
	{
		size_t		len = bytes - at < piece ? bytes - at : piece;
		SvcSlot    *slot;

		runs_copy(buffers[i], at, len, runs, nruns);
		if (in_flight && !object_await(obj, wait, arg, status))
		{
			in_flight = ok = 0;
			break;
		}
		in_flight = 0;
		if ((slot = object_begin(obj, op, wait, arg, status)) == NULL)
		{
			ok = 0;
			break;
		}
		slot->args.buffer = buffers[i];
		slot->args.buffer_bytes = len;
		slot->args.stage_at = at;
		slot->args.stage_bytes = bytes;
		svc_slot_post(obj->device->service, slot, obj->generation);
		in_flight = 1;
		at += len;
	}
	if (in_flight && !object_await(obj, wait, arg, status))
		ok = 0;
	for (i = 0; i < 2; i++)
		if (buffers[i] != NULL)
			object_post(obj, SVC_OP_FREE, buffers[i]);
	return ok;
}

/* Mirror the batch the service's device just handed out (slot's reply). */
static GaBatch *
object_batch(ClientObject *obj, const SvcReply *reply, GaStatus *status)
{
	ClientBatch *cb = NULL;
	int			b;
	int			c;

	for (b = 0; b < SVC_MAX_BATCHES && cb == NULL; b++)
		if (obj->batches[b].token == reply->token)
			cb = &obj->batches[b];
	for (b = 0; b < SVC_MAX_BATCHES && cb == NULL; b++)
		if (obj->batches[b].token == 0)
			cb = &obj->batches[b];
	if (cb == NULL)
	{
		ga_failure_set(&obj->failure, status, GA_ERR_DEVICE,
					   "the GPU service handed out more batches than its devices do");
		return NULL;
	}
	if (cb->ncolumns < reply->ncolumns)
	{
		GaColumn   *columns = calloc((size_t) reply->ncolumns, sizeof(GaColumn));

		if (columns == NULL)
		{
			ga_failure_set(&obj->failure, status, GA_ERR_OUT_OF_MEMORY,
						   "out of host memory for a batch of the GPU service");
			return NULL;
		}
		free(cb->columns);
		cb->columns = columns;
		cb->ncolumns = reply->ncolumns;
	}
	cb->token = reply->token;
	cb->descs = reply->columns;
	cb->batch.nrows = 0;
	cb->batch.capacity = reply->capacity;
	cb->batch.ncolumns = reply->ncolumns;
	cb->batch.columns = cb->columns;
	cb->batch.npages = 0;
	cb->batch.page_capacity = reply->page_capacity;
	cb->batch.pages = reply->pages;
	cb->batch.page_desc = reply->page_desc;
	for (c = 0; c < reply->ncolumns; c++)
	{
		GaColumn   *col = &cb->columns[c];

		col->type = (GaValueType) cb->descs[c].type;
		col->values = cb->descs[c].values;
		col->validity = cb->descs[c].validity;
		col->has_nulls = cb->descs[c].has_nulls;
		col->bytes = cb->descs[c].bytes;
		col->bytes_capacity = cb->descs[c].bytes_capacity;
	}
	return &cb->batch;
}

/*
 * Prepare the submit of a batch: its token, and each column's has_nulls
 * written where the service reads it; NULL with status when the batch is
 * not one the object handed out.
 */
static SvcSlot *
object_begin_submit(ClientObject *obj, SvcOp op, const GaBatch *batch, const char *what,
					GaWaitCallback wait, void *arg, GaStatus *status)
{
	ClientBatch *cb = NULL;
	SvcSlot    *slot;
	int			b;
	int			c;

	for (b = 0; b < SVC_MAX_BATCHES && cb == NULL; b++)
		if (obj->batches[b].token != 0 && batch == &obj->batches[b].batch)
			cb = &obj->batches[b];
	if (cb == NULL)
	{
		ga_status_set(status, GA_ERR_INVALID, "the submitted batch was not handed out by this %s",
					  what);
		return NULL;
	}
	slot = object_begin(obj, op, wait, arg, status);
	if (slot == NULL)
		return NULL;
	for (c = 0; c < cb->batch.ncolumns; c++)
		cb->descs[c].has_nulls = cb->columns[c].has_nulls != 0;
	slot->args.token = cb->token;
	slot->args.nrows = batch->nrows;
	slot->args.npages = batch->npages;
	return slot;
}

/*
 * Destroy the object in the service (op), not waiting, and stop holding
 * it; free its mirrors.
 */
static void
object_destroy(ClientObject *obj, SvcOp op)
{
	int			b;

	if (obj->object != 0)
		object_post(obj, op, NULL);
	object_hold(obj, 0);
	for (b = 0; b < SVC_MAX_BATCHES; b++)
		free(obj->batches[b].columns);
}

/* ------------------------------------------------------------------------
 * Aggregation
 * ------------------------------------------------------------------------
 */

/* Free an aggregation's mirror (the service's object is not touched). */
static void
agg_free(ClientAgg *agg)
{
	free(agg->from_build);
	free(agg->result.key_values);
	free(agg->result.key_isnull);
	free(agg->result.key_bytes);
	free(agg->result.values);
	free(agg);
}

/*
 * Make the create prepared in the slot, waiting for room as this thread's
 * wait says; 1, or 0 with status.  An object the service made for a call
 * that failed here (cancelled late) is destroyed with destroy_op.
 */
static int
object_create_call(ClientObject *obj, SvcSlot *slot, void *staged, SvcOp destroy_op,
				   GaStatus *status)
{
	int			ok;

	slot->args.wait_ms = client_wait_ms;
	slot->reply.object = 0;
	ok = staged == NULL ?
		object_call(obj, client_wait, client_wait_arg, status) :
		object_call_staged(obj, staged, client_wait, client_wait_arg, status);
	/* a create left to the service: the service drops what it made */
	if (!obj->left && slot->reply.object != 0)
	{
		object_created(obj, &slot->reply);
		if (!ok)
		{
			object_post(obj, destroy_op, NULL);
			obj->object = 0;
		}
	}
	return ok;
}

/*
 * Start an aggregation in the service: the request's deep copy goes in the
 * slot's payload, or in a staging buffer when larger.
 */
static void *
client_agg_create(void *device_impl, const GaAggRequest *request, GaStatus *status)
{
	ClientDevice *device = device_impl;
	size_t		bytes = svc_wire_size(request);
	ClientAgg  *agg = calloc(1, sizeof(ClientAgg));
	SvcSlot    *slot;
	void	   *buffer;

	if (agg == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting an aggregation");
		return NULL;
	}
	agg->ncolumns = request->ncolumns;
	if (request->join != NULL)
	{
		agg->from_build = malloc((size_t) (request->ncolumns > 0 ? request->ncolumns : 1));
		if (agg->from_build == NULL)
		{
			agg_free(agg);
			ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting an aggregation");
			return NULL;
		}
		memcpy(agg->from_build, request->join->from_build, (size_t) request->ncolumns);
	}
	if (!object_start(&agg->base, device, status))
	{
		agg_free(agg);
		return NULL;
	}
	object_hold(&agg->base, 1);
	slot = client_slot(device);
	if (bytes <= SVC_PAYLOAD_BYTES)
	{
		if (object_begin(&agg->base, SVC_OP_AGG_CREATE, client_wait, client_wait_arg, status) == NULL)
			goto fail;
		buffer = slot->payload;
	}
	else if ((buffer = object_staging(&agg->base, bytes, client_wait, client_wait_arg,
									  status)) == NULL ||
			 object_begin(&agg->base, SVC_OP_AGG_CREATE, client_wait, client_wait_arg, status) == NULL)
		goto fail;
	svc_wire_write(request, buffer);
	slot->args.buffer = buffer;
	slot->args.buffer_bytes = bytes;
	if (!object_create_call(&agg->base, slot, buffer == (void *) slot->payload ? NULL : buffer,
							SVC_OP_AGG_DESTROY, status))
		goto fail;
	agg->stats = slot->reply.stats.agg;
	return agg;

fail:
	object_hold(&agg->base, 0);
	agg_free(agg);
	return NULL;
}

/* Hand out the service's next batch, mirrored. */
static GaBatch *
client_agg_next_batch(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	ClientAgg  *agg = agg_impl;
	SvcSlot    *slot = object_begin(&agg->base, SVC_OP_AGG_NEXT_BATCH, wait, arg, status);

	if (slot == NULL || !object_call(&agg->base, wait, arg, status))
		return NULL;
	agg->stats = slot->reply.stats.agg;
	return object_batch(&agg->base, &slot->reply, status);
}

/* Submit a batch: its row count and each column's has_nulls. */
static int
client_agg_submit(void *agg_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	ClientAgg  *agg = agg_impl;
	SvcSlot    *slot = object_begin_submit(&agg->base, SVC_OP_AGG_SUBMIT, batch,
										   "aggregation", wait, arg, status);

	if (slot == NULL)
		return 0;
	if (!object_call(&agg->base, wait, arg, status))
		return 0;
	agg->stats = slot->reply.stats.agg;
	return 1;
}

/*
 * Give an aggjoin step's build side: keys, rows and the step's build
 * columns (a string column's bytes after its values and validity), laid
 * out as service_internal.h says, in one staging buffer or,
 * when larger than a piece, in pieces.
 */
static int
client_agg_build(void *agg_impl, int step, const int64_t *keys, const uint32_t *rows,
				 int64_t n, uint64_t key_seed, const GaBatch *payload, GaWaitCallback wait,
				 void *arg, GaStatus *status)
{
	ClientAgg  *agg = agg_impl;
	size_t		nrows = (size_t) payload->nrows;
	size_t		keys_at = svc_align((size_t) agg->ncolumns * sizeof(SvcColumnDesc));
	size_t		rows_at = keys_at + (keys != NULL ? svc_align((size_t) n * sizeof(int64_t)) : 0);
	size_t		bytes = rows_at + svc_align((size_t) n * sizeof(uint32_t));
	SvcColumnDesc *descs = calloc((size_t) (agg->ncolumns > 0 ? agg->ncolumns : 1),
								  sizeof(SvcColumnDesc));
	ClientRun  *runs = calloc((size_t) 3 + 3 * (size_t) agg->ncolumns, sizeof(ClientRun));
	int			nruns = 0;
	int			staged;
	unsigned char *buffer = NULL;
	SvcSlot    *slot;
	int			ok = 0;
	int			c;

	if (descs == NULL || runs == NULL)
	{
		ga_failure_set(&agg->base.failure, status, GA_ERR_OUT_OF_MEMORY,
					   "out of host memory for a build side of the GPU service");
		goto done;
	}

	/*
	 * Only the step's build columns are sent; the others stay empty (and so
	 * does what the caller left out: a column the device does not read).
	 * Descriptors hold offsets from the layout's start until its address
	 * is known.
	 */
	runs[nruns++] = (ClientRun) {descs, 0, (size_t) agg->ncolumns * sizeof(SvcColumnDesc)};
	if (keys != NULL && n > 0)
		runs[nruns++] = (ClientRun) {keys, keys_at, (size_t) n * sizeof(int64_t)};
	if (n > 0)
		runs[nruns++] = (ClientRun) {rows, rows_at, (size_t) n * sizeof(uint32_t)};
	for (c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];
		size_t		vbytes = nrows * (size_t) ga_type_width(col->type);

		descs[c].type = col->type;
		if (agg->from_build[c] != step + 1)
			continue;
		if (vbytes > 0 && col->values != NULL)
		{
			descs[c].values = (void *) (uintptr_t) bytes;
			runs[nruns++] = (ClientRun) {col->values, bytes, vbytes};
			bytes += svc_align(vbytes);
		}
		if (col->has_nulls && col->validity != NULL)
		{
			descs[c].validity = (uint8_t *) (uintptr_t) bytes;
			descs[c].has_nulls = 1;
			runs[nruns++] = (ClientRun) {col->validity, bytes, (nrows + 7) / 8};
			bytes += svc_align((nrows + 7) / 8);
		}
		if (col->type == GA_TYPE_STRING && col->values != NULL && nrows > 0)
		{
			size_t		used = ga_string_used(col, (int64_t) nrows);

			descs[c].bytes = (uint8_t *) (uintptr_t) bytes;
			descs[c].bytes_capacity = (int64_t) used;
			if (used > 0)
				runs[nruns++] = (ClientRun) {col->bytes, bytes, used};
			bytes += svc_align(used);
		}
	}
	staged = bytes > svc_stage_piece_bytes;
	if (staged)
	{
		if (!object_stage(&agg->base, SVC_OP_AGG_STAGE, runs, nruns, bytes, wait, arg, status))
			goto done;
	}
	else
	{
		if ((buffer = object_staging(&agg->base, bytes, wait, arg, status)) == NULL)
			goto done;
		for (c = 0; c < agg->ncolumns; c++)
		{
			if (descs[c].values != NULL)
				descs[c].values = buffer + (uintptr_t) descs[c].values;
			if (descs[c].validity != NULL)
				descs[c].validity = buffer + (uintptr_t) descs[c].validity;
			if (descs[c].bytes != NULL)
				descs[c].bytes = buffer + (uintptr_t) descs[c].bytes;
		}
		runs_copy(buffer, 0, bytes, runs, nruns);
	}

	slot = object_begin(&agg->base, SVC_OP_AGG_BUILD, wait, arg, status);
	if (slot == NULL)
		goto done;
	slot->args.step = step;
	slot->args.n = n;
	slot->args.nrows = payload->nrows;
	slot->args.key_seed = key_seed;
	slot->args.has_keys = keys != NULL;
	slot->args.staged = staged;
	slot->args.buffer = buffer;
	slot->args.buffer_bytes = bytes;
	if (staged ? !object_call(&agg->base, wait, arg, status) :
		!object_call_staged(&agg->base, buffer, wait, arg, status))
		goto done;
	agg->stats = slot->reply.stats.agg;
	ok = 1;
done:
	free(descs);
	free(runs);
	return ok;
}

/* Finish: the result's arrays are the service's, read where they lie. */
static const GaAggResult *
client_agg_finish(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	ClientAgg  *agg = agg_impl;
	GaAggResult *result = &agg->result;
	SvcSlot    *slot;
	void	   *const *arrays;
	int			k;
	int			a;

	if (agg->finished && ga_failure_check(&agg->base.failure, status))
		return result;
	slot = object_begin(&agg->base, SVC_OP_AGG_FINISH, wait, arg, status);
	if (slot == NULL || !object_call(&agg->base, wait, arg, status))
		return NULL;
	agg->stats = slot->reply.stats.agg;
	arrays = (void *const *) slot->payload;
	result->ngroups = slot->reply.ngroups;
	result->nkeys = slot->reply.nkeys;
	result->naggs = slot->reply.naggs;
	result->key_values = calloc((size_t) result->nkeys + 1, sizeof(int64_t *));
	result->key_isnull = calloc((size_t) result->nkeys + 1, sizeof(uint8_t *));
	result->values = calloc((size_t) result->naggs + 1, sizeof(void *));
	result->key_bytes = calloc((size_t) result->nkeys + 1, sizeof(uint8_t *));
	if (result->key_values == NULL || result->key_isnull == NULL || result->values == NULL ||
		result->key_bytes == NULL)
	{
		ga_failure_set(&agg->base.failure, status, GA_ERR_OUT_OF_MEMORY,
					   "out of host memory collecting the groups");
		return NULL;
	}
	for (k = 0; k < result->nkeys; k++)
	{
		result->key_values[k] = arrays[k];
		result->key_isnull[k] = arrays[result->nkeys + k];
		result->key_bytes[k] = arrays[2 * result->nkeys + result->naggs + k];
	}
	for (a = 0; a < result->naggs; a++)
		result->values[a] = arrays[2 * result->nkeys + a];
	if (result->nkeys == 0)
	{
		free(result->key_values);
		free(result->key_isnull);
		free(result->key_bytes);
		result->key_values = NULL;
		result->key_isnull = NULL;
		result->key_bytes = NULL;
	}
	agg->finished = 1;
	return result;
}

/* What the aggregation did, as of its last call. */
static void
client_agg_get_stats(const void *agg_impl, GaAggStats *stats)
{
	const ClientAgg *agg = agg_impl;

	*stats = agg->stats;
	stats->queue_ms = (double) agg->base.queue_ns / 1e6;
	stats->gpu_ordinal = agg->base.gpu_ordinal;
}

/* Destroy the aggregation in the service (not waited for) and its mirror. */
static void
client_agg_destroy(void *agg_impl)
{
	ClientAgg  *agg = agg_impl;

	if (agg == NULL)
		return;
	object_destroy(&agg->base, SVC_OP_AGG_DESTROY);
	agg_free(agg);
}

/* ------------------------------------------------------------------------
 * Hash join
 * ------------------------------------------------------------------------
 */

/* Start a join in the service. */
static void *
client_join_create(void *device_impl, const GaJoinRequest *request, GaStatus *status)
{
	ClientJoin *join = calloc(1, sizeof(ClientJoin));
	SvcSlot    *slot;

	if (join == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting a join");
		return NULL;
	}
	if (!object_start(&join->base, device_impl, status))
	{
		free(join);
		return NULL;
	}
	object_hold(&join->base, 1);
	slot = object_begin(&join->base, SVC_OP_JOIN_CREATE, client_wait, client_wait_arg, status);
	if (slot != NULL)
		slot->args.join = *request;
	if (slot == NULL ||
		!object_create_call(&join->base, slot, NULL, SVC_OP_JOIN_DESTROY, status))
	{
		object_hold(&join->base, 0);
		free(join);
		return NULL;
	}
	join->stats = slot->reply.stats.join;
	return join;
}

/* Build: keys and rows in one staging buffer or, when larger than a piece, in pieces. */
static int
client_join_build(void *join_impl, const int64_t *keys, const uint32_t *rows, int64_t n,
				  GaWaitCallback wait, void *arg, GaStatus *status)
{
	ClientJoin *join = join_impl;
	size_t		rows_at = svc_align((size_t) n * sizeof(int64_t));
	size_t		bytes = rows_at + (size_t) n * sizeof(uint32_t);
	ClientRun	runs[2] = {{keys, 0, (size_t) n * sizeof(int64_t)},
	{rows, rows_at, (size_t) n * sizeof(uint32_t)}};
	int			staged = bytes > svc_stage_piece_bytes;
	unsigned char *buffer = NULL;
	SvcSlot    *slot;

	if (staged)
	{
		if (!object_stage(&join->base, SVC_OP_JOIN_STAGE, runs, 2, bytes, wait, arg, status))
			return 0;
	}
	else
	{
		if ((buffer = object_staging(&join->base, bytes, wait, arg, status)) == NULL)
			return 0;
		if (n > 0)
			runs_copy(buffer, 0, bytes, runs, 2);
	}
	slot = object_begin(&join->base, SVC_OP_JOIN_BUILD, wait, arg, status);
	if (slot == NULL)
		return 0;
	slot->args.n = n;
	slot->args.staged = staged;
	slot->args.buffer = buffer;
	slot->args.buffer_bytes = bytes;
	if (staged ? !object_call(&join->base, wait, arg, status) :
		!object_call_staged(&join->base, buffer, wait, arg, status))
		return 0;
	join->sorted_rows = slot->reply.sorted_rows;
	join->stats = slot->reply.stats.join;
	return 1;
}

/* The build rows in key order, in the arena; NULL before a build. */
static const uint32_t *
client_join_sorted_rows(const void *join_impl)
{
	const ClientJoin *join = join_impl;

	return join->sorted_rows;
}

/* Hand out the service's probe batch, mirrored. */
static GaBatch *
client_join_next_batch(void *join_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	ClientJoin *join = join_impl;
	SvcSlot    *slot = object_begin(&join->base, SVC_OP_JOIN_NEXT_BATCH, wait, arg, status);

	if (slot == NULL || !object_call(&join->base, wait, arg, status))
		return NULL;
	join->stats = slot->reply.stats.join;
	return object_batch(&join->base, &slot->reply, status);
}

/* Probe: the answer's arrays are the service's, read where they lie. */
static const GaJoinMatches *
client_join_probe(void *join_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	ClientJoin *join = join_impl;
	SvcSlot    *slot = object_begin_submit(&join->base, SVC_OP_JOIN_PROBE, batch, "join",
										   wait, arg, status);

	if (slot == NULL || !object_call(&join->base, wait, arg, status))
		return NULL;
	join->matches = slot->reply.matches;
	join->stats = slot->reply.stats.join;
	return &join->matches;
}

/* What the join did, as of its last call. */
static void
client_join_get_stats(const void *join_impl, GaJoinStats *stats)
{
	const ClientJoin *join = join_impl;

	*stats = join->stats;
	stats->queue_ms = (double) join->base.queue_ns / 1e6;
	stats->gpu_ordinal = join->base.gpu_ordinal;
}

/* Destroy the join in the service (not waited for) and its mirror. */
static void
client_join_destroy(void *join_impl)
{
	ClientJoin *join = join_impl;

	if (join == NULL)
		return;
	object_destroy(&join->base, SVC_OP_JOIN_DESTROY);
	free(join);
}

const GaDeviceOps ga_service_ops = {
	.agg_create = client_agg_create,
	.agg_next_batch = client_agg_next_batch,
	.agg_submit = client_agg_submit,
	.agg_finish = client_agg_finish,
	.agg_get_stats = client_agg_get_stats,
	.agg_destroy = client_agg_destroy,
	.aggjoin_build = client_agg_build,
	.join_create = client_join_create,
	.join_build = client_join_build,
	.join_sorted_rows = client_join_sorted_rows,
	.join_next_batch = client_join_next_batch,
	.join_probe = client_join_probe,
	.join_get_stats = client_join_get_stats,
	.join_destroy = client_join_destroy,
	/* pages cross to the service's device, which decides (device.c) */
	.takes_pages = 1,
};
