/* _square_sum (alias square_sum): sum of x^2 over axes of a 2-d array,
 * with a row_sparse kernel, and its gradient _backward_square_sum.
 *
 * Parameters: axis (None or () = both axes; 0, 1, -1, -2 or both) and
 * keepdims (reduced axes kept as 1), as for sum. Inputs must be 2-d (as in
 * MXNet) and float32 or float64.
 *
 * Storage types. A dense input runs the dense kernels. A row_sparse input
 * x runs the sparse kernel: missing rows are zero and add nothing, so
 * each result reads the stored rows only. axis=1 with keepdims=true gives
 * a row_sparse (rows, 1) output storing x's stored rows (MXNet's rule;
 * a dense output may be given instead); every other axis choice gives a
 * dense output. The gradient d x = 2 x og (og broadcast over the reduced
 * axes) is row_sparse with x's stored rows for a row_sparse x and a dense
 * or (axis=1) row_sparse og. csr inputs are MXC_ERR_STYPE (fallback). */
#include <stdio.h>
#include <string.h>

#include "core/op/common.h"
#include "ops/sparse/reduce_parts.h"

typedef struct sq_param {
  mxc__tuple axis;
  int keepdims;
} sq_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(sq_param, axis, MXC__P_TUPLE, "None",
               "Axes to reduce (0, 1 or both; negative counts from the "
               "end); None or () reduces both."),
    MXC__PARAM(sq_param, keepdims, MXC__P_BOOL, "false",
               "Keep reduced axes as axes of extent 1."),
};

enum { AX0 = 1, AX1 = 2, ALL = 3 }; /* masks of reduced axes */

/* Reduced axes from the parameters (the input is 2-d), or 0 with an
 * error naming the bad axis. */
static int sq_mask(const char *op, const sq_param *p, int *mask) {
  if (p->axis.ndim <= 0) {
    *mask = ALL;
    return MXC_OK;
  }
  int m = 0;
  for (int k = 0; k < p->axis.ndim; ++k) {
    int64_t a = p->axis.d[k] < 0 ? p->axis.d[k] + 2 : p->axis.d[k];
    MXC_RETURN_ERROR_IF(a < 0 || a > 1 || (m >> a & 1),
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': axis %lld is out of range or "
                        "repeated; expected distinct axes of a 2-d input "
                        "(0, 1, -1 or -2)",
                        op, (long long)p->axis.d[k]);
    m |= 1 << a;
  }
  *mask = m;
  return MXC_OK;
}

static void reduced_shape(const mxc__shape *in, int mask, int keepdims,
                          mxc__shape *out) {
  out->ndim = 0;
  for (int a = 0; a < 2; ++a) {
    if (!(mask >> a & 1)) {
      out->dims[out->ndim++] = in->dims[a];
    } else if (keepdims) {
      out->dims[out->ndim++] = 1;
    }
  }
}

/* slot = want, or MXC_ERR_SHAPE when it is known and differs. */
static int set_shape(const char *op, const char *what, mxc__shape *slot,
                     const mxc__shape *want) {
  char b1[160], b2[160];
  if (slot->ndim < 0) {
    *slot = *want;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, want), MXC_ERR_SHAPE,
                      "operator '%s': %s has shape %s; expected %s", op, what,
                      mxc__shape_str(slot, b1, sizeof b1),
                      mxc__shape_str(want, b2, sizeof b2));
  return MXC_OK;
}

static int check_2d(const char *op, const mxc__shape *x) {
  char b[160];
  MXC_RETURN_ERROR_IF(x->ndim != 2, MXC_ERR_SHAPE,
                      "operator '%s': data has shape %s; expected a 2-d "
                      "array",
                      op, mxc__shape_str(x, b, sizeof b));
  return MXC_OK;
}

/* Forward (data) -> out, backward (ograd, data) -> d data: `x` is data's
 * slot, `red` the reduced one. */
