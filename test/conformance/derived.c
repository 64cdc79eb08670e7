/*-------------------------------------------------------------------------
 *
 * derived.c
 *	  Device conformance test of derived columns (the "Derived columns"
 *	  part of gpuagg_device.h): aggregations whose requests name derived
 *	  columns, computed by the device from integer operands, go to every
 *	  device run (the CPU, and the GPU under each strategy), and the groups
 *	  that come back are checked against a reference computed here, with
 *	  big integers of its own (derived_ref.c), independently of cuda/.
 *
 * The reference.  A case is an ordinary Case (conformance.h) whose
 * derived columns hold the values the reference computes for every row
 * (a limb, the value itself, or the NaN flag, with the null and NaN
 * rules), so that check_result checks the device's groups exactly as for
 * submitted columns: SUM_INT, COUNT, MIN and MAX of the parts.  The
 * batches carry garbage and false nulls in the derived columns, which the
 * device must ignore, and the request's array of derived columns is
 * scribbled over and freed right after ga_agg_create.  Where a program's
 * four limbs are all summed, the device's limb sums of every group,
 * weighted by 2^(42 k), must add up to the exact sum of the group's
 * values.
 *
 * Cases (derived_cases.c).  Fixed ones first, with answers known from
 * outside the reference, checked against the reference's values row by
 * row and against the device's reconstructed total; then random ones;
 * then the aggjoin cases (derived_join.c); before all, the API checks
 * (derived_api.c).
 *
 *-------------------------------------------------------------------------
 */
#include "derived.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const dv_part_names[] = {"limb", "int64", "nan"};

/* ------------------------------------------------------------------------
 * Building a case
 * ------------------------------------------------------------------------
 */

/* Add a column of a type to a case (rows come with dv_alloc_rows). */
int
dv_add_column(DvCase *dc, GaValueType type)
{
	int			col = dc->c.ncolumns++;

	dc->c.types[col] = type;
	return col;
}

/*
 * Allocate nrows rows (zeros, no nulls) of every column that has none yet
 * (so that columns added later get theirs by a second call).
 */
void
dv_alloc_rows(DvCase *dc, int64_t nrows)
{
	Case	   *c = &dc->c;
	int			col;

	c->nrows = nrows;
	for (col = 0; col < c->ncolumns; col++)
	{
		int			width = ga_type_width(c->types[col]);

		if (c->isnull[col] != NULL)
			continue;
		c->values[col] = calloc(nrows > 0 ? nrows : 1, width > 0 ? width : 1);
		c->isnull[col] = calloc(nrows > 0 ? nrows : 1, 1);
	}
}

/*
 * Add a derived column taking `part` (and `limb`) of program's expression:
 * a new column (int64, or validity-only for the NaN flag) that the
 * reference fills (dv_fill_derived).  Returns the column.
 */
int
dv_add_derived(DvCase *dc, const GaDerivedColumn *program, GaDerivedPart part, int limb)
{
	GaDerivedColumn *d;
	int			col;

	if (dc->nderived >= DV_MAX_DERIVED || dc->c.ncolumns >= MAX_COLUMNS)
	{
		printf("derived: a case has more columns than a Case holds (a bug of the test)\n");
		exit(2);
	}
	d = &dc->derived[dc->nderived++];
	col = dv_add_column(dc, part == GA_DERIVED_NAN ? GA_TYPE_NONE : GA_TYPE_INT64);

	*d = *program;
	d->column = col;
	d->part = part;
	d->limb = part == GA_DERIVED_LIMB ? limb : 0;
	dc->is_derived[col] = 1;
	return col;
}

/* Whether two derived columns have the same program (unused fields aside). */
static int
dv_same_program(const GaDerivedColumn *a, const GaDerivedColumn *b)
{
	int			s;

	if (a->nsteps != b->nsteps)
		return 0;
	for (s = 0; s < a->nsteps; s++)
	{
		const GaExprStep *x = &a->steps[s];
		const GaExprStep *y = &b->steps[s];

		if (x->op != y->op ||
			(x->op == GA_EXPR_COLUMN && (x->column != y->column || x->nan_column != y->nan_column)) ||
			(x->op == GA_EXPR_CONST && x->constant != y->constant) ||
			(x->op == GA_EXPR_SCALE && x->power != y->power))
			return 0;
	}
	return 1;
}

