/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  Packs child tuples into the columnar batches a device reads, and
 *	  turns encoded group keys back into datums.
 *
 * Each batch column has a source (a child column, optionally masked by a
 * FILTER column: a row whose filter is not true counts as null for that
 * aggregate) and an encoding.  Keys travel as integers whose equality is
 * the SQL type's equality: float8 keys as canonical bits (-0 becomes 0, every
 * NaN one NaN, as float8 hashing does), text keys as ids from a per-column
 * dictionary kept for the life of the node, so that ids are stable across
 * batches and decoding needs no device.
 *
 * A float8 key of zero groups -0 with 0, yet PostgreSQL shows the group as
 * the value of its first row.  A ZERO_SIGN column carries, per row, its
 * number in the input times two plus one if the value is -0; the minimum of
 * that over a group says whether the group's first row was -0.
 *
 *-------------------------------------------------------------------------
 */
#include "gpuagg.h"

#include <math.h>

#include "common/hashfn.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* Distinct text values of one key column, by dense id. */
typedef struct TextDict
{
	int32		count;
	int32		entries_size;
	text	  **entries;		/* by id; 4-byte header copies */
	uint32	   *entry_hash;		/* by id */
	int32	   *slots;			/* open addressing: id + 1, 0 = empty */
	uint32		slot_mask;
} TextDict;

struct GpuAggBatchBuilder
{
	int			ncolumns;
	GpuAggColumnSource *sources;
	TextDict  **dicts;			/* per column; NULL unless a text key */
	AttrNumber	max_attno;
	int64		rows_seen;		/* rows appended so far, for ZERO_SIGN */
	MemoryContext cxt;			/* dictionaries: life of the node */
	MemoryContext batch_cxt;	/* detoasted values: one batch */
};

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
	builder->dicts = MemoryContextAllocZero(cxt, sizeof(TextDict *) * Max(ncolumns, 1));
	for (i = 0; i < ncolumns; i++)
	{
		builder->sources[i] = sources[i];
		builder->max_attno = Max(builder->max_attno,
								 Max(sources[i].attno, sources[i].filter_attno));
		if (sources[i].encoding == GPUAGG_ENC_TEXT_KEY)
		{
			TextDict   *dict = MemoryContextAllocZero(cxt, sizeof(TextDict));

			dict->entries_size = 64;
			dict->entries = MemoryContextAlloc(cxt, sizeof(text *) * dict->entries_size);
			dict->entry_hash = MemoryContextAlloc(cxt, sizeof(uint32) * dict->entries_size);
			dict->slot_mask = 127;
			dict->slots = MemoryContextAllocZero(cxt, sizeof(int32) * (dict->slot_mask + 1));
			builder->dicts[i] = dict;
		}
	}
	return builder;
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

/* Double the slot array of a dictionary and re-insert every id. */
static void
dict_grow_slots(GpuAggBatchBuilder *builder, TextDict *dict)
{
	uint32		mask = dict->slot_mask * 2 + 1;
	int32	   *slots = MemoryContextAllocZero(builder->cxt, sizeof(int32) * ((Size) mask + 1));
	int32		id;

	for (id = 0; id < dict->count; id++)
	{
		uint32		slot = dict->entry_hash[id] & mask;

		while (slots[slot] != 0)
			slot = (slot + 1) & mask;
		slots[slot] = id + 1;
	}
	pfree(dict->slots);
	dict->slots = slots;
	dict->slot_mask = mask;
}

