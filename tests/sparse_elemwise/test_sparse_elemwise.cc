// Sparse element-wise kernels (ops/sparse/elemwise_*.c, quadratic.c): each
// kernel against the dense operator run on the cast-to-dense inputs
// (random sparse values with empty rows, all-zero and full arrays, int32
// and int64 indices, float32/float64/int32 values), the storage type of
// the output for each input combination (through invoke and through the
// operators' storage inference itself), quadratic's dense kernel against a
// naive loop and its gradient against finite differences, bad input, and
// an allocation-failure walk over a sparse add.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
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

const int D = MXC_STYPE_DEFAULT, R = MXC_STYPE_ROW_SPARSE,
          C = MXC_STYPE_CSR;

std::string err() { return mxc_last_error(); }

// Runs op on ins into a new output; ADD_FAILURE and an empty Arr on error.
Arr run(const std::string &op, const Params &p,
        const std::vector<mxc_ndarray> &ins) {
  std::vector<Arr> outs;
  int rc = sparse_test::invoke(op, p, ins, &outs);
  if (rc != MXC_OK) {
    ADD_FAILURE() << op << ": " << err();
    return Arr();
  }
  return std::move(outs[0]);
}

// Values scaled by k (integer dtypes get whole numbers).
Dense scaled(Dense d, double k) {
  for (double &x : d.v) x *= k;
  return d;
}

// A sparse array of d with stype, dtype and index dtype.
Arr make(const Dense &d, int stype, int dtype, int idx) {
  if (stype == C) return sparse_test::make_csr(d, dtype, idx);
  if (stype == R) return sparse_test::make_row_sparse(d, dtype, idx);
  return sparse_test::make_dense(d, dtype);
}

// ---- unary, scalar ----

const char *const kUnary[] = {
    "relu",  "abs",    "sign",    "sqrt",    "square",  "floor",
    "ceil",  "round",  "rint",    "fix",     "trunc",   "sin",
    "tan",   "sinh",   "tanh",    "arcsin",  "arctan",  "arcsinh",
    "arctanh", "degrees", "radians", "expm1", "log1p",  "negative",
};

// op(sparse) keeps the storage type and structure and equals op(dense).
void check_keep(const std::string &op, const Params &p, const Dense &d,
                int stype, int dtype, int idx) {
  SCOPED_TRACE(op + " stype " + std::to_string(stype) + " dtype " +
               std::to_string(dtype) + " idx " + std::to_string(idx));
  Arr s = make(d, stype, dtype, idx), dn = sparse_test::make_dense(d, dtype);
  Arr o = run(op, p, {s.get()}), ref = run(op, p, {dn.get()});
  if (!o.get() || !ref.get()) return;
  EXPECT_EQ(sparse_test::stype_of(o.get()), stype);
  EXPECT_EQ(sparse_test::nnz_of(o.get()), sparse_test::nnz_of(s.get()));
  EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(o.get()),
                                     sparse_test::read(ref.get())),
            0.0);
}

TEST(SparseUnary, EveryOperatorKeepsStorageAndMatchesDense) {
  Dense d = scaled(sparse_test::random_sparse({13, 9}, 0.3, 1, 3), 0.25);
  Dense pos = d;
  for (double &x : pos.v) x = std::fabs(x);
  for (const char *op : kUnary) {
    const Dense &in = std::string(op) == "sqrt" ? pos : d;
    for (int st : {C, R}) {
      check_keep(op, {}, in, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64);
    }
    check_keep(op, {}, in, C, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32);
  }
  // Integer values where the operator takes them, 3-d row_sparse.
  Dense di = scaled(sparse_test::random_sparse({6, 3, 4}, 0.4, 2, 2), 8);
  for (const char *op : {"relu", "abs", "sign", "square", "negative"}) {
    check_keep(op, {}, di, R, MXC_DTYPE_INT32, MXC_DTYPE_INT32);
  }
}

TEST(SparseUnary, LargeInputsSplitOverThreads) {
  Dense d = sparse_test::random_sparse({700, 300}, 0.5, 3, 20);
  check_keep("tanh", {}, d, C, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64);
  check_keep("square", {}, d, R, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT64);
}

TEST(SparseUnary, EmptyAndFull) {
  Dense zero = sparse_test::random_sparse({5, 4}, 0.0, 4);
  Dense full = sparse_test::random_sparse({5, 4}, 1.0, 5);
  for (int st : {C, R}) {
    check_keep("relu", {}, zero, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64);
    check_keep("abs", {}, full, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32);
  }
}

TEST(SparseScalar, MulDivKeepStorage) {
  Dense d = sparse_test::random_sparse({11, 7}, 0.3, 6, 2);
  for (int st : {C, R}) {
    check_keep("_mul_scalar", {{"scalar", "2.5"}}, d, st, MXC_DTYPE_FLOAT32,
               MXC_DTYPE_INT64);
    check_keep("_div_scalar", {{"scalar", "-4"}}, d, st, MXC_DTYPE_FLOAT64,
               MXC_DTYPE_INT32);
  }
}

