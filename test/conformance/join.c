/*-------------------------------------------------------------------------
 *
 * join.c
 *	  Device conformance test of the hash join (the "Hash join" part of
 *	  gpuagg_device.h): seeded random build sides and probe batches go to
 *	  every available device, and what comes back is compared with a
 *	  reference computed here, independently of cuda/, and across devices.
 *
 * The reference sorts the build's (key, row) pairs with qsort by the key's
 * bits as uint64, ties by input position: the contract's sorted_rows order,
 * which both devices promise.  A probe row's expected answer is found by
 * binary search in that order: first = the key's lower bound, count = the
 * width of its run, 0 for an absent key or a null row.  So sorted_rows,
 * first (where count > 0), count, the batch totals and the statistics are
 * all checked exactly.  Small cases are also checked by brute force: for
 * every probe row, the build rows with an equal key, walked in input
 * order, must be exactly sorted_rows[first .. first + count).  Null probe
 * rows carry keys that do exist in the build, so a device that reads them
 * shows.  Both devices write first = 0 where count is 0 (stronger than the
 * contract), so the devices' answers must be identical byte for byte.
 *
 * Cases: an empty build, an all-null probe batch, unique keys, one key on
 * 100k build rows (skew), extreme and negative int64 values, keys that
 * differ only in their high bits, probe batches with nulls, empty batches
 * and batches of a few rows, a probe batch of 2^20 rows on a build of over
 * 500K distinct keys (more rows and keys than a GPU runs threads at once,
 * so every grid-stride loop turns), keys that all hash to the table's last
 * slot (one probe chain that wraps around, walked to its end by misses),
 * then random mixtures.  GPUAGG_JOIN_BIG_ROWS=N in the environment adds one
 * case of N build rows (for the GPU host: N above 2^28 reaches CUB's
 * multi-portion sort; the GPU device takes at most INT_MAX).  The API
 * checks are in join_api.c.
 *
 *-------------------------------------------------------------------------
 */
#include "gpuagg_hash.h"
#include "join.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* Brute force when build rows times probe rows stay below this. */
#define JOIN_BRUTE_FORCE_WORK 4000000

/* ------------------------------------------------------------------------
 * Small helpers: random numbers, reports, the wait callback
 * ------------------------------------------------------------------------
 */
typedef struct JoinRng
{
	uint64_t	state;
} JoinRng;

/* splitmix64's output function: a bijection of 64-bit integers. */
uint64_t
join_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The next 64 random bits (splitmix64). */
static uint64_t
jrng_next(JoinRng *rng)
{
	rng->state += UINT64_C(0x9e3779b97f4a7c15);
	return join_mix(rng->state);
}

/* A uniform integer in [lo, hi]. */
static int64_t
jrng_range(JoinRng *rng, int64_t lo, int64_t hi)
{
	uint64_t	span = (uint64_t) hi - (uint64_t) lo + 1;

	if (span == 0)
		return (int64_t) jrng_next(rng);
	return (int64_t) ((uint64_t) lo + jrng_next(rng) % span);
}

/* True with probability p. */
static int
jrng_chance(JoinRng *rng, double p)
{
	return (double) (jrng_next(rng) >> 11) * (1.0 / 9007199254740992.0) < p;
}

