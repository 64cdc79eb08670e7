/*-------------------------------------------------------------------------
 *
 * gpu/aggjoin.cu
 *	  The GPU device's aggjoin (the "Aggregation fed by a hash
 *	  join" part of gpuagg_device.h): every join step's build side, and the
 *	  walk of each submitted batch through the steps, on the device.
 *	  gpu/hashagg.cu hands it the filled batches (gpu_agg_submit_joined) and
 *	  aggregates the rows it gathers with its usual kernels; cpu/aggjoin.c is
 *	  the reference.
 *
 * Build (per step).  The keyed rows go through the hash join's build
 * (gpu/hashjoin.cu, gpu/kernels/hashjoin.cu: stable radix sort of the (key, row)
 * pairs, run lengths, offsets, an open-addressing table over the distinct
 * keys; Wu et al.'s radix-sort transformation), with the key-sorted rows
 * kept on the device.  The step's build columns that the aggregation or a
 * later step's key reads are uploaded once into one device buffer per step
 * (values, and validity when the column has nulls).  When every step is
 * built, the descriptions of the columns the gather writes are uploaded.
 * All of it counts against GPU memory: a build that does not fit fails
 * with GA_ERR_OUT_OF_MEMORY, and the caller moves to the CPU device.
 *
 * Submit (per probe batch), all on the device's stream:
 *
 * 1. Copy the probe columns the aggregation or a step's key reads into a
 *	  probe buffer laid out like the batch (build columns are not sent).  A
 *	  probe column whose validity is read on the device but that has no
 *	  nulls in this batch gets its bitmap set there instead of sent.
 * 2. Step s over the rows of level s - 1 (level 0: the probe batch; level
 *	  s: the rows of step s, kept as sources, gpu/kernels/aggjoin.cuh): the
 *	  keys (step 1: the probe buffer's key column; later steps: gathered
 *	  from the level), the probe (ga_launch_join_probe: first/count per
 *	  row), the scan (ga_aggjoin_pair_ends: the rows per level row by join
 *	  type, summed), and the number of the step's rows, copied back and
 *	  waited for.  This is the count-then-write scheme of the GPU hash-join
 *	  report (Gupta and Murugavel) and of He et al. ("Relational joins on
 *	  graphics processors", section 4), which sizes the output before
 *	  writing it.  A step of several keys (join_key.h) has its key columns
 *	  where a single key would be (step 1: the probe buffer; later steps:
 *	  each gathered from the level into an array of the step's), hashes
 *	  them under the build's seed into its keys
 *	  (ga_launch_aggjoin_key_hash), probes the hashes, and clears the count
 *	  of every row whose key is null or differs from its first candidate's
 *	  (ga_launch_aggjoin_key_recheck, reading the step's build key columns,
 *	  which are uploaded with its payload for that) before the scan.
 * 3. The step's rows are then written a piece at a time, appended to what
 *	  their destination holds: for the last step, gathered as columns into
 *	  the aggregation's device input buffer, which is aggregated when it
 *	  holds batch_rows rows; for any other step, expanded into the step's
 *	  level, which, when it holds batch_rows rows, is taken by step s + 1
 *	  at once (depth first, one cursor per step on the host's stack) and
 *	  emptied.  At the end of the submit the partly filled levels are
 *	  taken in step order and the last rows aggregated.  So device memory
 *	  stays at a few batches per step however large the join, every piece
 *	  but a submit's last is full (max(1, ceil(rows / batch_rows)) batches
 *	  per submit, as on the CPU device), and the aggregation's input is
 *	  overwritten only after its piece is settled (overflow redone on the
 *	  same rows).
 *
 * RIGHT and FULL (any step).  They probe and scan like INNER and LEFT.
 * The build keeps a byte per payload row of that step in device memory
 * (dev_matched, cleared at build; every read payload column is uploaded
 * for all its rows, keyed or not), and the writing of the step's rows (the
 * gather for the last step, the expansion for any other) stores 1 for the
 * build row of every row it writes.  At finish, before the groups are
 * formed, ga_gpu_aggjoin_finish takes the RIGHT and FULL steps from the
 * first: it lists a step's unmarked build rows a chunk of batch_rows build
 * rows at a time (cub::DeviceSelect::Flagged into the step's dev_first,
 * its count copied back and waited for) and writes them as the step's
 * rows with every earlier side null (no level row: probe row -1, earlier
 * build rows NO_ROW, validity bits cleared): the last step's into the
 * input buffer, any other's into its level, which the steps after it take
 * as in a submit (a null key matches nothing; a later RIGHT or FULL step
 * marks what they match), the partly filled levels last.  So a later
 * step's marks are complete before its own rows are listed.  The pieces
 * are appended and aggregated like a submit's (full but the last; counted
 * in joined_rows and batches), with column_has_nulls set for every column,
 * so that the derived kernel and the aggregation kernels read the
 * validity.
 *
 * The filter (an INNER join's other conditions, gpuagg_device.h): its
 * columns are gathered into the input buffer like the aggregation's; when
 * a full buffer (or a submit's last piece) is aggregated, a kernel first
 * runs the program (row_filter.h) over its rows and flags the dropped
 * ones, cub::DeviceSelect lists the kept ones (their count copied back and
 * waited for: one round trip a piece), and every gathered column is
 * compacted through a scratch buffer as large as the input buffer and
 * copied back; a piece the filter empties is counted as a batch without a
 * launch, and joined_rows loses the dropped rows.
 *
 * A step's own filter (an outer, semi or anti join's other conditions),
 * and a SEMI step, take two passes over the level's rows
 * (aggjoin_run_checked_step): the step's pairs are counted as INNER's;
 * with a filter a kernel runs the program over the pairs (operands read
 * where the pair's level row or build row has them, as the gather reads
 * columns), flags the level rows that had one pass, and for INNER and LEFT
 * flags the pairs it drops, a chunk of batch_rows pairs at a time whose
 * kept pairs are listed (cub::DeviceSelect, the count waited for) and
 * written through the list like any step's rows; then, for LEFT, ANTI and
 * SEMI, a kernel rewrites the counts from the flags so that ANTI's scan
 * gives one row without a build row for each level row that had no pair
 * pass (LEFT, ANTI) or had one (SEMI), and those rows are written.  The
 * operands are sent like key columns (probe buffer slots, payload
 * columns).  The CPU device forms the rows in the same order.
 *
 * Derived columns are neither sent nor gathered: their operands and NaN
 * flags are gathered with the other columns the aggregation reads, and
 * gpu/hashagg.cu computes them in each piece of the input buffer before
 * aggregating it (ga_gpu_agg_launch_input).
 *
 * With one step the level is the probe batch and the pieces are written
 * straight into the aggregation's input: for the PK-FK join that is three
 * passes over the probe rows (probe, scan, gather) besides the copies and
 * the aggregation, and one 8-byte copy back per batch, as before chains.
 *
 * Nothing here prints or aborts; failures come back as a GaStatus and
 * gpu/hashagg.cu remembers them.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"
#include "kernels/aggjoin.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No slot for this column in the probe buffer. */
#define AGGJOIN_NO_SLOT SIZE_MAX

/* One join step on the device. */
typedef struct GpuAggJoinStep
{
	GaAggJoinType type;
	int			nkeys;			/* 1: key_columns[0] alone, as given; 2 ..
								 * GA_AGG_MAX_JOIN_KEYS: hashed (join_key.h) */
	int			key_columns[GA_AGG_MAX_JOIN_KEYS];
	int			build_key_columns[GA_AGG_MAX_JOIN_KEYS];	/* nkeys >= 2 */
	unsigned long long key_seed;	/* nkeys >= 2: the build's hash seed */
	int			key_gather_first;	/* after the first step: its key columns'
									 * first description in dev_columns */

	/* the build side */
	void	   *build;			/* a GpuJoin of gpu/hashjoin.cu */
	GaDevJoinTable table;
	const uint32_t *dev_sorted_rows;
	unsigned char *dev_payload; /* the step's build columns that are read */
	int64_t		payload_rows;	/* the payload's rows */
	uint8_t    *dev_matched;	/* RIGHT, FULL: a byte per payload row, 1 =
								 * matched; NULL otherwise */

	/*
	 * a step that checks its pairs (a filter of its own, or SEMI): the
	 * filter as the pair kernel reads it, per level row whether a pair
	 * passed, and (INNER, LEFT with a filter) a chunk of pairs' drop flags
	 * and the list of those kept
	 */
	int			nfilter;
	GaFilterStep filter[GA_FILTER_MAX_STEPS];
	GaDevFilter pair_filter;
	uint8_t    *dev_passed;
	uint8_t    *dev_pair_drop;
	uint32_t   *dev_pair_list;

	/*
	 * the probe of a level's rows: keys (after the first step, or hashes),
	 * the key columns gathered (several keys, after the first step),
	 * answer, scan
	 */
	unsigned long long *dev_keys;
	uint8_t    *dev_key_validity;	/* one key, after the first step */
	unsigned long long *dev_key_values[GA_AGG_MAX_JOIN_KEYS];
	uint8_t    *dev_key_values_validity[GA_AGG_MAX_JOIN_KEYS];
	uint32_t   *dev_first;
	uint32_t   *dev_count;
	unsigned long long *dev_pair_ends;

	/* the step's rows for the next step (every step but the last) */
	GaDevLevel	level;
	int64_t		level_rows;		/* rows the level holds now */
	int			expand_timed;	/* ev_expand_* hold an expansion to add */
	cudaEvent_t ev_expand_start;
	cudaEvent_t ev_expand_end;
} GpuAggJoinStep;

