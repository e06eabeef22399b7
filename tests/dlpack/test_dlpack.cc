// DLPack export/import: zero-copy in both directions, the deleter
// contract, dtype mapping, and rejection of what cannot be imported.
#include <gtest/gtest.h>

#include <dlpack/dlpack.h>

#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

std::string err() { return mxc_last_error(); }

TEST(DLPack, ExportIsZeroCopyAndOutlivesTheHandle) {
  int64_t shape[2] = {3, 4};
  mxc_ndarray a;
  ASSERT_EQ(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                               0, &a),
            MXC_OK);
  std::vector<float> in(12);
  for (int i = 0; i < 12; ++i) in[i] = (float)i * 1.5f;
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in.data(), 48), MXC_OK);
  DLManagedTensor *t = nullptr;
  ASSERT_EQ(mxc_ndarray_to_dlpack(a, &t), MXC_OK) << err();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[0], 3);
  EXPECT_EQ(t->dl_tensor.shape[1], 4);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(t->dl_tensor.dtype.lanes, 1);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(t->dl_tensor.strides, nullptr);
  float *data = (float *)((char *)t->dl_tensor.data + t->dl_tensor.byte_offset);
  EXPECT_EQ(std::vector<float>(data, data + 12), in);
  // Zero copy: a write through mxc shows in the exported memory.
  float nine[12];
  for (float &x : nine) x = 9;
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, nine, 48), MXC_OK);
  EXPECT_EQ(data[5], 9.0f);
  mxc_ndarray_free(a);
  EXPECT_EQ(data[11], 9.0f);  // still alive (ASan checks this)
  t->deleter(t);
}

TEST(DLPack, ExportOfAView) {
  int64_t shape[2] = {4, 2};
  mxc_ndarray a, v;
  ASSERT_EQ(mxc_ndarray_create(shape, 2, MXC_DTYPE_INT32, MXC_DEVICE_CPU, 0,
                               0, &a),
            MXC_OK);
  int32_t in[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in, 32), MXC_OK);
  ASSERT_EQ(mxc_ndarray_slice(a, 2, 4, &v), MXC_OK);
  DLManagedTensor *t;
  ASSERT_EQ(mxc_ndarray_to_dlpack(v, &t), MXC_OK);
  const int32_t *d =
      (const int32_t *)((char *)t->dl_tensor.data + t->dl_tensor.byte_offset);
  EXPECT_EQ(t->dl_tensor.shape[0], 2);
  EXPECT_EQ(d[0], 4);
  EXPECT_EQ(d[3], 7);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLInt);
  mxc_ndarray_free(a);
  mxc_ndarray_free(v);
  t->deleter(t);
}

// A producer-side tensor owned by the test, with a counting deleter.
struct Foreign {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::vector<double> data;
  int *deleted;
};

void foreign_deleter(DLManagedTensor *self) {
  auto *f = (Foreign *)self->manager_ctx;
  ++*f->deleted;
  delete f;
}

Foreign *make_foreign(std::vector<int64_t> shape, int *deleted) {
  auto *f = new Foreign;
  f->shape = shape;
  size_t n = 1;
  for (auto d : shape) n *= (size_t)d;
  f->data.resize(n);
  for (size_t i = 0; i < n; ++i) f->data[i] = (double)i - 0.25;
  f->deleted = deleted;
  memset(&f->managed, 0, sizeof f->managed);
  DLTensor &t = f->managed.dl_tensor;
  t.data = f->data.data();
  t.device = {kDLCPU, 0};
  t.ndim = (int)shape.size();
  t.dtype = {kDLFloat, 64, 1};
  t.shape = f->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  f->managed.manager_ctx = f;
  f->managed.deleter = foreign_deleter;
  return f;
}

