// Save/load: round trips, the golden file written by an independent
// implementation (scripts/make_golden_ndarray.py), corruption and
// truncation of every byte region, and injected I/O failures.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/file.h"
}

namespace {

std::string err() { return mxc_last_error(); }

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

std::vector<char> slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

void spit(const std::string &p, const std::vector<char> &b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(b.data(), (std::streamsize)b.size());
}

mxc_ndarray make(std::vector<int64_t> shape, int dtype, const void *data) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dtype,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK);
  int64_t n;
  mxc_ndarray_size(a, &n);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, data, (size_t)n * mxc_dtype_size(dtype)),
            MXC_OK);
  return a;
}

template <typename T>
std::vector<T> read(mxc_ndarray a) {
  int64_t n;
  mxc_ndarray_size(a, &n);
  std::vector<T> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * sizeof(T)),
            MXC_OK);
  return v;
}

// Saves three arrays (float32 2x3, int64 scalar, uint8 zero-size).
void save_sample(const std::string &path) {
  float f[6] = {1.5f, -2, 3, 4, 5, 6.25f};
  int64_t s = -77;
  mxc_ndarray arrs[3] = {make({2, 3}, MXC_DTYPE_FLOAT32, f),
                         make({}, MXC_DTYPE_INT64, &s),
                         make({0, 4}, MXC_DTYPE_UINT8, nullptr)};
  const char *names[3] = {"weight", "step", ""};
  ASSERT_EQ(mxc_ndarray_save(path.c_str(), arrs, names, 3), MXC_OK) << err();
  for (auto a : arrs) mxc_ndarray_free(a);
}

TEST(SaveLoad, RoundTrip) {
  std::string p = tmp_path("rt.mxc");
  save_sample(p);
  mxc_ndarray_list l;
  ASSERT_EQ(mxc_ndarray_load(p.c_str(), &l), MXC_OK) << err();
  int n;
  ASSERT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
  ASSERT_EQ(n, 3);
  const char *name;
  ASSERT_EQ(mxc_ndarray_list_name(l, 0, &name), MXC_OK);
  EXPECT_STREQ(name, "weight");
  ASSERT_EQ(mxc_ndarray_list_name(l, 2, &name), MXC_OK);
  EXPECT_STREQ(name, "");
  mxc_ndarray a, b, c;
  ASSERT_EQ(mxc_ndarray_list_get(l, 0, &a), MXC_OK);
  ASSERT_EQ(mxc_ndarray_list_get(l, 1, &b), MXC_OK);
  ASSERT_EQ(mxc_ndarray_list_get(l, 2, &c), MXC_OK);
  mxc_ndarray_list_free(l);  // the handles stay valid
  EXPECT_EQ(read<float>(a), std::vector<float>({1.5f, -2, 3, 4, 5, 6.25f}));
  EXPECT_EQ(read<int64_t>(b), std::vector<int64_t>({-77}));
  int ndim, dt;
  const int64_t *shape;
  ASSERT_EQ(mxc_ndarray_shape(c, &ndim, &shape), MXC_OK);
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(shape[0], 0);
  EXPECT_EQ(shape[1], 4);
  ASSERT_EQ(mxc_ndarray_dtype(b, &dt), MXC_OK);
  EXPECT_EQ(dt, MXC_DTYPE_INT64);
  ASSERT_EQ(mxc_ndarray_shape(b, &ndim, nullptr), MXC_OK);
  EXPECT_EQ(ndim, 0);
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
  mxc_ndarray_free(c);
}

TEST(SaveLoad, EmptyListAndUnnamed) {
  std::string p = tmp_path("empty.mxc");
  ASSERT_EQ(mxc_ndarray_save(p.c_str(), nullptr, nullptr, 0), MXC_OK) << err();
  mxc_ndarray_list l;
  ASSERT_EQ(mxc_ndarray_load(p.c_str(), &l), MXC_OK) << err();
  int n = -1;
  ASSERT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
  EXPECT_EQ(n, 0);
  mxc_ndarray a;
  EXPECT_EQ(mxc_ndarray_list_get(l, 0, &a), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("out of range"), std::string::npos);
  mxc_ndarray_list_free(l);
}

