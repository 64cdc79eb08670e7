/*-------------------------------------------------------------------------
 *
 * service/slot.c
 *	  The protocol of a slot (service/service_internal.h tells it): a client posts
 *	  a request and waits for its reply, asking its wait callback every
 *	  SVC_WAIT_STEP_MS; a request thread of the service takes the oldest
 *	  request and replies; whoever outlives a service process fails its
 *	  requests.
 *
 * Every change of a slot's state is one atomic store or compare-and-swap,
 * so that the client taking its queued request back, a request thread
 * taking it, and the supervisor failing it after the service died each
 * win or lose it whole.  The reply's semaphore is posted exactly once per
 * transition to REPLY, after the reply is written; the client reads a
 * reply only after taking that post and seeing REPLY (or seeing REPLY
 * from a service that is gone: it may have died before its post).  A post
 * the client did not take is then left over; seeing no REPLY after
 * taking it, the next wait goes on waiting.
 *
 * No wait of a client outlives a request that the service never answers
 * (a thread stuck in a device call, a stopped process).  A call whose
 * wait callback said stop waits SVC_GIVE_UP_MS more for the service to
 * see the cancel flag, and a call of a client about to exit waits its own
 * bound; then the client leaves the request to the service (SVC_SLOT_LEFT,
 * added by compare-and-swap, so that the reply and the leaving never both
 * win): the service ends a left request itself, dropping what it made for
 * nobody, and makes the slot IDLE, without a post.  Until then the slot
 * takes no new request, and the client's waits for it are bounded too:
 * a process's entry of the slot (svc_client_slot) keeps the requests
 * nobody waits for that found it busy, and posts them before its next.
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* sem_clockwait */
#endif

#include "service_internal.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* This process's entries of the slots it uses (svc_client_slot). */
static pthread_mutex_t client_slots_lock = PTHREAD_MUTEX_INITIALIZER;
static SvcClientSlot *client_slots;

/* sem_clockwait (glibc 2.30) waits on the monotonic clock. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 30))
#define SVC_HAVE_CLOCKWAIT 1
#endif

/* Wait up to SVC_WAIT_STEP_MS for the slot's reply; 1 when it came. */
static int
slot_wait_step(SvcSlot *slot)
{
	struct timespec until;

#ifdef SVC_HAVE_CLOCKWAIT
	clock_gettime(CLOCK_MONOTONIC, &until);
#else
	clock_gettime(CLOCK_REALTIME, &until);
#endif
	until.tv_nsec += SVC_WAIT_STEP_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L)
	{
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
#ifdef SVC_HAVE_CLOCKWAIT
	return sem_clockwait(&slot->reply_posted, CLOCK_MONOTONIC, &until) == 0;
#else
	return sem_timedwait(&slot->reply_posted, &until) == 0;
#endif
}

/*
 * Whether the slot holds a reply, after its semaphore was taken: always,
 * since REPLY is stored before the post, and the load (an acquire of that
 * store) orders the reply's writes before the client's reads of it, and
 * the service's reads of the request before the client's next writes.
 */
static int
slot_replied(SvcSlot *slot)
{
	return SVC_LOAD(&slot->state) == SVC_SLOT_REPLY;
}

/* Milliseconds since `since_ns` on the monotonic clock. */
static int64_t
slot_ms_since(int64_t since_ns)
{
	return (svc_now_ns() - since_ns) / 1000000;
}

/* Make the request in slot->args the slot's, for generation, and wake a thread. */
static void
slot_post(GaService *service, SvcSlot *slot, uint64_t generation)
{
	SVC_STORE(&slot->cancel, 0);
	SVC_STORE(&slot->client_pid, (int32_t) getpid());
	slot->generation = generation;
	slot->posted_ns = svc_now_ns();
	SVC_STORE(&slot->ticket, __atomic_fetch_add(&service->next_ticket, 1, __ATOMIC_SEQ_CST));
	SVC_STORE(&slot->state, SVC_SLOT_REQUEST);
	(void) sem_post(&service->work);
}

/*
 * Leave the slot's request to the service, adding flags (SVC_SLOT_LEFT,
 * with SVC_SLOT_GONE when the client exits); 1 when it did, 0 when the
 * request is answered already (REPLY: the caller takes the reply) or
 * there is none (IDLE).
 */
