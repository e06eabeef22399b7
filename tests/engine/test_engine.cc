// Unit tests of the dependency engine (core/engine), run for both kinds:
// ordering, concurrency of readers, nesting, async functions, deletion,
// waits, worker counts, failures and their poisoning, free functions and
// bad arguments. Failure injection and the default engine are in
// test_engine_faults.cc; the randomized stress test in
// test_engine_stress.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/engine/engine_test_util.h"

namespace mxct {
namespace {

using std::chrono::milliseconds;

class Engine : public EngineTest {};

INSTANTIATE_TEST_SUITE_P(Kinds, Engine,
                         ::testing::Values(MXC__ENGINE_NAIVE,
                                           MXC__ENGINE_THREADED),
                         KindName);

bool Contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

// ---- ordering --------------------------------------------------------------

TEST_P(Engine, WritesRunInPushOrderWhateverTheirPriority) {
  mxc__var *v = NewVar();
  std::vector<int> order;  // guarded by the engine: every op writes v
  std::mt19937 rng(1);
  const int n = 3000;
  for (int i = 0; i < n; i++) {
    int prio = (int)(rng() % 7) - 3;
    ASSERT_EQ(Push(
                  e_,
                  [&order, i](mxc__exec *) {
                    order.push_back(i);
                    return MXC_OK;
                  },
                  {}, {v}, Named("w", prio)),
              MXC_OK);
  }
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  ASSERT_EQ((int)order.size(), n);
  for (int i = 0; i < n; i++) ASSERT_EQ(order[i], i);
  EXPECT_EQ(mxc__engine_pending(e_), 0);
}

TEST_P(Engine, ReadersSeeTheLatestEarlierWrite) {
  mxc__var *v = NewVar();
  int x = -1;
  const int rounds = 300, readers = 4;
  std::vector<int> seen(rounds * readers, -2);
  for (int r = 0; r < rounds; r++) {
    ASSERT_EQ(Push(
                  e_,
                  [&x, r](mxc__exec *) {
                    x = r;
                    return MXC_OK;
                  },
                  {}, {v}, Named("write", r % 3)),
              MXC_OK);
    for (int k = 0; k < readers; k++) {
      int slot = r * readers + k;
      ASSERT_EQ(Push(
                    e_,
                    [&x, &seen, slot](mxc__exec *) {
                      seen[slot] = x;
                      return MXC_OK;
                    },
                    {v}, {}, Named("read", -(k % 2))),
                MXC_OK);
    }
  }
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  for (int i = 0; i < rounds * readers; i++) {
    ASSERT_EQ(seen[i], i / readers) << "reader " << i;
  }
}

TEST_P(Engine, WriteWaitsForEarlierReaders) {
  mxc__var *v = NewVar();
  std::atomic<int> x{7};
  std::atomic<bool> started{false};
  int first = 0, second = 0;
  Gate gate;
  if (!Threaded()) gate.Open();  // the naive engine runs it in push
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   started = true;
                   first = x.load();
                   gate.Wait();
                   second = x.load();
                   return MXC_OK;
                 },
                 {v}, {}),
            MXC_OK);
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   x = 8;
                   return MXC_OK;
                 },
                 {}, {v}),
            MXC_OK);
  if (Threaded()) {
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(milliseconds(30));  // a chance to misbehave
    gate.Open();
  }
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(first, 7);
  EXPECT_EQ(second, 7);
  EXPECT_EQ(x.load(), 8);
}

TEST_P(Engine, ReadersOfOneVersionRunConcurrently) {
  if (!Threaded()) GTEST_SKIP() << "the naive engine runs one op at a time";
  mxc__var *v = NewVar();
  int x = 0;
  ASSERT_EQ(Push(e_,
                 [&x](mxc__exec *) {
                   x = 5;
                   return MXC_OK;
                 },
                 {}, {v}),
            MXC_OK);
  // Three readers that can only all return true if they run at once.
  Rendezvous meet(3);
  std::atomic<int> met{0}, saw5{0};
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     if (x == 5) saw5++;
                     if (meet.Arrive()) met++;
                     return MXC_OK;
                   },
                   {v}, {}),
              MXC_OK);
  }
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(met.load(), 3) << "readers did not overlap";
  EXPECT_EQ(saw5.load(), 3);
}

TEST_P(Engine, IndependentOpsRunConcurrently) {
  if (!Threaded()) GTEST_SKIP() << "the naive engine runs one op at a time";
  Rendezvous meet(2);
  std::atomic<int> met{0};
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     if (meet.Arrive()) met++;
                     return MXC_OK;
                   },
                   {}, {NewVar()}),
              MXC_OK);
  }
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(met.load(), 2);
}

TEST_P(Engine, DuplicatesAreMergedAndReadPlusWriteIsAWrite) {
  mxc__var *v = NewVar(), *w = NewVar();
  int x = 0, y = 0;
  // Duplicates in and across both lists must not deadlock.
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   x = 1;
                   y = 1;
                   return MXC_OK;
                 },
                 {v, v, w, v}, {w, v, w, v}),
            MXC_OK);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 1);

  // A reader that holds v until the gate opens; an op reading and writing
  // v must wait for it, as a writer would.
  Gate gate;
  if (!Threaded()) gate.Open();
  std::atomic<bool> reader_done{false}, started{false}, rw_saw_done{false};
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   started = true;
                   gate.Wait();
                   reader_done = true;
                   return MXC_OK;
                 },
                 {v}, {}),
            MXC_OK);
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   rw_saw_done = reader_done.load();
                   x = 2;
                   return MXC_OK;
                 },
                 {v, v}, {v}),
            MXC_OK);
  int later = 0;
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   later = x;
                   return MXC_OK;
                 },
                 {v}, {}),
            MXC_OK);
  if (Threaded()) {
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(milliseconds(30));
    gate.Open();
  }
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_TRUE(rw_saw_done.load());
  EXPECT_EQ(later, 2);
}

