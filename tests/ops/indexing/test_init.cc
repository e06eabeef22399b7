// Initialization operators (_zeros, _ones, _full, _arange, _eye and the
// _like forms) for many dtypes and shapes, including zero-size and scalar
// ones, against references written here; write modes; bad parameters.
#include "tests/ops/indexing/indexing_test_util.h"

using namespace mxct;

namespace {

const int kAllDtypes[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64,
                          MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16,
                          MXC_DTYPE_INT32,   MXC_DTYPE_INT64,
                          MXC_DTYPE_UINT8,   MXC_DTYPE_INT8,
                          MXC_DTYPE_BOOL};

const std::pair<Shape, const char *> kShapes[] = {
    {{2, 3}, "(2,3)"},
    {{0}, "(0,)"},
    {{2, 0, 3}, "[2,0,3]"},
    {{}, "()"},
    {{1, 1, 1, 1, 1, 1, 1, 2}, "(1,1,1,1,1,1,1,2)"},
    {{17}, "17"},
};

TEST(Fill, ZerosOnesFullEveryDtypeAndShape) {
  struct Op {
    const char *name;
    double value;
  };
  const Op ops[] = {{"_zeros", 0}, {"zeros", 0}, {"_ones", 1},
                    {"ones", 1},   {"_full", 3.25}, {"full", 3.25}};
  for (const auto &op : ops) {
    for (const auto &s : kShapes) {
      for (int dt : kAllDtypes) {
        SCOPED_TRACE(std::string(op.name) + " " + s.second + " " +
                     mxc_dtype_name(dt));
        Params p = {{"shape", s.second}, {"dtype", mxc_dtype_name(dt)}};
        if (op.value == 3.25) p.push_back({"value", "3.25"});
        auto out = invoke(op.name, {}, p);
        ASSERT_EQ(out.size(), 1u) << err();
        EXPECT_EQ(out[0].shape(), s.first);
        EXPECT_EQ(out[0].dtype(), dt);
        int dev = -1, id = -1;
        ASSERT_EQ(mxc_ndarray_device(out[0].h, &dev, &id), MXC_OK);
        EXPECT_EQ(dev, MXC_DEVICE_CPU);
        std::vector<double> want(numel(s.first), op.value);
        EXPECT_EQ(read(out[0]), as_dtype(want, dt));
      }
    }
  }
}

TEST(Fill, DefaultDtypeIsFloat32) {
  auto out = invoke("_full", {}, {{"shape", "(2)"}, {"value", "-1.5"}});
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT32);
  EXPECT_EQ(read(out[0]), std::vector<double>({-1.5, -1.5}));
  out = invoke("zeros", {}, {{"shape", "(1)"}, {"dtype", "None"}});
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT32);
}

TEST(Fill, WriteModes) {
  Arr o = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("ones", &op), MXC_OK);
  const char *k[] = {"shape", "dtype"}, *v[] = {"(3)", "float64"};
  int req = MXC_REQ_ADD;
  ASSERT_EQ(mxc_op_invoke(op, k, v, 2, nullptr, 0, &o.h, 1, &req), MXC_OK)
      << err();
  EXPECT_EQ(read(o), std::vector<double>({2, 3, 4}));
  req = MXC_REQ_NULL;
  ASSERT_EQ(mxc_op_invoke(op, k, v, 2, nullptr, 0, &o.h, 1, &req), MXC_OK);
  EXPECT_EQ(read(o), std::vector<double>({2, 3, 4}));
  // An output of another dtype than the parameter says is rejected.
  Arr f = make({3}, {0, 0, 0}, MXC_DTYPE_FLOAT32);
  EXPECT_EQ(mxc_op_invoke(op, k, v, 2, nullptr, 0, &f.h, 1, nullptr),
            MXC_ERR_DTYPE);
  EXPECT_NE(err().find("dtype parameter"), std::string::npos) << err();
  EXPECT_EQ(read(f), std::vector<double>({0, 0, 0}));
}

