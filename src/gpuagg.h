/*-------------------------------------------------------------------------
 *
 * gpuagg.h
 *	  Declarations shared by the PostgreSQL side of gpuagg (src/).
 *
 * The node GpuHashAgg replaces HashAggregate / Agg.  Its life:
 *	hashagg/path.c		decides whether a grouping can run on a device and adds a
 *					costed CustomPath (create_upper_paths_hook)
 *	hashagg/plan.c		turns it into a CustomScan whose custom_scan_tlist is the
 *					group keys followed by the planner's own Aggrefs
 *	hashagg/exec.c		pulls child rows into columnar batches (batch/builder.c), runs
 *					them through a device (cuda/gpuagg_device.h) and returns
 *					the groups, finalized by finalize/finalize.c
 *	hashagg/explain.c		shows what it planned and did
 *
 * The node GpuHashJoin replaces Hash Join:
 *	hashjoin/path.c		splits the join's conditions, adds a costed CustomPath
 *					(set_join_pathlist_hook)
 *	hashjoin/plan.c		builds the CustomScan; keys and join quals reference the
 *					two children (OUTER_VAR / INNER_VAR)
 *	hashjoin/exec.c		builds on the inner side's keys on a device, probes with
 *					batches of outer keys and forms the joined rows
 *	hashjoin/explain.c	shows what it planned and did
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_H
#define GPUAGG_H

#include "postgres.h"

#include "compat.h"

#include "lib/stringinfo.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "nodes/value.h"
#include "portability/instr_time.h"

#include "gpuagg_device.h"

#define GPUAGG_NODE_NAME "GpuHashAgg"

/*
 * A Float node for custom_private that reads back as a Float: plans are
 * serialized for parallel workers, and readfuncs.c turns a token without a
 * decimal point into an Integer.
 */
static inline Node *
GpuAggFloatNode(double value)
{
	return (Node *) makeFloat(psprintf("%.1f", value));
}
#define GPUAGG_PACK_NAME "GpuAggPack"

/* ------------------------------------------------------------------------
 * guc.c: settings
 * ------------------------------------------------------------------------
 */
typedef enum GpuAggDeviceSetting
{
	GPUAGG_DEVICE_AUTO,
	GPUAGG_DEVICE_GPU,
	GPUAGG_DEVICE_CPU
} GpuAggDeviceSetting;

extern bool gpuagg_enabled;
extern bool gpuagg_enable_hashagg;
extern bool gpuagg_enable_hashjoin;
extern bool gpuagg_enable_aggjoin;
extern bool gpuagg_numeric_on_device;
extern bool gpuagg_force;
extern bool gpuagg_explain_device_details;
extern bool gpuagg_direct_scan;
extern bool gpuagg_probe_filter;
extern int	gpuagg_device;
extern int	gpuagg_strategy;
extern int	gpuagg_batch_rows;
extern int	gpuagg_gpu_index;
extern int	gpuagg_debug_fail_at_batch;
extern int	gpuagg_hashjoin_build_limit;
extern double gpuagg_gpu_startup_cost;
extern double gpuagg_gpu_tuple_cost;
extern double gpuagg_batch_value_cost;

extern void GpuAggGucInit(void);

/* ------------------------------------------------------------------------
 * devices.c: GPU discovery, device choice, gpuagg_devices()
 * ------------------------------------------------------------------------
 */
extern void GpuAggDiscoverDevices(void);
extern const GaGpuInfo *GpuAggSelectedGpu(void);
extern double GpuAggHashJoinBuildLimit(GaDeviceKind device);
extern const char *GpuAggNoGpuReason(void);
extern GaDeviceKind GpuAggPlannedDeviceKind(bool *usable);
extern GaDevice *GpuAggOpenDevice(GaDeviceKind kind, double *setup_ms);
extern int	GpuAggDeviceWait(void *arg);
extern void GpuAggRaiseCancel(void);
extern double GpuAggElapsedMs(instr_time start);

/* ------------------------------------------------------------------------
 * hashagg/catalog.c: which aggregates and key types the devices support
 * ------------------------------------------------------------------------
 */
typedef enum GpuAggKind
{
	GPUAGG_COUNT_STAR,
	GPUAGG_COUNT,
	GPUAGG_SUM,
	GPUAGG_AVG,
	GPUAGG_MIN,
	GPUAGG_MAX,
	GPUAGG_BOOL_AND,			/* bool_and, every: MIN over 0/1 */
	GPUAGG_BOOL_OR,				/* bool_or: MAX over 0/1 */
	GPUAGG_VAR_SAMP,			/* var_samp, variance (finalize/variance.c) */
	GPUAGG_VAR_POP,				/* var_pop */
	GPUAGG_STDDEV_SAMP,			/* stddev_samp, stddev */
	GPUAGG_STDDEV_POP,			/* stddev_pop */
	GPUAGG_FLOAT_MOMENTS,		/* variance and stddev of floats: the
								 * aggregate's final function over device
								 * MOMENTS (finalize/moments.c) */
	GPUAGG_FLOAT_COMOMENTS,		/* corr, covar_*, regr_* but regr_count:
								 * the final function over COMOMENTS */
	GPUAGG_REGR_COUNT			/* regr_count: COMOMENTS' n */
} GpuAggKind;

/* The aggregates finalized from N, sum(x) and sum(x * x) (finalize/variance.c). */
#define GPUAGG_KIND_IS_VARIANCE(kind) \
	((kind) == GPUAGG_VAR_SAMP || (kind) == GPUAGG_VAR_POP || \
	 (kind) == GPUAGG_STDDEV_SAMP || (kind) == GPUAGG_STDDEV_POP)

