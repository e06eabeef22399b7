/* Saving and loading named lists of arrays (docs/ndarray-format.md). */
#ifndef MXC_CORE_NDARRAY_IO_H_
#define MXC_CORE_NDARRAY_IO_H_

#include "core/ndarray/ndarray.h"

typedef struct mxc__ndarray_list {
  int n;
  mxc__ndarray **arrays; /* n owned views */
  char **names;          /* n owned strings ("" when unnamed) */
} mxc__ndarray_list;

/* Writes arrays[0..n) with names (NULL: all unnamed) to path atomically. */
int mxc__ndarray_save(const char *path, mxc__ndarray *const *arrays,
                      const char *const *names, int n);

/* The same in a chosen format: MXC_FILE_FORMAT_MXC (the above) or
 * MXC_FILE_FORMAT_MXNET (Apache MXNet's NDArray list, mxnet_format.h). */
int mxc__ndarray_save_format(const char *path, mxc__ndarray *const *arrays,
                             const char *const *names, int n, int format);

/* Reads a file written by mxc__ndarray_save or an MXNet NDArray list (told
 * apart by their first bytes) into a new list. */
int mxc__ndarray_load(const char *path, mxc__ndarray_list **out);

/* The same from n bytes in memory (buf borrowed for the call); name
 * stands for the path in messages. */
int mxc__ndarray_load_mem(const void *buf, size_t n, const char *name,
                          mxc__ndarray_list **out);

void mxc__ndarray_list_free(mxc__ndarray_list *list);

#endif /* MXC_CORE_NDARRAY_IO_H_ */
