/*-------------------------------------------------------------------------
 *
 * agg_ref.c
 *	  The reference of every aggregation suite: a case's rows folded into
 *	  groups here, independently of cuda/, and compared with a device's
 *	  groups.
 *
 * The reference sorts all rows of a case by key tuple and folds each run of
 * equal keys; the device's groups are sorted the same way and the two
 * sorted lists are merged, so missing, extra and wrong groups all show.
 * Integer results must be exact.  Float sums may differ by the rounding of
 * a different order of additions: the bound used is Higham's
 * |computed - exact| <= gamma_n * sum|x| (gamma_n = n u / (1 - n u)), which
 * holds for every summation order, so a pass is never luck and a fail is a
 * real error.  Inputs that could overflow a partial sum are never summed.
 * MIN/MAX of floats must be bit-exact (NaN is the largest value, every NaN
 * equal; -0 is below +0, as ga_float64_to_ordered orders them).
 * MOMENTS and COMOMENTS: counts exact; the shift a finite value within the
 * group's range; sum(x) = n K + sum, sum((x - mean)^2) and the co-moment
 * checked against Welford's updates in long double, within the rounding
 * bound of sums of n terms of the shifted values (gamma_n times the sum of
 * their magnitudes, bounded through the reference's mean and |x|).
 *
 * Values of null rows are filled with garbage (NaN, extremes) that a device
 * must ignore.  MIN/MAX of a group without any non-null input is left
 * unchecked: the caller derives NULL from COUNT there.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Key tuples, sorted
 * ------------------------------------------------------------------------
 */
static int	sort_nkeys;

/* Order key tuples of nkeys keys: per key, non-null values ascending, then null. */
int
rowkey_compare(const RowKey *a, const RowKey *b, int nkeys)
{
	int			k;

	for (k = 0; k < nkeys; k++)
	{
		if (a->n[k] != b->n[k])
			return a->n[k] ? 1 : -1;
		if (a->n[k])
			continue;
		if (a->v[k] != b->v[k])
			return a->v[k] < b->v[k] ? -1 : 1;
	}
	return 0;
}

/* qsort's form of rowkey_compare, over sort_nkeys keys. */
static int
rowkey_cmp(const void *pa, const void *pb)
{
	return rowkey_compare(pa, pb, sort_nkeys);
}

/* Sort the case's rows by key tuple for the reference, and count groups. */
void
sort_reference(Case *c)
{
	int64_t		r;
	int			k;

	c->sorted = malloc(sizeof(RowKey) * (c->nrows > 0 ? c->nrows : 1));
	for (r = 0; r < c->nrows; r++)
	{
		RowKey	   *rk = &c->sorted[r];

		memset(rk, 0, sizeof(*rk));
		for (k = 0; k < c->nkeys; k++)
		{
			int			col = c->key_columns[k];

			rk->n[k] = c->isnull[col][r];
			rk->v[k] = rk->n[k] ? 0 : load_int(c->values[col], c->types[col], r);
		}
		rk->index = r;
	}
	sort_nkeys = c->nkeys;
	qsort(c->sorted, (size_t) c->nrows, sizeof(RowKey), rowkey_cmp);
	if (c->nkeys == 0)
		c->ngroups = 1;
	else
	{
		c->ngroups = 0;
		for (r = 0; r < c->nrows; r++)
			if (r == 0 || rowkey_cmp(&c->sorted[r - 1], &c->sorted[r]) != 0)
				c->ngroups++;
	}
}

/* ------------------------------------------------------------------------
 * The reference: fold one group's rows
 * ------------------------------------------------------------------------
 */
