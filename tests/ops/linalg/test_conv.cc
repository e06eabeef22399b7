// Convolution and Deconvolution against direct nested-loop references
// written here (1-D, 2-D, 3-D; stride, pad, dilate, groups), the adjoint
// identity <conv(x), y> == <x, deconv(y)>, finite-difference gradients,
// shape inference from data alone, and bad input.
#include <string>

#include "tests/ops/linalg/linalg_test_util.h"

using namespace mxct;

namespace {

std::string tup(const Shape &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

// One convolution configuration. Spatial tuples have kernel.size() entries.
struct Cfg {
  Shape data;  // (N, C, spatial...)
  Shape kernel, stride, pad, dilate;
  int64_t num_filter, groups;
  bool bias;
  Shape adj;  // Deconvolution only
};

Params params_of(const Cfg &c, bool deconv = false) {
  Params p = {{"kernel", tup(c.kernel)},
              {"stride", tup(c.stride)},
              {"pad", tup(c.pad)},
              {"dilate", tup(c.dilate)},
              {"num_filter", std::to_string(c.num_filter)},
              {"num_group", std::to_string(c.groups)},
              {"no_bias", c.bias ? "false" : "true"}};
  if (deconv && !c.adj.empty()) p.push_back({"adj", tup(c.adj)});
  return p;
}

// Spatial extents padded to 3 with leading 1s (kernel 1, stride 1, pad 0,
// dilate 1), as arrays indexed [0..3).
struct Sp3 {
  int64_t in[3], k[3], s[3], p[3], d[3], out[3];
};

Sp3 sp3(const Cfg &c, const Shape &in_sp, const Shape &out_sp) {
  Sp3 r;
  size_t n = c.kernel.size(), lead = 3 - n;
  for (size_t i = 0; i < 3; ++i) {
    bool real = i >= lead;
    size_t j = i - lead;
    r.in[i] = real ? in_sp[j] : 1;
    r.out[i] = real ? out_sp[j] : 1;
    r.k[i] = real ? c.kernel[j] : 1;
    r.s[i] = real ? c.stride[j] : 1;
    r.p[i] = real ? c.pad[j] : 0;
    r.d[i] = real ? c.dilate[j] : 1;
  }
  return r;
}

Shape conv_out_shape(const Cfg &c) {
  Shape o = {c.data[0], c.num_filter};
  for (size_t i = 0; i < c.kernel.size(); ++i) {
    int64_t span = c.dilate[i] * (c.kernel[i] - 1) + 1;
    o.push_back((c.data[2 + i] + 2 * c.pad[i] - span) / c.stride[i] + 1);
  }
  return o;
}

Shape deconv_out_shape(const Cfg &c) {
  Shape o = {c.data[0], c.num_filter};
  for (size_t i = 0; i < c.kernel.size(); ++i) {
    int64_t span = c.dilate[i] * (c.kernel[i] - 1) + 1;
    int64_t adj = c.adj.empty() ? 0 : c.adj[i];
    o.push_back(c.stride[i] * (c.data[2 + i] - 1) + span - 2 * c.pad[i] + adj);
  }
  return o;
}

Shape conv_weight_shape(const Cfg &c) {
  Shape w = {c.num_filter, c.data[1] / c.groups};
  w.insert(w.end(), c.kernel.begin(), c.kernel.end());
  return w;
}

Shape deconv_weight_shape(const Cfg &c) {
  Shape w = {c.data[1], c.num_filter / c.groups};
  w.insert(w.end(), c.kernel.begin(), c.kernel.end());
  return w;
}

// y[n, f, o] = b[f] + sum_{c in f's group, taps t} x[n, c, o*s - p + t*d]
//              * w[f, c - group start, t]
std::vector<double> ref_conv(const Cfg &c, const std::vector<double> &x,
                             const std::vector<double> &w,
                             const std::vector<double> *b) {
  Shape os = conv_out_shape(c);
  Sp3 g = sp3(c, Shape(c.data.begin() + 2, c.data.end()),
              Shape(os.begin() + 2, os.end()));
  int64_t N = c.data[0], C = c.data[1], F = c.num_filter;
  int64_t Cg = C / c.groups, Fg = F / c.groups;
  int64_t in_n = g.in[0] * g.in[1] * g.in[2],
          out_n = g.out[0] * g.out[1] * g.out[2];
  int64_t k_n = g.k[0] * g.k[1] * g.k[2];
  std::vector<double> y((size_t)(N * F * out_n), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double s = b ? (*b)[(size_t)f] : 0.0;
            for (int64_t cl = 0; cl < Cg; ++cl) {
              int64_t ch = f / Fg * Cg + cl;
              for (int64_t t0 = 0; t0 < g.k[0]; ++t0)
                for (int64_t t1 = 0; t1 < g.k[1]; ++t1)
                  for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
                    int64_t i0 = o0 * g.s[0] - g.p[0] + t0 * g.d[0];
                    int64_t i1 = o1 * g.s[1] - g.p[1] + t1 * g.d[1];
                    int64_t i2 = o2 * g.s[2] - g.p[2] + t2 * g.d[2];
                    if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] ||
                        i2 < 0 || i2 >= g.in[2])
                      continue;
                    double xv = x[(size_t)((n * C + ch) * in_n +
                                           (i0 * g.in[1] + i1) * g.in[2] + i2)];
                    double wv = w[(size_t)((f * Cg + cl) * k_n +
                                           (t0 * g.k[1] + t1) * g.k[2] + t2)];
                    s += xv * wv;
                  }
            }
            y[(size_t)((n * F + f) * out_n + (o0 * g.out[1] + o1) * g.out[2] +
                       o2)] = s;
          }
  return y;
}

