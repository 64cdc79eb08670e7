-- test/bench/gen_common.sql - helper functions of the benchmark data generators (schema bench).
--
-- Every generated value is a function of (row number, column salt): a hash of the two,
-- not random(). The data are therefore the same whatever the number of sessions that
-- generate them in chunks, and the same from run to run (the role setseed() plays in a
-- single session). All functions are one-expression SQL functions, so the planner
-- inlines them: they cost what the expression costs.
--
-- Run as: psql -v ON_ERROR_STOP=1 < gen_common.sql
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS bench;

-- Uniform integer in lo .. hi, drawn for row i and column salt s.
CREATE OR REPLACE FUNCTION bench.rrange(i int8, s int8, lo int8, hi int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT lo + (hashint8extended(i, s) & 9223372036854775807) % (hi - lo + 1)';

-- Uniform integer in 1 .. n.
CREATE OR REPLACE FUNCTION bench.rint(i int8, s int8, n int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT bench.rrange(i, s, 1, n)';

-- Uniform float8 in [0, 1) (53 random bits).
CREATE OR REPLACE FUNCTION bench.rfloat(i int8, s int8) RETURNS float8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT (hashint8extended(i, s) & 9007199254740991)::float8 / 9007199254740992';

-- Uniform in [0, 100) rounded down to 6 decimals (db-benchmark's round(runif(max = 100), 6)).
CREATE OR REPLACE FUNCTION bench.rvalue(i int8, s int8) RETURNS float8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT floor(bench.rfloat(i, s) * 100000000) / 1000000';

-- One element of a, uniformly.
CREATE OR REPLACE FUNCTION bench.pick(i int8, s int8, a text[]) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT a[1 + (hashint8extended(i, s) & 9223372036854775807) % cardinality(a)]';

-- (a * j + b) mod m: a permutation of 0 .. m-1 when gcd(a, m) = 1 (see bench.coprime).
CREATE OR REPLACE FUNCTION bench.perm(j int8, a int8, b int8, m int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT (a * j + b) % m';

-- The first integer from floor(f * m) up that is coprime with m: an affine multiplier
-- that spreads consecutive j over the whole range (f near the golden ratio's 0.618).
CREATE OR REPLACE FUNCTION bench.coprime(m int8, f float8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT min(a) FROM generate_series(greatest(1, floor(f * m)::int8), greatest(1, floor(f * m)::int8) + 1000) a WHERE gcd(a, m) = 1';

-- One word of TPC-H-like comment text: dbgen's grammar words (nouns, verbs, adjectives,
-- adverbs, prepositions, auxiliaries; the frequent ones repeated, as dbgen weights them).
CREATE OR REPLACE FUNCTION bench.word(i int8, s int8) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $f$SELECT bench.pick(i, s, '{
		packages,packages,packages,packages,requests,requests,requests,requests,accounts,
		accounts,accounts,accounts,deposits,deposits,deposits,deposits,foxes,foxes,ideas,
		ideas,theodolites,theodolites,pinto,beans,instructions,instructions,dependencies,
		dependencies,excuses,platelets,asymptotes,courts,dolphins,multipliers,sauternes,
		warthogs,frets,dinos,attainments,somas,Tiresias,patterns,forges,braids,hockey,
		players,frays,warhorses,dugouts,notornis,epitaphs,pearls,tithes,waters,orbits,gifts,
		sheaves,depths,sentiments,decoys,realms,pains,grouches,escapades,sleep,wake,are,
		cajole,cajole,haggle,nag,use,boost,affix,detect,integrate,maintain,nod,was,lose,
		sublate,solve,thrash,promise,engage,hinder,print,x-ray,breach,eat,grow,impress,mold,
		poach,serve,run,dazzle,snooze,doze,unwind,kindle,play,hang,believe,doubt,special,
		pending,pending,unusual,express,express,furious,sly,careful,blithe,quick,fluffy,
		slow,quiet,ruthless,thin,close,dogged,daring,brave,stealthy,permanent,enticing,idle,
		busy,regular,regular,final,final,ironic,ironic,even,bold,silent,sometimes,always,
		never,furiously,furiously,slyly,carefully,carefully,blithely,quickly,quickly,
		fluffily,slowly,quietly,ruthlessly,thinly,closely,doggedly,daringly,bravely,
		stealthily,permanently,enticingly,idly,busily,regularly,regularly,finally,finally,
		ironically,ironically,evenly,boldly,silently,about,above,according,to,across,after,
		against,along,alongside,of,among,around,at,atop,before,behind,beneath,beside,
		besides,between,beyond,by,despite,during,except,for,from,in,place,inside,instead,
		into,near,of,on,outside,over,past,since,through,throughout,to,toward,under,until,up,
		upon,without,with,within,do,may,might,shall,will,would,can,could,should,ought,must,
		have,need,try,the,the,the,blithely,quickly,carefully,furiously,slyly,even,final,
		special}'::text[])$f$;

-- Six words.
CREATE OR REPLACE FUNCTION bench.words6(i int8, s int8) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $f$SELECT bench.word(i, s) || ' ' || bench.word(i, s + 1) || ' ' || bench.word(i, s + 2) || ' ' ||
		bench.word(i, s + 3) || ' ' || bench.word(i, s + 4) || ' ' || bench.word(i, s + 5)$f$;

-- A comment of lo .. hi characters (TPC-H's text columns): words cut to a random length.
CREATE OR REPLACE FUNCTION bench.comment(i int8, s int8, lo int8, hi int8) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $f$SELECT left(bench.words6(i, s) ||
		CASE WHEN hi > 45 THEN ' ' || bench.words6(i, s + 6) ELSE '' END ||
		CASE WHEN hi > 90 THEN ' ' || bench.words6(i, s + 12) || ' ' || bench.words6(i, s + 18) ELSE '' END ||
		CASE WHEN hi > 150 THEN ' ' || bench.words6(i, s + 24) || ' ' || bench.words6(i, s + 30) ELSE '' END,
		(lo + (hashint8extended(i, s + 99) & 9223372036854775807) % (hi - lo + 1))::int)$f$;
