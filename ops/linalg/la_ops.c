/* linalg_* operators with MXNet 1.9's names (and _linalg_* aliases),
 * parameters and gradients: gemm, gemm2, trmm, trsm, potrf, potri, syrk,
 * sumlogdiag, extractdiag, makediag, inverse, det, slogdet. Matrices are
 * the last two axes; all leading axes are a batch and must agree between
 * inputs. Triangular inputs (trmm, trsm, potri) read only the triangle
 * that `lower` names. potrf's gradient is the symmetric one MXNet gives
 * (0.5 L^-T copyLTU(L^T dL) L^-1); the others are the plain matrix
 * derivatives, masked to the triangle where the input is triangular. */
#include <math.h>
#include <string.h>

#include "ops/linalg/la.h"
#include "ops/linalg/linalg.h"
#include "ops/linalg/linalg_params.h"

/* linalg_params.h: the GPU plug-in reads the same struct. */
typedef mxc__la_param la_param;

#define P_TA                                              \
  MXC__PARAM(la_param, transpose_a, MXC__P_BOOL, "false", \
             "Use the transpose of A.")
#define P_TB                                              \
  MXC__PARAM(la_param, transpose_b, MXC__P_BOOL, "false", \
             "Use the transpose of B.")
#define P_T                                             \
  MXC__PARAM(la_param, transpose, MXC__P_BOOL, "false", \
             "Use the transpose of the triangular matrix.")
#define P_ALPHA \
  MXC__PARAM(la_param, alpha, MXC__P_FLOAT, "1.0", "Scale of the product.")
#define P_AXIS                                 \
  MXC__PARAM(la_param, axis, MXC__P_INT, "-2", \
             "Axis of the matrix rows; only -2 (the default).")
#define P_LOWER                                    \
  MXC__PARAM(la_param, lower, MXC__P_BOOL, "true", \
             "Lower (true) or upper triangular matrices.")

static const mxc__param_def k_gemm[] = {
    P_TA, P_TB, P_ALPHA,
    MXC__PARAM(la_param, beta, MXC__P_FLOAT, "1.0", "Scale of C."), P_AXIS};
static const mxc__param_def k_gemm2[] = {P_TA, P_TB, P_ALPHA, P_AXIS};
static const mxc__param_def k_tri[] = {
    P_T,
    MXC__PARAM(la_param, rightside, MXC__P_BOOL, "false",
               "Multiply/solve from the right: B op(A) instead of op(A) B."),
    P_LOWER, P_ALPHA};
static const mxc__param_def k_lower[] = {P_LOWER};
static const mxc__param_def k_syrk[] = {
    MXC__PARAM(la_param, transpose, MXC__P_BOOL, "false",
               "Compute A^T A instead of A A^T."),
    P_ALPHA};
static const mxc__param_def k_diag[] = {
    MXC__PARAM_RANGE(la_param, offset, MXC__P_INT, "0", -1e15, 1e15,
                     "Diagonal: 0 the main one, > 0 above, < 0 below.")};

/* ---- shapes ---- */

/* MXC_ERR_SHAPE unless s is known with at least 2 axes (square when
 * asked): *known says whether to go on. */
static int need_matrix(const mxc__op *op, const mxc__shape *s, const char *what,
                       int square, int *known) {
  *known = s->ndim >= 0;
  if (!*known) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(
      s->ndim < 2 || (square && s->dims[s->ndim - 1] != s->dims[s->ndim - 2]),
      MXC_ERR_SHAPE, "operator '%s': %s must be %s (..., rows, cols); got %s",
      op->name, what, square ? "a batch of square matrices" : "matrices",
      mxc__shape_str(s, b, sizeof b));
  return MXC_OK;
}

/* Checks that b has a's batch axes (all but the last two). */
static int same_batch(const mxc__op *op, const mxc__shape *a,
                      const mxc__shape *b) {
  int ok = a->ndim == b->ndim;
  for (int i = 0; ok && i < a->ndim - 2; ++i) ok = a->dims[i] == b->dims[i];
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_SHAPE,
                      "operator '%s': inputs %s and %s differ in their batch "
                      "axes",
                      op->name, mxc__shape_str(a, b1, sizeof b1),
                      mxc__shape_str(b, b2, sizeof b2));
  return MXC_OK;
}

/* s with its last two extents replaced. */
static mxc__shape with_matrix(const mxc__shape *s, int64_t r, int64_t c) {
  mxc__shape o = *s;
  o.dims[o.ndim - 2] = r;
  o.dims[o.ndim - 1] = c;
  return o;
}

