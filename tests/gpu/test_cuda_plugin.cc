// The real CUDA plug-in (backends/cuda, libmxc_cuda.so.1) through the
// public API. Without a usable GPU (no driver, no device: every build
// machine) the reason must be one of the plug-in's own and the device
// cases skip; on a GPU machine (scripts/gpu_check.sh) they run: copies of
// many sizes through device memory, views, device-to-device, the pool,
// DLPack and out-of-memory. Also the NCCL table's open (the KVStore's
// GPU sums), in child processes: NCCL is opened once per process.
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/gpu.h"
#include "core/base/nccl_plugin.h"
#include "core/op/backend.h"
#include "core/op/registry_internal.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/graph_gpu_check.h"

namespace {

using mxct::LastError;
using mxct::Make;
using mxct::ToHost;

int GpuCount() {
  int n = -1;
  EXPECT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n), MXC_OK);
  return n;
}

#define NEED_GPU()                                                     \
  do {                                                                 \
    if (GpuCount() == 0) {                                             \
      mxc_device_check(MXC_DEVICE_GPU, 0);                             \
      GTEST_SKIP() << "no usable GPU: " << LastError();                \
    }                                                                  \
  } while (0)

// ---- the NCCL table's open, in a child process (this program again,
// MXC_TEST_NCCL_CHILD set: it answers on stdout before any test runs) ----

// In the child: "nccl_open RC MESSAGE-OR-VERSION".
int NcclChild() {
  if (!std::getenv("MXC_TEST_NCCL_CHILD")) return 0;
  void *h = dlopen(std::getenv("MXC_CUDA_PLUGIN"), RTLD_NOW | RTLD_LOCAL);
  void *sym = h ? dlsym(h, MXC__NCCL_PLUGIN_ENTRY) : nullptr;
  if (!sym) {
    std::printf("nccl_open -1 no table: %s\n", dlerror());
    std::exit(0);
  }
  const mxc__nccl_plugin *t =
      reinterpret_cast<mxc__nccl_plugin_entry_fn>(sym)();
  char version[64] = "", why[1024] = "";
  int rc = t->open(version, sizeof version, why, sizeof why);
  std::printf("nccl_open %d %s\n", rc, rc == MXC_OK ? version : why);
  std::exit(0);
}
const int g_nccl_child = NcclChild();

// open() with MXC_NCCL_LIBRARY = lib, in a child: *rc and its text.
std::string NcclOpen(const std::string &lib, int *rc) {
  char self[4096] = "";  // this program (in the shell, /proc/self is sh)
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  self[n > 0 ? n : 0] = '\0';
  std::string cmd = "MXC_TEST_NCCL_CHILD=1 MXC_NCCL_LIBRARY='" + lib +
                    "' '" + self + "' 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) pclose(p);
  size_t at = out.find("nccl_open ");
  *rc = at == std::string::npos ? -2 : std::atoi(out.c_str() + at + 10);
  return out;
}

TEST(CudaNccl, OpenSaysWhyNcclCannotBeUsed) {
  int rc = 0;
  std::string w = NcclOpen("/nonexistent/libnccl.so.2", &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED) << w;
  EXPECT_NE(w.find("NCCL could not be loaded"), std::string::npos) << w;
  EXPECT_NE(w.find("/nonexistent/libnccl.so.2"), std::string::npos) << w;
  EXPECT_NE(w.find("libnccl2 package"), std::string::npos) << w;
  w = NcclOpen("libm.so.6", &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED) << w;
  EXPECT_NE(w.find("NCCL was loaded but has no ncclGetVersion"),
            std::string::npos)
      << w;
  // Built here only (Bazel's env): the stand-in and the toolkit's NCCL.
  if (const char *old = std::getenv("MXC_TEST_OLD_NCCL")) {
    w = NcclOpen(old, &rc);
    EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED) << w;
    EXPECT_NE(w.find("NCCL 2.3.7 ("), std::string::npos) << w;
    EXPECT_NE(w.find("is not NCCL 2.4 or a later 2.x"), std::string::npos)
        << w;
  }
  if (const char *real = std::getenv("MXC_TEST_NCCL_LIBRARY")) {
    w = NcclOpen(real, &rc);
    EXPECT_EQ(rc, MXC_OK) << w;
    EXPECT_NE(w.find("nccl_open 0 NCCL 2."), std::string::npos) << w;
    std::printf("%s", w.c_str());
  }
}

