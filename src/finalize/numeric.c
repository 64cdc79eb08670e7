/*-------------------------------------------------------------------------
 *
 * finalize/numeric.c
 *	  sum, avg, min, max, variance and stddev over numeric on the devices,
 *	  exactly.
 *
 * The planner accepts a numeric argument only when its digits are bounded:
 * a column of type numeric(p, s), an integer cast to numeric, a constant,
 * or +, -, * of those.  PostgreSQL's numeric arithmetic gives such a value
 * exactly s fractional digits (a sum has the larger scale, a product the sum
 * of the scales), so every non-special value of the argument has the same
 * display scale s and at most p digits.  Each value then travels as the
 * integer value * 10^s:
 *	sum, avg	split into GPUAGG_NUMERIC_LIMBS signed limbs of
 *				GPUAGG_NUMERIC_LIMB_BITS bits, each summed exactly in 128 bits
 *				by the device (p <= 50 digits fit);
 *	min, max	as one int64 (p <= 18).
 *	var_*, stddev_*	sum(x) as one int64 (p <= 18) or limbs, and sum(x * x)
 *				from the limbs of each value's exact square (up to 2p digits),
 *				each summed exactly in 128 bits; finalize/variance.c hands the
 *				sums to PostgreSQL's own final functions.
 * NaN, +Infinity and -Infinity are counted per group through validity-only
 * columns, and the results follow PostgreSQL's rules for them.  A value is
 * never converted through float8.
 *
 * The values are read from numeric's on-disk form (a varlena of base-10000
 * digits with a sign, a weight and a display scale, in a short or a long
 * header), the same form numeric_send() describes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "compat.h"
#include "finalize/numeric.h"

/* numeric's on-disk header bits */
#define NUM_SIGN_MASK		0xC000
#define NUM_NEG				0x4000
#define NUM_SHORT			0x8000
#define NUM_SPECIAL			0xC000
#define NUM_EXT_SIGN_MASK	0xF000
#define NUM_NAN				0xC000
#define NUM_PINF			0xD000
#define NUM_NINF			0xF000
#define NUM_SHORT_SIGN		0x2000
#define NUM_SHORT_DSCALE	0x1F80
#define NUM_SHORT_DSCALE_SHIFT 7
#define NUM_SHORT_WEIGHT_SIGN 0x0040
#define NUM_SHORT_WEIGHT	0x003F
#define NUM_DSCALE_MASK		0x3FFF
#define NUM_BASE			10000
#define NUM_DIGITS_PER_WORD 4


/* A numeric value as read from its on-disk form. */
typedef struct NumericParts
{
	int			special;		/* 0, or NUM_NAN / NUM_PINF / NUM_NINF */
	bool		negative;
	int			weight;			/* of the first base-10000 digit */
	int			dscale;
	int			ndigits;
	const uint16 *digits;
} NumericParts;

/* Read sign, weight, scale and digits of a numeric value. */
static void
numeric_parts(struct varlena *value, NumericParts *parts)
{
	const char *data = VARDATA_ANY(value);
	int			len = VARSIZE_ANY_EXHDR(value);
	uint16		header;

	memcpy(&header, data, sizeof(header));
	memset(parts, 0, sizeof(*parts));
	if ((header & NUM_SIGN_MASK) == NUM_SPECIAL)
	{
		parts->special = header & NUM_EXT_SIGN_MASK;
		return;
	}
	if ((header & NUM_SIGN_MASK) == NUM_SHORT)
	{
		parts->negative = (header & NUM_SHORT_SIGN) != 0;
		parts->dscale = (header & NUM_SHORT_DSCALE) >> NUM_SHORT_DSCALE_SHIFT;
		parts->weight = (header & NUM_SHORT_WEIGHT) |
			((header & NUM_SHORT_WEIGHT_SIGN) ? ~NUM_SHORT_WEIGHT : 0);
		parts->digits = (const uint16 *) (data + sizeof(uint16));
		parts->ndigits = (len - (int) sizeof(uint16)) / (int) sizeof(uint16);
	}
	else
	{
		int16		weight;

		memcpy(&weight, data + sizeof(uint16), sizeof(weight));
		parts->negative = (header & NUM_SIGN_MASK) == NUM_NEG;
		parts->dscale = header & NUM_DSCALE_MASK;
		parts->weight = weight;
		parts->digits = (const uint16 *) (data + 2 * sizeof(uint16));
		parts->ndigits = (len - 2 * (int) sizeof(uint16)) / (int) sizeof(uint16);
	}
}

