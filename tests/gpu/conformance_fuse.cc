// Conformance case of the run-time fused kernel (backends/cuda/fuse.h):
// _fused_elemwise on the GPU against the CPU's for every program of
// fuse_programs.h (each micro-op, chains, trees, scalars, five inputs),
// inputs with NaN of both signs, infinities, signed zeros, subnormals and
// exp's overflow range, sizes from 1 to past one grid (grid-stride loop)
// and empty, in write (output poisoned first), add and in-place modes;
// a program the generator refuses runs one instruction at a time
// (CompareDeclined); and executors: each multi-instruction program as a
// symbol bound on gpu(0) (the executor's fusion pass makes the fused
// node) against the same symbol on the CPU; and calls of several programs pushed at once
// (concurrent compilations, the cache's waits).
//
// Tolerance: bitwise (NaN for NaN). The kernel calls fuse_prelude.h's
// functions, which perform the CPU chain's float operations in its order
// (exp by the same polynomial), compiled with --fmad=false; IEEE single
// operations round the same on both devices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/fuse_programs.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::Poison;

using fuseprog::Prog;
using mxct::LastError;
using Vec = std::vector<float>;

mxc_ndarray Filled(int64_t n, int dev, const Vec &v) {
  mxc_ndarray a = mxct::Make({n}, dev, 0);
  if (!v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
        << LastError();
  }
  return a;
}

// The program on one device; the output starts as `init` (the array of
// input 0 when inplace). *rc: the call's status.
Vec Run(const Prog &p, int dev, const std::vector<Vec> &in, const Vec &init,
        int req, bool inplace, int *rc) {
  int64_t n = (int64_t)init.size();
  std::vector<mxc_ndarray> a;
  for (size_t i = 0; i < in.size(); ++i) {
    a.push_back(Filled(n, dev, inplace && i == 0 ? init : in[i]));
  }
  mxc_ndarray out = inplace ? a[0] : Filled(n, dev, init);
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find("_fused_elemwise", &op), MXC_OK);
  std::string n_in = std::to_string(p.n_in), text = p.Text();
  const char *k[] = {"num_inputs", "program"}, *v[] = {n_in.c_str(),
                                                       text.c_str()};
  *rc = mxc_op_invoke(op, k, v, 2, a.data(), (int)a.size(), &out, 1, &req);
  if (*rc == MXC_OK) *rc = mxc_ndarray_wait_to_read(out);
  Vec r;
  if (*rc == MXC_OK) r = mxct::ToHost(out, (size_t)n);
  for (auto h : a) mxc_ndarray_free(h);
  if (!inplace) mxc_ndarray_free(out);
  return r;
}

void CompareOne(const Prog &p, int64_t n, std::mt19937 *g) {
  std::vector<Vec> in;
  for (int i = 0; i < p.n_in; ++i) {
    in.push_back(fuseprog::Inputs((size_t)n, i, g));
  }
  Vec base = fuseprog::Inputs((size_t)n, 6, g);
  for (int mode = 0; mode < 3; ++mode) {
    int req = mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE;
    bool inplace = mode == 2;
    std::string what = p.name + " n=" + std::to_string(n) +
                       (mode == 1 ? " add" : inplace ? " in-place" : "");
    // In place, input 0 is the output's starting value.
    Vec init = inplace ? in[0] : base;
    int rc_cpu = 0, rc_gpu = 0;
    Vec cpu = Run(p, MXC_DEVICE_CPU, in, init, req, inplace, &rc_cpu);
    ASSERT_EQ(rc_cpu, MXC_OK) << what << ": " << LastError();
    Vec gpu_init = mode == 0 ? Vec((size_t)n, Poison()) : init;
    Vec gpu = Run(p, MXC_DEVICE_GPU, in, gpu_init, req, inplace, &rc_gpu);
    ASSERT_EQ(rc_gpu, MXC_OK) << what << ": " << LastError();
    EXPECT_EQ(fuseprog::FirstDifference(gpu, cpu), "") << what;
  }
}

// ---- executors ----

struct Sym {
  mxc_symbol h = nullptr;
  ~Sym() { mxc_symbol_free(h); }
};

