/*-------------------------------------------------------------------------
 *
 * gpu/batch.cu
 *	  Running the GPU aggregation's batches: the group table's device
 *	  arrays, the events that time each phase, the kernels of the plan
 *	  gpu/strategy.cu chose (after the derived columns' kernel), the first
 *	  batch's probe, overflow growth and redo, and perfect's final gather.
 *
 * Overflow (the Rapids report: detect a full table, grow, relaunch).  When
 * the dense group arrays are full the kernels raise a flag and accumulate
 * nothing more; the host sees the flag when it waits for the batch, grows
 * the arrays to at least twice the capacity and twice the groups seen,
 * copies keys and accumulators over, rebuilds the slots from the dense keys
 * and runs the batch's kernels again: all of them, or only the escapes'
 * when the one-pass kernel had already merged (perfect never overflows; the
 * fused kernel merges only when nothing overflowed), or for partitioned all
 * but the partitioning (its permutation, packed keys and value copies do
 * not depend on the table).  A wrong estimate of the number of groups
 * therefore costs time, never a wrong answer.
 *
 * Only one batch is on the device at a time (gpu/hashagg.cu waits for it
 * before the next one's input overwrites the buffer), so its input is still
 * there when it has to be redone.
 *
 * String keys overflow also when the heap of their bytes is full
 * (heap_overflow): the heap grows (gpu/strings.cu), then the table grows
 * when its ids ran out, or is rebuilt at the same capacity from the stored
 * hashes to clear the poisoned slots, and the batch is redone.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <stdlib.h>
#include <string.h>

/* Rows per partition aimed at (log2): a few chunks each. */
#define GPU_PARTITION_ROWS_LOG2 13

/* Kernel parameters (CUDA 12.1+ takes up to 32764 bytes). */
static_assert(sizeof(GaDevKeys) + sizeof(GaDevPerfect) + sizeof(GaDevAggs) + 64 <= 32764,
			  "direct kernel parameters exceed 32 KB");
static_assert(sizeof(GaDevKeys) + sizeof(GaDevPack) + sizeof(GaDevTable) +
			  sizeof(GaDevAggs) + 64 <= 32764, "fused kernel parameters exceed 32 KB");

/* ------------------------------------------------------------------------
 * The group table
 * ------------------------------------------------------------------------
 */

/* Free a table's device arrays and mark it empty. */
void
ga_gpu_agg_table_free(GpuAgg *agg, GpuTable *table)
{
	device_free(&table->slots);
	device_free(&table->keys);
	device_free(&table->hashes);
	device_free(&table->lens);
	for (int a = 0; a < agg->naggs; a++)
		device_free(&table->acc[a]);
	table->capacity = 0;
}

/*
 * Allocate a table of `capacity` groups: slots (2 * capacity), dense keys
 * (with string keys their hashes and lengths too) and accumulators.
 * Nothing is initialised here.  Frees what it got on failure.
 */
int
ga_gpu_agg_table_alloc(GpuAgg *agg, int64_t capacity, GpuTable *table, GaStatus *status)
{
	memset(table, 0, sizeof(*table));
	table->capacity = capacity;
	if (agg->nkeys > 0)
	{
		if (!device_alloc((void **) &table->slots, (size_t) (2 * capacity) * sizeof(int32_t),
						  "the group table's slots", status) ||
			!device_alloc((void **) &table->keys,
						  (size_t) (agg->nkeys + 1) * (size_t) capacity * sizeof(long long),
						  "the group keys", status) ||
			(agg->nstrings > 0 &&
			 (!device_alloc((void **) &table->hashes,
							(size_t) capacity * sizeof(unsigned long long),
							"the group keys' hashes", status) ||
			  !device_alloc((void **) &table->lens,
							(size_t) agg->nstrings * (size_t) capacity * sizeof(uint32_t),
							"the string keys' lengths", status))))
		{
			ga_gpu_agg_table_free(agg, table);
			return 0;
		}
	}
	for (int a = 0; a < agg->naggs; a++)
	{
		if (!device_alloc(&table->acc[a], (size_t) capacity * agg->acc_width[a],
						  "the aggregate accumulators", status))
		{
			ga_gpu_agg_table_free(agg, table);
			return 0;
		}
	}
	return 1;
}

/* log2 of a power of two. */
static int
log2_exact(int64_t pow2)
{
	int			bits = 0;

	while ((INT64_C(1) << bits) < pow2)
		bits++;
	return bits;
}

/* The kernels' view of a table. */
static GaDevTable
dev_table(const GpuAgg *agg, const GpuTable *table)
{
	GaDevTable	t;

	memset(&t, 0, sizeof(t));
	t.slots = table->slots;
	t.slot_mask = 2 * table->capacity - 1;
	t.slot_shift = 64 - log2_exact(2 * table->capacity);
	t.keys = table->keys;
	t.capacity = table->capacity;
	t.nkeys = agg->nkeys;
	t.control = agg->dev_control;
	return t;
}