struct GpuAggJoin
{
	int			nsteps;
	GpuAggJoinStep steps[GA_AGG_MAX_JOIN_STEPS];
	int			nbuilt;
	uint8_t    *from_build;		/* per column: 0 probe, s a column of step s */
	uint8_t    *later_key;		/* per column: a key column of a step after
								 * the first (read through a gather) */
	uint8_t    *build_key;		/* per column: a build key column of a step
								 * of several keys (its values uploaded) */
	uint8_t    *step_operand;	/* per column: an operand of a step's own
								 * filter (values and validity on the device) */

	/* the probe buffer: per column a values and a validity slot, or none */
	size_t	   *probe_values_offset;
	size_t	   *probe_validity_offset;
	unsigned char *dev_probe;

	/* per column: its values and validity on the device (NULL: none) */
	const void **column_values;
	const uint8_t **column_validity;
	uint8_t    *payload_has_nulls;

	/* shared by the steps' probes, one at a time */
	unsigned long long *dev_inner_total;	/* the probe kernel's sum, unused */
	void	   *dev_scan_temp;
	size_t		scan_temp_bytes;
	unsigned long long *host_nrows; /* pinned: a step's rows */

	/* RIGHT or FULL steps: the listing of their unmatched build rows */
	void	   *dev_select_temp;
	size_t		select_temp_bytes;
	unsigned long long *dev_unmatched_count;
	int			unmatched_done; /* ga_gpu_aggjoin_finish ran */

	/*
	 * The gather's columns in device memory: the aggregation's
	 * (ncolumns_gathered), then the key columns of every step after the
	 * first (from its key_gather_first on).
	 */
	GaDevGatherColumn *dev_columns;
	int			ncolumns_gathered;

	/*
	 * The filter over the last step's rows (nfilter 0: none): each full
	 * input buffer's rows flagged (dev_filter_drop), the kept ones listed
	 * (dev_filter_rows, counted in dev_unmatched_count with the select's
	 * scratch) and compacted through dev_filter_scratch, as large as the
	 * input buffer.
	 */
	int			nfilter;
	GaFilterStep filter[GA_FILTER_MAX_STEPS];
	GaDevFilter input_filter;	/* as the filter kernel reads it */
	uint8_t    *dev_filter_drop;
	uint32_t   *dev_filter_rows;
	unsigned char *dev_filter_scratch;

	/* the submit in progress */
	const GaBatch *probe;
	int64_t		gathered_rows;	/* the last step's rows in the input buffer */
	int64_t		pieces;			/* pieces aggregated by this submit */
	int			copies_timed;	/* agg's ev_copy_* hold the probe copies */
	int			gather_timed;	/* agg's ev_gather_* hold a gather to add */

	cudaEvent_t ev_probe_start;
	cudaEvent_t ev_probe_end;
	cudaEvent_t ev_nrows_copied;
};

/* Whether step type `type` also emits the build rows that nothing matched. */
static inline int
aggjoin_keeps_unmatched_build(GaAggJoinType type)
{
	return type == GA_AGGJOIN_RIGHT || type == GA_AGGJOIN_FULL;
}

/*
 * Whether a step joins in two passes (aggjoin_run_checked_step): it has a
 * filter of its own, or is a SEMI join.
 */
static inline int
aggjoin_checks_pairs(const GpuAggJoinStep *step)
{
	return step->nfilter > 0 || step->type == GA_AGGJOIN_SEMI;
}

/* Whether a step that checks its pairs writes the passing ones as rows. */
static inline int
aggjoin_writes_passing_pairs(const GpuAggJoinStep *step)
{
	return step->nfilter > 0 &&
		(step->type == GA_AGGJOIN_INNER || step->type == GA_AGGJOIN_LEFT);
}

/* Whether any step writes the pairs its own filter passes (listing them). */
static inline int
aggjoin_any_filtered_step(const GpuAggJoin *aj)
{
	for (int i = 0; i < aj->nsteps; i++)
		if (aggjoin_writes_passing_pairs(&aj->steps[i]))
			return 1;
	return 0;
}

/* Whether any step of the join emits its unmatched build rows at finish. */
static inline int
aggjoin_any_keeps_unmatched(const GpuAggJoin *aj)
{
	for (int i = 0; i < aj->nsteps; i++)
		if (aggjoin_keeps_unmatched_build(aj->steps[i].type))
			return 1;
	return 0;
}

/*
 * Build rows listed per selection at finish: batch_rows (the step's
 * dev_first, which holds the list, has that many entries), within CUB's
 * int item count.
 */
static inline int
aggjoin_unmatched_chunk(const GpuAgg *agg)
{
	return agg->batch_rows < (int64_t) (1 << 30) ? (int) agg->batch_rows : 1 << 30;
}

/*
 * Lay out the probe buffer: a values slot for every probe column whose
 * values the aggregation reads and for every column a step reads (step_key:
 * its key columns, its own filter's operands), a validity slot for every
 * probe column whose validity it reads and for every column a step reads.
 * Returns its size.
 */
static size_t
aggjoin_plan_probe(GpuAgg *agg, GpuAggJoin *aj, const uint8_t *step_key)
{
	size_t		values_bytes_per_row;
	size_t		validity_bytes = align_up((size_t) (agg->batch_rows + 7) / 8);
	size_t		bytes = 0;

	for (int c = 0; c < agg->ncolumns; c++)
	{
		aj->probe_values_offset[c] = AGGJOIN_NO_SLOT;
		aj->probe_validity_offset[c] = AGGJOIN_NO_SLOT;
		if (aj->from_build[c] || agg->column_is_derived[c])
			continue;			/* not sent; derived: computed after the gather */
		values_bytes_per_row = (size_t) ga_type_width(agg->column_types[c]);
		if ((agg->needs_values[c] || step_key[c]) && values_bytes_per_row > 0)
		{
			aj->probe_values_offset[c] = bytes;
			bytes += align_up(values_bytes_per_row * (size_t) agg->batch_rows);
		}
		if (agg->needs_validity[c] || step_key[c])
		{
			aj->probe_validity_offset[c] = bytes;
			bytes += align_up(validity_bytes);
		}
	}
	return bytes;
}

/* Create n CUDA events (timing ones); 0 with status on failure. */
static int
aggjoin_create_events(cudaEvent_t *const *events, int n, GaStatus *status)
{
	for (int e = 0; e < n; e++)
		if (cudaEventCreate(events[e]) != cudaSuccess)
		{
			*events[e] = NULL;
			return ga_status_set(status, GA_ERR_DEVICE, "could not create a CUDA event");
		}
	return 1;
}

/* Destroy the CUDA events of an array that were created. */
static void
aggjoin_destroy_events(const cudaEvent_t *events, int n)
{
	for (int e = 0; e < n; e++)
		if (events[e] != NULL)
			(void) cudaEventDestroy(events[e]);
}

/*
 * Allocate step i's buffers (0-based): the probe's answer and scan, sized
 * for a full level; the gathered keys after the first step (of several
 * keys: each key column, and the hashes at every step); the flags and
 * pair list of a step that checks its pairs; the level of its rows (probe
 * rows, build rows of steps 1 .. i + 1) before the last; its events; and
 * an empty hash join for its build.
 */
