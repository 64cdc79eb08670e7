/*-------------------------------------------------------------------------
 *
 * service_concurrent.c
 *	  Concurrent queries on one device of the loopback service that
 *	  conformance.c started: several client threads, each on its own slot,
 *	  run aggregations and a join at the same time on the same device (its
 *	  CPU device, then its GPU when it runs one), and every answer must be
 *	  exact.  The service runs a device's calls side by side (on a GPU, each
 *	  object on its own stream), so this is where objects of one device
 *	  would trip over each other: shared state of the device, a stream or
 *	  a kernel setting of one query leaking into another's.
 *
 * Each client runs every shape once, starting at a different one, so that
 * different shapes (group counts, strategies forced on a GPU, a table
 * that grows) run at once.  The rows of an aggregation are a function of
 * the client, the round and the row number, so that each client checks
 * its own answers against a reference it computes itself.  Problems are
 * collected per thread and reported from the main thread.
 *
 * Slots 1 to CONC_CLIENTS are the clients'; every check destroys what it
 * made.
 *
 *-------------------------------------------------------------------------
 */
#include "conformance.h"
#include "service/service_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Client threads, their rounds, and the rows of one aggregation. */
#define CONC_CLIENTS 4
#define CONC_BATCH_ROWS 16384
#define CONC_BATCHES 3
#define CONC_ROWS (CONC_BATCH_ROWS * CONC_BATCHES)

/* How long a create may wait for room, in milliseconds. */
#define CONC_WAIT_MS 30000

/* The join's build: CONC_JOIN_KEYS keys, each on CONC_JOIN_DUPS rows. */
#define CONC_JOIN_KEYS 5000
#define CONC_JOIN_DUPS 3
#define CONC_JOIN_PROBE 8192

/* One shape of aggregation: its key range and the strategy forced on a GPU. */
typedef struct ConcShape
{
	int64_t		groups;			/* keys are 0 .. groups - 1 */
	int64_t		estimated;		/* the request's estimate (small: growth) */
	GaStrategy	strategy;
} ConcShape;

static const ConcShape conc_shapes[] = {
	{10, 10, GA_STRATEGY_AUTO},
	{500, 500, GA_STRATEGY_SHARED},
	{40000, 64, GA_STRATEGY_GLOBAL},
	{20000, 20000, GA_STRATEGY_PARTITIONED},
	{3000, 3000, GA_STRATEGY_PERFECT},
	{30000, 1024, GA_STRATEGY_AUTO},
};

#define CONC_NSHAPES ((int) (sizeof(conc_shapes) / sizeof(conc_shapes[0])))

/* One client thread: its slot and device, and what it found. */
typedef struct ConcClient
{
	GaService  *service;
	GaDeviceKind kind;
	int			slot;
	int			client;			/* from 0 */
	int		   *go;				/* set by the main thread once all started */
	int64_t		problems;
	char		first[256];		/* the first problem */
	pthread_t	thread;
} ConcClient;

/* Note a problem of the client (the first one's text kept). */
static void
conc_problem(ConcClient *cc, const char *fmt,...)
{
	va_list		args;

	if (cc->problems++ > 0)
		return;
	va_start(args, fmt);
	vsnprintf(cc->first, sizeof(cc->first), fmt, args);
	va_end(args);
}

/* Row i's key of an aggregation (-1: null) and its value. */
static int64_t
conc_key(const ConcClient *cc, int round, int64_t groups, int64_t i)
{
	uint64_t	h = (uint64_t) i * 2654435761u + (uint64_t) cc->client * 7919u + (uint64_t) round;

	if ((i + cc->client) % 97 == 0)
		return -1;
	return (int64_t) ((h ^ (h >> 13)) % (uint64_t) groups);
}

static int64_t
conc_value(const ConcClient *cc, int round, int64_t i)
{
	return (i * 31 + cc->client * 1000003 + round * 17) % 200001 - 100000;
}

/*
 * Run shape `round`'s aggregation (COUNT_ROWS, SUM_INT, MIN, MAX of the
 * value, grouped by an int32 key with nulls) and check every group.
 */
