/*-------------------------------------------------------------------------
 *
 * batch/encode.c
 *	  The batch encodings: for each GpuAggEncoding, how one child row's
 *	  value is written into a batch column, how a run of rows given column
 *	  by column is, and how a group key comes back, side by side in one
 *	  table (GpuAggEncoders).
 *
 * GpuAggBatchAppend (a child tuple at a time) calls an encoding's row
 * encoder for each batch column; GpuAggBatchAppendColumns (the direct
 * scan's runs of deformed tuples) calls its column encoder once per column
 * with the run's values.  The two must write the same bits for the same
 * values, so most encodings are one per-value function that both apply
 * (VALUE_ENCODER below): a null row's value is (Datum) 0 in both, and each
 * such function maps it to what a null row carries.  The encodings that
 * keep state in the builder (dictionary ids, spellings, a numeric argument
 * read once per row) are written out as pairs, next to each other.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/uuid.h"

#include "batch/encode.h"
#include "batch/exact_key.h"
#include "batch/key_dict.h"
#include "finalize/numeric.h"

/* Canonical bits of a float4 key: equal values, equal bits. */
static inline int32
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
static inline int64
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

/*
 * Per-value functions: the value written for one row of a column with
 * source src, given the row's datum, whether it is null, and its number
 * among the rows the builder has appended (seq).
 */

static inline int8
bool_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return DatumGetBool(value) ? 1 : 0;
}

static inline int16
int16_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return DatumGetInt16(value);
}

static inline int32
int32_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return DatumGetInt32(value);
}

static inline int64
int64_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return DatumGetInt64(value);
}

static inline float4
float4_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return DatumGetFloat4(value);
}

static inline int64
float8_key_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return encode_float8_key(DatumGetFloat8(value));
}

static inline int32
float4_key_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return encode_float4_key(DatumGetFloat4(value));
}

/* A join key of an exact type: the integer itself, widened. */
static inline int64
join_key_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return GpuJoinExactKey(value, src->type);
}

/* Limb `part` of an integer's square (var_samp and var_pop of integers). */
static inline int64
square_limb_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return GpuAggSquareLimb(src->type == INT2OID ? DatumGetInt16(value) :
							src->type == INT4OID ? DatumGetInt32(value) :
							DatumGetInt64(value), src->part);
}

/*
 * The row's number times two, plus one when a float key's value is -0: the
 * smallest of a group says whether its first row was -0 (batch/builder.c).
 */
static inline int64
zero_sign_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	double		x = src->type == FLOAT4OID ?
		(double) DatumGetFloat4(value) : DatumGetFloat8(value);

	return seq * 2 + (x == 0 && signbit(x) ? 1 : 0);
}

/* A numeric operand of device arithmetic: value * 10^scale, 0 for NaN. */
static inline int64
numeric_operand_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	bool		isnan;

	return null ? 0 : GpuAggNumericOperand(value, src->scale, &isnan);
}

/* A numeric(p, s) group key: value * 10^s, NaN as GPUAGG_NUMERIC_KEY_NAN. */
static inline int64
numeric_key_value(const GpuAggColumnSource *src, Datum value, bool null, int64 seq)
{
	return null ? 0 : GpuAggNumericKey(value, src->scale);
}

/*
 * Define name_row and name_column, which write fn's value of each row into
 * a column of C type T.
 */
#define VALUE_ENCODER(name, T, fn) \
static void \
name##_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row, \
		   Datum datum, bool null) \
{ \
	((T *) col->values)[row] = fn(&builder->sources[c], datum, null, builder->rows_seen); \
} \
\
static void \
name##_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0, \
			  const Datum *v, const bool *nulls, int nrows) \
{ \
	const GpuAggColumnSource *src = &builder->sources[c]; \
	T		   *dst = (T *) col->values + row0; \
	int			r; \
\
	for (r = 0; r < nrows; r++) \
		dst[r] = fn(src, v[r], nulls != NULL && nulls[r], builder->rows_seen + r); \
}

VALUE_ENCODER(bool, int8, bool_value)
VALUE_ENCODER(int16, int16, int16_value)
VALUE_ENCODER(int32, int32, int32_value)
VALUE_ENCODER(int64, int64, int64_value)
VALUE_ENCODER(float4, float4, float4_value)
VALUE_ENCODER(float8_key, int64, float8_key_value)
VALUE_ENCODER(float4_key, int32, float4_key_value)
VALUE_ENCODER(join_key, int64, join_key_value)
VALUE_ENCODER(square_limb, int64, square_limb_value)
VALUE_ENCODER(zero_sign, int64, zero_sign_value)
VALUE_ENCODER(numeric_operand, int64, numeric_operand_value)
VALUE_ENCODER(numeric_key, int64, numeric_key_value)

