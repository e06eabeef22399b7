/* Softmax losses.
 *
 * SoftmaxOutput (alias Softmax): the forward pass is a softmax; the
 * backward pass ignores the incoming gradient (the operator is the end of
 * the network, as in MXNet) and produces the cross-entropy gradient
 *   (softmax - target) * grad_scale / norm
 * from (output, label). target is the one-hot of the label, smoothed by
 * smooth_alpha; rows whose label equals ignore_label (with use_ignore)
 * get zero. A label that is not an integer class in [0, C) has no
 * one-hot (target 0): the gradient is then the softmax itself, which is
 * what MXNet computes. The label gets no gradient.
 *
 * Which axis is the class axis:
 *   default:        data (N, ...) flattened to (N, K); label (N),
 *   multi_output:   data (N, C, d1, ...), classes on axis 1; label
 *                   (N, d1, ...) (also accepted: (N, d1*...) and
 *                   (N, 1, d1, ...), same elements),
 *   preserve_shape: classes on the last axis; label data.shape[:-1].
 * norm: null 1; batch the number of rows (N, or all leading positions
 * with preserve_shape); valid the number of labels not equal to
 * ignore_label (at least 1; counted as MXNet does, even without
 * use_ignore). multi_output with null or batch also divides by the
 * number of positions per sample (d1*...), as MXNet 1.9.
 * A label shaped like data holds target probabilities instead of
 * classes: the gradient is then (softmax - label) * grad_scale, without
 * norm or ignore_label (MXNet's rule).
 *
 * softmax_cross_entropy: data (N, C), label (N) -> (1): the sum over rows
 * of -log softmax(data)[label]. Unlike SoftmaxOutput it is an ordinary
 * differentiable operator: its gradient is ograd * (softmax - onehot)
 * (exactly softmax - onehot for the usual head gradient 1). Rows with an
 * invalid label contribute 0 to the loss and get a zero gradient. */
#include <math.h>
#include <stdio.h>

#include "ops/nn/nn.h"

enum {
  NORM_NULL = MXC__SO_NORM_NULL,
  NORM_BATCH = MXC__SO_NORM_BATCH,
  NORM_VALID = MXC__SO_NORM_VALID
};
static const char *const k_norms[] = {"null", "batch", "valid", NULL};

/* In ops/nn/nn.h: the GPU plug-in reads it. */
typedef mxc__so_param so_param;

static const mxc__param_def k_so_params[] = {
    MXC__PARAM(so_param, grad_scale, MXC__P_FLOAT, "1",
               "Scale of the gradient."),
    MXC__PARAM(so_param, ignore_label, MXC__P_FLOAT, "-1",
               "Label whose rows get no gradient (with use_ignore)."),
    MXC__PARAM(so_param, multi_output, MXC__P_BOOL, "false",
               "Classes on axis 1, one label per (sample, position)."),
    MXC__PARAM(so_param, use_ignore, MXC__P_BOOL, "false",
               "Give rows labelled ignore_label a zero gradient."),
    MXC__PARAM(so_param, preserve_shape, MXC__P_BOOL, "false",
               "Classes on the last axis, one label per leading position."),
    MXC__PARAM_ENUM(so_param, normalization, "null", k_norms,
                    "Divide the gradient by 1 (null), the number of rows "
                    "(batch) or of labels not ignored (valid)."),
    MXC__PARAM_RANGE(so_param, smooth_alpha, MXC__P_FLOAT, "0", 0, 1,
                     "Label smoothing: the target class gets 1 - alpha, the "
                     "others alpha / (C - 1)."),
    MXC__PARAM(so_param, out_grad, MXC__P_BOOL, "false",
               "Multiply by the head gradient: not supported (false only)."),
};

static int so_check(const char *op_name, void *param) {
  const so_param *p = param;
  MXC_RETURN_ERROR_IF(p->out_grad, MXC_ERR_UNSUPPORTED,
                      "operator '%s': out_grad = true is not supported; the "
                      "gradient is the loss gradient itself",
                      op_name);
  return MXC_OK;
}

