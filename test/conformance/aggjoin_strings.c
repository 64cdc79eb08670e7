/*-------------------------------------------------------------------------
 *
 * aggjoin_strings.c
 *	  The string join key cases of the strings suite: an aggjoin step
 *	  joined on a GA_TYPE_STRING key (alone, or with an int64 key) by the
 *	  hashed step of gpuagg_device.h, fed to every device run and checked
 *	  against a reference that joins every probe row with every build row.
 *
 * Both sides draw their strings from one adversarial pool (empty ones,
 * NULLs, multibyte UTF-8, prefixes of each other, ones equal but for their
 * last byte, a few kB long), so that keys match often and nearly match
 * more often; the build side has duplicate keys (many to many), and the
 * step is INNER, LEFT, SEMI, ANTI, RIGHT or FULL.  The aggregation groups
 * by a small integer of the probe side (null for a RIGHT or FULL step's
 * unmatched build rows) and counts rows, sums a probe value and counts
 * and sums a build value.  Probe batches are small in rows and in bytes.
 * A device that does not join strings (GA_ERR_INVALID at create) is
 * reported as skipped.
 *
 * A chained case puts that join second, after an INNER step that gives
 * each probe row exactly one build row of a copy of the probe side (its
 * id, its int64 key and its string), so that the string join is a later
 * step's and its results are the same: its string key is the probe row's
 * own (read through the first step's rows) or the copy's (a build column
 * of the first step), and its int64 key the other side's.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "join.h"				/* conformance_set_current */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Columns: the probe side's, then the build side's. */
#define SJ_PROBE_STRING 0
#define SJ_PROBE_INT 1
#define SJ_GROUP 2
#define SJ_PROBE_VALUE 3
#define SJ_BUILD_STRING 4
#define SJ_BUILD_INT 5
#define SJ_BUILD_VALUE 6
#define SJ_NCOLUMNS 7

/* A chained case's columns besides: the probe row's id, and the copy's. */
#define SJ_PROBE_ID 7
#define SJ_COPY_ID 8
#define SJ_COPY_INT 9
#define SJ_COPY_STRING 10
#define SJ_CHAINED_COLUMNS 11

/* What a case joins on (SjCase.chain). */
#define SJ_ONE_STEP 0
#define SJ_CHAIN_PROBE_STRING 1	/* second step: the probe's string */
#define SJ_CHAIN_COPY_STRING 2	/* second step: the copy's string */

/* Groups: the integers 0 .. SJ_NGROUPS - 1, and null. */
#define SJ_NGROUPS 5

/* The longest string a case draws, and a probe batch's string bytes. */
#define SJ_MAX_STRING 5000
#define SJ_STRING_BYTES 12000

/* One row of either side. */
typedef struct SjRow
{
	uint32_t	at;				/* its string in the case's heap */
	uint32_t	len;
	int			isnull;			/* the string key is null */
	int			int_null;		/* the int64 key is null */
	int64_t		ikey;
	int64_t		group;			/* the probe side's group */
	int64_t		value;
} SjRow;

/* What a group sums up (index SJ_NGROUPS: the null group). */
typedef struct SjGroup
{
	int64_t		rows;
	int64_t		probe_sum;
	int64_t		build_count;
	int64_t		build_sum;
} SjGroup;

typedef struct SjCase
{
	GaAggJoinType type;
	int			two_keys;		/* the int64 key too */
	int			chain;			/* SJ_ONE_STEP or SJ_CHAIN_* */
	int64_t		nprobe;
	int64_t		nbuild;
	SjRow	   *probe;
	SjRow	   *build;
	uint8_t    *heap;
	int64_t		heap_used;
	int64_t		batch_rows;
	char		desc[96];
} SjCase;