static void
conc_agg(ConcClient *cc, GaDevice *dev, int round)
{
	const ConcShape *shape = &conc_shapes[(cc->client + round) % CONC_NSHAPES];
	GaValueType types[2] = {GA_TYPE_INT32, GA_TYPE_INT64};
	int			keycol = 0;
	GaAggSpec	specs[4] = {
		{GA_AGG_COUNT_ROWS, -1, -1},
		{GA_AGG_SUM_INT, 1, -1},
		{GA_AGG_MIN, 1, -1},
		{GA_AGG_MAX, 1, -1},
	};
	GaAggRequest req;
	GaStatus	st;
	GaAgg	   *agg;
	const GaAggResult *res;
	int64_t		ngroups = shape->groups + 1;	/* the last: the null key */
	int64_t    *count = calloc((size_t) ngroups, sizeof(int64_t));
	int64_t    *sum = calloc((size_t) ngroups, sizeof(int64_t));
	int64_t    *min = calloc((size_t) ngroups, sizeof(int64_t));
	int64_t    *max = calloc((size_t) ngroups, sizeof(int64_t));
	uint8_t    *seen = calloc((size_t) ngroups, 1);
	int64_t		expected_groups = 0;
	int64_t		i;
	int			b;

	if (count == NULL || sum == NULL || min == NULL || max == NULL || seen == NULL)
	{
		conc_problem(cc, "out of memory");
		goto done;
	}
	for (i = 0; i < CONC_ROWS; i++)
	{
		int64_t		k = conc_key(cc, round, shape->groups, i);
		int64_t		v = conc_value(cc, round, i);
		int64_t		g = k < 0 ? shape->groups : k;

		if (count[g]++ == 0)
		{
			expected_groups++;
			min[g] = max[g] = v;
		}
		sum[g] += v;
		min[g] = v < min[g] ? v : min[g];
		max[g] = v > max[g] ? v : max[g];
	}

	memset(&req, 0, sizeof(req));
	req.ncolumns = 2;
	req.column_types = types;
	req.nkeys = 1;
	req.key_columns = &keycol;
	req.naggs = 4;
	req.aggs = specs;
	req.batch_rows = CONC_BATCH_ROWS;
	req.estimated_groups = shape->estimated;
	req.strategy = shape->strategy;
	agg = ga_agg_create(dev, &req, &st);
	if (agg == NULL)
	{
		conc_problem(cc, "round %d (%lld groups): create failed: %s", round,
					 (long long) shape->groups, st.message);
		goto done;
	}
	for (b = 0; b < CONC_BATCHES; b++)
	{
		GaBatch    *batch = ga_agg_next_batch(agg, NULL, NULL, &st);
		int64_t		r;

		if (batch == NULL)
		{
			conc_problem(cc, "round %d: next_batch %d failed: %s", round, b, st.message);
			break;
		}
		for (r = 0; r < CONC_BATCH_ROWS; r++)
		{
			int64_t		row = (int64_t) b * CONC_BATCH_ROWS + r;
			int64_t		k = conc_key(cc, round, shape->groups, row);

			((int32_t *) batch->columns[0].values)[r] = (int32_t) (k < 0 ? 0 : k);
			if (k < 0)
				ga_column_set_null(&batch->columns[0], r);
			((int64_t *) batch->columns[1].values)[r] = conc_value(cc, round, row);
		}
		batch->nrows = CONC_BATCH_ROWS;
		if (!ga_agg_submit(agg, batch, NULL, NULL, &st))
		{
			conc_problem(cc, "round %d: submit %d failed: %s", round, b, st.message);
			break;
		}
	}
	res = b == CONC_BATCHES ? ga_agg_finish(agg, NULL, NULL, &st) : NULL;
	if (b == CONC_BATCHES && res == NULL)
		conc_problem(cc, "round %d: finish failed: %s", round, st.message);
	else if (res != NULL && res->ngroups != expected_groups)
		conc_problem(cc, "round %d (%lld groups, strategy %s): %lld groups, not %lld", round,
					 (long long) shape->groups, ga_strategy_name(shape->strategy),
					 (long long) res->ngroups, (long long) expected_groups);
	else if (res != NULL)
		for (i = 0; i < res->ngroups; i++)
		{
			int64_t		g = res->key_isnull[0][i] ? shape->groups : res->key_values[0][i];
			const GaInt128 *s = &((const GaInt128 *) res->values[1])[i];

			if (g < 0 || g > shape->groups || seen[g] || count[g] == 0 ||
				((const int64_t *) res->values[0])[i] != count[g] ||
				s->lo != (uint64_t) sum[g] || s->hi != (sum[g] < 0 ? -1 : 0) ||
				((const int64_t *) res->values[2])[i] != min[g] ||
				((const int64_t *) res->values[3])[i] != max[g])
			{
				conc_problem(cc, "round %d (%lld groups, strategy %s): group of key %lld%s is wrong or repeated",
							 round, (long long) shape->groups,
							 ga_strategy_name(shape->strategy),
							 (long long) res->key_values[0][i],
							 res->key_isnull[0][i] ? " (null)" : "");
				break;
			}
			seen[g] = 1;
		}
	ga_agg_destroy(agg);
done:
	free(count);
	free(sum);
	free(min);
	free(max);
	free(seen);
}

/*
 * Build a join on CONC_JOIN_KEYS keys of CONC_JOIN_DUPS rows each and
 * probe it with keys of which every other one is in the build (nulls
 * among them); check each probe row's count and its rows' keys.
 */
