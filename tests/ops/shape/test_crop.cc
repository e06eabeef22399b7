// Crop (MXNet's legacy layer): the window is written out by hand in each
// case, checked bitwise on every dtype with num_args=1, against crop_like's
// size with num_args=2, its gradient (data only), and bad parameters.
#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

// Output (n, c, i, j) is input (n, c, y + i, x + j).
void check_window(const Params &p, const Shape &in, int64_t h, int64_t w,
                  int64_t y, int64_t x) {
  Shape out = {in[0], in[1], h, w};
  check_gather("Crop", p, in, out, [&](const Index &o) {
    return ravel({o[0], o[1], y + o[2], x + o[3]}, in);
  });
}

TEST(Crop, HwWithOffsetAndCentre) {
  check_window({{"num_args", "1"}, {"h_w", "(2,3)"}}, {2, 3, 5, 6}, 2, 3, 0,
               0);
  check_window({{"num_args", "1"}, {"h_w", "(2,3)"}, {"offset", "(1,2)"}},
               {2, 3, 5, 6}, 2, 3, 1, 2);
  // Centre: ((5 - 2) / 2, (6 - 3) / 2) rounded down = (1, 1).
  check_window({{"num_args", "1"}, {"h_w", "(2,3)"}, {"center_crop", "true"},
                {"offset", "(3,3)"}},
               {1, 2, 5, 6}, 2, 3, 1, 1);
  // The whole map.
  check_window({{"num_args", "1"}, {"h_w", "(5,6)"}}, {1, 1, 5, 6}, 5, 6, 0,
               0);
}

TEST(Crop, LikeAnotherArray) {
  auto xv = iota(1 * 2 * 4 * 5);
  Arr x = make({1, 2, 4, 5}, xv);
  Arr like = make({3, 7, 2, 3}, std::vector<double>(126, 9));
  auto y = invoke("Crop", {&x, &like},
                  {{"num_args", "2"}, {"offset", "(2,1)"}});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 2, 3}));
  std::vector<double> want;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(xv[(c * 4 + 2 + i) * 5 + 1 + j]);
  EXPECT_EQ(read(y[0]), want);
  // center_crop with crop_like: ((4 - 2) / 2, (5 - 3) / 2) = (1, 1).
  auto z = invoke("Crop", {&x, &like},
                  {{"num_args", "2"}, {"center_crop", "1"}});
  want.clear();
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(xv[(c * 4 + 1 + i) * 5 + 1 + j]);
  EXPECT_EQ(read(z[0]), want);
}

TEST(Crop, Gradient) {
  check_grad("Crop", {{2, 2, 4, 5}}, {uniform(80, -1, 1)},
             {{"num_args", "1"}, {"h_w", "(2,3)"}, {"offset", "(1,2)"}});
  check_grad("Crop", {{1, 2, 4, 5}, {1, 1, 3, 3}},
             {uniform(40, -1, 1), uniform(9, -1, 1)},
             {{"num_args", "2"}, {"center_crop", "true"}}, {1});
}

TEST(CropBad, WindowAndParameters) {
  Arr x = make({1, 1, 4, 4}, iota(16));
  int rc = 0;
  invoke("Crop", {&x}, {{"num_args", "1"}, {"h_w", "(3,3)"},
                        {"offset", "(2,0)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("does not fit"), std::string::npos) << err();
  invoke("Crop", {&x}, {{"num_args", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("h_w"), std::string::npos) << err();
  invoke("Crop", {&x}, {{"num_args", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("Crop", {&x}, {{"num_args", "1"}, {"h_w", "(1,1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("Crop", {&x}, {{"num_args", "1"}, {"h_w", "(1,-1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr v = make({4, 4}, iota(16));
  invoke("Crop", {&v}, {{"num_args", "1"}, {"h_w", "(1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("4 axes"), std::string::npos) << err();
  Arr big = make({1, 1, 5, 5}, iota(25));
  invoke("Crop", {&x, &big}, {{"num_args", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
}

}  // namespace
