// Sparse kernels of dot (ops/sparse/dot.c): every combination against a
// naive double-precision product of the inputs' dense values (random
// matrices with empty rows and columns; int32 and int64 indices; float32
// and float64; widths around the 64/16-column blocks), the row set of a
// row_sparse weight gradient, req add, the multi-threaded paths, the
// storage-type rules (infer_stype called directly, so the rules are checked
// whatever the dense fallback does), shape/dtype/format errors, concurrent
// use, and an allocation-failure walk.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/fault_walk.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
#include "core/op/op.h"
// core/op/invoke.h (C11 atomics) is not C++: the one function used here.
void mxc__fallback_log_reset(void);
}

namespace {

using sparse_test::Arr;
using sparse_test::Dense;
using sparse_test::invoke;
using sparse_test::make;
using sparse_test::make_csr;
using sparse_test::make_dense;
using sparse_test::make_row_sparse;
using sparse_test::max_rel_err;
using sparse_test::random_dense;
using sparse_test::random_sparse;
using sparse_test::read;
using sparse_test::stype_of;

using Params = std::vector<std::pair<std::string, std::string>>;

std::string err() { return mxc_last_error(); }

// Collects log lines while alive (storage fallbacks log one each) and, at
// the end, fails the test if dot or _backward_dot ran through the dense
// fallback instead of the sparse kernels.
class LogCapture {
 public:
  explicit LogCapture(bool forbid_dot = true) : forbid_dot_(forbid_dot) {
    mxc__fallback_log_reset();
    mxc_set_log_callback(&LogCapture::fn, this);
  }
  // Fails the test if dot or its gradient went through the fallback.
  ~LogCapture() {
    mxc_wait_all();
    mxc_set_log_callback(nullptr, nullptr);
    if (!forbid_dot_) return;
    for (const auto &x : lines("operator 'dot'")) ADD_FAILURE() << x;
    for (const auto &x : lines("operator '_backward_dot'")) ADD_FAILURE() << x;
  }
  // Lines mentioning `what`.
  std::vector<std::string> lines(const std::string &what) {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> r;
    for (const auto &x : lines_) {
      if (x.find(what) != std::string::npos) r.push_back(x);
    }
    return r;
  }

 private:
  static void fn(int, const char *msg, void *self) {
    auto *c = static_cast<LogCapture *>(self);
    std::lock_guard<std::mutex> l(c->mu_);
    c->lines_.push_back(msg);
  }
  bool forbid_dot_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// A 2-D (r x c) product op(a) * op(b) in double; a and b are 2-D.
Dense naive(const Dense &a, const Dense &b, bool ta, bool tb) {
  int64_t ar = a.shape[0], ac = a.shape[1], br = b.shape[0], bc = b.shape[1];
  int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  EXPECT_EQ(k, tb ? bc : br);
  Dense o{{m, n}, std::vector<double>((size_t)(m * n), 0.0)};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) {
        double x = ta ? a.v[(size_t)(q * ac + i)] : a.v[(size_t)(i * ac + q)];
        double y = tb ? b.v[(size_t)(j * bc + q)] : b.v[(size_t)(q * bc + j)];
        s += x * y;
      }
      o.v[(size_t)(i * n + j)] = s;
    }
  }
  return o;
}

// A sparse matrix with empty rows and, every `col_gap`-th column, empty
// columns.
Dense sparse_matrix(int64_t rows, int64_t cols, double density, unsigned seed,
                    int col_gap = 3) {
  Dense d = random_sparse({rows, cols}, density, seed, (int)(rows / 4));
  for (int64_t c = 0; c < cols; c += col_gap) {
    for (int64_t r = 0; r < rows; ++r) d.v[(size_t)(r * cols + c)] = 0;
  }
  return d;
}

// Tolerance of one dtype (float32 sums of many products round).
double tol(int dtype) { return dtype == MXC_DTYPE_FLOAT32 ? 1e-5 : 1e-12; }

Params flags(bool ta, bool tb) {
  return {{"transpose_a", ta ? "true" : "false"},
          {"transpose_b", tb ? "true" : "false"}};
}

