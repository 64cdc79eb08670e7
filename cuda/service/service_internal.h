/*-------------------------------------------------------------------------
 *
 * service/service_internal.h
 *	  Internal interface of the GPU service (cuda/service/): the layout of
 *	  the memory its clients and its process share, the protocol of a
 *	  slot, and what each file of the folder gives the others, grouped by
 *	  that file.  gpuagg_service.h is the public boundary; the conformance
 *	  test includes this header too, for the loopback.
 *
 * Memory.  GaService is a header, nslots slots and the arena, in one block
 * that every process maps at the same address, so raw pointers into it
 * are valid everywhere.  Fields that two processes touch at once are
 * plain integers accessed with GCC's __atomic builtins; wakeups are
 * process-shared POSIX semaphores.  There is no lock in shared memory: a
 * process that dies holding one would leave it held.  A client touches
 * only its own slot (and the arena memory the service handed it); the
 * service process touches every slot and allocates the arena alone.
 *
 * A slot's protocol (slot.c).  States IDLE -> REQUEST (the client, having
 * written the arguments, a ticket and the time) -> RUNNING (a request
 * thread, by compare-and-swap, in ticket order) -> REPLY (the thread, after
 * writing the reply; it then posts the slot's semaphore) -> IDLE (the
 * client, after taking the post and reading the reply).  One request is in
 * flight per slot.  The client waits on the semaphore 10 ms at a time and
 * asks its wait callback in between: when the callback says stop, a
 * request still queued is taken back (REQUEST -> IDLE, by compare-and-swap
 * against the threads' own) and fails with GA_ERR_CANCELLED; a running
 * one gets the slot's cancel flag, which the service's wait callback hands
 * to the device.  A request that the client leaves behind (an object's
 * destroy, which nobody waits for, or a request of a client that exited)
 * is collected by the slot's next request.  No wait of a client is
 * unbounded: a running request that does not stop within SVC_GIVE_UP_MS
 * of a cancel, and one a client about to exit gives up on, are left to the
 * service (the SVC_SLOT_LEFT flag): it ends them itself, dropping what
 * they made for nobody (with SVC_SLOT_GONE, every object of the slot), and
 * makes the slot IDLE; until then the slot takes no request.
 *
 * Generations.  Each service process serves one generation, bumped when it
 * starts.  A request names the generation it is for and an object keeps the
 * generation it was created in: a call on an object of another
 * generation, or while no service is ready, fails with GA_ERR_DEVICE (or
 * GA_ERR_NO_DEVICE for a new object) without reaching the service.
 *
 * Admission (admit.c).  A create (and a staging ALLOC) that finds no room,
 * in the arena or under its device's memory budget, is parked: its slot
 * stays RUNNING, but no thread holds it.  Whenever memory comes back the
 * service retries the parked requests, oldest first; one whose deadline
 * (its client's wait_ms after it was posted) passes, or whose client
 * cancels, is answered then.  The request threads look at the parked
 * requests every SVC_WAIT_STEP_MS while there are any.
 *
 * Arena memory a client still holds.  Batches, results and staging
 * buffers live in the arena, and a new service process starts with the
 * whole arena free.  A client of a dead generation may still read a
 * result or fill a batch of it, so a new service process serves only once
 * no live client holds objects of an earlier generation: a slot's
 * held_generation says which generation the client's objects belong to
 * (set before it creates one, cleared when it destroys its last), and
 * ga_service_serve waits in STARTING, its note saying so, until every
 * such slot is clear or its process is gone.  Meanwhile new queries use
 * the client's own devices.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_SERVICE_SERVICE_H
#define GPUAGG_SERVICE_SERVICE_H

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "device_impl.h"
#include "gpuagg_service.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define SVC_MAGIC 0x47415356u	/* "GASV" */

/* Bytes of a slot's payload: a request's deep copy, a result's arrays. */
#define SVC_PAYLOAD_BYTES 16384

/* Devices a service runs: the CPU device and every GPU. */
#define SVC_MAX_DEVICES (1 + GA_MAX_GPUS)

/* Batches one object hands out in turn (the GPU's two, the CPU's one). */
#define SVC_MAX_BATCHES 4

/* Staging buffers a client may hold at once. */
#define SVC_MAX_STAGING 4

/*
 * A build side of more bytes than svc_stage_piece_bytes (client.c; this
 * size, smaller in the loopback's tests) travels in pieces of at most that
 * size, through two staging buffers used in turn, into memory of the service
 * process (pinned host memory for a GPU, which copies from it at pinned
 * speed): so a build larger than the arena runs, and a large one holds
 * little of the arena that concurrent queries share.
 */
