/*-------------------------------------------------------------------------
 *
 * devices.h
 *	  Which devices gpuagg can use (devices.c): GPU discovery, the device a
 *	  node is planned and run on, how large a join build it may hold, and
 *	  the wait callback of device calls.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DEVICES_H
#define GPUAGG_DEVICES_H

#include "portability/instr_time.h"

#include "compat.h"
#include "gpuagg_device.h"

/* devices.c */
extern void GpuAggDiscoverDevices(void);
extern const GaGpuInfo *GpuAggSelectedGpu(void);
extern const char *GpuAggNoGpuReason(void);
extern double GpuAggHashJoinBuildLimit(void);
extern double GpuAggJoinBuildsLimit(GaDeviceKind device);
extern GaDeviceKind GpuAggPlannedDeviceKind(bool *usable);
extern GaDevice *GpuAggOpenDevice(GaDeviceKind kind, double *setup_ms);
extern GaDevice *GpuAggOpenFallbackDevice(const GaDevice *failed, double *setup_ms);
extern bool GpuAggDeviceFailureRecoverable(const GaDevice *device, const GaStatus *status);
extern int	GpuAggUsableGpuOrdinals(int *ordinals, int max);
extern const char *GpuAggDeviceName(const GaDevice *device, GaDeviceKind planned);
extern const GaGpuInfo *GpuAggExplainDevice(const char *device_name, int ran_on,
											ExplainState *es);
extern int	GpuAggDeviceWait(void *arg);
extern void GpuAggRaiseCancel(void);
extern double GpuAggElapsedMs(instr_time start);

#endif							/* GPUAGG_DEVICES_H */
