// Conformance cases of the cuDNN kernels (backends/cuda/dnn.h):
// Convolution, Deconvolution, Pooling, softmax, log_softmax, BatchNorm
// (its moving statistics too), RNN and their _backward_ operators on the GPU
// against the CPU operators, same random inputs, GPU outputs poisoned
// before a write (an element never written fails), write and add modes,
// each output of the backward in its own mode, an empty batch.
//
// Tolerance (float32): |gpu - cpu| <= 1e-4 * max(1, max |cpu|) per output.
// Both sides sum the same products in another order (cuDNN's implicit
// GEMM, FFT or Winograd algorithms against the CPU's im2col GEMM), so the
// error scales with the magnitude of the sums, not of each element; TF32
// is off (CUDNN_FMA_MATH), which would need ~1e-3.
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
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::Poison;

using mxct::LastError;
using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

struct ConvCase {
  Dims data, weight, out;
  Kv params;
  bool bias;
};

// Shapes written out (not derived) so a wrong output shape on either
// side fails at creation or invoke.
const std::vector<ConvCase> kConv = {
    {{2, 3, 7, 5}, {4, 3, 3, 2}, {2, 4, 5, 4},
     {{"kernel", "(3,2)"}, {"num_filter", "4"}}, true},
    {{2, 4, 9, 8}, {6, 2, 3, 3}, {2, 6, 5, 8},
     {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "2"},
      {"stride", "(2,1)"}, {"pad", "(1,2)"}, {"dilate", "(1,2)"}},
     true},
    {{1, 6, 5, 11}, {3, 2, 2, 3}, {1, 3, 4, 4},
     {{"kernel", "(2,3)"}, {"num_filter", "3"}, {"num_group", "3"},
      {"stride", "(1,3)"}, {"pad", "(0,1)"}, {"no_bias", "true"}},
     false},
    {{3, 2, 13}, {5, 2, 4}, {3, 5, 7},
     {{"kernel", "(4,)"}, {"num_filter", "5"}, {"stride", "(2,)"},
      {"pad", "(3,)"}, {"dilate", "(2,)"}},
     true},
    {{2, 4, 5, 6, 4}, {4, 2, 2, 3, 2}, {2, 4, 5, 2, 5},
     {{"kernel", "(2,3,2)"}, {"num_filter", "4"}, {"num_group", "2"},
      {"stride", "(1,2,1)"}, {"pad", "(1,0,1)"}, {"dilate", "(2,1,1)"}},
     true},
    // A ResNet-like layer: enough work for cuDNN to pick other algorithms.
    {{4, 16, 14, 14}, {32, 16, 3, 3}, {4, 32, 14, 14},
     {{"kernel", "(3,3)"}, {"num_filter", "32"}, {"pad", "(1,1)"}}, true},
    // An empty batch: no output element; the weight and bias gradients
    // are zeros.
    {{0, 3, 5, 5}, {2, 3, 3, 3}, {0, 2, 3, 3},
     {{"kernel", "(3,3)"}, {"num_filter", "2"}}, true},
};

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

Vec Random(const Dims &d, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
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

// Runs op on one device; outs hold the initial values, get the results.
// in_after (optional): the inputs read back after the call (operators
// that update inputs in place, such as BatchNorm's moving statistics).
int Run(const char *name, const Kv &kv, int dev, const std::vector<Dims> &in_d,
        const std::vector<Vec> &in, const std::vector<Dims> &out_d,
        std::vector<Vec> *outs, const std::vector<int> &req,
        std::vector<Vec> *in_after = nullptr) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> keys, vals;
  for (const auto &p : kv) keys.push_back(p.first.c_str());
  for (const auto &p : kv) vals.push_back(p.second.c_str());
  std::vector<mxc_ndarray> ins, os;
  for (size_t i = 0; i < in.size(); ++i) {
    ins.push_back(Filled(in_d[i], dev, in[i]));
  }
  for (size_t i = 0; i < outs->size(); ++i) {
    os.push_back(Filled(out_d[i], dev, (*outs)[i]));
  }
  int rc = mxc_op_invoke(op, keys.data(), vals.data(), (int)keys.size(),
                         ins.data(), (int)ins.size(), os.data(),
                         (int)os.size(), req.data());
  for (size_t i = 0; rc == MXC_OK && i < os.size(); ++i) {
    rc = mxc_ndarray_wait_to_read(os[i]);
    if (rc == MXC_OK && !(*outs)[i].empty()) {
      rc = mxc_ndarray_copy_to_host(os[i], (*outs)[i].data(),
                                    (*outs)[i].size() * 4);
    }
  }
  if (in_after) *in_after = in;
  for (size_t i = 0; in_after && rc == MXC_OK && i < ins.size(); ++i) {
    if ((*in_after)[i].empty()) continue;
    rc = mxc_ndarray_copy_to_host(ins[i], (*in_after)[i].data(),
                                  (*in_after)[i].size() * 4);
  }
  for (mxc_ndarray a : ins) mxc_ndarray_free(a);
  for (mxc_ndarray a : os) mxc_ndarray_free(a);
  return rc;
}

