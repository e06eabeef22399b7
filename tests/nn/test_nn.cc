// Layers (mxc_block_*, mxc_optimizer_*) against independent references:
//  - dense, conv2d, pooling, layernorm, batchnorm, embedding forward passes
//    against naive loops over the parameters read back from the block;
//  - losses against their formulas computed here;
//  - gradients of a recorded forward pass (dense -> tanh -> dense -> loss,
//    float64) against central finite differences of the forward pass;
//  - an optimizer step against sgd_mom_update / adam_update invoked
//    directly on copies;
//  - sequential and user blocks against the same layers chained by hand;
//  - save / load round trips and every kind of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/nn/nn_test_util.h"

namespace {

using nn_test::block;
using nn_test::host;
using nn_test::make;
using nn_test::shape_of;
using nn_test::tmp_path;

std::vector<double> ramp(size_t n, double scale, double shift = 0) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(1.7 * (double)i + shift) * scale;
  return v;
}

void init(mxc_block b, const char *method = "uniform") {
  const char *k[] = {"scale"}, *v[] = {"0.5"};
  int n = std::string(method) == "uniform" ? 1 : 0;
  ASSERT_EQ(mxc_block_initialize(b, method, k, v, n, 0), MXC_OK)
      << mxc_last_error();
}

mxc_ndarray forward(mxc_block b, std::vector<mxc_ndarray> in) {
  mxc_ndarray y = nullptr;
  EXPECT_EQ(mxc_block_forward(b, (int)in.size(), in.data(), &y), MXC_OK)
      << mxc_last_error();
  return y;
}

std::vector<double> param(mxc_block b, int i) {
  mxc_ndarray p = nullptr;
  EXPECT_EQ(mxc_block_param(b, i, &p), MXC_OK) << mxc_last_error();
  std::vector<double> v = host(p);
  mxc_ndarray_free(p);
  return v;
}

std::string param_name(mxc_block b, int i) {
  const char *s = nullptr;
  EXPECT_EQ(mxc_block_param_name(b, i, &s), MXC_OK) << mxc_last_error();
  return s ? s : "";
}

void expect_near(const std::vector<double> &a, const std::vector<double> &b,
                 double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], tol * (1 + std::fabs(b[i]))) << "at " << i;
  }
}

// y = x W^T + b, x (n, k), W (m, k).
std::vector<double> naive_dense(const std::vector<double> &x, int64_t n,
                                int64_t k, const std::vector<double> &w,
                                const std::vector<double> &b, int64_t m) {
  std::vector<double> y((size_t)(n * m));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double s = b.empty() ? 0 : b[(size_t)j];
      for (int64_t t = 0; t < k; ++t) s += x[(size_t)(i * k + t)] * w[(size_t)(j * k + t)];
      y[(size_t)(i * m + j)] = s;
    }
  }
  return y;
}

TEST(Layers, DenseMatchesNaiveLoopsAndNamesParameters) {
  mxc_block d = block("dense", {"units", "3", "activation", "relu"}, "fc");
  init(d);
  std::vector<double> xv = ramp(2 * 2 * 2, 1.0);
  mxc_ndarray x = make({2, 2, 2}, xv);  // flattened to (2, 4)
  mxc_ndarray y = forward(d, {x});
  int n = 0;
  OK(mxc_block_num_params(d, &n));
  ASSERT_EQ(n, 2);
  EXPECT_EQ(param_name(d, 0), "fc_weight");
  EXPECT_EQ(param_name(d, 1), "fc_bias");
  std::vector<double> w = param(d, 0), b = param(d, 1);
  ASSERT_EQ(w.size(), 12u);
  for (double v : b) EXPECT_EQ(v, 0.0);  // bias_initializer zeros
  std::vector<double> want = naive_dense(xv, 2, 4, w, b, 3);
  for (double &v : want) v = v > 0 ? v : 0;
  expect_near(host(y), want, 1e-5);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 3}));
  // A second input of another feature count no longer fits the weight.
  mxc_ndarray x2 = make({2, 5}, ramp(10, 1.0));
  mxc_ndarray y2 = nullptr;
  EXPECT_EQ(mxc_block_forward(d, 1, &x2, &y2), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(mxc_last_error()).find("fc_weight"), std::string::npos)
      << mxc_last_error();
  for (mxc_ndarray a : {x, y, x2}) mxc_ndarray_free(a);
  mxc_block_free(d);
}

