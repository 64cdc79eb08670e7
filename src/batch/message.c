/*-------------------------------------------------------------------------
 *
 * batch/message.c
 *	  Batches that parallel workers pack (GpuAggPack) and send to the
 *	  leader's GpuHashAgg as one bytea per batch, through Gather.
 *
 * The CPU work of a GROUP BY on the GPU is producing the batches: scanning,
 * deforming, encoding.  Parallel workers do that work; the leader only
 * copies the columns into its pinned device batches and keeps the one CUDA
 * context.  A message is plain memory, laid out as
 *
 *	header		magic, ncolumns, nrows, sender, first_column, npages,
 *				string_bytes, page_rows
 *	per column	has_nulls, ndelta, delta_first, nbytes,
 *				ndelta dictionary entries (length, bytes) for dictionary keys,
 *				nrows values, then a string column's nbytes bytes, then
 *				the validity bitmap if has_nulls; no values, bytes nor
 *				bitmap when every row comes from the message's pages
 *				(page_rows == nrows): the device deforms them
 *	per page	first_row, nrows, all_visible, lower, upper, the visible
 *				line pointers' offsets unless all_visible, the image's
 *				bytes [0, lower) and [upper, GA_PAGE_SIZE): not the free
 *				space between (gpuagg_device.h, "Heap pages")
 *
 * every part padded to 4 bytes.  A page's rows are rows of the message
 * (first_row from its first); the leader moves them by the rows its batch
 * holds and copies the images into its batch's page area, which is the
 * GPU service's arena when the device runs there: one copy.  Dictionary keys (numeric, uuid, ...) travel
 * as ids of the sender's own dictionary; each message carries the values
 * added since the sender's previous message, and the leader maps them onto
 * its dictionary, so that it hashes each distinct value of each sender once
 * instead of every row.  Text keys that travel as bytes (STRING_KEY) need
 * none of that: the leader copies a string column's end offsets, moved by
 * the bytes its batch column already holds, and its bytes in one piece.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "batch/batch.h"
#include "batch/key_dict.h"
#include "compat.h"
#include "guc.h"

#define MESSAGE_MAGIC 0x4741474d	/* "GAGM" */

/* What GpuAggMessageBytes counts for a row of a string column's bytes. */
#define MESSAGE_STRING_ROW_BYTES 16
#define MAX_SENDERS 1024

typedef struct MessageHeader
{
	uint32		magic;
	int32		ncolumns;
	int64		nrows;
	uint64		sender;
	int32		first_column;	/* the batch column of the message's first */
	int32		npages;			/* page images after the columns */
	int64		string_bytes;	/* the most bytes of any string column */
	int64		page_rows;		/* rows the pages fill */
} MessageHeader;

/* A page of a message, before its offsets and image. */
typedef struct MessagePage
{
	uint32		first_row;		/* in the message */
	uint16		nrows;
	uint16		all_visible;
	uint16		lower;			/* the image's bytes [0, lower) ... */
	uint16		upper;			/* ... and [upper, GA_PAGE_SIZE) travel */
} MessagePage;

typedef struct ColumnHeader
{
	int32		has_nulls;
	int32		ndelta;			/* new dictionary entries in this message */
	int32		delta_first;	/* sender's id of the first of them */
	int32		nbytes;			/* a string column's bytes, else 0 */
} ColumnHeader;

/* One sender's text ids mapped to the leader's, per column. */
typedef struct SenderMap
{
	uint64		sender;
	int32	  **remap;			/* per column: sender id -> leader id */
	int32	   *remap_size;		/* per column: allocated entries */
} SenderMap;

struct GpuAggMessageReceiver
{
	int			ncolumns;
	int			nsenders;
	int			senders_size;
	SenderMap  *senders;
	MemoryContext cxt;
};

/* Append len bytes and pad the buffer to a multiple of 4. */
static void
append_padded(StringInfo buf, const void *data, Size len)
{
	static const char zeros[4] = {0};

	appendBinaryStringInfo(buf, data, len);
	if (buf->len % 4 != 0)
		appendBinaryStringInfo(buf, zeros, 4 - buf->len % 4);
}

/*
 * Append page p of a local batch: its description, then the bytes of its
 * image that GpuAggPageAppend copied (all of them for a page whose
 * pd_lower and pd_upper are not in order).
 */