// dot(lhs, rhs) into a new output; returns it (empty on failure).
Arr run_dot(mxc_ndarray lhs, mxc_ndarray rhs, bool ta, bool tb) {
  std::vector<Arr> outs;
  int rc = invoke("dot", flags(ta, tb), {lhs, rhs}, &outs);
  EXPECT_EQ(rc, MXC_OK) << err();
  if (rc != MXC_OK) return Arr();
  EXPECT_EQ(mxc_ndarray_wait_to_read(outs[0].get()), MXC_OK) << err();
  return std::move(outs[0]);
}

struct Case {
  int64_t m, k, n;
};
// Widths below, at and around the 16- and 64-column blocks.
const Case kCases[] = {{7, 5, 1},   {13, 9, 17}, {9, 20, 64}, {10, 31, 70},
                       {5, 4, 130}, {1, 1, 3},   {6, 8, 16},  {12, 11, 81}};
const int kDtypes[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64};
const int kIndex[] = {MXC_DTYPE_INT32, MXC_DTYPE_INT64};

// ---- each combination against the naive product ----

TEST(SparseDot, CsrTimesDense) {
  LogCapture log;
  unsigned seed = 1;
  for (const Case &c : kCases) {
    for (int dt : kDtypes) {
      for (int it : kIndex) {
        Dense a = sparse_matrix(c.m, c.k, 0.4, seed++);
        Dense b = random_dense({c.k, c.n}, seed++);
        Arr ha = make_csr(a, dt, it), hb = make_dense(b, dt);
        Arr o = run_dot(ha.get(), hb.get(), false, false);
        ASSERT_TRUE(o.get());
        EXPECT_EQ(stype_of(o.get()), MXC_STYPE_DEFAULT);
        EXPECT_LE(max_rel_err(read(o.get()), naive(a, b, false, false)),
                  tol(dt))
            << c.m << "x" << c.k << "x" << c.n << " dtype " << dt << " idx "
            << it;
      }
    }
  }
}

TEST(SparseDot, TransposedCsrTimesDense) {
  LogCapture log;
  unsigned seed = 100;
  for (const Case &c : kCases) {
    for (int dt : kDtypes) {
      for (int it : kIndex) {
        Dense a = sparse_matrix(c.m, c.k, 0.4, seed++);
        Dense b = random_dense({c.m, c.n}, seed++);
        Arr ha = make_csr(a, dt, it), hb = make_dense(b, dt);
        Arr o = run_dot(ha.get(), hb.get(), true, false);
        ASSERT_TRUE(o.get());
        EXPECT_EQ(stype_of(o.get()), MXC_STYPE_DEFAULT);
        EXPECT_LE(max_rel_err(read(o.get()), naive(a, b, true, false)), tol(dt))
            << c.m << "x" << c.k << "x" << c.n;
      }
    }
  }
}

// The weight gradient: a given row_sparse output stores exactly the csr
// columns holding an entry, in increasing order.
TEST(SparseDot, TransposedCsrIntoRowSparse) {
  LogCapture log;
  unsigned seed = 200;
  for (const Case &c : kCases) {
    for (int dt : kDtypes) {
      for (int it : kIndex) {
        Dense a = sparse_matrix(c.m, c.k, 0.3, seed++);
        Dense b = random_dense({c.m, c.n}, seed++);
        Arr ha = make_csr(a, dt, it), hb = make_dense(b, dt);
        // The output's index dtype follows the case too.
        Dense zero{{c.k, c.n}, std::vector<double>((size_t)(c.k * c.n), 0)};
        std::vector<Arr> outs(1);
        outs[0] = make_row_sparse(zero, dt, it);
        ASSERT_EQ(
            invoke("dot", flags(true, false), {ha.get(), hb.get()}, &outs),
            MXC_OK)
            << err();
        ASSERT_EQ(mxc_ndarray_wait_to_read(outs[0].get()), MXC_OK) << err();
        EXPECT_EQ(stype_of(outs[0].get()), MXC_STYPE_ROW_SPARSE);
        EXPECT_LE(max_rel_err(read(outs[0].get()), naive(a, b, true, false)),
                  tol(dt));
        std::vector<int64_t> want;
        for (int64_t col = 0; col < c.k; ++col) {
          bool any = false;
          for (int64_t r = 0; r < c.m; ++r)
            any |= a.v[(size_t)(r * c.k + col)] != 0;
          if (any) want.push_back(col);
        }
        Arr rows;
        ASSERT_EQ(
            mxc_ndarray_aux(outs[0].get(), MXC_ROW_SPARSE_INDICES, rows.out()),
            MXC_OK)
            << err();
        Dense got = read(rows.get());
        ASSERT_EQ(got.v.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ((int64_t)got.v[i], want[i]);
        }
        EXPECT_EQ(mxc_ndarray_check_format(outs[0].get(), 1), MXC_OK) << err();
      }
    }
  }
}

