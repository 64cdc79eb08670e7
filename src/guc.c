/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  The gpuagg.* settings.  The names are part of the interface: tests,
 *	  scripts and later features depend on them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "utils/guc.h"

#include "gpuagg_device.h"
#include "guc.h"

/* GUC variables */
bool		gpuagg_enabled = true;
bool		gpuagg_enable_hashagg = true;
bool		gpuagg_enable_hashjoin = true;
bool		gpuagg_enable_aggjoin = true;
bool		gpuagg_numeric_on_device = true;
bool		gpuagg_string_keys = true;
bool		gpuagg_force = false;
bool		gpuagg_explain_device_details = true;
bool		gpuagg_direct_scan = true;
bool		gpuagg_page_scan = false;
bool		gpuagg_probe_filter = true;
int			gpuagg_device = GPUAGG_DEVICE_AUTO;
int			gpuagg_strategy = GA_STRATEGY_AUTO;
int			gpuagg_batch_rows = 1048576;
int			gpuagg_gpu_index = -1;	/* -1: any GPU, the GPU service's choice */
int			gpuagg_debug_fail_at_batch = 0;
int			gpuagg_debug_hash_bits = 0;
int			gpuagg_hashjoin_build_limit = -1;	/* kB; -1 = from the memory sizes */
double		gpuagg_gpu_startup_cost = 1000.0;
double		gpuagg_gpu_tuple_cost = 0.0002;
double		gpuagg_batch_value_cost = 0.0005;
double		gpuagg_cpu_device_tuple_cost = 0.015;
bool		gpuagg_service = true;
int			gpuagg_service_memory = 1024;	/* MB */
int			gpuagg_service_threads = 16;
int			gpuagg_device_host = GPUAGG_HOST_AUTO;
int			gpuagg_service_wait = 10000;	/* ms */
int			gpuagg_gpu_memory_budget = 0;	/* MB; 0 = 90% of each GPU's memory */
int			gpuagg_tuning = GA_TUNING_OFF;
char	   *gpuagg_debug_launch = NULL;
bool		gpuagg_debug_launch_set = false;
GaLaunchParams gpuagg_debug_launch_params;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUAGG_DEVICE_AUTO, false},
	{"gpu", GPUAGG_DEVICE_GPU, false},
	{"cpu", GPUAGG_DEVICE_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry device_host_options[] = {
	{"auto", GPUAGG_HOST_AUTO, false},
	{"service", GPUAGG_HOST_SERVICE, false},
	{"backend", GPUAGG_HOST_BACKEND, false},
	{NULL, 0, false}
};

static const struct config_enum_entry strategy_options[] = {
	{"auto", GA_STRATEGY_AUTO, false},
	{"perfect", GA_STRATEGY_PERFECT, false},
	{"shared", GA_STRATEGY_SHARED, false},
	{"global", GA_STRATEGY_GLOBAL, false},
	{"partitioned", GA_STRATEGY_PARTITIONED, false},
	{NULL, 0, false}
};

static const struct config_enum_entry tuning_options[] = {
	{"on", GA_TUNING_ON, false},
	{"off", GA_TUNING_OFF, false},
	{"frozen", GA_TUNING_FROZEN, false},
	{"true", GA_TUNING_ON, true},
	{"false", GA_TUNING_OFF, true},
	{NULL, 0, false}
};

/* The GPUs' check of gpuagg.gpu_index: none before discovery ran. */
static GpuAggGpuIndexCheck gpu_index_check = NULL;

/* Check gpuagg.gpu_index against the GPUs found from now on. */
void
GpuAggSetGpuIndexCheck(GpuAggGpuIndexCheck check)
{
	gpu_index_check = check;
}

/*
 * gpuagg.gpu_index: a GPU that discovery found.  Before discovery (the
 * postmaster reading postgresql.conf) any value passes; planning then
 * refuses one that names no GPU (devices.c).
 */
static bool
check_gpu_index(int *newval, void **extra, GucSource source)
{
	const char *detail;

	if (gpu_index_check == NULL || gpu_index_check(*newval, &detail))
		return true;
	GUC_check_errdetail("%s", detail);
	GUC_check_errhint("SELECT * FROM gpuagg_devices() lists the GPUs; -1 runs on any of them.");
	return false;
}

/*
 * Check gpuagg.debug_launch: empty, or comma-separated name=value pairs of
 * GaLaunchParams fields (threads, blocks_per_sm, replicas_max, cache_less,
 * part_shift), each within its range; the parsed parameters go to extra.
 */
static bool
check_debug_launch(char **newval, void **extra, GucSource source)
{
	GaLaunchParams params;
	GaLaunchParams *parsed;
	char		why[256];

	if (!ga_launch_params_parse(*newval != NULL ? *newval : "", &params, why, sizeof(why)))
	{
		GUC_check_errdetail("%s.", why);
		return false;
	}
	/* the GUC machinery frees extra with free() */
	parsed = malloc(sizeof(GaLaunchParams));
	if (parsed == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	*parsed = params;
	*extra = parsed;
	return true;
}

/* Keep gpuagg.debug_launch's parameters, and whether it is set. */
static void
assign_debug_launch(const char *newval, void *extra)
{
	gpuagg_debug_launch_set = newval != NULL && newval[0] != '\0';
	if (extra != NULL)
		gpuagg_debug_launch_params = *(GaLaunchParams *) extra;
}

/* gpuagg.hashjoin_build_limit: -1 (automatic) or at least 64kB. */
static bool
check_build_limit(int *newval, void **extra, GucSource source)
{
	if (*newval == -1 || *newval >= 64)
		return true;
	GUC_check_errdetail("gpuagg.hashjoin_build_limit must be -1 (automatic) or at least 64kB.");
	return false;
}

/* Define every gpuagg.* setting and reserve the prefix. */
void
GpuAggGucInit(void)
{
	DefineCustomBoolVariable("gpuagg.enabled",
							 "Enables the gpuagg plan nodes.",
							 "When off, every query gets PostgreSQL's own plan.",
							 &gpuagg_enabled, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.enable_hashagg",
							 "Enables GpuHashAgg in place of HashAggregate and Agg.",
							 NULL,
							 &gpuagg_enable_hashagg, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.enable_hashjoin",
							 "Enables GpuHashJoin in place of Hash Join.",
							 NULL,
							 &gpuagg_enable_hashjoin, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.numeric_on_device",
							 "Lets the device compute numeric +, - and * inside aggregate arguments.",
							 "The child then computes only the operands (numeric columns of at most 18 digits, integers, constants), and sum, avg, min and max of the expression are computed exactly on the device.",
							 &gpuagg_numeric_on_device, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.string_keys",
							 "Sends text, varchar and uuid group keys, DISTINCT arguments and aggjoin keys to the device as their bytes.",
							 "The device then hashes and compares the bytes itself; off, they travel as ids of a dictionary that the leader keeps.",
							 &gpuagg_string_keys, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.enable_aggjoin",
							 "Enables GpuHashAgg computing the equi-join below it on the device.",
							 "The joined rows then never reach the host; needs gpuagg.enable_hashjoin too.",
							 &gpuagg_enable_aggjoin, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuagg.device",
							 "Where the gpuagg nodes run: auto, gpu or cpu.",
							 "auto uses a usable GPU and plans no gpuagg node when there is none; "
							 "gpu requires a GPU; cpu runs the nodes on the CPU device.",
							 &gpuagg_device, GPUAGG_DEVICE_AUTO, device_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.force",
							 "Plans a gpuagg node for every query it supports, whatever the cost.",
							 "For tests and for comparing plans.",
							 &gpuagg_force, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuagg.strategy",
							 "GPU aggregation strategy: auto, perfect, shared, global or partitioned.",
							 "perfect indexes small key ranges directly; shared keeps per-block "
							 "tables in shared memory (few groups); global aggregates in one "
							 "device-memory table with atomics (many groups); partitioned "
							 "partitions rows by key hash first (groups beyond the L2 cache).",
							 &gpuagg_strategy, GA_STRATEGY_AUTO, strategy_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.batch_rows",
							"Rows in each columnar batch sent to the device.",
							NULL,
							&gpuagg_batch_rows, 1048576, 16, 64 * 1024 * 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.gpu_index",
							"Which GPU (CUDA device ordinal) the gpuagg nodes use; -1 for any.",
							"With -1 the GPU service runs each node on the usable GPU with the least memory in use; "
							"a session that runs the GPU itself uses the first usable GPU.",
							&gpuagg_gpu_index, -1, -1, GA_MAX_GPUS - 1,
							PGC_USERSET, 0, check_gpu_index, NULL, NULL);
	DefineCustomRealVariable("gpuagg.gpu_startup_cost",
							 "Planner cost of starting work on the GPU for one node.",
							 NULL,
							 &gpuagg_gpu_startup_cost, 1000.0, 0.0, 1e10,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("gpuagg.gpu_tuple_cost",
							 "Planner cost of moving and aggregating one input row on the GPU.",
							 NULL,
							 &gpuagg_gpu_tuple_cost, 0.0002, 0.0, 1e10,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("gpuagg.batch_value_cost",
							 "Planner cost of copying one value into a columnar batch.",
							 NULL,
							 &gpuagg_batch_value_cost, 0.0005, 0.0, 1e10,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("gpuagg.cpu_device_tuple_cost",
							 "Planner cost of the CPU device's work on one input row, beyond its hashing.",
							 "Taking the row from its batch in one process, whatever the "
							 "workers that packed it; a join on the device costs four times "
							 "as much per probe and per build row.",
							 &gpuagg_cpu_device_tuple_cost, 0.015, 0.0, 1e10,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.explain_device_details",
							 "Shows device-specific lines (device, strategy, bytes, times) in EXPLAIN.",
							 "Turn off to get EXPLAIN output that is the same on every machine.",
							 &gpuagg_explain_device_details, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.direct_scan",
							 "Lets GpuHashAgg read heap pages itself when its input is a plain sequential scan.",
							 "The scan's visible tuples are deformed straight into batches instead of passing one at a time through the Seq Scan node.",
							 &gpuagg_direct_scan, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.page_scan",
							 "Lets a direct scan send whole heap pages to a device that deforms them.",
							 "Pages are copied with the offsets of their visible tuples and the device deforms the tuples; off, the scan deforms them into batches itself (faster on the CPU device).",
							 &gpuagg_page_scan, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuagg.probe_filter",
							 "Lets the parallel workers of an aggjoin GpuHashAgg drop probe rows whose join key no build row has.",
							 "The leader builds a Bloom filter of each INNER join's build keys; the workers packing the probe side test every row's key against it.",
							 &gpuagg_probe_filter, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.hashjoin_build_limit",
							"Memory a join build may hold, below hash_mem (work_mem times hash_mem_multiplier).",
							"A GpuHashJoin whose build side outgrows it partitions both sides on disk; an aggjoin whose builds are expected to exceed it is not planned (on the GPU device, whose memory holds them, the limit is a quarter of the GPU's memory, and this setting when given). "
							"-1 uses hash_mem.",
							&gpuagg_hashjoin_build_limit, -1, -1, INT_MAX,
							PGC_USERSET, GUC_UNIT_KB, check_build_limit, NULL, NULL);
	DefineCustomIntVariable("gpuagg.debug_fail_at_batch",
							"Testing: make the device fail at this batch of each aggregation or probe of each join (0 = never).",
							"Superusers only: it makes queries fail or run on the CPU on purpose. The partitions of a spilled GpuHashAgg count their batches together.",
							&gpuagg_debug_fail_at_batch, 0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.debug_hash_bits",
							"Testing: keep only this many bits of every group key's hash on the device (0 = all).",
							"Superusers only: unequal keys then share hashes, which tests that the device compares the keys themselves.",
							&gpuagg_debug_hash_bits, 0, 0, 63,
							PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuagg.tuning",
							 "How the GPU chooses the launch parameters of its aggregation kernels.",
							 "on uses the parameters tuned for the GPU's model and the batch's shape, and explores, on a bounded share of batches, where they are not tuned yet; "
							 "frozen uses them without exploring; off keeps the built-in rules.",
							 &gpuagg_tuning, GA_TUNING_OFF, tuning_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("gpuagg.debug_launch",
							   "Testing: run every GPU aggregation batch with these launch parameters, e.g. 'threads=64,blocks_per_sm=1'.",
							   "Superusers only. Comma-separated name=value pairs of threads, blocks_per_sm, replicas_max, cache_less and part_shift; "
							   "unnamed ones keep the built-in rules; empty: the tuner's parameters.",
							   &gpuagg_debug_launch, "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE, check_debug_launch, assign_debug_launch,
							   NULL);
	DefineCustomBoolVariable("gpuagg.service",
							 "Runs the GPU service: one process that owns the GPUs for every session.",
							 "Sessions then send their device work to it instead of each opening the GPU itself.",
							 &gpuagg_service, true,
							 PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.service_memory",
							"Shared memory through which sessions and the GPU service exchange batches and results.",
							"Batches are written once, into this memory, and copied to the GPU from it.",
							&gpuagg_service_memory, 1024, 16, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.service_threads",
							"Requests the GPU service carries out at once.",
							NULL,
							&gpuagg_service_threads, 16, 1, 1024,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuagg.device_host",
							 "Where a device runs: in the GPU service or in this session's own process.",
							 "auto runs the GPU in the GPU service and the CPU device here; service runs both in the service; "
							 "backend runs both here (each session then opens its own GPU context).",
							 &gpuagg_device_host, GPUAGG_HOST_AUTO, device_host_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.service_wait",
							"How long a query waits for the GPU service before it runs on the CPU device instead.",
							"It waits for the service to be ready, and in the service's queue for memory.",
							&gpuagg_service_wait, 10000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuagg.gpu_memory_budget",
							"Device memory the GPU service may hold on each GPU; 0 for 90% of the GPU's memory.",
							"A query that would take a GPU past it waits in the service's queue. "
							"In the service's CPU device it bounds that device's share of gpuagg.service_memory.",
							&gpuagg_gpu_memory_budget, 0, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MB, NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpuagg");
}