TEST(SparseZerosLike, EmptyOfSameStorage) {
  Dense d = sparse_test::random_sparse({6, 5}, 0.5, 7);
  for (int st : {C, R}) {
    Arr s = make(d, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32);
    Arr o = run("zeros_like", {}, {s.get()});
    ASSERT_TRUE(o.get());
    EXPECT_EQ(sparse_test::stype_of(o.get()), st);
    EXPECT_EQ(sparse_test::nnz_of(o.get()), 0);
    EXPECT_EQ(mxc_ndarray_check_format(o.get(), 1), MXC_OK) << err();
    Dense z = sparse_test::read(o.get());
    EXPECT_EQ(z.shape, d.shape);
    for (double x : z.v) EXPECT_EQ(x, 0.0);
  }
}

// ---- where ----

TEST(SparseWhere, CsrConditionMatchesDense) {
  Dense c = sparse_test::random_sparse({40, 30}, 0.2, 8, 5);
  Dense x = sparse_test::random_dense({40, 30}, 9);
  Dense y = sparse_test::random_dense({40, 30}, 10);
  for (int idx : {MXC_DTYPE_INT32, MXC_DTYPE_INT64}) {
    Arr cs = sparse_test::make_csr(c, MXC_DTYPE_FLOAT32, idx);
    Arr cd = sparse_test::make_dense(c);
    Arr xa = sparse_test::make_dense(x), ya = sparse_test::make_dense(y);
    Arr o = run("where", {}, {cs.get(), xa.get(), ya.get()});
    Arr ref = run("where", {}, {cd.get(), xa.get(), ya.get()});
    ASSERT_TRUE(o.get() && ref.get());
    EXPECT_EQ(sparse_test::stype_of(o.get()), D);
    EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(o.get()),
                                       sparse_test::read(ref.get())),
              0.0);
  }
}

TEST(SparseWhere, StoredZeroSelectsY) {
  // Row 0 stores an explicit 0 at column 1 and 3 at column 2.
  const int64_t shp[2] = {2, 3}, ip[3] = {0, 2, 2}, ix[2] = {1, 2};
  const float cv[2] = {0, 3};
  Arr cs;
  ASSERT_EQ(mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                                   cv, ip, ix, 2, MXC_DEVICE_CPU, 0,
                                   cs.out()),
            MXC_OK)
      << err();
  Dense x{{2, 3}, {1, 2, 3, 4, 5, 6}}, y{{2, 3}, {-1, -2, -3, -4, -5, -6}};
  Arr xa = sparse_test::make_dense(x), ya = sparse_test::make_dense(y);
  Arr o = run("where", {}, {cs.get(), xa.get(), ya.get()});
  ASSERT_TRUE(o.get());
  EXPECT_EQ(sparse_test::read(o.get()).v,
            (std::vector<double>{-1, -2, 3, -4, -5, -6}));
}

// ---- binary ----

struct BinCase {
  int sa, sb, want;  // input storage types and the expected output one
};

// a op b through the sparse kernel equals the dense operator's result.
void check_bin(const std::string &op, const Dense &a, const Dense &b,
               int sa, int sb, int want, int dtype, int ia, int ib) {
  SCOPED_TRACE(op + " " + std::to_string(sa) + "," + std::to_string(sb) +
               " dtype " + std::to_string(dtype) + " idx " +
               std::to_string(ia) + "," + std::to_string(ib));
  Arr x = make(a, sa, dtype, ia), y = make(b, sb, dtype, ib);
  Arr xd = sparse_test::make_dense(a, dtype),
      yd = sparse_test::make_dense(b, dtype);
  Arr o = run(op, {}, {x.get(), y.get()});
  Arr ref = run(op, {}, {xd.get(), yd.get()});
  if (!o.get() || !ref.get()) return;
  EXPECT_EQ(sparse_test::stype_of(o.get()), want);
  if (want != D) {
    EXPECT_EQ(mxc_ndarray_check_format(o.get(), 1), MXC_OK);
  }
  EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(o.get()),
                                     sparse_test::read(ref.get())),
            0.0);
}

const BinCase kAddCases[] = {{C, C, C}, {R, R, R}, {R, D, D}, {D, R, D}};
const BinCase kMulCases[] = {{C, C, C}, {R, R, R}, {R, D, R}, {D, R, R}};

void check_all_ops(const Dense &a, const Dense &b, int dtype, int ia,
                   int ib) {
  for (const char *op : {"elemwise_add", "elemwise_sub", "elemwise_mul"}) {
    bool mul = std::string(op) == "elemwise_mul";
    for (const BinCase &c : mul ? kMulCases : kAddCases) {
      if (c.sa == C && a.shape.size() != 2) continue;
      check_bin(op, a, b, c.sa, c.sb, c.want, dtype, ia, ib);
    }
  }
}

TEST(SparseBinary, RandomMatchesDense) {
  Dense a = sparse_test::random_sparse({17, 12}, 0.3, 11, 4);
  Dense b = sparse_test::random_sparse({17, 12}, 0.3, 12, 4);
  check_all_ops(a, b, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, MXC_DTYPE_INT64);
  check_all_ops(a, b, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32, MXC_DTYPE_INT64);
  check_all_ops(scaled(a, 8), scaled(b, 8), MXC_DTYPE_INT32,
                MXC_DTYPE_INT32, MXC_DTYPE_INT32);
  check_all_ops(scaled(a, 8), scaled(b, 8), MXC_DTYPE_INT64,
                MXC_DTYPE_INT64, MXC_DTYPE_INT32);
}

