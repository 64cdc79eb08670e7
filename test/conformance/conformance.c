/*-------------------------------------------------------------------------
 *
 * conformance.c
 *	  Device conformance test: feeds seeded random batches to every available
 *	  device (the CPU always, the GPU when one is found, under each GPU
 *	  strategy) and compares what comes back with a naive reference
 *	  computed independently of cuda/.  This file parses the options, opens
 *	  the devices and runs the suites one after the other.
 *
 * The aggregation suite comes first: its cases are specs (agg_specs.c)
 * generated into rows (agg_case.c), run on a device (agg.c) and checked
 * with the reference (agg_ref.c); agg_api.c checks the API beyond results.
 * The hash join has its own suite in join.c, run after the aggregation's;
 * then the aggjoin (aggjoin.c) and derived columns (derived.c), which
 * check their groups with the aggregation's reference (conformance.h);
 * last the string keys: of GpuHashAgg (strings.c), of an aggjoin's join
 * (aggjoin_strings.c) and of its groups (aggjoin_group_strings.c).
 * common.c holds what every suite shares.
 *
 * The GPU service's devices are tested the same way, through a service
 * running inside this process (service/loopback.c): every call goes
 * through its slots, semaphores and arena as a backend's would, and
 * service_api.c adds the service's own checks (a cancel while every
 * thread is busy, a call after the service process was lost).
 *
 * Usage: conformance [--device cpu|gpu|service|all[,...]]
 *                    [--suite agg|join|aggjoin|derived|strings|all]
 *                    [--cases N] [--join-cases N] [--aggjoin-cases N] [--aggjoin-first I]
 *                    [--derived-cases N] [--string-cases N] [--seed S] [--only I]
 *                    [--max-rows R]
 *                    [--timeout S] [--launch SPEC] [--verbose]
 * (build and run it with test/conformance/run.sh).
 *
 *-------------------------------------------------------------------------
 */
#include "agg.h"
#include "derived.h"
#include "service/service_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------
 */
typedef struct DeviceRun
{
	GaDevice   *device;
	GaStrategy	strategy;
	char		label[32];
} DeviceRun;

/* The devices --device names (a comma-separated list). */
#define WANT_CPU 1
#define WANT_GPU 2				/* required when named, optional in all */
#define WANT_SERVICE 4
#define WANT_ALL 8

/* Bytes of the loopback service's arena (GPUAGG_SERVICE_ARENA_MB). */
#define SERVICE_ARENA_MB 1024

/* The devices of a --device list, or -1 when it names an unknown one. */
static int
parse_devices(const char *opt)
{
	char		copy[128];
	char	   *save = NULL;
	char	   *word;
	int			want = 0;

	snprintf(copy, sizeof(copy), "%s", opt);
	for (word = strtok_r(copy, ",", &save); word != NULL; word = strtok_r(NULL, ",", &save))
	{
		if (strcmp(word, "cpu") == 0)
			want |= WANT_CPU;
		else if (strcmp(word, "gpu") == 0)
			want |= WANT_GPU;
		else if (strcmp(word, "service") == 0)
			want |= WANT_SERVICE;
		else if (strcmp(word, "all") == 0)
			want |= WANT_ALL | WANT_CPU | WANT_SERVICE;
		else
			return -1;
	}
	return want != 0 ? want : -1;
}

/*
 * Start the loopback service (its CPU device, and GPU 0 when with_gpu)
 * before any device is used: its arena becomes the process's host memory.
 */
static GaService *
start_service(int with_gpu)
{
	const char *mb = getenv("GPUAGG_SERVICE_ARENA_MB");
	size_t		arena = (size_t) (mb != NULL ? atoll(mb) : SERVICE_ARENA_MB) << 20;
	GaService  *service;
	GaStatus	st;

	service = ga_service_loopback_start(8, arena, 2, with_gpu, &st);
	if (service == NULL)
		printf("cannot start the loopback GPU service: %s\n", st.message);
	else
		printf("loopback GPU service: %zu MB arena, 2 threads, the CPU device%s\n",
			   arena >> 20, with_gpu ? " and GPU 0" : "");
	return service;
}

/* The case being run, for the watchdog's message. */
static volatile sig_atomic_t current_case = -1;
static const char *volatile current_suite = "case";

/* Name the case running now (join.c uses it too). */
void
conformance_set_current(const char *suite, int case_no)
{
	current_suite = suite;
	current_case = case_no;
}

/*
 * SIGALRM handler: a case ran past --timeout, so the device hangs (or is far
 * too slow); say so and fail rather than wait forever.
 */
static void
watchdog(int sig)
{
	char		msg[96];
	int			n;

	(void) sig;
	n = snprintf(msg, sizeof(msg), "%s %d TIMED OUT: the device hangs or is far too slow\n",
				 current_suite, (int) current_case);
	if (n > 0 && write(STDOUT_FILENO, msg, (size_t) n) < 0)
		_exit(3);
	_exit(3);
}

