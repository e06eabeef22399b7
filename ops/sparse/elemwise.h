/* Sparse element-wise kernels (elemwise_unary.c, elemwise_binary.c,
 * quadratic.c): helpers they share. Internal to ops/sparse. */
#ifndef MXC_OPS_SPARSE_ELEMWISE_H_
#define MXC_OPS_SPARSE_ELEMWISE_H_

#include <stdint.h>

#include "ops/sparse/sparse.h"

/* Storage rule of operators that keep their one input's storage type:
 * dense in gives dense out (dense kernel); csr / row_sparse in gives the
 * same out (sparse kernel) when `sparse_ok`. Anything else (a given output
 * of another storage type, or !sparse_ok for a sparse input) is
 * MXC_ERR_STYPE naming the operator, so that invoke falls back to dense. */
int mxc__sparse_keep_stype(const mxc__op *op, const int *in, int *out,
                           int *dispatch, int sparse_ok);

/* MXC_ERR_INVALID_ARGUMENT when out shares its chunk with one of the
 * inputs: a sparse output's old blocks are freed when it is reallocated,
 * so it can never be written in place. */
int mxc__sparse_check_alias(const mxc__op *op, const mxc__ndarray *in,
                            int n_in, const mxc__ndarray *out);

/* Copies n indices between index views of possibly different index
 * dtypes. */
void mxc__sparse_idx_copy(const mxc__dense_view *dst,
                          const mxc__dense_view *src, int64_t n);

/* out (same storage type, shape and dtype as in) gets in's structure and,
 * as values, the dense kernel `op->compute` applied to in's stored values
 * (a 1-d / (nnz, d1, ...) blob). Only for functions with f(0) == 0 given
 * `param`: the unstored zeros stay zero. Checks in's format and that out is
 * not in; req NULL does nothing. */
int mxc__sparse_map_values(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__ndarray *in,
                           const mxc__ndarray *out, mxc__req req);

/* Registration of elemwise_binary.c and quadratic.c, called by
 * mxc__sparse_register_elemwise (elemwise_unary.c). */
int mxc__sparse_register_elemwise_binary(mxc__registry *r);
int mxc__sparse_register_quadratic(mxc__registry *r);

#endif /* MXC_OPS_SPARSE_ELEMWISE_H_ */
