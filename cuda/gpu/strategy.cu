/*-------------------------------------------------------------------------
 *
 * gpu/strategy.cu
 *	  The GPU aggregation's choice of plan for each batch (the kernels
 *	  behind a strategy, GpuPlan), from the group count, the key widths and
 *	  the GPU's shared memory and L2 size; and, after the first batch's
 *	  probe, the group estimate and whether a direct index applies.  Host
 *	  code only: gpu/batch.cu launches what is chosen here.
 *
 * Strategies (gpuagg.strategy; docs/references.md lists the papers).  Every
 * one ends with the same dense group arrays, so they may change from batch
 * to batch and all give the same answers:
 *
 *	perfect		Direct indexing (Karnagel, MapD): a row's entry is the
 *				mixed-radix index of its keys over their ranges, each with a
 *				null slot.  The ranges come from a sample of the first batch
 *				(the probe), widened when the sample was not the whole batch.
 *				Small ranges are indexed in each block's shared memory, large
 *				ones in global memory; either way into "perfect entries" that
 *				are gathered into the group arrays at the end.  A row whose
 *				key lies outside the ranges escapes to the global table, so
 *				no key is ever lost.  Chosen at the first batch and kept.
 *	shared		Per-block tables in shared memory (Rosenfeld).  Keys
 *				that pack into 64 bits use the fused one-pass kernel: a block
 *				hashes packed keys into its own table, and only the block's
 *				distinct keys are looked up in the global table.  Other keys
 *				use two phases: global ids, then shared accumulators.
 *	global		Two phases: global ids, then atomics into the group arrays
 *				(through a small per-block cache of hot groups for skew).
 *	partitioned	Rows partitioned by the top bits of their key hash first
 *				(Wu et al.), then aggregated a chunk of one partition at a
 *				time in shared memory (gpu/kernels/hashagg_chunks.cu): the global table
 *				sees each chunk's distinct keys once, and the chunks in
 *				flight touch a run of it that stays in the L2 cache.  Keys
 *				that do not pack into 64 bits take the two phases over the
 *				rows in partition order instead.
 *
 * auto chooses from the group count and widths and the GPU's shared memory
 * and L2 size (sizing.c has the rules): perfect when the probed ranges are
 * small (shared memory) or dense enough; else shared while the groups fit
 * a block; beyond, partitioned once the group table outgrows the L2 cache
 * and the batch's keys pack into 64 bits, else global.  The group count is
 * the planner's estimate, replaced by the probe's estimate for the first
 * batch (a HyperLogLog sketch of the sample) and by the groups found so
 * far for later batches.  A forced strategy runs where it applies:
 * perfect needs ranges small enough and shared needs the groups to fit a
 * block (elsewhere the device chooses as auto does); partitioned needs a
 * group table larger than the L2 cache (elsewhere global runs); global
 * always applies.
 *
 * Statistics: a batch counts under the strategy that ran it (a two-phase
 * shared plan whose kernel fell back to global atomics counts as global);
 * an empty batch under the strategy planned for the last batch launched,
 * or, before any, under what the first batch would run without a probe.
 * The conformance test recomputes these rules for forced partitioned.
 *
 * A request with MOMENTS or COMOMENTS (ga_request_two_phase_only) runs in
 * the two-phase kernels only: never perfect nor the fused kernel; shared is
 * then the two-phase shared kernel, also for a plain aggregate.
 *
 * Launch parameters (gpuagg.tuning; cuda/tune.h): after the plan, the
 * batch's kernel family and shape class (key width, the first batch's
 * contention level from the probe, group count) get their
 * parameters from the tuner of the GPU's model, or gpuagg.debug_launch's;
 * the replicas and cache sizes chosen here are then capped by them at the
 * launch.  Parameters never change the plan, only how its kernels run.
 *
 * A request with string keys runs global for every batch, whatever the
 * strategy asked: its keys neither pack nor index directly, and only the
 * global table's find-or-insert compares bytes (gpu/strings.cu); its first
 * batch is not probed.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shared tables are sized for at least this many groups (when they fit). */
#define GPU_SHARED_MIN_GROUPS 32

/* perfect: most entries, and how sparse a range auto still indexes directly. */
#define GPU_PERFECT_MAX_ENTRIES (INT64_C(1) << 28)
#define GPU_PERFECT_DENSITY 4	/* entries per estimated group, at most */

