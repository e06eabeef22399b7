// Fused programs shared by the host tests of the run-time fused kernels
// (test_cuda_fuse_gen.cc) and their conformance case on a GPU
// (conformance_fuse.cc): one per micro-op, and programs of several
// instructions (chains whose running value is a second argument, trees
// reading one result twice, scalars, five inputs), each with its
// instructions as data so a test can also run them one by one.
#ifndef MXC_TESTS_GPU_FUSE_PROGRAMS_H_
#define MXC_TESTS_GPU_FUSE_PROGRAMS_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fuseprog {

using Kv = std::vector<std::pair<std::string, std::string>>;

struct Ins {
  std::string op;
  std::vector<std::string> args;  // "i<k>" or "r<k>"
  Kv params;
};

struct Prog {
  std::string name;
  int n_in;
  std::vector<Ins> ins;

  // The program parameter's text.
  std::string Text() const {
    std::string s;
    for (size_t k = 0; k < ins.size(); ++k) {
      if (k) s += ";";
      s += ins[k].op + "(";
      for (size_t j = 0; j < ins[k].args.size(); ++j) {
        s += (j ? "," : "") + ins[k].args[j];
      }
      for (auto &kv : ins[k].params) s += "," + kv.first + "=" + kv.second;
      s += ")";
    }
    return s;
  }

  bool ReadsAResultTwice() const {
    std::vector<int> reads(ins.size(), 0);
    for (auto &i : ins) {
      for (auto &a : i.args) {
        if (a[0] == 'r' && ++reads[std::stoul(a.substr(1))] > 1) return true;
      }
    }
    return false;
  }

  bool UsesExp() const {
    for (auto &i : ins) {
      if (i.op == "exp" || i.op == "sigmoid" ||
          (i.op == "Activation" && i.params[0].second == "sigmoid")) {
        return true;
      }
    }
    return false;
  }
};

inline Ins I(const std::string &op, std::vector<std::string> args,
             Kv params = {}) {
  return Ins{op, std::move(args), std::move(params)};
}

inline std::vector<Prog> Supported() {
  std::vector<Prog> v;
  const Kv sc = {{"scalar", "0.75"}};
  for (const char *op :
       {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
        "_div_scalar", "_rdiv_scalar", "_maximum_scalar", "_minimum_scalar"}) {
    v.push_back({op, 1, {I(op, {"i0"}, sc)}});
  }
  for (const char *op : {"add", "sub", "mul", "div", "maximum", "minimum"}) {
    v.push_back({op, 2, {I(op, {"i0", "i1"})}});
  }
  for (const char *op : {"_copy", "BlockGrad", "negative", "abs", "square",
                         "relu", "exp", "sigmoid"}) {
    v.push_back({op, 1, {I(op, {"i0"})}});
  }
  for (const char *a : {"relu", "sigmoid"}) {
    v.push_back({std::string("Activation_") + a, 1,
                 {I("Activation", {"i0"}, {{"act_type", a}})}});
  }
  // Zero scalars of both signs against maximum/minimum's second operand.
  v.push_back({"max_scalar_-0", 1,
               {I("_maximum_scalar", {"i0"}, {{"scalar", "-0"}})}});
  v.push_back({"min_scalar_0", 1,
               {I("_minimum_scalar", {"i0"}, {{"scalar", "0"}})}});
  // A chain whose running value is the second argument (R micro-ops).
  v.push_back({"chain_reversed", 3,
               {I("exp", {"i0"}), I("sub", {"i1", "r0"}),
                I("maximum", {"i2", "r1"}), I("div", {"r2", "i0"}),
                I("minimum", {"i1", "r3"})}});
  // A tree: one input read by two instructions, results combined.
  v.push_back({"tree", 2,
               {I("add", {"i0", "i1"}), I("mul", {"i0", "i1"}),
                I("div", {"r0", "r1"}), I("sigmoid", {"r2"}),
                I("_rminus_scalar", {"r3"}, {{"scalar", "1"}})}});
  v.push_back({"scalars", 2,
               {I("_mul_scalar", {"i0"}, {{"scalar", "2"}}),
                I("negative", {"r0"}), I("exp", {"r1"}),
                I("_plus_scalar", {"r2"}, {{"scalar", "-0.5"}}),
                I("minimum", {"r3", "i1"}), I("relu", {"r4"}),
                I("_rdiv_scalar", {"r5"}, {{"scalar", "3"}})}});
  v.push_back({"five_inputs", 5,
               {I("add", {"i0", "i1"}), I("add", {"r0", "i2"}),
                I("mul", {"r1", "i3"}), I("sub", {"r2", "i4"}),
                I("square", {"r3"}), I("abs", {"r4"})}});
  v.push_back({"same_result_twice", 1,
               {I("mul", {"i0", "i0"}), I("add", {"r0", "r0"}),
                I("Activation", {"r1"}, {{"act_type", "relu"}}),
                I("BlockGrad", {"r2"})}});
  // ResNet's backward: a residual block's gradients summed, then the
  // relu gradient from the block's output (_backward_Activation's
  // inputs ograd, data, output; no CPU micro-op, a step on the GPU).
  v.push_back({"relu_grad_sum", 4,
               {I("add", {"i0", "i1"}),
                I("_backward_Activation", {"r0", "i2", "i3"},
                  {{"act_type", "relu"}})}});
  return v;
}

// Programs with an instruction no micro-op expresses, and its index.
inline std::vector<std::pair<Prog, int>> Refused() {
  return {{{"tanh", 1, {I("tanh", {"i0"})}}, 0},
          {{"exp_log", 1, {I("exp", {"i0"}), I("log", {"r0"})}}, 1},
          {{"clip", 1,
            {I("_copy", {"i0"}),
             I("clip", {"r0"}, {{"a_min", "-1"}, {"a_max", "1"}})}},
           1}};
}

// n values: every special float (NaN of both signs, infinities, zeros of
// both signs, a subnormal, exp's overflow and underflow ranges) at an
// offset that differs per input, so that specials meet each other and
// ordinary values; the rest uniform in [-4, 4].
inline std::vector<float> Inputs(size_t n, int input, std::mt19937 *g) {
  const float inf = std::numeric_limits<float>::infinity();
  const float sp[] = {std::nanf(""), -std::nanf(""), inf, -inf, 0.f, -0.f,
                      1e-40f, -1e-40f, 88.8f, -104.5f, 200.f, -200.f,
                      3.4e38f, 0.5f, -0.5f, 1.f};
  const size_t n_sp = sizeof sp / sizeof sp[0];
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  std::vector<float> v(n);
  for (auto &x : v) x = u(*g);
  for (size_t k = 0; k < n_sp * n_sp && k < n; ++k) {
    v[k] = sp[(k / (input == 0 ? 1 : n_sp) + (size_t)input * 3) % n_sp];
  }
  return v;
}

// Bitwise equal, or both NaN; the first difference as text, else "".
inline std::string FirstDifference(const std::vector<float> &got,
                                   const std::vector<float> &want) {
  if (got.size() != want.size()) return "sizes differ";
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    if (a != b && !(std::isnan(got[i]) && std::isnan(want[i]))) {
      return "element " + std::to_string(i) + ": " + std::to_string(got[i]) +
             " vs " + std::to_string(want[i]) + " (bits " +
             std::to_string(a) + " vs " + std::to_string(b) + ")";
    }
  }
  return "";
}

}  // namespace fuseprog

#endif  // MXC_TESTS_GPU_FUSE_PROGRAMS_H_
