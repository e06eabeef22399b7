/* The plan of the CUDA plug-in's random kernels (rng.cu): _random_uniform,
 * _random_normal, _random_exponential and _random_randint drawn on the
 * GPU from the slice the call reserved at push time, value i of the slice
 * into output element i, so that a GPU draw is the CPU's for the same seed
 * and push order (core/resource/random.h's layout).
 *
 * Work is split by Philox block: block b of the slice gives values
 * [b * V, b * V + V) (V = values_per_block: 4 for float32 uniform and
 * normal, whose values take one word or half a pair's two words; 2 for
 * the others, which take two words per value or a block per pair), so a
 * block is computed once by one thread whatever the grid, and no two
 * threads write one element. mxc__rng_plan_thread is a device thread's
 * whole work; the host tests run it for every thread of several grids.
 *
 * Plain C (the plan is made on the host from the operators' parameter
 * structs in rng_plan.c); the block functions are also __host__
 * __device__ under nvcc. Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_RNG_PLAN_H_
#define MXC_BACKENDS_CUDA_RNG_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "core/resource/philox_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The samplers (the operator a kernel row serves). */
#define MXC__RNG_UNIFORM 0
#define MXC__RNG_NORMAL 1
#define MXC__RNG_EXPONENTIAL 2
#define MXC__RNG_RANDINT 3

typedef struct mxc__rng_plan {
  int kind;  /* MXC__RNG_* */
  int dtype; /* the output's: float32/float64, int32/int64 for randint */
  int add;   /* write mode ADD: out += value, in the output's type */
  uint32_t key[2];
  uint64_t first_block; /* the slice's first counter */
  int64_t n;            /* output elements (values) */
  int values_per_block;
  int64_t n_blocks; /* blocks that hold the n values */
  /* float64 uniform: a = low, b = high, span = b - a, below = the
   * largest double below b; exponential: the uniform on [0, 1) it
   * inverts (a = 0, b = 1, ...) and its rate lam; float64 normal: a = loc,
   * b = scale. */
  double a, b, span, below, lam;
  /* float32 uniform: af = low, bf = high, below_f; float32 normal:
   * af = loc, bf = scale: rounded to float as sample.c does. Kept as
   * floats (never (double)(float)x in one expression): GCC 12's SLP
   * vectorizer at -O2 dropped that rounding in a pair of such
   * conversions, which gave other values than the CPU's. */
  float af, bf, below_f;
  uint64_t int_low, int_span; /* randint: low, high - low (mod 2^64) */
} mxc__rng_plan;

/* Makes the plan of a call: kind, the operator's parameter struct
 * (ops/random/sample_params.h), its output array, write mode and slice.
 * MXC_OK; MXC_ERR_DTYPE for an output type the CPU operator does not
 * write; MXC_ERR_INTERNAL when the slice holds fewer than the 2 words per
 * value the CPU operator checks for (a call without its reservation);
 * the reason in why. A plan with n == 0 (or write mode NULL) is valid
 * and does nothing: the caller need not launch. */
int mxc__rng_plan_make(int kind, const void *param, const mxc__gpu_array *out,
                       int req, const mxc__gpu_rng *rng, mxc__rng_plan *p,
                       char *why, size_t why_len);

/* The kernel rows' dtype checks (mxc__gpu_kernel.supports): no input and
 * one float32/float64 output (randint: int32/int64; -1: not decided). */
int mxc__rng_float_dtypes(const int *dtypes, int n_in, int n_out);
int mxc__rng_int_dtypes(const int *dtypes, int n_in, int n_out);

/* Element j of out (the output's type) gets v: written or added. */
MXC__RNG_HD void mxc__rng_put_f(const mxc__rng_plan *p, void *out, int64_t j,
                                double v) {
  if (p->dtype == MXC_DTYPE_FLOAT32) {
    float *o = (float *)out + j;
    *o = p->add ? *o + (float)v : (float)v;
  } else {
    double *o = (double *)out + j;
    *o = p->add ? *o + v : v;
  }
}

/* randint: the value as the CPU converts it, added modulo 2^32 / 2^64
 * (the CPU's signed addition, without its overflow). */
MXC__RNG_HD void mxc__rng_put_i(const mxc__rng_plan *p, void *out, int64_t j,
                                uint64_t v) {
  if (p->dtype == MXC_DTYPE_INT32) {
    uint32_t *o = (uint32_t *)out + j;
    *o = p->add ? *o + (uint32_t)v : (uint32_t)v;
  } else {
    uint64_t *o = (uint64_t *)out + j;
    *o = p->add ? *o + v : v;
  }
}

