// Pad in its three modes against index arithmetic written here (numpy's
// "constant", "edge" and "reflect"), on every dtype (bitwise), any number
// of axes, with gradients and bad parameters.
#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

std::string tuple(const std::vector<int64_t> &v) {
  std::string s = "(";
  for (auto x : v) s += std::to_string(x) + ",";
  return s + ")";
}

// Input flat index of output index o, or -1 for a constant cell.
int64_t pad_source(const Shape &in, const std::vector<int64_t> &pw,
                   const std::string &mode, const Index &o) {
  Index i(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    int64_t v = o[k] - pw[2 * k], n = in[k];
    if (v < 0 || v >= n) {
      if (mode == "constant") return -1;
      if (mode == "edge") v = v < 0 ? 0 : n - 1;
      if (mode == "reflect") v = v < 0 ? -v : 2 * (n - 1) - v;
    }
    i[k] = v;
  }
  return ravel(i, in);
}

void check_pad(const Shape &in, const std::vector<int64_t> &pw,
               const std::string &mode) {
  Shape out = in;
  for (size_t k = 0; k < in.size(); ++k) out[k] += pw[2 * k] + pw[2 * k + 1];
  Params p = {
      {"mode", mode}, {"pad_width", tuple(pw)}, {"constant_value", "7"}};
  for (int dt : all_dtypes()) {
    SCOPED_TRACE(mode + " dtype " + std::to_string(dt) + " on " + str(in));
    Bytes ib = random_bytes(numel(in), dt, 8);
    Bytes fill = encode({7.0}, dt);
    Arr a = make_raw(in, dt, ib);
    auto r = invoke("Pad", {&a}, p);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(r[0].shape(), out);
    Bytes ob = raw(r[0]);
    size_t es = esize(dt);
    for (int64_t f = 0; f < numel(out); ++f) {
      int64_t src = pad_source(in, pw, mode, unravel(f, out));
      const unsigned char *want = src < 0 ? fill.data() : &ib[(size_t)src * es];
      ASSERT_EQ(memcmp(&ob[(size_t)f * es], want, es), 0) << "element " << f;
    }
  }
}

TEST(Pad, NumpyExamples) {
  Arr a = make({3}, {1, 2, 3});
  EXPECT_EQ(read(invoke("Pad", {&a},
                        {{"mode", "reflect"}, {"pad_width", "(2,2)"}})[0]),
            std::vector<double>({3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(
      read(invoke("pad", {&a}, {{"mode", "edge"}, {"pad_width", "(2,2)"}})[0]),
      std::vector<double>({1, 1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(
      read(invoke("Pad", {&a},
                  {{"pad_width", "(1,2)"}, {"constant_value", "-1.5"}})[0]),
      std::vector<double>({-1.5, 1, 2, 3, -1.5, -1.5}));
}

TEST(Pad, AllModesManyRanksEveryDtype) {
  for (const char *mode : {"constant", "edge", "reflect"}) {
    check_pad({4}, {2, 3}, mode);
    check_pad({3, 4}, {1, 2, 0, 3}, mode);
    check_pad({2, 3, 4}, {1, 1, 2, 0, 0, 3}, mode);
    check_pad({1, 2, 3, 4}, {0, 0, 0, 0, 1, 2, 2, 1},
              mode);  // MXNet's 4-d form
    check_pad({2, 2, 3, 3, 2}, {0, 0, 1, 1, 2, 2, 1, 0, 1, 1}, mode);
    check_pad({2, 3}, {0, 0, 0, 0}, mode);
  }
  check_pad({0, 3}, {1, 1, 1, 1}, "constant");
}

TEST(Pad, Gradients) {
  for (const char *mode : {"constant", "edge", "reflect"}) {
    SCOPED_TRACE(mode);
    check_grad("Pad", {{3, 4}}, {uniform(12, -1, 1)},
               {{"mode", mode}, {"pad_width", "(2,1,1,3)"}});
    check_grad("Pad", {{2, 2, 3}}, {uniform(12, -1, 1)},
               {{"mode", mode}, {"pad_width", "(1,0,0,1,2,2)"}});
  }
}

// Edge padding's gradient collects the gradients of every copy.
TEST(Pad, EdgeGradientAccumulates) {
  Arr x = make({2}, {5, 6}, MXC_DTYPE_FLOAT64);
  Params p = {{"mode", "edge"}, {"pad_width", "(2,1)"}};
  auto y = invoke("Pad", {&x}, p);
  ASSERT_EQ(read(y[0]), std::vector<double>({5, 5, 5, 6, 6}));
  Arr og = make({5}, {1, 10, 100, 1000, 10000}, MXC_DTYPE_FLOAT64);
  std::vector<const char *> k = {"mode", "pad_width"}, v = {"edge", "(2,1)"};
  mxc_ndarray g = nullptr;
  ASSERT_EQ(mxct_grad_eval("Pad", k.data(), v.data(), 2, &x.h, 1, &y[0].h, 1,
                           &og.h, &g),
            MXC_OK)
      << err();
  Arr ga(g);
  EXPECT_EQ(read(ga), std::vector<double>({111, 11000}));
}

TEST(Pad, WriteModeAdd) {
  Arr x = make({2}, {1, 2});
  Arr o = make({4}, {10, 10, 10, 10});
  mxc_op op;
  ASSERT_EQ(mxc_op_find("Pad", &op), MXC_OK);
  const char *k[] = {"mode", "pad_width"}, *v[] = {"reflect", "(1,1)"};
  int req[] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 2, &x.h, 1, &o.h, 1, req), MXC_OK) << err();
  EXPECT_EQ(read(o), std::vector<double>({12, 11, 12, 11}));
}

TEST(Pad, BadParameters) {
  Arr a = make({2, 3}, iota(6));
  int rc = 0;
  invoke("Pad", {&a}, {{"pad_width", "(1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("needs 4"), std::string::npos) << err();
  invoke("Pad", {&a}, {{"pad_width", "(1,1,-1,0)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("negative"), std::string::npos) << err();
  invoke("Pad", {&a}, {{"mode", "reflect"}, {"pad_width", "(0,0,3,0)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("below the axis extent 3"), std::string::npos) << err();
  invoke("Pad", {&a}, {{"mode", "wrap"}, {"pad_width", "(0,0,1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'constant', 'edge', 'reflect'"), std::string::npos)
      << err();
  Arr e = make({0, 2}, {});
  invoke("Pad", {&e}, {{"mode", "edge"}, {"pad_width", "(1,0,0,0)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
}

}  // namespace
