/*-------------------------------------------------------------------------
 *
 * gpu/input.cu
 *	  The GPU aggregation's input: which columns the device needs, the
 *	  layout of the two pinned batches and of the device input buffer,
 *	  the copies of a filled batch into that buffer, and the kernels' view
 *	  of the rows it holds (gpu_device.cuh).
 *
 * The device input buffer holds one batch's rows, a values array per
 * column the kernels read and a validity bitmap per column whose nulls
 * they test, at fixed offsets, so that the kernels' descriptions of the
 * columns never change between batches.  A batch's rows get there by
 * copies from a pinned batch (ga_gpu_input_copy_batch) or by an aggjoin's
 * gather (gpu/aggjoin_probe.cu, then ga_gpu_agg_launch_input); either way
 * they are then aggregated by gpu/batch.cu.  Derived columns are never
 * sent: the first kernel of the rows computes them in the buffer, from
 * operands whose bitmaps are always there (a batch's operand or NaN flag
 * column without nulls gets its bitmap set on the device instead).
 *
 * A string column (GA_TYPE_STRING) has its bytes too, string_bytes of
 * them after its validity in a pinned batch, where the caller writes them
 * (in the GPU service, the arena); a string key's bytes go to the device
 * input buffer after its bitmap, one copy of the bytes in use per batch.
 *
 * A request with a page program gives each pinned batch a page area after
 * its columns (page_capacity images, then their descriptions), copied in
 * the same timed copy to the device's own (gpu/deform.cu), which deforms
 * the pages' rows into the device input buffer before the batch's kernels
 * run; a column pages fill always has its bitmap there.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"

#include <string.h>

/*
 * Decide which columns the device needs (values of keys and of aggregate
 * inputs other than COUNT; validity of every key and aggregate input; the
 * values and validity of the operands, and the validity of the NaN flags,
 * of every derived column that is read) and lay out the pinned batches and
 * the device input buffer.
 */
void
ga_gpu_input_layout(GpuAgg *agg)
{
	size_t		host_bytes = 0;
	size_t		dev_bytes = 0;

	for (int k = 0; k < agg->nkeys; k++)
	{
		agg->needs_values[agg->key_columns[k]] = 1;
		agg->needs_validity[agg->key_columns[k]] = 1;
	}
	for (int a = 0; a < agg->naggs; a++)
	{
		const GaAggSpec *spec = &agg->aggs[a];

		if (spec->op == GA_AGG_COUNT_ROWS)
			continue;
		agg->needs_validity[spec->column] = 1;
		if (spec->op != GA_AGG_COUNT)
			agg->needs_values[spec->column] = 1;
		if (spec->op == GA_AGG_COMOMENTS)
		{
			agg->needs_validity[spec->column2] = 1;
			agg->needs_values[spec->column2] = 1;
		}
	}
	ga_gpu_derived_mark_inputs(agg);
	for (int c = 0; c < agg->ncolumns; c++)
		if (agg->page_column[c])
			agg->needs_validity[c] = 1; /* the deform clears its null bits */

	agg->validity_bytes = (size_t) (agg->batch_rows + 7) / 8;
	for (int c = 0; c < agg->ncolumns; c++)
	{
		size_t		values_bytes = (size_t) agg->batch_rows * ga_type_width(agg->column_types[c]);
		size_t		string_bytes = agg->column_types[c] == GA_TYPE_STRING ?
			(size_t) agg->request.string_bytes : 0;
		int			string_key = 0;

		for (int k = 0; k < agg->nkeys; k++)
			if (agg->key_columns[k] == c && string_bytes > 0)
				string_key = 1;

		if (values_bytes == 0)
			agg->needs_values[c] = 0;
		agg->host_values_offset[c] = host_bytes;
		host_bytes += align_up(values_bytes);
		agg->host_validity_offset[c] = host_bytes;
		host_bytes += align_up(agg->validity_bytes);

		agg->dev_values_offset[c] = dev_bytes;
		if (agg->needs_values[c])
			dev_bytes += align_up(values_bytes);
		agg->dev_validity_offset[c] = dev_bytes;
		if (agg->needs_validity[c])
			dev_bytes += align_up(agg->validity_bytes);

		agg->host_bytes_offset[c] = host_bytes;
		host_bytes += align_up(string_bytes);
		agg->dev_bytes_offset[c] = dev_bytes;
		if (string_key)
			dev_bytes += align_up(string_bytes);
	}
	agg->host_pages_offset = host_bytes;
	host_bytes += (size_t) agg->page_capacity * GA_PAGE_SIZE;
	agg->host_page_desc_offset = host_bytes;
	host_bytes += align_up((size_t) agg->page_capacity * sizeof(GaPageDesc));
	agg->host_batch_bytes = host_bytes;
	agg->dev_input_bytes = dev_bytes;
}

