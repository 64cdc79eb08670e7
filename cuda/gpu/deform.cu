/*-------------------------------------------------------------------------
 *
 * gpu/deform.cu
 *	  The GPU's heap pages (gpuagg_device.h, "Heap pages"): a request's page
 *	  program in device memory, and the kernel that deforms the visible
 *	  tuples of a batch's page images, already copied to the GPU, into the
 *	  batch's device columns, before the aggregation's kernels read them.
 *
 * One thread block per page, one thread per tuple.  A page with visible
 * offsets gives thread k its k-th offset and row first_row + k; an
 * all-visible page's threads each take a line pointer, and a block-wide
 * exclusive scan of "is normal" gives each normal one its row, in offset
 * order as on the CPU device.  Each thread walks its tuple with
 * page_deform.h (the CPU device's code) and writes the needed attributes:
 * values as the CPU device writes them, a null's validity bit cleared
 * with an atomic AND on its 32-bit word (neighbouring rows share a word)
 * and the column's has_nulls flag raised.  A malformed tuple raises the
 * batch's failure flag, which the caller turns into GA_ERR_INVALID.
 *
 * The page images cross the link as they are (8 kB a page whatever the
 * columns read); the columns are written in device memory only, so the
 * bytes a batch sends are its pages and their descriptions.
 *
 * In an aggregation, a batch's page area lies in its pinned batch after
 * the columns (gpu/input.cu lays it out) and is copied with them, in the
 * same timed copy, to the device's page area; the deform then writes the
 * pages' rows of the device input buffer, where the columns the host
 * filled (the batch's other rows) already are, and the batch's kernels
 * follow on the same stream.  A column pages fill has its bitmap on the
 * device for every batch (set to all valid when the host sent none) and
 * is read with it, since only the GPU knows whether its pages held a
 * null.  A description whose rows lie past the batch, or a malformed
 * tuple, raises the failure flag, which is copied to pinned memory after
 * the deform and read once the batch settles.
 *
 *-------------------------------------------------------------------------
 */
#include "gpu_device.cuh"
#include "page_deform.h"

#include <cub/block/block_scan.cuh>

/* Threads per page: a round of line pointers, at least one per tuple slot. */
#define GPU_DEFORM_THREADS 128

/* Attributes one tuple's walk keeps pointers to (the program's needed ones). */
#define GPU_DEFORM_MAX_SLOTS 64

/* Write the walked tuple's needed attributes as row `row` of the columns. */
static __device__ void
deform_row(const GpuPageProgram prog, const uint8_t *const *values, int64_t row)
{
	int			i;

	for (i = 0; i < prog.ncolumns; i++)
	{
		const GpuDeformColumn *c = &prog.columns[i];
		const uint8_t *p = values[c->slot];

		if (p == NULL)
		{
			atomicAnd(&c->validity[row >> 5], ~(1u << (row & 31)));
			if (*c->has_nulls == 0)
				atomicExch(c->has_nulls, 1);
		}
		if (c->convert == GA_PAGE_VALIDITY || c->values == NULL)
			continue;
		switch (c->type)
		{
			case GA_TYPE_FLOAT32:
				((uint32_t *) c->values)[row] = p != NULL ? ga_page_u32(p, 0) : 0;
				break;
			case GA_TYPE_FLOAT64:
				((uint64_t *) c->values)[row] = p != NULL ?
					((uint64_t) ga_page_u32(p, 0) | ((uint64_t) ga_page_u32(p, 4) << 32)) : 0;
				break;
			default:
				{
					int64_t		v = 0;

					if (p != NULL)
						v = c->attlen == 1 ? (int64_t) (int8_t) p[0] :
							c->attlen == 2 ? (int64_t) (int16_t) ga_page_u16(p, 0) :
							c->attlen == 4 ? (int64_t) (int32_t) ga_page_u32(p, 0) :
							(int64_t) ((uint64_t) ga_page_u32(p, 0) |
									   ((uint64_t) ga_page_u32(p, 4) << 32));
					if (c->type == GA_TYPE_INT8)
						((int8_t *) c->values)[row] = (int8_t) v;
					else if (c->type == GA_TYPE_INT16)
						((int16_t *) c->values)[row] = (int16_t) v;
					else if (c->type == GA_TYPE_INT32)
						((int32_t *) c->values)[row] = (int32_t) v;
					else
						((int64_t *) c->values)[row] = v;
				}
				break;
		}
	}
}

