/*-------------------------------------------------------------------------
 *
 * hashjoin/state.h
 *	  The executor state of a GpuHashJoin: built and run by exec.c, read by
 *	  explain.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASHJOIN_STATE_H
#define GPUAGG_HASHJOIN_STATE_H

#include "nodes/execnodes.h"

#include "hashjoin/desc.h"
#include "gpuagg_device.h"

/* A GpuHashJoin's two sides partitioned on disk (spill.c) */
typedef struct GpuJoinSpill GpuJoinSpill;

/* What a GpuHashJoin did, for EXPLAIN ANALYZE (all loops together). */
typedef struct GpuJoinRunInfo
{
	bool		executed;
	GaJoinStats stats;
	double		setup_ms;
	bool		service;		/* the device ran in the GPU service */
	char	   *fallback;		/* why the CPU finished the join, or NULL */
	int64		matched_rows;	/* candidate pairs that passed the join quals */
	int64		null_key_rows;	/* rows whose key was NULL (both sides) */
	int64		inner_rows_read;	/* rows read from the inner side */
	double		build_ms;		/* reading the inner side and building */
	double		probe_ms;		/* in probe calls */
	int64		batches;		/* partitions joined (1: none on disk) */
	int64		memory_kb;		/* peak memory of a build */
	int64		disk_kb;		/* peak disk space of the partitions */
} GpuJoinRunInfo;

/* The executor state of one GpuHashJoin (its CustomScanState). */
typedef struct GpuJoinState
{
	CustomScanState css;
	GpuJoinDesc *desc;
	PlanState  *outer_ps;
	PlanState  *inner_ps;

	/* keys */
	ExprState **outer_keys;
	ExprState **inner_keys;
	Oid		   *outer_types;	/* base types, for exact keys */
	Oid		   *inner_types;
	FmgrInfo   *outer_hash;
	FmgrInfo   *inner_hash;
	ExprState  *pair_qual;		/* recheck + join quals, or NULL */
	TupleTableSlot *outer_slot; /* a stored outer row */
	TupleTableSlot *inner_slot; /* a stored inner row */
	AttrNumber	outer_natts;	/* columns of each side the scan tuple needs */
	AttrNumber	inner_natts;

	/* the device */
	GaDeviceKind device_kind;
	GaDevice   *device;
	GaJoin	   *join;
	GaJoinRequest request;
	MemoryContextCallback cleanup;

	/* build side, in build_cxt */
	MemoryContext build_cxt;
	bool		built;
	MinimalTuple *inner_tuples;
	Datum	   *inner_values;	/* inner_natts per inner row, deformed once
								 * (join_deform_inner), or NULL */
	bool	   *inner_isnull;
	int64		ninner;
	int64		inner_capacity;
	int64	   *build_keys;
	uint32	   *build_rows;
	int64		nbuild;
	int64		build_capacity;
	bool	   *inner_matched;	/* RIGHT, FULL */
	const uint32 *sorted_rows;

	/* past the build's memory: both sides in partitions on disk (spill.c) */
	double		build_limit;	/* bytes a build may hold */
	GpuJoinSpill *spill;
	MemoryContext spill_cxt;
	int			partition;		/* the one being joined */

	/* the current probe batch, in batch_cxt */
	MemoryContext batch_cxt;
	int64		batch_capacity;
	MinimalTuple *outer_tuples;
	int64	   *probe_keys;
	bool	   *probe_null;
	int64		nouter;
	const GaJoinMatches *matches;

	/* where emission stands */
	int64		cur_row;		/* row of the batch */
	uint32		cur_pair;		/* candidate of that row */
	bool		cur_matched;	/* a pair of the row passed */
	bool		row_loaded;		/* outer_slot holds cur_row */
	bool		outer_done;
	TupleTableSlot *fill_pending;	/* a joined row that did not fit the
									 * last batch (GpuJoinFillBatch) */
	int64		unmatched_next; /* RIGHT/FULL: next inner row to look at */
	uint64		pairs_tried;	/* candidates checked, for interrupt checks */
	bool		inner_keys_use_params;	/* inner keys read Params */

	GpuJoinRunInfo info;
} GpuJoinState;

/*
 * Add a device join's statistics to a node's totals: when the join ends
 * (exec.c), and for EXPLAIN while it is still open (explain.c).
 */
static inline void
GpuJoinAddStats(GaJoinStats *total, const GaJoin *join)
{
	GaJoinStats run;

	ga_join_get_stats(join, &run);
	total->build_rows += run.build_rows;
	total->distinct_keys += run.distinct_keys;
	total->probe_batches += run.probe_batches;
	total->probe_rows += run.probe_rows;
	total->candidates += run.candidates;
	total->bytes_sent += run.bytes_sent;
	total->device_ms += run.device_ms;
	total->transfer_ms += run.transfer_ms;
	total->queue_ms += run.queue_ms;
	total->gpu_ordinal = run.gpu_ordinal;
}

/* spill.c */
extern int	GpuJoinSpillPartitions(double build_bytes, double limit);
extern GpuJoinSpill *GpuJoinSpillCreate(int npartitions, MemoryContext cxt);
extern int	GpuJoinSpillCount(const GpuJoinSpill *spill);
extern void GpuJoinSpillWrite(GpuJoinSpill *spill, int side, bool has_key, int64 key,
							  MinimalTuple tuple);
extern void GpuJoinSpillEndSide(GpuJoinSpill *spill, int side);
extern bool GpuJoinSpillRead(GpuJoinSpill *spill, int side, int p, bool *has_key,
							 int64 *key, MinimalTuple *tuple, MemoryContext cxt);
extern void GpuJoinSpillClosePartition(GpuJoinSpill *spill, int p);
extern int64 GpuJoinSpillDiskKB(const GpuJoinSpill *spill);
extern void GpuJoinSpillEnd(GpuJoinSpill *spill);

#endif							/* GPUAGG_HASHJOIN_STATE_H */
