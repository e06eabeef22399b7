// The engine's per-GPU workers and streams through the public API, with
// the fake plug-in (tests/gpu/fake_plugin.c, mode ok: two GPUs) whose
// streams are real queues: a host thread per stream runs each kernel and
// copy after a random delay (MXC_FAKE_GPU_DELAY_US). An operation the
// engine counted done before its stream finished it would show here as a
// stale value (a dependent, or a copy to the host, ran first), as a fault
// (its memory was freed under it) or as an error at the wrong wait.
//
// Built a second time against the real plug-in (MXCT_REAL_PLUGIN,
// tests/gpu:test_cuda_streams, run by scripts/gpu_check.sh): the same
// chains on real streams, copies big enough to go through the pinned
// staging buffer in several chunks; the fake-only cases (an injected
// fault, the fake's stream count) are left out, and everything skips
// without a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"
#include "core/base/gpu_plugin.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::LastError;
using mxct::Make;
using mxct::ToHost;

// Skips the test without a GPU (the real plug-in on a machine without
// one); the fake always has two.
#define NEED_GPU()                                                    \
  do {                                                                \
    int n_ = 0;                                                       \
    if (mxc_device_count(MXC_DEVICE_GPU, &n_) != MXC_OK || n_ == 0) { \
      (void)mxc_device_check(MXC_DEVICE_GPU, 0);                      \
      GTEST_SKIP() << "no GPU: " << LastError();                      \
    }                                                                 \
  } while (0)

// The second GPU of the chains: gpu(1), or gpu(0) again on a machine with
// one (the copies still go through the copy worker).
int Second() {
  int n = 0;
  (void)mxc_device_count(MXC_DEVICE_GPU, &n);
  return n >= 2 ? 1 : 0;
}

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float &x : v) x = d(g);
  return v;
}

mxc_ndarray FromHost(const std::vector<float> &v, int id) {
  mxc_ndarray a = Make({(int64_t)v.size()}, MXC_DEVICE_GPU, id);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
      << LastError();
  return a;
}

// out = op(in...), a new array on the inputs' device; the inputs are
// freed (the engine frees their memory once the call is done with it).
mxc_ndarray Apply(const char *name, std::vector<mxc_ndarray> in,
                  int free_first) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in.data(), (int)in.size(),
                          &out, 1, nullptr),
            MXC_OK)
      << LastError();
  if (free_first) mxc_ndarray_free(in[0]);
  return out;
}

// A kernel that writes after a delay, then a copy to the host pushed at
// once: the copy (on the copy worker's stream) must see the kernel's
// values, which only the compute worker's wait for its stream guarantees.
TEST(GpuStreams, CopyToHostSeesADelayedKernel) {
  NEED_GPU();
  for (int round = 0; round < 20; ++round) {
    std::vector<float> x = Random(257, round);
    mxc_ndarray a = FromHost(x, round % 2 ? Second() : 0);
    mxc_ndarray r = Apply("relu", {a}, 1);
    std::vector<float> got = ToHost(r, x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(got[i], x[i] > 0 ? x[i] : 0.f) << "round " << round << " " << i;
    }
    mxc_ndarray_free(r);
  }
}

// Host reference of the chain below, in the kernels' float arithmetic.
void AddInto(std::vector<float> *a, const std::vector<float> &b) {
  for (size_t i = 0; i < a->size(); ++i) (*a)[i] = (*a)[i] + b[i];
}
void Relu(std::vector<float> *a) {
  for (float &v : *a) v = v > 0 ? v : 0.f;
}

// One round: a chain of dependent operations over two GPUs and the
// copies between them, no wait until the end; each step frees its input.
std::vector<float> Chain(const std::vector<float> &x0,
                         const std::vector<float> &x1, int steps,
                         std::vector<float> *ref) {
  const int second = Second();
  mxc_ndarray g0 = FromHost(x0, 0), g1 = FromHost(x1, second);
  mxc_ndarray a = Apply("_copy", {g0}, 0);
  *ref = x0;
  for (int s = 0; s < steps; ++s) {
    a = Apply("elemwise_add", {a, g0}, 1);
    AddInto(ref, x0);
    if (s % 3 == 1) {
      a = Apply("relu", {a}, 1);
      Relu(ref);
    }
    if (s % 4 == 3) {  // over to gpu(1) and back
      mxc_ndarray b = Make({(int64_t)x0.size()}, MXC_DEVICE_GPU, second);
      EXPECT_EQ(mxc_ndarray_copy(a, b), MXC_OK) << LastError();
      mxc_ndarray_free(a);
      b = Apply("elemwise_add", {b, g1}, 1);
      AddInto(ref, x1);
      a = Make({(int64_t)x0.size()}, MXC_DEVICE_GPU, 0);
      EXPECT_EQ(mxc_ndarray_copy(b, a), MXC_OK) << LastError();
      mxc_ndarray_free(b);
    }
  }
  std::vector<float> got = ToHost(a, x0.size());
  for (mxc_ndarray t : {a, g0, g1}) mxc_ndarray_free(t);
  return got;
}

