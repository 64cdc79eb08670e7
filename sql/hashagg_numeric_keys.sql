--
-- hashagg_numeric_keys: a numeric(p, s) group key of at most 18 digits
-- travels as one integer, value * 10^s, and comes back spelt with its
-- column's scale; NaN is one group, NULL another; wider and unconstrained
-- numerics keep their dictionary
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

CREATE TABLE nk (id int, k int, a numeric(12, 2), z numeric(5, 0), w numeric(18, 0),
                 f numeric(18, 18), t numeric(3, 5), u numeric, b numeric(30, 4), v int);
INSERT INTO nk
SELECT g, g % 7,
       CASE WHEN g % 97 = 0 THEN NULL WHEN g % 89 = 0 THEN 'NaN'
            ELSE ((g % 41) - 20) / 2.0 END,          -- 1.5 stored as 1.50
       CASE WHEN g % 50 = 0 THEN NULL ELSE (g % 13) - 6 END,
       CASE g % 5 WHEN 0 THEN 999999999999999999 WHEN 1 THEN -999999999999999999
                  WHEN 2 THEN 0 WHEN 3 THEN NULL ELSE g % 3 END,
       CASE WHEN g % 6 = 0 THEN NULL ELSE ((g % 4) - 2) * 0.123456789012345678 END,
       ((g % 9) - 4) * 0.00011,
       CASE g % 4 WHEN 0 THEN 1.5 WHEN 1 THEN 1.50 WHEN 2 THEN 'NaN' ELSE NULL END,
       (g % 11) * 12345678901234.5678,
       g
FROM generate_series(1, 20000) g;
ANALYZE nk;

-- every numeric(p <= 18, s) key, alone and with others
SELECT gpuagg_check('SELECT a, count(*), sum(v) FROM nk GROUP BY a');
SELECT gpuagg_check('SELECT z, count(*), sum(v) FROM nk GROUP BY z');
SELECT gpuagg_check('SELECT w, count(*), sum(v) FROM nk GROUP BY w');
SELECT gpuagg_check('SELECT f, count(*), sum(v) FROM nk GROUP BY f');
SELECT gpuagg_check('SELECT t, count(*), sum(v) FROM nk GROUP BY t');
SELECT gpuagg_check('SELECT a, z, k, count(*), sum(v), min(a), max(z) FROM nk GROUP BY a, z, k');
-- wider and unconstrained numerics keep their dictionary: the first spelling
SELECT gpuagg_check('SELECT u, count(*) FROM nk GROUP BY u');
SELECT gpuagg_check('SELECT b, a, count(*) FROM nk GROUP BY b, a');
SELECT gpuagg_check('SELECT a::numeric(14, 3), count(*) FROM nk GROUP BY 1');
-- grouping sets, HAVING, and many groups over several batches
SELECT gpuagg_check('SELECT a, z, count(*) FROM nk GROUP BY GROUPING SETS ((a), (z), (a, z), ())');
SELECT gpuagg_check('SELECT a, sum(v) FROM nk GROUP BY a HAVING count(*) > 470');
SET gpuagg.batch_rows = 1000;
SELECT gpuagg_check('SELECT (v * 0.01)::numeric(10, 2) AS c, count(*) FROM nk GROUP BY 1');
SELECT gpuagg_check('SELECT a, w, count(*) FROM nk GROUP BY a, w');
RESET gpuagg.batch_rows;

-- the results, printed once: spelt with the column's scale, NaN and NULL
-- groups of their own
SELECT a, count(*) FROM nk WHERE a IN (1.5, -10, 0, 'NaN') OR a IS NULL
GROUP BY a ORDER BY a;
SELECT t, count(*) FROM nk GROUP BY t ORDER BY t;
SELECT w, count(*) FROM nk GROUP BY w ORDER BY w;

-- parallel workers pack the keys
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT gpuagg_check('SELECT a, z, count(*), sum(v) FROM nk GROUP BY a, z');
SELECT gpuagg_check('SELECT f, w, count(*) FROM nk GROUP BY f, w');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- a key of an aggjoin's build side (TPC-H Q10's c_acctbal) and of its probe side
CREATE TABLE nk_dim (k int, bal numeric(15, 2), name text);
INSERT INTO nk_dim
SELECT g, CASE WHEN g = 3 THEN NULL WHEN g = 4 THEN 'NaN' ELSE (g * 1000.5)::numeric(15, 2) END,
       'c' || g
FROM generate_series(0, 6) g;
ANALYZE nk_dim;
SELECT aggjoin_check('SELECT d.bal, d.name, count(*), sum(n.v) FROM nk n JOIN nk_dim d USING (k) GROUP BY d.bal, d.name');
SELECT aggjoin_check('SELECT n.a, d.bal, count(*) FROM nk n JOIN nk_dim d USING (k) GROUP BY n.a, d.bal');
SELECT aggjoin_check('SELECT d.bal, count(*) FROM nk n LEFT JOIN nk_dim d ON d.k = n.k + 3 GROUP BY d.bal');
SELECT d.bal, count(*) FROM nk n JOIN nk_dim d USING (k) GROUP BY d.bal ORDER BY d.bal;

-- through the GPU service
SET gpuagg.device_host = service;
SELECT gpuagg_check('SELECT a, z, f, count(*) FROM nk GROUP BY a, z, f');
RESET gpuagg.device_host;

DROP TABLE nk, nk_dim;
