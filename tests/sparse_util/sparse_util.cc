#include "tests/sparse_util/sparse_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace sparse_test {

Arr &Arr::operator=(Arr &&o) noexcept {
  if (this != &o) {
    mxc_ndarray_free(h_);
    h_ = o.h_;
    o.h_ = nullptr;
  }
  return *this;
}

Arr::~Arr() { mxc_ndarray_free(h_); }

mxc_ndarray Arr::release() {
  mxc_ndarray h = h_;
  h_ = nullptr;
  return h;
}

int64_t Dense::row_len() const {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

int64_t Dense::size() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Dense random_sparse(std::vector<int64_t> shape, double density,
                    unsigned seed, int empty_rows) {
  Dense d{shape, {}};
  d.v.assign((size_t)d.size(), 0.0);
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> q(1, 16);
  for (double &x : d.v) {
    if (u(g) < density) x = (u(g) < 0.5 ? -1 : 1) * q(g) / 8.0;
  }
  std::uniform_int_distribution<int64_t> r(0, d.rows() - 1);
  for (int k = 0; k < empty_rows && d.rows() > 0; ++k) {
    int64_t row = r(g);
    for (int64_t j = 0; j < d.row_len(); ++j) d.v[row * d.row_len() + j] = 0;
  }
  return d;
}

Dense random_dense(std::vector<int64_t> shape, unsigned seed, double lo,
                   double hi) {
  Dense d{shape, {}};
  d.v.resize((size_t)d.size());
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (double &x : d.v) x = u(g);
  return d;
}

namespace {

size_t esize(int dtype) { return (size_t)mxc_dtype_size(dtype); }

void put(char *p, int dtype, double x) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: { float f = (float)x; memcpy(p, &f, 4); break; }
    case MXC_DTYPE_FLOAT64: memcpy(p, &x, 8); break;
    case MXC_DTYPE_INT32: { int32_t i = (int32_t)x; memcpy(p, &i, 4); break; }
    case MXC_DTYPE_INT64: { int64_t i = (int64_t)x; memcpy(p, &i, 8); break; }
    default: ADD_FAILURE() << "sparse_util: unsupported dtype " << dtype;
  }
}

double get(const char *p, int dtype) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
    case MXC_DTYPE_FLOAT64: { double f; memcpy(&f, p, 8); return f; }
    case MXC_DTYPE_INT32: { int32_t i; memcpy(&i, p, 4); return i; }
    case MXC_DTYPE_INT64: { int64_t i; memcpy(&i, p, 8); return (double)i; }
    default: ADD_FAILURE() << "sparse_util: unsupported dtype " << dtype;
  }
  return 0;
}

}  // namespace

std::vector<char> pack_values(const std::vector<double> &v, int dtype) {
  std::vector<char> b;
  // One spare byte of capacity: data() is then non-null even for no
  // values (some API calls refuse a NULL buffer).
  b.reserve(v.size() * esize(dtype) + 1);
  b.resize(v.size() * esize(dtype));
  for (size_t i = 0; i < v.size(); ++i) put(&b[i * esize(dtype)], dtype, v[i]);
  return b;
}

std::vector<double> unpack_values(const std::vector<char> &b, int dtype) {
  std::vector<double> v(b.size() / esize(dtype));
  for (size_t i = 0; i < v.size(); ++i) v[i] = get(&b[i * esize(dtype)], dtype);
  return v;
}

Arr make_dense(const Dense &d, int dtype) {
  Arr a;
  if (mxc_ndarray_create(d.shape.data(), (int)d.shape.size(), dtype,
                         MXC_DEVICE_CPU, 0, 0, a.out()) != MXC_OK) {
    ADD_FAILURE() << "make_dense: " << mxc_last_error();
    return Arr();
  }
  std::vector<char> b = pack_values(d.v, dtype);
  if (mxc_ndarray_copy_from_host(a.get(), b.data(),
                                 d.v.size() * esize(dtype)) != MXC_OK) {
    ADD_FAILURE() << "make_dense copy: " << mxc_last_error();
    return Arr();
  }
  return a;
}

Arr make_csr(const Dense &d, int dtype, int index_dtype) {
  if (d.shape.size() != 2) {
    ADD_FAILURE() << "make_csr needs a 2-d shape";
    return Arr();
  }
  std::vector<double> vals, indptr{0}, idx;
  for (int64_t i = 0; i < d.shape[0]; ++i) {
    for (int64_t j = 0; j < d.shape[1]; ++j) {
      double x = d.v[(size_t)(i * d.shape[1] + j)];
      if (x != 0) {
        vals.push_back(x);
        idx.push_back((double)j);
      }
    }
    indptr.push_back((double)vals.size());
  }
  std::vector<char> bv = pack_values(vals, dtype), bp = pack_values(indptr, index_dtype),
                    bi = pack_values(idx, index_dtype);
  Arr a;
  if (mxc_ndarray_create_csr(d.shape.data(), dtype, index_dtype, bv.data(),
                             bp.data(), bi.data(), (int64_t)vals.size(),
                             MXC_DEVICE_CPU, 0, a.out()) != MXC_OK) {
    ADD_FAILURE() << "make_csr: " << mxc_last_error();
    return Arr();
  }
  return a;
}

