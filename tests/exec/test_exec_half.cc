// A float16 network through the executor, as MXNet runs one: type
// inference gives FullyConnected's weight and bias float16 and BatchNorm's
// gamma, beta and moving statistics float32; forward matches the same
// operators invoked one by one (the imperative path, tested against naive
// references in tests/ops/*/test_half.cc), and training updates the
// float32 moving statistics.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

const char *kNet = R"({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "fc_weight", "inputs": []},
    {"op": "null", "name": "fc_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "4"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "null", "name": "bn_gamma", "inputs": []},
    {"op": "null", "name": "bn_beta", "inputs": []},
    {"op": "null", "name": "bn_moving_mean", "inputs": []},
    {"op": "null", "name": "bn_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn", "attrs": {"fix_gamma": "False"},
     "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0], [7, 0, 0]]},
    {"op": "Activation", "name": "act", "attrs": {"act_type": "tanh"},
     "inputs": [[8, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 4, 5, 6, 7],
  "heads": [[9, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10900]}
})";

std::string err() { return mxc_last_error(); }

std::vector<uint16_t> half_bits(const std::vector<float> &v) {
  std::vector<uint16_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    _Float16 h = (_Float16)v[i];
    memcpy(&b[i], &h, 2);
  }
  return b;
}

template <typename T>
std::vector<T> host(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<T> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * sizeof(T)),
            MXC_OK);
  return v;
}

// Fills the executor's argument or aux `name` with bytes.
template <typename T>
void fill(mxc_executor ex, const char *name, const std::vector<T> &v,
          bool aux = false) {
  mxc_ndarray a = nullptr;
  ASSERT_EQ(aux ? mxc_executor_aux(ex, name, &a) : mxc_executor_arg(ex, name, &a),
            MXC_OK)
      << name << ": " << err();
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * sizeof(T)),
            MXC_OK)
      << err();
  mxc_ndarray_free(a);
}

mxc_ndarray invoke1(const char *name, std::vector<mxc_ndarray> in,
                    std::vector<const char *> keys,
                    std::vector<const char *> vals) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  mxc_ndarray out[3] = {nullptr, nullptr, nullptr};
  int n_out = strcmp(name, "BatchNorm") == 0 ? 3 : 1;
  EXPECT_EQ(mxc_op_invoke(op, keys.data(), vals.data(), (int)keys.size(),
                          in.data(), (int)in.size(), out, n_out, nullptr),
            MXC_OK)
      << name << ": " << err();
  for (int i = 1; i < n_out; ++i) mxc_ndarray_free(out[i]);
  return out[0];
}

mxc_ndarray array(const std::vector<int64_t> &shape, int dt, const void *p,
                  size_t bytes) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dt,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, p, bytes), MXC_OK);
  return a;
}

