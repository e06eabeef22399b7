// Executor errors, the monitor, asynchronous failures and allocation
// failures.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}
#include "tests/exec/exec_test_util.h"

using namespace exectest;

namespace {

mxc_symbol small_mlp() {
  mxc_symbol data = var("data"), label = var("label");
  mxc_symbol fc1 = op("FullyConnected", {{"num_hidden", "5"}}, "fc1", {data});
  mxc_symbol a1 = op("Activation", {{"act_type", "relu"}}, "relu1", {fc1});
  mxc_symbol fc2 = op("FullyConnected", {{"num_hidden", "3"}}, "fc2", {a1});
  mxc_symbol out = op("SoftmaxOutput", {}, "sm", {fc2, label});
  for (auto s : {data, label, fc1, a1, fc2}) mxc_symbol_free(s);
  return out;
}

// Arrays for small_mlp (data, fc1_weight, fc1_bias, fc2_weight, fc2_bias,
// label) with batch 4.
struct Arrays {
  std::vector<mxc_ndarray> args, grads;
  Arrays() {
    std::vector<Shape> shapes = {{4, 6}, {5, 6}, {5}, {3, 5}, {3}, {4}};
    std::mt19937 rng(2);
    for (const auto &s : shapes) {
      args.push_back(make(s, random_vec(numel(s), rng)));
      grads.push_back(make(s, Vec((size_t)numel(s), 0.0)));
    }
  }
  ~Arrays() {
    for (auto a : args) mxc_ndarray_free(a);
    for (auto a : grads) mxc_ndarray_free(a);
  }
};

TEST(ExecutorErrors, BindChecksArrays) {
  mxc_symbol sym = small_mlp();
  ASSERT_EQ(arguments(sym),
            std::vector<std::string>({"data", "fc1_weight", "fc1_bias",
                                      "fc2_weight", "fc2_bias", "label"}));
  Arrays a;
  mxc_executor ex = (mxc_executor)0x1234;
  // Wrong count.
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 5, a.args.data(), nullptr,
                              nullptr, 0, nullptr, 0, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("6 arguments"), std::string::npos) << err();
  // Wrong weight shape: named by inference.
  mxc_ndarray bad_w = make({4, 6}, Vec(24, 0.0));
  std::vector<mxc_ndarray> args = a.args;
  args[1] = bad_w;
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, args.data(), nullptr,
                              nullptr, 0, nullptr, 0, &ex),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("fc1"), std::string::npos) << err();
  if (getenv("MXC_EXEC_TEST_PRINT")) printf("%s\n", err().c_str());
  // Wrong dtype.
  mxc_ndarray w64 = make({5, 6}, Vec(30, 0.0), MXC_DTYPE_FLOAT64);
  args[1] = w64;
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, args.data(), nullptr,
                              nullptr, 0, nullptr, 0, &ex),
            MXC_ERR_DTYPE);
  EXPECT_NE(err().find("fc1"), std::string::npos) << err();
  if (getenv("MXC_EXEC_TEST_PRINT")) printf("%s\n", err().c_str());
  // Gradient array of the wrong shape names the argument.
  std::vector<mxc_ndarray> grads = a.grads;
  grads[3] = bad_w;
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(),
                              grads.data(), nullptr, 0, nullptr, 0, &ex),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("fc2_weight"), std::string::npos) << err();
  // A request without a gradient array, a bad request, bad flags.
  int reqs[] = {0, 1, 1, 1, 1, 0};
  std::vector<mxc_ndarray> holes = a.grads;
  holes[2] = nullptr;
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(),
                              holes.data(), reqs, 0, nullptr, 0, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("fc1_bias"), std::string::npos) << err();
  int bad_reqs[] = {0, 2, 1, 1, 1, 0};
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(),
                              a.grads.data(), bad_reqs, 0, nullptr, 0, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(), nullptr,
                              nullptr, 0, nullptr, 64, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  // The internal bit (core/exec's CPU bind of a GPU graph) is not public.
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(), nullptr,
                              nullptr, 0, nullptr, 1 << 30, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("unknown bits"), std::string::npos) << err();
  // Aux count, NULL array, bad handles, NULL out.
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(), nullptr,
                              nullptr, 1, a.args.data(), 0, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  args = a.args;
  args[0] = nullptr;
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, args.data(), nullptr,
                              nullptr, 0, nullptr, 0, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(
      mxc_executor_bind((mxc_symbol)a.args[0], MXC_DEVICE_CPU, 0, 6,
                        a.args.data(), nullptr, nullptr, 0, nullptr, 0, &ex),
      MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(), nullptr,
                              nullptr, 0, nullptr, 0, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, -1, 6, a.args.data(),
                              nullptr, nullptr, 0, nullptr, 0, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ex, (mxc_executor)0x1234);  // untouched by every failure
  mxc_ndarray_free(bad_w);
  mxc_ndarray_free(w64);
  mxc_symbol_free(sym);
}

