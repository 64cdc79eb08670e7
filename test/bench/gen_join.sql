-- test/bench/gen_join.sql - the db-benchmark join tables (docs/benchmarks.md).
--
-- Three key sets, as db-benchmark's join-datagen.R builds them: for k = 1, 2, 3 with
-- n1 = N/1e6, n2 = N/1e3, n3 = N distinct left keys (at least 10), the keys 1 .. M
-- (M = n + n/10) are permuted and split into x (the first 0.9 n), l (the next 0.1 n: on
-- the left only) and r (the last 0.1 n: on the right only). The permutation is affine,
-- (a j + b) mod M with gcd(a, M) = 1 and a near 0.618 M, so neighbouring positions get
-- far-apart keys.
--
--   x      N rows:    id1, id2 sampled from x∪l of sets 1 and 2; id3 the x∪l keys of set 3
--                     (unique); id4, id5, id6 = 'id' || id1, id2, id3; v1 float8
--   small  n1 rows:   id1 the x∪r keys of set 1 (unique), id4, v2
--   medium n2 rows:   id1 sampled from x∪r of set 1, id2 the x∪r keys of set 2 (unique),
--                     id4, id5, v2
--   big    N rows:    id1, id2 sampled from x∪r; id3 the x∪r keys of set 3 (unique, in
--                     another order than x's), id4, id5, id6, v2
-- v1, v2: uniform [0, 100) rounded down to 6 decimals. About 90% of the left rows match.
--
-- Variables: schema, rows; part = create | x | small | medium | big; lo and hi (row
-- numbers, 0-based, inclusive) for x and big. Tables are UNLOGGED (see gen_groupby.sql).
SET client_min_messages = warning;
SET jit = off;
SET search_path TO :"schema";
SELECT :'part' = 'create' AS p_create, :'part' = 'x' AS p_x, :'part' = 'small' AS p_small,
	:'part' = 'medium' AS p_medium, :'part' = 'big' AS p_big \gset

\if :p_create
DROP TABLE IF EXISTS x, small, medium, big, gen_params;
-- n: left keys (x∪l), xn: keys in x, m: all keys; a, b: the key permutation of the set
CREATE TABLE gen_params AS
SELECT n1, n1 * 9 / 10 AS x1, n1 + (n1 - n1 * 9 / 10) AS m1,
	n2, n2 * 9 / 10 AS x2, n2 + (n2 - n2 * 9 / 10) AS m2,
	n3, n3 * 9 / 10 AS x3, n3 + (n3 - n3 * 9 / 10) AS m3
FROM (SELECT greatest(10, :rows::int8 / 1000000) AS n1, greatest(10, :rows::int8 / 1000) AS n2,
	greatest(10, :rows::int8) AS n3) n;
ALTER TABLE gen_params ADD a1 int8, ADD b1 int8, ADD a2 int8, ADD b2 int8, ADD a3 int8, ADD b3 int8,
	ADD at int8, ADD bt int8;
-- at, bt: the order in which big's rows take the set-3 keys (not x's order)
UPDATE gen_params SET a1 = bench.coprime(m1, 0.6180339887), b1 = m1 * 3 / 10,
	a2 = bench.coprime(m2, 0.6180339887), b2 = m2 * 3 / 10,
	a3 = bench.coprime(m3, 0.6180339887), b3 = m3 * 3 / 10,
	at = bench.coprime(n3, 0.7548776662), bt = n3 / 2;
CREATE UNLOGGED TABLE x (id1 int4, id2 int4, id3 int4, id4 text, id5 text, id6 text, v1 float8);
CREATE UNLOGGED TABLE small (id1 int4, id4 text, v2 float8);
CREATE UNLOGGED TABLE medium (id1 int4, id2 int4, id4 text, id5 text, v2 float8);
CREATE UNLOGGED TABLE big (id1 int4, id2 int4, id3 int4, id4 text, id5 text, id6 text, v2 float8);
\else
SELECT * FROM gen_params \gset
\endif

-- key of position j in set k: bench.perm(j, ak, bk, mk) + 1; position of the j-th x∪r key:
-- j below xk, else j + (nk - xk)

\if :p_x
INSERT INTO x
SELECT id1, id2, id3, 'id' || id1, 'id' || id2, 'id' || id3, v1
FROM (SELECT bench.perm(bench.rint(i, 501, :n1) - 1, :a1, :b1, :m1) + 1 AS id1,
		bench.perm(bench.rint(i, 502, :n2) - 1, :a2, :b2, :m2) + 1 AS id2,
		bench.perm(i, :a3, :b3, :m3) + 1 AS id3,
		bench.rvalue(i, 503) AS v1
	FROM (SELECT generate_series(:lo::int8, :hi::int8) AS i) g
	OFFSET 0) s;
\endif

\if :p_small
INSERT INTO small
SELECT id1, 'id' || id1, v2
FROM (SELECT bench.perm(CASE WHEN j < :x1 THEN j ELSE j + (:n1 - :x1) END, :a1, :b1, :m1) + 1 AS id1,
		bench.rvalue(j, 533) AS v2
	FROM (SELECT generate_series(0, :n1 - 1) AS j) g
	OFFSET 0) s;
\endif

\if :p_medium
INSERT INTO medium
SELECT id1, id2, 'id' || id1, 'id' || id2, v2
FROM (SELECT bench.perm(CASE WHEN r1 < :x1 THEN r1 ELSE r1 + (:n1 - :x1) END, :a1, :b1, :m1) + 1 AS id1,
		bench.perm(CASE WHEN j < :x2 THEN j ELSE j + (:n2 - :x2) END, :a2, :b2, :m2) + 1 AS id2,
		v2
	FROM (SELECT j, bench.rint(j, 521, :n1) - 1 AS r1, bench.rvalue(j, 523) AS v2
		FROM (SELECT generate_series(0, :n2 - 1) AS j) g
		OFFSET 0) r
	OFFSET 0) s;
\endif

\if :p_big
INSERT INTO big
SELECT id1, id2, id3, 'id' || id1, 'id' || id2, 'id' || id3, v2
FROM (SELECT bench.perm(CASE WHEN r1 < :x1 THEN r1 ELSE r1 + (:n1 - :x1) END, :a1, :b1, :m1) + 1 AS id1,
		bench.perm(CASE WHEN r2 < :x2 THEN r2 ELSE r2 + (:n2 - :x2) END, :a2, :b2, :m2) + 1 AS id2,
		bench.perm(CASE WHEN r3 < :x3 THEN r3 ELSE r3 + (:n3 - :x3) END, :a3, :b3, :m3) + 1 AS id3,
		v2
	FROM (SELECT bench.rint(i, 511, :n1) - 1 AS r1, bench.rint(i, 512, :n2) - 1 AS r2,
			bench.perm(i, :at, :bt, :n3) AS r3, bench.rvalue(i, 513) AS v2
		FROM (SELECT generate_series(:lo::int8, :hi::int8) AS i) g
		OFFSET 0) r
	OFFSET 0) s;
\endif