TEST(ExecHalf, Float16NetworkWithFloat32BatchNormParams) {
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(kNet, &sym), MXC_OK) << err();
  const char *names[] = {"data"};
  int dtypes[] = {MXC_DTYPE_FLOAT16};
  mxc_infer inf = nullptr;
  ASSERT_EQ(mxc_symbol_infer_type(sym, 1, names, dtypes, 0, &inf), MXC_OK)
      << err();
  // Arguments in list order: data, fc_weight, fc_bias, bn_gamma, bn_beta.
  const int want_args[] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT16,
                           MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT32,
                           MXC_DTYPE_FLOAT32};
  for (int i = 0; i < 5; ++i) {
    int t = -1;
    ASSERT_EQ(mxc_infer_dtype(inf, MXC_INFER_ARGS, i, &t), MXC_OK);
    EXPECT_EQ(t, want_args[i]) << "argument " << i;
  }
  for (int i = 0; i < 2; ++i) {
    int t = -1;
    ASSERT_EQ(mxc_infer_dtype(inf, MXC_INFER_AUX, i, &t), MXC_OK);
    EXPECT_EQ(t, MXC_DTYPE_FLOAT32) << "aux " << i;
  }
  int t = -1;
  ASSERT_EQ(mxc_infer_dtype(inf, MXC_INFER_OUTPUTS, 0, &t), MXC_OK);
  EXPECT_EQ(t, MXC_DTYPE_FLOAT16);
  mxc_infer_free(inf);

  int ndims[] = {2};
  int64_t dims[] = {5, 3};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     dims, dtypes, MXC_REQ_NULL, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_OK)
      << err();
  std::vector<float> x(15), w(12), b(4), g = {1.5f, -0.5f, 2, 1},
                                         be = {0, 0.25f, -1, 0.5f},
                                         mm = {0.1f, 0, -0.2f, 0.3f},
                                         mv = {1, 0.5f, 2, 1.5f};
  for (int i = 0; i < 15; ++i) x[i] = (float)((i * 7 % 11) - 5) / 4;
  for (int i = 0; i < 12; ++i) w[i] = (float)((i * 5 % 9) - 4) / 8;
  for (int i = 0; i < 4; ++i) b[i] = (float)i / 4 - 0.5f;
  fill(ex, "data", half_bits(x));
  fill(ex, "fc_weight", half_bits(w));
  fill(ex, "fc_bias", half_bits(b));
  fill(ex, "bn_gamma", g);
  fill(ex, "bn_beta", be);
  fill(ex, "bn_moving_mean", mm, true);
  fill(ex, "bn_moving_var", mv, true);

  // The imperative reference on the same values.
  auto hx = half_bits(x), hw = half_bits(w), hb = half_bits(b);
  mxc_ndarray ax = array({5, 3}, MXC_DTYPE_FLOAT16, hx.data(), 30);
  mxc_ndarray aw = array({4, 3}, MXC_DTYPE_FLOAT16, hw.data(), 24);
  mxc_ndarray ab = array({4}, MXC_DTYPE_FLOAT16, hb.data(), 8);
  mxc_ndarray ag = array({4}, MXC_DTYPE_FLOAT32, g.data(), 16);
  mxc_ndarray abe = array({4}, MXC_DTYPE_FLOAT32, be.data(), 16);
  for (int training : {0, 1}) {
    mxc_ndarray amm = array({4}, MXC_DTYPE_FLOAT32, mm.data(), 16);
    mxc_ndarray amv = array({4}, MXC_DTYPE_FLOAT32, mv.data(), 16);
    fill(ex, "bn_moving_mean", mm, true);
    fill(ex, "bn_moving_var", mv, true);
    ASSERT_EQ(mxc_executor_forward(ex, training), MXC_OK) << err();
    mxc_ndarray out = nullptr;
    ASSERT_EQ(mxc_executor_output(ex, 0, &out), MXC_OK);
    int dt = -1;
    mxc_ndarray_dtype(out, &dt);
    EXPECT_EQ(dt, MXC_DTYPE_FLOAT16);
    int prev = 0;
    mxc_set_training(training, &prev);
    mxc_ndarray fc = invoke1("FullyConnected", {ax, aw, ab}, {"num_hidden"},
                             {"4"});
    mxc_ndarray bn = invoke1("BatchNorm", {fc, ag, abe, amm, amv},
                             {"fix_gamma"}, {"False"});
    mxc_ndarray act = invoke1("Activation", {bn}, {"act_type"}, {"tanh"});
    mxc_set_training(prev, &prev);
    EXPECT_EQ(host<uint16_t>(out), host<uint16_t>(act)) << training;
    mxc_ndarray emm = nullptr;
    ASSERT_EQ(mxc_executor_aux(ex, "bn_moving_mean", &emm), MXC_OK);
    EXPECT_EQ(host<float>(emm), host<float>(amm)) << training;
    if (training) {
      EXPECT_NE(host<float>(emm), mm);
    }
    for (mxc_ndarray a : {out, fc, bn, act, amm, amv, emm}) mxc_ndarray_free(a);
  }
  for (mxc_ndarray a : {ax, aw, ab, ag, abe}) mxc_ndarray_free(a);
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
}

}  // namespace