/* Walk the tuple of line pointer lp and write it as row `row`. */
static __device__ void
deform_tuple(const GpuPageProgram prog, const uint8_t *page, uint32_t lp, int64_t row,
			 int *failed)
{
	const uint8_t *values[GPU_DEFORM_MAX_SLOTS];
	uint32_t	len;
	const uint8_t *tup = ga_page_tuple(page, lp, &len);

	if (tup == NULL ||
		!ga_page_tuple_walk(prog.attrs, prog.slots, prog.natts, tup, len, values))
	{
		atomicExch(failed, 1);
		return;
	}
	deform_row(prog, values, row);
}

/* Deform page blockIdx.x of the batch (see the file header). */
static __global__ void
__launch_bounds__(GPU_DEFORM_THREADS)
deform_pages_kernel(const uint8_t *pages, const GaPageDesc *descs, int64_t nrows,
					GpuPageProgram prog, int *failed)
{
	typedef cub::BlockScan<int, GPU_DEFORM_THREADS> Scan;
	__shared__ typename Scan::TempStorage scan;
	__shared__ int	done;
	const uint8_t *page = pages + (size_t) blockIdx.x * GA_PAGE_SIZE;
	const GaPageDesc *d = &descs[blockIdx.x];
	int64_t		first = d->first_row;

	/* the page's rows within the batch's (the whole block returns) */
	if (d->nrows > GA_PAGE_MAX_TUPLES || first + d->nrows > nrows)
	{
		if (threadIdx.x == 0)
			atomicExch(failed, 1);
		return;
	}

	if (!d->all_visible)
	{
		for (int k = threadIdx.x; k < d->nrows; k += GPU_DEFORM_THREADS)
		{
			uint32_t	off = d->offsets[k];

			if (off < 1 || off > ga_page_nitems(page))
				atomicExch(failed, 1);
			else
				deform_tuple(prog, page, ga_page_item(page, off), first + k, failed);
		}
		return;
	}

	uint32_t	nitems = ga_page_nitems(page);

	if (threadIdx.x == 0)
		done = 0;
	__syncthreads();
	for (uint32_t base = 0; base < nitems; base += GPU_DEFORM_THREADS)
	{
		uint32_t	off = base + threadIdx.x + 1;
		uint32_t	lp = off <= nitems ? ga_page_item(page, off) : 0;
		int			normal = off <= nitems && GA_LP_FLAGS(lp) == GA_LP_NORMAL;
		int			before;
		int			total;

		Scan(scan).ExclusiveSum(normal, before, total);
		if (normal)
		{
			if (done + before < d->nrows)
				deform_tuple(prog, page, lp, first + done + before, failed);
			else
				atomicExch(failed, 1);
		}
		__syncthreads();
		if (threadIdx.x == 0)
			done += total;
		__syncthreads();
	}
	if (threadIdx.x == 0 && done != d->nrows)
		atomicExch(failed, 1);
}

/* Free a page program's device memory; safe on a half-built one. */
void
ga_gpu_page_program_free(GpuPageProgram *prog)
{
	if (prog->attrs != NULL)
		ga_gpu_free((void *) prog->attrs);
	memset(prog, 0, sizeof(*prog));
}

/*
 * Copy a validated request's page program to device memory, its columns
 * (of the request's column_types) pointing at the device columns `values`
 * and `validity` (per request column) and at has_nulls (per request
 * column, device ints); 0 with
 * status when out of memory or the program needs more than
 * GPU_DEFORM_MAX_SLOTS attributes.
 */
