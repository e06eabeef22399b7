/* Crop (MXNet's legacy cropping layer, as in FCN and RetinaFace graphs):
 * cuts data (N, C, H, W) to (N, C, h, w) at (offset_h, offset_w), where
 * (h, w) is the spatial size of crop_like (num_args = 2) or h_w
 * (num_args = 1), and the offset is `offset` or, with center_crop, the
 * centre ((H - h) / 2, (W - w) / 2, rounded down). The gradient of data is
 * the output gradient at that window and zero elsewhere; crop_like gets
 * none. */
#include "ops/shape/pad_params.h"
#include "ops/shape/shape_internal.h"

typedef mxc__crop_param crop_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(crop_param, num_args, MXC__P_INT, NULL, 1, 2,
                     "1: crop to h_w; 2: crop to crop_like's height and "
                     "width."),
    MXC__PARAM(crop_param, offset, MXC__P_TUPLE, "(0,0)",
               "(y, x) of the window's corner when center_crop is off."),
    MXC__PARAM(crop_param, h_w, MXC__P_TUPLE, "(0,0)",
               "(height, width) of the window when num_args is 1."),
    MXC__PARAM(crop_param, center_crop, MXC__P_BOOL, "false",
               "Centre the window instead of placing it at offset."),
};

static int crop_check(const char *op_name, void *param) {
  const crop_param *p = param;
  MXC_RETURN_ERROR_IF(p->offset.ndim != 2 || p->h_w.ndim != 2,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': offset and h_w must each have 2 "
                      "entries (y, x) / (height, width)",
                      op_name);
  for (int k = 0; k < 2; ++k) {
    MXC_RETURN_ERROR_IF(p->offset.d[k] < 0 || p->h_w.d[k] < 0,
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': offset and h_w must be >= 0", op_name);
  }
  return MXC_OK;
}

static int crop_num_inputs(const void *param) {
  return (int)((const crop_param *)param)->num_args;
}

static const char *crop_input_name(const void *param, int i) {
  (void)param;
  return i == 0 ? "data" : "crop_like";
}

/* The window of data (4-d) for crop_like's shape `like` (or NULL). */
typedef mxc__crop_window window;

static int window_of(const mxc__op *op, const crop_param *p,
                     const mxc__shape *data, const mxc__shape *like,
                     window *win) {
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(data->ndim != 4, MXC_ERR_SHAPE,
                      "operator '%s': data has shape %s; expected 4 axes "
                      "(N, C, H, W)",
                      op->name, MXC__SHP_STR(data, b1));
  MXC_RETURN_ERROR_IF(like && like->ndim < 2, MXC_ERR_SHAPE,
                      "operator '%s': crop_like has shape %s; expected at "
                      "least 2 axes (its last two are the window's size)",
                      op->name, MXC__SHP_STR(like, b1));
  int64_t H = data->dims[2], W = data->dims[3];
  *win = mxc__crop_window_of(p, H, W, like != NULL,
                             like ? like->dims[like->ndim - 2] : 0,
                             like ? like->dims[like->ndim - 1] : 0);
  MXC_RETURN_ERROR_IF(!like && (win->h == 0 || win->w == 0),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': num_args=1 needs h_w (height, width) "
                      "with both entries > 0",
                      op->name);
  MXC_RETURN_ERROR_IF(win->h > H || win->w > W || win->y < 0 || win->x < 0 ||
                          win->y > H - win->h || win->x > W - win->w,
                      MXC_ERR_SHAPE,
                      "operator '%s': a %lldx%lld window at (%lld, %lld) "
                      "does not fit in data %s",
                      op->name, (long long)win->h, (long long)win->w,
                      (long long)win->y, (long long)win->x,
                      MXC__SHP_STR(data, b2));
  return MXC_OK;
}

static int crop_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  (void)n_out;
  if (in[0].ndim < 0 || (n_in > 1 && in[1].ndim < 0)) return MXC_OK;
  window win;
  MXC_FORWARD_IF_ERROR(
      window_of(op, param, &in[0], n_in > 1 ? &in[1] : NULL, &win));
  int64_t dims[4] = {in[0].dims[0], in[0].dims[1], win.h, win.w};
  mxc__shape s = mxc__shp_make(dims, 4);
  return mxc__shp_set_out(op, out, 0, &s);
}