/* An integer in [lo, hi] (lo >= 0), roughly uniform in its logarithm. */
static int64_t
jrng_log_range(JoinRng *rng, int64_t lo, int64_t hi)
{
	double		u = (double) (jrng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
	int64_t		top = lo + (int64_t) exp(u * log((double) (hi - lo) + 1.0));

	if (top > hi)
		top = hi;
	return jrng_range(rng, lo, top);
}


/* The wait callback: counts calls, and asks to stop when told to. */
int
join_wait(void *arg)
{
	JoinWait   *w = arg;

	w->calls++;
	if (w->cancel)
	{
		w->cancels++;
		return 1;
	}
	return 0;
}

/* Milliseconds on a monotonic clock. */
static double
join_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------------
 * Cases
 * ------------------------------------------------------------------------
 */
typedef enum KeyDist
{
	KEYS_UNIQUE,				/* distinct, spread over all 64 bits */
	KEYS_SMALL,					/* a small range around 0 (negatives too) */
	KEYS_SKEW,					/* one key on heavy_rows rows, the rest small */
	KEYS_EXTREME,				/* INT64_MIN, INT64_MAX, -1, 2^31, ... and neighbours */
	KEYS_HIGHBITS,				/* differ only above bit 40 */
	KEYS_MIXED,					/* each row from one of the above */
	KEYS_COLLIDE,				/* every key homes to the table's last slot;
								 * fixed cases only (probes cost O(domain)) */
	KEYS_NDIST
} KeyDist;

static const char *const key_dist_names[] = {
	"unique", "small", "skew", "extreme", "highbits", "mixed", "collide"
};

typedef struct JoinSpec
{
	const char *label;
	int64_t		nbuild;
	KeyDist		dist;
	int64_t		domain;			/* SMALL/SKEW/HIGHBITS: distinct values */
	int64_t		heavy_rows;		/* SKEW: rows of the heavy key */
	int			random_rows;	/* build row numbers random, not 0..n-1 */
	int64_t		nprobe;
	double		hit_rate;		/* probe rows that take an existing key */
	double		null_rate;
	int			all_null;
	int			force_has_nulls;	/* has_nulls set on batches without nulls */
	int64_t		batch_rows;
	int			empty_batches;	/* put empty batches in between */
} JoinSpec;

typedef struct JoinCase
{
	char		desc[200];
	int64_t		nbuild;
	int64_t    *bkeys;
	uint32_t   *brows;
	int64_t		nprobe;
	int64_t    *pkeys;
	uint8_t    *pnull;
	int			force_has_nulls;
	int64_t		batch_rows;
	int			nbatches;
	int64_t    *batch_sizes;

	/* the reference */
	uint64_t   *ref_keys;		/* sorted keys */
	uint32_t   *ref_rows;		/* sorted rows */
	int64_t		ref_distinct;
	uint32_t   *ref_first;		/* per probe row; 0 when count is 0 */
	uint32_t   *ref_count;
	int64_t    *ref_batch_total;
	int64_t		ref_total;
	int64_t		ref_bytes_sent;
} JoinCase;

/* What one device answered, for the comparison across devices. */
typedef struct JoinOutput
{
	int			complete;
	uint32_t   *sorted_rows;
	uint32_t   *first;
	uint32_t   *count;
	int64_t    *batch_total;
} JoinOutput;

static const int64_t extreme_keys[] = {
	INT64_MIN, INT64_MIN + 1, INT64_MIN + 2, -2, -1, 0, 1, 2,
	INT64_MAX - 2, INT64_MAX - 1, INT64_MAX,
	INT32_MIN, (int64_t) INT32_MIN - 1, INT32_MAX, (int64_t) INT32_MAX + 1,
	(int64_t) UINT32_MAX, (int64_t) UINT32_MAX + 1,
	INT64_C(1) << 62, -(INT64_C(1) << 62), INT64_C(0x0100000000000000),
	(int64_t) UINT64_C(0x8000000000000001), (int64_t) UINT64_C(0xff00000000000000),
	INT64_C(0x00ff00ff00ff00ff), INT64_C(255), INT64_C(256), INT64_C(-256),
};

#define NUM_EXTREME_KEYS ((int) (sizeof(extreme_keys) / sizeof(extreme_keys[0])))

/*
 * The devices' slot hash (ga_mix64, MurmurHash3's fmix64: cpu/hashjoin.c and
 * gpu/kernels/hashjoin.cu) and its inverse, to make keys whose hashes share
 * their low 32 bits: they all start probing at the same slot of any table
 * of up to 2^32 slots.  Every inverse is checked against ga_mix64 itself,
 * so a change of the devices' finalizer stops the test here rather than
 * quietly turning these keys into ordinary ones.
 */
/* The inverse of an odd number modulo 2^64 (Newton's iteration). */
static uint64_t
join_mul_inverse(uint64_t c)
{
	uint64_t	inv = c;		/* right in the low 3 bits */
	int			i;

	for (i = 0; i < 5; i++)
		inv *= 2 - c * inv;
	return inv;
}

/* The key whose fmix64 is h (x ^= x >> 33 is its own inverse). */
static int64_t
join_unfmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= join_mul_inverse(UINT64_C(0xc4ceb9fe1a85ec53));
	h ^= h >> 33;
	h *= join_mul_inverse(UINT64_C(0xff51afd7ed558ccd));
	h ^= h >> 33;
	return (int64_t) h;
}

/* The i-th key that homes to the last slot: hash = i << 32 | 0xffffffff. */
static int64_t
join_colliding_key(uint64_t i)
{
	uint64_t	h = (i << 32) | UINT64_C(0xffffffff);
	int64_t		k = join_unfmix64(h);

	if (ga_mix64((uint64_t) k) != h)
	{
		fprintf(stderr, "join.c: join_unfmix64 is not the inverse of ga_mix64\n");
		abort();
	}
	return k;
}

/* One build key of a distribution (SKEW's heavy key is placed by the caller). */
static int64_t
gen_key(JoinRng *rng, KeyDist dist, int64_t domain, uint64_t unique_base, int64_t i)
{
	if (dist == KEYS_MIXED)
		dist = (KeyDist) jrng_range(rng, KEYS_UNIQUE, KEYS_HIGHBITS);
	switch (dist)
	{
		case KEYS_UNIQUE:
			return (int64_t) join_mix(unique_base + (uint64_t) i);
		case KEYS_SMALL:
		case KEYS_SKEW:
			return jrng_range(rng, 0, domain - 1) - domain / 2;
		case KEYS_EXTREME:
			{
				int64_t		k = extreme_keys[jrng_range(rng, 0, NUM_EXTREME_KEYS - 1)];

				/* a neighbour now and then, wrapping around as uint64 */
				if (jrng_chance(rng, 0.3))
					k = (int64_t) ((uint64_t) k + (uint64_t) jrng_range(rng, -3, 3));
				return k;
			}
		case KEYS_HIGHBITS:
			return (int64_t) ((uint64_t) jrng_range(rng, 0, domain - 1) << 40);
		case KEYS_COLLIDE:
			return join_colliding_key((uint64_t) jrng_range(rng, 0, domain - 1));
		default:
			return 0;
	}
}