/* Point the in-flight aggregates' accumulators at a table's arrays. */
static void
set_acc_pointers(GpuAgg *agg, GaDevAggs *aggs, const GpuTable *table)
{
	for (int a = 0; a < agg->naggs; a++)
		aggs->aggs[a].acc = table->acc[a];
}

/*
 * Initialise a fresh table on the stream: slots EMPTY, accumulators of
 * groups [begin, capacity) at their identities.
 */
int
ga_gpu_agg_table_init_async(GpuAgg *agg, const GpuTable *table, int64_t begin, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	GaDevAggs  *aggs = &agg->inflight_aggs;

	if (table->slots != NULL)
		GPU_TRY(cudaMemsetAsync(table->slots, 0xff,
								(size_t) (2 * table->capacity) * sizeof(int32_t), stream),
				"clearing the group table");
	set_acc_pointers(agg, aggs, table);
	GPU_TRY(ga_launch_init_accumulators(aggs, begin, table->capacity,
										agg->device->info.multiprocessors, stream),
			"initialising the accumulators");
	return 1;
}

/* ------------------------------------------------------------------------
 * Timing
 * ------------------------------------------------------------------------
 */

/* Start a run of marks on the stream (marks[0]). */
static int
marks_start(GpuAgg *agg, GaStatus *status)
{
	agg->nmarks = 0;
	GPU_TRY(cudaEventRecord(agg->marks[0], agg->stream), "recording an event");
	agg->nmarks = 1;
	return 1;
}

/* Mark the end of a phase on the stream. */
static int
mark(GpuAgg *agg, GaPhase phase, GaStatus *status)
{
	int			m = agg->nmarks < GPU_MAX_MARKS ? agg->nmarks : GPU_MAX_MARKS - 1;

	GPU_TRY(cudaEventRecord(agg->marks[m], agg->stream), "recording an event");
	agg->mark_phase[m] = phase;
	agg->nmarks = m + 1;
	return 1;
}

/* The last mark recorded: waiting for it waits for the whole run. */
static cudaEvent_t
last_mark(const GpuAgg *agg)
{
	return agg->marks[agg->nmarks > 0 ? agg->nmarks - 1 : 0];
}

/*
 * After the last mark completed: add the run's phases to the statistics.
 * Returns the milliseconds of its partitioning, ids and accumulation
 * phases: a batch's tuned kernels, without the derived columns and the
 * perfect entries' initialisation (the launch tuner's sample).
 */
static double
collect_marks(GpuAgg *agg)
{
	double		tuned_ms = 0;

	for (int m = 1; m < agg->nmarks; m++)
	{
		double		ms = 0;

		add_elapsed(&ms, agg->marks[m - 1], agg->marks[m]);
		agg->stats.phase_ms[agg->mark_phase[m]] += ms;
		agg->stats.device_ms += ms;
		if (agg->mark_phase[m] == GA_PHASE_PARTITION ||
			agg->mark_phase[m] == GA_PHASE_GROUP_IDS ||
			agg->mark_phase[m] == GA_PHASE_AGGREGATE)
			tuned_ms += ms;
	}
	agg->nmarks = 0;
	return tuned_ms;
}

/* Wait for the last mark and collect the run's times. */
static int
wait_marks(GpuAgg *agg, GaWaitCallback wait, void *arg, const char *what, GaStatus *status)
{
	if (agg->nmarks == 0)
		return 1;
	if (!wait_event(last_mark(agg), wait, arg, what, status))
		return 0;
	collect_marks(agg);
	return 1;
}

/* ------------------------------------------------------------------------
 * Running a batch
 * ------------------------------------------------------------------------
 */

/* Chunks a batch of batch_rows rows may have at most. */
static int64_t
max_chunks(const GpuAgg *agg)
{
	return (agg->batch_rows + GA_CHUNK_ROWS - 1) / GA_CHUNK_ROWS +
		(INT64_C(1) << GA_PART_MAX_BITS);
}

/* Allocate the row list (escapes, permutation) and the partitions' arrays. */
static int
ensure_plan_buffers(GpuAgg *agg, GpuPlan plan, GaStatus *status)
{
	const size_t counters = (size_t) 4 * ((INT64_C(1) << GA_PART_MAX_BITS) + 1);

	if ((ga_gpu_plan_has_escapes(agg, plan) || plan == PLAN_PARTITIONED) && agg->dev_rows == NULL &&
		!device_alloc((void **) &agg->dev_rows, (size_t) agg->batch_rows * sizeof(int32_t),
					  "the row lists", status))
		return 0;
	if (plan == PLAN_PARTITIONED && agg->dev_part_counters == NULL &&
		(!device_alloc((void **) &agg->dev_part_counters, counters * sizeof(unsigned int),
					   "the partition counters", status) ||
		 !device_alloc((void **) &agg->dev_block_counts,
					   (size_t) GA_PART_MAX_BLOCKS * sizeof(unsigned int) << GA_PART_MAX_BITS,
					   "the partition counters", status) ||
		 !device_alloc((void **) &agg->dev_chunk_groups,
					   (size_t) agg->batch_rows * sizeof(int32_t), "the chunk entries", status) ||
		 !device_alloc((void **) &agg->dev_chunk_distinct,
					   (size_t) max_chunks(agg) * sizeof(int32_t), "the chunk entries", status)))
		return 0;
	if (plan == PLAN_PARTITIONED && agg->inflight_packed && agg->dev_packed_keys == NULL &&
		!device_alloc((void **) &agg->dev_packed_keys,
					  (size_t) agg->batch_rows * sizeof(unsigned long long),
					  "the partitioned keys", status))
		return 0;
	return 1;
}