TEST_P(Engine, ManyVarsPerOp) {
  // More vars than fit in an op record (and than insertion sort handles).
  const int n = 40;
  std::vector<mxc__var *> vs;
  for (int i = 0; i < n; i++) vs.push_back(NewVar());
  std::vector<int> val(n, 0);
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  for (int &x : val) x = 1;
                  return MXC_OK;
                },
                {}, vs),
            MXC_OK);
  Vars reads, writes;
  for (int i = 0; i < n; i++) {
    (i % 2 ? writes : reads).push_back(vs[(i * 7) % n]);
  }
  reads.push_back(vs[0]);  // duplicates
  writes.push_back(vs[1]);
  bool ok = true;
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  for (int i = 0; i < n; i++) ok = ok && val[i] == 1;
                  for (int i = 0; i < n; i++) {
                    if (i % 2) val[(i * 7) % n] = 2;
                  }
                  return MXC_OK;
                },
                reads, writes),
            MXC_OK);
  std::vector<int> seen;
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   seen = val;
                   return MXC_OK;
                 },
                 vs, {}),
            MXC_OK);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_TRUE(ok);
  for (int i = 0; i < n; i++) {
    int expect = 1;
    for (int j = 1; j < n; j += 2) {
      if ((j * 7) % n == i) expect = 2;
    }
    EXPECT_EQ(seen[i], expect) << i;
  }
}

// Wide pushes (Concat or add_n of 1000 arrays) against the narrow pushes
// of other threads over the same variables, in random orders: every op
// runs after the earlier writes of its variables, and nothing deadlocks
// (wide and narrow pushes must queue in one order on every variable they
// share). Under ThreadSanitizer this also checks that a push does not
// hold more locks at once than its deadlock detector tracks (64).
TEST_P(Engine, ThousandVarsPerPushAmongConcurrentPushes) {
  const int n = 1000, threads = 3, rounds = 20 / kScale;
  std::vector<mxc__var *> vs;
  for (int i = 0; i < n; i++) vs.push_back(NewVar());
  // Plain ints: two functions writing one concurrently would be a data
  // race (ThreadSanitizer) and could lose an increment.
  std::vector<int> val(n, 0);
  std::atomic<int> expect{0};
  auto worker = [&](int t) {
    std::mt19937 rng(t);
    for (int r = 0; r < rounds; r++) {
      // A wide op writes one var and reads all the others...
      int w = (int)(rng() % n);
      Vars reads;
      for (int i = 0; i < n; i++) {
        int k = (i * 7 + t) % n;
        if (k != w) reads.push_back(vs[k]);
      }
      ASSERT_EQ(Push(
                    e_,
                    [&, w](mxc__exec *) {
                      val[w]++;
                      return MXC_OK;
                    },
                    reads, {vs[w]}),
                MXC_OK);
      // ...and a narrow one writes two vars given in a random order.
      int a = (int)(rng() % n), b = (int)(rng() % n);
      expect += a == b ? 2 : 3;
      ASSERT_EQ(Push(
                    e_,
                    [&, a, b](mxc__exec *) {
                      val[a]++;
                      if (b != a) val[b]++;
                      return MXC_OK;
                    },
                    {}, {vs[a], vs[b]}),
                MXC_OK);
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++) ts.emplace_back(worker, t);
  for (auto &th : ts) th.join();
  // One more wide op reads every var after all of that.
  int total = 0;
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   for (int x : val) total += x;
                   return MXC_OK;
                 },
                 vs, {}),
            MXC_OK);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(total, expect.load());
}

TEST_P(Engine, HigherPriorityReadyWorkRunsFirst) {
  if (!Threaded()) GTEST_SKIP() << "the naive engine runs ops at push";
  ASSERT_EQ(mxc__engine_set_num_workers(e_, 1), MXC_OK);
  Gate gate;
  std::atomic<bool> started{false};
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   started = true;
                   gate.Wait();
                   return MXC_OK;
                 },
                 {}, {NewVar()}),
            MXC_OK);
  while (!started) std::this_thread::yield();
  // The one worker is busy: these queue up, then run by priority, FIFO
  // among equals.
  std::mutex mu;
  std::vector<std::string> order;
  const int prios[] = {0, 5, -3, 10, 0, 5, -3, 2};
  for (int i = 0; i < 8; i++) {
    std::string tag = std::to_string(prios[i]) + "#" + std::to_string(i);
    ASSERT_EQ(Push(
                  e_,
                  [&, tag](mxc__exec *) {
                    std::lock_guard<std::mutex> lk(mu);
                    order.push_back(tag);
                    return MXC_OK;
                  },
                  {}, {NewVar()}, Named(tag, prios[i])),
              MXC_OK);
  }
  gate.Open();
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  std::vector<std::string> want = {"10#3", "5#1", "5#5",  "2#7",
                                   "0#0",  "0#4", "-3#2", "-3#6"};
  EXPECT_EQ(order, want);
}

// ---- nesting and async
// -------------------------------------------------------

