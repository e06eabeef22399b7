// The GEMM choice (ops/linalg/gemm_choice.h) over faked CPUs and OpenBLAS
// core names: oneDNN for float32 exactly when OpenBLAS's kernels target a
// weaker ISA than the CPU runs at speed, MXC_GEMM overriding.
#include <gtest/gtest.h>

#include "ops/linalg/gemm_choice.h"

namespace {

const uint32_t kAvx2 = MXC__CPU_AVX | MXC__CPU_AVX2 | MXC__CPU_FMA;
const uint32_t kAvx512 = kAvx2 | MXC__CPU_AVX512F | MXC__CPU_AVX512BW |
                         MXC__CPU_AVX512VL | MXC__CPU_AVX512DQ;

mxc__cpu_info cpu(const char *vendor, int family, int model, uint32_t f) {
  mxc__cpu_info c;
  mxc__cpu_fake(&c, vendor, family, model, f);
  return c;
}

// float32's GEMM for (cpu, core, env), oneDNN linked; checks float64 too.
mxc__gemm_kind choose(const mxc__cpu_info &c, const char *core,
                      const char *env = nullptr, int have_onednn = 1) {
  int bad = -1;
  mxc__gemm_choice ch = mxc__gemm_choose(&c, core, env, have_onednn, &bad);
  EXPECT_EQ(bad, 0) << (env ? env : "(null)");
  EXPECT_NE(ch.f64, MXC__GEMM_ONEDNN) << "oneDNN has no dgemm";
  EXPECT_EQ(ch.f64, ch.f32 == MXC__GEMM_PORTABLE || !core
                        ? MXC__GEMM_PORTABLE
                        : MXC__GEMM_OPENBLAS);
  EXPECT_NE(ch.why, nullptr);
  return ch.f32;
}

const mxc__cpu_info kEmeraldRapids =
    cpu("GenuineIntel", 6, 207, kAvx512 | MXC__CPU_AVX512_BF16 |
                                    MXC__CPU_AMX_TILE | MXC__CPU_AMX_BF16 |
                                    MXC__CPU_AMX_INT8);
const mxc__cpu_info kZen4 =
    cpu("AuthenticAMD", 25, 17, kAvx512 | MXC__CPU_AVX512_BF16);
const mxc__cpu_info kZen5 =
    cpu("AuthenticAMD", 26, 2, kAvx512 | MXC__CPU_AVX512_BF16);
const mxc__cpu_info kHaswell = cpu("GenuineIntel", 6, 63, kAvx2);
const mxc__cpu_info kNehalem = cpu("GenuineIntel", 6, 26, 0);

TEST(GemmChoice, BlasCoreNamesMapToTheirIsa) {
  EXPECT_EQ(mxc__gemm_blas_isa("SkylakeX"), MXC__ISA_AVX512);
  EXPECT_EQ(mxc__gemm_blas_isa("sapphirerapids"), MXC__ISA_AVX512);
  EXPECT_EQ(mxc__gemm_blas_isa("Haswell"), MXC__ISA_AVX2);
  EXPECT_EQ(mxc__gemm_blas_isa("Zen"), MXC__ISA_AVX2);
  EXPECT_EQ(mxc__gemm_blas_isa("Sandybridge"), MXC__ISA_AVX);
  EXPECT_EQ(mxc__gemm_blas_isa("Prescott"), MXC__ISA_BASELINE);
  EXPECT_EQ(mxc__gemm_blas_isa("Nehalem"), MXC__ISA_BASELINE);
  EXPECT_EQ(mxc__gemm_blas_isa("SomethingNew"), MXC__ISA_BASELINE);
  EXPECT_EQ(mxc__gemm_blas_isa(nullptr), MXC__ISA_BASELINE);
}

TEST(GemmChoice, XeonModel207WithPrescottGoesToOneDnn) {
  EXPECT_EQ(choose(kEmeraldRapids, "Prescott"), MXC__GEMM_ONEDNN);
  // Haswell kernels on an AVX-512 Xeon are also weaker than the CPU.
  EXPECT_EQ(choose(kEmeraldRapids, "Haswell"), MXC__GEMM_ONEDNN);
}

TEST(GemmChoice, XeonWithSkylakeXKeepsOpenBlas) {
  // What OPENBLAS_CORETYPE=SkylakeX gives: OpenBLAS is then at full width.
  EXPECT_EQ(choose(kEmeraldRapids, "SkylakeX"), MXC__GEMM_OPENBLAS);
  EXPECT_EQ(choose(kEmeraldRapids, "SapphireRapids"), MXC__GEMM_OPENBLAS);
}

TEST(GemmChoice, Zen4CountsAsAvx2Zen5AsAvx512) {
  EXPECT_EQ(mxc__gemm_cpu_isa(&kZen4), MXC__ISA_AVX2);
  EXPECT_EQ(mxc__gemm_cpu_isa(&kZen5), MXC__ISA_AVX512);
  EXPECT_EQ(choose(kZen4, "Zen"), MXC__GEMM_OPENBLAS);
  EXPECT_EQ(choose(kZen4, "SkylakeX"), MXC__GEMM_OPENBLAS);
  EXPECT_EQ(choose(kZen4, "Prescott"), MXC__GEMM_ONEDNN);
  // Zen 5 has full-width AVX-512 units: AVX2 kernels leave half unused.
  EXPECT_EQ(choose(kZen5, "Haswell"), MXC__GEMM_ONEDNN);
  EXPECT_EQ(choose(kZen5, "Zen"), MXC__GEMM_ONEDNN);
  EXPECT_EQ(choose(kZen5, "SkylakeX"), MXC__GEMM_OPENBLAS);
}

TEST(GemmChoice, Avx2OnlyCpu) {
  EXPECT_EQ(choose(kHaswell, "Haswell"), MXC__GEMM_OPENBLAS);
  EXPECT_EQ(choose(kHaswell, "Sandybridge"), MXC__GEMM_ONEDNN);
  EXPECT_EQ(choose(kHaswell, "Prescott"), MXC__GEMM_ONEDNN);
}

TEST(GemmChoice, NoAvxCpuKeepsOpenBlasWhateverItsCore) {
  EXPECT_EQ(choose(kNehalem, "Nehalem"), MXC__GEMM_OPENBLAS);
  EXPECT_EQ(choose(kNehalem, "Prescott"), MXC__GEMM_OPENBLAS);
}

TEST(GemmChoice, WithoutOneDnnOpenBlasStays) {
  EXPECT_EQ(choose(kEmeraldRapids, "Prescott", nullptr, 0),
            MXC__GEMM_OPENBLAS);
  EXPECT_EQ(choose(kEmeraldRapids, "Prescott", "onednn", 0),
            MXC__GEMM_OPENBLAS);
}

TEST(GemmChoice, WithoutOpenBlas) {
  EXPECT_EQ(choose(kHaswell, nullptr), MXC__GEMM_ONEDNN);
  EXPECT_EQ(choose(kHaswell, nullptr, nullptr, 0), MXC__GEMM_PORTABLE);
  EXPECT_EQ(choose(kHaswell, nullptr, "openblas", 1), MXC__GEMM_ONEDNN);
}

TEST(GemmChoice, EnvironmentOverrides) {
  EXPECT_EQ(choose(kEmeraldRapids, "Prescott", "openblas"),
            MXC__GEMM_OPENBLAS);
  EXPECT_EQ(choose(kEmeraldRapids, "SkylakeX", "onednn"), MXC__GEMM_ONEDNN);
  EXPECT_EQ(choose(kEmeraldRapids, "SkylakeX", "ONEDNN"), MXC__GEMM_ONEDNN);
  EXPECT_EQ(choose(kEmeraldRapids, "SkylakeX", "portable"),
            MXC__GEMM_PORTABLE);
  EXPECT_EQ(choose(kEmeraldRapids, "Prescott", "auto"), MXC__GEMM_ONEDNN);
  EXPECT_EQ(choose(kEmeraldRapids, "Prescott", ""), MXC__GEMM_ONEDNN);
}

TEST(GemmChoice, UnknownEnvironmentValueIsFlaggedAndIgnored) {
  int bad = 0;
  mxc__gemm_choice ch =
      mxc__gemm_choose(&kEmeraldRapids, "Prescott", "mkl", 1, &bad);
  EXPECT_EQ(bad, 1);
  EXPECT_EQ(ch.f32, MXC__GEMM_ONEDNN);
  EXPECT_EQ(ch.f64, MXC__GEMM_OPENBLAS);
}

TEST(GemmChoice, KindNames) {
  EXPECT_STREQ(mxc__gemm_kind_name(MXC__GEMM_ONEDNN), "onednn");
  EXPECT_STREQ(mxc__gemm_kind_name(MXC__GEMM_OPENBLAS), "openblas");
  EXPECT_STREQ(mxc__gemm_kind_name(MXC__GEMM_PORTABLE), "portable");
  EXPECT_STREQ(mxc__gemm_kind_name(9), "?");
}

}  // namespace
