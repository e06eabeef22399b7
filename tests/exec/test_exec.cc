// Executor correctness: forward and backward of small graphs against the
// imperative reference (exec_test_util.h), finite differences in float64,
// gradient accumulation, the memory plan, reshape and parameter files.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "tests/exec/exec_test_util.h"

using namespace exectest;

namespace {

// A symbol and its executor with random argument values; frees both.
struct Case {
  mxc_symbol sym = nullptr;
  mxc_executor ex = nullptr;
  std::map<std::string, Shape> shapes;
  std::map<std::string, Vec> values;
  int dtype = MXC_DTYPE_FLOAT32;
  ~Case() {
    mxc_executor_free(ex);
    mxc_symbol_free(sym);
  }

  // simple_bind from the given shapes; labels (names in no_grad) get no
  // gradient; every argument and auxiliary state gets values: labels
  // classes, moving variances positive, the rest uniform in [-1, 1].
  void bind(const std::map<std::string, Shape> &given,
            const std::set<std::string> &no_grad, int default_req,
            int flags = MXC_BIND_DEFAULT, unsigned seed = 1) {
    std::vector<const char *> names, req_names;
    std::vector<int> ndims, dtypes, reqs;
    std::vector<int64_t> dims;
    for (const auto &kv : given) {
      names.push_back(kv.first.c_str());
      ndims.push_back((int)kv.second.size());
      dims.insert(dims.end(), kv.second.begin(), kv.second.end());
      dtypes.push_back(dtype);
    }
    for (const auto &n : no_grad) {
      req_names.push_back(n.c_str());
      reqs.push_back(MXC_REQ_NULL);
    }
    ASSERT_EQ(
        mxc_executor_simple_bind(
            sym, MXC_DEVICE_CPU, 0, (int)names.size(), names.data(),
            ndims.data(), dims.data(), dtypes.data(), default_req,
            (int)req_names.size(), req_names.data(), reqs.data(), flags, &ex),
        MXC_OK)
        << err();
    std::mt19937 rng(seed);
    for (const auto &name : arguments(sym)) fill(name, 0, no_grad, rng);
    for (const auto &name : aux_states(sym)) fill(name, 1, no_grad, rng);
  }

  void fill(const std::string &name, int is_aux,
            const std::set<std::string> &no_grad, std::mt19937 &rng) {
    mxc_ndarray a = nullptr;
    int rc = is_aux ? mxc_executor_aux(ex, name.c_str(), &a)
                    : mxc_executor_arg(ex, name.c_str(), &a);
    ASSERT_EQ(rc, MXC_OK) << err();
    Shape s = shape_of(a);
    Vec v = random_vec(numel(s), rng);
    if (no_grad.count(name)) {
      for (auto &x : v) x = (double)(rng() % 3);  // class labels
    }
    if (name.find("moving_var") != std::string::npos) {
      for (auto &x : v) x = 1 + std::abs(x);
    }
    set(a, v);
    mxc_ndarray_free(a);
    shapes[name] = s;
    values[name] = v;
  }

  RefResult reference(const std::vector<Vec> &head_grads = {}) {
    Reference r(sym, shapes, values, dtype);
    return r.run(head_grads);
  }
};

double tol_for(int dtype) { return dtype == MXC_DTYPE_FLOAT64 ? 1e-10 : 2e-5; }

void compare_with_reference(Case &c, const std::set<std::string> &no_grad,
                            const std::vector<Vec> &head_grads = {}) {
  RefResult ref = c.reference(head_grads);
  double tol = tol_for(c.dtype);
  for (size_t i = 0; i < ref.outputs.size(); ++i) {
    expect_close(output(c.ex, (int)i), ref.outputs[i], tol,
                 "output " + std::to_string(i));
  }
  for (const auto &name : arguments(c.sym)) {
    if (no_grad.count(name)) continue;
    expect_close(get_named(c.ex, name, 1), ref.grads.at(name), tol,
                 "gradient of " + name);
  }
}

mxc_symbol mlp(const std::string &act = "relu", bool softmax = true) {
  mxc_symbol data = var("data"), label = var("label");
  mxc_symbol fc1 = op("FullyConnected", {{"num_hidden", "5"}}, "fc1", {data});
  mxc_symbol a1 = op("Activation", {{"act_type", act}}, "act1", {fc1});
  mxc_symbol fc2 = op("FullyConnected", {{"num_hidden", "3"}}, "fc2", {a1});
  mxc_symbol out = softmax ? op("SoftmaxOutput", {}, "sm", {fc2, label})
                           : op("tanh", {}, "out", {fc2});
  for (auto s : {data, label, fc1, a1, fc2}) mxc_symbol_free(s);
  return out;
}

TEST(Executor, MlpForwardBackwardMatchesImperative) {
  Case c;
  c.sym = mlp();
  c.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_WRITE);
  ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(c.ex, 0, nullptr), MXC_OK) << err();
  compare_with_reference(c, {"data", "label"});
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

