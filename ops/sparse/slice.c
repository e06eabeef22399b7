/* Slices of a csr matrix, attached to the shape family's `slice` and
 * `slice_axis`: a box of rows [r0, r0 + nr) and columns [c0, c0 + nc)
 * with step 1 gives a csr output of shape (nr, nc) whose indptr starts
 * at 0 again and whose column indices are shifted by -c0.
 *
 * The box is exactly the dense operator's: its shape inference has run
 * (slice clamps out-of-range indices like Python; slice_axis rejects them
 * with an error naming begin, end and the shape), and the kernel recomputes
 * the box from the same rules and checks it against the output shape.
 * Steps other than 1 (slice's step parameter) and dense or row_sparse
 * inputs are MXC_ERR_STYPE: the dispatcher falls back to the dense kernel.
 *
 * Whole rows (the usual case: a batch of rows) copy one contiguous run of
 * values and indices; a column range binary-searches each row's sorted
 * column indices for its bounds. */
#include <stdio.h>
#include <string.h>

#include "core/op/common.h"
#include "ops/sparse/reduce_parts.h"

static int is_slice_axis(const mxc__op *op) {
  return strcmp(op->name, "slice_axis") == 0;
}

/* 1 when the parameters ask for step 1 everywhere (and can be read). */
static int unit_steps(const mxc__op *op, const void *param) {
  if (is_slice_axis(op)) {
    return mxc__sparse_param(op, param, "axis", MXC__P_INT) != NULL;
  }
  const mxc__tuple *step = mxc__sparse_param(op, param, "step", MXC__P_TUPLE);
  const mxc__tuple *begin = mxc__sparse_param(op, param, "begin", MXC__P_TUPLE);
  if (!step || !begin || begin->ndim > 2) return 0;
  for (int k = 0; k < step->ndim; ++k) {
    if (step->d[k] != 1) return 0;
  }
  return 1;
}

