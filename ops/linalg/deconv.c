/* Deconvolution (transposed convolution) and its gradient.
 *
 * Deconvolution is the adjoint of Convolution with the same kernel
 * geometry: its data plays the role of a convolution's output (the
 * "column" side of mxc__conv_geom) and its output the role of the
 * convolution's input (the "image" side). Output extent per axis:
 *   stride*(in-1) + dilate*(kernel-1) + 1 - 2*pad + adj,
 * or target_shape, from which pad and adj are then derived (the total
 * padding split evenly, an odd remainder going to adj).
 * weight is (C, num_filter/num_group, *kernel) for data with C channels.
 *
 * Forward, per chunk and group: col_g = W_g^T data_g, out = col2im(col).
 * Backward: col = im2col(dout); ddata_g = W_g col_g;
 * dW_g += data_g col_g^T; dbias = sums of dout. */
#include <stdio.h>
#include <string.h>

#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"
#include "core/op/half_compute.h"

static int deconv_check(const char *op_name, void *param) {
  return mxc__conv_param_check(op_name, param, 1);
}

/* Geometry and output shape for `data`: the padding actually used comes
 * back in pad[] (from target_shape when given). */
static int deconv_plan(const mxc__op *op, const mxc__conv_param *p,
                       const mxc__shape *data, mxc__conv_geom *g,
                       mxc__shape *out) {
  int nsp = p->kernel.ndim;
  char b1[160];
  MXC_RETURN_ERROR_IF(data->ndim != nsp + 2, MXC_ERR_SHAPE,
                      "operator '%s': data %s must have %d axes (batch, "
                      "channel and %d spatial) for a %d-D kernel",
                      op->name, mxc__shape_str(data, b1, sizeof b1), nsp + 2,
                      nsp, nsp);
  int64_t c = data->dims[1];
  MXC_RETURN_ERROR_IF(c % p->num_group != 0, MXC_ERR_SHAPE,
                      "operator '%s': data %s has %lld channels, not "
                      "divisible by num_group (%lld)",
                      op->name, mxc__shape_str(data, b1, sizeof b1),
                      (long long)c, (long long)p->num_group);
  int64_t osp[3] = {0, 0, 0}, pad[3] = {0, 0, 0};
  for (int i = 0; i < nsp; ++i) {
    int64_t in = data->dims[2 + i], span, full = 0;
    MXC_FORWARD_IF_ERROR(mxc__conv_span(op->name, p, i, &span));
    MXC_RETURN_ERROR_IF(
        in > 0 && (!mxc__mul_i64(p->stride.d[i], in - 1, &full) ||
                   !mxc__add_i64(full, span, &full)),
        MXC_ERR_SHAPE,
        "operator '%s': the output along spatial axis %d (stride %lld "
        "times %lld positions) overflows int64",
        op->name, i, (long long)p->stride.d[i], (long long)in);
    if (p->target_shape.ndim > 0) {
      int64_t total = full - p->target_shape.d[i];
      MXC_RETURN_ERROR_IF(total < 0, MXC_ERR_SHAPE,
                          "operator '%s': target_shape entry %lld along "
                          "spatial axis %d is larger than the largest "
                          "output (%lld) for data %s",
                          op->name, (long long)p->target_shape.d[i], i,
                          (long long)full, mxc__shape_str(data, b1, sizeof b1));
      pad[i] = (total + 1) / 2;
      osp[i] = p->target_shape.d[i];
    } else {
      pad[i] = p->pad.d[i];
      /* full - 2 * pad + adj, checked: when a step overflows, the true
       * value is below INT64_MIN + adj < 1 (a pad that large leaves no
       * output) or above INT64_MAX. */
      int ok = mxc__sub_i64(full - pad[i], pad[i], &osp[i]);
      int below = !ok;
      if (ok && !mxc__add_i64(osp[i], p->adj.d[i], &osp[i])) {
        return mxc__error_set(MXC_ERR_SHAPE,
                              "operator '%s': adj %lld along spatial axis "
                              "%d overflows the output extent",
                              op->name, (long long)p->adj.d[i], i);
      }
      if (below) osp[i] = -1;
      MXC_RETURN_ERROR_IF(osp[i] < 1 && in > 0, MXC_ERR_SHAPE,
                          "operator '%s': pad %lld leaves no output along "
                          "spatial axis %d for data %s",
                          op->name, (long long)pad[i], i,
                          mxc__shape_str(data, b1, sizeof b1));
      if (osp[i] < 0) osp[i] = 0;
    }
  }
  MXC_FORWARD_IF_ERROR(mxc__conv_geom_fill(op->name, p, pad, data->dims[0],
                                           p->num_filter, c, osp,
                                           data->dims + 2, g));
  out->ndim = nsp + 2;
  out->dims[0] = data->dims[0];
  out->dims[1] = p->num_filter;
  for (int i = 0; i < nsp; ++i) out->dims[2 + i] = osp[i];
  return MXC_OK;
}

