/*-------------------------------------------------------------------------
 *
 * join_key.c
 *	  The seed choice of a hashed aggjoin step (several keys, or string
 *	  keys: join_key.h):
 *	  device.c hashes the listed build rows' keys here, under the first
 *	  seed that leaves the build's hashes free of collisions, before either
 *	  device sees them.
 *
 * The check is one pass over the hashes with an open-addressing table
 * keyed by hash (linear probing, a power of two of slots, at least twice
 * the rows), holding for each distinct hash the index of its first row: a
 * later row of the same hash compares its key with that row's, and a
 * different key is a collision.  So keys are compared only where hashes
 * are equal (duplicates of a key, nearly always), and the table costs
 * four bytes a slot.  On a collision the next seed is tried (the cuckoo
 * hash join report's re-hash with new constants).
 *
 *-------------------------------------------------------------------------
 */
#include "gpuagg_hash.h"
#include "join_key.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* An empty slot (row indexes stay below it: n <= GA_JOIN_MAX_BUILD_ROWS). */
#define JOIN_KEY_EMPTY UINT32_MAX

/* Smallest table. */
#define JOIN_KEY_MIN_SLOTS 16

/* Rows of work between two calls of the wait callback. */
#define JOIN_KEY_WAIT_EVERY_ROWS 65536

/* What a pass over the rows ended with, besides a verdict. */
#define JOIN_KEY_OUT_OF_MEMORY (-1)
#define JOIN_KEY_CANCELLED (-2)

/*
 * The seed of try `attempt`: distinct and unrelated for every attempt
 * (a mix of the attempt's number, offset by the fractional bits of
 * sqrt(2) so that try 0 is not seed 0).
 */
uint64_t
ga_join_key_seed(int attempt)
{
	return ga_splitmix64((uint64_t) attempt * GA_HASH_GOLDEN +
						 UINT64_C(0x6a09e667f3bcc909));
}

/* Hash value (ga_join_key_component) of key column `column` of payload row `row`. */
static inline int64_t
join_key_value(const GaBatch *payload, int column, uint32_t row)
{
	return ga_join_key_component(&payload->columns[column], row);
}

/* Whether build rows a and b hold equal keys in every key column. */
static int
join_key_rows_equal(const GaBatch *payload, const int *columns, int nkeys, uint32_t a,
					uint32_t b)
{
	int			i;

	for (i = 0; i < nkeys; i++)
		if (!ga_join_key_components_equal(&payload->columns[columns[i]], a,
										  &payload->columns[columns[i]], b))
			return 0;
	return 1;
}

/*
 * Count rows of work and ask the wait callback every
 * JOIN_KEY_WAIT_EVERY_ROWS of them; nonzero when it says stop.
 */
static int
join_key_should_stop(int64_t *since_wait, GaWaitCallback wait, void *arg)
{
	if (++*since_wait < JOIN_KEY_WAIT_EVERY_ROWS)
		return 0;
	*since_wait = 0;
	return wait != NULL && wait(arg) != 0;
}

/*
 * The collision check (see the file's notes): 1 free, 0 a collision,
 * JOIN_KEY_OUT_OF_MEMORY or JOIN_KEY_CANCELLED.
 */
static int
join_key_check(const GaBatch *payload, const int *columns, int nkeys, const uint32_t *rows,
			   const int64_t *hashes, int64_t n, GaWaitCallback wait, void *arg)
{
	int64_t		nslots = JOIN_KEY_MIN_SLOTS;
	int64_t		since_wait = 0;
	uint32_t   *slots;
	uint64_t	mask;
	int64_t		i;
	int			result = 1;

	while (nslots < 2 * n)
		nslots *= 2;
	slots = ga_alloc_array(nslots, sizeof(uint32_t));
	if (slots == NULL)
		return JOIN_KEY_OUT_OF_MEMORY;
	memset(slots, 0xff, (size_t) nslots * sizeof(uint32_t));
	mask = (uint64_t) nslots - 1;
	for (i = 0; i < n && result == 1; i++)
	{
		uint64_t	pos;

		for (pos = ga_mix64((uint64_t) hashes[i]) & mask;; pos = (pos + 1) & mask)
		{
			uint32_t	first = slots[pos];

			if (first == JOIN_KEY_EMPTY)
			{
				slots[pos] = (uint32_t) i;
				break;
			}
			if (hashes[first] == hashes[i])
			{
				if (!join_key_rows_equal(payload, columns, nkeys, rows[first], rows[i]))
					result = 0;
				break;
			}
		}
		if (join_key_should_stop(&since_wait, wait, arg))
			result = JOIN_KEY_CANCELLED;
	}
	free(slots);
	return result;
}

/* Whether n hashes of build rows are free of collisions (join_key.h). */
int
ga_join_key_collision_free(const GaBatch *payload, const int *columns, int nkeys,
						   const uint32_t *rows, const int64_t *hashes, int64_t n)
{
	int			result = join_key_check(payload, columns, nkeys, rows, hashes, n, NULL, NULL);

	return result == JOIN_KEY_OUT_OF_MEMORY ? -1 : result;
}

/*
 * Hash the keys of the n build rows under seed into hashes; 0 when the
 * wait callback says stop.
 */
static int
join_key_hash_rows(const GaBatch *payload, const int *columns, int nkeys, const uint32_t *rows,
				   int64_t n, uint64_t seed, int64_t *hashes, GaWaitCallback wait, void *arg)
{
	int64_t		since_wait = 0;
	int64_t		i;
	int64_t		k[GA_AGG_MAX_JOIN_KEYS];
	int			j;

	for (i = 0; i < n; i++)
	{
		for (j = 0; j < nkeys; j++)
			k[j] = join_key_value(payload, columns[j], rows[i]);
		hashes[i] = ga_join_key_hash(seed, k, nkeys);
		if (join_key_should_stop(&since_wait, wait, arg))
			return 0;
	}
	return 1;
}

/*
 * Hash the build rows' keys under the first seed free of collisions
 * (join_key.h); each try is a hashing pass and a check.
 */
int
ga_join_key_hash_build(const GaBatch *payload, const int *columns, int nkeys,
					   const uint32_t *rows, int64_t n, int64_t *hashes, uint64_t *seed,
					   GaWaitCallback wait, void *arg, GaStatus *status)
{
	int			attempt;

	for (attempt = 0; attempt < GA_JOIN_KEY_SEED_TRIES; attempt++)
	{
		uint64_t	s = ga_join_key_seed(attempt);
		int			result;

		if (!join_key_hash_rows(payload, columns, nkeys, rows, n, s, hashes, wait, arg))
			return ga_status_set(status, GA_ERR_CANCELLED,
								 "the aggjoin's build was cancelled while hashing its keys");
		result = join_key_check(payload, columns, nkeys, rows, hashes, n, wait, arg);
		if (result == JOIN_KEY_OUT_OF_MEMORY)
			return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
								 "out of host memory checking the hashes of an aggjoin's build keys");
		if (result == JOIN_KEY_CANCELLED)
			return ga_status_set(status, GA_ERR_CANCELLED,
								 "the aggjoin's build was cancelled while hashing its keys");
		if (result == 1)
		{
			*seed = s;
			ga_status_ok(status);
			return 1;
		}
	}
	return ga_status_set(status, GA_ERR_DEVICE,
						 "the hashes of the %d key columns of an aggjoin's build side collided under each of %d seeds",
						 nkeys, GA_JOIN_KEY_SEED_TRIES);
}
