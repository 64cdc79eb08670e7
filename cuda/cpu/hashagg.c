/*-------------------------------------------------------------------------
 *
 * cpu/hashagg.c
 *	  The CPU device's aggregation (its GaDeviceOps entries, cpu_device.h):
 *	  the batch, the hash table that gives every row its group, and the
 *	  aggregation object's life from create to finish.
 *
 * The CPU works synchronously: ga_agg_submit aggregates the whole batch
 * before it returns, so one batch object is handed out again and again.
 * Its columns and the group arrays that become the result come from the
 * host provider (util.h); the rest is malloc'd.
 *
 * A batch is processed in chunks of CPU_CHUNK_ROWS rows, in two phases, the
 * same two phases the GPU uses (Wu et al., Algorithm 1):
 *
 * 1. Group assignment (here).  The key columns of the chunk are widened to
 *	  int64 (a null key counts as 0 and is flagged), hashed column by
 *	  column, and looked up in an open-addressing table (linear probing, a
 *	  power of two of slots, at most half full, grown by rehashing).  A slot
 *	  holds a key tuple's hash and its dense group id; group ids are given
 *	  in insertion order and the keys themselves live in dense per-key
 *	  arrays, which become the result columns as they are.
 *
 * 2. Accumulation (cpu/accumulate.c).  For every aggregate one tight loop
 *	  over the chunk updates its dense per-group accumulators; finish turns
 *	  them in place into the result types.
 *
 * A string key (GA_TYPE_STRING) is hashed from its bytes (ga_hash_bytes,
 * as the GPU does) and compared byte for byte on a hash match; its groups'
 * bytes go, once per group as the group is created, into the key's heap,
 * so that the groups' values lie one after another in group order and the
 * key's dense array holds each group's end offset: the heap and that array
 * are the result's key_bytes and key_values as they are.
 *
 * Without keys there is exactly one group, created with the aggregation, so
 * that a plain aggregate over no rows still yields its row.
 *
 * Derived columns (gpuagg_device.h) are computed in each chunk before
 * phase 1, in the batch itself (cpu/derived.c).
 *
 * An aggjoin (cpu/aggjoin.c) forms the joined rows of every probe batch in
 * pieces and hands each piece to cpu_aggregate, the path every submitted
 * batch takes.
 *
 * Nothing here prints or aborts.  A failure (out of memory, cancel) leaves
 * the aggregation half-updated, so it is remembered and every later call
 * reports it again; ga_agg_destroy is always safe.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "gpuagg_hash.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Rows per processing chunk: the chunk's scratch arrays stay in cache. */
#define CPU_CHUNK_ROWS 2048

/* Rows aggregated between two calls of the wait callback. */
#define CPU_WAIT_EVERY_ROWS 65536

/*
 * Smallest table, and caps on the initial table and group arrays that an
 * estimate may ask for: a wild estimate must not cost a huge allocation,
 * and growing by doubling is cheap.
 */
#define CPU_MIN_SLOTS 16
#define CPU_MAX_INITIAL_SLOTS (INT64_C(1) << 20)
#define CPU_MAX_INITIAL_GROUPS (INT64_C(1) << 14)

/* One hash table slot: group + 1 (0 = empty) and the key tuple's hash. */
typedef struct CpuSlot
{
	uint64_t	hash;
	int64_t		group_plus1;
} CpuSlot;

