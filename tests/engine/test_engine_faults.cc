// Allocation-failure injection over a whole engine scenario, and the
// process-wide default engine with its environment configuration.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/engine/engine_test_util.h"

extern "C" {
#include "core/engine/config.h"
}

namespace mxct {
namespace {

void CountDeleted(void *arg) {
  static_cast<std::atomic<int> *>(arg)->fetch_add(1);
}

struct Outcome {
  int rc = MXC_OK;       // the first failure of the scenario, or MXC_OK
  bool retry_ok = true;  // the engine still worked after that failure
  int frees = 0, pushed = 0, deleted = 0, made = 0;
};

// Every engine call that allocates, in one go: create, variables, pushes
// (small, with more vars than fit inline, failing, async), waits, a worker
// resize, deletion and destroy. Stops at the first failure, then proves
// the engine still works and tears everything down.
Outcome Scenario(int kind) {
  Outcome out;
  mxc__engine *e = nullptr;
  out.rc = mxc__engine_create(kind, 2, &e);
  if (out.rc != MXC_OK) return out;
  const int nv = 8;
  mxc__var *v[nv] = {};
  std::atomic<int> frees{0}, deleted{0};
  for (; out.made < nv && out.rc == MXC_OK; out.made++) {
    out.rc = mxc__engine_new_var(e, &v[out.made]);
    if (out.rc != MXC_OK) break;
  }
  auto step = [&](int rc) {
    if (out.rc == MXC_OK) out.rc = rc;
    return out.rc == MXC_OK;
  };
  auto counted = [&](int rc) {
    if (rc == MXC_OK) out.pushed++;
    return rc;
  };
  if (out.rc == MXC_OK) {
    step(counted(Push(
        e, [](mxc__exec *) { return MXC_OK; }, {v[0]}, {v[1]},
        Named("small", 0, &frees))));
  }
  if (out.rc == MXC_OK) {
    step(counted(Push(
        e, [](mxc__exec *) { return MXC_OK; }, {v[0], v[1], v[2], v[0]},
        {v[3], v[4], v[5], v[6]}, Named("wide", 1, &frees))));
  }
  if (out.rc == MXC_OK) {
    step(counted(Push(
        e,
        [](mxc__exec *ex) {
          mxc__exec_set_error(ex, "injected");
          return MXC_ERR_IO;
        },
        {v[1]}, {v[7]}, Named("failing", 0, &frees))));
  }
  if (out.rc == MXC_OK) {
    step(counted(PushAsync(
        e, [](mxc__exec *ex) { mxc__exec_complete(ex, MXC_OK, nullptr); },
        {v[3]}, {v[2]}, Named("async", 0, &frees))));
  }
  if (out.rc == MXC_OK) {
    EXPECT_EQ(mxc__engine_wait_var(e, v[2], 1), MXC_OK);
    int w = mxc__engine_wait_var(e, v[7], 0);
    EXPECT_EQ(w, MXC_ERR_IO);  // the message may be degraded under OOM
  }
  if (out.rc == MXC_OK && kind == MXC__ENGINE_THREADED) {
    step(mxc__engine_set_num_workers(e, 3));
    EXPECT_EQ(mxc__engine_num_workers(e), out.rc == MXC_OK ? 3 : 2);
  }
  if (out.rc != MXC_OK && out.made > 0) {
    // The failure was clean: the next push works and runs.
    std::atomic<bool> ran{false};
    int rc = counted(Push(
        e,
        [&ran](mxc__exec *) {
          ran = true;
          return MXC_OK;
        },
        {}, {v[0]}, Named("retry", 0, &frees)));
    mxc__engine_wait_var(e, v[0], 1);
    out.retry_ok = rc == MXC_OK && ran.load();
  }
  mxc__engine_wait_all(e);
  for (int i = 0; i < out.made; i++) {
    mxc__engine_delete_var(e, v[i], CountDeleted, &deleted);
  }
  mxc__engine_destroy(e);
  out.frees = frees.load();
  out.deleted = deleted.load();
  return out;
}

class Faults : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(Kinds, Faults,
                         ::testing::Values(MXC__ENGINE_NAIVE,
                                           MXC__ENGINE_THREADED),
                         KindName);

TEST_P(Faults, EveryAllocationFailureIsCleanAndLeakFree) {
  int64_t n = 1;
  int oom_runs = 0;
  for (; n < 5000; n++) {
    int64_t live0 = mxc__alloc_live();
    mxc__fault_alloc_arm(n, 0);
    Outcome o = Scenario(GetParam());
    bool fired = mxc__fault_alloc_fired() != 0;
    mxc__fault_alloc_arm(0, 0);
    ASSERT_EQ(mxc__alloc_live(), live0)
        << "leak with allocation " << n << " failing";
    EXPECT_EQ(o.frees, o.pushed) << "at allocation " << n;
    EXPECT_EQ(o.deleted, o.made) << "at allocation " << n;
    EXPECT_TRUE(o.retry_ok) << "engine unusable after failure " << n;
    if (!fired) {
      EXPECT_EQ(o.rc, MXC_OK) << mxc__error_msg();
      break;
    }
    // A failed failure record falls back to a static one: still success.
    EXPECT_TRUE(o.rc == MXC_OK || o.rc == MXC_ERR_OOM)
        << "allocation " << n << ": rc " << o.rc << " " << mxc__error_msg();
    if (o.rc == MXC_ERR_OOM) oom_runs++;
  }
  printf("fault walk: %d allocation points, %d ended in MXC_ERR_OOM\n",
         (int)n - 1, oom_runs);
  EXPECT_LT(n, 5000) << "the scenario never ran without a failure";
  EXPECT_GT(oom_runs, 5) << "injection did not reach the engine";
}

TEST_P(Faults, PersistentOutOfMemory) {
  // Every allocation fails from some point on: calls fail cleanly, and
  // deleting and destroying still work without allocating.
  int64_t live0 = mxc__alloc_live();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(GetParam(), 2, &e), MXC_OK);
  mxc__var *v = nullptr;
  ASSERT_EQ(mxc__engine_new_var(e, &v), MXC_OK);
  std::atomic<int> deleted{0};
  mxc__fault_alloc_arm(1, 1);
  mxc__var *w = nullptr;
  EXPECT_EQ(mxc__engine_new_var(e, &w), MXC_ERR_OOM);
  EXPECT_EQ(w, nullptr);
  // The threaded engine needs a record (none cached yet) and a dep array;
  // the naive engine allocates nothing to push.
  std::atomic<int> frees{0};
  int rc = Push(
      e, [](mxc__exec *) { return MXC_OK; }, {}, Vars(9, v),
      Named("big", 0, &frees));
  bool threaded = GetParam() == MXC__ENGINE_THREADED;
  EXPECT_EQ(rc, threaded ? MXC_ERR_OOM : MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e, v, 1), MXC_OK);  // waits never allocate
  EXPECT_EQ(mxc__engine_wait_all(e), MXC_OK);
  mxc__engine_delete_var(e, v, CountDeleted, &deleted);
  mxc__engine_destroy(e);
  mxc__fault_alloc_arm(0, 0);
  EXPECT_EQ(deleted.load(), 1);
  EXPECT_EQ(frees.load(), threaded ? 0 : 1);
  EXPECT_EQ(mxc__alloc_live(), live0);
}

