/*-------------------------------------------------------------------------
 *
 * custom_private.h
 *	  What every custom node's private lists (CustomPath.custom_private,
 *	  CustomScan.custom_private) are made of.
 *
 * A plan's custom_private is copied with copyObject (the plan cache) and
 * serialized with nodeToString for parallel workers, so it holds plain
 * nodes only: Integer, Float, String, lists of them, and expressions.
 * Each node packs and unpacks its lists in one pair of functions
 * (hashagg/private.c, hashjoin/private.c), every list laid out by an enum
 * of its fields, as postgres_fdw's FdwScanPrivateIndex lays out its own:
 * the packing function makes a list of the enum's length and sets each
 * field by its name, the reading one checks the length and reads each
 * field by its name.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CUSTOM_PRIVATE_H
#define GPUAGG_CUSTOM_PRIVATE_H

#include "nodes/pg_list.h"
#include "nodes/value.h"

/*
 * A Float node that reads back as a Float: readfuncs.c turns a token
 * without a decimal point into an Integer, so the value is always printed
 * with one.
 */
static inline Node *
GpuAggFloatNode(double value)
{
	return (Node *) makeFloat(psprintf("%.1f", value));
}

/* A list of nfields NULL fields, to set with GpuAggPrivateSet. */
static inline List *
GpuAggPrivateFields(int nfields)
{
	List	   *list = NIL;
	int			i;

	for (i = 0; i < nfields; i++)
		list = lappend(list, NULL);
	return list;
}

/* Set field `field` of a list made by GpuAggPrivateFields. */
static inline void
GpuAggPrivateSet(List *list, int field, void *value)
{
	lfirst(list_nth_cell(list, field)) = value;
}

/* An integer list of nfields zeros, to set with GpuAggPrivateSetInt. */
static inline List *
GpuAggPrivateIntFields(int nfields)
{
	List	   *list = NIL;
	int			i;

	for (i = 0; i < nfields; i++)
		list = lappend_int(list, 0);
	return list;
}

/* Set integer field `field` of a list made by GpuAggPrivateIntFields. */
static inline void
GpuAggPrivateSetInt(List *list, int field, int value)
{
	lfirst_int(list_nth_cell(list, field)) = value;
}

/* Fail unless a private list has the nfields fields its enum names. */
static inline void
GpuAggPrivateCheck(List *list, int nfields, const char *what)
{
	if (list_length(list) != nfields)
		elog(ERROR, "gpuagg: malformed %s in a private list", what);
}

#endif							/* GPUAGG_CUSTOM_PRIVATE_H */
