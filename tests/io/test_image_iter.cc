// The image record iterator against scripts/image_iter_ref.py (numpy and
// PIL, its own Philox, order and augmentation), the same batches for any
// thread count, sharding that covers the file once, the last batch, and
// errors: bad parameters and records that cannot be decoded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

std::string err() { return mxc_last_error(); }

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

const std::string &rec_path() {
  static std::string path = [] {
    std::string d = tmp_path("iter");
    std::string cmd = "mkdir -p " + d +
                      " && /usr/bin/python3 scripts/image_iter_ref.py make " + d;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return d + "/images.rec";
  }();
  return path;
}

using Params = std::vector<std::pair<std::string, std::string>>;

struct Epoch {
  std::vector<float> data, label;
  std::vector<int64_t> pad;
  int64_t batches = 0;
};

mxc_data_iter make_iter(const Params &p, int *rc_out = nullptr) {
  std::vector<const char *> k, v;
  std::string rp = rec_path();
  k.push_back("path_imgrec");
  v.push_back(rp.c_str());
  for (const auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  mxc_data_iter it = nullptr;
  int rc = mxc_data_iter_image_record_create((int)k.size(), k.data(), v.data(),
                                             &it);
  if (rc_out) *rc_out = rc;
  else EXPECT_EQ(rc, MXC_OK) << err();
  return it;
}

void append(mxc_ndarray a, std::vector<float> *out) {
  int64_t n = 0;
  ASSERT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  size_t at = out->size();
  out->resize(at + (size_t)n);
  ASSERT_EQ(mxc_ndarray_copy_to_host(a, out->data() + at, (size_t)n * 4),
            MXC_OK);
  mxc_ndarray_free(a);
}

Epoch read_epoch(mxc_data_iter it) {
  Epoch e;
  int has = 0;
  while (mxc_data_iter_next(it, &has) == MXC_OK && has) {
    mxc_ndarray d = nullptr, l = nullptr;
    EXPECT_EQ(mxc_data_iter_data(it, &d), MXC_OK);
    EXPECT_EQ(mxc_data_iter_label(it, &l), MXC_OK);
    append(d, &e.data);
    append(l, &e.label);
    int64_t pad = -1;
    EXPECT_EQ(mxc_data_iter_pad(it, &pad), MXC_OK);
    e.pad.push_back(pad);
    e.batches++;
  }
  return e;
}

std::vector<float> slurp_f32(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), {});
  std::vector<float> out(b.size() / 4);
  std::copy(b.begin(), b.begin() + (long)(out.size() * 4),
            reinterpret_cast<char *>(out.data()));
  return out;
}

Epoch reference(const Params &p, int epoch) {
  std::string prefix = tmp_path("ref_out");
  std::string cmd = "/usr/bin/python3 scripts/image_iter_ref.py batches " +
                    rec_path() + " " + prefix + " epoch=" +
                    std::to_string(epoch);
  for (const auto &kv : p) cmd += " '" + kv.first + "=" + kv.second + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Epoch e;
  e.data = slurp_f32(prefix + ".data");
  e.label = slurp_f32(prefix + ".label");
  std::ifstream pf(prefix + ".pad");
  int64_t x;
  while (pf >> x) e.pad.push_back(x);
  e.batches = (int64_t)e.pad.size();
  return e;
}

// Values agree within tol (relative to 1 + |ref|) except for at most
// `outliers` of them (rotation: a source point on the image's border may
// land inside on one side and outside on the other by a rounding).
void expect_close(const Epoch &got, const Epoch &ref, float tol,
                  double outliers) {
  ASSERT_EQ(got.batches, ref.batches);
  EXPECT_EQ(got.pad, ref.pad);
  EXPECT_EQ(got.label, ref.label);
  ASSERT_EQ(got.data.size(), ref.data.size());
  size_t bad = 0;
  for (size_t i = 0; i < ref.data.size(); ++i) {
    if (std::fabs(got.data[i] - ref.data[i]) > tol * (1 + std::fabs(ref.data[i]))) {
      bad++;
    }
  }
  EXPECT_LE((double)bad, outliers * (double)ref.data.size())
      << bad << " of " << ref.data.size() << " values differ";
}

