// The rules of backends/cuda/nn3_plan.h (what nn3.cu runs on the device)
// run on the host against the CPU operators through the C API, on every
// machine, bitwise: LayerNorm and L2Normalization (every mode) with their
// hidden outputs and gradients, Dropout (training, inference, always,
// shared axes: the mask drawn from the slice the CPU call reserved) and
// its gradient, argmax and argmin (ties, NaN, every axis and None), the
// Sequence operators and their gradients (with and without lengths,
// lengths that are fractional, 0, beyond T or NaN; axis 0 and 1), sort,
// argsort, topk (every ret_typ, both directions, ties, NaN, -0 and +0)
// and the gradients of sort and topk (backends/cuda/sort_plan.h), Pad
// (constant, edge, reflect; pads of 0 to extent - 1) and Crop (offset,
// centred, crop_like) with their gradients (backends/cuda/pad_plan.h),
// GridGenerator (affine, warp), BilinearSampler and SpatialTransformer
// with their gradients (backends/cuda/samp_plan.h; ddata's atomic adds
// run here as plain adds in the CPU's order), in write, add and NULL
// modes. The CPU's reference kernels (ops/): BUILD
// sets MXC_ONEDNN=0, so oneDNN's LayerNorm (last axis, float sums) stays
// out; the conformance cases compare with it within a tolerance. Parameters
// reach the rules through the operators' own parser, so a drift between ops/'s
// structs and the rules' reading of them fails here; each family has a case
// that breaks the plan on purpose and must see a difference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/nn3_plan.h"
#include "backends/cuda/pad_plan.h"
#include "backends/cuda/samp_plan.h"
#include "backends/cuda/sort_plan.h"
extern "C" {
#include "core/base/alloc.h"
#include "core/op/op.h"
#include "core/resource/random.h"
}
#include "mxc/mxc.h"

namespace {

using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

const int W = MXC_REQ_WRITE, A = MXC_REQ_ADD, N = MXC_REQ_NULL;

struct Arr {
  Dims d;
  std::vector<float> v;
};

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

Arr Rand(const Dims &d, float lo, float hi, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(lo, hi);
  Arr a = {d, std::vector<float>((size_t)Numel(d))};
  for (float &x : a.v) x = u(*g);
  return a;
}

void *Parse(const char *name, const Kv &kv) {
  std::vector<const char *> k, v;
  for (const auto &q : kv) k.push_back(q.first.c_str());
  for (const auto &q : kv) v.push_back(q.second.c_str());
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(name), k.data(), v.data(),
                                 (int)k.size(), &param),
            MXC_OK)
      << name << ": " << mxc_last_error();
  return param;
}

mxc_ndarray HostArr(const Arr &a) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(a.d.data(), (int)a.d.size(), MXC_DTYPE_FLOAT32,
                               MXC_DEVICE_CPU, 0, 0, &h),
            MXC_OK)
      << mxc_last_error();
  if (!a.v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, a.v.data(), a.v.size() * 4),
              MXC_OK);
  }
  return h;
}

