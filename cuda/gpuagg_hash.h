/*-------------------------------------------------------------------------
 *
 * gpuagg_hash.h
 *	  The 64-bit hash finalizers every part of gpuagg uses: the executor's
 *	  hash tables and Bloom filters (src/), the CPU device and the GPU
 *	  kernels (cuda/).  Plain C, compiled for the host and, under nvcc, for
 *	  the device too, so that both devices hash a key to the same value.
 *
 * Two finalizers, each spreading every input bit over every output bit:
 *	ga_mix64		MurmurHash3's fmix64 (Appleby): hash-table slots of both
 *					devices, the aggregation's key hashes
 *	ga_splitmix64	the output function of SplitMix64 (Steele, Lea and
 *					Flood): join keys (cuda/join_key.h), the executor's
 *					tables and the probe-key filter
 * and GA_HASH_GOLDEN, the 64-bit golden-ratio constant that SplitMix64 adds
 * per step and that combining steps multiply by or add, and GA_HASH_SEED,
 * the value a key tuple's hash starts from (both devices' aggregation).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_HASH_H
#define GPUAGG_HASH_H

#include <stdint.h>

#include "gpuagg_device.h"

/* The golden ratio's 64-bit constant (SplitMix64's increment). */
#define GA_HASH_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* The start of a key tuple's hash: the first fractional bits of pi. */
#define GA_HASH_SEED UINT64_C(0x243f6a8885a308d3)

/* MurmurHash3's 64-bit finalizer. */
GA_INLINE uint64_t
ga_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/* SplitMix64's output function. */
GA_INLINE uint64_t
ga_splitmix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/*
 * A 64-bit hash of n bytes (a string key): eight bytes at a time, each word
 * folded in by a multiply and a rotation, the tail zero-padded, the length
 * last, finished by ga_mix64.  Both devices hash a string key with it.
 */
GA_INLINE uint64_t
ga_hash_bytes(const uint8_t *p, uint32_t n)
{
	uint64_t	h = GA_HASH_SEED ^ ((uint64_t) n * GA_HASH_GOLDEN);
	uint32_t	i = 0;

	for (; i + 8 <= n; i += 8)
	{
		uint64_t	w = 0;
		int			b;

		for (b = 7; b >= 0; b--)
			w = (w << 8) | p[i + b];
		h = ((h ^ (w * UINT64_C(0xff51afd7ed558ccd))) << 31 |
			 (h ^ (w * UINT64_C(0xff51afd7ed558ccd))) >> 33) * GA_HASH_GOLDEN;
	}
	if (i < n)
	{
		uint64_t	w = 0;
		int			b;

		for (b = (int) (n - i) - 1; b >= 0; b--)
			w = (w << 8) | p[i + b];
		h = ((h ^ (w * UINT64_C(0xc4ceb9fe1a85ec53))) << 29 |
			 (h ^ (w * UINT64_C(0xc4ceb9fe1a85ec53))) >> 35) * GA_HASH_GOLDEN;
	}
	return ga_mix64(h);
}

/*
 * A key tuple's final hash with only the low `bits` bits kept (1 .. 63), or
 * all of them (0): the testing hook of GaAggRequest.debug_hash_bits.
 */
GA_INLINE uint64_t
ga_hash_keep_bits(uint64_t h, int bits)
{
	return bits > 0 && bits < 64 ? h & ((UINT64_C(1) << bits) - 1) : h;
}

#endif							/* GPUAGG_HASH_H */
