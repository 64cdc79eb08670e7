/*-------------------------------------------------------------------------
 *
 * join.h
 *	  The hash join part of the device conformance test (join.c), called by
 *	  conformance.c's main, and what the two parts share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CONFORMANCE_JOIN_H
#define GPUAGG_CONFORMANCE_JOIN_H

#include "gpuagg_device.h"

/* join.c */

/*
 * Run the join's API checks and cases on the CPU device and, when gpu is
 * not NULL, the GPU device (cpu may be NULL too: then the GPU is compared
 * with the reference only).  Adds to *checks; returns the problems found.
 */
extern int64_t conformance_join(GaDevice *cpu, GaDevice *gpu, uint64_t seed,
								int ncases, int timeout, int verbose,
								int64_t *checks);

/* conformance.c: one run's mismatches, counted; the first few printed. */
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
