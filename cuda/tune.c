/*-------------------------------------------------------------------------
 *
 * tune.c
 *	  The launch tuner of the GPU aggregation kernels (tune.h): candidate
 *	  parameters per kernel family, the search per shape class, the file.
 *
 * Candidates.  Each family has two or three parameters, each with a few
 * levels in increasing order, one of which is the rule the kernels follow
 * untuned (0 in GaLaunchParams); a candidate is one level of each, and its
 * neighbours differ by one level in one parameter.  The all-rules
 * candidate is the search's start, so the defaults are always measured.
 *
 * The search follows Algorithm 1 of Rosenfeld et al. (DaMoN'19; the
 * paper's "blocks" are our batches): from the defaults, follow the
 * gradient to a better neighbour; a neighbour within s of its reference
 * joins the queue of references (a plateau, explored from both ends); a
 * reference slower than p times the best is pruned; a reference whose
 * neighbours are all measured is done.  A candidate's time is the mean of
 * three consecutive samples (kernel milliseconds per row) whose range is
 * within v_max of their mean, dropping the oldest until it is or b_max
 * samples ran it; a candidate whose first batch takes GA_TUNE_DROP times
 * the best's time is measured by that one batch.  The search ends when the
 * queue empties or GA_TUNE_MAX_EXPLORE samples explored; the best
 * candidate then runs every batch of the class.
 *
 * A sample is not one batch but consecutive batches of the candidate whose
 * kernel time adds up to GA_TUNE_SAMPLE_MS (their milliseconds over their
 * rows): launch and clock jitter of a few microseconds is a percent of a
 * batch of a fraction of a millisecond, and the search weighs differences
 * of a few percent.  A batch that takes GA_TUNE_SAMPLE_MS alone is a
 * sample by itself.
 *
 * The bound.  At most every other batch of a class runs a candidate under
 * test (the others run the best so far), and at most GA_TUNE_MAX_EXPLORE
 * samples do: a class whose batches take t ms converges within
 * 2 * GA_TUNE_MAX_EXPLORE * ceil(GA_TUNE_SAMPLE_MS / t) batches, and its
 * exploring batches take at most GA_TUNE_MAX_EXPLORE * (GA_TUNE_SAMPLE_MS
 * + t) ms of kernel time (candidates dropped early take less).
 *
 * The file.  A tuner with a directory (the GPU service's data directory)
 * reads its model's file when it is created and writes it, to a temporary
 * file renamed over the old one, whenever a class's search ends.  It holds
 * the format, gpuagg's version, the model, one line per tuned class and a
 * checksum; a file that fails any check is ignored with a log line.
 *
 *-------------------------------------------------------------------------
 */
#include "tune.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNE_FORMAT "gpuagg tuning 4"
#define TUNE_QUEUE 16			/* references the search keeps at most */
#define TUNE_UNTESTED (-1.0f)
#define TUNE_IN_TEST (-2.0f)
#define TUNE_MAX_TUNERS GA_MAX_GPUS

/* The fields of GaLaunchParams a parameter sets. */
typedef enum TuneField
{
	FIELD_THREADS,
	FIELD_BLOCKS,
	FIELD_REPLICAS,
	FIELD_CACHE,
	FIELD_PART
} TuneField;

typedef struct TuneDim
{
	TuneField	field;
	int			nlevels;
	int32_t		levels[6];		/* increasing; 0 is the rule's place */
} TuneDim;

typedef struct TuneSpace
{
	int			ndims;
	TuneDim		dims[3];
} TuneSpace;

/*
 * The candidates of each family.  Threads: the shared-memory kernels' rule
 * picks 256 or 512, so it sits between them; the two-phase kernels' rule
 * is 256, their bound.  Blocks: the rule is all that fit.  Replicas: the
 * rule's cap is 32.  Cache: -1 is none, then fewer entries than the rule.
 */
static const TuneSpace tune_spaces[GA_TUNE_NUM_FAMILIES] = {
	/* perfect */
	{3, {{FIELD_THREADS, 4, {128, 256, 0, 512}},
		 {FIELD_BLOCKS, 5, {1, 2, 4, 8, 0}},
		 {FIELD_REPLICAS, 6, {1, 2, 4, 8, 16, 0}}}},
	/* shared */
	{3, {{FIELD_THREADS, 4, {128, 256, 0, 512}},
		 {FIELD_BLOCKS, 5, {1, 2, 4, 8, 0}},
		 {FIELD_REPLICAS, 6, {1, 2, 4, 8, 16, 0}}}},
	/* global */
	{3, {{FIELD_THREADS, 3, {64, 128, 0}},
		 {FIELD_BLOCKS, 6, {1, 2, 4, 8, 16, 0}},
		 {FIELD_CACHE, 4, {-1, 4, 2, 0}}}},
	/* partitioned */
	{2, {{FIELD_PART, 5, {-2, -1, 0, 1, 2}},
		 {FIELD_BLOCKS, 6, {1, 2, 4, 8, 16, 0}}}},
};

