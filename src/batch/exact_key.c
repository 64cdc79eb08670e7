/*-------------------------------------------------------------------------
 *
 * batch/exact_key.c
 *	  Join keys whose device key is the value itself.
 *
 * A device joins on int64 keys.  For the integer-like types whose equality
 * is the equality of their values widened to int64 (integers, date,
 * timestamp, bool, oid), the key is that value: equal keys are equal
 * values, so a match needs no recheck, and values of different widths
 * (int4 = int8) meet.  Every other key is hashed and rechecked
 * (hashjoin/exec.c) or travels as a dictionary id (batch/key_dict.c).
 * GpuHashJoin, an aggjoin's batch columns (GPUAGG_ENC_JOIN_KEY) and the
 * probe-key filter all key a value through GpuJoinExactKey, so that they
 * agree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "batch/exact_key.h"

/*
 * Whether an equality's device key can be the value itself: integer-like
 * types whose operator is plain equality of the (widened) integers, so that
 * no recheck is needed.  Everything else is hashed and rechecked.
 */
bool
GpuJoinKeyIsExact(Oid opno, Oid outer_type, Oid inner_type)
{
	switch (get_opcode(opno))
	{
		case F_INT2EQ:
		case F_INT4EQ:
		case F_INT8EQ:
		case F_INT24EQ:
		case F_INT42EQ:
		case F_INT28EQ:
		case F_INT82EQ:
		case F_INT48EQ:
		case F_INT84EQ:
		case F_DATE_EQ:
		case F_TIMESTAMP_EQ:
		case F_TIMESTAMPTZ_EQ:
		case F_BOOLEQ:
		case F_OIDEQ:
			break;
		default:
			return false;
	}
	/* the values themselves must be of the types those functions take */
	return GpuJoinExactKeyType(getBaseType(outer_type)) &&
		GpuJoinExactKeyType(getBaseType(inner_type));
}

/* Whether values of a (base) type have an exact device key. */
bool
GpuJoinExactKeyType(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
		case OIDOID:
			return true;
		default:
			return false;
	}
}

/*
 * The device key of a value of an exact key type (GpuJoinExactKeyType): the
 * integer itself, widened, so that equal values of any width are equal keys.
 */
int64
GpuJoinExactKey(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(value);
		case INT4OID:
		case DATEOID:
			return DatumGetInt32(value);
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return DatumGetInt64(value);
		case BOOLOID:
			return DatumGetBool(value) ? 1 : 0;
		case OIDOID:
			return DatumGetObjectId(value);
		default:
			elog(ERROR, "gpuagg: type %u has no exact join key", type);
			return 0;			/* keep the compiler quiet */
	}
}