static int sq_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  (void)n_out;
  int bwd = n_in == 2;
  mxc__shape *x = bwd ? &in[1] : &in[0];
  if (bwd && x->ndim < 0 && out[0].ndim >= 0) *x = out[0];
  if (x->ndim < 0) return MXC_OK;
  MXC_FORWARD_IF_ERROR(check_2d(op->name, x));
  const sq_param *p = param;
  int mask;
  MXC_FORWARD_IF_ERROR(sq_mask(op->name, p, &mask));
  mxc__shape r;
  reduced_shape(x, mask, p->keepdims, &r);
  if (!bwd) return set_shape(op->name, "output 0", &out[0], &r);
  MXC_FORWARD_IF_ERROR(set_shape(op->name, "input 0 (ograd)", &in[0], &r));
  return set_shape(op->name, "output 0", &out[0], x);
}

static int sq_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int dt = in[0];
  if (dt >= 0 && dt != MXC_DTYPE_FLOAT32 && dt != MXC_DTYPE_FLOAT64) {
    return mxc__unsupported_dtype(op->name, dt, "expected float32 or float64");
  }
  return MXC_OK;
}

/* ---- storage types ---- */

static int fwd_stype(const mxc__op *op, const void *param, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  const sq_param *p = param;
  if (in[0] == MXC_STYPE_DEFAULT && out[0] <= MXC_STYPE_DEFAULT) {
    out[0] = MXC_STYPE_DEFAULT;
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  int mask = 0;
  if (sq_mask(op->name, p, &mask) != MXC_OK) mask = 0;
  int rsp_out = mask == AX1 && p->keepdims;
  MXC_RETURN_ERROR_IF(
      in[0] != MXC_STYPE_ROW_SPARSE || mask == 0 ||
          (out[0] == MXC_STYPE_ROW_SPARSE && !rsp_out) ||
          out[0] == MXC_STYPE_CSR,
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for input storage type %d and "
      "output storage type %d; the sparse kernel takes row_sparse data "
      "and gives a row_sparse output for axis=1, keepdims=true, else a "
      "dense one",
      op->name, in[0], out[0]);
  if (out[0] < 0) out[0] = rsp_out ? MXC_STYPE_ROW_SPARSE : MXC_STYPE_DEFAULT;
  *dispatch = MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

static int bwd_stype(const mxc__op *op, const void *param, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  int og = in[0], x = in[1];
  if (og == MXC_STYPE_DEFAULT && x == MXC_STYPE_DEFAULT &&
      out[0] <= MXC_STYPE_DEFAULT) {
    out[0] = MXC_STYPE_DEFAULT;
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  int mask = 0;
  if (sq_mask(op->name, param, &mask) != MXC_OK) mask = 0;
  MXC_RETURN_ERROR_IF(
      x != MXC_STYPE_ROW_SPARSE || mask == 0 ||
          (og != MXC_STYPE_DEFAULT &&
           !(og == MXC_STYPE_ROW_SPARSE && mask == AX1)) ||
          (out[0] >= 0 && out[0] != MXC_STYPE_ROW_SPARSE),
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for ograd of storage type %d, data "
      "of storage type %d and an output of storage type %d; the sparse "
      "kernel takes row_sparse data with a dense ograd (or a row_sparse "
      "one for axis=1) and gives a row_sparse gradient",
      op->name, og, x, out[0]);
  out[0] = MXC_STYPE_ROW_SPARSE;
  *dispatch = MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* ---- kernels: float32 or float64 values, accumulated in double ---- */

static inline double ld(const void *p, int f64, int64_t i) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void st(void *p, int f64, int64_t i, double v, mxc__req req) {
  if (f64) {
    MXC__ASSIGN(req, ((double *)p)[i], v);
  } else {
    MXC__ASSIGN(req, ((float *)p)[i], (float)v);
  }
}

/* Sum of squares of the rows x rows `n` by `cols` block at p into y
 * (shape per mask: one value per row (AX1), per column (AX0) or one in
 * all). row_at maps block row k to its output row (NULL: k itself). The
 * caller has zeroed y for rows the block does not cover. */
static void sq_block(const void *p, int f64, int64_t n, int64_t cols, int mask,
                     const mxc__dense_view *row_at, void *y, mxc__req req) {
  if (mask == AX1) {
    for (int64_t k = 0; k < n; ++k) {
      double a = 0;
      for (int64_t c = 0; c < cols; ++c) {
        double v = ld(p, f64, k * cols + c);
        a += v * v;
      }
      st(y, f64, row_at ? mxc__sparse_idx_get(row_at, k) : k, a, req);
    }
    return;
  }
  if (mask == ALL) {
    double total = 0;
    for (int64_t i = 0; i < n * cols; ++i) {
      double v = ld(p, f64, i);
      total += v * v;
    }
    st(y, f64, 0, total, req);
    return;
  }
  /* AX0: columns in tiles, rows read in memory order within a tile. */
  enum { TILE = 256 };
  double acc[TILE];
  for (int64_t c0 = 0; c0 < cols; c0 += TILE) {
    int64_t w = cols - c0 < TILE ? cols - c0 : TILE;
    for (int64_t c = 0; c < w; ++c) acc[c] = 0;
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t c = 0; c < w; ++c) {
        double v = ld(p, f64, k * cols + c0 + c);
        acc[c] += v * v;
      }
    }
    for (int64_t c = 0; c < w; ++c) st(y, f64, c0 + c, acc[c], req);
  }
}

static int fwd_dense(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int mask;
  MXC_FORWARD_IF_ERROR(sq_mask(op->name, param, &mask));
  sq_block(in[0].ptr, in[0].dtype == MXC_DTYPE_FLOAT64, in[0].shape.dims[0],
           in[0].shape.dims[1], mask, NULL, out[0].ptr, req[0]);
  return MXC_OK;
}

static int fwd_sparse(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__ndarray *in, int n_in,
                      const mxc__ndarray *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__ndarray *x = &in[0], *y = &out[0];
  char what[64];
  snprintf(what, sizeof what, "operator '%s' input 0 (data)", op->name);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(x, what));
  int mask;
  MXC_FORWARD_IF_ERROR(sq_mask(op->name, param, &mask));
  int f64 = x->dtype == MXC_DTYPE_FLOAT64;
  int64_t nnz = mxc__sparse_nnz(x), cols = x->shape.dims[1];
  mxc__dense_view ids = mxc__sparse_aux(x, 0);
  const void *p = mxc__sparse_data(x).ptr;
  if (y->stype == MXC_STYPE_ROW_SPARSE) { /* axis 1, keepdims */
    MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(y, nnz));
    mxc__dense_view oid = mxc__sparse_aux(y, 0);
    for (int64_t k = 0; k < nnz; ++k) {
      mxc__sparse_idx_set(&oid, k, mxc__sparse_idx_get(&ids, k));
    }
    sq_block(p, f64, nnz, cols, AX1, NULL, mxc__sparse_data(y).ptr,
             MXC__REQ_WRITE);
    mxc__sparse_set_valid(y);
    return MXC_OK;
  }
  void *yp = mxc__ndarray_ptr(y);
  if (mask == AX1 && req[0] != MXC__REQ_ADD) {
    memset(yp, 0, mxc__ndarray_nbytes(y)); /* rows x does not store */
  }
  sq_block(p, f64, nnz, cols, mask, mask == AX1 ? &ids : NULL, yp, req[0]);
  return MXC_OK;
}