// The CPU operator: outs from their initial values; its return code.
int Cpu(const char *name, const Kv &kv, const std::vector<Arr> &in,
        std::vector<Arr> *outs, const std::vector<int> &req) {
  mxc_op h = nullptr;
  EXPECT_EQ(mxc_op_find(name, &h), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a, o;
  for (const Arr &x : in) a.push_back(HostArr(x));
  for (const Arr &x : *outs) o.push_back(HostArr(x));
  int rc = mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                         (int)a.size(), o.data(), (int)o.size(), req.data());
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(o[0]);
  for (size_t w = 0; rc == MXC_OK && w < o.size(); ++w) {
    Arr &x = (*outs)[w];
    if (!x.v.empty()) {
      EXPECT_EQ(mxc_ndarray_copy_to_host(o[w], x.v.data(), x.v.size() * 4),
                MXC_OK);
    }
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  for (mxc_ndarray x : o) mxc_ndarray_free(x);
  return rc;
}

mxc__gpu_array GpuArr(Arr *a) {
  mxc__gpu_array g;
  std::memset(&g, 0, sizeof g);
  g.ptr = a->v.data();
  g.size = Numel(a->d);
  g.ndim = (int)a->d.size();
  for (int i = 0; i < g.ndim; ++i) g.dims[i] = a->d[i];
  g.dtype = MXC_DTYPE_FLOAT32;
  return g;
}

// One call of nn3.cu's dispatch on the host: the same plan functions, a
// loop in place of each launch (in reverse order: no rule may depend on
// the order of its threads).
struct Host {
  const void *param;
  std::vector<Arr> *in, *out;
  std::vector<int> req;
  int is_train = 0;
  mxc__gpu_rng rng = {{0, 0}, 0, 0};

  const float *I(size_t k) const { return (*in)[k].v.data(); }
  float *O(size_t k) const {
    return k < out->size() ? (*out)[k].v.data() : nullptr;
  }
  mxc__gpu_array G(size_t k) const { return GpuArr(&(*in)[k]); }
  int n_out() const { return (int)out->size(); }
  bool On(size_t k) const { return k < out->size() && req[k] != N; }

  void LayerNorm(bool bwd) {
    mxc__gpu_array x = G(bwd ? 1 : 0);
    mxc__ln_plan q = mxc__ln_plan_make((const mxc__ln_param *)param, &x,
                                       req.data(), n_out());
    int64_t groups = q.l.outer * q.l.inner;
    for (int64_t g = groups - 1; g >= 0; --g) {
      if (!bwd) mxc__ln_fwd(&q, I(0), I(1), I(2), O(0), O(1), O(2), g);
      if (bwd && q.m.on[0])
        mxc__ln_dx(&q, I(0), I(1), I(2), I(5), I(6), O(0), g);
    }
    for (int64_t j = q.l.n - 1; bwd && (q.m.on[1] || q.m.on[2]) && j >= 0;
         --j) {
      mxc__ln_dgb(&q, I(0), I(1), I(5), I(6), O(1), O(2), j);
    }
  }

  void L2(bool bwd) {
    mxc__gpu_array x = G(bwd ? 1 : 0);
    mxc__l2n_plan q = mxc__l2n_plan_make((const mxc__l2n_param *)param, &x,
                                         req.data(), n_out());
    for (int64_t g = q.l.outer * q.l.inner - 1; g >= 0; --g) {
      if (bwd) {
        if (q.m.on[0]) mxc__l2n_dx(&q, I(0), I(2), I(3), O(0), g);
      } else {
        mxc__l2n_fwd(&q, I(0), O(0), O(1), g);
      }
    }
  }

  void Dropout() {
    mxc__gpu_array x = G(0);
    mxc__drop_plan q = mxc__drop_plan_make((const mxc__drop_param *)param, &x,
                                           is_train, &rng, req.data(), n_out());
    for (int64_t i = x.size - 1; i >= 0; --i) {
      mxc__drop_fwd(&q, I(0), O(0), O(1), i);
    }
  }

  void Arg(bool is_max) {
    mxc__gpu_array x = G(0);
    mxc__argx_plan q =
        mxc__argx_plan_make((const mxc__arg_param *)param, is_max, &x, req[0]);
    for (int64_t g = Numel((*out)[0].d) - 1; g >= 0; --g) {
      mxc__argx_one(&q, I(0), O(0), g);
    }
  }

  void Seq(int kind, bool bwd) {
    const mxc__seq_param *p = (const mxc__seq_param *)param;
    mxc__gpu_array x = G(bwd ? 1 : 0);
    int has_len = p->use_sequence_length;
    mxc__seqk_plan q = mxc__seqk_plan_make(p, kind, &x, has_len, req[0]);
    const float *lens = has_len ? I(bwd ? 2 : 1) : nullptr;
    if (bwd && On(1) && req[1] != A) {
      for (float &v : (*out)[1].v) v = 0;
    }
    if (!On(0)) return;
    for (int64_t i = Numel((*out)[0].d) - 1; i >= 0; --i) {
      if (kind == MXC__SEQ_LAST) {
        if (bwd) {
          mxc__seqk_last_bwd(&q, I(0), lens, O(0), i);
        } else {
          mxc__seqk_last(&q, I(0), lens, O(0), i);
        }
      } else {
        mxc__seqk_map(&q, I(0), lens, bwd ? 0.f : q.value, O(0), i);
      }
    }
  }

  void Sort(int kind, bool bwd) {
    size_t d = bwd ? in->size() - 1 : 0;
    mxc__gpu_array x = G(d);
    mxc__sortk_plan q = mxc__sortk_plan_make(
        kind, (const mxc__sort_param *)param, &x, req.data(), n_out());
    for (int64_t t = x.size - 1; t >= 0; --t) {
      if (bwd) {
        if (q.on[0]) mxc__sortk_bwd(&q, I(0), I(d), O(0), t);
      } else {
        mxc__sortk_fwd(&q, I(0), O(0), O(1), t);
      }
    }
  }

  void Pad(bool bwd) {
    mxc__gpu_array x = G(bwd ? 1 : 0);
    mxc__padk_plan q =
        mxc__padk_plan_make((const mxc__pad_param *)param, &x, req[0]);
    for (int64_t t = Numel((*out)[0].d) - 1; t >= 0; --t) {
      if (bwd) {
        mxc__padk_bwd(&q, I(0), O(0), t);
      } else {
        mxc__padk_fwd(&q, I(0), O(0), t);
      }
    }
  }

  void Grid(bool bwd) {
    const mxc__st_param *p = (const mxc__st_param *)param;
    int warp = p->transform_type == MXC__GG_WARP;
    const Dims &g = bwd ? (*in)[0].d : (*out)[0].d;
    int64_t n = Numel((*out)[0].d);
    for (int64_t e = 0; e < n; ++e) {
      if (!bwd) {
        mxc__sampk_gg(warp, I(0), g[2], g[3], O(0), req[0] == A, e);
      } else if (warp) {
        mxc__sampk_gg_warp_bwd(I(0), g[2], g[3], O(0), req[0] == A, e);
      } else {
        mxc__sampk_dtheta(I(0), g[2], g[3], O(0), req[0] == A, e);
      }
    }
  }

  // BilinearSampler (stn 0) or SpatialTransformer (stn 1).
  void Sampler(bool stn, bool bwd) {
    mxc__gpu_array x = G(bwd ? 1 : 0), y = bwd ? G(0) : GpuArr(&(*out)[0]);
    mxc__sampk_plan q = mxc__sampk_plan_make(&x, &y, req.data(), n_out());
    const float *grid = stn ? nullptr : I(bwd ? 2 : 1);
    const float *theta = stn ? I(bwd ? 2 : 1) : nullptr;
    if (!bwd) {
      for (int64_t e = Numel((*out)[0].d) - 1; On(0) && e >= 0; --e) {
        mxc__sampk_fwd(&q, I(0), grid, theta, O(0), e);
      }
      return;
    }
    if (On(0) && req[0] != A) {
      for (float &v : (*out)[0].v) v = 0;
    }
    int64_t pts = q.n * q.oh * q.ow;
    std::vector<float> dg((size_t)(2 * pts));
    bool dloc = stn && On(1);
    for (int64_t e = 0; e < pts; ++e) {  // the CPU's order: atomics as adds
      mxc__sampk_bwd(&q, I(0), I(1), grid, theta, O(0), dloc ? dg.data() : O(1),
                     dloc || (!stn && On(1)),
                     dloc ? 0 : req.size() > 1 && req[1] == A, e);
    }
    for (int64_t e = 0; dloc && e < q.n * 6; ++e) {
      mxc__sampk_dtheta(dg.data(), q.oh, q.ow, O(1), req[1] == A, e);
    }
  }

  void Crop(bool bwd) {
    size_t d = bwd ? 1 : 0;
    mxc__gpu_array x = G(d), like;
    bool has_like = in->size() > d + 1;
    if (has_like) like = G(d + 1);
    mxc__cropk_plan q = mxc__cropk_plan_make(
        (const mxc__crop_param *)param, &x, has_like ? &like : nullptr, req[0]);
    for (int64_t t = Numel((*out)[0].d) - 1; t >= 0; --t) {
      if (bwd) {
        mxc__cropk_bwd(&q, I(0), O(0), t);
      } else {
        mxc__cropk_fwd(&q, I(0), O(0), t);
      }
    }
  }
};

bool Same(const Arr &a, const Arr &b) {
  return a.v.size() == b.v.size() &&
         std::memcmp(a.v.data(), b.v.data(), a.v.size() * 4) == 0;
}

// The CPU's outputs and the host rules' from the same inputs and initial
// outputs; run(host) performs the host call.
template <typename F>
void Expect(const std::string &what, const char *op, const Kv &kv,
            const std::vector<Arr> &in, const std::vector<Arr> &outs,
            const std::vector<int> &req, F run) {
  std::vector<Arr> co = outs, ho = outs, hi = in;
  ASSERT_EQ(Cpu(op, kv, in, &co, req), MXC_OK) << what << mxc_last_error();
  void *param = Parse(op, kv);
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = req;
  run(&h);
  mxc__free(param);
  for (size_t w = 0; w < co.size(); ++w) {
    EXPECT_TRUE(Same(co[w], ho[w])) << what << " output " << w;
  }
}

// ---- LayerNorm ----

struct LnCase {
  Kv kv;
  Dims data;
  int axis;
};

const std::vector<LnCase> kLn = {
    {{}, {2, 5, 7}, 2},
    {{{"axis", "1"}, {"eps", "0.01"}}, {3, 4, 5}, 1},
    {{{"axis", "0"}}, {6, 3}, 0},
    {{{"axis", "-1"}}, {1, 1}, 1},
};

TEST(CudaNn3Plan, LayerNormMatchesTheCpuBitwise) {
  std::mt19937 g(31);
  for (size_t k = 0; k < kLn.size(); ++k) {
    const LnCase &c = kLn[k];
    Dims ch = {c.data[c.axis]}, st = c.data;
    st[c.axis] = 1;
    std::vector<Arr> in = {Rand(c.data, -2, 2, &g), Rand(ch, 0.5f, 1.5f, &g),
                           Rand(ch, -1, 1, &g)};
    for (const std::vector<int> &req :
         {std::vector<int>{W, W, W}, std::vector<int>{A, A, A},
          std::vector<int>{W, N, A}, std::vector<int>{W}}) {
      std::vector<Arr> outs = {Rand(c.data, -1, 1, &g), Rand(st, -1, 1, &g),
                               Rand(st, -1, 1, &g)};
      outs.resize(req.size());
      Expect("LayerNorm case " + std::to_string(k), "LayerNorm", c.kv, in, outs,
             req, [](Host *h) { h->LayerNorm(false); });
    }
    std::vector<Arr> fw = {Rand(c.data, -1, 1, &g), Rand(st, -1, 1, &g),
                           Rand(st, -1, 1, &g)};
    ASSERT_EQ(Cpu("LayerNorm", c.kv, in, &fw, {W, W, W}), MXC_OK);
    std::vector<Arr> bin = {
        Rand(c.data, -1, 1, &g), in[0], in[1], in[2], fw[0], fw[1], fw[2]};
    for (const std::vector<int> &req :
         {std::vector<int>{W, W, W}, std::vector<int>{A, A, A},
          std::vector<int>{N, W, A}}) {
      std::vector<Arr> outs = {Rand(c.data, -1, 1, &g), Rand(ch, -1, 1, &g),
                               Rand(ch, -1, 1, &g)};
      Expect("_backward_LayerNorm case " + std::to_string(k),
             "_backward_LayerNorm", c.kv, bin, outs, req,
             [](Host *h) { h->LayerNorm(true); });
    }
  }
}

// The comparison can fail: a plan that normalizes along another axis.
TEST(CudaNn3Plan, LayerNormWithAnotherAxisDiffers) {
  std::mt19937 g(32);
  Dims d = {3, 4};
  std::vector<Arr> in = {Rand(d, -2, 2, &g), Rand({4}, 0.5f, 1.5f, &g),
                         Rand({4}, -1, 1, &g)};
  std::vector<Arr> co = {Rand(d, -1, 1, &g)}, ho = co, hi = in;
  ASSERT_EQ(Cpu("LayerNorm", {}, in, &co, {W}), MXC_OK);
  void *param = Parse("LayerNorm", {});
  ((mxc__ln_param *)param)->axis = 0;
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W};
  // gamma and beta have 4 values; axis 0 (extent 3) reads the first 3.
  h.LayerNorm(false);
  mxc__free(param);
  EXPECT_FALSE(Same(co[0], ho[0]));
}