TEST(SparseBinary, EmptyFullAndSameOperand) {
  Dense zero = sparse_test::random_sparse({8, 6}, 0.0, 13);
  Dense full = sparse_test::random_sparse({8, 6}, 1.0, 14);
  Dense some = sparse_test::random_sparse({8, 6}, 0.4, 15, 3);
  const int f = MXC_DTYPE_FLOAT32, i64 = MXC_DTYPE_INT64;
  check_all_ops(zero, some, f, i64, i64);
  check_all_ops(some, zero, f, i64, i64);
  check_all_ops(zero, zero, f, i64, i64);
  check_all_ops(full, some, f, i64, i64);
  check_all_ops(some, some, f, i64, i64);  // x - x stores zeros
}

TEST(SparseBinary, RowSparse3d) {
  Dense a = sparse_test::random_sparse({9, 3, 4}, 0.1, 16, 2);
  Dense b = sparse_test::random_sparse({9, 3, 4}, 0.1, 17, 2);
  check_all_ops(a, b, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32, MXC_DTYPE_INT64);
}

TEST(SparseBinary, LargeInputsSplitOverThreads) {
  Dense a = sparse_test::random_sparse({900, 250}, 0.4, 18, 30);
  Dense b = sparse_test::random_sparse({900, 250}, 0.4, 19, 30);
  check_all_ops(a, b, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, MXC_DTYPE_INT32);
}

TEST(SparseBinary, AccumulatesIntoDenseOutput) {
  Dense a = sparse_test::random_sparse({10, 5}, 0.3, 20, 2);
  Dense b = sparse_test::random_dense({10, 5}, 21);
  Dense o0 = sparse_test::random_dense({10, 5}, 22);
  Arr x = sparse_test::make_row_sparse(a), y = sparse_test::make_dense(b);
  std::vector<Arr> outs;
  outs.emplace_back(sparse_test::make_dense(o0).release());
  ASSERT_EQ(sparse_test::invoke("elemwise_sub", {}, {y.get(), x.get()},
                                &outs, 1, {MXC_REQ_ADD}),
            MXC_OK)
      << err();
  Dense got = sparse_test::read(outs[0].get());
  for (size_t i = 0; i < got.v.size(); ++i) {
    float want = (float)o0.v[i] + ((float)b.v[i] - (float)a.v[i]);
    EXPECT_EQ(got.v[i], (double)want) << i;
  }
}

// ---- storage-type rules ----

// The output storage type an operator's inference gives, or -1 when it
// declines (MXC_ERR_STYPE, which sends invoke to the dense fallback).
int infer_out(const std::string &op, const Params &p, std::vector<int> in,
              int given = -1, int *dispatch = nullptr) {
  const mxc__op *o = mxc__op_find(op.c_str());
  if (!o) {
    ADD_FAILURE() << "no operator " << op;
    return -2;
  }
  std::vector<const char *> k, v;
  for (const auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(o, k.data(), v.data(), (int)k.size(),
                                 &param),
            MXC_OK);
  mxc__infer_stype_fn f = mxc__op_infer_stype(o);
  int out = given, disp = -1;
  int rc = f ? f(o, param, in.data(), (int)in.size(), &out, 1, &disp)
             : MXC_ERR_STYPE;
  mxc__free(param);
  if (dispatch) *dispatch = disp;
  if (rc == MXC_OK) return out;
  EXPECT_EQ(rc, MXC_ERR_STYPE) << op;
  return -1;
}

TEST(SparseStype, BinaryRules) {
  for (const char *op : {"elemwise_add", "elemwise_sub", "_plus", "_minus"}) {
    int disp = -1;
    EXPECT_EQ(infer_out(op, {}, {D, D}, -1, &disp), D) << op;
    EXPECT_EQ(disp, MXC__DISPATCH_DENSE);
    EXPECT_EQ(infer_out(op, {}, {C, C}, -1, &disp), C) << op;
    EXPECT_EQ(disp, MXC__DISPATCH_SPARSE);
    EXPECT_EQ(infer_out(op, {}, {R, R}), R) << op;
    EXPECT_EQ(infer_out(op, {}, {R, D}), D) << op;
    EXPECT_EQ(infer_out(op, {}, {D, R}), D) << op;
    EXPECT_EQ(infer_out(op, {}, {C, D}), -1) << op;
    EXPECT_EQ(infer_out(op, {}, {D, C}), -1) << op;
    EXPECT_EQ(infer_out(op, {}, {C, R}), -1) << op;
    EXPECT_EQ(infer_out(op, {}, {C, C}, D), -1) << op;  // given dense out
    EXPECT_EQ(infer_out(op, {}, {D, D}, C), -1) << op;
  }
  EXPECT_EQ(infer_out("elemwise_mul", {}, {R, D}), R);
  EXPECT_EQ(infer_out("elemwise_mul", {}, {D, R}), R);
  EXPECT_EQ(infer_out("elemwise_mul", {}, {C, C}), C);
  EXPECT_EQ(infer_out("elemwise_mul", {}, {R, R}), R);
  EXPECT_EQ(infer_out("elemwise_mul", {}, {R, D}, D), -1);
  EXPECT_EQ(infer_out("elemwise_mul", {}, {C, D}), -1);
  EXPECT_EQ(infer_out("elemwise_div", {}, {C, C}), -1);  // no kernel
}