typedef enum TuneClassState
{
	CLASS_NEW = 0,
	CLASS_SEARCH,
	CLASS_DONE
} TuneClassState;

/* The search of one shape class. */
typedef struct TuneClass
{
	TuneClassState state;
	int			best;			/* c_f; -1: none measured */
	int64_t		batches;		/* batches of the class asked for */
	int64_t		explored;		/* of them, run with the pending candidate */
	int64_t		sampled;		/* samples the search took (the bound) */
	int			queue[TUNE_QUEUE];	/* Q: the references, head first */
	int			nqueue;
	int			pending;		/* the candidate under test; -1: none */
	int			pending_ref;	/* the reference it neighbours; -1: c_0 */
	int			nsamples;
	double		samples[GA_TUNE_MAX_SAMPLES];
	int			nbatches;		/* batches of the candidate reported */
	double		part_ms;		/* the sample being gathered: kernel ms */
	int64_t		part_rows;		/* and rows of its batches */
	float		cost[GA_TUNE_MAX_CANDIDATES];	/* ms per row; or TUNE_* */
	int			loaded;			/* best came from the file */
} TuneClass;

struct GaTuner
{
	char		model[128];
	pthread_mutex_t lock;
	double		sample_ms;		/* kernel time of a sample, at least */
	int			file_state;		/* GaTuneSummary.file_state */
	TuneClass	classes[GA_TUNE_CLASSES];
};

/* The process's tuners and where they keep their files. */
static pthread_mutex_t tune_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static GaTuner *tune_registry[TUNE_MAX_TUNERS];
static char tune_dir[1024];
static char tune_version[32];
static void (*tune_log) (const char *message);

/* ------------------------------------------------------------------------
 * Candidates
 * ------------------------------------------------------------------------
 */

/* Number of candidates of a family. */
int
ga_tune_candidates(GaTuneFamily family)
{
	const TuneSpace *space;
	int			n = 1;

	if (family < 0 || family >= GA_TUNE_NUM_FAMILIES)
		return 0;
	space = &tune_spaces[family];
	for (int d = 0; d < space->ndims; d++)
		n *= space->dims[d].nlevels;
	return n;
}

/* The level of each parameter of a candidate (mixed radix, first fastest). */
static void
candidate_levels(const TuneSpace *space, int candidate, int *levels)
{
	for (int d = 0; d < space->ndims; d++)
	{
		levels[d] = candidate % space->dims[d].nlevels;
		candidate /= space->dims[d].nlevels;
	}
}

/* The candidate of some levels. */
static int
levels_candidate(const TuneSpace *space, const int *levels)
{
	int			candidate = 0;

	for (int d = space->ndims - 1; d >= 0; d--)
		candidate = candidate * space->dims[d].nlevels + levels[d];
	return candidate;
}

/* The candidate that is every rule (all-zero parameters). */
int
ga_tune_default_candidate(GaTuneFamily family)
{
	const TuneSpace *space = &tune_spaces[family];
	int			levels[3] = {0, 0, 0};

	for (int d = 0; d < space->ndims; d++)
		for (int l = 0; l < space->dims[d].nlevels; l++)
			if (space->dims[d].levels[l] == 0)
				levels[d] = l;
	return levels_candidate(space, levels);
}

/* The launch parameters of a candidate. */
void
ga_tune_candidate_params(GaTuneFamily family, int candidate, GaLaunchParams *params)
{
	const TuneSpace *space = &tune_spaces[family];
	int			levels[3];

	memset(params, 0, sizeof(*params));
	candidate_levels(space, candidate, levels);
	for (int d = 0; d < space->ndims; d++)
	{
		int32_t		v = space->dims[d].levels[levels[d]];

		switch (space->dims[d].field)
		{
			case FIELD_THREADS:
				params->threads = v;
				break;
			case FIELD_BLOCKS:
				params->blocks_per_sm = v;
				break;
			case FIELD_REPLICAS:
				params->replicas_max = v;
				break;
			case FIELD_CACHE:
				params->cache_less = v;
				break;
			case FIELD_PART:
				params->part_shift = v;
				break;
		}
	}
}