// ---- L2Normalization ----

TEST(CudaNn3Plan, L2NormalizationMatchesTheCpuBitwise) {
  std::mt19937 g(33);
  const std::vector<Dims> shapes = {{2, 3, 4, 2}, {3, 5}, {2, 3, 7}};
  for (const char *mode : {"instance", "channel", "spatial"}) {
    for (const Dims &d : shapes) {
      Kv kv = {{"mode", mode}, {"eps", "1e-6"}};
      Dims nd = {d[0]};
      if (std::string(mode) == "channel") {
        nd = d;
        nd[1] = 1;
      } else if (std::string(mode) == "spatial") {
        nd = {d[0], d[1]};
      }
      std::string what = std::string("L2Normalization ") + mode + " rank " +
                         std::to_string(d.size());
      std::vector<Arr> in = {Rand(d, -2, 2, &g)};
      for (const std::vector<int> &req :
           {std::vector<int>{W, W}, std::vector<int>{A, A},
            std::vector<int>{A, N}, std::vector<int>{W}}) {
        std::vector<Arr> outs = {Rand(d, -1, 1, &g), Rand(nd, -1, 1, &g)};
        outs.resize(req.size());
        Expect(what, "L2Normalization", kv, in, outs, req,
               [](Host *h) { h->L2(false); });
      }
      std::vector<Arr> fw = {Rand(d, -1, 1, &g), Rand(nd, -1, 1, &g)};
      ASSERT_EQ(Cpu("L2Normalization", kv, in, &fw, {W, W}), MXC_OK);
      std::vector<Arr> bin = {Rand(d, -1, 1, &g), in[0], fw[0], fw[1]};
      for (int req : {W, A}) {
        Expect("_backward_" + what, "_backward_L2Normalization", kv, bin,
               {Rand(d, -1, 1, &g)}, {req}, [](Host *h) { h->L2(true); });
      }
    }
  }
  // The comparison can fail: channel norms computed as instance norms.
  Dims d = {2, 3, 4};
  std::vector<Arr> in = {Rand(d, -2, 2, &g)}, hi = in;
  std::vector<Arr> co = {Rand(d, -1, 1, &g)}, ho = co;
  Kv kv = {{"mode", "channel"}};
  ASSERT_EQ(Cpu("L2Normalization", kv, in, &co, {W}), MXC_OK);
  void *param = Parse("L2Normalization", kv);
  ((mxc__l2n_param *)param)->mode = MXC__L2N_INSTANCE;
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W};
  h.L2(false);
  mxc__free(param);
  EXPECT_FALSE(Same(co[0], ho[0]));
}