TEST(DLPack, ImportIsZeroCopyAndCallsTheDeleterOnce) {
  int deleted = 0;
  Foreign *f = make_foreign({2, 3}, &deleted);
  mxc_ndarray a, v;
  ASSERT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_OK) << err();
  int dt;
  ASSERT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK);
  EXPECT_EQ(dt, MXC_DTYPE_FLOAT64);
  double out[6];
  ASSERT_EQ(mxc_ndarray_copy_to_host(a, out, 48), MXC_OK);
  EXPECT_EQ(out[4], 3.75);
  // Zero copy: mxc writes land in the producer's memory.
  double w[3] = {7, 8, 9};
  ASSERT_EQ(mxc_ndarray_at(a, 1, &v), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy_from_host(v, w, 24), MXC_OK);
  EXPECT_EQ(f->data[3], 7.0);
  mxc_ndarray_free(a);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(deleted, 0);  // the view still holds it
  mxc_ndarray_free(v);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);  // deletion is ordered after work
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, RoundTripThroughDLPack) {
  int64_t shape[1] = {5};
  mxc_ndarray a, b;
  ASSERT_EQ(mxc_ndarray_create(shape, 1, MXC_DTYPE_BFLOAT16, MXC_DEVICE_CPU, 0,
                               0, &a),
            MXC_OK);
  uint16_t in[5] = {0x3f80, 0x4000, 0x4040, 0x4080, 0xbf80};
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, in, 10), MXC_OK);
  DLManagedTensor *t;
  ASSERT_EQ(mxc_ndarray_to_dlpack(a, &t), MXC_OK);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLBfloat);
  ASSERT_EQ(mxc_ndarray_from_dlpack(t, &b), MXC_OK) << err();
  int dt;
  mxc_ndarray_dtype(b, &dt);
  EXPECT_EQ(dt, MXC_DTYPE_BFLOAT16);
  uint16_t out[5];
  mxc_ndarray_free(a);
  ASSERT_EQ(mxc_ndarray_copy_to_host(b, out, 10), MXC_OK);
  EXPECT_EQ(memcmp(in, out, 10), 0);
  mxc_ndarray_free(b);  // releases t, which releases a's storage
}

TEST(DLPack, RejectsWhatItCannotImportAndKeepsOwnershipWithCaller) {
  int deleted = 0;
  Foreign *f = make_foreign({2, 3}, &deleted);
  mxc_ndarray a = (mxc_ndarray)0x5;
  // Non-compact strides.
  f->strides = {1, 2};
  f->managed.dl_tensor.strides = f->strides.data();
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("stride"), std::string::npos) << err();
  // Compact strides given explicitly are fine.
  f->strides = {3, 1};
  f->managed.dl_tensor.strides = f->strides.data();
  f->managed.dl_tensor.device.device_type = kDLOpenCL;
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("device type 4 is not supported"), std::string::npos)
      << err();
  // A CUDA tensor without a usable GPU (no plug-in here): the reason.
  f->managed.dl_tensor.device.device_type = kDLCUDA;
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("gpu(0)"), std::string::npos) << err();
  f->managed.dl_tensor.device.device_type = kDLCPU;
  f->managed.dl_tensor.dtype = {kDLFloat, 64, 4};
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_ERR_DTYPE);
  EXPECT_NE(err().find("lanes 4"), std::string::npos) << err();
  f->managed.dl_tensor.dtype = {kDLComplex, 64, 1};
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_ERR_DTYPE);
  f->managed.dl_tensor.dtype = {kDLFloat, 64, 1};
  f->shape[1] = -3;
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_ERR_SHAPE);
  f->shape[1] = 3;
  f->managed.dl_tensor.ndim = 12;
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_ERR_SHAPE);
  f->managed.dl_tensor.ndim = 2;
  // The first element must be addressable and aligned for the dtype: an
  // offset that wraps the pointer (found by tests/fuzz:fuzz_dlpack), one
  // that misaligns float64 loads, NULL data for a non-empty tensor.
  f->managed.dl_tensor.byte_offset = UINT64_MAX - 7;
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("overflows"), std::string::npos) << err();
  f->managed.dl_tensor.byte_offset = 4;
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("not aligned"), std::string::npos) << err();
  f->managed.dl_tensor.byte_offset = 0;
  f->managed.dl_tensor.data = nullptr;
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("data is NULL"), std::string::npos) << err();
  f->managed.dl_tensor.data = f->data.data();
  EXPECT_EQ(mxc_ndarray_from_dlpack(nullptr, &a), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_from_dlpack(&f->managed, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, (mxc_ndarray)0x5);
  EXPECT_EQ(deleted, 0);  // never called on failure
  // Still importable after all that.
  ASSERT_EQ(mxc_ndarray_from_dlpack(&f->managed, &a), MXC_OK) << err();
  mxc_ndarray_free(a);
  mxc_wait_all();
  EXPECT_EQ(deleted, 1);
  DLManagedTensor *t = nullptr;
  EXPECT_EQ(mxc_ndarray_to_dlpack(nullptr, &t), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
}

}  // namespace