/*
 * The contention level of an aggregation from its first batch's probe:
 * `repeats` of the `pairs` of adjacent sampled rows had equal key tuples,
 * over about `groups` groups.  That share estimates the chance that two
 * nearby rows update the same entry, which is what makes the kernels'
 * atomics contend (skewed keys and clustered or sorted keys alike).
 * Uniform keys over g groups show 1 / g of the pairs; level 1 takes
 * GA_TUNE_CONTENDED_TIMES times that, so that sampling noise does not
 * split uniform keys between the levels, and at least
 * GA_TUNE_CONTENDED_MIN, below which few rows meet on one entry whatever
 * the groups.  Under GA_TUNE_CONTENDED_TIMES groups no share reaches it:
 * every row meets others there, skewed or not.
 */
int
ga_tune_contention(uint64_t repeats, uint64_t pairs, int64_t groups)
{
	double		share;

	if (pairs == 0 || groups < 1)
		return 0;
	share = (double) repeats / (double) pairs;
	return share >= GA_TUNE_CONTENDED_MIN &&
		share >= (double) GA_TUNE_CONTENDED_TIMES / (double) groups;
}

/*
 * The shape class of a family's batch: key width class, contention level
 * (0 or 1), then group range.
 */
int
ga_tune_class(GaTuneFamily family, int key_bits, int contention, int64_t groups)
{
	int			width = key_bits <= 32 ? 0 : key_bits <= 64 ? 1 : 2;
	int			level = contention > 0 ? 1 : 0;
	int			range = 0;

	for (groups = groups < 1 ? 1 : groups; groups >= 2 && range < GA_TUNE_RANGES - 1; groups >>= 1)
		range++;
	return (((int) family * GA_TUNE_WIDTHS + width) * GA_TUNE_LEVELS + level) *
		GA_TUNE_RANGES + range;
}

/* The family of a shape class. */
static GaTuneFamily
class_family(int cls)
{
	return (GaTuneFamily) (cls / (GA_TUNE_WIDTHS * GA_TUNE_LEVELS * GA_TUNE_RANGES));
}

/* Name of a kernel family, as EXPLAIN shows it. */
const char *
ga_tune_family_name(GaTuneFamily family)
{
	switch (family)
	{
		case GA_TUNE_PERFECT:
			return "perfect";
		case GA_TUNE_SHARED:
			return "shared";
		case GA_TUNE_GLOBAL:
			return "global";
		case GA_TUNE_PARTITIONED:
			return "partitioned";
		default:
			return "none";
	}
}

/* Name of where launch parameters came from, as EXPLAIN shows it. */
const char *
ga_launch_source_name(GaLaunchSource source)
{
	switch (source)
	{
		case GA_LAUNCH_TUNED:
			return "tuned";
		case GA_LAUNCH_EXPLORING:
			return "exploring";
		case GA_LAUNCH_FORCED:
			return "forced";
		default:
			return "defaults";
	}
}

/* Check launch parameters against their ranges (gpuagg_device.h). */
int
ga_launch_params_check(const GaLaunchParams *p, char *why, int why_len)
{
	const char *bad = NULL;

	if (p->threads != 0 && (p->threads < 32 || p->threads > 1024 || p->threads % 32 != 0))
		bad = "threads must be 0 or a multiple of 32 from 32 to 1024";
	else if (p->blocks_per_sm < 0 || p->blocks_per_sm > 32)
		bad = "blocks_per_sm must be between 0 and 32";
	else if (p->replicas_max < 0 || p->replicas_max > 32 ||
			 (p->replicas_max & (p->replicas_max - 1)) != 0)
		bad = "replicas must be 0 or a power of two up to 32";
	else if (p->cache_less < -1 || p->cache_less > 12)
		bad = "cache_less must be between -1 and 12";
	else if (p->part_shift < -8 || p->part_shift > 8)
		bad = "part_shift must be between -8 and 8";
	if (bad != NULL && why != NULL && why_len > 0)
		snprintf(why, (size_t) why_len, "%s", bad);
	return bad == NULL;
}

