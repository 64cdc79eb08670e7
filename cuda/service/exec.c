/*-------------------------------------------------------------------------
 *
 * service/exec.c
 *	  The service process runs one request: the object table of each slot
 *	  (private to the process), the staging buffers a client asked for, and
 *	  each operation carried out on the real CPU or GPU device through its
 *	  table of entry points (device_impl.h).  The client's dispatcher has
 *	  already validated the request, checked the order of the calls,
 *	  hashed the keys of an aggjoin build of several keys and applied
 *	  fail_at_batch, so nothing is done twice here.
 *
 * A batch the device hands out stays the device's: the client gets, in
 * the arena, one SvcColumnDesc per column saying where its values and
 * validity are (the host provider put them in the arena), fills them in
 * place, writes each column's has_nulls into its descriptor and submits
 * the batch's token and row count; the device then finds its own batch
 * as it left it.  A result's arrays are the device's too: the client gets
 * their addresses in the slot's payload.
 *
 * Creates and staging ALLOCs go through admission (admit.c), which runs
 * them here when they fit (svc_exec_admitted) or parks them; everything
 * that gives memory back says so (svc_server_freed).  Device calls charge
 * what they put in the arena to their device.
 *
 * Calls on one device run side by side, each in the request thread that
 * took it, without a lock: every GPU object has its own stream, so the
 * work of several sessions overlaps on one GPU, and the CPU device's
 * objects share nothing.  A slot's calls come one at a time (its client
 * waits for each reply).  The device's wait callback is the slot's
 * cancel flag.  Every call updates the device's statistics in the shared
 * header and ends with the object's own statistics in the reply.
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The devices' wait callback: whether the slot's client asked to stop. */
static int
exec_wait(void *arg)
{
	SvcSlot    *slot = arg;

	return SVC_LOAD(&slot->cancel) != 0;
}

/* Enter a device call: what it puts in the arena is charged to the device. */
static void
device_enter(SvcServerDevice *device)
{
	svc_arena_charge(device->index);
}

/* The object `id` (from 1) of a slot if it is of kind; else NULL with status. */
static SvcObject *
object_get(SvcServerSlot *ss, int id, int kind, GaStatus *status)
{
	if (id < 1 || id > ss->nobjects || ss->objects[id - 1].kind != kind)
	{
		ga_status_set(status, GA_ERR_INVALID, "the GPU service has no such %s of this session",
					  kind == SVC_OBJECT_AGG ? "aggregation" : "join");
		return NULL;
	}
	return &ss->objects[id - 1];
}

