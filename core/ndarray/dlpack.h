/* Zero-copy exchange with other frameworks through DLPack. */
#ifndef MXC_CORE_NDARRAY_DLPACK_H_
#define MXC_CORE_NDARRAY_DLPACK_H_

#include <dlpack/dlpack.h>

#include "core/ndarray/ndarray.h"

/* See mxc_ndarray_to_dlpack / mxc_ndarray_from_dlpack in mxc.h. */
int mxc__ndarray_to_dlpack(const mxc__ndarray *a, DLManagedTensor **out);
int mxc__ndarray_from_dlpack(DLManagedTensor *t, mxc__ndarray **out);

/* Frees an array just made by mxc__ndarray_from_dlpack (its only
 * reference) without calling the tensor's deleter: for a caller that fails
 * after the import, so the tensor stays its owner's. */
void mxc__ndarray_dlpack_abandon(mxc__ndarray *a);

#endif /* MXC_CORE_NDARRAY_DLPACK_H_ */
