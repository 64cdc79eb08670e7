/*-------------------------------------------------------------------------
 *
 * test/tune/tune_test.c
 *	  The launch tuner's logic (cuda/tune.c) on synthetic costs, with no
 *	  GPU: every family's search converges within its bound, in batches
 *	  and in kernel time, to a candidate within 1.1 times the best of the
 *	  whole space and never slower than the defaults by 2%, on long batches
 *	  (5 ms, 1% noise) and on short noisy ones (0.3 ms, 10% noise), where a
 *	  sample of one batch misses; the shape classes and the contention
 *	  level from synthetic probe samples; landscapes whose best differs by
 *	  contention level, which one level misses; the settings; the file's
 *	  round trip, and a corrupt, foreign-version, foreign-model or format 2
 *	  file ignored with a log line.
 *
 * Built and run by test/t/015_tuner.sh: cc -Icuda test/tune/tune_test.c
 * cuda/tune.c -lpthread -lm.  Prints "ok" lines and exits 0, or prints
 * what failed and exits 1.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune.h"

static int	failures = 0;
static int	logged = 0;
static char last_log[2048];

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) \
		{ \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			failures++; \
		} \
	} while (0)

/* Keep the tuner's log line. */
static void
test_log(const char *message)
{
	logged++;
	snprintf(last_log, sizeof(last_log), "%s", message);
}

/* A deterministic pseudo-random number in [0, 1). */
static double
uniform(unsigned long long *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double) (*state >> 11) / 9007199254740992.0;
}

/*
 * A synthetic cost (ms per row) of a candidate: a nearly convex landscape
 * over the candidate's parameters with a minimum at (a, b, c) in log
 * space, a plateau near it, and noise of `noise` of the value.
 */
static double
cost_of(const GaLaunchParams *p, const double *opt, double noise, unsigned long long *rng)
{
	double		t = p->threads == 0 ? 9 : log2((double) p->threads);
	double		b = p->blocks_per_sm == 0 ? 5 : log2((double) p->blocks_per_sm);
	double		r = p->replicas_max == 0 ? 5 : log2((double) p->replicas_max);
	double		c = p->cache_less < 0 ? -2 : -p->cache_less;
	double		s = p->part_shift;
	double		v;

	v = 1.0 + 0.08 * (t - opt[0]) * (t - opt[0]) + 0.05 * fabs(b - opt[1]) +
		0.03 * (r - opt[2]) * (r - opt[2]) + 0.04 * (c - opt[3]) * (c - opt[3]) +
		0.06 * (s - opt[4]) * (s - opt[4]);
	return 1e-6 * v * (1 + noise * (2 * uniform(rng) - 1));
}

/* How batches look to the tuner: their kernel time and noise, and its sampling. */
typedef struct Batches
{
	double		ms;				/* the best candidate's batch, noise-free */
	double		noise;			/* each batch's time off by up to this share */
	double		sample_ms;		/* the tuner's sample (0: one batch) */
} Batches;

/* What a search found and what it cost. */
typedef struct Outcome
{
	double		vs_best;		/* found / best of the space, noise-free */
	double		vs_defaults;	/* found / defaults, noise-free */
	int			batches;		/* batches until the search ended */
	double		explored_ms;	/* kernel time of the batches under test */
	double		longest_ms;		/* the slowest candidate's batch, at most */
	int			done;
} Outcome;

/* Whether an outcome meets the criteria: within 1.1 times the best, 2% of the defaults. */
static int
meets(const Outcome *o)
{
	return o->done && o->vs_best <= 1.1 && o->vs_defaults <= 1.02;
}

/*
 * Run one family's search at a contention level on a tuner, on a landscape,
 * its batches as `b` says; a class the tuner has tuned already is not
 * searched again.
 */
