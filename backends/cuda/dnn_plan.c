#include "backends/cuda/dnn_plan.h"

#include <limits.h>
#include <stdio.h>

#include "ops/linalg/linalg.h"
#include "ops/nn/nn.h"
#include "ops/reduce/reduce_impl.h"

/* The plug-in calls nothing of libmxc: errors are written into `why`
 * here, not through core/base/error.h's macros. */
static int refuse(char *why, size_t len, int rc, const char *msg, long long v) {
  snprintf(why, len, msg, v);
  return rc;
}

/* Compact row-major strides of t's n dims; 0 when the element count fits
 * cuDNN's int, -1 otherwise. */
static int compact(mxc__dnn_tensor *t, int n) {
  int64_t s = 1;
  for (int i = n - 1; i >= 0; --i) {
    t->strides[i] = (int)s;
    s *= t->dims[i];
    if (s > INT_MAX) return -1;
  }
  return 0;
}

/* Spatial axis i of the call (nsp of them) at position j of cuDNN's
 * 2 or 3 spatial axes: a 1-D call's only axis goes last. */
static int axis_of(int nsp, int j) { return nsp == 1 ? j - 1 : j; }

/* Output extent of one spatial axis, as ops/linalg/conv.c computes it;
 * -1 when the dilated kernel is larger than the padded input. */
static int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t p,
                          int64_t d) {
  int64_t span = d * (k - 1) + 1, padded = in + 2 * p;
  return span > padded ? -1 : (padded - span) / s + 1;
}

