// Conformance cases of backends/cuda/nn3.h on the GPU against the CPU
// operators with the same inputs (outputs poisoned before a write; write,
// add and NULL modes; hidden outputs compared): LayerNorm and
// L2Normalization (every mode) with their gradients, including a
// transformer's (64 x 128, 768) rows; Dropout (training, inference,
// always, shared axes; the same seed before the CPU's and the GPU's call,
// so the same slice) and its gradient; argmax and argmin (ties, NaN,
// every axis and None); SequenceMask, SequenceLast, SequenceReverse and
// their gradients (lengths fractional, 0, beyond T, NaN; axis 0 and 1);
// sort, argsort, topk (every ret_typ, both directions, ties, NaN, -0 and
// +0, axis None; 1000-wide rows of a classifier's scores) and the
// gradients of sort and topk; Pad (constant, edge, reflect, an image
// batch's spatial padding) and Crop (offset, centred, crop_like) with
// their gradients; GridGenerator (affine, warp), BilinearSampler and
// SpatialTransformer with their gradients (backends/cuda/samp.h).
//
// Tolerance: bitwise, except LayerNorm's. The kernels run nn3_plan.h's
// and sort_plan.h's rules, which perform
// the CPU's float and double operations in its order with one rounding
// each (-fmad=false), and IEEE sqrt and division are correctly rounded
// on both devices; Dropout's uniforms are integer operations then exact
// double scaling. The host test tests/gpu:test_cuda_nn3_plan checks the
// same rules bitwise against the CPU's reference kernels on every machine.
// LayerNorm along the last axis runs on oneDNN on the CPU (float sums in
// its own order; backends/onednn/ln.c), the GPU follows the reference's
// double sums: 1024 float ulps of max(|value|, 1), about 1.2e-4 relative,
// which covers a float sum's rounding over a 768-wide row and dgamma's
// 8192-row sums (a float sum errs by about sqrt(n) eps relative).
// The samplers' ddata (_backward_BilinearSampler,
// _backward_SpatialTransformer) is summed with atomic adds in an order
// that varies between runs: the same float terms as the CPU's, added in
// another order: 64 float ulps of max(|value|, 1) (a pixel collects a few
// taps of a few grid points: (m - 1) eps of the terms' magnitude); their
// dgrid and dloc, and every forward, are bitwise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/typed_cases.h"

