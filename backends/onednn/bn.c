/* BatchNorm on oneDNN (onednn.h): channel axis 1, plain arrays of 2 to 5
 * axes, forward and backward, in the reference's modes:
 *  - fixed statistics (inference, or use_global_stats): y = (x -
 *    moving_mean) / sqrt(moving_var + eps) * gamma + beta;
 *  - batch statistics (training): oneDNN computes the batch mean and
 *    biased variance, the kernel then updates the moving statistics with
 *    momentum as the reference does (per channel, in double);
 *  - gamma is taken as 1 under fix_gamma (oneDNN's scale left out) and
 *    its gradient is then 0.
 * The hidden outputs are the statistics used: the mean and the inverse
 * standard deviation 1 / sqrt(var + eps). The backward reads them (as
 * the reference does) and hands oneDNN the variance 1 / inv_std^2 - eps.
 *
 * _FusedBatchNormReLU (the executor's BatchNorm + relu fusion) is the
 * same forward with oneDNN's dnnl_fuse_norm_relu: the output rectified
 * inside the primitive, no second pass over it. Training forwards then
 * also write a workspace (a bit per element: the relu's mask), which only
 * oneDNN's own fused backward would read; the gradient nodes stay
 * BatchNorm's and Activation's, so it goes to a temporary that is
 * dropped. */
#include <math.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/alloc.h"
#include "core/base/error.h"

typedef struct bn_call {
  const mxc__op *op;
  dnnl_memory_desc_t data, chan;
  float eps;
  unsigned flags; /* dnnl_use_global_stats, dnnl_use_scale, dnnl_use_shift,
                     dnnl_fuse_norm_relu */
  int backward;
} bn_call;

static int fwd_desc(const bn_call *c, dnnl_prop_kind_t prop,
                    dnnl_batch_normalization_desc_t *d) {
  return mxc__dnnl_check(dnnl_batch_normalization_forward_desc_init(
                             d, prop, &c->data, c->eps, c->flags),
                         c->op, "dnnl_batch_normalization_forward_desc_init");
}

static int build(void *arg, dnnl_primitive_t *out) {
  const bn_call *c = arg;
  dnnl_batch_normalization_desc_t fd, bd;
  int global = (c->flags & dnnl_use_global_stats) != 0;
  MXC_FORWARD_IF_ERROR(fwd_desc(
      c, global && !c->backward ? dnnl_forward_inference
                                : dnnl_forward_training,
      &fd));
  if (!c->backward) {
    return mxc__dnnl_prim_create(c->op, &fd, NULL, NULL, "batch norm", out);
  }
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_batch_normalization_backward_desc_init(
          &bd, dnnl_backward, &c->data, &c->data, c->eps, c->flags),
      c->op, "dnnl_batch_normalization_backward_desc_init"));
  dnnl_primitive_desc_t hint;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_pd_create(c->op, &fd, NULL, NULL,
                                           "batch norm forward hint", &hint));
  int rc = mxc__dnnl_prim_create(c->op, &bd, NULL, hint,
                                 "batch norm backward", out);
  dnnl_primitive_desc_destroy(hint);
  return rc;
}

static int get_prim(const bn_call *c, mxc__dnnl_prim **p) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, c->backward ? "bn_bwd" : "bn_fwd");
  mxc__dnnl_key_md(&k, &c->data);
  mxc__dnnl_key_bytes(&k, &c->eps, sizeof c->eps);
  mxc__dnnl_key_i64(&k, c->flags);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  return mxc__dnnl_cache_get(&k, build, (void *)c, p);
}

static void assign(float *o, mxc__req req, double v) {
  if (req == MXC__REQ_ADD) {
    *o += (float)v;
  } else if (req != MXC__REQ_NULL) {
    *o = (float)v;
  }
}

/* ---- forward ---- */

typedef struct bn_opts {
  double eps, momentum;
  int fix_gamma, global;
  int relu; /* _FusedBatchNormReLU */
} bn_opts;

static void read_opts(const mxc__op *op, const void *param, bn_opts *o) {
  o->eps = 1e-3;
  o->momentum = 0.9;
  o->fix_gamma = 1;
  o->global = 0;
  o->relu = strcmp(op->name, "_FusedBatchNormReLU") == 0;
  (void)mxc__dnnl_param_float(op, param, "eps", &o->eps);
  (void)mxc__dnnl_param_float(op, param, "momentum", &o->momentum);
  (void)mxc__dnnl_param_bool(op, param, "fix_gamma", &o->fix_gamma);
  (void)mxc__dnnl_param_bool(op, param, "use_global_stats", &o->global);
}

/* Batch statistics (mean, var: C floats each) into the hidden outputs
 * and the moving statistics, as the reference updates them. */
