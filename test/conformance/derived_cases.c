/*-------------------------------------------------------------------------
 *
 * derived_cases.c
 *	  The derived column suite's cases (derived.c runs them): the programs'
 *	  building blocks, the fixed cases with answers known from outside the
 *	  reference, and the random cases.
 *
 * Fixed cases: TPC-H's price * (100 - disc) * (100 + tax) with nulls and
 * a NaN; +-(2^168 - 1), the largest limb value; a cube of int64 extremes
 * (2^189) cancelled back to the value; SCALE by 10^19, 10^20 and 10^38;
 * int64 extreme constants; every null and NaN combination; a wrong group
 * estimate (table growth redoes batches); many derived columns sharing a
 * program, duplicate parts, parts nobody reads and parts only counted; no
 * rows, one-row batches; int16 and int32 extremes.
 *
 * Random cases: operands of every integer type with random magnitudes and
 * nulls, NaN flag columns, random programs kept within the bounds by a
 * magnitude bound computed with the reference's integers (a candidate that
 * could pass them is drawn again), random parts and aggregates, with and
 * without group keys, in batches of every size, with the fields that an
 * operation does not use set to garbage, and the columns in a random
 * order.
 *
 *-------------------------------------------------------------------------
 */
#include "derived.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a random case at most (besides --max-rows). */
#define DV_RANDOM_MAX_ROWS 20000

/* Tries to draw a program within the bounds before settling for one operand. */
#define DV_PROGRAM_TRIES 200

/*
 * Move the columns to the positions of a random permutation, so that
 * derived columns, operands and keys are anywhere in the batch.
 */
static void
dv_permute(DvCase *dc, Rng *rng)
{
	Case	   *c = &dc->c;
	int			perm[MAX_COLUMNS];
	GaValueType types[MAX_COLUMNS];
	void	   *values[MAX_COLUMNS];
	uint8_t    *isnull[MAX_COLUMNS];
	int			has_nulls[MAX_COLUMNS];
	uint8_t		is_derived[MAX_COLUMNS];
	int			i,
				s;

	rng_permutation(rng, perm, c->ncolumns);
	for (i = 0; i < c->ncolumns; i++)
	{
		types[perm[i]] = c->types[i];
		values[perm[i]] = c->values[i];
		isnull[perm[i]] = c->isnull[i];
		has_nulls[perm[i]] = c->has_nulls[i];
		is_derived[perm[i]] = dc->is_derived[i];
	}
	for (i = 0; i < c->ncolumns; i++)
	{
		c->types[i] = types[i];
		c->values[i] = values[i];
		c->isnull[i] = isnull[i];
		c->has_nulls[i] = has_nulls[i];
		dc->is_derived[i] = is_derived[i];
	}
	for (i = 0; i < c->nkeys; i++)
		c->key_columns[i] = perm[c->key_columns[i]];
	for (i = 0; i < c->naggs; i++)
	{
		if (c->aggs[i].column >= 0)
			c->aggs[i].column = perm[c->aggs[i].column];
		if (c->aggs[i].op == GA_AGG_COMOMENTS)
			c->aggs[i].column2 = perm[c->aggs[i].column2];
	}
	for (i = 0; i < dc->nderived; i++)
	{
		GaDerivedColumn *d = &dc->derived[i];

		d->column = perm[d->column];
		for (s = 0; s < d->nsteps; s++)
			if (d->steps[s].op == GA_EXPR_COLUMN)
			{
				d->steps[s].column = perm[d->steps[s].column];
				if (d->steps[s].nan_column >= 0)
					d->steps[s].nan_column = perm[d->steps[s].nan_column];
			}
	}
}

/* ------------------------------------------------------------------------
 * Programs
 * ------------------------------------------------------------------------
 */

/* Set a program step (fields the operation does not use: 0 / -1). */
void
dv_set_step(GaExprStep *s, GaExprOp op, int column, int nan_column, int power,
			int64_t constant)
{
	memset(s, 0, sizeof(*s));
	s->op = op;
	s->column = column;
	s->nan_column = nan_column;
	s->power = power;
	s->constant = constant;
}

/* Append a step to a program (fields the operation does not use: 0 / -1). */
void
dv_step(GaDerivedColumn *p, GaExprOp op, int column, int nan_column, int power,
		int64_t constant)
{
	dv_set_step(&p->steps[p->nsteps++], op, column, nan_column, power, constant);
}

#define COL(p, c, nan)	DV_COL(p, c, nan)
#define CONST(p, k)		DV_CONST(p, k)
#define OP(p, op)		DV_OP(p, op)
#define SCALE(p, pw)	DV_SCALE(p, pw)

/* Start an empty program. */
void
dv_program(GaDerivedColumn *p)
{
	memset(p, 0, sizeof(*p));
}

/* Add limbs 0 .. 3 of a program, each summed. */
void
dv_add_limbs_summed(DvCase *dc, const GaDerivedColumn *p)
{
	int			k;

	for (k = 0; k < 4; k++)
		add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, p, GA_DERIVED_LIMB, k));
}

