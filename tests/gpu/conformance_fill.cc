// Conformance cases of backends/cuda/fill.h: _zeros, _ones, _full,
// zeros_like, ones_like, _arange, _eye (float32, float64, float16,
// bfloat16; several shapes, an empty one), add_n (1 to 70 inputs, so
// several launches; in place on args[0]), BlockGrad, MakeLoss, make_loss
// and _backward_MakeLoss (normalization null, batch, valid, with and
// without valid elements, 100003 elements counted by one block), write
// and add modes, on the GPU against the CPU operators with the same
// inputs; outputs poisoned before a write. And of backends/cuda/loss2.h:
// the regression outputs, smooth_l1, softmin, SoftmaxActivation,
// softmax_cross_entropy and their gradients (float32; labels that are no
// class among softmax_cross_entropy's); of backends/cuda/up.h: UpSampling
// and its gradient, nearest (one input, concat, sum) and bilinear
// (bitwise: float products and sums in the CPU's order, -fmad=false); of
// backends/cuda/resize.h: _contrib_BilinearResize2D (align_corners on and
// off, growing, shrinking, mode like) and _contrib_AdaptiveAvgPooling2D
// with their gradients (bitwise: the same double operations, and the
// gradients' float sums gathered in the CPU's scatter order); of
// backends/cuda/gn.h: GroupNorm and InstanceNorm with their hidden
// statistics and gradients (bitwise: each group's and channel's double
// and float sums in the CPU's order, IEEE sqrt); LRN and its gradient
// (2 ulps of max(|value|, 1): the device's double pow may differ from
// glibc's by an ulp of double).
//
// Tolerance: fills bitwise. The kernels run fill_plan.h's element rules, which
// perform the CPU's operations (float, double, or float rounded to the
// half type per step, as its rows) with one rounding per stored value
// (-fmad=false); the host test tests/gpu:test_cuda_fill_plan checks them
// bitwise against the CPU operators. loss2.h's kernels: bitwise where no
// exp or log is involved (the same double operations in the same order),
// else within 1 (LogisticRegressionOutput) or 2 (the softmax sums and
// softmax_cross_entropy's) float ulps of max(|value|, 1): the device's
// double exp and log may differ from glibc's by an ulp of double, which
// moves a float only at a rounding tie, and the sums carry such
// differences along.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/typed_cases.h"