/* og value for element (r, c) of data under mask (og dense). */
static inline int64_t og_at(int mask, int64_t r, int64_t c) {
  return mask == AX1 ? r : mask == AX0 ? c : 0;
}

static int bwd_dense(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int mask;
  MXC_FORWARD_IF_ERROR(sq_mask(op->name, param, &mask));
  int f64 = in[1].dtype == MXC_DTYPE_FLOAT64;
  int64_t rows = in[1].shape.dims[0], cols = in[1].shape.dims[1];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      double g = ld(in[0].ptr, f64, og_at(mask, r, c));
      st(out[0].ptr, f64, r * cols + c,
         2 * ld(in[1].ptr, f64, r * cols + c) * g, req[0]);
    }
  }
  return MXC_OK;
}

static int bwd_sparse(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__ndarray *in, int n_in,
                      const mxc__ndarray *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__ndarray *og = &in[0], *x = &in[1], *dx = &out[0];
  char what[64];
  snprintf(what, sizeof what, "operator '%s' input 1 (data)", op->name);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(x, what));
  int og_rsp = og->stype == MXC_STYPE_ROW_SPARSE;
  if (og_rsp) {
    snprintf(what, sizeof what, "operator '%s' input 0 (ograd)", op->name);
    MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(og, what));
  }
  int mask;
  MXC_FORWARD_IF_ERROR(sq_mask(op->name, param, &mask));
  int f64 = x->dtype == MXC_DTYPE_FLOAT64;
  int64_t nnz = mxc__sparse_nnz(x), cols = x->shape.dims[1];
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(dx, nnz));
  mxc__dense_view ids = mxc__sparse_aux(x, 0), oid = mxc__sparse_aux(dx, 0);
  mxc__dense_view gids;
  int64_t gn = 0, gk = 0;
  if (og_rsp) {
    gids = mxc__sparse_aux(og, 0);
    gn = mxc__sparse_nnz(og);
  }
  const void *g = og_rsp ? mxc__sparse_data(og).ptr : mxc__ndarray_ptr(og);
  const void *xv = mxc__sparse_data(x).ptr;
  void *d = mxc__sparse_data(dx).ptr;
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t r = mxc__sparse_idx_get(&ids, k);
    mxc__sparse_idx_set(&oid, k, r);
    /* A row_sparse og (axis 1) has one value per stored row; both id
     * lists are sorted, so one forward walk finds them. */
    int64_t gi = -1;
    if (og_rsp) {
      while (gk < gn && mxc__sparse_idx_get(&gids, gk) < r) ++gk;
      if (gk < gn && mxc__sparse_idx_get(&gids, gk) == r) gi = gk;
    }
    for (int64_t c = 0; c < cols; ++c) {
      double gv = og_rsp ? (gi >= 0 ? ld(g, f64, gi) : 0.0)
                         : ld(g, f64, og_at(mask, r, c));
      st(d, f64, k * cols + c, 2 * ld(xv, f64, k * cols + c) * gv,
         MXC__REQ_WRITE);
    }
  }
  mxc__sparse_set_valid(dx);
  return MXC_OK;
}

