-- test/bench/gen_tpch.sql - TPC-H-shaped tables at scale factor :sf (docs/benchmarks.md).
--
-- The schema and column types of the TPC-H specification (2.4: identifiers, numeric(15,2)
-- prices, dates, char(1) flags, fixed and variable text), and its value distributions as
-- dbgen draws them (4.2.3), approximated where noted:
--   SF * 10,000 suppliers, 150,000 customers, 200,000 parts (4 partsupp rows each: the
--   spec's supplier formula), 1,500,000 orders with 1 .. 7 lineitems (about 6,000,000);
--   order keys sparse (8 of every 32); only customers whose key is not a multiple of 3
--   place orders; o_orderdate uniform in 1992-01-01 .. 1998-08-02; ship, commit and
--   receipt dates, return flags and line statuses derived from it and 1995-06-17 as the
--   spec says; l_extendedprice = l_quantity * p_retailprice with the spec's retail price
--   formula; o_totalprice and o_orderstatus computed from the order's lineitems; names,
--   types, containers, segments, priorities, ship modes and instructions from the spec's
--   lists; p_name five of the 92 colour words (drawn with replacement: approximated);
--   comments cut from dbgen's grammar words drawn independently (approximated: not its
--   sentence grammar), at the spec's lengths; addresses from md5 digits (approximated).
-- Values are hashes of the row number and a per-column salt (see gen_common.sql), so
-- the tables do not depend on how many sessions fill them.
--
-- Variables: schema, sf; part = create | region | nation | supplier | customer | part |
-- partsupp | orders | lineitem | pk | fk; lo and hi (0-based, inclusive) for supplier,
-- customer, part, partsupp (part numbers), orders and lineitem (order numbers); for pk,
-- table. Tables are UNLOGGED (see gen_groupby.sql); primary keys on all but lineitem,
-- and the specification's foreign keys (part fk, after every primary key).
SET client_min_messages = warning;
SET jit = off;
SET search_path TO :"schema";
SELECT :'part' = 'create' AS p_create, :'part' = 'region' AS p_region,
	:'part' = 'nation' AS p_nation, :'part' = 'supplier' AS p_supplier,
	:'part' = 'customer' AS p_customer, :'part' = 'part' AS p_part,
	:'part' = 'partsupp' AS p_partsupp, :'part' = 'orders' AS p_orders,
	:'part' = 'lineitem' AS p_lineitem, :'part' = 'pk' AS p_pk,
	:'part' = 'fk' AS p_fk \gset
-- p_name's 92 colour words (spec 4.2.3)
\set colours '{almond,antique,aquamarine,azure,beige,bisque,black,blanched,blue,blush,brown,burlywood,burnished,chartreuse,chiffon,chocolate,coral,cornflower,cornsilk,cream,cyan,dark,deep,dim,dodger,drab,firebrick,floral,forest,frosted,gainsboro,ghost,goldenrod,green,grey,honeydew,hot,indian,ivory,khaki,lace,lavender,lawn,lemon,light,lime,linen,magenta,maroon,medium,metallic,midnight,mint,misty,moccasin,navajo,navy,olive,orange,orchid,pale,papaya,peach,peru,pink,plum,powder,puff,purple,red,rose,rosy,royal,saddle,salmon,sandy,seashell,sienna,sky,slate,smoke,snow,spring,steel,tan,thistle,tomato,turquoise,violet,wheat,white,yellow}'

\if :p_create
DROP TABLE IF EXISTS lineitem, orders, partsupp, part, customer, supplier, nation, region,
	gen_params;
-- s, c, p, o: suppliers, customers, parts, orders; clerks
CREATE TABLE gen_params AS
SELECT greatest(10, round(10000 * :sf::numeric))::int8 AS s,
	greatest(30, round(150000 * :sf::numeric))::int8 AS c,
	greatest(40, round(200000 * :sf::numeric))::int8 AS p,
	greatest(300, round(1500000 * :sf::numeric))::int8 AS o,
	greatest(1, round(1000 * :sf::numeric))::int8 AS clerks;

