/*-------------------------------------------------------------------------
 *
 * join_key.h
 *	  The key of a hashed aggjoin step, on several columns or on strings
 *	  (the "A step joins on one key or on several" part of
 *	  gpuagg_device.h): the hash of a whole
 *	  key, shared by device.c (which hashes the build rows), the CPU device
 *	  and the GPU kernels (which hash the rows they look up), so that they
 *	  cannot disagree; and the choice of a seed under which the build's
 *	  hashes are free of collisions (join_key.c, host only).  Internal to
 *	  cuda/; no PostgreSQL and no CUDA runtime header.
 *
 * A step of several keys, or of string keys (a hashed step), runs as a
 * step of one: device.c hashes every listed build row's key columns into
 * one int64, and the devices build their tables on those hashes exactly as
 * on a single key.  A row looked
 * up is hashed the same way, found among the build's hashes, and then
 * rechecked: its key is compared with the key of the first build row of
 * its hash, and a row whose key differs has no match.  That is the Rapids
 * report's table over several key columns: one hash code of all the keys
 * for the position, then a compare of the keys themselves.
 *
 * A string key enters the hash as ga_hash_bytes of its bytes and is
 * compared byte by byte (ga_join_key_component and
 * ga_join_key_components_equal below).
 *
 * One compare suffices because the seed is chosen so that no two distinct
 * keys of the build share a hash: all build rows of one hash then hold the
 * same key, and a row either equals all of them or none.  device.c tries
 * the seeds ga_join_key_seed(0), (1), ... until the build's hashes are free
 * of collisions (the cuckoo hash join report's re-hash with new constants
 * when a hash function fails); with a 64-bit hash, one seed nearly always
 * suffices.  docs/references.md lists the papers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_JOIN_KEY_H
#define GPUAGG_JOIN_KEY_H

#include <stdint.h>
#if !defined(__CUDACC__)
#include <string.h>
#endif

#include "gpuagg_device.h"
#include "gpuagg_hash.h"

/* Seeds device.c tries before it gives up on a build (see join_key.c). */
#define GA_JOIN_KEY_SEED_TRIES 8

/*
 * The hash of a whole key k[0 .. nkeys - 1] under seed: each value mixed
 * with its position, folded into the running hash and mixed again, so
 * that permuted keys ((1, 2) and (2, 1)) and keys sharing a component
 * ((1, 2) and (1, 3)) hash apart.  A kernel that holds the values in
 * registers folds them one at a time with ga_join_key_hash_start and
 * ga_join_key_hash_add, which give the same hash.
 */
GA_INLINE uint64_t
ga_join_key_hash_start(uint64_t seed)
{
	return ga_splitmix64(seed + GA_HASH_GOLDEN);
}

/* Fold value v, the key's component i, into the running hash h. */
GA_INLINE uint64_t
ga_join_key_hash_add(uint64_t h, int64_t v, int i)
{
	uint64_t	x = (uint64_t) v + (uint64_t) (i + 1) * GA_HASH_GOLDEN;

	return ga_splitmix64(h ^ ga_splitmix64(x));
}

/* The hash of key k[0 .. nkeys - 1] under seed, folded as above. */
GA_INLINE int64_t
ga_join_key_hash(uint64_t seed, const int64_t *k, int nkeys)
{
	uint64_t	h = ga_join_key_hash_start(seed);
	int			i;

	for (i = 0; i < nkeys; i++)
		h = ga_join_key_hash_add(h, k[i], i);
	return (int64_t) h;
}

#if !defined(__CUDACC__)

/*
 * The value row `row` of key column col gives a key's hash: an int64
 * column's value, or a GA_TYPE_STRING column's bytes hashed by
 * ga_hash_bytes (the hash of a group key's bytes too), so that a string
 * key folds into the whole key's hash as an integer key does.
 */
static inline int64_t
ga_join_key_component(const GaColumn *col, int64_t row)
{
	uint32_t	start;

	if (col->type != GA_TYPE_STRING)
		return ((const int64_t *) col->values)[row];
	start = ga_string_start(col, row);
	return (int64_t) ga_hash_bytes(col->bytes + start,
								   ((const uint32_t *) col->values)[row] - start);
}

/*
 * Whether row ra of key column a and row rb of key column b (of one type)
 * hold equal keys: equal int64 values, or equal bytes.
 */
static inline int
ga_join_key_components_equal(const GaColumn *a, int64_t ra, const GaColumn *b, int64_t rb)
{
	uint32_t	start_a,
				start_b,
				len;

	if (a->type != GA_TYPE_STRING)
		return ((const int64_t *) a->values)[ra] == ((const int64_t *) b->values)[rb];
	start_a = ga_string_start(a, ra);
	start_b = ga_string_start(b, rb);
	len = ((const uint32_t *) a->values)[ra] - start_a;
	return len == ((const uint32_t *) b->values)[rb] - start_b &&
		(len == 0 || memcmp(a->bytes + start_a, b->bytes + start_b, len) == 0);
}

/* join_key.c: the seed choice (host only) */

/* The seed of try `attempt` (0 .. GA_JOIN_KEY_SEED_TRIES - 1). */
extern uint64_t ga_join_key_seed(int attempt);

/*
 * Whether n hashes are free of collisions: every two rows i, j with
 * hashes[i] == hashes[j] hold equal keys, the values of build rows
 * rows[i], rows[j] in payload's columns columns[0 .. nkeys - 1] (int64
 * or string, valid in those rows).  Returns 1 when free, 0 on a collision, -1 when
 * out of host memory.
 */
extern int	ga_join_key_collision_free(const GaBatch *payload, const int *columns, int nkeys,
									   const uint32_t *rows, const int64_t *hashes, int64_t n);

/*
 * Hash the keys of build rows rows[0 .. n - 1] (payload's columns
 * columns[0 .. nkeys - 1], int64 or string and valid in those rows, each
 * as ga_join_key_component) into hashes[],
 * under the first seed of ga_join_key_seed that leaves them free of
 * collisions, stored in *seed.  Asks the wait callback between tries.
 * Returns 0 with status when out of memory, cancelled, or when no seed
 * was free of collisions (GA_ERR_DEVICE).
 */
extern int	ga_join_key_hash_build(const GaBatch *payload, const int *columns, int nkeys,
								   const uint32_t *rows, int64_t n, int64_t *hashes,
								   uint64_t *seed, GaWaitCallback wait, void *arg,
								   GaStatus *status);

#endif

#endif							/* GPUAGG_JOIN_KEY_H */