// Dependent operations spread over the compute workers of two GPUs and
// their copy workers agree bitwise with the host, round after round.
TEST(GpuStreams, DependentChainOverTwoGpusMatchesTheHost) {
  NEED_GPU();
  const int rounds = 12, steps = 16;
  for (int round = 0; round < rounds; ++round) {
    std::vector<float> x0 = Random(1031, 100 + round);
    std::vector<float> x1 = Random(1031, 200 + round), ref;
    std::vector<float> got = Chain(x0, x1, steps, &ref);
    ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.size() * 4), 0)
        << "round " << round;
  }
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << LastError();
}

// Independent chains pushed from several threads at once.
TEST(GpuStreams, ChainsFromSeveralThreads) {
  NEED_GPU();
  std::vector<std::thread> ts;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([t, &ok] {
      std::vector<float> x0 = Random(300, 300 + t), x1 = Random(300, 400 + t);
      std::vector<float> ref;
      std::vector<float> got = Chain(x0, x1, 8, &ref);
      ok[t] = std::memcmp(got.data(), ref.data(), ref.size() * 4) == 0;
    });
  }
  for (auto &t : ts) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
}

// Copies of pageable host memory bigger than the staging buffer (two
// halves of 4 MiB on the real plug-in: several chunks each way), and a
// copy between the GPUs, come back byte for byte.
TEST(GpuStreams, BigCopiesRoundTrip) {
  NEED_GPU();
  const size_t n = (size_t)5 << 20;  // 20 MiB of float32
  std::vector<float> x = Random(n, 11);
  mxc_ndarray a = FromHost(x, 0);
  mxc_ndarray b = Make({(int64_t)n}, MXC_DEVICE_GPU, Second());
  ASSERT_EQ(mxc_ndarray_copy(a, b), MXC_OK) << LastError();
  std::vector<float> got = ToHost(b, n);
  EXPECT_EQ(std::memcmp(got.data(), x.data(), n * 4), 0);
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
}

// The plug-in's table (core/base/gpu_plugin.h), for calling it directly
// (dlopen of the file mxc loaded returns the same library).
const mxc__gpu_plugin *Table() {
  const char *path = std::getenv("MXC_CUDA_PLUGIN");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!h) return nullptr;
  auto entry = reinterpret_cast<mxc__gpu_plugin_entry_fn>(
      dlsym(h, MXC__GPU_PLUGIN_ENTRY));
  return entry ? entry() : nullptr;
}

