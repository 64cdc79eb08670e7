/*-------------------------------------------------------------------------
 *
 * batch/builder.c
 *	  Packs child tuples into the columnar batches a device reads, and
 *	  turns encoded group keys back into datums.
 *
 * Each batch column has a source (a child column, optionally masked by a
 * FILTER column: a row whose filter is not true counts as null for that
 * aggregate) and an encoding.  Keys travel as integers whose equality is
 * the SQL type's equality: float keys as canonical bits (-0 becomes 0, every
 * NaN one NaN, as float hashing does), text, bpchar, numeric, uuid and
 * interval keys as ids from a per-column dictionary (batch/key_dict.c) kept for
 * the life of the node, so that ids are stable across batches and decoding
 * needs no device.
 *
 * A float key of zero groups -0 with 0, yet PostgreSQL shows the group as
 * the value of its first row.  A ZERO_SIGN column carries, per row, its
 * number in the input times two plus one if the value is -0; the minimum of
 * that over a group says whether the group's first row was -0.  Likewise a
 * SPELLING column carries the row number shifted left by
 * GPUAGG_SPELLING_BITS plus the rank of the row's spelling of a dictionary
 * key ('1.50' or '1.5'), so that a group shows its first row's spelling.
 *
 * A builder in a parallel worker (a sender) writes spelling ids instead of
 * key ids and leaves ranks at 0: the leader's dictionary decides both (see
 * batch/message.c).
 *
 * Text keys that travel as bytes (STRING_KEY) need no dictionary: each row's
 * bytes go after the previous row's in the column's bytes, which hold
 * GpuAggStringBytes of them in a device's batch.  A row, or the part of a
 * run, whose strings do not fit is not appended: the append says so and the
 * caller submits the batch and appends the rest to the next one.  A local
 * batch (GpuAggLocalBatchCreate: a worker's, or a spilling node's) starts
 * with the bytes the planner's average widths ask for, grows to four times
 * that, and beyond only for a row that does not fit it empty, up to a device
 * batch's bytes: a batch of short strings takes little memory, and one long
 * key still fits.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/uuid.h"
#include "guc.h"

#include "batch/batch.h"
#include "batch/encode.h"
#include "batch/key_dict.h"

/* Create a builder for the given columns; memory lives in cxt. */
GpuAggBatchBuilder *
GpuAggBatchBuilderCreate(int ncolumns, const GpuAggColumnSource *sources,
						 MemoryContext cxt)
{
	GpuAggBatchBuilder *builder;
	int			i;

	builder = MemoryContextAllocZero(cxt, sizeof(GpuAggBatchBuilder));
	builder->ncolumns = ncolumns;
	builder->cxt = cxt;
	builder->batch_cxt = AllocSetContextCreate(cxt, "gpuagg batch",
											   ALLOCSET_DEFAULT_SIZES);
	builder->sources = MemoryContextAlloc(cxt, sizeof(GpuAggColumnSource) * Max(ncolumns, 1));
	builder->dicts = MemoryContextAllocZero(cxt, sizeof(KeyDict *) * Max(ncolumns, 1));
	for (i = 0; i < ncolumns; i++)
	{
		builder->sources[i] = sources[i];
		if (GPUAGG_ENC_IS_DICT(sources[i].encoding))
		{
			int			j;

			/* a join key's two sides share one dictionary: equal ids, equal keys */
			for (j = 0; j < i; j++)
				if (sources[i].encoding == GPUAGG_ENC_DICT_JOIN_KEY &&
					sources[j].encoding == GPUAGG_ENC_DICT_JOIN_KEY &&
					sources[i].join_key == sources[j].join_key)
					builder->dicts[i] = builder->dicts[j];
			if (builder->dicts[i] == NULL)
				builder->dicts[i] = KeyDictCreate(sources[i].type, cxt);
		}
	}
	GpuAggBatchBuilderSetColumns(builder, 0, ncolumns);
	builder->string_columns = MemoryContextAlloc(cxt, sizeof(int) * Max(ncolumns, 1));
	for (i = 0; i < ncolumns; i++)
		if (sources[i].encoding == GPUAGG_ENC_STRING_KEY)
			builder->string_columns[builder->nstrings++] = i;
	builder->columnar = true;
	for (i = 0; i < ncolumns; i++)
	{
		/* the columns of one numeric argument read it once per row */
		if (GpuAggEncoderOf(sources[i].encoding)->column == NULL)
			builder->columnar = false;
	}
	builder->chunk_spellings = MemoryContextAllocZero(cxt, sizeof(int32 *) * Max(ncolumns, 1));
	builder->spelling_source = MemoryContextAlloc(cxt, sizeof(int) * Max(ncolumns, 1));
	builder->row_spelling = MemoryContextAllocZero(cxt, sizeof(int32) * Max(ncolumns, 1));
	for (i = 0; i < ncolumns; i++)
	{
		int			j;

		builder->spelling_source[i] = -1;
		if (sources[i].encoding != GPUAGG_ENC_SPELLING)
			continue;

		/*
		 * Its key column is the nearest one before it of the same child
		 * column: an aggjoin layout numbers each side's child columns from
		 * 1 and puts a side's columns together, so another side's key of
		 * the same number lies before the side's first column.
		 */
		for (j = i - 1; j >= 0 && builder->spelling_source[i] < 0; j--)
			if (sources[j].encoding == GPUAGG_ENC_DICT_KEY && sources[j].attno == sources[i].attno &&
				sources[j].filter_attno == sources[i].filter_attno)
				builder->spelling_source[i] = j;
		if (builder->spelling_source[i] < 0)
			elog(ERROR, "gpuagg: spelling column %d has no key column before it", i);
	}
	return builder;
}

