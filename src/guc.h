/*-------------------------------------------------------------------------
 *
 * guc.h
 *	  The gpuagg.* settings (guc.c): their variables, read by every layer
 *	  above.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_GUC_H
#define GPUAGG_GUC_H

#include "gpuagg_device.h"

/* gpuagg.device */
typedef enum GpuAggDeviceSetting
{
	GPUAGG_DEVICE_AUTO,
	GPUAGG_DEVICE_GPU,
	GPUAGG_DEVICE_CPU
} GpuAggDeviceSetting;

/* gpuagg.device_host: where a device runs */
typedef enum GpuAggDeviceHost
{
	GPUAGG_HOST_AUTO,			/* the GPU in the GPU service, the CPU device here */
	GPUAGG_HOST_SERVICE,		/* every device in the GPU service */
	GPUAGG_HOST_BACKEND			/* every device in this backend */
} GpuAggDeviceHost;

/* guc.c */
extern bool gpuagg_enabled;
extern bool gpuagg_enable_hashagg;
extern bool gpuagg_enable_hashjoin;
extern bool gpuagg_enable_aggjoin;
extern bool gpuagg_numeric_on_device;
extern bool gpuagg_string_keys;
extern bool gpuagg_force;
extern bool gpuagg_explain_device_details;
extern bool gpuagg_direct_scan;
extern bool gpuagg_page_scan;
extern bool gpuagg_probe_filter;
extern int	gpuagg_device;
extern int	gpuagg_strategy;
extern int	gpuagg_batch_rows;
extern int	gpuagg_gpu_index;
extern int	gpuagg_debug_fail_at_batch;
extern int	gpuagg_debug_hash_bits;
extern int	gpuagg_hashjoin_build_limit;
extern double gpuagg_gpu_startup_cost;
extern double gpuagg_gpu_tuple_cost;
extern double gpuagg_batch_value_cost;
extern double gpuagg_cpu_device_tuple_cost;

/*
 * The CPU device's work on a row it joins (probes with or builds from), in
 * gpuagg.cpu_device_tuple_cost: fitted to the benchmark on a machine
 * without a GPU (docs/benchmarks.md).
 */
#define GPUAGG_CPU_DEVICE_JOIN_ROW 4.0
extern bool gpuagg_service;
extern int	gpuagg_service_memory;
extern int	gpuagg_service_threads;
extern int	gpuagg_device_host;
extern int	gpuagg_service_wait;
extern int	gpuagg_gpu_memory_budget;
extern int	gpuagg_tuning;
extern char *gpuagg_debug_launch;
extern bool gpuagg_debug_launch_set;
extern GaLaunchParams gpuagg_debug_launch_params;

/*
 * The check of gpuagg.gpu_index against the GPUs found (devices.c installs
 * it once discovery ran): true when index names one, else false with a
 * sentence saying what was found.
 */
typedef bool (*GpuAggGpuIndexCheck) (int index, const char **detail);

extern void GpuAggGucInit(void);
extern void GpuAggSetGpuIndexCheck(GpuAggGpuIndexCheck check);

#endif							/* GPUAGG_GUC_H */
