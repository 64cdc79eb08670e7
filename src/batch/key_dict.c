/*-------------------------------------------------------------------------
 *
 * batch/key_dict.c
 *	  Dictionaries that turn group keys of types with no fixed-width
 *	  integer form into dense ids: text, varchar, bpchar, numeric, uuid,
 *	  interval.
 *
 * Two levels.  A *spelling* is a value exactly as stored; each distinct
 * spelling gets an id, looked up by its bytes (one probe per row).  A
 * *key* is a class of equal spellings, looked up by canonical bytes whose
 * equality is the type's equality under a deterministic collation:
 *	text, varchar, uuid	the bytes (one spelling per key)
 *	bpchar				the bytes without trailing blanks ('a' = 'a  ')
 *	numeric				numeric_normalize(): no trailing zeros (1.0 = 1.00)
 *	interval			the 128-bit span PostgreSQL compares ('1 mon' = '30 days')
 * The device groups by key id.  PostgreSQL shows a group with the spelling of
 * its first row, so where a key can have several spellings the batch also
 * carries each row's spelling *rank* (its index among its key's spellings) in
 * a column whose per-group minimum finds the first row (see batch/builder.c).
 * Canonical bytes are computed once per new spelling, not per row.
 *
 * Probe arrays hold hash and id in one word, so that a miss costs one cache
 * line and a hit one more for the bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "batch/key_dict.h"
#include "compat.h"

static int32 intern_bytes(KeyDict *dict, Datum value, MemoryContext scratch);
static inline uint64 short_word(Datum value);
static int32 intern_short(KeyDict *dict, Datum value, uint64 word, MemoryContext scratch);

/* An open-addressing table of byte strings with dense ids. */
typedef struct ByteTable
{
	int32		count;
	int32		size;			/* allocated ids */
	const char **bytes;			/* by id */
	int32	   *lens;			/* by id */
	uint64	   *slots;			/* hash << 32 | (id + 1); 0 = empty */
	uint32		mask;
} ByteTable;

struct KeyDict
{
	Oid			type;			/* base type */
	int16		typlen;
	bool		typbyval;
	bool		spellings;		/* can equal keys be spelt differently? */
	MemoryContext cxt;

	ByteTable	spelt;			/* spellings, by their exact bytes */
	Datum	   *values;			/* by spelling: the value */
	int32	   *spelling_key;	/* by spelling: its key id */
	int32	   *spelling_rank;	/* by spelling: index among its key's spellings */
	int32	   *spelling_next;	/* by spelling: next spelling of its key, -1 */

	/*
	 * Text stored with a 1-byte header and at most 7 bytes ('id042'), packed
	 * with its length into one word: a probe with no byte comparison.  A
	 * cache in front of `spelt`, which holds them too.
	 */
	bool		short_cache;	/* text or varchar */
	uint64	   *short_words;	/* packed value, 0 = empty */
	int32	   *short_ids;		/* its spelling */
	uint32		short_mask;
	int32		short_count;

	ByteTable	keys;			/* keys, by canonical bytes (if spellings) */
	int32	   *key_first;		/* by key: first spelling */
	int32	   *key_last;		/* by key: last spelling */
	int32	   *key_spellings;	/* by key: number of spellings */
};

