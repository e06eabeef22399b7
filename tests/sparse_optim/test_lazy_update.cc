// Optimizer updates with row_sparse gradients (ops/sparse/optim.c):
// for sgd, sgd_mom, adam, adagrad and ftrl, the lazy update of every
// stored row equals the dense operator's update of that row (run on dense
// copies with the gradient densified by a naive loop), bit for bit; every
// other row of weight and states keeps its bits. lazy_update=false equals
// the dense operator on the whole arrays. Storage-type rules, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/sparse_optim/optim_util.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/op/op.h"
}

namespace {

using namespace sparse_test;
using namespace optim_test;
using Params = std::vector<std::pair<std::string, std::string>>;

struct OptCase {
  const char *op;
  int n_states;
  bool has_lazy;     // takes lazy_update
  bool nonneg[2];    // state k must be >= 0 (second moments)
  Params params;
};

const std::vector<OptCase> &cases() {
  static const std::vector<OptCase> c = {
      {"sgd_update", 0, true, {false, false},
       {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}}},
      {"sgd_mom_update", 1, true, {false, false},
       {{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"},
        {"rescale_grad", "0.5"}}},
      {"adam_update", 2, true, {false, true},
       {{"lr", "0.01"}, {"wd", "0.01"}, {"beta1", "0.9"}, {"beta2", "0.99"},
        {"rescale_grad", "0.5"}}},
      {"adagrad_update", 1, false, {true, false},
       {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}}},
      {"ftrl_update", 2, false, {false, true},
       {{"lr", "0.1"}, {"wd", "0.01"}, {"lamda1", "0.01"}, {"beta", "1"},
        {"rescale_grad", "0.5"}}},
  };
  return c;
}

// One update: weight, states and the gradient rows, as arrays.
struct Problem {
  std::vector<int64_t> shape;
  std::vector<int64_t> rows;  // stored gradient rows
  std::vector<double> gvals;  // their values
  Dense w;
  std::vector<Dense> s;
  int dtype;
  size_t row_bytes() const { return (size_t)w.row_len() * esize(dtype); }
  size_t nbytes() const { return (size_t)w.size() * esize(dtype); }
};

// Rows: some runs of consecutive rows, isolated ones, the last row and an
// all-zero stored row (updated all the same: wd and momentum act on it).
Problem make_problem(const OptCase &c, int dtype, std::vector<int64_t> shape,
                     unsigned seed) {
  Problem p;
  p.shape = shape;
  p.dtype = dtype;
  int64_t n_rows = shape[0];
  for (int64_t r = 0; r < n_rows; ++r) {
    if (r % 7 == 0 || r % 7 == 1 || r % 11 == 3 || r == n_rows - 1) {
      p.rows.push_back(r);
    }
  }
  int64_t rl = 1;
  for (size_t i = 1; i < shape.size(); ++i) rl *= shape[i];
  p.gvals = random_dense({(int64_t)p.rows.size(), rl}, seed, -2.0, 2.0).v;
  for (int64_t j = 0; j < rl; ++j) p.gvals[(size_t)(rl + j)] = 0.0;
  p.w = random_dense(shape, seed + 1);
  for (int k = 0; k < c.n_states; ++k) {
    p.s.push_back(c.nonneg[k] ? random_dense(shape, seed + 2 + k, 0.0, 1.0)
                              : random_dense(shape, seed + 2 + k));
  }
  return p;
}

struct Result {
  std::vector<char> w;
  std::vector<std::vector<char>> s;
};

