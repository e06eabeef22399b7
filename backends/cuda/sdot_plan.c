/* The cuSPARSE kernel's plan: see sdot_plan.h. */
#include "backends/cuda/sdot_plan.h"

#include <stdio.h>

int mxc__sdot_stypes(const int *stypes, int n_in, int n_out) {
  return n_in == 2 && n_out == 1 && stypes[0] == MXC_STYPE_CSR &&
         stypes[1] == MXC_STYPE_DEFAULT &&
         (stypes[2] == MXC_STYPE_DEFAULT || stypes[2] == -1);
}

int mxc__sdot_dtypes(const int *dtypes, int n_in, int n_out) {
  if (n_in != 2 || n_out != 1) return 0;
  int dt = dtypes[0];
  if (dt != MXC_DTYPE_FLOAT32 && dt != MXC_DTYPE_FLOAT64) return 0;
  return dtypes[1] == dt && (dtypes[2] == dt || dtypes[2] == -1);
}

static int64_t prod_from(const mxc__gpu_array *a, int from) {
  int64_t p = 1;
  for (int d = from; d < a->ndim; ++d) p *= a->dims[d];
  return p;
}

/* The call's arrays are what the CPU's sparse dot takes for csr x dense
 * (ops/sparse/dot.c): a 2-d CSR, a dense rhs of at least 1 dimension,
 * one dtype, transpose_b off. */
static int check_call(const mxc__gpu_call *c, char *why, size_t n) {
  const mxc__dot_param *prm = c->param;
  if (c->n_in != 2 || c->n_out != 1 || !prm) {
    snprintf(why, n, "sparse dot: expected 2 inputs, 1 output and dot's "
             "parameters; got %d inputs, %d outputs", c->n_in, c->n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  const mxc__gpu_array *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
  if (a->stype != MXC_STYPE_CSR || a->ndim != 2 ||
      b->stype != MXC_STYPE_DEFAULT || b->ndim < 1 ||
      o->stype != MXC_STYPE_DEFAULT || prm->transpose_b) {
    snprintf(why, n, "sparse dot on the GPU takes csr x dense -> dense "
             "(transpose_a allowed, transpose_b not); got storage types "
             "%d x %d -> %d, transpose_b=%d", a->stype, b->stype, o->stype,
             prm->transpose_b);
    return MXC_ERR_STYPE;
  }
  int dts[3] = {a->dtype, b->dtype, o->dtype};
  if (!mxc__sdot_dtypes(dts, 2, 1) || (a->index_dtype != MXC_DTYPE_INT32 &&
                                       a->index_dtype != MXC_DTYPE_INT64)) {
    snprintf(why, n, "sparse dot on the GPU takes float32 or float64 "
             "values, one dtype for all arrays, int32 or int64 indices; got "
             "dtypes %d, %d, %d and index dtype %d", a->dtype, b->dtype,
             o->dtype, a->index_dtype);
    return MXC_ERR_DTYPE;
  }
  return MXC_OK;
}

/* Shapes: B's first axis is the contraction, C holds m x n elements. */
static int plan_shapes(const mxc__gpu_call *c, mxc__sdot_plan *p, char *why,
                       size_t n) {
  const mxc__gpu_array *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
  int64_t k = p->trans_a ? a->dims[0] : a->dims[1];
  if (b->dims[0] != k) {
    snprintf(why, n, "sparse dot: the csr (%lld, %lld)%s contracts %lld "
             "elements, the rhs's first axis has %lld",
             (long long)a->dims[0], (long long)a->dims[1],
             p->trans_a ? " transposed" : "", (long long)k,
             (long long)b->dims[0]);
    return MXC_ERR_SHAPE;
  }
  if (a->nnz < 0 || a->nnz > a->size) {
    snprintf(why, n, "sparse dot: nnz %lld is out of range for a (%lld, "
             "%lld) csr", (long long)a->nnz, (long long)a->dims[0],
             (long long)a->dims[1]);
    return MXC_ERR_SHAPE;
  }
  p->b_rows = k;
  p->b_cols = p->ldb = prod_from(b, 1);
  p->c_rows = p->trans_a ? a->dims[1] : a->dims[0];
  p->c_cols = p->ldc = p->b_cols;
  if (o->size != p->c_rows * p->c_cols) {
    snprintf(why, n, "sparse dot: the output holds %lld elements; expected "
             "%lld x %lld", (long long)o->size, (long long)p->c_rows,
             (long long)p->c_cols);
    return MXC_ERR_SHAPE;
  }
  return MXC_OK;
}

/* cuSPARSE wants ld >= 1 even for a single column; an empty output never
 * reaches it. */
static int kind_of(const mxc__gpu_call *c, const mxc__sdot_plan *p) {
  if (c->req[0] == MXC__GPU_REQ_NULL || p->c_rows * p->c_cols == 0) {
    return MXC__SDOT_NOTHING;
  }
  if (p->nnz == 0 || p->b_rows == 0) {
    /* Every element of op(A) B is an empty sum: 0, which adds nothing. */
    return c->req[0] == MXC__GPU_REQ_ADD ? MXC__SDOT_NOTHING : MXC__SDOT_ZERO;
  }
  return MXC__SDOT_SPMM;
}

int mxc__sdot_plan_make(const mxc__gpu_call *c, mxc__sdot_plan *p, char *why,
                        size_t why_len) {
  int rc = check_call(c, why, why_len);
  if (rc != MXC_OK) return rc;
  const mxc__dot_param *prm = c->param;
  const mxc__gpu_array *a = &c->in[0];
  *p = (mxc__sdot_plan){0};
  p->trans_a = prm->transpose_a != 0;
  p->a_rows = a->dims[0];
  p->a_cols = a->dims[1];
  p->nnz = a->nnz;
  p->index64 = a->index_dtype == MXC_DTYPE_INT64;
  p->f64 = a->dtype == MXC_DTYPE_FLOAT64;
  rc = plan_shapes(c, p, why, why_len);
  if (rc != MXC_OK) return rc;
  p->alpha = 1.0;
  p->beta = c->req[0] == MXC__GPU_REQ_ADD ? 1.0 : 0.0;
  p->c_bytes = (size_t)(p->c_rows * p->c_cols) * (p->f64 ? 8u : 4u);
  p->kind = kind_of(c, p);
  return MXC_OK;
}
