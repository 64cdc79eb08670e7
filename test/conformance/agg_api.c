/*-------------------------------------------------------------------------
 *
 * agg_api.c
 *	  The aggregation suite's API checks on one device run: cancellation
 *	  through the wait callback, an injected failure (fail_at_batch) and
 *	  the refusal of malformed requests.
 *
 *-------------------------------------------------------------------------
 */
#include "agg.h"

#include <string.h>

/* ------------------------------------------------------------------------
 * API behaviour beyond results: cancel, injected failure, bad requests
 * ------------------------------------------------------------------------
 */

/*
 * Cancel: a wait callback that answers "stop".  Any call during which it
 * answered must fail with GA_ERR_CANCELLED; the CPU device must ask at
 * least once for a batch of 200K rows.
 */
int64_t
api_cancel(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, NULL};
	WaitState	ws = {0, 1, 0};
	GaValueType types[2] = {GA_TYPE_INT32, GA_TYPE_INT64};
	int			keycol = 0;
	GaAggSpec	spec[2] = {{GA_AGG_COUNT_ROWS, -1, -1}, {GA_AGG_SUM_INT, 1, -1}};
	GaAggRequest req;
	GaAgg	   *agg;
	GaStatus	st;
	int			b;
	int64_t		r,
				before;
	int			cancelled = 0;

	memset(&req, 0, sizeof(req));
	req.ncolumns = 2;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = &keycol;
	req.naggs = 2;
	req.aggs = spec;
	req.batch_rows = 200000;
	req.estimated_groups = 10;
	req.strategy = strategy;
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		return rr.mismatches;
	}
	for (b = 0; b < 3 && !cancelled; b++)
	{
		GaBatch    *batch;

		before = ws.cancels;
		batch = ga_agg_next_batch(agg, test_wait, &ws, &st);
		if (batch == NULL)
		{
			if (st.code != GA_ERR_CANCELLED)
				report(&rr, "next_batch failed: code %d: %s", st.code, st.message);
			cancelled = 1;
			break;
		}
		if (ws.cancels != before)
			report(&rr, "next_batch succeeded although the callback said stop");
		for (r = 0; r < batch->capacity; r++)
		{
			((int32_t *) batch->columns[0].values)[r] = (int32_t) (r % 1000);
			((int64_t *) batch->columns[1].values)[r] = r;
		}
		batch->nrows = batch->capacity;
		before = ws.cancels;
		if (!ga_agg_submit(agg, batch, test_wait, &ws, &st))
		{
			if (st.code != GA_ERR_CANCELLED)
				report(&rr, "submit failed: code %d: %s", st.code, st.message);
			cancelled = 1;
		}
		else if (ws.cancels != before)
			report(&rr, "submit succeeded although the callback said stop");
	}
	if (!cancelled)
	{
		before = ws.cancels;
		if (ga_agg_finish(agg, test_wait, &ws, &st) == NULL)
		{
			if (st.code != GA_ERR_CANCELLED)
				report(&rr, "finish failed: code %d: %s", st.code, st.message);
			cancelled = 1;
		}
		else if (ws.cancels != before)
			report(&rr, "finish succeeded although the callback said stop");
	}
	if (ga_device_kind(dev) == GA_DEVICE_CPU && !cancelled)
		report(&rr, "the CPU device never asked the wait callback during 600K rows");
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/*
 * fail_at_batch: the second submit must fail with a status and a message
 * (device.c injects it; any code but GA_OK), and the aggregation must still
 * be destroyable.
 */
