/* Sequence operators over padded batches: data is (T, B, ...) with the
 * time axis 0, or (B, T, ...) with axis = 1; with use_sequence_length a
 * second input (B) gives each sequence's length (any numeric dtype; read
 * as an integer, clamped to 0..T), else every sequence has length T.
 *   SequenceMask:    steps t >= length are set to value;
 *   SequenceLast:    the step length - 1 of each sequence -> data without
 *                    the time axis (length must be 1..T);
 *   SequenceReverse: the first length steps in reverse order, the padding
 *                    after them unchanged (time axis 0 only, as MXNet).
 * Gradients: the output gradient through the same mask / selection /
 * permutation; the lengths get a zero gradient. */
#include <math.h>

#include "ops/nn/nn.h"
#include "ops/nn/sequence_params.h"

typedef mxc__seq_param seq_param;

static const mxc__param_def k_mask_params[] = {
    MXC__PARAM(seq_param, use_sequence_length, MXC__P_BOOL, "false",
               "Take the lengths from input 1 (else all are T)."),
    MXC__PARAM(seq_param, value, MXC__P_FLOAT, "0",
               "Value written into the masked steps."),
    MXC__PARAM_RANGE(seq_param, axis, MXC__P_INT, "0", 0, 1,
                     "Time axis: 0 (T, B, ...) or 1 (B, T, ...)."),
};

/* SequenceLast and SequenceReverse have no value (the struct is shared). */
static const mxc__param_def k_last_params[] = {
    MXC__PARAM(seq_param, use_sequence_length, MXC__P_BOOL, "false",
               "Take the lengths from input 1 (else all are T)."),
    MXC__PARAM_RANGE(seq_param, axis, MXC__P_INT, "0", 0, 1,
                     "Time axis: 0 (T, B, ...) or 1 (B, T, ...)."),
};

static const mxc__param_def k_rev_params[] = {
    MXC__PARAM(seq_param, use_sequence_length, MXC__P_BOOL, "false",
               "Take the lengths from input 1 (else all are T)."),
    MXC__PARAM_RANGE(seq_param, axis, MXC__P_INT, "0", 0, 0,
                     "Time axis; only 0 is supported (as in MXNet)."),
};

enum {
  SEQ_MASK = MXC__SEQ_MASK,
  SEQ_LAST = MXC__SEQ_LAST,
  SEQ_REVERSE = MXC__SEQ_REVERSE,
  SEQ_COUNT = MXC__SEQ_COUNT
};
static const mxc__op k_fwd[SEQ_COUNT], k_bwd[SEQ_COUNT];

static int kind_of(const mxc__op *op) {
  if (op >= k_fwd && op < k_fwd + SEQ_COUNT) return (int)(op - k_fwd);
  return (int)(op - k_bwd);
}

static int seq_num_inputs(const void *param) {
  return ((const seq_param *)param)->use_sequence_length ? 2 : 1;
}

static const char *seq_input_name(const void *param, int i) {
  (void)param;
  return i == 0 ? "data" : "sequence_length";
}

static int bwd_num_inputs(const void *param) {
  return seq_num_inputs(param) + 1; /* ograd, then the inputs */
}

static const char *bwd_input_name(const void *param, int i) {
  static const char *const names[] = {"ograd", "data", "sequence_length"};
  (void)param;
  return names[i];
}

/* data (T, B, ...) or (B, T, ...) (sequence_params.h). */
typedef mxc__seq_geom seq_geom;

static seq_geom geom_of(const seq_param *p, const mxc__shape *x) {
  seq_geom g;
  g.axis = (int)p->axis;
  g.t = x->dims[g.axis];
  g.b = x->dims[1 - g.axis];
  g.inner = mxc__nn_split(x, 1).inner;
  return g;
}

static int64_t step_at(const seq_geom *g, int64_t t, int64_t b) {
  return mxc__seq_step(g, t, b);
}

