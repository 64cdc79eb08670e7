-- test/bench/gen_load.sql - table t of the load benchmark (test/bench/load.sh).
--
-- t has :rows rows and no NULLs; every column is drawn uniformly with replacement from a
-- hash of the row number (bench.rint, gen_common.sql), so chunks filled by concurrent
-- sessions give the same table as one session:
--   k int4 1 .. :groups (every group present once rows is well above groups)
--   v int4 1 .. 100;  f float8 uniform [0, 100) rounded down to 6 decimals
--
-- Variables: schema, rows, groups; part = create | t; for part t, lo and hi (row numbers,
-- 1-based, inclusive). The table is UNLOGGED, so several sessions can fill it at once.
SET client_min_messages = warning;
SET jit = off;
SET search_path TO :"schema";
SELECT :'part' = 'create' AS p_create, :'part' = 't' AS p_t \gset

\if :p_create
DROP TABLE IF EXISTS t;
CREATE UNLOGGED TABLE t (k int4, v int4, f float8);
\endif

\if :p_t
-- the series is a target-list SRF in a subquery, so that it streams
INSERT INTO t
SELECT bench.rint(i, 1, :groups), bench.rint(i, 2, 100), bench.rvalue(i, 3)
FROM (SELECT generate_series(:lo::int8, :hi::int8) AS i) g;
\endif
