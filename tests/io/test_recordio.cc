// RecordIO (.rec/.idx): files written by scripts/recordio_ref.py (an
// independent writer from the format's description) read by mxc, files
// written by mxc checked byte for byte by that script, image record
// headers, every truncation and many corruptions of a file, bad indexes,
// misuse of the API and failed writes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "core/io/recordio.h"
}
#include "mxc/mxc.h"

extern "C" {
void mxc__fault_io_arm(int64_t n);
int mxc__fault_io_fired(void);
}

namespace {

const char *kScript = "scripts/recordio_ref.py";

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

std::string err() { return mxc_last_error(); }

std::vector<char> slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

void spit(const std::string &p, const std::vector<char> &b, size_t n) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(b.data(), (std::streamsize)n);
}

std::vector<char> unhex(const std::string &h) {
  std::vector<char> out;
  if (h == "-") return out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back((char)std::stoi(h.substr(i, 2), nullptr, 16));
  }
  return out;
}

struct Rec {
  int64_t key;
  std::vector<char> bytes;
};

// The script's files, written once per test binary.
const std::string &ref_dir() {
  static std::string dir = [] {
    std::string d = tmp_path("ref");
    std::string cmd = "mkdir -p " + d + " && /usr/bin/python3 " + kScript +
                      " write " + d;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return d;
  }();
  return dir;
}

std::vector<Rec> manifest(const std::string &name) {
  std::ifstream f(ref_dir() + "/" + name);
  std::vector<Rec> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    Rec r;
    std::string hex;
    ss >> r.key >> hex;
    r.bytes = unhex(hex);
    out.push_back(r);
  }
  return out;
}

std::vector<char> current(mxc_recordio r, int64_t n) {
  std::vector<char> b((size_t)n);
  EXPECT_EQ(mxc_recordio_copy(r, b.data(), n), MXC_OK) << err();
  return b;
}

mxc_recordio open_ref(const std::string &name, bool with_idx) {
  std::string rec = ref_dir() + "/" + name + ".rec";
  std::string idx = ref_dir() + "/" + name + ".idx";
  mxc_recordio r = nullptr;
  EXPECT_EQ(mxc_recordio_open(rec.c_str(), with_idx ? idx.c_str() : nullptr,
                              "r", &r),
            MXC_OK)
      << err();
  return r;
}

TEST(RecordIO, ReadsTheIndependentWritersRecordsInOrder) {
  std::vector<Rec> want = manifest("plain.txt");
  ASSERT_GT(want.size(), 10u);
  mxc_recordio r = open_ref("plain", false);
  ASSERT_NE(r, nullptr);
  for (const Rec &w : want) {
    int64_t n = -2;
    ASSERT_EQ(mxc_recordio_read(r, &n), MXC_OK) << err();
    ASSERT_EQ(n, (int64_t)w.bytes.size()) << "key " << w.key;
    EXPECT_EQ(current(r, n), w.bytes) << "key " << w.key;
    const void *d = nullptr;
    int64_t m = -1;
    ASSERT_EQ(mxc_recordio_data(r, &d, &m), MXC_OK);
    EXPECT_EQ(m, n);
    if (n) {
      EXPECT_EQ(std::memcmp(d, w.bytes.data(), (size_t)n), 0);
    }
  }
  int64_t n = 0;
  ASSERT_EQ(mxc_recordio_read(r, &n), MXC_OK);
  EXPECT_EQ(n, -1);
  ASSERT_EQ(mxc_recordio_read(r, &n), MXC_OK);  // stays at the end
  EXPECT_EQ(n, -1);
  mxc_recordio_free(r);
}

