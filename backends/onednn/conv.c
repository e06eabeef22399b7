/* Convolution and Deconvolution on oneDNN (onednn.h): 1-D to 3-D, groups,
 * dilation, with or without bias, forward and backward, channel-first
 * arrays in and out. The primitive picks its own layouts (format tag any)
 * for weights, and for data and output unless they are channels-last
 * (core/exec/format.c); run.c reorders at the edges. Post-ops (sum, then an
 * activation) are the fused operators' (_FusedConvolution).
 *
 * MXNet pads both sides by `pad` and drops what does not fit a whole
 * stride at the end; oneDNN wants the right padding that gives the same
 * output, (o - 1) * stride + span - in - pad, which is at most pad but
 * may be negative (a ragged end, as in a ResNet's 1x1 stride-2 shortcut
 * over an even extent): oneDNN takes that as reading less. Empty arrays
 * and anything the library does not implement run on the reference
 * kernel. */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"
#include "ops/linalg/linalg.h"

typedef struct conv_call {
  const mxc__op *op;
  int nsp;
  dnnl_memory_desc_t src, wei, bias, dst; /* plain */
  dnnl_dims_t strides, dil, pad_l, pad_r;
  int has_bias;
  int src_cl, dst_cl; /* channels-last src / dst: given to the primitive */
  int bf16;           /* either is bfloat16: the primitive computes in it */
  int deconv;         /* Deconvolution: oneDNN's deconvolution descriptors */
  const mxc__dnnl_post *post;
  uint64_t w_version;
} conv_call;

/* Geometry of a convolution of data x with weights w giving y;
 * MXC_ERR_UNSUPPORTED (message unused: the caller falls back) when
 * oneDNN cannot express it. */
static int plan(const mxc__op *op, const mxc__conv_param *p,
                const mxc__shape *x, const mxc__shape *w,
                const mxc__shape *y, int xfmt, int yfmt, conv_call *c) {
  int nsp = p->kernel.ndim;
  if (nsp < 1 || nsp > 3 || x->ndim != nsp + 2 || y->ndim != nsp + 2 ||
      w->ndim != nsp + 2 || mxc__shape_size(x) == 0 ||
      mxc__shape_size(y) == 0) {
    return MXC_ERR_UNSUPPORTED;
  }
  c->op = op;
  c->nsp = nsp;
  for (int i = 0; i < nsp; ++i) {
    int64_t span = p->dilate.d[i] * (p->kernel.d[i] - 1) + 1;
    c->strides[i] = p->stride.d[i];
    c->dil[i] = p->dilate.d[i] - 1;
    c->pad_l[i] = p->pad.d[i];
    c->pad_r[i] = (y->dims[2 + i] - 1) * p->stride.d[i] + span -
                  x->dims[2 + i] - p->pad.d[i];
  }
  int64_t g = p->num_group, wd[6];
  int wn = 0;
  if (g > 1) wd[wn++] = g;
  wd[wn++] = w->dims[0] / g;
  for (int i = 1; i < w->ndim; ++i) wd[wn++] = w->dims[i];
  c->has_bias = !p->no_bias;
  c->src_cl = xfmt != MXC__FMT_PLAIN;
  c->dst_cl = yfmt != MXC__FMT_PLAIN;
  c->bf16 = xfmt == MXC__FMT_CHANNELS_LAST_BF16 ||
            yfmt == MXC__FMT_CHANNELS_LAST_BF16;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_fmt(op, x, xfmt, &c->src));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, wn, wd, &c->wei));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_fmt(op, y, yfmt, &c->dst));
  int64_t f = w->dims[0];
  if (c->has_bias) MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 1, &f, &c->bias));
  return MXC_OK;
}

static int any_dt(const mxc__op *op, const dnnl_memory_desc_t *plain,
                  dnnl_data_type_t dt, dnnl_memory_desc_t *out) {
  return mxc__dnnl_check(
      dnnl_memory_desc_init_by_tag(out, plain->ndims, plain->dims, dt,
                                   dnnl_format_tag_any),
      op, "dnnl_memory_desc_init_by_tag");
}

static int any_of(const mxc__op *op, const dnnl_memory_desc_t *plain,
                  dnnl_memory_desc_t *out) {
  return any_dt(op, plain, dnnl_f32, out);
}

/* The forward description with layouts left to oneDNN, except
 * channels-last data and output, which the primitive is made for: they
 * are what the executor keeps between convolutions, so no reorder. A
 * bfloat16 call takes its data and weights in bfloat16 (reordered from
 * float32 where the arrays are) and writes the output's type. */