/* (rows, classes, inner) of data; the label of group (o, k) is element
 * o * inner + k. */
static mxc__nn_layout so_layout(const so_param *p, const mxc__shape *d) {
  if (p->multi_output) return mxc__nn_split(d, 1);
  if (p->preserve_shape) return mxc__nn_split(d, d->ndim - 1);
  mxc__nn_layout l = {d->dims[0], 1, 1};
  for (int i = 1; i < d->ndim; ++i) l.n *= d->dims[i];
  return l;
}

/* The label shapes multi_output accepts besides (N, d1, ...). */
static int multi_label_alt(const mxc__shape *d, const mxc__shape *label) {
  mxc__shape flat = {2, {d->dims[0], 1}}, ones = *d;
  for (int i = 2; i < d->ndim; ++i) flat.dims[1] *= d->dims[i];
  ones.dims[1] = 1;
  return mxc__shape_equal(label, &flat) || mxc__shape_equal(label, &ones);
}

static int so_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const so_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b[160], why[256];
  int min_ndim = p->preserve_shape ? 1 : 2;
  MXC_RETURN_ERROR_IF(in[0].ndim < min_ndim, MXC_ERR_SHAPE,
                      "operator '%s': data must have at least %d axes; got "
                      "shape %s",
                      op->name, min_ndim, mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape want = in[0];
  if (p->multi_output) { /* drop axis 1 */
    for (int i = 1; i + 1 < want.ndim; ++i) want.dims[i] = want.dims[i + 1];
    want.ndim--;
  } else if (p->preserve_shape) {
    want.ndim--;
  } else {
    want.ndim = 1;
  }
  out[0] = in[0];
  /* A label shaped like data holds probabilities (MXNet accepts it in
   * every mode). */
  if (mxc__shape_equal(&in[1], &in[0])) return MXC_OK;
  if (p->multi_output && in[1].ndim >= 0 && multi_label_alt(&in[0], &in[1])) {
    return MXC_OK;
  }
  snprintf(why, sizeof why, "one class index per %s of data %s",
           p->multi_output     ? "(sample, position) across axis 1"
           : p->preserve_shape ? "position before the last axis"
                               : "row",
           mxc__shape_str(&in[0], b, sizeof b));
  return mxc__nn_assign_shape(op->name, &in[1], &want, "input 1 ('label')",
                              why);
}

/* Leading inputs (all but the last, the label) and the outputs share a
 * float dtype; the label may be any numeric dtype (class indices). */
static int label_type(const mxc__op *op, const void *param, int *in, int n_in,
                      int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(
      mxc__infer_type_same(op, param, in, n_in - 1, out, n_out));
  if (in[n_in - 1] < 0) in[n_in - 1] = in[0];
  return mxc__nn_check_float(op->name, in[0], "the data");
}

static int so_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  mxc__nn_layout l = so_layout(param, &in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t base = o * l.n * l.inner + k;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < l.n; ++j) {
          if (x[base + j * l.inner] > mx) mx = x[base + j * l.inner];
        }
        for (int64_t j = 0; j < l.n; ++j)
          sum += exp(x[base + j * l.inner] - mx);
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          MXC__ASSIGN(req[0], y[i], (T)(exp(x[i] - mx) / sum));
        }
      }
    }
  });
  return MXC_OK;
}

/* Labels that count as ignore_label for 'valid': MXNet compares both as
 * ints (truncated), whether or not use_ignore is set. */
static int64_t so_valid_count(const so_param *p, const mxc__blob *label,
                              int64_t n) {
  int64_t valid = n;
  double ign = trunc(p->ignore_label);
  for (int64_t i = 0; i < n; ++i) {
    if (trunc(mxc__blob_get(label, i)) == ign) valid--;
  }
  return valid < 1 ? 1 : valid;
}