/* The aggregates of two float8 arguments, over device COMOMENTS. */
#define GPUAGG_KIND_IS_COMOMENTS(kind) \
	((kind) == GPUAGG_FLOAT_COMOMENTS || (kind) == GPUAGG_REGR_COUNT)

/* How one value travels in a batch column. */
typedef enum GpuAggEncoding
{
	GPUAGG_ENC_NONE,			/* validity only (count(x)) */
	GPUAGG_ENC_BOOL,			/* GA_TYPE_INT8 0/1 */
	GPUAGG_ENC_INT16,
	GPUAGG_ENC_INT32,			/* int4, date */
	GPUAGG_ENC_INT64,			/* int8, timestamp */
	GPUAGG_ENC_FLOAT4,
	GPUAGG_ENC_FLOAT8,
	GPUAGG_ENC_FLOAT8_KEY,		/* canonical bits of a float8 key as int64 */
	GPUAGG_ENC_FLOAT4_KEY,		/* canonical bits of a float4 key as int32 */
	GPUAGG_ENC_ZERO_SIGN,		/* row number * 2 + (value is -0): see batch/builder.c */
	GPUAGG_ENC_SPELLING,		/* row number << 24 | spelling rank: batch/builder.c */
	GPUAGG_ENC_NUMERIC_LIMB,	/* limb `part` of numeric * 10^scale, int64 */
	GPUAGG_ENC_NUMERIC_FLAG,	/* validity only: numeric is finite/NaN/+inf/-inf */
	GPUAGG_ENC_NUMERIC_INT64,	/* numeric * 10^scale as int64 (min/max) */
	GPUAGG_ENC_SQUARE_LIMB,		/* limb `part` of an integer's square, int64 */
	GPUAGG_ENC_NUMERIC_SQUARE_LIMB, /* limb `part` of (numeric * 10^scale)^2 */
	GPUAGG_ENC_DICT_KEY,		/* dictionary id (batch/key_dict.c) as int32 */
	GPUAGG_ENC_JOIN_KEY,		/* join key: GpuJoinExactKey() as int64 */
	GPUAGG_ENC_DICT_JOIN_KEY,	/* join key: dictionary key id as int64 */
	GPUAGG_ENC_NUMERIC_OPERAND, /* numeric * 10^scale as int64, 0 for NaN: an
								 * operand of arithmetic on the device */
	GPUAGG_ENC_DERIVED			/* computed by the device (hashagg/derived.c) */
} GpuAggEncoding;

/* Whether an encoding's values are ids of a dictionary (batch/key_dict.c). */
#define GPUAGG_ENC_IS_DICT(enc) \
	((enc) == GPUAGG_ENC_DICT_KEY || (enc) == GPUAGG_ENC_DICT_JOIN_KEY)

extern bool GpuAggKeyTypeSupported(Oid type, Oid collation, const char **why);
extern GpuAggEncoding GpuAggKeyEncoding(Oid type);
extern GpuAggEncoding GpuAggInputEncoding(Oid type);
extern GaValueType GpuAggEncodingType(GpuAggEncoding encoding);
extern bool GpuAggClassifyAggref(Aggref *aggref, GpuAggKind *kind,
								 Oid *input_type, int *numeric_scale,
								 int *numeric_precision, bool *distinct,
								 const char **why);
extern int	GpuAggDeviceOpsNeeded(GpuAggKind kind, Oid input_type,
								  int numeric_precision);
extern Expr *GpuAggChildArgument(Aggref *aggref, int argno);
extern Expr *GpuAggUnderFilter(Aggref *aggref, Expr *expr);
extern Oid	GpuAggFinalFunction(Oid aggfnoid);

/* ------------------------------------------------------------------------
 * hashagg/plan.c: the plan and its description in custom_private
 * ------------------------------------------------------------------------
 */
typedef struct GpuAggKeyDesc
{
	AttrNumber	child_attno;	/* column of the child's output */
	Oid			type;			/* base type of the key; TEXTOID for a bpchar
								 * of a declared length, whose values are
								 * padded alike and so group by their bytes
								 * (hashagg/plan.c) */
	bool		one_spelling;	/* every value spelt one way
								 * (KeyDictKeyHasOneSpelling): no first-row
								 * spelling column */
} GpuAggKeyDesc;

typedef struct GpuAggAggDesc
{
	GpuAggKind	kind;
	Oid			input_type;		/* base type of the argument, or InvalidOid */
	Oid			result_type;
	AttrNumber	arg_attno;		/* child column of the argument, 0 if none */
	AttrNumber	arg2_attno;		/* ... of the second argument (corr(y, x):
								 * x), 0 if none */
	AttrNumber	filter_attno;	/* child column of FILTER, 0 if none */
	Oid			final_fn;		/* FLOAT_MOMENTS, FLOAT_COMOMENTS: the
								 * aggregate's final function */
	Oid			arg_source_type;	/* base type of the child columns of the
									 * arguments: input_type, or a type that
									 * batch/builder.c converts to float8 */
	Oid			arg2_source_type;
	int			numeric_scale;	/* numeric argument: its scale, else 0 */
	int			numeric_precision;	/* ... and its most digits, else 0 */
	bool		distinct;		/* over DISTINCT values (finalize/distinct.c) */
	struct GpuAggDerivedDesc *derived;	/* numeric argument computed by the
										 * device from its operands
										 * (hashagg/derived.c; arg_attno is 0),
										 * else NULL */
} GpuAggAggDesc;

/*
 * One grouping set: the keys it groups by.  A plain GROUP BY (or none) is
 * one set of every key; GROUPING SETS, ROLLUP and CUBE give one per
 * expanded set, and the node aggregates the input once per set.
 */
