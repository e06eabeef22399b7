/* Element-wise primitives on plain arrays (onednn.h): Activation's relu,
 * sigmoid, tanh and softrelu (softsign has no oneDNN counterpart and runs
 * on the reference), and softmax / log_softmax along any axis. Both read
 * and write one plain array of the data's shape, in place when invoke
 * gives the output the input's memory (oneDNN allows src == dst). */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"

typedef struct elt_call {
  const mxc__op *op;
  int kind; /* 0 eltwise, 1 softmax, 2 log_softmax */
  int alg, axis;
  dnnl_memory_desc_t md;
} elt_call;

static int init_desc(const elt_call *c, void *desc) {
  if (c->kind == 0) {
    return mxc__dnnl_check(
        dnnl_eltwise_forward_desc_init(desc, dnnl_forward_inference, c->alg,
                                       &c->md, 0.0f, 0.0f),
        c->op, "dnnl_eltwise_forward_desc_init");
  }
  if (c->kind == 1) {
    return mxc__dnnl_check(
        dnnl_softmax_forward_desc_init(desc, dnnl_forward_inference, &c->md,
                                       c->axis),
        c->op, "dnnl_softmax_forward_desc_init");
  }
  return mxc__dnnl_check(
      dnnl_logsoftmax_forward_desc_init(desc, dnnl_forward_inference, &c->md,
                                        c->axis),
      c->op, "dnnl_logsoftmax_forward_desc_init");
}

static int build(void *arg, dnnl_primitive_t *out) {
  const elt_call *c = arg;
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  union {
    dnnl_eltwise_desc_t e;
    dnnl_softmax_desc_t s;
    dnnl_logsoftmax_desc_t l;
  } d;
  MXC_FORWARD_IF_ERROR(init_desc(c, &d));
  dnnl_primitive_desc_t pd = NULL;
  int rc = mxc__dnnl_check(
      dnnl_primitive_desc_create(&pd, &d, NULL, eng, NULL), c->op,
      "dnnl_primitive_desc_create (eltwise/softmax)");
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(dnnl_primitive_create(out, pd), c->op,
                         "dnnl_primitive_create (eltwise/softmax)");
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  return rc;
}

static int run(elt_call *c, const mxc__blob *in, const mxc__blob *out,
               mxc__req req) {
  if (mxc__shape_size(&in[0].shape) == 0) return MXC_ERR_UNSUPPORTED;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(c->op, &in[0].shape, &c->md));
  int nthr = mxc__dnnl_threads_begin();
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, "eltwise_fwd");
  mxc__dnnl_key_md(&k, &c->md);
  mxc__dnnl_key_i64(&k, c->kind);
  mxc__dnnl_key_i64(&k, c->alg);
  mxc__dnnl_key_i64(&k, c->axis);
  mxc__dnnl_key_i64(&k, nthr);
  mxc__dnnl_prim *p = NULL;
  int rc = mxc__dnnl_cache_get(&k, build, c, &p);
  if (rc == MXC_OK) {
    mxc__dnnl_arg a[2] = {
        {DNNL_ARG_SRC, c->md, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
        {DNNL_ARG_DST, c->md, out[0].ptr, 1, req, NULL, 0},
    };
    rc = mxc__dnnl_run(c->op, p, a, 2);
    mxc__dnnl_cache_put(p);
  }
  mxc__dnnl_threads_end(nthr);
  return rc;
}

static int finish(int rc, const mxc__op *op, const mxc__opctx *ctx,
                  const void *param, const mxc__blob *in, int n_in,
                  const mxc__blob *out, int n_out, const mxc__req *req) {
  if (rc != MXC_ERR_UNSUPPORTED) return rc;
  mxc__error_clear(); /* shapes supports could not see: the reference */
  return op->compute(op, ctx, param, in, n_in, out, n_out, req);
}

/* ---- Activation ---- */

static int act_kernel(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  elt_call c = {op, 0, 0, 0, {0}};
  c.alg = mxc__dnnl_act_alg(
      mxc__dnnl_act_of_name(mxc__dnnl_param_enum(op, param, "act_type")));
  int rc = run(&c, in, out, req[0]);
  return finish(rc, op, ctx, param, in, n_in, out, n_out, req);
}

static int act_supports(const mxc__op *op, const void *param,
                        const mxc__call_types *t) {
  return param && mxc__dnnl_all_f32(t) &&
         mxc__dnnl_act_of_name(
             mxc__dnnl_param_enum(op, param, "act_type")) >= 0;
}

static int act_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req);

int mxc__dnnl_attach_act(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = act_supports,
                   .compute = act_kernel};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "Activation", &k));
  k.compute = act_bwd_kernel;
  return mxc__registry_attach_kernel(r, "_backward_Activation", &k);
}

/* ---- _backward_Activation: (ograd, data, output) -> ddata ----
 *
 * The same derivatives as the reference: relu's and softrelu's from the
 * data (1[x > 0], sigmoid(x)), sigmoid's and tanh's from the output
 * (y (1 - y), 1 - y^2), oneDNN's use_dst_for_bwd variants. */

