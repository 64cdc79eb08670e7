/*-------------------------------------------------------------------------
 *
 * bench_kernels.cu
 *	  Kernel benchmark of the GPU aggregation strategies: `SELECT k,
 *	  sum(v) FROM R GROUP BY k`-shaped device calls (SUM_INT and COUNT of v,
 *	  as the executor sends sum(v)) on data already in GPU memory, for every
 *	  strategy (auto, perfect, shared, global, partitioned) and a plain
 *	  global-atomics kernel, next to the memory-bandwidth bound.
 *
 * It drives the extension's own GPU device (cuda/gpu/hashagg.cu, through the
 * ga_gpu_bench_* entry points of gpu/gpu_device.cuh): the same strategy choice,
 * probe, kernels, growth and gathering as a query, minus the transfers
 * from the host.  Data: R has --rows rows of int32 (or int64) keys and
 * values; keys are uniform or Zipf-distributed over g groups, either dense
 * (0 .. g-1) or sparse (a bijective hash of those, spread over the type).
 *
 * For each configuration and strategy it runs --reps fresh aggregations
 * (table allocation and initialisation are not timed) and reports the
 * median device time (the aggregation's own event-timed kernel time, every
 * phase included: probe, partitioning, ids, accumulation, growth, gathering
 * the groups at the end) and the median wall time from the first submit to
 * the end of all device work.  The first repetition's groups are copied
 * back and checksummed; every strategy must give the same checksum.
 *
 * The bound: the best streaming read of the same bytes measured here
 * (vectorised loads), and the theoretical peak from the device's memory
 * clock and bus width.
 *
 * Output: CSV rows on --csv (header first), device facts as JSON on
 * --meta, progress on stderr.  See run_on_gpu_host.sh and report.py.
 *
 * --tuning runs the launch tuner's check instead (docs/design/tuning.md):
 * for int32 keys, uniform and Zipf, 2^gmin .. 2^gmax groups, strategy
 * auto, it times the defaults (tuning off), scans every candidate of the
 * kernel family that auto ran (exhaustive: each through debug_launch, its
 * groups checksummed against the defaults' up to 2^--verify-max groups),
 * lets the tuner search on the shape's batches until its search ends
 * (within the tuner's bound), then compares the defaults, the scan's
 * --top fastest candidates and the tuned parameters (tuning frozen) by
 * one method: interleaved rounds, medians.  By default on
 * 2^24 rows in batches of 2^22.  One CSV row per shape on --tuning-csv;
 * report.py --tuning prints the criteria per shape (run_tuning below).
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------
 */
struct Options
{
	int64_t		rows = INT64_C(1) << 26;
	int64_t		batch = INT64_C(1) << 26;
	int			gmin = 1;
	int			gmax = 26;
	int			gstep64 = 2;	/* log2 step of the int64 series */
	std::string key_types = "int32,int64";
	std::string dists = "uniform,zipf";
	std::string layouts = "dense,sparse";
	std::string strategies = "auto,perfect,shared,global,partitioned";
	int			reps = 3;
	double		zipf = 1.0;
	double		budget_s = 240;
	int			verify = 1;
	const char *csv = "kernels.csv";
	const char *meta = "kernels_meta.json";
	int			tuning = 0;		/* --tuning: the launch tuner's check */
	const char *tuning_csv = "tuning.csv";
	int			verify_max = 20;	/* log2 groups up to which --tuning
									 * checksums every candidate */
	int			top = 4;		/* --tuning: scan candidates compared again */
	int			final_reps = 7; /* --tuning: rounds of the comparison, at least */
	double		final_ms = 50;	/* --tuning: and enough for this much of the
								 * defaults' device time (41 at most) */
};

static bool
has_word(const std::string &list, const char *word)
{
	std::string padded = "," + list + ",";

	return padded.find(std::string(",") + word + ",") != std::string::npos;
}

static void
die(const char *what, cudaError_t err)
{
	fprintf(stderr, "bench_kernels: %s: %s\n", what, cudaGetErrorString(err));
	exit(1);
}

#define CHECK(call) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) die(#call, e_); } while (0)

static double
now_s(void)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* ------------------------------------------------------------------------
 * Data on the device
 * ------------------------------------------------------------------------
 */
__device__ __forceinline__ uint64_t
splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A uniform double in (0, 1) from a counter. */
__device__ __forceinline__ double
unit(uint64_t seed, uint64_t i, uint64_t attempt)
{
	return ((double) (splitmix(seed ^ splitmix(i * 0x100000001b3ULL + attempt)) >> 11) + 0.5) *
		(1.0 / 9007199254740992.0);
}

/* Helpers of the rejection-inversion Zipf sampler (Hoermann, Derflinger). */
__device__ __forceinline__ double
zipf_helper1(double x)
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

__device__ __forceinline__ double
zipf_helper2(double x)
{
	return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x * (1.0 / 3.0) * (1 + 0.25 * x));
}