/* Parse name=value launch parameters (gpuagg_device.h). */
int
ga_launch_params_parse(const char *text, GaLaunchParams *params, char *why, int why_len)
{
	char		copy[512];
	char	   *save = NULL;

	memset(params, 0, sizeof(*params));
	if (strlen(text) >= sizeof(copy))
	{
		snprintf(why, (size_t) why_len, "the text is too long");
		return 0;
	}
	strcpy(copy, text);
	for (char *item = strtok_r(copy, ", ", &save); item != NULL; item = strtok_r(NULL, ", ", &save))
	{
		char	   *eq = strchr(item, '=');
		char	   *end;
		long		value;

		if (eq == NULL)
		{
			snprintf(why, (size_t) why_len, "\"%s\" is not name=value", item);
			return 0;
		}
		*eq = '\0';
		value = strtol(eq + 1, &end, 10);
		if (*end != '\0' || end == eq + 1 || value < -1024 || value > 1024)
		{
			snprintf(why, (size_t) why_len, "\"%s\" is not an integer", eq + 1);
			return 0;
		}
		if (strcmp(item, "threads") == 0)
			params->threads = (int32_t) value;
		else if (strcmp(item, "blocks_per_sm") == 0)
			params->blocks_per_sm = (int32_t) value;
		else if (strcmp(item, "replicas_max") == 0)
			params->replicas_max = (int32_t) value;
		else if (strcmp(item, "cache_less") == 0)
			params->cache_less = (int32_t) value;
		else if (strcmp(item, "part_shift") == 0)
			params->part_shift = (int32_t) value;
		else
		{
			snprintf(why, (size_t) why_len,
					 "unknown launch parameter \"%s\"; the parameters are threads, blocks_per_sm, replicas_max, cache_less and part_shift",
					 item);
			return 0;
		}
	}
	return ga_launch_params_check(params, why, why_len);
}

/* The process's forced launch parameters (ga_launch_force). */
static pthread_mutex_t tune_force_lock = PTHREAD_MUTEX_INITIALIZER;
static int	tune_forced = 0;
static GaLaunchParams tune_forced_params;

/* Force every GPU aggregation's launch parameters (testing; NULL: stop). */
void
ga_launch_force(const GaLaunchParams *params)
{
	pthread_mutex_lock(&tune_force_lock);
	tune_forced = params != NULL;
	if (params != NULL)
		tune_forced_params = *params;
	pthread_mutex_unlock(&tune_force_lock);
}

/* Whether launch parameters are forced, and which. */
int
ga_launch_forced(GaLaunchParams *params)
{
	int			forced;

	pthread_mutex_lock(&tune_force_lock);
	forced = tune_forced;
	if (forced)
		*params = tune_forced_params;
	pthread_mutex_unlock(&tune_force_lock);
	return forced;
}

/* ------------------------------------------------------------------------
 * The search (Rosenfeld et al., Algorithm 1)
 * ------------------------------------------------------------------------
 */

/* Whether two runtimes are similar: t_j within [(1 - s) t_i, (1 + s) t_i]. */
static int
similar(double ti, double tj)
{
	return tj >= (1 - GA_TUNE_SIMILAR) * ti && tj <= (1 + GA_TUNE_SIMILAR) * ti;
}

/* Start measuring a candidate. */
static void
class_test(TuneClass *c, int candidate, int ref)
{
	c->pending = candidate;
	c->pending_ref = ref;
	c->nsamples = 0;
	c->nbatches = 0;
	c->part_ms = 0;
	c->part_rows = 0;
	c->cost[candidate] = TUNE_IN_TEST;
}

/* An untested neighbour of candidate ci; -1 when none is left. */
static int
untested_neighbour(const TuneSpace *space, const TuneClass *c, int ci)
{
	int			levels[3];

	candidate_levels(space, ci, levels);
	for (int d = 0; d < space->ndims; d++)
		for (int step = -1; step <= 1; step += 2)
		{
			int			l = levels[d] + step;
			int			cj;

			if (l < 0 || l >= space->dims[d].nlevels)
				continue;
			levels[d] = l;
			cj = levels_candidate(space, levels);
			levels[d] -= step;
			if (c->cost[cj] == TUNE_UNTESTED)
				return cj;
		}
	return -1;
}

/* Drop the head of the queue. */
static void
queue_pop(TuneClass *c)
{
	memmove(c->queue, c->queue + 1, sizeof(int) * (size_t) (c->nqueue - 1));
	c->nqueue--;
}

/*
 * Choose the next candidate to measure (lines 4-24 of Algorithm 1, up to
 * ProcessBlocksWith), or end the search.
 */
static void
class_advance(const TuneSpace *space, TuneClass *c)
{
	c->pending = -1;
	while (c->nqueue > 0 && c->sampled < GA_TUNE_MAX_EXPLORE)
	{
		int			ci = c->queue[0];
		int			cj;

		if (c->cost[ci] > GA_TUNE_PRUNE * c->cost[c->best])
		{
			queue_pop(c);		/* prune a slow reference */
			continue;
		}
		cj = untested_neighbour(space, c, ci);
		if (cj < 0)
		{
			queue_pop(c);		/* a local minimum: backtrack */
			continue;
		}
		class_test(c, cj, ci);
		return;
	}
	c->state = CLASS_DONE;
}