/* grad_scale / norm for the given labels, as MXNet 1.9: 'valid' divides
 * by the labels not ignored; otherwise multi_output also divides by the
 * spatial size (positions per sample), 'batch' by the rows as well. */
static double so_scale(const so_param *p, const mxc__blob *label,
                       mxc__nn_layout l, const mxc__shape *data) {
  if (p->normalization == NORM_VALID) {
    return p->grad_scale / (double)so_valid_count(p, label, l.outer * l.inner);
  }
  double norm = 1;
  if (p->normalization == NORM_BATCH) {
    norm = (double)(p->preserve_shape ? l.outer : data->dims[0]);
  }
  if (p->multi_output) norm *= (double)l.inner;
  return p->grad_scale / (norm < 1 ? 1 : norm);
}

/* A probability label (shaped like the output): ddata = (output - label)
 * * grad_scale, with neither normalization nor ignore_label, as MXNet. */
static void so_backward_prob(const so_param *p, const mxc__blob *in,
                             const mxc__blob *out, mxc__req req) {
  int64_t n = mxc__shape_size(&in[0].shape);
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *y = in[0].ptr;
    T *dx = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) {
      double v = ((double)y[i] - mxc__blob_get(&in[1], i)) * p->grad_scale;
      MXC__ASSIGN(req, dx[i], (T)v);
    }
  });
}

/* _backward_SoftmaxOutput: (output, label) -> ddata. */
static int so_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const so_param *p = param;
  if (req[0] != MXC__REQ_NULL &&
      mxc__shape_equal(&in[1].shape, &in[0].shape)) {
    so_backward_prob(p, in, out, req[0]);
    return MXC_OK;
  }
  mxc__nn_layout l = so_layout(p, &in[0].shape);
  double scale = so_scale(p, &in[1], l, &in[0].shape);
  double a = p->smooth_alpha, off = l.n > 1 ? a / (double)(l.n - 1) : 0;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *y = in[0].ptr;
    T *dx = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t li = o * l.inner + k, base = o * l.n * l.inner + k;
        int ignored =
            p->use_ignore && mxc__blob_get(&in[1], li) == p->ignore_label;
        int64_t cls = mxc__nn_class_of(&in[1], li, l.n);
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          double t = cls < 0 ? 0 : (j == cls ? 1 - a : off);
          double v = ignored ? 0 : ((double)y[i] - t) * scale;
          MXC__ASSIGN(req[0], dx[i], (T)v);
        }
      }
    }
  });
  return MXC_OK;
}

/* The backward node reads the forward output and the label, not ograd. */
static int so_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                       mxc__entry *igrad) {
  mxc__entry ins[2] = {{(mxc__node *)fwd, 0}, fwd->inputs[1]};
  static const int grad_of[2] = {0, -1};
  return mxc__grad_node_pick(fwd, "_backward_SoftmaxOutput", ins, 2, grad_of,
                           igrad);
}

/* ---- softmax_cross_entropy ---- */

static int ce_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  char b[160], why[200];
  MXC_RETURN_ERROR_IF(in[0].ndim != 2, MXC_ERR_SHAPE,
                      "operator '%s': data must be 2-D (batch, classes); "
                      "got shape %s",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape want = mxc__nn_shape1(in[0].dims[0]);
  snprintf(why, sizeof why, "one class index per row of data %s",
           mxc__shape_str(&in[0], b, sizeof b));
  out[0] = mxc__nn_shape1(1);
  return mxc__nn_assign_shape(op->name, &in[1], &want, "input 1 ('label')",
                              why);
}