__device__ __forceinline__ double
zipf_h(double x, double s)
{
	return exp(-s * log(x));
}

__device__ __forceinline__ double
zipf_hint(double x, double s)
{
	double		lx = log(x);

	return zipf_helper2((1 - s) * lx) * lx;
}

__device__ __forceinline__ double
zipf_hint_inverse(double x, double s)
{
	double		t = x * (1 - s);

	if (t < -1)
		t = -1;
	return exp(zipf_helper1(t) * x);
}

/* A Zipf(s) rank in 1 .. n. */
__device__ int64_t
zipf_sample(int64_t n, double s, uint64_t seed, uint64_t i)
{
	const double hx1 = zipf_hint(1.5, s) - 1.0;
	const double hn = zipf_hint((double) n + 0.5, s);
	const double sv = 2 - zipf_hint_inverse(zipf_hint(2.5, s) - zipf_h(2, s), s);

	for (uint64_t attempt = 0;; attempt++)
	{
		double		u = hn + unit(seed, i, attempt) * (hx1 - hn);
		double		x = zipf_hint_inverse(u, s);
		int64_t		k = (int64_t) (x + 0.5);

		if (k < 1)
			k = 1;
		else if (k > n)
			k = n;
		if (k - x <= sv || u >= zipf_hint(k + 0.5, s) - zipf_h((double) k, s))
			return k;
	}
}

/* A bijection of 32-bit integers (lowbias32), for sparse int32 keys. */
__device__ __forceinline__ uint32_t
mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* A bijection of 64-bit integers (MurmurHash3's finaliser). */
__device__ __forceinline__ uint64_t
mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* keys[i]: uniform or Zipf over g groups, dense (0..g-1) or sparse. */
__global__ void
gen_keys_kernel(void *keys, int wide, int64_t n, int64_t g, int zipf, double s, int sparse,
				uint64_t seed)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		k = zipf ? zipf_sample(g, s, seed, (uint64_t) i) - 1 :
			(int64_t) (splitmix(seed ^ (uint64_t) i) % (uint64_t) g);

		if (wide)
			((long long *) keys)[i] = sparse ? (long long) mix64((uint64_t) k) : k;
		else
			((int *) keys)[i] = sparse ? (int) mix32((uint32_t) k) : (int) k;
	}
}

/* values[i] in 0 .. 999. */
__global__ void
gen_values_kernel(void *values, int wide, int64_t n, uint64_t seed)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		long long	v = (long long) (splitmix(seed * 3 ^ (uint64_t) i) % 1000);

		if (wide)
			((long long *) values)[i] = v;
		else
			((int *) values)[i] = (int) v;
	}
}

/* Read n16 16-byte words (the bound's streaming read). */
__global__ void
stream_read_kernel(const int4 *data, int64_t n16, unsigned long long *sink)
{
	unsigned int acc = 0;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n16;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int4		v = __ldcs(data + i);

		acc += (unsigned int) (v.x ^ v.y ^ v.z ^ v.w);
	}
	if (acc == 0x12345678u)
		atomicAdd(sink, 1ULL);	/* keeps the loads */
}

/* The plain global-atomics reference: count and 64-bit sum per dense key. */
template <typename T>
__global__ void
plain_atomic_kernel(const T *keys, const T *values, int64_t n,
					unsigned long long *count, unsigned long long *sum)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		T			k = keys[i];

		atomicAdd(count + k, 1ULL);
		atomicAdd(sum + k, (unsigned long long) (long long) values[i]);
	}
}

/* ------------------------------------------------------------------------
 * Measurements
 * ------------------------------------------------------------------------
 */
static int	sm_count;

/* Best GB/s of a streaming read of `bytes` at `data` over a few launch shapes. */
static double
measure_read(const void *data, size_t bytes)
{
	unsigned long long *sink;
	cudaEvent_t a,
				b;
	double		best = 0;
	static const int threads[] = {256, 512, 1024};
	static const int per_sm[] = {2, 4, 8, 16};

	CHECK(cudaMalloc(&sink, sizeof(*sink)));
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	for (int t : threads)
		for (int p : per_sm)
		{
			if (t * p > 2048)
				continue;
			for (int rep = 0; rep < 3; rep++)
			{
				float		ms = 0;

				CHECK(cudaEventRecord(a));
				stream_read_kernel<<<sm_count * p, t>>>((const int4 *) data,
														(int64_t) (bytes / 16), sink);
				CHECK(cudaEventRecord(b));
				CHECK(cudaEventSynchronize(b));
				CHECK(cudaEventElapsedTime(&ms, a, b));
				if (ms > 0)
					best = std::max(best, bytes / (ms * 1e-3) / 1e9);
			}
		}
	CHECK(cudaFree(sink));
	CHECK(cudaEventDestroy(a));
	CHECK(cudaEventDestroy(b));
	return best;
}

