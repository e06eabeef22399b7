/* IDX files (the MNIST format), plain or gzip-compressed.
 *
 * Layout: bytes 0 0 TYPE NDIM, then NDIM big-endian uint32 extents, then
 * the elements in row-major order, each big-endian. TYPE is one of 0x08
 * uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64.
 * A file starting with 0x1f 0x8b is a gzip stream holding such a file.
 *
 * Every size the header claims is checked against what the file can hold
 * before anything is allocated, so a corrupt header cannot make the reader
 * allocate absurd amounts; every problem is MXC_ERR_IO naming the file.
 *
 * Thread-safety: reading different files concurrently is safe; an
 * mxc__idx is immutable once read. */
#ifndef MXC_CORE_IO_IDX_H_
#define MXC_CORE_IO_IDX_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

typedef struct mxc__idx {
  int type; /* the IDX type byte (0x08 ... 0x0E) */
  int elem_size;
  int ndim;
  int64_t dims[MXC_MAX_NDIM];
  int64_t count;  /* number of elements */
  void *block;    /* owned allocation (mxc__free) */
  const unsigned char *data; /* elements in host byte order, inside block */
} mxc__idx;

/* Reads path into *out (which the caller frees with mxc__idx_free).
 * Errors: MXC_ERR_IO (missing, truncated or corrupt file), MXC_ERR_OOM.
 * *out is untouched on failure. */
int mxc__idx_read(const char *path, mxc__idx *out);

/* Releases the data of an idx read successfully (zeroes it). */
void mxc__idx_free(mxc__idx *idx);

/* Converts elements [begin, begin + n) to float32, times `scale`. The
 * range must lie inside the file's elements. */
void mxc__idx_to_f32(const mxc__idx *idx, int64_t begin, int64_t n,
                     float scale, float *out);

#endif /* MXC_CORE_IO_IDX_H_ */
