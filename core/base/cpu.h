/* What the host CPU can run: vendor, family/model and the vector ISA
 * extensions that both the CPU reports (CPUID) and the OS saves across
 * context switches (XGETBV), in one plain struct.
 *
 * Everything that decides on CPU features (the GEMM choice in
 * ops/linalg/gemm.c, the oneDNN backend, the benches) takes a
 * mxc__cpu_info rather than reading CPUID itself, so tests can hand it a
 * faked CPU (mxc__cpu_fake). Only mxc__cpu_host reads the real one. */
#ifndef MXC_CORE_BASE_CPU_H_
#define MXC_CORE_BASE_CPU_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Feature bits of mxc__cpu_info.features: set only when usable, i.e. the
 * CPU has the instructions AND the OS enabled their register state
 * (AVX*: XCR0 YMM; AVX-512*: also opmask and ZMM; AMX: tile config and
 * data). Linux additionally wants a process to request AMX state
 * (arch_prctl ARCH_REQ_XCOMP_PERM) before its first tile instruction;
 * oneDNN does that itself. */
enum {
  MXC__CPU_AVX = 1u << 0,
  MXC__CPU_AVX2 = 1u << 1,
  MXC__CPU_FMA = 1u << 2,
  MXC__CPU_AVX512F = 1u << 3,
  MXC__CPU_AVX512BW = 1u << 4,
  MXC__CPU_AVX512VL = 1u << 5,
  MXC__CPU_AVX512DQ = 1u << 6,
  MXC__CPU_AVX512_BF16 = 1u << 7,
  MXC__CPU_AMX_TILE = 1u << 8,
  MXC__CPU_AMX_BF16 = 1u << 9,
  MXC__CPU_AMX_INT8 = 1u << 10,
};

/* Vector ISA levels, each including the ones below it; the level names
 * the widest instruction set a kernel may use. */
enum {
  MXC__ISA_BASELINE = 0, /* x86-64 SSE2 (or not x86 at all) */
  MXC__ISA_AVX = 1,
  MXC__ISA_AVX2 = 2,   /* AVX2 and FMA */
  MXC__ISA_AVX512 = 3, /* AVX-512 F, BW, VL and DQ (Skylake-SP and later) */
};

typedef struct mxc__cpu_info {
  char vendor[13]; /* "GenuineIntel", "AuthenticAMD"; "" when unknown */
  int family;      /* display family (base + extended) */
  int model;       /* display model (extended model folded in) */
  uint32_t features; /* MXC__CPU_* bits */
} mxc__cpu_info;

/* The host CPU, read once (thread-safe; the result is immutable and lives
 * as long as the process). On non-x86 builds: vendor "", no features. */
const mxc__cpu_info *mxc__cpu_host(void);

/* Fills *out for tests: vendor (cut to 12 characters), family, model and
 * feature bits as given. */
void mxc__cpu_fake(mxc__cpu_info *out, const char *vendor, int family,
                   int model, uint32_t features);

/* The highest MXC__ISA_* level whose every feature is usable. */
int mxc__cpu_isa_level(const mxc__cpu_info *cpu);
/* Static name of an ISA level ("avx512"); "?" for an unknown level. */
const char *mxc__cpu_isa_name(int level);

/* One line for logs and benches, e.g. "AuthenticAMD family 25 model 17
 * isa=avx512 (avx avx2 fma avx512f ...)". Always NUL-terminated; returns
 * buf. */
char *mxc__cpu_describe(const mxc__cpu_info *cpu, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MXC_CORE_BASE_CPU_H_ */
