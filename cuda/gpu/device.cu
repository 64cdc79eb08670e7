/*-------------------------------------------------------------------------
 *
 * gpu/device.cu
 *	  The GPU device (device_impl.h): discovery of the usable GPUs, the
 *	  per-process device of each opened GPU (its primary context), the
 *	  registration of host memory (the GPU service's arena) and pinned
 *	  host memory of its own (the service's staged build sides), and the table
 *	  of entry points the dispatcher calls, from the aggregation
 *	  (gpu/hashagg.cu, with gpu/aggjoin.cu for an aggjoin) and the hash
 *	  join (gpu/hashjoin.cu).
 *
 * Discovery creates no context: it reads the driver and runtime versions
 * and each device's properties, and skips the devices gpuagg cannot use.
 * Opening a GPU creates its context once per process; later opens return
 * the same device.  The per-process state here has no locks: a backend
 * is single-threaded, and the GPU service opens its GPUs before its
 * request threads start; after that the devices are only read, by calls
 * that run side by side, each object on its own stream (gpu_device.cuh,
 * "Concurrency").
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <stdlib.h>
#include <string.h>

/* The per-process GPU devices, created by the first open of each ordinal. */
static GpuDevice *gpu_devices[GA_MAX_GPUS];

/* Fill a GaGpuInfo from the device's properties. */
static void
fill_info(GaGpuInfo *info, int ordinal, const cudaDeviceProp *prop,
		  int driver_version, int runtime_version)
{
	size_t		name_len = strnlen(prop->name, sizeof(info->name) - 1);

	memset(info, 0, sizeof(*info));
	info->ordinal = ordinal;
	memcpy(info->name, prop->name, name_len);	/* truncated, NUL-terminated */
	info->total_memory = (int64_t) prop->totalGlobalMem;
	info->multiprocessors = prop->multiProcessorCount;
	info->cc_major = prop->major;
	info->cc_minor = prop->minor;
	info->driver_version = driver_version;
	info->runtime_version = runtime_version;
	info->shared_memory_per_block = (int64_t) prop->sharedMemPerBlockOptin;
	info->l2_cache_size = prop->l2CacheSize;
	info->shared_memory_per_multiprocessor = (int64_t) prop->sharedMemPerMultiprocessor;
}

/*
 * Why a device cannot be used by gpuagg (NULL when it can): the kernels are
 * built for compute capability 7.5 and newer, and a prohibited device
 * cannot take a context.
 */
static const char *
device_unusable_reason(int ordinal, const cudaDeviceProp *prop)
{
	int			mode = cudaComputeModeDefault;

	if (prop->major * 10 + prop->minor < 75)
		return "has compute capability below 7.5, the oldest gpuagg is built for";
	if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, ordinal) == cudaSuccess &&
		mode == cudaComputeModeProhibited)
		return "is in the prohibited compute mode";
	return NULL;
}

/* Whether this build contains the GPU device: it does. */
extern "C" int
ga_gpu_compiled(void)
{
	return 1;
}

/*
 * List the usable GPUs without creating a context: driver and runtime
 * versions, device count and properties.  Returns how many were found, or
 * 0 with the reason in status.
 */
extern "C" int
ga_gpu_discover(GaGpuInfo *out, int max_gpus, GaStatus *status)
{
	int			driver_version = 0;
	int			runtime_version = 0;
	int			count = 0;
	int			found = 0;
	cudaError_t err;

	ga_status_ok(status);
	(void) cudaRuntimeGetVersion(&runtime_version);
	if (cudaDriverGetVersion(&driver_version) != cudaSuccess)
		driver_version = 0;
	err = cudaGetDeviceCount(&count);
	/* the runtime reports driver version 0 when it cannot load the driver */
	if (driver_version == 0)
	{
		ga_status_set(status, GA_ERR_NO_DEVICE,
					  "no NVIDIA driver is installed (libcuda.so.1 could not be loaded)");
		return 0;
	}
	if (err == cudaErrorInsufficientDriver)
	{
		ga_status_set(status, GA_ERR_NO_DEVICE,
					  "the NVIDIA driver is too old for this gpuagg: it supports CUDA %d.%d, gpuagg was built with CUDA %d.%d",
					  driver_version / 1000, (driver_version % 1000) / 10,
					  runtime_version / 1000, (runtime_version % 1000) / 10);
		return 0;
	}
	if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0))
	{
		ga_status_set(status, GA_ERR_NO_DEVICE, "the NVIDIA driver is installed but finds no GPU");
		return 0;
	}
	if (err != cudaSuccess)
	{
		ga_status_set(status, GA_ERR_NO_DEVICE, "the NVIDIA driver could not start CUDA: %s",
					  cudaGetErrorString(err));
		return 0;
	}

	for (int i = 0; i < count && found < max_gpus && i < GA_MAX_GPUS; i++)
	{
		cudaDeviceProp prop;
		const char *reason;

		err = cudaGetDeviceProperties(&prop, i);
		if (err != cudaSuccess)
		{
			ga_status_set(status, GA_ERR_NO_DEVICE,
						  "could not read the properties of GPU %d: %s",
						  i, cudaGetErrorString(err));
			continue;
		}
		reason = device_unusable_reason(i, &prop);
		if (reason != NULL)
		{
			ga_status_set(status, GA_ERR_NO_DEVICE, "GPU %d (%s) %s", i, prop.name, reason);
			continue;
		}
		fill_info(&out[found++], i, &prop, driver_version, runtime_version);
	}
	(void) cudaGetLastError();	/* leave no error behind for later checks */
	if (found > 0)
		ga_status_ok(status);
	else if (status->code == GA_OK)
		ga_status_set(status, GA_ERR_NO_DEVICE, "no GPU is usable");
	return found;
}

