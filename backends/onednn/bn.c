/* BatchNorm forward with fixed statistics on oneDNN (onednn.h): inference
 * (is_train false) or use_global_stats, channel axis 1, on plain
 * arrays. y = (x - moving_mean) / sqrt(moving_var + eps) * gamma + beta,
 * gamma taken as 1 under fix_gamma (the scale is then left out). The
 * hidden outputs (mean, inverse standard deviation) are per-channel
 * values the kernel writes itself. Batch statistics (training) run on the
 * reference kernel, which also updates the moving statistics. */
#include <math.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"

typedef struct bn_call {
  const mxc__op *op;
  dnnl_memory_desc_t data, chan;
  float eps;
  unsigned flags;
} bn_call;

static int build(void *arg, dnnl_primitive_t *out) {
  const bn_call *c = arg;
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  dnnl_batch_normalization_desc_t d;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_batch_normalization_forward_desc_init(
          &d, dnnl_forward_inference, &c->data, c->eps, c->flags),
      c->op, "dnnl_batch_normalization_forward_desc_init"));
  dnnl_primitive_desc_t pd = NULL;
  int rc = mxc__dnnl_check(dnnl_primitive_desc_create(&pd, &d, NULL, eng,
                                                      NULL),
                           c->op, "dnnl_primitive_desc_create (batch norm)");
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(dnnl_primitive_create(out, pd), c->op,
                         "dnnl_primitive_create (batch norm)");
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  return rc;
}

static int run(const bn_call *c, const mxc__blob *in, const mxc__blob *out,
               mxc__req req) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, "bn_fwd_global");
  mxc__dnnl_key_md(&k, &c->data);
  mxc__dnnl_key_bytes(&k, &c->eps, sizeof c->eps);
  mxc__dnnl_key_i64(&k, c->flags);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build, (void *)c, &p));
  mxc__dnnl_arg a[6] = {
      {DNNL_ARG_SRC, c->data, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_MEAN, c->chan, in[3].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_VARIANCE, c->chan, in[4].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_SHIFT, c->chan, in[2].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DST, c->data, out[0].ptr, 1, req, NULL, 0},
      {DNNL_ARG_SCALE, c->chan, in[1].ptr, 0, MXC__REQ_WRITE, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, (c->flags & dnnl_use_scale) ? 6 : 5);
  mxc__dnnl_cache_put(p);
  return rc;
}

/* The hidden outputs: the statistics used, as the reference writes them
 * (mean, and 1 / sqrt(var + eps) computed in double). */
static void write_stats(const mxc__blob *in, const mxc__blob *out, int n_out,
                        const mxc__req *req, double eps, int64_t C) {
  const float *mm = in[3].ptr, *mv = in[4].ptr;
  for (int64_t c = 0; c < C; ++c) {
    float v[2] = {mm[c], (float)(1 / sqrt((double)mv[c] + eps))};
    for (int j = 1; j < 3 && j < n_out; ++j) {
      float *o = out[j].ptr;
      if (req[j] == MXC__REQ_ADD) o[c] += v[j - 1];
      else if (req[j] != MXC__REQ_NULL) o[c] = v[j - 1];
    }
  }
}

static int fixed_stats(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param) {
  int global = 0;
  (void)mxc__dnnl_param_bool(op, param, "use_global_stats", &global);
  return global || !ctx->is_train;
}

static int bn_kernel(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  const mxc__shape *x = &in[0].shape;
  double eps = 0;
  int fix_gamma = 1;
  (void)mxc__dnnl_param_float(op, param, "eps", &eps);
  (void)mxc__dnnl_param_bool(op, param, "fix_gamma", &fix_gamma);
  if (!fixed_stats(op, ctx, param) || x->ndim < 2 || x->ndim > 5 ||
      mxc__shape_size(x) == 0) {
    return op->compute(op, ctx, param, in, n_in, out, n_out, req);
  }
  bn_call c = {op, {0}, {0}, (float)eps,
               dnnl_use_global_stats | dnnl_use_shift |
                   (fix_gamma ? 0u : (unsigned)dnnl_use_scale)};
  int rc = mxc__dnnl_md_plain(op, x, &c.data);
  if (rc == MXC_OK) rc = mxc__dnnl_md_dims(op, 1, &x->dims[1], &c.chan);
  if (rc == MXC_OK && req[0] != MXC__REQ_NULL) {
    int nthr = mxc__dnnl_threads_begin();
    rc = run(&c, in, out, req[0]);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    mxc__error_clear();
    return op->compute(op, ctx, param, in, n_in, out, n_out, req);
  }
  if (rc == MXC_OK) write_stats(in, out, n_out, req, eps, x->dims[1]);
  return rc;
}

/* Channel axis 1, the eps oneDNN keeps as float unchanged in meaning. */
static int bn_supports(const mxc__op *op, const void *param,
                       const mxc__call_types *t) {
  int64_t axis = 0;
  double eps = 0;
  return param && mxc__dnnl_all_f32(t) &&
         mxc__dnnl_param_int(op, param, "axis", &axis) && axis == 1 &&
         mxc__dnnl_param_float(op, param, "eps", &eps) && eps > 0;
}

int mxc__dnnl_attach_bn(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = bn_supports,
                   .compute = bn_kernel};
  return mxc__registry_attach_kernel(r, "BatchNorm", &k);
}
