/*-------------------------------------------------------------------------
 *
 * device_impl.h
 *	  The interface between the dispatcher (device.c) and the devices:
 *	  each device's open and its table of entry points (GaDeviceOps), over
 *	  its own handles.  The CPU device is cuda/cpu/, the GPU device
 *	  cuda/gpu/; the GPU service's devices (cuda/service/) are a third
 *	  table whose entries carry every call to the service process, which
 *	  runs it on its own CPU or GPU device through their tables.  Internal
 *	  to cuda/: src/ includes the boundary headers only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DEVICE_IMPL_H
#define GPUAGG_DEVICE_IMPL_H

#include "gpuagg_device.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* One implementation's aggregation entry points, over its own handles. */
typedef struct GaDeviceOps
{
	void	   *(*agg_create) (void *device_impl, const GaAggRequest *request,
							   GaStatus *status);
	GaBatch    *(*agg_next_batch) (void *agg_impl, GaWaitCallback wait,
								   void *arg, GaStatus *status);
	int			(*agg_submit) (void *agg_impl, GaBatch *batch,
							   GaWaitCallback wait, void *arg,
							   GaStatus *status);
	const GaAggResult *(*agg_finish) (void *agg_impl, GaWaitCallback wait,
									  void *arg, GaStatus *status);
	void		(*agg_get_stats) (const void *agg_impl, GaAggStats *stats);
	void		(*agg_destroy) (void *agg_impl);

	/*
	 * Aggjoin: the build side of step `step` (0-based).
	 * device.c has already checked that the request has a join spec, that
	 * the step exists and is given for the first time before any batch,
	 * and the arguments (n in range, every row below payload->nrows, the
	 * payload's shape and types); submits of an aggjoin reach
	 * agg_submit only after every step's build was given.  For a step of
	 * several keys, keys[i] is device.c's hash of build row rows[i]'s key
	 * under key_seed (join_key.h; free of collisions among the build's
	 * distinct keys, every listed row valid in every build key column):
	 * the device builds on the hashes as on single keys, hashes each row
	 * it looks up under key_seed, and rechecks the first candidate's key.
	 * key_seed is 0 and unused for a step of one key.
	 */
	int			(*aggjoin_build) (void *agg_impl, int step, const int64_t *keys,
								   const uint32_t *rows, int64_t n, uint64_t key_seed,
								   const GaBatch *payload, GaWaitCallback wait,
								   void *arg, GaStatus *status);

	/*
	 * Hash join.  device.c has already validated the request, the build's
	 * arguments (once, n in range) and that a probe follows the build, and
	 * handles fail_at_batch itself.
	 */
	void	   *(*join_create) (void *device_impl, const GaJoinRequest *request,
								GaStatus *status);
	int			(*join_build) (void *join_impl, const int64_t *keys,
							   const uint32_t *rows, int64_t n,
							   GaWaitCallback wait, void *arg, GaStatus *status);
	const uint32_t *(*join_sorted_rows) (const void *join_impl);
	GaBatch    *(*join_next_batch) (void *join_impl, GaWaitCallback wait,
									void *arg, GaStatus *status);
	const GaJoinMatches *(*join_probe) (void *join_impl, GaBatch *batch,
										GaWaitCallback wait, void *arg,
										GaStatus *status);
	void		(*join_get_stats) (const void *join_impl, GaJoinStats *stats);
	void		(*join_destroy) (void *join_impl);

	/* What the device does beyond integer keys (0: nothing more). */
	int			groups_strings; /* string keys (GA_TYPE_STRING) */
	/*
	 * Nonzero when the device deforms heap pages (gpuagg_device.h, "Heap
	 * pages"): its batches then carry the page area of a request with a
	 * page program, which device.c refuses on any other device.  The GPU
	 * service's table carries pages to the service's device of the same
	 * kind, so a device of the service takes them where that kind's own
	 * device does (ga_device_wrap).  page_capacity: the pages a batch of
	 * it carries best (ga_device_page_capacity).
	 */
	int			takes_pages;
	int			page_capacity;
	/*
	 * Nonzero when the device joins on string keys (gpuagg_device.h: a
	 * hashed aggjoin step, its pairs GA_TYPE_STRING or of one key); a
	 * device without refuses such a request in its agg_create.
	 */
	int			joins_strings;
	/*
	 * Nonzero when the device groups an aggjoin's joined rows by string
	 * keys (GA_TYPE_STRING group key columns of its sides, gathered into
	 * the joined rows); device.c refuses such a request on any other.
	 */
	int			groups_join_strings;
} GaDeviceOps;

/* cpu/device.c: the CPU device */
extern const GaDeviceOps ga_cpu_ops;
extern void *ga_cpu_open(GaStatus *status);

/* gpu/device.cu (or gpu/none.c in builds without CUDA): the GPU device */
extern const GaDeviceOps ga_gpu_ops;
extern void *ga_gpu_open(int ordinal, double *setup_ms, GaStatus *status);

/*
 * Page-lock `bytes` of host memory at ptr for every GPU of the process
 * (the GPU service's arena, once), so that copies from and to it run at
 * pinned speed; memory already registered is accepted.  0 with status on
 * failure (gpu/none.c: no GPU).
 */
extern int	ga_gpu_register_host(void *ptr, size_t bytes, GaStatus *status);

/*
 * Allocate `bytes` of page-locked host memory for every GPU of the process
 * (the GPU service's staged build sides, which a GPU then copies from at
 * pinned speed), or NULL (gpu/none.c: always), and free it (NULL allowed;
 * it waits for the GPU's work, as cudaFree does).  Host memory: the GPU
 * device's count of device memory (ga_gpu_memory_used) leaves it out.
 */
extern void *ga_gpu_host_alloc(size_t bytes);
extern void ga_gpu_host_free(void *ptr);

/*
 * The GPU device's memory (gpu/memory.cu; gpu/none.c: none): the bytes of
 * device memory the process holds on GPU ordinal, how many allocations it
 * freed on every GPU (a count that moves whenever memory comes back), and
 * a limit past which the GPU device refuses allocations as out of memory
 * (0: none; the GPU service sets its budget).  And the GPU's total memory,
 * once the process opened it (gpu/device.cu; 0 before).
 */
extern int64_t ga_gpu_memory_used(int ordinal);
extern uint64_t ga_gpu_memory_frees(void);
extern void ga_gpu_memory_limit(int ordinal, int64_t bytes);
extern int64_t ga_gpu_memory_total(int ordinal);

/* service/client.c: the devices of the GPU service, as a client sees them */
extern const GaDeviceOps ga_service_ops;

/*
 * device.c: a device of `kind` whose calls go to ops over impl (the GPU
 * service's devices: ga_device_kind tells the kind they run on), valid
 * for the life of the process; NULL with status when out of memory.  And
 * the table of entry points of a device.
 */
extern GaDevice *ga_device_wrap(GaDeviceKind kind, const GaDeviceOps *ops, void *impl,
								GaStatus *status);
extern const GaDeviceOps *ga_device_ops(const GaDevice *device);

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_DEVICE_IMPL_H */
