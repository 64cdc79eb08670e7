/*-------------------------------------------------------------------------
 *
 * finalize/numeric.h
 *	  Numeric values as the devices sum them exactly (numeric.c): read from
 *	  numeric's on-disk form into limbs, scaled integers and flags, and the
 *	  devices' sums turned back into numerics.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_NUMERIC_H
#define GPUAGG_NUMERIC_H

#include "nodes/nodes.h"

#include "batch/encoding.h"
#include "gpuagg_device.h"

/* A numeric sum travels as this many limbs of this many bits. */
#define GPUAGG_NUMERIC_LIMBS 4
#define GPUAGG_NUMERIC_LIMB_BITS 42
/* Most digits of a summed numeric argument: 4 limbs of 42 bits hold 50. */
#define GPUAGG_NUMERIC_MAX_DIGITS 50
/* limbs of a square: (50 digits)^2 < 2^333 */
#define GPUAGG_SQUARE_LIMBS 8
/* numeric arguments of at most this many digits travel as one int64 */
#define GPUAGG_NUMERIC_INT64_DIGITS 18

/*
 * A NaN group key that travels as GpuAggNumericKey: beyond every value of
 * GPUAGG_NUMERIC_INT64_DIGITS digits.
 */
#define GPUAGG_NUMERIC_KEY_NAN PG_INT64_MAX

/* The kinds of numeric value, each counted in a validity-only column. */
typedef enum GpuAggNumericPart
{
	GPUAGG_NUMERIC_FINITE,
	GPUAGG_NUMERIC_NAN,
	GPUAGG_NUMERIC_PINF,
	GPUAGG_NUMERIC_NINF
} GpuAggNumericPart;

/*
 * A numeric argument read once per row, for all its batch columns
 * (batch/builder.c keeps one per row); the scaled magnitude and its square
 * are computed when a column first needs them.
 */
typedef struct GpuAggNumericValue
{
	GpuAggNumericPart part;		/* finite, NaN, +Infinity or -Infinity */
	bool		negative;
	int			scale;			/* the column's scale */
	Datum		datum;
	bool		scaled;			/* magnitude[] computed */
	uint64		magnitude[3];	/* |value| * 10^scale, little-endian words */
	bool		squared;		/* square[] computed */
	uint64		square[6];		/* magnitude^2 */
} GpuAggNumericValue;

/* finalize/numeric.c */
extern GpuAggNumericPart GpuAggNumericPartOf(Datum value);
extern void GpuAggNumericRead(Datum value, int scale, GpuAggNumericValue *out);
extern int64 GpuAggNumericEncodeValue(GpuAggNumericValue *value, GpuAggEncoding encoding,
									  int part, bool *isnull);
extern int64 GpuAggNumericOperand(Datum value, int scale, bool *isnan);
extern int64 GpuAggSquareLimb(int64 value, int part);
extern bool GpuAggNumericBounds(Node *expr, int *precision, int *scale);
extern int	GpuAggLimbsForDigits(int digits);
extern Datum GpuAggNumericFromInt128Limbs(const int128 *limb_sums, int nlimbs,
										  int scale);
extern Datum GpuAggNumericFromLimbs(const GaInt128 *const *limb_sums, int nlimbs,
									int64 group, int scale);
extern Datum GpuAggInt128Scaled(int128 value, int scale);
extern bool GpuAggNumericSpecialResult(int64 finite, int64 nan, int64 pinf,
									   int64 ninf, Datum *result, bool *isnull);
extern Datum GpuAggNumericFromInt64(int64 value, int scale);
extern int	GpuAggNumericKeyScale(Node *key);
extern int64 GpuAggNumericKey(Datum value, int scale);
extern Datum GpuAggNumericKeyDatum(int64 key, int scale);
extern Datum GpuAggNumericSpecial(const char *name);

#endif							/* GPUAGG_NUMERIC_H */