/* Print how to call the program. */
static void
usage(const char *prog)
{
	fprintf(stderr,
			"usage: %s [--device cpu|gpu|service|all[,...]]\n"
			"          [--suite agg|join|aggjoin|derived|strings|all]\n"
			"          [--cases N] [--join-cases N] [--aggjoin-cases N] [--aggjoin-first I]\n"
			"          [--derived-cases N] [--string-cases N] [--seed S] [--only I]\n"
			"          [--max-rows R] [--timeout SECONDS] [--launch SPEC] [--verbose]\n"
			"  --device   devices to test, comma-separated (default all: the CPU, the\n"
			"             GPU when found, and the GPU service's: its CPU device and\n"
			"             GPU 0 when found, through a loopback service in this\n"
			"             process; gpu fails when there is none)\n"
			"  --suite    aggregation, hash join, aggjoin, derived columns,\n"
			"             string keys or all (default all)\n"
			"  --cases    random aggregation cases after the %d fixed ones (default 300)\n"
			"  --join-cases random join cases after the fixed ones (default 40)\n"
			"  --aggjoin-cases random aggjoin cases after the fixed ones\n"
			"             (default 40)\n"
			"  --aggjoin-first skip the aggjoin cases before case I\n"
			"             (the fixed chains of joins start at 17; default 0)\n"
			"  --derived-cases random derived column cases after the fixed ones\n"
			"             (default 60; the aggjoin ones always run)\n"
			"  --string-cases cases of each kind of string keys: GpuHashAgg's,\n"
			"             an aggjoin's join keys, an aggjoin's group keys (default 40)\n"
			"  --seed     seed of the random cases (default 1)\n"
			"  --only     run aggregation case I only, no join (fixed cases are 0..%d)\n"
			"  --max-rows cap on the rows of a random case, and on the joined rows of\n"
			"             an aggjoin one (default 1500000)\n"
			"  --timeout  fail when one case (all devices) takes longer (default 300)\n"
			"  --launch   run every GPU aggregation with these launch parameters,\n"
			"             e.g. threads=64,blocks_per_sm=1,replicas_max=1 (gpuagg_device.h)\n",
			prog, NUM_FIXED_CASES, NUM_FIXED_CASES - 1);
}

