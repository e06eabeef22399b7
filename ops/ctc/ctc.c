/* CTCLoss (ctc_loss, _contrib_CTCLoss, _contrib_ctc_loss): connectionist
 * temporal classification with MXNet 1.9's inputs and parameters.
 *
 * data (T, N, C) holds unnormalized scores (a softmax over C is applied
 * here), label (N, L) the target sequences. blank_label 'first' makes class
 * 0 the blank and 0 the label padding; 'last' makes class C-1 the blank and
 * -1 the padding. Without use_label_lengths a sequence ends at its first
 * padding value; with it, label_lengths (N) gives the lengths (the rest is
 * ignored). use_data_lengths takes data_lengths (N) frames per sequence
 * instead of T. The output is -log p(label | data) per sequence (N),
 * computed with the forward-backward recursions in log space; an
 * impossible alignment (label too long for its frames) gives +inf and a
 * zero gradient. The hidden second output is the gradient of each loss
 * with respect to data (softmax minus the label posterior, 0 past a
 * sequence's frames); the backward operator scales it by the loss's
 * output gradient. Labels outside the classes, or equal to the blank
 * within a sequence, are errors. */
#include <math.h>
#include <string.h>

#include "core/op/common.h"
#include "ops/families.h"

enum { BLANK_FIRST, BLANK_LAST };
static const char *const k_blank[] = {"first", "last", NULL};

typedef struct ctc_param {
  int use_data_lengths, use_label_lengths, blank_label;
} ctc_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(ctc_param, use_data_lengths, MXC__P_BOOL, "false",
               "Take frames per sequence from the data_lengths input."),
    MXC__PARAM(ctc_param, use_label_lengths, MXC__P_BOOL, "false",
               "Take label lengths from the label_lengths input instead of "
               "the padding."),
    MXC__PARAM_ENUM(ctc_param, blank_label, "first", k_blank,
                    "Blank class: first (0; padding 0) or last (C-1; padding "
                    "-1)."),
};

static int ctc_num_inputs(const void *param) {
  const ctc_param *p = param;
  return 2 + p->use_data_lengths + p->use_label_lengths;
}

static const char *ctc_input_name(const void *param, int i) {
  const ctc_param *p = param;
  if (i < 2) return i == 0 ? "data" : "label";
  return (i == 2 && p->use_data_lengths) ? "data_lengths" : "label_lengths";
}

/* Index of the label_lengths input, or -1. */
static int ctc_label_len_input(const ctc_param *p) {
  return p->use_label_lengths ? 2 + p->use_data_lengths : -1;
}

static int ctc_assign(const mxc__op *op, mxc__shape *slot,
                      const mxc__shape *want, const char *what) {
  if (slot->ndim < 0) {
    *slot = *want;
    return MXC_OK;
  }
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, want), MXC_ERR_SHAPE,
                      "operator '%s': %s has shape %s; expected %s", op->name,
                      what, mxc__shape_str(slot, b1, sizeof b1),
                      mxc__shape_str(want, b2, sizeof b2));
  return MXC_OK;
}

static int ctc_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(in[0].ndim != 3 || in[0].dims[2] < 1, MXC_ERR_SHAPE,
                      "operator '%s': data must be (time, batch, classes) "
                      "with at least one class; got %s",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1));
  int64_t n = in[0].dims[1];
  MXC_RETURN_ERROR_IF(
      in[1].ndim >= 0 && (in[1].ndim != 2 || in[1].dims[0] != n), MXC_ERR_SHAPE,
      "operator '%s': label must be (batch, max_label_length) with the "
      "data's batch; got data %s and label %s",
      op->name, mxc__shape_str(&in[0], b1, sizeof b1),
      mxc__shape_str(&in[1], b2, sizeof b2));
  mxc__shape vec = {.ndim = 1, .dims = {n}};
  for (int i = 2; i < n_in; ++i)
    MXC_FORWARD_IF_ERROR(ctc_assign(op, &in[i], &vec, "a lengths input"));
  MXC_FORWARD_IF_ERROR(ctc_assign(op, &out[0], &vec, "the loss"));
  return n_out > 1 ? ctc_assign(op, &out[1], &in[0], "the gradient") : MXC_OK;
}

