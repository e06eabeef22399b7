// Apache MXNet's NDArray list format (.params). The files read here are
// written by scripts/make_mxnet_params.py (numpy + struct from
// docs/mxnet-format.md, not mxc's writer; the genrule in BUILD), and what
// mxc writes is checked by that script's own reader. The values are a
// formula of (array position k, element index i) computed on both sides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "mxc/mxc.h"

// The in-memory reader (core/ndarray/mxnet_format.h, which C++ cannot
// include: its structs use C11 atomics); the list stays opaque here.
extern "C" {
typedef struct mxc__ndarray_list mxc__ndarray_list;
int mxc__mxnet_load_mem(const void *buf, size_t n, const char *name,
                        mxc__ndarray_list **out);
void mxc__ndarray_list_free(mxc__ndarray_list *list);
}

namespace {

const char *kScript = "scripts/make_mxnet_params.py";

std::string err() { return mxc_last_error(); }

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

std::string golden(const std::string &name) {
  return "tests/io/mxnet/" + name + ".params";
}

std::vector<char> slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

void spit(const std::string &p, const std::vector<char> &b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(b.data(), (std::streamsize)b.size());
}

// Runs the independent reader on a file mxc wrote: exit 0 when it holds
// exactly the arrays and names of `name`.
bool python_check(const std::string &name, const std::string &path) {
  std::string cmd =
      "/usr/bin/python3 " + std::string(kScript) + " check " + name + " " + path;
  return std::system(cmd.c_str()) == 0;
}

// ---- the cases (the same tables as the script's CASES) -------------------

struct Spec {
  std::string kind;  // dense, none, csr, rsp
  int dtype;
  std::vector<int64_t> shape;
  int idt;                     // index dtype (sparse)
  std::vector<int64_t> aux0;   // csr indptr / rsp rows
  std::vector<int64_t> aux1;   // csr indices
};

struct Case {
  std::string name;
  std::vector<Spec> arrays;
  std::vector<std::string> names;  // empty: unnamed
};

std::vector<Spec> all_dtypes() {
  return {{"dense", 0, {2, 3}, 0, {}, {}},  {"dense", 1, {4}, 0, {}, {}},
          {"dense", 2, {3, 2}, 0, {}, {}},  {"dense", 3, {5}, 0, {}, {}},
          {"dense", 4, {2, 2}, 0, {}, {}},  {"dense", 5, {6}, 0, {}, {}},
          {"dense", 6, {3}, 0, {}, {}},     {"dense", 7, {4}, 0, {}, {}},
          {"dense", 12, {2, 1, 2}, 0, {}, {}},
          {"dense", 0, {0, 3}, 0, {}, {}},
          {"dense", 0, {1, 1, 1, 1, 1, 1, 1, 2}, 0, {}, {}}};
}

std::vector<Spec> sparse_specs() {
  return {{"csr", 0, {4, 5}, 6, {0, 2, 2, 3, 5}, {1, 3, 0, 2, 4}},
          {"rsp", 1, {6, 3}, 6, {1, 4}, {}},
          {"csr", 2, {3, 4}, 4, {0, 1, 1, 3}, {2, 0, 3}},
          {"rsp", 0, {5, 2, 2}, 4, {0, 2, 4}, {}},
          {"csr", 0, {2, 3}, 6, {0, 0, 0}, {}},
          {"rsp", 0, {3, 2}, 6, {}, {}}};
}

std::vector<std::string> prefixed(int n, int aux_from) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) {
    v.push_back((i >= aux_from ? "aux:p" : "arg:p") + std::to_string(i));
  }
  return v;
}

