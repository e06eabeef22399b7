// API calls made from inside the library's own callbacks: pushed
// functions (sync and async) and their on_free, executor monitors and the
// log callback. Each call either works or fails with MXC_ERR_REENTRANT
// naming the rule; none may deadlock (a watchdog fails the test instead of
// hanging). Runs with both engine kinds.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"
#include "tests/lifetime/lifetime_util.h"

namespace {

// What a pushed function saw when it called back into the API.
struct Inside {
  mxc_ndarray own = nullptr;    // a handle on the function's write array
  mxc_ndarray other = nullptr;  // an unrelated array
  int wait_all = -1, wait_read = -1, wait_write = -1, threads = -1;
  int to_host = -1, invoke = -1, push = -1, create = -1, data_after_free = -1;
  std::string wait_all_msg;
  float seen = 0;
};

int nested_fn(void *, mxc_opctx) { return MXC_OK; }

int calls_back(void *ud, mxc_opctx ctx) {
  Inside *in = static_cast<Inside *>(ud);
  in->wait_all = mxc_wait_all();
  in->wait_all_msg = mxc_last_error();
  in->wait_read = mxc_ndarray_wait_to_read(in->other);
  in->wait_write = mxc_ndarray_wait_to_write(in->own);
  in->threads = mxc_set_num_threads(2);
  float buf[4];
  in->to_host = mxc_ndarray_copy_to_host(in->other, buf, sizeof buf);
  mxc_op relu = nullptr;
  mxc_op_find("relu", &relu);
  mxc_ndarray r = nullptr;
  in->invoke = mxc_op_invoke(relu, nullptr, nullptr, 0, &in->other, 1, &r, 1,
                             nullptr);
  mxc_ndarray_free(r);
  in->push = mxc_engine_push(nested_fn, nullptr, nullptr, &in->other, 1,
                             nullptr, 0, 0, "nested");
  mxc_ndarray c = make_array(3.0f);
  in->create = c ? MXC_OK : mxc_last_error_code();
  mxc_ndarray_free(c);
  // Freeing the function's own array: its storage lives until we return.
  mxc_ndarray_free(in->own);
  in->own = nullptr;
  void *data = nullptr;
  in->data_after_free = mxc_opctx_data(ctx, 0, &data, nullptr);
  if (data) {
    static_cast<float *>(data)[0] = 42.0f;
    in->seen = static_cast<float *>(data)[1];
  }
  return MXC_OK;
}

TEST(Reentrancy, PushedFunctionCallsTheApi) {
  Watchdog dog("PushedFunctionCallsTheApi", 60);
  Inside in;
  mxc_ndarray target = make_array(5.0f);
  ASSERT_EQ(mxc_ndarray_detach(target, &in.own), MXC_OK);  // a second handle
  in.other = make_array(-1.0f);
  ASSERT_EQ(mxc_engine_push(calls_back, &in, nullptr, nullptr, 0, &target, 1,
                            0, "calls_back"),
            MXC_OK);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(in.wait_all, MXC_ERR_REENTRANT);
  EXPECT_NE(in.wait_all_msg.find("mxc_wait_all: called from inside a "
                                 "function run by the engine"),
            std::string::npos)
      << in.wait_all_msg;
  EXPECT_EQ(in.wait_read, MXC_ERR_REENTRANT);
  EXPECT_EQ(in.wait_write, MXC_ERR_REENTRANT);
  EXPECT_EQ(in.threads, MXC_ERR_REENTRANT);
  EXPECT_EQ(in.to_host, MXC_ERR_REENTRANT);
  EXPECT_EQ(in.invoke, MXC_OK);
  EXPECT_EQ(in.push, MXC_OK);
  EXPECT_EQ(in.create, MXC_OK);
  EXPECT_EQ(in.data_after_free, MXC_OK);
  EXPECT_EQ(in.seen, 5.0f);
  float out[4];
  ASSERT_EQ(mxc_ndarray_copy_to_host(target, out, sizeof out), MXC_OK);
  EXPECT_EQ(out[0], 42.0f);  // written after its handle was freed
  EXPECT_EQ(out[1], 5.0f);
  int n = 0;  // the engine is still usable and its thread count unchanged
  ASSERT_EQ(mxc_get_num_threads(&n), MXC_OK);
  EXPECT_GE(n, 1);
  mxc_ndarray_free(target);
  mxc_ndarray_free(in.other);
}

std::atomic<int> g_on_free_wait{-1};
void on_free_waits(void *) { g_on_free_wait = mxc_wait_all(); }

TEST(Reentrancy, OnFreeMayNotWait) {
  Watchdog dog("OnFreeMayNotWait", 60);
  mxc_ndarray a = make_array(1.0f);
  ASSERT_EQ(mxc_engine_push(nested_fn, nullptr, on_free_waits, nullptr, 0, &a,
                            1, 0, "f"),
            MXC_OK);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(g_on_free_wait.load(), MXC_ERR_REENTRANT);
  mxc_ndarray_free(a);
}

// ---- async completion ----

struct AsyncCase {
  mxc_opctx ctx = nullptr;
  std::atomic<int> started{0};
};

void keep_async(void *ud, mxc_opctx ctx) {
  AsyncCase *c = static_cast<AsyncCase *>(ud);
  c->ctx = ctx;
  c->started = 1;
}

TEST(Reentrancy, AsyncCompletedTwiceAndUsedAfter) {
  Watchdog dog("AsyncCompletedTwiceAndUsedAfter", 60);
  mxc_ndarray a = make_array(1.0f);
  AsyncCase c;
  std::thread pusher([&] {
    // With the naive engine the push returns only after completion.
    ASSERT_EQ(mxc_engine_push_async(keep_async, &c, nullptr, nullptr, 0, &a,
                                    1, 0, "async"),
              MXC_OK);
  });
  while (!c.started.load()) std::this_thread::yield();
  // Two threads race to complete: exactly one wins.
  std::atomic<int> ok{0}, dead{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; ++i) {
    ts.emplace_back([&] {
      int rc = mxc_opctx_complete(c.ctx, MXC_OK, nullptr);
      if (rc == MXC_OK) ok++;
      if (rc == MXC_ERR_INVALID_HANDLE) dead++;
    });
  }
  for (auto &t : ts) t.join();
  pusher.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(dead.load(), 1);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  void *p = nullptr;
  EXPECT_EQ(mxc_opctx_data(c.ctx, 0, &p, nullptr), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_opctx_set_error(c.ctx, "late"), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_opctx_complete(c.ctx, MXC_OK, nullptr),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(mxc_last_error()).find("already"), std::string::npos)
      << mxc_last_error();
  mxc_ndarray_free(a);
}

int complete_sync(void *ud, mxc_opctx ctx) {
  *static_cast<int *>(ud) = mxc_opctx_complete(ctx, MXC_OK, nullptr);
  return MXC_OK;
}

TEST(Reentrancy, SyncFunctionCannotComplete) {
  Watchdog dog("SyncFunctionCannotComplete", 60);
  mxc_ndarray a = make_array(1.0f);
  int rc = -1;
  ASSERT_EQ(mxc_engine_push(complete_sync, &rc, nullptr, nullptr, 0, &a, 1, 0,
                            "s"),
            MXC_OK);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray_free(a);
}

// ---- executor monitor ----

struct Monitor {
  mxc_executor ex = nullptr, other = nullptr;
  int calls = 0;
  int forward = -1, backward = -1, free_code = -1, set_monitor = -1;
  int read = -1, output = -1, other_forward = -1;
  float first = 0;
};

void monitor_cb(void *ud, const char *, mxc_ndarray arr) {
  Monitor *m = static_cast<Monitor *>(ud);
  if (m->calls++ > 0) return;
  m->forward = mxc_executor_forward(m->ex, 0);
  m->backward = mxc_executor_backward(m->ex, 0, nullptr);
  mxc_executor_free(m->ex);
  m->free_code = mxc_last_error_code();
  m->set_monitor = mxc_executor_set_monitor(m->ex, nullptr, nullptr);
  float buf[4];
  m->read = mxc_ndarray_copy_to_host(arr, buf, sizeof buf);
  m->first = buf[0];
  mxc_ndarray o = nullptr;
  m->output = mxc_executor_output(m->ex, 0, &o);
  mxc_ndarray_free(o);
  m->other_forward = mxc_executor_forward(m->other, 0);
}

mxc_executor bind_relu() {
  mxc_op relu = nullptr;
  mxc_op_find("relu", &relu);
  mxc_symbol x = nullptr, y = nullptr;
  mxc_symbol_variable("x", &x);
  mxc_symbol_create(relu, nullptr, nullptr, 0, "r", nullptr, &x, 1, &y);
  const char *names[] = {"x"};
  int ndims[] = {1};
  int64_t dims[] = {4};
  mxc_executor ex = nullptr;
  mxc_executor_simple_bind(y, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                           nullptr, MXC_REQ_WRITE, 0, nullptr, nullptr, 0,
                           &ex);
  mxc_symbol_free(x);
  mxc_symbol_free(y);
  return ex;
}

TEST(Reentrancy, MonitorCallsTheApi) {
  Watchdog dog("MonitorCallsTheApi", 60);
  Monitor m;
  m.ex = bind_relu();
  m.other = bind_relu();
  ASSERT_TRUE(m.ex && m.other);
  mxc_ndarray x = nullptr;
  ASSERT_EQ(mxc_executor_arg(m.ex, "x", &x), MXC_OK);
  float in[4] = {-1, 2, -3, 4};
  ASSERT_EQ(mxc_ndarray_copy_from_host(x, in, sizeof in), MXC_OK);
  ASSERT_EQ(mxc_executor_set_monitor(m.ex, monitor_cb, &m), MXC_OK);
  ASSERT_EQ(mxc_executor_forward(m.ex, 1), MXC_OK);
  EXPECT_GE(m.calls, 1);
  EXPECT_EQ(m.forward, MXC_ERR_REENTRANT);
  EXPECT_EQ(m.backward, MXC_ERR_REENTRANT);
  EXPECT_EQ(m.free_code, MXC_ERR_REENTRANT);
  EXPECT_EQ(m.set_monitor, MXC_ERR_REENTRANT);
  EXPECT_EQ(m.read, MXC_OK);
  EXPECT_EQ(m.output, MXC_OK);
  EXPECT_EQ(m.other_forward, MXC_OK);
  // The executor survived the refused free and still runs.
  ASSERT_EQ(mxc_executor_set_monitor(m.ex, nullptr, nullptr), MXC_OK);
  ASSERT_EQ(mxc_executor_forward(m.ex, 1), MXC_OK);
  ASSERT_EQ(mxc_executor_backward(m.ex, 0, nullptr), MXC_OK);
  mxc_ndarray out = nullptr;
  ASSERT_EQ(mxc_executor_output(m.ex, 0, &out), MXC_OK);
  float got[4];
  ASSERT_EQ(mxc_ndarray_copy_to_host(out, got, sizeof got), MXC_OK);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], in[i] > 0 ? in[i] : 0.0f);
  mxc_ndarray_free(out);
  mxc_ndarray_free(x);
  mxc_executor_free(m.ex);
  mxc_executor_free(m.other);
}