/* A free entry of the slot's object table (its id), or 0 with status. */
static int
object_new(SvcServerSlot *ss, GaStatus *status)
{
	SvcObject  *grown;
	int			n;
	int			i;

	for (i = 0; i < ss->nobjects; i++)
		if (ss->objects[i].kind == 0)
			return i + 1;
	n = ss->nobjects > 0 ? 2 * ss->nobjects : 4;
	grown = realloc(ss->objects, (size_t) n * sizeof(SvcObject));
	if (grown == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory in the GPU service");
	memset(grown + ss->nobjects, 0, (size_t) (n - ss->nobjects) * sizeof(SvcObject));
	ss->objects = grown;
	i = ss->nobjects;
	ss->nobjects = n;
	return i + 1;
}

/*
 * The largest pinned buffer the service keeps for build sides sent in
 * pieces: a sixteenth of the machine's memory, at most 4 GB.  Page-locking
 * memory costs about as much as copying it, so the buffer is kept and
 * reused, not allocated per build; a build larger than this, or one that
 * finds the buffer in use, is staged in malloc'd memory.
 */
static size_t
pinned_limit(void)
{
	long		pages = sysconf(_SC_PHYS_PAGES);
	long		page_size = sysconf(_SC_PAGESIZE);
	size_t		limit = (size_t) 4 << 30;

	if (pages > 0 && page_size > 0 && (size_t) pages * (size_t) page_size / 16 < limit)
		limit = (size_t) pages * (size_t) page_size / 16;
	return limit;
}

/*
 * The server's pinned buffer for a staged build of bytes, grown if it is
 * smaller (in steps of 64 MB); NULL when it is in use, the build is larger
 * than pinned_limit, or no GPU gives pinned memory.
 */
static unsigned char *
pinned_take(SvcServer *server, size_t bytes)
{
	const size_t step = (size_t) 64 << 20;
	unsigned char *buffer = NULL;

	if (bytes > pinned_limit())
		return NULL;
	pthread_mutex_lock(&server->pinned_lock);
	if (!server->pinned_busy)
	{
		if (server->pinned == NULL || server->pinned_bytes < bytes)
		{
			size_t		want = (bytes + step - 1) / step * step;

			ga_gpu_host_free(server->pinned);
			server->pinned_bytes = 0;
			if ((server->pinned = ga_gpu_host_alloc(want)) != NULL)
				server->pinned_bytes = want;
		}
		if (server->pinned != NULL)
		{
			server->pinned_busy = 1;
			buffer = server->pinned;
		}
	}
	pthread_mutex_unlock(&server->pinned_lock);
	return buffer;
}

/* Give the server's pinned buffer back for the next staged build. */
static void
pinned_give(SvcServer *server)
{
	pthread_mutex_lock(&server->pinned_lock);
	server->pinned_busy = 0;
	pthread_mutex_unlock(&server->pinned_lock);
}

/* Free the server's pinned buffer (the service stops). */
void
svc_exec_free_pinned(SvcServer *server)
{
	ga_gpu_host_free(server->pinned);
	server->pinned = NULL;
	server->pinned_bytes = 0;
	server->pinned_busy = 0;
}

/*
 * Memory for an object's staged build side of bytes: the server's pinned
 * buffer the GPU copies from when the object runs on a GPU and the buffer
 * is free and large enough (pinned_limit), else malloc; NULL when out of
 * memory.
 */
static unsigned char *
staged_alloc(SvcServer *server, SvcObject *obj, size_t bytes)
{
	obj->staged_pinned = 0;
	if (server->devices[obj->device].kind == GA_DEVICE_GPU &&
		(obj->staged = pinned_take(server, bytes)) != NULL)
		obj->staged_pinned = 1;
	else
		obj->staged = malloc(bytes > 0 ? bytes : 1);
	return obj->staged;
}

/* Free an object's staged build side, if any. */
static void
staged_free(SvcServer *server, SvcObject *obj)
{
	if (obj->staged_pinned)
		pinned_give(server);
	else
		free(obj->staged);
	obj->staged = NULL;
	obj->staged_bytes = 0;
	obj->staged_pinned = 0;
}

/* Destroy an object on its device and free its entry. */
static void
object_drop(SvcServer *server, SvcObject *obj)
{
	SvcServerDevice *device = &server->devices[obj->device];
	int			b;

	device_enter(device);
	if (obj->kind == SVC_OBJECT_AGG)
		device->ops->agg_destroy(obj->impl);
	else
		device->ops->join_destroy(obj->impl);
	for (b = 0; b < obj->nbatches; b++)
		svc_arena_free(obj->descs[b]);
	staged_free(server, obj);
	SVC_ADD(&server->service->devices[obj->device].active, -1);
	memset(obj, 0, sizeof(*obj));
	svc_server_freed(server);
}

/* Record a staging buffer of the slot; 0 with status when it holds too many. */
static int
staging_add(SvcServerSlot *ss, void *buffer, size_t bytes, GaStatus *status)
{
	int			i;

	for (i = 0; i < SVC_MAX_STAGING; i++)
		if (ss->staging[i] == NULL)
		{
			ss->staging[i] = buffer;
			ss->staging_bytes[i] = bytes;
			return 1;
		}
	return ga_status_set(status, GA_ERR_INVALID,
						 "a session asked the GPU service for more than %d staging buffers",
						 SVC_MAX_STAGING);
}

/*
 * The entry of the slot's staging buffer at buffer, of at least bytes; -1
 * with status when the slot has no such buffer.
 */
static int
staging_find(SvcServerSlot *ss, const void *buffer, size_t bytes, GaStatus *status)
{
	int			i;

	for (i = 0; i < SVC_MAX_STAGING; i++)
		if (ss->staging[i] != NULL && ss->staging[i] == buffer && ss->staging_bytes[i] >= bytes)
			return i;
	ga_status_set(status, GA_ERR_INVALID,
				  "the GPU service has no such staging buffer of this session");
	return -1;
}

/*
 * Take back the slot's staging buffer at buffer, of at least bytes (the
 * caller frees it); 0 with status when the slot has no such buffer.
 */
static int
staging_take(SvcServerSlot *ss, const void *buffer, size_t bytes, GaStatus *status)
{
	int			i = staging_find(ss, buffer, bytes, status);

	if (i < 0)
		return 0;
	ss->staging[i] = NULL;
	ss->staging_bytes[i] = 0;
	return 1;
}

/* Free a staging buffer taken back, and tell admission. */
static void
staging_free(SvcServer *server, void *buffer)
{
	svc_arena_free(buffer);
	svc_server_freed(server);
}

/* Whether [p, p + bytes) lies inside [base, base + size). */
static int
inside(const void *p, size_t bytes, const void *base, size_t size)
{
	const unsigned char *q = p;
	const unsigned char *b = base;

	return q >= b && bytes <= size && (size_t) (q - b) <= size - bytes;
}

/*
 * Remember a batch the device handed out (its index in the object, with
 * the descriptors of its columns in the arena) and describe its columns;
 * -1 with status when the object has too many or the arena is full.
 */
static int
batch_describe(SvcObject *obj, GaBatch *batch, GaStatus *status)
{
	int			b;
	int			c;

	for (b = 0; b < obj->nbatches; b++)
		if (obj->batches[b] == batch)
			break;
	if (b == obj->nbatches)
	{
		if (b == SVC_MAX_BATCHES)
		{
			ga_status_set(status, GA_ERR_DEVICE, "a device handed out more than %d batches",
						  SVC_MAX_BATCHES);
			return -1;
		}
		obj->descs[b] = svc_arena_alloc((size_t) (batch->ncolumns > 0 ? batch->ncolumns : 1) *
										sizeof(SvcColumnDesc));
		if (obj->descs[b] == NULL)
		{
			ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
						  "the GPU service's shared memory is full");
			return -1;
		}
		obj->batches[b] = batch;
		obj->nbatches++;
	}
	for (c = 0; c < batch->ncolumns; c++)
	{
		SvcColumnDesc *d = &obj->descs[b][c];

		d->values = batch->columns[c].values;
		d->validity = batch->columns[c].validity;
		d->has_nulls = batch->columns[c].has_nulls;
		d->type = batch->columns[c].type;
		d->bytes = batch->columns[c].bytes;
		d->bytes_capacity = batch->columns[c].bytes_capacity;
	}
	return b;
}

