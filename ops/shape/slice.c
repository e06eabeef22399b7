/* Strided boxes: slice, slice_axis, slice_like. Each selects, per input
 * axis, `len` elements starting at `begin` every `step` (step may be
 * negative); the forward reads the box through scaled strides, the
 * gradient (_backward_<op>, inputs (ograd, data)) writes the output
 * gradient into the same box of a zero array. slice_like's second input
 * only lends its shape and gets no gradient.
 *
 * slice follows Python's rules for begin/end/step (negative indices count
 * from the end, out-of-range ones are clamped). MXNet also accepts None
 * inside the tuples; the shared tuple parser does not, so an axis is
 * taken whole by leaving it out at the end of begin/end (begin=(1,) on a
 * 2-d input slices axis 0 only). An entry of INT64_MIN is treated as None,
 * ready for when the parser maps "None" entries to it. */
#include <inttypes.h>
#include <string.h>

#include "ops/shape/shape_internal.h"
#include "ops/shape/py_slice.h"

#define NONE_ENTRY INT64_MIN

typedef struct box {
  int64_t begin[MXC_MAX_NDIM], step[MXC_MAX_NDIM], len[MXC_MAX_NDIM];
} box;

static void box_full(box *b, const mxc__shape *s) {
  for (int k = 0; k < s->ndim; ++k) {
    b->begin[k] = 0;
    b->step[k] = 1;
    b->len[k] = s->dims[k];
  }
}

/* ---- slice ---- */

typedef struct slice_param {
  mxc__tuple begin, end, step;
} slice_param;

static const mxc__param_def k_slice_params[] = {
    MXC__PARAM(slice_param, begin, MXC__P_TUPLE, NULL,
               "first index per axis (negative counts from the end)"),
    MXC__PARAM(slice_param, end, MXC__P_TUPLE, NULL,
               "index past the last per axis; axes beyond the tuple are "
               "taken whole"),
    MXC__PARAM(slice_param, step, MXC__P_TUPLE, "()",
               "step per axis (non-zero; negative walks backwards); empty "
               "means 1"),
};

static int slice_check(const char *op_name, void *param) {
  const slice_param *p = param;
  char b1[256], b2[256];
  MXC_RETURN_ERROR_IF(p->begin.ndim < 0 || p->end.ndim != p->begin.ndim,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameters 'begin' = %s and 'end' = "
                      "%s must be tuples of the same length",
                      op_name, mxc__shp_tuple_str(&p->begin, b1, sizeof b1),
                      mxc__shp_tuple_str(&p->end, b2, sizeof b2));
  MXC_RETURN_ERROR_IF(p->step.ndim > 0 && p->step.ndim != p->begin.ndim,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'step' = %s must be empty "
                      "or as long as 'begin' (%d entries)",
                      op_name, mxc__shp_tuple_str(&p->step, b1, sizeof b1),
                      p->begin.ndim);
  for (int k = 0; k < p->step.ndim; ++k) {
    MXC_RETURN_ERROR_IF(p->step.d[k] == 0, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'step' = %s has a zero "
                        "step for axis %d",
                        op_name, mxc__shp_tuple_str(&p->step, b1, sizeof b1),
                        k);
  }
  return MXC_OK;
}

static int slice_box(const mxc__op *op, const slice_param *p,
                     const mxc__shape *data, box *b) {
  char b1[160], b2[256];
  MXC_RETURN_ERROR_IF(p->begin.ndim > data->ndim, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'begin' = %s has %d entries "
                      "but the input (shape %s) has %d axes",
                      op->name, mxc__shp_tuple_str(&p->begin, b2, sizeof b2),
                      p->begin.ndim, MXC__SHP_STR(data, b1), data->ndim);
  box_full(b, data);
  for (int k = 0; k < p->begin.ndim; ++k) {
    /* A None step (NONE_ENTRY) is 1, as in Python. */
    b->step[k] =
        p->step.ndim > 0 && p->step.d[k] != NONE_ENTRY ? p->step.d[k] : 1;
    mxc__py_slice(p->begin.d[k], p->end.d[k], b->step[k], data->dims[k],
                  &b->begin[k], &b->len[k]);
    /* With at most one element the step is never applied; a huge one would
     * still overflow step * stride in box_view. Two or more elements bound
     * |step| by the extent. */
    if (b->len[k] <= 1) b->step[k] = 1;
  }
  return MXC_OK;
}

