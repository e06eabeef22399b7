/* Sparse dot kernels (ops/sparse/dot_kernels.c, instantiated from
 * dot_tmpl.h for float32/float64 values and int32/int64 indices) and the
 * job they share with the operator code in ops/sparse/dot.c.
 *
 * Every kernel is a range function for mxc__parallel_for: it writes only
 * the output rows its range owns (or its own partial output), so ranges
 * run concurrently without locks. Results do not depend on the thread
 * count, except the transposed product's rounding, whose partial sums
 * follow the number of slices. */
#ifndef MXC_OPS_SPARSE_DOT_H_
#define MXC_OPS_SPARSE_DOT_H_

#include <stdint.h>

#include "core/op/parallel.h"
#include "ops/sparse/sparse.h"

/* One product. "The csr" is lhs for csr x dense / csr x row_sparse /
 * transpose(csr) x dense, rhs for dense x csr / dense x transpose(csr).
 * Its values are of the kernel's value type and its indptr / indices of
 * the kernel's index type; everything else is typed as below. */
typedef struct mxc__sdot_job {
  const void *ptr, *idx, *val; /* the csr: indptr, indices, values */
  int64_t rows, cols;          /* the csr's shape */
  const void *dense;           /* the dense operand, row-major */
  const void *dense2;          /* sampled: the second dense operand */
  /* csr x row_sparse: the stored rows (rnnz x n values) and their row
   * indices, int64 when ridx64 else int32 (strictly increasing). */
  const void *rval, *ridx;
  int64_t rnnz;
  int ridx64;
  void *out; /* dense output, or the row_sparse output's values */
  int64_t n; /* columns of the output (per output row) */
  int64_t m; /* dense x csr: rows of the dense operand / output */
  int add;   /* accumulate into out (req add) instead of overwriting */
  /* transpose(csr) x dense: the csr rows are cut into n_slices slices;
   * slice s accumulates into slices[s] (out_rows x n values; slices[0] is
   * the output, the others private partial outputs that csrT_reduce adds
   * into it). Column c is output row c (dense output) or out_row[c]
   * (row_sparse output, whose rows are the columns holding a stored
   * entry). */
  void *const *slices;
  int n_slices;
  int64_t out_rows;
  const int64_t *out_row;
} mxc__sdot_job;

/* Range functions of one (value, index) type pair. Ranges are over:
 *   csr_dense:   csr rows (output rows);
 *   csr_rsp:     csr rows (output rows);
 *   csrT_dense:  slices (see above);
 *   csrT_reduce: output rows: adds the partial outputs of slices 1..;
 *   dense_csr:   rows of the dense lhs (output rows), out = lhs * csr;
 *   dense_csrT:  rows of the dense lhs (output rows), out = lhs * csr^T;
 *   sampled:     csr rows: out[j] = dense[r, :] . dense2[c, :] for each
 *                stored entry j = (r, c) (out: values of a csr with the
 *                csr's structure; both dense operands have n columns). */
typedef struct mxc__sdot_kernels {
  mxc__parallel_fn csr_dense, csr_rsp, csrT_dense, csrT_reduce, dense_csr,
      dense_csrT, sampled;
} mxc__sdot_kernels;

/* [0: float32, 1: float64][0: int32, 1: int64 indices]. */
extern const mxc__sdot_kernels mxc__sdot_table[2][2];

/* Shared by dot.c and dot_backward.c. */
/* A bool parameter of dot / _backward_dot, read through the descriptor. */
int mxc__sdot_flag(const mxc__op *op, const void *param, const char *name);
/* Threads for `work` multiply-adds, and the grain of n rows for them. */
int mxc__sdot_threads(double work);
int64_t mxc__sdot_grain(int64_t n, int threads);
/* Checks that the arrays share a float32/float64 dtype and that the
 * sparse ones are well-formed; *kern = the kernels for the values and the
 * index type of csr. */
int mxc__sdot_prepare(const mxc__op *op, const mxc__ndarray *const *arrs, int n,
                      const mxc__ndarray *csr, const mxc__sdot_kernels **kern);
/* MXC_ERR_SHAPE unless output o holds rows x n elements (dense) or has
 * rows rows of n elements (row_sparse): kernels never trust a shape they
 * write through. */
int mxc__sdot_check_out(const mxc__op *op, const mxc__ndarray *o, int64_t rows,
                        int64_t n);
/* Fills the csr part of j from a (checked). */
void mxc__sdot_job_csr(mxc__sdot_job *j, const mxc__ndarray *a);
/* transpose(csr a) x j->dense into o (dense, or row_sparse: allocated
 * here); j has the csr part, dense, n and add set. */
int mxc__sdot_run_csrT(const mxc__op *op, const mxc__sdot_kernels *kern,
                       mxc__sdot_job *j, const mxc__ndarray *a,
                       const mxc__ndarray *o);
/* Attaches the sparse kernels of _backward_dot (dot_backward.c). */
int mxc__sdot_attach_backward(mxc__registry *r);

#endif /* MXC_OPS_SPARSE_DOT_H_ */