/*
 * Empty a pinned batch for the caller: no rows, every validity bit set, no
 * nulls, and the column pointers back on the pinned arrays.
 */
void
ga_gpu_input_reset_batch(GpuAgg *agg, GpuHostBatch *hb)
{
	hb->batch.nrows = 0;
	hb->batch.capacity = agg->batch_rows;
	hb->batch.ncolumns = agg->ncolumns;
	hb->batch.columns = hb->columns;
	hb->batch.npages = 0;
	hb->batch.page_capacity = agg->page_capacity;
	hb->batch.pages = agg->page_capacity > 0 ? hb->pinned + agg->host_pages_offset : NULL;
	hb->batch.page_desc = agg->page_capacity > 0 ?
		(GaPageDesc *) (hb->pinned + agg->host_page_desc_offset) : NULL;
	for (int c = 0; c < agg->ncolumns; c++)
	{
		GaColumn   *column = &hb->columns[c];

		column->type = agg->column_types[c];
		column->values = ga_type_width(column->type) > 0 ?
			hb->pinned + agg->host_values_offset[c] : NULL;
		column->validity = hb->pinned + agg->host_validity_offset[c];
		memset(column->validity, 0xff, agg->validity_bytes);
		column->has_nulls = 0;
		column->bytes = NULL;
		column->bytes_capacity = 0;
		if (column->type == GA_TYPE_STRING)
		{
			column->bytes = hb->pinned + agg->host_bytes_offset[c];
			column->bytes_capacity = agg->request.string_bytes;
		}
	}
}

/*
 * The kernels' view of column c of the rows now in the device input buffer
 * (column_has_nulls tells whether their validity must be read; a derived
 * column's always is, as the derived kernel writes it).
 */
static GaDevColumn
dev_column(const GpuAgg *agg, int c)
{
	GaDevColumn column;

	memset(&column, 0, sizeof(column));
	column.type = agg->column_types[c];
	if (agg->needs_values[c])
		column.values = agg->dev_input + agg->dev_values_offset[c];
	if (agg->needs_validity[c] && (agg->column_has_nulls[c] || agg->column_is_derived[c]))
		column.validity = agg->dev_input + agg->dev_validity_offset[c];
	return column;
}

/* Point the in-flight keys and aggregates at the device input buffer. */
void
ga_gpu_input_point_columns(GpuAgg *agg)
{
	for (int k = 0; k < agg->nkeys; k++)
	{
		agg->inflight_keys.columns[k] = dev_column(agg, agg->key_columns[k]);
		if (agg->inflight_strings.string_of_key[k] >= 0)
			agg->inflight_strings.bytes[k] =
				agg->dev_input + agg->dev_bytes_offset[agg->key_columns[k]];
	}
	for (int a = 0; a < agg->naggs; a++)
	{
		GaDevAgg   *dagg = &agg->inflight_aggs.aggs[a];

		if (agg->aggs[a].op != GA_AGG_COUNT_ROWS)
			dagg->input = dev_column(agg, agg->aggs[a].column);
		if (agg->aggs[a].op == GA_AGG_COMOMENTS)
			agg->inflight_aggs.aggs[dagg->partner].input =
				dev_column(agg, agg->aggs[a].column2);
	}
}

