// The fast pooling kernels (no padding, windows inside the input; 2x2
// stride 2 written out) and the split over planes, on arrays large enough
// to run on several threads, against a naive reference written here:
// forward values and backward scatter, max ties going to the first
// maximum in row-major order, float32 and float64, and accumulation.
#include <limits>
#include <string>

#include "tests/ops/linalg/linalg_test_util.h"

using namespace mxct;

namespace {

struct Geo {
  int64_t n, c, h, w, kh, kw, sh, sw;
};

std::string pair(int64_t a, int64_t b) {
  return "(" + std::to_string(a) + "," + std::to_string(b) + ")";
}

Params params(const Geo &g, const std::string &type) {
  return {{"pool_type", type},
          {"kernel", pair(g.kh, g.kw)},
          {"stride", pair(g.sh, g.sw)}};
}

int64_t out_dim(int64_t in, int64_t k, int64_t s) { return (in - k) / s + 1; }

// Forward and backward (ograd og) reference, one window at a time.
void reference(const Geo &g, const std::string &type,
               const std::vector<double> &x, const std::vector<double> &og,
               std::vector<double> *y, std::vector<double> *dx) {
  int64_t oh = out_dim(g.h, g.kh, g.sh), ow = out_dim(g.w, g.kw, g.sw);
  y->assign(g.n * g.c * oh * ow, 0);
  dx->assign(x.size(), 0);
  for (int64_t pl = 0; pl < g.n * g.c; ++pl)
    for (int64_t a = 0; a < oh; ++a)
      for (int64_t b = 0; b < ow; ++b) {
        int64_t o = (pl * oh + a) * ow + b;
        double acc = type == "max" ? -std::numeric_limits<double>::infinity()
                                   : 0;
        int64_t arg = -1;
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            int64_t idx = (pl * g.h + a * g.sh + i) * g.w + b * g.sw + j;
            if (type == "max") {
              if (arg < 0 || x[idx] > acc) acc = x[idx], arg = idx;
            } else {
              acc += x[idx];
            }
          }
        double div = type == "avg" ? double(g.kh * g.kw) : 1.0;
        (*y)[o] = type == "max" ? acc : acc / div;
        if (type == "max") {
          (*dx)[arg] += og[o];
        } else {
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j)
              (*dx)[(pl * g.h + a * g.sh + i) * g.w + b * g.sw + j] +=
                  og[o] / div;
        }
      }
}

void check(const Geo &g, const std::string &type, int dtype) {
  SCOPED_TRACE(type + " " + pair(g.kh, g.kw) + " stride " + pair(g.sh, g.sw) +
               (dtype == MXC_DTYPE_FLOAT32 ? " f32" : " f64"));
  Shape xs = {g.n, g.c, g.h, g.w};
  // Few distinct values, so that windows often hold ties.
  auto x = uniform(numel(xs), 0, 4, 7);
  for (auto &v : x) v = std::floor(v);
  int64_t oh = out_dim(g.h, g.kh, g.sh), ow = out_dim(g.w, g.kw, g.sw);
  Shape ys = {g.n, g.c, oh, ow};
  auto og = uniform(numel(ys), -1, 1, 9);
  if (dtype == MXC_DTYPE_FLOAT32) {
    for (auto &v : og) v = double(float(v));
  }
  std::vector<double> y_ref, dx_ref;
  reference(g, type, x, og, &y_ref, &dx_ref);

  Arr ax = make(xs, x, dtype), aog = make(ys, og, dtype);
  auto y = invoke("Pooling", {&ax}, params(g, type));
  ASSERT_EQ(y.size(), 1u) << err();
  EXPECT_EQ(y[0].shape(), ys);
  expect_close(read(y[0]), y_ref, dtype, "forward");
  auto dx = invoke("_backward_Pooling", {&aog, &ax}, params(g, type));
  ASSERT_EQ(dx.size(), 1u) << err();
  expect_close(read(dx[0]), dx_ref, dtype, "backward");
}

TEST(PoolFast, MatchesReferenceOnLargeArrays) {
  const Geo geos[] = {
      {64, 20, 24, 24, 2, 2, 2, 2},  // LeNet pool1 (split over threads)
      {16, 50, 8, 8, 2, 2, 2, 2},    // LeNet pool2
      {8, 20, 25, 23, 2, 2, 2, 2},   // odd extents: last row/column unused
      {8, 16, 21, 21, 3, 3, 2, 2},   // overlapping windows
      {8, 16, 20, 20, 3, 3, 1, 1},
      {8, 16, 19, 30, 2, 3, 1, 3},
  };
  for (const auto &g : geos) {
    for (const char *type : {"max", "avg", "sum"}) {
      check(g, type, MXC_DTYPE_FLOAT32);
      check(g, type, MXC_DTYPE_FLOAT64);
    }
  }
}

// NaN: the forward skips it unless the window holds nothing else (as the
// generic kernel); the backward's first element wins over a later NaN and
// a NaN first element keeps the gradient.
TEST(PoolFast, MaxWithNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Arr x = make({1, 1, 2, 4}, {nan, 1, 2, nan, nan, 3, 5, 4});
  Params p = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}};
  auto y = read(invoke("Pooling", {&x}, p)[0]);
  EXPECT_EQ(y, std::vector<double>({3, 5}));
  Arr og = make({1, 1, 1, 2}, {1, 2});
  auto dx = read(invoke("_backward_Pooling", {&og, &x}, p)[0]);
  // Window 0 (nan, 1, nan, 3): nothing compares greater than the NaN
  // first element, so it keeps the gradient; window 1 (2, nan, 5, 4): 5.
  EXPECT_EQ(dx, std::vector<double>({1, 0, 0, 0, 0, 0, 2, 0}));
}

}  // namespace