TEST(Layers, Conv2dAndPoolingMatchNaiveLoops) {
  mxc_block c = block("conv2d", {"channels", "2", "kernel_size", "(2,3)",
                                 "padding", "(1,0)", "strides", "1"});
  init(c);
  const int64_t N = 2, C = 3, H = 4, W = 5, K = 2, KH = 2, KW = 3;
  std::vector<double> xv = ramp((size_t)(N * C * H * W), 1.0, 0.3);
  mxc_ndarray x = make({N, C, H, W}, xv);
  mxc_ndarray y = forward(c, {x});
  std::vector<double> w = param(c, 0), bias = param(c, 1);
  ASSERT_EQ(w.size(), (size_t)(K * C * KH * KW));
  const int64_t OH = H + 2 - KH + 1, OW = W - KW + 1;
  ASSERT_EQ(shape_of(y), (std::vector<int64_t>{N, K, OH, OW}));
  std::vector<double> want((size_t)(N * K * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = bias[(size_t)k];
          for (int64_t ch = 0; ch < C; ++ch)
            for (int64_t a = 0; a < KH; ++a)
              for (int64_t b = 0; b < KW; ++b) {
                int64_t r = i + a - 1, col = j + b;
                if (r < 0 || r >= H) continue;
                s += xv[(size_t)(((n * C + ch) * H + r) * W + col)] *
                     w[(size_t)(((k * C + ch) * KH + a) * KW + b)];
              }
          want[(size_t)(((n * K + k) * OH + i) * OW + j)] = s;
        }
  expect_near(host(y), want, 1e-5);

  mxc_block mp = block("maxpool2d", {"pool_size", "2"});
  mxc_block gp = block("global_avgpool2d", {});
  mxc_ndarray m = forward(mp, {x}), g = forward(gp, {x});
  ASSERT_EQ(shape_of(m), (std::vector<int64_t>{N, C, 2, 2}));
  ASSERT_EQ(shape_of(g), (std::vector<int64_t>{N, C, 1, 1}));
  std::vector<double> mv = host(m), gv = host(g);
  for (int64_t p = 0; p < N * C; ++p) {
    const double *plane = &xv[(size_t)(p * H * W)];
    double sum = 0;
    for (int64_t i = 0; i < H * W; ++i) sum += plane[i];
    EXPECT_NEAR(gv[(size_t)p], sum / (H * W), 1e-5);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        double mx = -1e30;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b)
            mx = std::max(mx, plane[(2 * i + a) * W + 2 * j + b]);
        EXPECT_NEAR(mv[(size_t)((p * 2 + i) * 2 + j)], mx, 1e-6);
      }
  }
  for (mxc_ndarray a : {x, y, m, g}) mxc_ndarray_free(a);
  for (mxc_block b : {c, mp, gp}) mxc_block_free(b);
}

TEST(Layers, NormalizationAndEmbeddingMatchNaiveLoops) {
  const int64_t N = 4, C = 3;
  std::vector<double> xv = ramp((size_t)(N * C), 2.0, 0.1);
  mxc_ndarray x = make({N, C}, xv);
  mxc_block ln = block("layernorm", {"epsilon", "1e-5"});
  init(ln);
  mxc_ndarray y = forward(ln, {x});
  std::vector<double> want(xv.size());
  for (int64_t i = 0; i < N; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < C; ++j) mean += xv[(size_t)(i * C + j)] / C;
    for (int64_t j = 0; j < C; ++j) {
      double d = xv[(size_t)(i * C + j)] - mean;
      var += d * d / C;
    }
    for (int64_t j = 0; j < C; ++j)
      want[(size_t)(i * C + j)] = (xv[(size_t)(i * C + j)] - mean) / std::sqrt(var + 1e-5);
  }
  expect_near(host(y), want, 1e-4);

  // BatchNorm in training mode: batch statistics, running ones updated.
  mxc_block bn = block("batchnorm", {"momentum", "0.5"}, "bn");
  init(bn);
  int prev = 0;
  OK(mxc_set_training(1, &prev));
  mxc_ndarray z = forward(bn, {x});
  OK(mxc_set_training(prev, nullptr));
  int n = 0;
  OK(mxc_block_num_params(bn, &n));
  ASSERT_EQ(n, 4);
  EXPECT_EQ(param_name(bn, 2), "bn_running_mean");
  std::vector<double> zw(xv.size()), rmean = param(bn, 2);
  for (int64_t j = 0; j < C; ++j) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < N; ++i) mean += xv[(size_t)(i * C + j)] / N;
    for (int64_t i = 0; i < N; ++i) {
      double d = xv[(size_t)(i * C + j)] - mean;
      var += d * d / N;
    }
    for (int64_t i = 0; i < N; ++i)
      zw[(size_t)(i * C + j)] = (xv[(size_t)(i * C + j)] - mean) / std::sqrt(var + 1e-5);
    EXPECT_NEAR(rmean[(size_t)j], 0.5 * mean, 1e-5);
  }
  expect_near(host(z), zw, 1e-4);
  mxc_ndarray g = nullptr;
  EXPECT_EQ(mxc_block_param_grad(bn, 2, &g), MXC_ERR_NOT_FOUND);

  mxc_block emb = block("embedding", {"input_dim", "5", "output_dim", "2"});
  init(emb);
  mxc_ndarray idx = make({3}, {4, 0, 2});
  mxc_ndarray e = forward(emb, {idx});
  std::vector<double> table = param(emb, 0), ev = host(e);
  const int rows[] = {4, 0, 2};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(ev[(size_t)(i * 2 + j)], table[(size_t)(rows[i] * 2 + j)]);
  for (mxc_ndarray a : {x, y, z, idx, e}) mxc_ndarray_free(a);
  for (mxc_block b : {ln, bn, emb}) mxc_block_free(b);
}

