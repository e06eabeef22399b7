// Operators with many inputs or outputs through the public C API: Concat,
// stack, add_n and split / SliceChannel with 1000 arrays, imperatively
// (with autograd: values and gradients), in a bound graph (executor) and
// in one user push; counts beyond the arity limit (1 << 20) are errors
// with a message, not crashes. MXNet has no limit on these counts, and
// unrolled sequence models exceed small ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

const int kN = 1000;

std::string err() { return mxc_last_error(); }

mxc_ndarray make(std::vector<int64_t> shape, const std::vector<double> &v) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(),
                               MXC_DTYPE_FLOAT64, MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << err();
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 8), MXC_OK)
      << err();
  return a;
}

std::vector<double> read(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<double> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * 8), MXC_OK)
      << err();
  return v;
}

mxc_op find(const char *name) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK) << err();
  return op;
}

// The axis parameter of each operator (add_n has none).
const char *axis_key(const char *name) {
  std::string n = name;
  return n == "Concat" ? "dim" : n == "add_n" ? nullptr : "axis";
}

// Runs op on ins with n_out created outputs, the count parameter `key`
// and axis 0.
int invoke(const char *name, const char *key, int count,
           const std::vector<mxc_ndarray> &ins, std::vector<mxc_ndarray> *outs,
           int n_out) {
  std::string v = std::to_string(count);
  const char *keys[] = {key, axis_key(name)}, *vals[] = {v.c_str(), "0"};
  int n_params = keys[1] ? 2 : 1;
  outs->assign((size_t)n_out, nullptr);
  return mxc_op_invoke(find(name), keys, vals, n_params, ins.data(),
                       (int)ins.size(), outs->data(), n_out, nullptr);
}

void free_all(std::vector<mxc_ndarray> *v) {
  for (auto a : *v) mxc_ndarray_free(a);
  v->clear();
}

// kN arrays of 2 elements: part i holds {i, -i}.
std::vector<mxc_ndarray> parts() {
  std::vector<mxc_ndarray> p;
  for (int i = 0; i < kN; ++i) p.push_back(make({2}, {(double)i, -(double)i}));
  return p;
}

// Records op on marked parts, runs backward with head gradient hg (one
// per output) and returns each part's gradient.
std::vector<std::vector<double>> part_grads(
    const char *name, const std::vector<mxc_ndarray> &ins, int n_out,
    const char *key, int count, const std::vector<mxc_ndarray> &hg,
    std::vector<mxc_ndarray> *outs) {
  std::vector<mxc_ndarray> grads;
  for (size_t i = 0; i < ins.size(); ++i) {
    grads.push_back(make({(int64_t)read(ins[i]).size()},
                         std::vector<double>(read(ins[i]).size(), 0)));
  }
  EXPECT_EQ(mxc_autograd_mark_variables((int)ins.size(), ins.data(), nullptr,
                                        grads.data()),
            MXC_OK)
      << err();
  int prev = 0;
  EXPECT_EQ(mxc_autograd_set_recording(1, &prev), MXC_OK);
  EXPECT_EQ(invoke(name, key, count, ins, outs, n_out), MXC_OK) << err();
  EXPECT_EQ(mxc_autograd_set_recording(prev, nullptr), MXC_OK);
  EXPECT_EQ(mxc_autograd_backward((int)outs->size(), outs->data(), hg.data(),
                                  0),
            MXC_OK)
      << err();
  std::vector<std::vector<double>> g;
  for (auto a : grads) g.push_back(read(a));
  free_all(&grads);
  return g;
}

TEST(Arity, ConcatOfAThousandWithGradients) {
  auto in = parts();
  std::vector<double> hv;
  for (int i = 0; i < 2 * kN; ++i) hv.push_back(0.5 * i);
  std::vector<mxc_ndarray> hg = {make({2 * kN}, hv)}, out;
  auto g = part_grads("Concat", in, 1, "num_args", kN, hg, &out);
  std::vector<double> want;
  for (int i = 0; i < kN; ++i) {
    want.push_back(i);
    want.push_back(-i);
  }
  EXPECT_EQ(read(out[0]), want);
  // The gradient of part i is its slice of the head gradient.
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(g[(size_t)i], std::vector<double>({hv[2 * (size_t)i],
                                                 hv[2 * (size_t)i + 1]}))
        << i;
  }
  free_all(&out);
  free_all(&hg);
  free_all(&in);
}

TEST(Arity, AddNOfAThousandWithGradients) {
  auto in = parts();
  std::vector<mxc_ndarray> hg = {make({2}, {3, 4})}, out;
  auto g = part_grads("add_n", in, 1, "num_args", kN, hg, &out);
  double s = kN * (kN - 1) / 2.0;
  EXPECT_EQ(read(out[0]), std::vector<double>({s, -s}));
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(g[(size_t)i], std::vector<double>({3, 4})) << i;
  }
  free_all(&out);
  free_all(&hg);
  free_all(&in);
}

