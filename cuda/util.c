/*-------------------------------------------------------------------------
 *
 * util.c
 *	  Small helpers of the device layer (util.h): GaStatus, array
 *	  allocation, the clock, and the names and widths the boundary
 *	  (gpuagg_device.h) gives types, strategies and phases.  Every other
 *	  file of cuda/ may call these; they call nothing of cuda/.
 *
 *-------------------------------------------------------------------------
 */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