/* d data = _backward_square_sum(ograd, data) with the same parameters. */
static int sq_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                       mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[0]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op_like("_backward_square_sum", fwd, ins, 2, &b));
  igrad[0] = mxc__entry_ref(b, 0);
  mxc__node_release(b); /* the entry holds it now */
  return MXC_OK;
}

static const char *const k_aliases[] = {"square_sum", NULL};
static const char *const k_in[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "_square_sum",
        .aliases = k_aliases,
        .doc = "Sum of squares over axes (0, 1 or both) of a 2-d array; "
               "row_sparse input reads only its stored rows.",
        MXC__PARAMS_OF(sq_param, k_params),
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = sq_shape,
        .infer_type = sq_type,
        .compute = fwd_dense,
        .infer_stype = fwd_stype,
        .compute_sparse = fwd_sparse,
        .gradient = sq_gradient,
        .backward_uses_inputs = 1,
    },
    {
        .name = "_backward_square_sum",
        .doc = "Gradient of _square_sum: 2 * data * ograd (broadcast).",
        MXC__PARAMS_OF(sq_param, k_params),
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = sq_shape,
        .infer_type = sq_type,
        .compute = bwd_dense,
        .infer_stype = bwd_stype,
        .compute_sparse = bwd_sparse,
        .hidden = 1,
    },
};

int mxc__sparse_register_square_sum(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[0]));
  return mxc__registry_add(r, &k_ops[1]);
}
