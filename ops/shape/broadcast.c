/* Copies that repeat the input: broadcast_to, broadcast_like,
 * broadcast_axis, tile, repeat. Each is described by an expansion: an
 * iteration box whose row-major order is the output's, and the input's
 * strides in that box, 0 along repeated dimensions. broadcast uses the
 * output's own axes; tile splits output axis k into (reps_k, d_k) and
 * repeat splits the repeated axis into (d, repeats), so one copy does all
 * of them, and the gradient (_backward_<op>, inputs (ograd, data)) sums
 * the output gradient back over the repeated dimensions (mxc__shp_sum). */
#include <inttypes.h>
#include <string.h>

#include "ops/shape/rep_box.h"
#include "ops/shape/shape_internal.h"

typedef struct expansion {
  int nd; /* iteration dimensions */
  int64_t dims[MXC__SHP_MAX_DIMS];
  int64_t in_stride[MXC__SHP_MAX_DIMS];
  mxc__shape out; /* the output shape */
} expansion;

static const char k_too_big[] =
    "the output would have more elements than int64 can count";

/* Expansion of a broadcast of `in` to `to` (same ndim; every input extent
 * 1 or equal to the target). `what` describes the target in messages. */
static int broadcast_expansion(const mxc__op *op, const mxc__shape *in,
                               const mxc__shape *to, const char *what,
                               expansion *e) {
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(in->ndim != to->ndim, MXC_ERR_SHAPE,
                      "operator '%s': cannot broadcast input of shape %s to "
                      "%s %s: the number of axes differs",
                      op->name, MXC__SHP_STR(in, b1), what,
                      MXC__SHP_STR(to, b2));
  int64_t str[MXC_MAX_NDIM];
  mxc__shp_strides(in->dims, in->ndim, str);
  e->nd = in->ndim;
  e->out = *to;
  for (int k = 0; k < in->ndim; ++k) {
    MXC_RETURN_ERROR_IF(in->dims[k] != to->dims[k] && in->dims[k] != 1,
                        MXC_ERR_SHAPE,
                        "operator '%s': cannot broadcast input of shape %s "
                        "to %s %s: axis %d has extent %" PRId64
                        ", which is neither 1 nor %" PRId64,
                        op->name, MXC__SHP_STR(in, b1), what,
                        MXC__SHP_STR(to, b2), k, in->dims[k], to->dims[k]);
    e->dims[k] = to->dims[k];
    e->in_stride[k] = in->dims[k] == to->dims[k] ? str[k] : 0;
  }
  return MXC_OK;
}

/* ---- broadcast_to ---- */

typedef struct bto_param {
  mxc__tuple shape;
} bto_param;

static const mxc__param_def k_bto_params[] = {
    MXC__PARAM(bto_param, shape, MXC__P_TUPLE, NULL,
               "target shape, one entry per input axis; 0 keeps the "
               "input's extent"),
};

static int bto_expansion(const mxc__op *op, const bto_param *p,
                         const mxc__shape *in, expansion *e) {
  char b1[160], b2[256];
  MXC_RETURN_ERROR_IF(p->shape.ndim != in->ndim, MXC_ERR_SHAPE,
                      "operator '%s': cannot broadcast input of shape %s to "
                      "shape=%s: the number of axes differs",
                      op->name, MXC__SHP_STR(in, b1),
                      mxc__shp_tuple_str(&p->shape, b2, sizeof b2));
  mxc__shape to = *in;
  for (int k = 0; k < in->ndim; ++k) {
    MXC_RETURN_ERROR_IF(p->shape.d[k] < 0, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'shape' = %s has a "
                        "negative extent",
                        op->name, mxc__shp_tuple_str(&p->shape, b2, sizeof b2));
    if (p->shape.d[k] != 0) to.dims[k] = p->shape.d[k];
  }
  return broadcast_expansion(op, in, &to, "shape", e);
}

/* ---- broadcast_axis ---- */

typedef struct baxis_param {
  mxc__tuple axis, size;
} baxis_param;

static const mxc__param_def k_baxis_params[] = {
    MXC__PARAM(baxis_param, axis, MXC__P_TUPLE, "()",
               "axes to broadcast (each of extent 1 in the input)"),
    MXC__PARAM(baxis_param, size, MXC__P_TUPLE, "()",
               "target extent of each listed axis"),
};