// The plug-in loads here; without a GPU the reason is the driver's or
// the device count's, never a loader error (the runtime is static).
TEST(Cuda, LoadsAndSaysWhy) {
  int on = -1;
  ASSERT_EQ(mxc_feature_enabled("CUDA", &on), MXC_OK);
  if (GpuCount() > 0) {
    EXPECT_EQ(on, 1);
    EXPECT_EQ(mxc_device_check(MXC_DEVICE_GPU, 0), MXC_OK) << LastError();
    return;
  }
  EXPECT_EQ(on, 0);
  ASSERT_EQ(mxc_device_check(MXC_DEVICE_GPU, 0), MXC_ERR_UNSUPPORTED);
  std::string why = LastError();
  EXPECT_TRUE(why.find("NVIDIA driver") != std::string::npos ||
              why.find("reports no GPU") != std::string::npos)
      << why;
  EXPECT_EQ(why.find("could not be loaded"), std::string::npos) << why;
  std::printf("no usable GPU here: %s\n", why.c_str());
}

// Every kernel of the plug-in's table names an operator of this build and
// is attached to it (no GPU needed: the table is read without the driver).
TEST(Cuda, EveryKernelAttaches) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  ASSERT_NE(p, nullptr) << mxc__gpu_status();
  ASSERT_GT(p->n_kernels, 0);
  for (int i = 0; i < p->n_kernels; ++i) {
    const mxc__op *op = mxc__op_find(p->kernels[i].op);
    ASSERT_NE(op, nullptr) << p->kernels[i].op;
    bool attached = false;
    for (int k = 0; const mxc__kernel *kern = mxc__op_kernel_at(op, k); ++k) {
      attached |= kern->backend->dev_type == MXC_DEVICE_GPU;
    }
    EXPECT_TRUE(attached) << p->kernels[i].op;
  }
}

mxc__shape ShapeOf(const std::vector<int64_t> &d) {
  mxc__shape s = {};
  s.ndim = (int)d.size();
  for (size_t i = 0; i < d.size(); ++i) s.dims[i] = d[i];
  return s;
}

// Every entry of the plug-in's accepts table names a row, and the rows it
// covers decline, through libmxc's kernel choice (core/op/backend.h, with
// the call's shapes; no device, so nothing is compiled), the parameter
// forms their run refuses, and take the others. No GPU needed.
std::string GpuDeclines(const char *name,
                        const std::vector<std::pair<const char *, const char *>>
                            &params,
                        const std::vector<std::vector<int64_t>> &in,
                        const std::vector<std::vector<int64_t>> &out) {
  const mxc__op *op = mxc__op_find(name);
  EXPECT_NE(op, nullptr) << name;
  std::vector<const char *> k, v;
  for (const auto &p : params) k.push_back(p.first), v.push_back(p.second);
  void *param = nullptr;
  if (!op || mxc__op_parse_params(op, k.data(), v.data(), (int)k.size(),
                                  &param) != MXC_OK) {
    ADD_FAILURE() << name << ": " << LastError();
    return "parameters not parsed";
  }
  std::vector<mxc__shape> ish, osh;
  for (const auto &d : in) ish.push_back(ShapeOf(d));
  for (const auto &d : out) osh.push_back(ShapeOf(d));
  std::vector<int> idt(in.size(), MXC_DTYPE_FLOAT32),
      odt(out.size(), MXC_DTYPE_FLOAT32);
  char why[512] = "";
  mxc__call_info info = {ish.data(), osh.data(), nullptr, -1, 1, why,
                         sizeof why};
  mxc__call_types t = {idt.data(), nullptr, (int)in.size(), odt.data(),
                       nullptr, (int)out.size(), &info};
  bool taken = mxc__op_kernel(op, MXC_DEVICE_GPU, param, &t) != nullptr;
  mxc__free(param);
  if (taken) return "";
  EXPECT_NE(why[0], '\0') << name << ": declined without a reason";
  return why;
}