static int ctc_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(
      mxc__infer_type_masked(op, param, in, n_in, out, n_out, 1u));
  int t = in[0] >= 0 ? in[0] : out[0];
  if (t >= 0 && t != MXC_DTYPE_FLOAT32 && t != MXC_DTYPE_FLOAT64)
    return mxc__unsupported_dtype(op->name, t,
                                  "data must be float32 or float64");
  return MXC_OK;
}

/* ---- the recursions, in log space ---- */

static double lse2(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  double m = a > b ? a : b;
  return m + log(exp(a - m) + exp(b - m));
}

/* One sequence: frames t, classes c, its extended label ext (s states:
 * blank, l1, blank, l2, ..., blank) and the log-softmax lp (t x c). */
typedef struct ctc_seq {
  int64_t t, c, s;
  const int64_t *ext;
  const double *lp;
  double *alpha, *beta; /* t x s each */
} ctc_seq;

/* State s may be entered from s - 2 (skipping a blank). */
static int ctc_skip(const ctc_seq *q, int64_t s) {
  return s >= 2 && q->ext[s] != q->ext[0] && q->ext[s] != q->ext[s - 2];
}

static void ctc_alpha(const ctc_seq *q) {
  double *a = q->alpha;
  for (int64_t s = 0; s < q->s; ++s)
    a[s] = s < 2 ? q->lp[q->ext[s]] : -INFINITY;
  for (int64_t t = 1; t < q->t; ++t) {
    const double *prev = a + (t - 1) * q->s;
    double *cur = a + t * q->s;
    for (int64_t s = 0; s < q->s; ++s) {
      double v = prev[s];
      if (s >= 1) v = lse2(v, prev[s - 1]);
      if (ctc_skip(q, s)) v = lse2(v, prev[s - 2]);
      cur[s] = v + q->lp[t * q->c + q->ext[s]];
    }
  }
}

/* beta[t][s]: log-probability of the rest of the label after frame t,
 * given state s at t (emission at t excluded). */
static void ctc_beta(const ctc_seq *q) {
  double *b = q->beta + (q->t - 1) * q->s;
  for (int64_t s = 0; s < q->s; ++s) b[s] = s >= q->s - 2 ? 0 : -INFINITY;
  for (int64_t t = q->t - 2; t >= 0; --t) {
    const double *next = q->beta + (t + 1) * q->s, *lp = q->lp + (t + 1) * q->c;
    double *cur = q->beta + t * q->s;
    for (int64_t s = 0; s < q->s; ++s) {
      double v = next[s] + lp[q->ext[s]];
      if (s + 1 < q->s) v = lse2(v, next[s + 1] + lp[q->ext[s + 1]]);
      if (s + 2 < q->s && ctc_skip(q, s + 2))
        v = lse2(v, next[s + 2] + lp[q->ext[s + 2]]);
      cur[s] = v;
    }
  }
}

/* log p(label | data). */
static double ctc_logp(const ctc_seq *q) {
  const double *last = q->alpha + (q->t - 1) * q->s;
  return q->s > 1 ? lse2(last[q->s - 1], last[q->s - 2]) : last[0];
}

/* g (t x c, row stride `stride`) = softmax - posterior of each class. */
static void ctc_grad(const ctc_seq *q, double logp, double *g, int64_t stride) {
  for (int64_t t = 0; t < q->t; ++t) {
    double *gt = g + t * stride;
    for (int64_t k = 0; k < q->c; ++k) gt[k] = exp(q->lp[t * q->c + k]);
    for (int64_t s = 0; s < q->s; ++s) {
      double a = q->alpha[t * q->s + s] + q->beta[t * q->s + s];
      if (a > -INFINITY) gt[q->ext[s]] -= exp(a - logp);
    }
  }
}

/* ---- reading one sequence ---- */

/* An integer in [lo, hi] from element i of b, or an error naming what. */
static int ctc_int(const char *name, const mxc__blob *b, int64_t i, int64_t lo,
                   int64_t hi, const char *what, int64_t n, int64_t *out) {
  double v = mxc__blob_get(b, i);
  MXC_RETURN_ERROR_IF(!(v >= (double)lo && v <= (double)hi) || v != floor(v),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': %s of sequence %lld is %g; expected an "
                      "integer in %lld..%lld",
                      name, what, (long long)n, v, (long long)lo,
                      (long long)hi);
  *out = (int64_t)v;
  return MXC_OK;
}

