// Pooling against a nested-loop reference written here for every pool
// type, both conventions, count_include_pad and global pooling, in 1-D,
// 2-D and 3-D; gradients by finite differences; max ties; bad input.
#include <algorithm>
#include <limits>
#include <string>

#include "tests/ops/linalg/linalg_test_util.h"

using namespace mxct;

namespace {

std::string tup(const Shape &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

struct PoolCfg {
  Shape data;
  Shape kernel, stride, pad;
  std::string type;        // max, avg, sum
  std::string convention;  // valid, full
  bool cip;                // count_include_pad
  bool global;
};

Params params_of(const PoolCfg &c) {
  Params p = {{"pool_type", c.type},
              {"pooling_convention", c.convention},
              {"count_include_pad", c.cip ? "true" : "false"}};
  if (c.global) {
    p.push_back({"global_pool", "true"});
  } else {
    p.push_back({"kernel", tup(c.kernel)});
    p.push_back({"stride", tup(c.stride)});
    p.push_back({"pad", tup(c.pad)});
  }
  return p;
}

// Reference over 3-D-padded extents. Window o on an axis: [o*s - p,
// min(o*s - p + k, in + p)), which is the avg divisor's extent when
// count_include_pad; the elements read are that range clipped to [0, in).
struct Ref {
  Shape shape;
  std::vector<double> y;
};

Ref ref_pool(const PoolCfg &c, const std::vector<double> &x) {
  size_t nsp = c.data.size() - 2, lead = 3 - nsp;
  int64_t in[3], k[3], s[3], p[3], out[3];
  Ref r;
  r.shape = {c.data[0], c.data[1]};
  for (size_t i = 0; i < 3; ++i) {
    bool real = i >= lead;
    size_t j = i - lead;
    in[i] = real ? c.data[2 + j] : 1;
    k[i] = !real ? 1 : c.global ? in[i] : c.kernel[j];
    s[i] = !real || c.global ? 1 : c.stride[j];
    p[i] = !real || c.global ? 0 : c.pad[j];
    double q = double(in[i] + 2 * p[i] - k[i]) / double(s[i]);
    out[i] =
        (int64_t)(c.convention == "full" ? std::ceil(q) : std::floor(q)) + 1;
    if (real) r.shape.push_back(out[i]);
  }
  int64_t planes = c.data[0] * c.data[1];
  int64_t in_n = in[0] * in[1] * in[2];
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b)
        for (int64_t e = 0; e < out[2]; ++e) {
          int64_t o[3] = {a, b, e}, lo[3], hi[3], padded = 1, count = 0;
          for (int i = 0; i < 3; ++i) {
            int64_t st = o[i] * s[i] - p[i];
            int64_t en = std::min(st + k[i], in[i] + p[i]);
            padded *= en - st;
            lo[i] = std::max<int64_t>(st, 0);
            hi[i] = std::min(en, in[i]);
          }
          double mx = -std::numeric_limits<double>::infinity(), sum = 0;
          for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
            for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1)
              for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
                double v =
                    x[(size_t)(pl * in_n + (i0 * in[1] + i1) * in[2] + i2)];
                mx = std::max(mx, v);
                sum += v;
                ++count;
              }
          double v = 0;
          if (count > 0) {
            if (c.type == "max") v = mx;
            if (c.type == "sum") v = sum;
            if (c.type == "avg") v = sum / double(c.cip ? padded : count);
          }
          r.y.push_back(v);
        }
  return r;
}

std::vector<PoolCfg> cases() {
  std::vector<PoolCfg> v;
  for (const char *t : {"max", "avg", "sum"}) {
    for (const char *cv : {"valid", "full"}) {
      for (bool cip : {true, false}) {
        v.push_back({{2, 3, 10}, {3}, {2}, {1}, t, cv, cip, false});
        v.push_back({{2, 2, 7, 6}, {3, 2}, {2, 2}, {1, 0}, t, cv, cip, false});
        v.push_back({{1, 2, 5, 4, 6},
                     {2, 2, 3},
                     {2, 1, 2},
                     {1, 0, 1},
                     t,
                     cv,
                     cip,
                     false});
        // full: a last window hanging past the input (5 = 2*2 + 1)
        v.push_back({{1, 1, 5}, {2}, {2}, {0}, t, cv, cip, false});
        // full: a last window beyond the input entirely
        v.push_back({{1, 2, 5}, {1}, {3}, {0}, t, cv, cip, false});
      }
    }
    v.push_back({{2, 3, 5}, {}, {}, {}, t, "valid", true, true});
    v.push_back({{2, 3, 4, 5}, {}, {}, {}, t, "valid", true, true});
    v.push_back({{1, 2, 3, 2, 4}, {}, {}, {}, t, "valid", true, true});
  }
  return v;
}

