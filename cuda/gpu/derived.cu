/*-------------------------------------------------------------------------
 *
 * gpu/derived.cu
 *	  The GPU device's derived columns (the "Derived columns" part of
 *	  gpuagg_device.h), host side: which columns the device needs for them,
 *	  and their programs described for compute_derived_kernel
 *	  (gpu/kernels/hashagg_two_phase.cu) and uploaded once per
 *	  aggregation.  gpu/input.cu lays out the input buffer with the first,
 *	  gpu/hashagg.cu uploads with the second, and gpu/batch.cu launches the
 *	  kernel before the aggregation kernels of every batch or joined piece;
 *	  gpu/aggjoin_probe.cu gathers the operands like any column.
 *
 * A program is described only when one of its parts is read (by an
 * aggregate), once however many parts are taken from it (the plan of
 * validate.c groups derived columns by program).  Its COLUMN steps point
 * into the input buffer at the operand's values and validity bitmap and
 * at the NaN flag's bitmap, which are always there: a batch's column
 * without nulls gets its bitmap set on the device (gpu/input.cu), a
 * join's gather writes every bitmap it moves.  So the descriptions never
 * change between batches, and no derived column is ever sent.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <stdlib.h>
#include <string.h>

/*
 * Mark what the derived columns that are read need: the values and
 * validity of their operands and the validity of their NaN flags (and
 * note these as the derived kernel's inputs, whose bitmaps must always be
 * on the device).  Called by plan_layout after the keys and aggregates.
 */
void
ga_gpu_derived_mark_inputs(GpuAgg *agg)
{
	for (int d = 0; d < agg->derived->nderived; d++)
	{
		const GaDerivedColumn *dc = &agg->derived->derived[d];

		if (!agg->needs_values[dc->column] && !agg->needs_validity[dc->column])
			continue;
		for (int s = 0; s < dc->nsteps; s++)
		{
			const GaExprStep *step = &dc->steps[s];

			if (step->op != GA_EXPR_COLUMN)
				continue;
			agg->needs_values[step->column] = 1;
			agg->needs_validity[step->column] = 1;
			agg->derived_input[step->column] = 1;
			if (step->nan_column >= 0)
			{
				agg->needs_validity[step->nan_column] = 1;
				agg->derived_input[step->nan_column] = 1;
			}
		}
	}
}

/*
 * Describe the derived columns' programs for the kernel: every program
 * with a part that is read, its outputs (the read derived columns' slots
 * in the input buffer) and its steps (COLUMN operands and NaN flags read
 * in the input buffer, where their bitmaps always are); then upload them
 * once.  The host copy lives as long as the aggregation.
 */
int
ga_gpu_derived_upload(GpuAgg *agg, GaStatus *status)
{
	const GaDerivedPlan *plan = agg->derived;
	int			n = 0;

	agg->host_programs = (GaDevDerivedProgram *)
		calloc(plan->nprograms > 0 ? plan->nprograms : 1, sizeof(GaDevDerivedProgram));
	if (agg->host_programs == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory describing derived columns for the GPU");
	for (int p = 0; p < plan->nprograms; p++)
	{
		GaDevDerivedProgram *program = &agg->host_programs[n];
		const GaDerivedColumn *spec = &plan->derived[plan->program_spec[p]];

		for (int d = 0; d < plan->nderived; d++)
		{
			const GaDerivedColumn *dc = &plan->derived[d];
			GaDevDerivedOutput *out = &program->outputs[program->noutputs];

			if (plan->program_of[d] != p ||
				(!agg->needs_values[dc->column] && !agg->needs_validity[dc->column]))
				continue;
			if (agg->needs_values[dc->column])
				out->values = (long long *) (agg->dev_input + agg->dev_values_offset[dc->column]);
			if (agg->needs_validity[dc->column])
				out->validity = (unsigned int *) (agg->dev_input +
												  agg->dev_validity_offset[dc->column]);
			out->part = (int32_t) dc->part;
			out->limb = dc->limb;
			program->noutputs++;
		}
		if (program->noutputs == 0)
			continue;			/* no part of it is read */
		program->nsteps = spec->nsteps;
		for (int s = 0; s < spec->nsteps; s++)
		{
			const GaExprStep *step = &spec->steps[s];
			GaDevExprStep *ds = &program->steps[s];

			ds->op = (int32_t) step->op;
			ds->power = step->power;
			ds->constant = step->constant;
			if (step->op != GA_EXPR_COLUMN)
				continue;
			ds->type = (int32_t) agg->column_types[step->column];
			ds->values = agg->dev_input + agg->dev_values_offset[step->column];
			ds->validity = agg->dev_input + agg->dev_validity_offset[step->column];
			if (step->nan_column >= 0)
				ds->nan_validity = agg->dev_input + agg->dev_validity_offset[step->nan_column];
		}
		n++;
	}
	agg->nprograms = n;
	if (n == 0)
		return 1;
	if (!device_alloc((void **) &agg->dev_programs, (size_t) n * sizeof(GaDevDerivedProgram),
					  "the derived columns' programs", status))
		return 0;
	GPU_TRY(cudaMemcpyAsync(agg->dev_programs, agg->host_programs,
							(size_t) n * sizeof(GaDevDerivedProgram), cudaMemcpyHostToDevice,
							agg->stream),
			"copying the derived columns' programs to the GPU");
	return 1;
}
