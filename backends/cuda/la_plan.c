/* The linalg_* kernels' plans (la_plan.h): the CPU operators' formulas
 * (ops/linalg/la_ops.c, function by function) as steps over float64
 * slots, with the row-major to column-major mapping done once, in
 * gemm_rm and the POTRF step. */
#include "backends/cuda/la_plan.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* A plan under construction: the call, its parameters, and whether a
 * limit was hit (a bug of this file, reported as MXC_ERR_INTERNAL). */
typedef struct pb {
  mxc__la_plan *p;
  const mxc__gpu_call *c;
  const mxc__la_param *q;
  int overflow;
} pb;

int64_t mxc__la_slot_size(const mxc__la_plan *p, int s) {
  return p->batch * p->slot_r[s] * p->slot_c[s];
}

static int slot_new(pb *b, int64_t r, int64_t c) {
  mxc__la_plan *p = b->p;
  if (p->n_slots >= MXC__LA_MAX_SLOTS) {
    b->overflow = 1;
    return 0;
  }
  p->slot_r[p->n_slots] = r;
  p->slot_c[p->n_slots] = c;
  return p->n_slots++;
}

/* A new step; past the table's end the last one is reused (the plan is
 * refused: b->overflow). */
static mxc__la_step *step_new(pb *b, int kind) {
  mxc__la_plan *p = b->p;
  mxc__la_step *s = &p->step[MXC__LA_MAX_STEPS - 1];
  if (p->n_steps >= MXC__LA_MAX_STEPS) {
    b->overflow = 1;
  } else {
    s = &p->step[p->n_steps++];
  }
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->a = s->b = s->c = s->d = MXC__LA_NONE;
  return s;
}

/* Slot of input i / output i. */
static int in_(int i) { return i; }
static int out_(const pb *b, int i) { return b->p->n_in + i; }

/* Element formula `op` from slot a into slot c (c's item extents). */
static mxc__la_step *elem(pb *b, int op, int a, int c) {
  mxc__la_step *s = step_new(b, MXC__LA_S_ELEM);
  s->op = op;
  s->a = a;
  s->c = c;
  s->ra = b->p->slot_r[a];
  s->ca = b->p->slot_c[a];
  s->r = b->p->slot_r[c];
  s->cc = b->p->slot_c[c];
  s->lower = b->q ? b->q->lower : 0;
  s->offset = b->q ? b->q->offset : 0;
  return s;
}

/* A new n x n slot holding formula op of slot a. */
static int elem_new(pb *b, int op, int a, int64_t r, int64_t c) {
  int t = slot_new(b, r, c);
  elem(b, op, a, t);
  return t;
}

/* Row-major C = alpha op(X) op(Y) + beta C over the batch, as cuBLAS's
 * column-major C^T = alpha op(Y)^T op(X)^T: cuBLAS's A is Y and its B is
 * X, its m is C's columns (n) and its n C's rows (m); each leading
 * dimension is the stored row length. A product over an empty axis
 * scales C instead (cuBLAS is not asked about k = 0). */
static void gemm_rm(pb *b, int x, int tx, int y, int ty, int c, double alpha,
                    double beta) {
  const mxc__la_plan *p = b->p;
  int64_t xr = p->slot_r[x], xc = p->slot_c[x];
  int64_t yr = p->slot_r[y], yc = p->slot_c[y];
  int64_t m = tx ? xc : xr, k = tx ? xr : xc, n = ty ? yr : yc;
  if (k == 0) { /* beta 0 never reads C (it may hold anything) */
    elem(b, beta != 0 ? MXC__LA_E_SCALE : MXC__LA_E_ZERO, c, c)->alpha = beta;
    return;
  }
  mxc__la_step *s = step_new(b, MXC__LA_S_GEMM);
  s->trans_a = ty;
  s->trans_b = tx;
  s->m = n;
  s->n = m;
  s->k = k;
  s->a = y;
  s->lda = yc > 1 ? yc : 1;
  s->stride_a = yr * yc;
  s->b = x;
  s->ldb = xc > 1 ? xc : 1;
  s->stride_b = xr * xc;
  s->c = c;
  s->ldc = n > 1 ? n : 1;
  s->stride_c = p->slot_r[c] * p->slot_c[c];
  s->alpha = alpha;
  s->beta = beta;
  b->p->needs_blas = 1;
}