/*
 * value * 10^scale as a 192-bit magnitude (three little-endian 64-bit
 * words); false when it has more fractional digits than scale or does not
 * fit.  Digits are read with memcpy: a packed varlena is not aligned.
 */
static bool
scaled_magnitude(const NumericParts *parts, int scale, uint64 *words)
{
	int			i;
	int			exponent;		/* of the last digit read, in base 10 */

	words[0] = words[1] = words[2] = 0;
	if (parts->dscale > scale)
		return false;
	for (i = 0; i < parts->ndigits; i++)
	{
		uint16		digit;
		unsigned __int128 carry;
		int			w;

		memcpy(&digit, parts->digits + i, sizeof(digit));
		/* words = words * 10000 + digit */
		carry = digit;
		for (w = 0; w < 3; w++)
		{
			unsigned __int128 t = (unsigned __int128) words[w] * NUM_BASE + carry;

			words[w] = (uint64) t;
			carry = t >> 64;
		}
		if (carry != 0)
			return false;
	}
	/* the last digit has weight (weight - ndigits + 1); move to 10^-scale */
	exponent = NUM_DIGITS_PER_WORD * (parts->weight - parts->ndigits + 1) + scale;
	for (; exponent > 0; exponent--)
	{
		unsigned __int128 carry = 0;
		int			w;

		for (w = 0; w < 3; w++)
		{
			unsigned __int128 t = (unsigned __int128) words[w] * 10 + carry;

			words[w] = (uint64) t;
			carry = t >> 64;
		}
		if (carry != 0)
			return false;
	}
	for (; exponent < 0; exponent++)
	{
		/* trailing digits beyond the scale are zero (dscale <= scale) */
		unsigned __int128 rem = 0;
		int			w;

		for (w = 2; w >= 0; w--)
		{
			unsigned __int128 cur = (rem << 64) | words[w];

			words[w] = (uint64) (cur / 10);
			rem = cur % 10;
		}
		if (rem != 0)
			return false;
	}
	return true;
}

/*
 * value * 10^scale in an int64, the common case of scaled_magnitude done in
 * 64-bit arithmetic (a packing worker converts every operand of every row):
 * false when it does not fit (or has more fractional digits than scale),
 * for the caller to take the exact 192-bit path.
 */
static bool
scaled_int64(const NumericParts *parts, int scale, int64 *out)
{
	static const int64 pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
	100000000, 1000000000, INT64CONST(10000000000), INT64CONST(100000000000),
	INT64CONST(1000000000000), INT64CONST(10000000000000), INT64CONST(100000000000000),
	INT64CONST(1000000000000000), INT64CONST(10000000000000000),
	INT64CONST(100000000000000000), INT64CONST(1000000000000000000)};
	int64		acc = 0;
	int			exponent;
	int			i;

	if (parts->dscale > scale)
		return false;
	for (i = 0; i < parts->ndigits; i++)
	{
		uint16		digit;

		memcpy(&digit, parts->digits + i, sizeof(digit));
		if (acc > (PG_INT64_MAX - digit) / NUM_BASE)
			return false;
		acc = acc * NUM_BASE + digit;
	}
	exponent = NUM_DIGITS_PER_WORD * (parts->weight - parts->ndigits + 1) + scale;
	if (exponent > 0)
	{
		if (exponent > 18 || acc > PG_INT64_MAX / pow10[exponent])
			return false;
		acc *= pow10[exponent];
	}
	else if (exponent < 0)
	{
		/* trailing zeros of the last base-10000 digit beyond the scale */
		switch (exponent)
		{
			case -1:
				if (acc % 10 != 0)
					return false;
				acc /= 10;
				break;
			case -2:
				if (acc % 100 != 0)
					return false;
				acc /= 100;
				break;
			case -3:
				if (acc % 1000 != 0)
					return false;
				acc /= 1000;
				break;
			default:
				return false;
		}
	}
	*out = parts->negative ? -acc : acc;
	return true;
}