// ---- Dropout ----

struct DropCase {
  Kv kv;
  Dims d;
  int train;
};

const std::vector<DropCase> kDrop = {
    {{{"p", "0.5"}}, {5, 7}, 1},
    {{{"p", "0.3"}}, {1031}, 1},
    {{{"p", "0.5"}}, {4, 3}, 0},  // inference: the identity, mask 1
    {{{"p", "0.25"}, {"mode", "always"}}, {3, 3, 3}, 0},
    {{{"p", "0.5"}, {"axes", "(1,)"}}, {3, 4, 5}, 1},
    {{{"p", "0.4"}, {"axes", "(0, 2)"}}, {3, 4, 5}, 1},
    {{{"p", "0"}}, {6}, 1},
};

// The CPU call's slice: the seed as key, the next counter at the call.
mxc__gpu_rng SliceNow() {
  uint64_t seed = 0, next = 0;
  mxc__random_get_state(&seed, &next);
  mxc__gpu_rng r;
  r.key[0] = (uint32_t)seed;
  r.key[1] = (uint32_t)(seed >> 32);
  r.block = next;
  r.n_blocks = UINT64_MAX;
  return r;
}

TEST(CudaNn3Plan, DropoutMatchesTheCpuBitwise) {
  std::mt19937 g(34);
  int prev = 0;
  for (size_t k = 0; k < kDrop.size(); ++k) {
    const DropCase &c = kDrop[k];
    for (const std::vector<int> &req :
         {std::vector<int>{W, W}, std::vector<int>{A, A},
          std::vector<int>{N, W}}) {
      std::vector<Arr> in = {Rand(c.d, -2, 2, &g)};
      std::vector<Arr> outs = {Rand(c.d, -1, 1, &g), Rand(c.d, -1, 1, &g)};
      ASSERT_EQ(mxc_random_seed(1000 + k), MXC_OK);
      ASSERT_EQ(mxc_set_training(c.train, &prev), MXC_OK);
      mxc__gpu_rng rng = SliceNow();
      int train = c.train;
      Expect("Dropout case " + std::to_string(k), "Dropout", c.kv, in, outs,
             req, [&](Host *h) {
               h->is_train = train;
               h->rng = rng;
               h->Dropout();
             });
      ASSERT_EQ(mxc_set_training(prev, nullptr), MXC_OK);
    }
    std::vector<Arr> bin = {Rand(c.d, -1, 1, &g), Rand(c.d, 0, 2, &g)};
    for (int req : {W, A}) {
      std::vector<Arr> co = {Rand(c.d, -1, 1, &g)}, ho = co;
      ASSERT_EQ(Cpu("_backward_Dropout", c.kv, bin, &co, {req}), MXC_OK);
      for (size_t i = 0; i < ho[0].v.size(); ++i) {
        mxc__nn3_put(ho[0].v.data(), (int64_t)i, bin[0].v[i] * bin[1].v[i],
                     req == A);
      }
      EXPECT_TRUE(Same(co[0], ho[0])) << "_backward_Dropout case " << k;
    }
  }
}

