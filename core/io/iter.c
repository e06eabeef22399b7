/* The shared data-iterator semantics (see iter.h): dispatch through the
 * table, and the checks every kind gets alike. */
#include "core/io/iter.h"

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/profiler/profiler.h"
#include "core/resource/random.h"

struct mxc__iter {
  const mxc__iter_ops *ops;
  void *impl;
};

int mxc__iter_new(const mxc__iter_ops *ops, void *impl, mxc__iter **out) {
  mxc__iter *it = mxc__malloc(sizeof *it);
  if (!it) {
    ops->free(impl);
    return mxc__error_set(MXC_ERR_OOM, "out of memory creating a data iter");
  }
  it->ops = ops;
  it->impl = impl;
  *out = it;
  return MXC_OK;
}

void mxc__iter_free(mxc__iter *it) {
  if (!it) return;
  it->ops->free(it->impl);
  mxc__free(it);
}

/* A batch's preparation as a span of the calling thread's track, named
 * after the iterator's kind. */
static int next_profiled(mxc__iter *it, int *out_has) {
  int64_t t0 = mxc__prof_now();
  int rc = it->ops->next(it->impl, out_has);
  mxc__prof_span(MXC__PROF_IO, it->ops->name, t0, NULL, NULL);
  return rc;
}

int mxc__iter_next(mxc__iter *it, int *out_has) {
  if (mxc__prof_on(MXC__PROF_IO)) return next_profiled(it, out_has);
  return it->ops->next(it->impl, out_has);
}

int mxc__iter_reset(mxc__iter *it) { return it->ops->reset(it->impl); }

int mxc__iter_current(const mxc__iter *it, int want_label,
                      const mxc__ndarray **out) {
  const mxc__ndarray *data = NULL, *label = NULL;
  int64_t pad = 0;
  it->ops->current(it->impl, &data, &label, &pad);
  MXC_RETURN_ERROR_IF(!data, MXC_ERR_INVALID_ARGUMENT,
                      "no current batch (call mxc_data_iter_next first, "
                      "or the epoch has ended)");
  MXC_RETURN_ERROR_IF(want_label && !label, MXC_ERR_NOT_FOUND,
                      "this iterator has no labels (it was created "
                      "without a label column or label file)");
  *out = want_label ? label : data;
  return MXC_OK;
}

int mxc__iter_pad(const mxc__iter *it, int64_t *out) {
  const mxc__ndarray *data = NULL, *label = NULL;
  int64_t pad = 0;
  it->ops->current(it->impl, &data, &label, &pad);
  MXC_RETURN_ERROR_IF(!data, MXC_ERR_INVALID_ARGUMENT, "no current batch");
  *out = pad;
  return MXC_OK;
}

int mxc__iter_num_examples(const mxc__iter *it, int64_t *out) {
  return it->ops->num_examples(it->impl, out);
}

/* The 64-bit draw reduced mod (i + 1) has negligible bias for n < 2^32. */
void mxc__iter_order(int64_t *perm, int64_t n, int shuffle, uint64_t seed,
                     uint64_t epoch) {
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  if (!shuffle) return;
  const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  for (int64_t i = n - 1; i > 0; --i) {
    const uint32_t ctr[4] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32),
                             (uint32_t)epoch, (uint32_t)(epoch >> 32)};
    uint32_t r[4] = {0};
    mxc__philox4x32_10(ctr, key, r);
    uint64_t draw = (uint64_t)r[0] | (uint64_t)r[1] << 32;
    int64_t j = (int64_t)(draw % (uint64_t)(i + 1));
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}