/* Add a part with SUM_INT, COUNT, MIN and MAX of it (COUNT only of a NaN flag). */
void
dv_add_part_all_aggs(DvCase *dc, const GaDerivedColumn *p, GaDerivedPart part, int limb)
{
	int			col = dv_add_derived(dc, p, part, limb);

	add_agg(&dc->c, GA_AGG_COUNT, col);
	if (part == GA_DERIVED_NAN)
		return;
	add_agg(&dc->c, GA_AGG_SUM_INT, col);
	add_agg(&dc->c, GA_AGG_MIN, col);
	add_agg(&dc->c, GA_AGG_MAX, col);
}

/*
 * An upper bound, in bits, of every value a program pushes or computes in
 * any row whose operands are at most maxabs[column] in magnitude, and in
 * *final_bits of the value it leaves; evaluated with the reference's
 * integers on magnitudes (|a + b|, |a - b| <= |a| + |b|), stopping past
 * the device's bound.
 */
int
dv_bound_bits(const GaDerivedColumn *p, const Big *maxabs, int *final_bits)
{
	Big			stack[GA_EXPR_MAX_DEPTH + 1];
	Big			ten;
	int			depth = 0;
	int			max_bits = 0;
	int			s,
				i;

	big_from_i64(&ten, 10);
	*final_bits = DV_MAX_BITS + 1;
	for (s = 0; s < p->nsteps; s++)
	{
		const GaExprStep *step = &p->steps[s];

		switch (step->op)
		{
			case GA_EXPR_COLUMN:
				stack[depth++] = maxabs[step->column];
				break;
			case GA_EXPR_CONST:
				big_from_i64(&stack[depth], step->constant);
				stack[depth++].neg = 0;
				break;
			case GA_EXPR_ADD:
			case GA_EXPR_SUB:
				big_add(&stack[depth - 2], &stack[depth - 2], &stack[depth - 1]);
				depth--;
				break;
			case GA_EXPR_MUL:
				big_mul(&stack[depth - 2], &stack[depth - 2], &stack[depth - 1]);
				depth--;
				break;
			case GA_EXPR_SCALE:
				for (i = 0; i < step->power; i++)
					big_mul(&stack[depth - 1], &stack[depth - 1], &ten);
				break;
		}
		if (big_bits(&stack[depth - 1]) > max_bits)
			max_bits = big_bits(&stack[depth - 1]);
		if (max_bits > DV_MAX_BITS)
			return max_bits;
	}
	*final_bits = big_bits(&stack[0]);
	return max_bits;
}

/* A random constant: small, of random magnitude, an int64 end, or a power of ten. */
static int64_t
dv_random_constant(Rng *rng)
{
	double		u = rng_unit(rng);
	int			bits;

	if (u < 0.4)
		return rng_range(rng, -100, 100);
	if (u < 0.8)
	{
		bits = (int) rng_range(rng, 0, 63);
		return rng_range(rng, -(int64_t) ((UINT64_C(1) << bits) - 1),
						 (int64_t) ((UINT64_C(1) << bits) - 1));
	}
	if (u < 0.9)
		return rng_chance(rng, 0.5) ? INT64_MIN : INT64_MAX;
	bits = (int) rng_range(rng, 0, 18);
	{
		int64_t		p = 1;

		while (bits-- > 0)
			p *= 10;
		return rng_chance(rng, 0.5) ? p : -p;
	}
}

/*
 * Draw a random program of 1 .. GA_EXPR_MAX_STEPS steps over the operand
 * columns (each read with one of the NaN flags or none) that keeps the
 * stack within GA_EXPR_MAX_DEPTH and ends with one value: a step may push
 * only while the steps left can still fold the stack, and the fields its
 * operation does not use get garbage.
 */
void
dv_random_program(Rng *rng, GaDerivedColumn *p, const int *operands, int noperands,
				  const int *nan_cols, int nnan)
{
	int			n = (int) rng_pick(rng, (const double[]) {1, 3, 5, 7, 11, 17, 24}, 7);
	int			depth = 0;
	int			i;

	dv_program(p);
	for (i = 0; i < n; i++)
	{
		int			left = n - i;	/* this step included */
		int			can_push = depth < GA_EXPR_MAX_DEPTH && depth <= left - 1;
		int			can_fold = depth >= 2;
		int			can_scale = depth >= 1 && depth <= left;
		double		w_push = can_push ? 4 : 0,
					w_fold = can_fold ? 4 : 0,
					w_scale = can_scale ? 1 : 0;
		double		u = rng_unit(rng) * (w_push + w_fold + w_scale);
		GaExprStep *s;

		if (u < w_push)
		{
			if (rng_chance(rng, 0.7))
				COL(p, operands[rng_range(rng, 0, noperands - 1)],
					nnan > 0 && rng_chance(rng, 0.4) ? nan_cols[rng_range(rng, 0, nnan - 1)] : -1);
			else
				CONST(p, dv_random_constant(rng));
			depth++;
		}
		else if (u < w_push + w_fold)
		{
			OP(p, (GaExprOp) (GA_EXPR_ADD + rng_range(rng, 0, 2)));
			depth--;
		}
		else
			SCALE(p, rng_chance(rng, 0.6) ? (int) rng_range(rng, 0, 4) :
				  (int) rng_range(rng, 0, 38));

		/* garbage where the operation does not look */
		s = &p->steps[p->nsteps - 1];
		if (s->op != GA_EXPR_COLUMN)
		{
			s->column = (int) rng_range(rng, -1000, 1000);
			s->nan_column = (int) rng_range(rng, -1000, 1000);
		}
		if (s->op != GA_EXPR_SCALE)
			s->power = (int) rng_range(rng, -1000, 1000);
		if (s->op != GA_EXPR_CONST)
			s->constant = (int64_t) rng_next(rng);
	}
}