static void
message_append_page(StringInfo buf, const GaBatch *batch, int64 p)
{
	const GaPageDesc *desc = &batch->page_desc[p];
	const char *image = (const char *) batch->pages + p * (Size) GA_PAGE_SIZE;
	PageHeader	header = (PageHeader) image;
	MessagePage mp;

	mp.first_row = desc->first_row;
	mp.nrows = desc->nrows;
	mp.all_visible = desc->all_visible;
	mp.lower = header->pd_lower;
	mp.upper = header->pd_upper;
	if (mp.lower > mp.upper || mp.upper > GA_PAGE_SIZE)
		mp.lower = mp.upper = GA_PAGE_SIZE;
	append_padded(buf, &mp, sizeof(mp));
	if (!mp.all_visible)
		append_padded(buf, desc->offsets, sizeof(uint16) * mp.nrows);
	append_padded(buf, image, mp.lower);
	append_padded(buf, image + mp.upper, GA_PAGE_SIZE - mp.upper);
}

/*
 * Serialize a filled local batch into buf (reset first) as a bytea message
 * from `sender`, whose columns are the leader's batch columns from
 * first_column on (0 but for an aggjoin's build side).
 * dict_sent[c] counts the dictionary entries of text column c already sent,
 * and is advanced.
 */
bytea *
GpuAggMessageBuild(GpuAggBatchBuilder *builder, GaBatch *batch, uint64 sender,
				   int first_column, int32 *dict_sent, StringInfo buf)
{
	MessageHeader header;
	bool		values;			/* whether any row's values travel */
	int64		p;
	int			c;

	resetStringInfo(buf);
	appendStringInfoSpaces(buf, VARHDRSZ);
	header.magic = MESSAGE_MAGIC;
	header.ncolumns = batch->ncolumns;
	header.nrows = batch->nrows;
	header.sender = sender;
	header.first_column = first_column;
	header.npages = (int32) batch->npages;
	header.string_bytes = 0;
	header.page_rows = 0;
	for (c = 0; c < batch->ncolumns; c++)
		if (batch->columns[c].type == GA_TYPE_STRING)
			header.string_bytes = Max(header.string_bytes,
									  ga_string_used(&batch->columns[c], batch->nrows));
	for (p = 0; p < batch->npages; p++)
		header.page_rows += batch->page_desc[p].nrows;
	values = header.page_rows < header.nrows;
	append_padded(buf, &header, sizeof(header));

	for (c = 0; c < batch->ncolumns; c++)
	{
		GaColumn   *col = &batch->columns[c];
		ColumnHeader ch = {0};
		int32		id;

		KeyDict    *dict = GpuAggBatchDict(builder, c);
		bool		derived = GpuAggBatchColumnDerived(builder, c);

		/* nothing of a column the device computes or deforms travels */
		if (!values)
			derived = true;
		ch.has_nulls = derived ? 0 : col->has_nulls;
		if (dict != NULL && dict_sent != NULL && dict_sent[c] >= 0)
		{
			ch.delta_first = dict_sent[c];
			ch.ndelta = KeyDictSize(dict) - dict_sent[c];
		}
		if (col->type == GA_TYPE_STRING && !derived)
			ch.nbytes = (int32) ga_string_used(col, batch->nrows);
		append_padded(buf, &ch, sizeof(ch));
		for (id = ch.delta_first; id < ch.delta_first + ch.ndelta; id++)
		{
			/* dictionary types are all passed by reference */
			int32		len = (int32) KeyDictValueSize(dict, id);

			appendBinaryStringInfo(buf, (const char *) &len, sizeof(len));
			append_padded(buf, DatumGetPointer(KeyDictValue(dict, id)), len);
		}
		if (ch.ndelta > 0)
			dict_sent[c] += ch.ndelta;
		if (col->values != NULL && !derived)
			append_padded(buf, col->values, ga_type_width(col->type) * batch->nrows);
		if (ch.nbytes > 0)
			append_padded(buf, col->bytes, ch.nbytes);
		if (ch.has_nulls)
			append_padded(buf, col->validity, (batch->nrows + 7) / 8);
	}
	for (p = 0; p < batch->npages; p++)
		message_append_page(buf, batch, p);
	SET_VARSIZE(buf->data, buf->len);
	return (bytea *) buf->data;
}

/*
 * Bytes of a message of `rows` rows of these column types, dictionary
 * entries not counted (they vary: see GpuAggExchange's slot size), and
 * MESSAGE_STRING_ROW_BYTES a row for each string column's bytes.
 */
Size
GpuAggMessageBytes(int ncolumns, const GaValueType *types, int64 rows)
{
	Size		bytes = VARHDRSZ + TYPEALIGN(4, sizeof(MessageHeader));
	int			c;

	for (c = 0; c < ncolumns; c++)
	{
		bytes += TYPEALIGN(4, sizeof(ColumnHeader));
		bytes += TYPEALIGN(4, (Size) ga_type_width(types[c]) * rows);
		bytes += TYPEALIGN(4, (rows + 7) / 8);
		if (types[c] == GA_TYPE_STRING)
			bytes += TYPEALIGN(4, (Size) MESSAGE_STRING_ROW_BYTES * rows);
	}
	return bytes;
}

