/* Fills and simple producers as the CPU computes them, per element:
 * _zeros, _ones, _full, zeros_like, ones_like (ops/indexing/init.c's
 * mxc__idx_fill: the value rounded to the dtype; ADD adds it to the old
 * value in double, then rounds), _arange (in the output's dtype: float
 * arithmetic for float32, double for float64, double rounded through
 * float for the half types), _eye (ones on diagonal k; ADD adds 1 to the
 * diagonal only), add_n / BlockGrad / MakeLoss / make_loss (ops/binary/
 * misc.c: (args[0] + args[1]) then + args[k], one rounding to the dtype
 * per step, ADD adding the first sum to the old value; half types in
 * float between steps, as the CPU's rows) and _backward_MakeLoss (the
 * float32 constant grad_scale / norm; ADD adds it in float).
 *
 * Plain C with no CUDA header, shared by fill.cu and the host test
 * (tests/gpu:test_cuda_fill_plan), which runs them on host arrays
 * against the CPU operators; MXC__FILL_HD functions run on both sides.
 * Element types: float32, float64, float16, bfloat16. */
#ifndef MXC_BACKENDS_CUDA_FILL_PLAN_H_
#define MXC_BACKENDS_CUDA_FILL_PLAN_H_

#include <stdint.h>

#include "backends/cuda/half_hd.h"
#include "core/base/gpu_plugin.h"
#include "ops/indexing/init_params.h"
#include "ops/nn/make_loss_params.h"

#ifdef __CUDACC__
#define MXC__FILL_HD __host__ __device__ __forceinline__
#else
#define MXC__FILL_HD static inline
#endif

/* The most inputs one add_n launch sums (a kernel parameter array);
 * longer calls continue from the output, which holds the exact partial
 * sum in the dtype, so chunking rounds as one pass would. */
#define MXC__FILL_MAX_ARGS 64

/* Element i of an array of dtype dt, as a double (exact). */
MXC__FILL_HD double mxc__fill_ld(const void *p, int dt, int64_t i) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32:
      return ((const float *)p)[i];
    case MXC_DTYPE_FLOAT64:
      return ((const double *)p)[i];
    case MXC_DTYPE_FLOAT16:
      return mxc__hd_f16_to_f32(((const uint16_t *)p)[i]);
    default:
      return mxc__hd_bf16_to_f32(((const uint16_t *)p)[i]);
  }
}

/* Stores v rounded to dt (half types through float, as mxc__blob_set). */
MXC__FILL_HD void mxc__fill_st(void *p, int dt, int64_t i, double v) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32:
      ((float *)p)[i] = (float)v;
      break;
    case MXC_DTYPE_FLOAT64:
      ((double *)p)[i] = v;
      break;
    case MXC_DTYPE_FLOAT16:
      ((uint16_t *)p)[i] = mxc__hd_f32_to_f16((float)v);
      break;
    default:
      ((uint16_t *)p)[i] = mxc__hd_f32_to_bf16((float)v);
      break;
  }
}

/* _zeros, _ones, _full, zeros_like, ones_like: element i. */
MXC__FILL_HD void mxc__fill_value(void *out, int dt, int add, double v,
                                  int64_t i) {
  mxc__fill_st(out, dt, i, add ? mxc__fill_ld(out, dt, i) + v : v);
}

/* _arange's numbers: start and step as the CPU converts them. */
typedef struct mxc__arange_plan {
  double start, step;
  int64_t repeat;
} mxc__arange_plan;

/* Host only: start/step rounded to float unless the output is float64. */
static inline mxc__arange_plan mxc__arange_plan_make(const mxc__arange_param *p,
                                                     int dt) {
  mxc__arange_plan q;
  int f64 = dt == MXC_DTYPE_FLOAT64;
  q.start = f64 ? p->start : (double)(float)p->start;
  q.step = f64 ? p->step : (double)(float)p->step;
  q.repeat = p->repeat;
  return q;
}

MXC__FILL_HD void mxc__fill_arange(const mxc__arange_plan *q, void *out, int dt,
                                   int add, int64_t i) {
  int64_t k = i / q->repeat;
  if (dt == MXC_DTYPE_FLOAT32) { /* float arithmetic, as the CPU's loop */
    float v = (float)q->start + (float)k * (float)q->step;
    float *o = (float *)out;
    o[i] = add ? o[i] + v : v;
    return;
  }
  double v = q->start + (double)k * q->step;
  if (dt != MXC_DTYPE_FLOAT64) v = (float)v;
  mxc__fill_st(out, dt, i, add ? mxc__fill_ld(out, dt, i) + v : v);
}

/* _eye, element i of the rows x cols matrix: 1 on diagonal k (plus the
 * old value in ADD mode), 0 elsewhere (untouched in ADD mode). */
MXC__FILL_HD void mxc__fill_eye(int64_t cols, int64_t k, void *out, int dt,
                                int add, int64_t i) {
  int64_t r = i / cols, c = i % cols;
  if (c - r == k) {
    mxc__fill_st(out, dt, i, (add ? mxc__fill_ld(out, dt, i) : 0) + 1);
  } else if (!add) {
    mxc__fill_st(out, dt, i, 0);
  }
}

