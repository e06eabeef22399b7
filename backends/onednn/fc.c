/* FullyConnected forward on oneDNN's inner product (onednn.h): data seen
 * as (rows, k) whatever flatten says (flatten=true: rows is the batch;
 * false: every leading axis), weight (num_hidden, k), optional bias;
 * post-ops for _FusedFullyConnected. The weights' layout is the
 * primitive's choice (format tag any), the data and output stay plain
 * (row-major (rows, k) is what the inner product reads best anyway). */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"

typedef struct ip_call {
  const mxc__op *op;
  dnnl_memory_desc_t src, wei, bias, dst;
  int has_bias;
  const mxc__dnnl_post *post;
  uint64_t w_version;
} ip_call;

/* The forward descriptor of c (weights in oneDNN's preferred layout). */
static int fwd_desc(const ip_call *c, dnnl_prop_kind_t kind,
                    dnnl_inner_product_desc_t *d) {
  dnnl_memory_desc_t w;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_memory_desc_init_by_tag(&w, 2, c->wei.dims, dnnl_f32,
                                   dnnl_format_tag_any),
      c->op, "dnnl_memory_desc_init_by_tag"));
  return mxc__dnnl_check(
      dnnl_inner_product_forward_desc_init(d, kind, &c->src, &w,
                                           c->has_bias ? &c->bias : NULL,
                                           &c->dst),
      c->op, "dnnl_inner_product_forward_desc_init");
}

static int build(void *arg, dnnl_primitive_t *out) {
  const ip_call *c = arg;
  dnnl_inner_product_desc_t d;
  MXC_FORWARD_IF_ERROR(fwd_desc(c, dnnl_forward_inference, &d));
  dnnl_primitive_attr_t attr;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attr_post(c->op, c->post, &attr));
  int rc = mxc__dnnl_prim_create(c->op, &d, attr, NULL, "inner product", out);
  dnnl_primitive_attr_destroy(attr);
  return rc;
}

static int run(const ip_call *c, const mxc__blob *x, const mxc__blob *w,
               const mxc__blob *bias, const mxc__blob *out, mxc__req req) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, "inner_product_fwd");
  mxc__dnnl_key_md(&k, &c->src);
  mxc__dnnl_key_md(&k, &c->wei);
  mxc__dnnl_key_i64(&k, c->has_bias);
  mxc__dnnl_key_i64(&k, c->post ? c->post->act : 0);
  mxc__dnnl_key_i64(&k, c->post && c->post->sum);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build, (void *)c, &p));
  mxc__dnnl_arg a[4] = {
      {DNNL_ARG_SRC, c->src, x->ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_WEIGHTS, c->wei, w->ptr, 0, MXC__REQ_WRITE, NULL,
       c->w_version},
      {DNNL_ARG_DST, c->dst, out->ptr, 1, req,
       c->post && c->post->sum ? c->post->sum->ptr : NULL, 0},
      {DNNL_ARG_BIAS, c->bias, bias ? bias->ptr : NULL, 0, MXC__REQ_WRITE,
       NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, c->has_bias ? 4 : 3);
  mxc__dnnl_cache_put(p);
  return rc;
}

int mxc__dnnl_inner_product(const mxc__op *op, const mxc__opctx *ctx,
                            const mxc__blob *x,
                            const mxc__blob *w, const mxc__blob *bias,
                            int64_t batch, int64_t k, const mxc__blob *out,
                            mxc__req req, const mxc__dnnl_post *post) {
  int64_t h = w->shape.dims[0];
  if (batch <= 0 || k <= 0 || h <= 0) return MXC_ERR_UNSUPPORTED;
  ip_call c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.post = post;
  c.has_bias = bias != NULL;
  c.w_version = mxc__dnnl_version(ctx, 1);
  int64_t sd[2] = {batch, k}, wd[2] = {h, k}, dd[2] = {batch, h};
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 2, sd, &c.src));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 2, wd, &c.wei));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 2, dd, &c.dst));
  if (bias) MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 1, &h, &c.bias));
  int nthr = mxc__dnnl_threads_begin();
  int rc = run(&c, x, w, bias, out, req);
  mxc__dnnl_threads_end(nthr);
  return rc;
}

/* ---- the FullyConnected kernel ---- */