namespace {

using mxct::CompareTyped;
using mxct::Dims;
using mxct::Kv;
using mxct::RandArr;
using mxct::TArr;

const int f32 = MXC_DTYPE_FLOAT32, W = MXC_REQ_WRITE, A = MXC_REQ_ADD,
          N = MXC_REQ_NULL;

// The CPU-only validation leaves out the large shapes (as
// conformance_fill.cc's).
bool SkipOnCpu(int dev, const Dims &d) {
  return dev == MXC_DEVICE_CPU && mxct::Numel(d) > 20000;
}

TArr Floats(const Dims &d, const std::vector<float> &v) {
  std::vector<double> dv(v.begin(), v.end());
  return {f32, d, mxct::CastBytes(f32, dv)};
}

// ---- LayerNorm ----

const int kLnUlps = 1024;  // oneDNN's float sums on the CPU (see the top)

void LnCases(bool bwd, int dev, std::mt19937 *g) {
  const std::vector<std::pair<Kv, Dims>> cases = {
      {{}, {2, 5, 7}},
      {{{"axis", "1"}, {"eps", "0.01"}}, {3, 4, 5}},
      {{}, {64 * 128, 768}},  // a transformer's rows
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Kv &kv = cases[k].first;
    const Dims &d = cases[k].second;
    if (SkipOnCpu(dev, d)) continue;
    int axis = kv.empty() ? (int)d.size() - 1 : 1;
    Dims ch = {d[axis]}, st = d;
    st[axis] = 1;
    std::vector<TArr> in = {RandArr(f32, d, -2, 2, g),
                            RandArr(f32, ch, 0.5f, 1.5f, g),
                            RandArr(f32, ch, -1, 1, g)};
    std::vector<TArr> fw = {RandArr(f32, d, -1, 1, g),
                            RandArr(f32, st, -1, 1, g),
                            RandArr(f32, st, -1, 1, g)};
    std::string what = std::string(bwd ? "_backward_" : "") +
                       "LayerNorm case " + std::to_string(k);
    if (!bwd) {
      for (const std::vector<int> &req :
           {std::vector<int>{W, W, W}, std::vector<int>{A, A, A},
            std::vector<int>{W, N, A}}) {
        CompareTyped(dev, what, "LayerNorm", kv, in, fw, req, {-1, -1, -1},
                     kLnUlps);
      }
      continue;
    }
    std::vector<TArr> cin = in;
    ASSERT_EQ(mxct::RunTyped("LayerNorm", kv, MXC_DEVICE_CPU, &cin, &fw,
                             {W, W, W}, {-1, -1, -1}),
              MXC_OK)
        << mxc_last_error();
    std::vector<TArr> bin = {
        RandArr(f32, d, -1, 1, g), in[0], in[1], in[2], fw[0], fw[1], fw[2]};
    std::vector<TArr> outs = {RandArr(f32, d, -1, 1, g),
                              RandArr(f32, ch, -1, 1, g),
                              RandArr(f32, ch, -1, 1, g)};
    for (const std::vector<int> &req :
         {std::vector<int>{W, W, W}, std::vector<int>{A, A, A},
          std::vector<int>{N, W, A}}) {
      CompareTyped(dev, what, "_backward_LayerNorm", kv, bin, outs, req,
                   {-1, -1, -1}, kLnUlps);
    }
  }
}

// ---- L2Normalization ----

void L2Cases(bool bwd, int dev, std::mt19937 *g) {
  const std::vector<Dims> shapes = {{2, 3, 4, 2}, {3, 5}, {32, 64, 14, 14}};
  for (const char *mode : {"instance", "channel", "spatial"}) {
    for (const Dims &d : shapes) {
      if (SkipOnCpu(dev, d)) continue;
      Kv kv = {{"mode", mode}};
      std::string m = mode;
      Dims nd = {d[0]};
      if (m == "channel") nd = d, nd[1] = 1;
      if (m == "spatial") nd = {d[0], d[1]};
      std::string what = std::string(bwd ? "_backward_" : "") +
                         "L2Normalization " + m + " rank " +
                         std::to_string(d.size());
      std::vector<TArr> in = {RandArr(f32, d, -2, 2, g)};
      std::vector<TArr> fw = {RandArr(f32, d, -1, 1, g),
                              RandArr(f32, nd, -1, 1, g)};
      if (!bwd) {
        for (const std::vector<int> &req :
             {std::vector<int>{W, W}, std::vector<int>{A, A},
              std::vector<int>{A, N}}) {
          CompareTyped(dev, what, "L2Normalization", kv, in, fw, req, {-1, -1});
        }
        continue;
      }
      std::vector<TArr> cin = in;
      ASSERT_EQ(mxct::RunTyped("L2Normalization", kv, MXC_DEVICE_CPU, &cin, &fw,
                               {W, W}, {-1, -1}),
                MXC_OK)
          << mxc_last_error();
      std::vector<TArr> bin = {RandArr(f32, d, -1, 1, g), in[0], fw[0], fw[1]};
      for (int req : {W, A}) {
        CompareTyped(dev, what, "_backward_L2Normalization", kv, bin,
                     {RandArr(f32, d, -1, 1, g)}, {req}, {-1});
      }
    }
  }
}

// ---- Dropout ----

// One Dropout call on each device after the same seed, in training mode
// or not: the same slice, so the same mask; GPU outputs poisoned first.
void SeededCompare(int dev, const std::string &what, const Kv &kv,
                   const std::vector<TArr> &in, const std::vector<TArr> &out,
                   const std::vector<int> &req, int train, uint64_t seed) {
  std::vector<TArr> ci = in, gi = in, co = out, go = out;
  for (size_t w = 0; w < go.size(); ++w) {
    if (req[w] == W) go[w].b = mxct::PoisonBytes(f32, mxct::Numel(go[w].d));
  }
  int prev = 0;
  ASSERT_EQ(mxc_set_training(train, &prev), MXC_OK);
  ASSERT_EQ(mxc_random_seed(seed), MXC_OK);
  int rc =
      mxct::RunTyped("Dropout", kv, MXC_DEVICE_CPU, &ci, &co, req, {-1, -1});
  ASSERT_EQ(rc, MXC_OK) << what << " on the CPU: " << mxc_last_error();
  ASSERT_EQ(mxc_random_seed(seed), MXC_OK);
  rc = mxct::RunTyped("Dropout", kv, dev, &gi, &go, req, {-1, -1});
  mxc_set_training(prev, nullptr);
  ASSERT_EQ(rc, MXC_OK) << what << " on the GPU: " << mxc_last_error();
  for (size_t w = 0; w < co.size(); ++w) {
    mxct::ExpectBits(what + " output " + std::to_string(w), go[w], co[w]);
  }
}

struct DropCase {
  Kv kv;
  Dims d;
  int train;
};

const std::vector<DropCase> kDrop = {
    {{{"p", "0.5"}}, {5, 7}, 1},
    {{{"p", "0.1"}}, {64, 128, 768}, 1},  // a transformer's activations
    {{{"p", "0.5"}}, {4, 3}, 0},
    {{{"p", "0.25"}, {"mode", "always"}}, {3, 3, 3}, 0},
    {{{"p", "0.5"}, {"axes", "(1,)"}}, {3, 4, 5}, 1},
    {{{"p", "0.4"}, {"axes", "(0, 2)"}}, {3, 1031, 5}, 1},
};

void DropCases(bool bwd, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kDrop.size(); ++k) {
    const DropCase &c = kDrop[k];
    if (SkipOnCpu(dev, c.d)) continue;
    std::string what = std::string(bwd ? "_backward_" : "") + "Dropout case " +
                       std::to_string(k);
    if (bwd) {
      std::vector<TArr> bin = {RandArr(f32, c.d, -1, 1, g),
                               RandArr(f32, c.d, 0, 2, g)};
      for (int req : {W, A}) {
        CompareTyped(dev, what, "_backward_Dropout", c.kv, bin,
                     {RandArr(f32, c.d, -1, 1, g)}, {req}, {-1});
      }
      continue;
    }
    std::vector<TArr> in = {RandArr(f32, c.d, -2, 2, g)};
    std::vector<TArr> out = {RandArr(f32, c.d, -1, 1, g),
                             RandArr(f32, c.d, -1, 1, g)};
    for (const std::vector<int> &req :
         {std::vector<int>{W, W}, std::vector<int>{A, A},
          std::vector<int>{N, W}}) {
      SeededCompare(dev, what, c.kv, in, out, req, c.train, 77 + k);
    }
  }
}

