/* Joining and splitting along an axis: Concat, stack, split. All three
 * copy between a whole array and parts that tile it along one axis (stack
 * is a concat of extent-1 parts, split with squeeze_axis its inverse), so
 * one routine moves the data both ways and each operator's gradient is the
 * opposite direction:
 *   _backward_Concat (ograd, arg0..) -> one gradient per part
 *   _backward_stack  (ograd)         -> one gradient per part
 *   _backward_split  (ograd0..)      -> the gradient of the whole.
 * Concat's gradient needs the parts for their extents; stack's and split's
 * extents follow from the gradients' own shapes. */
#include <inttypes.h>
#include <string.h>

#include "core/op/arity.h"
#include "ops/shape/shape_internal.h"

/* No limit on the number of parts but MXC__OP_MAX_ARITY (core/op/op.h),
 * a sanity bound; Concat takes one part less, because its gradient takes
 * the output gradient plus every part. */
#define MAX_JOIN (MXC__OP_MAX_ARITY - 1)

/* Variadic operators name their inputs arg0, arg1, ... as MXNet does: the
 * first ones here, later ones made by mxc__op_input_name. */
static const char *const k_arg_names[] = {
    "arg0",  "arg1",  "arg2",  "arg3",  "arg4",  "arg5",  "arg6",
    "arg7",  "arg8",  "arg9",  "arg10", "arg11", "arg12", "arg13",
    "arg14", "arg15", "arg16", "arg17", "arg18", "arg19", "arg20",
    "arg21", "arg22", "arg23", "arg24", "arg25", "arg26", "arg27",
    "arg28", "arg29", "arg30", "arg31", NULL};

/* Copies between `whole` and n parts along `axis`: part i holds extent
 * `ext` of the axis (in the whole's layout; a part may lack the axis when
 * its extent is 1), or, for ext 0, its own extent along the axis,
 * starting where part i-1 ends. to_whole: parts -> whole with req[0];
 * otherwise whole -> parts with req[i]. */
static void parts_copy(const mxc__blob *whole, int axis, const mxc__blob *parts,
                       int64_t ext, int n, int to_whole, const mxc__req *req) {
  const int nd = whole->shape.ndim;
  int64_t wstr[MXC_MAX_NDIM];
  mxc__shp_strides(whole->shape.dims, nd, wstr);
  int64_t start = 0;
  for (int i = 0; i < n; ++i) {
    int64_t dims[MXC_MAX_NDIM];
    memcpy(dims, whole->shape.dims, sizeof(int64_t) * (size_t)nd);
    int64_t e = ext ? ext : parts[i].shape.dims[axis];
    dims[axis] = e;
    mxc__shp_iter it;
    mxc__shp_iter_contig(&it, dims, nd);
    if (to_whole) {
      memcpy(it.dst_stride, wstr, sizeof(int64_t) * (size_t)nd);
      it.dst_off = start * wstr[axis];
      mxc__shp_copy(&it, whole, &parts[i], req[0]);
    } else {
      memcpy(it.src_stride, wstr, sizeof(int64_t) * (size_t)nd);
      it.src_off = start * wstr[axis];
      mxc__shp_copy(&it, &parts[i], whole, req[i]);
    }
    start += e;
  }
}

/* ---- Concat ---- */

typedef struct concat_param {
  int64_t num_args;
  int64_t dim;
} concat_param;

static const mxc__param_def k_concat_params[] = {
    MXC__PARAM_RANGE(concat_param, num_args, MXC__P_INT, NULL, 1, MAX_JOIN,
                     "number of inputs (1..MXC__OP_MAX_ARITY - 1)"),
    MXC__PARAM(concat_param, dim, MXC__P_INT, "1",
               "axis to concatenate along (negative counts from the end)"),
};

static int concat_num(const void *param) {
  return (int)((const concat_param *)param)->num_args;
}
static int concat_bwd_num_in(const void *param) {
  return concat_num(param) + 1;
}