#define SVC_STAGE_PIECE_BYTES ((size_t) 64 << 20)
extern size_t svc_stage_piece_bytes;

/* Bytes of the service's note. */
#define SVC_NOTE_LEN 256

/* How long a client waits on its semaphore between two looks around. */
#define SVC_WAIT_STEP_MS 10

/*
 * How long a client waits for a request that its wait callback stopped, or
 * in its cleanup (no callback) for its slot, before it leaves the request
 * to the service (slot.c).
 */
#define SVC_GIVE_UP_MS 1000

/* Alignment of everything laid out in shared memory and in the arena. */
#define SVC_ALIGN 64

/* SvcArgs.device of a create that lets the service choose the GPU. */
#define SVC_DEVICE_ANY_GPU (-2)

/* A slot's states (SvcSlot.state). */
typedef enum SvcSlotState
{
	SVC_SLOT_IDLE = 0,
	SVC_SLOT_REQUEST,
	SVC_SLOT_RUNNING,
	SVC_SLOT_REPLY
} SvcSlotState;

/*
 * Flags a client adds to a queued or running request it stops waiting for
 * (slot.c): LEFT, the service ends the request itself; GONE, and then
 * drops every object of the slot (its client exits).
 */
#define SVC_SLOT_LEFT 0x100u
#define SVC_SLOT_GONE 0x200u
#define SVC_SLOT_FLAGS (SVC_SLOT_LEFT | SVC_SLOT_GONE)
#define SVC_SLOT_BASE(state) ((state) & ~SVC_SLOT_FLAGS)

/* The operations a client asks for (SvcArgs.op). */
typedef enum SvcOp
{
	SVC_OP_ALLOC = 1,			/* a staging buffer of buffer_bytes */
	SVC_OP_RELEASE,				/* destroy the slot's objects and staging */
	SVC_OP_AGG_CREATE,			/* request: the payload, or staging buffer */
	SVC_OP_AGG_NEXT_BATCH,
	SVC_OP_AGG_SUBMIT,			/* token, nrows; has_nulls in the columns */
	SVC_OP_AGG_BUILD,			/* step, n, key_seed, has_keys, staging */
	SVC_OP_AGG_FINISH,
	SVC_OP_AGG_DESTROY,
	SVC_OP_AGG_STAGE,			/* a piece of a build side: staging (which
								 * stays the client's), stage_at, stage_bytes */
	SVC_OP_JOIN_CREATE,			/* join */
	SVC_OP_JOIN_BUILD,			/* n, staging: keys then rows */
	SVC_OP_JOIN_NEXT_BATCH,
	SVC_OP_JOIN_PROBE,			/* token, nrows */
	SVC_OP_JOIN_STAGE,			/* as SVC_OP_AGG_STAGE */
	SVC_OP_JOIN_DESTROY,
	SVC_OP_FREE					/* a staging buffer no request took */
} SvcOp;

/*
 * One column of a batch as a client sees it, in the arena: where its
 * values and validity are, and whether it has nulls (the service's after
 * a next_batch, the client's before a submit).  An aggjoin build's
 * staging buffer starts with one per request column.
 */
typedef struct SvcColumnDesc
{
	void	   *values;
	uint8_t    *validity;
	int32_t		has_nulls;
	int32_t		type;			/* GaValueType */
	uint8_t    *bytes;			/* GA_TYPE_STRING: the values' bytes */
	int64_t		bytes_capacity;
} SvcColumnDesc;

/* A request's arguments, written by the client. */
typedef struct SvcArgs
{
	int32_t		op;				/* SvcOp */
	int32_t		device;			/* index into GaService.devices */
	int32_t		object;			/* the slot's object, from 1 */
	int32_t		step;			/* an aggjoin build's step */
	uint64_t	token;			/* the batch, as the service handed it out */
	int64_t		n;				/* a build's keyed rows */
	int64_t		nrows;			/* a batch's or a build payload's rows */
	int64_t		npages;			/* a submit: the batch's heap pages */
	uint64_t	key_seed;		/* an aggjoin build of several keys */
	int32_t		has_keys;		/* an aggjoin build: keys given */
	int32_t		staged;			/* a build: its bytes are the object's staged
								 * pieces, not buffer */
	int32_t		wait_ms;		/* a create or ALLOC: how long it may wait
								 * for room, from when it was posted */
	int32_t		reserved;
	void	   *buffer;			/* a staging buffer, or the payload */
	uint64_t	buffer_bytes;
	uint64_t	stage_at;		/* a stage: where the piece goes */
	uint64_t	stage_bytes;	/* a stage: the whole build side's bytes */
	GaJoinRequest join;			/* SVC_OP_JOIN_CREATE */
} SvcArgs;