std::vector<Case> cases() {
  auto all = all_dtypes();
  auto sp = sparse_specs();
  std::vector<Spec> v1(all.begin(), all.begin() + 9);
  std::vector<std::string> w;
  for (int i = 0; i < 9; ++i) w.push_back("w" + std::to_string(i));
  Spec none{"none", 0, {}, 0, {}, {}};
  return {
      {"dense_v2", all, prefixed((int)all.size(), 9)},
      {"dense_v1", v1, w},
      {"legacy_v0",
       {{"dense", 0, {128}, 0, {}, {}}, {"dense", 1, {2, 3}, 0, {}, {}},
        {"dense", 4, {1, 2, 3}, 0, {}, {}}},
       {}},
      {"dense_v3",
       {{"dense", 0, {}, 0, {}, {}}, {"dense", 6, {2, 2}, 0, {}, {}},
        {"dense", 2, {0}, 0, {}, {}}},
       {"scalar", "m", "empty"}},
      {"unnamed_v2", {all[0], all[1], all[2]}, {}},
      {"sparse_v2",
       {sp[0], sp[1], sp[2], sp[3]},
       {"arg:c64", "arg:r64", "arg:c32", "aux:r32"}},
      {"sparse_edge_v2",
       {sp[4], sp[5], {"csr", 0, {3, 2}, 6, {}, {}}},
       {"csr0", "rsp0", "csr_unwritten"}},
      {"none_v2",
       {{"dense", 0, {2}, 0, {}, {}}, none, {"dense", 4, {1}, 0, {}, {}}},
       {"a", "b", "c"}},
      {"none_v0", {none, {"dense", 3, {3}, 0, {}, {}}}, {"x", "y"}},
      {"none_v3", {none, {"dense", 0, {2}, 0, {}, {}}}, {"x", "y"}},
      {"empty_list", {}, {}},
  };
}

const Case &find_case(const std::string &name) {
  static const std::vector<Case> all = cases();
  for (const auto &c : all) {
    if (c.name == name) return c;
  }
  abort();
}

// Element i of the k-th array (the script's value()).
double value(int k, int64_t i, int dtype) {
  int64_t v = (i * 7 + k * 3) % 23;
  if (dtype == MXC_DTYPE_BOOL) return (i + k) % 3 == 0;
  if (dtype == MXC_DTYPE_UINT8) return (double)v;
  return (double)(v - 11);
}

double half_to_double(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

// Element i of host bytes of dtype, as a double.
double element(const std::vector<char> &b, int dtype, int64_t i) {
  const char *p = b.data();
  switch (dtype) {
    case 0: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case 1: { double d; memcpy(&d, p + 8 * i, 8); return d; }
    case 2: { uint16_t h; memcpy(&h, p + 2 * i, 2); return half_to_double(h); }
    case 3: return (uint8_t)p[i];
    case 4: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case 5: return (int8_t)p[i];
    case 6: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case 7: return p[i] != 0;
    case 12: {
      uint32_t u = 0;
      memcpy((char *)&u + 2, p + 2 * i, 2);
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
  }
  abort();
}

// Host bytes of a formula array (the inverse of element()).
std::vector<char> encode(int k, int64_t n, int dtype) {
  size_t sz = (size_t)mxc_dtype_size(dtype);
  std::vector<char> b((size_t)n * sz);
  for (int64_t i = 0; i < n; ++i) {
    double v = value(k, i, dtype);
    char *p = b.data() + i * sz;
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    switch (dtype) {
      case 0: memcpy(p, &f, 4); break;
      case 1: memcpy(p, &v, 8); break;
      case 2: {  // small integers: exact; normal halves only
        uint16_t h = 0;
        if (v != 0) {
          int e;
          double m = std::frexp(std::fabs(v), &e);  // m in [0.5, 1)
          h = (uint16_t)(((e + 14) << 10) | ((int)(m * 2048) & 1023));
          if (v < 0) h |= 0x8000;
        }
        memcpy(p, &h, 2);
        break;
      }
      case 3: *p = (char)(uint8_t)v; break;
      case 4: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
      case 5: *p = (char)(int8_t)v; break;
      case 6: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
      case 7: *p = v != 0; break;
      case 12: memcpy(p, (char *)&u + 2, 2); break;
    }
  }
  return b;
}

int64_t prod(const std::vector<int64_t> &s, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < s.size(); ++i) n *= s[i];
  return n;
}

std::vector<char> host_bytes(mxc_ndarray a) {
  int64_t n;
  int dt;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  EXPECT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK);
  std::vector<char> b((size_t)n * (size_t)mxc_dtype_size(dt));
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, b.data(), b.size()), MXC_OK) << err();
  return b;
}

std::vector<int64_t> shape_of(mxc_ndarray a) {
  int ndim;
  const int64_t *dims;
  EXPECT_EQ(mxc_ndarray_shape(a, &ndim, &dims), MXC_OK);
  return std::vector<int64_t>(dims, dims + ndim);
}