static int64_t rows_of(const mxc__shape *s, int t) {
  return s->dims[s->ndim - (t ? 1 : 2)];
}

static int gemm_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  const la_param *p = param;
  int ka, kb;
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[0], "A", 0, &ka));
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[1], "B", 0, &kb));
  if (!ka || !kb) return MXC_OK;
  MXC_RETURN_ERROR_IF(p->axis != -2 && p->axis != in[0].ndim - 2,
                      MXC_ERR_UNSUPPORTED,
                      "operator '%s': axis = %lld is not supported; only the "
                      "last two axes (axis = -2) hold matrices",
                      op->name, (long long)p->axis);
  MXC_FORWARD_IF_ERROR(same_batch(op, &in[0], &in[1]));
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(
      rows_of(&in[0], !p->transpose_a) != rows_of(&in[1], p->transpose_b),
      MXC_ERR_SHAPE,
      "operator '%s': op(A) and op(B) do not chain: A %s (transpose_a=%d), "
      "B %s (transpose_b=%d)",
      op->name, mxc__shape_str(&in[0], b1, sizeof b1), p->transpose_a,
      mxc__shape_str(&in[1], b2, sizeof b2), p->transpose_b);
  mxc__shape o = with_matrix(&in[0], rows_of(&in[0], p->transpose_a),
                             rows_of(&in[1], !p->transpose_b));
  if (n_in > 2)
    MXC_FORWARD_IF_ERROR(mxc__linalg_assign_shape(op, p, &in[2], &o, "C"));
  return mxc__linalg_assign_shape(op, p, &out[0], &o, "output");
}

/* trmm / trsm: A (..., n, n), B (..., m, k) with n = m (left) or k. */
static int tri_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  const la_param *p = param;
  int ka, kb;
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[0], "A", 1, &ka));
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[1], "B", 0, &kb));
  if (!ka || !kb) return MXC_OK;
  MXC_FORWARD_IF_ERROR(same_batch(op, &in[0], &in[1]));
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(rows_of(&in[0], 0) != rows_of(&in[1], p->rightside),
                      MXC_ERR_SHAPE,
                      "operator '%s': A %s does not fit B %s (rightside=%d)",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1),
                      mxc__shape_str(&in[1], b2, sizeof b2), p->rightside);
  return mxc__linalg_assign_shape(op, p, &out[0], &in[1], "output");
}

/* potrf, potri, inverse: square in, same shape out. */
static int square_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  int k;
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[0], "A", 1, &k));
  return k ? mxc__linalg_assign_shape(op, param, &out[0], &in[0], "output")
           : MXC_OK;
}

static int syrk_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  const la_param *p = param;
  int k;
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[0], "A", 0, &k));
  if (!k) return MXC_OK;
  int64_t n = rows_of(&in[0], p->transpose);
  mxc__shape o = with_matrix(&in[0], n, n);
  return mxc__linalg_assign_shape(op, p, &out[0], &o, "output");
}

/* sumlogdiag, det, slogdet: one value per square matrix; (1,) for one
 * matrix, as MXNet gives. */
static int reduce_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  int k;
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[0], "A", 1, &k));
  if (!k) return MXC_OK;
  mxc__shape o = in[0];
  o.ndim = in[0].ndim == 2 ? 1 : in[0].ndim - 2;
  if (in[0].ndim == 2) o.dims[0] = 1;
  for (int i = 0; i < n_out; ++i)
    MXC_FORWARD_IF_ERROR(
        mxc__linalg_assign_shape(op, param, &out[i], &o, "output"));
  return MXC_OK;
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

static int extractdiag_shape(const mxc__op *op, const void *param,
                             mxc__shape *in, int n_in, mxc__shape *out,
                             int n_out) {
  const la_param *p = param;
  int k;
  MXC_FORWARD_IF_ERROR(need_matrix(op, &in[0], "A", 1, &k));
  if (!k) return MXC_OK;
  int64_t n = rows_of(&in[0], 0);
  MXC_RETURN_ERROR_IF(abs64(p->offset) >= n && n > 0, MXC_ERR_SHAPE,
                      "operator '%s': offset %lld is outside matrices of "
                      "extent %lld",
                      op->name, (long long)p->offset, (long long)n);
  mxc__shape o = in[0];
  o.ndim -= 1;
  o.dims[o.ndim - 1] = n > 0 ? n - abs64(p->offset) : 0;
  return mxc__linalg_assign_shape(op, p, &out[0], &o, "output");
}