static Outcome
search_on(GaTuner *tuner, GaTuneFamily family, int level, const double *opt, const Batches *b,
		  unsigned long long seed)
{
	unsigned long long rng = seed;
	unsigned long long quiet = 1;
	int			n = ga_tune_candidates(family);
	double		best_all = 1e300;
	double		worst_all = 0;
	double		def_cost;
	const int64_t rows = (int64_t) (b->ms * 1e6);	/* costs are about 1e-6 ms a row */
	GaLaunchParams p;
	GaTuneTicket ticket;
	int			cls = ga_tune_class(family, 32, level, 1000);
	int			best;
	Outcome		o;

	memset(&o, 0, sizeof(o));
	ga_tuner_set_sample_ms(tuner, b->sample_ms);
	for (int i = 0; i < n; i++)
	{
		double		cost;

		ga_tune_candidate_params(family, i, &p);
		cost = cost_of(&p, opt, 0, &quiet);
		best_all = cost < best_all ? cost : best_all;
		worst_all = cost > worst_all ? cost : worst_all;
	}
	o.longest_ms = worst_all * (1 + b->noise) * (double) rows;
	ga_tune_candidate_params(family, ga_tune_default_candidate(family), &p);
	def_cost = cost_of(&p, opt, 0, &quiet);

	while (!o.done && o.batches < 100000)
	{
		GaLaunchSource source = ga_tune_choose(tuner, GA_TUNING_ON, family, 32, level, 1000, &p,
											   &ticket);
		double		ms = cost_of(&p, opt, b->noise, &rng) * (double) rows;

		CHECK(ga_launch_params_check(&p, NULL, 0), "candidate out of range");
		CHECK(source != GA_LAUNCH_FORCED, "a forced source");
		ga_tune_report(tuner, &ticket, ms, rows);
		o.batches++;
		if (ticket.exploring)
			o.explored_ms += ms;
		(void) ga_tune_best(tuner, cls, &o.done);
	}
	best = ga_tune_best(tuner, cls, &o.done);
	ga_tune_candidate_params(family, best, &p);
	o.vs_best = cost_of(&p, opt, 0, &quiet) / best_all;
	o.vs_defaults = cost_of(&p, opt, 0, &quiet) / def_cost;
	if (o.done)
		CHECK(ga_tune_choose(tuner, GA_TUNING_ON, family, 32, level, 1000, &p, &ticket) ==
			  GA_LAUNCH_TUNED, "not tuned after the search");
	return o;
}

/* Run one family's search on a landscape with a fresh tuner. */
static Outcome
search_one(GaTuneFamily family, const double *opt, const Batches *b, unsigned long long seed)
{
	GaTuner    *tuner = ga_tuner_create("synthetic GPU");
	Outcome		o = search_on(tuner, family, 0, opt, b, seed);

	ga_tuner_free(tuner);
	return o;
}

/*
 * Every family on 50 landscapes each, batches as `b` says: how many runs
 * meet the criteria, and whether every run kept the bound in batches
 * (2 * GA_TUNE_MAX_EXPLORE samples of at most ceil(sample_ms / shortest
 * batch) batches) and in kernel time under test (GA_TUNE_MAX_EXPLORE
 * samples of at most sample_ms plus the longest batch).
 */
static int
search_all(const char *what, const Batches *b, int expect_all, int *runs)
{
	unsigned long long rng = 42;
	double		worst_best = 1,
				worst_def = 0;
	int			exact = 0,
				met = 0,
				most_batches = 0;
	double		most_ms = 0;

	*runs = 0;
	for (int f = 0; f < GA_TUNE_NUM_FAMILIES; f++)
		for (int k = 0; k < 50; k++)
		{
			double		opt[5];
			Outcome		o;
			const double shortest = b->ms * (1 - b->noise);
			const int	per_sample = b->sample_ms > shortest ?
				(int) ceil(b->sample_ms / shortest) : 1;

			opt[0] = 6 + 3.5 * uniform(&rng);	/* threads 64 .. 724 */
			opt[1] = 5 * uniform(&rng);
			opt[2] = 5.5 * uniform(&rng);
			opt[3] = -2 - 4 * uniform(&rng);
			opt[4] = -2.5 + 5 * uniform(&rng);
			o = search_one((GaTuneFamily) f, opt, b, rng);
			CHECK(o.done, "%s, %s: no convergence after %d batches", what,
				  ga_tune_family_name((GaTuneFamily) f), o.batches);
			CHECK(o.batches <= 2 * GA_TUNE_MAX_EXPLORE * per_sample + 1,
				  "%s, %s: %d batches, more than the bound", what,
				  ga_tune_family_name((GaTuneFamily) f), o.batches);
			CHECK(o.explored_ms <= GA_TUNE_MAX_EXPLORE * (b->sample_ms + o.longest_ms),
				  "%s, %s: %.1f ms explored, more than the bound", what,
				  ga_tune_family_name((GaTuneFamily) f), o.explored_ms);
			worst_best = o.vs_best > worst_best ? o.vs_best : worst_best;
			worst_def = o.vs_defaults > worst_def ? o.vs_defaults : worst_def;
			exact += o.vs_best < 1.0001;
			met += meets(&o);
			most_batches = o.batches > most_batches ? o.batches : most_batches;
			most_ms = o.explored_ms > most_ms ? o.explored_ms : most_ms;
			(*runs)++;
		}
	printf("%s %s searches (batches of %.2f ms +-%.0f%%, samples of %s): %d of %d runs meet "
		   "the criteria, %d found the best; worst %.3f times the best, %.3f times the "
		   "defaults; at most %d batches, %.0f ms under test\n",
		   (met == *runs) == expect_all ? "ok" : "FAIL", what, b->ms, 100 * b->noise,
		   b->sample_ms > 0 ? "2 ms" : "one batch", met, *runs, exact, worst_best, worst_def,
		   most_batches, most_ms);
	return met;
}

