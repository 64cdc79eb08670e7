--
-- hashagg_numeric_device: numeric +, -, * inside sum, avg, min and max
-- computed by the device from the operands (gpuagg.numeric_on_device), with
-- the same answers as PostgreSQL: scales, NaN, NULL, FILTER, big results
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

CREATE TEMP TABLE li (k int, flag char(1), qty numeric(15, 2), price numeric(15, 2),
                      disc numeric(15, 2), tax numeric(15, 2), n2 int2, n4 int4, n8 int8,
                      huge numeric(18, 0), neg numeric(6, -2), wide numeric(20, 2));
INSERT INTO li
SELECT i % 5, chr(65 + i % 3),
       CASE WHEN i % 37 = 0 THEN NULL ELSE (i % 50) + 1 END,
       ((i * 7919) % 10000000) / 100.0 - 20000,
       (i % 11) / 100.0,
       CASE WHEN i % 53 = 0 THEN NULL ELSE (i % 9) / 100.0 END,
       (i % 300 - 150)::int2, i * 17 - 40000, i::int8 * 1000000007,
       CASE WHEN i % 2 = 0 THEN 999999999999999999 ELSE -999999999999999998 + i END,
       (i * 300) % 100000000,
       i * 1000000000.25
FROM generate_series(1, 4000) i;
ANALYZE li;

-- TPC-H Q1's arguments: the child sends the operands, the device multiplies
EXPLAIN (COSTS OFF)
SELECT flag, sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + tax)), avg(qty), count(*)
FROM li GROUP BY flag;
SELECT gpuagg_check('SELECT flag, sum(qty), sum(price), sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + tax)), avg(qty), avg(price), avg(disc), count(*) FROM li GROUP BY flag');
SELECT flag, sum(price * (1 - disc) * (1 + tax)) AS charge, avg(price * (1 - disc)) AS disc_price
FROM li GROUP BY flag ORDER BY flag;
SELECT pg_typeof(sum(price * disc)), pg_typeof(avg(price * disc)), pg_typeof(min(price * disc)) FROM li;

-- every operation and operand kind: integer casts, constants of any scale,
-- unary minus, nested sums and differences, min and max
SELECT gpuagg_check('SELECT k, sum(n2::numeric * price), sum(n4 * disc + 0.125), avg(n8 * 1.5 - qty), sum(-(price - tax)), min(disc - tax), max(-price * 2.50), sum(+price * (disc - tax) * (0.5 - disc)) FROM li GROUP BY k');
SELECT gpuagg_check('SELECT sum(price * disc), avg(price + qty * 3), min(qty - tax), max(tax - 1) FROM li');
-- shared arguments: sum and avg of one expression, and a plain column beside it
SELECT gpuagg_check('SELECT k, sum(price * disc), avg(price * disc), sum(price), max(price * 3) FROM li GROUP BY k');
-- results of up to 50 digits travel as limbs: 18-digit operands multiplied
SELECT gpuagg_check('SELECT k, sum(huge * huge), avg(huge * n8), sum(huge * huge * 1000000) FROM li GROUP BY k');
SELECT k, sum(huge * huge) FROM li GROUP BY k ORDER BY k;
-- negative sums of more than 18 digits (through the 512-bit result path)
SELECT gpuagg_check('SELECT k, sum(-(huge * huge)), sum(huge * n8 * -3), avg(-(huge * huge)) FROM li GROUP BY k');
-- a negative scale: multiples of 100
SELECT gpuagg_check('SELECT k, sum(neg * disc), min(neg - 1) FROM li GROUP BY k');
-- FILTER: rows that do not pass never reach the sum
SELECT gpuagg_check('SELECT k, sum(price * disc) FILTER (WHERE qty > 10), avg(price - tax) FILTER (WHERE flag = ''B'') FROM li GROUP BY k');

-- NaN in an operand makes the row NaN; NULL makes it null; an all-null group is NULL
CREATE TEMP TABLE odd (k int, a numeric(10, 2), b numeric(10, 2), i int4);
INSERT INTO odd VALUES (1, 1.50, 2, 1), (1, 'NaN', 2, 1), (1, 2, 3, 1),
    (2, 3, NULL, 1), (2, 4.25, 2, NULL), (2, 1, 1, 1),
    (3, NULL, 1, 1), (4, 'NaN', 'NaN', 2), (5, 2, 'NaN', 0);
SELECT k, sum(a * b), avg(a - b), min(a * 2), max(a + b), sum(a * i), sum(a * b) FILTER (WHERE k > 2)
FROM odd GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, sum(a * b), avg(a - b), min(a * 2), max(a + b), sum(a * i), sum(a * b) FILTER (WHERE k > 2) FROM odd GROUP BY k');
SELECT gpuagg_check('SELECT sum(a * b), avg(a * i), min(b - a), max(a + 0.5) FROM odd WHERE k = 3');
-- min and max keep to 18 digits: a product of two numeric(15, 2) is native
SELECT gpuagg_used('SELECT k, min(price * disc) FROM li GROUP BY k') AS min_of_thirty_digits;

-- what stays on the host: operands of more than 18 digits, results of more
-- than 50 digits (then the native plan), division, variance
EXPLAIN (COSTS OFF) SELECT k, sum(wide * 2) FROM li GROUP BY k;
SELECT gpuagg_check('SELECT k, sum(wide * 2), sum(wide - price) FROM li GROUP BY k');
SELECT gpuagg_used('SELECT k, sum(huge * huge * huge) FROM li GROUP BY k') AS fifty_four_digits;
SELECT gpuagg_check('SELECT k, var_samp(price * disc), stddev(price - disc) FROM li GROUP BY k');

-- the setting off: the host computes the arguments, with the same answers
SET gpuagg.numeric_on_device = off;
EXPLAIN (COSTS OFF) SELECT flag, sum(price * (1 - disc)) FROM li GROUP BY flag;
SELECT gpuagg_check('SELECT flag, sum(price * (1 - disc) * (1 + tax)), min(price * 2) FROM li GROUP BY flag');
RESET gpuagg.numeric_on_device;

-- parallel workers send only the operands; small batches
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 256;
SELECT gpuagg_check('SELECT flag, sum(price * (1 - disc) * (1 + tax)), avg(n4 * disc), max(qty * 2), sum(huge * huge) FROM li GROUP BY flag');
SELECT gpuagg_check('SELECT k, sum(a * b), min(a - b) FROM odd GROUP BY k');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET gpuagg.batch_rows;

-- a prepared statement's generic plan
PREPARE q(int) AS SELECT flag, sum(price * $1 + disc), avg(qty - $1) FROM li GROUP BY flag ORDER BY flag;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE q(2);
EXECUTE q(2);
EXECUTE q(-3);
RESET plan_cache_mode;
DEALLOCATE q;
SET gpuagg.enabled = off;
SELECT flag, sum(price * -3 + disc), avg(qty - -3) FROM li GROUP BY flag ORDER BY flag;
RESET gpuagg.enabled;
