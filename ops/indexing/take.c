/* take and pick: selecting along one axis by index arrays, and their
 * gradients (scatter-adding the output gradient back into zeros of the
 * data's shape, so repeated indices accumulate).
 *
 * Both views of data are (outer, n, inner): `outer` elements before the
 * axis, the axis of extent n, `inner` elements after it. take copies whole
 * inner runs per index; pick moves one element per output position. */
#include "ops/indexing/internal.h"

/* ---- take ---- */

typedef struct take_param {
  int64_t axis;
  int mode;
} take_param;

static const char *const k_take_modes[] = {"clip", "wrap", "raise", NULL};

static const mxc__param_def k_take_params[] = {
    MXC__PARAM(take_param, axis, MXC__P_INT, "0",
               "Axis to take along; negative counts from the end."),
    MXC__PARAM_ENUM(take_param, mode, "clip", k_take_modes,
                    "Out-of-range indices: 'clip' to the ends, 'wrap' "
                    "around (negative count from the end), or 'raise' an "
                    "error at run time (-n..n-1 accepted, as in numpy)."),
};

/* Output shape of take: data.shape[:axis] + indices.shape +
 * data.shape[axis+1:]. */
static int take_out_shape(const mxc__op *op, const take_param *p,
                          const mxc__shape *data, const mxc__shape *idx,
                          mxc__shape *out) {
  char b1[160];
  MXC_RETURN_ERROR_IF(data->ndim == 0, MXC_ERR_SHAPE,
                      "operator '%s': data has shape (); take needs data "
                      "with at least one dimension",
                      op->name);
  int ax = 0;
  MXC_FORWARD_IF_ERROR(mxc__idx_axis(op->name, p->axis, data->ndim, &ax));
  int nd = data->ndim - 1 + idx->ndim;
  MXC_RETURN_ERROR_IF(nd > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': the output would have %d dimensions; "
                      "at most %d are supported",
                      op->name, nd, MXC_MAX_NDIM);
  MXC_RETURN_ERROR_IF(data->dims[ax] == 0 && mxc__shape_size(idx) > 0,
                      MXC_ERR_SHAPE,
                      "operator '%s': axis %d of data (shape %s) has extent "
                      "0; there is nothing to take",
                      op->name, ax, mxc__shape_str(data, b1, sizeof b1));
  mxc__shape s;
  s.ndim = nd;
  int k = 0;
  for (int i = 0; i < ax; ++i) s.dims[k++] = data->dims[i];
  for (int i = 0; i < idx->ndim; ++i) s.dims[k++] = idx->dims[i];
  for (int i = ax + 1; i < data->ndim; ++i) s.dims[k++] = data->dims[i];
  *out = s;
  return MXC_OK;
}

/* take: (data, indices) -> out. */
static int take_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  (void)n_in, (void)n_out;
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(take_out_shape(op, param, &in[0], &in[1], &s));
  return mxc__idx_assign_shape(op, &out[0], &s, "output 0");
}

/* _backward_take: (ograd, data, indices) -> gradient of data. */
static int take_bwd_shape(const mxc__op *op, const void *param,
                          mxc__shape *in, int n_in, mxc__shape *out,
                          int n_out) {
  (void)n_in, (void)n_out;
  if (in[1].ndim < 0 || in[2].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(take_out_shape(op, param, &in[1], &in[2], &s));
  MXC_FORWARD_IF_ERROR(mxc__idx_assign_shape(op, &in[0], &s, "ograd"));
  return mxc__idx_assign_shape(op, &out[0], &in[1], "output 0");
}

static int take_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 1u);
}

static int take_bwd_type(const mxc__op *op, const void *param, int *in,
                         int n_in, int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 3u);
}

/* The geometry shared by forward and backward, with raise-mode indices
 * checked up front so that an error leaves nothing half-written. */
typedef struct take_geom {
  int64_t outer, n, inner, m;
  int mode;
} take_geom;

static int take_setup(const mxc__op *op, const take_param *p,
                      const mxc__blob *data, const mxc__blob *idx,
                      take_geom *g) {
  int ax = 0;
  MXC_FORWARD_IF_ERROR(mxc__idx_axis(op->name, p->axis, data->shape.ndim,
                                     &ax));
  g->outer = mxc__idx_span(&data->shape, 0, ax);
  g->n = data->shape.dims[ax];
  g->inner = mxc__idx_span(&data->shape, ax + 1, data->shape.ndim);
  g->m = mxc__shape_size(&idx->shape);
  g->mode = p->mode;
  if (g->mode != MXC__IDX_RAISE) return MXC_OK;
  for (int64_t j = 0; j < g->m; ++j) {
    int64_t v = mxc__idx_at(idx, j);
    if (mxc__idx_fix(v, g->n, g->mode) < 0) {
      return mxc__idx_range_error(op->name, v, ax, g->n);
    }
  }
  return MXC_OK;
}