static int fits(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Kernel geometry of spatial axis j (cuDNN's) from the parameters. */
static int fill_axis(const mxc__conv_param *p, int nsp, int j,
                     mxc__dnn_conv_plan *pl, int64_t in, int64_t *out) {
  int i = axis_of(nsp, j);
  int64_t k = i < 0 ? 1 : p->kernel.d[i], s = i < 0 ? 1 : p->stride.d[i];
  int64_t pd = i < 0 ? 0 : p->pad.d[i], d = i < 0 ? 1 : p->dilate.d[i];
  if (!fits(k) || !fits(s) || !fits(pd) || !fits(d)) return -1;
  pl->w.dims[2 + j] = (int)k;
  pl->stride[j] = (int)s;
  pl->pad[j] = (int)pd;
  pl->dilation[j] = (int)d;
  *out = out_extent(in, k, s, pd, d);
  return 0;
}

static int check_out(const mxc__dnn_conv_plan *pl, const mxc__gpu_array *out,
                     int nsp, char *why, size_t len) {
  int ok = out->ndim == nsp + 2;
  for (int i = 0; ok && i < out->ndim; ++i) {
    int j = i < 2 ? i : (nsp == 1 ? 3 : i);
    ok = out->dims[i] == pl->y.dims[j];
  }
  return ok ? MXC_OK
            : refuse(why, len, MXC_ERR_SHAPE,
                     "Convolution on the GPU: the output array's shape "
                     "does not match the parameters (%lld axes given)",
                     (long long)out->ndim);
}

/* Dims of x, w, y, b (strides follow). */
static int fill_dims(const mxc__conv_param *p, const int64_t *data, int nsp,
                     mxc__dnn_conv_plan *pl, char *why, size_t len) {
  int64_t n = data[0], c = data[1], f = p->num_filter, g = p->num_group;
  if (!fits(n) || !fits(c) || !fits(f) || !fits(g)) {
    return refuse(why, len, MXC_ERR_UNSUPPORTED,
                  "Convolution on the GPU: batch, channels or filters "
                  "beyond cuDNN's int (%lld channels)",
                  (long long)c);
  }
  int sp = pl->nbdims - 2;
  pl->x.dims[0] = pl->y.dims[0] = (int)n;
  pl->x.dims[1] = (int)c;
  pl->y.dims[1] = pl->w.dims[0] = pl->b.dims[1] = (int)f;
  pl->w.dims[1] = (int)(c / g);
  pl->b.dims[0] = 1;
  for (int j = 0; j < sp; ++j) {
    int i = axis_of(nsp, j);
    int64_t in = i < 0 ? 1 : data[2 + i], o = 0;
    if (fill_axis(p, nsp, j, pl, in, &o) != 0 || !fits(in)) {
      return refuse(why, len, MXC_ERR_UNSUPPORTED,
                    "Convolution on the GPU: a spatial extent or kernel "
                    "parameter of axis %lld is beyond cuDNN's int",
                    (long long)i);
    }
    if (o < 1) {
      return refuse(why, len, MXC_ERR_SHAPE,
                    "Convolution on the GPU: the dilated kernel is larger "
                    "than the padded input along spatial axis %lld",
                    (long long)i);
    }
    pl->x.dims[2 + j] = (int)in;
    pl->y.dims[2 + j] = (int)o;
    pl->b.dims[2 + j] = 1;
  }
  return MXC_OK;
}

static int check_call(const mxc__conv_param *p, int ndim, const int64_t *data,
                      char *why, size_t len) {
  int nsp = p->kernel.ndim;
  if (nsp < 1 || nsp > 3 || ndim != nsp + 2) {
    return refuse(why, len, MXC_ERR_SHAPE,
                  "Convolution on the GPU: data has %lld axes; the kernel "
                  "needs batch, channel and its spatial axes",
                  (long long)ndim);
  }
  if (p->layout >= MXC__LAYOUT_NWC) {
    return refuse(why, len, MXC_ERR_UNSUPPORTED,
                  "Convolution on the GPU: layout %lld is channel-last; "
                  "only NCW, NCHW and NCDHW are supported",
                  (long long)p->layout);
  }
  if (p->num_group < 1 || data[1] % p->num_group != 0 ||
      p->num_filter % p->num_group != 0) {
    return refuse(why, len, MXC_ERR_SHAPE,
                  "Convolution on the GPU: %lld channels or num_filter not "
                  "divisible by num_group",
                  (long long)data[1]);
  }
  return MXC_OK;
}

/* cuDNN cannot describe an empty tensor: only an empty batch, handled by
 * the kernel without cuDNN, is accepted. */
static int check_nonempty(const mxc__dnn_conv_plan *pl, char *why, size_t len) {
  for (int i = 1; i < pl->nbdims; ++i) {
    if (pl->x.dims[i] == 0 || pl->w.dims[i] == 0 || pl->y.dims[i] == 0) {
      return refuse(why, len, MXC_ERR_UNSUPPORTED,
                    "Convolution on the GPU: axis %lld of the data, weight "
                    "or output is empty, which cuDNN cannot describe",
                    (long long)i);
    }
  }
  return MXC_OK;
}

/* What a convolution's and a deconvolution's plans start with: the call
 * checked, the plan cleared, its rank, groups, bias and empty batch. */
static int plan_start(const mxc__conv_param *p, const int64_t *data,
                      int ndim, mxc__dnn_conv_plan *pl, char *why,
                      size_t why_len) {
  int rc = check_call(p, ndim, data, why, why_len);
  if (rc != MXC_OK) return rc;
  *pl = (mxc__dnn_conv_plan){0};
  pl->nbdims = p->kernel.ndim == 3 ? 5 : 4;
  pl->groups = (int)p->num_group;
  pl->has_bias = !p->no_bias;
  pl->batch_empty = data[0] == 0;
  return MXC_OK;
}

int mxc__dnn_conv_plan_make(const void *param, const int64_t *data, int ndim,
                            const mxc__gpu_array *out, mxc__dnn_conv_plan *pl,
                            char *why, size_t why_len) {
  const mxc__conv_param *p = param;
  int rc = plan_start(p, data, ndim, pl, why, why_len);
  if (rc != MXC_OK) return rc;
  int nsp = p->kernel.ndim;
  rc = fill_dims(p, data, nsp, pl, why, why_len);
  if (rc == MXC_OK && out) rc = check_out(pl, out, nsp, why, why_len);
  if (rc != MXC_OK) return rc;
  rc = check_nonempty(pl, why, why_len);
  if (rc != MXC_OK) return rc;
  if (compact(&pl->x, pl->nbdims) || compact(&pl->w, pl->nbdims) ||
      compact(&pl->y, pl->nbdims) || compact(&pl->b, pl->nbdims)) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "Convolution on the GPU: a tensor has more elements than "
                  "cuDNN's int can count (batch %lld)",
                  (long long)data[0]);
  }
  return MXC_OK;
}

