// dot, batch_dot and FullyConnected against naive triple loops written
// here, in float32 and float64; gradients by finite differences; bad
// input.
#include <string>

#include "tests/ops/linalg/linalg_test_util.h"

using namespace mxct;

namespace {

// Reference dot with MXNet's semantics, spelled out independently: lhs as
// an (m, k) matrix (transpose_a: stored (k, m)), rhs as (k, n) (transpose_b:
// stored (n, k)); C[i][j] = sum_p A(i,p) B(p,j).
std::vector<double> ref_matmul(const std::vector<double> &a,
                               const std::vector<double> &b, int64_t m,
                               int64_t n, int64_t k, bool ta, bool tb) {
  std::vector<double> c((size_t)(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a[(size_t)(p * m + i)] : a[(size_t)(i * k + p)];
        double bv = tb ? b[(size_t)(j * k + p)] : b[(size_t)(p * n + j)];
        s += av * bv;
      }
      c[(size_t)(i * n + j)] = s;
    }
  return c;
}

Params dot_params(bool ta, bool tb) {
  return {{"transpose_a", ta ? "true" : "false"},
          {"transpose_b", tb ? "true" : "false"}};
}

TEST(Dot, MatrixAllTransposeCombos) {
  const int64_t m = 3, k = 4, n = 5;
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        auto av = uniform(m * k, -1, 1, 1), bv = uniform(k * n, -1, 1, 2);
        Arr a = make(ta ? Shape{k, m} : Shape{m, k}, av, dt);
        Arr b = make(tb ? Shape{n, k} : Shape{k, n}, bv, dt);
        auto out = invoke("dot", {&a, &b}, dot_params(ta, tb));
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].shape(), (Shape{m, n}));
        expect_close(read(out[0]),
                     ref_matmul(read(a), read(b), m, n, k, ta, tb), dt,
                     "ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
      }
    }
  }
}

TEST(Dot, Vectors) {
  Arr a = make({4}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT64);
  Arr b = make({4}, {5, 6, 7, 8}, MXC_DTYPE_FLOAT64);
  auto out = invoke("dot", {&a, &b});
  EXPECT_EQ(out[0].shape(), (Shape{1}));
  EXPECT_EQ(read(out[0]), std::vector<double>({70}));
  // vector . matrix and matrix . vector
  Arr m = make({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}, MXC_DTYPE_FLOAT64);
  auto vm = invoke("dot", {&a, &m});
  EXPECT_EQ(vm[0].shape(), (Shape{2}));
  EXPECT_EQ(read(vm[0]), ref_matmul(read(a), read(m), 1, 2, 4, false, false));
  auto mv = invoke("dot", {&m, &a}, dot_params(true, false));
  EXPECT_EQ(mv[0].shape(), (Shape{2}));
  EXPECT_EQ(read(mv[0]), ref_matmul(read(m), read(a), 2, 1, 4, true, false));
  int rc = 0;
  invoke("dot", {&a, &b}, dot_params(true, false), &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("cannot be transposed"), std::string::npos) << err();
}

