// Every operator the operator issue names is registered (by its name or an
// alias), documented, and differentiable where it should be. Links the
// complete library (all families).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

const char *const kRequired[] = {
    // unary
    "abs", "sign", "negative", "relu", "sigmoid", "tanh", "softsign",
    "softrelu", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
    "rsqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
    "degrees", "radians", "floor", "ceil", "round", "rint", "trunc", "fix",
    "erf", "erfinv", "gamma", "gammaln", "logical_not", "clip", "identity",
    "_copy", "BlockGrad", "stop_gradient",
    // binary, scalar and broadcast forms
    "add", "sub", "mul", "div", "mod", "power", "maximum", "minimum",
    "hypot", "equal", "not_equal", "greater", "greater_equal", "lesser",
    "lesser_equal", "logical_and", "logical_or", "logical_xor", "add_n",
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
    "_div_scalar", "_rdiv_scalar", "_mod_scalar", "_rmod_scalar",
    "_power_scalar", "_rpower_scalar", "_maximum_scalar", "_minimum_scalar",
    "_hypot_scalar", "_equal_scalar", "_greater_scalar", "_lesser_scalar",
    "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
    "broadcast_mod", "broadcast_power", "broadcast_maximum",
    "broadcast_minimum", "broadcast_hypot", "broadcast_equal",
    "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
    "broadcast_logical_or", "broadcast_logical_xor",
    // reductions
    "sum", "mean", "prod", "max", "min", "norm", "argmax", "argmin",
    "nansum", "nanprod", "softmax", "log_softmax",
    // shape and indexing
    "reshape", "Reshape", "flatten", "Flatten", "expand_dims", "squeeze",
    "transpose", "swapaxes", "concat", "Concat", "stack", "split",
    "SliceChannel", "slice", "slice_axis", "slice_like", "take", "pick",
    "one_hot", "gather_nd", "scatter_nd", "where", "tile", "repeat", "flip",
    "pad", "broadcast_to", "broadcast_like", "Cast", "zeros", "ones", "full",
    "arange", "eye", "zeros_like", "ones_like", "sort", "argsort", "topk",
    // linear algebra
    "dot", "batch_dot", "FullyConnected",
    // neural network
    "Convolution", "Deconvolution", "Pooling", "Activation", "LeakyReLU",
    "BatchNorm", "LayerNorm", "Dropout", "SoftmaxOutput",
    "softmax_cross_entropy", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "Embedding",
    "UpSampling", "L2Normalization",
    // random
    "uniform", "normal", "random_gamma", "random_exponential",
    "random_poisson", "randint", "sample_multinomial", "shuffle",
    // optimizers
    "sgd_update", "sgd_mom_update", "nag_mom_update", "adam_update",
    "rmsprop_update", "rmspropalex_update", "adagrad_update", "ftrl_update",
    "signsgd_update", "signum_update",
};

TEST(Catalog, EveryRequiredOperatorIsRegisteredAndDocumented) {
  for (const char *name : kRequired) {
    mxc_op op = nullptr;
    ASSERT_EQ(mxc_op_find(name, &op), MXC_OK) << name << ": "
                                              << mxc_last_error();
    const char *doc = nullptr;
    ASSERT_EQ(mxc_op_doc(op, &doc), MXC_OK);
    EXPECT_GT(strlen(doc), 5u) << name << " has no documentation";
  }
}

TEST(Catalog, EveryParameterIsDescribed) {
  int n = 0;
  ASSERT_EQ(mxc_op_count(&n), MXC_OK);
  EXPECT_GT(n, 180);
  for (int i = 0; i < n; ++i) {
    mxc_op op;
    ASSERT_EQ(mxc_op_at(i, &op), MXC_OK);
    const char *name;
    mxc_op_name(op, &name);
    int np = -1;
    ASSERT_EQ(mxc_op_num_params(op, &np), MXC_OK);
    for (int j = 0; j < np; ++j) {
      const char *pname, *type, *dflt, *doc;
      ASSERT_EQ(mxc_op_param(op, j, &pname, &type, &dflt, &doc), MXC_OK)
          << name << " param " << j << ": " << mxc_last_error();
      EXPECT_TRUE(pname && *pname) << name;
      EXPECT_TRUE(type && *type) << name << "." << pname;
      EXPECT_TRUE(doc != nullptr) << name << "." << pname;
    }
    int nin = -1, variadic = -1;
    ASSERT_EQ(mxc_op_inputs(op, &nin, &variadic), MXC_OK) << name;
    for (int j = 0; j < nin; ++j) {
      const char *in;
      ASSERT_EQ(mxc_op_input_name(op, j, &in), MXC_OK) << name;
      EXPECT_TRUE(in && *in) << name;
    }
  }
}

}  // namespace
