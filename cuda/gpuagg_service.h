/*-------------------------------------------------------------------------
 *
 * gpuagg_service.h
 *	  The GPU service: one process that owns the devices for every session,
 *	  and the clients (the backends) that reach its devices through memory
 *	  both map.  Plain C, like gpuagg_device.h: no PostgreSQL, no CUDA.
 *
 * The service's state (GaService) lives in memory that every client and
 * the service process map at the same address: PostgreSQL's main shared
 * memory segment, created by the postmaster before any of them is forked.
 * Pointers into it are therefore valid in every process, which is what
 * lets a backend write a batch once, straight into memory the device reads
 * (the arena, below), and read the groups where the device wrote them.
 *
 * It holds:
 *	- one slot per client (a backend's PGPROC number in PostgreSQL): the
 *	  client's one request in flight, its reply, and a semaphore the
 *	  service posts when the reply is ready;
 *	- the arena: the memory of every batch, result and staging buffer that
 *	  crosses between a client and the service, allocated by the service
 *	  alone (a client never allocates; it writes and reads what the
 *	  service hands it);
 *	- the service's state, its process id, its generation (bumped each time
 *	  a service process starts) and per-device statistics.
 *
 * A client opens a device through the service (ga_service_open) and gets
 * an ordinary GaDevice: every call of gpuagg_device.h then works on it as
 * on a local device (the dispatcher validates and checks the order of the
 * calls in the client, as for any device), and is carried out by the
 * service on its own device of the same kind.  Requests are served by a
 * pool of threads, first come first served; a client waits for its reply
 * on its slot's semaphore, calling its GaWaitCallback between waits, so
 * that cancel works while a request is queued or running.
 *
 * Admission.  A create that finds no room, in the arena or under its
 * device's memory budget (ga_service_set_gpu_budget), waits in a fair
 * queue, holding none of the service's threads, until memory comes back;
 * after the client's wait (ga_service_set_wait_ms) it fails with
 * GA_ERR_OUT_OF_MEMORY, and the client runs its query on its own CPU
 * device.  A GPU opened as gpu_ordinal -1 is the service's choice, made
 * at each create: the usable GPU with the least memory in use among those
 * the create fits on.
 *
 * The service process may die at any time (a driver fault, kill -9).  Its
 * supervisor then calls ga_service_lost(): every request in flight gets a
 * GA_ERR_DEVICE reply, every object of the dead generation is gone, and a
 * call on such an object fails the same way, so that the client finishes on
 * its own CPU device.  A new service process starts a new generation.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_SERVICE_H
#define GPUAGG_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuagg_device.h"

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct GaService GaService;

/* What the service is doing, as gpuagg_devices() shows it. */
typedef enum GaServiceState
{
	GA_SERVICE_STOPPED = 0,		/* no service process (not started yet) */
	GA_SERVICE_STARTING,		/* a service process is opening its devices */
	GA_SERVICE_READY,			/* serving requests */
	GA_SERVICE_RESTARTING		/* the last service process died; a new one
								 * is being started */
} GaServiceState;

/* Cumulative statistics of one device the service runs. */
typedef struct GaServiceDeviceStats
{
	GaDeviceKind kind;
	int			gpu_ordinal;	/* GPU devices */
	int64_t		queries;		/* aggregations and joins created */
	int64_t		batches;		/* batches submitted and probes */
	int64_t		rows;			/* rows of those batches */
	int64_t		bytes;			/* bytes the device read from the arena */
	double		device_ms;		/* time in device calls */
	double		queue_ms;		/* time requests waited for a thread */
	int64_t		cpu_fallbacks;	/* queries the client finished or ran on its
								 * own CPU device instead
								 * (ga_service_count_fallback) */
	int64_t		out_of_memory;	/* requests that failed for lack of memory */
	int64_t		failures;		/* requests failed by a lost service process */
	int64_t		active;			/* objects open now */
	int64_t		memory_used;	/* bytes it holds now: a GPU's device memory,
								 * the CPU device's share of the arena */
	int64_t		memory_budget;	/* bytes it may hold */
	/* a GPU's launch tuner (the service's tuners together; cuda/tune.h) */
	int32_t		tune_tuned;		/* shape classes tuned */
	int32_t		tune_exploring; /* shape classes exploring */
	int32_t		tune_loaded;	/* classes read from the tuning files */
	int32_t		tune_file;		/* 1: a file was read, -1: one was ignored,
								 * 0: none */
} GaServiceDeviceStats;

/* What a service process runs; given to ga_service_serve. */
typedef struct GaServiceConfig
{
	int			threads;		/* request threads, at least 1 */
	int			run_cpu;		/* host the CPU device */
	int			ngpus;			/* GPUs to host, by ordinal */
	int			gpu_ordinals[GA_MAX_GPUS];
	const char *tune_dir;		/* where the launch tuner keeps a file per
								 * GPU model (the data directory); NULL:
								 * none */
	const char *version;		/* gpuagg's version, which those files are
								 * written for */
	void		(*log) (const char *message);	/* a line for the server
												 * log */
} GaServiceConfig;

