// Stress: thousands of random functions over 100 variables pushed from 4
// threads, checked against a sequential replay.
//
// A test-side mutex around each push hands out a global sequence number,
// so the push order is known. Each function records the values of the
// variables it reads and writes, then mixes them into its write variables.
// Some functions fail, and some steps are wait_var / wait_all calls made
// under the same mutex, so the poisoning and clearing they cause is
// deterministic too. The replay, in sequence order, must reproduce whether
// each function ran, every value it saw, every wait's result, and each
// variable's final value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/engine/engine_test_util.h"

namespace mxct {
namespace {

constexpr int kVars = 100;
constexpr int kHotVars = 8;
constexpr int kThreads = 4;
const int kSteps = 60000 / kScale;

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  return x;
}

enum StepKind { kOp, kWaitVar, kWaitAll };

struct Step {
  int seq = 0;
  StepKind kind = kOp;
  // kOp
  std::vector<int> reads, writes;  // as pushed: duplicates and overlaps
  bool fail = false, async = false;
  bool ran = false;
  std::vector<uint64_t> seen;  // reads' then writes' values at the start
  // kWaitVar / kWaitAll
  int var = -1, for_write = 0, rc = MXC_OK;
  std::string msg;
};

std::string OpName(int seq) { return "op" + std::to_string(seq); }

// The function body, shared by the engine run and the replay.
int Body(Step *s, uint64_t *state) {
  for (int v : s->reads) s->seen.push_back(state[v]);
  for (int v : s->writes) s->seen.push_back(state[v]);
  if (s->fail) return MXC_ERR_IO;
  uint64_t h = (uint64_t)s->seq;
  for (uint64_t x : s->seen) h = Mix(h, x);
  for (size_t i = 0; i < s->writes.size(); i++) {
    uint64_t &x = state[s->writes[i]];
    x = Mix(x, h + i);
  }
  return MXC_OK;
}

struct World {
  mxc__engine *e = nullptr;
  mxc__var *vars[kVars] = {};
  uint64_t state[kVars] = {};
  std::vector<Step> steps;
  std::mutex push_mu;  // serializes pushes: order = sequence numbers
  int next = 0;
  std::atomic<int> push_errors{0};
};

int PickVar(std::mt19937_64 &rng) {
  return rng() % 2 ? (int)(rng() % kHotVars) : (int)(rng() % kVars);
}

void MakeOp(Step &s, std::mt19937_64 &rng) {
  int nr = (int)(rng() % 4), nw = (int)(rng() % 3);
  if (nr + nw == 0) nw = 1;
  for (int i = 0; i < nr; i++) s.reads.push_back(PickVar(rng));
  for (int i = 0; i < nw; i++) s.writes.push_back(PickVar(rng));
  if (nw > 0 && rng() % 6 == 0) s.reads.push_back(s.writes[0]);  // overlap
  s.fail = rng() % 400 == 0;
  s.async = rng() % 8 == 0;
}

void PushStep(World &w, Step &s, int priority) {
  Vars reads, writes;
  for (int v : s.reads) reads.push_back(w.vars[v]);
  for (int v : s.writes) writes.push_back(w.vars[v]);
  Step *sp = &s;
  uint64_t *state = w.state;
  int rc;
  if (s.async) {
    rc = PushAsync(
        w.e,
        [sp, state](mxc__exec *ex) {
          sp->ran = true;
          int code = Body(sp, state);
          std::string m = "injected failure " + std::to_string(sp->seq);
          mxc__exec_complete(ex, code, code ? m.c_str() : nullptr);
        },
        reads, writes, Named(OpName(s.seq), priority));
  } else {
    rc = Push(
        w.e,
        [sp, state](mxc__exec *ex) {
          sp->ran = true;
          int code = Body(sp, state);
          if (code) {
            std::string m = "injected failure " + std::to_string(sp->seq);
            mxc__exec_set_error(ex, m.c_str());
          }
          return code;
        },
        reads, writes, Named(OpName(s.seq), priority));
  }
  if (rc != MXC_OK) w.push_errors++;
}

void Pusher(World *w, int tid) {
  std::mt19937_64 rng(1234 + tid);
  for (;;) {
    std::lock_guard<std::mutex> lk(w->push_mu);
    if (w->next >= (int)w->steps.size()) return;
    Step &s = w->steps[w->next];
    s.seq = w->next++;
    uint64_t dice = rng() % 1000;
    if (dice < 8) {
      s.kind = kWaitVar;
      s.var = PickVar(rng);
      s.for_write = (int)(rng() % 2);
      s.rc = mxc__engine_wait_var(w->e, w->vars[s.var], s.for_write);
      if (s.rc != MXC_OK) s.msg = mxc__error_msg();
    } else if (dice < 11) {
      s.kind = kWaitAll;
      s.rc = mxc__engine_wait_all(w->e);
      if (s.rc != MXC_OK) s.msg = mxc__error_msg();
    } else {
      MakeOp(s, rng);
      PushStep(*w, s, (int)(rng() % 5) - 2);
    }
  }
}

// The failure message names a function that failed by itself (not one
// skipped because of another).
void ExpectNamesAFailure(const std::string &msg, const std::set<int> &failed,
                         int at) {
  int seq = -1;
  ASSERT_EQ(sscanf(msg.c_str(), "operator 'op%d' failed:", &seq), 1)
      << "step " << at << ": " << msg;
  EXPECT_TRUE(failed.count(seq)) << "step " << at << ": " << msg;
  EXPECT_EQ(msg, "operator 'op" + std::to_string(seq) +
                     "' failed: injected failure " + std::to_string(seq));
}

void Replay(const World &w, const uint64_t *initial) {
  std::vector<uint64_t> state(initial, initial + kVars);
  std::vector<bool> poisoned(kVars, false);
  std::set<int> failed_all, failed_epoch;  // failed by themselves
  int ran = 0, skipped = 0;
  for (const Step &s : w.steps) {
    if (s.kind == kWaitVar) {
      ASSERT_EQ(s.rc, poisoned[s.var] ? MXC_ERR_IO : MXC_OK)
          << "wait_var at step " << s.seq;
      if (s.rc != MXC_OK) ExpectNamesAFailure(s.msg, failed_all, s.seq);
      poisoned[s.var] = false;
      continue;
    }
    if (s.kind == kWaitAll) {
      ASSERT_EQ(s.rc, failed_epoch.empty() ? MXC_OK : MXC_ERR_IO)
          << "wait_all at step " << s.seq;
      if (s.rc != MXC_OK) ExpectNamesAFailure(s.msg, failed_epoch, s.seq);
      std::fill(poisoned.begin(), poisoned.end(), false);
      failed_epoch.clear();
      continue;
    }
    bool skip = false;
    for (int v : s.reads) skip = skip || poisoned[v];
    for (int v : s.writes) skip = skip || poisoned[v];
    ASSERT_EQ(s.ran, !skip) << "step " << s.seq;
    if (skip) {
      skipped++;
      for (int v : s.writes) poisoned[v] = true;
      continue;
    }
    ran++;
    Step copy;
    copy.seq = s.seq;
    copy.reads = s.reads;
    copy.writes = s.writes;
    copy.fail = s.fail;
    Body(&copy, state.data());
    ASSERT_EQ(copy.seen, s.seen) << "values seen by step " << s.seq;
    if (s.fail) {
      failed_all.insert(s.seq);
      failed_epoch.insert(s.seq);
      for (int v : s.writes) poisoned[v] = true;
    }
  }
  for (int v = 0; v < kVars; v++) {
    EXPECT_EQ(state[v], w.state[v]) << "final value of var " << v;
  }
  // Enough of both for the test to mean something.
  EXPECT_GT(ran, (int)w.steps.size() / 2);
  EXPECT_GT(skipped, 20);
  printf("steps %zu: ran %d, skipped %d, failed %zu\n", w.steps.size(), ran,
         skipped, failed_all.size());
}

class Stress : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(Kinds, Stress,
                         ::testing::Values(MXC__ENGINE_NAIVE,
                                           MXC__ENGINE_THREADED),
                         KindName);

TEST_P(Stress, RandomFunctionsMatchASequentialReplay) {
  int64_t live0 = mxc__alloc_live();
  World w;
  w.steps.resize(kSteps);
  ASSERT_EQ(mxc__engine_create(GetParam(), 3, &w.e), MXC_OK);
  uint64_t initial[kVars];
  for (int v = 0; v < kVars; v++) {
    ASSERT_EQ(mxc__engine_new_var(w.e, &w.vars[v]), MXC_OK);
    initial[v] = w.state[v] = Mix(v, 42);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(Pusher, &w, t);
  for (auto &t : threads) t.join();
  int rc = mxc__engine_wait_all(w.e);
  std::string msg = rc ? mxc__error_msg() : "";
  EXPECT_EQ(w.push_errors.load(), 0);
  Replay(w, initial);
  // The final wait_all: failures after the last in-sequence wait_all.
  bool any = false;
  for (int i = kSteps - 1; i >= 0 && w.steps[i].kind != kWaitAll; i--) {
    any = any || (w.steps[i].kind == kOp && w.steps[i].fail && w.steps[i].ran);
  }
  EXPECT_EQ(rc, any ? MXC_ERR_IO : MXC_OK) << msg;
  for (int v = 0; v < kVars; v++) {
    mxc__engine_delete_var(w.e, w.vars[v], nullptr, nullptr);
  }
  mxc__engine_destroy(w.e);
  EXPECT_EQ(mxc__alloc_live(), live0);
}

// No global order this time: four threads push over shared variables at
// will (so multi-variable pushes race each other), push from inside
// functions, and create and delete variables. Checks per-variable write
// counts, deletions, and that nothing deadlocks or races.
TEST_P(Stress, ConcurrentPushersWithoutAGlobalOrder) {
  int64_t live0 = mxc__alloc_live();
  mxc__engine *e = nullptr;
  ASSERT_EQ(mxc__engine_create(GetParam(), 3, &e), MXC_OK);
  const int nv = 16;
  mxc__var *vars[nv];
  int64_t count[nv] = {};  // guarded by the engine (writers of var i)
  std::atomic<int64_t> expect[nv];
  for (int i = 0; i < nv; i++) {
    ASSERT_EQ(mxc__engine_new_var(e, &vars[i]), MXC_OK);
    expect[i] = 0;
  }
  std::atomic<int> deleted{0}, errors{0};
  const int per_thread = 24000 / kScale / kThreads;
  auto pusher = [&](int tid) {
    std::mt19937 rng(99 + tid);
    for (int k = 0; k < per_thread; k++) {
      Vars reads, writes;
      std::set<int> wset;
      int nr = (int)(rng() % 3), nw = 1 + (int)(rng() % 3);
      for (int i = 0; i < nr; i++) reads.push_back(vars[rng() % nv]);
      for (int i = 0; i < nw; i++) {
        int j = (int)(rng() % nv);
        writes.push_back(vars[j]);
        wset.insert(j);
      }
      for (int j : wset) expect[j]++;
      std::vector<int> ws(wset.begin(), wset.end());
      bool nested = rng() % 50 == 0;
      if (nested) expect[ws[0]]++;
      int rc = Push(
          e,
          [&, ws, nested, reads](mxc__exec *) {
            int64_t sum = 0;
            for (int i = 0; i < nv; i++) {
              for (mxc__var *r : reads) sum += r == vars[i] ? count[i] : 0;
            }
            (void)sum;
            for (int j : ws) count[j]++;
            if (nested) {
              int j = ws[0];
              if (Push(e,
                       [&count, j](mxc__exec *) {
                         count[j]++;
                         return MXC_OK;
                       },
                       {}, {vars[j]}) != MXC_OK) {
                errors++;
              }
            }
            return MXC_OK;
          },
          reads, writes, Named("op", (int)(rng() % 3) - 1));
      if (rc != MXC_OK) errors++;
      if (k % 500 == 0) {  // a private variable, used and deleted
        mxc__var *t = nullptr;
        if (mxc__engine_new_var(e, &t) != MXC_OK) {
          errors++;
          continue;
        }
        Push(e, [](mxc__exec *) { return MXC_OK; }, {writes[0]}, {t});
        mxc__engine_delete_var(
            e, t,
            [](void *p) { static_cast<std::atomic<int> *>(p)->fetch_add(1); },
            &deleted);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(pusher, t);
  for (auto &t : threads) t.join();
  ASSERT_EQ(mxc__engine_wait_all(e), MXC_OK);
  EXPECT_EQ(errors.load(), 0);
  for (int i = 0; i < nv; i++) EXPECT_EQ(count[i], expect[i].load()) << i;
  EXPECT_EQ(deleted.load(), kThreads * ((per_thread + 499) / 500));
  for (int i = 0; i < nv; i++)
    mxc__engine_delete_var(e, vars[i], nullptr, nullptr);
  mxc__engine_destroy(e);
  EXPECT_EQ(mxc__alloc_live(), live0);
}

}  // namespace
}  // namespace mxct
