// mxc_data_iter_set_parts for every kind of iterator (IDX, CSV with a
// label column or a label file, LibSVM, image records): for 1, 2, 3 and 5
// parts, the parts' examples (compared by content: labels and features)
// are the data set exactly once; each part is the range or the round robin
// the header promises; padding comes from the part's own start; invalid
// arguments and calls after the epoch started are refused with a message.
// Expected examples come from this file's own writers (IDX, CSV, LibSVM)
// or, for image records, from an unsharded read (whose pixels
// test_image_iter checks against scripts/image_iter_ref.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/sparse_util/sparse_util.h"

namespace {

using Row = std::vector<double>;  // an example: its labels, then features
using Maker = std::function<mxc_data_iter(int64_t batch, int last_batch)>;

std::string err() { return mxc_last_error(); }

std::string tmp_path(const std::string &name) {
  const char *d = std::getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

std::string write_file(const std::string &name, const std::string &bytes) {
  std::string path = tmp_path(name);
  std::ofstream f(path, std::ios::binary);
  f << bytes;
  return path;
}

// ---- reading a part ----

struct PartEpoch {
  std::vector<Row> rows;  // the part's examples, in the order read
  std::vector<Row> pads;  // the pad rows of the last batch
  int64_t batches = 0;
};

// Splits a batch into rows: labels (1 or w per row; none when the
// iterator has none) then the dense features.
std::vector<Row> batch_rows(mxc_data_iter it) {
  sparse_test::Arr d, l;
  EXPECT_EQ(mxc_data_iter_data(it, d.out()), MXC_OK) << err();
  int rc = mxc_data_iter_label(it, l.out());
  EXPECT_TRUE(rc == MXC_OK || rc == MXC_ERR_NOT_FOUND) << err();
  sparse_test::Dense x = sparse_test::read(d.get());
  sparse_test::Dense y;
  if (rc == MXC_OK) y = sparse_test::read(l.get());
  std::vector<Row> out((size_t)x.rows());
  for (int64_t r = 0; r < x.rows(); ++r) {
    if (rc == MXC_OK) {
      auto at = y.v.begin() + r * y.row_len();
      out[(size_t)r].assign(at, at + y.row_len());
    }
    auto at = x.v.begin() + r * x.row_len();
    out[(size_t)r].insert(out[(size_t)r].end(), at, at + x.row_len());
  }
  return out;
}

PartEpoch read_epoch(mxc_data_iter it) {
  PartEpoch e;
  int has = 0;
  while (true) {
    EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_OK) << err();
    if (!has) break;
    std::vector<Row> rows = batch_rows(it);
    int64_t pad = -1;
    EXPECT_EQ(mxc_data_iter_pad(it, &pad), MXC_OK);
    size_t real = rows.size() - (size_t)pad;
    e.rows.insert(e.rows.end(), rows.begin(), rows.begin() + (long)real);
    e.pads.insert(e.pads.end(), rows.begin() + (long)real, rows.end());
    e.batches++;
  }
  return e;
}

// The expected examples of part k of p: a contiguous range or a round
// robin over `all`.
std::vector<Row> expected_part(const std::vector<Row> &all, int64_t p,
                               int64_t k, bool contiguous) {
  std::vector<Row> out;
  int64_t n = (int64_t)all.size();
  for (int64_t i = 0; i < n; ++i) {
    bool mine = contiguous ? (i >= n * k / p && i < n * (k + 1) / p)
                           : i % p == k;
    if (mine) out.push_back(all[(size_t)i]);
  }
  return out;
}

// For p in {1, 2, 3, 5}, both last-batch modes and two batch sizes: each
// part reads exactly its expected examples (in order unless shuffled),
// pads from its own start, reports its size where known; with padding the
// parts together are `all` exactly once.
void check_parts(const Maker &make, const std::vector<Row> &all,
                 bool contiguous, bool knows_count, bool shuffled = false) {
  for (int64_t p : {1, 2, 3, 5}) {
    for (int64_t batch : {2, 4}) {
      for (int last : {MXC_LAST_BATCH_PAD, MXC_LAST_BATCH_DISCARD}) {
        std::vector<Row> seen;
        for (int64_t k = 0; k < p; ++k) {
          SCOPED_TRACE("part " + std::to_string(k) + " of " +
                       std::to_string(p) + ", batch " +
                       std::to_string(batch) + ", last " +
                       std::to_string(last));
          mxc_data_iter it = make(batch, last);
          ASSERT_NE(it, nullptr) << err();
          ASSERT_EQ(mxc_data_iter_set_parts(it, p, k), MXC_OK) << err();
          std::vector<Row> want = expected_part(all, p, k, contiguous);
          int64_t n = -1;
          if (knows_count) {
            ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK) << err();
            EXPECT_EQ(n, (int64_t)want.size());
          }
          PartEpoch e = read_epoch(it);
          ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK) << err();
          EXPECT_EQ(n, (int64_t)want.size());
          mxc_data_iter_free(it);
          int64_t w = (int64_t)want.size();
          if (last == MXC_LAST_BATCH_DISCARD) {
            EXPECT_TRUE(e.pads.empty());
            ASSERT_EQ((int64_t)e.rows.size(), w / batch * batch);
            if (!shuffled) want.resize(e.rows.size());
          } else {
            EXPECT_EQ((int64_t)e.pads.size(), w % batch ? batch - w % batch : 0);
            for (size_t j = 0; j < e.pads.size(); ++j) {
              EXPECT_EQ(e.pads[j], e.rows[j % e.rows.size()]) << "pad " << j;
            }
            seen.insert(seen.end(), e.rows.begin(), e.rows.end());
          }
          if (shuffled && last == MXC_LAST_BATCH_PAD) {
            std::vector<Row> a = e.rows, b = want;
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            EXPECT_EQ(a, b);
          } else if (!shuffled) {
            EXPECT_EQ(e.rows, want);
          }
        }
        if (last == MXC_LAST_BATCH_PAD) {
          std::vector<Row> a = seen, b = all;
          std::sort(a.begin(), a.end());
          std::sort(b.begin(), b.end());
          EXPECT_EQ(a, b) << p << " parts";
        }
      }
    }
  }
}

