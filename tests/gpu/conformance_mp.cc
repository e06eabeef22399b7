// Conformance cases of backends/cuda/mp.h: mp_sgd_update,
// mp_sgd_mom_update, multi_sgd_update, multi_sgd_mom_update,
// multi_mp_sgd_update, multi_mp_sgd_mom_update, mp_lamb_update_phase1
// and _phase2 (float32, float16 and bfloat16 weights, several weights of
// different sizes per call, write, add, in place, a weight skipped by a
// NULL output) and all_finite,
// multi_all_finite (NaN and infinities in float32, float16, bfloat16,
// float64 inputs, integers, init_output on and off), on the GPU against
// the CPU operators with the same inputs. Outputs are poisoned before a
// write; every output and every state (mom, weight32) is compared.
//
// Tolerance: bitwise. The kernels run mp_plan.h's rule, which performs
// the CPU's double operations in its order and rounds each value once as
// the CPU does (-fmad=false; IEEE double on both sides); the host test
// tests/gpu:test_cuda_optim_plan checks that rule bitwise against the CPU
// operators. all_finite's flag is 0 or 1 (or its old value).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/half_test_util.h"
#include "tests/gpu/typed_cases.h"

namespace {

using mxct::Bytes;
using mxct::CompareTyped;
using mxct::Dims;
using mxct::ExpectBits;
using mxct::Kv;
using mxct::Numel;
using mxct::RandArr;
using mxct::TArr;

// ---- the SGD updates ----

struct MpCase {
  Kv kv;
  int dt;   // the weights' dtype
  int n_w;  // weights per call
};

struct MpOp {
  const char *name;
  int stride;  // inputs per weight
  bool has_mom, has_w32;
  std::vector<MpCase> cases;
};

const std::vector<MpOp> kMpOps = {
    {"mp_sgd_update",
     3,
     false,
     true,
     {{{{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}},
       MXC_DTYPE_FLOAT16,
       1},
      {{{"lr", "0.05"}, {"clip_gradient", "0.3"}}, MXC_DTYPE_BFLOAT16, 1},
      {{{"lr", "0.02"}, {"wd", "0.1"}}, MXC_DTYPE_FLOAT32, 1}}},
    {"mp_sgd_mom_update",
     4,
     true,
     true,
     {{{{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"}},
       MXC_DTYPE_FLOAT16,
       1},
      {{{"lr", "0.07"}, {"momentum", "0.8"}, {"clip_gradient", "0.4"}},
       MXC_DTYPE_BFLOAT16,
       1}}},
    {"multi_sgd_update",
     2,
     false,
     false,
     {{{{"lrs", "(0.1, 0.2, 0.05)"},
        {"wds", "(0.01, 0, 0.02)"},
        {"num_weights", "3"}},
       MXC_DTYPE_FLOAT32,
       3},
      {{{"lrs", "(0.1, 0.3)"},
        {"wds", "(0.001, 0.02)"},
        {"num_weights", "2"},
        {"rescale_grad", "2"},
        {"clip_gradient", "0.5"}},
       MXC_DTYPE_FLOAT16,
       2}}},
    {"multi_sgd_mom_update",
     3,
     true,
     false,
     {{{{"lrs", "(0.1, 0.2, 0.05)"},
        {"wds", "(0.01, 0, 0.02)"},
        {"num_weights", "3"},
        {"momentum", "0.9"}},
       MXC_DTYPE_FLOAT32,
       3}}},
    {"multi_mp_sgd_update",
     3,
     false,
     true,
     {{{{"lrs", "(0.1, 0.2, 0.05)"},
        {"wds", "(0.01, 0, 0.02)"},
        {"num_weights", "3"}},
       MXC_DTYPE_FLOAT16,
       3}}},
    {"multi_mp_sgd_mom_update",
     4,
     true,
     true,
     {{{{"lrs", "(0.1, 0.2)"},
        {"wds", "(0.01, 0.03)"},
        {"num_weights", "2"},
        {"momentum", "0.85"},
        {"clip_gradient", "0.4"}},
       MXC_DTYPE_BFLOAT16,
       2},
      {{{"lrs", "(0.1, 0.2, 0.3)"},
        {"wds", "(0.01, 0.03, 0)"},
        {"num_weights", "3"},
        {"momentum", "0.9"}},
       MXC_DTYPE_FLOAT32,
       3}}},
};

// Weight w's shape: several sizes per call, one of them empty.
const std::vector<Dims> kMpShapes = {{3, 5, 2}, {1031}, {1}, {0}};

void MpCases(const char *name, int dev, std::mt19937 *g) {
  for (const MpOp &op : kMpOps) {
    if (std::string(op.name) != name) continue;
    for (size_t k = 0; k < op.cases.size(); ++k) {
      const MpCase &c = op.cases[k];
      std::vector<TArr> in, out;
      for (int w = 0; w < c.n_w; ++w) {
        const Dims &d = kMpShapes[(w + k) % kMpShapes.size()];
        in.push_back(RandArr(c.dt, d, -2, 2, g));
        in.push_back(RandArr(c.dt, d, -3, 3, g));
        // mom: float32 in the mp forms, the weight's dtype otherwise
        int sdt = op.has_w32 ? MXC_DTYPE_FLOAT32 : c.dt;
        if (op.has_mom) in.push_back(RandArr(sdt, d, -.5f, .5f, g));
        if (op.has_w32) in.push_back(RandArr(MXC_DTYPE_FLOAT32, d, -2, 2, g));
        out.push_back(RandArr(c.dt, d, -1, 1, g));
      }
      for (int mode = 0; mode < 4; ++mode) {
        std::vector<int> req(c.n_w, mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE);
        std::vector<int> alias(c.n_w, -1);
        if (mode == 2) {
          for (int w = 0; w < c.n_w; ++w) alias[w] = w * op.stride;
        }
        if (mode == 3) req[c.n_w - 1] = MXC_REQ_NULL;
        std::string what = std::string(name) + " case " + std::to_string(k) +
                           " " + mxct::DtypeName(c.dt) + " mode " +
                           std::to_string(mode);
        CompareTyped(dev, what, name, c.kv, in, out, req, alias);
      }
    }
  }
}

#define MP_CASE(op)                                             \
  {                                                             \
    op, [](std::mt19937 *g) { MpCases(op, MXC_DEVICE_GPU, g); } \
  }

const mxct::RegisterCase kMpCaseRegs[] = {
    MP_CASE("mp_sgd_update"),       MP_CASE("mp_sgd_mom_update"),
    MP_CASE("multi_sgd_update"),    MP_CASE("multi_sgd_mom_update"),
    MP_CASE("multi_mp_sgd_update"), MP_CASE("multi_mp_sgd_mom_update"),
};

// ---- mp_lamb_update_phase1 / phase2 ----

struct LambCase {
  Kv kv;
  int dt;  // the weight's dtype
};

const std::vector<LambCase> kLamb1 = {
    {{{"wd", "0.01"}, {"t", "5"}}, MXC_DTYPE_FLOAT16},
    {{{"wd", "0"},
      {"t", "2"},
      {"bias_correction", "false"},
      {"clip_gradient", "0.3"},
      {"rescale_grad", "2"}},
     MXC_DTYPE_BFLOAT16},
    {{{"wd", "0.1"}, {"t", "1"}}, MXC_DTYPE_FLOAT32},
};

const std::vector<LambCase> kLamb2 = {
    {{{"lr", "0.01"}}, MXC_DTYPE_FLOAT16},
    {{{"lr", "0.02"}, {"lower_bound", "0.5"}, {"upper_bound", "1.5"}},
     MXC_DTYPE_BFLOAT16},
    {{{"lr", "0.03"}}, MXC_DTYPE_FLOAT32},
};

// Phase 1 (weight, grad, mean, var, weight32 -> g float32) or phase 2
// (weight, g, r1, r2, weight32 -> weight; r2 = 0 in the small case:
// the plain learning rate), write and add, shapes of several sizes.
void LambCases(int phase, int dev, std::mt19937 *g) {
  const char *name =
      phase == 1 ? "mp_lamb_update_phase1" : "mp_lamb_update_phase2";
  const int f32 = MXC_DTYPE_FLOAT32;
  const auto &cases = phase == 1 ? kLamb1 : kLamb2;
  for (size_t k = 0; k < cases.size(); ++k) {
    const LambCase &c = cases[k];
    for (const Dims &d : kMpShapes) {
      std::vector<TArr> in = {RandArr(c.dt, d, -2, 2, g)};
      if (phase == 1) {
        in.push_back(RandArr(c.dt, d, -3, 3, g));
        in.push_back(RandArr(f32, d, -.5f, .5f, g));
        in.push_back(RandArr(f32, d, 0, 1, g));
      } else {
        in.push_back(RandArr(f32, d, -1, 1, g));
        in.push_back(RandArr(f32, {1}, 0.2f, 2, g));
        in.push_back(RandArr(f32, {1}, Numel(d) == 1 ? 0 : .5f, 3, g));
        if (Numel(d) == 1) in.back().b = Bytes(4, 0);
      }
      in.push_back(RandArr(f32, d, -2, 2, g));
      std::vector<TArr> out = {RandArr(phase == 1 ? f32 : c.dt, d, -1, 1, g)};
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        std::string what = std::string(name) + " case " + std::to_string(k) +
                           " size " + std::to_string(Numel(d)) +
                           (req == MXC_REQ_ADD ? " add" : " write");
        CompareTyped(dev, what, name, c.kv, in, out, {req}, {-1});
      }
    }
  }
}

const mxct::RegisterCase kLambCaseRegs[] = {
    {"mp_lamb_update_phase1",
     [](std::mt19937 *g) { LambCases(1, MXC_DEVICE_GPU, g); }},
    {"mp_lamb_update_phase2",
     [](std::mt19937 *g) { LambCases(2, MXC_DEVICE_GPU, g); }},
};

// ---- all_finite, multi_all_finite ----

// Inputs of every checked dtype; `bad` puts a NaN or an infinity into
// input bad (-1: none).
std::vector<TArr> FiniteInputs(int bad, std::mt19937 *g) {
  std::vector<TArr> in = {
      RandArr(MXC_DTYPE_FLOAT32, {4, 25}, -1e30f, 1e30f, g),
      RandArr(MXC_DTYPE_FLOAT16, {50}, -6e4f, 6e4f, g),
      RandArr(MXC_DTYPE_BFLOAT16, {3, 10}, -1, 1, g),
      {MXC_DTYPE_FLOAT64, {5}, Bytes(40, 0)},
      {MXC_DTYPE_INT32, {4}, Bytes(16, 0xff)},
      RandArr(MXC_DTYPE_FLOAT32, {100003}, -1, 1, g),
  };
  const float inf = INFINITY;
  if (bad == 0) in[0].b = mxct::ToBytes(MXC_DTYPE_FLOAT32, {NAN});
  if (bad == 0) in[0].d = {1};
  if (bad == 1) {
    uint16_t h = 0xfc00;  // float16 -inf
    std::memcpy(&in[1].b[2 * 33], &h, 2);
  }
  if (bad == 2) {
    uint16_t h = mxc__f32_to_bf16(inf);
    std::memcpy(&in[2].b[2 * 29], &h, 2);
  }
  if (bad == 3) {
    const double nan = NAN;
    std::memcpy(&in[3].b[8 * 4], &nan, 8);
  }
  if (bad == 5) std::memcpy(&in[5].b[4 * 100002], &inf, 4);
  return in;
}

void FiniteCases(const char *name, int dev, std::mt19937 *g) {
  bool multi = std::string(name) == "multi_all_finite";
  for (int bad = -1; bad < 6; ++bad) {
    std::vector<TArr> in = FiniteInputs(bad, g);
    if (!multi) in = {in[bad < 0 ? 5 : bad]};  // one input
    for (bool init : {true, false}) {
      Kv kv = {{"init_output", init ? "true" : "false"}};
      if (multi) kv.push_back({"num_arrays", std::to_string(in.size())});
      // Without init_output the flag keeps its value: 0.5 on both sides.
      std::vector<TArr> out = {
          {MXC_DTYPE_FLOAT32, {1}, mxct::ToBytes(MXC_DTYPE_FLOAT32, {.5f})}};
      // (mode ADD: the operator sets the flag in every mode but NULL, and
      // an output in ADD mode is not poisoned)
      std::vector<int> req = {init ? MXC_REQ_WRITE : MXC_REQ_ADD};
      std::string what = std::string(name) + " bad input " +
                         std::to_string(bad) + (init ? " init" : "");
      CompareTyped(dev, what, name, kv, in, out, req, {-1});
    }
  }
}

const mxct::RegisterCase kFiniteCaseRegs[] = {
    {"all_finite",
     [](std::mt19937 *g) { FiniteCases("all_finite", MXC_DEVICE_GPU, g); }},
    {"multi_all_finite",
     [](std::mt19937 *g) {
       FiniteCases("multi_all_finite", MXC_DEVICE_GPU, g);
     }},
};

// On every machine: the cases are valid calls, CPU against CPU (bitwise
// equal there), so a GPU run does not spend its minutes on a broken case.
TEST(GpuConformanceMp, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(18);
  for (const MpOp &op : kMpOps) MpCases(op.name, MXC_DEVICE_CPU, &g);
  LambCases(1, MXC_DEVICE_CPU, &g);
  LambCases(2, MXC_DEVICE_CPU, &g);
  FiniteCases("all_finite", MXC_DEVICE_CPU, &g);
  FiniteCases("multi_all_finite", MXC_DEVICE_CPU, &g);
}

TEST(GpuConformanceMp, TheComparisonCanFail) {
  TArr cpu = {MXC_DTYPE_FLOAT16, {2}, mxct::ToBytes(MXC_DTYPE_FLOAT16, {1, 2})};
  TArr gpu = cpu;
  gpu.b[2] ^= 1;
  EXPECT_NONFATAL_FAILURE(ExpectBits("x", gpu, cpu), "on the GPU");
  gpu.b = mxct::PoisonBytes(MXC_DTYPE_FLOAT16, 2);
  EXPECT_NONFATAL_FAILURE(ExpectBits("x", gpu, cpu), "never written");
}

}  // namespace
