/*-------------------------------------------------------------------------
 *
 * gpuagg_device.h
 *	  The boundary between PostgreSQL (src/) and the aggregation devices
 *	  (cuda/).  Plain C: no postgres.h, no cuda_runtime.h.
 *
 * A caller opens a device (the GPU, through CUDA, or the CPU reference),
 * describes one grouped aggregation as a request, fills columnar batches that
 * the device hands out, submits them, and finally collects one row per group.
 * Every entry point reports failures through a GaStatus; nothing here throws,
 * longjmps or prints.
 *
 * Batches are allocated by the device layer (pinned host memory on the GPU),
 * so that the caller can fill batch N+1 while the device works on batch N.
 * A batch handed out by ga_agg_next_batch() belongs to the caller until it is
 * submitted; it must not be touched afterwards.
 *
 * Key columns carry integers (the caller encodes a key type into an integer
 * of 1, 2, 4 or 8 bytes whose equality is the key type's equality:
 * canonical float bits, dictionary ids, ...) or strings of bytes
 * (GA_TYPE_STRING: equal bytes are equal keys), and the caller decodes the
 * results.  Aggregate inputs are integers or floats.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_DEVICE_H
#define GPUAGG_DEVICE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The qualifier of a small function that the host and the GPU kernels both
 * compile (the boundary's shared rules: hashing, filters, derived columns).
 */
#if defined(__CUDACC__)
#define GA_INLINE static __host__ __device__ __forceinline__
#else
#define GA_INLINE static inline
#endif