namespace {

using mxct::CompareTyped;
using mxct::Dims;
using mxct::Kv;
using mxct::RandArr;
using mxct::TArr;

const int kDts[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16,
                    MXC_DTYPE_BFLOAT16};

std::string DtName(int dt) {
  return dt == MXC_DTYPE_FLOAT32   ? "float32"
         : dt == MXC_DTYPE_FLOAT64 ? "float64"
         : dt == MXC_DTYPE_FLOAT16 ? "float16"
                                   : "bfloat16";
}

std::string ShapeText(const Dims &d) {
  std::string s = "(";
  for (int64_t v : d) s += std::to_string(v) + ",";
  return s + ")";
}

// One call of op in write and add modes: inputs in, an output of shape d
// and dtype dt (alias: the output is input 0, in place, as a third call).
void Modes(int dev, const std::string &what, const char *op, const Kv &kv,
           const std::vector<TArr> &in, int dt, const Dims &d, bool inplace,
           std::mt19937 *g) {
  for (int mode = 0; mode < (inplace ? 3 : 2); ++mode) {
    std::vector<TArr> out = {RandArr(dt, d, -2, 2, g)};
    int req = mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE;
    CompareTyped(dev, what + " mode " + std::to_string(mode), op, kv, in, out,
                 {req}, {mode == 2 ? 0 : -1});
  }
}

// The CPU-only validation (CasesAreValidCallsOnTheCpu) leaves out the
// large shapes, which only a GPU run needs (they cost seconds under the
// sanitizers in every binary linking the cases); the small ones of each
// case list call the same operators the same way.
bool SkipOnCpu(int dev, const Dims &d) {
  return dev == MXC_DEVICE_CPU && mxct::Numel(d) > 20000;
}

const std::vector<Dims> kShapes = {{3, 5, 2}, {1031}, {0, 3}};

void ValueCases(const char *op, int dev, std::mt19937 *g) {
  std::string name = op;
  bool like = name == "zeros_like" || name == "ones_like";
  for (int dt : kDts) {
    for (const Dims &d : kShapes) {
      Kv kv = {{"shape", ShapeText(d)}, {"dtype", DtName(dt)}};
      if (like) kv.clear();
      std::vector<TArr> in;
      if (like) in.push_back(RandArr(dt, d, -1, 1, g));
      std::string what = name + " " + DtName(dt) + " " + ShapeText(d);
      if (name != "_full") {
        Modes(dev, what, op, kv, in, dt, d, false, g);
        continue;
      }
      for (const char *value : {"0.3", "-70000.5"}) {
        Kv kvv = kv;
        kvv.push_back({"value", value});
        Modes(dev, what + " value " + value, op, kvv, in, dt, d, false, g);
      }
    }
  }
}

// _arange: parameters and the output's length.
const std::vector<std::pair<Kv, int64_t>> kArange = {
    {{{"start", "0.1"}, {"stop", "7.3"}, {"step", "0.7"}, {"repeat", "2"}}, 22},
    {{{"start", "5"}}, 5},
    {{{"start", "-3"}, {"stop", "3"}, {"step", "0.3"}}, 20},
    {{{"start", "1000.5"}, {"stop", "900"}, {"step", "-0.37"}}, 272},
    {{{"start", "2"}, {"stop", "1"}}, 0},
};

const std::vector<std::pair<Kv, Dims>> kEye = {
    {{{"N", "4"}, {"M", "6"}, {"k", "1"}}, {4, 6}},
    {{{"N", "5"}, {"k", "-2"}}, {5, 5}},
    {{{"N", "3"}, {"M", "3"}, {"k", "5"}}, {3, 3}},
    {{{"N", "70"}, {"M", "33"}}, {70, 33}},
};

void ArangeCases(int dev, std::mt19937 *g) {
  for (int dt : kDts) {
    for (size_t k = 0; k < kArange.size(); ++k) {
      Kv kv = kArange[k].first;
      kv.push_back({"dtype", DtName(dt)});
      Modes(dev, "_arange case " + std::to_string(k) + " " + DtName(dt),
            "_arange", kv, {}, dt, {kArange[k].second}, false, g);
    }
  }
}

void EyeCases(int dev, std::mt19937 *g) {
  for (int dt : kDts) {
    for (size_t k = 0; k < kEye.size(); ++k) {
      Kv kv = kEye[k].first;
      kv.push_back({"dtype", DtName(dt)});
      Modes(dev, "_eye case " + std::to_string(k) + " " + DtName(dt), "_eye",
            kv, {}, dt, kEye[k].second, false, g);
    }
  }
}

void AddNCases(int dev, std::mt19937 *g) {
  const Dims d = {7, 150};
  for (int dt : kDts) {
    for (int n : {1, 2, 3, 70}) {
      std::vector<TArr> in;
      for (int i = 0; i < n; ++i) in.push_back(RandArr(dt, d, -2, 2, g));
      Modes(dev, "add_n of " + std::to_string(n) + " " + DtName(dt), "add_n",
            {{"num_args", std::to_string(n)}}, in, dt, d, true, g);
    }
  }
}

// BlockGrad in every dtype; MakeLoss and make_loss (float32 kernels).
void CopyCases(const char *op, int dev, std::mt19937 *g) {
  bool any = std::string(op) == "BlockGrad";
  for (int dt : kDts) {
    if (!any && dt != MXC_DTYPE_FLOAT32) continue;
    for (const Dims &d : kShapes) {
      std::vector<TArr> in = {RandArr(dt, d, -2, 2, g)};
      Modes(dev, std::string(op) + " " + DtName(dt) + " " + ShapeText(d), op,
            {}, in, dt, d, true, g);
    }
  }
}

void MakeLossGradCases(int dev, std::mt19937 *g) {
  const int f32 = MXC_DTYPE_FLOAT32;
  const std::vector<Kv> kvs = {
      {},
      {{"grad_scale", "3"}, {"normalization", "batch"}},
      {{"grad_scale", "0.7"},
       {"normalization", "valid"},
       {"valid_thresh", "0.2"}},
  };
  const std::vector<Dims> shapes = {{6, 9}, {100003}, {0, 4}};
  for (size_t k = 0; k < kvs.size(); ++k) {
    for (const Dims &d : shapes) {
      if (SkipOnCpu(dev, d)) continue;
      for (bool none_valid : {false, true}) {
        std::vector<TArr> in = {
            RandArr(f32, d, -1, 1, g),
            RandArr(f32, d, none_valid ? -2 : -1, none_valid ? 0 : 1, g)};
        Modes(dev,
              "_backward_MakeLoss case " + std::to_string(k) + " " +
                  ShapeText(d) + (none_valid ? " none valid" : ""),
              "_backward_MakeLoss", kvs[k], in, f32, d, false, g);
      }
    }
  }
}

#define CASE(op, call)                \
  {                                   \
    op, [](std::mt19937 *g) { call; } \
  }

const mxct::RegisterCase kFillCaseRegs[] = {
    CASE("_zeros", ValueCases("_zeros", MXC_DEVICE_GPU, g)),
    CASE("_ones", ValueCases("_ones", MXC_DEVICE_GPU, g)),
    CASE("_full", ValueCases("_full", MXC_DEVICE_GPU, g)),
    CASE("zeros_like", ValueCases("zeros_like", MXC_DEVICE_GPU, g)),
    CASE("ones_like", ValueCases("ones_like", MXC_DEVICE_GPU, g)),
    CASE("_arange", ArangeCases(MXC_DEVICE_GPU, g)),
    CASE("_eye", EyeCases(MXC_DEVICE_GPU, g)),
    CASE("add_n", AddNCases(MXC_DEVICE_GPU, g)),
    CASE("BlockGrad", CopyCases("BlockGrad", MXC_DEVICE_GPU, g)),
    CASE("MakeLoss", CopyCases("MakeLoss", MXC_DEVICE_GPU, g)),
    CASE("make_loss", CopyCases("make_loss", MXC_DEVICE_GPU, g)),
    CASE("_backward_MakeLoss", MakeLossGradCases(MXC_DEVICE_GPU, g)),
};

// ---- loss heads and softmax layers (backends/cuda/loss2.h) ----

struct LossCase {
  const char *op;
  Kv kv;
  std::vector<Dims> in;  // the label last where there is one
  Dims out;
  int ulps;  // see the file comment
};

const std::vector<LossCase> kLoss = {
    {"LinearRegressionOutput", {}, {{64, 10}, {64, 10}}, {64, 10}, 0},
    {"LogisticRegressionOutput", {}, {{1031, 1}, {1031}}, {1031, 1}, 1},
    {"MAERegressionOutput", {}, {{5, 4}, {5, 4}}, {5, 4}, 0},
    {"_backward_LinearRegressionOutput",
     {{"grad_scale", "0.5"}},
     {{64, 10}, {64, 10}},
     {64, 10},
     0},
    {"_backward_LogisticRegressionOutput",
     {},
     {{1031, 1}, {1031}},
     {1031, 1},
     0},
    {"_backward_MAERegressionOutput",
     {{"grad_scale", "3"}},
     {{5, 4}, {5, 4}},
     {5, 4},
     0},
    {"smooth_l1", {}, {{7, 9}}, {7, 9}, 0},
    {"smooth_l1", {{"scalar", "2.5"}}, {{1031}}, {1031}, 0},
    {"_backward_smooth_l1", {{"scalar", "0.7"}}, {{7, 9}, {7, 9}}, {7, 9}, 0},
    {"softmin", {}, {{4, 5, 6}}, {4, 5, 6}, 2},
    {"softmin",
     {{"axis", "1"}, {"temperature", "0.7"}},
     {{4, 5, 6}},
     {4, 5, 6},
     2},
    {"softmin", {{"axis", "0"}}, {{300, 7}}, {300, 7}, 2},
    {"_backward_softmin",
     {{"axis", "0"}, {"temperature", "2"}},
     {{4, 5, 6}, {4, 5, 6}},
     {4, 5, 6},
     0},
    {"_backward_softmin", {}, {{64, 1000}, {64, 1000}}, {64, 1000}, 0},
    {"SoftmaxActivation", {}, {{3, 4, 5}}, {3, 4, 5}, 2},
    {"SoftmaxActivation",
     {{"mode", "channel"}},
     {{3, 4, 5, 6}},
     {3, 4, 5, 6},
     2},
    {"_backward_SoftmaxActivation",
     {{"mode", "channel"}},
     {{3, 4, 5}, {3, 4, 5}},
     {3, 4, 5},
     0},
    {"_backward_SoftmaxActivation", {}, {{3, 4, 5}, {3, 4, 5}}, {3, 4, 5}, 0},
    {"softmax_cross_entropy", {}, {{9, 7}, {9}}, {1}, 2},
    {"softmax_cross_entropy", {}, {{1000, 37}, {1000}}, {1}, 2},
    {"softmax_cross_entropy", {}, {{0, 5}, {0}}, {1}, 0},
    {"_backward_softmax_cross_entropy", {}, {{1}, {9, 7}, {9}}, {9, 7}, 2},
    {"_backward_softmax_cross_entropy",
     {},
     {{1}, {1000, 37}, {1000}},
     {1000, 37},
     2},
};

// Inputs: values in [-3, 3]; a softmax output in (0, 1);
// softmax_cross_entropy's labels classes and labels that are none.
std::vector<TArr> LossInputs(const LossCase &c, std::mt19937 *g) {
  const int f32 = MXC_DTYPE_FLOAT32;
  std::vector<TArr> in;
  for (const Dims &d : c.in) in.push_back(RandArr(f32, d, -3, 3, g));
  std::string op = c.op;
  if (op.find("cross_entropy") != std::string::npos) {
    std::vector<float> label(mxct::Numel(c.in.back()));
    int64_t classes = c.in[c.in.size() - 2][1];
    for (size_t r = 0; r < label.size(); ++r) {
      label[r] = (float)((*g)() % (classes + 2)) - 1;  // -1, classes: none
      if (r % 17 == 5) label[r] = 0.5f;
    }
    in.back().b = mxct::ToBytes(f32, label);
  } else if (op == "_backward_softmin" || op == "_backward_SoftmaxActivation") {
    in[1] = RandArr(f32, c.in[1], 0.01f, 0.99f, g);
  }
  return in;
}

void LossCases(const char *op, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kLoss.size(); ++k) {
    const LossCase &c = kLoss[k];
    if (std::string(c.op) != op) continue;
    if (SkipOnCpu(dev, c.in[c.in.size() > 2 ? 1 : 0])) continue;
    std::vector<TArr> in = LossInputs(c, g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::vector<TArr> out = {RandArr(MXC_DTYPE_FLOAT32, c.out, -1, 1, g)};
      CompareTyped(dev,
                   std::string(op) + " case " + std::to_string(k) + " req " +
                       std::to_string(req),
                   op, c.kv, in, out, {req}, {-1}, c.ulps);
    }
  }
}