/*
 * Fill every derived column of the case with the reference's parts (after
 * the other columns and rows are final): a part is null where the
 * expression is null, and where it is NaN unless it is the NaN flag.
 */
void
dv_fill_derived(DvCase *dc)
{
	Case	   *c = &dc->c;
	int64_t		row;
	int			d;

	dv_alloc_rows(dc, c->nrows);
	for (d = 0; d < dc->nderived; d++)
		c->has_nulls[dc->derived[d].column] = 0;
	for (row = 0; row < c->nrows; row++)
	{
		for (d = 0; d < dc->nderived; d++)
		{
			const GaDerivedColumn *dd = &dc->derived[d];
			int			col = dd->column;
			Big			v;
			int			bits = 0;
			RefState	state = ref_eval(dd, c, row, &v, &bits);
			int			valid = dd->part == GA_DERIVED_NAN ? state == REF_NAN : state == REF_FINITE;

			if (state == REF_FINITE &&
				(bits > DV_MAX_BITS ||
				 big_bits(&v) > (dd->part == GA_DERIVED_INT64 ? DV_INT64_VALUE_BITS :
								 dd->part == GA_DERIVED_LIMB ? DV_LIMB_VALUE_BITS :
								 DV_MAX_BITS)))
			{
				/* a bug of this test, not of a device: say so loudly */
				printf("derived: a case breaks the bounds in row %lld (derived %d, part %d: %d bits on the way, %d at the end)\n",
					   (long long) row, d, (int) dd->part, bits, big_bits(&v));
				exit(2);
			}
			c->isnull[col][row] = (uint8_t) !valid;
			if (!valid)
				c->has_nulls[col] = 1;
			if (dd->part != GA_DERIVED_NAN)
				((int64_t *) c->values[col])[row] = valid ? ref_part(&v, dd->part, dd->limb) :
					INT64_C(0x5a5a5a5a5a5a5a5a);
		}
	}
}

/* Describe a case in one line: columns, derived columns, batches. */
void
dv_describe(DvCase *dc, const char *label)
{
	const Case *c = &dc->c;
	char	   *d = dc->desc;
	char	   *end = dc->desc + sizeof(dc->desc) - 80;
	int			i;

	d += sprintf(d, "%s rows=%lld keys=%d cols=[", label, (long long) c->nrows, c->nkeys);
	for (i = 0; i < c->ncolumns && d < end; i++)
		d += sprintf(d, "%s%s%s", i ? "," : "", dc->is_derived[i] ? "=" : "",
					 type_name(c->types[i]));
	d += sprintf(d, "] derived=[");
	for (i = 0; i < dc->nderived && d < end; i++)
		d += sprintf(d, "%s%d:%s%d/%dsteps", i ? "," : "", dc->derived[i].column,
					 dv_part_names[dc->derived[i].part],
					 dc->derived[i].part == GA_DERIVED_LIMB ? dc->derived[i].limb : 0,
					 dc->derived[i].nsteps);
	sprintf(d, "] batch=%lldx%d est=%lld aggs=%d", (long long) c->batch_rows, c->nbatches,
			(long long) c->estimated_groups, c->naggs);
}

/* Free a case's data. */
static void
dv_free_case(DvCase *dc)
{
	free_case(&dc->c);
}

/* ------------------------------------------------------------------------
 * Checks beyond check_result
 * ------------------------------------------------------------------------
 */

/* The number of keys dv_key_qsort compares. */
static int	dv_sort_nkeys;

/* bsearch's form of rowkey_compare (the order sorted_result_keys sorts in). */
static int
dv_key_qsort(const void *a, const void *b)
{
	return rowkey_compare(a, b, dv_sort_nkeys);
}

/*
 * Whether derived column d0 (limb 0) has limbs 1 .. 3 of the same program
 * too, each summed by a SUM_INT: then sum_aggs[k] is limb k's aggregate.
 */
static int
dv_full_limb_set(const DvCase *dc, int d0, int *sum_aggs)
{
	const GaDerivedColumn *base = &dc->derived[d0];
	int			k,
				d,
				a;

	if (base->part != GA_DERIVED_LIMB || base->limb != 0)
		return 0;
	for (k = 0; k < 4; k++)
	{
		sum_aggs[k] = -1;
		for (d = 0; d < dc->nderived && sum_aggs[k] < 0; d++)
		{
			const GaDerivedColumn *x = &dc->derived[d];

			if (x->part != GA_DERIVED_LIMB || x->limb != k || !dv_same_program(x, base))
				continue;
			for (a = 0; a < dc->c.naggs; a++)
				if (dc->c.aggs[a].op == GA_AGG_SUM_INT && dc->c.aggs[a].column == x->column)
				{
					sum_aggs[k] = a;
					break;
				}
		}
		if (sum_aggs[k] < 0)
			return 0;
	}
	return 1;
}

