/*-------------------------------------------------------------------------
 *
 * cpu/aggjoin.c
 *	  The CPU device's aggjoin (the "Aggregation fed by a hash
 *	  join" part of gpuagg_device.h): the reference the GPU device is
 *	  compared with, and the fallback when no GPU can take the build sides.
 *
 * Build (once per join step).  The step's build columns that the
 * aggregation or a later step's key reads are copied out of the payload
 * (values, and validity when the column has nulls), and the keyed rows are
 * grouped by key in two passes over the keys: the first inserts every
 * distinct key into an open-addressing table (linear probing, a power of
 * two of slots, at least twice the keyed rows) and counts its rows; an
 * exclusive scan of the counts gives each key's first position; the second
 * pass places every row at its key's next position.  So a key's build rows
 * are one contiguous range, in the order they were given, which is the
 * order the GPU device (a stable radix sort, gpu/hashjoin.cu) gives them too.
 * Counting before placing is the "count the matches first" scheme of the
 * cuckoo hash join report, here applied to the build.
 *
 * Submit.  The rows of every step are kept as sources, not values: a row
 * of level s (the rows of step s; level 0 is the probe batch) is its probe
 * row and, for every step t <= s, its build row of step t (or NO_ROW for
 * a LEFT or ANTI row without a match), so that any column of the row is
 * read where it lives, and a row never depends on the level it came from.
 * Each level holds at most batch_rows rows (past level 0, piece_rows:
 * fewer when a piece gathers strings).  Levels are filled depth
 * first: a level that becomes full is drained at once (each of its rows
 * looked up in the next step's table and its rows of the next level
 * appended, draining that one in turn when full); draining the last level
 * gathers its rows into a joined batch of the request's layout (probe
 * columns from the probe batch, build columns from the copied payloads,
 * null for NO_ROW) and aggregates it through the CPU aggregation itself
 * (cpu/hashagg.c, through a callback), exactly as if it had been
 * submitted.  At the end of a submit the partly filled levels are drained
 * in step order.  So memory stays at a few batches per step however large
 * the join, every piece but a submit's last is full (a submit counts
 * max(1, ceil(rows / piece_rows)) batches, as the GPU device does with
 * batch_rows), and a
 * probe batch whose join is empty is aggregated as one empty batch.  This
 * is the join-then-aggregate pipeline of He et al. ("Relational joins on
 * graphics processors"), with every step's rows materialised a piece at a
 * time.  With one step, level 1 is the piece of joined rows, filled in one
 * pass over the probe rows.
 *
 * Hashed steps.  A step of several keys, or of string keys, is built on
 * device.c's hashes of its build rows' keys (join_key.h), like a step of
 * one key; a row is looked up by the hash of its key columns' values (a
 * string's as ga_hash_bytes of its bytes) under the step's seed (no match
 * when one is null), and a hash found is rechecked: the row's key is
 * compared with the build key columns of the hash's first build row
 * (strings byte by byte), and a different key is no match.  The seed
 * leaves the build's hashes free of collisions, so the first build row
 * speaks for all of them.  A string join key column is only ever read
 * there: its bytes are copied with the build, and never gathered.
 *
 * String group keys.  A group key of GA_TYPE_STRING (a probe column, or a
 * build column whose bytes are copied with the build) is gathered into
 * the joined batch as such a column (cpu/gather.c): each row's bytes
 * appended to the column's bytes, which grow as a piece needs, and its
 * end offset; a null or missing row takes none.  The CPU aggregation then
 * groups the piece by those bytes as it groups any batch's.  Such pieces
 * hold at most CPU_AGGJOIN_STRING_PIECE_ROWS rows, so that the bytes they
 * gather stay in the cache for the aggregation, which reads them again
 * (a piece of a million rows of TPC-H Q10's keys would be some hundred MB
 * of fresh memory).
 *
 * Only the columns a key or an aggregate reads are gathered, and only those
 * and what the steps read (key columns, build key columns included, and
 * their filters' operands) are copied.
 * Derived columns are not gathered but computed in the piece by the CPU
 * aggregation (cpu/hashagg.c), from their operands and NaN flags, which are
 * gathered like any read column.  Statistics: input_rows counts probe
 * rows, joined_rows the last step's rows, join_build_rows the keyed build
 * rows of every step; bytes_sent counts what a GPU would ship of every
 * column (each step's keys (or hashes), rows and build columns once, the
 * probe columns of every batch, derived columns never), as the plain CPU
 * aggregation does.
 *
 * RIGHT and FULL steps join like INNER and LEFT, and mark every build row
 * of the step that a row matched in a byte per payload row (the payload of
 * every read column is copied for all its rows, keyed or not).  At finish,
 * before the groups are formed, the steps' unmatched build rows are made,
 * step by step from the first: a step's are put in its level as rows whose
 * every earlier source is NO_ROW (so every probe and earlier build column
 * is null), and drained like any level: joined at the steps after it
 * (where their null keys never match, and where a later RIGHT or FULL step
 * marks what they match before its own unmatched rows are listed), then
 * gathered, derived columns computed, aggregated, counted in joined_rows
 * and as batches, full pieces but the last.
 *
 * The filter (an INNER join's other conditions, gpuagg_device.h): the
 * gather of the last level runs its program (row_filter.h) over each row,
 * reading the operands where they live, and gathers only the rows it
 * keeps; the piece still counts as a batch when it keeps none, and
 * joined_rows counts the rows kept.
 *
 * A step with a filter of its own, and a SEMI step, join a level's rows in
 * two passes (aggjoin_join_level): each row's pairs with its key's build
 * rows, the program run over each pair (the step's build columns read from
 * the pair's build row), the passing pairs appended (INNER, LEFT) and the
 * rows that had one noted; then the rows a LEFT or ANTI step null-extends
 * (none passed) or a SEMI step keeps (one passed).  This is the order the
 * GPU device writes them in, so both form the same pieces.
 *
 * Failures (out of memory, cancel) are returned with a status; the caller
 * (cpu/hashagg.c) remembers them.  Nothing here prints or aborts.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "gpuagg_hash.h"
#include "join_key.h"
#include "row_filter.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Rows of work between two calls of the wait callback. */
#define CPU_AGGJOIN_WAIT_EVERY_ROWS 65536

