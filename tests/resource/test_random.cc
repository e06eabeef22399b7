// Tests for core/resource/random: Philox4x32-10 known answers, the global
// stream (seeding, disjoint reservations from many threads), the fixed
// value layout that makes fills independent of how a range is split, and
// statistical sanity of the distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

extern "C" {
#include "core/resource/random.h"
}

namespace {

// Set before a test seeds, so that the default-seed test knows whether the
// stream is still in its never-seeded state.
bool g_seeded = false;

void Seed(uint64_t seed) {
  g_seeded = true;
  mxc__random_seed(seed);
}

void ExpectPhilox(std::vector<uint32_t> ctr, std::vector<uint32_t> key,
                  std::vector<uint32_t> want) {
  uint32_t out[4];
  mxc__philox4x32_10(ctr.data(), key.data(), out);
  for (int i = 0; i < 4; i++) {
    EXPECT_EQ(out[i], want[i]) << "word " << i << std::hex << ": got 0x"
                               << out[i] << ", want 0x" << want[i];
  }
}

}  // namespace

// Must stay the first test: it checks the stream before anything seeds it
// (it skips itself when run after a seeding test, e.g. under shuffling).
TEST(RandomStream, DefaultSeedWhenNeverSeeded) {
  if (g_seeded) GTEST_SKIP() << "the stream was seeded by an earlier test";
  mxc__rng_slice s = mxc__random_reserve(4, 1);
  EXPECT_EQ(s.key[0], static_cast<uint32_t>(MXC__RANDOM_DEFAULT_SEED));
  EXPECT_EQ(s.key[1], static_cast<uint32_t>(MXC__RANDOM_DEFAULT_SEED >> 32));
}