static int ce_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  int64_t rows = in[0].shape.dims[0], c = in[0].shape.dims[1];
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    double loss = 0;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t cls = mxc__nn_class_of(&in[1], r, c);
      if (cls < 0) continue;
      const T *xr = x + r * c;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < c; ++j) mx = xr[j] > mx ? xr[j] : mx;
      for (int64_t j = 0; j < c; ++j) sum += exp(xr[j] - mx);
      loss += mx + log(sum) - xr[cls];
    }
    MXC__ASSIGN(req[0], ((T *)out[0].ptr)[0], (T)loss);
  });
  return MXC_OK;
}

/* _backward_softmax_cross_entropy: (ograd, data, label) -> ddata. */
static int ce_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  int64_t rows = in[1].shape.dims[0], c = in[1].shape.dims[1];
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[1].dtype, {
    double g = ((const T *)in[0].ptr)[0];
    const T *x = in[1].ptr;
    T *dx = out[0].ptr;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t cls = mxc__nn_class_of(&in[2], r, c);
      const T *xr = x + r * c;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < c; ++j) mx = xr[j] > mx ? xr[j] : mx;
      for (int64_t j = 0; j < c; ++j) sum += exp(xr[j] - mx);
      for (int64_t j = 0; j < c; ++j) {
        double v = cls < 0 ? 0 : g * (exp(xr[j] - mx) / sum - (j == cls));
        MXC__ASSIGN(req[0], dx[r * c + j], (T)v);
      }
    }
  });
  return MXC_OK;
}

static int ce_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  out[0] = in[1];
  return MXC_OK;
}

static int ce_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                       mxc__entry *igrad) {
  mxc__entry ins[3] = {ograd[0], fwd->inputs[0], fwd->inputs[1]};
  static const int grad_of[2] = {0, -1};
  return mxc__grad_node_pick(fwd, "_backward_softmax_cross_entropy", ins, 3,
                           grad_of, igrad);
}

/* ---- descriptors ---- */

static const char *const k_in[] = {"data", "label", NULL};
static const char *const k_so_bwd_in[] = {"output", "label", NULL};
static const char *const k_ce_bwd_in[] = {"ograd", "data", "label", NULL};
static const char *const k_so_aliases[] = {"Softmax", NULL};

#define SO_PARAMS \
  MXC__PARAMS_OF(so_param, k_so_params), .param_check = so_check

static const mxc__op k_ops[] = {
    {
        .name = "SoftmaxOutput",
        .aliases = k_so_aliases,
        .doc = "Softmax over the class axis; its gradient is the "
               "cross-entropy loss gradient (softmax - onehot(label)) * "
               "grad_scale / norm, whatever the head gradient.",
        SO_PARAMS,
        .n_inputs = 2,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = so_shape,
        .infer_type = label_type,
        .compute = so_forward,
        .gradient = so_gradient,
        .backward_uses_inputs = 1u << 1,
        .backward_uses_outputs = 1u,
    },
    {
        .name = "_backward_SoftmaxOutput",
        .doc = "Loss gradient of SoftmaxOutput: (output, label) -> ddata.",
        SO_PARAMS,
        .n_inputs = 2,
        .input_names = k_so_bwd_in,
        .n_outputs = 1,
        .infer_shape = so_shape,
        .infer_type = label_type,
        .compute = so_backward,
        .hidden = 1,
    },
    {
        .name = "softmax_cross_entropy",
        .doc = "Sum over rows of -log softmax(data)[label] for data (N, C) "
               "and label (N); output shape (1).",
        .n_inputs = 2,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = ce_shape,
        .infer_type = label_type,
        .compute = ce_forward,
        .gradient = ce_gradient,
        .backward_uses_inputs = 3u,
    },
    {
        .name = "_backward_softmax_cross_entropy",
        .doc = "Gradient of softmax_cross_entropy: (ograd, data, label) -> "
               "ddata.",
        .n_inputs = 3,
        .input_names = k_ce_bwd_in,
        .n_outputs = 1,
        .infer_shape = ce_bwd_shape,
        .infer_type = label_type,
        .compute = ce_backward,
        .hidden = 1,
    },
};

int mxc__nn_register_softmax_loss(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