TEST(Cuda, AcceptsTableDeclinesWhatRunsRefuse) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  ASSERT_NE(p, nullptr) << mxc__gpu_status();
  ASSERT_GT(p->n_accepts, 0);
  std::set<std::string> rows;
  for (int i = 0; i < p->n_kernels; ++i) rows.insert(p->kernels[i].op);
  for (int i = 0; i < p->n_accepts; ++i) {
    EXPECT_TRUE(rows.count(p->accepts[i].op)) << p->accepts[i].op;
  }
  using V = std::vector<std::vector<int64_t>>;
  V x = {{2, 3, 4}}, xg = {{2, 3, 4}, {3}};
  EXPECT_EQ(GpuDeclines("LeakyReLU", {{"act_type", "leaky"}}, x, x), "");
  EXPECT_NE(GpuDeclines("LeakyReLU", {{"act_type", "prelu"}}, xg, x)
                .find("act_type prelu has no GPU kernel"),
            std::string::npos);
  EXPECT_NE(GpuDeclines("_backward_LeakyReLU", {{"act_type", "rrelu"}},
                        {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, x)
                .find("act_type rrelu"),
            std::string::npos);
  V img = {{1, 1, 4, 4}}, pooled = {{1, 1, 3, 3}};
  EXPECT_EQ(GpuDeclines("Pooling", {{"kernel", "(2,2)"}, {"pool_type", "max"}},
                        img, pooled),
            "");
  EXPECT_NE(GpuDeclines("Pooling",
                        {{"kernel", "(2,2)"}, {"pool_type", "lp"},
                         {"p_value", "2"}},
                        img, pooled),
            "");
  EXPECT_EQ(GpuDeclines("softmax", {}, {{2, 5}}, {{2, 5}}), "");
  EXPECT_NE(GpuDeclines("softmax", {{"temperature", "2"}}, {{2, 5}}, {{2, 5}})
                .find("temperature"),
            std::string::npos);
  EXPECT_NE(GpuDeclines("_backward_SoftmaxOutput",
                        {{"normalization", "valid"}}, {{4, 5}, {4}}, {{4, 5}})
                .find("'valid'"),
            std::string::npos);
  EXPECT_EQ(GpuDeclines("_backward_SoftmaxOutput",
                        {{"normalization", "batch"}}, {{4, 5}, {4}}, {{4, 5}}),
            "");
  V bn_in = {{2, 3, 4}, {3}, {3}, {3}, {3}}, bn_out = {{2, 3, 4}, {3}, {3}};
  EXPECT_EQ(GpuDeclines("BatchNorm", {}, bn_in, bn_out), "");
  EXPECT_NE(GpuDeclines("BatchNorm", {{"eps", "1e-6"}}, bn_in, bn_out)
                .find("eps"),
            std::string::npos);
  std::string w = GpuDeclines(
      "_fused_elemwise", {{"num_inputs", "1"}, {"program", "exp(i0);tanh(r0)"}},
      {{5}}, {{5}});
  EXPECT_NE(w.find("('tanh') has no GPU micro-op"), std::string::npos) << w;
  EXPECT_EQ(GpuDeclines("_fused_elemwise",
                        {{"num_inputs", "1"}, {"program", "exp(i0);relu(r0)"}},
                        {{5}}, {{5}}),
            "");
}

// ---- docs/gpu-operators.md: every registered operator against the
// plug-in's table. The committed file must equal what this build renders
// (the test fails while it is stale); under `bazel run` (which sets
// BUILD_WORKSPACE_DIRECTORY) the test rewrites it instead. ----

const char kOpsDoc[] = "docs/gpu-operators.md";

