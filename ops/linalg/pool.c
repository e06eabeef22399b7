/* Pooling (max, avg, sum, lp; 1-D to 3-D, channel-first) and its
 * gradient.
 *
 * Window o along an axis covers input positions [o*stride - pad,
 * o*stride - pad + kernel), clipped to the padded extent [-pad, in + pad)
 * and then to the input [0, in). Output extent: valid convention
 * floor((in + 2*pad - kernel) / stride) + 1, full convention ceil(...) + 1
 * (the full convention can add a last window that hangs over the padding).
 * avg divides by the window size clipped to the padded extent when
 * count_include_pad (the default), else by the number of input elements
 * it covers. A window that covers no input element yields 0 (and passes
 * no gradient). global_pool pools each whole plane to one value. The
 * 'same' convention (1-D only, no padding, as MXNet) gives ceil(in /
 * stride) windows, the last ones clipped at the end of the input.
 *
 * lp (p_value 1, 2 or 3, as MXNet): (sum of x^p over the window)^(1/p),
 * without absolute values (p = 1 is the plain sum, p = 3 the cube root
 * of the sum of cubes). Its gradient is ograd * (x / y)^(p - 1), 0 where
 * the output y is 0.
 *
 * Gradient: max sends the output gradient to the first maximum of its
 * window (row-major order), avg spreads it divided like the forward, sum
 * copies it to every covered element. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"
#include "core/op/parallel.h"
#include "core/op/half_compute.h"

enum {
  POOL_MAX = MXC__POOL_MAX,
  POOL_AVG = MXC__POOL_AVG,
  POOL_SUM = MXC__POOL_SUM,
  POOL_LP = MXC__POOL_LP
};
enum {
  CONV_VALID = MXC__POOL_VALID,
  CONV_FULL = MXC__POOL_FULL,
  CONV_SAME = MXC__POOL_SAME
};

typedef mxc__pool_param pool_param;

static const char *const k_types[] = {"max", "avg", "sum", "lp", NULL};
static const char *const k_conventions[] = {"valid", "full", "same", NULL};

static const mxc__param_def k_params[] = {
    MXC__PARAM(pool_param, kernel, MXC__P_TUPLE, "()",
               "Window size: (w,), (h, w) or (d, h, w); required unless "
               "global_pool."),
    MXC__PARAM_ENUM(pool_param, pool_type, "max", k_types,
                    "Reduction over each window."),
    MXC__PARAM(pool_param, global_pool, MXC__P_BOOL, "false",
               "Pool each whole plane (kernel, stride, pad ignored)."),
    MXC__PARAM(pool_param, stride, MXC__P_TUPLE, "()",
               "Stride per spatial axis; default 1."),
    MXC__PARAM(pool_param, pad, MXC__P_TUPLE, "()",
               "Padding per spatial axis on both sides; default 0."),
    MXC__PARAM_ENUM(pool_param, pooling_convention, "valid", k_conventions,
                    "Output size rounding: valid (floor), full (ceil), or "
                    "same (1-D, no pad: ceil(in / stride))."),
    MXC__PARAM(pool_param, count_include_pad, MXC__P_BOOL, "true",
               "avg: count padding positions in the divisor."),
    MXC__PARAM(pool_param, cudnn_off, MXC__P_BOOL, "false",
               "Accepted for compatibility; no effect on CPU."),
    MXC__PARAM_ENUM(pool_param, layout, "None", mxc__linalg_layouts,
                    "Data layout: None (channel-first), NCW, NCHW or NCDHW; "
                    "channel-last layouts are rejected."),
    MXC__PARAM(pool_param, p_value, MXC__P_OPT_INT, "None",
               "lp pooling: the power p (1, 2 or 3)."),
};

static int tuple_fill(const char *op_name, const char *name, mxc__tuple *t,
                      int nsp, int64_t dflt, int64_t lo) {
  if (t->ndim <= 0) {
    t->ndim = nsp;
    for (int i = 0; i < nsp; ++i) t->d[i] = dflt;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(t->ndim != nsp, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': %s has %d entries; the kernel has %d",
                      op_name, name, t->ndim, nsp);
  for (int i = 0; i < nsp; ++i) {
    MXC_RETURN_ERROR_IF(t->d[i] < lo, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': %s entries must be >= %lld (got "
                        "%lld)",
                        op_name, name, (long long)lo, (long long)t->d[i]);
  }
  return MXC_OK;
}

/* lp's p_value and the 'same' convention's limits. */
static int pool_check_modes(const char *op_name, const pool_param *p) {
  MXC_RETURN_ERROR_IF(
      p->pool_type == POOL_LP &&
          (!p->p_value.has || p->p_value.v < 1 || p->p_value.v > 3),
      MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': pool_type 'lp' needs p_value 1, 2 or 3 (got %s%lld)",
      op_name, p->p_value.has ? "" : "None ",
      (long long)(p->p_value.has ? p->p_value.v : 0));
  if (p->pooling_convention != CONV_SAME || p->global_pool) return MXC_OK;
  MXC_RETURN_ERROR_IF(p->kernel.ndim != 1, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': pooling_convention 'same' supports 1-D "
                      "kernels only (got %d entries)",
                      op_name, p->kernel.ndim < 0 ? 0 : p->kernel.ndim);
  MXC_RETURN_ERROR_IF(p->pad.ndim > 0 && p->pad.d[0] != 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': pooling_convention 'same' takes no pad "
                      "(got %lld)",
                      op_name, (long long)p->pad.d[0]);
  return MXC_OK;
}