// ---- argmax, argmin ----

// Values from a small set (ties), NaN at two places when nan.
TArr TieArr(const Dims &d, bool nan, std::mt19937 *g) {
  std::uniform_int_distribution<int> u(-3, 3);
  std::vector<float> v(mxct::Numel(d));
  for (float &x : v) x = (float)u(*g);
  if (nan && v.size() > 7) v[5] = NAN, v[v.size() - 2] = NAN;
  return Floats(d, v);
}

void ArgCases(const char *op, int dev, std::mt19937 *g) {
  const std::vector<std::pair<Dims, std::vector<std::pair<Kv, Dims>>>> cases = {
      {{4, 5, 3},
       {{{}, {1}},
        {{{"axis", "0"}}, {5, 3}},
        {{{"axis", "1"}, {"keepdims", "true"}}, {4, 1, 3}},
        {{{"axis", "-1"}}, {4, 5}}}},
      {{256, 1000}, {{{{"axis", "1"}}, {256}}, {{}, {1}}}}};
  for (const auto &dc : cases) {
    if (SkipOnCpu(dev, dc.first)) continue;
    for (int nan = 0; nan < 2; ++nan) {
      std::vector<TArr> in = {TieArr(dc.first, nan, g)};
      for (size_t k = 0; k < dc.second.size(); ++k) {
        const Dims &od = dc.second[k].second;
        for (int req : {W, A}) {
          CompareTyped(dev,
                       std::string(op) + " case " + std::to_string(k) +
                           (nan ? " NaN" : ""),
                       op, dc.second[k].first, in, {RandArr(f32, od, 0, 4, g)},
                       {req}, {-1});
        }
      }
    }
  }
}