// Scatter form of the transposed convolution: every data element x[n, c, q]
// adds x * w[c, f - group start, t] to y[n, f, q*s - p + t*d].
std::vector<double> ref_deconv(const Cfg &c, const Shape &out_shape,
                               const std::vector<double> &x,
                               const std::vector<double> &w,
                               const std::vector<double> *b) {
  Sp3 g = sp3(c, Shape(c.data.begin() + 2, c.data.end()),
              Shape(out_shape.begin() + 2, out_shape.end()));
  int64_t N = c.data[0], C = c.data[1], F = c.num_filter;
  int64_t Cg = C / c.groups, Fg = F / c.groups;
  int64_t in_n = g.in[0] * g.in[1] * g.in[2],
          out_n = g.out[0] * g.out[1] * g.out[2];
  int64_t k_n = g.k[0] * g.k[1] * g.k[2];
  std::vector<double> y((size_t)(N * F * out_n), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t fl = 0; fl < Fg; ++fl) {
        int64_t f = ch / Cg * Fg + fl;
        for (int64_t q0 = 0; q0 < g.in[0]; ++q0)
          for (int64_t q1 = 0; q1 < g.in[1]; ++q1)
            for (int64_t q2 = 0; q2 < g.in[2]; ++q2) {
              double xv = x[(size_t)((n * C + ch) * in_n +
                                     (q0 * g.in[1] + q1) * g.in[2] + q2)];
              for (int64_t t0 = 0; t0 < g.k[0]; ++t0)
                for (int64_t t1 = 0; t1 < g.k[1]; ++t1)
                  for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
                    int64_t j0 = q0 * g.s[0] - g.p[0] + t0 * g.d[0];
                    int64_t j1 = q1 * g.s[1] - g.p[1] + t1 * g.d[1];
                    int64_t j2 = q2 * g.s[2] - g.p[2] + t2 * g.d[2];
                    if (j0 < 0 || j0 >= g.out[0] || j1 < 0 || j1 >= g.out[1] ||
                        j2 < 0 || j2 >= g.out[2])
                      continue;
                    double wv = w[(size_t)((ch * Fg + fl) * k_n +
                                           (t0 * g.k[1] + t1) * g.k[2] + t2)];
                    y[(size_t)((n * F + f) * out_n +
                               (j0 * g.out[1] + j1) * g.out[2] + j2)] +=
                        xv * wv;
                  }
            }
      }
  if (b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t f = 0; f < F; ++f)
        for (int64_t i = 0; i < out_n; ++i)
          y[(size_t)((n * F + f) * out_n + i)] += (*b)[(size_t)f];
  return y;
}