static int pool_check(const char *op_name, void *param) {
  pool_param *p = param;
  MXC_FORWARD_IF_ERROR(pool_check_modes(op_name, p));
  if (p->global_pool) {
    /* kernel/stride/pad are ignored; the layout still has to be one we
     * implement (its rank is checked against the data later). */
    return mxc__linalg_check_layout(op_name, p->layout, 0);
  }
  int nsp = p->kernel.ndim;
  MXC_RETURN_ERROR_IF(nsp < 1 || nsp > 3, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': kernel must have 1, 2 or 3 entries "
                      "(got %d) unless global_pool is set",
                      op_name, nsp < 0 ? 0 : nsp);
  MXC_FORWARD_IF_ERROR(tuple_fill(op_name, "kernel", &p->kernel, nsp, 1, 1));
  MXC_FORWARD_IF_ERROR(tuple_fill(op_name, "stride", &p->stride, nsp, 1, 1));
  MXC_FORWARD_IF_ERROR(tuple_fill(op_name, "pad", &p->pad, nsp, 0, 0));
  return mxc__linalg_check_layout(op_name, p->layout, nsp);
}

/* Geometry padded to 3-D with leading unit axes. */
typedef struct pool_geom {
  int64_t planes; /* N * C */
  int64_t in[3], out[3], k[3], s[3], p[3];
  int64_t in_n, out_n;
  int lp; /* lp pooling's power */
} pool_geom;

/* Output extent *o of spatial axis j (of a non-global pooling), with
 * checked arithmetic: the padded input, the windows' ends ((o - 1) * s -
 * pad + k <= room + s - pad + k) and the product of the kernel extents
 * *win (the avg divisor with padding) must fit in int64. */
static int axis_plan(const mxc__op *op, const pool_param *p,
                     const mxc__shape *data, int j, int64_t *win,
                     int64_t *o) {
  char b1[160];
  int64_t in = data->dims[2 + j], k = p->kernel.d[j], s = p->stride.d[j];
  int64_t pd = p->pad.d[j], room, end;
  MXC_RETURN_ERROR_IF(
      !mxc__mul_i64(pd, 2, &room) || !mxc__add_i64(room, in, &room),
      MXC_ERR_SHAPE, "operator '%s': pad %lld along spatial axis %d "
      "overflows int64", op->name, (long long)pd, j);
  MXC_RETURN_ERROR_IF(room < k, MXC_ERR_SHAPE,
                      "operator '%s': kernel %lld is larger than the "
                      "padded input (%lld = %lld + 2*%lld) along spatial "
                      "axis %d of data %s",
                      op->name, (long long)k, (long long)room, (long long)in,
                      (long long)pd, j, mxc__shape_str(data, b1, sizeof b1));
  room -= k;
  MXC_RETURN_ERROR_IF(
      !mxc__add_i64(room, s, &end) || !mxc__add_i64(end, k, &end) ||
          !mxc__mul_i64(*win, k, win),
      MXC_ERR_SHAPE, "operator '%s': kernel %lld with stride %lld along "
      "spatial axis %d of data %s overflows int64 sizes", op->name,
      (long long)k, (long long)s, j, mxc__shape_str(data, b1, sizeof b1));
  /* Rounded up without forming room + s - 1. */
  if (p->pooling_convention == CONV_SAME) {
    *o = in / s + (in % s != 0);
  } else {
    *o = room / s + (p->pooling_convention == CONV_FULL && room % s) + 1;
  }
  return MXC_OK;
}