/* Smallest key table. */
#define CPU_AGGJOIN_MIN_SLOTS 16

/* An empty slot (distinct key indexes stay below it). */
#define CPU_AGGJOIN_EMPTY UINT32_MAX

/*
 * The most joined rows a piece holds when it gathers strings (group keys):
 * their bytes then stay in the cache between the gather and the
 * aggregation, which reads them again.
 */
#define CPU_AGGJOIN_STRING_PIECE_ROWS 65536


/* The source of a row that found no build row at a step (LEFT, ANTI). */
#define CPU_AGGJOIN_NO_ROW GA_CPU_NO_ROW

/* One step's build side: its keyed rows grouped by key. */
typedef struct CpuJoinTable
{
	int64_t		nslots;			/* a power of two */
	uint32_t   *slots;			/* a distinct key index or EMPTY */
	int64_t		ndistinct;
	int64_t    *distinct_keys;
	uint32_t   *offsets;		/* first position of each key in key_rows */
	uint32_t   *counts;			/* build rows of each key */
	uint32_t   *key_rows;		/* the keyed build rows, grouped by key */
} CpuJoinTable;

/*
 * The rows of one level: source[0][i] is row i's probe row, source[t][i]
 * (t = 1 .. the level) its build row of step t or NO_ROW.
 */
typedef struct CpuJoinLevel
{
	int64_t		nrows;
	int64_t    *source[GA_AGG_MAX_JOIN_STEPS + 1];
} CpuJoinLevel;

struct CpuAggJoin
{
	/* the request, copied */
	int			nsteps;
	GaAggJoinStep steps[GA_AGG_MAX_JOIN_STEPS];
	int			ncolumns;
	GaValueType *column_types;
	uint8_t    *from_build;		/* per column: 0 probe, s build of step s */
	uint8_t    *aggregated;		/* per column: a key, an aggregate or a
								 * derived column reads it */
	uint8_t    *step_read;		/* per column: a step's key column, build
								 * key column or filter operand */
	uint8_t    *derived;		/* per column: computed in the piece, not
								 * gathered */
	int64_t		batch_rows;
	int64_t		piece_rows;		/* rows of a full level past level 0: batch_rows,
								 * or fewer when strings are gathered */
	int			nfilter;		/* the filter over the last step's rows */
	GaFilterStep filter[GA_FILTER_MAX_STEPS];

	/* the build sides */
	int			nbuilt;
	void	  **build_values;	/* per copied build column, payload rows */
	uint8_t   **build_bytes;	/* ... a string column's bytes, else NULL */
	GaColumn   *build_columns;	/* ... all three as a column */
	uint8_t   **build_validity; /* NULL when the column has no nulls */
	CpuJoinTable tables[GA_AGG_MAX_JOIN_STEPS];
	uint64_t	key_start[GA_AGG_MAX_JOIN_STEPS];	/* hashed: the hash's start
													 * under the build's seed */

	/* a RIGHT or FULL step: which of its payload rows a row matched */
	int64_t		build_rows[GA_AGG_MAX_JOIN_STEPS];	/* each step's payload rows */
	uint8_t    *matched[GA_AGG_MAX_JOIN_STEPS]; /* build_rows bytes, 1 =
												 * matched; NULL unless RIGHT
												 * or FULL and built */
	int			unmatched_done; /* the unmatched rows were aggregated */

	/* levels 0 .. nsteps (level 0's sources: 0, 1, 2, ...) and the piece */
	CpuJoinLevel levels[GA_AGG_MAX_JOIN_STEPS + 1];
	GaBatch		joined;
	int64_t    *kept;			/* with a filter: the last level's rows it
								 * keeps, batch_rows entries */
	uint8_t    *passed[GA_AGG_MAX_JOIN_STEPS];	/* a step with a filter of its
												 * own or SEMI: per row of the
												 * level before it, whether a
												 * pair passed; batch_rows
												 * bytes, else NULL */
};

/* What one submit works with while it drains the levels. */
typedef struct CpuAggJoinRun
{
	CpuAggJoin *aj;
	const GaBatch *probe;
	CpuAggregateFn aggregate;
	void	   *agg;
	GaAggStats *stats;
	GaWaitCallback wait;
	void	   *arg;
	GaStatus   *status;
	int64_t		pieces;			/* pieces aggregated so far */
	int64_t		since_wait;		/* rows since the wait callback was asked */
} CpuAggJoinRun;

/* Free one step's table arrays. */
static void
aggjoin_free_table(CpuJoinTable *table)
{
	free(table->slots);
	free(table->distinct_keys);
	free(table->offsets);
	free(table->counts);
	free(table->key_rows);
}