/*
 * The batch of token (as batch_describe gave it), its row count, its heap
 * pages and its columns' has_nulls set from what the client wrote (the
 * device checks the counts); NULL with status.
 */
static GaBatch *
batch_submitted(SvcObject *obj, uint64_t token, int64_t nrows, int64_t npages,
				GaStatus *status)
{
	GaBatch    *batch;
	int			c;

	if (token < 1 || token > (uint64_t) obj->nbatches)
	{
		ga_status_set(status, GA_ERR_INVALID, "the submitted batch was not handed out by this %s",
					  obj->kind == SVC_OBJECT_AGG ? "aggregation" : "join");
		return NULL;
	}
	batch = obj->batches[token - 1];
	batch->nrows = nrows;
	batch->npages = batch->pages != NULL ? npages : 0;
	for (c = 0; c < batch->ncolumns; c++)
		batch->columns[c].has_nulls = obj->descs[token - 1][c].has_nulls != 0;
	return batch;
}

/* The statistics of an aggregation into the reply. */
static void
agg_stats(SvcServerDevice *device, SvcObject *obj, SvcReply *reply)
{
	memset(&reply->stats.agg, 0, sizeof(reply->stats.agg));
	device->ops->agg_get_stats(obj->impl, &reply->stats.agg);
}

/* The statistics of a join into the reply. */
static void
join_stats(SvcServerDevice *device, SvcObject *obj, SvcReply *reply)
{
	memset(&reply->stats.join, 0, sizeof(reply->stats.join));
	device->ops->join_get_stats(obj->impl, &reply->stats.join);
}

/* One thread's share of stage_copy. */
typedef struct StageCopy
{
	unsigned char *dest;
	const unsigned char *src;
	size_t		bytes;
} StageCopy;

/* Copy one share of a piece (a thread of stage_copy). */
static void *
stage_copy_share(void *arg)
{
	StageCopy  *share = arg;

	memcpy(share->dest, share->src, share->bytes);
	return NULL;
}

/*
 * Copy a piece of a build side into its staged bytes: a large piece in
 * STAGE_COPY_THREADS shares at once, since one thread's copy falls well
 * short of what the memory gives (the piece's sender copies the next
 * piece meanwhile); a thread that cannot start leaves its share to this
 * one.
 */
#define STAGE_COPY_THREADS 4
#define STAGE_COPY_SHARE_MIN ((size_t) 4 << 20)
static void
stage_copy(unsigned char *dest, const unsigned char *src, size_t bytes)
{
	StageCopy	shares[STAGE_COPY_THREADS];
	pthread_t	threads[STAGE_COPY_THREADS];
	int			started[STAGE_COPY_THREADS] = {0};
	int			n = bytes / STAGE_COPY_SHARE_MIN;
	size_t		share;
	int			i;

	if (n > STAGE_COPY_THREADS)
		n = STAGE_COPY_THREADS;
	if (n < 2)
	{
		memcpy(dest, src, bytes);
		return;
	}
	share = (bytes / n + 63) & ~(size_t) 63;
	for (i = 0; i < n; i++)
	{
		size_t		at = share * i < bytes ? share * i : bytes;

		shares[i] = (StageCopy) {dest + at, src + at, bytes - at < share ? bytes - at : share};
		if (i > 0)
			started[i] = pthread_create(&threads[i], NULL, stage_copy_share, &shares[i]) == 0;
	}
	for (i = 0; i < n; i++)
		if (!started[i])
			stage_copy_share(&shares[i]);
	for (i = 1; i < n; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
}

/*
 * Add a piece of a build side to the object's staged bytes (a piece at 0
 * starts them afresh, in memory staged_alloc gives).  The piece's staging
 * buffer stays the client's: it sends its next piece through it and frees
 * it.
 */
static void
exec_stage(SvcServer *server, SvcObject *obj, SvcSlot *slot, SvcServerSlot *ss, GaStatus *status)
{
	SvcArgs    *args = &slot->args;
	size_t		bytes = args->buffer_bytes;

	if (staging_find(ss, args->buffer, bytes, status) < 0)
		return;
	if (args->stage_at == 0)
	{
		staged_free(server, obj);
		if (args->stage_bytes > 0 && staged_alloc(server, obj, args->stage_bytes) == NULL)
			ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
						  "out of host memory in the GPU service for a build side of %.1f MB",
						  (double) args->stage_bytes / 1048576.0);
		else
			obj->staged_bytes = args->stage_bytes;
	}
	if (status->code == GA_OK)
	{
		if (obj->staged == NULL || args->stage_bytes != obj->staged_bytes ||
			args->stage_at > obj->staged_bytes || bytes > obj->staged_bytes - args->stage_at)
			ga_status_set(status, GA_ERR_INVALID,
						  "the GPU service received a piece of a build side out of place");
		else
			stage_copy(obj->staged + args->stage_at, args->buffer, bytes);
	}
}

