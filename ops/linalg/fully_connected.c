/* FullyConnected: out = data . weight^T + bias.
 *
 * data is viewed as a matrix X (rows, in): with flatten (the default)
 * rows = data.shape[0] and `in` the product of the other axes; without,
 * the last axis is `in` and every other axis is a row axis, so the output
 * keeps data.shape[:-1]. weight is (num_hidden, in), bias (num_hidden).
 * Shape inference derives weight and bias shapes from data, so a graph
 * can be bound from the data shape alone.
 *
 * Gradient (G the output gradient as (rows, num_hidden)):
 *   dX = G W, dW = G^T X, db = column sums of G. */
#include <string.h>

#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"
#include "core/op/half_compute.h"

typedef mxc__fc_param fc_param; /* shared with _FusedFullyConnected */

static const mxc__param_def k_params[] = {MXC__FC_PARAM_DEFS};

static int fc_num_inputs(const void *param) {
  return ((const fc_param *)param)->no_bias ? 2 : 3;
}
static int fc_bwd_num_inputs(const void *param) {
  return 1 + fc_num_inputs(param);
}
static int fc_bwd_num_outputs(const void *param) {
  return fc_num_inputs(param);
}

/* Names of every possible input (introspection lists them all); the
 * count in use comes from num_inputs. */
static const char *const k_names[] = {"data", "weight", "bias", NULL};
static const char *const k_bwd_names[] = {"ograd", "data", "weight", "bias",
                                          NULL};
static const char *fc_input_name(const void *param, int i) {
  (void)param;
  return i >= 0 && i < 3 ? k_names[i] : "?";
}
static const char *fc_bwd_input_name(const void *param, int i) {
  return i == 0 ? "ograd" : fc_input_name(param, i - 1);
}

/* Rows and features of data as a matrix. */
static void fc_view(const fc_param *p, const mxc__shape *data, int64_t *rows,
                    int64_t *in) {
  int nd = data->ndim;
  int split = p->flatten ? 1 : nd - 1; /* row axes are [0, split) */
  if (split > nd) split = nd;
  *rows = 1;
  *in = 1;
  for (int i = 0; i < nd; ++i) {
    if (i < split) {
      *rows *= data->dims[i];
    } else {
      *in *= data->dims[i];
    }
  }
}

static int fc_infer_shape(const mxc__op *op, const void *param, mxc__shape *in,
                          int n_in, mxc__shape *out, int n_out) {
  (void)n_out;
  const fc_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  MXC_RETURN_ERROR_IF(in[0].ndim < 1, MXC_ERR_SHAPE,
                      "operator '%s': data must have at least 1 axis (got a "
                      "scalar)",
                      op->name);
  int64_t rows = 0, feat = 0;
  fc_view(p, &in[0], &rows, &feat);
  mxc__shape w = {2, {p->num_hidden, feat}};
  MXC_FORWARD_IF_ERROR(
      mxc__linalg_assign_shape(op, param, &in[1], &w, "input 1 ('weight')"));
  if (n_in > 2) {
    mxc__shape b = {1, {p->num_hidden}};
    MXC_FORWARD_IF_ERROR(
        mxc__linalg_assign_shape(op, param, &in[2], &b, "input 2 ('bias')"));
  }
  mxc__shape o = in[0];
  if (p->flatten) o.ndim = 2;
  o.dims[o.ndim - 1] = p->num_hidden;
  return mxc__linalg_assign_shape(op, param, &out[0], &o, "output");
}

static int fc_bwd_infer_shape(const mxc__op *op, const void *param,
                              mxc__shape *in, int n_in, mxc__shape *out,
                              int n_out) {
  if (in[1].ndim >= 0) {
    mxc__shape o = {-1, {0}};
    MXC_FORWARD_IF_ERROR(fc_infer_shape(op, param, in + 1, n_in - 1, &o, 1));
    if (in[0].ndim >= 0) {
      MXC_FORWARD_IF_ERROR(
          mxc__linalg_assign_shape(op, param, &in[0], &o, "ograd"));
    }
  }
  return mxc__linalg_bwd_infer_shape(op, param, in, n_in, out, n_out);
}