/* A new slot holding the row-major product alpha op(X) op(Y). */
static int gemm_new(pb *b, int x, int tx, int y, int ty, double alpha) {
  const mxc__la_plan *p = b->p;
  int64_t m = tx ? p->slot_c[x] : p->slot_r[x];
  int64_t n = ty ? p->slot_r[y] : p->slot_c[y];
  int t = slot_new(b, m, n);
  gemm_rm(b, x, tx, y, ty, t, alpha, 0);
  return t;
}

/* The inverse of slot a's n x n items in a new slot, as the CPU's
 * mxc__la_inverse: LU with partial pivoting of a copy, then the inverse
 * from it; a singular item (an exactly zero pivot) becomes NaN, where the
 * CPU's Gauss-Jordan divides by zero. The LU's slot in *lu. */
static int inverse_new(pb *b, int a, int *lu) {
  int64_t n = b->p->slot_r[a];
  *lu = elem_new(b, MXC__LA_E_COPY, a, n, n);
  mxc__la_step *s = step_new(b, MXC__LA_S_GETRF);
  s->a = *lu;
  s->n = n;
  int inv = slot_new(b, n, n);
  s = step_new(b, MXC__LA_S_GETRI);
  s->a = *lu;
  s->c = inv;
  s->n = n;
  elem(b, MXC__LA_E_NAN_IF_SINGULAR, inv, inv);
  b->p->lu_n = n;
  b->p->needs_blas = 1;
  return inv;
}

/* The triangle of slot a named by `lower`, in a new slot. */
static int triangle_new(pb *b, int a) {
  int64_t n = b->p->slot_r[a];
  return elem_new(b, MXC__LA_E_TRIANGLE, a, n, n);
}

/* out = alpha op(T) B (left) or alpha B op(T) (right): la_ops.c's
 * tri_apply. */
static void tri_apply(pb *b, int t, int tt, int bs, double alpha, int out) {
  if (!b->q->rightside) {
    gemm_rm(b, t, tt, bs, 0, out, alpha, 0);
  } else {
    gemm_rm(b, bs, 0, t, tt, out, alpha, 0);
  }
}

static int tri_apply_new(pb *b, int t, int tt, int bs, double alpha) {
  int o = slot_new(b, b->p->slot_r[bs], b->p->slot_c[bs]);
  tri_apply(b, t, tt, bs, alpha, o);
  return o;
}

/* dA = the triangle of d op(T) (slot dop, n x n), transposed back first
 * when op transposes: la_ops.c's tri_grad. */
static void tri_grad(pb *b, int dop, int da) {
  int64_t n = b->p->slot_r[dop];
  if (b->q->transpose) dop = elem_new(b, MXC__LA_E_TRANSPOSE, dop, n, n);
  elem(b, MXC__LA_E_TRIANGLE, dop, da);
}

/* ---- the operators (la_ops.c's kernels, same names) ---- */

static void gemm_fwd(pb *b) {
  const mxc__la_param *q = b->q;
  double beta = 0;
  if (b->p->n_in > 2) {
    elem(b, MXC__LA_E_COPY, in_(2), out_(b, 0));
    beta = q->beta;
  }
  gemm_rm(b, in_(0), q->transpose_a, in_(1), q->transpose_b, out_(b, 0),
          q->alpha, beta);
}

/* (G, A, B[, C]) -> dA, dB[, dC]. */
static void gemm_bwd(pb *b) {
  const mxc__la_param *q = b->q;
  int g = in_(0), a = in_(1), bb = in_(2), ta = q->transpose_a,
      tb = q->transpose_b;
  if (!ta) {
    gemm_rm(b, g, 0, bb, !tb, out_(b, 0), q->alpha, 0);
  } else {
    gemm_rm(b, bb, tb, g, 1, out_(b, 0), q->alpha, 0);
  }
  if (!tb) {
    gemm_rm(b, a, !ta, g, 0, out_(b, 1), q->alpha, 0);
  } else {
    gemm_rm(b, g, 1, a, ta, out_(b, 1), q->alpha, 0);
  }
  if (b->p->n_out > 2) elem(b, MXC__LA_E_SCALE, g, out_(b, 2))->alpha = q->beta;
}

