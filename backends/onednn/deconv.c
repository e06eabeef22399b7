/* Deconvolution (transposed convolution) on oneDNN (onednn.h): 1-D to
 * 3-D, groups, dilation, with or without bias, forward and backward, on
 * plain channel-first arrays; layouts inside the primitives are oneDNN's
 * (format tag any) with reorders at the edges (run.c).
 *
 * The geometry comes from the actual shapes: along each axis the largest
 * output is full = stride * (in - 1) + dilate * (kernel - 1) + 1; the
 * left padding is pad, or with target_shape half the trimmed total
 * (rounded up, as ops/linalg/deconv.c derives it); the right padding is
 * what remains, full - out - pad_l. adj larger than pad makes that
 * negative, which oneDNN cannot express: such calls run the reference.
 *
 * Weights: MXNet's (C_in, num_filter / groups, kernel...) is oneDNN's
 * (groups, OC_g, IC_g, kernel...) with the two channel axes swapped,
 * described by strides over the same memory (no copy; the weights cache
 * reorders it once). */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"
#include "ops/linalg/linalg.h"

typedef struct deconv_call {
  const mxc__op *op;
  int nsp;
  dnnl_memory_desc_t src, wei, bias, dst; /* plain (wei: strided) */
  dnnl_dims_t strides, dil, pad_l, pad_r;
  int has_bias;
} deconv_call;

/* Padding along axis i for data extent in and output extent out; 0 when
 * oneDNN cannot express it. */
static int axis_pads(const mxc__conv_param *p, int i, int64_t in, int64_t out,
                     deconv_call *c) {
  int64_t span = p->dilate.d[i] * (p->kernel.d[i] - 1) + 1;
  int64_t full = p->stride.d[i] * (in - 1) + span;
  c->strides[i] = p->stride.d[i];
  c->dil[i] = p->dilate.d[i] - 1;
  c->pad_l[i] =
      p->target_shape.ndim > 0 ? (full - out + 1) / 2 : p->pad.d[i];
  c->pad_r[i] = full - out - c->pad_l[i];
  return c->pad_r[i] >= 0 && c->pad_l[i] >= 0;
}

/* MXNet's weight (G * IC_g, OC_g, k...) as oneDNN's (G, OC_g, IC_g, k...)
 * (no G axis when G is 1). */
static int weight_md(const mxc__op *op, const mxc__shape *w, int64_t g,
                     dnnl_memory_desc_t *md) {
  int64_t icg = w->dims[0] / g, ocg = w->dims[1], k = 1;
  dnnl_dims_t d, s;
  int n = 0, nsp = w->ndim - 2;
  for (int i = 0; i < nsp; ++i) k *= w->dims[2 + i];
  if (g > 1) {
    d[n] = g;
    s[n++] = icg * ocg * k;
  }
  d[n] = ocg;
  s[n++] = k;
  d[n] = icg;
  s[n++] = ocg * k;
  int64_t inner = k;
  for (int i = 0; i < nsp; ++i) {
    inner /= w->dims[2 + i];
    d[n] = w->dims[2 + i];
    s[n++] = inner;
  }
  return mxc__dnnl_check(dnnl_memory_desc_init_by_strides(md, n, d, dnnl_f32,
                                                          s),
                         op, "dnnl_memory_desc_init_by_strides");
}

/* Data x (N, C_in, in...), weight w, output y (N, num_filter, out...). */
static int plan(const mxc__op *op, const mxc__conv_param *p,
                const mxc__shape *x, const mxc__shape *w,
                const mxc__shape *y, deconv_call *c) {
  int nsp = p->kernel.ndim;
  if (nsp < 1 || nsp > 3 || x->ndim != nsp + 2 || y->ndim != nsp + 2 ||
      w->ndim != nsp + 2 || mxc__shape_size(x) == 0 ||
      mxc__shape_size(y) == 0 || w->dims[0] % p->num_group != 0) {
    return MXC_ERR_UNSUPPORTED;
  }
  memset(c, 0, sizeof *c);
  c->op = op;
  c->nsp = nsp;
  for (int i = 0; i < nsp; ++i) {
    if (!axis_pads(p, i, x->dims[2 + i], y->dims[2 + i], c)) {
      return MXC_ERR_UNSUPPORTED;
    }
  }
  c->has_bias = !p->no_bias;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, x, &c->src));
  MXC_FORWARD_IF_ERROR(weight_md(op, w, p->num_group, &c->wei));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, y, &c->dst));
  int64_t f = y->dims[1];
  return c->has_bias ? mxc__dnnl_md_dims(op, 1, &f, &c->bias) : MXC_OK;
}