// p as a symbol over variables x0..x<n_in - 1>; *syms keeps every node.
mxc_symbol Build(const Prog &p, std::vector<Sym> *syms) {
  syms->resize((size_t)p.n_in + p.ins.size());
  for (int i = 0; i < p.n_in; ++i) {
    EXPECT_EQ(mxc_symbol_variable(("x" + std::to_string(i)).c_str(),
                                  &(*syms)[(size_t)i].h),
              MXC_OK);
  }
  for (size_t k = 0; k < p.ins.size(); ++k) {
    const auto &ins = p.ins[k];
    mxc_op op = nullptr;
    EXPECT_EQ(mxc_op_find(ins.op.c_str(), &op), MXC_OK);
    std::vector<const char *> keys, vals;
    for (auto &kv : ins.params) {
      keys.push_back(kv.first.c_str());
      vals.push_back(kv.second.c_str());
    }
    std::vector<mxc_symbol> args;
    for (auto &a : ins.args) {
      size_t r = std::stoul(a.substr(1));
      args.push_back((*syms)[a[0] == 'i' ? r : p.n_in + r].h);
    }
    std::string name = "n" + std::to_string(k);
    EXPECT_EQ(mxc_symbol_create(op, keys.data(), vals.data(),
                                (int)keys.size(), name.c_str(), nullptr,
                                args.data(), (int)args.size(),
                                &(*syms)[p.n_in + k].h),
              MXC_OK)
        << LastError();
  }
  return syms->back().h;
}

// Forward of p's symbol on dev; *fused: whether the graph has a fused node.
Vec Forward(const Prog &p, int dev, const std::vector<Vec> &in, bool *fused) {
  std::vector<Sym> syms;
  mxc_symbol s = Build(p, &syms);
  mxc_str_list names = nullptr;
  EXPECT_EQ(mxc_symbol_list_arguments(s, &names), MXC_OK);
  int n_args = 0;
  mxc_str_list_size(names, &n_args);
  int64_t n = (int64_t)in[0].size();
  std::vector<mxc_ndarray> args;
  for (int i = 0; i < n_args; ++i) {
    const char *nm = nullptr;
    mxc_str_list_get(names, i, &nm);
    args.push_back(Filled(n, dev, in[std::stoul(std::string(nm).substr(1))]));
  }
  mxc_str_list_free(names);
  mxc_executor ex = nullptr;
  Vec r;
  EXPECT_EQ(mxc_executor_bind(s, dev, 0, n_args, args.data(), nullptr,
                              nullptr, 0, nullptr, MXC_BIND_DEFAULT, &ex),
            MXC_OK)
      << LastError();
  char *dbg = nullptr;
  if (ex && mxc_executor_debug_str(ex, &dbg) == MXC_OK) {
    *fused = std::string(dbg).find("_fused_elemwise") != std::string::npos;
    mxc_string_free(dbg);
  }
  mxc_ndarray out = nullptr;
  if (ex && mxc_executor_forward(ex, 0) == MXC_OK &&
      mxc_executor_output(ex, 0, &out) == MXC_OK) {
    r = mxct::ToHost(out, (size_t)n);
    mxc_ndarray_free(out);
  } else {
    ADD_FAILURE() << p.name << ": " << LastError();
  }
  mxc_executor_free(ex);
  for (auto a : args) mxc_ndarray_free(a);
  return r;
}

void CompareExecutors(std::mt19937 *g) {
  for (const Prog &p : fuseprog::Supported()) {
    // Programs the fusion pass makes: more than one node, and no result
    // read twice (it only absorbs values with one consumer).
    if (p.ins.size() < 2 || p.ReadsAResultTwice()) continue;
    std::vector<Vec> in;
    for (int i = 0; i < p.n_in; ++i) in.push_back(fuseprog::Inputs(4099, i, g));
    bool fused_cpu = false, fused_gpu = false;
    Vec cpu = Forward(p, MXC_DEVICE_CPU, in, &fused_cpu);
    Vec gpu = Forward(p, MXC_DEVICE_GPU, in, &fused_gpu);
    EXPECT_TRUE(fused_gpu) << p.name << ": the GPU executor fused nothing";
    EXPECT_EQ(fuseprog::FirstDifference(gpu, cpu), "")
        << p.name << " executor";
  }
}

