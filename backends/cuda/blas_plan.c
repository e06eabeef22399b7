#include "backends/cuda/blas_plan.h"

#include "backends/cuda/half_types.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One row-major product C(m, n) = op(A) op(B) of `batch` matrices each,
 * as ops/linalg writes it for mxc__gemm: A, B and C are the call's
 * arrays (inputs a and b, output c), C compact (ldc = n). */
typedef struct rm_gemm {
  int ta, tb;
  int64_t m, n, k;
  int a, b, c;
  int64_t lda, ldb;
  int64_t sa, sb, sc, batch;
  int add;
} rm_gemm;

/* A product as matrices, as ops/linalg/dot.c's dot_dims. */
typedef struct dot_dims {
  int64_t batch, m, n, k, lda, ldb;
} dot_dims;

static int64_t prod(const int64_t *d, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= d[i];
  return p;
}

static mxc__blas_step *push(mxc__blas_plan *p) {
  mxc__blas_step *s = &p->step[p->n++];
  memset(s, 0, sizeof *s);
  return s;
}

static void add_zero(mxc__blas_plan *p, int c) {
  mxc__blas_step *s = push(p);
  s->kind = MXC__BLAS_ZERO;
  s->c = c;
}

/* C^T = op(B)^T op(A)^T in column-major terms (blas_plan.h). A product
 * over an empty axis writes zeros (cuBLAS would refuse lda = 0) or, in
 * add mode, leaves C alone. */
static void add_gemm(mxc__blas_plan *p, const rm_gemm *g) {
  if (g->m == 0 || g->n == 0 || g->batch == 0) return;
  if (g->k == 0) {
    if (!g->add) add_zero(p, g->c);
    return;
  }
  mxc__blas_step *s = push(p);
  s->kind = MXC__BLAS_GEMM;
  s->trans_a = g->tb, s->trans_b = g->ta;
  s->m = g->n, s->n = g->m, s->k = g->k;
  s->a = g->b, s->lda = g->ldb, s->stride_a = g->sb;
  s->b = g->a, s->ldb = g->lda, s->stride_b = g->sa;
  s->c = g->c, s->ldc = g->n, s->stride_c = g->sc;
  s->batch = g->batch;
  s->beta = g->add ? 1.f : 0.f;
}

static int shape_error(char *why, size_t why_len, const char *what) {
  snprintf(why, why_len, "%s", what);
  return MXC_ERR_SHAPE;
}

/* dot: each input viewed as one matrix (ops/linalg/dot.c's dot_plan). */
static int dot_dims_of(const mxc__dot_param *p, const mxc__gpu_array *a,
                       const mxc__gpu_array *b, dot_dims *d) {
  int na = a->ndim, nb = b->ndim, ta = p->transpose_a, tb = p->transpose_b;
  if (na < 1 || nb < 1) return -1;
  d->m = na == 1 ? 1 : ta ? prod(a->dims + 1, na - 1) : prod(a->dims, na - 1);
  d->n = nb == 1 ? 1 : tb ? prod(b->dims, nb - 1) : prod(b->dims + 1, nb - 1);
  d->k = ta ? a->dims[0] : a->dims[na - 1];
  d->batch = 1;
  d->lda = ta ? d->m : d->k;
  d->ldb = tb ? d->k : d->n;
  return d->k == (tb ? b->dims[nb - 1] : b->dims[0]) ? 0 : -1;
}

/* batch_dot: stacks (..., r0, r1) and (..., s0, s1). */
static int batch_dims_of(const mxc__dot_param *p, const mxc__gpu_array *a,
                         const mxc__gpu_array *b, dot_dims *d) {
  int nd = a->ndim, ta = p->transpose_a, tb = p->transpose_b;
  if (nd < 3 || b->ndim != nd) return -1;
  int64_t r0 = a->dims[nd - 2], r1 = a->dims[nd - 1];
  int64_t s0 = b->dims[nd - 2], s1 = b->dims[nd - 1];
  d->batch = prod(a->dims, nd - 2);
  d->m = ta ? r1 : r0;
  d->n = tb ? s0 : s1;
  d->k = ta ? r0 : r1;
  d->lda = r1;
  d->ldb = s1;
  return d->k == (tb ? s1 : s0) && prod(b->dims, nd - 2) == d->batch ? 0 : -1;
}

