// Sparse reductions and row selections (ops/sparse/reduce.c, slice.c,
// retain.c, square_sum.c): every kernel against the dense operator on the
// cast-to-dense input or a naive loop over dense values; the storage-type
// rules of each operator (through its inference function); bad input;
// gradients of _square_sum and _sparse_retain against dense math; an
// allocation-failure walk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/fault_walk.h"
#include "tests/sparse_reduce/shim.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace {

using sparse_test::Arr;
using sparse_test::Dense;
using sparse_test::invoke;
using sparse_test::make_csr;
using sparse_test::make_dense;
using sparse_test::make_row_sparse;
using sparse_test::max_rel_err;
using sparse_test::nnz_of;
using sparse_test::random_dense;
using sparse_test::random_sparse;
using sparse_test::read;
using sparse_test::stype_of;
using Params = std::vector<std::pair<std::string, std::string>>;

const int F32 = MXC_DTYPE_FLOAT32, F64 = MXC_DTYPE_FLOAT64;
const int DNS = MXC_STYPE_DEFAULT, RSP = MXC_STYPE_ROW_SPARSE,
          CSR = MXC_STYPE_CSR;

std::string err() { return mxc_last_error(); }

// The operator on one input: its output read back (empty shape and a
// gtest failure on error).
Dense run1(const std::string &op, const Params &p, mxc_ndarray x,
           int *stype = nullptr) {
  std::vector<Arr> o;
  int rc = invoke(op, p, {x}, &o);
  EXPECT_EQ(rc, MXC_OK) << op << ": " << err();
  if (rc != MXC_OK) return Dense{};
  if (stype) *stype = stype_of(o[0].get());
  return read(o[0].get());
}

// The same operator on the dense equivalent (the reference).
Dense run_dense(const std::string &op, const Params &p, const Dense &x,
                int dtype) {
  Arr d = make_dense(x, dtype);
  return run1(op, p, d.get());
}

void expect_same(const Dense &got, const Dense &want, const std::string &what) {
  EXPECT_EQ(got.shape, want.shape) << what;
  if (got.shape == want.shape) {
    EXPECT_LE(max_rel_err(got, want), 1e-6) << what;
  }
}