static double
median(std::vector<double> v)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/* (largest - smallest) / median of some times: how far apart repetitions fell. */
static double
spread(const std::vector<double> &v)
{
	if (v.empty())
		return NAN;
	return (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) /
		median(v);
}

/* Median ms of the plain atomics kernel over dense keys. */
static double
run_plain(const void *keys, const void *values, int wide, int64_t n, int64_t g, int reps)
{
	unsigned long long *count,
			   *sum;
	cudaEvent_t a,
				b;
	std::vector<double> times;

	CHECK(cudaMalloc(&count, sizeof(*count) * g));
	CHECK(cudaMalloc(&sum, sizeof(*sum) * g));
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	for (int rep = 0; rep < reps; rep++)
	{
		float		ms = 0;

		CHECK(cudaMemset(count, 0, sizeof(*count) * g));
		CHECK(cudaMemset(sum, 0, sizeof(*sum) * g));
		CHECK(cudaEventRecord(a));
		if (wide)
			plain_atomic_kernel<long long><<<sm_count * 4, 512>>>((const long long *) keys,
																   (const long long *) values,
																   n, count, sum);
		else
			plain_atomic_kernel<int><<<sm_count * 4, 512>>>((const int *) keys,
															 (const int *) values, n, count,
															 sum);
		CHECK(cudaEventRecord(b));
		CHECK(cudaEventSynchronize(b));
		CHECK(cudaEventElapsedTime(&ms, a, b));
		times.push_back(ms);
	}
	CHECK(cudaFree(count));
	CHECK(cudaFree(sum));
	CHECK(cudaEventDestroy(a));
	CHECK(cudaEventDestroy(b));
	return median(times);
}

/* An order-independent checksum of an aggregation's groups. */
static std::string
checksum(const GaAggResult *res, int64_t *rows_counted)
{
	uint64_t	h = 0,
				total_lo = 0;
	int64_t		total_count = 0;
	char		buf[96];

	for (int64_t g = 0; g < res->ngroups; g++)
	{
		uint64_t	key = (uint64_t) res->key_values[0][g] ^ (res->key_isnull[0][g] ? 0x5555 : 0);
		const GaInt128 *sum = (const GaInt128 *) res->values[0] + g;
		int64_t		count = ((const int64_t *) res->values[1])[g];
		uint64_t	x = key * 0x9e3779b97f4a7c15ULL ^ (sum->lo + 0x632be59bd9b4e019ULL * (uint64_t) sum->hi) ^
			((uint64_t) count << 17);

		x ^= x >> 31;
		x *= 0xbf58476d1ce4e5b9ULL;
		h += x ^ (x >> 29);
		total_lo += sum->lo;
		total_count += count;
	}
	*rows_counted = total_count;
	snprintf(buf, sizeof(buf), "%lld:%016llx:%016llx", (long long) res->ngroups,
			 (unsigned long long) h, (unsigned long long) total_lo);
	return buf;
}

static const char *const strategy_names[] = {"auto", "perfect", "shared", "global", "partitioned"};
static const GaStrategy strategy_values[] = {GA_STRATEGY_AUTO, GA_STRATEGY_PERFECT,
	GA_STRATEGY_SHARED, GA_STRATEGY_GLOBAL, GA_STRATEGY_PARTITIONED};

/* One strategy over one configuration: reps aggregations. */
struct Run
{
	double		device_ms = NAN;
	double		wall_ms = NAN;
	GaAggStats	stats;
	std::string ran;
	std::string check;
	int64_t		rows_counted = -1;
	std::string error;
};

