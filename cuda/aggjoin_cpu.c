/*-------------------------------------------------------------------------
 *
 * aggjoin_cpu.c
 *	  The CPU device's join-fed aggregation (the "Aggregation fed by a hash
 *	  join" part of gpuagg_device.h): the reference the GPU device is
 *	  compared with, and the fallback when no GPU can take the build side.
 *
 * Build.  The build columns the aggregation reads are copied out of the
 * payload (values, and validity when the column has nulls), and the keyed
 * rows are grouped by key in two passes over the keys: the first inserts
 * every distinct key into an open-addressing table (linear probing, a power
 * of two of slots, at least twice the keyed rows) and counts its rows; an
 * exclusive scan of the counts gives each key's first position; the second
 * pass places every row at its key's next position.  So a key's build rows
 * are one contiguous range, in the order they were given, which is the
 * order the GPU device (a stable radix sort, join_gpu.cu) gives them too.
 * Counting before placing is the "count the matches first" scheme of the
 * GPU hash-join report (Gupta and Murugavel, "Hash-Join Implementation on
 * GPU"), here applied to the build.
 *
 * Submit.  Every probe row is looked up; its pairs (probe row, build row),
 * in build order, and for GA_AGG_JOIN_LEFT one pair with no build row when
 * the key is absent or null, are collected into a piece of at most
 * batch_rows pairs.  A full piece (and the last one) is turned into a
 * joined batch of the request's layout, one column at a time: probe
 * columns gathered from the probe batch, build columns from the copied
 * payload (null for a pair without a build row).  The piece is then
 * aggregated by the CPU aggregation itself (device_cpu.c, through a
 * callback), exactly as if it had been submitted.  A probe batch whose join
 * is empty is aggregated as one empty batch, so that every submit counts at
 * least one batch, as it does without a join.  This is the
 * join-then-aggregate pipeline of He et al. ("Relational joins on graphics
 * processors"), with the joined rows materialised a piece at a time.
 *
 * Only the columns a key or an aggregate reads are copied or gathered.
 * Statistics: input_rows counts probe rows, joined_rows the pairs,
 * join_build_rows the keyed build rows; bytes_sent counts what a GPU would
 * ship of every column (the keys, rows and build columns once, the probe
 * columns of every batch), as the plain CPU aggregation does.
 *
 * Failures (out of memory, cancel) are returned with a status; the caller
 * (device_cpu.c) remembers them.  Nothing here prints or aborts.
 *
 *-------------------------------------------------------------------------
 */
#include "device_impl.h"

#include <stdlib.h>
#include <string.h>

/* Rows of work between two calls of the wait callback. */
#define CPU_AGGJOIN_WAIT_EVERY_ROWS 65536

/* Smallest key table. */
#define CPU_AGGJOIN_MIN_SLOTS 16

/* An empty slot (distinct key indexes stay below it). */
#define CPU_AGGJOIN_EMPTY UINT32_MAX

/* A pair whose probe row found no build row (GA_AGG_JOIN_LEFT). */
#define CPU_AGGJOIN_NO_ROW (-1)

struct CpuAggJoin
{
	/* the request, copied */
	GaAggJoinType type;
	int			key_column;
	int			ncolumns;
	GaValueType *column_types;
	uint8_t    *from_build;
	uint8_t    *used;			/* per column: a key or an aggregate reads it */
	int64_t		batch_rows;

	/* the build side */
	int			built;
	void	  **build_values;	/* per used build column, payload rows */
	uint8_t   **build_validity; /* NULL when the column has no nulls */
	int64_t		nslots;			/* a power of two */
	uint32_t   *slots;			/* a distinct key index or EMPTY */
	int64_t		ndistinct;
	int64_t    *distinct_keys;
	uint32_t   *offsets;		/* first position of each key in key_rows */
	uint32_t   *counts;			/* build rows of each key */
	uint32_t   *key_rows;		/* the keyed build rows, grouped by key */

	/* the piece of joined rows */
	GaBatch		joined;
	int64_t    *pair_probe;		/* per pair: the probe row */
	int64_t    *pair_build;		/* per pair: the build row or NO_ROW */
};