/* Draw one string of the pool into the case's heap for row. */
static void
sj_string(SjCase *c, Rng *rng, SjRow *row, double null_rate)
{
	static const char *const fixed[] = {
		"", " ", "a", "a ", "A", "ab", "abc", "abd", "\xc3\xbc", "u\xcc\x88",
		"\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "0123456",
		"01234567", "012345678", "0123456789abcdef", "0123456789abcdeg"
	};
	const int	nfixed = (int) (sizeof(fixed) / sizeof(fixed[0]));
	int64_t		pick = rng_range(rng, 0, nfixed + 12);
	uint8_t    *p = c->heap + c->heap_used;
	uint32_t	len;
	uint32_t	i;

	row->at = (uint32_t) c->heap_used;
	row->isnull = rng_chance(rng, null_rate);
	if (row->isnull)
	{
		row->len = 0;
		return;
	}
	if (pick < nfixed)
	{
		len = (uint32_t) strlen(fixed[pick]);
		memcpy(p, fixed[pick], len);
	}
	else if (pick < nfixed + 2)
	{
		/* long: equal but for the last byte */
		len = (uint32_t) (SJ_MAX_STRING - 1000 * (pick - nfixed));
		memset(p, 'L', len);
		p[len - 1] = (uint8_t) ('0' + rng_range(rng, 0, 1));
	}
	else
	{
		/* a small pool of its own, with a byte no ASCII has */
		pick -= nfixed + 2;
		len = (uint32_t) (1 + pick % 9);
		for (i = 0; i < len; i++)
			p[i] = (uint8_t) ('a' + (pick * 7 + i * 5) % 26);
		p[len - 1] = (uint8_t) (0x80 + pick);
	}
	row->len = len;
	c->heap_used += len;
}

/* Build case `no` from the rng. */
static void
sj_build_case(SjCase *c, int no, Rng *rng)
{
	static const GaAggJoinType types[] = {
		GA_AGGJOIN_INNER, GA_AGGJOIN_LEFT, GA_AGGJOIN_SEMI, GA_AGGJOIN_ANTI,
		GA_AGGJOIN_RIGHT, GA_AGGJOIN_FULL
	};
	static const char *const type_names[] = {"inner", "left", "semi", "anti", "right", "full"};
	static const char *const chain_names[] = {"", " chained", " chained(copy)"};
	static const int64_t probe_choices[] = {0, 1, 300, 3000};
	static const int64_t build_choices[] = {0, 1, 20, 200};
	int			t = (int) rng_range(rng, 0, 5);
	double		null_rate = rng_chance(rng, 0.5) ? 0.1 : 0;
	int64_t		r;

	memset(c, 0, sizeof(*c));
	c->type = types[t];
	c->two_keys = rng_chance(rng, 0.4);
	c->nprobe = probe_choices[rng_range(rng, 0, 3)];
	c->nbuild = build_choices[rng_range(rng, 0, 3)];
	c->batch_rows = rng_chance(rng, 0.5) ? 64 : 1000;
	c->probe = calloc((size_t) (c->nprobe + 1), sizeof(SjRow));
	c->build = calloc((size_t) (c->nbuild + 1), sizeof(SjRow));
	c->heap = malloc((size_t) (c->nprobe + c->nbuild + 1) * SJ_MAX_STRING);
	for (r = 0; r < c->nprobe + c->nbuild; r++)
	{
		SjRow	   *row = r < c->nprobe ? &c->probe[r] : &c->build[r - c->nprobe];

		sj_string(c, rng, row, null_rate);
		row->ikey = rng_range(rng, 0, 2);
		row->int_null = c->two_keys && rng_chance(rng, null_rate);
		row->group = rng_range(rng, 0, SJ_NGROUPS - 1);
		row->value = rng_range(rng, -1000, 1000);
	}
	c->chain = rng_chance(rng, 0.5) ? SJ_ONE_STEP : (int) rng_range(rng, 1, 2);
	snprintf(c->desc, sizeof(c->desc), "%s %s%s probe=%lld build=%lld batch=%lld nulls=%.1f",
			 type_names[t], c->two_keys ? "string+int64" : "string", chain_names[c->chain],
			 (long long) c->nprobe, (long long) c->nbuild, (long long) c->batch_rows,
			 null_rate);
	(void) no;
}