static int makediag_shape(const mxc__op *op, const void *param, mxc__shape *in,
                          int n_in, mxc__shape *out, int n_out) {
  const la_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < 1 || in[0].ndim >= MXC_MAX_NDIM ||
                          abs64(p->offset) > (1LL << 40),
                      MXC_ERR_SHAPE,
                      "operator '%s': A %s must be vectors (..., n) with "
                      "room for one more axis, and |offset| at most 2^40",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape o = in[0];
  int64_t n = in[0].dims[in[0].ndim - 1] + abs64(p->offset);
  o.ndim += 1;
  o.dims[o.ndim - 2] = n;
  o.dims[o.ndim - 1] = n;
  return mxc__linalg_assign_shape(op, p, &out[0], &o, "output");
}

/* Backward operators: outputs shaped like inputs first.., in order. */
static int bwd_like(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_out, mxc__shape *out, int first) {
  for (int i = 0; i < n_out; ++i) {
    if (in[first + i].ndim < 0) continue;
    MXC_FORWARD_IF_ERROR(mxc__linalg_assign_shape(op, param, &out[i],
                                                  &in[first + i], "gradient"));
  }
  return MXC_OK;
}

static int bwd_like1(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  return bwd_like(op, param, in, n_out, out, 1);
}

static int bwd_like2(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  return bwd_like(op, param, in, n_out, out, 2);
}

/* ---- kernels: products ---- */

/* Extents of op(A) (m x k) and op(B) (k x n). */
static void gemm_dims(const la_param *p, const mxc__la_mat *a,
                      const mxc__la_mat *b, int64_t *m, int64_t *n,
                      int64_t *k) {
  *m = p->transpose_a ? a->c : a->r;
  *k = p->transpose_a ? a->r : a->c;
  *n = p->transpose_b ? b->r : b->c;
}

static int gemm_fwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int64_t m, n, k;
  gemm_dims(p, &in[0], &in[1], &m, &n, &k);
  double beta = 0;
  if (n_in > 2) {
    memcpy(out[0].p, in[2].p, (size_t)(m * n) * sizeof(double));
    beta = p->beta;
  }
  mxc__la_gemm(&in[0], p->transpose_a, &in[1], p->transpose_b, p->alpha, beta,
               m, n, k, out[0].p);
  return MXC_OK;
}

/* (G, A, B[, C]) -> dA, dB[, dC]. */
static int gemm_bwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  const mxc__la_mat *g = &in[0], *a = &in[1], *b = &in[2];
  int64_t m, n, k;
  gemm_dims(p, a, b, &m, &n, &k);
  int ta = p->transpose_a, tb = p->transpose_b;
  if (!ta)
    mxc__la_gemm(g, 0, b, !tb, p->alpha, 0, m, k, n, out[0].p);
  else
    mxc__la_gemm(b, tb, g, 1, p->alpha, 0, k, m, n, out[0].p);
  if (!tb)
    mxc__la_gemm(a, !ta, g, 0, p->alpha, 0, k, n, m, out[1].p);
  else
    mxc__la_gemm(g, 1, a, ta, p->alpha, 0, n, k, m, out[1].p);
  for (int64_t i = 0; n_out > 2 && i < m * n; ++i)
    out[2].p[i] = p->beta * g->p[i];
  return MXC_OK;
}

static int syrk_fwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int t = p->transpose;
  int64_t n = t ? in[0].c : in[0].r, k = t ? in[0].r : in[0].c;
  mxc__la_gemm(&in[0], t, &in[0], !t, p->alpha, 0, n, n, k, out[0].p);
  return MXC_OK;
}

/* (G, A) -> alpha (G + G^T) A, or alpha A (G + G^T) when transposed. */
static int syrk_bwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  const mxc__la_mat *a = &in[1];
  int64_t n = in[0].r;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      w[i * n + j] = in[0].p[i * n + j] + in[0].p[j * n + i];
  mxc__la_mat s = {w, n, n};
  if (!p->transpose)
    mxc__la_gemm(&s, 0, a, 0, p->alpha, 0, a->r, a->c, n, out[0].p);
  else
    mxc__la_gemm(a, 0, &s, 0, p->alpha, 0, a->r, a->c, n, out[0].p);
  return MXC_OK;
}

/* ---- kernels: triangular ---- */

