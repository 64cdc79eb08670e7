/*-------------------------------------------------------------------------
 *
 * custom_private.h
 *	  What every custom node's private lists (CustomPath.custom_private,
 *	  CustomScan.custom_private) are made of.
 *
 * A plan's custom_private is copied with copyObject (the plan cache) and
 * serialized with nodeToString for parallel workers, so it holds plain
 * nodes only: Integer, Float, String, lists of them, and expressions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_CUSTOM_PRIVATE_H
#define GPUAGG_CUSTOM_PRIVATE_H

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

#endif							/* GPUAGG_CUSTOM_PRIVATE_H */