CREATE UNLOGGED TABLE region (r_regionkey int4 NOT NULL, r_name char(25) NOT NULL,
	r_comment varchar(152));
CREATE UNLOGGED TABLE nation (n_nationkey int4 NOT NULL, n_name char(25) NOT NULL,
	n_regionkey int4 NOT NULL, n_comment varchar(152));
CREATE UNLOGGED TABLE supplier (s_suppkey int4 NOT NULL, s_name char(25) NOT NULL,
	s_address varchar(40) NOT NULL, s_nationkey int4 NOT NULL, s_phone char(15) NOT NULL,
	s_acctbal numeric(15,2) NOT NULL, s_comment varchar(101) NOT NULL);
CREATE UNLOGGED TABLE customer (c_custkey int4 NOT NULL, c_name varchar(25) NOT NULL,
	c_address varchar(40) NOT NULL, c_nationkey int4 NOT NULL, c_phone char(15) NOT NULL,
	c_acctbal numeric(15,2) NOT NULL, c_mktsegment char(10) NOT NULL,
	c_comment varchar(117) NOT NULL);
CREATE UNLOGGED TABLE part (p_partkey int4 NOT NULL, p_name varchar(55) NOT NULL,
	p_mfgr char(25) NOT NULL, p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL,
	p_size int4 NOT NULL, p_container char(10) NOT NULL, p_retailprice numeric(15,2) NOT NULL,
	p_comment varchar(23) NOT NULL);
CREATE UNLOGGED TABLE partsupp (ps_partkey int4 NOT NULL, ps_suppkey int4 NOT NULL,
	ps_availqty int4 NOT NULL, ps_supplycost numeric(15,2) NOT NULL,
	ps_comment varchar(199) NOT NULL);
CREATE UNLOGGED TABLE orders (o_orderkey int8 NOT NULL, o_custkey int4 NOT NULL,
	o_orderstatus char(1) NOT NULL, o_totalprice numeric(15,2) NOT NULL,
	o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL, o_clerk char(15) NOT NULL,
	o_shippriority int4 NOT NULL, o_comment varchar(79) NOT NULL);