TEST(SparseStype, UnaryScalarQuadraticWhereRules) {
  for (const char *op : kUnary) {
    EXPECT_EQ(infer_out(op, {}, {C}), C) << op;
    EXPECT_EQ(infer_out(op, {}, {R}), R) << op;
    EXPECT_EQ(infer_out(op, {}, {D}), D) << op;
    EXPECT_EQ(infer_out(op, {}, {C}, D), -1) << op;
  }
  EXPECT_EQ(infer_out("exp", {}, {C}), -1);  // exp(0) = 1: no kernel
  EXPECT_EQ(infer_out("_mul_scalar", {{"scalar", "3"}}, {C}), C);
  EXPECT_EQ(infer_out("_mul_scalar", {{"scalar", "inf"}}, {C}), -1);
  EXPECT_EQ(infer_out("_div_scalar", {{"scalar", "3"}}, {R}), R);
  EXPECT_EQ(infer_out("_div_scalar", {{"scalar", "0"}}, {R}), -1);
  EXPECT_EQ(infer_out("_div_scalar", {{"scalar", "nan"}}, {C}), -1);
  EXPECT_EQ(infer_out("_plus_scalar", {{"scalar", "1"}}, {C}), -1);
  EXPECT_EQ(infer_out("zeros_like", {}, {C}), C);
  EXPECT_EQ(infer_out("zeros_like", {}, {R}), R);
  EXPECT_EQ(infer_out("quadratic", {{"a", "1"}, {"b", "2"}}, {C}), C);
  EXPECT_EQ(infer_out("_contrib_quadratic", {{"a", "1"}}, {R}), R);
  EXPECT_EQ(infer_out("quadratic", {{"c", "1"}}, {C}), -1);
  EXPECT_EQ(infer_out("quadratic", {{"c", "1"}}, {R}), -1);
  EXPECT_EQ(infer_out("quadratic", {{"c", "1"}}, {D}), D);
  EXPECT_EQ(infer_out("where", {}, {C, D, D}), D);
  EXPECT_EQ(infer_out("where", {}, {D, D, D}), D);
  EXPECT_EQ(infer_out("where", {}, {R, D, D}), -1);
  EXPECT_EQ(infer_out("where", {}, {C, C, D}), -1);
  EXPECT_EQ(infer_out("where", {}, {C, D, D}, C), -1);
}

// ---- quadratic ----

TEST(Quadratic, DenseMatchesNaiveLoop) {
  Dense x = sparse_test::random_dense({7, 33}, 23, -3, 3);
  const double a = 1.5, b = -0.75, c = 2.25;
  Params p = {{"a", "1.5"}, {"b", "-0.75"}, {"c", "2.25"}};
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr xa = sparse_test::make_dense(x, dt);
    Arr o = run("quadratic", p, {xa.get()});
    ASSERT_TRUE(o.get());
    Dense got = sparse_test::read(o.get());
    Dense want = x;
    for (size_t i = 0; i < x.v.size(); ++i) {
      double v = dt == MXC_DTYPE_FLOAT32 ? (double)(float)x.v[i] : x.v[i];
      want.v[i] = a * v * v + b * v + c;
    }
    EXPECT_LT(sparse_test::max_rel_err(got, want),
              dt == MXC_DTYPE_FLOAT32 ? 1e-6 : 1e-14);
  }
  // Defaults are 0: the output is all zeros.
  Arr xa = sparse_test::make_dense(x);
  Arr o = run("_contrib_quadratic", {}, {xa.get()});
  ASSERT_TRUE(o.get());
  for (double v : sparse_test::read(o.get()).v) EXPECT_EQ(v, 0.0);
  // Integer data is refused naming the operator.
  Arr xi = sparse_test::make_dense(x, MXC_DTYPE_INT32);
  std::vector<Arr> outs;
  EXPECT_NE(sparse_test::invoke("quadratic", p, {xi.get()}, &outs), MXC_OK);
  EXPECT_NE(err().find("quadratic"), std::string::npos) << err();
}

TEST(Quadratic, SparseKeepsStorageWhenCIsZero) {
  Dense d = sparse_test::random_sparse({15, 8}, 0.3, 24, 4);
  Params p = {{"a", "2"}, {"b", "-1"}};
  for (int st : {C, R}) {
    for (int idx : {MXC_DTYPE_INT32, MXC_DTYPE_INT64}) {
      check_keep("quadratic", p, d, st, MXC_DTYPE_FLOAT32, idx);
      check_keep("quadratic", p, d, st, MXC_DTYPE_FLOAT64, idx);
    }
  }
}