int
svc_slot_leave(SvcSlot *slot, uint32_t flags)
{
	for (;;)
	{
		uint32_t	state = SVC_LOAD(&slot->state);

		if (state == SVC_SLOT_IDLE || state == SVC_SLOT_REPLY)
			return 0;
		if ((state | flags) == state ||
			svc_cas_u32(&slot->state, state, state | flags))
			return 1;
	}
}

/*
 * Post the request in slot->args (the slot is IDLE) and wait for its
 * reply, asking wait (if any) right away and then every
 * SVC_WAIT_STEP_MS.  When wait says stop, a queued request is taken back
 * and fails with GA_ERR_CANCELLED; a running one is asked to stop, and its
 * reply counts as cancelled even if it succeeded, so that a call during
 * which the callback said stop always fails with GA_ERR_CANCELLED; a
 * running one that does not answer within SVC_GIVE_UP_MS of the stop is
 * left to the service (svc_slot_leave) and fails so.  With exit_ms > 0
 * (a client about to exit, which no callback can stop) the call gives up
 * after exit_ms, leaving the request and every object of the slot to the
 * service (SVC_SLOT_GONE), and fails with GA_ERR_DEVICE.  A queued request
 * of a service that is no longer serving its generation is taken back and
 * fails with GA_ERR_DEVICE.  Returns 1 when the reply is a success, 0 when
 * it is the service's failure (in status), -1 when the call fails here
 * (taken back, or cancelled although it succeeded), the rest of the reply
 * readable until the next request; or SVC_CALL_LEFT when it was left to
 * the service, whose reply nobody may read.
 */
int
svc_slot_call(GaService *service, SvcSlot *slot, uint64_t generation,
			  GaWaitCallback wait, void *arg, int exit_ms, GaStatus *status)
{
	slot_post(service, slot, generation);
	return svc_slot_await(service, slot, generation, wait, arg, exit_ms, status);
}

/*
 * Wait for the reply of the request svc_slot_post posted in slot, as
 * svc_slot_call does (exit_ms counts from the post); the same results.
 */
int
svc_slot_await(GaService *service, SvcSlot *slot, uint64_t generation,
			   GaWaitCallback wait, void *arg, int exit_ms, GaStatus *status)
{
	int			said_stop = 0;
	int64_t		posted_ns = slot->posted_ns;
	int64_t		stop_ns = 0;

	for (;;)
	{
		if (wait != NULL && !said_stop && wait(arg) != 0)
		{
			said_stop = 1;
			stop_ns = svc_now_ns();
			SVC_STORE(&slot->cancel, 1);
			if (svc_cas_u32(&slot->state, SVC_SLOT_REQUEST, SVC_SLOT_IDLE))
				return ga_status_set(status, GA_ERR_CANCELLED,
									 "cancelled while waiting for the GPU service") - 1;
		}
		if (slot_wait_step(slot) && slot_replied(slot))
			break;
		if (!svc_serving(service, generation))
		{
			if (svc_cas_u32(&slot->state, SVC_SLOT_REQUEST, SVC_SLOT_IDLE))
				return ga_status_set(status, GA_ERR_DEVICE,
									 "the GPU service stopped before it took this request") - 1;
			/* a process that died between its reply and the post */
			if (slot_replied(slot))
				break;
		}
		if (said_stop && slot_ms_since(stop_ns) >= SVC_GIVE_UP_MS)
		{
			if (svc_slot_leave(slot, SVC_SLOT_LEFT))
			{
				ga_status_set(status, GA_ERR_CANCELLED,
							  "cancelled; the GPU service did not stop this request within %d ms and ends it by itself",
							  SVC_GIVE_UP_MS);
				return SVC_CALL_LEFT;
			}
			break;				/* answered meanwhile */
		}
		if (exit_ms > 0 && slot_ms_since(posted_ns) >= exit_ms)
		{
			if (svc_slot_leave(slot, SVC_SLOT_LEFT | SVC_SLOT_GONE))
			{
				ga_status_set(status, GA_ERR_DEVICE,
							  "the GPU service did not answer within %d ms", exit_ms);
				return SVC_CALL_LEFT;
			}
			break;
		}
	}
	*status = slot->reply.status;
	SVC_STORE(&slot->state, SVC_SLOT_IDLE);
	if (said_stop && status->code == GA_OK)
		return ga_status_set(status, GA_ERR_CANCELLED,
							 "cancelled while the GPU service ran this request") - 1;
	return status->code == GA_OK ? 1 : 0;
}