/* Free everything the aggjoin state holds, in any state. */
void
ga_cpu_aggjoin_destroy(CpuAggJoin *aj)
{
	int			c,
				s,
				t;

	if (aj == NULL)
		return;
	for (c = 0; c < aj->ncolumns; c++)
	{
		if (aj->build_values != NULL)
			free(aj->build_values[c]);
		if (aj->build_validity != NULL)
			free(aj->build_validity[c]);
		if (aj->build_bytes != NULL)
			free(aj->build_bytes[c]);
		if (aj->joined.columns != NULL)
		{
			free(aj->joined.columns[c].values);
			free(aj->joined.columns[c].validity);
			free(aj->joined.columns[c].bytes);
		}
	}
	for (s = 0; s < GA_AGG_MAX_JOIN_STEPS; s++)
	{
		aggjoin_free_table(&aj->tables[s]);
		free(aj->matched[s]);
		free(aj->passed[s]);
	}
	for (s = 0; s <= GA_AGG_MAX_JOIN_STEPS; s++)
		for (t = 0; t <= GA_AGG_MAX_JOIN_STEPS; t++)
			free(aj->levels[s].source[t]);
	free(aj->build_values);
	free(aj->build_validity);
	free(aj->build_bytes);
	free(aj->build_columns);
	free(aj->joined.columns);
	free(aj->column_types);
	free(aj->from_build);
	free(aj->aggregated);
	free(aj->step_read);
	free(aj->derived);
	free(aj->kept);
	free(aj);
}

/*
 * Mark the columns that a key, an aggregate or the filter reads, the
 * operands and NaN flags of the derived columns, the derived columns
 * themselves, and what the steps read: their keys (a step of several keys:
 * its key columns and build key columns) and their filters' operands.
 */
static void
aggjoin_mark_read(CpuAggJoin *aj, const GaAggRequest *request)
{
	int			i,
				s;

	for (i = 0; i < request->nkeys; i++)
		aj->aggregated[request->key_columns[i]] = 1;
	for (i = 0; i < request->naggs; i++)
	{
		const GaAggSpec *spec = &request->aggs[i];

		if (spec->op == GA_AGG_COUNT_ROWS)
			continue;
		aj->aggregated[spec->column] = 1;
		if (spec->op == GA_AGG_COMOMENTS)
			aj->aggregated[spec->column2] = 1;
	}
	for (i = 0; i < aj->nfilter; i++)
	{
		if (aj->filter[i].op == GA_FILTER_BOOL || aj->filter[i].op == GA_FILTER_COMPARE)
			aj->aggregated[aj->filter[i].column] = 1;
		if (aj->filter[i].op == GA_FILTER_COMPARE)
			aj->aggregated[aj->filter[i].column2] = 1;
	}
	for (i = 0; i < request->nderived; i++)
	{
		const GaDerivedColumn *dc = &request->derived[i];

		aj->derived[dc->column] = 1;
		for (s = 0; s < dc->nsteps; s++)
			if (dc->steps[s].op == GA_EXPR_COLUMN)
			{
				aj->aggregated[dc->steps[s].column] = 1;
				if (dc->steps[s].nan_column >= 0)
					aj->aggregated[dc->steps[s].nan_column] = 1;
			}
	}
	for (s = 0; s < aj->nsteps; s++)
	{
		const GaAggJoinStep *step = &aj->steps[s];

		for (i = 0; i < step->nfilter; i++)
		{
			if (step->filter[i].op == GA_FILTER_BOOL || step->filter[i].op == GA_FILTER_COMPARE)
				aj->step_read[step->filter[i].column] = 1;
			if (step->filter[i].op == GA_FILTER_COMPARE)
				aj->step_read[step->filter[i].column2] = 1;
		}
		if (!ga_join_step_hashed(step))
		{
			aj->step_read[step->key_column] = 1;
			continue;
		}
		for (i = 0; i < step->nkeys; i++)
		{
			aj->step_read[step->key_columns[i]] = 1;
			aj->step_read[step->build_key_columns[i]] = 1;
		}
	}
}

/*
 * Whether step `step` joins a level's rows in two passes (its pairs, then
 * the rows a pair's passing or not decides: aggjoin_join_level): it has a
 * filter of its own, or is a SEMI join.
 */
static inline int
aggjoin_checks_pairs(const GaAggJoinStep *step)
{
	return step->nfilter > 0 || step->type == GA_AGGJOIN_SEMI;
}

/*
 * Allocate the levels' sources (level s has sources 0 .. s; level 0's are
 * the row numbers themselves) and the joined batch (the aggregated columns
 * only).  Returns 0 when out of memory.
 */
static int
aggjoin_alloc_pieces(CpuAggJoin *aj)
{
	int64_t		capacity = aj->batch_rows;
	int64_t		i;
	int			c,
				s,
				t;

	for (s = 0; s <= aj->nsteps; s++)
		for (t = 0; t <= s; t++)
			if ((aj->levels[s].source[t] = ga_alloc_array(capacity, sizeof(int64_t))) == NULL)
				return 0;
	for (i = 0; i < capacity; i++)
		aj->levels[0].source[0][i] = i;
	if (aj->nfilter > 0 && (aj->kept = ga_alloc_array(capacity, sizeof(int64_t))) == NULL)
		return 0;
	for (s = 0; s < aj->nsteps; s++)
		if (aggjoin_checks_pairs(&aj->steps[s]) &&
			(aj->passed[s] = ga_alloc_array(capacity, 1)) == NULL)
			return 0;

	aj->joined.capacity = capacity;
	aj->joined.ncolumns = aj->ncolumns;
	for (c = 0; c < aj->ncolumns; c++)
	{
		GaColumn   *col = &aj->joined.columns[c];
		int			width = ga_type_width(aj->column_types[c]);

		col->type = aj->column_types[c];
		if (!aj->aggregated[c])
			continue;
		if (width > 0 && (col->values = ga_alloc_array(capacity, (size_t) width)) == NULL)
			return 0;
		if ((col->validity = ga_alloc_array((capacity + 7) / 8, 1)) == NULL)
			return 0;
	}
	return 1;
}

/*
 * Start the aggjoin part of an aggregation: copy the join spec and
 * allocate the levels and the joined batch.
 */
