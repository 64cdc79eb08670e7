/*-------------------------------------------------------------------------
 *
 * strings.c
 *	  The string key suite: random batches whose keys are strings of bytes
 *	  (GA_TYPE_STRING), alone or with an integer key, fed to every device
 *	  run and checked against a reference that sorts the rows.
 *
 * The strings are adversarial: empty ones, NULLs (unequal to the empty
 * string), multibyte UTF-8, ones that differ only in their last byte or
 * their length (a prefix of another), ones longer than a few kB, and
 * random ones, many groups or few.  Batches are small in rows and in
 * bytes, so that strings fill a batch's bytes before its rows; and cases
 * run again with debug_hash_bits keeping 1 or 3 bits of every key hash,
 * so that unequal keys share hashes and only a comparison of the bytes
 * tells them apart.  Some cases take the shape of a DISTINCT set (the
 * integer key first, the string last, no operation: hashagg/exec.c's
 * DISTINCT requests), whose groups alone are checked.  A device that
 * refuses string keys (GA_ERR_INVALID at create) is reported as skipped.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "join.h"				/* conformance_set_current */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Columns of a case: the string key, an integer key, a value. */
#define SC_STRING 0
#define SC_INT 1
#define SC_VALUE 2
#define SC_NCOLUMNS 3

/* One row of a case. */
typedef struct StrRow
{
	const uint8_t *bytes;
	uint32_t	len;
	int			isnull;
	int64_t		ikey;
	int64_t		value;
} StrRow;

/* One group, of the reference or of a device's result. */
typedef struct StrGroup
{
	const uint8_t *bytes;
	uint32_t	len;
	int			isnull;
	int64_t		ikey;
	int64_t		count;
	int64_t		sum;
} StrGroup;

/* A case: its rows, their strings' storage and its batch limits. */
typedef struct StrCase
{
	int64_t		nrows;
	StrRow	   *rows;
	uint8_t    *heap;
	int			int_key;		/* whether the integer column is a key */
	int			distinct;		/* a DISTINCT set's shape: keys (integer,
								 * string), no operation */
	int64_t		batch_rows;
	int64_t		string_bytes;
	char		desc[128];
} StrCase;

/* Order groups by (null, bytes, length, integer key). */
static int
group_compare(const void *pa, const void *pb)
{
	const StrGroup *a = pa;
	const StrGroup *b = pb;
	uint32_t	n = a->len < b->len ? a->len : b->len;
	int			cmp;

	if (a->isnull != b->isnull)
		return a->isnull - b->isnull;
	if (!a->isnull)
	{
		cmp = n > 0 ? memcmp(a->bytes, b->bytes, n) : 0;
		if (cmp != 0)
			return cmp;
		if (a->len != b->len)
			return a->len < b->len ? -1 : 1;
	}
	return a->ikey < b->ikey ? -1 : a->ikey > b->ikey ? 1 : 0;
}

/* Write one string of the case's pool into p (at most 5000 bytes); its length. */
static uint32_t
gen_string(Rng *rng, uint8_t *p, int pool)
{
	static const char *const fixed[] = {
		"", " ", "a", "a ", "A", "ab", "aB", "abc", "abd", "\xc3\xbc", "u\xcc\x88",
		"\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "x\t", "0123456",
		"01234567", "012345678", "0123456789abcdef", "0123456789abcdeg"
	};
	const int	nfixed = (int) (sizeof(fixed) / sizeof(fixed[0]));
	int64_t		pick = rng_range(rng, 0, pool + nfixed + 2);
	uint32_t	len;
	uint32_t	i;

	if (pick < nfixed)
	{
		len = (uint32_t) strlen(fixed[pick]);
		memcpy(p, fixed[pick], len);
		return len;
	}
	if (pick >= nfixed + pool)
	{
		/* long: one of a few, equal but for the last byte */
		len = (uint32_t) (3000 + (pick - nfixed - pool) * 1000);
		memset(p, 'L', len);
		p[len - 1] = (uint8_t) ('0' + rng_range(rng, 0, 2));
		return len;
	}
	/* the pool: a number's digits with a length of its own */
	pick -= nfixed;
	len = (uint32_t) (pick % 23);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t) ('a' + (pick * 7 + i * 13) % 26);
	if (len > 0)
		p[len - 1] = (uint8_t) (0x80 + pick % 64);	/* a byte no ASCII has */
	return len;
}