// Every kind refuses the same bad arguments, and a call once the epoch
// has begun; a reset opens the epoch's start again.
void check_bad_arguments(mxc_data_iter it) {
  struct Bad {
    int64_t p, k;
    const char *says;
  };
  for (const Bad &b : {Bad{0, 0, "num_parts is 0"}, Bad{-2, 0, "num_parts"},
                       Bad{(int64_t)1 << 31, 0, "num_parts"},
                       Bad{3, -1, "part_index is -1"},
                       Bad{3, 3, "part_index is 3"}}) {
    EXPECT_EQ(mxc_data_iter_set_parts(it, b.p, b.k), MXC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find(b.says), std::string::npos) << err();
    EXPECT_NE(err().find("mxc_data_iter_set_parts"), std::string::npos);
  }
  ASSERT_EQ(mxc_data_iter_set_parts(it, 2, 1), MXC_OK) << err();
  int has = 0;
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK) << err();
  EXPECT_EQ(mxc_data_iter_set_parts(it, 2, 0), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("the epoch has started"), std::string::npos) << err();
  ASSERT_EQ(mxc_data_iter_reset(it), MXC_OK) << err();
  EXPECT_EQ(mxc_data_iter_set_parts(it, 2, 0), MXC_OK) << err();
  EXPECT_EQ(mxc_data_iter_set_parts(it, 1, 0), MXC_OK) << err();  // twice
  mxc_data_iter_free(it);
}

// ---- IDX ----

std::string be32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[(size_t)i] = (char)(v >> (24 - 8 * i));
  return s;
}

