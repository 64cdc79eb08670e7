/*-------------------------------------------------------------------------
 *
 * common.c
 *	  What every suite of the conformance test shares: seeded random
 *	  numbers, the value types of columns, mismatch reports, the clock and
 *	  the wait callback handed to the devices.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#define MAX_REPORTS 6			/* mismatch lines printed per run */

/* ------------------------------------------------------------------------
 * Random numbers: xoshiro256** seeded through splitmix64
 * ------------------------------------------------------------------------
 */
/* One splitmix64 step: spreads a seed into well-mixed state words. */
static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Seed a generator; every case gets its own, so one case can be rerun alone. */
void
rng_seed(Rng *rng, uint64_t seed)
{
	int			i;

	for (i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&seed);
}

/* The next 64 random bits (xoshiro256**). */
uint64_t
rng_next(Rng *rng)
{
	uint64_t   *s = rng->s;
	uint64_t	result = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* A uniform double in [0, 1). */
double
rng_unit(Rng *rng)
{
	return (double) (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* A uniform integer in [lo, hi]. */
int64_t
rng_range(Rng *rng, int64_t lo, int64_t hi)
{
	uint64_t	span = (uint64_t) hi - (uint64_t) lo + 1;

	if (span == 0)
		return (int64_t) rng_next(rng);
	return (int64_t) ((uint64_t) lo + rng_next(rng) % span);
}

/* True with probability p. */
int
rng_chance(Rng *rng, double p)
{
	return rng_unit(rng) < p;
}

/* One of n doubles, uniformly. */
double
rng_pick(Rng *rng, const double *choices, int n)
{
	return choices[rng_range(rng, 0, n - 1)];
}

/* perm[0 .. n) = a random permutation of 0 .. n - 1 (Fisher-Yates). */
void
rng_permutation(Rng *rng, int *perm, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--)
	{
		int			j = (int) rng_range(rng, 0, i);
		int			t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* ------------------------------------------------------------------------
 * Value types
 * ------------------------------------------------------------------------
 */

/* Short name of a column type, for the case lines. */
const char *
type_name(GaValueType type)
{
	static const char *const names[] = {"none", "i8", "i16", "i32", "i64", "f32", "f64"};

	return (type >= GA_TYPE_NONE && type <= GA_TYPE_FLOAT64) ? names[type] : "?";
}

/* Whether a column type holds integers. */
int
type_is_int(GaValueType type)
{
	return type >= GA_TYPE_INT8 && type <= GA_TYPE_INT64;
}

/* Whether a column type holds floats. */
int
type_is_float(GaValueType type)
{
	return type == GA_TYPE_FLOAT32 || type == GA_TYPE_FLOAT64;
}

/* Store an integer into element i of a column of an integer type. */
void
store_int(void *values, GaValueType type, int64_t i, int64_t v)
{
	switch (type)
	{
		case GA_TYPE_INT8:
			((int8_t *) values)[i] = (int8_t) v;
			break;
		case GA_TYPE_INT16:
			((int16_t *) values)[i] = (int16_t) v;
			break;
		case GA_TYPE_INT32:
			((int32_t *) values)[i] = (int32_t) v;
			break;
		default:
			((int64_t *) values)[i] = v;
			break;
	}
}

/* Element i of an integer column, widened. */
int64_t
load_int(const void *values, GaValueType type, int64_t i)
{
	switch (type)
	{
		case GA_TYPE_INT8:
			return ((const int8_t *) values)[i];
		case GA_TYPE_INT16:
			return ((const int16_t *) values)[i];
		case GA_TYPE_INT32:
			return ((const int32_t *) values)[i];
		default:
			return ((const int64_t *) values)[i];
	}
}

/* Element i of a float column, widened. */
double
load_float(const void *values, GaValueType type, int64_t i)
{
	if (type == GA_TYPE_FLOAT32)
		return ((const float *) values)[i];
	return ((const double *) values)[i];
}

/* ------------------------------------------------------------------------
 * Mismatch reports, the clock and the wait callback
 * ------------------------------------------------------------------------
 */
/*
 * Print one mismatch line (the first few per run only): "case N [label]" or
 * "api [label]", with the suite's name in front for the join suite.
 */
void
report(RunReport *rr, const char *fmt,...)
{
	va_list		args;

	rr->mismatches++;
	if (rr->printed >= MAX_REPORTS)
		return;
	rr->printed++;
	if (rr->case_no >= 0)
		printf("%s %d [%s] MISMATCH: ", rr->suite ? rr->suite : "case",
			   rr->case_no, rr->label);
	else
		printf("%s%sapi [%s] MISMATCH: ", rr->suite ? rr->suite : "",
			   rr->suite ? " " : "", rr->label);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	printf("\n");
}

/* The wait callback: counts calls, and asks to stop when told to. */
int
test_wait(void *arg)
{
	WaitState  *w = arg;

	w->calls++;
	if (w->cancel)
	{
		w->cancels++;
		return 1;
	}
	return 0;
}

/* Milliseconds on a monotonic clock. */
double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}
