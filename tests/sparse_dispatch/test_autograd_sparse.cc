// Autograd with sparse arrays: a csr input (marked without gradient, or a
// constant) through operators that fall back to dense, and row_sparse
// gradient buffers (dot with a csr input, Embedding, an operator without a
// sparse kernel, several paths into one variable, MXC_REQ_ADD, variables
// no gradient reaches). Every gradient is checked against the gradient of
// the same computation on dense arrays, or a naive loop.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/sparse_util/sparse_util.h"

namespace {

using sparse_test::Arr;
using sparse_test::Dense;
using Params = std::vector<std::pair<std::string, std::string>>;

std::string err() { return mxc_last_error(); }

class Recording {
 public:
  Recording() { mxc_autograd_set_recording(1, &prev_); }
  ~Recording() { mxc_autograd_set_recording(prev_, nullptr); }

 private:
  int prev_ = 0;
};

// op(ins) as a new array (recorded when recording is on).
Arr call(const std::string &op, const Params &p,
         const std::vector<mxc_ndarray> &ins) {
  std::vector<Arr> o;
  int rc = sparse_test::invoke(op, p, ins, &o);
  EXPECT_EQ(rc, MXC_OK) << op << ": " << err();
  return rc == MXC_OK ? std::move(o[0]) : Arr();
}

void mark(mxc_ndarray var, mxc_ndarray grad, int req) {
  ASSERT_EQ(mxc_autograd_mark_variables(1, &var, &req, &grad), MXC_OK)
      << err();
}

void backward(mxc_ndarray head, int retain = 0) {
  ASSERT_EQ(mxc_autograd_backward(1, &head, nullptr, retain), MXC_OK) << err();
}

Dense zeros(std::vector<int64_t> shape) {
  Dense d;
  d.shape = shape;
  d.v.assign((size_t)d.size(), 0.0);
  return d;
}

// Gradient of W for L = op2(op1(X), W) (op1 may be empty: L = op2(X, W)),
// with X of storage type x_stype marked with MXC_REQ_NULL and W's buffer
// of storage type g_stype.
Dense grad_through(const std::string &op1, const std::string &op2,
                   const Dense &x, const Dense &w, int x_stype, int g_stype) {
  Arr xa = sparse_test::make(x, x_stype), wa = sparse_test::make_dense(w);
  Arr xg = sparse_test::make_dense(zeros(x.shape));
  Arr wg = sparse_test::make(zeros(w.shape), g_stype);
  mark(xa.get(), xg.get(), MXC_REQ_NULL);
  mark(wa.get(), wg.get(), MXC_REQ_WRITE);
  Arr l;
  {
    Recording rec;
    Arr mid = op1.empty() ? Arr() : call(op1, {}, {xa.get()});
    l = call(op2, {}, {op1.empty() ? xa.get() : mid.get(), wa.get()});
  }
  backward(l.get());
  EXPECT_EQ(sparse_test::stype_of(wg.get()), g_stype);
  // The buffer of a variable marked with MXC_REQ_NULL is left alone.
  EXPECT_EQ(sparse_test::read(xg.get()).v, zeros(x.shape).v);
  return sparse_test::read(wg.get());
}

TEST(AutogradSparse, CsrInputThroughFallbackOperator) {
  Dense x = sparse_test::random_sparse({6, 4}, 0.4, 1, 1);
  Dense w = sparse_test::random_dense({6, 4}, 2);
  Dense want = grad_through("exp", "elemwise_mul", x, w, MXC_STYPE_DEFAULT,
                            MXC_STYPE_DEFAULT);
  // d/dW sum(exp(X) * W) = exp(X), also by a naive loop.
  for (size_t i = 0; i < x.v.size(); ++i) {
    EXPECT_NEAR(want.v[i], std::exp(x.v[i]), 1e-5);
  }
  for (int g : {MXC_STYPE_DEFAULT, MXC_STYPE_ROW_SPARSE}) {
    Dense got = grad_through("exp", "elemwise_mul", x, w, MXC_STYPE_CSR, g);
    EXPECT_LE(sparse_test::max_rel_err(got, want), 1e-6) << "grad stype " << g;
  }
}

TEST(AutogradSparse, CsrForwardValueReadByGradient) {
  Dense x = sparse_test::random_sparse({5, 3}, 0.4, 3, 2);
  Dense w = sparse_test::random_dense({5, 3}, 4);
  // d/dW sum(X * W) = X: the backward of mul reads the csr value.
  for (int g : {MXC_STYPE_DEFAULT, MXC_STYPE_ROW_SPARSE}) {
    Dense got = grad_through("", "elemwise_mul", x, w, MXC_STYPE_CSR, g);
    EXPECT_EQ(got.v, x.v) << "grad stype " << g;
  }
}

// X^T * ones(rows, m): the gradient of W in sum(dot(X, W)).
Dense xt_ones(const Dense &x, int64_t m) {
  Dense g = zeros({x.shape[1], m});
  for (int64_t r = 0; r < x.shape[0]; ++r) {
    for (int64_t k = 0; k < x.shape[1]; ++k) {
      for (int64_t j = 0; j < m; ++j) {
        g.v[(size_t)(k * m + j)] += x.v[(size_t)(r * x.shape[1] + k)];
      }
    }
  }
  return g;
}

TEST(AutogradSparse, DotWithCsrGivesRowSparseGradient) {
  Dense x = sparse_test::random_sparse({8, 10}, 0.15, 5, 2);
  Dense w = sparse_test::random_dense({10, 3}, 6);
  Arr xa = sparse_test::make_csr(x), wa = sparse_test::make_dense(w);
  Arr wg = sparse_test::make_row_sparse(zeros({10, 3}));
  mark(wa.get(), wg.get(), MXC_REQ_WRITE);
  Arr y;
  {
    Recording rec;
    y = call("dot", {}, {xa.get(), wa.get()});
  }
  backward(y.get());
  EXPECT_EQ(sparse_test::stype_of(wg.get()), MXC_STYPE_ROW_SPARSE);
  Dense want = xt_ones(x, 3);
  EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(wg.get()), want), 1e-6);
  // Only rows of columns X uses can be stored.
  std::set<int64_t> used;
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t k = 0; k < 10; ++k) {
      if (x.v[(size_t)(r * 10 + k)] != 0) used.insert(k);
    }
  }
  EXPECT_LE(sparse_test::nnz_of(wg.get()), (int64_t)used.size());
}

