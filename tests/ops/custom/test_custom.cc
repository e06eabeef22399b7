// Custom operators: callbacks registered from C (mxc_custom_op_register)
// and run by the operator "Custom" with op_type=NAME, imperatively, under
// autograd and in an executor; failing callbacks, registration errors,
// unregistering, and calls back into the library from a callback.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

std::string kw(const mxc_custom_call *c, const char *key, const char *dflt) {
  for (int i = 0; i < c->n_kw; ++i) {
    if (std::strcmp(c->keys[i], key) == 0) return c->vals[i];
  }
  return dflt;
}

int64_t count(const mxc_custom_tensor &t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

// "scale_add": out = scale * a + b (float64), scale a parameter.
int sa_infer(const mxc_custom_call *c, int n_in, const int *ind,
             const int64_t *idims, int n_out, int *outd, int64_t *odims) {
  (void)n_in, (void)n_out;
  bool same = ind[0] == ind[1] &&
              std::memcmp(idims, idims + MXC_MAX_NDIM, 8 * ind[0]) == 0;
  if (!same) {
    std::snprintf(c->msg, c->msg_len, "a and b must have one shape");
    return 1;
  }
  outd[0] = ind[0];
  std::memcpy(odims, idims, 8 * ind[0]);
  return 0;
}

void put(double *dst, double v, int req) {
  if (req == MXC_REQ_ADD) {
    *dst += v;
  } else if (req == MXC_REQ_WRITE) {
    *dst = v;
  }
}

int sa_forward(const mxc_custom_call *c, int n_in,
               const mxc_custom_tensor *in, int n_out,
               const mxc_custom_tensor *out, const int *req) {
  (void)n_in, (void)n_out;
  if (in[0].dtype != MXC_DTYPE_FLOAT64) {
    std::snprintf(c->msg, c->msg_len, "float64 only");
    return 2;
  }
  double s = std::stod(kw(c, "scale", "1"));
  auto *a = static_cast<const double *>(in[0].data);
  auto *b = static_cast<const double *>(in[1].data);
  auto *o = static_cast<double *>(out[0].data);
  for (int64_t i = 0; i < count(out[0]); ++i) put(&o[i], s * a[i] + b[i], req[0]);
  return 0;
}

int sa_backward(const mxc_custom_call *c, int n_in, int n_out,
                const mxc_custom_tensor *ograd, const mxc_custom_tensor *in,
                const mxc_custom_tensor *out, const mxc_custom_tensor *igrad,
                const int *req) {
  (void)n_in, (void)n_out, (void)in, (void)out;
  double s = std::stod(kw(c, "scale", "1"));
  auto *g = static_cast<const double *>(ograd[0].data);
  auto *da = static_cast<double *>(igrad[0].data);
  auto *db = static_cast<double *>(igrad[1].data);
  for (int64_t i = 0; i < count(ograd[0]); ++i) {
    put(&da[i], s * g[i], req[0]);
    put(&db[i], g[i], req[1]);
  }
  return 0;
}

std::atomic<int> g_destroyed{0};
void count_destroy(void *) { g_destroyed++; }

mxc_custom_op_def scale_add_def() {
  mxc_custom_op_def d{};
  d.num_inputs = 2;
  d.num_outputs = 1;
  d.infer_shape = sa_infer;
  d.forward = sa_forward;
  d.backward = sa_backward;
  d.destroy = count_destroy;
  return d;
}

// Registers `name` for the test's duration.
struct Registered {
  std::string name;
  Registered(const std::string &n, const mxc_custom_op_def &d) : name(n) {
    EXPECT_EQ(mxc_custom_op_register(n.c_str(), &d), MXC_OK) << err();
  }
  ~Registered() { mxc_custom_op_unregister(name.c_str()); }
};

TEST(Custom, ForwardMatchesNaiveReference) {
  Registered r("scale_add", scale_add_def());
  auto av = uniform(6, -1, 1, 3), bv = uniform(6, -1, 1, 4);
  auto a = make({2, 3}, av, MXC_DTYPE_FLOAT64);
  auto b = make({2, 3}, bv, MXC_DTYPE_FLOAT64);
  auto out = invoke("Custom", {&a, &b},
                    {{"op_type", "scale_add"}, {"scale", "2.5"}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  auto o = read(out[0]);
  for (size_t i = 0; i < o.size(); ++i) EXPECT_DOUBLE_EQ(o[i], 2.5 * av[i] + bv[i]);
}

TEST(Custom, GradientMatchesFiniteDifferences) {
  Registered r("scale_add", scale_add_def());
  grad_check("Custom", {{2, 3}, {2, 3}},
             {uniform(6, -1, 1, 5), uniform(6, -1, 1, 6)},
             {{"op_type", "scale_add"}, {"scale", "-1.5"}});
}

TEST(Custom, Autograd) {
  Registered r("scale_add", scale_add_def());
  auto a = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  auto b = make({3}, {4, 5, 6}, MXC_DTYPE_FLOAT64);
  auto ga = make({3}, {0, 0, 0}, MXC_DTYPE_FLOAT64);
  auto gb = make({3}, {0, 0, 0}, MXC_DTYPE_FLOAT64);
  mxc_ndarray vars[] = {a.h, b.h}, grads[] = {ga.h, gb.h};
  ASSERT_EQ(mxc_autograd_mark_variables(2, vars, nullptr, grads), MXC_OK);
  int prev = 0;
  mxc_autograd_set_recording(1, &prev);
  auto out = invoke("Custom", {&a, &b}, {{"op_type", "scale_add"}, {"scale", "3"}});
  mxc_autograd_set_recording(prev, nullptr);
  ASSERT_EQ(out.size(), 1u);
  auto hg = make({3}, {1, -2, 0.5}, MXC_DTYPE_FLOAT64);
  mxc_ndarray heads[] = {out[0].h}, hgs[] = {hg.h};
  ASSERT_EQ(mxc_autograd_backward(1, heads, hgs, 0), MXC_OK) << err();
  EXPECT_EQ(read(ga), (std::vector<double>{3, -6, 1.5}));
  EXPECT_EQ(read(gb), (std::vector<double>{1, -2, 0.5}));
}

TEST(Custom, ExecutorFromJson) {
  Registered r("scale_add", scale_add_def());
  const char *json = R"({"nodes": [
    {"op": "null", "name": "a", "inputs": []},
    {"op": "null", "name": "b", "inputs": []},
    {"op": "Custom", "name": "c0", "attrs": {"op_type": "scale_add",
     "scale": "0.5"}, "inputs": [[0, 0, 0], [1, 0, 0]]}],
    "arg_nodes": [0, 1], "heads": [[2, 0, 0]]})";
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << err();
  char *back = nullptr;
  ASSERT_EQ(mxc_symbol_to_json(sym, &back), MXC_OK);
  EXPECT_NE(std::string(back).find("\"op_type\""), std::string::npos) << back;
  mxc_string_free(back);
  auto a = make({2, 2}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT64);
  auto b = make({2, 2}, {1, 1, 1, 1}, MXC_DTYPE_FLOAT64);
  auto ga = make({2, 2}, {0, 0, 0, 0}, MXC_DTYPE_FLOAT64);
  auto gb = make({2, 2}, {0, 0, 0, 0}, MXC_DTYPE_FLOAT64);
  mxc_ndarray args[] = {a.h, b.h}, grads[] = {ga.h, gb.h};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 2, args, grads, nullptr,
                              0, nullptr, 0, &ex),
            MXC_OK)
      << err();
  mxc_symbol_free(sym);
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  mxc_ndarray o = nullptr;
  ASSERT_EQ(mxc_executor_output(ex, 0, &o), MXC_OK);
  Arr out(o);
  EXPECT_EQ(read(out), (std::vector<double>{1.5, 2, 2.5, 3}));
  ASSERT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_OK) << err();
  EXPECT_EQ(read(ga), (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_EQ(read(gb), (std::vector<double>{1, 1, 1, 1}));
  mxc_executor_free(ex);
}

TEST(Custom, FailingCallbacksNameTheOperator) {
  Registered r("scale_add", scale_add_def());
  auto a = make({2}, {1, 2}, MXC_DTYPE_FLOAT32);  // forward refuses float32
  auto b = make({2}, {1, 2}, MXC_DTYPE_FLOAT32);
  int rc = 0;
  auto out = invoke("Custom", {&a, &b}, {{"op_type", "scale_add"}}, &rc);
  ASSERT_EQ(rc, MXC_OK) << "the failure is the kernel's, reported at the wait";
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(mxc_ndarray_wait_to_read(out[0].h), MXC_ERR_OPERATOR);
  std::string e = err();
  EXPECT_NE(e.find("op_type 'scale_add'"), std::string::npos) << e;
  EXPECT_NE(e.find("forward callback failed (returned 2): float64 only"),
            std::string::npos)
      << e;
  EXPECT_EQ(mxc_wait_all(), MXC_ERR_OPERATOR) << "kept for the next wait_all";
  // Shape inference failing: reported at invoke time.
  auto c = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  auto d = make({2}, {1, 2}, MXC_DTYPE_FLOAT64);
  invoke("Custom", {&c, &d}, {{"op_type", "scale_add"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("a and b must have one shape"), std::string::npos)
      << err();
}

TEST(Custom, RegistrationErrorsAndUnregister) {
  mxc_custom_op_def d = scale_add_def();
  int before = g_destroyed.load();
  ASSERT_EQ(mxc_custom_op_register("twice", &d), MXC_OK) << err();
  EXPECT_EQ(mxc_custom_op_register("twice", &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("already registered"), std::string::npos) << err();
  EXPECT_EQ(mxc_custom_op_register(nullptr, &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_custom_op_register("", &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_custom_op_register(std::string(200, 'x').c_str(), &d),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_custom_op_register("nodef", nullptr), MXC_ERR_INVALID_ARGUMENT);
  mxc_custom_op_def bad = d;
  bad.num_inputs = 0;
  EXPECT_EQ(mxc_custom_op_register("bad", &bad), MXC_ERR_INVALID_ARGUMENT);
  bad = d;
  bad.forward = nullptr;
  EXPECT_EQ(mxc_custom_op_register("bad", &bad), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(g_destroyed.load(), before) << "refused definitions are not destroyed";

  ASSERT_EQ(mxc_custom_op_unregister("twice"), MXC_OK);
  EXPECT_EQ(g_destroyed.load(), before + 1);
  EXPECT_EQ(mxc_custom_op_unregister("twice"), MXC_ERR_NOT_FOUND);
  auto a = make({1}, {1}, MXC_DTYPE_FLOAT64);
  int rc = 0;
  invoke("Custom", {&a, &a}, {{"op_type", "twice"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("'twice'"), std::string::npos) << err();
  invoke("Custom", {&a, &a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("op_type"), std::string::npos) << err();
  // The name can be used again.
  ASSERT_EQ(mxc_custom_op_register("twice", &d), MXC_OK);
  EXPECT_EQ(mxc_custom_op_unregister("twice"), MXC_OK);
}

TEST(Custom, NoBackwardIsAnErrorNamingTheOperator) {
  mxc_custom_op_def d = scale_add_def();
  d.backward = nullptr;
  Registered r("fwd_only", d);
  auto a = make({2}, {1, 2}, MXC_DTYPE_FLOAT64);
  auto ga = make({2}, {0, 0}, MXC_DTYPE_FLOAT64);
  mxc_ndarray vars[] = {a.h}, grads[] = {ga.h};
  ASSERT_EQ(mxc_autograd_mark_variables(1, vars, nullptr, grads), MXC_OK);
  int prev = 0;
  mxc_autograd_set_recording(1, &prev);
  auto out = invoke("Custom", {&a, &a}, {{"op_type", "fwd_only"}});
  mxc_autograd_set_recording(prev, nullptr);
  ASSERT_EQ(out.size(), 1u);
  mxc_ndarray heads[] = {out[0].h};
  EXPECT_EQ(mxc_autograd_backward(1, heads, nullptr, 0), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("'fwd_only'"), std::string::npos) << err();
}

// A forward that calls back into the library: waiting is refused
// (MXC_ERR_REENTRANT), invoking works, unregistering itself is deferred.
struct Reentry {
  std::atomic<int> wait_rc{-1}, invoke_rc{-1}, unregister_rc{-1};
  std::atomic<int> destroyed_inside{-1};
};
Reentry g_re;
std::atomic<int> g_re_destroyed{0};

int reentrant_forward(const mxc_custom_call *c, int, const mxc_custom_tensor *in,
                      int, const mxc_custom_tensor *out, const int *req) {
  (void)c;
  g_re.wait_rc = mxc_wait_all();
  mxc_op relu = nullptr;
  mxc_op_find("relu", &relu);
  mxc_ndarray x = nullptr, y = nullptr;
  int64_t shape[] = {1};
  mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &x);
  g_re.invoke_rc = mxc_op_invoke(relu, nullptr, nullptr, 0, &x, 1, &y, 1, nullptr);
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  g_re.unregister_rc = mxc_custom_op_unregister("reentrant");
  g_re.destroyed_inside = g_re_destroyed.load();
  auto *a = static_cast<const double *>(in[0].data);
  auto *o = static_cast<double *>(out[0].data);
  for (int64_t i = 0; i < count(out[0]); ++i) put(&o[i], a[i], req[0]);
  return 0;
}

TEST(Custom, CallsIntoTheLibraryFromACallback) {
  mxc_custom_op_def d{};
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.forward = reentrant_forward;
  d.destroy = [](void *) { g_re_destroyed++; };
  ASSERT_EQ(mxc_custom_op_register("reentrant", &d), MXC_OK);
  auto a = make({2}, {1, 2}, MXC_DTYPE_FLOAT64);
  auto out = invoke("Custom", {&a}, {{"op_type", "reentrant"}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(read(out[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(g_re.wait_rc.load(), MXC_ERR_REENTRANT);
  EXPECT_EQ(g_re.invoke_rc.load(), MXC_OK);
  EXPECT_EQ(g_re.unregister_rc.load(), MXC_OK);
  EXPECT_EQ(g_re.destroyed_inside.load(), 0) << "destroy waits for the call";
  EXPECT_EQ(g_re_destroyed.load(), 1);
  EXPECT_EQ(mxc_custom_op_unregister("reentrant"), MXC_ERR_NOT_FOUND);
}

}  // namespace