#define LOSS_CASE(op) CASE(op, LossCases(op, MXC_DEVICE_GPU, g))

const mxct::RegisterCase kLossCaseRegs[] = {
    LOSS_CASE("LinearRegressionOutput"),
    LOSS_CASE("LogisticRegressionOutput"),
    LOSS_CASE("MAERegressionOutput"),
    LOSS_CASE("_backward_LinearRegressionOutput"),
    LOSS_CASE("_backward_LogisticRegressionOutput"),
    LOSS_CASE("_backward_MAERegressionOutput"),
    LOSS_CASE("smooth_l1"),
    LOSS_CASE("_backward_smooth_l1"),
    LOSS_CASE("softmin"),
    LOSS_CASE("_backward_softmin"),
    LOSS_CASE("SoftmaxActivation"),
    LOSS_CASE("_backward_SoftmaxActivation"),
    LOSS_CASE("softmax_cross_entropy"),
    LOSS_CASE("_backward_softmax_cross_entropy"),
};

// ---- UpSampling (backends/cuda/up.h) ----

struct UpCase {
  Kv kv;
  std::vector<Dims> in;  // the forward's inputs
  Dims out;
};

const std::vector<UpCase> kUp = {
    {{{"scale", "2"}}, {{2, 3, 4, 5}}, {2, 3, 8, 10}},
    {{{"scale", "2"}, {"num_args", "2"}},
     {{2, 3, 4, 5}, {2, 2, 2, 5}},
     {2, 5, 8, 10}},
    {{{"scale", "3"}, {"num_args", "2"}, {"multi_input_mode", "sum"}},
     {{1, 3, 4, 4}, {1, 3, 2, 2}},
     {1, 3, 12, 12}},
    {{{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "16"}},
     {{4, 16, 15, 14}, {16, 1, 4, 4}},
     {4, 16, 30, 28}},
    {{{"scale", "3"}, {"sample_type", "bilinear"}},
     {{1, 2, 3, 4}, {2, 1, 5, 5}},
     {1, 2, 9, 12}},
};