TEST(Losses, MatchTheirFormulas) {
  const int64_t N = 3, K = 4;
  std::vector<double> pv = ramp((size_t)(N * K), 2.0, 0.7);
  std::vector<double> labels = {2, 0, 3};
  mxc_ndarray p = make({N, K}, pv), l = make({N}, labels);
  mxc_block ce = block("softmax_cross_entropy_loss", {});
  mxc_ndarray out = forward(ce, {p, l});
  std::vector<double> want((size_t)N);
  for (int64_t i = 0; i < N; ++i) {
    double mx = -1e30, s = 0;
    for (int64_t j = 0; j < K; ++j) mx = std::max(mx, pv[(size_t)(i * K + j)]);
    for (int64_t j = 0; j < K; ++j) s += std::exp(pv[(size_t)(i * K + j)] - mx);
    want[(size_t)i] = -(pv[(size_t)(i * K + (int64_t)labels[(size_t)i])] - mx - std::log(s));
  }
  expect_near(host(out), want, 1e-5);

  std::vector<double> tv = ramp((size_t)(N * K), 1.0, 2.0);
  mxc_ndarray t = make({N, K}, tv);
  mxc_block l2 = block("l2_loss", {}), l1 = block("l1_loss", {"weight", "2"});
  mxc_block bce = block("sigmoid_binary_cross_entropy_loss", {});
  mxc_ndarray o2 = forward(l2, {p, t}), o1 = forward(l1, {p, t});
  std::vector<double> z(tv.size());
  for (size_t i = 0; i < z.size(); ++i) z[i] = tv[i] > 0 ? 1 : 0;
  mxc_ndarray zt = make({N, K}, z);
  mxc_ndarray ob = forward(bce, {p, zt});
  std::vector<double> w2((size_t)N), w1((size_t)N), wb((size_t)N);
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t j = 0; j < K; ++j) {
      size_t at = (size_t)(i * K + j);
      double d = pv[at] - tv[at], x = pv[at];
      w2[(size_t)i] += 0.5 * d * d / K;
      w1[(size_t)i] += 2 * std::fabs(d) / K;
      double s = 1 / (1 + std::exp(-x));
      wb[(size_t)i] += -(z[at] * std::log(s) + (1 - z[at]) * std::log(1 - s)) / K;
    }
  }
  expect_near(host(o2), w2, 1e-5);
  expect_near(host(o1), w1, 1e-5);
  expect_near(host(ob), wb, 1e-5);
  for (mxc_ndarray a : {p, l, out, t, o2, o1, zt, ob}) mxc_ndarray_free(a);
  for (mxc_block b : {ce, l2, l1, bce}) mxc_block_free(b);
}

// The summed loss of net on (x, label), without recording.
double loss_of(mxc_block net, mxc_block loss, mxc_ndarray x, mxc_ndarray y) {
  mxc_ndarray out = forward(net, {x});
  mxc_ndarray l = forward(loss, {out, y});
  double s = 0;
  for (double v : host(l)) s += v;
  mxc_ndarray_free(out);
  mxc_ndarray_free(l);
  return s;
}

// Two dense layers and a user block between them (tanh through
// mxc_op_invoke), so the user's forward is differentiated too.
int tanh_forward(void *, mxc_block self, int n_in, const mxc_ndarray *in,
                 mxc_ndarray *out) {
  if (n_in != 1) return MXC_ERR_INVALID_ARGUMENT;
  mxc_block child = nullptr;
  int rc = mxc_block_child(self, 0, &child);
  mxc_ndarray h = nullptr;
  if (rc == MXC_OK) rc = mxc_block_forward(child, 1, in, &h);
  mxc_block_free(child);
  mxc_op op = nullptr;
  if (rc == MXC_OK) rc = mxc_op_find("tanh", &op);
  *out = nullptr;
  if (rc == MXC_OK) rc = mxc_op_invoke(op, nullptr, nullptr, 0, &h, 1, out, 1, nullptr);
  mxc_ndarray_free(h);
  return rc;
}

int g_freed = 0;
void count_free(void *) { ++g_freed; }

