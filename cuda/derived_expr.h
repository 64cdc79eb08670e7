/*-------------------------------------------------------------------------
 *
 * derived_expr.h
 *	  The exact integer arithmetic of derived columns (the "Derived columns"
 *	  part of gpuagg_device.h), shared by the CPU device (plain C) and the
 *	  GPU kernels (every function is GA_INLINE: compiled for the host and,
 *	  under nvcc, for the device), so that the two cannot disagree.
 *	  Internal to cuda/; no PostgreSQL and no CUDA runtime header.
 *
 * Values are 192-bit two's complement integers, three 64-bit words, least
 * significant first.  The caller of the device API guarantees |x| < 2^190
 * for every value a program pushes or computes, so addition, subtraction
 * and multiplication modulo 2^192 are exact; every operation here works on
 * unsigned words only, so a program that breaks the guarantee (or garbage
 * in a null row) gives a wrong value, never undefined behaviour.
 *
 * A device evaluates a program for one row by feeding its steps, in order,
 * to ga_expr_apply (a COLUMN step with the row's value of the operand, read
 * by the device from wherever its columns live; the device itself decides
 * null and NaN, see GaExprRow), and takes the parts of the value left on
 * the stack with ga_expr_part.
 *
 * The limb split is the host's (src/finalize/numeric.c, limb_of and
 * GpuAggNumericEncodeValue): limb k is bits [42 k, 42 k + 42) of the
 * value's magnitude, negated when the value is negative.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DERIVED_EXPR_H
#define GPUAGG_DERIVED_EXPR_H

#include <stdint.h>

#include "gpuagg_device.h"

/* Bits of one limb (the host's GPUAGG_NUMERIC_LIMB_BITS). */
#define GA_EXPR_LIMB_BITS 42

/* Largest SCALE power: 10^38 < 2^127. */
#define GA_EXPR_MAX_POWER 38

/* A 192-bit two's complement integer, least significant word first. */
typedef struct GaInt192
{
	uint64_t	w[3];
} GaInt192;

/* The evaluation stack of one row. */
typedef struct GaExprStack
{
	int			depth;
	GaInt192	v[GA_EXPR_MAX_DEPTH];
} GaExprStack;

/* What an expression is in one row (see gpuagg_device.h). */
typedef enum GaExprRow
{
	GA_EXPR_ROW_NULL = 0,		/* a COLUMN operand is null */
	GA_EXPR_ROW_NAN,			/* else: an operand's NaN flag is valid */
	GA_EXPR_ROW_FINITE			/* else: the value on the stack */
} GaExprRow;

/* Sign-extend an int64 to 192 bits. */
GA_INLINE GaInt192
ga_int192_from_int64(int64_t v)
{
	GaInt192	r;
	uint64_t	extension = v < 0 ? ~(uint64_t) 0 : 0;

	r.w[0] = (uint64_t) v;
	r.w[1] = extension;
	r.w[2] = extension;
	return r;
}

/* a + b modulo 2^192, the carry rippling up through the words. */
GA_INLINE GaInt192
ga_int192_add(GaInt192 a, GaInt192 b)
{
	GaInt192	r;
	uint64_t	carry = 0;
	int			i;

	for (i = 0; i < 3; i++)
	{
		uint64_t	s = a.w[i] + b.w[i];
		uint64_t	c = s < a.w[i];

		/* s + carry wraps only when s did not: the carry stays 0 or 1 */
		r.w[i] = s + carry;
		carry = c | (r.w[i] < s);
	}
	return r;
}

/* -a modulo 2^192: the complement plus one. */
GA_INLINE GaInt192
ga_int192_negate(GaInt192 a)
{
	GaInt192	r;
	uint64_t	carry = 1;
	int			i;

	for (i = 0; i < 3; i++)
	{
		r.w[i] = ~a.w[i] + carry;
		carry = carry && r.w[i] == 0;
	}
	return r;
}

/* a - b modulo 2^192. */
GA_INLINE GaInt192
ga_int192_sub(GaInt192 a, GaInt192 b)
{
	return ga_int192_add(a, ga_int192_negate(b));
}

/* The 128-bit product of two 64-bit words, as (*hi, *lo). */
GA_INLINE void
ga_mul_u64(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi)
{
#if defined(__CUDA_ARCH__)
	*lo = a * b;
	*hi = __umul64hi(a, b);
#else
	unsigned __int128 p = (unsigned __int128) a * b;

	*lo = (uint64_t) p;
	*hi = (uint64_t) (p >> 64);
#endif
}

/*
 * a * b modulo 2^192: the schoolbook product's words below 2^192 (the low
 * 192 bits of the unsigned product are those of the signed one).  Each
 * partial product plus the word it lands on plus the carry stays below
 * 2^128, so the carry words never wrap.
 */