TEST(ExecutorErrors, SimpleBindAndAccessors) {
  mxc_symbol sym = small_mlp();
  mxc_executor ex = nullptr;
  const char *names[] = {"data"}, *bogus[] = {"nonexistent"};
  int ndims[] = {2};
  int64_t dims[] = {4, 6};
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, bogus, ndims,
                                     dims, nullptr, MXC_REQ_WRITE, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("nonexistent"), std::string::npos) << err();
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 0, nullptr,
                                     nullptr, nullptr, nullptr, MXC_REQ_WRITE,
                                     0, nullptr, nullptr, 0, &ex),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("data"), std::string::npos) << err();
  EXPECT_EQ(
      mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                               nullptr, MXC_REQ_WRITE, 1, bogus, ndims, 0, &ex),
      MXC_ERR_NOT_FOUND);
  int bad_dtype[] = {99};
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     dims, bad_dtype, MXC_REQ_WRITE, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_ERR_DTYPE);
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     dims, nullptr, MXC_REQ_WRITE, 0, nullptr,
                                     nullptr, 1 << 30, &ex),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("unknown bits"), std::string::npos) << err();
  EXPECT_EQ(ex, nullptr);
  const char *label[] = {"label"};
  int null_req[] = {MXC_REQ_NULL};
  ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     dims, nullptr, MXC_REQ_WRITE, 1, label,
                                     null_req, 0, &ex),
            MXC_OK)
      << err();
  // Backward before any forward, and after an inference forward.
  EXPECT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("is_train"), std::string::npos) << err();
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK);
  mxc_ndarray wrong[] = {make({4, 2}, Vec(8, 0.0)), make({4, 2}, Vec(8, 0.0))};
  EXPECT_EQ(mxc_executor_backward(ex, 1, wrong), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_executor_backward(ex, 2, wrong), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_executor_backward(ex, 1, nullptr), MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray_free(wrong[0]);
  mxc_ndarray_free(wrong[1]);
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_executor_grad(ex, "label", &a), MXC_ERR_NOT_FOUND);
  EXPECT_EQ(mxc_executor_arg(ex, "nope", &a), MXC_ERR_NOT_FOUND);
  EXPECT_EQ(mxc_executor_aux(ex, "data", &a), MXC_ERR_NOT_FOUND);
  EXPECT_EQ(mxc_executor_arg(ex, nullptr, &a), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_executor_output(ex, 1, &a), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_executor_output(ex, 0, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, nullptr);
  // Arguments start as zeros.
  EXPECT_EQ(get_named(ex, "fc1_weight", 0), Vec(30, 0.0));
  EXPECT_EQ(get_named(ex, "fc1_weight", 1), Vec(30, 0.0));
  // Reshape with an unknown name or an inconsistent shape.
  mxc_executor r = nullptr;
  EXPECT_EQ(mxc_executor_reshape(ex, 1, bogus, ndims, dims, &r),
            MXC_ERR_NOT_FOUND);
  const char *w[] = {"fc1_weight"};
  int64_t wd[] = {7, 7};
  EXPECT_EQ(mxc_executor_reshape(ex, 1, w, ndims, wd, &r), MXC_ERR_SHAPE);
  EXPECT_EQ(r, nullptr);
  mxc_executor_free(ex);
  // Freed handles are reported, not dereferenced.
  EXPECT_EQ(mxc_executor_forward(ex, 0), MXC_ERR_INVALID_HANDLE);
  mxc_executor_free(ex);
  mxc_executor_free(nullptr);
  mxc_symbol_free(sym);
}

// ---- monitor ----

struct Seen {
  std::vector<std::string> names;
  std::map<std::string, Vec> vals;
};

void record(void *user, const char *name, mxc_ndarray arr) {
  Seen *s = (Seen *)user;
  s->names.push_back(name);
  s->vals[name] = get(arr);
}