static int
aggjoin_alloc_step(GpuAgg *agg, GpuAggJoin *aj, int i, GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[i];
	size_t		rows = (size_t) agg->batch_rows;
	GaJoinRequest join_request;
	cudaEvent_t *events[] = {&step->ev_expand_start, &step->ev_expand_end};

	if (!aggjoin_create_events(events, 2, status) ||
		!device_alloc((void **) &step->dev_first, rows * sizeof(uint32_t),
					  "a join step's probe answer", status) ||
		!device_alloc((void **) &step->dev_count, rows * sizeof(uint32_t),
					  "a join step's probe answer", status) ||
		!device_alloc((void **) &step->dev_pair_ends, rows * sizeof(unsigned long long),
					  "a join step's row offsets", status))
		return 0;
	if ((i > 0 || step->nkeys > 1) &&
		!device_alloc((void **) &step->dev_keys, rows * sizeof(unsigned long long),
					  "a join step's keys", status))
		return 0;
	if (i > 0 && step->nkeys == 1 &&
		!device_alloc((void **) &step->dev_key_validity, align_up((rows + 7) / 8),
					  "a join step's keys", status))
		return 0;
	for (int k = 0; i > 0 && step->nkeys > 1 && k < step->nkeys; k++)
		if (!device_alloc((void **) &step->dev_key_values[k], rows * sizeof(unsigned long long),
						  "a join step's key columns", status) ||
			!device_alloc((void **) &step->dev_key_values_validity[k], align_up((rows + 7) / 8),
						  "a join step's key columns", status))
			return 0;
	if (aggjoin_checks_pairs(step) &&
		!device_alloc((void **) &step->dev_passed, rows, "a join step's matched rows", status))
		return 0;
	if (aggjoin_writes_passing_pairs(step) &&
		(!device_alloc((void **) &step->dev_pair_drop, rows, "a join step's filter flags",
					   status) ||
		 !device_alloc((void **) &step->dev_pair_list, rows * sizeof(uint32_t),
					   "a join step's filtered pairs", status)))
		return 0;
	if (i + 1 < aj->nsteps)
	{
		if (!device_alloc((void **) &step->level.probe_rows, rows * sizeof(int64_t),
						  "a join step's rows", status))
			return 0;
		for (int t = 1; t <= i + 1; t++)
			if (!device_alloc((void **) &step->level.build_rows[t], rows * sizeof(uint32_t),
							  "a join step's rows", status))
				return 0;
	}

	/* The hash join whose build we share; its own probe batch stays tiny. */
	memset(&join_request, 0, sizeof(join_request));
	join_request.probe_batch_rows = 1;
	step->build = ga_gpu_join_create(agg->device, &join_request, status);
	return step->build != NULL;
}

/*
 * Mark the columns the join's filter reads (values and validity) as read
 * by the aggregation, so that the input buffer holds them and the gather
 * writes them.  Before the buffer is laid out.
 */
void
ga_gpu_aggjoin_mark_filter_inputs(GpuAgg *agg, const GaAggJoinSpec *join)
{
	for (int i = 0; i < join->nfilter; i++)
	{
		const GaFilterStep *step = &join->filter[i];

		if (step->op != GA_FILTER_BOOL && step->op != GA_FILTER_COMPARE)
			continue;
		agg->needs_values[step->column] = agg->needs_validity[step->column] = 1;
		if (step->op == GA_FILTER_COMPARE)
			agg->needs_values[step->column2] = agg->needs_validity[step->column2] = 1;
	}
}

/*
 * Start the aggjoin part: copy the join spec, lay out and allocate the
 * probe buffer, every step's buffers, the scan's scratch (sized for a full
 * level), the pinned row count and the events; with a filter, its flags,
 * row list and compaction scratch.
 */
int
ga_gpu_aggjoin_create(GpuAgg *agg, const GaAggRequest *request, GaStatus *status)
{
	const GaAggJoinSpec *spec = request->join;
	GpuAggJoin *aj;
	uint8_t    *step_key;
	size_t		probe_bytes;
	int			n = agg->ncolumns + 1;

	aj = (GpuAggJoin *) calloc(1, sizeof(GpuAggJoin));
	if (aj == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory starting an aggjoin on the GPU");
	agg->join = aj;
	aj->nsteps = spec->nsteps;
	aj->from_build = (uint8_t *) calloc(n, 1);
	aj->later_key = (uint8_t *) calloc(n, 1);
	aj->build_key = (uint8_t *) calloc(n, 1);
	aj->step_operand = (uint8_t *) calloc(n, 1);
	aj->payload_has_nulls = (uint8_t *) calloc(n, 1);
	aj->probe_values_offset = (size_t *) calloc(n, sizeof(size_t));
	aj->probe_validity_offset = (size_t *) calloc(n, sizeof(size_t));
	aj->column_values = (const void **) calloc(n, sizeof(void *));
	aj->column_validity = (const uint8_t **) calloc(n, sizeof(uint8_t *));
	step_key = (uint8_t *) calloc(n, 1);
	if (aj->from_build == NULL || aj->later_key == NULL || aj->build_key == NULL ||
		aj->step_operand == NULL || aj->payload_has_nulls == NULL ||
		aj->probe_values_offset == NULL || aj->probe_validity_offset == NULL ||
		aj->column_values == NULL || aj->column_validity == NULL || step_key == NULL)
	{
		free(step_key);
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory starting an aggjoin on the GPU");
	}
	if (agg->ncolumns > 0)
		memcpy(aj->from_build, spec->from_build, agg->ncolumns);
	for (int i = 0; i < aj->nsteps; i++)
	{
		const GaAggJoinStep *given = &spec->steps[i];
		GpuAggJoinStep *step = &aj->steps[i];

		step->type = given->type;
		step->nkeys = given->nkeys > 1 ? given->nkeys : 1;
		if (given->nkeys > 1)
		{
			memcpy(step->key_columns, given->key_columns, sizeof(int) * given->nkeys);
			memcpy(step->build_key_columns, given->build_key_columns,
				   sizeof(int) * given->nkeys);
		}
		else
			step->key_columns[0] = given->key_column;
		for (int k = 0; k < step->nkeys; k++)
		{
			step_key[step->key_columns[k]] = 1;
			if (i > 0)
				aj->later_key[step->key_columns[k]] = 1;
			if (step->nkeys > 1)
				aj->build_key[step->build_key_columns[k]] = 1;
		}
		step->nfilter = given->nfilter;
		memcpy(step->filter, given->filter, sizeof(GaFilterStep) * given->nfilter);
		for (int f = 0; f < step->nfilter; f++)
		{
			const GaFilterStep *fs = &step->filter[f];

			if (fs->op == GA_FILTER_BOOL || fs->op == GA_FILTER_COMPARE)
				aj->step_operand[fs->column] = step_key[fs->column] = 1;
			if (fs->op == GA_FILTER_COMPARE)
				aj->step_operand[fs->column2] = step_key[fs->column2] = 1;
		}
	}
	probe_bytes = aggjoin_plan_probe(agg, aj, step_key);
	free(step_key);

	{
		cudaEvent_t *events[] = {&aj->ev_probe_start, &aj->ev_probe_end, &aj->ev_nrows_copied};

		if (!aggjoin_create_events(events, 3, status))
			return 0;
	}
	if (!device_alloc((void **) &aj->dev_probe, probe_bytes, "the join's probe batch", status) ||
		!device_alloc((void **) &aj->dev_inner_total, sizeof(unsigned long long),
					  "the join's probe total", status))
		return 0;
	for (int i = 0; i < aj->nsteps; i++)
		if (!aggjoin_alloc_step(agg, aj, i, status))
			return 0;
	GPU_TRY(ga_aggjoin_pair_ends(NULL, &aj->scan_temp_bytes, aj->steps[0].dev_count,
								 aj->steps[0].dev_pair_ends, agg->batch_rows, GA_AGGJOIN_INNER,
								 agg->device->stream),
			"sizing the join's row scan");
	if (!device_alloc(&aj->dev_scan_temp, aj->scan_temp_bytes, "the join's row scan", status) ||
		!pinned_alloc((void **) &aj->host_nrows, sizeof(unsigned long long),
					  "the join's row count", status))
		return 0;
	aj->nfilter = spec->nfilter;
	memcpy(aj->filter, spec->filter, sizeof(GaFilterStep) * spec->nfilter);
	if (aj->nfilter > 0 &&
		(!device_alloc((void **) &aj->dev_filter_drop, (size_t) agg->batch_rows,
					   "the join filter's flags", status) ||
		 !device_alloc((void **) &aj->dev_filter_rows, (size_t) agg->batch_rows * sizeof(uint32_t),
					   "the join filter's rows", status) ||
		 !device_alloc((void **) &aj->dev_filter_scratch, agg->dev_input_bytes,
					   "the join filter's compaction", status)))
		return 0;
	if (aggjoin_any_keeps_unmatched(aj) || aj->nfilter > 0 || aggjoin_any_filtered_step(aj))
	{
		GPU_TRY(ga_aggjoin_select_unmatched(NULL, &aj->select_temp_bytes, NULL, 0, NULL, NULL,
											aggjoin_unmatched_chunk(agg), agg->device->stream),
				"sizing the listing of a right or full join's unmatched build rows");
		if (!device_alloc(&aj->dev_select_temp, aj->select_temp_bytes,
						  "the listing of a right or full join's unmatched build rows", status) ||
			!device_alloc((void **) &aj->dev_unmatched_count, sizeof(unsigned long long),
						  "the count of a right or full join's unmatched build rows", status))
			return 0;
	}
	return 1;
}

/*
 * Upload step `step`'s build columns that are read (values the aggregation
 * or a later step's key reads, and of the step's own build key columns;
 * validity where they are read and the column has nulls) into one device
 * buffer, and note where each lives.
 */
static int
aggjoin_upload_payload(GpuAgg *agg, GpuAggJoin *aj, int step, const GaBatch *payload,
					   GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAggJoinStep *st = &aj->steps[step];
	cudaStream_t stream = agg->device->stream;
	size_t		nrows = (size_t) payload->nrows;
	size_t	   *values_offset = NULL;
	size_t	   *validity_offset = NULL;
	size_t		bytes = 0;
	int64_t		bytes_sent = 0;
	int			ok = 0;

	values_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	validity_offset = (size_t *) calloc(agg->ncolumns + 1, sizeof(size_t));
	if (values_offset == NULL || validity_offset == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
					  "out of host memory uploading the build side of an aggjoin");
		goto done;
	}

	/* Lay out the payload buffer: AGGJOIN_NO_SLOT where nothing is sent. */
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];
		int			key = aj->later_key[c] || aj->step_operand[c];

		values_offset[c] = validity_offset[c] = AGGJOIN_NO_SLOT;
		if (aj->from_build[c] != step + 1)
			continue;
		aj->payload_has_nulls[c] = (uint8_t) (col->has_nulls != 0);
		if ((agg->needs_values[c] || key || aj->build_key[c]) &&
			ga_type_width(agg->column_types[c]) > 0)
		{
			values_offset[c] = bytes;
			bytes += align_up(nrows * (size_t) ga_type_width(agg->column_types[c]));
		}
		if ((agg->needs_validity[c] || key) && col->has_nulls)
		{
			validity_offset[c] = bytes;
			bytes += align_up((nrows + 7) / 8);
		}
	}
	if (!device_alloc((void **) &st->dev_payload, bytes, "a join step's build columns", status))
		goto done;

	/* Copies from pageable memory: the stream is idle after the build. */
	if (cudaEventRecord(agg->ev_copy_start, stream) != cudaSuccess)
	{
		ga_status_set(status, GA_ERR_DEVICE, "could not record a CUDA event");
		goto done;
	}
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];

		if (values_offset[c] != AGGJOIN_NO_SLOT)
		{
			size_t		vbytes = nrows * (size_t) ga_type_width(agg->column_types[c]);

			aj->column_values[c] = st->dev_payload + values_offset[c];
			if (!gpu_copy_chunked(st->dev_payload + values_offset[c], col->values, vbytes,
								  cudaMemcpyHostToDevice, stream, wait, arg,
								  "copying the join's build columns to the GPU", status))
				goto done;
			bytes_sent += (int64_t) vbytes;
		}
		if (validity_offset[c] != AGGJOIN_NO_SLOT)
		{
			aj->column_validity[c] = st->dev_payload + validity_offset[c];
			if (!gpu_copy_chunked(st->dev_payload + validity_offset[c], col->validity,
								  (nrows + 7) / 8, cudaMemcpyHostToDevice, stream, wait, arg,
								  "copying the join's build columns to the GPU", status))
				goto done;
			bytes_sent += (int64_t) ((nrows + 7) / 8);
		}
	}
	if (cudaEventRecord(agg->ev_copy_end, stream) != cudaSuccess)
	{
		ga_status_set(status, GA_ERR_DEVICE, "could not record a CUDA event");
		goto done;
	}
	/* The host arrays must outlive the copies: wait for them. */
	if (!wait_event(agg->ev_copy_end, wait, arg, "copying the join's build columns to the GPU",
					status))
		goto done;
	add_elapsed(&agg->stats.transfer_ms, agg->ev_copy_start, agg->ev_copy_end);
	agg->stats.bytes_sent += bytes_sent;
	ok = 1;