/* Whether a numeric value is finite, NaN, +Infinity or -Infinity. */
GpuAggNumericPart
GpuAggNumericPartOf(Datum value)
{
	NumericParts parts;

	numeric_parts((struct varlena *) DatumGetPointer(value), &parts);
	switch (parts.special)
	{
		case NUM_NAN:
			return GPUAGG_NUMERIC_NAN;
		case NUM_PINF:
			return GPUAGG_NUMERIC_PINF;
		case NUM_NINF:
			return GPUAGG_NUMERIC_NINF;
	}
	return GPUAGG_NUMERIC_FINITE;
}

/* The square of a 192-bit magnitude (three little-endian words) in six words. */
static void
square_words(const uint64 *words, uint64 *square)
{
	int			i,
				j;

	memset(square, 0, 6 * sizeof(uint64));
	for (i = 0; i < 3; i++)
	{
		unsigned __int128 carry = 0;

		for (j = 0; j < 3; j++)
		{
			unsigned __int128 t = (unsigned __int128) words[i] * words[j] +
				square[i + j] + carry;

			square[i + j] = (uint64) t;
			carry = t >> 64;
		}
		for (j = i + 3; carry != 0 && j < 6; j++)
		{
			unsigned __int128 t = (unsigned __int128) square[j] + carry;

			square[j] = (uint64) t;
			carry = t >> 64;
		}
	}
}

/* Bits [42 * part, 42 * part + 42) of a little-endian number of nwords words. */
static uint64
limb_of(const uint64 *words, int nwords, int part)
{
	int			bit = GPUAGG_NUMERIC_LIMB_BITS * part;
	int			w = bit / 64;
	int			shift = bit % 64;
	uint64		limb;

	if (w >= nwords)
		return 0;
	limb = words[w] >> shift;
	if (shift > 64 - GPUAGG_NUMERIC_LIMB_BITS && w + 1 < nwords)
		limb |= words[w + 1] << (64 - shift);
	return limb & ((UINT64CONST(1) << GPUAGG_NUMERIC_LIMB_BITS) - 1);
}

/* Read a numeric argument for the batch columns of scale `scale`. */
void
GpuAggNumericRead(Datum value, int scale, GpuAggNumericValue *out)
{
	out->part = GpuAggNumericPartOf(value);
	out->negative = false;
	out->scale = scale;
	out->datum = value;
	out->scaled = false;
	out->squared = false;
}

/*
 * Encode a numeric argument for a batch column of the given part (see
 * GpuAggNumericPart): *isnull is set when the row has no value for this
 * column (specials have no limbs; only the matching flag is valid).
 */
int64
GpuAggNumericEncodeValue(GpuAggNumericValue *value, GpuAggEncoding encoding, int part,
						 bool *isnull)
{
	*isnull = false;
	if (encoding == GPUAGG_ENC_NUMERIC_FLAG)
	{
		*isnull = value->part != (GpuAggNumericPart) part;
		return 0;
	}
	if (value->part != GPUAGG_NUMERIC_FINITE)
	{
		*isnull = true;
		return 0;
	}
	if (!value->scaled)
	{
		NumericParts parts;
		int64		fast;

		numeric_parts((struct varlena *) DatumGetPointer(value->datum), &parts);
		if (scaled_int64(&parts, value->scale, &fast))
		{
			/* the magnitude of an int64 (of PG_INT64_MIN too, as unsigned) */
			value->magnitude[0] = fast < 0 ? -(uint64) fast : (uint64) fast;
			value->magnitude[1] = value->magnitude[2] = 0;
		}
		else if (!scaled_magnitude(&parts, value->scale, value->magnitude))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("gpuagg: numeric value outside the bounds the planner derived"),
					 errhint("Set gpuagg.enabled = off and report this as a bug.")));
		value->negative = parts.negative;
		value->scaled = true;
	}
	if (encoding == GPUAGG_ENC_NUMERIC_SQUARE_LIMB)
	{
		/* limb `part` of the square: at most 336 bits for 50 digits */
		if (!value->squared)
		{
			square_words(value->magnitude, value->square);
			value->squared = true;
		}
		return (int64) limb_of(value->square, 6, part);
	}
	if (encoding == GPUAGG_ENC_NUMERIC_INT64)
	{
		const uint64 *words = value->magnitude;

		if (words[1] != 0 || words[2] != 0 || words[0] > (uint64) PG_INT64_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("gpuagg: numeric value outside the bounds the planner derived")));
		return value->negative ? -(int64) words[0] : (int64) words[0];
	}
	else
	{
		/* limb `part` of the magnitude, with the value's sign */
		uint64		limb = limb_of(value->magnitude, 3, part);

		return value->negative ? -(int64) limb : (int64) limb;
	}
}