/*
 * Make appends fill only the columns [first, end): an aggjoin
 * (aggjoin/build.c) fills its probe columns from outer rows and its build
 * columns from inner rows, with one builder so that both share its
 * dictionaries.
 */
void
GpuAggBatchBuilderSetColumns(GpuAggBatchBuilder *builder, int first, int end)
{
	int			c;

	Assert(first >= 0 && first <= end && end <= builder->ncolumns);
	builder->first_column = first;
	builder->end_column = end;
	builder->max_attno = 0;
	for (c = first; c < end; c++)
		builder->max_attno = Max(builder->max_attno,
								 Max(builder->sources[c].attno, builder->sources[c].filter_attno));
}

/* Begin filling a batch: per-batch memory is released. */
void
GpuAggBatchBuilderStart(GpuAggBatchBuilder *builder, GaBatch *batch)
{
	MemoryContextReset(builder->batch_cxt);
	if (batch->ncolumns != builder->ncolumns)
		elog(ERROR, "gpuagg: device batch has %d columns, expected %d",
			 batch->ncolumns, builder->ncolumns);
}

/*
 * Bytes per batch of a string column of a batch of `rows` rows: room for
 * GPUAGG_STRING_ROW_BYTES a row, and at least GPUAGG_STRING_MIN_BYTES, the
 * longest key a batch takes.  A batch of more rows never holds fewer bytes,
 * so that a worker's message always fits an empty batch of the leader's.
 */
int64
GpuAggStringBytes(int64 rows)
{
	return Min(Max(rows * GPUAGG_STRING_ROW_BYTES, GPUAGG_STRING_MIN_BYTES),
			   (int64) PG_UINT32_MAX);
}

/*
 * A local batch and the most bytes its string columns may grow to.  The
 * node's local batches are few; each is found by its address in a list
 * that the reset of its memory context leaves.
 */
typedef struct LocalBatch
{
	GaBatch		batch;
	int64		string_budget;	/* most bytes of a column of several rows */
	int64		string_limit;	/* ... and of an empty batch's first row */
	MemoryContextCallback forget;
} LocalBatch;

static List *local_batches = NIL;