/* One aggregation on the CPU. */
typedef struct CpuAgg
{
	/* the request, copied */
	int			ncolumns;
	GaValueType *column_types;
	int			nkeys;
	int		   *key_columns;
	int			naggs;
	GaAggSpec  *aggs;
	CpuAccKind *acc_kinds;

	/* the one batch, reused */
	GaBatch		batch;
	int64_t		validity_bytes;

	/* hash table */
	CpuSlot    *slots;
	int64_t		nslots;			/* a power of two */

	/* groups, dense; these arrays become the result */
	int64_t		ngroups;
	int64_t		group_capacity;
	int64_t   **keys;			/* [nkeys][group_capacity]; a string key's:
								 * end offsets into its heap */
	uint8_t   **key_isnull;		/* [nkeys][group_capacity] */
	uint8_t   **key_heap;		/* [nkeys]: a string key's groups' bytes,
								 * else NULL */
	int64_t    *heap_used;		/* [nkeys] */
	int64_t    *heap_capacity;	/* [nkeys] */
	int			debug_hash_bits;	/* the request's testing hook */
	void	  **acc;			/* [naggs][group_capacity], by acc_kinds */

	/* per-chunk scratch */
	int64_t    *chunk_keys;		/* [nkeys][CPU_CHUNK_ROWS] */
	uint8_t    *chunk_nulls;	/* [nkeys][CPU_CHUNK_ROWS] */
	uint64_t   *chunk_hash;		/* [CPU_CHUNK_ROWS] */
	int64_t    *chunk_group;	/* [CPU_CHUNK_ROWS] */

	/* aggjoins: the build side and the joined pieces */
	CpuAggJoin *join;

	/* a request with a page program: it, copied (cpu/deform.c) */
	CpuPagePlan *pages;

	/* derived columns: the request's, copied and grouped by program */
	GaDerivedPlan *derived;
	uint8_t    *column_is_derived;	/* per column */

	GaAggResult result;
	int			finished;
	GaFailure	failure;
	GaAggStats	stats;
} CpuAgg;

/*
 * Grow a result array of the host provider (util.h) from old_n to n
 * elements of size bytes, keeping *p on failure.
 */
static int
cpu_realloc_array(void **p, int64_t old_n, int64_t n, size_t size)
{
	void	   *q = ga_host_realloc_array(*p, old_n, n, size);

	if (q == NULL)
		return 0;
	*p = q;
	return 1;
}

/*
 * Make room for capacity groups in every dense array (they become the
 * result, so they come from the host provider).  On failure the arrays
 * already grown keep their larger size, which is harmless: only the first
 * group_capacity elements of any of them are used or copied.
 */
static int
cpu_grow_groups(CpuAgg *agg, int64_t capacity)
{
	int64_t		old = agg->group_capacity;
	int			i;

	for (i = 0; i < agg->nkeys; i++)
	{
		if (!cpu_realloc_array((void **) &agg->keys[i], old, capacity, sizeof(int64_t)) ||
			!cpu_realloc_array((void **) &agg->key_isnull[i], old, capacity, sizeof(uint8_t)))
			return 0;
	}
	for (i = 0; i < agg->naggs; i++)
		if (!cpu_realloc_array(&agg->acc[i], old, capacity, ga_cpu_acc_width(agg->acc_kinds[i])))
			return 0;
	for (i = 0; i < agg->naggs; i++)
		ga_cpu_acc_init(agg->acc[i], agg->acc_kinds[i], agg->group_capacity, capacity);
	agg->group_capacity = capacity;
	return 1;
}

/* Double the hash table and reinsert every group by its stored hash. */
static int
cpu_grow_table(CpuAgg *agg)
{
	int64_t		nslots = agg->nslots * 2;
	uint64_t	mask = (uint64_t) nslots - 1;
	CpuSlot    *slots;
	int64_t		i;

	if ((uint64_t) nslots > SIZE_MAX / sizeof(CpuSlot))
		return 0;
	slots = calloc((size_t) nslots, sizeof(CpuSlot));
	if (slots == NULL)
		return 0;
	for (i = 0; i < agg->nslots; i++)
	{
		const CpuSlot *old = &agg->slots[i];
		uint64_t	pos;

		if (old->group_plus1 == 0)
			continue;
		pos = old->hash & mask;
		while (slots[pos].group_plus1 != 0)
			pos = (pos + 1) & mask;
		slots[pos] = *old;
	}
	free(agg->slots);
	agg->slots = slots;
	agg->nslots = nslots;
	agg->stats.table_growths++;
	return 1;
}

/*
 * Widen key column `key` of rows [base, base + n) into the chunk scratch
 * (null keys become 0 and are flagged) and fold it into the rows' hashes.
 */
