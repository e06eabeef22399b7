/* Sparse kernels of elemwise_add, elemwise_sub and elemwise_mul (the
 * binary family's "add", "sub", "mul"):
 *   csr op csr -> csr            union of entries (add, sub), intersection
 *                                (mul)
 *   rsp op rsp -> rsp            union of rows (add, sub), intersection (mul)
 *   rsp +- dense, dense +- rsp -> dense
 *   rsp * dense, dense * rsp   -> rsp (the rsp operand's rows; as in MXNet,
 *                                the unstored rows are 0 even where the
 *                                dense operand holds inf or NaN)
 * Everything else is MXC_ERR_STYPE (invoke's dense fallback).
 *
 * Each output element is computed as f(x, y) with the missing side 0, so
 * add/sub give bit-for-bit the dense operator's result (0 + y, x - 0, ...).
 * Entries present on both sides are stored even when the result is 0
 * (x - x): the structure depends on the operands' structures only. Values
 * are float32/float64/int32/int64 in typed loops, other dtypes through
 * double one element at a time. Loops over rows are split over the kernel
 * thread pool for large operands. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/op/common.h"
#include "core/op/parallel.h"
#include "ops/sparse/elemwise.h"

enum { B_ADD, B_SUB, B_MUL };

/* The operator: the binary family's descriptors are named add/sub/mul. */
static int kind_of(const mxc__op *op) {
  return op->name[0] == 'a' ? B_ADD : op->name[0] == 's' ? B_SUB : B_MUL;
}

/* ---- storage types ---- */

static int bin_stype(const mxc__op *op, const void *param, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_in, (void)n_out;
  const int D = MXC_STYPE_DEFAULT, R = MXC_STYPE_ROW_SPARSE;
  int a = in[0], b = in[1], want = -1;
  if (a == b) {
    want = a; /* dense, csr or row_sparse on both sides */
  } else if ((a == R && b == D) || (a == D && b == R)) {
    want = kind_of(op) == B_MUL ? R : D;
  }
  MXC_RETURN_ERROR_IF(
      want < 0 || (out[0] >= 0 && out[0] != want), MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for inputs %s and %s "
      "with output %s",
      op->name, mxc__stype_name(a), mxc__stype_name(b),
      out[0] < 0 ? "(any)" : mxc__stype_name(out[0]));
  out[0] = want;
  *dispatch = a == D && b == D ? MXC__DISPATCH_DENSE : MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* ---- element arithmetic ---- */

/* Integers wrap like the dense kernels (two's complement), without signed
 * overflow. */
#define COMB_FLOAT(T)                                       \
  static inline T comb_##T(int k, T x, T y) {               \
    return k == B_ADD ? x + y : k == B_SUB ? x - y : x * y; \
  }
COMB_FLOAT(float)
COMB_FLOAT(double)
static inline int64_t comb_int64_t(int k, int64_t x, int64_t y) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  return (int64_t)(k == B_ADD ? ux + uy : k == B_SUB ? ux - uy : ux * uy);
}
static inline int32_t comb_int32_t(int k, int32_t x, int32_t y) {
  return (int32_t)comb_int64_t(k, x, y);
}

/* o[i] (=, or += when add) f(a[i], b[i]) for i < n; a or b NULL reads as
 * zeros. o may be a or b (in-place dense output), so no restrict. Each
 * case is its own loop (GCC -O2 does not unswitch), computed in U (the
 * unsigned type for integers, so they wrap like the dense kernels
 * without signed overflow). */
#define VEC_STORE(T, U, EXPR)                                        \
  if (add) {                                                         \
    for (int64_t i = 0; i < n; ++i) o[i] = (T)((U)o[i] + (U)(EXPR)); \
  } else {                                                           \
    for (int64_t i = 0; i < n; ++i) o[i] = (T)(EXPR);                \
  }
#define VEC_OP(T, U, OP)                \
  if (a && b) {                         \
    VEC_STORE(T, U, (U)a[i] OP(U) b[i]) \
  } else if (a) {                       \
    VEC_STORE(T, U, (U)a[i] OP(U) 0)    \
  } else {                              \
    VEC_STORE(T, U, (U)0 OP(U) b[i])    \
  }
