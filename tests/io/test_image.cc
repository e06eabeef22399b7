// JPEG and PNG decoding (mxc_image_decode) against PIL's decode of the
// same files (scripts/image_ref.py encodes them and dumps PIL's pixels),
// every truncation of each file, corrupted bytes, oversized headers and
// bad arguments.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

std::string err() { return mxc_last_error(); }

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

std::vector<uint8_t> slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

const std::string &ref_dir() {
  static std::string dir = [] {
    std::string d = tmp_path("img");
    std::string cmd = "mkdir -p " + d +
                      " && /usr/bin/python3 scripts/image_ref.py write " + d;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return d;
  }();
  return dir;
}

struct Case {
  std::string name, file;
  int64_t h, w;
  int tol[4];  // by channel count (1 and 3)
};

std::vector<Case> cases() {
  std::ifstream f(ref_dir() + "/cases.txt");
  std::vector<Case> out;
  Case c{};
  while (f >> c.name >> c.file >> c.h >> c.w >> c.tol[1] >> c.tol[3]) {
    out.push_back(c);
  }
  return out;
}

// Decodes bytes into a host vector of CHW values; the array's shape must
// be (channels, h, w).
template <class T>
int decode(const std::vector<uint8_t> &b, int channels, int dtype,
           std::vector<int64_t> *shape, std::vector<T> *px) {
  mxc_ndarray a = nullptr;
  int rc = mxc_image_decode(b.data(), (int64_t)b.size(), channels, dtype, &a);
  if (rc != MXC_OK) return rc;
  int nd = 0;
  const int64_t *dims = nullptr;
  EXPECT_EQ(mxc_ndarray_shape(a, &nd, &dims), MXC_OK);
  shape->assign(dims, dims + nd);
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  px->resize((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, px->data(), px->size() * sizeof(T)),
            MXC_OK);
  mxc_ndarray_free(a);
  return MXC_OK;
}

TEST(Image, DecodesLikePilInBothChannelCountsAndDtypes) {
  std::vector<Case> all = cases();
  ASSERT_EQ(all.size(), 9u);
  for (const Case &c : all) {
    std::vector<uint8_t> file = slurp(ref_dir() + "/" + c.file);
    for (int ch : {1, 3}) {
      SCOPED_TRACE(c.name + " channels " + std::to_string(ch));
      std::vector<uint8_t> want =
          slurp(ref_dir() + "/" + c.name + "." + std::to_string(ch) + ".raw");
      ASSERT_EQ((int64_t)want.size(), c.h * c.w * ch);
      std::vector<int64_t> shape;
      std::vector<uint8_t> u8;
      ASSERT_EQ(decode(file, ch, MXC_DTYPE_UINT8, &shape, &u8), MXC_OK)
          << err();
      ASSERT_EQ(shape, (std::vector<int64_t>{ch, c.h, c.w}));
      int worst = 0;
      for (int64_t k = 0; k < ch; ++k) {  // want is HWC, u8 is CHW
        for (int64_t i = 0; i < c.h * c.w; ++i) {
          int d = std::abs((int)u8[(size_t)(k * c.h * c.w + i)] -
                           (int)want[(size_t)(i * ch + k)]);
          worst = d > worst ? d : worst;
        }
      }
      EXPECT_LE(worst, c.tol[ch]);
      std::vector<float> f32;
      ASSERT_EQ(decode(file, ch, MXC_DTYPE_FLOAT32, &shape, &f32), MXC_OK);
      ASSERT_EQ(f32.size(), u8.size());
      for (size_t i = 0; i < u8.size(); ++i) ASSERT_EQ(f32[i], (float)u8[i]);
    }
  }
}

