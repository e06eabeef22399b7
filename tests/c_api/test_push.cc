// User functions pushed through the C API, and asynchronous error
// propagation end to end: a failing function's error reaches the waits of
// everything downstream, naming it, and the library keeps working.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"

namespace {

std::string err() { return mxc_last_error(); }

mxc_ndarray make(int64_t n, float fill) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                               &a),
            MXC_OK);
  std::vector<float> v((size_t)n, fill);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK);
  return a;
}

std::vector<float> read(mxc_ndarray a) {
  int64_t n;
  mxc_ndarray_size(a, &n);
  std::vector<float> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * 4), MXC_OK)
      << err();
  return v;
}

// out[i] = in0[i] * k + in1[i]
struct Axpy {
  float k;
  std::atomic<int> *freed;
};

int axpy(void *ud, mxc_opctx ctx) {
  auto *p = (Axpy *)ud;
  void *x, *y, *o;
  size_t nx, ny, no;
  if (mxc_opctx_data(ctx, 0, &x, &nx) || mxc_opctx_data(ctx, 1, &y, &ny) ||
      mxc_opctx_data(ctx, 2, &o, &no))
    return MXC_ERR_INTERNAL;
  if (nx != ny || nx != no) return MXC_ERR_SHAPE;
  for (size_t i = 0; i < nx / 4; ++i)
    ((float *)o)[i] = ((float *)x)[i] * p->k + ((float *)y)[i];
  return MXC_OK;
}

void free_axpy(void *ud) {
  auto *p = (Axpy *)ud;
  p->freed->fetch_add(1);
  delete p;
}

TEST(Push, SyncFunctionComputesAndFrees) {
  mxc_ndarray x = make(10, 2), y = make(10, 1), o = make(10, 0);
  std::atomic<int> freed{0};
  mxc_ndarray reads[2] = {x, y};
  ASSERT_EQ(mxc_engine_push(axpy, new Axpy{3, &freed}, free_axpy, reads, 2,
                            &o, 1, 0, "axpy"),
            MXC_OK)
      << err();
  // Handles may go right away; storage lives until the function ran.
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  EXPECT_EQ(read(o), std::vector<float>(10, 7));
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(freed.load(), 1);
  mxc_ndarray_free(o);
}

int fail_fn(void *, mxc_opctx ctx) {
  mxc_opctx_set_error(ctx, "the sky fell");
  return MXC_ERR_INVALID_ARGUMENT;
}

int never_runs(void *ud, mxc_opctx) {
  ((std::atomic<int> *)ud)->fetch_add(1);
  return MXC_OK;
}

TEST(Push, FailurePropagatesToWaitsNamingTheOperator) {
  mxc_ndarray a = make(4, 1), b = make(4, 0), c = make(4, 0);
  ASSERT_EQ(mxc_engine_push(fail_fn, nullptr, nullptr, &a, 1, &b, 1, 0,
                            "my_broken_op"),
            MXC_OK);
  // Downstream work: copy b -> c is skipped and inherits the failure.
  ASSERT_EQ(mxc_ndarray_copy(b, c), MXC_OK);
  std::atomic<int> ran{0};
  ASSERT_EQ(mxc_engine_push(never_runs, &ran, nullptr, &c, 1, nullptr, 0, 0,
                            "reader"),
            MXC_OK);
  EXPECT_EQ(mxc_ndarray_wait_to_read(c), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("my_broken_op"), std::string::npos) << err();
  EXPECT_NE(err().find("the sky fell"), std::string::npos) << err();
  // Reading b reports it too (then clears it).
  float buf[4];
  EXPECT_EQ(mxc_ndarray_copy_to_host(b, buf, 16), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("my_broken_op"), std::string::npos) << err();
  // wait_all reports the first failure, then everything is clear.
  EXPECT_EQ(mxc_wait_all(), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("my_broken_op"), std::string::npos) << err();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(mxc_wait_all(), MXC_OK);
  // The untouched input is fine and the poisoned arrays are usable again.
  EXPECT_EQ(read(a), std::vector<float>(4, 1));
  std::vector<float> v(4, 9);
  ASSERT_EQ(mxc_ndarray_copy_from_host(b, v.data(), 16), MXC_OK) << err();
  ASSERT_EQ(mxc_ndarray_copy(b, c), MXC_OK);
  EXPECT_EQ(read(c), v);
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
  mxc_ndarray_free(c);
}

