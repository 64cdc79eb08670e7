/*-------------------------------------------------------------------------
 *
 * device.c
 *	  The dispatcher: the public device API of gpuagg_device.h.  It opens
 *	  devices, validates requests (validate.c), checks the order of the
 *	  calls and dispatches every aggregation and join call to the CPU
 *	  device (cpu/), the GPU device (gpu/) or a device of the GPU service
 *	  (service/, made with ga_device_wrap) behind their table of functions
 *	  (GaDeviceOps, device_impl.h).
 *
 * Testing hook: a request's fail_at_batch makes that submit (aggregation)
 * or that probe (join) fail as a device error would, on either device, so
 * that the caller's recovery path (finish on the CPU, or a clear error) can
 * be exercised without a broken GPU.
 *
 * The join's call order (build once, then probes) is checked here, so that
 * both implementations see only well-formed sequences; so is an aggjoin
 * aggregation's (each step's build once, before the first batch; no batch
 * or submit before every step's build was given), with the builds'
 * arguments.
 *
 *-------------------------------------------------------------------------
 */
#include "device_impl.h"
#include "join_key.h"
#include "util.h"
#include "validate.h"

#include <stdlib.h>
#include <string.h>

struct GaDevice
{
	GaDeviceKind kind;
	const GaDeviceOps *ops;
	void	   *impl;
	double		setup_ms;
	int			takes_pages;	/* ga_device_takes_pages */
	int64_t		page_capacity;	/* ga_device_page_capacity */
};

struct GaAgg
{
	const GaDeviceOps *ops;
	void	   *impl;
	int64_t		submits;
	int64_t		fail_at_batch;

	/* aggjoins only */
	int			aggjoin;
	int			join_steps;
	int			ncolumns;
	GaValueType *column_types;	/* copied, to check the build's payload */
	uint8_t    *from_build;		/* copied: which step's payload fills a column */
	GaAggJoinStep join_step[GA_AGG_MAX_JOIN_STEPS];	/* copied: the keys */
	uint8_t		join_build_called[GA_AGG_MAX_JOIN_STEPS];	/* per step: given */
	int			join_builds_called; /* steps whose build was given */
	int			batch_handed_out;	/* ga_agg_next_batch was called */
	GaFailure	build_failure;	/* a build that failed here, before any
								 * device saw it (hashing several keys) */
};

struct GaJoin
{
	const GaDeviceOps *ops;
	void	   *impl;
	int			build_called;	/* ga_join_build was called (success or not) */
	int			built;			/* ... and succeeded */
	int64_t		probes;
	int64_t		fail_at_batch;
	int64_t		probe_batch_rows;	/* capacity of every probe batch */
};

/* The CPU device handle; the CPU device has no state of its own. */
static GaDevice cpu_device;

/* The per-process GPU device handles, created on first open. */
static GaDevice *gpu_devices[GA_MAX_GPUS];

/* Open the CPU device or GPU `gpu_ordinal`, reusing a GPU already opened. */
GaDevice *
ga_device_open(GaDeviceKind kind, int gpu_ordinal, GaStatus *status)
{
	GaDevice   *device;

	ga_status_ok(status);
	if (kind == GA_DEVICE_CPU)
	{
		if (cpu_device.ops == NULL)
		{
			cpu_device.impl = ga_cpu_open(status);
			if (status->code != GA_OK)
				return NULL;
			cpu_device.kind = GA_DEVICE_CPU;
			cpu_device.ops = &ga_cpu_ops;
			cpu_device.takes_pages = ga_cpu_ops.takes_pages;
			cpu_device.page_capacity = ga_cpu_ops.page_capacity;
		}
		return &cpu_device;
	}

	if (gpu_ordinal < 0 || gpu_ordinal >= GA_MAX_GPUS)
	{
		ga_status_set(status, GA_ERR_INVALID, "GPU %d does not exist", gpu_ordinal);
		return NULL;
	}
	if (gpu_devices[gpu_ordinal] != NULL)
	{
		gpu_devices[gpu_ordinal]->setup_ms = 0;
		return gpu_devices[gpu_ordinal];
	}
	device = calloc(1, sizeof(GaDevice));
	if (device == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory opening GPU %d", gpu_ordinal);
		return NULL;
	}
	device->kind = GA_DEVICE_GPU;
	device->ops = &ga_gpu_ops;
	device->takes_pages = ga_gpu_ops.takes_pages;
	device->page_capacity = ga_gpu_ops.page_capacity;
	device->impl = ga_gpu_open(gpu_ordinal, &device->setup_ms, status);
	if (device->impl == NULL)
	{
		free(device);
		return NULL;
	}
	gpu_devices[gpu_ordinal] = device;
	return device;
}