/*
 * The bytes of a build: the object's staged pieces (all of them), or the
 * request's staging buffer (taken from the slot); 0 with status.
 */
static int
build_bytes(SvcObject *obj, SvcServerSlot *ss, const SvcArgs *args, unsigned char **buffer,
			size_t *bytes, GaStatus *status)
{
	*buffer = NULL;
	*bytes = 0;
	if (!args->staged)
	{
		*buffer = args->buffer;
		*bytes = args->buffer_bytes;
		return staging_take(ss, args->buffer, args->buffer_bytes, status);
	}
	if (obj->staged == NULL || obj->staged_bytes != args->buffer_bytes)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the GPU service received a build whose pieces are missing");
	*buffer = obj->staged;
	*bytes = obj->staged_bytes;
	return 1;
}

/* Where a column descriptor's pointer points: an offset in a staged build. */
static void *
build_address(const SvcArgs *args, unsigned char *buffer, const void *p)
{
	if (!args->staged || p == NULL)
		return (void *) p;
	return buffer + (uintptr_t) p;
}

/* Free a build's bytes once the device has them. */
static void
build_done(SvcServer *server, SvcObject *obj, const SvcArgs *args, unsigned char *buffer)
{
	if (!args->staged)
	{
		staging_free(server, buffer);
		return;
	}
	staged_free(server, obj);
}

/*
 * Point a build side's string column at its bytes (capacity of them at
 * strings), when they lie inside the buffer and its nrows end offsets
 * rise within them; 0 otherwise.
 */
static int
build_strings(GaColumn *col, uint8_t *strings, int64_t capacity, int64_t nrows,
			  unsigned char *buffer, size_t bytes)
{
	const uint32_t *ends = (const uint32_t *) col->values;
	uint32_t	start = 0;
	int64_t		r;

	if (capacity < 0 || (capacity > 0 && (strings == NULL ||
										  !inside(strings, (size_t) capacity, buffer, bytes))))
		return 0;
	for (r = 0; r < nrows; r++)
	{
		if (ends[r] < start || ends[r] > capacity)
			return 0;
		start = ends[r];
	}
	col->bytes = strings;
	col->bytes_capacity = capacity;
	return 1;
}