TEST_P(Engine, NestedPushFromInsideAFunction) {
  mxc__var *v = NewVar(), *w = NewVar();
  std::mutex mu;
  std::vector<std::string> log;
  auto note = [&](const std::string &s) {
    std::lock_guard<std::mutex> lk(mu);
    log.push_back(s);
  };
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  note("A start");
                  EXPECT_EQ(Push(e_,
                                 [&](mxc__exec *) {
                                   note("B");
                                   return MXC_OK;
                                 },
                                 {}, {v}),
                            MXC_OK);
                  EXPECT_EQ(Push(e_,
                                 [&](mxc__exec *) {
                                   note("C");
                                   return MXC_OK;
                                 },
                                 {v}, {w}),
                            MXC_OK);
                  note("A end");
                  return MXC_OK;
                },
                {}, {v}, Named("A")),
            MXC_OK);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  std::vector<std::string> want;
  if (Threaded()) {
    // B writes v, which A holds: it runs after A; C reads v after B.
    want = {"A start", "A end", "B", "C"};
  } else {
    // The naive engine runs nested pushes at once.
    want = {"A start", "B", "C", "A end"};
  }
  EXPECT_EQ(log, want);
}

TEST_P(Engine, WaitAllWaitsForWorkSpawnedByEarlierWork) {
  // Each function pushes the next one from inside itself (on the async
  // path too): wait_all must wait for the whole chain.
  mxc__var *v = NewVar(), *w = NewVar();
  std::atomic<int> depth{0};
  const int n = 60;
  std::function<void(int)> spawn = [&](int i) {
    auto body = [&, i]() {
      depth = i + 1;
      if (i + 1 < n) spawn(i + 1);
    };
    int rc;
    if (i % 3 == 2) {
      rc = PushAsync(e_,
                     [body](mxc__exec *ex) {
                       body();
                       mxc__exec_complete(ex, MXC_OK, nullptr);
                     },
                     {}, {v});
    } else {
      rc = Push(e_,
                [body](mxc__exec *) {
                  body();
                  return MXC_OK;
                },
                {v}, {w});
    }
    EXPECT_EQ(rc, MXC_OK);
  };
  spawn(0);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(depth.load(), n);
}

TEST_P(Engine, AsyncFunctionsCompletedFromOtherThreads) {
  mxc__var *v = NewVar();
  std::mutex mu;
  std::vector<std::thread> threads;
  int x = 0;
  const int n = 20;
  std::vector<int> seen(n, -1);
  for (int i = 0; i < n; i++) {
    ASSERT_EQ(PushAsync(
                  e_,
                  [&, i](mxc__exec *ex) {
                    std::lock_guard<std::mutex> lk(mu);
                    threads.emplace_back([ex, &x, i] {
                      std::this_thread::sleep_for(milliseconds(1));
                      x = i + 100;
                      mxc__exec_complete(ex, MXC_OK, nullptr);
                    });
                  },
                  {}, {v}, Named("async")),
              MXC_OK);
    ASSERT_EQ(Push(e_,
                   [&, i](mxc__exec *) {
                     seen[i] = x;
                     return MXC_OK;
                   },
                   {v}, {}),
              MXC_OK);
  }
  // An async function completing inside itself.
  ASSERT_EQ(PushAsync(
                e_,
                [&](mxc__exec *ex) {
                  x = -7;
                  EXPECT_STREQ(mxc__exec_name(ex), "inline");
                  mxc__exec_complete(ex, MXC_OK, nullptr);
                },
                {}, {v}, Named("inline")),
            MXC_OK);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  for (int i = 0; i < n; i++) EXPECT_EQ(seen[i], i + 100);
  EXPECT_EQ(x, -7);
  std::lock_guard<std::mutex> lk(mu);
  for (auto &t : threads) t.join();
}

TEST_P(Engine, AsyncFailureFromAnotherThread) {
  mxc__var *v = NewVar();
  std::thread t;
  ASSERT_EQ(PushAsync(
                e_,
                [&](mxc__exec *ex) {
                  t = std::thread([ex] {
                    std::string msg = "disk on fire";
                    mxc__exec_complete(ex, MXC_ERR_IO, msg.c_str());
                  });
                },
                {}, {v}, Named("aop")),
            MXC_OK);
  int rc = mxc__engine_wait_var(e_, v, 0);
  t.join();
  EXPECT_EQ(rc, MXC_ERR_IO);
  EXPECT_EQ(std::string(mxc__error_msg()),
            "operator 'aop' failed: disk on fire");
  EXPECT_EQ(mxc__engine_wait_var(e_, v, 0), MXC_OK);
}

TEST(EngineAsync, CompletionRacingDestroyIsSafe) {
  // A foreign thread's completion is the last thing destroy waits for; it
  // must not touch the engine afterwards (ASan/TSan would tell).
  int64_t live0 = mxc__alloc_live();
  for (int kind : {MXC__ENGINE_NAIVE, MXC__ENGINE_THREADED}) {
    for (int round = 0; round < 100 / kScale + 5; round++) {
      mxc__engine *e = nullptr;
      ASSERT_EQ(mxc__engine_create(kind, 2, &e), MXC_OK);
      mxc__var *v = nullptr;
      ASSERT_EQ(mxc__engine_new_var(e, &v), MXC_OK);
      std::thread t;
      std::atomic<bool> spawned{false};
      ASSERT_EQ(PushAsync(e,
                          [&](mxc__exec *ex) {
                            t = std::thread([ex] {
                              mxc__exec_complete(ex, MXC_OK, nullptr);
                            });
                            spawned = true;
                          },
                          {}, {v}),
                MXC_OK);
      mxc__engine_delete_var(e, v, nullptr, nullptr);
      mxc__engine_destroy(e);
      while (!spawned) std::this_thread::yield();
      t.join();
    }
  }
  EXPECT_EQ(mxc__alloc_live(), live0);
}

