// Conformance cases of the backward and reduction kernels of
// backends/cuda/bgrad.h (_backward_broadcast_add/sub/mul/div), on the GPU
// against the CPU operators with the same random inputs: GPU outputs
// poisoned before a write (an element never written fails), every pair
// of write modes, shapes stretched along leading, trailing and middle
// axes, a bias-like (N, C, H, W) + (1, C, 1, 1), 0-d and empty arrays.
//
// Tolerances, in float ulps of max(|cpu|, |output before an add|):
// - _backward_broadcast_*: 2 ulps. Both sides sum float partials (the
//   same float operations, -fmad=false) in double, in different orders
//   (the CPU by rows of up to 256, the GPU by thread or by 256 strided
//   partials and a tree), so the floats differ only where the two double
//   sums round differently; groups of one element are bitwise. Magnitudes
//   in [0.5, 3]: little cancellation.
//
// The same cases run CPU against CPU on every machine
// (GpuConformanceBwd.CasesAreValidCallsOnTheCpu).
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

using mxct::LastError;
using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// Uniform in [lo, hi], each value negated with probability 1/2 when
// signed_.
Vec Random(const Dims &d, float lo, float hi, std::mt19937 *g,
           bool signed_ = false) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = signed_ && (*g)() % 2 ? -u(*g) : u(*g);
  return v;
}

const uint32_t kPoisonBits = 0x7fc0dead;

float Poison() {
  float f;
  std::memcpy(&f, &kPoisonBits, 4);
  return f;
}

// An array of shape d on dev holding v.
mxc_ndarray Filled(const Dims &d, int dev, const Vec &v) {
  mxc_ndarray a = mxct::Make(d, dev, 0);
  if (!v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
        << LastError();
  }
  return a;
}

int ReadBack(mxc_ndarray a, Vec *v) {
  int rc = mxc_ndarray_wait_to_read(a);
  if (rc == MXC_OK && !v->empty()) {
    rc = mxc_ndarray_copy_to_host(a, v->data(), v->size() * 4);
  }
  return rc;
}

// One array of a call: its shape and values (read back after the call).
struct Arg {
  Dims d;
  Vec v;
};