#define DEF_VEC(T, U)                                                 \
  static void vec_##T(int k, const T *a, const T *b, T *o, int64_t n, \
                      int add) {                                      \
    if (k == B_ADD) {                                                 \
      VEC_OP(T, U, +)                                                 \
    } else if (k == B_SUB) {                                          \
      VEC_OP(T, U, -)                                                 \
    } else {                                                          \
      VEC_OP(T, U, *)                                                 \
    }                                                                 \
  }
DEF_VEC(float, float)
DEF_VEC(double, double)
DEF_VEC(int32_t, uint32_t)
DEF_VEC(int64_t, uint64_t)

/* Any dtype: typed loops above, others through double. */
static void vec_any(int k, int dtype, const void *a, const void *b, void *o,
                    int64_t n, int add) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      vec_float(k, a, b, o, n, add);
      return;
    case MXC_DTYPE_FLOAT64:
      vec_double(k, a, b, o, n, add);
      return;
    case MXC_DTYPE_INT32:
      vec_int32_t(k, a, b, o, n, add);
      return;
    case MXC_DTYPE_INT64:
      vec_int64_t(k, a, b, o, n, add);
      return;
    default: {
      mxc__shape s = {1, {n}};
      mxc__device dev = {MXC_DEVICE_CPU, 0};
      mxc__blob ba = {(void *)a, s, dtype, dev, MXC__FMT_PLAIN};
      mxc__blob bb = {(void *)b, s, dtype, dev, MXC__FMT_PLAIN};
      mxc__blob bo = {o, s, dtype, dev, MXC__FMT_PLAIN};
      for (int64_t i = 0; i < n; ++i) {
        double x = a ? mxc__blob_get(&ba, i) : 0;
        double y = b ? mxc__blob_get(&bb, i) : 0;
        double v = comb_double(k, x, y);
        mxc__blob_set(&bo, i, add ? mxc__blob_get(&bo, i) + v : v);
      }
    }
  }
}

static inline const char *at(const void *p, int64_t i, size_t esz) {
  return p ? (const char *)p + (size_t)i * esz : NULL;
}

/* Threads for a loop touching about `work` elements. */
static int threads_for(int64_t work) {
  return work >= 65536 ? mxc__parallel_threads() : 1;
}

/* Grain (rows) so that each chunk touches about 16k elements. */
static int64_t grain_for(int64_t row_len) {
  return row_len > 0 ? 16384 / row_len + 1 : 16384;
}