/* Whether probe row p and build row b hold equal keys (a null never equals). */
static int
sj_match(const SjCase *c, const SjRow *p, const SjRow *b)
{
	if (p->isnull || b->isnull || (c->two_keys && (p->int_null || b->int_null)))
		return 0;
	if (c->two_keys && p->ikey != b->ikey)
		return 0;
	return p->len == b->len &&
		(p->len == 0 || memcmp(c->heap + p->at, c->heap + b->at, p->len) == 0);
}

/* The reference: every probe row against every build row. */
static void
sj_reference(const SjCase *c, SjGroup *ref)
{
	uint8_t    *matched = calloc((size_t) (c->nbuild + 1), 1);
	int64_t		p,
				b;

	memset(ref, 0, sizeof(SjGroup) * (SJ_NGROUPS + 1));
	for (p = 0; p < c->nprobe; p++)
	{
		SjGroup    *g = &ref[c->probe[p].group];
		int64_t		matches = 0;

		for (b = 0; b < c->nbuild; b++)
		{
			if (!sj_match(c, &c->probe[p], &c->build[b]))
				continue;
			matches++;
			matched[b] = 1;
			if (c->type == GA_AGGJOIN_SEMI || c->type == GA_AGGJOIN_ANTI)
				continue;
			g->rows++;
			g->probe_sum += c->probe[p].value;
			g->build_count++;
			g->build_sum += c->build[b].value;
		}
		if ((matches == 0 && (c->type == GA_AGGJOIN_LEFT || c->type == GA_AGGJOIN_FULL ||
							  c->type == GA_AGGJOIN_ANTI)) ||
			(matches > 0 && c->type == GA_AGGJOIN_SEMI))
		{
			g->rows++;
			g->probe_sum += c->probe[p].value;
		}
	}
	for (b = 0; b < c->nbuild; b++)
		if (!matched[b] && (c->type == GA_AGGJOIN_RIGHT || c->type == GA_AGGJOIN_FULL))
		{
			ref[SJ_NGROUPS].rows++;
			ref[SJ_NGROUPS].build_count++;
			ref[SJ_NGROUPS].build_sum += c->build[b].value;
		}
	free(matched);
}

/*
 * Write row's string key and int64 key into columns s and i of batch row r
 * (the string only when column s is a string column).
 */
static void
sj_put_keys(const SjCase *c, const SjRow *row, GaBatch *batch, int s, int i, int64_t r)
{
	GaColumn   *scol = &batch->columns[s];

	if (scol->type == GA_TYPE_STRING)
	{
		uint32_t	used = ga_string_used(scol, r);

		if (row->isnull)
			ga_column_set_null(scol, r);
		else
			memcpy(scol->bytes + used, c->heap + row->at, row->len);
		((uint32_t *) scol->values)[r] = used + row->len;
	}
	((int64_t *) batch->columns[i].values)[r] = row->ikey;
	if (row->int_null)
		ga_column_set_null(&batch->columns[i], r);
}

/*
 * A chained case's first step: the copy of the probe side as step 1's
 * payload, every row keyed by its id (a probe row's id is its number).
 * Returns 0 with st on failure.
 */
static int
sj_build_copy(const SjCase *c, GaAgg *agg, const GaValueType *types, int ncolumns,
			  GaStatus *st)
{
	GaColumn	pcols[SJ_CHAINED_COLUMNS];
	GaBatch		payload;
	int64_t		n = c->nprobe;
	int64_t    *keys = calloc((size_t) (n + 1), sizeof(int64_t));
	uint32_t   *rows = calloc((size_t) (n + 1), sizeof(uint32_t));
	int64_t    *ids = calloc((size_t) (n + 1), sizeof(int64_t));
	int64_t    *ints = calloc((size_t) (n + 1), sizeof(int64_t));
	uint32_t   *ends = calloc((size_t) (n + 1), sizeof(uint32_t));
	uint8_t    *bytes = malloc((size_t) c->heap_used + 1);
	uint8_t    *validity = malloc((size_t) (n + 8) / 8 * 2 + 2);
	int64_t		r;
	int			ok;

	memset(pcols, 0, sizeof(pcols));
	for (r = 0; r < ncolumns; r++)
		pcols[r].type = types[r];
	memset(validity, 0xff, (size_t) (n + 8) / 8 * 2 + 2);
	pcols[SJ_COPY_ID].values = ids;
	pcols[SJ_COPY_INT].values = ints;
	pcols[SJ_COPY_INT].validity = validity;
	pcols[SJ_COPY_STRING].values = ends;
	pcols[SJ_COPY_STRING].validity = validity + (n + 8) / 8 + 1;
	pcols[SJ_COPY_STRING].bytes = bytes;
	pcols[SJ_COPY_STRING].bytes_capacity = c->heap_used + 1;
	memset(&payload, 0, sizeof(payload));
	payload.nrows = payload.capacity = n;
	payload.ncolumns = ncolumns;
	payload.columns = pcols;
	for (r = 0; r < n; r++)
	{
		keys[r] = ids[r] = r;
		rows[r] = (uint32_t) r;
		sj_put_keys(c, &c->probe[r], &payload, SJ_COPY_STRING, SJ_COPY_INT, r);
	}
	ok = ga_aggjoin_build(agg, 0, keys, rows, n, &payload, NULL, NULL, st);
	free(keys);
	free(rows);
	free(ids);
	free(ints);
	free(ends);
	free(bytes);
	free(validity);
	return ok;
}

