/* sgd_update with a row_sparse weight and a row_sparse grad (the output is
 * row_sparse, normally the weight itself).
 *
 * The result stores the union of the weight's and the grad's rows; a grad
 * row the weight does not store starts from zeros. With lazy_update (the
 * default) the weight's rows without a gradient are kept as they are;
 * without it they get the update with gradient 0 (weight decay). Each
 * updated row is the dense kernel's update of that row (its compute runs
 * on one row at a time), so values match sgd on the dense equivalents.
 * Rows stay stored even when they become zero.
 *
 * The output usually is the weight: allocating the output frees the
 * weight's blocks, so the result is built in temporary buffers first and
 * copied in after. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/op/common.h"
#include "ops/sparse/optim.h"

typedef struct rsp_side {
  const char *val;
  mxc__dense_view idx;
  int64_t nnz;
} rsp_side;

static rsp_side side_of(const mxc__ndarray *a) {
  rsp_side s = {mxc__sparse_data(a).ptr, mxc__sparse_aux(a, 0),
                mxc__sparse_nnz(a)};
  return s;
}

/* Rows in the union of the two sorted index lists. */
static int64_t union_size(const rsp_side *w, const rsp_side *g) {
  int64_t i = 0, k = 0, n = 0;
  while (i < w->nnz || k < g->nnz) {
    int64_t a = i < w->nnz ? mxc__sparse_idx_get(&w->idx, i) : INT64_MAX;
    int64_t b = k < g->nnz ? mxc__sparse_idx_get(&g->idx, k) : INT64_MAX;
    i += a <= b;
    k += b <= a;
    ++n;
  }
  return n;
}

/* One row through the dense kernel: out_row = update(w_row, g_row). */
static int update_row(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__ndarray *weight,
                      const void *w_row, const void *g_row, void *out_row) {
  mxc__blob in[2], out;
  in[0].shape = weight->shape;
  in[0].shape.dims[0] = 1;
  in[0].dtype = weight->dtype;
  in[0].dev = weight->chunk->dev;
  in[0].fmt = MXC__FMT_PLAIN;
  in[1] = out = in[0];
  in[0].ptr = (void *)w_row;
  in[1].ptr = (void *)g_row;
  out.ptr = out_row;
  mxc__req req = MXC__REQ_WRITE;
  return op->compute(op, ctx, param, in, 2, &out, 1, &req);
}

/* Fills vals/rows (n rows) with the merged result. */
static int merge(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                 const mxc__ndarray *weight, const rsp_side *w,
                 const rsp_side *g, int lazy, const char *zeros,
                 size_t row_bytes, char *vals, int64_t *rows) {
  int64_t i = 0, k = 0, u = 0;
  while (i < w->nnz || k < g->nnz) {
    int64_t a = i < w->nnz ? mxc__sparse_idx_get(&w->idx, i) : INT64_MAX;
    int64_t b = k < g->nnz ? mxc__sparse_idx_get(&g->idx, k) : INT64_MAX;
    const char *w_row = a <= b ? w->val + (size_t)i * row_bytes : zeros;
    const char *g_row = b <= a ? g->val + (size_t)k * row_bytes : zeros;
    char *dst = vals + (size_t)u * row_bytes;
    rows[u] = a < b ? a : b;
    if (b > a && lazy) {
      memcpy(dst, w_row, row_bytes); /* no gradient: kept */
    } else {
      MXC_FORWARD_IF_ERROR(
          update_row(op, ctx, param, weight, w_row, g_row, dst));
    }
    i += a <= b;
    k += b <= a;
    ++u;
  }
  return MXC_OK;
}

int mxc__sparse_sgd_rsp_rsp(const mxc__op *op, const mxc__opctx *ctx,
                            const void *param, const mxc__ndarray *in,
                            const mxc__ndarray *out, int lazy) {
  char what[96];
  for (int s = 0; s < 2; ++s) {
    snprintf(what, sizeof what, "operator '%s' input %d ('%s')", op->name, s,
             s ? "grad" : "weight");
    MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(&in[s], what));
  }
  rsp_side w = side_of(&in[0]), g = side_of(&in[1]);
  size_t row_bytes =
      (size_t)mxc__sparse_row_elems(&in[0]) * mxc__dtype_size(in[0].dtype);
  int64_t n = union_size(&w, &g);
  /* zeros (one row), then the result's values and row indices. */
  size_t head = (row_bytes + 7) & ~(size_t)7;
  char *buf = mxc__calloc(1, head + (size_t)n * (row_bytes + 8) + 8);
  MXC_RETURN_ERROR_IF(!buf, MXC_ERR_OOM,
                      "operator '%s': out of memory for %lld result rows",
                      op->name, (long long)n);
  char *vals = buf + head;
  int64_t *rows = (int64_t *)(vals + (((size_t)n * row_bytes + 7) &
                                      ~(size_t)7));
  int rc = merge(op, ctx, param, &in[0], &w, &g, lazy, buf, row_bytes, vals,
                 rows);
  if (rc == MXC_OK) rc = mxc__sparse_alloc(out, n);
  if (rc == MXC_OK) {
    memcpy(mxc__sparse_data(out).ptr, vals, (size_t)n * row_bytes);
    mxc__dense_view idx = mxc__sparse_aux(out, 0);
    for (int64_t u = 0; u < n; ++u) mxc__sparse_idx_set(&idx, u, rows[u]);
    mxc__sparse_set_valid(out);
  }
  mxc__free(buf);
  return rc;
}
