/* Helpers shared by the optimizer updates of optimizer_mp.c and
 * optimizer_ext.c: element access for the floating dtypes (updates mix
 * float16 weights with float32 states) and type/shape inference pieces. */
#ifndef MXC_OPS_RANDOM_OPTIMIZER_UTIL_H_
#define MXC_OPS_RANDOM_OPTIMIZER_UTIL_H_

#include "core/op/common.h"

/* Element i of a float32/float64/float16/bfloat16 blob. */
static inline double mxc__opt_ld(const mxc__blob *b, int64_t i) {
  switch (b->dtype) {
    case MXC_DTYPE_FLOAT32: return ((const float *)b->ptr)[i];
    case MXC_DTYPE_FLOAT64: return ((const double *)b->ptr)[i];
    case MXC_DTYPE_FLOAT16: return mxc__f16_to_f32(((const uint16_t *)b->ptr)[i]);
    default: return mxc__bf16_to_f32(((const uint16_t *)b->ptr)[i]);
  }
}

/* Stores v into element i, rounded to the blob's dtype. */
static inline void mxc__opt_st(const mxc__blob *b, int64_t i, double v) {
  switch (b->dtype) {
    case MXC_DTYPE_FLOAT32: ((float *)b->ptr)[i] = (float)v; break;
    case MXC_DTYPE_FLOAT64: ((double *)b->ptr)[i] = v; break;
    case MXC_DTYPE_FLOAT16:
      ((uint16_t *)b->ptr)[i] = mxc__f32_to_f16((float)v);
      break;
    default: ((uint16_t *)b->ptr)[i] = mxc__f32_to_bf16((float)v); break;
  }
}

/* The same with a write mode (ADD accumulates; NULL is the caller's). */
static inline void mxc__opt_st_req(const mxc__blob *b, int64_t i, double v,
                                   mxc__req req) {
  if (req == MXC__REQ_ADD) v += mxc__opt_ld(b, i);
  mxc__opt_st(b, i, v);
}

/* MXC_OK for the floating dtypes, else the unsupported-dtype error. */
int mxc__opt_float_type(const char *op_name, int dt);

/* Fills *slot with want or checks it: MXC_ERR_DTYPE naming input `index`
 * (its name from the descriptor) or, for index -1, the output. */
int mxc__opt_assign_type(const mxc__op *op, const void *param, int *slot,
                         int want, int index);

/* n inputs in[0..n) (descriptor indices first..first+n) and *out share
 * one shape: unknown ones are filled, a mismatch is MXC_ERR_SHAPE. */
int mxc__opt_same_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n, int first, mxc__shape *out);

int mxc__random_register_optimizer_mp(mxc__registry *r);
int mxc__random_register_optimizer_ext(mxc__registry *r);

#endif /* MXC_OPS_RANDOM_OPTIMIZER_UTIL_H_ */