// ---- deletion
// ------------------------------------------------------------------

struct DeleteLog {
  std::mutex mu;
  std::vector<std::string> log;
  std::atomic<int> deleted{0};
  void Note(const std::string &s) {
    std::lock_guard<std::mutex> lk(mu);
    log.push_back(s);
  }
};

void OnDeleted(void *arg) {
  auto *d = static_cast<DeleteLog *>(arg);
  d->Note("deleted");
  d->deleted++;
}

TEST_P(Engine, DeleteVarRunsAfterPendingWork) {
  mxc__var *v = NewVar();
  Forget(v);
  DeleteLog d;
  Gate gate;
  if (!Threaded()) gate.Open();
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   gate.Wait();
                   d.Note("w1");
                   return MXC_OK;
                 },
                 {}, {v}),
            MXC_OK);
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     d.Note("r");
                     return MXC_OK;
                   },
                   {v}, {}),
              MXC_OK);
  }
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   d.Note("w2");
                   return MXC_OK;
                 },
                 {}, {v}),
            MXC_OK);
  mxc__engine_delete_var(e_, v, OnDeleted, &d);
  if (Threaded()) {
    EXPECT_EQ(d.deleted.load(), 0);  // the first writer still blocks it
    EXPECT_GT(mxc__engine_pending(e_), 0);
    gate.Open();
  }
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(d.deleted.load(), 1);
  std::vector<std::string> want = {"w1", "r", "r", "r", "w2", "deleted"};
  EXPECT_EQ(d.log, want);

  // Idle variables go at once; a NULL callback is fine.
  mxc__var *idle = nullptr;
  ASSERT_EQ(mxc__engine_new_var(e_, &idle), MXC_OK);
  mxc__engine_delete_var(e_, idle, OnDeleted, &d);
  EXPECT_EQ(d.deleted.load(), 2);
  ASSERT_EQ(mxc__engine_new_var(e_, &idle), MXC_OK);
  mxc__engine_delete_var(e_, idle, nullptr, nullptr);
}

TEST_P(Engine, DeleteVarFromInsideFunctionsAndFreeFns) {
  // Deleting a var an op is using, from inside that op: the deletion waits
  // for the op itself.
  mxc__var *v = nullptr;
  ASSERT_EQ(mxc__engine_new_var(e_, &v), MXC_OK);
  DeleteLog d;
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   mxc__engine_delete_var(e_, v, OnDeleted, &d);
                   d.Note("op");
                   return MXC_OK;
                 },
                 {v}, {}),
            MXC_OK);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  std::vector<std::string> want = {"op", "deleted"};
  EXPECT_EQ(d.log, want);

  // From a free_fn (e.g. the last reference to an array going away).
  ASSERT_EQ(mxc__engine_new_var(e_, &v), MXC_OK);
  auto *c = new Closure;
  c->sync = [&](mxc__exec *) {
    d.Note("op2");
    return MXC_OK;
  };
  mxc__push_args a{};
  a.sync_fn = RunSync;
  a.arg = c;
  struct Ctx {
    mxc__engine *e;
    mxc__var *v;
    DeleteLog *d;
    Closure *c;
  } ctx = {e_, v, &d, c};
  a.free_fn = [](void *p) {
    auto *x = static_cast<Ctx *>(p);
    mxc__engine_delete_var(x->e, x->v, OnDeleted, x->d);
    delete x->c;
  };
  a.arg = &ctx;
  a.sync_fn = [](void *p, mxc__exec *ex) {
    return static_cast<Ctx *>(p)->c->sync(ex);
  };
  a.writes = &v;
  a.n_writes = 1;
  a.dev.type = MXC_DEVICE_CPU;
  ASSERT_EQ(mxc__engine_push(e_, &a), MXC_OK);
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  want = {"op", "deleted", "op2", "deleted"};
  EXPECT_EQ(d.log, want);
  EXPECT_EQ(d.deleted.load(), 2);
}

// ---- waits
// ---------------------------------------------------------------------

TEST_P(Engine, WaitVarWaitsForEarlierWrites) {
  mxc__var *v = NewVar();
  std::atomic<int> x{0};
  for (int i = 0; i < 200; i++) {
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     x.store(x.load() + 1);
                     return MXC_OK;
                   },
                   {}, {v}),
              MXC_OK);
  }
  ASSERT_EQ(mxc__engine_wait_var(e_, v, 0), MXC_OK);
  EXPECT_EQ(x.load(), 200);
  std::atomic<int> reads{0};
  for (int i = 0; i < 50; i++) {
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     reads++;
                     return MXC_OK;
                   },
                   {v}, {}),
              MXC_OK);
  }
  ASSERT_EQ(mxc__engine_wait_var(e_, v, 1), MXC_OK);
  EXPECT_EQ(reads.load(), 50);
}

