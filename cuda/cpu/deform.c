/*-------------------------------------------------------------------------
 *
 * cpu/deform.c
 *	  The CPU device's heap pages (gpuagg_device.h, "Heap pages";
 *	  cpu_device.h): the visible tuples of the pages a batch carries
 *	  deformed into its columns when the batch is submitted, before the
 *	  aggregation (cpu/hashagg.c) reads them.
 *
 * A page's tuples are walked by page_deform.h, the code the GPU's deform
 * kernel also runs, so both devices read a page alike; each needed
 * attribute's bytes are then written into the columns of the page
 * program.  Rows are the page's rows [first_row, first_row + nrows), in
 * offset order.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "page_deform.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct CpuPagePlan
{
	int			natts;
	GaPageAttr *attrs;
	int16_t    *slots;			/* per attribute: its values[] entry, or -1 */
	int			ncolumns;
	GaPageColumn *columns;
	int		   *column_slot;	/* per column: its attribute's values[] entry */
	int			nslots;
	const uint8_t **values;		/* per needed attribute: the current tuple's */
};

/* Free a page plan; NULL is allowed. */
void
ga_cpu_page_plan_free(CpuPagePlan *plan)
{
	if (plan == NULL)
		return;
	free(plan->attrs);
	free(plan->slots);
	free(plan->columns);
	free(plan->column_slot);
	free(plan->values);
	free(plan);
}

/* The page program of a validated request, copied; NULL when out of memory. */
CpuPagePlan *
ga_cpu_page_plan_create(const GaPageInput *pages)
{
	CpuPagePlan *plan = calloc(1, sizeof(CpuPagePlan));
	int			i;

	if (plan == NULL)
		return NULL;
	plan->natts = pages->natts;
	plan->ncolumns = pages->ncolumns;
	plan->attrs = ga_alloc_array(pages->natts, sizeof(GaPageAttr));
	plan->slots = ga_alloc_array(pages->natts, sizeof(int16_t));
	plan->columns = ga_alloc_array(pages->ncolumns, sizeof(GaPageColumn));
	plan->column_slot = ga_alloc_array(pages->ncolumns, sizeof(int));
	plan->values = ga_alloc_array(pages->ncolumns, sizeof(const uint8_t *));
	if (plan->attrs == NULL || plan->slots == NULL || plan->columns == NULL ||
		plan->column_slot == NULL || plan->values == NULL)
	{
		ga_cpu_page_plan_free(plan);
		return NULL;
	}
	memcpy(plan->attrs, pages->attrs, sizeof(GaPageAttr) * pages->natts);
	memcpy(plan->columns, pages->columns, sizeof(GaPageColumn) * pages->ncolumns);
	for (i = 0; i < pages->natts; i++)
		plan->slots[i] = -1;
	for (i = 0; i < pages->ncolumns; i++)
	{
		int			a = pages->columns[i].attnum - 1;

		if (plan->slots[a] < 0)
			plan->slots[a] = (int16_t) plan->nslots++;
		plan->column_slot[i] = plan->slots[a];
	}
	return plan;
}

/* The value of attribute bytes p of length attlen, sign-extended. */
static inline int64_t
cpu_page_int(const uint8_t *p, int attlen)
{
	switch (attlen)
	{
		case 1:
			return (int8_t) p[0];
		case 2:
			return (int16_t) ga_page_u16(p, 0);
		case 4:
			return (int32_t) ga_page_u32(p, 0);
		default:
			return (int64_t) ((uint64_t) ga_page_u32(p, 0) |
							  ((uint64_t) ga_page_u32(p, 4) << 32));
	}
}