// Forward in write and add; the gradient in write, add and (several
// inputs) NULL for the first.
void UpCases(bool bwd, int dev, std::mt19937 *g) {
  const char *op = bwd ? "_backward_UpSampling" : "UpSampling";
  const int f32 = MXC_DTYPE_FLOAT32;
  for (size_t k = 0; k < kUp.size(); ++k) {
    const UpCase &c = kUp[k];
    if (SkipOnCpu(dev, c.out)) continue;
    std::vector<TArr> in;
    if (bwd) in.push_back(RandArr(f32, c.out, -2, 2, g));
    for (const Dims &d : c.in) in.push_back(RandArr(f32, d, -2, 2, g));
    std::vector<TArr> out;
    for (const Dims &d : bwd ? c.in : std::vector<Dims>{c.out}) {
      out.push_back(RandArr(f32, d, -1, 1, g));
    }
    size_t n = out.size();
    std::vector<std::vector<int>> reqs = {std::vector<int>(n, MXC_REQ_WRITE),
                                          std::vector<int>(n, MXC_REQ_ADD)};
    if (n == 2) reqs.push_back({MXC_REQ_NULL, MXC_REQ_WRITE});
    for (size_t r = 0; r < reqs.size(); ++r) {
      CompareTyped(dev,
                   std::string(op) + " case " + std::to_string(k) + " modes " +
                       std::to_string(r),
                   op, c.kv, in, out, reqs[r], std::vector<int>(n, -1));
    }
  }
}

