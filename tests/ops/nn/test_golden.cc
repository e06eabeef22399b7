// LRN, GroupNorm, InstanceNorm, _contrib_BilinearResize2D,
// _contrib_AdaptiveAvgPooling2D and bilinear UpSampling against golden
// outputs that torch computed (scripts/make_nn_golden.py, run by the
// build): torch's local_response_norm, group_norm, instance_norm,
// interpolate, adaptive_avg_pool2d and grouped conv_transpose2d.
#include <fstream>
#include <sstream>

#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;

namespace {

struct Golden {
  Shape shape;
  std::vector<double> v;
};

// The script writes "#skip <reason>" where numpy or torch is missing.
std::string skip_reason() {
  std::ifstream f("tests/ops/nn/nn_golden.txt");
  std::string line;
  std::getline(f, line);
  return line.rfind("#skip", 0) == 0 ? line : "";
}

class Golden_ : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = skip_reason();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

const std::map<std::string, Golden> &golden() {
  static std::map<std::string, Golden> g = [] {
    std::map<std::string, Golden> m;
    std::ifstream f("tests/ops/nn/nn_golden.txt");
    EXPECT_TRUE(f.good()) << "tests/ops/nn/nn_golden.txt is missing";
    std::string name, dims, vals;
    while (std::getline(f, name) && std::getline(f, dims) &&
           std::getline(f, vals)) {
      Golden a;
      std::istringstream ds(dims), vs(vals);
      int nd = 0;
      ds >> nd;
      for (int i = 0; i < nd; ++i) {
        int64_t d;
        ds >> d;
        a.shape.push_back(d);
      }
      double x;
      while (vs >> x) a.v.push_back(x);
      EXPECT_EQ((int64_t)a.v.size(), numel(a.shape)) << name;
      m[name] = a;
    }
    return m;
  }();
  return g;
}

const Golden &get(const std::string &name) {
  auto it = golden().find(name);
  if (it == golden().end()) {
    ADD_FAILURE() << "no golden array " << name;
    static Golden none;
    return none;
  }
  return it->second;
}

Arr arr(const std::string &name, int dt = MXC_DTYPE_FLOAT64) {
  return make(get(name).shape, get(name).v, dt);
}

void expect_golden(const Arr &got, const std::string &name, double tol) {
  EXPECT_EQ(got.shape(), get(name).shape) << name;
  expect_near(read(got), get(name).v, tol, tol, name);
}

TEST_F(Golden_, LRN) {
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-12 : 2e-6;
    Arr x = arr("lrn.x", dt);
    for (int n : {3, 4, 5}) {
      auto y = invoke("LRN", {&x},
                      {{"nsize", std::to_string(n)}, {"alpha", "0.05"},
                       {"beta", "0.75"}, {"knorm", "2"}});
      expect_golden(y[0], "lrn.y" + std::to_string(n), tol);
    }
  }
}

TEST_F(Golden_, GroupAndInstanceNorm) {
  Arr x = arr("gn.x"), g = arr("gn.gamma"), b = arr("gn.beta");
  auto y = invoke("GroupNorm", {&x, &g, &b}, {{"num_groups", "3"}});
  expect_golden(y[0], "gn.y", 1e-12);
  Arr xi = arr("in.x"), gi = arr("in.gamma"), bi = arr("in.beta");
  auto yi = invoke("InstanceNorm", {&xi, &gi, &bi}, {{"eps", "0.001"}});
  expect_golden(yi[0], "in.y", 1e-12);
}

TEST_F(Golden_, BilinearResize) {
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-13 : 1e-6;
    Arr x = arr("bilinear.x", dt);
    for (auto hw : {std::make_pair(7, 3), std::make_pair(3, 2),
                    std::make_pair(4, 5)}) {
      for (int align : {1, 0}) {
        auto y = invoke("_contrib_BilinearResize2D", {&x},
                        {{"height", std::to_string(hw.first)},
                         {"width", std::to_string(hw.second)},
                         {"align_corners", align ? "true" : "false"}});
        expect_golden(y[0],
                      "bilinear.y" + std::to_string(hw.first) + "_" +
                          std::to_string(hw.second) + "_" +
                          std::to_string(align),
                      tol);
      }
    }
  }
  // The same outputs through the other modes: 'like' a (7, 3) array, and
  // scales that give 7 and 3 from 4 and 5.
  Arr x = arr("bilinear.x");
  Arr like = make({1, 1, 7, 3}, std::vector<double>(21, 0), MXC_DTYPE_FLOAT64);
  auto yl = invoke("BilinearResize2D", {&x, &like}, {{"mode", "like"}});
  expect_golden(yl[0], "bilinear.y7_3_1", 1e-13);
  auto ys = invoke("BilinearResize2D", {&x},
                   {{"scale_height", "1.75"}, {"scale_width", "0.6"}});
  expect_golden(ys[0], "bilinear.y7_3_1", 1e-13);
}

