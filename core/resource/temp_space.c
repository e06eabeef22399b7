/* Temporary workspace: one storage block that only grows (see
 * temp_space.h). */
#include "core/resource/temp_space.h"

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/storage/storage.h"

struct mxc__temp_space {
  mxc__device dev;
  mxc__storage_block block; /* ptr NULL until the first request */
};

int mxc__temp_space_create(mxc__device dev, mxc__temp_space **out) {
  MXC_RETURN_ERROR_IF(out == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__temp_space_create: out is NULL");
  MXC_FORWARD_IF_ERROR(
      mxc__device_check(dev.type, dev.id, "temp space device"));
  mxc__temp_space *t = mxc__calloc(1, sizeof *t);
  MXC_RETURN_ERROR_IF(t == NULL, MXC_ERR_OOM,
                      "out of memory: cannot allocate a temp space");
  t->dev = dev;
  *out = t;
  return MXC_OK;
}

void mxc__temp_space_destroy(mxc__temp_space *t) {
  if (t == NULL) return;
  mxc__storage_free(&t->block);
  mxc__free(t);
}

/* The new block is allocated before the old one is freed: contents need
 * no copy, but on OOM the caller keeps a valid buffer. Growth is to the
 * request itself; the pool's size class adds up to 25% headroom. */
int mxc__temp_space_request(mxc__temp_space *t, size_t nbytes, void **out) {
  MXC_RETURN_ERROR_IF(t == NULL || out == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__temp_space_request: %s is NULL",
                      t == NULL ? "the temp space" : "out");
  if (t->block.ptr == NULL || nbytes > t->block.class_size) {
    mxc__storage_block grown;
    MXC_FORWARD_IF_ERROR(mxc__storage_alloc(t->dev, nbytes, &grown));
    mxc__storage_free(&t->block);
    t->block = grown;
  }
  *out = t->block.ptr;
  return MXC_OK;
}

size_t mxc__temp_space_capacity(const mxc__temp_space *t) {
  return t ? t->block.class_size : 0;
}
