// Streaming LibSVM reader (core/io/libsvm.h): every syntax feature against
// hand-written expected rows, batch and chunk boundaries, column inference,
// every malformed-line case with its file:line message, bounded buffers on
// files much larger than the chunk, and I/O and allocation fault walks.
#include <cmath>
#include <cstring>
#include <vector>

#include "tests/io_text/text_test_util.h"

extern "C" {
#include "core/io/libsvm.h"
}

namespace {

using tt::err;
using tt::write_file;

struct Row {
  std::vector<float> labels;
  std::vector<int64_t> idx;
  std::vector<float> val;
  bool operator==(const Row &o) const {
    return labels == o.labels && idx == o.idx && val == o.val;
  }
};

std::ostream &operator<<(std::ostream &os, const Row &r) {
  os << "{labels";
  for (float l : r.labels) os << " " << l;
  os << " |";
  for (size_t i = 0; i < r.idx.size(); ++i) os << " " << r.idx[i] << ":" << r.val[i];
  return os << "}";
}

struct Reader {
  mxc__libsvm *r = nullptr;
  ~Reader() { mxc__libsvm_free(r); }
};

mxc__libsvm_config cfg(int64_t batch, int64_t cols = 0, int one_based = 0,
                       int multi = 0, size_t chunk = 0) {
  mxc__libsvm_config c;
  std::memset(&c, 0, sizeof c);
  c.batch_size = batch;
  c.num_cols = cols;
  c.one_based = one_based;
  c.multi_label = multi;
  c.chunk_bytes = chunk;
  return c;
}

// Checks a batch's CSR invariants and appends its rows to *rows.
void take(const mxc__libsvm_batch &b, const mxc__libsvm_config &c,
          std::vector<Row> *rows) {
  ASSERT_EQ(b.indptr[0], 0);
  ASSERT_EQ(b.label_indptr[0], 0);
  ASSERT_EQ(b.indptr[b.rows], b.nnz);
  for (int64_t r = 0; r < b.rows; ++r) {
    Row row;
    for (int64_t k = b.label_indptr[r]; k < b.label_indptr[r + 1]; ++k) {
      row.labels.push_back(b.labels[k]);
    }
    if (!c.multi_label) {
      EXPECT_EQ(b.label_indptr[r + 1] - b.label_indptr[r], 1);
    }
    for (int64_t k = b.indptr[r]; k < b.indptr[r + 1]; ++k) {
      EXPECT_GE(b.indices[k], 0);
      EXPECT_LT(b.indices[k], b.num_cols);
      row.idx.push_back(b.indices[k]);
      row.val.push_back(b.values[k]);
    }
    rows->push_back(row);
  }
}

// Reads one whole epoch of path; fills rows and the batch sizes.
int read_epoch(mxc__libsvm *r, const mxc__libsvm_config &c,
               std::vector<Row> *rows, std::vector<int64_t> *sizes,
               int64_t *cols = nullptr) {
  for (;;) {
    mxc__libsvm_batch b;
    int rc = mxc__libsvm_next(r, &b);
    if (rc != MXC_OK) return rc;
    if (b.rows == 0) return MXC_OK;
    EXPECT_LE(b.rows, c.batch_size);
    if (sizes) sizes->push_back(b.rows);
    if (cols) *cols = b.num_cols;
    take(b, c, rows);
  }
}

int read_file(const std::string &path, const mxc__libsvm_config &c,
              std::vector<Row> *rows, std::vector<int64_t> *sizes = nullptr) {
  Reader rd;
  int rc = mxc__libsvm_open(path.c_str(), &c, &rd.r);
  if (rc != MXC_OK) return rc;
  return read_epoch(rd.r, c, rows, sizes);
}

Row row(std::vector<float> labels, std::vector<int64_t> idx,
        std::vector<float> val) {
  return Row{labels, idx, val};
}

// ---- syntax ----

const char kSyntax[] =
    "1 0:0.5 3:-2 10:1e3\n"
    "# a whole-line comment\n"
    "\n"
    "   \t \n"
    "-1\t2:+4.25\t\t7:-0.0  # trailing comment 9:9\n"
    "+1 5:3\r\n"
    "0.75\n"
    "2.5e1 1:1E-2 4:.5\r\n"
    "-3 0:7";  // no final newline

std::vector<Row> syntax_rows(int64_t base) {
  return {row({1}, {0 - base, 3 - base, 10 - base}, {0.5f, -2, 1000}),
          row({-1}, {2 - base, 7 - base}, {4.25f, -0.0f}),
          row({1}, {5 - base}, {3}),
          row({0.75f}, {}, {}),
          row({25}, {1 - base, 4 - base}, {0.01f, 0.5f}),
          row({-3}, {0 - base}, {7})};
}

TEST(LibSvm, EverySyntaxFeatureZeroBased) {
  std::string path = write_file("syntax.svm", kSyntax);
  std::vector<Row> rows;
  auto c = cfg(4);
  ASSERT_EQ(read_file(path, c, &rows), MXC_OK) << err();
  EXPECT_EQ(rows, syntax_rows(0));
}

TEST(LibSvm, OneBasedIndicesShiftDown) {
  // The same text with every index + 1, read 1-based, gives the same rows.
  std::string path = write_file(
      "onebased.svm",
      "1 1:0.5 4:-2 11:1e3\n-1 3:4.25 8:-0.0\n+1 6:3\n0.75\n"
      "2.5e1 2:1E-2 5:.5\n-3 1:7\n");
  std::vector<Row> rows;
  ASSERT_EQ(read_file(path, cfg(2, 0, 1), &rows), MXC_OK) << err();
  EXPECT_EQ(rows, syntax_rows(0));
}

TEST(LibSvm, MultiLabel) {
  std::string path = write_file("multi.svm",
                                "1,2 0:1\n"
                                "3 1:2 2:3\n"
                                "0:5\n"          // no labels
                                "2,0.5,7 # c\n"  // labels only
                                "4,-1\t3:1\n");
  std::vector<Row> rows;
  ASSERT_EQ(read_file(path, cfg(2, 0, 0, 1), &rows), MXC_OK) << err();
  std::vector<Row> want = {row({1, 2}, {0}, {1}), row({3}, {1, 2}, {2, 3}),
                           row({}, {0}, {5}), row({2, 0.5f, 7}, {}, {}),
                           row({4, -1}, {3}, {1})};
  EXPECT_EQ(rows, want);
}

// ---- columns and batches ----

TEST(LibSvm, InferredColumnsGrowAndPersistAcrossReset) {
  std::string path =
      write_file("cols.svm", "1 0:1\n1 2:1\n1 1:1\n1 9:1\n1 3:1\n");
  auto c = cfg(2);
  Reader rd;
  ASSERT_EQ(mxc__libsvm_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
  std::vector<int64_t> want_cols = {3, 10, 10};
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (size_t k = 0; k < want_cols.size(); ++k) {
      mxc__libsvm_batch b;
      ASSERT_EQ(mxc__libsvm_next(rd.r, &b), MXC_OK) << err();
      // The second epoch already knows the widest row of the file.
      EXPECT_EQ(b.num_cols, epoch == 0 ? want_cols[k] : 10) << epoch << k;
    }
    mxc__libsvm_batch end;
    ASSERT_EQ(mxc__libsvm_next(rd.r, &end), MXC_OK) << err();
    EXPECT_EQ(end.rows, 0);
    ASSERT_EQ(mxc__libsvm_reset(rd.r), MXC_OK) << err();
  }
}

TEST(LibSvm, GivenColumnsAreReported) {
  std::string path = write_file("given.svm", "1 0:1\n1 2:1\n");
  std::vector<Row> rows;
  auto c = cfg(5, 40);
  Reader rd;
  ASSERT_EQ(mxc__libsvm_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
  mxc__libsvm_batch b;
  ASSERT_EQ(mxc__libsvm_next(rd.r, &b), MXC_OK) << err();
  EXPECT_EQ(b.num_cols, 40);
  EXPECT_EQ(b.rows, 2);
}

// A file of n rows; row i has label i and (i % 5) features.
std::string numbered(int n, std::vector<Row> *want) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    Row r;
    r.labels = {(float)i};
    s += std::to_string(i);
    for (int k = 0; k < i % 5; ++k) {
      int64_t idx = 3 * k + i % 3;
      float v = (float)(i * 10 + k) / 4;
      s += " " + std::to_string(idx) + ":" + std::to_string(v);
      r.idx.push_back(idx);
      r.val.push_back(v);
    }
    s += (i % 4 == 0) ? "  # row\n" : "\n";
    want->push_back(r);
  }
  return s;
}

