// float16 and bfloat16 in dot, batch_dot, FullyConnected, Convolution,
// Deconvolution and Pooling. MXNet computes half precision in float32 and
// stores half; so does mxc (core/op/half_compute.h). Two checks per case:
//  - against a naive float64 reference from the same (half) input values,
//    within what half storage allows: the result is rounded once to half
//    (relative error <= 2^-11 for float16, 2^-8 for bfloat16) after a
//    float32 accumulation (<= k * 2^-24 of the sum of |terms|);
//  - bit for bit against the float32 operator's result on the same values,
//    rounded to half by the test's own conversion (the compiler's _Float16,
//    op_test_util.cc): half precision changes storage, not the arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace mxct {
namespace {

const int kHalves[] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16};

// v rounded to dtype (through the test's own conversion).
std::vector<double> rounded(const std::vector<double> &v, int dtype) {
  return decode(encode(v, dtype), dtype);
}

double unit_roundoff(int dtype) {
  return dtype == MXC_DTYPE_FLOAT16 ? std::ldexp(1.0, -11)
                                    : std::ldexp(1.0, -8);
}

// got (half) against ref (float64) where mag[i] is the sum of |terms| of
// element i and k the number of terms.
void expect_half_close(const std::vector<double> &got,
                       const std::vector<double> &ref,
                       const std::vector<double> &mag, int k, int dtype,
                       const char *what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    double tol = unit_roundoff(dtype) * std::fabs(ref[i]) +
                 (k + 2) * std::ldexp(1.0, -24) * mag[i] + 1e-7;
    EXPECT_NEAR(got[i], ref[i], tol) << what << " element " << i;
  }
}

// The operator on half inputs equals its float32 result rounded to half.
void expect_matches_f32(const std::string &op, const std::vector<Shape> &shapes,
                        const std::vector<std::vector<double>> &vals,
                        const Params &p, int dtype) {
  std::vector<Arr> h, f;
  std::vector<const Arr *> hp, fp;
  for (size_t i = 0; i < shapes.size(); ++i) {
    h.push_back(make(shapes[i], vals[i], dtype));
    f.push_back(make(shapes[i], vals[i], MXC_DTYPE_FLOAT32));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    hp.push_back(&h[i]);
    fp.push_back(&f[i]);
  }
  int rc = -1;
  auto oh = invoke(op, hp, p, &rc);
  ASSERT_EQ(rc, MXC_OK) << op << ": " << err();
  auto of = invoke(op, fp, p, &rc);
  ASSERT_EQ(rc, MXC_OK) << op << ": " << err();
  ASSERT_EQ(oh.size(), of.size());
  for (size_t j = 0; j < oh.size(); ++j) {
    EXPECT_EQ(oh[j].dtype(), dtype) << op;
    EXPECT_EQ(oh[j].shape(), of[j].shape()) << op;
    auto want = rounded(read(of[j]), dtype);
    auto got = read(oh[j]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << op << " output " << j << " element " << i;
    }
  }
}

TEST(Half, FullyConnectedAgainstNaive) {
  const int64_t n = 3, in = 37, hid = 5;
  for (int dt : kHalves) {
    auto x = rounded(uniform(n * in, -1, 1, 1), dt);
    auto w = rounded(uniform(hid * in, -1, 1, 2), dt);
    auto b = rounded(uniform(hid, -1, 1, 3), dt);
    Arr ax = make({n, in}, x, dt), aw = make({hid, in}, w, dt),
        ab = make({hid}, b, dt);
    int rc = -1;
    auto out = invoke("FullyConnected", {&ax, &aw, &ab},
                      {{"num_hidden", "5"}}, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    EXPECT_EQ(out[0].dtype(), dt);
    std::vector<double> ref(n * hid), mag(n * hid);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < hid; ++j) {
        double s = b[j], m = std::fabs(b[j]);
        for (int64_t p = 0; p < in; ++p) {
          s += x[i * in + p] * w[j * in + p];
          m += std::fabs(x[i * in + p] * w[j * in + p]);
        }
        ref[i * hid + j] = s;
        mag[i * hid + j] = m;
      }
    }
    expect_half_close(read(out[0]), ref, mag, (int)in + 1, dt, "FC");
    expect_matches_f32("FullyConnected", {{n, in}, {hid, in}, {hid}},
                       {x, w, b}, {{"num_hidden", "5"}}, dt);
  }
}

