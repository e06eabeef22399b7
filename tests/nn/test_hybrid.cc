// Hybridized user blocks: a user block's forward function (children and
// operators called through the C API) traced into a graph and run through
// the executor, checked against the same block run imperatively:
//  - outputs, for the traced batch size and a new one (a new trace), and
//    inside a sequential container;
//  - gradients: the exported graph bound with gradient arrays, against
//    autograd's gradients of the imperative pass with the same head
//    gradients;
//  - export -> predictor round trip;
//  - what cannot be traced is refused with a message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/nn/nn_test_util.h"

namespace {


std::string tmp_path(const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

mxc_ndarray make(const std::vector<int64_t> &shape, const std::vector<float> &v) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), MXC_DTYPE_FLOAT32,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK);
  return a;
}

std::vector<float> ramp(size_t n, float shift) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(1.3f * (float)i + shift);
  return v;
}

std::vector<double> host(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<float> f((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, f.data(), f.size() * 4), MXC_OK)
      << mxc_last_error();
  return std::vector<double>(f.begin(), f.end());
}

void expect_near(const std::vector<double> &a, const std::vector<double> &b,
                 double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], tol * (1 + std::fabs(b[i]))) << "at " << i;
  }
}

mxc_block layer(const char *kind, const char *name, std::vector<const char *> kv) {
  return nn_test::block(kind, std::move(kv), name);
}

mxc_ndarray forward(mxc_block b, mxc_ndarray x) {
  mxc_ndarray y = nullptr;
  EXPECT_EQ(mxc_block_forward(b, 1, &x, &y), MXC_OK) << mxc_last_error();
  return y;
}

// ---- the user block's forward function, in plain C API calls ----

int call(const char *op, std::vector<mxc_ndarray> in, mxc_ndarray *out,
         const char *key = nullptr, const char *val = nullptr) {
  mxc_op o = nullptr;
  int rc = mxc_op_find(op, &o);
  *out = nullptr;
  if (rc != MXC_OK) return rc;
  return mxc_op_invoke(o, &key, &val, key ? 1 : 0, in.data(), (int)in.size(),
                       out, 1, nullptr);
}

int child(mxc_block self, int i, mxc_ndarray x, mxc_ndarray *y) {
  mxc_block c = nullptr;
  int rc = mxc_block_child(self, i, &c);
  *y = nullptr;
  if (rc == MXC_OK) rc = mxc_block_forward(c, 1, &x, y);
  mxc_block_free(c);
  return rc;
}

// children 0..2 (dense+relu, batchnorm, dense), then a * sigmoid(2 a):
// the children's graphs, a scalar operator with a parameter string and an
// array used twice.
int swish_forward(void *, mxc_block self, int n_in, const mxc_ndarray *in,
                  mxc_ndarray *out) {
  if (n_in != 1) return MXC_ERR_INVALID_ARGUMENT;
  mxc_ndarray h1 = nullptr, h2 = nullptr, a = nullptr, a2 = nullptr, s = nullptr;
  int rc = child(self, 0, in[0], &h1);
  if (rc == MXC_OK) rc = child(self, 1, h1, &h2);
  if (rc == MXC_OK) rc = child(self, 2, h2, &a);
  if (rc == MXC_OK) rc = call("_mul_scalar", {a}, &a2, "scalar", "2");
  if (rc == MXC_OK) rc = call("sigmoid", {a2}, &s);
  if (rc == MXC_OK) rc = call("elemwise_mul", {a, s}, out);
  for (mxc_ndarray e : {h1, h2, a, a2, s}) mxc_ndarray_free(e);
  return rc;
}

mxc_block swish_block(const char *name) {
  mxc_block u = nullptr;
  EXPECT_EQ(mxc_block_create_user(name, swish_forward, nullptr, nullptr, &u),
            MXC_OK);
  for (mxc_block c : {layer("dense", "fc1", {"units", "6", "activation", "relu"}),
                      layer("batchnorm", "bn", {}),
                      layer("dense", "fc2", {"units", "3"})}) {
    EXPECT_EQ(mxc_block_add(u, c), MXC_OK);
    mxc_block_free(c);
  }
  const char *k[] = {"magnitude"}, *v[] = {"2"};
  EXPECT_EQ(mxc_block_initialize(u, "xavier", k, v, 1, 0), MXC_OK);
  return u;
}

