// The helpers themselves: built arrays read back to the values they came
// from, in every storage type.
#include <gtest/gtest.h>

#include "tests/sparse_util/sparse_util.h"

using namespace sparse_test;

TEST(SparseUtil, RoundTripsEveryStorageType) {
  Dense d = random_sparse({7, 5}, 0.3, 1, 2);
  for (int st : {MXC_STYPE_DEFAULT, MXC_STYPE_CSR, MXC_STYPE_ROW_SPARSE}) {
    Arr a = make(d, st, MXC_DTYPE_FLOAT64);
    ASSERT_TRUE(a.get());
    EXPECT_EQ(stype_of(a.get()), st);
    EXPECT_EQ(max_rel_err(read(a.get()), d), 0.0);
  }
  std::vector<Arr> outs;
  Arr x = make_dense(d);
  ASSERT_EQ(invoke("_mul_scalar", {{"scalar", "2"}}, {x.get()}, &outs),
            MXC_OK) << mxc_last_error();
  Dense twice = d;
  for (double &v : twice.v) v *= 2;
  EXPECT_EQ(max_rel_err(read(outs[0].get()), twice), 0.0);
}
