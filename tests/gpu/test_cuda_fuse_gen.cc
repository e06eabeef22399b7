// The run-time fused kernels' generator (backends/cuda/fuse_gen.h) and
// NVRTC compiler (fuse_nvrtc.h) on the host, no GPU needed:
//  - text: every program of fuse_programs.h (each micro-op; chains, trees,
//    scalars, five inputs) generates kernel text that the real NVRTC
//    compiles to sm_80 and sm_90 CUBINs (where the toolkit is installed;
//    NVRTC needs no GPU), and broken text fails with NVRTC's log;
//  - semantics: the plan run on the host with the prelude functions the
//    kernel calls (fuse_host.h) equals the CPU's _fused_elemwise bit for
//    bit (NaN for NaN) in write and add modes, on inputs with NaN of both
//    signs, infinities, zeros of both signs, subnormals and exp's
//    overflow range; and agrees with the operators run one by one
//    (unfused) within the fused exp's few ulps;
//  - refusal: an instruction without a micro-op is MXC_ERR_UNSUPPORTED
//    naming the instruction and operator.
// What only a GPU run covers (tests/gpu:test_gpu_conformance on a GPU):
// that the device executes the compiled text as the host C does (CUDA's
// float operations under --fmad=false are IEEE single like the host's),
// the launch, the write modes on device memory and the cache's loads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "backends/cuda/fuse_gen.h"
#include "backends/cuda/fuse_nvrtc.h"
#include "mxc/mxc.h"
#include "tests/gpu/fuse_host.h"
#include "tests/gpu/fuse_programs.h"

namespace {

using fuseprog::Prog;

// The parsed parameters of _fused_elemwise for p (mxc__free them).
void *Parse(const Prog &p) {
  const mxc__op *op = mxc__op_find("_fused_elemwise");
  EXPECT_NE(op, nullptr);
  std::string n = std::to_string(p.n_in), text = p.Text();
  const char *keys[] = {"num_inputs", "program"};
  const char *vals[] = {n.c_str(), text.c_str()};
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(op, keys, vals, 2, &param), MXC_OK)
      << text << ": " << mxc_last_error();
  return param;
}

mxc__fuse_plan Plan(const Prog &p) {
  mxc__fuse_plan plan;
  void *param = Parse(p);
  char why[512] = "";
  EXPECT_EQ(mxc__fuse_plan_make(param, &plan, why, sizeof why), MXC_OK)
      << p.name << ": " << why;
  mxc__free(param);
  return plan;
}

std::string Text(const Prog &p) {
  mxc__fuse_plan plan = Plan(p);
  char *t = mxc__fuse_text(&plan);
  EXPECT_NE(t, nullptr);
  std::string s = t ? t : "";
  std::free(t);
  return s;
}

// NVRTC where the toolkit is installed (BUILD sets MXC_NVRTC_LIBRARY);
// the reason otherwise.
bool HaveNvrtc(std::string *why) {
  char buf[512];
  int rc = mxc__fuse_nvrtc_version(buf, sizeof buf);
  *why = buf;
  return rc == MXC_OK;
}

TEST(FuseGen, EveryProgramsTextCompilesForSm80AndSm90) {
  std::string why;
  if (!HaveNvrtc(&why)) GTEST_SKIP() << why;
  std::printf("fuse_gen: %s\n", why.c_str());
  for (const Prog &p : fuseprog::Supported()) {
    std::string text = Text(p);
    for (int cc : {80, 90}) {
      mxc__fuse_image img;
      char err[4096] = "";
      ASSERT_EQ(mxc__fuse_nvrtc_compile(text.c_str(), cc, &img, err,
                                        sizeof err),
                MXC_OK)
          << p.name << " sm_" << cc << ": " << err << "\n" << text;
      EXPECT_EQ(img.is_ptx, 0) << p.name;
      EXPECT_EQ(img.arch, cc);
      ASSERT_GT(img.size, 4u);
      EXPECT_EQ(std::memcmp(img.data, "\x7f" "ELF", 4), 0) << "not a CUBIN";
      mxc__fuse_image_free(&img);
    }
  }
}