/* Forget a local batch whose memory goes (a memory context callback). */
static void
local_batch_forget(void *arg)
{
	local_batches = list_delete_ptr(local_batches, arg);
}

/* The local batch at batch, or NULL for a device's batch. */
static LocalBatch *
local_batch_of(GaBatch *batch)
{
	ListCell   *lc;

	foreach(lc, local_batches)
	{
		LocalBatch *local = lfirst(lc);

		if (&local->batch == batch)
			return local;
	}
	return NULL;
}

/* The most bytes column c of an empty batch takes: the longest key. */
static int64
batch_string_limit(GaBatch *batch, int c)
{
	LocalBatch *local = local_batch_of(batch);

	return local != NULL ? local->string_limit : batch->columns[c].bytes_capacity;
}

/*
 * Whether column c of batch holds `bytes` string bytes in all: yes when they
 * fit; when they do not, a local batch's column grows to them (twice its
 * bytes at least), up to four times the bytes it started with, or, for the
 * first row of an empty batch, up to the bytes of a device batch of its
 * rows, the longest key a batch takes.
 */
bool
GpuAggBatchStringRoom(GaBatch *batch, int c, int64 bytes)
{
	GaColumn   *col = &batch->columns[c];
	LocalBatch *local;
	int64		most;
	int64		grown;

	if (bytes <= col->bytes_capacity)
		return true;
	if ((local = local_batch_of(batch)) == NULL)
		return false;
	most = batch->nrows == 0 ? local->string_limit : local->string_budget;
	if (bytes > most)
		return false;
	grown = Min(Max(bytes, 2 * col->bytes_capacity), Max(most, local->string_budget));
	col->bytes = repalloc_huge(col->bytes, grown);
	col->bytes_capacity = grown;
	return true;
}

/* The bytes of a string key's value, without detoasting it: a uuid's 16. */
static inline int64
string_value_bytes(Oid type, Datum value)
{
	if (type == UUIDOID)
		return UUID_LEN;
	return (int64) toast_raw_datum_size(value) - VARHDRSZ;
}

/* Fail for a key longer than an empty batch's string column holds. */
static void
string_too_long(int64 bytes, int64 capacity)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("gpuagg: a text value of " INT64_FORMAT " bytes is longer than a batch holds",
					bytes),
			 errdetail("A batch of GpuHashAgg holds " INT64_FORMAT " bytes of each text group key or DISTINCT argument.",
					   capacity),
			 errhint("Set gpuagg.string_keys = off to send such values through a dictionary.")));
}

/*
 * Whether the row of these child values fits the batch's string columns;
 * an error when it would not fit even an empty batch.
 */
static bool
string_row_fits(GpuAggBatchBuilder *builder, GaBatch *batch, const Datum *values,
				const bool *isnull)
{
	int			i;

	for (i = 0; i < builder->nstrings; i++)
	{
		int			c = builder->string_columns[i];
		const GpuAggColumnSource *src = &builder->sources[c];
		GaColumn   *col = &batch->columns[c];
		int64		bytes;

		if (c < builder->first_column || c >= builder->end_column ||
			isnull[src->attno - 1])
			continue;
		bytes = string_value_bytes(src->type, values[src->attno - 1]);
		if (GpuAggBatchStringRoom(batch, c, ga_string_used(col, batch->nrows) + bytes))
			continue;
		if (batch->nrows == 0)
			string_too_long(bytes, batch_string_limit(batch, c));
		return false;
	}
	return true;
}

/*
 * How many of the nrows rows given column by column fit the batch's string
 * columns, from the first on; an error when the first would not fit even an
 * empty batch.
 */