/* Part shapes in[0..n) (some possibly unknown) against the whole. */
static int concat_infer(const mxc__op *op, const concat_param *p,
                        mxc__shape *part, int n, mxc__shape *whole) {
  int ref = -1, ax = 0, n_unknown = 0;
  int64_t sum = 0;
  char b1[160], b2[160];
  for (int i = 0; i < n; ++i) {
    if (part[i].ndim < 0) {
      n_unknown++;
      continue;
    }
    if (ref < 0) {
      ref = i;
      MXC_FORWARD_IF_ERROR(
          mxc__shp_axis(op->name, "dim", p->dim, part[i].ndim, &ax));
    }
    int same = part[i].ndim == part[ref].ndim;
    for (int k = 0; same && k < part[i].ndim; ++k) {
      same = k == ax || part[i].dims[k] == part[ref].dims[k];
    }
    MXC_RETURN_ERROR_IF(!same, MXC_ERR_SHAPE,
                        "operator '%s': input %d ('%s') has shape %s but "
                        "input %d ('%s') has shape %s; shapes must match "
                        "except along dim %d",
                        op->name, i, mxc__op_arg_name(i),
                        MXC__SHP_STR(&part[i], b1), ref, mxc__op_arg_name(ref),
                        MXC__SHP_STR(&part[ref], b2), ax);
    MXC_RETURN_ERROR_IF(!mxc__add_i64(sum, part[i].dims[ax], &sum),
                        MXC_ERR_SHAPE,
                        "operator '%s': the extents along dim %d add up to "
                        "more than int64 holds (at input %d, shape %s)",
                        op->name, ax, i, MXC__SHP_STR(&part[i], b1));
  }
  if (ref < 0) return MXC_OK;
  if (n_unknown == 0) {
    mxc__shape s = part[ref];
    s.dims[ax] = sum;
    return mxc__shp_set_out(op, whole, 0, &s);
  }
  /* One missing part follows from a known whole (graph inference). */
  if (n_unknown == 1 && whole->ndim == part[ref].ndim &&
      whole->dims[ax] >= sum) {
    for (int i = 0; i < n; ++i) {
      if (part[i].ndim >= 0) continue;
      part[i] = *whole;
      part[i].dims[ax] = whole->dims[ax] - sum;
    }
  }
  return MXC_OK;
}

static int concat_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  return concat_infer(op, param, in, n_in, &out[0]);
}

static int concat_forward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  const concat_param *p = param;
  int ax;
  MXC_FORWARD_IF_ERROR(
      mxc__shp_axis(op->name, "dim", p->dim, out[0].shape.ndim, &ax));
  parts_copy(&out[0], ax, in, 0, n_in, 1, req);
  return MXC_OK;
}

/* _backward_Concat: (ograd, parts...) -> part gradients. */
static int concat_bwd_shape(const mxc__op *op, const void *param,
                            mxc__shape *in, int n_in, mxc__shape *out,
                            int n_out) {
  mxc__shape whole = in[0];
  MXC_FORWARD_IF_ERROR(concat_infer(op, param, in + 1, n_in - 1, &whole));
  for (int i = 0; i < n_out; ++i) {
    if (in[i + 1].ndim >= 0)
      MXC_FORWARD_IF_ERROR(mxc__shp_set_out(op, out, i, &in[i + 1]));
  }
  return MXC_OK;
}

static int concat_backward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  const concat_param *p = param;
  int ax;
  MXC_FORWARD_IF_ERROR(
      mxc__shp_axis(op->name, "dim", p->dim, in[0].shape.ndim, &ax));
  parts_copy(&in[0], ax, out, 0, n_out, 0, req);
  return MXC_OK;
}

/* ---- stack ---- */

typedef struct stack_param {
  int64_t num_args;
  int64_t axis;
} stack_param;

static const mxc__param_def k_stack_params[] = {
    MXC__PARAM_RANGE(stack_param, num_args, MXC__P_INT, NULL, 1,
                     MXC__OP_MAX_ARITY,
                     "number of inputs (1..MXC__OP_MAX_ARITY)"),
    MXC__PARAM(stack_param, axis, MXC__P_INT, "0",
               "position of the new axis in the output, in [-ndim-1, ndim]"),
};