void ExpectClose(const std::string &what, const Vec &gpu, const Vec &cpu) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  double scale = 1;
  for (float v : cpu) scale = std::fmax(scale, std::fabs(v));
  for (size_t i = 0; i < gpu.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &gpu[i], 4);
    if (bits == mxct::kPoisonBits) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    if (!(std::fabs((double)gpu[i] - cpu[i]) <= 1e-4 * scale)) {
      ADD_FAILURE() << what << ": element " << i << " is " << gpu[i]
                    << " on the GPU, " << cpu[i] << " on the CPU";
      return;
    }
  }
}

// One call on both devices: inputs in, outputs starting from `base` (the
// GPU's poisoned where written), compared output by output.
// `dev` is the GPU, or the CPU when the host test checks the cases.
void Compare(int dev, const std::string &what, const char *op,
             const Kv &params, const std::vector<Dims> &in_d,
             const std::vector<Vec> &in, const std::vector<Dims> &out_d,
             const std::vector<Vec> &base, const std::vector<int> &req) {
  std::vector<Vec> cpu = base, gpu = base;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (req[i] != MXC_REQ_ADD) gpu[i].assign(gpu[i].size(), Poison());
  }
  ASSERT_EQ(Run(op, params, MXC_DEVICE_CPU, in_d, in, out_d, &cpu, req),
            MXC_OK)
      << what << " on the CPU: " << LastError();
  ASSERT_EQ(Run(op, params, dev, in_d, in, out_d, &gpu, req),
            MXC_OK)
      << what << " on the GPU: " << LastError();
  for (size_t i = 0; i < gpu.size(); ++i) {
    ExpectClose(what + " output " + std::to_string(i), gpu[i], cpu[i]);
  }
}

// Deconvolution: stride, pad, adj, target_shape, groups, dilation, 1-D
// to 3-D, an empty batch (weight (C, num_filter / num_group, kernel)).
const std::vector<ConvCase> kDeconv = {
    {{2, 3, 4, 5}, {3, 4, 3, 2}, {2, 4, 6, 6},
     {{"kernel", "(3,2)"}, {"num_filter", "4"}}, false},
    {{2, 4, 5, 4}, {4, 3, 3, 3}, {2, 6, 10, 9},
     {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "2"},
      {"stride", "(2,2)"}, {"pad", "(1,0)"}, {"adj", "(1,0)"},
      {"no_bias", "false"}},
     true},
    {{1, 2, 6, 5}, {2, 3, 3, 2}, {1, 3, 13, 13},
     {{"kernel", "(3,2)"}, {"num_filter", "3"}, {"stride", "(2,3)"},
      {"dilate", "(2,1)"}, {"target_shape", "(13,13)"}},
     false},
    {{3, 2, 7}, {2, 5, 4}, {3, 5, 20},
     {{"kernel", "(4,)"}, {"num_filter", "5"}, {"stride", "(3,)"},
      {"pad", "(2,)"}, {"adj", "(2,)"}, {"no_bias", "false"}},
     true},
    {{2, 4, 3, 4, 2}, {4, 1, 2, 3, 2}, {2, 4, 6, 4, 2},
     {{"kernel", "(2,3,2)"}, {"num_filter", "4"}, {"num_group", "4"},
      {"stride", "(2,1,2)"}, {"pad", "(0,1,1)"}, {"no_bias", "false"}},
     true},
    {{0, 3, 3, 3}, {3, 2, 3, 3}, {0, 2, 5, 5},
     {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"no_bias", "false"}}, true},
};