static int add_mode(const mxc__gpu_call *c, int i) {
  return c->req[i] == MXC__GPU_REQ_ADD;
}

static int is_half(int dt) {
  return dt == MXC_DTYPE_FLOAT16 || dt == MXC_DTYPE_BFLOAT16;
}

static void plan_dot_fwd(const mxc__gpu_call *c, const mxc__dot_param *p,
                         const dot_dims *d, mxc__blas_plan *pl) {
  if (c->req[0] == MXC__GPU_REQ_NULL) return;
  rm_gemm g = {p->transpose_a,
               p->transpose_b,
               d->m,
               d->n,
               d->k,
               0,
               1,
               0,
               d->lda,
               d->ldb,
               d->m * d->k,
               d->k * d->n,
               d->m * d->n,
               d->batch,
               add_mode(c, 0)};
  add_gemm(pl, &g);
}

/* Inputs (G, A, B), outputs (dA, dB), as dot.c's dot_backward:
 * dA = G op(B)^T (stored transposed when transpose_a), dB = op(A)^T G
 * (stored transposed when transpose_b). */
static void plan_dot_bwd(const mxc__gpu_call *c, const mxc__dot_param *p,
                         const dot_dims *d, mxc__blas_plan *pl) {
  int ta = p->transpose_a, tb = p->transpose_b;
  int64_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n;
  if (c->req[0] != MXC__GPU_REQ_NULL) {
    rm_gemm da = {0,  !tb, d->m, d->k,     d->n,          0, 2, 0, d->n, d->ldb,
                  mn, kn,  mk,   d->batch, add_mode(c, 0)};
    rm_gemm dat = {tb, 1,  d->k, d->m,     d->n,          2, 0, 0, d->ldb, d->n,
                   kn, mn, mk,   d->batch, add_mode(c, 0)};
    add_gemm(pl, ta ? &dat : &da);
  }
  if (c->req[1] != MXC__GPU_REQ_NULL) {
    rm_gemm db = {!ta, 0,  d->k, d->n,     d->m,          1, 0, 1, d->lda, d->n,
                  mk,  mn, kn,   d->batch, add_mode(c, 1)};
    rm_gemm dbt = {1,  ta, d->n, d->k,     d->m,          0, 1, 1, d->n, d->lda,
                   mn, mk, kn,   d->batch, add_mode(c, 1)};
    add_gemm(pl, tb ? &dbt : &db);
  }
}

/* data as a (rows, feat) matrix (fully_connected.c's fc_view). */
static void fc_view(const mxc__fc_param *p, const mxc__gpu_array *x,
                    int64_t *rows, int64_t *feat) {
  int split = p->flatten ? 1 : x->ndim - 1;
  if (split > x->ndim) split = x->ndim;
  *rows = prod(x->dims, split);
  *feat = prod(x->dims + split, x->ndim - split);
}

/* float32: out = X W^T (+ out), then + bias as the rank-1 product
 * ones(rows) b^T added to it (one rounding per element, as the CPU's bias
 * loop). Half types: the bias first (1 * b is exact, so writing it
 * rounds nothing), then the product added to it, so that a written
 * output is rounded to half once, from float32 as on the CPU; in add mode
 * the bias is added to the old value first, which rounds to half twice
 * (within one half ulp of the CPU's single rounding: blas_cases.h). */
static void plan_fc_fwd(const mxc__gpu_call *c, const mxc__fc_param *p,
                        mxc__blas_plan *pl) {
  if (c->req[0] == MXC__GPU_REQ_NULL) return;
  int64_t rows = 0, feat = 0, h = p->num_hidden;
  fc_view(p, &c->in[0], &rows, &feat);
  int bias_first = c->n_in > 2 && is_half(pl->dtype);
  rm_gemm g = {0, 1, rows, h, feat,          0, 1, 0, feat, feat,
               0, 0, 0,    1, add_mode(c, 0) || bias_first};
  rm_gemm bias = {0, 0, rows, h, 1, MXC__BLAS_ONES, 2, 0, 1, h,
                  0, 0, 0,    1, !bias_first || add_mode(c, 0)};
  if (bias_first) add_gemm(pl, &bias);
  add_gemm(pl, &g);
  if (c->n_in > 2) {
    if (!bias_first) add_gemm(pl, &bias);
    pl->ones = rows;
  }
}