const Cfg kConvCases[] = {
    // 1-D: stride, pad, dilate, groups
    {{2, 4, 9}, {3}, {2}, {1}, {2}, 6, 2, true, {}},
    // 2-D: mixed strides and dilations
    {{2, 3, 7, 6}, {3, 2}, {2, 1}, {1, 0}, {1, 2}, 4, 1, true, {}},
    // 2-D groups, same padding
    {{3, 4, 5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 6, 2, false, {}},
    // 3-D
    {{2, 2, 4, 5, 4},
     {2, 3, 2},
     {1, 2, 1},
     {1, 1, 0},
     {2, 1, 1},
     3,
     1,
     true,
     {}},
    // 1x1 pointwise (no im2col)
    {{2, 3, 4, 4}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 5, 1, true, {}},
    // many samples per GEMM chunk, ending with a one-sample chunk
    {{65, 2, 10, 10}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 3, 1, true, {}},
    // LeNet-like
    {{20, 1, 12, 12}, {5, 5}, {1, 1}, {0, 0}, {1, 1}, 4, 1, true, {}},
    // many positions per image: one GEMM per image, several per chunk
    {{6, 3, 20, 20}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 4, 1, true, {}},
};

class Conv : public ::testing::TestWithParam<Cfg> {};

TEST_P(Conv, MatchesDirectReference) {
  const Cfg &c = GetParam();
  Shape ws = conv_weight_shape(c);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr x = make(c.data, uniform(numel(c.data), -1, 1, 1), dt);
    Arr w = make(ws, uniform(numel(ws), -1, 1, 2), dt);
    Arr b = make({c.num_filter}, uniform(c.num_filter, -1, 1, 3), dt);
    std::vector<const Arr *> ins = {&x, &w};
    if (c.bias) ins.push_back(&b);
    auto out = invoke("Convolution", ins, params_of(c));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), conv_out_shape(c));
    auto rb = read(b);
    expect_close(read(out[0]),
                 ref_conv(c, read(x), read(w), c.bias ? &rb : nullptr), dt,
                 "Convolution " + tup(c.data), 4.0);
  }
}

TEST_P(Conv, DeconvolutionMatchesScatterReference) {
  Cfg c = GetParam();
  c.adj.assign(c.kernel.size(), 0);
  if (c.stride[0] > 1) c.adj[0] = 1;  // exercise adj where allowed
  Shape ws = deconv_weight_shape(c), os = deconv_out_shape(c);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr x = make(c.data, uniform(numel(c.data), -1, 1, 4), dt);
    Arr w = make(ws, uniform(numel(ws), -1, 1, 5), dt);
    Arr b = make({c.num_filter}, uniform(c.num_filter, -1, 1, 6), dt);
    std::vector<const Arr *> ins = {&x, &w};
    if (c.bias) ins.push_back(&b);
    auto out = invoke("Deconvolution", ins, params_of(c, true));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), os);
    auto rb = read(b);
    expect_close(read(out[0]),
                 ref_deconv(c, os, read(x), read(w), c.bias ? &rb : nullptr),
                 dt, "Deconvolution " + tup(c.data), 4.0);
  }
}

