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
#include <thread>
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

// ---- Stream waits: a GPU function whose dependency is a GPU function of
// the same GPU starts behind a stream wait for that one's event, not
// after the host saw it complete (core/engine/var.c, "Stream waits"). ----

struct Edges {
  long long stream_waits = 0, host_grants = 0;
  int fake_waits = 0;
};

Edges EdgesNow() {
  Edges x;
  mxc__engine_gpu_edges(&x.stream_waits, &x.host_grants);
  x.fake_waits = FakeCount("mxc_fake_gpu_stream_waits");
  return x;
}

// One device-to-device copy of gpu(0), enqueued on the worker's stream:
// dst is stale (the poison it was filled with) if it ran before the copy
// that wrote src.
struct D2D {
  const float *src;
  float *dst;
  size_t n;
};

int D2DFn(void *arg, mxc__exec *ex) {
  D2D *c = static_cast<D2D *>(arg);
  int rc = mxc__gpu_copy(c->dst, 0, c->src, 0, c->n * 4);
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

void FreeD2D(void *arg) { delete static_cast<D2D *>(arg); }

// Pushes dst = src on gpu(0)'s compute (copy 0) or copy lane, reading
// `in` (may be null: no dependency) and writing `out`.
int PushD2D(mxc__engine *e, const float *src, float *dst, size_t n,
            mxc__var *in, mxc__var *out, int copy, const char *name) {
  mxc__push_args a;
  std::memset(&a, 0, sizeof a);
  a.sync_fn = D2DFn;
  a.arg = new D2D{src, dst, n};
  a.free_fn = FreeD2D;
  a.reads = &in;
  a.n_reads = in != nullptr;
  a.writes = &out;
  a.n_writes = 1;
  a.name = name;
  a.dev.type = MXC_DEVICE_GPU;
  a.copy = copy;
  return mxc__engine_push(e, &a);
}

// Fills n floats of device memory with value (a synchronous copy).
void Fill(float *dev, size_t n, float value) {
  std::vector<float> host(n, value);
  ASSERT_EQ(mxc__gpu_copy(dev, 0, host.data(), MXC__GPU_HOST, n * 4), MXC_OK);
}

std::vector<float> Download(const float *dev, size_t n) {
  std::vector<float> host(n, 0.f);
  EXPECT_EQ(mxc__gpu_copy(host.data(), MXC__GPU_HOST, dev, 0, n * 4), MXC_OK);
  return host;
}

// A chain x[k] = x[k-1] over device buffers, alternating the compute and
// copy lanes of gpu(0) (two streams or more), pushed while the fake's
// streams serve nothing. Every copy is enqueued at once although each
// depends on the one before, which has not run: the workers started them
// behind stream waits, the host waited for none. Once served, every
// buffer holds x[0] (a copy that ran before its source was written would
// hold the poison).
TEST(GpuEngineStreams, ChainOverTwoStreamsStartsBehindStreamWaits) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  const int steps = 30;
  const size_t n = 129;
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4 * (steps + 1)));
  ASSERT_NE(dev, nullptr);
  std::vector<float> x0(n);
  for (size_t i = 0; i < n; ++i) x0[i] = (float)(i * 7 + 1);
  ASSERT_EQ(mxc__gpu_copy(dev, 0, x0.data(), MXC__GPU_HOST, n * 4), MXC_OK);
  Fill(dev + n, n * steps, -1.f);
  std::vector<mxc__var *> v(steps + 1, nullptr);
  for (auto &x : v) ASSERT_EQ(mxc__engine_new_var(e, &x), MXC_OK);
  const Edges before = EdgesNow();
  const int queued0 = FakeCount("mxc_fake_gpu_queued");
  FakeSet("mxc_fake_gpu_hold", 1);
  for (int k = 1; k <= steps; ++k) {
    ASSERT_EQ(PushD2D(e, dev + n * (k - 1), dev + n * k, n, v[k - 1], v[k],
                      k % 2, "step"),
              MXC_OK)
        << mxc__error_msg();
  }
  bool all_queued = QueuedReaches(queued0 + steps);
  const Edges held = EdgesNow();
  FakeSet("mxc_fake_gpu_hold", 0);
  EXPECT_TRUE(all_queued) << FakeCount("mxc_fake_gpu_queued") - queued0
                          << " of " << steps
                          << " queued: a dependent waited for the host";
  EXPECT_GE(held.stream_waits - before.stream_waits, steps - 1);
  EXPECT_GE(held.fake_waits - before.fake_waits, steps - 1);
  EXPECT_EQ(mxc__engine_wait_var(e, v[steps], 0), MXC_OK) << mxc__error_msg();
  for (int k = 0; k <= steps; ++k) {
    EXPECT_EQ(Download(dev + n * k, n), x0) << "x[" << k << "]";
  }
  for (auto &x : v) mxc__engine_delete_var(e, x, nullptr, nullptr);
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  mxc__engine_destroy(e);
  mxc__gpu_free(0, dev);
}

