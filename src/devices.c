/*-------------------------------------------------------------------------
 *
 * devices.c
 *	  Which devices gpuagg can use: GPU discovery at server start, the
 *	  device a node is planned and run on, how large a join build it may
 *	  hold, and gpuagg_devices().
 *
 * Discovery runs once, while the postmaster loads the library, in a short
 * forked child: initialising CUDA in the postmaster itself would be inherited
 * by every backend and break them (a CUDA context does not survive fork).
 * The child writes what it found into a pipe and exits; backends inherit the
 * answer, so planning never touches the GPU.  A backend creates its CUDA
 * context the first time a node actually runs on the GPU.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "devices.h"
#include "guc.h"
#include "service/service.h"

PG_FUNCTION_INFO_V1(gpuagg_devices);

/*
 * libpq/libpq.h's, declared here: that header needs the GSSAPI headers of
 * a server built with them, which a build of the extension may not have.
 */
extern bool pq_check_connection(void);

/* How long the postmaster waits for the discovery child. */
#define DISCOVERY_TIMEOUT_MS 60000

/* What discovery found; inherited by every backend. */
static GaGpuInfo discovered_gpus[GA_MAX_GPUS];
static int	discovered_count = 0;
static char discovery_note[GA_MESSAGE_LEN] = "GPU discovery has not run";

/* The message layout the discovery child writes into the pipe. */
typedef struct DiscoveryReport
{
	int			count;
	GaStatus	status;
	GaGpuInfo	gpus[GA_MAX_GPUS];
} DiscoveryReport;

