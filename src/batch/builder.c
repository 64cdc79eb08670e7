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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/memutils.h"

#include "batch/batch.h"
#include "batch/exact_key.h"
#include "batch/key_dict.h"
#include "finalize/numeric.h"

struct GpuAggBatchBuilder
{
	int			ncolumns;
	GpuAggColumnSource *sources;
	KeyDict   **dicts;			/* per column; NULL unless a dictionary key */
	int			first_column;	/* appends fill columns [first, end) */
	int			end_column;
	AttrNumber	max_attno;		/* of those columns */
	int64		rows_seen;		/* rows appended so far, for ZERO_SIGN/SPELLING */
	bool		sender;			/* packing for a leader: spelling ids, no ranks */
	int		   *spelling_source;	/* per column: the DICT_KEY column a
									 * SPELLING column describes, or -1 */
	int32	   *row_spelling;	/* per DICT_KEY column: the current row's spelling */
	GpuAggNumericValue numeric;	/* the current row's numeric argument ... */
	int			numeric_column; /* ... read for this column's source, or -1 */
	MemoryContext cxt;			/* dictionaries: life of the node */
	MemoryContext batch_cxt;	/* detoasted values: one batch */

	/* GpuAggBatchAppendColumns */
	bool		columnar;		/* no column needs the row at a time */
	int			chunk_size;		/* rows the arrays below hold */
	int32	  **chunk_spellings;	/* per DICT_KEY column: rows' spellings */
	Datum	   *chunk_values;	/* values masked by a FILTER */
	bool	   *chunk_nulls;	/* nulls of a column with a FILTER */
	Datum	   *chunk_zeros;	/* the values of a column with no source */
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
	builder->columnar = true;
	for (i = 0; i < ncolumns; i++)
	{
		switch (sources[i].encoding)
		{
			case GPUAGG_ENC_NUMERIC_LIMB:
			case GPUAGG_ENC_NUMERIC_INT64:
			case GPUAGG_ENC_NUMERIC_SQUARE_LIMB:
				/* columns of one numeric argument share its reading per row */
				builder->columnar = false;
				break;
			default:
				break;
		}
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

/* Canonical bits of a float4 key: equal values, equal bits. */
static int32
encode_float4_key(float4 value)
{
	int32		bits;

	if (isnan(value))
		return 0x7fc00000;
	if (value == 0)
		value = 0.0f;			/* -0 groups with 0 */
	memcpy(&bits, &value, sizeof(bits));
	return bits;
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

/*
 * Whether the numeric read last in this row (if any) is the value of
 * column c: the same child column, FILTER and scale.
 */
static inline bool
numeric_same_source(GpuAggBatchBuilder *builder, int c)
{
	const GpuAggColumnSource *a;
	const GpuAggColumnSource *b;

	if (builder->numeric_column < 0)
		return false;
	a = &builder->sources[builder->numeric_column];
	b = &builder->sources[c];
	return a->attno == b->attno && a->filter_attno == b->filter_attno && a->scale == b->scale;
}

/*
 * A float8 column's value from a child column of type `type`: float8
 * itself, or int2, int4, int8 or float4 converted as PostgreSQL's casts to
 * float8 convert them (hashagg/catalog.c's float8_source_column).
 */
static inline float8
float8_from_datum(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return (float8) DatumGetInt16(value);
		case INT4OID:
			return (float8) DatumGetInt32(value);
		case INT8OID:
			return (float8) DatumGetInt64(value);
		case FLOAT4OID:
			return (float8) DatumGetFloat4(value);
		default:
			return DatumGetFloat8(value);
	}
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
	builder->numeric_column = -1;

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
				((float8 *) col->values)[row] = null ? 0 : float8_from_datum(datum, src->type);
				break;
			case GPUAGG_ENC_FLOAT8_KEY:
				((int64 *) col->values)[row] = null ? 0 : encode_float8_key(DatumGetFloat8(datum));
				break;
			case GPUAGG_ENC_JOIN_KEY:
				((int64 *) col->values)[row] = null ? 0 : GpuJoinExactKey(datum, src->type);
				break;
			case GPUAGG_ENC_DICT_JOIN_KEY:
				if (null)
					((int64 *) col->values)[row] = 0;
				else
				{
					int32		spelling = KeyDictIntern(builder->dicts[c], datum,
														 builder->batch_cxt);

					((int64 *) col->values)[row] =
						builder->sender ? spelling : KeyDictKey(builder->dicts[c], spelling);
				}
				break;
			case GPUAGG_ENC_FLOAT4_KEY:
				((int32 *) col->values)[row] = null ? 0 : encode_float4_key(DatumGetFloat4(datum));
				break;
			case GPUAGG_ENC_DICT_KEY:
				if (null)
					((int32 *) col->values)[row] = 0;
				else
				{
					KeyDict    *dict = builder->dicts[c];
					int32		spelling = KeyDictIntern(dict, datum, builder->batch_cxt);

					builder->row_spelling[c] = spelling;
					((int32 *) col->values)[row] =
						builder->sender ? spelling : KeyDictKey(dict, spelling);
				}
				break;
			case GPUAGG_ENC_NUMERIC_LIMB:
			case GPUAGG_ENC_NUMERIC_FLAG:
			case GPUAGG_ENC_NUMERIC_INT64:
			case GPUAGG_ENC_NUMERIC_SQUARE_LIMB:
				{
					bool		absent = false;
					int64		v = 0;

					if (!null)
					{
						/* the columns of one argument read it once per row */
						if (!numeric_same_source(builder, c))
						{
							GpuAggNumericRead(datum, src->scale, &builder->numeric);
							builder->numeric_column = c;
						}
						v = GpuAggNumericEncodeValue(&builder->numeric, src->encoding,
													 src->part, &absent);
					}

					if (absent && !null)
						ga_column_set_null(col, row);
					if (src->encoding != GPUAGG_ENC_NUMERIC_FLAG)
						((int64 *) col->values)[row] = v;
				}
				break;
			case GPUAGG_ENC_NUMERIC_OPERAND:
				{
					bool		isnan;

					((int64 *) col->values)[row] = null ? 0 :
						GpuAggNumericOperand(datum, src->scale, &isnan);
				}
				break;
			case GPUAGG_ENC_DERIVED:
				break;			/* the device computes it */
			case GPUAGG_ENC_SQUARE_LIMB:
				((int64 *) col->values)[row] = null ? 0 :
					GpuAggSquareLimb(src->type == INT2OID ? DatumGetInt16(datum) :
									 src->type == INT4OID ? DatumGetInt32(datum) :
									 DatumGetInt64(datum), src->part);
				break;
			case GPUAGG_ENC_SPELLING:
				{
					int			key_col = builder->spelling_source[c];
					int64		rank = (null || builder->sender) ? 0 :
						KeyDictRank(builder->dicts[key_col], builder->row_spelling[key_col]);

					((int64 *) col->values)[row] =
						(builder->rows_seen << GPUAGG_SPELLING_BITS) | rank;
				}
				break;
			case GPUAGG_ENC_ZERO_SIGN:
				{
					double		v = null ? 1 : src->type == FLOAT4OID ?
						(double) DatumGetFloat4(datum) : DatumGetFloat8(datum);

					((int64 *) col->values)[row] = builder->rows_seen * 2 +
						(v == 0 && signbit(v) ? 1 : 0);
				}
				break;
		}
	}
	builder->rows_seen++;
	batch->nrows = row + 1;
}