TEST(Arity, SplitIntoAThousandWithGradient) {
  std::vector<double> v;
  for (int i = 0; i < 2 * kN; ++i) v.push_back(i);
  std::vector<mxc_ndarray> in = {make({2 * kN}, v)}, hg, out;
  for (int i = 0; i < kN; ++i) hg.push_back(make({2}, {-(double)i, 1}));
  auto g = part_grads("SliceChannel", in, kN, "num_outputs", kN, hg, &out);
  ASSERT_EQ(out.size(), (size_t)kN);
  std::vector<double> want;
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(read(out[(size_t)i]),
              std::vector<double>({v[2 * (size_t)i], v[2 * (size_t)i + 1]}))
        << i;
    want.push_back(-i);
    want.push_back(1);
  }
  EXPECT_EQ(g[0], want);
  free_all(&out);
  free_all(&hg);
  free_all(&in);
}

TEST(Arity, StackOfAThousand) {
  auto in = parts();
  std::vector<mxc_ndarray> out;
  ASSERT_EQ(invoke("stack", "num_args", kN, in, &out, 1), MXC_OK) << err();
  int ndim = 0;
  const int64_t *shape = nullptr;
  ASSERT_EQ(mxc_ndarray_shape(out[0], &ndim, &shape), MXC_OK);
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(shape[0], kN);
  EXPECT_EQ(shape[1], 2);
  auto r = read(out[0]);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(r[2 * (size_t)i], i);
    ASSERT_EQ(r[2 * (size_t)i + 1], -i);
  }
  free_all(&out);
  free_all(&in);
}

// A graph with a Concat of 1000 variables: bound, run forward and
// backward by the executor.
TEST(Arity, ExecutorConcatOfAThousandVariables) {
  std::vector<mxc_symbol> vars;
  for (int i = 0; i < kN; ++i) {
    mxc_symbol s = nullptr;
    ASSERT_EQ(mxc_symbol_variable(("x" + std::to_string(i)).c_str(), &s),
              MXC_OK);
    vars.push_back(s);
  }
  std::string n = std::to_string(kN);
  const char *keys[] = {"num_args", "dim"}, *vals[] = {n.c_str(), "0"};
  mxc_symbol cat = nullptr;
  ASSERT_EQ(mxc_symbol_create(find("Concat"), keys, vals, 2, "cat", nullptr,
                              vars.data(), kN, &cat),
            MXC_OK)
      << err();
  auto args = parts();
  std::vector<mxc_ndarray> grads;
  for (int i = 0; i < kN; ++i) grads.push_back(make({2}, {0, 0}));
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(cat, MXC_DEVICE_CPU, 0, kN, args.data(),
                              grads.data(), nullptr, 0, nullptr,
                              MXC_BIND_DEFAULT, &ex),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  mxc_ndarray out = nullptr;
  ASSERT_EQ(mxc_executor_output(ex, 0, &out), MXC_OK) << err();
  auto r = read(out);
  ASSERT_EQ(r.size(), 2u * kN);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(r[2 * (size_t)i + 1], -i) << i;
  std::vector<double> hv;
  for (int i = 0; i < 2 * kN; ++i) hv.push_back(i + 1);
  mxc_ndarray hg = make({2 * kN}, hv);
  ASSERT_EQ(mxc_executor_backward(ex, 1, &hg), MXC_OK) << err();
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(read(grads[(size_t)i]),
              std::vector<double>({hv[2 * (size_t)i], hv[2 * (size_t)i + 1]}))
        << i;
  }
  mxc_ndarray_free(hg);
  mxc_ndarray_free(out);
  mxc_executor_free(ex);
  free_all(&grads);
  free_all(&args);
  mxc_symbol_free(cat);
  for (auto s : vars) mxc_symbol_free(s);
}

// Counts outside 0..(1 << 20), the arity limit, are reported with the
// range before anything is read; within it, a count that does not match
// the parameters is an ordinary error.
TEST(Arity, CountsBeyondTheLimitAreErrors) {
  mxc_op cat = find("Concat");
  mxc_ndarray a = make({2}, {1, 2});
  std::vector<mxc_ndarray> in(4, a);
  mxc_ndarray out = nullptr;
  const char *k[] = {"num_args"}, *v[] = {"4"};
  for (int n : {-1, (1 << 20) + 1, 1 << 30}) {
    EXPECT_EQ(mxc_op_invoke(cat, k, v, 1, in.data(), n, &out, 1, nullptr),
              MXC_ERR_INVALID_ARGUMENT)
        << n;
    EXPECT_NE(err().find("out of range 0..1048576"), std::string::npos)
        << err();
    EXPECT_EQ(mxc_op_invoke(cat, k, v, 1, in.data(), 4, &out, n, nullptr),
              MXC_ERR_INVALID_ARGUMENT)
        << n;
    EXPECT_NE(err().find("n_outputs"), std::string::npos) << err();
  }
  EXPECT_EQ(out, nullptr);
  const char *big[] = {"1048576"}, *neg[] = {"-5"};
  EXPECT_EQ(mxc_op_invoke(cat, k, big, 1, in.data(), 4, &out, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'num_args' = 1048576 is out of range"),
            std::string::npos)
      << err();
  EXPECT_EQ(mxc_op_invoke(cat, k, neg, 1, in.data(), 4, &out, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'num_args' = -5"), std::string::npos) << err();
  EXPECT_EQ(out, nullptr);
  mxc_ndarray_free(a);
}

}  // namespace
