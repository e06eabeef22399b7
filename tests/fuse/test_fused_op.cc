// The _fused_elemwise operator on its own: every fusible operator inside a
// program against the same operators invoked one by one, a long chain
// against a naive loop, exp accuracy against the C library, write modes,
// scratch-buffer pressure, dtype rules, parameter errors and concurrent
// use of the kernel thread pool.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "tests/fuse/fuse_test_util.h"

namespace {

using fuset::Arr;
using fuset::close;
using fuset::err;
using fuset::invoke;
using fuset::make1;
using fuset::Params;
using fuset::read;
using fuset::uniform;

const char *kFused = "_fused_elemwise";

// An operator under test: name, inputs, parameters as program text and as
// pairs, and the input range that keeps it finite.
struct OpCase {
  std::string name;
  int n_in;
  Params params;
  double lo, hi;
};

std::vector<OpCase> all_cases() {
  std::vector<OpCase> c;
  const char *unary[] = {
      "abs",     "sign",    "negative", "relu",       "sigmoid", "tanh",
      "softsign", "softrelu", "exp",    "expm1",      "log",     "log1p",
      "log2",    "log10",   "sqrt",     "rsqrt",      "cbrt",    "square",
      "reciprocal", "sin",  "cos",      "tan",        "arcsin",  "arccos",
      "arctan",  "sinh",    "cosh",     "arcsinh",    "arccosh", "arctanh",
      "degrees", "radians", "floor",    "ceil",       "round",   "rint",
      "trunc",   "fix",     "erf",      "erfinv",     "gamma",   "gammaln",
      "logical_not"};
  for (const char *u : unary) {
    std::string s = u;
    double lo = -2, hi = 2;
    if (s == "log" || s == "log2" || s == "log10" || s == "sqrt" ||
        s == "rsqrt" || s == "gamma" || s == "gammaln") {
      lo = 0.2, hi = 3;
    } else if (s == "log1p") {
      lo = -0.5;
    } else if (s == "arcsin" || s == "arccos" || s == "arctanh" ||
               s == "erfinv") {
      lo = -0.9, hi = 0.9;
    } else if (s == "arccosh") {
      lo = 1.1, hi = 3;
    }
    c.push_back({s, 1, {}, lo, hi});
    c.push_back({"_backward_" + s, 3, {}, lo, hi});
  }
  const char *binary[] = {"add",          "sub",         "mul",
                          "div",          "mod",         "power",
                          "maximum",      "minimum",     "hypot",
                          "equal",        "not_equal",   "greater",
                          "greater_equal", "lesser",     "lesser_equal",
                          "logical_and",  "logical_or",  "logical_xor"};
  const char *stems[] = {"plus",        "minus",       "mul",
                         "div",         "mod",         "power",
                         "maximum",     "minimum",     "hypot",
                         "equal",       "not_equal",   "greater",
                         "greater_equal", "lesser",    "lesser_equal",
                         "logical_and", "logical_or",  "logical_xor"};
  for (int i = 0; i < 18; ++i) {
    std::string b = binary[i], st = stems[i];
    bool pos = b == "power";
    c.push_back({b, 2, {}, pos ? 0.1 : -2, 2});
    Params sc = {{"scalar", "0.75"}};
    c.push_back({"_" + st + "_scalar", 1, sc, pos ? 0.1 : -2, 2});
    bool rev = st == "minus" || st == "div" || st == "mod" || st == "power";
    bool grad = i < 9;
    if (rev) c.push_back({"_r" + st + "_scalar", 1, sc, pos ? 0.1 : -2, 2});
    if (grad) {
      c.push_back({"_backward__" + st + "_scalar", 2, sc, pos ? 0.1 : -2, 2});
    }
    if (grad && rev) {
      c.push_back({"_backward__r" + st + "_scalar", 2, sc, pos ? 0.1 : -2, 2});
    }
  }
  for (const char *a : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    c.push_back({"Activation", 1, {{"act_type", a}}, -3, 3});
    c.push_back({"_backward_Activation", 3, {{"act_type", a}}, -3, 3});
  }
  Params clip = {{"a_min", "-0.5"}, {"a_max", "0.7"}};
  c.push_back({"clip", 1, clip, -2, 2});
  c.push_back({"_backward_clip", 2, clip, -2, 2});
  c.push_back({"_copy", 1, {}, -2, 2});
  c.push_back({"BlockGrad", 1, {}, -2, 2});
  return c;
}

// Operators whose float32 form runs this family's vectorized exp: they
// agree with the unfused ones to a few ulp; all others run the operator's
// own kernel on each tile and must agree exactly.
bool uses_fast_exp(const OpCase &c) {
  if (c.name == "exp" || c.name == "sigmoid") return true;
  return c.name == "Activation" && c.params[0].second == "sigmoid";
}

Arr fused(int n_inputs, const std::string &program,
          const std::vector<const Arr *> &in, int *rc = nullptr) {
  return invoke(kFused, in,
                {{"num_inputs", std::to_string(n_inputs)},
                 {"program", program}},
                rc);
}

// Program "_copy(i0);OP(r0,i1,..,params)" against _copy then OP.
void check_case(const OpCase &c, int dt, int64_t n) {
  SCOPED_TRACE(c.name + (dt == MXC_DTYPE_FLOAT32 ? " float32" : " float64") +
               " n=" + std::to_string(n));
  std::vector<Arr> ins;
  for (int k = 0; k < c.n_in; ++k) {
    ins.push_back(make1(uniform(n, c.lo, c.hi, 17 + k), dt));
  }
  std::string prog = "_copy(i0);" + c.name + "(r0";
  for (int k = 1; k < c.n_in; ++k) prog += ",i" + std::to_string(k);
  for (auto &kv : c.params) prog += "," + kv.first + "=" + kv.second;
  prog += ")";
  std::vector<const Arr *> in_ptrs;
  for (auto &a : ins) in_ptrs.push_back(&a);
  Arr got = fused(c.n_in, prog, in_ptrs);
  ASSERT_NE(got.h, nullptr) << prog;

  Arr copy = invoke("_copy", {&ins[0]});
  std::vector<const Arr *> ref_in = {&copy};
  for (int k = 1; k < c.n_in; ++k) ref_in.push_back(&ins[k]);
  Arr want = invoke(c.name, ref_in, c.params);
  double rtol = dt == MXC_DTYPE_FLOAT32 && uses_fast_exp(c) ? 5e-7 : 0;
  EXPECT_TRUE(close(read(got), read(want), rtol, 0)) << prog;
}

TEST(FusedOp, EveryFusibleOperatorMatchesUnfused) {
  for (const OpCase &c : all_cases()) {
    check_case(c, MXC_DTYPE_FLOAT32, 1031);
    check_case(c, MXC_DTYPE_FLOAT64, 1031);
  }
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

const char *kSigmoidChain =
    "_mul_scalar(i0,scalar=0.5);_plus_scalar(r0,scalar=0.25);negative(r1);"
    "exp(r2);_plus_scalar(r3,scalar=1);_rdiv_scalar(r4,scalar=1)";

// 1/(1+exp(-(a x + b))) in double, the reference.
std::vector<double> sigmoid_ref(const std::vector<double> &x, bool f32) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double v = f32 ? (double)(float)x[i] : x[i];
    y[i] = 1.0 / (1.0 + std::exp(-(0.5 * v + 0.25)));
  }
  return y;
}