/*
 * Make a device of kind whose calls go to ops over impl (never freed).  It
 * takes pages when ops carries them and the kind's own device deforms them.
 */
GaDevice *
ga_device_wrap(GaDeviceKind kind, const GaDeviceOps *ops, void *impl, GaStatus *status)
{
	GaDevice   *device = calloc(1, sizeof(GaDevice));

	if (device == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory opening a device");
		return NULL;
	}
	device->kind = kind;
	device->ops = ops;
	device->impl = impl;
	device->takes_pages = ops->takes_pages &&
		(kind == GA_DEVICE_CPU ? ga_cpu_ops.takes_pages : ga_gpu_ops.takes_pages);
	device->page_capacity = kind == GA_DEVICE_CPU ? ga_cpu_ops.page_capacity :
		ga_gpu_ops.page_capacity;
	ga_status_ok(status);
	return device;
}

/* The table of entry points of a device. */
const GaDeviceOps *
ga_device_ops(const GaDevice *device)
{
	return device->ops;
}

/* The kind of an opened device. */
GaDeviceKind
ga_device_kind(const GaDevice *device)
{
	return device->kind;
}

/* See gpuagg_device.h: what the kind's table of entry points says. */
int
ga_device_kind_groups_strings(GaDeviceKind kind)
{
	return kind == GA_DEVICE_CPU ? ga_cpu_ops.groups_strings : ga_gpu_ops.groups_strings;
}

/* See gpuagg_device.h: what the kind's table of entry points says. */
int
ga_device_kind_joins_strings(GaDeviceKind kind)
{
	return kind == GA_DEVICE_CPU ? ga_cpu_ops.joins_strings : ga_gpu_ops.joins_strings;
}

/* See gpuagg_device.h: what the kind's table of entry points says. */
int
ga_device_kind_groups_join_strings(GaDeviceKind kind)
{
	return kind == GA_DEVICE_CPU ? ga_cpu_ops.groups_join_strings :
		ga_gpu_ops.groups_join_strings;
}

/*
 * Whether an aggjoin request groups by a string key (a GA_TYPE_STRING key
 * column), which only a device that groups joined strings takes.
 */
static int
request_groups_join_strings(const GaAggRequest *request)
{
	int			i;

	for (i = 0; request->join != NULL && i < request->nkeys; i++)
		if (request->column_types[request->key_columns[i]] == GA_TYPE_STRING)
			return 1;
	return 0;
}

/* Milliseconds this open spent creating the GPU's context (0: it existed). */
double
ga_device_setup_ms(const GaDevice *device)
{
	return device->setup_ms;
}

/* Whether the device deforms heap pages (gpuagg_device.h). */
int
ga_device_takes_pages(const GaDevice *device)
{
	return device->takes_pages;
}

/* How many pages a batch should carry on the device (gpuagg_device.h). */
int64_t
ga_device_page_capacity(const GaDevice *device)
{
	return device->takes_pages ? device->page_capacity : 0;
}

/* Free the dispatcher's aggregation handle (not the implementation's). */
static void
agg_free(GaAgg *agg)
{
	free(agg->column_types);
	free(agg->from_build);
	free(agg);
}

/* Validate the request and start it on the device's implementation. */
GaAgg *
ga_agg_create(GaDevice *device, const GaAggRequest *request, GaStatus *status)
{
	GaAgg	   *agg;

	if (!ga_request_validate(request, status))
		return NULL;
	if (request->pages != NULL && !device->takes_pages)
	{
		ga_status_set(status, GA_ERR_INVALID, "this device takes no heap pages");
		return NULL;
	}
	if (request_groups_join_strings(request) &&
		!ga_device_kind_groups_join_strings(device->kind))
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "this device groups no string keys of an aggregation fed by a join");
		return NULL;
	}
	agg = calloc(1, sizeof(GaAgg));
	if (agg == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting an aggregation");
		return NULL;
	}
	agg->ops = device->ops;
	agg->fail_at_batch = request->fail_at_batch;
	if (request->join != NULL)
	{
		agg->aggjoin = 1;
		agg->join_steps = request->join->nsteps;
		agg->ncolumns = request->ncolumns;
		agg->column_types = ga_alloc_array(request->ncolumns, sizeof(GaValueType));
		agg->from_build = ga_alloc_array(request->ncolumns, 1);
		if (agg->column_types == NULL || agg->from_build == NULL)
		{
			agg_free(agg);
			ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting an aggregation");
			return NULL;
		}
		if (request->ncolumns > 0)
		{
			memcpy(agg->column_types, request->column_types,
				   sizeof(GaValueType) * request->ncolumns);
			memcpy(agg->from_build, request->join->from_build, (size_t) request->ncolumns);
		}
		memcpy(agg->join_step, request->join->steps,
			   sizeof(GaAggJoinStep) * request->join->nsteps);
	}
	agg->impl = device->ops->agg_create(device->impl, request, status);
	if (agg->impl == NULL)
	{
		agg_free(agg);
		return NULL;
	}
	return agg;
}