typedef struct GpuAggSetDesc
{
	uint32		key_mask;		/* bit i: keys[i] is in the set */
	double		est_groups;		/* the planner's estimate for this set */
} GpuAggSetDesc;

/* Most grouping sets one GpuHashAgg computes (each is a device aggregation). */
#define GPUAGG_MAX_GROUPING_SETS 16

/* One GROUPING(...) of the output: the key of each argument, in order. */
typedef struct GpuAggGroupingDesc
{
	int			nargs;
	int		   *keys;			/* index into GpuAggDesc.keys */
} GpuAggGroupingDesc;

/*
 * A filter program of the device (aggjoin/filter.c, GaAggJoinSpec's form),
 * each operand a child column (attno, attno2; 0: none) of base type type,
 * type2.
 */
typedef struct GpuAggFilterDesc
{
	int			nsteps;			/* 0: no filter */
	struct
	{
		int16		op;			/* GaFilterOp */
		int16		cmp;		/* GaCompareOp */
		AttrNumber	attno;
		AttrNumber	attno2;
		Oid			type;
		Oid			type2;
	}			steps[GA_FILTER_MAX_STEPS];
} GpuAggFilterDesc;

/*
 * What the executor needs, stored in CustomScan.custom_private.  The node's
 * scan tuple (custom_scan_tlist) is the keys, then the aggregates, then the
 * GROUPING(...) expressions, in order.
 */
typedef struct GpuAggDesc
{
	int			nkeys;
	GpuAggKeyDesc *keys;
	int			naggs;
	GpuAggAggDesc *aggs;
	double		est_groups;		/* all sets together */
	bool		rescan_safe;	/* child can be re-run for a CPU fallback */
	double		input_rows;		/* rows the planner expects from the input */
	bool		parallel;		/* the child is a Gather of GpuAggPack nodes */
	bool		join_input;		/* the child is a GpuHashJoin whose joined rows
								 * go straight into batches (its scan tuple's
								 * columns are the child_attnos) */
	int			nsets;			/* at least one */
	GpuAggSetDesc *sets;
	bool		grouping_sets;	/* GROUPING SETS, ROLLUP or CUBE in the query */
	int			ngroupings;
	GpuAggGroupingDesc *groupings;

	/*
	 * Aggjoin (aggjoin/aggjoin.c): the input is an equi-join, or a chain of them,
	 * computed on the device.  Side 0 is the probe side (the bottom join's
	 * outer side), side s (1 .. njoin_steps) the build (inner) side of join
	 * step s, bottom up; each is a child of the node.  Every child expression
	 * is computed by one side, as its column child_side_attno there; each
	 * side's child outputs its expressions, then (a build side) its own join
	 * keys, then the outer keys of the steps it gives them to (keys' side).
	 * A step joins on one device key (an exact value, a dictionary id, or
	 * two int2/int4 keys paired), or on 2 .. GA_AGG_MAX_JOIN_KEYS keys that
	 * the device hashes together and rechecks (each exact or a dictionary
	 * id; their outer keys may come from different sides).
	 */
	int			njoin_steps;	/* 0: not aggjoin */
	struct
	{
		int			type;		/* GaAggJoinType */
		bool		build_unique;	/* a SEMI join: each key built once, so
									 * that the inner join matches a row at
									 * most once */
		double		match_fraction; /* of the rows it probes, the share the
									 * planner expects it to keep (at most 1;
									 * aggjoin/probe_filter.c) */
		int			nkeys;		/* 1 .. GA_AGG_MAX_JOIN_KEYS */
		GpuAggFilterDesc filter;	/* the step's own (an outer, semi or
									 * anti join's other conditions, or an
									 * INNER join's below a RIGHT or FULL
									 * one): checked at the step */
		struct
		{
			int			side;	/* the side computing the outer key */
			Oid			type;	/* base types of the outer and build keys */
			Oid			build_type;
			AttrNumber	attno;	/* the outer key's column in side's child */
			AttrNumber	build_attno;	/* the build key's in side step's */
		}			keys[GA_AGG_MAX_JOIN_KEYS];
	}			join_steps[GA_AGG_MAX_JOIN_STEPS];
	int			nchild;			/* child expressions */
	int		   *child_side;		/* per child column (attno - 1) */
	AttrNumber *child_side_attno;	/* ... its column in its side's child */
	AttrNumber	side_ncolumns[GA_AGG_MAX_JOIN_STEPS + 1];	/* each side child's */
	int			packed_sides;	/* bit s: side s's child is a Gather of
								 * GpuAggPack nodes packing it */

	/*
	 * The device's filter over the joined rows (aggjoin/filter.c): INNER
	 * joins' conditions besides their keys, checked after the chain.
	 */
	GpuAggFilterDesc filter;
	char	   *join_cond;		/* for EXPLAIN: the joins' keys, as text */
	char	   *join_filter;	/* ... and the device's filter (aggjoin/filter.c) */
	int			pack_side;		/* a GpuAggPack's: the side it packs */
} GpuAggDesc;

/*
 * What a GpuHashAgg or GpuAggPack path keeps in custom_private, by position:
 * group keys, Aggrefs, the child's expressions, HAVING, estimated groups
 * (Float), rescan-safe (Integer), input rows (Float), the grouping sets
 * (see hashagg/path.c), the GROUPING(...) expressions and the keys of their
 * arguments, the child's kind (Integer: 0 a projection, 1 a Gather of
 * GpuAggPack nodes, 2 a GpuHashJoin whose rows are the input).
 */