/* Write the current tuple's needed attributes as row `row` of the columns. */
static void
cpu_page_row(const CpuPagePlan *plan, GaBatch *batch, int64_t row)
{
	int			i;

	for (i = 0; i < plan->ncolumns; i++)
	{
		const GaPageColumn *pc = &plan->columns[i];
		GaColumn   *col = &batch->columns[pc->column];
		const uint8_t *p = plan->values[plan->column_slot[i]];
		int			attlen = plan->attrs[pc->attnum - 1].attlen;
		int64_t		v;

		if (p == NULL)
			ga_column_set_null(col, row);
		if (pc->convert == GA_PAGE_VALIDITY)
			continue;
		switch (col->type)
		{
			case GA_TYPE_FLOAT32:
				if (p != NULL)
					memcpy((float *) col->values + row, p, sizeof(float));
				else
					((float *) col->values)[row] = 0;
				break;
			case GA_TYPE_FLOAT64:
				if (p != NULL)
					memcpy((double *) col->values + row, p, sizeof(double));
				else
					((double *) col->values)[row] = 0;
				break;
			default:
				v = p != NULL ? cpu_page_int(p, attlen) : 0;
				switch (col->type)
				{
					case GA_TYPE_INT8:
						((int8_t *) col->values)[row] = (int8_t) v;
						break;
					case GA_TYPE_INT16:
						((int16_t *) col->values)[row] = (int16_t) v;
						break;
					case GA_TYPE_INT32:
						((int32_t *) col->values)[row] = (int32_t) v;
						break;
					default:
						((int64_t *) col->values)[row] = v;
						break;
				}
				break;
		}
	}
}

/* Walk the tuple of line pointer lp and write it as row `row`; 0 if malformed. */
static int
cpu_page_tuple(const CpuPagePlan *plan, const uint8_t *page, uint32_t lp, GaBatch *batch,
			   int64_t row)
{
	uint32_t	len;
	const uint8_t *tup = ga_page_tuple(page, lp, &len);

	if (tup == NULL ||
		!ga_page_tuple_walk(plan->attrs, plan->slots, plan->natts, tup, len, plan->values))
		return 0;
	cpu_page_row(plan, batch, row);
	return 1;
}

/*
 * Deform the visible tuples of the batch's pages into its columns; 0 with
 * status (GA_ERR_INVALID) when a page's description or a tuple is out of
 * bounds.
 */
int
ga_cpu_deform_pages(const CpuPagePlan *plan, GaBatch *batch, GaStatus *status)
{
	int64_t		p;

	if (batch->npages < 0 || batch->npages > batch->page_capacity)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch holds %lld pages but has room for %lld",
							 (long long) batch->npages, (long long) batch->page_capacity);
	for (p = 0; p < batch->npages; p++)
	{
		const GaPageDesc *desc = &batch->page_desc[p];
		const uint8_t *page = batch->pages + p * GA_PAGE_SIZE;
		uint32_t	nitems = ga_page_nitems(page);
		int64_t		row = desc->first_row;
		uint32_t	k;

		if (desc->nrows > GA_PAGE_MAX_TUPLES || row + desc->nrows > batch->nrows)
			return ga_status_set(status, GA_ERR_INVALID,
								 "page %lld of a batch has rows past the batch's %lld",
								 (long long) p, (long long) batch->nrows);
		if (desc->all_visible)
		{
			uint32_t	off;

			for (off = 1, k = 0; off <= nitems; off++)
			{
				uint32_t	lp = ga_page_item(page, off);

				if (GA_LP_FLAGS(lp) != GA_LP_NORMAL)
					continue;
				if (k == desc->nrows || !cpu_page_tuple(plan, page, lp, batch, row + k))
					break;
				k++;
			}
			if (off <= nitems || k != desc->nrows)
				return ga_status_set(status, GA_ERR_INVALID,
									 "page %lld of a batch does not hold the %d tuples its description says",
									 (long long) p, (int) desc->nrows);
			continue;
		}
		for (k = 0; k < desc->nrows; k++)
		{
			uint32_t	off = desc->offsets[k];

			if (off < 1 || off > nitems ||
				!cpu_page_tuple(plan, page, ga_page_item(page, off), batch, row + k))
				return ga_status_set(status, GA_ERR_INVALID,
									 "line pointer %u of page %lld of a batch is not a well-formed tuple",
									 off, (long long) p);
		}
	}
	return 1;
}
