// Conformance cases of the training-step kernels (backends/cuda/train.h):
// sgd_update, sgd_mom_update, adam_update (the new weight and the states
// they update in place), Activation and _backward_Activation for every
// act_type, _backward_add/_sub/_mul/_div (each output in its own write
// mode), of the broadcast kernels (backends/cuda/bcast.h) and of sum
// and mean (backends/cuda/sum.h), on the
// GPU against the CPU operators with the same random inputs: GPU outputs
// poisoned before a write (an element never written fails), write, add
// and in-place modes, several shapes, an empty array.
//
// Tolerance, in float ulps of the larger of the CPU's value and (add
// mode) the output's value before the call:
// - optimizers: 1 ulp. The kernels perform the CPU's operations in its
//   order (float or double as the CPU chooses, -fmad=false; double sqrt
//   and division are correctly rounded on both), so the results are
//   expected bitwise; the ulp is slack, not a known difference.
// - Activation: 4 ulps. The CPU's float32 sigmoid and tanh are vectorized
//   approximations within a few ulps (core/op/vmath.h) where the device
//   rounds the double function; softrelu's double exp/log1p may differ
//   from glibc's by an ulp of double, which rounds to the same float
//   except near a tie. The backward's relu, sigmoid and tanh are float
//   operations from the output, the same on both (bitwise expected).
// - _backward_add/_sub/_mul/_div: bitwise (the CPU's float operations).
// - broadcast_add/sub/mul/div: bitwise (one float operation per element
//   on both sides, -fmad=false).
// - sum, mean: 2 ulps. Both sum in double, in different orders (the GPU's
//   strided partials and tree), so the floats differ only where the two
//   double sums round differently; inputs in [-1, 1] without heavy
//   cancellation.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::Poison;

using mxct::LastError;
using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

const std::vector<Dims> kShapes = {{1}, {7}, {3, 5, 2}, {1031}, {0}};

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

Vec Random(const Dims &d, float lo, float hi, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = u(*g);
  return v;
}

mxc_ndarray Filled(const Dims &d, int dev, const Vec &v) {
  mxc_ndarray a = mxct::Make(d, dev, 0);
  if (!v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
        << LastError();
  }
  return a;
}

// Runs op on one device over arrays of shape d: ins (read back after the
// call: the optimizers' states), out (initial values, then the result);
// inplace: the output is input 0's array.
int Run(const char *name, const Kv &kv, int dev, const Dims &d,
        std::vector<Vec> *ins, Vec *out, int req, bool inplace) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a;
  for (const Vec &x : *ins) {
    a.push_back(Filled(d, dev, inplace && a.empty() ? *out : x));
  }
  mxc_ndarray o = inplace ? a[0] : Filled(d, dev, *out);
  int rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a.data(),
                         (int)a.size(), &o, 1, &req);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(o);
  if (rc == MXC_OK && !out->empty()) {
    rc = mxc_ndarray_copy_to_host(o, out->data(), out->size() * 4);
  }
  for (size_t i = 0; rc == MXC_OK && i < a.size(); ++i) {
    if (!(*ins)[i].empty()) {
      rc = mxc_ndarray_copy_to_host(a[i], (*ins)[i].data(),
                                    (*ins)[i].size() * 4);
    }
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  if (!inplace) mxc_ndarray_free(o);
  return rc;
}

// One single-input call (sum, mean) of input shape din, output dout.
int RunShapes(const char *name, const Kv &kv, int dev, const Dims &din,
              const Dims &dout, std::vector<Vec> *ins, Vec *out, int req) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  mxc_ndarray a = Filled(din, dev, (*ins)[0]), o = Filled(dout, dev, *out);
  int rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), &a, 1, &o, 1,
                         &req);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(o);
  if (rc == MXC_OK && !out->empty()) {
    rc = mxc_ndarray_copy_to_host(o, out->data(), out->size() * 4);
  }
  mxc_ndarray_free(a), mxc_ndarray_free(o);
  return rc;
}

// gpu against cpu within `ulps` float ulps of max(|cpu|, |base|) (base:
// the values before an add-mode call, else empty).
void ExpectUlps(const std::string &what, const Vec &gpu, const Vec &cpu,
                const Vec &base, int ulps) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t i = 0; i < gpu.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &gpu[i], 4);
    if (bits == mxct::kPoisonBits) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    if (std::isnan(gpu[i]) && std::isnan(cpu[i])) continue;
    double scale = std::fabs(cpu[i]);
    if (!base.empty()) scale = std::fmax(scale, std::fabs(base[i]));
    if (!(std::fabs((double)gpu[i] - cpu[i]) <= ulps * FLT_EPSILON * scale)) {
      ADD_FAILURE() << what << ": element " << i << " is " << gpu[i]
                    << " on the GPU, " << cpu[i] << " on the CPU";
      return;
    }
  }
}

