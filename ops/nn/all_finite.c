/* all_finite and multi_all_finite (mixed-precision training checks): a
 * float32 array of shape (1) set to 0 when any element of the input(s) is
 * infinite or NaN. With init_output (the default) it is first set to 1;
 * without, it keeps its value when everything is finite, so one output
 * can gather the verdict of several calls (as in MXNet, pass it as the
 * output array each time). Not differentiable. */
#include <math.h>

#include "ops/nn/all_finite_params.h"
#include "ops/nn/nn.h"

typedef mxc__af_param af_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(af_param, init_output, MXC__P_BOOL, "true",
               "Set the output to 1 before checking."),
};

static const mxc__param_def k_multi_params[] = {
    MXC__PARAM_RANGE(af_param, num_arrays, MXC__P_INT, "1", 1, 1e6,
                     "Number of input arrays."),
    MXC__PARAM(af_param, init_output, MXC__P_BOOL, "true",
               "Set the output to 1 before checking."),
};

static int af_num_inputs(const void *param) {
  return (int)((const af_param *)param)->num_arrays;
}

static int af_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  out[0] = mxc__nn_shape1(1);
  return MXC_OK;
}

/* Inputs of any dtype; a float32 output. */
static int af_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  if (out[0] >= 0 && out[0] != MXC_DTYPE_FLOAT32) {
    return mxc__unsupported_dtype(op->name, out[0], "the output is float32");
  }
  out[0] = MXC_DTYPE_FLOAT32;
  return MXC_OK;
}

static int all_finite_blob(const mxc__blob *b) {
  if (!mxc__dtype_is_float(b->dtype)) return 1; /* integers always are */
  int64_t n = mxc__shape_size(&b->shape);
  for (int64_t i = 0; i < n; ++i) {
    if (!isfinite(mxc__blob_get(b, i))) return 0;
  }
  return 1;
}

static int af_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const af_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  float *flag = out[0].ptr;
  if (p->init_output) *flag = 1;
  for (int i = 0; i < n_in; ++i) {
    if (!all_finite_blob(&in[i])) {
      *flag = 0;
      break;
    }
  }
  return MXC_OK;
}

static const char *const k_in[] = {"data", NULL};

static const mxc__op k_ops[2] = {
    {
        .name = "all_finite",
        .doc = "1 (float32, shape (1)) when every element of data is finite, "
               "else 0.",
        MXC__PARAMS_OF(af_param, k_params),
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = af_shape,
        .infer_type = af_type,
        .compute = af_forward,
        .gradient = mxc__grad_none,
    },
    {
        .name = "multi_all_finite",
        .doc = "1 (float32, shape (1)) when every element of all num_arrays "
               "inputs is finite, else 0.",
        MXC__PARAMS_OF(af_param, k_multi_params),
        .num_inputs = af_num_inputs,
        .n_outputs = 1,
        .infer_shape = af_shape,
        .infer_type = af_type,
        .compute = af_forward,
        .gradient = mxc__grad_none,
    },
};

int mxc__nn_register_all_finite(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