/* An aggregation's build side from a staging buffer (see client.c's layout). */
static int
exec_agg_build(SvcServer *server, SvcServerDevice *device, SvcObject *obj, SvcSlot *slot,
			   SvcServerSlot *ss, GaStatus *status)
{
	SvcArgs    *args = &slot->args;
	unsigned char *buffer;
	size_t		bytes;
	size_t		keys_at = svc_align((size_t) obj->ncolumns * sizeof(SvcColumnDesc));
	size_t		rows_at;
	const SvcColumnDesc *descs;
	GaBatch		payload;
	int			ok = 0;
	int			c;

	if (!build_bytes(obj, ss, args, &buffer, &bytes, status))
		return 0;
	descs = (const SvcColumnDesc *) buffer;
	memset(&payload, 0, sizeof(payload));
	if (args->n < 0 || args->n > GA_JOIN_MAX_BUILD_ROWS ||
		args->nrows < 0 || args->nrows > GA_JOIN_MAX_BUILD_ROWS)
		goto bad;
	rows_at = keys_at + (args->has_keys ? svc_align((size_t) args->n * sizeof(int64_t)) : 0);
	if (rows_at + (size_t) args->n * sizeof(uint32_t) > bytes)
		goto bad;
	payload.nrows = payload.capacity = args->nrows;
	payload.ncolumns = obj->ncolumns;
	payload.columns = calloc((size_t) (obj->ncolumns > 0 ? obj->ncolumns : 1), sizeof(GaColumn));
	if (payload.columns == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory in the GPU service");
		goto done;
	}
	for (c = 0; c < obj->ncolumns; c++)
	{
		const SvcColumnDesc *d = &descs[c];
		GaColumn   *col = &payload.columns[c];
		void	   *values = build_address(args, buffer, d->values);
		uint8_t    *validity = build_address(args, buffer, d->validity);

		uint8_t    *strings = build_address(args, buffer, d->bytes);

		if (d->type < GA_TYPE_NONE || d->type > GA_TYPE_STRING ||
			(values != NULL &&
			 !inside(values, (size_t) args->nrows * ga_type_width((GaValueType) d->type),
					 buffer, bytes)) ||
			(d->has_nulls &&
			 (validity == NULL ||
			  !inside(validity, (size_t) (args->nrows + 7) / 8, buffer, bytes))))
			goto bad;
		col->type = (GaValueType) d->type;
		col->values = values;
		col->validity = validity;
		col->has_nulls = d->has_nulls != 0;
		if (col->type == GA_TYPE_STRING && values != NULL &&
			!build_strings(col, strings, d->bytes_capacity, args->nrows, buffer, bytes))
			goto bad;
	}
	device_enter(device);
	ok = device->ops->aggjoin_build(obj->impl, args->step,
									args->has_keys ? (const int64_t *) (buffer + keys_at) : NULL,
									(const uint32_t *) (buffer + rows_at), args->n,
									args->key_seed, &payload, exec_wait, slot, status);
	goto done;

bad:
	ga_status_set(status, GA_ERR_INVALID, "the GPU service received a malformed build side");
done:
	free(payload.columns);
	build_done(server, obj, args, buffer);
	return ok;
}

/* A join's build from a staging buffer: n keys, then n rows. */
static int
exec_join_build(SvcServer *server, SvcServerDevice *device, SvcObject *obj, SvcSlot *slot,
				SvcServerSlot *ss, GaStatus *status)
{
	SvcArgs    *args = &slot->args;
	unsigned char *buffer;
	size_t		bytes;
	size_t		rows_at;
	int			ok = 0;

	if (!build_bytes(obj, ss, args, &buffer, &bytes, status))
		return 0;
	rows_at = svc_align((size_t) (args->n > 0 ? args->n : 0) * sizeof(int64_t));
	if (args->n < 0 || args->n > GA_JOIN_MAX_BUILD_ROWS ||
		rows_at + (size_t) args->n * sizeof(uint32_t) > bytes)
		ga_status_set(status, GA_ERR_INVALID, "the GPU service received a malformed build side");
	else
	{
		device_enter(device);
		ok = device->ops->join_build(obj->impl, (const int64_t *) buffer,
									 (const uint32_t *) (buffer + rows_at), args->n,
									 exec_wait, slot, status);
		if (ok)
			slot->reply.sorted_rows = device->ops->join_sorted_rows(obj->impl);
	}
	build_done(server, obj, args, buffer);
	return ok;
}

/*
 * The aggregation request of the slot's create, read from its payload or
 * from the staging buffer it names (which stays the slot's); NULL with the
 * reply's status when either is malformed.
 */
const GaAggRequest *
svc_exec_agg_request(SvcServer *server, int index)
{
	SvcSlot    *slot = &server->service->slots[index];
	SvcArgs    *args = &slot->args;
	GaStatus   *status = &slot->reply.status;

	if (args->buffer != (void *) slot->payload)
	{
		if (staging_find(&server->slots[index], args->buffer, args->buffer_bytes, status) < 0)
			return NULL;
	}
	else if (args->buffer_bytes > SVC_PAYLOAD_BYTES)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "the GPU service received a malformed aggregation request");
		return NULL;
	}
	return svc_wire_read(args->buffer, args->buffer_bytes, status);
}

/* Count a new object of device `index` and describe it in the reply. */
static void
object_created(SvcServer *server, SvcObject *obj, int kind, int index, SvcSlot *slot, int id)
{
	obj->kind = kind;
	obj->device = index;
	slot->reply.object = id;
	slot->reply.device = index;
	SVC_ADD(&server->service->devices[index].queries, 1);
	SVC_ADD(&server->service->devices[index].active, 1);
}

/*
 * Create an aggregation on device `index` from the request's copy (payload
 * or staging buffer, which is freed unless the create found no room).
 */