static int stack_num(const void *param) {
  return (int)((const stack_param *)param)->num_args;
}

static int stack_shape(const mxc__op *op, const void *param, mxc__shape *in,
                       int n_in, mxc__shape *out, int n_out) {
  const stack_param *p = param;
  const mxc__shape *ref = NULL;
  int ref_i = -1;
  char b1[160], b2[160];
  for (int i = 0; i < n_in; ++i) {
    if (in[i].ndim < 0) continue;
    if (!ref) {
      ref = &in[i];
      ref_i = i;
    }
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&in[i], ref), MXC_ERR_SHAPE,
                        "operator '%s': input %d ('%s') has shape %s but "
                        "input %d ('%s') has shape %s; stacked inputs must "
                        "have the same shape",
                        op->name, i, mxc__op_arg_name(i),
                        MXC__SHP_STR(&in[i], b1), ref_i,
                        mxc__op_arg_name(ref_i), MXC__SHP_STR(ref, b2));
  }
  if (!ref) return MXC_OK;
  for (int i = 0; i < n_in; ++i) in[i] = *ref;
  int nd = ref->ndim, ax;
  MXC_RETURN_ERROR_IF(nd == MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': inputs already have %d dimensions, "
                      "the most an array can have",
                      op->name, nd);
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op->name, "axis", p->axis, nd + 1, &ax));
  int64_t d[MXC_MAX_NDIM];
  for (int k = 0, j = 0; k <= nd; ++k) d[k] = k == ax ? n_in : ref->dims[j++];
  mxc__shape s = mxc__shp_make(d, nd + 1);
  return mxc__shp_set_out(op, out, 0, &s);
}

static int stack_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  const stack_param *p = param;
  int ax;
  MXC_FORWARD_IF_ERROR(
      mxc__shp_axis(op->name, "axis", p->axis, out[0].shape.ndim, &ax));
  parts_copy(&out[0], ax, in, 1, n_in, 1, req);
  return MXC_OK;
}

/* _backward_stack: (ograd) -> the part gradients, ograd minus the axis. */
static int stack_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                           int n_in, mxc__shape *out, int n_out) {
  const stack_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  int ax;
  char b1[160];
  MXC_FORWARD_IF_ERROR(
      mxc__shp_axis(op->name, "axis", p->axis, in[0].ndim, &ax));
  MXC_RETURN_ERROR_IF(in[0].dims[ax] != n_out, MXC_ERR_SHAPE,
                      "operator '%s': output gradient of shape %s does not "
                      "have %d entries along axis %d",
                      op->name, MXC__SHP_STR(&in[0], b1), n_out, ax);
  int64_t d[MXC_MAX_NDIM];
  int no = 0;
  for (int k = 0; k < in[0].ndim; ++k) {
    if (k != ax) d[no++] = in[0].dims[k];
  }
  mxc__shape s = mxc__shp_make(d, no);
  for (int i = 0; i < n_out; ++i)
    MXC_FORWARD_IF_ERROR(mxc__shp_set_out(op, out, i, &s));
  return MXC_OK;
}

static int stack_backward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  const stack_param *p = param;
  int ax;
  MXC_FORWARD_IF_ERROR(
      mxc__shp_axis(op->name, "axis", p->axis, in[0].shape.ndim, &ax));
  parts_copy(&in[0], ax, out, 1, n_out, 0, req);
  return MXC_OK;
}

/* ---- split ---- */

typedef struct split_param {
  int64_t num_outputs;
  int64_t axis;
  int squeeze_axis;
} split_param;

