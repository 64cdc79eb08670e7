/*-------------------------------------------------------------------------
 *
 * cpu/gather.c
 *	  Gathering a column of joined rows (cpu/aggjoin.c; cpu_device.h): each
 *	  row's value read from the row of its source that a level names, into
 *	  a joined batch's column, values by their width and strings with their
 *	  bytes.  A row whose source is GA_CPU_NO_ROW, or whose value there is
 *	  null, is null.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_device.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The bytes a joined string column is first given. */
#define CPU_GATHER_MIN_STRING_BYTES 65536

/*
 * Copy element src_row of src into element i of dst, for values of `width`
 * bytes (1, 2, 4 or 8).
 */
static inline void
gather_copy_value(void *dst, int64_t i, const void *src, int64_t src_row, int width)
{
	switch (width)
	{
		case 1:
			((uint8_t *) dst)[i] = ((const uint8_t *) src)[src_row];
			break;
		case 2:
			((uint16_t *) dst)[i] = ((const uint16_t *) src)[src_row];
			break;
		case 4:
			((uint32_t *) dst)[i] = ((const uint32_t *) src)[src_row];
			break;
		default:
			((uint64_t *) dst)[i] = ((const uint64_t *) src)[src_row];
			break;
	}
}

/* See cpu_device.h. */
void
ga_cpu_gather_values(GaColumn *dst, const void *values, const uint8_t *validity,
					 const int64_t *source, const int64_t *rows, int64_t n, int width)
{
	int64_t		i;

	dst->has_nulls = 0;
	memset(dst->validity, 0xff, (size_t) (n + 7) / 8);
	for (i = 0; i < n; i++)
	{
		int64_t		r = source[rows != NULL ? rows[i] : i];

		if (r == GA_CPU_NO_ROW ||
			(validity != NULL && !(validity[r >> 3] & (1u << (r & 7)))))
			ga_column_set_null(dst, i);
		else if (width > 0)
			gather_copy_value(dst->values, i, values, r, width);
	}
}

/*
 * Give string column dst room for `bytes` bytes, keeping none of what it
 * held (a batch's bytes stay below 4 GB).  Returns 0 (status set) when out
 * of memory or past 4 GB.
 */
static int
gather_string_room(GaColumn *dst, int64_t bytes, GaStatus *status)
{
	int64_t		capacity = dst->bytes_capacity > 0 ? dst->bytes_capacity :
		CPU_GATHER_MIN_STRING_BYTES;

	if (bytes <= dst->bytes_capacity)
		return 1;
	if (bytes > (int64_t) UINT32_MAX)
		return ga_status_set(status, GA_ERR_INVALID,
							 "the joined rows of a piece hold more than %lld bytes of a string key",
							 (long long) UINT32_MAX);
	while (capacity < bytes)
		capacity *= 2;
	if (capacity > (int64_t) UINT32_MAX)
		capacity = (int64_t) UINT32_MAX;
	free(dst->bytes);
	dst->bytes_capacity = 0;
	if ((dst->bytes = malloc((size_t) capacity)) == NULL)
		return ga_status_set(status, GA_ERR_OUT_OF_MEMORY,
							 "out of host memory gathering the string keys of joined rows");
	dst->bytes_capacity = capacity;
	return 1;
}

/* See cpu_device.h. */
int
ga_cpu_gather_strings(GaColumn *dst, const GaColumn *src, const int64_t *source,
					  const int64_t *rows, int64_t n, GaStatus *status)
{
	const uint32_t *src_end = src != NULL ? src->values : NULL;
	uint32_t   *end = dst->values;
	int64_t		used = 0;
	int64_t		i;

	for (i = 0; src != NULL && i < n; i++)
	{
		int64_t		r = source[rows != NULL ? rows[i] : i];

		if (r != GA_CPU_NO_ROW)
			used += src_end[r] - ga_string_start(src, r);
	}
	if (!gather_string_room(dst, used, status))
		return 0;
	dst->has_nulls = 0;
	memset(dst->validity, 0xff, (size_t) (n + 7) / 8);
	used = 0;
	for (i = 0; i < n; i++)
	{
		int64_t		r = source[rows != NULL ? rows[i] : i];

		if (r == GA_CPU_NO_ROW || src == NULL || ga_column_is_null(src, r))
			ga_column_set_null(dst, i);
		else
		{
			uint32_t	start = ga_string_start(src, r);
			uint32_t	len = src_end[r] - start;

			memcpy(dst->bytes + used, src->bytes + start, len);
			used += len;
		}
		end[i] = (uint32_t) used;
	}
	return 1;
}
