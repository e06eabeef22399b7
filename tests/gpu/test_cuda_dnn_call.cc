// The real cuDNN kernels (backends/cuda/dnn.h) called directly, on a
// machine without a GPU: what a call answers before it can reach the
// device. A call the plan refuses fails with the plan's reason and never
// opens cuDNN or the runtime; a valid call fails with the reason the
// machine lacks: cuDNN missing (MXC_ERR_UNSUPPORTED naming the library
// and what to install) or, with cuDNN installed, the CUDA runtime's
// error (no driver or no device here). On a GPU the conformance suite
// covers the rest.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern "C" {
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/dnn.h"
#include "backends/cuda/dnn_rnn.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"

namespace {

struct Conv {
  void *param = nullptr;
  float fake[1] = {0};  // never dereferenced: no call reaches the device
  mxc__gpu_array in[3] = {}, out[1] = {};
  int req[1] = {MXC__GPU_REQ_WRITE};
  mxc__gpu_call call = {};
  Conv() {
    const char *k[] = {"kernel", "num_filter"}, *v[] = {"(3,3)", "2"};
    EXPECT_EQ(mxc__op_parse_params(mxc__op_find("Convolution"), k, v, 2,
                                   &param),
              MXC_OK);
    Set(&in[0], {1, 3, 5, 5});
    Set(&in[1], {2, 3, 3, 3});
    Set(&in[2], {2});
    Set(&out[0], {1, 2, 3, 3});
    call = {0, param, in, 3, out, 1, req, 0, {}};
  }
  ~Conv() { mxc__free(param); }
  void Set(mxc__gpu_array *a, std::initializer_list<int64_t> d) {
    a->ptr = fake;
    a->ndim = (int)d.size();
    a->size = 1;
    a->dtype = MXC_DTYPE_FLOAT32;
    int i = 0;
    for (int64_t x : d) a->dims[i++] = x, a->size *= x;
  }
};

TEST(CudaDnnCall, ARefusedPlanNeverReachesTheDevice) {
  Conv c;
  c.out[0].dims[3] = 4;  // not what kernel (3,3) gives
  char why[512] = "";
  EXPECT_EQ(mxc__cuda_conv_forward(&c.call, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("does not match"), std::string::npos)
      << why;
}

TEST(CudaDnnCall, AValidCallSaysWhatTheMachineLacks) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    // The call's arrays are host memory: never hand them to a device.
    GTEST_SKIP() << "a GPU is visible: the conformance suite covers it";
  }
  Conv c;
  char why[512] = "";
  int rc = mxc__cuda_conv_forward(&c.call, why, sizeof why);
  ASSERT_NE(rc, MXC_OK) << "no GPU here, yet the call succeeded";
  std::string w = why;
  void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
    EXPECT_NE(w.find("cuDNN 9 could not be loaded"), std::string::npos) << w;
    EXPECT_NE(w.find("install cuDNN 9 for CUDA 13"), std::string::npos) << w;
  } else {
    dlclose(h);
    EXPECT_NE(w.find("cudaSetDevice"), std::string::npos) << w;
  }
  std::printf("CudaDnnCall: Convolution without a GPU: %s\n", why);
}

// Half calls reach the same point (no device here: the machine's reason,
// as float32's); a dtype the kernels do not take is refused before it.
TEST(CudaDnnCall, HalfCallsSayTheSameAndOtherDtypesAreRefused) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    GTEST_SKIP() << "a GPU is visible: the conformance suite covers it";
  }
  Conv f32;
  char want[512] = "";
  int want_rc = mxc__cuda_conv_forward(&f32.call, want, sizeof want);
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16, MXC_DTYPE_FLOAT64}) {
    Conv c;
    for (auto *a : {&c.in[0], &c.in[1], &c.in[2], &c.out[0]}) a->dtype = dt;
    char why[512] = "";
    int rc = mxc__cuda_conv_forward(&c.call, why, sizeof why);
    if (dt == MXC_DTYPE_FLOAT64) {
      EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
      EXPECT_NE(std::string(why).find("float32, float16 or bfloat16"),
                std::string::npos)
          << why;
    } else {
      EXPECT_EQ(rc, want_rc) << why;
      EXPECT_STREQ(why, want);
    }
  }
}

TEST(CudaDnnCall, NothingToWriteIsNotACall) {
  Conv c;
  c.req[0] = MXC__GPU_REQ_NULL;
  char why[512] = "";
  EXPECT_EQ(mxc__cuda_conv_forward(&c.call, why, sizeof why), MXC_OK) << why;
}