CpuAggJoin *
ga_cpu_aggjoin_create(const GaAggRequest *request, GaStatus *status)
{
	CpuAggJoin *aj;
	int			n = request->ncolumns;
	int			i;

	aj = calloc(1, sizeof(CpuAggJoin));
	if (aj == NULL)
		goto oom;
	aj->nsteps = request->join->nsteps;
	memcpy(aj->steps, request->join->steps, sizeof(GaAggJoinStep) * aj->nsteps);
	aj->nfilter = request->join->nfilter;
	memcpy(aj->filter, request->join->filter, sizeof(GaFilterStep) * aj->nfilter);
	aj->ncolumns = n;
	aj->batch_rows = request->batch_rows;
	aj->column_types = ga_alloc_array(n, sizeof(GaValueType));
	aj->from_build = calloc(n > 0 ? n : 1, 1);
	aj->aggregated = calloc(n > 0 ? n : 1, 1);
	aj->step_read = calloc(n > 0 ? n : 1, 1);
	aj->derived = calloc(n > 0 ? n : 1, 1);
	aj->build_values = calloc(n > 0 ? n : 1, sizeof(void *));
	aj->build_validity = calloc(n > 0 ? n : 1, sizeof(uint8_t *));
	aj->build_bytes = calloc(n > 0 ? n : 1, sizeof(uint8_t *));
	aj->build_columns = calloc(n > 0 ? n : 1, sizeof(GaColumn));
	aj->joined.columns = calloc(n > 0 ? n : 1, sizeof(GaColumn));
	if (aj->column_types == NULL || aj->from_build == NULL || aj->aggregated == NULL ||
		aj->step_read == NULL || aj->derived == NULL || aj->build_values == NULL || aj->build_validity == NULL ||
		aj->build_bytes == NULL || aj->build_columns == NULL || aj->joined.columns == NULL)
		goto oom;
	if (n > 0)
	{
		memcpy(aj->column_types, request->column_types, sizeof(GaValueType) * n);
		memcpy(aj->from_build, request->join->from_build, n);
	}
	aggjoin_mark_read(aj, request);
	aj->piece_rows = aj->batch_rows;
	for (i = 0; i < n; i++)
		if (aj->aggregated[i] && aj->column_types[i] == GA_TYPE_STRING)
			aj->piece_rows = (aj->batch_rows < CPU_AGGJOIN_STRING_PIECE_ROWS ?
				aj->batch_rows : CPU_AGGJOIN_STRING_PIECE_ROWS);
	if (!aggjoin_alloc_pieces(aj))
		goto oom;
	ga_status_ok(status);
	return aj;

oom:
	ga_cpu_aggjoin_destroy(aj);
	ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
				  "out of host memory starting an aggjoin on the CPU device");
	return NULL;
}

/*
 * Bytes a GPU would ship of a batch's columns from one origin (side 0: the
 * probe columns of a probe batch, s: the build columns of step s's
 * payload).
 */
static int64_t
aggjoin_side_bytes(const CpuAggJoin *aj, const GaBatch *batch, int side)
{
	int64_t		bytes = 0;
	int			c;

	for (c = 0; c < aj->ncolumns; c++)
	{
		const GaColumn *col = &batch->columns[c];

		if (aj->from_build[c] != side || aj->derived[c])
			continue;
		bytes += batch->nrows * ga_type_width(col->type);
		if (col->type == GA_TYPE_STRING)
			bytes += ga_string_used(col, batch->nrows);
		if (col->has_nulls)
			bytes += (batch->nrows + 7) / 8;
	}
	return bytes;
}

/*
 * Copy the build columns of step `side` that are read (by the aggregation,
 * as a later step's key or as the step's own build key) out of the
 * payload (validity only with nulls; a string column's bytes too).
 */
static int
aggjoin_copy_payload(CpuAggJoin *aj, const GaBatch *payload, int side)
{
	int64_t		nrows = payload->nrows;
	int			c;

	for (c = 0; c < aj->ncolumns; c++)
	{
		const GaColumn *col = &payload->columns[c];
		size_t		width = (size_t) ga_type_width(aj->column_types[c]);

		if (aj->from_build[c] != side || !(aj->aggregated[c] || aj->step_read[c]))
			continue;
		if (width > 0)
		{
			aj->build_values[c] = ga_alloc_array(nrows, width);
			if (aj->build_values[c] == NULL)
				return 0;
			if (nrows > 0)
				memcpy(aj->build_values[c], col->values, (size_t) nrows * width);
		}
		if (aj->column_types[c] == GA_TYPE_STRING)
		{
			size_t		used = ga_string_used(col, nrows);

			aj->build_bytes[c] = malloc(used > 0 ? used : 1);
			if (aj->build_bytes[c] == NULL)
				return 0;
			if (used > 0)
				memcpy(aj->build_bytes[c], col->bytes, used);
		}
		if (col->has_nulls)
		{
			aj->build_validity[c] = ga_alloc_array((nrows + 7) / 8, 1);
			if (aj->build_validity[c] == NULL)
				return 0;
			if (nrows > 0)
				memcpy(aj->build_validity[c], col->validity, (size_t) (nrows + 7) / 8);
		}
		aj->build_columns[c].type = aj->column_types[c];
		aj->build_columns[c].values = aj->build_values[c];
		aj->build_columns[c].validity = aj->build_validity[c];
		aj->build_columns[c].has_nulls = aj->build_validity[c] != NULL;
		aj->build_columns[c].bytes = aj->build_bytes[c];
	}
	return 1;
}