// The forward of Convolution or Deconvolution (op) over its cases; the
// bias has one value per output channel.
void ConvLikeForward(const char *op, const std::vector<ConvCase> &cases,
                     int dev, std::mt19937 *g) {
  for (size_t k = 0; k < cases.size(); ++k) {
    const ConvCase &c = cases[k];
    std::vector<Dims> in_d = {c.data, c.weight};
    std::vector<Vec> in = {Random(c.data, g), Random(c.weight, g)};
    if (c.bias) in_d.push_back({c.out[1]}), in.push_back(Random({c.out[1]}, g));
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Compare(dev, what, op, c.params, in_d, in, {c.out}, {Random(c.out, g)},
              {req});
    }
  }
}

// The backward (op: _backward_Convolution or _backward_Deconvolution).
void ConvLikeBackward(const char *op, const std::vector<ConvCase> &cases,
                      int dev, std::mt19937 *g) {
  for (size_t k = 0; k < cases.size(); ++k) {
    const ConvCase &c = cases[k];
    std::vector<Dims> in_d = {c.out, c.data, c.weight};
    std::vector<Dims> out_d = {c.data, c.weight};
    std::vector<Vec> in = {Random(c.out, g), Random(c.data, g),
                           Random(c.weight, g)};
    if (c.bias) {
      Dims b = {c.out[1]};
      in_d.push_back(b), out_d.push_back(b), in.push_back(Random(b, g));
    }
    std::vector<Vec> base;
    for (const Dims &d : out_d) base.push_back(Random(d, g));
    // All written, all added, then each output in another mode.
    std::vector<std::vector<int>> reqs = {
        {MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE},
        {MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD},
        {MXC_REQ_ADD, MXC_REQ_WRITE, MXC_REQ_ADD},
        {MXC_REQ_WRITE, MXC_REQ_ADD, MXC_REQ_WRITE}};
    for (auto req : reqs) {
      req.resize(out_d.size());
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         " req " + std::to_string(req[0]) +
                         std::to_string(req[1]);
      Compare(dev, what, op, c.params, in_d, in, out_d, base, req);
    }
  }
}

void ConvForward(int dev, std::mt19937 *g) {
  ConvLikeForward("Convolution", kConv, dev, g);
}
void ConvBackward(int dev, std::mt19937 *g) {
  ConvLikeBackward("_backward_Convolution", kConv, dev, g);
}
void DeconvForward(int dev, std::mt19937 *g) {
  ConvLikeForward("Deconvolution", kDeconv, dev, g);
}
void DeconvBackward(int dev, std::mt19937 *g) {
  ConvLikeBackward("_backward_Deconvolution", kDeconv, dev, g);
}

const mxct::RegisterCase kDeconvCase("Deconvolution", [](std::mt19937 *g) {
  DeconvForward(MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kDeconvBwdCase("_backward_Deconvolution",
                                        [](std::mt19937 *g) {
                                          DeconvBackward(MXC_DEVICE_GPU, g);
                                        });

// ---- pooling ----

struct PoolCase {
  Dims data, out;
  Kv params;
};

// Every mode cuDNN computes as the CPU does (backends/cuda/dnn_plan.h).
const std::vector<PoolCase> kPool = {
    {{2, 3, 7, 6}, {2, 3, 3, 3}, {{"kernel", "(3,2)"}, {"stride", "(2,2)"}}},
    {{1, 2, 9, 8}, {1, 2, 5, 10},
     {{"kernel", "(3,3)"}, {"stride", "(2,1)"}, {"pad", "(1,2)"},
      {"pool_type", "avg"}}},
    {{1, 2, 9, 8}, {1, 2, 5, 10},
     {{"kernel", "(3,3)"}, {"stride", "(2,1)"}, {"pad", "(1,2)"},
      {"pool_type", "avg"}, {"count_include_pad", "false"}}},
    {{2, 2, 8, 7}, {2, 2, 9, 7}, {{"kernel", "(2,3)"}, {"pad", "(1,1)"}}},
    {{3, 2, 11}, {3, 2, 6},
     {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"},
      {"pool_type", "avg"}, {"count_include_pad", "false"}}},
    {{2, 2, 5, 6, 4}, {2, 2, 6, 3, 2},
     {{"kernel", "(2,3,2)"}, {"stride", "(1,2,2)"}, {"pad", "(1,1,0)"}}},
    {{2, 3, 5, 7},
     {2, 3, 1, 1},
     {{"global_pool", "true"}, {"pool_type", "avg"}}},
    {{2, 3, 5, 7}, {2, 3, 1, 1}, {{"global_pool", "true"}}},
    {{2, 3, 5, 7}, {2, 3, 2, 3},
     {{"kernel", "(3,3)"}, {"stride", "(2,2)"},
      {"pooling_convention", "full"}}},
    // A ResNet stem pooling.
    {{4, 8, 32, 32}, {4, 8, 16, 16},
     {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}}},
};

void PoolForward(int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kPool.size(); ++k) {
    const PoolCase &c = kPool[k];
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = "Pooling case " + std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Compare(dev, what, "Pooling", c.params, {c.data}, {Random(c.data, g)},
              {c.out}, {Random(c.out, g)}, {req});
    }
  }
}