/*
 * An operand of arithmetic on the device (hashagg/derived.c): value * 10^scale
 * as an int64, or 0 with *isnan set for NaN.  The planner bounded the
 * operand to 18 digits at this scale, and a constrained numeric cannot be
 * infinite; a value outside that is an error, never a wrong sum.
 */
int64
GpuAggNumericOperand(Datum value, int scale, bool *isnan)
{
	NumericParts parts;
	uint64		words[3];
	int64		fast;

	numeric_parts((struct varlena *) DatumGetPointer(value), &parts);
	*isnan = parts.special == NUM_NAN;
	if (*isnan)
		return 0;
	if (parts.special == 0 && scaled_int64(&parts, scale, &fast))
		return fast;
	if (parts.special != 0 || !scaled_magnitude(&parts, scale, words) ||
		words[1] != 0 || words[2] != 0 || words[0] > (uint64) PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpuagg: numeric operand outside the bounds the planner derived"),
				 errhint("Set gpuagg.numeric_on_device = off and report this as a bug.")));
	return parts.negative ? -(int64) words[0] : (int64) words[0];
}

/*
 * Limb `part` of an integer's square (see GpuAggNumericEncodeValue), so
 * that the device sums squares exactly for var_samp and var_pop.
 */
int64
GpuAggSquareLimb(int64 value, int part)
{
	uint64		magnitude = value < 0 ? -(uint64) value : (uint64) value;
	unsigned __int128 square = (unsigned __int128) magnitude * magnitude;
	int			bit = GPUAGG_NUMERIC_LIMB_BITS * part;

	if (bit >= 128)
		return 0;
	return (int64) ((square >> bit) & ((UINT64CONST(1) << GPUAGG_NUMERIC_LIMB_BITS) - 1));
}

/* The precision and scale of a numeric constant; false for NaN/Infinity. */
static bool
const_bounds(Const *c, int *precision, int *scale)
{
	NumericParts parts;
	int			integer_digits;

	if (c->constisnull)
	{
		*precision = 1;
		*scale = 0;
		return true;
	}
	numeric_parts((struct varlena *) DatumGetPointer(c->constvalue), &parts);
	if (parts.special != 0)
		return false;
	integer_digits = 1;
	if (parts.ndigits > 0 && parts.weight >= 0)
	{
		uint16		first;

		/* the first base-10000 digit's own decimal digits, then 4 per word */
		memcpy(&first, parts.digits, sizeof(first));
		integer_digits = NUM_DIGITS_PER_WORD * parts.weight +
			(first >= 1000 ? 4 : first >= 100 ? 3 : first >= 10 ? 2 : 1);
	}
	*scale = parts.dscale;
	*precision = Max(integer_digits, 1) + parts.dscale;
	return true;
}

/*
 * Bounds of a numeric expression: every non-special value has exactly
 * *scale fractional digits and at most *precision digits in all.  False when
 * they cannot be known.
 */