/*
 * Whether GpuAggBatchAppendColumns can take this builder's rows: every
 * column but a numeric argument's (whose columns read it once per row).
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
 * batch column is encoded in one loop over the rows, with no per-row switch
 * on its encoding.  The same encodings as GpuAggBatchAppend, which this must
 * match value for value; the builder must be columnar.
 */
void
GpuAggBatchAppendColumns(GpuAggBatchBuilder *builder, GaBatch *batch, int nrows,
						 const GpuAggInputColumn *input)
{
	int64		row0 = batch->nrows;
	int			c;
	int			r;

	if (!builder->columnar)
		elog(ERROR, "gpuagg: batch columns cannot be appended column by column");
	Assert(row0 + nrows <= batch->capacity);
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

		/*
		 * A null row's value is 0, so the loops below need no null test but
		 * where a null is not encoded as f(0): dictionary keys and spellings.
		 */
		switch (src->encoding)
		{
			case GPUAGG_ENC_NONE:
				break;
			case GPUAGG_ENC_BOOL:
				{
					int8	   *dst = (int8 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = DatumGetBool(v[r]) ? 1 : 0;
				}
				break;
			case GPUAGG_ENC_INT16:
				{
					int16	   *dst = (int16 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = DatumGetInt16(v[r]);
				}
				break;
			case GPUAGG_ENC_INT32:
				{
					int32	   *dst = (int32 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = DatumGetInt32(v[r]);
				}
				break;
			case GPUAGG_ENC_INT64:
				{
					int64	   *dst = (int64 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = DatumGetInt64(v[r]);
				}
				break;
			case GPUAGG_ENC_FLOAT4:
				{
					float4	   *dst = (float4 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = DatumGetFloat4(v[r]);
				}
				break;
			case GPUAGG_ENC_FLOAT8:
				{
					float8	   *dst = (float8 *) col->values + row0;

					/* a float8 argument's column may hold another type */
					if (src->type == FLOAT8OID)
					{
						for (r = 0; r < nrows; r++)
							dst[r] = DatumGetFloat8(v[r]);
					}
					else
					{
						for (r = 0; r < nrows; r++)
							dst[r] = float8_from_datum(v[r], src->type);
					}
				}
				break;
			case GPUAGG_ENC_FLOAT8_KEY:
				{
					int64	   *dst = (int64 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = encode_float8_key(DatumGetFloat8(v[r]));
				}
				break;
			case GPUAGG_ENC_JOIN_KEY:
				{
					int64	   *dst = (int64 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = GpuJoinExactKey(v[r], src->type);
				}
				break;
			case GPUAGG_ENC_FLOAT4_KEY:
				{
					int32	   *dst = (int32 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = encode_float4_key(DatumGetFloat4(v[r]));
				}
				break;
			case GPUAGG_ENC_DICT_KEY:
				{
					int32	   *dst = (int32 *) col->values + row0;
					int32	   *spellings = builder->chunk_spellings[c];

					KeyDictInternMany(builder->dicts[c], v, nulls, nrows, spellings,
									  builder->batch_cxt);
					if (builder->sender)
						memcpy(dst, spellings, sizeof(int32) * nrows);
					else
						KeyDictKeysOf(builder->dicts[c], spellings, nulls, nrows, dst);
				}
				break;
			case GPUAGG_ENC_DICT_JOIN_KEY:
				{
					int64	   *dst = (int64 *) col->values + row0;
					int32	   *ids = builder->chunk_spellings[c];

					KeyDictInternMany(builder->dicts[c], v, nulls, nrows, ids,
									  builder->batch_cxt);
					if (!builder->sender)
						KeyDictKeysOf(builder->dicts[c], ids, nulls, nrows, ids);
					for (r = 0; r < nrows; r++)
						dst[r] = (nulls != NULL && nulls[r]) ? 0 : ids[r];
				}
				break;
			case GPUAGG_ENC_SQUARE_LIMB:
				{
					int64	   *dst = (int64 *) col->values + row0;

					for (r = 0; r < nrows; r++)
						dst[r] = GpuAggSquareLimb(src->type == INT2OID ? DatumGetInt16(v[r]) :
												  src->type == INT4OID ? DatumGetInt32(v[r]) :
												  DatumGetInt64(v[r]), src->part);
				}
				break;
			case GPUAGG_ENC_SPELLING:
				{
					int64	   *dst = (int64 *) col->values + row0;
					int			key_col = builder->spelling_source[c];
					const int32 *spellings = builder->chunk_spellings[key_col];

					for (r = 0; r < nrows; r++)
					{
						int64		rank = ((nulls != NULL && nulls[r]) || builder->sender) ? 0 :
							KeyDictRank(builder->dicts[key_col], spellings[r]);

						dst[r] = ((builder->rows_seen + r) << GPUAGG_SPELLING_BITS) | rank;
					}
				}
				break;
			case GPUAGG_ENC_ZERO_SIGN:
				{
					int64	   *dst = (int64 *) col->values + row0;

					for (r = 0; r < nrows; r++)
					{
						double		x = src->type == FLOAT4OID ?
							(double) DatumGetFloat4(v[r]) : DatumGetFloat8(v[r]);

						dst[r] = (builder->rows_seen + r) * 2 + (x == 0 && signbit(x) ? 1 : 0);
					}
				}
				break;
			case GPUAGG_ENC_NUMERIC_OPERAND:
				{
					int64	   *dst = (int64 *) col->values + row0;
					bool		isnan;

					for (r = 0; r < nrows; r++)
						dst[r] = (nulls != NULL && nulls[r]) ? 0 :
							GpuAggNumericOperand(v[r], src->scale, &isnan);
				}
				break;
			case GPUAGG_ENC_NUMERIC_FLAG:
				/* valid where the value is of the column's kind */
				for (r = 0; r < nrows; r++)
					if (!(nulls != NULL && nulls[r]) &&
						GpuAggNumericPartOf(v[r]) != (GpuAggNumericPart) src->part)
						ga_column_set_null(col, row0 + r);
				break;
			case GPUAGG_ENC_DERIVED:
				break;			/* the device computes it */
			case GPUAGG_ENC_NUMERIC_LIMB:
			case GPUAGG_ENC_NUMERIC_INT64:
			case GPUAGG_ENC_NUMERIC_SQUARE_LIMB:
				elog(ERROR, "gpuagg: numeric batch column %d appended column by column", c);
				break;
		}
	}
	builder->rows_seen += nrows;
	batch->nrows = row0 + nrows;
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
 * first is the group's ZERO_SIGN or SPELLING minimum (see above), if any.
 */
Datum
GpuAggDecodeKey(GpuAggBatchBuilder *builder, int column, Oid type, int64 value,
				int64 first)
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
				if (d == 0 && (first & 1))
					d = -0.0;
				return Float8GetDatum(d);
			}
		case GPUAGG_ENC_FLOAT4_KEY:
			{
				int32		bits = (int32) value;
				float4		f;

				memcpy(&f, &bits, sizeof(f));
				if (f == 0 && (first & 1))
					f = -0.0f;
				return Float4GetDatum(f);
			}
		case GPUAGG_ENC_DICT_KEY:
			return KeyDictKeyValue(builder->dicts[column], (int32) value,
								   (int32) (first & GPUAGG_SPELLING_MASK));
		default:
			break;
	}
	elog(ERROR, "gpuagg: cannot decode a key of type %u", type);
	return (Datum) 0;			/* keep compiler quiet */
}