typedef struct any3 {
  dnnl_memory_desc_t s, w, d;
} any3;

static int any_of(const mxc__op *op, const dnnl_memory_desc_t *plain,
                  dnnl_memory_desc_t *out) {
  return mxc__dnnl_check(
      dnnl_memory_desc_init_by_tag(out, plain->ndims, plain->dims, dnnl_f32,
                                   dnnl_format_tag_any),
      op, "dnnl_memory_desc_init_by_tag");
}

static int any_all(const deconv_call *c, any3 *a) {
  MXC_FORWARD_IF_ERROR(any_of(c->op, &c->src, &a->s));
  MXC_FORWARD_IF_ERROR(any_of(c->op, &c->wei, &a->w));
  return any_of(c->op, &c->dst, &a->d);
}

static int fwd_desc(const deconv_call *c, dnnl_prop_kind_t prop,
                    dnnl_deconvolution_desc_t *d) {
  any3 a;
  MXC_FORWARD_IF_ERROR(any_all(c, &a));
  return mxc__dnnl_check(
      dnnl_dilated_deconvolution_forward_desc_init(
          d, prop, dnnl_deconvolution_direct, &a.s, &a.w,
          c->has_bias ? &c->bias : NULL, &a.d, c->strides, c->dil, c->pad_l,
          c->pad_r),
      c->op, "dnnl_dilated_deconvolution_forward_desc_init");
}

static int build_fwd(void *arg, dnnl_primitive_t *out) {
  const deconv_call *c = arg;
  dnnl_deconvolution_desc_t d;
  MXC_FORWARD_IF_ERROR(fwd_desc(c, dnnl_forward_inference, &d));
  return mxc__dnnl_prim_create(c->op, &d, NULL, NULL, "deconvolution", out);
}

/* A backward primitive for description bd, the training forward its
 * hint. */
static int with_hint(const deconv_call *c, const void *bd, const char *what,
                     dnnl_primitive_t *out) {
  dnnl_deconvolution_desc_t fd;
  MXC_FORWARD_IF_ERROR(fwd_desc(c, dnnl_forward_training, &fd));
  dnnl_primitive_desc_t hint;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_pd_create(
      c->op, &fd, NULL, NULL, "deconvolution forward hint", &hint));
  int rc = mxc__dnnl_prim_create(c->op, bd, NULL, hint, what, out);
  dnnl_primitive_desc_destroy(hint);
  return rc;
}

static int build_bwd_data(void *arg, dnnl_primitive_t *out) {
  const deconv_call *c = arg;
  any3 a;
  MXC_FORWARD_IF_ERROR(any_all(c, &a));
  dnnl_deconvolution_desc_t bd;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_dilated_deconvolution_backward_data_desc_init(
          &bd, dnnl_deconvolution_direct, &a.s, &a.w, &a.d, c->strides,
          c->dil, c->pad_l, c->pad_r),
      c->op, "dnnl_dilated_deconvolution_backward_data_desc_init"));
  return with_hint(c, &bd, "deconvolution backward data", out);
}

static int build_bwd_weights(void *arg, dnnl_primitive_t *out) {
  const deconv_call *c = arg;
  any3 a;
  MXC_FORWARD_IF_ERROR(any_all(c, &a));
  dnnl_deconvolution_desc_t bd;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_dilated_deconvolution_backward_weights_desc_init(
          &bd, dnnl_deconvolution_direct, &a.s, &a.w,
          c->has_bias ? &c->bias : NULL, &a.d, c->strides, c->dil, c->pad_l,
          c->pad_r),
      c->op, "dnnl_dilated_deconvolution_backward_weights_desc_init"));
  return with_hint(c, &bd, "deconvolution backward weights", out);
}