/*
 * Long batches with little noise, and short noisy ones: the sampling of
 * GA_TUNE_SAMPLE_MS meets the criteria in every run of both, and a batch
 * per sample (the paper's measurement as is) misses them on short batches.
 */
static void
test_searches(void)
{
	const Batches long_batches = {5.0, 0.01, GA_TUNE_SAMPLE_MS};
	const Batches short_batches = {0.3, 0.10, GA_TUNE_SAMPLE_MS};
	const Batches short_one = {0.3, 0.10, 0};
	int			runs;
	int			met;

	met = search_all("long", &long_batches, 1, &runs);
	CHECK(met == runs, "long batches: %d of %d runs meet the criteria", met, runs);
	met = search_all("short", &short_batches, 1, &runs);
	CHECK(met == runs, "short batches: %d of %d runs meet the criteria", met, runs);
	met = search_all("short, one batch a sample,", &short_one, 0, &runs);
	CHECK(met < runs, "short batches sampled one at a time meet the criteria in every run");
}

/* Key distributions of the synthetic probe samples. */
typedef enum KeyKind
{
	KEYS_UNIFORM,
	KEYS_ZIPF,
	KEYS_SORTED
} KeyKind;

/*
 * The contention level the probe would find on `rows` sampled rows (chunks
 * of 1,024, as the probe reads them) of keys over `groups` groups: uniform,
 * Zipf-like (key k with a chance about proportional to 1 / (k + 1): the
 * inverse of a log-uniform draw) or sorted (runs of rows / groups).
 */
static int
sample_level(KeyKind kind, int64_t groups, int64_t rows, unsigned long long *rng)
{
	uint64_t	pairs = 0;
	uint64_t	repeats = 0;
	int64_t		prev = -1;

	for (int64_t row = 0; row < rows; row++)
	{
		int64_t		key;

		if (kind == KEYS_UNIFORM)
			key = (int64_t) (uniform(rng) * (double) groups);
		else if (kind == KEYS_ZIPF)
			key = (int64_t) floor(pow((double) groups + 1, uniform(rng))) - 1;
		else
			key = row * groups / rows;
		key = key < 0 ? 0 : key >= groups ? groups - 1 : key;
		if ((row & 1023) != 0)
		{
			pairs++;
			repeats += key == prev;
		}
		prev = key;
	}
	return ga_tune_contention(repeats, pairs, groups);
}

/*
 * Shape classes: every family, width, level and group range has its own
 * class within 0 .. GA_TUNE_CLASSES - 1; the contention measure puts
 * uniform keys at level 0 over any number of groups, and Zipf keys (from
 * 2^7 groups) and sorted ones (2^2 to 2^17 groups over 2^18 rows) at
 * level 1, where their rows meet on one entry at least four times as often
 * as uniform keys' do.
 */