// The comparison can fail: another slice gives another mask.
TEST(CudaNn3Plan, DropoutWithAnotherSliceDiffers) {
  std::mt19937 g(35);
  Dims d = {64};
  std::vector<Arr> in = {Rand(d, -2, 2, &g)}, hi = in;
  std::vector<Arr> co = {Rand(d, -1, 1, &g), Rand(d, -1, 1, &g)}, ho = co;
  Kv kv = {{"p", "0.5"}, {"mode", "always"}};
  ASSERT_EQ(mxc_random_seed(7), MXC_OK);
  mxc__gpu_rng rng = SliceNow();
  ASSERT_EQ(Cpu("Dropout", kv, in, &co, {W, W}), MXC_OK);
  void *param = Parse("Dropout", kv);
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W, W};
  h.rng = rng;
  h.rng.block += 1;
  h.Dropout();
  mxc__free(param);
  EXPECT_FALSE(Same(co[1], ho[1]));
}

// ---- argmax, argmin ----

// Values from a small set (ties), a NaN or two.
Arr TieArr(const Dims &d, std::mt19937 *g) {
  std::uniform_int_distribution<int> u(-3, 3);
  Arr a = {d, std::vector<float>((size_t)Numel(d))};
  for (float &x : a.v) x = (float)u(*g);
  if (a.v.size() > 7) a.v[5] = NAN, a.v[a.v.size() - 2] = NAN;
  return a;
}

TEST(CudaNn3Plan, ArgmaxArgminMatchTheCpuBitwise) {
  std::mt19937 g(36);
  Dims d = {4, 5, 3};
  const std::vector<std::pair<Kv, Dims>> cases = {
      {{}, {1}},  // None: the flattened array
      {{{"axis", "0"}}, {5, 3}},
      {{{"axis", "1"}, {"keepdims", "true"}}, {4, 1, 3}},
      {{{"axis", "-1"}}, {4, 5}},
  };
  for (const char *op : {"argmax", "argmin"}) {
    bool is_max = std::string(op) == "argmax";
    for (int nan = 0; nan < 2; ++nan) {
      std::vector<Arr> in = {TieArr(d, &g)};
      if (!nan) in[0].v[5] = 1, in[0].v[58] = 2;  // ties only
      for (size_t k = 0; k < cases.size(); ++k) {
        const Dims &od = cases[k].second;
        for (int req : {W, A}) {
          Expect(std::string(op) + " case " + std::to_string(k), op,
                 cases[k].first, in, {Rand(od, 0, 4, &g)}, {req},
                 [is_max](Host *h) { h->Arg(is_max); });
        }
      }
    }
  }
  // The comparison can fail: argmin's rule for argmax.
  std::vector<Arr> in = {Rand(d, -1, 1, &g)}, hi = in;
  std::vector<Arr> co = {Rand({4, 5}, 0, 1, &g)}, ho = co;
  Kv kv = {{"axis", "2"}};
  ASSERT_EQ(Cpu("argmax", kv, in, &co, {W}), MXC_OK);
  void *param = Parse("argmax", kv);
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W};
  h.Arg(false);
  mxc__free(param);
  EXPECT_FALSE(Same(co[0], ho[0]));
}

// ---- SequenceMask, SequenceLast, SequenceReverse ----

struct SeqCase {
  const char *op;
  int kind;
  Kv kv;
  Dims d;
  std::vector<float> lens;  // empty: no lengths input
};

const float kNaN = NAN;

const std::vector<SeqCase> kSeq = {
    {"SequenceMask", MXC__SEQ_MASK, {}, {4, 3, 2}, {}},
    {"SequenceMask",
     MXC__SEQ_MASK,
     {{"use_sequence_length", "true"}, {"value", "-7.5"}},
     {5, 4, 3},
     {2, 0, 9, 3.7f}},
    {"SequenceMask",
     MXC__SEQ_MASK,
     {{"use_sequence_length", "true"}, {"axis", "1"}, {"value", "1"}},
     {3, 6, 2},
     {1, kNaN, 6}},
    {"SequenceReverse",
     MXC__SEQ_REVERSE,
     {{"use_sequence_length", "true"}},
     {5, 3, 2, 2},
     {5, 2.5f, 0}},
    {"SequenceReverse", MXC__SEQ_REVERSE, {}, {4, 2}, {}},
    {"SequenceLast",
     MXC__SEQ_LAST,
     {{"use_sequence_length", "true"}},
     {4, 3, 2},
     {1, 4, 2.5f}},
    {"SequenceLast",
     MXC__SEQ_LAST,
     {{"use_sequence_length", "true"}, {"axis", "1"}},
     {3, 5, 2},
     {5, 1, 3}},
    {"SequenceLast", MXC__SEQ_LAST, {}, {3, 4}, {}},
};

