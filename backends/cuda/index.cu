// where and its gradient on the GPU (index.h): one grid-stride kernel
// over index_hd.h's element functions (host-tested against the CPU).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"
#include "backends/cuda/index.h"
#include "backends/cuda/index_hd.h"
#include "backends/cuda/shape_rows.h"

namespace {

using namespace mxc_idx;

template <int CT>
__device__ __forceinline__ bool cond_at(const void *cond, long long r) {
  return MxcElem<CT>::load(((const typename MxcElem<CT>::T *)cond)[r]) != 0.f;
}

template <int DT, int CT>
__global__ void where_fwd(const void *cond, const typename MxcElem<DT>::T *x,
                          const typename MxcElem<DT>::T *y,
                          typename MxcElem<DT>::T *out, long long n,
                          long long inner, int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = where_elem<DT>(cond_at<CT>(cond, i / inner), x[i], y[i], out[i],
                            is_add);
  }
}

// dx or dy may be NULL (write mode NULL).
template <int DT, int CT>
__global__ void where_bwd(const typename MxcElem<DT>::T *og, const void *cond,
                          typename MxcElem<DT>::T *dx,
                          typename MxcElem<DT>::T *dy, long long n,
                          long long inner, int add_x, int add_y) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    bool c = cond_at<CT>(cond, i / inner);
    if (dx) dx[i] = where_grad_elem<DT>(c, og[i], dx[i], add_x);
    if (dy) dy[i] = where_grad_elem<DT>(!c, og[i], dy[i], add_y);
  }
}

typedef void (*launch_fn)(const mxc__gpu_call *, long long, long long);

template <class T>
T *out_or_null(const mxc__gpu_call *c, int k) {
  return c->req[k] == MXC__GPU_REQ_NULL ? nullptr : (T *)c->out[k].ptr;
}

template <int DT, int CT>
void launch_fwd(const mxc__gpu_call *c, long long n, long long inner) {
  typedef typename MxcElem<DT>::T T;
  where_fwd<DT, CT><<<MXC__CUDA_GRID(n)>>>(
      c->in[0].ptr, (const T *)c->in[1].ptr, (const T *)c->in[2].ptr,
      (T *)c->out[0].ptr, n, inner, c->req[0] == MXC__GPU_REQ_ADD);
}

template <int DT, int CT>
void launch_bwd(const mxc__gpu_call *c, long long n, long long inner) {
  typedef typename MxcElem<DT>::T T;
  where_bwd<DT, CT><<<MXC__CUDA_GRID(n)>>>(
      (const T *)c->in[0].ptr, c->in[1].ptr, out_or_null<T>(c, 0),
      out_or_null<T>(c, 1), n, inner, c->req[0] == MXC__GPU_REQ_ADD,
      c->req[1] == MXC__GPU_REQ_ADD);
}

#define MXC__WHERE_ROW(L, DT)                                            \
  {L<DT, MXC_DTYPE_FLOAT32>, L<DT, MXC_DTYPE_FLOAT16>,                  \
   L<DT, MXC_DTYPE_BFLOAT16>}
// [data slot][condition slot]
const launch_fn k_fwd[3][3] = {
    MXC__WHERE_ROW(launch_fwd, MXC_DTYPE_FLOAT32),
    MXC__WHERE_ROW(launch_fwd, MXC_DTYPE_FLOAT16),
    MXC__WHERE_ROW(launch_fwd, MXC_DTYPE_BFLOAT16)};
const launch_fn k_bwd[3][3] = {
    MXC__WHERE_ROW(launch_bwd, MXC_DTYPE_FLOAT32),
    MXC__WHERE_ROW(launch_bwd, MXC_DTYPE_FLOAT16),
    MXC__WHERE_ROW(launch_bwd, MXC_DTYPE_BFLOAT16)};

bool ok_dtype(int dt) { return dt < 0 || mxc__half_slot(dt) >= 0; }