TEST(RecordIO, ReadsByKeyAndTellsTheIndexOffsets) {
  std::vector<Rec> want = manifest("plain.txt");
  mxc_recordio r = open_ref("plain", true);
  ASSERT_NE(r, nullptr);
  int64_t nk = 0;
  ASSERT_EQ(mxc_recordio_num_keys(r, &nk), MXC_OK);
  ASSERT_EQ(nk, (int64_t)want.size());
  // Backwards, so every read needs the index.
  for (size_t i = want.size(); i-- > 0;) {
    int64_t key = 0, n = 0;
    ASSERT_EQ(mxc_recordio_key(r, (int64_t)i, &key), MXC_OK);
    EXPECT_EQ(key, want[i].key);
    ASSERT_EQ(mxc_recordio_read_key(r, key, &n), MXC_OK) << err();
    EXPECT_EQ(current(r, n), want[i].bytes) << "key " << key;
  }
  // tell before each sequential read is that record's index offset.
  std::ifstream idx(ref_dir() + "/plain.idx");
  ASSERT_EQ(mxc_recordio_seek(r, 0), MXC_OK);
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t key, off, pos = -1, n;
    idx >> key >> off;
    ASSERT_EQ(mxc_recordio_tell(r, &pos), MXC_OK);
    EXPECT_EQ(pos, off);
    ASSERT_EQ(mxc_recordio_read(r, &n), MXC_OK);
  }
  int64_t n = 0;
  EXPECT_EQ(mxc_recordio_read_key(r, 999999, &n), MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("999999"), std::string::npos) << err();
  mxc_recordio_free(r);
}

TEST(RecordIO, WritesWhatTheIndependentReaderReadsByteForByte) {
  std::vector<Rec> want = manifest("plain.txt");
  std::string rec = tmp_path("mxc.rec"), idx = tmp_path("mxc.idx");
  mxc_recordio w = nullptr;
  ASSERT_EQ(mxc_recordio_open(rec.c_str(), idx.c_str(), "w", &w), MXC_OK);
  for (const Rec &x : want) {
    ASSERT_EQ(mxc_recordio_write_key(w, x.key, x.bytes.data(),
                                     (int64_t)x.bytes.size()),
              MXC_OK)
        << err();
  }
  int64_t nk = 0, end = 0;
  ASSERT_EQ(mxc_recordio_num_keys(w, &nk), MXC_OK);
  EXPECT_EQ(nk, (int64_t)want.size());
  ASSERT_EQ(mxc_recordio_tell(w, &end), MXC_OK);
  ASSERT_EQ(mxc_recordio_flush(w), MXC_OK);
  mxc_recordio_free(w);
  EXPECT_EQ((int64_t)slurp(rec).size(), end);
  std::string cmd = "/usr/bin/python3 " + std::string(kScript) + " check " +
                    rec + " " + idx + " " + ref_dir() + "/plain.txt";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  // And the two writers agree on the bytes.
  EXPECT_EQ(slurp(rec), slurp(ref_dir() + "/plain.rec"));
}

struct ImageRec {
  int64_t key;
  uint32_t flag;
  uint64_t id, id2;
  std::vector<float> labels;
  std::vector<char> payload;
};

std::vector<ImageRec> image_manifest() {
  std::ifstream f(ref_dir() + "/images.txt");
  std::vector<ImageRec> out;
  std::string line;
  while (std::getline(f, line)) {
    size_t bar = line.find(" | ");
    std::istringstream ss(line.substr(0, bar));
    ImageRec r;
    ss >> r.key >> r.flag >> r.id >> r.id2;
    float v;
    while (ss >> v) r.labels.push_back(v);
    r.payload = unhex(line.substr(bar + 3));
    out.push_back(r);
  }
  return out;
}

