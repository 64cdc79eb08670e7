/*-------------------------------------------------------------------------
 *
 * service/server.c
 *	  The service process: ga_service_serve opens the devices of its
 *	  configuration, makes the arena the process's host provider, waits
 *	  until no live client holds objects of an earlier generation
 *	  (service/service_internal.h tells why), starts the request threads, marks the
 *	  service ready under a new generation, and on ga_service_stop lets the
 *	  threads finish the requests they run, fails the queued ones and
 *	  destroys every object.
 *
 * A request thread waits on the service's work semaphore (posted once per
 * request), at most SERVER_IDLE_MS, takes the oldest queued request
 * (slot.c) and runs it (exec.c); between requests it lets admission look
 * at the parked ones (admit.c), waking every SVC_WAIT_STEP_MS while there
 * are any.  Threads block every signal, so that the process's signal
 * handlers (PostgreSQL's, in the service process) run on the thread that
 * called ga_service_serve, which only waits for the stop.
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "tune.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * How long a request thread waits for a post before it looks at the stop
 * flag and the slots by itself.
 */
#define SERVER_IDLE_MS 100

/* Pause between two looks at the clients holding an earlier generation. */
#define SERVER_GATE_MS 10

/* Whether ga_service_stop was called in this process (pid). */
static int
server_stopping(const GaService *service, int pid)
{
	return SVC_LOAD((int32_t *) &service->stop) == pid;
}

/* The test hook: requests held before they run, and how many are. */
static int	server_paused;
static int	server_held;

/* Hold requests before they run (nonzero) or let them run. */
void
svc_server_pause(int paused)
{
	SVC_STORE(&server_paused, paused);
}

/* How many requests are held now. */
int
svc_server_held(void)
{
	return SVC_LOAD(&server_held);
}

/* Sleep ms milliseconds. */
static void
server_sleep_ms(long ms)
{
	struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&pause, NULL);
}

/*
 * Wait for the work semaphore, up to SERVER_IDLE_MS, or SVC_WAIT_STEP_MS
 * while requests are parked; 1 when it was posted.
 */
static int
server_wait_work(SvcServer *server)
{
	long		ms = SVC_LOAD(&server->nparked) > 0 ? SVC_WAIT_STEP_MS : SERVER_IDLE_MS;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L)
	{
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return sem_timedwait(&server->service->work, &until) == 0;
}

/* A request thread: take the oldest request, run it, until told to stop. */
static void *
server_thread(void *arg)
{
	SvcServer  *server = arg;
	GaService  *service = server->service;

	while (!server_stopping(service, server->pid))
	{
		int64_t		queued_ns = 0;
		int			index;

		/*
		 * A thread whose wait ends without a post looks for queued work all
		 * the same: a request whose post another thread consumed without
		 * finding it waits at most one idle period, never for the next post.
		 */
		(void) server_wait_work(server);
		if (server_stopping(service, server->pid))
			continue;
		index = svc_slot_take(service, &queued_ns);
		if (index < 0)
		{
			svc_admit_after(server);
			continue;
		}
		if (SVC_LOAD(&server_paused))
		{
			SVC_ADD(&server_held, 1);
			while (SVC_LOAD(&server_paused))
				server_sleep_ms(1);
			SVC_ADD(&server_held, -1);
		}
		if (!svc_exec(server, index, queued_ns))
			svc_admit(server, index);
		svc_admit_after(server);
	}
	return NULL;
}

/*
 * Open the devices of config into the server's table; 0 with status.  The
 * arena is registered with the GPUs (once per process: it stays
 * registered).
 */
static int
server_open_devices(SvcServer *server, const GaServiceConfig *config, GaStatus *status)
{
	static int	registered;
	int			g;

	if (config->run_cpu)
	{
		SvcServerDevice *d = &server->devices[server->ndevices];

		d->impl = ga_cpu_open(status);
		if (d->impl == NULL)
			return 0;
		d->kind = GA_DEVICE_CPU;
		d->index = server->ndevices;
		d->ops = &ga_cpu_ops;
		server->ndevices++;
	}
	for (g = 0; g < config->ngpus; g++)
	{
		SvcServerDevice *d = &server->devices[server->ndevices];
		double		setup_ms = 0;

		d->impl = ga_gpu_open(config->gpu_ordinals[g], &setup_ms, status);
		if (d->impl == NULL)
			return 0;
		d->kind = GA_DEVICE_GPU;
		d->index = server->ndevices;
		d->ordinal = config->gpu_ordinals[g];
		d->ops = &ga_gpu_ops;
		server->ndevices++;
	}
	if (config->ngpus > 0 && !registered)
	{
		GaService  *service = server->service;

		if (!ga_gpu_register_host(service->arena, service->arena_bytes, status))
			return 0;
		registered = 1;
	}
	return 1;
}

/*
 * Publish the device table in the shared header: a device that keeps its
 * place keeps its cumulative counters; none has an open object, and each
 * its memory in use and budget.
 */
static void
server_publish_devices(SvcServer *server)
{
	GaService  *service = server->service;
	int			old = SVC_LOAD(&service->ndevices);
	int			i;

	SVC_STORE(&service->ndevices, 0);
	for (i = 0; i < server->ndevices; i++)
	{
		SvcDeviceEntry *e = &service->devices[i];
		const SvcServerDevice *d = &server->devices[i];

		if (i >= old || SVC_LOAD(&e->kind) != (int32_t) d->kind ||
			SVC_LOAD(&e->ordinal) != d->ordinal)
		{
			memset(e, 0, sizeof(*e));
			SVC_STORE(&e->kind, (int32_t) d->kind);
			SVC_STORE(&e->ordinal, d->ordinal);
		}
		SVC_STORE(&e->active, 0);
		svc_admit_publish(server, i);
	}
	SVC_STORE(&service->ndevices, server->ndevices);
}