// One call on the CPU and on dev; the output and (optimizers) every
// input compared.
void Compare(int dev, const std::string &what, const char *op, const Kv &kv,
             const Dims &d, const std::vector<Vec> &in, const Vec &base,
             int req, bool inplace, int ulps) {
  std::vector<Vec> cpu_in = in, dev_in = in;
  Vec cpu = base, gpu = base;
  if (req != MXC_REQ_ADD) gpu.assign(gpu.size(), Poison());
  if (inplace) cpu = in[0], gpu = in[0];
  ASSERT_EQ(Run(op, kv, MXC_DEVICE_CPU, d, &cpu_in, &cpu, req, inplace),
            MXC_OK)
      << what << " on the CPU: " << LastError();
  ASSERT_EQ(Run(op, kv, dev, d, &dev_in, &gpu, req, inplace), MXC_OK)
      << what << " on the GPU: " << LastError();
  Vec b = req == MXC_REQ_ADD ? base : Vec();
  ExpectUlps(what + " output", gpu, cpu, b, ulps);
  for (size_t i = 0; i < in.size(); ++i) {
    ExpectUlps(what + " input " + std::to_string(i) + " after", dev_in[i],
               cpu_in[i], Vec(), ulps);
  }
}

struct OptCase {
  int n_states;
  Kv kv;
};

// Per operator: parameters with and without clipping (the CPU's float
// and double loops).
const std::vector<std::pair<const char *, std::vector<OptCase>>> kOpt = {
    {"sgd_update",
     {{0, {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}}},
      {0, {{"lr", "0.07"}, {"wd", "0.002"}, {"clip_gradient", "0.3"}}}}},
    {"sgd_mom_update",
     {{1,
       {{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"},
        {"rescale_grad", "0.25"}}},
      {1, {{"lr", "0.05"}, {"momentum", "0.8"}, {"clip_gradient", "0.2"}}}}},
    {"adam_update",
     {{2,
       {{"lr", "0.01"}, {"wd", "0.001"}, {"beta1", "0.85"},
        {"beta2", "0.99"}, {"epsilon", "1e-6"}, {"rescale_grad", "2"}}},
      {2, {{"lr", "0.003"}, {"clip_gradient", "0.5"}}}}},
};

void OptCases(const char *op, int dev, std::mt19937 *g) {
  for (const auto &entry : kOpt) {
    if (std::string(entry.first) != op) continue;
    for (size_t k = 0; k < entry.second.size(); ++k) {
      const OptCase &c = entry.second[k];
      for (const Dims &d : kShapes) {
        std::vector<Vec> in = {Random(d, -2, 2, g), Random(d, -3, 3, g)};
        for (int s = 0; s < c.n_states; ++s) {
          in.push_back(s == 1 ? Random(d, 0, 1, g) : Random(d, -.5f, .5f, g));
        }
        Vec base = Random(d, -1, 1, g);
        for (int mode = 0; mode < 3; ++mode) {
          std::string what = std::string(op) + " case " + std::to_string(k) +
                             " size " + std::to_string(Numel(d)) +
                             (mode == 0   ? " write"
                              : mode == 1 ? " add"
                                          : " in place");
          Compare(dev, what, op, c.kv, d, in, base,
                  mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE, mode == 2, 1);
        }
      }
    }
  }
}

const char *const kActs[] = {"relu", "sigmoid", "tanh", "softrelu",
                             "softsign"};

// Activation (backward: inputs ograd, data, output) for every act_type.
void ActCases(bool backward, int dev, std::mt19937 *g) {
  const char *op = backward ? "_backward_Activation" : "Activation";
  for (const char *t : kActs) {
    for (const Dims &d : kShapes) {
      std::vector<Vec> in = {Random(d, -9, 9, g)};
      if (backward) {
        in = {Random(d, -2, 2, g), in[0], Random(d, -1, 1, g)};
      }
      Vec base = Random(d, -1, 1, g);
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        std::string what = std::string(op) + " " + t + " size " +
                           std::to_string(Numel(d)) +
                           (req == MXC_REQ_ADD ? " add" : " write");
        Compare(dev, what, op, {{"act_type", t}}, d, in, base, req, false, 4);
      }
    }
  }
}