static void
test_classes(void)
{
	static unsigned char seen[GA_TUNE_CLASSES];
	static const int widths[GA_TUNE_WIDTHS] = {32, 64, 96};
	unsigned long long rng = 11;
	int			distinct = 0;

	memset(seen, 0, sizeof(seen));
	for (int f = 0; f < GA_TUNE_NUM_FAMILIES; f++)
		for (int w = 0; w < GA_TUNE_WIDTHS; w++)
			for (int level = 0; level < GA_TUNE_LEVELS; level++)
				for (int r = 0; r < GA_TUNE_RANGES; r++)
				{
					int			cls = ga_tune_class((GaTuneFamily) f, widths[w], level,
													INT64_C(1) << r);

					CHECK(cls >= 0 && cls < GA_TUNE_CLASSES, "class %d out of bounds", cls);
					if (cls >= 0 && cls < GA_TUNE_CLASSES && !seen[cls])
					{
						seen[cls] = 1;
						distinct++;
					}
				}
	CHECK(distinct == GA_TUNE_CLASSES, "%d distinct classes of %d", distinct, GA_TUNE_CLASSES);
	CHECK(ga_tune_class(GA_TUNE_PARTITIONED, 128, 7, INT64_MAX) == GA_TUNE_CLASSES - 1 &&
		  ga_tune_class(GA_TUNE_PERFECT, 8, -1, 0) == 0, "class bounds at the extremes");

	CHECK(ga_tune_contention(0, 0, 1000) == 0 && ga_tune_contention(5, 10, 0) == 0,
		  "contention with nothing sampled");
	for (int lg = 1; lg <= 26; lg++)
	{
		const int64_t g = INT64_C(1) << lg;
		int			u = sample_level(KEYS_UNIFORM, g, 1 << 18, &rng);
		int			z = sample_level(KEYS_ZIPF, g, 1 << 18, &rng);
		int			sorted = sample_level(KEYS_SORTED, g, 1 << 18, &rng);

		CHECK(u == 0, "uniform keys over 2^%d groups contended", lg);
		CHECK(z == (lg >= 7), "Zipf keys over 2^%d groups at level %d", lg, z);
		CHECK(sorted == (lg >= 2 && lg <= 17), "sorted keys over 2^%d groups at level %d",
			  lg, sorted);
	}
	printf("ok classes\n");
}

/*
 * Landscapes where the best candidate differs by contention level: a
 * uniform shape's batches first, then a Zipf shape's of the same family,
 * key width and groups, on a landscape of its own.  With one level (the
 * class key without contention) the Zipf shape runs what the uniform one
 * found; with the probe's levels it has its own class and search.
 */
static void
test_contention(void)
{
	const Batches batches = {5.0, 0.01, GA_TUNE_SAMPLE_MS};
	unsigned long long rng = 4242;
	unsigned long long keys_rng = 99;
	const int	lu = sample_level(KEYS_UNIFORM, 1000, 1 << 18, &keys_rng);
	const int	lz = sample_level(KEYS_ZIPF, 1000, 1 << 18, &keys_rng);
	int			runs = 0;
	int			met_one = 0;
	int			met_levels = 0;

	CHECK(lu == 0 && lz == 1, "levels %d (uniform) and %d (Zipf)", lu, lz);
	for (int f = 0; f < GA_TUNE_NUM_FAMILIES; f++)
		for (int k = 0; k < 15; k++)
		{
			double		opt_u[5];
			double		opt_z[5];
			GaTuner    *one = ga_tuner_create("synthetic GPU");
			GaTuner    *two = ga_tuner_create("synthetic GPU");
			Outcome		o;

			/* Zipf: fewer threads, more blocks and copies (hot entries) */
			opt_u[0] = 8 + 1.5 * uniform(&rng);
			opt_u[1] = 2 * uniform(&rng);
			opt_u[2] = 2 * uniform(&rng);
			opt_u[3] = -2 - 2 * uniform(&rng);
			opt_u[4] = -2.5 + 2 * uniform(&rng);
			opt_z[0] = 6 + 1.5 * uniform(&rng);
			opt_z[1] = 3 + 2 * uniform(&rng);
			opt_z[2] = 3.5 + 2 * uniform(&rng);
			opt_z[3] = -4 - 2 * uniform(&rng);
			opt_z[4] = 0.5 + 2 * uniform(&rng);

			(void) search_on(one, (GaTuneFamily) f, 0, opt_u, &batches, rng);
			o = search_on(one, (GaTuneFamily) f, 0, opt_z, &batches, rng + 1);
			met_one += meets(&o);
			(void) search_on(two, (GaTuneFamily) f, lu, opt_u, &batches, rng);
			o = search_on(two, (GaTuneFamily) f, lz, opt_z, &batches, rng + 1);
			met_levels += meets(&o);
			runs++;
			ga_tuner_free(one);
			ga_tuner_free(two);
		}
	CHECK(met_levels == runs, "with contention levels %d of %d Zipf shapes meet the criteria",
		  met_levels, runs);
	CHECK(met_one < runs / 2, "with one level %d of %d Zipf shapes meet the criteria",
		  met_one, runs);
	printf("%s contention: Zipf shapes after uniform ones meet the criteria in %d of %d runs "
		   "with one level, %d of %d with the probe's levels\n",
		   met_levels == runs && met_one < runs / 2 ? "ok" : "FAIL", met_one, runs, met_levels,
		   runs);
}