/*
 * Have the scatter copy the aggregates' input columns into partition order
 * (parts->value_*), and point a copy of the batch's aggregates at those
 * copies: when every column an aggregate reads (COMOMENTS' second one
 * included) has no nulls in this batch, and there are at most
 * GA_PART_MAX_VALUES of them.  Returns 1 when done; 0 (parts untouched)
 * when the chunks must gather the inputs through the permutation; -1 when
 * a copy could not be allocated (status says why).
 */
static int
permute_inputs(GpuAgg *agg, GaDevPartitions *parts, GaDevAggs *aggs, GaStatus *status)
{
	GaDevPartitions p = *parts;
	GaDevAggs	permuted = agg->inflight_aggs;
	int			used[GA_GPU_MAX_AGGS] = {0};

	p.nvalues = 0;
	for (int a = 0; a < permuted.naggs; a++)
	{
		used[a] = 1;
		if (permuted.aggs[a].op == GA_AGG_COMOMENTS)
			used[permuted.aggs[a].partner] = 1;
	}
	for (int a = 0; a < GA_GPU_MAX_AGGS; a++)
	{
		GaDevColumn *input = &permuted.aggs[a].input;
		int			v;

		if (!used[a] || (a < permuted.naggs && permuted.aggs[a].op == GA_AGG_COUNT_ROWS) ||
			input->values == NULL)
			continue;
		if (input->validity != NULL || ga_type_width((GaValueType) input->type) == 0)
			return 0;
		for (v = 0; v < p.nvalues; v++)
			if (p.value_src[v] == input->values)
				break;
		if (v == p.nvalues)
		{
			if (v == GA_PART_MAX_VALUES)
				return 0;
			if (agg->dev_part_values[v] == NULL &&
				!device_alloc(&agg->dev_part_values[v],
							  (size_t) agg->batch_rows * sizeof(long long),
							  "the partitioned values", status))
				return -1;
			p.value_src[v] = input->values;
			p.value_dst[v] = agg->dev_part_values[v];
			p.value_width[v] = ga_type_width((GaValueType) input->type);
			p.nvalues++;
		}
		input->values = p.value_dst[v];
	}
	*parts = p;
	*aggs = permuted;
	return 1;
}

/*
 * The partitions of a batch of nrows rows: about 2^GPU_PARTITION_ROWS_LOG2
 * rows each (at least 2, at most 2^GA_PART_MAX_BITS partitions), made by
 * four blocks per multiprocessor.
 */
static GaDevPartitions
dev_partitions(const GpuAgg *agg, int64_t nrows)
{
	const size_t stride = ((size_t) 1 << GA_PART_MAX_BITS) + 1;
	int64_t		blocks = 4 * (int64_t) agg->device->info.multiprocessors;
	int64_t		min_rows = 8 * GA_PART_THREADS;
	int			pbits = log2_exact(nrows > 1 ? nrows : 2) - GPU_PARTITION_ROWS_LOG2;
	GaDevPartitions parts;

	memset(&parts, 0, sizeof(parts));
	if (blocks > GA_PART_MAX_BLOCKS)
		blocks = GA_PART_MAX_BLOCKS;
	if (blocks > (nrows + min_rows - 1) / min_rows)
		blocks = (nrows + min_rows - 1) / min_rows;
	if (blocks < 1)
		blocks = 1;
	pbits += agg->inflight_launch.part_shift;
	parts.pbits = pbits < 1 ? 1 : pbits > GA_PART_MAX_BITS ? GA_PART_MAX_BITS : pbits;
	parts.blocks = (int32_t) blocks;
	parts.rows_per_block = (nrows + blocks - 1) / blocks;
	parts.hist = agg->dev_part_counters;
	parts.begin = agg->dev_part_counters + stride;
	parts.cursor = agg->dev_part_counters + 2 * stride;
	parts.chunk_first = agg->dev_part_counters + 3 * stride;
	parts.block_counts = agg->dev_block_counts;
	parts.perm = agg->dev_rows;
	parts.packed = agg->inflight_packed ? agg->dev_packed_keys : NULL;
	parts.local_ids = agg->dev_group_ids;
	parts.chunk_groups = agg->dev_chunk_groups;
	parts.chunk_distinct = agg->dev_chunk_distinct;
	parts.max_chunks = max_chunks(agg);
	return parts;
}

