/* dot and batch_dot, and their gradients.
 *
 * dot follows MXNet: 1-D . 1-D is the inner product (shape (1,)); else
 * each input is viewed as a matrix and one GEMM computes the product.
 * Without transpose, lhs is (prod of all but its last axis, last axis) and
 * rhs (first axis, prod of the rest), so the product contracts the last
 * axis of lhs with the first of rhs (a tensordot) and the output shape is
 * lhs.shape[:-1] + rhs.shape[1:]. transpose_a views lhs as (first axis,
 * rest) and contracts its first axis (output keeps lhs.shape[1:]);
 * transpose_b views rhs as (all but last, last) and contracts its last
 * axis. For 2-D inputs that is the ordinary matrix transpose. A 1-D input
 * contributes no output axis.
 *
 * batch_dot multiplies matching matrices of two stacks (..., M, K) and
 * (..., K, N), transposes acting on the last two axes.
 *
 * Gradients (G the output gradient, op() the transposes):
 *   dA = G op(B)^T, stored transposed when transpose_a;
 *   dB = op(A)^T G, stored transposed when transpose_b;
 * each is again a single GEMM on the stored layouts. */
#include <stdio.h>

#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"
#include "core/op/half_compute.h"

typedef mxc__dot_param dot_param; /* linalg.h */

static const mxc__param_def k_dot_params[] = {
    MXC__PARAM(dot_param, transpose_a, MXC__P_BOOL, "false",
               "Transpose lhs (view it as (first axis, rest)) first."),
    MXC__PARAM(dot_param, transpose_b, MXC__P_BOOL, "false",
               "Transpose rhs (view it as (all but last axis, last)) first."),
};

/* One product as matrices: C(m,n) = op(A) op(B), A stored with leading
 * dimension lda, B with ldb; `batch` products of these sizes. */
typedef struct dot_dims {
  int64_t batch, m, n, k, lda, ldb;
} dot_dims;

static int64_t prod(const int64_t *d, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= d[i];
  return p;
}

static int mismatch(const mxc__op *op, const dot_param *p, const mxc__shape *a,
                    const mxc__shape *b, int64_t ka, int64_t kb) {
  char b1[160], b2[160];
  return mxc__error_set(
      MXC_ERR_SHAPE,
      "operator '%s': inner dimensions differ: lhs %s (transpose_a=%s) "
      "contracts %lld elements, rhs %s (transpose_b=%s) contracts %lld",
      op->name, mxc__shape_str(a, b1, sizeof b1),
      p->transpose_a ? "true" : "false", (long long)ka,
      mxc__shape_str(b, b2, sizeof b2), p->transpose_b ? "true" : "false",
      (long long)kb);
}

/* Matrix view and output shape of dot. */
static int dot_plan(const mxc__op *op, const dot_param *p, const mxc__shape *a,
                    const mxc__shape *b, dot_dims *d, mxc__shape *out) {
  int na = a->ndim, nb = b->ndim;
  MXC_RETURN_ERROR_IF(na < 1 || nb < 1, MXC_ERR_SHAPE,
                      "operator '%s': inputs must have at least 1 axis "
                      "(got %d and %d)",
                      op->name, na, nb);
  int ta = p->transpose_a, tb = p->transpose_b;
  MXC_RETURN_ERROR_IF(na == 1 && nb == 1 && (ta || tb), MXC_ERR_SHAPE,
                      "operator '%s': 1-D inputs cannot be transposed",
                      op->name);
  /* lhs: kept axes [ka0, ka1), contracted axes the others. */
  int ka0 = ta ? 1 : 0, ka1 = ta ? na : na - 1;
  int kb0 = tb ? 0 : 1, kb1 = tb ? nb - 1 : nb;
  int64_t m = prod(a->dims + ka0, ka1 - ka0);
  int64_t kA = ta ? a->dims[0] : a->dims[na - 1];
  int64_t n = prod(b->dims + kb0, kb1 - kb0);
  int64_t kB = tb ? b->dims[nb - 1] : b->dims[0];
  if (na == 1) m = 1;
  if (nb == 1) n = 1;
  if (kA != kB) return mismatch(op, p, a, b, kA, kB);
  int nd = (na > 1 ? ka1 - ka0 : 0) + (nb > 1 ? kb1 - kb0 : 0);
  MXC_RETURN_ERROR_IF(nd > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': the output would have %d axes (at most "
                      "%d)",
                      op->name, nd, MXC_MAX_NDIM);
  out->ndim = 0;
  if (na == 1 && nb == 1) {
    out->ndim = 1;
    out->dims[0] = 1;
  }
  for (int i = ka0; na > 1 && i < ka1; ++i) out->dims[out->ndim++] = a->dims[i];
  for (int i = kb0; nb > 1 && i < kb1; ++i) out->dims[out->ndim++] = b->dims[i];
  d->batch = 1;
  d->m = m;
  d->n = n;
  d->k = kA;
  d->lda = ta ? m : kA;
  d->ldb = tb ? kA : n;
  return MXC_OK;
}