static int take_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out,
                        const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  take_geom g;
  MXC_FORWARD_IF_ERROR(take_setup(op, param, &in[0], &in[1], &g));
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t j = 0; j < g.m; ++j) {
      int64_t k = mxc__idx_fix(mxc__idx_at(&in[1], j), g.n, g.mode);
      mxc__idx_move(&out[0], (o * g.m + j) * g.inner, &in[0],
                    (o * g.n + k) * g.inner, g.inner, req[0]);
    }
  }
  return MXC_OK;
}

static int take_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  take_geom g;
  MXC_FORWARD_IF_ERROR(take_setup(op, param, &in[1], &in[2], &g));
  if (!mxc__idx_begin_accum(&out[0], req[0])) return MXC_OK;
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t j = 0; j < g.m; ++j) {
      int64_t k = mxc__idx_fix(mxc__idx_at(&in[2], j), g.n, g.mode);
      mxc__idx_move(&out[0], (o * g.n + k) * g.inner, &in[0],
                    (o * g.m + j) * g.inner, g.inner, MXC__REQ_ADD);
    }
  }
  return MXC_OK;
}

/* ---- pick ---- */

typedef struct pick_param {
  int64_t axis;
  int keepdims;
  int mode;
} pick_param;

static const char *const k_pick_modes[] = {"clip", "wrap", NULL};

static const mxc__param_def k_pick_params[] = {
    MXC__PARAM(pick_param, axis, MXC__P_INT, "-1",
               "Axis to pick along; negative counts from the end."),
    MXC__PARAM(pick_param, keepdims, MXC__P_BOOL, "false",
               "Keep the picked axis with extent 1."),
    MXC__PARAM_ENUM(pick_param, mode, "clip", k_pick_modes,
                    "Out-of-range indices: 'clip' to the ends or 'wrap' "
                    "around (negative count from the end)."),
};

/* Output shape of pick (data without the axis, or with extent 1 when
 * keepdims); *ax receives the normalized axis. */
static int pick_out_shape(const mxc__op *op, const pick_param *p,
                          const mxc__shape *data, mxc__shape *out, int *ax) {
  char b1[160];
  MXC_RETURN_ERROR_IF(data->ndim == 0, MXC_ERR_SHAPE,
                      "operator '%s': data has shape (); pick needs data "
                      "with at least one dimension",
                      op->name);
  MXC_FORWARD_IF_ERROR(mxc__idx_axis(op->name, p->axis, data->ndim, ax));
  mxc__shape s = *data;
  if (p->keepdims) {
    s.dims[*ax] = 1;
  } else {
    for (int i = *ax; i + 1 < data->ndim; ++i) s.dims[i] = data->dims[i + 1];
    s.ndim--;
  }
  MXC_RETURN_ERROR_IF(data->dims[*ax] == 0 && mxc__shape_size(&s) > 0,
                      MXC_ERR_SHAPE,
                      "operator '%s': axis %d of data (shape %s) has extent "
                      "0; there is nothing to pick",
                      op->name, *ax, mxc__shape_str(data, b1, sizeof b1));
  *out = s;
  return MXC_OK;
}

/* The index may have data's shape without the axis, or with extent 1
 * there (both lay out the same elements); an unknown one gets the output
 * shape. */
static int pick_check_index(const mxc__op *op, const mxc__shape *data,
                            int ax, const mxc__shape *want,
                            mxc__shape *index) {
  if (index->ndim < 0) {
    *index = *want;
    return MXC_OK;
  }
  mxc__shape drop = *data, keep = *data;
  for (int i = ax; i + 1 < data->ndim; ++i) drop.dims[i] = data->dims[i + 1];
  drop.ndim--;
  keep.dims[ax] = 1;
  if (mxc__shape_equal(index, &drop) || mxc__shape_equal(index, &keep)) {
    return MXC_OK;
  }
  char b1[160], b2[160], b3[160];
  return mxc__error_set(MXC_ERR_SHAPE,
                        "operator '%s': index has shape %s but data has "
                        "shape %s; index must have shape %s (data without "
                        "axis %d)",
                        op->name, mxc__shape_str(index, b1, sizeof b1),
                        mxc__shape_str(data, b2, sizeof b2),
                        mxc__shape_str(&drop, b3, sizeof b3), ax);
}

/* pick: (data, index) -> out. */
static int pick_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  (void)n_in, (void)n_out;
  if (in[0].ndim < 0) return MXC_OK;
  mxc__shape s;
  int ax = 0;
  MXC_FORWARD_IF_ERROR(pick_out_shape(op, param, &in[0], &s, &ax));
  MXC_FORWARD_IF_ERROR(pick_check_index(op, &in[0], ax, &s, &in[1]));
  return mxc__idx_assign_shape(op, &out[0], &s, "output 0");
}