TEST(SparseDot, DenseTimesCsr) {
  LogCapture log;
  unsigned seed = 300;
  for (const Case &c : kCases) {
    for (int dt : kDtypes) {
      for (int it : kIndex) {
        for (bool tb : {false, true}) {
          // lhs (n, m); csr (m, k) or, transposed, (k, m).
          Dense a = random_dense({c.n, c.m}, seed++);
          Dense b = tb ? sparse_matrix(c.k, c.m, 0.4, seed++)
                       : sparse_matrix(c.m, c.k, 0.4, seed++);
          Arr ha = make_dense(a, dt), hb = make_csr(b, dt, it);
          Arr o = run_dot(ha.get(), hb.get(), false, tb);
          ASSERT_TRUE(o.get());
          EXPECT_EQ(stype_of(o.get()), MXC_STYPE_DEFAULT);
          EXPECT_LE(max_rel_err(read(o.get()), naive(a, b, false, tb)), tol(dt))
              << "transpose_b " << tb;
        }
      }
    }
  }
}

TEST(SparseDot, CsrTimesRowSparse) {
  LogCapture log;
  unsigned seed = 400;
  for (const Case &c : kCases) {
    for (int dt : kDtypes) {
      for (int it : kIndex) {
        Dense a = sparse_matrix(c.m, c.k, 0.5, seed++);
        // rhs rows: some empty (not stored).
        Dense b = random_sparse({c.k, c.n}, 0.7, seed++, (int)(c.k / 3));
        Arr ha = make_csr(a, dt, it);
        Arr hb = make_row_sparse(
            b, dt, it == MXC_DTYPE_INT32 ? MXC_DTYPE_INT64 : MXC_DTYPE_INT32);
        Arr o = run_dot(ha.get(), hb.get(), false, false);
        ASSERT_TRUE(o.get());
        EXPECT_EQ(stype_of(o.get()), MXC_STYPE_DEFAULT);
        EXPECT_LE(max_rel_err(read(o.get()), naive(a, b, false, false)),
                  tol(dt));
      }
    }
  }
}

// A rhs of more than 2 axes is viewed as (first axis, rest), as the dense
// dot does: compare against the dense operator on the dense values.
TEST(SparseDot, NdRhsMatchesDenseOperator) {
  Dense a = sparse_matrix(6, 4, 0.5, 7);
  Dense b = random_dense({4, 3, 5}, 8);
  Arr ha = make_csr(a), da = make_dense(a), hb = make_dense(b);
  Arr s = run_dot(ha.get(), hb.get(), false, false);
  Arr d = run_dot(da.get(), hb.get(), false, false);
  ASSERT_TRUE(s.get() && d.get());
  Dense rs = read(s.get()), rd = read(d.get());
  EXPECT_EQ(rs.shape, (std::vector<int64_t>{6, 3, 5}));
  EXPECT_LE(max_rel_err(rs, rd), 1e-5);
  // transpose(csr) x dense(6, 2, 3): (4, 2, 3).
  Dense g = random_dense({6, 2, 3}, 9);
  Arr hg = make_dense(g);
  Arr st = run_dot(ha.get(), hg.get(), true, false);
  Arr dtr = run_dot(da.get(), hg.get(), true, false);
  ASSERT_TRUE(st.get() && dtr.get());
  EXPECT_EQ(read(st.get()).shape, (std::vector<int64_t>{4, 2, 3}));
  EXPECT_LE(max_rel_err(read(st.get()), read(dtr.get())), 1e-5);
}

