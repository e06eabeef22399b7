/* Element data types (values are the public MXC_DTYPE_* constants) and
 * storage types (MXC_STYPE_*). */
#ifndef MXC_CORE_BASE_DTYPE_H_
#define MXC_CORE_BASE_DTYPE_H_

#include <stddef.h>

#include "mxc/mxc.h"

/* Bytes per element; 0 for an unknown dtype. */
size_t mxc__dtype_size(int dtype);
/* Static name ("float32"); NULL for an unknown dtype. */
const char *mxc__dtype_name(int dtype);
/* MXC_OK, or MXC_ERR_DTYPE naming `what` and listing the known dtypes. */
int mxc__dtype_check(int dtype, const char *what);

/* Storage-type names indexed by MXC_STYPE_* value ("default",
 * "row_sparse", "csr"), NULL-terminated: the one spelling of each, shared
 * by messages, graph attributes and cast_storage's enum parameter. */
extern const char *const mxc__stype_names[];
/* Static name of a storage type; "unknown" for any other value, so that a
 * message can print whatever it was given. */
const char *mxc__stype_name(int stype);
/* The MXC_STYPE_* value called `name`, or -1. */
int mxc__stype_parse(const char *name);

#endif /* MXC_CORE_BASE_DTYPE_H_ */
