/* Row-sparse gradients for embeddings and lazy optimizer updates
 * (optim.c, embedding.c): what the two files share. Internal to
 * ops/sparse. */
#ifndef MXC_OPS_SPARSE_OPTIM_H_
#define MXC_OPS_SPARSE_OPTIM_H_

#include "core/op/param.h"
#include "ops/sparse/sparse.h"

/* The field `name` of type `type` in a parameter struct of op, found
 * through op's parameter table (the structs belong to other families'
 * files; their tables give the offsets), or NULL when op has no such
 * parameter. */
const void *mxc__sparse_param_field(const mxc__op *op, const void *param,
                                    const char *name, mxc__param_type type);

/* sgd_update with row_sparse weight and grad into the row_sparse out
 * (optim_rsp.c): the union of their rows, lazy or not. Runs under the
 * engine as a sparse kernel; out may be the weight itself. */
int mxc__sparse_sgd_rsp_rsp(const mxc__op *op, const mxc__opctx *ctx,
                            const void *param, const mxc__ndarray *in,
                            const mxc__ndarray *out, int lazy);

/* Attaches the row_sparse kernels of Embedding and _backward_Embedding
 * (embedding.c); called by mxc__sparse_register_optim. */
int mxc__sparse_register_embedding(mxc__registry *r);

#endif /* MXC_OPS_SPARSE_OPTIM_H_ */