// Dense outputs accumulate with req add.
TEST(SparseDot, ReqAddAccumulates) {
  LogCapture log;
  Dense a = sparse_matrix(9, 7, 0.4, 11);
  Dense b = random_dense({7, 20}, 12), g = random_dense({9, 20}, 13);
  Dense l = random_dense({5, 9}, 14);
  Arr ha = make_csr(a), hb = make_dense(b), hg = make_dense(g),
      hl = make_dense(l);
  struct Sub {
    mxc_ndarray lhs, rhs;
    bool ta;
    Dense want;
  } subs[] = {
      {ha.get(), hb.get(), false, naive(a, b, false, false)},
      {ha.get(), hg.get(), true, naive(a, g, true, false)},
      {hl.get(), ha.get(), false, naive(l, a, false, false)},
  };
  for (Sub &s : subs) {
    Dense init = random_dense(s.want.shape, 15);
    std::vector<Arr> outs(1);
    outs[0] = make_dense(init);
    ASSERT_EQ(invoke("dot", flags(s.ta, false), {s.lhs, s.rhs}, &outs, 1,
                     {MXC_REQ_ADD}),
              MXC_OK)
        << err();
    Dense want = s.want;
    for (size_t i = 0; i < want.v.size(); ++i) want.v[i] += init.v[i];
    EXPECT_LE(max_rel_err(read(outs[0].get()), want), 1e-5);
  }
}

// Sizes large enough for the kernels to split over threads.
TEST(SparseDot, LargeProductsUseThreads) {
  LogCapture log;
  mxc_set_num_threads(4);
  Dense a = sparse_matrix(700, 300, 0.05, 21, 5);
  Dense b = random_dense({300, 67}, 22), g = random_dense({700, 67}, 23);
  Dense l = random_dense({150, 700}, 24);
  for (int it : kIndex) {
    Arr ha = make_csr(a, MXC_DTYPE_FLOAT32, it), hb = make_dense(b),
        hg = make_dense(g), hl = make_dense(l);
    Arr o1 = run_dot(ha.get(), hb.get(), false, false);
    Arr o2 = run_dot(ha.get(), hg.get(), true, false);
    Arr o3 = run_dot(hl.get(), ha.get(), false, false);
    ASSERT_TRUE(o1.get() && o2.get() && o3.get());
    EXPECT_LE(max_rel_err(read(o1.get()), naive(a, b, false, false)), 1e-5);
    EXPECT_LE(max_rel_err(read(o2.get()), naive(a, g, true, false)), 1e-5);
    EXPECT_LE(max_rel_err(read(o3.get()), naive(l, a, false, false)), 1e-5);
    Dense zero{{300, 67}, std::vector<double>(300 * 67, 0.0)};
    std::vector<Arr> outs(1);
    outs[0] = make_row_sparse(zero);
    ASSERT_EQ(invoke("dot", flags(true, false), {ha.get(), hg.get()}, &outs),
              MXC_OK)
        << err();
    EXPECT_LE(max_rel_err(read(outs[0].get()), naive(a, g, true, false)), 1e-5);
  }
}

// Dense x dense still runs the dense kernel.
TEST(SparseDot, DenseDenseUnchanged) {
  Dense a = random_dense({5, 6}, 31), b = random_dense({6, 4}, 32);
  Arr ha = make_dense(a), hb = make_dense(b);
  Arr o = run_dot(ha.get(), hb.get(), false, false);
  ASSERT_TRUE(o.get());
  EXPECT_EQ(stype_of(o.get()), MXC_STYPE_DEFAULT);
  EXPECT_LE(max_rel_err(read(o.get()), naive(a, b, false, false)), 1e-5);
}

// ---- storage-type rules ----

