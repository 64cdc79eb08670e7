/*-------------------------------------------------------------------------
 *
 * derived_ref.c
 *	  The derived column suite's reference arithmetic: signed integers as
 *	  a sign and a magnitude of 32-bit words (BIG_WORDS of them), and the
 *	  evaluation of a derived column's program in one row of a case.
 *
 * Written apart from cuda/derived_expr.h on purpose (sign and magnitude,
 * not 64-bit two's complement; a SCALE multiplies by ten power times; a
 * limb is read one bit at a time; the null and NaN rules are decided
 * before any arithmetic), so that a shared mistake is unlikely.  Values
 * are never truncated silently: evaluation stops as soon as a value passes
 * 190 bits (the device's bound), so that products stay far inside the
 * 512-bit magnitude.
 *
 *-------------------------------------------------------------------------
 */
#include "derived.h"

#include <stdio.h>
#include <string.h>

/* The bound the device's 192-bit arithmetic needs on every value. */
#define REF_MAX_BITS 190

/* Zero. */
static void
big_zero(Big *b)
{
	memset(b, 0, sizeof(*b));
}

/* Whether a magnitude is zero. */
static int
mag_is_zero(const uint32_t *m)
{
	int			i;

	for (i = 0; i < BIG_WORDS; i++)
		if (m[i] != 0)
			return 0;
	return 1;
}