std::string Slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The dtypes a row takes, asked of its supports with every input and
// output of one dtype (the operator's declared counts).
std::string RowDtypes(const mxc__gpu_kernel &k, const mxc__op *op) {
  if (!k.supports) return "float32";
  int variadic = 0;
  int n_in = mxc__op_declared_inputs(op, &variadic);
  if (variadic) n_in = 2;
  int n_out = op->n_outputs > 0 ? op->n_outputs : 1;
  std::string s;
  const std::pair<int, const char *> kinds[] = {
      {MXC_DTYPE_FLOAT32, "float32"},
      {MXC_DTYPE_FLOAT64, "float64"},
      {MXC_DTYPE_FLOAT16, "float16"},
      {MXC_DTYPE_BFLOAT16, "bfloat16"}};
  for (const auto &d : kinds) {
    std::vector<int> dt((size_t)(n_in + n_out), d.first);
    if (!k.supports(dt.data(), n_in, n_out)) continue;
    s += (s.empty() ? "" : ", ") + std::string(d.second);
  }
  return s.empty() ? "(other)" : s;
}

std::string RenderOpsDoc(const mxc__gpu_plugin *p) {
  std::map<std::string, std::string> dense, sparse;
  for (int i = 0; i < p->n_kernels; ++i) {
    const mxc__op *op = mxc__op_find(p->kernels[i].op);
    if (op) dense[op->name] = RowDtypes(p->kernels[i], op);
  }
  for (int i = 0; i < p->n_sparse_kernels; ++i) {
    sparse[p->sparse_kernels[i].k.op] = "";
  }
  EXPECT_EQ(mxc__registry_ensure(), MXC_OK);
  const mxc__registry *r = mxc__registry_get();
  std::vector<std::string> names;
  for (int i = 0; i < r->n_ops; ++i) names.push_back(r->ops[i]->name);
  std::sort(names.begin(), names.end());
  std::ostringstream with, without;
  int n_with = 0, n_hidden = 0, n_hidden_with = 0;
  for (const auto &n : names) {
    bool hidden = mxc__op_find(n.c_str())->hidden != 0;
    n_hidden += hidden;
    auto d = dense.find(n);
    if (d == dense.end()) {
      without << "`" << n << "`" << (sparse.count(n) ? " (CSR `dot` only)" : "")
              << "\n";
      continue;
    }
    ++n_with;
    n_hidden_with += hidden;
    with << "| `" << n << "` | " << d->second
         << (sparse.count(n) ? "; CSR lhs (cuSPARSE)" : "") << " |\n";
  }
  std::ostringstream doc;
  doc << "# Operators on the GPU\n\n"
      << "Generated; do not edit. After adding a kernel row to the CUDA "
         "plug-in\n(backends/cuda/plugin.c's table) or an operator, run\n\n"
      << "    bazel run //tests/gpu:test_cuda_plugin -- "
         "--gtest_filter=Cuda.OperatorsOnTheGpuDoc\n\n"
      << "which rewrites this file from the operator registry and the "
         "plug-in's\nkernel table; `bazel test //tests/gpu:test_cuda_plugin` "
         "fails while it is\nstale. None of these kernels has run on a GPU "
         "yet (docs/gpu.md).\n\n"
      << n_with << " of " << names.size()
      << " registered operators have a GPU kernel, " << n_hidden_with
      << " of them among the\n" << n_hidden
      << " hidden ones (`_backward_` gradients and other internal "
         "operators);\nthe other "
      << names.size() - n_with
      << " run on the CPU only. The dtypes are those the row's own\n"
         "check accepts (every input and output of one dtype).\n\n"
      << "## With a GPU kernel\n\n| operator | dtypes |\n|---|---|\n"
      << with.str() << "\n## Without a GPU kernel\n\n"
      << "One a line (a GPU array gets `no kernel for gpu(N)`, or the CPU\n"
         "fallback where it exists):\n\n"
      << without.str();
  return doc.str();
}

