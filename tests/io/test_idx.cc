// IDX reader and batch iterator: values, shapes, scaling, batching,
// shuffling, pad/discard, plain and gzip files written here by hand
// (big-endian), every truncation, corrupt headers, argument errors and an
// injected-allocation-failure walk.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/file.h"
#include "core/base/handle.h"
}

namespace {

using Bytes = std::vector<unsigned char>;

std::string err() { return mxc_last_error(); }

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

void put_be(Bytes &b, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) b.push_back((unsigned char)(v >> (8 * i)));
}

// An IDX file: header, then `data` (already big-endian).
Bytes idx_bytes(int type, const std::vector<uint32_t> &dims,
                const Bytes &data) {
  Bytes b = {0, 0, (unsigned char)type, (unsigned char)dims.size()};
  for (uint32_t d : dims) put_be(b, d, 4);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

void write_file(const std::string &p, const Bytes &b, bool gz) {
  if (gz) {
    gzFile f = gzopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    if (!b.empty()) {
      ASSERT_EQ(gzwrite(f, b.data(), (unsigned)b.size()), (int)b.size());
    }
    ASSERT_EQ(gzclose(f), Z_OK);
  } else {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write((const char *)b.data(), (std::streamsize)b.size());
  }
}

Bytes slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

// The reference data set: pixel p of example i is (i * 7 + p * 3) % 256,
// the label of example i is i % 10.
unsigned pixel(int64_t i, int64_t p) { return (unsigned)((i * 7 + p * 3) % 256); }

struct Set {
  std::string images, labels;
};

Set make_set(const std::string &name, int n, int rows, int cols, bool gz,
             int label_count = -1) {
  Bytes img, lab;
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < rows * cols; ++p) img.push_back((unsigned char)pixel(i, p));
  if (label_count < 0) label_count = n;
  for (int i = 0; i < label_count; ++i) lab.push_back((unsigned char)(i % 10));
  Set s{tmp_path(name + "-images"), tmp_path(name + "-labels")};
  write_file(s.images, idx_bytes(0x08, {(uint32_t)n, (uint32_t)rows, (uint32_t)cols}, img), gz);
  write_file(s.labels, idx_bytes(0x08, {(uint32_t)label_count}, lab), gz);
  return s;
}

std::vector<float> read(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<float> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * sizeof(float)), MXC_OK) << err();
  return v;
}

std::vector<int64_t> shape_of(mxc_ndarray a) {
  int ndim = 0;
  const int64_t *s = nullptr;
  EXPECT_EQ(mxc_ndarray_shape(a, &ndim, &s), MXC_OK);
  return std::vector<int64_t>(s, s + ndim);
}

struct Batch {
  std::vector<float> data, label;
  std::vector<int64_t> dshape, lshape;
  int64_t pad;
};

// Runs one epoch from the iterator's current position.
std::vector<Batch> epoch(mxc_data_iter it) {
  std::vector<Batch> out;
  for (;;) {
    int has = -1;
    EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_OK) << err();
    if (has != 1) break;
    mxc_ndarray d = nullptr, l = nullptr;
    Batch b;
    EXPECT_EQ(mxc_data_iter_data(it, &d), MXC_OK) << err();
    EXPECT_EQ(mxc_data_iter_label(it, &l), MXC_OK) << err();
    EXPECT_EQ(mxc_data_iter_pad(it, &b.pad), MXC_OK) << err();
    b.data = read(d);
    b.label = read(l);
    b.dshape = shape_of(d);
    b.lshape = shape_of(l);
    mxc_ndarray_free(d);
    mxc_ndarray_free(l);
    out.push_back(b);
  }
  return out;
}

mxc_data_iter open(const Set &s, int64_t batch, int shuffle, uint64_t seed,
                   int flat, int scale, int last) {
  mxc_data_iter it = nullptr;
  EXPECT_EQ(mxc_data_iter_idx_create(s.images.c_str(), s.labels.c_str(), batch,
                                     shuffle, seed, flat, scale, last, &it),
            MXC_OK)
      << err();
  return it;
}

// Checks batch k's rows against examples `order` computed independently.
void expect_batch(const Batch &b, const std::vector<int64_t> &order,
                  int64_t row, bool scale) {
  ASSERT_EQ(b.label.size(), order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    EXPECT_EQ(b.label[k], (float)(order[k] % 10)) << "slot " << k;
    for (int64_t p = 0; p < row; ++p) {
      float want = scale ? (float)pixel(order[k], p) / 255.0f : (float)pixel(order[k], p);
      EXPECT_FLOAT_EQ(b.data[k * row + p], want) << "slot " << k << " pixel " << p;
    }
  }
}