static int fwd_desc(const conv_call *c, dnnl_prop_kind_t prop,
                    dnnl_convolution_desc_t *cd) {
  dnnl_data_type_t in_dt = c->bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_memory_desc_t s = c->src, w, d = c->dst;
  if (!c->src_cl) MXC_FORWARD_IF_ERROR(any_dt(c->op, &c->src, in_dt, &s));
  MXC_FORWARD_IF_ERROR(any_dt(c->op, &c->wei, in_dt, &w));
  if (!c->dst_cl) MXC_FORWARD_IF_ERROR(any_of(c->op, &c->dst, &d));
  const dnnl_memory_desc_t *b = c->has_bias ? &c->bias : NULL;
  if (c->deconv) {
    return mxc__dnnl_check(
        dnnl_dilated_deconvolution_forward_desc_init(
            cd, prop, dnnl_deconvolution_direct, &s, &w, b, &d, c->strides,
            c->dil, c->pad_l, c->pad_r),
        c->op, "dnnl_dilated_deconvolution_forward_desc_init");
  }
  return mxc__dnnl_check(
      dnnl_dilated_convolution_forward_desc_init(
          cd, prop, dnnl_convolution_direct, &s, &w, b, &d, c->strides,
          c->dil, c->pad_l, c->pad_r),
      c->op, "dnnl_dilated_convolution_forward_desc_init");
}

static int build(void *arg, dnnl_primitive_t *out) {
  const conv_call *c = arg;
  dnnl_convolution_desc_t cd;
  MXC_FORWARD_IF_ERROR(fwd_desc(c, dnnl_forward_inference, &cd));
  dnnl_primitive_attr_t attr;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attr_post(c->op, c->post, &attr));
  int rc = mxc__dnnl_prim_create(c->op, &cd, attr, NULL, "convolution", out);
  dnnl_primitive_attr_destroy(attr);
  return rc;
}

static void make_key(const conv_call *c, const char *what,
                     mxc__dnnl_key *k) {
  mxc__dnnl_key_init(k, what);
  mxc__dnnl_key_md(k, &c->src);
  mxc__dnnl_key_md(k, &c->wei);
  mxc__dnnl_key_md(k, &c->dst);
  mxc__dnnl_key_i64(k, c->has_bias);
  mxc__dnnl_key_i64(k, c->deconv);
  mxc__dnnl_key_bytes(k, c->strides, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(k, c->dil, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(k, c->pad_l, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(k, c->pad_r, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_i64(k, c->post ? c->post->act : 0);
  mxc__dnnl_key_i64(k, c->post && c->post->sum);
  mxc__dnnl_key_i64(k, mxc__dnnl_threads_current());
}

/* The sum post-op's array in the output's format: itself, or a copy
 * reordered into *tmp (the caller frees it: mxc__storage_free) when the
 * formats differ. */
static int sum_init(const conv_call *c, const mxc__blob *out,
                    const void **init, mxc__storage_block *tmp) {
  const mxc__blob *sum = c->post ? c->post->sum : NULL;
  *init = sum ? sum->ptr : NULL;
  if (!sum || sum->fmt == out->fmt) return MXC_OK;
  dnnl_memory_desc_t smd;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_fmt(c->op, &sum->shape, sum->fmt, &smd));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_tmp(c->op, dnnl_memory_desc_get_size(&c->dst),
                                     "reordered sum", tmp));
  *init = tmp->ptr;
  return mxc__dnnl_reorder(c->op, &smd, sum->ptr, &c->dst, tmp->ptr, 0);
}

static int run(const conv_call *c, const mxc__blob *in, const mxc__blob *out,
               mxc__req req) {
  mxc__dnnl_key k;
  make_key(c, "conv_fwd", &k);
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build, (void *)c, &p));
  const void *init;
  mxc__storage_block tmp = {0};
  int rc = sum_init(c, out, &init, &tmp);
  mxc__dnnl_arg a[4] = {
      {DNNL_ARG_SRC, c->src, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_WEIGHTS, c->wei, in[1].ptr, 0, MXC__REQ_WRITE, NULL,
       c->w_version},
      {DNNL_ARG_DST, c->dst, out->ptr, 1, req, init, 0},
      {DNNL_ARG_BIAS, c->bias, c->has_bias ? in[2].ptr : NULL, 0,
       MXC__REQ_WRITE, NULL, 0},
  };
  if (rc == MXC_OK) rc = mxc__dnnl_run(c->op, p, a, c->has_bias ? 4 : 3);
  mxc__storage_free(&tmp);
  mxc__dnnl_cache_put(p);
  return rc;
}