static Run
run_strategy(void *dev, const void *keys, const void *values, int wide, int64_t n,
			 int64_t batch, int64_t g, GaStrategy strategy, int reps, int verify,
			 GaTuning tuning = GA_TUNING_OFF, const GaLaunchParams *launch = NULL)
{
	GaValueType types[2];
	int			key_columns[1] = {0};
	GaAggSpec	aggs[2] = {{GA_AGG_SUM_INT, 1}, {GA_AGG_COUNT, 1}};
	GaAggRequest req;
	const void *columns[2] = {keys, values};
	std::vector<double> device_times,
				wall_times;
	Run			run;

	types[0] = types[1] = wide ? GA_TYPE_INT64 : GA_TYPE_INT32;
	memset(&req, 0, sizeof(req));
	req.ncolumns = 2;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = key_columns;
	req.naggs = 2;
	req.aggs = aggs;
	req.batch_rows = batch;
	req.estimated_groups = g;
	req.strategy = strategy;
	req.tuning = tuning;
	if (launch != NULL)
	{
		req.debug_launch_set = 1;
		req.debug_launch = *launch;
	}

	for (int rep = 0; rep < reps; rep++)
	{
		GaStatus	st;
		void	   *agg = ga_gpu_bench_create(dev, &req, &st);
		double		t0,
					t1;
		int			ok = 1;

		if (agg == NULL)
		{
			run.error = st.message;
			return run;
		}
		CHECK(cudaDeviceSynchronize());
		t0 = now_s();
		for (int64_t start = 0; start < n && ok; start += batch)
		{
			const void *cols[2];
			int64_t		rows = std::min(batch, n - start);
			size_t		width = wide ? 8 : 4;

			cols[0] = (const char *) columns[0] + start * width;
			cols[1] = (const char *) columns[1] + start * width;
			ok = ga_gpu_bench_submit(agg, cols, NULL, rows, &st);
		}
		ok = ok && ga_gpu_bench_settle(agg, &st);
		t1 = now_s();
		if (!ok)
		{
			run.error = st.message;
			ga_gpu_ops.agg_destroy(agg);
			return run;
		}
		ga_gpu_ops.agg_get_stats(agg, &run.stats);
		device_times.push_back(run.stats.device_ms);
		wall_times.push_back((t1 - t0) * 1e3);
		if (rep == 0)
		{
			int			best = -1;

			for (int s = 0; s < GA_NUM_STRATEGIES; s++)
				if (run.stats.batches_by_strategy[s] > 0 &&
					(best < 0 || run.stats.batches_by_strategy[s] > run.stats.batches_by_strategy[best]))
					best = s;
			run.ran = best >= 0 ? ga_strategy_name((GaStrategy) best) : "none";
			if (verify)
			{
				const GaAggResult *res = ga_gpu_ops.agg_finish(agg, NULL, NULL, &st);

				if (res == NULL)
				{
					run.error = st.message;
					ga_gpu_ops.agg_destroy(agg);
					return run;
				}
				run.check = checksum(res, &run.rows_counted);
			}
		}
		ga_gpu_ops.agg_destroy(agg);
	}
	run.device_ms = median(device_times);
	run.wall_ms = median(wall_times);
	return run;
}

/* ------------------------------------------------------------------------
 * The launch tuner's check (--tuning)
 * ------------------------------------------------------------------------
 */

/* Launch parameters as one CSV field. */
static std::string
params_text(const GaLaunchParams &p)
{
	char		buf[128];

	snprintf(buf, sizeof(buf), "threads=%d blocks_per_sm=%d replicas_max=%d cache_less=%d part_shift=%d",
			 p.threads, p.blocks_per_sm, p.replicas_max, p.cache_less, p.part_shift);
	return buf;
}

/* Kernel time of the tuned phases (partitioning, ids, accumulation) per batch of a run. */
static double
tuned_ms_per_batch(const Run &run)
{
	const GaAggStats &s = run.stats;

	return s.batches > 0 ? (s.phase_ms[GA_PHASE_PARTITION] + s.phase_ms[GA_PHASE_GROUP_IDS] +
							s.phase_ms[GA_PHASE_AGGREGATE]) / (double) s.batches : NAN;
}

/*
 * For each shape, four steps:
 *
 * 1. the defaults (tuning off), which also tell the family auto runs;
 * 2. the exhaustive scan: every candidate of that family through
 *    debug_launch, --reps aggregations each (median), its groups
 *    checksummed against the defaults' up to 2^--verify-max groups;
 * 3. the tuner's search on this shape's batches: aggregations with tuning
 *    on until no shape class of the GPU's tuner is searching (or three in a
 *    row explored nothing: this shape's classes are done), at most the
 *    tuner's bound (2 * GA_TUNE_MAX_EXPLORE samples of ceil(
 *    GA_TUNE_SAMPLE_MS / the shortest batch's kernel time) batches, twice
 *    over for slack); a class tuned on an earlier shape is not searched
 *    again, as in the GPU service;
 * 4. the comparison, by one method for all: rounds (--final-reps, more
 *    when the defaults take less than --final-ms over them, 41 at most),
 *    each one aggregation of the defaults, of the --top fastest candidates
 *    of the scan and of the tuned parameters (tuning frozen), in an order
 *    that rotates by round; medians.  best is the fastest of the top
 *    candidates' medians, so that it is no luckier a draw than the tuned
 *    median.
 *
 * One CSV row per shape.  Returns the number of errors and mismatches.
 */