TEST_F(Golden_, AdaptiveAvgPooling) {
  Arr x = arr("adaptive.x");
  for (auto hw : {std::make_pair(3, 4), std::make_pair(2, 2),
                  std::make_pair(7, 5), std::make_pair(1, 1)}) {
    std::string size = "(" + std::to_string(hw.first) + "," +
                       std::to_string(hw.second) + ")";
    auto y = invoke("_contrib_AdaptiveAvgPooling2D", {&x},
                    {{"output_size", size}});
    expect_golden(y[0],
                  "adaptive.y" + std::to_string(hw.first) + "_" +
                      std::to_string(hw.second),
                  1e-13);
  }
  auto sq = invoke("AdaptiveAvgPooling2D", {&x}, {{"output_size", "2"}});
  expect_golden(sq[0], "adaptive.y2_2", 1e-13);
  auto one = invoke("AdaptiveAvgPooling2D", {&x});
  expect_golden(one[0], "adaptive.y1_1", 1e-13);
}

TEST_F(Golden_, UpSamplingBilinear) {
  for (int s : {2, 3}) {
    std::string p = "upbil" + std::to_string(s);
    Arr x = arr(p + ".x"), w = arr(p + ".w");
    auto y = invoke("UpSampling", {&x, &w},
                    {{"scale", std::to_string(s)},
                     {"sample_type", "bilinear"},
                     {"num_filter", "3"},
                     {"num_args", "2"}});
    expect_golden(y[0], p + ".y", 1e-12);
  }
}

TEST(Resize, Gradients) {
  for (const char *align : {"true", "false"}) {
    grad_check("_contrib_BilinearResize2D", {{1, 2, 3, 4}},
               {uniform(24, -1, 1, 801)},
               {{"height", "5"}, {"width", "3"}, {"align_corners", align}});
  }
  grad_check_except("_contrib_BilinearResize2D", {{1, 1, 3, 3}, {1, 1, 4, 2}},
                    {uniform(9, -1, 1, 802), uniform(8, -1, 1, 803)},
                    {{"mode", "like"}}, {1});
  grad_check("_contrib_AdaptiveAvgPooling2D", {{2, 1, 5, 4}},
             {uniform(40, -1, 1, 804)}, {{"output_size", "(3,3)"}});
}

TEST(ResizeBad, ModesAndShapes) {
  Arr x = make({1, 1, 3, 5}, uniform(15, -1, 1));
  int rc = 0;
  auto even = invoke("_contrib_BilinearResize2D", {&x}, {{"mode", "to_even_up"}});
  EXPECT_EQ(even[0].shape(), Shape({1, 1, 4, 6}));
  auto odd = invoke("_contrib_BilinearResize2D", {&x}, {{"mode", "to_odd_down"}});
  EXPECT_EQ(odd[0].shape(), Shape({1, 1, 3, 5}));
  auto os = invoke("_contrib_BilinearResize2D", {&x},
                   {{"mode", "odd_scale"}, {"scale_height", "2"},
                    {"scale_width", "0.5"}});
  EXPECT_EQ(os[0].shape(), Shape({1, 1, 5, 3}));  // (3-1)*2+1, (5-1)*0.5+1
  invoke("_contrib_BilinearResize2D", {&x}, {{"mode", "odd_scale"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("_contrib_BilinearResize2D", {&x}, {{"scale_height", "-1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr thin = make({1, 1, 1, 2}, {1, 2});
  invoke("_contrib_BilinearResize2D", {&thin}, {{"mode", "to_even_down"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);  // height 1 -> 0
  invoke("_contrib_AdaptiveAvgPooling2D", {&x}, {{"output_size", "(1,2,3)"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("_contrib_AdaptiveAvgPooling2D", {&x}, {{"output_size", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr v3 = make({1, 3, 5}, uniform(15, -1, 1));
  invoke("_contrib_AdaptiveAvgPooling2D", {&v3}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
}

}  // namespace