std::vector<int64_t> indices(mxc_ndarray a) {
  int dt;
  mxc_ndarray_dtype(a, &dt);
  auto b = host_bytes(a);
  std::vector<int64_t> v;
  for (int64_t i = 0; i < (int64_t)(b.size() / mxc_dtype_size(dt)); ++i) {
    v.push_back((int64_t)element(b, dt, i));
  }
  return v;
}

void expect_values(mxc_ndarray a, int k, int dtype, int64_t n,
                   const std::string &where) {
  auto b = host_bytes(a);
  ASSERT_EQ(b.size(), (size_t)n * mxc_dtype_size(dtype)) << where;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(element(b, dtype, i), value(k, i, dtype)) << where << " [" << i
                                                        << "]";
  }
}

void expect_sparse(mxc_ndarray a, const Spec &s, int k,
                   const std::string &where) {
  int stype, dt;
  ASSERT_EQ(mxc_ndarray_stype(a, &stype), MXC_OK);
  ASSERT_EQ(stype, s.kind == "csr" ? MXC_STYPE_CSR : MXC_STYPE_ROW_SPARSE)
      << where;
  mxc_ndarray_dtype(a, &dt);
  EXPECT_EQ(dt, s.dtype) << where;
  EXPECT_EQ(shape_of(a), s.shape) << where;
  int64_t nnz = (int64_t)(s.kind == "csr" ? s.aux1.size() : s.aux0.size());
  int64_t got;
  ASSERT_EQ(mxc_ndarray_nnz(a, &got), MXC_OK);
  ASSERT_EQ(got, nnz) << where;
  mxc_ndarray d, x0, x1 = nullptr;
  ASSERT_EQ(mxc_ndarray_sparse_data(a, &d), MXC_OK) << err();
  int64_t n = s.kind == "csr" ? nnz : nnz * prod(s.shape, 1);
  expect_values(d, k, s.dtype, n, where + " values");
  ASSERT_EQ(mxc_ndarray_aux(a, 0, &x0), MXC_OK) << err();
  mxc_ndarray_dtype(x0, &dt);
  EXPECT_EQ(dt, s.idt) << where;
  if (s.kind == "csr") {
    ASSERT_EQ(mxc_ndarray_aux(a, 1, &x1), MXC_OK) << err();
    EXPECT_EQ(indices(x1), s.aux1) << where;
    // An indptr never written (length 0) reads as rows + 1 zeros.
    auto ip = s.aux0.empty() ? std::vector<int64_t>(s.shape[0] + 1, 0) : s.aux0;
    EXPECT_EQ(indices(x0), ip) << where;
  } else {
    EXPECT_EQ(indices(x0), s.aux0) << where;
  }
  mxc_ndarray_free(d);
  mxc_ndarray_free(x0);
  mxc_ndarray_free(x1);
}

void expect_array(mxc_ndarray a, const Spec &s, int k,
                  const std::string &where) {
  if (s.kind == "csr" || s.kind == "rsp") return expect_sparse(a, s, k, where);
  int dt, stype;
  mxc_ndarray_dtype(a, &dt);
  mxc_ndarray_stype(a, &stype);
  EXPECT_EQ(stype, MXC_STYPE_DEFAULT) << where;
  if (s.kind == "none") {  // MXNet's placeholder: empty float32 (0)
    EXPECT_EQ(dt, MXC_DTYPE_FLOAT32) << where;
    EXPECT_EQ(shape_of(a), std::vector<int64_t>({0})) << where;
    return;
  }
  EXPECT_EQ(dt, s.dtype) << where;
  EXPECT_EQ(shape_of(a), s.shape) << where;
  expect_values(a, k, s.dtype, prod(s.shape), where);
}

void expect_case(mxc_ndarray_list l, const Case &c) {
  int n = -1;
  ASSERT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
  ASSERT_EQ(n, (int)c.arrays.size()) << c.name;
  for (int k = 0; k < n; ++k) {
    std::string where = c.name + " array " + std::to_string(k);
    const char *name;
    ASSERT_EQ(mxc_ndarray_list_name(l, k, &name), MXC_OK);
    EXPECT_EQ(std::string(name), c.names.empty() ? "" : c.names[k]) << where;
    mxc_ndarray a;
    ASSERT_EQ(mxc_ndarray_list_get(l, k, &a), MXC_OK);
    expect_array(a, c.arrays[k], k, where);
    mxc_ndarray_free(a);
  }
}