/* NONE and DERIVED: nothing to write (validity only; the device computes). */
static void
nothing_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
			Datum datum, bool null)
{
}

static void
nothing_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0,
			   const Datum *v, const bool *nulls, int nrows)
{
}

/* FLOAT8: float8_from_datum, with the type test out of the column's loop. */
static void
float8_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
		   Datum datum, bool null)
{
	((float8 *) col->values)[row] = float8_from_datum(datum, builder->sources[c].type);
}

static void
float8_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0,
			  const Datum *v, const bool *nulls, int nrows)
{
	Oid			type = builder->sources[c].type;
	float8	   *dst = (float8 *) col->values + row0;
	int			r;

	if (type == FLOAT8OID)
	{
		for (r = 0; r < nrows; r++)
			dst[r] = float8_from_datum(v[r], FLOAT8OID);
	}
	else
	{
		for (r = 0; r < nrows; r++)
			dst[r] = float8_from_datum(v[r], type);
	}
}

/*
 * DICT_KEY: the id of the value's key in the column's dictionary, or of its
 * spelling when the builder sends to a leader (whose dictionary decides the
 * keys); the spelling is kept for the SPELLING column that follows.
 */
static void
dict_key_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
			 Datum datum, bool null)
{
	int32		spelling;

	if (null)
	{
		((int32 *) col->values)[row] = 0;
		return;
	}
	spelling = KeyDictIntern(builder->dicts[c], datum, builder->batch_cxt);
	builder->row_spelling[c] = spelling;
	((int32 *) col->values)[row] =
		builder->sender ? spelling : KeyDictKey(builder->dicts[c], spelling);
}

static void
dict_key_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0,
				const Datum *v, const bool *nulls, int nrows)
{
	int32	   *dst = (int32 *) col->values + row0;
	int32	   *spellings = builder->chunk_spellings[c];

	KeyDictInternMany(builder->dicts[c], v, nulls, nrows, spellings, builder->batch_cxt);
	if (builder->sender)
		memcpy(dst, spellings, sizeof(int32) * nrows);
	else
		KeyDictKeysOf(builder->dicts[c], spellings, nulls, nrows, dst);
}

/* DICT_JOIN_KEY: as DICT_KEY, as an int64, 0 for a null. */
static void
dict_join_key_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
				  Datum datum, bool null)
{
	int32		spelling;

	if (null)
	{
		((int64 *) col->values)[row] = 0;
		return;
	}
	spelling = KeyDictIntern(builder->dicts[c], datum, builder->batch_cxt);
	((int64 *) col->values)[row] =
		builder->sender ? spelling : KeyDictKey(builder->dicts[c], spelling);
}

static void
dict_join_key_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0,
					 const Datum *v, const bool *nulls, int nrows)
{
	int64	   *dst = (int64 *) col->values + row0;
	int32	   *ids = builder->chunk_spellings[c];
	int			r;

	KeyDictInternMany(builder->dicts[c], v, nulls, nrows, ids, builder->batch_cxt);
	if (!builder->sender)
		KeyDictKeysOf(builder->dicts[c], ids, nulls, nrows, ids);
	for (r = 0; r < nrows; r++)
		dst[r] = (nulls != NULL && nulls[r]) ? 0 : ids[r];
}

/*
 * SPELLING: the row's number shifted left by GPUAGG_SPELLING_BITS, plus the
 * rank of its key column's spelling (0 for a null, and in a sender).
 */
static inline int64
spelling_value(GpuAggBatchBuilder *builder, int key_col, int32 spelling, bool null,
			   int64 seq)
{
	int64		rank = (null || builder->sender) ? 0 :
		KeyDictRank(builder->dicts[key_col], spelling);

	return (seq << GPUAGG_SPELLING_BITS) | rank;
}

static void
spelling_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
			 Datum datum, bool null)
{
	int			key_col = builder->spelling_source[c];

	((int64 *) col->values)[row] =
		spelling_value(builder, key_col, builder->row_spelling[key_col], null,
					   builder->rows_seen);
}

static void
spelling_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0,
				const Datum *v, const bool *nulls, int nrows)
{
	int64	   *dst = (int64 *) col->values + row0;
	int			key_col = builder->spelling_source[c];
	const int32 *spellings = builder->chunk_spellings[key_col];
	int			r;

	for (r = 0; r < nrows; r++)
		dst[r] = spelling_value(builder, key_col, spellings[r],
								nulls != NULL && nulls[r], builder->rows_seen + r);
}

/*
 * STRING_KEY: the value's bytes (detoasted) after the column's bytes so
 * far, and its end offset.  A null takes no bytes.  The builder checks
 * before a row or a run that its values fit (batch/builder.c), so running
 * out of room here is a bug.
 */