/*
 * A probe key that is most likely in no build: random bits or an extreme;
 * for KEYS_COLLIDE an absent key with the same home slot, whose lookup
 * walks the whole chain to the empty slot after it.
 */
static int64_t
gen_miss_key(JoinRng *rng, KeyDist dist, int64_t domain)
{
	if (dist == KEYS_COLLIDE)
		return join_colliding_key((uint64_t) domain + (uint64_t) jrng_range(rng, 0, 1000));
	if ((dist == KEYS_EXTREME || dist == KEYS_MIXED) && jrng_chance(rng, 0.5))
		return extreme_keys[jrng_range(rng, 0, NUM_EXTREME_KEYS - 1)];
	return (int64_t) jrng_next(rng);
}

/* Split the probe rows into batches (full ones, short ones, empty ones). */
static void
make_join_batches(JoinCase *c, const JoinSpec *s, JoinRng *rng)
{
	int64_t		left = c->nprobe;
	int			cap = 16;

	c->batch_sizes = malloc(sizeof(int64_t) * (size_t) cap);
	c->nbatches = 0;
	while (left > 0 || c->nbatches == 0)
	{
		int64_t		n;

		if (c->nbatches + 2 > cap)
		{
			cap *= 2;
			c->batch_sizes = realloc(c->batch_sizes, sizeof(int64_t) * (size_t) cap);
		}
		if (s->empty_batches && jrng_chance(rng, 0.15))
			c->batch_sizes[c->nbatches++] = 0;
		n = jrng_chance(rng, 0.7) ? c->batch_rows : jrng_range(rng, 1, c->batch_rows);
		if (n > left)
			n = left;
		c->batch_sizes[c->nbatches++] = n;
		left -= n;
	}
}

/* Order of two build entries: key as uint64, then input position. */
static const int64_t *sort_keys;

static int
build_entry_cmp(const void *pa, const void *pb)
{
	int64_t		a = *(const int64_t *) pa;
	int64_t		b = *(const int64_t *) pb;
	uint64_t	ka = (uint64_t) sort_keys[a];
	uint64_t	kb = (uint64_t) sort_keys[b];

	if (ka != kb)
		return ka < kb ? -1 : 1;
	return a < b ? -1 : (a > b);
}

/* The reference: sorted pairs, distinct keys, every probe row's answer. */
static void
join_reference(JoinCase *c)
{
	int64_t    *order = malloc(sizeof(int64_t) * (size_t) (c->nbuild + 1));
	int64_t		i,
				start = 0;
	int			b;

	for (i = 0; i < c->nbuild; i++)
		order[i] = i;
	sort_keys = c->bkeys;
	qsort(order, (size_t) c->nbuild, sizeof(int64_t), build_entry_cmp);
	c->ref_keys = malloc(sizeof(uint64_t) * (size_t) (c->nbuild + 1));
	c->ref_rows = malloc(sizeof(uint32_t) * (size_t) (c->nbuild + 1));
	c->ref_distinct = 0;
	for (i = 0; i < c->nbuild; i++)
	{
		c->ref_keys[i] = (uint64_t) c->bkeys[order[i]];
		c->ref_rows[i] = c->brows[order[i]];
		if (i == 0 || c->ref_keys[i] != c->ref_keys[i - 1])
			c->ref_distinct++;
	}
	free(order);

	c->ref_first = malloc(sizeof(uint32_t) * (size_t) (c->nprobe + 1));
	c->ref_count = malloc(sizeof(uint32_t) * (size_t) (c->nprobe + 1));
	c->ref_batch_total = calloc((size_t) c->nbatches, sizeof(int64_t));
	c->ref_total = 0;
	c->ref_bytes_sent = c->nbuild * 12;
	for (b = 0; b < c->nbatches; b++)
	{
		int64_t		n = c->batch_sizes[b];
		int			nulls = c->force_has_nulls;

		for (i = start; i < start + n; i++)
		{
			uint64_t	key = (uint64_t) c->pkeys[i];
			int64_t		lo = 0,
						hi = c->nbuild,
						end;

			c->ref_first[i] = 0;
			c->ref_count[i] = 0;
			if (c->pnull[i])
			{
				nulls = 1;
				continue;
			}
			while (lo < hi)		/* lower bound */
			{
				int64_t		mid = lo + (hi - lo) / 2;

				if (c->ref_keys[mid] < key)
					lo = mid + 1;
				else
					hi = mid;
			}
			end = lo;
			hi = c->nbuild;
			while (end < hi)	/* upper bound */
			{
				int64_t		mid = end + (hi - end) / 2;

				if (c->ref_keys[mid] <= key)
					end = mid + 1;
				else
					hi = mid;
			}
			if (end > lo)
			{
				c->ref_first[i] = (uint32_t) lo;
				c->ref_count[i] = (uint32_t) (end - lo);
				c->ref_batch_total[b] += end - lo;
			}
		}
		c->ref_total += c->ref_batch_total[b];
		c->ref_bytes_sent += n * 8 + (nulls ? (n + 7) / 8 : 0);
		start += n;
	}
}

