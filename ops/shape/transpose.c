/* Axis permutations and reversals: transpose, swapaxes, flip. Each reads
 * its input through permuted (or negated) strides. Each is its own
 * gradient's kind: the gradient of transpose is transpose by the inverse
 * permutation, those of swapaxes and flip are the same operator again, so
 * no _backward_ operators are needed and higher-order gradients come for
 * free. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/shape/shape_internal.h"

static const char *const k_data[] = {"data", NULL};

/* Reads in through the permutation perm: out axis k is in axis perm[k]. */
static void permute_copy(const mxc__blob *in, const mxc__blob *out,
                         const int *perm, mxc__req req) {
  int nd = in->shape.ndim;
  int64_t istr[MXC_MAX_NDIM];
  mxc__shp_strides(in->shape.dims, nd, istr);
  mxc__shp_iter it;
  mxc__shp_iter_contig(&it, out->shape.dims, nd);
  for (int k = 0; k < nd; ++k) it.src_stride[k] = istr[perm[k]];
  mxc__shp_copy(&it, out, in, req);
}

/* ---- transpose ---- */

typedef struct transpose_param {
  mxc__tuple axes;
} transpose_param;

static const mxc__param_def k_transpose_params[] = {
    MXC__PARAM(transpose_param, axes, MXC__P_TUPLE, "()",
               "output axis k is input axis axes[k] (negative counts from "
               "the end); empty reverses the axes"),
};

/* The permutation for an nd-d input (empty axes: reversed). */
static int transpose_perm(const char *op_name, const transpose_param *p, int nd,
                          int *perm) {
  if (p->axes.ndim <= 0) {
    for (int k = 0; k < nd; ++k) perm[k] = nd - 1 - k;
    return MXC_OK;
  }
  char b1[256];
  MXC_RETURN_ERROR_IF(p->axes.ndim != nd, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'axes' = %s has %d entries "
                      "but the input has %d dimensions",
                      op_name, mxc__shp_tuple_str(&p->axes, b1, sizeof b1),
                      p->axes.ndim, nd);
  int seen[MXC__TUPLE_MAX] = {0};
  for (int k = 0; k < nd; ++k) {
    MXC_FORWARD_IF_ERROR(
        mxc__shp_axis(op_name, "axes", p->axes.d[k], nd, &perm[k]));
    MXC_RETURN_ERROR_IF(seen[perm[k]]++, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'axes' = %s names axis %d "
                        "twice; it must be a permutation",
                        op_name, mxc__shp_tuple_str(&p->axes, b1, sizeof b1),
                        perm[k]);
  }
  return MXC_OK;
}

/* Checks what does not need the input: a non-empty axes must be a
 * permutation of its own length. */
static int transpose_check(const char *op_name, void *param) {
  const transpose_param *p = param;
  int perm[MXC__TUPLE_MAX];
  if (p->axes.ndim > MXC_MAX_NDIM) {
    return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': parameter 'axes' has %d entries; "
                          "arrays have at most %d dimensions",
                          op_name, p->axes.ndim, MXC_MAX_NDIM);
  }
  return transpose_perm(op_name, p, p->axes.ndim > 0 ? p->axes.ndim : 0, perm);
}

static int transpose_shape(const mxc__op *op, const void *param, mxc__shape *in,
                           int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  int nd = in[0].ndim, perm[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(transpose_perm(op->name, param, nd, perm));
  mxc__shape s = in[0];
  for (int k = 0; k < nd; ++k) s.dims[k] = in[0].dims[perm[k]];
  return mxc__shp_set_out(op, out, 0, &s);
}

static int transpose_forward(const mxc__op *op, const mxc__opctx *ctx,
                             const void *param, const mxc__blob *in, int n_in,
                             const mxc__blob *out, int n_out,
                             const mxc__req *req) {
  int perm[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(transpose_perm(op->name, param, in[0].shape.ndim, perm));
  permute_copy(&in[0], &out[0], perm, req[0]);
  return MXC_OK;
}

/* Hands the single new node's creation reference to igrad[0]. */
static void grad_from(mxc__node *b, mxc__entry *igrad) {
  igrad[0].node = b;
  igrad[0].index = 0;
}

static int transpose_grad(const mxc__node *fwd, const mxc__entry *ograd,
                          mxc__entry *igrad) {
  const transpose_param *p = fwd->param;
  mxc__node *b = NULL;
  if (p->axes.ndim <= 0) { /* reversing twice is the identity */
    MXC_FORWARD_IF_ERROR(mxc__node_op_like("transpose", fwd, ograd, 1, &b));
    grad_from(b, igrad);
    return MXC_OK;
  }
  int nd = p->axes.ndim, perm[MXC__TUPLE_MAX], inv[MXC__TUPLE_MAX];
  MXC_FORWARD_IF_ERROR(transpose_perm(fwd->op->name, p, nd, perm));
  for (int k = 0; k < nd; ++k) inv[perm[k]] = k;
  char buf[MXC__TUPLE_MAX * 4 + 4];
  size_t pos = (size_t)snprintf(buf, sizeof buf, "(");
  for (int k = 0; k < nd; ++k) {
    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%d", k ? "," : "",
                            inv[k]);
  }
  snprintf(buf + pos, sizeof buf - pos, ")");
  const char *keys[] = {"axes"};
  const char *vals[] = {buf};
  MXC_FORWARD_IF_ERROR(
      mxc__node_op("transpose", keys, vals, 1, ograd, 1, fwd->name, &b));
  grad_from(b, igrad);
  return MXC_OK;
}

/* ---- swapaxes ---- */

typedef struct swap_param {
  int64_t dim1, dim2;
} swap_param;

static const mxc__param_def k_swap_params[] = {
    MXC__PARAM(swap_param, dim1, MXC__P_INT, "0", "first axis to swap"),
    MXC__PARAM(swap_param, dim2, MXC__P_INT, "0", "second axis to swap"),
};

static int swap_perm(const char *op_name, const swap_param *p, int nd,
                     int *perm) {
  int a, b;
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op_name, "dim1", p->dim1, nd, &a));
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op_name, "dim2", p->dim2, nd, &b));
  for (int k = 0; k < nd; ++k) perm[k] = k;
  perm[a] = b;
  perm[b] = a;
  return MXC_OK;
}

