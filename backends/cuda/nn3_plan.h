/* LayerNorm, L2Normalization, Dropout, argmax, argmin, SequenceMask,
 * SequenceLast, SequenceReverse and their gradients as ops/ computes them
 * for float32 (layer_norm.c, l2_norm.c, dropout.c, reduce/argmax.c,
 * sequence.c): the rules nn3.cu runs, one thread per group, output
 * element or parameter, each in the CPU's order and arithmetic (float
 * where the CPU computes in float, double where it does), so results are
 * bitwise the CPU's with -fmad=false.
 *
 * Groups: LayerNorm's and L2Normalization's group (o, k) is the n
 * elements x[(o * n + j) * inner + k], its statistics at o * inner + k.
 * argmax/argmin search group (o, k) the same way (axis None: one group
 * of every element), keeping the first extreme (the first NaN wins).
 *
 * Dropout: element i takes value mxc__drop_value_index(i) of the call's
 * Philox slice as a float64 uniform on [0, 1) (words 2v, 2v + 1:
 * core/resource/random.h's layout), as the CPU's mxc__rng_uniform_f64.
 *
 * Plain C with no CUDA header, shared by nn3.cu and the host test
 * (tests/gpu:test_cuda_nn3_plan), which runs these functions against the
 * CPU operators. Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_NN3_PLAN_H_
#define MXC_BACKENDS_CUDA_NN3_PLAN_H_

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MXC__NN3_HD __host__ __device__ __forceinline__
#define MXC__DROP_HD __host__ __device__ static inline
#define MXC__SEQ_HD __host__ __device__ static inline
#else
#define MXC__NN3_HD static inline
#endif

#include "core/base/gpu_plugin.h"
#include "core/resource/philox_impl.h"
#include "ops/nn/dropout_params.h"
#include "ops/nn/norm_params.h"
#include "ops/nn/sequence_params.h"
#include "ops/reduce/arg_params.h"

/* Per output k: written at all (present, mode not NULL), added (ADD). */
typedef struct mxc__nn3_modes {
  int on[3], add[3];
} mxc__nn3_modes;

/* Host only. */
static inline mxc__nn3_modes mxc__nn3_modes_of(const int *req, int n_out) {
  mxc__nn3_modes m;
  for (int k = 0; k < 3; ++k) {
    m.on[k] = k < n_out && req[k] != MXC__GPU_REQ_NULL;
    m.add[k] = k < n_out && req[k] == MXC__GPU_REQ_ADD;
  }
  return m;
}

MXC__NN3_HD void mxc__nn3_put(float *o, int64_t i, float v, int add) {
  o[i] = add ? o[i] + v : v;
}

/* (outer, n, inner) of x around axis a: the extents before, at, after. */
typedef struct mxc__nn3_groups {
  int64_t outer, n, inner;
} mxc__nn3_groups;

/* Host only. */
static inline mxc__nn3_groups mxc__nn3_split(const mxc__gpu_array *x, int a) {
  mxc__nn3_groups l = {1, x->dims[a], 1};
  for (int d = 0; d < a; ++d) l.outer *= x->dims[d];
  for (int d = a + 1; d < x->ndim; ++d) l.inner *= x->dims[d];
  return l;
}

/* ---- LayerNorm ---- */

typedef struct mxc__ln_plan {
  mxc__nn3_groups l;
  double eps;
  mxc__nn3_modes m;
} mxc__ln_plan;

/* Host only: data x (its axis validated by the operator's shape rule). */
static inline mxc__ln_plan mxc__ln_plan_make(const mxc__ln_param *p,
                                             const mxc__gpu_array *x,
                                             const int *req, int n_out) {
  mxc__ln_plan q;
  int64_t a = p->axis < 0 ? p->axis + x->ndim : p->axis;
  q.l = mxc__nn3_split(x, (int)a);
  q.eps = p->eps;
  q.m = mxc__nn3_modes_of(req, n_out);
  return q;
}

