// backends/cuda/dynlib.h: opening a toolkit library on first use. The C
// library's libm stands in for cuBLAS: what matters is which file opens,
// which symbols resolve and what a failure says.
#include "backends/cuda/dynlib.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"

namespace {

const char *const kNoFile[] = {"libmxc-no-such-library.so.13", nullptr};
const char *const kLibm[] = {"libmxc-no-such-library.so.13", "libm.so.6",
                             nullptr};
const char *const kCos[] = {"cos", "sqrt", nullptr};
const char *const kMissing[] = {"cos", "mxc_no_such_symbol", nullptr};

mxc__cuda_dynlib make(const char *const *files, const char *const *syms,
                      void **fns) {
  mxc__cuda_dynlib lib = {};
  lib.what = "cuFake";
  lib.install = "the cuFake package";
  lib.files = files;
  lib.symbols = syms;
  lib.fns = fns;
  lib.mu = PTHREAD_MUTEX_INITIALIZER;
  return lib;
}

TEST(CudaDynlib, ResolvesFromTheFirstFileThatOpens) {
  void *fns[2] = {};
  mxc__cuda_dynlib lib = make(kLibm, kCos, fns);
  char why[256] = "";
  ASSERT_EQ(mxc__cuda_dynlib_load(&lib, why, sizeof why), MXC_OK) << why;
  auto cosf = reinterpret_cast<double (*)(double)>(fns[0]);
  auto sqrtf = reinterpret_cast<double (*)(double)>(fns[1]);
  EXPECT_EQ(cosf(0.5), std::cos(0.5));
  EXPECT_EQ(sqrtf(2.0), std::sqrt(2.0));
}

TEST(CudaDynlib, AMissingFileNamesTheLibraryAndWhatToInstall) {
  void *fns[2] = {};
  mxc__cuda_dynlib lib = make(kNoFile, kCos, fns);
  char why[512] = "";
  ASSERT_EQ(mxc__cuda_dynlib_load(&lib, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  std::string w = why;
  EXPECT_NE(w.find("cuFake could not be loaded"), std::string::npos) << w;
  EXPECT_NE(w.find("libmxc-no-such-library.so.13"), std::string::npos) << w;
  EXPECT_NE(w.find("install the cuFake package"), std::string::npos) << w;
  // Remembered: the same answer without trying again.
  char again[512] = "";
  EXPECT_EQ(mxc__cuda_dynlib_load(&lib, again, sizeof again),
            MXC_ERR_UNSUPPORTED);
  EXPECT_EQ(w, again);
}

TEST(CudaDynlib, AMissingSymbolSaysTheLibraryIsTooOld) {
  void *fns[2] = {};
  mxc__cuda_dynlib lib = make(kLibm, kMissing, fns);
  char why[512] = "";
  ASSERT_EQ(mxc__cuda_dynlib_load(&lib, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  std::string w = why;
  EXPECT_NE(w.find("has no mxc_no_such_symbol"), std::string::npos) << w;
  EXPECT_NE(w.find("older"), std::string::npos) << w;
}

TEST(CudaDynlib, ATruncatedMessageIsStillTerminated) {
  void *fns[2] = {};
  mxc__cuda_dynlib lib = make(kNoFile, kCos, fns);
  char why[8];
  ASSERT_EQ(mxc__cuda_dynlib_load(&lib, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_EQ(std::string(why), "cuFake ");
}

TEST(CudaDynlib, ManyThreadsLoadOnce) {
  void *fns[2] = {};
  mxc__cuda_dynlib lib = make(kLibm, kCos, fns);
  std::vector<std::thread> ts;
  std::vector<int> rc(8, -1);
  for (int i = 0; i < 8; ++i) {
    ts.emplace_back([&, i] { rc[i] = mxc__cuda_dynlib_load(&lib, nullptr, 0); });
  }
  for (auto &t : ts) t.join();
  for (int r : rc) EXPECT_EQ(r, MXC_OK);
  EXPECT_EQ(reinterpret_cast<double (*)(double)>(fns[0])(1.0), std::cos(1.0));
}

}  // namespace