int mxc__dnn_beta(int req) {
  switch (req) {
    case MXC__GPU_REQ_WRITE:
    case MXC__GPU_REQ_INPLACE:
      return 0;
    case MXC__GPU_REQ_ADD:
      return 1;
    default:
      return -1;
  }
}

/* ---- pooling ---- */

/* Output extent of one axis by the operator's convention (pool.c), and
 * by cuDNN's floor rule; the caller refuses the call when they differ. */
static int64_t pool_extent(const mxc__pool_param *p, int64_t in, int64_t k,
                           int64_t s, int64_t pd, int64_t *cudnn) {
  int64_t room = in + 2 * pd - k;
  *cudnn = room < 0 ? -1 : room / s + 1;
  if (p->global_pool) return 1;
  if (p->pooling_convention == MXC__POOL_SAME) return in / s + (in % s != 0);
  if (room < 0) return -1;
  return room / s + (p->pooling_convention == MXC__POOL_FULL && room % s) + 1;
}

static int pool_mode(const mxc__pool_param *p, char *why, size_t len) {
  if (p->pool_type == MXC__POOL_MAX) return MXC__DNN_POOL_MAX;
  if (p->pool_type == MXC__POOL_AVG) {
    return p->count_include_pad ? MXC__DNN_POOL_AVG_INCLUDE_PAD
                                : MXC__DNN_POOL_AVG_EXCLUDE_PAD;
  }
  (void)refuse(why, len, MXC_ERR_UNSUPPORTED,
               "Pooling on the GPU: pool_type %lld (sum or lp) has no "
               "cuDNN mode; max and avg are supported",
               (long long)p->pool_type);
  return -1;
}

/* Window, pad and stride of cuDNN's spatial axis j; the extents. */
static int pool_axis(const mxc__pool_param *p, const int64_t *data, int nsp,
                     int j, mxc__dnn_pool_plan *pl, char *why, size_t len) {
  int i = axis_of(nsp, j);
  int64_t in = i < 0 ? 1 : data[2 + i], k = in, s = 1, pd = 0, cu = 0;
  if (i >= 0 && !p->global_pool) {
    k = p->kernel.d[i], s = p->stride.d[i], pd = p->pad.d[i];
  }
  int64_t o = pool_extent(p, in, k, s, pd, &cu);
  if (!fits(in) || !fits(k) || !fits(s) || !fits(pd) || k < 1) {
    return refuse(why, len, MXC_ERR_UNSUPPORTED,
                  "Pooling on the GPU: spatial axis %lld has an extent or "
                  "window beyond cuDNN's int, or is empty",
                  (long long)i);
  }
  if (o < 1 || o != cu || (pd > 0 && pd >= k)) {
    return refuse(why, len, o < 1 ? MXC_ERR_SHAPE : MXC_ERR_UNSUPPORTED,
                  "Pooling on the GPU: along spatial axis %lld the windows "
                  "of this convention, pad and shape are not cuDNN's "
                  "(floor rounding, pad smaller than the window)",
                  (long long)i);
  }
  pl->x.dims[2 + j] = (int)in;
  pl->y.dims[2 + j] = (int)o;
  pl->window[j] = (int)k;
  pl->stride[j] = (int)s;
  pl->pad[j] = (int)pd;
  return MXC_OK;
}