/* T = the triangle of A, in w (n x n). */
static mxc__la_mat tri_of(const la_param *p, const mxc__la_mat *a, double *w) {
  mxc__la_triangle(a->p, a->r, p->lower, w);
  mxc__la_mat t = {w, a->r, a->r};
  return t;
}

/* out = alpha op(T) B (left) or alpha B op(T) (right), T n x n. */
static void tri_apply(const la_param *p, const mxc__la_mat *t, int tt,
                      const mxc__la_mat *b, double alpha, double *out) {
  int64_t n = t->r;
  if (!p->rightside)
    mxc__la_gemm(t, tt, b, 0, alpha, 0, n, b->c, n, out);
  else
    mxc__la_gemm(b, 0, t, tt, alpha, 0, b->r, n, n, out);
}

/* dA = the triangle of dT, where d op(T) is in w (n x n). */
static void tri_grad(const la_param *p, int64_t n, double *w, double *scratch,
                     double *da) {
  if (p->transpose) {
    mxc__la_transpose(w, n, n, scratch);
    memcpy(w, scratch, (size_t)(n * n) * sizeof *w);
  }
  mxc__la_triangle(w, n, p->lower, da);
}

static int trmm_fwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  mxc__la_mat t = tri_of(p, &in[0], w);
  tri_apply(p, &t, p->transpose, &in[1], p->alpha, out[0].p);
  return MXC_OK;
}

/* (G, A, B) -> dA, dB. */
static int trmm_bwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  const mxc__la_mat *g = &in[0], *b = &in[2];
  int64_t n = in[1].r;
  mxc__la_mat t = tri_of(p, &in[1], w);
  double *dop = w + n * n, *s = dop + n * n;
  if (!p->rightside)
    mxc__la_gemm(g, 0, b, 1, p->alpha, 0, n, n, b->c, dop);
  else
    mxc__la_gemm(b, 1, g, 0, p->alpha, 0, n, n, b->r, dop);
  tri_grad(p, n, dop, s, out[0].p);
  tri_apply(p, &t, !p->transpose, g, p->alpha, out[1].p);
  return MXC_OK;
}

/* inv(T) in w + n * n (scratch after it), T in w. */
static mxc__la_mat tri_inverse(const la_param *p, const mxc__la_mat *a,
                               double *w) {
  int64_t n = a->r;
  mxc__la_mat t = tri_of(p, a, w);
  mxc__la_inverse(t.p, n, w + n * n, w + 2 * n * n);
  mxc__la_mat ti = {w + n * n, n, n};
  return ti;
}

static int trsm_fwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  mxc__la_mat ti = tri_inverse(p, &in[0], w);
  tri_apply(p, &ti, p->transpose, &in[1], p->alpha, out[0].p);
  return MXC_OK;
}

/* (G, A, B, X) -> dA, dB: with op(T)^-1 = op(Ti),
 * left:  dB = alpha op(Ti)^T G,  d op(T) = -op(Ti)^T G X^T;
 * right: dB = alpha G op(Ti)^T,  d op(T) = -X^T G op(Ti)^T. */
static int trsm_bwd(const void *param, const mxc__la_mat *in, int n_in,
                    mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  const mxc__la_mat *g = &in[0], *b = &in[2], *x = &in[3];
  int64_t n = in[1].r;
  mxc__la_mat ti = tri_inverse(p, &in[1], w);
  double *dop = w + 2 * n * n, *h = w + 3 * n * n;
  tri_apply(p, &ti, !p->transpose, g, p->alpha, out[1].p);
  tri_apply(p, &ti, !p->transpose, g, 1.0, h);
  mxc__la_mat hm = {h, g->r, g->c};
  if (!p->rightside)
    mxc__la_gemm(&hm, 0, x, 1, -1, 0, n, n, b->c, dop);
  else
    mxc__la_gemm(x, 1, &hm, 0, -1, 0, n, n, b->r, dop);
  tri_grad(p, n, dop, w, out[0].p);
  return MXC_OK;
}

/* ---- kernels: Cholesky ---- */

/* Lower Cholesky factor of the matrix whose lower triangle is a(i, j) for
 * i >= j (the upper triangle of A read transposed when !lower), into l. */
