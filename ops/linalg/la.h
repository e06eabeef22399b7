/* The linalg_* operators (MXNet's la_op family): batched matrix
 * operations over the last two axes, with everything before them a batch.
 *
 * These work on small matrices (covariances, Cholesky factors of Gaussian
 * processes, 3x3 rotations): each batch item is copied to float64 scratch,
 * computed with plain loops in double, and written back with the write
 * mode. That keeps one implementation for float32 and float64, exact
 * enough for the gradients, and free of LAPACK. */
#ifndef MXC_OPS_LINALG_LA_H_
#define MXC_OPS_LINALG_LA_H_

#include "core/op/common.h"

/* One batch item of an input or output: r x c row-major doubles (r, c
 * from the array's last two axes; 1 x n for vectors). */
typedef struct mxc__la_mat {
  double *p;
  int64_t r, c;
} mxc__la_mat;

/* A kernel computes one batch item from its inputs into its outputs,
 * using `work` (at least 4 * max item size + 2 * max extent doubles). */
typedef int (*mxc__la_kernel)(const void *param, const mxc__la_mat *in,
                              int n_in, mxc__la_mat *out, int n_out,
                              double *work);

/* Runs `k` over the batch items of the call. The batch is the product of
 * the axes of input `batch_of` before its last `item_ndim` axes; every
 * other array holds the same number of items. */
int mxc__la_run(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                const mxc__blob *in, int n_in, const mxc__blob *out, int n_out,
                const mxc__req *req, int batch_of, int item_ndim,
                mxc__la_kernel k);

/* ---- matrix helpers (row-major doubles) ---- */

/* Element (i, j) of op(X), X stored r x c, op transposing when t. */
static inline double mxc__la_at(const mxc__la_mat *x, int t, int64_t i,
                                int64_t j) {
  return t ? x->p[j * x->c + i] : x->p[i * x->c + j];
}

/* out (m x n) = alpha * op(A) op(B) + beta * out, op(A) m x k. */
void mxc__la_gemm(const mxc__la_mat *a, int ta, const mxc__la_mat *b, int tb,
                  double alpha, double beta, int64_t m, int64_t n, int64_t k,
                  double *out);

/* Inverse of the n x n matrix a into inv (Gauss-Jordan with partial
 * pivoting, work: n * n doubles); returns the determinant. A singular
 * matrix gives det 0 and non-finite entries. */
double mxc__la_inverse(const double *a, int64_t n, double *inv, double *work);

/* Copies the lower (or upper) triangle of a (n x n), zeroing the rest. */
void mxc__la_triangle(const double *a, int64_t n, int lower, double *out);

/* out = x^T (r x c into c x r). */
void mxc__la_transpose(const double *x, int64_t r, int64_t c, double *out);

int mxc__linalg_register_la(mxc__registry *r);

#endif /* MXC_OPS_LINALG_LA_H_ */