static int fc_kernel(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t h = in[1].shape.dims[0];
  int64_t n_out_elems = mxc__shape_size(&out[0].shape);
  int64_t batch = h > 0 ? n_out_elems / h : 0;
  int64_t k = batch > 0 ? mxc__shape_size(&in[0].shape) / batch : 0;
  int rc = mxc__dnnl_inner_product(op, ctx, &in[0], &in[1],
                                   n_in > 2 ? &in[2] : NULL, batch, k,
                                   &out[0], req[0], NULL);
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* ---- backward: data, then weights and bias ---- */

static int fwd_hint(const ip_call *c, dnnl_primitive_desc_t *hint) {
  dnnl_inner_product_desc_t d;
  MXC_FORWARD_IF_ERROR(fwd_desc(c, dnnl_forward_training, &d));
  return mxc__dnnl_pd_create(c->op, &d, NULL, NULL,
                             "inner product forward hint", hint);
}

static int build_bwd(const ip_call *c, int weights, dnnl_primitive_t *out) {
  dnnl_memory_desc_t w;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_memory_desc_init_by_tag(&w, 2, c->wei.dims, dnnl_f32,
                                   dnnl_format_tag_any),
      c->op, "dnnl_memory_desc_init_by_tag"));
  dnnl_inner_product_desc_t d;
  dnnl_status_t st =
      weights ? dnnl_inner_product_backward_weights_desc_init(
                    &d, &c->src, &w, c->has_bias ? &c->bias : NULL, &c->dst)
              : dnnl_inner_product_backward_data_desc_init(&d, &c->src, &w,
                                                           &c->dst);
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      st, c->op, "dnnl_inner_product_backward_*_desc_init"));
  dnnl_primitive_desc_t hint;
  MXC_FORWARD_IF_ERROR(fwd_hint(c, &hint));
  int rc = mxc__dnnl_prim_create(c->op, &d, NULL, hint,
                                 "inner product backward", out);
  dnnl_primitive_desc_destroy(hint);
  return rc;
}

static int build_bwd_data(void *arg, dnnl_primitive_t *out) {
  return build_bwd(arg, 0, out);
}

static int build_bwd_weights(void *arg, dnnl_primitive_t *out) {
  return build_bwd(arg, 1, out);
}

/* in: (ograd, data, weight); out: (ddata, dweight[, dbias]). */
static int run_bwd(const ip_call *c, const mxc__opctx *ctx,
                   const mxc__blob *in, const mxc__blob *out,
                   const mxc__req *req, int weights) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, weights ? "ip_bwd_weights" : "ip_bwd_data");
  mxc__dnnl_key_md(&k, &c->src);
  mxc__dnnl_key_md(&k, &c->wei);
  mxc__dnnl_key_i64(&k, c->has_bias);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(
      &k, weights ? build_bwd_weights : build_bwd_data, (void *)c, &p));
  mxc__dnnl_arg d[3] = {
      {DNNL_ARG_DIFF_DST, c->dst, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_WEIGHTS, c->wei, in[2].ptr, 0, MXC__REQ_WRITE, NULL,
       mxc__dnnl_version(ctx, 2)},
      {DNNL_ARG_DIFF_SRC, c->src, out[0].ptr, 1, req[0], NULL, 0},
  };
  mxc__dnnl_arg w[4] = {
      {DNNL_ARG_SRC, c->src, in[1].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_DST, c->dst, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_WEIGHTS, c->wei, out[1].ptr, 1, req[1], NULL, 0},
      {DNNL_ARG_DIFF_BIAS, c->bias, c->has_bias ? out[2].ptr : NULL, 1,
       c->has_bias ? req[2] : MXC__REQ_NULL, NULL, 0},
  };
  int rc = weights ? mxc__dnnl_run(c->op, p, w, c->has_bias ? 4 : 3)
                   : mxc__dnnl_run(c->op, p, d, 3);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int fc_bwd_plan(const mxc__op *op, const mxc__blob *in, int n_out,
                       ip_call *c) {
  int64_t h = in[2].shape.dims[0];
  int64_t batch = h > 0 ? mxc__shape_size(&in[0].shape) / h : 0;
  int64_t k = batch > 0 ? mxc__shape_size(&in[1].shape) / batch : 0;
  if (batch <= 0 || k <= 0 || h <= 0) return MXC_ERR_UNSUPPORTED;
  memset(c, 0, sizeof *c);
  c->op = op;
  c->has_bias = n_out > 2;
  int64_t sd[2] = {batch, k}, wd[2] = {h, k}, dd[2] = {batch, h};
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 2, sd, &c->src));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 2, wd, &c->wei));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 2, dd, &c->dst));
  if (c->has_bias) MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, 1, &h, &c->bias));
  return MXC_OK;
}

static int fc_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  ip_call c;
  mxc__req r[3] = {req[0], req[1], n_out > 2 ? req[2] : MXC__REQ_NULL};
  int rc = fc_bwd_plan(op, in, n_out, &c);
  int need_w = r[1] != MXC__REQ_NULL || r[2] != MXC__REQ_NULL;
  if (rc == MXC_OK) {
    int nthr = mxc__dnnl_threads_begin();
    if (r[0] != MXC__REQ_NULL) rc = run_bwd(&c, ctx, in, out, r, 0);
    if (rc == MXC_OK) r[0] = MXC__REQ_NULL; /* done: not again below */
    if (rc == MXC_OK && need_w) rc = run_bwd(&c, ctx, in, out, r, 1);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, r);
  }
  return rc;
}

int mxc__dnnl_fc_supports(const mxc__op *op, const void *param,
                          const mxc__call_types *t) {
  int64_t h;
  return param && mxc__dnnl_all_f32(t) &&
         mxc__dnnl_param_int(op, param, "num_hidden", &h);
}

int mxc__dnnl_attach_fc(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = mxc__dnnl_fc_supports,
                   .compute = fc_kernel};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "FullyConnected", &k));
  k.compute = fc_bwd_kernel;
  return mxc__registry_attach_kernel(r, "_backward_FullyConnected", &k);
}