TEST(AutogradSparse, SeveralPathsIntoRowSparseGradient) {
  Dense x1 = sparse_test::random_sparse({4, 6}, 0.3, 7, 1);
  Dense x2 = sparse_test::random_sparse({4, 6}, 0.3, 8, 1);
  Dense w = sparse_test::random_dense({6, 2}, 9);
  Arr a1 = sparse_test::make_csr(x1), a2 = sparse_test::make_csr(x2);
  Arr wa = sparse_test::make_dense(w);
  Arr wg = sparse_test::make_row_sparse(zeros({6, 2}));
  mark(wa.get(), wg.get(), MXC_REQ_WRITE);
  Arr l;
  {
    Recording rec;
    Arr y1 = call("dot", {}, {a1.get(), wa.get()});
    Arr y2 = call("dot", {}, {a2.get(), wa.get()});
    l = call("elemwise_add", {}, {y1.get(), y2.get()});
  }
  backward(l.get());
  Dense want = xt_ones(x1, 2), w2 = xt_ones(x2, 2);
  for (size_t i = 0; i < want.v.size(); ++i) want.v[i] += w2.v[i];
  EXPECT_EQ(sparse_test::stype_of(wg.get()), MXC_STYPE_ROW_SPARSE);
  EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(wg.get()), want), 1e-6);
}