/*
 * Check the build side's payload: the request's columns and types, a row
 * count within its capacity and the limit, and arrays where rows need them.
 */
static int
join_payload_validate(const GaAgg *agg, const GaBatch *payload, GaStatus *status)
{
	int			c;

	if (payload == NULL || (payload->ncolumns > 0 && payload->columns == NULL))
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side has no payload");
	if (payload->ncolumns != agg->ncolumns)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's payload has %d columns, but the request has %d",
							 payload->ncolumns, agg->ncolumns);
	if (payload->nrows < 0 || payload->nrows > payload->capacity ||
		payload->nrows > GA_JOIN_MAX_BUILD_ROWS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's payload holds %lld rows, with room for %lld and a limit of %lld",
							 (long long) payload->nrows, (long long) payload->capacity,
							 (long long) GA_JOIN_MAX_BUILD_ROWS);
	for (c = 0; c < payload->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];

		if (col->type != agg->column_types[c])
			return ga_status_set(status, GA_ERR_INVALID,
								 "column %d of an aggjoin's payload has type %d, but the request says %d",
								 c, (int) col->type, (int) agg->column_types[c]);
	}
	return 1;
}

/*
 * Whether a payload's string column has end offsets for its nrows rows,
 * rising and within its bytes (which may be absent when they use none).
 */
static int
join_payload_string_valid(const GaColumn *col, int64_t nrows)
{
	const uint32_t *ends = (const uint32_t *) col->values;
	uint32_t	prev = 0;
	int64_t		i;

	if (nrows > 0 && ends == NULL)
		return 0;
	for (i = 0; i < nrows; i++)
	{
		if (ends[i] < prev)
			return 0;
		prev = ends[i];
	}
	return prev == 0 || (col->bytes != NULL && (int64_t) prev <= col->bytes_capacity);
}

/*
 * Check the string columns of step `step`'s payload (0-based): end offsets
 * in order and within their bytes over every payload row, so that neither
 * device reads past them.
 */
static int
join_payload_strings_validate(const GaAgg *agg, int step, const GaBatch *payload,
							  GaStatus *status)
{
	int			c;

	for (c = 0; c < payload->ncolumns; c++)
		if (agg->from_build[c] == step + 1 && agg->column_types[c] == GA_TYPE_STRING &&
			!join_payload_string_valid(&payload->columns[c], payload->nrows))
			return ga_status_set(status, GA_ERR_INVALID,
								 "string column %d of the payload of join step %d has offsets out of order or past its bytes",
								 c, step + 1);
	return 1;
}

/*
 * Check the payload's build key columns of a hashed step: arrays (and a
 * string column's bytes) where rows need them, and every listed build row
 * valid in each.
 */
static int
join_build_keys_validate(const GaAggJoinStep *js, int step, const uint32_t *rows, int64_t n,
						 const GaBatch *payload, GaStatus *status)
{
	int64_t		i;
	int			k;

	for (k = 0; k < js->nkeys && n > 0; k++)
	{
		const GaColumn *col = &payload->columns[js->build_key_columns[k]];

		if (col->values == NULL || (col->has_nulls && col->validity == NULL) ||
			(col->type == GA_TYPE_STRING && col->bytes == NULL))
			return ga_status_set(status, GA_ERR_INVALID,
								 "the build key column %d of join step %d has no values in the payload",
								 js->build_key_columns[k], step + 1);
		for (i = 0; i < n; i++)
			if (ga_column_is_null(col, rows[i]))
				return ga_status_set(status, GA_ERR_INVALID,
									 "build row %u of join step %d is listed, but its build key column %d is null",
									 rows[i], step + 1, js->build_key_columns[k]);
	}
	return 1;
}

/*
 * Check the build's arguments and call order (an aggjoin, a
 * step it has, the step's first build, before any batch; the payload's
 * string columns; n and every row
 * in range; keys for a step on key_column, none for a hashed one), then
 * build.  A hashed step is built on the hashes of its build rows'
 * keys (join_key.h), with the seed that keeps them free of collisions.  A
 * step whose build failed counts as given: the device, or for a failure
 * here (hashing) this layer, remembers the failure and reports it from
 * then on.
 */