/*
 * Bytes of a message of ncolumns columns whose rows all come from npages
 * pages: headers, and the pages' descriptions and whole images.
 */
Size
GpuAggMessagePageBytes(int ncolumns, int64 npages)
{
	return VARHDRSZ + TYPEALIGN(4, sizeof(MessageHeader)) +
		ncolumns * TYPEALIGN(4, sizeof(ColumnHeader)) +
		npages * (TYPEALIGN(4, sizeof(MessagePage)) +
				  TYPEALIGN(4, sizeof(uint16) * GA_PAGE_MAX_TUPLES) + GA_PAGE_SIZE + 4);
}

/*
 * Rows per message from a parallel worker: a batch, but at most 64K, so
 * that workers stream their rows to the leader.
 */
int64
GpuAggMessageCapacity(void)
{
	return Min(gpuagg_batch_rows, 65536);
}

/* Read the message header, checking that it is one. */
static void
read_header(bytea *message, MessageHeader *header)
{
	if (VARSIZE_ANY_EXHDR(message) < sizeof(MessageHeader))
		elog(ERROR, "gpuagg: batch message too short");
	memcpy(header, VARDATA_ANY(message), sizeof(MessageHeader));
	if (header->magic != MESSAGE_MAGIC)
		elog(ERROR, "gpuagg: not a batch message");
}

/* Rows in a message. */
int64
GpuAggMessageRows(bytea *message)
{
	MessageHeader header;

	read_header(message, &header);
	return header.nrows;
}

/*
 * Whether a message's rows fit what a batch has left: its rows, its pages,
 * and the bytes of its string columns (each at most header.string_bytes; a local
 * batch's grow for them where they may: GpuAggBatchStringRoom).  Only the
 * message's own columns count: an aggjoin's probe batch leaves its build
 * sides' columns, strings among them, unfilled.
 */
bool
GpuAggMessageFits(bytea *message, GaBatch *batch)
{
	MessageHeader header;
	int			c;

	read_header(message, &header);
	if (header.nrows > batch->capacity - batch->nrows ||
		header.npages > batch->page_capacity - batch->npages)
		return false;
	for (c = header.first_column;
		 c < header.first_column + header.ncolumns && c < batch->ncolumns; c++)
	{
		const GaColumn *col = &batch->columns[c];

		if (col->type == GA_TYPE_STRING &&
			!GpuAggBatchStringRoom(batch, c,
								   ga_string_used(col, batch->nrows) + header.string_bytes))
			return false;
	}
	return true;
}

/* A receiver for messages of ncolumns columns; memory lives in cxt. */
GpuAggMessageReceiver *
GpuAggMessageReceiverCreate(int ncolumns, MemoryContext cxt)
{
	GpuAggMessageReceiver *receiver = MemoryContextAllocZero(cxt, sizeof(GpuAggMessageReceiver));

	receiver->ncolumns = ncolumns;
	receiver->cxt = cxt;
	receiver->senders_size = 8;
	receiver->senders = MemoryContextAllocZero(cxt, sizeof(SenderMap) * receiver->senders_size);
	return receiver;
}

/* The text id map of a sender, created on its first message. */
static SenderMap *
receiver_sender(GpuAggMessageReceiver *receiver, uint64 sender)
{
	SenderMap  *map;
	int			i;

	for (i = 0; i < receiver->nsenders; i++)
		if (receiver->senders[i].sender == sender)
			return &receiver->senders[i];
	if (receiver->nsenders >= MAX_SENDERS)
		elog(ERROR, "gpuagg: more than %d batch senders", MAX_SENDERS);
	if (receiver->nsenders == receiver->senders_size)
	{
		receiver->senders_size *= 2;
		receiver->senders = repalloc(receiver->senders,
									 sizeof(SenderMap) * receiver->senders_size);
	}
	map = &receiver->senders[receiver->nsenders++];
	map->sender = sender;
	map->remap = MemoryContextAllocZero(receiver->cxt, sizeof(int32 *) * Max(receiver->ncolumns, 1));
	map->remap_size = MemoryContextAllocZero(receiver->cxt, sizeof(int32) * Max(receiver->ncolumns, 1));
	return map;
}