typedef struct RefAcc
{
	int64_t		rows;
	int64_t		nvalid;
	int64_t		ninf;
	int64_t		nnan;
	int64_t		npinf;
	int64_t		nninf;
	__int128	isum;
	double		fsum;			/* Neumaier-compensated sum of finite values */
	double		fcomp;
	double		fabs;			/* sum of |x| of finite values */
	int64_t		imin;
	int64_t		imax;
	double		fmin;
	double		fmax;
	/* MOMENTS (variable 0) and COMOMENTS (x, y): Welford in long double */
	int64_t		mn;				/* rows counted */
	int64_t		mnonfinite[2];
	long double mmean[2];		/* of the finite rows (all, when checked) */
	long double mm2[2];
	long double mcxy;
	double		mabs[2];		/* sum of |x| */
	double		mmin[2];		/* finite range */
	double		mmax[2];
} RefAcc;

/* Float order of the contract: NaN above everything, -0 below +0. */
static int
ref_float_less(double a, double b)
{
	if (isnan(a))
		return 0;
	if (isnan(b))
		return 1;
	if (a != b)
		return a < b;
	return signbit(a) && !signbit(b);
}

/*
 * Add one row to the reference of MOMENTS (one variable) or COMOMENTS (two;
 * rows with either null skipped): Welford's running mean and sums of
 * squared deviations and of cross products, in long double.
 */
static void
ref_add_moments(RefAcc *acc, const Case *c, const GaAggSpec *spec, int64_t row)
{
	int			nv = spec->op == GA_AGG_COMOMENTS ? 2 : 1;
	long double v[2];
	long double d[2];
	int			i;

	for (i = 0; i < nv; i++)
	{
		int			col = i == 0 ? spec->column : spec->column2;

		if (c->isnull[col][row])
			return;
		v[i] = load_float(c->values[col], c->types[col], row);
	}
	acc->mn++;
	for (i = 0; i < nv; i++)
	{
		if (!isfinite((double) v[i]))
		{
			acc->mnonfinite[i]++;
			continue;
		}
		if (acc->mn - acc->mnonfinite[i] == 1 || (double) v[i] < acc->mmin[i])
			acc->mmin[i] = (double) v[i];
		if (acc->mn - acc->mnonfinite[i] == 1 || (double) v[i] > acc->mmax[i])
			acc->mmax[i] = (double) v[i];
		acc->mabs[i] += fabs((double) v[i]);
	}
	if (acc->mnonfinite[0] > 0 || acc->mnonfinite[1] > 0)
		return;					/* only the counts are checked then */
	for (i = 0; i < nv; i++)
	{
		d[i] = v[i] - acc->mmean[i];
		acc->mmean[i] += d[i] / acc->mn;
		acc->mm2[i] += d[i] * (v[i] - acc->mmean[i]);
	}
	if (nv == 2)
		acc->mcxy += d[0] * (v[1] - acc->mmean[1]);
}

/* Add one row (of the case's row index) to the reference accumulator. */
static void
ref_add(RefAcc *acc, const Case *c, const GaAggSpec *spec, int64_t row)
{
	GaValueType type;

	if (spec->op == GA_AGG_MOMENTS || spec->op == GA_AGG_COMOMENTS)
	{
		ref_add_moments(acc, c, spec, row);
		return;
	}
	acc->rows++;
	if (spec->op == GA_AGG_COUNT_ROWS || c->isnull[spec->column][row])
		return;
	type = c->types[spec->column];
	acc->nvalid++;
	if (type == GA_TYPE_NONE)
		return;
	if (type_is_int(type))
	{
		int64_t		v = load_int(c->values[spec->column], type, row);

		acc->isum += v;
		if (acc->nvalid == 1 || v < acc->imin)
			acc->imin = v;
		if (acc->nvalid == 1 || v > acc->imax)
			acc->imax = v;
	}
	else
	{
		double		v = load_float(c->values[spec->column], type, row);

		if (isnan(v))
			acc->nnan++;
		else if (isinf(v))
		{
			acc->ninf++;
			if (v > 0)
				acc->npinf++;
			else
				acc->nninf++;
		}
		else
		{
			double		t = acc->fsum + v;

			if (fabs(acc->fsum) >= fabs(v))
				acc->fcomp += (acc->fsum - t) + v;
			else
				acc->fcomp += (v - t) + acc->fsum;
			acc->fsum = t;
			acc->fabs += fabs(v);
		}
		if (acc->nvalid == 1 || ref_float_less(v, acc->fmin))
			acc->fmin = v;
		if (acc->nvalid == 1 || ref_float_less(acc->fmax, v))
			acc->fmax = v;
	}
}