// Storage-type inference of an operator.
struct Stype {
  int rc, out, dispatch;
};
Stype infer(const std::string &op, const Params &p, std::vector<int> in,
            int out = -1) {
  std::vector<const char *> k, v;
  for (const auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  Stype s{0, out, -1};
  s.rc = mxct_infer_stype(op.c_str(), k.data(), v.data(), (int)k.size(),
                          in.data(), (int)in.size(), &s.out, 1, &s.dispatch);
  return s;
}

std::vector<double> aux_of(mxc_ndarray a, int which) {
  Arr h;
  EXPECT_EQ(mxc_ndarray_aux(a, which, h.out()), MXC_OK) << err();
  if (!h.get()) return {};
  return read(h.get()).v;
}

std::vector<Dense> matrices() {
  return {
      random_sparse({7, 5}, 0.4, 1, 2),  // some empty rows
      random_sparse({6, 4}, 0.0, 2),     // all zero
      random_sparse({1, 9}, 0.5, 3),      random_sparse({9, 1}, 0.5, 4, 3),
      random_sparse({12, 30}, 0.1, 5, 4),
  };
}

// ---- sum / mean over csr ----

TEST(SparseSum, CsrMatchesDenseOperator) {
  const char *axes[] = {"None", "()", "0", "1", "-1", "-2", "(0,1)", "(1,0)"};
  for (const char *op : {"sum", "mean", "sum_axis"}) {
    for (const char *axis : axes) {
      for (const char *keep : {"false", "true"}) {
        Params p{{"axis", axis}, {"keepdims", keep}};
        for (int dt : {F32, F64}) {
          for (const Dense &m : matrices()) {
            std::string what = std::string(op) + " axis=" + axis +
                               " keepdims=" + keep + " shape " +
                               std::to_string(m.shape[0]) + "x" +
                               std::to_string(m.shape[1]);
            Arr c = make_csr(m, dt);
            int st = -1;
            Dense got = run1(op, p, c.get(), &st);
            EXPECT_EQ(st, DNS) << what;
            expect_same(got, run_dense(op, p, m, dt), what);
          }
        }
      }
    }
  }
}

TEST(SparseSum, EmptyShapesAndIntegers) {
  for (const char *axis : {"None", "0", "1"}) {
    Params p{{"axis", axis}};
    Dense none{{0, 4}, {}};
    Arr c = make_csr(none);
    expect_same(run1("sum", p, c.get()), run_dense("sum", p, none, F32),
                std::string("0 rows, axis ") + axis);
    // mean over no rows is NaN, as in the dense operator.
    expect_same(run1("mean", p, c.get()), run_dense("mean", p, none, F32),
                std::string("mean 0 rows, axis ") + axis);
    Dense m = random_sparse({8, 6}, 0.5, 11, 2);
    for (double &x : m.v) x = std::round(x * 8);  // integers
    for (int dt : {MXC_DTYPE_INT32, MXC_DTYPE_INT64}) {
      Arr ci = make_csr(m, dt);
      expect_same(run1("sum", p, ci.get()), run_dense("sum", p, m, dt),
                  std::string("int sum axis ") + axis);
    }
  }
}

// Enough stored values for the parallel paths (rows split over threads,
// the full sum in fixed blocks).
TEST(SparseSum, LargeParallel) {
  Dense m = random_sparse({3000, 120}, 0.6, 21, 50);
  Arr c = make_csr(m, F32);
  ASSERT_GT(nnz_of(c.get()), 2 * 65536);
  for (const char *axis : {"None", "0", "1"}) {
    for (const char *op : {"sum", "mean"}) {
      Params p{{"axis", axis}};
      expect_same(run1(op, p, c.get()), run_dense(op, p, m, F32),
                  std::string(op) + " large axis " + axis);
    }
  }
}

TEST(SparseSum, AddAndNullWriteModes) {
  Dense m = random_sparse({7, 5}, 0.4, 31, 2);
  Arr c = make_csr(m);
  for (const char *axis : {"None", "0", "1"}) {
    Params p{{"axis", axis}};
    Dense s = run_dense("sum", p, m, F32);
    Dense init = random_dense(s.shape, 32);
    for (double &x : init.v) x = std::round(x * 8) / 8;
    std::vector<Arr> o;
    o.emplace_back(make_dense(init).release());
    ASSERT_EQ(invoke("sum", p, {c.get()}, &o, 1, {MXC_REQ_ADD}), MXC_OK)
        << err();
    Dense want = s;
    for (size_t i = 0; i < want.v.size(); ++i) want.v[i] += init.v[i];
    expect_same(read(o[0].get()), want, std::string("add axis ") + axis);
    ASSERT_EQ(invoke("sum", p, {c.get()}, &o, 1, {MXC_REQ_NULL}), MXC_OK);
    expect_same(read(o[0].get()), want, "null leaves the output");
  }
}

TEST(SparseSum, StorageTypeRules) {
  for (const char *op : {"sum", "mean"}) {
    Stype s = infer(op, {{"axis", "0"}}, {CSR});
    EXPECT_EQ(s.rc, MXC_OK) << err();
    EXPECT_EQ(s.out, DNS);
    EXPECT_EQ(s.dispatch, 1);
    s = infer(op, {}, {CSR}, DNS);  // full reduction, dense output given
    EXPECT_EQ(s.rc, MXC_OK) << err();
    EXPECT_EQ(s.dispatch, 1);
    s = infer(op, {{"axis", "1"}}, {DNS});
    EXPECT_EQ(s.rc, MXC_OK);
    EXPECT_EQ(s.out, DNS);
    EXPECT_EQ(s.dispatch, 0);
    // No sparse kernel: the dispatcher falls back to dense.
    EXPECT_EQ(infer(op, {{"axis", "0"}}, {RSP}).rc, MXC_ERR_STYPE);
    EXPECT_EQ(infer(op, {{"axis", "0"}, {"exclude", "true"}}, {CSR}).rc,
              MXC_ERR_STYPE);
    s = infer(op, {{"axis", "0"}}, {CSR}, CSR);
    EXPECT_EQ(s.rc, MXC_ERR_STYPE);
    EXPECT_NE(err().find(op), std::string::npos) << err();
    EXPECT_EQ(infer(op, {{"axis", "0"}}, {DNS}, RSP).rc, MXC_ERR_STYPE);
  }
  // Not attached to the other reductions.
  EXPECT_EQ(infer("prod", {}, {CSR}).rc, MXC_ERR_NOT_FOUND);
}

TEST(SparseSum, MalformedCsrIsAnError) {
  const int64_t shape[2] = {3, 4};
  const float data[2] = {1, 2};
  const int64_t indptr[4] = {0, 1, 2, 2}, indices[2] = {7, 0};  // 7 >= cols
  Arr c;
  ASSERT_EQ(mxc_ndarray_create_csr(shape, F32, MXC_DTYPE_INT64, data, indptr,
                                   indices, 2, MXC_DEVICE_CPU, 0, c.out()),
            MXC_OK);
  std::vector<Arr> o;
  ASSERT_EQ(invoke("sum", {{"axis", "0"}}, {c.get()}, &o), MXC_OK) << err();
  EXPECT_EQ(mxc_ndarray_wait_to_read(o[0].get()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("indices[0] = 7"), std::string::npos) << err();
  mxc_wait_all();  // clears the recorded failure
}

// ---- slices of csr rows ----

void check_csr_slice(const std::string &op, const Params &p, const Dense &m,
                     int index_dtype, const std::string &what) {
  Arr c = make_csr(m, F32, index_dtype);
  int st = -1;
  std::vector<Arr> o;
  ASSERT_EQ(invoke(op, p, {c.get()}, &o), MXC_OK) << what << ": " << err();
  st = stype_of(o[0].get());
  EXPECT_EQ(st, CSR) << what;
  Dense got = read(o[0].get());
  Dense want = run_dense(op, p, m, F32);
  expect_same(got, want, what);
  EXPECT_EQ(mxc_ndarray_check_format(o[0].get(), 1), MXC_OK)
      << what << ": " << err();
  std::vector<double> ip = aux_of(o[0].get(), MXC_CSR_INDPTR);
  ASSERT_FALSE(ip.empty()) << what;
  EXPECT_EQ(ip[0], 0) << what << ": indptr rebased to 0";
  int64_t nz = 0;
  for (double x : want.v) nz += x != 0;
  EXPECT_EQ(nnz_of(o[0].get()), nz) << what;
}

TEST(SparseSlice, CsrRowsAndBoxes) {
  Dense m = random_sparse({8, 6}, 0.5, 41, 3);
  const std::vector<std::pair<std::string, std::string>> ranges = {
      {"(2,)", "(5,)"},    {"(0,)", "(8,)"},    {"(7,)", "(8,)"},
      {"(0,)", "(1,)"},    {"(3,)", "(3,)"},    {"(5,)", "(2,)"},
      {"(-3,)", "(100,)"}, {"(-100,)", "(2,)"}, {"(1,2)", "(6,5)"},
      {"(1,-3)", "(6,6)"}, {"(0,0)", "(8,6)"},  {"(2,4)", "(7,4)"},
  };
  for (int idt : {MXC_DTYPE_INT64, MXC_DTYPE_INT32}) {
    for (const auto &r : ranges) {
      Params p{{"begin", r.first}, {"end", r.second}};
      check_csr_slice("slice", p, m, idt, "slice " + r.first + ":" + r.second);
    }
    check_csr_slice("slice",
                    {{"begin", "(1,)"}, {"end", "(4,)"}, {"step", "(1,)"}}, m,
                    idt, "explicit step 1");
    const std::vector<Params> axes = {
        {{"axis", "0"}, {"begin", "2"}, {"end", "5"}},
        {{"axis", "0"}, {"begin", "-3"}, {"end", "None"}},
        {{"axis", "0"}, {"begin", "4"}, {"end", "4"}},
        {{"axis", "-2"}, {"begin", "0"}, {"end", "8"}},
        {{"axis", "1"}, {"begin", "1"}, {"end", "4"}},
        {{"axis", "-1"}, {"begin", "-2"}, {"end", "None"}},
    };
    for (const Params &p : axes) {
      check_csr_slice(
          "slice_axis", p, m, idt,
          "slice_axis " + p[0].second + " " + p[1].second + ":" + p[2].second);
    }
  }
  Dense zero = random_sparse({5, 3}, 0.0, 42);
  check_csr_slice("slice", {{"begin", "(1,)"}, {"end", "(4,)"}}, zero,
                  MXC_DTYPE_INT64, "all-zero input");
}

TEST(SparseSlice, OutOfRangeAndStorageRules) {
  Dense m = random_sparse({8, 6}, 0.5, 43);
  Arr c = make_csr(m);
  std::vector<Arr> o;
  EXPECT_EQ(
      invoke("slice_axis", {{"axis", "0"}, {"begin", "2"}, {"end", "100"}},
             {c.get()}, &o),
      MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("begin=2"), std::string::npos) << err();
  EXPECT_NE(err().find("100"), std::string::npos) << err();
  EXPECT_NE(err().find("(8,6)"), std::string::npos) << err();
  o.clear();
  EXPECT_EQ(invoke("slice_axis", {{"axis", "0"}, {"begin", "5"}, {"end", "3"}},
                   {c.get()}, &o),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("begin=5"), std::string::npos) << err();

  Params rows{{"begin", "(1,)"}, {"end", "(3,)"}};
  Stype s = infer("slice", rows, {CSR});
  EXPECT_EQ(s.rc, MXC_OK) << err();
  EXPECT_EQ(s.out, CSR);
  EXPECT_EQ(s.dispatch, 1);
  s = infer("slice", rows, {DNS});
  EXPECT_EQ(s.out, DNS);
  EXPECT_EQ(s.dispatch, 0);
  EXPECT_EQ(infer("slice",
                  {{"begin", "(1,)"}, {"end", "(7,)"}, {"step", "(2,)"}}, {CSR})
                .rc,
            MXC_ERR_STYPE);
  EXPECT_EQ(
      infer("slice", {{"begin", "(7,)"}, {"end", "(1,)"}, {"step", "(-1,)"}},
            {CSR})
          .rc,
      MXC_ERR_STYPE);
  EXPECT_EQ(infer("slice", rows, {RSP}).rc, MXC_ERR_STYPE);
  EXPECT_EQ(infer("slice", rows, {CSR}, DNS).rc, MXC_ERR_STYPE);
  s = infer("slice_axis", {{"axis", "0"}, {"begin", "1"}, {"end", "2"}}, {CSR});
  EXPECT_EQ(s.rc, MXC_OK);
  EXPECT_EQ(s.out, CSR);
  EXPECT_EQ(
      infer("slice_axis", {{"axis", "0"}, {"begin", "1"}, {"end", "2"}}, {RSP})
          .rc,
      MXC_ERR_STYPE);
}

// ---- _sparse_retain ----

// data with the rows outside `keep` zeroed (the dense meaning).
Dense retained(const Dense &d, const std::set<int64_t> &keep) {
  Dense r = d;
  for (int64_t i = 0; i < d.rows(); ++i) {
    if (keep.count(i)) continue;
    for (int64_t j = 0; j < d.row_len(); ++j)
      r.v[(size_t)(i * d.row_len() + j)] = 0;
  }
  return r;
}

std::set<int64_t> stored_rows(const Dense &d) {
  std::set<int64_t> s;
  for (int64_t i = 0; i < d.rows(); ++i) {
    for (int64_t j = 0; j < d.row_len(); ++j) {
      if (d.v[(size_t)(i * d.row_len() + j)] != 0) s.insert(i);
    }
  }
  return s;
}

TEST(SparseRetain, RowSparseDataAnyIndices) {
  Dense d = random_sparse({10, 3}, 0.7, 51, 4);
  std::set<int64_t> stored = stored_rows(d);
  ASSERT_LT(stored.size(), 10u);
  const std::vector<std::vector<double>> lists = {
      {1, 3, 5}, {9, 0, 4, 4, 2, 9}, {}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {8},
  };
  for (const char *name : {"_sparse_retain", "sparse_retain"}) {
    for (int idt : {MXC_DTYPE_INT64, MXC_DTYPE_INT32, F32, F64}) {
      for (const auto &l : lists) {
        Arr x = make_row_sparse(d),
            ix = make_dense(Dense{{(int64_t)l.size()}, l}, idt);
        std::vector<Arr> o;
        ASSERT_EQ(invoke(name, {}, {x.get(), ix.get()}, &o), MXC_OK) << err();
        EXPECT_EQ(stype_of(o[0].get()), RSP);
        std::set<int64_t> listed(l.begin(), l.end()), want_rows;
        for (int64_t r : listed) {
          if (stored.count(r)) want_rows.insert(r);
        }
        expect_same(read(o[0].get()), retained(d, listed), "retain values");
        std::vector<double> ids = aux_of(o[0].get(), MXC_ROW_SPARSE_INDICES);
        EXPECT_EQ(ids, std::vector<double>(want_rows.begin(), want_rows.end()))
            << "retains the listed stored rows, sorted";
        EXPECT_EQ(mxc_ndarray_check_format(o[0].get(), 1), MXC_OK) << err();
      }
    }
  }
}

TEST(SparseRetain, DenseDataAndHigherRank) {
  Dense d = random_dense({6, 2, 3}, 52);
  std::vector<double> l = {5, 1, 1, 3};
  Arr x = make_dense(d), ix = make_dense(Dense{{4}, l}, MXC_DTYPE_INT64);
  std::vector<Arr> o;
  ASSERT_EQ(invoke("_sparse_retain", {}, {x.get(), ix.get()}, &o), MXC_OK)
      << err();
  EXPECT_EQ(stype_of(o[0].get()), RSP);
  std::set<int64_t> listed(l.begin(), l.end());
  expect_same(read(o[0].get()), retained(d, listed), "dense data");
  EXPECT_EQ(aux_of(o[0].get(), 0), (std::vector<double>{1, 3, 5}));
  // A dense output given: the dense kernel, zeros outside the rows.
  std::vector<Arr> od;
  od.emplace_back(make_dense(random_dense(d.shape, 53)).release());
  ASSERT_EQ(invoke("_sparse_retain", {}, {x.get(), ix.get()}, &od), MXC_OK);
  expect_same(read(od[0].get()), retained(d, listed), "dense kernel");
  // ... and with req add, each listed row added once.
  Dense init = read(od[0].get());
  ASSERT_EQ(
      invoke("_sparse_retain", {}, {x.get(), ix.get()}, &od, 1, {MXC_REQ_ADD}),
      MXC_OK);
  Dense want = init, r = retained(d, listed);
  for (size_t i = 0; i < want.v.size(); ++i) want.v[i] += r.v[i];
  expect_same(read(od[0].get()), want, "dense kernel, add");
}

TEST(SparseRetain, BadIndices) {
  Dense d = random_sparse({10, 3}, 0.7, 54);
  Arr x = make_row_sparse(d);
  struct Bad {
    std::vector<double> l;
    int dtype;
    const char *msg;
  };
  const Bad bad[] = {
      {{1, 2, -1}, MXC_DTYPE_INT64, "indices[2] = -1"},
      {{10}, MXC_DTYPE_INT32, "indices[0] = 10"},
      {{0, 1.5}, F32, "indices[1] = 1.5"},
      {{0, NAN}, F64, "indices[1] = nan"},
  };
  for (const Bad &b : bad) {
    for (int dense_data : {0, 1}) {
      Arr dd = make_dense(d);
      Arr ix = make_dense(Dense{{(int64_t)b.l.size()}, b.l}, b.dtype);
      std::vector<Arr> o;
      if (dense_data) o.emplace_back(make_dense(d).release());
      mxc_ndarray data = dense_data ? dd.get() : x.get();
      ASSERT_EQ(invoke("_sparse_retain", {}, {data, ix.get()}, &o), MXC_OK);
      EXPECT_EQ(mxc_ndarray_wait_to_read(o[0].get()), MXC_ERR_INVALID_ARGUMENT);
      EXPECT_NE(err().find(b.msg), std::string::npos) << err();
      EXPECT_NE(err().find("[0, 10)"), std::string::npos) << err();
      mxc_wait_all();
    }
  }
  Arr ix2 = make_dense(Dense{{2, 1}, {0, 1}}, MXC_DTYPE_INT64);
  std::vector<Arr> o;
  EXPECT_EQ(invoke("_sparse_retain", {}, {x.get(), ix2.get()}, &o),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("1-d"), std::string::npos) << err();
}

TEST(SparseRetain, StorageTypeRules) {
  Stype s = infer("_sparse_retain", {}, {RSP, DNS});
  EXPECT_EQ(s.rc, MXC_OK) << err();
  EXPECT_EQ(s.out, RSP);
  EXPECT_EQ(s.dispatch, 1);
  s = infer("_sparse_retain", {}, {DNS, DNS});
  EXPECT_EQ(s.out, RSP);
  EXPECT_EQ(s.dispatch, 1);
  s = infer("_sparse_retain", {}, {DNS, DNS}, DNS);
  EXPECT_EQ(s.rc, MXC_OK);
  EXPECT_EQ(s.dispatch, 0);
  EXPECT_EQ(infer("_sparse_retain", {}, {CSR, DNS}).rc, MXC_ERR_STYPE);
  EXPECT_EQ(infer("_sparse_retain", {}, {RSP, RSP}).rc, MXC_ERR_STYPE);
  EXPECT_EQ(infer("_sparse_retain", {}, {RSP, DNS}, DNS).rc, MXC_ERR_STYPE);
}

TEST(SparseRetain, Gradient) {
  Dense d = random_sparse({10, 3}, 0.7, 55, 3);
  std::vector<double> l = {7, 2, 2, 0, 9};
  std::set<int64_t> listed(l.begin(), l.end());
  Arr x = make_row_sparse(d), ix = make_dense(Dense{{5}, l}, F32);
  std::vector<Arr> o;
  ASSERT_EQ(invoke("_sparse_retain", {}, {x.get(), ix.get()}, &o), MXC_OK);
  for (int og_rsp : {0, 1}) {
    Dense og =
        og_rsp ? random_sparse({10, 3}, 0.6, 56, 4) : random_dense({10, 3}, 56);
    Arr g = og_rsp ? make_row_sparse(og) : make_dense(og);
    mxc_ndarray ins[2] = {x.get(), ix.get()}, ig[2] = {nullptr, nullptr};
    ASSERT_EQ(mxct_grad("_sparse_retain", nullptr, nullptr, 0, ins, 2,
                        o[0].get(), g.get(), ig),
              MXC_OK)
        << err();
    Arr g0(ig[0]);
    EXPECT_EQ(ig[1], nullptr) << "indices get no gradient";
    ASSERT_NE(ig[0], nullptr);
    EXPECT_EQ(stype_of(g0.get()), RSP);
    expect_same(read(g0.get()), retained(og, listed), "retain gradient");
    std::set<int64_t> want = listed;
    if (og_rsp) {
      std::set<int64_t> st = stored_rows(og), both;
      for (int64_t r : listed) {
        if (st.count(r)) both.insert(r);
      }
      want = both;
    }
    EXPECT_EQ(nnz_of(g0.get()), (int64_t)want.size());
  }
}

// ---- _square_sum ----

// Naive sum of squares of a 2-d array over mask (bit a = axis a).
Dense sqsum(const Dense &x, int mask, bool keep) {
  Dense r;
  for (int a = 0; a < 2; ++a) {
    if (!(mask >> a & 1))
      r.shape.push_back(x.shape[(size_t)a]);
    else if (keep)
      r.shape.push_back(1);
  }
  r.v.assign((size_t)r.size(), 0.0);
  for (int64_t i = 0; i < x.shape[0]; ++i) {
    for (int64_t j = 0; j < x.shape[1]; ++j) {
      double v = x.v[(size_t)(i * x.shape[1] + j)];
      int64_t o = mask == 1 ? j : mask == 2 ? i : 0;
      r.v[(size_t)o] += v * v;
    }
  }
  return r;
}

struct Axis {
  const char *s;
  int mask;
};
const Axis kAxes[] = {{"None", 3}, {"()", 3}, {"0", 1},    {"1", 2},
                      {"-1", 2},   {"-2", 1}, {"(0,1)", 3}};

TEST(SquareSum, MatchesNaiveLoop) {
  std::vector<Dense> ms = {
      random_sparse({9, 4}, 0.5, 61, 3), random_sparse({5, 3}, 0.0, 62),
      random_sparse({4, 300}, 0.3, 63, 1), Dense{{0, 3}, {}}};
  for (const Axis &ax : kAxes) {
    for (const char *keep : {"false", "true"}) {
      Params p{{"axis", ax.s}, {"keepdims", keep}};
      bool k = std::string(keep) == "true";
      for (int dt : {F32, F64}) {
        for (const Dense &m : ms) {
          for (int in_st : {RSP, DNS}) {
            std::string what = std::string("axis=") + ax.s +
                               " keepdims=" + keep + " in " +
                               std::to_string(in_st);
            Arr x = in_st == RSP ? make_row_sparse(m, dt) : make_dense(m, dt);
            int st = -1;
            Dense got = run1("square_sum", p, x.get(), &st);
            expect_same(got, sqsum(m, ax.mask, k), what);
            bool rsp_out = in_st == RSP && ax.mask == 2 && k;
            EXPECT_EQ(st, rsp_out ? RSP : DNS) << what;
          }
        }
      }
    }
  }
  // A dense output may be given for the row_sparse-output case.
  Dense m = random_sparse({9, 4}, 0.5, 64, 3);
  Arr x = make_row_sparse(m);
  Params p{{"axis", "1"}, {"keepdims", "true"}};
  std::vector<Arr> o;
  o.emplace_back(make_dense(random_dense({9, 1}, 65)).release());
  ASSERT_EQ(invoke("_square_sum", p, {x.get()}, &o), MXC_OK) << err();
  expect_same(read(o[0].get()), sqsum(m, 2, true), "dense output given");
  // The row_sparse output stores exactly x's stored rows.
  std::vector<Arr> r;
  ASSERT_EQ(invoke("_square_sum", p, {x.get()}, &r), MXC_OK);
  EXPECT_EQ(aux_of(r[0].get(), 0), aux_of(x.get(), 0));
}

TEST(SquareSum, StorageRulesAndBadInput) {
  Stype s = infer("_square_sum", {{"axis", "1"}, {"keepdims", "true"}}, {RSP});
  EXPECT_EQ(s.rc, MXC_OK) << err();
  EXPECT_EQ(s.out, RSP);
  EXPECT_EQ(s.dispatch, 1);
  s = infer("_square_sum", {{"axis", "1"}}, {RSP});
  EXPECT_EQ(s.out, DNS);
  EXPECT_EQ(s.dispatch, 1);
  s = infer("_square_sum", {{"axis", "0"}, {"keepdims", "true"}}, {RSP});
  EXPECT_EQ(s.out, DNS);
  s = infer("_square_sum", {}, {DNS});
  EXPECT_EQ(s.out, DNS);
  EXPECT_EQ(s.dispatch, 0);
  EXPECT_EQ(infer("_square_sum", {}, {CSR}).rc, MXC_ERR_STYPE);
  EXPECT_EQ(infer("_square_sum", {{"axis", "0"}}, {RSP}, RSP).rc,
            MXC_ERR_STYPE);
  s = infer("_backward_square_sum", {{"axis", "0"}}, {DNS, RSP});
  EXPECT_EQ(s.rc, MXC_OK) << err();
  EXPECT_EQ(s.out, RSP);
  EXPECT_EQ(s.dispatch, 1);
  s = infer("_backward_square_sum", {{"axis", "1"}}, {RSP, RSP});
  EXPECT_EQ(s.out, RSP);
  EXPECT_EQ(infer("_backward_square_sum", {{"axis", "0"}}, {RSP, RSP}).rc,
            MXC_ERR_STYPE);
  s = infer("_backward_square_sum", {}, {DNS, DNS});
  EXPECT_EQ(s.dispatch, 0);

  std::vector<Arr> o;
  Arr x3 = make_dense(random_dense({2, 3, 4}, 66));
  EXPECT_EQ(invoke("_square_sum", {}, {x3.get()}, &o), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("2-d"), std::string::npos) << err();
  Arr x = make_row_sparse(random_sparse({4, 3}, 0.5, 67));
  o.clear();
  EXPECT_EQ(invoke("_square_sum", {{"axis", "2"}}, {x.get()}, &o),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("axis 2"), std::string::npos) << err();
  o.clear();
  EXPECT_EQ(invoke("_square_sum", {{"axis", "(1,1)"}}, {x.get()}, &o),
            MXC_ERR_INVALID_ARGUMENT);
  Dense mi = random_sparse({4, 3}, 0.5, 68);
  for (double &v : mi.v) v = std::round(v * 8);
  Arr xi = make_row_sparse(mi, MXC_DTYPE_INT32);
  o.clear();
  EXPECT_EQ(invoke("_square_sum", {}, {xi.get()}, &o), MXC_ERR_DTYPE);
}

TEST(SquareSum, Gradient) {
  Dense m = random_sparse({9, 4}, 0.5, 71, 3);
  for (const Axis &ax : kAxes) {
    for (const char *keep : {"false", "true"}) {
      bool k = std::string(keep) == "true";
      const char *keys[2] = {"axis", "keepdims"};
      const char *vals[2] = {ax.s, keep};
      Dense ogd = sqsum(m, ax.mask, k);  // for the shape
      for (int og_kind : {0, 1}) {       // 0 dense og, 1 row_sparse (axis 1)
        if (og_kind == 1 && ax.mask != 2) continue;
        Dense og = og_kind ? random_sparse(ogd.shape, 0.5, 72)
                           : random_dense(ogd.shape, 72);
        for (int in_st : {RSP, DNS}) {
          if (og_kind == 1 && in_st == DNS) continue;
          std::string what =
              std::string("grad axis=") + ax.s + " keepdims=" + keep + " og " +
              std::to_string(og_kind) + " x " + std::to_string(in_st);
          Arr x = in_st == RSP ? make_row_sparse(m) : make_dense(m);
          Arr g = og_kind ? make_row_sparse(og) : make_dense(og);
          std::vector<Arr> o;
          ASSERT_EQ(invoke("_square_sum", {{"axis", ax.s}, {"keepdims", keep}},
                           {x.get()}, &o),
                    MXC_OK)
              << err();
          mxc_ndarray ins[1] = {x.get()}, ig[1] = {nullptr};
          ASSERT_EQ(mxct_grad("_square_sum", keys, vals, 2, ins, 1, o[0].get(),
                              g.get(), ig),
                    MXC_OK)
              << what << ": " << err();
          Arr g0(ig[0]);
          ASSERT_NE(ig[0], nullptr);
          Dense want = m;
          for (int64_t i = 0; i < m.shape[0]; ++i) {
            for (int64_t j = 0; j < m.shape[1]; ++j) {
              int64_t at = ax.mask == 1 ? j : ax.mask == 2 ? i : 0;
              size_t e = (size_t)(i * m.shape[1] + j);
              want.v[e] = 2 * m.v[e] * og.v[(size_t)at];
            }
          }
          expect_same(read(g0.get()), want, what);
          EXPECT_EQ(stype_of(g0.get()), in_st) << what;
          if (in_st == RSP) {
            EXPECT_EQ(nnz_of(g0.get()), nnz_of(x.get()));
          }
        }
      }
    }
  }
}

// ---- combinations without a sparse kernel ----

// What the inference functions refuse goes through the dispatcher's dense
// fallback and still gives the dense operator's values.
TEST(SparseReduceFallback, RefusedCasesMatchDense) {
  Dense m = random_sparse({8, 6}, 0.5, 91, 2);
  struct Case {
    const char *op;
    Params p;
    int stype;
  };
  const Case cases[] = {
      {"sum", {{"axis", "0"}, {"exclude", "true"}}, CSR},
      {"sum", {{"axis", "1"}}, RSP},
      {"mean", {}, RSP},
      {"slice", {{"begin", "(1,)"}, {"end", "(7,)"}, {"step", "(2,)"}}, CSR},
      {"_square_sum", {{"axis", "1"}}, CSR},
  };
  for (const Case &c : cases) {
    std::string what = std::string(c.op) + " on " + std::to_string(c.stype);
    Arr x = sparse_test::make(m, c.stype);
    std::vector<Arr> o;
    ASSERT_EQ(invoke(c.op, c.p, {x.get()}, &o), MXC_OK)
        << what << ": " << err();
    expect_same(read(o[0].get()), run_dense(c.op, c.p, m, F32), what);
  }
}

// ---- allocation failures ----

// Host buffers of the scenario's arrays, built once: constructing them
// through sparse_util would report injected failures as test failures.
struct Host {
  std::vector<float> cv, rv;
  std::vector<int64_t> ip, ci, ri;
  Host() {
    Dense m = random_sparse({40, 30}, 0.3, 81, 5);
    ip.push_back(0);
    for (int64_t i = 0; i < 40; ++i) {
      for (int64_t j = 0; j < 30; ++j) {
        double v = m.v[(size_t)(i * 30 + j)];
        if (v == 0) continue;
        cv.push_back((float)v);
        ci.push_back(j);
      }
      ip.push_back((int64_t)cv.size());
    }
    Dense r = random_sparse({12, 4}, 0.5, 82, 4);
    for (int64_t i : {0, 3, 5, 6, 11}) {
      ri.push_back(i);
      for (int64_t j = 0; j < 4; ++j)
        rv.push_back((float)r.v[(size_t)(i * 4 + j)] + 1);
    }
  }
};

int scenario() {
  static const Host h;
  mxc_ndarray c = nullptr, x = nullptr, ix = nullptr, outs[9] = {nullptr};
  const int64_t cs[2] = {40, 30}, rs[2] = {12, 4}, is[1] = {3};
  const int64_t idx[3] = {5, 1, 11};
  int rc = mxc_ndarray_create_csr(cs, F32, MXC_DTYPE_INT64, h.cv.data(),
                                  h.ip.data(), h.ci.data(),
                                  (int64_t)h.cv.size(), MXC_DEVICE_CPU, 0, &c);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(rs, 2, F32, MXC_DTYPE_INT64, h.rv.data(),
                                       h.ri.data(), (int64_t)h.ri.size(),
                                       MXC_DEVICE_CPU, 0, &x);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(is, 1, MXC_DTYPE_INT64, MXC_DEVICE_CPU, 0, 0, &ix);
  }
  if (rc == MXC_OK) rc = mxc_ndarray_copy_from_host(ix, idx, sizeof idx);
  struct Call {
    const char *op;
    Params p;
    int in;  // 0 csr, 1 rsp, 2 rsp + indices
  };
  const Call calls[] = {
      {"sum", {{"axis", "0"}}, 0},
      {"mean", {{"axis", "1"}}, 0},
      {"sum", {}, 0},
      {"slice", {{"begin", "(3,)"}, {"end", "(20,)"}}, 0},
      {"slice", {{"begin", "(3,2)"}, {"end", "(20,9)"}}, 0},
      {"_square_sum", {{"axis", "1"}, {"keepdims", "true"}}, 1},
      {"_square_sum", {{"axis", "0"}}, 1},
      {"_sparse_retain", {}, 2},
  };
  int n = 0;
  for (const Call &k : calls) {
    if (rc != MXC_OK) break;
    std::vector<Arr> o;
    std::vector<mxc_ndarray> ins = {k.in == 0 ? c : x};
    if (k.in == 2) ins.push_back(ix);
    rc = invoke(k.op, k.p, ins, &o);
    if (rc == MXC_OK) outs[n++] = o[0].release();
  }
  if (rc == MXC_OK) {
    const char *keys[1] = {"axis"}, *vals[1] = {"0"};
    mxc_ndarray ins[1] = {x}, ig[1] = {nullptr};
    mxc_ndarray og = outs[6];
    rc = mxct_grad("_square_sum", keys, vals, 1, ins, 1, outs[6], og, ig);
    if (rc == MXC_OK) outs[n++] = ig[0];
  }
  for (int i = 0; i < n && rc == MXC_OK; ++i)
    rc = mxc_ndarray_wait_to_read(outs[i]);
  for (mxc_ndarray h : outs) mxc_ndarray_free(h);
  for (mxc_ndarray h : {c, x, ix}) mxc_ndarray_free(h);
  int wrc = mxc_wait_all();
  return rc != MXC_OK ? rc : wrc;
}

TEST(SparseReduceFaults, EveryAllocationFails) {
  // Warm-up: the registry, storage pools and the operators' shared
  // temporary spaces (created on first use, one slot per call in turn)
  // live for the whole process.
  int failures = mxct::alloc_failure_walk(scenario, 21, 4);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