/*
 * Whether the batch in flight is already partitioned as `parts` (of nrows
 * rows) asks, so that a redo after growth can skip the partitioning: its
 * outputs (permutation, partition bounds, packed keys, value copies) depend
 * only on the batch's input, not on the group table.  partitions_ready is
 * cleared for every new batch (new input, derived columns to compute) and
 * set once the partitioning is enqueued; the buffers and shape it used must
 * also be the ones `parts` names (none is reallocated by growth, but a
 * mismatch would leave the kernels reading what was never written).
 */
static int
partitions_reusable(const GpuAgg *agg, const GaDevPartitions *parts, int64_t nrows)
{
	const GaDevPartitions *made = &agg->partitioned_as;

	if (!agg->partitions_ready || agg->partitioned_rows != nrows ||
		made->pbits != parts->pbits || made->blocks != parts->blocks ||
		made->rows_per_block != parts->rows_per_block || made->hist != parts->hist ||
		made->begin != parts->begin || made->chunk_first != parts->chunk_first ||
		made->perm != parts->perm || made->packed != parts->packed ||
		made->nvalues != parts->nvalues)
		return 0;
	for (int v = 0; v < parts->nvalues; v++)
		if (made->value_src[v] != parts->value_src[v] ||
			made->value_dst[v] != parts->value_dst[v] ||
			made->value_width[v] != parts->value_width[v])
			return 0;
	return 1;
}

/*
 * Enqueue phase 1 (group ids) for the batch's positions: its rows, or the
 * row list dev_rows of *count rows when count is given (all nrows rows of
 * it otherwise), and mark it; nothing for a plain aggregate.
 */
static int
enqueue_group_ids(GpuAgg *agg, const GaDevTable *table, const int32_t *rows,
				  const unsigned long long *count, GaStatus *status)
{
	if (agg->nkeys == 0)
		return 1;
	if (agg->nstrings > 0)
	{
		GaDevStrings strings = ga_gpu_strings_view(agg, &agg->table);

		GPU_TRY(ga_launch_string_group_ids(&agg->inflight_keys, &strings, table,
										   agg->inflight_rows, rows, count,
										   agg->dev_group_ids,
										   agg->device->info.multiprocessors, agg->stream),
				"launching the string group id kernel");
		return mark(agg, GA_PHASE_GROUP_IDS, status);
	}
	GPU_TRY(ga_launch_assign_group_ids(&agg->inflight_keys, table, agg->inflight_rows, rows,
									   count, agg->dev_group_ids,
									   agg->device->info.multiprocessors, &agg->inflight_launch,
									   agg->stream),
			"launching the group id kernel");
	return mark(agg, GA_PHASE_GROUP_IDS, status);
}

/*
 * Enqueue the kernels of the batch on the device: its derived columns'
 * (once per rows), then its plan's (or only the escaped rows' two phases),
 * then the copy of the control block to pinned memory; marks split the
 * time into phases, the last one ends the batch.
 */