/* ------------------------------------------------------------------------
 * Comparing one device run with the reference
 * ------------------------------------------------------------------------
 */
/* Format a 128-bit integer in decimal. */
static const char *
i128_str(__int128 v, char *buf)
{
	char		tmp[48];
	int			n = 0,
				neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128) v : (unsigned __int128) v;
	char	   *p = buf;

	do
	{
		tmp[n++] = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	if (neg)
		*p++ = '-';
	while (n > 0)
		*p++ = tmp[--n];
	*p = '\0';
	return buf;
}

/* Format a key tuple for mismatch lines. */
static const char *
key_str(const RowKey *k, int nkeys, char *buf)
{
	char	   *p = buf;
	int			i;

	*p++ = '(';
	for (i = 0; i < nkeys; i++)
	{
		if (k->n[i])
			p += sprintf(p, "%sNULL", i ? "," : "");
		else
			p += sprintf(p, "%s%lld", i ? "," : "", (long long) k->v[i]);
	}
	*p++ = ')';
	*p = '\0';
	return buf;
}

/* Higham's gamma_n for unit roundoff u: bounds any order of n additions. */
static double
gamma_n(int64_t n, double u)
{
	double		nu = (double) n * u;

	return nu < 0.5 ? nu / (1.0 - nu) : INFINITY;
}

/* Whether a device float sum matches the reference for unit roundoff u. */
static int
float_sum_ok(const RefAcc *acc, double got, double u, double *expected)
{
	double		exact = acc->fsum + acc->fcomp;
	double		tol;

	*expected = exact;
	if (acc->nnan > 0 || (acc->npinf > 0 && acc->nninf > 0))
	{
		*expected = NAN;
		return isnan(got);
	}
	if (acc->npinf > 0 || acc->nninf > 0)
	{
		*expected = acc->npinf > 0 ? INFINITY : -INFINITY;
		return got == *expected;
	}
	if (!isfinite(got))
		return 0;
	tol = gamma_n(acc->nvalid + 1, u) * acc->fabs + 4 * DBL_EPSILON * fabs(exact);
	return fabs(got - exact) <= tol;
}

/* Whether two float min/max results are the same (bits, or both NaN). */
static int
float_same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return memcmp(&a, &b, sizeof(double)) == 0;
}

/*
 * Check one variable of device moments against the reference (variable i
 * of acc): count of non-finite values, and without any: the shift inside
 * the group's range, sum(x) and sum((x - mean)^2).  bound (set) is the sum
 * of squared shifted values, the scale of the co-moment's error.
 */
