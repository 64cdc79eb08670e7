/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every difference between the PostgreSQL major versions gpuagg builds
 *	  against (15, 16, 17, 18), in one place.  Included after postgres.h
 *	  by the files that need it; no other file tests PG_VERSION_NUM.
 *
 * How each version is checked: test/versions.sh compiles src/ and the C
 * files of cuda/ with -Werror against the server headers of every version
 * it can fetch from Debian's archive (15 installed, 17 from trixie, 18 from
 * sid; no Debian suite ships 16).  README.md, "Supported PostgreSQL
 * versions", says what ran where.
 *
 * Differences that need no code, checked against the headers:
 *	- GROUP BY: 16+ keeps a trimmed copy of the grouping clause in
 *	  root->processed_groupClause (keys proven redundant by equivalence
 *	  classes removed, e.g. y in "WHERE x = y GROUP BY x, y", and all keys
 *	  removed when each equals a constant).  gpuagg keeps grouping by
 *	  root->parse->groupClause on every version: a redundant key gives the
 *	  same groups, and an empty processed list would otherwise turn a
 *	  grouped query (no row on empty input) into a plain aggregate (one
 *	  row).  The only visible difference is that EXPLAIN's "Group Key" of
 *	  GpuHashAgg can list a redundant key that native 16+ plans omit.
 *	- CustomPath.custom_restrictinfo (17+) is for joins; makeNode() zeroes
 *	  it, which is right for an upper-relation path.
 *	- Grouping sets: when create_upper_paths_hook runs, the planner has
 *	  expanded parse->groupingSets into lists of sortgrouprefs
 *	  (preprocess_grouping_sets); hashagg/path.c expands them itself otherwise,
 *	  with expand_grouping_sets, the same in 15 .. 18.  What 18 adds is
 *	  below (GpuAggWithoutGroupingNulls).
 *	- MarkGUCPrefixReserved, InitMaterializedSRF, float_overflow_error,
 *	  create_projection_path, estimate_num_groups, makeFloat/floatVal and
 *	  makeInteger/intVal have the same signatures in 15 .. 18.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_COMPAT_H
#define GPUAGG_COMPAT_H

#if PG_VERSION_NUM < 150000
#error "gpuagg needs PostgreSQL 15 or later"
#endif

/*
 * Varlena macros (VARSIZE, VARDATA_ANY, SET_VARSIZE, ...): 16 moved them
 * out of postgres.h into varatt.h.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * EXPLAIN: 18 moved ExplainPropertyText/Integer/Float/List out of
 * commands/explain.h into commands/explain_format.h, and ExplainState into
 * commands/explain_state.h.
 */
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

/*
 * The comparisons an operator implements in index operator families: 18
 * renamed get_op_btree_interpretation (OpBtreeInterpretation.strategy, a
 * BT*StrategyNumber or ROWCOMPARE_NE for <>) to get_op_index_interpretation
 * (OpIndexInterpretation.cmptype, a CompareType).  Both number them alike:
 * 1 <, 2 <=, 3 =, 4 >=, 5 >, 6 <>.
 */
#include "utils/lsyscache.h"
#if PG_VERSION_NUM >= 180000
typedef OpIndexInterpretation GpuAggOpInterpretation;
#define GpuAggOpInterpretations(opno) get_op_index_interpretation(opno)
#define GpuAggOpComparison(interp) ((int) (interp)->cmptype)
#else
typedef OpBtreeInterpretation GpuAggOpInterpretation;
#define GpuAggOpInterpretations(opno) get_op_btree_interpretation(opno)
#define GpuAggOpComparison(interp) ((int) (interp)->strategy)
#endif

/*
 * EXPLAIN qualifies column names with their table when the plan reads more
 * than one range table entry.  18 adds an RTE_GROUP entry to every grouped
 * query and keeps the count without it in ExplainState.rtable_size; use it,
 * as PostgreSQL's own Agg does, or every "Group Key" would be qualified.
 */
static inline int
GpuAggExplainRtableSize(ExplainState *es)
{
#if PG_VERSION_NUM >= 180000
	return es->rtable_size;
#else
	return list_length(es->rtable);
#endif
}

/*
 * Grouping sets: 18 marks the grouping expressions of the output and of
 * HAVING as nulled by the grouping step (varnullingrels holding the index
 * of the query's RTE_GROUP entry, root->group_rtindex), since a set that
 * leaves a key out shows it as NULL.  The node's scan tuple keeps them so
 * marked, as setrefs.c matches the output against it exactly; the child,
 * which computes them from the input, must not have the mark.  Earlier
 * versions mark nothing: the relid is 0 and nothing is removed.
 */
#include "nodes/pathnodes.h"
#if PG_VERSION_NUM >= 160000
#include "rewrite/rewriteManip.h"
#endif

static inline int
GpuAggGroupingRelid(PlannerInfo *root)
{
#if PG_VERSION_NUM >= 180000
	return root->parse->hasGroupRTE ? root->group_rtindex : 0;
#else
	return 0;
#endif
}

static inline Node *
GpuAggWithoutGroupingNulls(Node *expr, int relid)
{
#if PG_VERSION_NUM >= 180000
	if (relid > 0)
		return remove_nulling_relids(expr, bms_make_singleton(relid), NULL);
#endif
	return expr;
}

/*
 * Outer joins: 16 marks a Var of an outer join's nullable side, above the
 * join, as nulled by it (varnullingrels holding the join's relid, one of
 * root->outer_join_rels).  An aggjoin (aggjoin/path.c) computes such
 * an expression below its join, in one side's own child, where the marks of
 * the outer joins inside that side (their relids are in `keep`, the side's
 * relids) stay and the others must go; with keep NULL every mark goes (what
 * is left says which side the expression is on).  Earlier versions mark
 * nothing.
 */
static inline Node *
GpuAggWithoutOuterJoinNulls(PlannerInfo *root, Node *expr, Relids keep)
{
#if PG_VERSION_NUM >= 160000
	return remove_nulling_relids(expr, bms_difference(root->outer_join_rels, keep), NULL);
#else
	return expr;
#endif
}

/*
 * Buffers: 16 renamed RelFileNode (Relation.rd_node) to RelFileLocator
 * (rd_locator); ReadRecentBuffer takes whichever the version has.
 */
#if PG_VERSION_NUM >= 160000
#define GpuAggRelFileLocator(rel) ((rel)->rd_locator)
#else
#define GpuAggRelFileLocator(rel) ((rel)->rd_node)
#endif

/*
 * The number of this process's PGPROC, which numbers the GPU service's
 * slots: 17 exports it as MyProcNumber; earlier versions keep it in
 * MyProc->pgprocno.
 */
#include "storage/proc.h"
#if PG_VERSION_NUM >= 170000
#define GpuAggMyProcNumber() ((int) MyProcNumber)
#else
#define GpuAggMyProcNumber() (MyProc != NULL ? MyProc->pgprocno : -1)
#endif

/*
 * Module magic: 18 can record the module's name and version, shown by
 * pg_get_loaded_modules().  Use as "GPUAGG_MODULE_MAGIC;" in gpuagg.c.
 */
#define GPUAGG_MODULE_VERSION "0.2"
#if PG_VERSION_NUM >= 180000
#define GPUAGG_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "gpuagg", .version = GPUAGG_MODULE_VERSION)
#else
#define GPUAGG_MODULE_MAGIC PG_MODULE_MAGIC
#endif

#endif							/* GPUAGG_COMPAT_H */