// ---- SequenceMask, SequenceLast, SequenceReverse ----

struct SeqCase {
  Kv kv;
  Dims d, out;
  std::vector<float> lens;  // empty: no lengths input
};

std::vector<SeqCase> SeqCases(const std::string &op) {
  const Kv len = {{"use_sequence_length", "true"}};
  if (op == "SequenceMask") {
    return {
        {{}, {4, 3, 2}, {4, 3, 2}, {}},
        {{len[0], {"value", "-7.5"}}, {5, 4, 3}, {5, 4, 3}, {2, 0, 9, 3.7f}},
        {{len[0], {"axis", "1"}, {"value", "1"}},
         {3, 6, 2},
         {3, 6, 2},
         {1, NAN, 6}},
        {{len[0]}, {35, 64, 512}, {35, 64, 512}, std::vector<float>(64, 20)}};
  }
  if (op == "SequenceReverse") {
    return {{len, {5, 3, 2, 2}, {5, 3, 2, 2}, {5, 2.5f, 0}},
            {{}, {4, 2}, {4, 2}, {}}};
  }
  return {{len, {4, 3, 2}, {3, 2}, {1, 4, 2.5f}},
          {{len[0], {"axis", "1"}}, {3, 5, 2}, {3, 2}, {5, 1, 3}},
          {{}, {3, 4}, {4}, {}}};
}

void SeqCasesRun(const char *op, bool bwd, int dev, std::mt19937 *g) {
  std::vector<SeqCase> cases = SeqCases(op);
  std::string name = std::string(bwd ? "_backward_" : "") + op;
  for (size_t k = 0; k < cases.size(); ++k) {
    const SeqCase &c = cases[k];
    if (SkipOnCpu(dev, c.d)) continue;
    bool has_len = !c.lens.empty();
    Dims ld = {(int64_t)c.lens.size()};
    TArr lens = Floats(ld, c.lens);
    std::string what = name + " case " + std::to_string(k);
    std::vector<TArr> in = {RandArr(f32, c.d, -2, 2, g)};
    if (has_len) in.push_back(lens);
    if (!bwd) {
      for (int req : {W, A}) {
        CompareTyped(dev, what, op, c.kv, in, {RandArr(f32, c.out, -1, 1, g)},
                     {req}, {-1});
      }
      continue;
    }
    std::vector<TArr> bin = {RandArr(f32, c.out, -1, 1, g), in[0]};
    if (has_len) bin.push_back(lens);
    std::vector<std::vector<int>> reqs = {{W}, {A}};
    if (has_len) reqs = {{W, W}, {A, A}, {N, W}, {W, A}};
    for (const std::vector<int> &req : reqs) {
      std::vector<TArr> outs = {RandArr(f32, c.d, -1, 1, g)};
      if (req.size() > 1) outs.push_back(RandArr(f32, ld, -1, 1, g));
      CompareTyped(dev, what, name.c_str(), c.kv, bin, outs, req,
                   std::vector<int>(req.size(), -1));
    }
  }
}

