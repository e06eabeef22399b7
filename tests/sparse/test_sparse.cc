// Sparse arrays through the public API: dense <-> csr <-> row_sparse casts
// against CSR / row_sparse structures built here by naive loops and against
// the dense input; host construction with int32 and int64 indices; format
// checks on hand-broken arrays (each rule, message names the position);
// sparse copies; refusals of dense-only paths; bad arguments of every new
// function; an allocation-failure walk.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"
#include "tests/sparse_util/sparse_util.h"
#include "tests/testutil/fault_walk.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace {

std::string err() { return mxc_last_error(); }

// Values of any of the tested dtypes, held as double for comparisons.
struct Dense {
  std::vector<int64_t> shape;
  int dtype;
  std::vector<double> v;  // row-major
  int64_t rows() const { return shape[0]; }
  int64_t row_len() const {
    int64_t n = 1;
    for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
    return n;
  }
};

size_t esize(int dtype) { return (size_t)mxc_dtype_size(dtype); }

using sparse_test::pack_values;
using sparse_test::unpack_values;

mxc_ndarray make_dense(const Dense &d) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(d.shape.data(), (int)d.shape.size(), d.dtype,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << err();
  std::vector<char> b = pack_values(d.v, d.dtype);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, b.data(), b.size()), MXC_OK) << err();
  return a;
}

// Dense contents of a dense array, with its dtype.
std::vector<double> read_dense(mxc_ndarray a, int *dtype_out = nullptr) {
  int dt = -1, st = -1;
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK);
  EXPECT_EQ(mxc_ndarray_stype(a, &st), MXC_OK);
  EXPECT_EQ(st, MXC_STYPE_DEFAULT);
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<char> b((size_t)n * esize(dt));
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, b.data(), b.size()), MXC_OK) << err();
  if (dtype_out) *dtype_out = dt;
  return unpack_values(b, dt);
}

// Random matrix: each row empty with probability p_empty_row, else each
// element nonzero with probability density.
Dense random_dense(std::mt19937 &g, std::vector<int64_t> shape, int dtype,
                   double density, double p_empty_row) {
  Dense d{shape, dtype, {}};
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> val(1, 9);
  d.v.assign((size_t)(d.rows() * d.row_len()), 0.0);
  for (int64_t r = 0; r < d.rows(); ++r) {
    if (u(g) < p_empty_row) continue;
    for (int64_t c = 0; c < d.row_len(); ++c) {
      if (u(g) < density) {
        double x = val(g) * (u(g) < 0.5 ? -1 : 1);
        if (dtype != MXC_DTYPE_INT32) x += 0.25;
        d.v[(size_t)(r * d.row_len() + c)] = x;
      }
    }
  }
  return d;
}

// Naive CSR / row_sparse of a dense matrix.
struct Csr {
  std::vector<double> data;
  std::vector<int64_t> indptr, indices;
};
Csr naive_csr(const Dense &d) {
  Csr c;
  c.indptr.push_back(0);
  for (int64_t r = 0; r < d.rows(); ++r) {
    for (int64_t j = 0; j < d.row_len(); ++j) {
      double x = d.v[(size_t)(r * d.row_len() + j)];
      if (x != 0) {
        c.data.push_back(x);
        c.indices.push_back(j);
      }
    }
    c.indptr.push_back((int64_t)c.indices.size());
  }
  return c;
}
struct Rsp {
  std::vector<double> data;
  std::vector<int64_t> idx;
};
Rsp naive_rsp(const Dense &d) {
  Rsp s;
  for (int64_t r = 0; r < d.rows(); ++r) {
    bool any = false;
    for (int64_t j = 0; j < d.row_len(); ++j) {
      any |= d.v[(size_t)(r * d.row_len() + j)] != 0;
    }
    if (!any) continue;
    s.idx.push_back(r);
    for (int64_t j = 0; j < d.row_len(); ++j) {
      s.data.push_back(d.v[(size_t)(r * d.row_len() + j)]);
    }
  }
  return s;
}