static int pool_plan(const mxc__op *op, const pool_param *p,
                     const mxc__shape *data, pool_geom *g, mxc__shape *out) {
  char b1[160];
  int nsp = p->global_pool ? data->ndim - 2 : p->kernel.ndim;
  MXC_RETURN_ERROR_IF(nsp < 1 || nsp > 3, MXC_ERR_SHAPE,
                      "operator '%s': data %s must have batch, channel and "
                      "1 to 3 spatial axes for global pooling",
                      op->name, mxc__shape_str(data, b1, sizeof b1));
  MXC_RETURN_ERROR_IF(data->ndim != nsp + 2, MXC_ERR_SHAPE,
                      "operator '%s': data %s must have %d axes (batch, "
                      "channel and %d spatial) for a %d-D kernel",
                      op->name, mxc__shape_str(data, b1, sizeof b1), nsp + 2,
                      nsp, nsp);
  MXC_FORWARD_IF_ERROR(mxc__linalg_check_layout(op->name, p->layout, nsp));
  int lead = 3 - nsp;
  g->lp = p->pool_type == POOL_LP ? (int)p->p_value.v : 0;
  g->planes = data->dims[0] * data->dims[1];
  g->in_n = g->out_n = 1;
  int64_t win = 1;
  *out = *data;
  for (int i = 0; i < 3; ++i) {
    int j = i - lead;
    int64_t in = j < 0 ? 1 : data->dims[2 + j];
    int64_t k = in, s = 1, pd = 0, o = 1;
    if (j >= 0 && !p->global_pool) {
      MXC_FORWARD_IF_ERROR(axis_plan(op, p, data, j, &win, &o));
      k = p->kernel.d[j];
      s = p->stride.d[j];
      pd = p->pad.d[j];
    }
    g->in[i] = in;
    g->k[i] = k;
    g->s[i] = s;
    g->p[i] = pd;
    g->out[i] = o;
    g->in_n *= in;
    MXC_RETURN_ERROR_IF(!mxc__mul_i64(g->out_n, o, &g->out_n), MXC_ERR_SHAPE,
                        "operator '%s': the output positions of data %s "
                        "overflow int64",
                        op->name, mxc__shape_str(data, b1, sizeof b1));
    if (j >= 0) out->dims[2 + j] = o;
  }
  return MXC_OK;
}

static int pool_infer_shape(const mxc__op *op, const void *param,
                            mxc__shape *in, int n_in, mxc__shape *out,
                            int n_out) {
  (void)n_in, (void)n_out;
  if (in[0].ndim < 0) return MXC_OK;
  pool_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(pool_plan(op, param, &in[0], &g, &o));
  return mxc__linalg_assign_shape(op, param, &out[0], &o, "output");
}

static int pool_bwd_infer_shape(const mxc__op *op, const void *param,
                                mxc__shape *in, int n_in, mxc__shape *out,
                                int n_out) {
  if (in[1].ndim >= 0) {
    mxc__shape o = {-1, {0}};
    MXC_FORWARD_IF_ERROR(pool_infer_shape(op, param, in + 1, 1, &o, 1));
    if (in[0].ndim >= 0) {
      MXC_FORWARD_IF_ERROR(
          mxc__linalg_assign_shape(op, param, &in[0], &o, "ograd"));
    }
  }
  return mxc__linalg_bwd_infer_shape(op, param, in, n_in, out, n_out);
}

/* ---- kernels ---- */

/* One window: input ranges [lo, hi) per axis and the avg divisor. */
typedef struct window {
  int64_t lo[3], hi[3];
  int64_t div;
} window;

/* The window of flat output index oi. */
static void window_at(const pool_geom *g, int64_t oi, int cip, window *w) {
  int64_t o[3] = {oi / (g->out[1] * g->out[2]), oi / g->out[2] % g->out[1],
                  oi % g->out[2]};
  int64_t padded = 1, inside = 1;
  for (int i = 0; i < 3; ++i) {
    int64_t a = o[i] * g->s[i] - g->p[i];
    int64_t b = a + g->k[i];
    if (b > g->in[i] + g->p[i]) b = g->in[i] + g->p[i];
    padded *= b - a;
    w->lo[i] = a < 0 ? 0 : a;
    w->hi[i] = b > g->in[i] ? g->in[i] : b;
    if (w->hi[i] < w->lo[i]) w->hi[i] = w->lo[i];
    inside *= w->hi[i] - w->lo[i];
  }
  w->div = inside == 0 ? 0 : (cip ? padded : inside);
}

/* Visits the flat input index `idx` of every element of window w. */
#define FOR_WINDOW(w, idx)                                            \
  for (int64_t d_ = (w).lo[0]; d_ < (w).hi[0]; ++d_)                  \
    for (int64_t h_ = (w).lo[1]; h_ < (w).hi[1]; ++h_)                \
      for (int64_t idx = (d_ * g->in[1] + h_) * g->in[2] + (w).lo[2], \
                   e_ = idx + (w).hi[2] - (w).lo[2];                  \
           idx < e_; ++idx)

/* x^p for lp pooling's p in 0..3 (the gradient uses p - 1), and the
 * p-th root as MXNet takes it (the cube root keeps the sign). */
static inline double lp_pow(double x, int p) {
  return p == 0 ? 1 : p == 1 ? x : p == 2 ? x * x : x * x * x;
}