TEST_P(Engine, WaitForReadIgnoresReadersWaitForWriteDoesNot) {
  if (!Threaded()) GTEST_SKIP() << "naive waits never block";
  mxc__var *v = NewVar();
  Gate gate;
  std::atomic<bool> started{false};
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   started = true;
                   gate.Wait();
                   return MXC_OK;
                 },
                 {v}, {}),
            MXC_OK);
  while (!started) std::this_thread::yield();
  // Only writes matter for a read wait: it returns with the reader blocked.
  auto rd = std::async(std::launch::async,
                       [&] { return mxc__engine_wait_var(e_, v, 0); });
  bool returned =
      rd.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "wait_var(read) waited for a reader";
  // A write wait must wait for the reader.
  std::atomic<bool> done{false};
  std::thread t([&] {
    EXPECT_EQ(mxc__engine_wait_var(e_, v, 1), MXC_OK);
    done = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(done.load()) << "wait_var(write) did not wait for a reader";
  gate.Open();
  t.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(rd.get(), MXC_OK);
}

TEST_P(Engine, ReadWaitWaitsForABlockedWriter) {
  if (!Threaded()) GTEST_SKIP() << "naive waits never block";
  mxc__var *v = NewVar();
  Gate gate;
  std::atomic<bool> started{false};
  int x = 0;
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   started = true;
                   gate.Wait();
                   x = 3;
                   return MXC_OK;
                 },
                 {}, {v}),
            MXC_OK);
  while (!started) std::this_thread::yield();
  std::atomic<bool> done{false};
  int seen = -1;
  std::thread t([&] {
    EXPECT_EQ(mxc__engine_wait_var(e_, v, 0), MXC_OK);
    seen = x;
    done = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(done.load());
  gate.Open();
  t.join();
  EXPECT_EQ(seen, 3);
}

TEST_P(Engine, WaitAllIsNotStarvedByOtherPushers) {
  if (!Threaded()) GTEST_SKIP() << "naive pushes hold the engine lock";
  // Another thread keeps the engine busy all the time; wait_all must still
  // return once the work pushed before it is done.
  mxc__var *busy = NewVar(), *mine = NewVar();
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::thread pusher([&] {
    while (!stop) {
      if (Push(e_,
               [](mxc__exec *) {
                 std::this_thread::sleep_for(std::chrono::microseconds(20));
                 return MXC_OK;
               },
               {}, {busy}) != MXC_OK) {
        errors++;
      }
      while (!stop && mxc__engine_pending(e_) > 64) std::this_thread::yield();
    }
  });
  for (int i = 0; i < 10; i++) {
    std::atomic<bool> done{false};
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     std::this_thread::sleep_for(milliseconds(1));
                     done = true;
                     return MXC_OK;
                   },
                   {}, {mine}),
              MXC_OK);
    auto w = std::async(std::launch::async,
                        [&] { return mxc__engine_wait_all(e_); });
    bool returned =
        w.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
    EXPECT_TRUE(returned) << "wait_all starved";
    if (!returned) stop = true;
    EXPECT_EQ(w.get(), MXC_OK);
    EXPECT_TRUE(done.load());
  }
  stop = true;
  pusher.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST_P(Engine, WaitAllLeavesNoCachedRecords) {
  // Leak checks on a long-lived engine (the default one) need an idle
  // engine's allocations to come back to the same count after wait_all,
  // whatever the load was in between.
  mxc__var *v = NewVar(), *w = NewVar();
  ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  const int64_t base = mxc__alloc_live();
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 3000 * (round + 1); i++) {
      ASSERT_EQ(Push(e_, [](mxc__exec *) { return MXC_OK; }, {i % 2 ? v : w},
                     {i % 3 ? w : v}),
                MXC_OK);
    }
    ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
    EXPECT_EQ(mxc__alloc_live(), base) << "round " << round;
  }
}

TEST_P(Engine, SetNumWorkers) {
  EXPECT_EQ(mxc__engine_num_workers(e_), kWorkers);
  mxc__var *v = NewVar();
  std::atomic<int> count{0};
  for (int i = 0; i < 500; i++) {
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     count++;
                     return MXC_OK;
                   },
                   {v}, {}),
              MXC_OK);
  }
  ASSERT_EQ(mxc__engine_set_num_workers(e_, 1), MXC_OK);
  EXPECT_EQ(count.load(), 500);  // it waited for all work first
  EXPECT_EQ(mxc__engine_pending(e_), 0);
  EXPECT_EQ(mxc__engine_num_workers(e_), 1);
  for (int i = 0; i < 500; i++) {
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     count++;
                     return MXC_OK;
                   },
                   {}, {v}),
              MXC_OK);
  }
  ASSERT_EQ(mxc__engine_set_num_workers(e_, 3), MXC_OK);
  EXPECT_EQ(count.load(), 1000);
  EXPECT_EQ(mxc__engine_num_workers(e_), 3);
  if (Threaded()) {  // three workers really exist now
    Rendezvous meet(3);
    std::atomic<int> met{0};
    for (int i = 0; i < 3; i++) {
      ASSERT_EQ(Push(e_,
                     [&](mxc__exec *) {
                       if (meet.Arrive()) met++;
                       return MXC_OK;
                     },
                     {v}, {}),
                MXC_OK);
    }
    ASSERT_EQ(mxc__engine_wait_all(e_), MXC_OK);
    EXPECT_EQ(met.load(), 3);
  }
  EXPECT_EQ(mxc__engine_set_num_workers(e_, 0), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_set_num_workers(e_, 1025), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_num_workers(e_), 3);
  ASSERT_EQ(mxc__engine_set_num_workers(e_, 2), MXC_OK);
  EXPECT_EQ(mxc__engine_num_workers(e_), 2);
}