done:
	free(values_offset);
	free(validity_offset);
	return ok;
}

/*
 * Wait for everything enqueued on the stream so far, polling an event and
 * asking the wait callback.
 */
static int
aggjoin_wait_stream(GpuAggJoin *aj, cudaStream_t stream, GaWaitCallback wait, void *arg,
					GaStatus *status)
{
	GPU_TRY(cudaEventRecord(aj->ev_nrows_copied, stream), "recording an event");
	return wait_event(aj->ev_nrows_copied, wait, arg, "copying the join's columns to the GPU",
					  status);
}

/* One column the gather writes, read where column c lives. */
static GaDevGatherColumn
aggjoin_describe_column(const GpuAggJoin *aj, int c, int width)
{
	GaDevGatherColumn g;

	memset(&g, 0, sizeof(g));
	g.side = aj->from_build[c];
	g.width = width;
	if (width > 0)
		g.src_values = aj->column_values[c];
	g.src_validity = aj->column_validity[c];
	return g;
}

/*
 * A filter program as the kernels read it: each operand's type, side, and
 * values and validity where the kernel finds them: in the aggregation's
 * input buffer, where the gather wrote them (in_input: the join's filter,
 * over a piece of the last step's rows), or where its column lives (the
 * probe buffer, or its step's payload: a step's own filter, over pairs).
 */
static void
aggjoin_describe_filter(const GpuAgg *agg, const GpuAggJoin *aj, const GaFilterStep *steps,
						int nsteps, int in_input, GaDevFilter *filter)
{
	memset(filter, 0, sizeof(*filter));
	filter->nsteps = nsteps;
	for (int i = 0; i < nsteps; i++)
	{
		int			columns[2] = {steps[i].column, steps[i].column2};
		int			operands = steps[i].op == GA_FILTER_COMPARE ? 2 :
			steps[i].op == GA_FILTER_BOOL ? 1 : 0;

		filter->steps[i] = steps[i];
		for (int k = 0; k < operands; k++)
		{
			int			c = columns[k];

			filter->values[i][k] = in_input ? agg->dev_input + agg->dev_values_offset[c] :
				aj->column_values[c];
			filter->validity[i][k] = in_input ? agg->dev_input + agg->dev_validity_offset[c] :
				aj->column_validity[c];
			filter->types[i][k] = agg->column_types[c];
			filter->sides[i][k] = aj->from_build[c];
		}
	}
}

/*
 * Once every step is built: describe every column the gather writes (the
 * aggregation's columns into its input buffer, derived ones aside, then
 * the key columns of every step after the first into the step's key
 * arrays) and upload the descriptions; describe the join's filter and the
 * steps' own.
 */
