/* Which GEMM runs the family's matrix products (ops/linalg/gemm.c).
 *
 * Debian's OpenBLAS picks its kernel set ("core") from a CPU table at
 * load time; a CPU newer than the table gets an older, weaker core (an
 * Intel family 6 model 207 runs the SSE3 "Prescott" kernels, 4x slower
 * than its AVX-512 ones), and nothing tells the user. oneDNN's sgemm
 * instead dispatches on the CPU's feature bits, so it is used for float32
 * whenever OpenBLAS's core targets a weaker ISA than the CPU can run.
 *
 * The choice is a pure function of (CPU description, OpenBLAS core name,
 * MXC_GEMM value) so tests can check it on faked CPUs; gemm.c applies it
 * to the host once, at the first product. Plain C: C++ tests include it. */
#ifndef MXC_OPS_LINALG_GEMM_CHOICE_H_
#define MXC_OPS_LINALG_GEMM_CHOICE_H_

#include <stdint.h>

#include "core/base/cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mxc__gemm_kind {
  MXC__GEMM_PORTABLE = 0, /* the loop in gemm.c: correct everywhere, slow */
  MXC__GEMM_OPENBLAS = 1, /* cblas_sgemm / cblas_dgemm */
  MXC__GEMM_ONEDNN = 2,   /* dnnl_sgemm (float32 only: oneDNN has no dgemm) */
} mxc__gemm_kind;

typedef struct mxc__gemm_choice {
  mxc__gemm_kind f32, f64; /* per dtype */
  const char *why;         /* static, one clause for the log line */
} mxc__gemm_choice;

/* The MXC__ISA_* level an OpenBLAS x86-64 core name's kernels use
 * ("SkylakeX" -> avx512, "Haswell"/"Zen" -> avx2, "Sandybridge" -> avx);
 * unknown names and the generic/SSE cores ("Prescott", "Nehalem", ...)
 * give MXC__ISA_BASELINE. Case-insensitive; NULL gives baseline. */
int mxc__gemm_blas_isa(const char *core);

/* The ISA level GEMM kernels can exploit on `cpu`: its ISA level, except
 * that AMD family 25 (Zen 3/Zen 4) counts as avx2 even with AVX-512: Zen 4
 * executes a 512-bit FMA as two 256-bit halves on the same units, so AVX2
 * kernels already reach its peak FLOP rate. */
int mxc__gemm_cpu_isa(const mxc__cpu_info *cpu);

/* The choice. blas_core: openblas_get_corename(), or NULL when OpenBLAS is
 * not linked. env: MXC_GEMM's value or NULL; "auto" (or NULL, or "")
 * decides from the CPU, "openblas" / "onednn" / "portable" force that
 * GEMM where it is available (else auto decides, and `why` says so); any
 * other value is treated as auto and *bad_env set to 1 (else 0) so the
 * caller can warn. have_onednn: oneDNN is linked. float64 never uses
 * oneDNN: it takes OpenBLAS when linked, the portable loop otherwise
 * (MXC_GEMM=portable makes both dtypes portable). */
mxc__gemm_choice mxc__gemm_choose(const mxc__cpu_info *cpu,
                                  const char *blas_core, const char *env,
                                  int have_onednn, int *bad_env);

/* Static name: "portable", "openblas", "onednn"; "?" otherwise. */
const char *mxc__gemm_kind_name(int kind);

/* The process's choice (computed and logged once, thread-safe). */
const mxc__gemm_choice *mxc__gemm_current(void);

/* mxc__gemm (ops/linalg/linalg.h) through a given GEMM, for tests that
 * compare every kind with the portable loop: same contract, same split
 * over the kernel pool. A kind not linked, oneDNN for float64, or a
 * dimension beyond BLAS's 32-bit range falls back to the next available
 * one (oneDNN -> OpenBLAS -> portable). */
void mxc__gemm_using(int kind, int dtype, int ta, int tb, int64_t m,
                     int64_t n, int64_t k, const void *a, int64_t lda,
                     const void *b, int64_t ldb, int accumulate, void *c,
                     int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif /* MXC_OPS_LINALG_GEMM_CHOICE_H_ */
