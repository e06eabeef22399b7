/* The parameter struct of SequenceMask, SequenceLast, SequenceReverse and
 * their gradients (sequence.c; the last two leave value at 0) and their
 * index rules, in a header of their own because the CUDA plug-in's
 * kernels read the struct and run the rules too (backends/cuda/
 * nn3_plan.h, compiled by nvcc for the device): one text for both
 * devices. Header-only; an includer may define MXC__SEQ_HD (e.g.
 * __host__ __device__ static inline) first. Thread-safety: pure. */
#ifndef MXC_OPS_NN_SEQUENCE_PARAMS_H_
#define MXC_OPS_NN_SEQUENCE_PARAMS_H_

#include <stdint.h>

#ifndef MXC__SEQ_HD
#define MXC__SEQ_HD static inline
#endif

typedef struct mxc__seq_param {
  int use_sequence_length;
  double value;
  int64_t axis;
} mxc__seq_param;

/* The operators (SequenceMask, SequenceLast, SequenceReverse). */
enum { MXC__SEQ_MASK, MXC__SEQ_LAST, MXC__SEQ_REVERSE, MXC__SEQ_COUNT };

/* data (T, B, ...) or (B, T, ...): step t of sequence b starts at
 * mxc__seq_step(g, t, b); inner elements per step. */
typedef struct mxc__seq_geom {
  int64_t t, b, inner;
  int axis;
} mxc__seq_geom;

MXC__SEQ_HD int64_t mxc__seq_step(const mxc__seq_geom *g, int64_t t,
                                  int64_t b) {
  return (g->axis == 0 ? t * g->b + b : b * g->t + t) * g->inner;
}

/* A length value as the operators read it: clamped to 0..t (NaN: 0). */
MXC__SEQ_HD int64_t mxc__seq_len(double v, int64_t t) {
  if (!(v > 0)) return 0;
  return v >= (double)t ? t : (int64_t)v;
}

/* Source step of output step t: reversed within the length. */
MXC__SEQ_HD int64_t mxc__seq_source(int kind, int64_t t, int64_t len) {
  return kind == MXC__SEQ_REVERSE && t < len ? len - 1 - t : t;
}

#endif /* MXC_OPS_NN_SEQUENCE_PARAMS_H_ */
