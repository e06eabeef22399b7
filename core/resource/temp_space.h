/* Temporary workspace for operators.
 *
 * A temp space is a growable buffer from the storage pool. It carries no
 * synchronization of its own: the operator layer pairs each temp space
 * with an engine variable and declares that variable as written by every
 * operator that uses the space, so users of one space are serialized.
 * Several spaces per device let independent operators run in parallel.
 *
 * Thread-safety: create/destroy from any thread; request only by the one
 * operator that currently holds write access (see above). */
#ifndef MXC_CORE_RESOURCE_TEMP_SPACE_H_
#define MXC_CORE_RESOURCE_TEMP_SPACE_H_

#include <stddef.h>

#include "core/base/device.h"

typedef struct mxc__temp_space mxc__temp_space;

int mxc__temp_space_create(mxc__device dev, mxc__temp_space **out);
void mxc__temp_space_destroy(mxc__temp_space *t);

/* *out = at least nbytes of 64-byte aligned scratch memory, valid until the
 * next request on t or its destruction. Contents are unspecified. */
int mxc__temp_space_request(mxc__temp_space *t, size_t nbytes, void **out);

/* Bytes currently held by t. */
size_t mxc__temp_space_capacity(const mxc__temp_space *t);

#endif /* MXC_CORE_RESOURCE_TEMP_SPACE_H_ */
