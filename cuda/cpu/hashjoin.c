/*-------------------------------------------------------------------------
 *
 * cpu/hashjoin.c
 *	  The CPU device's hash join: the reference implementation of the join
 *	  part of gpuagg_device.h, and the device a join falls back to when no
 *	  GPU is usable.
 *
 * The build follows the same steps as the GPU (gpu/hashjoin.cu), so that the
 * two devices give identical answers:
 *
 * 1. Sort.  The (key, row) pairs are sorted by the key's bits taken as an
 *	  unsigned 64-bit integer, with a stable least-significant-digit radix
 *	  sort (8 passes of 8 bits; a pass whose digit is the same for every key
 *	  is skipped), so rows with equal keys keep the order they were given.
 *	  The sorted rows are what ga_join_sorted_rows returns.  This is the
 *	  radix-sort-based transformation of Wu et al. ("Efficiently Processing
 *	  Joins and Grouped Aggregations on GPUs", sections 3.1 and 4.1.4):
 *	  stable, immune to skew, and every key's matches become one contiguous
 *	  range that can be looked up by index.
 *
 * 2. Distinct keys.  One pass over the sorted keys gives every distinct key
 *	  with the offset of its first row and its number of rows.
 *
 * 3. Table.  An open-addressing table (linear probing, a power of two of
 *	  slots, at least twice the distinct keys) maps a key to its distinct
 *	  index.
 *
 * A probe looks each row's key up and answers (first, count) = (offset,
 * rows) of the key, or (0, 0) when the key is absent or null.  Duplicates
 * therefore cost nothing at probe time and the answer stays one pair per
 * probe row however skewed the build is: the "count the matches first"
 * alternative to chained output that the cuckoo hash join report describes
 * for inner joins whose output size is unknown.
 *
 * The probe batch, the answer arrays and the sorted rows, which the caller
 * reads, come from the host provider (util.h).
 *
 * Everything is synchronous; the wait callback is asked every
 * CPU_JOIN_WAIT_EVERY_ROWS rows of work.  A failure (out of memory, cancel)
 * is remembered and reported again by every later call; destroy is always
 * safe.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "gpuagg_hash.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rows of work between two calls of the wait callback. */
#define CPU_JOIN_WAIT_EVERY_ROWS 65536

/* Smallest hash table. */
#define CPU_JOIN_MIN_SLOTS 16

/* An empty slot of the table (distinct indexes are below UINT32_MAX). */
#define CPU_JOIN_EMPTY UINT32_MAX

/* Radix sort: digits of 8 bits, 8 passes over a 64-bit key. */
#define CPU_JOIN_RADIX_BITS 8
#define CPU_JOIN_RADIX_BUCKETS (1 << CPU_JOIN_RADIX_BITS)
#define CPU_JOIN_RADIX_PASSES (64 / CPU_JOIN_RADIX_BITS)

typedef struct CpuJoin
{
	int64_t		batch_rows;

	/* the build, in key order */
	int			built;
	int64_t		nbuild;
	uint32_t   *sorted_rows;	/* nbuild entries (at least one allocated) */
	int64_t		ndistinct;
	uint64_t   *distinct_keys;	/* ndistinct, ascending as uint64 */
	uint32_t   *offsets;		/* first sorted row of each distinct key */
	uint32_t   *counts;			/* rows of each distinct key */
	uint32_t   *slots;			/* nslots: a distinct index or EMPTY */
	int64_t		nslots;			/* a power of two */

	/* the one probe batch and its answer */
	GaBatch		batch;
	GaColumn	column;
	uint32_t   *first;
	uint32_t   *count;
	GaJoinMatches matches;

	GaJoinStats stats;
	GaFailure	failure;
} CpuJoin;

/*
 * Count the rows of work done and ask the wait callback every
 * CPU_JOIN_WAIT_EVERY_ROWS of them; returns nonzero when it says stop.
 */
static int
join_should_stop(int64_t *since_wait, int64_t rows, GaWaitCallback wait, void *arg)
{
	*since_wait += rows;
	if (*since_wait < CPU_JOIN_WAIT_EVERY_ROWS)
		return 0;
	*since_wait = 0;
	return wait != NULL && wait(arg) != 0;
}

/*
 * Sort n (key, row) pairs by key as uint64, stably, from (keys, rows) into
 * one of the two buffer pairs; *sorted_keys and *sorted_rows tell which.
 * Returns 0 when the wait callback said stop.
 */
