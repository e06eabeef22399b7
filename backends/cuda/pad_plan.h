/* Pad, Crop and their gradients as ops/shape/pad.c and crop.c compute
 * them for float32, one thread per output element (ddata element for the
 * gradients), over ops/shape/pad_params.h's index rules:
 *
 * - Pad forward: the constant (rounded to float) outside the interior
 *   box, else the input element the mode maps to; ADD adds in float.
 * - _backward_Pad: constant mode crops the interior (ADD in float); edge
 *   and reflect gather, per input element, the output gradients of every
 *   output element mapped to it, summed in double in increasing output
 *   order (the CPU's scatter order: per axis the outputs that map to an
 *   input index are a range (edge) or up to three points (reflect), and
 *   their product in lexicographic order is increasing), then ADD adds
 *   the old value in double, as the CPU's blob set. No atomics:
 *   deterministic and bitwise.
 * - Crop: the window's element; _backward_Crop: the output gradient in
 *   the window, 0 (write) or unchanged (add) outside.
 *
 * Plain C with no CUDA header, shared by nn3.cu and the host test
 * (tests/gpu:test_cuda_nn3_plan). Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_PAD_PLAN_H_
#define MXC_BACKENDS_CUDA_PAD_PLAN_H_

#include <stdint.h>

#ifdef __CUDACC__
#define MXC__PADK_HD __host__ __device__ __forceinline__
#define MXC__PAD_HD __host__ __device__ static inline
#else
#define MXC__PADK_HD static inline
#endif

#include "core/base/gpu_plugin.h"
#include "ops/shape/pad_params.h"

typedef struct mxc__padk_plan {
  int mode, ndim, add;
  float value; /* constant mode's fill, as the CPU stores it */
  int64_t in_dims[MXC_MAX_NDIM], out_dims[MXC_MAX_NDIM];
  int64_t before[MXC_MAX_NDIM];
} mxc__padk_plan;

/* Host only: data x (the input of Pad), the call's write mode. */
static inline mxc__padk_plan mxc__padk_plan_make(const mxc__pad_param *p,
                                                 const mxc__gpu_array *x,
                                                 int req) {
  mxc__padk_plan q;
  q.mode = p->mode;
  q.ndim = x->ndim;
  q.add = req == MXC__GPU_REQ_ADD;
  q.value = (float)p->constant_value;
  for (int k = 0; k < MXC_MAX_NDIM; ++k) {
    int on = k < x->ndim;
    q.in_dims[k] = on ? x->dims[k] : 1;
    q.before[k] = on ? p->pad_width.d[2 * k] : 0;
    q.out_dims[k] =
        on ? x->dims[k] + q.before[k] + p->pad_width.d[2 * k + 1] : 1;
  }
  return q;
}

/* The value of output element o (-1 into *src: the constant). */
MXC__PADK_HD int64_t mxc__padk_source(const mxc__padk_plan *q, int64_t o) {
  int64_t src = 0, stride = 1;
  for (int k = q->ndim - 1; k >= 0; --k) {
    int64_t c = o % q->out_dims[k], i = c - q->before[k];
    o /= q->out_dims[k];
    if (q->mode == MXC__PAD_CONSTANT) {
      if (i < 0 || i >= q->in_dims[k]) return -1;
    } else {
      i = mxc__pad_map(q->mode, c, q->before[k], q->in_dims[k]);
    }
    src += i * stride;
    stride *= q->in_dims[k];
  }
  return src;
}

/* Pad forward, output element o. */
MXC__PADK_HD void mxc__padk_fwd(const mxc__padk_plan *q, const float *x,
                                float *y, int64_t o) {
  int64_t s = mxc__padk_source(q, o);
  float v = s < 0 ? q->value : x[s];
  y[o] = q->add ? y[o] + v : v;
}

/* The outputs along axis k that map to input index i, increasing:
 * a range [*lo, *lo + *cnt) (edge) or pts[0..*cnt) (reflect, constant).
 * Returns 1 for a range. */