static int
enqueue_batch(GpuAgg *agg, int escapes_only, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	const int	sms = agg->device->info.multiprocessors;
	const int64_t nrows = agg->inflight_rows;
	GaDevTable	table = dev_table(agg, &agg->table);
	int32_t    *ids = agg->nkeys > 0 ? agg->dev_group_ids : NULL;
	const GaDevKeys *keys = &agg->inflight_keys;
	GaDevAggs  *aggs = &agg->inflight_aggs;
	GaDevControl *control = agg->dev_control;
	const GaLaunchParams *launch = &agg->inflight_launch;
	const int	cache_bits = ga_gpu_plan_cache_bits(agg);

	set_acc_pointers(agg, aggs, &agg->table);
	if (!marks_start(agg, status))
		return 0;
	if (agg->derived_pending)
	{
		GPU_TRY(ga_launch_compute_derived(agg->dev_programs, agg->nprograms, nrows, sms, stream),
				"launching the derived column kernel");
		agg->derived_pending = 0;	/* a redo after growth finds them there */
		agg->partitions_ready = 0;	/* partitioned on other key values */
		if (!mark(agg, GA_PHASE_DERIVED, status))
			return 0;
	}
	if (agg->perfect_needs_init)
	{
		GPU_TRY(cudaMemsetAsync(agg->dev_perfect.seen, 0,
								4 * (size_t) ((agg->dev_perfect.entries + 31) / 32), stream),
				"clearing the perfect bitmap");
		GPU_TRY(ga_launch_init_perfect(&agg->dev_perfect, aggs, sms, stream),
				"launching the perfect initialisation kernel");
		agg->perfect_needs_init = 0;
		if (!mark(agg, GA_PHASE_PROBE, status))
			return 0;
	}

	if (!escapes_only)
	{
		if (ga_gpu_plan_has_escapes(agg, agg->inflight_plan))
			GPU_TRY(ga_launch_reset_batch(control, stream), "launching the batch reset kernel");
		switch (agg->inflight_plan)
		{
			case PLAN_DIRECT_SHARED:
				{
					GaDevPerfect plain;
					const GaDevPerfect *perfect = &agg->dev_perfect;

					if (agg->nkeys == 0)
					{
						memset(&plain, 0, sizeof(plain));
						plain.entries = 1;
						perfect = &plain;
					}
					GPU_TRY(ga_launch_direct_shared(keys, perfect, aggs, nrows, control,
													agg->dev_rows,
													ga_gpu_plan_replicas_capped(agg, agg->nkeys > 0 ?
																				agg->perfect_replicas :
																				ga_gpu_plan_replicas(agg, 1, 1, 0, agg->direct_budget)),
													sms, launch, stream),
							"launching the direct shared-memory kernel");
				}
				break;
			case PLAN_DIRECT_GLOBAL:
				GPU_TRY(ga_launch_direct_global(keys, &agg->dev_perfect, aggs, nrows, control,
												agg->dev_rows,
												cache_bits > 0 ? cache_bits : 1,
												sms, launch, stream),
						"launching the direct global kernel");
				break;
			case PLAN_FUSED:
				{
					cudaError_t err = ga_launch_fused_shared(keys, &agg->inflight_pack, &table,
															 aggs, nrows, control, agg->dev_rows,
															 agg->inflight_nslots,
															 ga_gpu_plan_replicas_capped(agg, agg->inflight_replicas),
															 sms, launch, stream);

					if (err == cudaErrorNotSupported)
					{
						/* cannot be cooperative here: two phases from now on */
						agg->fused_failed = 1;
						agg->inflight_plan = ga_gpu_plan_shared(agg, agg->inflight_nslots *
														 GA_FUSED_LOAD_PERCENT / 200, 0);
						return enqueue_batch(agg, 0, status);
					}
					GPU_TRY(err, "launching the fused shared-memory kernel");
				}
				break;
			case PLAN_SHARED:
				if (!enqueue_group_ids(agg, &table, NULL, NULL, status))
					return 0;
				GPU_TRY(ga_launch_accumulate_shared(aggs, ids, nrows, control,
													agg->inflight_groups_alloc,
													ga_gpu_plan_replicas_capped(agg, agg->inflight_replicas),
													sms, launch, stream),
						"launching the shared-memory aggregation kernel");
				break;
			case PLAN_GLOBAL:
				if (!enqueue_group_ids(agg, &table, NULL, NULL, status))
					return 0;
				GPU_TRY(ga_launch_accumulate_cached(aggs, ids, nrows, NULL, NULL, control,
													cache_bits, sms, launch, stream),
						"launching the global aggregation kernel");
				break;
			case PLAN_PARTITIONED:
				{
					GaDevPartitions parts = dev_partitions(agg, nrows);
					GaDevAggs	permuted;
					int			in_order = 0;

					if (agg->inflight_packed)
					{
						in_order = permute_inputs(agg, &parts, &permuted, status);
						if (in_order < 0)
							return 0;
					}
					/* a redo after growth reuses the batch's partitioning */
					if (!partitions_reusable(agg, &parts, nrows))
					{
						agg->partitions_ready = 0;
						GPU_TRY(ga_launch_partition(keys, &agg->inflight_pack, nrows, &parts,
													stream),
								"launching the partitioning kernels");
						agg->partitioned_as = parts;
						agg->partitioned_rows = nrows;
						agg->partitions_ready = 1;
						if (!mark(agg, GA_PHASE_PARTITION, status))
							return 0;
					}
					if (agg->inflight_packed)
					{
						GPU_TRY(ga_launch_chunk_group_ids(keys, &agg->inflight_pack, &table,
														  &parts, sms, launch, stream),
								"launching the chunk group id kernel");
						if (!mark(agg, GA_PHASE_GROUP_IDS, status))
							return 0;
						GPU_TRY(ga_launch_chunk_accumulate(in_order ? &permuted : aggs, &parts,
														   in_order, control, sms, launch, stream),
								"launching the chunk aggregation kernel");
						break;
					}
					if (!enqueue_group_ids(agg, &table, agg->dev_rows, NULL, status))
						return 0;
					GPU_TRY(ga_launch_accumulate_cached(aggs, ids, nrows, agg->dev_rows, NULL,
														control, cache_bits, sms, launch, stream),
							"launching the global aggregation kernel");
				}
				break;
		}
		if (!mark(agg, GA_PHASE_AGGREGATE, status))
			return 0;
	}

	if (ga_gpu_plan_has_escapes(agg, agg->inflight_plan))
	{
		/* the escaped rows, in two phases through the global table */
		if (!enqueue_group_ids(agg, &table, agg->dev_rows, &control->escapes, status))
			return 0;
		GPU_TRY(ga_launch_accumulate_cached(aggs, ids, nrows, agg->dev_rows, &control->escapes,
											control, cache_bits, sms, launch, stream),
				"launching the global aggregation kernel for escaped rows");
	}
	GPU_TRY(cudaMemcpyAsync(agg->host_control, control, sizeof(GaDevControl),
							cudaMemcpyDeviceToHost, stream),
			"copying the group count from the GPU");
	return mark(agg, GA_PHASE_AGGREGATE, status);
}