static int swap_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  int nd = in[0].ndim, perm[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(swap_perm(op->name, param, nd, perm));
  mxc__shape s = in[0];
  for (int k = 0; k < nd; ++k) s.dims[k] = in[0].dims[perm[k]];
  return mxc__shp_set_out(op, out, 0, &s);
}

static int swap_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  int perm[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(swap_perm(op->name, param, in[0].shape.ndim, perm));
  permute_copy(&in[0], &out[0], perm, req[0]);
  return MXC_OK;
}

/* swapaxes and flip are their own inverses. */
static int self_grad(const mxc__node *fwd, const mxc__entry *ograd,
                     mxc__entry *igrad) {
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(mxc__node_op_like(fwd->op->name, fwd, ograd, 1, &b));
  grad_from(b, igrad);
  return MXC_OK;
}

/* ---- flip ---- */

typedef struct flip_param {
  mxc__tuple axis;
} flip_param;

static const mxc__param_def k_flip_params[] = {
    MXC__PARAM(flip_param, axis, MXC__P_TUPLE, NULL,
               "axes to reverse (negative counts from the end)"),
};

/* flipped[k] = 1 for each listed axis. */
static int flip_axes(const char *op_name, const flip_param *p, int nd,
                     int *flipped) {
  for (int k = 0; k < nd; ++k) flipped[k] = 0;
  for (int i = 0; i < p->axis.ndim; ++i) {
    int ax;
    MXC_FORWARD_IF_ERROR(mxc__shp_axis(op_name, "axis", p->axis.d[i], nd, &ax));
    MXC_RETURN_ERROR_IF(flipped[ax], MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'axis' names axis %d twice",
                        op_name, ax);
    flipped[ax] = 1;
  }
  return MXC_OK;
}

static int flip_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  int flipped[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(flip_axes(op->name, param, in[0].ndim, flipped));
  return mxc__shp_set_out(op, out, 0, &in[0]);
}

static int flip_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  int nd = in[0].shape.ndim, flipped[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(flip_axes(op->name, param, nd, flipped));
  mxc__shp_iter it;
  mxc__shp_iter_contig(&it, in[0].shape.dims, nd);
  for (int k = 0; k < nd; ++k) {
    if (!flipped[k]) continue;
    /* Start at the last element of the axis and walk backwards. */
    it.src_off += (it.dims[k] - 1) * it.src_stride[k];
    it.src_stride[k] = -it.src_stride[k];
  }
  mxc__shp_copy(&it, &out[0], &in[0], req[0]);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_swap_alias[] = {"SwapAxis", NULL};
static const char *const k_flip_alias[] = {"reverse", NULL};

static const mxc__op k_transpose = {
    .name = "transpose",
    .doc =
        "Permutes the axes: output axis k is input axis axes[k] "
        "(reversed when axes is empty).",
    MXC__PARAMS_OF(transpose_param, k_transpose_params),
    .param_check = transpose_check,
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = transpose_shape,
    .compute = transpose_forward,
    .gradient = transpose_grad,
};

static const mxc__op k_swap = {
    .name = "swapaxes",
    .aliases = k_swap_alias,
    .doc = "Exchanges axes dim1 and dim2.",
    MXC__PARAMS_OF(swap_param, k_swap_params),
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = swap_shape,
    .compute = swap_forward,
    .gradient = self_grad,
};

static const mxc__op k_flip = {
    .name = "flip",
    .aliases = k_flip_alias,
    .doc = "Reverses the order of elements along the given axes.",
    MXC__PARAMS_OF(flip_param, k_flip_params),
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = flip_shape,
    .compute = flip_forward,
    .gradient = self_grad,
};

int mxc__shp_register_transpose(mxc__registry *r) {
  static const mxc__op *const ops[] = {&k_transpose, &k_swap, &k_flip, NULL};
  return mxc__shp_add_all(r, ops);
}