/*
 * Enqueue the copies of a filled batch into the device input buffer (one
 * per needed values array, one per validity bitmap of a column with nulls;
 * a derived column's operand or NaN flag, and a column pages fill, without
 * nulls gets its bitmap set there; derived columns are not sent, nor the
 * columns pages fill when every row of the batch comes from its pages) and
 * of its heap pages into the device's page area, with events around them
 * for the transfer time and the buffer's reuse.
 */
int
ga_gpu_input_copy_batch(GpuAgg *agg, GpuHostBatch *hb, GaStatus *status)
{
	cudaStream_t stream = agg->stream;
	const GaBatch *batch = &hb->batch;
	int64_t		nrows = batch->nrows;
	int64_t		bytes_sent = 0;
	int64_t		page_rows = 0;

	/* a batch of pages only: the columns pages fill have nothing to send */
	for (int64_t p = 0; p < batch->npages && p < agg->page_capacity; p++)
		page_rows += batch->page_desc[p].nrows;
	GPU_TRY(cudaEventRecord(agg->ev_copy_start, stream), "recording an event");
	for (int c = 0; c < agg->ncolumns; c++)
	{
		const GaColumn *column = &batch->columns[c];
		int			from_pages = agg->page_column[c] && batch->npages > 0;

		if (agg->column_is_derived[c])
			continue;			/* computed on the device */
		if (from_pages && page_rows == nrows)
		{
			GPU_TRY(cudaMemsetAsync(agg->dev_input + agg->dev_validity_offset[c], 0xff,
									(size_t) (nrows + 7) / 8, stream),
					"setting a batch's null bitmap on the GPU");
			continue;
		}
		if (agg->needs_values[c])
		{
			size_t		bytes = (size_t) nrows * ga_type_width(agg->column_types[c]);

			GPU_TRY(cudaMemcpyAsync(agg->dev_input + agg->dev_values_offset[c], column->values,
									bytes, cudaMemcpyHostToDevice, stream),
					"copying a batch to the GPU");
			bytes_sent += bytes;
		}
		if (agg->needs_validity[c] && column->has_nulls)
		{
			size_t		bytes = (size_t) (nrows + 7) / 8;

			GPU_TRY(cudaMemcpyAsync(agg->dev_input + agg->dev_validity_offset[c], column->validity,
									bytes, cudaMemcpyHostToDevice, stream),
					"copying a batch's null bitmap to the GPU");
			bytes_sent += bytes;
		}
		else if (agg->derived_input[c] || from_pages)
			GPU_TRY(cudaMemsetAsync(agg->dev_input + agg->dev_validity_offset[c], 0xff,
									(size_t) (nrows + 7) / 8, stream),
					"setting a batch's null bitmap on the GPU");
		if (agg->column_types[c] == GA_TYPE_STRING && agg->needs_values[c] && nrows > 0)
		{
			size_t		bytes = ga_string_used(column, nrows);

			if (bytes > 0)
				GPU_TRY(cudaMemcpyAsync(agg->dev_input + agg->dev_bytes_offset[c],
										column->bytes, bytes, cudaMemcpyHostToDevice,
										stream),
						"copying a batch's strings to the GPU");
			bytes_sent += bytes;
		}
	}
	if (!ga_gpu_pages_copy(agg, batch, &bytes_sent, status))
		return 0;
	GPU_TRY(cudaEventRecord(agg->ev_copy_end, stream), "recording an event");
	GPU_TRY(cudaEventRecord(hb->copied, stream), "recording an event");
	agg->stats.bytes_sent += bytes_sent;
	return 1;
}

/*
 * Aggregate the nrows rows a join gathered into the device input buffer
 * (column_has_nulls set for them): they go in flight like a copied batch,
 * under the strategy chosen for them, their gather's events timed instead
 * of copies.
 */
int
ga_gpu_agg_launch_input(GpuAgg *agg, int64_t nrows, GaWaitCallback wait, void *arg,
						GaStatus *status)
{
	ga_gpu_input_point_columns(agg);
	agg->inflight_copy_timed = 0;
	agg->inflight_gather_timed = 1;
	agg->derived_pending = agg->nprograms > 0;
	return ga_gpu_agg_start_batch(agg, nrows, wait, arg, status);
}