// Deconvolution is the adjoint of Convolution: with the same weight array
// (conv (F, C/g, k) is deconv's (C_in = F, num_filter/g = C/g, k)) and adj
// chosen so that deconv's output has x's shape, <conv(x), y> = <x, deconv(y)>.
TEST_P(Conv, DeconvolutionIsAdjointOfConvolution) {
  const Cfg &c = GetParam();
  Shape ys = conv_out_shape(c), ws = conv_weight_shape(c);
  Arr x = make(c.data, uniform(numel(c.data), -1, 1, 7), MXC_DTYPE_FLOAT64);
  Arr w = make(ws, uniform(numel(ws), -1, 1, 8), MXC_DTYPE_FLOAT64);
  Arr y = make(ys, uniform(numel(ys), -1, 1, 9), MXC_DTYPE_FLOAT64);
  Cfg cc = c;
  cc.bias = false;
  auto cx = invoke("Convolution", {&x, &w}, params_of(cc));
  Cfg dc = cc;
  dc.data = ys;
  dc.num_filter = c.data[1];
  dc.adj.clear();
  for (size_t i = 0; i < c.kernel.size(); ++i) {
    int64_t span = c.dilate[i] * (c.kernel[i] - 1) + 1;
    dc.adj.push_back((c.data[2 + i] + 2 * c.pad[i] - span) % c.stride[i]);
  }
  auto dy = invoke("Deconvolution", {&y, &w}, params_of(dc, true));
  ASSERT_EQ(dy.size(), 1u);
  ASSERT_EQ(dy[0].shape(), c.data);
  double lhs = inner(read(cx[0]), read(y)), rhs = inner(read(x), read(dy[0]));
  EXPECT_NEAR(lhs, rhs, 1e-10 * (1 + std::fabs(lhs)));
}

INSTANTIATE_TEST_SUITE_P(Cases, Conv, ::testing::ValuesIn(kConvCases));

TEST(ConvExtra, TargetShapeDerivesPadAndAdj) {
  Cfg c = {{1, 2, 4, 3}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, 2, 1, false, {}};
  Arr x = make(c.data, uniform(numel(c.data), -1, 1, 10), MXC_DTYPE_FLOAT64);
  Shape ws = deconv_weight_shape(c);
  Arr w = make(ws, uniform(numel(ws), -1, 1, 11), MXC_DTYPE_FLOAT64);
  Params p = params_of(c, true);
  p.push_back({"target_shape", "(8,6)"});
  auto out = invoke("Deconvolution", {&x, &w}, p);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 8, 6}));
  // Full extents 9 and 7: one unit to remove on each axis, so pad 1 and
  // adj 1 (an odd total puts its remainder in adj).
  Cfg r = c;
  r.pad = {1, 1};
  r.adj = {1, 1};
  ASSERT_EQ(deconv_out_shape(r), (Shape{1, 2, 8, 6}));
  expect_close(read(out[0]),
               ref_deconv(r, {1, 2, 8, 6}, read(x), read(w), nullptr),
               MXC_DTYPE_FLOAT64, "target_shape");
  int rc = 0;
  p.back().second = "(10,6)";
  invoke("Deconvolution", {&x, &w}, p, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("target_shape"), std::string::npos) << err();
}

TEST(ConvExtra, WriteModeAdd) {
  Cfg c = {{2, 2, 5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 3, 1, true, {}};
  Shape ws = conv_weight_shape(c), os = conv_out_shape(c);
  Arr x = make(c.data, uniform(numel(c.data), -1, 1, 12), MXC_DTYPE_FLOAT64);
  Arr w = make(ws, uniform(numel(ws), -1, 1, 13), MXC_DTYPE_FLOAT64);
  Arr b = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  auto base = uniform(numel(os), -1, 1, 14);
  Arr o = make(os, base, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("Convolution", &op), MXC_OK);
  auto p = params_of(c);
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  mxc_ndarray ins[3] = {x.h, w.h, b.h}, outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), ins, 3, outs,
                          1, req),
            MXC_OK)
      << err();
  auto rb = read(b);
  auto want = ref_conv(c, read(x), read(w), &rb);
  for (size_t i = 0; i < want.size(); ++i) want[i] += base[i];
  expect_close(read(o), want, MXC_DTYPE_FLOAT64, "req add");
}