/* Read exactly len bytes from fd within the timeout; false on failure. */
static bool
read_fully(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t		done = 0;

	while (done < len)
	{
		struct pollfd pfd = {.fd = fd,.events = POLLIN};
		ssize_t		n;
		int			rc = poll(&pfd, 1, timeout_ms);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return false;
		n = read(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += n;
	}
	return true;
}

/* In the forked child: discover GPUs, report through fd, exit. */
static void
discovery_child(int fd)
{
	DiscoveryReport report;
	size_t		done = 0;

	memset(&report, 0, sizeof(report));
	report.count = ga_gpu_discover(report.gpus, GA_MAX_GPUS, &report.status);
	while (done < sizeof(report))
	{
		ssize_t		n = write(fd, (char *) &report + done, sizeof(report) - done);

		if (n <= 0 && errno != EINTR)
			break;
		if (n > 0)
			done += n;
	}
	_exit(0);
}

/*
 * Find the GPUs without initialising CUDA in this process.  Failures leave
 * "no usable GPU" with the reason.
 */
static void
discover_devices(void)
{
	int			fds[2];
	pid_t		pid;
	DiscoveryReport report;

	discovered_count = 0;
	if (!ga_gpu_compiled())
	{
		GaStatus	status;

		ga_gpu_discover(discovered_gpus, GA_MAX_GPUS, &status);
		strlcpy(discovery_note, status.message, sizeof(discovery_note));
		return;
	}
	if (pipe(fds) != 0)
	{
		snprintf(discovery_note, sizeof(discovery_note),
				 "GPU discovery could not create a pipe: %m");
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		snprintf(discovery_note, sizeof(discovery_note),
				 "GPU discovery could not fork: %m");
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0)
	{
		close(fds[0]);
		discovery_child(fds[1]);
	}
	close(fds[1]);
	if (read_fully(fds[0], (char *) &report, sizeof(report), DISCOVERY_TIMEOUT_MS))
	{
		discovered_count = Max(0, Min(report.count, GA_MAX_GPUS));
		memcpy(discovered_gpus, report.gpus, sizeof(discovered_gpus));
		if (discovered_count > 0)
			snprintf(discovery_note, sizeof(discovery_note), "%d GPU(s) found",
					 discovered_count);
		else
			strlcpy(discovery_note, report.status.message, sizeof(discovery_note));
	}
	else
	{
		kill(pid, SIGKILL);
		snprintf(discovery_note, sizeof(discovery_note),
				 "GPU discovery did not answer within %d seconds (a hung or broken CUDA driver?)",
				 DISCOVERY_TIMEOUT_MS / 1000);
	}
	close(fds[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * gpuagg.gpu_index's check once the GPUs are known (GpuAggGpuIndexCheck): an
 * index beyond the GPUs found is refused, saying what was found.
 */
static bool
gpu_index_found(int index, const char **detail)
{
	static char message[GA_MESSAGE_LEN + 128];

	if (index < discovered_count)
		return true;
	if (discovered_count == 0)
		snprintf(message, sizeof(message),
				 "gpuagg.gpu_index %d names no GPU; gpuagg found none at server start: %s.",
				 index, discovery_note);
	else
		snprintf(message, sizeof(message),
				 "gpuagg.gpu_index %d names no GPU; gpuagg found %d at server start, numbered 0 to %d.",
				 index, discovered_count, discovered_count - 1);
	*detail = message;
	return false;
}

/*
 * The server-log line that says which GPUs gpuagg found, or why none: one
 * line at server start, in the words of gpuagg_devices().
 */
static void
log_devices(void)
{
	StringInfoData buf;
	int			i;

	if (discovered_count == 0)
	{
		ereport(LOG,
				(errmsg("gpuagg: no usable GPU: %s; gpuagg plans its nodes only with gpuagg.device = cpu",
						discovery_note)));
		return;
	}
	initStringInfo(&buf);
	for (i = 0; i < discovered_count; i++)
	{
		const GaGpuInfo *gpu = &discovered_gpus[i];

		appendStringInfo(&buf, "%sGPU %d %s (%.1f GB, compute capability %d.%d)",
						 i == 0 ? "" : ", ", gpu->ordinal, gpu->name,
						 (double) gpu->total_memory / (1024.0 * 1024.0 * 1024.0),
						 gpu->cc_major, gpu->cc_minor);
	}
	ereport(LOG,
			(errmsg("gpuagg: %d usable GPU%s: %s; NVIDIA driver for CUDA %d.%d, gpuagg built with CUDA %d.%d",
					discovered_count, discovered_count == 1 ? "" : "s", buf.data,
					discovered_gpus[0].driver_version / 1000,
					(discovered_gpus[0].driver_version % 1000) / 10,
					discovered_gpus[0].runtime_version / 1000,
					(discovered_gpus[0].runtime_version % 1000) / 10)));
	pfree(buf.data);
}

/*
 * Find the GPUs once, at preload time, say in the server log what was
 * found, and from then on check gpuagg.gpu_index against it.  A
 * gpuagg.gpu_index from postgresql.conf that names no GPU is let be (the
 * server starts), with a warning; planning then refuses it.
 */
void
GpuAggDiscoverDevices(void)
{
	const char *detail;

	discover_devices();
	log_devices();
	if (!gpu_index_found(gpuagg_gpu_index, &detail))
		ereport(WARNING,
				(errmsg("gpuagg.gpu_index is %d, which names no GPU", gpuagg_gpu_index),
				 errdetail("%s", detail),
				 errhint("Until gpuagg.gpu_index names a GPU that gpuagg_devices() lists, gpuagg.device = auto plans no GPU node and gpuagg.device = gpu fails.")));
	GpuAggSetGpuIndexCheck(gpu_index_found);
}

/*
 * The GPU selected by gpuagg.gpu_index (-1: the first usable one), or NULL
 * when it is not usable.  Nodes are planned with its properties; with -1
 * the GPU service may run them on another GPU of the host, which is in
 * practice alike.
 */
const GaGpuInfo *
GpuAggSelectedGpu(void)
{
	int			index = gpuagg_gpu_index < 0 ? 0 : gpuagg_gpu_index;

	if (index < discovered_count)
		return &discovered_gpus[index];
	return NULL;
}

/*
 * The ordinal a node asks the GPU service for: the selected GPU's, or -1
 * (the service's choice) when gpuagg.gpu_index is -1.
 */
static int
service_gpu_ordinal(void)
{
	const GaGpuInfo *gpu = GpuAggSelectedGpu();

	if (gpuagg_gpu_index < 0 || gpu == NULL)
		return -1;
	return gpu->ordinal;
}

/* Why no GPU is usable, for messages. */
const char *
GpuAggNoGpuReason(void)
{
	if (discovered_count > 0 && gpuagg_gpu_index >= discovered_count)
		return psprintf("gpuagg.gpu_index is %d but only %d GPU(s) were found",
						gpuagg_gpu_index, discovered_count);
	return discovery_note;
}

/*
 * The bytes a GpuHashJoin's build may hold in this backend: hash_mem
 * (work_mem x hash_mem_multiplier), as PostgreSQL's hash join, or
 * gpuagg.hashjoin_build_limit when that is lower.  Past it the join
 * partitions both sides on disk.  The same on every device: the GPU holds
 * one partition's keys at a time.
 */
double
GpuAggHashJoinBuildLimit(void)
{
	double		limit = (double) get_hash_memory_limit();

	if (gpuagg_hashjoin_build_limit >= 0)
		limit = Min(limit, (double) gpuagg_hashjoin_build_limit * 1024.0);
	return limit;
}

/*
 * The bytes an aggjoin's builds, which it cannot partition, may take where
 * the device planned holds them: on the CPU device the memory of the
 * process it runs in, so a GpuHashJoin build's; on the GPU device its own
 * memory, at most a quarter of it (and gpuagg.hashjoin_build_limit when
 * given), the host holding only the batches in flight.
 */
double
GpuAggJoinBuildsLimit(GaDeviceKind device)
{
	const GaGpuInfo *gpu = GpuAggSelectedGpu();
	double		limit;

	if (device != GA_DEVICE_GPU || gpu == NULL || gpu->total_memory <= 0)
		return GpuAggHashJoinBuildLimit();
	limit = (double) gpu->total_memory / 4.0;
	if (gpuagg_hashjoin_build_limit >= 0)
		limit = Min(limit, (double) gpuagg_hashjoin_build_limit * 1024.0);
	return limit;
}

/*
 * The device gpuagg.device asks for.  *usable is false when that is the GPU
 * and none can be used: auto then plans nothing, gpu plans and fails at run
 * time with the reason.  A gpuagg.gpu_index from postgresql.conf that names
 * no GPU fails planning under gpu and plans nothing under auto.
 */
GaDeviceKind
GpuAggPlannedDeviceKind(bool *usable)
{
	const char *detail;

	*usable = true;
	if (gpuagg_device == GPUAGG_DEVICE_CPU)
		return GA_DEVICE_CPU;
	/* a gpuagg.gpu_index from postgresql.conf, which discovery had not checked */
	if (discovered_count > 0 && !gpu_index_found(gpuagg_gpu_index, &detail))
	{
		if (gpuagg_device == GPUAGG_DEVICE_AUTO)
		{
			*usable = false;
			return GA_DEVICE_GPU;
		}
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpuagg.gpu_index is %d, which names no GPU", gpuagg_gpu_index),
				 errdetail("%s", detail),
				 errhint("Set gpuagg.gpu_index to a GPU that gpuagg_devices() lists, or to -1 for any.")));
	}
	if (GpuAggSelectedGpu() == NULL)
		*usable = false;
	return GA_DEVICE_GPU;
}

/*
 * Open a device in this backend, reporting failures as errors.
 */
static GaDevice *
open_local_device(GaDeviceKind kind, int gpu_ordinal, double *setup_ms)
{
	GaStatus	status;
	GaDevice   *device;

	device = ga_device_open(kind, gpu_ordinal, &status);
	if (device == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuagg could not open the %s device", kind == GA_DEVICE_GPU ? "GPU" : "CPU"),
				 errdetail("%s", status.message),
				 errhint("Set gpuagg.device = cpu to run on the CPU, or gpuagg.enabled = off.")));
	*setup_ms = ga_device_setup_ms(device);
	return device;
}

/*
 * Open the device a node runs on, reporting failures as errors: in the GPU
 * service when gpuagg.device_host sends it there (with gpuagg.gpu_index -1,
 * the GPU the service chooses at each create), else in this backend.  A
 * GPU that vanished after planning under gpuagg.device = auto quietly
 * becomes the CPU; so does a device the service cannot give within
 * gpuagg.service_wait.  The service's creates wait for room as long as
 * gpuagg.service_wait too, and give up on cancel.
 */
GaDevice *
GpuAggOpenDevice(GaDeviceKind kind, double *setup_ms)
{
	int			ordinal = 0;

	*setup_ms = 0;
	if (kind == GA_DEVICE_GPU && GpuAggSelectedGpu() == NULL)
	{
		if (gpuagg_device != GPUAGG_DEVICE_GPU)
			kind = GA_DEVICE_CPU;
		else
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("gpuagg.device is \"gpu\" but no usable GPU was found"),
					 errdetail("%s", GpuAggNoGpuReason()),
					 errhint("Set gpuagg.device to \"auto\" or \"cpu\", or see SELECT * FROM gpuagg_devices().")));
	}
	if (kind == GA_DEVICE_GPU)
		ordinal = GpuAggSelectedGpu()->ordinal;
	if (GpuAggServiceWanted(kind))
	{
		GaStatus	status;
		GaDevice   *device;

		if (kind == GA_DEVICE_GPU)
			ordinal = service_gpu_ordinal();
		ga_service_set_wait_ms(gpuagg_service_wait);
		ga_service_set_wait_callback(GpuAggDeviceWait, NULL);
		device = GpuAggServiceDevice(kind, ordinal, &status);
		if (device != NULL)
			return device;
		ereport(DEBUG1,
				(errmsg_internal("gpuagg: running on the CPU device in this backend: %s",
								 status.message)));
		ga_service_count_fallback(GpuAggService(), kind, ordinal);
		kind = GA_DEVICE_CPU;
		ordinal = 0;
	}
	return open_local_device(kind, ordinal, setup_ms);
}