std::vector<int64_t> as_i64(const std::vector<double> &v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

mxc_ndarray cast(mxc_ndarray a, int stype) {
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_ndarray_cast_storage(a, stype, &out), MXC_OK) << err();
  return out;
}

int64_t nnz_of(mxc_ndarray a) {
  int64_t n = -1;
  EXPECT_EQ(mxc_ndarray_nnz(a, &n), MXC_OK) << err();
  return n;
}

std::vector<double> part(mxc_ndarray a, int which, int *dtype = nullptr) {
  mxc_ndarray p = nullptr;
  int rc = which < 0 ? mxc_ndarray_sparse_data(a, &p)
                     : mxc_ndarray_aux(a, which, &p);
  EXPECT_EQ(rc, MXC_OK) << err();
  if (!p) return {};
  std::vector<double> v = read_dense(p, dtype);
  mxc_ndarray_free(p);
  return v;
}

void expect_csr(mxc_ndarray a, const Csr &want, int index_dtype) {
  int st = -1, idt = -1;
  ASSERT_EQ(mxc_ndarray_stype(a, &st), MXC_OK);
  ASSERT_EQ(st, MXC_STYPE_CSR);
  EXPECT_EQ(nnz_of(a), (int64_t)want.data.size());
  EXPECT_EQ(part(a, -1), want.data);
  EXPECT_EQ(as_i64(part(a, MXC_CSR_INDPTR, &idt)), want.indptr);
  EXPECT_EQ(idt, index_dtype);
  EXPECT_EQ(as_i64(part(a, MXC_CSR_INDICES, &idt)), want.indices);
  EXPECT_EQ(idt, index_dtype);
  EXPECT_EQ(mxc_ndarray_check_format(a, 1), MXC_OK) << err();
}

void expect_rsp(mxc_ndarray a, const Rsp &want) {
  int st = -1;
  ASSERT_EQ(mxc_ndarray_stype(a, &st), MXC_OK);
  ASSERT_EQ(st, MXC_STYPE_ROW_SPARSE);
  EXPECT_EQ(nnz_of(a), (int64_t)want.idx.size());
  EXPECT_EQ(part(a, -1), want.data);
  EXPECT_EQ(as_i64(part(a, MXC_ROW_SPARSE_INDICES)), want.idx);
  EXPECT_EQ(mxc_ndarray_check_format(a, 1), MXC_OK) << err();
}

const int kDtypes[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32};

// The value patterns: random with empty rows, all zero, full.
std::vector<Dense> patterns(std::mt19937 &g, std::vector<int64_t> shape,
                            int dtype) {
  return {random_dense(g, shape, dtype, 0.3, 0.3),
          random_dense(g, shape, dtype, 0.0, 0.0),
          random_dense(g, shape, dtype, 1.0, 0.0)};
}

TEST(SparseCast, DenseCsrDenseRoundTrip) {
  std::mt19937 g(1);
  for (int dt : kDtypes) {
    for (auto shape :
         {std::vector<int64_t>{7, 5}, {1, 1}, {0, 4}, {3, 0}, {40, 33}}) {
      for (const Dense &d : patterns(g, shape, dt)) {
        SCOPED_TRACE("dtype " + std::to_string(dt) + " shape " +
                     std::to_string(shape[0]) + "x" + std::to_string(shape[1]));
        mxc_ndarray a = make_dense(d);
        mxc_ndarray c = cast(a, MXC_STYPE_CSR);
        expect_csr(c, naive_csr(d), MXC_DTYPE_INT64);
        mxc_ndarray back = cast(c, MXC_STYPE_DEFAULT);
        EXPECT_EQ(read_dense(back), d.v);
        // csr -> row_sparse directly, and back to csr.
        mxc_ndarray r = cast(c, MXC_STYPE_ROW_SPARSE);
        expect_rsp(r, naive_rsp(d));
        mxc_ndarray c2 = cast(r, MXC_STYPE_CSR);
        expect_csr(c2, naive_csr(d), MXC_DTYPE_INT64);
        mxc_ndarray c3 = cast(c, MXC_STYPE_CSR);  // same type: a copy
        expect_csr(c3, naive_csr(d), MXC_DTYPE_INT64);
        for (mxc_ndarray x : {a, c, back, r, c2, c3}) mxc_ndarray_free(x);
      }
    }
  }
}

