/*-------------------------------------------------------------------------
 *
 * hashagg/private.h
 *	  GpuHashAgg's private lists (private.c): a path's, the description
 *	  made from it at plan time, and a plan's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHAGG_PRIVATE_H
#define GPUAGG_HASHAGG_PRIVATE_H

#include "nodes/pg_list.h"

#include "hashagg/desc.h"

/* hashagg/private.c */
extern List *GpuAggPathToList(const GpuAggPathInfo *info);
extern GpuAggPathInfo *GpuAggPathFromList(List *list);
extern GpuAggDesc *GpuAggDescFromPath(const GpuAggPathInfo *info, List **scan_tlist);
extern List *GpuAggDescToList(const GpuAggDesc *desc);
extern GpuAggDesc *GpuAggDescFromList(List *list);

#endif							/* GPUAGG_HASHAGG_PRIVATE_H */