mxc_symbol convnet(const std::string &pool, const std::string &act) {
  mxc_symbol data = var("data");
  mxc_symbol conv =
      op("Convolution",
         {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"pad", "(1,1)"}}, "conv1",
         {data});
  mxc_symbol bn = op("BatchNorm", {{"fix_gamma", "false"}}, "bn1", {conv});
  mxc_symbol a = op("Activation", {{"act_type", act}}, "act1", {bn});
  mxc_symbol p =
      op("Pooling",
         {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pool_type", pool}},
         "pool1", {a});
  mxc_symbol f = op("Flatten", {}, "flat", {p});
  mxc_symbol fc = op("FullyConnected", {{"num_hidden", "3"}}, "fc", {f});
  for (auto s : {data, conv, bn, a, p, f}) mxc_symbol_free(s);
  return fc;
}

TEST(Executor, ConvNetForwardBackwardMatchesImperative) {
  Case c;
  mxc_symbol body = convnet("max", "relu"), label = var("label");
  c.sym = op("SoftmaxOutput", {}, "sm", {body, label});
  mxc_symbol_free(body);
  mxc_symbol_free(label);
  c.bind({{"data", {2, 3, 6, 6}}}, {"label"}, MXC_REQ_WRITE);
  ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(c.ex, 0, nullptr), MXC_OK) << err();
  compare_with_reference(c, {"label"});
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

TEST(Executor, SharedVariableGradientsAreSummed) {
  Case c;
  mxc_symbol x = var("x"), w = var("w");
  mxc_symbol y = op("FullyConnected",
                    {{"num_hidden", "4"}, {"no_bias", "true"}}, "fc_a", {x, w});
  mxc_symbol z = op("FullyConnected",
                    {{"num_hidden", "4"}, {"no_bias", "true"}}, "fc_b", {y, w});
  c.sym = op("elemwise_mul", {}, "sq", {z, z});
  for (auto s : {x, w, y, z}) mxc_symbol_free(s);
  c.bind({{"x", {3, 4}}, {"w", {4, 4}}}, {}, MXC_REQ_WRITE);
  std::mt19937 rng(7);
  std::vector<Vec> hg = {random_vec(12, rng)};
  mxc_ndarray h = make({3, 4}, hg[0]);
  ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(c.ex, 1, &h), MXC_OK) << err();
  compare_with_reference(c, {}, hg);
  mxc_ndarray_free(h);
}

TEST(Executor, IndependentBranchesAndTwoOutputs) {
  Case c;
  mxc_symbol x = var("x");
  mxc_symbol f1 = op("FullyConnected", {{"num_hidden", "6"}}, "fa", {x});
  mxc_symbol a = op("Activation", {{"act_type", "tanh"}}, "ta", {f1});
  mxc_symbol f2 = op("FullyConnected", {{"num_hidden", "2"}}, "fb", {x});
  mxc_symbol b = op("Activation", {{"act_type", "sigmoid"}}, "sb", {f2});
  mxc_symbol both[] = {a, b};
  ASSERT_EQ(mxc_symbol_group(both, 2, &c.sym), MXC_OK) << err();
  for (auto s : {x, f1, a, f2, b}) mxc_symbol_free(s);
  c.bind({{"x", {5, 3}}}, {}, MXC_REQ_WRITE);
  int n = 0;
  ASSERT_EQ(mxc_executor_num_outputs(c.ex, &n), MXC_OK);
  ASSERT_EQ(n, 2);
  std::mt19937 rng(3);
  std::vector<Vec> hg = {random_vec(30, rng), random_vec(10, rng)};
  mxc_ndarray h[] = {make({5, 6}, hg[0]), make({5, 2}, hg[1])};
  for (int rep = 0; rep < 2; ++rep) {  // a second step reuses every buffer
    ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK) << err();
    ASSERT_EQ(mxc_executor_backward(c.ex, 2, h), MXC_OK) << err();
  }
  compare_with_reference(c, {}, hg);
  mxc_ndarray_free(h[0]);
  mxc_ndarray_free(h[1]);
}

TEST(Executor, OutputsThatAreVariablesOrRepeated) {
  Case c;
  mxc_symbol x = var("x");
  mxc_symbol t = op("tanh", {}, "th", {x});
  mxc_symbol outs[] = {x, t, t};
  ASSERT_EQ(mxc_symbol_group(outs, 3, &c.sym), MXC_OK) << err();
  mxc_symbol_free(x);
  mxc_symbol_free(t);
  c.bind({{"x", {2, 3}}}, {}, MXC_REQ_WRITE);
  std::mt19937 rng(4);
  std::vector<Vec> hg = {random_vec(6, rng), random_vec(6, rng),
                         random_vec(6, rng)};
  mxc_ndarray h[] = {make({2, 3}, hg[0]), make({2, 3}, hg[1]),
                     make({2, 3}, hg[2])};
  ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(c.ex, 3, h), MXC_OK) << err();
  compare_with_reference(c, {}, hg);
  for (auto a : h) mxc_ndarray_free(a);
}