TEST(FusedOp, ChainMatchesNaiveLoopAndUnfusedAtEverySize) {
  // Sizes around the tile (4096 float32 / 2048 float64 elements), the
  // parallel grain (65536) and zero.
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    for (int64_t n : {0, 1, 7, 2047, 2049, 4095, 4097, 65537, 300001}) {
      SCOPED_TRACE("dtype " + std::to_string(dt) + " n=" + std::to_string(n));
      std::vector<double> xv = uniform(n, -20, 20, 3);
      Arr x = make1(xv, dt);
      Arr y = fused(1, kSigmoidChain, {&x});
      double tol = dt == MXC_DTYPE_FLOAT32 ? 1e-6 : 1e-14;
      EXPECT_TRUE(close(read(y), sigmoid_ref(xv, dt == MXC_DTYPE_FLOAT32),
                        tol, tol));
      Arr a = invoke("_mul_scalar", {&x}, {{"scalar", "0.5"}});
      Arr b = invoke("_plus_scalar", {&a}, {{"scalar", "0.25"}});
      Arr c = invoke("negative", {&b});
      Arr d = invoke("exp", {&c});
      Arr e = invoke("_plus_scalar", {&d}, {{"scalar", "1"}});
      Arr f = invoke("_rdiv_scalar", {&e}, {{"scalar", "1"}});
      EXPECT_TRUE(close(read(y), read(f), tol, 0));
    }
  }
}