void PoolBackward(int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kPool.size(); ++k) {
    const PoolCase &c = kPool[k];
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = "_backward_Pooling case " + std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Compare(dev, what, "_backward_Pooling", c.params, {c.out, c.data},
              {Random(c.out, g), Random(c.data, g)}, {c.data},
              {Random(c.data, g)}, {req});
    }
  }
}

// ---- softmax, log_softmax ----

struct SoftmaxCase {
  Dims data;
  Kv params;
};

// Axes first, middle and last; dtype set (the backward then also takes
// the data, before the output); one wide row.
const std::vector<SoftmaxCase> kSoftmax = {
    {{4, 7}, {}},
    {{3, 5, 4}, {{"axis", "1"}}},
    {{3, 5, 4}, {{"axis", "0"}}},
    {{2, 3, 4, 5}, {{"axis", "-2"}, {"dtype", "float32"}}},
    {{16, 1000}, {}},
};

void SoftmaxCases(const char *op, int dev, bool bwd, std::mt19937 *g) {
  for (size_t k = 0; k < kSoftmax.size(); ++k) {
    const SoftmaxCase &c = kSoftmax[k];
    bool with_data = bwd && c.params.size() > 1;
    std::vector<Dims> in_d(bwd ? 2 + with_data : 1, c.data);
    std::vector<Vec> in;
    for (size_t i = 0; i < in_d.size(); ++i) in.push_back(Random(c.data, g));
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Compare(dev, what, op, c.params, in_d, in, {c.data},
              {Random(c.data, g)}, {req});
    }
  }
}

const mxct::RegisterCase kSoftmaxCases[] = {
    {"softmax",
     [](std::mt19937 *g) {
       SoftmaxCases("softmax", MXC_DEVICE_GPU, false, g);
     }},
    {"_backward_softmax",
     [](std::mt19937 *g) {
       SoftmaxCases("_backward_softmax", MXC_DEVICE_GPU, true, g);
     }},
    {"log_softmax",
     [](std::mt19937 *g) {
       SoftmaxCases("log_softmax", MXC_DEVICE_GPU, false, g);
     }},
    {"_backward_log_softmax",
     [](std::mt19937 *g) {
       SoftmaxCases("_backward_log_softmax", MXC_DEVICE_GPU, true, g);
     }},
};

// ---- batch norm ----

struct BnCase {
  Dims data;
  int64_t channels;
  Kv params;
  bool train;
};

// Training and inference, fix_gamma both ways, another axis, global
// statistics in training mode, a ResNet-like layer.
const std::vector<BnCase> kBn = {
    {{4, 3, 5, 2}, 3, {{"fix_gamma", "false"}}, true},
    {{4, 3, 5, 2}, 3, {}, true},
    {{6, 5}, 5, {{"fix_gamma", "false"}, {"momentum", "0.7"}}, true},
    {{2, 3, 4}, 4, {{"axis", "-1"}, {"fix_gamma", "false"}, {"eps", "1e-4"}},
     true},
    {{4, 3, 5, 2}, 3, {{"fix_gamma", "false"}}, false},
    {{4, 3, 5, 2}, 3,
     {{"fix_gamma", "false"}, {"use_global_stats", "true"}}, true},
    {{8, 64, 14, 14}, 64, {{"fix_gamma", "false"}}, true},
};