// New arrays holding case c (the inverse of expect_case).
std::vector<mxc_ndarray> build(const Case &c) {
  std::vector<mxc_ndarray> out;
  for (int k = 0; k < (int)c.arrays.size(); ++k) {
    const Spec &s = c.arrays[k];
    mxc_ndarray a = nullptr;
    if (s.kind == "dense") {
      auto b = encode(k, prod(s.shape), s.dtype);
      EXPECT_EQ(mxc_ndarray_create(s.shape.data(), (int)s.shape.size(),
                                   s.dtype, MXC_DEVICE_CPU, 0, 0, &a),
                MXC_OK);
      EXPECT_EQ(mxc_ndarray_copy_from_host(a, b.data(), b.size()), MXC_OK);
    } else {
      EXPECT_TRUE(s.kind == "csr" || s.kind == "rsp") << s.kind;
      int64_t nnz = (int64_t)(s.kind == "csr" ? s.aux1.size() : s.aux0.size());
      int64_t n = s.kind == "csr" ? nnz : nnz * prod(s.shape, 1);
      auto vals = encode(k, n, s.dtype);
      std::vector<int32_t> i0(s.aux0.begin(), s.aux0.end()),
          i1(s.aux1.begin(), s.aux1.end());
      bool i32 = s.idt == MXC_DTYPE_INT32;
      const void *p0 = i32 ? (const void *)i0.data() : s.aux0.data();
      const void *p1 = i32 ? (const void *)i1.data() : s.aux1.data();
      int rc = s.kind == "csr"
                   ? mxc_ndarray_create_csr(s.shape.data(), s.dtype, s.idt,
                                            vals.data(), p0, p1, nnz,
                                            MXC_DEVICE_CPU, 0, &a)
                   : mxc_ndarray_create_row_sparse(
                         s.shape.data(), (int)s.shape.size(), s.dtype, s.idt,
                         vals.data(), p0, nnz, MXC_DEVICE_CPU, 0, &a);
      EXPECT_EQ(rc, MXC_OK) << err();
    }
    out.push_back(a);
  }
  return out;
}

int save_mxnet(const std::string &path, const std::vector<mxc_ndarray> &arrs,
               const std::vector<std::string> &names) {
  std::vector<const char *> np;
  for (const auto &s : names) np.push_back(s.c_str());
  return mxc_ndarray_save_format(path.c_str(), arrs.data(),
                                 names.empty() ? nullptr : np.data(),
                                 (int)arrs.size(), MXC_FILE_FORMAT_MXNET);
}

const char *kAllCases[] = {"dense_v2",   "dense_v1",       "legacy_v0",
                           "dense_v3",   "unnamed_v2",     "sparse_v2",
                           "sparse_edge_v2", "none_v2",    "none_v0",
                           "none_v3",    "empty_list"};

TEST(MxnetFormat, ReadsEveryFileOfTheIndependentWriter) {
  for (const char *name : kAllCases) {
    mxc_ndarray_list l;
    ASSERT_EQ(mxc_ndarray_load(golden(name).c_str(), &l), MXC_OK) << err();
    expect_case(l, find_case(name));
    mxc_ndarray_list_free(l);
  }
}

// mxc writes v2 (v3 when an array is 0-d) with the CPU context, exactly as
// the script does, so the bytes match; and the script's reader agrees.
TEST(MxnetFormat, WritesWhatTheIndependentReaderReads) {
  for (const char *name :
       {"dense_v2", "dense_v3", "unnamed_v2", "sparse_v2", "empty_list"}) {
    const Case &c = find_case(name);
    auto arrs = build(c);
    std::string p = tmp_path(std::string("w_") + name + ".params");
    ASSERT_EQ(save_mxnet(p, arrs, c.names), MXC_OK) << err();
    EXPECT_EQ(slurp(p), slurp(golden(name))) << name;
    EXPECT_TRUE(python_check(name, p)) << name;
    for (auto a : arrs) mxc_ndarray_free(a);
  }
}