/* The exact value of group g's limb sums: sum over k of sum_k * 2^(42 k). */
static void
dv_reconstruct(const GaAggResult *res, int64_t g, const int *sum_aggs, Big *total)
{
	int			k;

	big_from_i64(total, 0);
	for (k = 0; k < 4; k++)
	{
		GaInt128	r = ((const GaInt128 *) res->values[sum_aggs[k]])[g];
		__int128	s = (__int128) (((unsigned __int128) (uint64_t) r.hi << 64) | r.lo);
		Big			part;

		big_from_i128(&part, s);
		big_shl(&part, &part, 42 * k);
		big_add(total, total, &part);
	}
}

/*
 * For every program whose four limbs are summed: the device's limb sums of
 * every group, weighted by 2^(42 k), must be the exact sum of the group's
 * finite values (missing and extra groups are check_result's to report).
 */
void
dv_check_limb_sums(const DvCase *dc, const GaAggResult *res, RunReport *rr)
{
	const Case *c = &dc->c;
	RowKey	   *dev;
	int			sum_aggs[4];
	int			d0;

	if (res->ngroups < 0 || res->nkeys != c->nkeys || res->naggs != c->naggs)
		return;
	dev = sorted_result_keys(res, c->nkeys);
	dv_sort_nkeys = c->nkeys;

	for (d0 = 0; d0 < dc->nderived; d0++)
	{
		int64_t		r = 0;

		if (!dv_full_limb_set(dc, d0, sum_aggs))
			continue;
		while (r < c->nrows || (c->nkeys == 0 && r == 0))
		{
			RowKey		empty;
			const RowKey *key = c->nrows > 0 ? &c->sorted[r] : NULL;
			const RowKey *found;
			int64_t		end = r,
						i;
			Big			exact,
						got;
			char		b1[200],
						b2[200];

			if (key == NULL)
			{
				memset(&empty, 0, sizeof(empty));
				key = &empty;
			}
			while (end < c->nrows && rowkey_compare(&c->sorted[end], key, c->nkeys) == 0)
				end++;
			big_from_i64(&exact, 0);
			for (i = r; i < end; i++)
			{
				Big			v;
				int			bits;

				if (ref_eval(&dc->derived[d0], c, c->sorted[i].index, &v, &bits) == REF_FINITE)
					big_add(&exact, &exact, &v);
			}
			found = bsearch(key, dev, (size_t) res->ngroups, sizeof(RowKey), dv_key_qsort);
			if (found != NULL)
			{
				dv_reconstruct(res, found->index, sum_aggs, &got);
				if (!big_eq(&got, &exact))
					report(rr, "derived column %d: the limb sums of group %lld add up to %s, expected %s",
						   d0, (long long) found->index, big_str(&got, b1, sizeof(b1)),
						   big_str(&exact, b2, sizeof(b2)));
			}
			if (end == r)
				break;
			r = end;
		}
	}
	free(dev);
}

/*
 * The known answers of a fixed case: the reference's value of each known
 * row (which checks the reference itself), and the device's limb sums of
 * the one group against the known total.
 */
static void
dv_check_known(const DvCase *dc, const GaAggResult *res, RunReport *rr)
{
	const GaDerivedColumn *spec = &dc->derived[dc->known_spec];
	int			sum_aggs[4];
	char		buf[200];
	int			i,
				d;

	for (i = 0; i < dc->nknown; i++)
	{
		Big			v;
		int			bits;
		RefState	state = ref_eval(spec, &dc->c, i, &v, &bits);
		const char *text = state == REF_NULL ? "null" : state == REF_NAN ? "nan" :
			big_str(&v, buf, sizeof(buf));

		if (strcmp(text, dc->known_rows[i]) != 0)
			report(rr, "the reference gives %s in row %d, the known answer is %s (a bug of the test)",
				   text, i, dc->known_rows[i]);
	}
	if (dc->known_total == NULL || dc->c.nkeys != 0 || res->ngroups != 1)
		return;
	for (d = 0; d < dc->nderived; d++)
		if (dv_same_program(&dc->derived[d], spec) && dv_full_limb_set(dc, d, sum_aggs))
		{
			Big			got;

			dv_reconstruct(res, 0, sum_aggs, &got);
			big_str(&got, buf, sizeof(buf));
			if (strcmp(buf, dc->known_total) != 0)
				report(rr, "the limb sums add up to %s, the known total is %s", buf,
					   dc->known_total);
			return;
		}
	report(rr, "a known total without its four limbs summed (a bug of the test)");
}