// n-D: dot(x, y)[i, j, a, b] = sum_p x[i, j, p] y[p, a, b]; transpose_a
// contracts the first axis of x instead, transpose_b the last axis of y.
TEST(Dot, NDimensional) {
  auto xv = uniform(2 * 3 * 4, -1, 1, 3), yv = uniform(4 * 2 * 5, -1, 1, 4);
  Arr x = make({2, 3, 4}, xv, MXC_DTYPE_FLOAT64);
  Arr y = make({4, 2, 5}, yv, MXC_DTYPE_FLOAT64);
  auto out = invoke("dot", {&x, &y});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 2, 5}));
  std::vector<double> want(2 * 3 * 2 * 5, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 5; ++b)
          for (int p = 0; p < 4; ++p)
            want[((i * 3 + j) * 2 + a) * 5 + b] +=
                xv[(i * 3 + j) * 4 + p] * yv[(p * 2 + a) * 5 + b];
  expect_close(read(out[0]), want, MXC_DTYPE_FLOAT64, "n-D");

  // transpose_a on (4, 2, 3) . (4, 5): out[r, s, b] = sum_p x[p, r, s] y[p, b]
  auto x2v = uniform(4 * 2 * 3, -1, 1, 5), y2v = uniform(4 * 5, -1, 1, 6);
  Arr x2 = make({4, 2, 3}, x2v, MXC_DTYPE_FLOAT64);
  Arr y2 = make({4, 5}, y2v, MXC_DTYPE_FLOAT64);
  auto o2 = invoke("dot", {&x2, &y2}, dot_params(true, false));
  EXPECT_EQ(o2[0].shape(), (Shape{2, 3, 5}));
  std::vector<double> w2(2 * 3 * 5, 0.0);
  for (int r = 0; r < 6; ++r)
    for (int b = 0; b < 5; ++b)
      for (int p = 0; p < 4; ++p)
        w2[r * 5 + b] += x2v[p * 6 + r] * y2v[p * 5 + b];
  expect_close(read(o2[0]), w2, MXC_DTYPE_FLOAT64, "transpose_a n-D");

  // transpose_b on (3, 4) . (2, 5, 4): out[i, a, b] = sum_p x[i, p] y[a, b, p]
  auto x3v = uniform(3 * 4, -1, 1, 7), y3v = uniform(2 * 5 * 4, -1, 1, 8);
  Arr x3 = make({3, 4}, x3v, MXC_DTYPE_FLOAT64);
  Arr y3 = make({2, 5, 4}, y3v, MXC_DTYPE_FLOAT64);
  auto o3 = invoke("dot", {&x3, &y3}, dot_params(false, true));
  EXPECT_EQ(o3[0].shape(), (Shape{3, 2, 5}));
  std::vector<double> w3(3 * 10, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int r = 0; r < 10; ++r)
      for (int p = 0; p < 4; ++p)
        w3[i * 10 + r] += x3v[i * 4 + p] * y3v[r * 4 + p];
  expect_close(read(o3[0]), w3, MXC_DTYPE_FLOAT64, "transpose_b n-D");
}

TEST(Dot, LargerThanBlockSizes) {
  // Sizes past OpenBLAS's blocking so its threaded paths run.
  const int64_t m = 130, k = 257, n = 70;
  auto av = uniform(m * k, -1, 1, 9), bv = uniform(k * n, -1, 1, 10);
  Arr a = make({m, k}, av, MXC_DTYPE_FLOAT32);
  Arr b = make({k, n}, bv, MXC_DTYPE_FLOAT32);
  auto out = invoke("dot", {&a, &b});
  expect_close(read(out[0]), ref_matmul(read(a), read(b), m, n, k, 0, 0),
               MXC_DTYPE_FLOAT32, "large", 16.0);
}

TEST(Dot, WriteModeAdd) {
  Arr a = make({2, 2}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT64);
  Arr b = make({2, 2}, {1, 0, 0, 1}, MXC_DTYPE_FLOAT64);
  Arr o = make({2, 2}, {10, 10, 10, 10}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("dot", &op), MXC_OK);
  mxc_ndarray ins[2] = {a.h, b.h}, outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, req),
            MXC_OK)
      << err();
  EXPECT_EQ(read(o), std::vector<double>({11, 12, 13, 14}));
}

TEST(Dot, Gradients) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Shape sa = ta ? Shape{4, 3} : Shape{3, 4};
      Shape sb = tb ? Shape{2, 4} : Shape{4, 2};
      grad_check("dot", {sa, sb},
                 {uniform(12, -1, 1, 11), uniform(8, -1, 1, 12)},
                 dot_params(ta, tb));
    }
  }
  grad_check("dot", {{5}, {5}}, {uniform(5, -1, 1, 13), uniform(5, -1, 1, 14)});
  grad_check("dot", {{2, 2, 3}, {3, 2}},
             {uniform(12, -1, 1, 15), uniform(6, -1, 1, 16)});
  grad_check("dot", {{3, 2, 2}, {2, 3}},
             {uniform(12, -1, 1, 17), uniform(6, -1, 1, 18)},
             dot_params(true, true));
}

