// The engine's GPU pools through its internal API (core/engine), with the
// fake plug-in of mode ok, whose streams run work after a random delay:
// functions pushed on a GPU run on that GPU's workers with the worker's
// stream as the thread's stream, copies on the copy worker; an operation
// completes once the event recorded after it is reached, while its
// worker goes on enqueuing (the fake's hold shows how much is in flight);
// a stream's fault fails the operation whose work faulted; destroying an
// engine with GPU work in flight finishes that work first and frees every
// stream and event its pools made.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

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

// A function of the loaded fake plug-in (dlopen of the same file returns
// the handle mxc holds), or null.
void *FakeFn(const char *name) {
  void *h = dlopen(std::getenv("MXC_CUDA_PLUGIN"), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return nullptr;
  void *fn = dlsym(h, name);
  dlclose(h);  // mxc keeps it loaded
  return fn;
}

int FakeCount(const char *name) {
  auto fn = reinterpret_cast<int (*)()>(FakeFn(name));
  return fn ? fn() : -1;
}

void FakeSet(const char *name, int on) {
  auto fn = reinterpret_cast<void (*)(int)>(FakeFn(name));
  ASSERT_NE(fn, nullptr) << name;
  fn(on);
}

int LiveStreams() { return FakeCount("mxc_fake_gpu_live_streams"); }
int LiveEvents() { return FakeCount("mxc_fake_gpu_live_events"); }

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
  const int before = LiveStreams(), events = LiveEvents();
  ASSERT_GE(before, 0);
  ASSERT_GE(events, 0);
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
    EXPECT_EQ(LiveEvents(), events) << "round " << round;
    mxc__gpu_free(0, dev);
  }
}

int FailingCopy(void *arg, mxc__exec *ex);  // below

// One upload host -> gpu(0); counts its free_fn, which runs only once the
// operation completed.
struct Upload {
  const float *src;
  float *dev;
  size_t n;
  std::atomic<int> *freed;
};

int UploadFn(void *arg, mxc__exec *ex) {
  Upload *u = static_cast<Upload *>(arg);
  int rc = mxc__gpu_copy(u->dev, 0, u->src, MXC__GPU_HOST, u->n * 4);
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

void FreeUpload(void *arg) {
  Upload *u = static_cast<Upload *>(arg);
  u->freed->fetch_add(1);
  delete u;
}

int PushFn(mxc__engine *e, mxc__sync_fn fn, void *arg, mxc__free_fn free_fn,
           mxc__var *v, int copy, const char *name) {
  mxc__push_args a;
  std::memset(&a, 0, sizeof a);
  a.sync_fn = fn;
  a.arg = arg;
  a.free_fn = free_fn;
  a.writes = &v;
  a.n_writes = 1;
  a.name = name;
  a.dev.type = MXC_DEVICE_GPU;
  a.copy = copy;
  return mxc__engine_push(e, &a);
}

// Polls until the fake has n kernels and copies queued (its streams
// held), for at most 20 s: an engine whose workers block on their
// streams never gets there, and the test fails instead of hanging.
bool QueuedReaches(int n) {
  for (int i = 0; i < 20000; ++i) {
    if (FakeCount("mxc_fake_gpu_queued") >= n) return true;
    usleep(1000);
  }
  return false;
}

// Independent operations on both lanes of gpu(0) while the fake's
// streams serve nothing: every worker enqueues all of its operations
// without waiting for its stream (all of them are queued on the fake at
// once), yet none counts as done (no free_fn ran) until the device ran
// it; then every upload arrived.
TEST(GpuEngineStreams, WorkersEnqueueWithoutWaitingForTheirStreams) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 2, &e), MXC_OK);
  const int per_lane = 24, n_ops = 2 * per_lane;
  const size_t n = 64;
  std::vector<std::vector<float>> src(n_ops, std::vector<float>(n));
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4 * n_ops));
  ASSERT_NE(dev, nullptr);
  std::vector<mxc__var *> vars(n_ops, nullptr);
  std::atomic<int> freed{0};
  (void)FakeCount("mxc_fake_gpu_max_queued");  // resets it
  FakeSet("mxc_fake_gpu_hold", 1);
  for (int i = 0; i < n_ops; ++i) {
    for (size_t j = 0; j < n; ++j) src[i][j] = (float)(i * 1000 + j);
    ASSERT_EQ(mxc__engine_new_var(e, &vars[i]), MXC_OK);
    Upload *u = new Upload{src[i].data(), dev + n * i, n, &freed};
    ASSERT_EQ(PushFn(e, UploadFn, u, FreeUpload, vars[i], i % 2, "upload"),
              MXC_OK)
        << mxc__error_msg();
  }
  bool all_queued = QueuedReaches(n_ops);
  int freed_while_held = freed.load();
  FakeSet("mxc_fake_gpu_hold", 0);
  EXPECT_TRUE(all_queued) << FakeCount("mxc_fake_gpu_queued") << " of "
                          << n_ops << " queued: a worker waits for its stream";
  EXPECT_EQ(freed_while_held, 0) << "operations completed before their work";
  // The copy lane has one worker: all of its uploads were on one stream.
  EXPECT_GE(FakeCount("mxc_fake_gpu_max_queued"), per_lane);
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  EXPECT_EQ(freed.load(), n_ops);
  std::vector<float> back(n * n_ops);
  ASSERT_EQ(mxc__gpu_copy(back.data(), MXC__GPU_HOST, dev, 0, back.size() * 4),
            MXC_OK);
  for (int i = 0; i < n_ops; ++i) {
    EXPECT_EQ(std::memcmp(back.data() + n * i, src[i].data(), n * 4), 0) << i;
  }
  for (mxc__var *v : vars) mxc__engine_delete_var(e, v, nullptr, nullptr);
  mxc__engine_destroy(e);
  mxc__gpu_free(0, dev);
}

