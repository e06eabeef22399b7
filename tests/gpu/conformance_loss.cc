// Conformance cases of backends/cuda/loss.h: SoftmaxOutput and its
// gradient (every layout, class and probability labels, labels that are
// no class, ignore_label, smoothing, null and batch normalization,
// ResNet's 64 x 1000 head) and the reshaping copies (Reshape, Flatten,
// expand_dims, squeeze and their gradients, an empty array among them),
// on the GPU against the CPU operators with the same inputs: GPU outputs
// poisoned before a write, write and add modes.
//
// Tolerance, in float ulps of the larger of the CPU's value and (add
// mode) the output's value before the call: SoftmaxOutput 2 (both sum
// the exponentials in double in the same order, but the device's double
// exp may differ from glibc's by an ulp of double, which can move a float
// by one ulp near a tie, and add mode rounds once more); its gradient
// and the copies 0 (the same double operations, or none).
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

Vec Random(const Dims &d, float lo, float hi, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = u(*g);
  return v;
}

// One call: inputs of their own shapes, one output.
struct Call {
  const char *op;
  Kv kv;
  std::vector<Dims> in_d;
  Dims out_d;
  int ulps;
};

// Runs c on dev over ins, the output starting as out; the result in out.
int Run(const Call &c, int dev, const std::vector<Vec> &ins, Vec *out,
        int req) {
  mxc_op op = nullptr;
  if (mxc_op_find(c.op, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a;
  for (size_t i = 0; i < ins.size(); ++i) {
    a.push_back(mxct::Make(c.in_d[i], dev, 0));
    if (!ins[i].empty()) {
      mxc_ndarray_copy_from_host(a.back(), ins[i].data(), ins[i].size() * 4);
    }
  }
  mxc_ndarray o = mxct::Make(c.out_d, dev, 0);
  if (!out->empty())
    mxc_ndarray_copy_from_host(o, out->data(), out->size() * 4);
  int rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a.data(),
                         (int)a.size(), &o, 1, &req);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(o);
  if (rc == MXC_OK && !out->empty()) {
    rc = mxc_ndarray_copy_to_host(o, out->data(), out->size() * 4);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  mxc_ndarray_free(o);
  return rc;
}

void ExpectWithin(const std::string &what, const Vec &dev, const Vec &cpu,
                  const Vec &base, int ulps) {
  ASSERT_EQ(dev.size(), cpu.size()) << what;
  for (size_t i = 0; i < dev.size(); ++i) {
    if (mxct::IsPoison(dev[i])) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    if (std::isnan(dev[i]) && std::isnan(cpu[i])) continue;
    double scale =
        std::fmax(std::fabs(cpu[i]), base.empty() ? 0.0 : std::fabs(base[i]));
    bool ok = ulps == 0
                  ? std::memcmp(&dev[i], &cpu[i], 4) == 0
                  : std::fabs(dev[i] - cpu[i]) <= ulps * FLT_EPSILON * scale;
    if (!ok) {
      ADD_FAILURE() << what << ": element " << i << " is " << dev[i]
                    << " there, " << cpu[i] << " on the CPU";
      return;
    }
  }
}

// c with inputs ins on dev against the CPU, write and add.
void Compare(const Call &c, const std::vector<Vec> &ins, int dev,
             std::mt19937 *g) {
  Vec base = Random(c.out_d, -1, 1, g);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    std::string what = std::string(c.op) + " to " +
                       std::to_string(Numel(c.out_d)) + " values" +
                       (req == MXC_REQ_ADD ? " (add)" : "");
    Vec cpu = base,
        out = req == MXC_REQ_ADD ? base : Vec(base.size(), mxct::Poison());
    ASSERT_EQ(Run(c, MXC_DEVICE_CPU, ins, &cpu, req), MXC_OK)
        << what << ": " << LastError();
    ASSERT_EQ(Run(c, dev, ins, &out, req), MXC_OK)
        << what << ": " << LastError();
    ExpectWithin(what, out, cpu, req == MXC_REQ_ADD ? base : Vec(), c.ulps);
  }
}

// ---- SoftmaxOutput ----

struct SoCase {
  Kv kv;
  Dims data, label;  // label == data: probabilities
};

const SoCase kSo[] = {
    {{}, {5, 7}, {5}},
    {{{"normalization", "batch"}}, {64, 1000}, {64}},  // ResNet's head
    {{{"normalization", "batch"}, {"grad_scale", "1.5"}}, {4, 3, 2}, {4}},
    {{{"multi_output", "true"}, {"normalization", "batch"}},
     {3, 4, 2, 3},
     {3, 2, 3}},
    {{{"preserve_shape", "true"},
      {"use_ignore", "true"},
      {"ignore_label", "2"},
      {"smooth_alpha", "0.1"}},
     {2, 3, 6},
     {2, 3}},
    {{{"grad_scale", "0.5"}}, {3, 6}, {3, 6}},
};

// Classes, and values that are no class (fractional, negative, too
// large, NaN), ignore_label 2 among them; probabilities for a label
// shaped like the data.
Vec Labels(const SoCase &c, std::mt19937 *g) {
  if (c.label == c.data) return Random(c.label, 0, 1, g);
  int64_t n = Numel(c.label), classes = Numel(c.data) / n;
  const float odd[] = {1.5f, -1.f, 1e6f, NAN, 2.f};
  Vec v((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    v[(size_t)i] =
        i % 3 == 2 ? odd[(i / 3) % 5] : (float)((i * 7 + 3) % classes);
  }
  return v;
}

void SoForward(int dev, std::mt19937 *g) {
  for (const SoCase &c : kSo) {
    Call call = {"SoftmaxOutput", c.kv, {c.data, c.label}, c.data, 2};
    Compare(call, {Random(c.data, -8, 8, g), Labels(c, g)}, dev, g);
  }
}

// The backward reads the forward's output: probabilities in (0, 1).
void SoBackward(int dev, std::mt19937 *g) {
  for (const SoCase &c : kSo) {
    Call call = {"_backward_SoftmaxOutput", c.kv, {c.data, c.label}, c.data, 0};
    Compare(call, {Random(c.data, 0, 1, g), Labels(c, g)}, dev, g);
  }
}

// ---- the reshaping copies ----

// Forward (data -> out) and backward ((ograd, data) -> data's shape).
struct CopyCase {
  const char *op;
  Kv kv;
  Dims data, out;
};

const CopyCase kCopies[] = {
    {"Reshape", {{"shape", "(5,6)"}}, {3, 5, 2}, {5, 6}},
    {"Flatten", {}, {3, 5, 2}, {3, 10}},
    {"Flatten", {}, {64, 2048, 1, 1}, {64, 2048}},  // ResNet's
    {"Flatten", {}, {0, 4, 2}, {0, 8}},
    {"expand_dims", {{"axis", "1"}}, {3, 5}, {3, 1, 5}},
    {"squeeze", {}, {3, 1, 5, 1}, {3, 5}},
};

void CopyForward(const char *op, int dev, std::mt19937 *g) {
  for (const CopyCase &c : kCopies) {
    if (std::string(c.op) != op) continue;
    Call call = {c.op, c.kv, {c.data}, c.out, 0};
    Compare(call, {Random(c.data, -4, 4, g)}, dev, g);
  }
}

void CopyBackward(const char *op, int dev, std::mt19937 *g) {
  for (const CopyCase &c : kCopies) {
    if (std::string("_backward_") + c.op != op) continue;
    Call call = {op, c.kv, {c.out, c.data}, c.data, 0};
    Compare(call, {Random(c.out, -4, 4, g), Random(c.data, -4, 4, g)}, dev, g);
  }
}

#define COPY_CASES(name)                                                    \
  mxct::RegisterCase(                                                       \
      name, [](std::mt19937 *g) { CopyForward(name, MXC_DEVICE_GPU, g); }), \
      mxct::RegisterCase("_backward_" name, [](std::mt19937 *g) {           \
        CopyBackward("_backward_" name, MXC_DEVICE_GPU, g);                 \
      })

const mxct::RegisterCase kLossCases[] = {
    mxct::RegisterCase("SoftmaxOutput",
                       [](std::mt19937 *g) { SoForward(MXC_DEVICE_GPU, g); }),
    mxct::RegisterCase("_backward_SoftmaxOutput",
                       [](std::mt19937 *g) { SoBackward(MXC_DEVICE_GPU, g); }),
    COPY_CASES("Reshape"),
    COPY_CASES("Flatten"),
    COPY_CASES("expand_dims"),
    COPY_CASES("squeeze"),
};

// Every machine: the cases are valid calls (CPU against CPU), so a GPU run
// does not spend its minutes on a malformed one.
TEST(GpuConformanceLoss, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(5);
  SoForward(MXC_DEVICE_CPU, &g);
  SoBackward(MXC_DEVICE_CPU, &g);
  for (const char *op : {"Reshape", "Flatten", "expand_dims", "squeeze"}) {
    CopyForward(op, MXC_DEVICE_CPU, &g);
    CopyBackward((std::string("_backward_") + op).c_str(), MXC_DEVICE_CPU, &g);
  }
}

// The comparison fails on an element left unwritten and on a one-ulp
// difference where none is allowed.
TEST(GpuConformanceLoss, TheComparisonCanFail) {
  Vec cpu = {0.25f, 0.5f}, poisoned = {0.25f, mxct::Poison()};
  Vec off = {0.25f, std::nextafter(0.5f, 1.f)};
  EXPECT_NONFATAL_FAILURE(ExpectWithin("t", poisoned, cpu, {}, 2),
                          "never written");
  EXPECT_NONFATAL_FAILURE(ExpectWithin("t", off, cpu, {}, 0), "on the CPU");
}

}  // namespace