static void syrk_fwd(pb *b) {
  int t = b->q->transpose;
  gemm_rm(b, in_(0), t, in_(0), !t, out_(b, 0), b->q->alpha, 0);
}

/* (G, A) -> alpha (G + G^T) A, or alpha A (G + G^T) when transposed. */
static void syrk_bwd(pb *b) {
  int64_t n = b->p->slot_r[in_(0)];
  int s = elem_new(b, MXC__LA_E_SYMM, in_(0), n, n);
  if (!b->q->transpose) {
    gemm_rm(b, s, 0, in_(1), 0, out_(b, 0), b->q->alpha, 0);
  } else {
    gemm_rm(b, in_(1), 0, s, 0, out_(b, 0), b->q->alpha, 0);
  }
}

static void trmm_fwd(pb *b) {
  int t = triangle_new(b, in_(0));
  tri_apply(b, t, b->q->transpose, in_(1), b->q->alpha, out_(b, 0));
}

/* (G, A, B) -> dA, dB. */
static void trmm_bwd(pb *b) {
  const mxc__la_param *q = b->q;
  int g = in_(0), bs = in_(2);
  int t = triangle_new(b, in_(1));
  int dop = !q->rightside ? gemm_new(b, g, 0, bs, 1, q->alpha)
                          : gemm_new(b, bs, 1, g, 0, q->alpha);
  tri_grad(b, dop, out_(b, 0));
  tri_apply(b, t, !q->transpose, g, q->alpha, out_(b, 1));
}

static void trsm_fwd(pb *b) {
  int lu, ti = inverse_new(b, triangle_new(b, in_(0)), &lu);
  tri_apply(b, ti, b->q->transpose, in_(1), b->q->alpha, out_(b, 0));
}

/* (G, A, B, X) -> dA, dB (la_ops.c's trsm_bwd). */
static void trsm_bwd(pb *b) {
  const mxc__la_param *q = b->q;
  int g = in_(0), x = in_(3);
  int lu, ti = inverse_new(b, triangle_new(b, in_(1)), &lu);
  tri_apply(b, ti, !q->transpose, g, q->alpha, out_(b, 1));
  int h = tri_apply_new(b, ti, !q->transpose, g, 1.0);
  int dop = !q->rightside ? gemm_new(b, h, 0, x, 1, -1)
                          : gemm_new(b, x, 1, h, 0, -1);
  tri_grad(b, dop, out_(b, 0));
}

/* cuSOLVER factors the column-major view, the transpose: the row-major
 * lower triangle is its upper one, and the factor U = L^T it writes there
 * reads back row-major as L (lower), or L' = U^T as the upper factor the
 * CPU gives for !lower. Its other triangle keeps the input: masked. */
static void potrf_fwd(pb *b) {
  int a = elem_new(b, MXC__LA_E_COPY, in_(0), b->p->slot_r[in_(0)],
                   b->p->slot_c[in_(0)]);
  mxc__la_step *s = step_new(b, MXC__LA_S_POTRF);
  s->a = a;
  s->n = b->p->slot_r[a];
  s->fill = !b->q->lower;
  b->p->needs_solver = 1;
  elem(b, MXC__LA_E_TRIANGLE, a, out_(b, 0));
}

