/*-------------------------------------------------------------------------
 *
 * service/arena.c
 *	  The arena's allocator, private to the service process: every batch,
 *	  result and staging buffer that crosses between a client and the
 *	  service is a block of the arena, which both map.  The service process
 *	  alone allocates and frees (clients only write and read what it hands
 *	  them), so the allocator's lock is a mutex of that process and its
 *	  state starts afresh, the whole arena free, in each new service
 *	  process.  It is the process's host provider (util.h), so that the
 *	  devices put what they hand out in the arena.
 *
 * Each block is charged to a device (its header names it), the one the
 * allocating thread named last (svc_arena_charge), so that the service
 * knows each device's share of the arena: what admission weighs and
 * gpuagg_stats shows for the CPU device.
 *
 * Boundary tags, first fit: every block starts with a header holding its
 * size and its neighbour's below, so that a freed block merges with free
 * neighbours at once; free blocks are on one list.  Blocks are multiples
 * of SVC_ALIGN bytes.  Under AddressSanitizer, free space and the slack
 * after each block (at least SVC_ALIGN bytes) are poisoned, so that an
 * overrun of a batch or result is caught as it would be with malloc.
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "util.h"

#include <string.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#endif

#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define ARENA_REDZONE SVC_ALIGN
#else
#define ARENA_POISON(p, n) ((void) (p), (void) (n))
#define ARENA_UNPOISON(p, n) ((void) (p), (void) (n))
#define ARENA_REDZONE 0
#endif

#define ARENA_USED 0x55534544u	/* "USED" */
#define ARENA_FREE 0x46524545u	/* "FREE" */

/* A block's header: SVC_ALIGN bytes before what alloc returns. */
typedef struct ArenaBlock
{
	uint64_t	size;			/* bytes of the block, header included */
	uint64_t	prev_size;		/* of the block just below, 0: the first */
	uint32_t	magic;			/* ARENA_USED or ARENA_FREE */
	int32_t		device;			/* charged to this device, -1: none */
	struct ArenaBlock *next_free;
	struct ArenaBlock *prev_free;
	uint64_t	pad[3];
} ArenaBlock;

#define ARENA_HEADER sizeof(ArenaBlock)
#define ARENA_MIN_BLOCK (ARENA_HEADER + SVC_ALIGN)

/* The allocator of this process (one service per process). */
static struct
{
	pthread_mutex_t lock;
	const GaService *service;	/* whose arena, once opened */
	int			pid;			/* the process that opened it */
	unsigned char *base;
	size_t		bytes;
	ArenaBlock *free_list;
	size_t		in_use;
	int64_t		device_use[SVC_MAX_DEVICES];	/* atomic */
}			arena = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, NULL, 0, NULL, 0, {0}};

/* The device this thread's allocations are charged to, -1: none. */
static __thread int arena_device = -1;

/* The block right above b, or NULL when b is the last. */
static ArenaBlock *
block_after(ArenaBlock *b)
{
	unsigned char *next = (unsigned char *) b + b->size;

	return next < arena.base + arena.bytes ? (ArenaBlock *) next : NULL;
}

/* Put a free block on the free list. */
static void
list_push(ArenaBlock *b)
{
	b->magic = ARENA_FREE;
	b->prev_free = NULL;
	b->next_free = arena.free_list;
	if (arena.free_list != NULL)
		arena.free_list->prev_free = b;
	arena.free_list = b;
}

/* Take a block off the free list. */
static void
list_remove(ArenaBlock *b)
{
	if (b->prev_free != NULL)
		b->prev_free->next_free = b->next_free;
	else
		arena.free_list = b->next_free;
	if (b->next_free != NULL)
		b->next_free->prev_free = b->prev_free;
	b->next_free = b->prev_free = NULL;
}

/* The host provider's allocation: a block of the arena. */
static void *
arena_host_alloc(void *context, size_t bytes)
{
	(void) context;
	return svc_arena_alloc(bytes);
}

/* The host provider's free. */
static void
arena_host_free(void *context, void *ptr)
{
	(void) context;
	svc_arena_free(ptr);
}

/*
 * Open the arena of service in this process: the first time, lay it out as
 * one free block; then make it the process's host provider.  A process
 * serves one service (its arena stays its host provider).
 */
int
svc_arena_open(GaService *service, GaStatus *status)
{
	GaHostAllocator provider = {arena_host_alloc, arena_host_free, &arena};
	int			pid = (int) getpid();
	int			ok = 1;

	pthread_mutex_lock(&arena.lock);
	if (arena.pid == pid && arena.service != service)
		ok = ga_status_set(status, GA_ERR_DEVICE,
						   "this process already serves the arena of another GPU service");
	else if (arena.pid != pid)
	{
		ArenaBlock *b = (ArenaBlock *) service->arena;

		arena.service = service;
		arena.pid = pid;
		arena.base = service->arena;
		arena.bytes = service->arena_bytes & ~(size_t) (SVC_ALIGN - 1);
		arena.free_list = NULL;
		arena.in_use = 0;
		memset(arena.device_use, 0, sizeof(arena.device_use));
		ARENA_POISON(arena.base, arena.bytes);
		ARENA_UNPOISON(b, ARENA_HEADER);
		b->size = arena.bytes;
		b->prev_size = 0;
		list_push(b);
	}
	pthread_mutex_unlock(&arena.lock);
	if (!ok)
		return 0;
	return ga_set_host_allocator(&provider, status);
}