// Positive, as a variance (or an inverse std) is.
Vec Positive(const Dims &d, std::mt19937 *g) {
  Vec v = Random(d, g);
  for (auto &x : v) x = std::fabs(x) + 0.5f;
  return v;
}

// The forward on both devices: outputs (out, mean, var) in the modes
// given, and the moving statistics after the call.
void BnForwardCase(int dev, size_t k, const std::vector<int> &req,
                   std::mt19937 *g) {
  const BnCase &c = kBn[k];
  Dims ch = {c.channels};
  std::vector<Dims> in_d = {c.data, ch, ch, ch, ch}, out_d = {c.data, ch, ch};
  std::vector<Vec> in = {Random(c.data, g), Random(ch, g), Random(ch, g),
                         Random(ch, g), Positive(ch, g)};
  std::vector<Vec> base = {Random(c.data, g), Random(ch, g), Random(ch, g)};
  std::vector<Vec> cpu = base, gpu = base, cpu_in, gpu_in;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (req[i] == MXC_REQ_WRITE) gpu[i].assign(gpu[i].size(), Poison());
  }
  std::string what = "BatchNorm case " + std::to_string(k) + " req " +
                     std::to_string(req[0]) + std::to_string(req[1]);
  int prev = 0;
  mxc_set_training(c.train, &prev);
  int rc_cpu = Run("BatchNorm", c.params, MXC_DEVICE_CPU, in_d, in, out_d,
                   &cpu, req, &cpu_in);
  std::string cpu_err = LastError();
  int rc_gpu = Run("BatchNorm", c.params, dev, in_d, in, out_d, &gpu, req,
                   &gpu_in);
  std::string gpu_err = LastError();
  mxc_set_training(prev, nullptr);
  ASSERT_EQ(rc_cpu, MXC_OK) << what << " on the CPU: " << cpu_err;
  ASSERT_EQ(rc_gpu, MXC_OK) << what << " on the GPU: " << gpu_err;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (req[i] == MXC_REQ_NULL) continue;
    ExpectClose(what + " output " + std::to_string(i), gpu[i], cpu[i]);
  }
  ExpectClose(what + " moving_mean", gpu_in[3], cpu_in[3]);
  ExpectClose(what + " moving_var", gpu_in[4], cpu_in[4]);
}

void BnForward(int dev, std::mt19937 *g) {
  const std::vector<std::vector<int>> reqs = {
      {MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE},
      {MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD},
      {MXC_REQ_NULL, MXC_REQ_ADD, MXC_REQ_WRITE}};
  for (size_t k = 0; k < kBn.size(); ++k) {
    for (const auto &req : reqs) BnForwardCase(dev, k, req, g);
  }
}

void BnBackward(int dev, std::mt19937 *g) {
  const std::vector<std::vector<int>> reqs = {
      {MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE},
      {MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD},
      {MXC_REQ_ADD, MXC_REQ_WRITE, MXC_REQ_ADD}};
  for (size_t k = 0; k < kBn.size(); ++k) {
    const BnCase &c = kBn[k];
    Dims ch = {c.channels};
    std::vector<Dims> in_d = {c.data, c.data, ch, ch, ch, ch, c.data, ch, ch};
    std::vector<Vec> in = {Random(c.data, g), Random(c.data, g),
                           Random(ch, g),     Random(ch, g),
                           Random(ch, g),     Positive(ch, g),
                           Random(c.data, g), Random(ch, g),
                           Positive(ch, g)};
    std::vector<Dims> out_d = {c.data, ch, ch};
    std::vector<Vec> base = {Random(c.data, g), Random(ch, g), Random(ch, g)};
    int prev = 0;
    mxc_set_training(c.train, &prev);
    for (const auto &req : reqs) {
      std::string what = "_backward_BatchNorm case " + std::to_string(k) +
                         " req " + std::to_string(req[0]) +
                         std::to_string(req[1]);
      Compare(dev, what, "_backward_BatchNorm", c.params, in_d, in, out_d,
              base, req);
    }
    mxc_set_training(prev, nullptr);
  }
}