/* The strategy a plan stands for (EXPLAIN's names). */
GaStrategy
ga_gpu_plan_strategy(const GpuAgg *agg, GpuPlan plan)
{
	switch (plan)
	{
		case PLAN_DIRECT_SHARED:
			return agg->nkeys > 0 ? GA_STRATEGY_PERFECT : GA_STRATEGY_SHARED;
		case PLAN_DIRECT_GLOBAL:
			return GA_STRATEGY_PERFECT;
		case PLAN_FUSED:
		case PLAN_SHARED:
			return GA_STRATEGY_SHARED;
		case PLAN_PARTITIONED:
			return GA_STRATEGY_PARTITIONED;
		case PLAN_GLOBAL:
			break;
	}
	return GA_STRATEGY_GLOBAL;
}

/* Whether a plan's kernels may leave rows in the escape list. */
int
ga_gpu_plan_has_escapes(const GpuAgg *agg, GpuPlan plan)
{
	return plan == PLAN_FUSED ||
		(agg->nkeys > 0 && (plan == PLAN_DIRECT_SHARED || plan == PLAN_DIRECT_GLOBAL));
}

/*
 * Copies of each entry of a shared table of `entries` entries (plus
 * other_bytes of other shared memory) whose rows fall on about `hot` of
 * them: as many, up to 32, as keep hot * copies within 512 (few groups: a
 * warp's lanes then hit different copies) and the whole table within
 * `budget` bytes of shared memory.
 */
int
ga_gpu_plan_replicas(const GpuAgg *agg, int64_t hot, int64_t entries, int64_t other_bytes,
					 int64_t budget)
{
	const int64_t state = agg->inflight_aggs.shared_state;
	int			replicas = 1;

	if (hot < 1)
		hot = 1;
	while (replicas < 32 && hot * replicas * 2 <= 512 &&
		   other_bytes + entries * replicas * 2 * state <= budget)
		replicas *= 2;
	return replicas;
}

/*
 * How the fused kernel packs this batch's keys: each key's width, and a
 * null bit for a key column that has nulls in this batch.  0 when they do
 * not fit 64 bits.
 */
static int
make_pack(const GpuAgg *agg, GaDevPack *pack)
{
	int			shift = 0;

	memset(pack, 0, sizeof(*pack));
	if (agg->nkeys < 1 || agg->nkeys > GA_PACK_MAX_KEYS)
		return 0;
	for (int k = 0; k < agg->nkeys; k++)
	{
		int			bits = 8 * ga_type_width(agg->column_types[agg->key_columns[k]]);
		int			null_bit = agg->inflight_keys.columns[k].validity != NULL ? 1 : 0;

		if (shift + bits + null_bit > 64)
			return 0;
		pack->shift[k] = shift;
		pack->bits[k] = bits;
		pack->null_bit[k] = null_bit;
		shift += bits + null_bit;
	}
	pack->nkeys = agg->nkeys;
	return 1;
}

/*
 * The shared strategy's plan for `groups` groups: the fused kernel when the
 * keys pack and its table holds them, else two phases with a shared table
 * (forced: the largest one), else global.  Tables are sized for twice the
 * groups, so that the groups of later batches fit too.
 */
GpuPlan
ga_gpu_plan_shared(GpuAgg *agg, int64_t groups, int forced)
{
	const int64_t state = agg->inflight_aggs.shared_state;
	int64_t		target = 2 * groups > GPU_SHARED_MIN_GROUPS ? 2 * groups : GPU_SHARED_MIN_GROUPS;
	GaDevPack	pack;

	if (!agg->fused_failed && !agg->two_phase_only && agg->device->cooperative &&
		agg->rows_ok && groups <= agg->max_fused_groups && make_pack(agg, &pack))
	{
		int64_t		max_slots = agg->shared_budget / (8 + state) / 32 * 32;
		int64_t		nslots;

		if (target > agg->max_fused_groups)
			target = agg->max_fused_groups;
		nslots = (target * 100 / GA_FUSED_LOAD_PERCENT + 31) / 32 * 32;
		if (nslots > max_slots)
			nslots = max_slots;
		if (nslots >= 32)
		{
			agg->inflight_pack = pack;
			agg->inflight_nslots = nslots;
			agg->inflight_replicas = ga_gpu_plan_replicas(agg, groups, nslots, 8 * nslots,
														 agg->shared_budget);
			return PLAN_FUSED;
		}
	}
	if (groups <= agg->max_shared_groups)
	{
		if (forced || target > agg->max_shared_groups)
			target = agg->max_shared_groups;
		agg->inflight_groups_alloc = target;
		agg->inflight_replicas = ga_gpu_plan_replicas(agg, groups, target, 0,
													 agg->shared_budget);
		return PLAN_SHARED;
	}
	return PLAN_GLOBAL;
}