/* ---- slice_axis ---- */

typedef struct slice_axis_param {
  int64_t axis, begin;
  mxc__opt_int end;
} slice_axis_param;

static const mxc__param_def k_slice_axis_params[] = {
    MXC__PARAM(slice_axis_param, axis, MXC__P_INT, NULL,
               "axis to slice (negative counts from the end)"),
    MXC__PARAM(slice_axis_param, begin, MXC__P_INT, NULL,
               "first index (negative counts from the end)"),
    MXC__PARAM(slice_axis_param, end, MXC__P_OPT_INT, NULL,
               "index past the last (negative counts from the end); None "
               "runs to the end of the axis"),
};

/* MXNet's rules: indices are not clamped; after counting negative ones
 * from the end, 0 <= begin <= end <= extent (begin == end gives an empty
 * slice, which MXNet rejects). */
static int slice_axis_box(const mxc__op *op, const slice_axis_param *p,
                          const mxc__shape *data, box *b) {
  int ax;
  MXC_FORWARD_IF_ERROR(
      mxc__shp_axis(op->name, "axis", p->axis, data->ndim, &ax));
  int64_t n = data->dims[ax];
  int64_t begin = p->begin < 0 ? p->begin + n : p->begin;
  int64_t end = !p->end.has ? n : p->end.v < 0 ? p->end.v + n : p->end.v;
  char b1[160];
  MXC_RETURN_ERROR_IF(
      !(0 <= begin && begin <= end && end <= n), MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': begin=%" PRId64 ", end=%s%" PRId64
      " do not select a range of axis %d of the input "
      "(shape %s); expected -%" PRId64 " <= begin <= end <= %" PRId64
      " (negative values count from the end)",
      op->name, p->begin, p->end.has ? "" : "None -> ",
      p->end.has ? p->end.v : n, ax, MXC__SHP_STR(data, b1), n, n);
  box_full(b, data);
  b->begin[ax] = begin;
  b->len[ax] = end - begin;
  return MXC_OK;
}

/* ---- slice_like ---- */

typedef struct slice_like_param {
  mxc__tuple axes;
} slice_like_param;

static const mxc__param_def k_slice_like_params[] = {
    MXC__PARAM(slice_like_param, axes, MXC__P_TUPLE, "()",
               "axes to cut to shape_like's extent; empty means all (then "
               "both inputs need the same number of axes)"),
};

/* data[0:like.dims[k]] on the chosen axes. */
static int slice_like_box(const mxc__op *op, const slice_like_param *p,
                          const mxc__shape *data, const mxc__shape *like,
                          box *b) {
  char b1[160], b2[160];
  box_full(b, data);
  int all = p->axes.ndim <= 0;
  MXC_RETURN_ERROR_IF(all && data->ndim != like->ndim, MXC_ERR_SHAPE,
                      "operator '%s': without 'axes' both inputs need the "
                      "same number of axes; data has shape %s, shape_like %s",
                      op->name, MXC__SHP_STR(data, b1), MXC__SHP_STR(like, b2));
  int n = all ? data->ndim : p->axes.ndim;
  for (int i = 0; i < n; ++i) {
    int ax = i;
    if (!all) {
      MXC_FORWARD_IF_ERROR(
          mxc__shp_axis(op->name, "axes", p->axes.d[i], data->ndim, &ax));
      MXC_RETURN_ERROR_IF(ax >= like->ndim, MXC_ERR_SHAPE,
                          "operator '%s': axis %d does not exist in "
                          "shape_like (shape %s)",
                          op->name, ax, MXC__SHP_STR(like, b1));
    }
    MXC_RETURN_ERROR_IF(like->dims[ax] > data->dims[ax], MXC_ERR_SHAPE,
                        "operator '%s': axis %d of shape_like (shape %s) is "
                        "longer than that of data (shape %s)",
                        op->name, ax, MXC__SHP_STR(like, b1),
                        MXC__SHP_STR(data, b2));
    b->len[ax] = like->dims[ax];
  }
  return MXC_OK;
}