Dims OutShape(const SeqCase &c) {
  if (c.kind != MXC__SEQ_LAST) return c.d;
  int64_t axis = 0;
  for (const auto &p : c.kv) {
    if (p.first == "axis") axis = std::stoll(p.second);
  }
  Dims o = c.d;
  o.erase(o.begin() + axis);
  return o;
}

TEST(CudaNn3Plan, SequenceOperatorsMatchTheCpuBitwise) {
  std::mt19937 g(37);
  for (size_t k = 0; k < kSeq.size(); ++k) {
    const SeqCase &c = kSeq[k];
    int kind = c.kind;
    bool has_len = !c.lens.empty();
    Arr lens = {{(int64_t)c.lens.size()}, c.lens};
    std::vector<Arr> in = {Rand(c.d, -2, 2, &g)};
    if (has_len) in.push_back(lens);
    Dims od = OutShape(c);
    std::string what = std::string(c.op) + " case " + std::to_string(k);
    for (int req : {W, A}) {
      Expect(what, c.op, c.kv, in, {Rand(od, -1, 1, &g)}, {req},
             [kind](Host *h) { h->Seq(kind, false); });
    }
    std::vector<Arr> bin = {Rand(od, -1, 1, &g), in[0]};
    if (has_len) bin.push_back(lens);
    std::string bname = std::string("_backward_") + c.op;
    std::vector<std::vector<int>> reqs = {{W}, {A}};
    if (has_len) reqs = {{W, W}, {A, A}, {N, W}, {W, A}};
    for (const std::vector<int> &req : reqs) {
      std::vector<Arr> outs = {Rand(c.d, -1, 1, &g)};
      if (req.size() > 1) outs.push_back(Rand(lens.d, -1, 1, &g));
      Expect("_backward_" + what, bname.c_str(), c.kv, bin, outs, req,
             [kind](Host *h) { h->Seq(kind, true); });
    }
  }
  // The comparison can fail: SequenceReverse's rule for SequenceMask.
  const SeqCase &c = kSeq[1];
  Arr lens = {{(int64_t)c.lens.size()}, c.lens};
  std::vector<Arr> in = {Rand(c.d, -2, 2, &g), lens}, hi = in;
  std::vector<Arr> co = {Rand(c.d, -1, 1, &g)}, ho = co;
  ASSERT_EQ(Cpu(c.op, c.kv, in, &co, {W}), MXC_OK);
  void *param = Parse(c.op, c.kv);
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W};
  h.Seq(MXC__SEQ_REVERSE, false);
  mxc__free(param);
  EXPECT_FALSE(Same(co[0], ho[0]));
}

// SequenceLast refuses lengths outside 1..T on the CPU; nn3.cu reads the
// lengths back and answers the same way (the CPU's side checked here).
TEST(CudaNn3Plan, SequenceLastRefusesLengthsOutsideTheSteps) {
  Kv kv = {{"use_sequence_length", "true"}};
  std::vector<Arr> in = {{{3, 2}, std::vector<float>(6, 1.f)}, {{2}, {1, 0}}};
  std::vector<Arr> out = {{{2}, {0, 0}}};
  EXPECT_EQ(Cpu("SequenceLast", kv, in, &out, {W}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("outside 1..3"),
            std::string::npos)
      << mxc_last_error();
}

// ---- sort, argsort, topk ----

// Ties, NaN, -0 and +0, infinities.
Arr SortArr(const Dims &d, std::mt19937 *g) {
  const float pool[] = {-2, -0.f, 0, 1.5f, 1.5f, 3, NAN, INFINITY, -INFINITY};
  std::uniform_int_distribution<int> u(0, 8);
  Arr a = {d, std::vector<float>((size_t)Numel(d))};
  for (float &x : a.v) x = pool[u(*g)];
  return a;
}

struct SortCase {
  const char *op;
  int kind;
  Kv kv;
  std::vector<Dims> outs;  // forward outputs' shapes for data (3, 5, 4)
};

const std::vector<SortCase> kSorts = {
    {"sort", MXC__SORT_SORT, {}, {{3, 5, 4}}},
    {"sort",
     MXC__SORT_SORT,
     {{"axis", "1"}, {"is_ascend", "false"}},
     {{3, 5, 4}}},
    {"sort", MXC__SORT_SORT, {{"axis", "None"}}, {{60}}},
    {"argsort", MXC__SORT_ARGSORT, {{"axis", "0"}}, {{3, 5, 4}}},
    {"argsort",
     MXC__SORT_ARGSORT,
     {{"axis", "None"}, {"is_ascend", "false"}},
     {{60}}},
    {"topk", MXC__SORT_TOPK, {{"k", "2"}}, {{3, 5, 2}}},
    {"topk",
     MXC__SORT_TOPK,
     {{"k", "3"}, {"axis", "1"}, {"ret_typ", "value"}, {"is_ascend", "true"}},
     {{3, 3, 4}}},
    {"topk", MXC__SORT_TOPK, {{"k", "2"}, {"ret_typ", "mask"}}, {{3, 5, 4}}},
    {"topk",
     MXC__SORT_TOPK,
     {{"k", "0"}, {"axis", "1"}, {"ret_typ", "both"}},
     {{3, 5, 4}, {3, 5, 4}}},
    {"topk",
     MXC__SORT_TOPK,
     {{"k", "7"}, {"axis", "None"}, {"ret_typ", "both"}},
     {{7}, {7}}},
    // k * 16 <= n: the CPU's selection instead of its merge sort.
    {"topk",
     MXC__SORT_TOPK,
     {{"k", "3"}, {"axis", "None"}, {"ret_typ", "both"}, {"is_ascend", "true"}},
     {{3}, {3}}},
};

TEST(CudaNn3Plan, SortsMatchTheCpuBitwise) {
  std::mt19937 g(38);
  const Dims d = {3, 5, 4};
  for (size_t k = 0; k < kSorts.size(); ++k) {
    const SortCase &c = kSorts[k];
    int kind = c.kind;
    std::string what = std::string(c.op) + " case " + std::to_string(k);
    std::vector<Arr> in = {SortArr(d, &g)};
    std::vector<std::vector<int>> reqs = {{W}, {A}};
    if (c.outs.size() > 1) reqs = {{W, W}, {A, A}, {N, W}, {W, N}};
    for (const std::vector<int> &req : reqs) {
      std::vector<Arr> outs;
      for (const Dims &od : c.outs) outs.push_back(Rand(od, -1, 1, &g));
      Expect(what, c.op, c.kv, in, outs, req,
             [kind](Host *h) { h->Sort(kind, false); });
    }
    if (kind == MXC__SORT_ARGSORT) continue;
    std::string ret;
    for (const auto &p : c.kv) {
      if (p.first == "ret_typ") ret = p.second;
    }
    if (ret == "mask" || (kind == MXC__SORT_TOPK && ret.empty())) continue;
    std::vector<Arr> bin = {Rand(c.outs[0], -1, 1, &g)};
    if (ret == "both") bin.push_back(Rand(c.outs[1], 0, 3, &g));
    bin.push_back(in[0]);
    std::string bname =
        kind == MXC__SORT_SORT ? "_backward_sort" : "_backward_topk";
    for (int req : {W, A}) {
      Expect("_backward_" + what, bname.c_str(), c.kv, bin,
             {Rand(d, -1, 1, &g)}, {req},
             [kind](Host *h) { h->Sort(kind, true); });
    }
  }
  // The comparison can fail: descending ranks for an ascending sort.
  std::vector<Arr> in = {SortArr(d, &g)}, hi = in;
  std::vector<Arr> co = {Rand(d, -1, 1, &g)}, ho = co;
  ASSERT_EQ(Cpu("argsort", {}, in, &co, {W}), MXC_OK);
  void *param = Parse("argsort", {});
  ((mxc__sort_param *)param)->is_ascend = 0;
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W};
  h.Sort(MXC__SORT_ARGSORT, false);
  mxc__free(param);
  EXPECT_FALSE(Same(co[0], ho[0]));
}