// ---- finite differences ----

double scalar_loss(mxc_executor ex, int is_train) {
  EXPECT_EQ(mxc_executor_forward(ex, is_train), MXC_OK) << err();
  Vec v = output(ex, 0);
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// d(sum of outputs)/d(argument) by central differences, for every element
// of every argument, against backward with ones as head gradient.
void finite_difference_check(Case &c, int is_train, double eps, double tol) {
  ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(c.ex, 0, nullptr), MXC_OK) << err();
  for (const auto &name : arguments(c.sym)) {
    Vec analytic = get_named(c.ex, name, 1);
    mxc_ndarray a = nullptr;
    ASSERT_EQ(mxc_executor_arg(c.ex, name.c_str(), &a), MXC_OK);
    Vec v = c.values[name];
    for (size_t i = 0; i < v.size(); ++i) {
      Vec p = v;
      p[i] = v[i] + eps;
      set(a, p);
      double up = scalar_loss(c.ex, is_train);
      p[i] = v[i] - eps;
      set(a, p);
      double down = scalar_loss(c.ex, is_train);
      double fd = (up - down) / (2 * eps);
      EXPECT_NEAR(analytic[i], fd, tol * (1 + std::abs(fd)))
          << name << "[" << i << "]";
    }
    set(a, v);
    mxc_ndarray_free(a);
  }
}

TEST(Executor, FiniteDifferencesMlpFloat64) {
  Case c;
  c.dtype = MXC_DTYPE_FLOAT64;
  mxc_symbol body = mlp("tanh", false);
  c.sym = op("elemwise_mul", {}, "sq", {body, body});
  mxc_symbol_free(body);
  c.bind({{"data", {3, 4}}}, {}, MXC_REQ_WRITE);
  finite_difference_check(c, 0, 1e-6, 1e-6);
}

TEST(Executor, FiniteDifferencesConvNetFloat64) {
  Case c;
  c.dtype = MXC_DTYPE_FLOAT64;
  mxc_symbol body = convnet("avg", "tanh");
  c.sym = op("elemwise_mul", {}, "sq", {body, body});
  mxc_symbol_free(body);
  c.bind({{"data", {2, 2, 4, 4}}}, {}, MXC_REQ_WRITE);
  // Training mode: BatchNorm normalizes with batch statistics, which the
  // gradient accounts for.
  finite_difference_check(c, 1, 1e-6, 1e-5);
}

// ---- requests ----

TEST(Executor, GradReqAddAccumulatesOverTwoBackwards) {
  Case w, a;
  w.sym = mlp();
  a.sym = mlp();
  w.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_WRITE);
  a.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_ADD);
  std::mt19937 rng(11);
  std::map<std::string, Vec> start;
  for (const auto &name :
       {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}) {
    mxc_ndarray g = nullptr;
    ASSERT_EQ(mxc_executor_grad(a.ex, name, &g), MXC_OK) << err();
    start[name] = random_vec(numel(shape_of(g)), rng);
    set(g, start[name]);
    mxc_ndarray_free(g);
  }
  ASSERT_EQ(mxc_executor_forward(w.ex, 1), MXC_OK);
  ASSERT_EQ(mxc_executor_backward(w.ex, 0, nullptr), MXC_OK);
  for (int rep = 0; rep < 2; ++rep) {
    ASSERT_EQ(mxc_executor_forward(a.ex, 1), MXC_OK);
    ASSERT_EQ(mxc_executor_backward(a.ex, 0, nullptr), MXC_OK);
  }
  for (const auto &kv : start) {
    Vec once = get_named(w.ex, kv.first, 1), acc = get_named(a.ex, kv.first, 1);
    Vec want = kv.second;
    for (size_t i = 0; i < want.size(); ++i) want[i] += 2 * once[i];
    expect_close(acc, want, 1e-5, kv.first);
  }
}