class Idx : public ::testing::TestWithParam<bool> {};  // param: gzip

TEST_P(Idx, PadBatchesInFileOrder) {
  Set s = make_set("pad", 5, 2, 3, GetParam());
  mxc_data_iter it = open(s, 2, 0, 0, 1, 1, MXC_LAST_BATCH_PAD);
  int64_t n = 0;
  ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK);
  EXPECT_EQ(n, 5);
  auto bs = epoch(it);
  ASSERT_EQ(bs.size(), 3u);
  expect_batch(bs[0], {0, 1}, 6, true);
  expect_batch(bs[1], {2, 3}, 6, true);
  expect_batch(bs[2], {4, 0}, 6, true);  // padded by wrapping
  EXPECT_EQ(bs[0].pad, 0);
  EXPECT_EQ(bs[2].pad, 1);
  EXPECT_EQ(bs[0].dshape, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(bs[0].lshape, (std::vector<int64_t>{2}));
  // At the end: no current batch until reset.
  mxc_ndarray d = nullptr;
  EXPECT_EQ(mxc_data_iter_data(it, &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(d, nullptr);
  ASSERT_EQ(mxc_data_iter_reset(it), MXC_OK);
  EXPECT_EQ(epoch(it).size(), 3u);
  mxc_data_iter_free(it);
}

TEST_P(Idx, ImageShapeUnscaled) {
  Set s = make_set("shape", 4, 3, 2, GetParam());
  mxc_data_iter it = open(s, 4, 0, 0, 0, 0, MXC_LAST_BATCH_DISCARD);
  auto bs = epoch(it);
  ASSERT_EQ(bs.size(), 1u);
  EXPECT_EQ(bs[0].dshape, (std::vector<int64_t>{4, 1, 3, 2}));
  expect_batch(bs[0], {0, 1, 2, 3}, 6, false);
  mxc_data_iter_free(it);
}

TEST_P(Idx, DiscardAndLargeBatches) {
  Set s = make_set("discard", 5, 2, 2, GetParam());
  mxc_data_iter it = open(s, 2, 0, 0, 1, 0, MXC_LAST_BATCH_DISCARD);
  auto bs = epoch(it);
  ASSERT_EQ(bs.size(), 2u);
  expect_batch(bs[1], {2, 3}, 4, false);
  EXPECT_EQ(bs[1].pad, 0);
  mxc_data_iter_free(it);
  // A batch larger than the data set: discard gives nothing, pad wraps.
  it = open(s, 7, 0, 0, 1, 0, MXC_LAST_BATCH_DISCARD);
  EXPECT_EQ(epoch(it).size(), 0u);
  mxc_data_iter_free(it);
  it = open(s, 12, 0, 0, 1, 0, MXC_LAST_BATCH_PAD);
  bs = epoch(it);
  ASSERT_EQ(bs.size(), 1u);
  EXPECT_EQ(bs[0].pad, 7);
  expect_batch(bs[0], {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1}, 4, false);
  mxc_data_iter_free(it);
}

TEST_P(Idx, EmptyDataSet) {
  Set s = make_set("empty", 0, 28, 28, GetParam());
  mxc_data_iter it = open(s, 4, 1, 3, 1, 1, MXC_LAST_BATCH_PAD);
  int64_t n = -1;
  ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(epoch(it).size(), 0u);
  mxc_data_iter_free(it);
  // Zero images of an absurd size: refused, not overflowed.
  write_file(s.images, idx_bytes(0x08, {0, 0xFFFFFFFFu, 0xFFFFFFFFu}, {}), GetParam());
  mxc_data_iter bad = nullptr;
  EXPECT_EQ(mxc_data_iter_idx_create(s.images.c_str(), s.labels.c_str(), 4, 0, 0, 1, 1,
                                     MXC_LAST_BATCH_PAD, &bad),
            MXC_ERR_IO);
  EXPECT_EQ(bad, nullptr);
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, Idx, ::testing::Values(false, true));

// The order of one whole-set batch (labels of a set whose labels are the
// example index, so they name the examples).
std::vector<int64_t> order_of(const Batch &b) {
  std::vector<int64_t> o;
  for (float l : b.label) o.push_back((int64_t)l);
  return o;
}

TEST(IdxShuffle, PermutationDeterministicPerSeedAndEpoch) {
  const int n = 50;
  Bytes img, lab;
  for (int i = 0; i < n; ++i) {
    img.push_back((unsigned char)i);
    put_be(lab, (uint32_t)i, 4);  // int32 labels: the example index
  }
  Set s{tmp_path("shuf-images"), tmp_path("shuf-labels")};
  write_file(s.images, idx_bytes(0x08, {n, 1, 1}, img), false);
  write_file(s.labels, idx_bytes(0x0C, {n}, lab), true);
  auto run = [&](uint64_t seed, int epochs) {
    mxc_data_iter it = open(s, n, 1, seed, 1, 0, MXC_LAST_BATCH_PAD);
    std::vector<std::vector<int64_t>> orders;
    for (int e = 0; e < epochs; ++e) {
      if (e) {
        EXPECT_EQ(mxc_data_iter_reset(it), MXC_OK);
      }
      auto bs = epoch(it);
      EXPECT_EQ(bs.size(), 1u);
      auto o = order_of(bs[0]);
      for (int k = 0; k < n; ++k) EXPECT_EQ(bs[0].data[k], (float)o[k]);
      orders.push_back(o);
    }
    mxc_data_iter_free(it);
    return orders;
  };
  auto a = run(42, 3), b = run(42, 3), c = run(43, 1);
  std::vector<int64_t> ident(n);
  for (int i = 0; i < n; ++i) ident[i] = i;
  for (auto &o : a) {
    auto sorted = o;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, ident);  // a permutation
    EXPECT_NE(o, ident);       // and shuffled (50! makes a tie negligible)
  }
  EXPECT_EQ(a, b);        // same seed: same orders, epoch by epoch
  EXPECT_NE(a[0], a[1]);  // a new permutation each epoch
  EXPECT_NE(a[1], a[2]);
  EXPECT_NE(a[0], c[0]);  // another seed: another order
}

TEST(IdxTypes, EveryElementTypeBigEndian) {
  Bytes img(3 * 4, 1);
  std::string ip = tmp_path("types-images");
  write_file(ip, idx_bytes(0x08, {3, 2, 2}, img), false);
  struct Case {
    int type;
    Bytes data;
    std::vector<float> want;
  };
  std::vector<Case> cases;
  cases.push_back({0x09, {0xFF, 0x05, 0x80}, {-1, 5, -128}});
  Bytes i16;
  put_be(i16, 0xFFFE, 2), put_be(i16, 300, 2), put_be(i16, 0x8000, 2);
  cases.push_back({0x0B, i16, {-2, 300, -32768}});
  Bytes i32;
  put_be(i32, 0xFFFFFFFFu, 4), put_be(i32, 70000, 4), put_be(i32, 7, 4);
  cases.push_back({0x0C, i32, {-1, 70000, 7}});
  Bytes f32;
  for (float f : {1.5f, -2.25f, 1e6f}) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put_be(f32, u, 4);
  }
  cases.push_back({0x0D, f32, {1.5f, -2.25f, 1e6f}});
  Bytes f64;
  for (double d : {0.5, -3.0, 123456.0}) {
    uint64_t u;
    memcpy(&u, &d, 8);
    put_be(f64, u, 8);
  }
  cases.push_back({0x0E, f64, {0.5f, -3.0f, 123456.0f}});
  for (const Case &c : cases) {
    Set s{ip, tmp_path("types-labels")};
    write_file(s.labels, idx_bytes(c.type, {3}, c.data), c.type % 2 == 0);
    mxc_data_iter it = open(s, 3, 0, 0, 1, 1, MXC_LAST_BATCH_PAD);
    auto bs = epoch(it);
    ASSERT_EQ(bs.size(), 1u);
    EXPECT_EQ(bs[0].label, c.want) << "type " << c.type;
    EXPECT_FLOAT_EQ(bs[0].data[0], 1.0f / 255.0f);
    mxc_data_iter_free(it);
  }
}