// n images of 3 x 2 bytes, example i's pixels (i * 13 + j * 7) % 251 and
// label i % 200; `all` gets them as rows.
std::pair<std::string, std::string> make_idx(int n, std::vector<Row> *all) {
  std::string img = std::string("\0\0\x08\x03", 4) + be32((uint32_t)n) +
                    be32(3) + be32(2);
  std::string lab = std::string("\0\0\x08\x01", 4) + be32((uint32_t)n);
  for (int i = 0; i < n; ++i) {
    Row r = {(double)(i % 200)};
    lab.push_back((char)(i % 200));
    for (int j = 0; j < 6; ++j) {
      int v = (i * 13 + j * 7) % 251;
      img.push_back((char)v);
      r.push_back(v);
    }
    all->push_back(r);
  }
  std::string tag = std::to_string(n);
  return {write_file("idx" + tag + ".img", img),
          write_file("idx" + tag + ".lab", lab)};
}

Maker idx_maker(const std::pair<std::string, std::string> &f, int shuffle) {
  return [f, shuffle](int64_t batch, int last) {
    mxc_data_iter it = nullptr;
    EXPECT_EQ(mxc_data_iter_idx_create(f.first.c_str(), f.second.c_str(),
                                       batch, shuffle, 77, 1, 0, last, &it),
              MXC_OK)
        << err();
    return it;
  };
}

TEST(Shard, IdxPartsAreContiguousRanges) {
  std::vector<Row> all;
  auto files = make_idx(17, &all);
  check_parts(idx_maker(files, 0), all, true, true);
}

TEST(Shard, IdxShufflesWithinThePartDeterministically) {
  std::vector<Row> all;
  auto files = make_idx(17, &all);
  check_parts(idx_maker(files, 1), all, true, true, true);
  // Part 1 of 2: the same order from two iterators with the same seed,
  // another order next epoch, always the part's examples.
  std::vector<Row> want = expected_part(all, 2, 1, true);
  std::sort(want.begin(), want.end());
  std::vector<std::vector<Row>> orders;
  for (int copy = 0; copy < 2; ++copy) {
    mxc_data_iter it = idx_maker(files, 1)(1, MXC_LAST_BATCH_PAD);
    ASSERT_EQ(mxc_data_iter_set_parts(it, 2, 1), MXC_OK) << err();
    for (int epoch = 0; epoch < 2; ++epoch) {
      orders.push_back(read_epoch(it).rows);
      std::vector<Row> got = orders.back();
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want);
      ASSERT_EQ(mxc_data_iter_reset(it), MXC_OK);
    }
    mxc_data_iter_free(it);
  }
  EXPECT_EQ(orders[0], orders[2]);
  EXPECT_EQ(orders[1], orders[3]);
  EXPECT_NE(orders[0], orders[1]);
}

TEST(Shard, IdxMorePartsThanExamplesGivesEmptyParts) {
  std::vector<Row> all;
  auto files = make_idx(3, &all);
  check_parts(idx_maker(files, 0), all, true, true);  // p = 5: two empty
}

TEST(Shard, IdxBadArguments) {
  std::vector<Row> all;
  check_bad_arguments(idx_maker(make_idx(17, &all), 0)(2, 0));
}

// ---- CSV ----

// n rows of 4 fields (a header, blank lines between some rows): row i's
// field j is i + j / 4, exact in float32. With label_col 1 that field is
// the label; with a label file (its own header and blank lines) row i's
// labels are (-i, i / 2).
struct CsvFiles {
  std::string data, labels;
  std::vector<Row> col_rows, file_rows;  // for label_col 1 / label file
};

CsvFiles make_csv(int n) {
  CsvFiles f;
  std::ostringstream d, l;
  d << "a,b,c,d\n";
  l << "y0,y1\n\n";
  for (int i = 0; i < n; ++i) {
    Row with_col = {i + 0.25}, with_file = {-(double)i, i / 2.0};
    for (int j = 0; j < 4; ++j) {
      d << (j ? "," : "") << i + j / 4.0;
      if (j != 1) with_col.push_back(i + j / 4.0);
      with_file.push_back(i + j / 4.0);
    }
    d << (i % 4 == 1 ? "\n\n" : "\n");
    l << -i << ", " << i / 2.0 << (i % 5 == 2 ? "\r\n \n" : "\n");
    f.col_rows.push_back(with_col);
    f.file_rows.push_back(with_file);
  }
  f.data = write_file("shard.csv", d.str());
  f.labels = write_file("shard_labels.csv", l.str());
  return f;
}