/* ------------------------------------------------------------------------
 * Fixed cases, with known answers
 * ------------------------------------------------------------------------
 */

/* TPC-H: price * (100 - disc) * (100 + tax), scale 2 each; a null, a NaN. */
static const char *const dv_tpch_rows[] = {
	"12666657420", "-917999990820", "0", "0", "-19900", "5189500000000000000",
	"null", "nan", "null"
};

/* x * (2^168 - 1) for x in +1, -1, +1, +1, 0, -1, +1 (repeated). */
static const char *const dv_bound168_rows[] = {
	"374144419156711147060143317175368453031918731001855",
	"-374144419156711147060143317175368453031918731001855",
	"374144419156711147060143317175368453031918731001855",
	"374144419156711147060143317175368453031918731001855",
	"0",
	"-374144419156711147060143317175368453031918731001855",
	"374144419156711147060143317175368453031918731001855"
};

/* x^3 - x^3 + x over int64 extremes (2^189 on the way). */
static const int64_t dv_cube_x[] = {
	INT64_MAX, INT64_MIN, 0, 1, -1, INT64_C(4611686018427387904),
	-INT64_C(4611686018427387903), 123456789
};
static const char *const dv_cube_rows[] = {
	"9223372036854775807", "-9223372036854775808", "0", "1", "-1",
	"4611686018427387904", "-4611686018427387903", "123456789"
};

/* x * 10^19. */
static const int64_t dv_scale_x[] = {
	123, -1, 0, INT64_MAX, INT64_MIN, INT64_C(4611686018427387904)
};
static const char *const dv_scale_rows[] = {
	"1230000000000000000000", "-10000000000000000000", "0",
	"92233720368547758070000000000000000000", "-92233720368547758080000000000000000000",
	"46116860184273879040000000000000000000"
};

/* INT64_MIN * INT64_MIN + x = 2^126 + x. */
static const int64_t dv_const_x[] = {0, 1, -1, 5};
static const char *const dv_const_rows[] = {
	"85070591730234615865843651857942052864", "85070591730234615865843651857942052865",
	"85070591730234615865843651857942052863", "85070591730234615865843651857942052869"
};

/* a (NaN flag fa) + b (NaN flag fb) over every null and NaN combination. */
static const char *const dv_rules_rows[] = {
	"11", "null", "null", "null", "nan", "null", "null", "null", "nan", "null",
	"null", "null", "nan", "null", "null", "null", "187", "198", "209", "220"
};

/* The TPC-H case: one program's four limbs and int64 value, summed. */
static void
dv_fixed_tpch(DvCase *dc)
{
	static const int64_t price[] = {1234567, -99999999, 0, INT64_C(123456789012), -1,
	INT64_C(500000000000000), 77, INT64_MIN, 42};
	static const int16_t disc[] = {5, 10, 7, 100, 0, 3, 1, 2, 3};
	static const int16_t tax[] = {8, 2, 1, 0, 99, 7, 1, 2, 3};
	GaDerivedColumn p;
	int			cp = dv_add_column(dc, GA_TYPE_INT64);
	int			cd = dv_add_column(dc, GA_TYPE_INT16);
	int			ct = dv_add_column(dc, GA_TYPE_INT16);
	int			cn = dv_add_column(dc, GA_TYPE_NONE);
	int			i;

	dv_program(&p);
	COL(&p, cp, cn);
	CONST(&p, 100);
	COL(&p, cd, -1);
	OP(&p, GA_EXPR_SUB);
	OP(&p, GA_EXPR_MUL);
	CONST(&p, 100);
	COL(&p, ct, -1);
	OP(&p, GA_EXPR_ADD);
	OP(&p, GA_EXPR_MUL);
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &p, GA_DERIVED_INT64, 0);
	add_agg(&dc->c, GA_AGG_COUNT_ROWS, -1);
	dv_alloc_rows(dc, 9);
	for (i = 0; i < 9; i++)
	{
		((int64_t *) dc->c.values[cp])[i] = price[i];
		((int16_t *) dc->c.values[cd])[i] = disc[i];
		((int16_t *) dc->c.values[ct])[i] = tax[i];
		dc->c.isnull[cn][i] = i != 7;	/* row 7: the price is NaN */
	}
	dc->c.isnull[cp][6] = 1;
	dc->c.isnull[cd][8] = 1;
	dc->known_spec = 0;
	dc->nknown = 9;
	dc->known_rows = dv_tpch_rows;
	dc->known_total = "5189499094666646700";
	dc->c.batch_rows = 4;
}