/* ---- shared inference and compute ---- */

static const mxc__op k_slice, k_slice_axis, k_slice_like;
static const mxc__op k_slice_bwd, k_slice_axis_bwd, k_slice_like_bwd;

/* The box of a forward or backward descriptor. second: shape_like for
 * slice_like, the output gradient for _backward_slice_like (whose box
 * starts at 0 with the gradient's extents). */
static int box_of(const mxc__op *op, const void *param, const mxc__shape *data,
                  const mxc__shape *second, box *b) {
  if (op == &k_slice || op == &k_slice_bwd)
    return slice_box(op, param, data, b);
  if (op == &k_slice_axis || op == &k_slice_axis_bwd) {
    return slice_axis_box(op, param, data, b);
  }
  static const slice_like_param all = {{-1, {0}}};
  return slice_like_box(op, op == &k_slice_like ? param : &all, data, second,
                        b);
}

static mxc__shape box_shape(const box *b, int nd) {
  return mxc__shp_make(b->len, nd);
}

/* Forward: (data[, shape_like]) -> the box. */
static int slice_shape(const mxc__op *op, const void *param, mxc__shape *in,
                       int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0 || in[n_in - 1].ndim < 0) return MXC_OK;
  box b;
  MXC_FORWARD_IF_ERROR(box_of(op, param, &in[0], &in[n_in - 1], &b));
  mxc__shape s = box_shape(&b, in[0].ndim);
  return mxc__shp_set_out(op, out, 0, &s);
}

/* Backward: (ograd, data) -> gradient shaped like data; ograd must have
 * the box's shape. */
static int slice_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                           int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  box b;
  MXC_FORWARD_IF_ERROR(box_of(op, param, &in[1], &in[0], &b));
  mxc__shape s = box_shape(&b, in[1].ndim);
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&s, &in[0]), MXC_ERR_SHAPE,
                      "operator '%s': output gradient has shape %s; "
                      "expected %s",
                      op->name, MXC__SHP_STR(&in[0], b1), MXC__SHP_STR(&s, b2));
  return mxc__shp_set_out(op, out, 0, &in[1]);
}

/* The box of `data` as strides: view element i_k is at
 * sum (begin_k + i_k step_k) stride_k. */
static void box_view(const box *b, const mxc__shape *data, int64_t *off,
                     int64_t *strides) {
  int64_t str[MXC_MAX_NDIM];
  mxc__shp_strides(data->dims, data->ndim, str);
  *off = 0;
  for (int k = 0; k < data->ndim; ++k) {
    *off += b->begin[k] * str[k];
    strides[k] = b->step[k] * str[k];
  }
}

static int slice_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  box b;
  MXC_FORWARD_IF_ERROR(
      box_of(op, param, &in[0].shape, &in[n_in - 1].shape, &b));
  mxc__shp_iter it;
  mxc__shp_iter_contig(&it, b.len, in[0].shape.ndim);
  box_view(&b, &in[0].shape, &it.src_off, it.src_stride);
  mxc__shp_copy(&it, &out[0], &in[0], req[0]);
  return MXC_OK;
}

static int slice_backward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  box b;
  MXC_FORWARD_IF_ERROR(box_of(op, param, &in[1].shape, &in[0].shape, &b));
  /* Box elements are distinct (steps are non-zero), so the gradient is a
   * plain copy into the box after clearing the rest. */
  if (req[0] != MXC__REQ_ADD) mxc__shp_zero(&out[0]);
  mxc__shp_iter it;
  mxc__shp_iter_contig(&it, b.len, in[1].shape.ndim);
  box_view(&b, &in[1].shape, &it.dst_off, it.dst_stride);
  mxc__shp_copy(&it, &out[0], &in[0],
                req[0] == MXC__REQ_ADD ? MXC__REQ_ADD : MXC__REQ_WRITE);
  return MXC_OK;
}