GA_INLINE GaInt192
ga_int192_mul(GaInt192 a, GaInt192 b)
{
	GaInt192	r;
	int			i,
				j;

	r.w[0] = r.w[1] = r.w[2] = 0;
	for (i = 0; i < 3; i++)
	{
		uint64_t	carry = 0;

		for (j = 0; i + j < 3; j++)
		{
			uint64_t	lo,
						hi;

			ga_mul_u64(a.w[i], b.w[j], &lo, &hi);
			lo += carry;
			hi += lo < carry;
			r.w[i + j] += lo;
			hi += r.w[i + j] < lo;
			carry = hi;
		}
	}
	return r;
}

/* 10^power for power 0 .. 19 (10^19 < 2^64). */
GA_INLINE uint64_t
ga_pow10_u64(int power)
{
	uint64_t	p = 1;
	int			i;

	for (i = 0; i < power; i++)
		p *= 10;
	return p;
}

/* a * 10^power (power 0 .. GA_EXPR_MAX_POWER), in at most two products. */
GA_INLINE GaInt192
ga_int192_scale10(GaInt192 a, int power)
{
	int			first = power < 19 ? power : 19;
	GaInt192	factor;

	factor.w[1] = factor.w[2] = 0;
	factor.w[0] = ga_pow10_u64(first);
	a = ga_int192_mul(a, factor);
	if (power > first)
	{
		factor.w[0] = ga_pow10_u64(power - first);
		a = ga_int192_mul(a, factor);
	}
	return a;
}

/* Whether a 192-bit value is negative (its top bit). */
GA_INLINE int
ga_int192_is_negative(GaInt192 a)
{
	return (a.w[2] >> 63) != 0;
}

/*
 * Apply one step of a program to the stack: push `operand` (a COLUMN
 * step's value in the row, or a CONST step's constant), pop b then a and
 * push a + b, a - b or a * b, or scale the top by 10^power.  A request
 * that passed ga_request_validate never underflows or overflows the
 * stack; the guards only keep a broken program inside it.
 */
GA_INLINE void
ga_expr_apply(GaExprStack *stack, int op, int power, int64_t operand)
{
	switch (op)
	{
		case GA_EXPR_COLUMN:
		case GA_EXPR_CONST:
			if (stack->depth < GA_EXPR_MAX_DEPTH)
				stack->v[stack->depth++] = ga_int192_from_int64(operand);
			break;
		case GA_EXPR_ADD:
		case GA_EXPR_SUB:
		case GA_EXPR_MUL:
			if (stack->depth >= 2)
			{
				GaInt192	b = stack->v[--stack->depth];
				GaInt192   *a = &stack->v[stack->depth - 1];

				if (op == GA_EXPR_ADD)
					*a = ga_int192_add(*a, b);
				else if (op == GA_EXPR_SUB)
					*a = ga_int192_sub(*a, b);
				else
					*a = ga_int192_mul(*a, b);
			}
			break;
		case GA_EXPR_SCALE:
			if (stack->depth >= 1 && power >= 0 && power <= GA_EXPR_MAX_POWER)
				stack->v[stack->depth - 1] = ga_int192_scale10(stack->v[stack->depth - 1],
															   power);
			break;
		default:
			break;
	}
}

/*
 * Part `part` (GaDerivedPart) of a finite value v: GA_DERIVED_INT64 its low
 * 64 bits (v itself, as |v| < 2^63 is guaranteed), GA_DERIVED_LIMB bits
 * [42 limb, 42 limb + 42) of |v| negated when v < 0 (the host's limb_of
 * over the magnitude's three words); 0 for GA_DERIVED_NAN, which has no
 * value.
 */
GA_INLINE int64_t
ga_expr_part(GaInt192 v, int part, int limb)
{
	int			negative;
	int			bit,
				word,
				shift;
	uint64_t	bits;

	if (part == GA_DERIVED_INT64)
		return (int64_t) v.w[0];
	if (part != GA_DERIVED_LIMB || limb < 0 || limb > 3)
		return 0;
	negative = ga_int192_is_negative(v);
	if (negative)
		v = ga_int192_negate(v);
	bit = GA_EXPR_LIMB_BITS * limb;
	word = bit / 64;
	shift = bit % 64;
	bits = v.w[word] >> shift;
	if (shift > 64 - GA_EXPR_LIMB_BITS && word + 1 < 3)
		bits |= v.w[word + 1] << (64 - shift);
	bits &= ((uint64_t) 1 << GA_EXPR_LIMB_BITS) - 1;
	return negative ? -(int64_t) bits : (int64_t) bits;
}

#endif							/* GPUAGG_DERIVED_EXPR_H */
