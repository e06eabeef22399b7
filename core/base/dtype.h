/* Element data types (values are the public MXC_DTYPE_* constants). */
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

#endif /* MXC_CORE_BASE_DTYPE_H_ */
