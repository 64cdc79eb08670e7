--
-- hashagg_numeric: sum, avg, min, max over numeric, exact, at the
-- argument's scale; NaN and infinities as PostgreSQL treats them
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

CREATE TEMP TABLE money (k int, price numeric(15, 2), qty numeric(12, 0), rate numeric(5, 4),
                         big numeric(40, 10), tiny numeric(3, -2), free numeric);
INSERT INTO money
SELECT i % 7,
       CASE WHEN i % 41 = 0 THEN NULL ELSE ((i * 7919) % 1000000) / 100.0 - 5000 END,
       i % 13,
       ((i % 97) / 10000.0),
       ((i * 104729)::numeric * 1000000000000000000::numeric + (i % 9) / 7.0)::numeric(40, 10),
       (i * 123) % 90000,
       i / 3.0
FROM generate_series(1, 5000) i;
ANALYZE money;

EXPLAIN (COSTS OFF) SELECT k, sum(price), avg(price), min(price), max(price) FROM money GROUP BY k;
SELECT k, sum(price), avg(price), min(price), max(price), count(price) FROM money GROUP BY k ORDER BY k;
SELECT pg_typeof(sum(price)), pg_typeof(avg(price)), pg_typeof(min(price)) FROM money;
SELECT gpuagg_check('SELECT k, sum(price), avg(price), min(price), max(price) FROM money GROUP BY k');
SELECT gpuagg_check('SELECT k, sum(qty), avg(qty), min(qty), max(qty), sum(rate), avg(rate), min(rate), max(rate) FROM money GROUP BY k');
-- 40 digits: sums exact far beyond 2^64 (min/max of so many digits stay native)
SELECT gpuagg_check('SELECT k, sum(big), avg(big) FROM money GROUP BY k');
SELECT gpuagg_used('SELECT k, max(big) FROM money GROUP BY k') AS big_max;
SELECT gpuagg_check('SELECT k, sum(tiny), avg(tiny), min(tiny), max(tiny) FROM money GROUP BY k');
-- expressions of bounded numerics, integers and constants (TPC-H Q1's shape)
SELECT gpuagg_check('SELECT k, sum(price * (1 - rate)), sum(price * (1 - rate) * (1 + rate)), avg(qty * 2 + price), sum(-price), sum(k::numeric + 0.5), avg(k::int8 * rate) FROM money GROUP BY k');
SELECT k, sum(price * (1 - rate)) AS charge FROM money GROUP BY k ORDER BY k;
-- numeric without a type modifier keeps the native plan (its scale is unknown)
SELECT gpuagg_used('SELECT k, sum(free) FROM money GROUP BY k') AS unbounded_sum,
       gpuagg_used('SELECT k, sum(price / 3) FROM money GROUP BY k') AS division;

-- NaN and infinities
CREATE TEMP TABLE specials (k int, v numeric(10, 2), w numeric);
INSERT INTO specials VALUES (1, 1.50, 1), (1, 'NaN', 1), (1, 2, 1),
    (2, 3, 1), (2, 4.25, 1), (3, NULL, 1), (4, 'NaN', 1);
SELECT k, sum(v), avg(v), min(v), max(v), count(v) FROM specials GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, sum(v), avg(v), min(v), max(v) FROM specials GROUP BY k');
SELECT k, sum(w::numeric(10, 0) * 0 + v) FROM specials GROUP BY k ORDER BY k;
SELECT sum(v), avg(v), min(v), max(v) FROM specials WHERE v IS NULL;

-- parallel workers send the limbs like any column
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 512;
SELECT gpuagg_check('SELECT k, sum(price), avg(price * (1 - rate)), min(price), max(qty), sum(big) FROM money GROUP BY k');