TEST(SparseCast, DenseRspDenseRoundTrip) {
  std::mt19937 g(2);
  for (int dt : kDtypes) {
    for (auto shape :
         {std::vector<int64_t>{9, 4}, {6}, {5, 2, 3}, {0, 3}, {30, 17}}) {
      for (const Dense &d : patterns(g, shape, dt)) {
        SCOPED_TRACE("dtype " + std::to_string(dt) + " ndim " +
                     std::to_string(shape.size()));
        mxc_ndarray a = make_dense(d);
        mxc_ndarray r = cast(a, MXC_STYPE_ROW_SPARSE);
        expect_rsp(r, naive_rsp(d));
        mxc_ndarray back = cast(r, MXC_STYPE_DEFAULT);
        EXPECT_EQ(read_dense(back), d.v);
        mxc_ndarray r2 = cast(r, MXC_STYPE_ROW_SPARSE);
        expect_rsp(r2, naive_rsp(d));
        for (mxc_ndarray x : {a, r, back, r2}) mxc_ndarray_free(x);
      }
    }
  }
}

TEST(SparseCast, DenseToDenseAndOpInvoke) {
  std::mt19937 g(3);
  Dense d = random_dense(g, {4, 6}, MXC_DTYPE_FLOAT32, 0.5, 0.2);
  mxc_ndarray a = make_dense(d);
  mxc_ndarray b = cast(a, MXC_STYPE_DEFAULT);
  EXPECT_EQ(read_dense(b), d.v);
  // Through mxc_op_invoke with a given csr output.
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("cast_storage", &op), MXC_OK) << err();
  const int64_t shp[2] = {4, 6};
  mxc_ndarray out = nullptr;
  ASSERT_EQ(
      mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32, nullptr,
                             nullptr, nullptr, 0, MXC_DEVICE_CPU, 0, &out),
      MXC_OK)
      << err();
  const char *k = "stype", *v = "csr";
  ASSERT_EQ(mxc_op_invoke(op, &k, &v, 1, &a, 1, &out, 1, nullptr), MXC_OK)
      << err();
  expect_csr(out, naive_csr(d), MXC_DTYPE_INT32);  // keeps its index dtype
  // Given output of another storage type, and accumulation into sparse.
  const char *vr = "row_sparse";
  EXPECT_EQ(mxc_op_invoke(op, &k, &vr, 1, &a, 1, &out, 1, nullptr),
            MXC_ERR_STYPE);
  int add = MXC_REQ_ADD;
  EXPECT_EQ(mxc_op_invoke(op, &k, &v, 1, &a, 1, &out, 1, &add), MXC_ERR_STYPE);
  const char *bad = "coo";
  mxc_ndarray none = nullptr;
  EXPECT_NE(mxc_op_invoke(op, &k, &bad, 1, &a, 1, &none, 1, nullptr), MXC_OK);
  EXPECT_EQ(none, nullptr);
  for (mxc_ndarray x : {a, b, out}) mxc_ndarray_free(x);
}