static void
check_moment_var(RunReport *rr, const char *what, const RefAcc *acc, int i, uint64_t n,
				 double shift, uint64_t nonfinite, double sum, double sumsq, double *bound)
{
	double		u = DBL_EPSILON / 2;
	long double shifted_mean;

	*bound = 0;
	if ((int64_t) nonfinite != acc->mnonfinite[i])
	{
		report(rr, "%s: %llu non-finite values, expected %lld", what,
			   (unsigned long long) nonfinite, (long long) acc->mnonfinite[i]);
		return;
	}
	if (n == 0)
		return;
	if (acc->mnonfinite[0] > 0 || acc->mnonfinite[1] > 0)
	{
		if (nonfinite > 0 && isfinite(sum))
			report(rr, "%s: sum %.17g is finite over non-finite values", what, sum);
		return;
	}
	if (!isfinite(shift) || shift < acc->mmin[i] || shift > acc->mmax[i])
	{
		report(rr, "%s: shift %.17g outside the group's values [%.17g, %.17g]", what,
			   shift, acc->mmin[i], acc->mmax[i]);
		return;
	}
	{
		double		total = (double) n * shift + sum;
		long double exact = acc->mmean[i] * (long double) n;
		double		tol = 4 * gamma_n((int64_t) n + 3, u) *
			(acc->mabs[i] + (double) n * fabs(shift)) + 1e-300;

		if (fabsl((long double) total - exact) > tol)
			report(rr, "%s: sum(x) = n K + sum = %.17g, expected %.17Lg (tolerance %.3g)",
				   what, total, exact, tol);
	}
	shifted_mean = acc->mmean[i] - shift;
	*bound = (double) (acc->mm2[i] + (long double) n * shifted_mean * shifted_mean);
	{
		double		m2 = sumsq - sum * sum / (double) n;
		double		tol = 8 * gamma_n((int64_t) n + 4, u) * *bound + 1e-300;

		if (!(fabsl((long double) m2 - acc->mm2[i]) <= tol))
			report(rr, "%s: sum((x - mean)^2) = %.17g, expected %.17Lg (tolerance %.3g)",
				   what, m2, acc->mm2[i], tol);
	}
}

/* Compare a group's MOMENTS or COMOMENTS (agg a, result entry g) with the reference. */
static void
compare_moments(const Case *c, const GaAggResult *res, int64_t g, int a,
				const RefAcc *acc, const char *key, RunReport *rr)
{
	const GaAggSpec *spec = &c->aggs[a];
	char		what[200];
	double		bx,
				by;

	if (spec->op == GA_AGG_MOMENTS)
	{
		const GaMoments *m = &((const GaMoments *) res->values[a])[g];

		snprintf(what, sizeof(what), "group %s agg %d (moments col %d)", key, a, spec->column);
		if ((int64_t) m->n != acc->mn)
			report(rr, "%s: n %llu, expected %lld", what, (unsigned long long) m->n,
				   (long long) acc->mn);
		else
			check_moment_var(rr, what, acc, 0, m->n, m->shift, m->nonfinite,
							 m->sum + m->sum_err, m->sumsq + m->sumsq_err, &bx);
		return;
	}
	{
		const GaComoments *m = &((const GaComoments *) res->values[a])[g];
		double		u = DBL_EPSILON / 2;

		snprintf(what, sizeof(what), "group %s agg %d (comoments cols %d, %d)", key, a,
				 spec->column, spec->column2);
		if ((int64_t) m->n != acc->mn)
		{
			report(rr, "%s: n %llu, expected %lld", what, (unsigned long long) m->n,
				   (long long) acc->mn);
			return;
		}
		check_moment_var(rr, what, acc, 0, m->n, m->shift[0], m->nonfinite[0],
						 m->sum[0] + m->sum_err[0], m->sumsq[0] + m->sumsq_err[0], &bx);
		check_moment_var(rr, what, acc, 1, m->n, m->shift[1], m->nonfinite[1],
						 m->sum[1] + m->sum_err[1], m->sumsq[1] + m->sumsq_err[1], &by);
		if (m->n > 0 && acc->mnonfinite[0] == 0 && acc->mnonfinite[1] == 0)
		{
			long double sx = (long double) m->sum[0] + m->sum_err[0];
			long double sy = (long double) m->sum[1] + m->sum_err[1];
			double		cxy = (double) ((long double) m->sumxy + m->sumxy_err - sx * sy / m->n);
			double		tol = 8 * gamma_n((int64_t) m->n + 4, u) * sqrt(bx * by) + 1e-300;

			if (!(fabsl((long double) cxy - acc->mcxy) <= tol))
				report(rr, "%s: sum((x - mean_x)(y - mean_y)) = %.17g, expected %.17Lg (tolerance %.3g)",
					   what, cxy, acc->mcxy, tol);
		}
	}
}

