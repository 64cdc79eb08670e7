/*-------------------------------------------------------------------------
 *
 * finalize/moments.c
 *	  Variance and standard deviation of floats, and corr, covar_pop,
 *	  covar_samp and the regr_* family, finalized by PostgreSQL's own final
 *	  functions from the moments a device computed.
 *
 * PostgreSQL accumulates these aggregates in a float8 array: float8_accum()
 * keeps {N, Sx, Sxx} and float8_regr_accum() {N, Sx, Sxx, Sy, Syy, Sxy},
 * where Sx is the plain sum of x and Sxx = sum((x - mean)^2) is updated with
 * the Youngs-Cramer formulas; its final functions (float8_var_samp,
 * float8_corr, float8_regr_slope, ...) read only that array.  The device
 * instead sums deviations from a per-group shift K (GaMoments, GaComoments
 * in gpuagg_device.h), from which the same quantities follow:
 *
 *		Sx	= N K + sum(x - K)
 *		Sxx = sum((x - K)^2) - sum(x - K)^2 / N		(never below 0)
 *		Sxy = sum((x - Kx)(y - Ky)) - sum(x - Kx) sum(y - Ky) / N
 *
 * The device's sums are compensated (each carries its rounding error) and
 * the subtractions run in long double, so these are accurate to the last
 * bits whatever the data's offset, also for a covariance near zero; they
 * may differ from PostgreSQL's in the last bits, as PostgreSQL's
 * own serial and parallel plans do (the parallel combine,
 * float8_combine(), is yet another formula).  So this file rebuilds the
 * array and calls the aggregate's final function on it: NULL for too few
 * rows, the sqrt, the divisions and their edge cases stay PostgreSQL's.
 *
 * The special values follow float8_accum() and float8_regr_accum(): once
 * an x is infinite or NaN, Sxx (and Sxy) is NaN and Sx follows IEEE
 * addition.
 *
 * The overflow error.  float8_accum() raises "value out of range: overflow"
 * when, from finite values, Sx or Sxx becomes infinite.  Each step squares
 * tmp = N x - Sx = N (x - mean) (N and the mean of the values so far, x
 * included), so the error comes as soon as some step's N |x - mean| exceeds
 * sqrt(DBL_MAX), long before Sxx itself would overflow, and which step
 * that is depends on the order of the rows.  For n finite values whose
 * squared deviations from their mean add up to M2:
 *	- some order raises it when n M2 > DBL_MAX: the value farthest from the
 *	  mean (squared deviation at least M2 / n) coming last has
 *	  tmp^2 = n^2 (x - mean)^2 >= n M2;
 *	- no order escapes it when the sum overflows; else, when n M2 <= DBL_MAX,
 *	  the order whose k-th value is, of the first k, the one nearest their
 *	  mean keeps every step's tmp^2 <= k M2_k <= n M2 and raises nothing.
 * So gpuagg raises the error exactly when n M2 > DBL_MAX or a sum
 * overflows: on every group that raises it in PostgreSQL whatever the order
 * of the rows, on none that raises it in no order, and between the two
 * (where PostgreSQL's outcome depends on the order) on some.  The device's
 * sums of deviations from the shift K, one of the values, overflow only on
 * groups that some order makes raise too.  A group with an infinite or NaN
 * value raises nothing: that value coming first makes Sx and Sxx
 * non-finite, after which float8_accum() never raises.
 *
 * avg(float4/float8) keeps no moments on the device, only the sum, the
 * count and the range r = max - min; since M2 <= n r^2 / 4 and some value
 * lies at least r / 2 from the mean, n r > 2 sqrt(DBL_MAX) draws the line
 * inside the same band (GpuAggCheckFloatSpread).  float8_regr_accum()
 * checks x and y each on its own (an infinite y spares x, not y), and an
 * overflowing Sxy implies an overflowing Sxx or Syy.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/float.h"

#include "finalize/stats.h"

/*
 * Raise float8_accum()'s overflow error for n finite values between min
 * and max (see the file's comment): when n (max - min) > 2 sqrt(DBL_MAX).
 */
void
GpuAggCheckFloatSpread(double n, double min, double max)
{
	if ((long double) n * ((long double) max - min) > 2 * sqrtl(DBL_MAX))
		float_overflow_error();
}

