/*-------------------------------------------------------------------------
 *
 * util.c
 *	  Small helpers of the device layer (util.h): GaStatus, array
 *	  allocation, the host-memory provider, the clock, and the names and
 *	  widths the boundary
 *	  (gpuagg_device.h) gives types, strategies and phases.  Every other
 *	  file of cuda/ may call these; they call nothing of cuda/.
 *
 *-------------------------------------------------------------------------
 */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The host-memory provider (util.h): HOST_UNSET until the first host
 * allocation fixes malloc (HOST_MALLOC) or ga_set_host_allocator sets a
 * provider (HOST_PROVIDER).  host_allocator is written once, before the
 * state says HOST_PROVIDER, and never again.
 */
#define HOST_UNSET 0
#define HOST_MALLOC 1
#define HOST_PROVIDER 2

static int	host_state = HOST_UNSET;
static GaHostAllocator host_allocator;

/* Set status to success. */
void
ga_status_ok(GaStatus *status)
{
	status->code = GA_OK;
	status->message[0] = '\0';
}

/* Set status to a failure with a formatted message; returns 0 for chaining. */
int
ga_status_set(GaStatus *status, GaStatusCode code, const char *fmt,...)
{
	va_list		args;

	status->code = code;
	va_start(args, fmt);
	vsnprintf(status->message, sizeof(status->message), fmt, args);
	va_end(args);
	return 0;
}

/* Allocate n elements of size bytes (at least one), NULL on overflow or exhaustion. */
void *
ga_alloc_array(int64_t n, size_t size)
{
	if (n < 1)
		n = 1;
	if ((uint64_t) n > SIZE_MAX / size)
		return NULL;
	return malloc((size_t) n * size);
}

/* Set the host-memory provider, once, before any host allocation. */
int
ga_set_host_allocator(const GaHostAllocator *allocator, GaStatus *status)
{
	int			state = __atomic_load_n(&host_state, __ATOMIC_ACQUIRE);

	if (state == HOST_PROVIDER && memcmp(&host_allocator, allocator, sizeof(*allocator)) == 0)
		return 1;
	if (state != HOST_UNSET)
		return ga_status_set(status, GA_ERR_DEVICE,
							 state == HOST_PROVIDER ?
							 "the host memory of this process already comes from another provider" :
							 "host memory was allocated in this process before its provider was set");
	host_allocator = *allocator;
	__atomic_store_n(&host_state, HOST_PROVIDER, __ATOMIC_RELEASE);
	return 1;
}

/*
 * The state of the provider: HOST_PROVIDER, or HOST_MALLOC (fixed by this
 * call when nothing was set).
 */