/* Generate a case from its spec. */
static void
build_join_case(JoinCase *c, const JoinSpec *s, JoinRng *rng)
{
	uint64_t	unique_base = jrng_next(rng);
	int64_t		i;

	memset(c, 0, sizeof(*c));
	c->nbuild = s->nbuild;
	c->nprobe = s->nprobe;
	c->batch_rows = s->batch_rows;
	c->force_has_nulls = s->force_has_nulls;
	c->bkeys = malloc(sizeof(int64_t) * (size_t) (c->nbuild + 1));
	c->brows = malloc(sizeof(uint32_t) * (size_t) (c->nbuild + 1));
	for (i = 0; i < c->nbuild; i++)
	{
		c->bkeys[i] = gen_key(rng, s->dist, s->domain, unique_base, i);
		c->brows[i] = s->random_rows ? (uint32_t) jrng_next(rng) : (uint32_t) i;
	}
	if (s->dist == KEYS_SKEW && c->nbuild > 0)
	{
		/* heavy_rows rows get one key, at random positions */
		int64_t		heavy = s->heavy_rows < c->nbuild ? s->heavy_rows : c->nbuild;
		int64_t		heavy_key = s->domain * 7 + 12345;

		for (i = 0; i < heavy; i++)
			c->bkeys[i] = heavy_key;
		for (i = c->nbuild - 1; i > 0; i--)
		{
			int64_t		j = jrng_range(rng, 0, i);
			int64_t		t = c->bkeys[i];

			c->bkeys[i] = c->bkeys[j];
			c->bkeys[j] = t;
		}
	}

	c->pkeys = malloc(sizeof(int64_t) * (size_t) (c->nprobe + 1));
	c->pnull = malloc((size_t) (c->nprobe + 1));
	for (i = 0; i < c->nprobe; i++)
	{
		int			isnull = s->all_null || jrng_chance(rng, s->null_rate);

		c->pnull[i] = (uint8_t) isnull;
		/* a null row's key exists in the build: a device must not look at it */
		if (c->nbuild > 0 && (isnull || jrng_chance(rng, s->hit_rate)))
			c->pkeys[i] = c->bkeys[jrng_range(rng, 0, c->nbuild - 1)];
		else
			c->pkeys[i] = gen_miss_key(rng, s->dist, s->domain);
	}
	make_join_batches(c, s, rng);
	join_reference(c);

	snprintf(c->desc, sizeof(c->desc),
			 "build=%lld distinct=%lld probe=%lld batches=%d cap=%lld total=%lld %s/%s%s%s%s",
			 (long long) c->nbuild, (long long) c->ref_distinct, (long long) c->nprobe,
			 c->nbatches, (long long) c->batch_rows, (long long) c->ref_total,
			 s->label, key_dist_names[s->dist],
			 s->all_null ? " all-null" : (s->null_rate > 0 ? " nulls" : ""),
			 s->force_has_nulls ? " forced-has_nulls" : "",
			 s->random_rows ? " random-rows" : "");
}

/* Free a case's data. */
static void
free_join_case(JoinCase *c)
{
	free(c->bkeys);
	free(c->brows);
	free(c->pkeys);
	free(c->pnull);
	free(c->batch_sizes);
	free(c->ref_keys);
	free(c->ref_rows);
	free(c->ref_first);
	free(c->ref_count);
	free(c->ref_batch_total);
}

/* The fixed edge cases, then random ones. */
#define NUM_FIXED_JOIN_CASES 15