static void finish_train(const mxc__blob *in, const mxc__blob *out,
                         int n_out, const mxc__req *req, const bn_opts *o,
                         int64_t C, const float *mean, const float *var) {
  float *mm = in[3].ptr, *mv = in[4].ptr;
  for (int64_t c = 0; c < C; ++c) {
    mm[c] = (float)(mm[c] * o->momentum + mean[c] * (1 - o->momentum));
    mv[c] = (float)(mv[c] * o->momentum + var[c] * (1 - o->momentum));
    if (n_out > 1) assign((float *)out[1].ptr + c, req[1], mean[c]);
    if (n_out > 2) {
      assign((float *)out[2].ptr + c, req[2], 1 / sqrt(var[c] + o->eps));
    }
  }
}

static void finish_fixed(const mxc__blob *in, const mxc__blob *out,
                         int n_out, const mxc__req *req, const bn_opts *o,
                         int64_t C) {
  const float *mm = in[3].ptr, *mv = in[4].ptr;
  for (int64_t c = 0; c < C; ++c) {
    if (n_out > 1) assign((float *)out[1].ptr + c, req[1], mm[c]);
    if (n_out > 2) {
      assign((float *)out[2].ptr + c, req[2], 1 / sqrt((double)mv[c] + o->eps));
    }
  }
}

/* One oneDNN forward: fixed statistics read from the moving ones, batch
 * statistics written to stats (2 * C floats). */
static int run_fwd(const bn_call *c, const mxc__blob *in, const mxc__blob *out,
                   mxc__req req, float *stats, int64_t C) {
  int global = (c->flags & dnnl_use_global_stats) != 0;
  dnnl_memory_desc_t dst; /* the output in its own format */
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_md_fmt(c->op, &out[0].shape, out[0].fmt, &dst));
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(get_prim(c, &p));
  mxc__dnnl_arg a[7] = {
      {DNNL_ARG_SRC, c->data, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DST, dst, out[0].ptr, 1, req, NULL, 0},
      {DNNL_ARG_SHIFT, c->chan, in[2].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_MEAN, c->chan, global ? in[3].ptr : stats, !global,
       MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_VARIANCE, c->chan, global ? in[4].ptr : stats + C, !global,
       MXC__REQ_WRITE, NULL, 0},
  };
  int n = 5;
  if (c->flags & dnnl_use_scale) {
    a[n++] = (mxc__dnnl_arg){DNNL_ARG_SCALE, c->chan, in[1].ptr, 0,
                             MXC__REQ_WRITE, NULL, 0};
  }
  const dnnl_memory_desc_t *ws = dnnl_primitive_desc_query_md(
      mxc__dnnl_prim_pd(p), dnnl_query_workspace_md, 0);
  if (ws && dnnl_memory_desc_get_size(ws) > 0) { /* dropped: see the top */
    a[n++] = (mxc__dnnl_arg){DNNL_ARG_WORKSPACE, *ws, NULL, 1,
                             MXC__REQ_NULL, NULL, 0};
  }
  int rc = mxc__dnnl_run(c->op, p, a, n);
  mxc__dnnl_cache_put(p);
  return rc;
}

/* The call for data x of format fmt (the primitive's data layout). */
static int plan(const mxc__op *op, const mxc__shape *x, int fmt,
                const bn_opts *o, int global, int backward, bn_call *c) {
  unsigned relu = o->relu ? (unsigned)dnnl_fuse_norm_relu : 0u;
  if (x->ndim < 2 || x->ndim > 5 || mxc__shape_size(x) == 0) {
    return MXC_ERR_UNSUPPORTED;
  }
  memset(c, 0, sizeof *c);
  c->op = op;
  c->eps = (float)o->eps;
  c->backward = backward;
  c->flags = dnnl_use_shift | (o->fix_gamma ? 0u : (unsigned)dnnl_use_scale) |
             (global ? (unsigned)dnnl_use_global_stats : 0u) | relu;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_fmt(op, x, fmt, &c->data));
  return mxc__dnnl_md_dims(op, 1, &x->dims[1], &c->chan);
}

static int bn_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const bn_opts *o, const mxc__blob *in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  int global = o->global || !ctx->is_train;
  int64_t C = in[0].shape.dims[1];
  bn_call c;
  MXC_FORWARD_IF_ERROR(plan(op, &in[0].shape, in[0].fmt, o, global, 0, &c));
  float *stats = NULL;
  if (!global) {
    stats = mxc__malloc(sizeof(float) * 2 * (size_t)C);
    MXC_RETURN_ERROR_IF(!stats, MXC_ERR_OOM,
                        "operator '%s': out of memory for batch statistics",
                        op->name);
  }
  int nthr = mxc__dnnl_threads_begin();
  int rc = run_fwd(&c, in, out, req[0], stats, C);
  mxc__dnnl_threads_end(nthr);
  if (rc == MXC_OK && global) finish_fixed(in, out, n_out, req, o, C);
  if (rc == MXC_OK && !global) {
    finish_train(in, out, n_out, req, o, C, stats, stats + C);
  }
  mxc__free(stats);
  return rc;
}