/* The group count the plan of the batch in flight goes by (at least 1). */
static int64_t
plan_groups(const GpuAgg *agg)
{
	int64_t		groups = agg->known_groups;

	if (agg->batches_launched == 0)
	{
		int64_t		estimate = agg->probed ? agg->device_estimate :
			agg->request.estimated_groups;

		if (estimate > groups)
			groups = estimate;
	}
	return groups < 1 ? 1 : groups;
}

/*
 * The group count of the batch in flight's shape class (at least 1), the
 * same for every batch of the aggregation as far as it can be: for
 * perfect, its entries (the keys' ranges, with their null slots), which
 * size its tables, while the group table holds only the escaped rows'
 * groups until the entries are gathered at the end; else the group count
 * the plan goes by, and at least the probe's estimate, which the first
 * batch went by.
 */
static int64_t
class_groups(const GpuAgg *agg, GpuPlan plan)
{
	int64_t		groups = plan_groups(agg);

	if (agg->perfect && (plan == PLAN_DIRECT_SHARED || plan == PLAN_DIRECT_GLOBAL))
		return agg->dev_perfect.entries > 1 ? (int64_t) agg->dev_perfect.entries : 1;
	if (agg->probed && agg->device_estimate > groups)
		groups = agg->device_estimate;
	return groups;
}

/* The kernel family a plan's launches belong to (GA_TUNE_NONE: string keys). */
static GaTuneFamily
plan_family(const GpuAgg *agg, GpuPlan plan)
{
	if (agg->nstrings > 0)
		return GA_TUNE_NONE;
	switch (plan)
	{
		case PLAN_DIRECT_SHARED:
		case PLAN_DIRECT_GLOBAL:
			return GA_TUNE_PERFECT;
		case PLAN_FUSED:
		case PLAN_SHARED:
			return GA_TUNE_SHARED;
		case PLAN_PARTITIONED:
			return GA_TUNE_PARTITIONED;
		case PLAN_GLOBAL:
			break;
	}
	return GA_TUNE_GLOBAL;
}

/*
 * The launch parameters of the batch in flight, after its plan: debug_launch
 * when set (the request's, else the process's: ga_launch_force), else the
 * tuner's for its family and shape class (the rules when tuning is off);
 * recorded in the statistics.
 */
void
ga_gpu_plan_launch(GpuAgg *agg)
{
	const GaTuneFamily family = plan_family(agg, agg->inflight_plan);
	GaLaunchSource source;

	if (agg->request.debug_launch_set || ga_launch_forced(&agg->inflight_launch))
	{
		if (agg->request.debug_launch_set)
			agg->inflight_launch = agg->request.debug_launch;
		agg->inflight_ticket.cls = -1;
		agg->inflight_ticket.exploring = 0;
		source = GA_LAUNCH_FORCED;
	}
	else
		source = ga_tune_choose(agg->tuner, agg->request.tuning, family, agg->key_bits,
								agg->contention, class_groups(agg, agg->inflight_plan),
								&agg->inflight_launch, &agg->inflight_ticket);
	if (family == GA_TUNE_NONE)
		memset(&agg->inflight_launch, 0, sizeof(agg->inflight_launch));
	agg->stats.launch_family = family;
	agg->stats.launch_source = source;
	agg->stats.launch = agg->inflight_launch;
	if (source == GA_LAUNCH_EXPLORING)
		agg->stats.batches_explored++;
	agg->inflight_redone = 0;
}

/* Replicas of a shared table for the batch in flight: at most its replicas_max. */
int
ga_gpu_plan_replicas_capped(const GpuAgg *agg, int replicas)
{
	const int	cap = agg->inflight_launch.replicas_max;

	return cap > 0 && replicas > cap ? cap : replicas;
}

/* log2 of the block caches' entries for the batch in flight (0: none). */
int
ga_gpu_plan_cache_bits(const GpuAgg *agg)
{
	const int	less = agg->inflight_launch.cache_less;
	int			bits = agg->cache_bits;

	if (bits <= 0)
		return bits;
	if (less < 0)
		return 0;
	bits -= less;
	return bits < 1 ? 1 : bits;
}