static const mxc__param_def k_split_params[] = {
    MXC__PARAM_RANGE(split_param, num_outputs, MXC__P_INT, NULL, 1,
                     MXC__OP_MAX_ARITY,
                     "number of equal parts (1..MXC__OP_MAX_ARITY)"),
    MXC__PARAM(split_param, axis, MXC__P_INT, "1",
               "axis to split (negative counts from the end)"),
    MXC__PARAM(split_param, squeeze_axis, MXC__P_BOOL, "false",
               "remove the split axis from the outputs (its extent must "
               "equal num_outputs)"),
};

static int split_num(const void *param) {
  return (int)((const split_param *)param)->num_outputs;
}

/* The part shape of a whole of shape w; *ax gets the axis. */
static int split_part(const mxc__op *op, const split_param *p,
                      const mxc__shape *w, int *ax, mxc__shape *part) {
  char b1[160];
  int n = (int)p->num_outputs;
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op->name, "axis", p->axis, w->ndim, ax));
  int64_t e = w->dims[*ax];
  MXC_RETURN_ERROR_IF(e % n != 0, MXC_ERR_SHAPE,
                      "operator '%s': axis %d of the input (shape %s) has "
                      "extent %" PRId64
                      ", which num_outputs=%d does not "
                      "divide evenly",
                      op->name, *ax, MXC__SHP_STR(w, b1), e, n);
  MXC_RETURN_ERROR_IF(p->squeeze_axis && e != n, MXC_ERR_SHAPE,
                      "operator '%s': squeeze_axis needs axis %d of the "
                      "input (shape %s) to have extent num_outputs=%d",
                      op->name, *ax, MXC__SHP_STR(w, b1), n);
  *part = *w;
  part->dims[*ax] = e / n;
  if (p->squeeze_axis) {
    for (int k = *ax; k + 1 < w->ndim; ++k) part->dims[k] = w->dims[k + 1];
    part->ndim--;
  }
  return MXC_OK;
}

static int split_shape(const mxc__op *op, const void *param, mxc__shape *in,
                       int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  int ax;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(split_part(op, param, &in[0], &ax, &s));
  for (int i = 0; i < n_out; ++i)
    MXC_FORWARD_IF_ERROR(mxc__shp_set_out(op, out, i, &s));
  return MXC_OK;
}

/* The extent of every part of a split of `whole` along its axis *ax. */
static int split_ext(const mxc__op *op, const split_param *p,
                     const mxc__blob *whole, int *ax, int64_t *ext) {
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(split_part(op, p, &whole->shape, ax, &s));
  *ext = whole->shape.dims[*ax] / p->num_outputs;
  return MXC_OK;
}

static int split_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  int ax;
  int64_t ext;
  MXC_FORWARD_IF_ERROR(split_ext(op, param, &in[0], &ax, &ext));
  parts_copy(&in[0], ax, out, ext, n_out, 0, req);
  return MXC_OK;
}

/* _backward_split: (ograd0..) -> gradient of the whole. */
static int split_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                           int n_in, mxc__shape *out, int n_out) {
  const split_param *p = param;
  char b1[160], b2[160];
  for (int i = 0; i < n_in; ++i) {
    if (in[i].ndim < 0) return MXC_OK;
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&in[i], &in[0]), MXC_ERR_SHAPE,
                        "operator '%s': output gradient %d has shape %s but "
                        "output gradient 0 has shape %s",
                        op->name, i, MXC__SHP_STR(&in[i], b1),
                        MXC__SHP_STR(&in[0], b2));
  }
  int nd = in[0].ndim + (p->squeeze_axis ? 1 : 0), ax;
  MXC_RETURN_ERROR_IF(nd > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': output gradients have too many "
                      "dimensions",
                      op->name);
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op->name, "axis", p->axis, nd, &ax));
  mxc__shape w = in[0];
  if (p->squeeze_axis) {
    for (int k = nd - 1; k > ax; --k) w.dims[k] = w.dims[k - 1];
    w.ndim = nd;
    w.dims[ax] = n_in;
  } else {
    MXC_RETURN_ERROR_IF(!mxc__mul_i64(w.dims[ax], n_in, &w.dims[ax]),
                        MXC_ERR_SHAPE,
                        "operator '%s': %d output gradients of shape %s "
                        "join into an extent beyond int64",
                        op->name, n_in, MXC__SHP_STR(&in[0], b2));
  }
  return mxc__shp_set_out(op, out, 0, &w);
}