TEST(Autograd, GradientsMatchFiniteDifferences) {
  mxc_block net = block("sequential", {});
  mxc_block d1 = block("dense", {"units", "4"}, "d1");
  mxc_block user = nullptr;
  g_freed = 0;
  OK(mxc_block_create_user("act", tanh_forward, nullptr, count_free, &user));
  OK(mxc_block_add(user, d1));
  mxc_block d2 = block("dense", {"units", "3"}, "d2");
  OK(mxc_block_add(net, user));
  OK(mxc_block_add(net, d2));
  mxc_block_free(d1);
  mxc_block_free(user);
  mxc_block_free(d2);
  init(net, "xavier");
  mxc_block loss = block("softmax_cross_entropy_loss", {});
  mxc_ndarray x = make({5, 3}, ramp(15, 1.0), MXC_DTYPE_FLOAT64);
  mxc_ndarray y = make({5}, {0, 1, 2, 1, 0}, MXC_DTYPE_FLOAT64);
  OK(mxc_autograd_set_recording(1, nullptr));
  mxc_ndarray out = forward(net, {x});
  mxc_ndarray l = forward(loss, {out, y});
  OK(mxc_autograd_set_recording(0, nullptr));
  OK(mxc_autograd_backward(1, &l, nullptr, 0));
  int n = 0;
  OK(mxc_block_num_params(net, &n));
  ASSERT_EQ(n, 4);
  EXPECT_EQ(param_name(net, 0), "d1_weight");
  EXPECT_EQ(param_name(net, 3), "d2_bias");
  const double h = 1e-6;
  for (int i = 0; i < n; ++i) {
    mxc_ndarray p = nullptr, g = nullptr;
    OK(mxc_block_param(net, i, &p));
    OK(mxc_block_param_grad(net, i, &g));
    std::vector<double> pv = host(p), gv = host(g);
    for (size_t j = 0; j < pv.size(); ++j) {
      std::vector<double> q = pv;
      q[j] = pv[j] + h;
      OK(mxc_ndarray_copy_from_host(p, q.data(), q.size() * 8));
      double up = loss_of(net, loss, x, y);
      q[j] = pv[j] - h;
      OK(mxc_ndarray_copy_from_host(p, q.data(), q.size() * 8));
      double down = loss_of(net, loss, x, y);
      OK(mxc_ndarray_copy_from_host(p, pv.data(), pv.size() * 8));
      EXPECT_NEAR(gv[j], (up - down) / (2 * h), 1e-6)
          << param_name(net, i) << "[" << j << "]";
    }
    mxc_ndarray_free(p);
    mxc_ndarray_free(g);
  }
  for (mxc_ndarray a : {x, y, out, l}) mxc_ndarray_free(a);
  EXPECT_EQ(g_freed, 0);
  mxc_block_free(net);  // the last reference to the user block
  EXPECT_EQ(g_freed, 1);
  mxc_block_free(loss);
}

// Runs update_op directly on copies of (weight, grad) with zero states.
std::vector<double> direct_update(const char *update_op,
                                  const std::vector<double> &w,
                                  const std::vector<double> &g, int n_states,
                                  std::vector<const char *> k,
                                  std::vector<const char *> v, int steps) {
  int64_t n = (int64_t)w.size();
  mxc_ndarray wa = make({n}, w), ga = make({n}, g);
  std::vector<mxc_ndarray> in = {wa, ga};
  for (int s = 0; s < n_states; ++s) in.push_back(make({n}, std::vector<double>(w.size(), 0)));
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(update_op, &op), MXC_OK);
  for (int i = 0; i < steps; ++i) {
    mxc_ndarray out = wa;
    EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                            (int)in.size(), &out, 1, nullptr),
              MXC_OK)
        << mxc_last_error();
  }
  std::vector<double> r = host(wa);
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  return r;
}

void check_optimizer(const char *update_op, int n_states,
                     std::vector<const char *> k, std::vector<const char *> v) {
  mxc_block d = block("dense", {"units", "2", "use_bias", "0"});
  init(d);
  mxc_block loss = block("l2_loss", {});
  mxc_ndarray x = make({4, 3}, ramp(12, 1.0)), t = make({4, 2}, ramp(8, 1.0, 1));
  OK(mxc_autograd_set_recording(1, nullptr));
  mxc_ndarray out = forward(d, {x});
  mxc_ndarray l = forward(loss, {out, t});
  OK(mxc_autograd_set_recording(0, nullptr));
  OK(mxc_autograd_backward(1, &l, nullptr, 0));
  std::vector<double> w0 = param(d, 0);
  mxc_ndarray g = nullptr;
  OK(mxc_block_param_grad(d, 0, &g));
  std::vector<double> gv = host(g);
  mxc_optimizer opt = nullptr;
  OK(mxc_optimizer_create(d, update_op, k.data(), v.data(), (int)k.size(), &opt));
  OK(mxc_optimizer_step(opt, 4));
  OK(mxc_optimizer_step(opt, 4));  // the states carry over between steps
  k.push_back("rescale_grad");
  v.push_back("0.25");
  expect_near(param(d, 0), direct_update(update_op, w0, gv, n_states, k, v, 2),
              1e-6);
  double lr = 0;
  OK(mxc_optimizer_set_lr(opt, 0.5));
  OK(mxc_optimizer_get_lr(opt, &lr));
  EXPECT_EQ(lr, 0.5);
  EXPECT_EQ(mxc_optimizer_set_lr(opt, NAN), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_optimizer_step(opt, 0), MXC_ERR_INVALID_ARGUMENT);
  mxc_optimizer_free(opt);
  for (mxc_ndarray a : {x, t, out, l, g}) mxc_ndarray_free(a);
  mxc_block_free(d);
  mxc_block_free(loss);
}

