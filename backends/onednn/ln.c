/* LayerNorm on oneDNN (onednn.h): normalization along the last axis of
 * plain float32 arrays of 2 to 5 axes, forward and backward, with gamma
 * and beta. Other axes, and shapes oneDNN turns down, run the reference.
 *
 * oneDNN computes the mean and biased variance per row; the hidden
 * outputs are the mean and std = sqrt(var + eps) as the reference writes
 * them, and the backward hands oneDNN back the variance std^2 - eps. */
#include <math.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/alloc.h"
#include "core/base/error.h"

typedef struct ln_call {
  const mxc__op *op;
  dnnl_memory_desc_t data, stat, chan;
  float eps;
  int backward;
} ln_call;

static const unsigned k_flags = dnnl_use_scale | dnnl_use_shift;

static int build(void *arg, dnnl_primitive_t *out) {
  const ln_call *c = arg;
  dnnl_layer_normalization_desc_t fd, bd;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_layer_normalization_forward_desc_init(
          &fd, dnnl_forward_training, &c->data, &c->stat, c->eps, k_flags),
      c->op, "dnnl_layer_normalization_forward_desc_init"));
  if (!c->backward) {
    return mxc__dnnl_prim_create(c->op, &fd, NULL, NULL, "layer norm", out);
  }
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_layer_normalization_backward_desc_init(
          &bd, dnnl_backward, &c->data, &c->data, &c->stat, c->eps, k_flags),
      c->op, "dnnl_layer_normalization_backward_desc_init"));
  dnnl_primitive_desc_t hint;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_pd_create(c->op, &fd, NULL, NULL,
                                           "layer norm forward hint", &hint));
  int rc = mxc__dnnl_prim_create(c->op, &bd, NULL, hint,
                                 "layer norm backward", out);
  dnnl_primitive_desc_destroy(hint);
  return rc;
}

static int get_prim(const ln_call *c, mxc__dnnl_prim **p) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, c->backward ? "ln_bwd" : "ln_fwd");
  mxc__dnnl_key_md(&k, &c->data);
  mxc__dnnl_key_bytes(&k, &c->eps, sizeof c->eps);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  return mxc__dnnl_cache_get(&k, build, (void *)c, p);
}

/* The call for data x: MXC_ERR_UNSUPPORTED unless the axis is the last
 * of 2 to 5 and x is not empty. */
static int plan(const mxc__op *op, const void *param, const mxc__shape *x,
                int backward, ln_call *c) {
  int64_t axis = -1;
  double eps = 1e-5;
  (void)mxc__dnnl_param_int(op, param, "axis", &axis);
  (void)mxc__dnnl_param_float(op, param, "eps", &eps);
  if (axis < 0) axis += x->ndim;
  if (x->ndim < 2 || x->ndim > 5 || axis != x->ndim - 1 ||
      mxc__shape_size(x) == 0) {
    return MXC_ERR_UNSUPPORTED;
  }
  memset(c, 0, sizeof *c);
  c->op = op;
  c->eps = (float)eps;
  c->backward = backward;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(op, x, &c->data));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_dims(op, x->ndim - 1, x->dims, &c->stat));
  return mxc__dnnl_md_dims(op, 1, &x->dims[x->ndim - 1], &c->chan);
}

static void assign(float *o, mxc__req req, double v) {
  if (req == MXC__REQ_ADD) {
    *o += (float)v;
  } else if (req != MXC__REQ_NULL) {
    *o = (float)v;
  }
}

/* Rows of the statistics: every axis but the last. */
static int64_t rows_of(const mxc__shape *x) {
  return mxc__shape_size(x) / x->dims[x->ndim - 1];
}

/* ---- forward: (data, gamma, beta) -> (out, mean, std) ---- */