/*
 * Open the CPU device in this backend: where a node finishes after its
 * device, `failed`, failed (the GPU service's devices included: the
 * service counts such a query in gpuagg_stats).
 */
GaDevice *
GpuAggOpenFallbackDevice(const GaDevice *failed, double *setup_ms)
{
	if (failed != NULL && ga_device_is_service(failed) && GpuAggService() != NULL)
		ga_service_count_fallback(GpuAggService(), ga_device_kind(failed),
								  service_gpu_ordinal());
	*setup_ms = 0;
	return open_local_device(GA_DEVICE_CPU, 0, setup_ms);
}

/*
 * Whether a node whose device failed with status may finish on the CPU
 * device: a GPU's failures, any failure of the GPU service (the service's
 * CPU device included) and injected ones, but not a malformed request,
 * which the CPU would refuse too.
 */
bool
GpuAggDeviceFailureRecoverable(const GaDevice *device, const GaStatus *status)
{
	if (status->code == GA_ERR_INVALID)
		return false;
	return ga_device_kind(device) == GA_DEVICE_GPU || ga_device_is_service(device) ||
		status->code == GA_ERR_INJECTED;
}

/* The usable GPUs' ordinals (at most max); returns how many. */
int
GpuAggUsableGpuOrdinals(int *ordinals, int max)
{
	int			n = 0;
	int			i;

	for (i = 0; i < discovered_count && n < max; i++)
		ordinals[n++] = discovered_gpus[i].ordinal;
	return n;
}