/* Index i of an int32 (is64 = 0) or int64 index array. */
static inline int64_t ix(const void *p, int is64, int64_t i) {
  return is64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

/* First position in the sorted index array p[0..n) holding a value >=
 * v. */
static int64_t lower_bound(const void *p, int is64, int64_t n, int64_t v) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (ix(p, is64, mid) < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/* ---- row_sparse with dense ---- */

typedef struct rd_job {
  int kind, rsp_first, dtype, add;
  const void *rv, *ridx; /* the row_sparse operand: values, row indices */
  int64_t rn;            /* its stored rows */
  int r64;
  const char *d; /* the dense operand */
  char *o;
  int64_t row_len;
} rd_job;

/* add/sub into a dense output, rows [b, e): a stored row combines both
 * operands, another the dense one with zeros. */
static int rd_dense_rows(void *arg, int64_t b, int64_t e) {
  const rd_job *j = arg;
  size_t esz = mxc__dtype_size(j->dtype), row = (size_t)j->row_len * esz;
  int64_t k = lower_bound(j->ridx, j->r64, j->rn, b);
  for (int64_t r = b; r < e; ++r) {
    const char *rrow = NULL;
    if (k < j->rn && ix(j->ridx, j->r64, k) == r) rrow = at(j->rv, k++, row);
    const char *drow = j->d + (size_t)r * row;
    vec_any(j->kind, j->dtype, j->rsp_first ? rrow : drow,
            j->rsp_first ? drow : rrow, j->o + (size_t)r * row, j->row_len,
            j->add);
  }
  return MXC_OK;
}

/* mul into a row_sparse output with the rsp operand's rows, stored rows
 * [b, e). */
static int rd_mul_rows(void *arg, int64_t b, int64_t e) {
  const rd_job *j = arg;
  size_t esz = mxc__dtype_size(j->dtype), row = (size_t)j->row_len * esz;
  for (int64_t k = b; k < e; ++k) {
    const char *rrow = at(j->rv, k, row);
    const char *drow = j->d + (size_t)ix(j->ridx, j->r64, k) * row;
    vec_any(B_MUL, j->dtype, j->rsp_first ? rrow : drow,
            j->rsp_first ? drow : rrow, j->o + (size_t)k * row, j->row_len, 0);
  }
  return MXC_OK;
}

static int rsp_dense(const mxc__op *op, const mxc__ndarray *in,
                     const mxc__ndarray *out, mxc__req req) {
  int rsp_first = in[0].stype == MXC_STYPE_ROW_SPARSE;
  const mxc__ndarray *rsp = &in[rsp_first ? 0 : 1], *dn = &in[rsp_first];
  char what[96];
  snprintf(what, sizeof what, "operator '%s' input %d", op->name,
           rsp_first ? 0 : 1);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(rsp, what));
  mxc__dense_view rv = mxc__sparse_data(rsp), ri = mxc__sparse_aux(rsp, 0);
  rd_job j = {kind_of(op),
              rsp_first,
              out->dtype,
              req == MXC__REQ_ADD,
              rv.ptr,
              ri.ptr,
              ri.shape.dims[0],
              ri.dtype == MXC_DTYPE_INT64,
              mxc__ndarray_ptr(dn),
              NULL,
              mxc__sparse_row_elems(rsp)};
  int64_t rows = rsp->shape.dims[0];
  if (j.kind != B_MUL) {
    j.o = mxc__ndarray_ptr(out);
    return mxc__parallel_for(rows, grain_for(j.row_len),
                             threads_for(rows * j.row_len), rd_dense_rows, &j);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_check_alias(op, in, 2, out));
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(out, j.rn));
  mxc__dense_view oi = mxc__sparse_aux(out, 0);
  mxc__sparse_idx_copy(&oi, &ri, j.rn);
  j.o = mxc__sparse_data(out).ptr;
  int rc = mxc__parallel_for(j.rn, grain_for(j.row_len),
                             threads_for(j.rn * j.row_len), rd_mul_rows, &j);
  if (rc == MXC_OK) mxc__sparse_set_valid(out);
  return rc;
}

/* ---- row_sparse with row_sparse ---- */

typedef struct rr_job {
  int kind, dtype;
  const char *av, *bv;
  char *o;
  const int64_t *src; /* per output row: a's row (or -1), b's row (or -1) */
  int64_t row_len;
} rr_job;

static int rr_rows(void *arg, int64_t b, int64_t e) {
  const rr_job *j = arg;
  size_t row = (size_t)j->row_len * mxc__dtype_size(j->dtype);
  for (int64_t k = b; k < e; ++k) {
    int64_t pa = j->src[2 * k], pb = j->src[2 * k + 1];
    vec_any(j->kind, j->dtype, pa >= 0 ? at(j->av, pa, row) : NULL,
            pb >= 0 ? at(j->bv, pb, row) : NULL, j->o + (size_t)k * row,
            j->row_len, 0);
  }
  return MXC_OK;
}

/* Merges the sorted row indices of a and b: the number of output rows
 * and, when src is given, each one's index (into oi) and source rows. */
static int64_t rr_merge(int mul, const mxc__dense_view *ai,
                        const mxc__dense_view *bi, const mxc__dense_view *oi,
                        int64_t *src) {
  int64_t na = ai->shape.dims[0], nb = bi->shape.dims[0];
  int64_t i = 0, k = 0, n = 0;
  while (i < na || k < nb) {
    int64_t ra = i < na ? mxc__sparse_idx_get(ai, i) : INT64_MAX;
    int64_t rb = k < nb ? mxc__sparse_idx_get(bi, k) : INT64_MAX;
    int64_t r = ra < rb ? ra : rb, pa = -1, pb = -1;
    if (ra == r) pa = i++;
    if (rb == r) pb = k++;
    if (mul && (pa < 0 || pb < 0)) continue;
    if (src) {
      mxc__sparse_idx_set(oi, n, r);
      src[2 * n] = pa;
      src[2 * n + 1] = pb;
    }
    ++n;
  }
  return n;
}