const mxct::RegisterCase kUpCaseRegs[] = {
    CASE("UpSampling", UpCases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_UpSampling", UpCases(true, MXC_DEVICE_GPU, g)),
};

// ---- _contrib_BilinearResize2D, _contrib_AdaptiveAvgPooling2D ----

struct RsCase {
  const char *op;
  Kv kv;
  std::vector<Dims> in;  // data[, like]
  Dims out;
};

const char kRs[] = "_contrib_BilinearResize2D";
const char kAp[] = "_contrib_AdaptiveAvgPooling2D";

const std::vector<RsCase> kRsCases = {
    {kRs, {{"height", "11"}, {"width", "4"}}, {{2, 3, 5, 7}}, {2, 3, 11, 4}},
    {kRs,
     {{"height", "31"}, {"width", "45"}, {"align_corners", "false"}},
     {{1, 2, 3, 4}},
     {1, 2, 31, 45}},
    {kRs,
     {{"scale_height", "0.5"}, {"scale_width", "0.5"}},
     {{4, 8, 64, 48}},
     {4, 8, 32, 24}},
    {kRs,
     {{"mode", "like"}, {"align_corners", "false"}},
     {{2, 2, 4, 4}, {1, 1, 6, 9}},
     {2, 2, 6, 9}},
    {kAp, {{"output_size", "(3,4)"}}, {{2, 3, 7, 9}}, {2, 3, 3, 4}},
    {kAp, {{"output_size", "7"}}, {{1, 2, 5, 5}}, {1, 2, 7, 7}},
    {kAp, {}, {{8, 64, 7, 7}}, {8, 64, 1, 1}},
};

void RsCases(const char *op, bool bwd, int dev, std::mt19937 *g) {
  const int f32 = MXC_DTYPE_FLOAT32;
  std::string name = bwd ? std::string("_backward_") + op : op;
  for (size_t k = 0; k < kRsCases.size(); ++k) {
    const RsCase &c = kRsCases[k];
    if (std::string(c.op) != op) continue;
    if (SkipOnCpu(dev, c.in[0]) || SkipOnCpu(dev, c.out)) continue;
    std::vector<TArr> in, out;
    if (bwd) in.push_back(RandArr(f32, c.out, -2, 2, g));
    for (const Dims &d : c.in) in.push_back(RandArr(f32, d, -2, 2, g));
    for (const Dims &d : bwd ? c.in : std::vector<Dims>{c.out}) {
      out.push_back(RandArr(f32, d, -1, 1, g));
    }
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      CompareTyped(
          dev,
          name + " case " + std::to_string(k) + " req " + std::to_string(req),
          name.c_str(), c.kv, in, out, std::vector<int>(out.size(), req),
          std::vector<int>(out.size(), -1));
    }
  }
}