TEST(Dot, BadInput) {
  Arr a = make({2, 3}, uniform(6, 0, 1));
  Arr b = make({4, 5}, uniform(20, 0, 1));
  int rc = 0;
  auto out = invoke("dot", {&a, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_TRUE(out.empty());
  EXPECT_NE(err().find("(2,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("(4,5)"), std::string::npos) << err();
  EXPECT_NE(err().find("inner dimensions differ"), std::string::npos) << err();
  Arr i = make({3, 2}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_INT32);
  Arr j = make({2, 3}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_INT32);
  invoke("dot", {&i, &j}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("float32 or float64"), std::string::npos) << err();
  Arr d = make({3, 2}, uniform(6, 0, 1), MXC_DTYPE_FLOAT64);
  invoke("dot", {&d, &j}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  invoke("dot", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("dot", {&a, &b}, {{"transpose_c", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("transpose_c"), std::string::npos) << err();
}

// ---- batch_dot ----

TEST(BatchDot, MatchesPerBatchReference) {
  const int64_t B = 3, m = 2, k = 4, n = 3;
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        auto av = uniform(B * m * k, -1, 1, 21),
             bv = uniform(B * k * n, -1, 1, 22);
        Arr a = make(ta ? Shape{B, k, m} : Shape{B, m, k}, av, dt);
        Arr b = make(tb ? Shape{B, n, k} : Shape{B, k, n}, bv, dt);
        auto out = invoke("batch_dot", {&a, &b}, dot_params(ta, tb));
        EXPECT_EQ(out[0].shape(), (Shape{B, m, n}));
        auto ra = read(a), rb = read(b), got = read(out[0]);
        for (int64_t i = 0; i < B; ++i) {
          std::vector<double> ai(ra.begin() + i * m * k,
                                 ra.begin() + (i + 1) * m * k);
          std::vector<double> bi(rb.begin() + i * k * n,
                                 rb.begin() + (i + 1) * k * n);
          std::vector<double> gi(got.begin() + i * m * n,
                                 got.begin() + (i + 1) * m * n);
          expect_close(gi, ref_matmul(ai, bi, m, n, k, ta, tb), dt, "batch");
        }
      }
    }
  }
}

TEST(BatchDot, GradientsAndBadInput) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Shape sa = ta ? Shape{2, 3, 2} : Shape{2, 2, 3};
      Shape sb = tb ? Shape{2, 4, 3} : Shape{2, 3, 4};
      grad_check("batch_dot", {sa, sb},
                 {uniform(12, -1, 1, 23), uniform(24, -1, 1, 24)},
                 dot_params(ta, tb));
    }
  }
  Arr a = make({2, 2, 3}, uniform(12, 0, 1));
  Arr b = make({2, 4, 3}, uniform(24, 0, 1));
  Arr c = make({3, 3, 4}, uniform(36, 0, 1));
  Arr v = make({3, 4}, uniform(12, 0, 1));
  int rc = 0;
  invoke("batch_dot", {&a, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(2,2,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("(2,4,3)"), std::string::npos) << err();
  invoke("batch_dot", {&a, &c}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("batch axes differ"), std::string::npos) << err();
  invoke("batch_dot", {&v, &v}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
}

// ---- FullyConnected ----

std::vector<double> ref_fc(const std::vector<double> &x,
                           const std::vector<double> &w,
                           const std::vector<double> *b, int64_t rows,
                           int64_t in, int64_t h) {
  std::vector<double> y((size_t)(rows * h), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < h; ++j) {
      double s = b ? (*b)[(size_t)j] : 0.0;
      for (int64_t p = 0; p < in; ++p)
        s += x[(size_t)(r * in + p)] * w[(size_t)(j * in + p)];
      y[(size_t)(r * h + j)] = s;
    }
  return y;
}

TEST(FullyConnected, FlattenAndBias) {
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr x = make({2, 3, 2}, uniform(12, -1, 1, 31), dt);
    Arr w = make({4, 6}, uniform(24, -1, 1, 32), dt);
    Arr b = make({4}, uniform(4, -1, 1, 33), dt);
    auto out = invoke("FullyConnected", {&x, &w, &b}, {{"num_hidden", "4"}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (Shape{2, 4}));
    auto rb = read(b);
    expect_close(read(out[0]), ref_fc(read(x), read(w), &rb, 2, 6, 4), dt,
                 "flatten");
    auto nb = invoke("FullyConnected", {&x, &w},
                     {{"num_hidden", "4"}, {"no_bias", "true"}});
    expect_close(read(nb[0]), ref_fc(read(x), read(w), nullptr, 2, 6, 4), dt,
                 "no_bias");
  }
}

TEST(FullyConnected, NoFlattenUsesLastAxis) {
  Arr x = make({2, 3, 5}, uniform(30, -1, 1, 34), MXC_DTYPE_FLOAT64);
  Arr w = make({4, 5}, uniform(20, -1, 1, 35), MXC_DTYPE_FLOAT64);
  Arr b = make({4}, uniform(4, -1, 1, 36), MXC_DTYPE_FLOAT64);
  auto out = invoke("FullyConnected", {&x, &w, &b},
                    {{"num_hidden", "4"}, {"flatten", "false"}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 4}));
  auto rb = read(b);
  expect_close(read(out[0]), ref_fc(read(x), read(w), &rb, 6, 5, 4),
               MXC_DTYPE_FLOAT64, "flatten=false");
}

TEST(FullyConnected, Gradients) {
  grad_check(
      "FullyConnected", {{2, 3}, {4, 3}, {4}},
      {uniform(6, -1, 1, 41), uniform(12, -1, 1, 42), uniform(4, -1, 1, 43)},
      {{"num_hidden", "4"}});
  grad_check("FullyConnected", {{2, 2, 2}, {3, 4}},
             {uniform(8, -1, 1, 44), uniform(12, -1, 1, 45)},
             {{"num_hidden", "3"}, {"no_bias", "true"}});
  grad_check(
      "FullyConnected", {{2, 2, 3}, {2, 3}, {2}},
      {uniform(12, -1, 1, 46), uniform(6, -1, 1, 47), uniform(2, -1, 1, 48)},
      {{"num_hidden", "2"}, {"flatten", "false"}});
}

TEST(FullyConnected, InfersWeightShapesFromData) {
  InferResult r =
      infer_from_data("FullyConnected", {{"num_hidden", "7"}}, 3, {5, 2, 3});
  ASSERT_EQ(r.rc, MXC_OK) << r.msg;
  EXPECT_EQ(r.in[1], (Shape{7, 6}));
  EXPECT_EQ(r.in[2], (Shape{7}));
  EXPECT_EQ(r.out[0], (Shape{5, 7}));
  r = infer_from_data(
      "FullyConnected",
      {{"num_hidden", "7"}, {"flatten", "false"}, {"no_bias", "true"}}, 2,
      {5, 2, 3});
  ASSERT_EQ(r.rc, MXC_OK) << r.msg;
  EXPECT_EQ(r.in[1], (Shape{7, 3}));
  EXPECT_EQ(r.out[0], (Shape{5, 2, 7}));
}

TEST(FullyConnected, IntrospectionListsOptionalBias) {
  for (const char *name : {"FullyConnected", "Convolution", "Deconvolution"}) {
    mxc_op op;
    ASSERT_EQ(mxc_op_find(name, &op), MXC_OK);
    int n = 0, variadic = 1;
    ASSERT_EQ(mxc_op_inputs(op, &n, &variadic), MXC_OK);
    EXPECT_EQ(n, 3) << name;
    EXPECT_EQ(variadic, 0) << name;
    const char *in = nullptr;
    ASSERT_EQ(mxc_op_input_name(op, 2, &in), MXC_OK);
    EXPECT_STREQ(in, "bias");
    const char *k[] = {"no_bias", "num_hidden", "kernel", "num_filter"};
    const char *v[] = {"true", "4", "(3,3)", "4"};
    // FullyConnected takes num_hidden, the convolutions kernel/num_filter.
    bool fc = std::string(name) == "FullyConnected";
    const char *kk[] = {k[0], fc ? k[1] : k[2], k[3]};
    const char *vv[] = {v[0], fc ? v[1] : v[2], v[3]};
    int count = 0;
    ASSERT_EQ(mxc_op_num_inputs(op, kk, vv, fc ? 2 : 3, &count), MXC_OK)
        << err();
    EXPECT_EQ(count, 2) << name;
  }
}

TEST(FullyConnected, BadInput) {
  Arr x = make({2, 3}, uniform(6, 0, 1));
  Arr w = make({4, 3}, uniform(12, 0, 1));
  Arr wbad = make({4, 5}, uniform(20, 0, 1));
  Arr b = make({4}, uniform(4, 0, 1));
  int rc = 0;
  invoke("FullyConnected", {&x, &wbad, &b}, {{"num_hidden", "4"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("weight"), std::string::npos) << err();
  EXPECT_NE(err().find("(4,5)"), std::string::npos) << err();
  EXPECT_NE(err().find("(4,3)"), std::string::npos) << err();
  // no_bias with three inputs
  invoke("FullyConnected", {&x, &w, &b},
         {{"num_hidden", "4"}, {"no_bias", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 3 inputs; expected 2"), std::string::npos) << err();
  invoke("FullyConnected", {&x, &w, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_hidden"), std::string::npos) << err();
  invoke("FullyConnected", {&x, &w, &b}, {{"num_hidden", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