static int cholesky(const la_param *p, const mxc__la_mat *a, double *l) {
  int64_t n = a->r;
  memset(l, 0, (size_t)(n * n) * sizeof *l);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = j; i < n; ++i) {
      double s = p->lower ? a->p[i * n + j] : a->p[j * n + i];
      for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      if (i == j) {
        MXC_RETURN_ERROR_IF(!(s > 0), MXC_ERR_INVALID_ARGUMENT,
                            "operator 'linalg_potrf': the matrix is not "
                            "positive definite (pivot %lld is %g)",
                            (long long)j, s);
        l[j * n + j] = sqrt(s);
      } else {
        l[i * n + j] = s / l[j * n + j];
      }
    }
  }
  return MXC_OK;
}

static int potrf_fwd(const void *param, const mxc__la_mat *in, int n_in,
                     mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int64_t n = in[0].r;
  MXC_FORWARD_IF_ERROR(cholesky(p, &in[0], w));
  if (p->lower)
    memcpy(out[0].p, w, (size_t)(n * n) * sizeof *w);
  else
    mxc__la_transpose(w, n, n, out[0].p);
  return MXC_OK;
}

/* (G, F) -> dA = 0.5 L^-T copyLTU(L^T dL) L^-1 with L = F, dL = G (lower)
 * or L = F^T, dL = G^T (upper). */
static int potrf_bwd(const void *param, const mxc__la_mat *in, int n_in,
                     mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int64_t n = in[1].r, nn = n * n;
  double *l = w, *dl = w + nn, *li = w + 2 * nn, *s = w + 3 * nn;
  if (p->lower) {
    memcpy(l, in[1].p, (size_t)nn * sizeof *l);
    memcpy(dl, in[0].p, (size_t)nn * sizeof *l);
  } else {
    mxc__la_transpose(in[1].p, n, n, l);
    mxc__la_transpose(in[0].p, n, n, dl);
  }
  mxc__la_mat lm = {l, n, n}, dlm = {dl, n, n}, sm = {s, n, n};
  mxc__la_gemm(&lm, 1, &dlm, 0, 1, 0, n, n, n, s); /* L^T dL */
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) s[i * n + j] = s[j * n + i];
  mxc__la_inverse(l, n, li, dl);
  mxc__la_mat lim = {li, n, n};
  mxc__la_gemm(&lim, 1, &sm, 0, 1, 0, n, n, n, l); /* L^-T S */
  mxc__la_gemm(&lm, 0, &lim, 0, 0.5, 0, n, n, n, out[0].p);
  return MXC_OK;
}

/* Y = (L L^T)^-1 = L^-T L^-1 (lower) or (U^T U)^-1 = U^-1 U^-T. */
static int potri_fwd(const void *param, const mxc__la_mat *in, int n_in,
                     mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int64_t n = in[0].r;
  mxc__la_mat ti = tri_inverse(p, &in[0], w);
  mxc__la_gemm(&ti, p->lower, &ti, !p->lower, 1, 0, n, n, n, out[0].p);
  return MXC_OK;
}

/* (G, F, Y) -> dL = tril(-Y (G + G^T) Y L) or dU = triu(-U Y (G + G^T) Y). */
static int potri_bwd(const void *param, const mxc__la_mat *in, int n_in,
                     mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int64_t n = in[1].r, nn = n * n;
  double *gs = w, *t1 = w + nn, *t2 = w + 2 * nn, *t3 = w + 3 * nn;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      gs[i * n + j] = in[0].p[i * n + j] + in[0].p[j * n + i];
  mxc__la_mat gm = {gs, n, n}, t1m = {t1, n, n}, t2m = {t2, n, n};
  mxc__la_gemm(&in[2], 0, &gm, 0, 1, 0, n, n, n, t1);
  mxc__la_gemm(&t1m, 0, &in[2], 0, 1, 0, n, n, n, t2);
  mxc__la_triangle(in[1].p, n, p->lower, gs);
  if (p->lower)
    mxc__la_gemm(&t2m, 0, &gm, 0, -1, 0, n, n, n, t3);
  else
    mxc__la_gemm(&gm, 0, &t2m, 0, -1, 0, n, n, n, t3);
  mxc__la_triangle(t3, n, p->lower, out[0].p);
  return MXC_OK;
}

/* ---- kernels: diagonals, inverse, determinants ---- */

static int sumlogdiag_fwd(const void *param, const mxc__la_mat *in, int n_in,
                          mxc__la_mat *out, int n_out, double *w) {
  double s = 0;
  for (int64_t i = 0; i < in[0].r; ++i) s += log(in[0].p[i * in[0].c + i]);
  out[0].p[0] = s;
  return MXC_OK;
}