/*
 * Grow the group table: a new table of at least twice the capacity and
 * twice `seen` (with grow 0, of the same capacity: a table whose slots a
 * full heap poisoned), the old keys and accumulators (and string keys'
 * hashes and lengths) copied into it, the rest initialised, the slots
 * rebuilt from the dense keys, or the stored hashes, of the `valid` groups
 * (every id below it has its key written), and the counter set to valid
 * (and the heap's to heap_used).  Waits for the growth so that the old
 * table can be freed.
 */
static int
grow_table(GpuAgg *agg, unsigned long long seen, int64_t valid, int64_t heap_used, int grow,
		   GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	int			sms = agg->device->info.multiprocessors;
	int64_t		old_capacity = agg->table.capacity;
	int64_t		want;
	GpuTable	grown;
	GaDevTable	table;

	if (grow && old_capacity >= GA_GPU_MAX_CAPACITY)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "more than %lld groups do not fit the GPU group table",
							 (long long) GA_GPU_MAX_CAPACITY);
	if (seen > (unsigned long long) GA_GPU_MAX_CAPACITY)
		seen = GA_GPU_MAX_CAPACITY;
	want = 2 * (int64_t) seen > 2 * old_capacity ? 2 * (int64_t) seen : 2 * old_capacity;
	want = next_pow2(want);
	if (want > GA_GPU_MAX_CAPACITY)
		want = GA_GPU_MAX_CAPACITY;
	if (!grow)
		want = old_capacity;

	if (!ga_gpu_agg_table_alloc(agg, want, &grown, status))
		return 0;
	/* From here the new table belongs to agg, so destroy frees it whatever happens. */
	agg->retired = agg->table;
	agg->table = grown;

	if (!marks_start(agg, status))
		return 0;
	for (int w = 0; w <= agg->nkeys; w++)
		GPU_TRY(cudaMemcpyAsync(grown.keys + (size_t) w * want,
								agg->retired.keys + (size_t) w * old_capacity,
								(size_t) old_capacity * sizeof(long long),
								cudaMemcpyDeviceToDevice, stream),
				"copying the group keys into the grown table");
	for (int a = 0; a < agg->naggs; a++)
		GPU_TRY(cudaMemcpyAsync(grown.acc[a], agg->retired.acc[a],
								(size_t) old_capacity * agg->acc_width[a],
								cudaMemcpyDeviceToDevice, stream),
				"copying the accumulators into the grown table");
	if (agg->nstrings > 0)
	{
		GPU_TRY(cudaMemcpyAsync(grown.hashes, agg->retired.hashes,
								(size_t) old_capacity * sizeof(unsigned long long),
								cudaMemcpyDeviceToDevice, stream),
				"copying the group keys' hashes into the grown table");
		for (int s = 0; s < agg->nstrings; s++)
			GPU_TRY(cudaMemcpyAsync(grown.lens + (size_t) s * want,
									agg->retired.lens + (size_t) s * old_capacity,
									(size_t) old_capacity * sizeof(uint32_t),
									cudaMemcpyDeviceToDevice, stream),
					"copying the string keys' lengths into the grown table");
	}
	if (!ga_gpu_agg_table_init_async(agg, &grown, old_capacity, status))
		return 0;
	table = dev_table(agg, &grown);
	if (agg->nstrings > 0)
	{
		GaDevStrings strings = ga_gpu_strings_view(agg, &grown);

		GPU_TRY(ga_launch_string_reset_control(agg->dev_control, valid, heap_used, stream),
				"launching the control reset kernel");
		GPU_TRY(ga_launch_string_rebuild_slots(&strings, &table, valid, sms, stream),
				"launching the table rebuild kernel");
	}
	else
	{
		GPU_TRY(ga_launch_reset_control(agg->dev_control, valid, stream),
				"launching the control reset kernel");
		GPU_TRY(ga_launch_rebuild_slots(&table, valid, sms, stream),
				"launching the table rebuild kernel");
	}
	if (!mark(agg, GA_PHASE_GROW, status) ||
		!wait_marks(agg, wait, arg, "growing the GPU group table", status))
		return 0;

	ga_gpu_agg_table_free(agg, &agg->retired);
	agg->known_groups = valid;
	agg->stats.table_growths++;
	return 1;
}

/*
 * A batch with string keys overflowed (gpu/kernels/hashagg_strings.cu):
 * grow the heap when it was full, keeping the bytes of the reservations
 * that fitted (they end at or before its capacity), then grow the table
 * when its ids ran out, or else rebuild it at the same capacity to clear
 * the slots the full heap poisoned.  Every id handed out below the
 * capacity has its key and bytes written.
 */
static int
grow_strings(GpuAgg *agg, const GaDevControl *control, GaWaitCallback wait, void *arg,
			 GaStatus *status)
{
	const int64_t capacity = agg->table.capacity;
	const int	grow = control->ngroups >= (unsigned long long) capacity;
	/* reservations are multiples of 8 and so is the heap's capacity */
	const int64_t heap_used = control->heap_used < (unsigned long long) agg->heap_capacity ?
		(int64_t) control->heap_used : agg->heap_capacity;

	if (control->heap_overflow &&
		!ga_gpu_strings_grow_heap(agg, control->heap_used, heap_used, wait, arg, status))
		return 0;
	return grow_table(agg, control->ngroups, grow ? capacity : (int64_t) control->ngroups,
					  heap_used, grow, wait, arg, status);
}

