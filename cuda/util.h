/*-------------------------------------------------------------------------
 *
 * util.h
 *	  Small helpers every part of the device layer uses (cuda/util.c): a
 *	  GaStatus set to success or to a formatted failure, array allocation
 *	  that checks for overflow, a monotonic clock, a failure that poisons a
 *	  device object, and the order-preserving map of doubles to integers
 *	  that MIN/MAX of floats use; and the host-memory provider every buffer
 *	  a device hands to its caller comes from.  The boundary's own helpers
 *	  (ga_type_width, ga_strategy_name, ga_phase_name) are declared in
 *	  gpuagg_device.h and defined in util.c too.
 *
 * Internal to cuda/; plain C, no PostgreSQL and no CUDA runtime header.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_UTIL_H
#define GPUAGG_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuagg_device.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* util.c */
extern void ga_status_ok(GaStatus *status);
extern int	ga_status_set(GaStatus *status, GaStatusCode code,
						  const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 3, 4)))
#endif
			;
/* malloc of n elements (at least one), NULL on overflow or exhaustion */
extern void *ga_alloc_array(int64_t n, size_t size);
/* milliseconds on a monotonic clock, for the CPU device's device_ms */
extern double ga_cpu_now_ms(void);
/* the smallest and largest value of an integer column type */
extern void ga_int_type_range(GaValueType type, int64_t *lo, int64_t *hi);

/*
 * The host-memory provider.  Every buffer a device hands to its caller (a
 * batch's values and validity, an aggregation's result arrays, a join's
 * probe batch, matches and sorted rows) comes from ga_host_alloc and goes
 * back through ga_host_free: malloc and free by default, or the provider
 * set once per process with ga_set_host_allocator, before the process's
 * first host allocation.  The GPU service sets its arena, memory that its
 * clients map too, so that a client fills a device's batch in place and
 * reads the groups where the device wrote them.  The GPU device takes its
 * pinned buffers from a provider that is set, instead of cudaHostAlloc
 * (the service registers the arena with the GPU).
 */
typedef struct GaHostAllocator
{
	void	   *(*alloc) (void *context, size_t bytes);	/* NULL when full */
	void		(*free) (void *context, void *ptr);
	void	   *context;
} GaHostAllocator;

/*
 * Set the provider; 0 with status when another one is set, or when host
 * memory was already allocated by malloc (setting the same one again is
 * allowed).  Call it before any thread of the process uses a device.
 */
extern int	ga_set_host_allocator(const GaHostAllocator *allocator, GaStatus *status);
/* whether a provider is set (the first call without one fixes malloc) */
extern int	ga_host_allocator_set(void);
/* bytes from the provider (at least one), NULL when exhausted */
extern void *ga_host_alloc(size_t bytes);
/* n elements of size bytes from the provider, NULL on overflow or exhaustion */
extern void *ga_host_alloc_array(int64_t n, size_t size);
/*
 * Grow or shrink ptr (NULL: none yet, of old_n elements) to n elements,
 * keeping the first min(old_n, n); NULL on failure, ptr then untouched.
 */
extern void *ga_host_realloc_array(void *ptr, int64_t old_n, int64_t n, size_t size);
/* give back what ga_host_alloc* returned; NULL is allowed */
extern void ga_host_free(void *ptr);

/*
 * A failure that poisons a device object (an aggregation, a join): every
 * later call reports it again, so a half-updated object is never used.
 */
typedef struct GaFailure
{
	int			failed;
	GaStatus	status;
} GaFailure;

/* Record a failure in failure and status; returns 0 like ga_status_set. */
static inline int
ga_failure_set(GaFailure *failure, GaStatus *status, GaStatusCode code,
			   const char *message)
{
	ga_status_set(status, code, "%s", message);
	failure->failed = 1;
	failure->status = *status;
	return 0;
}

/* 1 when nothing failed yet; else 0 with the earlier failure in status. */
static inline int
ga_failure_check(const GaFailure *failure, GaStatus *status)
{
	if (!failure->failed)
		return 1;
	*status = failure->status;
	return 0;
}

/*
 * Order-preserving map of a double to int64 (NaN above +Infinity, every NaN
 * the same), so that MIN/MAX of floats are integer MIN/MAX; and back.
 */
static inline int64_t
ga_float64_to_ordered(double value)
{
	union
	{
		double		d;
		int64_t		i;
	}			u;

	if (value != value)
		return INT64_MAX;
	u.d = value;
	return u.i >= 0 ? u.i : (int64_t) (u.i ^ INT64_MAX);
}

/* The double whose ga_float64_to_ordered() is `ordered`. */
static inline double
ga_ordered_to_float64(int64_t ordered)
{
	union
	{
		double		d;
		int64_t		i;
	}			u;

	if (ordered == INT64_MAX)
	{
		u.i = INT64_C(0x7ff8000000000000);	/* the canonical quiet NaN */
		return u.d;
	}
	u.i = ordered >= 0 ? ordered : (int64_t) (ordered ^ INT64_MAX);
	return u.d;
}

#ifdef __cplusplus
}
#endif

/*
 * Whether the first nrows end offsets of a string column never decrease
 * and stay within its bytes (every device checks a batch before reading
 * its strings).
 */
extern int	ga_string_column_valid(const GaColumn *column, int64_t nrows);

#endif							/* GPUAGG_UTIL_H */
