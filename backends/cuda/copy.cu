// The copy family on the GPU (copy.h): gathers and scatters over
// copy_plan.h's plans (host-tested against the CPU operators), one thread
// per element on a grid-stride loop; tile's and repeat's gradients one
// thread per input element summing its copies.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/copy.h"
#include "backends/cuda/copy_plan.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"

namespace {

// out[i] = src[plan's offset of i]: the stored bits (write), or old +
// src in float rounded once (add). The plan travels by value.
template <int DT>
__global__ void gather(const typename MxcElem<DT>::T *src,
                       typename MxcElem<DT>::T *out, mxc__copy_plan p,
                       long long n, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    typename E::T v = src[mxc__copy_src(&p, i)];
    out[i] = add ? E::store(E::load(out[i]) + E::load(v)) : v;
  }
}

// dst[plan's offset of i] = src[i] (write) or += (add): the slices'
// gradients; the box's elements are distinct, so no two threads write
// one element.
template <int DT>
__global__ void scatter(const typename MxcElem<DT>::T *src,
                        typename MxcElem<DT>::T *dst, mxc__copy_plan p,
                        long long n, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t o = mxc__copy_src(&p, i);
    dst[o] = add ? E::store(E::load(dst[o]) + E::load(src[i])) : src[i];
  }
}

template <int DT>
void launch_scatter(const mxc__gpu_call *c, const mxc__copy_plan &p) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->in[0].size;
  scatter<DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                      (T *)c->out[0].ptr, p, n,
                                      c->req[0] == MXC__GPU_REQ_ADD);
}

template <int DT>
void launch(const mxc__gpu_call *c, const mxc__copy_plan &p) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->out[0].size;
  gather<DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                     (T *)c->out[0].ptr, p, n,
                                     c->req[0] == MXC__GPU_REQ_ADD);
}

void launch_slot(const mxc__gpu_call *c, const mxc__copy_plan &p, bool bwd) {
  switch (mxc__half_slot(c->out[0].dtype)) {
    case MXC__HALF_SLOT_F16:
      bwd ? launch_scatter<MXC_DTYPE_FLOAT16>(c, p)
          : launch<MXC_DTYPE_FLOAT16>(c, p);
      break;
    case MXC__HALF_SLOT_BF16:
      bwd ? launch_scatter<MXC_DTYPE_BFLOAT16>(c, p)
          : launch<MXC_DTYPE_BFLOAT16>(c, p);
      break;
    default:
      bwd ? launch_scatter<MXC_DTYPE_FLOAT32>(c, p)
          : launch<MXC_DTYPE_FLOAT32>(c, p);
      break;
  }
}