static int pool_check_out(const mxc__dnn_pool_plan *pl,
                          const mxc__gpu_array *out, int nsp, char *why,
                          size_t len) {
  int ok = out->ndim == nsp + 2;
  for (int i = 0; ok && i < out->ndim; ++i) {
    ok = out->dims[i] == pl->y.dims[i < 2 ? i : (nsp == 1 ? 3 : i)];
  }
  return ok ? MXC_OK
            : refuse(why, len, MXC_ERR_SHAPE,
                     "Pooling on the GPU: the output array's shape does not "
                     "match the parameters (%lld axes given)",
                     (long long)out->ndim);
}

int mxc__dnn_pool_plan_make(const void *param, const int64_t *data, int ndim,
                            const mxc__gpu_array *out, mxc__dnn_pool_plan *pl,
                            char *why, size_t why_len) {
  const mxc__pool_param *p = param;
  int nsp = p->global_pool ? ndim - 2 : p->kernel.ndim;
  if (nsp < 1 || nsp > 3 || ndim != nsp + 2) {
    return refuse(why, why_len, MXC_ERR_SHAPE,
                  "Pooling on the GPU: data has %lld axes; the kernel needs "
                  "batch, channel and 1 to 3 spatial axes",
                  (long long)ndim);
  }
  if (p->layout >= MXC__LAYOUT_NWC) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "Pooling on the GPU: layout %lld is channel-last",
                  (long long)p->layout);
  }
  *pl = (mxc__dnn_pool_plan){0};
  pl->mode = pool_mode(p, why, why_len);
  if (pl->mode < 0) return MXC_ERR_UNSUPPORTED;
  pl->nbdims = nsp == 3 ? 5 : 4;
  if (!fits(data[0]) || !fits(data[1]) || data[0] == 0 || data[1] == 0) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "Pooling on the GPU: batch or channels (%lld) empty or "
                  "beyond cuDNN's int",
                  (long long)data[1]);
  }
  pl->x.dims[0] = pl->y.dims[0] = (int)data[0];
  pl->x.dims[1] = pl->y.dims[1] = (int)data[1];
  for (int j = 0; j < pl->nbdims - 2; ++j) {
    int rc = pool_axis(p, data, nsp, j, pl, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  int rc = out ? pool_check_out(pl, out, nsp, why, why_len) : MXC_OK;
  if (rc != MXC_OK) return rc;
  if (compact(&pl->x, pl->nbdims) || compact(&pl->y, pl->nbdims)) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "Pooling on the GPU: a tensor has more elements than "
                  "cuDNN's int can count (batch %lld)",
                  (long long)data[0]);
  }
  return MXC_OK;
}

/* ---- softmax ---- */

int mxc__dnn_softmax_plan_make(const void *param, const int64_t *data, int ndim,
                               mxc__dnn_softmax_plan *pl, char *why,
                               size_t why_len) {
  const mxc__softmax_param *p = param;
  int64_t axis = p->axis < 0 ? p->axis + ndim : p->axis;
  if (ndim < 1 || axis < 0 || axis >= ndim) {
    return refuse(why, why_len, MXC_ERR_SHAPE,
                  "softmax on the GPU: axis %lld is out of range for the "
                  "data's axes",
                  (long long)p->axis);
  }
  if (p->temperature != 1 || p->use_length) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "softmax on the GPU: temperature other than 1 or "
                  "use_length (%lld) has no cuDNN form",
                  (long long)p->use_length);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= data[a];
  for (int64_t a = axis + 1; a < ndim; ++a) inner *= data[a];
  int64_t d[4] = {outer, data[axis], inner, 1};
  *pl = (mxc__dnn_softmax_plan){0};
  pl->empty = outer == 0 || inner == 0 || data[axis] == 0;
  for (int i = 0; i < 4; ++i) {
    if (!fits(d[i])) {
      return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                    "softmax on the GPU: %lld rows or elements exceed "
                    "cuDNN's int",
                    (long long)d[i]);
    }
    pl->t.dims[i] = (int)d[i];
  }
  if (!pl->empty && compact(&pl->t, 4)) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "softmax on the GPU: %lld rows: more elements than "
                  "cuDNN's int can count",
                  (long long)outer);
  }
  return MXC_OK;
}

