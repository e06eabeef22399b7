// GridGenerator, BilinearSampler and SpatialTransformer against torch
// (affine_grid / grid_sample with align_corners, via make_golden.py),
// gradients by finite differences, and bad input.
#include "tests/ops/vision/golden.h"

using mxct::Arr;
using mxct::make;

namespace {

void run_all(const char *op) {
  for (const auto &c : vist::cases_of(op)) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-5, 1e-5);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-10, 1e-10);
  }
}

TEST(GridGenerator, Golden) { run_all("GridGenerator"); }
TEST(BilinearSampler, Golden) { run_all("BilinearSampler"); }
TEST(SpatialTransformer, Golden) { run_all("SpatialTransformer"); }

TEST(GridGenerator, GradientByFiniteDifferences) {
  mxct::grad_check("GridGenerator", {{2, 6}}, {mxct::uniform(12, -1, 1, 7)},
                   {{"transform_type", "affine"}, {"target_shape", "(3,4)"}});
  mxct::grad_check("GridGenerator", {{1, 2, 3, 5}},
                   {mxct::uniform(30, -2, 2, 8)}, {{"transform_type", "warp"}});
}

TEST(BilinearSampler, GradientByFiniteDifferences) {
  // Grid points away from pixel centres (the sampler is piecewise
  // bilinear: finite differences across a pixel edge are not its
  // derivative), some outside the image.
  auto g = mxct::uniform(2 * 2 * 3 * 4, -1.2, 1.2, 9);
  for (auto &v : g) v = std::round(v * 4) / 4 + 0.1;
  mxct::grad_check("BilinearSampler", {{2, 3, 5, 5}, {2, 2, 3, 4}},
                   {mxct::uniform(150, -1, 1, 10), g});
}

TEST(SpatialTransformer, GradientByFiniteDifferences) {
  // Values chosen so that no grid point falls on a pixel edge, where the
  // sampler has a kink.
  std::vector<double> loc = {0.83, 0.11,  0.052, -0.21, 0.93, 0.097,
                             1.13, -0.31, -0.11, 0.23,  0.71, 0.021};
  mxct::grad_check("SpatialTransformer", {{2, 2, 5, 6}, {2, 6}},
                   {mxct::uniform(120, -1, 1, 11), loc},
                   {{"transform_type", "affine"},
                    {"sampler_type", "bilinear"},
                    {"target_shape", "(3,4)"}},
                   1e-6, 1e-4, 1e-6);
}

int rc_of(const std::string &op, const std::vector<const Arr *> &in,
          const mxct::Params &p) {
  int rc = MXC_OK;
  mxct::invoke(op, in, p, &rc);
  return rc;
}

TEST(GridGenerator, BadInput) {
  Arr theta = make({2, 6}, std::vector<double>(12, 0.5));
  Arr five = make({2, 5}, std::vector<double>(10, 0.5));
  mxct::Params aff = {{"transform_type", "affine"}, {"target_shape", "(2,2)"}};
  EXPECT_EQ(rc_of("GridGenerator", {&theta}, aff), MXC_OK) << mxct::err();
  EXPECT_EQ(rc_of("GridGenerator", {&five}, aff), MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of("GridGenerator", {&theta}, {{"transform_type", "affine"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxct::err().find("target_shape"), std::string::npos);
  EXPECT_EQ(rc_of("GridGenerator", {&theta}, {{"transform_type", "shear"}}),
            MXC_ERR_INVALID_ARGUMENT);
  Arr flow3 = make({1, 3, 2, 2}, std::vector<double>(12, 0.0));
  EXPECT_EQ(rc_of("GridGenerator", {&flow3}, {{"transform_type", "warp"}}),
            MXC_ERR_SHAPE);
}

TEST(BilinearSampler, BadInput) {
  Arr data = make({2, 1, 3, 3}, std::vector<double>(18, 1.0));
  Arr grid = make({2, 2, 2, 2}, std::vector<double>(16, 0.0));
  Arr grid1 = make({1, 2, 2, 2}, std::vector<double>(8, 0.0));
  Arr grid3 = make({2, 3, 2, 2}, std::vector<double>(24, 0.0));
  EXPECT_EQ(rc_of("BilinearSampler", {&data, &grid}, {}), MXC_OK);
  EXPECT_EQ(rc_of("BilinearSampler", {&data, &grid1}, {}), MXC_ERR_SHAPE);
  EXPECT_NE(mxct::err().find("grid"), std::string::npos);
  EXPECT_EQ(rc_of("BilinearSampler", {&data, &grid3}, {}), MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of("BilinearSampler", {&data}, {}), MXC_ERR_INVALID_ARGUMENT);
}

TEST(SpatialTransformer, BadInput) {
  Arr data = make({2, 1, 3, 3}, std::vector<double>(18, 1.0));
  Arr loc = make({2, 6}, std::vector<double>(12, 0.1));
  Arr loc1 = make({1, 6}, std::vector<double>(6, 0.1));
  mxct::Params p = {{"transform_type", "affine"},
                    {"sampler_type", "bilinear"},
                    {"target_shape", "(2,2)"}};
  EXPECT_EQ(rc_of("SpatialTransformer", {&data, &loc}, p), MXC_OK);
  EXPECT_EQ(rc_of("SpatialTransformer", {&data, &loc1}, p), MXC_ERR_SHAPE);
  mxct::Params warp = p;
  warp[0].second = "warp";
  EXPECT_EQ(rc_of("SpatialTransformer", {&data, &loc}, warp),
            MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