/* An unaligned load of 8 (or 4) bytes. */
static inline uint64
load64(const char *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32
load32(const char *p)
{
	uint32		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Hash of a value's bytes for the dictionary's own tables.  Group keys are
 * mostly short ('id042', a uuid): up to 16 bytes are read as two (possibly
 * overlapping) words and mixed with multiply-xorshift steps (the finaliser
 * of MurmurHash3), a few times cheaper per row than hash_bytes; longer
 * values use hash_bytes.  Equal bytes always hash equally; collisions are
 * resolved by comparing the bytes.
 */
static inline uint32
dict_hash(const char *bytes, int len)
{
	uint64		a;
	uint64		b;
	uint64		h;

	if (len > 16)
		return hash_bytes((const unsigned char *) bytes, len);
	if (len >= 8)
	{
		a = load64(bytes);
		b = load64(bytes + len - 8);
	}
	else if (len >= 4)
	{
		a = load32(bytes);
		b = load32(bytes + len - 4);
	}
	else
	{
		a = len > 0 ? (uint8) bytes[0] : 0;
		b = len > 1 ? ((uint64) (uint8) bytes[len - 1] << 8 | (uint8) bytes[len / 2]) : 0;
	}
	h = a * UINT64CONST(0x9E3779B97F4A7C15) ^ (b + (uint64) len) * UINT64CONST(0xC2B2AE3D27D4EB4F);
	h ^= h >> 33;
	h *= UINT64CONST(0xFF51AFD7ED558CCD);
	h ^= h >> 33;
	return (uint32) h;
}

/* Whether two byte strings of length len are equal (short ones inline). */
static inline bool
bytes_equal(const char *a, const char *b, int len)
{
	if (len > 16)
		return memcmp(a, b, len) == 0;
	if (len >= 8)
		return load64(a) == load64(b) &&
			load64(a + len - 8) == load64(b + len - 8);
	if (len >= 4)
		return load32(a) == load32(b) &&
			load32(a + len - 4) == load32(b + len - 4);
	return memcmp(a, b, len) == 0;
}

/* Initialise an empty byte table. */
static void
table_init(ByteTable *table, MemoryContext cxt)
{
	table->size = 64;
	table->bytes = MemoryContextAlloc(cxt, sizeof(char *) * table->size);
	table->lens = MemoryContextAlloc(cxt, sizeof(int32) * table->size);
	table->mask = 127;
	table->slots = MemoryContextAllocZero(cxt, sizeof(uint64) * (table->mask + 1));
}

/*
 * Find bytes in a table: their id, or -1 with *slot where to insert them.
 */
static int32
table_find(ByteTable *table, uint32 hash, const char *bytes, int len, uint32 *slot)
{
	uint32		s = hash & table->mask;

	for (;;)
	{
		uint64		entry = table->slots[s];

		if (entry == 0)
		{
			*slot = s;
			return -1;
		}
		if ((uint32) (entry >> 32) == hash)
		{
			int32		id = (int32) (entry & 0xFFFFFFFF) - 1;

			if (table->lens[id] == len && bytes_equal(table->bytes[id], bytes, len))
				return id;
		}
		s = (s + 1) & table->mask;
	}
}

/* Double a table's probe array and re-insert every id. */
static void
table_grow_slots(ByteTable *table, MemoryContext cxt)
{
	uint32		mask = table->mask * 2 + 1;
	uint64	   *slots = MemoryContextAllocHuge(cxt, sizeof(uint64) * ((Size) mask + 1));
	uint32		i;

	memset(slots, 0, sizeof(uint64) * ((Size) mask + 1));
	for (i = 0; i <= table->mask; i++)
	{
		uint64		entry = table->slots[i];
		uint32		s;

		if (entry == 0)
			continue;
		s = (uint32) (entry >> 32) & mask;
		while (slots[s] != 0)
			s = (s + 1) & mask;
		slots[s] = entry;
	}
	pfree(table->slots);
	table->slots = slots;
	table->mask = mask;
}

/*
 * Add bytes (already stored by the caller) at the slot table_find gave;
 * returns the new id.  *grown tells the caller to grow its own arrays.
 */
static int32
table_add(ByteTable *table, MemoryContext cxt, uint32 hash, uint32 slot,
		  const char *bytes, int len, bool *grown)
{
	int32		id;

	if (table->count == PG_INT32_MAX - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpuagg: too many distinct group keys")));
	*grown = false;
	if (table->count == table->size)
	{
		table->size *= 2;
		table->bytes = repalloc_huge(table->bytes, sizeof(char *) * table->size);
		table->lens = repalloc_huge(table->lens, sizeof(int32) * table->size);
		*grown = true;
	}
	id = table->count++;
	table->bytes[id] = bytes;
	table->lens[id] = len;
	table->slots[slot] = ((uint64) hash << 32) | (uint64) (id + 1);
	if ((uint32) table->count * 2 > table->mask)
		table_grow_slots(table, cxt);
	return id;
}

/* Whether keys of this base type go through a dictionary. */
bool
KeyDictTypeSupported(Oid type)
{
	switch (type)
	{
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NUMERICOID:
		case UUIDOID:
		case INTERVALOID:
			return true;
	}
	return false;
}

/* Whether equal keys of this base type can be spelt differently. */
bool
KeyDictHasSpellings(Oid type)
{
	return type == BPCHAROID || type == NUMERICOID || type == INTERVALOID;
}

/*
 * Whether a key expression is a bpchar of a declared length, which pads
 * every value to it: equal keys are then equal bytes, spelt one way, as
 * in a text dictionary (TPC-H's l_returnflag char(1), n_name char(25)).
 */
bool
KeyDictIsPaddedBpchar(Node *key)
{
	return exprType(key) == BPCHAROID && exprTypmod(key) > VARHDRSZ;
}

/*
 * Fields of a date or timestamp that extract() and date_part() take for
 * every such type and answer with whole numbers.
 */
static const char *const whole_date_fields[] = {
	"year", "month", "day", "quarter", "week", "dow", "doy", "isodow", "isoyear",
	"decade", "century", "millennium", NULL
};

/*
 * Whether expr is extract(field FROM x) or date_part(field, x) of a date,
 * timestamp or timestamptz x, with a constant field of whole_date_fields
 * (TPC-H Q9's extract(year FROM o_orderdate)); *arg is then x.  PostgreSQL
 * raises an error only for a unit the type lacks, answers an infinite x
 * with an infinity or a null, and its values are whole numbers (a numeric
 * of scale 0 for extract), so each value has one spelling.
 */
bool
KeyDictWholeDateField(Node *expr, Node **arg)
{
	FuncExpr   *func;
	Const	   *field;
	char	   *name;
	int			i;

	while (IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	if (!IsA(expr, FuncExpr))
		return false;
	func = (FuncExpr *) expr;
	switch (func->funcid)
	{
		case F_EXTRACT_TEXT_DATE:
		case F_EXTRACT_TEXT_TIMESTAMP:
		case F_EXTRACT_TEXT_TIMESTAMPTZ:
		case F_DATE_PART_TEXT_DATE:
		case F_DATE_PART_TEXT_TIMESTAMP:
		case F_DATE_PART_TEXT_TIMESTAMPTZ:
			break;
		default:
			return false;
	}
	if (list_length(func->args) != 2 || !IsA(linitial(func->args), Const))
		return false;
	field = linitial_node(Const, func->args);
	if (field->constisnull || field->consttype != TEXTOID)
		return false;
	name = TextDatumGetCString(field->constvalue);
	for (i = 0; whole_date_fields[i] != NULL; i++)
	{
		if (pg_strcasecmp(name, whole_date_fields[i]) == 0)
		{
			*arg = lsecond(func->args);
			return true;
		}
	}
	return false;
}

/*
 * Whether every value of a dictionary key expression has one spelling, so
 * that a group needs no first-row spelling: a bpchar of a declared length,
 * a numeric column of a declared scale (numeric(15,2) stores every value
 * at scale 2, TPC-H's c_acctbal), or a whole field of a date.
 */
bool
KeyDictKeyHasOneSpelling(Node *key)
{
	Node	   *bare = key;
	Node	   *arg;

	while (IsA(bare, RelabelType))
		bare = (Node *) ((RelabelType *) bare)->arg;
	if (KeyDictIsPaddedBpchar(key) || KeyDictWholeDateField(key, &arg))
		return true;
	return IsA(bare, Var) && getBaseType(exprType(bare)) == NUMERICOID &&
		exprTypmod(bare) >= (int32) VARHDRSZ;
}

/* A dictionary for keys of base type `type`; memory lives in cxt. */
KeyDict *
KeyDictCreate(Oid type, MemoryContext cxt)
{
	KeyDict    *dict = MemoryContextAllocZero(cxt, sizeof(KeyDict));

	dict->type = type;
	get_typlenbyval(type, &dict->typlen, &dict->typbyval);
	dict->spellings = KeyDictHasSpellings(type);
	dict->cxt = cxt;
	dict->short_cache = (type == TEXTOID || type == VARCHAROID);
	if (dict->short_cache)
	{
		dict->short_mask = 255;
		dict->short_words = MemoryContextAllocZero(cxt, sizeof(uint64) * 256);
		dict->short_ids = MemoryContextAlloc(cxt, sizeof(int32) * 256);
	}
	table_init(&dict->spelt, cxt);
	dict->values = MemoryContextAlloc(cxt, sizeof(Datum) * dict->spelt.size);
	dict->spelling_key = MemoryContextAlloc(cxt, sizeof(int32) * dict->spelt.size);
	dict->spelling_rank = MemoryContextAlloc(cxt, sizeof(int32) * dict->spelt.size);
	dict->spelling_next = MemoryContextAlloc(cxt, sizeof(int32) * dict->spelt.size);
	if (dict->spellings)
	{
		table_init(&dict->keys, cxt);
		dict->key_first = MemoryContextAlloc(cxt, sizeof(int32) * dict->keys.size);
		dict->key_last = MemoryContextAlloc(cxt, sizeof(int32) * dict->keys.size);
		dict->key_spellings = MemoryContextAlloc(cxt, sizeof(int32) * dict->keys.size);
	}
	return dict;
}

/*
 * The exact bytes of a value (detoasting into scratch when needed), and the
 * value in plain form for storing (*plain).
 */
static const char *
exact_bytes(KeyDict *dict, Datum value, int *len, Datum *plain, MemoryContext scratch)
{
	if (dict->typlen == -1)
	{
		struct varlena *v = (struct varlena *) DatumGetPointer(value);

		if (VARATT_IS_COMPRESSED(v) || VARATT_IS_EXTERNAL(v))
		{
			MemoryContext old = MemoryContextSwitchTo(scratch);

			v = pg_detoast_datum_packed(v);
			MemoryContextSwitchTo(old);
		}
		*plain = PointerGetDatum(v);
		*len = VARSIZE_ANY_EXHDR(v);
		return VARDATA_ANY(v);
	}
	*plain = value;
	*len = dict->typlen;
	return DatumGetPointer(value);
}

/* The canonical bytes of a stored value (into buf or scratch). */
static const char *
canonical_bytes(KeyDict *dict, Datum value, const char *exact, int exact_len,
				int *len, char *buf, MemoryContext scratch)
{
	switch (dict->type)
	{
		case BPCHAROID:
			*len = exact_len;
			while (*len > 0 && exact[*len - 1] == ' ')
				(*len)--;
			return exact;
		case NUMERICOID:
			{
				MemoryContext old = MemoryContextSwitchTo(scratch);
				char	   *normal = numeric_normalize(DatumGetNumeric(value));

				MemoryContextSwitchTo(old);
				*len = strlen(normal);
				return normal;
			}
		case INTERVALOID:
			{
				Interval   *iv = DatumGetIntervalP(value);
				int128		span;

				/* interval_cmp_value(): what interval equality compares */
				span = (int128) iv->time +
					((int128) iv->day + (int128) iv->month * DAYS_PER_MONTH) * USECS_PER_DAY;
				memcpy(buf, &span, sizeof(span));
				*len = sizeof(span);
				return buf;
			}
	}
	elog(ERROR, "gpuagg: no canonical key for type %u", dict->type);
	return NULL;				/* keep compiler quiet */
}

/* Grow the per-spelling arrays after the spelling table grew. */
static void
grow_spelling_arrays(KeyDict *dict)
{
	int32		size = dict->spelt.size;

	dict->values = repalloc_huge(dict->values, sizeof(Datum) * size);
	dict->spelling_key = repalloc_huge(dict->spelling_key, sizeof(int32) * size);
	dict->spelling_rank = repalloc_huge(dict->spelling_rank, sizeof(int32) * size);
	dict->spelling_next = repalloc_huge(dict->spelling_next, sizeof(int32) * size);
}

/* The key id of a new spelling, adding the key when new. */
static int32
key_of_new_spelling(KeyDict *dict, int32 spelling, const char *exact, int exact_len,
					MemoryContext scratch)
{
	char		buf[16];
	int			len;
	const char *canon = canonical_bytes(dict, dict->values[spelling], exact, exact_len,
										&len, buf, scratch);
	uint32		hash = dict_hash(canon, len);
	uint32		slot;
	int32		key = table_find(&dict->keys, hash, canon, len, &slot);

	if (key >= 0)
	{
		if (dict->key_spellings[key] >= GPUAGG_MAX_SPELLINGS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("gpuagg: a group key has more than %d spellings", GPUAGG_MAX_SPELLINGS)));
		dict->spelling_rank[spelling] = dict->key_spellings[key]++;
		dict->spelling_next[dict->key_last[key]] = spelling;
		dict->key_last[key] = spelling;
		return key;
	}
	else
	{
		char	   *copy = MemoryContextAlloc(dict->cxt, Max(len, 1));
		bool		grown;

		memcpy(copy, canon, len);
		key = table_add(&dict->keys, dict->cxt, hash, slot, copy, len, &grown);
		if (grown)
		{
			dict->key_first = repalloc_huge(dict->key_first, sizeof(int32) * dict->keys.size);
			dict->key_last = repalloc_huge(dict->key_last, sizeof(int32) * dict->keys.size);
			dict->key_spellings = repalloc_huge(dict->key_spellings, sizeof(int32) * dict->keys.size);
		}
		dict->key_first[key] = dict->key_last[key] = spelling;
		dict->key_spellings[key] = 1;
		dict->spelling_rank[spelling] = 0;
		return key;
	}
}

/*
 * The spelling id of a value, adding it (and its key) when new.  Temporary
 * memory goes to scratch.
 */
int32
KeyDictIntern(KeyDict *dict, Datum value, MemoryContext scratch)
{
	if (dict->short_cache)
	{
		uint64		word = short_word(value);

		if (word != 0)
			return intern_short(dict, value, word, scratch);
	}
	return intern_bytes(dict, value, scratch);
}

/* KeyDictIntern through the byte table (every value). */
static int32
intern_bytes(KeyDict *dict, Datum value, MemoryContext scratch)
{
	Datum		plain;
	int			len;
	const char *exact = exact_bytes(dict, value, &len, &plain, scratch);
	uint32		hash = dict_hash(exact, len);
	uint32		slot;
	int32		spelling = table_find(&dict->spelt, hash, exact, len, &slot);
	const char *stored;
	bool		grown;

	if (spelling >= 0)
		return spelling;

	/* a new spelling: keep a plain copy, the bytes point into it */
	if (dict->typlen == -1)
	{
		struct varlena *copy = MemoryContextAlloc(dict->cxt, VARHDRSZ + len);

		SET_VARSIZE(copy, VARHDRSZ + len);
		memcpy(VARDATA(copy), exact, len);
		plain = PointerGetDatum(copy);
		stored = VARDATA(copy);
	}
	else
	{
		plain = datumCopy(plain, dict->typbyval, dict->typlen);
		stored = DatumGetPointer(plain);
	}
	spelling = table_add(&dict->spelt, dict->cxt, hash, slot, stored, len, &grown);
	if (grown)
		grow_spelling_arrays(dict);
	dict->values[spelling] = plain;
	dict->spelling_next[spelling] = -1;
	if (dict->spellings)
		dict->spelling_key[spelling] = key_of_new_spelling(dict, spelling, stored, len, scratch);
	else
	{
		dict->spelling_key[spelling] = spelling;
		dict->spelling_rank[spelling] = 0;
	}
	return spelling;
}

/*
 * The packed word of a short on-disk text value (1-byte header, at most 7
 * bytes), or 0 when the value is not one.
 */
static inline uint64
short_word(Datum value)
{
	const char *v = (const char *) DatumGetPointer(value);
	const char *p;
	uint64		word;
	int			len;

	if (!VARATT_IS_SHORT(v))
		return 0;
	len = VARSIZE_SHORT(v) - VARHDRSZ_SHORT;
	if (len > 7)
		return 0;
	p = VARDATA_SHORT(v);
	if (len >= 4)
	{
		/* two overlapping 4-byte loads: the bytes they share are equal */
		word = (uint64) load32(p) | ((uint64) load32(p + len - 4) << (8 * (len - 4)));
	}
	else
	{
		word = 0;
		if (len > 0)
			word = (uint8) p[0];
		if (len > 1)
			word |= (uint64) (uint8) p[1] << 8;
		if (len > 2)
			word |= (uint64) (uint8) p[2] << 16;
	}
	return word | ((uint64) (len + 1) << 56);
}

/* Slot of a packed word in the short cache. */
static inline uint32
short_slot(KeyDict *dict, uint64 word)
{
	uint64		h = word * UINT64CONST(0x9E3779B97F4A7C15);

	h ^= h >> 32;
	return (uint32) h & dict->short_mask;
}

/*
 * How full the short cache may get: at most 1/8 while it has up to 64K
 * slots, so that a lookup almost always finds its value in its first or
 * second slot (KeyDictInternMany tests both with one branch: a collision
 * there cost a mispredicted branch per row); half full when larger.
 */
#define SHORT_CACHE_LOAD(mask) ((mask) < 65535 ? 8 : 2)

/* Remember a short value's spelling; doubles the cache when too full. */
static void
short_cache_add(KeyDict *dict, uint64 word, int32 spelling)
{
	uint32		s;

	if ((uint32) (dict->short_count + 1) * SHORT_CACHE_LOAD(dict->short_mask) >
		dict->short_mask + 1)
	{
		uint32		old_mask = dict->short_mask;
		uint64	   *old_words = dict->short_words;
		int32	   *old_ids = dict->short_ids;
		uint32		i;

		dict->short_mask = old_mask * 2 + 1;
		dict->short_words = MemoryContextAllocHuge(dict->cxt,
												   sizeof(uint64) * ((Size) dict->short_mask + 1));
		memset(dict->short_words, 0, sizeof(uint64) * ((Size) dict->short_mask + 1));
		dict->short_ids = MemoryContextAllocHuge(dict->cxt,
												 sizeof(int32) * ((Size) dict->short_mask + 1));
		for (i = 0; i <= old_mask; i++)
		{
			if (old_words[i] == 0)
				continue;
			s = short_slot(dict, old_words[i]);
			while (dict->short_words[s] != 0)
				s = (s + 1) & dict->short_mask;
			dict->short_words[s] = old_words[i];
			dict->short_ids[s] = old_ids[i];
		}
		pfree(old_words);
		pfree(old_ids);
	}
	s = short_slot(dict, word);
	while (dict->short_words[s] != 0)
		s = (s + 1) & dict->short_mask;
	dict->short_words[s] = word;
	dict->short_ids[s] = spelling;
	dict->short_count++;
}

/*
 * KeyDictIntern for short text: the spelling id from the cache, else from
 * the full dictionary (and then cached).
 */
static int32
intern_short(KeyDict *dict, Datum value, uint64 word, MemoryContext scratch)
{
	uint32		s = short_slot(dict, word);
	int32		spelling;

	for (;;)
	{
		uint64		w = dict->short_words[s];

		if (w == word)
			return dict->short_ids[s];
		if (w == 0)
			break;
		s = (s + 1) & dict->short_mask;
	}
	spelling = intern_bytes(dict, value, scratch);
	short_cache_add(dict, word, spelling);
	return spelling;
}

/*
 * KeyDictIntern for n values of one batch column: the spelling id of each
 * goes to ids (0 for a row that isnull, when given, says is null).  One call
 * per column and page instead of one per row, with the short-text cache's
 * hit (the common case: few distinct keys) probed inline.
 */
void
KeyDictInternMany(KeyDict *dict, const Datum *values, const bool *isnull, int n,
				  int32 *ids, MemoryContext scratch)
{
	int			r;

	for (r = 0; r < n; r++)
	{
		Datum		value = values[r];

		if (isnull != NULL && isnull[r])
		{
			ids[r] = 0;
			continue;
		}
		if (dict->short_cache)
		{
			uint64		word = short_word(value);

			if (word != 0)
			{
				uint32		s = short_slot(dict, word);
				uint32		s1 = (s + 1) & dict->short_mask;
				bool		in_s = dict->short_words[s] == word;

				/* the first two slots with one branch (| rather than ||) */
				if (likely(in_s | (dict->short_words[s1] == word)))
					ids[r] = dict->short_ids[in_s ? s : s1];
				else
					ids[r] = intern_short(dict, value, word, scratch);
				continue;
			}
		}
		ids[r] = intern_bytes(dict, value, scratch);
	}
}

/*
 * The key ids of n spellings (KeyDictKey of each) into keys; rows that
 * isnull (when given) says are null get 0.
 */
void
KeyDictKeysOf(KeyDict *dict, const int32 *spellings, const bool *isnull, int n,
			  int32 *keys)
{
	int			r;

	if (!dict->spellings)
	{
		/* one spelling per key: the ids are the same (see intern_bytes) */
		for (r = 0; r < n; r++)
			keys[r] = (isnull != NULL && isnull[r]) ? 0 : spellings[r];
		return;
	}
	for (r = 0; r < n; r++)
		keys[r] = (isnull != NULL && isnull[r]) ? 0 : dict->spelling_key[spellings[r]];
}

/* Whether equal keys of this dictionary can be spelt differently. */
bool
KeyDictSpellings(KeyDict *dict)
{
	return dict->spellings;
}

/* The key id of a spelling: what the device groups by. */
int32
KeyDictKey(KeyDict *dict, int32 spelling)
{
	return dict->spelling_key[spelling];
}

/* The rank of a spelling among its key's spellings (0 for the first). */
int32
KeyDictRank(KeyDict *dict, int32 spelling)
{
	return dict->spelling_rank[spelling];
}

/* Number of spellings (ids that batch messages send). */
int32
KeyDictSize(KeyDict *dict)
{
	return dict->spelt.count;
}

/* The value of a spelling. */
Datum
KeyDictValue(KeyDict *dict, int32 spelling)
{
	return dict->values[spelling];
}

/* The value shown for key id `key` whose first row had spelling rank `rank`. */
Datum
KeyDictKeyValue(KeyDict *dict, int32 key, int32 rank)
{
	int32		spelling;

	if (!dict->spellings)
	{
		if (key < 0 || key >= dict->spelt.count)
			elog(ERROR, "gpuagg: device returned unknown key id %d", key);
		return dict->values[key];
	}
	if (key < 0 || key >= dict->keys.count || rank < 0 || rank >= dict->key_spellings[key])
		elog(ERROR, "gpuagg: device returned unknown key id %d (rank %d)", key, rank);
	for (spelling = dict->key_first[key]; rank > 0; rank--)
		spelling = dict->spelling_next[spelling];
	return dict->values[spelling];
}

/* Bytes of a spelling's value as sent in a batch message (see batch/message.c). */
Size
KeyDictValueSize(KeyDict *dict, int32 spelling)
{
	return dict->typlen == -1 ? VARSIZE(DatumGetPointer(dict->values[spelling])) : dict->typlen;
}

/* Make a value received as bytes (from KeyDictValueSize) into a datum. */
Datum
KeyDictValueFromBytes(KeyDict *dict, const char *bytes, Size len, MemoryContext scratch)
{
	char	   *copy = MemoryContextAlloc(scratch, MAXALIGN(len));

	memcpy(copy, bytes, len);
	return PointerGetDatum(copy);
}