typedef struct act_bwd {
  const mxc__op *op;
  int alg, use_dst;
  dnnl_memory_desc_t md;
} act_bwd;

static int build_act_bwd(void *arg, dnnl_primitive_t *out) {
  const act_bwd *c = arg;
  dnnl_eltwise_desc_t fd, bd;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_eltwise_forward_desc_init(&fd, dnnl_forward_training, c->alg,
                                     &c->md, 0.0f, 0.0f),
      c->op, "dnnl_eltwise_forward_desc_init"));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_eltwise_backward_desc_init(&bd, c->alg, &c->md, &c->md, 0.0f,
                                      0.0f),
      c->op, "dnnl_eltwise_backward_desc_init"));
  dnnl_primitive_desc_t hint;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_pd_create(c->op, &fd, NULL, NULL,
                                           "eltwise forward hint", &hint));
  int rc = mxc__dnnl_prim_create(c->op, &bd, NULL, hint, "eltwise backward",
                                 out);
  dnnl_primitive_desc_destroy(hint);
  return rc;
}

static int act_bwd_alg(int act, int *use_dst) {
  *use_dst = act == MXC__DNNL_ACT_SIGMOID || act == MXC__DNNL_ACT_TANH;
  switch (act) {
    case MXC__DNNL_ACT_RELU: return dnnl_eltwise_relu;
    case MXC__DNNL_ACT_SIGMOID: return dnnl_eltwise_logistic_use_dst_for_bwd;
    case MXC__DNNL_ACT_TANH: return dnnl_eltwise_tanh_use_dst_for_bwd;
    case MXC__DNNL_ACT_SOFTRELU: return dnnl_eltwise_soft_relu;
    default: return -1;
  }
}

static int act_bwd_run(act_bwd *c, const mxc__blob *in, const mxc__blob *out,
                       mxc__req req) {
  if (mxc__shape_size(&in[0].shape) == 0 || c->alg < 0) {
    return MXC_ERR_UNSUPPORTED;
  }
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(c->op, &in[0].shape, &c->md));
  int nthr = mxc__dnnl_threads_begin();
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, "eltwise_bwd");
  mxc__dnnl_key_md(&k, &c->md);
  mxc__dnnl_key_i64(&k, c->alg);
  mxc__dnnl_key_i64(&k, nthr);
  mxc__dnnl_prim *p = NULL;
  int rc = mxc__dnnl_cache_get(&k, build_act_bwd, c, &p);
  if (rc == MXC_OK) {
    mxc__dnnl_arg a[3] = {
        {DNNL_ARG_DIFF_DST, c->md, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
        {c->use_dst ? DNNL_ARG_DST : DNNL_ARG_SRC, c->md,
         in[c->use_dst ? 2 : 1].ptr, 0, MXC__REQ_WRITE, NULL, 0},
        {DNNL_ARG_DIFF_SRC, c->md, out[0].ptr, 1, req, NULL, 0},
    };
    rc = mxc__dnnl_run(c->op, p, a, 3);
    mxc__dnnl_cache_put(p);
  }
  mxc__dnnl_threads_end(nthr);
  return rc;
}

static int act_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  act_bwd c = {op, -1, 0, {0}};
  c.alg = act_bwd_alg(
      mxc__dnnl_act_of_name(mxc__dnnl_param_enum(op, param, "act_type")),
      &c.use_dst);
  int rc = act_bwd_run(&c, in, out, req[0]);
  return finish(rc, op, ctx, param, in, n_in, out, n_out, req);
}

/* ---- softmax, log_softmax ---- */

static int softmax_kernel(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t axis = -1;
  (void)mxc__dnnl_param_int(op, param, "axis", &axis);
  int nd = in[0].shape.ndim;
  if (axis < 0) axis += nd;
  int rc = MXC_ERR_UNSUPPORTED;
  if (axis >= 0 && axis < nd) {
    elt_call c = {op, strcmp(op->name, "softmax") ? 2 : 1, 0, (int)axis, {0}};
    rc = run(&c, in, out, req[0]);
  }
  return finish(rc, op, ctx, param, in, n_in, out, n_out, req);
}

/* Plain softmax: no temperature, no lengths, output dtype as input. */
static int softmax_supports(const mxc__op *op, const void *param,
                            const mxc__call_types *t) {
  if (!param || !mxc__dnnl_all_f32(t) || t->n_in != 1) return 0;
  const double *temp =
      mxc__dnnl_param(op, param, "temperature", MXC__P_OPT_FLOAT);
  const int *dtype = mxc__dnnl_param(op, param, "dtype", MXC__P_DTYPE);
  int use_length = 1;
  int64_t axis;
  (void)mxc__dnnl_param_bool(op, param, "use_length", &use_length);
  return temp && dtype && !use_length && *dtype < 0 &&
         (*temp != *temp || *temp == 1.0) &&
         mxc__dnnl_param_int(op, param, "axis", &axis);
}

int mxc__dnnl_attach_softmax(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = softmax_supports,
                   .compute = softmax_kernel};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "softmax", &k));
  return mxc__registry_attach_kernel(r, "log_softmax", &k);
}