/* Off and frozen pin the defaults until something is tuned. */
static void
test_modes(void)
{
	GaTuner    *tuner = ga_tuner_create("synthetic GPU");
	GaLaunchParams p;
	GaLaunchParams zero;
	GaTuneTicket ticket;
	char		why[128];

	memset(&zero, 0, sizeof(zero));
	CHECK(ga_tune_choose(tuner, GA_TUNING_OFF, GA_TUNE_SHARED, 32, 0, 10, &p, &ticket) ==
		  GA_LAUNCH_DEFAULTS && memcmp(&p, &zero, sizeof(p)) == 0 && ticket.cls < 0,
		  "off is not the defaults");
	CHECK(ga_tune_choose(tuner, GA_TUNING_FROZEN, GA_TUNE_SHARED, 32, 0, 10, &p, &ticket) ==
		  GA_LAUNCH_DEFAULTS && memcmp(&p, &zero, sizeof(p)) == 0,
		  "frozen with nothing tuned is not the defaults");
	for (int f = 0; f < GA_TUNE_NUM_FAMILIES; f++)
	{
		ga_tune_candidate_params((GaTuneFamily) f, ga_tune_default_candidate((GaTuneFamily) f), &p);
		CHECK(memcmp(&p, &zero, sizeof(p)) == 0, "family %d: the default candidate is not zero", f);
		CHECK(ga_tune_candidates((GaTuneFamily) f) <= GA_TUNE_MAX_CANDIDATES, "too many candidates");
	}
	/* the first batch explores the defaults */
	CHECK(ga_tune_choose(tuner, GA_TUNING_ON, GA_TUNE_GLOBAL, 64, 0, 1 << 20, &p, &ticket) ==
		  GA_LAUNCH_EXPLORING && memcmp(&p, &zero, sizeof(p)) == 0, "the search does not start at the defaults");
	CHECK(ga_tune_class(GA_TUNE_GLOBAL, 64, 0, 1 << 20) != ga_tune_class(GA_TUNE_GLOBAL, 96, 0, 1 << 20) &&
		  ga_tune_class(GA_TUNE_GLOBAL, 64, 0, 1 << 20) != ga_tune_class(GA_TUNE_GLOBAL, 64, 0, 1 << 22) &&
		  ga_tune_class(GA_TUNE_GLOBAL, 64, 0, 1 << 20) != ga_tune_class(GA_TUNE_GLOBAL, 64, 1, 1 << 20) &&
		  ga_tune_class(GA_TUNE_GLOBAL, 64, 0, 1 << 20) != ga_tune_class(GA_TUNE_GLOBAL, 64, 0, 1 << 21) &&
		  ga_tune_class(GA_TUNE_GLOBAL, 64, 0, 1 << 20) == ga_tune_class(GA_TUNE_GLOBAL, 64, 0, (1 << 21) - 5),
		  "shape classes");
	p.threads = 48;
	CHECK(!ga_launch_params_check(&p, why, sizeof(why)), "threads 48 accepted");
	memset(&p, 0, sizeof(p));
	p.replicas_max = 3;
	CHECK(!ga_launch_params_check(&p, why, sizeof(why)), "replicas 3 accepted");
	memset(&p, 0, sizeof(p));
	p.threads = 1024;
	p.blocks_per_sm = 32;
	p.replicas_max = 32;
	p.cache_less = -1;
	p.part_shift = -8;
	CHECK(ga_launch_params_check(&p, why, sizeof(why)), "extremes refused: %s", why);
	ga_tuner_free(tuner);
	printf("ok modes\n");
}

