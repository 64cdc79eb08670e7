/*-------------------------------------------------------------------------
 *
 * agg.h
 *	  What the aggregation suite's files share and conformance.c's main
 *	  calls: the fixed and random specs (agg_specs.c), a case generated
 *	  from one (agg_case.c), its run on a device (agg.c) and the API checks
 *	  (agg_api.c).  What other suites reuse is in conformance.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CONFORMANCE_AGG_H
#define GPUAGG_CONFORMANCE_AGG_H

#include "conformance.h"

/* agg_specs.c */

/* How many fixed cases there are (indexes 0 .. NUM_FIXED_CASES - 1). */
#define NUM_FIXED_CASES 41

/* The fixed case `index`, and a random one of at most max_rows rows. */
extern void fixed_spec(int index, CaseSpec *s);
extern void random_spec(Rng *rng, CaseSpec *s, int64_t max_rows);

/* agg_case.c */

/* Generate a case's columns, rows, aggregates and batches from its spec. */
extern void build_case(Case *c, const CaseSpec *spec, Rng *rng);

/* agg.c */

/* The first GPU's properties, for the checks of the GPU's strategies. */
extern GaGpuInfo gpu_info;

/*
 * Run a case on one device under one strategy and compare with the
 * reference; writes a summary for the case line, returns the problems.
 */
extern int64_t run_case(const Case *c, int case_no, GaDevice *dev, GaStrategy strategy,
						const char *label, int verbose, char *summary,
						size_t summary_len);

/* agg_api.c: the API checks on one device run; each returns the problems */
extern int64_t api_cancel(GaDevice *dev, GaStrategy strategy, const char *label);
extern int64_t api_fail_at_batch(GaDevice *dev, GaStrategy strategy, const char *label);
extern int64_t api_invalid(GaDevice *dev, const char *label);

#endif							/* GPUAGG_CONFORMANCE_AGG_H */