TEST(FuseGen, TheKernelTextHasOneLoadPerInputAndTheScalarsBits) {
  Prog p = fuseprog::Supported()[0];  // _plus_scalar(i0, scalar=0.75)
  std::string t = Text(p);
  EXPECT_NE(t.find("extern \"C\" __global__ void mxc_fused(long long n, int "
                   "add, float *out, const float *i0)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("const float x0 = i0[e];"), std::string::npos);
  EXPECT_NE(t.find("mxf_add(x0, mxf_f(0x3f400000u))"), std::string::npos);
  EXPECT_NE(t.find("out[e] = add ? mxf_add(x1, out[e]) : x1;"),
            std::string::npos);
}

TEST(FuseGen, BrokenTextFailsWithNvrtcsLog) {
  std::string why;
  if (!HaveNvrtc(&why)) GTEST_SKIP() << why;
  std::string text = Text(fuseprog::Supported()[0]);
  size_t at = text.find("mxf_add(x0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "mxf_addd");
  mxc__fuse_image img;
  char err[4096] = "";
  EXPECT_EQ(mxc__fuse_nvrtc_compile(text.c_str(), 90, &img, err, sizeof err),
            MXC_ERR_INTERNAL);
  EXPECT_NE(std::string(err).find("mxf_addd"), std::string::npos) << err;
}

TEST(FuseGen, UnknownNewerArchitectureGetsPtxOlderNone) {
  std::string why;
  if (!HaveNvrtc(&why)) GTEST_SKIP() << why;
  std::string text = Text(fuseprog::Supported()[0]);
  mxc__fuse_image img;
  char err[4096] = "";
  // A compute capability beyond any NVRTC's list: PTX of the newest one
  // it knows, which the driver compiles for the device.
  ASSERT_EQ(mxc__fuse_nvrtc_compile(text.c_str(), 999, &img, err, sizeof err),
            MXC_OK)
      << err;
  EXPECT_EQ(img.is_ptx, 1);
  EXPECT_GE(img.arch, 90);
  EXPECT_NE(std::string(img.data).find(".entry mxc_fused"), std::string::npos);
  mxc__fuse_image_free(&img);
  EXPECT_EQ(mxc__fuse_nvrtc_compile(text.c_str(), 10, &img, err, sizeof err),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(err).find("compute capability 1.0"),
            std::string::npos)
      << err;
}

TEST(FuseGen, InstructionsWithoutMicroOpAreRefusedByName) {
  for (auto &r : fuseprog::Refused()) {
    void *param = Parse(r.first);
    mxc__fuse_plan plan;
    char why[512] = "";
    EXPECT_EQ(mxc__fuse_plan_make(param, &plan, why, sizeof why),
              MXC_ERR_UNSUPPORTED);
    std::string w = why, op = r.first.ins[(size_t)r.second].op;
    EXPECT_NE(w.find("instruction " + std::to_string(r.second) + " ('" + op +
                     "')"),
              std::string::npos)
        << w;
    mxc__free(param);
  }
}

// ---- semantics ----

mxc_ndarray Host(const std::vector<float> &v) {
  int64_t n = (int64_t)v.size();
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                               0, &a),
            MXC_OK);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK);
  return a;
}

std::vector<float> Read(mxc_ndarray a, size_t n) {
  std::vector<float> v(n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), n * 4), MXC_OK)
      << mxc_last_error();
  return v;
}

