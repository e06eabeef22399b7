/* The host stand-in for cusparseSpMM: see sdot_host.h. */
#include "tests/gpu/sdot_host.h"

#include <stdlib.h>
#include <string.h>

static int64_t idx_at(const void *p, int index64, int64_t i) {
  return index64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static double val_at(const void *p, int f64, int64_t i) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void val_set(void *p, int f64, int64_t i, double v) {
  if (f64) {
    ((double *)p)[i] = v;
  } else {
    ((float *)p)[i] = (float)v;
  }
}

/* What cuSPARSE checks of the descriptors, and the extents in memory. */
static const char *check(const mxc__sdot_plan *p, int64_t b_elems,
                         int64_t c_elems) {
  int64_t m = p->trans_a ? p->a_cols : p->a_rows;
  int64_t k = p->trans_a ? p->a_rows : p->a_cols;
  if (k != p->b_rows) return "op(A)'s columns differ from B's rows";
  if (m != p->c_rows) return "op(A)'s rows differ from C's rows";
  if (p->b_cols != p->c_cols) return "B's columns differ from C's";
  if (p->ldb < p->b_cols || p->ldc < p->c_cols || p->ldb < 1 || p->ldc < 1) {
    return "a leading dimension is below its matrix's columns";
  }
  if (p->b_rows > 0 && (p->b_rows - 1) * p->ldb + p->b_cols > b_elems) {
    return "B reaches past its array";
  }
  if (p->c_rows > 0 && (p->c_rows - 1) * p->ldc + p->c_cols > c_elems) {
    return "C reaches past its array";
  }
  return NULL;
}

/* acc (c_rows x c_cols) += op(A) B, in double. */
static void product(const mxc__sdot_plan *p, const void *ip, const void *ix,
                    const void *v, const void *b, double *acc) {
  for (int64_t r = 0; r < p->a_rows; ++r) {
    for (int64_t j = idx_at(ip, p->index64, r);
         j < idx_at(ip, p->index64, r + 1); ++j) {
      int64_t col = idx_at(ix, p->index64, j);
      double a = val_at(v, p->f64, j);
      int64_t out = p->trans_a ? col : r, in = p->trans_a ? r : col;
      for (int64_t q = 0; q < p->c_cols; ++q) {
        acc[out * p->c_cols + q] +=
            a * val_at(b, p->f64, in * p->ldb + q);
      }
    }
  }
}

const char *mxct_sdot_host_run(const mxc__sdot_plan *p, const void *indptr,
                               const void *indices, const void *vals,
                               const void *b, int64_t b_elems, void *c,
                               int64_t c_elems) {
  if (p->kind == MXC__SDOT_NOTHING) return NULL;
  if (p->kind == MXC__SDOT_ZERO) {
    if ((int64_t)p->c_bytes > c_elems * (p->f64 ? 8 : 4)) {
      return "the memset reaches past C";
    }
    memset(c, 0, p->c_bytes);
    return NULL;
  }
  const char *bad = check(p, b_elems, c_elems);
  if (bad) return bad;
  int64_t n = p->c_rows * p->c_cols;
  double *acc = calloc((size_t)(n ? n : 1), sizeof *acc);
  if (!acc) return "out of host memory";
  product(p, indptr, indices, vals, b, acc);
  for (int64_t r = 0; r < p->c_rows; ++r) {
    for (int64_t q = 0; q < p->c_cols; ++q) {
      int64_t at = r * p->ldc + q;
      double old = p->beta != 0 ? p->beta * val_at(c, p->f64, at) : 0;
      val_set(c, p->f64, at, p->alpha * acc[r * p->c_cols + q] + old);
    }
  }
  free(acc);
  return NULL;
}