/* The id of a text value, adding it to the dictionary when new. */
static int32
dict_lookup(GpuAggBatchBuilder *builder, TextDict *dict, const char *data, int len)
{
	uint32		hash = hash_bytes((const unsigned char *) data, len);
	uint32		slot = hash & dict->slot_mask;
	int32		id;
	text	   *copy;

	for (;;)
	{
		int32		entry = dict->slots[slot];
		text	   *value;

		if (entry == 0)
			break;
		value = dict->entries[entry - 1];
		if (dict->entry_hash[entry - 1] == hash &&
			VARSIZE(value) - VARHDRSZ == len &&
			memcmp(VARDATA(value), data, len) == 0)
			return entry - 1;
		slot = (slot + 1) & dict->slot_mask;
	}

	if (dict->count == PG_INT32_MAX - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpuagg: too many distinct text group keys")));
	if (dict->count == dict->entries_size)
	{
		dict->entries_size *= 2;
		dict->entries = repalloc_huge(dict->entries, sizeof(text *) * dict->entries_size);
		dict->entry_hash = repalloc_huge(dict->entry_hash, sizeof(uint32) * dict->entries_size);
	}
	id = dict->count++;
	copy = MemoryContextAlloc(builder->cxt, VARHDRSZ + len);
	SET_VARSIZE(copy, VARHDRSZ + len);
	memcpy(VARDATA(copy), data, len);
	dict->entries[id] = copy;
	dict->entry_hash[id] = hash;
	dict->slots[slot] = id + 1;
	if ((uint32) dict->count * 2 > dict->slot_mask)
		dict_grow_slots(builder, dict);
	return id;
}

/* Encode a text datum as its dictionary id. */
static int32
encode_text(GpuAggBatchBuilder *builder, TextDict *dict, Datum datum)
{
	struct varlena *value = (struct varlena *) DatumGetPointer(datum);

	if (VARATT_IS_COMPRESSED(value) || VARATT_IS_EXTERNAL(value))
	{
		MemoryContext old = MemoryContextSwitchTo(builder->batch_cxt);

		value = pg_detoast_datum_packed(value);
		MemoryContextSwitchTo(old);
	}
	return dict_lookup(builder, dict, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
}

/* Canonical bits of a float8 key: equal values, equal bits. */
static int64
encode_float8_key(float8 value)
{
	int64		bits;

	if (isnan(value))
		return INT64CONST(0x7ff8000000000000);
	if (value == 0)
		value = 0.0;			/* -0 groups with 0 */
	memcpy(&bits, &value, sizeof(bits));
	return bits;
}

/* Append one child tuple as the next row of the batch. */
void
GpuAggBatchAppend(GpuAggBatchBuilder *builder, GaBatch *batch, TupleTableSlot *slot)
{
	int64		row = batch->nrows;
	Datum	   *values;
	bool	   *isnull;
	int			c;

	slot_getsomeattrs(slot, builder->max_attno);
	values = slot->tts_values;
	isnull = slot->tts_isnull;

	for (c = 0; c < builder->ncolumns; c++)
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

		switch (src->encoding)
		{
			case GPUAGG_ENC_NONE:
				break;
			case GPUAGG_ENC_BOOL:
				((int8 *) col->values)[row] = DatumGetBool(datum) ? 1 : 0;
				break;
			case GPUAGG_ENC_INT16:
				((int16 *) col->values)[row] = DatumGetInt16(datum);
				break;
			case GPUAGG_ENC_INT32:
				((int32 *) col->values)[row] = DatumGetInt32(datum);
				break;
			case GPUAGG_ENC_INT64:
				((int64 *) col->values)[row] = null ? 0 : DatumGetInt64(datum);
				break;
			case GPUAGG_ENC_FLOAT4:
				((float4 *) col->values)[row] = null ? 0 : DatumGetFloat4(datum);
				break;
			case GPUAGG_ENC_FLOAT8:
				((float8 *) col->values)[row] = null ? 0 : DatumGetFloat8(datum);
				break;
			case GPUAGG_ENC_FLOAT8_KEY:
				((int64 *) col->values)[row] = null ? 0 : encode_float8_key(DatumGetFloat8(datum));
				break;
			case GPUAGG_ENC_TEXT_KEY:
				((int32 *) col->values)[row] = null ? 0 :
					encode_text(builder, builder->dicts[c], datum);
				break;
			case GPUAGG_ENC_ZERO_SIGN:
				((int64 *) col->values)[row] = builder->rows_seen * 2 +
					(!null && DatumGetFloat8(datum) == 0 && signbit(DatumGetFloat8(datum)) ? 1 : 0);
				break;
		}
	}
	builder->rows_seen++;
	batch->nrows = row + 1;
}

/*
 * Intern a text value into the dictionary of text key column `column` and
 * return its id (the leader does this for dictionary entries that parallel
 * workers send, see batch_message.c).
 */
int32
GpuAggBatchInternText(GpuAggBatchBuilder *builder, int column, const char *data, int len)
{
	return dict_lookup(builder, builder->dicts[column], data, len);
}

/* Number of values in the dictionary of text key column `column`. */
int32
GpuAggBatchDictSize(GpuAggBatchBuilder *builder, int column)
{
	return builder->dicts[column]->count;
}

/* Value `id` of the dictionary of text key column `column` (4-byte header). */
const text *
GpuAggBatchDictEntry(GpuAggBatchBuilder *builder, int column, int32 id)
{
	return builder->dicts[column]->entries[id];
}

/*
 * A batch in backend-local memory, for packing nodes that send batches as
 * messages instead of to a device; same shape as the device's batches.
 */
GaBatch *
GpuAggLocalBatchCreate(int ncolumns, const GaValueType *types, int64 capacity,
					   MemoryContext cxt)
{
	GaBatch    *batch = MemoryContextAllocZero(cxt, sizeof(GaBatch));
	int			c;

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
	}
	GpuAggLocalBatchReset(batch);
	return batch;
}

/* Empty a local batch: no rows, every validity bit set. */
void
GpuAggLocalBatchReset(GaBatch *batch)
{
	int			c;

	batch->nrows = 0;
	for (c = 0; c < batch->ncolumns; c++)
	{
		memset(batch->columns[c].validity, 0xFF, (batch->capacity + 7) / 8);
		batch->columns[c].has_nulls = 0;
	}
}

/*
 * Turn an encoded key of batch column `column` back into a datum of `type`.
 * first_sign is the group's ZERO_SIGN minimum for float8 keys (see above).
 */
Datum
GpuAggDecodeKey(GpuAggBatchBuilder *builder, int column, Oid type, int64 value,
				int64 first_sign)
{
	switch (builder->sources[column].encoding)
	{
		case GPUAGG_ENC_BOOL:
			return BoolGetDatum(value != 0);
		case GPUAGG_ENC_INT16:
			return Int16GetDatum((int16) value);
		case GPUAGG_ENC_INT32:
			return Int32GetDatum((int32) value);
		case GPUAGG_ENC_INT64:
			return Int64GetDatum(value);
		case GPUAGG_ENC_FLOAT8_KEY:
			{
				float8		d;

				memcpy(&d, &value, sizeof(d));
				if (d == 0 && (first_sign & 1))
					d = -0.0;
				return Float8GetDatum(d);
			}
		case GPUAGG_ENC_TEXT_KEY:
			{
				TextDict   *dict = builder->dicts[column];

				if (value < 0 || value >= dict->count)
					elog(ERROR, "gpuagg: device returned unknown text key id " INT64_FORMAT, value);
				return PointerGetDatum(dict->entries[value]);
			}
		default:
			break;
	}
	elog(ERROR, "gpuagg: cannot decode a key of type %u", type);
	return (Datum) 0;			/* keep compiler quiet */
}
