/*-------------------------------------------------------------------------
 *
 * hashagg/request.c
 *	  The device requests of a GpuHashAgg node: its layout (layout.c) and,
 *	  per grouping set and per DISTINCT set, the request a device
 *	  aggregation is created from, sized by the planner's estimates and the
 *	  settings that govern batches, strategies and the testing knobs.
 *	  exec.c builds them when the node starts; spill.c bounds them next.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "batch/batch.h"
#include "guc.h"
#include "hashagg/state.h"

/*
 * Rows per batch: gpuagg.batch_rows, but no more than twice the rows the
 * planner expects (at least 64K), so that a small input, or one rescanned
 * for every outer row, does not allocate large pinned buffers.  A low
 * estimate only means more batches.  Grouping sets share it (down to 64K
 * rows each), since every set's aggregation holds its own batches.
 */
static int64
agg_batch_capacity(const GpuAggDesc *desc)
{
	double		expected = 2.0 * desc->input_rows;
	double		rows = Min((double) gpuagg_batch_rows, Max(expected, 65536.0));

	if (desc->nsets > 1)
		rows = Max(rows / desc->nsets, Min(rows, 65536.0));
	return (int64) rows;
}

/* The value of GROUPING(...) number g for grouping set s. */
static int32
agg_grouping_value(const GpuAggDesc *desc, int g, int s)
{
	const GpuAggGroupingDesc *grouping = &desc->groupings[g];
	int32		value = 0;
	int			a;

	for (a = 0; a < grouping->nargs; a++)
	{
		value <<= 1;
		if ((desc->sets[s].key_mask & ((uint32) 1 << grouping->keys[a])) == 0)
			value |= 1;
	}
	return value;
}

/* Build the device requests from the layout of desc: one per grouping set. */
void
GpuAggBuildRequests(GpuAggState *state)
{
	const GpuAggDesc *desc = state->desc;
	GpuAggLayout *layout = GpuAggLayoutBuild(desc);
	GaAggRequest *request;
	int			s;

	state->layout = layout;
	state->requests = palloc0(sizeof(GaAggRequest) * desc->nsets);
	state->aggs = palloc0(sizeof(GaAgg *) * desc->nsets);
	state->results = palloc0(sizeof(GaAggResult *) * desc->nsets);
	state->spills = palloc0(sizeof(GpuAggSpill *) * desc->nsets);
	state->grouping_values = palloc0(sizeof(int32 *) * desc->nsets);
	for (s = 0; s < desc->nsets; s++)
	{
		int		   *keys = palloc(sizeof(int) * Max(desc->nkeys, 1));
		int			nkeys = 0;
		int			i;

		request = &state->requests[s];
		for (i = 0; i < desc->nkeys; i++)
			if (desc->sets[s].key_mask & ((uint32) 1 << i))
				keys[nkeys++] = layout->key_columns[i];
		request->ncolumns = layout->ncolumns;
		request->column_types = layout->column_types;
		request->nkeys = nkeys;
		request->key_columns = keys;
		request->naggs = layout->nops;
		request->aggs = layout->ops;
		request->batch_rows = Max(agg_batch_capacity(desc), GpuAggMessageCapacity());
		request->estimated_groups = (int64) Min(Max(desc->sets[s].est_groups, 1.0), 1e9);
		request->strategy = (GaStrategy) gpuagg_strategy;
		request->fail_at_batch = s == 0 ? gpuagg_debug_fail_at_batch : 0;
		state->fail_at_batch = gpuagg_debug_fail_at_batch;
		request->join = desc->njoin_steps > 0 ? &layout->join_spec : NULL;
		request->nderived = layout->nderived;
		request->derived = layout->derived;
		request->string_bytes = GpuAggStringBytes(request->batch_rows);
		request->debug_hash_bits = gpuagg_debug_hash_bits;
		request->tuning = (GaTuning) gpuagg_tuning;
		request->debug_launch_set = gpuagg_debug_launch_set;
		request->debug_launch = gpuagg_debug_launch_params;

		state->grouping_values[s] = palloc0(sizeof(int32) * Max(desc->ngroupings, 1));
		for (i = 0; i < desc->ngroupings; i++)
			state->grouping_values[s][i] = agg_grouping_value(desc, i, s);
	}
	request = &state->requests[0];

	/* DISTINCT sets: the same batches grouped by the keys and the argument */
	if (layout->ndistinct > 0)
	{
		int			d;

		state->distinct_requests = palloc0(sizeof(GaAggRequest) * layout->ndistinct);
		state->distinct_aggs = palloc0(sizeof(GaAgg *) * layout->ndistinct);
		state->distinct_results = palloc0(sizeof(GaAggResult *) * layout->ndistinct);
		for (d = 0; d < layout->ndistinct; d++)
		{
			GaAggRequest *r = &state->distinct_requests[d];
			int		   *keys = palloc(sizeof(int) * (state->desc->nkeys + 1));

			*r = *request;
			memcpy(keys, layout->key_columns, sizeof(int) * state->desc->nkeys);
			keys[state->desc->nkeys] = layout->distinct_sets[d].column;
			r->nkeys = state->desc->nkeys + 1;
			r->key_columns = keys;
			r->naggs = 0;
			r->aggs = NULL;
			r->fail_at_batch = 0;	/* only the main aggregation injects */
			r->estimated_groups = Min(r->estimated_groups * 16, (int64) 1000000000);
		}
	}
}