// The table's events called directly: an upload on stream a, an event
// recorded after it, stream b told to wait for that event on the device,
// then a copy back to the host on b. Round after round the host sees the
// upload (on the fake, whose streams serve after a random delay, a
// missing wait reads the previous round's values), and the event reads
// as complete once b's work after it is.
TEST(GpuStreams, EventOrdersTwoStreams) {
  NEED_GPU();
  const mxc__gpu_plugin *p = Table();
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->event_create && p->event_destroy && p->event_record &&
              p->event_query && p->event_sync && p->stream_wait_event);
  char why[512] = "";
  void *a = nullptr, *b = nullptr, *ev = nullptr;
  ASSERT_EQ(p->stream_create(0, &a, why, sizeof why), MXC_OK) << why;
  ASSERT_EQ(p->stream_create(0, &b, why, sizeof why), MXC_OK) << why;
  ASSERT_EQ(p->event_create(0, &ev, why, sizeof why), MXC_OK) << why;
  EXPECT_EQ(p->event_query(ev, why, sizeof why), MXC_OK) << "a new event";
  const size_t n = 3000;
  void *dev = p->mem_alloc(0, n * 4);
  ASSERT_NE(dev, nullptr);
  for (int round = 0; round < 20; ++round) {
    std::vector<float> x = Random(n, 900 + round), back(n, 0.f);
    ASSERT_EQ(p->copy_async(dev, 0, x.data(), MXC__GPU_HOST, n * 4, a, why,
                            sizeof why),
              MXC_OK)
        << why;
    ASSERT_EQ(p->event_record(ev, a, why, sizeof why), MXC_OK) << why;
    ASSERT_EQ(p->stream_wait_event(b, ev, why, sizeof why), MXC_OK) << why;
    ASSERT_EQ(p->copy_async(back.data(), MXC__GPU_HOST, dev, 0, n * 4, b, why,
                            sizeof why),
              MXC_OK)
        << why;
    ASSERT_EQ(p->stream_sync(b, why, sizeof why), MXC_OK) << why;
    EXPECT_EQ(p->event_query(ev, why, sizeof why), MXC_OK) << why;
    ASSERT_EQ(std::memcmp(back.data(), x.data(), n * 4), 0) << round;
    ASSERT_EQ(p->event_sync(ev, why, sizeof why), MXC_OK) << why;
  }
  EXPECT_EQ(p->stream_sync(a, why, sizeof why), MXC_OK) << why;
  p->event_destroy(ev);
  p->stream_destroy(a);
  p->stream_destroy(b);
  p->mem_free(0, dev);
}

#ifdef MXCT_REAL_PLUGIN
// The real plug-in's stream functions called directly (the table of
// core/base/gpu_plugin.h, ABI 2): without a GPU a stream cannot be made
// and the reason says why; with one, a stream copies pageable memory of
// several staging chunks host -> device -> host and reports no error.

TEST(CudaStreams, TableCallsDirectly) {
  const mxc__gpu_plugin *p = Table();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->abi, (uint32_t)MXC__GPU_PLUGIN_ABI);
  ASSERT_TRUE(p->stream_create && p->stream_destroy && p->stream_sync &&
              p->copy_async && p->launch);
  int n = 0;
  char why[512] = "";
  void *st = nullptr;
  if (p->open(&n, why, sizeof why) != MXC_OK || n == 0) {
    EXPECT_NE(p->stream_create(0, &st, why, sizeof why), MXC_OK);
    EXPECT_NE(std::string(why), "") << "no reason given";
    GTEST_SKIP() << "no GPU: " << why;
  }
  ASSERT_EQ(p->stream_create(0, &st, why, sizeof why), MXC_OK) << why;
  const size_t bytes = (size_t)9 << 20;  // > 2 staging chunks
  std::vector<float> x = Random(bytes / 4, 5), back(bytes / 4, 0.f);
  void *dev = p->mem_alloc(0, bytes);
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(p->copy_async(dev, 0, x.data(), MXC__GPU_HOST, bytes, st, why,
                          sizeof why),
            MXC_OK)
      << why;
  EXPECT_EQ(p->copy_async(back.data(), MXC__GPU_HOST, dev, 0, bytes, st, why,
                          sizeof why),
            MXC_OK)
      << why;
  EXPECT_EQ(p->stream_sync(st, why, sizeof why), MXC_OK) << why;
  EXPECT_EQ(std::memcmp(back.data(), x.data(), bytes), 0);
  p->stream_destroy(st);
  p->mem_free(0, dev);
}
#endif  // MXCT_REAL_PLUGIN

#ifndef MXCT_REAL_PLUGIN
// A function of the loaded fake plug-in (dlopen of the same file returns
// the handle mxc holds).
int FakeCounter(const char *name) {
  void *h = dlopen(std::getenv("MXC_CUDA_PLUGIN"), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return -1;
  auto fn = reinterpret_cast<int (*)()>(dlsym(h, name));
  int n = fn ? fn() : -1;
  dlclose(h);
  return n;
}

// A fault of asynchronous work (the fake's "exp" is launched fine and
// fails on its stream) surfaces at the next wait naming the operator, and
// poisons what depends on it, as a CPU failure does; the engine and the
// stream stay usable afterwards.
TEST(GpuStreams, AsynchronousFaultSurfacesAtTheWait) {
  std::vector<float> x = Random(64, 7);
  mxc_ndarray a = FromHost(x, 0);
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("exp", &op), MXC_OK);
  mxc_ndarray e = nullptr;
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a, 1, &e, 1, nullptr),
            MXC_OK)
      << LastError();
  mxc_ndarray r = Apply("relu", {e}, 0);  // depends on the failed one
  EXPECT_NE(mxc_ndarray_wait_to_read(r), MXC_OK);
  EXPECT_NE(LastError().find("operator 'exp' failed"), std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find("illegal memory access"), std::string::npos)
      << LastError();
  EXPECT_NE(mxc_ndarray_wait_to_read(e), MXC_OK);
  EXPECT_NE(LastError().find("'exp'"), std::string::npos) << LastError();
  EXPECT_NE(mxc_wait_all(), MXC_OK);  // the epoch's first failure
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << LastError();  // cleared
  for (mxc_ndarray t : {e, r}) mxc_ndarray_free(t);
  mxc_ndarray b = Apply("relu", {a}, 1);  // same workers, clean again
  std::vector<float> got = ToHost(b, x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(got[i], x[i] > 0 ? x[i] : 0.f) << i;
  }
  mxc_ndarray_free(b);
}