/* ------------------------------------------------------------------------
 * Setting up (the postmaster, once, in shared memory)
 * ------------------------------------------------------------------------
 */

/* Bytes of shared memory a service of nslots clients and its arena take. */
extern size_t ga_service_size(int nslots, size_t arena_bytes);

/*
 * Lay the service out in `place` (ga_service_size bytes, zeroed or not),
 * with no service process yet.  Returns NULL with status on failure.
 */
extern GaService *ga_service_init(void *place, int nslots, size_t arena_bytes,
								  GaStatus *status);

/* ------------------------------------------------------------------------
 * The service process
 * ------------------------------------------------------------------------
 */

/*
 * Serve requests until ga_service_stop is called (from a signal handler of
 * the same process: it only sets a flag and posts a semaphore): open the
 * devices of config, start config->threads threads, mark the service ready
 * under a new generation, and return 0 after stopping them; or return -1
 * with status when the devices cannot be opened.  Call it in the process
 * that owns the devices, once.  The arena becomes free again in a new
 * service process, so it stays STARTING (its note says why) while a live
 * client still holds objects of an earlier generation, whose batches or
 * results that client may still touch: until the client destroys them,
 * releases its slot, or exits.
 */
extern int	ga_service_serve(GaService *service, const GaServiceConfig *config,
							 GaStatus *status);
extern void ga_service_stop(GaService *service);

/*
 * Set the memory budget of each device the service runs, in bytes: the
 * device memory it may hold on each GPU, 0 meaning 90% of the GPU's
 * memory, and the CPU device's share of the arena (0: the whole arena).
 * The service applies it at its next admission, also to objects open now
 * (a GPU object growing past it fails as on a full GPU).  Any process may
 * call it (PostgreSQL's supervisor does, at start and on each reload).
 */
extern void ga_service_set_gpu_budget(GaService *service, int64_t bytes);

/*
 * The supervisor of the service process, after that process ended (pid):
 * fail every request in flight, drop every object of its generation, and
 * mark the service restarting with `why` as its note.
 */
extern void ga_service_lost(GaService *service, int pid, const char *why);

/* ------------------------------------------------------------------------
 * Clients
 * ------------------------------------------------------------------------
 */

/*
 * Open, for the client of slot `slot`, the service's device of that kind
 * (the CPU device, or GPU gpu_ordinal; -1: whichever GPU the service
 * chooses at each create).  The returned device stays valid for the life
 * of the process; calls on it fail with GA_ERR_NO_DEVICE while the service
 * is not ready.  Returns NULL with status when the service does not run
 * that device.
 */
extern GaDevice *ga_service_open(GaService *service, int slot, GaDeviceKind kind,
								 int gpu_ordinal, GaStatus *status);

/*
 * Destroy every object the client of `slot` holds in the service (a client
 * that exits, or a slot taken over by a new client).  Waits for the
 * client's request in flight, if any.  The client must not use those
 * objects afterwards (their memory goes back to the service), and they no
 * longer keep a new service process from starting.
 */
extern void ga_service_release(GaService *service, int slot);

/*
 * How the calling thread's creates wait for room in the service: at most
 * ms milliseconds from when they are posted (0, the default: not at all;
 * they then fail with GA_ERR_OUT_OF_MEMORY at once), and asking wait (NULL:
 * nothing) in between, which abandons the wait with GA_ERR_CANCELLED when
 * it says stop: the create calls of gpuagg_device.h take no callback of
 * their own.  A backend sets both before it opens a device.
 */
extern void ga_service_set_wait_ms(int ms);
extern void ga_service_set_wait_callback(GaWaitCallback wait, void *arg);

/* Whether `device` is a device of the service (not of this process). */
extern int	ga_device_is_service(const GaDevice *device);

/* ------------------------------------------------------------------------
 * Observability
 * ------------------------------------------------------------------------
 */

/* The service's state, the pid of its process (0: none) and its note. */
extern GaServiceState ga_service_state(const GaService *service, int *pid,
									   char *note, size_t note_size);

/* Copy the statistics of every device the service runs; returns how many. */
extern int	ga_service_stats(const GaService *service, GaServiceDeviceStats *out,
							 int max);

/*
 * Count, for the device of that kind, a query that its client finished or
 * ran on its own CPU device instead (the service was not ready in time, or
 * failed it); gpu_ordinal -1 counts it for the first GPU.  No effect when
 * the service does not run that device.
 */
extern void ga_service_count_fallback(GaService *service, GaDeviceKind kind,
									  int gpu_ordinal);

/* Zero every counter of ga_service_stats (not `active`). */
extern void ga_service_reset_stats(GaService *service);

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_SERVICE_H */