static int
string_run_fits(GpuAggBatchBuilder *builder, GaBatch *batch, int nrows,
				const GpuAggInputColumn *input)
{
	int			fit = nrows;
	int			i;

	for (i = 0; i < builder->nstrings; i++)
	{
		int			c = builder->string_columns[i];
		const GpuAggInputColumn *in = &input[builder->sources[c].attno - 1];
		GaColumn   *col = &batch->columns[c];
		int64		used = ga_string_used(col, batch->nrows);
		int			r;

		if (c < builder->first_column || c >= builder->end_column)
			continue;
		for (r = 0; r < fit; r++)
		{
			if (in->hasnull && in->isnull[r])
				continue;
			used += string_value_bytes(builder->sources[c].type, in->values[r]);
			if (!GpuAggBatchStringRoom(batch, c, used))
				break;
		}
		if (r == 0 && fit > 0 && batch->nrows == 0)
			string_too_long(used, batch_string_limit(batch, c));
		fit = r;
	}
	return fit;
}

/*
 * Append one child tuple as the next row of the batch, each column through
 * its encoding's row encoder (batch/encode.c).  Returns false, appending
 * nothing, when the row's strings do not fit the batch (see above).
 */
bool
GpuAggBatchAppend(GpuAggBatchBuilder *builder, GaBatch *batch, TupleTableSlot *slot)
{
	int64		row = batch->nrows;
	Datum	   *values;
	bool	   *isnull;
	int			c;

	slot_getsomeattrs(slot, builder->max_attno);
	values = slot->tts_values;
	isnull = slot->tts_isnull;
	builder->numeric_column = -1;
	if (builder->nstrings > 0 && !string_row_fits(builder, batch, values, isnull))
		return false;

	for (c = builder->first_column; c < builder->end_column; c++)
	{
		const GpuAggColumnSource *src = &builder->sources[c];
		GaColumn   *col = &batch->columns[c];
		Datum		datum = (Datum) 0;
		bool		null = false;

		if (src->attno > 0)
		{
			datum = values[src->attno - 1];
			null = isnull[src->attno - 1];
		}
		if (!null && src->filter_attno > 0)
			null = isnull[src->filter_attno - 1] ||
				!DatumGetBool(values[src->filter_attno - 1]);
		if (null)
		{
			ga_column_set_null(col, row);
			datum = (Datum) 0;
		}

		GpuAggEncoders[src->encoding].row(builder, c, col, row, datum, null);
	}
	builder->rows_seen++;
	batch->nrows = row + 1;
	return true;
}

/*
 * Whether GpuAggBatchAppendColumns can take this builder's rows: every
 * column's encoding has a column encoder (a numeric argument's columns read
 * it once per row, so they have none).
 */
bool
GpuAggBatchBuilderColumnar(GpuAggBatchBuilder *builder)
{
	return builder->columnar;
}

/* Make the builder's per-chunk arrays hold at least nrows rows. */
static void
chunk_reserve(GpuAggBatchBuilder *builder, int nrows)
{
	int			size = Max(builder->chunk_size, 256);
	int			c;

	if (nrows <= builder->chunk_size)
		return;
	while (size < nrows)
		size *= 2;
	for (c = 0; c < builder->ncolumns; c++)
	{
		if (!GPUAGG_ENC_IS_DICT(builder->sources[c].encoding))
			continue;
		if (builder->chunk_spellings[c] != NULL)
			pfree(builder->chunk_spellings[c]);
		builder->chunk_spellings[c] = MemoryContextAlloc(builder->cxt, sizeof(int32) * size);
	}
	if (builder->chunk_values != NULL)
	{
		pfree(builder->chunk_values);
		pfree(builder->chunk_nulls);
		pfree(builder->chunk_zeros);
	}
	builder->chunk_values = MemoryContextAlloc(builder->cxt, sizeof(Datum) * size);
	builder->chunk_nulls = MemoryContextAlloc(builder->cxt, sizeof(bool) * size);
	builder->chunk_zeros = MemoryContextAllocZero(builder->cxt, sizeof(Datum) * size);
	builder->chunk_size = size;
}

