// Streaming CSV reader (core/io/csv.h): syntax against hand-written
// values, label column and label file, batch and chunk boundaries, every
// malformed case with its file:line message, bounded buffers on files much
// larger than the chunk, and I/O and allocation fault walks.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/io_text/text_test_util.h"

extern "C" {
#include "core/io/csv.h"
}

namespace {

using tt::err;
using tt::write_file;

using Mat = std::vector<std::vector<float>>;

struct Reader {
  mxc__csv *r = nullptr;
  ~Reader() { mxc__csv_free(r); }
};

mxc__csv_config cfg(int64_t batch, int64_t cols = 0, int header = 0,
                    int64_t label_col = -1, const char *label_path = nullptr,
                    size_t chunk = 0) {
  mxc__csv_config c;
  std::memset(&c, 0, sizeof c);
  c.batch_size = batch;
  c.num_cols = cols;
  c.header = header;
  c.label_col = label_col;
  c.label_path = label_path;
  c.chunk_bytes = chunk;
  return c;
}

// Reads one epoch into data and label rows; batch sizes into *sizes.
int read_epoch(mxc__csv *r, int64_t batch, Mat *data, Mat *labels,
               std::vector<int64_t> *sizes = nullptr) {
  for (;;) {
    mxc__csv_batch b;
    int rc = mxc__csv_next(r, &b);
    if (rc != MXC_OK) return rc;
    if (b.rows == 0) return MXC_OK;
    EXPECT_LE(b.rows, batch);
    if (sizes) sizes->push_back(b.rows);
    for (int64_t i = 0; i < b.rows; ++i) {
      data->emplace_back(b.data + i * b.cols, b.data + (i + 1) * b.cols);
      if (b.labels) {
        labels->emplace_back(b.labels + i * b.label_width,
                             b.labels + (i + 1) * b.label_width);
      }
    }
    if (!b.labels) {
      EXPECT_EQ(b.label_width, 0);
    }
  }
}

int read_file(const std::string &path, const mxc__csv_config &c, Mat *data,
              Mat *labels, std::vector<int64_t> *sizes = nullptr) {
  Reader rd;
  int rc = mxc__csv_open(path.c_str(), &c, &rd.r);
  if (rc != MXC_OK) return rc;
  return read_epoch(rd.r, c.batch_size, data, labels, sizes);
}

const char kSyntax[] =
    "a,b,c\n"  // header, any text
    "1,2,3\n"
    "\n"
    " -1.5 ,\t+2e1,  .25  \r\n"
    "   \n"
    "1E-3,-0,7\n"
    "4,5,6";  // no final newline

TEST(Csv, SyntaxWithHeader) {
  std::string path = write_file("syntax.csv", kSyntax);
  Mat data, labels;
  std::vector<int64_t> sizes;
  ASSERT_EQ(read_file(path, cfg(3, 0, 1), &data, &labels, &sizes), MXC_OK)
      << err();
  Mat want = {{1, 2, 3}, {-1.5f, 20, 0.25f}, {0.001f, -0.0f, 7}, {4, 5, 6}};
  EXPECT_EQ(data, want);
  EXPECT_TRUE(labels.empty());
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 1}));
}