#ifdef __cplusplus
extern "C"
{
#endif

/* Status of every call; message is a full sentence for the user. */
typedef enum GaStatusCode
{
	GA_OK = 0,
	GA_ERR_NO_DEVICE,			/* no usable GPU, or built without CUDA */
	GA_ERR_OUT_OF_MEMORY,		/* device or pinned host memory exhausted */
	GA_ERR_DEVICE,				/* driver, launch or kernel failure */
	GA_ERR_INVALID,				/* the request itself is malformed */
	GA_ERR_CANCELLED,			/* the wait callback asked to stop */
	GA_ERR_INJECTED				/* a failure injected by fail_at_batch */
} GaStatusCode;

#define GA_MESSAGE_LEN 256

typedef struct GaStatus
{
	GaStatusCode code;
	char		message[GA_MESSAGE_LEN];
} GaStatus;

/*
 * Called while the caller waits for the device; returns nonzero to abandon
 * the wait (query cancel, statement_timeout).  It must not longjmp.
 */
typedef int (*GaWaitCallback) (void *arg);

/* ------------------------------------------------------------------------
 * Devices
 * ------------------------------------------------------------------------
 */
typedef enum GaDeviceKind
{
	GA_DEVICE_CPU = 0,
	GA_DEVICE_GPU = 1
} GaDeviceKind;

/* What discovery reports about one GPU. */
typedef struct GaGpuInfo
{
	int			ordinal;
	char		name[128];
	int64_t		total_memory;	/* bytes */
	int			multiprocessors;
	int			cc_major;
	int			cc_minor;
	int			driver_version; /* CUDA encoding: 1000*major + 10*minor */
	int			runtime_version;
	int64_t		shared_memory_per_block;	/* opt-in maximum, bytes */
	int64_t		l2_cache_size;	/* bytes */
	int64_t		shared_memory_per_multiprocessor;	/* bytes; 0 if unknown */
} GaGpuInfo;

#define GA_MAX_GPUS 16

/*
 * Enumerate GPUs without creating a context.  Returns the number found
 * (0 with a reason in status when none is usable).  Initialises the CUDA
 * driver in the calling process, so never call it in the postmaster itself.
 */
extern int	ga_gpu_discover(GaGpuInfo *out, int max_gpus, GaStatus *status);

/* Whether this build contains the GPU device at all. */
extern int	ga_gpu_compiled(void);

typedef struct GaDevice GaDevice;

/*
 * Open a device.  The GPU device is a per-process singleton: the first open
 * creates the CUDA context, later opens reuse it (ga_device_setup_ms tells
 * what the creation cost).  Returns NULL with status set on failure.
 */
extern GaDevice *ga_device_open(GaDeviceKind kind, int gpu_ordinal,
								GaStatus *status);
extern GaDeviceKind ga_device_kind(const GaDevice *device);
/*
 * Whether the devices of a kind group by string keys (GA_TYPE_STRING key
 * columns), as a build of this library has them; a request with string
 * keys is refused by a device that does not.
 */
extern int	ga_device_kind_groups_strings(GaDeviceKind kind);
/*
 * Whether the devices of a kind join on string keys (a hashed aggjoin
 * step's GA_TYPE_STRING key pairs, and a hashed step of one key); a
 * request with them is refused by a device that does not.
 */
extern int	ga_device_kind_joins_strings(GaDeviceKind kind);
/*
 * Whether the devices of a kind group an aggjoin's joined rows by string
 * keys (GA_TYPE_STRING group key columns of the probe side or of a build
 * payload); a request with them is refused by a device that does not.
 */
extern int	ga_device_kind_groups_join_strings(GaDeviceKind kind);
/* Milliseconds spent creating the context; 0 when it already existed. */
extern double ga_device_setup_ms(const GaDevice *device);

/* ------------------------------------------------------------------------
 * Batches
 * ------------------------------------------------------------------------
 */
typedef enum GaValueType
{
	GA_TYPE_NONE = 0,			/* no values, validity only */
	GA_TYPE_INT8,				/* 1-byte signed integer (bool as 0/1) */
	GA_TYPE_INT16,
	GA_TYPE_INT32,
	GA_TYPE_INT64,
	GA_TYPE_FLOAT32,
	GA_TYPE_FLOAT64,
	GA_TYPE_STRING				/* bytes of any length: a group key, or a
								 * join key of a hashed aggjoin step */
} GaValueType;

/*
 * Bytes a value of this type occupies in a column's values (0 for
 * GA_TYPE_NONE; a string's end offset for GA_TYPE_STRING).
 */
extern int	ga_type_width(GaValueType type);

/*
 * One column of a batch.  values holds capacity entries of the column's
 * type.  validity is a bitmap of capacity bits, bit i (byte i/8, bit i%8)
 * set when row i is not null; it is read only when has_nulls is nonzero.
 *
 * A GA_TYPE_STRING column's values are uint32_t end offsets into bytes
 * (bytes_capacity bytes, the request's string_bytes): row i's value is
 * bytes[start, end[i]) with start = i > 0 ? end[i - 1] : 0, so the rows'
 * values lie one after another and end[nrows - 1] is the bytes in use.  A
 * null row takes no bytes (its end equals the row before's).  Other
 * columns have no bytes (NULL, 0).
 */
typedef struct GaColumn
{
	GaValueType type;
	void	   *values;
	uint8_t    *validity;
	int			has_nulls;
	uint8_t    *bytes;			/* GA_TYPE_STRING: the values' bytes */
	int64_t		bytes_capacity;
} GaColumn;

/* GA_TYPE_STRING: where row `row`'s value starts in column->bytes. */
static inline uint32_t
ga_string_start(const GaColumn *column, int64_t row)
{
	return row > 0 ? ((const uint32_t *) column->values)[row - 1] : 0;
}

/* GA_TYPE_STRING: the bytes the column's first nrows rows use. */
static inline uint32_t
ga_string_used(const GaColumn *column, int64_t nrows)
{
	return ga_string_start(column, nrows);
}

/*
 * Heap pages as input.  A request with a page program (GaAggRequest.pages,
 * GaPageInput below) gets batches that also carry up to page_capacity page
 * images: the caller copies whole table pages (GA_PAGE_SIZE bytes each,
 * PostgreSQL's heap page layout) into pages and describes each in
 * page_desc, and the device deforms the visible tuples' attributes into
 * the batch's columns when the batch is submitted, before it aggregates.
 * A page's rows are rows [first_row, first_row + nrows) of the batch: the
 * caller reserves them (counts them in the batch's nrows, fills no column
 * of them) and may fill other rows itself, as in any batch.  The visible
 * tuples are, in offset order, either every tuple of a normal line pointer
 * (all_visible: the page was all-visible for the query's snapshot, so the
 * device reads the line pointers itself) or those of the line pointers
 * offsets[0 .. nrows) (1-based offset numbers, increasing), which the caller
 * chose with its own visibility rules.  Rows come in that order.
 */
#define GA_PAGE_SIZE 8192
#define GA_PAGE_MAX_TUPLES 291	/* tuples a page holds at most */

typedef struct GaPageDesc
{
	uint32_t	first_row;
	uint16_t	nrows;
	uint16_t	all_visible;
	uint16_t	offsets[GA_PAGE_MAX_TUPLES];	/* not all_visible: the
												 * visible line pointers */
} GaPageDesc;

typedef struct GaBatch
{
	int64_t		nrows;			/* filled rows, set by the caller */
	int64_t		capacity;
	int			ncolumns;
	GaColumn   *columns;
	/* a request with a page program (above); else 0 and NULL */
	int64_t		npages;			/* pages filled, set by the caller */
	int64_t		page_capacity;
	uint8_t    *pages;			/* page_capacity images of GA_PAGE_SIZE */
	GaPageDesc *page_desc;		/* page_capacity descriptions */
} GaBatch;

/* Mark row `row` of `column` null (sets has_nulls). */
static inline void
ga_column_set_null(GaColumn *column, int64_t row)
{
	column->validity[row >> 3] &= (uint8_t) ~(1u << (row & 7));
	column->has_nulls = 1;
}

/* Whether row `row` of `column` is null. */
static inline int
ga_column_is_null(const GaColumn *column, int64_t row)
{
	return column->has_nulls &&
		!(column->validity[row >> 3] & (1u << (row & 7)));
}

/* ------------------------------------------------------------------------
 * Grouped aggregation
 * ------------------------------------------------------------------------
 */

/*
 * Device-level aggregate operations.  SQL aggregates are composed of these
 * by the caller (avg = SUM + COUNT, NULL-on-empty from COUNT, ...).
 *
 * result element types (see GaAggResult.values):
 *	COUNT_ROWS, COUNT, COUNT_NONFINITE	int64_t
 *	SUM_INT							GaInt128 (exact, any number of rows)
 *	SUM_FLOAT32						float  (float accumulator, as sum(float4))
 *	SUM_FLOAT64						double
 *	MIN, MAX of an integer column	int64_t
 *	MIN, MAX of a float column		double (NaN is larger than every number)
 *	MOMENTS							GaMoments
 *	COMOMENTS						GaComoments
 * Float sums start at -0.0 (the exact additive identity, so a group of -0
 * values sums to -0) and depend on the order of additions, like
 * PostgreSQL's parallel aggregation.  For a group with no non-null input,
 * sums are zero and MIN/MAX are unspecified: callers decide NULL from a
 * COUNT.  Float MIN/MAX order -0 below +0.
 * A null key's key_values entry is 0.
 */
typedef enum GaAggOp
{
	GA_AGG_COUNT_ROWS = 0,		/* rows of the group; column ignored */
	GA_AGG_COUNT,				/* non-null values */
	GA_AGG_COUNT_NONFINITE,		/* infinite or NaN values of a float column */
	GA_AGG_SUM_INT,
	GA_AGG_SUM_FLOAT32,
	GA_AGG_SUM_FLOAT64,
	GA_AGG_MIN,
	GA_AGG_MAX,
	GA_AGG_MOMENTS,				/* float column: see GaMoments */
	GA_AGG_COMOMENTS			/* float columns column and column2 */
} GaAggOp;

typedef struct GaAggSpec
{
	GaAggOp		op;
	int			column;			/* batch column; -1 for COUNT_ROWS */
	int			column2;		/* COMOMENTS: the second column (y); else
								 * unused */
} GaAggSpec;

/*
 * MOMENTS of a float column x, for variance and standard deviation: the
 * shifted sums of the "shifted data" algorithm (Chan, Golub and LeVeque,
 * "Algorithms for computing the sample variance", 1983).  The shift K is a
 * value of the group itself (whichever finite value reached the group
 * first; 0 when that value was not finite), fixed once set, so that
 *
 *		N				= n
 *		sum(x)			= n K + sum
 *		sum((x - mean)^2) = sumsq - sum^2 / n
 *
 * with no catastrophic cancellation however large the values are relative to
 * their spread: the sums are of deviations from a value of the same group.
 * Each sum is compensated: next to it, its *_err word collects the exact
 * rounding error of every addition (Knuth's TwoSum of the value an atomic
 * add returned and the addend; a product's own error through fma), so the
 * sum is sum + sum_err to about twice double precision, whatever the order
 * of the additions and however far the shift is from the mean (which
 * matters for covariances near zero).  Every row adds with atomics in any
 * order; on the GPU, a block's shared-memory partial moments use the
 * group's global shift, so that they merge by plain addition.  Infinite and NaN values are counted in nonfinite and
 * still added (so sum follows IEEE rules: +Inf and -Inf give NaN); a caller
 * mapping onto PostgreSQL's float8_accum() makes sum((x - mean)^2) NaN then,
 * as PostgreSQL does.  Null rows are skipped.  A group without rows has
 * n = 0 and shift GA_MOMENTS_NO_SHIFT (a NaN pattern no shift can have).
 *
 * COMOMENTS of columns x (column) and y (column2), for covariance,
 * correlation and regression: the same for both, over the rows where
 * neither is null, plus sumxy = sum((x - Kx) (y - Ky)), so that
 * sum((x - mean_x) (y - mean_y)) = sumxy - sum[0] sum[1] / n.
 */
#define GA_MOMENTS_NO_SHIFT UINT64_C(0x7ff0dead0000beef)

typedef struct GaMoments
{
	double		shift;			/* K */
	uint64_t	n;				/* non-null rows */
	uint64_t	nonfinite;		/* of them infinite or NaN */
	double		sum;			/* sum(x - K) = sum + sum_err */
	double		sum_err;
	double		sumsq;			/* sum((x - K)^2) = sumsq + sumsq_err */
	double		sumsq_err;
} GaMoments;

typedef struct GaComoments
{
	double		shift[2];		/* Kx, Ky */
	uint64_t	n;				/* rows with neither x nor y null */
	uint64_t	nonfinite[2];	/* of them with x, with y infinite or NaN */
	double		sum[2];			/* sum(x - Kx), sum(y - Ky) (+ sum_err) */
	double		sum_err[2];
	double		sumsq[2];		/* sum((x - Kx)^2), sum((y - Ky)^2) (+ err) */
	double		sumsq_err[2];
	double		sumxy;			/* sum((x - Kx) (y - Ky)) (+ sumxy_err) */
	double		sumxy_err;
} GaComoments;

typedef struct GaInt128
{
	uint64_t	lo;
	int64_t		hi;
} GaInt128;

/* Limits of one request on every device (the planner keeps to them). */
#define GA_MAX_KEYS 32
#define GA_MAX_AGG_OPS 64

/*
 * How the GPU assigns rows to groups and accumulates them (gpuagg.strategy;
 * cuda/gpu/strategy.cu explains each).  Every strategy gives the same groups.
 */
typedef enum GaStrategy
{
	GA_STRATEGY_AUTO = 0,
	GA_STRATEGY_SHARED,			/* per-block shared-memory tables, few groups */
	GA_STRATEGY_GLOBAL,			/* one device-memory table, atomics */
	GA_STRATEGY_CPU,			/* the CPU device's hash table */
	GA_STRATEGY_PERFECT,		/* direct indexing over a small key range */
	GA_STRATEGY_PARTITIONED,	/* rows partitioned by key hash first */
	GA_NUM_STRATEGIES
} GaStrategy;

extern const char *ga_strategy_name(GaStrategy strategy);

/*
 * Launch parameters of the GPU aggregation kernels, chosen per batch by the
 * launch tuner (cuda/tune.h; docs/design/tuning.md).  All zero is today's
 * rules; no value changes an answer.  The kernel families each read a few:
 * perfect and shared the threads, blocks and replicas, global the threads,
 * blocks and cache, partitioned the blocks and partition bits.
 */
typedef struct GaLaunchParams
{
	int32_t		threads;		/* threads per block (32 .. 1024, cut to the
								 * kernel's bound); 0: the kernel's rule */
	int32_t		blocks_per_sm;	/* resident blocks per multiprocessor at
								 * most (1 .. 32); 0: all that fit */
	int32_t		replicas_max;	/* copies of a shared table's entries at
								 * most (1, 2, 4 .. 32); 0: 32 */
	int32_t		cache_less;		/* hot-group cache: log2 of its entries
								 * below the rule's (0 .. 12); -1: no cache */
	int32_t		part_shift;		/* partitioned: bits added to the rule's
								 * partition bits (-8 .. 8) */
} GaLaunchParams;

/* The kernel families whose launches the tuner tunes. */
typedef enum GaTuneFamily
{
	GA_TUNE_NONE = -1,			/* no tuned launch (CPU device, string keys) */
	GA_TUNE_PERFECT = 0,		/* direct_shared, direct_global */
	GA_TUNE_SHARED,				/* fused_shared, accumulate_shared */
	GA_TUNE_GLOBAL,				/* assign_group_ids, accumulate_cached */
	GA_TUNE_PARTITIONED,		/* partition, chunk kernels */
	GA_TUNE_NUM_FAMILIES
} GaTuneFamily;

/* gpuagg.tuning: how a GPU aggregation chooses its launch parameters. */
typedef enum GaTuning
{
	GA_TUNING_OFF = 0,			/* the built-in rules (all-zero parameters) */
	GA_TUNING_ON,				/* the tuned ones; explore, bounded, where
								 * a shape class is not tuned yet */
	GA_TUNING_FROZEN			/* the tuned ones; never explore */
} GaTuning;

/* Where a batch's launch parameters came from (GaAggStats.launch_source). */
typedef enum GaLaunchSource
{
	GA_LAUNCH_DEFAULTS = 0,		/* the rules: tuning off, or nothing tuned */
	GA_LAUNCH_TUNED,			/* the best the tuner knows for the class */
	GA_LAUNCH_EXPLORING,		/* a candidate under test */
	GA_LAUNCH_FORCED			/* debug_launch */
} GaLaunchSource;

extern const char *ga_tune_family_name(GaTuneFamily family);
extern const char *ga_launch_source_name(GaLaunchSource source);

/*
 * Check launch parameters against each field's range (above); 0 with a
 * reason in why (why_len bytes) when one is out of it.
 */
extern int	ga_launch_params_check(const GaLaunchParams *params, char *why, int why_len);

/*
 * Parse launch parameters from comma-separated name=value pairs of the
 * fields above (threads=64,blocks_per_sm=1; unnamed fields 0) and check
 * them; 0 with a reason in why when the text is not that.
 */
extern int	ga_launch_params_parse(const char *text, GaLaunchParams *params, char *why,
								   int why_len);

/*
 * Testing: run every GPU aggregation of this process with these launch
 * parameters unless its request has its own debug_launch (NULL: stop).
 * The conformance test's --launch, to check answers under extreme ones.
 */
extern void ga_launch_force(const GaLaunchParams *params);
extern int	ga_launch_forced(GaLaunchParams *params);

/*
 * One aggregation.  The arrays are copied by ga_agg_create; the caller may
 * free them afterwards.  With nkeys = 0 every row belongs to one group
 * (a plain aggregate), which exists even when no row arrives.
 */
typedef struct GaAggRequest
{
	/* at most GA_MAX_KEYS keys and GA_MAX_AGG_OPS aggregates */
	int			ncolumns;
	const GaValueType *column_types;
	int			nkeys;
	const int  *key_columns;	/* integer columns */
	int			naggs;
	const GaAggSpec *aggs;
	int64_t		batch_rows;		/* capacity of every batch */
	int64_t		estimated_groups;	/* initial table size; may be wrong */
	GaStrategy	strategy;		/* GPU only; AUTO chooses per batch */
	int64_t		fail_at_batch;	/* testing: fail this submit (1-based), 0 = never */
	const struct GaAggJoinSpec *join;	/* aggjoin (below); NULL: the
										 * batches are the rows */
	int			nderived;		/* derived columns (below), 0 for none */
	const struct GaDerivedColumn *derived;
	int64_t		string_bytes;	/* bytes_capacity of every GA_TYPE_STRING
								 * column of a batch (1 .. UINT32_MAX when
								 * there is one) */
	int			debug_hash_bits;	/* testing: keep only this many low bits
									 * (1 .. 63) of every key tuple's hash,
									 * so that unequal keys collide; 0: all */
	const struct GaPageInput *pages;	/* the batches' heap pages and how
										 * they fill columns (below); NULL:
										 * rows only */
	GaTuning	tuning;			/* GPU: launch parameters (gpuagg.tuning) */
	int			debug_launch_set;	/* testing: run every batch with
									 * debug_launch, whatever tuning says */
	GaLaunchParams debug_launch;
} GaAggRequest;

/*
 * String keys (GA_TYPE_STRING key columns) group by exact byte equality;
 * a null is its own value, unequal to every string (the empty one too).
 * Only COUNT (of its non-null rows) takes a string column as input; neither
 * another aggregate, a derived column's operand nor an aggjoin does, and a string key uses the global hash-table
 * strategy on the GPU.  The device keeps each group's key bytes once and
 * returns them once per group (GaAggResult.key_bytes).
 */

/*
 * The groups, in no particular order, as columns of ngroups entries.
 * key_values are widened to int64; key_isnull holds one byte per group.
 * A string key's key_values are end offsets into its key_bytes, in group
 * order as in a GA_TYPE_STRING column (group g's value is key_bytes[k]
 * [start, key_values[k][g]), start = g > 0 ? key_values[k][g - 1] : 0; a
 * null group's is empty); key_bytes[k] is NULL for other keys.
 */
typedef struct GaAggResult
{
	int64_t		ngroups;
	int			nkeys;
	int64_t   **key_values;
	uint8_t   **key_isnull;
	uint8_t   **key_bytes;
	int			naggs;
	void	  **values;			/* per aggregate, element type by op */
} GaAggResult;

/* Bytes of one element of aggregate `agg`'s values in a result of request. */
extern int	ga_agg_result_width(const GaAggRequest *request, int agg);

/* Steps of the device work, timed separately for EXPLAIN ANALYZE. */
typedef enum GaPhase
{
	GA_PHASE_PROBE = 0,			/* sample of the first batch: key ranges, groups */
	GA_PHASE_DERIVED,			/* derived columns computed (gpuagg_device.h) */
	GA_PHASE_PARTITION,			/* rows partitioned by key hash */
	GA_PHASE_GROUP_IDS,			/* rows' dense group ids (global table) */
	GA_PHASE_AGGREGATE,			/* accumulation (with the ids, or fused) */
	GA_PHASE_GROW,				/* full tables grown and rebuilt */
	GA_PHASE_FINISH,			/* groups gathered at the end */
	GA_NUM_PHASES
} GaPhase;

extern const char *ga_phase_name(GaPhase phase);

/* What one aggregation did, for EXPLAIN ANALYZE. */
typedef struct GaAggStats
{
	int64_t		batches;
	int64_t		input_rows;
	int64_t		groups;
	int64_t		bytes_sent;		/* host to device */
	int64_t		table_growths;	/* times a full table grew and work redid */
	int64_t		batches_by_strategy[GA_NUM_STRATEGIES];
	double		device_ms;		/* kernels */
	double		transfer_ms;	/* copies both ways */
	int64_t		join_build_rows;	/* aggjoin: build rows with a key, of
									 * every step */
	int64_t		joined_rows;	/* aggjoin: rows the join's last step
								 * produced and the aggregation took
								 * (input_rows counts the probe rows;
								 * batches the pieces of at most batch_rows
								 * joined rows aggregated, at least one per
								 * submit) */
	int64_t		retries;		/* batch kernels run again after a growth */
	int64_t		device_estimated_groups;	/* from the first batch; 0: none */
	double		phase_ms[GA_NUM_PHASES];	/* device_ms split by phase */
	double		queue_ms;		/* its requests waited in the GPU service's
								 * queue (0 on a device of this process) */
	int			gpu_ordinal;	/* the GPU that ran it, -1: the CPU device */
	GaTuneFamily launch_family; /* the last batch's kernel family;
								 * GA_TUNE_NONE: no tuned launch ran */
	GaLaunchSource launch_source;	/* where its parameters came from */
	GaLaunchParams launch;		/* its launch parameters */
	int64_t		batches_explored;	/* batches run with a candidate under
									 * test */
	int32_t		launch_contention;	/* the contention level of its shape
									 * classes (0, 1: from the probe) */
} GaAggStats;

typedef struct GaAgg GaAgg;

/*
 * Plan-time strategy for a request on a GPU described by info (NULL for the
 * CPU device); used for EXPLAIN, needs no device.
 */
extern GaStrategy ga_agg_planned_strategy(const GaGpuInfo *info,
										  const GaAggRequest *request);

/* Start an aggregation on device.  Returns NULL with status on failure. */
extern GaAgg *ga_agg_create(GaDevice *device, const GaAggRequest *request,
							GaStatus *status);

/*
 * An empty batch to fill (nrows = 0, every validity bit set, has_nulls = 0).
 * May wait for earlier work that still uses the buffer.
 */
extern GaBatch *ga_agg_next_batch(GaAgg *agg, GaWaitCallback wait, void *arg,
								  GaStatus *status);

/* Hand a filled batch to the device; processing may continue afterwards. */
extern int	ga_agg_submit(GaAgg *agg, GaBatch *batch, GaWaitCallback wait,
						  void *arg, GaStatus *status);

/*
 * Wait for all submitted batches and return the groups.  The result stays
 * valid until ga_agg_destroy.
 */
extern const GaAggResult *ga_agg_finish(GaAgg *agg, GaWaitCallback wait,
										void *arg, GaStatus *status);

extern void ga_agg_get_stats(const GaAgg *agg, GaAggStats *stats);

/* Free everything the aggregation holds; safe after any failure. */
extern void ga_agg_destroy(GaAgg *agg);

/* ------------------------------------------------------------------------
 * Heap pages: the deform program
 * ------------------------------------------------------------------------
 *
 * A request's page program says how the tuples of the pages a batch
 * carries (GaPageDesc above) become rows of its columns.  attrs describes
 * the table's attributes 1 .. natts (attrs[i] is attribute i + 1), dropped
 * ones too, whose bytes old tuples still hold: the device walks a tuple's
 * data as PostgreSQL's heap_deform_tuple does, over every attribute up to
 * the last one a column needs, by its length and alignment (attlen > 0
 * fixed, -1 varlena, -2 cstring; alignby 1, 2, 4 or 8 bytes from the
 * tuple's data, which starts aligned; a varlena whose first byte is not 0
 * is not aligned, as the short-header rule says).  A null attribute (its
 * bit clear in the tuple's null bitmap, when the tuple has one) takes no
 * bytes.  An attribute past the tuple's own count (added to the table
 * after the tuple was written) is null, or has_missing's value missing
 * (attmissingval, attlen bytes as the table stores them, byval fixed-width
 * attributes only).
 *
 * Each of columns[0 .. ncolumns) fills one batch column from one
 * attribute, for every row of every page:
 *	GA_PAGE_COPY		the attribute's value (byval, attlen 1, 2, 4 or 8)
 *						into an integer column of at least its width,
 *						sign-extended (GA_TYPE_INT8 .. INT64), or a float
 *						column of its width (GA_TYPE_FLOAT32, FLOAT64);
 *						null where the attribute is null
 *	GA_PAGE_VALIDITY	a GA_TYPE_NONE column: valid where the attribute is
 *						not null (count(x) of any type)
 * The rows of a page's tuples leave every other column as the caller left
 * it.  No column is a derived column or a key of GA_TYPE_STRING, and no
 * two fill the same batch column.
 *
 * The layout of a heap page and tuple header that the device reads is in
 * these constants (byte offsets, little-endian), which the caller checks
 * against PostgreSQL's own headers.
 */
#define GA_PAGE_LOWER 12		/* uint16: pd_lower, the line pointers' end */
#define GA_PAGE_HEADER 24		/* the first line pointer (4 bytes each) */
#define GA_LP_OFF(lp) ((lp) & 0x7fffu)	/* line pointer: the tuple's offset */
#define GA_LP_FLAGS(lp) (((lp) >> 15) & 3u)
#define GA_LP_LEN(lp) ((lp) >> 17)	/* the tuple's length */
#define GA_LP_NORMAL 1
#define GA_TUPLE_INFOMASK2 18	/* uint16: attribute count in its low bits */
#define GA_TUPLE_NATTS_MASK 0x07ffu
#define GA_TUPLE_INFOMASK 20	/* uint16 */
#define GA_TUPLE_HASNULL 0x0001u
#define GA_TUPLE_HOFF 22		/* uint8: where the data starts */
#define GA_TUPLE_BITS 23		/* the null bitmap, when HASNULL */
#define GA_VARTAG_ONDISK 18		/* a TOAST pointer's tag ... */
#define GA_VARATT_EXTERNAL_SIZE 16	/* ... and the size of what follows it */
#define GA_PAGE_MAX_ATTRS 1600	/* attributes a table has at most */

typedef enum GaPageConvert
{
	GA_PAGE_COPY = 0,
	GA_PAGE_VALIDITY
} GaPageConvert;

typedef struct GaPageAttr
{
	int16_t		attlen;
	uint8_t		alignby;
	uint8_t		byval;
	uint8_t		has_missing;
	uint8_t		missing[8];		/* has_missing: the value's attlen bytes */
} GaPageAttr;

typedef struct GaPageColumn
{
	int			column;			/* the batch column it fills */
	int			attnum;			/* 1 .. natts */
	GaPageConvert convert;
} GaPageColumn;

typedef struct GaPageInput
{
	int			natts;			/* 1 .. GA_PAGE_MAX_ATTRS */
	const GaPageAttr *attrs;
	int			ncolumns;		/* 1 .. the request's ncolumns */
	const GaPageColumn *columns;
	int64_t		page_capacity;	/* pages a batch carries, >= 1 */
} GaPageInput;

/*
 * Whether the device deforms pages (takes a request with a page program);
 * a device that does not refuses one with GA_ERR_INVALID.
 */
extern int	ga_device_takes_pages(const GaDevice *device);

/*
 * How many pages a batch should carry on the device (GaPageInput's
 * page_capacity, at most the batch's rows): the CPU device's stay in the
 * CPU's cache until it deforms them, a GPU's cross the link in one copy,
 * which wants tens of MB; 0 when the device takes no pages.
 */
extern int64_t ga_device_page_capacity(const GaDevice *device);

/* ------------------------------------------------------------------------
 * Derived columns: exact integer arithmetic on the device
 * ------------------------------------------------------------------------
 *
 * A request may name derived columns.  The caller does not fill them: their
 * contents in a submitted batch are ignored (a device need not send them);
 * the device computes them in every row it aggregates, before aggregating
 * (in an aggjoin: in the rows of the last join step, so their
 * operands may come from any side).  This is how PostgreSQL's exact numeric
 * +, - and * (TPC-H's l_extendedprice * (1 - l_discount)) run on the device
 * from columns of scaled integers, instead of per row on the host.
 *
 * A derived column is one part of the value of an expression: a program
 * for a stack machine over exact signed integers.  GA_EXPR_COLUMN pushes a
 * row's value of an integer column (GA_TYPE_INT16, INT32 or INT64; not a
 * derived column), GA_EXPR_CONST pushes `constant`, ADD, SUB and MUL pop b
 * then a and push a + b, a - b, a * b, and SCALE multiplies the top by
 * 10^power (power 0 .. 38).  The program leaves exactly one value v.  The
 * caller guarantees that the stack never holds more than GA_EXPR_MAX_DEPTH
 * values and that every value pushed or computed has |x| < 2^190, so that
 * 192-bit two's complement arithmetic is exact.
 *
 * For each row:
 *	- the expression is null when any GA_EXPR_COLUMN operand is null in the
 *	  row (its validity bit clear); every part of it is then null;
 *	- else it is NaN when any GA_EXPR_COLUMN operand's nan_column (>= 0; a
 *	  GA_TYPE_NONE column, not derived) is valid in the row;
 *	- else it is finite, of value v.
 * Parts (the derived column's type must match):
 *	GA_DERIVED_LIMB		GA_TYPE_INT64: bits [42 limb, 42 limb + 42) of |v|,
 *						negated when v < 0 (limb 0 .. 3; the caller
 *						guarantees |v| < 2^168); valid when finite.  The
 *						sum of a group's limbs k, times 2^(42 k), added
 *						over k, is the exact sum of v.
 *	GA_DERIVED_INT64	GA_TYPE_INT64: v itself (the caller guarantees
 *						|v| < 2^63); valid when finite.
 *	GA_DERIVED_NAN		GA_TYPE_NONE: valid when NaN.
 * A derived column may be the column of any aggregate operation, never a
 * key, a join key or an operand; in an aggjoin its from_build
 * is 0 (it comes from no side).  Fields a step's operation does not use
 * (a CONST step's column, an ADD step's power, ...) and the limb of a part
 * other than GA_DERIVED_LIMB are ignored.  Every device computes the same
 * values.
 */
typedef enum GaExprOp
{
	GA_EXPR_COLUMN = 0,
	GA_EXPR_CONST,
	GA_EXPR_ADD,
	GA_EXPR_SUB,
	GA_EXPR_MUL,
	GA_EXPR_SCALE
} GaExprOp;

typedef struct GaExprStep
{
	GaExprOp	op;
	int			column;			/* GA_EXPR_COLUMN: the operand's column */
	int			nan_column;		/* GA_EXPR_COLUMN: where it is NaN, or -1 */
	int			power;			/* GA_EXPR_SCALE: times 10^power */
	int64_t		constant;		/* GA_EXPR_CONST */
} GaExprStep;

#define GA_EXPR_MAX_STEPS 24
#define GA_EXPR_MAX_DEPTH 8
#define GA_MAX_DERIVED 64

typedef enum GaDerivedPart
{
	GA_DERIVED_LIMB = 0,
	GA_DERIVED_INT64,
	GA_DERIVED_NAN
} GaDerivedPart;

typedef struct GaDerivedColumn
{
	int			column;			/* the request column it fills */
	GaDerivedPart part;
	int			limb;			/* GA_DERIVED_LIMB: 0 .. 3 */
	int			nsteps;			/* 1 .. GA_EXPR_MAX_STEPS */
	GaExprStep	steps[GA_EXPR_MAX_STEPS];
} GaDerivedColumn;

/* ------------------------------------------------------------------------
 * Aggregation fed by a hash join
 * ------------------------------------------------------------------------
 *
 * An aggregation whose request has a join spec aggregates the rows of a
 * chain of equi-joins instead of the submitted rows themselves, and the
 * joined rows never leave the device: each step's build (inner) side is
 * given once, with its payload columns, by ga_aggjoin_build; every
 * submitted batch is a probe (outer) batch.  Only groups come back.  (He
 * et al., "Relational joins on graphics processors", and the GFTR paper's
 * join-then-aggregate pipeline.)
 *
 * The request's columns split by origin.  Probe columns (from_build[c] =
 * 0) are filled by the caller in every submitted batch, as usual.  Build
 * columns of step s (from_build[c] = s, 1 .. nsteps) are not filled in
 * submitted batches (their contents are ignored): their values come from
 * step s's build payload.
 *
 * The rows of step 0 are the submitted batch's rows.  The rows of step s
 * are those of step s - 1 joined with step s's build rows: steps[s - 1]
 * names the join type and the key column (GA_TYPE_INT64: a probe column,
 * or a build column of an earlier step), whose value in a row of step
 * s - 1 is the key looked up.  Equal int64 values are equal keys (the
 * caller encodes keys exactly, so no recheck is needed); a null key never
 * matches.  (A step may also join on several such keys: see below.)  A
 * row r of step s - 1 and each build row b whose key equals r's give one
 * row of step s: r's columns, and step s's build columns from b (many to
 * many: every pair; a row matching a million build rows gives a million
 * rows, processed in pieces of at most batch_rows).  With
 * GA_AGGJOIN_LEFT a row without any match (also one with a null key)
 * gives one row whose step-s build columns are null; with
 * GA_AGGJOIN_ANTI only such rows are kept, and with GA_AGGJOIN_SEMI
 * only the others, once each, their step-s build columns null (a step of
 * type ANTI or SEMI normally has no build columns but its filter's and
 * key's).  Columns of later steps are not defined
 * yet in a step's rows.
 *
 * The rows of the last step are aggregated exactly as if they had been
 * submitted as batches: same keys, operations, results, table growth and
 * statistics (but input_rows counts probe rows, joined_rows the rows of
 * the last step and join_build_rows the keyed build rows of every step;
 * each submit counts as the batches its joined rows fill: every piece but
 * a submit's last holds batch_rows rows, so max(1, ceil(rows / batch_rows))
 * a submit, on every device).  Every step's rows are formed in pieces of
 * at most batch_rows, so a device needs memory for a few batches per step
 * and the build sides, however large the join's output.
 *
 * Call order: ga_agg_create, ga_aggjoin_build once for every step (in any
 * order), then batches as usual; ga_agg_next_batch and ga_agg_submit
 * before every step is built fail with GA_ERR_INVALID (or report a build's
 * failure), and fail_at_batch counts the submits.
 */
typedef enum GaAggJoinType
{
	GA_AGGJOIN_INNER = 0,
	GA_AGGJOIN_LEFT,			/* also a row, build columns null, for each row without a match */
	GA_AGGJOIN_ANTI,			/* only the rows without a match, the step's build columns null */
	GA_AGGJOIN_RIGHT,			/* INNER, and see below */
	GA_AGGJOIN_FULL,			/* LEFT, and see below */
	GA_AGGJOIN_SEMI			/* one row, build columns null, for each row with a match */
} GaAggJoinType;

/*
 * RIGHT and FULL joins (any step s, 0-based): besides the rows above, the
 * step gives, once, one row for every build payload row of step s (every
 * row 0 .. payload->nrows - 1 given to ga_aggjoin_build, with a key or
 * not: a row without a key never matches) that no row of the level below
 * it matched over all the submitted batches: its build columns of step s
 * from the payload row, the columns of the probe side and of the steps
 * before s null.  Those rows are made in ga_agg_finish, before the groups
 * are formed: step 0's first, then step 1's, and so on, each step's going
 * through the steps after it as any of its rows would (a null key never
 * matches there, and a later RIGHT or FULL step counts their matches), so
 * that a later step's unmatched rows are known only after every earlier
 * step's rows went by.  They are aggregated in pieces of at most
 * batch_rows; they count in joined_rows, and each of their pieces counts as
 * a batch.  A failed or cancelled submit leaves the aggregation failed, as
 * always, so no row is emitted twice or lost.
 */

/*
 * A step joins on one key or on several.  With nkeys 0 or 1 the key is
 * key_column, exact as above, and ga_aggjoin_build is given each build
 * row's key.  With nkeys 2 .. GA_AGG_MAX_JOIN_KEYS the step joins on the
 * pairs (key_columns[i], build_key_columns[i]): key_columns[i] is a
 * GA_TYPE_INT64 probe column or build column of an earlier step (as
 * key_column; key_column itself is ignored), build_key_columns[i] a
 * GA_TYPE_INT64 build column of this step (from_build = step + 1); a row
 * and a build row match when every pair's values are equal, and a null in
 * any of a row's key columns never matches.  The caller then gives
 * ga_aggjoin_build no keys (NULL): the device reads the build rows' keys
 * from their build key columns and looks rows up by a hash of the whole
 * key that it chooses free of collisions among the build's distinct keys,
 * then compares a row's keys with its candidate's, so equal hashes never
 * join unequal keys.  (As the Rapids report's table does with several key
 * columns: the position from a hash of the whole key, then a compare of
 * the keys themselves.)  No key column of a step, of either
 * kind, may be a derived column.
 *
 * A step with hashed set joins on the pairs that way with any nkeys from 1
 * (a step of 2 or more keys is hashed whether set or not).  Only a hashed
 * step takes string keys: a pair may be two GA_TYPE_STRING columns (a
 * probe or earlier build column and a build column of the step), whose
 * values are equal when their bytes are, each hashed with ga_hash_bytes
 * into the key's hash (join_key.h), on a device that joins strings
 * (ga_device_kind_joins_strings); the other pairs stay GA_TYPE_INT64.
 */
#define GA_AGG_MAX_JOIN_STEPS 8
#define GA_AGG_MAX_JOIN_KEYS GA_MAX_KEYS	/* as many as a group-by has */

/*
 * A filter over the last step's rows: a join's conditions besides its keys'
 * equalities (ON a.k = b.k AND a.v > b.w, or a WHERE clause over two
 * sides).  Only a row for which the program leaves true is aggregated (and
 * counted in joined_rows); false and null drop it.  Pieces are formed and
 * counted as batches before the filter, so the batch count does not
 * depend on it.  The caller may move an INNER join's conditions after the
 * chain this way only when no RIGHT or FULL step lies above that join
 * (whose matches the dropped rows would otherwise count); the device
 * evaluates the filter after the last step.  (A step's own filter, below,
 * is checked at the step instead.)
 *
 * The program is postfix over SQL's three-valued booleans (false, true,
 * null), at most GA_FILTER_MAX_DEPTH values held at once, one left at the
 * end:
 *	GA_FILTER_BOOL		push column `column` (GA_TYPE_INT8: 0 false, else
 *						true; null where the row's value is null)
 *	GA_FILTER_COMPARE	push `column` cmp `column2`, null when either is
 *						null: two integer columns (INT8 .. INT64, compared
 *						as int64), or two float columns (FLOAT32, FLOAT64,
 *						compared as double in PostgreSQL's order: NaN
 *						equals NaN and sorts above every other value)
 *	GA_FILTER_AND		pop b, a; push a AND b (false if either is false,
 *						else null if either is null)
 *	GA_FILTER_OR		pop b, a; push a OR b (true if either is true,
 *						else null if either is null)
 *	GA_FILTER_NOT		pop a; push NOT a (null stays null)
 * Columns named here may not be derived columns.
 */
typedef enum GaFilterOp
{
	GA_FILTER_BOOL = 0,
	GA_FILTER_COMPARE,
	GA_FILTER_AND,
	GA_FILTER_OR,
	GA_FILTER_NOT
} GaFilterOp;

typedef enum GaCompareOp
{
	GA_CMP_LT = 0,
	GA_CMP_LE,
	GA_CMP_EQ,
	GA_CMP_NE,
	GA_CMP_GE,
	GA_CMP_GT
} GaCompareOp;

typedef struct GaFilterStep
{
	GaFilterOp	op;
	GaCompareOp cmp;			/* GA_FILTER_COMPARE */
	int			column;			/* BOOL, COMPARE */
	int			column2;		/* COMPARE */
} GaFilterStep;

#define GA_FILTER_MAX_STEPS 24
#define GA_FILTER_MAX_DEPTH 8

/*
 * A step's own filter (INNER, LEFT, SEMI and ANTI steps; nfilter 0: none):
 * a join's conditions besides its keys' equalities that must be checked at
 * the join itself, as an outer, semi or anti join's ON conditions must
 * (LEFT JOIN b ON a.k = b.k AND a.v > b.w null-extends a row whose
 * matches all fail the condition).  A row of step s - 1 and a build row
 * with its key are a match only when the filter's program (as the join's
 * filter's above; its columns probe columns or build columns of steps 1 ..
 * s, read from the row and the build row) leaves true for the pair; rows
 * are then formed as above from the matches that pass: every passing pair
 * for INNER and LEFT, one null-extended row for a LEFT or ANTI row none
 * of whose pairs passes, one row for a SEMI row one of whose pairs
 * passes.  RIGHT and FULL steps take no filter.  A step's filter costs
 * an extra pass over its pairs.
 */
typedef struct GaAggJoinStep
{
	GaAggJoinType type;
	int			key_column;		/* nkeys <= 1: GA_TYPE_INT64, a probe column or a build column of an earlier step */
	int			nkeys;			/* 0 or 1: key_column alone (unless hashed); 2 .. GA_AGG_MAX_JOIN_KEYS: the pairs below */
	int			hashed;			/* nonzero: the pairs below even for nkeys 1 (see above) */
	int			key_columns[GA_AGG_MAX_JOIN_KEYS];	/* the pairs: each as key_column, or a string */
	int			build_key_columns[GA_AGG_MAX_JOIN_KEYS];	/* the pairs: build columns of this step, of
															 * their partners' types */
	int			nfilter;		/* 0: no filter; else 1 .. GA_FILTER_MAX_STEPS (see above) */
	GaFilterStep filter[GA_FILTER_MAX_STEPS];
} GaAggJoinStep;

/*
 * Whether a step joins on its pairs (key_columns, build_key_columns: the
 * device hashes them and rechecks) rather than on key_column alone.
 */
GA_INLINE int
ga_join_step_hashed(const GaAggJoinStep *step)
{
	return step->nkeys >= 2 || (step->hashed && step->nkeys == 1);
}

typedef struct GaAggJoinSpec
{
	int			nsteps;			/* 1 .. GA_AGG_MAX_JOIN_STEPS */
	GaAggJoinStep steps[GA_AGG_MAX_JOIN_STEPS];
	const uint8_t *from_build;	/* ncolumns entries: 0 = a probe column, s (1 .. nsteps) = a build column of step s; copied by ga_agg_create */
	int			nfilter;		/* 0: no filter; else 1 .. GA_FILTER_MAX_STEPS */
	GaFilterStep filter[GA_FILTER_MAX_STEPS];	/* see above */
} GaAggJoinSpec;

/*
 * Give an aggjoin the build side of step `step` (0-based, 0 ..
 * nsteps - 1), once per step, after ga_agg_create and before the first
 * ga_agg_next_batch.  payload has the request's ncolumns columns of the
 * request's types; the step's build columns (from_build[c] = step + 1) hold
 * the build rows 0 .. payload->nrows - 1 (values and validity as in any
 * batch, and a string column's bytes; its other columns are not read;
 * capacity >= nrows).  keys[i] is
 * the join key of build row rows[i], for the n <= payload->nrows build
 * rows that have a key (rows with a null key are left out: they never
 * match); rows are distinct.  A hashed step (ga_join_step_hashed) takes
 * keys NULL, and rows lists the build rows whose build key columns are all valid (a
 * listed row with a null in one is refused with GA_ERR_INVALID); should no
 * hash of its keys be free of collisions (practically never), the build
 * fails with GA_ERR_DEVICE.  Everything is copied: the caller may free
 * keys, rows and payload afterwards.  At most GA_JOIN_MAX_BUILD_ROWS rows
 * per step; a build the device cannot hold fails with
 * GA_ERR_OUT_OF_MEMORY (the caller then uses the CPU device).
 */
extern int	ga_aggjoin_build(GaAgg *agg, int step, const int64_t *keys, const uint32_t *rows,
							  int64_t n, const GaBatch *payload,
							  GaWaitCallback wait, void *arg, GaStatus *status);

/* ------------------------------------------------------------------------
 * Hash join
 * ------------------------------------------------------------------------
 *
 * The caller reduces each row's join keys to one int64 (the exact value of
 * an integer key, or a hash of several keys or of a non-integer key, in
 * which case the caller rechecks equality itself).  The device builds on
 * the build (inner) side's keys and answers, for every probe row, the range
 * of build rows whose key is equal:
 *
 *		sorted_rows[first[i] .. first[i] + count[i])
 *
 * where sorted_rows is the build rows ordered by key, rows with equal keys
 * adjacent and in the order they were given (a stable sort; the order of
 * different keys is the device's choice but the same on every device for
 * the same input, so that devices can be compared).  The answer is one
 * pair of integers per probe row, so its size is bounded by the batch
 * however many rows a key matches (many-to-many keys, skew): the caller
 * walks the ranges and forms the joined rows itself.  Rows with null keys
 * are never given to the build, and a probe row whose key column is null
 * (validity bit clear) gets count 0.
 */
typedef struct GaJoinRequest
{
	int64_t		probe_batch_rows;	/* capacity of every probe batch */
	int64_t		fail_at_batch;	/* testing: fail this probe (1-based),
								 * 0 = never */
} GaJoinRequest;

/* What one probe found; arrays of nrows entries. */
typedef struct GaJoinMatches
{
	int64_t		nrows;			/* the probe batch's nrows */
	const uint32_t *first;		/* index into sorted_rows; any value when
								 * count is 0 */
	const uint32_t *count;		/* build rows with an equal key */
	int64_t		total;			/* sum of count */
} GaJoinMatches;

/* What one join did, for EXPLAIN ANALYZE. */
typedef struct GaJoinStats
{
	int64_t		build_rows;
	int64_t		distinct_keys;	/* distinct build keys */
	int64_t		probe_batches;
	int64_t		probe_rows;
	int64_t		candidates;		/* sum of all counts */
	int64_t		bytes_sent;		/* host to device */
	double		device_ms;		/* kernels (build and probes) */
	double		transfer_ms;	/* copies both ways */
	double		queue_ms;		/* its requests waited in the GPU service's
								 * queue (0 on a device of this process) */
	int			gpu_ordinal;	/* the GPU that ran it, -1: the CPU device */
} GaJoinStats;

/* Most build rows one join accepts (row numbers are 32-bit). */
#define GA_JOIN_MAX_BUILD_ROWS ((int64_t) UINT32_MAX - 1)

typedef struct GaJoin GaJoin;

/* Start a join on device.  Returns NULL with status on failure. */
extern GaJoin *ga_join_create(GaDevice *device, const GaJoinRequest *request,
							  GaStatus *status);

/*
 * Build from n entries: keys[i] is the key of build row rows[i].  Called
 * once, before any probe; n may be 0.  The arrays are copied.
 */
extern int	ga_join_build(GaJoin *join, const int64_t *keys,
						  const uint32_t *rows, int64_t n,
						  GaWaitCallback wait, void *arg, GaStatus *status);

/* The n build rows in key order (see above); valid until ga_join_destroy. */
extern const uint32_t *ga_join_sorted_rows(const GaJoin *join);

/*
 * An empty probe batch to fill: one GA_TYPE_INT64 column of keys, nrows 0,
 * every validity bit set, has_nulls 0.
 */
extern GaBatch *ga_join_next_batch(GaJoin *join, GaWaitCallback wait,
								   void *arg, GaStatus *status);

/*
 * Probe with a filled batch and wait for the answer.  The matches stay
 * valid until the next ga_join_next_batch, ga_join_probe or
 * ga_join_destroy.  Returns NULL with status on failure.
 */
extern const GaJoinMatches *ga_join_probe(GaJoin *join, GaBatch *batch,
										  GaWaitCallback wait, void *arg,
										  GaStatus *status);

extern void ga_join_get_stats(const GaJoin *join, GaJoinStats *stats);

/* Free everything the join holds; safe after any failure. */
extern void ga_join_destroy(GaJoin *join);

#ifdef __cplusplus
}
#endif

#endif							/* GPUAGG_DEVICE_H */