// Runs op on fresh arrays of p, in place on the weight; grad row_sparse
// (index dtype idx) or dense.
Result run(const OptCase &c, const Problem &p, const Params &extra,
           bool sparse_grad, int idx = MXC_DTYPE_INT64) {
  Arr w = make_dense(p.w, p.dtype);
  Arr g = sparse_grad
              ? make_rsp_rows(p.shape, p.rows, p.gvals, p.dtype, idx)
              : make_dense(dense_of_rows(p.shape, p.rows, p.gvals), p.dtype);
  std::vector<Arr> st;
  std::vector<mxc_ndarray> ins = {w.get(), g.get()};
  for (const Dense &s : p.s) {
    st.push_back(make_dense(s, p.dtype));
    ins.push_back(st.back().get());
  }
  Params params = c.params;
  params.insert(params.end(), extra.begin(), extra.end());
  std::vector<Arr> outs;
  outs.emplace_back(mxc_ndarray(nullptr));
  *outs[0].out() = w.get();  // the weight itself: an in-place update
  int rc = invoke(c.op, params, ins, &outs);
  outs[0].release();
  EXPECT_EQ(rc, MXC_OK) << c.op << ": " << mxc_last_error();
  Result r;
  r.w = raw(w.get(), p.nbytes());
  for (Arr &s : st) r.s.push_back(raw(s.get(), p.nbytes()));
  return r;
}

Result initial(const Problem &p) {
  Result r;
  Arr w = make_dense(p.w, p.dtype);
  r.w = raw(w.get(), p.nbytes());
  for (const Dense &s : p.s) {
    Arr a = make_dense(s, p.dtype);
    r.s.push_back(raw(a.get(), p.nbytes()));
  }
  return r;
}

// Stored rows as the dense update, the others as before.
void check_lazy(const OptCase &c, const Problem &p, const Result &lazy,
                const Result &dense, const Result &before) {
  std::vector<bool> stored((size_t)p.shape[0], false);
  for (int64_t r : p.rows) stored[(size_t)r] = true;
  size_t rb = p.row_bytes();
  for (int64_t r = 0; r < p.shape[0]; ++r) {
    const Result &want = stored[(size_t)r] ? dense : before;
    EXPECT_EQ(row_of(lazy.w, r, rb), row_of(want.w, r, rb))
        << c.op << " weight row " << r << (stored[(size_t)r] ? " (stored)" : "");
    for (size_t k = 0; k < lazy.s.size(); ++k) {
      EXPECT_EQ(row_of(lazy.s[k], r, rb), row_of(want.s[k], r, rb))
          << c.op << " state " << k << " row " << r;
    }
    if (::testing::Test::HasFailure()) return;
  }
}

class LazyUpdate : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(LazyUpdate, StoredRowsAsDenseOthersUntouched) {
  const OptCase &c = cases()[(size_t)std::get<0>(GetParam())];
  int dtype = std::get<1>(GetParam());
  for (const Params &extra :
       {Params{}, Params{{"clip_gradient", "0.3"}}}) {
    Problem p = make_problem(c, dtype, {40, 6}, 7);
    Result before = initial(p);
    Result dense = run(c, p, extra, false);
    Result lazy = run(c, p, extra, true);
    check_lazy(c, p, lazy, dense, before);
    // int32 row indices: the same.
    Result lazy32 = run(c, p, extra, true, MXC_DTYPE_INT32);
    EXPECT_EQ(lazy32.w, lazy.w) << c.op;
    EXPECT_EQ(lazy32.s, lazy.s) << c.op;
  }
}

// Large enough to split across the kernel pool (rows and parts).
TEST_P(LazyUpdate, LargeArraysSplitAcrossThreads) {
  const OptCase &c = cases()[(size_t)std::get<0>(GetParam())];
  int dtype = std::get<1>(GetParam());
  Problem p = make_problem(c, dtype, {3000, 40}, 11);
  Result before = initial(p);
  Result dense = run(c, p, {}, false);
  Result lazy = run(c, p, {}, true);
  check_lazy(c, p, lazy, dense, before);
  if (c.has_lazy) {
    Result full = run(c, p, {{"lazy_update", "false"}}, true);
    EXPECT_EQ(full.w, dense.w) << c.op;
    EXPECT_EQ(full.s, dense.s) << c.op;
  }
}

