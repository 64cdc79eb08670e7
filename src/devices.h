/*-------------------------------------------------------------------------
 *
 * devices.h
 *	  Which devices gpuagg can use (devices.c): GPU discovery, the device a
 *	  node is planned and run on, and the wait callback of device calls.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DEVICES_H
#define GPUAGG_DEVICES_H

#include "portability/instr_time.h"

#include "gpuagg_device.h"

/* devices.c */
extern void GpuAggDiscoverDevices(void);
extern const GaGpuInfo *GpuAggSelectedGpu(void);
extern const char *GpuAggNoGpuReason(void);
extern GaDeviceKind GpuAggPlannedDeviceKind(bool *usable);
extern GaDevice *GpuAggOpenDevice(GaDeviceKind kind, double *setup_ms);
extern int	GpuAggDeviceWait(void *arg);
extern void GpuAggRaiseCancel(void);
extern double GpuAggElapsedMs(instr_time start);

/* guc.c */
extern double GpuAggHashJoinBuildLimit(GaDeviceKind device);

#endif							/* GPUAGG_DEVICES_H */