/* db = column sums of G (rows, h): the column-major G^T (h, rows) times
 * ones(rows). */
static void plan_fc_dbias(const mxc__gpu_call *c, int64_t rows, int64_t h,
                          mxc__blas_plan *pl) {
  if (h == 0 || (rows == 0 && add_mode(c, 2))) return;
  if (rows == 0) {
    add_zero(pl, 2);
    return;
  }
  pl->ones = rows;
  if (is_half(pl->dtype)) { /* row-major (1, h) = ones(1, rows) G */
    rm_gemm g = {0, 0, 1, h, rows, MXC__BLAS_ONES, 0, 2, rows, h,
                 0, 0, 0, 1, add_mode(c, 2)};
    add_gemm(pl, &g);
    return;
  }
  mxc__blas_step *s = push(pl);
  s->c = 2;
  s->kind = MXC__BLAS_GEMV;
  s->m = h, s->n = rows;
  s->a = 0, s->lda = h;
  s->b = MXC__BLAS_ONES;
  s->beta = add_mode(c, 2) ? 1.f : 0.f;
}

/* Inputs (G, X, W[, b]), outputs (dX, dW[, db]): dX = G W, dW = G^T X. */
static void plan_fc_bwd(const mxc__gpu_call *c, const mxc__fc_param *p,
                        mxc__blas_plan *pl) {
  int64_t rows = 0, feat = 0, h = p->num_hidden;
  fc_view(p, &c->in[1], &rows, &feat);
  if (c->req[0] != MXC__GPU_REQ_NULL) {
    rm_gemm dx = {0, 0, rows, feat,          h, 0, 2, 0, h, feat, 0,
                  0, 0, 1,    add_mode(c, 0)};
    add_gemm(pl, &dx);
  }
  if (c->req[1] != MXC__GPU_REQ_NULL) {
    rm_gemm dw = {1, 0, h, feat, rows,          0, 1, 1, h, feat,
                  0, 0, 0, 1,    add_mode(c, 1)};
    add_gemm(pl, &dw);
  }
  if (c->n_out > 2 && c->req[2] != MXC__GPU_REQ_NULL) {
    plan_fc_dbias(c, rows, h, pl);
  }
}

static int plan_dot_family(int op, const mxc__gpu_call *c, mxc__blas_plan *pl,
                           char *why, size_t why_len) {
  const mxc__dot_param *p = c->param;
  int bwd = op == MXC__BLAS_DOT_BWD || op == MXC__BLAS_BATCH_DOT_BWD;
  int batch = op == MXC__BLAS_BATCH_DOT || op == MXC__BLAS_BATCH_DOT_BWD;
  if (c->n_in != 2 + bwd || c->n_out != 1 + bwd) {
    return shape_error(why, why_len, "dot: wrong number of arrays");
  }
  const mxc__gpu_array *a = &c->in[bwd], *b = &c->in[bwd + 1];
  dot_dims d;
  if ((batch ? batch_dims_of(p, a, b, &d) : dot_dims_of(p, a, b, &d)) != 0) {
    return shape_error(why, why_len, "dot: the inputs' shapes do not match");
  }
  if (bwd) {
    plan_dot_bwd(c, p, &d, pl);
  } else {
    plan_dot_fwd(c, p, &d, pl);
  }
  return MXC_OK;
}

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

static int step_fits(const mxc__blas_step *s) {
  return fits_int(s->m) && fits_int(s->n) && fits_int(s->k) &&
         fits_int(s->lda) && fits_int(s->ldb) && fits_int(s->ldc) &&
         fits_int(s->batch);
}

/* cuBLAS's sizes are int (the _64 entry points would lift this). */
static int check_range(const mxc__blas_plan *p, char *why, size_t why_len) {
  for (int i = 0; i <= p->n; ++i) {
    if (i == p->n ? !fits_int(p->ones) : !step_fits(&p->step[i])) {
      snprintf(why, why_len,
               "a matrix dimension exceeds %d, the largest cuBLAS's 32-bit "
               "interface takes",
               INT_MAX);
      return MXC_ERR_UNSUPPORTED;
    }
  }
  return MXC_OK;
}

