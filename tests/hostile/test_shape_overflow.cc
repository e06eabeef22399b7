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
#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "op_walk.h"

// Huge requests must fail as MXC_ERR_OOM, not abort inside the sanitizer's
// allocator (the environment's ASAN_OPTIONS still override this).
extern "C" const char *__asan_default_options();
extern "C" const char *__asan_default_options() {
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

}  // namespace