int
ga_gpu_page_program_create(const GaPageInput *pages, const GaValueType *column_types,
						   void *const *values,
						   uint32_t *const *validity, int *has_nulls, GpuPageProgram *prog,
						   cudaStream_t stream, GaStatus *status)
{
	size_t		attrs_bytes = align_up(sizeof(GaPageAttr) * pages->natts);
	size_t		slots_bytes = align_up(sizeof(int16_t) * pages->natts);
	size_t		columns_bytes = sizeof(GpuDeformColumn) * pages->ncolumns;
	int16_t    *slots = (int16_t *) malloc(sizeof(int16_t) * pages->natts);
	GpuDeformColumn *columns = (GpuDeformColumn *) calloc(pages->ncolumns,
														  sizeof(GpuDeformColumn));
	uint8_t    *mem = NULL;
	int			over_limit = 0;
	int			nslots = 0;
	int			i;

	memset(prog, 0, sizeof(*prog));
	if (slots == NULL || columns == NULL)
	{
		free(slots);
		free(columns);
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory for a page program");
	}
	for (i = 0; i < pages->natts; i++)
		slots[i] = -1;
	for (i = 0; i < pages->ncolumns; i++)
	{
		const GaPageColumn *pc = &pages->columns[i];
		int			a = pc->attnum - 1;

		if (slots[a] < 0)
			slots[a] = (int16_t) nslots++;
		columns[i].slot = slots[a];
		columns[i].convert = pc->convert;
		columns[i].type = column_types[pc->column];
		columns[i].attlen = pages->attrs[a].attlen;
		columns[i].values = values[pc->column];
		columns[i].validity = validity[pc->column];
		columns[i].has_nulls = &has_nulls[pc->column];
	}
	if (nslots > GPU_DEFORM_MAX_SLOTS ||
		ga_gpu_malloc((void **) &mem, attrs_bytes + slots_bytes + columns_bytes,
					  &over_limit) != cudaSuccess)
	{
		free(slots);
		free(columns);
		if (nslots > GPU_DEFORM_MAX_SLOTS)
			return ga_status_set(status, GA_ERR_INVALID,
								 "a page program reads %d attributes; the GPU reads at most %d",
								 nslots, GPU_DEFORM_MAX_SLOTS);
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of GPU memory for a page program");
	}
	prog->attrs = (const GaPageAttr *) mem;
	prog->slots = (const int16_t *) (mem + attrs_bytes);
	prog->columns = (const GpuDeformColumn *) (mem + attrs_bytes + slots_bytes);
	prog->natts = pages->natts;
	prog->ncolumns = pages->ncolumns;
	if (cudaMemcpyAsync(mem, pages->attrs, sizeof(GaPageAttr) * pages->natts,
						cudaMemcpyHostToDevice, stream) != cudaSuccess ||
		cudaMemcpyAsync(mem + attrs_bytes, slots, sizeof(int16_t) * pages->natts,
						cudaMemcpyHostToDevice, stream) != cudaSuccess ||
		cudaMemcpyAsync(mem + attrs_bytes + slots_bytes, columns, columns_bytes,
						cudaMemcpyHostToDevice, stream) != cudaSuccess ||
		cudaStreamSynchronize(stream) != cudaSuccess)
	{
		free(slots);
		free(columns);
		ga_gpu_page_program_free(prog);
		return cuda_error(status, cudaGetLastError(), "copying a page program");
	}
	free(slots);
	free(columns);
	return 1;
}

/*
 * Launch the deform of npages page images at d_pages (device memory),
 * described by d_descs, into the program's columns of a batch of nrows
 * rows, on stream; *failed (a device int the caller zeroed) becomes 1 when
 * a page or tuple is malformed.  0 with status when the launch fails.
 */
int
ga_gpu_deform_pages(const GpuPageProgram *prog, const uint8_t *d_pages,
					const GaPageDesc *d_descs, int64_t npages, int64_t nrows, int *failed,
					cudaStream_t stream, GaStatus *status)
{
	if (npages == 0)
		return 1;
	deform_pages_kernel<<<(unsigned int) npages, GPU_DEFORM_THREADS, 0, stream>>>(
		d_pages, d_descs, nrows, *prog, failed);
	GPU_TRY(cudaGetLastError(), "launching the page deform");
	return 1;
}

/* ------------------------------------------------------------------------
 * An aggregation's pages
 * ------------------------------------------------------------------------
 */

/* Bytes of the device's page area: the images, then the descriptions. */
static size_t
pages_area_bytes(const GpuAgg *agg)
{
	return (size_t) agg->page_capacity * GA_PAGE_SIZE +
		align_up((size_t) agg->page_capacity * sizeof(GaPageDesc));
}

/*
 * Give an aggregation of a validated request with a page program its
 * device page area, the deform's flag and scratch, and the program, whose
 * columns point into the device input buffer (laid out and allocated);
 * 0 with status.
 */