static inline void
string_key_value(GaColumn *col, int64 row, Oid type, Datum datum, bool null,
				 MemoryContext scratch)
{
	uint32	   *ends = (uint32 *) col->values;
	uint32		start = ga_string_start(col, row);
	uint32		len = 0;

	if (!null && type == UUIDOID)
	{
		/* a uuid's 16 bytes, whose equality is the type's */
		len = UUID_LEN;
		if ((int64) start + len > col->bytes_capacity)
			elog(ERROR, "gpuagg: a string key does not fit its batch");
		memcpy(col->bytes + start, DatumGetUUIDP(datum)->data, len);
	}
	else if (!null)
	{
		MemoryContext old = MemoryContextSwitchTo(scratch);
		struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(datum));

		MemoryContextSwitchTo(old);
		len = VARSIZE_ANY_EXHDR(v);
		if ((int64) start + len > col->bytes_capacity)
			elog(ERROR, "gpuagg: a string key does not fit its batch");
		memcpy(col->bytes + start, VARDATA_ANY(v), len);
		if ((Pointer) v != DatumGetPointer(datum))
			pfree(v);
	}
	ends[row] = start + len;
}

static void
string_key_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
			   Datum datum, bool null)
{
	string_key_value(col, row, builder->sources[c].type, datum, null, builder->batch_cxt);
}

static void
string_key_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0,
				  const Datum *v, const bool *nulls, int nrows)
{
	Oid			type = builder->sources[c].type;
	int			r;

	for (r = 0; r < nrows; r++)
		string_key_value(col, row0 + r, type, v[r], nulls != NULL && nulls[r],
						 builder->batch_cxt);
}

/* NUMERIC_FLAG: validity only, valid where the value is of the column's kind. */
static inline bool
numeric_flag_absent(const GpuAggColumnSource *src, Datum value, bool null)
{
	return !null && GpuAggNumericPartOf(value) != (GpuAggNumericPart) src->part;
}

static void
numeric_flag_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
				 Datum datum, bool null)
{
	if (numeric_flag_absent(&builder->sources[c], datum, null))
		ga_column_set_null(col, row);
}

static void
numeric_flag_column(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row0,
					const Datum *v, const bool *nulls, int nrows)
{
	const GpuAggColumnSource *src = &builder->sources[c];
	int			r;

	for (r = 0; r < nrows; r++)
		if (numeric_flag_absent(src, v[r], nulls != NULL && nulls[r]))
			ga_column_set_null(col, row0 + r);
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
 * NUMERIC_LIMB, NUMERIC_INT64, NUMERIC_SQUARE_LIMB: a part of a numeric
 * argument's value * 10^scale (finalize/numeric.c); a row that has none
 * (NaN, infinities) is null in the column.  The columns of one argument
 * read it once per row, so these are appended a row at a time only.
 */
static void
numeric_part_row(GpuAggBatchBuilder *builder, int c, GaColumn *col, int64 row,
				 Datum datum, bool null)
{
	const GpuAggColumnSource *src = &builder->sources[c];
	bool		absent = false;
	int64		v = 0;

	if (!null)
	{
		if (!numeric_same_source(builder, c))
		{
			GpuAggNumericRead(datum, src->scale, &builder->numeric);
			builder->numeric_column = c;
		}
		v = GpuAggNumericEncodeValue(&builder->numeric, src->encoding, src->part, &absent);
		if (absent)
			ga_column_set_null(col, row);
	}
	((int64 *) col->values)[row] = v;
}

/* Key decoders (see GpuAggKeyDecoder). */

static Datum
bool_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	return BoolGetDatum(value != 0);
}

static Datum
int16_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	return Int16GetDatum((int16) value);
}

static Datum
int32_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	return Int32GetDatum((int32) value);
}

static Datum
int64_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	return Int64GetDatum(value);
}

/* A zero shows as -0 when the group's first row was -0 (ZERO_SIGN). */
static Datum
float8_key_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	float8		d;

	memcpy(&d, &value, sizeof(d));
	if (d == 0 && (first & 1))
		d = -0.0;
	return Float8GetDatum(d);
}

static Datum
float4_key_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	int32		bits = (int32) value;
	float4		f;

	memcpy(&f, &bits, sizeof(f));
	if (f == 0 && (first & 1))
		f = -0.0f;
	return Float4GetDatum(f);
}

static Datum
numeric_key_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	return GpuAggNumericKeyDatum(value, builder->sources[c].scale);
}

/* The key's value in the spelling of the group's first row (SPELLING). */
static Datum
dict_key_decode(GpuAggBatchBuilder *builder, int c, int64 value, int64 first)
{
	return KeyDictKeyValue(builder->dicts[c], (int32) value,
						   (int32) (first & GPUAGG_SPELLING_MASK));
}