// MXC_GPU_STREAM_WAIT=0 (read when a GPU's pools are made): the same
// chain, pushed while the fake's streams are held, gets only its first
// step queued (the next waits for the host to see it complete, which
// cannot happen while held); released, each dependent is granted after
// its dependency completed on the host, and no stream wait is made.
TEST(GpuEngineStreams, StreamWaitOffGrantsOnTheHost) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  ASSERT_EQ(setenv("MXC_GPU_STREAM_WAIT", "0", 1), 0);
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  const int steps = 12;
  const size_t n = 33;
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4 * (steps + 1)));
  ASSERT_NE(dev, nullptr);
  Fill(dev, n, 3.5f);
  Fill(dev + n, n * steps, -1.f);
  std::vector<mxc__var *> v(steps + 1, nullptr);
  for (auto &x : v) ASSERT_EQ(mxc__engine_new_var(e, &x), MXC_OK);
  const Edges before = EdgesNow();
  const int queued0 = FakeCount("mxc_fake_gpu_queued");
  FakeSet("mxc_fake_gpu_hold", 1);
  for (int k = 1; k <= steps; ++k) {
    ASSERT_EQ(PushD2D(e, dev + n * (k - 1), dev + n * k, n, v[k - 1], v[k],
                      k % 2, "step"),
              MXC_OK);
  }
  bool first_queued = QueuedReaches(queued0 + 1);
  usleep(20000);  // room for a wrong early start to show (not a timing assert)
  const int queued_held = FakeCount("mxc_fake_gpu_queued") - queued0;
  FakeSet("mxc_fake_gpu_hold", 0);
  EXPECT_TRUE(first_queued);
  EXPECT_EQ(queued_held, 1);
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  const Edges after = EdgesNow();
  ASSERT_EQ(unsetenv("MXC_GPU_STREAM_WAIT"), 0);
  EXPECT_EQ(after.stream_waits, before.stream_waits);
  EXPECT_EQ(after.fake_waits, before.fake_waits);
  EXPECT_GE(after.host_grants - before.host_grants, steps - 1);
  EXPECT_EQ(Download(dev + n * steps, n), std::vector<float>(n, 3.5f));
  for (auto &x : v) mxc__engine_delete_var(e, x, nullptr, nullptr);
  mxc__engine_destroy(e);
  mxc__gpu_free(0, dev);
}

// An operation whose work fails on its stream after its dependents were
// enqueued behind its event (streams held): the dependents still fail
// with its failure, named at the waits, and the next epoch is clean.
TEST(GpuEngineStreams, UpstreamFaultPoisonsDependentsBehindItsEvent) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  const size_t n = 16;
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4 * 4));
  ASSERT_NE(dev, nullptr);
  Fill(dev, n * 4, 2.f);
  mxc__var *v[4] = {nullptr, nullptr, nullptr, nullptr};
  for (auto &x : v) ASSERT_EQ(mxc__engine_new_var(e, &x), MXC_OK);
  const Edges before = EdgesNow();
  const int queued0 = FakeCount("mxc_fake_gpu_queued");
  FakeSet("mxc_fake_gpu_hold", 1);
  ASSERT_EQ(PushFn(e, FailingCopy, nullptr, nullptr, v[0], 1, "faulty_up"),
            MXC_OK);
  ASSERT_EQ(PushD2D(e, dev, dev + n, n, v[0], v[1], 0, "behind"), MXC_OK);
  ASSERT_EQ(PushD2D(e, dev + n, dev + 2 * n, n, v[1], v[2], 1, "behind2"),
            MXC_OK);
  // Independent of the fault: succeeds.
  ASSERT_EQ(PushD2D(e, dev, dev + 3 * n, n, nullptr, v[3], 0, "aside"),
            MXC_OK);
  bool all_queued = QueuedReaches(queued0 + 4);
  const Edges held = EdgesNow();
  FakeSet("mxc_fake_gpu_hold", 0);
  EXPECT_TRUE(all_queued);
  EXPECT_GE(held.stream_waits - before.stream_waits, 2);
  for (int i : {2, 1, 0}) {
    EXPECT_NE(mxc__engine_wait_var(e, v[i], 0), MXC_OK) << i;
    std::string msg = mxc__error_msg();
    EXPECT_NE(msg.find("operator 'faulty_up' failed"), std::string::npos)
        << i << ": " << msg;
    EXPECT_NE(msg.find("outside device memory"), std::string::npos) << msg;
  }
  EXPECT_EQ(mxc__engine_wait_var(e, v[3], 0), MXC_OK) << mxc__error_msg();
  EXPECT_NE(mxc__engine_wait_all(e), MXC_OK);
  std::string msg = mxc__error_msg();
  EXPECT_NE(msg.find("'faulty_up'"), std::string::npos) << msg;
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  // Written again after the failure: the poison is gone.
  ASSERT_EQ(PushD2D(e, dev, dev + n, n, nullptr, v[1], 1, "rewrite"), MXC_OK);
  ASSERT_EQ(PushD2D(e, dev + n, dev + 2 * n, n, v[1], v[2], 0, "again"),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e, v[2], 0), MXC_OK) << mxc__error_msg();
  for (auto &x : v) mxc__engine_delete_var(e, x, nullptr, nullptr);
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  mxc__engine_destroy(e);
  mxc__gpu_free(0, dev);
}