int
ga_aggjoin_build(GaAgg *agg, int step, const int64_t *keys, const uint32_t *rows, int64_t n,
				  const GaBatch *payload, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	const GaAggJoinStep *js;
	int64_t    *hashes = NULL;
	uint64_t	key_seed = 0;
	int64_t		i;
	int			ok;

	if (!agg->aggjoin)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a build side was given to an aggregation that is not fed by a join");
	if (step < 0 || step >= agg->join_steps)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a build side was given for step argument %d, but the aggjoin's steps are 0 to %d",
							 step, agg->join_steps - 1);
	js = &agg->join_step[step];
	if (agg->join_build_called[step])
		return ga_status_set(status, GA_ERR_INVALID,
							 "the build side of join step %d (step argument %d) of an aggjoin was given twice",
							 step + 1, step);
	if (agg->batch_handed_out)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side was given after its first batch");
	if (!join_payload_validate(agg, payload, status) ||
		!join_payload_strings_validate(agg, step, payload, status))
		return 0;
	if (n < 0 || n > payload->nrows || n > GA_JOIN_MAX_BUILD_ROWS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side has %lld keyed rows, but its payload has %lld rows (at most %lld are supported)",
							 (long long) n, (long long) payload->nrows,
							 (long long) GA_JOIN_MAX_BUILD_ROWS);
	if (ga_join_step_hashed(js) && keys != NULL)
		return ga_status_set(status, GA_ERR_INVALID,
							 "join step %d joins on %d hashed keys, so its build side takes no keys: the device reads them from its build key columns",
							 step + 1, js->nkeys);
	if (n > 0 && ((!ga_join_step_hashed(js) && keys == NULL) || rows == NULL))
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's build side has rows but no key or row arrays");
	for (i = 0; i < n; i++)
		if ((int64_t) rows[i] >= payload->nrows)
			return ga_status_set(status, GA_ERR_INVALID,
								 "build row %lld of an aggjoin is %u, beyond the payload's %lld rows",
								 (long long) i, rows[i], (long long) payload->nrows);
	if (ga_join_step_hashed(js) && !join_build_keys_validate(js, step, rows, n, payload, status))
		return 0;
	agg->join_build_called[step] = 1;
	agg->join_builds_called++;
	if (ga_join_step_hashed(js))
	{
		hashes = ga_alloc_array(n, sizeof(int64_t));
		if (hashes == NULL)
			return ga_failure_set(&agg->build_failure, status, GA_ERR_OUT_OF_MEMORY,
								  "out of host memory hashing the keys of an aggjoin's build side");
		if (!ga_join_key_hash_build(payload, js->build_key_columns, js->nkeys, rows, n, hashes,
									&key_seed, wait, arg, status))
		{
			GaStatus	failed = *status;

			free(hashes);
			return ga_failure_set(&agg->build_failure, status, failed.code, failed.message);
		}
		keys = hashes;
	}
	ok = agg->ops->aggjoin_build(agg->impl, step, keys, rows, n, key_seed, payload, wait, arg,
								  status);
	free(hashes);
	return ok;
}

/*
 * Whether an aggjoin still lacks the build side of a step, or
 * one of its builds failed here (then sets status); a plain one never does.
 */
static int
join_builds_missing(const GaAgg *agg, const char *what, GaStatus *status)
{
	if (!ga_failure_check(&agg->build_failure, status))
		return 1;
	if (!agg->aggjoin || agg->join_builds_called == agg->join_steps)
		return 0;
	ga_status_set(status, GA_ERR_INVALID,
				  "an aggjoin's batch was %s before the build sides of all its %d join steps were given",
				  what, agg->join_steps);
	return 1;
}

/*
 * Hand out a batch; an aggjoin needs every step's build side
 * first (after a failed build, the implementation reports the failure it
 * remembers).
 */
GaBatch *
ga_agg_next_batch(GaAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	if (join_builds_missing(agg, "requested", status))
		return NULL;
	agg->batch_handed_out = 1;
	return agg->ops->agg_next_batch(agg->impl, wait, arg, status);
}

/*
 * Submit a batch (a probe batch when aggjoin, after the build);
 * fail_at_batch counts every submit that reaches the device.
 */
int
ga_agg_submit(GaAgg *agg, GaBatch *batch, GaWaitCallback wait, void *arg,
			  GaStatus *status)
{
	if (join_builds_missing(agg, "submitted", status))
		return 0;
	agg->submits++;
	if (agg->fail_at_batch > 0 && agg->submits == agg->fail_at_batch)
		return ga_status_set(status, GA_ERR_INJECTED,
							 "injected device failure at batch %lld (gpuagg.debug_fail_at_batch)",
							 (long long) agg->submits);
	return agg->ops->agg_submit(agg->impl, batch, wait, arg, status);
}