// ---- log callback ----

struct LogCase {
  std::atomic<int> calls{0};
  int set = -1, wait = -1, name_ok = 0, nested_invoke = -1;
  mxc_ndarray csr = nullptr;
};

mxc_ndarray make_csr() {
  int64_t shape[2] = {2, 2};
  float data[1] = {1.0f};
  int64_t indptr[3] = {0, 1, 1}, indices[1] = {1};
  mxc_ndarray a = nullptr;
  mxc_ndarray_create_csr(shape, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data,
                         indptr, indices, 1, MXC_DEVICE_CPU, 0, &a);
  return a;
}

// Invokes op on a csr array: an operator without a csr kernel logs one
// storage-fallback warning per distinct call.
int invoke_on_csr(const char *op_name, mxc_ndarray csr) {
  mxc_op op = nullptr;
  int rc = mxc_op_find(op_name, &op);
  if (rc != MXC_OK) return rc;
  mxc_ndarray out = nullptr;
  rc = mxc_op_invoke(op, nullptr, nullptr, 0, &csr, 1, &out, 1, nullptr);
  mxc_ndarray_free(out);
  return rc;
}

void log_cb(int, const char *, void *ud) {
  LogCase *c = static_cast<LogCase *>(ud);
  if (c->calls++ > 0) return;
  c->set = mxc_set_log_callback(nullptr, nullptr);
  c->wait = mxc_wait_all();
  c->name_ok = mxc_dtype_name(MXC_DTYPE_FLOAT32) != nullptr;
  // Logs again (another fallback): to stderr, not back into this callback.
  c->nested_invoke = invoke_on_csr("exp", c->csr);
}

TEST(Reentrancy, LogCallbackCallsTheApi) {
  Watchdog dog("LogCallbackCallsTheApi", 60);
  LogCase c;
  c.csr = make_csr();
  ASSERT_NE(c.csr, nullptr);
  ASSERT_EQ(mxc_set_log_callback(log_cb, &c), MXC_OK);
  ASSERT_EQ(invoke_on_csr("sigmoid", c.csr), MXC_OK);
  ASSERT_EQ(mxc_set_log_callback(nullptr, nullptr), MXC_OK);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  ASSERT_EQ(c.calls.load(), 1) << "the nested log recursed into the callback";
  EXPECT_EQ(c.set, MXC_ERR_REENTRANT);
  EXPECT_EQ(c.wait, MXC_ERR_REENTRANT);
  EXPECT_EQ(c.name_ok, 1);
  EXPECT_EQ(c.nested_invoke, MXC_OK);
  mxc_ndarray_free(c.csr);
}

}  // namespace