// op on the CPU; the output starts as `init` (add mode adds to it).
std::vector<float> Invoke(const std::string &name, const fuseprog::Kv &kv,
                          const std::vector<std::vector<float>> &in,
                          const std::vector<float> &init, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (auto &p : kv) {
    k.push_back(p.first.c_str());
    v.push_back(p.second.c_str());
  }
  std::vector<mxc_ndarray> a;
  for (auto &x : in) a.push_back(Host(x));
  mxc_ndarray out = Host(init);
  EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)a.size(), &out, 1, &req),
            MXC_OK)
      << name << ": " << mxc_last_error();
  std::vector<float> r = Read(out, init.size());
  for (auto h : a) mxc_ndarray_free(h);
  mxc_ndarray_free(out);
  return r;
}

std::vector<float> CpuFused(const Prog &p,
                            const std::vector<std::vector<float>> &in,
                            const std::vector<float> &init, int req) {
  return Invoke("_fused_elemwise",
                {{"num_inputs", std::to_string(p.n_in)}, {"program", p.Text()}},
                in, init, req);
}

// The operators one by one (no fusion).
std::vector<float> Unfused(const Prog &p,
                           const std::vector<std::vector<float>> &in) {
  std::vector<std::vector<float>> r;
  size_t n = in[0].size();
  for (auto &ins : p.ins) {
    std::vector<std::vector<float>> args;
    for (auto &a : ins.args) {
      size_t k = std::stoul(a.substr(1));
      args.push_back(a[0] == 'i' ? in[k] : r[k]);
    }
    r.push_back(Invoke(ins.op, ins.params, args, std::vector<float>(n, 0.f),
                       MXC_REQ_WRITE));
  }
  return r.back();
}

std::vector<float> HostPlan(const Prog &p,
                            const std::vector<std::vector<float>> &in,
                            const std::vector<float> &init, int add) {
  mxc__fuse_plan plan = Plan(p);
  std::vector<const float *> ptr;
  for (auto &x : in) ptr.push_back(x.data());
  std::vector<float> out = init;
  mxc__fuse_host_run(&plan, ptr.data(), out.data(), (int64_t)out.size(), add);
  return out;
}

// |a - b| <= tol * max(1, |b|), specials equal (NaN for NaN).
std::string FarFrom(const std::vector<float> &a, const std::vector<float> &b,
                    double tol) {
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok = std::isnan(a[i]) || std::isnan(b[i])
                  ? std::isnan(a[i]) && std::isnan(b[i])
              : std::isinf(a[i]) || std::isinf(b[i])
                  ? a[i] == b[i]
                  : std::fabs((double)a[i] - b[i]) <=
                        tol * std::fmax(1.0, std::fabs((double)b[i]));
    if (!ok) {
      return "element " + std::to_string(i) + ": " + std::to_string(a[i]) +
             " vs " + std::to_string(b[i]);
    }
  }
  return "";
}

TEST(FuseGen, HostRunOfThePlanEqualsTheCpuFusedOperatorBitForBit) {
  std::mt19937 g(1717);
  // Several chain blocks and tiles of the CPU operator, and a ragged end.
  const size_t n = 4099;
  for (const Prog &p : fuseprog::Supported()) {
    SCOPED_TRACE(p.name + ": " + p.Text());
    std::vector<std::vector<float>> in;
    for (int i = 0; i < p.n_in; ++i) in.push_back(fuseprog::Inputs(n, i, &g));
    std::vector<float> base = fuseprog::Inputs(n, 5, &g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::vector<float> cpu = CpuFused(p, in, base, req);
      std::vector<float> host = HostPlan(p, in, base, req == MXC_REQ_ADD);
      EXPECT_EQ(fuseprog::FirstDifference(host, cpu), "")
          << (req == MXC_REQ_ADD ? "add" : "write");
    }
    // The fused exp is within a few ulp of the unfused operators' exp;
    // everything else is the same float operations.
    std::vector<float> host = HostPlan(p, in, base, 0), ref = Unfused(p, in);
    EXPECT_EQ(p.UsesExp() ? FarFrom(host, ref, 1e-5)
                          : fuseprog::FirstDifference(host, ref),
              "")
        << "unfused";
  }
}

}  // namespace
