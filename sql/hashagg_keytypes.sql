--
-- hashagg_keytypes: group keys of float4, numeric, bpchar, uuid, interval,
-- time and timestamptz; bool_and, bool_or, every; min/max of time and
-- timestamptz
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

CREATE TEMP TABLE kt AS
SELECT i,
       CASE WHEN i % 50 = 0 THEN NULL ELSE ((i % 9) - 4) / 2.0 END::float4 AS f4,
       CASE WHEN i % 31 = 0 THEN NULL
            WHEN i % 3 = 0 THEN ((i % 5) / 2.0)::numeric(10, 3)
            ELSE ((i % 5) / 2.0)::numeric END AS num,
       (CASE WHEN i % 2 = 0 THEN 'ab' ELSE 'ab  ' END || (i % 4))::char(6) AS fixed,
       CASE WHEN i % 4 = 0 THEN rpad('x', i % 3) ELSE 'y' END::bpchar AS padded,
       ('00000000-0000-0000-0000-' || lpad((i % 13)::text, 12, '0'))::uuid AS id,
       CASE i % 4 WHEN 0 THEN interval '1 month' WHEN 1 THEN interval '30 days'
                  WHEN 2 THEN interval '720 hours' ELSE interval '1 day' END AS span,
       time '00:00' + (i % 24) * interval '1 hour' AS t,
       timestamptz '2024-03-10 00:00+00' + (i % 48) * interval '1 hour' AS tz,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 > 0 END AS b,
       i % 5 AS k
FROM generate_series(1, 5000) i;
ANALYZE kt;

EXPLAIN (COSTS OFF) SELECT num, count(*) FROM kt GROUP BY num;

-- float4: -0 groups with 0, NaN with NaN
SELECT f4, count(*) FROM kt GROUP BY f4 ORDER BY f4;
SELECT gpuagg_check('SELECT f4, count(*), sum(i) FROM kt GROUP BY f4');
SELECT k, count(*) FROM (VALUES ('-0'::float4), (0), ('NaN'), ('NaN'::float4 * 0)) v(k) GROUP BY k ORDER BY k;

-- numeric: 1.0 and 1.00 are one group, shown as its first value
SELECT num, count(*) FROM kt GROUP BY num ORDER BY num;
SELECT gpuagg_check('SELECT num, count(*), sum(i) FROM kt GROUP BY num');
SELECT k, count(*) FROM (VALUES (1, 1.50::numeric), (2, 1.5), (3, 'NaN'), (4, 'NaN'), (5, 'Infinity')) v(i, k)
GROUP BY k ORDER BY k;

-- bpchar: trailing blanks do not count
SELECT fixed, count(*) FROM kt GROUP BY fixed ORDER BY fixed;
SELECT padded, length(padded), count(*) FROM kt GROUP BY padded ORDER BY padded;
SELECT gpuagg_check('SELECT fixed, padded, count(*) FROM kt GROUP BY fixed, padded');

-- uuid, interval ('1 month' = '30 days' = '720 hours'), time, timestamptz
SELECT id, count(*) FROM kt GROUP BY id ORDER BY id LIMIT 3;
SELECT span, count(*) FROM kt GROUP BY span ORDER BY span;
SELECT gpuagg_check('SELECT id, span, count(*) FROM kt GROUP BY id, span');
SELECT gpuagg_check('SELECT t, count(*), min(tz), max(tz) FROM kt GROUP BY t');
SELECT gpuagg_check('SELECT tz, count(*), min(t), max(t) FROM kt GROUP BY tz');
SELECT k, min(t), max(t), min(tz), max(tz) FROM kt GROUP BY k ORDER BY k;

-- bool_and, bool_or, every: NULL inputs skipped, NULL for no input
SELECT k, bool_and(b), bool_or(b), every(b), count(b) FROM kt GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, bool_and(b), bool_or(b), every(b) FROM kt GROUP BY k');
SELECT gpuagg_check('SELECT num, bool_and(b) FILTER (WHERE i > 100), bool_or(i % 2 = 0) FROM kt GROUP BY num');
SELECT bool_and(b), bool_or(b) FROM kt WHERE b IS NULL;
SELECT pg_typeof(bool_and(b)), pg_typeof(min(t)), pg_typeof(max(tz)) FROM kt;

-- the same keys through parallel workers (dictionaries mapped by the leader)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 256;
SELECT gpuagg_used('SELECT num, count(*) FROM kt GROUP BY num');
-- (with several spellings of one key in a group, which row comes first is
-- up to the workers, natively too: compare keys spelt one way)
SELECT gpuagg_check('SELECT num::numeric(12, 3), fixed, id, f4 + 0, count(*), bool_or(b) FROM kt GROUP BY 1, 2, 3, 4');
SELECT gpuagg_check('SELECT justify_interval(span), padded, count(*) FROM kt GROUP BY 1, 2');