static void
cpu_load_key(CpuAgg *agg, const GaColumn *col, int key, int64_t base, int64_t n)
{
	int64_t    *dst = agg->chunk_keys + (int64_t) key * CPU_CHUNK_ROWS;
	uint8_t    *nulls = agg->chunk_nulls + (int64_t) key * CPU_CHUNK_ROWS;
	uint64_t   *hash = agg->chunk_hash;
	uint64_t	null_tag = ga_mix64(GA_HASH_SEED + (uint64_t) key + 1);
	int64_t		i;

	if (col->type == GA_TYPE_STRING)
	{
		const uint32_t *ends = (const uint32_t *) col->values;

		for (i = 0; i < n; i++)
		{
			int64_t		row = base + i;
			uint32_t	start = ga_string_start(col, row);
			int			isnull = ga_column_is_null(col, row);
			uint64_t	v = isnull ? null_tag :
				ga_hash_bytes(col->bytes + start, ends[row] - start);

			nulls[i] = (uint8_t) isnull;
			dst[i] = row;		/* the row, whose bytes cpu_keys_equal reads */
			hash[i] = (((hash[i] << 27) | (hash[i] >> 37)) ^ v) * GA_HASH_GOLDEN;
		}
		return;
	}

#define CPU_WIDEN(T) \
	do { \
		const T    *src = (const T *) col->values + base; \
		for (i = 0; i < n; i++) \
			dst[i] = (int64_t) src[i]; \
	} while (0)

	switch (col->type)
	{
		case GA_TYPE_INT8:
			CPU_WIDEN(int8_t);
			break;
		case GA_TYPE_INT16:
			CPU_WIDEN(int16_t);
			break;
		case GA_TYPE_INT32:
			CPU_WIDEN(int32_t);
			break;
		default:
			CPU_WIDEN(int64_t);
			break;
	}
#undef CPU_WIDEN

	if (!col->has_nulls)
	{
		memset(nulls, 0, (size_t) n);
		for (i = 0; i < n; i++)
			hash[i] = (((hash[i] << 27) | (hash[i] >> 37)) ^ (uint64_t) dst[i]) * GA_HASH_GOLDEN;
	}
	else
	{
		const uint8_t *validity = col->validity;

		for (i = 0; i < n; i++)
		{
			int64_t		row = base + i;
			int			isnull = !(validity[row >> 3] & (1u << (row & 7)));

			nulls[i] = (uint8_t) isnull;
			if (isnull)
				dst[i] = 0;
			hash[i] = (((hash[i] << 27) | (hash[i] >> 37)) ^
					   (uint64_t) dst[i] ^ (isnull ? null_tag : 0)) * GA_HASH_GOLDEN;
		}
	}
}

/* Where group g's value of string key k starts in the key's heap. */
static inline int64_t
cpu_group_start(const CpuAgg *agg, int k, int64_t g)
{
	return g > 0 ? agg->keys[k][g - 1] : 0;
}

/*
 * Whether group g has the key tuple of chunk row i (a string key's chunk
 * value is the batch row, whose bytes are compared with the group's).
 */
static inline int
cpu_keys_equal(const CpuAgg *agg, const GaBatch *batch, int64_t g, int64_t i)
{
	int			k;

	for (k = 0; k < agg->nkeys; k++)
	{
		int64_t		off = (int64_t) k * CPU_CHUNK_ROWS + i;

		if (agg->key_isnull[k][g] != agg->chunk_nulls[off])
			return 0;
		if (agg->key_heap[k] != NULL)
		{
			const GaColumn *col = &batch->columns[agg->key_columns[k]];
			int64_t		row = agg->chunk_keys[off];
			uint32_t	start = ga_string_start(col, row);
			uint32_t	len = ((const uint32_t *) col->values)[row] - start;
			int64_t		gstart = cpu_group_start(agg, k, g);

			if (agg->chunk_nulls[off])
				continue;
			if (agg->keys[k][g] - gstart != len ||
				memcmp(agg->key_heap[k] + gstart, col->bytes + start, len) != 0)
				return 0;
		}
		else if (agg->keys[k][g] != agg->chunk_keys[off])
			return 0;
	}
	return 1;
}

/*
 * Append chunk row i's value of string key k to the key's heap as group g's
 * (nothing for a null) and set the group's end offset.  Returns 0 when
 * memory ran out.
 */