/*
 * The plan for the batch in flight (see the file header for the rules).
 * Sets the plan's sizes in agg->inflight_*.
 */
GpuPlan
ga_gpu_plan_choose(GpuAgg *agg)
{
	const GaStrategy requested = agg->request.strategy;
	int64_t		groups;

	if (agg->nkeys == 0)
	{
		if (requested == GA_STRATEGY_GLOBAL)
			return PLAN_GLOBAL;
		if (!agg->two_phase_only)
			return PLAN_DIRECT_SHARED;
		/* one group in a two-phase shared table */
		agg->inflight_groups_alloc = 1;
		agg->inflight_replicas = ga_gpu_plan_replicas(agg, 1, 1, 0, agg->shared_budget);
		return PLAN_SHARED;
	}
	if (agg->nstrings > 0)
		return PLAN_GLOBAL;		/* string keys: the global table only */
	if (agg->perfect)
		return agg->perfect_in_shared ? PLAN_DIRECT_SHARED : PLAN_DIRECT_GLOBAL;

	groups = plan_groups(agg);

	/* a forced strategy where it applies; elsewhere as auto */
	switch (requested)
	{
		case GA_STRATEGY_GLOBAL:
			return PLAN_GLOBAL;
		case GA_STRATEGY_PARTITIONED:
			if (agg->rows_ok &&
				ga_partitioned_applies(&agg->device->info, &agg->request, groups))
			{
				agg->inflight_packed = make_pack(agg, &agg->inflight_pack);
				return PLAN_PARTITIONED;
			}
			return PLAN_GLOBAL;
		case GA_STRATEGY_SHARED:
			{
				GpuPlan		plan = ga_gpu_plan_shared(agg, groups, 1);

				if (plan != PLAN_GLOBAL)
					return plan;
			}
			break;
		default:				/* auto, and perfect where it does not apply */
			break;
	}
	switch (ga_auto_strategy_for_groups(&agg->device->info, &agg->request, groups))
	{
		case GA_STRATEGY_SHARED:
			return ga_gpu_plan_shared(agg, groups, 0);
		case GA_STRATEGY_PARTITIONED:
			/* only the chunk kernels pay: keys that pack in this batch */
			if (agg->rows_ok && make_pack(agg, &agg->inflight_pack))
			{
				agg->inflight_packed = 1;
				return PLAN_PARTITIONED;
			}
			return PLAN_GLOBAL;
		default:
			return PLAN_GLOBAL;
	}
}

/*
 * Groups of a batch of nrows rows estimated from the probe: HyperLogLog
 * (with the small-range correction) for the sample's distinct tuples, then,
 * when the sample was not the whole batch, the group count g whose uniform
 * draws would show that many distinct tuples in the sample,
 * g * (1 - exp(-sampled / g)), at most nrows.
 */
int64_t
ga_gpu_plan_estimate_groups(const GaDevProbe *probe, int64_t nrows)
{
	const double m = GA_HLL_REGISTERS;
	const double alpha = 0.7213 / (1.0 + 1.079 / m);
	const double sampled = (double) probe->rows;
	double		sum = 0;
	double		zeros = 0;
	double		distinct;
	double		lo,
				hi;

	if (probe->rows == 0)
		return 0;
	for (int r = 0; r < GA_HLL_REGISTERS; r++)
	{
		sum += ldexp(1.0, -(int) probe->hll[r]);
		if (probe->hll[r] == 0)
			zeros++;
	}
	distinct = alpha * m * m / sum;
	if (distinct <= 2.5 * m && zeros > 0)
		distinct = m * log(m / zeros);
	if (distinct > sampled)
		distinct = sampled;
	if (distinct < 1)
		distinct = 1;
	if (sampled >= (double) nrows)
		return (int64_t) ceil(distinct);
	/*
	 * Almost all distinct: g is at least ~5 times the sample, and the
	 * sketch's few percent of error make the inversion unstable; say nrows.
	 */
	if (distinct >= 0.9 * sampled)
		return nrows;

	/* the expected distinct draws grow with g: bisect */
	lo = distinct;
	hi = (double) nrows;
	if (hi * (1 - exp(-sampled / hi)) <= distinct)
		return nrows;
	for (int i = 0; i < 60; i++)
	{
		double		mid = 0.5 * (lo + hi);

		if (mid * (1 - exp(-sampled / mid)) < distinct)
			lo = mid;
		else
			hi = mid;
	}
	return (int64_t) ceil(hi);
}