/* A candidate's measurement is complete: lines 12-20 of Algorithm 1. */
static void
class_measured(const TuneSpace *space, TuneClass *c, double t)
{
	int			cj = c->pending;
	int			ci = c->pending_ref;

	c->cost[cj] = (float) t;
	if (ci < 0)
	{
		c->best = cj;			/* c_0 */
		c->queue[0] = cj;
		c->nqueue = 1;
	}
	else
	{
		double		ti = c->cost[ci];

		if (similar(ti, t))
		{
			if (c->nqueue < TUNE_QUEUE)
				c->queue[c->nqueue++] = cj;
		}
		else if (t < ti && c->nqueue > 0 && c->queue[0] == ci)
			c->queue[0] = cj;
		if (t < c->cost[c->best])
			c->best = cj;
	}
	class_advance(space, c);
}

/* Add a sample's time to the pending candidate's samples (ProcessBlocksWith). */
static void
class_sample(const TuneSpace *space, TuneClass *c, double t)
{
	double		lo,
				hi,
				mean;

	c->sampled++;
	c->samples[c->nsamples++] = t;
	if (c->nsamples < 3)
		return;
	lo = hi = mean = 0;
	for (int i = c->nsamples - 3; i < c->nsamples; i++)
	{
		double		s = c->samples[i];

		lo = i == c->nsamples - 3 || s < lo ? s : lo;
		hi = i == c->nsamples - 3 || s > hi ? s : hi;
		mean += s / 3;
	}
	if (mean > 0 && (hi - lo) / mean > GA_TUNE_VARIATION && c->nsamples < GA_TUNE_MAX_SAMPLES)
		return;					/* too varied: drop the oldest, take another */
	class_measured(space, c, mean);
}

/*
 * Add a batch of the pending candidate (ms of kernel time over rows) to the
 * sample being gathered; a sample is complete at sample_ms.  A first batch
 * GA_TUNE_DROP times slower than the best ends the measurement alone.
 */
static void
class_batch(const TuneSpace *space, TuneClass *c, double ms, int64_t rows, double sample_ms)
{
	double		t = ms / (double) (rows > 0 ? rows : 1);

	if (c->nbatches++ == 0 && c->best >= 0 && t > GA_TUNE_DROP * c->cost[c->best])
	{
		c->sampled++;
		class_measured(space, c, t);	/* far slower: one batch tells */
		return;
	}
	c->part_ms += ms;
	c->part_rows += rows > 0 ? rows : 1;
	if (c->part_ms < sample_ms)
		return;
	t = c->part_ms / (double) c->part_rows;
	c->part_ms = 0;
	c->part_rows = 0;
	class_sample(space, c, t);
}

/* Reset a class to the start of its search. */
static void
class_reset(TuneClass *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CLASS_NEW;
	c->best = -1;
	c->pending = -1;
	for (int i = 0; i < GA_TUNE_MAX_CANDIDATES; i++)
		c->cost[i] = TUNE_UNTESTED;
}

/*
 * The launch parameters of a batch of `family` with keys of key_bits bits,
 * the aggregation's contention level (ga_tune_contention) and about
 * `groups` groups, and the ticket to report its time with.  Off:
 * the rules.  Frozen: the class's best if it has one.  On: a class not
 * tuned yet runs a candidate under test on at most every other batch and
 * its best so far on the others.
 */
GaLaunchSource
ga_tune_choose(GaTuner *tuner, GaTuning mode, GaTuneFamily family, int key_bits,
			   int contention, int64_t groups, GaLaunchParams *params, GaTuneTicket *ticket)
{
	TuneClass  *c;
	int			cls;
	int			candidate;
	GaLaunchSource source;

	memset(params, 0, sizeof(*params));
	ticket->cls = -1;
	ticket->candidate = -1;
	ticket->exploring = 0;
	if (tuner == NULL || mode == GA_TUNING_OFF || family < 0 || family >= GA_TUNE_NUM_FAMILIES)
		return GA_LAUNCH_DEFAULTS;
	cls = ga_tune_class(family, key_bits, contention, groups);

	pthread_mutex_lock(&tuner->lock);
	c = &tuner->classes[cls];
	c->batches++;
	if (c->state == CLASS_NEW && mode == GA_TUNING_ON)
	{
		c->state = CLASS_SEARCH;
		class_test(c, ga_tune_default_candidate(family), -1);
	}
	if (c->state == CLASS_SEARCH && mode == GA_TUNING_ON && c->pending >= 0 &&
		c->explored * 2 < c->batches)
	{
		c->explored++;
		candidate = c->pending;
		ticket->exploring = 1;
		source = GA_LAUNCH_EXPLORING;
	}
	else if (c->best >= 0)
	{
		candidate = c->best;
		source = GA_LAUNCH_TUNED;
	}
	else
	{
		candidate = ga_tune_default_candidate(family);
		source = GA_LAUNCH_DEFAULTS;
	}
	pthread_mutex_unlock(&tuner->lock);

	ga_tune_candidate_params(family, candidate, params);
	ticket->cls = (int16_t) cls;
	ticket->candidate = (int16_t) candidate;
	return source;
}