/* (G, F) -> 0.5 L^-T copyLTU(L^T dL) L^-1 (la_ops.c's potrf_bwd). */
static void potrf_bwd(pb *b) {
  int64_t n = b->p->slot_r[in_(1)];
  int l = in_(1), dl = in_(0), lu;
  if (!b->q->lower) {
    l = elem_new(b, MXC__LA_E_TRANSPOSE, in_(1), n, n);
    dl = elem_new(b, MXC__LA_E_TRANSPOSE, in_(0), n, n);
  }
  int s = elem_new(b, MXC__LA_E_LTU, gemm_new(b, l, 1, dl, 0, 1), n, n);
  int li = inverse_new(b, l, &lu);
  int t = gemm_new(b, li, 1, s, 0, 1);
  gemm_rm(b, t, 0, li, 0, out_(b, 0), 0.5, 0);
}

static void potri_fwd(pb *b) {
  int lu, ti = inverse_new(b, triangle_new(b, in_(0)), &lu);
  int lower = b->q->lower;
  gemm_rm(b, ti, lower, ti, !lower, out_(b, 0), 1, 0);
}

/* (G, F, Y) -> triangle(-Y (G + G^T) Y L) or triangle(-U Y (G + G^T) Y). */
static void potri_bwd(pb *b) {
  int64_t n = b->p->slot_r[in_(1)];
  int y = in_(2);
  int gs = elem_new(b, MXC__LA_E_SYMM, in_(0), n, n);
  int t2 = gemm_new(b, gemm_new(b, y, 0, gs, 0, 1), 0, y, 0, 1);
  int f = triangle_new(b, in_(1));
  int t3 = b->q->lower ? gemm_new(b, t2, 0, f, 0, -1)
                       : gemm_new(b, f, 0, t2, 0, -1);
  elem(b, MXC__LA_E_TRIANGLE, t3, out_(b, 0));
}

static void sumlogdiag_fwd(pb *b) {
  mxc__la_step *s = step_new(b, MXC__LA_S_ITEM);
  s->op = MXC__LA_I_SUMLOGDIAG;
  s->a = in_(0);
  s->c = out_(b, 0);
  s->ra = b->p->slot_r[in_(0)];
  s->ca = b->p->slot_c[in_(0)];
}

static void sumlogdiag_bwd(pb *b) {
  elem(b, MXC__LA_E_LOGDIAG_GRAD, in_(1), out_(b, 0))->b = in_(0);
}

static void extract_k(pb *b) {
  elem(b, MXC__LA_E_EXTRACT, in_(0), out_(b, 0));
}

static void make_k(pb *b) { elem(b, MXC__LA_E_MAKE, in_(0), out_(b, 0)); }

static void inverse_fwd(pb *b) {
  int lu, inv = inverse_new(b, in_(0), &lu);
  elem(b, MXC__LA_E_COPY, inv, out_(b, 0));
}

/* (G, Y) -> -Y^T G Y^T. */
static void inverse_bwd(pb *b) {
  int t = gemm_new(b, in_(1), 1, in_(0), 0, 1);
  gemm_rm(b, t, 0, in_(1), 1, out_(b, 0), -1, 0);
}

/* The determinant of slot a's items into slot c (1 x 1 items). */
static void det_into(pb *b, int a, int c) {
  int64_t n = b->p->slot_r[a];
  int lu = elem_new(b, MXC__LA_E_COPY, a, n, n);
  mxc__la_step *s = step_new(b, MXC__LA_S_GETRF);
  s->a = lu;
  s->n = n;
  b->p->lu_n = n;
  b->p->needs_blas = 1;
  s = step_new(b, MXC__LA_S_ITEM);
  s->op = MXC__LA_I_DET_LU;
  s->a = lu;
  s->c = c;
  s->ra = s->ca = n;
}

static void det_fwd(pb *b) { det_into(b, in_(0), out_(b, 0)); }

/* dA = scale * A^-T, scale = item values of slots sb (and sd). */
static void scaled_inverse_t(pb *b, int a, int sb, int sd) {
  int lu, inv = inverse_new(b, a, &lu);
  mxc__la_step *s = elem(b, MXC__LA_E_SCALED_T, inv, out_(b, 0));
  s->alpha = 1;
  s->b = sb;
  s->d = sd;
}

static void det_bwd(pb *b) { scaled_inverse_t(b, in_(1), in_(0), in_(2)); }