// run_here: a function whose variables are free runs in the pushing
// thread before push returns; one that must wait runs on a worker after
// its predecessor, and work it releases goes to the workers too.
TEST_P(Engine, RunHereRunsReadyWorkInTheCallerAndKeepsOrder) {
  mxc__var *a = NewVar(), *b = NewVar();
  PushOpts here = Named("here");
  here.run_here = 1;
  std::thread::id ran_on;
  bool ran = false;
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  ran_on = std::this_thread::get_id();
                  ran = true;
                  return MXC_OK;
                },
                {}, {a}, here),
            MXC_OK);
  EXPECT_TRUE(ran) << "a ready run_here function runs before push returns";
  EXPECT_EQ(ran_on, std::this_thread::get_id());

  if (!Threaded()) return;  // the naive engine runs everything in place

  // b busy: the run_here function must wait for the blocker, on a worker.
  Gate gate;
  std::atomic<int> order{0};
  std::atomic<int> second_saw{-1};
  std::thread::id second_on;
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  if (!gate.Wait()) return MXC_ERR_INTERNAL;
                  order = 1;
                  return MXC_OK;
                },
                {}, {b}, Named("blocker")),
            MXC_OK);
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  second_saw = order.load();
                  second_on = std::this_thread::get_id();
                  return MXC_OK;
                },
                {a}, {b}, here),
            MXC_OK);
  gate.Open();
  EXPECT_EQ(mxc__engine_wait_var(e_, b, 1), MXC_OK) << mxc__error_msg();
  EXPECT_EQ(second_saw.load(), 1) << "ran before its predecessor";
  EXPECT_NE(second_on, std::this_thread::get_id());
  mxc__engine_wait_all(e_);
}

// ---- failures
// --------------------------------------------------------------------

TEST_P(Engine, FailurePoisonsSkipsPropagatesAndClears) {
  mxc__var *a = NewVar(), *b = NewVar(), *c = NewVar(), *u = NewVar();
  std::atomic<int> frees{0};
  std::atomic<bool> ran_g{false}, ran_h{false}, ran_w{false}, ran_u{false};
  ASSERT_EQ(Push(
                e_,
                [](mxc__exec *ex) {
                  mxc__exec_set_error(ex, "boom");
                  return MXC_ERR_SHAPE;
                },
                {}, {a}, Named("F", 0, &frees)),
            MXC_OK);
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  ran_g = true;
                  return MXC_OK;
                },
                {a}, {b}, Named("G", 0, &frees)),
            MXC_OK);
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  ran_h = true;
                  return MXC_OK;
                },
                {b}, {c}, Named("H", 0, &frees)),
            MXC_OK);
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {  // write-only use is skipped too
                  ran_w = true;
                  return MXC_OK;
                },
                {}, {a}, Named("W", 0, &frees)),
            MXC_OK);
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  ran_u = true;
                  return MXC_OK;
                },
                {}, {u}, Named("U", 0, &frees)),
            MXC_OK);
  const std::string msg = "operator 'F' failed: boom";
  EXPECT_EQ(mxc__engine_wait_var(e_, c, 0), MXC_ERR_SHAPE);
  EXPECT_EQ(std::string(mxc__error_msg()), msg);
  EXPECT_EQ(mxc__error_code(), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc__engine_wait_var(e_, c, 0), MXC_OK) << "poison not cleared";
  std::atomic<bool> ran_after{false};
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  ran_after = true;
                  return MXC_OK;
                },
                {c}, {c}, Named("after", 0, &frees)),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, c, 1), MXC_OK);
  EXPECT_TRUE(ran_after.load());
  EXPECT_EQ(mxc__engine_wait_var(e_, a, 1), MXC_ERR_SHAPE);
  EXPECT_EQ(std::string(mxc__error_msg()), msg);
  EXPECT_EQ(mxc__engine_wait_var(e_, a, 1), MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, b, 0), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc__engine_wait_var(e_, u, 0), MXC_OK);
  // wait_all reports the first failure since the last wait_all, even
  // though every wait_var has cleared it by now; then nothing.
  mxc__error_clear();
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_ERR_SHAPE);
  EXPECT_EQ(std::string(mxc__error_msg()), msg);
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_FALSE(ran_g.load());
  EXPECT_FALSE(ran_h.load());
  EXPECT_FALSE(ran_w.load());
  EXPECT_TRUE(ran_u.load());
  EXPECT_EQ(frees.load(), 6) << "free_fn must run once per op, skipped or not";
}

// A scratch variable (temp space) keeps its users in order but does not
// pass a failure on: the next user runs and succeeds.
TEST_P(Engine, ScratchVariablesOrderButNeverCarryFailures) {
  mxc__var *a = NewVar(), *b = NewVar(), *s = NewVar();
  mxc__engine_var_set_scratch(s);
  std::atomic<int> step{0};
  std::atomic<int> g_saw{-1};
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *ex) {
                  step = 1;
                  mxc__exec_set_error(ex, "scratch boom");
                  return MXC_ERR_OOM;
                },
                {}, {a, s}, Named("F")),
            MXC_OK);
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  g_saw = step.load();
                  return MXC_OK;
                },
                {}, {b, s}, Named("G")),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, b, 0), MXC_OK) << mxc__error_msg();
  EXPECT_EQ(g_saw.load(), 1) << "G must run, after F";
  EXPECT_EQ(mxc__engine_wait_var(e_, a, 0), MXC_ERR_OOM);
  EXPECT_TRUE(Contains(mxc__error_msg(), "scratch boom"));
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_ERR_OOM);  // still reported once
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_OK);
}

