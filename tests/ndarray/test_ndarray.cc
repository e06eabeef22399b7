// NDArray through the public C API: creation, properties, views, copies,
// waits. Runs under both engines (see BUILD).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

std::string err() { return mxc_last_error(); }

mxc_ndarray make(std::vector<int64_t> shape, int dtype = MXC_DTYPE_FLOAT32,
                 int delay = 0) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dtype,
                               MXC_DEVICE_CPU, 0, delay, &a),
            MXC_OK)
      << err();
  return a;
}

std::vector<float> iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

std::vector<float> read(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<float> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * 4), MXC_OK)
      << err();
  return v;
}

TEST(NDArray, CreateAndProperties) {
  mxc_ndarray a = make({2, 3, 4}, MXC_DTYPE_FLOAT64);
  int ndim = -1;
  const int64_t *shape = nullptr;
  ASSERT_EQ(mxc_ndarray_shape(a, &ndim, &shape), MXC_OK);
  ASSERT_EQ(ndim, 3);
  EXPECT_EQ(shape[0], 2);
  EXPECT_EQ(shape[1], 3);
  EXPECT_EQ(shape[2], 4);
  int64_t size;
  ASSERT_EQ(mxc_ndarray_size(a, &size), MXC_OK);
  EXPECT_EQ(size, 24);
  int dt, st, devt, devi;
  ASSERT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK);
  EXPECT_EQ(dt, MXC_DTYPE_FLOAT64);
  ASSERT_EQ(mxc_ndarray_stype(a, &st), MXC_OK);
  EXPECT_EQ(st, MXC_STYPE_DEFAULT);
  ASSERT_EQ(mxc_ndarray_device(a, &devt, &devi), MXC_OK);
  EXPECT_EQ(devt, MXC_DEVICE_CPU);
  EXPECT_EQ(devi, 0);
  mxc_ndarray_free(a);
}

TEST(NDArray, EveryDtypeRoundTrips) {
  const int dtypes[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64,
                        MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16,
                        MXC_DTYPE_INT8,    MXC_DTYPE_UINT8,
                        MXC_DTYPE_INT32,   MXC_DTYPE_INT64,
                        MXC_DTYPE_BOOL};
  for (int dt : dtypes) {
    int es = mxc_dtype_size(dt);
    ASSERT_GT(es, 0);
    mxc_ndarray a = make({5, 7}, dt);
    std::vector<unsigned char> in(35 * es), out(35 * es, 0);
    for (size_t i = 0; i < in.size(); ++i) in[i] = (unsigned char)(i * 31 + dt);
    ASSERT_EQ(mxc_ndarray_copy_from_host(a, in.data(), in.size()), MXC_OK);
    ASSERT_EQ(mxc_ndarray_copy_to_host(a, out.data(), out.size()), MXC_OK);
    EXPECT_EQ(in, out) << mxc_dtype_name(dt);
    mxc_ndarray_free(a);
  }
}

TEST(NDArray, ScalarAndZeroSize) {
  mxc_ndarray s = make({});
  int64_t n;
  ASSERT_EQ(mxc_ndarray_size(s, &n), MXC_OK);
  EXPECT_EQ(n, 1);
  float v = 3.5f, w = 0;
  ASSERT_EQ(mxc_ndarray_copy_from_host(s, &v, 4), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy_to_host(s, &w, 4), MXC_OK);
  EXPECT_EQ(w, 3.5f);
  mxc_ndarray z = make({3, 0, 2});
  ASSERT_EQ(mxc_ndarray_size(z, &n), MXC_OK);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(mxc_ndarray_copy_from_host(z, nullptr, 0), MXC_OK) << err();
  EXPECT_EQ(mxc_ndarray_copy_to_host(z, nullptr, 0), MXC_OK) << err();
  mxc_ndarray zs;
  ASSERT_EQ(mxc_ndarray_slice(z, 1, 3, &zs), MXC_OK);
  mxc_ndarray_free(zs);
  mxc_ndarray_free(z);
  mxc_ndarray_free(s);
}

TEST(NDArray, DelayedAllocation) {
  int64_t before = 0, after = 0;
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_ALLOC_COUNT,
                             &before),
            MXC_OK);
  mxc_ndarray a = make({1000}, MXC_DTYPE_FLOAT32, /*delay=*/1);
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_ALLOC_COUNT,
                             &after),
            MXC_OK);
  EXPECT_EQ(after, before);  // nothing allocated yet
  auto in = iota(1000);
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in.data(), 4000), MXC_OK);
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_ALLOC_COUNT,
                             &after),
            MXC_OK);
  EXPECT_EQ(after, before + 1);
  EXPECT_EQ(read(a), in);
  mxc_ndarray_free(a);
}