/* A block of at least bytes, SVC_ALIGN-aligned; NULL when the arena is full. */
void *
svc_arena_alloc(size_t bytes)
{
	ArenaBlock *b;
	unsigned char *p;
	size_t		need;

	if (bytes > arena.bytes)
		return NULL;
	need = ARENA_HEADER + svc_align(bytes > 0 ? bytes : 1) + ARENA_REDZONE;
	pthread_mutex_lock(&arena.lock);
	for (b = arena.free_list; b != NULL; b = b->next_free)
		if (b->size >= need)
			break;
	if (b == NULL)
	{
		pthread_mutex_unlock(&arena.lock);
		return NULL;
	}
	list_remove(b);
	if (b->size - need >= ARENA_MIN_BLOCK)
	{
		ArenaBlock *rest = (ArenaBlock *) ((unsigned char *) b + need);
		ArenaBlock *next;

		ARENA_UNPOISON(rest, ARENA_HEADER);
		rest->size = b->size - need;
		rest->prev_size = need;
		next = block_after(rest);
		if (next != NULL)
			next->prev_size = rest->size;
		b->size = need;
		list_push(rest);
	}
	b->magic = ARENA_USED;
	b->device = arena_device;
	arena.in_use += b->size;
	if (b->device >= 0)
		SVC_ADD(&arena.device_use[b->device], (int64_t) b->size);
	p = (unsigned char *) b + ARENA_HEADER;
	ARENA_UNPOISON(p, bytes);
	ARENA_POISON(p + bytes, b->size - ARENA_HEADER - bytes);
	pthread_mutex_unlock(&arena.lock);
	return p;
}

/*
 * Give a block back, merging it with free neighbours.  A pointer that is
 * not a block in use of the arena is left alone.
 */
void
svc_arena_free(void *ptr)
{
	ArenaBlock *b;
	ArenaBlock *next;

	if (ptr == NULL || !svc_arena_owns(ptr, 1) ||
		(unsigned char *) ptr < arena.base + ARENA_HEADER)
		return;
	b = (ArenaBlock *) ((unsigned char *) ptr - ARENA_HEADER);
	pthread_mutex_lock(&arena.lock);
	if (b->magic != ARENA_USED)
	{
		pthread_mutex_unlock(&arena.lock);
		return;
	}
	arena.in_use -= b->size;
	if (b->device >= 0)
		SVC_ADD(&arena.device_use[b->device], -(int64_t) b->size);
	ARENA_POISON(ptr, b->size - ARENA_HEADER);
	b->magic = ARENA_FREE;
	next = block_after(b);
	if (next != NULL && next->magic == ARENA_FREE)
	{
		list_remove(next);
		b->size += next->size;
		next->magic = 0;
		ARENA_POISON(next, ARENA_HEADER);
	}
	if (b->prev_size != 0)
	{
		ArenaBlock *prev = (ArenaBlock *) ((unsigned char *) b - b->prev_size);

		if (prev->magic == ARENA_FREE)
		{
			list_remove(prev);
			prev->size += b->size;
			b->magic = 0;
			ARENA_POISON(b, ARENA_HEADER);
			b = prev;
		}
	}
	next = block_after(b);
	if (next != NULL)
		next->prev_size = b->size;
	list_push(b);
	pthread_mutex_unlock(&arena.lock);
}

/* Whether [ptr, ptr + bytes) lies inside the arena of this process. */
int
svc_arena_owns(const void *ptr, size_t bytes)
{
	const unsigned char *p = ptr;

	return arena.base != NULL && p >= arena.base && bytes <= arena.bytes &&
		(size_t) (p - arena.base) <= arena.bytes - bytes;
}

/* Charge this thread's next allocations to device (-1: none). */
void
svc_arena_charge(int device)
{
	arena_device = device >= 0 && device < SVC_MAX_DEVICES ? device : -1;
}

/* Bytes of the arena charged to device, headers included. */
int64_t
svc_arena_used(int device)
{
	if (device < 0 || device >= SVC_MAX_DEVICES)
		return 0;
	return SVC_LOAD(&arena.device_use[device]);
}

/* Bytes of the arena no block holds. */
int64_t
svc_arena_free_bytes(void)
{
	int64_t		free_bytes;

	pthread_mutex_lock(&arena.lock);
	free_bytes = (int64_t) (arena.bytes - arena.in_use);
	pthread_mutex_unlock(&arena.lock);
	return free_bytes;
}