TEST(CudaDnnCall, PoolingCuDnnCannotMatchIsRefusedBeforeTheDevice) {
  void *param = nullptr;
  const char *k[] = {"kernel", "pool_type"}, *v[] = {"(2,2)", "sum"};
  ASSERT_EQ(mxc__op_parse_params(mxc__op_find("Pooling"), k, v, 2, &param),
            MXC_OK);
  float fake[1] = {0};
  mxc__gpu_array in = {}, out = {};
  in.ptr = out.ptr = fake;
  in.ndim = out.ndim = 4;
  int64_t di[4] = {1, 1, 4, 4}, dout[4] = {1, 1, 3, 3};
  for (int i = 0; i < 4; ++i) in.dims[i] = di[i], out.dims[i] = dout[i];
  in.size = 16, out.size = 9;
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call call = {0, param, &in, 1, &out, 1, &req, 0, {}};
  char why[512] = "";
  EXPECT_EQ(mxc__cuda_pool_forward(&call, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("sum or lp"), std::string::npos) << why;
  mxc__free(param);
}

// An LSTM call (2 layers, bidirectional, T 3, N 2, I 4, H 5) whose
// pointers are never dereferenced; extra: more parameters.
using Kvs = std::vector<std::pair<const char *, const char *>>;
struct Rnn {
  void *param = nullptr;
  float fake[1] = {0};
  mxc__gpu_array in[4] = {}, out[2] = {};
  int req[2] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE};
  mxc__gpu_call call = {};
  explicit Rnn(const Kvs &extra = Kvs()) {
    std::vector<const char *> k = {"mode", "state_size", "num_layers",
                                   "bidirectional"};
    std::vector<const char *> v = {"lstm", "5", "2", "true"};
    for (auto &e : extra) k.push_back(e.first), v.push_back(e.second);
    EXPECT_EQ(mxc__op_parse_params(mxc__op_find("RNN"), k.data(), v.data(),
                                   (int)k.size(), &param),
              MXC_OK);
    Set(&in[0], {3, 2, 4});
    Set(&in[1], {1120});
    Set(&in[2], {4, 2, 5});
    Set(&in[3], {4, 2, 5});
    Set(&out[0], {3, 2, 10});
    Set(&out[1], {1});
    call = {0, param, in, 4, out, 2, req, 1, {}};
  }
  ~Rnn() { mxc__free(param); }
  void Set(mxc__gpu_array *a, std::initializer_list<int64_t> d) {
    a->ptr = fake;
    a->ndim = (int)d.size();
    a->size = 1;
    a->dtype = MXC_DTYPE_FLOAT32;
    int i = 0;
    for (int64_t x : d) a->dims[i++] = x, a->size *= x;
  }
};

// What cuDNN would compute otherwise is refused by the plan, before cuDNN
// or the device are touched (the CPU fallback's business).
TEST(CudaDnnCall, RnnRefusedPlanNeverReachesTheDevice) {
  Rnn c(Kvs{{"p", "0.3"}});
  char why[512] = "";
  EXPECT_EQ(mxc__cuda_rnn_forward(&c.call, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("dropout"), std::string::npos) << why;
}

// The rows' accepts (accepts.h) decline what the plan refuses, so libmxc
// runs those calls on the CPU: with shapes, and for a graph pass's query
// without them (every ndim -1); a plain call is accepted either way.
TEST(CudaDnnCall, RnnAcceptsDeclinesWhatThePlanRefuses) {
  char why[512] = "";
  Rnn plain;
  EXPECT_EQ(mxc__cuda_rnn_accepts(&plain.call, why, sizeof why), 1) << why;
  Rnn drop(Kvs{{"p", "0.3"}});
  EXPECT_EQ(mxc__cuda_rnn_accepts(&drop.call, why, sizeof why), 0);
  EXPECT_NE(std::string(why).find("dropout"), std::string::npos) << why;
  drop.call.is_train = 0;  // no masks at inference: cuDNN may run it
  EXPECT_EQ(mxc__cuda_rnn_accepts(&drop.call, why, sizeof why), 1) << why;
  Rnn seq(Kvs{{"use_sequence_length", "true"}});
  for (auto &a : seq.in) a.ndim = -1;
  for (auto &a : seq.out) a.ndim = -1;
  why[0] = 0;
  EXPECT_EQ(mxc__cuda_rnn_bwd_accepts(&seq.call, why, sizeof why), 0);
  EXPECT_NE(std::string(why).find("use_sequence_length"), std::string::npos)
      << why;
}

// A valid RNN call answers what the machine lacks, as Convolution does.
TEST(CudaDnnCall, RnnValidCallSaysWhatTheMachineLacks) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    GTEST_SKIP() << "a GPU is visible: the conformance suite covers it";
  }
  Rnn c;
  char why[512] = "";
  int rc = mxc__cuda_rnn_forward(&c.call, why, sizeof why);
  ASSERT_NE(rc, MXC_OK) << "no GPU here, yet the call succeeded";
  Conv conv;
  char want[512] = "";
  EXPECT_EQ(rc, mxc__cuda_conv_forward(&conv.call, want, sizeof want));
  EXPECT_STREQ(why, want);
  std::printf("CudaDnnCall: RNN without a GPU: %s\n", why);
}