/*
 * Wait until no live client holds objects of a generation before this
 * one (they may still read or write the arena); 0 when told to stop.
 */
static int
server_wait_for_clients(GaService *service, uint64_t generation, int pid)
{
	int			noted = -1;

	for (;;)
	{
		int			holding = 0;
		int			i;

		for (i = 0; i < service->nslots; i++)
		{
			SvcSlot    *slot = &service->slots[i];
			uint64_t	held = SVC_LOAD(&slot->held_generation);

			if (held != 0 && held != generation && svc_pid_alive(SVC_LOAD(&slot->client_pid)))
				holding++;
		}
		if (holding == 0)
			return 1;
		if (server_stopping(service, pid))
			return 0;
		if (holding != noted)
		{
			svc_note_set(service,
						 "waiting for %d session%s to release results of the previous GPU service process",
						 holding, holding == 1 ? "" : "s");
			noted = holding;
		}
		server_sleep_ms(SERVER_GATE_MS);
	}
}

/* Start the request threads with every signal blocked; 0 with status. */
static int
server_start_threads(SvcServer *server, int nthreads, GaStatus *status)
{
	sigset_t	all,
				old;
	int			err = 0;

	server->threads = calloc((size_t) nthreads, sizeof(pthread_t));
	if (server->threads == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory in the GPU service");
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (server->nstarted < nthreads &&
		   (err = pthread_create(&server->threads[server->nstarted], NULL, server_thread,
								 server)) == 0)
		server->nstarted++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0)
		return ga_status_set(status, GA_ERR_DEVICE,
							 "could not start the GPU service's threads: %s", strerror(err));
	return 1;
}

/*
 * Stop: wait for the threads (each finishes the request it runs), fail the
 * queued requests, destroy every object, free the server's state.
 */
static void
server_shutdown(SvcServer *server)
{
	GaService  *service = server->service;
	int			i;

	SVC_STORE(&service->stop, server->pid);
	for (i = 0; i < server->nstarted; i++)
		(void) sem_post(&service->work);
	for (i = 0; i < server->nstarted; i++)
		pthread_join(server->threads[i], NULL);
	SVC_STORE(&service->state, GA_SERVICE_STOPPED);
	SVC_STORE(&service->pid, 0);
	svc_admit_fail_parked(server, GA_ERR_DEVICE,
						  "the GPU service stopped while this request waited for room");
	for (i = 0; i < service->nslots; i++)
		(void) svc_slot_fail(service, &service->slots[i], 0, GA_ERR_DEVICE,
							 "the GPU service stopped before it took this request", NULL);
	if (server->slots != NULL)
	{
		for (i = 0; i < service->nslots; i++)
		{
			svc_exec_release(server, i);
			free(server->slots[i].objects);
		}
	}
	svc_exec_free_pinned(server);
	pthread_mutex_destroy(&server->admit_lock);
	pthread_mutex_destroy(&server->publish_lock);
	pthread_mutex_destroy(&server->pinned_lock);
	free(server->slots);
	free(server->threads);
	free(server);
}

/*
 * Serve until ga_service_stop: open the devices, start the threads, mark
 * the service ready under a new generation; 0 after stopping, or -1 with
 * status when the service cannot start.
 */
int
ga_service_serve(GaService *service, const GaServiceConfig *config, GaStatus *status)
{
	SvcServer  *server;
	uint64_t	generation;

	ga_status_ok(status);
	if (service == NULL || SVC_LOAD(&service->magic) != SVC_MAGIC || config == NULL ||
		config->threads < 1 || config->ngpus < 0 || config->ngpus > GA_MAX_GPUS ||
		(!config->run_cpu && config->ngpus == 0))
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "the GPU service needs a laid-out service, at least one thread and one device");
		return -1;
	}
	server = calloc(1, sizeof(SvcServer));
	if (server == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory in the GPU service");
		return -1;
	}
	server->service = service;
	server->pid = (int) getpid();
	ga_tune_configure(config->tune_dir, config->version, config->log);
	pthread_mutex_init(&server->admit_lock, NULL);
	pthread_mutex_init(&server->publish_lock, NULL);
	pthread_mutex_init(&server->pinned_lock, NULL);
	server->budget = -1;		/* applied before the first admission */
	SVC_STORE(&service->state, GA_SERVICE_STARTING);
	SVC_STORE(&service->pid, (int32_t) server->pid);
	generation = SVC_LOAD(&service->generation) + 1;
	SVC_STORE(&service->generation, generation);
	server->generation = generation;
	svc_note_set(service, "opening the devices");

	if (!svc_arena_open(service, status) || !server_open_devices(server, config, status))
		goto fail;
	server_publish_devices(server);
	server->slots = calloc((size_t) service->nslots, sizeof(SvcServerSlot));
	if (server->slots == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory in the GPU service");
		goto fail;
	}
	if (!server_wait_for_clients(service, generation, server->pid))
	{
		server_shutdown(server);
		svc_note_set(service, "stopped");
		return 0;
	}
	service->nthreads = config->threads;
	if (!server_start_threads(server, config->threads, status))
		goto fail;
	svc_note_set(service, "serving %d device%s with %d thread%s", server->ndevices,
				 server->ndevices == 1 ? "" : "s", config->threads,
				 config->threads == 1 ? "" : "s");
	SVC_STORE(&service->state, GA_SERVICE_READY);

	while (!server_stopping(service, server->pid))
		(void) sem_wait(&service->stopping);
	server_shutdown(server);
	svc_note_set(service, "stopped");
	return 0;

fail:
	server_shutdown(server);
	svc_note_set(service, "could not start: %s", status->message);
	return -1;
}
