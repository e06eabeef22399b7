// The profiler through the public C API: every category records its
// events, configuration filters them, pause and stop behave as
// documented, statistics agree with the calls made and with the trace's
// own spans, and many threads (engine workers and the caller's) record at
// once (run under --config=tsan too). The trace's JSON structure is
// checked by a real JSON parser in check_trace.py.
#include <gtest/gtest.h>
#include <mxc/mxc.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

#define ASSERT_MXC(expr) ASSERT_EQ((expr), MXC_OK) << mxc_last_error()

std::string Take(char *s) {
  std::string r = s ? s : "";
  mxc_string_free(s);
  return r;
}

std::string Trace() {
  char *s = nullptr;
  EXPECT_EQ(mxc_profiler_dumps(&s), MXC_OK) << mxc_last_error();
  return Take(s);
}

std::string StatsJson(int reset = 0) {
  char *s = nullptr;
  EXPECT_EQ(mxc_profiler_stats(MXC_PROFILER_JSON, reset, &s), MXC_OK)
      << mxc_last_error();
  return Take(s);
}

// A fresh session with every category but the engine's own spans.
void Start() {
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_STOP));
  ASSERT_MXC(mxc_profiler_set_config("profile_all", "1"));
  ASSERT_MXC(mxc_profiler_set_config("profile_engine", "0"));
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_RUN));
}

class Profiler : public ::testing::Test {
 protected:
  void TearDown() override {
    mxc_wait_all();
    mxc_profiler_set_state(MXC_PROFILER_STOP);
    mxc_profiler_set_config("profile_all", "1");
    mxc_profiler_set_config("profile_engine", "0");
  }
};

// The trace's events, one per line: name and cat of each ("" if none).
std::vector<std::pair<std::string, std::string>> NameCats(
    const std::string &trace, std::vector<std::string> *lines) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos < trace.size()) {
    size_t end = trace.find('\n', pos);
    if (end == std::string::npos) end = trace.size();
    std::string line = trace.substr(pos, end - pos);
    pos = end + 1;
    const std::string n0 = "{\"name\":\"", c0 = "\",\"cat\":\"";
    size_t c = line.find(c0);
    if (line.rfind(n0, 0) != 0 || c == std::string::npos) continue;
    size_t ce = line.find('"', c + c0.size());
    out.emplace_back(line.substr(n0.size(), c - n0.size()),
                     line.substr(c + c0.size(), ce - c - c0.size()));
    if (lines) lines->push_back(line);
  }
  return out;
}

// Events of category cat ("*": any) named name (empty: any) in trace.
int Count(const std::string &trace, const std::string &cat,
          const std::string &name = "") {
  int n = 0;
  for (const auto &nc : NameCats(trace, nullptr)) {
    n += (name.empty() || nc.first == name) && (cat == "*" || nc.second == cat);
  }
  return n;
}

// Sum of "dur" (in ns) over spans of cat named name, and how many.
int64_t DurSumNs(const std::string &trace, const std::string &cat,
                 const std::string &name, int *n) {
  std::vector<std::string> lines;
  auto ncs = NameCats(trace, &lines);
  int64_t sum = 0;
  *n = 0;
  for (size_t i = 0; i < ncs.size(); ++i) {
    size_t d = lines[i].find("\"dur\":");
    if (ncs[i].first != name || ncs[i].second != cat || d == std::string::npos) {
      continue;
    }
    long long us = 0, frac = 0;
    EXPECT_EQ(sscanf(lines[i].c_str() + d + 6, "%lld.%3lld", &us, &frac), 2);
    sum += us * 1000 + frac;
    ++*n;
  }
  return sum;
}