// ---- Pad, Crop ----

struct PadCase {
  Kv kv;
  Dims d, out;
};

const std::vector<PadCase> kPads = {
    {{{"mode", "constant"},
      {"pad_width", "(0,0,1,2,2,1)"},
      {"constant_value", "0.3"}},
     {2, 3, 4},
     {2, 6, 7}},
    {{{"mode", "edge"}, {"pad_width", "(1,2,0,0,3,1)"}}, {2, 3, 4}, {5, 3, 8}},
    {{{"mode", "edge"}, {"pad_width", "(2,2,1,0)"}}, {1, 3}, {5, 4}},
    {{{"mode", "reflect"}, {"pad_width", "(1,1,2,3,3,3)"}},
     {3, 4, 4},
     {5, 9, 10}},
    {{{"mode", "reflect"}, {"pad_width", "(0,0,0,0,1,1,2,1)"}},
     {2, 2, 3, 3},
     {2, 2, 5, 6}},
};

TEST(CudaNn3Plan, PadMatchesTheCpuBitwise) {
  std::mt19937 g(39);
  for (size_t k = 0; k < kPads.size(); ++k) {
    const PadCase &c = kPads[k];
    std::vector<Arr> in = {Rand(c.d, -2, 2, &g)};
    std::string what = "Pad case " + std::to_string(k);
    for (int req : {W, A}) {
      Expect(what, "Pad", c.kv, in, {Rand(c.out, -1, 1, &g)}, {req},
             [](Host *h) { h->Pad(false); });
      Expect("_backward_" + what, "_backward_Pad", c.kv,
             {Rand(c.out, -1, 1, &g), in[0]}, {Rand(c.d, -1, 1, &g)}, {req},
             [](Host *h) { h->Pad(true); });
    }
  }
  // The comparison can fail: edge padding's gradient as reflect's.
  const PadCase &c = kPads[1];
  std::vector<Arr> in = {Rand(c.out, -1, 1, &g), Rand(c.d, -2, 2, &g)};
  std::vector<Arr> hi = in, co = {Rand(c.d, -1, 1, &g)}, ho = co;
  ASSERT_EQ(Cpu("_backward_Pad", c.kv, in, &co, {W}), MXC_OK);
  void *param = Parse("_backward_Pad", c.kv);
  ((mxc__pad_param *)param)->mode = MXC__PAD_REFLECT;
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W};
  h.Pad(true);
  mxc__free(param);
  EXPECT_FALSE(Same(co[0], ho[0]));
}