static inline double lp_root(double x, int p) {
  return p == 1 ? x : p == 2 ? sqrt(x) : cbrt(x);
}

/* The generic kernels, one plane at a time: every window through
 * window_at, so any rank, padding and convention. */
#define DEF_POOL(T, sfx, LOWEST)                                       \
  static void pool_fwd_##sfx(const pool_geom *g, int type, int cip,    \
                             const T *xp, T *yp, mxc__req req) {       \
    for (int64_t oi = 0; oi < g->out_n; ++oi) {                        \
      window w;                                                        \
      window_at(g, oi, cip, &w);                                       \
      T v = type == POOL_MAX ? LOWEST : 0;                             \
      FOR_WINDOW(w, i) {                                               \
        if (type == POOL_MAX) {                                        \
          if (xp[i] > v) v = xp[i];                                    \
        } else if (type == POOL_LP) {                                  \
          v += (T)lp_pow(xp[i], g->lp);                                \
        } else {                                                       \
          v += xp[i];                                                  \
        }                                                              \
      }                                                                \
      if (w.div == 0) v = 0; /* empty window */                        \
      if (type == POOL_AVG && w.div) v /= (T)w.div;                    \
      if (type == POOL_LP) v = (T)lp_root(v, g->lp);                   \
      MXC__ASSIGN(req, yp[oi], v);                                     \
    }                                                                  \
  }                                                                    \
  static void pool_bwd_##sfx(const pool_geom *g, int type, int cip,    \
                             const T *gp, const T *xp, T *dp) {        \
    for (int64_t oi = 0; oi < g->out_n; ++oi) {                        \
      window w;                                                        \
      window_at(g, oi, cip, &w);                                       \
      if (w.div == 0) continue;                                        \
      if (type == POOL_MAX) {                                          \
        int64_t arg = -1;                                              \
        T best = LOWEST;                                               \
        FOR_WINDOW(w, i) {                                             \
          if (arg < 0 || xp[i] > best) {                               \
            best = xp[i];                                              \
            arg = i;                                                   \
          }                                                            \
        }                                                              \
        dp[arg] += gp[oi];                                             \
      } else if (type == POOL_LP) {                                    \
        double y = 0;                                                  \
        FOR_WINDOW(w, i) y += lp_pow(xp[i], g->lp);                    \
        y = lp_root(y, g->lp);                                         \
        if (y == 0) continue; /* as MXNet: no inf or NaN */            \
        FOR_WINDOW(w, i) dp[i] += (T)(gp[oi] * lp_pow(xp[i] / y, g->lp - 1)); \
      } else {                                                         \
        T v = type == POOL_AVG ? gp[oi] / (T)w.div : gp[oi];           \
        FOR_WINDOW(w, i) dp[i] += v;                                   \
      }                                                                \
    }                                                                  \
  }
DEF_POOL(float, f32, -INFINITY)
DEF_POOL(double, f64, -INFINITY)

/* Fast kernels for "simple" geometries (pool_simple): at most two spatial
 * axes, no padding and every window wholly inside the input, so a window
 * is kh rows of kw contiguous elements and the divisor is kh * kw. They
 * visit the elements in the same row-major order and with the same
 * comparisons as the generic kernels, so the results are bit-identical
 * (max: the first maximum gets the gradient; NaN is never picked in the
 * forward unless the window holds nothing else). 2x2 windows with stride
 * 2 (the common case) are written out. */
static int pool_simple(const pool_geom *g) {
  if (g->in[0] != 1 || g->k[0] != 1) return 0;
  for (int i = 0; i < 3; ++i) {
    if (g->p[i] != 0) return 0;
    if ((g->out[i] - 1) * g->s[i] + g->k[i] > g->in[i]) return 0;
  }
  return 1;
}

static int pool_is_2x2s2(const pool_geom *g) {
  return g->k[1] == 2 && g->k[2] == 2 && g->s[1] == 2 && g->s[2] == 2;
}

#define MAX_STEP(v, a) \
  do {                 \
    if ((a) > (v)) (v) = (a); \
  } while (0)
/* The generic backward's "first maximum": idx replaces arg only when
 * strictly greater. */
#define ARG_STEP(best, arg, p, idx) \
  do {                              \
    if ((p)[idx] > (best)) {        \
      (best) = (p)[idx];            \
      (arg) = (idx);                \
    }                               \
  } while (0)