/* ---- batch norm ---- */

/* cuDNN's CUDNN_BN_MIN_EPSILON (cudnn_ops.h), without its header here. */
#define BN_MIN_EPS 1e-5

static int bn_refuse_eps(const mxc__bn_param *p, char *why, size_t len) {
  snprintf(why, len, "BatchNorm on the GPU: eps %g is below cuDNN's minimum %g",
           p->eps, BN_MIN_EPS);
  return MXC_ERR_UNSUPPORTED;
}

int mxc__dnn_bn_plan_make(const void *param, const int64_t *data, int ndim,
                          int is_train, mxc__dnn_bn_plan *pl, char *why,
                          size_t why_len) {
  const mxc__bn_param *p = param;
  int64_t axis = p->axis < 0 ? p->axis + ndim : p->axis;
  if (ndim < 1 || axis < 0 || axis >= ndim) {
    return refuse(why, why_len, MXC_ERR_SHAPE,
                  "BatchNorm on the GPU: axis %lld is out of range for the "
                  "data's axes",
                  (long long)p->axis);
  }
  if (p->eps < BN_MIN_EPS) return bn_refuse_eps(p, why, why_len);
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= data[a];
  for (int64_t a = axis + 1; a < ndim; ++a) inner *= data[a];
  int64_t d[4] = {outer, data[axis], inner, 1};
  *pl = (mxc__dnn_bn_plan){0};
  pl->m = outer * inner;
  pl->batch_stats = is_train && !p->use_global_stats;
  if (pl->m == 0 || data[axis] == 0 || (pl->batch_stats && pl->m < 2)) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "BatchNorm on the GPU: %lld elements per channel; cuDNN "
                  "needs at least 1, and 2 for batch statistics",
                  (long long)pl->m);
  }
  for (int i = 0; i < 4; ++i) {
    if (!fits(d[i])) {
      return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                    "BatchNorm on the GPU: extent %lld beyond cuDNN's int",
                    (long long)d[i]);
    }
    pl->x.dims[i] = (int)d[i];
    pl->c.dims[i] = i == 1 ? (int)d[i] : 1;
  }
  if (compact(&pl->x, 4) || compact(&pl->c, 4)) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "BatchNorm on the GPU: %lld elements per channel: more "
                  "than cuDNN's int can count",
                  (long long)pl->m);
  }
  pl->fix_gamma = p->fix_gamma;
  pl->eps = p->eps;
  pl->mean_keep = pl->var_keep = p->momentum;
  pl->mean_take = 1 - p->momentum;
  pl->var_take = (1 - p->momentum) * (double)(pl->m - 1) / (double)pl->m;
  return MXC_OK;
}

/* ---- deconvolution ---- */

/* Image-side extent *osp and pad *pd of spatial axis i, as
 * ops/linalg/deconv.c derives them; -1 when cuDNN's convolution of that
 * extent does not come back to `in`. */
static int deconv_axis(const mxc__conv_param *p, int i, int64_t in,
                       int64_t *osp, int64_t *pd) {
  int64_t k = p->kernel.d[i], s = p->stride.d[i], d = p->dilate.d[i];
  int64_t full = s * (in - 1) + d * (k - 1) + 1;
  if (p->target_shape.ndim > 0) {
    if (p->target_shape.d[i] > full) return -1; /* the operator refuses */
    *pd = (full - p->target_shape.d[i] + 1) / 2;
    *osp = p->target_shape.d[i];
  } else {
    *pd = p->pad.d[i];
    *osp = full - 2 * *pd + p->adj.d[i];
  }
  return *osp >= 1 && out_extent(*osp, k, s, *pd, d) == in ? 0 : -1;
}

/* Per spatial axis j of cuDNN's: geometry, x (image) and y (data)
 * extents. */