static int
cpu_store_string(CpuAgg *agg, const GaBatch *batch, int k, int64_t g, int64_t i)
{
	int64_t		off = (int64_t) k * CPU_CHUNK_ROWS + i;
	uint32_t	len = 0;
	uint32_t	start = 0;
	const GaColumn *col = &batch->columns[agg->key_columns[k]];

	if (!agg->chunk_nulls[off])
	{
		int64_t		row = agg->chunk_keys[off];

		start = ga_string_start(col, row);
		len = ((const uint32_t *) col->values)[row] - start;
	}
	if (agg->heap_used[k] + len > agg->heap_capacity[k])
	{
		int64_t		capacity = agg->heap_capacity[k] * 2;

		while (capacity < agg->heap_used[k] + len)
			capacity *= 2;
		if (!cpu_realloc_array((void **) &agg->key_heap[k], agg->heap_capacity[k],
							   capacity, 1))
			return 0;
		agg->heap_capacity[k] = capacity;
	}
	if (len > 0)
		memcpy(agg->key_heap[k] + agg->heap_used[k], col->bytes + start, len);
	agg->heap_used[k] += len;
	agg->keys[k][g] = agg->heap_used[k];
	return 1;
}

/*
 * Assign a group to every row [base, base + n) of the batch, creating groups
 * for key tuples not seen before.  Returns 0 when memory ran out.
 */
static int
cpu_assign_groups(CpuAgg *agg, const GaBatch *batch, int64_t base, int64_t n)
{
	int64_t		i;
	int			k;

	for (i = 0; i < n; i++)
		agg->chunk_hash[i] = GA_HASH_SEED;
	for (k = 0; k < agg->nkeys; k++)
		cpu_load_key(agg, &batch->columns[agg->key_columns[k]], k, base, n);

	for (i = 0; i < n; i++)
	{
		uint64_t	h = ga_hash_keep_bits(ga_mix64(agg->chunk_hash[i]),
										  agg->debug_hash_bits);
		uint64_t	mask = (uint64_t) agg->nslots - 1;
		uint64_t	pos = h & mask;
		int64_t		g;

		for (;;)
		{
			CpuSlot    *slot = &agg->slots[pos];

			if (slot->group_plus1 == 0)
				break;
			if (slot->hash == h && cpu_keys_equal(agg, batch, slot->group_plus1 - 1, i))
				break;
			pos = (pos + 1) & mask;
		}
		if (agg->slots[pos].group_plus1 != 0)
		{
			agg->chunk_group[i] = agg->slots[pos].group_plus1 - 1;
			continue;
		}

		/* A new group: keep the table at most half full, then insert. */
		if ((agg->ngroups + 1) * 2 > agg->nslots)
		{
			if (!cpu_grow_table(agg))
				return 0;
			mask = (uint64_t) agg->nslots - 1;
			pos = h & mask;
			while (agg->slots[pos].group_plus1 != 0)
				pos = (pos + 1) & mask;
		}
		if (agg->ngroups == agg->group_capacity &&
			!cpu_grow_groups(agg, agg->group_capacity * 2))
			return 0;
		g = agg->ngroups++;
		for (k = 0; k < agg->nkeys; k++)
		{
			agg->key_isnull[k][g] = agg->chunk_nulls[(int64_t) k * CPU_CHUNK_ROWS + i];
			if (agg->key_heap[k] != NULL)
			{
				if (!cpu_store_string(agg, batch, k, g, i))
				{
					agg->ngroups--;
					return 0;
				}
			}
			else
				agg->keys[k][g] = agg->chunk_keys[(int64_t) k * CPU_CHUNK_ROWS + i];
		}
		agg->slots[pos].hash = h;
		agg->slots[pos].group_plus1 = g + 1;
		agg->chunk_group[i] = g;
	}
	return 1;
}

/* Free everything an aggregation holds; NULL and half-built ones included. */
void
ga_cpu_agg_destroy(void *agg_impl)
{
	CpuAgg	   *agg = agg_impl;
	int			i;

	if (agg == NULL)
		return;
	ga_cpu_aggjoin_destroy(agg->join);
	if (agg->batch.columns != NULL)
	{
		for (i = 0; i < agg->batch.ncolumns; i++)
		{
			ga_host_free(agg->batch.columns[i].values);
			ga_host_free(agg->batch.columns[i].validity);
			ga_host_free(agg->batch.columns[i].bytes);
		}
		free(agg->batch.columns);
	}
	if (agg->keys != NULL)
		for (i = 0; i < agg->nkeys; i++)
			ga_host_free(agg->keys[i]);
	if (agg->key_isnull != NULL)
		for (i = 0; i < agg->nkeys; i++)
			ga_host_free(agg->key_isnull[i]);
	if (agg->key_heap != NULL)
		for (i = 0; i < agg->nkeys; i++)
			ga_host_free(agg->key_heap[i]);
	free(agg->key_heap);
	free(agg->heap_used);
	free(agg->heap_capacity);
	if (agg->acc != NULL)
		for (i = 0; i < agg->naggs; i++)
			ga_host_free(agg->acc[i]);
	free(agg->keys);
	free(agg->key_isnull);
	free(agg->acc);
	free(agg->slots);
	free(agg->chunk_keys);
	free(agg->chunk_nulls);
	free(agg->chunk_hash);
	free(agg->chunk_group);
	free(agg->column_types);
	free(agg->key_columns);
	free(agg->aggs);
	free(agg->acc_kinds);
	free(agg->derived);
	free(agg->column_is_derived);
	ga_host_free(agg->batch.pages);
	ga_host_free(agg->batch.page_desc);
	ga_cpu_page_plan_free(agg->pages);
	free(agg);
}