// lazy_update=false: every row as the dense operator (missing rows with
// gradient 0, so weight decay and momentum still act).
TEST_P(LazyUpdate, StandardUpdateEqualsDense) {
  const OptCase &c = cases()[(size_t)std::get<0>(GetParam())];
  if (!c.has_lazy) GTEST_SKIP() << c.op << " is always lazy";
  int dtype = std::get<1>(GetParam());
  Problem p = make_problem(c, dtype, {40, 6}, 3);
  Params extra = {{"lazy_update", "false"}};
  Result dense = run(c, p, extra, false);
  Result full = run(c, p, extra, true);
  EXPECT_EQ(full.w, dense.w) << c.op;
  EXPECT_EQ(full.s, dense.s) << c.op;
  // And missing rows did change (wd acts), unlike the lazy update.
  Result before = initial(p);
  EXPECT_NE(row_of(full.w, 2, p.row_bytes()), row_of(before.w, 2, p.row_bytes()));
}

INSTANTIATE_TEST_SUITE_P(
    AllOptimizers, LazyUpdate,
    ::testing::Combine(::testing::Range(0, 5),
                       ::testing::Values(MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64)),
    [](const ::testing::TestParamInfo<std::tuple<int, int>> &i) {
      std::string n = cases()[(size_t)std::get<0>(i.param)].op;
      return n + (std::get<1>(i.param) == MXC_DTYPE_FLOAT32 ? "_f32" : "_f64");
    });

// Empty gradient: nothing changes (lazy); a 3-d weight updates whole rows.
TEST(LazyUpdateEdge, EmptyGradAndThreeDimensionalRows) {
  const OptCase &c = cases()[1];  // sgd_mom
  Problem p = make_problem(c, MXC_DTYPE_FLOAT32, {9, 2, 3}, 5);
  Result before = initial(p);
  Result dense = run(c, p, {}, false);
  Result lazy = run(c, p, {}, true);
  check_lazy(c, p, lazy, dense, before);
  Problem e = p;
  e.rows.clear();
  e.gvals.clear();
  Result none = run(c, e, {}, true);
  EXPECT_EQ(none.w, before.w);
  EXPECT_EQ(none.s, before.s);
}

// A separate output: the weight is copied, stored rows updated; the weight
// array itself is not written.
TEST(LazyUpdateEdge, SeparateOutput) {
  const OptCase &c = cases()[0];
  Problem p = make_problem(c, MXC_DTYPE_FLOAT32, {20, 4}, 9);
  Result before = initial(p);
  Result dense = run(c, p, {}, false);
  Arr w = make_dense(p.w, p.dtype);
  Arr g = make_rsp_rows(p.shape, p.rows, p.gvals, p.dtype);
  std::vector<Arr> outs;
  ASSERT_EQ(invoke(c.op, c.params, {w.get(), g.get()}, &outs), MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(stype_of(outs[0].get()), MXC_STYPE_DEFAULT);
  Result lazy;
  lazy.w = raw(outs[0].get(), p.nbytes());
  check_lazy(c, p, lazy, dense, before);
  EXPECT_EQ(raw(w.get(), p.nbytes()), before.w);
}

// ---- storage-type rules (the inference itself, independent of fallback)

int infer(const char *name, std::vector<int> in, int out_given, int *out,
          int *dispatch, const Params &params = {}) {
  mxc_op h = nullptr;
  EXPECT_EQ(mxc_op_find(name, &h), MXC_OK);
  const mxc__op *op = mxc__op_find(name);
  EXPECT_NE(op, nullptr);
  mxc__infer_stype_fn fn = mxc__op_infer_stype(op);
  EXPECT_NE(fn, nullptr) << name;
  if (!fn) return -1;
  std::vector<const char *> k, v;
  for (const auto &kv : params) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(op, k.data(), v.data(), (int)k.size(), &param),
            MXC_OK);
  *out = out_given;
  *dispatch = -1;
  int rc = fn(op, param, in.data(), (int)in.size(), out, 1, dispatch);
  mxc__free(param);
  return rc;
}

