/* Optimizer updates with a row_sparse gradient: sparse kernels attached to
 * sgd_update, sgd_mom_update, adam_update, adagrad_update and ftrl_update
 * (ops/random/optimizer.c).
 *
 * Storage types: a dense weight, dense states and a row_sparse grad run
 * this kernel, with a dense output (normally the weight itself); all dense
 * runs the dense kernel as before; sgd_update with row_sparse weight and
 * grad gives a row_sparse output (optim_rsp.c); anything else (row_sparse
 * states, a row_sparse weight elsewhere, csr grad, a sparse output for a
 * dense weight) is MXC_ERR_STYPE, left to the dense fallback of
 * core/op/invoke.c.
 *
 * Semantics, as MXNet's:
 *  - lazy_update = true (the default; adagrad_update and ftrl_update have
 *    no such parameter and are always lazy, like MXNet's sparse adagrad
 *    and ftrl): only the rows stored in grad are updated, weight and
 *    states alike, each exactly as the dense kernel updates it
 *    (rescale_grad, clip_gradient, wd), a stored all-zero row included.
 *    Every other row of weight and states keeps its bits.
 *  - lazy_update = false (sgd, sgd_mom, adam): the standard update of every
 *    row, the missing rows with gradient 0 (so weight decay and momentum
 *    still act): the dense result for grad cast to dense.
 *
 * The arithmetic is the dense operator's own: the kernel calls the
 * descriptor's dense compute on blocks of consecutive rows (a run of
 * consecutive stored row indices is contiguous in both weight and grad
 * values), so an updated row is bit-identical to the dense update of that
 * row and the float32 fast paths apply. Blocks are split across the kernel
 * pool; stored row indices are strictly increasing (format-checked), so
 * parts write disjoint rows. */
#include "ops/sparse/optim.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/op/common.h"
#include "core/op/parallel.h"

const void *mxc__sparse_param_field(const mxc__op *op, const void *param,
                                    const char *name, mxc__param_type type) {
  for (int i = 0; i < op->n_params; ++i) {
    const mxc__param_def *d = &op->params[i];
    if (d->type == type && strcmp(d->name, name) == 0) {
      return (const char *)param + d->offset;
    }
  }
  return NULL;
}

/* lazy_update, or 1 for the operators without it (always lazy). */
static int lazy_of(const mxc__op *op, const void *param) {
  const int *f = mxc__sparse_param_field(op, param, "lazy_update", MXC__P_BOOL);
  return f ? *f : 1;
}

/* ---- storage types ---- */

