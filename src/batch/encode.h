/*-------------------------------------------------------------------------
 *
 * batch/encode.h
 *	  The batch builder's state and the table of batch encodings, shared by
 *	  the builder (batch/builder.c) and the encoders (batch/encode.c).
 *	  Private to src/batch/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_BATCH_ENCODE_H
#define GPUAGG_BATCH_ENCODE_H

#include "batch/batch.h"
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
	int			nstrings;		/* STRING_KEY columns ... */
	int		   *string_columns; /* ... and which they are */
	MemoryContext cxt;			/* dictionaries: life of the node */
	MemoryContext batch_cxt;	/* detoasted values: one batch */

	/* GpuAggBatchAppendColumns */
	bool		columnar;		/* every column has a column encoder */
	int			chunk_size;		/* rows the arrays below hold */
	int32	  **chunk_spellings;	/* per dictionary column: rows' spellings */
	Datum	   *chunk_values;	/* values masked by a FILTER */
	bool	   *chunk_nulls;	/* nulls of a column with a FILTER */
	Datum	   *chunk_zeros;	/* the values of a column with no source */
};

/*
 * Write one row's value of batch column c at `row`: datum is the child's
 * value, (Datum) 0 when null (the row's validity bit is already clear).
 */
typedef void (*GpuAggRowEncoder) (GpuAggBatchBuilder *builder, int c, GaColumn *col,
								  int64 row, Datum datum, bool null);

/*
 * Write nrows values of batch column c from row0 on: v[r] is row r's value,
 * (Datum) 0 when null; nulls[r] says whether it is null (nulls is NULL when
 * no row is).  The rows' validity bits are already clear where null.
 */
typedef void (*GpuAggColumnEncoder) (GpuAggBatchBuilder *builder, int c, GaColumn *col,
									 int64 row0, const Datum *v, const bool *nulls,
									 int nrows);

/*
 * Turn a group's key of batch column c back into a datum; first is the
 * group's ZERO_SIGN or SPELLING minimum, if any.
 */
typedef Datum (*GpuAggKeyDecoder) (GpuAggBatchBuilder *builder, int c, int64 value,
								   int64 first);

/* One batch encoding: its encoders, and its decoder when keys use it. */
typedef struct GpuAggEncoder
{
	const char *name;
	GaValueType type;			/* the device column type that carries it */
	GpuAggRowEncoder row;
	GpuAggColumnEncoder column; /* NULL: only ever appended a row at a time */
	GpuAggKeyDecoder decode;	/* NULL: no group key travels this way */
} GpuAggEncoder;

/* batch/encode.c */
extern const GpuAggEncoder GpuAggEncoders[];
extern const GpuAggEncoder *GpuAggEncoderOf(GpuAggEncoding encoding);

#endif							/* GPUAGG_BATCH_ENCODE_H */