TEST(RecordIO, UnpacksImageHeadersAndPacksTheSameBytes) {
  std::vector<ImageRec> want = image_manifest();
  ASSERT_EQ(want.size(), 6u);
  mxc_recordio r = open_ref("images", true);
  ASSERT_NE(r, nullptr);
  for (const ImageRec &w : want) {
    SCOPED_TRACE(w.key);
    int64_t n = 0, id = 0, id2 = 0, off = 0;
    ASSERT_EQ(mxc_recordio_read_key(r, w.key, &n), MXC_OK) << err();
    std::vector<char> rec = current(r, n);
    float labels[8] = {0};
    int nl = 0;
    ASSERT_EQ(mxc_recordio_unpack_image(rec.data(), n, labels, 8, &nl, &id,
                                        &id2, &off),
              MXC_OK)
        << err();
    ASSERT_EQ(nl, (int)w.labels.size());
    for (int i = 0; i < nl; ++i) EXPECT_EQ(labels[i], w.labels[(size_t)i]);
    EXPECT_EQ((uint64_t)id, w.id);
    EXPECT_EQ((uint64_t)id2, w.id2);
    EXPECT_EQ(std::vector<char>(rec.begin() + off, rec.end()), w.payload);
    // Packing the same fields gives the script's bytes (flag 0 for one
    // label: every one-label record of the script uses the header).
    int64_t need = 0;
    EXPECT_EQ(mxc_recordio_pack_image(w.labels.data(), nl, (int64_t)w.id,
                                      (int64_t)w.id2, w.payload.data(),
                                      (int64_t)w.payload.size(), nullptr, 0,
                                      &need),
              MXC_ERR_INVALID_ARGUMENT);
    ASSERT_EQ(need, n);
    std::vector<char> mine((size_t)need);
    ASSERT_EQ(mxc_recordio_pack_image(w.labels.data(), nl, (int64_t)w.id,
                                      (int64_t)w.id2, w.payload.data(),
                                      (int64_t)w.payload.size(), mine.data(),
                                      need, &need),
              MXC_OK)
        << err();
    EXPECT_EQ(mine, rec);
  }
  mxc_recordio_free(r);
}

TEST(RecordIO, ShortImageRecordsAreIoErrors) {
  char rec[32] = {0};
  float l[2];
  int nl = 0;
  int64_t off = 0;
  EXPECT_EQ(mxc_recordio_unpack_image(rec, 23, l, 2, &nl, nullptr, nullptr,
                                      &off),
            MXC_ERR_IO);
  rec[0] = 3;  // flag 3: 12 bytes of labels, 8 present
  EXPECT_EQ(mxc_recordio_unpack_image(rec, 32, l, 2, &nl, nullptr, nullptr,
                                      &off),
            MXC_ERR_IO);
  EXPECT_NE(err().find("3 labels"), std::string::npos) << err();
  rec[0] = 2;  // fits exactly; only max_labels are written
  l[1] = -1.0f;
  ASSERT_EQ(mxc_recordio_unpack_image(rec, 32, l, 1, &nl, nullptr, nullptr,
                                      &off),
            MXC_OK);
  EXPECT_EQ(nl, 2);
  EXPECT_EQ(off, 32);
  EXPECT_EQ(l[1], -1.0f);
}

// Reads every record; MXC_OK with the count at a clean end, else the
// first error's code.
int read_all(const std::string &path, const std::string &idx, int *count) {
  mxc_recordio r = nullptr;
  int rc = mxc_recordio_open(path.c_str(), idx.empty() ? nullptr : idx.c_str(),
                             "r", &r);
  *count = 0;
  int64_t n = 0;
  while (rc == MXC_OK && (rc = mxc_recordio_read(r, &n)) == MXC_OK && n >= 0) {
    ++*count;
  }
  mxc_recordio_free(r);
  return rc;
}

