--
-- aggjoin_string_pieces: an aggjoin whose joined rows carry more bytes of
-- text group keys than a batch's string columns hold (16 MB here): a long
-- key of a build side repeated by every probe row that matches it, so that
-- the device cuts the joined rows into pieces by their keys' bytes as well
-- as by their rows; outer joins, a join filter and equal hashes included
--
SET gpuagg.force = on;
SET gpuagg.batch_rows = 1000;

-- the build side: three keys of about 250 kB each, equal but for their last
-- byte, short keys, a NULL; keys 10 and 11 of the probe side find nothing
CREATE TABLE sp_dim (k int, t text, w int);
ALTER TABLE sp_dim ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO sp_dim
SELECT g, CASE WHEN g < 3 THEN repeat('long', 62500) || g
               WHEN g = 9 THEN NULL
               ELSE 'short-' || g END, g * 50
FROM generate_series(0, 9) g;
-- the probe side: 60 rows for each build key, some with keys of 200 kB
CREATE TABLE sp_fact (id int, k int, t text, n int);
ALTER TABLE sp_fact ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO sp_fact
SELECT g, g % 12,
       CASE WHEN g % 100 = 0 THEN repeat('p', 200000) || (g % 3)
            WHEN g % 7 = 0 THEN NULL
            ELSE 'f' || (g % 5) END,
       g
FROM generate_series(1, 720) g;
ANALYZE sp_dim, sp_fact;

-- about 45 MB of the build side's keys in the joined rows
SELECT aggjoin_check('SELECT d.t, count(*), sum(f.n) FROM sp_fact f JOIN sp_dim d USING (k) GROUP BY d.t');
SELECT aggjoin_check('SELECT d.t, f.t, count(*), sum(f.n), sum(d.w) FROM sp_fact f JOIN sp_dim d USING (k) GROUP BY d.t, f.t');
SELECT aggjoin_check('SELECT f.t, d.t, count(*) FROM sp_fact f LEFT JOIN sp_dim d USING (k) GROUP BY f.t, d.t');
SELECT aggjoin_check('SELECT d.t, count(*), count(f.n) FROM sp_fact f RIGHT JOIN sp_dim d ON d.k = f.k AND f.n > 600 GROUP BY d.t');
-- a join filter drops some of each piece's rows, whose keys are compacted
SELECT aggjoin_check('SELECT d.t, f.t, count(*), sum(f.n) FROM sp_fact f JOIN sp_dim d ON d.k = f.k AND f.n > d.w GROUP BY d.t, f.t');
-- equal hashes: only the bytes keep the long keys apart
SET gpuagg.debug_hash_bits = 1;
SELECT aggjoin_check('SELECT d.t, f.t, count(*), sum(f.n) FROM sp_fact f JOIN sp_dim d USING (k) GROUP BY d.t, f.t');
SELECT aggjoin_check('SELECT d.t, f.t, count(*), sum(f.n) FROM sp_fact f JOIN sp_dim d ON d.k = f.k AND f.n > d.w GROUP BY d.t, f.t');
RESET gpuagg.debug_hash_bits;

-- the groups, printed once: the long keys apart, NULLs one group
SELECT length(d.t) AS len, right(d.t, 1) AS last, count(*), sum(f.n)
FROM sp_fact f JOIN sp_dim d USING (k) GROUP BY d.t ORDER BY 1, 2;
SELECT length(f.t) AS len, right(f.t, 1) AS last, d.t IS NULL AS d_null, count(*)
FROM sp_fact f LEFT JOIN sp_dim d USING (k)
WHERE length(f.t) > 1000 OR f.t IS NULL GROUP BY f.t, d.t IS NULL ORDER BY 1, 2, 3;

RESET gpuagg.batch_rows;
RESET gpuagg.force;
DROP TABLE sp_fact, sp_dim;
