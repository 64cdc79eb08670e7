/*-------------------------------------------------------------------------
 *
 * batch/pages.c
 *	  Heap pages as batch input (gpuagg_device.h, "Heap pages"): the page
 *	  program that tells a device how a table's tuples become a batch's
 *	  columns, and a page image copied into a batch with its visible
 *	  tuples.  The direct scan (batch/scan_direct.c) reads the pages.
 *
 * The device reads page images by the offsets of gpuagg_device.h; the
 * static assertions below check them against PostgreSQL's own headers, so
 * that a build for a PostgreSQL whose page or tuple layout differs fails
 * to compile instead of reading wrong bytes.  The bit fields of a line
 * pointer have no such compile-time check, so GpuAggPageInputBuild checks
 * them once at run time.
 *
 * A batch column comes from pages only when its encoding is the
 * attribute's own bytes (integers, dates, timestamps, bool, floats as
 * arguments) or its validity alone; any other column (dictionary and
 * string keys, numerics, float keys, a FILTER clause's mask) keeps the
 * scan on the row path, and the reason is shown by EXPLAIN.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "storage/bufpage.h"
#include "storage/itemid.h"

#include "batch/batch.h"

StaticAssertDecl(BLCKSZ == GA_PAGE_SIZE, "gpuagg reads pages of BLCKSZ bytes");
StaticAssertDecl(MaxHeapTuplesPerPage == GA_PAGE_MAX_TUPLES,
				 "GA_PAGE_MAX_TUPLES is MaxHeapTuplesPerPage");
StaticAssertDecl(offsetof(PageHeaderData, pd_lower) == GA_PAGE_LOWER,
				 "GA_PAGE_LOWER is pd_lower's offset");
StaticAssertDecl(offsetof(PageHeaderData, pd_linp) == GA_PAGE_HEADER &&
				 SizeOfPageHeaderData == GA_PAGE_HEADER,
				 "GA_PAGE_HEADER is the first line pointer's offset");
StaticAssertDecl(sizeof(ItemIdData) == 4 && LP_NORMAL == GA_LP_NORMAL,
				 "a line pointer is 4 bytes, LP_NORMAL 1");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_infomask2) == GA_TUPLE_INFOMASK2 &&
				 offsetof(HeapTupleHeaderData, t_infomask) == GA_TUPLE_INFOMASK &&
				 offsetof(HeapTupleHeaderData, t_hoff) == GA_TUPLE_HOFF &&
				 offsetof(HeapTupleHeaderData, t_bits) == GA_TUPLE_BITS,
				 "the tuple header offsets of gpuagg_device.h");
StaticAssertDecl(HEAP_NATTS_MASK == GA_TUPLE_NATTS_MASK && HEAP_HASNULL == GA_TUPLE_HASNULL,
				 "the tuple header bits of gpuagg_device.h");
StaticAssertDecl(VARTAG_ONDISK == GA_VARTAG_ONDISK &&
				 sizeof(varatt_external) == GA_VARATT_EXTERNAL_SIZE,
				 "a TOAST pointer's tag and size");
StaticAssertDecl(MaxHeapAttributeNumber == GA_PAGE_MAX_ATTRS,
				 "GA_PAGE_MAX_ATTRS is MaxHeapAttributeNumber");
#ifdef WORDS_BIGENDIAN
#error "gpuagg's devices read heap pages as little-endian"
#endif

/* Whether a line pointer's bit fields lie where GA_LP_OFF and friends read them. */
static bool
page_item_layout_ok(void)
{
	ItemIdData	item;
	uint32		word;

	memset(&item, 0, sizeof(item));
	item.lp_off = 0x1234;
	item.lp_flags = LP_NORMAL;
	item.lp_len = 0x567;
	memcpy(&word, &item, sizeof(word));
	return GA_LP_OFF(word) == 0x1234 && GA_LP_FLAGS(word) == LP_NORMAL &&
		GA_LP_LEN(word) == 0x567;
}

/* The alignment in bytes of a pg_attribute.attalign code. */
uint8
GpuAggAttAlignBytes(char attalign)
{
	switch (attalign)
	{
		case TYPALIGN_CHAR:
			return 1;
		case TYPALIGN_SHORT:
			return ALIGNOF_SHORT;
		case TYPALIGN_INT:
			return ALIGNOF_INT;
		case TYPALIGN_DOUBLE:
			return ALIGNOF_DOUBLE;
	}
	elog(ERROR, "gpuagg: unknown attribute alignment '%c'", attalign);
	return 1;					/* keep compiler quiet */
}

/*
 * How batch column `src` comes from attribute att: true with *convert set,
 * or false when its encoding is not the attribute's bytes.
 */
static bool
page_column_convert(const GpuAggColumnSource *src, Form_pg_attribute att,
					GaPageConvert *convert)
{
	int			width = ga_type_width(GpuAggEncodingType(src->encoding));

	*convert = GA_PAGE_COPY;
	switch (src->encoding)
	{
		case GPUAGG_ENC_NONE:
			*convert = GA_PAGE_VALIDITY;
			return true;
		case GPUAGG_ENC_BOOL:
			return src->type == BOOLOID && att->attlen == 1 && att->attbyval;
		case GPUAGG_ENC_INT16:
		case GPUAGG_ENC_INT32:
		case GPUAGG_ENC_INT64:
			return (src->type == INT2OID || src->type == INT4OID || src->type == INT8OID ||
					src->type == DATEOID || src->type == TIMESTAMPOID ||
					src->type == TIMESTAMPTZOID) &&
				att->attbyval && att->attlen <= width;
		case GPUAGG_ENC_FLOAT4:
			return src->type == FLOAT4OID && att->attlen == 4 && att->attbyval;
		case GPUAGG_ENC_FLOAT8:
			return src->type == FLOAT8OID && att->attlen == 8 && att->attbyval;
		default:
			return false;
	}
}