TEST(RecordIO, EveryTruncationIsACleanEndOrAnIoErrorNamingTheFile) {
  std::string src = ref_dir() + "/plain.rec", cut = tmp_path("cut.rec");
  std::vector<char> all = slurp(src);
  std::vector<size_t> starts;  // record boundaries, from the index
  std::ifstream idx(ref_dir() + "/plain.idx");
  int64_t key, off;
  while (idx >> key >> off) starts.push_back((size_t)off);
  starts.push_back(all.size());
  // Every length in the first 512 bytes and within 8 bytes of every
  // record boundary (where the framing's cases are), every 31st elsewhere.
  auto near_boundary = [&](size_t len) {
    for (size_t s : starts) {
      if (len + 8 >= s && len <= s + 8) return true;
    }
    return false;
  };
  for (size_t len = 0; len <= all.size(); ++len) {
    if (len > 512 && !near_boundary(len) && len % 31 != 0) continue;
    spit(cut, all, len);
    int count = 0, rc = read_all(cut, "", &count);
    size_t whole = 0;
    while (whole + 1 < starts.size() && starts[whole + 1] <= len) ++whole;
    bool boundary = starts[whole] == len;
    ASSERT_EQ(rc, boundary ? MXC_OK : MXC_ERR_IO) << "length " << len;
    ASSERT_EQ((size_t)count, whole) << "length " << len;
    if (!boundary) {
      ASSERT_NE(err().find("cut.rec"), std::string::npos) << err();
      ASSERT_NE(err().find("byte"), std::string::npos) << err();
    }
  }
}

TEST(RecordIO, CorruptedBytesNeverCrash) {
  std::string src = ref_dir() + "/plain.rec", bad = tmp_path("bad.rec");
  std::vector<char> all = slurp(src);
  uint32_t seed = 12345;
  int errors = 0;
  for (size_t i = 0; i < all.size(); i += (i < 256 ? 1 : 97)) {
    for (int v : {0x00, 0xff, 0x80}) {
      std::vector<char> b = all;
      seed = seed * 1103515245u + 12345u;
      b[i] = (char)(v ^ (int)(seed >> 24));
      spit(bad, b, b.size());
      int count = 0, rc = read_all(bad, "", &count);
      ASSERT_TRUE(rc == MXC_OK || rc == MXC_ERR_IO) << rc << " " << err();
      errors += rc != MXC_OK;
    }
  }
  EXPECT_GT(errors, 60);  // headers were hit, and reported
}

TEST(RecordIO, BadIndexesAreIoErrorsNamingTheLine) {
  std::string rec = ref_dir() + "/plain.rec", idx = tmp_path("bad.idx");
  size_t size = slurp(rec).size();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1\t0\n2\t6\n", "line 2"},                                  // unaligned
      {"1\t" + std::to_string(size) + "\n", "line 1"},             // at end
      {"1\t99999999999999999999\n", "line 1"},                     // overflow
      {"1 0\nx\t8\n", "line 2"},                                   // not a key
      {"1\t0 junk\n", "line 1"},
      {"\n\n1\t-4\n", "line 3"},
      {std::string("1\t0\n\0", 5), "NUL"},
  };
  for (const auto &c : cases) {
    std::ofstream(idx, std::ios::binary | std::ios::trunc) << c.first;
    mxc_recordio r = nullptr;
    EXPECT_EQ(mxc_recordio_open(rec.c_str(), idx.c_str(), "r", &r), MXC_ERR_IO)
        << c.first;
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(err().find(c.second), std::string::npos) << err();
  }
  // An aligned offset inside a record is found out when read.
  std::ofstream(idx, std::ios::trunc) << "7\t4\n";
  mxc_recordio r = nullptr;
  ASSERT_EQ(mxc_recordio_open(rec.c_str(), idx.c_str(), "r", &r), MXC_OK);
  int64_t n = 0;
  EXPECT_EQ(mxc_recordio_read_key(r, 7, &n), MXC_ERR_IO);
  EXPECT_NE(err().find("byte 4"), std::string::npos) << err();
  mxc_recordio_free(r);
}