static int
run_tuning(void *dev, const Options &o, double t_start)
{
	FILE	   *csv = fopen(o.tuning_csv, "w");
	void	   *keys,
			   *values;
	int			problems = 0;

	if (csv == NULL)
	{
		fprintf(stderr, "bench_kernels: cannot write %s\n", o.tuning_csv);
		return 1;
	}
	fprintf(csv, "key_type,dist,log2_groups,groups,rows,batch_rows,family,contention,candidates,"
			"default_ms,best_ms,best_params,tuned_ms,tuned_params,tuned_source,"
			"tuned_vs_best,tuned_vs_default,default_spread,tuned_spread,rounds,"
			"scan_best_ms,batch_kernel_ms,explored_batches,tuning_batches,tuning_bound,"
			"tuning_aggregations,tuning_device_ms,converged,shape_s,check,error\n");
	CHECK(cudaMalloc(&keys, (size_t) o.rows * 4));
	CHECK(cudaMalloc(&values, (size_t) o.rows * 4));
	gen_values_kernel<<<sm_count * 8, 256>>>(values, 0, o.rows, 7);
	CHECK(cudaGetLastError());
	for (int zipf = 0; zipf < 2; zipf++)
	{
		const char *dist = zipf ? "zipf" : "uniform";

		if (!has_word(o.dists, dist))
			continue;
		for (int lg = o.gmin; lg <= o.gmax; lg++)
		{
			const int64_t g = INT64_C(1) << lg;
			const int	verify = o.verify && lg <= o.verify_max;
			const int64_t per_agg = (o.rows + o.batch - 1) / o.batch;
			Run			defaults;
			GaTuneFamily family;
			int			ncand;
			std::vector<std::pair<double, int> > scan;	/* median ms, candidate */
			std::string check = "ok";
			std::string error;
			int64_t		explored = 0;
			int64_t		bound = 0;
			int			aggregations = 0;
			int			converged = 0;
			int			quiet = 0;	/* aggregations in a row that explored nothing */
			double		tuning_ms = 0;
			double		batch_ms = NAN;
			double		t0 = now_s();
			GaTuneSummary summary;
			/* step 4: the defaults, the top candidates, tuned */
			std::vector<GaLaunchParams> params;
			std::vector<std::vector<double> > times;
			int			ntop = 0;
			double		best_ms = INFINITY;
			GaLaunchParams best_params;
			GaLaunchParams tuned_params;
			GaLaunchSource tuned_source = GA_LAUNCH_DEFAULTS;
			double		default_ms,
						tuned_ms;
			int			rounds;

			if (now_s() - t_start > o.budget_s)
			{
				fprintf(stderr, "bench_kernels: the time budget ran out at %s 2^%d\n", dist, lg);
				break;
			}
			gen_keys_kernel<<<sm_count * 8, 256>>>(keys, 0, o.rows, g, zipf, o.zipf, 0,
												   0x5eed + lg);
			CHECK(cudaGetLastError());
			CHECK(cudaDeviceSynchronize());

			/* 1. the defaults, and the family auto runs */
			defaults = run_strategy(dev, keys, values, 0, o.rows, o.batch, g, GA_STRATEGY_AUTO,
									o.reps, verify);
			family = defaults.stats.launch_family;
			ncand = ga_tune_candidates(family);
			if (!defaults.error.empty())
				error = defaults.error;

			/* 2. the exhaustive scan */
			for (int c = 0; c < ncand && error.empty(); c++)
			{
				GaLaunchParams p;
				Run			run;

				ga_tune_candidate_params(family, c, &p);
				run = run_strategy(dev, keys, values, 0, o.rows, o.batch, g, GA_STRATEGY_AUTO,
								   o.reps, verify, GA_TUNING_OFF, &p);
				if (!run.error.empty())
				{
					error = "candidate " + params_text(p) + ": " + run.error;
					break;
				}
				if (verify && run.check != defaults.check)
					check = "MISMATCH(" + params_text(p) + ")";
				scan.push_back(std::make_pair(run.device_ms, c));
				if (std::isnan(batch_ms) || tuned_ms_per_batch(run) < batch_ms)
					batch_ms = tuned_ms_per_batch(run);
			}
			std::sort(scan.begin(), scan.end());

			/* 3. the tuner's search on this shape's batches */
			if (error.empty())
			{
				const double shortest = batch_ms > 0 ? batch_ms : 1e-3;
				const int64_t per_sample = (int64_t) ceil(GA_TUNE_SAMPLE_MS / shortest);

				bound = 2 * GA_TUNE_MAX_EXPLORE * std::max<int64_t>(per_sample, 1);
			}
			while (error.empty() && !converged && aggregations * per_agg <= 2 * bound)
			{
				Run			run = run_strategy(dev, keys, values, 0, o.rows, o.batch, g,
											   GA_STRATEGY_AUTO, 1, 0, GA_TUNING_ON);

				if (!run.error.empty())
				{
					error = run.error;
					break;
				}
				aggregations++;
				explored += run.stats.batches_explored;
				tuning_ms += run.device_ms;
				quiet = run.stats.batches_explored == 0 ? quiet + 1 : 0;
				ga_tune_summary_all(&summary);
				converged = summary.exploring == 0 || quiet == 3;
			}

			/* 4. the comparison */
			memset(&best_params, 0, sizeof(best_params));
			memset(&tuned_params, 0, sizeof(tuned_params));
			params.push_back(best_params);	/* the defaults: all rules */
			for (int i = 0; i < (int) scan.size() && i < o.top; i++, ntop++)
			{
				GaLaunchParams p;

				ga_tune_candidate_params(family, scan[i].second, &p);
				params.push_back(p);
			}
			times.resize(params.size() + 1);
			rounds = o.final_reps;
			if (defaults.device_ms > 0 && o.final_ms / defaults.device_ms > rounds)
				rounds = (int) std::min(ceil(o.final_ms / defaults.device_ms), 41.0);
			for (int round = 0; round < rounds && error.empty(); round++)
				for (int k = 0; k < (int) times.size() && error.empty(); k++)
				{
					const int	i = (k + round) % (int) times.size();
					const int	is_tuned = i == (int) params.size();
					const int	verify_this = verify && round == 0 && is_tuned;
					Run			run = is_tuned ?
						run_strategy(dev, keys, values, 0, o.rows, o.batch, g, GA_STRATEGY_AUTO, 1,
									 verify_this, GA_TUNING_FROZEN) :
						run_strategy(dev, keys, values, 0, o.rows, o.batch, g, GA_STRATEGY_AUTO, 1,
									 0, GA_TUNING_OFF, i == 0 ? NULL : &params[i]);

					if (!run.error.empty())
					{
						error = run.error;
						break;
					}
					if (verify_this && run.check != defaults.check)
						check = "MISMATCH(tuned)";
					if (is_tuned)
					{
						tuned_params = run.stats.launch;
						tuned_source = run.stats.launch_source;
					}
					times[i].push_back(run.device_ms);
				}
			default_ms = median(times[0]);
			tuned_ms = median(times[params.size()]);
			for (int i = 1; i <= ntop; i++)
				if (median(times[i]) < best_ms)
				{
					best_ms = median(times[i]);
					best_params = params[i];
				}
			if (check != "ok" || !error.empty())
				problems++;
			fprintf(csv, "int32,%s,%d,%lld,%lld,%lld,%s,%d,%d,%.4f,%.4f,%s,%.4f,%s,%s,%.4f,%.4f,"
					"%.4f,%.4f,%d,%.4f,%.4f,%lld,%lld,%lld,%d,%.3f,%d,%.1f,%s,\"%s\"\n",
					dist, lg, (long long) g, (long long) o.rows, (long long) o.batch,
					ga_tune_family_name(family), (int) defaults.stats.launch_contention, ncand,
					default_ms, best_ms, params_text(best_params).c_str(), tuned_ms,
					params_text(tuned_params).c_str(), ga_launch_source_name(tuned_source),
					tuned_ms / best_ms, tuned_ms / default_ms, spread(times[0]),
					spread(times[params.size()]), rounds,
					scan.empty() ? NAN : scan[0].first, batch_ms, (long long) explored,
					(long long) (aggregations * per_agg), (long long) bound, aggregations,
					tuning_ms, converged, now_s() - t0, verify ? check.c_str() : "",
					error.c_str());
			fflush(csv);
			fprintf(stderr, "  int32 %-7s g=2^%-2d %-11s level %d defaults %8.3f ms, best %8.3f ms, tuned %8.3f ms "
					"(%.3fx best, %.3fx defaults; %lld of %lld batches explored%s; %.1f s)%s%s\n",
					dist, lg, ga_tune_family_name(family), (int) defaults.stats.launch_contention,
					default_ms, best_ms, tuned_ms, tuned_ms / best_ms, tuned_ms / default_ms, (long long) explored,
					(long long) (aggregations * per_agg), converged ? "" : ", NOT converged",
					now_s() - t0, error.empty() ? "" : "  ERROR: ", error.c_str());
		}
	}
	CHECK(cudaFree(keys));
	CHECK(cudaFree(values));
	fclose(csv);
	return problems;
}