// Host buffers with int32 and int64 indices, read back and densified.
TEST(SparseCreate, FromHostBothIndexTypes) {
  std::mt19937 g(4);
  for (int idt : {MXC_DTYPE_INT32, MXC_DTYPE_INT64}) {
    for (int dt : kDtypes) {
      Dense d = random_dense(g, {11, 7}, dt, 0.4, 0.3);
      Csr c = naive_csr(d);
      std::vector<char> data = pack_values(c.data, dt);
      std::vector<double> ip(c.indptr.begin(), c.indptr.end());
      std::vector<double> ix(c.indices.begin(), c.indices.end());
      std::vector<char> ipb = pack_values(ip, idt), ixb = pack_values(ix, idt);
      mxc_ndarray a = nullptr;
      ASSERT_EQ(mxc_ndarray_create_csr(
                    d.shape.data(), dt, idt, data.data(), ipb.data(),
                    ixb.data(), (int64_t)c.data.size(), MXC_DEVICE_CPU, 0, &a),
                MXC_OK)
          << err();
      int st = -1, ndim = 0;
      const int64_t *shape = nullptr;
      ASSERT_EQ(mxc_ndarray_stype(a, &st), MXC_OK);
      EXPECT_EQ(st, MXC_STYPE_CSR);
      ASSERT_EQ(mxc_ndarray_shape(a, &ndim, &shape), MXC_OK);
      EXPECT_EQ(std::vector<int64_t>(shape, shape + ndim), d.shape);
      expect_csr(a, c, idt);
      mxc_ndarray back = cast(a, MXC_STYPE_DEFAULT);
      EXPECT_EQ(read_dense(back), d.v);

      Rsp r = naive_rsp(d);
      std::vector<char> rdata = pack_values(r.data, dt);
      std::vector<double> ri(r.idx.begin(), r.idx.end());
      std::vector<char> rib = pack_values(ri, idt);
      mxc_ndarray b = nullptr;
      ASSERT_EQ(mxc_ndarray_create_row_sparse(
                    d.shape.data(), 2, dt, idt, rdata.data(), rib.data(),
                    (int64_t)r.idx.size(), MXC_DEVICE_CPU, 0, &b),
                MXC_OK)
          << err();
      expect_rsp(b, r);
      mxc_ndarray back2 = cast(b, MXC_STYPE_DEFAULT);
      EXPECT_EQ(read_dense(back2), d.v);
      for (mxc_ndarray x : {a, back, b, back2}) mxc_ndarray_free(x);
    }
  }
}

TEST(SparseCreate, EmptyArrays) {
  const int64_t shp[2] = {3, 4};
  mxc_ndarray c = nullptr, r = nullptr;
  ASSERT_EQ(
      mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, nullptr,
                             nullptr, nullptr, 0, MXC_DEVICE_CPU, 0, &c),
      MXC_OK)
      << err();
  ASSERT_EQ(
      mxc_ndarray_create_row_sparse(shp, 2, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32,
                                    nullptr, nullptr, 0, MXC_DEVICE_CPU, 0, &r),
      MXC_OK)
      << err();
  EXPECT_EQ(nnz_of(c), 0);
  EXPECT_EQ(nnz_of(r), 0);
  EXPECT_EQ(as_i64(part(c, MXC_CSR_INDPTR)), std::vector<int64_t>(4, 0));
  EXPECT_EQ(mxc_ndarray_check_format(c, 1), MXC_OK) << err();
  EXPECT_EQ(mxc_ndarray_check_format(r, 1), MXC_OK) << err();
  mxc_ndarray dc = cast(c, MXC_STYPE_DEFAULT), dr = cast(r, MXC_STYPE_DEFAULT);
  EXPECT_EQ(read_dense(dc), std::vector<double>(12, 0.0));
  EXPECT_EQ(read_dense(dr), std::vector<double>(12, 0.0));
  for (mxc_ndarray x : {c, r, dc, dr}) mxc_ndarray_free(x);
}

// ---- format checks ----

mxc_ndarray raw_csr(std::vector<int64_t> shape, std::vector<int64_t> indptr,
                    std::vector<int64_t> indices) {
  std::vector<float> data(indices.size(), 1.0f);
  mxc_ndarray a = nullptr;
  EXPECT_EQ(
      mxc_ndarray_create_csr(shape.data(), MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                             data.data(), indptr.data(), indices.data(),
                             (int64_t)indices.size(), MXC_DEVICE_CPU, 0, &a),
      MXC_OK)
      << err();
  return a;
}

mxc_ndarray raw_rsp(std::vector<int64_t> shape, std::vector<int32_t> idx) {
  std::vector<float> data(idx.size() * (size_t)shape[1], 1.0f);
  mxc_ndarray a = nullptr;
  EXPECT_EQ(
      mxc_ndarray_create_row_sparse(
          shape.data(), (int)shape.size(), MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32,
          data.data(), idx.data(), (int64_t)idx.size(), MXC_DEVICE_CPU, 0, &a),
      MXC_OK)
      << err();
  return a;
}