static int rsp_rsp(const mxc__op *op, const mxc__ndarray *in,
                   const mxc__ndarray *out) {
  mxc__dense_view ai = mxc__sparse_aux(&in[0], 0);
  mxc__dense_view bi = mxc__sparse_aux(&in[1], 0);
  int mul = kind_of(op) == B_MUL;
  int64_t n = rr_merge(mul, &ai, &bi, NULL, NULL);
  int64_t *src = n ? mxc__malloc((size_t)n * 2 * sizeof(int64_t)) : NULL;
  MXC_RETURN_ERROR_IF(n && !src, MXC_ERR_OOM,
                      "operator '%s': out of memory for %lld output rows",
                      op->name, (long long)n);
  int rc = mxc__sparse_alloc(out, n);
  if (rc == MXC_OK) {
    mxc__dense_view oi = mxc__sparse_aux(out, 0);
    rr_merge(mul, &ai, &bi, &oi, src);
    rr_job j = {kind_of(op),
                out->dtype,
                mxc__sparse_data(&in[0]).ptr,
                mxc__sparse_data(&in[1]).ptr,
                mxc__sparse_data(out).ptr,
                src,
                mxc__sparse_row_elems(out)};
    rc = mxc__parallel_for(n, grain_for(j.row_len), threads_for(n * j.row_len),
                           rr_rows, &j);
  }
  if (rc == MXC_OK) mxc__sparse_set_valid(out);
  mxc__free(src);
  return rc;
}

/* ---- csr with csr ---- */

typedef struct csr_job {
  int kind, mul, dtype;
  const void *aip, *aix, *bip, *bix, *av, *bv;
  int a64, b64, o64;
  int64_t *pos; /* rows + 1: counts at r + 1, then output offsets */
  void *oix, *ov;
} csr_job;

/* Entries of output row r: the union (add, sub) or intersection (mul) of
 * the rows' sorted column indices. */
static int64_t csr_row_count(const csr_job *j, int64_t r) {
  int64_t ka = ix(j->aip, j->a64, r), ea = ix(j->aip, j->a64, r + 1);
  int64_t kb = ix(j->bip, j->b64, r), eb = ix(j->bip, j->b64, r + 1);
  int64_t n = 0;
  while (ka < ea && kb < eb) {
    int64_t ca = ix(j->aix, j->a64, ka), cb = ix(j->bix, j->b64, kb);
    n += !j->mul || ca == cb;
    ka += ca <= cb;
    kb += cb <= ca;
  }
  return j->mul ? n : n + (ea - ka) + (eb - kb);
}

static int csr_count_rows(void *arg, int64_t b, int64_t e) {
  const csr_job *j = arg;
  for (int64_t r = b; r < e; ++r) j->pos[r + 1] = csr_row_count(j, r);
  return MXC_OK;
}

/* Row r of the output, from offset pos[r], for float/int values: one
 * variant for all-int64 indices (the common case) and one for any index
 * dtypes (IXA/IXB read operand columns, SETO writes an output column).
 * Add and sub advance through both rows without branching on the data
 * (on a tie both operands are taken); mul keeps ties only. */
#define IX64_A(i) (((const int64_t *)aixp)[i])
#define IX64_B(i) (((const int64_t *)bixp)[i])
#define SET64_O(k, c) (((int64_t *)oixp)[k] = (c))
#define IXANY_A(i) ix(aixp, j->a64, i)
#define IXANY_B(i) ix(bixp, j->b64, i)
#define SETANY_O(k, c)                         \
  (j->o64 ? (void)(((int64_t *)oixp)[k] = (c)) \
          : (void)(((int32_t *)oixp)[k] = (int32_t)(c)))

