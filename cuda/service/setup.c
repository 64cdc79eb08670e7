/*-------------------------------------------------------------------------
 *
 * service/setup.c
 *	  The GPU service's shared state from outside the service process:
 *	  its size and layout (the postmaster, once), its stop (a signal
 *	  handler of the service process), its loss (the supervisor, after the
 *	  service process died), its memory budget (the supervisor), and what
 *	  observers read (state, note, statistics).  Also the note, which the service process writes too.
 *
 * The note is a sequence lock: its writer (the supervisor or the service
 * process, never both at once: the supervisor writes only while no
 * service process runs) makes note_seq odd, writes, makes it even again;
 * a reader copies the note until it saw the same even number before and
 * after.  Every byte goes through an atomic access, so a reader racing a
 * writer reads a torn copy it then throws away, never undefined memory
 * (a writer that died mid-note makes readers give up after a while, and
 * the next write repairs the sequence).
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Bytes of the header, of one slot, and the slack to align them. */
#define SVC_HEADER_BYTES svc_align(sizeof(GaService))
#define SVC_SLOT_BYTES svc_align(sizeof(SvcSlot))
#define SVC_PAGE 4096

/* Bytes of shared memory a service of nslots clients and its arena take. */
size_t
ga_service_size(int nslots, size_t arena_bytes)
{
	if (nslots < 1)
		nslots = 1;
	/* the place may come unaligned; the arena starts on a page */
	return SVC_ALIGN + SVC_HEADER_BYTES + (size_t) nslots * SVC_SLOT_BYTES +
		SVC_PAGE + arena_bytes;
}

/* Lay the service out in place: header, slots, arena; no service yet. */
GaService *
ga_service_init(void *place, int nslots, size_t arena_bytes, GaStatus *status)
{
	uintptr_t	at = ((uintptr_t) place + SVC_ALIGN - 1) & ~(uintptr_t) (SVC_ALIGN - 1);
	GaService  *service = (GaService *) at;
	int			i;

	ga_status_ok(status);
	if (place == NULL || nslots < 1 || arena_bytes < (size_t) 1 << 20)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "the GPU service needs at least one slot and 1 MB of arena, not %d slots and %zu bytes",
					  nslots, arena_bytes);
		return NULL;
	}
	memset(service, 0, sizeof(GaService));
	service->nslots = nslots;
	service->arena_bytes = arena_bytes;
	service->state = GA_SERVICE_STOPPED;
	service->slots = (SvcSlot *) (at + SVC_HEADER_BYTES);
	at += SVC_HEADER_BYTES + (size_t) nslots * SVC_SLOT_BYTES;
	service->arena = (unsigned char *) ((at + SVC_PAGE - 1) & ~(uintptr_t) (SVC_PAGE - 1));
	if (sem_init(&service->work, 1, 0) != 0 || sem_init(&service->stopping, 1, 0) != 0)
	{
		ga_status_set(status, GA_ERR_DEVICE, "could not create the GPU service's semaphores: %s",
					  strerror(errno));
		return NULL;
	}
	for (i = 0; i < nslots; i++)
	{
		SvcSlot    *slot = &service->slots[i];

		memset(slot, 0, offsetof(SvcSlot, payload));
		if (sem_init(&slot->reply_posted, 1, 0) != 0)
		{
			ga_status_set(status, GA_ERR_DEVICE,
						  "could not create the GPU service's semaphores: %s", strerror(errno));
			return NULL;
		}
	}
	SVC_STORE(&service->magic, SVC_MAGIC);
	return service;
}

/*
 * Ask the service process (this one) to stop: its pid as the flag and
 * semaphore posts, nothing else, so that a signal handler may call it,
 * even before ga_service_serve began.
 */
void
ga_service_stop(GaService *service)
{
	int			n = service->nthreads;
	int			i;

	SVC_STORE(&service->stop, (int32_t) getpid());
	for (i = 0; i < n; i++)
		(void) sem_post(&service->work);
	(void) sem_post(&service->stopping);
}

/* Set each device's memory budget (bytes, 0: the default); the service applies it. */
void
ga_service_set_gpu_budget(GaService *service, int64_t bytes)
{
	SVC_STORE(&service->gpu_budget, bytes > 0 ? bytes : 0);
}

/*
 * The service process `pid` ended: fail every request in flight with its
 * pid and why (a client racing to take its queued request back or to post
 * one wins or loses each slot by compare-and-swap), count them, drop the
 * objects of its generation (none is active, none holds memory any more)
 * and mark the service restarting.  The state goes first, so that no
 * client posts after the slots were looked at without noticing.
 */
void
ga_service_lost(GaService *service, int pid, const char *why)
{
	char		message[GA_MESSAGE_LEN];
	int			ndevices = SVC_LOAD(&service->ndevices);
	int			i;

	SVC_STORE(&service->state, GA_SERVICE_RESTARTING);
	SVC_STORE(&service->pid, 0);
	svc_note_set(service, "the GPU service process %d ended: %s", pid, why);
	snprintf(message, sizeof(message),
			 "the GPU service process %d ended while this request ran: %s", pid, why);
	for (i = 0; i < service->nslots; i++)
	{
		int			device = -1;

		if (svc_slot_fail(service, &service->slots[i], 1, GA_ERR_DEVICE, message, &device) &&
			device >= 0 && device < ndevices)
			SVC_ADD(&service->devices[device].failures, 1);
	}
	SVC_STORE(&service->parked, 0);
	for (i = 0; i < ndevices; i++)
	{
		SVC_STORE(&service->devices[i].active, 0);
		SVC_STORE(&service->devices[i].memory_used, 0);
	}
}

