/*-------------------------------------------------------------------------
 *
 * gpu/aggjoin_probe.cu
 *	  The GPU aggjoin's probe side (gpu/aggjoin.cu builds): the walk of
 *	  each submitted batch through the join steps on the device, and at
 *	  finish the RIGHT and FULL steps' unmatched build rows, every joined
 *	  row gathered into the aggregation's input buffer a piece at a time.
 *
 * Submit (per probe batch), all on the aggregation's stream:
 *
 * 1. Copy the probe columns the aggregation or a step's key reads into a
 *	  probe buffer laid out like the batch (build columns are not sent; a
 *	  string key column's bytes in use follow its end offsets).  A probe
 *	  column whose validity is read on the device but that has no nulls in
 *	  this batch gets its bitmap set there instead of sent.
 * 2. Step s over the rows of level s - 1 (level 0: the probe batch; level
 *	  s: the rows of step s, kept as sources, gpu/kernels/aggjoin.cuh): the
 *	  keys (step 1: the probe buffer's key column; later steps: gathered
 *	  from the level), the probe (ga_launch_join_probe: first/count per
 *	  row), the scan (ga_aggjoin_pair_ends: the rows per level row by join
 *	  type, summed), and the number of the step's rows, copied back and
 *	  waited for.  This is the count-then-write scheme of the cuckoo hash
 *	  join report and of He et al. ("Relational joins on graphics
 *	  processors", section 4), which sizes the output before writing it.
 *	  A hashed step (several keys, or string keys: join_key.h) has its
 *	  int64 key columns where a single key would be (step 1: the probe
 *	  buffer; later steps: each gathered from the level into an array of
 *	  the step's) and its string key columns where they live (the probe
 *	  buffer or an earlier step's payload, read through the level's
 *	  sources), hashes them under the build's seed into its keys
 *	  (ga_launch_aggjoin_key_hash), probes the hashes, and clears the count
 *	  of every row whose key is null or differs from its first candidate's
 *	  (ga_launch_aggjoin_key_recheck, reading the step's build key columns,
 *	  which are uploaded with its payload for that; strings byte by byte)
 *	  before the scan.
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
 * String group keys.  The aggregation's GA_TYPE_STRING group keys (a
 * probe column, whose bytes the probe buffer holds, or a build column,
 * whose bytes its payload holds) are gathered into the input buffer as a
 * copied batch carries them, end offsets and bytes, so that GpuHashAgg's
 * string table (gpu/strings.cu) groups the joined rows by their bytes
 * unchanged: first spelling, NULLs one group, collisions settled by the
 * bytes.  The input buffer has string_bytes of them per key, so the last
 * step's pieces are cut by bytes as well as by rows: before a piece is
 * written, each key's lengths over its rows are summed on the device
 * and the rows that fit every key's bytes left are counted and copied
 * back (one more round trip a piece, only with string group keys); a
 * piece that fills a key's bytes is aggregated at once.  The join's
 * filter compacts the keys' offsets and bytes as it compacts the other
 * columns.
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
 * the aggregation computes them in each piece of the input buffer before
 * aggregating it (ga_gpu_agg_launch_input).
 *
 * With one step the level is the probe batch and the pieces are written
 * straight into the aggregation's input: for the PK-FK join that is three
 * passes over the probe rows (probe, scan, gather) besides the copies and
 * the aggregation, and one 8-byte copy back per batch.
 *
 * Nothing here prints or aborts; failures come back as a GaStatus and
 * gpu/hashagg.cu remembers them.
 *
 *-------------------------------------------------------------------------
 */
#include "aggjoin.cuh"

#include <stdio.h>
#include <string.h>

/*
 * Enqueue the probe columns' copies into the probe buffer (a bitmap read
 * on the device that the batch does not have is set there; a string key
 * column's bytes in use), with events around them and the batch's reuse
 * event after them.
 */
