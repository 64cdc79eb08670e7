/*-------------------------------------------------------------------------
 *
 * service/service.c
 *	  The GPU service's shared memory and background worker, and a
 *	  backend's way to its devices.
 *
 * With gpuagg.service on, the postmaster sets aside, in its main shared
 * memory segment, the service's slots (one per PGPROC that can run a
 * query) and its arena (gpuagg.service_memory), and registers the
 * background worker whose supervisor (supervisor.c) runs the service
 * process.  Every backend inherits the segment at the same address, which
 * cuda/gpuagg_service.h relies on.
 *
 * A backend sends a device's work to the service when gpuagg.device_host
 * says so (GpuAggServiceWanted): by default the GPU, never the CPU device,
 * which runs as well in the backend; "service" sends the CPU device too
 * (what the tests use to exercise the service without a GPU).  Opening
 * waits up to gpuagg.service_wait for a service that is starting or
 * restarting; a device the service cannot give in that time is the
 * caller's to replace with the CPU device here.  At exit a backend drops
 * whatever it still holds in the service.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "guc.h"
#include "service/service.h"

/* The service's shared state; NULL without gpuagg.service. */
static GaService *service = NULL;

/* This backend's devices in the service, opened once. */
static GaDevice *service_cpu = NULL;
static GaDevice *service_gpus[GA_MAX_GPUS];
static GaDevice *service_any_gpu;	/* the service's choice of GPU */

/* Whether this backend releases its service objects at exit. */
static bool release_at_exit = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Bytes of the main shared memory segment the service takes. */
static Size
service_bytes(void)
{
	return ga_service_size(MaxBackends, (size_t) gpuagg_service_memory * 1024 * 1024);
}

/* shmem_request_hook: ask for the service's share of the segment. */
static void
service_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(service_bytes());
}

/* shmem_startup_hook: lay the service out (once, in the postmaster). */
static void
service_shmem_startup(void)
{
	Size		bytes = service_bytes();
	void	   *place;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	place = ShmemInitStruct("gpuagg GPU service", bytes, &found);
	if (!found)
	{
		GaStatus	status;

		service = ga_service_init(place, MaxBackends,
								  (size_t) gpuagg_service_memory * 1024 * 1024, &status);
		if (service == NULL)
			ereport(LOG,
					(errmsg("gpuagg: the GPU service could not be set up"),
					 errdetail("%s", status.message)));
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Set the service up from _PG_init: with gpuagg.service on, its shared
 * memory and the background worker that supervises the service process.
 */
void
GpuAggServiceInit(void)
{
	BackgroundWorker worker;

	if (!gpuagg_service)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = service_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = service_shmem_startup;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpuagg");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "GpuAggServiceMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpuagg GPU service");
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpuagg GPU service");
	RegisterBackgroundWorker(&worker);
}

/* The service's shared state, or NULL when there is no service. */
GaService *
GpuAggService(void)
{
	return service;
}

/* The name gpuagg_devices() and the messages use for a service state. */
const char *
GpuAggServiceStateName(GaServiceState state)
{
	switch (state)
	{
		case GA_SERVICE_STOPPED:
			return "stopped";
		case GA_SERVICE_STARTING:
			return "starting";
		case GA_SERVICE_READY:
			return "ready";
		case GA_SERVICE_RESTARTING:
			return "restarting";
	}
	return "unknown";
}

/*
 * Whether a device of this kind goes to the service for this backend
 * (gpuagg.device_host, and a service that exists and can serve it).
 */
bool
GpuAggServiceWanted(GaDeviceKind kind)
{
	int			slot = GpuAggMyProcNumber();

	if (service == NULL || slot < 0 || slot >= MaxBackends)
		return false;
	switch ((GpuAggDeviceHost) gpuagg_device_host)
	{
		case GPUAGG_HOST_BACKEND:
			return false;
		case GPUAGG_HOST_SERVICE:
			return true;
		case GPUAGG_HOST_AUTO:
			return kind == GA_DEVICE_GPU;
	}
	return false;
}

/* before_shmem_exit callback: drop what this backend holds in the service. */
static void
service_release(int code, Datum arg)
{
	int			slot = GpuAggMyProcNumber();

	if (service != NULL && slot >= 0 && slot < MaxBackends)
		ga_service_release(service, slot);
}

/*
 * Wait until the service is ready, at most gpuagg.service_wait; false with
 * the reason in status when it is not by then.
 */
static bool
service_wait_ready(GaStatus *status)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   gpuagg_service_wait);

	for (;;)
	{
		char		note[GA_MESSAGE_LEN];
		int			pid;
		GaServiceState state = ga_service_state(service, &pid, note, sizeof(note));

		if (state == GA_SERVICE_READY)
			return true;
		if (GetCurrentTimestamp() >= deadline)
		{
			status->code = GA_ERR_NO_DEVICE;
			snprintf(status->message, GA_MESSAGE_LEN,
					 "the GPU service is %s%s%s", GpuAggServiceStateName(state),
					 note[0] != '\0' ? ": " : "", note);
			return false;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * This backend's device of the service: the CPU device or GPU gpu_ordinal
 * (-1: the GPU the service chooses at each create).  NULL with the reason
 * in status when the service cannot give it within gpuagg.service_wait.
 */
GaDevice *
GpuAggServiceDevice(GaDeviceKind kind, int gpu_ordinal, GaStatus *status)
{
	int			slot = GpuAggMyProcNumber();
	GaDevice  **cached;

	Assert(service != NULL && slot >= 0 && slot < MaxBackends);
	if (kind == GA_DEVICE_GPU && (gpu_ordinal < -1 || gpu_ordinal >= GA_MAX_GPUS))
	{
		status->code = GA_ERR_INVALID;
		snprintf(status->message, GA_MESSAGE_LEN, "GPU %d does not exist", gpu_ordinal);
		return NULL;
	}
	if (!release_at_exit)
	{
		before_shmem_exit(service_release, (Datum) 0);
		release_at_exit = true;
	}
	if (!service_wait_ready(status))
		return NULL;

	cached = kind == GA_DEVICE_CPU ? &service_cpu :
		gpu_ordinal < 0 ? &service_any_gpu : &service_gpus[gpu_ordinal];
	if (*cached == NULL)
		*cached = ga_service_open(service, slot, kind, gpu_ordinal, status);
	return *cached;
}