int mxc__dnnl_conv_forward(const mxc__op *op, const mxc__opctx *ctx,
                           const mxc__conv_param *p, const mxc__blob *in,
                           const mxc__blob *out, mxc__req req,
                           const mxc__dnnl_post *post) {
  conv_call c;
  memset(&c, 0, sizeof c);
  int rc = plan(op, p, &in[0].shape, &in[1].shape, &out->shape, in[0].fmt,
                out->fmt, &c);
  if (rc != MXC_OK) return rc;
  c.post = post;
  c.w_version = mxc__dnnl_version(ctx, 1);
  int nthr = mxc__dnnl_threads_begin();
  rc = run(&c, in, out, req);
  mxc__dnnl_threads_end(nthr);
  return rc;
}

/* ---- the Convolution kernel ---- */

static int conv_kernel(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int rc = mxc__dnnl_conv_forward(op, ctx, param, in, out, req[0], NULL);
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* ---- backward: data, then weights and bias ---- */

typedef struct any3 {
  dnnl_memory_desc_t s, w, d;
} any3;

/* A channels-last description of the plain array `plain` describes. */
static int cl_like(const mxc__op *op, const dnnl_memory_desc_t *plain,
                   dnnl_memory_desc_t *out) {
  mxc__shape s = {plain->ndims, {0}};
  for (int i = 0; i < plain->ndims; ++i) s.dims[i] = plain->dims[i];
  return mxc__dnnl_md_fmt(op, &s, MXC__FMT_CHANNELS_LAST, out);
}

/* Backward layouts: oneDNN's choice, except when data and gradients are
 * all channels-last: the primitives are then made for them (as in
 * fwd_desc), since left to oneDNN they come out blocked (nChw16c) and
 * cost a reorder each way. A mix (the first layer's plain 3-channel data,
 * channels-last gradients) is made channels-last on both sides: fixing
 * only one side makes oneDNN 2.6 fall back to its reference kernels, and
 * leaving both to oneDNN reordered the gradient (64 channels; in a
 * ResNet-18 step 25.7M floats, the largest reorder of the step) where
 * now the data (3 channels) is. */
static int any_all(const conv_call *c, any3 *a) {
  if (c->dst_cl && !c->src_cl && !c->bf16) {
    a->d = c->dst;
    MXC_FORWARD_IF_ERROR(cl_like(c->op, &c->src, &a->s));
    return any_of(c->op, &c->wei, &a->w);
  }
  int cl = c->src_cl && c->dst_cl;
  a->s = c->src;
  a->d = c->dst;
  if (!cl) MXC_FORWARD_IF_ERROR(any_of(c->op, &c->src, &a->s));
  MXC_FORWARD_IF_ERROR(any_of(c->op, &c->wei, &a->w));
  return cl ? MXC_OK : any_of(c->op, &c->dst, &a->d);
}

/* The backward primitive for description bd, with the training forward
 * as its hint (oneDNN matches the layouts to it). */
static int with_hint(const conv_call *c, const void *bd, const char *what,
                     dnnl_primitive_t *out) {
  dnnl_convolution_desc_t fd;
  MXC_FORWARD_IF_ERROR(fwd_desc(c, dnnl_forward_training, &fd));
  dnnl_primitive_desc_t hint;
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_pd_create(c->op, &fd, NULL, NULL, "forward hint", &hint));
  int rc = mxc__dnnl_prim_create(c->op, bd, NULL, hint, what, out);
  dnnl_primitive_desc_destroy(hint);
  return rc;
}

static int build_bwd_data(void *arg, dnnl_primitive_t *out) {
  const conv_call *c = arg;
  any3 a;
  MXC_FORWARD_IF_ERROR(any_all(c, &a));
  dnnl_convolution_desc_t bd;
  dnnl_status_t st =
      c->deconv
          ? dnnl_dilated_deconvolution_backward_data_desc_init(
                &bd, dnnl_deconvolution_direct, &a.s, &a.w, &a.d, c->strides,
                c->dil, c->pad_l, c->pad_r)
          : dnnl_dilated_convolution_backward_data_desc_init(
                &bd, dnnl_convolution_direct, &a.s, &a.w, &a.d, c->strides,
                c->dil, c->pad_l, c->pad_r);
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_check(st, c->op, "backward data descriptor init"));
  return with_hint(c, &bd, "backward data", out);
}