/*
 * Allocate the batch: capacity values and a validity bitmap per column, and
 * string_bytes bytes per string column, from the host provider (the caller
 * fills them).
 */
static int
cpu_alloc_batch(CpuAgg *agg, int64_t capacity, int64_t string_bytes)
{
	int			i;

	agg->batch.capacity = capacity;
	agg->batch.ncolumns = agg->ncolumns;
	agg->batch.columns = calloc(agg->ncolumns > 0 ? agg->ncolumns : 1, sizeof(GaColumn));
	if (agg->batch.columns == NULL)
		return 0;
	agg->validity_bytes = (capacity + 7) / 8;
	for (i = 0; i < agg->ncolumns; i++)
	{
		GaColumn   *col = &agg->batch.columns[i];
		int			width = ga_type_width(agg->column_types[i]);

		col->type = agg->column_types[i];
		if (width > 0)
		{
			col->values = ga_host_alloc_array(capacity, (size_t) width);
			if (col->values == NULL)
				return 0;
		}
		col->validity = ga_host_alloc_array(agg->validity_bytes, 1);
		if (col->validity == NULL)
			return 0;
		if (col->type == GA_TYPE_STRING)
		{
			col->bytes = ga_host_alloc_array(string_bytes, 1);
			if (col->bytes == NULL)
				return 0;
			col->bytes_capacity = string_bytes;
		}
	}
	return 1;
}

