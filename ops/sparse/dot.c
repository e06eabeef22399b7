/* Sparse kernels of dot (the operator is ops/linalg/dot.c; its shapes,
 * dtypes and gradient are unchanged), attached by name:
 *
 *   lhs        rhs         transpose   output
 *   csr        dense       -           dense
 *   csr        dense       a           dense, or row_sparse when the given
 *                                      output is row_sparse (the weight
 *                                      gradient of dot(csr, W): a stored
 *                                      row per csr column holding an entry)
 *   dense      csr         -, b        dense
 *   csr        row_sparse  -           dense
 *   dense      dense       any         dense kernel (GEMM), as before
 *
 * Anything else is MXC_ERR_STYPE, which leaves it to the dense fallback.
 * A csr operand is 2-d; the dense operand is viewed as a matrix as the
 * dense dot does (rhs: (first axis, rest); lhs of dense x csr: (all but
 * last, last)). float32 and float64 values; int32 or int64 indices. Dense
 * outputs honour req write and add. Kernels in dot_tmpl.h. */
#include "ops/sparse/dot.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/op/common.h"
#include "ops/sparse/sparse.h"

/* A bool parameter of dot read through its descriptor, so this file does
 * not depend on the layout of ops/linalg/dot.c's parameter struct. */
int mxc__sdot_flag(const mxc__op *op, const void *param, const char *name) {
  for (int i = 0; i < op->n_params; ++i) {
    if (!strcmp(op->params[i].name, name)) {
      int v;
      memcpy(&v, (const char *)param + op->params[i].offset, sizeof v);
      return v != 0;
    }
  }
  return 0;
}

/* The output storage type of a supported combination, or -1. o is the
 * given output's storage type or -1. */
static int out_stype(int l, int r, int o, int ta, int tb) {
  int dense_ok = o == -1 || o == MXC_STYPE_DEFAULT;
  if (l == MXC_STYPE_CSR && r == MXC_STYPE_DEFAULT && !tb) {
    if (dense_ok) return MXC_STYPE_DEFAULT;
    return ta && o == MXC_STYPE_ROW_SPARSE ? MXC_STYPE_ROW_SPARSE : -1;
  }
  if (l == MXC_STYPE_DEFAULT && r == MXC_STYPE_CSR && !ta) {
    return dense_ok ? MXC_STYPE_DEFAULT : -1;
  }
  if (l == MXC_STYPE_CSR && r == MXC_STYPE_ROW_SPARSE && !ta && !tb) {
    return dense_ok ? MXC_STYPE_DEFAULT : -1;
  }
  return -1;
}

