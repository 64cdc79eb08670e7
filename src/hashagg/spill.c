/*-------------------------------------------------------------------------
 *
 * hashagg/spill.c
 *	  GpuHashAgg's partitions on disk: the rows of a batch routed by a hash
 *	  of their group keys into partitions written to a logical tape set, and
 *	  read back, one partition at a time, into the batches of a fresh device
 *	  aggregation (exec.c), so that no aggregation holds more groups than
 *	  hash_mem allows.
 *
 * As PostgreSQL's HashAggregate does (nodeAgg.c), one pass writes each row
 * to the partition that the next bits of its hash choose and counts every
 * partition's distinct keys with a HyperLogLog; a partition whose estimate
 * exceeds the groups that fit is split again by the next bits of the hash
 * before it is aggregated, so a partition's groups always fit (within the
 * estimate's error).  The hash is the device's own key hash over the key
 * columns' integers and strings' bytes (gpuagg_hash.h) from a seed of its
 * own; its high bits choose partitions, its low 32 bits feed the
 * HyperLogLog.  Rows whose keys are all equal cannot be split and stay in
 * one partition, which then holds one group.  Each grouping set of keys has a spill of its own.
 *
 * A row is written as one record: a bitmap of its null columns, then every
 * column's value (zero where null) at the column's width, where a string
 * column (a text key sent as bytes) holds its value's length; then the
 * bytes of each string column's value in column order.  The fixed part has
 * the same size for every row of the layout, and its lengths say how many
 * bytes follow.  Each partition's tape keeps one block of buffer while
 * written (PostgreSQL's rule: a quarter of hash_mem at most for all of a
 * pass's buffers), and one while read.
 *
 * The bound itself is here too: the groups an aggregation may hold
 * (hash_mem over a group's bytes), the batches that keep a first pass near
 * it, and whether the planner's estimate partitions the input from the
 * start (GpuAggPlanMemory, run when the node starts).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "lib/hyperloglog.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/logtape.h"
#include "utils/memutils.h"

#include "batch/batch.h"
#include "gpuagg_hash.h"
#include "guc.h"
#include "hashagg/state.h"
#include "service/service.h"

/* Partitions per pass, as nodeAgg.c's HASHAGG_MIN/MAX_PARTITIONS */
#define SPILL_MIN_PARTITIONS 4
#define SPILL_MAX_PARTITIONS 1024

/* HyperLogLog registers per partition: 2^10 (error about 3%) */
#define SPILL_HLL_BITS 10

/*
 * Hash bits used up, beyond which a partition is not split again: with the
 * bits of one more pass they stay clear of the HyperLogLog's low 32 bits.
 */
#define SPILL_MAX_USED_BITS 20

/* A partition on tape, written or waiting to be read. */
typedef struct SpillPartition
{
	LogicalTape *tape;
	int64		rows;
	int			used_bits;		/* hash bits that chose it */
	double		groups;			/* its HyperLogLog estimate */
} SpillPartition;

/* The partitions of a GpuHashAgg's input (GpuAggSpill in state.h). */
struct GpuAggSpill
{
	MemoryContext cxt;
	LogicalTapeSet *tapes;
	int			ncolumns;
	const GaValueType *types;
	int		   *widths;
	int		   *offsets;		/* of each column's value in a record */
	int			nkeys;
	const int  *key_columns;
	int			record_bytes;	/* a record's fixed part */
	char	   *record;			/* one record's fixed part, written or read */
	int			nstrings;		/* string columns, whose bytes follow */
	int		   *string_columns;
	const uint8 **string_data;	/* per column: the bytes of the record's
								 * string value */
	uint8	   *string_buffer;	/* a record's bytes, read to be split */
	int64		string_buffer_size;
	bool		held;			/* the record's fixed part is read and its
								 * bytes are not: it waits for the next
								 * batch */
	int64		max_groups;		/* groups a partition may hold */
	int			max_partitions; /* per pass */

	/* the pass being written */
	int			npartitions;
	int			used_bits;		/* of the partition split, 0 for the input */
	SpillPartition *parts;
	hyperLogLogState *hll;

	/* partitions to aggregate, and the one being read */
	List	   *pending;		/* of SpillPartition * */
	SpillPartition *reading;

	/* for EXPLAIN ANALYZE */
	int64		disk_blocks;	/* the tape set's peak */
	int64		rows_written;
};