#define GPUAGG_PRIVATE_KEYS 0
#define GPUAGG_PRIVATE_AGGREFS 1
#define GPUAGG_PRIVATE_CHILD_EXPRS 2
#define GPUAGG_PRIVATE_HAVING 3
#define GPUAGG_PRIVATE_GROUPS 4
#define GPUAGG_PRIVATE_RESCAN_SAFE 5
#define GPUAGG_PRIVATE_INPUT_ROWS 6
#define GPUAGG_PRIVATE_SETS 7
#define GPUAGG_PRIVATE_GROUPINGS 8
#define GPUAGG_PRIVATE_PARALLEL 9
#define GPUAGG_PRIVATE_JOIN 10	/* aggjoin only: see aggjoin/aggjoin.c */

extern AttrNumber GpuAggChildAttno(List *child_exprs, Node *expr);
extern List *GpuAggDescToList(const GpuAggDesc *desc);
extern GpuAggDesc *GpuAggDescFromList(List *list);
extern GpuAggDesc *GpuAggDescFromPath(List *path_private, List **scan_tlist);
extern Plan *GpuAggPlanPath(PlannerInfo *root, RelOptInfo *rel,
							CustomPath *best_path, List *tlist,
							List *clauses, List *custom_plans);
extern void GpuAggPlanInit(void);

/* ------------------------------------------------------------------------
 * aggjoin/aggjoin.c: GpuHashAgg fed by a join computed on the device
 * ------------------------------------------------------------------------
 */
typedef struct GpuAggJoinSides
{
	int			nsides;			/* join steps + 1 */
	RelOptInfo *rels[GA_AGG_MAX_JOIN_STEPS + 1];	/* side 0: the probe side;
													 * s: step s's build side */
	Path	   *paths[GA_AGG_MAX_JOIN_STEPS + 1];	/* their cheapest
													 * unparameterized paths */
	PathTarget *targets[GA_AGG_MAX_JOIN_STEPS + 1]; /* each side's child
													 * expressions, then its
													 * keys */
	List	   *join_private;	/* path_private[GPUAGG_PRIVATE_JOIN] */
	int			nkeys;			/* device join keys of all the steps */
	List	   *extra_exprs;	/* child expressions to add after the given
								 * ones: the filter's other operands */
} GpuAggJoinSides;

/* aggjoin/filter.c: an INNER join's other conditions as the device's filter */
typedef int (*GpuAggJoinFilterOperandSide) (Node *expr, void *arg, const char **why);
extern bool GpuAggJoinFilterCompile(List *quals, GpuAggJoinFilterOperandSide side_of,
									void *arg, List **program, List **operands,
									const char **why);

extern List *GpuAggJoinPrivate(List *join_private, int packed_sides, int pack_side);
extern char *GpuAggJoinConditionText(PlannerInfo *root, List *join_private, char **filter);
extern bool GpuAggJoinSidesFor(PlannerInfo *root, RelOptInfo *input_rel,
							   List *child_exprs, List *keys, List *aggrefs,
							   bool grouping_sets, GpuAggJoinSides *sides);
extern void GpuAggJoinDescFromPath(GpuAggDesc *desc, List *path_private);
extern List *GpuAggJoinDescToList(const GpuAggDesc *desc);
extern void GpuAggJoinDescFromList(GpuAggDesc *desc, List *list);

/* ------------------------------------------------------------------------
 * hashagg/path.c, hashagg/pack.c
 * ------------------------------------------------------------------------
 */
extern void GpuAggPathInit(void);
extern int64 GpuAggMessageCapacity(void);
extern Expr *GpuAggBatchMarker(void);
extern Path *GpuAggPackPath(RelOptInfo *rel, Path *child, PathTarget *target,
							List *path_private, int ncolumns);
extern void GpuAggPackInit(void);

/* ------------------------------------------------------------------------
 * hashagg/exec.c, batch/builder.c, finalize/finalize.c, hashagg/explain.c
 * ------------------------------------------------------------------------
 */
typedef struct GpuAggBatchBuilder GpuAggBatchBuilder;

/* batch/key_dict.c: dictionaries of keys with no fixed-width integer form */
typedef struct KeyDict KeyDict;

#define GPUAGG_SPELLING_BITS 24
#define GPUAGG_SPELLING_MASK ((INT64CONST(1) << GPUAGG_SPELLING_BITS) - 1)
#define GPUAGG_MAX_SPELLINGS (1 << GPUAGG_SPELLING_BITS)

extern KeyDict *KeyDictCreate(Oid type, MemoryContext cxt);
extern bool KeyDictTypeSupported(Oid type);
extern bool KeyDictHasSpellings(Oid type);
extern bool KeyDictIsPaddedBpchar(Node *key);
extern bool KeyDictWholeDateField(Node *expr, Node **arg);
extern bool KeyDictKeyHasOneSpelling(Node *key);
extern int32 KeyDictIntern(KeyDict *dict, Datum value, MemoryContext scratch);
extern void KeyDictInternMany(KeyDict *dict, const Datum *values, const bool *isnull,
							  int n, int32 *ids, MemoryContext scratch);
extern void KeyDictKeysOf(KeyDict *dict, const int32 *spellings, const bool *isnull,
						  int n, int32 *keys);
extern int32 KeyDictKey(KeyDict *dict, int32 spelling);
extern bool KeyDictSpellings(KeyDict *dict);
extern int32 KeyDictRank(KeyDict *dict, int32 spelling);
extern int32 KeyDictSize(KeyDict *dict);
extern Datum KeyDictValue(KeyDict *dict, int32 spelling);
extern Datum KeyDictKeyValue(KeyDict *dict, int32 key, int32 rank);
extern Size KeyDictValueSize(KeyDict *dict, int32 id);
extern Datum KeyDictValueFromBytes(KeyDict *dict, const char *bytes, Size len,
								   MemoryContext scratch);