/* A request's reply, written by the service (or by whoever fails it). */
typedef struct SvcReply
{
	GaStatus	status;
	int32_t		object;			/* a create's new object */
	int32_t		ncolumns;		/* next_batch: columns of the batch */
	int32_t		device;			/* a create: the device it runs on */
	int32_t		reserved;
	uint64_t	token;			/* next_batch: the batch */
	int64_t		capacity;
	SvcColumnDesc *columns;		/* next_batch: in the arena */
	uint8_t    *pages;			/* next_batch of a request with a page
								 * program: its page area, in the arena */
	GaPageDesc *page_desc;
	int64_t		page_capacity;
	void	   *buffer;			/* SVC_OP_ALLOC */
	const uint32_t *sorted_rows;	/* a join's build */
	GaJoinMatches matches;		/* a probe */
	int64_t		queued_ns;		/* how long the request waited for a thread,
								 * and for room when it was parked */
	int64_t		ngroups;		/* finish: the pointers are in the payload */
	int32_t		nkeys;
	int32_t		naggs;
	union
	{
		GaAggStats	agg;
		GaJoinStats join;
	}			stats;			/* the object's, after the call */
} SvcReply;

/* One client's slot. */
typedef struct SvcSlot
{
	uint32_t	state;			/* SvcSlotState and flags; atomic */
	uint32_t	cancel;			/* the client asks to stop; atomic */
	int32_t		client_pid;		/* the client of the request; atomic */
	int32_t		reserved;
	uint64_t	generation;		/* the generation the request is for */
	uint64_t	ticket;			/* first come, first served */
	int64_t		posted_ns;		/* when the request was posted */
	uint64_t	held_generation;	/* the generation of the client's live
									 * objects, 0: none; atomic */
	int64_t		held_objects;	/* the client's live objects (its own) */
	sem_t		reply_posted;	/* posted once per reply */
	SvcArgs		args;
	SvcReply	reply;
	unsigned char payload[SVC_PAYLOAD_BYTES] __attribute__((aligned(SVC_ALIGN)));
} SvcSlot;

/* One device the service runs, and its statistics (atomics). */
typedef struct SvcDeviceEntry
{
	int32_t		kind;			/* GaDeviceKind */
	int32_t		ordinal;
	int64_t		queries;
	int64_t		batches;
	int64_t		rows;
	int64_t		bytes;
	int64_t		device_ns;
	int64_t		queue_ns;
	int64_t		cpu_fallbacks;
	int64_t		out_of_memory;
	int64_t		failures;
	int64_t		active;
	int64_t		memory_used;	/* bytes the device holds (the service's) */
	int64_t		memory_budget;	/* bytes it may hold */
	int32_t		tune_tuned;		/* GaServiceDeviceStats' tune_* */
	int32_t		tune_exploring;
	int32_t		tune_loaded;
	int32_t		tune_file;
} SvcDeviceEntry;

/* The shared header. */
struct GaService
{
	uint32_t	magic;
	int32_t		nslots;
	uint64_t	arena_bytes;
	uint32_t	state;			/* GaServiceState; atomic */
	int32_t		pid;			/* the service process, 0: none; atomic */
	uint64_t	generation;		/* of the last service process; atomic */
	int32_t		stop;			/* the pid of the process that called
								 * ga_service_stop (a stale one from a dead
								 * process is ignored); atomic */
	int32_t		nthreads;		/* request threads of the process */
	uint64_t	next_ticket;	/* atomic */
	uint32_t	note_seq;		/* odd while the note is written; atomic */
	int64_t		gpu_budget;		/* bytes each device may hold, 0: 90% of a
								 * GPU's memory (and the arena for the CPU
								 * device); atomic */
	int32_t		parked;			/* requests waiting for room now; atomic */
	char		note[SVC_NOTE_LEN];
	int32_t		ndevices;		/* atomic, written before the service is
								 * ready */
	SvcDeviceEntry devices[SVC_MAX_DEVICES];
	sem_t		work;			/* posted once per request */
	sem_t		stopping;		/* posted by ga_service_stop */
	SvcSlot    *slots;
	unsigned char *arena;
};