static int sumlogdiag_bwd(const void *param, const mxc__la_mat *in, int n_in,
                          mxc__la_mat *out, int n_out, double *w) {
  int64_t n = in[1].r;
  for (int64_t i = 0; i < n; ++i)
    out[0].p[i * n + i] = in[0].p[0] / in[1].p[i * n + i];
  return MXC_OK;
}

/* extractdiag forward and makediag backward: matrix in[mi] -> vector. */
static int extract_k(const void *param, const mxc__la_mat *in, int n_in,
                     mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int64_t n = in[0].c, k = n - abs64(p->offset);
  for (int64_t i = 0; i < k; ++i)
    out[0].p[i] = in[0].p[mxc__la_diag_at(n, p->offset, i)];
  return MXC_OK;
}

/* makediag forward and extractdiag backward: vector -> matrix. */
static int make_k(const void *param, const mxc__la_mat *in, int n_in,
                  mxc__la_mat *out, int n_out, double *w) {
  const la_param *p = param;
  int64_t k = in[0].c, n = k + abs64(p->offset);
  for (int64_t i = 0; i < k; ++i)
    out[0].p[mxc__la_diag_at(n, p->offset, i)] = in[0].p[i];
  return MXC_OK;
}

static int inverse_fwd(const void *param, const mxc__la_mat *in, int n_in,
                       mxc__la_mat *out, int n_out, double *w) {
  mxc__la_inverse(in[0].p, in[0].r, out[0].p, w);
  return MXC_OK;
}

/* (G, Y) -> -Y^T G Y^T. */
static int inverse_bwd(const void *param, const mxc__la_mat *in, int n_in,
                       mxc__la_mat *out, int n_out, double *w) {
  int64_t n = in[1].r;
  mxc__la_gemm(&in[1], 1, &in[0], 0, 1, 0, n, n, n, w);
  mxc__la_mat t = {w, n, n};
  mxc__la_gemm(&t, 0, &in[1], 1, -1, 0, n, n, n, out[0].p);
  return MXC_OK;
}

static int det_fwd(const void *param, const mxc__la_mat *in, int n_in,
                   mxc__la_mat *out, int n_out, double *w) {
  int64_t n = in[0].r;
  out[0].p[0] = mxc__la_inverse(in[0].p, n, w, w + n * n);
  return MXC_OK;
}

/* dA = scale * A^-T. */
static void scaled_inverse_t(const mxc__la_mat *a, double scale, double *w,
                             double *da) {
  int64_t n = a->r;
  mxc__la_inverse(a->p, n, w, w + n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) da[i * n + j] = scale * w[j * n + i];
}

/* (G, A, det) -> G det A^-T. */
static int det_bwd(const void *param, const mxc__la_mat *in, int n_in,
                   mxc__la_mat *out, int n_out, double *w) {
  scaled_inverse_t(&in[1], in[0].p[0] * in[2].p[0], w, out[0].p);
  return MXC_OK;
}

static int slogdet_fwd(const void *param, const mxc__la_mat *in, int n_in,
                       mxc__la_mat *out, int n_out, double *w) {
  int64_t n = in[0].r;
  double d = mxc__la_inverse(in[0].p, n, w, w + n * n);
  out[0].p[0] = d > 0 ? 1 : (d < 0 ? -1 : 0);
  out[1].p[0] = log(fabs(d));
  return MXC_OK;
}

/* (G_sign, G_logabsdet, A) -> G_logabsdet A^-T. */
static int slogdet_bwd(const void *param, const mxc__la_mat *in, int n_in,
                       mxc__la_mat *out, int n_out, double *w) {
  scaled_inverse_t(&in[2], in[1].p[0], w, out[0].p);
  return MXC_OK;
}

/* ---- descriptors ---- */

#define LA_COMPUTE(fn, batch_of, item_ndim, kernel)                          \
  static int fn(const mxc__op *op, const mxc__opctx *ctx, const void *param, \
                const mxc__blob *in, int n_in, const mxc__blob *out,         \
                int n_out, const mxc__req *req) {                            \
    return mxc__la_run(op, ctx, param, in, n_in, out, n_out, req, batch_of,  \
                       item_ndim, kernel);                                   \
  }

