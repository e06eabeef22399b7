// _contrib_MultiBoxPrior against the numpy reference of make_golden.py, and
// bad input.
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