/* Start an aggregation: copy the request, allocate batch, table and groups. */
void *
ga_cpu_agg_create(void *device_impl, const GaAggRequest *request, GaStatus *status)
{
	CpuAgg	   *agg;
	int64_t		estimate;
	int64_t		nslots;
	int			i;

	(void) device_impl;
	if (request->batch_rows > INT64_MAX / 16)
	{
		ga_status_set(status, GA_ERR_INVALID, "batch size %lld is too large",
					  (long long) request->batch_rows);
		return NULL;
	}
	agg = calloc(1, sizeof(CpuAgg));
	if (agg == NULL)
		goto oom;
	agg->ncolumns = request->ncolumns;
	agg->nkeys = request->nkeys;
	agg->naggs = request->naggs;

	agg->column_types = ga_alloc_array(request->ncolumns, sizeof(GaValueType));
	agg->key_columns = ga_alloc_array(request->nkeys, sizeof(int));
	agg->aggs = ga_alloc_array(request->naggs, sizeof(GaAggSpec));
	agg->acc_kinds = ga_alloc_array(request->naggs, sizeof(CpuAccKind));
	agg->keys = calloc(request->nkeys > 0 ? request->nkeys : 1, sizeof(int64_t *));
	agg->key_isnull = calloc(request->nkeys > 0 ? request->nkeys : 1, sizeof(uint8_t *));
	agg->acc = calloc(request->naggs > 0 ? request->naggs : 1, sizeof(void *));
	agg->key_heap = calloc(request->nkeys > 0 ? request->nkeys : 1, sizeof(uint8_t *));
	agg->heap_used = calloc(request->nkeys > 0 ? request->nkeys : 1, sizeof(int64_t));
	agg->heap_capacity = calloc(request->nkeys > 0 ? request->nkeys : 1, sizeof(int64_t));
	agg->debug_hash_bits = request->debug_hash_bits;
	agg->derived = ga_derived_plan_create(request);
	agg->column_is_derived = calloc(request->ncolumns > 0 ? request->ncolumns : 1, 1);
	if (agg->column_types == NULL || agg->key_columns == NULL ||
		agg->aggs == NULL || agg->acc_kinds == NULL || agg->keys == NULL ||
		agg->key_isnull == NULL || agg->acc == NULL || agg->derived == NULL ||
		agg->key_heap == NULL || agg->heap_used == NULL || agg->heap_capacity == NULL ||
		agg->column_is_derived == NULL)
		goto oom;
	for (i = 0; i < agg->derived->nderived; i++)
		agg->column_is_derived[agg->derived->derived[i].column] = 1;
	if (request->ncolumns > 0)
		memcpy(agg->column_types, request->column_types,
			   sizeof(GaValueType) * request->ncolumns);
	if (request->nkeys > 0)
		memcpy(agg->key_columns, request->key_columns, sizeof(int) * request->nkeys);
	if (request->naggs > 0)
		memcpy(agg->aggs, request->aggs, sizeof(GaAggSpec) * request->naggs);
	for (i = 0; i < agg->naggs; i++)
	{
		GaValueType input = agg->aggs[i].op == GA_AGG_COUNT_ROWS ? GA_TYPE_NONE :
			agg->column_types[agg->aggs[i].column];

		agg->acc_kinds[i] = ga_cpu_acc_kind(&agg->aggs[i], input);
	}

	if (!cpu_alloc_batch(agg, request->batch_rows, request->string_bytes))
		goto oom;
	if (request->pages != NULL)
	{
		int64_t		npages = request->pages->page_capacity;

		agg->pages = ga_cpu_page_plan_create(request->pages);
		agg->batch.pages = ga_host_alloc_array(npages, GA_PAGE_SIZE);
		agg->batch.page_desc = ga_host_alloc_array(npages, sizeof(GaPageDesc));
		if (agg->pages == NULL || agg->batch.pages == NULL || agg->batch.page_desc == NULL)
			goto oom;
		agg->batch.page_capacity = npages;
	}
	for (i = 0; i < agg->nkeys; i++)
	{
		if (agg->column_types[agg->key_columns[i]] != GA_TYPE_STRING)
			continue;
		agg->heap_capacity[i] = 4096;
		agg->key_heap[i] = ga_host_alloc_array(agg->heap_capacity[i], 1);
		if (agg->key_heap[i] == NULL)
			goto oom;
	}

	agg->chunk_keys = ga_alloc_array((int64_t) agg->nkeys * CPU_CHUNK_ROWS, sizeof(int64_t));
	agg->chunk_nulls = ga_alloc_array((int64_t) agg->nkeys * CPU_CHUNK_ROWS, 1);
	agg->chunk_hash = ga_alloc_array(CPU_CHUNK_ROWS, sizeof(uint64_t));
	agg->chunk_group = calloc(CPU_CHUNK_ROWS, sizeof(int64_t));
	if (agg->chunk_keys == NULL || agg->chunk_nulls == NULL ||
		agg->chunk_hash == NULL || agg->chunk_group == NULL)
		goto oom;

	/* Size the table from the estimate, which may be wrong either way. */
	estimate = request->nkeys == 0 ? 1 : request->estimated_groups;
	if (estimate < CPU_MIN_SLOTS / 2)
		estimate = CPU_MIN_SLOTS / 2;
	nslots = CPU_MIN_SLOTS;
	while (nslots < CPU_MAX_INITIAL_SLOTS && nslots / 2 < estimate)
		nslots *= 2;
	agg->slots = calloc((size_t) nslots, sizeof(CpuSlot));
	if (agg->slots == NULL)
		goto oom;
	agg->nslots = nslots;
	if (!cpu_grow_groups(agg, estimate < CPU_MAX_INITIAL_GROUPS ? estimate : CPU_MAX_INITIAL_GROUPS))
		goto oom;

	/* A plain aggregate has its single group from the start. */
	if (agg->nkeys == 0)
		agg->ngroups = 1;

	if (request->join != NULL)
	{
		agg->join = ga_cpu_aggjoin_create(request, status);
		if (agg->join == NULL)
		{
			ga_cpu_agg_destroy(agg);
			return NULL;
		}
	}

	ga_status_ok(status);
	return agg;

oom:
	ga_cpu_agg_destroy(agg);
	ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
				  "out of host memory starting an aggregation on the CPU device");
	return NULL;
}