static int sdot_stype(const mxc__op *op, const void *param, const int *in,
                      int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  int ta = mxc__sdot_flag(op, param, "transpose_a"),
      tb = mxc__sdot_flag(op, param, "transpose_b");
  int o = out[0];
  if (in[0] == MXC_STYPE_DEFAULT && in[1] == MXC_STYPE_DEFAULT &&
      (o == -1 || o == MXC_STYPE_DEFAULT)) {
    out[0] = MXC_STYPE_DEFAULT;
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  int st = out_stype(in[0], in[1], o, ta, tb);
  MXC_RETURN_ERROR_IF(
      st < 0, MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for lhs %s, rhs %s, output %s "
      "(transpose_a=%d, transpose_b=%d); sparse kernels: csr x dense, "
      "transpose(csr) x dense (dense or row_sparse output), dense x csr, "
      "dense x transpose(csr), csr x row_sparse",
      op->name, mxc__stype_name(in[0]), mxc__stype_name(in[1]),
      o < 0 ? "(new)" : mxc__stype_name(o), ta, tb);
  out[0] = st;
  *dispatch = MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* ---- planning ---- */

/* Product of dims [from, to). */
static int64_t dims_prod(const mxc__shape *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= s->dims[i];
  return p;
}

static int size_error(const mxc__op *op, const mxc__ndarray *a,
                      const mxc__ndarray *b, int64_t ka, int64_t kb) {
  char s1[160], s2[160];
  return mxc__error_set(
      MXC_ERR_SHAPE,
      "operator '%s': inner dimensions differ: lhs %s contracts %lld "
      "elements, rhs %s contracts %lld",
      op->name, mxc__shape_str(&a->shape, s1, sizeof s1), (long long)ka,
      mxc__shape_str(&b->shape, s2, sizeof s2), (long long)kb);
}

int mxc__sdot_check_out(const mxc__op *op, const mxc__ndarray *o, int64_t rows,
                        int64_t n) {
  int ok = o->shape.ndim >= 1 &&
           (o->stype == MXC_STYPE_DEFAULT
                ? mxc__shape_size(&o->shape) == rows * n
                : o->shape.dims[0] == rows &&
                      dims_prod(&o->shape, 1, o->shape.ndim) == n);
  char s1[160];
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_SHAPE,
                      "operator '%s': output has shape %s; expected %lld x "
                      "%lld elements",
                      op->name, mxc__shape_str(&o->shape, s1, sizeof s1),
                      (long long)rows, (long long)n);
  return MXC_OK;
}

void mxc__sdot_job_csr(mxc__sdot_job *j, const mxc__ndarray *a) {
  j->ptr = mxc__sparse_aux(a, 0).ptr;
  j->idx = mxc__sparse_aux(a, 1).ptr;
  j->val = mxc__sparse_data(a).ptr;
  j->rows = a->shape.dims[0];
  j->cols = a->shape.dims[1];
}

/* One thread below ~64k multiply-adds: the pool's hand-off would cost
 * more than it saves. */
int mxc__sdot_threads(double work) {
  return work >= 65536.0 ? mxc__parallel_threads() : 1;
}

/* Chunks of about 8 per thread, so uneven rows balance out. */
int64_t mxc__sdot_grain(int64_t n, int threads) {
  int64_t g = n / ((int64_t)threads * 8);
  return g < 1 ? 1 : g;
}

/* ---- transpose(csr) x dense ---- */

/* Count of stored entries per csr column into cnt[0..cols). */
static void column_counts(const mxc__ndarray *a, int64_t *cnt) {
  mxc__dense_view ix = mxc__sparse_aux(a, 1);
  int64_t nnz = mxc__sparse_nnz(a);
  if (ix.dtype == MXC_DTYPE_INT64) {
    const int64_t *p = ix.ptr;
    for (int64_t j = 0; j < nnz; ++j) cnt[p[j]]++;
  } else {
    const int32_t *p = ix.ptr;
    for (int64_t j = 0; j < nnz; ++j) cnt[p[j]]++;
  }
}

/* Slices of the transposed product: one per thread, fewer when their
 * private partial outputs (all but slice 0's) would take more than this. */
enum { MAX_SLICES = 64 };
#define SLICE_BYTES_MAX ((size_t)256 << 20)

/* row_sparse output: its stored rows are the csr columns holding an entry.
 * cnt (cols entries, counts) becomes the column -> output row map. */
static int csrT_rsp_alloc(const mxc__ndarray *o, int64_t *cnt, int64_t cols,
                          int64_t *n_rows) {
  int64_t k = 0;
  for (int64_t c = 0; c < cols; ++c) k += cnt[c] > 0;
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(o, k));
  mxc__dense_view ox = mxc__sparse_aux(o, 0);
  k = 0;
  for (int64_t c = 0; c < cols; ++c) {
    if (cnt[c] > 0) {
      mxc__sparse_idx_set(&ox, k, c);
      cnt[c] = k++;
    } else {
      cnt[c] = -1;
    }
  }
  *n_rows = k;
  return MXC_OK;
}