/* The label of sequence n as the extended state list ext (blank, l1,
 * blank, ...); *s gets its length. */
static int ctc_label(const char *name, const ctc_param *p, const mxc__blob *in,
                     int64_t n, int64_t c, int64_t *ext, int64_t *s) {
  int64_t lmax = in[1].shape.dims[1], len = lmax;
  int64_t blank = p->blank_label == BLANK_FIRST ? 0 : c - 1;
  int64_t pad = p->blank_label == BLANK_FIRST ? 0 : -1;
  int li = ctc_label_len_input(p);
  if (li >= 0)
    MXC_FORWARD_IF_ERROR(
        ctc_int(name, &in[li], n, 0, lmax, "the label length", n, &len));
  int64_t k = 0;
  for (; k < len; ++k) {
    double v = mxc__blob_get(&in[1], n * lmax + k);
    if (li < 0 && v == (double)pad) break;
    int64_t lab;
    MXC_FORWARD_IF_ERROR(
        ctc_int(name, &in[1], n * lmax + k, 0, c - 1, "a label", n, &lab));
    MXC_RETURN_ERROR_IF(lab == blank, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': sequence %lld has the blank class "
                        "%lld as a label",
                        name, (long long)n, (long long)blank);
    ext[2 * k] = blank;
    ext[2 * k + 1] = lab;
  }
  ext[2 * k] = blank;
  *s = 2 * k + 1;
  return MXC_OK;
}

/* lp (t x c) = log_softmax of the sequence's frames of data. */
static void ctc_log_softmax(const mxc__blob *data, int64_t n, int64_t t,
                            double *lp) {
  int64_t nb = data->shape.dims[1], c = data->shape.dims[2];
  for (int64_t f = 0; f < t; ++f) {
    double *row = lp + f * c, m = -INFINITY, sum = 0;
    for (int64_t k = 0; k < c; ++k) {
      row[k] = mxc__blob_get(data, (f * nb + n) * c + k);
      if (row[k] > m) m = row[k];
    }
    for (int64_t k = 0; k < c; ++k) sum += exp(row[k] - m);
    for (int64_t k = 0; k < c; ++k) row[k] -= m + log(sum);
  }
}

/* ---- kernels ---- */

/* Scratch of one call, reused by every sequence. */
typedef struct ctc_work {
  double *lp, *alpha, *beta, *grad;
  int64_t *ext;
} ctc_work;

static int ctc_work_get(const char *name, const mxc__opctx *ctx, int64_t t,
                        int64_t c, int64_t lmax, ctc_work *w) {
  int64_t s = 2 * lmax + 1, tc, ts, total;
  MXC_RETURN_ERROR_IF(!mxc__mul_i64(t, c, &tc) || !mxc__mul_i64(t, s, &ts) ||
                          !mxc__mul_i64(2, tc + ts, &total) ||
                          total > (INT64_MAX / 8) - s,
                      MXC_ERR_SHAPE,
                      "operator '%s': %lld frames x %lld classes x label "
                      "length %lld need too much scratch memory",
                      name, (long long)t, (long long)c, (long long)lmax);
  void *p = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__opctx_temp(ctx, (size_t)(total + s) * sizeof(double), &p));
  w->lp = p;
  w->grad = w->lp + tc;
  w->alpha = w->grad + tc;
  w->beta = w->alpha + ts;
  w->ext = (int64_t *)(w->beta + ts);
  return MXC_OK;
}