// Broadcast cases: (lhs, rhs, output) shapes.
const std::vector<std::vector<Dims>> kBcast = {
    {{3, 4}, {4}, {3, 4}},
    {{2, 1, 5}, {3, 1}, {2, 3, 5}},
    {{}, {2, 2}, {2, 2}},
    {{4, 1, 3, 1}, {1, 5, 1, 2}, {4, 5, 3, 2}},
    {{2, 1, 1, 3, 1, 2}, {1, 4, 2, 1, 3, 2}, {2, 4, 2, 3, 3, 2}},
    {{129, 1}, {1, 257}, {129, 257}},
    {{0, 3}, {1, 3}, {0, 3}},
};

// One broadcast call on one device: the output's values (from base).
int RunBcast(const char *op_name, int dev, const std::vector<Dims> &d,
             const Vec &a, const Vec &b, Vec *out, int req) {
  mxc_op op = nullptr;
  if (mxc_op_find(op_name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  mxc_ndarray in[2] = {Filled(d[0], dev, a), Filled(d[1], dev, b)};
  mxc_ndarray o = Filled(d[2], dev, *out);
  int rc = mxc_op_invoke(op, nullptr, nullptr, 0, in, 2, &o, 1, &req);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(o);
  if (rc == MXC_OK && !out->empty()) {
    rc = mxc_ndarray_copy_to_host(o, out->data(), out->size() * 4);
  }
  mxc_ndarray_free(in[0]), mxc_ndarray_free(in[1]), mxc_ndarray_free(o);
  return rc;
}

// Float ulps per operator: bitwise but broadcast_power and
// broadcast_hypot (CUDA's powf and hypotf against glibc's: the bounds of
// the same-shape forms' cases, conformance_math.cc).
int BcastUlps(const std::string &op) {
  return op == "broadcast_power" ? 6 : op == "broadcast_hypot" ? 5 : 0;
}

void BcastCases(const char *op, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kBcast.size(); ++k) {
    const auto &d = kBcast[k];
    // Divisors away from 0 (broadcast_div): magnitudes in [0.5, 3]; lhs
    // positive (broadcast_power's bases). Every third rhs element is
    // lhs's first: ties for the comparisons, maximum and minimum.
    Vec a = Random(d[0], 0.5f, 3, g), b = Random(d[1], 0.5f, 3, g);
    for (float &x : b) x = (*g)() % 2 ? x : -x;
    for (size_t i = 0; !a.empty() && i < b.size(); i += 3) b[i] = a[0];
    Vec base = Random(d[2], -1, 1, g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Vec cpu = base, gpu = base;
      if (req != MXC_REQ_ADD) gpu.assign(gpu.size(), Poison());
      ASSERT_EQ(RunBcast(op, MXC_DEVICE_CPU, d, a, b, &cpu, req), MXC_OK)
          << what << " on the CPU: " << LastError();
      ASSERT_EQ(RunBcast(op, dev, d, a, b, &gpu, req), MXC_OK)
          << what << " on the GPU: " << LastError();
      ExpectUlps(what, gpu, cpu, Vec(), BcastUlps(op));
    }
  }
}

const char *const kBcastOps[] = {
    "broadcast_add",           "broadcast_sub",         "broadcast_mul",
    "broadcast_div",           "broadcast_mod",         "broadcast_power",
    "broadcast_maximum",       "broadcast_minimum",     "broadcast_hypot",
    "broadcast_equal",         "broadcast_not_equal",   "broadcast_greater",
    "broadcast_greater_equal", "broadcast_lesser",      "broadcast_lesser_equal",
    "broadcast_logical_and",   "broadcast_logical_or",  "broadcast_logical_xor"};

// The operators after bcast.h's first four (binary_ops.h's list).
std::vector<mxct::RegisterCase> RegisterMoreBcast() {
  std::vector<mxct::RegisterCase> v;
  for (size_t i = 4; i < sizeof kBcastOps / sizeof kBcastOps[0]; ++i) {
    const char *op = kBcastOps[i];
    v.emplace_back(op, [op](std::mt19937 *g) {
      BcastCases(op, MXC_DEVICE_GPU, g);
    });
  }
  return v;
}
const std::vector<mxct::RegisterCase> kMoreBcastCases = RegisterMoreBcast();

const mxct::RegisterCase kBcastCases[] = {
    {"broadcast_add",
     [](std::mt19937 *g) { BcastCases("broadcast_add", MXC_DEVICE_GPU, g); }},
    {"broadcast_sub",
     [](std::mt19937 *g) { BcastCases("broadcast_sub", MXC_DEVICE_GPU, g); }},
    {"broadcast_mul",
     [](std::mt19937 *g) { BcastCases("broadcast_mul", MXC_DEVICE_GPU, g); }},
    {"broadcast_div",
     [](std::mt19937 *g) { BcastCases("broadcast_div", MXC_DEVICE_GPU, g); }},
};

// sum and mean cases: input shape, output shape, parameters.
struct SumCase {
  Dims in, out;
  Kv kv;
};

const std::vector<SumCase> kSum = {
    {{2, 3, 4}, {1}, {}},
    {{2, 3, 4}, {2, 4}, {{"axis", "1"}}},
    {{2, 3, 4}, {2, 3, 1}, {{"axis", "-1"}, {"keepdims", "true"}}},
    {{2, 3, 4}, {3}, {{"axis", "(0,2)"}}},
    {{2, 3, 4}, {3}, {{"axis", "1"}, {"exclude", "true"}}},
    {{5, 1, 7}, {5, 7}, {{"axis", "1"}}},
    {{0, 3}, {3}, {{"axis", "0"}}},
    {{3, 0}, {0}, {{"axis", "0"}}},
    {{100003}, {1}, {{"axis", "0"}}},
    {{64, 1030}, {64}, {{"axis", "1"}}},
    {{1000, 33}, {33}, {{"axis", "0"}}},
    {{3, 4, 5, 6}, {4, 6}, {{"axis", "(0,2)"}}},
};

void SumCases(const char *op, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kSum.size(); ++k) {
    const SumCase &c = kSum[k];
    std::vector<Vec> in = {Random(c.in, -1, 1, g)};
    Vec base = Random(c.out, -1, 1, g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Vec cpu = base, gpu = base;
      if (req != MXC_REQ_ADD) gpu.assign(gpu.size(), Poison());
      std::vector<Vec> ci = in, gi = in;
      ASSERT_EQ(RunShapes(op, c.kv, MXC_DEVICE_CPU, c.in, c.out, &ci, &cpu,
                          req),
                MXC_OK)
          << what << " on the CPU: " << LastError();
      ASSERT_EQ(RunShapes(op, c.kv, dev, c.in, c.out, &gi, &gpu, req), MXC_OK)
          << what << " on the GPU: " << LastError();
      ExpectUlps(what, gpu, cpu, req == MXC_REQ_ADD ? base : Vec(), 2);
    }
  }
}