static int
join_radix_sort(uint64_t *keys_a, uint32_t *rows_a, uint64_t *keys_b,
				uint32_t *rows_b, int64_t n, uint64_t **sorted_keys,
				uint32_t **sorted_rows, GaWaitCallback wait, void *arg)
{
	int64_t    *hist;
	uint64_t   *src_keys = keys_a,
			   *dst_keys = keys_b;
	uint32_t   *src_rows = rows_a,
			   *dst_rows = rows_b;
	int64_t		since_wait = 0;
	int64_t		i;
	int			pass;

	*sorted_keys = keys_a;
	*sorted_rows = rows_a;
	hist = calloc(CPU_JOIN_RADIX_PASSES * CPU_JOIN_RADIX_BUCKETS, sizeof(int64_t));
	if (hist == NULL)
		return -1;

	/* Every pass's histogram in one read of the keys. */
	for (i = 0; i < n; i++)
	{
		uint64_t	k = keys_a[i];

		for (pass = 0; pass < CPU_JOIN_RADIX_PASSES; pass++)
			hist[pass * CPU_JOIN_RADIX_BUCKETS +
				 ((k >> (pass * CPU_JOIN_RADIX_BITS)) & (CPU_JOIN_RADIX_BUCKETS - 1))]++;
		if ((i & (CPU_JOIN_WAIT_EVERY_ROWS - 1)) == CPU_JOIN_WAIT_EVERY_ROWS - 1 &&
			join_should_stop(&since_wait, CPU_JOIN_WAIT_EVERY_ROWS, wait, arg))
		{
			free(hist);
			return 0;
		}
	}

	for (pass = 0; pass < CPU_JOIN_RADIX_PASSES && n > 0; pass++)
	{
		int64_t    *count = hist + pass * CPU_JOIN_RADIX_BUCKETS;
		int			shift = pass * CPU_JOIN_RADIX_BITS;
		int64_t		offset[CPU_JOIN_RADIX_BUCKETS];
		int64_t		sum = 0;
		int64_t		base;
		int			d;
		uint64_t   *tk;
		uint32_t   *tr;

		/* A digit every key shares leaves the order as it is. */
		if (count[(src_keys[0] >> shift) & (CPU_JOIN_RADIX_BUCKETS - 1)] == n)
			continue;
		for (d = 0; d < CPU_JOIN_RADIX_BUCKETS; d++)
		{
			offset[d] = sum;
			sum += count[d];
		}
		for (base = 0; base < n; base += CPU_JOIN_WAIT_EVERY_ROWS)
		{
			int64_t		end = n - base < CPU_JOIN_WAIT_EVERY_ROWS ? n : base + CPU_JOIN_WAIT_EVERY_ROWS;

			for (i = base; i < end; i++)
			{
				uint64_t	k = src_keys[i];
				int64_t		pos = offset[(k >> shift) & (CPU_JOIN_RADIX_BUCKETS - 1)]++;

				dst_keys[pos] = k;
				dst_rows[pos] = src_rows[i];
			}
			if (join_should_stop(&since_wait, end - base, wait, arg))
			{
				free(hist);
				return 0;
			}
		}
		tk = src_keys, src_keys = dst_keys, dst_keys = tk;
		tr = src_rows, src_rows = dst_rows, dst_rows = tr;
	}
	free(hist);
	*sorted_keys = src_keys;
	*sorted_rows = src_rows;
	return 1;
}

/* Start a join: allocate the probe batch and the answer arrays. */
void *
ga_cpu_join_create(void *device_impl, const GaJoinRequest *request, GaStatus *status)
{
	CpuJoin    *join;
	int64_t		capacity = request->probe_batch_rows;

	(void) device_impl;
	join = calloc(1, sizeof(CpuJoin));
	if (join == NULL)
		goto oom;
	join->batch_rows = capacity;
	join->column.type = GA_TYPE_INT64;
	join->column.values = ga_host_alloc_array(capacity, sizeof(int64_t));
	join->column.validity = ga_host_alloc_array((capacity + 7) / 8, 1);
	join->first = ga_host_alloc_array(capacity, sizeof(uint32_t));
	join->count = ga_host_alloc_array(capacity, sizeof(uint32_t));
	if (join->column.values == NULL || join->column.validity == NULL ||
		join->first == NULL || join->count == NULL)
		goto oom;
	ga_status_ok(status);
	return join;

oom:
	ga_cpu_join_destroy(join);
	ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
				  "out of host memory starting a join on the CPU device");
	return NULL;
}

/*
 * Build: sort the pairs, find the distinct keys with their offsets and
 * counts, and insert the distinct keys into the table.
 */