// Loaded with mxc, saved in MXNet's format again (v1 and legacy files come
// out as v2), and in mxc's own format and back.
TEST(MxnetFormat, RoundTripsBothWays) {
  for (const char *name : {"dense_v2", "dense_v1", "legacy_v0", "dense_v3",
                           "unnamed_v2", "sparse_v2"}) {
    const Case &c = find_case(name);
    mxc_ndarray_list l;
    ASSERT_EQ(mxc_ndarray_load(golden(name).c_str(), &l), MXC_OK) << err();
    int n;
    mxc_ndarray_list_size(l, &n);
    std::vector<mxc_ndarray> arrs(n);
    for (int i = 0; i < n; ++i) mxc_ndarray_list_get(l, i, &arrs[i]);
    mxc_ndarray_list_free(l);
    std::string p = tmp_path(std::string("rt_") + name + ".params");
    ASSERT_EQ(save_mxnet(p, arrs, c.names), MXC_OK) << err();
    EXPECT_TRUE(python_check(name, p)) << name;
    if (c.arrays[0].kind == "dense") {  // mxc's format holds dense arrays
      std::string q = tmp_path(std::string("rt_") + name + ".mxc");
      std::vector<const char *> np;
      for (const auto &s : c.names) np.push_back(s.c_str());
      ASSERT_EQ(mxc_ndarray_save(q.c_str(), arrs.data(),
                                 np.empty() ? nullptr : np.data(), n),
                MXC_OK);
      ASSERT_EQ(mxc_ndarray_load(q.c_str(), &l), MXC_OK) << err();
      expect_case(l, c);
      mxc_ndarray_list_free(l);
    }
    for (auto a : arrs) mxc_ndarray_free(a);
  }
}

TEST(MxnetFormat, EveryTruncationIsAnIoErrorWithTheOffset) {
  for (const char *name : kAllCases) {
    auto bytes = slurp(golden(name));
    std::string q = tmp_path("trunc.params");
    for (size_t len = 0; len < bytes.size(); ++len) {
      spit(q, std::vector<char>(bytes.begin(), bytes.begin() + len));
      mxc_ndarray_list l = (mxc_ndarray_list)0x9;
      ASSERT_EQ(mxc_ndarray_load(q.c_str(), &l), MXC_ERR_IO)
          << name << " len " << len;
      EXPECT_EQ(l, (mxc_ndarray_list)0x9);
      std::string e = err();
      EXPECT_NE(e.find(q), std::string::npos) << e;
      EXPECT_NE(e.find("offset"), std::string::npos) << e;
      EXPECT_NE(e.find("truncated"), std::string::npos)
          << name << " len " << len << ": " << e;
    }
  }
}

// MXNet's format has no checksum, so a flipped data bit loads; every flip
// must either load or be a clean MXC_ERR_IO naming the offset (ASan and
// UBSan check that nothing is read out of bounds or leaked).
TEST(MxnetFormat, EveryFlippedBitLoadsOrIsAnIoError) {
  for (const char *name : kAllCases) {
    auto bytes = slurp(golden(name));
    int errors = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        auto bad = bytes;
        bad[i] ^= (char)(1 << bit);
        mxc__ndarray_list *l = nullptr;
        int rc = mxc__mxnet_load_mem(bad.data(), bad.size(), "flip", &l);
        ASSERT_TRUE(rc == MXC_OK || rc == MXC_ERR_IO)
            << name << " byte " << i << " bit " << bit << ": " << err();
        if (rc == MXC_OK) {
          mxc__ndarray_list_free(l);
        } else {
          ++errors;
          EXPECT_NE(err().find("offset"), std::string::npos) << err();
        }
      }
    }
    EXPECT_GT(errors, 0) << name;
  }
}

// Writes a u32/u64 into a copy of b at offset at.
template <typename T>
std::vector<char> patch(std::vector<char> b, size_t at, T v) {
  memcpy(b.data() + at, &v, sizeof v);
  return b;
}

// Loads bytes from memory: the status, and the message in *msg.
int load_bytes(const std::vector<char> &b, std::string *msg) {
  mxc__ndarray_list *l = nullptr;
  int rc = mxc__mxnet_load_mem(b.data(), b.size(), "bad.params", &l);
  mxc__ndarray_list_free(l);
  *msg = err();
  return rc;
}