/* Atomics on plain integers of shared memory (sequentially consistent). */
#define SVC_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define SVC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define SVC_ADD(p, v) ((void) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED))

/* Swap *p from expected to desired; whether it was expected. */
static inline int
svc_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
	return __atomic_compare_exchange_n(p, &expected, desired, 0,
									   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Round up to SVC_ALIGN. */
static inline size_t
svc_align(size_t n)
{
	return (n + SVC_ALIGN - 1) & ~(size_t) (SVC_ALIGN - 1);
}

/* Whether process pid exists (a zombie counts, an unknown pid does not). */
static inline int
svc_pid_alive(int pid)
{
	return pid > 0 && (kill((pid_t) pid, 0) == 0 || errno == EPERM);
}

/* Whether the service serves generation `generation` now. */
static inline int
svc_serving(const GaService *service, uint64_t generation)
{
	return SVC_LOAD((uint32_t *) &service->state) == GA_SERVICE_READY &&
		SVC_LOAD((uint64_t *) &service->generation) == generation;
}

/* ------------------------------------------------------------------------
 * What the files of the folder give each other
 * ------------------------------------------------------------------------
 */

/* Nanoseconds on the monotonic clock, which every process shares. */
static inline int64_t
svc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* setup.c: the note (the service process's, or its supervisor's) */
extern void svc_note_set(GaService *service, const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 2, 3)))
#endif
			;

/*
 * slot.c: the protocol.  Clients: post a request and wait for its reply
 * (at once, or later with svc_slot_await after svc_slot_post; wait may be NULL; exit_ms > 0: a client about to exit gives up then;
 * 1: a success, 0: the service's failure, -1: a failure of the call
 * itself, SVC_CALL_LEFT: the request left to the service, its reply not
 * to be read; all with status), post one that nobody waits for, make the slot
 * IDLE within limit_ms (1; 0: not in time; -1: wait said stop), and leave
 * the request in flight to the service (1; 0: there is none, or its reply
 * is in).  The service: take the oldest request (its index and how long
 * it was queued, or -1), post a reply (0: its client left it, and the
 * caller ends it with svc_slot_end), and fail a request still queued (or
 * running too: of a service process that died), 1 when it did, with the
 * request's device index in *device (NULL allowed).
 */
#define SVC_CALL_LEFT (-2)
extern int	svc_slot_call(GaService *service, SvcSlot *slot, uint64_t generation,
						  GaWaitCallback wait, void *arg, int exit_ms, GaStatus *status);
extern void svc_slot_post(GaService *service, SvcSlot *slot, uint64_t generation);
extern int	svc_slot_await(GaService *service, SvcSlot *slot, uint64_t generation,
						   GaWaitCallback wait, void *arg, int exit_ms, GaStatus *status);
extern int	svc_slot_collect(GaService *service, SvcSlot *slot, GaWaitCallback wait,
							 void *arg, int limit_ms);
extern int	svc_slot_leave(SvcSlot *slot, uint32_t flags);
extern int	svc_slot_take(GaService *service, int64_t *queued_ns);
extern int	svc_slot_reply(GaService *service, SvcSlot *slot);
extern void svc_slot_end(SvcSlot *slot);
extern int	svc_slot_fail(GaService *service, SvcSlot *slot, int running_too,
						  GaStatusCode code, const char *message, int *device);

/*
 * slot.c, for clients: a slot as one process uses it (one entry per
 * slot, service and process, living as long as the process), with the
 * requests nobody waits for (destroys, FREEs) that found it busy longer
 * than cleanup waits, posted in order before its next request.  slot
 * gives this process's entry (created with create; NULL when out of
 * memory, or none); ready makes the slot IDLE with nothing pending within
 * limit_ms, asking wait (1; 0: not in time, the slot is stuck; -1: wait
 * said stop); post posts a request nobody waits for, or keeps it pending;
 * cleanup_ms is how long cleanup waits for the slot: SVC_GIVE_UP_MS, 0
 * once a wait gave up, until the slot is seen IDLE again.
 */
typedef struct SvcPending
{
	int32_t		op;
	int32_t		device;
	int32_t		object;
	uint64_t	generation;
	void	   *buffer;
} SvcPending;

typedef struct SvcClientSlot
{
	GaService  *service;
	int			slot;
	int			pid;
	int			stuck;			/* a wait for the slot gave up */
	int			npending;
	int			maxpending;
	SvcPending *pending;
	struct SvcClientSlot *next;
} SvcClientSlot;

