// SequenceMask, SequenceLast and SequenceReverse against loops written
// here from MXNet's definitions, with and without lengths, on both time
// axes; gradients by finite differences; bad lengths and shapes.
#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;

namespace {

// Element (t, b, r) of data laid out with the time axis `axis`.
int64_t at(int axis, int64_t t, int64_t b, int64_t r, int64_t T, int64_t B,
           int64_t R) {
  return (axis == 0 ? t * B + b : b * T + t) * R + r;
}

const int64_t T = 4, B = 3, R = 2;

TEST(SequenceMask, LengthsValueAndAxes) {
  auto xv = uniform(T * B * R, -1, 1, 701);
  std::vector<double> lens = {2, 4, 0};
  for (int axis : {0, 1}) {
    Shape s = axis == 0 ? Shape{T, B, R} : Shape{B, T, R};
    Arr x = make(s, xv, MXC_DTYPE_FLOAT64), l = make({B}, lens, MXC_DTYPE_INT32);
    auto out = invoke("SequenceMask", {&x, &l},
                      {{"use_sequence_length", "true"},
                       {"value", "-7"},
                       {"axis", std::to_string(axis)}});
    auto want = xv;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = (int64_t)lens[b]; t < T; ++t)
        for (int64_t r = 0; r < R; ++r) want[at(axis, t, b, r, T, B, R)] = -7;
    EXPECT_EQ(read(out[0]), want) << "axis " << axis;
  }
  Arr x = make({T, B, R}, xv, MXC_DTYPE_FLOAT64);
  EXPECT_EQ(read(invoke("SequenceMask", {&x})[0]), xv) << "no lengths";
  grad_check_except("SequenceMask", {{T, B, R}, {B}}, {xv, {1, 3, 4}},
                    {{"use_sequence_length", "true"}}, {1});
}

TEST(SequenceLast, LengthsAndAxes) {
  auto xv = uniform(T * B * R, -1, 1, 702);
  std::vector<double> lens = {2, 4, 1};
  for (int axis : {0, 1}) {
    Shape s = axis == 0 ? Shape{T, B, R} : Shape{B, T, R};
    Arr x = make(s, xv, MXC_DTYPE_FLOAT64), l = make({B}, lens, MXC_DTYPE_FLOAT64);
    auto out = invoke("SequenceLast", {&x, &l},
                      {{"use_sequence_length", "true"},
                       {"axis", std::to_string(axis)}});
    EXPECT_EQ(out[0].shape(), Shape({B, R}));
    std::vector<double> want;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t r = 0; r < R; ++r)
        want.push_back(xv[at(axis, (int64_t)lens[b] - 1, b, r, T, B, R)]);
    EXPECT_EQ(read(out[0]), want) << "axis " << axis;
    auto all = invoke("SequenceLast", {&x}, {{"axis", std::to_string(axis)}});
    want.clear();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t r = 0; r < R; ++r)
        want.push_back(xv[at(axis, T - 1, b, r, T, B, R)]);
    EXPECT_EQ(read(all[0]), want);
  }
  grad_check_except("SequenceLast", {{B, T, R}, {B}}, {xv, {1, 3, 4}},
                    {{"use_sequence_length", "true"}, {"axis", "1"}}, {1});
  int rc = 0;
  Arr x = make({T, B, R}, xv), bad = make({B}, {1, 5, 2});
  // Length values are known only when the kernel runs: the error comes at
  // the wait on the output.
  auto o = invoke("SequenceLast", {&x, &bad}, {{"use_sequence_length", "true"}},
                  &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  rc = mxc_ndarray_wait_to_read(o[0].h);
  EXPECT_TRUE(rc == MXC_ERR_OPERATOR || rc == MXC_ERR_INVALID_ARGUMENT) << rc;
  EXPECT_NE(err().find("sequence_length[1]"), std::string::npos) << err();
  mxc_wait_all();
}

TEST(SequenceReverse, WithinLengths) {
  auto xv = uniform(T * B * R, -1, 1, 703);
  std::vector<double> lens = {2, 4, 3};
  Arr x = make({T, B, R}, xv, MXC_DTYPE_FLOAT64), l = make({B}, lens);
  auto out = invoke("SequenceReverse", {&x, &l}, {{"use_sequence_length", "true"}});
  auto want = xv;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < (int64_t)lens[b]; ++t)
      for (int64_t r = 0; r < R; ++r)
        want[at(0, t, b, r, T, B, R)] = xv[at(0, (int64_t)lens[b] - 1 - t, b, r, T, B, R)];
  EXPECT_EQ(read(out[0]), want);
  auto full = invoke("SequenceReverse", {&x});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t r = 0; r < R; ++r)
        want[at(0, t, b, r, T, B, R)] = xv[at(0, T - 1 - t, b, r, T, B, R)];
  EXPECT_EQ(read(full[0]), want);
  grad_check_except("SequenceReverse", {{T, B, R}, {B}}, {xv, lens},
                    {{"use_sequence_length", "true"}}, {1});
  int rc = 0;
  invoke("SequenceReverse", {&x}, {{"axis", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr l2 = make({2}, {1, 1});
  invoke("SequenceMask", {&x, &l2}, {{"use_sequence_length", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  Arr one = make({5}, uniform(5, 0, 1));
  invoke("SequenceMask", {&one}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
}

}  // namespace
