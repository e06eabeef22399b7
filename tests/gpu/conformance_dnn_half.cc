// Conformance of the cuDNN kernels in float16 and bfloat16
// (backends/cuda/dnn_*.c with dnn_plan.h's types): Convolution,
// Deconvolution, Pooling, softmax, log_softmax, BatchNorm and their
// _backward_ operators on the GPU against the CPU operators (which widen
// half arrays to float32, run the float32 kernel and round once,
// core/op/half_compute.h; softmax rounds its double result once), same
// inputs, GPU outputs poisoned before a write (a half NaN with a payload,
// half_test_util.h), write and add modes, every output in its own mode.
// BatchNorm: half data, float32 gamma, beta and statistics, as the CPU
// operator types them; training, inference and global statistics.
//
// Tolerances, per output dtype, at the output's scale s = max(1, max
// |cpu|) over the output:
// - half outputs: 2 units of the dtype at s (2 * 2^-10 * s for float16,
//   2 * 2^-7 * s for bfloat16). Both sides compute in float32 (cuDNN's
//   float32 compute type; the CPU's float32 kernel), in another summation
//   order, and round once, so a value near a rounding boundary lands one
//   unit apart; a convolution's bias and an add-mode output are a second
//   rounding on the GPU (cuDNN adds the old value with beta inside the
//   convolution, then cudnnAddTensor adds the bias), the CPU rounds the
//   whole sum once: half a unit more. The float32 summation-order error
//   (about 1e-6 of the terms' size) is far below a half unit. Max pooling
//   is exact on both sides; the rule covers it too.
// - float32 outputs (BatchNorm's mean and inverse std, moving statistics,
//   gamma and beta gradients): 1e-4 * s, as the float32 cases
//   (conformance_dnn.cc): sums over the same half values widened, in
//   another order.
// A wrong term, axis or dtype moves a result by far more (a half input
// read as float32 gives garbage; statistics rounded to half miss by
// 2^-11 relative: tests/gpu:test_cuda_dnn_plan's CudaDnnTypes shows the
// plan's types matter).
//
// cuDNN 9's legacy API documents half data (CUDNN_DATA_HALF with a float
// compute type, PSEUDO_HALF_CONFIG) for these routines; bfloat16
// (PSEUDO_BFLOAT16_CONFIG) for convolutions on compute capability 8.0 and
// newer. Whether its pooling, softmax, batch norm and cudnnAddTensor take
// bfloat16 is not known here: a refusal surfaces as the kernel's
// MXC_ERR_UNSUPPORTED naming the cuDNN call, and this test reports it.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "core/base/gpu.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/half_test_util.h"

namespace {

using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

const int kF32 = MXC_DTYPE_FLOAT32;

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// One array of a call: dims, dtype, values.
struct Arr {
  Dims d;
  int dt;
  Vec v;
};

mxc_ndarray Filled(const Arr &a, int dev) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(a.d.data(), (int)a.d.size(), a.dt, dev, 0, 0,
                               &h),
            MXC_OK)
      << mxct::LastError();
  std::vector<uint8_t> b = mxct::ToBytes(a.dt, a.v);
  if (h && !b.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, b.data(), b.size()), MXC_OK)
        << mxct::LastError();
  }
  return h;
}

Vec Read(mxc_ndarray h, const Arr &a, int *rc) {
  std::vector<uint8_t> b(a.v.size() * mxct::ElemSize(a.dt));
  if (*rc == MXC_OK && !b.empty()) {
    *rc = mxc_ndarray_copy_to_host(h, b.data(), b.size());
  }
  return mxct::FromBytes(a.dt, b);
}