static void slogdet_fwd(pb *b) {
  int det = slot_new(b, 1, 1);
  det_into(b, in_(0), det);
  mxc__la_step *s = step_new(b, MXC__LA_S_ITEM);
  s->op = MXC__LA_I_SLOGDET;
  s->a = det;
  s->c = out_(b, 0);
  s->d = out_(b, 1);
  s->ra = s->ca = 1;
}

static void slogdet_bwd(pb *b) {
  scaled_inverse_t(b, in_(2), in_(1), MXC__LA_NONE);
}

/* ---- shapes ---- */

typedef void (*plan_fn)(pb *b);

/* Per operator: its plan, the input its batch comes from and the axes of
 * one item there (la_ops.c's LA_COMPUTE lines), its arrays' counts. */
typedef struct op_info {
  plan_fn fn;
  int batch_of, item_ndim, min_in, max_in, min_out, max_out;
} op_info;

static const op_info k_ops[MXC__LA_N_OPS] = {
    [MXC__LA_GEMM_OP] = {gemm_fwd, 0, 2, 3, 3, 1, 1},
    [MXC__LA_GEMM_BWD] = {gemm_bwd, 1, 2, 4, 4, 3, 3},
    [MXC__LA_GEMM2] = {gemm_fwd, 0, 2, 2, 2, 1, 1},
    [MXC__LA_GEMM2_BWD] = {gemm_bwd, 1, 2, 3, 3, 2, 2},
    [MXC__LA_SYRK] = {syrk_fwd, 0, 2, 1, 1, 1, 1},
    [MXC__LA_SYRK_BWD] = {syrk_bwd, 1, 2, 2, 2, 1, 1},
    [MXC__LA_TRMM] = {trmm_fwd, 0, 2, 2, 2, 1, 1},
    [MXC__LA_TRMM_BWD] = {trmm_bwd, 1, 2, 3, 3, 2, 2},
    [MXC__LA_TRSM] = {trsm_fwd, 0, 2, 2, 2, 1, 1},
    [MXC__LA_TRSM_BWD] = {trsm_bwd, 1, 2, 4, 4, 2, 2},
    [MXC__LA_POTRF_OP] = {potrf_fwd, 0, 2, 1, 1, 1, 1},
    [MXC__LA_POTRF_BWD] = {potrf_bwd, 1, 2, 2, 2, 1, 1},
    [MXC__LA_POTRI] = {potri_fwd, 0, 2, 1, 1, 1, 1},
    [MXC__LA_POTRI_BWD] = {potri_bwd, 1, 2, 3, 3, 1, 1},
    [MXC__LA_SUMLOGDIAG] = {sumlogdiag_fwd, 0, 2, 1, 1, 1, 1},
    [MXC__LA_SUMLOGDIAG_BWD] = {sumlogdiag_bwd, 1, 2, 2, 2, 1, 1},
    [MXC__LA_EXTRACTDIAG] = {extract_k, 0, 2, 1, 1, 1, 1},
    [MXC__LA_EXTRACTDIAG_BWD] = {make_k, 0, 1, 1, 1, 1, 1},
    [MXC__LA_MAKEDIAG] = {make_k, 0, 1, 1, 1, 1, 1},
    [MXC__LA_MAKEDIAG_BWD] = {extract_k, 0, 2, 1, 1, 1, 1},
    [MXC__LA_INVERSE] = {inverse_fwd, 0, 2, 1, 1, 1, 1},
    [MXC__LA_INVERSE_BWD] = {inverse_bwd, 1, 2, 2, 2, 1, 1},
    [MXC__LA_DET] = {det_fwd, 0, 2, 1, 1, 1, 1},
    [MXC__LA_DET_BWD] = {det_bwd, 1, 2, 3, 3, 1, 1},
    [MXC__LA_SLOGDET] = {slogdet_fwd, 0, 2, 1, 1, 2, 2},
    [MXC__LA_SLOGDET_BWD] = {slogdet_bwd, 2, 2, 3, 3, 1, 1},
};

/* Item extents of array x with `batch` items: its last two axes when an
 * item is that matrix, else a row of size / batch (vectors, scalars). */
