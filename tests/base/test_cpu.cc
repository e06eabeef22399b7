// core/base/cpu: the host's CPUID reading against the kernel's own view
// (/proc/cpuinfo, which Linux also clears of features whose register
// state the OS does not save), and the ISA levels and description of
// faked CPUs.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

extern "C" {
#include "core/base/cpu.h"
}

namespace {

struct ProcCpu {
  bool found = false;
  std::string vendor;
  int family = -1, model = -1;
  std::set<std::string> flags;
};

// The first processor block of /proc/cpuinfo.
ProcCpu read_proc_cpuinfo() {
  ProcCpu p;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() && p.found) break;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "vendor_id") p.vendor = val, p.found = true;
    if (key == "cpu family") p.family = std::stoi(val);
    if (key == "model") p.model = std::stoi(val);
    if (key == "flags") {
      std::istringstream in(val);
      std::string w;
      while (in >> w) p.flags.insert(w);
    }
  }
  return p;
}

TEST(Cpu, HostMatchesProcCpuinfo) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "CPUID is read on x86-64 only";
#endif
  ProcCpu p = read_proc_cpuinfo();
  if (!p.found) GTEST_SKIP() << "no /proc/cpuinfo";
  const mxc__cpu_info *c = mxc__cpu_host();
  EXPECT_EQ(std::string(c->vendor), p.vendor);
  EXPECT_EQ(c->family, p.family);
  EXPECT_EQ(c->model, p.model);
  const struct {
    uint32_t bit;
    const char *flag;
  } bits[] = {{MXC__CPU_AVX, "avx"},           {MXC__CPU_AVX2, "avx2"},
              {MXC__CPU_FMA, "fma"},           {MXC__CPU_AVX512F, "avx512f"},
              {MXC__CPU_AVX512BW, "avx512bw"}, {MXC__CPU_AVX512VL, "avx512vl"},
              {MXC__CPU_AVX512DQ, "avx512dq"},
              {MXC__CPU_AVX512_BF16, "avx512_bf16"},
              {MXC__CPU_AMX_TILE, "amx_tile"}, {MXC__CPU_AMX_BF16, "amx_bf16"},
              {MXC__CPU_AMX_INT8, "amx_int8"}};
  for (const auto &b : bits) {
    EXPECT_EQ((c->features & b.bit) != 0, p.flags.count(b.flag) == 1)
        << b.flag;
  }
  EXPECT_EQ(mxc__cpu_host(), c) << "read once, same object";
}

TEST(Cpu, IsaLevelNeedsEveryFeatureOfTheLevel) {
  const uint32_t avx2 = MXC__CPU_AVX | MXC__CPU_AVX2 | MXC__CPU_FMA;
  const uint32_t avx512 = avx2 | MXC__CPU_AVX512F | MXC__CPU_AVX512BW |
                          MXC__CPU_AVX512VL | MXC__CPU_AVX512DQ;
  mxc__cpu_info c;
  mxc__cpu_fake(&c, "GenuineIntel", 6, 207, avx512 | MXC__CPU_AMX_TILE);
  EXPECT_EQ(mxc__cpu_isa_level(&c), MXC__ISA_AVX512);
  mxc__cpu_fake(&c, "GenuineIntel", 6, 85, avx512 & ~MXC__CPU_AVX512DQ);
  EXPECT_EQ(mxc__cpu_isa_level(&c), MXC__ISA_AVX2);
  mxc__cpu_fake(&c, "GenuineIntel", 6, 60, avx2 & ~MXC__CPU_FMA);
  EXPECT_EQ(mxc__cpu_isa_level(&c), MXC__ISA_AVX);
  mxc__cpu_fake(&c, "GenuineIntel", 6, 23, 0);
  EXPECT_EQ(mxc__cpu_isa_level(&c), MXC__ISA_BASELINE);
  EXPECT_STREQ(mxc__cpu_isa_name(MXC__ISA_AVX512), "avx512");
  EXPECT_STREQ(mxc__cpu_isa_name(7), "?");
}

TEST(Cpu, DescribeNamesVendorModelIsaAndFeatures) {
  mxc__cpu_info c;
  mxc__cpu_fake(&c, "AuthenticAMD", 25, 17,
                MXC__CPU_AVX | MXC__CPU_AVX2 | MXC__CPU_FMA);
  char buf[256];
  EXPECT_STREQ(mxc__cpu_describe(&c, buf, sizeof buf),
               "AuthenticAMD family 25 model 17 isa=avx2 (avx avx2 fma)");
  mxc__cpu_fake(&c, "", 0, 0, 0);
  EXPECT_STREQ(mxc__cpu_describe(&c, buf, sizeof buf),
               "unknown family 0 model 0 isa=baseline ()");
  // Cut short, still terminated.
  mxc__cpu_fake(&c, "AVendorNameThatIsTooLong", 6, 1, 0x7ff);
  EXPECT_STREQ(c.vendor, "AVendorNameT");
  char small[20];
  mxc__cpu_describe(&c, small, sizeof small);
  EXPECT_EQ(std::string(small), std::string("AVendorNameT family"));
}

}  // namespace