/* Free everything the join-fed state holds, in any state. */
void
ga_cpu_aggjoin_destroy(CpuAggJoin *aj)
{
	int			c;

	if (aj == NULL)
		return;
	for (c = 0; c < aj->ncolumns; c++)
	{
		if (aj->build_values != NULL)
			free(aj->build_values[c]);
		if (aj->build_validity != NULL)
			free(aj->build_validity[c]);
		if (aj->joined.columns != NULL)
		{
			free(aj->joined.columns[c].values);
			free(aj->joined.columns[c].validity);
		}
	}
	free(aj->build_values);
	free(aj->build_validity);
	free(aj->joined.columns);
	free(aj->slots);
	free(aj->distinct_keys);
	free(aj->offsets);
	free(aj->counts);
	free(aj->key_rows);
	free(aj->pair_probe);
	free(aj->pair_build);
	free(aj->column_types);
	free(aj->from_build);
	free(aj->used);
	free(aj);
}

/* Mark the columns that a key or an aggregate of the request reads. */
static void
aggjoin_mark_used(CpuAggJoin *aj, const GaAggRequest *request)
{
	int			i;

	for (i = 0; i < request->nkeys; i++)
		aj->used[request->key_columns[i]] = 1;
	for (i = 0; i < request->naggs; i++)
	{
		const GaAggSpec *spec = &request->aggs[i];

		if (spec->op == GA_AGG_COUNT_ROWS)
			continue;
		aj->used[spec->column] = 1;
		if (spec->op == GA_AGG_COMOMENTS)
			aj->used[spec->column2] = 1;
	}
}

/*
 * Start the join-fed part of an aggregation: copy the join spec and
 * allocate the joined batch (the used columns only) and the pair arrays.
 */
CpuAggJoin *
ga_cpu_aggjoin_create(const GaAggRequest *request, GaStatus *status)
{
	CpuAggJoin *aj;
	int64_t		capacity = request->batch_rows;
	int			n = request->ncolumns;
	int			c;

	aj = calloc(1, sizeof(CpuAggJoin));
	if (aj == NULL)
		goto oom;
	aj->type = request->join->steps[0].type;
	aj->key_column = request->join->steps[0].key_column;
	aj->ncolumns = n;
	aj->batch_rows = capacity;
	aj->column_types = ga_alloc_array(n, sizeof(GaValueType));
	aj->from_build = calloc(n > 0 ? n : 1, 1);
	aj->used = calloc(n > 0 ? n : 1, 1);
	aj->build_values = calloc(n > 0 ? n : 1, sizeof(void *));
	aj->build_validity = calloc(n > 0 ? n : 1, sizeof(uint8_t *));
	aj->joined.columns = calloc(n > 0 ? n : 1, sizeof(GaColumn));
	aj->pair_probe = ga_alloc_array(capacity, sizeof(int64_t));
	aj->pair_build = ga_alloc_array(capacity, sizeof(int64_t));
	if (aj->column_types == NULL || aj->from_build == NULL || aj->used == NULL ||
		aj->build_values == NULL || aj->build_validity == NULL ||
		aj->joined.columns == NULL || aj->pair_probe == NULL || aj->pair_build == NULL)
		goto oom;
	if (n > 0)
	{
		memcpy(aj->column_types, request->column_types, sizeof(GaValueType) * n);
		memcpy(aj->from_build, request->join->from_build, n);
	}
	aggjoin_mark_used(aj, request);

	aj->joined.capacity = capacity;
	aj->joined.ncolumns = n;
	for (c = 0; c < n; c++)
	{
		GaColumn   *col = &aj->joined.columns[c];
		int			width = ga_type_width(aj->column_types[c]);

		col->type = aj->column_types[c];
		if (!aj->used[c])
			continue;
		if (width > 0 && (col->values = ga_alloc_array(capacity, (size_t) width)) == NULL)
			goto oom;
		if ((col->validity = ga_alloc_array((capacity + 7) / 8, 1)) == NULL)
			goto oom;
	}
	ga_status_ok(status);
	return aj;

oom:
	ga_cpu_aggjoin_destroy(aj);
	ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
				  "out of host memory starting a join-fed aggregation on the CPU device");
	return NULL;
}