/* The values block w gives: float32 uniform (4, one word each). */
MXC__RNG_HD int mxc__rng_uniform_f32_block(const mxc__rng_plan *p,
                                           const uint32_t w[4], double v[4]) {
  double span = (double)p->bf - (double)p->af; /* as random.c */
  for (int k = 0; k < 4; ++k) {
    v[k] = mxc__philox_uniform_f32(w[k], p->af, p->bf, span, p->below_f);
  }
  return 4;
}

/* float32 normal: two pairs (words 0-1, 2-3), each (cos, sin). */
MXC__RNG_HD int mxc__rng_normal_f32_block(const mxc__rng_plan *p,
                                          const uint32_t w[4], double v[4]) {
  double z[2];
  for (int q = 0; q < 2; ++q) {
    mxc__philox_normal_pair_f32(w[2 * q], w[2 * q + 1], z);
    v[2 * q] = mxc__philox_affine(p->af, p->bf, z[0]);
    v[2 * q + 1] = mxc__philox_affine(p->af, p->bf, z[1]);
  }
  return 4;
}

/* float64 normal: one pair per block. */
MXC__RNG_HD int mxc__rng_normal_f64_block(const mxc__rng_plan *p,
                                          const uint32_t w[4], double v[4]) {
  double z[2];
  mxc__philox_normal_pair_f64(w, z);
  v[0] = mxc__philox_affine(p->a, p->b, z[0]);
  v[1] = mxc__philox_affine(p->a, p->b, z[1]);
  return 2;
}

/* float64 uniform and exponential (either dtype): two words per value,
 * the exponential inverting the 53-bit uniform on [0, 1). */
MXC__RNG_HD int mxc__rng_pair_words_block(const mxc__rng_plan *p,
                                          const uint32_t w[4], double v[4]) {
  for (int k = 0; k < 2; ++k) {
    if (p->kind == MXC__RNG_UNIFORM) {
      v[k] = mxc__philox_uniform_f64(w[2 * k], w[2 * k + 1], p->a, p->b,
                                     p->span, p->below);
    } else {
      double u = mxc__philox_uniform_f64(w[2 * k], w[2 * k + 1], p->a, p->b,
                                         p->span, p->below);
      v[k] = mxc__philox_exponential(u, p->lam);
    }
  }
  return 2;
}

/* The float values of block w (returns how many: values_per_block). */
MXC__RNG_HD int mxc__rng_float_values(const mxc__rng_plan *p,
                                      const uint32_t w[4], double v[4]) {
  int f32 = p->dtype == MXC_DTYPE_FLOAT32;
  if (p->kind == MXC__RNG_UNIFORM && f32) {
    return mxc__rng_uniform_f32_block(p, w, v);
  }
  if (p->kind == MXC__RNG_NORMAL) {
    return f32 ? mxc__rng_normal_f32_block(p, w, v)
               : mxc__rng_normal_f64_block(p, w, v);
  }
  return mxc__rng_pair_words_block(p, w, v);
}

/* Computes block b of the plan and writes its values (those below n). */
MXC__RNG_HD void mxc__rng_plan_block(const mxc__rng_plan *p, int64_t b,
                                     void *out) {
  uint32_t w[4];
  mxc__philox_slice_block(p->key, p->first_block, (uint64_t)b, w);
  int64_t j0 = b * p->values_per_block;
  if (p->kind == MXC__RNG_RANDINT) {
    for (int k = 0; k < 2 && j0 + k < p->n; ++k) {
      mxc__rng_put_i(p, out, j0 + k,
                     mxc__philox_randint(w[2 * k], w[2 * k + 1], p->int_low,
                                         p->int_span));
    }
    return;
  }
  double v[4];
  int m = mxc__rng_float_values(p, w, v);
  for (int k = 0; k < m && j0 + k < p->n; ++k) {
    mxc__rng_put_f(p, out, j0 + k, v[k]);
  }
}

/* Thread `t` of `n_threads` (a grid-stride loop over the blocks). */
MXC__RNG_HD void mxc__rng_plan_thread(const mxc__rng_plan *p, int64_t t,
                                      int64_t n_threads, void *out) {
  for (int64_t b = t; b < p->n_blocks; b += n_threads) {
    mxc__rng_plan_block(p, b, out);
  }
}

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_RNG_PLAN_H_ */
