/* softmax / log_softmax along any axis on oneDNN (onednn.h): one plain
 * array of the data's shape in and out, in place when invoke gives the
 * output the input's memory (oneDNN allows src == dst).
 *
 * Activation is deliberately not attached: oneDNN's relu maps NaN to 0
 * where MXNet (and the reference) keep it, and its sigmoid, tanh and
 * softrelu differ from the reference in the last ulp, while the fused
 * element-wise operator (ops/fused) runs the reference on each tile, so
 * fused and unfused graphs would no longer agree bit for bit. The
 * reference is vectorized (core/op/vmath) and memory-bound like oneDNN's;
 * the activations oneDNN does run are post-ops of the fused convolution
 * and inner product. */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"

typedef struct elt_call {
  const mxc__op *op;
  int log; /* log_softmax */
  int axis;
  dnnl_memory_desc_t md;
} elt_call;

static int init_desc(const elt_call *c, void *desc) {
  if (!c->log) {
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
  union {
    dnnl_softmax_desc_t s;
    dnnl_logsoftmax_desc_t l;
  } d;
  MXC_FORWARD_IF_ERROR(init_desc(c, &d));
  return mxc__dnnl_prim_create(c->op, &d, NULL, NULL, "softmax", out);
}

static int run(elt_call *c, const mxc__blob *in, const mxc__blob *out,
               mxc__req req) {
  if (mxc__shape_size(&in[0].shape) == 0) return MXC_ERR_UNSUPPORTED;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_plain(c->op, &in[0].shape, &c->md));
  int nthr = mxc__dnnl_threads_begin();
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, "softmax_fwd");
  mxc__dnnl_key_md(&k, &c->md);
  mxc__dnnl_key_i64(&k, c->log);
  mxc__dnnl_key_i64(&k, c->axis);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
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

/* The reference for what supports could not see (shapes). */
static int finish(int rc, const mxc__op *op, const mxc__opctx *ctx,
                  const void *param, const mxc__blob *in, int n_in,
                  const mxc__blob *out, int n_out, const mxc__req *req) {
  if (rc != MXC_ERR_UNSUPPORTED) return rc;
  return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
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
    elt_call c = {op, strcmp(op->name, "softmax") != 0, (int)axis, {0}};
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