/* Write the tuner's file if it has a directory; the caller holds its lock. */
static void tune_autosave(GaTuner *tuner);

/*
 * A batch's kernel time: part of a sample of the candidate under test when
 * the ticket ran it (a stale ticket, of a candidate measured meanwhile, is
 * ignored).  Saves the file when the class's search ends.
 */
void
ga_tune_report(GaTuner *tuner, const GaTuneTicket *ticket, double ms, int64_t rows)
{
	TuneClass  *c;

	if (tuner == NULL || ticket->cls < 0 || !ticket->exploring || ms < 0)
		return;
	pthread_mutex_lock(&tuner->lock);
	c = &tuner->classes[ticket->cls];
	if (c->state == CLASS_SEARCH && c->pending == ticket->candidate)
	{
		class_batch(&tune_spaces[class_family(ticket->cls)], c, ms, rows, tuner->sample_ms);
		if (c->state == CLASS_SEARCH && c->sampled >= GA_TUNE_MAX_EXPLORE)
		{
			c->pending = -1;	/* the bound: end with the best so far */
			c->state = CLASS_DONE;
		}
		if (c->state == CLASS_DONE)
			tune_autosave(tuner);
	}
	pthread_mutex_unlock(&tuner->lock);
}

/* The best candidate of a class (-1: none) and whether its search ended. */
int
ga_tune_best(GaTuner *tuner, int cls, int *done)
{
	int			best;

	pthread_mutex_lock(&tuner->lock);
	best = tuner->classes[cls].best;
	*done = tuner->classes[cls].state == CLASS_DONE;
	pthread_mutex_unlock(&tuner->lock);
	return best;
}

/* Count the classes tuned and searching. */
void
ga_tune_summary(GaTuner *tuner, GaTuneSummary *summary)
{
	memset(summary, 0, sizeof(*summary));
	if (tuner == NULL)
		return;
	pthread_mutex_lock(&tuner->lock);
	for (int i = 0; i < GA_TUNE_CLASSES; i++)
	{
		summary->tuned += tuner->classes[i].state == CLASS_DONE;
		summary->exploring += tuner->classes[i].state == CLASS_SEARCH;
		summary->loaded += tuner->classes[i].loaded;
	}
	summary->file_state = tuner->file_state;
	pthread_mutex_unlock(&tuner->lock);
}

/*
 * The classes of every tuner of this process together; file_state -1 if a
 * file was ignored, else 1 if one was read.
 */
void
ga_tune_summary_all(GaTuneSummary *summary)
{
	memset(summary, 0, sizeof(*summary));
	pthread_mutex_lock(&tune_registry_lock);
	for (int i = 0; i < TUNE_MAX_TUNERS && tune_registry[i] != NULL; i++)
	{
		GaTuneSummary one;

		ga_tune_summary(tune_registry[i], &one);
		summary->tuned += one.tuned;
		summary->exploring += one.exploring;
		summary->loaded += one.loaded;
		if (one.file_state < 0 || (one.file_state > 0 && summary->file_state == 0))
			summary->file_state = one.file_state;
	}
	pthread_mutex_unlock(&tune_registry_lock);
}

/* ------------------------------------------------------------------------
 * Tuners
 * ------------------------------------------------------------------------
 */

/* A tuner of a GPU model with nothing tuned, kept by the caller. */
GaTuner *
ga_tuner_create(const char *model)
{
	GaTuner    *tuner = calloc(1, sizeof(GaTuner));

	if (tuner == NULL)
		return NULL;
	snprintf(tuner->model, sizeof(tuner->model), "%s", model);
	pthread_mutex_init(&tuner->lock, NULL);
	tuner->sample_ms = GA_TUNE_SAMPLE_MS;
	for (int i = 0; i < GA_TUNE_CLASSES; i++)
		class_reset(&tuner->classes[i]);
	return tuner;
}