// A forward function adding an array it makes itself (from host memory,
// outside any recorded call): not traceable.
int with_constant(void *, mxc_block, int, const mxc_ndarray *in, mxc_ndarray *out) {
  int nd = 0;
  const int64_t *d = nullptr;
  mxc_ndarray c = nullptr;
  int rc = mxc_ndarray_shape(in[0], &nd, &d);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(d, nd, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &c);
  }
  int64_t n = 0;
  if (rc == MXC_OK) rc = mxc_ndarray_size(c, &n);
  std::vector<float> ones((size_t)n, 1.0f);
  if (rc == MXC_OK) rc = mxc_ndarray_copy_from_host(c, ones.data(), ones.size() * 4);
  if (rc == MXC_OK) rc = call("elemwise_add", {in[0], c}, out);
  mxc_ndarray_free(c);
  return rc;
}

TEST(HybridUser, OutputsEqualTheImperativeOnes) {
  mxc_block u = swish_block("swish");
  mxc_ndarray x = make({4, 5}, ramp(20, 0.1f)), x7 = make({7, 5}, ramp(35, 0.7f));
  mxc_ndarray y0 = forward(u, x), y7 = forward(u, x7);  // imperative
  OK(mxc_block_hybridize(u, 1));
  mxc_ndarray h0 = forward(u, x), h1 = forward(u, x), h7 = forward(u, x7);
  expect_near(host(h0), host(y0), 1e-5);
  expect_near(host(h1), host(y0), 1e-5);  // the same binding again
  expect_near(host(h7), host(y7), 1e-5);  // a new batch size: a new trace
  // Inside a container, after a built-in layer.
  mxc_block net = layer("sequential", "net", {});
  mxc_block pre = layer("dense", "pre", {"units", "5", "activation", "tanh"});
  OK(mxc_block_add(net, pre));
  OK(mxc_block_add(net, u));
  OK(mxc_block_initialize(pre, "uniform", nullptr, nullptr, 0, 0));
  mxc_ndarray n0 = forward(net, x);  // makes pre's parameters
  OK(mxc_block_hybridize(net, 1));
  mxc_ndarray n1 = forward(net, x);
  expect_near(host(n1), host(n0), 1e-5);
  for (mxc_ndarray e : {x, x7, y0, y7, h0, h1, h7, n0, n1}) mxc_ndarray_free(e);
  for (mxc_block b : {u, net, pre}) mxc_block_free(b);
}

TEST(HybridUser, WhatCannotBeTracedIsRefused) {
  mxc_block c = nullptr;
  OK(mxc_block_create_user("konst", with_constant, nullptr, nullptr, &c));
  mxc_ndarray x = make({2, 3}, ramp(6, 0)), y = nullptr;
  mxc_ndarray y0 = forward(c, x);  // imperatively it runs
  OK(mxc_block_hybridize(c, 1));
  EXPECT_EQ(mxc_block_forward(c, 1, &x, &y), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(mxc_last_error()).find("neither its input nor a parameter"),
            std::string::npos)
      << mxc_last_error();
  EXPECT_EQ(y, nullptr);
  // Losses take two inputs; a user block has no graph before its first
  // hybridized forward pass.
  mxc_block loss = layer("l2_loss", nullptr, {});
  EXPECT_EQ(mxc_block_hybridize(loss, 1), MXC_ERR_UNSUPPORTED);
  mxc_block u = swish_block(nullptr);
  EXPECT_EQ(mxc_block_export(u, tmp_path("never").c_str(), 0), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(mxc_last_error()).find("forward pass first"), std::string::npos);
  mxc_ndarray_free(x);
  mxc_ndarray_free(y0);
  for (mxc_block b : {c, loss, u}) mxc_block_free(b);
}