// Runs op on one device: outs hold the initial values and get the
// results; *ins_after (optional) the inputs after the call (BatchNorm's
// moving statistics). The status.
int Run(const std::string &op, const Kv &kv, int dev,
        const std::vector<Arr> &ins, std::vector<Arr> *outs,
        const std::vector<int> &req, std::vector<Arr> *ins_after = nullptr) {
  mxc_op h = nullptr;
  if (mxc_op_find(op.c_str(), &h) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> keys, vals;
  for (const auto &p : kv) keys.push_back(p.first.c_str());
  for (const auto &p : kv) vals.push_back(p.second.c_str());
  std::vector<mxc_ndarray> i_h, o_h;
  for (const Arr &a : ins) i_h.push_back(Filled(a, dev));
  for (const Arr &a : *outs) o_h.push_back(Filled(a, dev));
  int rc = mxc_op_invoke(h, keys.data(), vals.data(), (int)keys.size(),
                         i_h.data(), (int)i_h.size(), o_h.data(),
                         (int)o_h.size(), req.data());
  for (size_t i = 0; rc == MXC_OK && i < o_h.size(); ++i) {
    rc = mxc_ndarray_wait_to_read(o_h[i]);
    (*outs)[i].v = Read(o_h[i], (*outs)[i], &rc);
  }
  if (ins_after) *ins_after = ins;
  for (size_t i = 0; ins_after && rc == MXC_OK && i < i_h.size(); ++i) {
    (*ins_after)[i].v = Read(i_h[i], ins[i], &rc);
  }
  for (mxc_ndarray a : i_h) mxc_ndarray_free(a);
  for (mxc_ndarray a : o_h) mxc_ndarray_free(a);
  return rc;
}

// The tolerance of the header, per the output's dtype.
void ExpectClose(const std::string &what, const Arr &gpu, const Vec &cpu) {
  ASSERT_EQ(gpu.v.size(), cpu.size()) << what;
  double s = 1;
  for (float v : cpu) s = std::fmax(s, std::fabs(v));
  double tol = gpu.dt == MXC_DTYPE_FLOAT16    ? 2 * 0x1p-10 * s
               : gpu.dt == MXC_DTYPE_BFLOAT16 ? 2 * 0x1p-7 * s
                                              : 1e-4 * s;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (mxct::IsPoison(gpu.v[i])) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    if (!(std::fabs((double)gpu.v[i] - cpu[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " is " << gpu.v[i]
                    << " on the GPU, " << cpu[i] << " on the CPU (tolerance "
                    << tol << ")";
      return;
    }
  }
}

// An array of dtype dt with values uniform in [lo, lo + 2) (rounded to dt
// on the way in).
Arr Rand(const Dims &d, int dt, std::mt19937 *g, float lo = -1.f) {
  std::uniform_real_distribution<float> u(lo, lo + 2.f);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = u(*g);
  return {d, dt, v};
}

// Calls compared on a GPU (the summary lines and the check that the real
// plug-in's rows took some).
int g_compared = 0;

// Whether the plug-in's row for op takes these arrays' dtypes (the fake
// plug-in's rows are float32 only: nothing to compare there).
bool RowTakes(const std::string &op, const std::vector<Arr> &ins,
              const std::vector<Arr> &outs) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  std::vector<int> dts;
  for (const Arr &a : ins) dts.push_back(a.dt);
  for (const Arr &a : outs) dts.push_back(a.dt);
  for (int i = 0; p && i < p->n_kernels; ++i) {
    const mxc__gpu_kernel &k = p->kernels[i];
    if (op != k.op) continue;
    return k.supports &&
           k.supports(dts.data(), (int)ins.size(), (int)outs.size()) == 1;
  }
  return false;
}

// One call on both devices, compared output by output (and, with
// `after`, the inputs the operator updates in place). dev: the GPU, or
// the CPU when the cases are checked on a machine without one.
void Compare(int dev, const std::string &what, const std::string &op,
             const Kv &kv, const std::vector<Arr> &ins,
             const std::vector<Arr> &base, const std::vector<int> &req,
             const std::vector<int> &after = {}) {
  if (dev == MXC_DEVICE_GPU && !RowTakes(op, ins, base)) return;
  if (dev == MXC_DEVICE_GPU) ++g_compared;
  std::vector<Arr> cpu = base, gpu = base, cpu_in, gpu_in;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (req[i] != MXC_REQ_ADD) gpu[i].v.assign(gpu[i].v.size(), mxct::Poison());
  }
  ASSERT_EQ(Run(op, kv, MXC_DEVICE_CPU, ins, &cpu, req, &cpu_in), MXC_OK)
      << what << " on the CPU: " << mxct::LastError();
  ASSERT_EQ(Run(op, kv, dev, ins, &gpu, req, &gpu_in), MXC_OK)
      << what << " on the GPU: " << mxct::LastError();
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (req[i] == MXC_REQ_NULL) continue;
    ExpectClose(what + " output " + std::to_string(i), gpu[i], cpu[i].v);
  }
  for (int i : after) {
    ExpectClose(what + " input " + std::to_string(i) + " after", gpu_in[i],
                cpu_in[i].v);
  }
}