int create_rc(const Set &s, int64_t batch = 2) {
  mxc_data_iter it = (mxc_data_iter)(uintptr_t)0x1234;
  int rc = mxc_data_iter_idx_create(s.images.c_str(), s.labels.c_str(), batch,
                                    0, 0, 1, 1, MXC_LAST_BATCH_PAD, &it);
  if (rc == MXC_OK) {
    mxc_data_iter_free(it);
  } else {
    EXPECT_EQ(it, (mxc_data_iter)(uintptr_t)0x1234) << "out touched on failure";
  }
  return rc;
}

void expect_truncations_fail(const std::string &name, bool gz) {
  Set s = make_set(name, 3, 4, 4, gz);
  Bytes full = slurp(s.images);
  Set cut{tmp_path(name + "-cut"), s.labels};
  const int64_t live0 = mxc__alloc_live();
  for (size_t len = 0; len < full.size(); ++len) {
    write_file(cut.images, Bytes(full.begin(), full.begin() + len), false);
    ASSERT_EQ(create_rc(cut), MXC_ERR_IO) << "length " << len;
    EXPECT_NE(err().find(cut.images), std::string::npos) << err();
  }
  EXPECT_EQ(mxc__alloc_live(), live0);
}

TEST(IdxErrors, EveryTruncationPlain) { expect_truncations_fail("trunc", false); }
TEST(IdxErrors, EveryTruncationGzip) { expect_truncations_fail("truncgz", true); }

