// _contrib_box_nms and _contrib_box_iou against the numpy references of
// make_golden.py (MXNet's documented example included), the gradient of
// box_nms by finite differences, and bad input.
#include "tests/ops/vision/golden.h"

using mxct::Arr;
using mxct::make;

namespace {

TEST(BoxNMS, Golden) {
  for (const auto &c : vist::cases_of("_contrib_box_nms")) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-6, 1e-6);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-12, 1e-12);
  }
}

TEST(BoxNMS, Alias) {
  auto c = vist::cases_of("_contrib_box_nms").at(0);
  c.op = "_contrib_box_non_maximum_suppression";
  vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-12, 1e-12);
}

TEST(BoxIoU, Golden) {
  for (const auto &c : vist::cases_of("_contrib_box_iou")) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-5, 1e-6);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-12, 1e-12);
  }
}

TEST(BoxNMS, GradientByFiniteDifferences) {
  // Distinct scores (no ties for the perturbation to reorder), IoUs away
  // from the threshold, and class ids between integers (they compare
  // truncated).
  std::vector<double> d;
  for (int i = 0; i < 8; ++i) {
    double s = 0.9 - 0.1 * i, x = (i % 4) * 1.5, y = (i / 4) * 0.7;
    for (double v : {i % 2 + 0.5, s, x, y, x + 2.0, y + 2.0}) d.push_back(v);
  }
  mxct::grad_check("_contrib_box_nms", {{8, 6}}, {d},
                   {{"overlap_thresh", "0.45"}, {"id_index", "0"}});
  mxct::grad_check("_contrib_box_nms", {{2, 4, 6}}, {d},
                   {{"overlap_thresh", "0.45"}, {"topk", "3"}});
}

int rc_of(const std::string &op, const std::vector<const Arr *> &in,
          const mxct::Params &p) {
  int rc = MXC_OK;
  mxct::invoke(op, in, p, &rc);
  return rc;
}

TEST(BoxNMS, BadInput) {
  Arr d6 = make({3, 6}, std::vector<double>(18, 0.5));
  Arr d5 = make({3, 5}, std::vector<double>(15, 0.5));
  Arr d1 = make({6}, std::vector<double>(6, 0.5));
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d6}, {}), MXC_OK) << mxct::err();
  // An id column needs a sixth value.
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d5}, {{"id_index", "0"}}),
            MXC_ERR_SHAPE);
  EXPECT_NE(mxct::err().find("width"), std::string::npos) << mxct::err();
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d6}, {{"score_index", "3"}}),
            MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d6},
                  {{"id_index", "1"}, {"score_index", "1"}}),
            MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d6}, {{"coord_start", "3"}}),
            MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d1}, {}), MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d6}, {{"in_format", "xywh"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rc_of("_contrib_box_nms", {&d6}, {{"topk", "-2"}}),
            MXC_ERR_INVALID_ARGUMENT);
}

TEST(BoxIoU, BadInput) {
  Arr a = make({2, 4}, std::vector<double>(8, 1.0));
  Arr b = make({3, 5}, std::vector<double>(15, 1.0));
  EXPECT_EQ(rc_of("_contrib_box_iou", {&a, &a}, {}), MXC_OK);
  EXPECT_EQ(rc_of("_contrib_box_iou", {&a, &b}, {}), MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of("_contrib_box_iou", {&a}, {}), MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