// The dense gradient against central differences of the forward.
TEST(Quadratic, GradientMatchesFiniteDifferences) {
  Dense x = sparse_test::random_dense({4, 6}, 25, -2, 2);
  Dense og = sparse_test::random_dense({4, 6}, 26);
  Params p = {{"a", "0.7"}, {"b", "-1.3"}, {"c", "0.4"}};
  const int f64 = MXC_DTYPE_FLOAT64;
  Arr xa = sparse_test::make_dense(x, f64), ga = sparse_test::make_dense(og, f64);
  Arr g = run("_backward_quadratic", p, {ga.get(), xa.get()});
  ASSERT_TRUE(g.get());
  Dense got = sparse_test::read(g.get());
  const double h = 1e-5;
  Dense want = x;
  for (size_t i = 0; i < x.v.size(); ++i) {
    Dense xp = x, xm = x;
    xp.v[i] += h;
    xm.v[i] -= h;
    Arr ap = sparse_test::make_dense(xp, f64), am = sparse_test::make_dense(xm, f64);
    Arr fp = run("quadratic", p, {ap.get()}), fm = run("quadratic", p, {am.get()});
    ASSERT_TRUE(fp.get() && fm.get());
    double dfi = (sparse_test::read(fp.get()).v[i] -
                  sparse_test::read(fm.get()).v[i]) / (2 * h);
    want.v[i] = og.v[i] * dfi;
  }
  EXPECT_LT(sparse_test::max_rel_err(got, want), 1e-8);
}

// Autograd through quadratic on a dense variable: d(sum(og*f))/dx.
TEST(Quadratic, AutogradDense) {
  Dense x = sparse_test::random_dense({3, 5}, 27);
  Dense og = sparse_test::random_dense({3, 5}, 28);
  Arr xa = sparse_test::make_dense(x), ga = sparse_test::make_dense(x);
  Arr oga = sparse_test::make_dense(og);
  mxc_ndarray vars[1] = {xa.get()}, grads[1] = {ga.get()};
  ASSERT_EQ(mxc_autograd_mark_variables(1, vars, nullptr, grads), MXC_OK);
  int prev = 0;
  ASSERT_EQ(mxc_autograd_set_recording(1, &prev), MXC_OK);
  std::vector<Arr> outs;
  int rc = sparse_test::invoke("quadratic", {{"a", "2"}, {"b", "3"}},
                               {xa.get()}, &outs);
  mxc_autograd_set_recording(prev, nullptr);
  ASSERT_EQ(rc, MXC_OK) << err();
  mxc_ndarray heads[1] = {outs[0].get()}, hg[1] = {oga.get()};
  ASSERT_EQ(mxc_autograd_backward(1, heads, hg, 0), MXC_OK) << err();
  Dense got = sparse_test::read(ga.get());
  for (size_t i = 0; i < x.v.size(); ++i) {
    double xv = (float)x.v[i];
    EXPECT_NEAR(got.v[i], (float)og.v[i] * (4 * xv + 3), 1e-5) << i;
  }
}

// ---- bad input ----

TEST(SparseBad, ShapeMismatchNamesShapes) {
  Dense a = sparse_test::random_sparse({3, 4}, 0.5, 29);
  Dense b = sparse_test::random_sparse({3, 5}, 0.5, 30);
  for (int st : {C, R}) {
    Arr x = make(a, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64);
    Arr y = make(b, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64);
    std::vector<Arr> outs;
    EXPECT_EQ(sparse_test::invoke("elemwise_add", {}, {x.get(), y.get()},
                                  &outs),
              MXC_ERR_SHAPE);
    std::string m = err();
    EXPECT_NE(m.find("(3,4)"), std::string::npos) << m;
    EXPECT_NE(m.find("(3,5)"), std::string::npos) << m;
    EXPECT_FALSE(outs[0].get());
  }
}

TEST(SparseBad, MalformedInputIsAnErrorNamingTheOperator) {
  // Column indices out of order in row 0.
  const int64_t shp[2] = {2, 4}, ip[3] = {0, 2, 3}, ix[3] = {3, 1, 0};
  const float v[3] = {1, 2, 3};
  Arr bad;
  ASSERT_EQ(mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, v,
                                   ip, ix, 3, MXC_DEVICE_CPU, 0, bad.out()),
            MXC_OK);
  Dense ok = sparse_test::random_sparse({2, 4}, 0.5, 31);
  Arr good = sparse_test::make_csr(ok);
  // Messages name the operator's registered name ("add" for elemwise_add).
  for (const char *op : {"relu", "add"}) {
    std::vector<mxc_ndarray> ins = {bad.get()};
    if (std::string(op) == "add") ins.push_back(good.get());
    std::vector<Arr> outs;
    int rc = sparse_test::invoke(op, {}, ins, &outs);
    if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(outs[0].get());
    EXPECT_NE(rc, MXC_OK) << op;
    EXPECT_NE(err().find(op), std::string::npos) << err();
    outs.clear();  // freeing the poisoned output reports again: clear it
    mxc_wait_all();
  }
}

TEST(SparseBad, SparseOutputCannotBeItsInput) {
  Dense d = sparse_test::random_sparse({4, 4}, 0.5, 32);
  Arr a = sparse_test::make_csr(d);
  std::vector<Arr> outs;
  outs.emplace_back(sparse_test::make_csr(d).release());
  mxc_ndarray same = outs[0].get();
  int rc = sparse_test::invoke("relu", {}, {same}, &outs);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(same);
  EXPECT_NE(rc, MXC_OK);
  EXPECT_NE(err().find("in place"), std::string::npos) << err();
  outs.clear();
  mxc_wait_all();
}