static int
host_state_fixed(void)
{
	int			state = __atomic_load_n(&host_state, __ATOMIC_ACQUIRE);
	int			unset = HOST_UNSET;

	if (state != HOST_UNSET)
		return state;
	if (__atomic_compare_exchange_n(&host_state, &unset, HOST_MALLOC, 0,
									__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return HOST_MALLOC;
	return unset;				/* set meanwhile: what it is now */
}

/* Whether host memory comes from a provider rather than malloc. */
int
ga_host_allocator_set(void)
{
	return host_state_fixed() == HOST_PROVIDER;
}

/* Bytes (at least one) from the provider, or malloc. */
void *
ga_host_alloc(size_t bytes)
{
	if (bytes == 0)
		bytes = 1;
	if (host_state_fixed() == HOST_PROVIDER)
		return host_allocator.alloc(host_allocator.context, bytes);
	return malloc(bytes);
}

/* n elements of size bytes (at least one) from the provider. */
void *
ga_host_alloc_array(int64_t n, size_t size)
{
	if (n < 1)
		n = 1;
	if ((uint64_t) n > SIZE_MAX / size)
		return NULL;
	return ga_host_alloc((size_t) n * size);
}

/* Resize an array of the provider's, keeping its first elements. */
void *
ga_host_realloc_array(void *ptr, int64_t old_n, int64_t n, size_t size)
{
	void	   *q;

	if (n < 1)
		n = 1;
	if (old_n < 0 || ptr == NULL)
		old_n = 0;
	if ((uint64_t) n > SIZE_MAX / size)
		return NULL;
	if (host_state_fixed() != HOST_PROVIDER)
		return realloc(ptr, (size_t) n * size);
	q = host_allocator.alloc(host_allocator.context, (size_t) n * size);
	if (q == NULL)
		return NULL;
	if (old_n > 0)
		memcpy(q, ptr, (size_t) (old_n < n ? old_n : n) * size);
	ga_host_free(ptr);
	return q;
}

/* Give back memory of ga_host_alloc*; NULL is allowed. */
void
ga_host_free(void *ptr)
{
	if (ptr == NULL)
		return;
	if (host_state_fixed() == HOST_PROVIDER)
		host_allocator.free(host_allocator.context, ptr);
	else
		free(ptr);
}

/* Milliseconds on a monotonic clock, for the CPU device's device_ms. */
double
ga_cpu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

/* The smallest and largest value of an integer column type. */
void
ga_int_type_range(GaValueType type, int64_t *lo, int64_t *hi)
{
	switch (type)
	{
		case GA_TYPE_INT8:
			*lo = INT8_MIN;
			*hi = INT8_MAX;
			break;
		case GA_TYPE_INT16:
			*lo = INT16_MIN;
			*hi = INT16_MAX;
			break;
		case GA_TYPE_INT32:
			*lo = INT32_MIN;
			*hi = INT32_MAX;
			break;
		default:
			*lo = INT64_MIN;
			*hi = INT64_MAX;
			break;
	}
}

/* Bytes per value of a column type. */
int
ga_type_width(GaValueType type)
{
	switch (type)
	{
		case GA_TYPE_NONE:
			return 0;
		case GA_TYPE_INT8:
			return 1;
		case GA_TYPE_INT16:
			return 2;
		case GA_TYPE_INT32:
		case GA_TYPE_FLOAT32:
		case GA_TYPE_STRING:
			return 4;
		case GA_TYPE_INT64:
		case GA_TYPE_FLOAT64:
			return 8;
	}
	return 0;
}

/* The name EXPLAIN shows for a strategy. */
const char *
ga_strategy_name(GaStrategy strategy)
{
	switch (strategy)
	{
		case GA_STRATEGY_AUTO:
			return "auto";
		case GA_STRATEGY_SHARED:
			return "shared";
		case GA_STRATEGY_GLOBAL:
			return "global";
		case GA_STRATEGY_CPU:
			return "cpu hash";
		case GA_STRATEGY_PERFECT:
			return "perfect";
		case GA_STRATEGY_PARTITIONED:
			return "partitioned";
		case GA_NUM_STRATEGIES:
			break;
	}
	return "unknown";
}

/* The name EXPLAIN shows for a phase of the device work. */
const char *
ga_phase_name(GaPhase phase)
{
	switch (phase)
	{
		case GA_PHASE_PROBE:
			return "probe";
		case GA_PHASE_DERIVED:
			return "derived";
		case GA_PHASE_PARTITION:
			return "partition";
		case GA_PHASE_GROUP_IDS:
			return "group ids";
		case GA_PHASE_AGGREGATE:
			return "aggregate";
		case GA_PHASE_GROW:
			return "grow";
		case GA_PHASE_FINISH:
			return "finish";
		case GA_NUM_PHASES:
			break;
	}
	return "unknown";
}

/* Whether a string column's offsets are in order and within its bytes. */
int
ga_string_column_valid(const GaColumn *column, int64_t nrows)
{
	const uint32_t *ends = (const uint32_t *) column->values;
	uint32_t	prev = 0;
	int64_t		i;

	if (column->bytes == NULL && nrows > 0)
		return 0;
	for (i = 0; i < nrows; i++)
	{
		if (ends[i] < prev)
			return 0;
		prev = ends[i];
	}
	return (int64_t) prev <= column->bytes_capacity;
}