/* Finish on the device; a build that failed in this layer fails it too. */
const GaAggResult *
ga_agg_finish(GaAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	if (!ga_failure_check(&agg->build_failure, status))
		return NULL;
	return agg->ops->agg_finish(agg->impl, wait, arg, status);
}

/* Report what the aggregation did so far. */
void
ga_agg_get_stats(const GaAgg *agg, GaAggStats *stats)
{
	memset(stats, 0, sizeof(*stats));
	agg->ops->agg_get_stats(agg->impl, stats);
}

/* Free the aggregation, in any state; NULL is allowed. */
void
ga_agg_destroy(GaAgg *agg)
{
	if (agg == NULL)
		return;
	agg->ops->agg_destroy(agg->impl);
	agg_free(agg);
}

/* ------------------------------------------------------------------------
 * Hash join
 * ------------------------------------------------------------------------
 */

/* Validate the request and start the join on the device's implementation. */
GaJoin *
ga_join_create(GaDevice *device, const GaJoinRequest *request, GaStatus *status)
{
	GaJoin	   *join;

	if (!ga_join_request_validate(request, status))
		return NULL;
	join = calloc(1, sizeof(GaJoin));
	if (join == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory starting a join");
		return NULL;
	}
	join->ops = device->ops;
	join->fail_at_batch = request->fail_at_batch;
	join->probe_batch_rows = request->probe_batch_rows;
	join->impl = device->ops->join_create(device->impl, request, status);
	if (join->impl == NULL)
	{
		free(join);
		return NULL;
	}
	return join;
}

/* Check the build's arguments (once, n in range, arrays given), then build. */
int
ga_join_build(GaJoin *join, const int64_t *keys, const uint32_t *rows, int64_t n,
			  GaWaitCallback wait, void *arg, GaStatus *status)
{
	if (join->build_called)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join's build side was given twice");
	if (n < 0 || n > GA_JOIN_MAX_BUILD_ROWS)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join's build side has %lld rows; at most %lld are supported",
							 (long long) n, (long long) GA_JOIN_MAX_BUILD_ROWS);
	if (n > 0 && (keys == NULL || rows == NULL))
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join's build side has rows but no key or row arrays");
	join->build_called = 1;
	if (!join->ops->join_build(join->impl, keys, rows, n, wait, arg, status))
		return 0;
	join->built = 1;
	return 1;
}

/* The build rows sorted by key, once the build succeeded; else NULL. */
const uint32_t *
ga_join_sorted_rows(const GaJoin *join)
{
	if (!join->built)
		return NULL;
	return join->ops->join_sorted_rows(join->impl);
}

/* Hand out a probe batch. */
GaBatch *
ga_join_next_batch(GaJoin *join, GaWaitCallback wait, void *arg, GaStatus *status)
{
	return join->ops->join_next_batch(join->impl, wait, arg, status);
}

/* Probe after a successful build; fail_at_batch counts every call. */
const GaJoinMatches *
ga_join_probe(GaJoin *join, GaBatch *batch, GaWaitCallback wait, void *arg,
			  GaStatus *status)
{
	join->probes++;
	if (join->fail_at_batch > 0 && join->probes == join->fail_at_batch)
	{
		ga_status_set(status, GA_ERR_INJECTED,
					  "injected device failure at probe batch %lld (gpuagg.debug_fail_at_batch)",
					  (long long) join->probes);
		return NULL;
	}
	if (!join->built)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "a join was probed before its build side was built");
		return NULL;
	}
	if (batch == NULL)
	{
		ga_status_set(status, GA_ERR_INVALID, "a join was probed without a batch");
		return NULL;
	}
	if (batch->nrows < 0 || batch->nrows > join->probe_batch_rows)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "a probe batch holds %lld rows but has room for %lld",
					  (long long) batch->nrows, (long long) join->probe_batch_rows);
		return NULL;
	}
	return join->ops->join_probe(join->impl, batch, wait, arg, status);
}

/* Report what the join did so far. */
void
ga_join_get_stats(const GaJoin *join, GaJoinStats *stats)
{
	memset(stats, 0, sizeof(*stats));
	join->ops->join_get_stats(join->impl, stats);
}

/* Free the join, in any state; NULL is allowed. */
void
ga_join_destroy(GaJoin *join)
{
	if (join == NULL)
		return;
	join->ops->join_destroy(join->impl);
	free(join);
}
