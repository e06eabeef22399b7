// Storage fallback of mxc_op_invoke: operators without a kernel for the
// storage types of a call run their dense kernel on dense temporaries.
// Every result is compared with the same operator on the dense
// equivalents (unary, binary, reduce, two outputs, sparse given outputs
// cast back, req add, an in-place update of a sparse state); which storage
// types come out; errors that are not storage errors still fail; an
// allocation-failure walk over fallback calls.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/fault_walk.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
#include "core/op/op.h"
}

namespace {

using sparse_test::Arr;
using sparse_test::Dense;
using Params = std::vector<std::pair<std::string, std::string>>;

std::string err() { return mxc_last_error(); }

// The operators used here must really fall back: none may have storage
// functions (if a sparse kernel is added to one, pick another).
bool dense_only(const char *name) {
  const mxc__op *op = mxc__op_find(name);
  return op && !mxc__op_infer_stype(op);
}

// Runs op on the sparse arrays and on their dense equivalents; expects the
// same values and dense created outputs.
void expect_like_dense(const std::string &op, const Params &p,
                       const std::vector<Dense> &vals,
                       const std::vector<int> &stypes, int n_out = 1) {
  std::vector<Arr> sp_in, de_in;
  std::vector<mxc_ndarray> sp_h, de_h;
  for (size_t i = 0; i < vals.size(); ++i) {
    sp_in.push_back(sparse_test::make(vals[i], stypes[i]));
    de_in.push_back(sparse_test::make_dense(vals[i]));
    sp_h.push_back(sp_in.back().get());
    de_h.push_back(de_in.back().get());
  }
  std::vector<Arr> sp_out, de_out;
  ASSERT_EQ(sparse_test::invoke(op, p, sp_h, &sp_out, n_out), MXC_OK)
      << op << ": " << err();
  ASSERT_EQ(sparse_test::invoke(op, p, de_h, &de_out, n_out), MXC_OK)
      << op << ": " << err();
  for (int j = 0; j < n_out; ++j) {
    EXPECT_EQ(sparse_test::stype_of(sp_out[(size_t)j].get()),
              MXC_STYPE_DEFAULT);
    EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(sp_out[(size_t)j].get()),
                                       sparse_test::read(de_out[(size_t)j].get())),
              1e-6)
        << op << " output " << j;
  }
}

TEST(Fallback, OperatorsUsedHaveNoSparseKernel) {
  for (const char *n : {"exp", "cbrt", "maximum", "max", "split"}) {
    EXPECT_TRUE(dense_only(n)) << n << " has storage functions now";
  }
}

TEST(Fallback, Unary) {
  Dense d = sparse_test::random_sparse({7, 5}, 0.3, 1, 2);
  expect_like_dense("exp", {}, {d}, {MXC_STYPE_CSR});
  expect_like_dense("exp", {}, {d}, {MXC_STYPE_ROW_SPARSE});
  Dense d3 = sparse_test::random_sparse({6, 2, 3}, 0.4, 2, 2);
  expect_like_dense("cbrt", {}, {d3}, {MXC_STYPE_ROW_SPARSE});
}

TEST(Fallback, Binary) {
  Dense a = sparse_test::random_sparse({6, 4}, 0.4, 3, 1);
  Dense b = sparse_test::random_sparse({6, 4}, 0.4, 4, 2);
  expect_like_dense("maximum", {}, {a, b},
                    {MXC_STYPE_CSR, MXC_STYPE_DEFAULT});
  expect_like_dense("maximum", {}, {a, b},
                    {MXC_STYPE_ROW_SPARSE, MXC_STYPE_ROW_SPARSE});
  expect_like_dense("maximum", {}, {a, b}, {MXC_STYPE_CSR, MXC_STYPE_CSR});
  // The same sparse array twice.
  expect_like_dense("maximum", {}, {a, a}, {MXC_STYPE_CSR, MXC_STYPE_CSR});
}

TEST(Fallback, Reduce) {
  Dense d = sparse_test::random_sparse({8, 5}, 0.3, 5, 3);
  expect_like_dense("max", {{"axis", "1"}}, {d}, {MXC_STYPE_CSR});
  expect_like_dense("max", {{"axis", "0"}, {"keepdims", "true"}}, {d},
                    {MXC_STYPE_ROW_SPARSE});
  expect_like_dense("max", {}, {d}, {MXC_STYPE_CSR});
}

TEST(Fallback, TwoOutputs) {
  Dense d = sparse_test::random_sparse({5, 6}, 0.4, 6, 1);
  expect_like_dense("split", {{"num_outputs", "2"}, {"axis", "1"}}, {d},
                    {MXC_STYPE_CSR}, 2);
  expect_like_dense("split", {{"num_outputs", "2"}, {"axis", "0"}},
                    {sparse_test::random_sparse({6, 3}, 0.4, 7, 2)},
                    {MXC_STYPE_ROW_SPARSE}, 2);
}