const mxct::RegisterCase kSumCases[] = {
    {"sum", [](std::mt19937 *g) { SumCases("sum", MXC_DEVICE_GPU, g); }},
    {"mean", [](std::mt19937 *g) { SumCases("mean", MXC_DEVICE_GPU, g); }},
};

// Runs a same-shape call of several outputs on one device: outs hold the
// initial values and get the results.
int RunMulti(const char *name, int dev, const Dims &d,
             const std::vector<Vec> &in, std::vector<Vec> *outs,
             const std::vector<int> &req) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<mxc_ndarray> a, o;
  for (const Vec &x : in) a.push_back(Filled(d, dev, x));
  for (const Vec &x : *outs) o.push_back(Filled(d, dev, x));
  int rc = mxc_op_invoke(op, nullptr, nullptr, 0, a.data(), (int)a.size(),
                         o.data(), (int)o.size(), req.data());
  for (size_t i = 0; rc == MXC_OK && i < o.size(); ++i) {
    rc = mxc_ndarray_wait_to_read(o[i]);
    if (rc == MXC_OK && !(*outs)[i].empty()) {
      rc = mxc_ndarray_copy_to_host(o[i], (*outs)[i].data(),
                                    (*outs)[i].size() * 4);
    }
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  for (mxc_ndarray x : o) mxc_ndarray_free(x);
  return rc;
}

