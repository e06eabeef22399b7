/* _FusedConvolution and _FusedFullyConnected (see linalg.h): reference
 * kernels for what the inference passes of core/exec fuse.
 *
 * Each runs the existing Convolution / FullyConnected kernel, then the
 * rest in place on the output: with a sum input, the output is first
 * filled with sum and the convolution accumulates onto it (the kernels
 * honour MXC__REQ_ADD), so the sum costs one copy and no extra pass; the
 * activation is one more pass over the output. The results therefore
 * equal the unfused chain's up to the order of one float addition
 * (bias + sum against sum + bias). A MXC__REQ_ADD call on the fused
 * operator itself (never made by executors, possible through invoke)
 * computes into a buffer of its own and adds that.
 *
 * Forward only and float32/float64 only: the passes fuse nothing else. */
#include <math.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"

const char *const mxc__fused_act_types[] = {"none", "relu", "sigmoid",
                                            "tanh", "softrelu", NULL};

/* ---- activation in place ---- */

static double act_value(int act, double x) {
  switch (act) {
    case MXC__FUSED_ACT_RELU:
      return x > 0 ? x : 0;
    case MXC__FUSED_ACT_SIGMOID:
      return 1 / (1 + exp(-x));
    case MXC__FUSED_ACT_TANH:
      return tanh(x);
    case MXC__FUSED_ACT_SOFTRELU: /* log(1 + e^x) without overflow */
      return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    default:
      return x;
  }
}

static void act_inplace(int act, const mxc__blob *b) {
  int64_t n = mxc__shape_size(&b->shape);
  if (act == MXC__FUSED_ACT_NONE) return;
  MXC__FLOAT_TYPED(b->dtype, {
    T *y = b->ptr;
    if (act == MXC__FUSED_ACT_RELU) { /* the common case: no libm call */
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0 ? y[i] : (T)0;
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = (T)act_value(act, (double)y[i]);
    }
  });
}

/* out += tmp, elementwise. */
static void add_into(const mxc__blob *out, const void *tmp) {
  int64_t n = mxc__shape_size(&out->shape);
  MXC__FLOAT_TYPED(out->dtype, {
    T *y = out->ptr;
    const T *t = tmp;
    for (int64_t i = 0; i < n; ++i) y[i] += t[i];
  });
}

/* The fused computation into `out` (WRITE semantics); run(...) is the
 * unfused kernel called with req ADD when the output holds sum first. */
typedef int (*linear_fn)(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, const mxc__req *req);

static int fused_write(linear_fn run, const mxc__op *op,
                       const mxc__opctx *ctx, const void *param, int act,
                       const mxc__blob *in, int n_lin, const mxc__blob *sum,
                       const mxc__blob *out) {
  mxc__req r = MXC__REQ_WRITE;
  if (sum) {
    if (sum->ptr != out->ptr) {
      memmove(out->ptr, sum->ptr,
              (size_t)mxc__shape_size(&out->shape) *
                  mxc__dtype_size(out->dtype));
    }
    r = MXC__REQ_ADD;
  }
  MXC_FORWARD_IF_ERROR(run(op, ctx, param, in, n_lin, out, &r));
  act_inplace(act, out);
  return MXC_OK;
}

/* Any write mode: ADD goes through a buffer of its own. */
static int fused_any(linear_fn run, const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, int act, const mxc__blob *in,
                     int n_lin, const mxc__blob *sum, const mxc__blob *out,
                     mxc__req req) {
  if (req == MXC__REQ_NULL) return MXC_OK;
  if (req != MXC__REQ_ADD) {
    return fused_write(run, op, ctx, param, act, in, n_lin, sum, out);
  }
  size_t nbytes =
      (size_t)mxc__shape_size(&out->shape) * mxc__dtype_size(out->dtype);
  mxc__blob tmp = *out;
  tmp.ptr = mxc__malloc(nbytes ? nbytes : 1);
  MXC_RETURN_ERROR_IF(!tmp.ptr, MXC_ERR_OOM,
                      "operator '%s': out of memory for a %zu-byte result",
                      op->name, nbytes);
  int rc = fused_write(run, op, ctx, param, act, in, n_lin, sum, &tmp);
  if (rc == MXC_OK) add_into(out, tmp.ptr);
  mxc__free(tmp.ptr);
  return rc;
}

/* The sum input must have the output's shape. */
static int assign_sum(const mxc__op *op, const void *param, mxc__shape *sum,
                      const mxc__shape *out) {
  if (out->ndim < 0) return MXC_OK;
  return mxc__linalg_assign_shape(op, param, sum, out, "input 'sum'");
}

/* ---- _FusedConvolution ---- */

static int fconv_n_linear(const mxc__fused_conv_param *p) {
  return mxc__conv_num_inputs(&p->conv);
}

static int fconv_num_inputs(const void *param) {
  const mxc__fused_conv_param *p = param;
  return fconv_n_linear(p) + (p->with_sum ? 1 : 0);
}

static const char *fconv_input_name(const void *param, int i) {
  const mxc__fused_conv_param *p = param;
  if (i >= 0 && i < fconv_n_linear(p)) {
    return mxc__conv_input_name(&p->conv, i);
  }
  return p->with_sum && i == fconv_n_linear(p) ? "sum" : "?";
}