// Three operations in flight together on the copy worker's one stream,
// the middle one faulting on the stream: that one fails by its name at
// the wait, and the ones before and after it on the same stream succeed
// (the fake's fault belongs to the work before the next event).
TEST(GpuEngineStreams, AsynchronousFaultFailsTheOperationInFlight) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  const size_t n = 32;
  std::vector<float> src(n, 2.5f);
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4 * 2));
  ASSERT_NE(dev, nullptr);
  mxc__var *v[3] = {nullptr, nullptr, nullptr};
  for (auto &x : v) ASSERT_EQ(mxc__engine_new_var(e, &x), MXC_OK);
  std::atomic<int> freed{0};
  FakeSet("mxc_fake_gpu_hold", 1);
  ASSERT_EQ(PushFn(e, UploadFn, new Upload{src.data(), dev, n, &freed},
                   FreeUpload, v[0], 1, "first"),
            MXC_OK);
  ASSERT_EQ(PushFn(e, FailingCopy, nullptr, nullptr, v[1], 1, "faulty"),
            MXC_OK);
  ASSERT_EQ(PushFn(e, UploadFn, new Upload{src.data(), dev + n, n, &freed},
                   FreeUpload, v[2], 1, "third"),
            MXC_OK);
  bool all_queued = QueuedReaches(3);
  FakeSet("mxc_fake_gpu_hold", 0);
  EXPECT_TRUE(all_queued);
  EXPECT_EQ(mxc__engine_wait_var(e, v[0], 0), MXC_OK) << mxc__error_msg();
  EXPECT_NE(mxc__engine_wait_var(e, v[1], 0), MXC_OK);
  std::string msg = mxc__error_msg();
  EXPECT_NE(msg.find("operator 'faulty' failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside device memory"), std::string::npos) << msg;
  EXPECT_EQ(mxc__engine_wait_var(e, v[2], 0), MXC_OK) << mxc__error_msg();
  EXPECT_NE(mxc__engine_wait_all(e), MXC_OK);  // the epoch's first failure
  msg = mxc__error_msg();
  EXPECT_NE(msg.find("'faulty'"), std::string::npos) << msg;
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  EXPECT_EQ(freed.load(), 2);
  for (auto &x : v) mxc__engine_delete_var(e, x, nullptr, nullptr);
  mxc__engine_destroy(e);
  mxc__gpu_free(0, dev);
}