static int baxis_check(const char *op_name, void *param) {
  const baxis_param *p = param;
  char b1[256], b2[256];
  MXC_RETURN_ERROR_IF(p->axis.ndim != p->size.ndim, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameters 'axis' = %s and 'size' = "
                      "%s must have the same length",
                      op_name, mxc__shp_tuple_str(&p->axis, b1, sizeof b1),
                      mxc__shp_tuple_str(&p->size, b2, sizeof b2));
  for (int i = 0; i < p->size.ndim; ++i) {
    MXC_RETURN_ERROR_IF(p->size.d[i] < 0, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'size' = %s has a "
                        "negative extent",
                        op_name, mxc__shp_tuple_str(&p->size, b1, sizeof b1));
  }
  return MXC_OK;
}

static int baxis_expansion(const mxc__op *op, const baxis_param *p,
                           const mxc__shape *in, expansion *e) {
  mxc__shape to = *in;
  int seen[MXC_MAX_NDIM] = {0};
  char b1[160];
  for (int i = 0; i < p->axis.ndim; ++i) {
    int ax;
    MXC_FORWARD_IF_ERROR(
        mxc__shp_axis(op->name, "axis", p->axis.d[i], in->ndim, &ax));
    MXC_RETURN_ERROR_IF(seen[ax]++, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'axis' names axis %d twice",
                        op->name, ax);
    MXC_RETURN_ERROR_IF(in->dims[ax] != 1, MXC_ERR_SHAPE,
                        "operator '%s': axis %d of the input (shape %s) has "
                        "extent %" PRId64
                        "; only extent-1 axes can be "
                        "broadcast",
                        op->name, ax, MXC__SHP_STR(in, b1), in->dims[ax]);
    to.dims[ax] = p->size.d[i];
  }
  return broadcast_expansion(op, in, &to, "shape", e);
}

/* ---- broadcast_like ---- */

typedef struct blike_param {
  mxc__tuple lhs_axes, rhs_axes;
} blike_param;

static const mxc__param_def k_blike_params[] = {
    MXC__PARAM(blike_param, lhs_axes, MXC__P_TUPLE, "None",
               "axes of lhs to broadcast; None: every axis, to rhs's shape"),
    MXC__PARAM(blike_param, rhs_axes, MXC__P_TUPLE, "None",
               "axes of rhs giving the extents for lhs_axes"),
};

static int blike_check(const char *op_name, void *param) {
  const blike_param *p = param;
  char b1[256], b2[256];
  MXC_RETURN_ERROR_IF(p->lhs_axes.ndim != p->rhs_axes.ndim,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameters 'lhs_axes' = %s and "
                      "'rhs_axes' = %s must both be None or have the same "
                      "length",
                      op_name, mxc__shp_tuple_str(&p->lhs_axes, b1, sizeof b1),
                      mxc__shp_tuple_str(&p->rhs_axes, b2, sizeof b2));
  return MXC_OK;
}

static int blike_expansion(const mxc__op *op, const blike_param *p,
                           const mxc__shape *in, const mxc__shape *rhs,
                           expansion *e) {
  if (p->lhs_axes.ndim < 0)
    return broadcast_expansion(op, in, rhs, "rhs of shape", e);
  mxc__shape to = *in;
  for (int i = 0; i < p->lhs_axes.ndim; ++i) {
    int la, ra;
    MXC_FORWARD_IF_ERROR(
        mxc__shp_axis(op->name, "lhs_axes", p->lhs_axes.d[i], in->ndim, &la));
    /* Negative rhs axes count from the end of rhs (MXNet counts them from
     * the length of rhs_axes, which looks like a slip). */
    MXC_FORWARD_IF_ERROR(
        mxc__shp_axis(op->name, "rhs_axes", p->rhs_axes.d[i], rhs->ndim, &ra));
    to.dims[la] = rhs->dims[ra];
  }
  return broadcast_expansion(op, in, &to, "shape", e);
}

/* ---- tile ---- */

typedef struct tile_param {
  mxc__tuple reps;
} tile_param;

static const mxc__param_def k_tile_params[] = {
    MXC__PARAM(tile_param, reps, MXC__P_TUPLE, NULL,
               "repetitions per axis, aligned to the last axes (the "
               "shorter of input shape and reps is padded with leading "
               "1s)"),
};

static int tile_check(const char *op_name, void *param) {
  const tile_param *p = param;
  char b1[256];
  for (int i = 0; i < p->reps.ndim; ++i) {
    MXC_RETURN_ERROR_IF(p->reps.d[i] < 0, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'reps' = %s has a negative "
                        "entry",
                        op_name, mxc__shp_tuple_str(&p->reps, b1, sizeof b1));
  }
  return MXC_OK;
}