// Elements one condition element governs: 1 (x's shape) or a row (1-D
// over x's first axis); 0 when the shapes do not fit.
long long inner_of(const mxc__gpu_array &cond, const mxc__gpu_array &x) {
  bool same = cond.ndim == x.ndim;
  for (int k = 0; same && k < x.ndim; ++k) same = cond.dims[k] == x.dims[k];
  if (same) return 1;
  if (cond.ndim == 1 && x.ndim >= 1 && cond.dims[0] == x.dims[0]) {
    return x.dims[0] ? (long long)(x.size / x.dims[0]) : 1;
  }
  return 0;
}

// Checks the call (condition input cond_in, data-shaped input x_in, the
// rest of x's shape and dtype) and launches the dtypes' kernel.
int run(const char *op, const mxc__gpu_call *c, int cond_in, int x_in,
        const launch_fn (&table)[3][3], char *why, size_t why_len) {
  const mxc__gpu_array &cond = c->in[cond_in], &x = c->in[x_in];
  long long inner = inner_of(cond, x);
  bool fits = inner > 0;
  for (int i = 0; i < c->n_in; ++i) {
    if (i == cond_in) continue;
    fits &= c->in[i].size == x.size && c->in[i].dtype == x.dtype;
  }
  for (int k = 0; k < c->n_out; ++k) {
    fits &= c->out[k].size == x.size && c->out[k].dtype == x.dtype;
  }
  if (!fits || mxc__half_slot(x.dtype) < 0 ||
      mxc__half_slot(cond.dtype) < 0) {
    snprintf(why, why_len,
             "%s: the condition must have x's shape or be 1-D over its "
             "rows, and the other arrays x's shape and dtype (float32, "
             "float16, bfloat16)",
             op);
    return MXC_ERR_SHAPE;
  }
  bool any = false;
  for (int k = 0; k < c->n_out; ++k) any |= c->req[k] != MXC__GPU_REQ_NULL;
  if (!any || x.size == 0) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  table[mxc__half_slot(x.dtype)][mxc__half_slot(cond.dtype)](
      c, (long long)x.size, inner);
  return mxc__cuda_finish(op, why, why_len);
}

bool index_dtype(int dt) {
  return dt < 0 || dt == MXC_DTYPE_INT32 || dt == MXC_DTYPE_INT64 ||
         mxc__half_slot(dt) >= 0;
}

// Embedding forward: one thread per output element.
template <int DT>
__global__ void emb_fwd(const void *idx, int idx_dt,
                        const typename MxcElem<DT>::T *w,
                        typename MxcElem<DT>::T *out, long long total,
                        long long d, long long n, int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < total; i += stride) {
    long long r = i / d, j = i % d;
    int64_t k = clip_index(index_at(idx, idx_dt, r), n);
    out[i] = emb_elem<DT>(w[k * d + j], out[i], is_add);
  }
}

// Embedding gradient: one thread per column (the CPU's order per element;
// no atomics).
__global__ void emb_bwd(const float *g, const void *idx, int idx_dt,
                        long long rows, long long d, long long n, float *dw,
                        int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < d;
       j += stride) {
    emb_grad_column(g, idx, idx_dt, rows, d, n, dw, j, is_add);
  }
}

int emb_check(const char *op, const mxc__gpu_call *c, int n_in, char *why,
              size_t why_len) {
  const EmbParam *p = (const EmbParam *)c->param;
  if (!p || c->n_in != n_in || c->n_out != 1 || p->output_dim < 1 ||
      p->input_dim < 1) {
    snprintf(why, why_len, "%s: parameters, %d inputs and one output "
             "expected", op, n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  return MXC_OK;
}

template <int DT>
void launch_emb(const mxc__gpu_call *c, const EmbParam *p) {
  typedef typename MxcElem<DT>::T T;
  long long total = (long long)c->out[0].size;
  emb_fwd<DT><<<MXC__CUDA_GRID(total)>>>(
      c->in[0].ptr, c->in[0].dtype, (const T *)c->in[1].ptr,
      (T *)c->out[0].ptr, total, p->output_dim, p->input_dim,
      c->req[0] == MXC__GPU_REQ_ADD);
}

// one_hot: one thread per output element, mxc__idx_fill's roundings.
template <int DT>
__global__ void one_hot_k(const void *idx, int idx_dt,
                          typename MxcElem<DT>::T *out, long long total,
                          long long depth, double on, double off,
                          int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < total; i += stride) {
    bool hit = index_int(idx, idx_dt, i / depth) == i % depth;
    out[i] = fill_elem<DT>(hit ? on : off, out[i], is_add);
  }
}

template <int DT>
void launch_one_hot(const mxc__gpu_call *c, const OneHotParam *p) {
  typedef typename MxcElem<DT>::T T;
  long long total = (long long)c->out[0].size;
  one_hot_k<DT><<<MXC__CUDA_GRID(total)>>>(
      c->in[0].ptr, c->in[0].dtype, (T *)c->out[0].ptr, total, p->depth,
      p->on_value, p->off_value, c->req[0] == MXC__GPU_REQ_ADD);
}

}  // namespace

