/*-------------------------------------------------------------------------
 *
 * service/stats.c
 *	  The GPU service's cumulative statistics in SQL: gpuagg_stats(), one
 *	  row per device the service runs, and gpuagg_stats_reset().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "service/service.h"

PG_FUNCTION_INFO_V1(gpuagg_stats);
PG_FUNCTION_INFO_V1(gpuagg_stats_reset);

#define STATS_COLUMNS 16

/*
 * gpuagg_stats(): per device of the service, what it has done since the
 * last reset, the pid of the process doing its work, the memory it holds
 * now and may hold, and a GPU's launch tuner (classes tuned and exploring,
 * the tuning file); no rows without a service.
 */
Datum
gpuagg_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GaService  *service = GpuAggService();
	GaServiceDeviceStats stats[1 + GA_MAX_GPUS];
	char		note[GA_MESSAGE_LEN];
	GaServiceState state;
	int			pid = 0;
	int			n;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (service == NULL)
		return (Datum) 0;
	state = ga_service_state(service, &pid, note, sizeof(note));
	n = ga_service_stats(service, stats, lengthof(stats));
	for (i = 0; i < n; i++)
	{
		const GaServiceDeviceStats *s = &stats[i];
		Datum		values[STATS_COLUMNS];
		bool		nulls[STATS_COLUMNS] = {0};

		values[0] = CStringGetTextDatum(s->kind == GA_DEVICE_GPU ?
										psprintf("GPU %d", s->gpu_ordinal) : "CPU");
		values[1] = CStringGetTextDatum(GpuAggServiceStateName(state));
		values[2] = Int32GetDatum(pid);
		nulls[2] = (pid == 0);
		values[3] = Int64GetDatum(s->queries);
		values[4] = Int64GetDatum(s->batches);
		values[5] = Int64GetDatum(s->rows);
		values[6] = Int64GetDatum(s->bytes);
		values[7] = Float8GetDatum(s->device_ms);
		values[8] = Float8GetDatum(s->queue_ms);
		values[9] = Int64GetDatum(s->cpu_fallbacks);
		values[10] = Int64GetDatum(s->out_of_memory);
		values[11] = Int64GetDatum(s->failures);
		values[12] = Int64GetDatum(s->active);
		values[13] = Int64GetDatum(s->memory_used);
		values[14] = Int64GetDatum(s->memory_budget);
		if (s->kind == GA_DEVICE_GPU)
			values[15] = CStringGetTextDatum(psprintf("%d classes tuned, %d exploring; file %s",
													  s->tune_tuned, s->tune_exploring,
													  s->tune_file > 0 ?
													  psprintf("read (%d classes)", s->tune_loaded) :
													  s->tune_file < 0 ? "ignored" : "none"));
		else
			nulls[15] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* gpuagg_stats_reset(): zero the service's counters. */
Datum
gpuagg_stats_reset(PG_FUNCTION_ARGS)
{
	GaService  *service = GpuAggService();

	if (service != NULL)
		ga_service_reset_stats(service);
	PG_RETURN_VOID();
}