/* +-(2^168 - 1): every limb at its largest, 1001 rows summed. */
static void
dv_fixed_bound168(DvCase *dc)
{
	static const int16_t cycle[] = {1, -1, 1, 1, 0, -1, 1};
	GaDerivedColumn p;
	int			cx = dv_add_column(dc, GA_TYPE_INT16);
	int64_t		i;
	int			k;

	dv_program(&p);
	COL(&p, cx, -1);
	CONST(&p, INT64_C(4398046511104));	/* 2^42 */
	for (k = 0; k < 3; k++)
	{
		CONST(&p, INT64_C(4398046511104));
		OP(&p, GA_EXPR_MUL);
	}
	CONST(&p, 1);
	OP(&p, GA_EXPR_SUB);
	OP(&p, GA_EXPR_MUL);
	dv_add_limbs_summed(dc, &p);
	for (k = 0; k < 4; k++)
	{
		add_agg(&dc->c, GA_AGG_MIN, dc->derived[k].column);
		add_agg(&dc->c, GA_AGG_MAX, dc->derived[k].column);
	}
	dv_alloc_rows(dc, 1001);
	for (i = 0; i < 1001; i++)
		((int16_t *) dc->c.values[cx])[i] = cycle[i % 7];
	dc->nknown = 7;
	dc->known_rows = dv_bound168_rows;
	dc->known_total = "107005303878819388059200988712155377567128757066530530";
	dc->c.batch_rows = 100;
}

/*
 * x^3 - x^3 + x: values of 190 bits on the way (INT64_MIN cubed is
 * -2^189); and the int64 part of the same over y, x without INT64_MIN.
 */
static void
dv_fixed_cube(DvCase *dc)
{
	GaDerivedColumn p,
				q;
	int			cx = dv_add_column(dc, GA_TYPE_INT64);
	int			cy = dv_add_column(dc, GA_TYPE_INT64);
	int			i;

	dv_program(&p);
	COL(&p, cx, -1);
	COL(&p, cx, -1);
	OP(&p, GA_EXPR_MUL);
	COL(&p, cx, -1);
	OP(&p, GA_EXPR_MUL);
	COL(&p, cx, -1);
	COL(&p, cx, -1);
	OP(&p, GA_EXPR_MUL);
	COL(&p, cx, -1);
	OP(&p, GA_EXPR_MUL);
	OP(&p, GA_EXPR_SUB);
	COL(&p, cx, -1);
	OP(&p, GA_EXPR_ADD);
	q = p;
	for (i = 0; i < q.nsteps; i++)
		if (q.steps[i].op == GA_EXPR_COLUMN)
			q.steps[i].column = cy;
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &q, GA_DERIVED_INT64, 0);
	dv_add_part_all_aggs(dc, &q, GA_DERIVED_LIMB, 1);
	dv_alloc_rows(dc, 8);
	for (i = 0; i < 8; i++)
	{
		((int64_t *) dc->c.values[cx])[i] = dv_cube_x[i];
		((int64_t *) dc->c.values[cy])[i] = dv_cube_x[i] == INT64_MIN ? 0 : dv_cube_x[i];
	}
	dc->c.isnull[cy][1] = 1;
	dc->nknown = 8;
	dc->known_rows = dv_cube_rows;
	dc->known_total = "123456789";
	dc->c.batch_rows = 3;
}

/*
 * SCALE: x * 10^19 (the largest one-word factor), x * 3 * 10^20 (two
 * products), x * 10^38 - x * 10^38 + x (190 bits on the way).
 */
static void
dv_fixed_scale(DvCase *dc)
{
	GaDerivedColumn p,
				q,
				r;
	int			cx = dv_add_column(dc, GA_TYPE_INT64);
	int			i;

	dv_program(&p);
	COL(&p, cx, -1);
	SCALE(&p, 19);
	dv_program(&q);
	COL(&q, cx, -1);
	SCALE(&q, 20);
	CONST(&q, 3);
	SCALE(&q, 0);
	OP(&q, GA_EXPR_MUL);
	dv_program(&r);
	COL(&r, cx, -1);
	SCALE(&r, 38);
	COL(&r, cx, -1);
	SCALE(&r, 38);
	OP(&r, GA_EXPR_SUB);
	COL(&r, cx, -1);
	OP(&r, GA_EXPR_ADD);
	dv_add_limbs_summed(dc, &p);
	dv_add_limbs_summed(dc, &q);
	dv_add_part_all_aggs(dc, &r, GA_DERIVED_LIMB, 0);
	dv_add_part_all_aggs(dc, &r, GA_DERIVED_LIMB, 1);
	dv_alloc_rows(dc, 6);
	for (i = 0; i < 6; i++)
		((int64_t *) dc->c.values[cx])[i] = dv_scale_x[i];
	dc->nknown = 6;
	dc->known_rows = dv_scale_rows;
	dc->known_total = "46116860184273880250000000000000000000";
	dc->c.batch_rows = 6;
}

/* Constants: INT64_MIN * INT64_MIN + x, and INT64_MAX * -1 - x as an int64. */
static void
dv_fixed_constants(DvCase *dc)
{
	GaDerivedColumn p,
				q;
	int			cx = dv_add_column(dc, GA_TYPE_INT32);
	int			i;

	dv_program(&p);
	CONST(&p, INT64_MIN);
	CONST(&p, INT64_MIN);
	OP(&p, GA_EXPR_MUL);
	COL(&p, cx, -1);
	OP(&p, GA_EXPR_ADD);
	dv_program(&q);
	CONST(&q, INT64_MAX);
	CONST(&q, -1);
	OP(&q, GA_EXPR_MUL);
	COL(&q, cx, -1);
	OP(&q, GA_EXPR_SUB);
	CONST(&q, 6);
	OP(&q, GA_EXPR_ADD);
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &q, GA_DERIVED_INT64, 0);
	dv_alloc_rows(dc, 4);
	for (i = 0; i < 4; i++)
		((int32_t *) dc->c.values[cx])[i] = (int32_t) dv_const_x[i];
	dc->nknown = 4;
	dc->known_rows = dv_const_rows;
	dc->known_total = "340282366920938463463374607431768211461";
	dc->c.batch_rows = 2;
}