/*
 * Run the case on a device; the failures (0 or 1), or -1 when the device
 * does not join strings.
 */
static int
sj_run(const SjCase *c, const SjGroup *ref, GaDevice *device, GaStrategy strategy,
	   const char *label, int no)
{
	GaValueType types[SJ_CHAINED_COLUMNS] = {
		GA_TYPE_STRING, GA_TYPE_INT64, GA_TYPE_INT16, GA_TYPE_INT32,
		GA_TYPE_STRING, GA_TYPE_INT64, GA_TYPE_INT32,
		GA_TYPE_INT64, GA_TYPE_INT64, GA_TYPE_INT64, GA_TYPE_STRING
	};
	uint8_t		from_build[SJ_CHAINED_COLUMNS] = {0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1};
	int			ncolumns = c->chain == SJ_ONE_STEP ? SJ_NCOLUMNS :
		c->chain == SJ_CHAIN_PROBE_STRING ? SJ_CHAINED_COLUMNS - 1 : SJ_CHAINED_COLUMNS;
	int			step = c->chain == SJ_ONE_STEP ? 0 : 1;	/* the string join's */
	int			keys[1] = {SJ_GROUP};
	GaAggSpec	aggs[4] = {
		{GA_AGG_COUNT_ROWS, -1, 0}, {GA_AGG_SUM_INT, SJ_PROBE_VALUE, 0},
		{GA_AGG_COUNT, SJ_BUILD_VALUE, 0}, {GA_AGG_SUM_INT, SJ_BUILD_VALUE, 0}
	};
	GaAggJoinSpec spec;
	GaAggRequest req;
	GaColumn	pcols[SJ_CHAINED_COLUMNS];
	GaBatch		payload;
	uint32_t   *rows = calloc((size_t) (c->nbuild + 1), sizeof(uint32_t));
	uint8_t    *validity[SJ_CHAINED_COLUMNS];
	uint32_t   *ends = calloc((size_t) (c->nbuild + 1), sizeof(uint32_t));
	uint8_t    *bytes = malloc((size_t) c->heap_used + 1);
	int64_t    *ikeys = calloc((size_t) (c->nbuild + 1), sizeof(int64_t));
	int32_t    *bvalues = calloc((size_t) (c->nbuild + 1), sizeof(int32_t));
	SjGroup		got[SJ_NGROUPS + 1];
	const GaAggResult *res;
	GaStatus	st;
	GaAgg	   *agg;
	int64_t		nrows = 0;
	int64_t		used = 0;
	int64_t		r;
	int			fail = 0;
	int			col;

	memset(&spec, 0, sizeof(spec));
	spec.nsteps = step + 1;
	spec.steps[0].type = GA_AGGJOIN_INNER;	/* chained: the copy, by id */
	spec.steps[0].key_column = SJ_PROBE_ID;
	spec.steps[step].type = c->type;
	spec.steps[step].hashed = 1;
	spec.steps[step].nkeys = c->two_keys ? 2 : 1;
	spec.steps[step].key_columns[0] = c->chain == SJ_CHAIN_COPY_STRING ? SJ_COPY_STRING :
		SJ_PROBE_STRING;
	spec.steps[step].build_key_columns[0] = SJ_BUILD_STRING;
	spec.steps[step].key_columns[1] = c->chain == SJ_CHAIN_PROBE_STRING ? SJ_COPY_INT :
		SJ_PROBE_INT;
	spec.steps[step].build_key_columns[1] = SJ_BUILD_INT;
	if (c->chain == SJ_CHAIN_COPY_STRING)
		types[SJ_PROBE_STRING] = GA_TYPE_INT8;	/* no key: unused */
	for (col = SJ_BUILD_STRING; col <= SJ_BUILD_VALUE; col++)
		from_build[col] = (uint8_t) (step + 1);
	spec.from_build = from_build;
	memset(&req, 0, sizeof(req));
	req.ncolumns = ncolumns;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = keys;
	req.naggs = 4;
	req.aggs = aggs;
	req.batch_rows = c->batch_rows;
	req.estimated_groups = SJ_NGROUPS + 1;
	req.strategy = strategy;
	req.join = &spec;
	req.string_bytes = SJ_STRING_BYTES;
	agg = ga_agg_create(device, &req, &st);
	if (agg == NULL)
	{
		free(rows);
		free(ends);
		free(bytes);
		free(ikeys);
		free(bvalues);
		if (st.code == GA_ERR_INVALID)
			return -1;
		printf("aggjoin strings %d [%s] create failed: %s\n", no, label, st.message);
		return 1;
	}

	/* chained: the copy first */
	memset(validity, 0, sizeof(validity));
	if (step > 0 && !sj_build_copy(c, agg, types, ncolumns, &st))
		goto failed;

	/* the build side: every row in the payload, those with keys listed */
	memset(pcols, 0, sizeof(pcols));
	for (col = 0; col < ncolumns; col++)
	{
		pcols[col].type = types[col];
		validity[col] = malloc((size_t) (c->nbuild + 8) / 8 + 1);
		memset(validity[col], 0xff, (size_t) (c->nbuild + 8) / 8 + 1);
		pcols[col].validity = validity[col];
	}
	pcols[SJ_BUILD_STRING].values = ends;
	pcols[SJ_BUILD_STRING].bytes = bytes;
	pcols[SJ_BUILD_STRING].bytes_capacity = c->heap_used + 1;
	pcols[SJ_BUILD_INT].values = ikeys;
	pcols[SJ_BUILD_VALUE].values = bvalues;
	for (r = 0; r < c->nbuild; r++)
	{
		const SjRow *b = &c->build[r];

		if (b->isnull)
			ga_column_set_null(&pcols[SJ_BUILD_STRING], r);
		else
			memcpy(bytes + used, c->heap + b->at, b->len);
		used += b->len;
		ends[r] = (uint32_t) used;
		ikeys[r] = b->ikey;
		if (b->int_null)
			ga_column_set_null(&pcols[SJ_BUILD_INT], r);
		bvalues[r] = (int32_t) b->value;
		if (!b->isnull && !(c->two_keys && b->int_null))
			rows[nrows++] = (uint32_t) r;
	}
	memset(&payload, 0, sizeof(payload));
	payload.nrows = payload.capacity = c->nbuild;
	payload.ncolumns = ncolumns;
	payload.columns = pcols;
	if (!ga_aggjoin_build(agg, step, NULL, rows, nrows, &payload, NULL, NULL, &st))
		goto failed;

	/* the probe side, in batches small in rows and bytes */
	for (r = 0; r < c->nprobe;)
	{
		GaBatch    *batch = ga_agg_next_batch(agg, NULL, NULL, &st);

		if (batch == NULL)
			goto failed;
		while (r < c->nprobe && batch->nrows < batch->capacity &&
			   (types[SJ_PROBE_STRING] != GA_TYPE_STRING ||
				ga_string_used(&batch->columns[SJ_PROBE_STRING], batch->nrows) +
				c->probe[r].len <= (uint64_t) SJ_STRING_BYTES))
		{
			const SjRow *p = &c->probe[r];
			int64_t		i = batch->nrows++;

			if (step > 0)
				((int64_t *) batch->columns[SJ_PROBE_ID].values)[i] = r;
			r++;
			sj_put_keys(c, p, batch, SJ_PROBE_STRING, SJ_PROBE_INT, i);
			((int16_t *) batch->columns[SJ_GROUP].values)[i] = (int16_t) p->group;
			((int32_t *) batch->columns[SJ_PROBE_VALUE].values)[i] = (int32_t) p->value;
		}
		if (!ga_agg_submit(agg, batch, NULL, NULL, &st))
			goto failed;
	}
	res = ga_agg_finish(agg, NULL, NULL, &st);
	if (res == NULL)
		goto failed;

	memset(got, 0, sizeof(got));
	for (r = 0; r < res->ngroups; r++)
	{
		int64_t		g = res->key_isnull[0][r] ? SJ_NGROUPS : res->key_values[0][r];

		if (g < 0 || g > SJ_NGROUPS)
		{
			printf("aggjoin strings %d [%s] a group of key %lld\n", no, label, (long long) g);
			fail = 1;
			break;
		}
		got[g].rows = ((const int64_t *) res->values[0])[r];
		got[g].probe_sum = (int64_t) ((const GaInt128 *) res->values[1])[r].lo;
		got[g].build_count = ((const int64_t *) res->values[2])[r];
		got[g].build_sum = (int64_t) ((const GaInt128 *) res->values[3])[r].lo;
	}
	for (r = 0; !fail && r <= SJ_NGROUPS; r++)
		if (memcmp(&got[r], &ref[r], sizeof(SjGroup)) != 0)
		{
			printf("aggjoin strings %d [%s] group %lld: rows %lld, probe sum %lld, build count %lld, build sum %lld; expected %lld, %lld, %lld, %lld\n",
				   no, label, (long long) r, (long long) got[r].rows,
				   (long long) got[r].probe_sum, (long long) got[r].build_count,
				   (long long) got[r].build_sum, (long long) ref[r].rows,
				   (long long) ref[r].probe_sum, (long long) ref[r].build_count,
				   (long long) ref[r].build_sum);
			fail = 1;
		}
	goto done;

failed:
	printf("aggjoin strings %d [%s] failed: %s\n", no, label, st.message);
	fail = 1;
done:
	ga_agg_destroy(agg);
	for (col = 0; col < SJ_CHAINED_COLUMNS; col++)
		free(validity[col]);
	free(rows);
	free(ends);
	free(bytes);
	free(ikeys);
	free(bvalues);
	return fail;
}