TEST(Optimizer, StepsEqualTheUpdateOperatorCalledDirectly) {
  check_optimizer("sgd_update", 0, {"lr", "wd"}, {"0.1", "0.01"});
  check_optimizer("sgd_mom_update", 1, {"lr", "momentum"}, {"0.1", "0.9"});
  check_optimizer("adam_update", 2, {"lr", "beta1"}, {"0.01", "0.8"});
}

TEST(Optimizer, TrainsASmallClassifier) {
  // Three separable clusters; a dense-relu-dense net learns them.
  const int64_t N = 30;
  std::vector<double> xv, yv;
  for (int64_t i = 0; i < N; ++i) {
    int c = (int)(i % 3);
    xv.push_back(c == 0 ? 2 : -1 + 0.1 * std::sin((double)i));
    xv.push_back(c == 1 ? 2 : -1 + 0.1 * std::cos((double)i));
    yv.push_back(c);
  }
  mxc_ndarray x = make({N, 2}, xv), y = make({N}, yv);
  mxc_block net = block("sequential", {});
  mxc_block a = block("dense", {"units", "8", "activation", "relu"});
  mxc_block b = block("dense", {"units", "3"});
  OK(mxc_block_add(net, a));
  OK(mxc_block_add(net, b));
  OK(mxc_random_seed(7));
  init(net, "xavier");
  mxc_block loss = block("softmax_cross_entropy_loss", {});
  const char *k[] = {"lr", "momentum"}, *v[] = {"0.5", "0.9"};
  mxc_optimizer opt = nullptr;
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    OK(mxc_autograd_set_recording(1, nullptr));
    mxc_ndarray out = forward(net, {x});
    mxc_ndarray l = forward(loss, {out, y});
    OK(mxc_autograd_set_recording(0, nullptr));
    OK(mxc_autograd_backward(1, &l, nullptr, 0));
    if (!opt) {
      OK(mxc_optimizer_create(net, "sgd_mom_update", k, v, 2, &opt));
    }
    OK(mxc_optimizer_step(opt, N));
    double s = 0;
    for (double e : host(l)) s += e / N;
    (step == 0 ? first : last) = s;
    mxc_ndarray_free(out);
    mxc_ndarray_free(l);
  }
  EXPECT_NEAR(first, std::log(3.0), 0.7);
  EXPECT_LT(last, 0.05) << "first " << first;
  mxc_ndarray out = forward(net, {x});
  int64_t correct = 0, count = 0;
  OK(mxc_metric_accuracy(out, y, &correct, &count));
  EXPECT_EQ(correct, N);
  mxc_optimizer_free(opt);  // its reference to net goes too
  for (mxc_ndarray e : {x, y, out}) mxc_ndarray_free(e);
  for (mxc_block e : {net, a, b, loss}) mxc_block_free(e);
}

TEST(Params, SaveLoadRoundTripAndChecks) {
  mxc_block d = block("dense", {"units", "2"}, "rt");
  init(d);
  mxc_ndarray x = make({1, 3}, {1, 2, 3});
  mxc_ndarray y = forward(d, {x});
  std::string path = tmp_path("rt.params");
  OK(mxc_block_save_params(d, path.c_str()));
  // A fresh block of the same name loads them before any forward pass.
  mxc_block e = block("dense", {"units", "2"}, "rt");
  OK(mxc_block_load_params(e, path.c_str()));
  expect_near(param(e, 0), param(d, 0), 0);
  mxc_ndarray z = forward(e, {x});  // no initializer needed: loaded
  expect_near(host(z), host(y), 0);
  // Another name or shape: refused, nothing changed.
  mxc_block f = block("dense", {"units", "2"}, "other");
  EXPECT_EQ(mxc_block_load_params(f, path.c_str()), MXC_ERR_NOT_FOUND);
  EXPECT_NE(std::string(mxc_last_error()).find("other_weight"), std::string::npos);
  mxc_block g = block("dense", {"units", "3"}, "rt");
  EXPECT_EQ(mxc_block_load_params(g, path.c_str()), MXC_ERR_SHAPE);
  mxc_ndarray p = nullptr;
  EXPECT_EQ(mxc_block_param(g, 0, &p), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxc_block_load_params(d, tmp_path("missing").c_str()), MXC_OK);
  EXPECT_EQ(mxc_block_save_params(g, path.c_str()), MXC_ERR_INVALID_ARGUMENT);
  for (mxc_ndarray a : {x, y, z}) mxc_ndarray_free(a);
  for (mxc_block b : {d, e, f, g}) mxc_block_free(b);
}