/*
 * The null and NaN rules: a (NaN flag fa) + b (NaN flag fb) over every
 * combination of nulls and flags, a * a with the flag on one read only, and
 * b * 100 that is never NaN.
 */
static void
dv_fixed_rules(DvCase *dc)
{
	GaDerivedColumn p,
				q,
				r;
	int			ca = dv_add_column(dc, GA_TYPE_INT32);
	int			cb = dv_add_column(dc, GA_TYPE_INT64);
	int			cfa = dv_add_column(dc, GA_TYPE_NONE);
	int			cfb = dv_add_column(dc, GA_TYPE_NONE);
	int			i;

	dv_program(&p);
	COL(&p, ca, cfa);
	COL(&p, cb, cfb);
	OP(&p, GA_EXPR_ADD);
	dv_program(&q);
	COL(&q, ca, cfa);
	COL(&q, ca, -1);
	OP(&q, GA_EXPR_MUL);
	dv_program(&r);
	COL(&r, cb, -1);
	SCALE(&r, 2);
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &p, GA_DERIVED_INT64, 0);
	dv_add_part_all_aggs(dc, &p, GA_DERIVED_NAN, 0);
	dv_add_part_all_aggs(dc, &q, GA_DERIVED_NAN, 0);
	dv_add_part_all_aggs(dc, &q, GA_DERIVED_INT64, 0);
	dv_add_part_all_aggs(dc, &r, GA_DERIVED_LIMB, 1);
	dv_add_part_all_aggs(dc, &r, GA_DERIVED_INT64, 0);
	add_agg(&dc->c, GA_AGG_COUNT_ROWS, -1);
	dv_alloc_rows(dc, 20);
	for (i = 0; i < 20; i++)
	{
		int			bits = i < 16 ? i : 0;

		((int32_t *) dc->c.values[ca])[i] = bits & 1 ? INT32_MIN : i + 1;
		((int64_t *) dc->c.values[cb])[i] = bits & 2 ? INT64_MIN : 10 * (i + 1);
		dc->c.isnull[ca][i] = (uint8_t) ((bits & 1) != 0);
		dc->c.isnull[cb][i] = (uint8_t) ((bits & 2) != 0);
		dc->c.isnull[cfa][i] = (uint8_t) ((bits & 4) == 0);
		dc->c.isnull[cfb][i] = (uint8_t) ((bits & 8) == 0);
	}
	dc->nknown = 20;
	dc->known_rows = dv_rules_rows;
	dc->known_total = "825";
	dc->c.batch_rows = 5;
}

/* Draw the rows of the operand-like columns of a case (keys, operands, flags). */
static void
dv_gen_rows(DvCase *dc, Rng *rng, int64_t nrows, const int *bits, const double *null_rate,
			const int64_t *domain)
{
	Case	   *c = &dc->c;
	int			col;
	int64_t		i;

	dv_alloc_rows(dc, nrows);
	for (col = 0; col < c->ncolumns; col++)
	{
		int64_t		lo,
					hi;

		if (dc->is_derived[col])
			continue;
		if (c->types[col] != GA_TYPE_NONE)
			ga_int_type_range(c->types[col], &lo, &hi);
		for (i = 0; i < nrows; i++)
		{
			int			isnull = rng_chance(rng, null_rate[col]);
			int64_t		v;

			c->isnull[col][i] = (uint8_t) isnull;
			c->has_nulls[col] |= isnull;
			if (c->types[col] == GA_TYPE_NONE)
				continue;
			if (isnull)
				v = rng_chance(rng, 0.5) ? lo : hi;	/* garbage to ignore */
			else if (domain[col] > 0)
				v = rng_range(rng, 0, domain[col] - 1) - domain[col] / 2;
			else if (bits[col] < 0)
				v = rng_chance(rng, 0.5) ? lo : hi;
			else
			{
				int64_t		m = bits[col] >= 63 ? INT64_MAX :
					(INT64_C(1) << bits[col]) - 1;

				if (m > hi)
					m = hi;
				v = rng_range(rng, -m, m);
				if (rng_chance(rng, 0.02))
					v = rng_chance(rng, 0.5) ? lo : hi;
			}
			store_int(c->values[col], c->types[col], i, v);
		}
	}
}

/* Many groups from a wrong estimate: the GPU's table grows and redoes batches. */
static void
dv_fixed_growth(DvCase *dc, Rng *rng, int64_t max_rows)
{
	int			bits[MAX_COLUMNS] = {0};
	double		null_rate[MAX_COLUMNS] = {0};
	int64_t		domain[MAX_COLUMNS] = {0};
	GaDerivedColumn p;
	int			ck = dv_add_column(dc, GA_TYPE_INT32);
	int			ca = dv_add_column(dc, GA_TYPE_INT64);
	int			cb = dv_add_column(dc, GA_TYPE_INT32);
	int64_t		nrows = max_rows < 60000 ? max_rows : 60000;

	domain[ck] = 30000;
	bits[ca] = 62;
	bits[cb] = 31;
	null_rate[cb] = 0.1;
	dc->c.key_columns[dc->c.nkeys++] = ck;
	dv_program(&p);
	COL(&p, ca, -1);
	COL(&p, cb, -1);
	OP(&p, GA_EXPR_MUL);
	SCALE(&p, 11);
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &p, GA_DERIVED_LIMB, 3);
	add_agg(&dc->c, GA_AGG_COUNT_ROWS, -1);
	dv_gen_rows(dc, rng, nrows, bits, null_rate, domain);
	dc->c.batch_rows = 8192;
	dc->c.estimated_groups = 10;
}