static int deconv_dims(const mxc__conv_param *p, const int64_t *data, int nsp,
                       mxc__dnn_conv_plan *pl, char *why, size_t len) {
  for (int j = 0; j < pl->nbdims - 2; ++j) {
    int i = axis_of(nsp, j);
    int64_t in = i < 0 ? 1 : data[2 + i], osp = 1, pd = 0;
    if (i >= 0 && deconv_axis(p, i, in, &osp, &pd) != 0) {
      return refuse(why, len, MXC_ERR_UNSUPPORTED,
                    "Deconvolution on the GPU: along spatial axis %lld, adj "
                    "or target_shape give an output cuDNN's convolution "
                    "does not map back onto the data",
                    (long long)i);
    }
    int64_t k = i < 0 ? 1 : p->kernel.d[i], s = i < 0 ? 1 : p->stride.d[i];
    int64_t d = i < 0 ? 1 : p->dilate.d[i];
    if (!fits(in) || !fits(osp) || !fits(k) || !fits(s) || !fits(d) ||
        !fits(pd)) {
      return refuse(why, len, MXC_ERR_UNSUPPORTED,
                    "Deconvolution on the GPU: an extent or kernel "
                    "parameter of axis %lld is beyond cuDNN's int",
                    (long long)i);
    }
    pl->x.dims[2 + j] = (int)osp;
    pl->y.dims[2 + j] = (int)in;
    pl->w.dims[2 + j] = (int)k;
    pl->b.dims[2 + j] = 1;
    pl->pad[j] = (int)pd, pl->stride[j] = (int)s, pl->dilation[j] = (int)d;
  }
  return MXC_OK;
}

static int deconv_channels(const mxc__conv_param *p, const int64_t *data,
                           mxc__dnn_conv_plan *pl, char *why, size_t len) {
  int64_t n = data[0], c = data[1], f = p->num_filter;
  if (!fits(n) || !fits(c) || !fits(f)) {
    return refuse(why, len, MXC_ERR_UNSUPPORTED,
                  "Deconvolution on the GPU: batch, channels or filters "
                  "beyond cuDNN's int (%lld channels)",
                  (long long)c);
  }
  pl->x.dims[0] = pl->y.dims[0] = (int)n;
  pl->x.dims[1] = pl->b.dims[1] = (int)f;
  pl->y.dims[1] = pl->w.dims[0] = (int)c;
  pl->w.dims[1] = (int)(f / p->num_group);
  pl->b.dims[0] = 1;
  return MXC_OK;
}

int mxc__dnn_deconv_plan_make(const void *param, const int64_t *data, int ndim,
                              const mxc__gpu_array *out, mxc__dnn_conv_plan *pl,
                              char *why, size_t why_len) {
  const mxc__conv_param *p = param;
  int rc = plan_start(p, data, ndim, pl, why, why_len);
  if (rc != MXC_OK) return rc;
  int nsp = p->kernel.ndim;
  rc = deconv_channels(p, data, pl, why, why_len);
  if (rc == MXC_OK) rc = deconv_dims(p, data, nsp, pl, why, why_len);
  if (rc != MXC_OK) return rc;
  /* The output is the image side: compare it with x (check_out reads y). */
  mxc__dnn_conv_plan swapped = *pl;
  swapped.y = pl->x;
  if (out) rc = check_out(&swapped, out, nsp, why, why_len);
  if (rc == MXC_OK) rc = check_nonempty(pl, why, why_len);
  if (rc != MXC_OK) return rc;
  if (compact(&pl->x, pl->nbdims) || compact(&pl->w, pl->nbdims) ||
      compact(&pl->y, pl->nbdims) || compact(&pl->b, pl->nbdims)) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "Deconvolution on the GPU: a tensor has more elements "
                  "than cuDNN's int can count (batch %lld)",
                  (long long)data[0]);
  }
  return MXC_OK;
}

/* ---- data types ---- */