// A LeNet-like network exported and loaded by the predictor gives the
// imperative inference output; the checkpoint's names follow MXNet's.
TEST(Export, PredictorReproducesTheImperativeOutput) {
  mxc_block net = block("sequential", {});
  std::vector<mxc_block> layers = {
      block("conv2d", {"channels", "4", "kernel_size", "3", "activation", "tanh"}, "c1"),
      block("batchnorm", {}, "bn"),
      block("maxpool2d", {"pool_size", "2"}, "p1"),
      block("dropout", {"rate", "0.3"}, "dr"),
      block("flatten", {}, "fl"),
      block("dense", {"units", "5"}, "fc")};
  for (mxc_block l : layers) {
    OK(mxc_block_add(net, l));
    mxc_block_free(l);
  }
  OK(mxc_random_seed(3));
  init(net, "xavier");
  std::vector<double> xv = ramp(2 * 1 * 8 * 8, 1.0, 0.2);
  mxc_ndarray x = make({2, 1, 8, 8}, xv);
  int prev = 0;
  OK(mxc_set_training(1, &prev));  // moves BatchNorm's running statistics
  mxc_ndarray t = forward(net, {x});
  OK(mxc_set_training(0, nullptr));
  mxc_ndarray y = forward(net, {x});
  OK(mxc_set_training(prev, nullptr));
  std::string prefix = tmp_path("lenetish");
  OK(mxc_block_export(net, prefix.c_str(), 3));

  mxc_symbol sym = nullptr;
  mxc_ndarray_list args = nullptr, aux = nullptr;
  OK(mxc_checkpoint_load(prefix.c_str(), 3, &sym, &args, &aux));
  int n_args = 0, n_aux = 0;
  OK(mxc_ndarray_list_size(args, &n_args));
  OK(mxc_ndarray_list_size(aux, &n_aux));
  EXPECT_EQ(n_args, 6);  // c1 weight/bias, bn gamma/beta, fc weight/bias
  EXPECT_EQ(n_aux, 2);
  std::vector<std::string> aux_names;
  for (int i = 0; i < n_aux; ++i) {
    const char *nm = nullptr;
    OK(mxc_ndarray_list_name(aux, i, &nm));
    aux_names.push_back(nm);
  }
  EXPECT_EQ(aux_names, (std::vector<std::string>{"bn_running_var", "bn_running_mean"}));
  char *json = nullptr;
  OK(mxc_symbol_to_json(sym, &json));
  std::string js(json);
  mxc_string_free(json);
  for (const char *want : {"\"c1_fwd\"", "\"c1_tanh_fwd\"", "\"fc_weight\"",
                           "\"bn_fwd\"", "\"data\""}) {
    EXPECT_NE(js.find(want), std::string::npos) << want;
  }
  mxc_str_list auxs = nullptr;
  OK(mxc_symbol_list_auxiliary_states(sym, &auxs));
  int n_sym_aux = 0;
  OK(mxc_str_list_size(auxs, &n_sym_aux));
  EXPECT_EQ(n_sym_aux, 2);

  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t dims[] = {2, 1, 8, 8};
  mxc_predictor pred = nullptr;
  OK(mxc_predictor_create_from_checkpoint(prefix.c_str(), 3, MXC_DEVICE_CPU, 0,
                                          1, names, ndims, dims, nullptr, 0,
                                          nullptr, &pred));
  std::vector<float> xf(xv.begin(), xv.end());
  OK(mxc_predictor_set_input(pred, "data", xf.data(), xf.size() * 4));
  OK(mxc_predictor_forward(pred));
  std::vector<float> pf(10);
  OK(mxc_predictor_get_output(pred, 0, pf.data(), pf.size() * 4));
  expect_near(std::vector<double>(pf.begin(), pf.end()), host(y), 1e-5);

  // User blocks not hybridized have no graph yet; parameters must exist.
  mxc_block u = nullptr, fresh = block("dense", {"units", "2"});
  OK(mxc_block_create_user(nullptr, tanh_forward, nullptr, nullptr, &u));
  EXPECT_EQ(mxc_block_export(u, prefix.c_str(), 0), MXC_ERR_UNSUPPORTED);
  EXPECT_EQ(mxc_block_export(fresh, prefix.c_str(), 0), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_block_export(net, prefix.c_str(), -1), MXC_ERR_INVALID_ARGUMENT);
  mxc_predictor_free(pred);
  mxc_str_list_free(auxs);
  mxc_symbol_free(sym);
  mxc_ndarray_list_free(args);
  mxc_ndarray_list_free(aux);
  for (mxc_ndarray a : {x, t, y}) mxc_ndarray_free(a);
  for (mxc_block b : {net, u, fresh}) mxc_block_free(b);
}

