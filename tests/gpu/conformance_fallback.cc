// The device fallback (core/op/device_fallback.c) in the conformance
// binaries, with the fake plug-in here and the real one on a GPU
// (scripts/gpu_check.sh): an executor whose nodes mix GPU kernels
// (FullyConnected and its gradient: cuBLAS) and a node run on the CPU
// (a unary operator and its gradient without a GPU kernel: CpuOnlyUnary;
// gammaln since tanh, arcsinh, erf and cbrt got kernels), forward and
// backward, against the same executor on the CPU.
//
// The rest of the suite compares GPU kernels with the CPU: a call that
// fell back would compare the CPU with itself and hide a kernel that
// refuses the case's dtypes. So these binaries refuse the fallback
// (MXC_DEVICE_FALLBACK=0, set before main unless the environment says
// otherwise), and the case here turns it on for itself only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "core/op/backend.h"
#include "core/op/op.h"
void mxc__fallback_log_reset(void);
}
#include "mxc/mxc.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::LastError;

const int kRefuseFallback = setenv("MXC_DEVICE_FALLBACK", "0", 0);

// The fallback on while a scope runs (the switch is read again after
// each reset).
struct FallbackOn {
  std::string before;
  FallbackOn() {
    const char *v = std::getenv("MXC_DEVICE_FALLBACK");
    before = v ? v : "";
    setenv("MXC_DEVICE_FALLBACK", "1", 1);
    mxc__fallback_log_reset();
  }
  ~FallbackOn() {
    if (before.empty()) {
      unsetenv("MXC_DEVICE_FALLBACK");
    } else {
      setenv("MXC_DEVICE_FALLBACK", before.c_str(), 1);
    }
    mxc__fallback_log_reset();
  }
};

using Vec = std::vector<float>;

mxc_ndarray Filled(const std::vector<int64_t> &shape, int dev, const Vec &v) {
  mxc_ndarray a = mxct::Make(shape, dev, 0);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
      << LastError();
  return a;
}

Vec Read(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  return mxct::ToHost(a, (size_t)n);
}

// The first unary operator of these (each with a gradient) that has no
// GPU kernel in this plug-in: kernels get added over time.
std::string CpuOnlyUnary() {
  for (const char *name : {"tanh", "arcsinh", "gammaln", "erf", "cbrt"}) {
    const mxc__op *op = mxc__op_find(name);
    bool gpu = false;
    const mxc__kernel *k;
    for (int i = 0; op && (k = mxc__op_kernel_at(op, i)) != nullptr; ++i) {
      gpu = gpu || k->backend->dev_type == MXC_DEVICE_GPU;
    }
    if (op && !gpu) return name;
  }
  return "";
}

const char *kGraph = R"({"nodes": [
    {"op": "null", "name": "x", "inputs": []},
    {"op": "null", "name": "w1", "inputs": []},
    {"op": "FullyConnected", "name": "fc1",
     "attrs": {"num_hidden": "5", "no_bias": "True"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "UNARY", "name": "t", "inputs": [[2, 0, 0]]},
    {"op": "null", "name": "w2", "inputs": []},
    {"op": "FullyConnected", "name": "fc2",
     "attrs": {"num_hidden": "3", "no_bias": "True"},
     "inputs": [[3, 0, 0], [4, 0, 0]]}],
    "arg_nodes": [0, 1, 4], "heads": [[5, 0, 0]]})";

// x (4, 6) -> FullyConnected(w1: 5 x 6) -> the unary -> FullyConnected(
// w2: 3 x 5), no bias. The unary sits between two cuBLAS nodes, so no
// element-wise fusion puts it into a generated kernel.
std::string Graph(const std::string &unary) {
  std::string s = kGraph;
  return s.replace(s.find("UNARY"), 5, unary);
}

struct GraphRun {
  Vec out, gx, gw1, gw2;
};