/* ------------------------------------------------------------------------
 * Running a case on a device
 * ------------------------------------------------------------------------
 */

/*
 * Fill a batch with rows [start, start + n): the case's columns, and
 * garbage with false nulls in the derived columns, which the device must
 * ignore.
 */
static void
dv_fill_batch(const DvCase *dc, GaBatch *b, int64_t start, int64_t n)
{
	const Case *c = &dc->c;
	int			i;
	int64_t		r;

	for (i = 0; i < c->ncolumns; i++)
	{
		GaColumn   *col = &b->columns[i];
		int			width = ga_type_width(c->types[i]);

		if (dc->is_derived[i])
		{
			if (width > 0 && n > 0)
				memset(col->values, 0xa5, (size_t) (n * width));
			for (r = 0; r < n; r += 3)
				ga_column_set_null(col, r);
			continue;
		}
		if (width > 0 && n > 0)
			memcpy(col->values, (const char *) c->values[i] + start * width, (size_t) (n * width));
		for (r = 0; r < n; r++)
			if (c->isnull[i][start + r])
				ga_column_set_null(col, r);
	}
	b->nrows = n;
}

/* The CPU device's bytes_sent: what a GPU ships, derived columns never. */
static int64_t
dv_expected_bytes(const DvCase *dc)
{
	const Case *c = &dc->c;
	int64_t		bytes = 0,
				start = 0,
				r;
	int			b,
				i;

	for (b = 0; b < c->nbatches; b++)
	{
		int64_t		n = c->batch_sizes[b];

		for (i = 0; i < c->ncolumns; i++)
		{
			int			nulls = 0;

			if (dc->is_derived[i])
				continue;
			for (r = start; r < start + n && !nulls; r++)
				nulls = c->isnull[i][r];
			bytes += n * ga_type_width(c->types[i]) + (nulls ? (n + 7) / 8 : 0);
		}
		start += n;
	}
	return bytes;
}

/*
 * Start an aggregation of the case: its request with its derived columns
 * in an array scribbled over and freed as soon as ga_agg_create returns
 * (the device must have copied it).  dc->join makes it aggjoin.
 */
GaAgg *
dv_create(const DvCase *dc, GaDevice *dev, GaStrategy strategy, GaStatus *st)
{
	GaAggRequest req;
	GaDerivedColumn *copy = malloc(sizeof(GaDerivedColumn) * DV_MAX_DERIVED);
	GaAgg	   *agg;

	memcpy(copy, dc->derived, sizeof(GaDerivedColumn) * DV_MAX_DERIVED);
	case_request(&dc->c, strategy, &req);
	req.nderived = dc->nderived;
	req.derived = copy;
	req.join = dc->join;
	agg = ga_agg_create(dev, &req, st);
	memset(copy, 0xa5, sizeof(GaDerivedColumn) * DV_MAX_DERIVED);
	free(copy);
	return agg;
}

/*
 * Run a case on one device under one strategy and compare with the
 * reference.  Returns the number of problems.
 */
