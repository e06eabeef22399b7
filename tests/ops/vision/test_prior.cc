// _contrib_MultiBoxPrior, _contrib_MultiBoxTarget and
// _contrib_MultiBoxDetection against the numpy
// references of make_golden.py, and bad input.
#include "tests/ops/vision/golden.h"

using mxct::Arr;
using mxct::make;

namespace {

TEST(MultiBoxPrior, Golden) {
  for (const auto &c : vist::cases_of("_contrib_MultiBoxPrior")) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-6, 1e-6);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-12, 1e-12);
  }
}

int rc_of(const Arr &a, const mxct::Params &p) {
  int rc = MXC_OK;
  mxct::invoke("_contrib_MultiBoxPrior", {&a}, p, &rc);
  return rc;
}

TEST(MultiBoxPrior, BadInput) {
  Arr data = make({1, 1, 2, 2}, {0, 0, 0, 0});
  Arr flat = make({2, 2}, {0, 0, 0, 0});
  EXPECT_EQ(rc_of(data, {{"sizes", "(0.5, 0.25)"}}), MXC_OK) << mxct::err();
  EXPECT_EQ(rc_of(flat, {}), MXC_ERR_SHAPE);
  for (const char *bad : {"(0.5, x)", "(-1)", "()", "(nan)", "(1e400)"}) {
    EXPECT_EQ(rc_of(data, {{"sizes", bad}}), MXC_ERR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(mxct::err().find("sizes"), std::string::npos) << mxct::err();
  }
  EXPECT_EQ(rc_of(data, {{"ratios", "(1, 0)"}}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rc_of(data, {{"steps", "(0.1)"}}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rc_of(data, {{"offsets", "(0.5, 0.5, 0.5)"}}),
            MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace

namespace {

TEST(MultiBoxDetection, Golden) {
  for (const auto &c : vist::cases_of("_contrib_MultiBoxDetection")) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-5, 1e-5);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-12, 1e-12);
  }
}

int det_rc(const Arr &c, const Arr &l, const Arr &a, const mxct::Params &p) {
  int rc = MXC_OK;
  mxct::invoke("_contrib_MultiBoxDetection", {&c, &l, &a}, p, &rc);
  return rc;
}

TEST(MultiBoxDetection, BadInput) {
  Arr cls = make({1, 3, 2}, std::vector<double>(6, 0.3));
  Arr loc = make({1, 8}, std::vector<double>(8, 0.0));
  Arr anc = make({1, 2, 4}, {0.1, 0.1, 0.4, 0.4, 0.5, 0.5, 0.9, 0.9});
  Arr loc_bad = make({1, 6}, std::vector<double>(6, 0.0));
  Arr anc_bad = make({2, 4}, std::vector<double>(8, 0.0));
  EXPECT_EQ(det_rc(cls, loc, anc, {}), MXC_OK) << mxct::err();
  EXPECT_EQ(det_rc(cls, loc_bad, anc, {}), MXC_ERR_SHAPE);
  EXPECT_NE(mxct::err().find("loc_pred"), std::string::npos) << mxct::err();
  EXPECT_EQ(det_rc(cls, loc, anc_bad, {}), MXC_ERR_SHAPE);
  EXPECT_EQ(det_rc(loc, loc, anc, {}), MXC_ERR_SHAPE);
  EXPECT_EQ(det_rc(cls, loc, anc, {{"variances", "(0.1, 0.1, 0.2)"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxct::err().find("variances"), std::string::npos);
}

}  // namespace

namespace {

TEST(MultiBoxTarget, Golden) {
  for (const auto &c : vist::cases_of("_contrib_MultiBoxTarget")) {
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-4, 1e-4);
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-10, 1e-10);
  }
}

TEST(MultiBoxTarget, BadInput) {
  Arr anc = make({1, 2, 4}, {0.1, 0.1, 0.4, 0.4, 0.5, 0.5, 0.9, 0.9});
  Arr label = make({1, 1, 5}, {0, 0.1, 0.1, 0.4, 0.4});
  Arr pred = make({1, 3, 2}, std::vector<double>(6, 0.0));
  Arr pred_bad = make({1, 3, 3}, std::vector<double>(9, 0.0));
  Arr label4 = make({1, 1, 4}, {0.1, 0.1, 0.4, 0.4});
  auto rc = [](const std::vector<const Arr *> &in, const mxct::Params &p) {
    int r = MXC_OK;
    mxct::invoke("_contrib_MultiBoxTarget", in, p, &r);
    return r;
  };
  EXPECT_EQ(rc({&anc, &label, &pred}, {}), MXC_OK) << mxct::err();
  EXPECT_EQ(rc({&anc, &label, &pred_bad}, {}), MXC_ERR_SHAPE);
  EXPECT_NE(mxct::err().find("cls_pred"), std::string::npos);
  EXPECT_EQ(rc({&anc, &label4, &pred}, {}), MXC_ERR_SHAPE);
  EXPECT_EQ(rc({&anc, &label, &pred}, {{"variances", "(1,2)"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rc({&anc, &label, &pred}, {{"negative_mining_ratio", "3"},
                                       {"negative_mining_thresh", "0"}}),
            MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