/* Hand out the batch, emptied: no rows, every validity bit set, no nulls. */
GaBatch *
ga_cpu_agg_next_batch(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	int			i;

	(void) wait;
	(void) arg;
	if (!ga_failure_check(&agg->failure, status))
		return NULL;
	if (agg->finished)
	{
		ga_status_set(status, GA_ERR_INVALID,
					  "a batch was requested after the aggregation finished");
		return NULL;
	}
	agg->batch.nrows = 0;
	agg->batch.npages = 0;
	for (i = 0; i < agg->batch.ncolumns; i++)
	{
		GaColumn   *col = &agg->batch.columns[i];

		col->has_nulls = 0;
		memset(col->validity, 0xff, (size_t) agg->validity_bytes);
	}
	ga_status_ok(status);
	return &agg->batch;
}

/*
 * Aggregate the rows of a batch, a chunk at a time (its derived columns
 * computed first), asking the wait callback every CPU_WAIT_EVERY_ROWS rows
 * whether to give up; counts the batch.  Every submitted batch and every
 * piece of joined rows comes here.
 */
static int
cpu_aggregate(void *agg_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
			  GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	int64_t		nrows = batch->nrows;
	int64_t		base;
	int64_t		since_wait = 0;

	for (base = 0; base < nrows; base += CPU_CHUNK_ROWS)
	{
		int64_t		n = nrows - base < CPU_CHUNK_ROWS ? nrows - base : CPU_CHUNK_ROWS;
		int			a;

		if (agg->derived->nprograms > 0)
			ga_cpu_compute_derived(agg->derived, batch, base, n);
		if (agg->nkeys > 0 && !cpu_assign_groups(agg, batch, base, n))
			return ga_failure_set(&agg->failure, status, GA_ERR_OUT_OF_MEMORY,
							"out of host memory growing the CPU device's hash table");
		for (a = 0; a < agg->naggs; a++)
			ga_cpu_accumulate(agg->acc[a], agg->acc_kinds[a], &agg->aggs[a], batch,
							  agg->chunk_group, base, n);

		since_wait += n;
		if (since_wait >= CPU_WAIT_EVERY_ROWS && base + n < nrows)
		{
			since_wait = 0;
			if (wait != NULL && wait(arg))
				return ga_failure_set(&agg->failure, status, GA_ERR_CANCELLED,
								"the aggregation was cancelled");
		}
	}
	agg->stats.batches++;
	agg->stats.batches_by_strategy[GA_STRATEGY_CPU]++;
	return 1;
}

/*
 * Aggregate a filled batch before returning: its rows, or, when the
 * aggregation is aggjoin, the rows of its join with the build side.
 */
int
ga_cpu_agg_submit(void *agg_impl, GaBatch *batch, GaWaitCallback wait, void *arg,
				  GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	double		start = ga_cpu_now_ms();
	int64_t		nrows;
	int			i;

	if (!ga_failure_check(&agg->failure, status))
		return 0;
	if (agg->finished)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch was submitted after the aggregation finished");
	if (batch != &agg->batch)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the submitted batch does not belong to this aggregation");
	nrows = batch->nrows;
	if (nrows < 0 || nrows > batch->capacity)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch holds %lld rows but has room for %lld",
							 (long long) nrows, (long long) batch->capacity);

	/* an aggjoin checks its probe columns (the others are not filled) */
	for (i = 0; agg->join == NULL && i < batch->ncolumns; i++)
		if (batch->columns[i].type == GA_TYPE_STRING &&
			!ga_string_column_valid(&batch->columns[i], nrows))
			return ga_status_set(status, GA_ERR_INVALID,
								 "string column %d of a batch has offsets out of order or past its bytes",
								 i);

	if (agg->pages != NULL && batch->npages != 0)
	{
		if (!ga_cpu_deform_pages(agg->pages, batch, status))
			return 0;
		agg->stats.bytes_sent += batch->npages * (int64_t) (GA_PAGE_SIZE + sizeof(GaPageDesc));
	}

	if (agg->join != NULL)
	{
		/* Any failure leaves groups half-updated: remember it. */
		if (!ga_cpu_aggjoin_submit(agg->join, batch, cpu_aggregate, agg, &agg->stats,
								   wait, arg, status))
		{
			if (!agg->failure.failed)
			{
				agg->failure.failed = 1;
				agg->failure.status = *status;
			}
			return 0;
		}
		agg->stats.device_ms += ga_cpu_now_ms() - start;
		return 1;
	}

	if (!cpu_aggregate(agg, batch, wait, arg, status))
		return 0;
	agg->stats.input_rows += nrows;
	for (i = 0; i < batch->ncolumns; i++)
	{
		const GaColumn *col = &batch->columns[i];

		if (agg->column_is_derived[i])
			continue;			/* computed here, never sent */
		agg->stats.bytes_sent += nrows * ga_type_width(col->type);
		if (col->type == GA_TYPE_STRING)
			agg->stats.bytes_sent += ga_string_used(col, nrows);
		if (col->has_nulls)
			agg->stats.bytes_sent += (nrows + 7) / 8;
	}
	agg->stats.device_ms += ga_cpu_now_ms() - start;
	ga_status_ok(status);
	return 1;
}