TEST(Csv, HeaderIsSkippedEveryEpoch) {
  std::string path = write_file("hdr.csv", "x,y\n1,2\n3,4\n");
  auto c = cfg(8, 2, 1);
  Reader rd;
  ASSERT_EQ(mxc__csv_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
  for (int epoch = 0; epoch < 3; ++epoch) {
    Mat data, labels;
    ASSERT_EQ(read_epoch(rd.r, 8, &data, &labels), MXC_OK) << err();
    EXPECT_EQ(data, (Mat{{1, 2}, {3, 4}}));
    ASSERT_EQ(mxc__csv_reset(rd.r), MXC_OK) << err();
  }
}

TEST(Csv, LabelColumn) {
  std::string path = write_file("labcol.csv", "1,10,2,3\n4,11,5,6\n7,12,8,9\n");
  for (int64_t lc = 0; lc < 4; ++lc) {
    Mat data, labels;
    ASSERT_EQ(read_file(path, cfg(2, 0, 0, lc), &data, &labels), MXC_OK)
        << err();
    Mat full = {{1, 10, 2, 3}, {4, 11, 5, 6}, {7, 12, 8, 9}};
    Mat want_data, want_labels;
    for (auto &row : full) {
      std::vector<float> d = row;
      d.erase(d.begin() + lc);
      want_data.push_back(d);
      want_labels.push_back({row[lc]});
    }
    EXPECT_EQ(data, want_data) << lc;
    EXPECT_EQ(labels, want_labels) << lc;
  }
}

TEST(Csv, LabelFile) {
  std::string dp = write_file("lf_data.csv", "1,2\n3,4\n\n5,6\n");
  std::string lp = write_file("lf_label.csv", "p,q\n0,1\n1,0\n0.5,0.5\n");
  auto c = cfg(2);
  c.label_path = lp.c_str();
  c.label_header = 1;
  Reader rd;
  ASSERT_EQ(mxc__csv_open(dp.c_str(), &c, &rd.r), MXC_OK) << err();
  for (int epoch = 0; epoch < 2; ++epoch) {
    Mat data, labels;
    ASSERT_EQ(read_epoch(rd.r, 2, &data, &labels), MXC_OK) << err();
    EXPECT_EQ(data, (Mat{{1, 2}, {3, 4}, {5, 6}}));
    EXPECT_EQ(labels, (Mat{{0, 1}, {1, 0}, {0.5f, 0.5f}}));
    ASSERT_EQ(mxc__csv_reset(rd.r), MXC_OK) << err();
  }
}

TEST(Csv, LabelFileRowCountMismatch) {
  std::string dp = write_file("mm_data.csv", "1,2\n3,4\n5,6\n");
  std::string fewer = write_file("mm_fewer.csv", "0\n1\n");
  std::string more = write_file("mm_more.csv", "0\n1\n2\n\n3\n");
  Mat data, labels;
  auto c = cfg(2, 0, 0, -1, fewer.c_str());
  EXPECT_EQ(read_file(dp, c, &data, &labels), MXC_ERR_IO);
  EXPECT_NE(err().find("mm_fewer.csv' has fewer rows than"), std::string::npos)
      << err();
  EXPECT_NE(err().find("mm_data.csv:3"), std::string::npos) << err();
  // Exactly a batch of data rows before the end: found on the next call.
  for (int64_t batch : {1, 2, 3, 4}) {
    auto m = cfg(batch, 0, 0, -1, more.c_str());
    EXPECT_EQ(read_file(dp, m, &data, &labels), MXC_ERR_IO) << batch;
    EXPECT_NE(err().find("mm_more.csv' has more rows than"), std::string::npos)
        << err();
    EXPECT_NE(err().find("mm_more.csv:5 has no data row"), std::string::npos)
        << err();
  }
  std::string ragged = write_file("mm_ragged.csv", "0,1\n1\n2,3\n");
  auto rg = cfg(4, 0, 0, -1, ragged.c_str());
  EXPECT_EQ(read_file(dp, rg, &data, &labels), MXC_ERR_IO);
  EXPECT_NE(err().find("mm_ragged.csv:2: the row has 1 fields, expected 2"),
            std::string::npos)
      << err();
}

// n rows of `cols` values, row i column j = i * 0.5 - j (exact in float).
std::string grid(int n, int cols, Mat *want) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    std::vector<float> row;
    for (int j = 0; j < cols; ++j) {
      float v = (float)i * 0.5f - (float)j;
      s += (j ? "," : "") + std::to_string(v);
      row.push_back(v);
    }
    s += "\n";
    want->push_back(row);
  }
  return s;
}