// ---- sort, argsort, topk ----

// Ties, NaN, -0 and +0, infinities.
TArr SortArr(const Dims &d, std::mt19937 *g) {
  const float pool[] = {-2, -0.f, 0, 1.5f, 1.5f, 3, NAN, INFINITY, -INFINITY};
  std::uniform_int_distribution<int> u(0, 8);
  std::vector<float> v(mxct::Numel(d));
  for (float &x : v) x = pool[u(*g)];
  return Floats(d, v);
}

struct SortCase {
  Kv kv;
  Dims data;
  std::vector<Dims> outs;
  bool grad;  // the operator's gradient applies (values)
};

std::vector<SortCase> SortCases(const std::string &op) {
  if (op == "sort") {
    return {
        {{}, {3, 5, 4}, {{3, 5, 4}}, true},
        {{{"axis", "1"}, {"is_ascend", "false"}}, {3, 5, 4}, {{3, 5, 4}}, true},
        {{{"axis", "None"}}, {3, 5, 4}, {{60}}, true},
        {{}, {256, 1000}, {{256, 1000}}, true}};
  }
  if (op == "argsort") {
    return {
        {{{"axis", "0"}}, {3, 5, 4}, {{3, 5, 4}}, false},
        {{{"axis", "None"}, {"is_ascend", "false"}}, {3, 5, 4}, {{60}}, false},
        {{}, {256, 1000}, {{256, 1000}}, false}};
  }
  return {
      {{{"k", "2"}}, {3, 5, 4}, {{3, 5, 2}}, false},
      {{{"k", "3"}, {"axis", "1"}, {"ret_typ", "value"}, {"is_ascend", "true"}},
       {3, 5, 4},
       {{3, 3, 4}},
       true},
      {{{"k", "2"}, {"ret_typ", "mask"}}, {3, 5, 4}, {{3, 5, 4}}, false},
      {{{"k", "0"}, {"axis", "1"}, {"ret_typ", "both"}},
       {3, 5, 4},
       {{3, 5, 4}, {3, 5, 4}},
       true},
      {{{"k", "7"}, {"axis", "None"}, {"ret_typ", "both"}},
       {3, 5, 4},
       {{7}, {7}},
       true},
      {{{"k", "5"}, {"ret_typ", "both"}},
       {512, 1000},
       {{512, 5}, {512, 5}},
       true}};
}

void SortCasesRun(const char *op, bool bwd, int dev, std::mt19937 *g) {
  std::vector<SortCase> cases = SortCases(op);
  for (size_t k = 0; k < cases.size(); ++k) {
    const SortCase &c = cases[k];
    if (SkipOnCpu(dev, c.data) || (bwd && !c.grad)) continue;
    std::string what = std::string(bwd ? "_backward_" : "") + op + " case " +
                       std::to_string(k);
    std::vector<TArr> in = {SortArr(c.data, g)};
    if (!bwd) {
      std::vector<std::vector<int>> reqs = {{W}, {A}};
      if (c.outs.size() > 1) reqs = {{W, W}, {A, A}, {N, W}, {W, N}};
      for (const std::vector<int> &req : reqs) {
        std::vector<TArr> outs;
        for (const Dims &od : c.outs)
          outs.push_back(RandArr(f32, od, -1, 1, g));
        CompareTyped(dev, what, op, c.kv, in, outs, req,
                     std::vector<int>(req.size(), -1));
      }
      continue;
    }
    std::vector<TArr> bin = {RandArr(f32, c.outs[0], -1, 1, g)};
    if (c.outs.size() > 1) bin.push_back(RandArr(f32, c.outs[1], 0, 3, g));
    bin.push_back(in[0]);
    std::string bname = std::string("_backward_") + op;
    for (int req : {W, A}) {
      CompareTyped(dev, what, bname.c_str(), c.kv, bin,
                   {RandArr(f32, c.data, -1, 1, g)}, {req}, {-1});
    }
  }
}