/*
 * The device a node runs on, in EXPLAIN's words: "GPU" or "CPU", the
 * device it opened or, before it ran, the one it was planned on.
 */
const char *
GpuAggDeviceName(const GaDevice *device, GaDeviceKind planned)
{
	if (device != NULL)
		return ga_device_kind(device) == GA_DEVICE_GPU ? "GPU" : "CPU";
	return planned == GA_DEVICE_GPU ? "GPU" : "CPU";
}

/*
 * The Device line of both nodes ("GPU" or "CPU" as the executor reports it):
 * the GPU that ran the node (ran_on, its ordinal; -1 before it ran), else
 * the one it is planned on.  Returns the planned GPU's properties, or NULL
 * for the CPU or no usable GPU.
 */
const GaGpuInfo *
GpuAggExplainDevice(const char *device_name, int ran_on, ExplainState *es)
{
	const GaGpuInfo *gpu = NULL;

	if (strcmp(device_name, "GPU") == 0)
	{
		const GaGpuInfo *shown;
		int			i;

		gpu = GpuAggSelectedGpu();
		shown = gpu;
		for (i = 0; i < discovered_count && ran_on >= 0; i++)
			if (discovered_gpus[i].ordinal == ran_on)
				shown = &discovered_gpus[i];
		if (shown != NULL)
			ExplainPropertyText("Device", psprintf("GPU %d (%s)", shown->ordinal, shown->name), es);
		else
			ExplainPropertyText("Device", "GPU (none usable)", es);
	}
	else
		ExplainPropertyText("Device", "CPU", es);
	return gpu;
}

/* Format a CUDA version number (1000*major + 10*minor) as text. */
static text *
cuda_version_text(int version)
{
	return cstring_to_text(psprintf("%d.%d", version / 1000, (version % 1000) / 10));
}

/*
 * The columns of gpuagg_devices() this library returns, by name and type.
 * The SQL declaration of an older version of the extension (a library
 * installed before ALTER EXTENSION gpuagg UPDATE) may list fewer of them:
 * each row is built for the columns the caller's declaration has.
 */
#define DEVICE_COLUMNS 10

static const struct
{
	const char *name;
	Oid			type;
}			device_columns[DEVICE_COLUMNS] = {
	{"device", INT4OID}, {"name", TEXTOID}, {"total_memory", INT8OID},
	{"multiprocessors", INT4OID}, {"compute_capability", TEXTOID},
	{"driver_version", TEXTOID}, {"runtime_version", TEXTOID},
	{"usable", BOOLOID}, {"note", TEXTOID}, {"service", TEXTOID}
};

/*
 * Map each column of the declared result tupdesc to its index in
 * device_columns; raise an error naming the fix for a declared column this
 * library does not return.
 */