static void
fixed_join_spec(int index, JoinSpec *s)
{
	memset(s, 0, sizeof(*s));
	s->label = "fixed";
	s->dist = KEYS_SMALL;
	s->domain = 100;
	s->batch_rows = 1024;
	switch (index)
	{
		case 0:					/* empty build: nothing matches */
			s->label = "empty-build";
			s->nprobe = 1000;
			s->null_rate = 0.2;
			s->batch_rows = 256;
			break;
		case 1:					/* empty build, one empty batch */
			s->label = "empty-build-no-probe";
			break;
		case 2:					/* every probe row null */
			s->label = "all-null-probe";
			s->nbuild = 5000;
			s->nprobe = 3000;
			s->all_null = 1;
			break;
		case 3:					/* primary key */
			s->label = "unique";
			s->dist = KEYS_UNIQUE;
			s->nbuild = 100000;
			s->nprobe = 100000;
			s->hit_rate = 0.5;
			s->batch_rows = 65536;
			break;
		case 4:					/* one key matches 100k build rows */
			s->label = "skew-100k";
			s->dist = KEYS_SKEW;
			s->domain = 10000;
			s->heavy_rows = 100000;
			s->nbuild = 120000;
			s->nprobe = 20000;
			s->hit_rate = 0.6;
			s->null_rate = 0.05;
			s->batch_rows = 8192;
			break;
		case 5:					/* extreme and negative values */
			s->label = "extremes";
			s->dist = KEYS_EXTREME;
			s->nbuild = 20000;
			s->nprobe = 20000;
			s->hit_rate = 0.7;
			s->null_rate = 0.1;
			s->batch_rows = 4096;
			break;
		case 6:					/* nulls, tiny batches, empty batches */
			s->label = "tiny-batches";
			s->nbuild = 3000;
			s->domain = 500;
			s->nprobe = 2000;
			s->hit_rate = 0.8;
			s->null_rate = 0.3;
			s->batch_rows = 7;
			s->empty_batches = 1;
			break;
		case 7:					/* keys differ only above bit 40 */
			s->label = "high-bits";
			s->dist = KEYS_HIGHBITS;
			s->domain = 4096;
			s->nbuild = 50000;
			s->nprobe = 30000;
			s->hit_rate = 0.5;
			s->null_rate = 0.05;
			s->batch_rows = 30000;
			break;
		case 8:					/* a single build row */
			s->label = "one-row";
			s->domain = 1;
			s->nbuild = 1;
			s->nprobe = 100;
			s->hit_rate = 0.5;
			s->batch_rows = 100;
			break;
		case 9:					/* many-to-many: ~3000 rows per key */
			s->label = "many-to-many";
			s->domain = 64;
			s->nbuild = 200000;
			s->nprobe = 50000;
			s->hit_rate = 0.9;
			s->batch_rows = 16384;
			break;
		case 10:				/* has_nulls set, no null row */
			s->label = "forced-has_nulls";
			s->dist = KEYS_UNIQUE;
			s->nbuild = 10000;
			s->nprobe = 10000;
			s->hit_rate = 0.5;
			s->force_has_nulls = 1;
			s->batch_rows = 3000;
			break;
		case 11:				/* everything mixed, row numbers random */
			s->label = "mixed";
			s->dist = KEYS_MIXED;
			s->domain = 1000;
			s->nbuild = 60000;
			s->random_rows = 1;
			s->nprobe = 60000;
			s->hit_rate = 0.6;
			s->null_rate = 0.1;
			s->batch_rows = 10000;
			s->empty_batches = 1;
			break;
		case 12:				/* all build keys equal */
			s->label = "one-key";
			s->domain = 1;
			s->nbuild = 30000;
			s->nprobe = 500;
			s->hit_rate = 0.5;
			s->null_rate = 0.1;
			s->batch_rows = 128;
			break;
		case 13:

			/*
			 * A probe batch of 2^20 rows on ~780K distinct keys: more rows
			 * and keys than any GPU runs threads at once (an H100 ~270K),
			 * so the insert and probe kernels' grid-stride loops turn, and
			 * CUB sorts and encodes many tiles.
			 */
			s->label = "big-batch";
			s->domain = 1500000;
			s->nbuild = 1100000;
			s->random_rows = 1;
			s->nprobe = 1300000;
			s->hit_rate = 0.7;
			s->null_rate = 0.05;
			s->batch_rows = 1 << 20;
			break;
		default:

			/*
			 * ~1400 distinct keys that all home to the last slot of the
			 * table: one chain of ~1400 that wraps around to slot 0, built
			 * by contending atomicCAS; absent keys of the same home walk
			 * it to its end.
			 */
			s->label = "collide";
			s->dist = KEYS_COLLIDE;
			s->domain = 1500;
			s->nbuild = 4000;
			s->nprobe = 6000;
			s->hit_rate = 0.5;
			s->null_rate = 0.1;
			s->batch_rows = 2500;
			break;
	}
}

/*
 * The opt-in big case (GPUAGG_JOIN_BIG_ROWS=N): N build rows, about three
 * per key, and 4M probe rows in batches of 2^22.  Expect minutes for
 * N = 3e8 (the reference's qsort); raise --timeout.
 */
static void
big_join_spec(int64_t nbuild, JoinSpec *s)
{
	memset(s, 0, sizeof(*s));
	s->label = "big";
	s->dist = KEYS_SMALL;
	s->domain = nbuild / 3 + 1;
	s->nbuild = nbuild;
	s->nprobe = INT64_C(4) << 20;
	s->hit_rate = 0.7;
	s->null_rate = 0.05;
	s->batch_rows = INT64_C(1) << 22;
}

/* A random mixture. */
static void
random_join_spec(JoinRng *rng, JoinSpec *s)
{
	memset(s, 0, sizeof(*s));
	s->label = "random";
	s->dist = (KeyDist) jrng_range(rng, 0, KEYS_MIXED);	/* not KEYS_COLLIDE */
	s->nbuild = jrng_chance(rng, 0.05) ? 0 : jrng_log_range(rng, 1, 150000);
	s->domain = jrng_log_range(rng, 1, 200000);
	s->heavy_rows = jrng_range(rng, 1, s->nbuild > 0 ? s->nbuild : 1);
	s->random_rows = jrng_chance(rng, 0.5);
	s->nprobe = jrng_log_range(rng, 0, 100000);
	s->hit_rate = jrng_chance(rng, 0.1) ? 1.0 : (double) jrng_range(rng, 0, 100) / 100.0;
	s->null_rate = jrng_chance(rng, 0.4) ? 0 : (double) jrng_range(rng, 0, 50) / 100.0;
	s->all_null = jrng_chance(rng, 0.03);
	s->force_has_nulls = jrng_chance(rng, 0.1);
	/* at most ~200 batches, so a case stays quick on the GPU too */
	s->batch_rows = jrng_log_range(rng, s->nprobe / 200 + 1, 65536);
	s->empty_batches = jrng_chance(rng, 0.2);
}