static void
conc_join(ConcClient *cc, GaDevice *dev)
{
	GaJoinRequest jreq = {CONC_JOIN_PROBE, 0};
	int64_t		n = (int64_t) CONC_JOIN_KEYS * CONC_JOIN_DUPS;
	int64_t    *keys = malloc((size_t) n * sizeof(int64_t));
	uint32_t   *rows = malloc((size_t) n * sizeof(uint32_t));
	GaStatus	st;
	GaJoin	   *join = NULL;
	GaBatch    *batch;
	const GaJoinMatches *m;
	const uint32_t *sorted;
	int64_t		i;

	if (keys == NULL || rows == NULL)
	{
		conc_problem(cc, "out of memory");
		goto done;
	}
	for (i = 0; i < n; i++)
	{
		keys[i] = (i % CONC_JOIN_KEYS) * 2 + cc->client;
		rows[i] = (uint32_t) i;
	}
	join = ga_join_create(dev, &jreq, &st);
	if (join == NULL || !ga_join_build(join, keys, rows, n, NULL, NULL, &st))
	{
		conc_problem(cc, "join: create or build failed: %s", st.message);
		goto done;
	}
	sorted = ga_join_sorted_rows(join);
	batch = ga_join_next_batch(join, NULL, NULL, &st);
	if (batch == NULL)
	{
		conc_problem(cc, "join: next_batch failed: %s", st.message);
		goto done;
	}
	for (i = 0; i < CONC_JOIN_PROBE; i++)
	{
		((int64_t *) batch->columns[0].values)[i] = i + cc->client;
		if (i % 101 == 0)
			ga_column_set_null(&batch->columns[0], i);
	}
	batch->nrows = CONC_JOIN_PROBE;
	m = ga_join_probe(join, batch, NULL, NULL, &st);
	if (m == NULL)
	{
		conc_problem(cc, "join: probe failed: %s", st.message);
		goto done;
	}
	for (i = 0; i < CONC_JOIN_PROBE; i++)
	{
		int			in_build = i % 101 != 0 && i % 2 == 0 && i / 2 < CONC_JOIN_KEYS;
		uint32_t	want = in_build ? CONC_JOIN_DUPS : 0;
		uint32_t	j;

		if (m->count[i] != want)
		{
			conc_problem(cc, "join: probe row %lld matches %u rows, not %u", (long long) i,
						 m->count[i], want);
			break;
		}
		for (j = 0; j < m->count[i]; j++)
			if (keys[sorted[m->first[i] + j]] != i + cc->client)
			{
				conc_problem(cc, "join: probe row %lld matched a row of another key",
							 (long long) i);
				break;
			}
	}
done:
	ga_join_destroy(join);
	free(keys);
	free(rows);
}

/* A client thread: open the device, wait for the start, run every shape and the join. */
static void *
conc_run(void *arg)
{
	ConcClient *cc = arg;
	GaStatus	st;
	GaDevice   *dev;
	int			round;

	ga_service_set_wait_ms(CONC_WAIT_MS);
	dev = ga_service_open(cc->service, cc->slot, cc->kind, 0, &st);
	while (!__atomic_load_n(cc->go, __ATOMIC_SEQ_CST))
	{
		struct timespec pause = {0, 100000L};

		nanosleep(&pause, NULL);
	}
	if (dev == NULL)
	{
		conc_problem(cc, "open failed: %s", st.message);
		return NULL;
	}
	for (round = 0; round < CONC_NSHAPES; round++)
	{
		conc_agg(cc, dev, round);
		if (round == cc->client % CONC_NSHAPES)
			conc_join(cc, dev);
	}
	return NULL;
}

/*
 * Run CONC_CLIENTS clients at once on the service's device of kind and
 * report what they found.
 */
static void
conc_device(GaService *service, GaDeviceKind kind, RunReport *rr)
{
	ConcClient	clients[CONC_CLIENTS];
	int			go = 0;
	int			started;
	int			c;

	if (CONC_CLIENTS + 1 > service->nslots)
	{
		report(rr, "concurrent: the loopback service has %d slots, too few", service->nslots);
		return;
	}
	memset(clients, 0, sizeof(clients));
	for (started = 0; started < CONC_CLIENTS; started++)
	{
		ConcClient *cc = &clients[started];

		cc->service = service;
		cc->kind = kind;
		cc->slot = 1 + started;
		cc->client = started;
		cc->go = &go;
		if (pthread_create(&cc->thread, NULL, conc_run, cc) != 0)
		{
			report(rr, "concurrent: could not start client thread %d", started);
			break;
		}
	}
	__atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
	for (c = 0; c < started; c++)
	{
		pthread_join(clients[c].thread, NULL);
		if (clients[c].problems > 0)
		{
			report(rr, "concurrent on the %s, client %d: %s (%lld problems)",
				   kind == GA_DEVICE_GPU ? "GPU" : "CPU device", c, clients[c].first,
				   (long long) clients[c].problems);
			rr->mismatches += clients[c].problems - 1;
		}
	}
}

/* The concurrent checks (conformance.h). */
void
service_concurrent_checks(GaService *service, int with_gpu, RunReport *rr)
{
	conc_device(service, GA_DEVICE_CPU, rr);
	if (with_gpu)
		conc_device(service, GA_DEVICE_GPU, rr);
}
