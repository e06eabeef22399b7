// Helpers of the row_sparse optimizer and Embedding tests: raw bytes of
// dense arrays (for bit-identity checks) and row_sparse arrays with chosen
// stored rows (including all-zero ones, which make_row_sparse drops).
#ifndef MXC_TESTS_SPARSE_OPTIM_OPTIM_UTIL_H_
#define MXC_TESTS_SPARSE_OPTIM_OPTIM_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "mxc/mxc.h"
#include "tests/sparse_util/sparse_util.h"

namespace optim_test {

using sparse_test::Arr;
using sparse_test::Dense;

inline size_t esize(int dtype) { return (size_t)mxc_dtype_size(dtype); }

// The bytes of a dense array (waits for pending writes).
inline std::vector<char> raw(mxc_ndarray a, size_t nbytes) {
  std::vector<char> b(nbytes + 1);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, b.data(), nbytes), MXC_OK)
      << mxc_last_error();
  b.resize(nbytes);
  return b;
}

// Bytes of row r (row_bytes each) of a raw buffer.
inline std::vector<char> row_of(const std::vector<char> &b, int64_t r,
                                size_t row_bytes) {
  return std::vector<char>(b.begin() + (ptrdiff_t)(r * row_bytes),
                           b.begin() + (ptrdiff_t)((r + 1) * row_bytes));
}

// A row_sparse array of shape `shape` storing exactly `rows` (as given:
// tests pass them increasing unless they test malformed input), row k
// holding d.v[k * row_len ...] where d is the dense (nnz, ...) block.
inline Arr make_rsp_rows(const std::vector<int64_t> &shape,
                         const std::vector<int64_t> &rows,
                         const std::vector<double> &vals, int dtype,
                         int index_dtype = MXC_DTYPE_INT64) {
  std::vector<double> r(rows.begin(), rows.end());
  std::vector<char> bv = sparse_test::pack_values(vals, dtype),
                    br = sparse_test::pack_values(r, index_dtype);
  Arr a;
  EXPECT_EQ(mxc_ndarray_create_row_sparse(
                shape.data(), (int)shape.size(), dtype, index_dtype,
                bv.data(), br.data(), (int64_t)rows.size(), MXC_DEVICE_CPU, 0,
                a.out()),
            MXC_OK)
      << mxc_last_error();
  return a;
}

// The dense equivalent of make_rsp_rows (zeros elsewhere).
inline Dense dense_of_rows(const std::vector<int64_t> &shape,
                           const std::vector<int64_t> &rows,
                           const std::vector<double> &vals) {
  Dense d{shape, {}};
  d.v.assign((size_t)d.size(), 0.0);
  int64_t rl = d.row_len();
  for (size_t k = 0; k < rows.size(); ++k) {
    for (int64_t j = 0; j < rl; ++j) {
      d.v[(size_t)(rows[k] * rl + j)] = vals[k * (size_t)rl + (size_t)j];
    }
  }
  return d;
}

// An empty row_sparse array (to be written by an operator).
inline Arr empty_rsp(const std::vector<int64_t> &shape, int dtype) {
  return make_rsp_rows(shape, {}, {}, dtype);
}

}  // namespace optim_test

#endif  // MXC_TESTS_SPARSE_OPTIM_OPTIM_UTIL_H_