std::string ReqName(const std::vector<int> &req) {
  std::string s = " req";
  for (int r : req) s += " " + std::to_string(r);
  return s;
}

// ---- Convolution, Deconvolution ----

struct ConvCase {
  Dims data, weight, out;
  Kv params;
  bool bias;
};

// A subset of conformance_dnn.cc's float32 cases: groups, stride, pad,
// dilation, 1-D, a ResNet-like layer (144-term sums), an empty batch.
const std::vector<ConvCase> kConv = {
    {{2, 3, 7, 5}, {4, 3, 3, 2}, {2, 4, 5, 4},
     {{"kernel", "(3,2)"}, {"num_filter", "4"}}, true},
    {{2, 4, 9, 8}, {6, 2, 3, 3}, {2, 6, 5, 8},
     {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "2"},
      {"stride", "(2,1)"}, {"pad", "(1,2)"}, {"dilate", "(1,2)"}},
     true},
    {{3, 2, 13}, {5, 2, 4}, {3, 5, 7},
     {{"kernel", "(4,)"}, {"num_filter", "5"}, {"stride", "(2,)"},
      {"pad", "(3,)"}, {"dilate", "(2,)"}},
     true},
    {{4, 16, 14, 14}, {32, 16, 3, 3}, {4, 32, 14, 14},
     {{"kernel", "(3,3)"}, {"num_filter", "32"}, {"pad", "(1,1)"},
      {"no_bias", "true"}},
     false},
    {{0, 3, 5, 5}, {2, 3, 3, 3}, {0, 2, 3, 3},
     {{"kernel", "(3,3)"}, {"num_filter", "2"}}, true},
};

const std::vector<ConvCase> kDeconv = {
    {{2, 3, 4, 5}, {3, 4, 3, 2}, {2, 4, 6, 6},
     {{"kernel", "(3,2)"}, {"num_filter", "4"}}, false},
    {{2, 4, 5, 4}, {4, 3, 3, 3}, {2, 6, 10, 9},
     {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "2"},
      {"stride", "(2,2)"}, {"pad", "(1,0)"}, {"adj", "(1,0)"},
      {"no_bias", "false"}},
     true},
};

void ConvLike(const std::string &op, const std::vector<ConvCase> &cases,
              int dt, int dev, bool bwd, std::mt19937 *g) {
  for (size_t k = 0; k < cases.size(); ++k) {
    const ConvCase &c = cases[k];
    Dims b = {c.out[1]};
    std::vector<Arr> ins, outs;
    if (bwd) ins.push_back(Rand(c.out, dt, g));
    ins.push_back(Rand(c.data, dt, g));
    ins.push_back(Rand(c.weight, dt, g));
    if (c.bias) ins.push_back(Rand(b, dt, g));
    if (bwd) {
      outs = {Rand(c.data, dt, g), Rand(c.weight, dt, g)};
      if (c.bias) outs.push_back(Rand(b, dt, g));
    } else {
      outs = {Rand(c.out, dt, g)};
    }
    std::vector<std::vector<int>> reqs = {
        std::vector<int>(outs.size(), MXC_REQ_WRITE),
        std::vector<int>(outs.size(), MXC_REQ_ADD)};
    if (bwd) {
      reqs.push_back({MXC_REQ_ADD, MXC_REQ_WRITE, MXC_REQ_ADD});
      reqs.back().resize(outs.size());
    }
    for (const auto &req : reqs) {
      Compare(dev, op + " case " + std::to_string(k) + ReqName(req), op,
              c.params, ins, outs, req);
    }
  }
}

// ---- Pooling ----

struct PoolCase {
  Dims data, out;
  Kv params;
};

const std::vector<PoolCase> kPool = {
    {{2, 3, 7, 6}, {2, 3, 3, 3}, {{"kernel", "(3,2)"}, {"stride", "(2,2)"}}},
    {{1, 2, 9, 8}, {1, 2, 5, 10},
     {{"kernel", "(3,3)"}, {"stride", "(2,1)"}, {"pad", "(1,2)"},
      {"pool_type", "avg"}}},
    {{3, 2, 11}, {3, 2, 6},
     {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"},
      {"pool_type", "avg"}, {"count_include_pad", "false"}}},
    {{2, 3, 5, 7}, {2, 3, 1, 1}, {{"global_pool", "true"}, {"pool_type", "avg"}}},
    {{4, 8, 32, 32}, {4, 8, 16, 16},
     {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}}},
};