/* The smallest power of two not below n, within [lo, hi]. */
static int
spill_pow2_clamp(double n, int lo, int hi)
{
	int			p = lo;

	while (p < hi && p < n)
		p <<= 1;
	return p;
}

/*
 * Partitions a pass may have: the tapes' buffers of nspills spills (one per
 * grouping set) within a quarter of hash_mem.
 */
static int
spill_max_partitions(int nspills)
{
	double		buffers = (double) get_hash_memory_limit() / 4 / BLCKSZ / Max(nspills, 1);
	int			n = spill_pow2_clamp(buffers, SPILL_MIN_PARTITIONS, SPILL_MAX_PARTITIONS);

	if (n > buffers)
		n = Max(SPILL_MIN_PARTITIONS, n / 2);
	return n;
}

/*
 * The partitions of the input's pass for est_groups groups, at most
 * max_groups in each (more passes split what does not fit), one of nspills
 * spills.
 */
int
GpuAggSpillPartitions(int64 max_groups, double est_groups, int nspills)
{
	return spill_pow2_clamp(1.5 * est_groups / Max(max_groups, 1), SPILL_MIN_PARTITIONS,
							spill_max_partitions(nspills));
}

/* Start a pass: npartitions empty partitions chosen by bits above used_bits. */
static void
spill_start_pass(GpuAggSpill *spill, int npartitions, int used_bits)
{
	MemoryContext old = MemoryContextSwitchTo(spill->cxt);
	int			p;

	spill->npartitions = npartitions;
	spill->used_bits = used_bits;
	spill->parts = palloc0(sizeof(SpillPartition) * npartitions);
	spill->hll = palloc0(sizeof(hyperLogLogState) * npartitions);
	for (p = 0; p < npartitions; p++)
	{
		spill->parts[p].tape = LogicalTapeCreate(spill->tapes);
		spill->parts[p].used_bits = used_bits + pg_ceil_log2_32(npartitions);
		initHyperLogLog(&spill->hll[p], SPILL_HLL_BITS);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Begin spilling rows of ncolumns columns of the given types, grouped by
 * key_columns, into partitions of at most max_groups groups each; the
 * input's first pass gets enough partitions for est_groups, within what
 * hash_mem gives the buffers of this spill, one of nspills.
 */
GpuAggSpill *
GpuAggSpillCreate(int ncolumns, const GaValueType *types, int nkeys,
				  const int *key_columns, int64 max_groups, double est_groups,
				  int nspills, MemoryContext cxt)
{
	GpuAggSpill *spill;
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int			c;

	spill = palloc0(sizeof(GpuAggSpill));
	spill->cxt = cxt;
	spill->tapes = LogicalTapeSetCreate(false, NULL, -1);
	spill->ncolumns = ncolumns;
	spill->types = types;
	spill->nkeys = nkeys;
	spill->key_columns = key_columns;
	spill->widths = palloc(sizeof(int) * Max(ncolumns, 1));
	spill->offsets = palloc(sizeof(int) * Max(ncolumns, 1));
	spill->string_columns = palloc(sizeof(int) * Max(ncolumns, 1));
	spill->string_data = palloc0(sizeof(uint8 *) * Max(ncolumns, 1));
	spill->record_bytes = (ncolumns + 7) / 8;
	for (c = 0; c < ncolumns; c++)
	{
		spill->widths[c] = ga_type_width(types[c]);
		spill->offsets[c] = spill->record_bytes;
		spill->record_bytes += spill->widths[c];
		if (types[c] == GA_TYPE_STRING)
			spill->string_columns[spill->nstrings++] = c;
	}
	spill->record = palloc0(spill->record_bytes);
	spill->max_groups = Max(max_groups, 1);
	spill->max_partitions = spill_max_partitions(nspills);
	MemoryContextSwitchTo(old);

	spill_start_pass(spill, GpuAggSpillPartitions(spill->max_groups, est_groups, nspills), 0);
	return spill;
}

/* The length of the record's value of string column c. */
static inline uint32
spill_string_length(const char *rec, int offset)
{
	uint32		len;

	memcpy(&len, rec + offset, sizeof(len));
	return len;
}

/*
 * The hash of a record's key tuple: each key's integer (a string key's
 * bytes hashed as the device hashes them) through the device's finalizer,
 * combined from a seed of spill.c's own, so that the bits that choose a
 * partition do not also choose a slot of the device's table.
 */
static inline uint64
spill_record_hash(const GpuAggSpill *spill, const char *rec)
{
	uint64		h = ga_splitmix64(GA_HASH_SEED);
	int			k;

	for (k = 0; k < spill->nkeys; k++)
	{
		int			c = spill->key_columns[k];
		const char *p = rec + spill->offsets[c];
		uint64		v;

		if (rec[c >> 3] & (1 << (c & 7)))
			v = GA_HASH_GOLDEN; /* a null key */
		else
		{
			switch (spill->types[c])
			{
				case GA_TYPE_INT8:
					v = (uint64) (int64) *(const int8 *) p;
					break;
				case GA_TYPE_INT16:
					{
						int16		x;

						memcpy(&x, p, sizeof(x));
						v = (uint64) (int64) x;
						break;
					}
				case GA_TYPE_INT32:
					{
						int32		x;

						memcpy(&x, p, sizeof(x));
						v = (uint64) (int64) x;
						break;
					}
				case GA_TYPE_STRING:
					v = ga_hash_bytes(spill->string_data[c],
									  spill_string_length(rec, spill->offsets[c]));
					break;
				default:
					memcpy(&v, p, sizeof(v));
					break;
			}
			v = ga_mix64(v);
		}
		h = ga_mix64(h ^ (v + GA_HASH_GOLDEN + (h << 6) + (h >> 2)));
	}
	return h;
}

/*
 * Write the record in spill->record (and its strings' bytes, at
 * spill->string_data) to its partition of the current pass: the hash's
 * bits from the top, below the bits earlier passes used; the low 32 bits
 * feed the partition's HyperLogLog.
 */
static void
spill_write_record(GpuAggSpill *spill)
{
	uint64		h = spill_record_hash(spill, spill->record);
	int			bits = pg_ceil_log2_32(spill->npartitions);
	int			p = (int) ((h << spill->used_bits) >> (64 - bits));
	int			s;

	LogicalTapeWrite(spill->parts[p].tape, spill->record, spill->record_bytes);
	for (s = 0; s < spill->nstrings; s++)
	{
		int			c = spill->string_columns[s];
		uint32		len = spill_string_length(spill->record, spill->offsets[c]);

		if (len > 0)
			LogicalTapeWrite(spill->parts[p].tape, unconstify(uint8 *, spill->string_data[c]),
							 len);
	}
	addHyperLogLog(&spill->hll[p], (uint32) h);
	spill->parts[p].rows++;
}

/* Write every row of batch to its partition of the current pass. */
void
GpuAggSpillBatch(GpuAggSpill *spill, const GaBatch *batch)
{
	int64		row;
	int			c;

	for (row = 0; row < batch->nrows; row++)
	{
		char	   *rec = spill->record;

		memset(rec, 0, (spill->ncolumns + 7) / 8);
		for (c = 0; c < spill->ncolumns; c++)
		{
			const GaColumn *col = &batch->columns[c];
			int			w = spill->widths[c];

			if (col->has_nulls && (col->validity[row >> 3] & (1 << (row & 7))) == 0)
			{
				rec[c >> 3] |= (char) (1 << (c & 7));
				if (w > 0)
					memset(rec + spill->offsets[c], 0, w);
			}
			else if (col->type == GA_TYPE_STRING)
			{
				uint32		start = ga_string_start(col, row);
				uint32		len = ((const uint32 *) col->values)[row] - start;

				memcpy(rec + spill->offsets[c], &len, sizeof(len));
				spill->string_data[c] = col->bytes + start;
			}
			else if (w > 0)
				memcpy(rec + spill->offsets[c], (const char *) col->values + row * w, w);
		}
		spill_write_record(spill);
	}
	spill->rows_written += batch->nrows;
}

/*
 * Whether a partition's groups fit an aggregation: by its estimate, its
 * rows, or because the hash has no bits left to split it by.
 */
static bool
spill_partition_fits(const GpuAggSpill *spill, const SpillPartition *part)
{
	return part->groups * 1.05 <= spill->max_groups || part->rows <= spill->max_groups ||
		part->used_bits >= SPILL_MAX_USED_BITS;
}

/*
 * End the pass being written: its non-empty partitions go ahead of the
 * ones waiting, ready to be read.  A partition that fits is frozen, so
 * that it can be read again from its start should its aggregation fail
 * (GpuAggSpillRewind); its blocks are then not reused before the tapes
 * close.  One to be split is read once, its blocks reused as read.
 */
static void
spill_end_pass(GpuAggSpill *spill)
{
	MemoryContext old = MemoryContextSwitchTo(spill->cxt);
	List	   *parts = NIL;
	int			p;

	spill->disk_blocks = Max(spill->disk_blocks, (int64) LogicalTapeSetBlocks(spill->tapes));
	for (p = 0; p < spill->npartitions; p++)
	{
		SpillPartition *part = palloc(sizeof(SpillPartition));

		*part = spill->parts[p];
		part->groups = estimateHyperLogLog(&spill->hll[p]);
		freeHyperLogLog(&spill->hll[p]);
		if (part->rows == 0)
		{
			LogicalTapeClose(part->tape);
			pfree(part);
			continue;
		}
		if (spill_partition_fits(spill, part))
			LogicalTapeFreeze(part->tape, NULL);
		else
			LogicalTapeRewindForRead(part->tape, BLCKSZ);
		parts = lappend(parts, part);
	}
	spill->pending = list_concat(parts, spill->pending);
	pfree(spill->parts);
	pfree(spill->hll);
	spill->parts = NULL;
	spill->hll = NULL;
	spill->npartitions = 0;
	MemoryContextSwitchTo(old);
}

/* Read n bytes of the partition being read into dest. */
static void
spill_read_bytes(GpuAggSpill *spill, void *dest, size_t n)
{
	if (LogicalTapeRead(spill->reading->tape, dest, n) != n)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpuagg: unexpected end of a spilled partition")));
}

/*
 * Read the fixed part of the next record of the partition being read;
 * false at its end.  Its strings' bytes are still to be read.
 */
static bool
spill_read_fixed(GpuAggSpill *spill)
{
	size_t		n = LogicalTapeRead(spill->reading->tape, spill->record,
									spill->record_bytes);

	if (n == 0)
		return false;
	if (n != (size_t) spill->record_bytes)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpuagg: unexpected end of a spilled partition")));
	return true;
}

/*
 * Read the next record of the partition being read, its strings' bytes
 * into spill->string_buffer; false at its end.
 */
static bool
spill_read_record(GpuAggSpill *spill)
{
	int64		total = 0;
	int			s;

	if (!spill_read_fixed(spill))
		return false;
	for (s = 0; s < spill->nstrings; s++)
		total += spill_string_length(spill->record, spill->offsets[spill->string_columns[s]]);
	if (total > spill->string_buffer_size)
	{
		int64		size = Max(total, 2 * spill->string_buffer_size);

		if (spill->string_buffer != NULL)
			pfree(spill->string_buffer);
		spill->string_buffer = MemoryContextAllocHuge(spill->cxt, size);
		spill->string_buffer_size = size;
	}
	total = 0;
	for (s = 0; s < spill->nstrings; s++)
	{
		int			c = spill->string_columns[s];
		uint32		len = spill_string_length(spill->record, spill->offsets[c]);

		if (len > 0)
			spill_read_bytes(spill, spill->string_buffer + total, len);
		spill->string_data[c] = spill->string_buffer + total;
		total += len;
	}
	return true;
}

/*
 * Whether the bytes of the record whose fixed part was just read fit what
 * batch's string columns have left.
 */
static bool
spill_record_fits(const GpuAggSpill *spill, const GaBatch *batch)
{
	int			s;

	for (s = 0; s < spill->nstrings; s++)
	{
		int			c = spill->string_columns[s];
		const GaColumn *col = &batch->columns[c];
		uint32		len = spill_string_length(spill->record, spill->offsets[c]);

		if ((int64) ga_string_used(col, batch->nrows) + len > col->bytes_capacity)
			return false;
	}
	return true;
}

/*
 * Append the record whose fixed part was just read as the next row of
 * batch, its strings' bytes read from the tape into the batch's columns.
 */
static void
spill_append_record(GpuAggSpill *spill, GaBatch *batch)
{
	int64		row = batch->nrows;
	const char *rec = spill->record;
	int			c;

	for (c = 0; c < spill->ncolumns; c++)
	{
		GaColumn   *col = &batch->columns[c];
		int			w = spill->widths[c];

		if (rec[c >> 3] & (1 << (c & 7)))
			ga_column_set_null(col, row);
		if (col->type == GA_TYPE_STRING)
		{
			uint32		start = ga_string_start(col, row);
			uint32		len = spill_string_length(rec, spill->offsets[c]);

			if (len > 0)
				spill_read_bytes(spill, col->bytes + start, len);
			((uint32 *) col->values)[row] = start + len;
		}
		else if (w > 0)
			memcpy((char *) col->values + row * w, rec + spill->offsets[c], w);
	}
	batch->nrows++;
}

/*
 * Close the partition being read (if any) and choose the next one to
 * aggregate, first splitting each one whose groups would not fit; false
 * when none is left.  Returns the rows of the partition chosen.
 */
bool
GpuAggSpillNextPartition(GpuAggSpill *spill, int64 *rows)
{
	if (spill->npartitions > 0)
		spill_end_pass(spill);
	for (;;)
	{
		SpillPartition *part;

		spill->held = false;
		if (spill->reading != NULL)
		{
			LogicalTapeClose(spill->reading->tape);
			pfree(spill->reading);
			spill->reading = NULL;
		}
		if (spill->pending == NIL)
			return false;
		part = linitial(spill->pending);
		spill->pending = list_delete_first(spill->pending);
		spill->reading = part;
		if (spill_partition_fits(spill, part))
		{
			*rows = part->rows;
			return true;
		}

		/* too many groups: split it by the next bits of the hash */
		spill_start_pass(spill,
						 spill_pow2_clamp(1.5 * part->groups / spill->max_groups,
										  SPILL_MIN_PARTITIONS, spill->max_partitions),
						 part->used_bits);
		while (spill_read_record(spill))
		{
			spill_write_record(spill);
			CHECK_FOR_INTERRUPTS();
		}
		spill_end_pass(spill);
	}
}

/*
 * Fill batch with rows of the partition being read, up to its capacity in
 * rows and in each string column's bytes (a record that does not fit waits
 * for the next batch); returns true at the partition's end.
 */
bool
GpuAggSpillFill(GpuAggSpill *spill, GaBatch *batch)
{
	while (batch->nrows < batch->capacity)
	{
		if (!spill->held && !spill_read_fixed(spill))
			return true;
		spill->held = true;
		if (!spill_record_fits(spill, batch))
		{
			if (batch->nrows == 0)
				elog(ERROR, "gpuagg: a spilled row's text keys exceed an empty batch");
			return false;
		}
		spill_append_record(spill, batch);
		spill->held = false;
	}
	return false;
}

/*
 * Read the partition being read again from its start, as a device that
 * failed while aggregating it leaves its rows to the next one.
 */
void
GpuAggSpillRewind(GpuAggSpill *spill)
{
	if (spill->reading == NULL)
		elog(ERROR, "gpuagg: no spilled partition to read again");
	LogicalTapeRewindForRead(spill->reading->tape, BLCKSZ);
	spill->held = false;
}

/* The peak disk space of the partitions, in kB. */
int64
GpuAggSpillDiskKB(const GpuAggSpill *spill)
{
	int64		blocks = Max(spill->disk_blocks, (int64) LogicalTapeSetBlocks(spill->tapes));

	return blocks * (BLCKSZ / 1024);
}

/* Partitions waiting to be aggregated, the one being read not counted. */
int
GpuAggSpillPending(const GpuAggSpill *spill)
{
	return list_length(spill->pending);
}

/* Close the tapes and their files. */
void
GpuAggSpillEnd(GpuAggSpill *spill)
{
	if (spill->tapes != NULL)
		LogicalTapeSetClose(spill->tapes);
	spill->tapes = NULL;
}

/* ------------------------------------------------------------------------
 * The bound: what a GpuHashAgg may hold, and when it spills
 * ------------------------------------------------------------------------
 */

/*
 * Host bytes one group takes in the device's aggregation (the CPU device's
 * hash table slots, keys with the bytes of text keys at the planner's
 * average width, and accumulators), and in each DISTINCT set's.
 */
double
GpuAggGroupBytes(const GpuAggState *state)
{
	const GpuAggLayout *layout = state->layout;
	int			nkeys = state->desc->nkeys;
	double		bytes = 64 + 9 * nkeys + layout->key_string_bytes + 16 * layout->nops;
	int			d;

	for (d = 0; d < layout->ndistinct; d++)
		bytes += 64 + 9 * (nkeys + 1) + layout->key_string_bytes +
			layout->distinct_sets[d].string_width;
	return bytes;
}

/* Set every request's batch capacity, in rows and in string bytes. */
static void
spill_set_batch_rows(GpuAggState *state, int64 rows)
{
	int			d;

	for (d = 0; d < state->desc->nsets; d++)
	{
		state->requests[d].batch_rows = rows;
		state->requests[d].string_bytes = GpuAggStringBytes(rows);
	}
	for (d = 0; d < state->layout->ndistinct; d++)
	{
		state->distinct_requests[d].batch_rows = rows;
		state->distinct_requests[d].string_bytes = GpuAggStringBytes(rows);
	}
}

/*
 * The groups the planner expects of all grouping sets of keys together, as
 * their aggregations run side by side unless spilled.
 */
static double
spill_expected_groups(const GpuAggState *state)
{
	double		groups = 0;
	int			s;

	for (s = 0; s < state->desc->nsets; s++)
		if (state->desc->sets[s].key_mask != 0)
			groups += state->desc->sets[s].est_groups;
	return groups;
}

/* Whether the planner expects more groups than fit. */
bool
GpuAggExpectsSpill(const GpuAggState *state)
{
	return spill_expected_groups(state) > state->max_groups;
}

/*
 * The partitions the planner expects the input's pass to write, all sets'
 * together, or 0 (EXPLAIN's Planned Partitions).
 */
int
GpuAggPlannedPartitions(const GpuAggState *state)
{
	const GpuAggDesc *desc = state->desc;
	int			nspills = 0;
	int			total = 0;
	int			s;

	if (state->max_groups <= 0 || !GpuAggExpectsSpill(state))
		return 0;
	for (s = 0; s < desc->nsets; s++)
		nspills += desc->sets[s].key_mask != 0;
	for (s = 0; s < desc->nsets; s++)
		if (desc->sets[s].key_mask != 0)
			total += GpuAggSpillPartitions(state->max_groups, desc->sets[s].est_groups,
										   nspills);
	return total;
}

/*
 * Bound the groups an aggregation holds by hash_mem, as HashAggregate
 * does: max_groups.  Partition from the start when the planner expects
 * more groups; when it expects at least an eighth of them, use batches
 * small enough that one batch's new groups overshoot the bound by a few
 * times at most (64K rows at least, and always room for a worker's
 * message).  An estimate far below the bound keeps the usual batches, so
 * that small groupings run as before, at the cost of a batch's groups over
 * the bound when that estimate is wrong.  A case the partitions cannot
 * bound says why.
 */
void
GpuAggPlanMemory(GpuAggState *state, int eflags)
{
	const GpuAggDesc *desc = state->desc;
	double		groups = (double) get_hash_memory_limit() / GpuAggGroupBytes(state);
	int64		rows;
	int			d;

	if (desc->nkeys == 0)
		return;					/* one group */

	/*
	 * A device in the GPU service hands its groups back through the
	 * service's shared memory, which all sessions share (and the service's
	 * CPU device keeps its table there): a node's groups take at most half
	 * of it, so that a grouping larger than that partitions instead of
	 * failing over to the CPU.
	 */
	if (GpuAggServiceWanted(state->device_kind))
		groups = Min(groups, (double) gpuagg_service_memory * 1024 * 1024 / 2 /
					 GpuAggGroupBytes(state));
	state->limit_groups = (int64) Max(groups, 256.0);
	if (desc->njoin_steps > 0)
		state->info.unbounded = "the device joins the input";
	else if (eflags & EXEC_FLAG_BACKWARD)
		state->info.unbounded = "a backward scan needs every group at once";
	if (state->info.unbounded != NULL)
		return;
	state->max_groups = state->limit_groups;
	if (spill_expected_groups(state) * 8 > state->max_groups)
	{
		rows = Min(state->requests[0].batch_rows, Max(4 * state->max_groups, (int64) 65536));
		spill_set_batch_rows(state, Max(rows, GpuAggMessageCapacity()));
	}
	state->spill_now = GpuAggExpectsSpill(state);
	if (!state->spill_now && !desc->rescan_safe)
	{
		/* too many groups found later could not be read again */
		state->info.unbounded = "the input has volatile functions and cannot be read again";
		state->max_groups = 0;
	}

	/* an aggregation's first table is sized for the groups it may hold */
	for (d = 0; d < desc->nsets; d++)
		state->requests[d].estimated_groups = Min(state->requests[d].estimated_groups,
												  state->max_groups);
	for (d = 0; d < state->layout->ndistinct; d++)
		state->distinct_requests[d].estimated_groups =
			Min(state->distinct_requests[d].estimated_groups, 4 * state->max_groups);
}