/* Forward, group g = o * inner + k: y, mean, std. */
MXC__NN3_HD void mxc__ln_fwd(const mxc__ln_plan *q, const float *x,
                             const float *gamma, const float *beta, float *y,
                             float *mean_out, float *std_out, int64_t g) {
  int64_t n = q->l.n, in = q->l.inner;
  int64_t o = g / in, k = g % in, base = o * n * in + k;
  double s = 0, v = 0;
  for (int64_t j = 0; j < n; ++j) s += x[base + j * in];
  double mean = n > 0 ? s / (double)n : 0;
  for (int64_t j = 0; j < n; ++j) {
    double d = x[base + j * in] - mean;
    v += d * d;
  }
  double sd = sqrt((n > 0 ? v / (double)n : 0) + q->eps);
  for (int64_t j = 0; q->m.on[0] && j < n; ++j) {
    int64_t i = base + j * in;
    mxc__nn3_put(y, i, (float)((x[i] - mean) / sd * gamma[j] + beta[j]),
                 q->m.add[0]);
  }
  if (q->m.on[1]) mxc__nn3_put(mean_out, g, (float)mean, q->m.add[1]);
  if (q->m.on[2]) mxc__nn3_put(std_out, g, (float)sd, q->m.add[2]);
}

/* Gradient: ddata of group g from (ograd, data, gamma, mean, std). */
MXC__NN3_HD void mxc__ln_dx(const mxc__ln_plan *q, const float *og,
                            const float *x, const float *gamma,
                            const float *mean, const float *sdv, float *dx,
                            int64_t g) {
  int64_t n = q->l.n, in = q->l.inner;
  int64_t o = g / in, k = g % in, base = o * n * in + k;
  double mu = mean[g], sd = sdv[g], sum_h = 0, sum_hx = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t i = base + j * in;
    double h = (double)og[i] * gamma[j];
    sum_h += h;
    sum_hx += h * ((x[i] - mu) / sd);
  }
  double nn = (double)n;
  for (int64_t j = 0; j < n; ++j) {
    int64_t i = base + j * in;
    double h = (double)og[i] * gamma[j];
    double xhat = (x[i] - mu) / sd;
    mxc__nn3_put(dx, i, (float)((h - sum_h / nn - xhat * sum_hx / nn) / sd),
                 q->m.add[0]);
  }
}

/* Gradient: dgamma[j] and dbeta[j] (outputs 1 and 2), summed over the
 * groups in the CPU's order; the products in float as the CPU's. */
MXC__NN3_HD void mxc__ln_dgb(const mxc__ln_plan *q, const float *og,
                             const float *x, const float *mean,
                             const float *sdv, float *dg, float *db,
                             int64_t j) {
  double sg = 0, sb = 0;
  for (int64_t o = 0; o < q->l.outer; ++o) {
    for (int64_t k = 0; k < q->l.inner; ++k) {
      int64_t i = (o * q->l.n + j) * q->l.inner + k, s = o * q->l.inner + k;
      sg += og[i] * ((x[i] - mean[s]) / sdv[s]);
      sb += og[i];
    }
  }
  if (q->m.on[1]) mxc__nn3_put(dg, j, (float)sg, q->m.add[1]);
  if (q->m.on[2]) mxc__nn3_put(db, j, (float)sb, q->m.add[2]);
}

/* ---- L2Normalization ---- */

typedef struct mxc__l2n_plan {
  mxc__nn3_groups l;
  double eps;
  mxc__nn3_modes m;
} mxc__l2n_plan;

/* Host only: data x (N, C, ...), at least 2 axes. */
static inline mxc__l2n_plan mxc__l2n_plan_make(const mxc__l2n_param *p,
                                               const mxc__gpu_array *x,
                                               const int *req, int n_out) {
  mxc__l2n_plan q;
  int64_t spatial = 1;
  for (int d = 2; d < x->ndim; ++d) spatial *= x->dims[d];
  mxc__nn3_groups l = {x->dims[0], x->dims[1] * spatial, 1};
  if (p->mode == MXC__L2N_CHANNEL) {
    l.n = x->dims[1];
    l.inner = spatial;
  } else if (p->mode == MXC__L2N_SPATIAL) {
    l.outer = x->dims[0] * x->dims[1];
    l.n = spatial;
  }
  q.l = l;
  q.eps = p->eps;
  q.m = mxc__nn3_modes_of(req, n_out);
  return q;
}

/* Forward, group g: y and the hidden norm. */
MXC__NN3_HD void mxc__l2n_fwd(const mxc__l2n_plan *q, const float *x, float *y,
                              float *norm_out, int64_t g) {
  int64_t n = q->l.n, in = q->l.inner;
  int64_t base = g / in * n * in + g % in;
  double s = 0;
  for (int64_t j = 0; j < n; ++j) {
    double v = x[base + j * in];
    s += v * v;
  }
  double norm = sqrt(s + q->eps);
  for (int64_t j = 0; q->m.on[0] && j < n; ++j) {
    int64_t i = base + j * in;
    mxc__nn3_put(y, i, (float)(x[i] / norm), q->m.add[0]);
  }
  if (q->m.on[1]) mxc__nn3_put(norm_out, g, (float)norm, q->m.add[1]);
}