static int deconv_infer_shape(const mxc__op *op, const void *param,
                              mxc__shape *in, int n_in, mxc__shape *out,
                              int n_out) {
  (void)n_out;
  const mxc__conv_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  mxc__conv_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(deconv_plan(op, p, &in[0], &g, &o));
  mxc__shape w = {p->kernel.ndim + 2, {g.col_c, p->num_filter / p->num_group}};
  for (int i = 0; i < p->kernel.ndim; ++i) w.dims[2 + i] = p->kernel.d[i];
  MXC_FORWARD_IF_ERROR(
      mxc__linalg_assign_shape(op, param, &in[1], &w, "input 1 ('weight')"));
  if (n_in > 2) {
    mxc__shape b = {1, {p->num_filter}};
    MXC_FORWARD_IF_ERROR(
        mxc__linalg_assign_shape(op, param, &in[2], &b, "input 2 ('bias')"));
  }
  return mxc__linalg_assign_shape(op, param, &out[0], &o, "output");
}

static int deconv_bwd_infer_shape(const mxc__op *op, const void *param,
                                  mxc__shape *in, int n_in, mxc__shape *out,
                                  int n_out) {
  if (in[1].ndim >= 0) {
    mxc__shape o = {-1, {0}};
    MXC_FORWARD_IF_ERROR(
        deconv_infer_shape(op, param, in + 1, n_in - 1, &o, 1));
    if (in[0].ndim >= 0) {
      MXC_FORWARD_IF_ERROR(
          mxc__linalg_assign_shape(op, param, &in[0], &o, "ograd"));
    }
  }
  return mxc__linalg_bwd_infer_shape(op, param, in, n_in, out, n_out);
}

/* ---- compute ---- */

#define AT(ptr, elems) ((char *)(ptr) + (size_t)(elems)*es)

/* Sizes shared by forward and backward: C data channels (column side),
 * F output channels (image side), Q data positions, K kernel taps. */
typedef struct deconv_sizes {
  int64_t C, Cg, F, FgK, Q, rows, nb;
  size_t col_bytes, side_bytes, es;
} deconv_sizes;

static void deconv_sizes_of(const mxc__conv_geom *g, int dt, deconv_sizes *z) {
  z->es = mxc__dtype_size(dt);
  z->C = g->col_c;
  z->Cg = z->C / g->groups;
  z->F = g->img_c;
  z->rows = z->F * g->k_n;
  z->FgK = z->rows / g->groups;
  z->Q = g->col_n;
  z->nb = mxc__conv_chunk(g, z->rows + z->C, z->es);
  z->col_bytes = (size_t)(z->rows * z->nb * z->Q) * z->es;
  /* data or its gradient gathered as (C, nb*Q) when nb > 1 */
  z->side_bytes = z->nb > 1 ? (size_t)(z->C * z->nb * z->Q) * z->es : 0;
}

static int deconv_forward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  mxc__conv_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(deconv_plan(op, param, &in[0].shape, &g, &o));
  int dt = in[0].dtype;
  deconv_sizes z;
  deconv_sizes_of(&g, dt, &z);
  size_t es = z.es;
  void *tmp = NULL;
  if (z.col_bytes + z.side_bytes) {
    MXC_FORWARD_IF_ERROR(
        mxc__opctx_temp(ctx, z.col_bytes + z.side_bytes, &tmp));
  }
  mxc__clear_unless_add(out[0].ptr, (size_t)mxc__shape_size(&o) * es, req[0]);
  for (int64_t n0 = 0; n0 < g.batch; n0 += z.nb) {
    int64_t cur = g.batch - n0 < z.nb ? g.batch - n0 : z.nb;
    int64_t ncol = cur * z.Q;
    const void *x = AT(in[0].ptr, n0 * z.C * z.Q);
    if (cur > 1) {
      void *packed = AT(tmp, z.col_bytes / es);
      mxc__pack_chunk(dt, x, cur, z.C, z.Q, packed);
      x = packed;
    }
    for (int64_t gr = 0; gr < g.groups; ++gr) { /* col_g = W_g^T x_g */
      mxc__gemm(dt, 1, 0, z.FgK, ncol, z.Cg, AT(in[1].ptr, gr * z.Cg * z.FgK),
                z.FgK, AT(x, gr * z.Cg * ncol), ncol, 0,
                AT(tmp, gr * z.FgK * ncol), ncol);
    }
    mxc__col2im(dt, &g, tmp, cur, AT(out[0].ptr, n0 * z.F * g.img_n));
  }
  if (n_in > 2) mxc__add_bias(dt, out[0].ptr, g.batch, z.F, g.img_n, in[2].ptr);
  return MXC_OK;
}

/* _backward_Deconvolution: inputs (ograd, data, weight[, bias]), outputs
 * (ddata, dweight[, dbias]). */