/* ------------------------------------------------------------------------
 * Running a case on a device
 * ------------------------------------------------------------------------
 */

/* Check that a probe batch from next_batch is empty and shaped as promised. */
static void
check_empty_probe_batch(const GaBatch *b, int64_t capacity, RunReport *rr)
{
	const GaColumn *col;
	int64_t		j;

	if (b->nrows != 0 || b->capacity != capacity || b->ncolumns != 1 || b->columns == NULL)
	{
		report(rr, "next_batch gave nrows %lld capacity %lld ncolumns %d, expected 0, %lld, 1",
				(long long) b->nrows, (long long) b->capacity, b->ncolumns,
				(long long) capacity);
		return;
	}
	col = &b->columns[0];
	if (col->type != GA_TYPE_INT64 || col->has_nulls != 0 || col->values == NULL ||
		col->validity == NULL)
	{
		report(rr, "next_batch column: type %d has_nulls %d values %p validity %p",
				col->type, col->has_nulls, col->values, (void *) col->validity);
		return;
	}
	for (j = 0; j < capacity / 8; j++)
		if (col->validity[j] != 0xff)
			break;
	if (j < capacity / 8 ||
		(capacity % 8 != 0 &&
		 (uint8_t) (col->validity[j] | (uint8_t) (0xff << (capacity % 8))) != 0xff))
		report(rr, "next_batch: validity bits not all set");
}

/*
 * Brute force for small cases: the build rows with the probe row's key, in
 * input order, must be exactly the answered range of sorted_rows.
 */
static void
brute_force_check(const JoinCase *c, const JoinOutput *out, RunReport *rr)
{
	int64_t		i,
				j;

	for (i = 0; i < c->nprobe && rr->mismatches == 0; i++)
	{
		int64_t		m = 0;

		if (c->pnull[i])
			continue;
		for (j = 0; j < c->nbuild; j++)
		{
			if (c->bkeys[j] != c->pkeys[i])
				continue;
			if (m >= out->count[i] || out->sorted_rows[out->first[i] + m] != c->brows[j])
			{
				report(rr, "brute force: probe row %lld (key %lld) match %lld is build row %u, "
						"not sorted_rows[%u + %lld] of %u",
						(long long) i, (long long) c->pkeys[i], (long long) m, c->brows[j],
						out->first[i], (long long) m, out->count[i]);
				break;
			}
			m++;
		}
		if (rr->mismatches == 0 && m != out->count[i])
			report(rr, "brute force: probe row %lld (key %lld) has %lld matches, count says %u",
					(long long) i, (long long) c->pkeys[i], (long long) m, out->count[i]);
	}
}

/*
 * Run a case on one device, compare with the reference and keep the answer
 * in *out.  Returns the number of problems.
 */