static int
aggjoin_upload_columns(GpuAgg *agg, GpuAggJoin *aj, GaWaitCallback wait, void *arg,
					   GaStatus *status)
{
	cudaStream_t stream = agg->device->stream;
	GaDevGatherColumn *columns;
	int			n = 0;
	int			ok;

	/* A probe column's validity slot is read only where it has one. */
	for (int c = 0; c < agg->ncolumns; c++)
		if (!aj->from_build[c])
		{
			if (aj->probe_values_offset[c] != AGGJOIN_NO_SLOT)
				aj->column_values[c] = aj->dev_probe + aj->probe_values_offset[c];
			if (aj->probe_validity_offset[c] != AGGJOIN_NO_SLOT)
				aj->column_validity[c] = aj->dev_probe + aj->probe_validity_offset[c];
		}

	columns = (GaDevGatherColumn *) calloc(agg->ncolumns + aj->nsteps * GA_AGG_MAX_JOIN_KEYS,
										   sizeof(GaDevGatherColumn));
	if (columns == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory describing the join's columns");
	for (int c = 0; c < agg->ncolumns; c++)
	{
		if ((!agg->needs_values[c] && !agg->needs_validity[c]) || agg->column_is_derived[c])
			continue;
		columns[n] = aggjoin_describe_column(aj, c, agg->needs_values[c] ?
											 ga_type_width(agg->column_types[c]) : 0);
		if (agg->needs_values[c])
			columns[n].dst_values = agg->dev_input + agg->dev_values_offset[c];
		if (agg->needs_validity[c])
			columns[n].dst_validity = agg->dev_input + agg->dev_validity_offset[c];
		else
			columns[n].src_validity = NULL;
		n++;
	}
	aj->ncolumns_gathered = n;
	for (int i = 1; i < aj->nsteps; i++)
	{
		GpuAggJoinStep *step = &aj->steps[i];

		step->key_gather_first = n;
		for (int k = 0; k < step->nkeys; k++)
		{
			columns[n] = aggjoin_describe_column(aj, step->key_columns[k],
												 (int) sizeof(unsigned long long));
			columns[n].dst_values = step->nkeys > 1 ? step->dev_key_values[k] : step->dev_keys;
			columns[n].dst_validity = step->nkeys > 1 ? step->dev_key_values_validity[k] :
				step->dev_key_validity;
			n++;
		}
	}
	aggjoin_describe_filter(agg, aj, aj->filter, aj->nfilter, 1, &aj->input_filter);
	for (int i = 0; i < aj->nsteps; i++)
		aggjoin_describe_filter(agg, aj, aj->steps[i].filter, aj->steps[i].nfilter, 0,
								&aj->steps[i].pair_filter);
	/* The host array must outlive the copy: wait for it. */
	ok = device_alloc((void **) &aj->dev_columns,
					  (size_t) (n > 0 ? n : 1) * sizeof(GaDevGatherColumn),
					  "the join's column descriptions", status) &&
		(n == 0 ||
		 gpu_copy_chunked(aj->dev_columns, columns, (size_t) n * sizeof(GaDevGatherColumn),
						  cudaMemcpyHostToDevice, stream, wait, arg,
						  "copying the join's column descriptions to the GPU", status)) &&
		aggjoin_wait_stream(aj, stream, wait, arg, status);
	free(columns);
	return ok;
}

/*
 * Take step `step`'s build side (0-based): the hash join's build with the
 * sorted rows kept on the device (a step of several keys: on device.c's
 * hashes, whose seed is kept for the probes), then the payload's columns
 * (and, for a RIGHT or FULL step, its cleared matched flags); the
 * join's own statistics are added to the aggregation's.  After the last
 * step's build, the gather's columns are described.
 */
int
ga_gpu_aggjoin_build(GpuAgg *agg, int step, const int64_t *keys, const uint32_t *rows,
					 int64_t n, uint64_t key_seed, const GaBatch *payload, GaWaitCallback wait,
					 void *arg, GaStatus *status)
{
	GpuAggJoin *aj = agg->join;
	GpuAggJoinStep *st = &aj->steps[step];
	GaJoinStats join_stats;

	st->key_seed = (unsigned long long) key_seed;

	if (!ga_gpu_join_build_on_device(st->build, keys, rows, n, wait, arg, status))
		return 0;
	ga_gpu_join_get_stats(st->build, &join_stats);
	agg->stats.bytes_sent += join_stats.bytes_sent;
	agg->stats.device_ms += join_stats.device_ms;
	agg->stats.transfer_ms += join_stats.transfer_ms;
	ga_gpu_join_device_view(st->build, &st->table, &st->dev_sorted_rows);
	if (!aggjoin_upload_payload(agg, aj, step, payload, wait, arg, status))
		return 0;
	st->payload_rows = payload->nrows;
	if (aggjoin_keeps_unmatched_build(st->type))
	{
		if (!device_alloc((void **) &st->dev_matched,
						  (size_t) (payload->nrows > 0 ? payload->nrows : 1),
						  "the matched flags of a right or full join's build rows", status))
			return 0;
		GPU_TRY(cudaMemsetAsync(st->dev_matched, 0,
								(size_t) (payload->nrows > 0 ? payload->nrows : 1),
								agg->device->stream),
				"clearing the matched flags of a right or full join's build rows");
	}
	agg->stats.join_build_rows += n;
	if (++aj->nbuilt == aj->nsteps && !aggjoin_upload_columns(agg, aj, wait, arg, status))
		return 0;
	ga_status_ok(status);
	return 1;
}

/*
 * Enqueue the probe columns' copies into the probe buffer (a bitmap read
 * on the device that the batch does not have is set there), with events
 * around them and the batch's reuse event after them.
 */
static int
aggjoin_enqueue_probe_copies(GpuAgg *agg, GpuAggJoin *aj, GpuHostBatch *hb, GaStatus *status)
{
	cudaStream_t stream = agg->device->stream;
	const GaBatch *batch = &hb->batch;
	size_t		nrows = (size_t) batch->nrows;
	size_t		validity_bytes = (nrows + 7) / 8;
	int64_t		bytes_sent = 0;

	GPU_TRY(cudaEventRecord(agg->ev_copy_start, stream), "recording an event");
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *column = &batch->columns[c];

		if (aj->probe_values_offset[c] != AGGJOIN_NO_SLOT)
		{
			size_t		bytes = nrows * (size_t) ga_type_width(agg->column_types[c]);

			GPU_TRY(cudaMemcpyAsync(aj->dev_probe + aj->probe_values_offset[c], column->values,
									bytes, cudaMemcpyHostToDevice, stream),
					"copying a probe batch to the GPU");
			bytes_sent += (int64_t) bytes;
		}
		if (aj->probe_validity_offset[c] == AGGJOIN_NO_SLOT)
			continue;
		if (column->has_nulls)
		{
			GPU_TRY(cudaMemcpyAsync(aj->dev_probe + aj->probe_validity_offset[c],
									column->validity, validity_bytes,
									cudaMemcpyHostToDevice, stream),
					"copying a probe batch's null bitmap to the GPU");
			bytes_sent += (int64_t) validity_bytes;
		}
		else if (agg->needs_validity[c] || aj->later_key[c] || aj->step_operand[c])
			GPU_TRY(cudaMemsetAsync(aj->dev_probe + aj->probe_validity_offset[c], 0xff,
									validity_bytes, stream),
					"setting a probe batch's null bitmap on the GPU");
	}
	GPU_TRY(cudaEventRecord(agg->ev_copy_end, stream), "recording an event");
	GPU_TRY(cudaEventRecord(hb->copied, stream), "recording an event");
	agg->stats.bytes_sent += bytes_sent;
	aj->copies_timed = 1;
	return 1;
}

/*
 * Add the timings whose events have completed: every wait for a step's
 * rows comes after the probe copies and every expansion enqueued so far.
 */
static void
aggjoin_add_timings(GpuAgg *agg, GpuAggJoin *aj)
{
	if (aj->copies_timed)
		add_elapsed(&agg->stats.transfer_ms, agg->ev_copy_start, agg->ev_copy_end);
	aj->copies_timed = 0;
	for (int i = 0; i < aj->nsteps; i++)
	{
		GpuAggJoinStep *step = &aj->steps[i];

		if (step->expand_timed)
			add_elapsed(&agg->stats.device_ms, step->ev_expand_start, step->ev_expand_end);
		step->expand_timed = 0;
	}
}

/* The level whose rows step s (1-based) probes: the probe batch, or step s - 1's. */
static GaDevLevel
aggjoin_level_before(const GpuAggJoin *aj, int s)
{
	GaDevLevel	level;

	if (s > 1)
		return aj->steps[s - 2].level;
	memset(&level, 0, sizeof(level));
	return level;
}

/*
 * Where the key columns of step s (1-based, of several keys) are over the
 * rows it probes (step 1: the probe buffer; later: the gathered arrays),
 * with its build key columns and seed, as the key kernels read them.
 */
static GaDevJoinKey
aggjoin_key_columns(const GpuAggJoin *aj, int s)
{
	const GpuAggJoinStep *step = &aj->steps[s - 1];
	GaDevJoinKey key;

	memset(&key, 0, sizeof(key));
	key.nkeys = step->nkeys;
	key.seed = step->key_seed;
	for (int k = 0; k < step->nkeys; k++)
	{
		int			c = step->key_columns[k];

		if (s == 1)
		{
			key.values[k] = (const unsigned long long *) (aj->dev_probe +
														  aj->probe_values_offset[c]);
			if (aj->probe->columns[c].has_nulls)
				key.validity[k] = aj->dev_probe + aj->probe_validity_offset[c];
		}
		else
		{
			key.values[k] = step->dev_key_values[k];
			key.validity[k] = step->dev_key_values_validity[k];
		}
		key.build_values[k] =
			(const unsigned long long *) aj->column_values[step->build_key_columns[k]];
	}
	return key;
}

/*
 * Copy a count the device work since ev_probe_start computed at dev_count
 * back, wait for it (*count), and time that work as device work, the copy
 * as transfer.  `what` says what is waited for, in messages.
 */