// The integer field `key` of the first stats JSON entry "name":{...}
// at or after position from.
int64_t StatField(const std::string &stats, const std::string &name,
                  const std::string &key, size_t from = 0) {
  size_t p = stats.find("\"" + name + "\":{", from);
  if (p == std::string::npos) return -1;
  size_t end = stats.find('}', p);
  size_t k = stats.find("\"" + key + "\":", p);
  if (k == std::string::npos || k > end) return -1;
  return std::stoll(stats.substr(k + key.size() + 3));
}

mxc_op Op(const char *name) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK) << mxc_last_error();
  return op;
}

mxc_ndarray Make(std::vector<int64_t> shape, float fill) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(),
                               MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v((size_t)n, fill);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK);
  return a;
}

// The canonical name of elemwise_add, which events carry.
std::string AddName() {
  const char *name = nullptr;
  EXPECT_EQ(mxc_op_name(Op("elemwise_add"), &name), MXC_OK);
  return name ? name : "";
}

// c = a + b; returns c (new).
mxc_ndarray Add(mxc_ndarray a, mxc_ndarray b) {
  mxc_ndarray in[2] = {a, b}, out[1] = {nullptr};
  EXPECT_EQ(mxc_op_invoke(Op("elemwise_add"), nullptr, nullptr, 0, in, 2, out,
                          1, nullptr),
            MXC_OK)
      << mxc_last_error();
  return out[0];
}

// Forward of relu(x) through an executor, named node "act".
void RunExecutor() {
  mxc_symbol x = nullptr, y = nullptr;
  ASSERT_MXC(mxc_symbol_variable("x", &x));
  const char *k[] = {"act_type"}, *v[] = {"relu"};
  ASSERT_MXC(mxc_symbol_create(Op("Activation"), k, v, 1, "act", nullptr, &x,
                               1, &y));
  const char *names[] = {"x"};
  int ndims[] = {2};
  int64_t dims[] = {3, 4};
  mxc_executor ex = nullptr;
  ASSERT_MXC(mxc_executor_simple_bind(y, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                      dims, nullptr, MXC_REQ_NULL, 0, nullptr,
                                      nullptr, MXC_BIND_DEFAULT, &ex));
  ASSERT_MXC(mxc_executor_forward(ex, 0));
  ASSERT_MXC(mxc_wait_all());
  mxc_executor_free(ex);
  mxc_symbol_free(y);
  mxc_symbol_free(x);
}

// Reads every batch of a 4-row CSV in batches of 2.
void RunIter() {
  char path[] = "/tmp/mxc_prof_csvXXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs("1,2\n3,4\n5,6\n7,8\n", f);
  fclose(f);
  mxc_data_iter it = nullptr;
  ASSERT_MXC(mxc_data_iter_csv_create(path, nullptr, 0, 2, 0, -1,
                                      MXC_LAST_BATCH_PAD, &it));
  int has = 1;
  while (has) ASSERT_MXC(mxc_data_iter_next(it, &has));
  mxc_data_iter_free(it);
  remove(path);
}

TEST_F(Profiler, EveryCategoryRecords) {
  Start();
  mxc_ndarray a = Make({2, 3}, 1), b = Make({2, 3}, 2);
  mxc_ndarray c = Add(a, b);
  float host[6];
  ASSERT_MXC(mxc_ndarray_copy_to_host(c, host, sizeof host));
  EXPECT_EQ(host[5], 3.0f);
  RunExecutor();
  RunIter();
  ASSERT_MXC(mxc_profiler_range_begin("my range"));
  ASSERT_MXC(mxc_profiler_mark("my mark"));
  ASSERT_MXC(mxc_profiler_counter("my counter", 42));
  ASSERT_MXC(mxc_profiler_range_end());
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
  mxc_ndarray_free(c);
  ASSERT_MXC(mxc_wait_all());
  std::string t = Trace();
  EXPECT_EQ(Count(t, "operator", AddName()), 1) << t;
  EXPECT_EQ(Count(t, "executor", "Activation"), 1) << t;
  EXPECT_NE(t.find("\"node\":\"act\""), std::string::npos);
  EXPECT_NE(t.find("\"shapes\":\"(2,3) (2,3) -> (2,3)\""), std::string::npos)
      << t;
  EXPECT_EQ(Count(t, "copy", "copy_to_host"), 1);
  EXPECT_GE(Count(t, "copy", "copy_from_host"), 2);
  EXPECT_GE(Count(t, "wait", "wait_all"), 2);
  EXPECT_GE(Count(t, "memory"), 3);  // a, b, c at least
  EXPECT_EQ(Count(t, "io", "text_iter_next"), 3);  // 2 batches + the end
  EXPECT_EQ(Count(t, "user", "my range"), 1);
  EXPECT_EQ(Count(t, "user", "my mark"), 1);
  EXPECT_NE(t.find("\"name\":\"my counter\",\"cat\":\"user\",\"ph\":\"C\""),
            std::string::npos);
  EXPECT_NE(t.find("\"args\":{\"value\":42}"), std::string::npos);
  EXPECT_EQ(Count(t, "engine"), 0);  // off unless asked for
}