// Embedding: rows of W the indices pick get the number of times they were
// picked (head gradient ones); other rows are not stored.
TEST(AutogradSparse, EmbeddingRowSparseGradientAndReqAdd) {
  Dense idx{{6}, {3, 1, 3, 7, 0, 7}};
  Dense w = sparse_test::random_dense({9, 4}, 10);
  Dense want = zeros({9, 4});
  std::set<int64_t> rows;
  for (double i : idx.v) {
    rows.insert((int64_t)i);
    for (int j = 0; j < 4; ++j) want.v[(size_t)(i * 4 + j)] += 1;
  }
  Params p = {{"input_dim", "9"}, {"output_dim", "4"}};
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    Arr ia = sparse_test::make_dense(idx), wa = sparse_test::make_dense(w);
    Arr wg = sparse_test::make_row_sparse(zeros({9, 4}));
    mark(wa.get(), wg.get(), req);
    Arr y;
    {
      Recording rec;
      y = call("Embedding", p, {ia.get(), wa.get()});
    }
    backward(y.get(), 1);
    backward(y.get(), 0);  // WRITE: the same again; ADD: twice as much
    Dense got = sparse_test::read(wg.get());
    Dense expect = want;
    if (req == MXC_REQ_ADD) {
      for (double &v : expect.v) v *= 2;
    }
    EXPECT_EQ(sparse_test::stype_of(wg.get()), MXC_STYPE_ROW_SPARSE);
    EXPECT_EQ(got.v, expect.v) << "req " << req;
    EXPECT_EQ(sparse_test::nnz_of(wg.get()), (int64_t)rows.size());
  }
}

TEST(AutogradSparse, RowSparseBufferWithoutSparseKernel) {
  Dense w = sparse_test::random_sparse({5, 3}, 0.5, 11, 2);
  Arr wa = sparse_test::make_dense(w);
  Arr wg = sparse_test::make_row_sparse(zeros({5, 3}));
  mark(wa.get(), wg.get(), MXC_REQ_WRITE);
  Arr y, z;
  {
    Recording rec;
    y = call("cbrt", {}, {wa.get()});
    z = call("elemwise_mul", {}, {y.get(), y.get()});
  }
  Arr dense_w = sparse_test::make_dense(w);
  Arr dense_g = sparse_test::make_dense(zeros({5, 3}));
  mark(dense_w.get(), dense_g.get(), MXC_REQ_WRITE);
  Arr dz;
  {
    Recording rec;
    Arr dy = call("cbrt", {}, {dense_w.get()});
    dz = call("elemwise_mul", {}, {dy.get(), dy.get()});
  }
  mxc_ndarray heads[2] = {z.get(), dz.get()};
  ASSERT_EQ(mxc_autograd_backward(2, heads, nullptr, 0), MXC_OK) << err();
  EXPECT_EQ(sparse_test::stype_of(wg.get()), MXC_STYPE_ROW_SPARSE);
  EXPECT_LE(sparse_test::max_rel_err(sparse_test::read(wg.get()),
                                     sparse_test::read(dense_g.get())),
            1e-6);
}

TEST(AutogradSparse, BadGradientBuffers) {
  Dense w = sparse_test::random_sparse({4, 3}, 0.5, 12, 1);
  Arr wa = sparse_test::make_dense(w);
  Arr csr = sparse_test::make_csr(w);
  mxc_ndarray v = wa.get(), g = csr.get();
  int req = MXC_REQ_WRITE;
  EXPECT_EQ(mxc_autograd_mark_variables(1, &v, &req, &g), MXC_ERR_STYPE);
  EXPECT_NE(err().find("csr"), std::string::npos) << err();
  Arr rsp = sparse_test::make_row_sparse(zeros({3, 4}));
  g = rsp.get();
  EXPECT_EQ(mxc_autograd_mark_variables(1, &v, &req, &g), MXC_ERR_SHAPE);
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_autograd_get_grad(v, &out), MXC_ERR_NOT_FOUND);
  EXPECT_EQ(out, nullptr);
}

}  // namespace