TEST(RecordIO, MisuseIsRefusedWithAMessage) {
  std::string p = tmp_path("misuse.rec");
  mxc_recordio w = nullptr, r = nullptr;
  EXPECT_EQ(mxc_recordio_open(p.c_str(), nullptr, "a", &w),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("\"r\" or \"w\""), std::string::npos) << err();
  EXPECT_EQ(mxc_recordio_open(nullptr, nullptr, "r", &w),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_open(p.c_str(), nullptr, "r", nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_open("/nonexistent/x.rec", nullptr, "r", &r),
            MXC_ERR_IO);
  ASSERT_EQ(mxc_recordio_open(p.c_str(), nullptr, "w", &w), MXC_OK);
  int64_t n = 0;
  char buf[4] = {1, 2, 3, 4};
  EXPECT_EQ(mxc_recordio_read(w, &n), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_seek(w, 0), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_write_key(w, 1, buf, 4), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("without an index"), std::string::npos) << err();
  EXPECT_EQ(mxc_recordio_write(w, nullptr, 4), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_write(w, buf, -1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_write(w, buf, (int64_t)1 << 29),
            MXC_ERR_INVALID_ARGUMENT);  // refused before reading buf
  EXPECT_NE(err().find("at most"), std::string::npos) << err();
  ASSERT_EQ(mxc_recordio_write(w, nullptr, 0), MXC_OK);
  ASSERT_EQ(mxc_recordio_write(w, buf, 4), MXC_OK);
  mxc_recordio_free(w);
  ASSERT_EQ(mxc_recordio_open(p.c_str(), nullptr, "r", &r), MXC_OK);
  EXPECT_EQ(mxc_recordio_write(r, buf, 4), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_read_key(r, 1, &n), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("without an index"), std::string::npos) << err();
  EXPECT_EQ(mxc_recordio_seek(r, 2), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_seek(r, 1 << 20), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_seek(r, -4), MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc_recordio_read(r, &n), MXC_OK);
  EXPECT_EQ(n, 0);
  ASSERT_EQ(mxc_recordio_read(r, &n), MXC_OK);
  ASSERT_EQ(n, 4);
  EXPECT_EQ(mxc_recordio_copy(r, buf, 3), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_recordio_key(r, 0, &n), MXC_ERR_INVALID_ARGUMENT);
  mxc_recordio_free(r);
  mxc_recordio_free(nullptr);
}

// Every write of a writer fails in turn: each failure is MXC_ERR_IO, the
// writer then refuses more, and nothing leaks (ASan).
TEST(RecordIO, FailedWritesAreReportedAndStopTheWriter) {
  std::vector<Rec> want = manifest("plain.txt");
  std::string rec = tmp_path("fault.rec"), idx = tmp_path("fault.idx");
  for (int64_t k = 1;; ++k) {
    mxc__fault_io_arm(k);
    mxc_recordio w = nullptr;
    int rc = mxc_recordio_open(rec.c_str(), idx.c_str(), "w", &w);
    for (size_t i = 0; rc == MXC_OK && i < want.size(); ++i) {
      rc = mxc_recordio_write_key(w, want[i].key, want[i].bytes.data(),
                                  (int64_t)want[i].bytes.size());
    }
    if (rc == MXC_OK) rc = mxc_recordio_flush(w);
    bool fired = mxc__fault_io_fired();
    if (rc != MXC_OK && w) {
      char b[4] = {0};
      EXPECT_EQ(mxc_recordio_write(w, b, 4), MXC_ERR_IO) << "fault " << k;
    }
    mxc_recordio_free(w);
    mxc__fault_io_arm(0);
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      break;
    }
    EXPECT_EQ(rc, MXC_ERR_IO) << "fault " << k << ": " << err();
  }
}

}  // namespace

// Messages name a record by its file; a path too long for the message
// keeps its end, where the file's name is.
TEST(RecordIO, RecordNamesKeepTheFileName) {
  char buf[300];
  mxc__record_what(buf, sizeof buf, "p: ", "/a/b.rec", 7);
  EXPECT_STREQ(buf, "p: '/a/b.rec' record 7");
  std::string deep = "/" + std::string(400, 'x') + "/images.rec";
  mxc__record_what(buf, sizeof buf, "", deep.c_str(), 14);
  std::string s = buf;
  EXPECT_NE(s.find("'...x"), std::string::npos) << s;
  EXPECT_NE(s.find("/images.rec' record 14"), std::string::npos) << s;
  EXPECT_LT(s.size(), sizeof buf);
}