class Pool : public ::testing::TestWithParam<PoolCfg> {};

TEST_P(Pool, MatchesReference) {
  const PoolCfg &c = GetParam();
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr x = make(c.data, uniform(numel(c.data), -2, 2, 1), dt);
    auto out = invoke("Pooling", {&x}, params_of(c));
    ASSERT_EQ(out.size(), 1u);
    Ref r = ref_pool(c, read(x));
    EXPECT_EQ(out[0].shape(), r.shape);
    expect_close(read(out[0]), r.y, dt,
                 c.type + " " + c.convention + " " + tup(c.data));
  }
}

TEST_P(Pool, Gradient) {
  const PoolCfg &c = GetParam();
  if (numel(c.data) > 80) return;  // keep finite differences cheap
  grad_check("Pooling", {c.data}, {uniform(numel(c.data), -2, 2, 2)},
             params_of(c));
}

INSTANTIATE_TEST_SUITE_P(All, Pool, ::testing::ValuesIn(cases()));

TEST(PoolExtra, GradientsOnLargerShapes) {
  for (const char *t : {"max", "avg", "sum"}) {
    PoolCfg c = {{1, 2, 5, 4}, {3, 2}, {2, 1}, {1, 1}, t, "full", false, false};
    grad_check("Pooling", {c.data}, {uniform(numel(c.data), -2, 2, 3)},
               params_of(c));
    PoolCfg g = {{2, 2, 3, 3, 2}, {2, 2, 2}, {1, 1, 1}, {0, 1, 0}, t,
                 "valid",         true,      false};
    grad_check("Pooling", {g.data}, {uniform(numel(g.data), -2, 2, 4)},
               params_of(g));
  }
}

TEST(PoolExtra, MaxGradientGoesToFirstMaximumOnTies) {
  // Windows of 2x2 over a plane of equal values: each window's gradient
  // lands on its top-left element.
  Arr x = make({1, 1, 2, 4}, {5, 5, 5, 5, 5, 5, 5, 5}, MXC_DTYPE_FLOAT64);
  Arr g = make({1, 1, 1, 2}, {1, 10}, MXC_DTYPE_FLOAT64);
  Params p = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}};
  auto dx = invoke("_backward_Pooling", {&g, &x}, p);
  ASSERT_EQ(dx.size(), 1u);
  EXPECT_EQ(read(dx[0]), std::vector<double>({1, 0, 10, 0, 0, 0, 0, 0}));
  // Overlapping windows accumulate on a shared maximum.
  Arr x1 = make({1, 1, 5}, {0, 3, 9, 1, 2}, MXC_DTYPE_FLOAT64);
  Arr g1 = make({1, 1, 3}, {1, 2, 4}, MXC_DTYPE_FLOAT64);
  auto dx1 = invoke("_backward_Pooling", {&g1, &x1},
                    {{"kernel", "(3,)"}, {"stride", "(1,)"}});
  EXPECT_EQ(read(dx1[0]), std::vector<double>({0, 0, 7, 0, 0}));
}

TEST(PoolExtra, BadInput) {
  Arr x = make({1, 2, 3, 3}, uniform(18, 0, 1));
  int rc = 0;
  invoke("Pooling", {&x}, {{"kernel", "(4,4)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("larger than the padded input"), std::string::npos)
      << err();
  invoke("Pooling", {&x}, {{"kernel", "(4,4)"}, {"pad", "(1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_OK) << err();
  invoke("Pooling", {&x}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("global_pool"), std::string::npos) << err();
  invoke("Pooling", {&x}, {{"kernel", "(2,2)"}, {"layout", "NHWC"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("NHWC"), std::string::npos) << err();
  invoke("Pooling", {&x}, {{"kernel", "(2,2)"}, {"stride", "(1,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("stride"), std::string::npos) << err();
  invoke("Pooling", {&x}, {{"kernel", "(2,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  invoke("Pooling", {&x}, {{"kernel", "(2,2)"}, {"pool_type", "lp"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("pool_type"), std::string::npos) << err();
  invoke("Pooling", {&x}, {{"kernel", "(2,2)"}, {"pooling_convention", "same"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr v = make({4}, {1, 2, 3, 4});
  invoke("Pooling", {&v}, {{"global_pool", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  Arr xi = make({1, 1, 2, 2}, {1, 2, 3, 4}, MXC_DTYPE_INT32);
  invoke("Pooling", {&xi}, {{"kernel", "(2,2)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
}

}  // namespace
