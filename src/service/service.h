/*-------------------------------------------------------------------------
 *
 * service/service.h
 *	  The GPU service, PostgreSQL's side: its shared memory and background
 *	  worker (service.c), the supervisor that runs the service process and
 *	  restarts it when it dies (supervisor.c), and its statistics in SQL
 *	  (stats.c).  The service itself, what it serves and how a backend
 *	  talks to it, is cuda/gpuagg_service.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_SERVICE_SERVICE_H
#define GPUAGG_SERVICE_SERVICE_H

#include "fmgr.h"

#include "gpuagg_device.h"
#include "gpuagg_service.h"

/* service.c */
extern void GpuAggServiceInit(void);
extern GaService *GpuAggService(void);
extern bool GpuAggServiceWanted(GaDeviceKind kind);
extern GaDevice *GpuAggServiceDevice(GaDeviceKind kind, int gpu_ordinal,
									 GaStatus *status);
extern const char *GpuAggServiceStateName(GaServiceState state);

/* supervisor.c: the background worker's entry point */
extern PGDLLEXPORT void GpuAggServiceMain(Datum arg);

#endif							/* GPUAGG_SERVICE_SERVICE_H */