/* Free the perfect entries (if any). */
void
ga_gpu_plan_perfect_free(GpuAgg *agg)
{
	device_free(&agg->dev_perfect.acc);
	device_free(&agg->dev_perfect.seen);
}

/*
 * After the first batch's probe: whether a direct index over the keys'
 * ranges applies, and if so its layout and arrays.  Each key's range is the
 * sample's min..max, widened by an eighth plus one on both sides (within the type)
 * when the sample was not the whole batch, plus a null slot.  It applies
 * when the product of the ranges is at most GPU_PERFECT_MAX_ENTRIES and its
 * entries fit in a fourth of the GPU's memory; auto also wants it small
 * enough for shared memory or at most GPU_PERFECT_DENSITY entries per
 * estimated group.  Failing to allocate it is not an error: the hash-based
 * strategies take over.
 */
void
ga_gpu_plan_decide_perfect(GpuAgg *agg, int64_t nrows)
{
	const GaDevProbe *probe = agg->host_probe;
	GaDevPerfect *p = &agg->dev_perfect;
	const int	forced = agg->request.strategy == GA_STRATEGY_PERFECT;
	const int	whole = probe->rows >= (unsigned long long) nrows;
	const int64_t state = agg->inflight_aggs.shared_state;
	double		entries = 1;
	double		observed = 1;	/* entries the sample's values span */
	size_t		acc_bytes;
	size_t		seen_bytes;
	GaStatus	ignored;

	if (agg->nkeys < 1 || agg->nkeys > GA_PERFECT_MAX_KEYS || !agg->rows_ok ||
		agg->two_phase_only)
		return;
	for (int k = 0; k < agg->nkeys; k++)
	{
		int64_t		tmin,
					tmax;
		long long	lo,
					hi;
		double		width;

		ga_int_type_range(agg->column_types[agg->key_columns[k]], &tmin, &tmax);
		if (probe->min[k] > probe->max[k])
			lo = hi = 0;		/* no value in the sample: nulls only */
		else
		{
			lo = probe->min[k];
			hi = probe->max[k];
		}
		width = (double) hi - (double) lo + 1;
		if (width > (double) GPU_PERFECT_MAX_ENTRIES)
			return;
		observed *= width + (probe->has_null[k] ? 1 : 0);
		if (!whole)
		{
			/* width <= 2^28 here, so neither bound below overflows */
			long long	slack = (long long) (width / 8) + 1;

			lo = lo < tmin + slack ? tmin : lo - slack;
			hi = hi > tmax - slack ? tmax : hi + slack;
			width = (double) hi - (double) lo + 1;
			if (width > (double) GPU_PERFECT_MAX_ENTRIES)
				return;
		}
		p->lo[k] = lo;
		p->base[k] = hi - lo + 2;	/* the values, and the null slot */
		p->stride[k] = (long long) entries;
		entries *= (double) p->base[k];
		if (entries > (double) GPU_PERFECT_MAX_ENTRIES)
			return;
	}
	p->nkeys = agg->nkeys;
	p->entries = (long long) entries;

	agg->perfect_in_shared =
		(int64_t) ga_direct_shared_bytes(p->entries, 1, (int) state) <= agg->direct_budget;
	if (!agg->perfect_in_shared)
	{
		int64_t		groups = agg->device_estimate > 0 ? agg->device_estimate : 1;

		if (!forced && (double) p->entries > (double) GPU_PERFECT_DENSITY * groups)
			return;
		if ((double) p->entries * p->entry_bytes > (double) agg->device->info.total_memory / 4)
			return;
	}

	acc_bytes = (size_t) p->entries * p->entry_bytes;
	seen_bytes = 4 * (size_t) ((p->entries + 31) / 32);
	if (!device_alloc((void **) &p->acc, acc_bytes, "the perfect entries", &ignored) ||
		!device_alloc((void **) &p->seen, seen_bytes, "the perfect bitmap", &ignored))
	{
		ga_gpu_plan_perfect_free(agg);
		(void) cudaGetLastError();
		return;
	}
	agg->perfect = 1;
	agg->perfect_needs_init = 1;
	agg->perfect_replicas = agg->perfect_in_shared ?
		ga_gpu_plan_replicas(agg, (int64_t) observed, p->entries, (int64_t) seen_bytes,
							 agg->direct_budget) : 1;
}