static int64_t extent(int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
}

static int64_t elements(const mxc__gpu_call *c, const mxc__blas_plan *p,
                        int i) {
  return i == MXC__BLAS_ONES ? p->ones : c->in[i].size;
}

/* 1 when every matrix a step reads or writes lies inside its array. */
static int step_inside(const mxc__gpu_call *c, const mxc__blas_plan *p,
                       const mxc__blas_step *s) {
  int64_t last = s->batch - 1, out = c->out[s->c].size;
  if (s->kind == MXC__BLAS_ZERO) return 1;
  if (s->kind == MXC__BLAS_GEMV) {
    return extent(s->m, s->n, s->lda) <= elements(c, p, s->a) &&
           s->n <= elements(c, p, s->b) && s->m <= out;
  }
  int64_t ra = s->trans_a ? s->k : s->m, ca = s->trans_a ? s->m : s->k;
  int64_t rb = s->trans_b ? s->n : s->k, cb = s->trans_b ? s->k : s->n;
  return s->stride_a * last + extent(ra, ca, s->lda) <= elements(c, p, s->a) &&
         s->stride_b * last + extent(rb, cb, s->ldb) <= elements(c, p, s->b) &&
         s->stride_c * last + extent(s->m, s->n, s->ldc) <= out;
}

/* A last guard for device memory: shapes libmxc accepted but this plan
 * reads differently would show here, not as a stray write on the GPU. */
static int check_inside(const mxc__gpu_call *c, const mxc__blas_plan *p,
                        char *why, size_t why_len) {
  for (int i = 0; i < p->n; ++i) {
    if (!step_inside(c, p, &p->step[i])) {
      snprintf(why, why_len,
               "cuBLAS step %d would reach past an array of the call (the "
               "plug-in and libmxc disagree on the operator's shapes)",
               i);
      return MXC_ERR_INTERNAL;
    }
  }
  return MXC_OK;
}

/* The call's one dtype into p->dtype. */
static int plan_dtype(const mxc__gpu_call *c, mxc__blas_plan *p, char *why,
                      size_t why_len) {
  int dt[2 * MXC__BLAS_MAX_STEPS + 8];
  int n = c->n_in + c->n_out;
  if (n < 1 || n > (int)(sizeof dt / sizeof dt[0])) {
    return shape_error(why, why_len, "cuBLAS kernel: wrong number of arrays");
  }
  for (int i = 0; i < c->n_in; ++i) dt[i] = c->in[i].dtype;
  for (int i = 0; i < c->n_out; ++i) dt[c->n_in + i] = c->out[i].dtype;
  if (!mxc__half_supports_same(dt, c->n_in, c->n_out) ||
      mxc__half_slot(dt[0]) < 0) {
    snprintf(why, why_len,
             "the cuBLAS kernels take arrays of one dtype, float32, float16 "
             "or bfloat16 (input 0 is dtype %d)",
             dt[0]);
    return MXC_ERR_DTYPE;
  }
  p->dtype = dt[0];
  return MXC_OK;
}

int mxc__blas_plan_call(int op, const mxc__gpu_call *c, mxc__blas_plan *p,
                        char *why, size_t why_len) {
  memset(p, 0, sizeof *p);
  int dt_rc = plan_dtype(c, p, why, why_len);
  if (dt_rc != MXC_OK) return dt_rc;
  if (op == MXC__BLAS_FC || op == MXC__BLAS_FC_BWD) {
    int bwd = op == MXC__BLAS_FC_BWD;
    if (c->n_in < 2 + bwd || c->n_out < 1 + bwd || c->in[bwd].ndim < 1) {
      return shape_error(why, why_len, "FullyConnected: missing inputs");
    }
    if (bwd) {
      plan_fc_bwd(c, c->param, p);
    } else {
      plan_fc_fwd(c, c->param, p);
    }
  } else {
    int rc = plan_dot_family(op, c, p, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  int rc = check_range(p, why, why_len);
  return rc == MXC_OK ? check_inside(c, p, why, why_len) : rc;
}