TEST(IdxErrors, CorruptFiles) {
  Set s = make_set("corrupt", 3, 2, 2, false);
  EXPECT_EQ(create_rc(Set{tmp_path("no-such-file"), s.labels}), MXC_ERR_IO);
  EXPECT_NE(err().find("no-such-file"), std::string::npos) << err();
  Bytes b = slurp(s.images);
  Set bad{tmp_path("corrupt-bad"), s.labels};
  auto with = [&](size_t at, unsigned char v) {
    Bytes c = b;
    c[at] = v;
    write_file(bad.images, c, false);
    return create_rc(bad);
  };
  EXPECT_EQ(with(0, 1), MXC_ERR_IO);  // bad magic
  EXPECT_NE(err().find("magic"), std::string::npos) << err();
  EXPECT_EQ(with(2, 0x07), MXC_ERR_IO);  // unknown type
  EXPECT_EQ(with(3, 0), MXC_ERR_IO);     // 0 dimensions
  EXPECT_EQ(with(3, 9), MXC_ERR_IO);     // too many dimensions
  b.push_back(0);                        // trailing garbage
  write_file(bad.images, b, false);
  EXPECT_EQ(create_rc(bad), MXC_ERR_IO);
  // Absurd extents are refused before any allocation, plain or gzip.
  Bytes huge = idx_bytes(0x0E, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, Bytes(64, 0));
  for (bool gz : {false, true}) {
    write_file(bad.images, huge, gz);
    EXPECT_EQ(create_rc(bad), MXC_ERR_IO) << err();
  }
  // Corrupt gzip stream (a byte of the deflate data flipped).
  write_file(bad.images, slurp(s.images), true);
  Bytes z = slurp(bad.images);
  z[z.size() - 12] ^= 0xFF;
  write_file(bad.images, z, false);
  EXPECT_EQ(create_rc(bad), MXC_ERR_IO) << err();
}