const Params kPlain = {{"data_shape", "(3, 12, 14)"}, {"batch_size", "5"},
                       {"mean_r", "120"}, {"mean_g", "110"},
                       {"mean_b", "100"}, {"std_r", "60"}, {"std_g", "50"},
                       {"std_b", "40"}, {"scale", "2"}};

TEST(ImageIter, CentreCropsMatchTheReferenceExactly) {
  mxc_data_iter it = make_iter(kPlain);
  ASSERT_NE(it, nullptr);
  expect_close(read_epoch(it), reference(kPlain, 0), 1e-6f, 0);
  mxc_data_iter_free(it);
}

Params with(Params p, const Params &more) {
  p.insert(p.end(), more.begin(), more.end());
  return p;
}

const Params kAugmented = with(
    kPlain, {{"shuffle", "1"}, {"seed", "11"}, {"resize", "18"},
             {"rand_crop", "1"}, {"rand_mirror", "1"},
             {"max_rotate_angle", "20"}, {"brightness", "0.3"},
             {"contrast", "0.4"}, {"saturation", "0.5"}});

TEST(ImageIter, AugmentationMatchesTheReferenceOverTwoEpochs) {
  mxc_data_iter it = make_iter(kAugmented);
  ASSERT_NE(it, nullptr);
  Epoch e0 = read_epoch(it);
  expect_close(e0, reference(kAugmented, 0), 1e-4f, 0.002);
  ASSERT_EQ(mxc_data_iter_reset(it), MXC_OK);
  Epoch e1 = read_epoch(it);
  expect_close(e1, reference(kAugmented, 1), 1e-4f, 0.002);
  EXPECT_NE(e0.label, e1.label);  // a new order
  mxc_data_iter_free(it);
}

TEST(ImageIter, GrayAndLabelWidthTwo) {
  Params p = {{"data_shape", "1,10,9"}, {"batch_size", "4"},
              {"label_width", "1"}, {"rand_crop", "1"}, {"seed", "3"},
              {"contrast", "0.5"}, {"pad", "3"}, {"fill_value", "7"}};
  mxc_data_iter it = make_iter(p);
  ASSERT_NE(it, nullptr);
  expect_close(read_epoch(it), reference(p, 0), 1e-4f, 0);
  mxc_data_iter_free(it);
  // label_width 2: records with one label are an error naming the record.
  p[2].second = "2";
  it = make_iter(p);
  ASSERT_NE(it, nullptr);
  int has = 1;
  EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_IO);
  EXPECT_NE(err().find(": 1 labels; label_width is 2"), std::string::npos)
      << err();
  mxc_data_iter_free(it);
}

TEST(ImageIter, SameBatchesForAnyThreadCountAndPrefetch) {
  Epoch first;
  for (const char *threads : {"1", "2", "4"}) {
    for (const char *prefetch : {"1", "3"}) {
      Params p = with(kAugmented, {{"preprocess_threads", threads},
                                   {"prefetch_buffer", prefetch}});
      mxc_data_iter it = make_iter(p);
      ASSERT_NE(it, nullptr);
      Epoch e = read_epoch(it);
      mxc_data_iter_free(it);
      if (first.batches == 0) {
        first = e;
        continue;
      }
      EXPECT_EQ(e.data, first.data) << threads << " threads";  // bitwise
      EXPECT_EQ(e.label, first.label);
    }
  }
}

TEST(ImageIter, PartsAreDisjointAndCoverTheFile) {
  std::multiset<float> seen;
  int64_t total = 0;
  for (int part = 0; part < 3; ++part) {
    Params p = {{"data_shape", "3,8,8"}, {"batch_size", "2"},
                {"round_batch", "0"}, {"shuffle", "1"}, {"seed", "9"},
                {"num_parts", "3"}, {"part_index", std::to_string(part)}};
    mxc_data_iter it = make_iter(p);
    ASSERT_NE(it, nullptr);
    int64_t n = 0;
    ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK);
    total += n;
    Epoch e = read_epoch(it);
    EXPECT_EQ(e.batches, n / 2);
    mxc_data_iter_free(it);
    // batch 1 reads every example once per epoch.
    p[1].second = "1";
    it = make_iter(p);
    Epoch all = read_epoch(it);
    mxc_data_iter_free(it);
    EXPECT_EQ(all.batches, n);
    seen.insert(all.label.begin(), all.label.end());
  }
  EXPECT_EQ(total, 23);
  ASSERT_EQ(seen.size(), 23u);
  for (int i = 0; i < 23; ++i) EXPECT_EQ(seen.count((float)i), 1u) << i;
}