/* The first join_key of a join filter's comparison of dictionary ids. */
#define GPUAGG_FILTER_DICT_FIRST (GA_AGG_MAX_JOIN_STEPS * GA_AGG_MAX_JOIN_KEYS)

/* One batch column: where its values come from and how they travel. */
typedef struct GpuAggColumnSource
{
	AttrNumber	attno;			/* child column, 0 for none (count(*)) */
	AttrNumber	filter_attno;	/* FILTER column, 0 for none */
	GpuAggEncoding encoding;
	Oid			type;			/* base type of the child column */
	int16		scale;			/* numeric encodings: the value's scale */
	int16		part;			/* numeric: limb number or GpuAggNumericPart */
	int16		join_key;		/* GPUAGG_ENC_DICT_JOIN_KEY: its join step
								 * times GA_AGG_MAX_JOIN_KEYS plus its key's
								 * number, or GPUAGG_FILTER_DICT_FIRST plus
								 * its filter comparison's number; a key's
								 * two sides, a comparison's two operands,
								 * share one dictionary */
	int16		derived;		/* GPUAGG_ENC_DERIVED: 1 + the layout's number
								 * of its expression, else 0 */
} GpuAggColumnSource;

/* finalize/numeric.c: numeric arguments as limbs, flags or int64 */
#define GPUAGG_NUMERIC_LIMBS 4
#define GPUAGG_NUMERIC_LIMB_BITS 42
/* limbs of a square: (50 digits)^2 < 2^333 */
#define GPUAGG_SQUARE_LIMBS 8
/* numeric arguments of at most this many digits travel as one int64 */
#define GPUAGG_NUMERIC_INT64_DIGITS 18

typedef enum GpuAggNumericPart
{
	GPUAGG_NUMERIC_FINITE,
	GPUAGG_NUMERIC_NAN,
	GPUAGG_NUMERIC_PINF,
	GPUAGG_NUMERIC_NINF
} GpuAggNumericPart;

extern bool GpuAggNumericBounds(Node *expr, int *precision, int *scale);
extern bool GpuAggNumericSupported(GpuAggKind kind, Node *expr, int *scale,
								   int *precision, const char **why);
extern int	GpuAggLimbsForDigits(int digits);
/*
 * A numeric argument read once per row, for all its batch columns (batch/builder.c
 * keeps one per row); the scaled magnitude and its square are computed when
 * a column first needs them.
 */
typedef struct GpuAggNumericValue
{
	GpuAggNumericPart part;		/* finite, NaN, +Infinity or -Infinity */
	bool		negative;
	int			scale;			/* the column's scale */
	Datum		datum;
	bool		scaled;			/* magnitude[] computed */
	uint64		magnitude[3];	/* |value| * 10^scale, little-endian words */
	bool		squared;		/* square[] computed */
	uint64		square[6];		/* magnitude^2 */
} GpuAggNumericValue;

extern void GpuAggNumericRead(Datum value, int scale, GpuAggNumericValue *out);
extern int64 GpuAggNumericEncodeValue(GpuAggNumericValue *value, GpuAggEncoding encoding,
									  int part, bool *isnull);
extern int64 GpuAggNumericEncode(Datum value, int scale, GpuAggEncoding encoding,
								 int part, bool *isnull);
extern GpuAggNumericPart GpuAggNumericPartOf(Datum value);
extern Datum GpuAggNumericFromLimbs(const GaInt128 *const *limb_sums, int nlimbs,
									int64 group, int scale);
extern Datum GpuAggNumericFromInt128Limbs(const int128 *limb_sums, int nlimbs,
										  int scale);
extern bool GpuAggNumericSpecialResult(int64 finite, int64 nan, int64 pinf,
									   int64 ninf, Datum *result, bool *isnull);
extern Datum GpuAggNumericFromInt64(int64 value, int scale);
extern Datum GpuAggNumericSpecial(const char *name);
extern int64 GpuAggSquareLimb(int64 value, int part);
extern Datum GpuAggInt128Scaled(int128 value, int scale);
extern Datum GpuAggInt128ToNumeric(int128 value);
extern int64 GpuAggNumericOperand(Datum value, int scale, bool *isnan);

/*
 * hashagg/derived.c: a numeric aggregate argument of +, -, * computed by the
 * device (gpuagg_device.h's derived columns) from its operands, which the
 * child computes: numeric(p <= 18, s) expressions as scaled int64 (and a NaN
 * flag), integer expressions cast to numeric as they are, constants inline.
 */
typedef struct GpuAggDerivedStep
{
	int16		op;				/* GaExprOp */
	int16		scale;			/* COLUMN of a numeric operand: its scale */
	AttrNumber	attno;			/* COLUMN: the child column of the operand */
	Oid			type;			/* COLUMN: NUMERICOID, INT2OID, INT4OID or INT8OID */
	int32		power;			/* SCALE */
	int64		constant;		/* CONST */
} GpuAggDerivedStep;

typedef struct GpuAggDerivedDesc
{
	int			nsteps;
	GpuAggDerivedStep steps[GA_EXPR_MAX_STEPS];
} GpuAggDerivedDesc;

extern bool GpuAggDerivedArgument(Aggref *aggref, List **operands);
extern GpuAggDerivedDesc *GpuAggDerivedCompile(Aggref *aggref, List *child_exprs,
											   AttrNumber (*child_attno) (List *, Node *));
extern List *GpuAggDerivedToList(const GpuAggDerivedDesc *derived);
extern GpuAggDerivedDesc *GpuAggDerivedFromList(List *list);