/* ------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------
 */
static void
usage(void)
{
	fprintf(stderr,
			"usage: bench_kernels [--rows N] [--batch N] [--gmin L] [--gmax L] [--gstep64 S]\n"
			"                     [--keys int32,int64] [--dists uniform,zipf] [--layouts dense,sparse]\n"
			"                     [--strategies auto,perfect,shared,global,partitioned]\n"
			"                     [--reps R] [--zipf S] [--budget SECONDS] [--no-verify]\n"
			"                     [--csv FILE] [--meta FILE]\n"
			"       bench_kernels --tuning [--rows N] [--batch N] [--gmin L] [--gmax L] [--dists ...]\n"
			"                     [--reps R] [--top K] [--final-reps R] [--final-ms MS]\n"
			"                     [--budget SECONDS] [--verify-max L] [--tuning-csv FILE]\n"
			"  groups are 2^L for L in gmin..gmax (every L for int32, every gstep64-th for int64)\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	Options		o;
	cudaDeviceProp prop;
	GaStatus	st;
	double		setup_ms = 0;
	void	   *dev;
	FILE	   *csv;
	FILE	   *meta;
	double		t_start = now_s();
	int			skipped = 0;
	int			mismatches = 0;
	int			failures = 0;
	int			rows_given = 0;
	int			reps_given = 0;

	for (int i = 1; i < argc; i++)
	{
		std::string a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (a == "--no-verify")
		{
			o.verify = 0;
			continue;
		}
		if (a == "--tuning")
		{
			o.tuning = 1;
			continue;
		}
		if (v == NULL)
			usage();
		i++;
		if (a == "--rows")
			o.rows = strtoll(v, NULL, 0), rows_given = 1;
		else if (a == "--batch")
			o.batch = strtoll(v, NULL, 0), rows_given = 1;
		else if (a == "--gmin")
			o.gmin = atoi(v);
		else if (a == "--gmax")
			o.gmax = atoi(v);
		else if (a == "--gstep64")
			o.gstep64 = atoi(v);
		else if (a == "--keys")
			o.key_types = v;
		else if (a == "--dists")
			o.dists = v;
		else if (a == "--layouts")
			o.layouts = v;
		else if (a == "--strategies")
			o.strategies = v;
		else if (a == "--reps")
			o.reps = atoi(v), reps_given = 1;
		else if (a == "--zipf")
			o.zipf = atof(v);
		else if (a == "--budget")
			o.budget_s = atof(v);
		else if (a == "--csv")
			o.csv = v;
		else if (a == "--meta")
			o.meta = v;
		else if (a == "--tuning-csv")
			o.tuning_csv = v;
		else if (a == "--verify-max")
			o.verify_max = atoi(v);
		else if (a == "--top")
			o.top = atoi(v);
		else if (a == "--final-reps")
			o.final_reps = atoi(v);
		else if (a == "--final-ms")
			o.final_ms = atof(v);
		else
			usage();
	}
	if (o.tuning && !rows_given)
	{
		/* several batches per aggregation, as a query's */
		o.rows = INT64_C(1) << 24;
		o.batch = INT64_C(1) << 22;
	}
	if (o.tuning && !reps_given)
		o.reps = 2;				/* the scan only ranks; step 4 compares */
	if (o.rows < 1 || o.batch < 1 || o.gmin < 0 || o.gmax > 30 || o.gmin > o.gmax ||
		o.reps < 1 || o.gstep64 < 1 || o.top < 1 || o.final_reps < 1)
		usage();

	dev = ga_gpu_open(0, &setup_ms, &st);
	if (dev == NULL)
	{
		fprintf(stderr, "bench_kernels: no GPU: %s\n", st.message);
		return 1;
	}
	CHECK(cudaGetDeviceProperties(&prop, 0));
	sm_count = prop.multiProcessorCount;

	csv = fopen(o.csv, "w");
	meta = fopen(o.meta, "w");
	if (csv == NULL || meta == NULL)
	{
		fprintf(stderr, "bench_kernels: cannot write %s or %s\n", o.csv, o.meta);
		return 1;
	}
	fprintf(csv, "key_type,dist,layout,log2_groups,groups,strategy,ran,rows,batch_rows,"
			"bytes_per_row,device_ms,wall_ms,grows_device,grows_wall,plain_grows,"
			"bound_read_grows,bound_peak_grows,retries,growths,device_estimate,"
			"probe_ms,partition_ms,ids_ms,aggregate_ms,grow_ms,finish_ms,check,error\n");

	{
		int			clock_khz = 0,
					bus_bits = prop.memoryBusWidth;
		double		peak_gbs;
		double		read_gbs[2] = {0, 0};
		void	   *buf;
		size_t		bytes = (size_t) o.rows * 16;

		(void) cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0);
		peak_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
		CHECK(cudaMalloc(&buf, bytes));
		CHECK(cudaMemset(buf, 1, bytes));
		read_gbs[0] = measure_read(buf, (size_t) o.rows * 8);
		read_gbs[1] = measure_read(buf, bytes);
		CHECK(cudaFree(buf));
		fprintf(meta,
				"{\"gpu\": \"%s\", \"sms\": %d, \"cc\": \"%d.%d\", \"l2_bytes\": %d,\n"
				" \"shared_per_sm\": %zu, \"shared_per_block_optin\": %zu,\n"
				" \"memory_clock_khz\": %d, \"bus_bits\": %d, \"peak_gbs\": %.1f,\n"
				" \"read_gbs_8b\": %.1f, \"read_gbs_16b\": %.1f, \"rows\": %lld, \"batch\": %lld,\n"
				" \"reps\": %d, \"zipf_s\": %.2f, \"context_ms\": %.1f,\n"
				" \"aggregates\": \"SUM_INT(v) and COUNT(v) (what sum(v) sends)\"}\n",
				prop.name, prop.multiProcessorCount, prop.major, prop.minor, prop.l2CacheSize,
				prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin, clock_khz,
				bus_bits, peak_gbs, read_gbs[0], read_gbs[1], (long long) o.rows,
				(long long) o.batch, o.reps, o.zipf, setup_ms);
		fclose(meta);
		fprintf(stderr, "bench_kernels: %s, %d SMs, L2 %d MB; peak %.0f GB/s, streaming read %.0f GB/s\n",
				prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, peak_gbs, read_gbs[1]);
		if (o.tuning)
		{
			int			problems = run_tuning(dev, o, t_start);

			fclose(csv);
			fprintf(stderr, "bench_kernels --tuning: %.1f s, %d shapes with errors or mismatches\n",
					now_s() - t_start, problems);
			return problems > 0 ? 1 : 0;
		}

		for (int wide = 0; wide < 2; wide++)
		{
			const char *key_type = wide ? "int64" : "int32";
			size_t		width = wide ? 8 : 4;
			void	   *keys,
					   *values;
			double		read = read_gbs[wide];

			if (!has_word(o.key_types, key_type))
				continue;
			CHECK(cudaMalloc(&keys, (size_t) o.rows * width));
			CHECK(cudaMalloc(&values, (size_t) o.rows * width));
			gen_values_kernel<<<sm_count * 8, 256>>>(values, wide, o.rows, 7);
			CHECK(cudaGetLastError());

			for (int sparse = 0; sparse < 2; sparse++)
				for (int zipf = 0; zipf < 2; zipf++)
				{
					const char *layout = sparse ? "sparse" : "dense";
					const char *dist = zipf ? "zipf" : "uniform";

					if (!has_word(o.layouts, layout) || !has_word(o.dists, dist))
						continue;
					for (int lg = o.gmin; lg <= o.gmax; lg += wide ? o.gstep64 : 1)
					{
						int64_t		g = INT64_C(1) << lg;
						double		plain_ms = NAN;
						std::string reference;

						if (now_s() - t_start > o.budget_s)
						{
							skipped++;
							continue;
						}
						gen_keys_kernel<<<sm_count * 8, 256>>>(keys, wide, o.rows, g, zipf, o.zipf,
															   sparse, 0x5eed + lg);
						CHECK(cudaGetLastError());
						CHECK(cudaDeviceSynchronize());
						if (!sparse)
							plain_ms = run_plain(keys, values, wide, o.rows, g, o.reps);
						for (int s = 0; s < 5; s++)
						{
							Run			run;

							if (!has_word(o.strategies, strategy_names[s]))
								continue;
							run = run_strategy(dev, keys, values, wide, o.rows, o.batch, g,
											   strategy_values[s], o.reps, o.verify);
							if (!run.error.empty())
								failures++;
							if (o.verify && run.error.empty())
							{
								if (run.rows_counted != o.rows)
									run.check = "MISMATCH(rows " + std::to_string(run.rows_counted) + ")";
								else if (reference.empty())
									reference = run.check;
								else if (run.check != reference)
									run.check = "MISMATCH(" + run.check + ")";
								if (run.check.rfind("MISMATCH", 0) == 0)
									mismatches++;
							}
							fprintf(csv,
									"%s,%s,%s,%d,%lld,%s,%s,%lld,%lld,%d,%.4f,%.4f,%.3f,%.3f,%.3f,"
									"%.3f,%.3f,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%s,\"%s\"\n",
									key_type, dist, layout, lg, (long long) g, strategy_names[s],
									run.ran.c_str(), (long long) o.rows, (long long) o.batch,
									(int) (2 * width), run.device_ms, run.wall_ms,
									o.rows / (run.device_ms * 1e-3) / 1e9,
									o.rows / (run.wall_ms * 1e-3) / 1e9,
									sparse ? NAN : o.rows / (plain_ms * 1e-3) / 1e9,
									read / (2 * width), peak_gbs / (2 * width),
									(long long) run.stats.retries,
									(long long) run.stats.table_growths,
									(long long) run.stats.device_estimated_groups,
									run.stats.phase_ms[GA_PHASE_PROBE],
									run.stats.phase_ms[GA_PHASE_PARTITION],
									run.stats.phase_ms[GA_PHASE_GROUP_IDS],
									run.stats.phase_ms[GA_PHASE_AGGREGATE],
									run.stats.phase_ms[GA_PHASE_GROW],
									run.stats.phase_ms[GA_PHASE_FINISH],
									o.verify ? run.check.c_str() : "",
									run.error.c_str());
							fflush(csv);
							fprintf(stderr, "  %s %-7s %-6s g=2^%-2d %-11s ran %-11s %8.3f ms %7.1f G rows/s%s%s\n",
									key_type, dist, layout, lg, strategy_names[s], run.ran.c_str(),
									run.device_ms, o.rows / (run.device_ms * 1e-3) / 1e9,
									run.error.empty() ? "" : "  ERROR: ",
									run.error.c_str());
						}
					}
				}
			CHECK(cudaFree(keys));
			CHECK(cudaFree(values));
		}
	}
	fclose(csv);
	if (skipped > 0)
		fprintf(stderr, "bench_kernels: the time budget (%.0f s) ran out; %d configurations skipped\n",
				o.budget_s, skipped);
	fprintf(stderr, "bench_kernels: %.1f s, %d errors, %d checksum mismatches\n",
			now_s() - t_start, failures, mismatches);
	return failures > 0 || mismatches > 0 ? 1 : 0;
}