TEST(LazyUpdateStype, Rules) {
  const int D = MXC_STYPE_DEFAULT, R = MXC_STYPE_ROW_SPARSE,
            C = MXC_STYPE_CSR;
  int out = 0, dispatch = 0;
  const Params sgd = {{"lr", "0.1"}};
  // All dense: the dense kernel, unchanged.
  ASSERT_EQ(infer("sgd_update", {D, D}, -1, &out, &dispatch, sgd), MXC_OK);
  EXPECT_EQ(out, D);
  EXPECT_EQ(dispatch, MXC__DISPATCH_DENSE);
  // row_sparse grad, dense weight and states: the sparse kernel, dense out.
  for (const OptCase &c : cases()) {
    std::vector<int> in(2 + (size_t)c.n_states, D);
    in[1] = R;
    for (int given : {-1, D}) {
      ASSERT_EQ(infer(c.op, in, given, &out, &dispatch, c.params), MXC_OK)
          << c.op << ": " << mxc_last_error();
      EXPECT_EQ(out, D) << c.op;
      EXPECT_EQ(dispatch, MXC__DISPATCH_SPARSE) << c.op;
    }
    // What it has no kernel for: MXC_ERR_STYPE naming the operator.
    std::vector<std::vector<int>> bad = {in, in, in};
    bad[0][0] = R;  // row_sparse weight
    bad[1][1] = C;  // csr grad
    if (c.n_states) bad[2][2] = R;  // row_sparse state
    for (const auto &b : bad) {
      if (b == in) continue;
      if (b[0] == R && std::string(c.op) == "sgd_update") {
        // row_sparse weight and grad: the row_sparse sgd kernel.
        ASSERT_EQ(infer(c.op, b, -1, &out, &dispatch, c.params), MXC_OK);
        EXPECT_EQ(out, R);
        EXPECT_EQ(dispatch, MXC__DISPATCH_SPARSE);
        EXPECT_EQ(infer(c.op, b, D, &out, &dispatch, c.params), MXC_ERR_STYPE);
        continue;
      }
      EXPECT_EQ(infer(c.op, b, -1, &out, &dispatch, c.params), MXC_ERR_STYPE)
          << c.op;
      EXPECT_NE(std::string(mxc_last_error()).find(c.op), std::string::npos)
          << mxc_last_error();
    }
    EXPECT_EQ(infer(c.op, in, R, &out, &dispatch, c.params), MXC_ERR_STYPE)
        << c.op << " with a row_sparse output";
  }
}

// sgd_update with row_sparse weight and grad, in place on the weight:
// the union of their rows; grad rows as dense sgd on the dense
// equivalents, weight-only rows kept (lazy) or decayed (lazy_update=false,
// then equal to the dense result everywhere).
TEST(LazyUpdateRspWeight, SgdUnionOfRows) {
  const std::vector<int64_t> shape = {30, 3};
  const std::vector<int64_t> wrows = {0, 1, 2, 7, 8, 20, 29};
  const std::vector<int64_t> grows = {2, 3, 8, 9, 15, 29};
  std::vector<double> wv = random_dense({7, 3}, 41).v;
  std::vector<double> gv = random_dense({6, 3}, 42, -2, 2).v;
  Dense wd = dense_of_rows(shape, wrows, wv), gd = dense_of_rows(shape, grows, gv);
  Params sgd = {{"lr", "0.1"}, {"wd", "0.05"}, {"rescale_grad", "0.5"},
                {"clip_gradient", "0.6"}};
  for (bool lazy : {true, false}) {
    Params p = sgd;
    p.push_back({"lazy_update", lazy ? "true" : "false"});
    Arr w = make_rsp_rows(shape, wrows, wv, MXC_DTYPE_FLOAT32);
    Arr g = make_rsp_rows(shape, grows, gv, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32);
    std::vector<Arr> outs;
    outs.emplace_back(w.get());
    ASSERT_EQ(invoke("sgd_update", p, {w.get(), g.get()}, &outs), MXC_OK)
        << mxc_last_error();
    outs[0].release();
    ASSERT_EQ(stype_of(w.get()), MXC_STYPE_ROW_SPARSE);
    Arr idx;
    ASSERT_EQ(mxc_ndarray_aux(w.get(), MXC_ROW_SPARSE_INDICES, idx.out()),
              MXC_OK);
    EXPECT_EQ(read(idx.get()).v,
              (std::vector<double>{0, 1, 2, 3, 7, 8, 9, 15, 20, 29}));
    Arr dw = make_dense(wd), dg = make_dense(gd);
    std::vector<Arr> dout;
    dout.emplace_back(dw.get());
    ASSERT_EQ(invoke("sgd_update", p, {dw.get(), dg.get()}, &dout), MXC_OK);
    dout[0].release();
    Dense got = read(w.get()), want = read(dw.get());
    Dense before = read(make_dense(wd).get());
    for (int64_t r = 0; r < shape[0]; ++r) {
      bool has_g = std::find(grows.begin(), grows.end(), r) != grows.end();
      for (int64_t j = 0; j < 3; ++j) {
        size_t i = (size_t)(r * 3 + j);
        EXPECT_EQ(got.v[i], lazy && !has_g ? before.v[i] : want.v[i])
            << (lazy ? "lazy" : "std") << " row " << r;
      }
    }
  }
}