TEST(ConvExtra, ManyConcurrentCalls) {
  // Independent convolutions run in parallel on the engine's workers and
  // share the temp spaces; results must not interfere.
  Cfg c = {{4, 3, 9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, 1, true, {}};
  Shape ws = conv_weight_shape(c);
  std::vector<Arr> xs, outs;
  Arr w = make(ws, uniform(numel(ws), -1, 1, 15), MXC_DTYPE_FLOAT32);
  Arr b = make({4}, uniform(4, -1, 1, 16), MXC_DTYPE_FLOAT32);
  for (unsigned i = 0; i < 16; ++i)
    xs.push_back(make(c.data, uniform(numel(c.data), -1, 1, 100 + i),
                      MXC_DTYPE_FLOAT32));
  for (auto &x : xs) {
    auto o = invoke("Convolution", {&x, &w, &b}, params_of(c));
    outs.push_back(std::move(o[0]));
  }
  auto rb = read(b);
  for (size_t i = 0; i < xs.size(); ++i)
    expect_close(read(outs[i]), ref_conv(c, read(xs[i]), read(w), &rb),
                 MXC_DTYPE_FLOAT32, "concurrent", 4.0);
}

// ---- gradients ----

void conv_grad(const std::string &op, const Cfg &c, unsigned seed) {
  bool de = op == "Deconvolution";
  Shape ws = de ? deconv_weight_shape(c) : conv_weight_shape(c);
  std::vector<Shape> shapes = {c.data, ws};
  std::vector<std::vector<double>> vals = {uniform(numel(c.data), -1, 1, seed),
                                           uniform(numel(ws), -1, 1, seed + 1)};
  if (c.bias) {
    shapes.push_back({c.num_filter});
    vals.push_back(uniform(c.num_filter, -1, 1, seed + 2));
  }
  grad_check(op, shapes, vals, params_of(c, de));
}

TEST(ConvGrad, Convolution) {
  conv_grad("Convolution", {{2, 2, 7}, {3}, {2}, {1}, {2}, 4, 2, true, {}}, 1);
  conv_grad("Convolution",
            {{1, 2, 5, 4}, {3, 2}, {2, 1}, {1, 1}, {1, 2}, 2, 1, true, {}}, 2);
  conv_grad("Convolution",
            {{2, 2, 3, 3, 3},
             {2, 2, 2},
             {1, 1, 1},
             {0, 1, 0},
             {1, 1, 1},
             2,
             2,
             false,
             {}},
            3);
  conv_grad("Convolution",
            {{2, 3, 2, 2}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, 1, true, {}}, 4);
  // several samples per chunk
  conv_grad("Convolution",
            {{3, 2, 3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 2, 1, true, {}}, 5);
}

TEST(ConvGrad, Deconvolution) {
  conv_grad("Deconvolution", {{2, 2, 4}, {3}, {2}, {1}, {1}, 4, 2, true, {1}},
            6);
  conv_grad("Deconvolution",
            {{1, 2, 3, 2}, {2, 3}, {2, 1}, {0, 1}, {1, 1}, 2, 1, true, {}}, 7);
  conv_grad("Deconvolution",
            {{1, 2, 2, 2, 2},
             {2, 2, 2},
             {1, 1, 1},
             {0, 0, 0},
             {1, 1, 2},
             2,
             1,
             false,
             {}},
            8);
  conv_grad("Deconvolution",
            {{3, 2, 2, 2}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 2, 2, true, {}}, 9);
}

// ---- shape inference from data alone ----

TEST(ConvInfer, WeightAndBiasFromData) {
  auto r = infer_from_data(
      "Convolution",
      {{"kernel", "(3,5)"}, {"num_filter", "8"}, {"num_group", "2"}}, 3,
      {4, 6, 10, 12});
  ASSERT_EQ(r.rc, MXC_OK) << r.msg;
  EXPECT_EQ(r.in[1], (Shape{8, 3, 3, 5}));
  EXPECT_EQ(r.in[2], (Shape{8}));
  EXPECT_EQ(r.out[0], (Shape{4, 8, 8, 8}));
  r = infer_from_data("Deconvolution",
                      {{"kernel", "(3,)"},
                       {"num_filter", "4"},
                       {"num_group", "2"},
                       {"stride", "(2,)"},
                       {"no_bias", "true"}},
                      2, {1, 6, 5});
  ASSERT_EQ(r.rc, MXC_OK) << r.msg;
  EXPECT_EQ(r.in[1], (Shape{6, 2, 3}));
  EXPECT_EQ(r.out[0], (Shape{1, 4, 11}));
}

// ---- bad input ----

TEST(ConvBad, Errors) {
  Arr x = make({1, 2, 3, 3}, uniform(18, 0, 1));
  Arr w = make({2, 2, 5, 5}, uniform(100, 0, 1));
  Arr w3 = make({2, 2, 3, 3}, uniform(36, 0, 1));
  Arr b = make({2}, {0, 0});
  int rc = 0;
  // kernel larger than the padded input
  invoke("Convolution", {&x, &w, &b},
         {{"kernel", "(5,5)"}, {"num_filter", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("larger than the padded input"), std::string::npos)
      << err();
  // ... but fine once padded
  invoke("Convolution", {&x, &w, &b},
         {{"kernel", "(5,5)"}, {"num_filter", "2"}, {"pad", "(1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_OK) << err();
  // num_filter not divisible by num_group
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "3"}, {"num_group", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_filter (3) is not divisible by num_group (2)"),
            std::string::npos)
      << err();
  // data channels not divisible by num_group
  Arr x3 = make({1, 3, 3, 3}, uniform(27, 0, 1));
  invoke("Convolution", {&x3, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"num_group", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("3 channels"), std::string::npos) << err();
  // layouts
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"layout", "NHWC"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("layout 'NHWC' is not supported"), std::string::npos)
      << err();
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"layout", "HWCN"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("layout"), std::string::npos) << err();
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"layout", "NCW"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("does not match"), std::string::npos) << err();
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"layout", "NCHW"}}, &rc);
  EXPECT_EQ(rc, MXC_OK) << err();
  // no_bias with three inputs
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"no_bias", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 3 inputs; expected 2"), std::string::npos) << err();
  // weight of the wrong shape names both shapes
  invoke("Convolution", {&x, &w, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(2,2,5,5)"), std::string::npos) << err();
  EXPECT_NE(err().find("(2,2,3,3)"), std::string::npos) << err();
  // tuple lengths and ranks
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"stride", "(1,1,1)"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("stride"), std::string::npos) << err();
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(1,1,1,1)"}, {"num_filter", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("Convolution", {&x, &w3, &b},
         {{"kernel", "(3,)"}, {"num_filter", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("must have 3 axes"), std::string::npos) << err();
  invoke("Convolution", {&x, &w3, &b}, {{"kernel", "(3,3)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_filter"), std::string::npos) << err();
  // dtype
  Arr xi = make({1, 2, 3, 3}, uniform(18, 0, 1), MXC_DTYPE_INT32);
  Arr wi = make({2, 2, 3, 3}, uniform(36, 0, 1), MXC_DTYPE_INT32);
  Arr bi = make({2}, {0, 0}, MXC_DTYPE_INT32);
  invoke("Convolution", {&xi, &wi, &bi},
         {{"kernel", "(3,3)"}, {"num_filter", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  // Deconvolution: adj must stay below the stride
  Arr wd = make({2, 2, 3, 3}, uniform(36, 0, 1));
  invoke("Deconvolution", {&x, &wd, &b},
         {{"kernel", "(3,3)"},
          {"num_filter", "2"},
          {"adj", "(1,1)"},
          {"no_bias", "false"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("adj"), std::string::npos) << err();
  invoke("Deconvolution", {&x, &wd, &b},
         {{"kernel", "(3,3)"},
          {"num_filter", "2"},
          {"pad", "(3,3)"},
          {"no_bias", "false"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
}

}  // namespace

// The backward kernel splits the batch into one part per thread, each in
// several chunks when images are large, and sums per-part weight
// gradients. Compare both gradients with direct sums for batches that
// split unevenly, for the plain-window fast path (no padding, stride 1)
// and the general im2col path.
static std::vector<double> ref_conv_grads(const Cfg &c,
                                          const std::vector<double> &x,
                                          const std::vector<double> &w,
                                          const std::vector<double> &dy,
                                          std::vector<double> *dx) {
  Shape os = conv_out_shape(c);
  Sp3 g = sp3(c, Shape(c.data.begin() + 2, c.data.end()),
              Shape(os.begin() + 2, os.end()));
  int64_t N = c.data[0], C = c.data[1], F = c.num_filter;
  int64_t Cg = C / c.groups, Fg = F / c.groups;
  int64_t in_n = g.in[0] * g.in[1] * g.in[2];
  int64_t out_n = g.out[0] * g.out[1] * g.out[2];
  int64_t k_n = g.k[0] * g.k[1] * g.k[2];
  std::vector<double> dw(w.size(), 0.0);
  dx->assign(x.size(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double d = dy[(size_t)((n * F + f) * out_n +
                                   (o0 * g.out[1] + o1) * g.out[2] + o2)];
            for (int64_t cl = 0; cl < Cg; ++cl) {
              int64_t ch = f / Fg * Cg + cl;
              for (int64_t t0 = 0; t0 < g.k[0]; ++t0)
                for (int64_t t1 = 0; t1 < g.k[1]; ++t1)
                  for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
                    int64_t i0 = o0 * g.s[0] - g.p[0] + t0 * g.d[0];
                    int64_t i1 = o1 * g.s[1] - g.p[1] + t1 * g.d[1];
                    int64_t i2 = o2 * g.s[2] - g.p[2] + t2 * g.d[2];
                    if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] ||
                        i2 < 0 || i2 >= g.in[2])
                      continue;
                    size_t xi = (size_t)((n * C + ch) * in_n +
                                         (i0 * g.in[1] + i1) * g.in[2] + i2);
                    size_t wi = (size_t)((f * Cg + cl) * k_n +
                                         (t0 * g.k[1] + t1) * g.k[2] + t2);
                    dw[wi] += d * x[xi];
                    (*dx)[xi] += d * w[wi];
                  }
            }
          }
  return dw;
}

TEST(ConvExtra, BackwardSplitsBatchExactly) {
  const Cfg cases[] = {
      // large images: several chunks per part; plain windows
      {{5, 8, 20, 20}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 4, 1, true, {}},
      // the general walk (padding, stride), groups, odd batch
      {{7, 4, 16, 15}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, 6, 2, true, {}},
      // batch of one: a single part
      {{1, 3, 9, 9}, {5, 5}, {1, 1}, {0, 0}, {1, 1}, 2, 1, true, {}},
  };
  for (const Cfg &c : cases) {
    Shape ws = conv_weight_shape(c), os = conv_out_shape(c);
    auto xv = uniform(numel(c.data), -1, 1, 21);
    auto wv = uniform(numel(ws), -1, 1, 22);
    auto dyv = uniform(numel(os), -1, 1, 23);
    Arr x = make(c.data, xv, MXC_DTYPE_FLOAT64);
    Arr w = make(ws, wv, MXC_DTYPE_FLOAT64);
    Arr b = make({c.num_filter}, uniform(c.num_filter, -1, 1, 24),
                 MXC_DTYPE_FLOAT64);
    Arr dy = make(os, dyv, MXC_DTYPE_FLOAT64);
    auto out = invoke_count("_backward_Convolution", {&dy, &x, &w, &b},
                            params_of(c), 3);
    ASSERT_EQ(out.size(), 3u);
    std::vector<double> want_dx;
    auto want_dw = ref_conv_grads(c, xv, wv, dyv, &want_dx);
    expect_close(read(out[0]), want_dx, MXC_DTYPE_FLOAT64,
                 "ddata " + tup(c.data));
    expect_close(read(out[1]), want_dw, MXC_DTYPE_FLOAT64,
                 "dweight " + tup(c.data));
    std::vector<double> want_db((size_t)c.num_filter, 0.0);
    int64_t per = numel(os) / (c.data[0] * c.num_filter);
    for (size_t i = 0; i < dyv.size(); ++i)
      want_db[(size_t)((int64_t)i / per % c.num_filter)] += dyv[i];
    expect_close(read(out[2]), want_db, MXC_DTYPE_FLOAT64,
                 "dbias " + tup(c.data));
  }
}