/* How one SQL aggregate is computed from device operations. */
typedef struct GpuAggOutput
{
	GpuAggKind	kind;
	Oid			input_type;
	Oid			result_type;
	int			op_value;		/* SUM/MIN/MAX result, or -1 */
	int			op_count;		/* COUNT / COUNT_ROWS result (numeric: finite) */
	int			op_nonfinite;	/* COUNT_NONFINITE result, or -1 */
	/* numeric arguments (finalize/numeric.c) */
	int			numeric_scale;
	int			nlimbs;			/* numeric sum(x) in limbs: how many */
	int			op_limbs[GPUAGG_NUMERIC_LIMBS]; /* SUM_INT of each limb */
	int			nsquares;		/* variance: limbs of sum(x * x) */
	int			op_squares[GPUAGG_SQUARE_LIMBS];	/* SUM_INT of each */
	int			op_nan;			/* COUNT of NaN, +Infinity, -Infinity */
	int			op_pinf;
	int			op_ninf;
	int			distinct_set;	/* DISTINCT aggregate: its set, else -1 */
	FmgrInfo   *final_fn;		/* moments: the aggregate's final function,
								 * looked up once with the layout */
} GpuAggOutput;

/*
 * A DISTINCT argument: the device groups by the keys plus this column (a
 * second request), and the host counts or sums the distinct values per group
 * (finalize/distinct.c).
 */
typedef struct GpuAggDistinctSet
{
	int			column;			/* batch column of the argument, key-encoded */
	GpuAggEncoding encoding;
} GpuAggDistinctSet;

/* hashagg/layout.c: batch columns and device operations of a description */
typedef struct GpuAggLayout
{
	int			ncolumns;
	int			maxcolumns;
	GpuAggColumnSource *sources;
	GaValueType *column_types;
	int		   *key_columns;	/* batch column of each key */
	int		   *key_first_ops;	/* MIN over a key's ZERO_SIGN or SPELLING, or -1 */
	int			nops;
	GaAggSpec  *ops;
	GpuAggOutput *outputs;		/* one per aggregate of the description */
	int			ndistinct;
	GpuAggDistinctSet *distinct_sets;

	/*
	 * Aggjoin: the columns of side s (desc's sides) are [side_first[s],
	 * side_first[s + 1]), side 0's first, each side's keys after its other
	 * columns; sources' attnos are columns of that side's child.  Otherwise
	 * one side, all columns.
	 */
	int			nsides;
	int			side_first[GA_AGG_MAX_JOIN_STEPS + 2];
	int			build_key_columns[GA_AGG_MAX_JOIN_STEPS + 1][GA_AGG_MAX_JOIN_KEYS]; /* per build side and key */
	uint8	   *from_build;		/* per column: its side */
	GaAggJoinSpec join_spec;
	int			nfilter_dicts;	/* join filter comparisons of dictionary
								 * ids (hashagg/layout.c) */

	/* columns the device computes (hashagg/derived.c), for the request */
	int			nderived;
	GaDerivedColumn *derived;
	int			nexprs;			/* distinct expressions among them */
	const struct GpuAggDerivedDesc **exprs;
} GpuAggLayout;

extern GpuAggLayout *GpuAggLayoutBuild(const GpuAggDesc *desc);

/* finalize/distinct.c */
typedef struct GpuAggDistinctSums GpuAggDistinctSums;

extern GpuAggDistinctSums *GpuAggDistinctCombine(const GpuAggLayout *layout,
												 int noutputs, int nkeys,
												 const GaAggResult *main,
												 const GaAggResult *const *sets,
												 GpuAggBatchBuilder *builder);
extern Datum GpuAggDistinctFinalize(const GpuAggDistinctSums *sums,
									const GpuAggOutput *out, int o,
									int64 group, bool *isnull);

extern GpuAggBatchBuilder *GpuAggBatchBuilderCreate(int ncolumns,
													const GpuAggColumnSource *sources,
													MemoryContext cxt);
extern void GpuAggBatchBuilderStart(GpuAggBatchBuilder *builder, GaBatch *batch);
extern void GpuAggBatchBuilderSetColumns(GpuAggBatchBuilder *builder, int first, int end);
extern bool GpuAggBatchColumnDerived(GpuAggBatchBuilder *builder, int column);
extern void GpuAggBatchAppend(GpuAggBatchBuilder *builder, GaBatch *batch,
							  TupleTableSlot *slot);

/*
 * Rows given column by column (GpuAggBatchAppendColumns): per child output
 * column, nrows values and null flags; the value of a null row is 0.
 */
typedef struct GpuAggInputColumn
{
	const Datum *values;
	const bool *isnull;
	bool		hasnull;		/* whether any of the rows is null */
} GpuAggInputColumn;

extern bool GpuAggBatchBuilderColumnar(GpuAggBatchBuilder *builder);
extern void GpuAggBatchAppendColumns(GpuAggBatchBuilder *builder, GaBatch *batch,
									 int nrows, const GpuAggInputColumn *input);
extern Datum GpuAggDecodeKey(GpuAggBatchBuilder *builder, int column,
							 Oid type, int64 value, int64 first);
extern int32 GpuAggBatchInternKey(GpuAggBatchBuilder *builder, int column,
								  Datum value);
extern KeyDict *GpuAggBatchDict(GpuAggBatchBuilder *builder, int column);
extern void GpuAggBatchBuilderSetSender(GpuAggBatchBuilder *builder);
extern int	GpuAggBatchSpellingSource(GpuAggBatchBuilder *builder, int column);
extern MemoryContext GpuAggBatchScratch(GpuAggBatchBuilder *builder);
extern GaBatch *GpuAggLocalBatchCreate(int ncolumns, const GaValueType *types,
									   int64 capacity, MemoryContext cxt);
extern void GpuAggLocalBatchReset(GaBatch *batch);