#define DEF_CSR_FILL(T, SUF, IXA, IXB, SETO)                            \
  static void csr_fill_##T##SUF(const csr_job *j, int64_t r) {          \
    const T *av = j->av, *bv = j->bv;                                   \
    T *ov = j->ov;                                                      \
    const void *aixp = j->aix, *bixp = j->bix;                          \
    void *oixp = j->oix;                                                \
    const int kind = j->kind;                                           \
    int64_t ka = ix(j->aip, j->a64, r), ea = ix(j->aip, j->a64, r + 1); \
    int64_t kb = ix(j->bip, j->b64, r), eb = ix(j->bip, j->b64, r + 1); \
    int64_t k = j->pos[r];                                              \
    if (j->mul) {                                                       \
      while (ka < ea && kb < eb) {                                      \
        int64_t ca = IXA(ka), cb = IXB(kb);                             \
        if (ca == cb) {                                                 \
          SETO(k, ca);                                                  \
          ov[k++] = comb_##T(B_MUL, av[ka], bv[kb]);                    \
        }                                                               \
        ka += ca <= cb;                                                 \
        kb += cb <= ca;                                                 \
      }                                                                 \
      return;                                                           \
    }                                                                   \
    while (ka < ea && kb < eb) {                                        \
      int64_t ca = IXA(ka), cb = IXB(kb);                               \
      int ta = ca <= cb, tb = cb <= ca;                                 \
      T x = ta ? av[ka] : (T)0, y = tb ? bv[kb] : (T)0;                 \
      SETO(k, ta ? ca : cb);                                            \
      ov[k++] = comb_##T(kind, x, y);                                   \
      ka += ta;                                                         \
      kb += tb;                                                         \
    }                                                                   \
    for (; ka < ea; ++ka, ++k) {                                        \
      SETO(k, IXA(ka));                                                 \
      ov[k] = comb_##T(kind, av[ka], (T)0);                             \
    }                                                                   \
    for (; kb < eb; ++kb, ++k) {                                        \
      SETO(k, IXB(kb));                                                 \
      ov[k] = comb_##T(kind, (T)0, bv[kb]);                             \
    }                                                                   \
  }
#define DEF_CSR_FILLS(T)                         \
  DEF_CSR_FILL(T, _i64, IX64_A, IX64_B, SET64_O) \
  DEF_CSR_FILL(T, _any, IXANY_A, IXANY_B, SETANY_O)
DEF_CSR_FILLS(float)
DEF_CSR_FILLS(double)
DEF_CSR_FILLS(int32_t)
DEF_CSR_FILLS(int64_t)

/* Other value dtypes: one element at a time through vec_any. */
static void csr_fill_any(const csr_job *j, int64_t r) {
  size_t esz = mxc__dtype_size(j->dtype);
  int64_t ka = ix(j->aip, j->a64, r), ea = ix(j->aip, j->a64, r + 1);
  int64_t kb = ix(j->bip, j->b64, r), eb = ix(j->bip, j->b64, r + 1);
  int64_t k = j->pos[r];
  void *oixp = j->oix;
  while (ka < ea || kb < eb) {
    int64_t ca = ka < ea ? ix(j->aix, j->a64, ka) : INT64_MAX;
    int64_t cb = kb < eb ? ix(j->bix, j->b64, kb) : INT64_MAX;
    int64_t c = ca < cb ? ca : cb, pa = -1, pb = -1;
    if (ca == c) pa = ka++;
    if (cb == c) pb = kb++;
    if (j->mul && (pa < 0 || pb < 0)) continue;
    SETANY_O(k, c);
    vec_any(j->kind, j->dtype, pa >= 0 ? at(j->av, pa, esz) : NULL,
            pb >= 0 ? at(j->bv, pb, esz) : NULL,
            (char *)j->ov + (size_t)k * esz, 1, 0);
    ++k;
  }
}

#define CSR_FILL_CASE(DT, T)    \
  case DT:                      \
    if (all64) {                \
      csr_fill_##T##_i64(j, r); \
    } else {                    \
      csr_fill_##T##_any(j, r); \
    }                           \
    break;

