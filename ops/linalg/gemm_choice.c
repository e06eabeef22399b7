/* The GEMM choice (see gemm_choice.h): pure functions of their arguments,
 * no state, so the unit test can run them over faked CPUs. */
#include "ops/linalg/gemm_choice.h"

#include <stddef.h>
#include <strings.h>

/* OpenBLAS's x86-64 core names (its dynamic-arch table) and the widest
 * ISA their SGEMM kernels use. The AMD Bulldozer line's cores (FMA4/AVX,
 * Excavator included) count as avx; every name not listed (Prescott,
 * Core2, Nehalem, Atom, Opteron, Barcelona, ...) is SSE-only. */
static const struct {
  const char *core;
  int isa;
} k_blas_cores[] = {
    {"SapphireRapids", MXC__ISA_AVX512}, {"Cooperlake", MXC__ISA_AVX512},
    {"SkylakeX", MXC__ISA_AVX512},       {"Haswell", MXC__ISA_AVX2},
    {"Zen", MXC__ISA_AVX2},              {"Sandybridge", MXC__ISA_AVX},
    {"Bulldozer", MXC__ISA_AVX},         {"Piledriver", MXC__ISA_AVX},
    {"Steamroller", MXC__ISA_AVX},       {"Excavator", MXC__ISA_AVX},
};

int mxc__gemm_blas_isa(const char *core) {
  if (!core) return MXC__ISA_BASELINE;
  for (size_t i = 0; i < sizeof k_blas_cores / sizeof k_blas_cores[0]; ++i) {
    if (!strcasecmp(core, k_blas_cores[i].core)) return k_blas_cores[i].isa;
  }
  return MXC__ISA_BASELINE;
}

int mxc__gemm_cpu_isa(const mxc__cpu_info *cpu) {
  int isa = mxc__cpu_isa_level(cpu);
  int zen3_4 = !strcasecmp(cpu->vendor, "AuthenticAMD") && cpu->family == 25;
  if (zen3_4 && isa > MXC__ISA_AVX2) isa = MXC__ISA_AVX2;
  return isa;
}

const char *mxc__gemm_kind_name(int kind) {
  switch (kind) {
    case MXC__GEMM_PORTABLE: return "portable";
    case MXC__GEMM_OPENBLAS: return "openblas";
    case MXC__GEMM_ONEDNN: return "onednn";
    default: return "?";
  }
}

/* MXC_GEMM's value as a kind, -1 for auto, -2 for anything else. */
static int parse_env(const char *env) {
  if (!env || !*env || !strcasecmp(env, "auto")) return -1;
  for (int k = MXC__GEMM_PORTABLE; k <= MXC__GEMM_ONEDNN; ++k) {
    if (!strcasecmp(env, mxc__gemm_kind_name(k))) return k;
  }
  return -2;
}

static mxc__gemm_choice make(mxc__gemm_kind f32, int have_blas,
                             const char *why) {
  mxc__gemm_choice c;
  c.f32 = f32;
  c.f64 = (f32 == MXC__GEMM_PORTABLE || !have_blas) ? MXC__GEMM_PORTABLE
                                                   : MXC__GEMM_OPENBLAS;
  c.why = why;
  return c;
}

static mxc__gemm_choice choose_auto(const mxc__cpu_info *cpu,
                                    const char *blas_core, int have_onednn) {
  int have_blas = blas_core != NULL;
  if (!have_blas) {
    return have_onednn
               ? make(MXC__GEMM_ONEDNN, 0, "OpenBLAS is not linked")
               : make(MXC__GEMM_PORTABLE, 0, "no BLAS is linked");
  }
  if (mxc__gemm_blas_isa(blas_core) >= mxc__gemm_cpu_isa(cpu)) {
    return make(MXC__GEMM_OPENBLAS, 1,
                "OpenBLAS's kernels use the widest ISA the CPU runs at speed");
  }
  return have_onednn
             ? make(MXC__GEMM_ONEDNN, 1,
                    "OpenBLAS picked kernels for a weaker ISA than the CPU's")
             : make(MXC__GEMM_OPENBLAS, 1,
                    "OpenBLAS's kernels are weaker than the CPU, but oneDNN "
                    "is not linked");
}

mxc__gemm_choice mxc__gemm_choose(const mxc__cpu_info *cpu,
                                  const char *blas_core, const char *env,
                                  int have_onednn, int *bad_env) {
  int want = parse_env(env);
  *bad_env = want == -2;
  int have_blas = blas_core != NULL;
  if (want == MXC__GEMM_PORTABLE) {
    return make(MXC__GEMM_PORTABLE, have_blas, "forced by MXC_GEMM");
  }
  if ((want == MXC__GEMM_OPENBLAS && have_blas) ||
      (want == MXC__GEMM_ONEDNN && have_onednn)) {
    return make((mxc__gemm_kind)want, have_blas, "forced by MXC_GEMM");
  }
  mxc__gemm_choice c = choose_auto(cpu, blas_core, have_onednn);
  if (want >= 0) c.why = "MXC_GEMM names a GEMM this build lacks; auto";
  return c;
}