/* Post the request in slot->args (the slot is IDLE); nobody waits for it. */
void
svc_slot_post(GaService *service, SvcSlot *slot, uint64_t generation)
{
	slot_post(service, slot, generation);
}

/*
 * Make the slot IDLE: take the reply of a request left behind (waiting for
 * it if it is still queued or running), take back a queued one that no
 * service will run any more, or wait for the service to end a request
 * left to it.  Waits at most limit_ms (0: only looks), asking wait (if
 * any) every SVC_WAIT_STEP_MS; 1 when the slot is IDLE, 0 when the time
 * is over, -1 when wait said stop (the slot as it was).
 */
int
svc_slot_collect(GaService *service, SvcSlot *slot, GaWaitCallback wait, void *arg,
				 int limit_ms)
{
	int64_t		start_ns = svc_now_ns();

	for (;;)
	{
		uint32_t	state = SVC_LOAD(&slot->state);

		if (state == SVC_SLOT_IDLE)
			return 1;
		if (state == SVC_SLOT_REQUEST && !svc_serving(service, slot->generation) &&
			svc_cas_u32(&slot->state, SVC_SLOT_REQUEST, SVC_SLOT_IDLE))
			return 1;
		if (state == SVC_SLOT_REPLY)
		{
			/* a post not made yet is left over: the next wait takes it */
			(void) sem_trywait(&slot->reply_posted);
			SVC_STORE(&slot->state, SVC_SLOT_IDLE);
			return 1;
		}
		if (wait != NULL && wait(arg) != 0)
			return -1;
		if (slot_ms_since(start_ns) >= limit_ms)
			return 0;
		(void) slot_wait_step(slot);
	}
}

/*
 * Take the queued request with the oldest ticket (RUNNING now); its slot's
 * index, with the nanoseconds it was queued, or -1 when none is queued.
 */
int
svc_slot_take(GaService *service, int64_t *queued_ns)
{
	for (;;)
	{
		uint64_t	best_ticket = UINT64_MAX;
		int			best = -1;
		uint32_t	state;
		int			i;

		for (i = 0; i < service->nslots; i++)
		{
			SvcSlot    *slot = &service->slots[i];

			if (SVC_SLOT_BASE(SVC_LOAD(&slot->state)) == SVC_SLOT_REQUEST)
			{
				uint64_t	ticket = SVC_LOAD(&slot->ticket);

				if (best < 0 || ticket < best_ticket)
				{
					best = i;
					best_ticket = ticket;
				}
			}
		}
		if (best < 0)
			return -1;
		state = SVC_LOAD(&service->slots[best].state);
		if (SVC_SLOT_BASE(state) == SVC_SLOT_REQUEST &&
			svc_cas_u32(&service->slots[best].state, state,
						SVC_SLOT_RUNNING | (state & SVC_SLOT_FLAGS)))
		{
			*queued_ns = svc_now_ns() - service->slots[best].posted_ns;
			return best;
		}
		/* another thread took it, or its client took it back: look again */
	}
}

/*
 * The reply of a RUNNING request is written: hand it to the client, 1; or
 * 0 when the client left the request (the caller ends it: svc_slot_end).
 */
int
svc_slot_reply(GaService *service, SvcSlot *slot)
{
	(void) service;
	for (;;)
	{
		uint32_t	state = SVC_LOAD(&slot->state);

		if ((state & SVC_SLOT_LEFT) != 0)
			return 0;
		if (svc_cas_u32(&slot->state, state, SVC_SLOT_REPLY))
			break;
	}
	(void) sem_post(&slot->reply_posted);
	return 1;
}

/* A request left by its client is over: the slot takes requests again. */
void
svc_slot_end(SvcSlot *slot)
{
	SVC_STORE(&slot->state, SVC_SLOT_IDLE);
}

/*
 * Fail the slot's request with code and message if it is queued (or,
 * with running_too, running in a service process that died); 1 when it
 * did, with the request's device index in *device.  A request its client
 * left just ends.
 */