static int
aggjoin_wait_count(GpuAgg *agg, GpuAggJoin *aj, const unsigned long long *dev_count,
				   const char *what, int64_t *count, GaWaitCallback wait, void *arg,
				   GaStatus *status)
{
	cudaStream_t stream = agg->device->stream;
	char		message[160];

	GPU_TRY(cudaEventRecord(aj->ev_probe_end, stream), "recording an event");
	snprintf(message, sizeof(message), "copying the count of %s from the GPU", what);
	GPU_TRY(cudaMemcpyAsync(aj->host_nrows, dev_count, sizeof(unsigned long long),
							cudaMemcpyDeviceToHost, stream),
			message);
	GPU_TRY(cudaEventRecord(aj->ev_nrows_copied, stream), "recording an event");
	snprintf(message, sizeof(message), "waiting for the GPU to count %s", what);
	if (!wait_event(aj->ev_nrows_copied, wait, arg, message, status))
		return 0;
	add_elapsed(&agg->stats.device_ms, aj->ev_probe_start, aj->ev_probe_end);
	add_elapsed(&agg->stats.transfer_ms, aj->ev_probe_end, aj->ev_nrows_copied);
	aggjoin_add_timings(agg, aj);
	*count = (int64_t) *aj->host_nrows;
	return 1;
}

/*
 * Count the rows of step s (1-based) over the nlevel rows of the level
 * before it: its keys (gathered from the level after the first step; of
 * several keys, hashed), the probe (of several keys, then the recheck),
 * the scan (a step that checks its pairs: of the pairs, as INNER), and the
 * total copied back and waited for.  Fills *pairs for writing the rows.
 */
static int
aggjoin_count_step(GpuAgg *agg, GpuAggJoin *aj, int s, int64_t nlevel, GaDevPairs *pairs,
				   int64_t *total, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[s - 1];
	cudaStream_t stream = agg->device->stream;
	int			sms = agg->device->info.multiprocessors;
	GaDevLevel	from = aggjoin_level_before(aj, s);
	const unsigned long long *keys;
	const uint8_t *key_validity = NULL;
	GaDevJoinKey key;
	size_t		scan_bytes = aj->scan_temp_bytes;

	memset(&key, 0, sizeof(key));
	GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
	if (s == 1 && step->nkeys == 1)
	{
		keys = (const unsigned long long *) (aj->dev_probe +
											 aj->probe_values_offset[step->key_columns[0]]);
		if (aj->probe->columns[step->key_columns[0]].has_nulls)
			key_validity = aj->dev_probe + aj->probe_validity_offset[step->key_columns[0]];
	}
	else
	{
		keys = step->dev_keys;
		key_validity = step->dev_key_validity;	/* NULL with several keys */
	}
	if (s > 1)
	{
		GaDevPairs	level_rows;

		memset(&level_rows, 0, sizeof(level_rows));
		level_rows.nlevel = nlevel;
		level_rows.step = -1;
		GPU_TRY(ga_launch_aggjoin_gather(aj->dev_columns + step->key_gather_first, step->nkeys,
										 &level_rows, &from, 0, nlevel, 0, sms, stream),
				"launching the gather of a join step's keys");
	}
	if (step->nkeys > 1)
	{
		key = aggjoin_key_columns(aj, s);
		GPU_TRY(ga_launch_aggjoin_key_hash(&key, nlevel, step->dev_keys, sms, stream),
				"launching the hash of a join step's keys");
	}
	GPU_TRY(ga_launch_join_probe(&step->table, keys, key_validity, nlevel, step->dev_first,
								 step->dev_count, aj->dev_inner_total, sms, stream),
			"launching the join's probe kernel");
	if (step->nkeys > 1)
		GPU_TRY(ga_launch_aggjoin_key_recheck(&key, nlevel, step->dev_sorted_rows,
											  step->dev_first, step->dev_count, sms, stream),
				"launching the recheck of a join step's keys");
	GPU_TRY(ga_aggjoin_pair_ends(aj->dev_scan_temp, &scan_bytes, step->dev_count,
								 step->dev_pair_ends, nlevel,
								 aggjoin_checks_pairs(step) ? (int) GA_AGGJOIN_INNER :
								 (int) step->type, stream),
			"scanning a join step's row counts");
	if (!aggjoin_wait_count(agg, aj, step->dev_pair_ends + (nlevel - 1), "a join step's rows",
							total, wait, arg, status))
		return 0;
	memset(pairs, 0, sizeof(*pairs));
	pairs->matched = step->dev_matched;	/* NULL but for RIGHT and FULL */
	pairs->pair_ends = step->dev_pair_ends;
	pairs->first = step->dev_first;
	pairs->count = step->dev_count;
	pairs->sorted_rows = step->dev_sorted_rows;
	pairs->nlevel = nlevel;
	pairs->step = s;
	return 1;
}

/*
 * List the items base .. base + n - 1 whose flag byte flags[item] is 0 into
 * rows (cub::DeviceSelect in the shared select scratch) and wait for their
 * count, *nselected.  The device work since ev_probe_start (recorded by
 * the caller before the kernel that set the flags) is timed as such, the
 * count's copy as transfer.  `what` names the items in messages.  Used by
 * the join's filter, a step's own filter and the RIGHT and FULL steps'
 * unmatched build rows.
 */
static int
aggjoin_select_unflagged(GpuAgg *agg, GpuAggJoin *aj, const uint8_t *flags, uint32_t base,
						 uint32_t *rows, int n, const char *what, int64_t *nselected,
						 GaWaitCallback wait, void *arg, GaStatus *status)
{
	size_t		temp_bytes = aj->select_temp_bytes;
	char		message[160];

	snprintf(message, sizeof(message), "listing %s", what);
	GPU_TRY(ga_aggjoin_select_unmatched(aj->dev_select_temp, &temp_bytes, flags, base, rows,
										aj->dev_unmatched_count, n, agg->device->stream),
			message);
	return aggjoin_wait_count(agg, aj, aj->dev_unmatched_count, what, nselected, wait, arg,
							  status);
}

/*
 * The join's filter over the n rows of the input buffer: flag the rows it
 * drops, list the kept ones and wait for their count (*kept; the filter
 * and the listing timed as device work), then, when some were dropped,
 * compact every gathered column through the scratch buffer (enqueued, not
 * waited for: the aggregation of the piece follows on the stream).
 */
static int
aggjoin_filter_gathered(GpuAgg *agg, GpuAggJoin *aj, int64_t n, int64_t *kept,
						GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->device->stream;
	int			sms = agg->device->info.multiprocessors;

	*kept = 0;
	if (n <= 0)
		return 1;
	GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
	GPU_TRY(ga_launch_aggjoin_filter(&aj->input_filter, n, aj->dev_filter_drop, sms, stream),
			"launching the join filter's kernel");
	if (!aggjoin_select_unflagged(agg, aj, aj->dev_filter_drop, 0, aj->dev_filter_rows, (int) n,
								  "the rows the join's filter keeps", kept, wait, arg, status))
		return 0;
	if (*kept == n || *kept == 0)
		return 1;
	GPU_TRY(ga_launch_aggjoin_compact(aj->dev_columns, aj->ncolumns_gathered, aj->dev_filter_rows,
									  *kept, agg->dev_input, aj->dev_filter_scratch, sms, stream),
			"launching the compaction of the rows the join's filter keeps");
	GPU_TRY(cudaMemcpyAsync(agg->dev_input, aj->dev_filter_scratch, agg->dev_input_bytes,
							cudaMemcpyDeviceToDevice, stream),
			"copying the filtered rows back into the input buffer");
	return 1;
}

/*
 * Aggregate the last step's rows gathered into the input buffer (the
 * gather's timing goes with the piece) and empty it.  wait is for the
 * first piece's probe.
 */
static int
aggjoin_aggregate_gathered(GpuAgg *agg, GpuAggJoin *aj, GaWaitCallback wait, void *arg,
						   GaStatus *status)
{
	int64_t		n = aj->gathered_rows;

	aj->gathered_rows = 0;
	aj->gather_timed = 0;
	aj->pieces++;
	if (aj->nfilter > 0)
	{
		int64_t		kept = 0;

		if (!aggjoin_filter_gathered(agg, aj, n, &kept, wait, arg, status))
			return 0;
		agg->stats.joined_rows -= n - kept;
		if (kept == 0)
		{
			ga_gpu_agg_count_empty_batch(agg);	/* a piece, as on the CPU */
			return 1;
		}
		n = kept;
	}
	return ga_gpu_agg_launch_input(agg, n, wait, arg, status);
}

static int	aggjoin_run_step(GpuAgg *agg, GpuAggJoin *aj, int s, int64_t nlevel,
							 GaWaitCallback wait, void *arg, GaStatus *status);
static int	aggjoin_run_checked_step(GpuAgg *agg, GpuAggJoin *aj, int s,
									 const GaDevPairs *pairs, const GaDevLevel *from,
									 int64_t total, GaWaitCallback wait, void *arg,
									 GaStatus *status);