TEST(Csv, BatchBoundariesAndFirstLine) {
  for (int n : {1, 5, 6, 7, 12}) {
    Mat want;
    std::string path = write_file("batches.csv", "h\n" + grid(n, 3, &want));
    auto c = cfg(3, 0, 1);
    Reader rd;
    ASSERT_EQ(mxc__csv_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
    Mat data;
    int64_t line = 2;
    for (;;) {
      mxc__csv_batch b;
      ASSERT_EQ(mxc__csv_next(rd.r, &b), MXC_OK) << err();
      if (b.rows == 0) break;
      EXPECT_EQ(b.first_line, line);
      EXPECT_EQ(b.rows, std::min<int64_t>(3, n - (line - 2)));
      EXPECT_EQ(b.cols, 3);
      line += b.rows;
      for (int64_t i = 0; i < b.rows; ++i) {
        data.emplace_back(b.data + i * 3, b.data + i * 3 + 3);
      }
    }
    EXPECT_EQ(data, want) << n;
  }
}

TEST(Csv, LinesCrossingChunkBoundaries) {
  Mat want;
  std::string path = write_file("chunks.csv", grid(30, 5, &want));
  for (size_t chunk = 64; chunk < 200; chunk += 5) {
    Mat data, labels;
    ASSERT_EQ(read_file(path, cfg(4, 0, 0, -1, nullptr, chunk), &data,
                        &labels),
              MXC_OK)
        << chunk << ": " << err();
    EXPECT_EQ(data, want) << "chunk " << chunk;
  }
}

struct Bad {
  const char *text;
  int line;
  const char *says;
  mxc__csv_config c;
};

TEST(Csv, MalformedLinesNameFileAndLine) {
  const Bad cases[] = {
      {"1,2,3\n4,5\n", 2, "the row has 2 fields, expected 3", cfg(4)},
      {"1,2\n\n3,4,5\n", 3, "the row has 3 fields, expected 2", cfg(4)},
      {"1,2,3\n", 1, "the row has 3 fields, expected 2", cfg(4, 2)},
      {"h\n1,2,3\n1,,3\n", 3, "field 2 is empty", cfg(4, 0, 1)},
      {"1,2,\n", 1, "field 3 is empty", cfg(4)},
      {",1\n", 1, "field 1 is empty", cfg(4)},
      {"1,x,3\n", 1, "field 2 is 'x', expected a number", cfg(4)},
      {"1,2.5.1\n", 1, "field 2 is '2.5.1'", cfg(4)},
      {"1 2,3\n", 1, "field 1 is '1 2'", cfg(4)},
      {"1,1e40\n", 1, "float32 range", cfg(4)},
      {"1,2\n3,4\n", 1, "label_col 5 is out of range for rows of 2",
       cfg(4, 0, 0, 5)},
      {"1\n", 1, "no data columns", cfg(4, 0, 0, 0)},
      {"1,2\n1,2,3,4,5,6,7,8,9\n", 2, "longer than the reader's 16-byte",
       cfg(4, 0, 0, -1, nullptr, 16)},
      {"(NUL)", 2, "NUL byte", cfg(4)},
  };
  int k = 0;
  for (const Bad &b : cases) {
    SCOPED_TRACE(b.text);
    std::string text = b.text;
    if (text == "(NUL)") text = std::string("1,2\n3,\0\n", 8);
    std::string name = "bad" + std::to_string(k++) + ".csv";
    std::string path = write_file(name, text);
    Reader rd;
    ASSERT_EQ(mxc__csv_open(path.c_str(), &b.c, &rd.r), MXC_OK) << err();
    Mat data, labels;
    EXPECT_EQ(read_epoch(rd.r, b.c.batch_size, &data, &labels), MXC_ERR_IO);
    std::string where = name + ":" + std::to_string(b.line) + ":";
    EXPECT_NE(err().find(where), std::string::npos) << where << " / " << err();
    EXPECT_NE(err().find(b.says), std::string::npos) << b.says << " / " << err();
    mxc__csv_batch out;
    out.rows = -7;
    EXPECT_EQ(mxc__csv_next(rd.r, &out), MXC_ERR_IO);
    EXPECT_NE(err().find("reset"), std::string::npos) << err();
    EXPECT_EQ(out.rows, -7);
    ASSERT_EQ(mxc__csv_reset(rd.r), MXC_OK) << err();
    EXPECT_EQ(read_epoch(rd.r, b.c.batch_size, &data, &labels), MXC_ERR_IO);
    EXPECT_NE(err().find(where), std::string::npos) << err();
  }
}

TEST(Csv, BadArguments) {
  std::string path = write_file("args.csv", "1,2\n");
  mxc__csv *r = reinterpret_cast<mxc__csv *>(0x1);
  auto c = cfg(4);
  EXPECT_EQ(mxc__csv_open(nullptr, &c, &r), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__csv_open(path.c_str(), nullptr, &r), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__csv_open(path.c_str(), &c, nullptr), MXC_ERR_INVALID_ARGUMENT);
  const mxc__csv_config bad[] = {cfg(0), cfg(4, -1), cfg(4, 0, 0, -2),
                                 cfg(4, 3, 0, 3), cfg(4, 1, 0, 0),
                                 cfg(4, 0, 0, 1, path.c_str())};
  for (const auto &b : bad) {
    EXPECT_EQ(mxc__csv_open(path.c_str(), &b, &r), MXC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("mxc__csv_open"), std::string::npos) << err();
  }
  std::string missing = tt::tmp_path("no_such.csv");
  EXPECT_EQ(mxc__csv_open(missing.c_str(), &c, &r), MXC_ERR_IO);
  EXPECT_NE(err().find("no_such.csv"), std::string::npos) << err();
  auto ml = cfg(4, 0, 0, -1, missing.c_str());
  EXPECT_EQ(mxc__csv_open(path.c_str(), &ml, &r), MXC_ERR_IO);
  EXPECT_NE(err().find("no_such.csv"), std::string::npos) << err();
  EXPECT_EQ(r, reinterpret_cast<mxc__csv *>(0x1)) << "out touched";
  mxc__csv_batch b;
  EXPECT_EQ(mxc__csv_next(nullptr, &b), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__csv_reset(nullptr), MXC_ERR_INVALID_ARGUMENT);
  mxc__csv_free(nullptr);
}

// Largest buffer size seen over an epoch of path.
size_t peak_buffers(const std::string &path, const mxc__csv_config &c,
                    const Mat &want) {
  Reader rd;
  EXPECT_EQ(mxc__csv_open(path.c_str(), &c, &rd.r), MXC_OK) << err();
  if (!rd.r) return 0;
  size_t peak = mxc__csv_buffer_bytes(rd.r);
  int64_t live_after_first = -1;
  Mat data;
  for (;;) {
    mxc__csv_batch b;
    EXPECT_EQ(mxc__csv_next(rd.r, &b), MXC_OK) << err();
    if (b.rows == 0) break;
    for (int64_t i = 0; i < b.rows; ++i) {
      data.emplace_back(b.data + i * b.cols, b.data + (i + 1) * b.cols);
    }
    peak = std::max(peak, mxc__csv_buffer_bytes(rd.r));
    if (live_after_first < 0) live_after_first = mxc__alloc_live();
    EXPECT_EQ(mxc__alloc_live(), live_after_first) << "blocks added mid-file";
  }
  EXPECT_EQ(data, want);
  return peak;
}

TEST(Csv, BuffersDoNotGrowWithTheFile) {
  const size_t chunk = 4096;
  Mat want_small, want_large;
  std::string ps = write_file("small.csv", grid(200, 8, &want_small));
  std::string large = grid(8000, 8, &want_large);
  ASSERT_GT(large.size(), 100 * chunk);
  std::string pl = write_file("large.csv", large);
  auto c = cfg(32, 0, 0, -1, nullptr, chunk);
  size_t peak_small = peak_buffers(ps, c, want_small);
  size_t peak_large = peak_buffers(pl, c, want_large);
  EXPECT_EQ(peak_small, peak_large);
  EXPECT_LT(peak_large, large.size() / 50);
}

// Opens, reads an epoch, resets and reads the first batch again.
int full_run(const std::string &path, const mxc__csv_config &c,
             const Mat &want_data, const Mat &want_labels) {
  Reader rd;
  int rc = mxc__csv_open(path.c_str(), &c, &rd.r);
  if (rc != MXC_OK) return rc;
  Mat data, labels;
  rc = read_epoch(rd.r, c.batch_size, &data, &labels);
  if (rc != MXC_OK) return rc;
  EXPECT_EQ(data, want_data);
  EXPECT_EQ(labels, want_labels);
  rc = mxc__csv_reset(rd.r);
  if (rc != MXC_OK) return rc;
  mxc__csv_batch b;
  rc = mxc__csv_next(rd.r, &b);
  if (rc != MXC_OK) return rc;
  EXPECT_EQ(b.rows, c.batch_size);
  return MXC_OK;
}

TEST(Csv, IoFaultWalkWithLabelFile) {
  Mat want_data, want_labels;
  // Both files larger than the file layer's 64 KiB buffer.
  std::string dp = write_file("iof_data.csv", grid(4000, 6, &want_data));
  std::string lp = write_file("iof_label.csv", grid(4000, 2, &want_labels));
  auto c = cfg(64, 0, 0, -1, lp.c_str(), 2000);
  tt::io_fault_walk([&] { return full_run(dp, c, want_data, want_labels); });
}

TEST(Csv, AllocFaultWalk) {
  Mat want_data, want_labels, full;
  std::string dp = write_file("af_data.csv", "h\n" + grid(100, 4, &full));
  for (auto &row : full) {
    want_labels.push_back({row[1]});
    want_data.push_back({row[0], row[2], row[3]});
  }
  tt::alloc_fault_walk([&] {
    return full_run(dp, cfg(16, 0, 1, 1), want_data, want_labels);
  });
  Mat wd, wl;
  std::string dp2 = write_file("af2_data.csv", grid(50, 3, &wd));
  std::string lp2 = write_file("af2_label.csv", grid(50, 1, &wl));
  tt::alloc_fault_walk([&] {
    return full_run(dp2, cfg(8, 0, 0, -1, lp2.c_str()), wd, wl);
  });
}

}  // namespace