static int build_bwd_weights(void *arg, dnnl_primitive_t *out) {
  const conv_call *c = arg;
  any3 a;
  MXC_FORWARD_IF_ERROR(any_all(c, &a));
  dnnl_convolution_desc_t bd;
  const dnnl_memory_desc_t *b = c->has_bias ? &c->bias : NULL;
  dnnl_status_t st =
      c->deconv
          ? dnnl_dilated_deconvolution_backward_weights_desc_init(
                &bd, dnnl_deconvolution_direct, &a.s, &a.w, b, &a.d,
                c->strides, c->dil, c->pad_l, c->pad_r)
          : dnnl_dilated_convolution_backward_weights_desc_init(
                &bd, dnnl_convolution_direct, &a.s, &a.w, b, &a.d, c->strides,
                c->dil, c->pad_l, c->pad_r);
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_check(st, c->op, "backward weights descriptor init"));
  return with_hint(c, &bd, "backward weights", out);
}

/* in: (ograd, data, weight); out: ddata (in its own format). */
static int bwd_data(const conv_call *c, const mxc__opctx *ctx,
                    const mxc__blob *in, const mxc__blob *out, mxc__req req) {
  dnnl_memory_desc_t dsrc;
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_md_fmt(c->op, &out[0].shape, out[0].fmt, &dsrc));
  mxc__dnnl_key k;
  make_key(c, "conv_bwd_data", &k);
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_cache_get(&k, build_bwd_data, (void *)c, &p));
  mxc__dnnl_arg a[3] = {
      {DNNL_ARG_DIFF_DST, c->dst, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_WEIGHTS, c->wei, in[2].ptr, 0, MXC__REQ_WRITE, NULL,
       mxc__dnnl_version(ctx, 2)},
      {DNNL_ARG_DIFF_SRC, dsrc, out[0].ptr, 1, req, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, 3);
  mxc__dnnl_cache_put(p);
  return rc;
}

/* out: (ddata, dweight[, dbias]) with their write modes. */
static int bwd_weights(const conv_call *c, const mxc__blob *in,
                       const mxc__blob *out, const mxc__req *req) {
  mxc__dnnl_key k;
  make_key(c, "conv_bwd_weights", &k);
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_cache_get(&k, build_bwd_weights, (void *)c, &p));
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

/* The backward of call c (rc: how planning it went): (ograd, data,
 * weight[, bias]) -> (ddata, dweight[, dbias]), the same for both
 * operators. What oneDNN turns down runs the reference on what is left. */
static int backward(const conv_call *c, int rc, const mxc__op *op,
                    const mxc__opctx *ctx, const void *param,
                    const mxc__blob *in, int n_in, const mxc__blob *out,
                    int n_out, const mxc__req *req) {
  mxc__req r[3] = {req[0], req[1], n_out > 2 ? req[2] : MXC__REQ_NULL};
  int need_w = r[1] != MXC__REQ_NULL || r[2] != MXC__REQ_NULL;
  if (rc == MXC_OK && (r[0] != MXC__REQ_NULL || need_w)) {
    int nthr = mxc__dnnl_threads_begin();
    if (r[0] != MXC__REQ_NULL) rc = bwd_data(c, ctx, in, out, r[0]);
    /* ddata done: a fallback below must not write it again */
    if (rc == MXC_OK) r[0] = MXC__REQ_NULL;
    if (rc == MXC_OK && need_w) rc = bwd_weights(c, in, out, r);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, r);
  }
  return rc;
}

static int conv_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  conv_call c;
  memset(&c, 0, sizeof c);
  int rc = plan(op, param, &in[1].shape, &in[2].shape, &in[0].shape,
                in[1].fmt, in[0].fmt, &c);
  return backward(&c, rc, op, ctx, param, in, n_in, out, n_out, req);
}

/* _backward_Convolution's ograd, data and ddata. */
static unsigned conv_bwd_fmt_ok(const mxc__op *op, const void *param,
                                int is_out, int i) {
  (void)op;
  (void)param;
  return (is_out ? i == 0 : i <= 1) ? 1u << MXC__FMT_CHANNELS_LAST : 0;
}

/* ---- Deconvolution ----
 *
 * The same machinery with oneDNN's deconvolution descriptors. Along each
 * axis the largest output is full = stride * (in - 1) + dilate *
 * (kernel - 1) + 1; the left padding is pad, or with target_shape half
 * the trimmed total (rounded up, as ops/linalg/deconv.c derives it); the
 * right padding is what remains, full - out - pad_l. adj larger than pad
 * makes that negative, which oneDNN cannot express: the reference runs.
 * MXNet's weight (G * IC_g, OC_g, kernel...) is oneDNN's (G, OC_g, IC_g,
 * kernel...) with the channel axes swapped: described by strides over the
 * same memory, reordered once by the weights cache. */

