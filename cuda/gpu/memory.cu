/*-------------------------------------------------------------------------
 *
 * gpu/memory.cu
 *	  The GPU device's device memory, counted: every cudaMalloc and cudaFree
 *	  of the device goes through here (device_alloc and device_free in
 *	  gpu/gpu_device.cuh), so that the process knows how many bytes it holds
 *	  on each GPU, and can refuse an allocation that would take a GPU past
 *	  a limit.  The GPU service reads the counts to admit new work under its
 *	  memory budget and shows them in gpuagg_stats; it sets each GPU's limit
 *	  to that budget, so that what its objects hold never exceeds it (a
 *	  growth that would is refused like a full GPU, and the query finishes
 *	  on the CPU device).  A backend that runs the GPU itself sets no limit.
 *
 * cudaFree does not say how large a block was, so the sizes are kept in an
 * open-addressing table keyed by the device pointer (a block is known by
 * its address on whichever GPU it lies, and addresses are unique across
 * the GPUs of a process: unified virtual addressing).  One mutex guards
 * the table; the counts are atomics, read without it.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One allocation: its address, bytes and GPU; address NULL: empty. */
typedef struct MemoryBlock
{
	void	   *ptr;
	size_t		bytes;
	int			ordinal;
	int			removed;		/* a tombstone: an allocation freed here */
} MemoryBlock;

/* The table of allocations, and the counts per GPU. */
static pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;
static MemoryBlock *memory_blocks;
static size_t memory_capacity;	/* entries, a power of two, or 0 */
static size_t memory_filled;	/* entries in use or removed */
static size_t memory_live;		/* entries in use */
static int64_t memory_used[GA_MAX_GPUS];	/* bytes held; atomic */
static int64_t memory_limit[GA_MAX_GPUS];	/* 0: none; atomic */
static uint64_t memory_frees;	/* allocations freed, all GPUs; atomic */

/* The table's slot for ptr: its entry, or the empty one where it would go. */
static size_t
memory_find(const void *ptr)
{
	uint64_t	h = ga_mix64((uint64_t) (uintptr_t) ptr);
	size_t		mask = memory_capacity - 1;
	size_t		i = (size_t) h & mask;
	size_t		tombstone = memory_capacity;

	for (;;)
	{
		MemoryBlock *b = &memory_blocks[i];

		if (b->ptr == ptr && !b->removed)
			return i;
		if (b->ptr == NULL && !b->removed)
			return tombstone < memory_capacity ? tombstone : i;
		if (b->removed && tombstone == memory_capacity)
			tombstone = i;
		i = (i + 1) & mask;
	}
}

/*
 * Make room for one more entry: at most half the table used or removed,
 * else a table a quarter full of the entries in use; 0 when out of memory.
 */
static int
memory_reserve(void)
{
	MemoryBlock *old = memory_blocks;
	size_t		old_capacity = memory_capacity;
	size_t		capacity = 256;

	if (memory_capacity > 0 && 2 * (memory_filled + 1) <= memory_capacity)
		return 1;
	while (4 * (memory_live + 1) > capacity)
		capacity *= 2;
	memory_blocks = (MemoryBlock *) calloc(capacity, sizeof(MemoryBlock));
	if (memory_blocks == NULL)
	{
		memory_blocks = old;
		return 0;
	}
	memory_capacity = capacity;
	memory_filled = 0;
	for (size_t i = 0; i < old_capacity; i++)
		if (old[i].ptr != NULL && !old[i].removed)
		{
			memory_blocks[memory_find(old[i].ptr)] = old[i];
			memory_filled++;
		}
	free(old);
	return 1;
}

/*
 * cudaMalloc on the current GPU, counted, within the GPU's limit.  Returns
 * cudaErrorMemoryAllocation, with *over_limit set, when the limit refuses
 * it; else cudaMalloc's answer (*ptr is NULL on any failure).
 */
cudaError_t
ga_gpu_malloc(void **ptr, size_t bytes, int *over_limit)
{
	int			ordinal = 0;
	int64_t		limit;
	cudaError_t err;

	*ptr = NULL;
	*over_limit = 0;
	if (cudaGetDevice(&ordinal) != cudaSuccess || ordinal < 0 || ordinal >= GA_MAX_GPUS)
	{
		(void) cudaGetLastError();
		ordinal = 0;
	}
	limit = __atomic_load_n(&memory_limit[ordinal], __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&memory_used[ordinal], (int64_t) bytes, __ATOMIC_SEQ_CST) > limit &&
		limit > 0)
	{
		__atomic_sub_fetch(&memory_used[ordinal], (int64_t) bytes, __ATOMIC_SEQ_CST);
		*over_limit = 1;
		return cudaErrorMemoryAllocation;
	}
	pthread_mutex_lock(&memory_lock);
	if (!memory_reserve())
		err = cudaErrorMemoryAllocation;
	else if ((err = cudaMalloc(ptr, bytes)) == cudaSuccess)
	{
		size_t		i = memory_find(*ptr);

		if (memory_blocks[i].ptr == NULL)
			memory_filled++;
		memory_live++;
		memory_blocks[i].ptr = *ptr;
		memory_blocks[i].bytes = bytes;
		memory_blocks[i].ordinal = ordinal;
		memory_blocks[i].removed = 0;
	}
	pthread_mutex_unlock(&memory_lock);
	if (err != cudaSuccess)
	{
		*ptr = NULL;
		__atomic_sub_fetch(&memory_used[ordinal], (int64_t) bytes, __ATOMIC_SEQ_CST);
	}
	return err;
}

/* cudaFree of what ga_gpu_malloc returned, uncounted (NULL is allowed). */
void
ga_gpu_free(void *ptr)
{
	MemoryBlock block = {NULL, 0, 0, 0};

	if (ptr == NULL)
		return;
	pthread_mutex_lock(&memory_lock);
	if (memory_capacity > 0)
	{
		size_t		i = memory_find(ptr);

		if (memory_blocks[i].ptr == ptr && !memory_blocks[i].removed)
		{
			block = memory_blocks[i];
			memory_blocks[i].removed = 1;
			memory_live--;
		}
	}
	pthread_mutex_unlock(&memory_lock);
	(void) cudaFree(ptr);
	if (block.ptr != NULL)
	{
		__atomic_sub_fetch(&memory_used[block.ordinal], (int64_t) block.bytes,
						   __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&memory_frees, 1, __ATOMIC_SEQ_CST);
	}
}

/* Bytes of device memory the process holds on GPU ordinal. */
extern "C" int64_t
ga_gpu_memory_used(int ordinal)
{
	if (ordinal < 0 || ordinal >= GA_MAX_GPUS)
		return 0;
	return __atomic_load_n(&memory_used[ordinal], __ATOMIC_SEQ_CST);
}

/* How many allocations the process freed, on every GPU. */
extern "C" uint64_t
ga_gpu_memory_frees(void)
{
	return __atomic_load_n(&memory_frees, __ATOMIC_SEQ_CST);
}

/* Refuse allocations that would take GPU ordinal past bytes (0: no limit). */
extern "C" void
ga_gpu_memory_limit(int ordinal, int64_t bytes)
{
	if (ordinal >= 0 && ordinal < GA_MAX_GPUS)
		__atomic_store_n(&memory_limit[ordinal], bytes > 0 ? bytes : 0, __ATOMIC_SEQ_CST);
}