// dense_v2 starts: list magic, reserved, count (24 bytes); array 0 (float32
// (2,3)): magic 24, stype 28, ndim 32, extents 36 and 44, context 52,
// dtype flag 60, data 64..88; array 1 at 88.
TEST(MxnetFormat, CorruptFieldsAreNamedWithTheirOffset) {
  auto b = slurp(golden("dense_v2"));
  struct {
    std::vector<char> bytes;
    const char *want;
  } cases[] = {
      {patch<uint64_t>(b, 0, 0x113), "magic"},
      {patch<uint64_t>(b, 16, UINT64_C(1) << 60), "offset 16: file is"},
      {patch<uint32_t>(b, 24, 0xF993FACB), "offset 24: 0xf993facb"},
      {patch<int32_t>(b, 28, 7), "storage type 7"},
      {patch<int32_t>(b, 32, 100), "ndim 100"},
      {patch<int32_t>(b, 32, -1), "ndim -1"},
      {patch<int64_t>(b, 36, -5), "extent 0 is -5"},
      {patch<int64_t>(b, 36, INT64_C(1) << 40), "truncated or corrupted"},
      {patch<int64_t>(b, 44, INT64_MAX), "overflows"},
      {patch<int32_t>(b, 60, 9), "dtype flag 9"},
  };
  std::string msg;
  for (auto &c : cases) {
    EXPECT_EQ(load_bytes(c.bytes, &msg), MXC_ERR_IO) << c.want;
    EXPECT_NE(msg.find(c.want), std::string::npos) << msg;
    EXPECT_NE(msg.find("bad.params"), std::string::npos) << msg;
  }
  // The names: count 11 before the first name's length.
  std::string first = "arg:p0";
  auto it = std::search(b.begin(), b.end(), first.begin(), first.end());
  size_t name0 = (size_t)(it - b.begin()), count_at = name0 - 16;
  EXPECT_EQ(load_bytes(patch<uint64_t>(b, count_at, 3), &msg), MXC_ERR_IO);
  EXPECT_NE(msg.find("3 names for 11 arrays"), std::string::npos) << msg;
  EXPECT_EQ(load_bytes(patch<uint64_t>(b, name0 - 8, UINT64_C(1) << 62), &msg),
            MXC_ERR_IO);
  EXPECT_NE(msg.find("a name of"), std::string::npos) << msg;
  EXPECT_EQ(load_bytes(patch<char>(b, name0 + 2, 0), &msg), MXC_ERR_IO);
  EXPECT_NE(msg.find("NUL"), std::string::npos) << msg;
  auto extra = b;
  extra.push_back(0);
  EXPECT_EQ(load_bytes(extra, &msg), MXC_ERR_IO);
  EXPECT_NE(msg.find("1 unexpected bytes"), std::string::npos) << msg;
  // Sparse: an index count that does not match the values.
  auto s = slurp(golden("sparse_v2"));
  // csr (4,5): magic 24, stype 28, sshape 32 (ndim) 36 (nnz), shape 44..
  EXPECT_EQ(load_bytes(patch<int64_t>(s, 36, 4), &msg), MXC_ERR_IO);
  EXPECT_NE(msg.find("do not match"), std::string::npos) << msg;
}

TEST(MxnetFormat, SaveArguments) {
  auto c = find_case("sparse_v2");
  auto arrs = build(c);
  int64_t one = 1;
  mxc_ndarray scalar;
  ASSERT_EQ(mxc_ndarray_create(&one, 0, 0, MXC_DEVICE_CPU, 0, 0, &scalar),
            MXC_OK);
  arrs.push_back(scalar);
  std::string p = tmp_path("bad_save.params");
  EXPECT_EQ(save_mxnet(p, arrs, {}), MXC_ERR_STYPE);
  EXPECT_NE(err().find("v3"), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_save_format(p.c_str(), arrs.data(), nullptr, 1, 7),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_save(p.c_str(), arrs.data(), nullptr, 1),
            MXC_ERR_STYPE);  // mxc's own format: dense only
  for (auto a : arrs) mxc_ndarray_free(a);
}

}  // namespace