TEST(Executor, ArgumentWithoutGradientGetsZerosOrStaysForAdd) {
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    Case c;
    mxc_symbol a = var("a"), b = var("b");
    mxc_symbol blocked = op("BlockGrad", {}, "stop", {a});
    c.sym = op("elemwise_add", {}, "sum", {blocked, b});
    for (auto s : {a, b, blocked}) mxc_symbol_free(s);
    c.bind({{"a", {2, 3}}, {"b", {2, 3}}}, {}, req);
    mxc_ndarray ga = nullptr;
    ASSERT_EQ(mxc_executor_grad(c.ex, "a", &ga), MXC_OK) << err();
    set(ga, Vec(6, 7.0));
    ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK);
    ASSERT_EQ(mxc_executor_backward(c.ex, 0, nullptr), MXC_OK);
    EXPECT_EQ(get(ga), Vec(6, req == MXC_REQ_WRITE ? 0.0 : 7.0));
    Vec gb = get_named(c.ex, "b", 1);
    EXPECT_EQ(gb, Vec(6, 1.0));
    mxc_ndarray_free(ga);
  }
}

// ---- memory plan ----

mxc_symbol deep_mlp() {
  // Element-wise unary operators declare in-place pairs; sigmoid's
  // gradient reads its output, so its input can be overwritten.
  mxc_symbol cur = var("data"), label = var("label");
  for (int i = 0; i < 3; ++i) {
    std::string n = std::to_string(i);
    mxc_symbol fc =
        op("FullyConnected", {{"num_hidden", "16"}}, "fc" + n, {cur});
    mxc_symbol act = op("sigmoid", {}, "sig" + n, {fc});
    mxc_symbol_free(cur);
    mxc_symbol_free(fc);
    cur = act;
  }
  mxc_symbol fc = op("FullyConnected", {{"num_hidden", "4"}}, "fcout", {cur});
  mxc_symbol out = op("SoftmaxOutput", {}, "sm", {fc, label});
  for (auto s : {cur, fc, label}) mxc_symbol_free(s);
  return out;
}

TEST(Executor, MemoryPlanGivesIdenticalResultsWithLessMemory) {
  Case planned, plain;
  planned.sym = deep_mlp();
  plain.sym = deep_mlp();
  planned.bind({{"data", {8, 12}}}, {"data", "label"}, MXC_REQ_WRITE,
               MXC_BIND_DEFAULT, 5);
  plain.bind({{"data", {8, 12}}}, {"data", "label"}, MXC_REQ_WRITE,
             MXC_BIND_NO_MEMORY_PLAN, 5);
  for (Case *c : {&planned, &plain}) {
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_EQ(mxc_executor_forward(c->ex, 1), MXC_OK) << err();
      ASSERT_EQ(mxc_executor_backward(c->ex, 0, nullptr), MXC_OK) << err();
    }
  }
  EXPECT_EQ(output(planned.ex, 0), output(plain.ex, 0));
  for (const auto &name : arguments(planned.sym)) {
    if (name == "data" || name == "label") continue;
    EXPECT_EQ(get_named(planned.ex, name, 1), get_named(plain.ex, name, 1))
        << name;
  }
  compare_with_reference(planned, {"data", "label"});
  int64_t p1 = 0, u1 = 0, p2 = 0, u2 = 0;
  ASSERT_EQ(mxc_executor_memory(planned.ex, &p1, &u1), MXC_OK);
  ASSERT_EQ(mxc_executor_memory(plain.ex, &p2, &u2), MXC_OK);
  EXPECT_LT(p1, u1);
  EXPECT_EQ(u1, u2);
  EXPECT_EQ(p2, u2);
  EXPECT_GT(u1, 0);
  ASSERT_EQ(mxc_executor_memory(planned.ex, nullptr, nullptr), MXC_OK);
  char *dbg = nullptr;
  ASSERT_EQ(mxc_executor_debug_str(planned.ex, &dbg), MXC_OK) << err();
  std::string s = dbg;
  mxc_string_free(dbg);
  if (getenv("MXC_EXEC_TEST_PRINT")) printf("%s", s.c_str());
  EXPECT_NE(s.find("fc0 (FullyConnected)"), std::string::npos) << s;
  EXPECT_NE(s.find("(in place)"), std::string::npos) << s;
  EXPECT_NE(s.find("memory: planned " + std::to_string(p1)), std::string::npos)
      << s;
  printf("planned %lld bytes, unshared %lld bytes\n", (long long)p1,
         (long long)u1);
}

// An element-wise chain fused by default: the same values and gradients
// as unfused, and the debug description counts the fused node.
mxc_symbol chain() {
  mxc_symbol x = var("x");
  mxc_symbol fc = op("FullyConnected", {{"num_hidden", "8"}}, "fc", {x});
  mxc_symbol m = op("_mul_scalar", {{"scalar", "2"}}, "mul", {fc});
  mxc_symbol p = op("_plus_scalar", {{"scalar", "0.5"}}, "plus", {m});
  mxc_symbol t = op("tanh", {}, "th", {p});
  mxc_symbol out = op("FullyConnected", {{"num_hidden", "3"}}, "out", {t});
  for (auto s : {x, fc, m, p, t}) mxc_symbol_free(s);
  return out;
}