// Forward (training) and backward on dev; w1's gradient is added onto
// `acc` (grad_req add).
GraphRun RunGraph(const std::string &unary, int dev, const std::vector<Vec> &v,
             const Vec &head, const Vec &acc) {
  mxc_symbol sym = nullptr;
  EXPECT_EQ(mxc_symbol_from_json(Graph(unary).c_str(), &sym), MXC_OK)
      << LastError();
  mxc_ndarray args[3] = {Filled({4, 6}, dev, v[0]), Filled({5, 6}, dev, v[1]),
                         Filled({3, 5}, dev, v[2])};
  mxc_ndarray grads[3] = {Filled({4, 6}, dev, Vec(24, 0.f)),
                          Filled({5, 6}, dev, acc),
                          Filled({3, 5}, dev, Vec(15, 0.f))};
  int reqs[3] = {MXC_REQ_WRITE, MXC_REQ_ADD, MXC_REQ_WRITE};
  mxc_executor ex = nullptr;
  GraphRun r;
  EXPECT_EQ(mxc_executor_bind(sym, dev, 0, 3, args, grads, reqs, 0, nullptr,
                              MXC_BIND_DEFAULT, &ex),
            MXC_OK)
      << LastError();
  mxc_ndarray hg = Filled({4, 3}, dev, head), y = nullptr;
  if (ex && mxc_executor_forward(ex, 1) == MXC_OK &&
      mxc_executor_backward(ex, 1, &hg) == MXC_OK &&
      mxc_executor_output(ex, 0, &y) == MXC_OK) {
    r.out = Read(y);
    r.gx = Read(grads[0]);
    r.gw1 = Read(grads[1]);
    r.gw2 = Read(grads[2]);
  } else {
    ADD_FAILURE() << (dev == MXC_DEVICE_GPU ? "gpu: " : "cpu: ")
                  << LastError();
  }
  mxc_ndarray_free(y);
  mxc_ndarray_free(hg);
  mxc_executor_free(ex);
  for (int i = 0; i < 3; ++i) {
    mxc_ndarray_free(args[i]);
    mxc_ndarray_free(grads[i]);
  }
  mxc_symbol_free(sym);
  return r;
}

// cuBLAS sums in its own order: float32 products of 6 and 5 terms agree
// with the CPU's to a few ulps; the unary itself runs on the CPU (bitwise).
void ExpectClose(const char *what, const Vec &gpu, const Vec &cpu) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t i = 0; i < gpu.size(); ++i) {
    ASSERT_FALSE(mxct::IsPoison(gpu[i])) << what << " " << i;
    EXPECT_LE(std::fabs(gpu[i] - cpu[i]),
              1e-4f * std::fmax(1.f, std::fabs(cpu[i])))
        << what << " element " << i << ": gpu " << gpu[i] << ", cpu "
        << cpu[i];
  }
}

TEST(GpuFallback, ExecutorMixingKernelsAndCpuNodesMatchesTheCpu) {
  (void)kRefuseFallback;
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << LastError();
  }
  std::string unary = CpuOnlyUnary();
  if (unary.empty()) {
    // Not a skip: gpu_check.sh counts skips as runs without a GPU.
    std::printf("gpu_conformance: device_fallback: every candidate operator "
                "has a GPU kernel now; nothing falls back\n");
    return;
  }
  std::mt19937 g(20261129);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto rnd = [&](size_t n) {
    Vec v(n);
    for (auto &x : v) x = u(g);
    return v;
  };
  std::vector<Vec> v = {rnd(24), rnd(30), rnd(15)};
  Vec head = rnd(12), acc = rnd(30);
  GraphRun cpu = RunGraph(unary, MXC_DEVICE_CPU, v, head, acc);
  GraphRun gpu;
  {
    FallbackOn on;
    gpu = RunGraph(unary, MXC_DEVICE_GPU, v, head, acc);
  }
  ExpectClose("output", gpu.out, cpu.out);
  ExpectClose("x gradient", gpu.gx, cpu.gx);
  ExpectClose("w1 gradient (added)", gpu.gw1, cpu.gw1);
  ExpectClose("w2 gradient", gpu.gw2, cpu.gw2);
  // For gpu_check's summary, as the kernels' lines.
  std::printf("gpu_conformance: device_fallback(%s): %s\n", unary.c_str(),
              HasFailure() ? "FAILED" : "ok");
  // Refused again outside the scope (unless the environment turned the
  // fallback on for the whole binary).
  const char *env = std::getenv("MXC_DEVICE_FALLBACK");
  if (!env || std::string(env) != "0") return;
  mxc_ndarray a = Filled({2}, MXC_DEVICE_GPU, Vec(2, 0.5f)), out = nullptr;
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(unary.c_str(), &op), MXC_OK);
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a, 1, &out, 1, nullptr),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(LastError().find("MXC_DEVICE_FALLBACK=0"), std::string::npos)
      << LastError();
  mxc_ndarray_free(a);
}

}  // namespace