int
ga_cpu_join_build(void *join_impl, const int64_t *keys, const uint32_t *rows,
				  int64_t n, GaWaitCallback wait, void *arg, GaStatus *status)
{
	CpuJoin    *join = join_impl;
	double		start = ga_cpu_now_ms();
	uint64_t   *keys_a = NULL,
			   *keys_b = NULL,
			   *sorted_keys;
	uint32_t   *rows_a = NULL,
			   *rows_b = NULL,
			   *sorted;
	int64_t		nslots = CPU_JOIN_MIN_SLOTS;
	int64_t		since_wait = 0;
	int64_t		i,
				d;
	int			sorted_ok;

	if (!ga_failure_check(&join->failure, status))
		return 0;

	keys_a = ga_alloc_array(n, sizeof(uint64_t));
	keys_b = ga_alloc_array(n, sizeof(uint64_t));
	rows_a = ga_host_alloc_array(n, sizeof(uint32_t));	/* one becomes */
	rows_b = ga_host_alloc_array(n, sizeof(uint32_t));	/* sorted_rows */
	if (keys_a == NULL || keys_b == NULL || rows_a == NULL || rows_b == NULL)
		goto oom;
	if (n > 0)
	{
		memcpy(keys_a, keys, (size_t) n * sizeof(int64_t));
		memcpy(rows_a, rows, (size_t) n * sizeof(uint32_t));
	}

	sorted_ok = join_radix_sort(keys_a, rows_a, keys_b, rows_b, n, &sorted_keys,
								&sorted, wait, arg);
	if (sorted_ok < 0)
		goto oom;
	if (sorted_ok == 0)
		goto cancelled;

	/* Keep the sorted rows, free the other row buffer. */
	join->sorted_rows = sorted;
	if (sorted == rows_a)
		ga_host_free(rows_b);
	else
		ga_host_free(rows_a);
	rows_a = rows_b = NULL;
	join->nbuild = n;

	/* Distinct keys: the heads of the runs of equal keys. */
	join->ndistinct = 0;
	for (i = 0; i < n; i++)
		if (i == 0 || sorted_keys[i] != sorted_keys[i - 1])
			join->ndistinct++;
	join->distinct_keys = ga_alloc_array(join->ndistinct, sizeof(uint64_t));
	join->offsets = ga_alloc_array(join->ndistinct, sizeof(uint32_t));
	join->counts = ga_alloc_array(join->ndistinct, sizeof(uint32_t));
	if (join->distinct_keys == NULL || join->offsets == NULL || join->counts == NULL)
		goto oom;
	d = -1;
	for (i = 0; i < n; i++)
	{
		if (i == 0 || sorted_keys[i] != sorted_keys[i - 1])
		{
			d++;
			join->distinct_keys[d] = sorted_keys[i];
			join->offsets[d] = (uint32_t) i;
			join->counts[d] = 0;
		}
		join->counts[d]++;
	}
	free(keys_a);
	free(keys_b);
	keys_a = keys_b = NULL;

	/* The table: at least twice the distinct keys, so probes stay short. */
	while (nslots < 2 * join->ndistinct)
		nslots *= 2;
	join->slots = ga_alloc_array(nslots, sizeof(uint32_t));
	if (join->slots == NULL)
		goto oom;
	memset(join->slots, 0xff, (size_t) nslots * sizeof(uint32_t));
	join->nslots = nslots;
	for (d = 0; d < join->ndistinct; d++)
	{
		uint64_t	mask = (uint64_t) nslots - 1;
		uint64_t	pos = ga_mix64(join->distinct_keys[d]) & mask;

		while (join->slots[pos] != CPU_JOIN_EMPTY)
			pos = (pos + 1) & mask;
		join->slots[pos] = (uint32_t) d;
		if ((d & (CPU_JOIN_WAIT_EVERY_ROWS - 1)) == CPU_JOIN_WAIT_EVERY_ROWS - 1 &&
			join_should_stop(&since_wait, CPU_JOIN_WAIT_EVERY_ROWS, wait, arg))
			goto cancelled;
	}

	join->built = 1;
	join->stats.build_rows = n;
	join->stats.distinct_keys = join->ndistinct;
	join->stats.bytes_sent += n * (int64_t) (sizeof(int64_t) + sizeof(uint32_t));
	join->stats.device_ms += ga_cpu_now_ms() - start;
	ga_status_ok(status);
	return 1;

oom:
	free(keys_a);
	free(keys_b);
	ga_host_free(rows_a);
	ga_host_free(rows_b);
	return ga_failure_set(&join->failure, status, GA_ERR_OUT_OF_MEMORY,
					 "out of host memory building a join on the CPU device");
cancelled:
	free(keys_a);
	free(keys_b);
	ga_host_free(rows_a);
	ga_host_free(rows_b);
	return ga_failure_set(&join->failure, status, GA_ERR_CANCELLED, "the join's build was cancelled");
}