// Independent calls pushed at once, several of each program (new text for
// the cache: a fresh scalar), which the engine's workers run concurrently:
// each program is compiled once while the others wait for it, and every
// result is still the CPU's.
void CompareConcurrent(std::mt19937 *g) {
  const int kCalls = 24;
  const int64_t n = 5003;
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("_fused_elemwise", &op), MXC_OK);
  std::vector<Prog> progs;
  for (int k = 0; k < 4; ++k) {
    std::string s = "1." + std::to_string(g->operator()() % 1000);
    progs.push_back({"concurrent" + std::to_string(k), 2,
                     {fuseprog::I("mul", {"i0", "i1"}),
                      fuseprog::I(k % 2 ? "_plus_scalar" : "_rdiv_scalar",
                                  {"r0"}, {{"scalar", s}}),
                      fuseprog::I(k < 2 ? "exp" : "sigmoid", {"r1"})}});
  }
  std::vector<std::vector<Vec>> ins;
  std::vector<mxc_ndarray> keep, outs;
  for (int c = 0; c < kCalls; ++c) {
    const Prog &p = progs[(size_t)c % progs.size()];
    ins.push_back({fuseprog::Inputs((size_t)n, 0, g),
                   fuseprog::Inputs((size_t)n, 1, g)});
    mxc_ndarray a[2] = {Filled(n, MXC_DEVICE_GPU, ins.back()[0]),
                        Filled(n, MXC_DEVICE_GPU, ins.back()[1])};
    mxc_ndarray out = Filled(n, MXC_DEVICE_GPU, Vec((size_t)n, Poison()));
    std::string text = p.Text();
    const char *k[] = {"num_inputs", "program"}, *v[] = {"2", text.c_str()};
    ASSERT_EQ(mxc_op_invoke(op, k, v, 2, a, 2, &out, 1, nullptr), MXC_OK)
        << LastError();
    keep.insert(keep.end(), a, a + 2);
    outs.push_back(out);
  }
  ASSERT_EQ(mxc_wait_all(), MXC_OK) << LastError();
  for (int c = 0; c < kCalls; ++c) {
    const Prog &p = progs[(size_t)c % progs.size()];
    int rc = 0;
    Vec cpu = Run(p, MXC_DEVICE_CPU, ins[(size_t)c], Vec((size_t)n, 0.f),
                  MXC_REQ_WRITE, false, &rc);
    ASSERT_EQ(rc, MXC_OK) << LastError();
    EXPECT_EQ(fuseprog::FirstDifference(mxct::ToHost(outs[(size_t)c],
                                                     (size_t)n),
                                        cpu),
              "")
        << p.name << " call " << c;
  }
  for (auto h : keep) mxc_ndarray_free(h);
  for (auto h : outs) mxc_ndarray_free(h);
}

// A program the generator refuses: the row declines it (accepts.h), so
// libmxc runs it one instruction at a time on the GPU. Where every
// instruction has a GPU kernel, the CPU's values within 1e-5 relative
// (the instructions' own kernels: CUDA's libm against the CPU's vmath, up
// to a few ulps); else, as the conformance binaries keep the CPU fallback
// off, the first such instruction's refusal, never the fused row's.
void CompareDeclined(const Prog &p) {
  int rc = 0, rc_cpu = 0;
  Vec x = {1.f, -0.5f, 0.f, 2.f, 0.25f};
  Vec gpu = Run(p, MXC_DEVICE_GPU, {x}, Vec(x.size(), Poison()),
                MXC_REQ_WRITE, false, &rc);
  if (rc != MXC_OK) {
    EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED) << p.name;
    EXPECT_NE(LastError().find("no kernel for gpu(0)"), std::string::npos)
        << p.name << ": " << LastError();
    EXPECT_EQ(LastError().find("has no GPU micro-op"), std::string::npos)
        << p.name << ": " << LastError();
    // Taken here, so that later cases' waits do not report it.
    (void)mxc_wait_all();
    EXPECT_EQ(mxc_wait_all(), MXC_OK) << LastError();
    return;
  }
  Vec cpu = Run(p, MXC_DEVICE_CPU, {x}, Vec(x.size(), 0.f), MXC_REQ_WRITE,
                false, &rc_cpu);
  ASSERT_EQ(rc_cpu, MXC_OK) << LastError();
  ASSERT_EQ(gpu.size(), cpu.size()) << p.name;
  for (size_t i = 0; i < cpu.size(); ++i) {
    float d = std::fabs(gpu[i] - cpu[i]);
    EXPECT_LE(d, 1e-5f * std::max(1.f, std::fabs(cpu[i])))
        << p.name << " element " << i << ": " << gpu[i] << " vs " << cpu[i];
  }
}

void FusedCase(std::mt19937 *g) {
  for (const Prog &p : fuseprog::Supported()) {
    for (int64_t n : {1, 7, 1031, 300001, 0}) CompareOne(p, n, g);
  }
  for (auto &r : fuseprog::Refused()) CompareDeclined(r.first);
  CompareExecutors(g);
  CompareConcurrent(g);
}

mxct::RegisterCase g_fused("_fused_elemwise", FusedCase);

}  // namespace