void Pool(int dt, int dev, bool bwd, std::mt19937 *g) {
  const std::string op = bwd ? "_backward_Pooling" : "Pooling";
  for (size_t k = 0; k < kPool.size(); ++k) {
    const PoolCase &c = kPool[k];
    std::vector<Arr> ins;
    if (bwd) ins.push_back(Rand(c.out, dt, g));
    ins.push_back(Rand(c.data, dt, g));
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Compare(dev, op + " case " + std::to_string(k) + ReqName({req}), op,
              c.params, ins, {Rand(bwd ? c.data : c.out, dt, g)}, {req});
    }
  }
}

// ---- softmax, log_softmax ----

const std::vector<std::pair<Dims, Kv>> kSoftmax = {
    {{4, 7}, {}},
    {{3, 5, 4}, {{"axis", "1"}}},
    {{16, 1000}, {}},
};

// The backward's inputs are (ograd, output): output a real softmax (or
// log_softmax) of the data, made on the CPU, so the gradient's formula is
// exercised where it matters.
void Softmax(const std::string &fwd, int dt, int dev, bool bwd,
             std::mt19937 *g) {
  const std::string op = bwd ? "_backward_" + fwd : fwd;
  for (size_t k = 0; k < kSoftmax.size(); ++k) {
    const Dims &d = kSoftmax[k].first;
    const Kv &kv = kSoftmax[k].second;
    std::vector<Arr> ins = {Rand(d, dt, g)};
    if (bwd) {
      std::vector<Arr> y = {Rand(d, dt, g)};
      ASSERT_EQ(Run(fwd, kv, MXC_DEVICE_CPU, ins, &y, {MXC_REQ_WRITE}),
                MXC_OK)
          << mxct::LastError();
      ins = {Rand(d, dt, g), y[0]};
    }
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Compare(dev, op + " case " + std::to_string(k) + ReqName({req}), op, kv,
              ins, {Rand(d, dt, g)}, {req});
    }
  }
}

// ---- BatchNorm ----

struct BnCase {
  Dims data;
  int64_t channels;
  Kv params;
  bool train;
};

const std::vector<BnCase> kBn = {
    {{4, 3, 5, 2}, 3, {{"fix_gamma", "false"}}, true},
    {{4, 3, 5, 2}, 3, {}, true},
    {{4, 3, 5, 2}, 3, {{"fix_gamma", "false"}}, false},
    {{4, 3, 5, 2}, 3,
     {{"fix_gamma", "false"}, {"use_global_stats", "true"}}, true},
    {{8, 64, 14, 14}, 64, {{"fix_gamma", "false"}}, true},
};

// Statistics-like float32 per-channel values (a variance or inverse std:
// positive).
Arr Chan(int64_t c, std::mt19937 *g, bool positive = false) {
  return Rand({c}, kF32, g, positive ? 0.5f : -1.f);
}

void BnForward(int dt, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kBn.size(); ++k) {
    const BnCase &c = kBn[k];
    int64_t C = c.channels;
    std::vector<Arr> ins = {Rand(c.data, dt, g), Chan(C, g), Chan(C, g),
                            Chan(C, g), Chan(C, g, true)};
    std::vector<Arr> base = {Rand(c.data, dt, g), Chan(C, g), Chan(C, g)};
    for (const std::vector<int> &req :
         {std::vector<int>{MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE},
          std::vector<int>{MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD},
          std::vector<int>{MXC_REQ_NULL, MXC_REQ_ADD, MXC_REQ_WRITE}}) {
      int prev = 0;
      mxc_set_training(c.train, &prev);
      Compare(dev, "BatchNorm case " + std::to_string(k) + ReqName(req),
              "BatchNorm", c.params, ins, base, req, {3, 4});
      mxc_set_training(prev, nullptr);
    }
  }
}