static int
exec_agg_create(SvcServer *server, int index, SvcSlot *slot, SvcServerSlot *ss,
				GaStatus *status)
{
	SvcServerDevice *device = &server->devices[index];
	SvcArgs    *args = &slot->args;
	int			staged = args->buffer != (void *) slot->payload;
	const GaAggRequest *request;
	int			id;

	if ((request = svc_exec_agg_request(server, (int) (slot - server->service->slots))) != NULL &&
		(id = object_new(ss, status)) > 0)
	{
		SvcObject  *obj = &ss->objects[id - 1];

		device_enter(device);
		obj->impl = device->ops->agg_create(device->impl, request, status);
		if (obj->impl == NULL && status->code == GA_ERR_OUT_OF_MEMORY)
			return SVC_RUN_NO_ROOM;
		if (obj->impl != NULL)
		{
			object_created(server, obj, SVC_OBJECT_AGG, index, slot, id);
			obj->ncolumns = request->ncolumns;
			agg_stats(device, obj, &slot->reply);
		}
	}
	if (staged && staging_take(ss, args->buffer, args->buffer_bytes, status))
		staging_free(server, args->buffer);
	return SVC_RUN_DONE;
}

/* Create a join on device `index`. */
static int
exec_join_create(SvcServer *server, int index, SvcSlot *slot, SvcServerSlot *ss,
				 GaStatus *status)
{
	SvcServerDevice *device = &server->devices[index];
	int			id = object_new(ss, status);
	SvcObject  *obj;

	if (id == 0)
		return SVC_RUN_DONE;
	obj = &ss->objects[id - 1];
	device_enter(device);
	obj->impl = device->ops->join_create(device->impl, &slot->args.join, status);
	if (obj->impl == NULL)
		return status->code == GA_ERR_OUT_OF_MEMORY ? SVC_RUN_NO_ROOM : SVC_RUN_DONE;
	object_created(server, obj, SVC_OBJECT_JOIN, index, slot, id);
	obj->ncolumns = 1;
	join_stats(device, obj, &slot->reply);
	return SVC_RUN_DONE;
}

/* Hand out an object's next batch and describe it to the client. */
static void
exec_next_batch(SvcServerDevice *device, SvcObject *obj, SvcSlot *slot, GaStatus *status)
{
	GaBatch    *batch;
	int			b;

	device_enter(device);
	if (obj->kind == SVC_OBJECT_AGG)
		batch = device->ops->agg_next_batch(obj->impl, exec_wait, slot, status);
	else
		batch = device->ops->join_next_batch(obj->impl, exec_wait, slot, status);
	if (batch == NULL || (b = batch_describe(obj, batch, status)) < 0)
		return;
	slot->reply.token = (uint64_t) b + 1;
	slot->reply.capacity = batch->capacity;
	slot->reply.ncolumns = batch->ncolumns;
	slot->reply.columns = obj->descs[b];
	slot->reply.pages = batch->pages;
	slot->reply.page_desc = batch->page_desc;
	slot->reply.page_capacity = batch->pages != NULL ? batch->page_capacity : 0;
}

/* Submit an aggregation's batch, or probe a join with one. */
static int
exec_submit(SvcServerDevice *device, SvcObject *obj, SvcSlot *slot, GaStatus *status)
{
	GaBatch    *batch = batch_submitted(obj, slot->args.token, slot->args.nrows,
										slot->args.npages, status);
	int			ok = 0;

	if (batch == NULL)
		return 0;
	device_enter(device);
	if (obj->kind == SVC_OBJECT_AGG)
		ok = device->ops->agg_submit(obj->impl, batch, exec_wait, slot, status);
	else
	{
		const GaJoinMatches *matches = device->ops->join_probe(obj->impl, batch, exec_wait,
															   slot, status);

		if (matches != NULL)
		{
			slot->reply.matches = *matches;
			ok = 1;
		}
	}
	return ok;
}

/* Finish an aggregation: the result's arrays into the payload. */
static void
exec_agg_finish(SvcServerDevice *device, SvcObject *obj, SvcSlot *slot, GaStatus *status)
{
	const GaAggResult *result;
	void	  **arrays = (void **) slot->payload;
	int			k;
	int			a;

	device_enter(device);
	result = device->ops->agg_finish(obj->impl, exec_wait, slot, status);
	if (result == NULL)
		return;
	if ((size_t) (3 * result->nkeys + result->naggs) * sizeof(void *) > SVC_PAYLOAD_BYTES)
	{
		ga_status_set(status, GA_ERR_DEVICE, "a result of %d keys and %d aggregates is too wide",
					  result->nkeys, result->naggs);
		return;
	}
	for (k = 0; k < result->nkeys; k++)
	{
		arrays[k] = result->key_values[k];
		arrays[result->nkeys + k] = result->key_isnull[k];
	}
	for (a = 0; a < result->naggs; a++)
		arrays[2 * result->nkeys + a] = result->values[a];
	/* string keys' bytes last (NULL for other keys) */
	for (k = 0; k < result->nkeys; k++)
		arrays[2 * result->nkeys + result->naggs + k] =
			result->key_bytes != NULL ? result->key_bytes[k] : NULL;
	slot->reply.ngroups = result->ngroups;
	slot->reply.nkeys = result->nkeys;
	slot->reply.naggs = result->naggs;
}