// Hybridized and imperative outputs agree: in inference mode (where the
// executor folds BatchNorm into the convolution), after a recorded
// training step and optimizer update (shared parameters), and for a new
// batch size (a new binding).
TEST(Hybridize, OutputsEqualTheImperativeOnes) {
  mxc_block net = block("sequential", {});
  for (mxc_block l : {block("conv2d", {"channels", "3", "kernel_size", "3"}),
                      block("batchnorm", {}),
                      block("activation", {"activation", "relu"}),
                      block("global_avgpool2d", {}),
                      block("dense", {"units", "4", "activation", "tanh"})}) {
    OK(mxc_block_add(net, l));
    mxc_block_free(l);
  }
  init(net, "xavier");
  mxc_ndarray x = make({2, 2, 6, 6}, ramp(144, 1.0, 0.4));
  mxc_ndarray x3 = make({3, 2, 6, 6}, ramp(216, 1.0, 0.9));
  mxc_ndarray y0 = forward(net, {x});  // makes the parameters
  OK(mxc_block_hybridize(net, 1));
  mxc_ndarray h0 = forward(net, {x}), h1 = forward(net, {x});
  expect_near(host(h0), host(y0), 1e-5);
  expect_near(host(h1), host(y0), 1e-5);  // a second run of one binding
  // A training step: recorded (imperative), BatchNorm's statistics move.
  mxc_block loss = block("l2_loss", {});
  mxc_ndarray t = make({2, 4}, ramp(8, 0.5));
  int prev = 0;
  OK(mxc_set_training(1, &prev));
  OK(mxc_autograd_set_recording(1, nullptr));
  mxc_ndarray o = forward(net, {x});
  mxc_ndarray l = forward(loss, {o, t});
  OK(mxc_autograd_set_recording(0, nullptr));
  OK(mxc_set_training(prev, nullptr));
  OK(mxc_autograd_backward(1, &l, nullptr, 0));
  mxc_optimizer opt = nullptr;
  const char *k[] = {"lr"}, *v[] = {"0.5"};
  OK(mxc_optimizer_create(net, "sgd_update", k, v, 1, &opt));
  OK(mxc_optimizer_step(opt, 2));
  mxc_ndarray h2 = forward(net, {x}), h3 = forward(net, {x3});
  OK(mxc_block_hybridize(net, 0));
  mxc_ndarray y2 = forward(net, {x}), y3 = forward(net, {x3});
  std::vector<double> a = host(h2), b = host(y2);
  expect_near(a, b, 1e-5);
  EXPECT_GT(std::fabs(a[0] - host(y0)[0]), 1e-4);  // the update was seen
  expect_near(host(h3), host(y3), 1e-5);
  // Losses are refused (user blocks are traced: tests/nn/test_hybrid.cc).
  EXPECT_EQ(mxc_block_hybridize(loss, 1), MXC_ERR_UNSUPPORTED);
  mxc_optimizer_free(opt);
  for (mxc_ndarray e : {x, x3, y0, h0, h1, t, o, l, h2, h3, y2, y3}) mxc_ndarray_free(e);
  for (mxc_block e : {net, loss}) mxc_block_free(e);
}