/*
 * Bytes a GPU would ship of a batch's columns on one side (build = 1: the
 * build columns of a payload, 0: the probe columns of a probe batch).
 */
static int64_t
aggjoin_side_bytes(const CpuAggJoin *aj, const GaBatch *batch, int build)
{
	int64_t		bytes = 0;
	int			c;

	for (c = 0; c < aj->ncolumns; c++)
	{
		const GaColumn *col = &batch->columns[c];

		if (aj->from_build[c] != build)
			continue;
		bytes += batch->nrows * ga_type_width(col->type);
		if (col->has_nulls)
			bytes += (batch->nrows + 7) / 8;
	}
	return bytes;
}

/* Copy the used build columns of the payload (validity only with nulls). */
static int
aggjoin_copy_payload(CpuAggJoin *aj, const GaBatch *payload)
{
	int64_t		nrows = payload->nrows;
	int			c;

	for (c = 0; c < aj->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];
		size_t		width = (size_t) ga_type_width(aj->column_types[c]);

		if (!aj->from_build[c] || !aj->used[c])
			continue;
		if (width > 0)
		{
			aj->build_values[c] = ga_alloc_array(nrows, width);
			if (aj->build_values[c] == NULL)
				return 0;
			if (nrows > 0)
				memcpy(aj->build_values[c], col->values, (size_t) nrows * width);
		}
		if (col->has_nulls)
		{
			aj->build_validity[c] = ga_alloc_array((nrows + 7) / 8, 1);
			if (aj->build_validity[c] == NULL)
				return 0;
			if (nrows > 0)
				memcpy(aj->build_validity[c], col->validity, (size_t) (nrows + 7) / 8);
		}
	}
	return 1;
}

/* The distinct index of key in the table, or -1 when the build lacks it. */
static inline int64_t
aggjoin_lookup(const CpuAggJoin *aj, int64_t key)
{
	uint64_t	mask = (uint64_t) aj->nslots - 1;
	uint64_t	pos;

	for (pos = ga_mix64((uint64_t) key) & mask;; pos = (pos + 1) & mask)
	{
		uint32_t	d = aj->slots[pos];

		if (d == CPU_AGGJOIN_EMPTY)
			return -1;
		if (aj->distinct_keys[d] == key)
			return d;
	}
}

/*
 * Count the wait callback's rows of work and ask it every
 * CPU_AGGJOIN_WAIT_EVERY_ROWS of them; returns nonzero when it says stop.
 */
static int
aggjoin_should_stop(int64_t *since_wait, int64_t rows, GaWaitCallback wait, void *arg)
{
	*since_wait += rows;
	if (*since_wait < CPU_AGGJOIN_WAIT_EVERY_ROWS)
		return 0;
	*since_wait = 0;
	return wait != NULL && wait(arg) != 0;
}

/*
 * Group the keyed build rows by key: pass 1 finds every row's distinct key
 * (inserting new ones) and counts; a scan gives the offsets; pass 2 places
 * the rows in the order given.  Returns 0 on cancel, -1 out of memory.
 */