/*
 * Run ncases string join cases on every device run; returns the failures
 * and adds the checks made to *checks.
 */
int64_t
aggjoin_strings_suite(GaDevice *const *devices, const GaStrategy *strategies,
					  const char *const *labels, int ndevices, int ncases, uint64_t seed,
					  int64_t *checks)
{
	int64_t		failures = 0;
	int			i;

	for (i = 0; i < ncases; i++)
	{
		SjCase		c;
		SjGroup		ref[SJ_NGROUPS + 1];
		Rng			rng;
		char		line[1024];
		size_t		len;
		int			j;

		conformance_set_current("aggjoin strings", i);
		rng_seed(&rng, seed * UINT64_C(0xbf58476d1ce4e5b9) + (uint64_t) i);
		sj_build_case(&c, i, &rng);
		sj_reference(&c, ref);
		len = (size_t) snprintf(line, sizeof(line), "aggjoin strings %3d rows=%lld %s", i,
								(long long) ref[0].rows, c.desc);
		for (j = 0; j < ndevices; j++)
		{
			int			f = sj_run(&c, ref, devices[j], strategies[j], labels[j], i);
			const char *verdict = f < 0 ? "skipped (no string join keys)" : f ? "FAIL" : "ok";

			if (f > 0)
				failures += f;
			if (f >= 0)
				(*checks)++;
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s %s",
										 labels[j], verdict);
		}
		printf("%s\n", line);
		free(c.probe);
		free(c.build);
		free(c.heap);
	}
	return failures;
}