static int bn_kernel(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  bn_opts o;
  read_opts(op, param, &o);
  int rc = bn_forward(op, ctx, &o, in, out, n_out, req);
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

static int bn_relu_kernel(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  if (req[0] == MXC__REQ_ADD) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return bn_kernel(op, ctx, param, in, n_in, out, n_out, req);
}

/* ---- backward: (ograd, data, gamma, beta, moving_mean, moving_var,
 * output, mean, inv_std) -> (ddata, dgamma, dbeta) ---- */

static int run_bwd(const bn_call *c, const mxc__blob *in, const mxc__blob *out,
                   const mxc__req *req, const float *var, float *dscale) {
  dnnl_memory_desc_t ddst, dsrc; /* ograd and ddata in their formats */
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_md_fmt(c->op, &in[0].shape, in[0].fmt, &ddst));
  MXC_FORWARD_IF_ERROR(
      mxc__dnnl_md_fmt(c->op, &out[0].shape, out[0].fmt, &dsrc));
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(get_prim(c, &p));
  int scale = (c->flags & dnnl_use_scale) != 0;
  /* oneDNN 2.6 counts the shift among the backward's inputs when the
   * flags have it (execution refuses a call without it). */
  mxc__dnnl_arg a[9] = {
      {DNNL_ARG_SHIFT, c->chan, in[3].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_SRC, c->data, in[1].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_DST, ddst, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_MEAN, c->chan, in[7].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_VARIANCE, c->chan, (void *)var, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_SRC, dsrc, out[0].ptr, 1, req[0], NULL, 0},
      {DNNL_ARG_DIFF_SHIFT, c->chan, out[2].ptr, 1, req[2], NULL, 0},
      {DNNL_ARG_SCALE, c->chan, in[2].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_SCALE, c->chan, scale ? out[1].ptr : dscale, 1,
       scale ? req[1] : MXC__REQ_WRITE, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, scale ? 9 : 7);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int bn_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const bn_opts *o, const mxc__blob *in,
                       const mxc__blob *out, const mxc__req *req) {
  int global = o->global || !ctx->is_train;
  int64_t C = in[1].shape.dims[1];
  bn_call c;
  MXC_FORWARD_IF_ERROR(plan(op, &in[1].shape, in[1].fmt, o, global, 1, &c));
  float *var = mxc__malloc(sizeof(float) * (size_t)C);
  MXC_RETURN_ERROR_IF(!var, MXC_ERR_OOM,
                      "operator '%s': out of memory for %lld variances",
                      op->name, (long long)C);
  const float *inv_std = in[8].ptr;
  for (int64_t i = 0; i < C; ++i) {
    double s = inv_std[i];
    var[i] = (float)(1 / (s * s) - o->eps);
  }
  int nthr = mxc__dnnl_threads_begin();
  int rc = run_bwd(&c, in, out, req, var, NULL);
  mxc__dnnl_threads_end(nthr);
  mxc__free(var);
  for (int64_t i = 0; rc == MXC_OK && o->fix_gamma && i < C; ++i) {
    assign((float *)out[1].ptr + i, req[1], 0); /* gamma is fixed at 1 */
  }
  return rc;
}

static int bn_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  bn_opts o;
  read_opts(op, param, &o);
  int rc = n_out == 3 ? bn_backward(op, ctx, &o, in, out, req)
                      : MXC_ERR_UNSUPPORTED;
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* Channel axis 1 and an eps that stays positive and finite as the float
 * oneDNN keeps. */
static int bn_supports(const mxc__op *op, const void *param,
                       const mxc__call_types *t) {
  int64_t axis = 0;
  double eps = 0;
  return param && mxc__dnnl_all_f32(t) &&
         mxc__dnnl_param_int(op, param, "axis", &axis) && axis == 1 &&
         mxc__dnnl_param_float(op, param, "eps", &eps) && (float)eps > 0 &&
         isfinite((float)eps);
}

/* BatchNorm's data and output; _backward_BatchNorm's ograd, data and
 * output (inputs 0, 1, 6) and ddata. Statistics and parameters are
 * vectors, always plain. */
static unsigned bn_fmt_ok(const mxc__op *op, const void *param, int is_out,
                          int i) {
  (void)op;
  (void)param;
  (void)is_out;
  return i == 0 ? 1u << MXC__FMT_CHANNELS_LAST : 0;
}

static unsigned bn_bwd_fmt_ok(const mxc__op *op, const void *param,
                              int is_out, int i) {
  (void)op;
  (void)param;
  int yes = is_out ? i == 0 : i == 0 || i == 1 || i == 6;
  return yes ? 1u << MXC__FMT_CHANNELS_LAST : 0;
}

int mxc__dnnl_attach_bn(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = bn_supports,
                   .compute = bn_kernel,
                   .fmt_ok = bn_fmt_ok};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "BatchNorm", &k));
  /* The fused form takes no write mode add (ops/nn/batch_norm.c): its
   * reference refuses it, and so does this kernel through it. */
  k.compute = bn_relu_kernel;
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_kernel(r, "_FusedBatchNormReLU", &k));
  k.compute = bn_bwd_kernel;
  k.fmt_ok = bn_bwd_fmt_ok;
  return mxc__registry_attach_kernel(r, "_backward_BatchNorm", &k);
}