int
ga_gpu_pages_create(GpuAgg *agg, const GaPageInput *pages, GaStatus *status)
{
	void	  **values = (void **) calloc(agg->ncolumns + 1, sizeof(void *));
	uint32_t  **validity = (uint32_t **) calloc(agg->ncolumns + 1, sizeof(uint32_t *));
	int			ok = 0;

	if (values == NULL || validity == NULL)
	{
		ga_status_set(status, GA_ERR_OUT_OF_MEMORY, "out of host memory for a page program");
		goto done;
	}
	for (int c = 0; c < agg->ncolumns; c++)
		if (agg->page_column[c])
		{
			values[c] = agg->needs_values[c] ? agg->dev_input + agg->dev_values_offset[c] : NULL;
			validity[c] = (uint32_t *) (agg->dev_input + agg->dev_validity_offset[c]);
		}
	if (!device_alloc((void **) &agg->dev_pages, pages_area_bytes(agg), "heap pages", status) ||
		!device_alloc((void **) &agg->dev_deform, sizeof(int) * (agg->ncolumns + 1),
					  "the page deform's flags", status) ||
		!pinned_alloc((void **) &agg->host_deform_failed, sizeof(int),
					  "the page deform's flag", status))
		goto done;
	*agg->host_deform_failed = 0;
	ok = ga_gpu_page_program_create(pages, agg->column_types, values, validity,
									agg->dev_deform + 1, &agg->page_program, agg->stream,
									status);
done:
	free(values);
	free(validity);
	return ok;
}

/* Free an aggregation's pages; safe on a half-created one. */
void
ga_gpu_pages_free(GpuAgg *agg)
{
	ga_gpu_page_program_free(&agg->page_program);
	device_free(&agg->dev_pages);
	device_free(&agg->dev_deform);
	pinned_free(agg->host_deform_failed);
	agg->host_deform_failed = NULL;
}

/*
 * Enqueue the copy of a filled batch's pages and their descriptions to the
 * device's page area (within its timed copy); their bytes are added to
 * *bytes_sent.  0 with status when the batch holds more pages than its
 * area.
 */
int
ga_gpu_pages_copy(GpuAgg *agg, const GaBatch *batch, int64_t *bytes_sent, GaStatus *status)
{
	size_t		images = (size_t) batch->npages * GA_PAGE_SIZE;
	size_t		descs = (size_t) batch->npages * sizeof(GaPageDesc);

	if (batch->npages == 0)
		return 1;
	if (batch->npages < 0 || batch->npages > agg->page_capacity)
		return ga_status_set(status, GA_ERR_INVALID,
							 "a batch holds %lld pages but has room for %lld",
							 (long long) batch->npages, (long long) agg->page_capacity);
	GPU_TRY(cudaMemcpyAsync(agg->dev_pages, batch->pages, images, cudaMemcpyHostToDevice,
							agg->stream), "copying a batch's heap pages to the GPU");
	GPU_TRY(cudaMemcpyAsync(agg->dev_pages + (size_t) agg->page_capacity * GA_PAGE_SIZE,
							batch->page_desc, descs, cudaMemcpyHostToDevice, agg->stream),
			"copying a batch's page descriptions to the GPU");
	*bytes_sent += (int64_t) (images + descs);
	return 1;
}

/*
 * Enqueue the deform of a batch's pages (copied) into the device input
 * buffer, and the copy of its failure flag to pinned memory.
 */
int
ga_gpu_pages_deform(GpuAgg *agg, const GaBatch *batch, GaStatus *status)
{
	if (batch->npages == 0)
		return 1;
	GPU_TRY(cudaMemsetAsync(agg->dev_deform, 0, sizeof(int), agg->stream),
			"clearing the page deform's flag");
	if (!ga_gpu_deform_pages(&agg->page_program, agg->dev_pages,
							 (const GaPageDesc *) (agg->dev_pages +
												   (size_t) agg->page_capacity * GA_PAGE_SIZE),
							 batch->npages, batch->nrows, agg->dev_deform, agg->stream, status))
		return 0;
	GPU_TRY(cudaMemcpyAsync(agg->host_deform_failed, agg->dev_deform, sizeof(int),
							cudaMemcpyDeviceToHost, agg->stream),
			"copying the page deform's flag");
	return 1;
}

/*
 * Once the batch on the device settled: 0 with status (GA_ERR_INVALID)
 * when its deform found a malformed page.
 */
int
ga_gpu_pages_check(GpuAgg *agg, GaStatus *status)
{
	if (agg->host_deform_failed == NULL || *(volatile int *) agg->host_deform_failed == 0)
		return 1;
	return ga_status_set(status, GA_ERR_INVALID,
						 "a heap page of a batch is not well formed, or its description is out of bounds");
}