// ---- the default engine
// ------------------------------------------------------

class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    const char *old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

TEST(DefaultEngine, ConfigFromEnvironment) {
  struct Case {
    const char *engine, *threads;
    int kind, workers;  // workers -1: the online CPU count
  };
  const Case cases[] = {
      {nullptr, nullptr, MXC__ENGINE_THREADED, -1},
      {"naive", "3", MXC__ENGINE_NAIVE, 3},
      {"threaded", "5", MXC__ENGINE_THREADED, 5},
      {"bogus", "0", MXC__ENGINE_THREADED, -1},
      {"NaiveEngine", "-4", MXC__ENGINE_THREADED, -1},
      {"", "12abc", MXC__ENGINE_THREADED, -1},
      {"naive", "100000", MXC__ENGINE_NAIVE, 1024},
      {"naive", "", MXC__ENGINE_NAIVE, -1},
  };
  for (const Case &c : cases) {
    ScopedEnv a("MXC_ENGINE", c.engine), b("MXC_NUM_THREADS", c.threads);
    int kind = -1, workers = -1;
    mxc__engine_env_config(&kind, &workers);
    EXPECT_EQ(kind, c.kind) << (c.engine ? c.engine : "(unset)");
    if (c.workers > 0) {
      EXPECT_EQ(workers, c.workers) << (c.threads ? c.threads : "(unset)");
    } else {
      EXPECT_GE(workers, 1);
      EXPECT_LE(workers, 1024);
    }
  }
}

TEST(DefaultEngine, CreatedOnceFromTheEnvironment) {
  // The only test in this binary that touches the default engine, so the
  // environment set here is what it is made from.
  ScopedEnv a("MXC_ENGINE", "naive"), b("MXC_NUM_THREADS", "3");
  mxc__engine *e1 = nullptr, *e2 = nullptr;
  EXPECT_EQ(mxc__engine_default(nullptr), MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc__engine_default(&e1), MXC_OK);
  ASSERT_EQ(mxc__engine_default(&e2), MXC_OK);
  EXPECT_EQ(e1, e2);
  EXPECT_EQ(mxc__engine_kind(e1), MXC__ENGINE_NAIVE);
  EXPECT_EQ(mxc__engine_num_workers(e1), 3);
  mxc__var *v = nullptr;
  ASSERT_EQ(mxc__engine_new_var(e1, &v), MXC_OK);
  int x = 0;
  ASSERT_EQ(Push(e1,
                 [&x](mxc__exec *) {
                   x = 1;
                   return MXC_OK;
                 },
                 {}, {v}),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e1, v, 0), MXC_OK);
  EXPECT_EQ(x, 1);
  mxc__engine_delete_var(e1, v, nullptr, nullptr);
}

}  // namespace
}  // namespace mxct
