/* The per-element code of the GPU's where kernels (index.cu), for the
 * device (nvcc) and the host (C++ tests) from one text, following
 * ops/indexing/where.c and util.c's mxc__idx_move: each condition element
 * governs `inner` consecutive elements (1, or a row when the condition is
 * 1-D); a write moves the stored bits; an add is `d += s` in float for
 * float32 and, for the half types, mxc__blob_get/set's double sum rounded
 * to float and then to the dtype. The gradient clears both outputs
 * (write) and adds ograd where selected, so a write gives +0 + ograd.
 * Also one_hot's element (mxc__idx_fill's roundings).
 * tests/gpu:test_cuda_bcast_plan runs these against the CPU bitwise.
 *
 * C++ only (templates over half_hd.h's MxcElem). Thread-safety: pure
 * functions. */
#ifndef MXC_BACKENDS_CUDA_INDEX_HD_H_
#define MXC_BACKENDS_CUDA_INDEX_HD_H_

#include <stdint.h>

#include "backends/cuda/half_hd.h"
#include "core/op/param.h"

#ifdef __CUDACC__
#define MXC__IDX_HD __host__ __device__ __forceinline__
#else
#define MXC__IDX_HD inline
#endif

/* take's index modes and mapping, one text with the CPU's. */
#define MXC__IDX_MODE_HD MXC__IDX_HD
#include "ops/indexing/index_mode.h"

