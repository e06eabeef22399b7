/* CPUID and XGETBV decoding (see cpu.h). Bit positions are those of the
 * Intel SDM vol. 2A (CPUID) and AMD APM vol. 3, which agree on every bit
 * read here. */
#include "core/base/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_CPUID 1
#endif

/* XCR0 bits: SSE and AVX (YMM upper halves) state; AVX-512 opmask, ZMM
 * upper halves of 0-15 and ZMM 16-31; AMX tile config and tile data. */
#define XCR0_YMM 0x6u
#define XCR0_ZMM 0xe0u
#define XCR0_TILE 0x60000u

void mxc__cpu_fake(mxc__cpu_info *out, const char *vendor, int family,
                   int model, uint32_t features) {
  memset(out, 0, sizeof *out);
  snprintf(out->vendor, sizeof out->vendor, "%s", vendor ? vendor : "");
  out->family = family;
  out->model = model;
  out->features = features;
}

#ifdef HAVE_CPUID
static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* Family and model as the vendors' manuals define the displayed values:
 * the extended family adds only to base family 15, the extended model
 * prefixes the model for families 6 and 15. */
static void decode_signature(uint32_t eax, mxc__cpu_info *cpu) {
  int base = (int)((eax >> 8) & 0xf);
  int model = (int)((eax >> 4) & 0xf);
  cpu->family = base == 0xf ? base + (int)((eax >> 20) & 0xff) : base;
  if (base == 0x6 || base == 0xf) model |= (int)((eax >> 16) & 0xf) << 4;
  cpu->model = model;
}

/* Leaf 7 feature bits, kept only where the OS saves the registers. */
static uint32_t leaf7_features(unsigned max_leaf, uint64_t xcr0) {
  unsigned a, b, c, d;
  if (max_leaf < 7 || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  int ymm = (xcr0 & XCR0_YMM) == XCR0_YMM;
  int zmm = ymm && (xcr0 & XCR0_ZMM) == XCR0_ZMM;
  int tile = (xcr0 & XCR0_TILE) == XCR0_TILE;
  uint32_t f = 0;
  if (ymm && (b & (1u << 5))) f |= MXC__CPU_AVX2;
  if (zmm && (b & (1u << 16))) f |= MXC__CPU_AVX512F;
  if (zmm && (b & (1u << 17))) f |= MXC__CPU_AVX512DQ;
  if (zmm && (b & (1u << 30))) f |= MXC__CPU_AVX512BW;
  if (zmm && (b & (1u << 31))) f |= MXC__CPU_AVX512VL;
  if (tile && (d & (1u << 24))) f |= MXC__CPU_AMX_TILE;
  if (tile && (d & (1u << 22))) f |= MXC__CPU_AMX_BF16;
  if (tile && (d & (1u << 25))) f |= MXC__CPU_AMX_INT8;
  if (zmm && a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) &&
      (a & (1u << 5))) {
    f |= MXC__CPU_AVX512_BF16;
  }
  return f;
}

static void detect(mxc__cpu_info *cpu) {
  unsigned a, b, c, d;
  memset(cpu, 0, sizeof *cpu);
  if (!__get_cpuid(0, &a, &b, &c, &d)) return;
  unsigned max_leaf = a;
  memcpy(cpu->vendor, &b, 4);
  memcpy(cpu->vendor + 4, &d, 4);
  memcpy(cpu->vendor + 8, &c, 4);
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  decode_signature(a, cpu);
  /* XGETBV faults unless the OS enabled XSAVE (OSXSAVE, ECX bit 27). */
  uint64_t xcr0 = (c & (1u << 27)) ? read_xcr0() : 0;
  int ymm = (xcr0 & XCR0_YMM) == XCR0_YMM;
  if (ymm && (c & (1u << 28))) cpu->features |= MXC__CPU_AVX;
  if (ymm && (c & (1u << 12))) cpu->features |= MXC__CPU_FMA;
  cpu->features |= leaf7_features(max_leaf, xcr0);
}
#else
static void detect(mxc__cpu_info *cpu) { memset(cpu, 0, sizeof *cpu); }
#endif

static mxc__cpu_info g_host;
static pthread_once_t g_host_once = PTHREAD_ONCE_INIT;
static void detect_host(void) { detect(&g_host); }

const mxc__cpu_info *mxc__cpu_host(void) {
  pthread_once(&g_host_once, detect_host);
  return &g_host;
}

static int has_all(const mxc__cpu_info *cpu, uint32_t bits) {
  return (cpu->features & bits) == bits;
}

int mxc__cpu_isa_level(const mxc__cpu_info *cpu) {
  const uint32_t avx2 = MXC__CPU_AVX | MXC__CPU_AVX2 | MXC__CPU_FMA;
  const uint32_t avx512 = avx2 | MXC__CPU_AVX512F | MXC__CPU_AVX512BW |
                          MXC__CPU_AVX512VL | MXC__CPU_AVX512DQ;
  if (has_all(cpu, avx512)) return MXC__ISA_AVX512;
  if (has_all(cpu, avx2)) return MXC__ISA_AVX2;
  if (has_all(cpu, MXC__CPU_AVX)) return MXC__ISA_AVX;
  return MXC__ISA_BASELINE;
}

const char *mxc__cpu_isa_name(int level) {
  static const char *const names[] = {"baseline", "avx", "avx2", "avx512"};
  if (level < 0 || level > MXC__ISA_AVX512) return "?";
  return names[level];
}

static const struct {
  uint32_t bit;
  const char *name;
} k_feature_names[] = {
    {MXC__CPU_AVX, "avx"},           {MXC__CPU_AVX2, "avx2"},
    {MXC__CPU_FMA, "fma"},           {MXC__CPU_AVX512F, "avx512f"},
    {MXC__CPU_AVX512BW, "avx512bw"}, {MXC__CPU_AVX512VL, "avx512vl"},
    {MXC__CPU_AVX512DQ, "avx512dq"}, {MXC__CPU_AVX512_BF16, "avx512_bf16"},
    {MXC__CPU_AMX_TILE, "amx_tile"}, {MXC__CPU_AMX_BF16, "amx_bf16"},
    {MXC__CPU_AMX_INT8, "amx_int8"},
};

char *mxc__cpu_describe(const mxc__cpu_info *cpu, char *buf, size_t size) {
  if (size == 0) return buf;
  int n = snprintf(buf, size, "%s family %d model %d isa=%s (",
                   cpu->vendor[0] ? cpu->vendor : "unknown", cpu->family,
                   cpu->model, mxc__cpu_isa_name(mxc__cpu_isa_level(cpu)));
  const char *sep = "";
  for (size_t i = 0; i < sizeof k_feature_names / sizeof k_feature_names[0];
       ++i) {
    if (n < 0 || (size_t)n >= size) return buf; /* cut: still terminated */
    if (!(cpu->features & k_feature_names[i].bit)) continue;
    n += snprintf(buf + n, size - (size_t)n, "%s%s", sep,
                  k_feature_names[i].name);
    sep = " ";
  }
  if (n >= 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, ")");
  return buf;
}