// Distance in units in the last place between two floats.
int64_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return std::llabs((long long)ia - (long long)ib);
}

TEST(FusedOp, VectorizedExpStaysWithinTwoUlpOfExpf) {
  std::vector<double> xs = {0.0, -0.0, 1e-30, -1e-30, 1, -1, 0.5, 10, -10,
                            87.0, 88.3, 88.7, 88.72, 88.73, 89, 100, -87.3,
                            -88, -100, -103, -103.9, -104, -110, -1e30, 1e30};
  for (double x : uniform(200000, -104, 89, 5)) xs.push_back(x);
  for (double x : uniform(20000, -1, 1, 6)) xs.push_back(x);
  xs.push_back(std::numeric_limits<double>::infinity());
  xs.push_back(-std::numeric_limits<double>::infinity());
  xs.push_back(std::numeric_limits<double>::quiet_NaN());
  Arr x = make1(xs);
  std::vector<double> got = read(fused(1, "exp(i0)", {&x}));
  int64_t worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    float want = std::exp((float)xs[i]);
    float g = (float)got[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(g)) << xs[i];
      continue;
    }
    int64_t u = ulps(g, want);
    if (u > worst) worst = u;
    EXPECT_LE(u, 2) << "exp(" << xs[i] << "): " << g << " vs " << want;
  }
  printf("vectorized exp: worst %lld ulp\n", (long long)worst);
}

TEST(FusedOp, AddModeAndInPlaceOutput) {
  std::vector<double> xv = uniform(5000, -3, 3, 8);
  std::vector<double> ov = uniform(5000, -1, 1, 9);
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(kFused, &op), MXC_OK);
  const char *keys[] = {"num_inputs", "program"};
  // The last instruction: the operator's own kernel (add mode inside it)
  // and the vectorized sigmoid (add mode in this family).
  for (const char *prog : {"_mul_scalar(i0,scalar=2);negative(r0)",
                           "_mul_scalar(i0,scalar=2);sigmoid(r0)"}) {
    SCOPED_TRACE(prog);
    const char *vals[] = {"1", prog};
    Arr x = make1(xv), out = make1(ov);
    int req = MXC_REQ_ADD;
    ASSERT_EQ(mxc_op_invoke(op, keys, vals, 2, &x.h, 1, &out.h, 1, &req),
              MXC_OK)
        << err();
    Arr plain = fused(1, prog, {&x});
    std::vector<double> p = read(plain), want(ov.size());
    for (size_t i = 0; i < ov.size(); ++i) want[i] = (double)(float)ov[i] + p[i];
    EXPECT_TRUE(close(read(out), want, 1e-6, 1e-6));

    // Output == input: every tile is read before it is written.
    mxc_ndarray same = x.h;
    ASSERT_EQ(mxc_op_invoke(op, keys, vals, 2, &x.h, 1, &same, 1, nullptr),
              MXC_OK)
        << err();
    EXPECT_TRUE(close(read(x), p, 0, 0));
  }
}