TEST(BadInput, IsRefusedWithAMessage) {
  mxc_block b = nullptr;
  const char *k[] = {"units"}, *v[] = {"0"};
  EXPECT_EQ(mxc_block_create("densy", nullptr, nullptr, nullptr, 0, &b),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("densy"), std::string::npos);
  EXPECT_EQ(mxc_block_create("dense", nullptr, k, v, 1, &b), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_block_create("dense", nullptr, nullptr, nullptr, 0, &b),
            MXC_ERR_INVALID_ARGUMENT);  // units is required
  const char *k2[] = {"unit"}, *v2[] = {"3"};
  EXPECT_EQ(mxc_block_create("dense", nullptr, k2, v2, 1, &b), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("unit"), std::string::npos);
  const char *k3[] = {"channels", "kernel_size"}, *v3[] = {"2", "(3,x)"};
  EXPECT_EQ(mxc_block_create("conv2d", nullptr, k3, v3, 2, &b), MXC_ERR_INVALID_ARGUMENT);
  const char *k4[] = {"activation"}, *v4[] = {"swish"};
  EXPECT_EQ(mxc_block_create("activation", nullptr, k4, v4, 1, &b), MXC_ERR_INVALID_ARGUMENT);
  const char *k5[] = {"rate"}, *v5[] = {"2"};
  EXPECT_EQ(mxc_block_create("dropout", nullptr, k5, v5, 1, &b), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_block_create("dense", nullptr, k, v, 1, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(b, nullptr);

  // Forward without initializer, wrong input counts, NULL inputs.
  mxc_block d = block("dense", {"units", "2"});
  mxc_ndarray x = make({1, 3}, {1, 2, 3}), y = nullptr;
  EXPECT_EQ(mxc_block_forward(d, 1, &x, &y), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("initialize"), std::string::npos);
  mxc_ndarray two[2] = {x, x};
  EXPECT_EQ(mxc_block_forward(d, 2, two, &y), MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray null_in = nullptr;
  EXPECT_NE(mxc_block_forward(d, 1, &null_in, &y), MXC_OK);
  EXPECT_EQ(mxc_block_initialize(d, "", nullptr, nullptr, 0, 0), MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc_block_initialize(d, "nonsense", nullptr, nullptr, 0, 0), MXC_OK);
  EXPECT_NE(mxc_block_forward(d, 1, &x, &y), MXC_OK);
  EXPECT_NE(std::string(mxc_last_error()).find("nonsense"), std::string::npos)
      << mxc_last_error();
  EXPECT_EQ(y, nullptr);
  // Children only for containers; no cycles.
  mxc_block s = block("sequential", {}), t = block("sequential", {});
  EXPECT_EQ(mxc_block_add(d, s), MXC_ERR_INVALID_ARGUMENT);
  OK(mxc_block_add(s, t));
  EXPECT_EQ(mxc_block_add(t, s), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_block_add(s, s), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_block_forward(t, 1, &x, &y), MXC_ERR_INVALID_ARGUMENT);  // empty
  mxc_block c = nullptr;
  EXPECT_EQ(mxc_block_child(s, 1, &c), MXC_ERR_INVALID_ARGUMENT);
  // Optimizers by name: only update operators.
  mxc_optimizer o = nullptr;
  EXPECT_EQ(mxc_optimizer_create(d, "relu", nullptr, nullptr, 0, &o), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxc_optimizer_create(d, "nosuch_update", nullptr, nullptr, 0, &o), MXC_OK);
  const char *ok[] = {"momentumm"}, *ov[] = {"0.9"};
  EXPECT_EQ(mxc_optimizer_create(d, "sgd_mom_update", ok, ov, 1, &o), MXC_ERR_INVALID_ARGUMENT);
  const char *lk[] = {"lr"}, *lv[] = {"fast"};
  EXPECT_EQ(mxc_optimizer_create(d, "sgd_update", lk, lv, 1, &o), MXC_ERR_INVALID_ARGUMENT);
  OK(mxc_optimizer_create(d, "sgd_update", nullptr, nullptr, 0, &o));
  EXPECT_EQ(mxc_optimizer_step(o, 1), MXC_ERR_INVALID_ARGUMENT);  // not made yet
  mxc_optimizer_free(o);
  // A user block whose function fails or returns nothing.
  mxc_block u = nullptr;
  EXPECT_EQ(mxc_block_create_user(nullptr, nullptr, nullptr, count_free, &u),
            MXC_ERR_INVALID_ARGUMENT);
  auto nothing = [](void *, mxc_block, int, const mxc_ndarray *, mxc_ndarray *) {
    return MXC_OK;
  };
  OK(mxc_block_create_user(nullptr, nothing, nullptr, nullptr, &u));
  EXPECT_EQ(mxc_block_forward(u, 1, &x, &y), MXC_ERR_INVALID_ARGUMENT);
  // A failing function's own reason reaches the caller; a bare code gets a
  // message of its own, not an older failure's.
  auto reasoned = [](void *, mxc_block, int, const mxc_ndarray *,
                     mxc_ndarray *) {
    return mxc_set_last_error(MXC_ERR_SHAPE, "needs 4 channels, got 3");
  };
  auto bare = [](void *, mxc_block, int, const mxc_ndarray *, mxc_ndarray *) {
    return MXC_ERR_DTYPE;
  };
  mxc_block r = nullptr, bb = nullptr;
  OK(mxc_block_create_user(nullptr, reasoned, nullptr, nullptr, &r));
  OK(mxc_block_create_user(nullptr, bare, nullptr, nullptr, &bb));
  EXPECT_EQ(mxc_block_forward(r, 1, &x, &y), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(mxc_last_error()).find("needs 4 channels, got 3"),
            std::string::npos)
      << mxc_last_error();
  EXPECT_EQ(mxc_block_forward(bb, 1, &x, &y), MXC_ERR_DTYPE);
  EXPECT_NE(std::string(mxc_last_error()).find("returned 4 (MXC_ERR_DTYPE)"),
            std::string::npos)
      << mxc_last_error();
  EXPECT_EQ(std::string(mxc_last_error()).find("needs 4 channels"),
            std::string::npos)
      << mxc_last_error();
  mxc_ndarray_free(x);
  for (mxc_block e : {d, s, t, u, r, bb}) mxc_block_free(e);
}

}  // namespace