// _backward_<add|sub|mul|div>: inputs ograd, lhs, rhs; outputs dlhs,
// drhs in every pair of modes (NULL: the output keeps its values).
void BinGradCases(const char *op, int dev, std::mt19937 *g) {
  for (const Dims &d : kShapes) {
    Vec b = Random(d, 0.5f, 3, g);
    for (float &x : b) x = (*g)() % 2 ? x : -x;
    std::vector<Vec> in = {Random(d, -2, 2, g), Random(d, -3, 3, g), b};
    std::vector<Vec> base = {Random(d, -1, 1, g), Random(d, -1, 1, g)};
    const std::vector<std::vector<int>> reqs = {
        {MXC_REQ_WRITE, MXC_REQ_WRITE}, {MXC_REQ_ADD, MXC_REQ_ADD},
        {MXC_REQ_WRITE, MXC_REQ_NULL}, {MXC_REQ_NULL, MXC_REQ_ADD}};
    for (const auto &req : reqs) {
      std::string what = std::string(op) + " size " +
                         std::to_string(Numel(d)) + " req " +
                         std::to_string(req[0]) + std::to_string(req[1]);
      std::vector<Vec> cpu = base, gpu = base;
      for (int i = 0; i < 2; ++i) {
        if (req[i] == MXC_REQ_WRITE) gpu[i].assign(gpu[i].size(), Poison());
      }
      ASSERT_EQ(RunMulti(op, MXC_DEVICE_CPU, d, in, &cpu, req), MXC_OK)
          << what << " on the CPU: " << LastError();
      ASSERT_EQ(RunMulti(op, dev, d, in, &gpu, req), MXC_OK)
          << what << " on the GPU: " << LastError();
      for (int i = 0; i < 2; ++i) {
        ExpectUlps(what + " output " + std::to_string(i), gpu[i], cpu[i],
                   Vec(), 0);
      }
    }
  }
}

const char *const kBinGradOps[] = {"_backward_add", "_backward_sub",
                                   "_backward_mul", "_backward_div"};

const mxct::RegisterCase kBinGradCases[] = {
    {"_backward_add",
     [](std::mt19937 *g) { BinGradCases("_backward_add", MXC_DEVICE_GPU, g); }},
    {"_backward_sub",
     [](std::mt19937 *g) { BinGradCases("_backward_sub", MXC_DEVICE_GPU, g); }},
    {"_backward_mul",
     [](std::mt19937 *g) { BinGradCases("_backward_mul", MXC_DEVICE_GPU, g); }},
    {"_backward_div",
     [](std::mt19937 *g) { BinGradCases("_backward_div", MXC_DEVICE_GPU, g); }},
};

const mxct::RegisterCase kSgd("sgd_update", [](std::mt19937 *g) {
  OptCases("sgd_update", MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kSgdMom("sgd_mom_update", [](std::mt19937 *g) {
  OptCases("sgd_mom_update", MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kAdam("adam_update", [](std::mt19937 *g) {
  OptCases("adam_update", MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kAct("Activation", [](std::mt19937 *g) {
  ActCases(false, MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kActBwd("_backward_Activation", [](std::mt19937 *g) {
  ActCases(true, MXC_DEVICE_GPU, g);
});

// On every machine: the cases are valid calls, CPU against CPU (bitwise
// equal there), so a GPU run does not spend its minutes on a broken case.
TEST(GpuConformanceTrain, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(7);
  for (const char *op : {"sgd_update", "sgd_mom_update", "adam_update"}) {
    OptCases(op, MXC_DEVICE_CPU, &g);
  }
  ActCases(false, MXC_DEVICE_CPU, &g);
  ActCases(true, MXC_DEVICE_CPU, &g);
  for (const char *op : kBcastOps) BcastCases(op, MXC_DEVICE_CPU, &g);
  for (const char *op : kBinGradOps) BinGradCases(op, MXC_DEVICE_CPU, &g);
  SumCases("sum", MXC_DEVICE_CPU, &g);
  SumCases("mean", MXC_DEVICE_CPU, &g);
}

TEST(GpuConformanceTrain, TheComparisonCanFail) {
  Vec cpu = {1.f, -2.f, 3.f};
  EXPECT_NONFATAL_FAILURE(ExpectUlps("x", {1.f, Poison(), 3.f}, cpu, {}, 4),
                          "never written");
  float up = std::nextafter(3.f, 4.f);
  EXPECT_NONFATAL_FAILURE(ExpectUlps("x", {1.f, -2.f, up}, cpu, {}, 0),
                          "on the GPU");
  ExpectUlps("x", {1.f, -2.f, up}, cpu, {}, 1);
  // Add mode: the scale is the larger of the result and the base.
  ExpectUlps("x", {1e-7f}, {0.f}, {1.f}, 1);
}

}  // namespace
