/* GPU arrays in a store. As MXNet's "local" store does by default, the
 * store's own arrays (stored value, merge buffer, optimizer states) live in
 * host memory and every sum and update runs there: a GPU value is first
 * copied into a host array (engine work ordered after its writers), and a
 * pull into a GPU array is an engine copy from the stored array. So GPU
 * values work with every store type, dist_sync included (its collectives
 * read host memory), at the price of the copies; reducing on the GPUs
 * themselves (NCCL) is a later step (docs/kvstore.md). */
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/kvstore/internal.h"

int mxc__kv_on_gpu(const mxc__ndarray *a) {
  return a != NULL && a->chunk->dev.type == MXC_DEVICE_GPU;
}

static int count_gpu(int n, mxc__ndarray *const *vals) {
  int g = 0;
  for (int i = 0; vals != NULL && i < n; ++i) g += mxc__kv_on_gpu(vals[i]);
  return g;
}

/* A host array holding a copy of the GPU array v, pushed. */
static int host_copy(const mxc__ndarray *v, mxc__ndarray **out) {
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&v->shape, v->dtype, cpu, 0, out));
  int rc = mxc__ndarray_copy(v, *out);
  if (rc != MXC_OK) {
    mxc__ndarray_free(*out);
    *out = NULL;
  }
  return rc;
}

static int stage_each(int n, mxc__ndarray *const *vals, mxc__kv_staged *s) {
  for (int i = 0; i < n; ++i) {
    s->vals[i] = vals[i];
    if (!mxc__kv_on_gpu(vals[i])) continue;
    MXC_FORWARD_IF_ERROR(host_copy(vals[i], &s->temps[i]));
    s->vals[i] = s->temps[i];
  }
  return MXC_OK;
}

int mxc__kv_stage(int n, mxc__ndarray *const *vals, mxc__kv_staged *s) {
  *s = (mxc__kv_staged){.vals = (mxc__ndarray **)vals};
  if (count_gpu(n, vals) == 0) return MXC_OK; /* nothing to copy */
  s->vals = mxc__calloc((size_t)n, sizeof *s->vals);
  s->temps = mxc__calloc((size_t)n, sizeof *s->temps);
  s->n = n;
  int rc = s->vals && s->temps
               ? stage_each(n, vals, s)
               : mxc__error_set(MXC_ERR_OOM,
                                "out of memory staging %d GPU values", n);
  if (rc != MXC_OK) mxc__kv_staged_free(s);
  return rc;
}

/* The engine work pushed over a temporary holds its own reference. */
void mxc__kv_staged_free(mxc__kv_staged *s) {
  if (s->temps == NULL && s->n == 0) return;
  for (int i = 0; s->temps != NULL && i < s->n; ++i) {
    if (s->temps[i] != NULL) mxc__ndarray_free(s->temps[i]);
  }
  mxc__free(s->temps);
  mxc__free(s->vals);
  *s = (mxc__kv_staged){0};
}

int mxc__kv_copy_out(const mxc__ndarray *src, const mxc__ndarray *dst,
                     int priority, const char *what) {
  if (!mxc__kv_on_gpu(dst)) return mxc__kv_push_copy(src, dst, priority, what);
  int rc = mxc__ndarray_copy(src, dst);
  if (rc != MXC_OK) mxc__error_prefix(what);
  return rc;
}