/* Record that sender id `id` of column c is leader id `leader_id`. */
static void
remap_set(GpuAggMessageReceiver *receiver, SenderMap *map, int c, int32 id, int32 leader_id)
{
	if (id >= map->remap_size[c])
	{
		int32		size = Max(1024, map->remap_size[c]);

		while (size <= id)
			size *= 2;
		if (map->remap[c] == NULL)
			map->remap[c] = MemoryContextAllocHuge(receiver->cxt, sizeof(int32) * size);
		else
			map->remap[c] = repalloc_huge(map->remap[c], sizeof(int32) * size);
		map->remap_size[c] = size;
	}
	map->remap[c][id] = leader_id;
}

/*
 * Copy a message's page at p into the next page of batch, its rows moved
 * by `off` (the rows the batch held before the message); returns where the
 * message goes on.
 */
static const char *
message_read_page(const char *p, GaBatch *batch, int64 off)
{
	GaPageDesc *desc = &batch->page_desc[batch->npages];
	char	   *image = (char *) batch->pages + batch->npages * (Size) GA_PAGE_SIZE;
	MessagePage mp;

	memcpy(&mp, p, sizeof(mp));
	p += TYPEALIGN(4, sizeof(mp));
	if (mp.lower > mp.upper || mp.upper > GA_PAGE_SIZE || mp.nrows > GA_PAGE_MAX_TUPLES ||
		off + mp.first_row + mp.nrows > batch->capacity)
		elog(ERROR, "gpuagg: malformed page in a batch message");
	desc->first_row = (uint32) (off + mp.first_row);
	desc->nrows = mp.nrows;
	desc->all_visible = mp.all_visible;
	if (!mp.all_visible)
	{
		memcpy(desc->offsets, p, sizeof(uint16) * mp.nrows);
		p += TYPEALIGN(4, sizeof(uint16) * mp.nrows);
	}
	memcpy(image, p, mp.lower);
	p += TYPEALIGN(4, mp.lower);
	memcpy(image + mp.upper, p, GA_PAGE_SIZE - mp.upper);
	p += TYPEALIGN(4, GA_PAGE_SIZE - mp.upper);
	batch->npages++;
	return p;
}

/*
 * Append a message's rows to a device batch, which must have room: values
 * are copied, the sender's spelling ids of dictionary keys become the
 * leader's key ids (and spelling ranks), null bits are cleared where the
 * message has nulls; its pages go to the batch's page area, their rows
 * after the batch's.
 */