/*
 * Every encoding, indexed by GpuAggEncoding: its name, the device column
 * type that carries it (the C type its encoders write), its encoders and
 * its key decoder.  A DERIVED column's values are int64 (its NaN flag's
 * column is another encoding's, NUMERIC_FLAG).
 */
const GpuAggEncoder GpuAggEncoders[] = {
	[GPUAGG_ENC_NONE] = {"none", GA_TYPE_NONE, nothing_row, nothing_column, NULL},
	[GPUAGG_ENC_BOOL] = {"bool", GA_TYPE_INT8, bool_row, bool_column, bool_decode},
	[GPUAGG_ENC_INT16] = {"int16", GA_TYPE_INT16, int16_row, int16_column, int16_decode},
	[GPUAGG_ENC_INT32] = {"int32", GA_TYPE_INT32, int32_row, int32_column, int32_decode},
	[GPUAGG_ENC_INT64] = {"int64", GA_TYPE_INT64, int64_row, int64_column, int64_decode},
	[GPUAGG_ENC_FLOAT4] = {"float4", GA_TYPE_FLOAT32, float4_row, float4_column, NULL},
	[GPUAGG_ENC_FLOAT8] = {"float8", GA_TYPE_FLOAT64, float8_row, float8_column, NULL},
	[GPUAGG_ENC_FLOAT8_KEY] = {"float8 key", GA_TYPE_INT64, float8_key_row, float8_key_column, float8_key_decode},
	[GPUAGG_ENC_FLOAT4_KEY] = {"float4 key", GA_TYPE_INT32, float4_key_row, float4_key_column, float4_key_decode},
	[GPUAGG_ENC_ZERO_SIGN] = {"zero sign", GA_TYPE_INT64, zero_sign_row, zero_sign_column, NULL},
	[GPUAGG_ENC_SPELLING] = {"spelling", GA_TYPE_INT64, spelling_row, spelling_column, NULL},
	[GPUAGG_ENC_NUMERIC_LIMB] = {"numeric limb", GA_TYPE_INT64, numeric_part_row, NULL, NULL},
	[GPUAGG_ENC_NUMERIC_FLAG] = {"numeric flag", GA_TYPE_NONE, numeric_flag_row, numeric_flag_column, NULL},
	[GPUAGG_ENC_NUMERIC_INT64] = {"numeric int64", GA_TYPE_INT64, numeric_part_row, NULL, NULL},
	[GPUAGG_ENC_SQUARE_LIMB] = {"square limb", GA_TYPE_INT64, square_limb_row, square_limb_column, NULL},
	[GPUAGG_ENC_NUMERIC_SQUARE_LIMB] = {"numeric square limb", GA_TYPE_INT64, numeric_part_row, NULL, NULL},
	[GPUAGG_ENC_DICT_KEY] = {"dictionary key", GA_TYPE_INT32, dict_key_row, dict_key_column, dict_key_decode},
	[GPUAGG_ENC_JOIN_KEY] = {"join key", GA_TYPE_INT64, join_key_row, join_key_column, NULL},
	[GPUAGG_ENC_DICT_JOIN_KEY] = {"dictionary join key", GA_TYPE_INT64, dict_join_key_row, dict_join_key_column, NULL},
	[GPUAGG_ENC_NUMERIC_OPERAND] = {"numeric operand", GA_TYPE_INT64, numeric_operand_row, numeric_operand_column, NULL},
	[GPUAGG_ENC_DERIVED] = {"derived", GA_TYPE_INT64, nothing_row, nothing_column, NULL},
	[GPUAGG_ENC_STRING_KEY] = {"string key", GA_TYPE_STRING, string_key_row, string_key_column, NULL},
	[GPUAGG_ENC_NUMERIC_KEY] = {"numeric key", GA_TYPE_INT64, numeric_key_row, numeric_key_column, numeric_key_decode},
};

StaticAssertDecl(lengthof(GpuAggEncoders) == GPUAGG_ENC_COUNT,
				 "every GpuAggEncoding needs an entry in GpuAggEncoders");

/* The device column type that carries an encoding. */
GaValueType
GpuAggEncodingType(GpuAggEncoding encoding)
{
	return GpuAggEncoderOf(encoding)->type;
}

/* The table entry of an encoding; an error for one that has none. */
const GpuAggEncoder *
GpuAggEncoderOf(GpuAggEncoding encoding)
{
	if ((int) encoding < 0 || encoding >= GPUAGG_ENC_COUNT ||
		GpuAggEncoders[encoding].row == NULL)
		elog(ERROR, "gpuagg: unknown batch encoding %d", (int) encoding);
	return &GpuAggEncoders[encoding];
}