// Programs that run as float32 chains (every value in registers) against
// the operators one by one, bit for bit: the running value on either side
// of non-commutative operators, NaN, infinities and signed zeros in every
// input, sizes around the 64-element block.
TEST(FusedOp, ChainsMatchUnfusedBitForBit) {
  struct Step {
    std::string op;
    std::vector<std::string> args;  // "r" = the running value, "iK" = input
    Params p;
  };
  std::vector<std::vector<Step>> programs = {
      {{"_mul_scalar", {"i0"}, {{"scalar", "2.5"}}},
       {"sub", {"i1", "r"}, {}},
       {"maximum", {"r", "i2"}, {}},
       {"div", {"i1", "r"}, {}},
       {"minimum", {"i2", "r"}, {}},
       {"_rminus_scalar", {"r"}, {{"scalar", "0.1"}}}},
      {{"add", {"i0", "i1"}, {}},
       {"relu", {"r"}, {}},
       {"_maximum_scalar", {"r"}, {{"scalar", "0.3"}}},
       {"_minimum_scalar", {"r"}, {{"scalar", "0.7"}}},
       {"abs", {"r"}, {}},
       {"square", {"r"}, {}},
       {"Activation", {"r"}, {{"act_type", "relu"}}},
       {"_rdiv_scalar", {"r"}, {{"scalar", "3"}}},
       {"_div_scalar", {"r"}, {{"scalar", "7"}}},
       {"_minus_scalar", {"r"}, {{"scalar", "1e-3"}}},
       {"mul", {"r", "i2"}, {}},
       {"BlockGrad", {"r"}, {}},
       {"negative", {"r"}, {}}},
      // Scalars of -0: the chain must keep their sign (x * -0 is -0 for
      // positive x).
      {{"_mul_scalar", {"i0"}, {{"scalar", "-0"}}},
       {"mul", {"r", "i1"}, {}},
       {"_plus_scalar", {"r"}, {{"scalar", "-0"}}},
       {"mul", {"i2", "r"}, {}}},
  };
  for (int64_t n : {1, 15, 16, 63, 64, 65, 200, 70001}) {
    std::vector<std::vector<double>> vals;
    for (int k = 0; k < 3; ++k) {
      vals.push_back(uniform(n, -3, 3, 40 + k));
      double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40};
      for (int j = 0; j < 6 && j * 7 + k < n; ++j) vals[k][j * 7 + k] = special[j];
    }
    std::vector<Arr> in;
    for (auto &v : vals) in.push_back(make1(v));
    for (const auto &prog : programs) {
      std::string text;
      Arr cur;
      for (size_t k = 0; k < prog.size(); ++k) {
        const Step &st = prog[k];
        text += (k ? ";" : "") + st.op + "(";
        std::vector<const Arr *> args;
        for (size_t a = 0; a < st.args.size(); ++a) {
          bool run = st.args[a] == "r";
          text += (a ? "," : "") +
                  (run ? "r" + std::to_string(k - 1) : st.args[a]);
          args.push_back(run ? &cur : &in[st.args[a][1] - '0']);
        }
        for (auto &kv : st.p) text += "," + kv.first + "=" + kv.second;
        text += ")";
        cur = invoke(st.op, args, st.p);
      }
      SCOPED_TRACE(text + " n=" + std::to_string(n));
      Arr got = fused(3, text, {&in[0], &in[1], &in[2]});
      std::vector<double> g = read(got), w = read(cur);
      ASSERT_EQ(g.size(), w.size());
      for (size_t i = 0; i < g.size(); ++i) {
        float a = (float)g[i], b = (float)w[i];
        ASSERT_EQ(std::memcmp(&a, &b, 4) == 0 || (a != a && b != b), true)
            << "element " << i << ": " << a << " vs " << b;
      }
    }
  }
}