static int split_backward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  int ax;
  int64_t ext;
  MXC_FORWARD_IF_ERROR(split_ext(op, param, &out[0], &ax, &ext));
  parts_copy(&out[0], ax, in, ext, n_in, 1, req);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_data[] = {"data", NULL};
/* _rnn_param_concat: what Gluon's recurrent layers (MXNet 1.x) write into
 * an exported graph to pack their weights and biases, flattened, for the
 * RNN operator. MXNet's own kernel is Concat's; its shape inference also
 * fills unknown inputs from the RNN's, which a loaded graph does not need
 * (its parameters come with shapes from the .params file). */
static const char *const k_concat_alias[] = {"concat", "_rnn_param_concat",
                                             NULL};
static const char *const k_split_alias[] = {"SliceChannel", NULL};

static const mxc__op k_concat = {
    .name = "Concat",
    .aliases = k_concat_alias,
    .doc =
        "Joins num_args arrays along axis dim; they must match on every "
        "other axis.",
    MXC__PARAMS_OF(concat_param, k_concat_params),
    .num_inputs = concat_num,
    .input_names = k_arg_names,
    .n_outputs = 1,
    .infer_shape = concat_shape,
    .compute = concat_forward,
    .gradient = mxc__grad_use_in,
    /* Every part (the first 32 bits: inputs beyond have none, op.h). */
    .backward_uses_inputs = 0xffffffffu,
};

static const mxc__op k_concat_bwd = {
    .name = "_backward_Concat",
    .doc =
        "Gradient of Concat: the output gradient cut into the inputs' "
        "shapes.",
    MXC__PARAMS_OF(concat_param, k_concat_params),
    .num_inputs = concat_bwd_num_in,
    .num_outputs = concat_num,
    .infer_shape = concat_bwd_shape,
    .compute = concat_backward,
    .hidden = 1,
};

static const mxc__op k_stack = {
    .name = "stack",
    .doc = "Joins num_args arrays of equal shape along a new axis.",
    MXC__PARAMS_OF(stack_param, k_stack_params),
    .num_inputs = stack_num,
    .input_names = k_arg_names,
    .n_outputs = 1,
    .infer_shape = stack_shape,
    .compute = stack_forward,
    .gradient = mxc__grad_use_none,
};

static const mxc__op k_stack_bwd = {
    .name = "_backward_stack",
    .doc = "Gradient of stack: the output gradient unstacked.",
    MXC__PARAMS_OF(stack_param, k_stack_params),
    .n_inputs = 1,
    .num_outputs = stack_num,
    .infer_shape = stack_bwd_shape,
    .compute = stack_backward,
    .hidden = 1,
};

static const mxc__op k_split = {
    .name = "split",
    .aliases = k_split_alias,
    .doc = "Cuts the input into num_outputs equal parts along axis.",
    MXC__PARAMS_OF(split_param, k_split_params),
    .n_inputs = 1,
    .input_names = k_data,
    .num_outputs = split_num,
    .infer_shape = split_shape,
    .compute = split_forward,
    .gradient = mxc__grad_use_none,
};

static const mxc__op k_split_bwd = {
    .name = "_backward_split",
    .doc = "Gradient of split: the output gradients joined.",
    MXC__PARAMS_OF(split_param, k_split_params),
    .num_inputs = split_num,
    .n_outputs = 1,
    .infer_shape = split_bwd_shape,
    .compute = split_backward,
    .hidden = 1,
};

int mxc__shp_register_concat(mxc__registry *r) {
  static const mxc__op *const ops[] = {
      &k_concat, &k_concat_bwd, &k_stack, &k_stack_bwd,
      &k_split,  &k_split_bwd,  NULL};
  return mxc__shp_add_all(r, ops);
}