static int batch_plan(const mxc__op *op, const dot_param *p,
                      const mxc__shape *a, const mxc__shape *b, dot_dims *d,
                      mxc__shape *out) {
  int nd = a->ndim;
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(nd < 3 || b->ndim != nd, MXC_ERR_SHAPE,
                      "operator '%s': inputs must be stacks of matrices with "
                      "the same number (>= 3) of axes; got lhs %s and rhs %s",
                      op->name, mxc__shape_str(a, b1, sizeof b1),
                      mxc__shape_str(b, b2, sizeof b2));
  for (int i = 0; i < nd - 2; ++i) {
    MXC_RETURN_ERROR_IF(a->dims[i] != b->dims[i], MXC_ERR_SHAPE,
                        "operator '%s': batch axes differ: lhs %s, rhs %s",
                        op->name, mxc__shape_str(a, b1, sizeof b1),
                        mxc__shape_str(b, b2, sizeof b2));
  }
  int ta = p->transpose_a, tb = p->transpose_b;
  int64_t r0 = a->dims[nd - 2], r1 = a->dims[nd - 1];
  int64_t s0 = b->dims[nd - 2], s1 = b->dims[nd - 1];
  int64_t kA = ta ? r0 : r1, kB = tb ? s1 : s0;
  if (kA != kB) return mismatch(op, p, a, b, kA, kB);
  d->batch = prod(a->dims, nd - 2);
  d->m = ta ? r1 : r0;
  d->n = tb ? s0 : s1;
  d->k = kA;
  d->lda = r1;
  d->ldb = s1;
  *out = *a;
  out->dims[nd - 2] = d->m;
  out->dims[nd - 1] = d->n;
  return MXC_OK;
}

static int is_batch(const mxc__op *op);

static int plan(const mxc__op *op, const dot_param *p, const mxc__shape *a,
                const mxc__shape *b, dot_dims *d, mxc__shape *out) {
  return is_batch(op) ? batch_plan(op, p, a, b, d, out)
                      : dot_plan(op, p, a, b, d, out);
}

static int dot_infer_shape(const mxc__op *op, const void *param, mxc__shape *in,
                           int n_in, mxc__shape *out, int n_out) {
  (void)n_in, (void)n_out;
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  dot_dims d;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(plan(op, param, &in[0], &in[1], &d, &o));
  return mxc__linalg_assign_shape(op, param, &out[0], &o, "output");
}

/* The backward operators check the forward shapes again (they can be
 * invoked directly), then take dA/dB shaped like A/B. */
static int dot_bwd_infer_shape(const mxc__op *op, const void *param,
                               mxc__shape *in, int n_in, mxc__shape *out,
                               int n_out) {
  if (in[1].ndim >= 0 && in[2].ndim >= 0) {
    dot_dims d;
    mxc__shape o;
    MXC_FORWARD_IF_ERROR(plan(op, param, &in[1], &in[2], &d, &o));
    if (in[0].ndim >= 0) {
      MXC_FORWARD_IF_ERROR(
          mxc__linalg_assign_shape(op, param, &in[0], &o, "ograd"));
    }
  }
  return mxc__linalg_bwd_infer_shape(op, param, in, n_in, out, n_out);
}

/* ---- compute ---- */

static int dot_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  const dot_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  dot_dims d;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(plan(op, p, &in[0].shape, &in[1].shape, &d, &o));
  int dt = in[0].dtype;
  size_t es = mxc__dtype_size(dt);
  for (int64_t i = 0; i < d.batch; ++i) {
    const char *a = (const char *)in[0].ptr + (size_t)(i * d.m * d.k) * es;
    const char *b = (const char *)in[1].ptr + (size_t)(i * d.k * d.n) * es;
    char *c = (char *)out[0].ptr + (size_t)(i * d.m * d.n) * es;
    mxc__gemm(dt, p->transpose_a, p->transpose_b, d.m, d.n, d.k, a, d.lda, b,
              d.ldb, req[0] == MXC__REQ_ADD, c, d.n);
  }
  return MXC_OK;
}