/*
 * Sharing: six parts of one program between the parts of another, a part
 * taken twice, a copy of a program with other garbage in unused fields,
 * parts nobody reads and parts only counted.
 */
static void
dv_fixed_sharing(DvCase *dc, Rng *rng)
{
	int			bits[MAX_COLUMNS] = {0};
	double		null_rate[MAX_COLUMNS] = {0};
	int64_t		domain[MAX_COLUMNS] = {0};
	GaDerivedColumn p,
				q,
				p2;
	int			ck = dv_add_column(dc, GA_TYPE_INT16);
	int			ca = dv_add_column(dc, GA_TYPE_INT32);
	int			cb = dv_add_column(dc, GA_TYPE_INT16);
	int			cf = dv_add_column(dc, GA_TYPE_NONE);
	int			s;

	domain[ck] = 7;
	null_rate[ck] = 0.1;
	bits[ca] = 30;
	bits[cb] = 15;
	null_rate[ca] = 0.05;
	null_rate[cf] = 0.9;
	dc->c.key_columns[dc->c.nkeys++] = ck;
	dv_program(&p);
	COL(&p, ca, cf);
	COL(&p, cb, -1);
	OP(&p, GA_EXPR_SUB);
	COL(&p, ca, -1);
	OP(&p, GA_EXPR_MUL);
	dv_program(&q);
	COL(&q, cb, -1);
	CONST(&q, -7);
	OP(&q, GA_EXPR_MUL);
	p2 = p;
	for (s = 0; s < p2.nsteps; s++)
		if (p2.steps[s].op != GA_EXPR_COLUMN)
			p2.steps[s].column = 1000 + s, p2.steps[s].power = -s, p2.steps[s].nan_column = 77;
	add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, &p, GA_DERIVED_LIMB, 0));
	add_agg(&dc->c, GA_AGG_COUNT, dv_add_derived(dc, &q, GA_DERIVED_INT64, 0));
	add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, &p, GA_DERIVED_LIMB, 1));
	(void) dv_add_derived(dc, &p, GA_DERIVED_LIMB, 2);	/* nobody reads it */
	add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, &p2, GA_DERIVED_LIMB, 2));
	add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, &p, GA_DERIVED_LIMB, 3));
	add_agg(&dc->c, GA_AGG_COUNT, dv_add_derived(dc, &p, GA_DERIVED_NAN, 0));
	add_agg(&dc->c, GA_AGG_MAX, dv_add_derived(dc, &q, GA_DERIVED_LIMB, 0));
	add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, &p, GA_DERIVED_INT64, 0));
	add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, &p, GA_DERIVED_LIMB, 1));	/* again */
	(void) dv_add_derived(dc, &q, GA_DERIVED_NAN, 0);	/* nobody reads it */
	add_agg(&dc->c, GA_AGG_SUM_INT, ca);	/* an operand aggregated itself */
	add_agg(&dc->c, GA_AGG_COUNT, cf);
	dv_gen_rows(dc, rng, 5000, bits, null_rate, domain);
	dc->c.batch_rows = 1000;
	dc->c.estimated_groups = 8;
}

/* No rows at all (a plain aggregate's one group), or one row per batch. */
static void
dv_fixed_small(DvCase *dc, Rng *rng, int64_t nrows, int64_t batch_rows)
{
	int			bits[MAX_COLUMNS] = {0};
	double		null_rate[MAX_COLUMNS] = {0};
	int64_t		domain[MAX_COLUMNS] = {0};
	GaDerivedColumn p;
	int			ca = dv_add_column(dc, GA_TYPE_INT64);
	int			cf = dv_add_column(dc, GA_TYPE_NONE);

	bits[ca] = 63;
	null_rate[ca] = 0.2;
	null_rate[cf] = 0.8;
	dv_program(&p);
	COL(&p, ca, cf);
	COL(&p, ca, -1);
	OP(&p, GA_EXPR_MUL);
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &p, GA_DERIVED_NAN, 0);
	add_agg(&dc->c, GA_AGG_COUNT_ROWS, -1);
	dv_gen_rows(dc, rng, nrows, bits, null_rate, domain);
	dc->c.batch_rows = batch_rows;
}

