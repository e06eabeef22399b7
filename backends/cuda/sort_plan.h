/* sort, argsort, topk, _backward_sort and _backward_topk as
 * ops/reduce/sort.c computes them for float32, without sorting: the CPU
 * orders each row stably by sort_params.h's key (equal keys keep their
 * positions' order), so element j of a row lands at its rank
 *   r(j) = #{i : key_i < key_j} + #{i < j : key_i == key_j},
 * which one thread per element computes by reading its row (quadratic in
 * the row's length: rows of up to MXC__SORTK_MAX_LEN elements; longer
 * ones are refused with MXC_ERR_UNSUPPORTED). The first k ranks are the
 * output (topk's k, else the whole row): values, indices (as the CPU's
 * double stored into float32), a 0/1 mask at the input's positions, or
 * the gradient scattered back to the position each value came from.
 * Rank-based writes need no workspace and touch each output element from
 * one thread: bitwise the CPU's, deterministic.
 *
 * Plain C with no CUDA header, shared by nn3.cu and the host test
 * (tests/gpu:test_cuda_nn3_plan). Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_SORT_PLAN_H_
#define MXC_BACKENDS_CUDA_SORT_PLAN_H_

#include <stdint.h>

#ifdef __CUDACC__
#define MXC__SORTK_HD __host__ __device__ __forceinline__
#define MXC__SORT_HD __host__ __device__ static inline
#else
#define MXC__SORTK_HD static inline
#endif

#include "core/base/gpu_plugin.h"
#include "ops/reduce/sort_params.h"

/* The longest row the per-element rank handles (len^2 key reads a row). */
#define MXC__SORTK_MAX_LEN 4096

typedef struct mxc__sortk_plan {
  int ret; /* MXC__SORT_RET_*: what the outputs hold */
  int asc;
  int64_t outer, len, inner, k;
  int on[2], add[2]; /* per output */
} mxc__sortk_plan;

/* Host only: kind MXC__SORT_*, data x (axis validated by the operator's
 * shape rule, k <= len by its shape rule too), the outputs' modes. */
static inline mxc__sortk_plan mxc__sortk_plan_make(int kind,
                                                   const mxc__sort_param *p,
                                                   const mxc__gpu_array *x,
                                                   const int *req, int n_out) {
  mxc__sortk_plan q;
  q.ret = kind == MXC__SORT_SORT      ? MXC__SORT_RET_VALUE
          : kind == MXC__SORT_ARGSORT ? MXC__SORT_RET_INDICES
                                      : p->ret_typ;
  q.asc = p->is_ascend;
  q.outer = 1, q.inner = 1, q.len = x->size;
  if (p->axis.has) {
    int a = (int)(p->axis.v < 0 ? p->axis.v + x->ndim : p->axis.v);
    q.len = x->dims[a];
    for (int d = 0; d < a; ++d) q.outer *= x->dims[d];
    for (int d = a + 1; d < x->ndim; ++d) q.inner *= x->dims[d];
  }
  q.k = kind == MXC__SORT_TOPK && p->k >= 1 ? p->k : q.len;
  for (int w = 0; w < 2; ++w) {
    q.on[w] = w < n_out && req[w] != MXC__GPU_REQ_NULL;
    q.add[w] = w < n_out && req[w] == MXC__GPU_REQ_ADD;
  }
  return q;
}

/* Element t of the input: its row's start (base) and position j. */
MXC__SORTK_HD void mxc__sortk_where(const mxc__sortk_plan *q, int64_t t,
                                    int64_t *base, int64_t *j) {
  int64_t a = t / (q->len * q->inner), b = t % q->inner;
  *j = t / q->inner % q->len;
  *base = a * q->len * q->inner + b;
}

/* The rank of position j in the stable order of its row. */
MXC__SORTK_HD int64_t mxc__sortk_rank(const mxc__sortk_plan *q, const float *x,
                                      int64_t base, int64_t j) {
  int64_t kj = mxc__sort_directed(
      mxc__sort_key_of_double(x[base + j * q->inner]), q->asc);
  int64_t r = 0;
  for (int64_t i = 0; i < q->len; ++i) {
    int64_t ki = mxc__sort_directed(
        mxc__sort_key_of_double(x[base + i * q->inner]), q->asc);
    r += ki < kj || (ki == kj && i < j);
  }
  return r;
}

/* Where rank r of the row at base goes in a values/indices output. */
MXC__SORTK_HD int64_t mxc__sortk_out_at(const mxc__sortk_plan *q, int64_t base,
                                        int64_t r) {
  int64_t a = base / (q->len * q->inner), b = base % q->inner;
  return (a * q->k + r) * q->inner + b;
}

/* A number as the CPU's put_number stores it into float32. */
MXC__SORTK_HD void mxc__sortk_num(float *o, int64_t i, double v, int add) {
  if (add) v += (double)o[i];
  o[i] = (float)v;
}

/* Forward, input element t: its output elements (out0, out1). */
MXC__SORTK_HD void mxc__sortk_fwd(const mxc__sortk_plan *q, const float *x,
                                  float *out0, float *out1, int64_t t) {
  int64_t base, j;
  mxc__sortk_where(q, t, &base, &j);
  int64_t r = mxc__sortk_rank(q, x, base, j), src = base + j * q->inner;
  if (q->ret == MXC__SORT_RET_MASK) {
    if (!q->on[0]) return;
    if (r < q->k) {
      mxc__sortk_num(out0, src, 1, q->add[0]);
    } else if (!q->add[0]) {
      out0[src] = 0;
    }
    return;
  }
  if (r >= q->k) return;
  int64_t o = mxc__sortk_out_at(q, base, r);
  int vals = q->ret == MXC__SORT_RET_VALUE || q->ret == MXC__SORT_RET_BOTH;
  int iw = q->ret == MXC__SORT_RET_BOTH ? 1 : 0; /* the indices' output */
  if (vals && q->on[0]) {
    out0[o] = q->add[0] ? (float)((double)out0[o] + (double)x[src]) : x[src];
  }
  if (q->ret != MXC__SORT_RET_VALUE && q->on[iw]) {
    mxc__sortk_num(iw ? out1 : out0, o, (double)j, q->add[iw]);
  }
}

/* Gradient, input element t: the output gradient of its rank, or 0. */
MXC__SORTK_HD void mxc__sortk_bwd(const mxc__sortk_plan *q, const float *og,
                                  const float *x, float *dx, int64_t t) {
  int64_t base, j;
  mxc__sortk_where(q, t, &base, &j);
  int64_t r = mxc__sortk_rank(q, x, base, j);
  float v = r < q->k ? og[mxc__sortk_out_at(q, base, r)] : 0.f;
  int64_t i = base + j * q->inner;
  dx[i] = q->add[0] ? dx[i] + v : v;
}

#endif /* MXC_BACKENDS_CUDA_SORT_PLAN_H_ */