TEST(Cuda, OperatorsOnTheGpuDoc) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  ASSERT_NE(p, nullptr) << mxc__gpu_status();
  // One row per operator: a second row of a name would never run.
  std::set<std::string> seen;
  for (int i = 0; i < p->n_kernels; ++i) {
    EXPECT_TRUE(seen.insert(p->kernels[i].op).second)
        << p->kernels[i].op << " has two rows in the plug-in's table";
  }
  std::string doc = RenderOpsDoc(p);
  const char *ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (ws && *ws) {
    std::string path = std::string(ws) + "/" + kOpsDoc;
    std::ofstream(path, std::ios::binary) << doc;
    std::printf("wrote %s\n", path.c_str());
    return;
  }
  std::string committed = Slurp(kOpsDoc);
  ASSERT_FALSE(committed.empty()) << "cannot read " << kOpsDoc;
  EXPECT_TRUE(committed == doc)
      << kOpsDoc << " is stale: run `bazel run //tests/gpu:test_cuda_plugin "
      << "-- --gtest_filter=Cuda.OperatorsOnTheGpuDoc`";
}

// bench/gpu's ResNet-50 training graph (scripts/make_resnet.py's, from
// MXC_RESNET50_SYMBOL), bound on the CPU as a GPU bind makes it (the
// executor's own device predicate, core/exec's MXC__BIND_GRAPH_OF_GPU: no
// BatchNorm-relu fusion, no channel-last values), with the executor's
// fusion (bench/gpu's default: the backward fuses add + the relu
// gradient) and without, node by node against the real plug-in's table
// and plans: a node without a GPU run would fail bench/gpu there, so it
// fails here (no GPU needed). Batch 4 of 64 x 64 keeps 16 values per
// channel in the last BatchNorms (the GPU's batch statistics need 2).
std::string Unsupported(int flags, int as_gpu, int *count, int *nodes) {
  const char *path = std::getenv("MXC_RESNET50_SYMBOL");
  mxc_symbol sym = nullptr;
  EXPECT_EQ(mxc_symbol_load(path ? path : "bench/resnet50_train-symbol.json",
                            &sym),
            MXC_OK)
      << LastError() << " (set MXC_RESNET50_SYMBOL)";
  if (!sym) return "no symbol";
  const char *names[2] = {"data", "softmax_label"};
  int ndims[2] = {4, 1};
  int64_t dims[5] = {4, 3, 64, 64, 4};
  int reqs[2] = {MXC_REQ_NULL, MXC_REQ_NULL};
  std::vector<char> out(1 << 16);
  *count = mxct_gpu_graph_unsupported(sym, 2, names, ndims, dims, 2, names,
                                      reqs, flags, as_gpu, out.data(),
                                      out.size(), nodes);
  mxc_symbol_free(sym);
  EXPECT_GE(*count, 0) << LastError();
  return out.data();
}

TEST(Cuda, ResNet50TrainingGraphHasGpuKernels) {
  for (int flags : {MXC_BIND_DEFAULT, MXC_BIND_NO_FUSION}) {
    int bad = -1, nodes = 0;
    std::string list = Unsupported(flags, 1, &bad, &nodes);
    EXPECT_EQ(bad, 0) << "nodes bench/gpu's ResNet-50 step would not run on "
                         "the GPU (flags "
                      << flags << "):\n"
                      << list;
    EXPECT_GT(nodes, 300);  // forward and backward of 53 convolutions
    std::printf("ResNet-50 training graph, flags %d: %d nodes, %d without a "
                "GPU run\n",
                flags, nodes, bad);
  }
}

// The check sees the device predicate: the plain CPU graph of the same
// symbol fuses BatchNorm with relu (a CPU-only operator), which the check
// lists; so a GPU graph bound without the executor's predicate would fail.
TEST(Cuda, ResNet50CpuGraphIsNotTheGpuGraph) {
  int bad = -1, nodes = 0;
  std::string list = Unsupported(MXC_BIND_DEFAULT, 0, &bad, &nodes);
  EXPECT_GT(bad, 0);
  EXPECT_NE(list.find("(_FusedBatchNormReLU)"), std::string::npos) << list;
}

