--
-- hashagg_uuid_keys: uuid group keys, DISTINCT arguments and aggjoin keys
-- travel as their 16 bytes, whose equality is the type's, with
-- gpuagg.string_keys on; off, they keep their dictionary
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

CREATE TABLE uk (id int, k int, u uuid, w uuid, v int);
INSERT INTO uk
SELECT g, g % 5,
       CASE WHEN g % 37 = 0 THEN NULL
            ELSE ('00000000-0000-0000-0000-' || lpad(to_hex(g % 3001), 12, '0'))::uuid END,
       -- values that differ in one byte only, first and last
       CASE g % 4 WHEN 0 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid
                  WHEN 1 THEN '7fffffff-ffff-ffff-ffff-ffffffffffff'::uuid
                  WHEN 2 THEN 'ffffffff-ffff-ffff-ffff-fffffffffffe'::uuid
                  ELSE '00000000-0000-0000-0000-000000000000'::uuid END,
       g
FROM generate_series(1, 30000) g;
ANALYZE uk;

SELECT gpuagg_check('SELECT u, count(*), sum(v) FROM uk GROUP BY u');
SELECT gpuagg_check('SELECT w, k, count(*), sum(v) FROM uk GROUP BY w, k');
SELECT gpuagg_check('SELECT k, count(DISTINCT u), count(DISTINCT w) FROM uk GROUP BY k');
SELECT gpuagg_check('SELECT u, w, count(*) FROM uk GROUP BY GROUPING SETS ((u), (w), ())');
SET gpuagg.batch_rows = 1000;
SELECT gpuagg_check('SELECT u, min(v), max(v) FROM uk GROUP BY u');
RESET gpuagg.batch_rows;
SELECT w, count(*) FROM uk GROUP BY w ORDER BY w;
SELECT u IS NULL AS u_null, count(*) FROM (SELECT u FROM uk GROUP BY u) s GROUP BY 1 ORDER BY 1;

-- parallel workers pack the bytes
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT gpuagg_check('SELECT u, w, count(*), sum(v) FROM uk GROUP BY u, w');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- an aggjoin on a uuid key, grouped by uuids of both sides
CREATE TABLE uk_dim (u uuid, tag uuid, n int);
INSERT INTO uk_dim
SELECT ('00000000-0000-0000-0000-' || lpad(to_hex(g), 12, '0'))::uuid,
       CASE WHEN g % 3 = 0 THEN NULL ELSE ('10000000-0000-0000-0000-' || lpad(to_hex(g % 7), 12, '0'))::uuid END,
       g
FROM generate_series(0, 2000) g;
ANALYZE uk_dim;
SELECT aggjoin_check('SELECT d.tag, count(*), sum(d.n) FROM uk JOIN uk_dim d USING (u) GROUP BY d.tag');
SELECT aggjoin_check('SELECT uk.w, d.tag, count(*) FROM uk LEFT JOIN uk_dim d USING (u) GROUP BY uk.w, d.tag');
SELECT aggjoin_check('SELECT uk.u, count(*) FROM uk JOIN uk_dim d USING (u) GROUP BY uk.u');

-- off: dictionaries, the same answers
SET gpuagg.string_keys = off;
SELECT gpuagg_check('SELECT u, w, count(*) FROM uk GROUP BY u, w');
RESET gpuagg.string_keys;

-- through the GPU service
SET gpuagg.device_host = service;
SELECT gpuagg_check('SELECT u, k, count(*), count(DISTINCT w) FROM uk GROUP BY u, k');
SELECT aggjoin_check('SELECT d.tag, uk.w, count(*) FROM uk JOIN uk_dim d USING (u) GROUP BY d.tag, uk.w');
RESET gpuagg.device_host;

DROP TABLE uk, uk_dim;
