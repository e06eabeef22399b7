/* _slice_assign (alias _crop_assign) and _slice_assign_scalar (alias
 * _crop_assign_scalar): a copy of lhs whose box slice(lhs, begin, end,
 * step) holds rhs (of the box's shape), or the value scalar. The box
 * follows slice's rules (ops/shape/slice.c). Output 0 may share lhs's
 * memory: then only the box is written. MXNet gives these operators no
 * gradient; neither does mxc. */
#include "ops/shape/shape_internal.h"

typedef struct sa_param {
  mxc__tuple begin, end, step;
  double scalar;
} sa_param;

#define SLICE_DEFS                                                          \
  MXC__PARAM(sa_param, begin, MXC__P_TUPLE, NULL,                           \
             "First index per axis (negative counts from the end)."),       \
      MXC__PARAM(sa_param, end, MXC__P_TUPLE, NULL,                         \
                 "Index past the last per axis; axes beyond the tuple are " \
                 "taken whole."),                                           \
      MXC__PARAM(sa_param, step, MXC__P_TUPLE, "()",                        \
                 "Step per axis (non-zero); empty means 1.")

static const mxc__param_def k_params[] = {SLICE_DEFS};
static const mxc__param_def k_scalar_params[] = {
    SLICE_DEFS,
    MXC__PARAM(sa_param, scalar, MXC__P_FLOAT, "0",
               "The value written into the box."),
};

static int sa_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const sa_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  mxc__shp_iter it;
  MXC_FORWARD_IF_ERROR(
      mxc__shp_slice_view(op, &p->begin, &p->end, &p->step, &in[0], &it));
  if (n_in > 1) {
    mxc__shape box = mxc__shp_make(it.dims, it.nd);
    char b1[160], b2[160];
    if (in[1].ndim < 0) {
      in[1] = box;
    } else {
      MXC_RETURN_ERROR_IF(!mxc__shape_equal(&in[1], &box), MXC_ERR_SHAPE,
                          "operator '%s': input 1 ('rhs') has shape %s; the "
                          "slice of lhs it replaces has shape %s",
                          op->name, MXC__SHP_STR(&in[1], b1),
                          MXC__SHP_STR(&box, b2));
    }
  }
  return mxc__shp_set_out(op, out, 0, &in[0]);
}

/* Fills the box of out with the scalar: a one-element source with
 * stride 0 in every dimension. */
static void fill_box(const mxc__shp_iter *box, const mxc__blob *out, double v,
                     mxc__req req) {
  union {
    double d;
    int64_t i;
    unsigned char b[16];
  } one = {0};
  mxc__blob src = {&one, {1, {1}}, out->dtype, out->dev, MXC__FMT_PLAIN};
  mxc__blob_set(&src, 0, v);
  mxc__shp_iter it = *box;
  for (int k = 0; k < it.nd; ++k) it.src_stride[k] = 0;
  it.src_off = 0;
  mxc__shp_copy(&it, out, &src, req);
}

/* dst = lhs with its box replaced (dst may be lhs itself: INPLACE). */
static void assign_into(const mxc__blob *dst, const mxc__shp_iter *box,
                        const sa_param *p, const mxc__blob *in, int n_in,
                        mxc__req req) {
  if (req != MXC__REQ_INPLACE) mxc__shp_copy_flat(dst, &in[0], MXC__REQ_WRITE);
  if (n_in > 1) {
    mxc__shp_copy(box, dst, &in[1], MXC__REQ_WRITE);
  } else {
    fill_box(box, dst, p->scalar, MXC__REQ_WRITE);
  }
}

static int sa_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const sa_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  mxc__shp_iter it;
  MXC_FORWARD_IF_ERROR(mxc__shp_slice_view(op, &p->begin, &p->end, &p->step,
                                           &in[0].shape, &it));
  if (req[0] != MXC__REQ_ADD) {
    assign_into(&out[0], &it, p, in, n_in, req[0]);
    return MXC_OK;
  }
  /* ADD: build the result in workspace, then add it. */
  mxc__blob tmp = out[0];
  size_t nbytes = (size_t)mxc__shape_size(&out[0].shape) *
                  mxc__dtype_size(out[0].dtype);
  MXC_FORWARD_IF_ERROR(mxc__opctx_temp(ctx, nbytes, &tmp.ptr));
  assign_into(&tmp, &it, p, in, n_in, MXC__REQ_WRITE);
  mxc__shp_copy_flat(&out[0], &tmp, MXC__REQ_ADD);
  return MXC_OK;
}

static const char *const k_in[] = {"lhs", "rhs", NULL};
static const char *const k_scalar_in[] = {"data", NULL};
static const char *const k_alias[] = {"_crop_assign", NULL};
static const char *const k_scalar_alias[] = {"_crop_assign_scalar", NULL};
static const int k_inplace[][2] = {{0, 0}};

static const mxc__op k_assign = {
    .name = "_slice_assign",
    .aliases = k_alias,
    .doc = "lhs with its slice (begin, end, step as slice's) replaced by "
           "rhs; output has lhs's shape.",
    MXC__PARAMS_OF(sa_param, k_params),
    .n_inputs = 2,
    .input_names = k_in,
    .n_outputs = 1,
    .infer_shape = sa_shape,
    .compute = sa_forward,
    MXC__INPLACE(k_inplace),
    .resources = MXC__RES_TEMP,
};

static const mxc__op k_assign_scalar = {
    .name = "_slice_assign_scalar",
    .aliases = k_scalar_alias,
    .doc = "data with its slice (begin, end, step as slice's) set to "
           "scalar; output has data's shape.",
    MXC__PARAMS_OF(sa_param, k_scalar_params),
    .n_inputs = 1,
    .input_names = k_scalar_in,
    .n_outputs = 1,
    .infer_shape = sa_shape,
    .compute = sa_forward,
    MXC__INPLACE(k_inplace),
    .resources = MXC__RES_TEMP,
};

int mxc__shp_register_slice_assign(mxc__registry *r) {
  static const mxc__op *const ops[] = {&k_assign, &k_assign_scalar, NULL};
  return mxc__shp_add_all(r, ops);
}