/*
 * Append nrows rows given column by column (see GpuAggInputColumn): each
 * batch column is encoded by its encoding's column encoder in one loop over
 * the rows (batch/encode.c, which keeps it equal to the row encoder value
 * for value); the builder must be columnar.  Returns the rows appended: the
 * first ones, as many as the batch's string columns hold (see above).
 */
int
GpuAggBatchAppendColumns(GpuAggBatchBuilder *builder, GaBatch *batch, int nrows,
						 const GpuAggInputColumn *input)
{
	int64		row0 = batch->nrows;
	int			c;
	int			r;

	if (!builder->columnar)
		elog(ERROR, "gpuagg: batch columns cannot be appended column by column");
	Assert(row0 + nrows <= batch->capacity);
	if (builder->nstrings > 0)
		nrows = string_run_fits(builder, batch, nrows, input);
	chunk_reserve(builder, nrows);

	for (c = builder->first_column; c < builder->end_column; c++)
	{
		const GpuAggColumnSource *src = &builder->sources[c];
		GaColumn   *col = &batch->columns[c];
		const Datum *v = builder->chunk_zeros;
		const bool *nulls = NULL;	/* NULL: no row is null */

		if (src->attno > 0)
		{
			v = input[src->attno - 1].values;
			if (input[src->attno - 1].hasnull)
				nulls = input[src->attno - 1].isnull;
		}
		if (src->filter_attno > 0)
		{
			/* a row whose FILTER is not true is null for this column */
			const GpuAggInputColumn *f = &input[src->filter_attno - 1];
			Datum	   *masked = builder->chunk_values;
			bool	   *masked_nulls = builder->chunk_nulls;

			for (r = 0; r < nrows; r++)
			{
				bool		null = (nulls != NULL && nulls[r]) ||
					(f->hasnull && f->isnull[r]) || !DatumGetBool(f->values[r]);

				masked_nulls[r] = null;
				masked[r] = null ? (Datum) 0 : v[r];
			}
			v = masked;
			nulls = masked_nulls;
		}
		if (nulls != NULL)
		{
			for (r = 0; r < nrows; r++)
				if (nulls[r])
					ga_column_set_null(col, row0 + r);
		}

		GpuAggEncoders[src->encoding].column(builder, c, col, row0, v, nulls, nrows);
	}
	builder->rows_seen += nrows;
	batch->nrows = row0 + nrows;
	return nrows;
}

/*
 * Whether the device computes batch column `column` (nobody fills it, and
 * a batch message carries none of it).
 */
bool
GpuAggBatchColumnDerived(GpuAggBatchBuilder *builder, int column)
{
	return builder->sources[column].encoding == GPUAGG_ENC_DERIVED;
}

/*
 * Intern a key value into the dictionary of key column `column` and return
 * its id (the leader does this for dictionary entries that parallel workers
 * send, see batch/message.c).
 */
int32
GpuAggBatchInternKey(GpuAggBatchBuilder *builder, int column, Datum value)
{
	return KeyDictIntern(builder->dicts[column], value, builder->batch_cxt);
}

/* Make the builder a sender's: spelling ids, no ranks (see above). */
void
GpuAggBatchBuilderSetSender(GpuAggBatchBuilder *builder)
{
	builder->sender = true;
}

/* For a SPELLING column, the DICT_KEY column it describes; else -1. */
int
GpuAggBatchSpellingSource(GpuAggBatchBuilder *builder, int column)
{
	return builder->spelling_source[column];
}

/* The dictionary of key column `column`, or NULL when it has none. */
KeyDict *
GpuAggBatchDict(GpuAggBatchBuilder *builder, int column)
{
	return builder->dicts[column];
}

/* Per-batch memory of the builder, for temporary values. */
MemoryContext
GpuAggBatchScratch(GpuAggBatchBuilder *builder)
{
	return builder->batch_cxt;
}

/*
 * A batch in backend-local memory, for packing nodes that send batches as
 * messages instead of to a device, and for a node that spills its input;
 * same shape as the device's batches.  Its string columns start with
 * string_bytes bytes (at least GPUAGG_STRING_START_BYTES) and grow for a
 * longer value up to a device batch's (GpuAggBatchStringRoom).
 */