void
GpuAggMessageAppend(GpuAggMessageReceiver *receiver, GpuAggBatchBuilder *builder,
					GaBatch *batch, bytea *message)
{
	MessageHeader header;
	const char *p;
	int64		off = batch->nrows;
	SenderMap  *map;
	int32	  **spellings;		/* per dictionary column: each row's spelling */
	bool		values;			/* whether the columns carry values */
	int			c;
	int			pg;

	read_header(message, &header);
	/* an aggjoin's messages fill its probe or its build columns */
	if (header.first_column < 0 || header.ncolumns > batch->ncolumns - header.first_column ||
		header.nrows > batch->capacity - off ||
		header.npages < 0 || header.npages > batch->page_capacity - batch->npages)
		elog(ERROR, "gpuagg: batch message of %d columns, " INT64_FORMAT " rows and %d pages does not fit",
			 header.ncolumns, header.nrows, header.npages);
	values = header.page_rows < header.nrows;
	map = receiver_sender(receiver, header.sender);
	spellings = MemoryContextAllocZero(GpuAggBatchScratch(builder),
									   sizeof(int32 *) * Max(batch->ncolumns, 1));
	p = VARDATA_ANY(message) + TYPEALIGN(4, sizeof(MessageHeader));

	for (c = header.first_column; c < header.first_column + header.ncolumns; c++)
	{
		GaColumn   *col = &batch->columns[c];
		int			width = GpuAggBatchColumnDerived(builder, c) || !values ? 0 :
			ga_type_width(col->type);
		ColumnHeader ch;
		int32		i;

		memcpy(&ch, p, sizeof(ch));
		p += TYPEALIGN(4, sizeof(ch));
		for (i = 0; i < ch.ndelta; i++)
		{
			KeyDict    *dict = GpuAggBatchDict(builder, c);
			int32		len;
			Datum		value;

			memcpy(&len, p, sizeof(len));
			p += sizeof(len);
			value = KeyDictValueFromBytes(dict, p, len, GpuAggBatchScratch(builder));
			remap_set(receiver, map, c, ch.delta_first + i,
					  GpuAggBatchInternKey(builder, c, value));
			p += TYPEALIGN(4, len);
		}

		if (width == 8 && GpuAggBatchDict(builder, c) != NULL)
		{
			/* a join key's dictionary id (as int64): the leader's key id */
			KeyDict    *dict = GpuAggBatchDict(builder, c);
			bool		spellings = KeyDictSpellings(dict);
			int64	   *dst = (int64 *) col->values + off;
			const int32 *remap = map->remap[c];
			int32		size = map->remap_size[c];
			int64		r;

			for (r = 0; r < header.nrows; r++)
			{
				int64		id;
				int32		spelling;

				memcpy(&id, p + r * sizeof(int64), sizeof(id));
				spelling = (remap != NULL && id >= 0 && id < size) ? remap[id] : -1;
				dst[r] = spelling < 0 ? 0 : spellings ? KeyDictKey(dict, spelling) : spelling;
			}
		}
		else if (width > 0 && GpuAggBatchDict(builder, c) != NULL)
		{
			/* a dictionary key: the sender's spellings, the leader's keys */
			KeyDict    *dict = GpuAggBatchDict(builder, c);
			int32	   *dst = (int32 *) col->values + off;
			const int32 *remap = map->remap[c];
			int32		size = map->remap_size[c];
			int64		r;

			/*
			 * Text, varchar and uuid have one spelling per key: the spelling
			 * is the key and no rank column reads it (one remap per row, the
			 * leader's bound with a million keys).
			 */
			if (!KeyDictSpellings(dict))
			{
				for (r = 0; r < header.nrows; r++)
				{
					int32		id;

					memcpy(&id, p + r * sizeof(int32), sizeof(id));
					/* ids out of range are those of null rows */
					dst[r] = (remap != NULL && id >= 0 && id < size) ? remap[id] : 0;
				}
			}
			else
			{
				spellings[c] = MemoryContextAlloc(GpuAggBatchScratch(builder),
												  sizeof(int32) * Max(header.nrows, 1));
				for (r = 0; r < header.nrows; r++)
				{
					int32		id;
					int32		spelling;

					memcpy(&id, p + r * sizeof(int32), sizeof(id));
					spelling = (remap != NULL && id >= 0 && id < size) ? remap[id] : -1;
					spellings[c][r] = spelling;
					dst[r] = spelling >= 0 ? KeyDictKey(dict, spelling) : 0;
				}
			}
		}
		else if (width > 0 && GpuAggBatchSpellingSource(builder, c) >= 0)
		{
			/* the row number the sender wrote, with the leader's rank */
			int			key_col = GpuAggBatchSpellingSource(builder, c);
			KeyDict    *dict = GpuAggBatchDict(builder, key_col);
			int64	   *dst = (int64 *) col->values + off;
			int64		r;

			for (r = 0; r < header.nrows; r++)
			{
				int64		v;
				int32		spelling = spellings[key_col][r];

				memcpy(&v, p + r * sizeof(int64), sizeof(v));
				dst[r] = (v & ~GPUAGG_SPELLING_MASK) |
					(spelling >= 0 ? KeyDictRank(dict, spelling) : 0);
			}
		}
		else if (width > 0 && col->type == GA_TYPE_STRING)
		{
			/* the sender's end offsets after the bytes the batch holds */
			uint32		base = ga_string_used(col, off);
			uint32	   *dst = (uint32 *) col->values + off;
			int64		r;

			if ((int64) base + ch.nbytes > col->bytes_capacity)
				elog(ERROR, "gpuagg: the strings of a batch message do not fit");
			memcpy(dst, p, sizeof(uint32) * header.nrows);
			if (base > 0)
				for (r = 0; r < header.nrows; r++)
					dst[r] += base;
			memcpy(col->bytes + base, p + TYPEALIGN(4, width * header.nrows), ch.nbytes);
			p += TYPEALIGN(4, ch.nbytes);
		}
		else if (width > 0)
			memcpy((char *) col->values + off * width, p, width * header.nrows);
		p += TYPEALIGN(4, width * header.nrows);

		if (ch.has_nulls)
		{
			const uint8 *bits = (const uint8 *) p;
			int64		nbytes = (header.nrows + 7) / 8;
			int64		b;

			for (b = 0; b < nbytes; b++)
			{
				int			bit;

				if (bits[b] == 0xFF)
					continue;
				for (bit = 0; bit < 8 && b * 8 + bit < header.nrows; bit++)
					if (!(bits[b] & (1 << bit)))
						ga_column_set_null(col, off + b * 8 + bit);
			}
			p += TYPEALIGN(4, nbytes);
		}
	}
	for (pg = 0; pg < header.npages; pg++)
		p = message_read_page(p, batch, off);
	batch->nrows = off + header.nrows;
}