static int slice_stype(const mxc__op *op, const void *param, const int *in,
                       int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  if (in[0] == MXC_STYPE_DEFAULT && out[0] <= MXC_STYPE_DEFAULT) {
    out[0] = MXC_STYPE_DEFAULT;
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(
      in[0] != MXC_STYPE_CSR || (out[0] >= 0 && out[0] != MXC_STYPE_CSR) ||
          !unit_steps(op, param),
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for input storage type %d and "
      "output storage type %d with these parameters; the sparse kernel "
      "slices a csr input with step 1 into a csr output",
      op->name, in[0], out[0]);
  out[0] = MXC_STYPE_CSR;
  *dispatch = MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* Python's slice.indices for step 1 (None is MXC__TUPLE_NONE): the
 * dense `slice` follows the same rules. */
static void unit_slice(int64_t start, int64_t stop, int64_t n, int64_t *first,
                       int64_t *count) {
  if (start == MXC__TUPLE_NONE) start = 0;
  if (stop == MXC__TUPLE_NONE) stop = n;
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  start = start < 0 ? 0 : start > n ? n : start;
  stop = stop < 0 ? 0 : stop > n ? n : stop;
  *first = start;
  *count = stop > start ? stop - start : 0;
}

/* The box [r0, r0 + len[0]) x [c0, c0 + len[1]) from the parameters. */
static void slice_box(const mxc__op *op, const void *param, const mxc__shape *s,
                      int64_t first[2], int64_t len[2]) {
  for (int k = 0; k < 2; ++k) {
    first[k] = 0;
    len[k] = s->dims[k];
  }
  if (is_slice_axis(op)) {
    int64_t ax =
        *(const int64_t *)mxc__sparse_param(op, param, "axis", MXC__P_INT);
    int64_t b =
        *(const int64_t *)mxc__sparse_param(op, param, "begin", MXC__P_INT);
    const mxc__opt_int *e = mxc__sparse_param(op, param, "end", MXC__P_OPT_INT);
    int a = (int)(ax < 0 ? ax + 2 : ax);
    if (a < 0 || a > 1) return; /* the output-shape check reports it */
    int64_t n = s->dims[a];
    int64_t end = !e || !e->has ? n : e->v < 0 ? e->v + n : e->v;
    first[a] = b < 0 ? b + n : b;
    len[a] = end - first[a];
    return;
  }
  const mxc__tuple *begin = mxc__sparse_param(op, param, "begin", MXC__P_TUPLE);
  const mxc__tuple *end = mxc__sparse_param(op, param, "end", MXC__P_TUPLE);
  for (int k = 0; k < begin->ndim && k < 2 && k < end->ndim; ++k) {
    unit_slice(begin->d[k], end->d[k], s->dims[k], &first[k], &len[k]);
  }
}

/* First position in [lo, hi) whose column index is >= c (indices sorted
 * within a row). */
static int64_t lower_bound(const mxc__dense_view *ix, int64_t lo, int64_t hi,
                           int64_t c) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (mxc__sparse_idx_get(ix, mid) < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/* Whole rows r0.. of x into y: one contiguous run. */
static int copy_rows(const mxc__ndarray *x, const mxc__ndarray *y, int64_t r0,
                     int64_t nr) {
  mxc__dense_view ip = mxc__sparse_aux(x, 0), ix = mxc__sparse_aux(x, 1);
  int64_t base = mxc__sparse_idx_get(&ip, r0);
  int64_t nnz = mxc__sparse_idx_get(&ip, r0 + nr) - base;
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(y, nnz));
  mxc__dense_view op = mxc__sparse_aux(y, 0), ox = mxc__sparse_aux(y, 1);
  for (int64_t r = 0; r <= nr; ++r) {
    mxc__sparse_idx_set(&op, r, mxc__sparse_idx_get(&ip, r0 + r) - base);
  }
  size_t esz = mxc__dtype_size(x->dtype), isz = mxc__dtype_size(ix.dtype);
  if (nnz > 0) {
    memcpy(mxc__sparse_data(y).ptr,
           (const char *)mxc__sparse_data(x).ptr + (size_t)base * esz,
           (size_t)nnz * esz);
  }
  if (nnz > 0 && ix.dtype == ox.dtype) {
    memcpy(ox.ptr, (const char *)ix.ptr + (size_t)base * isz,
           (size_t)nnz * isz);
  } else {
    for (int64_t j = 0; j < nnz; ++j) {
      mxc__sparse_idx_set(&ox, j, mxc__sparse_idx_get(&ix, base + j));
    }
  }
  mxc__sparse_set_valid(y);
  return MXC_OK;
}

/* Rows r0.. restricted to columns [c0, c0 + nc), shifted to start at 0. */
static int copy_box(const mxc__ndarray *x, const mxc__ndarray *y, int64_t r0,
                    int64_t nr, int64_t c0, int64_t nc) {
  mxc__dense_view ip = mxc__sparse_aux(x, 0), ix = mxc__sparse_aux(x, 1);
  int64_t nnz = 0;
  for (int64_t r = r0; r < r0 + nr; ++r) {
    int64_t lo = mxc__sparse_idx_get(&ip, r),
            hi = mxc__sparse_idx_get(&ip, r + 1);
    nnz += lower_bound(&ix, lo, hi, c0 + nc) - lower_bound(&ix, lo, hi, c0);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(y, nnz));
  mxc__dense_view op = mxc__sparse_aux(y, 0), ox = mxc__sparse_aux(y, 1);
  size_t esz = mxc__dtype_size(x->dtype);
  const char *sv = mxc__sparse_data(x).ptr;
  char *dv = mxc__sparse_data(y).ptr;
  int64_t k = 0;
  mxc__sparse_idx_set(&op, 0, 0);
  for (int64_t r = 0; r < nr; ++r) {
    int64_t lo = mxc__sparse_idx_get(&ip, r0 + r);
    int64_t hi = mxc__sparse_idx_get(&ip, r0 + r + 1);
    int64_t a = lower_bound(&ix, lo, hi, c0),
            b = lower_bound(&ix, a, hi, c0 + nc);
    if (b > a)
      memcpy(dv + (size_t)k * esz, sv + (size_t)a * esz, (size_t)(b - a) * esz);
    for (int64_t j = a; j < b; ++j) {
      mxc__sparse_idx_set(&ox, k++, mxc__sparse_idx_get(&ix, j) - c0);
    }
    mxc__sparse_idx_set(&op, r + 1, k);
  }
  mxc__sparse_set_valid(y);
  return MXC_OK;
}

static int slice_csr(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__ndarray *in, int n_in,
                     const mxc__ndarray *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__ndarray *x = &in[0], *y = &out[0];
  char what[64];
  snprintf(what, sizeof what, "operator '%s' input 0 (data)", op->name);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(x, what));
  int64_t first[2], len[2];
  slice_box(op, param, &x->shape, first, len);
  MXC_RETURN_ERROR_IF(
      len[0] != y->shape.dims[0] || len[1] != y->shape.dims[1] ||
          first[0] < 0 || first[1] < 0 ||
          first[0] + len[0] > x->shape.dims[0] ||
          first[1] + len[1] > x->shape.dims[1],
      MXC_ERR_INTERNAL,
      "operator '%s': csr slice box [%lld, +%lld) x [%lld, +%lld) does not "
      "match the output shape (%lld, %lld)",
      op->name, (long long)first[0], (long long)len[0], (long long)first[1],
      (long long)len[1], (long long)y->shape.dims[0],
      (long long)y->shape.dims[1]);
  if (first[1] == 0 && len[1] == x->shape.dims[1]) {
    return copy_rows(x, y, first[0], len[0]);
  }
  return copy_box(x, y, first[0], len[0], first[1], len[1]);
}

int mxc__sparse_register_slice(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "slice", slice_stype, slice_csr));
  return mxc__registry_attach_stype(r, "slice_axis", slice_stype, slice_csr);
}
