/*-------------------------------------------------------------------------
 *
 * batch/key_dict.h
 *	  Dictionaries of keys with no fixed-width integer form (key_dict.c):
 *	  text, varchar, bpchar, numeric, uuid, interval.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_KEY_DICT_H
#define GPUAGG_KEY_DICT_H

#include "nodes/nodes.h"

typedef struct KeyDict KeyDict;

/*
 * A SPELLING column (batch/builder.c) carries a row's number shifted left
 * by GPUAGG_SPELLING_BITS plus the rank of its spelling among its key's,
 * so a key has at most GPUAGG_MAX_SPELLINGS spellings.
 */
#define GPUAGG_SPELLING_BITS 24
#define GPUAGG_SPELLING_MASK ((INT64CONST(1) << GPUAGG_SPELLING_BITS) - 1)
#define GPUAGG_MAX_SPELLINGS (1 << GPUAGG_SPELLING_BITS)

/* batch/key_dict.c */
extern KeyDict *KeyDictCreate(Oid type, MemoryContext cxt);
extern bool KeyDictTypeSupported(Oid type);
extern bool KeyDictHasSpellings(Oid type);
extern bool KeyDictIsPaddedBpchar(Node *key);
extern bool KeyDictWholeDateField(Node *expr, Node **arg);
extern bool KeyDictKeyHasOneSpelling(Node *key);
extern int32 KeyDictIntern(KeyDict *dict, Datum value, MemoryContext scratch);
extern void KeyDictInternMany(KeyDict *dict, const Datum *values, const bool *isnull,
							  int n, int32 *ids, MemoryContext scratch);
extern void KeyDictKeysOf(KeyDict *dict, const int32 *spellings, const bool *isnull,
						  int n, int32 *keys);
extern int32 KeyDictKey(KeyDict *dict, int32 spelling);
extern bool KeyDictSpellings(KeyDict *dict);
extern int32 KeyDictRank(KeyDict *dict, int32 spelling);
extern int32 KeyDictSize(KeyDict *dict);
extern Datum KeyDictValue(KeyDict *dict, int32 spelling);
extern Datum KeyDictKeyValue(KeyDict *dict, int32 key, int32 rank);
extern Size KeyDictValueSize(KeyDict *dict, int32 id);
extern Datum KeyDictValueFromBytes(KeyDict *dict, const char *bytes, Size len,
								   MemoryContext scratch);

#endif							/* GPUAGG_KEY_DICT_H */