static int
aggjoin_group_rows(CpuAggJoin *aj, const int64_t *keys, const uint32_t *rows, int64_t n,
				   GaWaitCallback wait, void *arg)
{
	uint32_t   *distinct_of;
	uint32_t   *fill;
	uint64_t	mask;
	int64_t		since_wait = 0;
	int64_t		nslots = CPU_AGGJOIN_MIN_SLOTS;
	int64_t		i,
				d;
	uint32_t	sum;

	while (nslots < 2 * n)
		nslots *= 2;
	aj->nslots = nslots;
	aj->slots = ga_alloc_array(nslots, sizeof(uint32_t));
	aj->distinct_keys = ga_alloc_array(n, sizeof(int64_t));
	aj->counts = ga_alloc_array(n, sizeof(uint32_t));
	aj->offsets = ga_alloc_array(n, sizeof(uint32_t));
	aj->key_rows = ga_alloc_array(n, sizeof(uint32_t));
	distinct_of = ga_alloc_array(n, sizeof(uint32_t));
	if (aj->slots == NULL || aj->distinct_keys == NULL || aj->counts == NULL ||
		aj->offsets == NULL || aj->key_rows == NULL || distinct_of == NULL)
	{
		free(distinct_of);
		return -1;
	}
	memset(aj->slots, 0xff, (size_t) nslots * sizeof(uint32_t));
	mask = (uint64_t) nslots - 1;

	/* Pass 1: distinct keys and their row counts. */
	aj->ndistinct = 0;
	for (i = 0; i < n; i++)
	{
		uint64_t	pos = ga_mix64((uint64_t) keys[i]) & mask;

		for (;; pos = (pos + 1) & mask)
		{
			d = aj->slots[pos] == CPU_AGGJOIN_EMPTY ? -1 : (int64_t) aj->slots[pos];
			if (d < 0)
			{
				d = aj->ndistinct++;
				aj->slots[pos] = (uint32_t) d;
				aj->distinct_keys[d] = keys[i];
				aj->counts[d] = 0;
				break;
			}
			if (aj->distinct_keys[d] == keys[i])
				break;
		}
		aj->counts[d]++;
		distinct_of[i] = (uint32_t) d;
		if (aggjoin_should_stop(&since_wait, 1, wait, arg))
		{
			free(distinct_of);
			return 0;
		}
	}

	/* Offsets: an exclusive scan of the counts (n < 2^32, so no overflow). */
	sum = 0;
	for (d = 0; d < aj->ndistinct; d++)
	{
		aj->offsets[d] = sum;
		sum += aj->counts[d];
	}

	/* Pass 2: every row at its key's next position, in the order given. */
	fill = ga_alloc_array(aj->ndistinct, sizeof(uint32_t));
	if (fill == NULL)
	{
		free(distinct_of);
		return -1;
	}
	if (aj->ndistinct > 0)
		memcpy(fill, aj->offsets, (size_t) aj->ndistinct * sizeof(uint32_t));
	for (i = 0; i < n; i++)
		aj->key_rows[fill[distinct_of[i]]++] = rows[i];
	free(fill);
	free(distinct_of);
	return 1;
}

/*
 * Take the build side: copy the used build columns and group the keyed
 * rows by key.  Statistics: the keyed rows, and the bytes a GPU would ship.
 */
int
ga_cpu_aggjoin_build(CpuAggJoin *aj, int step, const int64_t *keys, const uint32_t *rows,
					 int64_t n, const GaBatch *payload, GaAggStats *stats,
					 GaWaitCallback wait, void *arg, GaStatus *status)
{
	int			grouped;

	(void) step;				/* one step only */

	if (!aggjoin_copy_payload(aj, payload))
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory copying the build side of a join-fed aggregation");
	grouped = aggjoin_group_rows(aj, keys, rows, n, wait, arg);
	if (grouped < 0)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory building the hash table of a join-fed aggregation");
	if (grouped == 0)
		return ga_status_set(status, GA_ERR_CANCELLED,
							 "the join-fed aggregation's build was cancelled");
	aj->built = 1;
	stats->join_build_rows = n;
	stats->bytes_sent += n * (int64_t) (sizeof(int64_t) + sizeof(uint32_t)) +
		aggjoin_side_bytes(aj, payload, 1);
	ga_status_ok(status);
	return 1;
}

/*
 * Copy element src_row of src into element i of dst, for values of `width`
 * bytes (1, 2, 4 or 8).
 */
static inline void
aggjoin_copy_value(void *dst, int64_t i, const void *src, int64_t src_row, int width)
{
	switch (width)
	{
		case 1:
			((uint8_t *) dst)[i] = ((const uint8_t *) src)[src_row];
			break;
		case 2:
			((uint16_t *) dst)[i] = ((const uint16_t *) src)[src_row];
			break;
		case 4:
			((uint32_t *) dst)[i] = ((const uint32_t *) src)[src_row];
			break;
		default:
			((uint64_t *) dst)[i] = ((const uint64_t *) src)[src_row];
			break;
	}
}

/*
 * Fill the joined batch with the piece's n pairs: every used column's
 * values and validity, probe columns from the probe batch, build columns
 * from the payload copy (null where the pair has no build row).
 */