// ---- allocation failures ----

int add_scenario() {
  const int64_t shp[2] = {3, 4}, ipa[4] = {0, 2, 2, 3}, ixa[3] = {0, 3, 1};
  const int32_t ipb[4] = {0, 1, 2, 2}, ixb[2] = {3, 2};
  const float va[3] = {1, 2, 3}, vb[2] = {4, 5};
  mxc_ndarray a = nullptr, b = nullptr, o = nullptr, r = nullptr,
              s = nullptr;
  mxc_op add = nullptr;
  int rc = mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, va,
                                  ipa, ixa, 3, MXC_DEVICE_CPU, 0, &a);
  if (rc == MXC_OK)
    rc = mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32, vb,
                                ipb, ixb, 2, MXC_DEVICE_CPU, 0, &b);
  if (rc == MXC_OK) rc = mxc_op_find("elemwise_add", &add);
  mxc_ndarray ins[2] = {a, b};
  if (rc == MXC_OK)
    rc = mxc_op_invoke(add, nullptr, nullptr, 0, ins, 2, &o, 1, nullptr);
  // row_sparse too: the rows of the csr arrays.
  mxc_ndarray ra = nullptr;
  if (rc == MXC_OK) rc = mxc_ndarray_cast_storage(a, MXC_STYPE_ROW_SPARSE, &ra);
  mxc_ndarray rins[2] = {ra, ra};
  if (rc == MXC_OK)
    rc = mxc_op_invoke(add, nullptr, nullptr, 0, rins, 2, &r, 1, nullptr);
  int64_t n = 0;
  if (rc == MXC_OK) rc = mxc_ndarray_nnz(o, &n);
  if (rc == MXC_OK && n != 4) rc = MXC_ERR_INTERNAL;  // union: 2 + 1 + 1
  if (rc == MXC_OK) rc = mxc_ndarray_nnz(r, &n);
  for (mxc_ndarray x : {a, b, o, r, s, ra}) mxc_ndarray_free(x);
  int wrc = mxc_wait_all();
  return rc != MXC_OK ? rc : wrc;
}

TEST(SparseElemwiseFaults, EveryAllocationFails) {
  int failures = mxct::alloc_failure_walk(add_scenario, 11);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace

namespace {

// Gradient of relu on a csr variable through autograd: the backward runs
// the dense _backward_relu through invoke's storage fallback.
TEST(SparseAutograd, ReluOnCsrGradient) {
  Dense x = sparse_test::random_sparse({6, 5}, 0.5, 33, 1);
  Dense og = sparse_test::random_dense({6, 5}, 34);
  Arr xa = sparse_test::make_csr(x);
  Arr ga = sparse_test::make_dense(sparse_test::random_sparse({6, 5}, 0, 1));
  Arr oga = sparse_test::make_dense(og);
  mxc_ndarray vars[1] = {xa.get()}, grads[1] = {ga.get()};
  ASSERT_EQ(mxc_autograd_mark_variables(1, vars, nullptr, grads), MXC_OK)
      << err();
  int prev = 0;
  ASSERT_EQ(mxc_autograd_set_recording(1, &prev), MXC_OK);
  std::vector<Arr> outs;
  int rc = sparse_test::invoke("relu", {}, {xa.get()}, &outs);
  mxc_autograd_set_recording(prev, nullptr);
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(sparse_test::stype_of(outs[0].get()), MXC_STYPE_CSR);
  mxc_ndarray heads[1] = {outs[0].get()}, hg[1] = {oga.get()};
  ASSERT_EQ(mxc_autograd_backward(1, heads, hg, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_ndarray_wait_to_read(ga.get()), MXC_OK) << err();
  Dense got = sparse_test::read(ga.get());
  for (size_t i = 0; i < x.v.size(); ++i) {
    EXPECT_EQ(got.v[i], x.v[i] > 0 ? (double)(float)og.v[i] : 0.0) << i;
  }
}

}  // namespace

namespace {

// float16 values take the generic (through double) paths: a sparse f16
// array is the cast of a dense float32 one.
Arr f16(const Dense &d, int stype) {
  Arr a = sparse_test::make_dense(d);
  Arr h = run("Cast", {{"dtype", "float16"}}, {a.get()});
  if (stype == D || !h.get()) return h;
  return run("cast_storage", {{"stype", stype == C ? "csr" : "row_sparse"}},
             {h.get()});
}

TEST(SparseHalf, BinaryAndQuadraticMatchDense) {
  Dense a = sparse_test::random_sparse({9, 7}, 0.4, 35, 2);
  Dense b = sparse_test::random_sparse({9, 7}, 0.4, 36, 2);
  for (const char *op : {"elemwise_add", "elemwise_sub", "elemwise_mul"}) {
    bool mul = std::string(op) == "elemwise_mul";
    for (const BinCase &c : mul ? kMulCases : kAddCases) {
      SCOPED_TRACE(std::string(op) + " " + std::to_string(c.sa) + "," +
                   std::to_string(c.sb));
      Arr x = f16(a, c.sa), y = f16(b, c.sb), xd = f16(a, D), yd = f16(b, D);
      Arr o = run(op, {}, {x.get(), y.get()});
      Arr ref = run(op, {}, {xd.get(), yd.get()});
      ASSERT_TRUE(o.get() && ref.get());
      EXPECT_EQ(sparse_test::stype_of(o.get()), c.want);
      Arr od = run("cast_storage", {{"stype", "default"}}, {o.get()});
      Arr o32 = run("Cast", {{"dtype", "float32"}}, {od.get()});
      Arr r32 = run("Cast", {{"dtype", "float32"}}, {ref.get()});
      ASSERT_TRUE(o32.get() && r32.get());
      EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(o32.get()),
                                         sparse_test::read(r32.get())),
                0.0);
    }
  }
  Arr x = f16(a, C), xd = f16(a, D);
  Params p = {{"a", "0.5"}, {"b", "2"}};
  Arr o = run("quadratic", p, {x.get()}), ref = run("quadratic", p, {xd.get()});
  ASSERT_TRUE(o.get() && ref.get());
  EXPECT_EQ(sparse_test::stype_of(o.get()), C);
  Arr od = run("cast_storage", {{"stype", "default"}}, {o.get()});
  Arr o32 = run("Cast", {{"dtype", "float32"}}, {od.get()});
  Arr r32 = run("Cast", {{"dtype", "float32"}}, {ref.get()});
  ASSERT_TRUE(o32.get() && r32.get());
  EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(o32.get()),
                                     sparse_test::read(r32.get())),
            0.0);
}

}  // namespace