void BnBackward(int dt, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kBn.size(); ++k) {
    const BnCase &c = kBn[k];
    int64_t C = c.channels;
    std::vector<Arr> ins = {Rand(c.data, dt, g), Rand(c.data, dt, g),
                            Chan(C, g),          Chan(C, g),
                            Chan(C, g),          Chan(C, g, true),
                            Rand(c.data, dt, g), Chan(C, g),
                            Chan(C, g, true)};
    std::vector<Arr> base = {Rand(c.data, dt, g), Chan(C, g), Chan(C, g)};
    for (const std::vector<int> &req :
         {std::vector<int>{MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE},
          std::vector<int>{MXC_REQ_ADD, MXC_REQ_ADD, MXC_REQ_ADD},
          std::vector<int>{MXC_REQ_ADD, MXC_REQ_WRITE, MXC_REQ_NULL}}) {
      int prev = 0;
      mxc_set_training(c.train, &prev);
      Compare(dev, "_backward_BatchNorm case " + std::to_string(k) +
                       ReqName(req),
              "_backward_BatchNorm", c.params, ins, base, req);
      mxc_set_training(prev, nullptr);
    }
  }
}

// Every operator of the file in dtype dt on device dev, one gpu_check
// summary line each ("gpu_conformance: OP/DTYPE: ok|FAILED").
void All(int dt, int dev, std::mt19937 *g) {
  const testing::TestResult *r =
      testing::UnitTest::GetInstance()->current_test_info()->result();
  auto report = [&](const std::string &op, int before, int compared) {
    if (dev != MXC_DEVICE_GPU || compared == g_compared) return;
    std::printf("gpu_conformance: %s/%s: %s\n", op.c_str(),
                mxct::DtypeName(dt),
                r->total_part_count() == before ? "ok" : "FAILED");
  };
  auto run = [&](const std::string &op, const std::function<void()> &f) {
    SCOPED_TRACE(op + " " + mxct::DtypeName(dt));
    int before = r->total_part_count(), compared = g_compared;
    f();
    report(op, before, compared);
  };
  run("Convolution", [&] { ConvLike("Convolution", kConv, dt, dev, 0, g); });
  run("_backward_Convolution",
      [&] { ConvLike("_backward_Convolution", kConv, dt, dev, 1, g); });
  run("Deconvolution",
      [&] { ConvLike("Deconvolution", kDeconv, dt, dev, 0, g); });
  run("_backward_Deconvolution",
      [&] { ConvLike("_backward_Deconvolution", kDeconv, dt, dev, 1, g); });
  run("Pooling", [&] { Pool(dt, dev, false, g); });
  run("_backward_Pooling", [&] { Pool(dt, dev, true, g); });
  for (const char *f : {"softmax", "log_softmax"}) {
    run(f, [&] { Softmax(f, dt, dev, false, g); });
    run(std::string("_backward_") + f, [&] { Softmax(f, dt, dev, true, g); });
  }
  run("BatchNorm", [&] { BnForward(dt, dev, g); });
  run("_backward_BatchNorm", [&] { BnBackward(dt, dev, g); });
}

// On every machine: the cases are valid half calls, CPU against CPU (the
// tolerance and poison checks run too), so a GPU run does not spend its
// minutes on a malformed case.
TEST(GpuConformanceDnnHalf, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(71);
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    All(dt, MXC_DEVICE_CPU, &g);
  }
}

TEST(GpuConformanceDnnHalf, TheComparisonCanFail) {
  Vec cpu = {1.f, -2.f, 3.f};
  Arr got = {{3}, MXC_DTYPE_FLOAT16, {1.f, mxct::Poison(), 3.f}};
  EXPECT_NONFATAL_FAILURE(ExpectClose("x", got, cpu), "never written");
  got.v = {1.f, -2.f, 3.f + 8 * 0x1p-10f * 3};  // 8 units at scale 3
  EXPECT_NONFATAL_FAILURE(ExpectClose("x", got, cpu), "on the GPU");
  got.v = {1.f, -2.f, 3.f + 0x1p-9f};  // one unit of float16 at 3
  ExpectClose("x", got, cpu);
}

TEST(GpuConformanceDnnHalf, KernelsMatchTheCpu) {
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << mxct::LastError();
  }
  std::mt19937 g(72);
  g_compared = 0;
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    All(dt, MXC_DEVICE_GPU, &g);
  }
  std::printf("gpu_conformance: %d half cuDNN calls compared\n", g_compared);
  // The real plug-in's cuDNN rows take half types: comparing none would
  // be a silent pass (the fake plug-in has no such rows).
  std::vector<Arr> conv_in = {{{1}, MXC_DTYPE_FLOAT16, {}},
                              {{1}, MXC_DTYPE_FLOAT16, {}}};
  if (RowTakes("Convolution", conv_in, {{{1}, MXC_DTYPE_FLOAT16, {}}})) {
    EXPECT_GT(g_compared, 0);
  }
}

}  // namespace