/* The expansion of a shared box (ops/shape/rep_box.h, the GPU's too). */
static int box_expansion(const mxc__op *op, int rc, const mxc__rep_box *b,
                         expansion *e) {
  MXC_RETURN_ERROR_IF(rc == MXC__REP_BOX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': the output would have more than %d "
                      "axes",
                      op->name, MXC_MAX_NDIM);
  MXC_RETURN_ERROR_IF(rc != MXC__REP_BOX_OK, MXC_ERR_SHAPE,
                      "operator '%s': %s", op->name, k_too_big);
  e->nd = b->nd;
  memcpy(e->dims, b->dims, sizeof(int64_t) * (size_t)b->nd);
  memcpy(e->in_stride, b->in_stride, sizeof(int64_t) * (size_t)b->nd);
  e->out = mxc__shp_make(b->out, b->out_nd);
  return MXC_OK;
}

static int tile_expansion(const mxc__op *op, const tile_param *p,
                          const mxc__shape *in, expansion *e) {
  mxc__rep_box b;
  int rc = mxc__tile_box(in->dims, in->ndim, p->reps.d, p->reps.ndim, &b);
  return box_expansion(op, rc, &b, e);
}

/* ---- repeat ---- */

typedef struct repeat_param {
  int64_t repeats;
  mxc__opt_int axis;
} repeat_param;

static const mxc__param_def k_repeat_params[] = {
    MXC__PARAM_RANGE(repeat_param, repeats, MXC__P_INT, NULL, 0, 9.2e18,
                     "copies of each element"),
    MXC__PARAM(repeat_param, axis, MXC__P_OPT_INT, "None",
               "axis along which to repeat; None repeats the flattened "
               "input into a 1-d output"),
};

static int repeat_expansion(const mxc__op *op, const repeat_param *p,
                            const mxc__shape *in, expansion *e) {
  int ax = -1;
  if (p->axis.has) {
    MXC_FORWARD_IF_ERROR(
        mxc__shp_axis(op->name, "axis", p->axis.v, in->ndim, &ax));
  }
  mxc__rep_box b;
  int rc = mxc__repeat_box(in->dims, in->ndim, p->repeats, ax, &b);
  return box_expansion(op, rc, &b, e);
}

/* ---- shared inference and compute ---- */

static const mxc__op k_bto, k_bto_bwd, k_baxis, k_baxis_bwd, k_blike,
    k_blike_bwd, k_tile, k_tile_bwd, k_repeat, k_repeat_bwd;

/* The expansion of a forward descriptor applied to `data` (`second`:
 * broadcast_like's rhs). Backward descriptors of the broadcast_ family
 * pass the output gradient as `second`: the gradient only needs the
 * broadcast from data's shape to the gradient's. */
static int expansion_of(const mxc__op *op, const void *param,
                        const mxc__shape *data, const mxc__shape *second,
                        expansion *e) {
  memset(e, 0, sizeof *e);
  if (op == &k_bto) return bto_expansion(op, param, data, e);
  if (op == &k_baxis) return baxis_expansion(op, param, data, e);
  if (op == &k_blike) return blike_expansion(op, param, data, second, e);
  if (op == &k_tile || op == &k_tile_bwd)
    return tile_expansion(op, param, data, e);
  if (op == &k_repeat || op == &k_repeat_bwd) {
    return repeat_expansion(op, param, data, e);
  }
  return broadcast_expansion(op, data, second, "output gradient of shape", e);
}

static int expand_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0 || in[n_in - 1].ndim < 0) return MXC_OK;
  expansion e;
  MXC_FORWARD_IF_ERROR(expansion_of(op, param, &in[0], &in[n_in - 1], &e));
  return mxc__shp_set_out(op, out, 0, &e.out);
}

/* Backward: (ograd, data) -> gradient of data's shape. */
static int expand_bwd_shape(const mxc__op *op, const void *param,
                            mxc__shape *in, int n_in, mxc__shape *out,
                            int n_out) {
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  expansion e;
  MXC_FORWARD_IF_ERROR(expansion_of(op, param, &in[1], &in[0], &e));
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&e.out, &in[0]), MXC_ERR_SHAPE,
                      "operator '%s': output gradient has shape %s; "
                      "expected %s",
                      op->name, MXC__SHP_STR(&in[0], b1),
                      MXC__SHP_STR(&e.out, b2));
  return mxc__shp_set_out(op, out, 0, &in[1]);
}

static int expand_forward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  expansion e;
  MXC_FORWARD_IF_ERROR(
      expansion_of(op, param, &in[0].shape, &in[n_in - 1].shape, &e));
  mxc__shp_iter it;
  mxc__shp_iter_contig(&it, e.dims, e.nd);
  memcpy(it.src_stride, e.in_stride, sizeof(int64_t) * (size_t)e.nd);
  mxc__shp_copy(&it, &out[0], &in[0], req[0]);
  return MXC_OK;
}

