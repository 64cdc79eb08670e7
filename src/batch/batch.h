/*-------------------------------------------------------------------------
 *
 * batch/batch.h
 *	  Columnar batches on the host: packing rows into them (builder.c),
 *	  sending them between processes as messages (message.c) through
 *	  shared memory (exchange.c), and reading a Seq Scan's pages straight
 *	  into them (scan_direct.c), as rows or as page images that the device
 *	  deforms (pages.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_BATCH_H
#define GPUAGG_BATCH_H

#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "storage/bufpage.h"
#include "nodes/execnodes.h"

#include "batch/encoding.h"
#include "batch/key_dict.h"
#include "gpuagg_device.h"

typedef struct GpuAggBatchBuilder GpuAggBatchBuilder;

/*
 * A string column's bytes per batch row, and the fewest bytes it holds
 * (GpuAggStringBytes): the longest text key a batch takes.
 */
#define GPUAGG_STRING_ROW_BYTES 32
#define GPUAGG_STRING_MIN_BYTES (INT64CONST(16) * 1024 * 1024)

/* The fewest bytes a local batch's string column starts with. */
#define GPUAGG_STRING_START_BYTES (INT64CONST(64) * 1024)

/*
 * Rows given column by column (GpuAggBatchAppendColumns): per child output
 * column, nrows values and null flags; the value of a null row is 0.
 */
typedef struct GpuAggInputColumn
{
	const Datum *values;
	const bool *isnull;
	bool		hasnull;		/* whether any of the rows is null */
} GpuAggInputColumn;

/* batch/builder.c */
extern GpuAggBatchBuilder *GpuAggBatchBuilderCreate(int ncolumns,
													const GpuAggColumnSource *sources,
													MemoryContext cxt);
extern void GpuAggBatchBuilderSetColumns(GpuAggBatchBuilder *builder, int first, int end);
extern void GpuAggBatchBuilderStart(GpuAggBatchBuilder *builder, GaBatch *batch);
extern bool GpuAggBatchAppend(GpuAggBatchBuilder *builder, GaBatch *batch,
							  TupleTableSlot *slot);
extern bool GpuAggBatchBuilderColumnar(GpuAggBatchBuilder *builder);
extern int	GpuAggBatchAppendColumns(GpuAggBatchBuilder *builder, GaBatch *batch,
									 int nrows, const GpuAggInputColumn *input);
extern int64 GpuAggStringBytes(int64 rows);
extern bool GpuAggBatchStringRoom(GaBatch *batch, int c, int64 bytes);
extern Datum GpuAggStringKeyDatum(const GaAggResult *result, int key, int64 group,
								  Oid type);
extern bool GpuAggBatchColumnDerived(GpuAggBatchBuilder *builder, int column);
extern int32 GpuAggBatchInternKey(GpuAggBatchBuilder *builder, int column,
								  Datum value);
extern void GpuAggBatchBuilderSetSender(GpuAggBatchBuilder *builder);
extern int	GpuAggBatchSpellingSource(GpuAggBatchBuilder *builder, int column);
extern KeyDict *GpuAggBatchDict(GpuAggBatchBuilder *builder, int column);
extern MemoryContext GpuAggBatchScratch(GpuAggBatchBuilder *builder);
extern GaBatch *GpuAggLocalBatchCreate(int ncolumns, const GaValueType *types,
									   int64 capacity, int64 string_bytes,
									   MemoryContext cxt);
extern void GpuAggLocalBatchReset(GaBatch *batch);
extern Datum GpuAggDecodeKey(GpuAggBatchBuilder *builder, int column,
							 Oid type, int64 value, int64 first);

/* batch/message.c: batches sent by parallel workers as bytea messages */
typedef struct GpuAggMessageReceiver GpuAggMessageReceiver;

/*
 * The most page images a message carries: a CPU device's batch holds 256,
 * the fewest of any device's (ga_device_page_capacity), so that a
 * message's pages fit an empty batch of whichever device the leader runs.
 */
#define GPUAGG_MESSAGE_PAGES 256

extern bytea *GpuAggMessageBuild(GpuAggBatchBuilder *builder, GaBatch *batch,
								 uint64 sender, int first_column, int32 *dict_sent,
								 StringInfo buf);
extern Size GpuAggMessageBytes(int ncolumns, const GaValueType *types, int64 rows);
extern Size GpuAggMessagePageBytes(int ncolumns, int64 npages);
extern int64 GpuAggMessageCapacity(void);
extern int64 GpuAggMessageRows(bytea *message);
extern bool GpuAggMessageFits(bytea *message, GaBatch *batch);
extern GpuAggMessageReceiver *GpuAggMessageReceiverCreate(int ncolumns,
														  MemoryContext cxt);
extern void GpuAggMessageAppend(GpuAggMessageReceiver *receiver,
								GpuAggBatchBuilder *builder, GaBatch *batch,
								bytea *message);

/*
 * Bytes past a quarter of Gather's 64 kB tuple queue: a message at least
 * this long is flushed to the leader when sent (batch/exchange.c).
 */
#define GPUAGG_FLUSHED_MESSAGE_BYTES (16 * 1024 + 64)

/* batch/exchange.c: batch messages from workers in shared memory */
typedef struct GpuAggExchange GpuAggExchange;