static int lazy_stype(const mxc__op *op, const void *param, const int *in,
                      int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_out;
  if (in[0] == MXC_STYPE_ROW_SPARSE && in[1] == MXC_STYPE_ROW_SPARSE &&
      (out[0] < 0 || out[0] == MXC_STYPE_ROW_SPARSE) &&
      strcmp(op->name, "sgd_update") == 0) {
    out[0] = MXC_STYPE_ROW_SPARSE; /* optim_rsp.c */
    *dispatch = MXC__DISPATCH_SPARSE;
    return MXC_OK;
  }
  int dense = 1;
  for (int i = 0; i < n_in; ++i) dense &= in[i] == MXC_STYPE_DEFAULT;
  int out_ok = out[0] < 0 || out[0] == MXC_STYPE_DEFAULT;
  if (dense && out_ok) {
    out[0] = MXC_STYPE_DEFAULT;
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  int ok = out_ok && in[1] == MXC_STYPE_ROW_SPARSE;
  for (int i = 0; i < n_in; ++i) ok &= i == 1 || in[i] == MXC_STYPE_DEFAULT;
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_STYPE,
                      "operator '%s': no sparse kernel for weight %s, grad "
                      "%s, output %s; it takes a row_sparse grad with dense "
                      "weight, states and output",
                      op->name, mxc__stype_name(in[0]), mxc__stype_name(in[1]),
                      mxc__stype_name(out[0]));
  out[0] = MXC_STYPE_DEFAULT;
  *dispatch = MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* ---- the update ---- */

enum {
  MAX_IN = 4,          /* weight, grad and at most two states */
  PART_ELEMS = 1 << 15 /* elements per part of the row split */
};

typedef struct lazy_job {
  const mxc__op *op;
  const mxc__opctx *ctx;
  const void *param;
  int n_in;
  mxc__req req;
  mxc__blob in[MAX_IN]; /* whole arrays; in[1].ptr unused */
  mxc__blob out;
  size_t row_bytes;
  /* The grad: values (nnz rows) and row indices. */
  const char *gval;
  mxc__dense_view gidx;
  int64_t nnz;
  /* lazy_update = false: zrows rows of zeros standing for missing grad
   * rows. */
  const char *zeros;
  int64_t zrows;
} lazy_job;

/* The dense update of rows [r, r + n) of weight, states and output, with
 * those rows' gradient at g. */
static int run_rows(const lazy_job *j, int64_t r, int64_t n, const void *g) {
  mxc__blob in[MAX_IN], out = j->out;
  size_t off = (size_t)r * j->row_bytes;
  for (int k = 0; k < j->n_in; ++k) {
    in[k] = j->in[k];
    in[k].ptr = (char *)in[k].ptr + off;
    in[k].shape.dims[0] = n;
  }
  in[1].ptr = (void *)g;
  out.ptr = (char *)out.ptr + off;
  out.shape.dims[0] = n;
  return j->op->compute(j->op, j->ctx, j->param, in, j->n_in, &out, 1, &j->req);
}

/* Stored rows are scattered over large weights: without a hint every
 * row's weight and state lines are cache misses taken one after the
 * other. Prefetching the rows a few stored positions ahead overlaps them
 * (hardware prefetchers do not follow an index list). */
enum { PREFETCH_AHEAD = 4, CACHE_LINE = 64, PREFETCH_LINES = 16 };

static void prefetch_row(const lazy_job *j, int64_t k) {
  if (k >= j->nnz) return;
  size_t off = (size_t)mxc__sparse_idx_get(&j->gidx, k) * j->row_bytes;
  /* The start of a long row is enough: the rest streams. */
  size_t len = j->row_bytes < PREFETCH_LINES * CACHE_LINE
                   ? j->row_bytes
                   : PREFETCH_LINES * CACHE_LINE;
  for (int a = 0; a < j->n_in; ++a) {
    if (a == 1) continue; /* grad values are read in order */
    const char *p = (const char *)j->in[a].ptr + off;
    for (size_t b = 0; b < len; b += CACHE_LINE) {
      __builtin_prefetch(p + b, 1);
    }
  }
}

/* Lazy: stored rows [lo, hi) of grad, in runs of consecutive indices. */
static int lazy_part(void *arg, int64_t lo, int64_t hi) {
  const lazy_job *j = arg;
  for (int64_t k = lo; k < lo + PREFETCH_AHEAD && k < hi; ++k) {
    prefetch_row(j, k);
  }
  for (int64_t k = lo; k < hi;) {
    prefetch_row(j, k + PREFETCH_AHEAD);
    int64_t r = mxc__sparse_idx_get(&j->gidx, k), e = k + 1;
    while (e < hi && mxc__sparse_idx_get(&j->gidx, e) == r + (e - k)) ++e;
    MXC_FORWARD_IF_ERROR(
        run_rows(j, r, e - k, j->gval + (size_t)k * j->row_bytes));
    k = e;
  }
  return MXC_OK;
}

/* First stored position whose row index is >= row. */
static int64_t lower_bound(const mxc__dense_view *idx, int64_t n, int64_t row) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (mxc__sparse_idx_get(idx, mid) < row) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/* Standard update: weight rows [lo, hi); stored rows take their gradient,
 * the others zeros. */
static int std_part(void *arg, int64_t lo, int64_t hi) {
  const lazy_job *j = arg;
  int64_t k = lower_bound(&j->gidx, j->nnz, lo);
  for (int64_t r = lo; r < hi;) {
    int64_t next = k < j->nnz ? mxc__sparse_idx_get(&j->gidx, k) : hi;
    if (next == r) { /* a run of stored rows */
      int64_t e = k + 1;
      while (e < j->nnz && r + (e - k) < hi &&
             mxc__sparse_idx_get(&j->gidx, e) == r + (e - k)) {
        ++e;
      }
      MXC_FORWARD_IF_ERROR(
          run_rows(j, r, e - k, j->gval + (size_t)k * j->row_bytes));
      r += e - k;
      k = e;
      continue;
    }
    int64_t n = (next < hi ? next : hi) - r;
    if (n > j->zrows) n = j->zrows;
    MXC_FORWARD_IF_ERROR(run_rows(j, r, n, j->zeros));
    r += n;
  }
  return MXC_OK;
}

static void job_init(lazy_job *j, const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__ndarray *in, int n_in,
                     const mxc__ndarray *out, mxc__req req) {
  memset(j, 0, sizeof *j);
  j->op = op;
  j->ctx = ctx;
  j->param = param;
  j->n_in = n_in;
  j->req = req;
  for (int k = 0; k < n_in; ++k) {
    j->in[k].ptr = k == 1 ? NULL : mxc__ndarray_ptr(&in[k]);
    j->in[k].shape = in[k].shape;
    j->in[k].dtype = in[k].dtype;
    j->in[k].dev = in[k].chunk->dev;
    j->in[k].fmt = MXC__FMT_PLAIN;
  }
  j->out.ptr = mxc__ndarray_ptr(out);
  j->out.shape = out->shape;
  j->out.dtype = out->dtype;
  j->out.dev = out->chunk->dev;
  j->out.fmt = MXC__FMT_PLAIN;
  j->row_bytes =
      (size_t)mxc__sparse_row_elems(&in[0]) * mxc__dtype_size(in[0].dtype);
  mxc__dense_view gv = mxc__sparse_data(&in[1]);
  j->gval = gv.ptr;
  j->gidx = mxc__sparse_aux(&in[1], 0);
  j->nnz = mxc__sparse_nnz(&in[1]);
}

static int lazy_compute(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__ndarray *in, int n_in,
                        const mxc__ndarray *out, int n_out,
                        const mxc__req *req) {
  (void)n_out;
  /* As the dense kernel: REQ_NULL skips the update, states included. */
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC_RETURN_ERROR_IF(n_in > MAX_IN, MXC_ERR_INTERNAL,
                      "operator '%s': %d inputs; the row_sparse update "
                      "handles at most %d",
                      op->name, n_in, MAX_IN);
  char what[96];
  snprintf(what, sizeof what, "operator '%s' input 1 ('grad')", op->name);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(&in[1], what));
  int lazy = lazy_of(op, param);
  if (in[0].stype == MXC_STYPE_ROW_SPARSE) {
    return mxc__sparse_sgd_rsp_rsp(op, ctx, param, in, out, lazy);
  }
  lazy_job j;
  job_init(&j, op, ctx, param, in, n_in, out, req[0]);
  int64_t rows = in[0].shape.dims[0];
  int64_t row_len = mxc__sparse_row_elems(&in[0]);
  if (rows == 0 || row_len == 0) return MXC_OK;
  int64_t grain = PART_ELEMS / row_len > 0 ? PART_ELEMS / row_len : 1;
  int threads = mxc__parallel_threads();
  if (lazy) {
    /* Untouched rows of a separate output still get the weight. With
     * req add they would need out += weight; nothing asks for that. */
    MXC_RETURN_ERROR_IF(req[0] == MXC__REQ_ADD, MXC_ERR_UNSUPPORTED,
                        "operator '%s': accumulating into the output (req "
                        "add) is not supported for a lazy update with a "
                        "row_sparse grad",
                        op->name);
    if (j.out.ptr != j.in[0].ptr) {
      memmove(j.out.ptr, j.in[0].ptr, (size_t)rows * j.row_bytes);
    }
    return mxc__parallel_for(j.nnz, grain, threads, lazy_part, &j);
  }
  j.zrows = PART_ELEMS / row_len > 0 ? PART_ELEMS / row_len : 1;
  if (j.zrows > rows) j.zrows = rows;
  char *zeros = mxc__calloc((size_t)j.zrows, j.row_bytes);
  MXC_RETURN_ERROR_IF(!zeros, MXC_ERR_OOM,
                      "operator '%s': out of memory for %lld zero gradient "
                      "rows",
                      op->name, (long long)j.zrows);
  j.zeros = zeros;
  int rc = mxc__parallel_for(rows, grain, threads, std_part, &j);
  mxc__free(zeros);
  return rc;
}

static const char *const k_lazy_ops[] = {
    "sgd_update",     "sgd_mom_update", "adam_update",
    "adagrad_update", "ftrl_update",
};

int mxc__sparse_register_optim(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_lazy_ops / sizeof k_lazy_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(
        mxc__registry_attach_stype(r, k_lazy_ops[i], lazy_stype, lazy_compute));
  }
  return mxc__sparse_register_embedding(r);
}
