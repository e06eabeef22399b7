// The log callback and the storage-fallback log: one line per distinct
// case (operator, input and output storage types) naming them and the
// parameters; none for dense calls or sparse kernels; silenced by
// MXC_STORAGE_FALLBACK_LOG=0; the default logger writes to stderr, never
// stdout; callbacks from several threads while the callback changes.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
void mxc__fallback_log_reset(void);
void mxc__log(int level, const char *fmt, ...);
}

namespace {

using sparse_test::Arr;
using sparse_test::Dense;

std::string err() { return mxc_last_error(); }

// Collects log lines while alive (and forgets the cases logged before).
class Capture {
 public:
  Capture() {
    mxc__fallback_log_reset();
    mxc_set_log_callback(&Capture::fn, this);
  }
  ~Capture() { mxc_set_log_callback(nullptr, nullptr); }
  std::vector<std::pair<int, std::string>> lines() {
    std::lock_guard<std::mutex> g(m_);
    return lines_;
  }

 private:
  static void fn(int level, const char *msg, void *user) {
    auto *c = static_cast<Capture *>(user);
    std::lock_guard<std::mutex> g(c->m_);
    c->lines_.emplace_back(level, msg);
  }
  std::mutex m_;
  std::vector<std::pair<int, std::string>> lines_;
};

Dense sample() { return sparse_test::random_sparse({5, 4}, 0.4, 1, 1); }

void run(const std::string &op,
         const std::vector<std::pair<std::string, std::string>> &p,
         const std::vector<mxc_ndarray> &in, std::vector<Arr> *outs,
         const std::vector<int> &reqs = {}) {
  ASSERT_EQ(sparse_test::invoke(op, p, in, outs, (int)outs->size() > 0
                                                     ? (int)outs->size()
                                                     : 1,
                                reqs),
            MXC_OK)
      << op << ": " << err();
}

TEST(FallbackLog, OneLinePerDistinctCase) {
  Capture cap;
  Dense d = sample();
  Arr c = sparse_test::make_csr(d), r = sparse_test::make_row_sparse(d);
  Arr x = sparse_test::make_dense(d);
  for (int i = 0; i < 3; ++i) {
    std::vector<Arr> o;
    run("exp", {}, {c.get()}, &o);
  }
  ASSERT_EQ(cap.lines().size(), 1u);
  auto l = cap.lines()[0];
  EXPECT_EQ(l.first, MXC_LOG_WARNING);
  EXPECT_EQ(l.second,
            "storage fallback: operator 'exp' (csr) -> (default), params {}: "
            "inputs converted to dense");
  // Another input storage type, another output storage type: new cases.
  std::vector<Arr> o1, o2, o3;
  run("exp", {}, {r.get()}, &o1);
  o2.push_back(sparse_test::make_csr(d));
  run("cbrt", {}, {c.get()}, &o2);
  run("cbrt", {}, {c.get()}, &o2);
  ASSERT_EQ(cap.lines().size(), 3u);
  EXPECT_NE(cap.lines()[1].second.find("'exp' (row_sparse) -> (default)"),
            std::string::npos)
      << cap.lines()[1].second;
  EXPECT_NE(cap.lines()[2].second.find("'cbrt' (csr) -> (csr)"),
            std::string::npos)
      << cap.lines()[2].second;
  EXPECT_NE(cap.lines()[2].second.find("cast back"), std::string::npos);
  // Dense calls and sparse kernels (cast_storage) log nothing.
  run("exp", {}, {x.get()}, &o3);
  Arr back;
  ASSERT_EQ(mxc_ndarray_cast_storage(c.get(), MXC_STYPE_DEFAULT, back.out()),
            MXC_OK);
  EXPECT_EQ(cap.lines().size(), 3u);
}

TEST(FallbackLog, NamesParametersAndSeveralArrays) {
  Capture cap;
  Dense d = sample();
  Arr c = sparse_test::make_csr(d), x = sparse_test::make_dense(d);
  std::vector<Arr> o, o2;
  run("max", {{"axis", "1"}, {"keepdims", "true"}}, {c.get()}, &o);
  o2.resize(2);
  run("split", {{"num_outputs", "2"}, {"axis", "1"}}, {c.get()}, &o2);
  std::vector<Arr> o3;
  run("maximum", {}, {x.get(), c.get()}, &o3);
  auto ls = cap.lines();
  ASSERT_EQ(ls.size(), 3u);
  EXPECT_NE(ls[0].second.find("operator 'max' (csr) -> (default)"),
            std::string::npos)
      << ls[0].second;
  EXPECT_NE(ls[0].second.find("axis=(1,)"), std::string::npos) << ls[0].second;
  EXPECT_NE(ls[0].second.find("keepdims=true"), std::string::npos)
      << ls[0].second;
  EXPECT_NE(ls[1].second.find("(csr) -> (default, default)"),
            std::string::npos)
      << ls[1].second;
  EXPECT_NE(ls[1].second.find("num_outputs=2"), std::string::npos)
      << ls[1].second;
  EXPECT_NE(ls[2].second.find("'maximum' (default, csr) -> (default)"),
            std::string::npos)
      << ls[2].second;
  // Dense inputs, a sparse given output.
  std::vector<Arr> o4;
  o4.push_back(sparse_test::make_csr(d));
  run("cbrt", {}, {x.get()}, &o4);
  ASSERT_EQ(cap.lines().size(), 4u);
  EXPECT_EQ(cap.lines()[3].second,
            "storage fallback: operator 'cbrt' (default) -> (csr), params {}: "
            "dense kernel on dense inputs, results cast back to sparse");
}

TEST(FallbackLog, SilencedByEnvironment) {
  Capture cap;
  setenv("MXC_STORAGE_FALLBACK_LOG", "0", 1);
  mxc__fallback_log_reset();  // read again
  Dense d = sample();
  Arr c = sparse_test::make_csr(d);
  std::vector<Arr> o;
  run("exp", {}, {c.get()}, &o);
  EXPECT_EQ(cap.lines().size(), 0u);
  // Any other value keeps it on.
  setenv("MXC_STORAGE_FALLBACK_LOG", "1", 1);
  mxc__fallback_log_reset();
  std::vector<Arr> o2;
  run("exp", {}, {c.get()}, &o2);
  EXPECT_EQ(cap.lines().size(), 1u);
  unsetenv("MXC_STORAGE_FALLBACK_LOG");
  mxc__fallback_log_reset();
}

TEST(Log, DefaultGoesToStderrNotStdout) {
  mxc_set_log_callback(nullptr, nullptr);
  mxc__fallback_log_reset();
  Dense d = sample();
  Arr c = sparse_test::make_csr(d);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  std::vector<Arr> o;
  int rc = sparse_test::invoke("exp", {}, {c.get()}, &o);
  mxc__log(MXC_LOG_INFO, "hello %d", 42);
  std::string out = testing::internal::GetCapturedStdout();
  std::string errs = testing::internal::GetCapturedStderr();
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(out, "");
  EXPECT_NE(errs.find("[mxc] WARNING: storage fallback: operator 'exp' (csr)"),
            std::string::npos)
      << errs;
  EXPECT_NE(errs.find("[mxc] INFO: hello 42\n"), std::string::npos) << errs;
}

TEST(Log, SetCallbackAlwaysSucceedsAndLongMessagesAreCut) {
  Capture cap;
  std::string big(5000, 'x');
  mxc__log(MXC_LOG_INFO, "%s", big.c_str());
  ASSERT_EQ(cap.lines().size(), 1u);
  EXPECT_EQ(cap.lines()[0].first, MXC_LOG_INFO);
  EXPECT_GT(cap.lines()[0].second.size(), 500u);
  EXPECT_LT(cap.lines()[0].second.size(), 5000u);
  EXPECT_EQ(mxc_set_log_callback(nullptr, reinterpret_cast<void *>(1)),
            MXC_OK);
}

// Fallbacks from several threads while another thread switches between
// two callbacks: every distinct case is logged exactly once in all.
std::atomic<int> g_a{0}, g_b{0};
void count_a(int, const char *, void *) { g_a.fetch_add(1); }
void count_b(int, const char *, void *) { g_b.fetch_add(1); }

TEST(Log, CallbacksFromSeveralThreads) {
  mxc__fallback_log_reset();
  mxc_set_log_callback(count_a, nullptr);
  Dense d = sample();
  Arr c = sparse_test::make_csr(d), r = sparse_test::make_row_sparse(d);
  std::atomic<bool> stop{false};
  std::thread toggler([&stop] {
    for (int i = 0; !stop.load(); ++i) {
      mxc_set_log_callback(i % 2 ? count_a : count_b, nullptr);
    }
  });
  const char *ops[] = {"exp", "cbrt", "cos", "sigmoid"};
  std::vector<std::thread> ts;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        mxc_ndarray in = (i + t) % 2 ? c.get() : r.get();
        std::vector<Arr> o;
        if (sparse_test::invoke(ops[(i / 2) % 4], {}, {in}, &o) != MXC_OK) {
          failures.fetch_add(1);
        }
        mxc__log(MXC_LOG_INFO, "thread %d call %d", t, i);
      }
    });
  }
  for (auto &t : ts) t.join();
  stop.store(true);
  toggler.join();
  mxc_set_log_callback(nullptr, nullptr);
  EXPECT_EQ(failures.load(), 0);
  // 4 operators x 2 storage types, plus 80 info lines.
  EXPECT_EQ(g_a.load() + g_b.load(), 8 + 80);
}

}  // namespace