GaBatch *
GpuAggLocalBatchCreate(int ncolumns, const GaValueType *types, int64 capacity,
					   int64 string_bytes, MemoryContext cxt)
{
	LocalBatch *local = MemoryContextAllocZero(cxt, sizeof(LocalBatch));
	GaBatch    *batch = &local->batch;
	MemoryContext old;
	int			c;

	local->string_limit = GpuAggStringBytes(capacity);
	string_bytes = Min(Max(string_bytes, GPUAGG_STRING_START_BYTES), local->string_limit);
	local->string_budget = Min(4 * string_bytes, local->string_limit);
	local->forget.func = local_batch_forget;
	local->forget.arg = local;
	MemoryContextRegisterResetCallback(cxt, &local->forget);
	old = MemoryContextSwitchTo(TopMemoryContext);
	local_batches = lappend(local_batches, local);
	MemoryContextSwitchTo(old);

	batch->capacity = capacity;
	batch->ncolumns = ncolumns;
	batch->columns = MemoryContextAllocZero(cxt, sizeof(GaColumn) * Max(ncolumns, 1));
	for (c = 0; c < ncolumns; c++)
	{
		GaColumn   *col = &batch->columns[c];

		col->type = types[c];
		if (ga_type_width(types[c]) > 0)
			col->values = MemoryContextAllocHuge(cxt, ga_type_width(types[c]) * capacity);
		col->validity = MemoryContextAllocHuge(cxt, (capacity + 7) / 8);
		if (types[c] == GA_TYPE_STRING)
		{
			col->bytes_capacity = string_bytes;
			col->bytes = MemoryContextAllocHuge(cxt, col->bytes_capacity);
		}
	}
	GpuAggLocalBatchReset(batch);
	return batch;
}

/* Empty a local batch: no rows and no pages, every validity bit set. */
void
GpuAggLocalBatchReset(GaBatch *batch)
{
	int			c;

	batch->nrows = 0;
	batch->npages = 0;
	for (c = 0; c < batch->ncolumns; c++)
	{
		memset(batch->columns[c].validity, 0xFF, (batch->capacity + 7) / 8);
		batch->columns[c].has_nulls = 0;
	}
}

/*
 * The value of string key `key` of a result's group as a datum of the key's
 * base type: a uuid from its 16 bytes, else text (a padded bpchar's bytes
 * are those of its bpchar datum too).
 */
Datum
GpuAggStringKeyDatum(const GaAggResult *result, int key, int64 group, Oid type)
{
	int64		start = group > 0 ? result->key_values[key][group - 1] : 0;

	if (type == UUIDOID)
	{
		pg_uuid_t  *uuid = palloc(sizeof(pg_uuid_t));

		if (result->key_values[key][group] - start != UUID_LEN)
			elog(ERROR, "gpuagg: a uuid key of " INT64_FORMAT " bytes",
				 result->key_values[key][group] - start);
		memcpy(uuid->data, (const char *) result->key_bytes[key] + start, UUID_LEN);
		return UUIDPGetDatum(uuid);
	}
	return PointerGetDatum(cstring_to_text_with_len((const char *) result->key_bytes[key] + start,
													(int) (result->key_values[key][group] - start)));
}

/*
 * Turn an encoded key of batch column `column` back into a datum of `type`.
 * first is the group's ZERO_SIGN or SPELLING minimum (see above), if any.
 */
Datum
GpuAggDecodeKey(GpuAggBatchBuilder *builder, int column, Oid type, int64 value,
				int64 first)
{
	GpuAggKeyDecoder decode = GpuAggEncoderOf(builder->sources[column].encoding)->decode;

	if (decode != NULL)
		return decode(builder, column, value, first);
	elog(ERROR, "gpuagg: cannot decode a key of type %u", type);
	return (Datum) 0;			/* keep compiler quiet */
}