/*
 * Tune one class of every family and contention level, quickly (noise-free
 * landscapes, 5 ms batches), with another best at each level.
 */
static void
tune_some(GaTuner *tuner)
{
	static const double opts[GA_TUNE_LEVELS][5] = {{7, 2, 1, -4, 1}, {8, 4, 4, -2, -1}};
	unsigned long long rng = 7;

	for (int f = 0; f < GA_TUNE_NUM_FAMILIES; f++)
		for (int level = 0; level < GA_TUNE_LEVELS; level++)
			for (int k = 0; k < 2 * GA_TUNE_MAX_EXPLORE; k++)
			{
				const double *opt = opts[level];
				GaLaunchParams p;
				GaTuneTicket ticket;

				ga_tune_choose(tuner, GA_TUNING_ON, (GaTuneFamily) f, 64, level, 5000, &p, &ticket);
				ga_tune_report(tuner, &ticket, cost_of(&p, opt, 0, &rng) * 5e6, 5000000);
			}
}

/*
 * Copy a tuning file of model `from` as one of format 2 (classes without a
 * contention level) for model `to`, with a valid checksum.
 */
static int
write_format_2(const char *from_path, const char *to_path, const char *to)
{
	FILE	   *f = fopen(from_path, "r");
	char		text[65536];
	char		out[65600];
	char	   *body;
	char	   *sum;
	size_t		len;
	uint64_t	h = UINT64_C(14695981039346656037);

	if (f == NULL)
		return 0;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	body = strstr(text, "\nversion ");
	sum = strstr(text, "checksum ");
	if (body == NULL || sum == NULL || (body = strchr(body + 1, '\n')) == NULL)
		return 0;
	*sum = '\0';
	/* the version line, then the model's, then the classes */
	len = (size_t) snprintf(out, sizeof(out), "gpuagg tuning 2\nversion 9.9\nmodel %s%s", to,
							strchr(body + 1, '\n'));
	for (size_t i = 0; i < len; i++)
	{
		h ^= (unsigned char) out[i];
		h *= UINT64_C(1099511628211);
	}
	snprintf(out + len, sizeof(out) - len, "checksum %016llx\n", (unsigned long long) h);
	f = fopen(to_path, "w");
	if (f == NULL)
		return 0;
	fputs(out, f);
	return fclose(f) == 0;
}