TEST_F(Profiler, EngineSpansWhenAsked) {
  Start();
  ASSERT_MXC(mxc_profiler_set_config("profile_engine", "true"));
  mxc_ndarray a = Make({2, 2}, 1);
  mxc_ndarray c = Add(a, a);
  ASSERT_MXC(mxc_wait_all());
  std::string t = Trace();
  // The engine's span of the add encloses the operator's own.
  EXPECT_EQ(Count(t, "engine", AddName()), 1) << t;
  EXPECT_EQ(Count(t, "operator", AddName()), 1) << t;
  mxc_ndarray_free(a);
  mxc_ndarray_free(c);
}

TEST_F(Profiler, ConfigFilters) {
  Start();
  ASSERT_MXC(mxc_profiler_set_config("profile_imperative", "0"));
  ASSERT_MXC(mxc_profiler_set_config("profile_memory", "false"));
  mxc_ndarray a = Make({4}, 1);
  mxc_ndarray c = Add(a, a);
  RunExecutor();
  ASSERT_MXC(mxc_wait_all());
  std::string t = Trace();
  EXPECT_EQ(Count(t, "operator"), 0) << t;
  EXPECT_EQ(Count(t, "memory"), 0) << t;
  EXPECT_EQ(Count(t, "executor", "Activation"), 1) << t;
  // Only one category left on.
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_STOP));
  ASSERT_MXC(mxc_profiler_set_config("profile_all", "0"));
  ASSERT_MXC(mxc_profiler_set_config("profile_user", "1"));
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_RUN));
  mxc_ndarray d = Add(a, c);
  ASSERT_MXC(mxc_profiler_mark("only this"));
  ASSERT_MXC(mxc_wait_all());
  t = Trace();
  EXPECT_EQ(Count(t, "*"), 1) << t;
  EXPECT_EQ(Count(t, "user", "only this"), 1);
  for (mxc_ndarray x : {a, c, d}) mxc_ndarray_free(x);
}

TEST_F(Profiler, PauseKeepsStopClears) {
  Start();
  mxc_ndarray a = Make({3}, 1);
  mxc_ndarray_free(Add(a, a));
  ASSERT_MXC(mxc_wait_all());
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_PAUSE));
  int state = -1;
  ASSERT_MXC(mxc_profiler_get_state(&state));
  EXPECT_EQ(state, MXC_PROFILER_PAUSE);
  for (int i = 0; i < 3; ++i) mxc_ndarray_free(Add(a, a));  // not recorded
  ASSERT_MXC(mxc_wait_all());
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_RUN));
  mxc_ndarray_free(Add(a, a));
  ASSERT_MXC(mxc_wait_all());
  EXPECT_EQ(Count(Trace(), "operator", AddName()), 2);
  // Stopped: nothing more is recorded, what was stays to be dumped...
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_STOP));
  mxc_ndarray_free(Add(a, a));
  ASSERT_MXC(mxc_wait_all());
  EXPECT_EQ(Count(Trace(), "operator", AddName()), 2);
  // ...until a run after the stop starts afresh.
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_RUN));
  mxc_ndarray_free(Add(a, a));
  ASSERT_MXC(mxc_wait_all());
  EXPECT_EQ(Count(Trace(), "operator", AddName()), 1);
  mxc_ndarray_free(a);
}