TEST(ImageIter, LastBatchIsPaddedOrDropped) {
  Params p = {{"data_shape", "3,8,8"}, {"batch_size", "10"}};
  mxc_data_iter it = make_iter(p);
  Epoch e = read_epoch(it);
  mxc_data_iter_free(it);
  EXPECT_EQ(e.batches, 3);
  EXPECT_EQ(e.pad, (std::vector<int64_t>{0, 0, 7}));
  EXPECT_EQ(e.label[20], 20.0f);
  EXPECT_EQ(e.label[23], 0.0f);  // filled from the epoch's start
  p.push_back({"round_batch", "0"});
  it = make_iter(p);
  e = read_epoch(it);
  mxc_data_iter_free(it);
  EXPECT_EQ(e.batches, 2);
}

TEST(ImageIter, BadParametersAreRefusedNamingThem) {
  const std::vector<std::pair<Params, std::string>> cases = {
      {{{"batch_size", "2"}}, "required"},
      {{{"data_shape", "(2,8,8)"}, {"batch_size", "2"}}, "data_shape"},
      {{{"data_shape", "3,8"}, {"batch_size", "2"}}, "data_shape"},
      {{{"data_shape", "3,8,8"}, {"batch_size", "0"}}, "batch_size"},
      {{{"data_shape", "3,8,8"}, {"batch_size", "2"}, {"colour", "1"}},
       "unknown parameter \"colour\""},
      {{{"data_shape", "3,8,8"}, {"batch_size", "2"}, {"num_parts", "2"},
        {"part_index", "2"}},
       "part_index"},
      {{{"data_shape", "3,8,8"}, {"batch_size", "2"},
        {"preprocess_threads", "1000"}},
       "preprocess_threads"},
      {{{"data_shape", "3,8,8"}, {"batch_size", "2"}, {"std_r", "0"}},
       "std_r"},
  };
  for (const auto &c : cases) {
    int rc = 0;
    mxc_data_iter it = make_iter(c.first, &rc);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << c.second;
    EXPECT_EQ(it, nullptr);
    EXPECT_NE(err().find(c.second), std::string::npos) << err();
  }
  const char *k[] = {"path_imgrec", "data_shape", "batch_size"};
  const char *v[] = {"/nonexistent.rec", "3,8,8", "2"};
  mxc_data_iter it = nullptr;
  EXPECT_EQ(mxc_data_iter_image_record_create(3, k, v, &it), MXC_ERR_IO);
  EXPECT_EQ(mxc_data_iter_image_record_create(3, k, v, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
}

// A record whose image is damaged fails the batch that holds it, naming
// the record; the next epoch starts cleanly after a reset.
// n records whose image is a PNG signature and nothing else.
void write_undecodable(const std::string &path, int n) {
  mxc_recordio w = nullptr;
  ASSERT_EQ(mxc_recordio_open(path.c_str(), nullptr, "w", &w), MXC_OK);
  float label = 1;
  int64_t need = 0;
  const char junk[] = "\x89PNG\r\n\x1a\nnot really";
  std::vector<char> rec(64);
  ASSERT_EQ(mxc_recordio_pack_image(&label, 1, 0, 0, junk, sizeof junk,
                                    rec.data(), (int64_t)rec.size(), &need),
            MXC_OK);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(mxc_recordio_write(w, rec.data(), need), MXC_OK);
  }
  mxc_recordio_free(w);
}

TEST(ImageIter, UndecodableRecordsFailTheirBatch) {
  std::string bad = tmp_path("bad.rec");
  write_undecodable(bad, 3);
  const char *k[] = {"path_imgrec", "data_shape", "batch_size"};
  const char *v[] = {bad.c_str(), "3,8,8", "2"};
  mxc_data_iter it = nullptr;
  ASSERT_EQ(mxc_data_iter_image_record_create(3, k, v, &it), MXC_OK) << err();
  int has = 1;
  EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_IO);
  EXPECT_NE(err().find("bad.rec' record "), std::string::npos) << err();
  EXPECT_NE(err().find("PNG"), std::string::npos) << err();
  EXPECT_EQ(mxc_data_iter_reset(it), MXC_OK);
  EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_IO);
  mxc_data_iter_free(it);
}