bool
GpuAggNumericBounds(Node *expr, int *precision, int *scale)
{
	int			p1,
				s1,
				p2,
				s2;
	int32		typmod;

	if (expr == NULL)
		return false;
	if (IsA(expr, RelabelType))
		return GpuAggNumericBounds((Node *) ((RelabelType *) expr)->arg, precision, scale);
	if (exprType(expr) == NUMERICOID && IsA(expr, Const))
		return const_bounds((Const *) expr, precision, scale);

	if (IsA(expr, FuncExpr) || IsA(expr, OpExpr))
	{
		Oid			func = IsA(expr, FuncExpr) ? ((FuncExpr *) expr)->funcid : ((OpExpr *) expr)->opfuncid;
		List	   *args = IsA(expr, FuncExpr) ? ((FuncExpr *) expr)->args : ((OpExpr *) expr)->args;

		if (!OidIsValid(func) && IsA(expr, OpExpr))
			func = get_opcode(((OpExpr *) expr)->opno);
		switch (func)
		{
			case F_NUMERIC_INT2:
				*precision = 5;
				*scale = 0;
				return true;
			case F_NUMERIC_INT4:
				*precision = 10;
				*scale = 0;
				return true;
			case F_NUMERIC_INT8:
				*precision = 19;
				*scale = 0;
				return true;
			case F_NUMERIC_UMINUS:
			case F_NUMERIC_UPLUS:
				return GpuAggNumericBounds(linitial(args), precision, scale);
			case F_NUMERIC_ADD:
			case F_NUMERIC_SUB:
				if (!GpuAggNumericBounds(linitial(args), &p1, &s1) ||
					!GpuAggNumericBounds(lsecond(args), &p2, &s2))
					return false;
				*scale = Max(s1, s2);
				*precision = Max(p1 - s1, p2 - s2) + 1 + *scale;
				return true;
			case F_NUMERIC_MUL:
				if (!GpuAggNumericBounds(linitial(args), &p1, &s1) ||
					!GpuAggNumericBounds(lsecond(args), &p2, &s2))
					return false;
				*scale = s1 + s2;
				*precision = p1 + p2;
				return true;
		}
	}

	/* anything else: only the declared type modifier tells */
	if (exprType(expr) != NUMERICOID)
		return false;
	typmod = exprTypmod(expr);
	if (typmod < (int32) VARHDRSZ)
		return false;
	*precision = ((typmod - VARHDRSZ) >> 16) & 0xFFFF;
	*scale = (((typmod - VARHDRSZ) & 0x7FF) ^ 1024) - 1024;
	if (*scale < 0)
	{
		/* numeric(p, -s): multiples of 10^s, no fractional digits */
		*precision -= *scale;
		*scale = 0;
	}
	return true;
}

/*
 * How many 42-bit limbs hold the magnitude of any integer of `digits`
 * decimal digits: bits = ceil(digits * log2(10)), rounded up generously.
 */
int
GpuAggLimbsForDigits(int digits)
{
	int			bits = (digits * 3322 + 999) / 1000 + 1;

	return (bits + GPUAGG_NUMERIC_LIMB_BITS - 1) / GPUAGG_NUMERIC_LIMB_BITS;
}

/*
 * Signed integers of WIDE_WORDS 64-bit words, two's complement, least
 * significant first: wide enough for a sum of limb sums (the squares' eight
 * limbs, each a 128-bit sum, weigh up to 2^(42 * 7 + 128)).
 */
#define WIDE_WORDS 8

typedef struct WideInt
{
	uint64		w[WIDE_WORDS];
} WideInt;

/* acc += value * 2^shift (value sign-extended; shift < 64 * (WIDE_WORDS - 2)). */
static void
wide_add_shifted(WideInt *acc, int128 value, int shift)
{
	uint64		extension = value < 0 ? ~UINT64CONST(0) : 0;
	uint64		addend[WIDE_WORDS] = {0};
	int			words = shift / 64;
	int			bits = shift % 64;
	unsigned __int128 carry = 0;
	int			i;

	/* the value, sign-extended, moved up by whole words, then by bits */
	for (i = words; i < WIDE_WORDS; i++)
		addend[i] = i == words ? (uint64) value :
			i == words + 1 ? (uint64) ((uint128) value >> 64) : extension;
	if (bits > 0)
		for (i = WIDE_WORDS - 1; i >= 0; i--)
			addend[i] = (addend[i] << bits) | (i > 0 ? addend[i - 1] >> (64 - bits) : 0);
	for (i = 0; i < WIDE_WORDS; i++)
	{
		carry += (unsigned __int128) acc->w[i] + addend[i];
		acc->w[i] = (uint64) carry;
		carry >>= 64;
	}
}