// Dense reference of `op` on dense copies of `vals`.
Dense dense_ref(const std::string &op, const Params &p,
                const std::vector<Dense> &vals, int out_index = 0,
                int n_out = 1) {
  std::vector<Arr> in;
  std::vector<mxc_ndarray> h;
  for (const Dense &v : vals) {
    in.push_back(sparse_test::make_dense(v));
    h.push_back(in.back().get());
  }
  std::vector<Arr> out;
  EXPECT_EQ(sparse_test::invoke(op, p, h, &out, n_out), MXC_OK) << err();
  if (out.size() <= (size_t)out_index || !out[(size_t)out_index].get()) {
    return Dense();
  }
  return sparse_test::read(out[(size_t)out_index].get());
}

TEST(Fallback, SparseGivenOutputsGetResultsCastBack) {
  Dense d = sparse_test::random_sparse({6, 4}, 0.3, 8, 2);
  for (int st : {MXC_STYPE_CSR, MXC_STYPE_ROW_SPARSE}) {
    Arr x = sparse_test::make(d, st);
    // The given output starts with other contents (structure replaced).
    std::vector<Arr> outs;
    outs.push_back(sparse_test::make(sparse_test::random_sparse({6, 4}, 0.5, 9),
                                     st));
    ASSERT_EQ(sparse_test::invoke("cbrt", {}, {x.get()}, &outs), MXC_OK)
        << err();
    EXPECT_EQ(sparse_test::stype_of(outs[0].get()), st);
    EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(outs[0].get()),
                                       dense_ref("cbrt", {}, {d})),
              1e-6);
  }
  // Two sparse given outputs, and a sparse array that is both input and
  // output.
  Dense s = sparse_test::random_sparse({4, 6}, 0.4, 10, 1);
  Arr x = sparse_test::make_csr(s);
  std::vector<Arr> two;
  two.push_back(sparse_test::make_csr(Dense{{4, 3}, std::vector<double>(12)}));
  two.push_back(sparse_test::make_csr(Dense{{4, 3}, std::vector<double>(12)}));
  ASSERT_EQ(sparse_test::invoke("split", {{"num_outputs", "2"}, {"axis", "1"}},
                                {x.get()}, &two, 2),
            MXC_OK)
      << err();
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(sparse_test::stype_of(two[(size_t)j].get()), MXC_STYPE_CSR);
    EXPECT_EQ(sparse_test::read(two[(size_t)j].get()).v,
              dense_ref("split", {{"num_outputs", "2"}, {"axis", "1"}}, {s}, j,
                        2)
                  .v);
  }
  Dense y = sparse_test::random_sparse({4, 6}, 0.4, 11, 1);
  Arr ya = sparse_test::make_csr(y);
  std::vector<Arr> self;
  self.push_back(sparse_test::make_csr(s));
  mxc_ndarray xs = self[0].get();
  ASSERT_EQ(sparse_test::invoke("maximum", {}, {xs, ya.get()}, &self), MXC_OK)
      << err();
  EXPECT_EQ(sparse_test::read(xs).v, dense_ref("maximum", {}, {s, y}).v);
}

TEST(Fallback, ReqAddIntoDenseAndSparseOutputs) {
  Dense a = sparse_test::random_sparse({5, 4}, 0.4, 12, 1);
  Dense b = sparse_test::random_sparse({5, 4}, 0.4, 13, 2);
  Dense base = sparse_test::random_sparse({5, 4}, 0.5, 14, 1);
  Dense want = dense_ref("maximum", {}, {a, b});
  for (size_t i = 0; i < want.v.size(); ++i) want.v[i] += base.v[i];
  Arr sa = sparse_test::make_row_sparse(a), sb = sparse_test::make_csr(b);
  for (int st : {MXC_STYPE_DEFAULT, MXC_STYPE_ROW_SPARSE, MXC_STYPE_CSR}) {
    std::vector<Arr> outs;
    outs.push_back(sparse_test::make(base, st));
    ASSERT_EQ(sparse_test::invoke("maximum", {}, {sa.get(), sb.get()}, &outs,
                                  1, {MXC_REQ_ADD}),
              MXC_OK)
        << err();
    EXPECT_EQ(sparse_test::stype_of(outs[0].get()), st);
    EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(outs[0].get()), want),
              1e-6)
        << "output stype " << st;
  }
  // req null on a sparse given output leaves it alone.
  std::vector<Arr> outs;
  outs.push_back(sparse_test::make_csr(base));
  ASSERT_EQ(sparse_test::invoke("cbrt", {}, {sa.get()}, &outs, 1,
                                {MXC_REQ_NULL}),
            MXC_OK)
      << err();
  EXPECT_EQ(sparse_test::read(outs[0].get()).v, base.v);
}

