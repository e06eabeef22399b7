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
  /* A next was called since creation or the last successful reset: the
   * epoch has begun, so its part can no longer change. */
  int started;
};

int mxc__iter_new(const mxc__iter_ops *ops, void *impl, mxc__iter **out) {
  mxc__iter *it = mxc__malloc(sizeof *it);
  if (!it) {
    ops->free(impl);
    return mxc__error_set(MXC_ERR_OOM, "out of memory creating a data iter");
  }
  it->ops = ops;
  it->impl = impl;
  it->started = 0;
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
  it->started = 1;
  if (mxc__prof_on(MXC__PROF_IO)) return next_profiled(it, out_has);
  return it->ops->next(it->impl, out_has);
}

int mxc__iter_reset(mxc__iter *it) {
  MXC_FORWARD_IF_ERROR(it->ops->reset(it->impl));
  it->started = 0;
  return MXC_OK;
}

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

int mxc__iter_set_parts(mxc__iter *it, int64_t num_parts,
                        int64_t part_index) {
  MXC_RETURN_ERROR_IF(num_parts < 1 || num_parts > MXC__ITER_MAX_PARTS,
                      MXC_ERR_INVALID_ARGUMENT,
                      "num_parts is %lld; expected 1 <= num_parts <= %lld",
                      (long long)num_parts, (long long)MXC__ITER_MAX_PARTS);
  MXC_RETURN_ERROR_IF(part_index < 0 || part_index >= num_parts,
                      MXC_ERR_INVALID_ARGUMENT,
                      "part_index is %lld; expected 0 <= part_index < "
                      "num_parts (%lld)",
                      (long long)part_index, (long long)num_parts);
  MXC_RETURN_ERROR_IF(it->started, MXC_ERR_INVALID_ARGUMENT,
                      "the epoch has started; set the part before the first "
                      "mxc_data_iter_next or right after mxc_data_iter_reset");
  MXC_RETURN_ERROR_IF(!it->ops->set_parts, MXC_ERR_UNSUPPORTED,
                      "this kind of iterator (%s) cannot be sharded",
                      it->ops->name);
  return it->ops->set_parts(it->impl, num_parts, part_index);
}

/* n*k/p = (n/p)*k + (n%p)*k/p exactly, and (n%p)*k < p*p <= 2^60 with
 * p <= MXC__ITER_MAX_PARTS, so nothing overflows. */
static int64_t part_start(int64_t n, int64_t p, int64_t k) {
  return n / p * k + n % p * k / p;
}

void mxc__iter_part_range(int64_t n, int64_t num_parts, int64_t part_index,
                          int64_t *lo, int64_t *hi) {
  *lo = part_start(n, num_parts, part_index);
  *hi = part_start(n, num_parts, part_index + 1);
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
