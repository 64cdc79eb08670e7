/*-------------------------------------------------------------------------
 *
 * gpu/aggjoin.cuh
 *	  The state of the GPU device's aggjoin, shared by its build side
 *	  (gpu/aggjoin.cu) and its probe side (gpu/aggjoin_probe.cu): one
 *	  join step on the device, the aggjoin part of an aggregation, and the
 *	  small rules both sides read.  The aggregation (gpu/hashagg.cu) sees
 *	  only the opaque GpuAggJoin and the entry points in gpu_device.cuh.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_GPU_AGGJOIN_CUH
#define GPUAGG_GPU_AGGJOIN_CUH

#include "gpu_device.cuh"
#include "kernels/aggjoin.cuh"

/* No slot for this column in the probe buffer. */
#define AGGJOIN_NO_SLOT SIZE_MAX

/* One join step on the device. */
typedef struct GpuAggJoinStep
{
	GaAggJoinType type;
	int			hashed;			/* 0: key_columns[0] alone, as given; 1: the
								 * pairs, hashed (join_key.h) */
	int			nkeys;			/* 1 .. GA_AGG_MAX_JOIN_KEYS (1 unless hashed) */
	int			key_columns[GA_AGG_MAX_JOIN_KEYS];
	int			build_key_columns[GA_AGG_MAX_JOIN_KEYS];	/* hashed */
	unsigned long long key_seed;	/* hashed: the build's hash seed */
	int			key_gather_first;	/* after the first step: its int64 key
									 * columns' first description in
									 * dev_columns */
	int			key_gathered;	/* ... and how many (strings are read where
								 * they live) */

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
	 * the int64 key columns gathered (hashed, after the first step), answer,
	 * scan
	 */
	unsigned long long *dev_keys;
	uint8_t    *dev_key_validity;	/* not hashed, after the first step */
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
	uint8_t    *build_key;		/* per column: a build key column of a
								 * hashed step (its values uploaded) */
	uint8_t    *step_operand;	/* per column: an operand of a step's own
								 * filter (values and validity on the device) */

	/*
	 * the probe buffer: per column a values and a validity slot, or none,
	 * and a string join or group key column's bytes slot (string_bytes of
	 * them)
	 */
	size_t	   *probe_values_offset;
	size_t	   *probe_validity_offset;
	size_t	   *probe_bytes_offset;
	unsigned char *dev_probe;

	/*
	 * per column: its values and validity on the device (NULL: none); a
	 * string key column's bytes too, and of a build column the bytes
	 * uploaded
	 */
	const void **column_values;
	const uint8_t **column_validity;
	const uint8_t **column_bytes;
	int64_t    *column_bytes_used;
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
	 * The aggregation's string group keys (nstrings of them: the columns,
	 * string_key per column), gathered with the last step's rows: per key
	 * the end offsets of a piece's values (ga_aggjoin_string_ends), the
	 * scan's scratch, and the count of a piece's rows that fit every key.
	 */
	int			nstrings;
	int			string_columns[GA_GPU_MAX_KEYS];
	uint8_t    *string_key;
	unsigned long long *dev_string_ends[GA_GPU_MAX_KEYS];
	void	   *dev_string_temp;
	size_t		string_temp_bytes;
	unsigned long long *dev_string_fit;

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

#endif							/* GPUAGG_GPU_AGGJOIN_CUH */
