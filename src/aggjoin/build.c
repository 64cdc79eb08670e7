/*-------------------------------------------------------------------------
 *
 * aggjoin/build.c
 *	  An aggjoin in the executor: each build side's rows read into the
 *	  device's build of its join step (GpuAggJoinBuild), from the side's
 *	  tuples or from the batch messages of the parallel workers packing it,
 *	  with a Bloom filter of its keys for the probe side's workers
 *	  (aggjoin/probe_filter.c) where the step qualifies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "aggjoin/aggjoin.h"
#include "aggjoin/probe_filter.h"
#include "batch/batch.h"
#include "devices.h"
#include "hashagg/desc.h"
#include "hashagg/hashagg.h"
#include "hashagg/layout.h"

/*
 * Make room for at least want rows in the columns [first, end) of payload
 * (a build side's), whose memory is in cxt.
 */
static void
payload_reserve(GaBatch *payload, int first, int end, int64 want, MemoryContext cxt)
{
	int64		capacity = Max(payload->capacity, 1024);
	int			c;

	if (want <= payload->capacity)
		return;
	while (capacity < want)
		capacity *= 2;
	for (c = first; c < end; c++)
	{
		GaColumn   *col = &payload->columns[c];
		int			width = ga_type_width(col->type);
		int64		old_bytes = (payload->capacity + 7) / 8;

		if (width > 0)
			col->values = col->values == NULL ?
				MemoryContextAllocExtended(cxt, width * capacity, MCXT_ALLOC_HUGE) :
				repalloc_huge(col->values, width * capacity);
		col->validity = col->validity == NULL ?
			MemoryContextAllocExtended(cxt, (capacity + 7) / 8, MCXT_ALLOC_HUGE) :
			repalloc_huge(col->validity, (capacity + 7) / 8);
		memset(col->validity + old_bytes, 0xff, (capacity + 7) / 8 - old_bytes);
	}
	payload->capacity = capacity;
}

/* The most bytes any string column of [first, end) of payload holds. */
static int64
string_room(const GaBatch *payload, int first, int end)
{
	int64		room = 0;
	int			c;

	for (c = first; c < end; c++)
		room = Max(room, payload->columns[c].bytes_capacity);
	return room;
}

/*
 * Make room for more bytes after those in use in each string column (a
 * join key that travels as its bytes) of [first, end) of payload, at least
 * GpuAggStringBytes of them, doubling; an error past the 4 GB that end
 * offsets address.
 */
static void
payload_reserve_bytes(GaBatch *payload, int first, int end, int64 more, MemoryContext cxt)
{
	int			c;

	for (c = first; c < end; c++)
	{
		GaColumn   *col = &payload->columns[c];
		int64		want;
		int64		capacity;

		if (col->type != GA_TYPE_STRING)
			continue;
		want = (payload->nrows > 0 ? ga_string_used(col, payload->nrows) : 0) + more;
		if (want <= col->bytes_capacity && col->bytes != NULL)
			continue;
		if (want > (int64) PG_UINT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("the text join keys of an aggjoin's inner side exceed " INT64_FORMAT " bytes",
							(int64) PG_UINT32_MAX),
					 errhint("Set gpuagg.string_keys = off to join such keys through a dictionary.")));
		capacity = Max(col->bytes_capacity, GpuAggStringBytes(0));
		while (capacity < want)
			capacity = Min(capacity * 2, (int64) PG_UINT32_MAX);
		col->bytes = col->bytes == NULL ?
			MemoryContextAllocExtended(cxt, capacity, MCXT_ALLOC_HUGE) :
			repalloc_huge(col->bytes, capacity);
		col->bytes_capacity = capacity;
	}
}

/* The key columns of a build side, for comparing build rows by their keys. */
typedef struct BuildKeyColumns
{
	int			nkeys;
	const GaColumn *columns[GA_AGG_MAX_JOIN_KEYS];
} BuildKeyColumns;

/*
 * qsort_arg comparator of build rows by their keys (a BuildKeyColumns):
 * int64 values, or a string key's bytes (by length, then bytes; any order
 * that puts equal keys together serves).
 */
