// LibSVM and CSV data iterators through the public C API
// (mxc_data_iter_libsvm_create, mxc_data_iter_csv_create): batches against
// a naive parse of the written file, padding and discarding of the last
// batch, reset, handles outliving batches and the iterator, malformed
// files reported with file:line, bad arguments, and an allocation-failure
// walk.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/file.h"
#include "core/base/handle.h"
}

namespace {

using sparse_test::Arr;
using sparse_test::Dense;

std::string err() { return mxc_last_error(); }

std::string write_file(const std::string &name, const std::string &text) {
  const char *d = std::getenv("TEST_TMPDIR");
  std::string path = std::string(d ? d : "/tmp") + "/" + name;
  std::ofstream f(path, std::ios::binary);
  f << text;
  return path;
}

// Owns an iterator handle.
struct Iter {
  mxc_data_iter h = nullptr;
  ~Iter() { mxc_data_iter_free(h); }
};

// One example: a dense row of the expected features and its labels.
struct Example {
  std::vector<double> x;
  std::vector<double> y;
};

// Random LibSVM text (comments, blank lines, tabs, empty rows) with
// n rows of `cols` columns; *rows gets the naive parse of what was
// written (the generator's own values, not the code under test).
std::string make_libsvm(int n, int cols, bool one_based, unsigned seed,
                        std::vector<Example> *rows) {
  std::mt19937 g(seed);
  std::ostringstream s;
  s << "# a comment line\n\n";
  for (int r = 0; r < n; ++r) {
    Example e{std::vector<double>(cols, 0.0), {double(g() % 5)}};
    s << e.y[0];
    for (int c = 0; c < cols; ++c) {
      if (g() % 3 != 0 || r % 4 == 3) continue;  // every 4th row empty
      double v = (double(int(g() % 33)) - 16.0) / 8.0;
      if (v == 0) v = 0.5;
      e.x[c] = v;
      s << (g() % 2 ? " " : "\t") << (c + (one_based ? 1 : 0)) << ":" << v;
    }
    s << (r % 5 == 2 ? "  # trailing comment\n" : "\n");
    if (r % 6 == 5) s << "\n";
    rows->push_back(e);
  }
  return s.str();
}

int64_t count_nonzero(const std::vector<double> &x) {
  int64_t n = 0;
  for (double v : x) n += v != 0;
  return n;
}

// The examples one epoch should give: batches of `batch` rows in file
// order; the last short batch padded with rows k % min(n, batch) of the
// file, or dropped. *pads gets each batch's pad.
std::vector<std::vector<Example>> expected_batches(
    const std::vector<Example> &rows, int64_t batch, int last,
    std::vector<int64_t> *pads) {
  std::vector<std::vector<Example>> out;
  const int64_t n = int64_t(rows.size());
  const int64_t head = std::min(n, batch);
  for (int64_t at = 0; at < n; at += batch) {
    int64_t take = std::min(batch, n - at);
    if (take < batch && last == MXC_LAST_BATCH_DISCARD) break;
    std::vector<Example> b(rows.begin() + at, rows.begin() + at + take);
    for (int64_t k = 0; k < batch - take; ++k) b.push_back(rows[k % head]);
    out.push_back(b);
    pads->push_back(batch - take);
  }
  return out;
}

// Checks one CSR data batch and its labels against the examples.
void check_libsvm_batch(mxc_ndarray data, mxc_ndarray label,
                        const std::vector<Example> &want, int cols) {
  ASSERT_EQ(sparse_test::stype_of(data), MXC_STYPE_CSR);
  ASSERT_EQ(mxc_ndarray_check_format(data, 1), MXC_OK) << err();
  Dense d = sparse_test::read(data);
  const int64_t b = int64_t(want.size());
  ASSERT_EQ(d.shape, (std::vector<int64_t>{b, cols}));
  int64_t nnz = 0;
  for (int64_t r = 0; r < b; ++r) {
    nnz += count_nonzero(want[r].x);
    for (int c = 0; c < cols; ++c) {
      ASSERT_EQ(d.v[r * cols + c], want[r].x[c]) << "row " << r << " col " << c;
    }
  }
  EXPECT_EQ(sparse_test::nnz_of(data), nnz);  // explicit zeros not stored
  Arr indptr;
  ASSERT_EQ(mxc_ndarray_aux(data, MXC_CSR_INDPTR, indptr.out()), MXC_OK);
  Dense ip = sparse_test::read(indptr.get());
  ASSERT_EQ(int64_t(ip.v.size()), b + 1);
  for (int64_t r = 0; r < b; ++r) {
    EXPECT_EQ(ip.v[r + 1] - ip.v[r], double(count_nonzero(want[r].x)));
  }
  Dense l = sparse_test::read(label);
  ASSERT_EQ(l.shape, (std::vector<int64_t>{b}));
  for (int64_t r = 0; r < b; ++r) EXPECT_EQ(l.v[r], want[r].y[0]);
}

// Reads one epoch and checks every batch, the end of the epoch and the
// number of examples then known.
void check_libsvm_epoch(mxc_data_iter it, const std::vector<Example> &rows,
                        int64_t batch, int last, int cols) {
  std::vector<int64_t> pads;
  auto want = expected_batches(rows, batch, last, &pads);
  int has = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK) << err();
    ASSERT_EQ(has, 1) << "batch " << i;
    int64_t pad = -1;
    ASSERT_EQ(mxc_data_iter_pad(it, &pad), MXC_OK);
    EXPECT_EQ(pad, pads[i]);
    Arr data, label;
    ASSERT_EQ(mxc_data_iter_data(it, data.out()), MXC_OK) << err();
    ASSERT_EQ(mxc_data_iter_label(it, label.out()), MXC_OK) << err();
    check_libsvm_batch(data.get(), label.get(), want[i], cols);
  }
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
  EXPECT_EQ(has, 0);
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);  // stays at the end
  EXPECT_EQ(has, 0);
  mxc_ndarray d = nullptr;
  EXPECT_EQ(mxc_data_iter_data(it, &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(d, nullptr);
  int64_t n = -1;
  ASSERT_EQ(mxc_data_iter_num_examples(it, &n), MXC_OK) << err();
  EXPECT_EQ(n, int64_t(rows.size()));
}

TEST(LibsvmIter, BatchesMatchTheFile) {
  for (bool one_based : {false, true}) {
    std::vector<Example> rows;
    const int cols = 11;
    std::string path = write_file(
        one_based ? "b1.svm" : "b0.svm",
        make_libsvm(23, cols, one_based, 5, &rows));
    for (int64_t batch : {1, 4, 5, 23, 40}) {
      for (int last : {MXC_LAST_BATCH_PAD, MXC_LAST_BATCH_DISCARD}) {
        SCOPED_TRACE("batch " + std::to_string(batch) + " last " +
                     std::to_string(last) + " one_based " +
                     std::to_string(one_based));
        Iter it;
        ASSERT_EQ(mxc_data_iter_libsvm_create(path.c_str(), cols, batch,
                                              one_based, last, &it.h),
                  MXC_OK) << err();
        int64_t n = -1;
        EXPECT_EQ(mxc_data_iter_num_examples(it.h, &n), MXC_ERR_UNSUPPORTED);
        EXPECT_EQ(n, -1);
        check_libsvm_epoch(it.h, rows, batch, last, cols);
        ASSERT_EQ(mxc_data_iter_reset(it.h), MXC_OK);  // epoch 2: the same
        check_libsvm_epoch(it.h, rows, batch, last, cols);
      }
    }
  }
}

TEST(LibsvmIter, ResetMidEpochAndHandlesOutliveBatches) {
  std::vector<Example> rows;
  std::string path = write_file("mid.svm", make_libsvm(10, 6, false, 9, &rows));
  Iter it;
  ASSERT_EQ(mxc_data_iter_libsvm_create(path.c_str(), 6, 4, 0,
                                        MXC_LAST_BATCH_PAD, &it.h),
            MXC_OK) << err();
  int has = 0;
  ASSERT_EQ(mxc_data_iter_next(it.h, &has), MXC_OK);
  Arr first, first_label;
  ASSERT_EQ(mxc_data_iter_data(it.h, first.out()), MXC_OK);
  ASSERT_EQ(mxc_data_iter_label(it.h, first_label.out()), MXC_OK);
  ASSERT_EQ(mxc_data_iter_next(it.h, &has), MXC_OK);
  ASSERT_EQ(mxc_data_iter_reset(it.h), MXC_OK);  // mid-epoch
  int64_t pad = 0;
  EXPECT_EQ(mxc_data_iter_pad(it.h, &pad), MXC_ERR_INVALID_ARGUMENT);
  check_libsvm_epoch(it.h, rows, 4, MXC_LAST_BATCH_PAD, 6);
  mxc_data_iter_free(it.h);
  it.h = nullptr;
  std::vector<Example> want(rows.begin(), rows.begin() + 4);
  check_libsvm_batch(first.get(), first_label.get(), want, 6);
}

TEST(LibsvmIter, EmptyFileHasNoBatches) {
  std::string path = write_file("empty.svm", "# nothing\n\n");
  Iter it;
  ASSERT_EQ(mxc_data_iter_libsvm_create(path.c_str(), 3, 2, 0,
                                        MXC_LAST_BATCH_PAD, &it.h),
            MXC_OK);
  int has = 1;
  ASSERT_EQ(mxc_data_iter_next(it.h, &has), MXC_OK);
  EXPECT_EQ(has, 0);
  int64_t n = -1;
  ASSERT_EQ(mxc_data_iter_num_examples(it.h, &n), MXC_OK);
  EXPECT_EQ(n, 0);
}

// A malformed line in the second batch: the first batch is fine, the
// second fails naming file and line, next keeps failing until reset, and
// the current batch is still the first.
TEST(LibsvmIter, MalformedLineNamesFileAndLine) {
  const std::string text =
      "1 0:1\n0 1:2\n1 2:3\n"
      "0 3:4\n1 4:x\n";  // line 5: bad value
  std::string path = write_file("bad.svm", text);
  for (int64_t cols : {5, 3}) {  // with 3 columns line 4 is out of range
    Iter it;
    ASSERT_EQ(mxc_data_iter_libsvm_create(path.c_str(), cols, 3, 0,
                                          MXC_LAST_BATCH_PAD, &it.h),
              MXC_OK);
    int has = 0;
    ASSERT_EQ(mxc_data_iter_next(it.h, &has), MXC_OK) << err();
    ASSERT_EQ(mxc_data_iter_next(it.h, &has), MXC_ERR_IO);
    std::string where = cols == 5 ? "bad.svm:5:" : "bad.svm:4:";
    EXPECT_NE(err().find(where), std::string::npos) << err();
    EXPECT_NE(err().find("mxc_data_iter_next"), std::string::npos) << err();
    EXPECT_EQ(mxc_data_iter_next(it.h, &has), MXC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("reset"), std::string::npos) << err();
    Arr d;
    ASSERT_EQ(mxc_data_iter_data(it.h, d.out()), MXC_OK);  // still batch 1
    EXPECT_EQ(sparse_test::nnz_of(d.get()), 3);
    ASSERT_EQ(mxc_data_iter_reset(it.h), MXC_OK);
    ASSERT_EQ(mxc_data_iter_next(it.h, &has), MXC_OK) << err();
    EXPECT_EQ(has, 1);
  }
}

// ---- CSV ----

std::string make_csv(int n, int cols, unsigned seed,
                     std::vector<std::vector<double>> *rows) {
  std::mt19937 g(seed);
  std::ostringstream s;
  for (int r = 0; r < n; ++r) {
    std::vector<double> row;
    for (int c = 0; c < cols; ++c) {
      double v = (double(int(g() % 41)) - 20.0) / 4.0;
      row.push_back(v);
      s << (c ? "," : "") << (c == 1 ? " " : "") << v;
    }
    s << (r % 3 == 1 ? "\r\n" : "\n");
    if (r == 4) s << "\n";  // blank lines are skipped
    rows->push_back(row);
  }
  return s.str();
}

using Table = std::vector<std::vector<double>>;

// Checks one epoch of a CSV iterator: data row r holds columns `data_cols`
// of rows[r], its labels are lab[r] (no labels when lab is empty).

void check_csv_epoch(mxc_data_iter it, const Table &rows,
                     const std::vector<int> &data_cols,
                     const std::vector<std::vector<double>> &lab,
                     int64_t batch, int last) {
  const int64_t n = int64_t(rows.size()), head = std::min(n, batch);
  int64_t at = 0;
  int has = 0;
  for (;; at += batch) {
    ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK) << err();
    if (!has) break;
    int64_t take = std::min(batch, n - at), pad = -1;
    ASSERT_EQ(mxc_data_iter_pad(it, &pad), MXC_OK);
    EXPECT_EQ(pad, batch - take);
    Arr data;
    ASSERT_EQ(mxc_data_iter_data(it, data.out()), MXC_OK);
    Dense d = sparse_test::read(data.get());
    const int64_t w = int64_t(data_cols.size());
    ASSERT_EQ(d.shape, (std::vector<int64_t>{batch, w}));
    Dense l;
    Arr label;
    int rc = mxc_data_iter_label(it, label.out());
    if (lab.empty()) {
      EXPECT_EQ(rc, MXC_ERR_NOT_FOUND);
    } else {
      ASSERT_EQ(rc, MXC_OK) << err();
      l = sparse_test::read(label.get());
      const int64_t lw = int64_t(lab[0].size());
      std::vector<int64_t> want_shape{batch};
      if (lw != 1) want_shape.push_back(lw);
      EXPECT_EQ(l.shape, want_shape);
    }
    for (int64_t r = 0; r < batch; ++r) {
      int64_t src = r < take ? at + r : (r - take) % head;
      for (int64_t c = 0; c < w; ++c) {
        ASSERT_EQ(d.v[r * w + c], rows[src][data_cols[c]]) << r << "," << c;
      }
      for (size_t c = 0; c < (lab.empty() ? 0 : lab[0].size()); ++c) {
        ASSERT_EQ(l.v[r * lab[0].size() + c], lab[src][c]);
      }
    }
  }
  int64_t kept =
      last == MXC_LAST_BATCH_PAD ? (n + batch - 1) / batch : n / batch;
  EXPECT_EQ(at, kept * batch);
}