/* Loss of sequence n; its gradient (frames x c) into w->grad. */
static int ctc_sequence(const char *name, const ctc_param *p,
                        const mxc__blob *in, int64_t n, ctc_work *w,
                        int64_t *frames, double *loss) {
  int64_t t = in[0].shape.dims[0], c = in[0].shape.dims[2], s = 1;
  if (p->use_data_lengths)
    MXC_FORWARD_IF_ERROR(
        ctc_int(name, &in[2], n, 0, t, "the data length", n, &t));
  MXC_FORWARD_IF_ERROR(ctc_label(name, p, in, n, c, w->ext, &s));
  *frames = t;
  memset(w->grad, 0, (size_t)(t * c) * sizeof(double));
  if (t == 0) {
    *loss = s == 1 ? 0 : INFINITY;
    return MXC_OK;
  }
  ctc_log_softmax(&in[0], n, t, w->lp);
  ctc_seq q = {t, c, s, w->ext, w->lp, w->alpha, w->beta};
  ctc_alpha(&q);
  ctc_beta(&q);
  double logp = ctc_logp(&q);
  *loss = -logp;
  if (logp > -INFINITY) ctc_grad(&q, logp, w->grad, c);
  return MXC_OK;
}

static int ctc_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const ctc_param *p = param;
  const int64_t *d = in[0].shape.dims;
  ctc_work w = {NULL, NULL, NULL, NULL, NULL};
  MXC_FORWARD_IF_ERROR(
      ctc_work_get(op->name, ctx, d[0], d[2], in[1].shape.dims[1], &w));
  int keep_grad = n_out > 1 && req[1] != MXC__REQ_NULL;
  for (int64_t n = 0; n < d[1]; ++n) {
    int64_t frames;
    double loss;
    MXC_FORWARD_IF_ERROR(ctc_sequence(op->name, p, in, n, &w, &frames, &loss));
    if (req[0] == MXC__REQ_ADD) loss += mxc__blob_get(&out[0], n);
    if (req[0] != MXC__REQ_NULL) mxc__blob_set(&out[0], n, loss);
    for (int64_t f = 0; keep_grad && f < d[0]; ++f) {
      for (int64_t k = 0; k < d[2]; ++k) {
        double g = f < frames ? w.grad[f * d[2] + k] : 0;
        mxc__blob_set(&out[1], (f * d[1] + n) * d[2] + k, g);
      }
    }
  }
  return MXC_OK;
}

/* _backward_CTCLoss: (ograd (N), grad (T, N, C)) -> ddata. */
static int ctc_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const int64_t *d = in[1].shape.dims;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  for (int64_t i = 0; i < d[0] * d[1] * d[2]; ++i) {
    double v =
        mxc__blob_get(&in[0], (i / d[2]) % d[1]) * mxc__blob_get(&in[1], i);
    if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], i);
    mxc__blob_set(&out[0], i, v);
  }
  return MXC_OK;
}

static int ctc_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  return in[1].ndim >= 0 ? ctc_assign(op, &out[0], &in[1], "the gradient")
                         : MXC_OK;
}

static int ctc_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                        mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], {(mxc__node *)fwd, 1}};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(mxc__node_op_like("_backward_CTCLoss", fwd, ins, 2, &b));
  for (int i = 0; i < fwd->n_inputs; ++i) {
    mxc__entry none = {NULL, 0};
    igrad[i] = i == 0 ? mxc__entry_ref(b, 0) : none;
  }
  mxc__node_release(b); /* the entries hold it now */
  return MXC_OK;
}

static const char *const k_aliases[] = {"ctc_loss", "_contrib_CTCLoss",
                                        "_contrib_ctc_loss", NULL};
static const char *const k_out[] = {"loss", "grad", NULL};
static const char *const k_bwd_in[] = {"ograd", "grad", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "CTCLoss",
        .aliases = k_aliases,
        .doc = "Connectionist temporal classification loss of data (T, N, "
               "C) against label (N, L): (N).",
        MXC__PARAMS_OF(ctc_param, k_params),
        .num_inputs = ctc_num_inputs,
        .input_name = ctc_input_name,
        .n_outputs = 2,
        .n_visible_outputs = 1,
        .output_names = k_out,
        .infer_shape = ctc_shape,
        .infer_type = ctc_type,
        .compute = ctc_forward,
        .gradient = ctc_gradient,
        .backward_uses_outputs = 2,
        .resources = MXC__RES_TEMP,
    },
    {
        MXC__BACKWARD("CTCLoss"),
        MXC__PARAMS_OF(ctc_param, k_params),
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = ctc_bwd_shape,
        .infer_type = mxc__infer_type_same,
        .compute = ctc_backward,
    },
};

int mxc__ops_register_ctc(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