static int64_t
dv_run_case(const DvCase *dc, int case_no, GaDevice *dev, GaStrategy strategy,
			const char *label, int verbose, char *summary, size_t summary_len)
{
	const Case *c = &dc->c;
	RunReport	rr = {case_no, label, 0, 0, "derived"};
	WaitState	ws = {0, 0, 0};
	GaAgg	   *agg;
	GaStatus	st;
	GaAggStats	stats;
	const GaAggResult *res;
	int64_t		start = 0;
	double		t0 = now_ms();
	int			b,
				s;
	int64_t		by = 0;

	agg = dv_create(dc, dev, strategy, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		goto done;
	}
	for (b = 0; b < c->nbatches; b++)
	{
		GaBatch    *batch = run_next_batch(agg, c, b, &ws, &rr);

		if (batch == NULL)
			goto done;
		dv_fill_batch(dc, batch, start, c->batch_sizes[b]);
		if (!run_submit(agg, batch, b, &ws, &rr))
			goto done;
		start += c->batch_sizes[b];
	}
	res = run_finish(agg, &ws, &rr);
	if (res == NULL)
		goto done;
	check_result(c, res, &rr);
	dv_check_limb_sums(dc, res, &rr);
	if (dc->nknown > 0)
		dv_check_known(dc, res, &rr);

	ga_agg_get_stats(agg, &stats);
	for (s = 0; s < GA_NUM_STRATEGIES; s++)
		by += stats.batches_by_strategy[s];
	if (stats.batches != c->nbatches || stats.input_rows != c->nrows ||
		stats.groups != res->ngroups || by != stats.batches)
		report(&rr, "stats: batches %lld (by strategy %lld) rows %lld groups %lld, expected %d, %lld, %lld",
			   (long long) stats.batches, (long long) by, (long long) stats.input_rows,
			   (long long) stats.groups, c->nbatches, (long long) c->nrows,
			   (long long) res->ngroups);
	if (ga_device_kind(dev) == GA_DEVICE_CPU && stats.bytes_sent != dv_expected_bytes(dc))
		report(&rr, "stats: bytes_sent %lld, expected %lld (derived columns are never sent)",
			   (long long) stats.bytes_sent, (long long) dv_expected_bytes(dc));
	if (verbose)
		print_stats("derived", case_no, label, &stats, 0);

done:
	return run_end(agg, &ws, &rr, label, t0, summary, summary_len);
}

/* ------------------------------------------------------------------------
 * The suite
 * ------------------------------------------------------------------------
 */

/*
 * Run the API checks, the fixed and random cases and the aggjoin cases on
 * every device run.
 */
int64_t
conformance_derived(GaDevice *const *devices, const GaStrategy *strategies,
					const char *const *labels, int nruns, uint64_t seed, int ncases,
					int64_t max_rows, int timeout, int verbose, int64_t *checks)
{
	int64_t		failures = 0;
	int			i,
				j;

	for (j = 0; j < nruns; j++)
	{
		int64_t		f;

		if (strategies[j] != GA_STRATEGY_AUTO)
			continue;
		conformance_set_current("derived api", j);
		alarm((unsigned) timeout);
		f = derived_api_checks(devices[j], labels[j]);
		printf("derived api %-10s invalid and edge requests: %s\n", labels[j],
			   f ? "FAIL" : "ok");
		failures += f;
		(*checks)++;
	}

	for (i = 0; i < DV_NUM_FIXED + ncases; i++)
	{
		DvCase		dc;
		Rng			rng;
		const char *label = "random";
		char		line[1400];
		size_t		len;

		conformance_set_current("derived", i);
		alarm((unsigned) timeout);
		rng_seed(&rng, seed * UINT64_C(0x100000001b3) + UINT64_C(0xd3e) * (uint64_t) (i + 1));
		memset(&dc, 0, sizeof(dc));
		dc.c.batch_rows = 1024;
		if (i < DV_NUM_FIXED)
			label = dv_fixed_case(i, &dc, &rng, max_rows);
		else
			dv_random_case(&dc, &rng, max_rows);
		dv_fill_derived(&dc);
		dc.c.nbatches = split_batches(&rng, i >= DV_NUM_FIXED ?
									  (SplitMode) rng_range(&rng, SPLIT_FULL, SPLIT_WITH_EMPTY) :
									  dc.c.nrows == 0 ? SPLIT_NONE : SPLIT_FULL,
									  dc.c.nrows, dc.c.batch_rows, &dc.c.batch_sizes);
		sort_reference(&dc.c);
		dv_describe(&dc, label);

		len = (size_t) snprintf(line, sizeof(line), "derived %3d groups=%lld %s", i,
								(long long) dc.c.ngroups, dc.desc);
		for (j = 0; j < nruns; j++)
		{
			char		summary[160];

			failures += dv_run_case(&dc, i, devices[j], strategies[j], labels[j], verbose,
									summary, sizeof(summary));
			(*checks)++;
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s", summary);
		}
		printf("%s\n", line);
		fflush(stdout);
		dv_free_case(&dc);
	}

	for (i = 0; i < DV_NUM_JOIN_CASES; i++)
	{
		conformance_set_current("derived join", i);
		alarm((unsigned) timeout);
		failures += dv_join_case(i, devices, strategies, labels, nruns, seed, verbose, checks);
	}
	return failures;
}