static int fc_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op, (void)ctx, (void)n_out;
  const fc_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t rows = 0, feat = 0, h = p->num_hidden;
  fc_view(p, &in[0].shape, &rows, &feat);
  int dt = in[0].dtype;
  mxc__gemm(dt, 0, 1, rows, h, feat, in[0].ptr, feat, in[1].ptr, feat,
            req[0] == MXC__REQ_ADD, out[0].ptr, h);
  /* bias as a (1 x h) "channel" block per row: same helper as conv. */
  if (n_in > 2) mxc__add_bias(dt, out[0].ptr, rows, h, 1, in[2].ptr);
  return MXC_OK;
}

/* _backward_FullyConnected: inputs (ograd, data, weight[, bias]),
 * outputs (ddata, dweight[, dbias]). */
static int fc_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in;
  const fc_param *p = param;
  int64_t rows = 0, feat = 0, h = p->num_hidden;
  fc_view(p, &in[1].shape, &rows, &feat);
  int dt = in[0].dtype;
  const void *g = in[0].ptr, *x = in[1].ptr, *w = in[2].ptr;
  if (req[0] != MXC__REQ_NULL) { /* dX (rows, feat) = G (rows, h) W (h, feat) */
    mxc__gemm(dt, 0, 0, rows, feat, h, g, h, w, feat, req[0] == MXC__REQ_ADD,
              out[0].ptr, feat);
  }
  if (req[1] != MXC__REQ_NULL) { /* dW (h, feat) = G^T X */
    mxc__gemm(dt, 1, 0, h, feat, rows, g, h, x, feat, req[1] == MXC__REQ_ADD,
              out[1].ptr, feat);
  }
  if (n_out > 2 && req[2] != MXC__REQ_NULL) {
    mxc__sum_bias(dt, g, rows, h, 1, req[2], out[2].ptr);
  }
  return MXC_OK;
}

#define FC_PARAMS MXC__PARAMS_OF(fc_param, k_params)

/* Half-precision arrays compute in float32 (core/op/half_compute.h). */
MXC__HALF_COMPUTE_FN(fc_forward_any, fc_forward, 0)
MXC__HALF_COMPUTE_FN(fc_backward_any, fc_backward, 0)

int mxc__fc_infer_shape(const mxc__op *op, const mxc__fc_param *p,
                        mxc__shape *in, int n_in, mxc__shape *out) {
  return fc_infer_shape(op, p, in, n_in, out, 1);
}

int mxc__fc_forward(const mxc__op *op, const mxc__opctx *ctx,
                    const mxc__fc_param *p, const mxc__blob *in, int n_in,
                    const mxc__blob *out, const mxc__req *req) {
  return fc_forward_any(op, ctx, p, in, n_in, out, 1, req);
}

static const mxc__op k_fc = {
    .name = "FullyConnected",
    .doc =
        "Affine map data . weight^T + bias: data (N, ...) flattened to "
        "(N, in) (or, with flatten=false, features on the last axis), "
        "weight (num_hidden, in), bias (num_hidden).",
    FC_PARAMS,
    .num_inputs = fc_num_inputs,
    .input_names = k_names,
    .input_name = fc_input_name,
    .n_outputs = 1,
    .infer_shape = fc_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = fc_forward_any,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 3, /* data and weight */
};

static const mxc__op k_fc_bwd = {
    .name = "_backward_FullyConnected",
    .doc = "Gradient of FullyConnected.",
    FC_PARAMS,
    .num_inputs = fc_bwd_num_inputs,
    .input_names = k_bwd_names,
    .input_name = fc_bwd_input_name,
    .num_outputs = fc_bwd_num_outputs,
    .infer_shape = fc_bwd_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = fc_backward_any,
    .hidden = 1,
};

int mxc__linalg_register_fc(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fc));
  return mxc__registry_add(r, &k_fc_bwd);
}