// ---- Pad, Crop ----

void PadCases(bool bwd, int dev, std::mt19937 *g) {
  const std::vector<std::pair<Kv, std::pair<Dims, Dims>>> cases = {
      {{{"mode", "constant"},
        {"pad_width", "(0,0,1,2,2,1)"},
        {"constant_value", "0.3"}},
       {{2, 3, 4}, {2, 6, 7}}},
      {{{"mode", "edge"}, {"pad_width", "(1,2,0,0,3,1)"}},
       {{2, 3, 4}, {5, 3, 8}}},
      {{{"mode", "reflect"}, {"pad_width", "(1,1,2,3,3,3)"}},
       {{3, 4, 4}, {5, 9, 10}}},
      {{{"mode", "reflect"}, {"pad_width", "(0,0,0,0,3,3,3,3)"}},
       {{32, 64, 56, 56}, {32, 64, 62, 62}}},
      {{{"mode", "edge"}, {"pad_width", "(0,0,0,0,1,1,1,1)"}},
       {{32, 64, 56, 56}, {32, 64, 58, 58}}},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Kv &kv = cases[k].first;
    const Dims &d = cases[k].second.first, &od = cases[k].second.second;
    if (SkipOnCpu(dev, od)) continue;
    std::string what =
        std::string(bwd ? "_backward_" : "") + "Pad case " + std::to_string(k);
    std::vector<TArr> in = {RandArr(f32, d, -2, 2, g)};
    for (int req : {W, A}) {
      if (bwd) {
        CompareTyped(dev, what, "_backward_Pad", kv,
                     {RandArr(f32, od, -1, 1, g), in[0]},
                     {RandArr(f32, d, -1, 1, g)}, {req}, {-1});
      } else {
        CompareTyped(dev, what, "Pad", kv, in, {RandArr(f32, od, -1, 1, g)},
                     {req}, {-1});
      }
    }
  }
}

void CropCases(bool bwd, int dev, std::mt19937 *g) {
  const Dims d = {2, 3, 7, 6};
  struct C {
    Kv kv;
    Dims like, out;
  };
  const std::vector<C> cases = {
      {{{"num_args", "1"}, {"h_w", "(3,4)"}, {"offset", "(2,1)"}},
       {},
       {2, 3, 3, 4}},
      {{{"num_args", "1"}, {"h_w", "(4,3)"}, {"center_crop", "true"}},
       {},
       {2, 3, 4, 3}},
      {{{"num_args", "2"}}, {5, 5, 2}, {2, 3, 5, 2}},
      {{{"num_args", "2"}, {"center_crop", "true"}}, {1, 4, 3}, {2, 3, 4, 3}},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const C &c = cases[k];
    std::string what =
        std::string(bwd ? "_backward_" : "") + "Crop case " + std::to_string(k);
    std::vector<TArr> in = {RandArr(f32, d, -2, 2, g)};
    if (!c.like.empty()) in.push_back(RandArr(f32, c.like, -1, 1, g));
    for (int req : {W, A}) {
      if (!bwd) {
        CompareTyped(dev, what, "Crop", c.kv, in,
                     {RandArr(f32, c.out, -1, 1, g)}, {req}, {-1});
        continue;
      }
      std::vector<TArr> bin = {RandArr(f32, c.out, -1, 1, g)};
      bin.insert(bin.end(), in.begin(), in.end());
      CompareTyped(dev, what, "_backward_Crop", c.kv, bin,
                   {RandArr(f32, d, -1, 1, g)}, {req}, {-1});
    }
  }
}

// ---- GridGenerator, BilinearSampler, SpatialTransformer ----

const int kAtomicUlps = 64;  // the samplers' ddata (see the top)