/*
 * Set the kernel time a sample gathers, at least (GA_TUNE_SAMPLE_MS; 0: a
 * sample is one batch).  The synthetic test compares the two.
 */
void
ga_tuner_set_sample_ms(GaTuner *tuner, double ms)
{
	pthread_mutex_lock(&tuner->lock);
	tuner->sample_ms = ms > 0 ? ms : 0;
	pthread_mutex_unlock(&tuner->lock);
}

/* Free a tuner of ga_tuner_create. */
void
ga_tuner_free(GaTuner *tuner)
{
	if (tuner == NULL)
		return;
	pthread_mutex_destroy(&tuner->lock);
	free(tuner);
}

/*
 * Where this process's tuners keep their files (dir; NULL or empty: none),
 * the version they are written for, and how a file that is ignored is
 * logged.  Call before the first ga_tuner_for.
 */
void
ga_tune_configure(const char *dir, const char *version, void (*log) (const char *message))
{
	snprintf(tune_dir, sizeof(tune_dir), "%s", dir != NULL ? dir : "");
	snprintf(tune_version, sizeof(tune_version), "%s", version != NULL ? version : "");
	tune_log = log;
}

/* This process's tuner of a GPU model, created (and its file read) at first use. */
GaTuner *
ga_tuner_for(const char *model)
{
	GaTuner    *found = NULL;

	pthread_mutex_lock(&tune_registry_lock);
	for (int i = 0; i < TUNE_MAX_TUNERS && found == NULL; i++)
	{
		if (tune_registry[i] == NULL)
		{
			found = tune_registry[i] = ga_tuner_create(model);
			if (found != NULL && tune_dir[0] != '\0')
			{
				char		path[1200];
				char		why[256];
				char		line[1600];

				ga_tune_file_path(tune_dir, model, path, sizeof(path));
				if (!ga_tune_load(found, path, tune_version, why, sizeof(why)) &&
					found->file_state < 0 && tune_log != NULL)
				{
					snprintf(line, sizeof(line), "ignoring the launch tuning file \"%s\": %s",
							 path, why);
					tune_log(line);
				}
			}
		}
		else if (strcmp(tune_registry[i]->model, model) == 0)
			found = tune_registry[i];
	}
	pthread_mutex_unlock(&tune_registry_lock);
	return found;
}

/* ------------------------------------------------------------------------
 * The file
 * ------------------------------------------------------------------------
 */

/* The file of a model in dir: gpuagg_tuning_ and the model's letters and digits. */
void
ga_tune_file_path(const char *dir, const char *model, char *path, int len)
{
	char		name[160];
	int			n = 0;

	for (const char *p = model; *p != '\0' && n < (int) sizeof(name) - 1; p++)
		name[n++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
					 (*p >= '0' && *p <= '9')) ? *p : '_';
	name[n] = '\0';
	snprintf(path, (size_t) len, "%s/gpuagg_tuning_%s", dir, name);
}

/* FNV-1a of a text. */
static uint64_t
fnv1a(const char *text, size_t len)
{
	uint64_t	h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < len; i++)
	{
		h ^= (unsigned char) text[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* Write the tuned classes to path, atomically; 0 on failure (errno set). */
int
ga_tune_save(GaTuner *tuner, const char *path, const char *version)
{
	char	   *text;
	size_t		cap = 256 + (size_t) GA_TUNE_CLASSES * 48;
	size_t		len;
	char		tmp[1300];
	FILE	   *f;
	int			ok;

	text = malloc(cap);
	if (text == NULL)
		return 0;
	len = (size_t) snprintf(text, cap, "%s\nversion %s\nmodel %s\n", TUNE_FORMAT, version,
							tuner->model);
	for (int i = 0; i < GA_TUNE_CLASSES; i++)
	{
		const TuneClass *c = &tuner->classes[i];

		if (c->state == CLASS_DONE && c->best >= 0)
			len += (size_t) snprintf(text + len, cap - len, "class %d %d %.6g\n", i, c->best,
									 (double) c->cost[c->best]);
	}
	len += (size_t) snprintf(text + len, cap - len, "checksum %016llx\n",
							 (unsigned long long) fnv1a(text, len));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int) getpid());
	f = fopen(tmp, "w");
	if (f == NULL)
	{
		free(text);
		return 0;
	}
	ok = fwrite(text, 1, len, f) == len;
	ok = fflush(f) == 0 && ok;
	ok = fsync(fileno(f)) == 0 && ok;
	ok = fclose(f) == 0 && ok;
	free(text);
	if (!ok || rename(tmp, path) != 0)
	{
		int			saved = errno;

		unlink(tmp);
		errno = saved;
		return 0;
	}
	return 1;
}