TEST(Half, FullyConnectedBackward) {
  const int64_t n = 4, in = 6, hid = 3;
  for (int dt : kHalves) {
    auto g = rounded(uniform(n * hid, -1, 1, 4), dt);
    auto x = rounded(uniform(n * in, -1, 1, 5), dt);
    auto w = rounded(uniform(hid * in, -1, 1, 6), dt);
    auto b = rounded(uniform(hid, -1, 1, 7), dt);
    Arr ag = make({n, hid}, g, dt), ax = make({n, in}, x, dt),
        aw = make({hid, in}, w, dt), ab = make({hid}, b, dt);
    int rc = -1;
    auto out = invoke("_backward_FullyConnected", {&ag, &ax, &aw, &ab},
                      {{"num_hidden", "3"}}, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    ASSERT_EQ(out.size(), 3u);
    std::vector<double> dx(n * in, 0), mdx(n * in, 0);
    std::vector<double> dw(hid * in, 0), mdw(hid * in, 0);
    std::vector<double> db(hid, 0), mdb(hid, 0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < hid; ++j) {
        double gij = g[i * hid + j];
        db[j] += gij;
        mdb[j] += std::fabs(gij);
        for (int64_t p = 0; p < in; ++p) {
          dx[i * in + p] += gij * w[j * in + p];
          mdx[i * in + p] += std::fabs(gij * w[j * in + p]);
          dw[j * in + p] += gij * x[i * in + p];
          mdw[j * in + p] += std::fabs(gij * x[i * in + p]);
        }
      }
    }
    expect_half_close(read(out[0]), dx, mdx, (int)hid, dt, "d data");
    expect_half_close(read(out[1]), dw, mdw, (int)n, dt, "d weight");
    expect_half_close(read(out[2]), db, mdb, (int)n, dt, "d bias");
  }
}

TEST(Half, DotAndBatchDot) {
  for (int dt : kHalves) {
    const int64_t m = 4, k = 33, n = 3;
    auto a = rounded(uniform(m * k, -2, 2, 8), dt);
    auto bt = rounded(uniform(n * k, -2, 2, 9), dt);  // stored (n, k)
    Arr aa = make({m, k}, a, dt), ab = make({n, k}, bt, dt);
    int rc = -1;
    auto out = invoke("dot", {&aa, &ab}, {{"transpose_b", "true"}}, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    std::vector<double> ref(m * n), mag(m * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, g = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += a[i * k + p] * bt[j * k + p];
          g += std::fabs(a[i * k + p] * bt[j * k + p]);
        }
        ref[i * n + j] = s;
        mag[i * n + j] = g;
      }
    }
    expect_half_close(read(out[0]), ref, mag, (int)k, dt, "dot");
    expect_matches_f32("dot", {{m, k}, {n, k}}, {a, bt},
                       {{"transpose_b", "true"}}, dt);
    // batch_dot: two batches of (2, 5) x (5, 3).
    auto x = rounded(uniform(2 * 2 * 5, -1, 1, 10), dt);
    auto y = rounded(uniform(2 * 5 * 3, -1, 1, 11), dt);
    Arr ax = make({2, 2, 5}, x, dt), ay = make({2, 5, 3}, y, dt);
    auto bo = invoke("batch_dot", {&ax, &ay}, {}, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    std::vector<double> bref(2 * 2 * 3), bmag(2 * 2 * 3);
    for (int b = 0; b < 2; ++b) {
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) {
          double s = 0, g = 0;
          for (int p = 0; p < 5; ++p) {
            double t = x[b * 10 + i * 5 + p] * y[b * 15 + p * 3 + j];
            s += t;
            g += std::fabs(t);
          }
          bref[b * 6 + i * 3 + j] = s;
          bmag[b * 6 + i * 3 + j] = g;
        }
      }
    }
    expect_half_close(read(bo[0]), bref, bmag, 5, dt, "batch_dot");
  }
}