/*
 * Wait for the batch on the device, if any, and settle it: on overflow
 * grow the table and run the batch's kernels again (its input is still on
 * the device) until it fits; then record its groups, timing and strategy.
 */
int
ga_gpu_agg_settle(GpuAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	while (agg->inflight)
	{
		GaDevControl control;
		int			escapes_only;
		double		tuned_ms;

		if (!wait_event(last_mark(agg), wait, arg, "waiting for the GPU to aggregate a batch",
						status))
			return 0;
		if (!ga_gpu_pages_check(agg, status))
			return 0;		/* its pages were deformed before its kernels ran */
		if (agg->inflight_copy_timed)
			add_elapsed(&agg->stats.transfer_ms, agg->ev_copy_start, agg->ev_copy_end);
		agg->inflight_copy_timed = 0;
		if (agg->inflight_gather_timed)
			add_elapsed(&agg->stats.device_ms, agg->ev_gather_start, agg->ev_gather_end);
		agg->inflight_gather_timed = 0;
		tuned_ms = collect_marks(agg);

		memcpy(&control, agg->host_control, sizeof(control));
		if (!control.overflow)
		{
			GaStrategy	strategy = ga_gpu_plan_strategy(agg, agg->inflight_plan);

			if (agg->inflight_plan == PLAN_SHARED &&
				control.shared_fallbacks != agg->fallbacks_seen)
				strategy = GA_STRATEGY_GLOBAL;
			agg->fallbacks_seen = control.shared_fallbacks;
			agg->stats.batches_by_strategy[strategy]++;
			agg->known_groups = agg->nkeys > 0 ? (int64_t) control.ngroups : 1;
			agg->inflight = 0;
			if (!agg->inflight_redone)
				ga_tune_report(agg->tuner, &agg->inflight_ticket, tuned_ms,
							   agg->inflight_rows);
			return 1;
		}
		/* perfect never redoes its own kernel; fused not once it merged */
		escapes_only = agg->inflight_plan == PLAN_DIRECT_SHARED ||
			agg->inflight_plan == PLAN_DIRECT_GLOBAL ||
			(agg->inflight_plan == PLAN_FUSED && control.merged);
		agg->stats.retries++;
		agg->inflight_redone = 1;
		if (agg->nstrings > 0 ? !grow_strings(agg, &control, wait, arg, status) :
			!grow_table(agg, control.ngroups, agg->table.capacity, 0, 1, wait, arg, status))
			return 0;
		if (!enqueue_batch(agg, escapes_only, status))
			return 0;
	}
	return 1;
}

/*
 * perfect in shared memory appends its entries to the group table at the
 * end: while the table is still empty, replace a table too small for all of
 * them by one that takes them, so that the gathering needs no count and
 * growth first.  A failed allocation keeps the old table (growth then).
 */
static int
make_room_for_perfect(GpuAgg *agg, GaStatus *status)
{
	GpuTable	fresh;
	GaStatus	ignored;

	if (!agg->perfect || !agg->perfect_in_shared || agg->known_groups != 0 ||
		agg->table.capacity >= agg->dev_perfect.entries)
		return 1;
	if (!ga_gpu_agg_table_alloc(agg, next_pow2(agg->dev_perfect.entries), &fresh, &ignored))
	{
		(void) cudaGetLastError();
		return 1;
	}
	ga_gpu_agg_table_free(agg, &agg->table);
	agg->table = fresh;
	return ga_gpu_agg_table_init_async(agg, &agg->table, 0, status);
}

/*
 * Probe the first batch (a sample: key ranges, a sketch of the groups,
 * adjacent equal keys) and wait for it; then estimate the groups and the
 * contention level, and decide about perfect.
 */
static int
probe_first_batch(GpuAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->stream;

	if (agg->dev_probe == NULL &&
		!device_alloc((void **) &agg->dev_probe, sizeof(GaDevProbe), "the probe", status))
		return 0;
	if (agg->host_probe == NULL &&
		!pinned_alloc((void **) &agg->host_probe, sizeof(GaDevProbe), "the probe", status))
		return 0;
	if (!marks_start(agg, status))
		return 0;
	GPU_TRY(ga_launch_probe(&agg->inflight_keys, agg->inflight_rows,
							agg->nkeys <= GA_PERFECT_MAX_KEYS ? agg->nkeys : 0,
							agg->dev_probe, agg->device->info.multiprocessors, stream),
			"launching the probe kernel");
	GPU_TRY(cudaMemcpyAsync(agg->host_probe, agg->dev_probe, sizeof(GaDevProbe),
							cudaMemcpyDeviceToHost, stream),
			"copying the probe from the GPU");
	if (!mark(agg, GA_PHASE_PROBE, status) ||
		!wait_marks(agg, wait, arg, "probing the first batch on the GPU", status))
		return 0;
	agg->probed = 1;
	agg->device_estimate = ga_gpu_plan_estimate_groups(agg->host_probe, agg->inflight_rows);
	agg->stats.device_estimated_groups = agg->device_estimate;
	agg->contention = ga_tune_contention(agg->host_probe->repeats, agg->host_probe->pairs,
										 agg->device_estimate);
	agg->stats.launch_contention = agg->contention;
	ga_gpu_plan_decide_perfect(agg, agg->inflight_rows);
	return make_room_for_perfect(agg, status);
}