extern SvcClientSlot *svc_client_slot(GaService *service, int slot, int create);
extern int	svc_client_ready(SvcClientSlot *cs, GaWaitCallback wait, void *arg, int limit_ms);
extern void svc_client_post(SvcClientSlot *cs, const SvcPending *request);
extern int	svc_client_cleanup_ms(const SvcClientSlot *cs);

/*
 * wire.c: an aggregation request's deep copy (its arrays after it, its
 * pointers into the copy itself): the bytes it takes, the copy, and the
 * request read back from `bytes` of a buffer (NULL with status when its
 * pointers do not lie where its counts say).
 */
extern size_t svc_wire_size(const GaAggRequest *request);
extern void svc_wire_write(const GaAggRequest *request, void *buffer);
extern const GaAggRequest *svc_wire_read(const void *buffer, size_t bytes, GaStatus *status);

/*
 * arena.c: the service process's allocator of the arena, and the host
 * provider over it (util.h).  open lays the whole arena out free the
 * first time a process calls it and makes it the process's host provider;
 * alloc returns NULL when the arena is full; free takes NULL.  Every block
 * is charged to the device the calling thread named last with charge (-1:
 * none), so that used tells each device's share; free_bytes is what no
 * block holds (one block that large may still not fit: fragmentation).
 */
extern int	svc_arena_open(GaService *service, GaStatus *status);
extern void *svc_arena_alloc(size_t bytes);
extern void svc_arena_free(void *ptr);
extern int	svc_arena_owns(const void *ptr, size_t bytes);
extern void svc_arena_charge(int device);
extern int64_t svc_arena_used(int device);
extern int64_t svc_arena_free_bytes(void);

/*
 * client.c: gpuagg_service.h's clients and ga_service_ops (device_impl.h).
 * An aggjoin build's staging buffer holds one SvcColumnDesc per request
 * column, then at svc_align of their bytes the keys (when given), then at
 * svc_align of theirs the rows, then the step's build columns (their
 * descriptors point there); a join build's holds the keys, then the rows
 * at svc_align(n * 8).  A build of more than svc_stage_piece_bytes is
 * laid out the same way but sent in pieces (stage requests) and built
 * with `staged` set; its column descriptors then hold offsets from the
 * start of the layout instead of addresses.
 */

/*
 * exec.c: the service process's objects and the running of one request.
 * SvcServer is the process's private state; exec runs the request of
 * slot `index` (RUNNING) and replies, or returns 0 leaving a create or
 * ALLOC to admission (admit.c); release destroys a slot's objects and
 * staging buffers.
 */
typedef struct SvcObject
{
	int			kind;			/* 0: free, else SVC_OBJECT_AGG or _JOIN */
	int			device;
	void	   *impl;
	int			ncolumns;
	int			nbatches;
	GaBatch    *batches[SVC_MAX_BATCHES];	/* as handed out */
	SvcColumnDesc *descs[SVC_MAX_BATCHES];	/* their columns, in the arena */
	unsigned char *staged;		/* a build side's pieces (process memory:
								 * pinned on a GPU) */
	size_t		staged_bytes;
	int			staged_pinned;	/* staged is the server's pinned buffer */
} SvcObject;

#define SVC_OBJECT_AGG 1
#define SVC_OBJECT_JOIN 2

typedef struct SvcServerSlot
{
	int			pid;			/* the client whose objects these are */
	int			nobjects;		/* entries of objects */
	SvcObject  *objects;
	void	   *staging[SVC_MAX_STAGING];
	size_t		staging_bytes[SVC_MAX_STAGING];
	/* admit.c: the slot's request while it is parked */
	int			parked;
	int64_t		parked_ns;		/* when it was parked */
	int64_t		deadline_ns;	/* when it gives up */
	uint64_t	tried_epoch;	/* SvcServer.freed when it last found no room */
	uint32_t	wanted;			/* the devices it may run on, one bit each */
} SvcServerSlot;

typedef struct SvcServerDevice
{
	GaDeviceKind kind;
	int			ordinal;
	int			index;			/* in SvcServer.devices and GaService.devices */
	const GaDeviceOps *ops;
	void	   *impl;
} SvcServerDevice;