/*
 * Write rows [start, start + n) of the last step into the input buffer
 * after the rows it holds (settling the piece in flight first when the
 * buffer is empty: it may have to be redone on those rows), and aggregate
 * the buffer when full.
 */
static int
aggjoin_gather_rows(GpuAgg *agg, GpuAggJoin *aj, const GaDevPairs *pairs,
					const GaDevLevel *from, int64_t start, int64_t n, GaWaitCallback wait,
					void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->device->stream;

	if (aj->gathered_rows == 0 && !ga_gpu_agg_settle(agg, wait, arg, status))
		return 0;
	/* The previous gather is complete: a wait came since. */
	if (aj->gather_timed)
		add_elapsed(&agg->stats.device_ms, agg->ev_gather_start, agg->ev_gather_end);
	GPU_TRY(cudaEventRecord(agg->ev_gather_start, stream), "recording an event");
	GPU_TRY(ga_launch_aggjoin_gather(aj->dev_columns, aj->ncolumns_gathered, pairs, from, start,
									 n, aj->gathered_rows, agg->device->info.multiprocessors,
									 stream),
			"launching the join's gather kernel");
	GPU_TRY(cudaEventRecord(agg->ev_gather_end, stream), "recording an event");
	aj->gather_timed = 1;
	aj->gathered_rows += n;
	if (aj->gathered_rows == agg->batch_rows)
		return aggjoin_aggregate_gathered(agg, aj, wait, arg, status);
	return 1;
}

/*
 * Write rows [start, start + n) of step s (not the last) into its level
 * after the rows it holds, and let step s + 1 take the level when full.
 */
static int
aggjoin_expand_rows(GpuAgg *agg, GpuAggJoin *aj, int s, const GaDevPairs *pairs,
					const GaDevLevel *from, int64_t start, int64_t n, GaWaitCallback wait,
					void *arg, GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[s - 1];
	cudaStream_t stream = agg->device->stream;

	/* The previous expansion of this step was added after a wait since. */
	GPU_TRY(cudaEventRecord(step->ev_expand_start, stream), "recording an event");
	GPU_TRY(ga_launch_aggjoin_expand(pairs, from, &step->level, start, n, step->level_rows,
									 agg->device->info.multiprocessors, stream),
			"launching the join's expansion kernel");
	GPU_TRY(cudaEventRecord(step->ev_expand_end, stream), "recording an event");
	step->expand_timed = 1;
	step->level_rows += n;
	if (step->level_rows < agg->batch_rows)
		return 1;
	step->level_rows = 0;		/* read by step s + 1's kernels before reuse */
	return aggjoin_run_step(agg, aj, s + 1, agg->batch_rows, wait, arg, status);
}

/*
 * Write rows [0, total) of step s (1-based; pairs over the level `from`) a
 * piece at a time, each piece as large as its destination (the input
 * buffer after the last step, the step's level otherwise) has room for: a
 * full destination is aggregated or taken by step s + 1 as it fills.
 */
static int
aggjoin_write_step_rows(GpuAgg *agg, GpuAggJoin *aj, int s, const GaDevPairs *pairs,
						const GaDevLevel *from, int64_t total, GaWaitCallback wait, void *arg,
						GaStatus *status)
{
	int64_t		done,
				n;

	if (s == aj->nsteps)
		agg->stats.joined_rows += total;
	for (done = 0; done < total; done += n)
	{
		int64_t		held = s == aj->nsteps ? aj->gathered_rows : aj->steps[s - 1].level_rows;

		n = total - done < agg->batch_rows - held ? total - done : agg->batch_rows - held;
		if (s == aj->nsteps ?
			!aggjoin_gather_rows(agg, aj, pairs, from, done, n, wait, arg, status) :
			!aggjoin_expand_rows(agg, aj, s, pairs, from, done, n, wait, arg, status))
			return 0;
	}
	return 1;
}

/*
 * Let each step after `first` (1-based) take the rows left in the level
 * before it, in step order, so that every row those levels held has gone
 * through every step when this returns (the last step's rows may stay in
 * the input buffer).
 */
static int
aggjoin_drain_levels(GpuAgg *agg, GpuAggJoin *aj, int first, GaWaitCallback wait, void *arg,
					 GaStatus *status)
{
	for (int t = first; t < aj->nsteps; t++)
	{
		int64_t		held = aj->steps[t - 1].level_rows;

		aj->steps[t - 1].level_rows = 0;
		if (!aggjoin_run_step(agg, aj, t + 1, held, wait, arg, status))
			return 0;
	}
	return 1;
}

/*
 * Step s (1-based) that checks its pairs (aggjoin_checks_pairs), after
 * they were counted as INNER's (total of them, over the level `from`),
 * forming its rows in two passes as the CPU device does (cpu/aggjoin.c):
 * with a filter, the pairs go through it (the level rows that had one
 * passing flagged in dev_passed), all at once, or, for INNER and LEFT, a
 * chunk of batch_rows pairs at a time whose passing ones are listed and
 * written as rows; then, for LEFT, ANTI and SEMI, the counts are rewritten
 * from the flags (SEMI without a filter: from the counts) and the rows
 * without a build row (LEFT and ANTI: no pair passed; SEMI: one did)
 * written under ANTI's scan.
 */
static int
aggjoin_run_checked_step(GpuAgg *agg, GpuAggJoin *aj, int s, const GaDevPairs *pairs,
						 const GaDevLevel *from, int64_t total, GaWaitCallback wait, void *arg,
						 GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[s - 1];
	cudaStream_t stream = agg->device->stream;
	int			sms = agg->device->info.multiprocessors;
	int64_t		nlevel = pairs->nlevel;
	size_t		scan_bytes = aj->scan_temp_bytes;
	int64_t		rows = 0;

	/* the pairs that pass, and the rows in the second pass, timed from here on */
	GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
	if (step->nfilter > 0)
	{
		GPU_TRY(cudaMemsetAsync(step->dev_passed, 0, (size_t) nlevel, stream),
				"clearing a join step's matched rows");
		if (!aggjoin_writes_passing_pairs(step))
			GPU_TRY(ga_launch_aggjoin_pair_filter(&step->pair_filter, pairs, from, 0, total, NULL,
												  step->dev_passed, sms, stream),
					"launching a join step's filter");
		for (int64_t done = 0; aggjoin_writes_passing_pairs(step) && done < total;
			 done += aggjoin_unmatched_chunk(agg))
		{
			int			n = (int) (total - done < aggjoin_unmatched_chunk(agg) ?
								   total - done : aggjoin_unmatched_chunk(agg));
			GaDevPairs	listed = *pairs;
			int64_t		kept = 0;

			GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
			GPU_TRY(ga_launch_aggjoin_pair_filter(&step->pair_filter, pairs, from, done, n,
												  step->dev_pair_drop, step->dev_passed, sms,
												  stream),
					"launching a join step's filter");
			if (!aggjoin_select_unflagged(agg, aj, step->dev_pair_drop, 0, step->dev_pair_list, n,
										  "the pairs a join step's filter keeps", &kept, wait,
										  arg, status))
				return 0;
			listed.pair_list = step->dev_pair_list;
			listed.pair_list_base = done;
			if (!aggjoin_write_step_rows(agg, aj, s, &listed, from, kept, wait, arg, status))
				return 0;
		}
	}
	if (step->type == GA_AGGJOIN_INNER)
		return 1;
	if (aggjoin_writes_passing_pairs(step))
		GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
	GPU_TRY(ga_launch_aggjoin_pass_counts(step->nfilter > 0 ? step->dev_passed : NULL,
										  step->type == GA_AGGJOIN_SEMI, nlevel, step->dev_count,
										  sms, stream),
			"launching the count of a join step's rows without a build row");
	GPU_TRY(ga_aggjoin_pair_ends(aj->dev_scan_temp, &scan_bytes, step->dev_count,
								 step->dev_pair_ends, nlevel, (int) GA_AGGJOIN_ANTI, stream),
			"scanning a join step's rows without a build row");
	if (!aggjoin_wait_count(agg, aj, step->dev_pair_ends + (nlevel - 1),
							"a join step's rows without a build row", &rows, wait, arg, status))
		return 0;
	return aggjoin_write_step_rows(agg, aj, s, pairs, from, rows, wait, arg, status);
}

/*
 * Step s (1-based) over the nlevel rows of the level before it: count its
 * rows, then write them (aggjoin_write_step_rows; a step that checks its
 * pairs: aggjoin_run_checked_step).
 */