LA_COMPUTE(c_gemm, 0, 2, gemm_fwd)
LA_COMPUTE(c_gemm_bwd, 1, 2, gemm_bwd)
LA_COMPUTE(c_syrk, 0, 2, syrk_fwd)
LA_COMPUTE(c_syrk_bwd, 1, 2, syrk_bwd)
LA_COMPUTE(c_trmm, 0, 2, trmm_fwd)
LA_COMPUTE(c_trmm_bwd, 1, 2, trmm_bwd)
LA_COMPUTE(c_trsm, 0, 2, trsm_fwd)
LA_COMPUTE(c_trsm_bwd, 1, 2, trsm_bwd)
LA_COMPUTE(c_potrf, 0, 2, potrf_fwd)
LA_COMPUTE(c_potrf_bwd, 1, 2, potrf_bwd)
LA_COMPUTE(c_potri, 0, 2, potri_fwd)
LA_COMPUTE(c_potri_bwd, 1, 2, potri_bwd)
LA_COMPUTE(c_sumlogdiag, 0, 2, sumlogdiag_fwd)
LA_COMPUTE(c_sumlogdiag_bwd, 1, 2, sumlogdiag_bwd)
LA_COMPUTE(c_extract, 0, 2, extract_k)
LA_COMPUTE(c_make, 0, 1, make_k)
LA_COMPUTE(c_inverse, 0, 2, inverse_fwd)
LA_COMPUTE(c_inverse_bwd, 1, 2, inverse_bwd)
LA_COMPUTE(c_det, 0, 2, det_fwd)
LA_COMPUTE(c_det_bwd, 1, 2, det_bwd)
LA_COMPUTE(c_slogdet, 0, 2, slogdet_fwd)
LA_COMPUTE(c_slogdet_bwd, 2, 2, slogdet_bwd)

static const char *const k_abc[] = {"A", "B", "C", NULL};
static const char *const k_ab[] = {"A", "B", NULL};
static const char *const k_a[] = {"A", NULL};
static const char *const k_g_abc[] = {"ograd", "A", "B", "C", NULL};
static const char *const k_g_abx[] = {"ograd", "A", "B", "out", NULL};
static const char *const k_g_a[] = {"ograd", "A", NULL};
static const char *const k_g_ay[] = {"ograd", "A", "out", NULL};
static const char *const k_g_y[] = {"ograd", "out", NULL};
static const char *const k_g[] = {"ograd", NULL};
static const char *const k_gg_a[] = {"ograd_sign", "ograd_logabsdet", "A",
                                     NULL};

#define ALIASES(name) \
  static const char *const k_alias_##name[] = {"_linalg_" #name, NULL};
ALIASES(gemm)
ALIASES(gemm2)
ALIASES(trmm)
ALIASES(trsm)
ALIASES(potrf)
ALIASES(potri)
ALIASES(syrk)
ALIASES(sumlogdiag)
ALIASES(extractdiag)
ALIASES(makediag)
ALIASES(inverse)
ALIASES(det)
ALIASES(slogdet)

/* Parameter tables for the descriptor macros below. */
#define PARAMS(t) MXC__PARAMS_OF(la_param, t)
#define NOPARAMS .param_size = sizeof(la_param)

#define LA_FWD(nm, doc_, table, names, nin, nout, shape, fwd, grad, uin, uout) \
  {                                                                            \
    .name = "linalg_" #nm, .aliases = k_alias_##nm, .doc = doc_, table,        \
    .n_inputs = nin, .input_names = names, .n_outputs = nout,                  \
    .infer_shape = shape, .infer_type = mxc__linalg_infer_type_float,          \
    .compute = fwd, .gradient = grad, .backward_uses_inputs = uin,             \
    .backward_uses_outputs = uout, .resources = MXC__RES_TEMP                  \
  }