/* batch/message.c: batches sent by parallel workers as bytea messages */
typedef struct GpuAggMessageReceiver GpuAggMessageReceiver;

extern bytea *GpuAggMessageBuild(GpuAggBatchBuilder *builder, GaBatch *batch,
								 uint64 sender, int first_column, int32 *dict_sent,
								 StringInfo buf);
extern int64 GpuAggMessageRows(bytea *message);
extern Size GpuAggMessageBytes(int ncolumns, const GaValueType *types, int64 rows);
extern GpuAggMessageReceiver *GpuAggMessageReceiverCreate(int ncolumns,
														  MemoryContext cxt);
extern void GpuAggMessageAppend(GpuAggMessageReceiver *receiver,
								GpuAggBatchBuilder *builder, GaBatch *batch,
								bytea *message);


extern Datum GpuAggFinalize(const GpuAggOutput *output,
							const GaAggResult *result, int64 group,
							bool *isnull);

/* finalize/variance.c */
extern Datum GpuAggMomentsResult(const GpuAggOutput *output, const GaAggResult *result,
								 int64 group, bool *isnull);
extern Datum GpuAggVarianceResult(GpuAggKind kind, int64 n, int64 nan, int64 pinf,
								  int64 ninf, Datum sum, Datum sum_squares,
								  int scale, bool *isnull);

typedef struct GpuAggState GpuAggState;
extern Node *GpuAggCreateScanState(CustomScan *cscan);
extern void GpuAggExplain(CustomScanState *node, List *ancestors,
						  ExplainState *es);
extern const GaGpuInfo *GpuAggExplainDevice(const char *device_name,
											ExplainState *es);

/* What a GpuHashAgg did, for EXPLAIN ANALYZE (all loops together). */
typedef struct GpuAggRunInfo
{
	bool		executed;
	GaAggStats	stats;			/* the device's own counts and times */
	double		setup_ms;		/* CUDA context creation paid by this query */
	char	   *fallback;		/* why the CPU finished the query, or NULL */
	double		build_ms;		/* aggjoin: reading the inner side, building */
	double		input_ms;		/* pulling child rows into batches */
	double		wait_ms;		/* in device calls (submit, next batch, finish) */
	double		result_ms;		/* decoding and finalizing groups (timed runs) */
	bool		direct_scan;	/* the child Seq Scan's pages are read directly */
} GpuAggRunInfo;

/* hashagg/exec.c exports what hashagg/explain.c reads */
extern void GpuAggExplainInfo(GpuAggState *state, const GpuAggDesc **desc,
							  GaAggRequest **request, const GpuAggRunInfo **info,
							  const char **device_name);

/* ------------------------------------------------------------------------
 * GpuHashJoin: hashjoin/path.c (planner), hashjoin/plan.c (plan), hashjoin/exec.c
 * (executor), hashjoin/explain.c
 * ------------------------------------------------------------------------
 */
#define GPUJOIN_NODE_NAME "GpuHashJoin"

/* Which side of the join a value comes from. */
#define GPUJOIN_OUTER 0
#define GPUJOIN_INNER 1

/* How one hash key becomes (part of) the device's int64 key. */
typedef enum GpuJoinKeyKind
{
	GPUJOIN_KEY_EXACT,			/* integer-like value, equality is identity */
	GPUJOIN_KEY_HASH			/* the type's hash function; rechecked */
} GpuJoinKeyKind;

/*
 * What the executor needs, stored in CustomScan.custom_private (see
 * GpuJoinDescToList).  Expressions reference the children's output with
 * OUTER_VAR / INNER_VAR Vars, like a native HashJoin's.  The node's scan
 * tuple (custom_scan_tlist) is filled column by column from one side.
 */
typedef struct GpuJoinDesc
{
	JoinType	jointype;		/* INNER, LEFT, RIGHT, FULL, SEMI or ANTI */
	int			nkeys;
	List	   *outer_keys;		/* key expressions over the outer child */
	List	   *inner_keys;		/* ... and over the inner child */
	GpuJoinKeyKind *key_kinds;
	Oid		   *outer_hashfns;	/* hash functions (GPUJOIN_KEY_HASH) */
	Oid		   *inner_hashfns;
	Oid		   *collations;
	List	   *hash_clauses;	/* the equalities, for EXPLAIN and rechecks */
	bool		recheck;		/* device key equality is not SQL equality */
	List	   *join_quals;		/* other join conditions */
	int			nscan;			/* columns of the scan tuple */
	int		   *scan_sides;		/* GPUJOIN_OUTER or GPUJOIN_INNER */
	AttrNumber *scan_attnos;	/* column of that side's child */
	double		inner_rows;		/* planner's estimates */
	double		outer_rows;
	bool		inner_unique;	/* each outer row matches at most one row */
} GpuJoinDesc;

extern List *GpuJoinDescToList(const GpuJoinDesc *desc);
extern GpuJoinDesc *GpuJoinDescFromList(List *list);
extern Plan *GpuJoinPlanPath(PlannerInfo *root, RelOptInfo *rel,
							 CustomPath *best_path, List *tlist,
							 List *clauses, List *custom_plans);
extern void GpuJoinPlanInit(void);
extern void GpuJoinPathInit(void);
extern bool GpuJoinKeyIsExact(Oid opno, Oid outer_type, Oid inner_type);
extern bool GpuJoinExactKeyType(Oid type);
extern int64 GpuJoinExactKey(Datum value, Oid type);
extern Path *GpuJoinAggInputPath(RelOptInfo *rel, List *exprs);
extern List *GpuJoinDevicePaths(RelOptInfo *rel);