/* Build case `no` from the rng. */
static void
build_str_case(StrCase *c, int no, Rng *rng)
{
	static const int64_t nrows_choices[] = {0, 1, 100, 5000, 40000};
	static const int pools[] = {3, 50, 2000, 100000};
	int			pool = pools[rng_range(rng, 0, 3)];
	double		null_rate = rng_chance(rng, 0.5) ? 0.1 : 0;
	int64_t		heap_used = 0;
	int64_t		r;

	memset(c, 0, sizeof(*c));
	c->nrows = no < 5 ? nrows_choices[no] : rng_range(rng, 1, 40000);
	c->int_key = rng_chance(rng, 0.5);
	c->batch_rows = rng_chance(rng, 0.5) ? 777 : 10000;
	c->string_bytes = rng_chance(rng, 0.5) ? 8192 : 1 << 20;
	c->rows = calloc((size_t) (c->nrows > 0 ? c->nrows : 1), sizeof(StrRow));
	c->heap = malloc((size_t) (c->nrows > 0 ? c->nrows : 1) * 5000);
	for (r = 0; r < c->nrows; r++)
	{
		StrRow	   *row = &c->rows[r];

		row->isnull = rng_chance(rng, null_rate);
		if (!row->isnull)
		{
			row->len = gen_string(rng, c->heap + heap_used, pool);
			row->bytes = c->heap + heap_used;
			heap_used += row->len;
		}
		row->ikey = c->int_key ? rng_range(rng, -2, 2) : 0;
		row->value = rng_range(rng, -1000, 1000);
	}
	c->distinct = rng_chance(rng, 0.3);
	snprintf(c->desc, sizeof(c->desc),
			 "rows=%lld pool=%d nulls=%.1f int_key=%d distinct=%d batch=%lld/%lld",
			 (long long) c->nrows, pool, null_rate, c->int_key, c->distinct,
			 (long long) c->batch_rows, (long long) c->string_bytes);
}

/* The reference: the case's groups, sorted; their count in *ngroups. */
static StrGroup *
reference_groups(const StrCase *c, int64_t *ngroups)
{
	StrGroup   *rows = calloc((size_t) (c->nrows > 0 ? c->nrows : 1), sizeof(StrGroup));
	int64_t		n = 0;
	int64_t		r;

	for (r = 0; r < c->nrows; r++)
	{
		rows[r].bytes = c->rows[r].bytes;
		rows[r].len = c->rows[r].len;
		rows[r].isnull = c->rows[r].isnull;
		rows[r].ikey = c->rows[r].ikey;
		rows[r].count = 1;
		rows[r].sum = c->rows[r].value;
	}
	qsort(rows, (size_t) c->nrows, sizeof(StrGroup), group_compare);
	for (r = 0; r < c->nrows; r++)
	{
		if (n > 0 && group_compare(&rows[n - 1], &rows[r]) == 0)
		{
			rows[n - 1].count++;
			rows[n - 1].sum += rows[r].sum;
		}
		else
			rows[n++] = rows[r];
	}
	*ngroups = n;
	return rows;
}

/*
 * Feed the case to a device in batches that keep to its rows and bytes;
 * returns the number of failures (0 or 1), or -1 when the device refuses
 * string keys.
 */