TEST(NDArray, SliceAtReshapeShareStorage) {
  mxc_ndarray a = make({4, 3});
  auto in = iota(12);
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in.data(), 48), MXC_OK);

  mxc_ndarray s;
  ASSERT_EQ(mxc_ndarray_slice(a, 1, 3, &s), MXC_OK) << err();
  EXPECT_EQ(read(s), std::vector<float>(in.begin() + 3, in.begin() + 9));

  mxc_ndarray row;
  ASSERT_EQ(mxc_ndarray_at(s, 1, &row), MXC_OK);  // row 2 of a
  int ndim;
  const int64_t *shape;
  ASSERT_EQ(mxc_ndarray_shape(row, &ndim, &shape), MXC_OK);
  ASSERT_EQ(ndim, 1);
  EXPECT_EQ(shape[0], 3);
  EXPECT_EQ(read(row), std::vector<float>({6, 7, 8}));

  int64_t rs[2] = {-1, 6};
  mxc_ndarray r;
  ASSERT_EQ(mxc_ndarray_reshape(a, rs, 2, &r), MXC_OK) << err();
  ASSERT_EQ(mxc_ndarray_shape(r, &ndim, &shape), MXC_OK);
  EXPECT_EQ(shape[0], 2);
  EXPECT_EQ(shape[1], 6);

  // Writing through a view is visible in the base and the other views.
  float w[3] = {-1, -2, -3};
  ASSERT_EQ(mxc_ndarray_copy_from_host(row, w, 12), MXC_OK);
  auto all = read(a);
  EXPECT_EQ(all[6], -1);
  EXPECT_EQ(all[8], -3);
  EXPECT_EQ(read(r)[6], -1);

  // Freeing the base keeps the storage alive for the views.
  mxc_ndarray_free(a);
  EXPECT_EQ(read(row), std::vector<float>({-1, -2, -3}));
  mxc_ndarray_free(s);
  mxc_ndarray_free(r);
  mxc_ndarray_free(row);
}

TEST(NDArray, ViewErrors) {
  mxc_ndarray a = make({4, 3});
  mxc_ndarray v = (mxc_ndarray)0x1;
  EXPECT_EQ(mxc_ndarray_slice(a, 3, 2, &v), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("[3, 2)"), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_slice(a, 0, 5, &v), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_ndarray_slice(a, -1, 2, &v), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_ndarray_at(a, 4, &v), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("index 4"), std::string::npos) << err();
  int64_t bad[2] = {5, 5};
  EXPECT_EQ(mxc_ndarray_reshape(a, bad, 2, &v), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("25 elements"), std::string::npos) << err();
  int64_t two_inferred[2] = {-1, -1};
  EXPECT_EQ(mxc_ndarray_reshape(a, two_inferred, 2, &v), MXC_ERR_SHAPE);
  int64_t nodiv[2] = {-1, 5};
  EXPECT_EQ(mxc_ndarray_reshape(a, nodiv, 2, &v), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_ndarray_reshape(a, nullptr, 2, &v), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v, (mxc_ndarray)0x1);  // untouched on failure
  mxc_ndarray s = make({});
  EXPECT_EQ(mxc_ndarray_at(s, 0, &v), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("scalar"), std::string::npos);
  mxc_ndarray_free(s);
  mxc_ndarray_free(a);
}

TEST(NDArray, AsyncCopyBetweenArrays) {
  mxc_ndarray a = make({100});
  mxc_ndarray b = make({100});
  mxc_ndarray c = make({100});
  auto in = iota(100, 5);
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in.data(), 400), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy(a, b), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy(b, c), MXC_OK);
  mxc_ndarray_free(a);  // pending work keeps a's storage alive
  mxc_ndarray_free(b);
  EXPECT_EQ(read(c), in);
  mxc_ndarray_free(c);
}

TEST(NDArray, CopyWithinOneChunkOverlapping) {
  mxc_ndarray a = make({6});
  auto in = iota(6);
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in.data(), 24), MXC_OK);
  mxc_ndarray lo, hi;
  ASSERT_EQ(mxc_ndarray_slice(a, 0, 4, &lo), MXC_OK);
  ASSERT_EQ(mxc_ndarray_slice(a, 2, 6, &hi), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy(lo, hi), MXC_OK);
  EXPECT_EQ(read(a), std::vector<float>({0, 1, 0, 1, 2, 3}));
  mxc_ndarray_free(lo);
  mxc_ndarray_free(hi);
  mxc_ndarray_free(a);
}

TEST(NDArray, CopyMismatchErrors) {
  mxc_ndarray a = make({4});
  mxc_ndarray b = make({5});
  mxc_ndarray c = make({4}, MXC_DTYPE_INT32);
  EXPECT_EQ(mxc_ndarray_copy(a, b), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(4)"), std::string::npos) << err();
  EXPECT_NE(err().find("(5)"), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_copy(a, c), MXC_ERR_DTYPE);
  EXPECT_NE(err().find("int32"), std::string::npos) << err();
  float buf[5];
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, buf, 20), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("16 bytes"), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, buf, 8), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, nullptr, 16),
            MXC_ERR_INVALID_ARGUMENT);
  // Writing into a view of the wrong size.
  mxc_ndarray v;
  ASSERT_EQ(mxc_ndarray_slice(a, 0, 2, &v), MXC_OK);
  EXPECT_EQ(mxc_ndarray_copy_from_host(v, buf, 16), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("8 bytes"), std::string::npos) << err();
  mxc_ndarray_free(v);
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
  mxc_ndarray_free(c);
}

TEST(NDArray, WaitsSucceedOnHealthyArrays) {
  mxc_ndarray a = make({8});
  mxc_ndarray b = make({8});
  auto in = iota(8);
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in.data(), 32), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy(a, b), MXC_OK);
  EXPECT_EQ(mxc_ndarray_wait_to_read(b), MXC_OK);
  EXPECT_EQ(mxc_ndarray_wait_to_write(a), MXC_OK);
  EXPECT_EQ(mxc_wait_all(), MXC_OK);
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
}

}  // namespace