/* Save, load, and ignore a corrupt, foreign or old-format file. */
static void
test_file(const char *dir)
{
	GaTuner    *a = ga_tuner_create("Model A 80GB");
	GaTuner    *b = ga_tuner_create("Model A 80GB");
	GaTuner    *other = ga_tuner_create("Model B");
	GaTuneSummary sa;
	GaTuneSummary sb;
	char		path[1200];
	char		old_path[1200];
	char		why[256];
	char		cmd[2600];
	GaLaunchParams pa;
	GaLaunchParams pb;
	GaTuneTicket ticket;

	tune_some(a);
	ga_tune_summary(a, &sa);
	CHECK(sa.tuned == GA_TUNE_NUM_FAMILIES * GA_TUNE_LEVELS && sa.exploring == 0, "tuned %d, exploring %d",
		  sa.tuned, sa.exploring);
	ga_tune_file_path(dir, "Model A 80GB", path, sizeof(path));
	CHECK(strstr(path, "gpuagg_tuning_Model_A_80GB") != NULL, "path %s", path);
	CHECK(ga_tune_save(a, path, "9.9"), "save failed");
	CHECK(ga_tune_load(b, path, "9.9", why, sizeof(why)) == 1, "load failed: %s", why);
	ga_tune_summary(b, &sb);
	CHECK(sb.tuned == sa.tuned && sb.loaded == sa.tuned && sb.file_state == 1,
		  "loaded %d of %d", sb.loaded, sa.tuned);
	for (int f = 0; f < GA_TUNE_NUM_FAMILIES; f++)
	{
		for (int level = 0; level < GA_TUNE_LEVELS; level++)
		{
			ga_tune_choose(a, GA_TUNING_FROZEN, (GaTuneFamily) f, 64, level, 5000, &pa, &ticket);
			CHECK(ga_tune_choose(b, GA_TUNING_FROZEN, (GaTuneFamily) f, 64, level, 5000, &pb,
								 &ticket) == GA_LAUNCH_TUNED && memcmp(&pa, &pb, sizeof(pa)) == 0,
				  "family %d, level %d differs after load", f, level);
		}
		ga_tune_choose(b, GA_TUNING_FROZEN, (GaTuneFamily) f, 64, 0, 5000, &pa, &ticket);
		ga_tune_choose(b, GA_TUNING_FROZEN, (GaTuneFamily) f, 64, 1, 5000, &pb, &ticket);
		CHECK(memcmp(&pa, &pb, sizeof(pa)) != 0, "family %d: one best for both levels", f);
	}
	CHECK(ga_tune_load(other, path, "9.9", why, sizeof(why)) == 0 && strstr(why, "model"),
		  "a foreign model's file loaded: %s", why);
	ga_tuner_free(b);
	b = ga_tuner_create("Model A 80GB");
	CHECK(ga_tune_load(b, path, "9.8", why, sizeof(why)) == 0 && strstr(why, "version"),
		  "another version's file loaded: %s", why);

	/* a file of format 2, whose classes have no contention level */
	ga_tune_file_path(dir, "Model C", old_path, sizeof(old_path));
	CHECK(write_format_2(path, old_path, "Model C"), "writing a format 2 file failed");
	{
		GaTuner    *c = ga_tuner_create("Model C");

		CHECK(ga_tune_load(c, old_path, "9.9", why, sizeof(why)) == 0 && strstr(why, "format"),
			  "a format 2 file loaded: %s", why);
		ga_tuner_free(c);
	}

	/* a byte changed: the checksum fails, and nothing is used */
	snprintf(cmd, sizeof(cmd), "sed -i '4s/class 1/class 2/;4s/class [0-9]* [0-9]*/&1/' '%s'", path);
	CHECK(system(cmd) == 0, "sed failed");
	ga_tuner_free(b);
	b = ga_tuner_create("Model A 80GB");
	CHECK(ga_tune_load(b, path, "9.9", why, sizeof(why)) == 0 && strstr(why, "checksum"),
		  "a corrupt file loaded: %s", why);
	ga_tune_summary(b, &sb);
	CHECK(sb.tuned == 0 && sb.file_state == -1, "a corrupt file left %d classes tuned", sb.tuned);

	/* a process's tuner logs the file it ignores, and saves when a search ends */
	ga_tune_configure(dir, "9.9", test_log);
	{
		GaTuner    *t = ga_tuner_for("Model A 80GB");

		CHECK(logged == 1 && strstr(last_log, "checksum") != NULL, "log: %d %s", logged, last_log);
		CHECK(ga_tuner_for("Model A 80GB") == t, "a second tuner for one model");
		(void) ga_tuner_for("Model C");
		CHECK(logged == 2 && strstr(last_log, "format") != NULL, "log: %d %s", logged, last_log);
		tune_some(t);
		ga_tuner_free(b);
		b = ga_tuner_create("Model A 80GB");
		CHECK(ga_tune_load(b, path, "9.9", why, sizeof(why)) == 1, "autosave: %s", why);
	}
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -c tmp >/dev/null && exit 1 || exit 0", dir);
	CHECK(system(cmd) == 0, "a temporary file left behind");
	ga_tuner_free(a);
	ga_tuner_free(b);
	ga_tuner_free(other);
	printf("ok file\n");
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";

	test_modes();
	test_classes();
	test_contention();
	test_searches();
	test_file(dir);
	if (failures > 0)
	{
		printf("%d failures\n", failures);
		return 1;
	}
	printf("all ok\n");
	return 0;
}