/* Parse options, open the devices, run every case on every device run. */
int
main(int argc, char **argv)
{
	const char *device_opt = "all";
	const char *suite_opt = "all";
	int			ncases = 300;
	int			njoin_cases = 40;
	int			naggjoin_cases = 40;
	int			nderived_cases = 60;
	int			nstring_cases = 40;
	uint64_t	seed = 1;
	int			only = -1;
	int			aggjoin_first = 0;
	int64_t		max_rows = 1500000;
	int			verbose = 0;
	int			timeout = 300;
	DeviceRun	runs[8];
	int			nruns = 0;
	GaDevice   *run_devices[8];	/* runs as the aggjoin and derived suites take them */
	GaStrategy	run_strategies[8];
	const char *run_labels[8];
	GaDevice   *join_devices[JOIN_MAX_DEVICES];
	const char *join_labels[JOIN_MAX_DEVICES];
	int			njoin = 0;
	int64_t		failures = 0,
				checks = 0;
	GaDevice   *cpu = NULL,
			   *gpu = NULL,
			   *svc_cpu = NULL,
			   *svc_gpu = NULL;
	GaService  *service = NULL;
	GaGpuInfo	info[GA_MAX_GPUS];
	int			ngpus = 0;
	int			want;
	GaStatus	st;
	int			i,
				j;
	double		t0 = now_ms();

	for (i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
			device_opt = argv[++i];
		else if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc)
			ncases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--suite") == 0 && i + 1 < argc)
			suite_opt = argv[++i];
		else if (strcmp(argv[i], "--join-cases") == 0 && i + 1 < argc)
			njoin_cases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--aggjoin-cases") == 0 && i + 1 < argc)
			naggjoin_cases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--aggjoin-first") == 0 && i + 1 < argc)
			aggjoin_first = atoi(argv[++i]);
		else if (strcmp(argv[i], "--derived-cases") == 0 && i + 1 < argc)
			nderived_cases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--string-cases") == 0 && i + 1 < argc)
			nstring_cases = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = atoi(argv[++i]);
		else if (strcmp(argv[i], "--max-rows") == 0 && i + 1 < argc)
			max_rows = strtoll(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout = atoi(argv[++i]);
		else if (strcmp(argv[i], "--launch") == 0 && i + 1 < argc)
		{
			GaLaunchParams launch;
			char		why[256];

			if (!ga_launch_params_parse(argv[++i], &launch, why, sizeof(why)))
			{
				fprintf(stderr, "--launch: %s\n", why);
				return 2;
			}
			ga_launch_force(&launch);
		}
		else if (strcmp(argv[i], "--verbose") == 0)
			verbose = 1;
		else
		{
			usage(argv[0]);
			return 2;
		}
	}
	want = parse_devices(device_opt);
	if (want < 0 ||
		(strcmp(suite_opt, "agg") != 0 && strcmp(suite_opt, "join") != 0 &&
		 strcmp(suite_opt, "aggjoin") != 0 && strcmp(suite_opt, "derived") != 0 &&
		 strcmp(suite_opt, "strings") != 0 && strcmp(suite_opt, "all") != 0))
	{
		usage(argv[0]);
		return 2;
	}

	if (want & (WANT_GPU | WANT_ALL | WANT_SERVICE))
	{
		ngpus = ga_gpu_compiled() ? ga_gpu_discover(info, GA_MAX_GPUS, &st) : 0;
		if (!ga_gpu_compiled())
			snprintf(st.message, sizeof(st.message), "this build has no GPU device");
	}
	if (want & WANT_SERVICE)
	{
		service = start_service(ngpus > 0);
		if (service == NULL)
			return 1;
	}
	if (want & WANT_CPU)
	{
		cpu = ga_device_open(GA_DEVICE_CPU, 0, &st);
		if (cpu == NULL)
		{
			printf("cannot open the CPU device: %s\n", st.message);
			return 1;
		}
		runs[nruns].device = cpu;
		runs[nruns].strategy = GA_STRATEGY_AUTO;
		strcpy(runs[nruns].label, "cpu");
		nruns++;
	}
	if (want & (WANT_GPU | WANT_ALL))
	{
		if (ngpus > 0)
			gpu = ga_device_open(GA_DEVICE_GPU, 0, &st);
		if (gpu != NULL)
		{
			static const GaStrategy strategies[] = {GA_STRATEGY_AUTO, GA_STRATEGY_PERFECT,
				GA_STRATEGY_SHARED, GA_STRATEGY_GLOBAL, GA_STRATEGY_PARTITIONED};
			const int	nstrategies = (int) (sizeof(strategies) / sizeof(strategies[0]));

			gpu_info = info[0];
			printf("GPU 0: %s, compute capability %d.%d, %d SMs, context %.0f ms\n",
				   info[0].name, info[0].cc_major, info[0].cc_minor,
				   info[0].multiprocessors, ga_device_setup_ms(gpu));
			for (j = 0; j < nstrategies; j++)
			{
				runs[nruns].device = gpu;
				runs[nruns].strategy = strategies[j];
				snprintf(runs[nruns].label, sizeof(runs[nruns].label), "gpu/%s",
						 ga_strategy_name(strategies[j]));
				nruns++;
			}
		}
		else if (want & WANT_GPU)
		{
			printf("no GPU device: %s\n", st.message);
			return 1;
		}
		else
			printf("no GPU device (%s); testing without it\n", st.message);
	}
	if (service != NULL)
	{
		svc_cpu = ga_service_open(service, 0, GA_DEVICE_CPU, 0, &st);
		if (svc_cpu == NULL)
		{
			printf("cannot open the GPU service's CPU device: %s\n", st.message);
			return 1;
		}
		runs[nruns].device = svc_cpu;
		runs[nruns].strategy = GA_STRATEGY_AUTO;
		strcpy(runs[nruns].label, "svc/cpu");
		nruns++;
		if (ngpus > 0)
		{
			svc_gpu = ga_service_open(service, 0, GA_DEVICE_GPU, 0, &st);
			if (svc_gpu == NULL)
			{
				printf("cannot open the GPU service's GPU: %s\n", st.message);
				return 1;
			}
			gpu_info = info[0];
			runs[nruns].device = svc_gpu;
			runs[nruns].strategy = GA_STRATEGY_AUTO;
			strcpy(runs[nruns].label, "svc/gpu");
			nruns++;
		}
	}

	signal(SIGALRM, watchdog);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* API behaviour, once per device run. */
	if (only < 0 && (strcmp(suite_opt, "agg") == 0 || strcmp(suite_opt, "all") == 0))
	{
		for (j = 0; j < nruns; j++)
		{
			char		label[64];
			int64_t		f;

			snprintf(label, sizeof(label), "%s", runs[j].label);
			alarm((unsigned) timeout);
			f = api_cancel(runs[j].device, runs[j].strategy, label);
			f += api_fail_at_batch(runs[j].device, runs[j].strategy, label);
			if (runs[j].strategy == GA_STRATEGY_AUTO)
				f += api_invalid(runs[j].device, label);
			printf("api  %-10s cancel, fail_at_batch, invalid requests: %s\n",
				   runs[j].label, f ? "FAIL" : "ok");
			failures += f;
			checks++;
		}
	}

	/*
	 * The service's own checks: a cancel while queued, requests left to
	 * the service, admission, concurrent queries, a lost service process.
	 */
	if (service != NULL && only < 0)
	{
		int64_t		f;

		conformance_set_current("service api", 0);
		alarm((unsigned) timeout);
		f = service_api_checks(service, svc_gpu != NULL);
		printf("api  %-10s cancel while queued, requests left to the service, admission, concurrent queries, calls after a lost service process: %s\n",
			   "svc", f ? "FAIL" : "ok");
		failures += f;
		checks++;
	}

	for (i = 0; i < NUM_FIXED_CASES + ncases &&
		 (strcmp(suite_opt, "agg") == 0 || strcmp(suite_opt, "all") == 0); i++)
	{
		CaseSpec	spec;
		Case		c;
		Rng			rng;
		char		line[1024];
		size_t		len;

		if (only >= 0 && i != only)
			continue;
		conformance_set_current("case", i);
		alarm((unsigned) timeout);
		rng_seed(&rng, seed * UINT64_C(0x100000001b3) + (uint64_t) i);
		if (i < NUM_FIXED_CASES)
			fixed_spec(i, &spec);
		else
			random_spec(&rng, &spec, max_rows);
		build_case(&c, &spec, &rng);
		sort_reference(&c);

		len = (size_t) snprintf(line, sizeof(line), "case %3d groups=%lld %s",
								i, (long long) c.ngroups, c.desc);
		for (j = 0; j < nruns; j++)
		{
			char		summary[160];

			failures += run_case(&c, i, runs[j].device, runs[j].strategy,
								 runs[j].label, verbose, summary, sizeof(summary));
			checks++;
			if (len < sizeof(line))
				len += (size_t) snprintf(line + len, sizeof(line) - len, " | %s", summary);
		}
		printf("%s\n", line);
		fflush(stdout);
		free_case(&c);
	}

	/* The hash join: every device (the GPU under one strategy) side by side. */
	if (cpu != NULL)
		join_devices[njoin] = cpu, join_labels[njoin++] = "cpu";
	if (gpu != NULL)
		join_devices[njoin] = gpu, join_labels[njoin++] = "gpu";
	if (svc_cpu != NULL)
		join_devices[njoin] = svc_cpu, join_labels[njoin++] = "svc/cpu";
	if (svc_gpu != NULL)
		join_devices[njoin] = svc_gpu, join_labels[njoin++] = "svc/gpu";
	if (only < 0 && (strcmp(suite_opt, "join") == 0 || strcmp(suite_opt, "all") == 0))
		failures += conformance_join(join_devices, join_labels, njoin, seed, njoin_cases,
									 timeout, verbose, &checks);

	/* The device runs as the aggjoin and derived suites take them. */
	for (j = 0; j < nruns; j++)
	{
		run_devices[j] = runs[j].device;
		run_strategies[j] = runs[j].strategy;
		run_labels[j] = runs[j].label;
	}

	/* The aggjoin: every device run, as the aggregation's cases. */
	if (only < 0 && (strcmp(suite_opt, "aggjoin") == 0 || strcmp(suite_opt, "all") == 0))
		failures += conformance_aggjoin(run_devices, run_strategies, run_labels, nruns, seed,
										aggjoin_first, naggjoin_cases, max_rows, timeout,
										verbose, &checks);

	/* Derived columns: every device run, plain and aggjoin. */
	if (only < 0 && (strcmp(suite_opt, "derived") == 0 || strcmp(suite_opt, "all") == 0))
		failures += conformance_derived(run_devices, run_strategies, run_labels, nruns, seed,
										nderived_cases, max_rows, timeout, verbose, &checks);

	/* String keys: every device run. */
	if (only < 0 && (strcmp(suite_opt, "strings") == 0 || strcmp(suite_opt, "all") == 0))
	{
		alarm((unsigned) timeout);
		failures += strings_suite(run_devices, run_strategies, run_labels, nruns,
								  nstring_cases, seed, &checks);
		failures += aggjoin_strings_suite(run_devices, run_strategies, run_labels, nruns,
										  nstring_cases, seed, &checks);
		alarm((unsigned) timeout);
		failures += aggjoin_group_strings_suite(run_devices, run_strategies, run_labels, nruns,
												nstring_cases, seed, &checks);
	}

	alarm(0);
	if (service != NULL)
		ga_service_loopback_stop(service);
	printf("conformance: %lld checks, %lld problems, seed %llu, %.1f s: %s\n",
		   (long long) checks, (long long) failures, (unsigned long long) seed,
		   (now_ms() - t0) / 1000.0, failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
