/* Pooling forward on oneDNN (onednn.h): max and avg (count_include_pad
 * both ways), 1-D to 3-D, global or windowed with the valid (floor)
 * convention, on plain channel-first arrays.
 *
 * Declined (the reference runs): sum and lp pooling, the full and same
 * conventions, and, at run time, windows that oneDNN would place
 * differently. Under the valid convention every window ends inside the
 * padded input, so the reference's divisor with count_include_pad (the
 * window clipped to the padded input) is the whole kernel, as oneDNN's
 * avg_include_padding divides; the right padding that gives the same
 * output, (o - 1) * stride + kernel - in - pad, must not be negative, and
 * padding must be smaller than the kernel (no window wholly in the
 * padding, which the reference and oneDNN treat differently). */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"

typedef struct pool_call {
  const mxc__op *op;
  int nsp, alg;
  dnnl_memory_desc_t src, dst;
  dnnl_dims_t strides, kernel, pad_l, pad_r;
} pool_call;

static int pool_alg(const mxc__op *op, const void *param) {
  const char *type = mxc__dnnl_param_enum(op, param, "pool_type");
  int cip = 0;
  if (!type || !mxc__dnnl_param_bool(op, param, "count_include_pad", &cip)) {
    return -1;
  }
  if (!strcmp(type, "max")) return dnnl_pooling_max;
  if (!strcmp(type, "avg")) {
    return cip ? dnnl_pooling_avg_include_padding
               : dnnl_pooling_avg_exclude_padding;
  }
  return -1;
}

/* Window geometry along spatial axis i; 0 when oneDNN cannot match. */
static int axis(pool_call *c, const mxc__tuple *k, const mxc__tuple *s,
                const mxc__tuple *pad, int global, const mxc__shape *x,
                const mxc__shape *y, int i) {
  int64_t in = x->dims[2 + i], o = y->dims[2 + i];
  c->kernel[i] = global ? in : k->d[i];
  c->strides[i] = global ? 1 : s->d[i];
  c->pad_l[i] = global ? 0 : pad->d[i];
  c->pad_r[i] = (o - 1) * c->strides[i] + c->kernel[i] - in - c->pad_l[i];
  return c->pad_r[i] >= 0 && c->pad_l[i] < c->kernel[i] &&
         c->pad_r[i] < c->kernel[i];
}

static int plan(const mxc__op *op, const void *param, const mxc__blob *in,
                const mxc__blob *out, pool_call *c) {
  const mxc__tuple *k = mxc__dnnl_param(op, param, "kernel", MXC__P_TUPLE);
  const mxc__tuple *s = mxc__dnnl_param(op, param, "stride", MXC__P_TUPLE);
  const mxc__tuple *pad = mxc__dnnl_param(op, param, "pad", MXC__P_TUPLE);
  int global = 0;
  (void)mxc__dnnl_param_bool(op, param, "global_pool", &global);
  const mxc__shape *x = &in[0].shape, *y = &out[0].shape;
  c->op = op;
  c->nsp = x->ndim - 2;
  c->alg = pool_alg(op, param);
  if (!k || !s || !pad || c->alg < 0 || c->nsp < 1 || c->nsp > 3 ||
      y->ndim != x->ndim || mxc__shape_size(y) == 0 ||
      (!global && k->ndim != c->nsp)) {
    return MXC_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < c->nsp; ++i) {
    if (!axis(c, k, s, pad, global, x, y, i)) return MXC_ERR_UNSUPPORTED;
  }
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, x, &c->src));
  return mxc__dnnl_md_plain(op, y, &c->dst);
}

static int build(void *arg, dnnl_primitive_t *out) {
  const pool_call *c = arg;
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  dnnl_pooling_desc_t d;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_pooling_forward_desc_init(&d, dnnl_forward_inference, c->alg,
                                     &c->src, &c->dst, c->strides, c->kernel,
                                     c->pad_l, c->pad_r),
      c->op, "dnnl_pooling_forward_desc_init"));
  dnnl_primitive_desc_t pd = NULL;
  int rc = mxc__dnnl_check(dnnl_primitive_desc_create(&pd, &d, NULL, eng,
                                                      NULL),
                           c->op, "dnnl_primitive_desc_create (pooling)");
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(dnnl_primitive_create(out, pd), c->op,
                         "dnnl_primitive_create (pooling)");
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  return rc;
}

static int run(const pool_call *c, const mxc__blob *in, const mxc__blob *out,
               mxc__req req) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, "pool_fwd");
  mxc__dnnl_key_md(&k, &c->src);
  mxc__dnnl_key_md(&k, &c->dst);
  mxc__dnnl_key_i64(&k, c->alg);
  size_t n = sizeof(int64_t) * (size_t)c->nsp;
  mxc__dnnl_key_bytes(&k, c->strides, n);
  mxc__dnnl_key_bytes(&k, c->kernel, n);
  mxc__dnnl_key_bytes(&k, c->pad_l, n);
  mxc__dnnl_key_bytes(&k, c->pad_r, n);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build, (void *)c, &p));
  mxc__dnnl_arg a[2] = {
      {DNNL_ARG_SRC, c->src, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DST, c->dst, out[0].ptr, 1, req, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, 2);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int pool_kernel(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  pool_call c;
  memset(&c, 0, sizeof c);
  int rc = plan(op, param, in, out, &c);
  if (rc == MXC_OK) {
    int nthr = mxc__dnnl_threads_begin();
    rc = run(&c, in, out, req[0]);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    mxc__error_clear();
    return op->compute(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

static int pool_supports(const mxc__op *op, const void *param,
                         const mxc__call_types *t) {
  if (!param || !mxc__dnnl_all_f32(t) || pool_alg(op, param) < 0) return 0;
  const char *conv = mxc__dnnl_param_enum(op, param, "pooling_convention");
  const char *layout = mxc__dnnl_param_enum(op, param, "layout");
  int global = 0;
  (void)mxc__dnnl_param_bool(op, param, "global_pool", &global);
  return conv && layout && (global || !strcmp(conv, "valid")) &&
         (!strcmp(layout, "None") || !strncmp(layout, "NC", 2));
}

int mxc__dnnl_attach_pool(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = pool_supports,
                   .compute = pool_kernel};
  return mxc__registry_attach_kernel(r, "Pooling", &k);
}