/* Whether slot i (inputs, then outputs) of a family holds data (the
 * data's dtype) rather than a per-channel float32 array. */
static int data_slot(int op, int i, int n_in) {
  int in = i < n_in, k = in ? i : i - n_in;
  switch (op) {
    case MXC__DNN_OP_BN: return k == 0;
    case MXC__DNN_OP_BN_BWD: return in ? (k == 0 || k == 1 || k == 6) : k == 0;
    default: return 1;
  }
}

static int dnn_dtype(int dt, int *elem) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32: *elem = 4; return MXC__DNN_DT_FLOAT;
    case MXC_DTYPE_FLOAT16: *elem = 2; return MXC__DNN_DT_HALF;
    case MXC_DTYPE_BFLOAT16: *elem = 2; return MXC__DNN_DT_BFLOAT16;
    default: return -1;
  }
}

/* The data dtype of the call (-1: none decided), or -2 when two data
 * arrays disagree (slot of the second in *at). */
static int data_dtype(int op, const int *dts, int n, int n_in, int *at) {
  int d = -1;
  for (int i = 0; i < n; ++i) {
    if (dts[i] < 0 || !data_slot(op, i, n_in)) continue;
    if (d >= 0 && dts[i] != d) return *at = i, -2;
    d = dts[i];
  }
  return d;
}

/* BatchNorm's per-channel arrays (every non-data slot) are float32, for
 * float16 and bfloat16 data too (ops/nn/batch_norm.c's bn_type). */
static int check_stats(int op, const int *dtypes, int n, int n_in, char *why,
                       size_t why_len) {
  for (int i = 0; op != MXC__DNN_OP_SAME && i < n; ++i) {
    if (dtypes[i] < 0 || data_slot(op, i, n_in)) continue;
    if (dtypes[i] != MXC_DTYPE_FLOAT32) {
      return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                    "cuDNN batch norm: per-channel array %lld (inputs, then "
                    "outputs) is not float32; expected float32 (for "
                    "float16 and bfloat16 data too)",
                    i);
    }
  }
  return MXC_OK;
}

int mxc__dnn_types_make(int op, const int *dtypes, int n_in, int n_out,
                        mxc__dnn_types *t, char *why, size_t why_len) {
  int n = n_in + n_out, at = 0;
  int d = data_dtype(op, dtypes, n, n_in, &at);
  if (d == -2) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "cuDNN kernels: array %lld (inputs, then outputs) has "
                  "another dtype than the data; expected one dtype for the "
                  "data arrays",
                  at);
  }
  *t = (mxc__dnn_types){MXC__DNN_DT_FLOAT, MXC__DNN_DT_FLOAT,
                        MXC__DNN_DT_FLOAT, 0, 4};
  if (d >= 0 && (t->data = dnn_dtype(d, &t->elem)) < 0) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "cuDNN kernels: dtype %lld is not supported; expected "
                  "float32, float16 or bfloat16",
                  d);
  }
  t->tensor_math = t->data != MXC__DNN_DT_FLOAT;
  return check_stats(op, dtypes, n, n_in, why, why_len);
}

int mxc__dnn_call_types(int op, const mxc__gpu_call *c, mxc__dnn_types *t,
                        char *why, size_t why_len) {
  int dts[32];
  if (c->n_in + c->n_out > 32) {
    return refuse(why, why_len, MXC_ERR_UNSUPPORTED,
                  "cuDNN kernels: %lld arrays; expected at most 32",
                  c->n_in + c->n_out);
  }
  for (int i = 0; i < c->n_in; ++i) dts[i] = c->in[i].dtype;
  for (int i = 0; i < c->n_out; ++i) dts[c->n_in + i] = c->out[i].dtype;
  return mxc__dnn_types_make(op, dts, c->n_in, c->n_out, t, why, why_len);
}

static int supports(int op, const int *dtypes, int n_in, int n_out) {
  mxc__dnn_types t;
  char why[160];
  return mxc__dnn_types_make(op, dtypes, n_in, n_out, &t, why, sizeof why) ==
         MXC_OK;
}

