/*-------------------------------------------------------------------------
 *
 * hashjoin/spill.c
 *	  GpuHashJoin's partitions on disk: when its build side outgrows the
 *	  memory a build may hold (GpuAggHashJoinBuildLimit, hash_mem at most),
 *	  both sides' rows are written to partitions chosen by their device
 *	  key, and exec.c joins one partition after another, as PostgreSQL's
 *	  hash join does with its batches (nodeHash.c).
 *
 * A row goes to the partition that the high bits of its device key's hash
 * choose, the same on both sides since equal keys are equal device keys;
 * a row whose key is NULL, kept for an outer join, goes to partition 0,
 * where it is emitted unmatched.  A record is a header (the key, whether
 * there is one, the tuple's length) and the MinimalTuple.  All partitions
 * of both sides share one logical tape set, each tape keeping one block of
 * buffer while written or read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/tuptable.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/logtape.h"
#include "utils/memutils.h"

#include "gpuagg_hash.h"
#include "hashjoin/desc.h"
#include "hashjoin/state.h"

/* Partitions, within what a quarter of the build's memory gives buffers */
#define JOIN_SPILL_MIN_PARTITIONS 4
#define JOIN_SPILL_MAX_PARTITIONS 1024

/* A record's header, then the MinimalTuple's t_len bytes. */
typedef struct JoinSpillHeader
{
	int64		key;
	uint32		len;
	bool		has_key;
} JoinSpillHeader;

/* The partitions of a GpuHashJoin's two sides (GpuJoinSpill in state.h). */
struct GpuJoinSpill
{
	LogicalTapeSet *tapes;
	int			npartitions;
	int			bits;			/* of the key's hash that choose one */
	LogicalTape **sides[2];		/* per side (GPUJOIN_OUTER, _INNER) */
	int64		disk_blocks;	/* the tape set's peak */
};

/*
 * The partitions for a build side of about build_bytes when a build may
 * hold limit bytes: twice as many as it needs, a power of two within what
 * a quarter of limit gives the tapes' buffers (one per partition of the
 * side being written; a side's buffers go when it is rewound, and come
 * back one at a time as its partitions are read).
 */
int
GpuJoinSpillPartitions(double build_bytes, double limit)
{
	double		buffers = limit / 4 / BLCKSZ;
	int			n = JOIN_SPILL_MIN_PARTITIONS;

	while (n < JOIN_SPILL_MAX_PARTITIONS && n < 2 * build_bytes / Max(limit, 1.0) &&
		   n * 2 <= Max(buffers, JOIN_SPILL_MIN_PARTITIONS))
		n <<= 1;
	return n;
}

/* Begin partitioning both sides into npartitions (a power of two). */
GpuJoinSpill *
GpuJoinSpillCreate(int npartitions, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	GpuJoinSpill *spill = palloc0(sizeof(GpuJoinSpill));
	int			side;
	int			p;

	spill->tapes = LogicalTapeSetCreate(false, NULL, -1);
	spill->npartitions = npartitions;
	spill->bits = pg_ceil_log2_32(npartitions);
	for (side = 0; side < 2; side++)
	{
		spill->sides[side] = palloc(sizeof(LogicalTape *) * npartitions);
		for (p = 0; p < npartitions; p++)
			spill->sides[side][p] = LogicalTapeCreate(spill->tapes);
	}
	MemoryContextSwitchTo(old);
	return spill;
}

/* The partitions of a spill. */
int
GpuJoinSpillCount(const GpuJoinSpill *spill)
{
	return spill->npartitions;
}

/*
 * Write a row of one side to its partition: its device key (has_key false:
 * a NULL key, partition 0) and its tuple.
 */
void
GpuJoinSpillWrite(GpuJoinSpill *spill, int side, bool has_key, int64 key,
				  MinimalTuple tuple)
{
	JoinSpillHeader header;
	int			p = 0;

	if (has_key && spill->bits > 0)
		p = (int) (ga_mix64((uint64) key ^ GA_HASH_SEED) >> (64 - spill->bits));
	memset(&header, 0, sizeof(header));
	header.key = key;
	header.len = tuple->t_len;
	header.has_key = has_key;
	LogicalTapeWrite(spill->sides[side][p], &header, sizeof(header));
	LogicalTapeWrite(spill->sides[side][p], tuple, tuple->t_len);
}

/* End the writing of one side: its partitions are rewound for reading. */
void
GpuJoinSpillEndSide(GpuJoinSpill *spill, int side)
{
	int			p;

	spill->disk_blocks = Max(spill->disk_blocks, (int64) LogicalTapeSetBlocks(spill->tapes));
	for (p = 0; p < spill->npartitions; p++)
		LogicalTapeRewindForRead(spill->sides[side][p], BLCKSZ);
}

/*
 * Read the next row of one side's partition p, its tuple allocated in cxt;
 * false at the partition's end.
 */
bool
GpuJoinSpillRead(GpuJoinSpill *spill, int side, int p, bool *has_key, int64 *key,
				 MinimalTuple *tuple, MemoryContext cxt)
{
	LogicalTape *tape = spill->sides[side][p];
	JoinSpillHeader header;
	size_t		n = LogicalTapeRead(tape, &header, sizeof(header));

	if (n == 0)
		return false;
	if (n != sizeof(header))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpuagg: unexpected end of a join partition")));
	*tuple = MemoryContextAllocHuge(cxt, header.len);
	if (LogicalTapeRead(tape, *tuple, header.len) != header.len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpuagg: unexpected end of a join partition")));
	*has_key = header.has_key;
	*key = header.key;
	return true;
}

/* Close both sides of partition p once it is joined, freeing its buffers. */
void
GpuJoinSpillClosePartition(GpuJoinSpill *spill, int p)
{
	int			side;

	for (side = 0; side < 2; side++)
	{
		if (spill->sides[side][p] != NULL)
			LogicalTapeClose(spill->sides[side][p]);
		spill->sides[side][p] = NULL;
	}
}

/* The peak disk space of the partitions, in kB. */
int64
GpuJoinSpillDiskKB(const GpuJoinSpill *spill)
{
	int64		blocks = Max(spill->disk_blocks, (int64) LogicalTapeSetBlocks(spill->tapes));

	return blocks * (BLCKSZ / 1024);
}

/* Close the tapes and their file (not after an error: the resource owner's). */
void
GpuJoinSpillEnd(GpuJoinSpill *spill)
{
	if (spill->tapes != NULL)
		LogicalTapeSetClose(spill->tapes);
	spill->tapes = NULL;
}
