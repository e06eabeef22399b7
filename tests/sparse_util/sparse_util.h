// Test helpers for sparse operators, through the public API only. The
// sparse structures are built here by naive loops from dense values, so a
// test compares an operator against an independent dense reference.
#ifndef MXC_TESTS_SPARSE_UTIL_SPARSE_UTIL_H_
#define MXC_TESTS_SPARSE_UTIL_SPARSE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace sparse_test {

// Owns one array handle (frees it on destruction).
class Arr {
 public:
  Arr() = default;
  explicit Arr(mxc_ndarray h) : h_(h) {}
  Arr(const Arr &) = delete;
  Arr &operator=(const Arr &) = delete;
  Arr(Arr &&o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Arr &operator=(Arr &&o) noexcept;
  ~Arr();
  mxc_ndarray get() const { return h_; }
  mxc_ndarray *out() { return &h_; }  // for out-parameters (must be empty)
  mxc_ndarray release();

 private:
  mxc_ndarray h_ = nullptr;
};

// Row-major values with a shape; `v` holds them as doubles.
struct Dense {
  std::vector<int64_t> shape;
  std::vector<double> v;
  int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  int64_t row_len() const;
  int64_t size() const;
};

// A matrix (or rows x ... tensor) where each element is nonzero with
// probability `density` (values in [-2, 2] \ {0}, multiples of 1/8 so
// float32 sums of few terms are exact); `empty_rows` rows forced to zero.
Dense random_sparse(std::vector<int64_t> shape, double density,
                    unsigned seed, int empty_rows = 0);
// Every element drawn uniformly in [lo, hi).
Dense random_dense(std::vector<int64_t> shape, unsigned seed,
                   double lo = -1.0, double hi = 1.0);

// Arrays from values, of the given dtype (float32/float64/int32/int64).
// CSR needs a 2-D shape; row_sparse stores the rows with any nonzero.
// ASSERT-style failures are reported through gtest (ADD_FAILURE) and give
// an empty Arr.
Arr make_dense(const Dense &d, int dtype = MXC_DTYPE_FLOAT32);
Arr make_csr(const Dense &d, int dtype = MXC_DTYPE_FLOAT32,
             int index_dtype = MXC_DTYPE_INT64);
Arr make_row_sparse(const Dense &d, int dtype = MXC_DTYPE_FLOAT32,
                    int index_dtype = MXC_DTYPE_INT64);
// By storage type (MXC_STYPE_*).
Arr make(const Dense &d, int stype, int dtype = MXC_DTYPE_FLOAT32);

// Raw element bytes of values in a dtype (float32/float64/int32/int64),
// exactly size * dtype size long; data() is never NULL. unpack_values
// reads them back.
std::vector<char> pack_values(const std::vector<double> &v, int dtype);
std::vector<double> unpack_values(const std::vector<char> &b, int dtype);

// Values of any array (dense or sparse, waits), shape included.
Dense read(mxc_ndarray a);
int stype_of(mxc_ndarray a);
int64_t nnz_of(mxc_ndarray a);  // stored entries (sparse only)

// Calls an operator by name with string parameters. outs: existing
// handles (written) or empty Arrs (receive new arrays). reqs may be empty
// (all write). Returns the mxc status; on failure mxc_last_error() holds
// the message.
int invoke(const std::string &op,
           const std::vector<std::pair<std::string, std::string>> &params,
           const std::vector<mxc_ndarray> &ins, std::vector<Arr> *outs,
           int n_out = 1, const std::vector<int> &reqs = {});

// Max |a - b| relative to max(1, |b|) over all elements; shapes must match
// (a mismatch adds a gtest failure and returns +inf).
double max_rel_err(const Dense &a, const Dense &b);

}  // namespace sparse_test

#endif  // MXC_TESTS_SPARSE_UTIL_SPARSE_UTIL_H_