namespace mxc_idx {

/* d + s as mxc__idx_move's add. */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T add(typename MxcElem<DT>::T d,
                                         typename MxcElem<DT>::T s) {
  typedef MxcElem<DT> E;
  if (DT == MXC_DTYPE_FLOAT32) return E::store(E::load(d) + E::load(s));
  double v = (double)E::load(d) + (double)E::load(s);
  return E::store((float)v);
}

/* where's output element: x or y by the condition, moved or added. */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T where_elem(bool c,
                                                typename MxcElem<DT>::T x,
                                                typename MxcElem<DT>::T y,
                                                typename MxcElem<DT>::T out,
                                                int is_add) {
  typename MxcElem<DT>::T v = c ? x : y;
  return is_add ? add<DT>(out, v) : v;
}

/* One gradient element (dx with sel = c, dy with sel = !c): ograd added
 * to the old value (add) or to +0 (write) where selected; else the old
 * value (add) or +0 (write). */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T where_grad_elem(
    bool sel, typename MxcElem<DT>::T og, typename MxcElem<DT>::T out,
    int is_add) {
  typename MxcElem<DT>::T base = is_add ? out : MxcElem<DT>::store(0.f);
  return sel ? add<DT>(base, og) : base;
}

/* mxc__idx_fill's element (one_hot's on and off values): v rounded to
 * float, then to the dtype (write); the old value plus v in double,
 * rounded likewise (add). */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T fill_elem(double v,
                                               typename MxcElem<DT>::T out,
                                               int is_add) {
  typedef MxcElem<DT> E;
  double r = is_add ? (double)E::load(out) + v : v;
  return E::store((float)r);
}

/* ---- Embedding (ops/nn/embedding.c) ---- */

/* Mirror of embedding.c's private emb_param. */
struct EmbParam {
  int64_t input_dim, output_dim;
  int dtype;
  int sparse_grad;
};

/* embedding.c's clip_index: the index truncated and clipped into
 * [0, n - 1], NaN and negatives to 0. */
MXC__IDX_HD int64_t clip_index(double v, int64_t n) {
  if (!(v > 0)) return 0;
  if (v >= (double)(n - 1)) return n - 1;
  return (int64_t)v;
}

/* An index array's element as a double (mxc__blob_get): float32, the
 * half types, int32, int64. */
MXC__IDX_HD double index_at(const void *p, int dt, int64_t r) {
  switch (dt) {
    case MXC_DTYPE_INT32: return ((const int32_t *)p)[r];
    case MXC_DTYPE_INT64: return (double)((const int64_t *)p)[r];
    case MXC_DTYPE_FLOAT16:
      return mxc__hd_f16_to_f32(((const uint16_t *)p)[r]);
    case MXC_DTYPE_BFLOAT16:
      return mxc__hd_bf16_to_f32(((const uint16_t *)p)[r]);
    default: return ((const float *)p)[r];
  }
}

/* The forward's element: the weight's stored bits (write) or the old
 * value plus it in float (add; half types through float32). */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T emb_elem(typename MxcElem<DT>::T w,
                                              typename MxcElem<DT>::T out,
                                              int is_add) {
  typedef MxcElem<DT> E;
  return is_add ? E::store(E::load(out) + E::load(w)) : w;
}

/* The float32 gradient's column j: dw[k(r)][j] += g[r][j] for r in
 * order, after clearing the column (write), exactly the CPU's order for
 * every element of the column. */
MXC__IDX_HD void emb_grad_column(const float *g, const void *idx, int idx_dt,
                                 int64_t rows, int64_t d, int64_t n,
                                 float *dw, int64_t j, int is_add) {
  if (!is_add) {
    for (int64_t k = 0; k < n; ++k) dw[k * d + j] = 0.f;
  }
  for (int64_t r = 0; r < rows; ++r) {
    dw[clip_index(index_at(idx, idx_dt, r), n) * d + j] += g[r * d + j];
  }
}

/* ---- one_hot (ops/indexing/one_hot.c) ---- */

/* Mirror of one_hot.c's private one_hot_param. */
struct OneHotParam {
  int64_t depth;
  double on_value, off_value;
  int dtype;
};

/* util.c's mxc__idx_at: integers as they are; floating indices truncated
 * toward zero, saturated at +-2^62, NaN to -2^62 (never a column). */
MXC__IDX_HD int64_t index_int(const void *p, int dt, int64_t r) {
  if (dt == MXC_DTYPE_INT32) return ((const int32_t *)p)[r];
  if (dt == MXC_DTYPE_INT64) return ((const int64_t *)p)[r];
  double v = index_at(p, dt, r);
  const double lim = 4611686018427387904.0;
  if (!(v > -lim)) return -(int64_t)lim;
  if (v > lim) return (int64_t)lim;
  return (int64_t)v;
}

/* ---- take (ops/indexing/take.c) ---- */

/* Mirror of take.c's private take_param (the host test fills it with the
 * operator's own parser). */
struct TakeParam {
  int64_t axis;
  int mode;
};

/* data as (outer, n, inner) around the axis, m indices: take.c's
 * take_geom. */
struct TakeGeom {
  int64_t outer, n, inner, m;
  int mode;
};

/* The geometry of data (ndim extents) and m indices: 0, or -1 when the
 * axis is out of range (take.c's mxc__idx_axis refuses it first). */
inline int take_geom(const int64_t *dims, int ndim, int64_t m,
                     const TakeParam &p, TakeGeom *g) {
  if (p.axis < -ndim || p.axis >= ndim) return -1;
  int ax = (int)(p.axis < 0 ? p.axis + ndim : p.axis);
  g->outer = g->inner = 1;
  for (int i = 0; i < ax; ++i) g->outer *= dims[i];
  for (int i = ax + 1; i < ndim; ++i) g->inner *= dims[i];
  g->n = dims[ax];
  g->m = m;
  g->mode = p.mode;
  return 0;
}

/* The data offset of output element i: output (o, j, r) is data (o,
 * fix(idx[j]), r), as take_forward. Raise-mode indices are checked
 * before (a -1 from the mapping never reaches here). */
MXC__IDX_HD int64_t take_src(const TakeGeom &g, const void *idx, int idx_dt,
                             int64_t i) {
  int64_t r = i % g.inner, t = i / g.inner;
  int64_t j = t % g.m, o = t / g.m;
  int64_t k = mxc__idx_fix(index_int(idx, idx_dt, j), g.n, g.mode);
  return (o * g.n + k) * g.inner + r;
}

/* _backward_take's column c = (o, r), float32: its n elements cleared
 * (write), then ograd (o, j, r) added for j in order, take_backward's
 * order for every element: bitwise, deterministic, one thread per
 * column. */
MXC__IDX_HD void take_grad_column(const TakeGeom &g, const float *og,
                                  const void *idx, int idx_dt, float *dx,
                                  int64_t c, int is_add) {
  int64_t o = c / g.inner, r = c % g.inner;
  if (!is_add) {
    for (int64_t k = 0; k < g.n; ++k) dx[(o * g.n + k) * g.inner + r] = 0.f;
  }
  for (int64_t j = 0; j < g.m; ++j) {
    int64_t k = mxc__idx_fix(index_int(idx, idx_dt, j), g.n, g.mode);
    dx[(o * g.n + k) * g.inner + r] += og[(o * g.m + j) * g.inner + r];
  }
}

/* ---- pick (ops/indexing/take.c) ---- */

/* Mirror of take.c's private pick_param. */
struct PickParam {
  int64_t axis;
  int keepdims;
  int mode;
};

/* pick's data offset of output element `at` = (o, r): data (o,
 * fix(idx[at]), r), as pick_forward (TakeGeom with m unused). */
MXC__IDX_HD int64_t pick_src(const TakeGeom &g, const void *idx, int idx_dt,
                             int64_t at) {
  int64_t o = at / g.inner, r = at % g.inner;
  int64_t k = mxc__idx_fix(index_int(idx, idx_dt, at), g.n, g.mode);
  return (o * g.n + k) * g.inner + r;
}

/* _backward_pick's column `at` = (o, r), float32: its n elements cleared
 * (write), then ograd[at] added at the picked one, as pick_backward (each
 * gradient element has at most one contribution: bitwise). */
MXC__IDX_HD void pick_grad_column(const TakeGeom &g, const float *og,
                                  const void *idx, int idx_dt, float *dx,
                                  int64_t at, int is_add) {
  int64_t o = at / g.inner, r = at % g.inner;
  if (!is_add) {
    for (int64_t k = 0; k < g.n; ++k) dx[(o * g.n + k) * g.inner + r] = 0.f;
  }
  dx[pick_src(g, idx, idx_dt, at)] += og[at];
}

}  // namespace mxc_idx

#endif /* MXC_BACKENDS_CUDA_INDEX_HD_H_ */