static int run_fwd(const ln_call *c, const mxc__blob *in, const mxc__blob *out,
                   const mxc__req *req, float *var) {
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(get_prim(c, &p));
  mxc__dnnl_arg a[6] = {
      {DNNL_ARG_SRC, c->data, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_SCALE, c->chan, in[1].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_SHIFT, c->chan, in[2].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DST, c->data, out[0].ptr, 1, req[0], NULL, 0},
      {DNNL_ARG_MEAN, c->stat, out[1].ptr, 1, req[1], NULL, 0},
      {DNNL_ARG_VARIANCE, c->stat, var, 1, MXC__REQ_WRITE, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, 6);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int ln_forward(const mxc__op *op, const void *param,
                      const mxc__blob *in, const mxc__blob *out,
                      const mxc__req *req) {
  ln_call c;
  MXC_FORWARD_IF_ERROR(plan(op, param, &in[0].shape, 0, &c));
  int64_t rows = rows_of(&in[0].shape);
  float *var = mxc__malloc(sizeof(float) * (size_t)rows);
  MXC_RETURN_ERROR_IF(!var, MXC_ERR_OOM,
                      "operator '%s': out of memory for %lld variances",
                      op->name, (long long)rows);
  int nthr = mxc__dnnl_threads_begin();
  int rc = run_fwd(&c, in, out, req, var);
  mxc__dnnl_threads_end(nthr);
  for (int64_t i = 0; rc == MXC_OK && i < rows; ++i) {
    assign((float *)out[2].ptr + i, req[2], sqrt((double)var[i] + c.eps));
  }
  mxc__free(var);
  return rc;
}

static int ln_kernel(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  int rc = n_out == 3 ? ln_forward(op, param, in, out, req)
                      : MXC_ERR_UNSUPPORTED;
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* ---- backward: (ograd, data, gamma, beta, output, mean, std) ->
 * (ddata, dgamma, dbeta) ---- */

static int run_bwd(const ln_call *c, const mxc__blob *in, const mxc__blob *out,
                   const mxc__req *req, const float *var) {
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(get_prim(c, &p));
  mxc__dnnl_arg a[9] = {
      {DNNL_ARG_DIFF_DST, c->data, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_SRC, c->data, in[1].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_SCALE, c->chan, in[2].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_SHIFT, c->chan, in[3].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_MEAN, c->stat, in[5].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_VARIANCE, c->stat, (void *)var, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_SRC, c->data, out[0].ptr, 1, req[0], NULL, 0},
      {DNNL_ARG_DIFF_SCALE, c->chan, out[1].ptr, 1, req[1], NULL, 0},
      {DNNL_ARG_DIFF_SHIFT, c->chan, out[2].ptr, 1, req[2], NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, 9);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int ln_backward(const mxc__op *op, const void *param,
                       const mxc__blob *in, const mxc__blob *out,
                       const mxc__req *req) {
  ln_call c;
  MXC_FORWARD_IF_ERROR(plan(op, param, &in[1].shape, 1, &c));
  int64_t rows = rows_of(&in[1].shape);
  float *var = mxc__malloc(sizeof(float) * (size_t)rows);
  MXC_RETURN_ERROR_IF(!var, MXC_ERR_OOM,
                      "operator '%s': out of memory for %lld variances",
                      op->name, (long long)rows);
  const float *std = in[6].ptr;
  for (int64_t i = 0; i < rows; ++i) {
    var[i] = (float)((double)std[i] * std[i] - c.eps);
  }
  int nthr = mxc__dnnl_threads_begin();
  int rc = run_bwd(&c, in, out, req, var);
  mxc__dnnl_threads_end(nthr);
  mxc__free(var);
  return rc;
}

static int ln_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  int rc = n_in == 7 && n_out == 3 ? ln_backward(op, param, in, out, req)
                                   : MXC_ERR_UNSUPPORTED;
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* An eps that stays positive and finite as the float oneDNN keeps. */
static int ln_supports(const mxc__op *op, const void *param,
                       const mxc__call_types *t) {
  double eps = 0;
  return param && mxc__dnnl_all_f32(t) &&
         mxc__dnnl_param_float(op, param, "eps", &eps) && (float)eps > 0 &&
         isfinite((float)eps);
}

int mxc__dnnl_attach_ln(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = ln_supports,
                   .compute = ln_kernel};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "LayerNorm", &k));
  k.compute = ln_bwd_kernel;
  return mxc__registry_attach_kernel(r, "_backward_LayerNorm", &k);
}