TArr Theta(int64_t n, std::mt19937 *g) {
  TArr t = RandArr(f32, {n, 6}, -0.3f, 0.3f, g);
  std::vector<float> v(6 * n);
  std::memcpy(v.data(), t.b.data(), v.size() * 4);
  for (int64_t i = 0; i < n; ++i) v[i * 6] += 1.1f, v[i * 6 + 4] += 0.9f;
  return Floats({n, 6}, v);
}

void GridCases(bool bwd, int dev, std::mt19937 *g) {
  const Kv affine = {{"transform_type", "affine"}, {"target_shape", "(4,5)"}};
  const Kv warp = {{"transform_type", "warp"}};
  std::string name = std::string(bwd ? "_backward_" : "") + "GridGenerator";
  for (int req : {W, A}) {
    TArr th = Theta(3, g), flow = RandArr(f32, {3, 2, 6, 7}, -2, 2, g);
    if (!bwd) {
      CompareTyped(dev, name + " affine", "GridGenerator", affine, {th},
                   {RandArr(f32, {3, 2, 4, 5}, -1, 1, g)}, {req}, {-1});
      CompareTyped(dev, name + " warp", "GridGenerator", warp, {flow},
                   {RandArr(f32, {3, 2, 6, 7}, -1, 1, g)}, {req}, {-1});
      continue;
    }
    CompareTyped(dev, name + " affine", name.c_str(), affine,
                 {RandArr(f32, {3, 2, 4, 5}, -1, 1, g), th},
                 {RandArr(f32, {3, 6}, -1, 1, g)}, {req}, {-1});
    CompareTyped(dev, name + " warp", name.c_str(), warp,
                 {RandArr(f32, {3, 2, 6, 7}, -1, 1, g), flow},
                 {RandArr(f32, {3, 2, 6, 7}, -1, 1, g)}, {req}, {-1});
  }
}

void SamplerCases(bool stn, bool bwd, int dev, std::mt19937 *g) {
  const Kv st = {{"target_shape", "(24,20)"},
                 {"transform_type", "affine"},
                 {"sampler_type", "bilinear"}};
  const char *op = stn ? "SpatialTransformer" : "BilinearSampler";
  std::string name = std::string(bwd ? "_backward_" : "") + op;
  const Dims data = {4, 3, 22, 26}, out = {4, 3, 24, 20}, gd = {4, 2, 24, 20};
  const Kv kv = stn ? st : Kv{};
  for (const std::vector<int> &req :
       {std::vector<int>{W, W}, std::vector<int>{A, A}, std::vector<int>{W, N},
        std::vector<int>{N, W}}) {
    if (!bwd && req[0] == N) continue;
    TArr x = RandArr(f32, data, -2, 2, g);
    TArr second = stn ? Theta(4, g) : RandArr(f32, gd, -1.2f, 1.2f, g);
    std::string what =
        name + " modes " + std::to_string(req[0]) + std::to_string(req[1]);
    if (!bwd) {
      CompareTyped(dev, what, op, kv, {x, second},
                   {RandArr(f32, out, -1, 1, g)}, {req[0]}, {-1});
      continue;
    }
    Dims d2 = stn ? Dims{4, 6} : gd;
    CompareTyped(dev, what, name.c_str(), kv,
                 {RandArr(f32, out, -1, 1, g), x, second},
                 {RandArr(f32, data, -1, 1, g), RandArr(f32, d2, -1, 1, g)},
                 req, {-1, -1}, kAtomicUlps);
  }
}

#define CASE(op, call)                \
  {                                   \
    op, [](std::mt19937 *g) { call; } \
  }