/* Write the note (the service process, or the supervisor while none runs). */
void
svc_note_set(GaService *service, const char *fmt,...)
{
	char		text[SVC_NOTE_LEN];
	va_list		args;
	uint32_t	seq = SVC_LOAD(&service->note_seq);
	size_t		i;

	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	SVC_STORE(&service->note_seq, seq | 1);
	for (i = 0; i < SVC_NOTE_LEN; i++)
		__atomic_store_n(&service->note[i], text[i], __ATOMIC_RELAXED);
	SVC_STORE(&service->note_seq, (seq | 1) + 1);
}

/* The service's state, the pid of its process (0: none) and its note. */
GaServiceState
ga_service_state(const GaService *service, int *pid, char *note, size_t note_size)
{
	GaService  *s = (GaService *) service;

	if (pid != NULL)
		*pid = SVC_LOAD(&s->pid);
	if (note != NULL && note_size > 0)
	{
		char		copy[SVC_NOTE_LEN];
		uint32_t	before,
					after;
		size_t		i;
		int			tries = 0;

		/* a writer that died mid-note leaves it odd: give up after a while */
		do
		{
			before = SVC_LOAD(&s->note_seq);
			for (i = 0; i < SVC_NOTE_LEN; i++)
				copy[i] = __atomic_load_n(&s->note[i], __ATOMIC_RELAXED);
			after = SVC_LOAD(&s->note_seq);
		} while (((before & 1) != 0 || before != after) && ++tries < 1000);
		copy[SVC_NOTE_LEN - 1] = '\0';
		snprintf(note, note_size, "%s", copy);
	}
	return (GaServiceState) SVC_LOAD(&s->state);
}

/* Copy the statistics of every device the service runs; returns how many. */
int
ga_service_stats(const GaService *service, GaServiceDeviceStats *out, int max)
{
	GaService  *s = (GaService *) service;
	int			n = SVC_LOAD(&s->ndevices);
	int			i;

	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
	{
		SvcDeviceEntry *e = &s->devices[i];
		GaServiceDeviceStats *o = &out[i];

		memset(o, 0, sizeof(*o));
		o->kind = (GaDeviceKind) e->kind;
		o->gpu_ordinal = e->ordinal;
		o->queries = SVC_LOAD(&e->queries);
		o->batches = SVC_LOAD(&e->batches);
		o->rows = SVC_LOAD(&e->rows);
		o->bytes = SVC_LOAD(&e->bytes);
		o->device_ms = (double) SVC_LOAD(&e->device_ns) / 1e6;
		o->queue_ms = (double) SVC_LOAD(&e->queue_ns) / 1e6;
		o->cpu_fallbacks = SVC_LOAD(&e->cpu_fallbacks);
		o->out_of_memory = SVC_LOAD(&e->out_of_memory);
		o->failures = SVC_LOAD(&e->failures);
		o->active = SVC_LOAD(&e->active);
		o->memory_used = SVC_LOAD(&e->memory_used);
		o->memory_budget = SVC_LOAD(&e->memory_budget);
		o->tune_tuned = SVC_LOAD(&e->tune_tuned);
		o->tune_exploring = SVC_LOAD(&e->tune_exploring);
		o->tune_loaded = SVC_LOAD(&e->tune_loaded);
		o->tune_file = SVC_LOAD(&e->tune_file);
	}
	return n;
}

/* Count a query that a client ran on its own CPU device instead. */
void
ga_service_count_fallback(GaService *service, GaDeviceKind kind, int gpu_ordinal)
{
	int			n = SVC_LOAD(&service->ndevices);
	int			i;

	for (i = 0; i < n; i++)
	{
		SvcDeviceEntry *e = &service->devices[i];

		if (e->kind == (int32_t) kind &&
			(kind == GA_DEVICE_CPU || e->ordinal == gpu_ordinal || gpu_ordinal == -1))
		{
			SVC_ADD(&e->cpu_fallbacks, 1);
			return;
		}
	}
}

/* Zero every counter (not active, which counts what is open). */
void
ga_service_reset_stats(GaService *service)
{
	int			n = SVC_LOAD(&service->ndevices);
	int			i;

	for (i = 0; i < n; i++)
	{
		SvcDeviceEntry *e = &service->devices[i];

		SVC_STORE(&e->queries, 0);
		SVC_STORE(&e->batches, 0);
		SVC_STORE(&e->rows, 0);
		SVC_STORE(&e->bytes, 0);
		SVC_STORE(&e->device_ns, 0);
		SVC_STORE(&e->queue_ns, 0);
		SVC_STORE(&e->cpu_fallbacks, 0);
		SVC_STORE(&e->out_of_memory, 0);
		SVC_STORE(&e->failures, 0);
	}
}