/* Gradient, group g: from (ograd, output, norm). */
MXC__NN3_HD void mxc__l2n_dx(const mxc__l2n_plan *q, const float *og,
                             const float *y, const float *norm, float *dx,
                             int64_t g) {
  int64_t n = q->l.n, in = q->l.inner;
  int64_t base = g / in * n * in + g % in;
  double s = 0;
  for (int64_t j = 0; j < n; ++j) {
    s += (double)og[base + j * in] * y[base + j * in];
  }
  double nv = norm[g];
  for (int64_t j = 0; j < n; ++j) {
    int64_t i = base + j * in;
    mxc__nn3_put(dx, i, (float)((og[i] - y[i] * s) / nv), q->m.add[0]);
  }
}

/* ---- Dropout ---- */

typedef struct mxc__drop_plan {
  int active; /* draws a mask (else the mask is 1) */
  double p, keep;
  uint32_t key[2];
  uint64_t first_block;
  int ndim;
  int64_t dims[MXC_MAX_NDIM];
  unsigned bits; /* shared axes */
  mxc__nn3_modes m;
} mxc__drop_plan;

/* Host only: for data x, the call's training flag and slice. */
static inline mxc__drop_plan mxc__drop_plan_make(const mxc__drop_param *p,
                                                 const mxc__gpu_array *x,
                                                 int is_train,
                                                 const mxc__gpu_rng *rng,
                                                 const int *req, int n_out) {
  mxc__drop_plan q;
  q.active = (p->mode == MXC__DROP_ALWAYS || is_train) && p->p > 0;
  q.p = p->p;
  q.keep = 1 / (1 - p->p);
  q.key[0] = rng->key[0], q.key[1] = rng->key[1];
  q.first_block = rng->block;
  q.ndim = x->ndim;
  for (int d = 0; d < MXC_MAX_NDIM; ++d)
    q.dims[d] = d < x->ndim ? x->dims[d] : 1;
  q.bits = 0;
  for (int i = 0; p->axes.ndim > 0 && i < p->axes.ndim; ++i) {
    int64_t a = p->axes.d[i] < 0 ? p->axes.d[i] + x->ndim : p->axes.d[i];
    q.bits |= 1u << a;
  }
  q.m = mxc__nn3_modes_of(req, n_out);
  return q;
}

/* Value v of the slice as a float64 uniform on [0, 1). */
MXC__NN3_HD double mxc__drop_uniform(const mxc__drop_plan *q, int64_t v) {
  uint32_t w[4];
  mxc__philox_slice_block(q->key, q->first_block, (uint64_t)v / 2, w);
  int k = (int)(v % 2) * 2;
  /* below hi = the largest double below 1, as random.c's nextafter. */
  return mxc__philox_uniform_f64(w[k], w[k + 1], 0, 1, 1,
                                 1.0 - 1.0 / 9007199254740992.0);
}

/* Forward, element i: y and the hidden mask. */
MXC__NN3_HD void mxc__drop_fwd(const mxc__drop_plan *q, const float *x,
                               float *y, float *mask, int64_t i) {
  float mk = 1;
  if (q->active) {
    int64_t v =
        q->bits ? mxc__drop_value_index(i, q->ndim, q->dims, q->bits) : i;
    mk = (float)(mxc__drop_uniform(q, v) >= q->p ? q->keep : 0);
  }
  if (q->m.on[0]) mxc__nn3_put(y, i, x[i] * mk, q->m.add[0]);
  if (q->m.on[1]) mxc__nn3_put(mask, i, mk, q->m.add[1]);
}

/* ---- argmax, argmin ---- */

typedef struct mxc__argx_plan {
  mxc__nn3_groups l;
  int is_max, add;
} mxc__argx_plan;

/* Host only: data x (axis validated by the operator's shape rule). */
static inline mxc__argx_plan mxc__argx_plan_make(const mxc__arg_param *p,
                                                 int is_max,
                                                 const mxc__gpu_array *x,
                                                 int req) {
  mxc__argx_plan q;
  if (p->axis.has) {
    int64_t a = p->axis.v < 0 ? p->axis.v + x->ndim : p->axis.v;
    q.l = mxc__nn3_split(x, (int)a);
  } else {
    mxc__nn3_groups all = {1, x->size, 1};
    q.l = all;
  }
  q.is_max = is_max;
  q.add = req == MXC__GPU_REQ_ADD;
  return q;
}

/* Output element g: the position, as a float (added in double, as the
 * CPU's blob set). */