TEST(LibSvm, BatchBoundariesAndFirstLine) {
  for (int n : {1, 9, 10, 11, 12}) {
    std::vector<Row> want;
    std::string path = write_file("batches.svm", numbered(n, &want));
    auto c = cfg(3);
    Reader rd;
    ASSERT_EQ(mxc__libsvm_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
    for (int epoch = 0; epoch < 2; ++epoch) {
      std::vector<Row> rows;
      int64_t line = 1;
      for (;;) {
        mxc__libsvm_batch b;
        ASSERT_EQ(mxc__libsvm_next(rd.r, &b), MXC_OK) << err();
        if (b.rows == 0) break;
        EXPECT_EQ(b.first_line, line);
        EXPECT_EQ(b.rows, std::min<int64_t>(3, n - (line - 1)));
        line += b.rows;
        take(b, c, &rows);
      }
      EXPECT_EQ(rows, want) << n;
      // Reading past the end keeps giving empty batches.
      mxc__libsvm_batch again;
      ASSERT_EQ(mxc__libsvm_next(rd.r, &again), MXC_OK);
      EXPECT_EQ(again.rows, 0);
      ASSERT_EQ(mxc__libsvm_reset(rd.r), MXC_OK) << err();
    }
  }
}

TEST(LibSvm, LinesCrossingChunkBoundaries) {
  std::vector<Row> want;
  std::string text = numbered(40, &want);
  // With and without the final newline.
  for (const std::string &t : {text, text.substr(0, text.size() - 1)}) {
    std::string path = write_file("chunks.svm", t);
    // The longest line is under 80 bytes; every chunk size from there on
    // puts the boundary at a different place in each line.
    for (size_t chunk = 80; chunk < 220; chunk += 7) {
      std::vector<Row> rows;
      ASSERT_EQ(read_file(path, cfg(7, 0, 0, 0, chunk), &rows), MXC_OK)
          << chunk << ": " << err();
      EXPECT_EQ(rows, want) << "chunk " << chunk;
    }
  }
}

TEST(LibSvm, LineLongerThanChunkNamesLine) {
  std::string path =
      write_file("long.svm", "1 0:1\n1 0:1 1:1 2:1 3:1 4:1 5:1 6:1\n");
  std::vector<Row> rows;
  EXPECT_EQ(read_file(path, cfg(4, 0, 0, 0, 16), &rows), MXC_ERR_IO);
  EXPECT_NE(err().find("long.svm:2:"), std::string::npos) << err();
  EXPECT_NE(err().find("16-byte"), std::string::npos) << err();
}

// ---- malformed lines ----

struct Bad {
  const char *text;
  int line;
  const char *says;
  mxc__libsvm_config c;
};

TEST(LibSvm, MalformedLinesNameFileAndLine) {
  const Bad cases[] = {
      {"1 0:1\nabc 1:2\n", 2, "bad label 'abc'", cfg(4)},
      {"1x 3:1\n", 1, "bad label '1x'", cfg(4)},
      {"# c\n\n1:2 3:4\n", 3, "missing label", cfg(4)},
      {"1,2 3:1\n", 1, "bad label '1,2'", cfg(4)},
      {"1,,2 3:1\n", 1, "bad label", cfg(4, 0, 0, 1)},
      {"1 3\n", 1, "missing ':' in '3'", cfg(4)},
      {"1 3;4\n", 1, "missing ':' in '3;4'", cfg(4)},
      {"1 :4\n", 1, "expected 'index:value', got ':4'", cfg(4)},
      {"1 -3:1\n", 1, "expected 'index:value', got '-3:1'", cfg(4)},
      {"1 3:\n", 1, "bad value in '3:'", cfg(4)},
      {"1 3: 4\n", 1, "bad value in '3:'", cfg(4)},
      {"1 3:x\n", 1, "bad value in '3:x'", cfg(4)},
      {"1 3:1.5x\n", 1, "bad value in '3:1.5x'", cfg(4)},
      {"1 3:1e99\n", 1, "float32 range", cfg(4)},
      {"1 3:1:2\n", 1, "bad value", cfg(4)},
      {"1 0:1\n1 1:1\n\n1 3:1 2:1\n", 4,
       "index 2 is not greater than the previous index 3", cfg(4)},
      {"1 3:1 3:2\n", 1, "index 3 is not greater than the previous index 3",
       cfg(4)},
      {"1 99999999999999999999:1\n", 1, "too large", cfg(4)},
      {"1 9223372036854775807:1\n", 1, "too large", cfg(4)},
      {"1 0:1\n", 1, "index 0 in '0:1', but indices are 1-based",
       cfg(4, 0, 1)},
      {"1 4:1\n1 5:1\n", 2, "index 5 is out of range for 5 columns",
       cfg(4, 5)},
      {"1 5:1\n1 6:1\n", 2, "index 6 is out of range for 5 columns",
       cfg(4, 5, 1)},
      {"(NUL)", 2, "NUL byte", cfg(4)},
  };
  int k = 0;
  for (const Bad &b : cases) {
    SCOPED_TRACE(b.text);
    std::string text = b.text;
    if (text == "(NUL)") text = std::string("1 0:1\n1 2:\0 3\n", 14);
    std::string name = "bad" + std::to_string(k++) + ".svm";
    std::string path = write_file(name, text);
    Reader rd;
    ASSERT_EQ(mxc__libsvm_open(path.c_str(), &b.c, &rd.r), MXC_OK) << err();
    std::vector<Row> rows;
    EXPECT_EQ(read_epoch(rd.r, b.c, &rows, nullptr), MXC_ERR_IO);
    std::string where = name + ":" + std::to_string(b.line) + ":";
    EXPECT_NE(err().find(where), std::string::npos) << where << " / " << err();
    EXPECT_NE(err().find(b.says), std::string::npos) << b.says << " / " << err();
    // The reader stays stopped until reset; then the same error recurs.
    mxc__libsvm_batch out;
    out.rows = -7;
    EXPECT_EQ(mxc__libsvm_next(rd.r, &out), MXC_ERR_IO);
    EXPECT_NE(err().find("reset"), std::string::npos) << err();
    EXPECT_EQ(out.rows, -7) << "out must be untouched on failure";
    ASSERT_EQ(mxc__libsvm_reset(rd.r), MXC_OK) << err();
    EXPECT_EQ(read_epoch(rd.r, b.c, &rows, nullptr), MXC_ERR_IO);
    EXPECT_NE(err().find(where), std::string::npos) << err();
  }
}

TEST(LibSvm, LateBatchExceedingGivenColumnsFails) {
  // Batches of two: the first two batches are fine, line 6 is not.
  std::string path = write_file(
      "late.svm", "1 0:1\n1 1:1\n1 2:1\n# c\n1 3:1\n1 9:1\n1 0:1\n");
  auto c = cfg(2, 4);
  Reader rd;
  ASSERT_EQ(mxc__libsvm_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
  mxc__libsvm_batch b;
  ASSERT_EQ(mxc__libsvm_next(rd.r, &b), MXC_OK) << err();
  ASSERT_EQ(mxc__libsvm_next(rd.r, &b), MXC_OK) << err();
  EXPECT_EQ(b.rows, 2);
  EXPECT_EQ(mxc__libsvm_next(rd.r, &b), MXC_ERR_IO);
  EXPECT_NE(err().find("late.svm:6: index 9 is out of range for 4 columns"),
            std::string::npos)
      << err();
}

// ---- arguments ----

TEST(LibSvm, BadArguments) {
  std::string path = write_file("args.svm", "1 0:1\n");
  mxc__libsvm *r = reinterpret_cast<mxc__libsvm *>(0x1);
  auto c = cfg(4);
  EXPECT_EQ(mxc__libsvm_open(nullptr, &c, &r), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__libsvm_open(path.c_str(), nullptr, &r),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__libsvm_open(path.c_str(), &c, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  auto zero = cfg(0);
  EXPECT_EQ(mxc__libsvm_open(path.c_str(), &zero, &r),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("batch_size"), std::string::npos) << err();
  auto neg = cfg(4, -1);
  EXPECT_EQ(mxc__libsvm_open(path.c_str(), &neg, &r), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_cols"), std::string::npos) << err();
  std::string missing = tt::tmp_path("no_such_file.svm");
  EXPECT_EQ(mxc__libsvm_open(missing.c_str(), &c, &r), MXC_ERR_IO);
  EXPECT_NE(err().find("no_such_file.svm"), std::string::npos) << err();
  EXPECT_EQ(r, reinterpret_cast<mxc__libsvm *>(0x1)) << "out touched";
  mxc__libsvm_batch b;
  EXPECT_EQ(mxc__libsvm_next(nullptr, &b), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__libsvm_reset(nullptr), MXC_ERR_INVALID_ARGUMENT);
  mxc__libsvm_free(nullptr);
}

// ---- bounded memory ----

// Rows with the same shape per batch position whatever the file length,
// so every batch of every file has the same number of stored entries.
std::string big(int batches, int batch, std::vector<Row> *want) {
  std::string s;
  for (int i = 0; i < batches * batch; ++i) {
    Row r;
    r.labels = {(float)(i % 2)};
    s += std::to_string(i % 2);
    for (int k = 0; k < 1 + i % batch; ++k) {
      int64_t idx = 1000 * k + i % 997;
      float v = (float)((i * 31 + k) % 1000) / 8;
      s += " " + std::to_string(idx) + ":" + std::to_string(v);
      r.idx.push_back(idx);
      r.val.push_back(v);
    }
    s += "\n";
    want->push_back(r);
  }
  return s;
}

// Reads path in batches of `batch`; returns the largest buffer size seen.
size_t peak_buffers(const std::string &path, int batch, size_t chunk,
                    const std::vector<Row> &want) {
  auto c = cfg(batch, 0, 0, 0, chunk);
  Reader rd;
  EXPECT_EQ(mxc__libsvm_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
  if (!rd.r) return 0;
  size_t peak = mxc__libsvm_buffer_bytes(rd.r);
  int64_t live_after_first = -1;
  std::vector<Row> rows;
  for (;;) {
    mxc__libsvm_batch b;
    EXPECT_EQ(mxc__libsvm_next(rd.r, &b), MXC_OK) << err();
    if (b.rows == 0) break;
    take(b, c, &rows);
    peak = std::max(peak, mxc__libsvm_buffer_bytes(rd.r));
    if (live_after_first < 0) live_after_first = mxc__alloc_live();
    EXPECT_EQ(mxc__alloc_live(), live_after_first) << "blocks added mid-file";
  }
  EXPECT_EQ(rows, want);
  return peak;
}

TEST(LibSvm, BuffersDoNotGrowWithTheFile) {
  const int batch = 16;
  const size_t chunk = 4096;
  std::vector<Row> want_small, want_large;
  std::string small = big(40, batch, &want_small);
  std::string large = big(400, batch, &want_large);
  ASSERT_GT(large.size(), 100 * chunk);
  std::string ps = write_file("small.svm", small);
  std::string pl = write_file("large.svm", large);
  size_t peak_small = peak_buffers(ps, batch, chunk, want_small);
  size_t peak_large = peak_buffers(pl, batch, chunk, want_large);
  EXPECT_EQ(peak_small, peak_large);
  EXPECT_LT(peak_large, large.size() / 50)
      << "the reader holds " << peak_large << " bytes for a file of "
      << large.size();
}

// ---- fault injection ----

// Opens, reads an epoch, resets and reads the first batch again; compares
// with `want`. Returns the first failure's status.
int full_run(const std::string &path, const mxc__libsvm_config &c,
             const std::vector<Row> &want) {
  Reader rd;
  int rc = mxc__libsvm_open(path.c_str(), &c, &rd.r);
  if (rc != MXC_OK) return rc;
  std::vector<Row> rows;
  rc = read_epoch(rd.r, c, &rows, nullptr);
  if (rc != MXC_OK) return rc;
  EXPECT_EQ(rows, want);
  rc = mxc__libsvm_reset(rd.r);
  if (rc != MXC_OK) return rc;
  mxc__libsvm_batch b;
  rc = mxc__libsvm_next(rd.r, &b);
  if (rc != MXC_OK) return rc;
  EXPECT_EQ(b.rows, c.batch_size);
  return MXC_OK;
}

TEST(LibSvm, IoFaultWalk) {
  std::vector<Row> want;
  // Larger than the file layer's 64 KiB buffer: several reads.
  std::string path = write_file("iofault.svm", big(300, 16, &want));
  auto c = cfg(16, 0, 0, 0, 1000);
  tt::io_fault_walk([&] { return full_run(path, c, want); });
}

TEST(LibSvm, AllocFaultWalk) {
  std::vector<Row> want;
  std::string path = write_file("allocfault.svm", big(20, 32, &want));
  auto c = cfg(32, 0, 0, 1, 0);
  tt::alloc_fault_walk([&] { return full_run(path, c, want); });
}

}  // namespace