// The fake's event reports the failure of the work recorded before it,
// and the next record after good work reports none (the fake keeps a
// stream usable after a fault; CUDA's faults are sticky instead).
TEST(GpuStreams, FakeEventReportsTheFaultBeforeIt) {
  const mxc__gpu_plugin *p = Table();
  ASSERT_NE(p, nullptr);
  char why[512] = "";
  void *st = nullptr, *ev = nullptr;
  ASSERT_EQ(p->stream_create(0, &st, why, sizeof why), MXC_OK) << why;
  ASSERT_EQ(p->event_create(0, &ev, why, sizeof why), MXC_OK) << why;
  static float not_device[4];
  float host[4] = {1, 2, 3, 4};
  ASSERT_EQ(p->copy_async(not_device, 0, host, MXC__GPU_HOST, sizeof host, st,
                          why, sizeof why),
            MXC_OK);
  ASSERT_EQ(p->event_record(ev, st, why, sizeof why), MXC_OK) << why;
  EXPECT_NE(p->event_sync(ev, why, sizeof why), MXC_OK);
  EXPECT_NE(std::string(why).find("outside device memory"), std::string::npos)
      << why;
  void *dev = p->mem_alloc(0, sizeof host);
  ASSERT_NE(dev, nullptr);
  ASSERT_EQ(p->copy_async(dev, 0, host, MXC__GPU_HOST, sizeof host, st, why,
                          sizeof why),
            MXC_OK);
  ASSERT_EQ(p->event_record(ev, st, why, sizeof why), MXC_OK) << why;
  EXPECT_EQ(p->event_sync(ev, why, sizeof why), MXC_OK) << why;
  EXPECT_EQ(p->stream_sync(st, why, sizeof why), MXC_OK) << why;
  p->event_destroy(ev);
  p->stream_destroy(st);
  p->mem_free(0, dev);
}

// Each GPU used gets MXC_GPU_WORKERS compute streams and one copy stream
// (BUILD sets 3 workers), no more however much work comes.
TEST(GpuStreams, OneStreamPerWorker) {
  for (int id = 0; id < 2; ++id) {
    std::vector<float> x = Random(16, id);
    mxc_ndarray a = FromHost(x, id);
    mxc_ndarray r = Apply("relu", {a}, 1);
    (void)ToHost(r, x.size());
    mxc_ndarray_free(r);
  }
  EXPECT_EQ(FakeCounter("mxc_fake_gpu_live_streams"), 2 * (3 + 1));
}

// Mode stream_fail (tests/gpu:test_gpu_streams_fail): a GPU whose
// workers cannot get a stream refuses work at the push, naming the
// device and the plug-in's reason; the CPU is unaffected.
TEST(StreamFail, PushesAreRefusedWithTheReason) {
  mxc_ndarray a = Make({4}, MXC_DEVICE_GPU, 0);
  std::vector<float> v(4, 1.f);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), 16), MXC_ERR_OOM);
  EXPECT_NE(LastError().find("cannot start the workers of gpu(0)"),
            std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find("no streams in this mode"), std::string::npos)
      << LastError();
  mxc_ndarray_free(a);
  mxc_ndarray c = Make({4}, MXC_DEVICE_CPU, 0);
  EXPECT_EQ(mxc_ndarray_copy_from_host(c, v.data(), 16), MXC_OK);
  mxc_ndarray_free(c);
}
#endif  // MXCT_REAL_PLUGIN

}  // namespace
