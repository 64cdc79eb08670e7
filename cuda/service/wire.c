/*-------------------------------------------------------------------------
 *
 * service/wire.c
 *	  An aggregation request as it crosses to the service process: a deep
 *	  copy in one buffer (a slot's payload, or a staging buffer of the
 *	  arena for a large one), the request first and its arrays after it,
 *	  its pointers pointing into the copy itself.  Both processes map the
 *	  buffer at the same address, so the service reads the request where
 *	  it lies, once it has checked that every pointer is where the
 *	  request's counts put it inside the buffer.
 *
 * Layout, each part aligned to 8 bytes: GaAggRequest, column_types
 * [ncolumns], key_columns [nkeys], aggs [naggs], then for an aggjoin its
 * GaAggJoinSpec and from_build [ncolumns], then derived [nderived], then
 * for a request with a page program its GaPageInput, attrs [natts] and
 * columns [its ncolumns].
 *
 *-------------------------------------------------------------------------
 */
#include "service_internal.h"
#include "util.h"

#include <string.h>

/* Largest count of any array the wire takes (keeps sizes in range). */
#define WIRE_MAX_COUNT (1 << 24)

/* Where each part of a request's copy starts, and its end. */
typedef struct WireLayout
{
	size_t		column_types;
	size_t		key_columns;
	size_t		aggs;
	size_t		join;
	size_t		from_build;
	size_t		derived;
	size_t		pages;
	size_t		page_attrs;
	size_t		page_columns;
	size_t		total;
} WireLayout;

/* Round up to 8 bytes. */
static size_t
wire_align(size_t n)
{
	return (n + 7) & ~(size_t) 7;
}

/*
 * Lay out a request of these counts (each within WIRE_MAX_COUNT; a page
 * program's natts and ncolumns 0 without one).
 */
static void
wire_layout(int ncolumns, int nkeys, int naggs, int has_join, int nderived, int has_pages,
			int page_natts, int page_ncolumns, WireLayout *l)
{
	size_t		at = wire_align(sizeof(GaAggRequest));

	l->column_types = at;
	at = wire_align(at + (size_t) ncolumns * sizeof(GaValueType));
	l->key_columns = at;
	at = wire_align(at + (size_t) nkeys * sizeof(int));
	l->aggs = at;
	at = wire_align(at + (size_t) naggs * sizeof(GaAggSpec));
	l->join = at;
	if (has_join)
		at = wire_align(at + sizeof(GaAggJoinSpec));
	l->from_build = at;
	if (has_join)
		at = wire_align(at + (size_t) ncolumns);
	l->derived = at;
	at = wire_align(at + (size_t) nderived * sizeof(GaDerivedColumn));
	l->pages = at;
	if (has_pages)
		at = wire_align(at + sizeof(GaPageInput));
	l->page_attrs = at;
	at = wire_align(at + (size_t) page_natts * sizeof(GaPageAttr));
	l->page_columns = at;
	at = wire_align(at + (size_t) page_ncolumns * sizeof(GaPageColumn));
	l->total = at;
}

/* Lay out a (validated) request. */
static void
wire_layout_of(const GaAggRequest *request, WireLayout *l)
{
	const GaPageInput *pages = request->pages;

	wire_layout(request->ncolumns, request->nkeys, request->naggs, request->join != NULL,
				request->nderived, pages != NULL, pages != NULL ? pages->natts : 0,
				pages != NULL ? pages->ncolumns : 0, l);
}

/* Whether a count is one the wire takes. */
static int
wire_count_ok(int n)
{
	return n >= 0 && n <= WIRE_MAX_COUNT;
}

/* Bytes of the deep copy of a (validated) request. */
size_t
svc_wire_size(const GaAggRequest *request)
{
	WireLayout	l;

	wire_layout_of(request, &l);
	return l.total;
}

