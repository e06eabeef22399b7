// The engine's GPU pools through its internal API (core/engine), with the
// fake plug-in of mode ok, whose streams run work after a random delay:
// functions pushed on a GPU run on that GPU's workers with the worker's
// stream as the thread's stream, copies on the copy worker; destroying an
// engine with GPU work in flight finishes that work first and frees every
// stream its pools made.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/engine/engine.h"
}

namespace {

int LiveStreams() {
  void *h = dlopen(std::getenv("MXC_CUDA_PLUGIN"), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return -1;
  auto fn = reinterpret_cast<int (*)()>(dlsym(h, "mxc_fake_gpu_live_streams"));
  int n = fn ? fn() : -1;
  dlclose(h);
  return n;
}

// One step: host -> device -> host through device memory of gpu(0),
// checking that it runs with a stream of gpu(0) (a GPU worker's).
struct Step {
  const float *src;
  float *dev;
  float *dst;
  size_t n;
  std::atomic<int> *on_stream;
};

int RoundTrip(void *arg, mxc__exec *ex) {
  Step *s = static_cast<Step *>(arg);
  if (mxc__gpu_thread_stream(0) != nullptr) s->on_stream->fetch_add(1);
  int rc = mxc__gpu_copy(s->dev, 0, s->src, MXC__GPU_HOST, s->n * 4);
  if (rc == MXC_OK)
    rc = mxc__gpu_copy(s->dst, MXC__GPU_HOST, s->dev, 0, s->n * 4);
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

void FreeStep(void *arg) { delete static_cast<Step *>(arg); }

int Push(mxc__engine *e, Step *s, mxc__var *v, int copy) {
  mxc__push_args a;
  std::memset(&a, 0, sizeof a);
  a.sync_fn = RoundTrip;
  a.arg = s;
  a.free_fn = FreeStep;
  a.writes = &v;
  a.n_writes = 1;
  a.name = "round_trip";
  a.dev.type = MXC_DEVICE_GPU;
  a.dev.id = 0;
  a.copy = copy;
  return mxc__engine_push(e, &a);
}

// Work pushed on gpu(0), on both lanes, all ordered by one variable: each
// step copies the previous step's output (in host memory) through device
// memory, so a step that ran before the one it depends on finished its
// stream work would copy a stale buffer. The engine is destroyed with the
// work in flight: every step completes, then every stream is gone.
TEST(GpuEngineStreams, DestroyWithWorkInFlightFinishesItAndFreesStreams) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  const int before = LiveStreams();
  ASSERT_GE(before, 0);
  for (int round = 0; round < 5; ++round) {
    mxc__engine *e = nullptr;
    ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 2, &e), MXC_OK);
    mxc__var *v = nullptr;
    ASSERT_EQ(mxc__engine_new_var(e, &v), MXC_OK);
    const size_t n = 513;
    const int steps = 40;
    std::vector<std::vector<float>> buf(steps + 1, std::vector<float>(n, 0));
    for (size_t i = 0; i < n; ++i) buf[0][i] = (float)(i * 3 + round);
    float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4));
    ASSERT_NE(dev, nullptr);
    std::atomic<int> on_stream{0};
    for (int s = 0; s < steps; ++s) {
      Step *st = new Step{buf[s].data(), dev, buf[s + 1].data(), n, &on_stream};
      ASSERT_EQ(Push(e, st, v, s % 2), MXC_OK) << mxc__error_msg();
    }
    mxc__engine_delete_var(e, v, nullptr, nullptr);
    mxc__engine_destroy(e);  // with the steps in flight
    EXPECT_EQ(on_stream.load(), steps);
    EXPECT_EQ(buf[steps], buf[0]) << "round " << round;
    EXPECT_EQ(LiveStreams(), before) << "round " << round;
    mxc__gpu_free(0, dev);
  }
}

// A GPU function's stream failure is the function's: the wait on its
// variable reports it by the function's name.
int FailingCopy(void *arg, mxc__exec *ex) {
  (void)arg;
  float host[4] = {0, 0, 0, 0};
  // Not device memory: the fake's queued copy fails on its stream.
  static float not_device[4];
  int rc = mxc__gpu_copy(not_device, 0, host, MXC__GPU_HOST, sizeof host);
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

TEST(GpuEngineStreams, StreamFailureNamesTheFunction) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  mxc__var *v = nullptr;
  ASSERT_EQ(mxc__engine_new_var(e, &v), MXC_OK);
  mxc__push_args a;
  std::memset(&a, 0, sizeof a);
  a.sync_fn = FailingCopy;
  a.writes = &v;
  a.n_writes = 1;
  a.name = "bad_copy";
  a.dev.type = MXC_DEVICE_GPU;
  ASSERT_EQ(mxc__engine_push(e, &a), MXC_OK);
  EXPECT_NE(mxc__engine_wait_var(e, v, 0), MXC_OK);
  std::string msg = mxc__error_msg();
  EXPECT_NE(msg.find("operator 'bad_copy' failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside device memory"), std::string::npos) << msg;
  mxc__engine_delete_var(e, v, nullptr, nullptr);
  EXPECT_NE(mxc__engine_wait_all(e), MXC_OK);  // the epoch's first failure
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  mxc__engine_destroy(e);
}

// Without a usable GPU (tests/gpu:test_gpu_engine_nogpu: no plug-in), a
// push on a GPU is refused with the reason instead of starting workers.
TEST(NoGpu, GpuPushIsRefused) {
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  mxc__var *v = nullptr;
  ASSERT_EQ(mxc__engine_new_var(e, &v), MXC_OK);
  mxc__push_args a;
  std::memset(&a, 0, sizeof a);
  a.sync_fn = FailingCopy;  // never runs
  a.writes = &v;
  a.n_writes = 1;
  a.name = "on_gpu";
  a.dev.type = MXC_DEVICE_GPU;
  EXPECT_EQ(mxc__engine_push(e, &a), MXC_ERR_UNSUPPORTED);
  std::string msg = mxc__error_msg();
  EXPECT_NE(msg.find("cannot start the workers of gpu(0) for operator "
                     "'on_gpu'"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("could not be loaded"), std::string::npos) << msg;
  mxc__engine_delete_var(e, v, nullptr, nullptr);
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK);
  mxc__engine_destroy(e);
}

}  // namespace
