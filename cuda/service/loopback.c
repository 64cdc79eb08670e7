/*-------------------------------------------------------------------------
 *
 * service/loopback.c
 *	  A GPU service inside one process, for tests (service/service_internal.h):
 *	  the service's memory is an anonymous mapping of the process,
 *	  ga_service_serve runs on a thread of it, and the test's threads are
 *	  its clients.  Everything between a client and the service goes
 *	  through the same slots, semaphores and arena as between a backend
 *	  and the service process; only the process boundary is missing, so
 *	  that CI exercises the whole protocol without PostgreSQL.  The loss of
 *	  the service process is simulated by stopping the serving thread and
 *	  calling ga_service_lost as a supervisor would.
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "util.h"

#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* How long start and restart wait for the serving thread. */
#define LOOPBACK_START_MS 120000

/* The process's loopback service. */
static struct
{
	GaService  *service;
	GaServiceConfig config;
	pthread_t	thread;
	int			running;
	int			rc;				/* ga_service_serve's, once it returned */
	int			returned;		/* atomic */
	GaStatus	status;
}			loop;

/* The serving thread. */
static void *
loopback_serve(void *arg)
{
	(void) arg;
	loop.rc = ga_service_serve(loop.service, &loop.config, &loop.status);
	SVC_STORE(&loop.returned, 1);
	return NULL;
}

/*
 * Start the serving thread and wait until the service reaches `until`
 * (READY; or STARTING, for a start that waits for clients) or serve
 * failed; 0 with status.
 */
static int
loopback_run(GaServiceState until, GaStatus *status)
{
	struct timespec pause = {0, 1000000L};
	int			waited;
	int			err;

	SVC_STORE(&loop.returned, 0);
	err = pthread_create(&loop.thread, NULL, loopback_serve, NULL);
	if (err != 0)
		return ga_status_set(status, GA_ERR_DEVICE, "could not start the serving thread: %s",
							 strerror(err));
	loop.running = 1;
	for (waited = 0; waited < LOOPBACK_START_MS; waited++)
	{
		GaServiceState state = ga_service_state(loop.service, NULL, NULL, 0);

		if (SVC_LOAD(&loop.returned))
			break;
		if (state == GA_SERVICE_READY || (until == GA_SERVICE_STARTING && state == until))
			return 1;
		nanosleep(&pause, NULL);
	}
	if (SVC_LOAD(&loop.returned))
	{
		pthread_join(loop.thread, NULL);
		loop.running = 0;
		*status = loop.status;
		if (status->code == GA_OK)
			ga_status_set(status, GA_ERR_DEVICE, "the loopback service stopped at once");
		return 0;
	}
	return ga_status_set(status, GA_ERR_DEVICE, "the loopback service did not start in %d s",
						 LOOPBACK_START_MS / 1000);
}

/* Start the process's loopback service (see service_internal.h). */
GaService *
ga_service_loopback_start(int nslots, size_t arena_bytes, int threads, int run_gpu,
						  GaStatus *status)
{
	size_t		bytes = ga_service_size(nslots, arena_bytes);
	void	   *memory;

	ga_status_ok(status);
	if (loop.service != NULL)
	{
		ga_status_set(status, GA_ERR_INVALID, "a process runs one loopback service");
		return NULL;
	}
	memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (memory == MAP_FAILED)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "could not map %.0f MB for the loopback service", (double) bytes / 1048576.0);
		return NULL;
	}
	loop.service = ga_service_init(memory, nslots, arena_bytes, status);
	if (loop.service == NULL)
	{
		munmap(memory, bytes);
		return NULL;
	}
	/* pieces small enough that the tests' build sides take both paths */
	svc_stage_piece_bytes = 64 * 1024;
	memset(&loop.config, 0, sizeof(loop.config));
	loop.config.threads = threads;
	loop.config.run_cpu = 1;
	loop.config.ngpus = run_gpu ? 1 : 0;
	loop.config.gpu_ordinals[0] = 0;
	if (!loopback_run(GA_SERVICE_READY, status))
		return NULL;			/* the mapping stays: it may be the host provider */
	return loop.service;
}

/* Stop serving, lose the service as a supervisor sees it, serve again. */
int
ga_service_loopback_restart(GaService *service, const char *why, GaStatus *status)
{
	ga_status_ok(status);
	if (service != loop.service || !loop.running)
		return ga_status_set(status, GA_ERR_INVALID, "the loopback service is not running");
	ga_service_stop(service);
	pthread_join(loop.thread, NULL);
	loop.running = 0;
	ga_service_lost(service, (int) getpid(), why);
	SVC_STORE(&service->stop, 0);
	return loopback_run(GA_SERVICE_STARTING, status);
}

/* Hold requests before they run, or let them run (the test hook). */
void
ga_service_loopback_pause(int paused)
{
	svc_server_pause(paused);
}

/* How many requests are held now. */
int
ga_service_loopback_held(void)
{
	return svc_server_held();
}

/* Stop serving; the memory stays mapped, as the host provider. */
void
ga_service_loopback_stop(GaService *service)
{
	if (service != loop.service || !loop.running)
		return;
	ga_service_stop(service);
	pthread_join(loop.thread, NULL);
	loop.running = 0;
}