TEST(Fill, BadInput) {
  expect_error("_zeros", {}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"_zeros", "required parameter 'shape' is missing"});
  expect_error("ones", {}, {{"shape", "None"}}, MXC_ERR_INVALID_ARGUMENT,
               {"_ones", "'shape'", "not None"});
  expect_error("_ones", {}, {{"shape", "(2,-3)"}}, MXC_ERR_SHAPE,
               {"_ones", "'shape'", "-3"});
  expect_error("_ones", {}, {{"shape", "(1,1,1,1,1,1,1,1,1)"}}, MXC_ERR_SHAPE,
               {"_ones", "'shape'", "ndim 9"});
  expect_error("_zeros", {}, {{"shape", "(2)"}, {"dtype", "float8"}},
               MXC_ERR_INVALID_ARGUMENT, {"_zeros", "'dtype'", "float8"});
  expect_error("_full", {}, {{"shape", "(2)"}}, MXC_ERR_INVALID_ARGUMENT,
               {"_full", "required parameter 'value' is missing"});
  expect_error("_zeros", {}, {{"shape", "(2)"}, {"value", "1"}},
               MXC_ERR_INVALID_ARGUMENT,
               {"_zeros", "unknown parameter 'value'"});
  Arr a = make({2}, {1, 2});
  expect_error("_zeros", {&a}, {{"shape", "(2)"}}, MXC_ERR_INVALID_ARGUMENT,
               {"got 1 inputs; expected 0"});
}

// ---- _arange ----

struct ArangeCase {
  Params p;
  double start, stop, step;
  int64_t repeat;
  int dtype;
};

// MXNet's rule: computed in the output dtype from start and step converted
// to it (integer dtypes truncate them).
std::vector<double> ref_arange(const ArangeCase &c) {
  double n = std::ceil((c.stop - c.start) / c.step);
  if (n < 0) n = 0;
  bool integral = c.dtype != MXC_DTYPE_FLOAT32 &&
                  c.dtype != MXC_DTYPE_FLOAT64 && c.dtype != MXC_DTYPE_FLOAT16;
  double start = integral ? std::trunc(c.start) : c.start;
  double step = integral ? std::trunc(c.step) : c.step;
  std::vector<double> v;
  for (int64_t i = 0; i < (int64_t)n * c.repeat; ++i)
    v.push_back(start + (double)(i / c.repeat) * step);
  return as_dtype(v, c.dtype);
}

TEST(Arange, MatchesReference) {
  const ArangeCase cases[] = {
      {{{"start", "2"}, {"stop", "11"}, {"step", "3"}}, 2, 11, 3, 1,
       MXC_DTYPE_FLOAT32},
      {{{"start", "5"}}, 0, 5, 1, 1, MXC_DTYPE_FLOAT32},
      {{{"start", "10"}, {"stop", "0"}, {"step", "-2.5"}, {"dtype", "float64"}},
       10, 0, -2.5, 1, MXC_DTYPE_FLOAT64},
      {{{"start", "0"}, {"stop", "3"}, {"repeat", "2"}}, 0, 3, 1, 2,
       MXC_DTYPE_FLOAT32},
      {{{"start", "1"}, {"stop", "0"}}, 1, 0, 1, 1, MXC_DTYPE_FLOAT32},
      {{{"start", "0"}, {"stop", "5"}, {"step", "1.5"}, {"dtype", "int32"}},
       0, 5, 1.5, 1, MXC_DTYPE_INT32},
      {{{"start", "-3"}, {"stop", "3"}, {"step", "2"}, {"dtype", "int64"},
        {"repeat", "3"}},
       -3, 3, 2, 3, MXC_DTYPE_INT64},
      {{{"start", "0.5"}, {"stop", "3"}, {"step", "0.25"},
        {"dtype", "float16"}},
       0.5, 3, 0.25, 1, MXC_DTYPE_FLOAT16},
      {{{"start", "0"}, {"stop", "1"}, {"step", "0.1"}, {"dtype", "float64"}},
       0, 1, 0.1, 1, MXC_DTYPE_FLOAT64},
      {{{"start", "4"}, {"stop", "nan"}, {"dtype", "uint8"}}, 0, 4, 1, 1,
       MXC_DTYPE_UINT8},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(std::to_string(c.start) + ".." + std::to_string(c.stop));
    for (const char *name : {"_arange", "arange"}) {
      auto out = invoke(name, {}, c.p);
      ASSERT_EQ(out.size(), 1u) << err();
      EXPECT_EQ(out[0].dtype(), c.dtype);
      auto want = ref_arange(c);
      EXPECT_EQ(out[0].shape(), Shape({(int64_t)want.size()}));
      auto got = read(out[0]);
      ASSERT_EQ(got.size(), want.size());
      double tol = c.dtype == MXC_DTYPE_FLOAT32 ? 1e-6 : 1e-12;
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << i;
    }
  }
}