#define DEF_FAST(T, sfx, LOWEST)                                              \
  static void fast_fwd_##sfx(const pool_geom *g, int type, const T *xp,       \
                             T *yp, mxc__req req) {                           \
    const int64_t W = g->in[2], OH = g->out[1], OW = g->out[2];               \
    const int64_t kh = g->k[1], kw = g->k[2], sh = g->s[1], sw = g->s[2];     \
    const T div = (T)(kh * kw);                                               \
    if (type == POOL_MAX && pool_is_2x2s2(g)) {                               \
      for (int64_t oh = 0; oh < OH; ++oh) {                                   \
        const T *r0 = xp + 2 * oh * W, *r1 = r0 + W;                          \
        T *yr = yp + oh * OW;                                                 \
        for (int64_t ow = 0; ow < OW; ++ow) {                                 \
          T v = LOWEST;                                                       \
          MAX_STEP(v, r0[2 * ow]);                                            \
          MAX_STEP(v, r0[2 * ow + 1]);                                        \
          MAX_STEP(v, r1[2 * ow]);                                            \
          MAX_STEP(v, r1[2 * ow + 1]);                                        \
          MXC__ASSIGN(req, yr[ow], v);                                        \
        }                                                                     \
      }                                                                       \
      return;                                                                 \
    }                                                                         \
    for (int64_t oh = 0; oh < OH; ++oh) {                                     \
      for (int64_t ow = 0; ow < OW; ++ow) {                                   \
        const T *b = xp + oh * sh * W + ow * sw;                              \
        T v = type == POOL_MAX ? LOWEST : 0;                                  \
        for (int64_t i = 0; i < kh; ++i) {                                    \
          for (int64_t j = 0; j < kw; ++j) {                                  \
            if (type == POOL_MAX) {                                           \
              MAX_STEP(v, b[i * W + j]);                                      \
            } else {                                                          \
              v += b[i * W + j];                                              \
            }                                                                 \
          }                                                                   \
        }                                                                     \
        if (type == POOL_AVG) v /= div;                                       \
        MXC__ASSIGN(req, yp[oh * OW + ow], v);                                \
      }                                                                       \
    }                                                                         \
  }                                                                           \
  static void fast_bwd_##sfx(const pool_geom *g, int type, const T *gp,       \
                             const T *xp, T *dp) {                            \
    const int64_t W = g->in[2], OH = g->out[1], OW = g->out[2];               \
    const int64_t kh = g->k[1], kw = g->k[2], sh = g->s[1], sw = g->s[2];     \
    const T div = (T)(kh * kw);                                               \
    if (type == POOL_MAX && pool_is_2x2s2(g)) {                               \
      for (int64_t oh = 0; oh < OH; ++oh) {                                   \
        const T *gr = gp + oh * OW;                                           \
        for (int64_t ow = 0; ow < OW; ++ow) {                                 \
          /* Branch-free (the winner is data-dependent and unpredictable): \
           * every element is stored, only the winner changed. */          \
          const int64_t i0 = 2 * oh * W + 2 * ow;                             \
          const T a1 = xp[i0 + 1], a2 = xp[i0 + W], a3 = xp[i0 + W + 1];     \
          T best = xp[i0];                                                    \
          int k = 0, c;                                                       \
          c = a1 > best, best = c ? a1 : best, k = c ? 1 : k;                 \
          c = a2 > best, best = c ? a2 : best, k = c ? 2 : k;                 \
          c = a3 > best, k = c ? 3 : k;                                       \
          const T go = gr[ow];                                                \
          T *d0 = dp + i0, *d1 = d0 + W;                                      \
          d0[0] = k == 0 ? d0[0] + go : d0[0];                                \
          d0[1] = k == 1 ? d0[1] + go : d0[1];                                \
          d1[0] = k == 2 ? d1[0] + go : d1[0];                                \
          d1[1] = k == 3 ? d1[1] + go : d1[1];                                \
        }                                                                     \
      }                                                                       \
      return;                                                                 \
    }                                                                         \
    for (int64_t oh = 0; oh < OH; ++oh) {                                     \
      for (int64_t ow = 0; ow < OW; ++ow) {                                   \
        const int64_t b = oh * sh * W + ow * sw;                              \
        const T go = gp[oh * OW + ow];                                        \
        if (type == POOL_MAX) {                                               \
          int64_t arg = b;                                                    \
          T best = xp[b];                                                     \
          for (int64_t i = 0; i < kh; ++i) {                                  \
            for (int64_t j = 0; j < kw; ++j) {                                \
              ARG_STEP(best, arg, xp, b + i * W + j);                         \
            }                                                                 \
          }                                                                   \
          dp[arg] += go;                                                      \
        } else {                                                              \
          T v = type == POOL_AVG ? go / div : go;                             \
          for (int64_t i = 0; i < kh; ++i) {                                  \
            for (int64_t j = 0; j < kw; ++j) dp[b + i * W + j] += v;          \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }
DEF_FAST(float, f32, -INFINITY)
DEF_FAST(double, f64, -INFINITY)

/* 2x2 stride-2 max backward writing (not adding) the plane: windows do
 * not overlap, so every covered element is stored exactly once (the
 * winner's gradient or 0) and only a leftover last row/column, if any, is
 * cleared. Saves fast_bwd's clearing pass and its read-modify-write;
 * picks the same winner as fast_bwd. */
#define DEF_MAX2X2_WRITE(T, sfx)                                              \
  static void max2x2_bwd_write_##sfx(const pool_geom *g, const T *gp,        \
                                     const T *xp, T *dp) {                    \
    const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2]; \
    for (int64_t oh = 0; oh < OH; ++oh) {                                     \
      const T *gr = gp + oh * OW;                                             \
      const T *x0 = xp + 2 * oh * W, *x1 = x0 + W;                            \
      T *d0 = dp + 2 * oh * W, *d1 = d0 + W;                                  \
      for (int64_t ow = 0; ow < OW; ++ow) {                                   \
        const T a0 = x0[2 * ow], a1 = x0[2 * ow + 1];                         \
        const T a2 = x1[2 * ow], a3 = x1[2 * ow + 1];                         \
        T best = a0;                                                          \
        int k = 0, c;                                                         \
        c = a1 > best, best = c ? a1 : best, k = c ? 1 : k;                   \
        c = a2 > best, best = c ? a2 : best, k = c ? 2 : k;                   \
        c = a3 > best, k = c ? 3 : k;                                         \
        const T go = gr[ow];                                                  \
        d0[2 * ow] = k == 0 ? go : 0;                                         \
        d0[2 * ow + 1] = k == 1 ? go : 0;                                     \
        d1[2 * ow] = k == 2 ? go : 0;                                         \
        d1[2 * ow + 1] = k == 3 ? go : 0;                                     \
      }                                                                       \
      for (int64_t w = 2 * OW; w < W; ++w) d0[w] = d1[w] = 0;                 \
    }                                                                         \
    for (int64_t h = 2 * OH; h < H; ++h) {                                    \
      for (int64_t w = 0; w < W; ++w) dp[h * W + w] = 0;                      \
    }                                                                         \
  }
DEF_MAX2X2_WRITE(float, f32)
DEF_MAX2X2_WRITE(double, f64)

/* float32 2x2 stride-2 max pooling, four windows per step with 16-byte
 * vectors (GCC's vector extensions; other compilers use the scalar
 * kernels). Same comparisons in the same order as the scalar kernels, so
 * the same winners and values, NaN included: a lane's value or winner
 * changes only where `a > best`. Measured on LeNet's first pooling
 * layer: the scalar backward's unpredictable branches made it the
 * largest cost after the GEMMs. */
#if defined(__GNUC__) && !defined(__clang__)
#define POOL_HAVE_V4 1
typedef float pool_v4f __attribute__((vector_size(16)));
typedef int32_t pool_v4i __attribute__((vector_size(16)));

/* Loads 8 floats of a row as even (window-left) and odd lanes. */
static inline void pool_ld_eo(const float *p, pool_v4f *e, pool_v4f *o) {
  pool_v4f a, b;
  memcpy(&a, p, sizeof a);
  memcpy(&b, p + 4, sizeof b);
  *e = __builtin_shuffle(a, b, (pool_v4i){0, 2, 4, 6});
  *o = __builtin_shuffle(a, b, (pool_v4i){1, 3, 5, 7});
}

static inline pool_v4f pool_sel(pool_v4i m, pool_v4f a, pool_v4f b) {
  return (pool_v4f)((m & (pool_v4i)a) | (~m & (pool_v4i)b));
}

/* Winner index (0..3) per lane: first maximum as in fast_bwd. */
static inline pool_v4i pool_win4(const float *x0, const float *x1) {
  pool_v4f a0, a1, a2, a3;
  pool_ld_eo(x0, &a0, &a1);
  pool_ld_eo(x1, &a2, &a3);
  pool_v4f best = a0;
  pool_v4i k = {0, 0, 0, 0}, c;
  c = a1 > best, best = pool_sel(c, a1, best), k = (c & 1) | (~c & k);
  c = a2 > best, best = pool_sel(c, a2, best), k = (c & 2) | (~c & k);
  c = a3 > best, k = (c & 3) | (~c & k);
  return k;
}

static void max2x2_fwd_v4(const pool_geom *g, const float *xp, float *yp) {
  const int64_t W = g->in[2], OH = g->out[1], OW = g->out[2];
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float *x0 = xp + 2 * oh * W, *x1 = x0 + W;
    float *yr = yp + oh * OW;
    int64_t ow = 0;
    for (; ow + 4 <= OW && 2 * ow + 8 <= W; ow += 4) {
      pool_v4f a0, a1, a2, a3, v = {-INFINITY, -INFINITY, -INFINITY,
                                    -INFINITY};
      pool_ld_eo(x0 + 2 * ow, &a0, &a1);
      pool_ld_eo(x1 + 2 * ow, &a2, &a3);
      v = pool_sel(a0 > v, a0, v);
      v = pool_sel(a1 > v, a1, v);
      v = pool_sel(a2 > v, a2, v);
      v = pool_sel(a3 > v, a3, v);
      memcpy(yr + ow, &v, sizeof v);
    }
    for (; ow < OW; ++ow) {
      float v = -INFINITY;
      MAX_STEP(v, x0[2 * ow]);
      MAX_STEP(v, x0[2 * ow + 1]);
      MAX_STEP(v, x1[2 * ow]);
      MAX_STEP(v, x1[2 * ow + 1]);
      yr[ow] = v;
    }
  }
}

static void max2x2_bwd_write_v4(const pool_geom *g, const float *gp,
                                const float *xp, float *dp) {
  const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
  const pool_v4f zero = {0, 0, 0, 0};
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float *x0 = xp + 2 * oh * W, *x1 = x0 + W, *gr = gp + oh * OW;
    float *d0 = dp + 2 * oh * W, *d1 = d0 + W;
    int64_t ow = 0;
    for (; ow + 4 <= OW && 2 * ow + 8 <= W; ow += 4) {
      pool_v4i k = pool_win4(x0 + 2 * ow, x1 + 2 * ow);
      pool_v4f go;
      memcpy(&go, gr + ow, sizeof go);
      pool_v4f e0 = pool_sel(k == 0, go, zero), o0 = pool_sel(k == 1, go, zero);
      pool_v4f e1 = pool_sel(k == 2, go, zero), o1 = pool_sel(k == 3, go, zero);
      pool_v4f r;
      r = __builtin_shuffle(e0, o0, (pool_v4i){0, 4, 1, 5});
      memcpy(d0 + 2 * ow, &r, sizeof r);
      r = __builtin_shuffle(e0, o0, (pool_v4i){2, 6, 3, 7});
      memcpy(d0 + 2 * ow + 4, &r, sizeof r);
      r = __builtin_shuffle(e1, o1, (pool_v4i){0, 4, 1, 5});
      memcpy(d1 + 2 * ow, &r, sizeof r);
      r = __builtin_shuffle(e1, o1, (pool_v4i){2, 6, 3, 7});
      memcpy(d1 + 2 * ow + 4, &r, sizeof r);
    }
    for (; ow < OW; ++ow) {
      const float a0 = x0[2 * ow], a1 = x0[2 * ow + 1];
      const float a2 = x1[2 * ow], a3 = x1[2 * ow + 1];
      float best = a0;
      int k = 0, c;
      c = a1 > best, best = c ? a1 : best, k = c ? 1 : k;
      c = a2 > best, best = c ? a2 : best, k = c ? 2 : k;
      c = a3 > best, k = c ? 3 : k;
      const float go = gr[ow];
      d0[2 * ow] = k == 0 ? go : 0;
      d0[2 * ow + 1] = k == 1 ? go : 0;
      d1[2 * ow] = k == 2 ? go : 0;
      d1[2 * ow + 1] = k == 3 ? go : 0;
    }
    for (int64_t w = 2 * OW; w < W; ++w) d0[w] = d1[w] = 0;
  }
  for (int64_t h = 2 * OH; h < H; ++h) {
    for (int64_t w = 0; w < W; ++w) dp[h * W + w] = 0;
  }
}
#endif