static void
map_device_columns(TupleDesc tupdesc, int *map)
{
	int			a;

	for (a = 0; a < tupdesc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, a);
		int			c;

		map[a] = -1;
		if (attr->attisdropped)
			continue;
		for (c = 0; c < DEVICE_COLUMNS; c++)
			if (strcmp(NameStr(attr->attname), device_columns[c].name) == 0 &&
				attr->atttypid == device_columns[c].type)
				break;
		if (c == DEVICE_COLUMNS)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("gpuagg_devices() is declared with a column \"%s\" of type %s that this gpuagg library does not return",
							NameStr(attr->attname), format_type_be(attr->atttypid)),
					 errhint("Run ALTER EXTENSION gpuagg UPDATE to match the installed library.")));
		map[a] = c;
	}
}

/* Store one row of gpuagg_devices() in the columns the caller declared. */
static void
put_device_row(ReturnSetInfo *rsinfo, const int *map, const Datum *values,
			   const bool *nulls)
{
	TupleDesc	tupdesc = rsinfo->setDesc;
	Datum	   *row_values = palloc(sizeof(Datum) * Max(tupdesc->natts, 1));
	bool	   *row_nulls = palloc(sizeof(bool) * Max(tupdesc->natts, 1));
	int			a;

	for (a = 0; a < tupdesc->natts; a++)
	{
		row_values[a] = map[a] >= 0 ? values[map[a]] : (Datum) 0;
		row_nulls[a] = map[a] >= 0 ? nulls[map[a]] : true;
	}
	tuplestore_putvalues(rsinfo->setResult, tupdesc, row_values, row_nulls);
	pfree(row_values);
	pfree(row_nulls);
}

/*
 * gpuagg_devices(): one row per GPU found at server start, or one row saying
 * that there is no usable GPU and why.
 */
Datum
gpuagg_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *service_state = "off";
	int		   *map;
	int			i;

	if (GpuAggService() != NULL)
	{
		char		note[GA_MESSAGE_LEN];
		int			pid;

		service_state = GpuAggServiceStateName(ga_service_state(GpuAggService(), &pid,
																  note, sizeof(note)));
	}
	InitMaterializedSRF(fcinfo, 0);
	map = palloc(sizeof(int) * Max(rsinfo->setDesc->natts, 1));
	map_device_columns(rsinfo->setDesc, map);
	for (i = 0; i < discovered_count; i++)
	{
		const GaGpuInfo *gpu = &discovered_gpus[i];
		Datum		values[DEVICE_COLUMNS];
		bool		nulls[DEVICE_COLUMNS] = {0};

		values[0] = Int32GetDatum(gpu->ordinal);
		values[1] = CStringGetTextDatum(gpu->name);
		values[2] = Int64GetDatum(gpu->total_memory);
		values[3] = Int32GetDatum(gpu->multiprocessors);
		values[4] = CStringGetTextDatum(psprintf("%d.%d", gpu->cc_major, gpu->cc_minor));
		values[5] = PointerGetDatum(cuda_version_text(gpu->driver_version));
		values[6] = PointerGetDatum(cuda_version_text(gpu->runtime_version));
		values[7] = BoolGetDatum(true);
		values[8] = CStringGetTextDatum(i == gpuagg_gpu_index ? "selected by gpuagg.gpu_index" : "");
		values[9] = CStringGetTextDatum(service_state);
		put_device_row(rsinfo, map, values, nulls);
	}
	if (discovered_count == 0)
	{
		Datum		values[DEVICE_COLUMNS];
		bool		nulls[DEVICE_COLUMNS] = {true, false, true, true, true, true, true, false, false, false};

		values[1] = CStringGetTextDatum("none");
		values[7] = BoolGetDatum(false);
		values[8] = CStringGetTextDatum(discovery_note);
		values[9] = CStringGetTextDatum(service_state);
		put_device_row(rsinfo, map, values, nulls);
	}
	return (Datum) 0;
}

/*
 * The wait callback of every device call: tells a device wait loop to give
 * up when the query is being cancelled or the backend terminated, or when
 * its client went away (seen every client_connection_check_interval); the
 * caller then raises the error.
 */
int
GpuAggDeviceWait(void *arg)
{
	if (InterruptPending && (QueryCancelPending || ProcDiePending))
		return 1;
	return CheckClientConnectionPending && !pq_check_connection();
}

/* Raise the error a cancelled device wait stands for (the wait returned). */
void
GpuAggRaiseCancel(void)
{
	CHECK_FOR_INTERRUPTS();
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("canceling statement while the gpuagg device was busy")));
}

/* Milliseconds since start: the host-time figures of EXPLAIN ANALYZE. */
double
GpuAggElapsedMs(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}
