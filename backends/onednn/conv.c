/* Convolution forward on oneDNN (onednn.h): 1-D to 3-D, groups,
 * dilation, with or without bias, channel-first plain arrays in and out.
 * The primitive picks its own layouts (format tag any) for data, weights
 * and output; run.c reorders at the edges. Post-ops (sum, then an
 * activation) are the fused operators' (_FusedConvolution).
 *
 * MXNet pads both sides by `pad` and drops what does not fit a whole
 * stride at the end; oneDNN wants the right padding that gives the same
 * output, (o - 1) * stride + span - in - pad, which is at most pad but
 * may be negative (pad smaller than stride - 1 with a ragged end): such
 * calls, empty arrays and anything the library does not implement run on
 * the reference kernel. */
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
  const mxc__dnnl_post *post;
  uint64_t w_version;
} conv_call;

/* Geometry of the call; MXC_ERR_UNSUPPORTED (message unused: the caller
 * falls back) when oneDNN cannot express it. */
static int plan(const mxc__op *op, const mxc__conv_param *p,
                const mxc__blob *in, const mxc__blob *out, conv_call *c) {
  int nsp = p->kernel.ndim;
  const mxc__shape *x = &in[0].shape, *y = &out->shape;
  if (nsp < 1 || nsp > 3 || x->ndim != nsp + 2 || y->ndim != nsp + 2 ||
      mxc__shape_size(x) == 0 || mxc__shape_size(y) == 0) {
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
    if (c->pad_r[i] < 0) return MXC_ERR_UNSUPPORTED;
  }
  int64_t g = p->num_group, wd[6];
  int wn = 0;
  const mxc__shape *w = &in[1].shape;
  if (g > 1) wd[wn++] = g;
  wd[wn++] = w->dims[0] / g;
  for (int i = 1; i < w->ndim; ++i) wd[wn++] = w->dims[i];
  c->has_bias = !p->no_bias;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, x, &c->src));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, wn, wd, &c->wei));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, y, &c->dst));
  if (c->has_bias) {
    MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, &in[2].shape, &c->bias));
  }
  return MXC_OK;
}

static int any_of(const mxc__op *op, const dnnl_memory_desc_t *plain,
                  dnnl_memory_desc_t *out) {
  return mxc__dnnl_check(
      dnnl_memory_desc_init_by_tag(out, plain->ndims, plain->dims, dnnl_f32,
                                   dnnl_format_tag_any),
      op, "dnnl_memory_desc_init_by_tag");
}

static int build(void *arg, dnnl_primitive_t *out) {
  const conv_call *c = arg;
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  dnnl_memory_desc_t s, w, d;
  MXC_FORWARD_IF_ERROR(any_of(c->op, &c->src, &s));
  MXC_FORWARD_IF_ERROR(any_of(c->op, &c->wei, &w));
  MXC_FORWARD_IF_ERROR(any_of(c->op, &c->dst, &d));
  dnnl_convolution_desc_t cd;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_dilated_convolution_forward_desc_init(
          &cd, dnnl_forward_inference, dnnl_convolution_direct, &s, &w,
          c->has_bias ? &c->bias : NULL, &d, c->strides, c->dil, c->pad_l,
          c->pad_r),
      c->op, "dnnl_dilated_convolution_forward_desc_init"));
  dnnl_primitive_attr_t attr;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attr_post(c->op, c->post, &attr));
  dnnl_primitive_desc_t pd = NULL;
  int rc = mxc__dnnl_check(dnnl_primitive_desc_create(&pd, &cd, attr, eng,
                                                      NULL),
                           c->op, "dnnl_primitive_desc_create (convolution)");
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(dnnl_primitive_create(out, pd), c->op,
                         "dnnl_primitive_create (convolution)");
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  return rc;
}

static void make_key(const conv_call *c, mxc__dnnl_key *k) {
  mxc__dnnl_key_init(k, "conv_fwd");
  mxc__dnnl_key_md(k, &c->src);
  mxc__dnnl_key_md(k, &c->wei);
  mxc__dnnl_key_md(k, &c->dst);
  mxc__dnnl_key_i64(k, c->has_bias);
  mxc__dnnl_key_bytes(k, c->strides, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(k, c->dil, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(k, c->pad_l, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_bytes(k, c->pad_r, sizeof(int64_t) * (size_t)c->nsp);
  mxc__dnnl_key_i64(k, c->post ? c->post->act : 0);
  mxc__dnnl_key_i64(k, c->post && c->post->sum);
  mxc__dnnl_key_i64(k, mxc__dnnl_threads_current());
}

static int run(const conv_call *c, const mxc__blob *in, const mxc__blob *out,
               mxc__req req) {
  mxc__dnnl_key k;
  make_key(c, &k);
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build, (void *)c, &p));
  mxc__dnnl_arg a[4] = {
      {DNNL_ARG_SRC, c->src, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_WEIGHTS, c->wei, in[1].ptr, 0, MXC__REQ_WRITE, NULL,
       c->w_version},
      {DNNL_ARG_DST, c->dst, out->ptr, 1, req,
       c->post && c->post->sum ? c->post->sum->ptr : NULL, 0},
      {DNNL_ARG_BIAS, c->bias, c->has_bias ? in[2].ptr : NULL, 0,
       MXC__REQ_WRITE, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, c->has_bias ? 4 : 3);
  mxc__dnnl_cache_put(p);
  return rc;
}

int mxc__dnnl_conv_forward(const mxc__op *op, const mxc__opctx *ctx,
                           const mxc__conv_param *p, const mxc__blob *in,
                           const mxc__blob *out, mxc__req req,
                           const mxc__dnnl_post *post) {
  conv_call c;
  memset(&c, 0, sizeof c);
  int rc = plan(op, p, in, out, &c);
  if (rc != MXC_OK) return rc;
  c.post = post;
  c.w_version = mxc__dnnl_version(ctx, 1);
  int nthr = mxc__dnnl_threads_begin();
  rc = run(&c, in, out, req);
  mxc__dnnl_threads_end(nthr);
  return rc;
}

/* ---- the Convolution kernel ---- */

/* Runs the descriptor's own kernel: for what the plan or the library
 * turned down at run time (shapes are not known to supports). */
static int reference(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  mxc__error_clear();
  return op->compute(op, ctx, param, in, n_in, out, n_out, req);
}

static int conv_kernel(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int rc = mxc__dnnl_conv_forward(op, ctx, param, in, out, req[0], NULL);
  if (rc == MXC_ERR_UNSUPPORTED) {
    return reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

static int conv_supports(const mxc__op *op, const void *param,
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
                   .supports = conv_supports,
                   .compute = conv_kernel};
  return mxc__registry_attach_kernel(r, "Convolution", &k);
}
