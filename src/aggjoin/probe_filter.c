/*-------------------------------------------------------------------------
 *
 * aggjoin/probe_filter.c
 *	  An aggjoin GpuHashAgg's probe-key filter: Bloom filters of the build
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
 * (aggjoin/build.c), for the steps the planner expects to keep at most half
 * of the probe rows (a filter that drops few rows costs the workers a lookup
 * a row and saves nothing), and the probe side's GpuAggPack copies them into
 * its parallel query's shared memory (hashagg/pack.c), where every
 * participant reads them.  The participants test each row's key right after
 * the heap tuple is deformed (batch/scan_direct.c) or the child returns it,
 * before the row is encoded into the batch, so a dropped row costs neither
 * the encoding (numeric operands, dictionary ids) nor the leader's copy.  A
 * participant stops testing once it has seen PROBE_FILTER_SAMPLE rows of
 * which almost all passed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/atomics.h"

#include "aggjoin/probe_filter.h"
#include "batch/exact_key.h"
#include "gpuagg_hash.h"
#include "guc.h"

/* Bits set per key in its word. */
#define PROBE_FILTER_BITS 4

/* About this many bits per key. */
#define PROBE_FILTER_BITS_PER_KEY 16

/* Largest filter: 2^21 words (16 MB), beyond which lookups miss the caches. */
#define PROBE_FILTER_MAX_LOG2_WORDS 21

/* A step whose join the planner expects to keep more of the probe rows has none. */
#define PROBE_FILTER_MAX_MATCH_FRACTION 0.5

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
 * The 64-bit hash of a key: one step of SplitMix64 (Steele, Lea and Flood),
 * the key advanced by the golden increment and finalized, which spreads
 * every input bit over the output.
 */
static inline uint64
probe_filter_hash(int64 key)
{
	return ga_splitmix64((uint64) key + GA_HASH_GOLDEN);
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

	if (!gpuagg_probe_filter || desc->join_steps[step - 1].nkeys < 1 ||
		desc->join_steps[step - 1].match_fraction > PROBE_FILTER_MAX_MATCH_FRACTION)
		return false;
	if (spec->type != GA_AGGJOIN_INNER && spec->type != GA_AGGJOIN_SEMI &&
		spec->type != GA_AGGJOIN_RIGHT)
		return false;
	for (t = 1; t < step; t++)
		if (layout->join_spec.steps[t - 1].type == GA_AGGJOIN_RIGHT ||
			layout->join_spec.steps[t - 1].type == GA_AGGJOIN_FULL)
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

/* A participant's view of the shared filters: each step's key as its child column. */
struct GpuAggProbeKeys
{
	ProbeFilterShared *shared;
	int			nsteps;
	struct
	{
		AttrNumber	attno;		/* of the packed side's child */
		Oid			type;		/* base type, for GpuJoinExactKey */
		int			log2_words;
		const uint64 *words;
	}			steps[GA_AGG_MAX_JOIN_STEPS];
	int64		tested;			/* rows tested, passed (this participant) */
	int64		passed;
	int64		unflushed_tested;	/* not yet added to the shared counters */
	int64		unflushed_removed;
	bool		off;			/* the sample passed almost all: test no more */
};

/*
 * A participant's view of the filters in the shared area at place (NULL
 * when it holds none), for a probe side whose batch columns are the
 * layout's from column 0 on: each step's key column gives the child
 * column to read and its type.
 */
GpuAggProbeKeys *
GpuAggProbeKeysAttach(void *place, const GpuAggLayout *layout, MemoryContext cxt)
{
	ProbeFilterShared *shared = place;
	GpuAggProbeKeys *keys;
	int			s;

	if (shared == NULL || shared->nsteps == 0)
		return NULL;
	keys = MemoryContextAllocZero(cxt, sizeof(GpuAggProbeKeys));
	keys->shared = shared;
	keys->nsteps = shared->nsteps;
	for (s = 0; s < shared->nsteps; s++)
	{
		const GpuAggColumnSource *src = &layout->sources[shared->steps[s].column];

		keys->steps[s].attno = src->attno;
		keys->steps[s].type = src->type;
		keys->steps[s].log2_words = shared->steps[s].log2_words;
		keys->steps[s].words = (const uint64 *) ((char *) place + shared->steps[s].words_offset);
	}
	return keys;
}

/* Add the rows counted since the last call to the shared counters. */
void
GpuAggProbeKeysFlush(GpuAggProbeKeys *keys)
{
	if (keys == NULL || keys->unflushed_tested == 0)
		return;
	pg_atomic_fetch_add_u64(&keys->shared->rows_tested, (uint64) keys->unflushed_tested);
	pg_atomic_fetch_add_u64(&keys->shared->rows_removed, (uint64) keys->unflushed_removed);
	keys->unflushed_tested = keys->unflushed_removed = 0;
}

/* Count n rows tested of which `kept` passed; judge the sample once full. */
static void
probe_keys_count(GpuAggProbeKeys *keys, int64 n, int64 kept)
{
	keys->tested += n;
	keys->passed += kept;
	keys->unflushed_tested += n;
	keys->unflushed_removed += n - kept;
	if (keys->unflushed_tested >= 65536)
		GpuAggProbeKeysFlush(keys);
	if (keys->tested >= PROBE_FILTER_SAMPLE &&
		(double) keys->passed > (double) keys->tested * PROBE_FILTER_USELESS)
		keys->off = true;
}

/* Whether step s's filter lets a key through (a null key never). */
static inline bool
probe_keys_step_passes(const GpuAggProbeKeys *keys, int s, Datum value, bool isnull)
{
	return !isnull &&
		probe_filter_may_contain(keys->steps[s].words, keys->steps[s].log2_words,
								 GpuJoinExactKey(value, keys->steps[s].type));
}

/*
 * Whether a row, given as its child columns' values, may join: false when
 * some step's filter rules its key out.  Always true once this participant
 * stopped testing.
 */
bool
GpuAggProbeKeysRow(GpuAggProbeKeys *keys, const Datum *values, const bool *isnull)
{
	bool		pass;
	int			s;

	if (keys == NULL || keys->off)
		return true;
	pass = true;
	for (s = 0; s < keys->nsteps && pass; s++)
		pass = probe_keys_step_passes(keys, s, values[keys->steps[s].attno - 1],
									  isnull[keys->steps[s].attno - 1]);
	probe_keys_count(keys, 1, pass ? 1 : 0);
	return pass;
}

/*
 * For a run of n rows given column by column (input[c] the child column
 * c + 1's values and nulls), set keep[r] for the rows that may join;
 * returns how many.  Every row is kept once this participant stopped
 * testing.
 */
int
GpuAggProbeKeysRun(GpuAggProbeKeys *keys, const GpuAggInputColumn *input, int n, bool *keep)
{
	int			kept = 0;
	int			r;
	int			s;

	if (keys == NULL || keys->off)
	{
		memset(keep, true, n);
		return n;
	}
	for (r = 0; r < n; r++)
	{
		bool		pass = true;

		for (s = 0; s < keys->nsteps && pass; s++)
		{
			const GpuAggInputColumn *col = &input[keys->steps[s].attno - 1];

			pass = probe_keys_step_passes(keys, s, col->values[r],
										  col->hasnull && col->isnull[r]);
		}
		keep[r] = pass;
		kept += pass;
	}
	probe_keys_count(keys, n, kept);
	return kept;
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
