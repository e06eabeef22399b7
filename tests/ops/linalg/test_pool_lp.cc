// Pooling's lp type (p_value 1, 2, 3: the window's sum of x^p, then the
// p-th root, without absolute values, as MXNet) and the 'same' convention
// (1-D, ceil(in / stride) windows clipped at the end) against loops
// written here; gradients by finite differences; bad parameters.
#include <cmath>
#include <string>

#include "tests/ops/linalg/linalg_test_util.h"

using namespace mxct;

namespace {

TEST(PoolLp, MatchesReference) {
  auto xv = uniform(2 * 3 * 5 * 4, -1, 1, 901);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-13 : 2e-6;
    Arr x = make({2, 3, 5, 4}, xv, dt);
    for (int p : {1, 2, 3}) {
      auto y = invoke("Pooling", {&x},
                      {{"pool_type", "lp"},
                       {"p_value", std::to_string(p)},
                       {"kernel", "(2,2)"},
                       {"stride", "(1,2)"}});
      EXPECT_EQ(y[0].shape(), Shape({2, 3, 4, 2}));
      // window (r, c) covers rows r..r+1 and columns 2c..2c+1
      std::vector<double> w2;
      auto xs = read(x);
      for (int64_t pl = 0; pl < 6; ++pl)
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t c = 0; c < 2; ++c) {
            double acc = 0;
            for (int i = 0; i < 2; ++i)
              for (int j = 0; j < 2; ++j)
                acc += std::pow(xs[(pl * 5 + r + i) * 4 + 2 * c + j], p);
            w2.push_back(p == 1 ? acc : p == 2 ? std::sqrt(acc) : std::cbrt(acc));
          }
      auto got = read(y[0]);
      ASSERT_EQ(got.size(), w2.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], w2[i], tol * (1 + std::fabs(w2[i]))) << "p " << p;
    }
  }
}

TEST(PoolLp, Gradient) {
  // Values away from 0 so that no window's output is near 0.
  auto xv = uniform(1 * 2 * 4 * 4, 0.3, 1, 902);
  for (const char *p : {"1", "2", "3"}) {
    grad_check("Pooling", {{1, 2, 4, 4}}, {xv},
               {{"pool_type", "lp"}, {"p_value", p}, {"kernel", "(2,2)"},
                {"stride", "(2,1)"}});
  }
}

TEST(PoolSame, OneDimensionalCeil) {
  auto xv = uniform(1 * 2 * 7, -1, 1, 903);
  Arr x = make({1, 2, 7}, xv, MXC_DTYPE_FLOAT64);
  for (const char *type : {"max", "sum"}) {
    auto y = invoke("Pooling", {&x},
                    {{"pool_type", type},
                     {"pooling_convention", "same"},
                     {"kernel", "(3,)"},
                     {"stride", "(2,)"}});
    EXPECT_EQ(y[0].shape(), Shape({1, 2, 4}));  // ceil(7 / 2)
    std::vector<double> want;
    for (int c = 0; c < 2; ++c)
      for (int o = 0; o < 4; ++o) {
        double v = std::string(type) == "max" ? -INFINITY : 0;
        for (int i = 2 * o; i < std::min(2 * o + 3, 7); ++i)
          v = std::string(type) == "max" ? std::max(v, xv[c * 7 + i])
                                         : v + xv[c * 7 + i];
        want.push_back(v);
      }
    auto got = read(y[0]);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-15);
  }
  grad_check("Pooling", {{1, 2, 7}}, {xv},
             {{"pool_type", "sum"}, {"pooling_convention", "same"},
              {"kernel", "(3,)"}, {"stride", "(2,)"}});
}

TEST(PoolLpSame, BadParameters) {
  Arr x = make({1, 1, 4, 4}, uniform(16, -1, 1));
  int rc = 0;
  invoke("Pooling", {&x}, {{"pool_type", "lp"}, {"kernel", "(2,2)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("p_value"), std::string::npos) << err();
  invoke("Pooling", {&x},
         {{"pool_type", "lp"}, {"p_value", "4"}, {"kernel", "(2,2)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("Pooling", {&x}, {{"pooling_convention", "same"}, {"kernel", "(2,2)"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("1-D"), std::string::npos) << err();
  Arr v = make({1, 1, 4}, uniform(4, -1, 1));
  invoke("Pooling", {&v},
         {{"pooling_convention", "same"}, {"kernel", "(2,)"}, {"pad", "(1,)"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