/* v rounded to dt and widened back (exact). */
MXC__FILL_HD double mxc__fill_round(int dt, double v) {
  if (dt == MXC_DTYPE_FLOAT64) return v;
  float f = (float)v;
  if (dt == MXC_DTYPE_FLOAT16) return mxc__hd_f16_to_f32(mxc__hd_f32_to_f16(f));
  if (dt == MXC_DTYPE_BFLOAT16) {
    return mxc__hd_bf16_to_f32(mxc__hd_f32_to_bf16(f));
  }
  return f;
}

/* One add in the arithmetic of dt's rows: float for float32 and the half
 * types (loaded into float), double for float64; not yet rounded to a
 * half type. */
MXC__FILL_HD double mxc__fill_sum(int dt, double a, double b) {
  if (dt == MXC_DTYPE_FLOAT64) return a + b;
  return (double)((float)a + (float)b);
}

/* add_n's inputs of one launch: args[0..n); first: the launch starts the
 * sum (args[0] + args[1], added to the old output in ADD mode; args[0]
 * alone, a copy, when n is 1), else it continues from the output. */
typedef struct mxc__addn_plan {
  const void *args[MXC__FILL_MAX_ARGS];
  int n, first, add, dt;
} mxc__addn_plan;

/* Each step is one CPU row: its float (or double) result rounded once to
 * the dtype when stored; ADD adds the first row's unrounded sum to the
 * old output. */
MXC__FILL_HD void mxc__fill_addn(const mxc__addn_plan *q, void *out,
                                 int64_t i) {
  int dt = q->dt, k = q->first ? (q->n > 1 ? 2 : 1) : 0;
  double acc;
  if (!q->first) {
    acc = mxc__fill_ld(out, dt, i);
  } else {
    acc = mxc__fill_ld(q->args[0], dt, i);
    if (q->n > 1) acc = mxc__fill_sum(dt, acc, mxc__fill_ld(q->args[1], dt, i));
    if (q->add) acc = mxc__fill_sum(dt, mxc__fill_ld(out, dt, i), acc);
    acc = mxc__fill_round(dt, acc);
  }
  for (; k < q->n; ++k) {
    acc = mxc__fill_round(
        dt, mxc__fill_sum(dt, acc, mxc__fill_ld(q->args[k], dt, i)));
  }
  mxc__fill_st(out, dt, i, acc);
}

/* The launches of an add_n call of n_args inputs: launch j sums args
 * [j * MXC__FILL_MAX_ARGS, (j + 1) * MXC__FILL_MAX_ARGS). Host only. */
static inline int mxc__addn_launches(int n_args) {
  return (n_args + MXC__FILL_MAX_ARGS - 1) / MXC__FILL_MAX_ARGS;
}

static inline mxc__addn_plan mxc__addn_plan_make(const mxc__gpu_call *c,
                                                 int j) {
  mxc__addn_plan q;
  int start = MXC__FILL_MAX_ARGS * j;
  int end = start + MXC__FILL_MAX_ARGS;
  if (end > c->n_in) end = c->n_in;
  q.n = end - start;
  for (int k = 0; k < q.n; ++k) q.args[k] = c->in[start + k].ptr;
  q.first = j == 0;
  q.add = c->req[0] == MXC__GPU_REQ_ADD;
  q.dt = c->out[0].dtype;
  return q;
}

/* _backward_MakeLoss's normalizer: 1, the batch size, or the count of
 * data elements above valid_thresh (at least 1; `valid` is that count,
 * computed by the caller). Host only. */
static inline double mxc__ml_norm(const mxc__ml_param *p,
                                  const mxc__gpu_array *x, int64_t valid) {
  if (p->normalization == MXC__ML_NORM_BATCH) {
    return x->ndim > 0 && x->dims[0] > 0 ? (double)x->dims[0] : 1;
  }
  if (p->normalization != MXC__ML_NORM_VALID) return 1;
  return valid > 0 ? (double)valid : 1;
}

/* 1 when element i of float32 data counts as valid. */
MXC__FILL_HD int mxc__ml_valid(const float *x, double thresh, int64_t i) {
  return (double)x[i] > thresh;
}

/* _backward_MakeLoss, element i: the float32 constant v (ADD: added in
 * float, as the CPU's MXC__ASSIGN). */
MXC__FILL_HD void mxc__ml_grad(float *out, float v, int add, int64_t i) {
  out[i] = add ? out[i] + v : v;
}

/* 1 for the element types above. */
MXC__FILL_HD int mxc__fill_dtype_ok(int dt) {
  return dt == MXC_DTYPE_FLOAT32 || dt == MXC_DTYPE_FLOAT64 ||
         dt == MXC_DTYPE_FLOAT16 || dt == MXC_DTYPE_BFLOAT16;
}

#endif /* MXC_BACKENDS_CUDA_FILL_PLAN_H_ */