// The same value through a chain (registers) and through tiles (a clip
// that changes nothing keeps the program off the chain path).
TEST(FusedOp, ChainAndTilePathsAgree) {
  std::vector<double> xv = uniform(100003, -30, 30, 15);
  Arr x = make1(xv);
  std::vector<double> chain = read(fused(1, kSigmoidChain, {&x}));
  std::string tiled = std::string(kSigmoidChain) + ";clip(r5,a_min=-1,a_max=2)";
  EXPECT_TRUE(close(read(fused(1, tiled, {&x})), chain, 0, 0));
  std::vector<double> e1 = read(fused(1, "_mul_scalar(i0,scalar=2);exp(r0)", {&x}));
  std::vector<double> e2 = read(fused(
      1, "_mul_scalar(i0,scalar=2);exp(r0);_maximum_scalar(r1,scalar=-1);sin(i0);"
         "_mul_scalar(r3,scalar=0);add(r2,r4)",
      {&x}));
  EXPECT_TRUE(close(e2, e1, 0, 0));
}

TEST(FusedOp, LargeOutputsStreamAndAgree) {
  // Outputs of 8 MiB and more are written with streaming stores (on the
  // tile path: the clip keeps the program off the chain path, and float64
  // never takes it): an odd size, an output view starting 4 bytes into its
  // storage (unaligned), add mode (not streamed) and in place.
  const std::string prog =
      std::string(kSigmoidChain) + ";clip(r5,a_min=-1,a_max=2)";
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    int64_t n = (dt == MXC_DTYPE_FLOAT32 ? 2 : 1) * 1024 * 1024 + 4099;
    SCOPED_TRACE("dtype " + std::to_string(dt));
    std::vector<double> xv = uniform(n, -20, 20, 12);
    Arr x = make1(xv, dt);
    std::vector<double> want = sigmoid_ref(xv, dt == MXC_DTYPE_FLOAT32);
    double tol = dt == MXC_DTYPE_FLOAT32 ? 1e-6 : 1e-14;
    EXPECT_TRUE(close(read(fused(1, prog, {&x})), want, tol, tol));

    Arr big = make1(std::vector<double>(n + 1, 7.0), dt);
    mxc_ndarray view = nullptr;
    ASSERT_EQ(mxc_ndarray_slice(big.h, 1, n + 1, &view), MXC_OK) << err();
    Arr v(view);
    mxc_op op = nullptr;
    ASSERT_EQ(mxc_op_find(kFused, &op), MXC_OK);
    const char *keys[] = {"num_inputs", "program"};
    const char *vals[] = {"1", prog.c_str()};
    ASSERT_EQ(mxc_op_invoke(op, keys, vals, 2, &x.h, 1, &v.h, 1, nullptr),
              MXC_OK)
        << err();
    std::vector<double> all = read(big);
    EXPECT_EQ(all[0], 7.0);  // the element before the view is untouched
    all.erase(all.begin());
    EXPECT_TRUE(close(all, want, tol, tol));

    int req = MXC_REQ_ADD;
    ASSERT_EQ(mxc_op_invoke(op, keys, vals, 2, &x.h, 1, &v.h, 1, &req),
              MXC_OK)
        << err();
    std::vector<double> twice = read(v);
    for (auto &w : want) w *= 2;
    EXPECT_TRUE(close(twice, want, tol, tol));

    mxc_ndarray same = x.h;
    ASSERT_EQ(mxc_op_invoke(op, keys, vals, 2, &x.h, 1, &same, 1, nullptr),
              MXC_OK)
        << err();
    for (auto &w : want) w *= 0.5;
    EXPECT_TRUE(close(read(x), want, tol, tol));
  }
}

