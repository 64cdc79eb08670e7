/*-------------------------------------------------------------------------
 *
 * gpuagg.c
 *	  Entry point: checks that the library is preloaded and starts each
 *	  subsystem.  Nothing else lives here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "compat.h"
#include "devices.h"
#include "guc.h"
#include "hashagg/hashagg.h"
#include "hashjoin/hashjoin.h"
#include "service/service.h"

GPUAGG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Load-time initialisation.  gpuagg installs planner hooks and discovers
 * GPUs once in the postmaster, so it only works from shared_preload_libraries.
 */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuagg must be loaded via shared_preload_libraries"),
				 errhint("Add gpuagg to shared_preload_libraries in postgresql.conf and restart the server.")));

	GpuAggGucInit();
	GpuAggDiscoverDevices();
	GpuAggServiceInit();
	GpuAggPlanInit();
	GpuAggPackInit();
	GpuAggPathInit();
	GpuJoinPlanInit();
	GpuJoinPathInit();
}
