/*-------------------------------------------------------------------------
 *
 * hashjoin/private.h
 *	  GpuHashJoin's private lists (private.c): a path's and a plan's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHJOIN_PRIVATE_H
#define GPUAGG_HASHJOIN_PRIVATE_H

#include "nodes/pg_list.h"

#include "hashjoin/desc.h"

/* hashjoin/private.c */
extern List *GpuJoinPathToList(const GpuJoinPathInfo *info);
extern GpuJoinPathInfo *GpuJoinPathFromList(List *list);
extern List *GpuJoinDescToList(const GpuJoinDesc *desc);
extern GpuJoinDesc *GpuJoinDescFromList(List *list);

#endif							/* GPUAGG_HASHJOIN_PRIVATE_H */