/* slice_like: only data gets a gradient. */
static int slice_like_grad(const mxc__node *fwd, const mxc__entry *ograd,
                           mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[0]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op_like("_backward_slice_like", fwd, ins, 2, &b));
  igrad[0].node = b; /* takes the creation reference */
  igrad[0].index = 0;
  igrad[1].node = NULL;
  igrad[1].index = 0;
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_data[] = {"data", NULL};
static const char *const k_like_in[] = {"data", "shape_like", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};

#define FWD(var, nm, doc_, params_, n_in_, in_names, grad) \
  static const mxc__op var = {                             \
      .name = nm,                                          \
      .doc = doc_,                                         \
      params_,                                             \
      .n_inputs = n_in_,                                   \
      .input_names = in_names,                             \
      .n_outputs = 1,                                      \
      .infer_shape = slice_shape,                          \
      .compute = slice_forward,                            \
      .gradient = grad,                                    \
      .backward_uses_inputs = 1,                           \
  }
#define BWD(var, nm, params_)                                              \
  static const mxc__op var = {                                             \
      MXC__BACKWARD_DOC(nm, "Gradient of " nm                              \
                                ": the output gradient in the sliced box " \
                                "of zeros."),                              \
      params_,                                                             \
      .n_inputs = 2,                                                       \
      .input_names = k_bwd_in,                                             \
      .n_outputs = 1,                                                      \
      .infer_shape = slice_bwd_shape,                                      \
      .compute = slice_backward,                                           \
  }

#define SLICE_PARAMS \
  MXC__PARAMS_OF(slice_param, k_slice_params), .param_check = slice_check
#define SLICE_AXIS_PARAMS MXC__PARAMS_OF(slice_axis_param, k_slice_axis_params)
#define SLICE_LIKE_PARAMS MXC__PARAMS_OF(slice_like_param, k_slice_like_params)

FWD(k_slice, "slice",
    "data[begin:end:step] per axis (Python rules; trailing axes whole).",
    SLICE_PARAMS, 1, k_data, mxc__grad_use_in);
BWD(k_slice_bwd, "slice", SLICE_PARAMS);
FWD(k_slice_axis, "slice_axis", "data[begin:end] along one axis.",
    SLICE_AXIS_PARAMS, 1, k_data, mxc__grad_use_in);
BWD(k_slice_axis_bwd, "slice_axis", SLICE_AXIS_PARAMS);
FWD(k_slice_like, "slice_like",
    "data cut to shape_like's extents (on the given axes, or all) from "
    "index 0.",
    SLICE_LIKE_PARAMS, 2, k_like_in, slice_like_grad);
BWD(k_slice_like_bwd, "slice_like", SLICE_LIKE_PARAMS);

int mxc__shp_register_slice(mxc__registry *r) {
  static const mxc__op *const ops[] = {
      &k_slice,      &k_slice_bwd,      &k_slice_axis, &k_slice_axis_bwd,
      &k_slice_like, &k_slice_like_bwd, NULL};
  MXC_FORWARD_IF_ERROR(mxc__shp_add_all(r, ops));
  /* MXNet's legacy name of slice (not the Crop operator). */
  return mxc__registry_add_alias(r, "crop", "slice");
}

/* ---- the box of slice's parameters, for _slice_assign ---- */

int mxc__shp_slice_view(const mxc__op *op, const mxc__tuple *begin,
                        const mxc__tuple *end, const mxc__tuple *step,
                        const mxc__shape *data, mxc__shp_iter *it) {
  slice_param p = {*begin, *end, *step};
  MXC_FORWARD_IF_ERROR(slice_check(op->name, &p));
  box b;
  MXC_FORWARD_IF_ERROR(slice_box(op, &p, data, &b));
  mxc__shp_iter_contig(it, b.len, data->ndim);
  box_view(&b, data, &it->dst_off, it->dst_stride);
  return MXC_OK;
}