extern "C" int mxc__cuda_one_hot_supports(const int *dtypes, int n_in,
                                          int n_out) {
  return n_in == 1 && n_out == 1 && index_dtype(dtypes[0]) &&
         ok_dtype(dtypes[1]);
}

// indices -> indices.shape + (depth,) of the dtype parameter.
extern "C" int mxc__cuda_one_hot(const mxc__gpu_call *c, char *why,
                                 size_t why_len) {
  const OneHotParam *p = (const OneHotParam *)c->param;
  if (!p || c->n_in != 1 || c->n_out != 1 || p->depth < 1 ||
      c->out[0].size != c->in[0].size * p->depth ||
      mxc__half_slot(c->out[0].dtype) < 0 || !index_dtype(c->in[0].dtype)) {
    snprintf(why, why_len,
             "one_hot: indices (float32, float16, bfloat16, int32, int64) "
             "and an output of indices.shape + (depth,) in float32, "
             "float16 or bfloat16 expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  switch (mxc__half_slot(c->out[0].dtype)) {
    case MXC__HALF_SLOT_F16: launch_one_hot<MXC_DTYPE_FLOAT16>(c, p); break;
    case MXC__HALF_SLOT_BF16: launch_one_hot<MXC_DTYPE_BFLOAT16>(c, p); break;
    default: launch_one_hot<MXC_DTYPE_FLOAT32>(c, p); break;
  }
  return mxc__cuda_finish("one_hot", why, why_len);
}

extern "C" int mxc__cuda_embedding_supports(const int *dtypes, int n_in,
                                            int n_out) {
  if (n_in != 2 || n_out != 1 || !index_dtype(dtypes[0])) return 0;
  int a = dtypes[1], b = dtypes[2];
  if (!ok_dtype(a) || !ok_dtype(b)) return 0;
  return a < 0 || b < 0 || a == b;
}

extern "C" int mxc__cuda_embedding_bwd_supports(const int *dtypes, int n_in,
                                                int n_out) {
  if (n_in != 2 || n_out != 1 || !index_dtype(dtypes[1])) return 0;
  for (int i : {0, 2}) {
    if (dtypes[i] >= 0 && dtypes[i] != MXC_DTYPE_FLOAT32) return 0;
  }
  return 1;
}

// (data, weight) -> out of data.shape + (output_dim).
extern "C" int mxc__cuda_embedding(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  int rc = emb_check("Embedding", c, 2, why, why_len);
  if (rc != MXC_OK) return rc;
  const EmbParam *p = (const EmbParam *)c->param;
  const mxc__gpu_array &w = c->in[1], &o = c->out[0];
  if (w.size != p->input_dim * p->output_dim ||
      o.size != c->in[0].size * p->output_dim || w.dtype != o.dtype ||
      mxc__half_slot(o.dtype) < 0 || !index_dtype(c->in[0].dtype)) {
    snprintf(why, why_len, "Embedding: the weight must be (input_dim, "
             "output_dim) and the output data.shape + (output_dim,), of "
             "one dtype");
    return MXC_ERR_SHAPE;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || o.size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  switch (mxc__half_slot(o.dtype)) {
    case MXC__HALF_SLOT_F16: launch_emb<MXC_DTYPE_FLOAT16>(c, p); break;
    case MXC__HALF_SLOT_BF16: launch_emb<MXC_DTYPE_BFLOAT16>(c, p); break;
    default: launch_emb<MXC_DTYPE_FLOAT32>(c, p); break;
  }
  return mxc__cuda_finish("Embedding", why, why_len);
}

// (ograd, data) -> dweight (input_dim, output_dim), float32.
extern "C" int mxc__cuda_embedding_bwd(const mxc__gpu_call *c, char *why,
                                       size_t why_len) {
  int rc = emb_check("_backward_Embedding", c, 2, why, why_len);
  if (rc != MXC_OK) return rc;
  const EmbParam *p = (const EmbParam *)c->param;
  const mxc__gpu_array &g = c->in[0], &dw = c->out[0];
  long long rows = (long long)c->in[1].size;
  if (dw.size != p->input_dim * p->output_dim ||
      g.size != rows * p->output_dim || g.dtype != MXC_DTYPE_FLOAT32 ||
      dw.dtype != MXC_DTYPE_FLOAT32 || !index_dtype(c->in[1].dtype)) {
    snprintf(why, why_len, "_backward_Embedding: float32 ograd of "
             "data.shape + (output_dim,) and dweight (input_dim, "
             "output_dim) expected");
    return MXC_ERR_SHAPE;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || dw.size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  long long d = p->output_dim;
  emb_bwd<<<MXC__CUDA_GRID(d)>>>((const float *)g.ptr, c->in[1].ptr,
                                  c->in[1].dtype, rows, d, p->input_dim,
                                  (float *)dw.ptr,
                                  c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("_backward_Embedding", why, why_len);
}

extern "C" int mxc__cuda_where_supports(const int *dtypes, int n_in,
                                        int n_out) {
  if (n_in != 3 || n_out != 1 || !ok_dtype(dtypes[0])) return 0;
  int dt = -1;
  for (int i = 1; i < 4; ++i) {
    if (!ok_dtype(dtypes[i])) return 0;
    if (dtypes[i] >= 0 && dt >= 0 && dtypes[i] != dt) return 0;
    if (dtypes[i] >= 0) dt = dtypes[i];
  }
  return 1;
}

extern "C" int mxc__cuda_where_bwd_supports(const int *dtypes, int n_in,
                                            int n_out) {
  if (n_in != 2 || n_out != 2 || !ok_dtype(dtypes[1])) return 0;
  int dt = -1;
  for (int i : {0, 2, 3}) {
    if (!ok_dtype(dtypes[i])) return 0;
    if (dtypes[i] >= 0 && dt >= 0 && dtypes[i] != dt) return 0;
    if (dtypes[i] >= 0) dt = dtypes[i];
  }
  return 1;
}

extern "C" int mxc__cuda_where(const mxc__gpu_call *c, char *why,
                               size_t why_len) {
  if (c->n_in != 3 || c->n_out != 1) {
    snprintf(why, why_len, "where: 3 inputs and 1 output expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  return run("where", c, 0, 1, k_fwd, why, why_len);
}

extern "C" int mxc__cuda_where_bwd(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  if (c->n_in != 2 || c->n_out != 2) {
    snprintf(why, why_len, "_backward_where: 2 inputs and 2 outputs expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  return run("_backward_where", c, 1, 0, k_bwd, why, why_len);
}

// ---- shape_array, size_array (shape_rows.h) ----

namespace {

// The values by value: at most MXC_MAX_NDIM of them.
struct I64Vals {
  long long v[MXC_MAX_NDIM];
};

// Wrapping add in add mode (unsigned arithmetic, as the CPU's int64 add
// on its machines).
__global__ void put_i64_k(I64Vals d, long long *out, int n, int add) {
  int i = threadIdx.x;
  if (i < n) {
    out[i] = add ? (long long)((unsigned long long)out[i] +
                               (unsigned long long)d.v[i])
                 : d.v[i];
  }
}

int put_shape(const mxc__gpu_call *c, bool shape, const char *op, char *why,
              size_t why_len) {
  int n = shape ? c->n_in == 1 ? c->in[0].ndim : -1 : 1;
  if (c->n_in != 1 || c->n_out != 1 || c->out[0].dtype != MXC_DTYPE_INT64 ||
      n < 1 || n > MXC_MAX_NDIM || c->out[0].size != n) {
    snprintf(why, why_len,
             "%s: one input with at least one axis and an int64 output of "
             "%s expected",
             op, shape ? "its ndim elements" : "one element");
    return MXC_ERR_SHAPE;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL) return MXC_OK;
  I64Vals d = {};
  for (int i = 0; i < n; ++i) {
    d.v[i] = shape ? (long long)c->in[0].dims[i] : (long long)c->in[0].size;
  }
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  put_i64_k<<<1, 32, 0, mxc__cuda_stream()>>>(d, (long long *)c->out[0].ptr,
                                              n, c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish(op, why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_shape_array_supports(const int *dtypes, int n_in,
                                              int n_out) {
  return n_in == 1 && n_out == 1 &&
         (dtypes[1] < 0 || dtypes[1] == MXC_DTYPE_INT64);
}

extern "C" int mxc__cuda_shape_array(const mxc__gpu_call *c, char *why,
                                     size_t why_len) {
  return put_shape(c, true, "shape_array", why, why_len);
}

extern "C" int mxc__cuda_size_array(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  return put_shape(c, false, "size_array", why, why_len);
}

// ---- take, _backward_take (shape_rows.h) ----

namespace {

template <int DT>
__global__ void take_k(TakeGeom g, const typename MxcElem<DT>::T *data,
                       const void *idx, int idx_dt,
                       typename MxcElem<DT>::T *out, long long n, int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    typename MxcElem<DT>::T v = data[take_src(g, idx, idx_dt, i)];
    out[i] = is_add ? add<DT>(out[i], v) : v;
  }
}

__global__ void take_grad_k(TakeGeom g, const float *og, const void *idx,
                            int idx_dt, float *dx, long long cols,
                            int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       c < cols; c += stride) {
    take_grad_column(g, og, idx, idx_dt, dx, c, is_add);
  }
}

// raise mode: the indices read back (the call's stream, then its
// completion) and checked on the host before anything is written, as
// take.c's take_setup; the CPU's message.
int take_check_raise(const mxc__gpu_array &idx,
                     const TakeGeom &g, int ax, const char *op, char *why,
                     size_t why_len) {
  if (g.mode != MXC__IDX_RAISE || g.m == 0) return MXC_OK;
  size_t esz = idx.dtype == MXC_DTYPE_INT64 || idx.dtype == MXC_DTYPE_FLOAT64
                   ? 8
               : idx.dtype == MXC_DTYPE_INT32 || idx.dtype == MXC_DTYPE_FLOAT32
                   ? 4
                   : 2;
  void *host = malloc((size_t)g.m * esz);
  if (!host) {
    snprintf(why, why_len, "%s: out of host memory for %lld indices", op,
             (long long)g.m);
    return MXC_ERR_OOM;
  }
  cudaError_t e = cudaMemcpyAsync(host, idx.ptr, (size_t)g.m * esz,
                                  cudaMemcpyDeviceToHost, mxc__cuda_stream());
  if (e == cudaSuccess) e = cudaStreamSynchronize(mxc__cuda_stream());
  int rc = e == cudaSuccess ? MXC_OK
                            : mxc__cuda_rt_fail(why, why_len, op, e);
  for (int64_t j = 0; rc == MXC_OK && j < g.m; ++j) {
    int64_t v = index_int(host, idx.dtype, j);
    if (mxc__idx_fix(v, g.n, g.mode) < 0) {
      snprintf(why, why_len,
               "operator '%s': index %lld is out of range for axis %d of "
               "extent %lld",
               op, (long long)v, ax, (long long)g.n);
      rc = MXC_ERR_INVALID_ARGUMENT;
    }
  }
  free(host);
  return rc;
}

// The geometry of data and idx with the call's parameters, checked.
int take_setup(const mxc__gpu_call *c, const mxc__gpu_array &data,
               const mxc__gpu_array &idx, const mxc__gpu_array &big,
               TakeGeom *g, int *ax, const char *op, char *why,
               size_t why_len) {
  const TakeParam *p = (const TakeParam *)c->param;
  if (!p || take_geom(data.dims, data.ndim, idx.size, *p, g) != 0 ||
      big.size != g->outer * g->m * g->inner || !index_dtype(idx.dtype) ||
      (g->n == 0 && g->m > 0 && g->outer * g->inner > 0)) {
    snprintf(why, why_len,
             "%s: data with the axis, indices (float32, float16, bfloat16, "
             "int32, int64) and an array of data.shape[:axis] + "
             "indices.shape + data.shape[axis+1:] expected",
             op);
    return MXC_ERR_SHAPE;
  }
  *ax = (int)(p->axis < 0 ? p->axis + data.ndim : p->axis);
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  return take_check_raise(idx, *g, *ax, op, why, why_len);
}

template <int DT>
void launch_take(const mxc__gpu_call *c, const TakeGeom &g) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->out[0].size;
  take_k<DT><<<MXC__CUDA_GRID(n)>>>(g, (const T *)c->in[0].ptr,
                                     c->in[1].ptr, c->in[1].dtype,
                                     (T *)c->out[0].ptr, n,
                                     c->req[0] == MXC__GPU_REQ_ADD);
}

}  // namespace

extern "C" int mxc__cuda_take_supports(const int *dtypes, int n_in,
                                       int n_out) {
  if (n_in != 2 || n_out != 1 || !index_dtype(dtypes[1])) return 0;
  int a = dtypes[0], b = dtypes[2];
  return ok_dtype(a) && ok_dtype(b) && (a < 0 || b < 0 || a == b);
}

extern "C" int mxc__cuda_take_bwd_supports(const int *dtypes, int n_in,
                                           int n_out) {
  if (n_in != 3 || n_out != 1 || !index_dtype(dtypes[2])) return 0;
  for (int i : {0, 1, 3}) {
    if (dtypes[i] >= 0 && dtypes[i] != MXC_DTYPE_FLOAT32) return 0;
  }
  return 1;
}

// (data, indices) -> out.
extern "C" int mxc__cuda_take(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  if (c->n_in != 2 || c->n_out != 1 || c->out[0].dtype != c->in[0].dtype ||
      mxc__half_slot(c->out[0].dtype) < 0) {
    snprintf(why, why_len,
             "take: (data, indices) -> out of data's dtype (float32, "
             "float16, bfloat16) expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  TakeGeom g;
  int ax = 0;
  int rc = take_setup(c, c->in[0], c->in[1], c->out[0], &g, &ax, "take",
                      why, why_len);
  if (rc != MXC_OK) return rc;
  switch (mxc__half_slot(c->out[0].dtype)) {
    case MXC__HALF_SLOT_F16: launch_take<MXC_DTYPE_FLOAT16>(c, g); break;
    case MXC__HALF_SLOT_BF16: launch_take<MXC_DTYPE_BFLOAT16>(c, g); break;
    default: launch_take<MXC_DTYPE_FLOAT32>(c, g); break;
  }
  return mxc__cuda_finish("take", why, why_len);
}

// (ograd, data, indices) -> ddata, float32.
extern "C" int mxc__cuda_take_bwd(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  if (c->n_in != 3 || c->n_out != 1 || c->out[0].size != c->in[1].size ||
      c->out[0].dtype != MXC_DTYPE_FLOAT32 ||
      c->in[0].dtype != MXC_DTYPE_FLOAT32) {
    snprintf(why, why_len,
             "_backward_take: (ograd, data, indices) -> a float32 gradient "
             "of data's shape expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  TakeGeom g;
  int ax = 0;
  int rc = take_setup(c, c->in[1], c->in[2], c->in[0], &g, &ax,
                      "_backward_take", why, why_len);
  if (rc != MXC_OK) return rc;
  long long cols = (long long)(g.outer * g.inner);
  take_grad_k<<<MXC__CUDA_GRID(cols)>>>(
      g, (const float *)c->in[0].ptr, c->in[2].ptr, c->in[2].dtype,
      (float *)c->out[0].ptr, cols, c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("_backward_take", why, why_len);
}

// ---- pick, _backward_pick (shape_rows.h) ----

namespace {

template <int DT>
__global__ void pick_k(TakeGeom g, const typename MxcElem<DT>::T *data,
                       const void *idx, int idx_dt,
                       typename MxcElem<DT>::T *out, long long n, int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    typename MxcElem<DT>::T v = data[pick_src(g, idx, idx_dt, i)];
    out[i] = is_add ? add<DT>(out[i], v) : v;
  }
}

__global__ void pick_grad_k(TakeGeom g, const float *og, const void *idx,
                            int idx_dt, float *dx, long long cols,
                            int is_add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       c < cols; c += stride) {
    pick_grad_column(g, og, idx, idx_dt, dx, c, is_add);
  }
}

// data's geometry around the axis; the index (and the small side: output
// or ograd) of outer x inner elements.
int pick_setup(const mxc__gpu_call *c, const mxc__gpu_array &data,
               const mxc__gpu_array &idx, const mxc__gpu_array &small,
               TakeGeom *g, const char *op, char *why, size_t why_len) {
  const PickParam *p = (const PickParam *)c->param;
  TakeParam tp = {p ? p->axis : 0, p ? p->mode : 0};
  if (!p || take_geom(data.dims, data.ndim, 1, tp, g) != 0 ||
      idx.size != g->outer * g->inner || small.size != idx.size ||
      !index_dtype(idx.dtype) || (g->n == 0 && idx.size > 0)) {
    snprintf(why, why_len,
             "%s: data with the axis, an index (float32, float16, bfloat16, "
             "int32, int64) of data's shape without the axis, and an array "
             "of the index's size expected",
             op);
    return MXC_ERR_SHAPE;
  }
  return mxc__cuda_use_device(c->dev, why, why_len);
}

template <int DT>
void launch_pick(const mxc__gpu_call *c, const TakeGeom &g) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->out[0].size;
  pick_k<DT><<<MXC__CUDA_GRID(n)>>>(g, (const T *)c->in[0].ptr,
                                     c->in[1].ptr, c->in[1].dtype,
                                     (T *)c->out[0].ptr, n,
                                     c->req[0] == MXC__GPU_REQ_ADD);
}

}  // namespace

// (data, index) -> out.
extern "C" int mxc__cuda_pick(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  if (c->n_in != 2 || c->n_out != 1 || c->out[0].dtype != c->in[0].dtype ||
      mxc__half_slot(c->out[0].dtype) < 0) {
    snprintf(why, why_len,
             "pick: (data, index) -> out of data's dtype (float32, float16, "
             "bfloat16) expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  TakeGeom g;
  int rc = pick_setup(c, c->in[0], c->in[1], c->out[0], &g, "pick", why,
                      why_len);
  if (rc != MXC_OK) return rc;
  switch (mxc__half_slot(c->out[0].dtype)) {
    case MXC__HALF_SLOT_F16: launch_pick<MXC_DTYPE_FLOAT16>(c, g); break;
    case MXC__HALF_SLOT_BF16: launch_pick<MXC_DTYPE_BFLOAT16>(c, g); break;
    default: launch_pick<MXC_DTYPE_FLOAT32>(c, g); break;
  }
  return mxc__cuda_finish("pick", why, why_len);
}

// (ograd, data, index) -> ddata, float32.
extern "C" int mxc__cuda_pick_bwd(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  if (c->n_in != 3 || c->n_out != 1 || c->out[0].size != c->in[1].size ||
      c->out[0].dtype != MXC_DTYPE_FLOAT32 ||
      c->in[0].dtype != MXC_DTYPE_FLOAT32) {
    snprintf(why, why_len,
             "_backward_pick: (ograd, data, index) -> a float32 gradient of "
             "data's shape expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  TakeGeom g;
  int rc = pick_setup(c, c->in[1], c->in[2], c->in[0], &g, "_backward_pick",
                      why, why_len);
  if (rc != MXC_OK) return rc;
  long long cols = (long long)c->in[2].size;
  pick_grad_k<<<MXC__CUDA_GRID(cols)>>>(
      g, (const float *)c->in[0].ptr, c->in[2].ptr, c->in[2].dtype,
      (float *)c->out[0].ptr, cols, c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("_backward_pick", why, why_len);
}
