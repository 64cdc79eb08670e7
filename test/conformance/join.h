/*-------------------------------------------------------------------------
 *
 * join.h
 *	  The hash join part of the device conformance test (join.c, and its
 *	  API checks in join_api.c), called by conformance.c's main, and what
 *	  the parts share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CONFORMANCE_JOIN_H
#define GPUAGG_CONFORMANCE_JOIN_H

#include "gpuagg_device.h"

/* join.c */

/* Most devices one run of the join suite compares. */
#define JOIN_MAX_DEVICES 8

/*
 * Run the join's API checks and cases on each of ndevices devices (at most
 * JOIN_MAX_DEVICES, labelled), compare each with the reference and every
 * device's answers with the first's.  Adds to *checks; returns the
 * problems found.
 */
extern int64_t conformance_join(GaDevice *const *devices, const char *const *labels,
								int ndevices, uint64_t seed, int ncases, int timeout,
								int verbose, int64_t *checks);

/* join.c: what the API checks (join_api.c) use too */

/* The wait callback's state: calls counted, "stop" answered when told to. */
typedef struct JoinWait
{
	int64_t		calls;
	int			cancel;			/* answer "stop" */
	int64_t		cancels;		/* times it answered "stop" */
} JoinWait;

extern uint64_t join_mix(uint64_t z);
extern int	join_wait(void *arg);

/* join_api.c: the API checks on one device; each returns the problems */
extern int64_t api_join_invalid(GaDevice *dev, const char *label);
extern int64_t api_join_fail_at_batch(GaDevice *dev, const char *label);
extern int64_t api_join_cancel(GaDevice *dev, const char *label);
extern int64_t api_join_two(GaDevice *dev, const char *label);
extern int64_t api_join_destroy_states(GaDevice *dev, const char *label);

/* common.c: one run's mismatches, counted; the first few printed. */
typedef struct RunReport
{
	int			case_no;		/* -1 for API checks */
	const char *label;
	int64_t		mismatches;
	int			printed;
	const char *suite;			/* "join", or NULL for the aggregation suite */
} RunReport;

extern void report(RunReport *rr, const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 2, 3)))
#endif
			;

/* conformance.c: name the case running now, for the watchdog's message. */
extern void conformance_set_current(const char *suite, int case_no);

#endif							/* GPUAGG_CONFORMANCE_JOIN_H */