static int
build_row_keys_cmp(const void *a, const void *b, void *arg)
{
	const BuildKeyColumns *keys = arg;
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;
	int			k;

	for (k = 0; k < keys->nkeys; k++)
	{
		const GaColumn *col = keys->columns[k];

		if (col->type == GA_TYPE_STRING)
		{
			const uint32 *ends = (const uint32 *) col->values;
			uint32		x0 = ga_string_start(col, x);
			uint32		y0 = ga_string_start(col, y);
			uint32		xlen = ends[x] - x0;
			uint32		ylen = ends[y] - y0;
			int			cmp;

			if (xlen != ylen)
				return xlen < ylen ? -1 : 1;
			cmp = xlen > 0 ? memcmp(col->bytes + x0, col->bytes + y0, xlen) : 0;
			if (cmp != 0)
				return cmp;
		}
		else
		{
			const int64 *values = (const int64 *) col->values;

			if (values[x] != values[y])
				return values[x] < values[y] ? -1 : 1;
		}
	}
	return 0;
}

/*
 * A SEMI join's build: each key (all its columns) once, the first of its
 * rows (a SEMI join's aggregation reads no build column), so that the
 * device's inner join matches each probe row at most once.  Returns the
 * number left in rows.
 */
static int64
build_distinct_rows(const BuildKeyColumns *keys, uint32 *rows, int64 n)
{
	int64		kept = 0;
	int64		i;

	qsort_arg(rows, n, sizeof(uint32), build_row_keys_cmp, (void *) keys);
	for (i = 0; i < n; i++)
	{
		if (kept > 0 && build_row_keys_cmp(&rows[kept - 1], &rows[i], (void *) keys) == 0)
			continue;
		rows[kept++] = rows[i];
	}
	return kept;
}

/* Fail clearly when the build side has more rows than a device join takes. */
static void
build_check_rows(int64 nrows)
{
	if (nrows > GA_JOIN_MAX_BUILD_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the inner side of an aggjoin GpuHashAgg has more than " INT64_FORMAT " rows",
						(int64) GA_JOIN_MAX_BUILD_ROWS),
				 errhint("Set gpuagg.enable_aggjoin = off to join these rows another way.")));
}

/*
 * Read the inner child's next batch message (parallel workers packing the
 * build side) into payload; false at the end.
 */
static bool
build_read_message(PlanState *inner, GaBatch *payload, int first, int end,
				   GpuAggBatchBuilder *builder, GpuAggMessageReceiver *receiver,
				   MemoryContext cxt)
{
	TupleTableSlot *slot = ExecProcNode(inner);
	bytea	   *message;
	int32		exchange_slot = -1;
	bool		isnull;

	if (TupIsNull(slot))
		return false;
	message = DatumGetByteaPP(slot_getattr(slot, 1, &isnull));
	if (isnull)
		elog(ERROR, "gpuagg: empty batch message");
	if (GpuAggExchangeIsRef(message))
		message = GpuAggExchangeGet(GpuAggPackExchange(inner), message, &exchange_slot);
	build_check_rows(payload->nrows + GpuAggMessageRows(message));
	payload_reserve(payload, first, end, payload->nrows + GpuAggMessageRows(message), cxt);
	/* a message's string bytes are fewer than its own */
	payload_reserve_bytes(payload, first, end, VARSIZE_ANY(message), cxt);
	GpuAggBatchBuilderStart(builder, payload);
	GpuAggMessageAppend(receiver, builder, payload, message);
	if (exchange_slot >= 0)
		GpuAggExchangeRelease(GpuAggPackExchange(inner), exchange_slot);
	return true;
}

/*
 * Read every row of join step step's build side (the inner child) into agg's
 * build: its build columns and build key through builder (which then fills
 * the probe columns again), from its tuples or, packed by parallel workers,
 * from its batch messages (receiver maps their dictionary ids); the rows are
 * held in cxt until the device has them (the child itself runs in the
 * executor's memory).  With filter given and the probe side packed by
 * parallel workers, a step that qualifies adds a Bloom filter of its build
 * keys to it (aggjoin/probe_filter.c).  Returns false with status set when
 * the device fails.
 */