static int deconv_backward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)n_in;
  mxc__conv_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(deconv_plan(op, param, &in[1].shape, &g, &o));
  int dt = in[0].dtype;
  deconv_sizes z;
  deconv_sizes_of(&g, dt, &z);
  size_t es = z.es;
  int need_dx = req[0] != MXC__REQ_NULL, need_dw = req[1] != MXC__REQ_NULL;
  if (n_out > 2 && req[2] != MXC__REQ_NULL) {
    mxc__sum_bias(dt, in[0].ptr, g.batch, z.F, g.img_n, req[2], out[2].ptr);
  }
  if (need_dw && g.batch == 0) {
    mxc__clear_unless_add(out[1].ptr, (size_t)(z.C * z.FgK) * es, req[1]);
  }
  if (!need_dx && !need_dw) return MXC_OK;
  void *tmp = NULL;
  if (z.col_bytes + z.side_bytes) {
    MXC_FORWARD_IF_ERROR(
        mxc__opctx_temp(ctx, z.col_bytes + z.side_bytes, &tmp));
  }
  void *side = tmp ? AT(tmp, z.col_bytes / es) : NULL;
  for (int64_t n0 = 0; n0 < g.batch; n0 += z.nb) {
    int64_t cur = g.batch - n0 < z.nb ? g.batch - n0 : z.nb;
    int64_t ncol = cur * z.Q;
    size_t xoff = (size_t)(n0 * z.C * z.Q);
    mxc__im2col(dt, &g, AT(in[0].ptr, n0 * z.F * g.img_n), cur, tmp);
    if (need_dx) { /* dx_g (Cg, ncol) = W_g (Cg, FgK) col_g */
      void *dst = cur == 1 ? AT(out[0].ptr, xoff) : side;
      int acc = cur == 1 && req[0] == MXC__REQ_ADD;
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        mxc__gemm(dt, 0, 0, z.Cg, ncol, z.FgK, AT(in[2].ptr, gr * z.Cg * z.FgK),
                  z.FgK, AT(tmp, gr * z.FgK * ncol), ncol, acc,
                  AT(dst, gr * z.Cg * ncol), ncol);
      }
      if (cur > 1) {
        mxc__unpack_chunk(dt, side, cur, z.C, z.Q, NULL, req[0],
                          AT(out[0].ptr, xoff));
      }
    }
    if (need_dw) { /* dW_g (Cg, FgK) += x_g (Cg, ncol) col_g^T */
      const void *x = AT(in[1].ptr, xoff);
      if (cur > 1) {
        mxc__pack_chunk(dt, x, cur, z.C, z.Q, side);
        x = side;
      }
      int acc = n0 > 0 || req[1] == MXC__REQ_ADD;
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        mxc__gemm(dt, 0, 1, z.Cg, z.FgK, ncol, AT(x, gr * z.Cg * ncol), ncol,
                  AT(tmp, gr * z.FgK * ncol), ncol, acc,
                  AT(out[1].ptr, gr * z.Cg * z.FgK), z.FgK);
      }
    }
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const mxc__param_def k_params[] = {
    MXC__CONV_PARAM_DEFS,
    MXC__PARAM(mxc__conv_param, adj, MXC__P_TUPLE, "()",
               "Extra output size at the end of each spatial axis (less "
               "than the stride or dilation); default 0."),
    MXC__PARAM(mxc__conv_param, target_shape, MXC__P_TUPLE, "()",
               "Output spatial shape; when given, pad and adj are derived "
               "from it."),
};

#define DECONV_PARAMS \
  MXC__PARAMS_OF(mxc__conv_param, k_params), .param_check = deconv_check

/* Half-precision arrays compute in float32 (core/op/half_compute.h). */
MXC__HALF_COMPUTE_FN(deconv_forward_any, deconv_forward, 0)
MXC__HALF_COMPUTE_FN(deconv_backward_any, deconv_backward, 0)

static const mxc__op k_deconv = {
    .name = "Deconvolution",
    .doc =
        "Transposed convolution (the adjoint of Convolution): data (N, "
        "C, ...), weight (C, num_filter/num_group, *kernel), bias "
        "(num_filter) -> (N, num_filter, ...).",
    DECONV_PARAMS,
    .num_inputs = mxc__conv_num_inputs,
    .input_names = mxc__conv_input_names,
    .input_name = mxc__conv_input_name,
    .n_outputs = 1,
    .infer_shape = deconv_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = deconv_forward_any,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 3,
    .resources = MXC__RES_TEMP,
};

static const mxc__op k_deconv_bwd = {
    .name = "_backward_Deconvolution",
    .doc = "Gradient of Deconvolution.",
    DECONV_PARAMS,
    .num_inputs = mxc__conv_bwd_num_inputs,
    .input_names = mxc__conv_bwd_input_names,
    .input_name = mxc__conv_bwd_input_name,
    .num_outputs = mxc__conv_bwd_num_outputs,
    .infer_shape = deconv_bwd_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = deconv_backward_any,
    .resources = MXC__RES_TEMP,
    .hidden = 1,
};

int mxc__linalg_register_deconvolution(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_deconv));
  return mxc__registry_add(r, &k_deconv_bwd);
}