TEST(Executor, FusionKeepsValuesAndGradients) {
  Case fused, plain;
  fused.sym = chain();
  plain.sym = chain();
  fused.bind({{"x", {4, 5}}}, {}, MXC_REQ_WRITE, MXC_BIND_DEFAULT, 9);
  plain.bind({{"x", {4, 5}}}, {}, MXC_REQ_WRITE, MXC_BIND_NO_FUSION, 9);
  for (Case *c : {&fused, &plain}) {
    ASSERT_EQ(mxc_executor_forward(c->ex, 1), MXC_OK) << err();
    ASSERT_EQ(mxc_executor_backward(c->ex, 0, nullptr), MXC_OK) << err();
  }
  expect_close(output(fused.ex, 0), output(plain.ex, 0), 1e-6, "output");
  for (const auto &name : arguments(fused.sym)) {
    expect_close(get_named(fused.ex, name, 1), get_named(plain.ex, name, 1),
                 1e-6, name);
  }
  compare_with_reference(plain, {});
  char *dbg = nullptr;
  ASSERT_EQ(mxc_executor_debug_str(plain.ex, &dbg), MXC_OK);
  EXPECT_NE(std::string(dbg).find(" 0 fused nodes"), std::string::npos) << dbg;
  mxc_string_free(dbg);
  ASSERT_EQ(mxc_executor_debug_str(fused.ex, &dbg), MXC_OK);
  if (getenv("MXC_EXEC_TEST_PRINT")) printf("%s", dbg);
  mxc_string_free(dbg);
}

TEST(Executor, InferenceForwardMatchesTrainingForwardWithoutBatchNorm) {
  Case c;
  c.sym = mlp();
  c.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_WRITE);
  ASSERT_EQ(mxc_executor_forward(c.ex, 0), MXC_OK) << err();
  Vec infer = output(c.ex, 0);
  EXPECT_EQ(mxc_executor_backward(c.ex, 0, nullptr), MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK) << err();
  EXPECT_EQ(output(c.ex, 0), infer);
}

// ---- reshape ----

TEST(Executor, ReshapeSharesParameters) {
  Case c;
  c.sym = mlp();
  c.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_WRITE);
  const char *names[] = {"data"};
  int ndims[] = {2};
  int64_t dims[] = {2, 6};
  mxc_executor r = nullptr;
  ASSERT_EQ(mxc_executor_reshape(c.ex, 1, names, ndims, dims, &r), MXC_OK)
      << err();
  mxc_ndarray d = nullptr;
  ASSERT_EQ(mxc_executor_arg(r, "data", &d), MXC_OK);
  EXPECT_EQ(shape_of(d), Shape({2, 6}));
  Vec rows(c.values["data"].begin(), c.values["data"].begin() + 12);
  set(d, rows);
  mxc_ndarray_free(d);
  mxc_ndarray l = nullptr;
  ASSERT_EQ(mxc_executor_arg(r, "label", &l), MXC_OK);
  EXPECT_EQ(shape_of(l), Shape({2}));
  set(l, Vec(c.values["label"].begin(), c.values["label"].begin() + 2));
  mxc_ndarray_free(l);
  // Training one trains the other: the arrays are the same.
  mxc_ndarray w = nullptr;
  ASSERT_EQ(mxc_executor_arg(c.ex, "fc2_weight", &w), MXC_OK);
  Vec nw = c.values["fc2_weight"];
  for (auto &x : nw) x *= -0.5;
  set(w, nw);
  mxc_ndarray_free(w);
  EXPECT_EQ(get_named(r, "fc2_weight", 0), get(make({15}, nw)));
  ASSERT_EQ(mxc_executor_forward(c.ex, 1), MXC_OK);
  ASSERT_EQ(mxc_executor_forward(r, 1), MXC_OK);
  Vec big = output(c.ex, 0), small = output(r, 0);
  ASSERT_EQ(small.size(), 6u);
  for (size_t i = 0; i < small.size(); ++i) EXPECT_NEAR(small[i], big[i], 1e-6);
  // Gradient arrays of unchanged parameters are shared too.
  ASSERT_EQ(mxc_executor_backward(r, 0, nullptr), MXC_OK);
  EXPECT_EQ(get_named(r, "fc1_weight", 1), get_named(c.ex, "fc1_weight", 1));
  mxc_executor_free(r);
}

// ---- parameter files ----