// Many workers failing rows of the same batches at once: each batch still
// fails with one message, and (under TSan) the failure is recorded without
// a race against the workers starting rows of that batch.
TEST(ImageIter, ConcurrentFailuresInOneBatch) {
  std::string bad = tmp_path("bad_many.rec");
  write_undecodable(bad, 64);
  const char *k[] = {"path_imgrec", "data_shape", "batch_size",
                     "preprocess_threads", "prefetch_buffer"};
  const char *v[] = {bad.c_str(), "3,8,8", "16", "4", "4"};
  mxc_data_iter it = nullptr;
  ASSERT_EQ(mxc_data_iter_image_record_create(5, k, v, &it), MXC_OK) << err();
  for (int epoch = 0; epoch < 3; ++epoch) {
    int has = 1;
    for (int b = 0; b < 4; ++b) {
      EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_IO) << b;
      EXPECT_NE(err().find("bad_many.rec' record "), std::string::npos)
          << err();
    }
    EXPECT_EQ(mxc_data_iter_reset(it), MXC_OK);
  }
  mxc_data_iter_free(it);
}

// ---- mean_img ----

// A file of one array (shape dims, dtype, every value v) named name, in
// MXNet's format, written through mxc's C API.
void save_mean_file(const std::string &path, std::vector<int64_t> dims,
                    int dtype, double v, const char *name = "mean_img") {
  mxc_ndarray a = nullptr;
  ASSERT_EQ(mxc_ndarray_create(dims.data(), (int)dims.size(), dtype,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK);
  int64_t n = 0;
  ASSERT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<float> f((size_t)n, (float)v);
  std::vector<double> d((size_t)n, v);
  const void *src = dtype == MXC_DTYPE_FLOAT32 ? (const void *)f.data()
                                               : (const void *)d.data();
  ASSERT_EQ(mxc_ndarray_copy_from_host(
                a, src, (size_t)n * (dtype == MXC_DTYPE_FLOAT32 ? 4 : 8)),
            MXC_OK);
  ASSERT_EQ(mxc_ndarray_save_format(path.c_str(), &a, &name, 1,
                                    MXC_FILE_FORMAT_MXNET),
            MXC_OK)
      << err();
  mxc_ndarray_free(a);
}

// The values of the array named "mean_img" of an NDArray file.
std::vector<float> load_mean(const std::string &path) {
  mxc_ndarray_list l = nullptr;
  std::vector<float> out;
  EXPECT_EQ(mxc_ndarray_load(path.c_str(), &l), MXC_OK) << err();
  if (!l) return out;
  const char *name = nullptr;
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_list_name(l, 0, &name), MXC_OK);
  EXPECT_STREQ(name, "mean_img");
  EXPECT_EQ(mxc_ndarray_list_get(l, 0, &a), MXC_OK);
  append(a, &out);
  mxc_ndarray_list_free(l);
  return out;
}

// Normalization by std and scale, random crops and mirrors, brightness:
// the mean image is subtracted per pixel before std and scale.
const Params kMeanBase = {
    {"data_shape", "(3, 12, 14)"}, {"batch_size", "5"}, {"std_r", "60"},
    {"std_g", "50"}, {"std_b", "40"}, {"scale", "2"}, {"shuffle", "1"},
    {"seed", "11"}, {"resize", "18"}, {"rand_crop", "1"},
    {"rand_mirror", "1"}, {"brightness", "0.3"}};

std::string fresh_path(const std::string &name) {
  std::string path = tmp_path(name);
  std::remove(path.c_str());
  return path;
}

