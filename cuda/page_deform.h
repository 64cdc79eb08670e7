/*-------------------------------------------------------------------------
 *
 * page_deform.h
 *	  Reading heap page images (gpuagg_device.h, "Heap pages"): line
 *	  pointers, tuple headers and the walk over a tuple's attributes, as
 *	  PostgreSQL's heap_deform_tuple walks them.  Shared by the CPU device
 *	  and the GPU's deform kernel, so that both read a page the same way.
 *
 * Every read is bounded by the tuple's length from its line pointer: a
 * malformed tuple makes the walk fail instead of reading past it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUAGG_PAGE_DEFORM_H
#define GPUAGG_PAGE_DEFORM_H

#include "gpuagg_device.h"

/* The little-endian uint16 at byte `at` of p. */
GA_INLINE uint32_t
ga_page_u16(const uint8_t *p, uint32_t at)
{
	return (uint32_t) p[at] | ((uint32_t) p[at + 1] << 8);
}

/* The little-endian uint32 at byte `at` of p. */
GA_INLINE uint32_t
ga_page_u32(const uint8_t *p, uint32_t at)
{
	return ga_page_u16(p, at) | (ga_page_u16(p, at + 2) << 16);
}

/* How many line pointers the page has. */
GA_INLINE uint32_t
ga_page_nitems(const uint8_t *page)
{
	uint32_t	lower = ga_page_u16(page, GA_PAGE_LOWER);

	if (lower <= GA_PAGE_HEADER || lower > GA_PAGE_SIZE)
		return 0;
	return (lower - GA_PAGE_HEADER) / 4;
}

/* Line pointer `offnum` (1-based) of the page. */
GA_INLINE uint32_t
ga_page_item(const uint8_t *page, uint32_t offnum)
{
	return ga_page_u32(page, GA_PAGE_HEADER + 4 * (offnum - 1));
}

/*
 * The tuple of line pointer lp, or NULL when the line pointer is not a
 * normal one or points outside the page; *len gets its length.
 */
GA_INLINE const uint8_t *
ga_page_tuple(const uint8_t *page, uint32_t lp, uint32_t *len)
{
	uint32_t	off = GA_LP_OFF(lp);

	*len = GA_LP_LEN(lp);
	if (GA_LP_FLAGS(lp) != GA_LP_NORMAL || *len < GA_TUPLE_BITS ||
		off < GA_PAGE_HEADER || off + *len > GA_PAGE_SIZE)
		return 0;
	return page + off;
}

/*
 * Bytes of the varlena at p (PostgreSQL's VARSIZE_ANY, little-endian): a
 * TOAST pointer, a 1-byte header or a 4-byte one; 0 for a TOAST pointer of
 * a kind no page holds.
 */
GA_INLINE uint32_t
ga_page_varsize(const uint8_t *p)
{
	if (p[0] == 0x01)
		return p[1] == GA_VARTAG_ONDISK ? 2 + GA_VARATT_EXTERNAL_SIZE : 0;
	if (p[0] & 0x01)
		return (p[0] >> 1) & 0x7f;
	return (ga_page_u32(p, 0) >> 2) & 0x3fffffff;
}

/*
 * Walk attributes 1 .. natts of a tuple of len bytes: for each attribute
 * i with slots[i] >= 0, values[slots[i]] gets a pointer to its bytes, or
 * NULL when it is null (a missing attribute's value is its attmissingval,
 * attrs[i].missing).  Returns 0 when the tuple is malformed (a header or
 * an attribute past its end).
 */
GA_INLINE int
ga_page_tuple_walk(const GaPageAttr *attrs, const int16_t *slots, int natts,
				   const uint8_t *tup, uint32_t len, const uint8_t **values)
{
	uint32_t	hoff = tup[GA_TUPLE_HOFF];
	int			tup_natts = (int) (ga_page_u16(tup, GA_TUPLE_INFOMASK2) & GA_TUPLE_NATTS_MASK);
	int			hasnull = (ga_page_u16(tup, GA_TUPLE_INFOMASK) & GA_TUPLE_HASNULL) != 0;
	const uint8_t *bits = tup + GA_TUPLE_BITS;
	const uint8_t *data = tup + hoff;
	uint32_t	size = len - hoff;
	uint32_t	off = 0;
	int			i;

	if (hoff > len || (hasnull && GA_TUPLE_BITS + ((uint32_t) tup_natts + 7) / 8 > hoff))
		return 0;
	for (i = 0; i < natts; i++)
	{
		const GaPageAttr *a = &attrs[i];
		const uint8_t *p;

		if (i >= tup_natts)
		{
			if (slots[i] >= 0)
				values[slots[i]] = a->has_missing ? a->missing : 0;
			continue;
		}
		if (hasnull && !(bits[i >> 3] & (1u << (i & 7))))
		{
			if (slots[i] >= 0)
				values[slots[i]] = 0;
			continue;
		}
		if (a->attlen > 0)
		{
			off = (off + a->alignby - 1) & ~(uint32_t) (a->alignby - 1);
			if (off + (uint32_t) a->attlen > size)
				return 0;
			p = data + off;
			off += (uint32_t) a->attlen;
		}
		else if (a->attlen == -1)
		{
			uint32_t	vsize;

			if (off >= size)
				return 0;
			/* a 1-byte header is never padded: a pad byte is 0 */
			if (data[off] == 0)
				off = (off + a->alignby - 1) & ~(uint32_t) (a->alignby - 1);
			if (off >= size || (data[off] == 0x01 ? off + 2 > size :
								!(data[off] & 0x01) && off + 4 > size))
				return 0;
			p = data + off;
			vsize = ga_page_varsize(p);
			if (vsize == 0 || off + vsize > size)
				return 0;
			off += vsize;
		}
		else
		{
			off = (off + a->alignby - 1) & ~(uint32_t) (a->alignby - 1);
			p = data + off;
			while (off < size && data[off] != 0)
				off++;
			if (off >= size)
				return 0;
			off++;
		}
		if (slots[i] >= 0)
			values[slots[i]] = p;
	}
	return 1;
}

#endif							/* GPUAGG_PAGE_DEFORM_H */
