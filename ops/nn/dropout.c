/* Dropout: in training mode (or always, with mode=always) zeroes each
 * element with probability p and scales the kept ones by 1 / (1 - p), so
 * the expected output equals the input; otherwise the identity.
 *
 * The hidden second output is the mask actually applied, already scaled:
 * 0 or 1 / (1 - p) where dropout ran, 1 where it did not. The gradient is
 * then ograd * mask whichever mode the backward pass runs in.
 *
 * Random numbers: element i takes value i of the slice reserved at push
 * time (MXC__RES_RANDOM), a float64 uniform for both dtypes, so masks
 * depend only on the seed and the order of calls, never on threads, and
 * float32 and float64 data get the same mask. With `axes`, one draw is
 * shared along those axes (variational dropout): the element uses the
 * value of its position with those coordinates set to 0. */
#include "ops/nn/dropout_params.h"
#include "ops/nn/nn.h"

enum { DROP_TRAINING = MXC__DROP_TRAINING, DROP_ALWAYS = MXC__DROP_ALWAYS };
static const char *const k_modes[] = {"training", "always", NULL};

typedef mxc__drop_param drop_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(drop_param, p, MXC__P_FLOAT, "0.5",
               "Probability of dropping an element, 0 <= p < 1."),
    MXC__PARAM_ENUM(drop_param, mode, "training", k_modes,
                    "training: active only in training mode; always: "
                    "active in inference too."),
    MXC__PARAM(drop_param, axes, MXC__P_TUPLE, "()",
               "Axes along which one mask value is shared."),
    MXC__PARAM(drop_param, cudnn_off, MXC__P_BOOL, "false",
               "Accepted for compatibility; ignored."),
};

static int drop_check(const char *op_name, void *param) {
  const drop_param *dp = param;
  MXC_RETURN_ERROR_IF(!(dp->p >= 0 && dp->p < 1), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'p' = %g is out of range; "
                      "expected 0 <= p < 1",
                      op_name, dp->p);
  return MXC_OK;
}

/* Bit d set: the mask is shared along axis d. Axes were validated by
 * drop_shape. */
static unsigned shared_axes(const drop_param *dp, int ndim) {
  unsigned bits = 0;
  for (int i = 0; dp->axes.ndim > 0 && i < dp->axes.ndim; ++i) {
    int64_t a = dp->axes.d[i] < 0 ? dp->axes.d[i] + ndim : dp->axes.d[i];
    bits |= 1u << a;
  }
  return bits;
}

static int drop_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  const drop_param *dp = param;
  if (in[0].ndim < 0) return MXC_OK;
  for (int i = 0; i < dp->axes.ndim; ++i) {
    int a = 0;
    MXC_FORWARD_IF_ERROR(
        mxc__nn_axis(op->name, "axes", dp->axes.d[i], &in[0], &a));
  }
  for (int i = 0; i < n_out; ++i) out[i] = in[0];
  return MXC_OK;
}

/* Index of the random value element i uses (dropout_params.h). */
static int64_t value_index(int64_t i, const mxc__shape *s, unsigned bits) {
  return mxc__drop_value_index(i, s->ndim, s->dims, bits);
}

#define CHUNK 256

static int drop_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const drop_param *dp = param;
  const mxc__shape *s = &in[0].shape;
  int64_t n = mxc__shape_size(s);
  int active = (dp->mode == DROP_ALWAYS || ctx->is_train) && dp->p > 0;
  unsigned bits = shared_axes(dp, s->ndim);
  double keep = 1 / (1 - dp->p);
  mxc__req req_mask = n_out > 1 ? req[1] : MXC__REQ_NULL;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    T *mask = n_out > 1 ? out[1].ptr : NULL;
    double u[CHUNK] = {0}; /* read only where drawn */
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
      int64_t cnt = n - i0 < CHUNK ? n - i0 : CHUNK;
      if (active && !bits) {
        mxc__rng_uniform_f64(&ctx->rng, i0, cnt, 0, 1, u);
      } else if (active) {
        for (int64_t t = 0; t < cnt; ++t) {
          mxc__rng_uniform_f64(&ctx->rng, value_index(i0 + t, s, bits), 1, 0, 1,
                               &u[t]);
        }
      }
      for (int64_t t = 0; t < cnt; ++t) {
        int64_t i = i0 + t;
        T mk = (T)(!active ? 1 : (u[t] >= dp->p ? keep : 0));
        if (req[0] != MXC__REQ_NULL) MXC__ASSIGN(req[0], y[i], x[i] * mk);
        if (req_mask != MXC__REQ_NULL) MXC__ASSIGN(req_mask, mask[i], mk);
      }
    }
  });
  return MXC_OK;
}

/* _backward_Dropout: (ograd, mask) -> ograd * mask. */
static int drop_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  int64_t n = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *g = in[0].ptr;
    const T *mask = in[1].ptr;
    T *dx = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req[0], dx[i], g[i] * mask[i]);
  });
  return MXC_OK;
}

static int drop_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                         mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], {(mxc__node *)fwd, 1}};
  static const int grad_of[1] = {0};
  return mxc__grad_node_pick(fwd, "_backward_Dropout", ins, 2, grad_of, igrad);
}

static const char *const k_in[] = {"data", NULL};
static const char *const k_out[] = {"output", "mask", NULL};
static const char *const k_bwd_in[] = {"ograd", "mask", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "Dropout",
        .doc = "Zeroes elements with probability p and scales the rest by "
               "1/(1-p) in training mode (or always); identity otherwise. "
               "Output has the data's shape.",
        MXC__PARAMS_OF(drop_param, k_params),
        .param_check = drop_check,
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 2,
        .n_visible_outputs = 1,
        .output_names = k_out,
        .infer_shape = drop_shape,
        .infer_type = mxc__nn_type_float,
        .compute = drop_forward,
        .gradient = drop_gradient,
        .backward_uses_outputs = 1u << 1,
        .resources = MXC__RES_RANDOM,
    },
    {
        .name = "_backward_Dropout",
        .doc = "Gradient of Dropout: (ograd, mask) -> ograd * mask.",
        MXC__PARAMS_OF(drop_param, k_params),
        .param_check = drop_check,
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = mxc__nn_type_float,
        .compute = drop_backward,
        .hidden = 1,
    },
};

int mxc__nn_register_dropout(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