/* Runs the slices, then adds their partial outputs into the output. */
static int run_slices(const mxc__sdot_kernels *kern, mxc__sdot_job *j,
                      size_t esz, int threads) {
  size_t out_bytes = (size_t)(j->out_rows * j->n) * esz;
  int slices = threads < MAX_SLICES ? threads : MAX_SLICES;
  if (slices > j->rows) slices = j->rows > 0 ? (int)j->rows : 1;
  while (slices > 1 && (size_t)(slices - 1) * out_bytes > SLICE_BYTES_MAX) {
    --slices;
  }
  if (out_bytes == 0) slices = 1;
  char *priv = NULL;
  if (slices > 1) {
    priv = mxc__malloc((size_t)(slices - 1) * out_bytes);
    if (!priv) slices = 1; /* no room for partial outputs: one thread */
  }
  void *ptrs[MAX_SLICES];
  ptrs[0] = j->out;
  for (int s = 1; s < slices; ++s) ptrs[s] = priv + (size_t)(s - 1) * out_bytes;
  j->slices = ptrs;
  j->n_slices = slices;
  int rc = mxc__parallel_for(slices, 1, threads, kern->csrT_dense, j);
  if (rc == MXC_OK && slices > 1) {
    rc = mxc__parallel_for(j->out_rows, mxc__sdot_grain(j->out_rows, threads),
                           threads, kern->csrT_reduce, j);
  }
  mxc__free(priv);
  return rc;
}

int mxc__sdot_run_csrT(const mxc__op *op, const mxc__sdot_kernels *kern,
                       mxc__sdot_job *j, const mxc__ndarray *a,
                       const mxc__ndarray *o) {
  int rsp = o->stype == MXC_STYPE_ROW_SPARSE;
  int64_t nnz = mxc__sparse_nnz(a), cols = j->cols;
  int64_t *map = NULL;
  j->out_rows = cols;
  if (rsp) {
    map = mxc__calloc(cols > 0 ? (size_t)cols : 1, sizeof *map);
    MXC_RETURN_ERROR_IF(!map, MXC_ERR_OOM,
                        "operator '%s': out of memory (column counts of "
                        "%lld columns)",
                        op->name, (long long)cols);
    column_counts(a, map);
    int rc = csrT_rsp_alloc(o, map, cols, &j->out_rows);
    if (rc != MXC_OK) {
      mxc__free(map);
      return rc;
    }
    j->out = mxc__sparse_data(o).ptr;
    j->out_row = map;
  }
  int threads = mxc__sdot_threads((double)nnz * (double)j->n);
  int rc = run_slices(kern, j, mxc__dtype_size(a->dtype), threads);
  mxc__free(map);
  if (rc == MXC_OK && rsp) mxc__sparse_set_valid(o);
  return rc;
}

/* ---- compute ---- */

int mxc__sdot_prepare(const mxc__op *op, const mxc__ndarray *const *arrs, int n,
                      const mxc__ndarray *csr, const mxc__sdot_kernels **kern) {
  int dt = arrs[0]->dtype;
  for (int i = 1; i < n; ++i) {
    MXC_RETURN_ERROR_IF(arrs[i]->dtype != dt, MXC_ERR_DTYPE,
                        "operator '%s': the inputs and outputs must share a "
                        "dtype; array %d is %s, array 0 is %s",
                        op->name, i, mxc__dtype_name(arrs[i]->dtype),
                        mxc__dtype_name(dt));
  }
  MXC_RETURN_ERROR_IF(dt != MXC_DTYPE_FLOAT32 && dt != MXC_DTYPE_FLOAT64,
                      MXC_ERR_DTYPE,
                      "operator '%s': sparse dot supports float32 and "
                      "float64 values; got %s",
                      op->name, mxc__dtype_name(dt));
  for (int i = 0; i < n; ++i) {
    if (arrs[i]->stype == MXC_STYPE_DEFAULT) continue;
    char what[64];
    snprintf(what, sizeof what, "operator '%s' array %d", op->name, i);
    MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(arrs[i], what));
  }
  int i64 = mxc__sparse_index_dtype(csr) == MXC_DTYPE_INT64;
  *kern = &mxc__sdot_table[dt == MXC_DTYPE_FLOAT64][i64];
  return MXC_OK;
}