typedef struct SvcServer
{
	GaService  *service;
	int			pid;			/* the service process */
	uint64_t	generation;
	int			ndevices;
	SvcServerDevice devices[SVC_MAX_DEVICES];
	SvcServerSlot *slots;		/* nslots */
	int			nthreads;
	pthread_t  *threads;
	int			nstarted;
	/* admit.c */
	pthread_mutex_t admit_lock; /* the parked requests, and every admission */
	pthread_mutex_t publish_lock;	/* a device's memory read and published
									 * at once, the last read published last */
	int			nparked;		/* atomic */
	uint64_t	freed;			/* bumped whenever memory comes back; atomic */
	uint64_t	retried;		/* freed as of the last retry; atomic */
	int64_t		swept_ns;		/* when parked requests were last looked at;
								 * atomic */
	int64_t		budget;			/* GaService.gpu_budget as last applied */
	/* exec.c: one pinned buffer kept for build sides sent in pieces */
	pthread_mutex_t pinned_lock;
	unsigned char *pinned;		/* ga_gpu_host_alloc's, or NULL */
	size_t		pinned_bytes;
	int			pinned_busy;	/* an object's staged build holds it */
} SvcServer;

extern int	svc_exec(SvcServer *server, int index, int64_t queued_ns);
extern void svc_exec_release(SvcServer *server, int index);
extern void svc_exec_free_pinned(SvcServer *server);

/* Record that memory came back, so that admission retries what waits for it. */
static inline void
svc_server_freed(SvcServer *server)
{
	(void) __atomic_add_fetch(&server->freed, 1, __ATOMIC_SEQ_CST);
}

/*
 * exec.c, for admit.c: the aggregation request of slot index's create,
 * read from its payload or staging buffer (NULL with the reply's status
 * when it is malformed); run the slot's create or ALLOC on device
 * `device`, leaving the status in the reply (SVC_RUN_NO_ROOM: it found no
 * room and left nothing behind, so that it may run again); and hand the
 * reply to the client, counting an out-of-memory one against device.
 */
#define SVC_RUN_DONE 0
#define SVC_RUN_NO_ROOM 1
extern const GaAggRequest *svc_exec_agg_request(SvcServer *server, int index);
extern int	svc_exec_admitted(SvcServer *server, int index, int device);
extern void svc_exec_reply(SvcServer *server, int index, int device);

/*
 * admit.c: admission.  admit runs a create or ALLOC (RUNNING in slot
 * index, which svc_exec left to it) when it fits, or parks it; after
 * writes every device's memory in use into the shared header, runs the
 * parked requests that fit since memory came back, and answers those past
 * their deadline or cancelled (every request thread calls it between
 * requests); publish writes a device's memory in use and budget into the
 * shared header; fail_parked answers every parked request with code (a
 * service that stops).
 */
extern void svc_admit(SvcServer *server, int index);
extern void svc_admit_after(SvcServer *server);
extern void svc_admit_publish(SvcServer *server, int device);
extern void svc_admit_fail_parked(SvcServer *server, GaStatusCode code, const char *message);

/*
 * server.c: a test hook: while paused, a request thread holds the request
 * it took before running it (ga_service_loopback_pause).
 */
extern void svc_server_pause(int paused);
extern int	svc_server_held(void);

/* ------------------------------------------------------------------------
 * loopback.c: a service inside one process, for tests
 * ------------------------------------------------------------------------
 *
 * The conformance test runs the whole protocol without PostgreSQL: the
 * service's memory is the process's own, ga_service_serve runs on a
 * thread of it, and clients are the test's threads.  The arena becomes
 * the process's host provider, so start it before any device is used.
 */

/*
 * Start a service of nslots slots and an arena of arena_bytes, serving
 * with `threads` threads its CPU device and, when run_gpu, GPU 0; returns
 * once it is ready, or NULL with status.  One per process.
 */
extern GaService *ga_service_loopback_start(int nslots, size_t arena_bytes, int threads,
											int run_gpu, GaStatus *status);

/*
 * Simulate the loss of the service process: stop serving, call
 * ga_service_lost with this process's pid and `why`, then serve again
 * (a new generation, ready once no client holds objects of the old one).
 * Call it while no request runs.  0 with status when serving again fails.
 */
extern int	ga_service_loopback_restart(GaService *service, const char *why,
										GaStatus *status);

/*
 * Hold (paused nonzero) every request a thread takes before running it,
 * or let them run; and how many are held now.  For the test of a cancel
 * while every thread is busy.
 */
extern void ga_service_loopback_pause(int paused);
extern int	ga_service_loopback_held(void);

/* Stop serving; the memory stays, as the process's host provider. */
extern void ga_service_loopback_stop(GaService *service);

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_SERVICE_SERVICE_H */