static void
aggjoin_gather(CpuAggJoin *aj, const GaBatch *probe, int64_t n)
{
	int			c;
	int64_t		i;

	for (c = 0; c < aj->ncolumns; c++)
	{
		GaColumn   *dst = &aj->joined.columns[c];
		int			width = ga_type_width(aj->column_types[c]);

		if (!aj->used[c])
			continue;
		dst->has_nulls = 0;
		memset(dst->validity, 0xff, (size_t) (n + 7) / 8);
		if (!aj->from_build[c])
		{
			const GaColumn *src = &probe->columns[c];

			for (i = 0; i < n; i++)
			{
				int64_t		r = aj->pair_probe[i];

				if (ga_column_is_null(src, r))
					ga_column_set_null(dst, i);
				else if (width > 0)
					aggjoin_copy_value(dst->values, i, src->values, r, width);
			}
		}
		else
		{
			const void *values = aj->build_values[c];
			const uint8_t *validity = aj->build_validity[c];

			for (i = 0; i < n; i++)
			{
				int64_t		b = aj->pair_build[i];

				if (b == CPU_AGGJOIN_NO_ROW ||
					(validity != NULL && !(validity[b >> 3] & (1u << (b & 7)))))
					ga_column_set_null(dst, i);
				else if (width > 0)
					aggjoin_copy_value(dst->values, i, values, b, width);
			}
		}
	}
	aj->joined.nrows = n;
}

/*
 * Join a probe batch with the build side and aggregate the joined rows, a
 * piece of at most batch_rows at a time, through `aggregate` (called with
 * `agg`); an empty join is aggregated as one empty piece.
 */
int
ga_cpu_aggjoin_submit(CpuAggJoin *aj, const GaBatch *probe, CpuAggregateFn aggregate,
					  void *agg, GaAggStats *stats, GaWaitCallback wait, void *arg,
					  GaStatus *status)
{
	const GaColumn *key_col = &probe->columns[aj->key_column];
	const int64_t *keys = key_col->values;
	int64_t		nrows = probe->nrows;
	int64_t		npairs = 0;		/* pairs in the piece being formed */
	int64_t		pieces = 0;
	int64_t		since_wait = 0;
	int64_t		r;

/* Aggregate the piece formed so far and start the next one. */
#define AGGJOIN_FLUSH() \
	do { \
		aggjoin_gather(aj, probe, npairs); \
		if (!aggregate(agg, &aj->joined, wait, arg, status)) \
			return 0; \
		stats->joined_rows += npairs; \
		pieces++; \
		if (aggjoin_should_stop(&since_wait, npairs, wait, arg)) \
			return ga_status_set(status, GA_ERR_CANCELLED, \
								 "the join-fed aggregation was cancelled"); \
		npairs = 0; \
	} while (0)

	if (!aj->built)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a join-fed aggregation's batch was submitted before its build side was given");
	for (r = 0; r < nrows; r++)
	{
		int64_t		d = -1;
		int64_t		first,
					count,
					k;

		if (!ga_column_is_null(key_col, r))
			d = aggjoin_lookup(aj, keys[r]);
		if (d < 0)
		{
			if (aj->type != GA_AGG_JOIN_LEFT)
				continue;
			aj->pair_probe[npairs] = r;
			aj->pair_build[npairs] = CPU_AGGJOIN_NO_ROW;
			if (++npairs == aj->batch_rows)
				AGGJOIN_FLUSH();
			continue;
		}
		first = aj->offsets[d];
		count = aj->counts[d];
		for (k = 0; k < count; k++)
		{
			aj->pair_probe[npairs] = r;
			aj->pair_build[npairs] = aj->key_rows[first + k];
			if (++npairs == aj->batch_rows)
				AGGJOIN_FLUSH();
		}
	}
	if (npairs > 0 || pieces == 0)
		AGGJOIN_FLUSH();
#undef AGGJOIN_FLUSH

	stats->input_rows += nrows;
	stats->bytes_sent += aggjoin_side_bytes(aj, probe, 0);
	ga_status_ok(status);
	return 1;
}