MXC__PADK_HD int mxc__padk_cands(const mxc__padk_plan *q, int k, int64_t i,
                                 int64_t *lo, int64_t *cnt, int64_t pts[3]) {
  int64_t b = q->before[k], n = q->in_dims[k], on = q->out_dims[k];
  if (q->mode == MXC__PAD_EDGE) {
    int64_t a = i == 0 ? 0 : i + b, e = i == n - 1 ? on : i + b + 1;
    *lo = a, *cnt = e - a;
    return 1;
  }
  int m = 0;
  if (q->mode == MXC__PAD_REFLECT && i >= 1 && i <= b) pts[m++] = b - i;
  pts[m++] = i + b;
  int64_t r = b + 2 * (n - 1) - i;
  if (q->mode == MXC__PAD_REFLECT && i <= n - 2 && r < on) pts[m++] = r;
  *cnt = m;
  return 0;
}

/* _backward_Pad, element t of ddata: from ograd og. */
MXC__PADK_HD void mxc__padk_bwd(const mxc__padk_plan *q, const float *og,
                                float *dx, int64_t t) {
  int64_t lo[MXC_MAX_NDIM], cnt[MXC_MAX_NDIM], pts[MXC_MAX_NDIM][3];
  int range[MXC_MAX_NDIM];
  int64_t j[MXC_MAX_NDIM], ostr[MXC_MAX_NDIM], rest = t, s = 1;
  for (int k = q->ndim - 1; k >= 0; --k) {
    range[k] =
        mxc__padk_cands(q, k, rest % q->in_dims[k], &lo[k], &cnt[k], pts[k]);
    rest /= q->in_dims[k];
    ostr[k] = s;
    s *= q->out_dims[k];
    j[k] = 0;
  }
  if (q->mode == MXC__PAD_CONSTANT) {
    int64_t o = 0;
    for (int k = 0; k < q->ndim; ++k) o += pts[k][0] * ostr[k];
    dx[t] = q->add ? dx[t] + og[o] : og[o];
    return;
  }
  double acc = 0;
  for (;;) { /* the product of the axes' candidates, lexicographically */
    int64_t o = 0;
    for (int k = 0; k < q->ndim; ++k) {
      o += (range[k] ? lo[k] + j[k] : pts[k][j[k]]) * ostr[k];
    }
    acc += og[o];
    int k = q->ndim - 1;
    for (; k >= 0 && ++j[k] == cnt[k]; --k) j[k] = 0;
    if (k < 0) break;
  }
  if (q->add) acc += (double)dx[t];
  dx[t] = (float)acc;
}

/* ---- Crop ---- */

typedef struct mxc__cropk_plan {
  int64_t c, H, W; /* data (N, C, H, W): C, H, W */
  mxc__crop_window win;
  int add;
} mxc__cropk_plan;

/* Host only: data x (N, C, H, W), crop_like (NULL for num_args 1). */
static inline mxc__cropk_plan mxc__cropk_plan_make(const mxc__crop_param *p,
                                                   const mxc__gpu_array *x,
                                                   const mxc__gpu_array *like,
                                                   int req) {
  mxc__cropk_plan q;
  q.c = x->dims[1], q.H = x->dims[2], q.W = x->dims[3];
  q.win = mxc__crop_window_of(p, q.H, q.W, like != 0,
                              like ? like->dims[like->ndim - 2] : 0,
                              like ? like->dims[like->ndim - 1] : 0);
  q.add = req == MXC__GPU_REQ_ADD;
  return q;
}

/* Crop forward, output element o of (N, C, h, w). */
MXC__PADK_HD void mxc__cropk_fwd(const mxc__cropk_plan *q, const float *x,
                                 float *y, int64_t o) {
  int64_t xx = o % q->win.w, yy = o / q->win.w % q->win.h;
  int64_t nc = o / (q->win.w * q->win.h);
  float v = x[(nc * q->H + yy + q->win.y) * q->W + xx + q->win.x];
  y[o] = q->add ? y[o] + v : v;
}

/* _backward_Crop, element t of ddata (N, C, H, W). */
MXC__PADK_HD void mxc__cropk_bwd(const mxc__cropk_plan *q, const float *og,
                                 float *dx, int64_t t) {
  int64_t xx = t % q->W - q->win.x, yy = t / q->W % q->H - q->win.y;
  int64_t nc = t / (q->W * q->H);
  int in = xx >= 0 && xx < q->win.w && yy >= 0 && yy < q->win.h;
  float v = in ? og[(nc * q->win.h + yy) * q->win.w + xx] : 0.f;
  if (!q->add) {
    dx[t] = v;
  } else if (in) {
    dx[t] += v;
  }
}

#endif /* MXC_BACKENDS_CUDA_PAD_PLAN_H_ */