// sgd_mom_update updates its momentum input in place: a row_sparse
// momentum (which its sparse kernels, for row_sparse gradients, do not
// take) gets the dense kernel's new values cast back.
TEST(Fallback, SparseStateUpdatedInPlace) {
  Dense w = sparse_test::random_dense({6, 3}, 15);
  Dense g = sparse_test::random_dense({6, 3}, 16);
  Dense m = sparse_test::random_sparse({6, 3}, 0.5, 17, 2);
  Params p = {{"lr", "0.5"}, {"momentum", "0.9"}};
  Arr dw = sparse_test::make_dense(w), dg = sparse_test::make_dense(g),
      dm = sparse_test::make_dense(m);
  Arr sw = sparse_test::make_dense(w), sg = sparse_test::make_dense(g),
      sm = sparse_test::make_row_sparse(m);
  std::vector<Arr> o1, o2;
  ASSERT_EQ(sparse_test::invoke("sgd_mom_update", p,
                                {dw.get(), dg.get(), dm.get()}, &o1),
            MXC_OK)
      << err();
  ASSERT_EQ(sparse_test::invoke("sgd_mom_update", p,
                                {sw.get(), sg.get(), sm.get()}, &o2),
            MXC_OK)
      << err();
  EXPECT_EQ(sparse_test::stype_of(sm.get()), MXC_STYPE_ROW_SPARSE);
  EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(sm.get()),
                                     sparse_test::read(dm.get())),
            1e-6);
  EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(o2[0].get()),
                                     sparse_test::read(o1[0].get())),
            1e-6);
}

TEST(Fallback, OtherErrorsStillFail) {
  Dense d = sparse_test::random_sparse({4, 5}, 0.4, 18);
  Arr c = sparse_test::make_csr(d);
  Arr wrong = sparse_test::make_dense(sparse_test::random_dense({3, 5}, 19));
  std::vector<Arr> outs;
  EXPECT_EQ(sparse_test::invoke("maximum", {}, {c.get(), wrong.get()}, &outs),
            MXC_ERR_SHAPE);
  EXPECT_EQ(outs[0].get(), nullptr);
  // A sparse given output of the wrong shape.
  std::vector<Arr> given;
  given.push_back(sparse_test::make_csr(sparse_test::random_sparse({5, 4}, 0.3,
                                                                    20)));
  EXPECT_EQ(sparse_test::invoke("cbrt", {}, {c.get()}, &given), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("cbrt"), std::string::npos) << err();
  // Bad parameters.
  EXPECT_NE(sparse_test::invoke("max", {{"axis", "7"}}, {c.get()}, &outs),
            MXC_OK);
  EXPECT_EQ(outs[0].get(), nullptr);
}

// ---- allocation failures ----

// Fallback calls through the public API only (the test helpers report
// their own failures to gtest, which an injected failure must not do).
int call(const char *name, const char *key, const char *val,
         const mxc_ndarray *in, int n_in, mxc_ndarray *out, int n_out,
         const int *req) {
  mxc_op op = nullptr;
  int rc = mxc_op_find(name, &op);
  if (rc != MXC_OK) return rc;
  const char *k[2] = {"num_outputs", key}, *v[2] = {"2", val};
  int np = key ? 2 : 0;
  return mxc_op_invoke(op, k, v, np, in, n_in, out, n_out, req);
}

int scenario() {
  const int64_t shp[2] = {3, 4};
  const float data[4] = {1, 2, 3, 4};
  const int64_t ip[4] = {0, 2, 2, 4}, ix[4] = {1, 3, 0, 2};
  const int64_t rows[2] = {0, 2};
  const float rdata[8] = {0, 1, 0, 2, 3, 0, 4, 0};
  mxc_ndarray c = nullptr, r = nullptr, m = nullptr, acc = nullptr;
  mxc_ndarray parts[2] = {nullptr, nullptr};
  int rc = mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data,
                                  ip, ix, 4, MXC_DEVICE_CPU, 0, &c);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(shp, 2, MXC_DTYPE_FLOAT32,
                                       MXC_DTYPE_INT64, rdata, rows, 2,
                                       MXC_DEVICE_CPU, 0, &r);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(shp, 2, MXC_DTYPE_FLOAT32,
                                       MXC_DTYPE_INT64, rdata, rows, 2,
                                       MXC_DEVICE_CPU, 0, &acc);
  }
  mxc_ndarray two[2] = {c, r};
  if (rc == MXC_OK) rc = call("maximum", nullptr, nullptr, two, 2, &m, 1, 0);
  const int add = MXC_REQ_ADD;
  if (rc == MXC_OK) rc = call("cbrt", nullptr, nullptr, &c, 1, &acc, 1, &add);
  if (rc == MXC_OK) rc = call("split", "axis", "1", &c, 1, parts, 2, nullptr);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(acc);
  for (mxc_ndarray x : {c, r, m, acc, parts[0], parts[1]}) mxc_ndarray_free(x);
  int wrc = mxc_wait_all();
  return rc != MXC_OK ? rc : wrc;
}

TEST(FallbackFaults, EveryAllocationFails) {
  mxc_set_log_callback([](int, const char *, void *) {}, nullptr);
  int failures = mxct::alloc_failure_walk(scenario, 11);
  mxc_set_log_callback(nullptr, nullptr);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