/* int16 and int32 operands at their ends: x * y * x * y (92 bits). */
static void
dv_fixed_narrow(DvCase *dc, Rng *rng)
{
	int			bits[MAX_COLUMNS] = {0};
	double		null_rate[MAX_COLUMNS] = {0};
	int64_t		domain[MAX_COLUMNS] = {0};
	GaDerivedColumn p,
				q;
	int			ck = dv_add_column(dc, GA_TYPE_INT64);
	int			cx = dv_add_column(dc, GA_TYPE_INT16);
	int			cy = dv_add_column(dc, GA_TYPE_INT32);

	bits[cx] = -1;				/* the type's ends only */
	bits[cy] = -1;
	domain[ck] = 3;
	dc->c.key_columns[dc->c.nkeys++] = ck;
	dv_program(&p);
	COL(&p, cx, -1);
	COL(&p, cy, -1);
	OP(&p, GA_EXPR_MUL);
	COL(&p, cx, -1);
	OP(&p, GA_EXPR_MUL);
	COL(&p, cy, -1);
	OP(&p, GA_EXPR_MUL);
	dv_program(&q);
	COL(&q, cx, -1);
	COL(&q, cy, -1);
	OP(&q, GA_EXPR_SUB);
	dv_add_limbs_summed(dc, &p);
	dv_add_part_all_aggs(dc, &q, GA_DERIVED_INT64, 0);
	dv_gen_rows(dc, rng, 3000, bits, null_rate, domain);
	dc->c.batch_rows = 512;
}

/* Fixed case `index` (0 .. DV_NUM_FIXED - 1); returns its label. */
const char *
dv_fixed_case(int index, DvCase *dc, Rng *rng, int64_t max_rows)
{
	switch (index)
	{
		case 0:
			dv_fixed_tpch(dc);
			return "tpch";
		case 1:
			dv_fixed_bound168(dc);
			return "bound-2^168";
		case 2:
			dv_fixed_cube(dc);
			return "cube-2^189";
		case 3:
			dv_fixed_scale(dc);
			return "scale";
		case 4:
			dv_fixed_constants(dc);
			return "constants";
		case 5:
			dv_fixed_rules(dc);
			return "null-nan-rules";
		case 6:
			dv_fixed_growth(dc, rng, max_rows);
			return "growth";
		case 7:
			dv_fixed_sharing(dc, rng);
			return "sharing";
		case 8:
			dv_fixed_small(dc, rng, 0, 10);
			return "no-rows";
		case 9:
			dv_fixed_small(dc, rng, 40, 1);
			return "one-row-batches";
		case 10:
			dv_fixed_narrow(dc, rng);
			return "narrow-ends";
		case 11:
			dv_fixed_tpch(dc);
			dc->c.batch_rows = 1;
			return "tpch-one-row-batches";
		default:
			dv_fixed_rules(dc);
			dc->c.batch_rows = 64;
			return "null-nan-rules-one-batch";
	}
}

/* ------------------------------------------------------------------------
 * Random cases
 * ------------------------------------------------------------------------
 */

/*
 * Add one program's derived columns: limbs (all four, summed, or some),
 * the int64 value when the bound allows it, the NaN flag, sometimes a
 * part twice; each with random aggregates (or none).
 */
static void
dv_random_parts(DvCase *dc, Rng *rng, const GaDerivedColumn *p, int int64_ok, int has_nan,
				int room)
{
	GaDerivedPart parts[8];
	int			limbs[8];
	int			n = 0,
				i,
				k;

	if (room >= 4 && rng_chance(rng, 0.5))
	{
		for (k = 0; k < 4; k++)
			add_agg(&dc->c, GA_AGG_SUM_INT, dv_add_derived(dc, p, GA_DERIVED_LIMB, k));
		room -= 4;
	}
	else
		for (k = 0; k < 4; k++)
			if (rng_chance(rng, 0.35))
				parts[n] = GA_DERIVED_LIMB, limbs[n++] = k;
	if (int64_ok && rng_chance(rng, 0.6))
		parts[n] = GA_DERIVED_INT64, limbs[n++] = 0;
	if (rng_chance(rng, has_nan ? 0.8 : 0.3))
		parts[n] = GA_DERIVED_NAN, limbs[n++] = 0;
	if (n > 0 && rng_chance(rng, 0.2))
	{
		k = (int) rng_range(rng, 0, n - 1);
		parts[n] = parts[k], limbs[n] = limbs[k], n++;
	}
	for (i = 0; i < n && i < room; i++)
	{
		int			col = dv_add_derived(dc, p, parts[i], limbs[i]);

		if (rng_chance(rng, 0.1))
			continue;			/* nobody reads it */
		if (parts[i] == GA_DERIVED_NAN)
		{
			add_agg(&dc->c, GA_AGG_COUNT, col);
			continue;
		}
		if (rng_chance(rng, 0.9))
			add_agg(&dc->c, GA_AGG_SUM_INT, col);
		if (rng_chance(rng, 0.4))
			add_agg(&dc->c, GA_AGG_COUNT, col);
		if (rng_chance(rng, 0.3))
			add_agg(&dc->c, GA_AGG_MIN, col);
		if (rng_chance(rng, 0.3))
			add_agg(&dc->c, GA_AGG_MAX, col);
	}
}

/*
 * A random case: 0 .. 2 keys, 1 .. 4 operands of random integer types and
 * magnitudes, 0 .. 2 NaN flag columns, 1 .. 3 programs within the bounds
 * (sometimes one repeated with other garbage), random parts and
 * aggregates, rows and batches, columns in a random order.
 */