static int seq_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  const seq_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b1[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < 2, MXC_ERR_SHAPE,
                      "operator '%s': data must have at least 2 axes (time "
                      "and batch); got shape %s",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1));
  MXC_RETURN_ERROR_IF(kind_of(op) == SEQ_LAST && in[0].dims[p->axis] < 1,
                      MXC_ERR_SHAPE,
                      "operator '%s': data %s has no time steps to take the "
                      "last of",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1));
  if (n_in > 1) {
    mxc__shape len = mxc__nn_shape1(in[0].dims[1 - p->axis]);
    MXC_FORWARD_IF_ERROR(mxc__nn_assign_shape(
        op->name, &in[1], &len, "input 1 ('sequence_length')",
        "one length per sequence of the batch axis"));
  }
  out[0] = in[0];
  if (kind_of(op) == SEQ_LAST) {
    for (int d = p->axis; d + 1 < in[0].ndim; ++d)
      out[0].dims[d] = in[0].dims[d + 1];
    out[0].ndim--;
  }
  return MXC_OK;
}

/* Backward: (ograd, data[, length]) -> (ddata[, dlength]). */
static int seq_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  out[0] = in[1];
  if (n_out > 1) out[1] = in[2];
  return MXC_OK;
}

/* data and its gradient float; lengths any numeric dtype. */
static int seq_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  int bwd = op >= k_bwd && op < k_bwd + SEQ_COUNT;
  uint32_t same = bwd ? 3u : 1u;
  MXC_FORWARD_IF_ERROR(mxc__nn_check_float(op->name, in[0], "the data"));
  if (!bwd) return mxc__infer_type_masked(op, param, in, n_in, out, n_out, same);
  int t = in[0] >= 0 ? in[0] : in[1];
  if (t >= 0) in[0] = in[1] = out[0] = t;
  if (n_out > 1 && in[2] >= 0) out[1] = in[2];
  return mxc__nn_check_float(op->name, t, "the data");
}

/* Length of sequence b, clamped to 0..T. */
static int64_t len_of(const mxc__blob *lens, int64_t b, int64_t t) {
  return lens ? mxc__seq_len(mxc__blob_get(lens, b), t) : t;
}

/* SequenceLast needs a step to read: length 1..T. */
static int check_last_lengths(const mxc__op *op, const mxc__blob *lens,
                              int64_t nb, int64_t t) {
  for (int64_t b = 0; lens && b < nb; ++b) {
    double v = mxc__blob_get(lens, b);
    MXC_RETURN_ERROR_IF(!(v >= 1 && v <= (double)t), MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': sequence_length[%lld] = %g is "
                        "outside 1..%lld (the time extent)",
                        op->name, (long long)b, v, (long long)t);
  }
  return MXC_OK;
}

/* Source step of output step t: reversed within the length. */
static int64_t source_step(int kind, int64_t t, int64_t len) {
  return mxc__seq_source(kind, t, len);
}

static int seq_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const seq_param *p = param;
  int kind = kind_of(op);
  seq_geom g = geom_of(p, &in[0].shape);
  const mxc__blob *lens = n_in > 1 ? &in[1] : NULL;
  if (kind == SEQ_LAST) MXC_FORWARD_IF_ERROR(check_last_lengths(op, lens, g.b, g.t));
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    for (int64_t b = 0; b < g.b; ++b) {
      int64_t len = len_of(lens, b, g.t);
      if (kind == SEQ_LAST) {
        const T *src = x + step_at(&g, len - 1, b);
        T *dst = y + b * g.inner; /* output (B, ...) */
        for (int64_t r = 0; r < g.inner; ++r) MXC__ASSIGN(req[0], dst[r], src[r]);
        continue;
      }
      for (int64_t t = 0; t < g.t; ++t) {
        const T *src = x + step_at(&g, source_step(kind, t, len), b);
        T *dst = y + step_at(&g, t, b);
        int masked = kind == SEQ_MASK && t >= len;
        for (int64_t r = 0; r < g.inner; ++r)
          MXC__ASSIGN(req[0], dst[r], masked ? (T)p->value : src[r]);
      }
    }
  });
  return MXC_OK;
}