// ---- bad input ----

TEST(LazyUpdateBadInput, GradShapeDtypeAndFormat) {
  Dense wd = random_dense({10, 4}, 1);
  Arr w = make_dense(wd);
  std::vector<double> one(4, 1.0);
  {  // grad shape differs from the weight's
    Arr g = make_rsp_rows({11, 4}, {2}, one, MXC_DTYPE_FLOAT32);
    std::vector<Arr> outs;
    EXPECT_EQ(invoke("sgd_update", {{"lr", "0.1"}}, {w.get(), g.get()}, &outs),
              MXC_ERR_SHAPE);
    std::string e = mxc_last_error();
    EXPECT_NE(e.find("sgd_update"), std::string::npos) << e;
    EXPECT_NE(e.find("grad"), std::string::npos) << e;
    EXPECT_NE(e.find("(11,4)"), std::string::npos) << e;
  }
  {  // grad dtype differs
    Arr g = make_rsp_rows({10, 4}, {2}, one, MXC_DTYPE_FLOAT64);
    std::vector<Arr> outs;
    EXPECT_EQ(invoke("adam_update", {{"lr", "0.1"}},
                     {w.get(), g.get(), w.get(), w.get()}, &outs),
              MXC_ERR_DTYPE)
        << mxc_last_error();
  }
  const std::vector<int64_t> bad_rows[] = {{3, 3}, {5, 2}, {1, 10}, {-1, 2}};
  for (const auto &rows : bad_rows) {  // malformed row indices
    Arr w2 = make_dense(wd);
    std::vector<double> vals(8, 1.0);
    Arr g = make_rsp_rows({10, 4}, rows, vals, MXC_DTYPE_FLOAT32);
    std::vector<Arr> outs;
    outs.emplace_back(mxc_ndarray(nullptr));
    *outs[0].out() = w2.get();
    ASSERT_EQ(invoke("sgd_update", {{"lr", "0.1"}}, {w2.get(), g.get()}, &outs),
              MXC_OK);
    outs[0].release();
    EXPECT_EQ(mxc_ndarray_wait_to_read(w2.get()), MXC_ERR_INVALID_ARGUMENT);
    std::string e = mxc_last_error();
    EXPECT_NE(e.find("sgd_update"), std::string::npos) << e;
    EXPECT_NE(e.find("grad"), std::string::npos) << e;
    mxc_wait_all();  // clears the reported failure
  }
  {  // a lazy update cannot accumulate into its output
    Arr w2 = make_dense(wd), o = make_dense(wd);
    Arr g = make_rsp_rows({10, 4}, {2}, one, MXC_DTYPE_FLOAT32);
    std::vector<Arr> outs;
    outs.emplace_back(o.get());
    ASSERT_EQ(invoke("sgd_update", {{"lr", "0.1"}}, {w2.get(), g.get()}, &outs,
                     1, {MXC_REQ_ADD}),
              MXC_OK);
    outs[0].release();
    EXPECT_EQ(mxc_ndarray_wait_to_read(o.get()), MXC_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(mxc_last_error()).find("sgd_update"),
              std::string::npos)
        << mxc_last_error();
    mxc_wait_all();
  }
}

}  // namespace