// scripts/make_golden_ndarray.py writes this file with numpy and its own
// CRC (zlib); values are index formulas repeated here.
TEST(SaveLoad, GoldenFileFromIndependentWriter) {
  std::string p = "tests/io/golden_v1.mxc";
  mxc_ndarray_list l;
  ASSERT_EQ(mxc_ndarray_load(p.c_str(), &l), MXC_OK) << err();
  int n;
  ASSERT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
  ASSERT_EQ(n, 4);
  const char *name;
  mxc_ndarray a;
  // 0: "f32" float32 (3,4): i * 0.5 - 1
  ASSERT_EQ(mxc_ndarray_list_name(l, 0, &name), MXC_OK);
  EXPECT_STREQ(name, "f32");
  ASSERT_EQ(mxc_ndarray_list_get(l, 0, &a), MXC_OK);
  auto f = read<float>(a);
  ASSERT_EQ(f.size(), 12u);
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(f[i], i * 0.5f - 1) << i;
  mxc_ndarray_free(a);
  // 1: "f64" float64 (2,2,2): i * i / 3
  ASSERT_EQ(mxc_ndarray_list_get(l, 1, &a), MXC_OK);
  auto d = read<double>(a);
  ASSERT_EQ(d.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(d[i], (double)(i * i) / 3) << i;
  mxc_ndarray_free(a);
  // 2: "i32" int32 (5,): i * -1000003
  ASSERT_EQ(mxc_ndarray_list_get(l, 2, &a), MXC_OK);
  auto k = read<int32_t>(a);
  ASSERT_EQ(k.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(k[i], i * -1000003) << i;
  mxc_ndarray_free(a);
  // 3: "" bool scalar True
  ASSERT_EQ(mxc_ndarray_list_name(l, 3, &name), MXC_OK);
  EXPECT_STREQ(name, "");
  ASSERT_EQ(mxc_ndarray_list_get(l, 3, &a), MXC_OK);
  int dt;
  mxc_ndarray_dtype(a, &dt);
  EXPECT_EQ(dt, MXC_DTYPE_BOOL);
  EXPECT_EQ(read<uint8_t>(a), std::vector<uint8_t>({1}));
  mxc_ndarray_free(a);
  mxc_ndarray_list_free(l);
  // And mxc writes the same bytes for the same arrays.
  std::vector<float> fv(12);
  for (size_t i = 0; i < 12; ++i) fv[i] = i * 0.5f - 1;
  std::vector<double> dv(8);
  for (size_t i = 0; i < 8; ++i) dv[i] = (double)(i * i) / 3;
  std::vector<int32_t> kv(5);
  for (int i = 0; i < 5; ++i) kv[i] = i * -1000003;
  uint8_t bv = 1;
  mxc_ndarray arrs[4] = {make({3, 4}, MXC_DTYPE_FLOAT32, fv.data()),
                         make({2, 2, 2}, MXC_DTYPE_FLOAT64, dv.data()),
                         make({5}, MXC_DTYPE_INT32, kv.data()),
                         make({}, MXC_DTYPE_BOOL, &bv)};
  const char *names[4] = {"f32", "f64", "i32", ""};
  std::string mine = tmp_path("golden_again.mxc");
  ASSERT_EQ(mxc_ndarray_save(mine.c_str(), arrs, names, 4), MXC_OK);
  EXPECT_EQ(slurp(mine), slurp(p));
  for (auto x : arrs) mxc_ndarray_free(x);
}

TEST(SaveLoad, EveryTruncationIsACleanIoError) {
  std::string p = tmp_path("trunc_src.mxc"), q = tmp_path("trunc.mxc");
  save_sample(p);
  auto bytes = slurp(p);
  for (size_t len = 0; len < bytes.size(); ++len) {
    spit(q, std::vector<char>(bytes.begin(), bytes.begin() + len));
    mxc_ndarray_list l = (mxc_ndarray_list)0x9;
    ASSERT_EQ(mxc_ndarray_load(q.c_str(), &l), MXC_ERR_IO) << "len " << len;
    EXPECT_NE(err().find("truncated"), std::string::npos)
        << "len " << len << ": " << err();
    EXPECT_EQ(l, (mxc_ndarray_list)0x9);
  }
}

TEST(SaveLoad, EveryFlippedByteIsDetected) {
  std::string p = tmp_path("flip_src.mxc"), q = tmp_path("flip.mxc");
  save_sample(p);
  auto bytes = slurp(p);
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto bad = bytes;
    bad[i] ^= 0x40;
    spit(q, bad);
    mxc_ndarray_list l = nullptr;
    int rc = mxc_ndarray_load(q.c_str(), &l);
    ASSERT_EQ(rc, MXC_ERR_IO) << "byte " << i;
    EXPECT_NE(err().find(q), std::string::npos) << err();
  }
  // Trailing garbage too.
  auto extra = bytes;
  extra.push_back('x');
  spit(q, extra);
  mxc_ndarray_list l = nullptr;
  EXPECT_EQ(mxc_ndarray_load(q.c_str(), &l), MXC_ERR_IO);
  EXPECT_NE(err().find("unexpected bytes"), std::string::npos) << err();
}

TEST(SaveLoad, ForeignAndMissingFiles) {
  std::string q = tmp_path("foreign.mxc");
  spit(q, std::vector<char>(100, 'z'));
  mxc_ndarray_list l = nullptr;
  EXPECT_EQ(mxc_ndarray_load(q.c_str(), &l), MXC_ERR_IO);
  EXPECT_NE(err().find("bad magic"), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_load(tmp_path("nope/missing.mxc").c_str(), &l),
            MXC_ERR_IO);
  EXPECT_NE(err().find("No such file"), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_load(nullptr, &l), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_load(q.c_str(), nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(l, nullptr);
}

TEST(SaveLoad, BadSaveArguments) {
  float v = 1;
  mxc_ndarray a = make({1}, MXC_DTYPE_FLOAT32, &v);
  std::string p = tmp_path("bad.mxc");
  EXPECT_EQ(mxc_ndarray_save(nullptr, &a, nullptr, 1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_save(p.c_str(), nullptr, nullptr, 1),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_ndarray_save(p.c_str(), &a, nullptr, -1),
            MXC_ERR_INVALID_ARGUMENT);
  const char *names[1] = {nullptr};
  EXPECT_EQ(mxc_ndarray_save(p.c_str(), &a, names, 1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("names[0] is NULL"), std::string::npos) << err();
  mxc_ndarray dead = make({1}, MXC_DTYPE_FLOAT32, &v);
  mxc_ndarray_free(dead);
  mxc_ndarray two[2] = {a, dead};
  EXPECT_EQ(mxc_ndarray_save(p.c_str(), two, nullptr, 2),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(err().find("already freed"), std::string::npos) << err();
  EXPECT_EQ(mxc_ndarray_save(tmp_path("no/such/dir/x.mxc").c_str(), &a,
                             nullptr, 1),
            MXC_ERR_IO);
  struct stat st;
  EXPECT_NE(stat(p.c_str(), &st), 0);  // nothing was written
  mxc_ndarray_free(a);
}

// Walks an injected I/O failure over every I/O operation of save and of
// load: each run fails cleanly, an existing file is never damaged, no
// temporary file is left behind, and nothing leaks.
TEST(SaveLoad, InjectedIoFailuresAtEveryStep) {
  std::string dir = tmp_path("iofault");
  mkdir(dir.c_str(), 0755);
  std::string p = dir + "/target.mxc";
  save_sample(p);
  auto original = slurp(p);
  std::vector<float> big(100000, 2.0f);  // several buffer flushes
  mxc_ndarray a = make({100000}, MXC_DTYPE_FLOAT32, big.data());
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  ASSERT_EQ(mxc_storage_release_cached(MXC_DEVICE_CPU, 0), MXC_OK);
  int64_t live = mxc__alloc_live();
  int failures = 0;
  for (int64_t n = 1;; ++n) {
    mxc__fault_io_arm(n);
    int rc = mxc_ndarray_save(p.c_str(), &a, nullptr, 1);
    int fired = mxc__fault_io_fired();
    mxc__fault_io_arm(0);
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      break;
    }
    ++failures;
    ASSERT_EQ(rc, MXC_ERR_IO) << "step " << n;
    EXPECT_EQ(slurp(p), original) << "target damaged at step " << n;
    // No temporary left behind.
    std::string cmd = "ls " + dir + " | grep -c tmp > /dev/null";
    EXPECT_NE(system(cmd.c_str()), 0) << "temporary left at step " << n;
    EXPECT_EQ(mxc__alloc_live(), live) << "leak at step " << n;
  }
  EXPECT_GE(failures, 4);  // open, writes, sync, rename
  auto saved = slurp(p);
  for (int64_t n = 1;; ++n) {
    mxc__fault_io_arm(n);
    mxc_ndarray_list l = nullptr;
    int rc = mxc_ndarray_load(p.c_str(), &l);
    int fired = mxc__fault_io_fired();
    mxc__fault_io_arm(0);
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      mxc_ndarray_list_free(l);
      break;
    }
    ASSERT_EQ(rc, MXC_ERR_IO) << "step " << n;
    EXPECT_EQ(l, nullptr);
  }
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  ASSERT_EQ(mxc_storage_release_cached(MXC_DEVICE_CPU, 0), MXC_OK);
  EXPECT_EQ(mxc__alloc_live(), live);
  mxc_ndarray_free(a);
}

}  // namespace