static int
aggjoin_enqueue_probe_copies(GpuAgg *agg, GpuAggJoin *aj, GpuHostBatch *hb, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
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
		if (aj->probe_bytes_offset[c] != AGGJOIN_NO_SLOT && aj->column_bytes_used[c] > 0)
		{
			GPU_TRY(cudaMemcpyAsync(aj->dev_probe + aj->probe_bytes_offset[c], column->bytes,
									(size_t) aj->column_bytes_used[c],
									cudaMemcpyHostToDevice, stream),
					"copying a probe batch's strings to the GPU");
			bytes_sent += aj->column_bytes_used[c];
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
 * Where the key columns of hashed step s (1-based) are over the rows it
 * probes (int64 ones: step 1, the probe buffer; later, the gathered
 * arrays; strings: where they live, read through the level's sources),
 * with its build key columns and seed, as the key kernels read them.
 */
static GaDevJoinKey
aggjoin_key_columns(const GpuAgg *agg, const GpuAggJoin *aj, int s)
{
	const GpuAggJoinStep *step = &aj->steps[s - 1];
	GaDevJoinKey key;

	memset(&key, 0, sizeof(key));
	key.nkeys = step->nkeys;
	key.seed = step->key_seed;
	key.level = aggjoin_level_before(aj, s);
	for (int k = 0; k < step->nkeys; k++)
	{
		int			c = step->key_columns[k];
		int			b = step->build_key_columns[k];

		if (agg->column_types[c] == GA_TYPE_STRING)
		{
			GaDevJoinString *str = &key.strings[k];

			str->side = aj->from_build[c];
			str->ends = (const uint32_t *) aj->column_values[c];
			str->bytes = aj->column_bytes[c];
			str->capacity = (uint32_t) aj->column_bytes_used[c];
			/* step 1 reads the batch's bitmap only where it has one */
			str->validity = s == 1 && !aj->probe->columns[c].has_nulls ? NULL :
				aj->column_validity[c];
			str->build_ends = (const uint32_t *) aj->column_values[b];
			str->build_bytes = aj->column_bytes[b];
			str->build_capacity = (uint32_t) aj->column_bytes_used[b];
			continue;
		}
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
		key.build_values[k] = (const unsigned long long *) aj->column_values[b];
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
	cudaStream_t stream = agg->stream;
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
 * before it: its keys (gathered from the level after the first step; of a
 * hashed step, hashed), the probe (of a hashed step, then the recheck),
 * the scan (a step that checks its pairs: of the pairs, as INNER), and the
 * total copied back and waited for.  Fills *pairs for writing the rows.
 */
static int
aggjoin_count_step(GpuAgg *agg, GpuAggJoin *aj, int s, int64_t nlevel, GaDevPairs *pairs,
				   int64_t *total, GaWaitCallback wait, void *arg, GaStatus *status)
{
	GpuAggJoinStep *step = &aj->steps[s - 1];
	cudaStream_t stream = agg->stream;
	int			sms = agg->device->info.multiprocessors;
	GaDevLevel	from = aggjoin_level_before(aj, s);
	const unsigned long long *keys;
	const uint8_t *key_validity = NULL;
	GaDevJoinKey key;
	size_t		scan_bytes = aj->scan_temp_bytes;

	memset(&key, 0, sizeof(key));
	GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
	if (s == 1 && !step->hashed)
	{
		keys = (const unsigned long long *) (aj->dev_probe +
											 aj->probe_values_offset[step->key_columns[0]]);
		if (aj->probe->columns[step->key_columns[0]].has_nulls)
			key_validity = aj->dev_probe + aj->probe_validity_offset[step->key_columns[0]];
	}
	else
	{
		keys = step->dev_keys;
		key_validity = step->dev_key_validity;	/* NULL when hashed */
	}
	if (s > 1)
	{
		GaDevPairs	level_rows;

		memset(&level_rows, 0, sizeof(level_rows));
		level_rows.nlevel = nlevel;
		level_rows.step = -1;
		GPU_TRY(ga_launch_aggjoin_gather(aj->dev_columns + step->key_gather_first,
										 step->key_gathered, &level_rows, &from, 0, nlevel, 0,
										 sms, stream),
				"launching the gather of a join step's keys");
	}
	if (step->hashed)
	{
		key = aggjoin_key_columns(agg, aj, s);
		GPU_TRY(ga_launch_aggjoin_key_hash(&key, nlevel, step->dev_keys, sms, stream),
				"launching the hash of a join step's keys");
	}
	GPU_TRY(ga_launch_join_probe(&step->table, keys, key_validity, nlevel, step->dev_first,
								 step->dev_count, aj->dev_inner_total, sms, stream),
			"launching the join's probe kernel");
	if (step->hashed)
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

/* The bytes of a string column in the aggregation's input buffer. */
static uint32_t
aggjoin_input_string_bytes(const GpuAgg *agg)
{
	return agg->request.string_bytes < (int64_t) UINT32_MAX ?
		(uint32_t) agg->request.string_bytes : UINT32_MAX;
}

/*
 * String group key s (0-based) as the string kernels read it: its values
 * where its column lives (the probe buffer, or its step's payload, with
 * the bytes copied there), written into the aggregation's input buffer.
 */
static GaDevGatherString
aggjoin_string_column(const GpuAgg *agg, const GpuAggJoin *aj, int s)
{
	int			c = aj->string_columns[s];
	GaDevGatherString str;

	memset(&str, 0, sizeof(str));
	str.side = aj->from_build[c];
	str.src_ends = (const uint32_t *) aj->column_values[c];
	str.src_bytes = aj->column_bytes[c];
	str.src_validity = aj->column_validity[c];
	str.src_capacity = (uint32_t) aj->column_bytes_used[c];
	str.dst_ends = (uint32_t *) (agg->dev_input + agg->dev_values_offset[c]);
	str.dst_bytes = agg->dev_input + agg->dev_bytes_offset[c];
	str.dst_capacity = aggjoin_input_string_bytes(agg);
	return str;
}

/*
 * How many of rows [start, start + n) of the last step (pairs over level
 * `from`) fit the bytes every string group key has left in the input
 * buffer after the rows it holds (*fit, at most n): each key's lengths
 * and their prefix sum into its dev_string_ends, which the gather then
 * writes from, and the least count, copied back and waited for.
 */
static int
aggjoin_fit_strings(GpuAgg *agg, GpuAggJoin *aj, const GaDevPairs *pairs,
					const GaDevLevel *from, int64_t start, int64_t n, int64_t *fit,
					GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	int			sms = agg->device->info.multiprocessors;

	GPU_TRY(cudaEventRecord(aj->ev_probe_start, stream), "recording an event");
	GPU_TRY(cudaMemsetAsync(aj->dev_string_fit, 0xff, sizeof(unsigned long long), stream),
			"clearing the count of the joined rows that fit");
	for (int s = 0; s < aj->nstrings; s++)
	{
		GaDevGatherString str = aggjoin_string_column(agg, aj, s);
		size_t		temp_bytes = aj->string_temp_bytes;

		GPU_TRY(ga_aggjoin_string_ends(aj->dev_string_temp, &temp_bytes, &str, pairs, from,
									   start, n, aj->dev_string_ends[s], sms, stream),
				"summing the lengths of the string group keys of joined rows");
		GPU_TRY(ga_launch_aggjoin_string_fit(&str, aj->dev_string_ends[s], n, aj->gathered_rows,
											 aj->dev_string_fit, stream),
				"launching the fit of the string group keys of joined rows");
	}
	if (!aggjoin_wait_count(agg, aj, aj->dev_string_fit,
							"the joined rows that fit the string group keys' bytes", fit, wait,
							arg, status))
		return 0;
	if (*fit > n)
		*fit = n;
	return 1;
}

/*
 * Compact the string group keys of the input buffer's rows as the other
 * gathered columns are: row j becomes row dev_filter_rows[j], for j in
 * [0, kept), its end offset and bytes written at their places in the
 * scratch buffer (enqueued, as the compaction is).
 */
static int
aggjoin_compact_strings(GpuAgg *agg, GpuAggJoin *aj, int64_t kept, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	int			sms = agg->device->info.multiprocessors;
	GaDevPairs	rows;
	GaDevLevel	input;

	memset(&rows, 0, sizeof(rows));
	memset(&input, 0, sizeof(input));
	rows.pair_list = aj->dev_filter_rows;	/* row j: input row dev_filter_rows[j] */
	rows.nlevel = kept;
	rows.step = -1;
	for (int s = 0; s < aj->nstrings; s++)
	{
		int			c = aj->string_columns[s];
		GaDevGatherString str;
		size_t		temp_bytes = aj->string_temp_bytes;

		memset(&str, 0, sizeof(str));
		str.src_ends = (const uint32_t *) (agg->dev_input + agg->dev_values_offset[c]);
		str.src_bytes = agg->dev_input + agg->dev_bytes_offset[c];
		str.src_validity = agg->dev_input + agg->dev_validity_offset[c];
		str.src_capacity = aggjoin_input_string_bytes(agg);
		str.dst_ends = (uint32_t *) (aj->dev_filter_scratch + agg->dev_values_offset[c]);
		str.dst_bytes = aj->dev_filter_scratch + agg->dev_bytes_offset[c];
		str.dst_capacity = aggjoin_input_string_bytes(agg);
		GPU_TRY(ga_aggjoin_string_ends(aj->dev_string_temp, &temp_bytes, &str, &rows, &input, 0,
									   kept, aj->dev_string_ends[s], sms, stream),
				"summing the lengths of the string group keys the join's filter keeps");
		GPU_TRY(ga_launch_aggjoin_string_write(&str, &rows, &input, 0, kept,
											   aj->dev_string_ends[s], 0, sms, stream),
				"launching the compaction of the string group keys the join's filter keeps");
	}
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
										aj->dev_unmatched_count, n, agg->stream),
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
	cudaStream_t stream = agg->stream;
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
	if (!aggjoin_compact_strings(agg, aj, *kept, status))
		return 0;
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
 * buffer is empty: it may have to be redone on those rows), its string
 * group keys from the end offsets aggjoin_fit_strings left, and aggregate
 * the buffer when full (in rows, or, bytes_full, in a string key's bytes).
 */
static int
aggjoin_gather_rows(GpuAgg *agg, GpuAggJoin *aj, const GaDevPairs *pairs,
					const GaDevLevel *from, int64_t start, int64_t n, int bytes_full,
					GaWaitCallback wait, void *arg, GaStatus *status)
{
	cudaStream_t stream = agg->stream;

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
	for (int s = 0; s < aj->nstrings; s++)
	{
		GaDevGatherString str = aggjoin_string_column(agg, aj, s);

		GPU_TRY(ga_launch_aggjoin_string_write(&str, pairs, from, start, n,
											   aj->dev_string_ends[s], aj->gathered_rows,
											   agg->device->info.multiprocessors, stream),
				"launching the gather of the string group keys of joined rows");
	}
	GPU_TRY(cudaEventRecord(agg->ev_gather_end, stream), "recording an event");
	aj->gather_timed = 1;
	aj->gathered_rows += n;
	if (aj->gathered_rows == agg->batch_rows || bytes_full)
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
	cudaStream_t stream = agg->stream;

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
 * full destination is aggregated or taken by step s + 1 as it fills.  The
 * last step's rows with string group keys are cut by those keys' bytes
 * too (aggjoin_fit_strings): a piece that fills a key's bytes is
 * aggregated at once, and one whose first row does not fit after the rows
 * held is preceded by their aggregation.
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
		int			bytes_full = 0;

		n = total - done < agg->batch_rows - held ? total - done : agg->batch_rows - held;
		if (s == aj->nsteps && aj->nstrings > 0)
		{
			int64_t		fit = 0;

			if (!aggjoin_fit_strings(agg, aj, pairs, from, done, n, &fit, wait, arg, status))
				return 0;
			/* a key longer than the buffer's bytes is refused at build */
			if (fit == 0 && held == 0)
				return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
									 "a joined row's string group key is longer than the %lld bytes a batch of the GPU holds of it",
									 (long long) aggjoin_input_string_bytes(agg));
			if (fit == 0)
			{
				/* the rows held first: the next turn has the whole buffer */
				n = 0;
				if (!aggjoin_aggregate_gathered(agg, aj, wait, arg, status))
					return 0;
				continue;
			}
			bytes_full = fit < n;
			n = fit;
		}
		if (s == aj->nsteps ?
			!aggjoin_gather_rows(agg, aj, pairs, from, done, n, bytes_full, wait, arg, status) :
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
	cudaStream_t stream = agg->stream;
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
 * the last step's rows: check that its string key columns end within
 * their bytes, copy its probe columns, run step 1 over it, then
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
		if (aj->probe_bytes_offset[c] == AGGJOIN_NO_SLOT)
			continue;
		aj->column_bytes_used[c] = (int64_t) ga_string_used(&probe->columns[c], probe->nrows);
		if (aj->column_bytes_used[c] > agg->request.string_bytes)
			return ga_status_set(status, GA_ERR_INVALID,
								 "string column %d of a batch ends past its %lld bytes", c,
								 (long long) agg->request.string_bytes);
	}
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

	GPU_TRY(cudaEventRecord(aj->ev_probe_start, agg->stream), "recording an event");
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