TEST(CudaNn3Plan, CropMatchesTheCpuBitwise) {
  std::mt19937 g(40);
  const Dims d = {2, 3, 7, 6};
  const std::vector<std::pair<Kv, Dims>> cases = {
      {{{"num_args", "1"}, {"h_w", "(3,4)"}, {"offset", "(2,1)"}}, {}},
      {{{"num_args", "1"}, {"h_w", "(4,3)"}, {"center_crop", "true"}}, {}},
      {{{"num_args", "2"}}, {5, 5, 2}},
      {{{"num_args", "2"}, {"center_crop", "true"}}, {1, 4, 3}},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Kv &kv = cases[k].first;
    const Dims &like = cases[k].second;
    std::vector<Arr> in = {Rand(d, -2, 2, &g)};
    if (!like.empty()) in.push_back(Rand(like, -1, 1, &g));
    Dims od = {2, 3, 0, 0};
    if (like.empty()) {
      std::string hw = kv[1].second;  // "(h,w)"
      od[2] = hw[1] - '0', od[3] = hw[3] - '0';
    } else {
      od[2] = like[like.size() - 2], od[3] = like.back();
    }
    std::string what = "Crop case " + std::to_string(k);
    std::vector<Arr> bin = {Rand(od, -1, 1, &g)};
    bin.insert(bin.end(), in.begin(), in.end());
    for (int req : {W, A}) {
      Expect(what, "Crop", kv, in, {Rand(od, -1, 1, &g)}, {req},
             [](Host *h) { h->Crop(false); });
      Expect("_backward_" + what, "_backward_Crop", kv, bin,
             {Rand(d, -1, 1, &g)}, {req}, [](Host *h) { h->Crop(true); });
    }
  }
}

// ---- GridGenerator, BilinearSampler, SpatialTransformer ----

// Grid points in and around the image (outside points read 0).
Arr Theta(int64_t n, std::mt19937 *g) {
  Arr t = Rand({n, 6}, -0.3f, 0.3f, g);
  for (int64_t i = 0; i < n; ++i) t.v[i * 6] += 1.1f, t.v[i * 6 + 4] += 0.9f;
  return t;
}

TEST(CudaNn3Plan, SamplersMatchTheCpuBitwise) {
  std::mt19937 g(41);
  const Kv affine = {{"transform_type", "affine"}, {"target_shape", "(4,5)"}};
  const Kv warp = {{"transform_type", "warp"}};
  for (int req : {W, A}) {
    Arr th = Theta(2, &g), flow = Rand({2, 2, 3, 4}, -2, 2, &g);
    Expect("GridGenerator affine", "GridGenerator", affine, {th},
           {Rand({2, 2, 4, 5}, -1, 1, &g)}, {req},
           [](Host *h) { h->Grid(false); });
    Expect("GridGenerator warp", "GridGenerator", warp, {flow},
           {Rand({2, 2, 3, 4}, -1, 1, &g)}, {req},
           [](Host *h) { h->Grid(false); });
    Expect("_backward_GridGenerator affine", "_backward_GridGenerator", affine,
           {Rand({2, 2, 4, 5}, -1, 1, &g), th}, {Rand({2, 6}, -1, 1, &g)},
           {req}, [](Host *h) { h->Grid(true); });
    Expect("_backward_GridGenerator warp", "_backward_GridGenerator", warp,
           {Rand({2, 2, 3, 4}, -1, 1, &g), flow},
           {Rand({2, 2, 3, 4}, -1, 1, &g)}, {req},
           [](Host *h) { h->Grid(true); });
  }
  const Dims data = {2, 3, 5, 6}, out = {2, 3, 4, 5};
  const Kv st = {{"target_shape", "(4,5)"},
                 {"transform_type", "affine"},
                 {"sampler_type", "bilinear"}};
  for (const std::vector<int> &req :
       {std::vector<int>{W, W}, std::vector<int>{A, A}, std::vector<int>{W, N},
        std::vector<int>{N, W}}) {
    Arr x = Rand(data, -2, 2, &g), grid = Rand({2, 2, 4, 5}, -1.2f, 1.2f, &g);
    Arr th = Theta(2, &g);
    Expect("BilinearSampler", "BilinearSampler", {}, {x, grid},
           {Rand(out, -1, 1, &g)}, {req[0]},
           [](Host *h) { h->Sampler(false, false); });
    Expect("SpatialTransformer", "SpatialTransformer", st, {x, th},
           {Rand(out, -1, 1, &g)}, {req[0]},
           [](Host *h) { h->Sampler(true, false); });
    Expect("_backward_BilinearSampler", "_backward_BilinearSampler", {},
           {Rand(out, -1, 1, &g), x, grid},
           {Rand(data, -1, 1, &g), Rand({2, 2, 4, 5}, -1, 1, &g)}, req,
           [](Host *h) { h->Sampler(false, true); });
    Expect("_backward_SpatialTransformer", "_backward_SpatialTransformer", st,
           {Rand(out, -1, 1, &g), x, th},
           {Rand(data, -1, 1, &g), Rand({2, 6}, -1, 1, &g)}, req,
           [](Host *h) { h->Sampler(true, true); });
  }
  // The comparison can fail: a warp grid made as an affine one.
  Arr flow = Rand({2, 2, 3, 4}, -2, 2, &g);
  std::vector<Arr> in = {flow}, hi = in;
  std::vector<Arr> co = {Rand({2, 2, 3, 4}, -1, 1, &g)}, ho = co;
  ASSERT_EQ(Cpu("GridGenerator", warp, in, &co, {W}), MXC_OK);
  void *param = Parse("GridGenerator", warp);
  ((mxc__st_param *)param)->transform_type = MXC__GG_AFFINE;
  Host h;
  h.param = param, h.in = &hi, h.out = &ho, h.req = {W};
  h.Grid(false);
  mxc__free(param);
  EXPECT_FALSE(Same(co[0], ho[0]));
}

}  // namespace
