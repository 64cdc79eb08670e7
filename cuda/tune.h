/*-------------------------------------------------------------------------
 *
 * tune.h
 *	  The launch tuner of the GPU aggregation kernels (cuda/tune.c): the
 *	  candidate launch parameters of each kernel family, a search over them
 *	  per GPU model and shape class on the batches the GPU runs, and the
 *	  file that keeps what it learned.  docs/design/tuning.md describes the
 *	  parameters, the algorithm and its bounds.
 *
 * The GPU device asks for the parameters of each batch (ga_tune_choose)
 * and reports the batch's kernel time (ga_tune_report); everything else is
 * here, in plain C, so that the CPU runs and tests it.  A shape class is a
 * kernel family, a key width class, a contention level (from the first
 * batch's probe: ga_tune_contention) and a range of group counts.
 *
 * Internal to cuda/; plain C, no PostgreSQL and no CUDA runtime header.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_TUNE_H
#define GPUAGG_TUNE_H

#include <stdint.h>

#include "gpuagg_device.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Shape classes: key widths (packed bits <= 32, <= 64, wider) by contention
 * levels (0: rows spread over the groups, 1: nearby rows often share one)
 * by group ranges [2^r, 2^(r+1)).
 */
#define GA_TUNE_WIDTHS 3
#define GA_TUNE_LEVELS 2
#define GA_TUNE_RANGES 32
#define GA_TUNE_CLASSES \
	(GA_TUNE_NUM_FAMILIES * GA_TUNE_WIDTHS * GA_TUNE_LEVELS * GA_TUNE_RANGES)

/*
 * Contention level 1: adjacent sampled rows with equal key tuples, at least
 * GA_TUNE_CONTENDED_TIMES times what uniform keys over the estimated groups
 * show (1 / groups of the pairs) and at least GA_TUNE_CONTENDED_MIN of them.
 */
#define GA_TUNE_CONTENDED_TIMES 4
#define GA_TUNE_CONTENDED_MIN 0.001

/* Largest candidate space of a family. */
#define GA_TUNE_MAX_CANDIDATES 128

/*
 * A sample (the paper's measurement of one block): consecutive batches of
 * the candidate under test until their kernel time reaches this many
 * milliseconds (one batch when it alone takes that long).
 */
#define GA_TUNE_SAMPLE_MS 2.0

/* Samples of one class's candidates under test, at most. */
#define GA_TUNE_MAX_EXPLORE 320

/* The search's constants (Rosenfeld et al., Table 1) and the early drop. */
#define GA_TUNE_SIMILAR 0.06	/* s: runtimes this close form a plateau */
#define GA_TUNE_PRUNE 1.07		/* p: references slower than p * best are pruned */
#define GA_TUNE_VARIATION 0.019 /* v_max: (max - min) / mean of three samples */
#define GA_TUNE_MAX_SAMPLES 10	/* b_max: samples of one candidate at most */
#define GA_TUNE_DROP 1.5		/* a first batch this many times the best ends
								 * the candidate's measurement */

/* The tuner of one GPU model in this process. */
typedef struct GaTuner GaTuner;

/* What a batch ran with, handed back with its time. */
typedef struct GaTuneTicket
{
	int16_t		cls;			/* shape class; -1: nothing to report */
	int16_t		candidate;
	int32_t		exploring;		/* the candidate was under test */
} GaTuneTicket;

/* The state of a tuner, for gpuagg_devices(). */
typedef struct GaTuneSummary
{
	int			tuned;			/* shape classes whose search ended */
	int			exploring;		/* shape classes searching */
	int			loaded;			/* classes read from the file at start */
	int			file_state;		/* 0: no file, 1: loaded, -1: ignored */
} GaTuneSummary;

/* The candidates */
extern int	ga_tune_candidates(GaTuneFamily family);
extern int	ga_tune_default_candidate(GaTuneFamily family);
extern void ga_tune_candidate_params(GaTuneFamily family, int candidate,
									 GaLaunchParams *params);
extern int	ga_tune_contention(uint64_t repeats, uint64_t pairs, int64_t groups);
extern int	ga_tune_class(GaTuneFamily family, int key_bits, int contention, int64_t groups);

/* The tuners of this process, one per GPU model */
extern void ga_tune_configure(const char *dir, const char *version,
							  void (*log) (const char *message));
extern GaTuner *ga_tuner_for(const char *model);
extern GaTuner *ga_tuner_create(const char *model);
extern void ga_tuner_free(GaTuner *tuner);
extern void ga_tuner_set_sample_ms(GaTuner *tuner, double ms);

/* Tuning */
extern GaLaunchSource ga_tune_choose(GaTuner *tuner, GaTuning mode, GaTuneFamily family,
									 int key_bits, int contention, int64_t groups,
									 GaLaunchParams *params, GaTuneTicket *ticket);
extern void ga_tune_report(GaTuner *tuner, const GaTuneTicket *ticket, double ms,
						   int64_t rows);
extern int	ga_tune_best(GaTuner *tuner, int cls, int *done);
extern void ga_tune_summary(GaTuner *tuner, GaTuneSummary *summary);
extern void ga_tune_summary_all(GaTuneSummary *summary);

/* The file */
extern int	ga_tune_save(GaTuner *tuner, const char *path, const char *version);
extern int	ga_tune_load(GaTuner *tuner, const char *path, const char *version,
						 char *why, int why_len);
extern void ga_tune_file_path(const char *dir, const char *model, char *path, int len);

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_TUNE_H */