TEST(Half, ConvolutionAgainstNaive) {
  // (1, 2, 5, 5) * (3, 2, 3, 3), pad 1, stride 2.
  for (int dt : kHalves) {
    auto x = rounded(uniform(2 * 25, -1, 1, 12), dt);
    auto w = rounded(uniform(3 * 2 * 9, -1, 1, 13), dt);
    auto b = rounded(uniform(3, -1, 1, 14), dt);
    Params p = {{"kernel", "(3,3)"}, {"num_filter", "3"},
                {"pad", "(1,1)"}, {"stride", "(2,2)"}};
    Arr ax = make({1, 2, 5, 5}, x, dt), aw = make({3, 2, 3, 3}, w, dt),
        ab = make({3}, b, dt);
    int rc = -1;
    auto out = invoke("Convolution", {&ax, &aw, &ab}, p, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    ASSERT_EQ(out[0].shape(), (Shape{1, 3, 3, 3}));
    std::vector<double> ref(27), mag(27);
    for (int f = 0; f < 3; ++f) {
      for (int oy = 0; oy < 3; ++oy) {
        for (int ox = 0; ox < 3; ++ox) {
          double s = b[f], g = std::fabs(b[f]);
          for (int c = 0; c < 2; ++c) {
            for (int ky = 0; ky < 3; ++ky) {
              for (int kx = 0; kx < 3; ++kx) {
                int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
                double t = x[c * 25 + iy * 5 + ix] * w[f * 18 + c * 9 + ky * 3 + kx];
                s += t;
                g += std::fabs(t);
              }
            }
          }
          ref[f * 9 + oy * 3 + ox] = s;
          mag[f * 9 + oy * 3 + ox] = g;
        }
      }
    }
    expect_half_close(read(out[0]), ref, mag, 19, dt, "Convolution");
    expect_matches_f32("Convolution", {{1, 2, 5, 5}, {3, 2, 3, 3}, {3}},
                       {x, w, b}, p, dt);
    expect_matches_f32("Deconvolution", {{1, 2, 5, 5}, {2, 3, 3, 3}},
                       {x, w}, {{"kernel", "(3,3)"}, {"num_filter", "3"},
                                {"no_bias", "true"}}, dt);
  }
}

TEST(Half, PoolingAgainstNaive) {
  for (int dt : kHalves) {
    auto x = rounded(uniform(2 * 16, -3, 3, 15), dt);
    Arr ax = make({1, 2, 4, 4}, x, dt);
    for (const char *type : {"max", "avg", "sum"}) {
      Params p = {{"kernel", "(2,2)"}, {"stride", "(2,2)"},
                  {"pool_type", type}};
      int rc = -1;
      auto out = invoke("Pooling", {&ax}, p, &rc);
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(out[0].dtype(), dt);
      std::vector<double> ref(8), mag(8);
      for (int c = 0; c < 2; ++c) {
        for (int oy = 0; oy < 2; ++oy) {
          for (int ox = 0; ox < 2; ++ox) {
            double mx = -INFINITY, s = 0, g = 0;
            for (int ky = 0; ky < 2; ++ky) {
              for (int kx = 0; kx < 2; ++kx) {
                double v = x[c * 16 + (oy * 2 + ky) * 4 + ox * 2 + kx];
                mx = std::max(mx, v);
                s += v;
                g += std::fabs(v);
              }
            }
            int o = c * 4 + oy * 2 + ox;
            ref[o] = type[0] == 'm' ? mx : type[0] == 'a' ? s / 4 : s;
            mag[o] = g;
          }
        }
      }
      expect_half_close(read(out[0]), ref, mag, 4, dt, type);
      expect_matches_f32("Pooling", {{1, 2, 4, 4}}, {x}, p, dt);
    }
  }
}

// Sums that overflow half's range inside the product but not in the
// result: float32 accumulation keeps them finite (half accumulation would
// reach infinity), as MXNet's float32 accumulation does.
TEST(Half, AccumulatesInFloat32) {
  std::vector<double> a(64, 256.0), c(64);
  for (int i = 0; i < 64; ++i) c[i] = i % 2 ? -256.0 : 256.0;
  Arr x = make({1, 64}, a, MXC_DTYPE_FLOAT16);
  Arr y = make({64, 1}, c, MXC_DTYPE_FLOAT16);
  int rc = -1;
  auto out = invoke("dot", {&x, &y}, {}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  // Partial sums reach 65536 (> 65504, half's maximum) and come back.
  EXPECT_EQ(read(out[0]), std::vector<double>{0.0});
}

TEST(Half, MixedDtypesRejected) {
  Arr x = make({2, 3}, uniform(6, -1, 1), MXC_DTYPE_FLOAT16);
  Arr w = make({4, 3}, uniform(12, -1, 1), MXC_DTYPE_FLOAT32);
  int rc = MXC_OK;
  invoke("FullyConnected", {&x, &w}, {{"num_hidden", "4"}, {"no_bias", "1"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  Arr i = make({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_INT32);
  invoke("Pooling", {&i}, {{"kernel", "(1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("float16"), std::string::npos) << err();
}

}  // namespace
}  // namespace mxct