TEST_F(Profiler, StatsAgreeWithCallsAndTrace) {
  Start();
  ASSERT_MXC(mxc_profiler_set_config("profile_memory", "1"));
  mxc_ndarray a = Make({16, 16}, 1);
  const int kCalls = 7;
  for (int i = 0; i < kCalls; ++i) mxc_ndarray_free(Add(a, a));
  ASSERT_MXC(mxc_wait_all());
  std::string t = Trace(), s = StatsJson();
  int n = 0;
  int64_t sum = DurSumNs(t, "operator", AddName(), &n);
  EXPECT_EQ(n, kCalls);
  EXPECT_EQ(StatField(s, AddName(), "calls"), kCalls) << s;
  EXPECT_EQ(StatField(s, AddName(), "total_ns"), sum) << s;
  int64_t mn = StatField(s, AddName(), "min_ns");
  int64_t mx = StatField(s, AddName(), "max_ns");
  EXPECT_LE(mn, mx);
  EXPECT_LE(mn * kCalls, sum);
  EXPECT_GE(mx * kCalls, sum);
  // Each call allocated its 16x16 float32 output (a 1024-byte class).
  EXPECT_EQ(StatField(s, AddName(), "alloc_bytes"), kCalls * 1024) << s;
  size_t allocs = s.find("\"allocations\":{");
  ASSERT_NE(allocs, std::string::npos) << s;
  EXPECT_EQ(StatField(s, AddName(), "count", allocs), kCalls) << s;
  // The table names the same operator and count.
  char *tab = nullptr;
  ASSERT_MXC(mxc_profiler_stats(MXC_PROFILER_TABLE, 1, &tab));
  std::string table = Take(tab);
  size_t row = table.find("\n  " + AddName() + " ");
  ASSERT_NE(row, std::string::npos) << table;
  long long calls = -1;
  sscanf(table.c_str() + row + 3 + AddName().size(), "%lld", &calls);
  EXPECT_EQ(calls, kCalls) << table;
  // reset discarded everything.
  EXPECT_EQ(Count(Trace(), "operator"), 0);
  mxc_ndarray_free(a);
}

TEST_F(Profiler, DumpWritesTheFile) {
  std::string path = ::testing::TempDir() + "/mxc_prof_dump.json";
  ASSERT_MXC(mxc_profiler_set_config("filename", path.c_str()));
  Start();
  mxc_ndarray a = Make({2}, 1);
  mxc_ndarray_free(Add(a, a));
  ASSERT_MXC(mxc_wait_all());
  std::string before = Trace();
  ASSERT_MXC(mxc_profiler_dump(1));
  FILE *f = fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  fclose(f);
  EXPECT_EQ(Count(text, "operator", AddName()), 1);
  EXPECT_EQ(text.rfind("{\"traceEvents\":[", 0), 0u);
  // finished: stopped and emptied.
  int state = -1;
  ASSERT_MXC(mxc_profiler_get_state(&state));
  EXPECT_EQ(state, MXC_PROFILER_STOP);
  EXPECT_EQ(Count(Trace(), "operator"), 0);
  // An unwritable path is MXC_ERR_IO, naming it.
  ASSERT_MXC(mxc_profiler_set_config("filename", "/nonexistent/dir/p.json"));
  EXPECT_EQ(mxc_profiler_dump(0), MXC_ERR_IO);
  EXPECT_NE(std::string(mxc_last_error()).find("/nonexistent/dir"),
            std::string::npos);
  mxc_ndarray_free(a);
  remove(path.c_str());
  ASSERT_MXC(mxc_profiler_set_config("filename", "profile.json"));
}

