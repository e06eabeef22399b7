/* Apache MXNet's NDArray list format (the .params files of MXNet
 * checkpoints), read and written. The layout is specified in
 * docs/mxnet-format.md; keep the two in step.
 *
 * Readers take their bytes from a file or from memory (the fuzz target)
 * through one bounds-checked cursor: every count and size read from the
 * bytes is checked against what is left before anything is allocated, so
 * a short or corrupted input is MXC_ERR_IO naming the input and the byte
 * offset, never a crash or a huge allocation. */
#ifndef MXC_CORE_NDARRAY_MXNET_FORMAT_H_
#define MXC_CORE_NDARRAY_MXNET_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/file.h"
#include "core/ndarray/io.h"

/* The first 8 bytes of every list: 0x112 as a little-endian uint64. */
#define MXC__MXNET_LIST_MAGIC UINT64_C(0x112)

/* Reads a whole list from n bytes at buf; name is used in messages. */
int mxc__mxnet_load_mem(const void *buf, size_t n, const char *name,
                        mxc__ndarray_list **out);

/* Reads a list from an open file of `size` bytes whose first `consumed`
 * bytes the caller has read already: 0, or 8 when it has checked the list
 * magic itself (format detection). */
int mxc__mxnet_load_file(mxc__file *f, const char *path, uint64_t size,
                         uint64_t consumed, mxc__ndarray_list **out);

/* MXC_OK when the arrays can be written in MXNet's format (dense, csr and
 * row_sparse; a 0-d array needs MXNet's v3 layout, which holds dense arrays
 * only), else MXC_ERR_STYPE naming the arrays. */
int mxc__mxnet_check_save(mxc__ndarray *const *arrays, int n);

/* Writes the list to f: names NULL writes an unnamed list. The arrays must
 * be allocated and have no pending writes. */
int mxc__mxnet_write(mxc__file *f, mxc__ndarray *const *arrays,
                     const char *const *names, int n);

#endif /* MXC_CORE_NDARRAY_MXNET_FORMAT_H_ */