// infer_stype of dot for (lhs, rhs, given output) and transposes: the
// output storage type, or -1 for MXC_ERR_STYPE (left to the fallback).
int rule(int l, int r, int o, bool ta, bool tb, int *dispatch) {
  const mxc__op *op = mxc__op_find("dot");
  EXPECT_NE(op, nullptr);
  mxc__infer_stype_fn f = mxc__op_infer_stype(op);
  EXPECT_NE(f, nullptr);
  if (!op || !f) return -2;
  const char *keys[2] = {"transpose_a", "transpose_b"};
  const char *vals[2] = {ta ? "true" : "false", tb ? "true" : "false"};
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(op, keys, vals, 2, &param), MXC_OK);
  int in[2] = {l, r}, out[1] = {o};
  int rc = f(op, param, in, 2, out, 1, dispatch);
  mxc__free(param);
  if (rc != MXC_OK) {
    EXPECT_EQ(rc, MXC_ERR_STYPE);
    EXPECT_NE(err().find("dot"), std::string::npos) << err();
    return -1;
  }
  return out[0];
}

TEST(SparseDot, StorageTypeRules) {
  const int D = MXC_STYPE_DEFAULT, C = MXC_STYPE_CSR, R = MXC_STYPE_ROW_SPARSE,
            N = -1;
  struct Rule {
    int l, r, o;
    bool ta, tb;
    int want;  // output stype, -1: MXC_ERR_STYPE
  } rules[] = {
      {D, D, N, false, false, D},  {D, D, D, true, true, D},
      {D, D, R, false, false, -1}, {C, D, N, false, false, D},
      {C, D, D, false, false, D},  {C, D, R, false, false, -1},
      {C, D, C, false, false, -1}, {C, D, N, true, false, D},
      {C, D, R, true, false, R},   {C, D, C, true, false, -1},
      {C, D, N, false, true, -1},  {C, D, N, true, true, -1},
      {D, C, N, false, false, D},  {D, C, N, false, true, D},
      {D, C, R, false, false, -1}, {D, C, N, true, false, -1},
      {C, R, N, false, false, D},  {C, R, D, false, false, D},
      {C, R, N, true, false, -1},  {C, R, N, false, true, -1},
      {C, C, N, false, false, -1}, {R, D, N, false, false, -1},
      {D, R, N, false, false, -1}, {R, R, N, false, false, -1},
  };
  for (const Rule &x : rules) {
    int dispatch = -1;
    int got = rule(x.l, x.r, x.o, x.ta, x.tb, &dispatch);
    EXPECT_EQ(got, x.want) << "lhs " << x.l << " rhs " << x.r << " out " << x.o
                           << " ta " << x.ta << " tb " << x.tb;
    if (got >= 0) {
      bool all_dense = x.l == D && x.r == D && got == D;
      EXPECT_EQ(dispatch,
                all_dense ? MXC__DISPATCH_DENSE : MXC__DISPATCH_SPARSE);
    }
  }
}

// Through invoke, a new output of a supported sparse combination is
// dense.
TEST(SparseDot, NewOutputIsDense) {
  Dense a = sparse_matrix(4, 3, 0.5, 41);
  Arr ha = make_csr(a), hb = make_dense(random_dense({3, 2}, 42)),
      hg = make_dense(random_dense({4, 2}, 43));
  Arr o1 = run_dot(ha.get(), hb.get(), false, false);
  Arr o2 = run_dot(ha.get(), hg.get(), true, false);
  ASSERT_TRUE(o1.get() && o2.get());
  EXPECT_EQ(stype_of(o1.get()), MXC_STYPE_DEFAULT);
  EXPECT_EQ(stype_of(o2.get()), MXC_STYPE_DEFAULT);
}

// ---- gradients ----