TEST(FusedOp, ManyLiveResultsShrinkTilesAndAgree) {
  // r0..r19 = exp(i_k * 0.1) all live at once, then summed: 20 scratch
  // buffers, so tiles shrink below the default size.
  const int k = 20;
  std::string prog;
  for (int i = 0; i < k; ++i) {
    prog += "_mul_scalar(i" + std::to_string(i) + ",scalar=0.1);";
  }
  for (int i = 0; i < k; ++i) {
    prog += "exp(r" + std::to_string(i) + ");";
  }
  int acc = 2 * k;  // index of the next result
  prog += "add(r" + std::to_string(k) + ",r" + std::to_string(k + 1) + ")";
  for (int i = 2; i < k; ++i) {
    prog += ";add(r" + std::to_string(acc) + ",r" + std::to_string(k + i) +
            ")";
    ++acc;
  }
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    std::vector<Arr> ins;
    std::vector<const Arr *> ptrs;
    std::vector<std::vector<double>> vals;
    for (int i = 0; i < k; ++i) {
      vals.push_back(uniform(70001, -5, 5, 100 + i));
      ins.push_back(make1(vals.back(), dt));
    }
    for (auto &a : ins) ptrs.push_back(&a);
    std::vector<double> got = read(fused(k, prog, ptrs));
    std::vector<double> want(70001, 0.0);
    for (size_t j = 0; j < want.size(); ++j) {
      for (int i = 0; i < k; ++i) {
        double v = dt == MXC_DTYPE_FLOAT32 ? (double)(float)vals[i][j]
                                           : vals[i][j];
        want[j] += std::exp(v * 0.1);
      }
    }
    EXPECT_TRUE(close(got, want, dt == MXC_DTYPE_FLOAT32 ? 1e-5 : 1e-13, 0));
  }
}

TEST(FusedOp, LongestProgramAndOneTooMany) {
  std::string prog = "negative(i0)";
  for (int i = 1; i < 64; ++i) prog += ";negative(r" + std::to_string(i - 1) + ")";
  Arr x = make1({1.5, -2});
  EXPECT_TRUE(close(read(fused(1, prog, {&x})), {1.5, -2}, 0, 0));
  prog += ";negative(r63)";
  int rc = 0;
  Arr bad = fused(1, prog, {&x}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("more than 64 instructions"), std::string::npos)
      << err();
}

TEST(FusedOp, IntegerAndDtypeRulesFollowTheOperators) {
  // int32 runs each operator's own kernel: truncated scalars, integer
  // division, exactly as unfused.
  std::vector<double> xv = {-7, -3, -1, 0, 1, 2, 5, 100, 12345};
  Arr x = make1(xv, MXC_DTYPE_INT32);
  std::string prog =
      "_plus_scalar(i0,scalar=2.7);_mul_scalar(r0,scalar=3);"
      "_div_scalar(r1,scalar=2);abs(r2);square(r3)";
  Arr got = fused(1, prog, {&x});
  Arr a = invoke("_plus_scalar", {&x}, {{"scalar", "2.7"}});
  Arr b = invoke("_mul_scalar", {&a}, {{"scalar", "3"}});
  Arr c = invoke("_div_scalar", {&b}, {{"scalar", "2"}});
  Arr d = invoke("abs", {&c});
  Arr e = invoke("square", {&d});
  EXPECT_TRUE(close(read(got), read(e), 0, 0));

  int rc = 0;
  Arr bad = fused(1, "_plus_scalar(i0,scalar=1);sigmoid(r0)", {&x}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("instruction 1"), std::string::npos) << err();
  EXPECT_NE(err().find("sigmoid"), std::string::npos) << err();

  Arr f = make1({1, 2, 3, 4, 5, 6, 7, 8, 9}, MXC_DTYPE_FLOAT32);
  Arr mixed = fused(2, "add(i0,i1)", {&f, &x}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE) << err();
  Arr g = make1({1, 2});
  Arr shapes = fused(2, "add(i0,i1)", {&f, &g}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE) << err();
}