int
svc_slot_fail(GaService *service, SvcSlot *slot, int running_too, GaStatusCode code,
			  const char *message, int *device)
{
	uint32_t	state;

	for (;;)
	{
		state = SVC_LOAD(&slot->state);

		/* a RUNNING request's thread is gone: nobody else moves it */
		if (running_too && SVC_SLOT_BASE(state) == SVC_SLOT_RUNNING)
			break;
		if (SVC_SLOT_BASE(state) != SVC_SLOT_REQUEST)
			return 0;
		/* claim a queued one as a request thread would */
		if (svc_cas_u32(&slot->state, state, SVC_SLOT_RUNNING | (state & SVC_SLOT_FLAGS)))
			break;
	}
	if (device != NULL)
		*device = slot->args.device;
	ga_status_set(&slot->reply.status, code, "%s", message);
	if (!svc_slot_reply(service, slot))
		svc_slot_end(slot);
	return 1;
}

/* ------------------------------------------------------------------------
 * A slot as one process of clients uses it
 * ------------------------------------------------------------------------
 */

/*
 * This process's entry of slot `slot` of service, created when create is
 * set; NULL when there is none, or no memory for it.
 */
SvcClientSlot *
svc_client_slot(GaService *service, int slot, int create)
{
	SvcClientSlot *cs;
	int			pid = (int) getpid();

	pthread_mutex_lock(&client_slots_lock);
	for (cs = client_slots; cs != NULL; cs = cs->next)
		if (cs->service == service && cs->slot == slot && cs->pid == pid)
			break;
	if (cs == NULL && create && (cs = calloc(1, sizeof(SvcClientSlot))) != NULL)
	{
		cs->service = service;
		cs->slot = slot;
		cs->pid = pid;
		cs->next = client_slots;
		client_slots = cs;
	}
	pthread_mutex_unlock(&client_slots_lock);
	return cs;
}

/*
 * Make the slot IDLE, posting first what is pending, one request at a
 * time; within limit_ms, asking wait (if any).  1 when the slot is IDLE
 * and nothing is pending; 0 when the time is over, -1 when wait said stop.
 */
int
svc_client_ready(SvcClientSlot *cs, GaWaitCallback wait, void *arg, int limit_ms)
{
	GaService  *service = cs->service;
	SvcSlot    *slot = &service->slots[cs->slot];
	int64_t		start_ns = svc_now_ns();

	for (;;)
	{
		int64_t		left_ms = limit_ms - slot_ms_since(start_ns);
		int			rc = svc_slot_collect(service, slot, wait, arg,
										 left_ms > 0 ? (int) left_ms : 0);
		SvcPending	p;

		if (rc <= 0)
		{
			if (rc == 0)
				cs->stuck = 1;
			return rc;
		}
		cs->stuck = 0;
		if (cs->npending == 0)
			return 1;
		p = cs->pending[0];
		memmove(cs->pending, cs->pending + 1, (size_t) --cs->npending * sizeof(SvcPending));
		if (!svc_serving(service, p.generation))
			continue;			/* its objects went with the service process */
		memset(&slot->args, 0, sizeof(slot->args));
		slot->args.op = p.op;
		slot->args.device = p.device;
		slot->args.object = p.object;
		slot->args.buffer = p.buffer;
		svc_slot_post(service, slot, p.generation);
	}
}

/*
 * Post a request nobody waits for (its reply is collected later), or keep
 * it pending when the slot stays busy longer than cleanup waits.  One of
 * a generation the service no longer serves is dropped: its objects went
 * with the service process.
 */
void
svc_client_post(SvcClientSlot *cs, const SvcPending *request)
{
	GaService  *service = cs->service;
	SvcSlot    *slot = &service->slots[cs->slot];

	if (!svc_serving(service, request->generation))
		return;
	if (svc_client_ready(cs, NULL, NULL, svc_client_cleanup_ms(cs)) <= 0)
	{
		if (cs->npending == cs->maxpending)
		{
			int			n = cs->maxpending > 0 ? 2 * cs->maxpending : 8;
			SvcPending *grown = realloc(cs->pending, (size_t) n * sizeof(SvcPending));

			if (grown == NULL)
				return;			/* dropped with the slot at exit */
			cs->pending = grown;
			cs->maxpending = n;
		}
		cs->pending[cs->npending++] = *request;
		return;
	}
	memset(&slot->args, 0, sizeof(slot->args));
	slot->args.op = request->op;
	slot->args.device = request->device;
	slot->args.object = request->object;
	slot->args.buffer = request->buffer;
	svc_slot_post(service, slot, request->generation);
}

/* How long cleanup waits for the slot: not at all once a wait gave up. */
int
svc_client_cleanup_ms(const SvcClientSlot *cs)
{
	return cs->stuck ? 0 : SVC_GIVE_UP_MS;
}