TEST_P(Engine, WaitAllClearsEveryPoison) {
  mxc__var *a = NewVar(), *b = NewVar();
  ASSERT_EQ(Push(
                e_, [](mxc__exec *) { return MXC_ERR_IO; }, {}, {a, b},
                Named("io_op")),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_ERR_IO);
  EXPECT_EQ(std::string(mxc__error_msg()),
            "operator 'io_op' failed: MXC_ERR_IO");
  bool ran = false;
  ASSERT_EQ(Push(e_,
                 [&](mxc__exec *) {
                   ran = true;
                   return MXC_OK;
                 },
                 {a}, {b}),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, b, 0), MXC_OK);
  EXPECT_TRUE(ran);
  EXPECT_EQ(mxc__engine_wait_var(e_, a, 1), MXC_OK);
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_OK);
}

TEST_P(Engine, WaitAllReportsTheFirstFailure) {
  mxc__var *a = NewVar(), *b = NewVar();
  ASSERT_EQ(Push(
                e_, [](mxc__exec *) { return MXC_ERR_DTYPE; }, {}, {a},
                Named("first")),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, a, 0), MXC_ERR_DTYPE);
  ASSERT_EQ(
      Push(
          e_, [](mxc__exec *) { return MXC_ERR_IO; }, {}, {b}, Named("second")),
      MXC_OK);
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_ERR_DTYPE);
  EXPECT_TRUE(Contains(mxc__error_msg(), "'first'"));
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, b, 0), MXC_OK);  // cleared by wait_all
}

TEST_P(Engine, FailureCodesAndDefaultMessages) {
  mxc__var *v = NewVar();
  struct Case {
    int ret;
    const char *set;  // message given with set_error, or null
    int code;
    std::string msg;
  };
  const Case cases[] = {
      {MXC_ERR_IO, nullptr, MXC_ERR_IO, "operator 'c' failed: MXC_ERR_IO"},
      {MXC_ERR_OOM, "no room", MXC_ERR_OOM, "operator 'c' failed: no room"},
      {42, nullptr, MXC_ERR_OPERATOR,
       "operator 'c' failed: MXC_ERR_UNKNOWN (code 42)"},
      {-1, "negative", MXC_ERR_OPERATOR, "operator 'c' failed: negative"},
      {MXC_ERR_OPERATOR, nullptr, MXC_ERR_OPERATOR,
       "operator 'c' failed: MXC_ERR_OPERATOR"},
  };
  for (const Case &k : cases) {
    ASSERT_EQ(Push(
                  e_,
                  [&k](mxc__exec *ex) {
                    if (k.set) mxc__exec_set_error(ex, "first message");
                    if (k.set) mxc__exec_set_error(ex, k.set);  // the last wins
                    return k.ret;
                  },
                  {}, {v}, Named("c")),
              MXC_OK);
    EXPECT_EQ(mxc__engine_wait_var(e_, v, 1), k.code);
    EXPECT_EQ(std::string(mxc__error_msg()), k.msg);
  }
  // A message set by a function that then succeeds is dropped.
  ASSERT_EQ(Push(e_,
                 [](mxc__exec *ex) {
                   mxc__exec_set_error(ex, "never mind");
                   return MXC_OK;
                 },
                 {}, {v}),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, v, 1), MXC_OK);
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_ERR_IO);  // the epoch's first
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_OK);
}

TEST_P(Engine, ReadersQueuedBeforeAReadWaitStayPoisoned) {
  // F fails on v; R (reader, pushed before the wait) must be skipped even
  // if it runs after the concurrent read wait has cleared v; S (pushed
  // after the wait returned) must run.
  mxc__var *v = NewVar(), *o = NewVar();
  Gate gate;
  std::atomic<bool> started{false};
  if (Threaded()) {
    ASSERT_EQ(mxc__engine_set_num_workers(e_, 1), MXC_OK);
    ASSERT_EQ(Push(e_,
                   [&](mxc__exec *) {
                     started = true;
                     gate.Wait();
                     return MXC_OK;
                   },
                   {}, {NewVar()}),
              MXC_OK);
    while (!started) std::this_thread::yield();
  }
  ASSERT_EQ(
      Push(
          e_, [](mxc__exec *) { return MXC_ERR_SHAPE; }, {}, {v}, Named("F")),
      MXC_OK);
  std::atomic<bool> ran_r{false}, ran_s{false};
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  ran_r = true;
                  return MXC_OK;
                },
                {v}, {o}, Named("R")),
            MXC_OK);
  std::thread waiter(
      [&] { EXPECT_EQ(mxc__engine_wait_var(e_, v, 0), MXC_ERR_SHAPE); });
  std::this_thread::sleep_for(milliseconds(10));
  gate.Open();
  waiter.join();
  ASSERT_EQ(Push(
                e_,
                [&](mxc__exec *) {
                  ran_s = true;
                  return MXC_OK;
                },
                {v}, {}, Named("S")),
            MXC_OK);
  EXPECT_EQ(mxc__engine_wait_var(e_, o, 0), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_ERR_SHAPE);
  EXPECT_FALSE(ran_r.load());
  EXPECT_TRUE(ran_s.load());
}

