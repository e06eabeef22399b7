// The image record iterator against scripts/image_iter_ref.py (numpy and
// PIL, its own Philox, order and augmentation), the same batches for any
// thread count, sharding that covers the file once, the last batch, and
// errors: bad parameters and records that cannot be decoded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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
TEST(ImageIter, UndecodableRecordsFailTheirBatch) {
  std::string bad = tmp_path("bad.rec");
  {
    mxc_recordio w = nullptr;
    ASSERT_EQ(mxc_recordio_open(bad.c_str(), nullptr, "w", &w), MXC_OK);
    float label = 1;
    int64_t need = 0;
    const char junk[] = "\x89PNG\r\n\x1a\nnot really";
    std::vector<char> rec(64);
    ASSERT_EQ(mxc_recordio_pack_image(&label, 1, 0, 0, junk, sizeof junk,
                                      rec.data(), (int64_t)rec.size(), &need),
              MXC_OK);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(mxc_recordio_write(w, rec.data(), need), MXC_OK);
    }
    mxc_recordio_free(w);
  }
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

}  // namespace
