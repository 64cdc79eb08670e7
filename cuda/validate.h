/*-------------------------------------------------------------------------
 *
 * validate.h
 *	  The checks of a request before any device sees it, and the plan of
 *	  its derived columns that both devices keep (cuda/validate.c).  The
 *	  dispatcher (device.c) validates every request; the devices copy the
 *	  derived-column plan.
 *
 * Internal to cuda/; plain C, no PostgreSQL and no CUDA runtime header.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_VALIDATE_H
#define GPUAGG_VALIDATE_H

#include "gpuagg_device.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * A request's derived columns as the devices keep them: copied (the
 * caller may free its array after ga_agg_create) and grouped by program,
 * so that a device evaluates each distinct program once per row however
 * many parts (limbs, int64, NaN flag) are taken from it.  Program p's
 * steps are those of derived[program_spec[p]]; derived column d takes its
 * part from program program_of[d].
 */
typedef struct GaDerivedPlan
{
	int			nderived;
	GaDerivedColumn derived[GA_MAX_DERIVED];
	int			nprograms;
	int			program_of[GA_MAX_DERIVED];
	int			program_spec[GA_MAX_DERIVED];
} GaDerivedPlan;

/* Check an aggregation request; 1, or 0 with status (GA_ERR_INVALID). */
extern int	ga_request_validate(const GaAggRequest *request, GaStatus *status);

/* Check a hash join request; 1, or 0 with status (GA_ERR_INVALID). */
extern int	ga_join_request_validate(const GaJoinRequest *request, GaStatus *status);

/*
 * The derived-column plan of a validated request (free() it); NULL when
 * out of host memory.
 */
extern GaDerivedPlan *ga_derived_plan_create(const GaAggRequest *request);

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_VALIDATE_H */