int run(int kind, const char *op, const mxc__gpu_call *c, char *why,
        size_t why_len) {
  int n_in = kind == MXC__CP_BROADCAST ? c->n_in : 1;  // broadcast_like: 2
  if (c->n_in != n_in || n_in < 1 || c->n_out != 1 ||
      c->in[0].dtype != c->out[0].dtype || mxc__half_slot(c->in[0].dtype) < 0) {
    snprintf(why, why_len,
             "%s: one input and one output of one dtype (float32, float16 "
             "or bfloat16) expected",
             op);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  mxc__copy_plan p;
  char what[200] = "";
  int rc = mxc__copy_plan_make(kind, c->param, &c->in[0], &c->out[0], &p,
                               what, sizeof what);
  if (rc != MXC_OK) {
    snprintf(why, why_len, "%s: %s", op, what);
    return rc;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  launch_slot(c, p, false);
  return mxc__cuda_finish(op, why, why_len);
}

// Zeros the output before a scatter into part of it, unless add.
int clear_unless_add(const mxc__gpu_call *c, const char *op, char *why,
                     size_t why_len) {
  if (c->req[0] == MXC__GPU_REQ_ADD) return MXC_OK;
  size_t bytes = (size_t)c->out[0].size *
                 (c->out[0].dtype == MXC_DTYPE_FLOAT32 ? 4 : 2);
  cudaError_t e = cudaMemsetAsync(c->out[0].ptr, 0, bytes, mxc__cuda_stream());
  return e == cudaSuccess ? MXC_OK : mxc__cuda_rt_fail(why, why_len, op, e);
}

// slice, slice_axis, slice_like (data[, shape_like] -> box) and their
// gradients ((ograd, data) -> data-shaped: cleared unless add, then the
// box scattered in).
int run_slice(int kind, const char *op, bool bwd, const mxc__gpu_call *c,
              char *why, size_t why_len) {
  int n_in = bwd || kind == MXC__CP_SLICE_LIKE ? 2 : 1;
  if (c->n_in != n_in || c->n_out != 1 ||
      c->in[0].dtype != c->out[0].dtype || mxc__half_slot(c->in[0].dtype) < 0) {
    snprintf(why, why_len,
             "%s: %d inputs and one output of one dtype (float32, float16 "
             "or bfloat16) expected",
             op, n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  const mxc__gpu_array &data = bwd ? c->out[0] : c->in[0];
  const mxc__gpu_array &box = bwd ? c->in[0] : c->out[0];
  mxc__copy_plan p;
  char what[200] = "";
  int rc = mxc__copy_plan_slice(kind, c->param, &data, &box, &p, what,
                                sizeof what);
  if (rc != MXC_OK) {
    snprintf(why, why_len, "%s: %s", op, what);
    return rc;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  if (bwd) {
    rc = clear_unless_add(c, op, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  if (box.size > 0) launch_slot(c, p, bwd);
  return mxc__cuda_finish(op, why, why_len);
}

// One part of a join or split: gather (whole -> part) or scatter (part
// -> whole), n = the part's elements.
template <int DT>
void launch_part(bool to_whole, const void *part, const void *whole,
                 const mxc__copy_plan &p, long long n, int add) {
  typedef typename MxcElem<DT>::T T;
  if (to_whole) {
    scatter<DT><<<MXC__CUDA_GRID(n)>>>((const T *)part, (T *)whole, p, n, add);
  } else {
    gather<DT><<<MXC__CUDA_GRID(n)>>>((const T *)whole, (T *)part, p, n, add);
  }
}

void part_slot(int slot, bool to_whole, const void *part, const void *whole,
               const mxc__copy_plan &p, long long n, int add) {
  if (slot == MXC__HALF_SLOT_F16) {
    launch_part<MXC_DTYPE_FLOAT16>(to_whole, part, whole, p, n, add);
  } else if (slot == MXC__HALF_SLOT_BF16) {
    launch_part<MXC_DTYPE_BFLOAT16>(to_whole, part, whole, p, n, add);
  } else {
    launch_part<MXC_DTYPE_FLOAT32>(to_whole, part, whole, p, n, add);
  }
}

// Every array of the call of one dtype the kernels take.
bool one_dtype(const mxc__gpu_call *c) {
  int dt = c->out[0].dtype;
  for (int i = 0; i < c->n_in; ++i) dt = c->in[i].dtype == dt ? dt : -1;
  for (int i = 0; i < c->n_out; ++i) dt = c->out[i].dtype == dt ? dt : -1;
  return dt >= 0 && mxc__half_slot(dt) >= 0;
}

// How run_parts reads the parts' extents along the axis.
enum { PARTS_CONCAT, PARTS_SPLIT, PARTS_STACK };

// Extent of a part along the whole's axis ax: its own (Concat), the
// whole's divided by the count (split), 1 (stack: the part lacks the
// axis, the same elements in the same order).
int64_t part_ext(int mode, const mxc__gpu_array *whole, int ax, int n,
                 const mxc__gpu_array *part) {
  if (mode == PARTS_SPLIT) return whole->dims[ax] / n;
  return mode == PARTS_STACK ? 1 : part->dims[ax];
}

// Concat (parts -> whole) and _backward_Concat (whole -> parts), split
// (whole -> parts) and _backward_split (parts -> whole), stack (parts ->
// whole) and _backward_stack: the parts in order along the axis, each
// with its extent (part_ext). to_whole: the parts are the inputs.
int run_parts(const char *op, bool to_whole, int axis_param, int mode,
              const mxc__gpu_call *c, char *why, size_t why_len) {
  if (!c->param || c->n_in < 1 || c->n_out < 1) {
    snprintf(why, why_len, "%s: parameters, inputs and outputs expected", op);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  const mxc__gpu_array *whole = to_whole ? &c->out[0] : &c->in[0];
  const mxc__gpu_array *parts = to_whole ? c->in : c->out;
  int n = to_whole ? c->n_in : c->n_out;
  if (!one_dtype(c) || whole->ndim < 1) {
    snprintf(why, why_len, "%s: arrays of one dtype (float32, float16 or "
             "bfloat16) and at least one part expected", op);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int nd = whole->ndim;
  int ax = axis_param < 0 ? axis_param + nd : axis_param;
  if (ax < 0 || ax >= nd) {
    snprintf(why, why_len, "%s: axis %d outside [%d, %d)", op, axis_param,
             -nd, nd);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int64_t total = 0;
  int64_t inner = whole->dims[ax] ? whole->size / whole->dims[ax] : 0;
  for (int i = 0; i < n; ++i) {
    int64_t e = part_ext(mode, whole, ax, n, &parts[i]);
    if (parts[i].size != inner * e) {
      snprintf(why, why_len, "%s: part %d has %lld elements; the whole's "
               "shape gives another count", op, i, (long long)parts[i].size);
      return MXC_ERR_SHAPE;
    }
    total += e;
  }
  if (total != whole->dims[ax]) {
    snprintf(why, why_len, "%s: the parts' extents sum to %lld on axis %d; "
             "the whole has %lld", op, (long long)total, ax,
             (long long)whole->dims[ax]);
    return MXC_ERR_SHAPE;
  }
  if (whole->size == 0) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  int slot = mxc__half_slot(whole->dtype);
  int64_t start = 0;
  for (int i = 0; i < n; ++i) {
    int64_t e = part_ext(mode, whole, ax, n, &parts[i]);
    int req = c->req[to_whole ? 0 : i];
    if (req != MXC__GPU_REQ_NULL && parts[i].size > 0) {
      mxc__copy_plan p;
      mxc__copy_plan_part(whole, ax, start, e, &p);
      part_slot(slot, to_whole, parts[i].ptr, to_whole ? c->out[0].ptr
                                                        : c->in[0].ptr,
                p, (long long)parts[i].size, req == MXC__GPU_REQ_ADD);
    }
    start += e;
  }
  return mxc__cuda_finish(op, why, why_len);
}

// tile / repeat forward: thread t is copy r = t / n_data of input element
// j = t % n_data (consecutive threads: consecutive input elements, whose
// output elements are adjacent along the innermost data axis); every
// output element is written by exactly one thread.
template <int DT>
__global__ void rep_fwd(const typename MxcElem<DT>::T *in,
                        typename MxcElem<DT>::T *out, mxc__rep_plan p,
                        long long n, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n;
       t += stride) {
    int64_t j = t % p.n_data;
    int64_t o = mxc__rep_out(&p, j, t / p.n_data);
    out[o] = add ? E::store(E::load(out[o]) + E::load(in[j])) : in[j];
  }
}

// The gradient: one thread per input element sums its copies in double
// in the CPU's order (mxc__shp_sum: the box's row-major order, r
// increasing for a fixed j) and rounds once: deterministic, no atomics.
template <int DT>
__global__ void rep_bwd(const typename MxcElem<DT>::T *og,
                        typename MxcElem<DT>::T *grad, mxc__rep_plan p,
                        int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       j < p.n_data; j += stride) {
    double acc = 0;
    for (int64_t r = 0; r < p.n_rep; ++r) {
      acc += (double)E::load(og[mxc__rep_out(&p, j, r)]);
    }
    if (DT == MXC_DTYPE_FLOAT32) {  // the CPU adds the rounded float sum
      grad[j] = add ? E::store(E::load(grad[j]) + (float)acc)
                    : E::store((float)acc);
    } else {  // the CPU adds the old value in double, rounds once
      grad[j] = E::store((float)(add ? acc + E::load(grad[j]) : acc));
    }
  }
}

template <int DT>
void launch_rep(const mxc__gpu_call *c, const mxc__rep_plan &p, bool bwd) {
  typedef typename MxcElem<DT>::T T;
  int add = c->req[0] == MXC__GPU_REQ_ADD;
  if (bwd) {
    rep_bwd<DT><<<MXC__CUDA_GRID(p.n_data)>>>((const T *)c->in[0].ptr,
                                              (T *)c->out[0].ptr, p, add);
    return;
  }
  long long n = (long long)c->out[0].size;
  rep_fwd<DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                     (T *)c->out[0].ptr, p, n, add);
}

// tile, repeat (data -> big) and their gradients ((ograd, data) -> the
// data-shaped gradient).
int run_rep(int kind, const char *op, bool bwd, const mxc__gpu_call *c,
            char *why, size_t why_len) {
  if (c->n_in != (bwd ? 2 : 1) || c->n_out != 1 || !one_dtype(c)) {
    snprintf(why, why_len, "%s: %d input(s) and one output of one dtype "
             "(float32, float16 or bfloat16) expected", op, bwd ? 2 : 1);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  const mxc__gpu_array &data = bwd ? c->out[0] : c->in[0];
  const mxc__gpu_array &big = bwd ? c->in[0] : c->out[0];
  mxc__rep_plan p;
  char what[200] = "";
  int rc = mxc__copy_plan_rep(kind, c->param, &data, &big, &p, what,
                              sizeof what);
  if (rc != MXC_OK) {
    snprintf(why, why_len, "%s: %s", op, what);
    return rc;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  switch (mxc__half_slot(c->out[0].dtype)) {
    case MXC__HALF_SLOT_F16:
      launch_rep<MXC_DTYPE_FLOAT16>(c, p, bwd);
      break;
    case MXC__HALF_SLOT_BF16:
      launch_rep<MXC_DTYPE_BFLOAT16>(c, p, bwd);
      break;
    default:
      launch_rep<MXC_DTYPE_FLOAT32>(c, p, bwd);
      break;
  }
  return mxc__cuda_finish(op, why, why_len);
}

// The plan's reason, prefixed with the operator, or MXC_OK.
int plan_fail(int rc, const char *op, const char *what, char *why,
              size_t why_len) {
  if (rc != MXC_OK) snprintf(why, why_len, "%s: %s", op, what);
  return rc;
}

// One input (or ograd) and one output of one dtype the kernels take.
bool one_to_one(const mxc__gpu_call *c, int n_in) {
  return c->n_in == n_in && c->n_out == 1 && one_dtype(c);
}

// depth_to_space / space_to_depth and their gradients: a bijection
// between the space side (the plan's row-major order) and the depth
// side. space_out: the output is the space side (gather), else the input
// is (scatter; every output element written once).
int run_ds(const char *op, bool space_out, const mxc__gpu_call *c, char *why,
           size_t why_len) {
  const mxc__cp_ds_param *d = (const mxc__cp_ds_param *)c->param;
  if (!d || !one_to_one(c, 1)) {
    snprintf(why, why_len, "%s: parameters, one input and one output of one "
             "dtype (float32, float16 or bfloat16) expected", op);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  mxc__copy_plan p;
  char what[200] = "";
  int rc = mxc__copy_plan_ds(d->block_size, space_out ? &c->out[0] : &c->in[0],
                             space_out ? &c->in[0] : &c->out[0], &p, what,
                             sizeof what);
  if (rc != MXC_OK) return plan_fail(rc, op, what, why, why_len);
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  launch_slot(c, p, !space_out);
  return mxc__cuda_finish(op, why, why_len);
}

// diag (data) and _backward_diag (ograd, data): a 1-D data's forward and
// an N-D data's backward scatter the diagonal into a cleared matrix (add:
// onto it); the others gather the diagonal from the matrix side.
int run_diag(const char *op, bool bwd, const mxc__gpu_call *c, char *why,
             size_t why_len) {
  if (!one_to_one(c, bwd ? 2 : 1)) {
    snprintf(why, why_len, "%s: %d input(s) and one output of one dtype "
             "(float32, float16 or bfloat16) expected", op, bwd ? 2 : 1);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int one_d = c->in[c->n_in - 1].ndim == 1;
  bool scatter = bwd != (one_d != 0);  // the output is the matrix
  const mxc__gpu_array &m = scatter ? c->out[0] : c->in[0];
  const mxc__gpu_array &v = scatter ? c->in[0] : c->out[0];
  mxc__copy_plan p;
  char what[200] = "";
  int rc = mxc__copy_plan_diag(c->param, &m, &v, one_d, &p, what, sizeof what);
  if (rc != MXC_OK) return plan_fail(rc, op, what, why, why_len);
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  if (scatter) {
    rc = clear_unless_add(c, op, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  if (v.size > 0) launch_slot(c, p, scatter);
  return mxc__cuda_finish(op, why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_d2s(const mxc__gpu_call *c, char *why,
                             size_t why_len) {
  return run_ds("depth_to_space", true, c, why, why_len);
}
extern "C" int mxc__cuda_d2s_bwd(const mxc__gpu_call *c, char *why,
                                 size_t why_len) {
  return run_ds("_backward_depth_to_space", false, c, why, why_len);
}
extern "C" int mxc__cuda_s2d(const mxc__gpu_call *c, char *why,
                             size_t why_len) {
  return run_ds("space_to_depth", false, c, why, why_len);
}
extern "C" int mxc__cuda_s2d_bwd(const mxc__gpu_call *c, char *why,
                                 size_t why_len) {
  return run_ds("_backward_space_to_depth", true, c, why, why_len);
}
extern "C" int mxc__cuda_diag(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  return run_diag("diag", false, c, why, why_len);
}
extern "C" int mxc__cuda_diag_bwd(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  return run_diag("_backward_diag", true, c, why, why_len);
}

#define MXC__REP_RUN(fn, kind, op, bwd)                                  \
  extern "C" int fn(const mxc__gpu_call *c, char *why, size_t why_len) { \
    return run_rep(kind, op, bwd, c, why, why_len);                      \
  }
MXC__REP_RUN(mxc__cuda_tile, MXC__CP_TILE, "tile", false)
MXC__REP_RUN(mxc__cuda_tile_bwd, MXC__CP_TILE, "_backward_tile", true)
MXC__REP_RUN(mxc__cuda_repeat, MXC__CP_REPEAT, "repeat", false)
MXC__REP_RUN(mxc__cuda_repeat_bwd, MXC__CP_REPEAT, "_backward_repeat", true)

extern "C" int mxc__cuda_concat(const mxc__gpu_call *c, char *why,
                                size_t why_len) {
  const mxc__cp_concat_param *p = (const mxc__cp_concat_param *)c->param;
  return run_parts("Concat", true, p ? (int)p->dim : 0, PARTS_CONCAT, c, why,
                   why_len);
}

// _backward_Concat: inputs (ograd, parts...): the parts' shapes are the
// outputs'.
extern "C" int mxc__cuda_concat_bwd(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  const mxc__cp_concat_param *p = (const mxc__cp_concat_param *)c->param;
  return run_parts("_backward_Concat", false, p ? (int)p->dim : 0,
                   PARTS_CONCAT, c, why, why_len);
}

extern "C" int mxc__cuda_split(const mxc__gpu_call *c, char *why,
                               size_t why_len) {
  const mxc__cp_split_param *p = (const mxc__cp_split_param *)c->param;
  return run_parts("split", false, p ? (int)p->axis : 0, PARTS_SPLIT, c, why,
                   why_len);
}

extern "C" int mxc__cuda_split_bwd(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  const mxc__cp_split_param *p = (const mxc__cp_split_param *)c->param;
  return run_parts("_backward_split", true, p ? (int)p->axis : 0,
                   PARTS_SPLIT, c, why, why_len);
}

// stack (parts -> whole with a new axis) and _backward_stack (ograd ->
// the parts' gradients): ops/shape/concat.c's parts_copy with extent-1
// parts.
extern "C" int mxc__cuda_stack(const mxc__gpu_call *c, char *why,
                               size_t why_len) {
  const mxc__cp_stack_param *p = (const mxc__cp_stack_param *)c->param;
  return run_parts("stack", true, p ? (int)p->axis : 0, PARTS_STACK, c, why,
                   why_len);
}

extern "C" int mxc__cuda_stack_bwd(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  const mxc__cp_stack_param *p = (const mxc__cp_stack_param *)c->param;
  return run_parts("_backward_stack", false, p ? (int)p->axis : 0,
                   PARTS_STACK, c, why, why_len);
}

#define MXC__SLICE_RUN(fn, kind, op, bwd)                                  \
  extern "C" int fn(const mxc__gpu_call *c, char *why, size_t why_len) { \
    return run_slice(kind, op, bwd, c, why, why_len);                    \
  }
MXC__SLICE_RUN(mxc__cuda_slice, MXC__CP_SLICE, "slice", false)
MXC__SLICE_RUN(mxc__cuda_slice_bwd, MXC__CP_SLICE, "_backward_slice", true)
MXC__SLICE_RUN(mxc__cuda_slice_axis, MXC__CP_SLICE_AXIS, "slice_axis", false)
MXC__SLICE_RUN(mxc__cuda_slice_axis_bwd, MXC__CP_SLICE_AXIS,
               "_backward_slice_axis", true)
MXC__SLICE_RUN(mxc__cuda_slice_like, MXC__CP_SLICE_LIKE, "slice_like", false)
MXC__SLICE_RUN(mxc__cuda_slice_like_bwd, MXC__CP_SLICE_LIKE,
               "_backward_slice_like", true)

extern "C" int mxc__cuda_transpose(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  return run(MXC__CP_TRANSPOSE, "transpose", c, why, why_len);
}

extern "C" int mxc__cuda_swapaxes(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  return run(MXC__CP_SWAPAXES, "swapaxes", c, why, why_len);
}

extern "C" int mxc__cuda_flip(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  return run(MXC__CP_FLIP, "flip", c, why, why_len);
}

extern "C" int mxc__cuda_broadcast_copy(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  return run(MXC__CP_BROADCAST, "broadcast", c, why, why_len);
}