typedef struct GpuAggExchangeStats
{
	uint64		through_slots;	/* workers' messages handed over in a slot */
	uint64		through_queue;	/* ... sent through Gather's queue instead */
	uint64		waits;			/* times a worker found no free slot at first */
	int			nslots;
	Size		slot_bytes;
} GpuAggExchangeStats;

extern Size GpuAggExchangeMaxBytes(void);
extern Size GpuAggExchangeSize(int nslots, Size slot_bytes);
extern GpuAggExchange *GpuAggExchangeCreate(void *place, int nslots, Size slot_bytes,
											MemoryContext cxt);
extern GpuAggExchange *GpuAggExchangeAttach(void *place, MemoryContext cxt);
extern void GpuAggExchangeReset(GpuAggExchange *x);
extern void GpuAggExchangeCounts(GpuAggExchange *x, GpuAggExchangeStats *stats);
extern bytea *GpuAggExchangePut(GpuAggExchange *x, bytea *message);
extern bool GpuAggExchangeIsRef(bytea *message);
extern bytea *GpuAggExchangeGet(GpuAggExchange *x, bytea *ref_message, int32 *slot);
extern void GpuAggExchangeRelease(GpuAggExchange *x, int32 slot);

/* batch/page_share.c: workers' heap pages written into the leader's batch */
typedef struct GpuAggPageShare GpuAggPageShare;

extern Size GpuAggPageShareSize(void);
extern GpuAggPageShare *GpuAggPageShareInit(void *place);
extern void GpuAggPageShareReset(GpuAggPageShare *share);
extern bool GpuAggPageShareFits(int64 page_capacity, int64 capacity);
extern void GpuAggPageShareOpen(GpuAggPageShare *share, GaBatch *batch);
extern bool GpuAggPageShareIsOpen(GpuAggPageShare *share, uint32 gen);
extern void GpuAggPageShareClose(GpuAggPageShare *share, GaBatch *batch);
extern void GpuAggPageShareStop(GpuAggPageShare *share);
extern bool GpuAggPageShareReserve(GpuAggPageShare *share, int n, uint32 *gen,
								   uint8 **image, GaPageDesc **desc, uint32 *first_row);
extern void GpuAggPageShareWritten(GpuAggPageShare *share);
extern bool GpuAggPageShareWait(GpuAggPageShare *share, uint32 gen, int max_ms,
								bool *timed_out);
extern void GpuAggPageShareCounts(GpuAggPageShare *share, int64 *in_place, int64 *batches,
								  int64 *waits);
extern bytea *GpuAggPageShareNotice(uint32 gen, bool full, bool pad, StringInfo buf);
extern bool GpuAggPageShareIsNotice(bytea *message, uint32 *gen, bool *full);

/* batch/pages.c: heap pages as batch input (gpuagg_device.h, "Heap pages") */
extern GaPageInput *GpuAggPageInputBuild(TupleDesc tupdesc, const AttrNumber *output_attnos,
										 int noutputs, int ncolumns,
										 const GpuAggColumnSource *sources, int64 batch_rows,
										 const char **reason);
extern void GpuAggPageAppend(GaBatch *batch, Page page, const OffsetNumber *visible, int n,
							 bool all_visible);
extern void GpuAggPageCopy(uint8 *image, GaPageDesc *desc, Page page,
						   const OffsetNumber *visible, int n, bool all_visible,
						   uint32 first_row);
extern void GpuAggPageAreaSet(GaBatch *batch, int64 page_capacity, MemoryContext cxt);

/* batch/scan_direct.c: reading a plain Seq Scan's heap pages directly */
typedef struct GpuAggDirectScan GpuAggDirectScan;
struct GpuAggProbeKeys;			/* aggjoin/probe_filter.h */

/* The Input line of EXPLAIN when a node reads its child's pages directly. */
#define GPUAGG_DIRECT_SCAN_TEXT "table pages read directly from the Seq Scan below"

extern GpuAggDirectScan *GpuAggDirectScanCreate(PlanState *child, MemoryContext cxt);
extern uint8 GpuAggAttAlignBytes(char attalign);
extern void GpuAggDirectScanSetProbeKeys(GpuAggDirectScan *ds,
										 struct GpuAggProbeKeys *keys);
extern bool GpuAggDirectScanFill(GpuAggDirectScan *ds, GpuAggBatchBuilder *builder,
								 GaBatch *batch);

/* How GpuAggDirectScanFillShared stopped. */
typedef enum GpuAggShareFill
{
	GPUAGG_SHARE_END,			/* the table is read */
	GPUAGG_SHARE_FULL,			/* the open batch has no room for the next page */
	GPUAGG_SHARE_MORE			/* max_rows went in: call again */
} GpuAggShareFill;

extern GpuAggShareFill GpuAggDirectScanFillShared(GpuAggDirectScan *ds,
												  GpuAggPageShare *share, int64 max_rows,
												  uint32 *gen);
extern const GaPageInput *GpuAggDirectScanUsePages(GpuAggDirectScan *ds, int ncolumns,
												   const GpuAggColumnSource *sources,
												   int64 batch_rows, int64 page_capacity,
												   const char *off_reason);
extern void GpuAggDirectScanPageCounts(GpuAggDirectScan *ds, int64 *to_device,
									   int64 *through_host, const char **reason);
extern void GpuAggDirectScanReset(GpuAggDirectScan *ds);
extern void GpuAggDirectScanEnd(GpuAggDirectScan *ds);

#endif							/* GPUAGG_BATCH_H */