// Known-answer vectors published with Random123 (kat_vectors) for
// philox4x32 with 10 rounds.
TEST(Philox, KnownAnswerVectors) {
  ExpectPhilox({0, 0, 0, 0}, {0, 0},
               {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  ExpectPhilox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
               {0xffffffff, 0xffffffff},
               {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  ExpectPhilox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
               {0xa4093822, 0x299f31d0},
               {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

// u32 value i is word i % 4 of Philox(key, block + i / 4), with the 64-bit
// block counter in counter words 0-1.
TEST(Philox, SliceWordsAreCounterBlocks) {
  mxc__rng_slice s;
  s.key[0] = 0x12345678;
  s.key[1] = 0x9abcdef0;
  s.block = 0x00000001fffffffeULL;  // crosses into counter word 1
  s.n_blocks = 3;
  uint32_t got[12];
  mxc__rng_u32(&s, 0, 12, got);
  for (uint64_t b = 0; b < 3; b++) {
    uint64_t c = s.block + b;
    uint32_t ctr[4] = {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32),
                       0, 0};
    uint32_t want[4];
    mxc__philox4x32_10(ctr, s.key, want);
    for (int w = 0; w < 4; w++) EXPECT_EQ(got[b * 4 + w], want[w]);
  }
}

TEST(RandomStream, SeedResetsTheCounterAndSetsTheKey) {
  Seed(0x0123456789abcdefULL);
  mxc__rng_slice a = mxc__random_reserve(10, 1);  // 3 blocks
  EXPECT_EQ(a.key[0], 0x89abcdefu);
  EXPECT_EQ(a.key[1], 0x01234567u);
  EXPECT_EQ(a.block, 0u);
  EXPECT_EQ(a.n_blocks, 3u);
  mxc__rng_slice b = mxc__random_reserve(5, 2);  // 10 words: 3 blocks
  EXPECT_EQ(b.block, 3u);
  EXPECT_EQ(b.n_blocks, 3u);
  mxc__rng_slice c = mxc__random_reserve(0, 1);
  EXPECT_EQ(c.n_blocks, 0u);
  mxc__rng_slice d = mxc__random_reserve(-5, 1);
  EXPECT_EQ(d.n_blocks, 0u);
  mxc__rng_slice e = mxc__random_reserve(10, 0);  // bad words_per_value
  EXPECT_EQ(e.n_blocks, 0u);
  mxc__rng_slice f = mxc__random_reserve(3, 4);
  EXPECT_EQ(f.block, 6u);
  EXPECT_EQ(f.n_blocks, 3u);
  // Huge counts do not overflow: ceil(n * 2 / 4) blocks.
  mxc__rng_slice g = mxc__random_reserve(INT64_MAX, 2);
  EXPECT_EQ(g.n_blocks, (static_cast<uint64_t>(INT64_MAX) + 1) / 2);
  Seed(0x0123456789abcdefULL);
  EXPECT_EQ(mxc__random_reserve(1, 1).block, 0u);
}

TEST(RandomStream, SameSeedSameNumbersDifferentSeedDifferent) {
  auto draw = [](uint64_t seed) {
    Seed(seed);
    mxc__random_reserve(7, 1);  // something pushed before
    mxc__rng_slice s = mxc__random_reserve(1000, 1);
    std::vector<float> v(1000);
    mxc__rng_uniform_f32(&s, 0, 1000, 0.0f, 1.0f, v.data());
    return v;
  };
  std::vector<float> a = draw(42), b = draw(42), c = draw(43);
  EXPECT_EQ(0, memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  size_t same = 0;
  for (size_t i = 0; i < a.size(); i++) same += (a[i] == c[i]);
  EXPECT_LT(same, 5u);
}

TEST(RandomStream, ConcurrentReservationsAreDisjoint) {
  Seed(7);
  const int kThreads = 8, kPerThread = 2000;
  std::vector<std::vector<mxc__rng_slice>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([t, &got] {
      for (int i = 0; i < kPerThread; i++) {
        int64_t n = 1 + (i * 7 + t * 13) % 97;
        got[t].push_back(mxc__random_reserve(n, 1 + (i % 2)));
      }
    });
  }
  for (auto &th : threads) th.join();
  std::vector<mxc__rng_slice> all;
  for (auto &v : got) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end(),
            [](const mxc__rng_slice &x, const mxc__rng_slice &y) {
              return x.block < y.block;
            });
  // No gaps, no overlaps: the slices tile [0, total).
  uint64_t next = 0;
  for (const auto &s : all) {
    ASSERT_EQ(s.block, next);
    ASSERT_GT(s.n_blocks, 0u);
    EXPECT_EQ(s.key[0], 7u);
    next += s.n_blocks;
  }
  EXPECT_EQ(mxc__random_reserve(1, 1).block, next);
}

namespace {

// A fill of values [begin, begin + n) of a slice into out.
template <typename T>
using Fill =
    std::function<void(const mxc__rng_slice *, int64_t, int64_t, T *)>;

// Fills [0, n) in one call, in 7 uneven chunks, in those chunks in reverse
// order, and by 5 threads; all four must agree bit for bit.
template <typename T>
void ExpectSplitInvariant(const Fill<T> &fill, int words_per_value) {
  const int64_t n = 1001;  // odd: the last normal pair is cut
  Seed(99);
  mxc__random_reserve(3, 1);  // a slice that starts mid-stream
  mxc__rng_slice s = mxc__random_reserve(n, words_per_value);
  std::vector<T> whole(n), chunked(n), reversed(n), threaded(n);
  fill(&s, 0, n, whole.data());

  // Chunk edges, several odd, to cut normal pairs and Philox blocks.
  const std::vector<int64_t> edges = {0, 1, 4, 37, 38, 511, 777, n};
  for (size_t c = 0; c + 1 < edges.size(); c++) {
    fill(&s, edges[c], edges[c + 1] - edges[c], chunked.data() + edges[c]);
  }
  for (size_t c = edges.size() - 1; c > 0; c--) {
    fill(&s, edges[c - 1], edges[c] - edges[c - 1],
         reversed.data() + edges[c - 1]);
  }
  std::vector<std::thread> threads;
  const int kThreads = 5;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      int64_t lo = n * t / kThreads, hi = n * (t + 1) / kThreads;
      fill(&s, lo, hi - lo, threaded.data() + lo);
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(0, memcmp(whole.data(), chunked.data(), n * sizeof(T)));
  EXPECT_EQ(0, memcmp(whole.data(), reversed.data(), n * sizeof(T)));
  EXPECT_EQ(0, memcmp(whole.data(), threaded.data(), n * sizeof(T)));
  // Value i alone is also value i of the whole fill.
  for (int64_t i : {int64_t(0), int64_t(1), int64_t(2), int64_t(999),
                    n - 1}) {
    T one;
    fill(&s, i, 1, &one);
    EXPECT_EQ(0, memcmp(&one, &whole[i], sizeof(T))) << i;
  }
}

}  // namespace

TEST(RandomFill, SplitInvariantU32) {
  ExpectSplitInvariant<uint32_t>(mxc__rng_u32, 1);
}

TEST(RandomFill, SplitInvariantUniformF32) {
  ExpectSplitInvariant<float>(
      [](const mxc__rng_slice *s, int64_t b, int64_t n, float *o) {
        mxc__rng_uniform_f32(s, b, n, -1.0f, 3.0f, o);
      },
      1);
}

TEST(RandomFill, SplitInvariantUniformF64) {
  ExpectSplitInvariant<double>(
      [](const mxc__rng_slice *s, int64_t b, int64_t n, double *o) {
        mxc__rng_uniform_f64(s, b, n, -1.0, 3.0, o);
      },
      2);
}

TEST(RandomFill, SplitInvariantNormalF32) {
  ExpectSplitInvariant<float>(
      [](const mxc__rng_slice *s, int64_t b, int64_t n, float *o) {
        mxc__rng_normal_f32(s, b, n, 1.0f, 2.0f, o);
      },
      2);
}

TEST(RandomFill, SplitInvariantNormalF64) {
  ExpectSplitInvariant<double>(
      [](const mxc__rng_slice *s, int64_t b, int64_t n, double *o) {
        mxc__rng_normal_f64(s, b, n, 1.0, 2.0, o);
      },
      2);
}

TEST(RandomFill, EmptyRangesWriteNothing) {
  mxc__rng_slice s = mxc__random_reserve(4, 2);
  float f = 7.0f;
  mxc__rng_uniform_f32(&s, 2, 0, 0.0f, 1.0f, &f);
  mxc__rng_normal_f32(&s, 3, 0, 0.0f, 1.0f, &f);
  EXPECT_EQ(f, 7.0f);
}

namespace {

struct Moments {
  double mean, var, min, max;
};

template <typename T>
Moments MomentsOf(const std::vector<T> &v) {
  double sum = 0, sum2 = 0, lo = INFINITY, hi = -INFINITY;
  for (T x : v) {
    double d = static_cast<double>(x);
    sum += d;
    sum2 += d * d;
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  double n = static_cast<double>(v.size());
  double mean = sum / n;
  return {mean, sum2 / n - mean * mean, lo, hi};
}

const int64_t kN = 1000000;

// Bounds are 5 standard errors (or wider): failures mean a real bias.
// Uniform on [0, 1): var 1/12, fourth central moment 1/80.
void ExpectUniformMoments(const Moments &m, double lo, double hi) {
  double w = hi - lo;
  EXPECT_NEAR(m.mean, lo + w / 2, 5 * w * std::sqrt(1.0 / 12 / kN));
  EXPECT_NEAR(m.var, w * w / 12,
              5 * w * w * std::sqrt((1.0 / 80 - 1.0 / 144) / kN));
  EXPECT_GE(m.min, lo);
  EXPECT_LT(m.max, hi);
  EXPECT_LT(m.min, lo + w * 1e-4);  // the range is actually covered
  EXPECT_GT(m.max, hi - w * 1e-4);
}

// Normal: the mean has standard error sd / sqrt(n), the variance
// sd^2 sqrt(2 / n).
void ExpectNormalMoments(const Moments &m, double mean, double sd) {
  EXPECT_NEAR(m.mean, mean, 5 * sd / std::sqrt(double(kN)));
  EXPECT_NEAR(m.var, sd * sd, 5 * sd * sd * std::sqrt(2.0 / kN));
  EXPECT_GT(m.min, mean - 7 * sd);  // ~1e-11 chance per value
  EXPECT_LT(m.max, mean + 7 * sd);
}

template <typename T>
void ExpectNormalShape(const std::vector<T> &v, double mean, double sd) {
  // P(|z| < 1) = 0.682689..., P(|z| < 2) = 0.954499...
  int64_t in1 = 0, in2 = 0;
  for (T x : v) {
    ASSERT_TRUE(std::isfinite(static_cast<double>(x)));
    double z = std::fabs((static_cast<double>(x) - mean) / sd);
    in1 += z < 1;
    in2 += z < 2;
  }
  auto tol = [](double p) { return 5 * std::sqrt(p * (1 - p) / kN); };
  EXPECT_NEAR(double(in1) / kN, 0.6826894921, tol(0.6826894921));
  EXPECT_NEAR(double(in2) / kN, 0.9544997361, tol(0.9544997361));
}

}  // namespace

TEST(RandomStats, UniformF32) {
  Seed(2024);
  mxc__rng_slice s = mxc__random_reserve(kN, 1);
  std::vector<float> v(kN);
  mxc__rng_uniform_f32(&s, 0, kN, 0.0f, 1.0f, v.data());
  ExpectUniformMoments(MomentsOf(v), 0.0, 1.0);
  mxc__rng_uniform_f32(&s, 0, kN, -5.0f, 3.0f, v.data());
  ExpectUniformMoments(MomentsOf(v), -5.0, 3.0);
}

TEST(RandomStats, UniformF64) {
  Seed(2025);
  mxc__rng_slice s = mxc__random_reserve(kN, 2);
  std::vector<double> v(kN);
  mxc__rng_uniform_f64(&s, 0, kN, 0.0, 1.0, v.data());
  ExpectUniformMoments(MomentsOf(v), 0.0, 1.0);
  mxc__rng_uniform_f64(&s, 0, kN, 10.0, 10.5, v.data());
  ExpectUniformMoments(MomentsOf(v), 10.0, 10.5);
}

TEST(RandomStats, U32BitsAreBalanced) {
  Seed(2026);
  mxc__rng_slice s = mxc__random_reserve(kN, 1);
  std::vector<uint32_t> v(kN);
  mxc__rng_u32(&s, 0, kN, v.data());
  for (int bit = 0; bit < 32; bit++) {
    int64_t ones = 0;
    for (uint32_t x : v) ones += (x >> bit) & 1;
    EXPECT_NEAR(double(ones) / kN, 0.5, 5 * 0.5 / std::sqrt(double(kN)))
        << "bit " << bit;
  }
}

TEST(RandomStats, NormalF32) {
  Seed(2027);
  mxc__rng_slice s = mxc__random_reserve(kN, 2);
  std::vector<float> v(kN);
  mxc__rng_normal_f32(&s, 0, kN, 0.0f, 1.0f, v.data());
  ExpectNormalMoments(MomentsOf(v), 0.0, 1.0);
  ExpectNormalShape(v, 0.0, 1.0);
  mxc__rng_normal_f32(&s, 0, kN, 3.0f, 0.5f, v.data());
  ExpectNormalMoments(MomentsOf(v), 3.0, 0.5);
}

TEST(RandomStats, NormalF64) {
  Seed(2028);
  mxc__rng_slice s = mxc__random_reserve(kN, 2);
  std::vector<double> v(kN);
  mxc__rng_normal_f64(&s, 0, kN, 0.0, 1.0, v.data());
  ExpectNormalMoments(MomentsOf(v), 0.0, 1.0);
  ExpectNormalShape(v, 0.0, 1.0);
  mxc__rng_normal_f64(&s, 0, kN, -2.0, 4.0, v.data());
  ExpectNormalMoments(MomentsOf(v), -2.0, 4.0);
}

// The pair (cos, sin) halves are uncorrelated.
TEST(RandomStats, NormalPairsAreUncorrelated) {
  Seed(2029);
  mxc__rng_slice s = mxc__random_reserve(kN, 2);
  std::vector<double> v(kN);
  mxc__rng_normal_f64(&s, 0, kN, 0.0, 1.0, v.data());
  double c = 0;
  for (int64_t i = 0; i + 1 < kN; i += 2) c += v[i] * v[i + 1];
  EXPECT_NEAR(c / (kN / 2), 0.0, 5 / std::sqrt(kN / 2.0));
}

// Where lo + (hi - lo) * u rounds up to hi, the result is still below hi.
TEST(RandomFill, UniformNeverReturnsHi) {
  Seed(5);
  mxc__rng_slice s = mxc__random_reserve(kN, 2);
  std::vector<float> f(kN);
  // Floats near 2^24 are 2 apart: [2^24, 2^24 + 2) holds only 2^24, and
  // about half the draws would round to hi.
  const float lo = 16777216.0f, hi = 16777218.0f;
  mxc__rng_uniform_f32(&s, 0, kN, lo, hi, f.data());
  for (float x : f) ASSERT_EQ(x, lo);
  mxc__rng_uniform_f32(&s, 0, kN, 1.0f, 2.0f, f.data());
  for (float x : f) ASSERT_TRUE(x >= 1.0f && x < 2.0f) << x;
  // A one-ulp range: only lo.
  const float one_up = std::nextafter(1.0f, 2.0f);
  mxc__rng_uniform_f32(&s, 0, 1000, 1.0f, one_up, f.data());
  for (int i = 0; i < 1000; i++) ASSERT_EQ(f[i], 1.0f);

  std::vector<double> d(kN);
  const double dlo = 9007199254740992.0, dhi = dlo + 2;  // 2^53
  mxc__rng_uniform_f64(&s, 0, kN, dlo, dhi, d.data());
  for (double x : d) ASSERT_EQ(x, dlo);
}