namespace {

// c != 0 on csr: no sparse kernel, so invoke's fallback gives a dense
// result equal to the dense operator's.
TEST(Quadratic, CsrWithConstantFallsBackToDense) {
  Dense d = sparse_test::random_sparse({8, 6}, 0.3, 37, 2);
  Params p = {{"a", "1"}, {"b", "2"}, {"c", "3"}};
  Arr s = sparse_test::make_csr(d), dn = sparse_test::make_dense(d);
  Arr o = run("quadratic", p, {s.get()}), ref = run("quadratic", p, {dn.get()});
  ASSERT_TRUE(o.get() && ref.get());
  EXPECT_EQ(sparse_test::stype_of(o.get()), D);
  EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(o.get()),
                                     sparse_test::read(ref.get())),
            0.0);
}

// Gradient of quadratic on a csr variable through autograd (the sparse
// forward, then _backward_quadratic through the fallback).
TEST(Quadratic, CsrGradientThroughAutograd) {
  Dense x = sparse_test::random_sparse({5, 4}, 0.5, 38, 1);
  Dense og = sparse_test::random_dense({5, 4}, 39);
  Arr xa = sparse_test::make_csr(x);
  Arr ga = sparse_test::make_dense(sparse_test::random_sparse({5, 4}, 0, 1));
  Arr oga = sparse_test::make_dense(og);
  mxc_ndarray vars[1] = {xa.get()}, grads[1] = {ga.get()};
  ASSERT_EQ(mxc_autograd_mark_variables(1, vars, nullptr, grads), MXC_OK)
      << err();
  int prev = 0;
  ASSERT_EQ(mxc_autograd_set_recording(1, &prev), MXC_OK);
  std::vector<Arr> outs;
  int rc = sparse_test::invoke("quadratic", {{"a", "1.5"}, {"b", "-2"}},
                               {xa.get()}, &outs);
  mxc_autograd_set_recording(prev, nullptr);
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(sparse_test::stype_of(outs[0].get()), MXC_STYPE_CSR);
  mxc_ndarray heads[1] = {outs[0].get()}, hg[1] = {oga.get()};
  ASSERT_EQ(mxc_autograd_backward(1, heads, hg, 0), MXC_OK) << err();
  Dense got = sparse_test::read(ga.get());
  for (size_t i = 0; i < x.v.size(); ++i) {
    double want = (float)og.v[i] * (3 * x.v[i] - 2);
    EXPECT_NEAR(got.v[i], want, 1e-5) << i;
  }
}

}  // namespace

// ---- timing (not run by default; prints, never asserts) ----
//   bazel run //tests/sparse_elemwise:test_sparse_elemwise --
//     --gtest_also_run_disabled_tests --gtest_filter='*Timing*'

namespace {

// A rows x cols float32 csr with `per_row` random sorted columns per row.
Arr big_csr(int64_t rows, int64_t cols, int per_row, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int64_t> col(0, cols - 1);
  std::vector<int64_t> ip(1, 0), ix;
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> cs;
    for (int k = 0; k < per_row; ++k) cs.push_back(col(g));
    std::sort(cs.begin(), cs.end());
    cs.erase(std::unique(cs.begin(), cs.end()), cs.end());
    for (int64_t c : cs) {
      ix.push_back(c);
      v.push_back((float)(c % 7) - 3.0f);
    }
    ip.push_back((int64_t)ix.size());
  }
  Arr a;
  const int64_t shp[2] = {rows, cols};
  EXPECT_EQ(mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                                   v.data(), ip.data(), ix.data(),
                                   (int64_t)ix.size(), MXC_DEVICE_CPU, 0,
                                   a.out()),
            MXC_OK);
  return a;
}