TEST(Arange, BadInput) {
  expect_error("_arange", {}, {{"start", "0"}, {"stop", "3"}, {"step", "0"}},
               MXC_ERR_INVALID_ARGUMENT, {"_arange", "step", "nonzero"});
  expect_error("_arange", {}, {{"stop", "3"}}, MXC_ERR_INVALID_ARGUMENT,
               {"_arange", "required parameter 'start' is missing"});
  expect_error("_arange", {}, {{"start", "3"}, {"repeat", "0"}},
               MXC_ERR_INVALID_ARGUMENT, {"_arange", "'repeat'"});
  expect_error("_arange", {}, {{"start", "inf"}}, MXC_ERR_INVALID_ARGUMENT,
               {"_arange", "finite"});
  expect_error("_arange", {}, {{"start", "3"}, {"infer_range", "true"}},
               MXC_ERR_UNSUPPORTED, {"_arange", "infer_range"});
  expect_error("_arange", {}, {{"start", "0"}, {"stop", "1e30"}},
               MXC_ERR_SHAPE, {"_arange", "too many elements"});
}

// ---- _eye ----

TEST(Eye, MatchesReference) {
  struct C {
    Params p;
    int64_t n, m, k;
  };
  const C cases[] = {
      {{{"N", "3"}}, 3, 3, 0},
      {{{"N", "3"}, {"M", "4"}, {"k", "1"}}, 3, 4, 1},
      {{{"N", "4"}, {"M", "2"}, {"k", "-2"}}, 4, 2, -2},
      {{{"N", "0"}}, 0, 0, 0},
      {{{"N", "2"}, {"k", "5"}}, 2, 2, 5},
      {{{"N", "2"}, {"M", "0"}, {"k", "-1"}}, 2, 2, -1},
  };
  for (const auto &c : cases) {
    for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, MXC_DTYPE_FLOAT16,
                   MXC_DTYPE_BOOL}) {
      Params p = c.p;
      p.push_back({"dtype", mxc_dtype_name(dt)});
      for (const char *name : {"_eye", "eye"}) {
        auto out = invoke(name, {}, p);
        ASSERT_EQ(out.size(), 1u) << err();
        EXPECT_EQ(out[0].shape(), Shape({c.n, c.m}));
        EXPECT_EQ(out[0].dtype(), dt);
        std::vector<double> want;
        for (int64_t i = 0; i < c.n; ++i)
          for (int64_t j = 0; j < c.m; ++j) want.push_back(j - i == c.k);
        EXPECT_EQ(read(out[0]), want);
      }
    }
  }
}

TEST(Eye, BadInput) {
  expect_error("_eye", {}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"_eye", "required parameter 'N' is missing"});
  expect_error("_eye", {}, {{"N", "-1"}}, MXC_ERR_INVALID_ARGUMENT,
               {"_eye", "'N'", "out of range"});
  expect_error("_eye", {}, {{"N", "2"}, {"M", "-2"}}, MXC_ERR_INVALID_ARGUMENT,
               {"_eye", "'M'", "out of range"});
  expect_error("_eye", {}, {{"N", "4000000000"}, {"M", "4000000000"}},
               MXC_ERR_SHAPE, {"_eye", "overflows"});
}

// ---- zeros_like, ones_like ----

TEST(Like, SameShapeAndDtypeNoGradient) {
  for (const auto &s : kShapes) {
    for (int dt : kAllDtypes) {
      auto v = as_dtype(uniform(numel(s.first), 2, 9, 4), dt);
      Arr a = make(s.first, v, dt);
      for (const char *name : {"zeros_like", "ones_like"}) {
        auto out = invoke(name, {&a});
        ASSERT_EQ(out.size(), 1u) << err();
        EXPECT_EQ(out[0].shape(), s.first);
        EXPECT_EQ(out[0].dtype(), dt);
        double want = std::string(name) == "zeros_like" ? 0 : 1;
        EXPECT_EQ(read(out[0]),
                  std::vector<double>(numel(s.first), want));
      }
      EXPECT_EQ(read(a), v);  // the input is left alone
    }
  }
  for (const char *name : {"zeros_like", "ones_like"}) {
    auto g = grads_of(name, {{2, 2}}, {{1, 2, 3, 4}}, {}, {{1, 1, 1, 1}});
    ASSERT_EQ(g.has.size(), 1u);
    EXPECT_FALSE(g.has[0]);
  }
  expect_error("zeros_like", {}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"got 0 inputs; expected 1"});
}

}  // namespace

TEST(InitExtra, ArangeAcceptsExplicitNoneStop) {
  auto out = mxct::invoke("arange", {}, {{"start", "3"}, {"stop", "None"}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(mxct::read(out[0]), std::vector<double>({0, 1, 2}));
}
