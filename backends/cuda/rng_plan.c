/* The random kernels' plans (rng_plan.h) from the samplers' parameter
 * structs: the same values, in the same precision, that ops/random/sample.c
 * hands to the CPU's fill functions. */
#include "backends/cuda/rng_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/random/sample_params.h"

static const char *const k_names[] = {"_random_uniform", "_random_normal",
                                      "_random_exponential",
                                      "_random_randint"};

/* The dtypes the CPU operator writes (its infer_type). */
static int dtype_ok(int kind, int dt) {
  if (kind == MXC__RNG_RANDINT) {
    return dt == MXC_DTYPE_INT32 || dt == MXC_DTYPE_INT64;
  }
  return dt == MXC_DTYPE_FLOAT32 || dt == MXC_DTYPE_FLOAT64;
}

/* uniform: float32 bounds are rounded to float first (sample.c passes
 * (float)low, (float)high); the blocks take the span of the floats. */
static void plan_uniform(const mxc__uniform_param *u, mxc__rng_plan *p) {
  if (p->dtype == MXC_DTYPE_FLOAT32) {
    p->af = (float)u->low;
    p->bf = (float)u->high;
    p->below_f = nextafterf(p->bf, -INFINITY);
  } else {
    p->a = u->low, p->b = u->high;
    p->span = u->high - u->low;
    p->below = nextafter(u->high, -INFINITY);
  }
}

static void plan_params(const void *param, mxc__rng_plan *p) {
  if (p->kind == MXC__RNG_UNIFORM) {
    plan_uniform(param, p);
  } else if (p->kind == MXC__RNG_NORMAL) {
    const mxc__normal_param *q = param;
    p->a = q->loc, p->b = q->scale;
    p->af = (float)q->loc, p->bf = (float)q->scale; /* float32's */
  } else if (p->kind == MXC__RNG_EXPONENTIAL) {
    /* sample.c draws uniform_f64 on [0, 1), then inverts it. */
    p->a = 0.0, p->b = 1.0, p->span = 1.0;
    p->below = nextafter(1.0, -INFINITY);
    p->lam = ((const mxc__exponential_param *)param)->lam;
  } else {
    const mxc__randint_param *q = param;
    p->int_low = (uint64_t)q->low;
    p->int_span = (uint64_t)q->high - (uint64_t)q->low;
  }
}

/* Values per Philox block (rng_plan.h). */
static int values_per_block(int kind, int dtype) {
  int one_word = kind == MXC__RNG_UNIFORM || kind == MXC__RNG_NORMAL;
  return one_word && dtype == MXC_DTYPE_FLOAT32 ? 4 : 2;
}

/* The CPU operators check 2 words per value (mxc__rng_check), whatever
 * they read: the same check, with the same reason. */
static int check_slice(int kind, int64_t n, const mxc__gpu_rng *rng,
                       char *why, size_t why_len) {
  uint64_t need = (uint64_t)n * 2;
  if (need <= rng->n_blocks * 4) return MXC_OK;
  snprintf(why, why_len,
           "operator '%s': the random slice holds %llu words but %llu are "
           "needed (was MXC__RES_RANDOM declared?)",
           k_names[kind], (unsigned long long)(rng->n_blocks * 4),
           (unsigned long long)need);
  return MXC_ERR_INTERNAL;
}

int mxc__rng_plan_make(int kind, const void *param, const mxc__gpu_array *out,
                       int req, const mxc__gpu_rng *rng, mxc__rng_plan *p,
                       char *why, size_t why_len) {
  memset(p, 0, sizeof *p);
  if (kind < MXC__RNG_UNIFORM || kind > MXC__RNG_RANDINT || !param) {
    snprintf(why, why_len, "random kernel: unknown sampler %d", kind);
    return MXC_ERR_INTERNAL;
  }
  if (!dtype_ok(kind, out->dtype)) {
    snprintf(why, why_len, "operator '%s': output dtype %d is not one the "
             "CPU operator writes (%s)", k_names[kind], out->dtype,
             kind == MXC__RNG_RANDINT ? "int32 or int64"
                                      : "float32 or float64");
    return MXC_ERR_DTYPE;
  }
  p->kind = kind, p->dtype = out->dtype;
  p->add = req == MXC__GPU_REQ_ADD;
  p->n = req == MXC__GPU_REQ_NULL ? 0 : out->size;
  int rc = check_slice(kind, p->n, rng, why, why_len);
  if (rc != MXC_OK) return rc;
  p->key[0] = rng->key[0], p->key[1] = rng->key[1];
  p->first_block = rng->block;
  p->values_per_block = values_per_block(kind, p->dtype);
  p->n_blocks = (p->n + p->values_per_block - 1) / p->values_per_block;
  plan_params(param, p);
  return MXC_OK;
}

/* One output of one of the two dtypes (-1: not decided yet). */
static int one_output_of(const int *dt, int n_in, int n_out, int a, int b) {
  if (n_in != 0 || n_out != 1) return 0;
  return dt[0] == a || dt[0] == b || dt[0] == -1;
}

int mxc__rng_float_dtypes(const int *dtypes, int n_in, int n_out) {
  return one_output_of(dtypes, n_in, n_out, MXC_DTYPE_FLOAT32,
                       MXC_DTYPE_FLOAT64);
}

int mxc__rng_int_dtypes(const int *dtypes, int n_in, int n_out) {
  return one_output_of(dtypes, n_in, n_out, MXC_DTYPE_INT32, MXC_DTYPE_INT64);
}