Maker csv_maker(const CsvFiles &f, bool label_file) {
  return [f, label_file](int64_t batch, int last) {
    mxc_data_iter it = nullptr;
    EXPECT_EQ(mxc_data_iter_csv_create(
                  f.data.c_str(), label_file ? f.labels.c_str() : nullptr, 0,
                  batch, 1, label_file ? -1 : 1, last, &it),
              MXC_OK)
        << err();
    return it;
  };
}

TEST(Shard, CsvPartsAreRoundRobinWithLabelColumnOrLabelFile) {
  CsvFiles f = make_csv(19);
  check_parts(csv_maker(f, false), f.col_rows, false, false);
  check_parts(csv_maker(f, true), f.file_rows, false, false);
}

TEST(Shard, CsvOtherPartsRowsAreNotParsed) {
  // Row 2 is malformed: part 0 of 2 (rows 0, 2, 4) fails naming its
  // line, part 1 reads rows 1 and 3 only.
  std::string path = write_file("bad.csv", "1,2\n3,4\n5,x\n7,8\n9,10\n");
  for (int64_t k : {0, 1}) {
    mxc_data_iter it = nullptr;
    ASSERT_EQ(mxc_data_iter_csv_create(path.c_str(), nullptr, 0, 8, 0, -1,
                                       MXC_LAST_BATCH_DISCARD, &it),
              MXC_OK);
    ASSERT_EQ(mxc_data_iter_set_parts(it, 2, k), MXC_OK);
    int has = 0;
    if (k == 0) {
      EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_IO);
      EXPECT_NE(err().find("bad.csv:3:"), std::string::npos) << err();
    } else {
      ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK) << err();
      EXPECT_EQ(has, 0);  // 2 rows < batch 8, discarded
      int64_t n = 0;
      ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK);
      EXPECT_EQ(n, 2);
    }
    mxc_data_iter_free(it);
  }
}

TEST(Shard, CsvLabelFileShorterIsStillAnErrorInAnyPart) {
  std::string d = write_file("d3.csv", "1\n2\n3\n");
  std::string l = write_file("l2.csv", "1\n2\n");
  for (int64_t k : {0, 1}) {
    mxc_data_iter it = nullptr;
    ASSERT_EQ(mxc_data_iter_csv_create(d.c_str(), l.c_str(), 0, 4, 0, -1,
                                       MXC_LAST_BATCH_PAD, &it),
              MXC_OK);
    ASSERT_EQ(mxc_data_iter_set_parts(it, 2, k), MXC_OK);
    int has = 0;
    EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_IO);
    EXPECT_NE(err().find("fewer rows"), std::string::npos) << err();
    mxc_data_iter_free(it);
  }
}

TEST(Shard, CsvBadArguments) {
  check_bad_arguments(csv_maker(make_csv(19), false)(2, 0));
}

// ---- LibSVM ----

// n examples (comment lines and blank lines between): example i has label
// i / 2 and features j < 7 with (i + j) % 3 == 0, value i - j / 2; some
// examples have no features. `all` gets dense rows.
std::string make_libsvm(int n, std::vector<Row> *all) {
  std::ostringstream s;
  s << "# a comment line\n\n";
  for (int i = 0; i < n; ++i) {
    Row r(8, 0.0);
    r[0] = i / 2.0;
    s << i / 2.0;
    for (int j = 0; j < 7 && i % 6 != 5; ++j) {
      if ((i + j) % 3) continue;
      s << " " << j << ":" << i - j / 2.0;
      r[(size_t)j + 1] = i - j / 2.0;
    }
    s << (i % 4 == 0 ? "  # trailing\n   \n" : "\n");
    all->push_back(r);
  }
  return write_file("shard.svm", s.str());
}