static int64_t
run_join_case(const JoinCase *c, int case_no, GaDevice *dev, const char *label,
			  int verbose, JoinOutput *out, char *summary, size_t summary_len)
{
	RunReport	rr = {case_no, label, 0, 0, "join"};
	JoinWait	ws = {0, 0, 0};
	GaJoinRequest req;
	GaJoin	   *join = NULL;
	GaJoinStats stats;
	GaStatus	st;
	int64_t    *keys_copy = NULL;
	uint32_t   *rows_copy = NULL;
	const uint32_t *sorted;
	int64_t		start = 0;
	int64_t		i;
	int			b;
	double		t0 = join_now_ms();

	memset(out, 0, sizeof(*out));
	out->sorted_rows = calloc((size_t) c->nbuild + 1, sizeof(uint32_t));
	out->first = calloc((size_t) c->nprobe + 1, sizeof(uint32_t));
	out->count = calloc((size_t) c->nprobe + 1, sizeof(uint32_t));
	out->batch_total = calloc((size_t) c->nbatches + 1, sizeof(int64_t));

	memset(&req, 0, sizeof(req));
	req.probe_batch_rows = c->batch_rows;
	join = ga_join_create(dev, &req, &st);
	if (join == NULL)
	{
		report(&rr, "create failed: code %d: %s", st.code, st.message);
		goto done;
	}
	if (ga_join_sorted_rows(join) != NULL)
		report(&rr, "sorted_rows is not NULL before the build");

	/* The build's arrays are copied: scribble over ours afterwards. */
	keys_copy = malloc(sizeof(int64_t) * (size_t) (c->nbuild + 1));
	rows_copy = malloc(sizeof(uint32_t) * (size_t) (c->nbuild + 1));
	if (c->nbuild > 0)
	{
		memcpy(keys_copy, c->bkeys, sizeof(int64_t) * (size_t) c->nbuild);
		memcpy(rows_copy, c->brows, sizeof(uint32_t) * (size_t) c->nbuild);
	}
	if (!ga_join_build(join, c->nbuild > 0 ? keys_copy : NULL,
					   c->nbuild > 0 ? rows_copy : NULL, c->nbuild, join_wait, &ws, &st))
	{
		report(&rr, "build failed: code %d: %s", st.code, st.message);
		goto done;
	}
	memset(keys_copy, 0x5a, sizeof(int64_t) * (size_t) (c->nbuild + 1));
	memset(rows_copy, 0xa5, sizeof(uint32_t) * (size_t) (c->nbuild + 1));

	sorted = ga_join_sorted_rows(join);
	if (sorted == NULL)
	{
		report(&rr, "sorted_rows is NULL after the build");
		goto done;
	}
	for (i = 0; i < c->nbuild; i++)
		if (sorted[i] != c->ref_rows[i])
		{
			report(&rr, "sorted_rows[%lld] = %u, expected %u (key %lld)",
					(long long) i, sorted[i], c->ref_rows[i], (long long) c->ref_keys[i]);
			break;
		}
	if (c->nbuild > 0)
		memcpy(out->sorted_rows, sorted, sizeof(uint32_t) * (size_t) c->nbuild);

	for (b = 0; b < c->nbatches; b++)
	{
		int64_t		n = c->batch_sizes[b];
		GaBatch    *batch = ga_join_next_batch(join, join_wait, &ws, &st);
		const GaJoinMatches *m;
		GaColumn   *col;
		int			reported = 0;

		if (batch == NULL)
		{
			report(&rr, "next_batch %d failed: code %d: %s", b + 1, st.code, st.message);
			goto done;
		}
		check_empty_probe_batch(batch, c->batch_rows, &rr);
		if (rr.mismatches > 0)
			goto done;
		col = &batch->columns[0];
		if (n > 0)
			memcpy(col->values, c->pkeys + start, sizeof(int64_t) * (size_t) n);
		for (i = 0; i < n; i++)
			if (c->pnull[start + i])
				ga_column_set_null(col, i);
		if (c->force_has_nulls)
			col->has_nulls = 1;
		batch->nrows = n;
		m = ga_join_probe(join, batch, join_wait, &ws, &st);
		if (m == NULL)
		{
			report(&rr, "probe %d failed: code %d: %s", b + 1, st.code, st.message);
			goto done;
		}
		if (m->nrows != n || (n > 0 && (m->first == NULL || m->count == NULL)))
		{
			report(&rr, "probe %d answered %lld rows (first %p count %p), expected %lld",
					b + 1, (long long) m->nrows, (const void *) m->first,
					(const void *) m->count, (long long) n);
			goto done;
		}
		for (i = 0; i < n && reported < 2; i++)
		{
			int64_t		r = start + i;

			/* first is 0 where count is 0: both devices promise it */
			if (m->count[i] != c->ref_count[r] || m->first[i] != c->ref_first[r])
			{
				report(&rr, "probe row %lld (key %lld%s): first %u count %u, expected %u %u",
						(long long) r, (long long) c->pkeys[r], c->pnull[r] ? ", null" : "",
						m->first[i], m->count[i], c->ref_first[r], c->ref_count[r]);
				reported++;
			}
		}
		if (m->total != c->ref_batch_total[b])
			report(&rr, "probe %d total %lld, expected %lld", b + 1,
					(long long) m->total, (long long) c->ref_batch_total[b]);
		if (n > 0)
		{
			memcpy(out->first + start, m->first, sizeof(uint32_t) * (size_t) n);
			memcpy(out->count + start, m->count, sizeof(uint32_t) * (size_t) n);
		}
		out->batch_total[b] = m->total;
		start += n;
	}

	ga_join_get_stats(join, &stats);
	if (stats.build_rows != c->nbuild || stats.distinct_keys != c->ref_distinct ||
		stats.probe_batches != c->nbatches || stats.probe_rows != c->nprobe ||
		stats.candidates != c->ref_total)
		report(&rr, "stats: build %lld distinct %lld batches %lld rows %lld candidates %lld, "
				"expected %lld %lld %d %lld %lld",
				(long long) stats.build_rows, (long long) stats.distinct_keys,
				(long long) stats.probe_batches, (long long) stats.probe_rows,
				(long long) stats.candidates, (long long) c->nbuild,
				(long long) c->ref_distinct, c->nbatches, (long long) c->nprobe,
				(long long) c->ref_total);
	if (stats.bytes_sent != c->ref_bytes_sent)
		report(&rr, "stats: bytes_sent %lld, expected %lld",
				(long long) stats.bytes_sent, (long long) c->ref_bytes_sent);
	if (stats.device_ms < 0 || stats.transfer_ms < 0)
		report(&rr, "stats: negative times");
	if (verbose)
		printf("join %d [%s] stats: build %lld distinct %lld batches %lld rows %lld "
			   "candidates %lld bytes %lld device %.2f ms transfer %.2f ms\n",
			   case_no, label, (long long) stats.build_rows, (long long) stats.distinct_keys,
			   (long long) stats.probe_batches, (long long) stats.probe_rows,
			   (long long) stats.candidates, (long long) stats.bytes_sent,
			   stats.device_ms, stats.transfer_ms);
	out->complete = rr.mismatches == 0;
	if (out->complete && c->nbuild * c->nprobe <= JOIN_BRUTE_FORCE_WORK)
		brute_force_check(c, out, &rr);

done:
	if (ws.cancels > 0)
		report(&rr, "the wait callback answered stop although not told to");
	ga_join_destroy(join);
	free(keys_copy);
	free(rows_copy);
	if (rr.mismatches > 0)
		out->complete = 0;
	snprintf(summary, summary_len, "%s %s %.0fms", label, rr.mismatches ? "FAIL" : "ok",
			 join_now_ms() - t0);
	return rr.mismatches;
}