// Best of 5 wall times of op(ins) in ms (invoke and wait).
double best_ms(const std::string &op, const Params &p,
               const std::vector<mxc_ndarray> &ins) {
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    Arr o = run(op, p, ins);
    EXPECT_EQ(mxc_ndarray_wait_to_read(o.get()), MXC_OK);
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best,
                    std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

TEST(SparseElemwise, DISABLED_TimingLarge) {
  Arr a = big_csr(100000, 20000, 20, 1), b = big_csr(100000, 20000, 20, 2);
  ASSERT_EQ(mxc_ndarray_check_format(a.get(), 1), MXC_OK);
  printf("csr 100000x20000, 2M stored each, float32:\n");
  printf("  elemwise_add csr+csr  %.2f ms\n",
         best_ms("elemwise_add", {}, {a.get(), b.get()}));
  printf("  elemwise_mul csr*csr  %.2f ms\n",
         best_ms("elemwise_mul", {}, {a.get(), b.get()}));
  printf("  relu csr              %.2f ms\n", best_ms("relu", {}, {a.get()}));
  printf("  _mul_scalar csr       %.2f ms\n",
         best_ms("_mul_scalar", {{"scalar", "2"}}, {a.get()}));
  Arr r = run("cast_storage", {{"stype", "row_sparse"}},
              {big_csr(100000, 64, 2, 3).get()});
  Arr d = sparse_test::make_dense(sparse_test::random_dense({100000, 64}, 4));
  printf("rsp 100000x64 (%lld rows stored) with dense 100000x64:\n",
         (long long)sparse_test::nnz_of(r.get()));
  printf("  elemwise_add rsp+dense %.2f ms\n",
         best_ms("elemwise_add", {}, {r.get(), d.get()}));
  printf("  elemwise_mul rsp*dense %.2f ms\n",
         best_ms("elemwise_mul", {}, {r.get(), d.get()}));
  printf("  elemwise_add rsp+rsp   %.2f ms\n",
         best_ms("elemwise_add", {}, {r.get(), r.get()}));
}

}  // namespace

namespace {

TEST(SparseWhere, AccumulatesIntoOutput) {
  Dense c = sparse_test::random_sparse({12, 9}, 0.3, 40, 3);
  Dense x = sparse_test::random_dense({12, 9}, 41);
  Dense y = sparse_test::random_dense({12, 9}, 42);
  Dense o0 = sparse_test::random_dense({12, 9}, 43);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr cs = sparse_test::make_csr(c, dt), cd = sparse_test::make_dense(c, dt);
    Arr xa = sparse_test::make_dense(x, dt), ya = sparse_test::make_dense(y, dt);
    std::vector<Arr> got, want;
    got.emplace_back(sparse_test::make_dense(o0, dt).release());
    want.emplace_back(sparse_test::make_dense(o0, dt).release());
    ASSERT_EQ(sparse_test::invoke("where", {}, {cs.get(), xa.get(), ya.get()},
                                  &got, 1, {MXC_REQ_ADD}),
              MXC_OK)
        << err();
    ASSERT_EQ(sparse_test::invoke("where", {}, {cd.get(), xa.get(), ya.get()},
                                  &want, 1, {MXC_REQ_ADD}),
              MXC_OK)
        << err();
    EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(got[0].get()),
                                       sparse_test::read(want[0].get())),
              0.0);
  }
}

}  // namespace

namespace {

// Given sparse outputs keep their int32 index dtype (indices narrowed
// from int64 inputs).
TEST(SparseIndex, GivenInt32OutputFromInt64Inputs) {
  Dense d = sparse_test::random_sparse({9, 8}, 0.4, 44, 2);
  Dense e = sparse_test::random_sparse({9, 8}, 0.4, 45, 2);
  Dense zero = sparse_test::random_sparse({9, 8}, 0, 1);
  for (int st : {C, R}) {
    Arr x = make(d, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64);
    Arr y = make(e, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64);
    Arr xd = sparse_test::make_dense(d), yd = sparse_test::make_dense(e);
    for (const char *op : {"relu", "elemwise_add", "elemwise_mul"}) {
      bool unary = std::string(op) == "relu";
      std::vector<mxc_ndarray> ins = {x.get()}, dins = {xd.get()};
      if (!unary) {
        ins.push_back(y.get());
        dins.push_back(yd.get());
      }
      std::vector<Arr> outs;
      outs.emplace_back(make(zero, st, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32));
      ASSERT_EQ(sparse_test::invoke(op, {}, ins, &outs), MXC_OK) << err();
      Arr ref = run(op, {}, dins);
      ASSERT_TRUE(ref.get());
      EXPECT_EQ(mxc_ndarray_check_format(outs[0].get(), 1), MXC_OK) << err();
      EXPECT_EQ(sparse_test::max_rel_err(sparse_test::read(outs[0].get()),
                                         sparse_test::read(ref.get())),
                0.0)
          << op;
    }
  }
}

}  // namespace