/*
 * The page program of a scan of a table of descriptor tupdesc whose
 * output column i is table column output_attnos[i], for batch columns of
 * sources (the GpuHashAgg's layout), allocated in the current memory
 * context; NULL with *reason when a column cannot come from pages.
 */
GaPageInput *
GpuAggPageInputBuild(TupleDesc tupdesc, const AttrNumber *output_attnos, int noutputs,
					 int ncolumns, const GpuAggColumnSource *sources, int64 batch_rows,
					 const char **reason)
{
	GaPageInput *input;
	GaPageAttr *attrs;
	GaPageColumn *columns;
	int			natts = 0;
	int			n = 0;
	int			c;
	int			i;

	if (!page_item_layout_ok())
	{
		*reason = "line pointers of another layout";
		return NULL;
	}
	if (batch_rows < MaxHeapTuplesPerPage)
	{
		*reason = "batches smaller than a page";
		return NULL;
	}
	columns = palloc0(sizeof(GaPageColumn) * Max(ncolumns, 1));
	for (c = 0; c < ncolumns; c++)
	{
		const GpuAggColumnSource *src = &sources[c];
		AttrNumber	attno;
		Form_pg_attribute att;

		if (src->encoding == GPUAGG_ENC_DERIVED || src->attno == 0)
			continue;			/* computed by the device, or no value */
		if (src->filter_attno != 0)
		{
			*reason = "a FILTER clause";
			return NULL;
		}
		if (src->attno < 1 || src->attno > noutputs)
			elog(ERROR, "gpuagg: batch column %d reads output column %d of %d",
				 c, src->attno, noutputs);
		attno = output_attnos[src->attno - 1];
		att = TupleDescAttr(tupdesc, attno - 1);
		if (!page_column_convert(src, att, &columns[n].convert))
		{
			*reason = "a column the device cannot read from pages";
			return NULL;
		}
		if (att->atthasmissing && columns[n].convert == GA_PAGE_VALIDITY && !att->attbyval)
		{
			*reason = "a column added later with a default";
			return NULL;
		}
		columns[n].column = c;
		columns[n].attnum = attno;
		natts = Max(natts, attno);
		n++;
	}
	if (n == 0)
	{
		*reason = "no column to read";
		return NULL;
	}
	attrs = palloc0(sizeof(GaPageAttr) * natts);
	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		GaPageAttr *a = &attrs[i];

		a->attlen = att->attlen;
		a->alignby = GpuAggAttAlignBytes(att->attalign);
		a->byval = att->attbyval;
		if (att->atthasmissing && att->attbyval && !att->attisdropped)
		{
			bool		isnull;
			Datum		value = getmissingattr(tupdesc, i + 1, &isnull);

			if (!isnull)
			{
				a->has_missing = 1;
				store_att_byval(a->missing, value, att->attlen);
			}
		}
	}
	input = palloc0(sizeof(GaPageInput));
	input->natts = natts;
	input->attrs = attrs;
	input->ncolumns = n;
	input->columns = columns;
	input->page_capacity = 1;	/* the device's, set by the scan for each run */
	*reason = NULL;
	return input;
}

/*
 * Copy a page (its content lock held) to `image`, a page of a batch's page
 * area, and describe it in desc: its n visible tuples fill the batch's
 * rows from first_row on; they are every normal line pointer's when
 * all_visible, else visible[0 .. n).
 */
void
GpuAggPageCopy(uint8 *image, GaPageDesc *desc, Page page, const OffsetNumber *visible, int n,
			   bool all_visible, uint32 first_row)
{
	PageHeader	header = (PageHeader) page;
	char	   *to = (char *) image;
	Size		lower = header->pd_lower;
	Size		upper = header->pd_upper;

	/* the header and line pointers, and the tuples: not the free space between */
	if (lower <= upper && upper <= BLCKSZ)
	{
		memcpy(to, page, lower);
		memcpy(to + upper, (char *) page + upper, BLCKSZ - upper);
	}
	else
		memcpy(to, page, BLCKSZ);
	desc->first_row = first_row;
	desc->nrows = (uint16) n;
	desc->all_visible = all_visible;
	if (!all_visible)
		memcpy(desc->offsets, visible, sizeof(OffsetNumber) * n);
}

/*
 * Copy a page (its content lock held) into the next page of batch, which
 * has room for it and for its n visible tuples (GpuAggPageCopy); the
 * batch's rows grow by n, which the device fills.
 */
void
GpuAggPageAppend(GaBatch *batch, Page page, const OffsetNumber *visible, int n,
				 bool all_visible)
{
	Assert(batch->npages < batch->page_capacity && batch->nrows + n <= batch->capacity);
	GpuAggPageCopy(batch->pages + batch->npages * (int64) BLCKSZ,
				   &batch->page_desc[batch->npages], page, visible, n, all_visible,
				   (uint32) batch->nrows);
	batch->npages++;
	batch->nrows += n;
}

/*
 * Give a local batch (GpuAggLocalBatchCreate) room for page_capacity page
 * images and their descriptions, allocated in cxt when it has less; 0
 * leaves it none (its rows come from the host).
 */
void
GpuAggPageAreaSet(GaBatch *batch, int64 page_capacity, MemoryContext cxt)
{
	if (page_capacity > 0 && (batch->pages == NULL || page_capacity > batch->page_capacity))
	{
		batch->pages = MemoryContextAllocHuge(cxt, page_capacity * (Size) BLCKSZ);
		batch->page_desc = MemoryContextAllocHuge(cxt, page_capacity * sizeof(GaPageDesc));
	}
	batch->page_capacity = page_capacity;
	batch->npages = 0;
}