/*
 * value * 10^-scale as a numeric of display scale `scale`: straight from an
 * int64 when it fits (int64_div_fast_to_numeric), else from its decimal
 * digits through numeric_in.  One conversion per group and aggregate, with
 * no numeric arithmetic: a query may have a great many groups.
 */
static Datum
wide_to_numeric(const WideInt *value, int scale)
{
	bool		negative = (value->w[WIDE_WORDS - 1] >> 63) != 0;
	WideInt		magnitude = *value;
	char		buf[WIDE_WORDS * 20 + 8];
	char	   *p = buf + sizeof(buf) - 1;
	int			ndigits = 0;
	int			top;
	int			i;

	if (negative)
	{
		unsigned __int128 carry = 1;

		for (i = 0; i < WIDE_WORDS; i++)
		{
			carry += (uint64) ~magnitude.w[i];
			magnitude.w[i] = (uint64) carry;
			carry >>= 64;
		}
	}
	for (top = WIDE_WORDS - 1; top > 0 && magnitude.w[top] == 0; top--)
		;
	if (top == 0 && magnitude.w[0] <= (uint64) PG_INT64_MAX)
		return NumericGetDatum(int64_div_fast_to_numeric(negative ? -(int64) magnitude.w[0] :
														 (int64) magnitude.w[0],
														 scale));

	/* decimal digits, 19 at a time: divide the words by 10^19 */
	*p = '\0';
	while (top > 0 || magnitude.w[0] != 0)
	{
		const uint64 chunk_base = UINT64CONST(10000000000000000000);
		unsigned __int128 rem = 0;
		uint64		chunk;
		int			d;

		for (i = top; i >= 0; i--)
		{
			unsigned __int128 cur = (rem << 64) | magnitude.w[i];

			magnitude.w[i] = (uint64) (cur / chunk_base);
			rem = cur % chunk_base;
		}
		chunk = (uint64) rem;
		while (top > 0 && magnitude.w[top] == 0)
			top--;
		for (d = 0; d < 19 && (chunk != 0 || top > 0 || magnitude.w[0] != 0); d++)
		{
			*--p = '0' + (int) (chunk % 10);
			chunk /= 10;
			ndigits++;
			if (ndigits == scale)
				*--p = '.';
		}
	}
	while (ndigits < scale)
	{
		*--p = '0';
		if (++ndigits == scale)
			*--p = '.';
	}
	if (ndigits == scale)
		*--p = '0';
	if (negative)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/*
 * The exact sum of nlimbs limb sums (limb k weighs 2^(42 k)) times
 * 10^-scale, as numeric of display scale `scale`.
 */
Datum
GpuAggNumericFromInt128Limbs(const int128 *limb_sums, int nlimbs, int scale)
{
	WideInt		total;
	int			k;

	memset(&total, 0, sizeof(total));
	for (k = 0; k < nlimbs; k++)
		wide_add_shifted(&total, limb_sums[k], GPUAGG_NUMERIC_LIMB_BITS * k);
	return wide_to_numeric(&total, scale);
}

/* The exact sum of a group from its device limb sums (see above). */
Datum
GpuAggNumericFromLimbs(const GaInt128 *const *limb_sums, int nlimbs, int64 group,
					   int scale)
{
	int128		values[GPUAGG_SQUARE_LIMBS];
	int			k;

	Assert(nlimbs <= GPUAGG_SQUARE_LIMBS);
	for (k = 0; k < nlimbs; k++)
	{
		const GaInt128 *s = &limb_sums[k][group];

		values[k] = (int128) (((uint128) (uint64) s->hi << 64) | (uint128) s->lo);
	}
	return GpuAggNumericFromInt128Limbs(values, nlimbs, scale);
}

/* An int128 times 10^-scale as numeric of display scale `scale`. */
Datum
GpuAggInt128Scaled(int128 value, int scale)
{
	WideInt		wide;

	memset(&wide, 0, sizeof(wide));
	wide_add_shifted(&wide, value, 0);
	return wide_to_numeric(&wide, scale);
}

/*
 * PostgreSQL's numeric_sum() and numeric_avg() before they look at the
 * sum: NULL without inputs, NaN for a NaN or for both infinities, else the
 * infinity.  True when that decided *result (or *isnull); false when the
 * finite sum decides.
 */
bool
GpuAggNumericSpecialResult(int64 finite, int64 nan, int64 pinf, int64 ninf,
						   Datum *result, bool *isnull)
{
	*isnull = false;
	if (finite + nan + pinf + ninf == 0)
	{
		*isnull = true;
		*result = (Datum) 0;
		return true;
	}
	if (nan > 0 || (pinf > 0 && ninf > 0))
		*result = GpuAggNumericSpecial("NaN");
	else if (pinf > 0)
		*result = GpuAggNumericSpecial("Infinity");
	else if (ninf > 0)
		*result = GpuAggNumericSpecial("-Infinity");
	else
		return false;
	return true;
}

/* A scaled int64 (min/max) as numeric of scale `scale`. */
Datum
GpuAggNumericFromInt64(int64 value, int scale)
{
	return GpuAggInt128Scaled(value, scale);
}

/* NaN, Infinity or -Infinity as numeric. */
Datum
GpuAggNumericSpecial(const char *name)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum(name),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/*
 * The scale of a group key that travels as one int64 (GpuAggNumericKey),
 * or -1 for one that keeps its dictionary: a numeric column (under
 * relabelings) whose typmod fixes its scale, 0 to 18, and bounds it to
 * GPUAGG_NUMERIC_INT64_DIGITS digits.  Every value of such a column is spelt
 * with exactly that scale, so equal values are equal integers and the
 * integer gives back the group's spelling (1.50, never 1.5); wider or
 * unconstrained numerics, whose equal values may be spelt differently,
 * keep their dictionary.
 */
int
GpuAggNumericKeyScale(Node *key)
{
	Node	   *bare = key;
	int32		typmod;
	int			precision;
	int			scale;

	while (IsA(bare, RelabelType))
		bare = (Node *) ((RelabelType *) bare)->arg;
	if (!IsA(bare, Var) || exprType(bare) != NUMERICOID)
		return -1;
	typmod = exprTypmod(bare);
	if (typmod < (int32) VARHDRSZ)
		return -1;
	precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
	scale = (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
	if (precision > GPUAGG_NUMERIC_INT64_DIGITS || scale < 0 ||
		scale > GPUAGG_NUMERIC_INT64_DIGITS)
		return -1;
	return scale;
}

/*
 * A numeric group key of scale `scale` (GpuAggNumericKeyScale) as one
 * int64: value * 10^scale, or GPUAGG_NUMERIC_KEY_NAN for NaN (NaN equals
 * NaN as a group key).  A value its column's typmod cannot hold (an
 * infinity, another display scale, more digits) is an error, never a
 * wrong group.
 */
int64
GpuAggNumericKey(Datum value, int scale)
{
	NumericParts parts;
	uint64		words[3];
	int64		fast;

	numeric_parts((struct varlena *) DatumGetPointer(value), &parts);
	if (parts.special == NUM_NAN)
		return GPUAGG_NUMERIC_KEY_NAN;
	if (parts.special == 0 && parts.dscale == scale)
	{
		if (scaled_int64(&parts, scale, &fast))
		{
			if (fast != GPUAGG_NUMERIC_KEY_NAN)
				return fast;
		}
		else if (scaled_magnitude(&parts, scale, words) && words[1] == 0 && words[2] == 0 &&
				 words[0] < (uint64) GPUAGG_NUMERIC_KEY_NAN)
			return parts.negative ? -(int64) words[0] : (int64) words[0];
	}
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("gpuagg: numeric group key outside its column's precision and scale"),
			 errhint("Set gpuagg.enabled = off and report this as a bug.")));
	return 0;					/* keep the compiler quiet */
}

/* A group key of GpuAggNumericKey as numeric, spelt with its column's scale. */
Datum
GpuAggNumericKeyDatum(int64 key, int scale)
{
	if (key == GPUAGG_NUMERIC_KEY_NAN)
		return GpuAggNumericSpecial("NaN");
	return GpuAggNumericFromInt64(key, scale);
}