const mxct::RegisterCase kRsCaseRegs[] = {
    CASE("_contrib_BilinearResize2D", RsCases(kRs, false, MXC_DEVICE_GPU, g)),
    CASE("_backward__contrib_BilinearResize2D",
         RsCases(kRs, true, MXC_DEVICE_GPU, g)),
    CASE("_contrib_AdaptiveAvgPooling2D",
         RsCases(kAp, false, MXC_DEVICE_GPU, g)),
    CASE("_backward__contrib_AdaptiveAvgPooling2D",
         RsCases(kAp, true, MXC_DEVICE_GPU, g)),
};

// ---- GroupNorm, InstanceNorm (backends/cuda/gn.h) ----

struct GnCase {
  Kv kv;
  Dims data;
  int64_t groups;
};

const std::vector<GnCase> kGroupNorm = {
    {{{"num_groups", "2"}}, {2, 4, 3, 5}, 2},
    {{{"num_groups", "8"}, {"eps", "0.01"}}, {4, 32, 14, 14}, 8},
};
const std::vector<GnCase> kInstanceNorm = {
    {{}, {3, 2, 7}, 2},
    {{{"eps", "1e-5"}}, {2, 16, 9, 9}, 16},
};

// Forward with its hidden outputs (write, add, NULL statistics, the
// visible output alone); the gradient from the CPU forward's results.
void GnCases(const char *op, bool bwd, int dev, std::mt19937 *g) {
  const int f32 = MXC_DTYPE_FLOAT32, W = MXC_REQ_WRITE, A = MXC_REQ_ADD,
            N = MXC_REQ_NULL;
  bool inst = std::string(op) == "InstanceNorm";
  const auto &cases = inst ? kInstanceNorm : kGroupNorm;
  std::string name = bwd ? std::string("_backward_") + op : op;
  for (size_t k = 0; k < cases.size(); ++k) {
    const GnCase &c = cases[k];
    if (SkipOnCpu(dev, c.data)) continue;
    Dims ch = {c.data[1]}, st = {c.data[0], c.groups};
    std::vector<TArr> in = {RandArr(f32, c.data, -2, 2, g),
                            RandArr(f32, ch, 0.5f, 1.5f, g),
                            RandArr(f32, ch, -1, 1, g)};
    std::vector<TArr> fw = {RandArr(f32, c.data, -1, 1, g),
                            RandArr(f32, st, -1, 1, g),
                            RandArr(f32, st, -1, 1, g)};
    std::vector<std::vector<int>> reqs = {{W, W, W}, {A, A, A}, {W, N, A}};
    if (bwd) {
      std::vector<TArr> cin = in;
      ASSERT_EQ(mxct::RunTyped(op, c.kv, MXC_DEVICE_CPU, &cin, &fw, {W, W, W},
                               {-1, -1, -1}),
                MXC_OK)
          << mxc_last_error();
      in = {RandArr(f32, c.data, -1, 1, g),
            in[0],
            in[1],
            in[2],
            fw[0],
            fw[1],
            fw[2]};
      fw = {RandArr(f32, c.data, -1, 1, g), RandArr(f32, ch, -1, 1, g),
            RandArr(f32, ch, -1, 1, g)};
      reqs = {{W, W, W}, {A, A, A}, {N, W, A}};
    }
    for (size_t r = 0; r < reqs.size(); ++r) {
      CompareTyped(
          dev,
          name + " case " + std::to_string(k) + " modes " + std::to_string(r),
          name.c_str(), c.kv, in, fw, reqs[r], {-1, -1, -1});
    }
    if (!bwd) {
      CompareTyped(dev, name + " case " + std::to_string(k) + " visible",
                   name.c_str(), c.kv, in, {fw[0]}, {W}, {-1});
    }
  }
}

