// Conformance cases of backends/cuda/unary.h: the unary math operators
// and their _backward_ operators on the GPU against the CPU, float32,
// float16 and bfloat16, write and add modes (GPU outputs poisoned before
// a write), shapes of 1031, 42 and 0 elements. Inputs are drawn from each
// operator's domain, a quarter of them multiples of 0.5 (the rounding
// operators' ties, zeros); a backward case reads the CPU forward's output
// as its `output` input, on both devices.
//
// Tolerances (float32, in ulps of the larger of the CPU's value and the
// output's value before an add):
// - 0 (bitwise) where both devices do the same IEEE operations: sign,
//   softsign, sqrt, rsqrt, reciprocal, degrees, radians, the rounding
//   operators, logical_not, and the gradients that are polynomials of x
//   and y (or constants): the output y is an input there, the same bits on
//   both devices.
// - CUDA's documented maximum error of the float function (CUDA C
//   Programming Guide, "Mathematical Functions": expm1f, logf, log1pf,
//   log2f, cbrtf 1; expf, log10f, sinf, cosf, asinf, acosf, atanf, coshf,
//   erff 2; sinhf, asinhf, atanhf 3; tanf, acoshf 4) plus 2 for glibc's
//   float functions (within 1 ulp here) and the rounding of a product or
//   sum after them; for the gradients that call one (sin, cos, sinh,
//   cosh, erf, softrelu) the same plus 1 for ograd's product.
// - sigmoid, tanh, exp: 6 forward (the CPU's float32 uses core/op/vmath.h's
//   vectorized approximations, "within a few ulp" of libm, the GPU CUDA's
//   function) and 3 backward (vmath's gradient multiplies in another
//   order: g * y * (1 - y) against g * (y * (1 - y))); softrelu 6 (exp
//   then log1p).
// float16 and bfloat16 compute in double on both devices (glibc's and
// CUDA's double functions, within 2 ulps of double) and round to the
// dtype: bitwise but for a double result within those ulps of a rounding
// boundary, so 1 ulp of the dtype where a libm function is involved, 0
// elsewhere.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/half_test_util.h"