/* Copy a (validated) request into buffer (svc_wire_size bytes). */
void
svc_wire_write(const GaAggRequest *request, void *buffer)
{
	unsigned char *base = buffer;
	GaAggRequest *copy = buffer;
	WireLayout	l;

	wire_layout_of(request, &l);
	*copy = *request;
	copy->column_types = (const GaValueType *) (base + l.column_types);
	copy->key_columns = (const int *) (base + l.key_columns);
	copy->aggs = (const GaAggSpec *) (base + l.aggs);
	if (request->ncolumns > 0)
		memcpy(base + l.column_types, request->column_types,
			   (size_t) request->ncolumns * sizeof(GaValueType));
	if (request->nkeys > 0)
		memcpy(base + l.key_columns, request->key_columns, (size_t) request->nkeys * sizeof(int));
	if (request->naggs > 0)
		memcpy(base + l.aggs, request->aggs, (size_t) request->naggs * sizeof(GaAggSpec));
	if (request->join != NULL)
	{
		GaAggJoinSpec *join = (GaAggJoinSpec *) (base + l.join);

		*join = *request->join;
		join->from_build = base + l.from_build;
		if (request->ncolumns > 0)
			memcpy(base + l.from_build, request->join->from_build, (size_t) request->ncolumns);
		copy->join = join;
	}
	copy->derived = NULL;
	if (request->nderived > 0)
	{
		memcpy(base + l.derived, request->derived,
			   (size_t) request->nderived * sizeof(GaDerivedColumn));
		copy->derived = (const GaDerivedColumn *) (base + l.derived);
	}
	copy->pages = NULL;
	if (request->pages != NULL)
	{
		GaPageInput *pages = (GaPageInput *) (base + l.pages);

		*pages = *request->pages;
		memcpy(base + l.page_attrs, request->pages->attrs,
			   (size_t) pages->natts * sizeof(GaPageAttr));
		memcpy(base + l.page_columns, request->pages->columns,
			   (size_t) pages->ncolumns * sizeof(GaPageColumn));
		pages->attrs = (const GaPageAttr *) (base + l.page_attrs);
		pages->columns = (const GaPageColumn *) (base + l.page_columns);
		copy->pages = pages;
	}
}

/*
 * The request in `bytes` of buffer, once its counts are in range and its
 * pointers are exactly where they put them; NULL with status otherwise.
 */
const GaAggRequest *
svc_wire_read(const void *buffer, size_t bytes, GaStatus *status)
{
	const unsigned char *base = buffer;
	const GaAggRequest *request = buffer;
	const GaPageInput *pages;
	WireLayout	l;

	if (bytes < sizeof(GaAggRequest) ||
		!wire_count_ok(request->ncolumns) || !wire_count_ok(request->nkeys) ||
		!wire_count_ok(request->naggs) || !wire_count_ok(request->nderived))
		goto bad;
	pages = request->pages;
	wire_layout(request->ncolumns, request->nkeys, request->naggs, request->join != NULL,
				request->nderived, pages != NULL, 0, 0, &l);
	if (pages != NULL)
	{
		/* the page program's counts lie in the buffer: read them from there */
		if ((const unsigned char *) pages != base + l.pages || l.total > bytes ||
			!wire_count_ok(pages->natts) || !wire_count_ok(pages->ncolumns))
			goto bad;
		wire_layout(request->ncolumns, request->nkeys, request->naggs, request->join != NULL,
					request->nderived, 1, pages->natts, pages->ncolumns, &l);
	}
	if (l.total > bytes ||
		(const unsigned char *) request->column_types != base + l.column_types ||
		(const unsigned char *) request->key_columns != base + l.key_columns ||
		(const unsigned char *) request->aggs != base + l.aggs ||
		(request->join != NULL &&
		 ((const unsigned char *) request->join != base + l.join ||
		  request->join->from_build != base + l.from_build)) ||
		(request->nderived > 0 &&
		 (const unsigned char *) request->derived != base + l.derived) ||
		(request->nderived == 0 && request->derived != NULL) ||
		(pages != NULL &&
		 ((const unsigned char *) pages->attrs != base + l.page_attrs ||
		  (const unsigned char *) pages->columns != base + l.page_columns)))
		goto bad;
	ga_status_ok(status);
	return request;

bad:
	ga_status_set(status, GA_ERR_INVALID,
				  "the GPU service received a malformed aggregation request");
	return NULL;
}