/* Save the file of a tuner whose process has a directory. */
static void
tune_autosave(GaTuner *tuner)
{
	char		path[1200];
	char		line[1400];

	if (tune_dir[0] == '\0')
		return;
	ga_tune_file_path(tune_dir, tuner->model, path, sizeof(path));
	if (!ga_tune_save(tuner, path, tune_version) && tune_log != NULL)
	{
		snprintf(line, sizeof(line), "could not write the launch tuning file \"%s\": %s",
				 path, strerror(errno));
		tune_log(line);
	}
}

/*
 * Read path into a tuner: its tuned classes become tuned here.  Returns 1
 * when read; 0 when there is no file (file_state 0) or it was ignored
 * (file_state -1, why says why): not this format, version or model, a bad
 * line or checksum.  Nothing of an ignored file is used.
 */
int
ga_tune_load(GaTuner *tuner, const char *path, const char *version, char *why, int why_len)
{
	FILE	   *f = fopen(path, "r");
	char	   *text;
	size_t		len;
	char	   *line;
	char	   *next;
	char	   *sum_at;
	unsigned long long sum;
	int			nline = 0;
	int			best[GA_TUNE_CLASSES];
	float		cost[GA_TUNE_CLASSES];
	const char *bad = NULL;
	char		expect[200];

	snprintf(why, (size_t) why_len, "no file");
	if (f == NULL)
	{
		tuner->file_state = 0;
		return 0;
	}
	text = malloc(65536 + 1);
	if (text == NULL)
	{
		fclose(f);
		return 0;
	}
	len = fread(text, 1, 65536, f);
	fclose(f);
	text[len] = '\0';
	for (int i = 0; i < GA_TUNE_CLASSES; i++)
		best[i] = -1;

	sum_at = strstr(text, "checksum ");
	if (len == 65536 || strlen(text) != len)
		bad = "it is not a tuning file";
	else if (sum_at == NULL || (sum_at != text && sum_at[-1] != '\n') ||
			 sscanf(sum_at, "checksum %llx", &sum) != 1 ||
			 sum != (unsigned long long) fnv1a(text, (size_t) (sum_at - text)))
		bad = "its checksum does not match";
	else
		*sum_at = '\0';
	for (line = text; bad == NULL && *line != '\0'; line = next)
	{
		int			cls,
					cand;
		double		c;

		next = strchr(line, '\n');
		if (next == NULL)
		{
			bad = "a line is cut short";
			break;
		}
		*next++ = '\0';
		nline++;
		if (nline == 1 && strcmp(line, TUNE_FORMAT) != 0)
			bad = "it is not a tuning file of this format";
		else if (nline == 2 && (snprintf(expect, sizeof(expect), "version %s", version),
								strcmp(line, expect) != 0))
			bad = "it was written by another version of gpuagg";
		else if (nline == 3 && (snprintf(expect, sizeof(expect), "model %s", tuner->model),
								strcmp(line, expect) != 0))
			bad = "it was written for another GPU model";
		else if (nline > 3)
		{
			if (sscanf(line, "class %d %d %lf", &cls, &cand, &c) != 3 || cls < 0 ||
				cls >= GA_TUNE_CLASSES || cand < 0 ||
				cand >= ga_tune_candidates(class_family(cls)) || !(c >= 0))
				bad = "a class line is malformed";
			else
			{
				best[cls] = cand;
				cost[cls] = (float) c;
			}
		}
	}
	if (bad == NULL && nline < 3)
		bad = "it is not a tuning file";
	free(text);
	if (bad != NULL)
	{
		snprintf(why, (size_t) why_len, "%s", bad);
		tuner->file_state = -1;
		return 0;
	}
	pthread_mutex_lock(&tuner->lock);
	for (int i = 0; i < GA_TUNE_CLASSES; i++)
		if (best[i] >= 0)
		{
			TuneClass  *c = &tuner->classes[i];

			class_reset(c);
			c->state = CLASS_DONE;
			c->best = best[i];
			c->cost[best[i]] = cost[i];
			c->loaded = 1;
		}
	tuner->file_state = 1;
	pthread_mutex_unlock(&tuner->lock);
	snprintf(why, (size_t) why_len, "loaded");
	return 1;
}