TEST(CsvIter, LabelColumnLabelFileAndNone) {
  std::vector<std::vector<double>> rows, lab1, lab2;
  std::string data =
      write_file("d.csv", "h1,h2,h3,h4\n" + make_csv(13, 4, 3, &rows));
  std::string l1 = write_file("l1.csv", "y\n" + make_csv(13, 1, 4, &lab1));
  std::string l2 = write_file("l2.csv", "y,z\n" + make_csv(13, 2, 5, &lab2));
  std::vector<std::vector<double>> col2;
  for (auto &r : rows) col2.push_back({r[2]});
  for (int64_t batch : {1, 5, 13, 20}) {
    for (int last : {MXC_LAST_BATCH_PAD, MXC_LAST_BATCH_DISCARD}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " last " +
                   std::to_string(last));
      struct Case {
        const char *label_path;
        int64_t label_col, num_cols;
        std::vector<int> cols;
        const std::vector<std::vector<double>> *lab;
      };
      const std::vector<std::vector<double>> none;
      const Case cases[] = {
          {nullptr, 2, 0, {0, 1, 3}, &col2},
          {nullptr, -1, 4, {0, 1, 2, 3}, &none},
          {l1.c_str(), -1, 0, {0, 1, 2, 3}, &lab1},
          {l2.c_str(), -1, 0, {0, 1, 2, 3}, &lab2},
      };
      for (const Case &c : cases) {
        Iter it;
        ASSERT_EQ(mxc_data_iter_csv_create(data.c_str(), c.label_path,
                                           c.num_cols, batch, 1, c.label_col,
                                           last, &it.h),
                  MXC_OK) << err();
        check_csv_epoch(it.h, rows, c.cols, *c.lab, batch, last);
        int64_t n = 0;
        ASSERT_EQ(mxc_data_iter_num_examples(it.h, &n), MXC_OK);
        EXPECT_EQ(n, 13);
        ASSERT_EQ(mxc_data_iter_reset(it.h), MXC_OK);
        check_csv_epoch(it.h, rows, c.cols, *c.lab, batch, last);
      }
    }
  }
}