/*
 * Open GPU `ordinal` once per process: select it and create its primary
 * context (cudaFree(0); its time is *setup_ms).  Later opens return the
 * same device with *setup_ms = 0.
 */
extern "C" void *
ga_gpu_open(int ordinal, double *setup_ms, GaStatus *status)
{
	GpuDevice  *device;
	cudaDeviceProp prop;
	int			count = 0;
	int			driver_version = 0;
	int			runtime_version = 0;
	const char *reason;
	double		start;
	cudaError_t err;

	*setup_ms = 0;
	ga_status_ok(status);
	if (ordinal < 0 || ordinal >= GA_MAX_GPUS)
	{
		ga_status_set(status, GA_ERR_INVALID, "GPU %d does not exist", ordinal);
		return NULL;
	}
	if (gpu_devices[ordinal] != NULL)
		return gpu_devices[ordinal];

	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess)
	{
		(void) cudaGetLastError();
		ga_status_set(status, GA_ERR_NO_DEVICE, "no usable CUDA device: %s",
					  cudaGetErrorString(err));
		return NULL;
	}
	if (ordinal >= count)
	{
		ga_status_set(status, GA_ERR_NO_DEVICE, "GPU %d does not exist (%d found)",
					  ordinal, count);
		return NULL;
	}
	err = cudaGetDeviceProperties(&prop, ordinal);
	if (err != cudaSuccess)
	{
		cuda_error(status, err, "reading the GPU's properties");
		return NULL;
	}
	reason = device_unusable_reason(ordinal, &prop);
	if (reason != NULL)
	{
		ga_status_set(status, GA_ERR_NO_DEVICE, "GPU %d (%s) %s", ordinal, prop.name, reason);
		return NULL;
	}
	(void) cudaDriverGetVersion(&driver_version);
	(void) cudaRuntimeGetVersion(&runtime_version);

	device = (GpuDevice *) calloc(1, sizeof(GpuDevice));
	if (device == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory opening GPU %d", ordinal);
		return NULL;
	}
	device->ordinal = ordinal;

	start = now_ms();
	err = cudaSetDevice(ordinal);
	if (err == cudaSuccess)
		err = cudaFree(0);		/* creates the primary context */
	if (err != cudaSuccess)
	{
		cuda_error(status, err, "creating the CUDA context");
		free(device);
		return NULL;
	}
	*setup_ms = now_ms() - start;

	fill_info(&device->info, ordinal, &prop, driver_version, runtime_version);
	if (cudaDeviceGetAttribute(&device->cooperative, cudaDevAttrCooperativeLaunch,
							   ordinal) != cudaSuccess)
	{
		(void) cudaGetLastError();
		device->cooperative = 0;
	}
	gpu_devices[ordinal] = device;
	(void) ga_tuner_for(device->info.name);	/* reads its file, if any */
	return device;
}

/*
 * Page-lock host memory for every GPU of the process (portable), once:
 * registering costs time in proportion to the bytes.  Memory registered
 * already is fine.
 */
extern "C" int
ga_gpu_register_host(void *ptr, size_t bytes, GaStatus *status)
{
	cudaError_t err = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);

	ga_status_ok(status);
	if (err == cudaSuccess)
		return 1;
	(void) cudaGetLastError();	/* leave no error behind for later checks */
	if (err == cudaErrorHostMemoryAlreadyRegistered)
		return 1;
	return cuda_error(status, err, "registering the GPU service's shared memory");
}

/* Page-locked host memory for every GPU of the process; NULL when there is none. */
extern "C" void *
ga_gpu_host_alloc(size_t bytes)
{
	void	   *ptr = NULL;

	if (cudaHostAlloc(&ptr, bytes > 0 ? bytes : 1, cudaHostAllocPortable) != cudaSuccess)
	{
		(void) cudaGetLastError();	/* leave no error behind for later checks */
		return NULL;
	}
	return ptr;
}

/* Free what ga_gpu_host_alloc gave. */
extern "C" void
ga_gpu_host_free(void *ptr)
{
	if (ptr != NULL && cudaFreeHost(ptr) != cudaSuccess)
		(void) cudaGetLastError();
}

/* The total memory of GPU ordinal, once this process opened it; else 0. */
extern "C" int64_t
ga_gpu_memory_total(int ordinal)
{
	if (ordinal < 0 || ordinal >= GA_MAX_GPUS || gpu_devices[ordinal] == NULL)
		return 0;
	return gpu_devices[ordinal]->info.total_memory;
}

extern "C" const GaDeviceOps ga_gpu_ops = {
	ga_gpu_agg_create,
	ga_gpu_agg_next_batch,
	ga_gpu_agg_submit,
	ga_gpu_agg_finish,
	ga_gpu_agg_get_stats,
	ga_gpu_agg_destroy,
	ga_gpu_agg_aggjoin_build,
	ga_gpu_join_create,
	ga_gpu_join_build,
	ga_gpu_join_sorted_rows,
	ga_gpu_join_next_batch,
	ga_gpu_join_probe,
	ga_gpu_join_get_stats,
	ga_gpu_join_destroy,
	1,							/* groups_strings */
	1,							/* takes_pages */
	GPU_PAGE_BATCH_PAGES,		/* page_capacity */
	1,							/* joins_strings */
	1							/* groups_join_strings */
};