TEST(ImageIterMean, ComputedOverTheFileSavedAndSubtracted) {
  for (const char *shape : {"(3, 12, 14)", "(1, 10, 9)"}) {
    SCOPED_TRACE(shape);
    Params base = kMeanBase;
    base[0].second = shape;
    std::string path = fresh_path("computed.mean");
    Params p = with(base, {{"mean_img", path}, {"num_parts", "2"},
                           {"part_index", "1"}});
    mxc_data_iter it = make_iter(p);
    ASSERT_NE(it, nullptr);
    // The file now holds the mean over all 23 records (not only this
    // part's), equal to numpy's over PIL's decode.
    std::string ref = fresh_path("ref.mean");
    std::string cmd = "/usr/bin/python3 scripts/image_iter_ref.py mean " +
                      rec_path() + " " + ref;
    for (const auto &kv : base) cmd += " '" + kv.first + "=" + kv.second + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::vector<float> got = load_mean(path), want = load_mean(ref);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_FALSE(want.empty());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-4f * (1 + std::fabs(want[i]))) << i;
    }
    // Batches against the reference subtracting the same file (read by
    // the reference's own NDArray reader), over two epochs.
    expect_close(read_epoch(it), reference(p, 0), 1e-4f, 0);
    ASSERT_EQ(mxc_data_iter_reset(it), MXC_OK);
    expect_close(read_epoch(it), reference(p, 1), 1e-4f, 0);
    mxc_data_iter_free(it);
  }
}

TEST(ImageIterMean, AnExistingFileIsLoadedNotRecomputed) {
  std::string path = fresh_path("reused.mean");
  Params p = with(kMeanBase, {{"mean_img", path}});
  mxc_data_iter it = make_iter(p);  // computes and writes it
  ASSERT_NE(it, nullptr);
  mxc_data_iter_free(it);
  // Replace it by a constant mean: a second iterator must use that.
  save_mean_file(path, {3, 12, 14}, MXC_DTYPE_FLOAT32, 50);
  it = make_iter(p);
  ASSERT_NE(it, nullptr);
  Params same = with(kMeanBase,
                     {{"mean_r", "50"}, {"mean_g", "50"}, {"mean_b", "50"}});
  expect_close(read_epoch(it), reference(same, 0), 1e-5f, 0);
  mxc_data_iter_free(it);
}

TEST(ImageIterMean, BadFilesAndParametersAreErrorsNamingThem) {
  struct Case {
    std::vector<int64_t> dims;
    int dtype;
    const char *name;
    int code;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {{3, 13, 14}, MXC_DTYPE_FLOAT32, "mean_img", MXC_ERR_SHAPE,
       {"(3,13,14)", "data_shape (3,12,14)"}},
      {{3, 12}, MXC_DTYPE_FLOAT32, "mean_img", MXC_ERR_SHAPE,
       {"(3,12)", "(3,12,14)"}},
      {{3, 12, 14}, MXC_DTYPE_FLOAT64, "mean_img", MXC_ERR_DTYPE,
       {"float64", "expected dense float32"}},
      {{3, 12, 14}, MXC_DTYPE_FLOAT32, "mean", MXC_ERR_IO,
       {"no array named \"mean_img\""}},
  };
  for (const Case &c : cases) {
    std::string path = fresh_path("bad.mean");
    save_mean_file(path, c.dims, c.dtype, 1, c.name);
    int rc = 0;
    mxc_data_iter it = make_iter(with(kMeanBase, {{"mean_img", path}}), &rc);
    EXPECT_EQ(it, nullptr);
    EXPECT_EQ(rc, c.code) << err();
    EXPECT_NE(err().find(path), std::string::npos) << err();
    for (const auto &s : c.says) {
      EXPECT_NE(err().find(s), std::string::npos) << err();
    }
  }
  std::string junk = fresh_path("junk.mean");
  std::ofstream(junk) << "not an array file";
  int rc = 0;
  EXPECT_EQ(make_iter(with(kMeanBase, {{"mean_img", junk}}), &rc), nullptr);
  EXPECT_EQ(rc, MXC_ERR_IO);
  EXPECT_NE(err().find(junk), std::string::npos) << err();
  // mean_img with mean_r/g/b: one way of subtracting a mean, not two.
  EXPECT_EQ(make_iter(with(kMeanBase, {{"mean_img", junk}, {"mean_g", "3"}}),
                      &rc),
            nullptr);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("mean_img and mean_r/g/b are both given"),
            std::string::npos)
      << err();
}

}  // namespace
