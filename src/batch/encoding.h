/*-------------------------------------------------------------------------
 *
 * batch/encoding.h
 *	  How values travel in the columns of a batch: each column's encoding
 *	  and where its values come from.
 *
 * A batch column holds values of a device type (gpuagg_device.h,
 * GaValueType).  Its encoding says how a child column's datum becomes that
 * value: integers as they are, float keys as canonical bits, dictionary
 * types as ids (batch/key_dict.c), text keys as their bytes (a
 * GA_TYPE_STRING column), numerics as limbs or scaled integers
 * (finalize/numeric.c), join keys as exact int64 keys; batch/builder.c
 * encodes, hashagg/layout.c chooses.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_BATCH_ENCODING_H
#define GPUAGG_BATCH_ENCODING_H

#include "access/attnum.h"

#include "gpuagg_device.h"

/* How one value travels in a batch column. */
typedef enum GpuAggEncoding
{
	GPUAGG_ENC_NONE,			/* validity only (count(x)) */
	GPUAGG_ENC_BOOL,			/* GA_TYPE_INT8 0/1 */
	GPUAGG_ENC_INT16,
	GPUAGG_ENC_INT32,			/* int4, date */
	GPUAGG_ENC_INT64,			/* int8, timestamp */
	GPUAGG_ENC_FLOAT4,
	GPUAGG_ENC_FLOAT8,
	GPUAGG_ENC_FLOAT8_KEY,		/* canonical bits of a float8 key as int64 */
	GPUAGG_ENC_FLOAT4_KEY,		/* canonical bits of a float4 key as int32 */
	GPUAGG_ENC_ZERO_SIGN,		/* row number * 2 + (value is -0): see batch/builder.c */
	GPUAGG_ENC_SPELLING,		/* row number << 24 | spelling rank: batch/builder.c */
	GPUAGG_ENC_NUMERIC_LIMB,	/* limb `part` of numeric * 10^scale, int64 */
	GPUAGG_ENC_NUMERIC_FLAG,	/* validity only: numeric is finite/NaN/+inf/-inf */
	GPUAGG_ENC_NUMERIC_INT64,	/* numeric * 10^scale as int64 (min/max) */
	GPUAGG_ENC_SQUARE_LIMB,		/* limb `part` of an integer's square, int64 */
	GPUAGG_ENC_NUMERIC_SQUARE_LIMB, /* limb `part` of (numeric * 10^scale)^2 */
	GPUAGG_ENC_DICT_KEY,		/* dictionary id (batch/key_dict.c) as int32 */
	GPUAGG_ENC_JOIN_KEY,		/* join key: GpuJoinExactKey() as int64 */
	GPUAGG_ENC_DICT_JOIN_KEY,	/* join key: dictionary key id as int64 */
	GPUAGG_ENC_NUMERIC_OPERAND, /* numeric * 10^scale as int64, 0 for NaN: an
								 * operand of arithmetic on the device */
	GPUAGG_ENC_DERIVED,			/* computed by the device (hashagg/derived.c) */
	GPUAGG_ENC_STRING_KEY,		/* a text key's bytes, GA_TYPE_STRING */
	GPUAGG_ENC_NUMERIC_KEY,		/* a numeric(p <= 18, s) key: value * 10^s
								 * as int64 (finalize/numeric.c) */
	GPUAGG_ENC_COUNT			/* the number of encodings */
} GpuAggEncoding;

/* Whether an encoding's values are ids of a dictionary (batch/key_dict.c). */
#define GPUAGG_ENC_IS_DICT(enc) \
	((enc) == GPUAGG_ENC_DICT_KEY || (enc) == GPUAGG_ENC_DICT_JOIN_KEY)

/* The first join_key of a join filter's comparison of dictionary ids. */
#define GPUAGG_FILTER_DICT_FIRST (GA_AGG_MAX_JOIN_STEPS * GA_AGG_MAX_JOIN_KEYS)

/* One batch column: where its values come from and how they travel. */
typedef struct GpuAggColumnSource
{
	AttrNumber	attno;			/* child column, 0 for none (count(*)) */
	AttrNumber	filter_attno;	/* FILTER column, 0 for none */
	GpuAggEncoding encoding;
	Oid			type;			/* base type of the child column */
	int16		scale;			/* numeric encodings: the value's scale */
	int16		part;			/* numeric: limb number or GpuAggNumericPart */
	int16		join_key;		/* GPUAGG_ENC_DICT_JOIN_KEY: its join step
								 * times GA_AGG_MAX_JOIN_KEYS plus its key's
								 * number, or GPUAGG_FILTER_DICT_FIRST plus
								 * its filter comparison's number; a key's
								 * two sides, a comparison's two operands,
								 * share one dictionary */
	int16		derived;		/* GPUAGG_ENC_DERIVED: 1 + the layout's number
								 * of its expression, else 0 */
} GpuAggColumnSource;

/* batch/encode.c */
extern GaValueType GpuAggEncodingType(GpuAggEncoding encoding);

#endif							/* GPUAGG_BATCH_ENCODING_H */