TEST(Executor, SaveAndLoadParams) {
  Case a, b;
  a.sym = mlp();
  b.sym = mlp();
  a.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_WRITE, 0, 1);
  b.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_WRITE, 0, 2);
  std::string path = ::testing::TempDir() + "exec_params.mxc";
  const char *excl[] = {"data", "label"};
  ASSERT_EQ(mxc_executor_save_params(a.ex, path.c_str(), 2, excl), MXC_OK)
      << err();
  mxc_ndarray_list l = nullptr;
  ASSERT_EQ(mxc_ndarray_load(path.c_str(), &l), MXC_OK);
  int n = 0;
  ASSERT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
  EXPECT_EQ(n, 4);
  const char *first = nullptr;
  ASSERT_EQ(mxc_ndarray_list_name(l, 0, &first), MXC_OK);
  EXPECT_STREQ(first, "arg:fc1_weight");
  mxc_ndarray_list_free(l);
  Vec before = get_named(b.ex, "data", 0);
  ASSERT_EQ(mxc_executor_load_params(b.ex, path.c_str(), 0), MXC_OK) << err();
  for (const auto &name :
       {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}) {
    EXPECT_EQ(get_named(b.ex, name, 0),
              get(make({numel(a.shapes[name])}, a.values[name])))
        << name;
  }
  EXPECT_EQ(get_named(b.ex, "data", 0), before);
  std::remove(path.c_str());
}

TEST(Executor, LoadParamsIsAllOrNothing) {
  Case c;
  c.sym = mlp();
  c.bind({{"data", {4, 6}}}, {"data", "label"}, MXC_REQ_WRITE);
  std::string path = ::testing::TempDir() + "exec_bad_params.mxc";
  mxc_ndarray good = make({5}, Vec(5, 3.0)), bad = make({2, 2}, Vec(4, 1.0));
  mxc_ndarray extra = make({1}, Vec(1, 1.0));
  Vec bias = get_named(c.ex, "fc1_bias", 0);
  {
    mxc_ndarray arrs[] = {good, bad};
    const char *names[] = {"arg:fc1_bias", "fc2_weight"};
    ASSERT_EQ(mxc_ndarray_save(path.c_str(), arrs, names, 2), MXC_OK);
    EXPECT_EQ(mxc_executor_load_params(c.ex, path.c_str(), 0), MXC_ERR_SHAPE);
    EXPECT_NE(err().find("fc2_weight"), std::string::npos) << err();
    EXPECT_EQ(get_named(c.ex, "fc1_bias", 0), bias);  // nothing changed
  }
  {
    mxc_ndarray arrs[] = {good, extra};
    const char *names[] = {"arg:fc1_bias", "aux:nothing"};
    ASSERT_EQ(mxc_ndarray_save(path.c_str(), arrs, names, 2), MXC_OK);
    EXPECT_EQ(mxc_executor_load_params(c.ex, path.c_str(), 0),
              MXC_ERR_NOT_FOUND);
    EXPECT_NE(err().find("aux:nothing"), std::string::npos) << err();
    EXPECT_EQ(get_named(c.ex, "fc1_bias", 0), bias);
    ASSERT_EQ(mxc_executor_load_params(c.ex, path.c_str(), 1), MXC_OK) << err();
    EXPECT_EQ(get_named(c.ex, "fc1_bias", 0), Vec(5, 3.0));
  }
  for (auto a : {good, bad, extra}) mxc_ndarray_free(a);
  std::remove(path.c_str());
}

