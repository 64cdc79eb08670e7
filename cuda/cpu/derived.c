/*-------------------------------------------------------------------------
 *
 * cpu/derived.c
 *	  The CPU device's derived columns (gpuagg_device.h; cpu_device.h):
 *	  computed in each chunk of a batch before the CPU aggregation
 *	  (cpu/hashagg.c) assigns its groups, in the batch itself (their
 *	  submitted contents are ignored), each distinct program of the
 *	  request's derived-column plan (validate.h) once per row.
 *
 * The arithmetic is derived_expr.h's, the same the GPU kernels use, so
 * that both devices compute the same values.  An aggjoin piece
 * (cpu/aggjoin.c) has its operands gathered and is computed the same way.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "derived_expr.h"

/* An integer operand's value in a row (int16, int32 or int64, validated). */
static inline int64_t
cpu_operand_value(const GaColumn *col, int64_t row)
{
	switch (col->type)
	{
		case GA_TYPE_INT16:
			return ((const int16_t *) col->values)[row];
		case GA_TYPE_INT32:
			return ((const int32_t *) col->values)[row];
		default:
			return ((const int64_t *) col->values)[row];
	}
}

/*
 * Evaluate a derived column's program in one row of a batch: null when a
 * COLUMN operand is null, else NaN when an operand's NaN flag is valid,
 * else finite with the value in *value.
 */
static GaExprRow
cpu_derived_row(const GaDerivedColumn *program, const GaBatch *batch, int64_t row,
				GaInt192 *value)
{
	GaExprStack stack;
	int			nan = 0;
	int			s;

	stack.depth = 0;
	for (s = 0; s < program->nsteps; s++)
	{
		const GaExprStep *step = &program->steps[s];
		int64_t		operand = step->constant;

		if (step->op == GA_EXPR_COLUMN)
		{
			const GaColumn *col = &batch->columns[step->column];

			if (ga_column_is_null(col, row))
				return GA_EXPR_ROW_NULL;
			if (step->nan_column >= 0 &&
				!ga_column_is_null(&batch->columns[step->nan_column], row))
				nan = 1;
			operand = cpu_operand_value(col, row);
		}
		if (!nan)
			ga_expr_apply(&stack, step->op, step->power, operand);
	}
	if (nan)
		return GA_EXPR_ROW_NAN;
	*value = stack.v[0];
	return GA_EXPR_ROW_FINITE;
}

/*
 * Store derived column dc's part of row `row`: its value (0 when the part
 * is not valid) and its validity bit (NaN flags are valid in NaN rows,
 * values in finite ones).
 */
static inline void
cpu_derived_store(GaColumn *col, const GaDerivedColumn *dc, int64_t row, GaExprRow state,
				  GaInt192 value)
{
	int			valid = dc->part == GA_DERIVED_NAN ? state == GA_EXPR_ROW_NAN :
		state == GA_EXPR_ROW_FINITE;
	uint8_t		bit = (uint8_t) (1u << (row & 7));

	if (col->values != NULL)
		((int64_t *) col->values)[row] = valid ? ga_expr_part(value, dc->part, dc->limb) : 0;
	if (valid)
		col->validity[row >> 3] |= bit;
	else
		col->validity[row >> 3] &= (uint8_t) ~bit;
}

/*
 * Compute the derived columns of rows [base, base + n) of a batch, each
 * program once per row.  A column without storage (in a joined piece, a
 * derived column no aggregate reads) is skipped.
 */
void
ga_cpu_compute_derived(const GaDerivedPlan *plan, GaBatch *batch, int64_t base, int64_t n)
{
	int			p,
				d;
	int64_t		row;

	for (d = 0; d < plan->nderived; d++)
		if (batch->columns[plan->derived[d].column].validity != NULL)
			batch->columns[plan->derived[d].column].has_nulls = 1;
	for (p = 0; p < plan->nprograms; p++)
	{
		const GaDerivedColumn *program = &plan->derived[plan->program_spec[p]];
		int			stored = 0;

		for (d = 0; d < plan->nderived; d++)
			stored |= plan->program_of[d] == p &&
				batch->columns[plan->derived[d].column].validity != NULL;
		if (!stored)
			continue;
		for (row = base; row < base + n; row++)
		{
			GaInt192	value = {{0, 0, 0}};
			GaExprRow	state = cpu_derived_row(program, batch, row, &value);

			for (d = 0; d < plan->nderived; d++)
			{
				GaColumn   *col = &batch->columns[plan->derived[d].column];

				if (plan->program_of[d] == p && col->validity != NULL)
					cpu_derived_store(col, &plan->derived[d], row, state, value);
			}
		}
	}
}