/* Run an operation on an existing object; updates the device's statistics. */
static void
exec_object_op(SvcServer *server, SvcSlot *slot, SvcServerSlot *ss, GaStatus *status)
{
	SvcArgs    *args = &slot->args;
	int			kind = args->op >= SVC_OP_JOIN_CREATE ? SVC_OBJECT_JOIN : SVC_OBJECT_AGG;
	SvcObject  *obj = object_get(ss, args->object, kind, status);
	SvcServerDevice *device;
	SvcDeviceEntry *entry;
	int64_t		bytes_before;
	int64_t		start;
	int			batches = 0;

	if (obj == NULL)
		return;
	device = &server->devices[obj->device];
	entry = &server->service->devices[obj->device];
	if (args->op == SVC_OP_AGG_DESTROY || args->op == SVC_OP_JOIN_DESTROY)
	{
		object_drop(server, obj);
		return;
	}
	if (kind == SVC_OBJECT_AGG)
		agg_stats(device, obj, &slot->reply);
	else
		join_stats(device, obj, &slot->reply);
	bytes_before = kind == SVC_OBJECT_AGG ? slot->reply.stats.agg.bytes_sent :
		slot->reply.stats.join.bytes_sent;
	start = svc_now_ns();
	switch (args->op)
	{
		case SVC_OP_AGG_NEXT_BATCH:
		case SVC_OP_JOIN_NEXT_BATCH:
			exec_next_batch(device, obj, slot, status);
			break;
		case SVC_OP_AGG_SUBMIT:
		case SVC_OP_JOIN_PROBE:
			batches = exec_submit(device, obj, slot, status);
			break;
		case SVC_OP_AGG_BUILD:
			(void) exec_agg_build(server, device, obj, slot, ss, status);
			break;
		case SVC_OP_AGG_FINISH:
			exec_agg_finish(device, obj, slot, status);
			break;
		case SVC_OP_JOIN_BUILD:
			(void) exec_join_build(server, device, obj, slot, ss, status);
			break;
		case SVC_OP_AGG_STAGE:
		case SVC_OP_JOIN_STAGE:
			exec_stage(server, obj, slot, ss, status);
			break;
		default:
			ga_status_set(status, GA_ERR_INVALID, "the GPU service received an unknown request");
			break;
	}
	SVC_ADD(&entry->device_ns, svc_now_ns() - start);
	if (kind == SVC_OBJECT_AGG)
	{
		agg_stats(device, obj, &slot->reply);
		SVC_ADD(&entry->bytes, slot->reply.stats.agg.bytes_sent - bytes_before);
	}
	else
	{
		join_stats(device, obj, &slot->reply);
		SVC_ADD(&entry->bytes, slot->reply.stats.join.bytes_sent - bytes_before);
	}
	if (batches)
	{
		SVC_ADD(&entry->batches, 1);
		SVC_ADD(&entry->rows, args->nrows);
	}
}

/* A staging buffer for the slot's client, charged to device `index`. */
static int
exec_alloc(int index, SvcSlot *slot, SvcServerSlot *ss, GaStatus *status)
{
	size_t		bytes = slot->args.buffer_bytes;
	void	   *buffer;

	svc_arena_charge(index);
	buffer = svc_arena_alloc(bytes);
	if (buffer == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "the GPU service's shared memory has no room for %.1f MB",
					  (double) bytes / 1048576.0);
		return SVC_RUN_NO_ROOM;
	}
	if (!staging_add(ss, buffer, bytes, status))
		svc_arena_free(buffer);
	else
		slot->reply.buffer = buffer;
	return SVC_RUN_DONE;
}

/*
 * Run the create or ALLOC of slot index on device `device` (admission
 * chose it); the status is in the reply.  SVC_RUN_NO_ROOM: it found no
 * room (the status says so) and may run again.
 */
int
svc_exec_admitted(SvcServer *server, int index, int device)
{
	SvcSlot    *slot = &server->service->slots[index];
	SvcServerSlot *ss = &server->slots[index];
	GaStatus   *status = &slot->reply.status;

	ga_status_ok(status);
	if (slot->args.op == SVC_OP_ALLOC)
		return exec_alloc(device, slot, ss, status);
	if (slot->args.op == SVC_OP_AGG_CREATE)
		return exec_agg_create(server, device, slot, ss, status);
	return exec_join_create(server, device, slot, ss, status);
}

/*
 * End a request its client left (slot.c): what it made for the client is
 * dropped (an ALLOC's buffer, a create's object), and with SVC_SLOT_GONE
 * every object of the slot; then the slot takes requests again.
 */