// BatchNorm with output_mean_var: the symbol has three outputs (out, mean
// and MXNet's inverse standard deviation); backward takes the gradient of
// out only, so the data gradient equals the one without the extra outputs.
TEST(Executor, BatchNormOutputMeanVarHasThreeOutputs) {
  Case c3, c1;
  mxc_symbol d3 = var("data"), d1 = var("data");
  c3.sym = op("BatchNorm", {{"fix_gamma", "false"}, {"output_mean_var", "true"}},
              "bn", {d3});
  c1.sym = op("BatchNorm", {{"fix_gamma", "false"}}, "bn", {d1});
  mxc_symbol_free(d3);
  mxc_symbol_free(d1);
  int n3 = 0, n1 = 0;
  ASSERT_EQ(mxc_symbol_num_outputs(c3.sym, &n3), MXC_OK) << err();
  ASSERT_EQ(mxc_symbol_num_outputs(c1.sym, &n1), MXC_OK) << err();
  EXPECT_EQ(n3, 3);
  EXPECT_EQ(n1, 1);
  mxc_str_list names = nullptr;
  ASSERT_EQ(mxc_symbol_list_outputs(c3.sym, &names), MXC_OK) << err();
  EXPECT_EQ(str_list(names),
            (std::vector<std::string>{"bn_output", "bn_mean", "bn_var"}));
  c3.bind({{"data", {4, 2, 3}}}, {}, MXC_REQ_WRITE, MXC_BIND_DEFAULT, 5);
  c1.bind({{"data", {4, 2, 3}}}, {}, MXC_REQ_WRITE, MXC_BIND_DEFAULT, 5);
  ASSERT_EQ(mxc_executor_forward(c3.ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_forward(c1.ex, 1), MXC_OK) << err();
  // Batch statistics per channel (axis 1) from the data itself.
  Vec x = get_named(c3.ex, "data", 0), mean(2, 0), inv_std(2, 0);
  for (int ch = 0; ch < 2; ++ch) {
    double s = 0, q = 0;
    for (int n = 0; n < 4; ++n)
      for (int k = 0; k < 3; ++k) s += x[(n * 2 + ch) * 3 + k];
    mean[ch] = s / 12;
    for (int n = 0; n < 4; ++n)
      for (int k = 0; k < 3; ++k) {
        double dv = x[(n * 2 + ch) * 3 + k] - mean[ch];
        q += dv * dv;
      }
    inv_std[ch] = 1 / std::sqrt(q / 12 + 1e-3);
  }
  expect_close(output(c3.ex, 0), output(c1.ex, 0), 1e-6, "out");
  expect_close(output(c3.ex, 1), mean, 1e-5, "mean");
  expect_close(output(c3.ex, 2), inv_std, 1e-5, "var (inverse std)");
  std::mt19937 rng(3);
  Vec hg = random_vec(24, rng);
  mxc_ndarray h1 = make({4, 2, 3}, hg), h3[3] = {make({4, 2, 3}, hg),
                                                  make({2}, {5, 5}),
                                                  make({2}, {7, 7})};
  ASSERT_EQ(mxc_executor_backward(c1.ex, 1, &h1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(c3.ex, 3, h3), MXC_OK) << err();
  expect_close(get_named(c3.ex, "data", 1), get_named(c1.ex, "data", 1), 1e-6,
               "data gradient");
  for (auto h : {h1, h3[0], h3[1], h3[2]}) mxc_ndarray_free(h);
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

// ---- BatchNorm + relu fusion (core/fuse/bn_relu.c) ----

// Three conv/BatchNorm blocks: the first two end in relu (Activation, and
// the relu operator), the third's BatchNorm output is also added to its
// relu, so it has another reader and must stay unfused.
mxc_symbol bn_relu_net() {
  mxc_symbol x = var("data"), label = var("label");
  std::vector<mxc_symbol> keep;
  auto block = [&](mxc_symbol in, const std::string &k) {
    mxc_symbol c = op("Convolution",
                      {{"kernel", "(3,3)"}, {"num_filter", "8"},
                       {"pad", "(1,1)"}},
                      "conv" + k, {in});
    mxc_symbol b = op("BatchNorm", {{"fix_gamma", k == "2" ? "true" : "false"}},
                      "bn" + k, {c});
    keep.push_back(c);
    keep.push_back(b);
    return b;
  };
  mxc_symbol b1 = block(x, "1");
  mxc_symbol r1 = op("Activation", {{"act_type", "relu"}}, "act1", {b1});
  mxc_symbol b2 = block(r1, "2");
  mxc_symbol r2 = op("relu", {}, "relu2", {b2});
  mxc_symbol b3 = block(r2, "3");
  mxc_symbol r3 = op("Activation", {{"act_type", "relu"}}, "act3", {b3});
  mxc_symbol s3 = op("elemwise_add", {}, "add3", {r3, b3});
  mxc_symbol p = op("Pooling",
                    {{"kernel", "(2,2)"}, {"stride", "(2,2)"},
                     {"pool_type", "max"}},
                    "pool", {s3});
  mxc_symbol f = op("Flatten", {}, "flat", {p});
  mxc_symbol fc = op("FullyConnected", {{"num_hidden", "3"}}, "fc", {f});
  mxc_symbol out = op("SoftmaxOutput", {}, "sm", {fc, label});
  for (auto s : {x, label, r1, r2, r3, s3, p, f, fc}) mxc_symbol_free(s);
  for (auto s : keep) mxc_symbol_free(s);
  return out;
}

int count_of(const std::string &s, const std::string &what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1)) {
    ++n;
  }
  return n;
}

std::string debug_str(mxc_executor ex) {
  char *dbg = nullptr;
  EXPECT_EQ(mxc_executor_debug_str(ex, &dbg), MXC_OK) << err();
  std::string s = dbg ? dbg : "";
  mxc_string_free(dbg);
  return s;
}

Vec aux_named(mxc_executor ex, const std::string &name) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_executor_aux(ex, name.c_str(), &a), MXC_OK) << err();
  Vec v = a ? get(a) : Vec();
  mxc_ndarray_free(a);
  return v;
}