static const char *const k_fconv_names[] = {"data", "weight", "bias", "sum",
                                            NULL};

/* The output may take over the sum's memory: the kernels add the
 * convolution into what the output holds (oneDNN's sum post-op, or the
 * reference's ADD), and the sum is read nowhere else in this node. This
 * saves copying the residual branch into the output at every call. */
static int fconv_inplace_input(const void *param, int out) {
  const mxc__fused_conv_param *p = param;
  return p->with_sum && out == 0 ? fconv_n_linear(p) : -1;
}

static int fconv_check(const char *op_name, void *param) {
  mxc__fused_conv_param *p = param;
  return mxc__conv_param_check(op_name, &p->conv, 0);
}

static int fconv_infer_shape(const mxc__op *op, const void *param,
                             mxc__shape *in, int n_in, mxc__shape *out,
                             int n_out) {
  (void)n_in, (void)n_out;
  const mxc__fused_conv_param *p = param;
  int n_lin = fconv_n_linear(p);
  MXC_FORWARD_IF_ERROR(mxc__conv_infer_shape(op, &p->conv, in, n_lin, out));
  return p->with_sum ? assign_sum(op, param, &in[n_lin], &out[0]) : MXC_OK;
}

static int conv_run(const mxc__op *op, const mxc__opctx *ctx,
                    const void *param, const mxc__blob *in, int n_in,
                    const mxc__blob *out, const mxc__req *req) {
  return mxc__conv_forward(op, ctx, param, in, n_in, out, req);
}

static int fconv_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_in, (void)n_out;
  const mxc__fused_conv_param *p = param;
  int n_lin = fconv_n_linear(p);
  return fused_any(conv_run, op, ctx, &p->conv, p->act_type, in, n_lin,
                   p->with_sum ? &in[n_lin] : NULL, &out[0], req[0]);
}

static const mxc__param_def k_fconv_params[] = {
    MXC__CONV_PARAM_DEFS("false"),
    MXC__PARAM_ENUM(mxc__fused_conv_param, act_type, "none",
                    mxc__fused_act_types,
                    "Activation applied to the result: none, relu, sigmoid, "
                    "tanh or softrelu."),
    MXC__PARAM(mxc__fused_conv_param, with_sum, MXC__P_BOOL, "false",
               "Take one more input, sum (shaped like the output), added "
               "before the activation."),
};

static const mxc__op k_fused_conv = {
    .name = "_FusedConvolution",
    .doc = "Internal (inference passes): act(Convolution(data, weight, "
           "bias) + sum).",
    MXC__PARAMS_OF(mxc__fused_conv_param, k_fconv_params),
    .param_check = fconv_check,
    .num_inputs = fconv_num_inputs,
    .input_names = k_fconv_names,
    .input_name = fconv_input_name,
    .n_outputs = 1,
    .infer_shape = fconv_infer_shape,
    .infer_type = mxc__linalg_infer_type_float,
    .inplace_input = fconv_inplace_input,
    .compute = fconv_forward,
    .resources = MXC__RES_TEMP,
    .hidden = 1,
};

/* ---- _FusedFullyConnected ---- */

static int ffc_num_inputs(const void *param) {
  return ((const mxc__fused_fc_param *)param)->fc.no_bias ? 2 : 3;
}

static const char *const k_ffc_names[] = {"data", "weight", "bias", NULL};

static const char *ffc_input_name(const void *param, int i) {
  (void)param;
  return i >= 0 && i < 3 ? k_ffc_names[i] : "?";
}

static int ffc_infer_shape(const mxc__op *op, const void *param,
                           mxc__shape *in, int n_in, mxc__shape *out,
                           int n_out) {
  (void)n_out;
  const mxc__fused_fc_param *p = param;
  return mxc__fc_infer_shape(op, &p->fc, in, n_in, out);
}

static int fc_run(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                  const mxc__blob *in, int n_in, const mxc__blob *out,
                  const mxc__req *req) {
  return mxc__fc_forward(op, ctx, param, in, n_in, out, req);
}

static int ffc_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_out;
  const mxc__fused_fc_param *p = param;
  return fused_any(fc_run, op, ctx, &p->fc, p->act_type, in, n_in, NULL,
                   &out[0], req[0]);
}

static const mxc__param_def k_ffc_params[] = {
    MXC__FC_PARAM_DEFS,
    MXC__PARAM_ENUM(mxc__fused_fc_param, act_type, "none",
                    mxc__fused_act_types,
                    "Activation applied to the result: none, relu, sigmoid, "
                    "tanh or softrelu."),
};

static const mxc__op k_fused_fc = {
    .name = "_FusedFullyConnected",
    .doc = "Internal (inference passes): act(FullyConnected(data, weight, "
           "bias)).",
    MXC__PARAMS_OF(mxc__fused_fc_param, k_ffc_params),
    .num_inputs = ffc_num_inputs,
    .input_names = k_ffc_names,
    .input_name = ffc_input_name,
    .n_outputs = 1,
    .infer_shape = ffc_infer_shape,
    .infer_type = mxc__linalg_infer_type_float,
    .compute = ffc_forward,
    .hidden = 1,
};

int mxc__linalg_register_fused(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fused_conv));
  return mxc__registry_add(r, &k_fused_fc);
}