// Every cuDNN row of the kernel table has a conformance case of its own
// (tests/gpu/conformance_dnn.cc): the generic same-shape case cannot call
// these operators, so a row without one would fail only on a GPU.
TEST(CudaDnnCall, EveryRowHasAConformanceCase) {
  const mxc__gpu_kernel rows[] = {MXC__CUDA_DNN_ROWS MXC__CUDA_RNN_ROWS};
  for (const mxc__gpu_kernel &k : rows) {
    EXPECT_EQ(mxct::CaseRunners().count(k.op), 1u) << k.op;
  }
}

// ---- cuda_rt.h's per-thread, per-device library objects ----
//
// The bookkeeping that blas.c, sdot.c and dnn_lib.c share, with fake
// libraries whose create/destroy/bind record what they were asked (no
// CUDA call is made: the helper itself makes none).

struct FakeObj {
  int dev;
  int serial;  // which create made it
  std::thread::id owner;
};

struct FakeLog {
  std::mutex mu;
  int creates = 0, fails_left = 0;
  std::vector<std::pair<int, int>> destroyed;  // (dev, serial)
  std::vector<cudaStream_t> bound;
};

FakeLog g_log_a, g_log_b;

int FakeCreate(FakeLog *log, void *obj, int dev, char *why, size_t len) {
  std::lock_guard<std::mutex> l(log->mu);
  if (log->fails_left > 0) {
    --log->fails_left;
    std::snprintf(why, len, "fake library: out of handles");
    return MXC_ERR_INTERNAL;
  }
  auto *o = static_cast<FakeObj *>(obj);
  EXPECT_EQ(o->serial, 0) << "the object is not zeroed before create";
  *o = {dev, ++log->creates, std::this_thread::get_id()};
  return MXC_OK;
}

void FakeDestroy(FakeLog *log, void *obj, int dev) {
  auto *o = static_cast<FakeObj *>(obj);
  EXPECT_EQ(o->dev, dev);
  std::lock_guard<std::mutex> l(log->mu);
  log->destroyed.push_back({dev, o->serial});
}

int FakeBind(FakeLog *log, void *obj, cudaStream_t s) {
  auto *o = static_cast<FakeObj *>(obj);
  EXPECT_EQ(o->owner, std::this_thread::get_id()) << "another thread's object";
  std::lock_guard<std::mutex> l(log->mu);
  log->bound.push_back(s);
  return MXC_OK;
}

const mxc__cuda_tls_lib kLibA = {
    "fake A", sizeof(FakeObj),
    [](void *o, int d, char *w, size_t n) {
      return FakeCreate(&g_log_a, o, d, w, n);
    },
    [](void *o, int d) { FakeDestroy(&g_log_a, o, d); },
    [](void *o, cudaStream_t s, char *, size_t) {
      return FakeBind(&g_log_a, o, s);
    }};
const mxc__cuda_tls_lib kLibB = {
    "fake B", sizeof(FakeObj),
    [](void *o, int d, char *w, size_t n) {
      return FakeCreate(&g_log_b, o, d, w, n);
    },
    [](void *o, int d) { FakeDestroy(&g_log_b, o, d); }, nullptr};

void *Slot(const mxc__cuda_tls_lib *lib, int dev) {
  void *obj = nullptr;
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_tls_slot(lib, dev, &obj, why, sizeof why), MXC_OK)
      << why;
  return obj;
}

int Creates(FakeLog *log) {
  std::lock_guard<std::mutex> l(log->mu);
  return log->creates;
}