TEST(CsvIter, MalformedRowsNameFileAndLine) {
  struct Case {
    const char *text, *where;
  } cases[] = {
      {"1,2\n3,4\n5\n", "rag.csv:3:"},
      {"1,2\n3,,4\n", "rag.csv:2:"},
      {"1,2\n3,abc\n", "rag.csv:2:"},
  };
  for (const Case &c : cases) {
    std::string path = write_file("rag.csv", c.text);
    Iter it;
    ASSERT_EQ(mxc_data_iter_csv_create(path.c_str(), nullptr, 0, 4, 0, -1,
                                       MXC_LAST_BATCH_PAD, &it.h),
              MXC_OK);
    int has = 0;
    EXPECT_EQ(mxc_data_iter_next(it.h, &has), MXC_ERR_IO);
    EXPECT_NE(err().find(c.where), std::string::npos) << err();
    EXPECT_EQ(mxc_data_iter_next(it.h, &has), MXC_ERR_INVALID_ARGUMENT);
  }
  // Label file with fewer rows than the data file.
  std::string d = write_file("d3.csv", "1\n2\n3\n");
  std::string l = write_file("l2rows.csv", "1\n2\n");
  Iter it;
  ASSERT_EQ(mxc_data_iter_csv_create(d.c_str(), l.c_str(), 0, 8, 0, -1,
                                     MXC_LAST_BATCH_PAD, &it.h),
            MXC_OK);
  int has = 0;
  EXPECT_EQ(mxc_data_iter_next(it.h, &has), MXC_ERR_IO);
  EXPECT_NE(err().find("l2rows.csv"), std::string::npos) << err();
}