/* The build rows in key order; NULL before a successful build. */
const uint32_t *
ga_cpu_join_sorted_rows(const void *join_impl)
{
	const CpuJoin *join = join_impl;

	return join->built ? join->sorted_rows : NULL;
}

/* Hand out the probe batch, emptied: no rows, every validity bit set, no nulls. */
GaBatch *
ga_cpu_join_next_batch(void *join_impl, GaWaitCallback wait, void *arg,
					   GaStatus *status)
{
	CpuJoin    *join = join_impl;

	(void) wait;
	(void) arg;
	if (!ga_failure_check(&join->failure, status))
		return NULL;
	join->column.type = GA_TYPE_INT64;
	join->column.has_nulls = 0;
	memset(join->column.validity, 0xff, (size_t) (join->batch_rows + 7) / 8);
	join->batch.nrows = 0;
	join->batch.capacity = join->batch_rows;
	join->batch.ncolumns = 1;
	join->batch.columns = &join->column;
	ga_status_ok(status);
	return &join->batch;
}

/* Look every probe row's key up and answer its range of sorted build rows. */
const GaJoinMatches *
ga_cpu_join_probe(void *join_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	CpuJoin    *join = join_impl;
	double		start = ga_cpu_now_ms();
	const GaColumn *col;
	const uint64_t *keys;
	uint64_t	mask;
	int64_t		nrows;
	int64_t		total = 0;
	int64_t		base;
	int64_t		since_wait = 0;

	if (!ga_failure_check(&join->failure, status))
		return NULL;
	if (batch != &join->batch || batch->columns != &join->column)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "the probe batch was not handed out by this join");
		return NULL;
	}
	nrows = batch->nrows;		/* within the capacity: device.c checked */
	col = &join->column;
	keys = col->values;
	mask = (uint64_t) join->nslots - 1;

	for (base = 0; base < nrows; base += CPU_JOIN_WAIT_EVERY_ROWS)
	{
		int64_t		end = nrows - base < CPU_JOIN_WAIT_EVERY_ROWS ? nrows : base + CPU_JOIN_WAIT_EVERY_ROWS;
		int64_t		row;

		for (row = base; row < end; row++)
		{
			uint64_t	key = keys[row];
			uint64_t	pos;
			uint32_t	first = 0,
						count = 0;

			if (!(col->has_nulls && !(col->validity[row >> 3] & (1u << (row & 7)))))
			{
				for (pos = ga_mix64(key) & mask;; pos = (pos + 1) & mask)
				{
					uint32_t	d = join->slots[pos];

					if (d == CPU_JOIN_EMPTY)
						break;
					if (join->distinct_keys[d] == key)
					{
						first = join->offsets[d];
						count = join->counts[d];
						break;
					}
				}
			}
			join->first[row] = first;
			join->count[row] = count;
			total += count;
		}
		if (end < nrows && join_should_stop(&since_wait, end - base, wait, arg))
		{
			ga_failure_set(&join->failure, status, GA_ERR_CANCELLED, "the join's probe was cancelled");
			return NULL;
		}
	}

	join->matches.nrows = nrows;
	join->matches.first = join->first;
	join->matches.count = join->count;
	join->matches.total = total;
	join->stats.probe_batches++;
	join->stats.probe_rows += nrows;
	join->stats.candidates += total;
	join->stats.bytes_sent += nrows * (int64_t) sizeof(int64_t) +
		(col->has_nulls ? (nrows + 7) / 8 : 0);
	join->stats.device_ms += ga_cpu_now_ms() - start;
	ga_status_ok(status);
	return &join->matches;
}

/* Report what the join did so far. */
void
ga_cpu_join_get_stats(const void *join_impl, GaJoinStats *stats)
{
	const CpuJoin *join = join_impl;

	*stats = join->stats;
	stats->transfer_ms = 0;
	stats->gpu_ordinal = -1;
}

/* Free everything the join holds, in any state. */
void
ga_cpu_join_destroy(void *join_impl)
{
	CpuJoin    *join = join_impl;

	if (join == NULL)
		return;
	ga_host_free(join->sorted_rows);
	free(join->distinct_keys);
	free(join->offsets);
	free(join->counts);
	free(join->slots);
	ga_host_free(join->column.values);
	ga_host_free(join->column.validity);
	ga_host_free(join->first);
	ga_host_free(join->count);
	free(join);
}
