/*-------------------------------------------------------------------------
 *
 * finalize/variance.c
 *	  var_samp, variance, var_pop, stddev_samp, stddev and stddev_pop of
 *	  integers and numerics, finalized by PostgreSQL's own final functions.
 *
 * PostgreSQL keeps, for these aggregates, the count N of finite inputs, the
 * exact sum(x) and sum(x * x) (numeric, or 128-bit integers for int2 and
 * int4, which it converts to numeric before finalizing), the counts of NaN,
 * +Infinity and -Infinity, and the largest input scale.  Its final
 * functions (numeric_stddev_internal() in numeric.c) then choose the scales
 * of the products, of the division and of sqrt from those sums' display
 * scales, which is hard to reproduce digit for digit, and would have to be
 * kept in step with every release.
 *
 * So the device only sums exactly (finalize/numeric.c, hashagg/layout.c), and
 * this file writes the sums in the form numeric_serialize() gives a
 * NumericAggState for parallel aggregation, lets numeric_deserialize() turn
 * that into a state, and calls numeric_var_samp(), numeric_var_pop(),
 * numeric_stddev_samp() or numeric_stddev_pop() on it: the very code of a
 * native plan, with the very sums.  Integer inputs give a state of display
 * scale 0, as int8_accum() builds one and as numeric_poly_stddev_internal()
 * builds one for int2 and int4; numeric inputs of scale s (all values of a
 * bounded argument have that scale) give sum(x) of scale s and sum(x * x) of
 * scale 2 s, as do_numeric_accum() accumulates them.
 *
 * The serialized form is N (int64), sum(x), sum(x * x) (each as a NumericVar:
 * int32 ndigits, weight, sign and display scale, then the int16 base-10000
 * digits), the largest input scale (int32), how many inputs had it, and the
 * counts of NaN, +Infinity and -Infinity (int64 each); it is the same in
 * PostgreSQL 15, 17 and 18.  numeric_deserialize() only accepts being called
 * for an aggregate (AggCheckCallContext()); a zeroed AggState node as the
 * call's context satisfies that check, which reads nothing else of it
 * unless asked for the aggregate's memory context.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "nodes/execnodes.h"
#include "utils/fmgrprotos.h"

#include "compat.h"
#include "finalize/stats.h"

/* The context of the calls: AggCheckCallContext() only checks its tag. */
static AggState variance_context;

/*
 * Append a finite numeric to buf as numericvar_serialize() writes a
 * NumericVar, reading it from numeric_send()'s binary form (the same fields
 * as 16-bit integers).
 */
static void
send_numeric_var(StringInfo buf, Datum value)
{
	bytea	   *binary = DatumGetByteaPP(DirectFunctionCall1(numeric_send, value));
	StringInfoData in;
	int			ndigits;
	int			i;

	in.data = VARDATA_ANY(binary);
	in.len = VARSIZE_ANY_EXHDR(binary);
	in.maxlen = in.len;
	in.cursor = 0;
	ndigits = (uint16) pq_getmsgint(&in, 2);
	pq_sendint32(buf, ndigits);
	pq_sendint32(buf, (int16) pq_getmsgint(&in, 2));	/* weight */
	pq_sendint32(buf, (uint16) pq_getmsgint(&in, 2));	/* sign */
	pq_sendint32(buf, (uint16) pq_getmsgint(&in, 2));	/* display scale */
	for (i = 0; i < ndigits; i++)
		pq_sendint16(buf, (int16) pq_getmsgint(&in, 2));
	pq_getmsgend(&in);
}

/*
 * The result of a variance or stddev aggregate over n finite values whose
 * exact sum and sum of squares are given (numerics of display scale `scale`
 * and 2 * scale), and nan, pinf, ninf special values: what PostgreSQL's final
 * function returns for that state, NULL included (*isnull).
 */
Datum
GpuAggVarianceResult(GpuAggKind kind, int64 n, int64 nan, int64 pinf, int64 ninf,
					 Datum sum, Datum sum_squares, int scale, bool *isnull)
{
	StringInfoData buf;
	LOCAL_FCINFO(fcinfo, 2);
	Datum		state;
	Datum		result;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	send_numeric_var(&buf, sum);
	send_numeric_var(&buf, sum_squares);
	pq_sendint32(&buf, n > 0 ? scale : 0);	/* largest input scale */
	pq_sendint64(&buf, n);		/* inputs of that scale: all */
	pq_sendint64(&buf, nan);
	pq_sendint64(&buf, pinf);
	pq_sendint64(&buf, ninf);

	NodeSetTag(&variance_context, T_AggState);
	InitFunctionCallInfoData(*fcinfo, NULL, 2, InvalidOid, (Node *) &variance_context, NULL);
	fcinfo->args[0].value = PointerGetDatum(pq_endtypsend(&buf));
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = (Datum) 0;
	fcinfo->args[1].isnull = false;
	state = numeric_deserialize(fcinfo);
	if (fcinfo->isnull)
		elog(ERROR, "gpuagg: numeric_deserialize returned NULL");

	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, (Node *) &variance_context, NULL);
	fcinfo->args[0].value = state;
	fcinfo->args[0].isnull = false;
	switch (kind)
	{
		case GPUAGG_VAR_SAMP:
			result = numeric_var_samp(fcinfo);
			break;
		case GPUAGG_VAR_POP:
			result = numeric_var_pop(fcinfo);
			break;
		case GPUAGG_STDDEV_SAMP:
			result = numeric_stddev_samp(fcinfo);
			break;
		case GPUAGG_STDDEV_POP:
			result = numeric_stddev_pop(fcinfo);
			break;
		default:
			elog(ERROR, "gpuagg: unexpected variance kind %d", (int) kind);
			result = (Datum) 0; /* keep compiler quiet */
	}
	*isnull = fcinfo->isnull;
	return result;
}