/*
 * Take an aggjoin's build side (cpu/aggjoin.c); a failure is
 * remembered, as the aggregation cannot run without it.
 */
int
ga_cpu_agg_aggjoin_build(void *agg_impl, int step, const int64_t *keys,
						 const uint32_t *rows, int64_t n, uint64_t key_seed,
						 const GaBatch *payload, GaWaitCallback wait, void *arg,
						 GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	double		start = ga_cpu_now_ms();

	if (!ga_failure_check(&agg->failure, status))
		return 0;
	if (agg->join == NULL)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a build side was given to an aggregation that is not fed by a join");
	if (!ga_cpu_aggjoin_build(agg->join, step, keys, rows, n, key_seed, payload, &agg->stats,
							  wait, arg, status))
	{
		agg->failure.failed = 1;
		agg->failure.status = *status;
		return 0;
	}
	agg->stats.device_ms += ga_cpu_now_ms() - start;
	return 1;
}

/*
 * Aggregate what an aggjoin adds at finish (the unmatched build
 * rows of its RIGHT and FULL steps, cpu/aggjoin.c), then turn the
 * accumulators into result columns, in place (a GaInt128 and a double are
 * as wide as __int128 and the ordered int64), once; later calls return the
 * same result.
 */
const GaAggResult *
ga_cpu_agg_finish(void *agg_impl, GaWaitCallback wait, void *arg, GaStatus *status)
{
	CpuAgg	   *agg = agg_impl;
	double		start;
	int			a;

	if (!ga_failure_check(&agg->failure, status))
		return NULL;
	if (agg->finished)
	{
		ga_status_ok(status);
		return &agg->result;
	}
	start = ga_cpu_now_ms();

	/* Any failure leaves groups half-updated: remember it. */
	if (agg->join != NULL &&
		!ga_cpu_aggjoin_finish(agg->join, cpu_aggregate, agg, &agg->stats, wait, arg, status))
	{
		if (!agg->failure.failed)
		{
			agg->failure.failed = 1;
			agg->failure.status = *status;
		}
		return NULL;
	}

	for (a = 0; a < agg->naggs; a++)
		ga_cpu_acc_finish(agg->acc[a], agg->acc_kinds[a], agg->ngroups);

	agg->result.ngroups = agg->ngroups;
	agg->result.nkeys = agg->nkeys;
	agg->result.key_values = agg->nkeys > 0 ? agg->keys : NULL;
	agg->result.key_isnull = agg->nkeys > 0 ? agg->key_isnull : NULL;
	agg->result.key_bytes = agg->nkeys > 0 ? agg->key_heap : NULL;
	agg->result.naggs = agg->naggs;
	agg->result.values = agg->naggs > 0 ? agg->acc : NULL;
	agg->finished = 1;
	agg->stats.device_ms += ga_cpu_now_ms() - start;
	ga_status_ok(status);
	return &agg->result;
}

/* Report what the aggregation did so far. */
void
ga_cpu_agg_get_stats(const void *agg_impl, GaAggStats *stats)
{
	const CpuAgg *agg = agg_impl;

	*stats = agg->stats;
	stats->groups = agg->ngroups;
	stats->transfer_ms = 0;
	stats->gpu_ordinal = -1;
	stats->launch_family = GA_TUNE_NONE;
}
