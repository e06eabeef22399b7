// Outputs that share memory with inputs (core/op/alias.c): an out= array
// that is also an input, or a view overlapping one, gets the answer that
// separate arrays get; two outputs sharing memory are refused. References
// are naive loops on values read before the call.
#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

mxc_op find(const char *name) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK) << name;
  return op;
}

// Invokes name with explicit output handles and write modes.
int call(const char *name, std::vector<mxc_ndarray> in,
         std::vector<mxc_ndarray> out, const Params &p = {},
         std::vector<int> req = {}) {
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  return mxc_op_invoke(find(name), k.data(), v.data(), (int)k.size(),
                       in.data(), (int)in.size(), out.data(), (int)out.size(),
                       req.empty() ? nullptr : req.data());
}

std::vector<double> matmul(const std::vector<double> &a,
                           const std::vector<double> &b, int n) {
  std::vector<double> c(n * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

TEST(Alias, DotIntoItsLeftOperandWithAdd) {
  auto av = uniform(9, -1, 1, 3), bv = uniform(9, -1, 1, 4);
  Arr a = make({3, 3}, av, MXC_DTYPE_FLOAT64), b = make({3, 3}, bv,
                                                        MXC_DTYPE_FLOAT64);
  ASSERT_EQ(call("dot", {a.h, b.h}, {a.h}, {}, {MXC_REQ_ADD}), MXC_OK)
      << err();
  auto want = matmul(av, bv, 3);
  for (int i = 0; i < 9; ++i) want[i] += av[i];  // add onto the old values
  auto got = read(a);
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

// in = rows 0..2 of a 4x3 array, out = rows 1..3: the views overlap
// without being the same bytes, so even an operator with an in-place pair
// (_copy) must not run in place.
TEST(Alias, PartiallyOverlappingViews) {
  auto v = uniform(12, -1, 1, 5);
  Arr big = make({4, 3}, v);
  mxc_ndarray in = nullptr, out = nullptr;
  ASSERT_EQ(mxc_ndarray_slice(big.h, 0, 3, &in), MXC_OK);
  ASSERT_EQ(mxc_ndarray_slice(big.h, 1, 4, &out), MXC_OK);
  Arr hin(in), hout(out);
  ASSERT_EQ(call("_copy", {in}, {out}), MXC_OK) << err();
  auto got = read(big);
  std::vector<double> f(v.begin(), v.end());
  for (int i = 0; i < 12; ++i) f[i] = (float)f[i];
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i], f[i]) << "row 0 unchanged";
  for (int i = 3; i < 12; ++i) EXPECT_EQ(got[i], f[i - 3]) << i;
}

// The exact in-place pair an operator declares still runs in place and
// gives the element-wise answer.
TEST(Alias, DeclaredInPlacePairs) {
  auto av = uniform(6, -1, 1, 6), bv = uniform(6, -1, 1, 7);
  Arr a = make({6}, av, MXC_DTYPE_FLOAT64), b = make({6}, bv,
                                                    MXC_DTYPE_FLOAT64);
  ASSERT_EQ(call("elemwise_sub", {a.h, b.h}, {b.h}), MXC_OK) << err();
  auto got = read(b);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], av[i] - bv[i]) << i;
  ASSERT_EQ(call("negative", {a.h}, {a.h}), MXC_OK) << err();
  got = read(a);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], -av[i]) << i;
}

// A failing call through the temporary leaves the caller's output alone.
TEST(Alias, ErrorsLeaveTheOutputUntouched) {
  auto av = uniform(6, -1, 1, 8);
  Arr a = make({2, 3}, av, MXC_DTYPE_FLOAT64);
  Arr b = make({2, 3}, av, MXC_DTYPE_FLOAT64);
  // dot of (2,3) by (2,3): incompatible; a is both input and output.
  EXPECT_EQ(call("dot", {a.h, b.h}, {a.h}), MXC_ERR_SHAPE);
  EXPECT_EQ(read(a), av);
}

// Output 0 aliases the input, output 1 is created by the call: the caller
// gets it (found by fuzz_op_invoke: the created output was dropped).
TEST(Alias, CreatedOutputsBesideAnAliasedOne) {
  std::vector<double> v = {0.5, -2, 3, 1, -1};
  Arr x = make({5}, v);
  std::vector<mxc_ndarray> outs = {x.h, nullptr};
  const char *k[] = {"k", "ret_typ"}, *val[] = {"5", "both"};
  ASSERT_EQ(mxc_op_invoke(find("topk"), k, val, 2, &x.h, 1, outs.data(), 2,
                          nullptr),
            MXC_OK)
      << err();
  ASSERT_NE(outs[1], nullptr);
  Arr idx(outs[1]);
  EXPECT_EQ(read(x), std::vector<double>({3, 1, 0.5, -1, -2}));
  EXPECT_EQ(read(idx), std::vector<double>({2, 3, 0, 4, 1}));
}

TEST(Alias, TwoOutputsSharingMemoryAreRefused) {
  Arr x = make({2, 2}, {1, 2, 3, 4});
  Arr o = make({1, 2}, {0, 0});
  int rc = call("split", {x.h}, {o.h, o.h},
                {{"num_outputs", "2"}, {"axis", "0"}});
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("share memory"), std::string::npos) << err();
  EXPECT_EQ(read(o), std::vector<double>({0, 0}));
}

}  // namespace