/* Clears out[i] (the lengths' zero gradient, or ddata before a scatter)
 * unless accumulating. */
static void clear_out(const mxc__blob *b, mxc__req req) {
  if (req == MXC__REQ_NULL || req == MXC__REQ_ADD) return;
  int64_t n = mxc__shape_size(&b->shape);
  for (int64_t i = 0; i < n; ++i) mxc__blob_set(b, i, 0);
}

static int seq_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const seq_param *p = param;
  int kind = kind_of(op);
  seq_geom g = geom_of(p, &in[1].shape);
  const mxc__blob *lens = n_in > 2 ? &in[2] : NULL;
  if (n_out > 1) clear_out(&out[1], req[1]);
  if (kind == SEQ_LAST) MXC_FORWARD_IF_ERROR(check_last_lengths(op, lens, g.b, g.t));
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (kind == SEQ_LAST) clear_out(&out[0], req[0]);
  MXC__FLOAT_TYPED(in[1].dtype, {
    const T *og = in[0].ptr;
    T *dx = out[0].ptr;
    for (int64_t b = 0; b < g.b; ++b) {
      int64_t len = len_of(lens, b, g.t);
      if (kind == SEQ_LAST) {
        T *dst = dx + step_at(&g, len - 1, b);
        for (int64_t r = 0; r < g.inner; ++r) dst[r] += og[b * g.inner + r];
        continue;
      }
      /* Reversal is its own inverse: ddata step s = ograd step source(s). */
      for (int64_t t = 0; t < g.t; ++t) {
        const T *src = og + step_at(&g, source_step(kind, t, len), b);
        T *dst = dx + step_at(&g, t, b);
        int masked = kind == SEQ_MASK && t >= len;
        for (int64_t r = 0; r < g.inner; ++r)
          MXC__ASSIGN(req[0], dst[r], masked ? (T)0 : src[r]);
      }
    }
  });
  return MXC_OK;
}

static const char *const k_in[] = {"data", "sequence_length", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", "sequence_length",
                                       NULL};

#define SEQ_FWD(nm, table, doc_)                                         \
  {                                                                     \
    .name = nm, .doc = doc_, MXC__PARAMS_OF(seq_param, table),          \
    .num_inputs = seq_num_inputs, .input_names = k_in,                  \
    .input_name = seq_input_name, .n_outputs = 1,                       \
    .infer_shape = seq_shape, .infer_type = seq_type,                   \
    .compute = seq_forward, .gradient = mxc__grad_use_in,               \
    .backward_uses_inputs = 3u,                                         \
  }
#define SEQ_BWD(nm, table)                                               \
  {                                                                     \
    MXC__BACKWARD(nm), MXC__PARAMS_OF(seq_param, table),                \
    .num_inputs = bwd_num_inputs, .input_names = k_bwd_in,              \
    .input_name = bwd_input_name, .num_outputs = seq_num_inputs,        \
    .infer_shape = seq_bwd_shape, .infer_type = seq_type,               \
    .compute = seq_backward,                                            \
  }

static const mxc__op k_fwd[SEQ_COUNT] = {
    SEQ_FWD("SequenceMask", k_mask_params,
            "Sets the steps of each sequence at or past its length to "
            "value; output has the data's shape (T, B, ...)."),
    SEQ_FWD("SequenceLast", k_last_params,
            "The last step (length - 1) of each sequence: data (T, B, ...) "
            "-> (B, ...)."),
    SEQ_FWD("SequenceReverse", k_rev_params,
            "Reverses the first length steps of each sequence of data (T, "
            "B, ...); padding steps stay in place."),
};
static const mxc__op k_bwd[SEQ_COUNT] = {
    SEQ_BWD("SequenceMask", k_mask_params),
    SEQ_BWD("SequenceLast", k_last_params),
    SEQ_BWD("SequenceReverse", k_rev_params),
};

int mxc__nn_register_sequence(mxc__registry *r) {
  for (int i = 0; i < SEQ_COUNT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
  }
  return MXC_OK;
}