/*
 * Sx and Sxx of one variable from its compensated shifted sums (n > 0):
 * PostgreSQL's NaN for any non-finite input, its overflow error for finite
 * inputs when n Sxx > DBL_MAX or a sum overflowed (see the file's comment;
 * a NaN sum comes from partial sums that overflowed the opposite ways).
 * The subtraction runs in long double (64 significant bits on x86-64): the
 * two terms may be far larger than their difference when the shift is far
 * from the mean.
 */
static void
moments_sx_sxx(double n, double shift, uint64 nonfinite, double sum, double sum_err,
			   double sumsq, double sumsq_err, double *sx, double *sxx)
{
	long double s = (long double) sum + sum_err;
	long double m2;

	*sx = (double) ((long double) n * shift + s);
	if (nonfinite > 0)
	{
		*sxx = get_float8_nan();
		return;
	}
	if (!isfinite(*sx) || !isfinite(sumsq) || !isfinite(sum))
		float_overflow_error();
	m2 = (long double) sumsq + sumsq_err - s * s / n;
	if (m2 * n > DBL_MAX)
		float_overflow_error();
	*sxx = m2 > 0 ? (double) m2 : 0;	/* a sum of squares is never negative */
}

/*
 * Call final function fn on a float8 transition array of nvalues entries,
 * as nodeAgg.c would at the end of a group; NULL results pass through.
 */
static Datum
call_final_function(FmgrInfo *fn, const double *values, int nvalues, bool *isnull)
{
	Datum		elems[6];
	ArrayType  *array;
	LOCAL_FCINFO(fcinfo, 1);
	Datum		result;
	int			i;

	for (i = 0; i < nvalues; i++)
		elems[i] = Float8GetDatum(values[i]);
	array = construct_array(elems, nvalues, FLOAT8OID, sizeof(float8),
							FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	InitFunctionCallInfoData(*fcinfo, fn, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = PointerGetDatum(array);
	fcinfo->args[0].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	return result;
}

/*
 * The result of a moments aggregate (GPUAGG_FLOAT_MOMENTS,
 * GPUAGG_FLOAT_COMOMENTS, GPUAGG_REGR_COUNT) for one group.
 */
Datum
GpuAggMomentsResult(const GpuAggOutput *output, const GaAggResult *result,
					int64 group, bool *isnull)
{
	double		state[6] = {0, 0, 0, 0, 0, 0};

	*isnull = false;
	if (output->kind == GPUAGG_FLOAT_MOMENTS)
	{
		const GaMoments *m = &((const GaMoments *) result->values[output->op_value])[group];

		state[0] = (double) m->n;
		if (m->n > 0)
			moments_sx_sxx(state[0], m->shift, m->nonfinite, m->sum, m->sum_err,
						   m->sumsq, m->sumsq_err, &state[1], &state[2]);
		return call_final_function(output->final_fn, state, 3, isnull);
	}
	else
	{
		const GaComoments *m = &((const GaComoments *) result->values[output->op_value])[group];

		if (output->kind == GPUAGG_REGR_COUNT)
			return Int64GetDatum((int64) m->n);
		state[0] = (double) m->n;
		if (m->n > 0)
		{
			moments_sx_sxx(state[0], m->shift[0], m->nonfinite[0], m->sum[0], m->sum_err[0],
						   m->sumsq[0], m->sumsq_err[0], &state[1], &state[2]);
			moments_sx_sxx(state[0], m->shift[1], m->nonfinite[1], m->sum[1], m->sum_err[1],
						   m->sumsq[1], m->sumsq_err[1], &state[3], &state[4]);
			if (m->nonfinite[0] > 0 || m->nonfinite[1] > 0)
				state[5] = get_float8_nan();
			else
			{
				long double sx = (long double) m->sum[0] + m->sum_err[0];
				long double sy = (long double) m->sum[1] + m->sum_err[1];

				if (!isfinite(m->sumxy))
					float_overflow_error();
				state[5] = (double) ((long double) m->sumxy + m->sumxy_err - sx * sy / m->n);
			}
		}
		return call_final_function(output->final_fn, state, 6, isnull);
	}
}