/* The window as a strided view of data (offset and strides). */
static void window_iter(const window *win, const mxc__shape *data,
                        mxc__shp_iter *it, int64_t *off, int64_t *strides) {
  int64_t dims[4] = {data->dims[0], data->dims[1], win->h, win->w};
  mxc__shp_iter_contig(it, dims, 4);
  mxc__shp_strides(data->dims, 4, strides);
  *off = win->y * strides[2] + win->x * strides[3];
}

static int crop_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_out;
  window win;
  MXC_FORWARD_IF_ERROR(window_of(op, param, &in[0].shape,
                                 n_in > 1 ? &in[1].shape : NULL, &win));
  mxc__shp_iter it;
  window_iter(&win, &in[0].shape, &it, &it.src_off, it.src_stride);
  mxc__shp_copy(&it, &out[0], &in[0], req[0]);
  return MXC_OK;
}

/* _backward_Crop: (ograd, data[, crop_like]) -> ddata. */
static int crop_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)ctx, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  window win;
  MXC_FORWARD_IF_ERROR(window_of(op, param, &in[1].shape,
                                 n_in > 2 ? &in[2].shape : NULL, &win));
  if (req[0] != MXC__REQ_ADD) mxc__shp_zero(&out[0]);
  mxc__shp_iter it;
  window_iter(&win, &in[1].shape, &it, &it.dst_off, it.dst_stride);
  mxc__shp_copy(&it, &out[0], &in[0],
                req[0] == MXC__REQ_ADD ? MXC__REQ_ADD : MXC__REQ_WRITE);
  return MXC_OK;
}

static int crop_bwd_num_inputs(const void *param) {
  return 1 + crop_num_inputs(param);
}

static const char *crop_bwd_input_name(const void *param, int i) {
  return i == 0 ? "ograd" : crop_input_name(param, i - 1);
}

static int crop_bwd_shape(const mxc__op *op, const void *param,
                          mxc__shape *in, int n_in, mxc__shape *out,
                          int n_out) {
  (void)param, (void)n_in, (void)n_out;
  if (in[1].ndim < 0) return MXC_OK;
  return mxc__shp_set_out(op, out, 0, &in[1]);
}

/* Only data gets a gradient; the backward node reads the shapes of the
 * forward inputs. */
static int crop_grad(const mxc__node *fwd, const mxc__entry *ograd,
                     mxc__entry *igrad) {
  mxc__entry ins[3] = {ograd[0], fwd->inputs[0],
                       fwd->n_inputs > 1 ? fwd->inputs[1] : fwd->inputs[0]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op_like("_backward_Crop", fwd, ins, 1 + fwd->n_inputs, &b));
  igrad[0].node = b; /* takes the creation reference */
  igrad[0].index = 0;
  for (int i = 1; i < fwd->n_inputs; ++i) {
    igrad[i].node = NULL;
    igrad[i].index = 0;
  }
  return MXC_OK;
}

static const mxc__op k_crop = {
    .name = "Crop",
    .doc = "Cuts data (N, C, H, W) to a window of crop_like's height and "
           "width (num_args=2) or h_w (num_args=1), at offset or centred.",
    MXC__PARAMS_OF(crop_param, k_params),
    .param_check = crop_check,
    .num_inputs = crop_num_inputs,
    .input_name = crop_input_name,
    .n_outputs = 1,
    .infer_shape = crop_shape,
    .compute = crop_forward,
    .gradient = crop_grad,
    .backward_uses_inputs = 3u,
};

static const mxc__op k_crop_bwd = {
    MXC__BACKWARD_DOC("Crop", "Gradient of Crop: the output gradient in "
                              "the window of zeros."),
    MXC__PARAMS_OF(crop_param, k_params),
    .param_check = crop_check,
    .num_inputs = crop_bwd_num_inputs,
    .input_name = crop_bwd_input_name,
    .n_outputs = 1,
    .infer_shape = crop_bwd_shape,
    .compute = crop_backward,
};

int mxc__shp_register_crop(mxc__registry *r) {
  static const mxc__op *const ops[] = {&k_crop, &k_crop_bwd, NULL};
  return mxc__shp_add_all(r, ops);
}