int64_t
api_fail_at_batch(GaDevice *dev, GaStrategy strategy, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, NULL};
	WaitState	ws = {0, 0, 0};
	GaValueType types[1] = {GA_TYPE_INT16};
	int			keycol = 0;
	GaAggSpec	spec[1] = {{GA_AGG_COUNT_ROWS, -1, -1}};
	GaAggRequest req;
	GaAgg	   *agg;
	GaStatus	st;
	int			b;

	memset(&req, 0, sizeof(req));
	req.ncolumns = 1;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = &keycol;
	req.naggs = 1;
	req.aggs = spec;
	req.batch_rows = 100;
	req.estimated_groups = 10;
	req.strategy = strategy;
	req.fail_at_batch = 2;
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		return rr.mismatches;
	}
	for (b = 1; b <= 2; b++)
	{
		GaBatch    *batch = ga_agg_next_batch(agg, test_wait, &ws, &st);
		int			ok;

		if (batch == NULL)
		{
			report(&rr, "next_batch %d failed: code %d: %s", b, st.code, st.message);
			break;
		}
		batch->nrows = 50;
		memset(batch->columns[0].values, 0, 100);
		ok = ga_agg_submit(agg, batch, test_wait, &ws, &st);
		if (b == 1 && !ok)
			report(&rr, "submit 1 failed: code %d: %s", st.code, st.message);
		if (b == 2 && (ok || st.code == GA_OK || st.message[0] == '\0'))
			report(&rr, "submit 2 should fail (injected), got ok=%d code %d", ok, st.code);
	}
	ga_agg_destroy(agg);
	return rr.mismatches;
}

/* Malformed requests must be refused with GA_ERR_INVALID, not crash. */
int64_t
api_invalid(GaDevice *dev, const char *label)
{
	RunReport	rr = {-1, label, 0, 0, NULL};
	GaValueType types[3] = {GA_TYPE_FLOAT64, GA_TYPE_INT32, GA_TYPE_FLOAT32};
	int			float_key = 0,
				int_key = 1;
	GaAggSpec	bad_aggs[][1] = {
		{{GA_AGG_SUM_INT, 0, -1}},	/* integer sum of a float */
		{{GA_AGG_SUM_FLOAT64, 1, -1}},	/* float sum of an integer */
		{{GA_AGG_SUM_FLOAT32, 0, -1}},	/* float32 sum of a float64 */
		{{GA_AGG_COUNT_NONFINITE, 1, -1}},	/* infinities of an integer */
		{{GA_AGG_MIN, 7, -1}},		/* no such column */
		{{(GaAggOp) 99, 1, -1}},	/* no such operation */
	};
	GaAggRequest req;
	GaStatus	st;
	GaAgg	   *agg;
	size_t		i;

	memset(&req, 0, sizeof(req));
	req.ncolumns = 3;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = &float_key;
	req.naggs = 0;
	req.batch_rows = 10;
	agg = ga_agg_create(dev, &req, &st);
	if (agg != NULL || st.code != GA_ERR_INVALID)
		report(&rr, "a float key column was accepted (code %d)", st.code);
	ga_agg_destroy(agg);

	req.key_columns = &int_key;
	req.naggs = 1;
	for (i = 0; i < sizeof(bad_aggs) / sizeof(bad_aggs[0]); i++)
	{
		req.aggs = bad_aggs[i];
		agg = ga_agg_create(dev, &req, &st);
		if (agg != NULL || st.code != GA_ERR_INVALID)
			report(&rr, "bad aggregate %zu was accepted (code %d)", i, st.code);
		ga_agg_destroy(agg);
	}

#ifdef GA_MAX_AGG_OPS
	{
		GaAggSpec	many[GA_MAX_AGG_OPS + 1];

		for (i = 0; i < GA_MAX_AGG_OPS + 1; i++)
			many[i].op = GA_AGG_COUNT_ROWS, many[i].column = -1;
		req.aggs = many;
		req.naggs = GA_MAX_AGG_OPS + 1;
		agg = ga_agg_create(dev, &req, &st);
		if (agg != NULL || st.code != GA_ERR_INVALID)
			report(&rr, "more than GA_MAX_AGG_OPS aggregates were accepted (code %d)", st.code);
		ga_agg_destroy(agg);
	}
#endif

	req.naggs = 0;
	req.batch_rows = 0;
	agg = ga_agg_create(dev, &req, &st);
	if (agg != NULL || st.code != GA_ERR_INVALID)
		report(&rr, "a batch size of 0 was accepted (code %d)", st.code);
	ga_agg_destroy(agg);
	return rr.mismatches;
}