// LRN with its hidden norm (several window sizes, a large batch of
// AlexNet's first layer's shape); the gradient from the CPU forward.
void LrnCases(bool bwd, int dev, std::mt19937 *g) {
  const int f32 = MXC_DTYPE_FLOAT32, W = MXC_REQ_WRITE, A = MXC_REQ_ADD,
            N = MXC_REQ_NULL;
  const std::vector<std::pair<Kv, Dims>> cases = {
      {{{"nsize", "3"}, {"alpha", "0.1"}, {"knorm", "1"}}, {2, 7, 3, 4}},
      {{{"nsize", "5"}}, {8, 96, 27, 27}},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Kv &kv = cases[k].first;
    const Dims &d = cases[k].second;
    if (SkipOnCpu(dev, d)) continue;
    std::vector<TArr> in = {RandArr(f32, d, -2, 2, g)};
    std::vector<TArr> fw = {RandArr(f32, d, -1, 1, g),
                            RandArr(f32, d, -1, 1, g)};
    std::string name = bwd ? "_backward_LRN" : "LRN";
    if (!bwd) {
      for (const std::vector<int> &req :
           {std::vector<int>{W, W}, std::vector<int>{A, A},
            std::vector<int>{W, N}}) {
        CompareTyped(dev, name + " case " + std::to_string(k), "LRN", kv, in,
                     fw, req, {-1, -1}, 2);
      }
      continue;
    }
    std::vector<TArr> cin = in;
    ASSERT_EQ(
        mxct::RunTyped("LRN", kv, MXC_DEVICE_CPU, &cin, &fw, {W, W}, {-1, -1}),
        MXC_OK)
        << mxc_last_error();
    std::vector<TArr> bin = {RandArr(f32, d, -1, 1, g), in[0], fw[0], fw[1]};
    for (int req : {W, A}) {
      CompareTyped(dev, name + " case " + std::to_string(k), name.c_str(), kv,
                   bin, {RandArr(f32, d, -1, 1, g)}, {req}, {-1}, 2);
    }
  }
}