// A cut file is an I/O error, or (cut after the last pixel data, before
// the end marker) decodes to exactly the whole file's pixels.
TEST(Image, EveryTruncationIsAnIoErrorOrTheWholeImage) {
  for (const Case &c : cases()) {
    std::vector<uint8_t> file = slurp(ref_dir() + "/" + c.file);
    std::vector<int64_t> shape;
    std::vector<uint8_t> whole, px;
    ASSERT_EQ(decode(file, 3, MXC_DTYPE_UINT8, &shape, &whole), MXC_OK);
    int complete = 0;
    for (size_t len = 0; len < file.size(); ++len) {
      std::vector<uint8_t> cut(file.begin(), file.begin() + (long)len);
      int rc = decode(cut, 3, MXC_DTYPE_UINT8, &shape, &px);
      if (rc == MXC_OK) {
        ASSERT_EQ(px, whole) << c.name << " cut at " << len;
        complete++;
        continue;
      }
      ASSERT_EQ(rc, MXC_ERR_IO) << c.name << " cut at " << len;
      ASSERT_NE(err().find("mxc_image_decode"), std::string::npos) << err();
    }
    EXPECT_LE(complete, 16) << c.name;  // only the trailing marker bytes
  }
}

TEST(Image, CorruptedBytesNeverCrash) {
  uint32_t seed = 7;
  for (const Case &c : cases()) {
    std::vector<uint8_t> file = slurp(ref_dir() + "/" + c.file);
    for (size_t i = 0; i < file.size(); i += 1 + i / 64) {
      std::vector<uint8_t> b = file;
      seed = seed * 1664525u + 1013904223u;
      b[i] ^= (uint8_t)(1u << (seed >> 29));
      std::vector<int64_t> shape;
      std::vector<uint8_t> px;
      int rc = decode(b, 3, MXC_DTYPE_UINT8, &shape, &px);
      ASSERT_TRUE(rc == MXC_OK || rc == MXC_ERR_IO) << rc << " " << err();
    }
  }
}

// A PNG header that claims 100000 x 100000 pixels (its IHDR CRC valid):
// refused before any allocation.
TEST(Image, HugeClaimedSizesAreRefusedBeforeAllocating) {
  std::vector<uint8_t> png = slurp(ref_dir() + "/png_gray.png");
  ASSERT_GT(png.size(), 33u);
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) png[at + (size_t)i] = (uint8_t)(v >> (24 - 8 * i));
  };
  put32(16, 100000);
  put32(20, 100000);
  uint32_t crc = 0xffffffffu;  // CRC-32 of "IHDR" + its 13 data bytes
  for (size_t i = 12; i < 29; ++i) {
    crc ^= png[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  put32(29, ~crc);
  std::vector<int64_t> shape;
  std::vector<uint8_t> px;
  EXPECT_EQ(decode(png, 1, MXC_DTYPE_UINT8, &shape, &px), MXC_ERR_IO);
  EXPECT_NE(err().find("100000 x 100000"), std::string::npos) << err();
}

TEST(Image, BadArgumentsAreRefused) {
  std::vector<uint8_t> png = slurp(ref_dir() + "/png_gray.png");
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_image_decode(png.data(), (int64_t)png.size(), 2,
                             MXC_DTYPE_UINT8, &a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_image_decode(png.data(), (int64_t)png.size(), 1,
                             MXC_DTYPE_FLOAT64, &a),
            MXC_ERR_DTYPE);
  EXPECT_EQ(mxc_image_decode(nullptr, 5, 1, MXC_DTYPE_UINT8, &a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_image_decode(png.data(), -1, 1, MXC_DTYPE_UINT8, &a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_image_decode(png.data(), (int64_t)png.size(), 1,
                             MXC_DTYPE_UINT8, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  const char text[] = "GIF89a....";
  EXPECT_EQ(mxc_image_decode(text, sizeof text, 3, MXC_DTYPE_UINT8, &a),
            MXC_ERR_IO);
  EXPECT_NE(err().find("not a JPEG or PNG"), std::string::npos) << err();
  EXPECT_EQ(a, nullptr);
}

}  // namespace
