--
-- cancel: statement_timeout and cancel stop GpuHashAgg, nothing leaks
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;
SET gpuagg.batch_rows = 65536;
CREATE TEMP TABLE big AS SELECT i % 1000 AS k, i AS v FROM generate_series(1, 2000000) i;
SET statement_timeout = '100ms';
-- the cross join makes the input far too long to finish in time
SELECT a.k, count(*), sum(b.v) FROM big a, big b WHERE b.v < 50 GROUP BY a.k;
RESET statement_timeout;
-- and the session is fine afterwards, device included
SELECT count(*), sum(v) FROM big;
SELECT gpuagg_check('SELECT k, count(*), sum(v) FROM big GROUP BY k');