/* One pooling pass over a range of planes: planes are independent, so
 * large batches are split over the kernel thread pool. */
typedef struct pool_job {
  const pool_geom *g;
  int type, cip, bwd, f32, simple;
  mxc__req req;
  const void *a, *b; /* forward: x; backward: ograd, x */
  void *y;           /* forward: y; backward: dx */
} pool_job;

/* The backward clears each plane of dx (unless accumulating) just before
 * scattering into it, while it is in cache. */
#define POOL_PLANES(T, sfx)                                                 \
  const size_t plane_bytes = (size_t)g->in_n * sizeof(T);                   \
  for (int64_t pl = begin; pl < end; ++pl) {                                \
    const T *a = (const T *)j->a, *b = (const T *)j->b;                     \
    T *y = j->y;                                                            \
    if (!j->bwd && j->simple) {                                             \
      fast_fwd_##sfx(g, j->type, a + pl * g->in_n, y + pl * g->out_n,       \
                     j->req);                                               \
    } else if (!j->bwd) {                                                   \
      pool_fwd_##sfx(g, j->type, j->cip, a + pl * g->in_n,                  \
                     y + pl * g->out_n, j->req);                            \
    } else if (j->simple && j->type == POOL_MAX && pool_is_2x2s2(g) &&     \
               j->req != MXC__REQ_ADD) {                                    \
      max2x2_bwd_write_##sfx(g, a + pl * g->out_n, b + pl * g->in_n,        \
                             y + pl * g->in_n);                             \
    } else if (j->simple) {                                                 \
      if (j->req != MXC__REQ_ADD) memset(y + pl * g->in_n, 0, plane_bytes);  \
      fast_bwd_##sfx(g, j->type, a + pl * g->out_n, b + pl * g->in_n,       \
                     y + pl * g->in_n);                                     \
    } else {                                                                \
      if (j->req != MXC__REQ_ADD) memset(y + pl * g->in_n, 0, plane_bytes);  \
      pool_bwd_##sfx(g, j->type, j->cip, a + pl * g->out_n,                 \
                     b + pl * g->in_n, y + pl * g->in_n);                   \
    }                                                                       \
  }