MXC__NN3_HD void mxc__argx_one(const mxc__argx_plan *q, const float *x,
                               float *out, int64_t g) {
  int64_t n = q->l.n, in = q->l.inner;
  int64_t base = g / in * n * in + g % in, pos = -1;
  double best = 0;
  for (int64_t j = 0; j < n; ++j) {
    float v = x[base + j * in];
    int better = q->is_max ? v > best : v < best;
    if (pos < 0 || better || (isnan(v) && !isnan(best))) {
      best = v;
      pos = j;
    }
  }
  double r = (double)pos;
  if (q->add) r += (double)out[g];
  out[g] = (float)r;
}

/* ---- SequenceMask, SequenceLast, SequenceReverse ---- */

typedef struct mxc__seqk_plan {
  mxc__seq_geom g;
  int kind; /* MXC__SEQ_* */
  int has_len;
  float value;
  int add;
} mxc__seqk_plan;

/* Host only: data x (T, B, ...) or (B, T, ...), at least 2 axes. */
static inline mxc__seqk_plan mxc__seqk_plan_make(const mxc__seq_param *p,
                                                 int kind,
                                                 const mxc__gpu_array *x,
                                                 int has_len, int req) {
  mxc__seqk_plan q;
  q.g.axis = (int)p->axis;
  q.g.t = x->dims[q.g.axis];
  q.g.b = x->dims[1 - q.g.axis];
  q.g.inner = 1;
  for (int d = 2; d < x->ndim; ++d) q.g.inner *= x->dims[d];
  q.kind = kind;
  q.has_len = has_len;
  q.value = (float)p->value;
  q.add = req == MXC__GPU_REQ_ADD;
  return q;
}

/* Length of sequence b. */
MXC__NN3_HD int64_t mxc__seqk_len(const mxc__seqk_plan *q, const float *lens,
                                  int64_t b) {
  return q->has_len ? mxc__seq_len(lens[b], q->g.t) : q->g.t;
}

/* (t, b, r) of element i of a (T, B, ...) or (B, T, ...) array. */
MXC__NN3_HD void mxc__seqk_coords(const mxc__seqk_plan *q, int64_t i,
                                  int64_t *t, int64_t *b, int64_t *r) {
  int64_t s = i / q->g.inner;
  *r = i % q->g.inner;
  *t = q->g.axis == 0 ? s / q->g.b : s % q->g.t;
  *b = q->g.axis == 0 ? s % q->g.b : s / q->g.t;
}

/* Mask and Reverse, forward (src = data, fill = value) and gradient
 * (src = ograd, fill = 0): element i of the data-shaped result. */
MXC__NN3_HD void mxc__seqk_map(const mxc__seqk_plan *q, const float *src,
                               const float *lens, float fill, float *out,
                               int64_t i) {
  int64_t t, b, r;
  mxc__seqk_coords(q, i, &t, &b, &r);
  int64_t len = mxc__seqk_len(q, lens, b);
  float v =
      q->kind == MXC__SEQ_MASK && t >= len
          ? fill
          : src[mxc__seq_step(&q->g, mxc__seq_source(q->kind, t, len), b) + r];
  mxc__nn3_put(out, i, v, q->add);
}

/* SequenceLast forward: element i = b * inner + r of the (B, ...) output
 * (lengths checked to lie in 1..T first). */
MXC__NN3_HD void mxc__seqk_last(const mxc__seqk_plan *q, const float *x,
                                const float *lens, float *out, int64_t i) {
  int64_t b = i / q->g.inner, r = i % q->g.inner;
  int64_t len = mxc__seqk_len(q, lens, b);
  mxc__nn3_put(out, i, x[mxc__seq_step(&q->g, len - 1, b) + r], q->add);
}

/* SequenceLast gradient: element i of ddata. The CPU clears ddata (write)
 * and then adds the ograd step into it, so a written element is 0 + og;
 * in add mode only the selected step changes. */
MXC__NN3_HD void mxc__seqk_last_bwd(const mxc__seqk_plan *q, const float *og,
                                    const float *lens, float *dx, int64_t i) {
  int64_t t, b, r;
  mxc__seqk_coords(q, i, &t, &b, &r);
  int hit = t == mxc__seqk_len(q, lens, b) - 1;
  if (q->add) {
    if (hit) dx[i] += og[b * q->g.inner + r];
    return;
  }
  dx[i] = hit ? 0.f + og[b * q->g.inner + r] : 0.f;
}

#endif /* MXC_BACKENDS_CUDA_NN3_PLAN_H_ */
