// Large broadcasts made of many short rows are split over the kernel pool
// by rows (ops/binary/broadcast.c): the output must be the same bits on
// 1, 2 and 3 engine workers and match a naive reference, for odd extents
// (short last chunk) and both operands broadcasting.
#include <cstring>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

// Index of output element i in an operand of shape `s` broadcast to `out`.
int64_t source_index(const Shape &out, const Shape &s, int64_t i) {
  int64_t src = 0, mul = 1;
  int off = (int)out.size() - (int)s.size();
  for (int a = (int)out.size() - 1; a >= 0; --a) {
    int64_t idx = i % out[a];
    i /= out[a];
    int sa = a - off;
    if (sa < 0) continue;
    if (s[sa] != 1) src += idx * mul;
    mul *= s[sa];
  }
  return src;
}

void check(const std::string &op, const Shape &sa, const Shape &sb,
           const Shape &so, int dtype) {
  std::vector<double> xa = uniform(numel(sa), -2, 2, 3);
  std::vector<double> xb = uniform(numel(sb), 0.5, 2, 4);
  Arr a = make(sa, xa, dtype), b = make(sb, xb, dtype);
  std::vector<double> ha = read(a), hb = read(b);
  int saved = 0;
  ASSERT_EQ(mxc_get_num_threads(&saved), MXC_OK);
  std::vector<std::vector<double>> r;
  for (int t : {1, 2, 3}) {
    ASSERT_EQ(mxc_set_num_threads(t), MXC_OK) << err();
    auto out = invoke(op, {&a, &b});
    ASSERT_EQ(out.size(), 1u) << err();
    ASSERT_EQ(out[0].shape(), so);
    r.push_back(read(out[0]));
  }
  ASSERT_EQ(mxc_set_num_threads(saved), MXC_OK);
  for (int t = 1; t < 3; ++t) {
    EXPECT_EQ(std::memcmp(r[0].data(), r[t].data(), r[0].size() * 8), 0)
        << op << ": 1 vs " << t + 1 << " workers";
  }
  for (int64_t i = 0; i < numel(so); ++i) {
    double x = ha[(size_t)source_index(so, sa, i)];
    double y = hb[(size_t)source_index(so, sb, i)];
    double want = op == "broadcast_add" ? x + y : x * y;
    ASSERT_NEAR(r[0][(size_t)i], want, 1e-6 * (1 + std::fabs(want)))
        << op << " element " << i;
  }
}

TEST(BroadcastThreads, ManyShortRowsSameBitsOnAnyWorkerCount) {
  check("broadcast_add", {1001, 67}, {1, 67}, {1001, 67}, MXC_DTYPE_FLOAT32);
  check("broadcast_mul", {1001, 1}, {1001, 67}, {1001, 67},
        MXC_DTYPE_FLOAT64);
  check("broadcast_add", {13, 1, 331}, {1, 29, 331}, {13, 29, 331},
        MXC_DTYPE_FLOAT32);
  check("broadcast_mul", {67}, {2003, 67}, {2003, 67}, MXC_DTYPE_FLOAT32);
}

}  // namespace
