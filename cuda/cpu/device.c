/*-------------------------------------------------------------------------
 *
 * cpu/device.c
 *	  The CPU device: the reference implementation of gpuagg_device.h, and
 *	  the device a query falls back to when no GPU is usable.  Its open
 *	  and its table of entry points (GaDeviceOps, device_impl.h) for the
 *	  dispatcher: the aggregation's (cpu/hashagg.c, with cpu/aggjoin.c for
 *	  an aggjoin) and the hash join's (cpu/hashjoin.c).
 *
 * The CPU device has no state of its own: everything lives in the
 * aggregation and join objects.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "device_impl.h"
#include "util.h"

/* The CPU device has no state; ga_cpu_open returns this token. */
static int	cpu_device_token;

/* Open the CPU device: always possible, nothing to set up. */
void *
ga_cpu_open(GaStatus *status)
{
	ga_status_ok(status);
	return &cpu_device_token;
}

const GaDeviceOps ga_cpu_ops = {
	.agg_create = ga_cpu_agg_create,
	.agg_next_batch = ga_cpu_agg_next_batch,
	.agg_submit = ga_cpu_agg_submit,
	.agg_finish = ga_cpu_agg_finish,
	.agg_get_stats = ga_cpu_agg_get_stats,
	.agg_destroy = ga_cpu_agg_destroy,
	.aggjoin_build = ga_cpu_agg_aggjoin_build,
	.join_create = ga_cpu_join_create,
	.join_build = ga_cpu_join_build,
	.join_sorted_rows = ga_cpu_join_sorted_rows,
	.join_next_batch = ga_cpu_join_next_batch,
	.join_probe = ga_cpu_join_probe,
	.join_get_stats = ga_cpu_join_get_stats,
	.join_destroy = ga_cpu_join_destroy,
	.groups_strings = 1,
	.takes_pages = 1,
	/* 2 MB of images, which stay in the CPU's cache until it deforms them */
	.page_capacity = 256,
	.joins_strings = 1,
	.groups_join_strings = 1,
};