namespace {

using mxct::LastError;
using Vec = std::vector<float>;
using Bytes = std::vector<uint8_t>;
using Dims = std::vector<int64_t>;

// One operator: its inputs' domain, float32 ulps forward and backward
// (-1 when the row does not exist: abs, negative, relu and square's
// forwards are elementwise.h's, compared by the generic case).
struct UnaryCase {
  const char *op;
  float lo, hi;
  int fwd_ulps, bwd_ulps;
};

const UnaryCase kUnary[] = {
    {"abs", -4, 4, -1, 0},
    {"negative", -4, 4, -1, 0},
    {"relu", -4, 4, -1, 0},
    {"square", -4, 4, -1, 0},
    {"sign", -4, 4, 0, 0},
    {"sigmoid", -10, 10, 6, 3},
    {"tanh", -10, 10, 6, 3},
    {"softsign", -10, 10, 0, 0},
    {"softrelu", -30, 30, 6, 5},
    {"exp", -20, 20, 6, 3},
    {"expm1", -5, 5, 3, 0},
    {"log", 1e-3f, 100, 3, 0},
    {"log1p", -0.9f, 10, 3, 0},
    {"log2", 1e-3f, 100, 3, 0},
    {"log10", 1e-3f, 100, 4, 0},
    {"sqrt", 0, 100, 0, 0},
    {"rsqrt", 1e-3f, 100, 0, 0},
    {"cbrt", -100, 100, 3, 0},
    {"reciprocal", -4, 4, 0, 0},
    {"sin", -10, 10, 4, 5},
    {"cos", -10, 10, 4, 5},
    {"tan", -1.5f, 1.5f, 6, 0},
    {"arcsin", -0.99f, 0.99f, 4, 0},
    {"arccos", -0.99f, 0.99f, 4, 0},
    {"arctan", -10, 10, 4, 0},
    {"sinh", -10, 10, 5, 5},
    {"cosh", -10, 10, 4, 6},
    {"arcsinh", -100, 100, 5, 0},
    {"arccosh", 1.01f, 100, 6, 0},
    {"arctanh", -0.99f, 0.99f, 5, 0},
    {"degrees", -10, 10, 0, 0},
    {"radians", -10, 10, 0, 0},
    {"floor", -4, 4, 0, 0},
    {"ceil", -4, 4, 0, 0},
    {"round", -4, 4, 0, 0},
    {"rint", -4, 4, 0, 0},
    {"trunc", -4, 4, 0, 0},
    {"fix", -4, 4, 0, 0},
    {"erf", -4, 4, 4, 5},
    {"logical_not", -2, 2, 0, 0},
    // core/op/special_hd.h's erfinv and digamma on both devices, over
    // each device's libm: erfinv's double result differs by a few double
    // ulps (erf, exp, log), so the floats by at most one; gamma is
    // CUDA's tgammaf (5 ulps by CUDA's guide) against glibc's; gammaln
    // CUDA's double lgamma (4 ulps) rounded to float. The gradients: the
    // double digamma, or expf, times the float output.
    {"erfinv", -0.99f, 0.99f, 2, 4},
    {"gamma", 0.1f, 6, 8, 8},
    {"gammaln", 0.1f, 10, 2, 4},
};

const int kDtypes[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16,
                       MXC_DTYPE_BFLOAT16};
const Dims kShapes[] = {{1031}, {2, 3, 7}, {0}};

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// The domain's values, a quarter of them multiples of 0.5 inside it.
Vec Inputs(const UnaryCase &c, int64_t n, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(c.lo, c.hi);
  Vec v((size_t)n);
  for (auto &x : v) {
    x = u(*g);
    float h = std::round(x * 2) / 2;
    if ((*g)() % 4 == 0 && h >= c.lo && h <= c.hi) x = h;
  }
  return v;
}

Vec Uniform(int64_t n, float lo, float hi, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v((size_t)n);
  for (auto &x : v) x = u(*g);
  return v;
}

using Kv = std::vector<std::pair<std::string, std::string>>;

// op with parameters kv on dev over inputs (values of dt); outputs start
// as (*outs)[k] and are written in mode reqs[k]; the results in *outs.
// Input i has shape in_shapes[i] when given, else `shape`.
int Run(const std::string &op, const Kv &kv, int dt, const Dims &shape,
        const Dims &out_shape, int dev, const std::vector<Vec> &ins,
        std::vector<Bytes> *outs, const std::vector<int> &reqs,
        const std::vector<Dims> &in_shapes = {},
        const std::vector<Dims> &out_shapes = {}) {
  mxc_op h = nullptr;
  if (mxc_op_find(op.c_str(), &h) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a;
  int rc = MXC_OK;
  for (size_t i = 0; i < ins.size() + outs->size(); ++i) {
    mxc_ndarray x = nullptr;
    size_t o = i - ins.size();
    const Dims &d = i >= ins.size()
                        ? (o < out_shapes.size() ? out_shapes[o] : out_shape)
                    : i < in_shapes.size() ? in_shapes[i]
                                           : shape;
    int r = mxc_ndarray_create(d.data(), (int)d.size(), dt, dev, 0, 0, &x);
    if (r != MXC_OK) return r;
    Bytes b = i < ins.size() ? mxct::ToBytes(dt, ins[i])
                             : (*outs)[i - ins.size()];
    if (!b.empty()) r = mxc_ndarray_copy_from_host(x, b.data(), b.size());
    if (rc == MXC_OK) rc = r;
    a.push_back(x);
  }
  std::vector<int> req = reqs;
  if (rc == MXC_OK) {
    rc = mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                       (int)ins.size(), a.data() + ins.size(),
                       (int)outs->size(), req.data());
  }
  for (size_t i = 0; i < outs->size(); ++i) {
    mxc_ndarray o = a[ins.size() + i];
    if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(o);
    Bytes &b = (*outs)[i];
    if (rc == MXC_OK && !b.empty()) {
      rc = mxc_ndarray_copy_to_host(o, b.data(), b.size());
    }
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  return rc;
}

int Run(const std::string &op, int dt, const Dims &shape, int dev,
        const std::vector<Vec> &ins, Bytes *out, int req) {
  std::vector<Bytes> outs = {*out};
  int rc = Run(op, {}, dt, shape, shape, dev, ins, &outs, {req});
  *out = outs[0];
  return rc;
}

// Tolerance of dt in ulps at scale; float32 ulps from the table, the half
// types 1 where the table allows any.
bool Within(int dt, float got, float want, float scale, int ulps) {
  if (std::isnan(got) && std::isnan(want)) return true;
  if (ulps == 0 || std::isinf(want)) return std::memcmp(&got, &want, 4) == 0;
  float eps = dt == MXC_DTYPE_FLOAT32   ? FLT_EPSILON * ulps
              : dt == MXC_DTYPE_FLOAT16 ? std::ldexp(1.f, -10)
                                        : std::ldexp(1.f, -7);
  return std::fabs(got - want) <= eps * scale;
}

void ExpectWithin(const std::string &what, int dt, const Bytes &dev,
                  const Bytes &cpu, const Vec &base, int ulps) {
  Vec d = mxct::FromBytes(dt, dev), c = mxct::FromBytes(dt, cpu);
  ASSERT_EQ(d.size(), c.size()) << what;
  Bytes poison = mxct::PoisonBytes(dt, 1);
  size_t es = mxct::ElemSize(dt);
  for (size_t i = 0; i < d.size(); ++i) {
    if (std::memcmp(&dev[i * es], poison.data(), es) == 0) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    float scale = std::fmax(std::fabs(c[i]),
                            base.empty() ? 0.f : std::fabs(base[i]));
    if (!Within(dt, d[i], c[i], scale, ulps)) {
      ADD_FAILURE() << what << ": element " << i << " is " << d[i]
                    << " there, " << c[i] << " on the CPU";
      return;
    }
  }
}

// op over ins on dev against the CPU in dtype dt, each tuple of write
// modes of reqs_list (one mode per output; NULL outputs not compared).
void CompareShapes(const std::string &op, const Kv &kv, int dt,
                   const Dims &shape, const Dims &out_shape,
                   const std::vector<Vec> &ins,
                   const std::vector<std::vector<int>> &reqs_list, int ulps,
                   int dev, std::mt19937 *g,
                   const std::vector<Dims> &in_shapes = {}) {
  int64_t n = Numel(out_shape);
  Vec base = mxct::RoundTo(dt, Uniform(n, -1, 1, g));
  for (const auto &reqs : reqs_list) {
    std::string what = op + "/" + mxct::DtypeName(dt) + " of " +
                       std::to_string(n) + " modes";
    for (int r : reqs) what += " " + std::to_string(r);
    for (const auto &p : kv) what += " " + p.first + "=" + p.second;
    std::vector<Bytes> cpu(reqs.size(), mxct::ToBytes(dt, base)), out;
    for (int r : reqs) {
      out.push_back(r == MXC_REQ_ADD ? mxct::ToBytes(dt, base)
                                     : mxct::PoisonBytes(dt, (size_t)n));
    }
    ASSERT_EQ(Run(op, kv, dt, shape, out_shape, MXC_DEVICE_CPU, ins, &cpu,
                  reqs, in_shapes),
              MXC_OK)
        << what << ": " << LastError();
    ASSERT_EQ(Run(op, kv, dt, shape, out_shape, dev, ins, &out, reqs,
                  in_shapes),
              MXC_OK)
        << what << ": " << LastError();
    for (size_t k = 0; k < reqs.size(); ++k) {
      if (reqs[k] == MXC_REQ_NULL) continue;
      ExpectWithin(what + " output " + std::to_string(k), dt, out[k], cpu[k],
                   reqs[k] == MXC_REQ_ADD ? base : Vec(), ulps);
    }
  }
}

void CompareModes(const std::string &op, const Kv &kv, int dt,
                  const Dims &shape, const std::vector<Vec> &ins,
                  const std::vector<std::vector<int>> &reqs_list, int ulps,
                  int dev, std::mt19937 *g) {
  CompareShapes(op, kv, dt, shape, shape, ins, reqs_list, ulps, dev, g);
}

// One output, write and add.
void Compare(const std::string &op, int dt, const Dims &shape,
             const std::vector<Vec> &ins, int ulps, int dev,
             std::mt19937 *g) {
  CompareModes(op, {}, dt, shape, ins, {{MXC_REQ_WRITE}, {MXC_REQ_ADD}},
               ulps, dev, g);
}

int HalfUlps(int dt, int ulps) {
  return dt == MXC_DTYPE_FLOAT32 ? ulps : ulps > 0 ? 1 : 0;
}

void Forward(const UnaryCase &c, int dev, std::mt19937 *g) {
  for (int dt : kDtypes) {
    for (const Dims &s : kShapes) {
      Vec x = mxct::RoundTo(dt, Inputs(c, Numel(s), g));
      Compare(c.op, dt, s, {x}, HalfUlps(dt, c.fwd_ulps), dev, g);
    }
  }
}

// (ograd, data, output): the output is the CPU forward's of data.
void Backward(const UnaryCase &c, int dev, std::mt19937 *g) {
  for (int dt : kDtypes) {
    for (const Dims &s : kShapes) {
      int64_t n = Numel(s);
      Vec x = mxct::RoundTo(dt, Inputs(c, n, g));
      Bytes y((size_t)n * mxct::ElemSize(dt));
      ASSERT_EQ(Run(c.op, dt, s, MXC_DEVICE_CPU, {x}, &y, MXC_REQ_WRITE),
                MXC_OK)
          << c.op << ": " << LastError();
      Vec og = mxct::RoundTo(dt, Uniform(n, -2, 2, g));
      Compare(std::string("_backward_") + c.op, dt, s,
              {og, x, mxct::FromBytes(dt, y)}, HalfUlps(dt, c.bwd_ulps), dev,
              g);
    }
  }
}

// Registers the cases of every row: static objects of this file.
std::vector<mxct::RegisterCase> RegisterAll() {
  std::vector<mxct::RegisterCase> v;
  for (const UnaryCase &c : kUnary) {
    if (c.fwd_ulps >= 0) {
      v.emplace_back(c.op, [&c](std::mt19937 *g) {
        Forward(c, MXC_DEVICE_GPU, g);
      });
    }
    v.emplace_back((std::string("_backward_") + c.op).c_str(),
                   [&c](std::mt19937 *g) { Backward(c, MXC_DEVICE_GPU, g); });
  }
  return v;
}
const std::vector<mxct::RegisterCase> kUnaryCases = RegisterAll();

// ---- backends/cuda/scalar.h: scalar and same-shape binary forms ----

// One operator of ops/binary/binary_ops.h: its forms with a GPU row here
// (grad: _backward_ of the scalar forms; rev: the _r<stem>_scalar forms;
// same, same_grad: the same-shape forward and gradient), float32 ulps
// forward and backward, and its operands' domain.
struct BinCase {
  const char *name, *stem;
  bool grad, rev, same, same_grad;
  int ulps, grad_ulps;
  float lo, hi;
};

const BinCase kBin[] = {
    {"add", "plus", true, false, false, false, 0, 0, -5, 5},
    {"sub", "minus", true, true, false, false, 0, 0, -5, 5},
    {"mul", "mul", true, false, false, false, 0, 0, -5, 5},
    {"div", "div", true, true, false, false, 0, 0, -5, 5},
    {"mod", "mod", true, true, true, true, 0, 0, -5, 5},
    {"power", "power", true, true, true, true, 6, 8, 0.1f, 3},
    {"maximum", "maximum", true, false, true, true, 0, 0, -5, 5},
    {"minimum", "minimum", true, false, true, true, 0, 0, -5, 5},
    {"hypot", "hypot", true, false, true, true, 5, 6, -5, 5},
    {"equal", "equal", false, false, true, false, 0, 0, -2, 2},
    {"not_equal", "not_equal", false, false, true, false, 0, 0, -2, 2},
    {"greater", "greater", false, false, true, false, 0, 0, -2, 2},
    {"greater_equal", "greater_equal", false, false, true, false, 0, 0, -2,
     2},
    {"lesser", "lesser", false, false, true, false, 0, 0, -2, 2},
    {"lesser_equal", "lesser_equal", false, false, true, false, 0, 0, -2, 2},
    {"logical_and", "logical_and", false, false, true, false, 0, 0, -2, 2},
    {"logical_or", "logical_or", false, false, true, false, 0, 0, -2, 2},
    {"logical_xor", "logical_xor", false, false, true, false, 0, 0, -2, 2},
};

const Dims kBinShapes[] = {{1031}, {0}};

Vec BinInputs(const BinCase &c, int dt, int64_t n, std::mt19937 *g) {
  UnaryCase u = {c.name, c.lo, c.hi, 0, 0};
  return mxct::RoundTo(dt, Inputs(u, n, g));
}

// _<stem>_scalar or _r<stem>_scalar (rev) and, with grad, its _backward_.
void ScalarForms(const BinCase &c, bool rev, bool bwd, int dev,
                 std::mt19937 *g) {
  std::string op = std::string(rev ? "_r" : "_") + c.stem + "_scalar";
  if (bwd) op = "_backward_" + op;
  for (int dt : kDtypes) {
    for (const Dims &s : kBinShapes) {
      for (const char *sc : {"2.5", "-1.5"}) {
        int64_t n = Numel(s);
        std::vector<Vec> ins = {BinInputs(c, dt, n, g)};
        if (bwd) ins.insert(ins.begin(), mxct::RoundTo(dt, Uniform(n, -2, 2, g)));
        CompareModes(op, {{"scalar", sc}}, dt, s, ins,
                     {{MXC_REQ_WRITE}, {MXC_REQ_ADD}},
                     HalfUlps(dt, bwd ? c.grad_ulps : c.ulps), dev, g);
      }
    }
  }
}

// NAME (lhs, rhs) or _backward_NAME (ograd, lhs, rhs; both outputs in
// every pair of modes, one of them NULL). Every ninth rhs equals lhs.
void SameForm(const BinCase &c, bool bwd, int dev, std::mt19937 *g) {
  for (int dt : kDtypes) {
    for (const Dims &s : kBinShapes) {
      int64_t n = Numel(s);
      Vec x = BinInputs(c, dt, n, g), y = BinInputs(c, dt, n, g);
      for (size_t i = 3; i < y.size(); i += 9) y[i] = x[i];
      if (!bwd) {
        CompareModes(c.name, {}, dt, s, {x, y},
                     {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, HalfUlps(dt, c.ulps),
                     dev, g);
        continue;
      }
      Vec og = mxct::RoundTo(dt, Uniform(n, -2, 2, g));
      CompareModes(std::string("_backward_") + c.name, {}, dt, s, {og, x, y},
                   {{MXC_REQ_WRITE, MXC_REQ_ADD},
                    {MXC_REQ_ADD, MXC_REQ_WRITE},
                    {MXC_REQ_NULL, MXC_REQ_WRITE},
                    {MXC_REQ_WRITE, MXC_REQ_NULL}},
                   HalfUlps(dt, c.grad_ulps), dev, g);
    }
  }
}

std::vector<mxct::RegisterCase> RegisterBinary() {
  std::vector<mxct::RegisterCase> v;
  auto reg = [&v](const std::string &op, std::function<void(std::mt19937 *)> f) {
    v.emplace_back(op.c_str(), f);
  };
  const int gpu = MXC_DEVICE_GPU;
  for (const BinCase &c : kBin) {
    std::string stem = c.stem;
    reg("_" + stem + "_scalar",
        [&c](std::mt19937 *g) { ScalarForms(c, false, false, gpu, g); });
    if (c.grad) {
      reg("_backward__" + stem + "_scalar",
          [&c](std::mt19937 *g) { ScalarForms(c, false, true, gpu, g); });
    }
    if (c.rev) {
      reg("_r" + stem + "_scalar",
          [&c](std::mt19937 *g) { ScalarForms(c, true, false, gpu, g); });
      reg("_backward__r" + stem + "_scalar",
          [&c](std::mt19937 *g) { ScalarForms(c, true, true, gpu, g); });
    }
    if (c.same) {
      reg(c.name, [&c](std::mt19937 *g) { SameForm(c, false, gpu, g); });
    }
    if (c.same_grad) {
      reg(std::string("_backward_") + c.name,
          [&c](std::mt19937 *g) { SameForm(c, true, gpu, g); });
    }
  }
  return v;
}
const std::vector<mxct::RegisterCase> kBinaryCases = RegisterBinary();

TEST(GpuConformanceBinary, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(18);
  const int cpu = MXC_DEVICE_CPU;
  for (const BinCase &c : kBin) {
    SCOPED_TRACE(c.name);
    ScalarForms(c, false, false, cpu, &g);
    if (c.grad) ScalarForms(c, false, true, cpu, &g);
    if (c.rev) ScalarForms(c, true, false, cpu, &g);
    if (c.rev) ScalarForms(c, true, true, cpu, &g);
    if (c.same) SameForm(c, false, cpu, &g);
    if (c.same_grad) SameForm(c, true, cpu, &g);
  }
}

// ---- backends/cuda/copy.h: transpose, swapaxes, flip (bitwise) ----

struct CopyCase {
  const char *op;
  Kv kv;
  Dims in, out;
  Dims rhs = {};  // broadcast_like's second input
};

const CopyCase kCopy[] = {
    {"transpose", {}, {64, 33}, {33, 64}},
    {"transpose", {{"axes", "(0,2,1,3)"}}, {4, 12, 9, 16}, {4, 9, 12, 16}},
    {"transpose", {{"axes", "(2,0,1)"}}, {5, 7, 3}, {3, 5, 7}},
    {"transpose", {}, {0, 3}, {3, 0}},
    {"swapaxes", {{"dim1", "1"}, {"dim2", "-1"}}, {3, 4, 5}, {3, 5, 4}},
    {"swapaxes", {{"dim1", "0"}, {"dim2", "0"}}, {6, 2}, {6, 2}},
    {"flip", {{"axis", "(1)"}}, {3, 4, 5}, {3, 4, 5}},
    {"flip", {{"axis", "(0,2)"}}, {3, 4, 5}, {3, 4, 5}},
    {"broadcast_to", {{"shape", "(3,4,5)"}}, {3, 1, 5}, {3, 4, 5}},
    {"broadcast_to", {{"shape", "(64,0,7,7)"}}, {1, 16, 1, 1}, {64, 16, 7, 7}},
    {"broadcast_axis", {{"axis", "(0,2)"}, {"size", "(2,4)"}}, {1, 3, 1},
     {2, 3, 4}},
    {"broadcast_like", {}, {1, 4, 1}, {3, 4, 2}, {3, 4, 2}},
    {"BlockGrad", {}, {5, 7}, {5, 7}},
    {"BlockGrad", {}, {0}, {0}},
    {"tile", {{"reps", "(2,3)"}}, {33, 4}, {66, 12}},
    {"tile", {{"reps", "(2,1,3)"}}, {33, 4}, {2, 33, 12}},
    {"tile", {{"reps", "(2,0)"}}, {3, 4}, {6, 0}},
    {"repeat", {{"repeats", "3"}}, {5, 7}, {105}},
    {"repeat", {{"repeats", "2"}, {"axis", "1"}}, {4, 33, 3}, {4, 66, 3}},
    {"repeat", {{"repeats", "0"}, {"axis", "-1"}}, {4, 3}, {4, 0}},
};

void CopyForms(const char *op, int dev, std::mt19937 *g) {
  for (const CopyCase &c : kCopy) {
    if (std::string(c.op) != op) continue;
    for (int dt : kDtypes) {
      std::vector<Vec> ins = {mxct::RoundTo(dt, Uniform(Numel(c.in), -4, 4, g))};
      std::vector<Dims> shapes = {c.in};
      if (!c.rhs.empty()) {
        ins.push_back(Uniform(Numel(c.rhs), -4, 4, g));
        shapes.push_back(c.rhs);
      }
      CompareShapes(c.op, c.kv, dt, c.in, c.out, ins,
                    {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g, shapes);
    }
  }
}

// _backward_tile and _backward_repeat ((ograd, data) -> data's shape) over
// kCopy's tile and repeat cases: the copies summed in double in the CPU's
// order and rounded once on both devices, so bitwise (reps or repeats 0:
// zeros).
void RepGradForms(const char *op, int dev, std::mt19937 *g) {
  for (const CopyCase &c : kCopy) {
    if (std::string("_backward_") + c.op != op) continue;
    for (int dt : kDtypes) {
      Vec og = mxct::RoundTo(dt, Uniform(Numel(c.out), -4, 4, g));
      Vec x = mxct::RoundTo(dt, Uniform(Numel(c.in), -4, 4, g));
      CompareShapes(op, c.kv, dt, c.out, c.in, {og, x},
                    {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g,
                    {c.out, c.in});
    }
  }
}

// depth_to_space, space_to_depth, diag and their gradients, bitwise
// (one permutation each way; diag's matrix side cleared unless add).
struct RearrCase {
  const char *op;
  Kv kv;
  std::vector<Dims> ins;  // the backward's: ograd, data
  Dims out;
};

const RearrCase kRearr[] = {
    {"depth_to_space", {{"block_size", "2"}}, {{2, 12, 5, 33}}, {2, 3, 10, 66}},
    {"_backward_depth_to_space", {{"block_size", "2"}}, {{2, 3, 10, 66}},
     {2, 12, 5, 33}},
    {"space_to_depth", {{"block_size", "3"}}, {{2, 4, 9, 33}}, {2, 36, 3, 11}},
    {"_backward_space_to_depth", {{"block_size", "3"}}, {{2, 36, 3, 11}},
     {2, 4, 9, 33}},
    {"diag", {{"k", "-3"}}, {{37}}, {40, 40}},
    {"diag", {{"k", "2"}, {"axis1", "2"}, {"axis2", "0"}}, {{9, 4, 33}},
     {4, 7}},
    {"_backward_diag", {{"k", "1"}}, {{34, 34}, {33}}, {33}},
    {"_backward_diag", {{"k", "2"}, {"axis1", "2"}, {"axis2", "0"}},
     {{4, 7}, {9, 4, 33}}, {9, 4, 33}},
};

void RearrForms(const char *op, int dev, std::mt19937 *g) {
  for (const RearrCase &c : kRearr) {
    if (std::string(c.op) != op) continue;
    for (int dt : kDtypes) {
      std::vector<Vec> ins;
      for (const Dims &d : c.ins) {
        ins.push_back(mxct::RoundTo(dt, Uniform(Numel(d), -4, 4, g)));
      }
      CompareShapes(op, c.kv, dt, c.ins[0], c.out, ins,
                    {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g, c.ins);
    }
  }
}

#define MXC__REARR_CASE(name)                                         \
  mxct::RegisterCase(name, [](std::mt19937 *g) {                      \
    RearrForms(name, MXC_DEVICE_GPU, g);                              \
  })

// clip and _backward_clip (ograd, data), bitwise: the same comparisons
// and, backward, the same double sum; bounds hit exactly by some inputs.
void ClipForms(bool bwd, int dev, std::mt19937 *g) {
  const Kv bounds[] = {{{"a_min", "-1.5"}, {"a_max", "2.5"}},
                       {{"a_min", "0"}, {"a_max", "0.5"}}};
  for (const Kv &kv : bounds) {
    for (int dt : kDtypes) {
      for (const Dims &s : kBinShapes) {
        int64_t n = Numel(s);
        UnaryCase u = {"clip", -4, 4, 0, 0};
        std::vector<Vec> ins = {mxct::RoundTo(dt, Inputs(u, n, g))};
        if (bwd) ins.insert(ins.begin(), mxct::RoundTo(dt, Uniform(n, -2, 2, g)));
        CompareModes(bwd ? "_backward_clip" : "clip", kv, dt, s, ins,
                     {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g);
      }
    }
  }
}

// The slices and their gradients (the backward clears the rest of the
// data-shaped gradient unless add), bitwise.
struct SliceCase {
  const char *op;
  Kv kv;
  Dims data, box;
  Dims like = {};
};

const SliceCase kSlice[] = {
    {"slice", {{"begin", "(1,None,2)"}, {"end", "(3,None,-1)"}}, {4, 5, 33},
     {2, 5, 30}},
    {"slice",
     {{"begin", "(None,40)"}, {"end", "(None,0)"}, {"step", "(1,-3)"}},
     {3, 64}, {3, 14}},
    {"slice", {{"begin", "(2,)"}, {"end", "(2,)"}}, {4, 3}, {0, 3}},
    {"slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "30"}},
     {3, 50, 2}, {3, 29, 2}},
    {"slice_like", {{"axes", "(0,)"}}, {64, 17}, {31, 17}, {31, 5}},
};

void SliceForms(const char *op, int dev, std::mt19937 *g) {
  for (const SliceCase &c : kSlice) {
    std::string fwd = c.op, bwd = "_backward_" + fwd;
    if (fwd != op && bwd != op) continue;
    for (int dt : kDtypes) {
      Vec x = mxct::RoundTo(dt, Uniform(Numel(c.data), -4, 4, g));
      if (fwd == op) {
        std::vector<Vec> ins = {x};
        std::vector<Dims> shapes = {c.data};
        if (!c.like.empty()) {
          ins.push_back(Uniform(Numel(c.like), -4, 4, g));
          shapes.push_back(c.like);
        }
        CompareShapes(op, c.kv, dt, c.data, c.box, ins,
                      {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g, shapes);
        continue;
      }
      Vec og = mxct::RoundTo(dt, Uniform(Numel(c.box), -4, 4, g));
      CompareShapes(op, c.kv, dt, c.box, c.data, {og, x},
                    {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g,
                    {c.box, c.data});
    }
  }
}

#define MXC__SLICE_CASE(name)                                         \
  mxct::RegisterCase(name, [](std::mt19937 *g) {                      \
    SliceForms(name, MXC_DEVICE_GPU, g);                              \
  })

// Concat, split and their gradients: parts of other shapes, every part
// in its own write mode where the operator has one per part; bitwise.
// Poisoned outputs in write mode, as elsewhere.
void CompareParts(const std::string &op, const Kv &kv, int dt,
                  const std::vector<Dims> &in_shapes,
                  const std::vector<Dims> &out_shapes,
                  const std::vector<std::vector<int>> &reqs_list, int dev,
                  std::mt19937 *g) {
  std::vector<Vec> ins;
  for (const Dims &d : in_shapes) {
    ins.push_back(mxct::RoundTo(dt, Uniform(Numel(d), -4, 4, g)));
  }
  for (const auto &reqs : reqs_list) {
    std::string what = op + "/" + mxct::DtypeName(dt) + " modes";
    for (int r : reqs) what += " " + std::to_string(r);
    std::vector<Vec> base;
    std::vector<Bytes> cpu, out;
    for (size_t k = 0; k < out_shapes.size(); ++k) {
      base.push_back(mxct::RoundTo(dt, Uniform(Numel(out_shapes[k]), -1, 1, g)));
      cpu.push_back(mxct::ToBytes(dt, base[k]));
      out.push_back(reqs[k] == MXC_REQ_ADD
                        ? cpu[k]
                        : mxct::PoisonBytes(dt, (size_t)Numel(out_shapes[k])));
    }
    ASSERT_EQ(Run(op, kv, dt, {}, {}, MXC_DEVICE_CPU, ins, &cpu, reqs,
                  in_shapes, out_shapes),
              MXC_OK)
        << what << ": " << LastError();
    ASSERT_EQ(Run(op, kv, dt, {}, {}, dev, ins, &out, reqs, in_shapes,
                  out_shapes),
              MXC_OK)
        << what << ": " << LastError();
    for (size_t k = 0; k < reqs.size(); ++k) {
      if (reqs[k] == MXC_REQ_NULL) continue;
      ExpectWithin(what + " output " + std::to_string(k), dt, out[k], cpu[k],
                   reqs[k] == MXC_REQ_ADD ? base[k] : Vec(), 0);
    }
  }
}

void PartForms(const char *op, int dev, std::mt19937 *g) {
  std::string o = op;
  const std::vector<Dims> parts = {{4, 3, 16}, {4, 1, 16}, {4, 0, 16},
                                   {4, 9, 16}};
  const Dims whole = {4, 13, 16};
  const Kv concat = {{"num_args", "4"}, {"dim", "1"}};
  const Kv split = {{"num_outputs", "3"}, {"axis", "-1"}};
  const Dims swhole = {5, 6, 9}, spart = {5, 6, 3};
  const Kv stack = {{"num_args", "3"}, {"axis", "1"}};
  const Dims kwhole = {5, 3, 33}, kpart = {5, 33};
  const int W = MXC_REQ_WRITE, A = MXC_REQ_ADD, N = MXC_REQ_NULL;
  for (int dt : kDtypes) {
    if (o == "stack") {
      CompareParts(o, stack, dt, {kpart, kpart, kpart}, {kwhole}, {{W}, {A}},
                   dev, g);
    } else if (o == "_backward_stack") {
      CompareParts(o, stack, dt, {kwhole}, {kpart, kpart, kpart},
                   {{W, A, N}, {A, W, W}}, dev, g);
    } else if (o == "Concat") {
      CompareParts(o, concat, dt, parts, {whole}, {{W}, {A}}, dev, g);
    } else if (o == "_backward_Concat") {
      std::vector<Dims> ins = {whole};
      ins.insert(ins.end(), parts.begin(), parts.end());
      CompareParts(o, concat, dt, ins, parts, {{W, A, W, N}, {A, W, A, A}},
                   dev, g);
    } else if (o == "split") {
      CompareParts(o, split, dt, {swhole}, {spart, spart, spart},
                   {{W, A, N}, {A, W, W}}, dev, g);
    } else {
      CompareParts(o, split, dt, {spart, spart, spart}, {swhole}, {{W}, {A}},
                   dev, g);
    }
  }
}

// where (condition, x, y) and _backward_where (ograd, condition) ->
// (dx, dy): the condition of x's shape and 1-D over rows, a third of it
// zero (both signs); bitwise.
void WhereForms(bool bwd, int dev, std::mt19937 *g) {
  const std::pair<Dims, Dims> shapes[] = {{{33, 31}, {33, 31}},
                                          {{33, 31}, {33}},
                                          {{0, 4}, {0}}};
  const int W = MXC_REQ_WRITE, A = MXC_REQ_ADD, N = MXC_REQ_NULL;
  for (int dt : kDtypes) {
    for (const auto &s : shapes) {
      const Dims &xd = s.first, &cd = s.second;
      Vec cond = Uniform(Numel(cd), -1, 1, g);
      for (size_t i = 0; i < cond.size(); i += 3) cond[i] = i % 2 ? -0.f : 0.f;
      Vec x = mxct::RoundTo(dt, Uniform(Numel(xd), -4, 4, g));
      if (!bwd) {
        Vec y = mxct::RoundTo(dt, Uniform(Numel(xd), -4, 4, g));
        CompareShapes("where", {}, dt, xd, xd, {cond, x, y}, {{W}, {A}}, 0,
                      dev, g, {cd, xd, xd});
        continue;
      }
      CompareShapes("_backward_where", {}, dt, xd, xd, {x, cond},
                    {{W, A}, {A, W}, {N, W}}, 0, dev, g, {xd, cd});
    }
  }
}

// LeakyReLU and its gradient (ograd, data, output), float32: leaky
// bitwise; elu, selu, gelu 1 ulp (CUDA's double expm1, exp and erf are
// within 2 ulps of double of glibc's, which moves the float result only
// next to a rounding boundary).
void LeakyForms(bool bwd, int dev, std::mt19937 *g) {
  const int dt = MXC_DTYPE_FLOAT32;
  for (const char *t : {"leaky", "elu", "selu", "gelu"}) {
    Kv kv = {{"act_type", t}, {"slope", "0.3"}};
    int ulps = std::string(t) == "leaky" ? 0 : 1;
    for (const Dims &s : kBinShapes) {
      int64_t n = Numel(s);
      UnaryCase u = {"LeakyReLU", -6, 6, 0, 0};
      Vec x = Inputs(u, n, g);
      if (!bwd) {
        CompareModes("LeakyReLU", kv, dt, s, {x}, {{MXC_REQ_WRITE},
                     {MXC_REQ_ADD}}, ulps, dev, g);
        continue;
      }
      std::vector<Bytes> y = {Bytes((size_t)n * 4)};
      ASSERT_EQ(Run("LeakyReLU", kv, dt, s, s, MXC_DEVICE_CPU, {x}, &y,
                    {MXC_REQ_WRITE}),
                MXC_OK)
          << LastError();
      CompareModes("_backward_LeakyReLU", kv, dt, s,
                   {Uniform(n, -2, 2, g), x, mxct::FromBytes(dt, y[0])},
                   {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, ulps, dev, g);
    }
  }
}

// hard_sigmoid and quadratic with their gradients ((ograd, data) ->
// ddata), float32, bitwise: the same IEEE operations as the CPU's
// (scalar_hd.h; -fmad=false). Inputs across hard_sigmoid's knees.
void ParamMapForms(const std::string &op, bool bwd, int dev,
                   std::mt19937 *g) {
  const int dt = MXC_DTYPE_FLOAT32;
  std::vector<Kv> kvs =
      op == "hard_sigmoid"
          ? std::vector<Kv>{{}, {{"alpha", "-1.5"}, {"beta", "0.25"}}}
          : std::vector<Kv>{{{"a", "0.3"}, {"b", "-1.7"}, {"c", "2.1"}}};
  for (const Kv &kv : kvs) {
    for (const Dims &s : kBinShapes) {
      int64_t n = Numel(s);
      UnaryCase u = {op.c_str(), -6, 6, 0, 0};
      std::vector<Vec> ins = {Inputs(u, n, g)};
      if (bwd) ins.insert(ins.begin(), Uniform(n, -2, 2, g));
      CompareModes(bwd ? "_backward_" + op : op, kv, dt, s, ins,
                   {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g);
    }
  }
}

// shape_array and size_array (float32 data of several shapes -> int64),
// write (the output poisoned on dev) and add, exact; reshape_like and
// _backward_reshape_like (flat copies of input 0), bitwise.
int ShapeArrayRun(const char *name, const Dims &d, int dev, int req,
                  std::vector<int64_t> *out) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  mxc_ndarray x = mxct::Make(d, dev, 0), o = nullptr;
  int64_t n = (int64_t)out->size();
  int rc = mxc_ndarray_create(&n, 1, MXC_DTYPE_INT64, dev, 0, 0, &o);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_copy_from_host(o, out->data(), out->size() * 8);
  }
  if (rc == MXC_OK) rc = mxc_op_invoke(op, nullptr, nullptr, 0, &x, 1, &o, 1, &req);
  if (rc == MXC_OK) rc = mxc_ndarray_copy_to_host(o, out->data(), out->size() * 8);
  mxc_ndarray_free(x), mxc_ndarray_free(o);
  return rc;
}

void ShapeArrayForms(const char *op, int dev) {
  for (const Dims &d : {Dims{3}, Dims{2, 0, 5}, Dims{4, 1, 3, 2, 1, 2, 1, 3}}) {
    size_t n = std::string(op) == "shape_array" ? d.size() : 1;
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::vector<int64_t> base(n, 7), cpu = base, gpu = base;
      if (req == MXC_REQ_WRITE) gpu.assign(n, (int64_t)0x7fc0dead7fc0deadLL);
      ASSERT_EQ(ShapeArrayRun(op, d, MXC_DEVICE_CPU, req, &cpu), MXC_OK)
          << op << " on the CPU: " << LastError();
      ASSERT_EQ(ShapeArrayRun(op, d, dev, req, &gpu), MXC_OK)
          << op << " on the GPU: " << LastError();
      EXPECT_EQ(gpu, cpu) << op << " of " << d.size() << " axes, req " << req;
    }
  }
}

void ReshapeLikeForms(bool bwd, int dev, std::mt19937 *g) {
  const int dt = MXC_DTYPE_FLOAT32;
  Dims a = {4, 6}, b = {2, 3, 4};
  for (int64_t n : {(int64_t)24, (int64_t)0}) {
    Dims lhs = n ? a : Dims{0, 6}, rhs = n ? b : Dims{2, 0, 4};
    // Forward: (lhs, rhs) -> rhs's shape; backward: (ograd in rhs's
    // shape, lhs) -> lhs's shape.
    Dims out = bwd ? lhs : rhs;
    std::vector<Vec> ins = {Uniform(n, -2, 2, g), Uniform(n, -2, 2, g)};
    std::vector<Dims> in_shapes = bwd ? std::vector<Dims>{rhs, lhs}
                                      : std::vector<Dims>{lhs, rhs};
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Vec base = Uniform(n, -1, 1, g);
      std::vector<Bytes> cpu = {mxct::ToBytes(dt, base)}, gpu = cpu;
      if (req == MXC_REQ_WRITE) gpu = {mxct::ToBytes(dt, Vec((size_t)n, mxct::Poison()))};
      std::string op = bwd ? "_backward_reshape_like" : "reshape_like";
      ASSERT_EQ(Run(op, {}, dt, out, out, MXC_DEVICE_CPU, ins, &cpu, {req},
                    in_shapes),
                MXC_OK)
          << op << " on the CPU: " << LastError();
      ASSERT_EQ(Run(op, {}, dt, out, out, dev, ins, &gpu, {req}, in_shapes),
                MXC_OK)
          << op << " on the GPU: " << LastError();
      EXPECT_EQ(gpu[0], cpu[0]) << op << " of " << n << " elements, req " << req;
    }
  }
}

// The fills: zeros_like and ones_like (data's shape and dtype), _zeros,
// _ones and _full (shape and dtype parameters), write and add, bitwise.
void FillForms(const char *op, int dev, std::mt19937 *g) {
  std::string o = op;
  for (int dt : kDtypes) {
    for (const Dims &s : {Dims{33, 7}, Dims{0, 2}}) {
      std::string shape = "(" + std::to_string(s[0]) + "," +
                          std::to_string(s[1]) + ")";
      if (o == "zeros_like" || o == "ones_like") {
        CompareModes(o, {}, dt, s, {Uniform(Numel(s), -4, 4, g)},
                     {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g);
        continue;
      }
      Kv kv = {{"shape", shape}, {"dtype", mxct::DtypeName(dt)}};
      if (o == "_full") kv.push_back({"value", "0.1"});
      CompareModes(o, kv, dt, s, {}, {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev,
                   g);
    }
  }
}

// Embedding (indices in the weight's dtype: out of range, negative and
// fractional ones among them) in the three dtypes, and its float32
// gradient (every index row summed in the CPU's order: bitwise).
void EmbeddingForms(bool bwd, int dev, std::mt19937 *g) {
  const int64_t n = 50, d = 33;
  Dims id = {4, 17}, wd = {n, d}, od = {4, 17, d};
  Vec idx = Uniform(Numel(id), -3, n + 3, g);
  for (size_t i = 0; i < idx.size(); i += 2) idx[i] = std::floor(idx[i]);
  for (int dt : kDtypes) {
    if (bwd && dt != MXC_DTYPE_FLOAT32) continue;
    Kv kv = {{"input_dim", std::to_string(n)},
             {"output_dim", std::to_string(d)},
             {"dtype", mxct::DtypeName(dt)}};
    Vec ix = mxct::RoundTo(dt, idx);
    if (!bwd) {
      CompareShapes("Embedding", kv, dt, id, od,
                    {ix, mxct::RoundTo(dt, Uniform(Numel(wd), -4, 4, g))},
                    {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g, {id, wd});
      continue;
    }
    CompareShapes("_backward_Embedding", kv, dt, od, wd,
                  {Uniform(Numel(od), -2, 2, g), ix},
                  {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g, {od, id});
  }
}

// take (data, indices in data's dtype: out of range, negative and
// fractional ones under clip and wrap, in-range ones under raise) along
// each axis, and _backward_take (float32; repeated indices accumulate in
// index order on both sides), write and add, bitwise.
void TakeForms(bool bwd, int dev, std::mt19937 *g) {
  const Dims dd = {6, 7, 33}, id = {3, 5};
  for (int axis : {0, 1, -1}) {
    int ax = axis < 0 ? axis + 3 : axis;
    Dims od;
    for (int i = 0; i < ax; ++i) od.push_back(dd[i]);
    od.insert(od.end(), id.begin(), id.end());
    for (int i = ax + 1; i < 3; ++i) od.push_back(dd[i]);
    for (const char *mode : {"clip", "wrap", "raise"}) {
      bool raise = std::string(mode) == "raise";
      float n = (float)dd[ax];
      Vec idx = raise ? Uniform(Numel(id), 1 - n, n - 1, g)
                      : Uniform(Numel(id), -2 * n, 2 * n, g);
      for (size_t i = 0; i < idx.size(); i += 2) idx[i] = std::trunc(idx[i]);
      Kv kv = {{"axis", std::to_string(axis)}, {"mode", mode}};
      for (int dt : kDtypes) {
        if (bwd && dt != MXC_DTYPE_FLOAT32) continue;
        Vec ix = mxct::RoundTo(dt, idx);
        if (!bwd) {
          CompareShapes("take", kv, dt, dd, od,
                        {mxct::RoundTo(dt, Uniform(Numel(dd), -4, 4, g)), ix},
                        {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g, {dd, id});
          continue;
        }
        CompareShapes("_backward_take", kv, dt, od, dd,
                      {Uniform(Numel(od), -2, 2, g),
                       Uniform(Numel(dd), -2, 2, g), ix},
                      {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g,
                      {od, dd, id});
      }
    }
  }
}

// pick (data, index in data's dtype: out of range, negative and
// fractional ones) along each axis, keepdims or not, clip and wrap, and
// _backward_pick (float32), write and add, bitwise.
void PickForms(bool bwd, int dev, std::mt19937 *g) {
  const Dims dd = {6, 7, 33};
  for (int axis : {0, 1, -1}) {
    int ax = axis < 0 ? axis + 3 : axis;
    for (bool keep : {false, true}) {
      Dims id = dd;
      if (keep) {
        id[ax] = 1;
      } else {
        id.erase(id.begin() + ax);
      }
      float n = (float)dd[ax];
      Vec idx = Uniform(Numel(id), -2 * n, 2 * n, g);
      for (size_t i = 0; i < idx.size(); i += 2) idx[i] = std::trunc(idx[i]);
      for (const char *mode : {"clip", "wrap"}) {
        Kv kv = {{"axis", std::to_string(axis)},
                 {"keepdims", keep ? "true" : "false"},
                 {"mode", mode}};
        for (int dt : kDtypes) {
          if (bwd && dt != MXC_DTYPE_FLOAT32) continue;
          Vec ix = mxct::RoundTo(dt, idx);
          if (!bwd) {
            CompareShapes("pick", kv, dt, dd, id,
                          {mxct::RoundTo(dt, Uniform(Numel(dd), -4, 4, g)),
                           ix},
                          {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g,
                          {dd, id});
            continue;
          }
          CompareShapes("_backward_pick", kv, dt, id, dd,
                        {Uniform(Numel(id), -2, 2, g),
                         Uniform(Numel(dd), -2, 2, g), ix},
                        {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g,
                        {id, dd, id});
        }
      }
    }
  }
}

// one_hot: indices in the output's dtype (out of range, negative and
// fractional ones among them), depth 37, write and add, bitwise.
void OneHotForms(int dev, std::mt19937 *g) {
  Dims id = {5, 13}, od = {5, 13, 37};
  Vec idx = Uniform(Numel(id), -3, 40, g);
  for (int dt : kDtypes) {
    Kv kv = {{"depth", "37"}, {"on_value", "0.7"}, {"off_value", "-0.1"},
             {"dtype", mxct::DtypeName(dt)}};
    CompareShapes("one_hot", kv, dt, id, od, {mxct::RoundTo(dt, idx)},
                  {{MXC_REQ_WRITE}, {MXC_REQ_ADD}}, 0, dev, g);
  }
}

#define MXC__FILL_CASE(name)                                         \
  mxct::RegisterCase(name, [](std::mt19937 *g) {                     \
    FillForms(name, MXC_DEVICE_GPU, g);                              \
  })

const mxct::RegisterCase kCopyCases[] = {
    mxct::RegisterCase("Embedding", [](std::mt19937 *g) {
      EmbeddingForms(false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_Embedding", [](std::mt19937 *g) {
      EmbeddingForms(true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase(
        "one_hot", [](std::mt19937 *g) { OneHotForms(MXC_DEVICE_GPU, g); }),
    MXC__FILL_CASE("zeros_like"),
    MXC__FILL_CASE("ones_like"),
    MXC__FILL_CASE("_zeros"),
    MXC__FILL_CASE("_ones"),
    MXC__FILL_CASE("_full"),
    mxct::RegisterCase("LeakyReLU", [](std::mt19937 *g) {
      LeakyForms(false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_LeakyReLU", [](std::mt19937 *g) {
      LeakyForms(true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("hard_sigmoid", [](std::mt19937 *g) {
      ParamMapForms("hard_sigmoid", false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_hard_sigmoid", [](std::mt19937 *g) {
      ParamMapForms("hard_sigmoid", true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("quadratic", [](std::mt19937 *g) {
      ParamMapForms("quadratic", false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_quadratic", [](std::mt19937 *g) {
      ParamMapForms("quadratic", true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("take", [](std::mt19937 *g) {
      TakeForms(false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_take", [](std::mt19937 *g) {
      TakeForms(true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("pick", [](std::mt19937 *g) {
      PickForms(false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_pick", [](std::mt19937 *g) {
      PickForms(true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("shape_array", [](std::mt19937 *) {
      ShapeArrayForms("shape_array", MXC_DEVICE_GPU);
    }),
    mxct::RegisterCase("size_array", [](std::mt19937 *) {
      ShapeArrayForms("size_array", MXC_DEVICE_GPU);
    }),
    mxct::RegisterCase("reshape_like", [](std::mt19937 *g) {
      ReshapeLikeForms(false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_reshape_like", [](std::mt19937 *g) {
      ReshapeLikeForms(true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("where", [](std::mt19937 *g) {
      WhereForms(false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_where", [](std::mt19937 *g) {
      WhereForms(true, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("Concat", [](std::mt19937 *g) {
      PartForms("Concat", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_Concat", [](std::mt19937 *g) {
      PartForms("_backward_Concat", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("split", [](std::mt19937 *g) {
      PartForms("split", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_split", [](std::mt19937 *g) {
      PartForms("_backward_split", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("stack", [](std::mt19937 *g) {
      PartForms("stack", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_stack", [](std::mt19937 *g) {
      PartForms("_backward_stack", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase(
        "tile", [](std::mt19937 *g) { CopyForms("tile", MXC_DEVICE_GPU, g); }),
    mxct::RegisterCase("_backward_tile", [](std::mt19937 *g) {
      RepGradForms("_backward_tile", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("repeat", [](std::mt19937 *g) {
      CopyForms("repeat", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_repeat", [](std::mt19937 *g) {
      RepGradForms("_backward_repeat", MXC_DEVICE_GPU, g);
    }),
    MXC__REARR_CASE("depth_to_space"),
    MXC__REARR_CASE("_backward_depth_to_space"),
    MXC__REARR_CASE("space_to_depth"),
    MXC__REARR_CASE("_backward_space_to_depth"),
    MXC__REARR_CASE("diag"),
    MXC__REARR_CASE("_backward_diag"),
    MXC__SLICE_CASE("slice"),
    MXC__SLICE_CASE("_backward_slice"),
    MXC__SLICE_CASE("slice_axis"),
    MXC__SLICE_CASE("_backward_slice_axis"),
    MXC__SLICE_CASE("slice_like"),
    MXC__SLICE_CASE("_backward_slice_like"),
    mxct::RegisterCase("transpose", [](std::mt19937 *g) {
      CopyForms("transpose", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("swapaxes", [](std::mt19937 *g) {
      CopyForms("swapaxes", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase(
        "flip", [](std::mt19937 *g) { CopyForms("flip", MXC_DEVICE_GPU, g); }),
    mxct::RegisterCase("broadcast_to", [](std::mt19937 *g) {
      CopyForms("broadcast_to", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("broadcast_axis", [](std::mt19937 *g) {
      CopyForms("broadcast_axis", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("broadcast_like", [](std::mt19937 *g) {
      CopyForms("broadcast_like", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("BlockGrad", [](std::mt19937 *g) {
      CopyForms("BlockGrad", MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("clip", [](std::mt19937 *g) {
      ClipForms(false, MXC_DEVICE_GPU, g);
    }),
    mxct::RegisterCase("_backward_clip", [](std::mt19937 *g) {
      ClipForms(true, MXC_DEVICE_GPU, g);
    }),
};

TEST(GpuConformanceCopy, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(19);
  for (const char *op : {"transpose", "swapaxes", "flip", "broadcast_to",
                         "broadcast_axis", "broadcast_like", "BlockGrad",
                         "tile", "repeat"}) {
    CopyForms(op, MXC_DEVICE_CPU, &g);
  }
  RepGradForms("_backward_tile", MXC_DEVICE_CPU, &g);
  RepGradForms("_backward_repeat", MXC_DEVICE_CPU, &g);
  for (const RearrCase &c : kRearr) RearrForms(c.op, MXC_DEVICE_CPU, &g);
  ClipForms(false, MXC_DEVICE_CPU, &g);
  ClipForms(true, MXC_DEVICE_CPU, &g);
  WhereForms(false, MXC_DEVICE_CPU, &g);
  WhereForms(true, MXC_DEVICE_CPU, &g);
  LeakyForms(false, MXC_DEVICE_CPU, &g);
  LeakyForms(true, MXC_DEVICE_CPU, &g);
  TakeForms(false, MXC_DEVICE_CPU, &g);
  TakeForms(true, MXC_DEVICE_CPU, &g);
  PickForms(false, MXC_DEVICE_CPU, &g);
  PickForms(true, MXC_DEVICE_CPU, &g);
  ShapeArrayForms("shape_array", MXC_DEVICE_CPU);
  ShapeArrayForms("size_array", MXC_DEVICE_CPU);
  ReshapeLikeForms(false, MXC_DEVICE_CPU, &g);
  ReshapeLikeForms(true, MXC_DEVICE_CPU, &g);
  for (const char *op : {"hard_sigmoid", "quadratic"}) {
    ParamMapForms(op, false, MXC_DEVICE_CPU, &g);
    ParamMapForms(op, true, MXC_DEVICE_CPU, &g);
  }
  OneHotForms(MXC_DEVICE_CPU, &g);
  EmbeddingForms(false, MXC_DEVICE_CPU, &g);
  EmbeddingForms(true, MXC_DEVICE_CPU, &g);
  for (const char *op : {"zeros_like", "ones_like", "_zeros", "_ones",
                         "_full"}) {
    FillForms(op, MXC_DEVICE_CPU, &g);
  }
  for (const char *op :
       {"Concat", "_backward_Concat", "split", "_backward_split", "stack",
        "_backward_stack"}) {
    PartForms(op, MXC_DEVICE_CPU, &g);
  }
  for (const char *op : {"slice", "slice_axis", "slice_like"}) {
    SliceForms(op, MXC_DEVICE_CPU, &g);
    SliceForms((std::string("_backward_") + op).c_str(), MXC_DEVICE_CPU, &g);
  }
}

// Every machine: the cases are valid calls (CPU against CPU), so a GPU
// run does not spend its minutes on a malformed one.
TEST(GpuConformanceUnary, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(17);
  for (const UnaryCase &c : kUnary) {
    SCOPED_TRACE(c.op);
    if (c.fwd_ulps >= 0) Forward(c, MXC_DEVICE_CPU, &g);
    Backward(c, MXC_DEVICE_CPU, &g);
  }
}

// The comparison fails on an element left unwritten, on one ulp where
// none is allowed, and beyond the tolerance.
TEST(GpuConformanceUnary, TheComparisonCanFail) {
  const int dt = MXC_DTYPE_FLOAT32;
  Vec want = {0.25f, 0.5f};
  Bytes cpu = mxct::ToBytes(dt, want);
  Bytes poisoned = mxct::ToBytes(dt, {0.25f, mxct::Poison()});
  Bytes off = mxct::ToBytes(dt, {0.25f, std::nextafter(0.5f, 1.f)});
  Bytes far = mxct::ToBytes(dt, {0.25f, 0.5f * (1 + 8 * FLT_EPSILON)});
  EXPECT_NONFATAL_FAILURE(ExpectWithin("t", dt, poisoned, cpu, {}, 2),
                          "never written");
  EXPECT_NONFATAL_FAILURE(ExpectWithin("t", dt, off, cpu, {}, 0),
                          "on the CPU");
  EXPECT_NONFATAL_FAILURE(ExpectWithin("t", dt, far, cpu, {}, 6),
                          "on the CPU");
  ExpectWithin("t", dt, off, cpu, {}, 1);
}

}  // namespace