/* _backward_pick: (ograd, data, index) -> gradient of data. */
static int pick_bwd_shape(const mxc__op *op, const void *param,
                          mxc__shape *in, int n_in, mxc__shape *out,
                          int n_out) {
  (void)n_in, (void)n_out;
  if (in[1].ndim < 0) return MXC_OK;
  mxc__shape s;
  int ax = 0;
  MXC_FORWARD_IF_ERROR(pick_out_shape(op, param, &in[1], &s, &ax));
  MXC_FORWARD_IF_ERROR(pick_check_index(op, &in[1], ax, &s, &in[2]));
  MXC_FORWARD_IF_ERROR(mxc__idx_assign_shape(op, &in[0], &s, "ograd"));
  return mxc__idx_assign_shape(op, &out[0], &in[1], "output 0");
}

typedef struct pick_geom {
  int64_t outer, n, inner;
  int mode;
} pick_geom;

static pick_geom pick_setup(const pick_param *p, const mxc__blob *data) {
  int nd = data->shape.ndim;
  int ax = (int)(p->axis < 0 ? p->axis + nd : p->axis); /* checked */
  pick_geom g = {mxc__idx_span(&data->shape, 0, ax), data->shape.dims[ax],
                 mxc__idx_span(&data->shape, ax + 1, nd), p->mode};
  return g;
}

static int pick_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out,
                        const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  pick_geom g = pick_setup(param, &in[0]);
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t i = 0; i < g.inner; ++i) {
      int64_t at = o * g.inner + i;
      int64_t k = mxc__idx_fix(mxc__idx_at(&in[1], at), g.n, g.mode);
      mxc__idx_move(&out[0], at, &in[0], (o * g.n + k) * g.inner + i, 1,
                    req[0]);
    }
  }
  return MXC_OK;
}

static int pick_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in, (void)n_out;
  if (!mxc__idx_begin_accum(&out[0], req[0])) return MXC_OK;
  pick_geom g = pick_setup(param, &in[1]);
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t i = 0; i < g.inner; ++i) {
      int64_t at = o * g.inner + i;
      int64_t k = mxc__idx_fix(mxc__idx_at(&in[2], at), g.n, g.mode);
      mxc__idx_move(&out[0], (o * g.n + k) * g.inner + i, &in[0], at, 1,
                    MXC__REQ_ADD);
    }
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_take_in[] = {"a", "indices", NULL};
static const char *const k_pick_in[] = {"data", "index", NULL};
static const char *const k_take_bwd_in[] = {"ograd", "a", "indices", NULL};
static const char *const k_pick_bwd_in[] = {"ograd", "data", "index", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "take",
        .doc = "Takes elements of a along axis at the given indices: the "
               "output has shape a.shape[:axis] + indices.shape + "
               "a.shape[axis+1:].",
        MXC__PARAMS_OF(take_param, k_take_params),
        .n_inputs = 2,
        .input_names = k_take_in,
        .n_outputs = 1,
        .infer_shape = take_shape,
        .infer_type = take_type,
        .compute = take_forward,
        .gradient = mxc__idx_grad_data_only,
        .backward_uses_inputs = 3,
    },
    {
        .name = "_backward_take",
        .doc = "Gradient of take with respect to a (repeated indices "
               "accumulate).",
        MXC__PARAMS_OF(take_param, k_take_params),
        .n_inputs = 3,
        .input_names = k_take_bwd_in,
        .n_outputs = 1,
        .infer_shape = take_bwd_shape,
        .infer_type = take_bwd_type,
        .compute = take_backward,
        .hidden = 1,
    },
    {
        .name = "pick",
        .doc = "Picks one element along axis per position: out[..., i, ...] "
               "= data[..., index[..., i, ...], i, ...]; the output is data "
               "without the axis (extent 1 with keepdims).",
        MXC__PARAMS_OF(pick_param, k_pick_params),
        .n_inputs = 2,
        .input_names = k_pick_in,
        .n_outputs = 1,
        .infer_shape = pick_shape,
        .infer_type = take_type,
        .compute = pick_forward,
        .gradient = mxc__idx_grad_data_only,
        .backward_uses_inputs = 3,
    },
    {
        .name = "_backward_pick",
        .doc = "Gradient of pick with respect to data.",
        MXC__PARAMS_OF(pick_param, k_pick_params),
        .n_inputs = 3,
        .input_names = k_pick_bwd_in,
        .n_outputs = 1,
        .infer_shape = pick_bwd_shape,
        .infer_type = take_bwd_type,
        .compute = pick_backward,
        .hidden = 1,
    },
};

int mxc__idx_register_take(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