void
dv_random_case(DvCase *dc, Rng *rng, int64_t max_rows)
{
	static const GaValueType int_types[] = {GA_TYPE_INT16, GA_TYPE_INT32, GA_TYPE_INT64};
	int			bits[MAX_COLUMNS] = {0};
	double		null_rate[MAX_COLUMNS] = {0};
	int64_t		domain[MAX_COLUMNS] = {0};
	int			operands[4],
				nan_cols[2];
	int			nkeys = (int) rng_pick(rng, (const double[]) {0, 1, 1, 2}, 4);
	int			noperands = (int) rng_range(rng, 1, 4);
	int			nnan = (int) rng_range(rng, 0, 2);
	int			nprograms = (int) rng_range(rng, 1, 3);
	int64_t		nrows = (int64_t) rng_pick(rng, (const double[]) {0, 1, 31, 33, 1000, 4097, 20000}, 7);
	Big			maxabs[MAX_COLUMNS];
	GaDerivedColumn programs[3];
	int			i,
				k;
	int64_t		r;

	if (nrows > max_rows)
		nrows = max_rows;
	if (nrows > DV_RANDOM_MAX_ROWS)
		nrows = DV_RANDOM_MAX_ROWS;
	for (k = 0; k < nkeys; k++)
	{
		int			col = dv_add_column(dc, int_types[rng_range(rng, 0, 2)]);

		domain[col] = (int64_t) rng_pick(rng, (const double[]) {1, 5, 100, 3000}, 4);
		null_rate[col] = rng_pick(rng, (const double[]) {0, 0.1}, 2);
		dc->c.key_columns[dc->c.nkeys++] = col;
	}
	for (i = 0; i < noperands; i++)
	{
		GaValueType type = int_types[rng_range(rng, 0, 2)];
		int			col = dv_add_column(dc, type);

		operands[i] = col;
		bits[col] = (int) rng_range(rng, 0, 8 * ga_type_width(type) - 1);
		null_rate[col] = rng_pick(rng, (const double[]) {0, 0, 0.05, 0.3}, 4);
	}
	for (i = 0; i < nnan; i++)
	{
		nan_cols[i] = dv_add_column(dc, GA_TYPE_NONE);
		/* the flag's rate of valid (NaN) rows is 1 - null_rate */
		null_rate[nan_cols[i]] = rng_pick(rng, (const double[]) {1, 0.99, 0.8, 0}, 4);
	}
	dv_gen_rows(dc, rng, nrows, bits, null_rate, domain);

	/* Programs within the bounds for the magnitudes the rows have. */
	for (i = 0; i < dc->c.ncolumns; i++)
	{
		big_from_i64(&maxabs[i], 0);
		for (r = 0; r < nrows; r++)
			if (dc->c.types[i] != GA_TYPE_NONE && !dc->c.isnull[i][r])
			{
				Big			v;

				big_from_i64(&v, load_int(dc->c.values[i], dc->c.types[i], r));
				v.neg = 0;
				if (big_cmp(&v, &maxabs[i]) > 0)
					maxabs[i] = v;
			}
	}
	for (k = 0; k < nprograms; k++)
	{
		GaDerivedColumn *p = &programs[k];
		int			final_bits = 0;
		int			tries;
		int			has_nan = 0;
		int			room = MAX_COLUMNS - dc->c.ncolumns;

		if (room > DV_MAX_DERIVED - dc->nderived)
			room = DV_MAX_DERIVED - dc->nderived;
		if (room <= 0)
			break;
		if (k > 0 && rng_chance(rng, 0.25))
		{
			/* the previous program again, with other garbage */
			*p = programs[k - 1];
			for (i = 0; i < p->nsteps; i++)
				if (p->steps[i].op != GA_EXPR_CONST)
					p->steps[i].constant = (int64_t) rng_next(rng);
			(void) dv_bound_bits(p, maxabs, &final_bits);
		}
		else
		{
			for (tries = 0; tries < DV_PROGRAM_TRIES; tries++)
			{
				dv_random_program(rng, p, operands, noperands, nan_cols, nnan);
				if (dv_bound_bits(p, maxabs, &final_bits) <= DV_MAX_BITS &&
					final_bits <= DV_LIMB_VALUE_BITS)
					break;
			}
			if (tries == DV_PROGRAM_TRIES)
			{
				dv_program(p);
				COL(p, operands[0], nnan > 0 ? nan_cols[0] : -1);
				final_bits = 64;
			}
		}
		for (i = 0; i < p->nsteps; i++)
			has_nan |= p->steps[i].op == GA_EXPR_COLUMN && p->steps[i].nan_column >= 0;
		dv_random_parts(dc, rng, p, final_bits <= DV_INT64_VALUE_BITS, has_nan, room);
	}
	if (rng_chance(rng, 0.7) || dc->c.naggs == 0)
		add_agg(&dc->c, GA_AGG_COUNT_ROWS, -1);
	for (i = 0; i < noperands; i++)
		if (rng_chance(rng, 0.2))
			add_agg(&dc->c, rng_chance(rng, 0.5) ? GA_AGG_SUM_INT : GA_AGG_COUNT, operands[i]);

	dc->c.batch_rows = (int64_t) rng_pick(rng, (const double[]) {1, 7, 32, 100, 1024, 8192}, 6);
	if (nrows / dc->c.batch_rows > 2000)
		dc->c.batch_rows = nrows / 2000 + 1;
	dc->c.estimated_groups = (int64_t) rng_pick(rng, (const double[]) {0, 1, 100, 100000}, 4);
	dv_permute(dc, rng);
}
