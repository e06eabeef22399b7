// Issue 15, class 1: element counts and byte sizes that overflow. Every
// operator of the registry is walked with huge values in each of its
// integer and shape parameters and with zero-size inputs whose other
// extents are huge; inference must either fail with a clean error or
// produce shapes that satisfy the shape invariant (checked here by an
// independent product), and running the operator must agree with
// inference. Graph JSON "__shape__" attributes, simple_bind shapes and
// Concat / stack / tile / repeat / one_hot / Reshape products are checked
// directly. Meant to run under --config=asan (ASan+UBSan with halt): a
// wrapped allocation, an out-of-bounds write or a signed overflow in
// shape arithmetic fails the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "op_walk.h"

// Huge requests must fail as MXC_ERR_OOM, not abort inside the sanitizer's
// allocator, under ASan and under TSan (the environment's ASAN_OPTIONS /
// TSAN_OPTIONS still override this).
extern "C" const char *__asan_default_options();
extern "C" __attribute__((visibility("default"))) const char *
__asan_default_options() {
  return "allocator_may_return_null=1";
}
extern "C" const char *__tsan_default_options();
extern "C" __attribute__((visibility("default"))) const char *
__tsan_default_options() {
  return "allocator_may_return_null=1";
}

namespace {

using hostile::Inferred;
using hostile::OpInfo;
using hostile::Params;
using Shape = std::vector<int64_t>;

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kP62 = int64_t{1} << 62;
constexpr int64_t kP60 = int64_t{1} << 60;

// Integers that overflow as extents, as products of two or three of them,
// or as the sum of an extent and a pad; negative ones that overflow when
// negated or subtracted from.
const char *const kHugeInts[] = {
    "9223372036854775807.0", "1e30.0",
    "9223372036854775807",  "-9223372036854775807", "4611686018427387904",
    "3037000500",           "4294967297",           "2147483648",
    "-2147483649",          "-4611686018427387904",
};

// Tuples: huge entries alone, beside small ones, and around the special
// reshape codes 0 / -1 / -2 / -3 / -4.
std::vector<std::string> HugeTuples() {
  std::vector<std::string> t;
  for (const char *h : kHugeInts) {
    std::string v(h);
    for (const std::string &s :
         {"(" + v + ")", "(" + v + "," + v + ")", "(2," + v + ")",
          "(" + v + ",2)", "(" + v + "," + v + "," + v + "," + v + ")",
          "(1,1," + v + "," + v + ")", "(0," + v + ")", "(-1," + v + ")",
          "(-2," + v + ")", "(-3," + v + ")", "(-4," + v + ",-1)",
          "(-4,-1," + v + ")", "(-4," + v + "," + v + ")",
          "(2,3,4," + v + ")"}) {
      t.push_back(s);
    }
  }
  return t;
}

bool IsIntParam(const hostile::Param &p) {
  return p.type == "int" || p.type == "int or None";
}

// The C API reported a failure properly: an error code and a message.
void ExpectCleanError(int rc, const std::string &ctx) {
  EXPECT_GT(rc, 0) << ctx;
  EXPECT_LE(rc, 64) << ctx;
  EXPECT_GT(std::strlen(mxc_last_error()), 0u) << ctx;
}

int64_t BytesOf(const std::vector<Shape> &shapes) {
  int64_t total = 0;
  for (const Shape &s : shapes) {
    int64_t n = 4;
    for (int64_t d : s) {
      if (__builtin_mul_overflow(n, d, &n)) return kMax;
    }
    if (__builtin_add_overflow(total, n, &total)) return kMax;
  }
  return total;
}

// Runs op imperatively on float32 arrays of the inferred argument shapes.
// Returns the code of invoke, or of the first wait when invoke succeeded;
// *outs gets the output shapes on success.
int Invoke(const OpInfo &op, const Params &params,
           const std::vector<Shape> &args, std::vector<Shape> *outs) {
  std::vector<mxc_ndarray> in;
  int rc = MXC_OK;
  for (const Shape &s : args) {
    mxc_ndarray a = nullptr;
    rc = mxc_ndarray_create(s.data(), static_cast<int>(s.size()),
                            MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &a);
    if (rc != MXC_OK) break;
    in.push_back(a);
    std::vector<float> ones(static_cast<size_t>(BytesOf({s}) / 4), 1.0f);
    mxc_ndarray_copy_from_host(a, ones.data(), ones.size() * 4);
  }
  int n_out = hostile::NumOutputs(op, params);
  std::vector<mxc_ndarray> out(static_cast<size_t>(n_out > 0 ? n_out : 0));
  if (rc == MXC_OK && n_out >= 0) {
    std::vector<const char *> k, v;
    for (const auto &kv : params) {
      k.push_back(kv.first.c_str());
      v.push_back(kv.second.c_str());
    }
    rc = mxc_op_invoke(op.op, k.data(), v.data(), static_cast<int>(k.size()),
                       in.data(), static_cast<int>(in.size()), out.data(),
                       n_out, nullptr);
  }
  for (mxc_ndarray o : out) {
    if (!o) continue;
    int w = mxc_ndarray_wait_to_read(o);
    if (rc == MXC_OK) rc = w;
    int ndim = 0;
    const int64_t *dims = nullptr;
    mxc_ndarray_shape(o, &ndim, &dims);
    outs->emplace_back(dims, dims + ndim);
    mxc_ndarray_free(o);
  }
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  return rc;
}

// What every case checks: inference fails cleanly or gives shapes under
// the invariant; when the values are small the operator runs and gives
// the inferred shapes; when they are enormous running it fails cleanly.
void CheckCase(const OpInfo &op, const Params &params, const Shape &shape,
               int n_given) {
  std::string ctx = op.name + " " + hostile::ParamsStr(params) + "input " +
                    hostile::ShapeStr(shape) + " x" + std::to_string(n_given);
  Inferred r;
  int rc = hostile::InferOp(op, params, shape, n_given, &r);
  if (getenv("HOSTILE_TRACE")) {
    fprintf(stderr, "%s: %d %s\n", ctx.c_str(), rc,
            rc ? mxc_last_error() : "");
  }
  if (rc != MXC_OK) {
    ExpectCleanError(rc, ctx);
    return;
  }
  for (const Shape &s : r.args) {
    EXPECT_TRUE(hostile::ShapeFits(s, 1)) << ctx << ": argument "
                                          << hostile::ShapeStr(s);
  }
  for (const Shape &s : r.outs) {
    EXPECT_TRUE(hostile::ShapeFits(s, 1)) << ctx << ": output "
                                          << hostile::ShapeStr(s);
  }
  if (!r.complete || op.variadic) return;
  int64_t in_bytes = BytesOf(r.args), out_bytes = BytesOf(r.outs);
  if (in_bytes > (int64_t{1} << 24)) return;  // inputs too big to make
  std::vector<Shape> got;
  if (out_bytes <= (int64_t{1} << 24)) {
    rc = Invoke(op, params, r.args, &got);
    if (rc != MXC_OK) return;  // e.g. a dtype the kernel does not take
    EXPECT_EQ(got, r.outs) << ctx;
  } else if (out_bytes >= (int64_t{1} << 50)) {
    rc = Invoke(op, params, r.args, &got);
    EXPECT_NE(rc, MXC_OK) << ctx << ": " << out_bytes << " output bytes";
    if (rc != MXC_OK) ExpectCleanError(rc, ctx);
  }
}

const std::vector<Shape> kSmallInputs = {{2, 3}, {2, 3, 4, 5}, {4}};

TEST(ShapeOverflow, EveryIntegerParameterWithHugeValues) {
  int cases = 0;
  for (const OpInfo &op : hostile::AllOps()) {
    Params base = hostile::BaseParams(op);
    for (const hostile::Param &p : op.params) {
      if (!IsIntParam(p)) continue;
      for (const char *v : kHugeInts) {
        Params params = hostile::With(base, p.name, v);
        for (const Shape &s : kSmallInputs) {
          CheckCase(op, params, s, 1);
          CheckCase(op, params, s, 64);
          cases += 2;
        }
      }
    }
  }
  EXPECT_GT(cases, 500);
}

TEST(ShapeOverflow, EveryShapeParameterWithHugeTuples) {
  int cases = 0;
  std::vector<std::string> tuples = HugeTuples();
  for (const OpInfo &op : hostile::AllOps()) {
    Params base = hostile::BaseParams(op);
    for (const hostile::Param &p : op.params) {
      if (p.type != "Shape(tuple)") continue;
      for (const std::string &v : tuples) {
        Params params = hostile::With(base, p.name, v);
        for (const Shape &s : kSmallInputs) {
          CheckCase(op, params, s, 1);
          CheckCase(op, params, s, 64);
          cases += 2;
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

// Zero-size inputs whose other extents are huge are valid (no element);
// what operators derive from them (a reduction dropping the zero axis, a
// transpose's strides, weights of a layer) must still fit or fail cleanly.
TEST(ShapeOverflow, ZeroBesideHugeExtentsThroughEveryOperator) {
  const std::vector<Shape> shapes = {
      {0, kP62},       {kP62, 0},        {0, kP60},      {kP60, 0},
      {1, 0, kP60},    {0, 1 << 30, 1 << 30}, {kP60, 0, 1}, {0, kMax},
      {2, 0, 3, kP60}, {0, 3, 1 << 20, 1 << 20}};
  for (const OpInfo &op : hostile::AllOps()) {
    Params base = hostile::BaseParams(op);
    for (const Shape &s : shapes) {
      CheckCase(op, base, s, 1);
      CheckCase(op, base, s, 64);
    }
  }
}

// ---- targeted products: each overflows only as a whole ----

// Infers op on the given argument shapes; returns the code.
int InferShapes(const std::string &name, const Params &params,
                const std::vector<Shape> &args, Shape *out_shape) {
  OpInfo op;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op.op), MXC_OK) << name;
  op.name = name;
  std::vector<mxc_symbol> vars(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    mxc_symbol_variable(("v" + std::to_string(i)).c_str(), &vars[i]);
  }
  std::vector<const char *> k, v;
  for (const auto &kv : params) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  mxc_symbol sym = nullptr;
  int rc = mxc_symbol_create(op.op, k.data(), v.data(),
                             static_cast<int>(k.size()), "n", nullptr,
                             vars.data(), static_cast<int>(vars.size()), &sym);
  for (mxc_symbol x : vars) mxc_symbol_free(x);
  if (rc != MXC_OK) return rc;
  std::vector<int> ndims;
  std::vector<int64_t> dims;
  for (const Shape &s : args) {
    ndims.push_back(static_cast<int>(s.size()));
    dims.insert(dims.end(), s.begin(), s.end());
  }
  mxc_infer inf = nullptr;
  rc = mxc_symbol_infer_shape(sym, static_cast<int>(args.size()), nullptr,
                              ndims.data(), dims.data(), 0, &inf);
  if (rc == MXC_OK && out_shape) {
    int ndim = 0;
    int64_t d[MXC_MAX_NDIM];
    mxc_infer_shape(inf, MXC_INFER_OUTPUTS, 0, &ndim, d);
    out_shape->assign(d, d + ndim);
  }
  mxc_infer_free(inf);
  mxc_symbol_free(sym);
  return rc;
}

void ExpectShapeError(int rc, const std::string &ctx) {
  EXPECT_EQ(rc, MXC_ERR_SHAPE) << ctx << ": " << mxc_last_error();
}

TEST(ShapeOverflow, ConcatStackAndSplitGradientSums) {
  Shape half = {kP62, 1};
  ExpectShapeError(InferShapes("Concat", {{"num_args", "2"}, {"dim", "0"}},
                               {half, half}, nullptr),
                   "Concat of two 2^62 extents");
  Shape got;
  ASSERT_EQ(InferShapes("Concat", {{"num_args", "2"}, {"dim", "0"}},
                        {{kP62 - 1, 1}, {kP62, 1}}, &got),
            MXC_OK) << mxc_last_error();
  EXPECT_EQ(got, (Shape{kMax, 1}));  // (2^62 - 1) + 2^62
  // Three (2^61, 2) arrays stack into 3 * 2^62 elements.
  ExpectShapeError(InferShapes("stack", {{"num_args", "3"}, {"axis", "0"}},
                               {{int64_t{1} << 61, 2}, {int64_t{1} << 61, 2},
                                {int64_t{1} << 61, 2}},
                               nullptr),
                   "stack");
  // Zero-size parts stack as long as the non-zero extents still fit: the
  // new axis counts (2 * 2^61 fits, 2 * 2^62 does not).
  ASSERT_EQ(InferShapes("stack", {{"num_args", "2"}, {"axis", "0"}},
                        {{0, kP62 / 2}, {0, kP62 / 2}}, &got),
            MXC_OK) << mxc_last_error();
  EXPECT_EQ(got, (Shape{2, 0, kP62 / 2}));
  ExpectShapeError(InferShapes("stack", {{"num_args", "2"}, {"axis", "0"}},
                               {{0, kP62}, {0, kP62}}, nullptr),
                   "stack of (0, 2^62)");
}

TEST(ShapeOverflow, TileRepeatOneHotAndBroadcastProducts) {
  ExpectShapeError(InferShapes("tile", {{"reps", "(4294967296,4294967296)"}},
                               {{2, 2}}, nullptr),
                   "tile");
  ExpectShapeError(
      InferShapes("repeat", {{"repeats", "4611686018427387904"}}, {{2, 3}},
                  nullptr),
      "repeat flattened");
  ExpectShapeError(InferShapes("repeat",
                               {{"repeats", "3074457345618258603"},
                                {"axis", "1"}},
                               {{2, 3}}, nullptr),
                   "repeat along an axis");
  ExpectShapeError(InferShapes("one_hot", {{"depth", "4611686018427387904"}},
                               {{4}}, nullptr),
                   "one_hot");
  ExpectShapeError(InferShapes("broadcast_to",
                               {{"shape", "(4294967296,4294967296)"}},
                               {{1, 1}}, nullptr),
                   "broadcast_to");
  ExpectShapeError(
      InferShapes("_zeros", {{"shape", "(4294967296,4294967296)"}}, {},
                  nullptr),
      "_zeros");
}

TEST(ShapeOverflow, ReshapeTargetsAndSpecialCodes) {
  const std::vector<std::string> bad = {
      "(4294967296,4294967296)", "(-1,4294967296,4294967296)",
      "(-4,4294967296,4294967296,-2)", "(9223372036854775807,2)",
      "(0,9223372036854775807,9223372036854775807)"};
  for (const std::string &t : bad) {
    int rc = InferShapes("Reshape", {{"shape", t}}, {{2, 3}}, nullptr);
    ExpectShapeError(rc, "Reshape " + t);
  }
  // A zero-size input keeps its huge extent through the codes.
  Shape got;
  ASSERT_EQ(InferShapes("Reshape", {{"shape", "(-1,4611686018427387904)"}},
                        {{0, kP62}}, &got),
            MXC_OK) << mxc_last_error();
  EXPECT_EQ(got, (Shape{0, kP62}));
  ASSERT_EQ(InferShapes("Reshape", {{"shape", "(-3,-2)"}}, {{kP60, 4, 0}},
                        &got),
            MXC_OK) << mxc_last_error();
  EXPECT_EQ(got, (Shape{4 * kP60, 0}));
  ExpectShapeError(InferShapes("Reshape", {{"shape", "(-3,-2)"}},
                               {{kP60, 8, 0}}, nullptr),
                   "-3 merging beyond int64");
  ASSERT_EQ(InferShapes("Flatten", {}, {{0, kP60, 4}}, &got), MXC_OK);
  EXPECT_EQ(got, (Shape{0, 4 * kP60}));
}

// A reduction that drops the zero axis of (0, 2^62) gives 2^62 elements:
// representable as a count (inference accepts it), not as float32 bytes
// (creating the array fails cleanly, before any kernel runs).
TEST(ShapeOverflow, ZeroAxisDroppedByReduction) {
  Shape got;
  ASSERT_EQ(InferShapes("sum", {{"axis", "0"}}, {{0, kP62}}, &got), MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(got, (Shape{kP62}));
  Shape zs = {0, kP62};
  mxc_ndarray a = nullptr, out = nullptr;
  ASSERT_EQ(mxc_ndarray_create(zs.data(), 2, MXC_DTYPE_INT8, MXC_DEVICE_CPU, 0,
                               0, &a),
            MXC_OK)
      << mxc_last_error();
  mxc_op sum = nullptr;
  ASSERT_EQ(mxc_op_find("sum", &sum), MXC_OK);
  const char *k[] = {"axis"}, *v[] = {"0"};
  int rc = mxc_op_invoke(sum, k, v, 1, &a, 1, &out, 1, nullptr);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out);
  EXPECT_NE(rc, MXC_OK);
  ExpectCleanError(rc, "sum over the zero axis");
  mxc_ndarray_free(out);
  mxc_ndarray_free(a);
}

TEST(ShapeOverflow, ArrayCreationChecksBytesForTheDtype) {
  Shape count_fits = {int64_t{1} << 61};  // 2^61 float64 = 2^64 bytes
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(count_fits.data(), 1, MXC_DTYPE_FLOAT64,
                               MXC_DEVICE_CPU, 0, 1, &a),
            MXC_ERR_SHAPE);
  // The same count reached through an operator: broadcast_to of a float64
  // scalar-like array, then _zeros with a float64 dtype.
  Shape one = {1};
  ASSERT_EQ(mxc_ndarray_create(one.data(), 1, MXC_DTYPE_FLOAT64,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK);
  mxc_op bto = nullptr;
  ASSERT_EQ(mxc_op_find("broadcast_to", &bto), MXC_OK);
  const char *k[] = {"shape"}, *v[] = {"(2305843009213693952)"};
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_op_invoke(bto, k, v, 1, &a, 1, &out, 1, nullptr),
            MXC_ERR_SHAPE)
      << mxc_last_error();
  EXPECT_EQ(out, nullptr);
  mxc_ndarray_free(a);
  // Zero elements beside huge extents: no bytes, a valid array.
  Shape zero = {0, kP62};
  ASSERT_EQ(mxc_ndarray_create(zero.data(), 2, MXC_DTYPE_INT8,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << mxc_last_error();
  mxc_ndarray_free(a);
  // The shape invariant counts the non-zero extents only.
  Shape wide = {0, kP62, 4};
  EXPECT_EQ(mxc_ndarray_create(wide.data(), 3, MXC_DTYPE_INT8, MXC_DEVICE_CPU,
                               0, 0, &a),
            MXC_ERR_SHAPE);
}

// CSR's indptr holds rows + 1 indices: (2^62, 0) int8 values need no
// bytes but its indptr needs 2^65 bytes, which must not wrap to 8.
TEST(ShapeOverflow, SparseIndexBlocksAreChecked) {
  Shape s = {kP62, 0};
  mxc_ndarray a = nullptr;
  int rc = mxc_ndarray_create_csr(s.data(), MXC_DTYPE_INT8, MXC_DTYPE_INT64,
                                  nullptr, nullptr, nullptr, 0, MXC_DEVICE_CPU,
                                  0, &a);

  EXPECT_NE(rc, MXC_OK);
  ExpectCleanError(rc, "csr (2^62, 0)");
  EXPECT_EQ(a, nullptr);
  mxc_ndarray_free(a);
}

// A model file's variable attribute is outside input like any other.
TEST(ShapeOverflow, GraphJsonShapeAttribute) {
  const std::string json =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"attrs\": "
      "{\"__shape__\": \"(4294967296, 4294967296)\"}, \"inputs\": []}, "
      "{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[0, 0, 0]]}], "
      "\"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2], "
      "\"heads\": [[1, 0, 0]], "
      "\"attrs\": {\"mxnet_version\": [\"int\", 10900]}}";
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(json.c_str(), &sym), MXC_OK)
      << mxc_last_error();
  mxc_infer inf = nullptr;
  EXPECT_EQ(mxc_symbol_infer_shape(sym, 0, nullptr, nullptr, nullptr, 1, &inf),
            MXC_ERR_SHAPE);
  EXPECT_NE(std::string(mxc_last_error()).find("'x'"), std::string::npos)
      << mxc_last_error();
  mxc_executor ex = nullptr;
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 0, nullptr,
                                     nullptr, nullptr, nullptr, MXC_REQ_WRITE,
                                     0, nullptr, nullptr, 0, &ex),
            MXC_ERR_SHAPE)
      << mxc_last_error();
  EXPECT_EQ(ex, nullptr);
  mxc_symbol_free(sym);
}

// simple_bind and reshape take shapes from the caller: huge ones fail
// cleanly; zero-size ones beside huge extents bind and run.
TEST(ShapeOverflow, SimpleBindShapes) {
  mxc_symbol x = nullptr, fc = nullptr;
  ASSERT_EQ(mxc_symbol_variable("x", &x), MXC_OK);
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("FullyConnected", &op), MXC_OK);
  const char *k[] = {"num_hidden"}, *v[] = {"4"};
  ASSERT_EQ(mxc_symbol_create(op, k, v, 1, "fc", nullptr, &x, 1, &fc), MXC_OK);
  const char *names[] = {"x"};
  int ndims[] = {2};
  mxc_executor ex = nullptr;
  int64_t huge[] = {4294967296, 4294967296};
  EXPECT_EQ(mxc_executor_simple_bind(fc, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     huge, nullptr, MXC_REQ_WRITE, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_ERR_SHAPE)
      << mxc_last_error();
  // The data has no element, but the weight (4, 2^62) is too large for
  // float32 bytes: the weight's array cannot be made.
  int64_t zero_wide[] = {0, kP62};
  int rc = mxc_executor_simple_bind(fc, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                    zero_wide, nullptr, MXC_REQ_WRITE, 0,
                                    nullptr, nullptr, 0, &ex);
  EXPECT_NE(rc, MXC_OK);
  ExpectCleanError(rc, "simple_bind FullyConnected (0, 2^62)");
  EXPECT_EQ(ex, nullptr);
  // relu over (2^60, 0): zero elements everywhere, binds and runs.
  mxc_symbol r = nullptr;
  ASSERT_EQ(mxc_op_find("relu", &op), MXC_OK);
  ASSERT_EQ(mxc_symbol_create(op, nullptr, nullptr, 0, "r", nullptr, &x, 1, &r),
            MXC_OK);
  int64_t tall[] = {kP60, 0};
  ASSERT_EQ(mxc_executor_simple_bind(r, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     tall, nullptr, MXC_REQ_WRITE, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << mxc_last_error();
  EXPECT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_OK) << mxc_last_error();
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << mxc_last_error();
  int64_t wide[] = {kP62, 3};
  mxc_executor ex2 = nullptr;
  EXPECT_EQ(mxc_executor_reshape(ex, 1, names, ndims, wide, &ex2),
            MXC_ERR_SHAPE)
      << mxc_last_error();
  EXPECT_EQ(ex2, nullptr);
  mxc_executor_free(ex);
  mxc_symbol_free(r);
  mxc_symbol_free(fc);
  mxc_symbol_free(x);
}

}  // namespace