// ---- bad arguments ----

TEST(TextIter, BadArguments) {
  std::string svm = write_file("ok.svm", "1 0:1\n");
  std::string csv = write_file("ok.csv", "1,2\n");
  const char *s = svm.c_str(), *c = csv.c_str();
  mxc_data_iter it = nullptr;
  const int P = MXC_LAST_BATCH_PAD;
  struct Call {
    int rc;
    int want;
    const char *needle;
  } calls[] = {
      {mxc_data_iter_libsvm_create(nullptr, 3, 2, 0, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "path"},
      {mxc_data_iter_libsvm_create(s, 3, 2, 0, P, nullptr),
       MXC_ERR_INVALID_ARGUMENT, "out"},
      {mxc_data_iter_libsvm_create(s, 0, 2, 0, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "num_features"},
      {mxc_data_iter_libsvm_create(s, 3, 0, 0, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "batch_size"},
      {mxc_data_iter_libsvm_create(s, 3, 2, 0, 7, &it),
       MXC_ERR_INVALID_ARGUMENT, "last_batch"},
      {mxc_data_iter_libsvm_create(s, INT64_MAX, 4, 0, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "overflow"},
      {mxc_data_iter_libsvm_create("/nonexistent/x.svm", 3, 2, 0, P, &it),
       MXC_ERR_IO, "x.svm"},
      {mxc_data_iter_csv_create(nullptr, nullptr, 0, 2, 0, -1, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "data_path"},
      {mxc_data_iter_csv_create(c, nullptr, 0, 2, 0, -1, P, nullptr),
       MXC_ERR_INVALID_ARGUMENT, "out"},
      {mxc_data_iter_csv_create(c, nullptr, -1, 2, 0, -1, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "num_cols"},
      {mxc_data_iter_csv_create(c, nullptr, 0, -3, 0, -1, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "batch_size"},
      {mxc_data_iter_csv_create(c, nullptr, 0, 2, 0, -2, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "label_col"},
      {mxc_data_iter_csv_create(c, c, 0, 2, 0, 0, P, &it),
       MXC_ERR_INVALID_ARGUMENT, "label_path"},
      {mxc_data_iter_csv_create(c, nullptr, 0, 2, 0, -1, -1, &it),
       MXC_ERR_INVALID_ARGUMENT, "last_batch"},
      {mxc_data_iter_csv_create("/nonexistent/y.csv", nullptr, 0, 2, 0, -1, P,
                                &it),
       MXC_ERR_IO, "y.csv"},
      {mxc_data_iter_csv_create(c, "/nonexistent/z.csv", 0, 2, 0, -1, P, &it),
       MXC_ERR_IO, "z.csv"},
  };
  int i = 0;
  for (const Call &k : calls) {
    EXPECT_EQ(k.rc, k.want) << "call " << i++;
  }
  EXPECT_EQ(it, nullptr);  // untouched by every failure
  // Messages name the function and the argument (checked on fresh calls,
  // since mxc_last_error keeps only the last).
  EXPECT_EQ(mxc_data_iter_libsvm_create(s, -4, 2, 0, P, &it),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("mxc_data_iter_libsvm_create"), std::string::npos);
  EXPECT_NE(err().find("num_features"), std::string::npos) << err();
  EXPECT_EQ(mxc_data_iter_csv_create(c, c, 0, 2, 0, 1, P, &it),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("mxc_data_iter_csv_create"), std::string::npos);
  EXPECT_NE(err().find("label_col"), std::string::npos) << err();

  // The shared entry points on a text iterator.
  ASSERT_EQ(mxc_data_iter_libsvm_create(s, 3, 2, 0, P, &it), MXC_OK);
  int has = 0;
  int64_t v = -5;
  mxc_ndarray d = nullptr;
  EXPECT_EQ(mxc_data_iter_next(it, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_data(it, &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_label(it, &d), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_pad(it, &v), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v, -5);
  EXPECT_EQ(d, nullptr);
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
  EXPECT_EQ(mxc_data_iter_data(it, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_pad(it, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_data_iter_num_examples(it, nullptr), MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc_data_iter_data(it, &d), MXC_OK);
  EXPECT_EQ(mxc_data_iter_next((mxc_data_iter)d, &has), MXC_ERR_INVALID_HANDLE);
  mxc_data_iter_free(it);
  EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_data_iter_reset(it), MXC_ERR_INVALID_HANDLE);
  mxc_data_iter_free(it);  // reported, not a double free
  EXPECT_EQ(sparse_test::nnz_of(d), 2);  // padded: the row twice
  mxc_ndarray_free(d);
}

// ---- allocation and I/O failures ----

void settle() {
  mxc_wait_all();
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

// Opens, reads two epochs' worth of batches (with a padded one) and
// handles, and frees; returns the first failure.
int scenario(const std::string &svm, const std::string &csv, bool use_csv) {
  mxc_data_iter it = nullptr;
  int rc = use_csv ? mxc_data_iter_csv_create(csv.c_str(), nullptr, 0, 3, 0, 1,
                                              MXC_LAST_BATCH_PAD, &it)
                   : mxc_data_iter_libsvm_create(svm.c_str(), 6, 3, 0,
                                                 MXC_LAST_BATCH_PAD, &it);
  if (rc != MXC_OK) return rc;
  int has = 1;
  mxc_ndarray d = nullptr, l = nullptr;
  for (int k = 0; k < 3 && rc == MXC_OK && has; ++k) {
    rc = mxc_data_iter_next(it, &has);
  }
  if (rc == MXC_OK) rc = mxc_data_iter_data(it, &d);
  if (rc == MXC_OK) rc = mxc_data_iter_label(it, &l);
  if (rc == MXC_OK) rc = mxc_data_iter_reset(it);
  if (rc == MXC_OK) rc = mxc_data_iter_next(it, &has);
  mxc_ndarray_free(d);
  mxc_ndarray_free(l);
  mxc_data_iter_free(it);
  return rc;
}

TEST(TextIterFaults, EveryAllocationFails) {
  std::vector<Example> rows;
  std::vector<std::vector<double>> crows;
  std::string svm = write_file("oom.svm", make_libsvm(8, 6, false, 2, &rows));
  std::string csv = write_file("oom.csv", make_csv(8, 3, 2, &crows));
  for (bool use_csv : {false, true}) {
    settle();
    ASSERT_EQ(scenario(svm, csv, use_csv), MXC_OK) << err();  // warm-up
    settle();
    const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
    int failures = 0;
    for (int64_t n = 1; n < 10000; ++n) {
      mxc__fault_alloc_arm(n, 0);
      int rc = scenario(svm, csv, use_csv);
      int fired = mxc__fault_alloc_fired();
      mxc__fault_alloc_arm(0, 0);
      if (fired && rc != MXC_OK) {
        EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation " << n << ": " << err();
        EXPECT_NE(err().find("out of memory"), std::string::npos) << err();
      }
      settle();
      EXPECT_EQ(mxc__alloc_live(), live0) << "leak at allocation " << n;
      EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
      if (!fired) {
        ASSERT_EQ(rc, MXC_OK) << err();
        break;
      }
      ++failures;
      if (::testing::Test::HasFailure()) break;
    }
    EXPECT_GT(failures, 10);
    printf("%s: walked %d injected allocation failures\n",
           use_csv ? "csv" : "libsvm", failures);
  }
}

// The n-th file operation fails (open, read, seek on reset): MXC_ERR_IO,
// nothing leaked, and the same scenario succeeds once no failure is left.
TEST(TextIterFaults, EveryIoOperationFails) {
  std::vector<Example> rows;
  std::vector<std::vector<double>> crows;
  std::string svm = write_file("io.svm", make_libsvm(8, 6, false, 3, &rows));
  std::string csv = write_file("io.csv", make_csv(8, 3, 3, &crows));
  for (bool use_csv : {false, true}) {
    settle();
    const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
    int failures = 0;
    for (int64_t n = 1; n < 1000; ++n) {
      mxc__fault_io_arm(n);
      int rc = scenario(svm, csv, use_csv);
      int fired = mxc__fault_io_fired();
      mxc__fault_io_arm(0);
      if (fired) {
        EXPECT_EQ(rc, MXC_ERR_IO) << "I/O failure " << n << ": " << err();
      }
      settle();
      EXPECT_EQ(mxc__alloc_live(), live0) << "leak at I/O failure " << n;
      EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
      if (!fired) {
        ASSERT_EQ(rc, MXC_OK) << err();
        break;
      }
      ++failures;
      if (::testing::Test::HasFailure()) break;
    }
    EXPECT_GE(failures, 2);
  }
}

}  // namespace
