/* Probes of the oneDNN backend for test_onednn.cc (probe.h). */
#include "tests/onednn/probe.h"

#include <stdio.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/alloc.h"
#include "core/op/registry.h"
#include "ops/linalg/linalg.h"

void od_reference_only(int on) { (void)mxc__op_set_reference_only(on); }

int64_t od_lookups(void) {
  mxc__dnnl_cache_stats s;
  mxc__dnnl_cache_stats_get(&s);
  return s.hits + s.misses;
}

void od_cache_stats(int *entries, int *capacity, int64_t *hits,
                    int64_t *misses) {
  mxc__dnnl_cache_stats s;
  mxc__dnnl_cache_stats_get(&s);
  *entries = s.entries;
  *capacity = s.capacity;
  *hits = s.hits;
  *misses = s.misses;
}

void od_cache_set_capacity(int capacity) {
  mxc__dnnl_cache_set_capacity(capacity);
}

static int has_onednn(const mxc__op *op) {
  const mxc__kernel *k;
  for (int n = 0; op && (k = mxc__op_kernel_at(op, n)) != NULL; ++n) {
    if (k->backend == &mxc__backend_onednn) return 1;
  }
  return 0;
}

/* The registry lists visible operators; each one's hidden gradient
 * operator (_backward_NAME) is looked up by name. */
const char *od_attached(int i) {
  static char bwd[160];
  for (int j = 0; j < mxc__op_count(); ++j) {
    const mxc__op *op = mxc__op_at(j);
    if (has_onednn(op) && i-- == 0) return op->name;
    snprintf(bwd, sizeof bwd, "_backward_%s", op->name);
    const mxc__op *b = mxc__op_find(bwd);
    if (has_onednn(b) && i-- == 0) return b->name;
  }
  return NULL;
}

int od_enabled(void) { return mxc__dnnl_enabled(); }

void od_weights_stats(int *entries, int64_t *hits, int64_t *misses) {
  mxc__dnnl_weights_stats(entries, hits, misses);
}

void od_pool_ws_stats(int *entries, int64_t *hits, int64_t *misses) {
  mxc__dnnl_pool_ws_stats(entries, hits, misses);
}

static mxc__blob blob(const float *p, const int64_t *dims, int nd) {
  mxc__blob b;
  memset(&b, 0, sizeof b);
  b.ptr = (void *)p;
  b.shape.ndim = nd;
  for (int i = 0; i < nd; ++i) b.shape.dims[i] = dims[i];
  b.dtype = MXC_DTYPE_FLOAT32;
  b.dev.type = MXC_DEVICE_CPU;
  return b;
}

int od_conv_post(const char *const *keys, const char *const *vals, int n,
                 const float *x, const int64_t *xs, const float *w,
                 const int64_t *ws, const float *b, const float *sum,
                 const char *act, float *y, const int64_t *ys, int nd) {
  const mxc__op *op = mxc__op_find("Convolution");
  void *param = NULL;
  int rc = mxc__op_parse_params(op, keys, vals, n, &param);
  if (rc != MXC_OK) return rc;
  const mxc__conv_param *p = param;
  int64_t nf = ws[0];
  mxc__blob in[3] = {blob(x, xs, nd), blob(w, ws, nd), blob(b, &nf, 1)};
  mxc__blob out = blob(y, ys, nd), s = blob(sum, ys, nd);
  mxc__dnnl_post post = {act ? mxc__dnnl_act_of_name(act) : 0,
                         sum ? &s : NULL};
  rc = mxc__dnnl_conv_forward(op, NULL, p, in, &out, MXC__REQ_WRITE, &post);
  mxc__free(param);
  return rc;
}

int od_fc_post(const float *x, const float *w, const float *b,
               const float *sum, const char *act, int64_t rows, int64_t k,
               int64_t h, float *y) {
  const mxc__op *op = mxc__op_find("FullyConnected");
  int64_t xd[2] = {rows, k}, wd[2] = {h, k}, yd[2] = {rows, h};
  mxc__blob bx = blob(x, xd, 2), bw = blob(w, wd, 2), bb = blob(b, &h, 1);
  mxc__blob by = blob(y, yd, 2), bs = blob(sum, yd, 2);
  mxc__dnnl_post post = {act ? mxc__dnnl_act_of_name(act) : 0,
                         sum ? &bs : NULL};
  return mxc__dnnl_inner_product(op, NULL, &bx, &bw, b ? &bb : NULL, rows, k,
                                 &by, MXC__REQ_WRITE, &post);
}