TEST_F(Profiler, BadInputIsAnError) {
  EXPECT_EQ(mxc_profiler_set_config("profile_everything", "1"),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("profile_everything"),
            std::string::npos);
  EXPECT_EQ(mxc_profiler_set_config("profile_io", "yes"),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_set_config("filename", ""), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_set_config(nullptr, "1"), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_set_config("filename", nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_set_state(3), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_set_state(-1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_get_state(nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_dumps(nullptr), MXC_ERR_INVALID_ARGUMENT);
  char *s = nullptr;
  EXPECT_EQ(mxc_profiler_stats(2, 0, &s), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(mxc_profiler_stats(MXC_PROFILER_JSON, 0, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_range_begin(nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_mark(nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_counter(nullptr, 1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_profiler_range_end(), MXC_ERR_INVALID_ARGUMENT);
  for (int i = 0; i < 16; ++i) ASSERT_MXC(mxc_profiler_range_begin("r"));
  EXPECT_EQ(mxc_profiler_range_begin("r"), MXC_ERR_INVALID_ARGUMENT);
  for (int i = 0; i < 16; ++i) ASSERT_MXC(mxc_profiler_range_end());
  EXPECT_EQ(mxc_profiler_range_end(), MXC_ERR_INVALID_ARGUMENT);
}

// Statistics of a session with no events (found by the R binding's test
// under UBSan: qsort was given the NULL row array).
TEST_F(Profiler, StatsOfAnEmptySession) {
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_STOP));
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_RUN));
  ASSERT_MXC(mxc_profiler_set_state(MXC_PROFILER_PAUSE));
  std::string json = StatsJson(1);
  EXPECT_NE(json.find("\"events\""), std::string::npos) << json;
  char *tab = nullptr;
  ASSERT_MXC(mxc_profiler_stats(MXC_PROFILER_TABLE, 1, &tab));
  EXPECT_NE(Take(tab), "");
}

TEST_F(Profiler, LongAndOddNamesStayValid) {
  Start();
  std::string long_name(200, 'x');
  ASSERT_MXC(mxc_profiler_mark(long_name.c_str()));
  ASSERT_MXC(mxc_profiler_mark("quote\" back\\slash\nnewline"));
  std::string t = Trace();
  EXPECT_NE(t.find("\"" + std::string(47, 'x') + "\""), std::string::npos);
  EXPECT_NE(t.find("quote\\\" back\\\\slash\\u000anewline"), std::string::npos)
      << t;
}

// Caller threads and engine workers record at once; each range and each
// operator run is in the trace once, on its own thread's track.
TEST_F(Profiler, ManyThreadsRecord) {
  Start();
  const int kThreads = 4, kIters = 50;
  mxc_ndarray big = Make({64, 64}, 1);  // large enough for the workers
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < kIters; ++i) {
        EXPECT_EQ(mxc_profiler_range_begin("step"), MXC_OK);
        mxc_ndarray_free(Add(big, big));
        EXPECT_EQ(mxc_profiler_range_end(), MXC_OK);
      }
    });
  }
  // Reading the trace while they record is allowed.
  for (int i = 0; i < 5; ++i) Trace();
  for (auto &th : ts) th.join();
  ASSERT_MXC(mxc_wait_all());
  std::string t = Trace();
  EXPECT_EQ(Count(t, "user", "step"), kThreads * kIters);
  EXPECT_EQ(Count(t, "operator", AddName()), kThreads * kIters);
  EXPECT_NE(t.find("\"args\":{\"name\":\"engine cpu worker 0\"}"),
            std::string::npos);
  std::string s = StatsJson();
  EXPECT_EQ(StatField(s, AddName(), "calls"), kThreads * kIters);
  mxc_ndarray_free(big);
}

}  // namespace