// _backward_dot with a csr lhs: drhs against the naive product, dlhs the
// naive gradient kept to lhs's stored entries.
TEST(SparseDot, BackwardKernel) {
  LogCapture log;
  unsigned seed = 500;
  for (const Case &c : kCases) {
    for (int dt : kDtypes) {
      for (int it : kIndex) {
        for (bool ta : {false, true}) {
          // lhs (m, k); forward out (m, n) or, transposed, (k, n).
          Dense a = sparse_matrix(c.m, c.k, 0.4, seed++);
          Dense b = random_dense({ta ? c.m : c.k, c.n}, seed++);
          Dense g = random_dense({ta ? c.k : c.m, c.n}, seed++);
          Arr ha = make_csr(a, dt, it), hb = make_dense(b, dt),
              hg = make_dense(g, dt);
          std::vector<Arr> outs;
          ASSERT_EQ(invoke("_backward_dot", flags(ta, false),
                           {hg.get(), ha.get(), hb.get()}, &outs, 2),
                    MXC_OK)
              << err();
          ASSERT_EQ(mxc_ndarray_wait_to_read(outs[1].get()), MXC_OK) << err();
          EXPECT_EQ(stype_of(outs[0].get()), MXC_STYPE_CSR);
          EXPECT_EQ(stype_of(outs[1].get()), MXC_STYPE_DEFAULT);
          Dense drhs =
              ta ? naive(a, g, false, false) : naive(a, g, true, false);
          EXPECT_LE(max_rel_err(read(outs[1].get()), drhs), tol(dt));
          Dense dlhs = ta ? naive(b, g, false, true) : naive(g, b, false, true);
          for (size_t i = 0; i < dlhs.v.size(); ++i) {
            if (a.v[i] == 0) dlhs.v[i] = 0;
          }
          EXPECT_LE(max_rel_err(read(outs[0].get()), dlhs), tol(dt));
          EXPECT_EQ(sparse_test::nnz_of(outs[0].get()),
                    sparse_test::nnz_of(ha.get()));
        }
      }
    }
  }
}

// d/dW of sum(dot(csr, W)) through autograd, into a row_sparse and into a
// dense gradient buffer: column c of csr^T ones, only the rows of W that a
// stored column touches stored.
TEST(SparseDot, AutogradWeightGradient) {
  LogCapture log;
  Dense a = sparse_matrix(8, 9, 0.3, 601);
  Dense w = random_dense({9, 5}, 602);
  Dense ones{{8, 5}, std::vector<double>(40, 1.0)};
  Dense want = naive(a, ones, true, false);
  for (int gst : {MXC_STYPE_ROW_SPARSE, MXC_STYPE_DEFAULT}) {
    Arr ha = make_csr(a), hw = make_dense(w);
    Dense zero{{9, 5}, std::vector<double>(45, 0.0)};
    Arr gw = make(zero, gst);
    mxc_ndarray vars[1] = {hw.get()}, grads[1] = {gw.get()};
    int reqs[1] = {MXC_REQ_WRITE};
    ASSERT_EQ(mxc_autograd_mark_variables(1, vars, reqs, grads), MXC_OK)
        << err();
    ASSERT_EQ(mxc_autograd_set_recording(1, nullptr), MXC_OK);
    std::vector<Arr> y, s;
    int rc = invoke("dot", {}, {ha.get(), hw.get()}, &y);
    if (rc == MXC_OK) rc = invoke("sum", {}, {y[0].get()}, &s);
    mxc_autograd_set_recording(0, nullptr);
    ASSERT_EQ(rc, MXC_OK) << err();
    mxc_ndarray head = s[0].get();
    ASSERT_EQ(mxc_autograd_backward(1, &head, nullptr, 0), MXC_OK) << err();
    ASSERT_EQ(mxc_ndarray_wait_to_read(gw.get()), MXC_OK) << err();
    EXPECT_EQ(stype_of(gw.get()), gst);
    EXPECT_LE(max_rel_err(read(gw.get()), want), 1e-5);
    if (gst == MXC_STYPE_ROW_SPARSE) {
      int64_t touched = 0;
      for (int64_t col = 0; col < 9; ++col) {
        bool any = false;
        for (int64_t r = 0; r < 8; ++r) any |= a.v[(size_t)(r * 9 + col)] != 0;
        touched += any;
      }
      EXPECT_EQ(sparse_test::nnz_of(gw.get()), touched);
    }
  }
}

// Combinations without a sparse kernel are refused by the storage
// inference and so run through the dense fallback, which logs them.
TEST(SparseDot, OtherCombinationsFallBack) {
  LogCapture log(false);
  Dense a = sparse_matrix(6, 5, 0.5, 91);
  Dense b = random_dense({4, 5}, 92), r = random_dense({6, 3}, 93);
  Arr ha = make_csr(a), hb = make_dense(b), hr = make_row_sparse(r);
  Arr o1 = run_dot(ha.get(), hb.get(), false, true);  // csr x dense^T
  Arr o2 = run_dot(hr.get(), ha.get(), true, false);  // rsp^T x csr
  ASSERT_TRUE(o1.get() && o2.get());
  EXPECT_LE(max_rel_err(read(o1.get()), naive(a, b, false, true)), 1e-5);
  EXPECT_LE(max_rel_err(read(o2.get()), naive(r, a, true, false)), 1e-5);
  mxc_wait_all();
  EXPECT_EQ(log.lines("operator 'dot'").size(), 2u);
}

