/*-------------------------------------------------------------------------
 *
 * gpu/none.c
 *	  The GPU device's symbols for a build without nvcc: discovery finds no
 *	  GPU and says why, opening fails, and every aggregation and join entry
 *	  point fails cleanly, so the caller uses the CPU device.
 *
 *-------------------------------------------------------------------------
 */
#include "device_impl.h"
#include "util.h"

#include <stddef.h>

#define GPU_NONE_REASON "gpuagg was built without its GPU device (nvcc was not found, or NVCC was empty, at build time)"

/* Whether this build contains the GPU device: it does not. */
int
ga_gpu_compiled(void)
{
	return 0;
}

/* Find no GPU, and say why. */
int
ga_gpu_discover(GaGpuInfo *out, int max_gpus, GaStatus *status)
{
	(void) out;
	(void) max_gpus;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return 0;
}

/* Refuse to open a GPU. */
void *
ga_gpu_open(int ordinal, double *setup_ms, GaStatus *status)
{
	(void) ordinal;
	if (setup_ms != NULL)
		*setup_ms = 0;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return NULL;
}

/* Register nothing: there is no GPU to register host memory with. */
int
ga_gpu_register_host(void *ptr, size_t bytes, GaStatus *status)
{
	(void) ptr;
	(void) bytes;
	return ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
}

/* No pinned host memory: there is no GPU; callers use malloc. */
void *
ga_gpu_host_alloc(size_t bytes)
{
	(void) bytes;
	return NULL;
}

/* Nothing to free: ga_gpu_host_alloc gives nothing. */
void
ga_gpu_host_free(void *ptr)
{
	(void) ptr;
}

/* No device memory is held: there is no GPU. */
int64_t
ga_gpu_memory_used(int ordinal)
{
	(void) ordinal;
	return 0;
}

/* No allocation was freed: there is no GPU. */
uint64_t
ga_gpu_memory_frees(void)
{
	return 0;
}

/* Nothing to limit: there is no GPU. */
void
ga_gpu_memory_limit(int ordinal, int64_t bytes)
{
	(void) ordinal;
	(void) bytes;
}

/* No GPU has any memory. */
int64_t
ga_gpu_memory_total(int ordinal)
{
	(void) ordinal;
	return 0;
}

/* Refuse to start an aggregation (unreachable: no GPU can be opened). */
static void *
none_agg_create(void *device_impl, const GaAggRequest *request, GaStatus *status)
{
	(void) device_impl;
	(void) request;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return NULL;
}

/* Hand out no batch. */
static GaBatch *
none_agg_next_batch(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	(void) agg_impl;
	(void) wait;
	(void) arg;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return NULL;
}

/* Accept no batch. */
static int
none_agg_submit(void *agg_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				GaStatus *status)
{
	(void) agg_impl;
	(void) batch;
	(void) wait;
	(void) arg;
	return ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
}

/* Return no result. */
static const GaAggResult *
none_agg_finish(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	(void) agg_impl;
	(void) wait;
	(void) arg;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return NULL;
}

/* Nothing happened: leave the (zeroed) statistics alone. */
static void
none_agg_get_stats(const void *agg_impl, GaAggStats *stats)
{
	(void) agg_impl;
	(void) stats;
}

/* Nothing to free. */
static void
none_agg_destroy(void *agg_impl)
{
	(void) agg_impl;
}

/* Build nothing (unreachable: no aggregation can be started). */
static int
none_aggjoin_build(void *agg_impl, int step, const int64_t *keys, const uint32_t *rows,
					int64_t n, uint64_t key_seed, const GaBatch *payload, GaWaitCallback wait,
					void *arg, GaStatus *status)
{
	(void) agg_impl;
	(void) step;
	(void) keys;
	(void) rows;
	(void) n;
	(void) key_seed;
	(void) payload;
	(void) wait;
	(void) arg;
	return ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
}

/* Refuse to start a join (unreachable: no GPU can be opened). */
static void *
none_join_create(void *device_impl, const GaJoinRequest *request, GaStatus *status)
{
	(void) device_impl;
	(void) request;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return NULL;
}

/* Build nothing. */
static int
none_join_build(void *join_impl, const int64_t *keys, const uint32_t *rows,
				int64_t n, GaWaitCallback wait, void *arg, GaStatus *status)
{
	(void) join_impl;
	(void) keys;
	(void) rows;
	(void) n;
	(void) wait;
	(void) arg;
	return ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
}

/* No build, so no sorted rows. */
static const uint32_t *
none_join_sorted_rows(const void *join_impl)
{
	(void) join_impl;
	return NULL;
}

/* Hand out no probe batch. */
static GaBatch *
none_join_next_batch(void *join_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	(void) join_impl;
	(void) wait;
	(void) arg;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return NULL;
}

/* Answer no probe. */
static const GaJoinMatches *
none_join_probe(void *join_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				GaStatus *status)
{
	(void) join_impl;
	(void) batch;
	(void) wait;
	(void) arg;
	ga_status_set(status, GA_ERR_NO_DEVICE, GPU_NONE_REASON);
	return NULL;
}

/* Nothing happened: leave the (zeroed) statistics alone. */
static void
none_join_get_stats(const void *join_impl, GaJoinStats *stats)
{
	(void) join_impl;
	(void) stats;
}

/* Nothing to free. */
static void
none_join_destroy(void *join_impl)
{
	(void) join_impl;
}

const GaDeviceOps ga_gpu_ops = {
	none_agg_create,
	none_agg_next_batch,
	none_agg_submit,
	none_agg_finish,
	none_agg_get_stats,
	none_agg_destroy,
	none_aggjoin_build,
	none_join_create,
	none_join_build,
	none_join_sorted_rows,
	none_join_next_batch,
	none_join_probe,
	none_join_get_stats,
	none_join_destroy,
	0,							/* groups_strings */
	0,							/* takes_pages */
	0							/* page_capacity */
};