// One object per (library, thread, device), made once, bound to the
// call's stream on every lookup.
TEST(CudaTls, OneObjectPerLibraryAndDeviceBoundEveryCall) {
  int a0 = Creates(&g_log_a), b0 = Creates(&g_log_b);
  size_t bound0 = g_log_a.bound.size();
  void *x = Slot(&kLibA, 0);
  EXPECT_EQ(Slot(&kLibA, 0), x);
  void *y = Slot(&kLibA, 5);
  void *z = Slot(&kLibB, 0);
  EXPECT_NE(x, y);
  EXPECT_NE(x, z);
  EXPECT_EQ(static_cast<FakeObj *>(y)->dev, 5);
  EXPECT_EQ(Creates(&g_log_a), a0 + 2);
  EXPECT_EQ(Creates(&g_log_b), b0 + 1);
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x5150);
  mxc__cuda_set_stream(s);  // as streams.c's launch does around a call
  EXPECT_EQ(Slot(&kLibA, 0), x);
  mxc__cuda_set_stream(0);
  ASSERT_EQ(g_log_a.bound.size(), bound0 + 4);  // each lookup of A
  EXPECT_EQ(g_log_a.bound[bound0 + 3], s);
  EXPECT_EQ(g_log_a.bound[bound0], cudaStream_t{0});
}

// Several threads at once: each gets its own objects, made once per
// thread, destroyed when the thread exits (and only then).
TEST(CudaTls, EachThreadHasItsOwnDestroyedAtExit) {
  const int kThreads = 6, kCalls = 50;
  int a0 = Creates(&g_log_a);
  size_t d0;
  {
    std::lock_guard<std::mutex> l(g_log_a.mu);
    d0 = g_log_a.destroyed.size();
  }
  std::mutex mu;
  std::set<void *> seen;
  std::atomic<int> bad{0}, ready{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      void *first = Slot(&kLibA, t % 2);
      for (int i = 0; i < kCalls; ++i) bad += Slot(&kLibA, t % 2) != first;
      Slot(&kLibA, 63);  // the last device id served
      {
        std::lock_guard<std::mutex> l(mu);
        seen.insert(first);
      }
      // All alive at once (an exited thread's memory could be reused).
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
    });
  }
  for (auto &t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ((int)seen.size(), kThreads);
  EXPECT_EQ(Creates(&g_log_a), a0 + 2 * kThreads);
  std::lock_guard<std::mutex> l(g_log_a.mu);
  ASSERT_EQ(g_log_a.destroyed.size(), d0 + 2 * kThreads);
  int dev63 = 0;
  for (size_t i = d0; i < g_log_a.destroyed.size(); ++i) {
    dev63 += g_log_a.destroyed[i].first == 63;
  }
  EXPECT_EQ(dev63, kThreads);
}

// A failing create: MXC_ERR_UNSUPPORTED with the library's message,
// nothing kept (the next call tries again), nothing to destroy.
TEST(CudaTls, AFailedCreateSaysWhyAndIsRetried) {
  std::thread([] {
    {
      std::lock_guard<std::mutex> l(g_log_b.mu);
      g_log_b.fails_left = 1;
    }
    int b0 = Creates(&g_log_b);
    void *obj = nullptr;
    char why[256] = "";
    EXPECT_EQ(mxc__cuda_tls_slot(&kLibB, 2, &obj, why, sizeof why),
              MXC_ERR_UNSUPPORTED);
    EXPECT_EQ(obj, nullptr);
    EXPECT_STREQ(why,
                 "fake B could not be initialised on gpu(2): fake library: "
                 "out of handles");
    EXPECT_EQ(Creates(&g_log_b), b0);
    EXPECT_NE(Slot(&kLibB, 2), nullptr);  // tried again: made
    EXPECT_EQ(Creates(&g_log_b), b0 + 1);
  }).join();
  std::lock_guard<std::mutex> l(g_log_b.mu);
  ASSERT_FALSE(g_log_b.destroyed.empty());
  EXPECT_EQ(g_log_b.destroyed.back().first, 2);  // the one made, once
}

TEST(CudaTls, DevicesBeyondTheTableAreRefused) {
  for (int dev : {-1, MXC__CUDA_MAX_DEVICES}) {
    void *obj = nullptr;
    char why[256] = "";
    EXPECT_EQ(mxc__cuda_tls_slot(&kLibA, dev, &obj, why, sizeof why),
              MXC_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(why).find("fake A kernels serve gpu(0) to gpu(63)"),
              std::string::npos)
        << why;
  }
}

}  // namespace
