/* where(condition, x, y): x where condition is nonzero, else y, and its
 * gradient (the output gradient masked by condition for x, by its
 * complement for y; none for condition).
 *
 * As in MXNet, condition has x's shape, or is 1-D with x.shape[0]
 * elements and then selects whole rows. Either way each condition element
 * governs a run of `inner` consecutive elements (1, or the row size), which
 * the kernels move as one block. */
#include "ops/indexing/internal.h"

/* condition against the shape s of x: same shape, or 1-D of s[0]. */
static int where_cond_check(const mxc__op *op, const mxc__shape *cond,
                            const mxc__shape *s) {
  if (mxc__shape_equal(cond, s)) return MXC_OK;
  if (cond->ndim == 1 && s->ndim >= 1 && cond->dims[0] == s->dims[0]) {
    return MXC_OK;
  }
  char b1[160], b2[160];
  return mxc__error_set(MXC_ERR_SHAPE,
                        "operator '%s': condition has shape %s but x has "
                        "shape %s; condition must have x's shape or be 1-D "
                        "with x.shape[0] elements",
                        op->name, mxc__shape_str(cond, b1, sizeof b1),
                        mxc__shape_str(s, b2, sizeof b2));
}

/* where: (condition, x, y) -> out. */
static int where_shape(const mxc__op *op, const void *param, mxc__shape *in,
                       int n_in, mxc__shape *out, int n_out) {
  (void)param, (void)n_in, (void)n_out;
  char b1[160], b2[160];
  if (in[1].ndim >= 0 && in[2].ndim >= 0) {
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&in[1], &in[2]), MXC_ERR_SHAPE,
                        "operator '%s': x has shape %s but y has shape %s; "
                        "they must have the same shape",
                        op->name, mxc__shape_str(&in[1], b1, sizeof b1),
                        mxc__shape_str(&in[2], b2, sizeof b2));
  }
  mxc__shape s;
  if (in[1].ndim >= 0) {
    s = in[1];
  } else if (in[2].ndim >= 0) {
    s = in[2];
  } else if (out[0].ndim >= 0) {
    s = out[0];
  } else {
    return MXC_OK;
  }
  in[1] = s;
  in[2] = s;
  if (in[0].ndim < 0) in[0] = s;
  MXC_FORWARD_IF_ERROR(where_cond_check(op, &in[0], &s));
  return mxc__idx_assign_shape(op, &out[0], &s, "output 0");
}

/* _backward_where: (ograd, condition) -> (dx, dy). */
static int where_bwd_shape(const mxc__op *op, const void *param,
                           mxc__shape *in, int n_in, mxc__shape *out,
                           int n_out) {
  (void)param, (void)n_in, (void)n_out;
  if (in[0].ndim < 0) return MXC_OK;
  if (in[1].ndim < 0) in[1] = in[0];
  MXC_FORWARD_IF_ERROR(where_cond_check(op, &in[1], &in[0]));
  MXC_FORWARD_IF_ERROR(mxc__idx_assign_shape(op, &out[0], &in[0],
                                             "output 0"));
  return mxc__idx_assign_shape(op, &out[1], &in[0], "output 1");
}

static int where_type(const mxc__op *op, const void *param, int *in,
                      int n_in, int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 6u);
}

static int where_bwd_type(const mxc__op *op, const void *param, int *in,
                          int n_in, int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 1u);
}

/* Elements governed by one condition element. */
static int64_t where_inner(const mxc__blob *cond, const mxc__shape *s) {
  if (mxc__shape_equal(&cond->shape, s)) return 1;
  return mxc__idx_span(s, 1, s->ndim);
}

static int where_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)op, (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t inner = where_inner(&in[0], &in[1].shape);
  int64_t runs = mxc__shape_size(&in[0].shape);
  for (int64_t r = 0; r < runs; ++r) {
    const mxc__blob *src = mxc__blob_get(&in[0], r) != 0 ? &in[1] : &in[2];
    mxc__idx_move(&out[0], r * inner, src, r * inner, inner, req[0]);
  }
  return MXC_OK;
}

static int where_backward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  (void)op, (void)ctx, (void)param, (void)n_in, (void)n_out;
  /* Zero both (unless accumulating), then add ograd where selected. */
  int want_x = mxc__idx_begin_accum(&out[0], req[0]);
  int want_y = mxc__idx_begin_accum(&out[1], req[1]);
  int64_t inner = where_inner(&in[1], &in[0].shape);
  int64_t runs = mxc__shape_size(&in[1].shape);
  for (int64_t r = 0; r < runs; ++r) {
    int c = mxc__blob_get(&in[1], r) != 0;
    if (c ? !want_x : !want_y) continue;
    mxc__idx_move(&out[c ? 0 : 1], r * inner, &in[0], r * inner, inner,
                  MXC__REQ_ADD);
  }
  return MXC_OK;
}

/* Gradients for x and y from one backward node; none for condition. */
static int where_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                          mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[0]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op_like("_backward_where", fwd, ins, 2, &b));
  mxc__entry none = {NULL, 0};
  igrad[0] = none;
  igrad[1] = mxc__entry_ref(b, 0);
  igrad[2] = mxc__entry_ref(b, 1);
  mxc__node_release(b); /* the entries hold it now */
  return MXC_OK;
}

static const char *const k_in[] = {"condition", "x", "y", NULL};
static const char *const k_bwd_in[] = {"ograd", "condition", NULL};
static const char *const k_bwd_out[] = {"x_grad", "y_grad", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "where",
        .doc = "Elements of x where condition is nonzero, else of y. "
               "condition has x's shape, or is 1-D of x.shape[0] (selects "
               "rows).",
        .n_inputs = 3,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = where_shape,
        .infer_type = where_type,
        .compute = where_forward,
        .gradient = where_gradient,
        .backward_uses_inputs = 1,
    },
    {
        .name = "_backward_where",
        .doc = "Gradient of where with respect to x and y.",
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 2,
        .output_names = k_bwd_out,
        .infer_shape = where_bwd_shape,
        .infer_type = where_bwd_type,
        .compute = where_backward,
        .hidden = 1,
    },
};

int mxc__idx_register_where(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
