// Helpers shared by the engine tests: pushing C++ closures, gates with
// timeouts, and a per-kind fixture that checks nothing leaks.
#ifndef MXC_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
#define MXC_TESTS_ENGINE_ENGINE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/engine/engine.h"
}

namespace mxct {

// Scale for sanitizer builds (set by --config=asan / --config=tsan).
#if defined(MXC_SANITIZER_TSAN)
constexpr int kScale = 2;
#elif defined(MXC_SANITIZER_ASAN)
constexpr int kScale = 1;
#else
constexpr int kScale = 1;
#endif

// A one-shot latch that waits with a timeout instead of hanging forever.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lk(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool Wait(double seconds = 20.0) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::duration<double>(seconds),
                        [&] { return open_; });
  }
  bool IsOpen() {
    std::lock_guard<std::mutex> lk(mu_);
    return open_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Rendezvous of n parties: Arrive() returns true once all n arrived, false
// on timeout (which proves they could not all run at once).
class Rendezvous {
 public:
  explicit Rendezvous(int n) : n_(n) {}
  bool Arrive(double seconds = 20.0) {
    std::unique_lock<std::mutex> lk(mu_);
    arrived_++;
    cv_.notify_all();
    return cv_.wait_for(lk, std::chrono::duration<double>(seconds),
                        [&] { return arrived_ >= n_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_;
  int arrived_ = 0;
};

struct Closure {
  std::function<int(mxc__exec *)> sync;
  std::function<void(mxc__exec *)> async;
  std::atomic<int> *frees = nullptr;
  std::string name;
};

inline int RunSync(void *arg, mxc__exec *ex) {
  return static_cast<Closure *>(arg)->sync(ex);
}
inline void RunAsync(void *arg, mxc__exec *ex) {
  static_cast<Closure *>(arg)->async(ex);
}
inline void FreeClosure(void *arg) {
  auto *c = static_cast<Closure *>(arg);
  if (c->frees) c->frees->fetch_add(1);
  delete c;
}

struct PushOpts {
  int priority = 0;
  std::string name = "op";
  std::atomic<int> *frees = nullptr;
  mxc__device dev = {MXC_DEVICE_CPU, 0};
  int run_here = 0;
};

inline PushOpts Named(const std::string &name, int priority = 0,
                      std::atomic<int> *frees = nullptr) {
  PushOpts o;
  o.name = name;
  o.priority = priority;
  o.frees = frees;
  return o;
}

using Vars = std::vector<mxc__var *>;

inline int PushClosure(mxc__engine *e, Closure *c, const Vars &reads,
                       const Vars &writes, const PushOpts &o) {
  c->frees = o.frees;
  c->name = o.name;
  mxc__push_args a{};
  if (c->sync) {
    a.sync_fn = RunSync;
  } else {
    a.async_fn = RunAsync;
  }
  a.arg = c;
  a.free_fn = FreeClosure;
  a.reads = reads.data();
  a.n_reads = (int)reads.size();
  a.writes = writes.data();
  a.n_writes = (int)writes.size();
  a.priority = o.priority;
  a.name = c->name.c_str();  // lives until free_fn
  a.dev = o.dev;
  a.run_here = o.run_here;
  int rc = mxc__engine_push(e, &a);
  if (rc != MXC_OK) delete c;  // not scheduled: free_fn is not called
  return rc;
}

inline int Push(mxc__engine *e, std::function<int(mxc__exec *)> fn,
                const Vars &reads, const Vars &writes,
                const PushOpts &o = PushOpts()) {
  auto *c = new Closure;
  c->sync = std::move(fn);
  return PushClosure(e, c, reads, writes, o);
}

inline int PushAsync(mxc__engine *e, std::function<void(mxc__exec *)> fn,
                     const Vars &reads, const Vars &writes,
                     const PushOpts &o = PushOpts()) {
  auto *c = new Closure;
  c->async = std::move(fn);
  return PushClosure(e, c, reads, writes, o);
}

inline std::string KindName(const ::testing::TestParamInfo<int> &info) {
  return info.param == MXC__ENGINE_NAIVE ? "Naive" : "Threaded";
}

// Creates an engine of the parameter's kind; at the end waits, deletes the
// variables still owned, destroys the engine and checks the allocator's
// live-block count came back to where it was.
class EngineTest : public ::testing::TestWithParam<int> {
 protected:
  static constexpr int kWorkers = 4;

  void SetUp() override {
    live0_ = mxc__alloc_live();
    ASSERT_EQ(mxc__engine_create(GetParam(), kWorkers, &e_), MXC_OK)
        << mxc__error_msg();
  }
  void TearDown() override {
    if (e_ != nullptr) {
      mxc__engine_wait_all(e_);
      for (mxc__var *v : vars_) mxc__engine_delete_var(e_, v, nullptr, nullptr);
      mxc__engine_destroy(e_);
    }
    EXPECT_EQ(mxc__alloc_live(), live0_) << "engine leaked blocks";
  }
  mxc__var *NewVar() {
    mxc__var *v = nullptr;
    EXPECT_EQ(mxc__engine_new_var(e_, &v), MXC_OK) << mxc__error_msg();
    vars_.push_back(v);
    return v;
  }
  // The test takes v over (to delete it itself).
  void Forget(mxc__var *v) {
    for (auto &x : vars_) {
      if (x == v) {
        x = vars_.back();
        vars_.pop_back();
        return;
      }
    }
  }
  bool Threaded() const { return GetParam() == MXC__ENGINE_THREADED; }

  mxc__engine *e_ = nullptr;
  std::vector<mxc__var *> vars_;
  int64_t live0_ = 0;
};

}  // namespace mxct

#endif  // MXC_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