static int pool_planes(void *arg, int64_t begin, int64_t end) {
  const pool_job *j = arg;
  const pool_geom *g = j->g;
#ifdef POOL_HAVE_V4
  if (j->f32 && j->simple && j->type == POOL_MAX && pool_is_2x2s2(g) &&
      j->req == MXC__REQ_WRITE) {
    for (int64_t pl = begin; pl < end; ++pl) {
      if (j->bwd) {
        max2x2_bwd_write_v4(g, (const float *)j->a + pl * g->out_n,
                            (const float *)j->b + pl * g->in_n,
                            (float *)j->y + pl * g->in_n);
      } else {
        max2x2_fwd_v4(g, (const float *)j->a + pl * g->in_n,
                      (float *)j->y + pl * g->out_n);
      }
    }
    return MXC_OK;
  }
#endif
  if (j->f32) {
    POOL_PLANES(float, f32)
  } else {
    POOL_PLANES(double, f64)
  }
  return MXC_OK;
}

/* Runs a job over every plane; about 16k input elements per chunk. */
static int pool_run(pool_job *j) {
  const pool_geom *g = j->g;
  j->simple = pool_simple(g) && j->type != POOL_LP;
  int64_t per = g->in_n > g->out_n ? g->in_n : g->out_n;
  if (per < 1) per = 1;
  int64_t grain = 16384 / per;
  if (grain < 1) grain = 1;
  int threads = g->planes * per >= 65536 ? mxc__parallel_threads() : 1;
  return mxc__parallel_for(g->planes, grain, threads, pool_planes, j);
}