CREATE UNLOGGED TABLE lineitem (l_orderkey int8 NOT NULL, l_partkey int4 NOT NULL,
	l_suppkey int4 NOT NULL, l_linenumber int4 NOT NULL, l_quantity numeric(15,2) NOT NULL,
	l_extendedprice numeric(15,2) NOT NULL, l_discount numeric(15,2) NOT NULL,
	l_tax numeric(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL,
	l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL,
	l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL,
	l_comment varchar(44) NOT NULL);

-- Per-order and per-line values, shared by the lineitem and orders generators (o: order
-- number from 0; li = 8 o + line number: one hash input per line).
CREATE OR REPLACE FUNCTION bench.tpch_nlines(o int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT bench.rint(o, 301, 7)';
CREATE OR REPLACE FUNCTION bench.tpch_orderkey(o int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT o / 8 * 32 + o % 8 + 1';
-- 1992-01-01 .. 1998-08-02 (ENDDATE - 151 days)
CREATE OR REPLACE FUNCTION bench.tpch_orderdate(o int8) RETURNS date
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $f$SELECT date '1992-01-01' + (bench.rint(o, 302, 2406) - 1)::int4$f$;
-- a customer whose key is not a multiple of 3: the r-th such key, r uniform
CREATE OR REPLACE FUNCTION bench.tpch_custkey(o int8, nc int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT (bench.rint(o, 303, nc - nc / 3) - 1) / 2 * 3 + (bench.rint(o, 303, nc - nc / 3) - 1) % 2 + 1';
CREATE OR REPLACE FUNCTION bench.tpch_partkey(li int8, np int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT bench.rint(li, 311, np)';
-- one of the part's four suppliers (spec 4.2.3: (p + i * (S/4 + (p-1)/S)) mod S + 1)
CREATE OR REPLACE FUNCTION bench.tpch_suppkey(li int8, np int8, ns int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $f$SELECT (bench.tpch_partkey(li, np) + (bench.rint(li, 312, 4) - 1) *
		(ns / 4 + (bench.tpch_partkey(li, np) - 1) / ns)) % ns + 1$f$;
-- the spec's retail price: (90000 + ((p / 10) mod 20001) + 100 (p mod 1000)) / 100
CREATE OR REPLACE FUNCTION bench.tpch_retailprice(p int8) RETURNS numeric
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT ((90000 + (p / 10) % 20001 + 100 * (p % 1000)) / 100.0)::numeric(15,2)';
CREATE OR REPLACE FUNCTION bench.tpch_quantity(li int8) RETURNS numeric
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT bench.rint(li, 313, 50)::numeric(15,2)';
CREATE OR REPLACE FUNCTION bench.tpch_extendedprice(li int8, np int8) RETURNS numeric
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT (bench.rint(li, 313, 50) * bench.tpch_retailprice(bench.tpch_partkey(li, np)))::numeric(15,2)';
CREATE OR REPLACE FUNCTION bench.tpch_discount(li int8) RETURNS numeric
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT ((bench.rint(li, 314, 11) - 1) / 100.0)::numeric(15,2)';
CREATE OR REPLACE FUNCTION bench.tpch_tax(li int8) RETURNS numeric
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT ((bench.rint(li, 315, 9) - 1) / 100.0)::numeric(15,2)';
CREATE OR REPLACE FUNCTION bench.tpch_shipdate(o int8, li int8) RETURNS date
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT bench.tpch_orderdate(o) + bench.rint(li, 316, 121)::int4';
\else
SELECT * FROM gen_params \gset
\endif

\if :p_region
INSERT INTO region
SELECT k - 1, name, bench.comment(k, 900, 31, 115)
FROM unnest('{AFRICA,AMERICA,ASIA,EUROPE,MIDDLE EAST}'::text[]) WITH ORDINALITY AS r(name, k);
\endif

\if :p_nation
INSERT INTO nation
SELECT k - 1, name, region, bench.comment(k, 910, 31, 114)
FROM unnest('{ALGERIA,ARGENTINA,BRAZIL,CANADA,EGYPT,ETHIOPIA,FRANCE,GERMANY,INDIA,INDONESIA,IRAN,IRAQ,JAPAN,JORDAN,KENYA,MOROCCO,MOZAMBIQUE,PERU,CHINA,ROMANIA,SAUDI ARABIA,VIETNAM,RUSSIA,UNITED KINGDOM,UNITED STATES}'::text[],
	'{0,1,1,1,4,0,3,3,2,2,4,4,2,4,0,0,0,1,2,3,4,2,3,3,1}'::int4[]) WITH ORDINALITY AS n(name, region, k);
\endif

\if :p_supplier
INSERT INTO supplier
SELECT k, 'Supplier#' || lpad(k::text, 9, '0'),
	left(md5(k::text || 's') || md5(k::text || 't'), bench.rrange(k, 401, 10, 40)::int4),
	nk,
	(nk + 10)::text || '-' || bench.rrange(k, 403, 100, 999)::text || '-' ||
		bench.rrange(k, 404, 100, 999)::text || '-' || bench.rrange(k, 405, 1000, 9999)::text,
	bench.rrange(k, 406, -99999, 999999) / 100.0,
	bench.comment(k, 410, 25, 100)
FROM (SELECT k, bench.rint(k, 402, 25) - 1 AS nk
	FROM (SELECT generate_series(:lo::int8 + 1, :hi::int8 + 1) AS k) g
	OFFSET 0) s;
\endif

\if :p_customer
INSERT INTO customer
SELECT k, 'Customer#' || lpad(k::text, 9, '0'),
	left(md5(k::text || 'c') || md5(k::text || 'd'), bench.rrange(k, 501, 10, 40)::int4),
	nk,
	(nk + 10)::text || '-' || bench.rrange(k, 503, 100, 999)::text || '-' ||
		bench.rrange(k, 504, 100, 999)::text || '-' || bench.rrange(k, 505, 1000, 9999)::text,
	bench.rrange(k, 506, -99999, 999999) / 100.0,
	bench.pick(k, 507, '{AUTOMOBILE,BUILDING,FURNITURE,MACHINERY,HOUSEHOLD}'),
	bench.comment(k, 510, 29, 116)
FROM (SELECT k, bench.rint(k, 502, 25) - 1 AS nk
	FROM (SELECT generate_series(:lo::int8 + 1, :hi::int8 + 1) AS k) g
	OFFSET 0) s;
\endif

\if :p_part
INSERT INTO part
SELECT k,
	bench.pick(k, 601, :'colours') || ' ' || bench.pick(k, 602, :'colours') || ' ' ||
		bench.pick(k, 603, :'colours') || ' ' || bench.pick(k, 604, :'colours') || ' ' ||
		bench.pick(k, 605, :'colours'),
	'Manufacturer#' || m, 'Brand#' || m || bench.rint(k, 607, 5),
	bench.pick(k, 608, '{STANDARD,SMALL,MEDIUM,LARGE,ECONOMY,PROMO}') || ' ' ||
		bench.pick(k, 609, '{ANODIZED,BURNISHED,PLATED,POLISHED,BRUSHED}') || ' ' ||
		bench.pick(k, 610, '{TIN,NICKEL,BRASS,STEEL,COPPER}'),
	bench.rint(k, 611, 50),
	bench.pick(k, 612, '{SM,LG,MED,JUMBO,WRAP}') || ' ' ||
		bench.pick(k, 613, '{CASE,BOX,BAG,JAR,PKG,PACK,CAN,DRUM}'),
	bench.tpch_retailprice(k),
	bench.comment(k, 620, 5, 22)
FROM (SELECT k, bench.rint(k, 606, 5) AS m
	FROM (SELECT generate_series(:lo::int8 + 1, :hi::int8 + 1) AS k) g
	OFFSET 0) s;
\endif

\if :p_partsupp
INSERT INTO partsupp
SELECT k, (k + i * (:s / 4 + (k - 1) / :s)) % :s + 1,
	bench.rint(k * 4 + i, 701, 9999),
	bench.rrange(k * 4 + i, 702, 100, 100000) / 100.0,
	bench.comment(k * 4 + i, 710, 49, 198)
FROM (SELECT generate_series(:lo::int8 + 1, :hi::int8 + 1) AS k) g,
	(VALUES (0), (1), (2), (3)) AS v(i);
\endif

\if :p_orders
-- status and total price from the order's lines, recomputed from the same functions
INSERT INTO orders
SELECT bench.tpch_orderkey(o),
	bench.tpch_custkey(o, :c),
	CASE WHEN t.nf = t.n THEN 'F' WHEN t.nf = 0 THEN 'O' ELSE 'P' END,
	t.total,
	bench.tpch_orderdate(o),
	bench.pick(o, 304, '{1-URGENT,2-HIGH,3-MEDIUM,4-NOT SPECIFIED,5-LOW}'),
	'Clerk#' || lpad(bench.rint(o, 305, :clerks)::text, 9, '0'),
	0,
	bench.comment(o, 330, 19, 78)
FROM (SELECT generate_series(:lo::int8, :hi::int8) AS o) g,
	LATERAL (SELECT count(*) AS n,
			count(*) FILTER (WHERE bench.tpch_shipdate(g.o, g.o * 8 + l) <= date '1995-06-17') AS nf,
			round(sum(bench.tpch_extendedprice(g.o * 8 + l, :p) * (1 + bench.tpch_tax(g.o * 8 + l)) *
				(1 - bench.tpch_discount(g.o * 8 + l))), 2) AS total
		FROM generate_series(1, bench.tpch_nlines(g.o)) l) t;
\endif

\if :p_lineitem
INSERT INTO lineitem
SELECT bench.tpch_orderkey(o), bench.tpch_partkey(li, :p), bench.tpch_suppkey(li, :p, :s), l,
	bench.tpch_quantity(li), bench.tpch_extendedprice(li, :p), bench.tpch_discount(li),
	bench.tpch_tax(li),
	CASE WHEN receipt > date '1995-06-17' THEN 'N'
		WHEN bench.rint(li, 319, 2) = 1 THEN 'R' ELSE 'A' END,
	CASE WHEN ship > date '1995-06-17' THEN 'O' ELSE 'F' END,
	ship,
	bench.tpch_orderdate(o) + bench.rrange(li, 317, 30, 90)::int4,
	receipt,
	bench.pick(li, 320, '{DELIVER IN PERSON,COLLECT COD,NONE,TAKE BACK RETURN}'),
	bench.pick(li, 321, '{REG AIR,AIR,RAIL,SHIP,TRUCK,MAIL,FOB}'),
	bench.comment(li, 340, 10, 43)
FROM (SELECT o, l, li, ship, ship + bench.rint(li, 318, 30)::int4 AS receipt
	FROM (SELECT o, l, o * 8 + l AS li, bench.tpch_shipdate(o, o * 8 + l) AS ship
		FROM (SELECT o, generate_series(1, bench.tpch_nlines(o)) AS l
			FROM (SELECT generate_series(:lo::int8, :hi::int8) AS o) g) gl
		OFFSET 0) d
	OFFSET 0) s;
\endif

\if :p_pk
SELECT CASE :'table'
	WHEN 'region' THEN 'r_regionkey' WHEN 'nation' THEN 'n_nationkey'
	WHEN 'supplier' THEN 's_suppkey' WHEN 'customer' THEN 'c_custkey'
	WHEN 'part' THEN 'p_partkey' WHEN 'partsupp' THEN 'ps_partkey, ps_suppkey'
	WHEN 'orders' THEN 'o_orderkey' END AS pk_cols \gset
SET maintenance_work_mem = '1GB';
ALTER TABLE :"table" ADD PRIMARY KEY (:pk_cols);
\endif

-- The foreign keys of the specification (1.4.2: the schema's arrows), which the planner
-- uses to estimate joins (PostgreSQL's FK-aware join selectivity).  Without them it
-- multiplies the selectivities of Q9's two-key join of lineitem with partsupp as if
-- independent and expects about 160 of SF 10's 60 million rows (every lineitem has its
-- partsupp row): its plan then probes part, supplier and orders through their primary
-- keys once per row it expects, and reads those tables not at all.  NOT VALID: the
-- tables are filled by this file's formulas, which satisfy them (validated at SF 1), and
-- the planner uses a constraint that is not validated just the same.
\if :p_fk
ALTER TABLE nation ADD FOREIGN KEY (n_regionkey) REFERENCES region NOT VALID;
ALTER TABLE supplier ADD FOREIGN KEY (s_nationkey) REFERENCES nation NOT VALID;
ALTER TABLE customer ADD FOREIGN KEY (c_nationkey) REFERENCES nation NOT VALID;
ALTER TABLE partsupp ADD FOREIGN KEY (ps_partkey) REFERENCES part NOT VALID,
	ADD FOREIGN KEY (ps_suppkey) REFERENCES supplier NOT VALID;
ALTER TABLE orders ADD FOREIGN KEY (o_custkey) REFERENCES customer NOT VALID;
ALTER TABLE lineitem ADD FOREIGN KEY (l_orderkey) REFERENCES orders NOT VALID,
	ADD FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp NOT VALID,
	ADD FOREIGN KEY (l_partkey) REFERENCES part NOT VALID,
	ADD FOREIGN KEY (l_suppkey) REFERENCES supplier NOT VALID;
\endif