const mxct::RegisterCase kNn3CaseRegs[] = {
    CASE("LayerNorm", LnCases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_LayerNorm", LnCases(true, MXC_DEVICE_GPU, g)),
    CASE("L2Normalization", L2Cases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_L2Normalization", L2Cases(true, MXC_DEVICE_GPU, g)),
    CASE("Dropout", DropCases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_Dropout", DropCases(true, MXC_DEVICE_GPU, g)),
    CASE("argmax", ArgCases("argmax", MXC_DEVICE_GPU, g)),
    CASE("argmin", ArgCases("argmin", MXC_DEVICE_GPU, g)),
    CASE("SequenceMask", SeqCasesRun("SequenceMask", false, MXC_DEVICE_GPU, g)),
    CASE("_backward_SequenceMask",
         SeqCasesRun("SequenceMask", true, MXC_DEVICE_GPU, g)),
    CASE("SequenceLast", SeqCasesRun("SequenceLast", false, MXC_DEVICE_GPU, g)),
    CASE("_backward_SequenceLast",
         SeqCasesRun("SequenceLast", true, MXC_DEVICE_GPU, g)),
    CASE("SequenceReverse",
         SeqCasesRun("SequenceReverse", false, MXC_DEVICE_GPU, g)),
    CASE("_backward_SequenceReverse",
         SeqCasesRun("SequenceReverse", true, MXC_DEVICE_GPU, g)),
    CASE("sort", SortCasesRun("sort", false, MXC_DEVICE_GPU, g)),
    CASE("argsort", SortCasesRun("argsort", false, MXC_DEVICE_GPU, g)),
    CASE("topk", SortCasesRun("topk", false, MXC_DEVICE_GPU, g)),
    CASE("_backward_sort", SortCasesRun("sort", true, MXC_DEVICE_GPU, g)),
    CASE("_backward_topk", SortCasesRun("topk", true, MXC_DEVICE_GPU, g)),
    CASE("Pad", PadCases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_Pad", PadCases(true, MXC_DEVICE_GPU, g)),
    CASE("Crop", CropCases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_Crop", CropCases(true, MXC_DEVICE_GPU, g)),
    CASE("GridGenerator", GridCases(false, MXC_DEVICE_GPU, g)),
    CASE("_backward_GridGenerator", GridCases(true, MXC_DEVICE_GPU, g)),
    CASE("BilinearSampler", SamplerCases(false, false, MXC_DEVICE_GPU, g)),
    CASE("_backward_BilinearSampler",
         SamplerCases(false, true, MXC_DEVICE_GPU, g)),
    CASE("SpatialTransformer", SamplerCases(true, false, MXC_DEVICE_GPU, g)),
    CASE("_backward_SpatialTransformer",
         SamplerCases(true, true, MXC_DEVICE_GPU, g)),
};

// On every machine: the cases are valid calls, CPU against CPU (bitwise
// equal there), so a GPU run does not spend its minutes on a broken case.
TEST(GpuConformanceNn3, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(41);
  for (bool bwd : {false, true}) {
    LnCases(bwd, MXC_DEVICE_CPU, &g);
    L2Cases(bwd, MXC_DEVICE_CPU, &g);
    DropCases(bwd, MXC_DEVICE_CPU, &g);
    for (const char *op : {"SequenceMask", "SequenceLast", "SequenceReverse"}) {
      SeqCasesRun(op, bwd, MXC_DEVICE_CPU, &g);
    }
    for (const char *op : {"sort", "argsort", "topk"}) {
      SortCasesRun(op, bwd, MXC_DEVICE_CPU, &g);
    }
    PadCases(bwd, MXC_DEVICE_CPU, &g);
    CropCases(bwd, MXC_DEVICE_CPU, &g);
    GridCases(bwd, MXC_DEVICE_CPU, &g);
    SamplerCases(false, bwd, MXC_DEVICE_CPU, &g);
    SamplerCases(true, bwd, MXC_DEVICE_CPU, &g);
  }
  ArgCases("argmax", MXC_DEVICE_CPU, &g);
  ArgCases("argmin", MXC_DEVICE_CPU, &g);
}

}  // namespace