int mxc__dnn_supports_same(const int *dtypes, int n_in, int n_out) {
  return supports(MXC__DNN_OP_SAME, dtypes, n_in, n_out);
}
int mxc__dnn_supports_bn(const int *dtypes, int n_in, int n_out) {
  return supports(MXC__DNN_OP_BN, dtypes, n_in, n_out);
}
int mxc__dnn_supports_bn_bwd(const int *dtypes, int n_in, int n_out) {
  return supports(MXC__DNN_OP_BN_BWD, dtypes, n_in, n_out);
}

/* ---- the rows' accepts (core/base/gpu_plugin.h) ----
 * The plan functions above, run on the call's shapes: a call they answer
 * MXC_ERR_UNSUPPORTED (a form cuDNN computes otherwise than the CPU, or
 * not at all) is declined, so libmxc runs it on the CPU; any other
 * refusal is the CPU's too and is left to run. Without shapes (a graph
 * pass) or with an empty output, whose run does nothing, accepted. */

enum { ACC_CONV, ACC_DECONV, ACC_POOL, ACC_SOFTMAX, ACC_BN };

static int dnn_accepts(int kind, const mxc__gpu_call *c, int data_in,
                       char *why, size_t len) {
  if (!mxc__gpu_call_has_shapes(c) || c->n_out < 1 || c->out[0].size == 0 ||
      data_in >= c->n_in) {
    return 1;
  }
  const mxc__gpu_array *d = data_in < 0 ? &c->out[0] : &c->in[data_in];
  union {
    mxc__dnn_conv_plan conv;
    mxc__dnn_pool_plan pool;
    mxc__dnn_softmax_plan sm;
    mxc__dnn_bn_plan bn;
  } p;
  int rc = MXC_OK;
  switch (kind) {
    case ACC_CONV:
      if (d->ndim > 0 && d->dims[0] == 0) return 1;
      rc = mxc__dnn_conv_plan_make(c->param, d->dims, d->ndim, NULL, &p.conv,
                                   why, len);
      break;
    case ACC_DECONV:
      if (d->ndim > 0 && d->dims[0] == 0) return 1;
      rc = mxc__dnn_deconv_plan_make(c->param, d->dims, d->ndim, NULL,
                                     &p.conv, why, len);
      break;
    case ACC_POOL:
      rc = mxc__dnn_pool_plan_make(c->param, d->dims, d->ndim, NULL, &p.pool,
                                   why, len);
      break;
    case ACC_SOFTMAX:
      rc = mxc__dnn_softmax_plan_make(c->param, d->dims, d->ndim, &p.sm, why,
                                      len);
      break;
    default:
      rc = mxc__dnn_bn_plan_make(c->param, d->dims, d->ndim, c->is_train,
                                 &p.bn, why, len);
  }
  return rc != MXC_ERR_UNSUPPORTED;
}

/* Forwards read the data as input 0 (softmax: the output's shape), the
 * gradients as input 1 (after ograd). */
int mxc__dnn_conv_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_CONV, c, 0, why, len);
}
int mxc__dnn_conv_bwd_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_CONV, c, 1, why, len);
}
int mxc__dnn_deconv_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_DECONV, c, 0, why, len);
}
int mxc__dnn_deconv_bwd_accepts(const mxc__gpu_call *c, char *why,
                                size_t len) {
  return dnn_accepts(ACC_DECONV, c, 1, why, len);
}
int mxc__dnn_pool_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_POOL, c, 0, why, len);
}
int mxc__dnn_pool_bwd_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_POOL, c, 1, why, len);
}
int mxc__dnn_softmax_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_SOFTMAX, c, -1, why, len);
}
int mxc__dnn_bn_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_BN, c, 0, why, len);
}
int mxc__dnn_bn_bwd_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return dnn_accepts(ACC_BN, c, 1, why, len);
}