const mxct::RegisterCase kBnCase("BatchNorm", [](std::mt19937 *g) {
  BnForward(MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kBnBwdCase("_backward_BatchNorm",
                                    [](std::mt19937 *g) {
                                      BnBackward(MXC_DEVICE_GPU, g);
                                    });

const mxct::RegisterCase kPoolCase("Pooling", [](std::mt19937 *g) {
  PoolForward(MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kPoolBwdCase("_backward_Pooling",
                                      [](std::mt19937 *g) {
                                        PoolBackward(MXC_DEVICE_GPU, g);
                                      });

const mxct::RegisterCase kConvCase("Convolution", [](std::mt19937 *g) {
  ConvForward(MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kConvBwdCase("_backward_Convolution",
                                      [](std::mt19937 *g) {
                                        ConvBackward(MXC_DEVICE_GPU, g);
                                      });

// ---- RNN (backends/cuda/dnn_rnn.h) ----
//
// Every mode, one and two layers, one and two directions, with and
// without state outputs, an empty batch. The backward's inputs are a CPU
// forward's in training mode (its hidden reserve included: the CPU
// backward reads it; the GPU's recomputes the forward in cuDNN). The
// tolerance is the suite's: each output is a chain of at most T steps of
// float32 products of length I or D*H (cuDNN's GEMMs sum in another
// order); the weight gradients sum T*N of those.

struct RnnCase {
  const char *mode;
  int64_t T, N, I, H, L;
  bool bi, states;
};

const std::vector<RnnCase> kRnn = {
    {"rnn_relu", 5, 3, 4, 6, 2, true, true},
    {"rnn_tanh", 4, 2, 3, 5, 1, false, false},
    {"lstm", 5, 3, 4, 6, 2, true, true},
    {"lstm", 7, 4, 8, 16, 1, false, false},
    {"gru", 5, 3, 4, 6, 2, true, true},
    {"gru", 3, 2, 5, 4, 3, false, true},
    {"lstm", 4, 0, 3, 4, 2, true, true},  // an empty batch
};

Kv RnnParams(const RnnCase &c) {
  return {{"mode", c.mode},
          {"state_size", std::to_string(c.H)},
          {"num_layers", std::to_string(c.L)},
          {"bidirectional", c.bi ? "true" : "false"},
          {"state_outputs", c.states ? "true" : "false"}};
}

struct RnnShapes {
  std::vector<Dims> in, vis;  // forward inputs, visible outputs
  Dims reserve;
};

// The packed vector's and the hidden reserve's sizes as ops/linalg/rnn.c
// lays them out.
RnnShapes RnnShapesOf(const RnnCase &c) {
  bool lstm = std::string(c.mode) == "lstm", gru = c.mode[0] == 'g';
  int64_t G = lstm ? 4 : gru ? 3 : 1, D = c.bi ? 2 : 1, np = 0;
  for (int64_t l = 0; l < c.L; ++l) {
    np += D * G * c.H * ((l ? D * c.H : c.I) + c.H + 2);
  }
  Dims st = {c.L * D, c.N, c.H};
  RnnShapes s;
  s.in = {{c.T, c.N, c.I}, {np}, st};
  if (lstm) s.in.push_back(st);
  s.vis = {{c.T, c.N, D * c.H}};
  if (c.states) s.vis.push_back(st);
  if (c.states && lstm) s.vis.push_back(st);
  int64_t tn = c.T * c.N;
  s.reserve = {tn * c.H * (G + 2) * c.L * D + tn * 2 * D * c.H * (c.L - 1)};
  return s;
}

std::vector<Vec> RandomAll(const std::vector<Dims> &d, std::mt19937 *g) {
  std::vector<Vec> v;
  for (const Dims &x : d) v.push_back(Random(x, g));
  return v;
}

void RnnForward(int dev, std::mt19937 *g) {
  const std::vector<int> write = {MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE};
  const std::vector<int> add = {MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD};
  for (size_t k = 0; k < kRnn.size(); ++k) {
    RnnShapes s = RnnShapesOf(kRnn[k]);
    std::vector<Vec> in = RandomAll(s.in, g), base = RandomAll(s.vis, g);
    for (const auto *req : {&write, &add}) {
      std::vector<int> r(req->begin(), req->begin() + s.vis.size());
      std::string what = "RNN case " + std::to_string(k) + " req " +
                         std::to_string(r[0]);
      Compare(dev, what, "RNN", RnnParams(kRnn[k]), s.in, in, s.vis, base, r);
    }
  }
}

void RnnBackwardCase(int dev, size_t k, std::mt19937 *g) {
  const RnnCase &c = kRnn[k];
  RnnShapes s = RnnShapesOf(c);
  std::vector<Vec> in = RandomAll(s.in, g);
  std::vector<Dims> fwd_out = s.vis;
  fwd_out.push_back(s.reserve);
  std::vector<Vec> outs;
  for (const Dims &d : fwd_out) outs.push_back(Vec((size_t)Numel(d)));
  std::vector<int> wr(fwd_out.size(), MXC_REQ_WRITE);
  ASSERT_EQ(Run("RNN", RnnParams(c), MXC_DEVICE_CPU, s.in, in, fwd_out, &outs,
                wr),
            MXC_OK)
      << "RNN case " << k << " training forward: " << LastError();
  std::vector<Dims> in_d = s.vis;
  std::vector<Vec> bin = RandomAll(s.vis, g);
  in_d.insert(in_d.end(), s.in.begin(), s.in.end());
  bin.insert(bin.end(), in.begin(), in.end());
  in_d.insert(in_d.end(), fwd_out.begin(), fwd_out.end());
  bin.insert(bin.end(), outs.begin(), outs.end());
  const std::vector<Dims> &out_d = s.in;  // the gradients' shapes
  std::vector<Vec> base = RandomAll(out_d, g);
  const std::vector<std::vector<int>> reqs = {
      {MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE},
      {MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD},
      {MXC_REQ_ADD, MXC_REQ_WRITE, MXC_REQ_ADD, MXC_REQ_WRITE}};
  for (const auto &rq : reqs) {
    std::vector<int> r(rq.begin(), rq.begin() + out_d.size());
    std::string what = "_backward_RNN case " + std::to_string(k) + " req " +
                       std::to_string(r[0]) + std::to_string(r[1]);
    Compare(dev, what, "_backward_RNN", RnnParams(c), in_d, bin, out_d, base,
            r);
  }
}

void RnnBackward(int dev, std::mt19937 *g) {
  int prev = 0;
  mxc_set_training(1, &prev);
  for (size_t k = 0; k < kRnn.size(); ++k) RnnBackwardCase(dev, k, g);
  mxc_set_training(prev, nullptr);
}

const mxct::RegisterCase kRnnCase("RNN", [](std::mt19937 *g) {
  RnnForward(MXC_DEVICE_GPU, g);
});
const mxct::RegisterCase kRnnBwdCase("_backward_RNN", [](std::mt19937 *g) {
  RnnBackward(MXC_DEVICE_GPU, g);
});

// On every machine: the cases themselves (shapes, parameters, input
// order, modes) are valid calls, checked CPU against CPU, so a GPU run
// does not spend its minutes on a broken case; and the comparison fails
// on a poisoned element and on an error beyond the tolerance.
TEST(GpuConformanceDnn, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(5);
  ConvForward(MXC_DEVICE_CPU, &g);
  ConvBackward(MXC_DEVICE_CPU, &g);
  DeconvForward(MXC_DEVICE_CPU, &g);
  DeconvBackward(MXC_DEVICE_CPU, &g);
  PoolForward(MXC_DEVICE_CPU, &g);
  PoolBackward(MXC_DEVICE_CPU, &g);
  BnForward(MXC_DEVICE_CPU, &g);
  BnBackward(MXC_DEVICE_CPU, &g);
  RnnForward(MXC_DEVICE_CPU, &g);
  RnnBackward(MXC_DEVICE_CPU, &g);
  for (const char *op : {"softmax", "log_softmax"}) {
    SoftmaxCases(op, MXC_DEVICE_CPU, false, &g);
    SoftmaxCases((std::string("_backward_") + op).c_str(), MXC_DEVICE_CPU,
                 true, &g);
  }
}

TEST(GpuConformanceDnn, TheComparisonCanFail) {
  Vec cpu = {1.f, -2.f, 3.f};
  EXPECT_NONFATAL_FAILURE(ExpectClose("x", {1.f, Poison(), 3.f}, cpu),
                          "never written");
  EXPECT_NONFATAL_FAILURE(ExpectClose("x", {1.f, -2.f, 3.001f}, cpu),
                          "on the GPU");
  ExpectClose("x", {1.f, -2.f, 3.0001f}, cpu);
}

}  // namespace
