// ROIPooling and _contrib_ROIAlign against the numpy references of
// make_golden.py, gradients by finite differences, and bad input.
#include "tests/ops/vision/golden.h"

using mxct::Arr;
using mxct::invoke;
using mxct::make;

namespace {

TEST(ROIPooling, Golden) {
  for (const auto &c : vist::cases_of("ROIPooling")) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-6, 1e-6);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-12, 1e-12);
  }
}

TEST(ROIAlign, Golden) {
  for (const auto &c : vist::cases_of("_contrib_ROIAlign")) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-5, 1e-5);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-10, 1e-10);
  }
}

// Distinct values (a permutation) so that every bin has one maximum and
// small perturbations do not move it.
std::vector<double> distinct(int64_t n) {
  auto u = mxct::uniform(n, 0, 1, 3);
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) + u[i] * 0.5;
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = (i * 37) % n;
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = v[perm[i]];
  return out;
}

TEST(ROIPooling, GradientByFiniteDifferences) {
  std::vector<double> rois = {0, 0, 0, 9, 9, 1, 2, 3, 7, 8, 1, 4, 4, 4, 4};
  mxct::grad_check("ROIPooling", {{2, 2, 5, 6}, {3, 5}}, {distinct(120), rois},
                   {{"pooled_size", "(2,3)"}, {"spatial_scale", "0.5"}}, 1e-6,
                   1e-4, 1e-6, {1});
}

TEST(ROIAlign, GradientByFiniteDifferences) {
  std::vector<double> rois = {0,   0.5, 1,  9, 8, 1, 2.2, 3.1,
                              7.7, 8.9, -1, 1, 1, 3, 3};
  for (const char *ps : {"false", "true"}) {
    mxct::grad_check("_contrib_ROIAlign", {{2, 4, 5, 6}, {3, 5}},
                     {mxct::uniform(240, -1, 1, 4), rois},
                     {{"pooled_size", "(2,2)"},
                      {"spatial_scale", "0.5"},
                      {"sample_ratio", "2"},
                      {"position_sensitive", ps}},
                     1e-6, 1e-4, 1e-6, {1});
  }
  mxct::grad_check(
      "_contrib_ROIAlign", {{1, 2, 5, 6}, {2, 4}},
      {mxct::uniform(60, -1, 1, 5), {0.5, 1, 9, 8, 2, 2, 6, 7}},
      {{"pooled_size", "(3,2)"}, {"spatial_scale", "0.6"}, {"aligned", "true"}},
      1e-6, 1e-4, 1e-6, {1});
}

// The status of op(a, b): at invoke time, or at the wait for the output.
int invoke_rc(const std::string &op, const Arr &a, const Arr &b,
              const mxct::Params &p) {
  int rc = MXC_OK;
  auto out = invoke(op, {&a, &b}, p, &rc);
  // Errors found while the kernel runs (bad ROI values) come at the wait.
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out.at(0).h);
  return rc;
}

TEST(ROIPooling, BadInput) {
  Arr data = make({1, 2, 4, 4}, std::vector<double>(32, 1.0));
  Arr rois = make({1, 5}, {0, 0, 0, 3, 3});
  mxct::Params ok = {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}};
  EXPECT_EQ(invoke_rc("ROIPooling", data, rois, ok), MXC_OK) << mxct::err();
  EXPECT_EQ(invoke_rc("ROIPooling", data, rois, {{"pooled_size", "(2,2)"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(invoke_rc("ROIPooling", data, rois,
                      {{"pooled_size", "(2,0)"}, {"spatial_scale", "1"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxct::err().find("pooled_size"), std::string::npos);
  EXPECT_EQ(invoke_rc("ROIPooling", data, rois,
                      {{"pooled_size", "(2,2)"}, {"spatial_scale", "-1"}}),
            MXC_ERR_INVALID_ARGUMENT);
  Arr rois4 = make({1, 4}, {0, 0, 3, 3});
  EXPECT_EQ(invoke_rc("ROIPooling", data, rois4, ok), MXC_ERR_SHAPE);
  EXPECT_NE(mxct::err().find("rois"), std::string::npos) << mxct::err();
  Arr data3 = make({2, 4, 4}, std::vector<double>(32, 1.0));
  EXPECT_EQ(invoke_rc("ROIPooling", data3, rois, ok), MXC_ERR_SHAPE);
  Arr far = make({1, 5}, {3, 0, 0, 3, 3});
  EXPECT_EQ(invoke_rc("ROIPooling", data, far, ok), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxct::err().find("batch index"), std::string::npos);
  Arr nan = make({1, 5}, {0, NAN, 0, 3, 3});
  EXPECT_EQ(invoke_rc("ROIPooling", data, nan, ok), MXC_ERR_INVALID_ARGUMENT);
  Arr ints = make({1, 2, 4, 4}, std::vector<double>(32, 1.0), MXC_DTYPE_INT32);
  Arr irois = make({1, 5}, {0, 0, 0, 3, 3}, MXC_DTYPE_INT32);
  EXPECT_NE(invoke_rc("ROIPooling", ints, irois, ok), MXC_OK);
}

TEST(ROIAlign, BadInput) {
  Arr data = make({1, 6, 4, 4}, std::vector<double>(96, 1.0));
  Arr rois = make({1, 5}, {0, 0, 0, 3, 3});
  mxct::Params ok = {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}};
  EXPECT_EQ(invoke_rc("_contrib_ROIAlign", data, rois, ok), MXC_OK);
  // 6 channels are not divisible into 2 x 2 position-sensitive groups.
  mxct::Params ps = ok;
  ps.push_back({"position_sensitive", "true"});
  EXPECT_EQ(invoke_rc("_contrib_ROIAlign", data, rois, ps), MXC_ERR_SHAPE);
  EXPECT_NE(mxct::err().find("position_sensitive"), std::string::npos);
  Arr rois3 = make({1, 3}, {0, 0, 3});
  EXPECT_EQ(invoke_rc("_contrib_ROIAlign", data, rois3, ok), MXC_ERR_SHAPE);
  // aligned needs a positive extent.
  mxct::Params al = ok;
  al.push_back({"aligned", "true"});
  Arr flat = make({1, 5}, {0, 2, 2, 2, 3});
  EXPECT_EQ(invoke_rc("_contrib_ROIAlign", data, flat, al),
            MXC_ERR_INVALID_ARGUMENT);
  // A huge ROI would need billions of samples per bin: refused.
  Arr huge = make({1, 5}, {0, 0, 0, 1e12, 1e12});
  EXPECT_EQ(invoke_rc("_contrib_ROIAlign", data, huge, ok),
            MXC_ERR_INVALID_ARGUMENT);
  Arr inf = make({1, 5}, {0, 0, 0, INFINITY, 3});
  EXPECT_EQ(invoke_rc("_contrib_ROIAlign", data, inf, ok),
            MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