/* Two devices' answers must be identical. */
static int64_t
compare_outputs(const JoinCase *c, int case_no, const JoinOutput *a, const JoinOutput *b,
				const char *label_a, const char *label_b)
{
	char		label[64];
	RunReport	rr = {case_no, label, 0, 0, "join"};
	int64_t		i;
	int			k;

	snprintf(label, sizeof(label), "%s vs %s", label_a, label_b);
	for (i = 0; i < c->nbuild; i++)
		if (a->sorted_rows[i] != b->sorted_rows[i])
		{
			report(&rr, "sorted_rows[%lld]: %s %u, %s %u", (long long) i,
				   label_a, a->sorted_rows[i], label_b, b->sorted_rows[i]);
			break;
		}
	for (i = 0; i < c->nprobe; i++)
		if (a->first[i] != b->first[i] || a->count[i] != b->count[i])
		{
			report(&rr, "probe row %lld: %s (%u, %u), %s (%u, %u)", (long long) i,
				   label_a, a->first[i], a->count[i], label_b, b->first[i], b->count[i]);
			break;
		}
	for (k = 0; k < c->nbatches; k++)
		if (a->batch_total[k] != b->batch_total[k])
		{
			report(&rr, "batch %d total: %s %lld, %s %lld", k + 1,
				   label_a, (long long) a->batch_total[k],
				   label_b, (long long) b->batch_total[k]);
			break;
		}
	return rr.mismatches;
}

static void
free_output(JoinOutput *out)
{
	free(out->sorted_rows);
	free(out->first);
	free(out->count);
	free(out->batch_total);
}

/* ------------------------------------------------------------------------
 * The suite
 * ------------------------------------------------------------------------
 */
int64_t
conformance_join(GaDevice *const *devices, const char *const *labels, int ndevices,
				 uint64_t seed, int ncases, int timeout, int verbose, int64_t *checks)
{
	int64_t		failures = 0;
	int64_t		big_rows;
	int			d,
				i;

	for (d = 0; d < ndevices; d++)
	{
		int64_t		f;

		conformance_set_current("join api", d);
		alarm((unsigned) timeout);
		f = api_join_invalid(devices[d], labels[d]);
		f += api_join_fail_at_batch(devices[d], labels[d]);
		f += api_join_cancel(devices[d], labels[d]);
		f += api_join_two(devices[d], labels[d]);
		f += api_join_destroy_states(devices[d], labels[d]);
		printf("join api %-7s invalid requests, fail_at_batch, cancel, two joins, destroy: %s\n",
			   labels[d], f ? "FAIL" : "ok");
		failures += f;
		(*checks)++;
	}

	big_rows = getenv("GPUAGG_JOIN_BIG_ROWS") != NULL ?
		strtoll(getenv("GPUAGG_JOIN_BIG_ROWS"), NULL, 0) : 0;
	for (i = 0; i < NUM_FIXED_JOIN_CASES + ncases + (big_rows > 0); i++)
	{
		JoinSpec	spec;
		JoinCase	c;
		JoinRng		rng;
		JoinOutput	out[JOIN_MAX_DEVICES];
		char		line[1024];
		size_t		len;

		conformance_set_current("join case", i);
		alarm((unsigned) timeout);
		rng.state = seed * UINT64_C(0x100000001b3) + UINT64_C(0x6a6f696e) + (uint64_t) i;
		if (i < NUM_FIXED_JOIN_CASES)
			fixed_join_spec(i, &spec);
		else if (i < NUM_FIXED_JOIN_CASES + ncases)
			random_join_spec(&rng, &spec);
		else
			big_join_spec(big_rows, &spec);
		build_join_case(&c, &spec, &rng);

		len = (size_t) snprintf(line, sizeof(line), "join %3d %s", i, c.desc);
		for (d = 0; d < ndevices; d++)
		{
			char		summary[96];

			memset(&out[d], 0, sizeof(out[d]));
			failures += run_join_case(&c, i, devices[d], labels[d], verbose, &out[d],
									  summary, sizeof(summary));
			(*checks)++;
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s", summary);
		}
		/* every device's answer against the first device's */
		for (d = 1; d < ndevices; d++)
			if (out[0].complete && out[d].complete)
			{
				int64_t		f = compare_outputs(&c, i, &out[0], &out[d], labels[0], labels[d]);

				failures += f;
				(*checks)++;
				if (len < sizeof(line))
					len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s %s",
											 labels[d], f ? "DIFFER" : "same");
			}
		printf("%s\n", line);
		fflush(stdout);
		for (d = 0; d < ndevices; d++)
			free_output(&out[d]);
		free_join_case(&c);
	}
	return failures;
}