/* Compare aggregate results of device group g with the reference group. */
static void
compare_group(const Case *c, const GaAggResult *res, int64_t g,
			  const RefAcc *accs, const RowKey *key, RunReport *rr)
{
	char		kb[160];
	int			a;

	for (a = 0; a < c->naggs; a++)
	{
		const GaAggSpec *spec = &c->aggs[a];
		const RefAcc *acc = &accs[a];
		const void *vals = res->values[a];
		GaValueType type = spec->column >= 0 ? c->types[spec->column] : GA_TYPE_NONE;

		switch (spec->op)
		{
			case GA_AGG_COUNT_ROWS:
			case GA_AGG_COUNT:
			case GA_AGG_COUNT_NONFINITE:
				{
					int64_t		got = ((const int64_t *) vals)[g];
					int64_t		want = spec->op == GA_AGG_COUNT_ROWS ? acc->rows :
						spec->op == GA_AGG_COUNT ? acc->nvalid : acc->ninf + acc->nnan;

					if (got != want)
						report(rr, "group %s agg %d (op %d col %d %s): count %lld, expected %lld",
							   key_str(key, c->nkeys, kb), a, spec->op, spec->column,
							   type_name(type), (long long) got, (long long) want);
					break;
				}
			case GA_AGG_SUM_INT:
				{
					GaInt128	r = ((const GaInt128 *) vals)[g];
					__int128	got = (__int128) (((unsigned __int128) (uint64_t) r.hi << 64) | r.lo);
					char		b1[48],
								b2[48];

					if (got != acc->isum)
						report(rr, "group %s agg %d (sum_int col %d %s): %s, expected %s",
							   key_str(key, c->nkeys, kb), a, spec->column, type_name(type),
							   i128_str(got, b1), i128_str(acc->isum, b2));
					break;
				}
			case GA_AGG_SUM_FLOAT32:
			case GA_AGG_SUM_FLOAT64:
				{
					double		got,
								want,
								u;

					if (spec->op == GA_AGG_SUM_FLOAT32)
						got = ((const float *) vals)[g], u = FLT_EPSILON / 2;
					else
						got = ((const double *) vals)[g], u = DBL_EPSILON / 2;
					if (!float_sum_ok(acc, got, u, &want))
						report(rr, "group %s agg %d (sum_float%s col %d %s over %lld values): %.17g, expected %.17g (sum|x| %.6g)",
							   key_str(key, c->nkeys, kb), a,
							   spec->op == GA_AGG_SUM_FLOAT32 ? "32" : "64", spec->column,
							   type_name(type), (long long) acc->nvalid, got, want, acc->fabs);
					break;
				}
			case GA_AGG_MIN:
			case GA_AGG_MAX:
				{
					int			is_min = spec->op == GA_AGG_MIN;

					if (acc->nvalid == 0)
						break;	/* the caller makes it NULL from COUNT */
					if (type_is_int(type))
					{
						int64_t		got = ((const int64_t *) vals)[g];
						int64_t		want = is_min ? acc->imin : acc->imax;

						if (got != want)
							report(rr, "group %s agg %d (%s col %d %s): %lld, expected %lld",
								   key_str(key, c->nkeys, kb), a, is_min ? "min" : "max",
								   spec->column, type_name(type), (long long) got, (long long) want);
					}
					else
					{
						double		got = ((const double *) vals)[g];
						double		want = is_min ? acc->fmin : acc->fmax;

						if (!float_same(got, want))
							report(rr, "group %s agg %d (%s col %d %s): %.17g, expected %.17g",
								   key_str(key, c->nkeys, kb), a, is_min ? "min" : "max",
								   spec->column, type_name(type), got, want);
					}
					break;
				}
			case GA_AGG_MOMENTS:
			case GA_AGG_COMOMENTS:
				compare_moments(c, res, g, a, acc, key_str(key, c->nkeys, kb), rr);
				break;
		}
	}
}

