/*-------------------------------------------------------------------------
 *
 * derived.h
 *	  What the derived column suite's files share: the reference's big
 *	  integers (derived_ref.c), a derived case (its columns, derived
 *	  columns and known answers) and the device runs (derived.c), the
 *	  fixed and random cases (derived_cases.c), the aggjoin cases
 *	  (derived_join.c) and the API checks (derived_api.c).
 *
 * The reference is independent of cuda/derived_expr.h: its integers are
 * sign and magnitude in 32-bit words, not 64-bit two's complement, its
 * null and NaN rules are decided before any arithmetic, a SCALE multiplies
 * by ten again and again, and a limb is read bit by bit.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CONFORMANCE_DERIVED_H
#define GPUAGG_CONFORMANCE_DERIVED_H

#include "conformance.h"

/* 32-bit words of a reference integer: 512 bits, room for any product checked. */
#define BIG_WORDS 16

/* A signed integer: magnitude (least significant word first) and sign. */
typedef struct Big
{
	int			neg;			/* never set for zero */
	uint32_t	mag[BIG_WORDS];
} Big;

/* What a derived expression is in one row. */
typedef enum RefState
{
	REF_NULL,
	REF_NAN,
	REF_FINITE
} RefState;

/* derived_ref.c: big integers */
extern void big_from_i64(Big *b, int64_t v);
extern void big_from_i128(Big *b, __int128 v);
extern int	big_from_str(Big *b, const char *s);
extern void big_add(Big *r, const Big *a, const Big *b);
extern void big_sub(Big *r, const Big *a, const Big *b);
extern void big_mul(Big *r, const Big *a, const Big *b);
extern void big_shl(Big *r, const Big *a, int bits);
extern int	big_bits(const Big *b);
extern int	big_cmp(const Big *a, const Big *b);
extern int	big_eq(const Big *a, const Big *b);
extern const char *big_str(const Big *b, char *buf, size_t len);
extern int64_t big_limb(const Big *b, int limb);
extern int64_t big_low_i64(const Big *b);

/*
 * derived_ref.c: evaluate a derived column's program in row `row` of a
 * case's columns (values, null flags; a NaN flag column is valid where not
 * null).  For a finite row, *value is the value and *max_bits the largest
 * bit length of any value pushed or computed (the device needs at most 190).
 */
extern RefState ref_eval(const GaDerivedColumn *dc, const Case *c, int64_t row, Big *value,
						 int *max_bits);

/* derived_ref.c: the value of part (LIMB k, INT64) of a finite value */
extern int64_t ref_part(const Big *value, GaDerivedPart part, int limb);

/* Most derived columns a case has (they share MAX_COLUMNS with the rest). */
#define DV_MAX_DERIVED 12

/* A derived case: the rows and every column, derived ones included. */
typedef struct DvCase
{
	/*
	 * The rows as the reference aggregates them: derived columns hold the
	 * reference's values (their batches get garbage instead).
	 */
	Case		c;
	int			nderived;
	GaDerivedColumn derived[DV_MAX_DERIVED];
	uint8_t		is_derived[MAX_COLUMNS];

	/*
	 * Known answers (fixed cases): the value of derived[known_spec]'s
	 * expression in rows 0 .. nknown - 1 ("null", "nan" or decimal), and
	 * the exact sum of its finite rows (one group).
	 */
	int			known_spec;
	int			nknown;
	const char *const *known_rows;
	const char *known_total;

	/* aggjoin: the request's join spec (derived_join.c fills it) */
	const GaAggJoinSpec *join;

	char		desc[700];
} DvCase;

/* derived.c: building cases (the aggjoin ones too) */
extern int	dv_add_column(DvCase *dc, GaValueType type);
extern void dv_alloc_rows(DvCase *dc, int64_t nrows);
extern int	dv_add_derived(DvCase *dc, const GaDerivedColumn *program, GaDerivedPart part,
						   int limb);
extern void dv_fill_derived(DvCase *dc);
extern void dv_describe(DvCase *dc, const char *label);

/* derived_cases.c: the fixed cases (their label) and the random ones */
#define DV_NUM_FIXED 13
extern const char *dv_fixed_case(int index, DvCase *dc, Rng *rng, int64_t max_rows);
extern void dv_random_case(DvCase *dc, Rng *rng, int64_t max_rows);

/* derived_cases.c: programs, and derived columns with their aggregates */
extern void dv_add_limbs_summed(DvCase *dc, const GaDerivedColumn *program);
extern void dv_add_part_all_aggs(DvCase *dc, const GaDerivedColumn *program,
								 GaDerivedPart part, int limb);
extern void dv_program(GaDerivedColumn *program);
extern void dv_set_step(GaExprStep *step, GaExprOp op, int column, int nan_column,
						int power, int64_t constant);
extern void dv_step(GaDerivedColumn *program, GaExprOp op, int column, int nan_column,
					int power, int64_t constant);
extern int	dv_bound_bits(const GaDerivedColumn *program, const Big *maxabs, int *final_bits);
extern void dv_random_program(Rng *rng, GaDerivedColumn *program, const int *operands,
							  int noperands, const int *nan_cols, int nnan);

#define DV_COL(p, c, nan)	dv_step((p), GA_EXPR_COLUMN, (c), (nan), 0, 0)
#define DV_CONST(p, k)		dv_step((p), GA_EXPR_CONST, 0, -1, 0, (k))
#define DV_OP(p, op)		dv_step((p), (op), 0, -1, 0, 0)
#define DV_SCALE(p, pw)		dv_step((p), GA_EXPR_SCALE, 0, -1, (pw), 0)

/* The bounds a program keeps to: every value, a limb's value, an int64 value. */
#define DV_MAX_BITS 190
#define DV_LIMB_VALUE_BITS 168
#define DV_INT64_VALUE_BITS 63

/* derived.c: running and checking */
extern GaAgg *dv_create(const DvCase *dc, GaDevice *dev, GaStrategy strategy, GaStatus *st);
extern void dv_check_limb_sums(const DvCase *dc, const GaAggResult *res, RunReport *rr);

/*
 * derived.c: the suite: API checks, fixed cases, random cases and the
 * aggjoin cases on every device run.  Adds to *checks; returns the
 * problems found.
 */
extern int64_t conformance_derived(GaDevice *const *devices, const GaStrategy *strategies,
								   const char *const *labels, int nruns, uint64_t seed,
								   int ncases, int64_t max_rows, int timeout, int verbose,
								   int64_t *checks);

/* derived_join.c: the aggjoin cases (indexes 0 .. DV_NUM_JOIN_CASES - 1) */
#define DV_NUM_JOIN_CASES 9
extern int64_t dv_join_case(int index, GaDevice *const *devices, const GaStrategy *strategies,
							const char *const *labels, int nruns, uint64_t seed, int verbose,
							int64_t *checks);

/* derived_api.c: requests that must be refused, and edge requests that must not */
extern int64_t derived_api_checks(GaDevice *dev, const char *label);

#endif							/* GPUAGG_CONFORMANCE_DERIVED_H */