// The exported graph's arrays, in argument order: data, then parameters
// from the checkpoint; gradient buffers for the parameters.
struct Bound {
  std::vector<mxc_ndarray> args, grads, aux;
  std::vector<int> reqs;
  std::vector<std::string> names;
};

mxc_ndarray by_name(mxc_ndarray_list l, const std::string &name) {
  int n = 0;
  EXPECT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
  for (int i = 0; i < n; ++i) {
    const char *s = nullptr;
    EXPECT_EQ(mxc_ndarray_list_name(l, i, &s), MXC_OK);
    mxc_ndarray a = nullptr;
    if (name == s && mxc_ndarray_list_get(l, i, &a) == MXC_OK) return a;
  }
  ADD_FAILURE() << "no array " << name;
  return nullptr;
}

std::vector<std::string> strs(mxc_str_list l) {
  int n = 0;
  EXPECT_EQ(mxc_str_list_size(l, &n), MXC_OK);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    const char *s = nullptr;
    EXPECT_EQ(mxc_str_list_get(l, i, &s), MXC_OK);
    out.push_back(s);
  }
  mxc_str_list_free(l);
  return out;
}

Bound bind_arrays(mxc_symbol sym, mxc_ndarray x, mxc_ndarray_list args,
                  mxc_ndarray_list aux) {
  Bound b;
  mxc_str_list an = nullptr, xn = nullptr;
  EXPECT_EQ(mxc_symbol_list_arguments(sym, &an), MXC_OK);
  EXPECT_EQ(mxc_symbol_list_auxiliary_states(sym, &xn), MXC_OK);
  b.names = strs(an);
  for (const std::string &n : b.names) {
    mxc_ndarray a = n == "data" ? nullptr : by_name(args, n), g = nullptr;
    if (a) {
      int nd = 0;
      const int64_t *d = nullptr;
      EXPECT_EQ(mxc_ndarray_shape(a, &nd, &d), MXC_OK);
      EXPECT_EQ(mxc_ndarray_create(d, nd, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &g),
                MXC_OK);
    }
    b.args.push_back(a ? a : x);
    b.grads.push_back(g);
    b.reqs.push_back(a ? MXC_REQ_WRITE : MXC_REQ_NULL);
  }
  for (const std::string &n : strs(xn)) b.aux.push_back(by_name(aux, n));
  return b;
}

