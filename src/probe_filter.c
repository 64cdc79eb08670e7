/*-------------------------------------------------------------------------
 *
 * probe_filter.c
 *	  A join-fed GpuHashAgg's probe-key filter: Bloom filters of the build
 *	  keys of the chain's INNER (and RIGHT, SEMI) joins keyed on the probe
 *	  side, which the parallel workers packing the probe side test each
 *	  row's key against, so that rows no build key can match never reach
 *	  the leader (a semi-join reduction, as a parallel hash join's workers
 *	  drop them: TPC-H Q5 and Q10 join 6e7 lineitem rows with a few million
 *	  orders of a date range).
 *
 * When a join step qualifies: its type drops probe rows without a match
 * (INNER, SEMI, RIGHT: a RIGHT step's unmatched rows are its build rows),
 * no RIGHT or FULL step comes before it (a probe row dropped early would
 * not mark the build rows it matches there), and its device key is one
 * exact int64 column of the probe side (GpuJoinExactKey, or two int2/int4
 * keys paired): dictionary ids of text keys differ between a worker's
 * messages and the leader's dictionary, and keys over other sides are not
 * known to the probe side.  A null key never matches, so such rows go too.
 *
 * The filter is a register-blocked Bloom filter (Bloom, "Space/time
 * trade-offs in hash coding with allowable errors", 1970; one 64-bit word
 * per key, as in Putze, Sanders and Singler's blocked filters): a key's
 * 64-bit hash picks a word by its top bits and PROBE_FILTER_BITS bits in
 * that word by its low bits; about 16 bits per key give a few percent of
 * false positives, which only cost the device a probe.  There are no false
 * negatives: a key the build has always passes.
 *
 * The leader builds the filters while it reads the build sides
 * (agg_join.c), and the probe side's GpuAggPack copies them into its
 * parallel query's shared memory (agg_pack.c), where every participant
 * reads them.  A participant stops testing once it has seen
 * PROBE_FILTER_SAMPLE rows of which almost all passed.
 *
 *-------------------------------------------------------------------------
 */
#include "gpuagg.h"

#include "port/atomics.h"

/* Bits set per key in its word. */
#define PROBE_FILTER_BITS 4

/* About this many bits per key. */
#define PROBE_FILTER_BITS_PER_KEY 16

/* Largest filter: 2^29 words (4 GB) is far past this cap of 2^24 (128 MB). */
#define PROBE_FILTER_MAX_LOG2_WORDS 24

/* Rows a participant tests before judging whether the filter pays. */
#define PROBE_FILTER_SAMPLE 1048576

/* Test no more once more than this share of the sample passed. */
#define PROBE_FILTER_USELESS 0.95

/* One step's filter in shared memory: the words follow the header. */
typedef struct ProbeFilterStep
{
	int32		column;			/* the key's column in the probe side's batch */
	int32		log2_words;
	int64		nkeys;
	Size		words_offset;	/* from the start of the shared area */
} ProbeFilterStep;

/* The shared area's header. */
typedef struct ProbeFilterShared
{
	Size		total_bytes;	/* header, steps and words (MAXALIGNed) */
	int32		nsteps;
	pg_atomic_uint64 rows_tested;	/* by every participant */
	pg_atomic_uint64 rows_removed;
	ProbeFilterStep steps[GA_AGG_MAX_JOIN_STEPS];
} ProbeFilterShared;

/* One step's filter as the leader builds it. */
typedef struct ProbeFilterBuilt
{
	int			column;
	int			log2_words;
	int64		nkeys;
	uint64	   *words;
} ProbeFilterBuilt;

struct GpuAggProbeFilter
{
	int			nsteps;
	ProbeFilterBuilt steps[GA_AGG_MAX_JOIN_STEPS];
};

/*
 * The 64-bit hash of a key: the finalizer of SplitMix64 (Steele, Lea and
 * Flood), which spreads every input bit over the output.
 */