TEST(FusedOp, BadProgramsAreRejectedWithReasons) {
  struct Bad {
    const char *num_inputs;
    std::string program;
    const char *why;
  };
  std::vector<Bad> bad = {
      {"1", "", "expected <operator>(<arguments>)"},
      {"1", "exp(i0);", "expected <operator>(<arguments>)"},
      {"1", "exp i0", "expected <operator>(<arguments>)"},
      {"1", "exp(i0)x", "text follows"},
      {"1", "nosuchop(i0)", "unknown operator"},
      {"2", "broadcast_add(i0,i1)", "not a fusible"},
      {"1", "FullyConnected(i0)", "not a fusible"},
      {"1", "_fused_elemwise(i0)", "not a fusible"},
      {"2", "add(i0)", "1 arguments; 'add' takes 2"},
      {"1", "exp(i0,i0)", "2 arguments; 'exp' takes 1"},
      {"1", "exp(x0)", "not i<k>"},
      {"1", "exp(i0z)", "not i<k>"},
      {"1", "exp(i1)", "beyond num_inputs"},
      {"1", "exp(r0)", "not computed before"},
      {"1", "exp(i0);exp(r1)", "not computed before"},
      {"2", "exp(i0)", "never uses input i1"},
      {"1", "exp(i0);exp(i0)", "never uses result r0"},
      {"1", "_mul_scalar(i0)", "required parameter 'scalar'"},
      {"1", "_mul_scalar(i0,scalar=abc)", "invalid value 'abc'"},
      {"1", "exp(i0,foo=1)", "unknown parameter 'foo'"},
      {"1", "Activation(i0,act_type=swish)", "invalid value 'swish'"},
      {"0", "exp(i0)", "out of range"},
      {"33", "exp(i0)", "out of range"},
      {"1", std::string(5000, 'x'), "at most 4095"},
  };
  Arr x = make1({1, 2, 3});
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.program.substr(0, 60));
    int rc = 0;
    mxc_op op = nullptr;
    ASSERT_EQ(mxc_op_find(kFused, &op), MXC_OK);
    const char *keys[] = {"num_inputs", "program"};
    const char *vals[] = {b.num_inputs, b.program.c_str()};
    int n_out = -1;
    rc = mxc_op_num_outputs(op, keys, vals, 2, &n_out);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(n_out, -1);
    EXPECT_NE(err().find(b.why), std::string::npos) << err();
    EXPECT_NE(err().find(kFused), std::string::npos) << err();
  }
  // A missing program.
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(kFused, &op), MXC_OK);
  const char *k1[] = {"num_inputs"};
  const char *v1[] = {"1"};
  int n_out = -1;
  EXPECT_EQ(mxc_op_num_outputs(op, k1, v1, 1, &n_out), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'program' is missing"), std::string::npos) << err();
}

TEST(FusedOp, ConcurrentCallersShareThePool) {
  // Large calls from several threads at once: one borrows the pool, the
  // others run alone; all results must be right (and TSan-clean).
  std::vector<double> xv = uniform(400000, -8, 8, 11);
  std::vector<double> want = sigmoid_ref(xv, true);
  Arr x = make1(xv);
  std::vector<std::thread> ts;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep) {
        Arr y = fused(1, kSigmoidChain, {&x});
        std::vector<double> got = read(y);
        bool good = got.size() == want.size();
        for (size_t i = 0; good && i < got.size(); ++i) {
          good = std::fabs(got[i] - want[i]) <= 1e-6;
        }
        ok[t] += good;
      }
    });
  }
  for (auto &t : ts) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 3) << "thread " << t;
  // More engine workers: more helpers for one call.
  int prev = 0;
  ASSERT_EQ(mxc_get_num_threads(&prev), MXC_OK);
  ASSERT_EQ(mxc_set_num_threads(4), MXC_OK) << err();
  EXPECT_TRUE(close(read(fused(1, kSigmoidChain, {&x})), want, 1e-6, 1e-6));
  ASSERT_EQ(mxc_set_num_threads(prev), MXC_OK) << err();
}

}  // namespace