static int csr_fill_rows(void *arg, int64_t b, int64_t e) {
  const csr_job *j = arg;
  int all64 = j->a64 && j->b64 && j->o64;
  for (int64_t r = b; r < e; ++r) {
    switch (j->dtype) {
      CSR_FILL_CASE(MXC_DTYPE_FLOAT32, float)
      CSR_FILL_CASE(MXC_DTYPE_FLOAT64, double)
      CSR_FILL_CASE(MXC_DTYPE_INT32, int32_t)
      CSR_FILL_CASE(MXC_DTYPE_INT64, int64_t)
      default:
        csr_fill_any(j, r);
    }
  }
  return MXC_OK;
}

/* Two passes over the rows (count, then fill at the counted offsets), each
 * split over threads; the output is allocated in between. */
static int csr_csr(const mxc__op *op, const mxc__ndarray *in,
                   const mxc__ndarray *out) {
  int64_t rows = out->shape.dims[0];
  mxc__dense_view aip = mxc__sparse_aux(&in[0], 0);
  mxc__dense_view bip = mxc__sparse_aux(&in[1], 0);
  csr_job j = {kind_of(op),
               kind_of(op) == B_MUL,
               out->dtype,
               aip.ptr,
               mxc__sparse_aux(&in[0], 1).ptr,
               bip.ptr,
               mxc__sparse_aux(&in[1], 1).ptr,
               mxc__sparse_data(&in[0]).ptr,
               mxc__sparse_data(&in[1]).ptr,
               aip.dtype == MXC_DTYPE_INT64,
               bip.dtype == MXC_DTYPE_INT64,
               mxc__sparse_index_dtype(out) == MXC_DTYPE_INT64,
               NULL,
               NULL,
               NULL};
  j.pos = mxc__malloc((size_t)(rows + 1) * sizeof(int64_t));
  MXC_RETURN_ERROR_IF(!j.pos, MXC_ERR_OOM,
                      "operator '%s': out of memory for %lld row offsets",
                      op->name, (long long)rows + 1);
  int64_t work = mxc__sparse_nnz(&in[0]) + mxc__sparse_nnz(&in[1]);
  int64_t grain = 16384 * (rows + 1) / (work + 1) + 1;
  int threads = threads_for(work);
  j.pos[0] = 0;
  int rc = mxc__parallel_for(rows, grain, threads, csr_count_rows, &j);
  for (int64_t r = 0; r < rows; ++r) j.pos[r + 1] += j.pos[r];
  if (rc == MXC_OK) rc = mxc__sparse_alloc(out, j.pos[rows]);
  if (rc == MXC_OK) {
    mxc__dense_view oip = mxc__sparse_aux(out, 0);
    for (int64_t r = 0; r <= rows; ++r) mxc__sparse_idx_set(&oip, r, j.pos[r]);
    j.oix = mxc__sparse_aux(out, 1).ptr;
    j.ov = mxc__sparse_data(out).ptr;
    rc = mxc__parallel_for(rows, grain, threads, csr_fill_rows, &j);
  }
  if (rc == MXC_OK) mxc__sparse_set_valid(out);
  mxc__free(j.pos);
  return rc;
}

static int bin_sparse(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__ndarray *in, int n_in,
                      const mxc__ndarray *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (in[0].stype != in[1].stype) return rsp_dense(op, in, out, req[0]);
  char what[96];
  for (int i = 0; i < 2; ++i) {
    snprintf(what, sizeof what, "operator '%s' input %d", op->name, i);
    MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(&in[i], what));
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_check_alias(op, in, 2, out));
  if (in[0].stype == MXC_STYPE_ROW_SPARSE) return rsp_rsp(op, in, out);
  return csr_csr(op, in, out);
}

int mxc__sparse_register_elemwise_binary(mxc__registry *r) {
  static const char *const names[] = {"elemwise_add", "elemwise_sub",
                                      "elemwise_mul"};
  for (int i = 0; i < 3; ++i) {
    MXC_FORWARD_IF_ERROR(
        mxc__registry_attach_stype(r, names[i], bin_stype, bin_sparse));
  }
  return MXC_OK;
}