static void
exec_left(SvcServer *server, int index)
{
	SvcSlot    *slot = &server->service->slots[index];
	SvcServerSlot *ss = &server->slots[index];
	SvcReply   *reply = &slot->reply;
	GaStatus	ignored;

	if (slot->args.op == SVC_OP_ALLOC && reply->status.code == GA_OK &&
		reply->buffer != NULL && staging_take(ss, reply->buffer, 0, &ignored))
		staging_free(server, reply->buffer);
	if ((slot->args.op == SVC_OP_AGG_CREATE || slot->args.op == SVC_OP_JOIN_CREATE) &&
		reply->status.code == GA_OK && reply->object >= 1 && reply->object <= ss->nobjects &&
		ss->objects[reply->object - 1].kind != 0)
		object_drop(server, &ss->objects[reply->object - 1]);
	if ((SVC_LOAD(&slot->state) & SVC_SLOT_GONE) != 0)
		svc_exec_release(server, index);
	svc_slot_end(slot);
}

/*
 * Hand the reply of slot index to its client, counting an out-of-memory
 * one against device (an index of the service's devices, or none).  The
 * staging buffer the request named is the service's to free once it is
 * answered, whether or not the request ran, except a stage's, which its
 * client sends its next piece through and frees.  A request its client
 * left ends here (exec_left).
 */
void
svc_exec_reply(SvcServer *server, int index, int device)
{
	GaService  *service = server->service;
	SvcSlot    *slot = &service->slots[index];
	SvcArgs    *args = &slot->args;
	GaStatus	ignored;

	if (slot->reply.status.code == GA_ERR_OUT_OF_MEMORY && device >= 0 &&
		device < server->ndevices)
		SVC_ADD(&service->devices[device].out_of_memory, 1);
	if (args->op != SVC_OP_ALLOC && args->op != SVC_OP_FREE && args->op != SVC_OP_AGG_STAGE &&
		args->op != SVC_OP_JOIN_STAGE && args->buffer != NULL &&
		args->buffer != (void *) slot->payload &&
		staging_take(&server->slots[index], args->buffer, 0, &ignored))
		staging_free(server, args->buffer);
	if (!svc_slot_reply(service, slot))
		exec_left(server, index);
}

/*
 * Run the request of slot `index` (RUNNING, queued for queued_ns) and
 * reply, returning 1; or return 0 for a create or ALLOC that may run,
 * which admission (admit.c) then runs or parks.  A slot whose client
 * changed loses its old client's objects first; a request for another
 * generation fails.
 */
int
svc_exec(SvcServer *server, int index, int64_t queued_ns)
{
	GaService  *service = server->service;
	SvcSlot    *slot = &service->slots[index];
	SvcServerSlot *ss = &server->slots[index];
	SvcArgs    *args = &slot->args;
	GaStatus   *status = &slot->reply.status;
	int			device = args->device;
	int			creates = args->op == SVC_OP_AGG_CREATE || args->op == SVC_OP_JOIN_CREATE ||
		args->op == SVC_OP_ALLOC;
	int			d;

	memset(&slot->reply, 0, offsetof(SvcReply, stats));
	ga_status_ok(status);
	if (SVC_LOAD(&slot->client_pid) != ss->pid)
	{
		svc_exec_release(server, index);
		ss->pid = SVC_LOAD(&slot->client_pid);
	}
	slot->reply.queued_ns = queued_ns;
	slot->reply.device = -1;
	/* the time queued counts against the device asked for (any GPU: the first) */
	for (d = 0; device == SVC_DEVICE_ANY_GPU && d < server->ndevices; d++)
		if (server->devices[d].kind == GA_DEVICE_GPU)
			device = d;
	if (device >= 0 && device < server->ndevices)
		SVC_ADD(&service->devices[device].queue_ns, queued_ns);
	if (slot->generation != server->generation)
		ga_status_set(status, GA_ERR_DEVICE, "the GPU service restarted while this query ran");
	else if (creates && (device < 0 || device >= server->ndevices))
		ga_status_set(status, GA_ERR_NO_DEVICE, "the GPU service does not run device %d",
					  args->device);
	else if (creates)
		return 0;
	else if (args->op == SVC_OP_RELEASE)
		svc_exec_release(server, index);
	else if (args->op == SVC_OP_FREE)
	{
		if (staging_take(ss, args->buffer, 0, status))
			staging_free(server, args->buffer);
	}
	else if (args->op > SVC_OP_RELEASE && args->op <= SVC_OP_JOIN_DESTROY)
		exec_object_op(server, slot, ss, status);
	else
		ga_status_set(status, GA_ERR_INVALID, "the GPU service received an unknown request");
	svc_exec_reply(server, index, device);
	return 1;
}

/* Destroy every object of a slot and free its staging buffers. */
void
svc_exec_release(SvcServer *server, int index)
{
	SvcServerSlot *ss = &server->slots[index];
	int			i;

	for (i = 0; i < ss->nobjects; i++)
		if (ss->objects[i].kind != 0)
			object_drop(server, &ss->objects[i]);
	for (i = 0; i < SVC_MAX_STAGING; i++)
	{
		svc_arena_free(ss->staging[i]);
		ss->staging[i] = NULL;
		ss->staging_bytes[i] = 0;
	}
	svc_server_freed(server);
}