// Runs op on dev: inputs and outputs (initial values in, results out;
// inputs read back too: the optimizers' states); inplace: output 0 is
// input 0's array.
int Run(const char *name, const Kv &kv, int dev, std::vector<Arg> *in,
        std::vector<Arg> *out, const std::vector<int> &req, bool inplace) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a, o;
  for (size_t i = 0; i < in->size(); ++i) {
    const Arg &x = inplace && i == 0 ? (*out)[0] : (*in)[i];
    a.push_back(Filled(x.d, dev, x.v));
  }
  for (size_t i = 0; i < out->size(); ++i) {
    o.push_back(inplace && i == 0 ? a[0]
                                  : Filled((*out)[i].d, dev, (*out)[i].v));
  }
  int rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a.data(),
                         (int)a.size(), o.data(), (int)o.size(), req.data());
  for (size_t i = 0; rc == MXC_OK && i < o.size(); ++i) {
    rc = ReadBack(o[i], &(*out)[i].v);
  }
  for (size_t i = 0; rc == MXC_OK && i < a.size(); ++i) {
    if (!(inplace && i == 0)) rc = ReadBack(a[i], &(*in)[i].v);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  for (size_t i = inplace ? 1 : 0; i < o.size(); ++i) mxc_ndarray_free(o[i]);
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
    if (bits == kPoisonBits) {
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

// One call on the CPU and on dev from the same values; every output (and
// input) compared. Outputs in write mode are poisoned on dev.
void Compare(int dev, const std::string &what, const char *op, const Kv &kv,
             const std::vector<Arg> &in, const std::vector<Arg> &out,
             const std::vector<int> &req, bool inplace, int ulps) {
  std::vector<Arg> ci = in, gi = in, co = out, go = out;
  for (size_t i = 0; i < go.size(); ++i) {
    if (req[i] == MXC_REQ_WRITE && !inplace) {
      go[i].v.assign(go[i].v.size(), Poison());
    }
  }
  ASSERT_EQ(Run(op, kv, MXC_DEVICE_CPU, &ci, &co, req, inplace), MXC_OK)
      << what << " on the CPU: " << LastError();
  ASSERT_EQ(Run(op, kv, dev, &gi, &go, req, inplace), MXC_OK)
      << what << " on the GPU: " << LastError();
  for (size_t i = 0; i < co.size(); ++i) {
    Vec base = req[i] == MXC_REQ_ADD ? out[i].v : Vec();
    ExpectUlps(what + " output " + std::to_string(i), go[i].v, co[i].v, base,
               ulps);
  }
  for (size_t i = 0; i < ci.size(); ++i) {
    ExpectUlps(what + " input " + std::to_string(i) + " after", gi[i].v,
               ci[i].v, Vec(), ulps);
  }
}

const std::vector<std::vector<int>> kPairModes = {
    {MXC_REQ_WRITE, MXC_REQ_WRITE},
    {MXC_REQ_ADD, MXC_REQ_ADD},
    {MXC_REQ_WRITE, MXC_REQ_NULL},
    {MXC_REQ_NULL, MXC_REQ_ADD}};

// ---- _backward_broadcast_* ----

// (lhs, rhs) shapes; ograd has their broadcast shape.
const std::vector<std::pair<Dims, Dims>> kBgrad = {
    {{3, 4}, {4}},          {{3, 1}, {3, 4}},
    {{2, 1, 5}, {2, 3, 5}}, {{}, {2, 2}},
    {{2, 3, 4}, {2, 3, 4}}, {{4, 1, 3, 1}, {1, 5, 1, 2}},
    {{129, 1}, {1, 257}},   {{8, 64, 7, 7}, {1, 64, 1, 1}},
    {{3, 40}, {40}},        {{1, 1}, {1000, 1}},
    {{0, 3}, {1, 3}},
};

Dims Broadcast(const Dims &a, const Dims &b) {
  size_t nd = a.size() > b.size() ? a.size() : b.size();
  Dims o(nd);
  for (size_t i = 0; i < nd; ++i) {
    size_t ia = i + a.size(), ib = i + b.size();
    int64_t ea = ia >= nd ? a[ia - nd] : 1, eb = ib >= nd ? b[ib - nd] : 1;
    o[i] = ea == 1 ? eb : ea;
  }
  return o;
}

void BgradCases(const char *op, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kBgrad.size(); ++k) {
    const Dims &a = kBgrad[k].first, &b = kBgrad[k].second;
    Dims o = Broadcast(a, b);
    std::vector<Arg> in = {{o, Random(o, 0.5f, 3, g, true)},
                           {a, Random(a, 0.5f, 3, g, true)},
                           {b, Random(b, 0.5f, 3, g, true)}};
    std::vector<Arg> out = {{a, Random(a, -1, 1, g)}, {b, Random(b, -1, 1, g)}};
    for (const auto &req : kPairModes) {
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         " reqs " + std::to_string(req[0]) +
                         std::to_string(req[1]);
      Compare(dev, what, op, {}, in, out, req, false, 2);
    }
  }
}

const char *const kBgradOps[] = {
    "_backward_broadcast_add", "_backward_broadcast_sub",
    "_backward_broadcast_mul", "_backward_broadcast_div"};

const mxct::RegisterCase kBgradCases[] = {
    {kBgradOps[0],
     [](std::mt19937 *g) { BgradCases(kBgradOps[0], MXC_DEVICE_GPU, g); }},
    {kBgradOps[1],
     [](std::mt19937 *g) { BgradCases(kBgradOps[1], MXC_DEVICE_GPU, g); }},
    {kBgradOps[2],
     [](std::mt19937 *g) { BgradCases(kBgradOps[2], MXC_DEVICE_GPU, g); }},
    {kBgradOps[3],
     [](std::mt19937 *g) { BgradCases(kBgradOps[3], MXC_DEVICE_GPU, g); }},
};

// On every machine: the cases are valid calls, CPU against CPU (bitwise
// equal there), so a GPU run does not spend its minutes on a broken case.
TEST(GpuConformanceBwd, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(17);
  for (const char *op : kBgradOps) BgradCases(op, MXC_DEVICE_CPU, &g);
}

TEST(GpuConformanceBwd, TheComparisonCanFail) {
  Vec cpu = {1.f, -2.f, 3.f};
  EXPECT_NONFATAL_FAILURE(ExpectUlps("x", {1.f, Poison(), 3.f}, cpu, {}, 4),
                          "never written");
  float up = std::nextafter(std::nextafter(3.f, 4.f), 4.f);
  EXPECT_NONFATAL_FAILURE(ExpectUlps("x", {1.f, -2.f, up}, cpu, {}, 1),
                          "on the GPU");
  ExpectUlps("x", {1.f, -2.f, up}, cpu, {}, 2);
}

}  // namespace