// A CPU function: counts its runs.
int CpuTouch(void *arg, mxc__exec *ex) {
  (void)ex;
  static_cast<std::atomic<int> *>(arg)->fetch_add(1);
  return MXC_OK;
}

std::atomic<int> g_dependent_freed{0};

void FreeD2DCounted(void *arg) {
  g_dependent_freed.fetch_add(1);
  delete static_cast<D2D *>(arg);
}

void CountDeleted(void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); }

// Early grants are for the device only: with the streams held, a
// dependent GPU copy is enqueued behind its producer's event, but a CPU
// function reading its output, the deletion of the producer's variable
// and the dependent's free_fn all wait for the host to see the work
// complete (nothing ran while held); released, everything happens.
TEST(GpuEngineStreams, HostWorkBehindEarlyGrantsWaitsForTheHost) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1, &e), MXC_OK);
  const size_t n = 8;
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, n * 4 * 3));
  ASSERT_NE(dev, nullptr);
  Fill(dev, n, 4.f);
  Fill(dev + n, n * 2, -1.f);
  mxc__var *v[3] = {nullptr, nullptr, nullptr};
  for (auto &x : v) ASSERT_EQ(mxc__engine_new_var(e, &x), MXC_OK);
  std::atomic<int> cpu_runs{0}, deleted{0}, freed{0};
  const Edges before = EdgesNow();
  const int queued0 = FakeCount("mxc_fake_gpu_queued");
  FakeSet("mxc_fake_gpu_hold", 1);
  ASSERT_EQ(PushD2D(e, dev, dev + n, n, v[0], v[1], 1, "producer"), MXC_OK);
  std::vector<float> fours(n, 4.f);
  g_dependent_freed = 0;
  mxc__push_args a;
  std::memset(&a, 0, sizeof a);
  a.sync_fn = D2DFn;
  a.arg = new D2D{dev + n, dev + 2 * n, n};
  a.free_fn = FreeD2DCounted;
  a.reads = &v[1];
  a.n_reads = 1;
  a.writes = &v[2];
  a.n_writes = 1;
  a.name = "dependent";
  a.dev.type = MXC_DEVICE_GPU;
  ASSERT_EQ(mxc__engine_push(e, &a), MXC_OK);
  mxc__push_args c;
  std::memset(&c, 0, sizeof c);
  c.sync_fn = CpuTouch;
  c.arg = &cpu_runs;
  c.reads = &v[2];
  c.n_reads = 1;
  c.name = "cpu_reader";
  c.dev.type = MXC_DEVICE_CPU;
  ASSERT_EQ(mxc__engine_push(e, &c), MXC_OK);
  // A writer behind the dependent's read: write after read waits for
  // the host.
  ASSERT_EQ(PushFn(e, UploadFn, new Upload{fours.data(), dev + n, n, &freed},
                   FreeUpload, v[1], 0, "rewrite"),
            MXC_OK);
  mxc__engine_delete_var(e, v[0], CountDeleted, &deleted);
  bool queued = QueuedReaches(queued0 + 2);
  usleep(20000);  // room for a wrong early start to show (not a timing assert)
  const int cpu_held = cpu_runs.load(), deleted_held = deleted.load(),
            freed_held = freed.load() + g_dependent_freed.load();
  const int queued_held = FakeCount("mxc_fake_gpu_queued") - queued0;
  const Edges held = EdgesNow();
  FakeSet("mxc_fake_gpu_hold", 0);
  EXPECT_TRUE(queued);
  EXPECT_EQ(queued_held, 2) << "only the producer and the dependent";
  EXPECT_GE(held.stream_waits - before.stream_waits, 1);
  EXPECT_EQ(cpu_held, 0);
  EXPECT_EQ(deleted_held, 0);
  EXPECT_EQ(freed_held, 0);
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  EXPECT_EQ(cpu_runs.load(), 1);
  EXPECT_EQ(deleted.load(), 1);
  EXPECT_EQ(freed.load(), 1);
  EXPECT_EQ(g_dependent_freed.load(), 1);
  EXPECT_EQ(Download(dev + 2 * n, n), std::vector<float>(n, 4.f));
  for (int i = 1; i < 3; ++i) mxc__engine_delete_var(e, v[i], nullptr, nullptr);
  mxc__engine_destroy(e);
  mxc__gpu_free(0, dev);
}