/* What a GpuHashJoin did, for EXPLAIN ANALYZE (all loops together). */
typedef struct GpuJoinRunInfo
{
	bool		executed;
	GaJoinStats stats;
	double		setup_ms;
	char	   *fallback;		/* why the CPU finished the join, or NULL */
	int64		matched_rows;	/* candidate pairs that passed the join quals */
	int64		null_key_rows;	/* rows whose key was NULL (both sides) */
	int64		inner_rows_read;	/* rows read from the inner side */
	double		build_ms;		/* reading the inner side and building */
	double		probe_ms;		/* in probe calls */
} GpuJoinRunInfo;

typedef struct GpuJoinState GpuJoinState;
extern Node *GpuJoinCreateScanState(CustomScan *cscan);
extern void GpuJoinExplainInfo(GpuJoinState *state, const GpuJoinDesc **desc,
							   const GpuJoinRunInfo **info,
							   const char **device_name);
extern void GpuJoinExplain(CustomScanState *node, List *ancestors,
						   ExplainState *es);
extern bool GpuJoinFillBatch(CustomScanState *node, GpuAggBatchBuilder *builder,
							 GaBatch *batch);

/* ------------------------------------------------------------------------
 * batch/exchange.c: batch messages from GpuAggPack workers in shared memory
 * ------------------------------------------------------------------------
 */
typedef struct GpuAggExchange GpuAggExchange;
typedef struct GpuAggExchangeStats
{
	uint64		through_slots;	/* workers' messages handed over in a slot */
	uint64		through_queue;	/* ... sent through Gather's queue instead */
	uint64		waits;			/* times a worker found no free slot at first */
	int			nslots;
	Size		slot_bytes;
} GpuAggExchangeStats;
extern Size GpuAggExchangeMaxBytes(void);
extern Size GpuAggExchangeSize(int nslots, Size slot_bytes);
extern GpuAggExchange *GpuAggExchangeCreate(void *place, int nslots, Size slot_bytes,
											MemoryContext cxt);
extern GpuAggExchange *GpuAggExchangeAttach(void *place, MemoryContext cxt);
extern void GpuAggExchangeReset(GpuAggExchange *x);
extern void GpuAggExchangeCounts(GpuAggExchange *x, GpuAggExchangeStats *stats);
extern bytea *GpuAggExchangePut(GpuAggExchange *x, bytea *message);
extern bool GpuAggExchangeIsRef(bytea *message);
extern bytea *GpuAggExchangeGet(GpuAggExchange *x, bytea *ref_message, int32 *slot);
extern void GpuAggExchangeRelease(GpuAggExchange *x, int32 slot);
extern GpuAggExchange *GpuAggPackExchange(PlanState *gather);

/* ------------------------------------------------------------------------
 * batch/scan_direct.c: reading a plain Seq Scan's heap pages directly
 * ------------------------------------------------------------------------
 */
typedef struct GpuAggDirectScan GpuAggDirectScan;
#define GPUAGG_DIRECT_SCAN_TEXT "table pages read directly from the Seq Scan below"
extern GpuAggDirectScan *GpuAggDirectScanCreate(PlanState *child, MemoryContext cxt);
extern bool GpuAggDirectScanFill(GpuAggDirectScan *ds, GpuAggBatchBuilder *builder,
								 GaBatch *batch);
extern void GpuAggDirectScanReset(GpuAggDirectScan *ds);
typedef struct GpuAggProbeKeys GpuAggProbeKeys;	/* aggjoin/probe_filter.c */
extern void GpuAggDirectScanSetProbeKeys(GpuAggDirectScan *ds, GpuAggProbeKeys *keys);
extern void GpuAggDirectScanEnd(GpuAggDirectScan *ds);

/* aggjoin/probe_filter.c: Bloom filters of build keys that the probe side's workers test */
typedef struct GpuAggProbeFilter GpuAggProbeFilter;
extern bool GpuAggProbeFilterStepQualifies(const GpuAggDesc *desc, const GpuAggLayout *layout,
										   int step, int *column);
extern GpuAggProbeFilter *GpuAggProbeFilterCreate(void);
extern void GpuAggProbeFilterAdd(GpuAggProbeFilter *filter, int column, const int64 *keys,
								 int64 n);
extern Size GpuAggProbeFilterSharedBytes(const GpuAggProbeFilter *filter);
extern void GpuAggProbeFilterShare(const GpuAggProbeFilter *filter, void *place, Size room);
extern Size GpuAggProbeFilterAreaBytes(const void *place);
extern GpuAggProbeKeys *GpuAggProbeKeysAttach(void *place, const GpuAggLayout *layout,
											  MemoryContext cxt);
extern bool GpuAggProbeKeysRow(GpuAggProbeKeys *keys, const Datum *values, const bool *isnull);
extern int	GpuAggProbeKeysRun(GpuAggProbeKeys *keys, const GpuAggInputColumn *input, int n,
							   bool *keep);
extern void GpuAggProbeKeysFlush(GpuAggProbeKeys *keys);
extern bool GpuAggProbeFilterCounts(const void *place, int *nsteps, int64 *nkeys,
									uint64 *tested, uint64 *removed);

/* hashagg/pack.c: the probe side's filter, given to its GpuAggPack in the leader */
extern void GpuAggPackSetProbeFilter(PlanState *gather, const GpuAggProbeFilter *filter);

/* aggjoin/aggjoin.c: reading an aggjoin's build side */
extern bool GpuAggJoinBuild(GaAgg *agg, const GpuAggDesc *desc,
							const GpuAggLayout *layout, int step,
							GpuAggBatchBuilder *builder,
							GpuAggMessageReceiver *receiver, PlanState *inner,
							MemoryContext cxt, GpuAggProbeFilter *filter,
							GaStatus *status);

#endif							/* GPUAGG_H */