/* _backward_dot / _backward_batch_dot: inputs (ograd, lhs, rhs), outputs
 * (dlhs, drhs). */
static int dot_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  const dot_param *p = param;
  int ta = p->transpose_a, tb = p->transpose_b;
  dot_dims d;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(plan(op, p, &in[1].shape, &in[2].shape, &d, &o));
  int dt = in[0].dtype;
  size_t es = mxc__dtype_size(dt);
  for (int64_t i = 0; i < d.batch; ++i) {
    size_t oa = (size_t)(i * d.m * d.k) * es, ob = (size_t)(i * d.k * d.n) * es;
    const char *g = (const char *)in[0].ptr + (size_t)(i * d.m * d.n) * es;
    const char *a = (const char *)in[1].ptr + oa;
    const char *b = (const char *)in[2].ptr + ob;
    char *da = (char *)out[0].ptr + oa, *db = (char *)out[1].ptr + ob;
    if (req[0] != MXC__REQ_NULL) {
      int acc = req[0] == MXC__REQ_ADD;
      if (!ta) { /* dA (m,k) = G op(B)^T */
        mxc__gemm(dt, 0, !tb, d.m, d.k, d.n, g, d.n, b, d.ldb, acc, da, d.k);
      } else { /* dA stored (k,m) = op(B) G^T */
        mxc__gemm(dt, tb, 1, d.k, d.m, d.n, b, d.ldb, g, d.n, acc, da, d.m);
      }
    }
    if (req[1] != MXC__REQ_NULL) {
      int acc = req[1] == MXC__REQ_ADD;
      if (!tb) { /* dB (k,n) = op(A)^T G */
        mxc__gemm(dt, !ta, 0, d.k, d.n, d.m, a, d.lda, g, d.n, acc, db, d.n);
      } else { /* dB stored (n,k) = G^T op(A) */
        mxc__gemm(dt, 1, ta, d.n, d.k, d.m, g, d.n, a, d.lda, acc, db, d.k);
      }
    }
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_in_names[] = {"lhs", "rhs", NULL};
static const char *const k_bwd_in_names[] = {"ograd", "lhs", "rhs", NULL};

#define DOT_PARAMS MXC__PARAMS_OF(dot_param, k_dot_params)

/* Half-precision arrays compute in float32 (core/op/half_compute.h). */
MXC__HALF_COMPUTE_FN(dot_forward_any, dot_forward, 0)
MXC__HALF_COMPUTE_FN(dot_backward_any, dot_backward, 0)

static const mxc__op k_ops[4] = {
    {
        .name = "dot",
        .doc = "Matrix product of lhs and rhs: contracts the last axis of "
               "lhs with the first of rhs (transposes swap which); output "
               "lhs.shape[:-1] + rhs.shape[1:], (1,) for two vectors.",
        DOT_PARAMS,
        .n_inputs = 2,
        .input_names = k_in_names,
        .n_outputs = 1,
        .infer_shape = dot_infer_shape,
        .infer_type = mxc__linalg_infer_type,
        .compute = dot_forward_any,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 3,
    },
    {
        .name = "_backward_dot",
        .doc = "Gradient of dot.",
        DOT_PARAMS,
        .n_inputs = 3,
        .input_names = k_bwd_in_names,
        .n_outputs = 2,
        .infer_shape = dot_bwd_infer_shape,
        .infer_type = mxc__linalg_infer_type,
        .compute = dot_backward_any,
        .hidden = 1,
    },
    {
        .name = "batch_dot",
        .doc = "Batched matrix product: (..., M, K) x (..., K, N) -> "
               "(..., M, N), transposes acting on the last two axes.",
        DOT_PARAMS,
        .n_inputs = 2,
        .input_names = k_in_names,
        .n_outputs = 1,
        .infer_shape = dot_infer_shape,
        .infer_type = mxc__linalg_infer_type,
        .compute = dot_forward_any,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 3,
    },
    {
        .name = "_backward_batch_dot",
        .doc = "Gradient of batch_dot.",
        DOT_PARAMS,
        .n_inputs = 3,
        .input_names = k_bwd_in_names,
        .n_outputs = 2,
        .infer_shape = dot_bwd_infer_shape,
        .infer_type = mxc__linalg_infer_type,
        .compute = dot_backward_any,
        .hidden = 1,
    },
};

static int is_batch(const mxc__op *op) {
  return op == &k_ops[2] || op == &k_ops[3];
}

int mxc__linalg_register_dot(mxc__registry *r) {
  for (int i = 0; i < 4; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