TEST_P(Engine, FreeFnRunsExactlyOncePerPushedFunction) {
  std::vector<mxc__var *> vs;
  for (int i = 0; i < 8; i++) vs.push_back(NewVar());
  std::atomic<int> frees{0}, runs{0};
  std::mt19937 rng(7);
  const int n = 2000 / kScale;
  for (int i = 0; i < n; i++) {
    mxc__var *r = vs[rng() % 8], *w = vs[rng() % 8];
    bool fail = rng() % 20 == 0;
    bool async = rng() % 4 == 0;
    int rc;
    if (async) {
      rc = PushAsync(
          e_,
          [&, fail](mxc__exec *ex) {
            runs++;
            mxc__exec_complete(ex, fail ? MXC_ERR_IO : MXC_OK, "x");
          },
          {r}, {w}, Named("a", 0, &frees));
    } else {
      rc = Push(
          e_,
          [&, fail](mxc__exec *) {
            runs++;
            return fail ? MXC_ERR_IO : MXC_OK;
          },
          {r}, {w}, Named("s", 0, &frees));
    }
    ASSERT_EQ(rc, MXC_OK);
    if (i % 97 == 0) mxc__engine_wait_all(e_);
  }
  // A push that fails never calls free_fn.
  mxc__device unknown = {99, 0};
  PushOpts bad = Named("bad", 0, &frees);
  bad.dev = unknown;
  EXPECT_EQ(Push(
                e_, [](mxc__exec *) { return MXC_OK; }, {}, {vs[0]}, bad),
            MXC_ERR_INVALID_ARGUMENT);
  mxc__engine_wait_all(e_);
  EXPECT_EQ(frees.load(), n);
  EXPECT_LE(runs.load(), n);
  EXPECT_GT(runs.load(), 0);
}

// ---- bad arguments
// -------------------------------------------------------------

int Nop(void *, mxc__exec *) { return MXC_OK; }
void NopAsync(void *, mxc__exec *ex) {
  mxc__exec_complete(ex, MXC_OK, nullptr);
}

void ExpectPushError(mxc__engine *e, const mxc__push_args *a, int code,
                     const char *part) {
  mxc__error_clear();
  EXPECT_EQ(mxc__engine_push(e, a), code);
  EXPECT_EQ(mxc__error_code(), code);
  EXPECT_TRUE(Contains(mxc__error_msg(), part))
      << "message: " << mxc__error_msg() << " lacks: " << part;
}

TEST_P(Engine, BadArgumentsAreReportedNotCrashed) {
  mxc__var *v = NewVar();
  mxc__var *null_var = nullptr;
  mxc__push_args a{};
  a.sync_fn = Nop;
  a.writes = &v;
  a.n_writes = 1;
  a.name = "bad";
  a.dev.type = MXC_DEVICE_CPU;
  ExpectPushError(nullptr, &a, MXC_ERR_INVALID_ARGUMENT, "engine is NULL");
  ExpectPushError(e_, nullptr, MXC_ERR_INVALID_ARGUMENT, "args is NULL");
  mxc__push_args b = a;
  b.async_fn = NopAsync;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "exactly one");
  b = a;
  b.sync_fn = nullptr;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "exactly one");
  b = a;
  b.n_reads = -1;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "n_reads");
  b = a;
  b.n_writes = -2;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "n_writes");
  b = a;
  b.n_reads = 1;  // reads is NULL
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "reads is NULL");
  b = a;
  b.writes = &null_var;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "writes[0] is NULL");
  b = a;
  b.dev.type = MXC_DEVICE_GPU;
  b.dev.id = -1;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "device");
  b = a;
  b.dev.type = 99;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "device");
  b = a;
  b.dev.id = -1;
  ExpectPushError(e_, &b, MXC_ERR_INVALID_ARGUMENT, "device");
  // Unnamed functions are fine.
  b = a;
  b.name = nullptr;
  EXPECT_EQ(mxc__engine_push(e_, &b), MXC_OK);

  mxc__var *out = nullptr;
  EXPECT_EQ(mxc__engine_new_var(nullptr, &out), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_new_var(e_, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_wait_var(nullptr, v, 0), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_wait_var(e_, nullptr, 0), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_wait_all(nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_set_num_workers(nullptr, 2), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_kind(nullptr), -1);
  EXPECT_EQ(mxc__engine_num_workers(nullptr), 0);
  EXPECT_EQ(mxc__engine_pending(nullptr), 0);
  EXPECT_STREQ(mxc__exec_name(nullptr), "");
  mxc__engine_delete_var(nullptr, nullptr, nullptr, nullptr);
  mxc__engine_delete_var(e_, nullptr, nullptr, nullptr);
  mxc__engine_destroy(nullptr);
  mxc__exec_set_error(nullptr, "x");
  mxc__exec_complete(nullptr, MXC_OK, nullptr);
  EXPECT_EQ(mxc__engine_kind(e_), GetParam());
  EXPECT_EQ(mxc__engine_wait_all(e_), MXC_OK);
}

TEST(EngineCreate, BadArguments) {
  mxc__engine *e = nullptr;
  EXPECT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 2, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_create(7, 2, &e), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(mxc__error_msg(), "kind 7"));
  EXPECT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 0, &e),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__engine_create(MXC__ENGINE_THREADED, 1025, &e),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(mxc__error_msg(), "1025"));
  EXPECT_EQ(e, nullptr);
  // The naive engine ignores the worker count.
  ASSERT_EQ(mxc__engine_create(MXC__ENGINE_NAIVE, 0, &e), MXC_OK);
  EXPECT_EQ(mxc__engine_kind(e), MXC__ENGINE_NAIVE);
  mxc__engine_destroy(e);
}

}  // namespace
}  // namespace mxct