static int sdot_compute(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__ndarray *in, int n_in,
                        const mxc__ndarray *out, int n_out,
                        const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int ta = mxc__sdot_flag(op, param, "transpose_a"),
      tb = mxc__sdot_flag(op, param, "transpose_b");
  const mxc__ndarray *a = &in[0], *b = &in[1], *o = &out[0];
  MXC_RETURN_ERROR_IF(
      out_stype(a->stype, b->stype, o->stype, ta, tb) != o->stype,
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for lhs %s, rhs %s, "
      "output %s",
      op->name, mxc__stype_name(a->stype), mxc__stype_name(b->stype),
      mxc__stype_name(o->stype));
  const mxc__ndarray *csr = a->stype == MXC_STYPE_CSR ? a : b;
  const mxc__sdot_kernels *kern = NULL;
  const mxc__ndarray *arrs[3] = {a, b, o};
  MXC_FORWARD_IF_ERROR(mxc__sdot_prepare(op, arrs, 3, csr, &kern));
  mxc__sdot_job j;
  memset(&j, 0, sizeof j);
  mxc__sdot_job_csr(&j, csr);
  j.add = req[0] == MXC__REQ_ADD;
  if (o->stype == MXC_STYPE_DEFAULT) j.out = mxc__ndarray_ptr(o);
  int64_t nnz = mxc__sparse_nnz(csr);
  if (csr == a) { /* csr (x or transposed) x dense / row_sparse */
    int64_t k = ta ? j.rows : j.cols;
    if (b->shape.dims[0] != k) return size_error(op, a, b, k, b->shape.dims[0]);
    j.n = dims_prod(&b->shape, 1, b->shape.ndim);
    if (b->stype == MXC_STYPE_DEFAULT) j.dense = mxc__ndarray_ptr(b);
    MXC_FORWARD_IF_ERROR(mxc__sdot_check_out(op, o, ta ? j.cols : j.rows, j.n));
    if (ta) return mxc__sdot_run_csrT(op, kern, &j, a, o);
    int threads = mxc__sdot_threads((double)nnz * (double)j.n);
    mxc__parallel_fn fn = kern->csr_dense;
    if (b->stype != MXC_STYPE_DEFAULT) {
      j.rval = mxc__sparse_data(b).ptr;
      j.ridx = mxc__sparse_aux(b, 0).ptr;
      j.rnnz = mxc__sparse_nnz(b);
      j.ridx64 = mxc__sparse_index_dtype(b) == MXC_DTYPE_INT64;
      fn = kern->csr_rsp;
    }
    return mxc__parallel_for(j.rows, mxc__sdot_grain(j.rows, threads), threads,
                             fn, &j);
  }
  /* dense x csr, or dense x transpose(csr) */
  int64_t k = tb ? j.cols : j.rows, ka = a->shape.dims[a->shape.ndim - 1];
  if (ka != k) return size_error(op, a, b, ka, k);
  j.m = dims_prod(&a->shape, 0, a->shape.ndim - 1);
  j.n = tb ? j.rows : j.cols;
  j.dense = mxc__ndarray_ptr(a);
  MXC_FORWARD_IF_ERROR(mxc__sdot_check_out(op, o, j.m, j.n));
  int threads = mxc__sdot_threads((double)j.m * (double)(nnz + (tb ? 0 : k)));
  return mxc__parallel_for(j.m, mxc__sdot_grain(j.m, threads), threads,
                           tb ? kern->dense_csrT : kern->dense_csr, &j);
}

int mxc__sparse_register_dot(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "dot", sdot_stype, sdot_compute));
  return mxc__sdot_attach_backward(r);
}