static int get_prim(const deconv_call *c, const char *what,
                    mxc__dnnl_build_fn build, mxc__dnnl_prim **p) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, what);
  mxc__dnnl_key_md(&k, &c->src);
  mxc__dnnl_key_md(&k, &c->wei);
  mxc__dnnl_key_md(&k, &c->dst);
  mxc__dnnl_key_i64(&k, c->has_bias);
  mxc__dnnl_key_bytes(&k, c->strides, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(&k, c->dil, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(&k, c->pad_l, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(&k, c->pad_r, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  return mxc__dnnl_cache_get(&k, build, (void *)c, p);
}

/* ---- forward: (data, weight[, bias]) -> out ---- */

static int run_fwd(const deconv_call *c, const mxc__opctx *ctx,
                   const mxc__blob *in, const mxc__blob *out, mxc__req req) {
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(get_prim(c, "deconv_fwd", build_fwd, &p));
  mxc__dnnl_arg a[4] = {
      {DNNL_ARG_SRC, c->src, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_WEIGHTS, c->wei, in[1].ptr, 0, MXC__REQ_WRITE, NULL,
       mxc__dnnl_version(ctx, 1)},
      {DNNL_ARG_DST, c->dst, out->ptr, 1, req, NULL, 0},
      {DNNL_ARG_BIAS, c->bias, c->has_bias ? in[2].ptr : NULL, 0,
       MXC__REQ_WRITE, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, c->has_bias ? 4 : 3);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int deconv_kernel(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  deconv_call c;
  int rc = plan(op, param, &in[0].shape, &in[1].shape, &out[0].shape, &c);
  if (rc == MXC_OK) {
    int nthr = mxc__dnnl_threads_begin();
    rc = run_fwd(&c, ctx, in, out, req[0]);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    mxc__error_clear();
    return op->compute(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* ---- backward: (ograd, data, weight[, bias]) -> (ddata, dweight[,
 * dbias]) ---- */

static int bwd_data(const deconv_call *c, const mxc__opctx *ctx,
                    const mxc__blob *in, const mxc__blob *out, mxc__req req) {
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(get_prim(c, "deconv_bwd_data", build_bwd_data, &p));
  mxc__dnnl_arg a[3] = {
      {DNNL_ARG_DIFF_DST, c->dst, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_WEIGHTS, c->wei, in[2].ptr, 0, MXC__REQ_WRITE, NULL,
       mxc__dnnl_version(ctx, 2)},
      {DNNL_ARG_DIFF_SRC, c->src, out[0].ptr, 1, req, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, 3);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int bwd_weights(const deconv_call *c, const mxc__blob *in,
                       const mxc__blob *out, const mxc__req *req) {
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(
      get_prim(c, "deconv_bwd_weights", build_bwd_weights, &p));
  mxc__dnnl_arg a[4] = {
      {DNNL_ARG_SRC, c->src, in[1].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_DST, c->dst, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_WEIGHTS, c->wei, out[1].ptr, 1, req[1], NULL, 0},
      {DNNL_ARG_DIFF_BIAS, c->bias, c->has_bias ? out[2].ptr : NULL, 1,
       c->has_bias ? req[2] : MXC__REQ_NULL, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, c->has_bias ? 4 : 3);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int deconv_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                             const void *param, const mxc__blob *in, int n_in,
                             const mxc__blob *out, int n_out,
                             const mxc__req *req) {
  deconv_call c;
  mxc__req r[3] = {req[0], req[1], n_out > 2 ? req[2] : MXC__REQ_NULL};
  int rc = plan(op, param, &in[1].shape, &in[2].shape, &in[0].shape, &c);
  int need_w = r[1] != MXC__REQ_NULL || r[2] != MXC__REQ_NULL;
  if (rc == MXC_OK && (r[0] != MXC__REQ_NULL || need_w)) {
    int nthr = mxc__dnnl_threads_begin();
    if (r[0] != MXC__REQ_NULL) rc = bwd_data(&c, ctx, in, out, r[0]);
    /* ddata done: a fallback below must not write it again */
    if (rc == MXC_OK) r[0] = MXC__REQ_NULL;
    if (rc == MXC_OK && need_w) rc = bwd_weights(&c, in, out, r);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    mxc__error_clear();
    return op->compute(op, ctx, param, in, n_in, out, n_out, r);
  }
  return rc;
}

int mxc__dnnl_attach_deconv(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = mxc__dnnl_conv_supports,
                   .compute = deconv_kernel};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "Deconvolution", &k));
  k.compute = deconv_bwd_kernel;
  return mxc__registry_attach_kernel(r, "_backward_Deconvolution", &k);
}