// ---- errors ----

TEST(SparseDot, ShapeMismatchNamesBothShapes) {
  Arr ha = make_csr(sparse_matrix(4, 5, 0.5, 51));
  Arr hb = make_dense(random_dense({6, 3}, 52));
  Arr hl = make_dense(random_dense({2, 7}, 53));
  mxc_ndarray sentinel = nullptr;
  std::vector<Arr> outs;
  EXPECT_EQ(invoke("dot", flags(false, false), {ha.get(), hb.get()}, &outs),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(4,5)"), std::string::npos) << err();
  EXPECT_NE(err().find("(6,3)"), std::string::npos) << err();
  EXPECT_EQ(outs.size() == 1 ? outs[0].get() : sentinel, nullptr);
  EXPECT_EQ(invoke("dot", flags(true, false), {ha.get(), hb.get()}, &outs),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(4,5)"), std::string::npos) << err();
  EXPECT_EQ(invoke("dot", flags(false, false), {hl.get(), ha.get()}, &outs),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(2,7)"), std::string::npos) << err();
  EXPECT_NE(err().find("(4,5)"), std::string::npos) << err();
}

TEST(SparseDot, DtypeErrors) {
  Dense a = sparse_matrix(4, 5, 0.5, 61);
  Arr ha = make_csr(a, MXC_DTYPE_FLOAT32);
  Arr hb = make_dense(random_dense({5, 3}, 62), MXC_DTYPE_FLOAT64);
  std::vector<Arr> outs;
  EXPECT_EQ(invoke("dot", {}, {ha.get(), hb.get()}, &outs), MXC_ERR_DTYPE);
  EXPECT_NE(err().find("dot"), std::string::npos) << err();
  // Integer values: refused by the kernel (or earlier), never a crash.
  Arr ia = make_csr(a, MXC_DTYPE_INT32),
      ib = make_dense(random_dense({5, 3}, 63, 0, 4), MXC_DTYPE_INT32);
  std::vector<Arr> o2;
  int rc = invoke("dot", {}, {ia.get(), ib.get()}, &o2);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(o2[0].get());
  EXPECT_NE(rc, MXC_OK);
  EXPECT_NE(err().find("dot"), std::string::npos) << err();
  mxc_wait_all();  // clears the failure for later tests
}

// A malformed csr from host buffers fails the kernel's format check: the
// wait reports it naming the operator; nothing is read out of bounds.
TEST(SparseDot, MalformedCsrIsReported) {
  const int64_t shape[2] = {3, 4};
  const float data[3] = {1, 2, 3};
  const int64_t ip[4] = {0, 1, 2, 3}, ix[3] = {0, 9, 1};  // 9 >= 4 columns
  Arr c;
  ASSERT_EQ(mxc_ndarray_create_csr(shape, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                                   data, ip, ix, 3, MXC_DEVICE_CPU, 0, c.out()),
            MXC_OK)
      << err();
  Arr hb = make_dense(random_dense({4, 2}, 71)),
      hg = make_dense(random_dense({3, 2}, 72));
  for (bool ta : {false, true}) {
    std::vector<Arr> outs;
    ASSERT_EQ(invoke("dot", flags(ta, false),
                     {c.get(), ta ? hg.get() : hb.get()}, &outs),
              MXC_OK)
        << err();
    EXPECT_EQ(mxc_ndarray_wait_to_read(outs[0].get()),
              MXC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("dot"), std::string::npos) << err();
    EXPECT_NE(err().find("indices[1]"), std::string::npos) << err();
  }
  mxc_wait_all();
}

// ---- threads and allocation failures ----

TEST(SparseDot, ConcurrentCallers) {
  Dense a = sparse_matrix(300, 200, 0.05, 81);
  Dense b = random_dense({200, 40}, 82), g = random_dense({300, 40}, 83);
  Dense want = naive(a, b, false, false), want_t = naive(a, g, true, false);
  Arr ha = make_csr(a), hb = make_dense(b), hg = make_dense(g);
  std::vector<std::thread> ts;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      bool good = true;
      for (int i = 0; i < 5; ++i) {
        std::vector<Arr> o1, o2;
        good = good && invoke("dot", flags(false, false), {ha.get(), hb.get()},
                              &o1) == MXC_OK;
        good = good && invoke("dot", flags(true, false), {ha.get(), hg.get()},
                              &o2) == MXC_OK;
        good = good && max_rel_err(read(o1[0].get()), want) <= 1e-5 &&
               max_rel_err(read(o2[0].get()), want_t) <= 1e-5;
      }
      ok[(size_t)t] = good;
    });
  }
  for (auto &t : ts) t.join();
  for (int v : ok) EXPECT_TRUE(v);
}