const mxct::RegisterCase kGnCaseRegs[] = {
    CASE("GroupNorm", GnCases("GroupNorm", false, MXC_DEVICE_GPU, g)),
    CASE("_backward_GroupNorm", GnCases("GroupNorm", true, MXC_DEVICE_GPU, g)),
    CASE("InstanceNorm", GnCases("InstanceNorm", false, MXC_DEVICE_GPU, g)),
    CASE("_backward_InstanceNorm",
         GnCases("InstanceNorm", true, MXC_DEVICE_GPU, g)),
    CASE("LRN", LrnCases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_LRN", LrnCases(true, MXC_DEVICE_GPU, g)),
};

// On every machine: the cases are valid calls, CPU against CPU (bitwise
// equal there), so a GPU run does not spend its minutes on a broken case.
TEST(GpuConformanceFill, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(19);
  for (const char *op :
       {"_zeros", "_ones", "_full", "zeros_like", "ones_like"}) {
    ValueCases(op, MXC_DEVICE_CPU, &g);
  }
  ArangeCases(MXC_DEVICE_CPU, &g);
  EyeCases(MXC_DEVICE_CPU, &g);
  AddNCases(MXC_DEVICE_CPU, &g);
  for (const char *op : {"BlockGrad", "MakeLoss", "make_loss"}) {
    CopyCases(op, MXC_DEVICE_CPU, &g);
  }
  MakeLossGradCases(MXC_DEVICE_CPU, &g);
  for (const LossCase &c : kLoss) LossCases(c.op, MXC_DEVICE_CPU, &g);
  UpCases(false, MXC_DEVICE_CPU, &g);
  UpCases(true, MXC_DEVICE_CPU, &g);
  for (const char *op : {kRs, kAp}) {
    RsCases(op, false, MXC_DEVICE_CPU, &g);
    RsCases(op, true, MXC_DEVICE_CPU, &g);
  }
  for (const char *op : {"GroupNorm", "InstanceNorm"}) {
    GnCases(op, false, MXC_DEVICE_CPU, &g);
    GnCases(op, true, MXC_DEVICE_CPU, &g);
  }
  LrnCases(false, MXC_DEVICE_CPU, &g);
  LrnCases(true, MXC_DEVICE_CPU, &g);
}

TEST(GpuConformanceFill, TheComparisonCanFail) {
  TArr cpu = {MXC_DTYPE_FLOAT32, {2}, mxct::ToBytes(MXC_DTYPE_FLOAT32, {1, 2})};
  TArr gpu = cpu;
  gpu.b = mxct::ToBytes(MXC_DTYPE_FLOAT32, {1, std::nextafter(2.f, 3.f)});
  EXPECT_NONFATAL_FAILURE(mxct::ExpectBits("x", gpu, cpu), "on the GPU");
  mxct::ExpectBits("x", gpu, cpu, 1);  // one ulp: within 1
  gpu.b = mxct::ToBytes(MXC_DTYPE_FLOAT32, {1, 2.00001f});
  EXPECT_NONFATAL_FAILURE(mxct::ExpectBits("x", gpu, cpu, 2), "on the GPU");
  gpu.b = mxct::PoisonBytes(MXC_DTYPE_FLOAT32, 2);
  EXPECT_NONFATAL_FAILURE(mxct::ExpectBits("x", gpu, cpu, 2), "never written");
}

}  // namespace