// The full check fails naming `where`; so does an operator reading it.
void expect_bad(mxc_ndarray a, const std::string &where, bool quick_fails) {
  EXPECT_EQ(mxc_ndarray_check_format(a, 1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find(where), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_check_format(a, 0),
            quick_fails ? MXC_ERR_INVALID_ARGUMENT : MXC_OK)
      << err();
  // The array is not poisoned by a failed check.
  EXPECT_EQ(mxc_ndarray_wait_to_read(a), MXC_OK) << err();
  mxc_ndarray d = nullptr;
  ASSERT_EQ(mxc_ndarray_cast_storage(a, MXC_STYPE_DEFAULT, &d), MXC_OK)
      << err();
  EXPECT_EQ(mxc_ndarray_wait_to_read(d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find(where), std::string::npos) << err();
  mxc_ndarray_free(d);
  mxc_ndarray_free(a);
}

TEST(SparseFormat, CsrErrorsNamePosition) {
  expect_bad(raw_csr({3, 4}, {1, 1, 2, 3}, {0, 1, 2}), "indptr[0]", true);
  expect_bad(raw_csr({3, 4}, {0, 2, 1, 3}, {0, 1, 2}), "indptr[2] = 1", false);
  expect_bad(raw_csr({3, 4}, {0, 1, 2, 2}, {0, 1, 2}), "indptr[3]", true);
  expect_bad(raw_csr({3, 4}, {0, 1, 2, 3}, {0, 4, 2}), "indices[1] = 4", false);
  expect_bad(raw_csr({3, 4}, {0, 1, 2, 3}, {0, -1, 2}), "indices[1] = -1",
             false);
  expect_bad(raw_csr({2, 4}, {0, 3, 3}, {0, 2, 2}), "indices[2] = 2 (row 0)",
             false);
  expect_bad(raw_csr({2, 4}, {0, 2, 4}, {0, 3, 3, 1}), "indices[3] = 1 (row 1)",
             false);
  // Decreasing across rows is fine.
  mxc_ndarray ok = raw_csr({2, 4}, {0, 2, 3}, {2, 3, 0});
  EXPECT_EQ(mxc_ndarray_check_format(ok, 1), MXC_OK) << err();
  mxc_ndarray_free(ok);
}

TEST(SparseFormat, RspErrorsNamePosition) {
  expect_bad(raw_rsp({5, 2}, {0, 5}), "indices[1] = 5", false);
  expect_bad(raw_rsp({5, 2}, {-2}), "indices[0] = -2", false);
  expect_bad(raw_rsp({5, 2}, {1, 3, 3}), "indices[2] = 3", false);
  expect_bad(raw_rsp({5, 2}, {4, 1}), "indices[1] = 1", false);
  mxc_ndarray ok = raw_rsp({5, 2}, {0, 2, 4});
  EXPECT_EQ(mxc_ndarray_check_format(ok, 1), MXC_OK) << err();
  mxc_ndarray_free(ok);
}

// ---- copies and refusals ----

TEST(SparseArray, CopyBetweenSparseArrays) {
  std::mt19937 g(5);
  Dense d = random_dense(g, {6, 5}, MXC_DTYPE_FLOAT64, 0.4, 0.3);
  mxc_ndarray a = make_dense(d);
  mxc_ndarray c = cast(a, MXC_STYPE_CSR);
  mxc_ndarray dst = nullptr;
  ASSERT_EQ(mxc_ndarray_create_csr(d.shape.data(), MXC_DTYPE_FLOAT64,
                                   MXC_DTYPE_INT32, nullptr, nullptr, nullptr,
                                   0, MXC_DEVICE_CPU, 0, &dst),
            MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy(c, dst), MXC_OK) << err();
  expect_csr(dst, naive_csr(d), MXC_DTYPE_INT32);
  EXPECT_EQ(mxc_ndarray_copy(c, c), MXC_OK);  // one array: nothing to do
  mxc_ndarray r = cast(a, MXC_STYPE_ROW_SPARSE);
  EXPECT_EQ(mxc_ndarray_copy(c, r), MXC_ERR_STYPE);
  EXPECT_EQ(mxc_ndarray_copy(a, c), MXC_ERR_STYPE);
  EXPECT_EQ(mxc_ndarray_copy(c, a), MXC_ERR_STYPE);
  const int64_t other[2] = {5, 6};
  mxc_ndarray o = nullptr;
  ASSERT_EQ(
      mxc_ndarray_create_csr(other, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT64, nullptr,
                             nullptr, nullptr, 0, MXC_DEVICE_CPU, 0, &o),
      MXC_OK);
  EXPECT_EQ(mxc_ndarray_copy(c, o), MXC_ERR_SHAPE);
  for (mxc_ndarray x : {a, c, dst, r, o}) mxc_ndarray_free(x);
}

int noop_fn(void *, mxc_opctx) { return MXC_OK; }

TEST(SparseArray, DenseOnlyPathsRefuse) {
  std::mt19937 g(6);
  Dense d = random_dense(g, {4, 4}, MXC_DTYPE_FLOAT32, 0.5, 0.0);
  mxc_ndarray a = make_dense(d);
  mxc_ndarray c = cast(a, MXC_STYPE_CSR);
  mxc_ndarray v = nullptr;
  EXPECT_EQ(mxc_ndarray_slice(c, 0, 1, &v), MXC_ERR_STYPE);
  EXPECT_EQ(mxc_ndarray_at(c, 0, &v), MXC_ERR_STYPE);
  const int64_t flat[1] = {16};
  EXPECT_EQ(mxc_ndarray_reshape(c, flat, 1, &v), MXC_ERR_STYPE);
  EXPECT_EQ(v, nullptr);
  std::vector<float> host(16);
  EXPECT_EQ(mxc_ndarray_copy_to_host(c, host.data(), 64), MXC_ERR_STYPE);
  EXPECT_EQ(mxc_ndarray_copy_from_host(c, host.data(), 64), MXC_ERR_STYPE);
  struct DLManagedTensor *t = nullptr;
  EXPECT_EQ(mxc_ndarray_to_dlpack(c, &t), MXC_ERR_STYPE);
  EXPECT_EQ(
      mxc_engine_push(noop_fn, nullptr, nullptr, &c, 1, nullptr, 0, 0, "x"),
      MXC_ERR_STYPE);
  // A dense-only operator runs through the storage fallback (tested in
  // tests/sparse_dispatch): sparse input, and a sparse given output.
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("identity", &op), MXC_OK) << err();
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &c, 1, &out, 1, nullptr),
            MXC_OK);
  mxc_ndarray_free(out);
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a, 1, &c, 1, nullptr),
            MXC_OK);
  // Views that do work: waits, and the array still reads back.
  EXPECT_EQ(mxc_ndarray_wait_to_write(c), MXC_OK);
  mxc_ndarray back = cast(c, MXC_STYPE_DEFAULT);
  EXPECT_EQ(read_dense(back), d.v);
  for (mxc_ndarray x : {a, c, back}) mxc_ndarray_free(x);
}