static int
run_str_case(const StrCase *c, const StrGroup *ref, int64_t nref, GaDevice *device,
			 GaStrategy strategy, int hash_bits, const char *label, int no)
{
	GaValueType types[SC_NCOLUMNS] = {GA_TYPE_STRING, GA_TYPE_INT16, GA_TYPE_INT32};
	int			keys[2] = {SC_STRING, SC_INT};
	GaAggSpec	aggs[2] = {{GA_AGG_COUNT_ROWS, -1, 0}, {GA_AGG_SUM_INT, SC_VALUE, 0}};
	int			skey = c->distinct && c->int_key ? 1 : 0;	/* the string key's number */
	int			ikey = 1 - skey;
	GaAggRequest req;
	GaStatus	st;
	GaAgg	   *agg;
	GaBatch    *batch = NULL;
	const GaAggResult *res;
	StrGroup   *got = NULL;
	int64_t		r = 0;
	int64_t		g;
	int			fail = 0;

	memset(&req, 0, sizeof(req));
	req.ncolumns = SC_NCOLUMNS;
	req.column_types = types;
	req.nkeys = c->int_key ? 2 : 1;
	keys[skey] = SC_STRING;
	keys[ikey] = SC_INT;
	req.key_columns = keys;
	req.naggs = c->distinct ? 0 : 2;
	req.aggs = c->distinct ? NULL : aggs;
	req.batch_rows = c->batch_rows;
	req.estimated_groups = 100;
	req.strategy = strategy;
	req.string_bytes = c->string_bytes;
	req.debug_hash_bits = hash_bits;
	agg = ga_agg_create(device, &req, &st);
	if (agg == NULL)
	{
		if (st.code == GA_ERR_INVALID)
			return -1;
		printf("strings %d [%s] create failed: %s\n", no, label, st.message);
		return 1;
	}
	while (r < c->nrows)
	{
		GaColumn   *scol;
		uint32_t	used = 0;

		batch = ga_agg_next_batch(agg, NULL, NULL, &st);
		if (batch == NULL)
			goto failed;
		scol = &batch->columns[SC_STRING];
		if (scol->bytes == NULL || scol->bytes_capacity < c->string_bytes)
		{
			printf("strings %d [%s] a batch's string column has %lld bytes, not %lld\n",
				   no, label, (long long) scol->bytes_capacity, (long long) c->string_bytes);
			fail = 1;
			break;
		}
		while (r < c->nrows && batch->nrows < batch->capacity &&
			   used + c->rows[r].len <= (uint64_t) scol->bytes_capacity)
		{
			const StrRow *row = &c->rows[r];
			int64_t		i = batch->nrows;

			if (row->isnull)
				ga_column_set_null(scol, i);
			else
			{
				memcpy(scol->bytes + used, row->bytes, row->len);
				used += row->len;
			}
			((uint32_t *) scol->values)[i] = used;
			((int16_t *) batch->columns[SC_INT].values)[i] = (int16_t) row->ikey;
			((int32_t *) batch->columns[SC_VALUE].values)[i] = (int32_t) row->value;
			batch->nrows++;
			r++;
		}
		if (!ga_agg_submit(agg, batch, NULL, NULL, &st))
			goto failed;
	}
	res = ga_agg_finish(agg, NULL, NULL, &st);
	if (res == NULL)
		goto failed;
	if (res->key_bytes == NULL || res->key_bytes[skey] == NULL)
	{
		printf("strings %d [%s] the result has no key bytes\n", no, label);
		ga_agg_destroy(agg);
		return 1;
	}
	got = calloc((size_t) (res->ngroups > 0 ? res->ngroups : 1), sizeof(StrGroup));
	for (g = 0; g < res->ngroups; g++)
	{
		int64_t		start = g > 0 ? res->key_values[skey][g - 1] : 0;

		got[g].isnull = res->key_isnull[skey][g] != 0;
		got[g].bytes = res->key_bytes[skey] + start;
		got[g].len = (uint32_t) (res->key_values[skey][g] - start);
		if (got[g].isnull && got[g].len != 0)
		{
			printf("strings %d [%s] a null group has %u bytes\n", no, label, got[g].len);
			fail = 1;
		}
		got[g].ikey = c->int_key ? res->key_values[ikey][g] : 0;
		if (c->distinct)
			continue;			/* no operation: the groups alone */
		got[g].count = ((const int64_t *) res->values[0])[g];
		got[g].sum = (int64_t) ((const GaInt128 *) res->values[1])[g].lo;
	}
	qsort(got, (size_t) res->ngroups, sizeof(StrGroup), group_compare);
	if (res->ngroups != nref)
	{
		printf("strings %d [%s] %lld groups, expected %lld\n", no, label,
			   (long long) res->ngroups, (long long) nref);
		fail = 1;
	}
	for (g = 0; !fail && g < nref; g++)
		if (group_compare(&got[g], &ref[g]) != 0 ||
			(!c->distinct && (got[g].count != ref[g].count || got[g].sum != ref[g].sum)))
		{
			printf("strings %d [%s] group %lld differs: %u bytes, null %d, key %lld, count %lld, sum %lld; expected %u bytes, null %d, key %lld, count %lld, sum %lld\n",
				   no, label, (long long) g, got[g].len, got[g].isnull, (long long) got[g].ikey,
				   (long long) got[g].count, (long long) got[g].sum, ref[g].len, ref[g].isnull,
				   (long long) ref[g].ikey, (long long) ref[g].count, (long long) ref[g].sum);
			fail = 1;
		}
	free(got);
	ga_agg_destroy(agg);
	return fail;

failed:
	printf("strings %d [%s] failed: %s\n", no, label, st.message);
	ga_agg_destroy(agg);
	return 1;
}

/*
 * Run ncases string cases on every device run; returns the failures and
 * adds the checks made to *checks.
 */
int64_t
strings_suite(GaDevice *const *devices, const GaStrategy *strategies,
			  const char *const *labels, int ndevices, int ncases, uint64_t seed,
			  int64_t *checks)
{
	static const int hash_bits[] = {0, 1, 3};
	int64_t		failures = 0;
	int			i;

	for (i = 0; i < ncases; i++)
	{
		StrCase		c;
		StrGroup   *ref;
		int64_t		nref;
		Rng			rng;
		char		line[1024];
		size_t		len;
		int			j;
		int			h;

		conformance_set_current("strings", i);
		rng_seed(&rng, seed * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t) i);
		build_str_case(&c, i, &rng);
		ref = reference_groups(&c, &nref);
		len = (size_t) snprintf(line, sizeof(line), "strings %3d groups=%lld %s", i,
								(long long) nref, c.desc);
		for (j = 0; j < ndevices; j++)
		{
			const char *verdict = "ok";

			for (h = 0; h < 3; h++)
			{
				int			f = run_str_case(&c, ref, nref, devices[j], strategies[j],
											 hash_bits[h], labels[j], i);

				if (f < 0)
				{
					verdict = "skipped (no string keys)";
					break;
				}
				failures += f;
				(*checks)++;
				if (f)
					verdict = "FAIL";
			}
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s %s",
										 labels[j], verdict);
		}
		printf("%s\n", line);
		free(ref);
		free(c.rows);
		free(c.heap);
	}
	return failures;
}