#define LA_BWD(nm, table, names, nin, nout, shape, bwd)                   \
  {                                                                       \
    MXC__BACKWARD("linalg_" #nm), table,                                  \
        .n_inputs = nin, .input_names = names, .n_outputs = nout,         \
        .infer_shape = shape, .infer_type = mxc__linalg_infer_type_float, \
        .compute = bwd, .resources = MXC__RES_TEMP                        \
  }

static const mxc__op k_ops[] = {
    LA_FWD(gemm, "alpha op(A) op(B) + beta C over batches of matrices.",
           PARAMS(k_gemm), k_abc, 3, 1, gemm_shape, c_gemm, mxc__grad_use_in, 7,
           0),
    LA_BWD(gemm, PARAMS(k_gemm), k_g_abc, 4, 3, bwd_like1, c_gemm_bwd),
    LA_FWD(gemm2, "alpha op(A) op(B) over batches of matrices.",
           PARAMS(k_gemm2), k_ab, 2, 1, gemm_shape, c_gemm, mxc__grad_use_in, 3,
           0),
    LA_BWD(gemm2, PARAMS(k_gemm2), k_g_abc, 3, 2, bwd_like1, c_gemm_bwd),
    LA_FWD(trmm, "alpha op(A) B (or B op(A) with rightside), A triangular.",
           PARAMS(k_tri), k_ab, 2, 1, tri_shape, c_trmm, mxc__grad_use_in, 3,
           0),
    LA_BWD(trmm, PARAMS(k_tri), k_g_abc, 3, 2, bwd_like1, c_trmm_bwd),
    LA_FWD(trsm,
           "Solves op(A) X = alpha B (or X op(A) = alpha B), A "
           "triangular.",
           PARAMS(k_tri), k_ab, 2, 1, tri_shape, c_trsm, mxc__grad_use_in_out,
           3, 1),
    LA_BWD(trsm, PARAMS(k_tri), k_g_abx, 4, 2, bwd_like1, c_trsm_bwd),
    LA_FWD(potrf,
           "Cholesky factor L (A = L L^T) or U (A = U^T U) of "
           "symmetric positive-definite matrices.",
           PARAMS(k_lower), k_a, 1, 1, square_shape, c_potrf, mxc__grad_use_out,
           0, 1),
    LA_BWD(potrf, PARAMS(k_lower), k_g_y, 2, 1, bwd_like1, c_potrf_bwd),
    LA_FWD(potri,
           "Inverse of A = L L^T (or U^T U) from its Cholesky "
           "factor.",
           PARAMS(k_lower), k_a, 1, 1, square_shape, c_potri,
           mxc__grad_use_in_out, 1, 1),
    LA_BWD(potri, PARAMS(k_lower), k_g_ay, 3, 1, bwd_like1, c_potri_bwd),
    LA_FWD(syrk, "alpha A A^T (or alpha A^T A with transpose).", PARAMS(k_syrk),
           k_a, 1, 1, syrk_shape, c_syrk, mxc__grad_use_in, 1, 0),
    LA_BWD(syrk, PARAMS(k_syrk), k_g_a, 2, 1, bwd_like1, c_syrk_bwd),
    LA_FWD(sumlogdiag,
           "Sum of the logarithms of the diagonal of square "
           "matrices: (...) or (1,).",
           NOPARAMS, k_a, 1, 1, reduce_shape, c_sumlogdiag, mxc__grad_use_in, 1,
           0),
    LA_BWD(sumlogdiag, NOPARAMS, k_g_a, 2, 1, bwd_like1, c_sumlogdiag_bwd),
    LA_FWD(extractdiag,
           "Diagonal `offset` of square matrices: (..., n - "
           "|offset|).",
           PARAMS(k_diag), k_a, 1, 1, extractdiag_shape, c_extract,
           mxc__grad_use_none, 0, 0),
    LA_BWD(extractdiag, PARAMS(k_diag), k_g, 1, 1, makediag_shape, c_make),
    LA_FWD(makediag,
           "Square matrices with vectors (..., n) on diagonal "
           "`offset`, zero elsewhere.",
           PARAMS(k_diag), k_a, 1, 1, makediag_shape, c_make,
           mxc__grad_use_none, 0, 0),
    LA_BWD(makediag, PARAMS(k_diag), k_g, 1, 1, extractdiag_shape, c_extract),
    LA_FWD(inverse, "Inverse of square matrices.", NOPARAMS, k_a, 1, 1,
           square_shape, c_inverse, mxc__grad_use_out, 0, 1),
    LA_BWD(inverse, NOPARAMS, k_g_y, 2, 1, bwd_like1, c_inverse_bwd),
    LA_FWD(det, "Determinant of square matrices: (...) or (1,).", NOPARAMS, k_a,
           1, 1, reduce_shape, c_det, mxc__grad_use_in_out, 1, 1),
    LA_BWD(det, NOPARAMS, k_g_ay, 3, 1, bwd_like1, c_det_bwd),
    LA_FWD(slogdet,
           "Sign and log of the absolute determinant of square "
           "matrices.",
           NOPARAMS, k_a, 1, 2, reduce_shape, c_slogdet, mxc__grad_use_in, 1,
           0),
    LA_BWD(slogdet, NOPARAMS, k_gg_a, 3, 1, bwd_like2, c_slogdet_bwd),
};

int mxc__linalg_register_la(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