Maker libsvm_maker(const std::string &path) {
  return [path](int64_t batch, int last) {
    mxc_data_iter it = nullptr;
    EXPECT_EQ(
        mxc_data_iter_libsvm_create(path.c_str(), 7, batch, 0, last, &it),
        MXC_OK)
        << err();
    return it;
  };
}

TEST(Shard, LibsvmPartsAreRoundRobin) {
  std::vector<Row> all;
  std::string path = make_libsvm(18, &all);
  check_parts(libsvm_maker(path), all, false, false);
}

TEST(Shard, LibsvmBadArguments) {
  std::vector<Row> all;
  check_bad_arguments(libsvm_maker(make_libsvm(18, &all))(2, 0));
}

// ---- image records ----

const std::string &rec_path() {
  static std::string path = [] {
    std::string d = tmp_path("shard_rec");
    std::string cmd = "mkdir -p " + d +
                      " && /usr/bin/python3 scripts/image_iter_ref.py make " +
                      d;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return d + "/images.rec";
  }();
  return path;
}

mxc_data_iter make_image(int64_t batch, int last, const char *threads = "2",
                         const char *parts = "1") {
  std::string b = std::to_string(batch), rb = last ? "0" : "1";
  const char *k[] = {"path_imgrec", "data_shape",         "batch_size",
                     "round_batch", "preprocess_threads", "num_parts"};
  const char *v[] = {rec_path().c_str(), "(3, 6, 5)", b.c_str(),
                     rb.c_str(),         threads,     parts};
  mxc_data_iter it = nullptr;
  EXPECT_EQ(mxc_data_iter_image_record_create(6, k, v, &it), MXC_OK) << err();
  return it;
}

std::vector<Row> image_rows() {
  mxc_data_iter it = make_image(1, 1);
  std::vector<Row> all = read_epoch(it).rows;
  mxc_data_iter_free(it);
  EXPECT_EQ(all.size(), 23u);
  return all;
}

TEST(Shard, ImageRecordPartsAreContiguousRanges) {
  check_parts([](int64_t b, int last) { return make_image(b, last); },
              image_rows(), true, true);
}

TEST(Shard, ImageRecordSetPartsReplacesTheParametersAndDropsPrefetch) {
  std::vector<Row> all = image_rows();
  // Created as part 0 of 3 with workers already decoding it; switched to
  // part 1 of 2 before the first next, then to part 0 of 5 after a reset.
  mxc_data_iter it = make_image(3, 0, "3", "3");
  ASSERT_EQ(mxc_data_iter_set_parts(it, 2, 1), MXC_OK) << err();
  EXPECT_EQ(read_epoch(it).rows, expected_part(all, 2, 1, true));
  ASSERT_EQ(mxc_data_iter_reset(it), MXC_OK);
  ASSERT_EQ(mxc_data_iter_set_parts(it, 5, 0), MXC_OK) << err();
  EXPECT_EQ(read_epoch(it).rows, expected_part(all, 5, 0, true));
  mxc_data_iter_free(it);
}

TEST(Shard, ImageRecordRefusesAnEmptyPartAndKeepsItsOwn) {
  std::vector<Row> all = image_rows();
  mxc_data_iter it = make_image(4, 0);
  ASSERT_EQ(mxc_data_iter_set_parts(it, 2, 0), MXC_OK) << err();
  EXPECT_EQ(mxc_data_iter_set_parts(it, 30, 0), MXC_ERR_IO);
  EXPECT_NE(err().find("part 0 of 30 holds no records (the file has 23)"),
            std::string::npos)
      << err();
  EXPECT_EQ(read_epoch(it).rows, expected_part(all, 2, 0, true));
  mxc_data_iter_free(it);
}

TEST(Shard, ImageRecordBadArguments) { check_bad_arguments(make_image(2, 0)); }

}  // namespace