static int
aggjoin_run_step(GpuAgg *agg, GpuAggJoin *aj, int s, int64_t nlevel, GaWaitCallback wait,
				 void *arg, GaStatus *status)
{
	GaDevLevel	from = aggjoin_level_before(aj, s);
	GaDevPairs	pairs;
	int64_t		total = 0;

	if (nlevel <= 0)
		return 1;
	if (!aggjoin_count_step(agg, aj, s, nlevel, &pairs, &total, wait, arg, status))
		return 0;
	if (aggjoin_checks_pairs(&aj->steps[s - 1]))
		return aggjoin_run_checked_step(agg, aj, s, &pairs, &from, total, wait, arg, status);
	return aggjoin_write_step_rows(agg, aj, s, &pairs, &from, total, wait, arg, status);
}

/*
 * Join a filled probe batch (nrows > 0) through every step and aggregate
 * the last step's rows: copy its probe columns, run step 1 over it, then
 * let the next step take each partly filled level in step order, and
 * aggregate the rows left in the input buffer (one empty batch when the
 * join gave none).  The last piece stays in flight, as a plain batch does.
 * Nothing of the aggregation may be in flight (gpu/hashagg.cu settled it).
 */
int
ga_gpu_aggjoin_submit(GpuAgg *agg, GpuHostBatch *hb, GaWaitCallback wait, void *arg,
					  GaStatus *status)
{
	GpuAggJoin *aj = agg->join;
	const GaBatch *probe = &hb->batch;

	if (aj->nbuilt < aj->nsteps)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's batch was submitted before the build sides of all its join steps were given");
	for (int c = 0; c < agg->ncolumns; c++)
	{
		int			side = aj->from_build[c];

		agg->column_has_nulls[c] = side == 0 ?
			(uint8_t) (probe->columns[c].has_nulls != 0) :
			(uint8_t) (aj->payload_has_nulls[c] ||
					   (aj->steps[side - 1].type != GA_AGGJOIN_INNER &&
						aj->steps[side - 1].type != GA_AGGJOIN_RIGHT));
	}
	aj->probe = probe;
	aj->pieces = 0;
	if (!aggjoin_enqueue_probe_copies(agg, aj, hb, status) ||
		!aggjoin_run_step(agg, aj, 1, probe->nrows, wait, arg, status) ||
		!aggjoin_drain_levels(agg, aj, 1, wait, arg, status))
		return 0;
	if (aj->gathered_rows > 0 && !aggjoin_aggregate_gathered(agg, aj, wait, arg, status))
		return 0;
	if (aj->pieces == 0)
		ga_gpu_agg_count_empty_batch(agg);
	agg->stats.input_rows += probe->nrows;
	return 1;
}

/*
 * List the unmatched build rows among step s's (1-based) payload rows
 * [base, base + n) into its dev_first (the selection timed as device work),
 * and wait for their count.
 */
static int
aggjoin_list_unmatched(GpuAgg *agg, GpuAggJoin *aj, int s, int64_t base, int n,
					   int64_t *nselected, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[s - 1];

	GPU_TRY(cudaEventRecord(aj->ev_probe_start, agg->device->stream), "recording an event");
	return aggjoin_select_unflagged(agg, aj, step->dev_matched, (uint32_t) base, step->dev_first,
									n, "a right or full join's unmatched build rows", nselected,
									wait, arg, status);
}

/*
 * Write the build rows of RIGHT or FULL step s (1-based) that no row
 * matched as rows of the step with every earlier side null: list them a
 * chunk at a time, and write each list after the rows their destination
 * holds (the input buffer for the last step, aggregated when full; the
 * step's level otherwise, taken by the next step when full); then let the
 * steps after s take their partly filled levels in step order, so that
 * every row these give has gone through every step when this returns.
 */
static int
aggjoin_emit_unmatched(GpuAgg *agg, GpuAggJoin *aj, int s, GaWaitCallback wait, void *arg,
					   GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[s - 1];
	GaDevPairs	pairs;
	GaDevLevel	no_level;
	int			chunk = aggjoin_unmatched_chunk(agg);

	memset(&no_level, 0, sizeof(no_level));
	memset(&pairs, 0, sizeof(pairs));
	pairs.unmatched_rows = step->dev_first;
	pairs.step = s;
	for (int64_t base = 0; base < step->payload_rows; base += chunk)
	{
		int			n = step->payload_rows - base < chunk ? (int) (step->payload_rows - base) : chunk;
		int64_t		nselected = 0;

		if (!aggjoin_list_unmatched(agg, aj, s, base, n, &nselected, wait, arg, status) ||
			!aggjoin_write_step_rows(agg, aj, s, &pairs, &no_level, nselected, wait, arg,
									 status))
			return 0;
	}
	return aggjoin_drain_levels(agg, aj, s, wait, arg, status);
}

/*
 * Aggregate, once, the build rows of every RIGHT or FULL step that no row
 * matched over all the submits, the first step's first
 * (aggjoin_emit_unmatched): a later step's matched flags are complete only
 * once the rows of the steps before it have gone by.  The rows left in the
 * input buffer are aggregated at the end (in flight, as a submit's last
 * piece).  Nothing to do without such a step; refused (GA_ERR_INVALID)
 * before every step is built.  The caller settles the aggregation
 * afterwards.
 */
int
ga_gpu_aggjoin_finish(GpuAgg *agg, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAggJoin *aj = agg->join;

	if (aj == NULL || aj->unmatched_done || !aggjoin_any_keeps_unmatched(aj))
		return 1;
	if (aj->nbuilt < aj->nsteps)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin with a right or full join was finished before the build sides of all its join steps were given");
	aj->unmatched_done = 1;		/* a failure below is remembered by the caller */

	/* Every side below a step is null in its unmatched rows: read validity. */
	for (int c = 0; c < agg->ncolumns; c++)
		agg->column_has_nulls[c] = 1;
	for (int s = 1; s <= aj->nsteps; s++)
		if (aggjoin_keeps_unmatched_build(aj->steps[s - 1].type) &&
			!aggjoin_emit_unmatched(agg, aj, s, wait, arg, status))
			return 0;
	if (aj->gathered_rows > 0 && !aggjoin_aggregate_gathered(agg, aj, wait, arg, status))
		return 0;
	return 1;
}

/*
 * Free the aggjoin part, in any state (the caller has synchronized the
 * stream).
 */
void
ga_gpu_aggjoin_destroy(GpuAgg *agg)
{
	GpuAggJoin *aj = agg->join;

	if (aj == NULL)
		return;
	for (int i = 0; i < GA_AGG_MAX_JOIN_STEPS; i++)
	{
		GpuAggJoinStep *step = &aj->steps[i];
		cudaEvent_t events[] = {step->ev_expand_start, step->ev_expand_end};

		if (step->build != NULL)
			ga_gpu_join_destroy(step->build);
		device_free(&step->dev_payload);
		device_free(&step->dev_matched);
		device_free(&step->dev_passed);
		device_free(&step->dev_pair_drop);
		device_free(&step->dev_pair_list);
		device_free(&step->dev_keys);
		device_free(&step->dev_key_validity);
		for (int k = 0; k < GA_AGG_MAX_JOIN_KEYS; k++)
		{
			device_free(&step->dev_key_values[k]);
			device_free(&step->dev_key_values_validity[k]);
		}
		device_free(&step->dev_first);
		device_free(&step->dev_count);
		device_free(&step->dev_pair_ends);
		device_free(&step->level.probe_rows);
		for (int t = 0; t <= GA_AGG_MAX_JOIN_STEPS; t++)
			device_free(&step->level.build_rows[t]);
		aggjoin_destroy_events(events, 2);
	}
	device_free(&aj->dev_probe);
	device_free(&aj->dev_inner_total);
	device_free(&aj->dev_scan_temp);
	device_free(&aj->dev_select_temp);
	device_free(&aj->dev_unmatched_count);
	device_free(&aj->dev_filter_drop);
	device_free(&aj->dev_filter_rows);
	device_free(&aj->dev_filter_scratch);
	device_free(&aj->dev_columns);
	if (aj->host_nrows != NULL)
		(void) cudaFreeHost(aj->host_nrows);
	{
		cudaEvent_t events[] = {aj->ev_probe_start, aj->ev_probe_end, aj->ev_nrows_copied};

		aggjoin_destroy_events(events, 3);
	}
	free(aj->from_build);
	free(aj->later_key);
	free(aj->build_key);
	free(aj->step_operand);
	free(aj->payload_has_nulls);
	free(aj->probe_values_offset);
	free(aj->probe_validity_offset);
	free(aj->column_values);
	free(aj->column_validity);
	free(aj);
	agg->join = NULL;
}