void bn_relu_case(int flags) {
  Case fused, plain;
  fused.sym = bn_relu_net();
  plain.sym = bn_relu_net();
  fused.bind({{"data", {4, 3, 6, 6}}}, {"label"}, MXC_REQ_WRITE, flags, 7);
  plain.bind({{"data", {4, 3, 6, 6}}}, {"label"}, MXC_REQ_WRITE,
             flags | MXC_BIND_NO_FUSION, 7);
  for (Case *c : {&fused, &plain}) {
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_EQ(mxc_executor_forward(c->ex, 1), MXC_OK) << err();
      ASSERT_EQ(mxc_executor_backward(c->ex, 0, nullptr), MXC_OK) << err();
    }
  }
  std::string dbg = debug_str(fused.ex);
  if (getenv("MXC_EXEC_TEST_PRINT")) printf("%s", dbg.c_str());
  EXPECT_EQ(count_of(dbg, "(_FusedBatchNormReLU)"), 2) << dbg;
  EXPECT_EQ(count_of(debug_str(plain.ex), "_FusedBatchNormReLU"), 0);
  expect_close(output(fused.ex, 0), output(plain.ex, 0), 1e-6, "output");
  for (const auto &name : arguments(fused.sym)) {
    if (name == "label") continue;
    expect_close(get_named(fused.ex, name, 1), get_named(plain.ex, name, 1),
                 1e-5, "gradient of " + name);
  }
  for (const auto &name : aux_states(fused.sym)) {
    expect_close(aux_named(fused.ex, name), aux_named(plain.ex, name), 1e-6,
                 name);
  }
  compare_with_reference(fused, {"label"});
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

TEST(Executor, BatchNormReluFusionKeepsValuesAndGradients) {
  bn_relu_case(MXC_BIND_DEFAULT);
}

TEST(Executor, BatchNormReluFusionOnReferenceKernels) {
  bn_relu_case(MXC_BIND_NO_ONEDNN);
}

// A residual block's end: BatchNorm, the sum with the block's input, relu.
// The relu's gradient reads the relu's output instead of the sum (same
// mask), so the sum has one reader and element-wise fusion computes sum
// and relu as one node; values and gradients as without fusion.
mxc_symbol residual_relu_net() {
  mxc_symbol x = var("data"), label = var("label");
  mxc_symbol c = op("Convolution",
                    {{"kernel", "(3,3)"}, {"num_filter", "3"}, {"pad", "(1,1)"}},
                    "conv", {x});
  mxc_symbol b = op("BatchNorm", {{"fix_gamma", "false"}}, "bn", {c});
  mxc_symbol s = op("elemwise_add", {}, "add", {b, x});
  mxc_symbol r = op("Activation", {{"act_type", "relu"}}, "act", {s});
  mxc_symbol p = op("Pooling",
                    {{"kernel", "(2,2)"}, {"stride", "(2,2)"},
                     {"pool_type", "max"}},
                    "pool", {r});
  mxc_symbol f = op("Flatten", {}, "flat", {p});
  mxc_symbol fc = op("FullyConnected", {{"num_hidden", "3"}}, "fc", {f});
  mxc_symbol out = op("SoftmaxOutput", {}, "sm", {fc, label});
  for (auto v : {x, label, c, b, s, r, p, f, fc}) mxc_symbol_free(v);
  return out;
}

void residual_relu_case(int flags) {
  Case fused, plain;
  fused.sym = residual_relu_net();
  plain.sym = residual_relu_net();
  fused.bind({{"data", {4, 3, 6, 6}}}, {"label"}, MXC_REQ_WRITE, flags, 9);
  plain.bind({{"data", {4, 3, 6, 6}}}, {"label"}, MXC_REQ_WRITE,
             flags | MXC_BIND_NO_FUSION, 9);
  for (Case *c : {&fused, &plain}) {
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_EQ(mxc_executor_forward(c->ex, 1), MXC_OK) << err();
      ASSERT_EQ(mxc_executor_backward(c->ex, 0, nullptr), MXC_OK) << err();
    }
  }
  std::string dbg = debug_str(fused.ex);
  if (getenv("MXC_EXEC_TEST_PRINT")) printf("%s", dbg.c_str());
  EXPECT_EQ(count_of(dbg, "program = add(i0,i1);Activation(r0,act_type=relu)"),
            1)
      << "sum and relu not fused:\n"
      << dbg;
  EXPECT_EQ(count_of(debug_str(plain.ex), "_fused_elemwise"), 0);
  expect_close(output(fused.ex, 0), output(plain.ex, 0), 1e-6, "output");
  for (const auto &name : arguments(fused.sym)) {
    if (name == "label") continue;
    expect_close(get_named(fused.ex, name, 1), get_named(plain.ex, name, 1),
                 1e-5, "gradient of " + name);
  }
  compare_with_reference(fused, {"label"});
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

TEST(Executor, ReluGradientReadsItsOutputSoTheSumFuses) {
  residual_relu_case(MXC_BIND_DEFAULT);
  residual_relu_case(MXC_BIND_NO_ONEDNN);
}

}  // namespace