// Destroying an engine whose operations are still on the streams, some
// of them failing there: every one completes or fails, and the pools'
// streams and events are all freed.
TEST(GpuEngineStreams, DestroyWithFailuresInFlight) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  const int streams = LiveStreams(), events = LiveEvents();
  const size_t n = 16;
  std::vector<float> src(n, 1.f);
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4));
  ASSERT_NE(dev, nullptr);
  for (int round = 0; round < 4; ++round) {
    mxc__engine *e = nullptr;
    ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
    std::atomic<int> freed{0};
    for (int i = 0; i < 30; ++i) {
      mxc__var *v = nullptr;
      ASSERT_EQ(mxc__engine_new_var(e, &v), MXC_OK);
      if (i % 3 == 1) {
        ASSERT_EQ(PushFn(e, FailingCopy, nullptr, nullptr, v, i % 2, "bad"),
                  MXC_OK);
      } else {
        ASSERT_EQ(PushFn(e, UploadFn, new Upload{src.data(), dev, n, &freed},
                         FreeUpload, v, i % 2, "good"),
                  MXC_OK);
      }
      mxc__engine_delete_var(e, v, nullptr, nullptr);
    }
    mxc__engine_destroy(e);  // with the work in flight
    EXPECT_EQ(freed.load(), 20) << "round " << round;
    EXPECT_EQ(LiveStreams(), streams) << "round " << round;
    EXPECT_EQ(LiveEvents(), events) << "round " << round;
  }
  mxc__gpu_free(0, dev);
}

// Independent uploads on the copy worker's one stream of an engine whose
// workers wait for their streams: never two queued there at a time, all
// arrive, no event is left behind.
void CheckWorkersWait() {
  const int events = LiveEvents();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  const int n_ops = 16;
  const size_t n = 50;
  std::vector<std::vector<float>> src(n_ops, std::vector<float>(n));
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4 * n_ops));
  ASSERT_NE(dev, nullptr);
  std::vector<mxc__var *> vars(n_ops, nullptr);
  std::atomic<int> freed{0};
  (void)FakeCount("mxc_fake_gpu_max_queued");  // resets it
  for (int i = 0; i < n_ops; ++i) {
    for (size_t j = 0; j < n; ++j) src[i][j] = (float)(i * 100 + j);
    ASSERT_EQ(mxc__engine_new_var(e, &vars[i]), MXC_OK);
    Upload *u = new Upload{src[i].data(), dev + n * i, n, &freed};
    ASSERT_EQ(PushFn(e, UploadFn, u, FreeUpload, vars[i], 1, "upload"),
              MXC_OK);
  }
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  EXPECT_EQ(FakeCount("mxc_fake_gpu_max_queued"), 1);
  EXPECT_EQ(freed.load(), n_ops);
  std::vector<float> back(n * n_ops);
  ASSERT_EQ(mxc__gpu_copy(back.data(), MXC__GPU_HOST, dev, 0, back.size() * 4),
            MXC_OK);
  for (int i = 0; i < n_ops; ++i) {
    EXPECT_EQ(std::memcmp(back.data() + n * i, src[i].data(), n * 4), 0) << i;
  }
  for (mxc__var *v : vars) mxc__engine_delete_var(e, v, nullptr, nullptr);
  mxc__engine_destroy(e);
  EXPECT_EQ(LiveEvents(), events);
  mxc__gpu_free(0, dev);
}

// Where no event can be made (the fake's event_create fails), the
// workers wait for their streams instead.
TEST(GpuEngineStreams, WithoutEventsWorkersWaitForTheirStreams) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  FakeSet("mxc_fake_gpu_fail_events", 1);
  CheckWorkersWait();
  FakeSet("mxc_fake_gpu_fail_events", 0);
}

// MXC_GPU_EVENTS=0 (read when a GPU's pools are made; no other thread
// reads the environment between two engines here) does the same.
TEST(GpuEngineStreams, EventsOffWorkersWaitForTheirStreams) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  ASSERT_EQ(setenv("MXC_GPU_EVENTS", "0", 1), 0);
  CheckWorkersWait();
  ASSERT_EQ(unsetenv("MXC_GPU_EVENTS"), 0);
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