static inline uint64
probe_filter_hash(int64 key)
{
	uint64		z = (uint64) key + UINT64CONST(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64CONST(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The bits a hash sets in its word: PROBE_FILTER_BITS positions from its low bits. */
static inline uint64
probe_filter_mask(uint64 hash)
{
	uint64		mask = 0;
	int			i;

	for (i = 0; i < PROBE_FILTER_BITS; i++)
		mask |= UINT64CONST(1) << ((hash >> (6 * i)) & 63);
	return mask;
}

/* Whether a key may be in the filter of 2^log2_words words. */
static inline bool
probe_filter_may_contain(const uint64 *words, int log2_words, int64 key)
{
	uint64		hash = probe_filter_hash(key);
	uint64		mask = probe_filter_mask(hash);
	uint64		word = log2_words > 0 ? hash >> (64 - log2_words) : 0;

	return (words[word] & mask) == mask;
}

/*
 * Whether join step `step` (1-based) of a description qualifies for a
 * probe-key filter (see the head of this file), and its key column in the
 * layout.
 */
bool
GpuAggProbeFilterStepQualifies(const GpuAggDesc *desc, const GpuAggLayout *layout, int step,
							   int *column)
{
	const GaAggJoinStep *spec = &layout->join_spec.steps[step - 1];
	int			t;

	if (!gpuagg_probe_filter || desc->join_steps[step - 1].nkeys < 1)
		return false;
	if (spec->type != GA_AGG_JOIN_INNER && spec->type != GA_AGG_JOIN_RIGHT)
		return false;
	for (t = 1; t < step; t++)
		if (layout->join_spec.steps[t - 1].type == GA_AGG_JOIN_RIGHT ||
			layout->join_spec.steps[t - 1].type == GA_AGG_JOIN_FULL)
			return false;
	if (spec->nkeys > 1 || layout->from_build[spec->key_column] != 0 ||
		layout->sources[spec->key_column].encoding != GPUAGG_ENC_JOIN_KEY)
		return false;
	*column = spec->key_column;
	return true;
}

/* A filter with no steps yet, in the current memory context. */
GpuAggProbeFilter *
GpuAggProbeFilterCreate(void)
{
	return palloc0(sizeof(GpuAggProbeFilter));
}

/*
 * Add a step's filter over its build's n keys (each once or more), tested
 * against the probe batch's column `column`.  A build of more keys than
 * the largest filter holds well adds none.
 */
void
GpuAggProbeFilterAdd(GpuAggProbeFilter *filter, int column, const int64 *keys, int64 n)
{
	ProbeFilterBuilt *built;
	int			log2_words = 0;
	int64		i;

	while (log2_words < PROBE_FILTER_MAX_LOG2_WORDS &&
		   ((int64) 64 << log2_words) < n * PROBE_FILTER_BITS_PER_KEY)
		log2_words++;
	if (((int64) 64 << log2_words) < n * PROBE_FILTER_BITS_PER_KEY / 2 ||
		filter->nsteps >= GA_AGG_MAX_JOIN_STEPS)
		return;
	built = &filter->steps[filter->nsteps++];
	built->column = column;
	built->log2_words = log2_words;
	built->nkeys = n;
	built->words = MemoryContextAllocExtended(CurrentMemoryContext,
											  sizeof(uint64) << log2_words,
											  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < n; i++)
	{
		uint64		hash = probe_filter_hash(keys[i]);

		built->words[log2_words > 0 ? hash >> (64 - log2_words) : 0] |= probe_filter_mask(hash);
	}
}

/* Bytes the shared area takes for a filter (NULL or empty: the header alone). */
Size
GpuAggProbeFilterSharedBytes(const GpuAggProbeFilter *filter)
{
	Size		bytes = MAXALIGN(sizeof(ProbeFilterShared));
	int			s;

	for (s = 0; filter != NULL && s < filter->nsteps; s++)
		bytes += MAXALIGN(sizeof(uint64) << filter->steps[s].log2_words);
	return bytes;
}

/*
 * Lay the filter out in a shared area of `room` bytes (its size as
 * estimated earlier); a filter that does not fit there (rebuilt larger for
 * a rescan) is left out: the participants then test nothing.
 */
void
GpuAggProbeFilterShare(const GpuAggProbeFilter *filter, void *place, Size room)
{
	ProbeFilterShared *shared = place;
	Size		at = MAXALIGN(sizeof(ProbeFilterShared));
	int			s;

	memset(shared, 0, sizeof(ProbeFilterShared));
	shared->total_bytes = room;
	pg_atomic_init_u64(&shared->rows_tested, 0);
	pg_atomic_init_u64(&shared->rows_removed, 0);
	if (filter == NULL || GpuAggProbeFilterSharedBytes(filter) > room)
		return;
	for (s = 0; s < filter->nsteps; s++)
	{
		const ProbeFilterBuilt *built = &filter->steps[s];
		ProbeFilterStep *step = &shared->steps[s];

		step->column = built->column;
		step->log2_words = built->log2_words;
		step->nkeys = built->nkeys;
		step->words_offset = at;
		memcpy((char *) place + at, built->words, sizeof(uint64) << built->log2_words);
		at += MAXALIGN(sizeof(uint64) << built->log2_words);
	}
	shared->nsteps = filter->nsteps;
}

/* Bytes of the shared area at place (its header's). */
Size
GpuAggProbeFilterAreaBytes(const void *place)
{
	return ((const ProbeFilterShared *) place)->total_bytes;
}

/*
 * Drop from a probe batch's rows [from, nrows) every row whose key some
 * step's filter rules out (a null key included), keeping the others in
 * order; the batch's columns are those of the probe side from layout
 * column first_column on.  Validity bits past the rows kept are set again,
 * as an empty batch has them.  *tested and *passed count the rows; once a
 * participant has tested PROBE_FILTER_SAMPLE rows and nearly all passed,
 * this tests no more.  Adds to the shared counters for EXPLAIN.
 */
void
GpuAggProbeFilterApply(void *place, GaBatch *batch, int first_column, int64 from,
					   int64 *tested, int64 *passed)
{
	ProbeFilterShared *shared = place;
	int64		n = batch->nrows;
	int64		kept = from;
	int64		r;
	int			c;
	int			s;

	if (shared->nsteps == 0 || n <= from ||
		(*tested >= PROBE_FILTER_SAMPLE && *passed > *tested * PROBE_FILTER_USELESS))
		return;
	for (r = from; r < n; r++)
	{
		bool		keep = true;

		for (s = 0; s < shared->nsteps && keep; s++)
		{
			const ProbeFilterStep *step = &shared->steps[s];
			const GaColumn *key = &batch->columns[step->column - first_column];

			keep = !ga_column_is_null(key, r) &&
				probe_filter_may_contain((const uint64 *) ((const char *) place + step->words_offset),
										 step->log2_words, ((const int64 *) key->values)[r]);
		}
		if (!keep)
			continue;
		if (kept != r)
		{
			for (c = 0; c < batch->ncolumns; c++)
			{
				GaColumn   *col = &batch->columns[c];
				int			width = ga_type_width(col->type);

				if (width > 0)
					memcpy((char *) col->values + kept * width,
						   (char *) col->values + r * width, width);
				if (ga_column_is_null(col, r))
					ga_column_set_null(col, kept);
				else
					col->validity[kept >> 3] |= (uint8) (1 << (kept & 7));
			}
		}
		kept++;
	}
	/* rows [kept, n) become empty again: every validity bit set */
	for (c = 0; c < batch->ncolumns && kept < n; c++)
		for (r = kept; r < n; r++)
			batch->columns[c].validity[r >> 3] |= (uint8) (1 << (r & 7));
	*tested += n - from;
	*passed += kept - from;
	pg_atomic_fetch_add_u64(&shared->rows_tested, (uint64) (n - from));
	pg_atomic_fetch_add_u64(&shared->rows_removed, (uint64) (n - kept));
	batch->nrows = kept;
}

/*
 * For EXPLAIN: the filter's steps' keys in all, and the rows tested and
 * removed by every participant; false when the area holds no filter.
 */
bool
GpuAggProbeFilterCounts(const void *place, int *nsteps, int64 *nkeys, uint64 *tested,
						uint64 *removed)
{
	ProbeFilterShared *shared = (ProbeFilterShared *) place;
	int			s;

	if (shared->nsteps == 0)
		return false;
	*nsteps = shared->nsteps;
	*nkeys = 0;
	for (s = 0; s < shared->nsteps; s++)
		*nkeys += shared->steps[s].nkeys;
	*tested = pg_atomic_read_u64(&shared->rows_tested);
	*removed = pg_atomic_read_u64(&shared->rows_removed);
	return true;
}