static void item_of(const mxc__gpu_array *x, int64_t batch, int64_t *r,
                    int64_t *c) {
  int64_t per = batch ? x->size / batch : 0;
  *r = 1;
  *c = per;
  if (x->ndim >= 2 && x->dims[x->ndim - 1] * x->dims[x->ndim - 2] == per) {
    *r = x->dims[x->ndim - 2];
    *c = x->dims[x->ndim - 1];
  }
}

static int check_arrays(const op_info *o, const mxc__gpu_call *c, char *why,
                        size_t len) {
  if (c->n_in < o->min_in || c->n_in > o->max_in || c->n_out < o->min_out ||
      c->n_out > o->max_out) {
    snprintf(why, len, "linalg kernel: %d inputs and %d outputs; expected "
             "%d and %d", c->n_in, c->n_out, o->max_in, o->max_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int dt = c->in[0].dtype;
  for (int i = 0; i < c->n_in + c->n_out; ++i) {
    const mxc__gpu_array *x = i < c->n_in ? &c->in[i] : &c->out[i - c->n_in];
    if (x->dtype != dt ||
        (dt != MXC_DTYPE_FLOAT32 && dt != MXC_DTYPE_FLOAT64)) {
      snprintf(why, len, "linalg kernel: array %d has dtype %d; every array "
               "must be float32 or float64, all the same", i, x->dtype);
      return MXC_ERR_DTYPE;
    }
  }
  return MXC_OK;
}

static int64_t batch_of(const op_info *o, const mxc__gpu_call *c) {
  const mxc__gpu_array *x = &c->in[o->batch_of];
  int64_t b = 1;
  for (int i = 0; i < x->ndim - o->item_ndim; ++i) b *= x->dims[i];
  return b;
}

/* Every array holds `batch` whole items, every extent fits an int. */
static int set_slots(mxc__la_plan *p, const mxc__gpu_call *c, char *why,
                     size_t len) {
  for (int i = 0; i < c->n_in + c->n_out; ++i) {
    const mxc__gpu_array *x = i < c->n_in ? &c->in[i] : &c->out[i - c->n_in];
    item_of(x, p->batch, &p->slot_r[i], &p->slot_c[i]);
    if (p->batch * p->slot_r[i] * p->slot_c[i] != x->size) {
      snprintf(why, len, "linalg kernel: array %d of %lld elements is not "
               "%lld whole matrices", i, (long long)x->size,
               (long long)p->batch);
      return MXC_ERR_SHAPE;
    }
    if (p->slot_r[i] * p->slot_c[i] > INT_MAX || p->batch > INT_MAX) {
      snprintf(why, len, "linalg kernel: %lld matrices of %lld x %lld are "
               "beyond cuBLAS's 32-bit sizes", (long long)p->batch,
               (long long)p->slot_r[i], (long long)p->slot_c[i]);
      return MXC_ERR_UNSUPPORTED;
    }
  }
  p->n_slots = c->n_in + c->n_out;
  return MXC_OK;
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* An element step reads inside slot a's items (and b's, d's scalars). */
static int elem_fits(const mxc__la_plan *p, const mxc__la_step *s) {
  int64_t ra = s->ra, ca = s->ca, r = s->r, c = s->cc;
  int same = ra == r && ca == c, square = r == c && same;
  if (ra != p->slot_r[s->a] || ca != p->slot_c[s->a] ||
      r != p->slot_r[s->c] || c != p->slot_c[s->c]) {
    return 0;
  }
  if ((s->b != MXC__LA_NONE && p->slot_r[s->b] * p->slot_c[s->b] != 1) ||
      (s->d != MXC__LA_NONE && p->slot_r[s->d] * p->slot_c[s->d] != 1)) {
    return 0;
  }
  switch (s->op) {
    case MXC__LA_E_TRANSPOSE:
    case MXC__LA_E_SCALED_T: return ra == c && ca == r;
    case MXC__LA_E_SYMM:
    case MXC__LA_E_LTU:
    case MXC__LA_E_TRIANGLE:
    case MXC__LA_E_LOGDIAG_GRAD: return square;
    case MXC__LA_E_EXTRACT:
      return ra == ca && r == 1 && c == (ra ? ra - abs64(s->offset) : 0);
    case MXC__LA_E_MAKE:
      return ra == 1 && r == c && r == ca + abs64(s->offset);
    default: return same;
  }
}

static int item_fits(const mxc__la_plan *p, const mxc__la_step *s) {
  int one_c = p->slot_r[s->c] * p->slot_c[s->c] == 1;
  int one_d = s->d == MXC__LA_NONE || p->slot_r[s->d] * p->slot_c[s->d] == 1;
  return one_c && one_d && s->ra == p->slot_r[s->a] &&
         s->ca == p->slot_c[s->a] && s->ra == s->ca;
}

/* The extents the steps assume must be the arrays' (a shape the CPU
 * operator refuses never reaches a library call or reads out of an
 * item). */
static int check_steps(const mxc__la_plan *p, char *why, size_t len) {
  for (int i = 0; i < p->n_steps; ++i) {
    const mxc__la_step *s = &p->step[i];
    int bad = 0;
    if (s->kind == MXC__LA_S_GEMM) {
      bad = p->slot_r[s->c] * p->slot_c[s->c] != s->m * s->n ||
            p->slot_r[s->a] * p->slot_c[s->a] != s->m * s->k ||
            p->slot_r[s->b] * p->slot_c[s->b] != s->n * s->k;
    } else if (s->kind == MXC__LA_S_ELEM) {
      bad = !elem_fits(p, s);
    } else if (s->kind == MXC__LA_S_ITEM) {
      bad = !item_fits(p, s);
    } else {
      bad = p->slot_r[s->a] != s->n || p->slot_c[s->a] != s->n;
    }
    if (bad) {
      snprintf(why, len, "linalg kernel: step %d does not fit its arrays' "
               "shapes (the operator's shapes are inconsistent)", i);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

int mxc__la_plan_call(int op, const mxc__gpu_call *c, mxc__la_plan *p,
                      char *why, size_t why_len) {
  memset(p, 0, sizeof *p);
  if (op < 0 || op >= MXC__LA_N_OPS) return MXC_ERR_INVALID_ARGUMENT;
  const op_info *o = &k_ops[op];
  int rc = check_arrays(o, c, why, why_len);
  if (rc != MXC_OK) return rc;
  p->dtype = c->in[0].dtype;
  p->n_in = c->n_in;
  p->n_out = c->n_out;
  p->batch = batch_of(o, c);
  if (p->batch == 0) return MXC_OK; /* the CPU computes nothing either */
  rc = set_slots(p, c, why, why_len);
  if (rc != MXC_OK) return rc;
  static const mxc__la_param k_none;
  pb b = {p, c, c->param ? (const mxc__la_param *)c->param : &k_none, 0};
  o->fn(&b);
  if (b.overflow) {
    snprintf(why, why_len, "linalg kernel: the plan outgrew its tables");
    return MXC_ERR_INTERNAL;
  }
  return check_steps(p, why, why_len);
}

int mxc__la_potrf_check(const int *info, int64_t batch, char *why,
                        size_t why_len) {
  for (int64_t i = 0; i < batch; ++i) {
    if (info[i] != 0) {
      snprintf(why, why_len,
               "operator 'linalg_potrf': the matrix is not positive definite "
               "(pivot %d of matrix %lld of the batch is not positive)",
               info[i] - 1, (long long)i);
      return MXC_ERR_INVALID_ARGUMENT;
    }
  }
  return MXC_OK;
}

int mxc__la_supports(const int *dtypes, int n_in, int n_out) {
  int dt = -1;
  for (int i = 0; i < n_in + n_out; ++i) {
    if (dtypes[i] < 0) continue;
    if (dtypes[i] != MXC_DTYPE_FLOAT32 && dtypes[i] != MXC_DTYPE_FLOAT64) {
      return 0;
    }
    if (dt >= 0 && dtypes[i] != dt) return 0;
    dt = dtypes[i];
  }
  return 1;
}