int scenario() {
  const int64_t shp[2] = {4, 3}, gshp[2] = {4, 2}, wshp[2] = {3, 2};
  const float data[4] = {1, 2, 3, 4}, w[6] = {1, 2, 3, 4, 5, 6},
              gv[8] = {1, -1, 2, -2, 3, -3, 4, -4};
  const int64_t ip[5] = {0, 1, 1, 3, 4}, ix[4] = {2, 0, 1, 2}, rr[2] = {0, 2};
  mxc_ndarray c = nullptr, g = nullptr, wd = nullptr, rsp = nullptr,
              gw = nullptr, o1 = nullptr, o2 = nullptr, o3 = nullptr;
  mxc_op dot = nullptr;
  int rc = mxc_op_find("dot", &dot);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data,
                                ip, ix, 4, MXC_DEVICE_CPU, 0, &c);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(gshp, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                            &g);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(wshp, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                            &wd);
  }
  if (rc == MXC_OK) rc = mxc_ndarray_copy_from_host(wd, w, sizeof w);
  if (rc == MXC_OK) rc = mxc_ndarray_copy_from_host(g, gv, sizeof gv);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(wshp, 2, MXC_DTYPE_FLOAT32,
                                       MXC_DTYPE_INT64, w, rr, 2,
                                       MXC_DEVICE_CPU, 0, &rsp);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(wshp, 2, MXC_DTYPE_FLOAT32,
                                       MXC_DTYPE_INT64, nullptr, nullptr, 0,
                                       MXC_DEVICE_CPU, 0, &gw);
  }
  const char *keys[1] = {"transpose_a"}, *t[1] = {"true"};
  mxc_ndarray in1[2] = {c, wd}, in2[2] = {c, g}, in3[2] = {c, rsp};
  if (rc == MXC_OK)
    rc = mxc_op_invoke(dot, nullptr, nullptr, 0, in1, 2, &o1, 1, nullptr);
  if (rc == MXC_OK)
    rc = mxc_op_invoke(dot, keys, t, 1, in2, 2, &o2, 1, nullptr);
  if (rc == MXC_OK)
    rc = mxc_op_invoke(dot, keys, t, 1, in2, 2, &gw, 1, nullptr);
  if (rc == MXC_OK)
    rc = mxc_op_invoke(dot, nullptr, nullptr, 0, in3, 2, &o3, 1, nullptr);
  // The gradient kernel: a csr dlhs (allocated in the kernel) and drhs.
  mxc_op bwd = nullptr;
  mxc_ndarray in4[3] = {g, c, wd}, o4[2] = {nullptr, nullptr};
  if (rc == MXC_OK) rc = mxc_op_find("_backward_dot", &bwd);
  if (rc == MXC_OK)
    rc = mxc_op_invoke(bwd, nullptr, nullptr, 0, in4, 3, o4, 2, nullptr);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(gw);
  for (mxc_ndarray x : {c, g, wd, rsp, gw, o1, o2, o3, o4[0], o4[1]}) {
    mxc_ndarray_free(x);
  }
  int wrc = mxc_wait_all();  // asynchronous failures surface here
  return rc != MXC_OK ? rc : wrc;
}

TEST(SparseDotFaults, EveryAllocationFails) {
  int failures = mxct::alloc_failure_walk(scenario, 11);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
