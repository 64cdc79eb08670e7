/*-------------------------------------------------------------------------
 *
 * batch/exact_key.h
 *	  Join keys whose device key is the value itself (exact_key.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_EXACT_KEY_H
#define GPUAGG_EXACT_KEY_H

/* batch/exact_key.c */
extern bool GpuJoinKeyIsExact(Oid opno, Oid outer_type, Oid inner_type);
extern bool GpuJoinExactKeyType(Oid type);
extern int64 GpuJoinExactKey(Datum value, Oid type);

#endif							/* GPUAGG_EXACT_KEY_H */
