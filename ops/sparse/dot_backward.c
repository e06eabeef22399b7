/* Sparse kernels of _backward_dot (inputs ograd G, lhs, rhs; outputs
 * dlhs, drhs), the node the gradient pass makes for dot, when lhs is csr
 * and G and rhs are dense (no transpose_b):
 *
 *   transpose_a  drhs                               dlhs (csr, lhs's
 *                                                   structure), entry (r, c)
 *   false        lhs^T G: dense, or row_sparse when G[r, :] . rhs[c, :]
 *                the given output is (the rows of
 *                W that a stored column touches)
 *   true         lhs G: dense                       rhs[r, :] . G[c, :]
 *
 * dlhs keeps the gradient to lhs's stored entries, as PyTorch's
 * torch.sparse.mm does for its sparse operand: a csr input is data whose
 * structure is fixed, and its full gradient would be a dense rows x cols
 * matrix, as large as the one the csr avoids. A caller that gives a dense
 * dlhs output gets the full gradient through the dense fallback (this
 * storage inference answers MXC_ERR_STYPE for it). */
#include <string.h>

#include "core/base/dtype.h"
#include "core/op/common.h"
#include "ops/sparse/dot.h"

static int bwd_stype(const mxc__op *op, const void *param, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  const int D = MXC_STYPE_DEFAULT, C = MXC_STYPE_CSR, R = MXC_STYPE_ROW_SPARSE;
  int ta = mxc__sdot_flag(op, param, "transpose_a");
  int tb = mxc__sdot_flag(op, param, "transpose_b");
  int o0 = out[0], o1 = out[1];
  if (in[0] == D && in[1] == D && in[2] == D && (o0 == -1 || o0 == D) &&
      (o1 == -1 || o1 == D)) {
    out[0] = out[1] = D;
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  if (in[0] == D && in[1] == C && in[2] == D && !tb) {
    int s0 = o0 == -1 || o0 == C ? C : -1;
    int s1 = o1 == -1 || o1 == D ? D : (o1 == R && !ta ? R : -1);
    if (s0 >= 0 && s1 >= 0) {
      out[0] = s0;
      out[1] = s1;
      *dispatch = MXC__DISPATCH_SPARSE;
      return MXC_OK;
    }
  }
  return mxc__error_set(
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for ograd %s, lhs %s, rhs %s "
      "(transpose_a=%d, transpose_b=%d); sparse kernel: dense ograd and rhs, "
      "csr lhs, no transpose_b (dlhs csr, drhs dense or row_sparse)",
      op->name, mxc__stype_name(in[0]), mxc__stype_name(in[1]),
      mxc__stype_name(in[2]), ta, tb);
}

/* Checks that G, lhs (m, k) and rhs fit (see the table above); *n = the
 * columns of rhs and G. */
static int bwd_shapes(const mxc__op *op, int ta, const mxc__ndarray *g,
                      const mxc__ndarray *a, const mxc__ndarray *b,
                      int64_t *n) {
  int64_t m = a->shape.dims[0], k = a->shape.dims[1];
  int64_t nb = 1, ng = 1;
  for (int i = 1; i < b->shape.ndim; ++i) nb *= b->shape.dims[i];
  for (int i = 1; i < g->shape.ndim; ++i) ng *= g->shape.dims[i];
  int ok = b->shape.ndim >= 1 && g->shape.ndim >= 1 && nb == ng &&
           b->shape.dims[0] == (ta ? m : k) && g->shape.dims[0] == (ta ? k : m);
  if (!ok) {
    char s1[160], s2[160], s3[160];
    return mxc__error_set(
        MXC_ERR_SHAPE,
        "operator '%s': shapes do not fit (transpose_a=%d): ograd %s, lhs "
        "%s, rhs %s",
        op->name, ta, mxc__shape_str(&g->shape, s1, sizeof s1),
        mxc__shape_str(&a->shape, s2, sizeof s2),
        mxc__shape_str(&b->shape, s3, sizeof s3));
  }
  *n = nb;
  return MXC_OK;
}

/* dst[0..count) = src[0..count), index arrays of any index dtypes. */
static void copy_index(const mxc__dense_view *src, const mxc__dense_view *dst,
                       int64_t count) {
  if (src->dtype == dst->dtype) {
    if (count > 0) {
      memcpy(dst->ptr, src->ptr, (size_t)count * mxc__dtype_size(src->dtype));
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    mxc__sparse_idx_set(dst, i, mxc__sparse_idx_get(src, i));
  }
}

/* dlhs: lhs's structure; values x[r, :] . y[c, :]. */
static int sampled_grad(const mxc__sdot_kernels *kern, const mxc__ndarray *a,
                        const void *x, const void *y, int64_t n,
                        const mxc__ndarray *o) {
  int64_t nnz = mxc__sparse_nnz(a);
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(o, nnz));
  mxc__dense_view sp = mxc__sparse_aux(a, 0), si = mxc__sparse_aux(a, 1);
  mxc__dense_view dp = mxc__sparse_aux(o, 0), di = mxc__sparse_aux(o, 1);
  copy_index(&sp, &dp, a->shape.dims[0] + 1);
  copy_index(&si, &di, nnz);
  mxc__sdot_job j;
  memset(&j, 0, sizeof j);
  mxc__sdot_job_csr(&j, a);
  j.dense = x;
  j.dense2 = y;
  j.n = n;
  j.out = mxc__sparse_data(o).ptr;
  int threads = mxc__sdot_threads((double)nnz * (double)n);
  MXC_FORWARD_IF_ERROR(mxc__parallel_for(
      j.rows, mxc__sdot_grain(j.rows, threads), threads, kern->sampled, &j));
  mxc__sparse_set_valid(o);
  return MXC_OK;
}

static int bwd_compute(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__ndarray *in, int n_in,
                       const mxc__ndarray *out, int n_out,
                       const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  int ta = mxc__sdot_flag(op, param, "transpose_a");
  const mxc__ndarray *g = &in[0], *a = &in[1], *b = &in[2];
  MXC_RETURN_ERROR_IF(
      g->stype != MXC_STYPE_DEFAULT || a->stype != MXC_STYPE_CSR ||
          b->stype != MXC_STYPE_DEFAULT || out[0].stype != MXC_STYPE_CSR ||
          mxc__sdot_flag(op, param, "transpose_b"),
      MXC_ERR_STYPE,
      "operator '%s': the sparse kernel takes dense ograd and rhs, a csr "
      "lhs and gives a csr dlhs, without transpose_b",
      op->name);
  /* Outputs with req NULL are not engine dependencies of this call (the
   * caller may free them meanwhile), so they are never touched. */
  const mxc__ndarray *arrs[5] = {g, a, b};
  int n_arrs = 3;
  if (req[0] != MXC__REQ_NULL) arrs[n_arrs++] = &out[0];
  if (req[1] != MXC__REQ_NULL) arrs[n_arrs++] = &out[1];
  const mxc__sdot_kernels *kern = NULL;
  MXC_FORWARD_IF_ERROR(mxc__sdot_prepare(op, arrs, n_arrs, a, &kern));
  int64_t n = 0;
  MXC_FORWARD_IF_ERROR(bwd_shapes(op, ta, g, a, b, &n));
  if (req[1] != MXC__REQ_NULL) {
    MXC_FORWARD_IF_ERROR(
        mxc__sdot_check_out(op, &out[1], b->shape.dims[0], n));
  }
  if (req[0] != MXC__REQ_NULL) {
    MXC_FORWARD_IF_ERROR(
        mxc__sdot_check_out(op, &out[0], a->shape.dims[0], a->shape.dims[1]));
  }
  const void *gp = mxc__ndarray_ptr(g), *bp = mxc__ndarray_ptr(b);
  if (req[1] != MXC__REQ_NULL) {
    mxc__sdot_job j;
    memset(&j, 0, sizeof j);
    mxc__sdot_job_csr(&j, a);
    j.dense = gp;
    j.n = n;
    j.add = req[1] == MXC__REQ_ADD;
    if (!ta) { /* drhs = lhs^T G */
      if (out[1].stype == MXC_STYPE_DEFAULT) j.out = mxc__ndarray_ptr(&out[1]);
      MXC_FORWARD_IF_ERROR(mxc__sdot_run_csrT(op, kern, &j, a, &out[1]));
    } else { /* drhs = lhs G */
      j.out = mxc__ndarray_ptr(&out[1]);
      int threads = mxc__sdot_threads((double)mxc__sparse_nnz(a) * (double)n);
      MXC_FORWARD_IF_ERROR(mxc__parallel_for(j.rows,
                                             mxc__sdot_grain(j.rows, threads),
                                             threads, kern->csr_dense, &j));
    }
  }
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  return ta ? sampled_grad(kern, a, bp, gp, n, &out[0])
            : sampled_grad(kern, a, gp, bp, n, &out[0]);
}

int mxc__sdot_attach_backward(mxc__registry *r) {
  return mxc__registry_attach_stype(r, "_backward_dot", bwd_stype, bwd_compute);
}