static int expand_backward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  expansion e;
  MXC_FORWARD_IF_ERROR(expansion_of(op, param, &in[1].shape, &in[0].shape, &e));
  mxc__shp_iter it;
  mxc__shp_iter_contig(&it, e.dims, e.nd);
  memcpy(it.dst_stride, e.in_stride, sizeof(int64_t) * (size_t)e.nd);
  return mxc__shp_sum(op->name, &it, &out[0], &in[0], req[0]);
}

/* broadcast_like: only lhs gets a gradient. */
static int blike_grad(const mxc__node *fwd, const mxc__entry *ograd,
                      mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[0]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op_like("_backward_broadcast_like", fwd, ins, 2, &b));
  igrad[0].node = b; /* takes the creation reference */
  igrad[0].index = 0;
  igrad[1].node = NULL;
  igrad[1].index = 0;
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_data[] = {"data", NULL};
static const char *const k_lhs_rhs[] = {"lhs", "rhs", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};

#define FWD(var, nm, alias_list, doc_, params_, n_in_, in_names, grad) \
  static const mxc__op var = {                                         \
      .name = nm,                                                      \
      .aliases = alias_list,                                           \
      .doc = doc_,                                                     \
      params_,                                                         \
      .n_inputs = n_in_,                                               \
      .input_names = in_names,                                         \
      .n_outputs = 1,                                                  \
      .infer_shape = expand_shape,                                     \
      .compute = expand_forward,                                       \
      .gradient = grad,                                                \
      .backward_uses_inputs = 1,                                       \
  }
#define BWD(var, nm, params_)                                              \
  static const mxc__op var = {                                             \
      MXC__BACKWARD_DOC(nm, "Gradient of " nm                              \
                                ": the output gradient summed "            \
                                "over the copies of each input element."), \
      params_,                                                             \
      .n_inputs = 2,                                                       \
      .input_names = k_bwd_in,                                             \
      .n_outputs = 1,                                                      \
      .infer_shape = expand_bwd_shape,                                     \
      .compute = expand_backward,                                          \
  }

#define BTO_PARAMS MXC__PARAMS_OF(bto_param, k_bto_params)
#define BAXIS_PARAMS \
  MXC__PARAMS_OF(baxis_param, k_baxis_params), .param_check = baxis_check
#define BLIKE_PARAMS \
  MXC__PARAMS_OF(blike_param, k_blike_params), .param_check = blike_check
#define TILE_PARAMS \
  MXC__PARAMS_OF(tile_param, k_tile_params), .param_check = tile_check
#define REPEAT_PARAMS MXC__PARAMS_OF(repeat_param, k_repeat_params)

static const char *const k_baxis_alias[] = {"broadcast_axes", NULL};

FWD(k_bto, "broadcast_to", NULL,
    "Repeats extent-1 axes to the target shape (0 keeps an axis).", BTO_PARAMS,
    1, k_data, mxc__grad_use_in);
BWD(k_bto_bwd, "broadcast_to", BTO_PARAMS);
FWD(k_baxis, "broadcast_axis", k_baxis_alias,
    "Repeats the given extent-1 axes to the given sizes.", BAXIS_PARAMS, 1,
    k_data, mxc__grad_use_in);
BWD(k_baxis_bwd, "broadcast_axis", BAXIS_PARAMS);
FWD(k_blike, "broadcast_like", NULL,
    "Broadcasts lhs to rhs's shape (or rhs's extents on the given axes).",
    BLIKE_PARAMS, 2, k_lhs_rhs, blike_grad);
BWD(k_blike_bwd, "broadcast_like", BLIKE_PARAMS);
FWD(k_tile, "tile", NULL,
    "Repeats the whole input reps[k] times along each axis k.", TILE_PARAMS, 1,
    k_data, mxc__grad_use_in);
BWD(k_tile_bwd, "tile", TILE_PARAMS);
FWD(k_repeat, "repeat", NULL,
    "Repeats each element `repeats` times along axis (or flattened).",
    REPEAT_PARAMS, 1, k_data, mxc__grad_use_in);
BWD(k_repeat_bwd, "repeat", REPEAT_PARAMS);

int mxc__shp_register_broadcast(mxc__registry *r) {
  static const mxc__op *const ops[] = {
      &k_bto,  &k_bto_bwd,  &k_baxis,  &k_baxis_bwd,  &k_blike, &k_blike_bwd,
      &k_tile, &k_tile_bwd, &k_repeat, &k_repeat_bwd, NULL};
  return mxc__shp_add_all(r, ops);
}