bool
GpuAggJoinBuild(GaAgg *agg, const GpuAggDesc *desc, const GpuAggLayout *layout, int step,
				GpuAggBatchBuilder *builder, GpuAggMessageReceiver *receiver,
				PlanState *inner, MemoryContext cxt, GpuAggProbeFilter *filter,
				GaStatus *status)
{
	GaBatch    *payload = MemoryContextAllocZero(cxt, sizeof(GaBatch));
	int			first = layout->side_first[step];
	int			end = layout->side_first[step + 1];
	BuildKeyColumns key_columns;
	int64	   *keys;
	uint32	   *rows;
	int64		nkeys = 0;
	int64		r;
	bool		ok;
	int			c;
	int			k;

	payload->ncolumns = layout->ncolumns;
	payload->columns = MemoryContextAllocZero(cxt, sizeof(GaColumn) * layout->ncolumns);
	for (c = 0; c < layout->ncolumns; c++)
		payload->columns[c].type = layout->column_types[c];
	GpuAggBatchBuilderSetColumns(builder, first, end);
	if (desc->packed_sides & (1 << step))
	{
		while (build_read_message(inner, payload, first, end, builder, receiver, cxt))
			CHECK_FOR_INTERRUPTS();
	}
	else
	{
		/* string columns start with room; a row that does not fit grows them */
		payload_reserve_bytes(payload, first, end, 0, cxt);
		for (;;)
		{
			TupleTableSlot *slot = ExecProcNode(inner);

			if (TupIsNull(slot))
				break;
			build_check_rows(payload->nrows + 1);
			payload_reserve(payload, first, end, payload->nrows + 1, cxt);
			/* detoasted values of the build columns: one batch's worth at a time */
			if (payload->nrows % 65536 == 0)
				GpuAggBatchBuilderStart(builder, payload);
			/* a row whose key bytes do not fit: twice the room, and again */
			while (!GpuAggBatchAppend(builder, payload, slot))
				payload_reserve_bytes(payload, first, end, string_room(payload, first, end) + 1,
									  cxt);
			CHECK_FOR_INTERRUPTS();
		}
	}
	GpuAggBatchBuilderSetColumns(builder, 0, layout->side_first[1]);

	/*
	 * The build rows with a key (a null never matches), each key once for a
	 * SEMI join; one key's values go with them, the keys of a hashed step
	 * (several, or bytes) are read by the device from their columns.
	 */
	key_columns.nkeys = desc->join_steps[step - 1].nkeys;
	for (k = 0; k < key_columns.nkeys; k++)
		key_columns.columns[k] = &payload->columns[layout->build_key_columns[step][k]];
	rows = MemoryContextAllocExtended(cxt, sizeof(uint32) * Max(payload->nrows, 1), MCXT_ALLOC_HUGE);
	for (r = 0; r < payload->nrows; r++)
	{
		for (k = 0; k < key_columns.nkeys; k++)
			if (ga_column_is_null(&payload->columns[layout->build_key_columns[step][k]], r))
				break;
		if (k == key_columns.nkeys)
			rows[nkeys++] = (uint32) r;
	}
	if (desc->join_steps[step - 1].build_unique)
		nkeys = build_distinct_rows(&key_columns, rows, nkeys);
	keys = NULL;
	if (!ga_join_step_hashed(&layout->join_spec.steps[step - 1]))
	{
		const int64 *values = (const int64 *) key_columns.columns[0]->values;

		keys = MemoryContextAllocExtended(cxt, sizeof(int64) * Max(nkeys, 1), MCXT_ALLOC_HUGE);
		for (r = 0; r < nkeys; r++)
			keys[r] = values[rows[r]];
		if (filter != NULL && desc->child_kind == GPUAGG_CHILD_PACKED &&
			GpuAggProbeFilterStepQualifies(desc, layout, step, &c))
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			GpuAggProbeFilterAdd(filter, c, keys, nkeys);
			MemoryContextSwitchTo(old);
		}
	}
	ok = ga_aggjoin_build(agg, step - 1, keys, rows, nkeys, payload, GpuAggDeviceWait, NULL,
						   status);
	for (c = first; c < end; c++)
	{
		if (payload->columns[c].values != NULL)
			pfree(payload->columns[c].values);
		if (payload->columns[c].validity != NULL)
			pfree(payload->columns[c].validity);
		if (payload->columns[c].bytes != NULL)
			pfree(payload->columns[c].bytes);
	}
	if (keys != NULL)
		pfree(keys);
	pfree(rows);
	return ok;
}