void async_fill(void *ud, mxc_opctx ctx) {
  float value = *(float *)ud;
  std::thread([ctx, value] {
    void *p;
    size_t n;
    int rc = mxc_opctx_data(ctx, 0, &p, &n);
    if (rc == MXC_OK)
      for (size_t i = 0; i < n / 4; ++i) ((float *)p)[i] = value;
    if (value < 0) {
      mxc_opctx_complete(ctx, MXC_ERR_IO, "device went away");
    } else {
      mxc_opctx_complete(ctx, rc, nullptr);
    }
  }).detach();
}

TEST(Push, AsyncFunctionsCompleteFromAnotherThread) {
  mxc_ndarray a = make(16, 0);
  float five = 5;
  ASSERT_EQ(mxc_engine_push_async(async_fill, &five, nullptr, nullptr, 0, &a,
                                  1, 0, "async_fill"),
            MXC_OK);
  EXPECT_EQ(read(a), std::vector<float>(16, 5));
  float neg = -1;
  ASSERT_EQ(mxc_engine_push_async(async_fill, &neg, nullptr, nullptr, 0, &a,
                                  1, 0, "async_dev"),
            MXC_OK);
  EXPECT_EQ(mxc_ndarray_wait_to_read(a), MXC_ERR_IO);
  EXPECT_NE(err().find("async_dev"), std::string::npos) << err();
  EXPECT_NE(err().find("device went away"), std::string::npos) << err();
  mxc_wait_all();
  mxc_ndarray_free(a);
}

TEST(Push, BadArgumentsAndContexts) {
  mxc_ndarray a = make(2, 0);
  EXPECT_EQ(mxc_engine_push(nullptr, nullptr, nullptr, &a, 1, nullptr, 0, 0,
                            "x"),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_engine_push(axpy, nullptr, nullptr, nullptr, 1, nullptr, 0, 0,
                            "x"),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("reads is NULL"), std::string::npos) << err();
  EXPECT_EQ(mxc_engine_push(axpy, nullptr, nullptr, &a, -1, nullptr, 0, 0,
                            "x"),
            MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray dead = make(2, 0);
  mxc_ndarray_free(dead);
  std::atomic<int> freed{0};
  auto *ud = new Axpy{1, &freed};
  EXPECT_EQ(mxc_engine_push(axpy, ud, free_axpy, &a, 1, &dead, 1, 0, "x"),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(err().find("writes[0]"), std::string::npos) << err();
  EXPECT_EQ(freed.load(), 0);  // not pushed: on_free not called
  delete ud;
  void *p;
  EXPECT_EQ(mxc_opctx_data(nullptr, 0, &p, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_opctx_complete(nullptr, 0, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_opctx_set_error(nullptr, "x"), MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray_free(a);
}

int bad_index(void *ud, mxc_opctx ctx) {
  void *p;
  *(int *)ud = mxc_opctx_data(ctx, 5, &p, nullptr);
  return MXC_OK;
}

TEST(Push, OutOfRangeDataIndexIsAnError) {
  mxc_ndarray a = make(2, 0);
  int rc = -1;
  ASSERT_EQ(mxc_engine_push(bad_index, &rc, nullptr, &a, 1, nullptr, 0, 0,
                            "idx"),
            MXC_OK);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray_free(a);
}

// Pushes from many threads at once onto shared arrays: each thread adds to
// its own array and reads a shared one; results are exact.
int add_k(void *ud, mxc_opctx ctx) {
  void *p;
  size_t n;
  int rc = mxc_opctx_data(ctx, 1, &p, &n);  // index 1: the write array
  if (rc != MXC_OK) return rc;
  for (size_t i = 0; i < n / 4; ++i) ((float *)p)[i] += (float)(intptr_t)ud;
  return MXC_OK;
}

TEST(Push, ManyThreadsPushingConcurrently) {
  const int T = 6, N = 500;
  std::vector<mxc_ndarray> arrs;
  for (int t = 0; t < T; ++t) arrs.push_back(make(8, 0));
  std::vector<std::thread> th;
  for (int t = 0; t < T; ++t) {
    th.emplace_back([&, t] {
      for (int i = 0; i < N; ++i) {
        mxc_ndarray w = arrs[t], r = arrs[(t + 1) % T];
        EXPECT_EQ(mxc_engine_push(add_k, (void *)(intptr_t)(t + 1), nullptr,
                                  &r, 1, &w, 1, 0, "add_k"),
                  MXC_OK);
      }
    });
  }
  for (auto &x : th) x.join();
  for (int t = 0; t < T; ++t) {
    EXPECT_EQ(read(arrs[t]), std::vector<float>(8, (float)(N * (t + 1))));
    mxc_ndarray_free(arrs[t]);
  }
}

}  // namespace