// Several threads push chains at once over both lanes: each step copies
// the previous buffer (sometimes twice: a write behind a write), a
// second reader copies it aside (readers granted together behind one
// event), a CPU function sometimes writes the step's variable (a host
// round trip), and a wait sometimes reads it midway. Every buffer ends
// with the chain's first value. MXC_ENGINE_STRESS=1 runs ten times more.
TEST(GpuEngineStreams, ConcurrentChainsStress) {
  ASSERT_EQ(mxc__gpu_check(0, "test"), MXC_OK) << mxc__error_msg();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 2, &e), MXC_OK);
  const char *stress = std::getenv("MXC_ENGINE_STRESS");
  const int threads = 4, steps = stress && *stress == '1' ? 400 : 40;
  const size_t n = 24;
  const size_t per = n * 2 * (steps + 1);  // chain buffers and their asides
  float *dev = static_cast<float *>(mxc__gpu_alloc(0, per * 4 * threads));
  ASSERT_NE(dev, nullptr);
  Fill(dev, per * threads, -1.f);
  std::atomic<int> cpu_runs{0}, failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      float *x = dev + per * t, *aside = x + n * (steps + 1);
      std::vector<float> x0(n, (float)(t + 1));
      if (mxc__gpu_copy(x, 0, x0.data(), MXC__GPU_HOST, n * 4) != MXC_OK) {
        failures++;
        return;
      }
      std::vector<mxc__var *> v(steps + 1, nullptr), va(steps + 1, nullptr);
      for (int k = 0; k <= steps; ++k) {
        if (mxc__engine_new_var(e, &v[k]) != MXC_OK ||
            mxc__engine_new_var(e, &va[k]) != MXC_OK) {
          failures++;
          return;
        }
      }
      unsigned seed = 77u + (unsigned)t;
      int rc = MXC_OK;
      for (int k = 1; k <= steps && rc == MXC_OK; ++k) {
        int lane = (int)(rand_r(&seed) % 2u);
        rc = PushD2D(e, x + n * (k - 1), x + n * k, n, v[k - 1], v[k], lane,
                     "chain");
        if (rc == MXC_OK && rand_r(&seed) % 4u == 0) {
          rc = PushD2D(e, x + n * (k - 1), x + n * k, n, v[k - 1], v[k],
                       1 - lane, "chain_again");
        }
        if (rc == MXC_OK) {
          rc = PushD2D(e, x + n * (k - 1), aside + n * (k - 1), n, v[k - 1],
                       va[k - 1], (int)(rand_r(&seed) % 2u), "aside");
        }
        if (rc == MXC_OK && rand_r(&seed) % 5u == 0) {
          mxc__push_args a;
          std::memset(&a, 0, sizeof a);
          a.sync_fn = CpuTouch;
          a.arg = &cpu_runs;
          a.reads = &v[k];
          a.n_reads = 1;
          a.name = "cpu_touch";
          a.dev.type = MXC_DEVICE_CPU;
          rc = mxc__engine_push(e, &a);
        }
        if (rc == MXC_OK && rand_r(&seed) % 7u == 0) {
          rc = mxc__engine_wait_var(e, v[k], 0);
        }
      }
      if (rc == MXC_OK) rc = mxc__engine_wait_var(e, v[steps], 0);
      for (int k = 0; k <= steps && rc == MXC_OK; ++k) {
        rc = mxc__engine_wait_var(e, va[k], 0);
      }
      if (rc != MXC_OK) failures++;
      for (int k = 0; k <= steps; ++k) {
        mxc__engine_delete_var(e, v[k], nullptr, nullptr);
        mxc__engine_delete_var(e, va[k], nullptr, nullptr);
      }
    });
  }
  for (auto &th : pool) th.join();
  EXPECT_EQ(failures.load(), 0) << mxc__error_msg();
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK) << mxc__error_msg();
  for (int t = 0; t < threads; ++t) {
    const float *x = dev + per * t, *aside = x + n * (steps + 1);
    const std::vector<float> want(n, (float)(t + 1));
    for (int k = 0; k <= steps; ++k) {
      ASSERT_EQ(Download(x + n * k, n), want) << "thread " << t << " x" << k;
      if (k < steps) {
        ASSERT_EQ(Download(aside + n * k, n), want)
            << "thread " << t << " aside " << k;
      }
    }
  }
  mxc__engine_destroy(e);
  mxc__gpu_free(0, dev);
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