// ---- bad arguments ----

TEST(SparseApi, BadArguments) {
  const int64_t shp[2] = {2, 3};
  const float data[2] = {1, 2};
  const int64_t ip[3] = {0, 1, 2}, ix[2] = {0, 1};
  mxc_ndarray sentinel = (mxc_ndarray)0x1;
  mxc_ndarray out = sentinel;
  auto csr = [&](const int64_t *s, int dt, int idt, const void *d,
                 const void *p, const void *i, int64_t nnz, int dev) {
    out = sentinel;
    return mxc_ndarray_create_csr(s, dt, idt, d, p, i, nnz, dev, 0, &out);
  };
  EXPECT_EQ(mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                                   data, ip, ix, 2, MXC_DEVICE_CPU, 0, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(csr(nullptr, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data, ip, ix, 2,
                MXC_DEVICE_CPU),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(csr(shp, 99, MXC_DTYPE_INT64, data, ip, ix, 2, MXC_DEVICE_CPU),
            MXC_ERR_DTYPE);
  EXPECT_EQ(csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT32, data, ip, ix, 2,
                MXC_DEVICE_CPU),
            MXC_ERR_DTYPE);
  EXPECT_EQ(csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data, ip, ix, -1,
                MXC_DEVICE_CPU),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data, ip, ix, 7,
                MXC_DEVICE_CPU),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, nullptr, ip, ix, 2,
                MXC_DEVICE_CPU),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data, nullptr, ix, 2,
                MXC_DEVICE_CPU),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data, ip, nullptr, 2,
                MXC_DEVICE_CPU),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data, ip, ix, 2, 77),
            MXC_OK);
  const int64_t neg[2] = {-1, 3};
  EXPECT_NE(csr(neg, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data, ip, ix, 0,
                MXC_DEVICE_CPU),
            MXC_OK);
  const int64_t wide[2] = {2, (int64_t)1 << 32};
  EXPECT_EQ(csr(wide, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32, nullptr, nullptr,
                nullptr, 0, MXC_DEVICE_CPU),
            MXC_ERR_SHAPE);
  EXPECT_EQ(out, sentinel);

  auto rsp = [&](const int64_t *s, int ndim, int idt, const void *d,
                 const void *i, int64_t nnz) {
    out = sentinel;
    return mxc_ndarray_create_row_sparse(s, ndim, MXC_DTYPE_FLOAT32, idt, d, i,
                                         nnz, MXC_DEVICE_CPU, 0, &out);
  };
  const int64_t r1[1] = {0};
  EXPECT_EQ(rsp(shp, 0, MXC_DTYPE_INT64, data, r1, 1),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rsp(shp, 9, MXC_DTYPE_INT64, data, r1, 1),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rsp(nullptr, 2, MXC_DTYPE_INT64, data, r1, 1),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rsp(shp, 2, MXC_DTYPE_INT8, data, r1, 1), MXC_ERR_DTYPE);
  EXPECT_EQ(rsp(shp, 2, MXC_DTYPE_INT64, data, r1, 3),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rsp(shp, 2, MXC_DTYPE_INT64, nullptr, r1, 1),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rsp(shp, 2, MXC_DTYPE_INT64, data, nullptr, 1),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_create_row_sparse(shp, 2, MXC_DTYPE_FLOAT32,
                                          MXC_DTYPE_INT64, nullptr, nullptr, 0,
                                          MXC_DEVICE_CPU, 0, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, sentinel);

  mxc_ndarray dense = nullptr, c = nullptr;
  ASSERT_EQ(mxc_ndarray_create(shp, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                               &dense),
            MXC_OK);
  ASSERT_EQ(mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                                   data, ip, ix, 2, MXC_DEVICE_CPU, 0, &c),
            MXC_OK);
  mxc_ndarray freed = nullptr;
  ASSERT_EQ(mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                                   data, ip, ix, 2, MXC_DEVICE_CPU, 0, &freed),
            MXC_OK);
  mxc_ndarray_free(freed);
  int64_t n = -7;
  EXPECT_EQ(mxc_ndarray_nnz(c, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxc_ndarray_nnz(nullptr, &n), MXC_OK);
  EXPECT_EQ(mxc_ndarray_nnz(freed, &n), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_ndarray_nnz(dense, &n), MXC_ERR_STYPE);
  EXPECT_EQ(n, -7);
  out = sentinel;
  EXPECT_EQ(mxc_ndarray_sparse_data(c, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_sparse_data(freed, &out), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_ndarray_sparse_data(dense, &out), MXC_ERR_STYPE);
  EXPECT_EQ(mxc_ndarray_aux(c, 0, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_aux(freed, 0, &out), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_ndarray_aux(dense, 0, &out), MXC_ERR_STYPE);
  EXPECT_EQ(mxc_ndarray_aux(c, 2, &out), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_aux(c, -1, &out), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_check_format(freed, 1), MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(mxc_ndarray_check_format(nullptr, 1), MXC_OK);
  EXPECT_EQ(mxc_ndarray_check_format(dense, 1), MXC_OK);
  EXPECT_EQ(mxc_ndarray_cast_storage(c, MXC_STYPE_DEFAULT, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_cast_storage(freed, MXC_STYPE_DEFAULT, &out),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_ndarray_cast_storage(c, 3, &out), MXC_ERR_STYPE);
  EXPECT_EQ(mxc_ndarray_cast_storage(c, -1, &out), MXC_ERR_STYPE);
  const int64_t s3[3] = {2, 2, 2};
  mxc_ndarray d3 = nullptr;
  ASSERT_EQ(
      mxc_ndarray_create(s3, 3, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &d3),
      MXC_OK);
  EXPECT_EQ(mxc_ndarray_cast_storage(d3, MXC_STYPE_CSR, &out), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("csr"), std::string::npos) << err();
  EXPECT_EQ(out, sentinel);
  for (mxc_ndarray x : {dense, c, d3}) mxc_ndarray_free(x);
}

// ---- threads and allocation failures ----

TEST(SparseArray, ConcurrentCasts) {
  std::vector<std::thread> ts;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([t, &ok] {
      std::mt19937 g((unsigned)(10 + t));
      Dense d = random_dense(g, {20, 15}, MXC_DTYPE_FLOAT32, 0.3, 0.3);
      mxc_ndarray a = make_dense(d);
      bool good = true;
      for (int i = 0; i < 5; ++i) {
        mxc_ndarray c = cast(a, MXC_STYPE_CSR);
        mxc_ndarray r = cast(c, MXC_STYPE_ROW_SPARSE);
        mxc_ndarray b = cast(r, MXC_STYPE_DEFAULT);
        good = good && read_dense(b) == d.v;
        for (mxc_ndarray x : {c, r, b}) mxc_ndarray_free(x);
      }
      mxc_ndarray_free(a);
      ok[(size_t)t] = good;
    });
  }
  for (auto &t : ts) t.join();
  for (int v : ok) EXPECT_TRUE(v);
}

int scenario() {
  const int64_t shp[2] = {4, 3};
  const float data[4] = {1, 2, 3, 4};
  const int64_t ip[5] = {0, 1, 1, 3, 4}, ix[4] = {2, 0, 1, 2};
  mxc_ndarray c = nullptr, d = nullptr, r = nullptr, c2 = nullptr,
              aux = nullptr, vals = nullptr;
  int rc = mxc_ndarray_create_csr(shp, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data,
                                  ip, ix, 4, MXC_DEVICE_CPU, 0, &c);
  if (rc == MXC_OK) rc = mxc_ndarray_cast_storage(c, MXC_STYPE_DEFAULT, &d);
  if (rc == MXC_OK) rc = mxc_ndarray_cast_storage(d, MXC_STYPE_ROW_SPARSE, &r);
  if (rc == MXC_OK) rc = mxc_ndarray_cast_storage(r, MXC_STYPE_CSR, &c2);
  if (rc == MXC_OK) rc = mxc_ndarray_check_format(c2, 1);
  if (rc == MXC_OK) rc = mxc_ndarray_aux(c2, MXC_CSR_INDICES, &aux);
  if (rc == MXC_OK) rc = mxc_ndarray_sparse_data(r, &vals);
  int64_t n = 0;
  if (rc == MXC_OK) rc = mxc_ndarray_nnz(r, &n);
  if (rc == MXC_OK) rc = mxc_ndarray_copy(c2, c);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(c);
  for (mxc_ndarray x : {c, d, r, c2, aux, vals}) mxc_ndarray_free(x);
  // Asynchronous failures surface here (and are cleared).
  int wrc = mxc_wait_all();
  return rc != MXC_OK ? rc : wrc;
}

TEST(SparseFaults, EveryAllocationFails) {
  int failures = mxct::alloc_failure_walk(scenario, 10);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