TEST(ExecutorMonitor, SeesEveryNodeOutput) {
  mxc_symbol sym = small_mlp();
  Arrays a;
  int reqs[] = {0, 1, 1, 1, 1, 0};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 6, a.args.data(),
                              a.grads.data(), reqs, 0, nullptr, 0, &ex),
            MXC_OK)
      << err();
  Seen seen;
  int64_t handles0 = mxc__handle_live();
  ASSERT_EQ(mxc_executor_set_monitor(ex, record, &seen), MXC_OK);
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  EXPECT_EQ(seen.names, std::vector<std::string>({"fc1_output", "relu1_output",
                                                  "fc2_output", "sm_output"}));
  EXPECT_EQ(mxc__handle_live(), handles0);  // lent handles were released
  // The values are the node's: fc1 = data * W1^T + b1.
  Vec d = get(a.args[0]), w = get(a.args[1]), b = get(a.args[2]);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 5; ++j) {
      double s = b[j];
      for (int k = 0; k < 6; ++k) s += d[i * 6 + k] * w[j * 6 + k];
      EXPECT_NEAR(seen.vals["fc1_output"][i * 5 + j], s, 1e-5);
    }
  }
  seen.names.clear();
  ASSERT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_OK) << err();
  EXPECT_FALSE(seen.names.empty());
  for (const auto &n : seen.names) {
    EXPECT_NE(n.find("_backward"), std::string::npos) << n;
  }
  ASSERT_EQ(mxc_executor_set_monitor(ex, nullptr, nullptr), MXC_OK);
  seen.names.clear();
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK);
  EXPECT_TRUE(seen.names.empty());
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
}

// ---- asynchronous failure ----

TEST(ExecutorErrors, RunTimeFailureSurfacesAtWait) {
  // gather_nd checks its indices while running: an index out of range
  // fails the operator after forward has returned.
  mxc_symbol data = var("data"), idx = var("idx");
  mxc_symbol g = op("gather_nd", {}, "pick", {data, idx});
  mxc_symbol sym = op("Activation", {{"act_type", "relu"}}, "after", {g});
  mxc_ndarray args[] = {make({3, 4}, Vec(12, 1.0)), make({1, 2}, {5, 1})};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 2, args, nullptr, nullptr,
                              0, nullptr, 0, &ex),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
  mxc_ndarray out = nullptr;
  ASSERT_EQ(mxc_executor_output(ex, 0, &out), MXC_OK);
  EXPECT_NE(mxc_ndarray_wait_to_read(out), MXC_OK);
  EXPECT_NE(err().find("gather_nd"), std::string::npos) << err();
  // The failure also poisoned the executor's internal buffer; wait_all
  // clears every failure, and the executor runs again once the input is
  // fixed.
  EXPECT_NE(mxc_wait_all(), MXC_OK);
  set(args[1], {2, 1});
  ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
  EXPECT_EQ(get(out), Vec(8, 1.0));
  mxc_ndarray_free(out);
  for (auto a : args) mxc_ndarray_free(a);
  mxc_executor_free(ex);
  for (auto s : {data, idx, g, sym}) mxc_symbol_free(s);
}

// ---- allocation failures ----

void settle() {
  mxc_wait_all();
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

// bind + forward + backward + read + reshape + free with arrays of its own.
int scenario(mxc_symbol sym) {
  const char *names[] = {"data"};
  int ndims[] = {2};
  int64_t dims[] = {4, 6}, dims2[] = {2, 6};
  mxc_executor ex = nullptr, r = nullptr;
  int rc = mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                    dims, nullptr, MXC_REQ_WRITE, 0, nullptr,
                                    nullptr, 0, &ex);
  if (rc == MXC_OK) rc = mxc_executor_forward(ex, 1);
  if (rc == MXC_OK) rc = mxc_executor_backward(ex, 0, nullptr);
  mxc_ndarray g = nullptr;
  if (rc == MXC_OK) rc = mxc_executor_grad(ex, "fc1_weight", &g);
  float buf[30];
  if (rc == MXC_OK) rc = mxc_ndarray_copy_to_host(g, buf, sizeof buf);
  if (rc == MXC_OK) rc = mxc_executor_reshape(ex, 1, names, ndims, dims2, &r);
  if (rc == MXC_OK) rc = mxc_executor_forward(r, 0);
  mxc_ndarray_free(g);
  mxc_executor_free(r);
  mxc_executor_free(ex);
  return rc;
}

TEST(ExecutorFaults, EveryAllocationFails) {
  mxc_symbol sym = small_mlp();
  ASSERT_EQ(scenario(sym), MXC_OK) << err();  // warm-up
  settle();
  const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
  int failures = 0;
  for (int64_t n = 1; n < 20000; ++n) {
    mxc__fault_alloc_arm(n, 0);
    int rc = scenario(sym);
    int fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    if (fired && rc != MXC_OK) {
      EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation " << n << ": " << err();
    }
    settle();
    EXPECT_EQ(mxc__alloc_live(), live0)
        << "leak after failing allocation " << n;
    EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      break;
    }
    ++failures;
  }
  EXPECT_GT(failures, 50);
  printf("walked %d injected allocation failures\n", failures);
  mxc_symbol_free(sym);
}

}  // namespace