/* Compare two magnitudes: -1, 0 or 1. */
static int
mag_cmp(const uint32_t *a, const uint32_t *b)
{
	int			i;

	for (i = BIG_WORDS - 1; i >= 0; i--)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* r = a + b (magnitudes; r may be a or b). */
static void
mag_add(uint32_t *r, const uint32_t *a, const uint32_t *b)
{
	uint64_t	carry = 0;
	int			i;

	for (i = 0; i < BIG_WORDS; i++)
	{
		uint64_t	s = (uint64_t) a[i] + b[i] + carry;

		r[i] = (uint32_t) s;
		carry = s >> 32;
	}
}

/* r = a - b for magnitudes with a >= b (r may be a or b). */
static void
mag_sub(uint32_t *r, const uint32_t *a, const uint32_t *b)
{
	int64_t		borrow = 0;
	int			i;

	for (i = 0; i < BIG_WORDS; i++)
	{
		int64_t		d = (int64_t) a[i] - b[i] - borrow;

		borrow = d < 0;
		r[i] = (uint32_t) (d + (borrow ? INT64_C(1) << 32 : 0));
	}
}

/* Give zero no sign. */
static void
big_normalise(Big *b)
{
	if (mag_is_zero(b->mag))
		b->neg = 0;
}

/* b = v. */
void
big_from_i64(Big *b, int64_t v)
{
	uint64_t	m = v < 0 ? (uint64_t) (-(v + 1)) + 1 : (uint64_t) v;

	big_zero(b);
	b->neg = v < 0;
	b->mag[0] = (uint32_t) m;
	b->mag[1] = (uint32_t) (m >> 32);
}

/* b = v (a device's 128-bit sum). */
void
big_from_i128(Big *b, __int128 v)
{
	unsigned __int128 m = v < 0 ? (unsigned __int128) (-(v + 1)) + 1 : (unsigned __int128) v;
	int			i;

	big_zero(b);
	b->neg = v < 0;
	for (i = 0; i < 4; i++)
		b->mag[i] = (uint32_t) (m >> (32 * i));
}

/* r = a * m for a small factor m (magnitude only; r may be a). */
static void
mag_mul_small(uint32_t *r, const uint32_t *a, uint32_t m)
{
	uint64_t	carry = 0;
	int			i;

	for (i = 0; i < BIG_WORDS; i++)
	{
		uint64_t	p = (uint64_t) a[i] * m + carry;

		r[i] = (uint32_t) p;
		carry = p >> 32;
	}
}

/* Parse an optionally negative decimal; 0 when it is not one. */
int
big_from_str(Big *b, const char *s)
{
	uint32_t	digit[BIG_WORDS];
	int			neg = 0;

	big_zero(b);
	if (*s == '-')
		neg = 1, s++;
	if (*s == '\0')
		return 0;
	for (; *s; s++)
	{
		if (*s < '0' || *s > '9')
			return 0;
		mag_mul_small(b->mag, b->mag, 10);
		memset(digit, 0, sizeof(digit));
		digit[0] = (uint32_t) (*s - '0');
		mag_add(b->mag, b->mag, digit);
	}
	b->neg = neg;
	big_normalise(b);
	return 1;
}

/* r = a + b (r may be a or b). */
void
big_add(Big *r, const Big *a, const Big *b)
{
	Big			t;

	big_zero(&t);
	if (a->neg == b->neg)
	{
		mag_add(t.mag, a->mag, b->mag);
		t.neg = a->neg;
	}
	else if (mag_cmp(a->mag, b->mag) >= 0)
	{
		mag_sub(t.mag, a->mag, b->mag);
		t.neg = a->neg;
	}
	else
	{
		mag_sub(t.mag, b->mag, a->mag);
		t.neg = b->neg;
	}
	big_normalise(&t);
	*r = t;
}

/* r = a - b (r may be a or b). */
void
big_sub(Big *r, const Big *a, const Big *b)
{
	Big			nb = *b;

	nb.neg = !nb.neg;
	big_normalise(&nb);
	big_add(r, a, &nb);
}

/* r = a * b, schoolbook over 32-bit words (r may be a or b). */
void
big_mul(Big *r, const Big *a, const Big *b)
{
	Big			t;
	int			i,
				j;

	big_zero(&t);
	for (i = 0; i < BIG_WORDS; i++)
	{
		uint64_t	carry = 0;

		if (a->mag[i] == 0)
			continue;
		for (j = 0; i + j < BIG_WORDS; j++)
		{
			uint64_t	p = (uint64_t) a->mag[i] * b->mag[j] + t.mag[i + j] + carry;

			t.mag[i + j] = (uint32_t) p;
			carry = p >> 32;
		}
	}
	t.neg = a->neg != b->neg;
	big_normalise(&t);
	*r = t;
}

/* r = a * 2^bits (r may be a). */
void
big_shl(Big *r, const Big *a, int bits)
{
	Big			t;
	int			i;

	big_zero(&t);
	for (i = 0; i < 32 * BIG_WORDS; i++)
		if ((a->mag[i / 32] >> (i % 32)) & 1 && i + bits < 32 * BIG_WORDS)
			t.mag[(i + bits) / 32] |= 1u << ((i + bits) % 32);
	t.neg = a->neg;
	big_normalise(&t);
	*r = t;
}

/* Bits of the magnitude (0 for zero): |b| < 2^big_bits(b). */
int
big_bits(const Big *b)
{
	int			w,
				i;

	for (w = BIG_WORDS - 1; w >= 0; w--)
		if (b->mag[w] != 0)
			for (i = 31; i >= 0; i--)
				if ((b->mag[w] >> i) & 1)
					return 32 * w + i + 1;
	return 0;
}

/* Compare two integers: -1, 0 or 1. */
int
big_cmp(const Big *a, const Big *b)
{
	int			m;

	if (a->neg != b->neg)
		return a->neg ? -1 : 1;
	m = mag_cmp(a->mag, b->mag);
	return a->neg ? -m : m;
}

/* Whether two integers are equal. */
int
big_eq(const Big *a, const Big *b)
{
	return a->neg == b->neg && mag_cmp(a->mag, b->mag) == 0;
}

/* Decimal text of b in buf (len >= 160 holds any 512-bit value). */
const char *
big_str(const Big *b, char *buf, size_t len)
{
	uint32_t	m[BIG_WORDS];
	char		digits[200];
	int			n = 0;
	size_t		k = 0;

	memcpy(m, b->mag, sizeof(m));
	do
	{
		uint64_t	rem = 0;
		int			i;

		for (i = BIG_WORDS - 1; i >= 0; i--)
		{
			uint64_t	cur = (rem << 32) | m[i];

			m[i] = (uint32_t) (cur / 10);
			rem = cur % 10;
		}
		digits[n++] = (char) ('0' + rem);
	} while (!mag_is_zero(m) && n < (int) sizeof(digits));
	if (b->neg && k + 1 < len)
		buf[k++] = '-';
	while (n > 0 && k + 1 < len)
		buf[k++] = digits[--n];
	buf[k] = '\0';
	return buf;
}

/*
 * Limb `limb` of b: bits [42 limb, 42 limb + 42) of |b|, read one at a
 * time, negated when b < 0.
 */
int64_t
big_limb(const Big *b, int limb)
{
	int64_t		v = 0;
	int			i;

	for (i = 41; i >= 0; i--)
	{
		int			bit = 42 * limb + i;

		v = 2 * v + ((b->mag[bit / 32] >> (bit % 32)) & 1);
	}
	return b->neg ? -v : v;
}

/* b as an int64 (the caller knows |b| < 2^63). */
int64_t
big_low_i64(const Big *b)
{
	int64_t		v = (int64_t) (((uint64_t) b->mag[1] << 32) | b->mag[0]);

	return b->neg ? -v : v;
}

/* The value of a part of a finite expression value. */
int64_t
ref_part(const Big *value, GaDerivedPart part, int limb)
{
	return part == GA_DERIVED_INT64 ? big_low_i64(value) : big_limb(value, limb);
}

/*
 * Evaluate a program in one row: first the rules (any null operand: null;
 * else any operand's NaN flag valid: NaN), then the arithmetic, stopping
 * with *max_bits > 190 as soon as a value outgrows what the device may
 * hold.
 */
RefState
ref_eval(const GaDerivedColumn *dc, const Case *c, int64_t row, Big *value, int *max_bits)
{
	Big			stack[GA_EXPR_MAX_DEPTH + 1];
	int			depth = 0;
	int			s,
				i;

	for (s = 0; s < dc->nsteps; s++)
		if (dc->steps[s].op == GA_EXPR_COLUMN && c->isnull[dc->steps[s].column][row])
			return REF_NULL;
	for (s = 0; s < dc->nsteps; s++)
		if (dc->steps[s].op == GA_EXPR_COLUMN && dc->steps[s].nan_column >= 0 &&
			!c->isnull[dc->steps[s].nan_column][row])
			return REF_NAN;

	*max_bits = 0;
	big_zero(value);
	for (s = 0; s < dc->nsteps; s++)
	{
		const GaExprStep *step = &dc->steps[s];
		Big		   *top;

		switch (step->op)
		{
			case GA_EXPR_COLUMN:
				if (depth > GA_EXPR_MAX_DEPTH)
					return REF_NULL;	/* not a valid program */
				big_from_i64(&stack[depth++],
							 load_int(c->values[step->column], c->types[step->column], row));
				break;
			case GA_EXPR_CONST:
				if (depth > GA_EXPR_MAX_DEPTH)
					return REF_NULL;
				big_from_i64(&stack[depth++], step->constant);
				break;
			case GA_EXPR_ADD:
			case GA_EXPR_SUB:
			case GA_EXPR_MUL:
				if (depth < 2)
					return REF_NULL;
				if (step->op == GA_EXPR_ADD)
					big_add(&stack[depth - 2], &stack[depth - 2], &stack[depth - 1]);
				else if (step->op == GA_EXPR_SUB)
					big_sub(&stack[depth - 2], &stack[depth - 2], &stack[depth - 1]);
				else
					big_mul(&stack[depth - 2], &stack[depth - 2], &stack[depth - 1]);
				depth--;
				break;
			case GA_EXPR_SCALE:
				if (depth < 1)
					return REF_NULL;
				for (i = 0; i < step->power; i++)
					mag_mul_small(stack[depth - 1].mag, stack[depth - 1].mag, 10);
				break;
		}
		top = &stack[depth - 1];
		if (big_bits(top) > *max_bits)
			*max_bits = big_bits(top);
		if (*max_bits > REF_MAX_BITS)
			return REF_FINITE;	/* out of bounds: the caller rejects it */
	}
	if (depth >= 1)
		*value = stack[depth - 1];
	return REF_FINITE;
}