static int deconv_pads(const mxc__conv_param *p, int i, int64_t in,
                       int64_t out, conv_call *c) {
  int64_t span = p->dilate.d[i] * (p->kernel.d[i] - 1) + 1;
  int64_t full = p->stride.d[i] * (in - 1) + span;
  c->strides[i] = p->stride.d[i];
  c->dil[i] = p->dilate.d[i] - 1;
  c->pad_l[i] =
      p->target_shape.ndim > 0 ? (full - out + 1) / 2 : p->pad.d[i];
  c->pad_r[i] = full - out - c->pad_l[i];
  return c->pad_r[i] >= 0 && c->pad_l[i] >= 0;
}

static int deconv_weight_md(const mxc__op *op, const mxc__shape *w,
                            int64_t g, dnnl_memory_desc_t *md) {
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
  for (int i = 0; i < nsp; ++i) {
    k /= w->dims[2 + i];
    d[n] = w->dims[2 + i];
    s[n++] = k;
  }
  return mxc__dnnl_check(dnnl_memory_desc_init_by_strides(md, n, d, dnnl_f32,
                                                          s),
                         op, "dnnl_memory_desc_init_by_strides");
}

/* Data x (N, C_in, in...), weight w, output y (N, num_filter, out...). */
static int deconv_plan(const mxc__op *op, const mxc__conv_param *p,
                       const mxc__shape *x, const mxc__shape *w,
                       const mxc__shape *y, conv_call *c) {
  int nsp = p->kernel.ndim;
  if (nsp < 1 || nsp > 3 || x->ndim != nsp + 2 || y->ndim != nsp + 2 ||
      w->ndim != nsp + 2 || mxc__shape_size(x) == 0 ||
      mxc__shape_size(y) == 0 || w->dims[0] % p->num_group != 0) {
    return MXC_ERR_UNSUPPORTED;
  }
  c->op = op;
  c->nsp = nsp;
  c->deconv = 1;
  for (int i = 0; i < nsp; ++i) {
    if (!deconv_pads(p, i, x->dims[2 + i], y->dims[2 + i], c)) {
      return MXC_ERR_UNSUPPORTED;
    }
  }
  c->has_bias = !p->no_bias;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, x, &c->src));
  MXC_FORWARD_IF_ERROR(deconv_weight_md(op, w, p->num_group, &c->wei));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, y, &c->dst));
  int64_t f = y->dims[1];
  return c->has_bias ? mxc__dnnl_md_dims(op, 1, &f, &c->bias) : MXC_OK;
}

static int deconv_kernel(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  conv_call c;
  memset(&c, 0, sizeof c);
  int rc = deconv_plan(op, param, &in[0].shape, &in[1].shape, &out[0].shape,
                       &c);
  if (rc == MXC_OK) {
    c.w_version = mxc__dnnl_version(ctx, 1);
    int nthr = mxc__dnnl_threads_begin();
    rc = run(&c, in, out, req[0]);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

static int deconv_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                             const void *param, const mxc__blob *in, int n_in,
                             const mxc__blob *out, int n_out,
                             const mxc__req *req) {
  conv_call c;
  memset(&c, 0, sizeof c);
  int rc = deconv_plan(op, param, &in[1].shape, &in[2].shape, &in[0].shape,
                       &c);
  return backward(&c, rc, op, ctx, param, in, n_in, out, n_out, req);
}

int mxc__dnnl_conv_supports(const mxc__op *op, const void *param,
                            const mxc__call_types *t) {
  const mxc__conv_param *p = param;
  if (!p || !mxc__dnnl_all_f32(t)) return 0;
  int nsp = p->kernel.ndim;
  int lay = p->layout;
  return nsp >= 1 && nsp <= 3 &&
         (lay == MXC__LAYOUT_NONE || lay == MXC__LAYOUT_NCW + nsp - 1);
}

int mxc__dnnl_attach_conv(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = mxc__dnnl_conv_supports,
                   .compute = conv_kernel,
                   .fmt_ok = mxc__dnnl_fmt_data};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "Convolution", &k));
  k.compute = conv_bwd_kernel;
  k.fmt_ok = conv_bwd_fmt_ok;
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_kernel(r, "_backward_Convolution", &k));
  k.fmt_ok = NULL;
  k.compute = deconv_kernel;
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "Deconvolution", &k));
  k.compute = deconv_bwd_kernel;
  return mxc__registry_attach_kernel(r, "_backward_Deconvolution", &k);
}