/* The distinct index of key in a step's table, or -1 when the build lacks it. */
static inline int64_t
aggjoin_lookup(const CpuJoinTable *table, int64_t key)
{
	uint64_t	mask = (uint64_t) table->nslots - 1;
	uint64_t	pos;

	for (pos = ga_mix64((uint64_t) key) & mask;; pos = (pos + 1) & mask)
	{
		uint32_t	d = table->slots[pos];

		if (d == CPU_AGGJOIN_EMPTY)
			return -1;
		if (table->distinct_keys[d] == key)
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
 * Group a step's keyed build rows by key: pass 1 finds every row's
 * distinct key (inserting new ones) and counts; a scan gives the offsets;
 * pass 2 places the rows in the order given.  Returns 0 on cancel, -1 out
 * of memory.
 */
static int
aggjoin_group_rows(CpuJoinTable *table, const int64_t *keys, const uint32_t *rows, int64_t n,
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
	table->nslots = nslots;
	table->slots = ga_alloc_array(nslots, sizeof(uint32_t));
	table->distinct_keys = ga_alloc_array(n, sizeof(int64_t));
	table->counts = ga_alloc_array(n, sizeof(uint32_t));
	table->offsets = ga_alloc_array(n, sizeof(uint32_t));
	table->key_rows = ga_alloc_array(n, sizeof(uint32_t));
	distinct_of = ga_alloc_array(n, sizeof(uint32_t));
	if (table->slots == NULL || table->distinct_keys == NULL || table->counts == NULL ||
		table->offsets == NULL || table->key_rows == NULL || distinct_of == NULL)
	{
		free(distinct_of);
		return -1;
	}
	memset(table->slots, 0xff, (size_t) nslots * sizeof(uint32_t));
	mask = (uint64_t) nslots - 1;

	/* Pass 1: distinct keys and their row counts. */
	table->ndistinct = 0;
	for (i = 0; i < n; i++)
	{
		uint64_t	pos = ga_mix64((uint64_t) keys[i]) & mask;

		for (;; pos = (pos + 1) & mask)
		{
			d = table->slots[pos] == CPU_AGGJOIN_EMPTY ? -1 : (int64_t) table->slots[pos];
			if (d < 0)
			{
				d = table->ndistinct++;
				table->slots[pos] = (uint32_t) d;
				table->distinct_keys[d] = keys[i];
				table->counts[d] = 0;
				break;
			}
			if (table->distinct_keys[d] == keys[i])
				break;
		}
		table->counts[d]++;
		distinct_of[i] = (uint32_t) d;
		if (aggjoin_should_stop(&since_wait, 1, wait, arg))
		{
			free(distinct_of);
			return 0;
		}
	}

	/* Offsets: an exclusive scan of the counts (n < 2^32, so no overflow). */
	sum = 0;
	for (d = 0; d < table->ndistinct; d++)
	{
		table->offsets[d] = sum;
		sum += table->counts[d];
	}

	/* Pass 2: every row at its key's next position, in the order given. */
	fill = ga_alloc_array(table->ndistinct, sizeof(uint32_t));
	if (fill == NULL)
	{
		free(distinct_of);
		return -1;
	}
	if (table->ndistinct > 0)
		memcpy(fill, table->offsets, (size_t) table->ndistinct * sizeof(uint32_t));
	for (i = 0; i < n; i++)
		table->key_rows[fill[distinct_of[i]]++] = rows[i];
	free(fill);
	free(distinct_of);
	return 1;
}

/* Whether step type `type` also emits the build rows that nothing matched. */
static inline int
aggjoin_keeps_unmatched_build(GaAggJoinType type)
{
	return type == GA_AGGJOIN_RIGHT || type == GA_AGGJOIN_FULL;
}

/*
 * Take the build side of step `step` (0-based): copy its read build
 * columns and group its keyed rows by key (a step of several keys: by the
 * hash of its key under key_seed, kept for the lookups); for a RIGHT or
 * FULL step, also start a cleared matched flag per payload row.
 * Statistics: the keyed rows, and the bytes a GPU would ship.
 */
int
ga_cpu_aggjoin_build(CpuAggJoin *aj, int step, const int64_t *keys, const uint32_t *rows,
					 int64_t n, uint64_t key_seed, const GaBatch *payload, GaAggStats *stats,
					 GaWaitCallback wait, void *arg, GaStatus *status)
{
	int			grouped;

	aj->key_start[step] = ga_join_key_hash_start(key_seed);

	if (!aggjoin_copy_payload(aj, payload, step + 1))
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory copying the build side of an aggjoin");
	aj->build_rows[step] = payload->nrows;
	if (aggjoin_keeps_unmatched_build(aj->steps[step].type))
	{
		free(aj->matched[step]);
		aj->matched[step] = calloc(payload->nrows > 0 ? (size_t) payload->nrows : 1, 1);
		if (aj->matched[step] == NULL)
			return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
								 "out of host memory for the matched flags of an aggjoin's right or full join");
	}
	grouped = aggjoin_group_rows(&aj->tables[step], keys, rows, n, wait, arg);
	if (grouped < 0)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory building the hash table of an aggjoin");
	if (grouped == 0)
		return ga_status_set(status, GA_ERR_CANCELLED,
							 "the aggjoin's build was cancelled");
	aj->nbuilt++;
	stats->join_build_rows += n;
	stats->bytes_sent += n * (int64_t) (sizeof(int64_t) + sizeof(uint32_t)) +
		aggjoin_side_bytes(aj, payload, step + 1);
	ga_status_ok(status);
	return 1;
}

/*
 * Where column c lives: the probe batch's or its step's copied payload's
 * arrays (*validity NULL when the column has no nulls; both NULL for a
 * probe column when there is no probe batch: the unmatched build rows at
 * finish, whose probe sources are all NO_ROW).  Returns the
 * column's side (0 probe, s step s): a level's source[side][i] is the row
 * of those arrays that row i reads, or NO_ROW when it has none (null).
 */
static inline int
aggjoin_column_home(const CpuAggJoin *aj, const GaBatch *probe, int c, const void **values,
					const uint8_t **validity)
{
	int			side = aj->from_build[c];

	if (side == 0 && probe == NULL)
	{
		*values = NULL;
		*validity = NULL;
	}
	else if (side == 0)
	{
		const GaColumn *col = &probe->columns[c];

		*values = col->values;
		*validity = col->has_nulls ? col->validity : NULL;
	}
	else
	{
		*values = aj->build_values[c];
		*validity = aj->build_validity[c];
	}
	return side;
}

/*
 * Column c of row p of a level as a filter operand: read where the column
 * lives, null when the row has no source on its side or the value is null.
 * A column of side pair_side (a step's, when its own filter checks a pair)
 * is read from build row pair_row instead.
 */
static GaFilterValue
aggjoin_filter_operand(const CpuAggJoin *aj, const GaBatch *probe, const CpuJoinLevel *level,
					   int64_t p, int pair_side, int64_t pair_row, int c)
{
	const void *values;
	const uint8_t *validity;
	int			side = aggjoin_column_home(aj, probe, c, &values, &validity);
	int64_t		r = side == pair_side ? pair_row : level->source[side][p];
	int			valid = r != CPU_AGGJOIN_NO_ROW &&
		(validity == NULL || (validity[r >> 3] & (1u << (r & 7))));

	return ga_filter_read(values, aj->column_types[c], r, valid);
}

/*
 * Whether a filter program (row_filter.h) leaves true for row p of level
 * `level`, with build row pair_row on side pair_side (-1: none; a step's
 * own filter checks a pair of the level's row and one of its build rows).
 */
static int
aggjoin_filter_passes(const CpuAggJoin *aj, const GaBatch *probe, const GaFilterStep *filter,
					  int nfilter, const CpuJoinLevel *level, int64_t p, int pair_side,
					  int64_t pair_row)
{
	GaFilterStack stack;
	int			i;

	stack.depth = 0;
	for (i = 0; i < nfilter; i++)
	{
		const GaFilterStep *step = &filter[i];
		GaFilterValue a = {0, 0, 0, 0};
		GaFilterValue b = {0, 0, 0, 0};

		if (step->op == GA_FILTER_BOOL || step->op == GA_FILTER_COMPARE)
			a = aggjoin_filter_operand(aj, probe, level, p, pair_side, pair_row, step->column);
		if (step->op == GA_FILTER_COMPARE)
			b = aggjoin_filter_operand(aj, probe, level, p, pair_side, pair_row, step->column2);
		ga_filter_apply(&stack, step, a, b);
	}
	return ga_filter_result(&stack);
}

/*
 * List in aj->kept the rows of the last level that the filter keeps (its
 * program leaves true for them: row_filter.h); returns how many.
 */
static int64_t
aggjoin_filter_rows(CpuAggJoin *aj, const GaBatch *probe)
{
	const CpuJoinLevel *level = &aj->levels[aj->nsteps];
	int64_t		kept = 0;
	int64_t		p;

	for (p = 0; p < level->nrows; p++)
		if (aggjoin_filter_passes(aj, probe, aj->filter, aj->nfilter, level, p, -1, 0))
			aj->kept[kept++] = p;
	return kept;
}

/*
 * Fill the joined batch with the last level's rows (with a filter, the
 * rows it keeps): every aggregated column's values and validity, read
 * where each row's column lives (derived columns are left to the
 * aggregation, which computes them); a string column's bytes too.
 * Returns 0 (status set) when a string column cannot grow.
 */
static int
aggjoin_gather(CpuAggJoin *aj, const GaBatch *probe, GaStatus *status)
{
	const CpuJoinLevel *level = &aj->levels[aj->nsteps];
	int64_t		n = level->nrows;
	const int64_t *rows = NULL;
	int			c;

	if (aj->nfilter > 0)
	{
		n = aggjoin_filter_rows(aj, probe);
		rows = aj->kept;
	}
	for (c = 0; c < aj->ncolumns; c++)
	{
		GaColumn   *dst = &aj->joined.columns[c];
		const void *values;
		const uint8_t *validity;
		const int64_t *source;
		int			side;

		if (!aj->aggregated[c] || aj->derived[c])
			continue;
		side = aggjoin_column_home(aj, probe, c, &values, &validity);
		source = level->source[side];
		if (aj->column_types[c] != GA_TYPE_STRING)
			ga_cpu_gather_values(dst, values, validity, source, rows, n,
								 ga_type_width(aj->column_types[c]));
		else if (!ga_cpu_gather_strings(dst, side > 0 ? &aj->build_columns[c] :
										probe != NULL ? &probe->columns[c] : NULL,
										source, rows, n, status))
			return 0;
	}
	aj->joined.nrows = n;
	return 1;
}

static int	aggjoin_drain(CpuAggJoinRun *run, int level);

/*
 * Append to level s a row: row p of level s - 1 with step s's build row b
 * (or NO_ROW); drain the level when it becomes full.
 */
static inline int
aggjoin_append(CpuAggJoinRun *run, int s, int64_t p, int64_t b)
{
	CpuJoinLevel *from = &run->aj->levels[s - 1];
	CpuJoinLevel *to = &run->aj->levels[s];
	int64_t		n = to->nrows;
	int			t;

	for (t = 0; t < s; t++)
		to->source[t][n] = from->source[t][p];
	to->source[s][n] = b;
	to->nrows = n + 1;
	if (to->nrows == run->aj->piece_rows)
		return aggjoin_drain(run, s);
	return 1;
}

/*
 * The value of int64 column c in row p of level `level` into *value; 0
 * when it is null there (also when the row has no source on the column's
 * side).
 */
static inline int
aggjoin_level_value(const CpuAggJoinRun *run, int level, int64_t p, int c, int64_t *value)
{
	const void *values;
	const uint8_t *validity;
	int			side = aggjoin_column_home(run->aj, run->probe, c, &values, &validity);
	int64_t		r = run->aj->levels[level].source[side][p];

	if (r == CPU_AGGJOIN_NO_ROW || (validity != NULL && !(validity[r >> 3] & (1u << (r & 7)))))
		return 0;
	*value = ((const int64_t *) values)[r];
	return 1;
}

/*
 * Key column c of row p of level `level`: the column holding it (a probe
 * column, or the copy of a build column) and its row there, into *row;
 * NULL when it is null there (also when the row has no source on the
 * column's side).
 */
static inline const GaColumn *
aggjoin_level_key(const CpuAggJoinRun *run, int level, int64_t p, int c, int64_t *row)
{
	const CpuAggJoin *aj = run->aj;
	int			side = aj->from_build[c];
	int64_t		r = aj->levels[level].source[side][p];
	const GaColumn *col;

	/* no source (an unmatched build row of a RIGHT or FULL step has no probe row) */
	if (r == CPU_AGGJOIN_NO_ROW)
		return NULL;
	col = side == 0 ? &run->probe->columns[c] : &aj->build_columns[c];
	if (ga_column_is_null(col, r))
		return NULL;
	*row = r;
	return col;
}

/*
 * The distinct index of the build key that row p of level s - 1 matches
 * at step s, or -1 for none (a null key included).  A hashed step: the
 * row's key columns hashed under the step's seed (join_key.h) and looked
 * up, then the key rechecked against the first build row of the hash
 * found.
 */
static int64_t
aggjoin_find(const CpuAggJoinRun *run, int s, int64_t p)
{
	const CpuAggJoin *aj = run->aj;
	const GaAggJoinStep *step = &aj->steps[s - 1];
	const CpuJoinTable *table = &aj->tables[s - 1];
	const GaColumn *cols[GA_AGG_MAX_JOIN_KEYS];
	int64_t		rows[GA_AGG_MAX_JOIN_KEYS];
	uint64_t	h = aj->key_start[s - 1];
	int64_t		k;
	int64_t		d;
	uint32_t	b;
	int			i;

	if (!ga_join_step_hashed(step))
		return aggjoin_level_value(run, s - 1, p, step->key_column, &k) ?
			aggjoin_lookup(table, k) : -1;
	for (i = 0; i < step->nkeys; i++)
	{
		if ((cols[i] = aggjoin_level_key(run, s - 1, p, step->key_columns[i], &rows[i])) == NULL)
			return -1;
		h = ga_join_key_hash_add(h, ga_join_key_component(cols[i], rows[i]), i);
	}
	d = aggjoin_lookup(table, (int64_t) h);
	if (d < 0)
		return -1;
	b = table->key_rows[table->offsets[d]];
	for (i = 0; i < step->nkeys; i++)
		if (!ga_join_key_components_equal(cols[i], rows[i],
										  &aj->build_columns[step->build_key_columns[i]], b))
			return -1;
	return d;
}

/*
 * Join row p of level s - 1 at step s: look its key up and append its
 * rows of level s (one per match, or one without a build row for a LEFT,
 * FULL or ANTI row without a match; an ANTI row with matches gives none).
 * A RIGHT or FULL step marks the build rows it matched.
 */
static int
aggjoin_join_row(CpuAggJoinRun *run, int s, int64_t p)
{
	const CpuAggJoin *aj = run->aj;
	const GaAggJoinStep *step = &aj->steps[s - 1];
	const CpuJoinTable *table = &aj->tables[s - 1];
	int64_t		d = aggjoin_find(run, s, p);
	int64_t		k;

	if (d < 0)
		return step->type == GA_AGGJOIN_INNER || step->type == GA_AGGJOIN_RIGHT ? 1 :
			aggjoin_append(run, s, p, CPU_AGGJOIN_NO_ROW);
	if (step->type == GA_AGGJOIN_ANTI)
		return 1;
	for (k = 0; k < table->counts[d]; k++)
	{
		uint32_t	b = table->key_rows[table->offsets[d] + k];

		if (aj->matched[s - 1] != NULL)
			aj->matched[s - 1][b] = 1;
		if (!aggjoin_append(run, s, p, b))
			return 0;
	}
	return 1;
}

/*
 * Join the n rows of level s - 1 at step s, which checks its pairs
 * (aggjoin_checks_pairs), in the GPU device's order: first every pair of a
 * row and one of its key's build rows that the step's filter passes (for
 * INNER and LEFT, appended as a row; every step notes the rows that had
 * one), then, for LEFT and ANTI, each row that had none, and for SEMI each
 * row that had one, appended with no build row.
 */
static int
aggjoin_join_level(CpuAggJoinRun *run, int s, int64_t n)
{
	const CpuAggJoin *aj = run->aj;
	const GaAggJoinStep *step = &aj->steps[s - 1];
	const CpuJoinTable *table = &aj->tables[s - 1];
	const CpuJoinLevel *from = &aj->levels[s - 1];
	uint8_t    *passed = aj->passed[s - 1];
	int			appends_pairs = step->type == GA_AGGJOIN_INNER || step->type == GA_AGGJOIN_LEFT;
	int64_t		p;

	for (p = 0; p < n; p++)
	{
		int64_t		d = aggjoin_find(run, s, p);
		int64_t		k;

		passed[p] = 0;
		for (k = 0; d >= 0 && k < table->counts[d]; k++)
		{
			uint32_t	b = table->key_rows[table->offsets[d] + k];

			if (step->nfilter > 0 &&
				!aggjoin_filter_passes(aj, run->probe, step->filter, step->nfilter, from, p, s, b))
				continue;
			passed[p] = 1;
			if (!appends_pairs)
				break;
			if (!aggjoin_append(run, s, p, b))
				return 0;
		}
	}
	if (step->type == GA_AGGJOIN_INNER)
		return 1;
	for (p = 0; p < n; p++)
		if (passed[p] == (step->type == GA_AGGJOIN_SEMI) &&
			!aggjoin_append(run, s, p, CPU_AGGJOIN_NO_ROW))
			return 0;
	return 1;
}

/*
 * Empty a level: the last one is gathered and aggregated as a piece; any
 * other has its rows joined at the next step (row by row, or in two passes
 * when that step checks its pairs).  Asks the wait callback as the rows go
 * by.
 */
static int
aggjoin_drain(CpuAggJoinRun *run, int level)
{
	CpuAggJoin *aj = run->aj;
	int64_t		n = aj->levels[level].nrows;
	int64_t		p;

	if (level == aj->nsteps)
	{
		if (!aggjoin_gather(aj, run->probe, run->status) ||
			!run->aggregate(run->agg, &aj->joined, run->wait, run->arg, run->status))
			return 0;
		run->stats->joined_rows += aj->joined.nrows;	/* after the filter */
		run->pieces++;
	}
	else if (aggjoin_checks_pairs(&aj->steps[level]))
	{
		if (!aggjoin_join_level(run, level + 1, n))
			return 0;
	}
	else
		for (p = 0; p < n; p++)
			if (!aggjoin_join_row(run, level + 1, p))
				return 0;
	aj->levels[level].nrows = 0;
	if (aggjoin_should_stop(&run->since_wait, n, run->wait, run->arg))
		return ga_status_set(run->status, GA_ERR_CANCELLED,
							 "the aggjoin was cancelled");
	return 1;
}

/*
 * Join a probe batch through every step and aggregate the last step's
 * rows, a piece of at most batch_rows at a time, through `aggregate`
 * (called with `agg`): drain level 0 (the probe rows), then the partly
 * filled levels in step order; an empty join is aggregated as one empty
 * piece.
 */
int
ga_cpu_aggjoin_submit(CpuAggJoin *aj, const GaBatch *probe, CpuAggregateFn aggregate,
					  void *agg, GaAggStats *stats, GaWaitCallback wait, void *arg,
					  GaStatus *status)
{
	CpuAggJoinRun run = {aj, probe, aggregate, agg, stats, wait, arg, status, 0, 0};
	int			s;

	if (aj->nbuilt < aj->nsteps)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin's batch was submitted before the build sides of all its join steps were given");
	for (s = 0; s < aj->ncolumns; s++)
		if (aj->from_build[s] == 0 && aj->column_types[s] == GA_TYPE_STRING &&
			!ga_string_column_valid(&probe->columns[s], probe->nrows))
			return ga_status_set(status, GA_ERR_INVALID,
								 "string column %d of a batch has offsets out of order or past its bytes",
								 s);
	aj->levels[0].nrows = probe->nrows;
	for (s = 0; s <= aj->nsteps; s++)
		if ((aj->levels[s].nrows > 0 || (s == aj->nsteps && run.pieces == 0)) &&
			!aggjoin_drain(&run, s))
			return 0;
	stats->input_rows += probe->nrows;
	stats->bytes_sent += aggjoin_side_bytes(aj, probe, 0);
	ga_status_ok(status);
	return 1;
}

/*
 * Put the build rows of RIGHT or FULL step s (1-based) that no row matched
 * in level s, each with NO_ROW on every earlier side (so every probe and
 * earlier build column is null), draining the level whenever it is full,
 * and then the partly filled levels s .. nsteps - 1 in order, so that every
 * row they give has been joined at every step when this returns (the last
 * level is drained by the caller at the end, so that the pieces of all the
 * steps' rows are full but the last, as on the GPU device).
 */
static int
aggjoin_emit_unmatched(CpuAggJoinRun *run, int s)
{
	CpuAggJoin *aj = run->aj;
	CpuJoinLevel *level = &aj->levels[s];
	int64_t		b;
	int			t;

	for (b = 0; b < aj->build_rows[s - 1]; b++)
	{
		int64_t		n = level->nrows;

		if (aj->matched[s - 1][b])
			continue;
		for (t = 0; t < s; t++)
			level->source[t][n] = CPU_AGGJOIN_NO_ROW;
		level->source[s][n] = b;
		level->nrows = n + 1;
		if (level->nrows == aj->piece_rows && !aggjoin_drain(run, s))
			return 0;
	}
	for (t = s; t < aj->nsteps; t++)
		if (aj->levels[t].nrows > 0 && !aggjoin_drain(run, t))
			return 0;
	return 1;
}

/*
 * Aggregate, once, the build rows of every RIGHT or FULL step that no row
 * matched over all the submits, the first step's first
 * (aggjoin_emit_unmatched): a later step's matched flags are complete only
 * once the rows of the steps before it have gone by.  Called by finish
 * before the groups are formed; nothing to do without such a step.
 * Refused (GA_ERR_INVALID) before every step is built, as the unmatched
 * rows are not known then.
 */
int
ga_cpu_aggjoin_finish(CpuAggJoin *aj, CpuAggregateFn aggregate, void *agg, GaAggStats *stats,
					  GaWaitCallback wait, void *arg, GaStatus *status)
{
	CpuAggJoinRun run = {aj, NULL, aggregate, agg, stats, wait, arg, status, 0, 0};
	int			any = 0;
	int			s;

	for (s = 0; s < aj->nsteps; s++)
		any |= aggjoin_keeps_unmatched_build(aj->steps[s].type);
	if (!any || aj->unmatched_done)
	{
		ga_status_ok(status);
		return 1;
	}
	if (aj->nbuilt < aj->nsteps)
		return ga_status_set(status, GA_ERR_INVALID,
							 "an aggjoin with a right or full join was finished before the build sides of all its join steps were given");
	aj->unmatched_done = 1;		/* a failure below is remembered by the caller */
	for (s = 1; s <= aj->nsteps; s++)
		if (aggjoin_keeps_unmatched_build(aj->steps[s - 1].type) &&
			!aggjoin_emit_unmatched(&run, s))
			return 0;
	if (aj->levels[aj->nsteps].nrows > 0 && !aggjoin_drain(&run, aj->nsteps))
		return 0;
	ga_status_ok(status);
	return 1;
}