TEST(IdxErrors, MismatchedFilesAndArguments) {
  Set s = make_set("mis", 4, 2, 2, false, 3);
  EXPECT_EQ(create_rc(s), MXC_ERR_IO);
  EXPECT_NE(err().find("labels"), std::string::npos) << err();
  Set good = make_set("args", 4, 2, 2, false);
  EXPECT_EQ(create_rc(Set{good.labels, good.labels}), MXC_ERR_IO);  // 1-d images
  EXPECT_EQ(create_rc(Set{good.images, good.images}), MXC_ERR_IO);  // 3-d labels
  EXPECT_EQ(create_rc(good, 0), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(create_rc(good, -3), MXC_ERR_INVALID_ARGUMENT);
  mxc_data_iter it = nullptr;
  EXPECT_EQ(mxc_data_iter_idx_create(nullptr, good.labels.c_str(), 2, 0, 0, 1, 1, 0, &it),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_idx_create(good.images.c_str(), nullptr, 2, 0, 0, 1, 1, 0, &it),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_idx_create(good.images.c_str(), good.labels.c_str(), 2, 0, 0, 1, 1, 2, &it),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_idx_create(good.images.c_str(), good.labels.c_str(), 2, 0, 0, 1, 1, 0, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(it, nullptr);

  it = open(good, 2, 0, 0, 1, 1, MXC_LAST_BATCH_PAD);
  int has = 0;
  int64_t v = -5;
  mxc_ndarray d = nullptr;
  EXPECT_EQ(mxc_data_iter_pad(it, &v), MXC_ERR_INVALID_ARGUMENT);  // no batch yet
  EXPECT_EQ(v, -5);
  EXPECT_EQ(mxc_data_iter_label(it, &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_next(it, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_data(it, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_num_examples(it, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_next(nullptr, &has), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_reset(nullptr), MXC_ERR_INVALID_ARGUMENT);
  // A handle kept across next: its contents never change.
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
  ASSERT_EQ(mxc_data_iter_data(it, &d), MXC_OK);
  auto before = read(d);
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
  mxc_data_iter_free(it);
  EXPECT_EQ(read(d), before);  // and it outlives the iterator
  // Freed handle and wrong kind of handle.
  EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_data_iter_reset(it), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_data_iter_num_examples((mxc_data_iter)d, &v), MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(err().find("mxc_data_iter"), std::string::npos) << err();
  mxc_data_iter_free(it);       // reported, not a double free
  mxc_data_iter_free(nullptr);  // accepted
  mxc_ndarray_free(d);
}

void settle() {
  mxc_wait_all();
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

int scenario(const Set &s) {
  mxc_data_iter it = nullptr;
  int rc = mxc_data_iter_idx_create(s.images.c_str(), s.labels.c_str(), 3, 1,
                                    7, 0, 1, MXC_LAST_BATCH_PAD, &it);
  if (rc != MXC_OK) return rc;
  int has = 0;
  mxc_ndarray d = nullptr, l = nullptr;
  for (int k = 0; k < 2 && rc == MXC_OK; ++k) rc = mxc_data_iter_next(it, &has);
  if (rc == MXC_OK) rc = mxc_data_iter_data(it, &d);
  if (rc == MXC_OK) rc = mxc_data_iter_label(it, &l);
  if (rc == MXC_OK) rc = mxc_data_iter_reset(it);
  mxc_ndarray_free(d);
  mxc_ndarray_free(l);
  mxc_data_iter_free(it);
  return rc;
}

TEST(IdxFaults, EveryAllocationFails) {
  Set s = make_set("oom", 5, 3, 3, true);
  ASSERT_EQ(scenario(s), MXC_OK) << err();  // warm-up
  settle();
  const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
  int failures = 0;
  for (int64_t n = 1; n < 10000; ++n) {
    mxc__fault_alloc_arm(n, 0);
    int rc = scenario(s);
    int fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    if (fired && rc != MXC_OK) {
      EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation " << n << ": " << err();
      EXPECT_NE(err().find("out of memory"), std::string::npos) << err();
    }
    settle();
    ASSERT_EQ(mxc_wait_all(), MXC_OK);
    EXPECT_EQ(mxc__alloc_live(), live0) << "leak after failing allocation " << n;
    EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      break;
    }
    ++failures;
  }
  EXPECT_GT(failures, 5);
  printf("walked %d injected allocation failures\n", failures);
}

TEST(IdxFaults, EveryIoOperationFails) {
  Set s = make_set("iofault", 5, 3, 3, true);
  const int64_t live0 = mxc__alloc_live();
  for (int64_t n = 1; n < 1000; ++n) {
    mxc__fault_io_arm(n);
    int rc = create_rc(s);
    int fired = mxc__fault_io_fired();
    mxc__fault_io_arm(0);
    EXPECT_EQ(mxc__alloc_live(), live0);
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      break;
    }
    EXPECT_EQ(rc, MXC_ERR_IO) << "I/O operation " << n;
  }
}

TEST(IdxReal, FashionMnistTrain) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  Set s{dir + "train-images-idx3-ubyte.gz", dir + "train-labels-idx1-ubyte.gz"};
  struct stat st;
  if (stat(s.images.c_str(), &st) != 0 || stat(s.labels.c_str(), &st) != 0) {
    GTEST_SKIP() << "Fashion-MNIST not installed";
  }
  mxc_data_iter it = open(s, 1000, 1, 1, 0, 1, MXC_LAST_BATCH_DISCARD);
  int64_t n = 0;
  ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK);
  EXPECT_EQ(n, 60000);
  int has = 0;
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
  ASSERT_EQ(has, 1);
  mxc_ndarray d = nullptr, l = nullptr;
  ASSERT_EQ(mxc_data_iter_data(it, &d), MXC_OK);
  ASSERT_EQ(mxc_data_iter_label(it, &l), MXC_OK);
  EXPECT_EQ(shape_of(d), (std::vector<int64_t>{1000, 1, 28, 28}));
  for (float v : read(d)) ASSERT_TRUE(v >= 0.0f && v <= 1.0f);
  for (float v : read(l)) ASSERT_TRUE(v >= 0 && v <= 9 && v == (int)v);
  mxc_ndarray_free(d);
  mxc_ndarray_free(l);
  mxc_data_iter_free(it);
}

}  // namespace