Arr make_row_sparse(const Dense &d, int dtype, int index_dtype) {
  std::vector<double> vals, rows;
  int64_t rl = d.row_len();
  for (int64_t i = 0; i < d.rows(); ++i) {
    bool any = false;
    for (int64_t j = 0; j < rl; ++j) any |= d.v[(size_t)(i * rl + j)] != 0;
    if (!any) continue;
    rows.push_back((double)i);
    vals.insert(vals.end(), d.v.begin() + i * rl, d.v.begin() + (i + 1) * rl);
  }
  std::vector<char> bv = pack_values(vals, dtype), br = pack_values(rows, index_dtype);
  Arr a;
  if (mxc_ndarray_create_row_sparse(d.shape.data(), (int)d.shape.size(), dtype,
                                    index_dtype, bv.data(), br.data(),
                                    (int64_t)rows.size(), MXC_DEVICE_CPU, 0,
                                    a.out()) != MXC_OK) {
    ADD_FAILURE() << "make_row_sparse: " << mxc_last_error();
    return Arr();
  }
  return a;
}

Arr make(const Dense &d, int stype, int dtype) {
  if (stype == MXC_STYPE_CSR) return make_csr(d, dtype);
  if (stype == MXC_STYPE_ROW_SPARSE) return make_row_sparse(d, dtype);
  return make_dense(d, dtype);
}

int stype_of(mxc_ndarray a) {
  int st = -1;
  EXPECT_EQ(mxc_ndarray_stype(a, &st), MXC_OK) << mxc_last_error();
  return st;
}

int64_t nnz_of(mxc_ndarray a) {
  int64_t n = -1;
  EXPECT_EQ(mxc_ndarray_nnz(a, &n), MXC_OK) << mxc_last_error();
  return n;
}

Dense read(mxc_ndarray a) {
  Dense d;
  int ndim = 0, dtype = 0;
  const int64_t *shape = nullptr;
  if (mxc_ndarray_shape(a, &ndim, &shape) != MXC_OK ||
      mxc_ndarray_dtype(a, &dtype) != MXC_OK) {
    ADD_FAILURE() << "read: " << mxc_last_error();
    return d;
  }
  d.shape.assign(shape, shape + ndim);
  Arr dense;
  mxc_ndarray src = a;
  if (stype_of(a) != MXC_STYPE_DEFAULT) {
    if (mxc_ndarray_cast_storage(a, MXC_STYPE_DEFAULT, dense.out()) !=
        MXC_OK) {
      ADD_FAILURE() << "read cast: " << mxc_last_error();
      return d;
    }
    src = dense.get();
  }
  std::vector<char> b((size_t)d.size() * esize(dtype) + 1);
  if (mxc_ndarray_copy_to_host(src, b.data(),
                               (size_t)d.size() * esize(dtype)) != MXC_OK) {
    ADD_FAILURE() << "read copy: " << mxc_last_error();
    return d;
  }
  b.resize((size_t)d.size() * esize(dtype));
  d.v = unpack_values(b, dtype);
  return d;
}

int invoke(const std::string &op,
           const std::vector<std::pair<std::string, std::string>> &params,
           const std::vector<mxc_ndarray> &ins, std::vector<Arr> *outs,
           int n_out, const std::vector<int> &reqs) {
  mxc_op h = nullptr;
  int rc = mxc_op_find(op.c_str(), &h);
  if (rc != MXC_OK) return rc;
  std::vector<const char *> k, v;
  for (const auto &p : params) {
    k.push_back(p.first.c_str());
    v.push_back(p.second.c_str());
  }
  outs->resize((size_t)n_out);
  std::vector<mxc_ndarray> o((size_t)n_out);
  for (int i = 0; i < n_out; ++i) o[(size_t)i] = (*outs)[(size_t)i].get();
  rc = mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), ins.data(),
                     (int)ins.size(), o.data(), n_out,
                     reqs.empty() ? nullptr : reqs.data());
  if (rc != MXC_OK) return rc;
  for (int i = 0; i < n_out; ++i) {
    if (!(*outs)[(size_t)i].get()) *(*outs)[(size_t)i].out() = o[(size_t)i];
  }
  return MXC_OK;
}

double max_rel_err(const Dense &a, const Dense &b) {
  if (a.shape != b.shape || a.v.size() != b.v.size()) {
    ADD_FAILURE() << "max_rel_err: shapes differ";
    return std::numeric_limits<double>::infinity();
  }
  double m = 0;
  for (size_t i = 0; i < a.v.size(); ++i) {
    double e = std::fabs(a.v[i] - b.v[i]) / std::max(1.0, std::fabs(b.v[i]));
    if (std::isnan(a.v[i]) != std::isnan(b.v[i])) e = INFINITY;
    if (e > m) m = e;
  }
  return m;
}

}  // namespace sparse_test