static int pool_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  const pool_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  pool_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(pool_plan(op, p, &in[0].shape, &g, &o));
  pool_job j = {.g = &g,
                .type = p->pool_type,
                .cip = p->count_include_pad,
                .f32 = in[0].dtype == MXC_DTYPE_FLOAT32,
                .req = req[0],
                .a = in[0].ptr,
                .y = out[0].ptr};
  return pool_run(&j);
}

/* _backward_Pooling: inputs (ograd, data), output ddata. */
static int pool_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  const pool_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  pool_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(pool_plan(op, p, &in[1].shape, &g, &o));
  pool_job j = {.g = &g,
                .type = p->pool_type,
                .cip = p->count_include_pad,
                .bwd = 1,
                .f32 = in[0].dtype == MXC_DTYPE_FLOAT32,
                .req = req[0],
                .a = in[0].ptr,
                .b = in[1].ptr,
                .y = out[0].ptr};
  return pool_run(&j);
}

/* ---- descriptors ---- */

static const char *const k_in_names[] = {"data", NULL};
static const char *const k_bwd_in_names[] = {"ograd", "data", NULL};

#define POOL_PARAMS \
  MXC__PARAMS_OF(pool_param, k_params), .param_check = pool_check

/* Half-precision arrays compute in float32 (core/op/half_compute.h). */
MXC__HALF_COMPUTE_FN(pool_forward_any, pool_forward, 0)
MXC__HALF_COMPUTE_FN(pool_backward_any, pool_backward, 0)

static const mxc__op k_pool = {
    .name = "Pooling",
    .doc =
        "Max, average, sum or lp pooling over 1-D to 3-D windows of data "
        "(N, C, ...), or over whole planes with global_pool.",
    POOL_PARAMS,
    .n_inputs = 1,
    .input_names = k_in_names,
    .n_outputs = 1,
    .infer_shape = pool_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = pool_forward_any,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 1,
};

static const mxc__op k_pool_bwd = {
    .name = "_backward_Pooling",
    .doc = "Gradient of Pooling.",
    POOL_PARAMS,
    .n_inputs = 2,
    .input_names = k_bwd_in_names,
    .n_outputs = 1,
    .infer_shape = pool_bwd_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = pool_backward_any,
    .hidden = 1,
};

int mxc__linalg_register_pooling(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_pool));
  return mxc__registry_add(r, &k_pool_bwd);
}