/* Count a batch that brought no rows, under the last batch's strategy (last_strategy). */
void
ga_gpu_agg_count_empty_batch(GpuAgg *agg)
{
	agg->stats.batches++;
	agg->stats.batches_by_strategy[agg->last_strategy]++;
}

/*
 * Launch the batch whose columns are in agg->inflight_keys/aggs (counted as
 * a batch; its input rows are the caller's to count): the probe first if
 * this is the first batch of an auto or perfect aggregation, then the
 * plan's kernels.  Returns without waiting for them.
 */
int
ga_gpu_agg_start_batch(GpuAgg *agg, int64_t nrows, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuPlan		plan;

	agg->inflight_rows = nrows;
	agg->partitions_ready = 0;	/* new input: partition it afresh */
	agg->stats.batches++;
	if (!agg->probed && agg->nkeys > 0 && agg->nstrings == 0 && agg->rows_ok &&
		(agg->request.strategy == GA_STRATEGY_AUTO ||
		 agg->request.strategy == GA_STRATEGY_PERFECT) &&
		!probe_first_batch(agg, wait, arg, status))
		return 0;
	plan = ga_gpu_plan_choose(agg);
	agg->inflight_plan = plan;
	ga_gpu_plan_launch(agg);
	if (!ensure_plan_buffers(agg, plan, status))
		return 0;
	agg->inflight = 1;
	if (!enqueue_batch(agg, 0, status))
		return 0;
	agg->last_strategy = ga_gpu_plan_strategy(agg, agg->inflight_plan);	/* after a fused fallback */
	agg->batches_launched++;
	return 1;
}

/*
 * perfect, at the end: append the entries seen to the group arrays (grown
 * if needed), after the groups of the escaped rows.
 */
int
ga_gpu_agg_gather_perfect(GpuAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	const int	sms = agg->device->info.multiprocessors;
	GaDevControl *control = agg->dev_control;
	GaDevAggs	aggs = agg->inflight_aggs;
	GaDevTable	table;
	int64_t		found;

	if (!agg->perfect || agg->perfect_gathered)
		return 1;
	/*
	 * Count the entries seen first, and grow the table for them, only when
	 * the table could not take every entry: otherwise gather at once and
	 * learn the count from the gather (one round trip instead of two).
	 */
	if (agg->known_groups + agg->dev_perfect.entries > agg->table.capacity)
	{
		if (!marks_start(agg, status))
			return 0;
		GPU_TRY(cudaMemsetAsync(&control->counter, 0, sizeof(control->counter), stream),
				"clearing a counter");
		GPU_TRY(ga_launch_count_perfect(&agg->dev_perfect, &control->counter, sms, stream),
				"launching the perfect count kernel");
		GPU_TRY(cudaMemcpyAsync(agg->host_control, control, sizeof(GaDevControl),
								cudaMemcpyDeviceToHost, stream),
				"copying the group count from the GPU");
		if (!mark(agg, GA_PHASE_FINISH, status) ||
			!wait_marks(agg, wait, arg, "counting the groups on the GPU", status))
			return 0;
		found = (int64_t) agg->host_control->counter;
		if (agg->known_groups + found > GA_GPU_MAX_CAPACITY)
			return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
								 "more than %lld groups do not fit the GPU group table",
								 (long long) GA_GPU_MAX_CAPACITY);
		if (agg->known_groups + found > agg->table.capacity &&
			!grow_table(agg, (unsigned long long) (agg->known_groups + found),
						agg->known_groups, 0, 1, wait, arg, status))
			return 0;
	}

	table = dev_table(agg, &agg->table);
	set_acc_pointers(agg, &aggs, &agg->table);
	if (!marks_start(agg, status))
		return 0;
	GPU_TRY(cudaMemsetAsync(&control->counter, 0, sizeof(control->counter), stream),
			"clearing a counter");
	GPU_TRY(ga_launch_gather_perfect(&agg->dev_perfect, &aggs, &table, agg->known_groups,
									 &control->counter, sms, stream),
			"launching the perfect gather kernel");
	GPU_TRY(cudaMemcpyAsync(agg->host_control, control, sizeof(GaDevControl),
							cudaMemcpyDeviceToHost, stream),
			"copying the group count from the GPU");
	if (!mark(agg, GA_PHASE_FINISH, status) ||
		!wait_marks(agg, wait, arg, "gathering the groups on the GPU", status))
		return 0;
	found = (int64_t) agg->host_control->counter;
	agg->known_groups += found;
	agg->perfect_gathered = 1;
	return 1;
}