// Gradients of the traced graph (exported, loaded, bound with gradient
// buffers) equal autograd's of the imperative pass, for the same head
// gradients, in training mode (BatchNorm on batch statistics).
TEST(HybridUser, TracedGradientsEqualAutograds) {
  mxc_block u = swish_block("g");
  mxc_ndarray x = make({4, 5}, ramp(20, 0.3f)), hg = make({4, 3}, ramp(12, 2.0f));
  mxc_ndarray first = forward(u, x);
  OK(mxc_block_hybridize(u, 1));
  mxc_ndarray traced = forward(u, x);
  std::string prefix = tmp_path("swish_grad");
  OK(mxc_block_export(u, prefix.c_str(), 0));
  // Autograd on the imperative pass (recorded passes are imperative).
  int prev = 0;
  OK(mxc_set_training(1, &prev));
  OK(mxc_autograd_set_recording(1, nullptr));
  mxc_ndarray y = forward(u, x);
  OK(mxc_autograd_set_recording(0, nullptr));
  OK(mxc_autograd_backward(1, &y, &hg, 0));
  // The graph through the executor.
  mxc_symbol sym = nullptr;
  mxc_ndarray_list args = nullptr, aux = nullptr;
  OK(mxc_checkpoint_load(prefix.c_str(), 0, &sym, &args, &aux));
  Bound b = bind_arrays(sym, x, args, aux);
  EXPECT_EQ(b.names.size(), 7u);  // data + 2 dense x 2 + gamma, beta
  mxc_executor ex = nullptr;
  OK(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, (int)b.args.size(), b.args.data(),
                       b.grads.data(), b.reqs.data(), (int)b.aux.size(),
                       b.aux.data(), 0, &ex));
  OK(mxc_executor_forward(ex, 1));
  OK(mxc_executor_backward(ex, 1, &hg));
  OK(mxc_set_training(prev, nullptr));
  mxc_ndarray ey = nullptr;
  OK(mxc_executor_output(ex, 0, &ey));
  expect_near(host(ey), host(y), 1e-5);
  int n = 0, checked = 0;
  OK(mxc_block_num_params(u, &n));
  for (int i = 0; i < n; ++i) {
    const char *name = nullptr;
    mxc_ndarray g = nullptr;
    OK(mxc_block_param_name(u, i, &name));
    if (mxc_block_param_grad(u, i, &g) != MXC_OK) continue;  // aux states
    for (size_t j = 0; j < b.names.size(); ++j) {
      if (b.names[j] != name) continue;
      expect_near(host(b.grads[j]), host(g), 1e-4);
      ++checked;
    }
    mxc_ndarray_free(g);
  }
  EXPECT_EQ(checked, 6);
  mxc_executor_free(ex);
  for (size_t j = 0; j < b.args.size(); ++j) {
    if (b.args[j] != x) mxc_ndarray_free(b.args[j]);
    mxc_ndarray_free(b.grads[j]);
  }
  for (mxc_ndarray a : b.aux) mxc_ndarray_free(a);
  mxc_symbol_free(sym);
  mxc_ndarray_list_free(args);
  mxc_ndarray_list_free(aux);
  for (mxc_ndarray e : {x, hg, first, traced, y, ey}) mxc_ndarray_free(e);
  mxc_block_free(u);
}

// Export of a hybridized user block loads in the predictor and gives the
// imperative outputs.
TEST(HybridUser, ExportLoadsInThePredictor) {
  mxc_block u = swish_block("exp");
  std::vector<float> xv = ramp(10, 1.1f);
  mxc_ndarray x = make({2, 5}, xv);
  mxc_ndarray y = forward(u, x);
  OK(mxc_block_hybridize(u, 1));
  mxc_ndarray h = forward(u, x);
  std::string prefix = tmp_path("swish_export");
  OK(mxc_block_export(u, prefix.c_str(), 7));
  // The traced graph: the children's calls and the user's own operators.
  mxc_symbol sym = nullptr;
  mxc_ndarray_list args = nullptr, aux = nullptr;
  OK(mxc_checkpoint_load(prefix.c_str(), 7, &sym, &args, &aux));
  char *json = nullptr;
  OK(mxc_symbol_to_json(sym, &json));
  std::string js(json);
  mxc_string_free(json);
  for (const char *want : {"\"exp_fullyconnected", "\"exp_batchnorm", "\"exp_sigmoid",
                           "\"fc2_weight\"", "\"bn_running_var\"", "\"data\""}) {
    EXPECT_NE(js.find(want), std::string::npos) << want;
  }
  mxc_symbol_free(sym);
  mxc_ndarray_list_free(args);
  mxc_ndarray_list_free(aux);
  const char *names[] = {"data"};
  int ndims[] = {2};
  int64_t dims[] = {2, 5};
  mxc_predictor pred = nullptr;
  OK(mxc_predictor_create_from_checkpoint(prefix.c_str(), 7, MXC_DEVICE_CPU, 0, 1,
                                          names, ndims, dims, nullptr, 0, nullptr,
                                          &pred));
  OK(mxc_predictor_set_input(pred, "data", xv.data(), xv.size() * 4));
  OK(mxc_predictor_forward(pred));
  std::vector<float> out(6);
  OK(mxc_predictor_get_output(pred, 0, out.data(), out.size() * 4));
  expect_near(std::vector<double>(out.begin(), out.end()), host(y), 1e-5);
  mxc_predictor_free(pred);
  for (mxc_ndarray e : {x, y, h}) mxc_ndarray_free(e);
  mxc_block_free(u);
}

}  // namespace