TEST(Cuda, RoundTripsOfManySizes) {
  NEED_GPU();
  for (int64_t n : {0, 1, 63, 64, 65, 1000, 1 << 20, (1 << 22) + 3}) {
    std::vector<float> src(n);
    for (int64_t i = 0; i < n; ++i) src[i] = (float)((i * 7919) % 1001) - 500;
    mxc_ndarray g = Make({n}, MXC_DEVICE_GPU, 0);
    ASSERT_EQ(mxc_ndarray_copy_from_host(g, src.data(), n * 4), MXC_OK)
        << LastError();
    EXPECT_EQ(ToHost(g, n), src) << "n=" << n;
    mxc_ndarray_free(g);
  }
}

TEST(Cuda, ViewsAndDeviceToDevice) {
  NEED_GPU();
  int last = GpuCount() - 1;
  std::vector<float> src(24);
  for (int i = 0; i < 24; ++i) src[i] = (float)i;
  mxc_ndarray a = Make({6, 4}, MXC_DEVICE_GPU, 0);
  mxc_ndarray b = Make({6, 4}, MXC_DEVICE_GPU, last);
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, src.data(), 96), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy(a, b), MXC_OK) << LastError();
  mxc_ndarray rows = nullptr;
  ASSERT_EQ(mxc_ndarray_slice(b, 2, 4, &rows), MXC_OK);
  EXPECT_EQ(ToHost(rows, 8),
            std::vector<float>(src.begin() + 8, src.begin() + 16));
  mxc_ndarray c = Make({2, 4}, MXC_DEVICE_CPU, 0);
  ASSERT_EQ(mxc_ndarray_copy(rows, c), MXC_OK);
  EXPECT_EQ(ToHost(c, 8),
            std::vector<float>(src.begin() + 8, src.begin() + 16));
  for (mxc_ndarray x : {a, b, rows, c}) mxc_ndarray_free(x);
}

TEST(Cuda, PoolReusesAndReleases) {
  NEED_GPU();
  ASSERT_EQ(mxc_storage_release_cached(MXC_DEVICE_GPU, 0), MXC_OK);
  int64_t hits0 = 0, hits1 = 0, cached = -1;
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_GPU, 0, MXC_STORAGE_POOL_HITS, &hits0),
            MXC_OK);
  for (int i = 0; i < 3; ++i) {
    mxc_ndarray g = Make({1 << 16}, MXC_DEVICE_GPU, 0);
    ASSERT_EQ(mxc_ndarray_wait_to_write(g), MXC_OK);
    mxc_ndarray_free(g);
    ASSERT_EQ(mxc_wait_all(), MXC_OK);
  }
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_GPU, 0, MXC_STORAGE_POOL_HITS, &hits1),
            MXC_OK);
  int pool_on = std::getenv("MXC_STORAGE_POOL") == nullptr ||
                std::string(std::getenv("MXC_STORAGE_POOL")) != "0";
  if (pool_on) {
    EXPECT_GE(hits1 - hits0, 2);
  }
  ASSERT_EQ(mxc_storage_release_cached(MXC_DEVICE_GPU, 0), MXC_OK);
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_GPU, 0, MXC_STORAGE_BYTES_CACHED,
                             &cached),
            MXC_OK);
  EXPECT_EQ(cached, 0);
}

TEST(Cuda, DlpackNamesTheDevice) {
  NEED_GPU();
  mxc_ndarray g = Make({3}, MXC_DEVICE_GPU, 0);
  DLManagedTensor *t = nullptr;
  ASSERT_EQ(mxc_ndarray_to_dlpack(g, &t), MXC_OK) << LastError();
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(t->dl_tensor.device.device_id, 0);
  t->deleter(t);
  mxc_ndarray_free(g);
}

TEST(Cuda, OutOfDeviceMemoryIsOom) {
  NEED_GPU();
  int64_t shape[1] = {(int64_t)1 << 40};  // 4 TiB of float32
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_GPU, 0,
                               0, &a),
            MXC_ERR_OOM)
      << LastError();
  mxc_ndarray small = Make({16}, MXC_DEVICE_GPU, 0);  // the device still works
  std::vector<float> v(16, 3.f);
  ASSERT_EQ(mxc_ndarray_copy_from_host(small, v.data(), 64), MXC_OK)
      << LastError();
  EXPECT_EQ(ToHost(small, 16), v);
  mxc_ndarray_free(small);
}

}  // namespace