/*
 * A finished aggregation's groups as key tuples (index: the group; a null
 * key's value 0), sorted by rowkey_compare.  The caller frees them.
 */
RowKey *
sorted_result_keys(const GaAggResult *res, int nkeys)
{
	RowKey	   *dev = malloc(sizeof(RowKey) * (res->ngroups > 0 ? res->ngroups : 1));
	int64_t		g;
	int			k;

	for (g = 0; g < res->ngroups; g++)
	{
		memset(&dev[g], 0, sizeof(RowKey));
		for (k = 0; k < nkeys; k++)
		{
			dev[g].n[k] = res->key_isnull[k][g] ? 1 : 0;
			dev[g].v[k] = dev[g].n[k] ? 0 : res->key_values[k][g];
		}
		dev[g].index = g;
	}
	sort_nkeys = nkeys;
	qsort(dev, (size_t) (res->ngroups > 0 ? res->ngroups : 0), sizeof(RowKey), rowkey_cmp);
	return dev;
}

/*
 * Check a finished aggregation's groups against the reference: sort the
 * device's groups by key, then merge them with the sorted reference rows.
 */
void
check_result(const Case *c, const GaAggResult *res, RunReport *rr)
{
	RowKey	   *dev;
	RefAcc	   *accs;
	int64_t		g,
				r,
				dg = 0;
	int			a;
	char		kb[160];

	if (res->nkeys != c->nkeys || res->naggs != c->naggs)
	{
		report(rr, "result has %d keys and %d aggregates, expected %d and %d",
			   res->nkeys, res->naggs, c->nkeys, c->naggs);
		return;
	}
	if (res->ngroups != c->ngroups)
		report(rr, "%lld groups, expected %lld", (long long) res->ngroups,
			   (long long) c->ngroups);
	if (res->ngroups < 0)
		return;

	dev = sorted_result_keys(res, c->nkeys);
	accs = malloc(sizeof(RefAcc) * (c->naggs > 0 ? c->naggs : 1));
	sort_nkeys = c->nkeys;
	for (g = 1; g < res->ngroups; g++)
		if (rowkey_cmp(&dev[g - 1], &dev[g]) == 0)
			report(rr, "group %s appears twice", key_str(&dev[g], c->nkeys, kb));

	/* Walk reference groups (runs of equal keys) and device groups together. */
	r = 0;
	while (r < c->nrows || (c->nkeys == 0 && r == 0))
	{
		int64_t		end = r;
		const RowKey *key = c->nrows > 0 ? &c->sorted[r] : NULL;
		RowKey		empty;
		int			cmp;

		if (key == NULL)
		{
			memset(&empty, 0, sizeof(empty));
			key = &empty;
		}
		while (end < c->nrows && rowkey_cmp(&c->sorted[end], key) == 0)
			end++;

		while (dg < res->ngroups && (cmp = rowkey_cmp(&dev[dg], key)) < 0)
		{
			report(rr, "extra group %s", key_str(&dev[dg], c->nkeys, kb));
			dg++;
		}
		if (dg >= res->ngroups || rowkey_cmp(&dev[dg], key) != 0)
			report(rr, "missing group %s", key_str(key, c->nkeys, kb));
		else
		{
			memset(accs, 0, sizeof(RefAcc) * (c->naggs > 0 ? c->naggs : 1));
			for (a = 0; a < c->naggs; a++)
			{
				int64_t		i;

				for (i = r; i < end; i++)
					ref_add(&accs[a], c, &c->aggs[a], c->sorted[i].index);
			}
			compare_group(c, res, dev[dg].index, accs, key, rr);
			dg++;
		}
		if (end == r)
			break;				/* the one group of an empty plain aggregate */
		r = end;
	}
	for (; dg < res->ngroups; dg++)
		report(rr, "extra group %s", key_str(&dev[dg], c->nkeys, kb));
	free(dev);
	free(accs);
}
