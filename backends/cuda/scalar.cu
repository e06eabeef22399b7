// The binary operators' scalar and same-shape forms and their gradients
// on the GPU (scalar.h), over scalar_hd.h's element functions (the
// expressions of ops/binary/binary_ops.h, host-tested against the CPU).
// Grid-stride loops on the call's stream; -fmad=false (nvcc.bzl), so
// og * d + out rounds twice, as the CPU's float loops.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"
#include "backends/cuda/scalar.h"
#include "backends/cuda/scalar_hd.h"

namespace {

using namespace mxc_bin;

// f(x, s) or, REV, f(s, x). x and out may alias (in place).
template <class B, int DT, bool REV>
__global__ void scalar_fwd(const typename MxcElem<DT>::T *x,
                           typename MxcElem<DT>::T *out, long long n, float s,
                           int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = E::load(x[i]);
    out[i] = REV ? fwd_elem<B, DT>(s, v, out[i], add)
                 : fwd_elem<B, DT>(v, s, out[i], add);
  }
}

// ddata = og * df/da(x, s) or, REV, og * df/db(s, x).
template <class B, int DT, bool REV>
__global__ void scalar_bwd(const typename MxcElem<DT>::T *og,
                           const typename MxcElem<DT>::T *x,
                           typename MxcElem<DT>::T *out, long long n, float s,
                           int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float g = E::load(og[i]), v = E::load(x[i]);
    out[i] = REV ? grad_b<B, DT>(g, s, v, out[i], add)
                 : grad_a<B, DT>(g, v, s, out[i], add);
  }
}

template <class B, int DT>
__global__ void same_fwd(const typename MxcElem<DT>::T *a,
                         const typename MxcElem<DT>::T *b,
                         typename MxcElem<DT>::T *out, long long n, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = fwd_elem<B, DT>(E::load(a[i]), E::load(b[i]), out[i], add);
  }
}

// Both gradients in one pass; a NULL one is skipped. Each element reads
// og, a, b before writing: in place with any of them is safe.
template <class B, int DT>
__global__ void same_bwd(const typename MxcElem<DT>::T *og,
                         const typename MxcElem<DT>::T *a,
                         const typename MxcElem<DT>::T *b,
                         typename MxcElem<DT>::T *ga,
                         typename MxcElem<DT>::T *gb, long long n, int add_a,
                         int add_b) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float g = E::load(og[i]), x = E::load(a[i]), y = E::load(b[i]);
    typename MxcElem<DT>::T oa = ga ? ga[i] : 0, ob = gb ? gb[i] : 0;
    if (ga) ga[i] = grad_a<B, DT>(g, x, y, oa, add_a);
    if (gb) gb[i] = grad_b<B, DT>(g, x, y, ob, add_b);
  }
}

int add_of(const mxc__gpu_call *c, int k) {
  return c->req[k] == MXC__GPU_REQ_ADD;
}

template <class T>
T *out_or_null(const mxc__gpu_call *c, int k) {
  return c->req[k] == MXC__GPU_REQ_NULL ? nullptr : (T *)c->out[k].ptr;
}

float scalar_param(const mxc__gpu_call *c, int dt) {
  double s = ((const mxc__bin_scalar_param *)c->param)->scalar;
  return dt == MXC_DTYPE_FLOAT16    ? scalar_of<MXC_DTYPE_FLOAT16>(s)
         : dt == MXC_DTYPE_BFLOAT16 ? scalar_of<MXC_DTYPE_BFLOAT16>(s)
                                    : scalar_of<MXC_DTYPE_FLOAT32>(s);
}

template <class B, int DT, bool REV>
void launch_sc(const mxc__gpu_call *c, long long n) {
  typedef typename MxcElem<DT>::T T;
  scalar_fwd<B, DT, REV><<<MXC__CUDA_GRID(n)>>>(
      (const T *)c->in[0].ptr, (T *)c->out[0].ptr, n, scalar_param(c, DT),
      add_of(c, 0));
}

template <class B, int DT, bool REV>
void launch_scb(const mxc__gpu_call *c, long long n) {
  typedef typename MxcElem<DT>::T T;
  scalar_bwd<B, DT, REV><<<MXC__CUDA_GRID(n)>>>(
      (const T *)c->in[0].ptr, (const T *)c->in[1].ptr, (T *)c->out[0].ptr, n,
      scalar_param(c, DT), add_of(c, 0));
}

template <class B, int DT>
void launch_ew(const mxc__gpu_call *c, long long n) {
  typedef typename MxcElem<DT>::T T;
  same_fwd<B, DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                          (const T *)c->in[1].ptr,
                                          (T *)c->out[0].ptr, n, add_of(c, 0));
}

template <class B, int DT>
void launch_ewb(const mxc__gpu_call *c, long long n) {
  typedef typename MxcElem<DT>::T T;
  same_bwd<B, DT><<<MXC__CUDA_GRID(n)>>>(
      (const T *)c->in[0].ptr, (const T *)c->in[1].ptr,
      (const T *)c->in[2].ptr, out_or_null<T>(c, 0), out_or_null<T>(c, 1), n,
      add_of(c, 0), add_of(c, 1));
}

template <int DT>
__global__ void clip_fwd(const typename MxcElem<DT>::T *x,
                         typename MxcElem<DT>::T *out, long long n, float lo,
                         float hi, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = clip_elem<DT>(x[i], out[i], lo, hi, add);
  }
}

template <int DT>
__global__ void clip_bwd(const typename MxcElem<DT>::T *og,
                         const typename MxcElem<DT>::T *x,
                         typename MxcElem<DT>::T *out, long long n,
                         double a_min, double a_max, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = clip_grad_elem<DT>(og[i], x[i], out[i], a_min, a_max, add);
  }
}

template <int DT>
void launch_clip(const mxc__gpu_call *c, long long n) {
  typedef typename MxcElem<DT>::T T;
  const ClipParam *p = (const ClipParam *)c->param;
  clip_fwd<DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                       (T *)c->out[0].ptr, n, (float)p->a_min,
                                       (float)p->a_max, add_of(c, 0));
}

template <int DT>
void launch_clip_bwd(const mxc__gpu_call *c, long long n) {
  typedef typename MxcElem<DT>::T T;
  const ClipParam *p = (const ClipParam *)c->param;
  clip_bwd<DT><<<MXC__CUDA_GRID(n)>>>(
      (const T *)c->in[0].ptr, (const T *)c->in[1].ptr, (T *)c->out[0].ptr, n,
      p->a_min, p->a_max, add_of(c, 0));
}

typedef void (*launch_fn)(const mxc__gpu_call *, long long);

// Every array of the call as long as input 0, of its dtype.
int check_call(const mxc__gpu_call *c, int n_in, int n_out, bool needs_param,
               const char *op, char *why, size_t why_len) {
  if (c->n_in != n_in || c->n_out != n_out || (needs_param && !c->param)) {
    snprintf(why, why_len, "%s: %d inputs and %d outputs; expected %d and %d",
             op, c->n_in, c->n_out, n_in, n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < n_in + n_out; ++i) {
    const mxc__gpu_array &a = i < n_in ? c->in[i] : c->out[i - n_in];
    if (a.size != c->in[0].size || a.dtype != c->in[0].dtype) {
      snprintf(why, why_len,
               "%s: array %d has %lld elements of dtype %d; expected input "
               "0's %lld of dtype %d (same-shape operands)",
               op, i, (long long)a.size, a.dtype, (long long)c->in[0].size,
               c->in[0].dtype);
      return MXC_ERR_SHAPE;
    }
  }
  if (mxc__half_slot(c->in[0].dtype) < 0) {
    snprintf(why, why_len,
             "%s: dtype %d; the GPU kernel takes float32, float16 and "
             "bfloat16",
             op, c->in[0].dtype);
    return MXC_ERR_DTYPE;
  }
  return MXC_OK;
}

// Checks c, launches the slot's kernel on the call's stream, finishes.
int run(const mxc__gpu_call *c, int n_in, int n_out, bool needs_param,
        const char *op, const launch_fn (&by_slot)[3], char *why,
        size_t why_len) {
  int rc = check_call(c, n_in, n_out, needs_param, op, why, why_len);
  if (rc != MXC_OK) return rc;
  bool any = false;
  for (int k = 0; k < n_out; ++k) any |= c->req[k] != MXC__GPU_REQ_NULL;
  if (!any || c->in[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  by_slot[mxc__half_slot(c->in[0].dtype)](c, (long long)c->in[0].size);
  return mxc__cuda_finish(op, why, why_len);
}

// LeakyReLU (leaky, elu, selu, gelu) and its gradient, float32: one
// grid-stride kernel each over scalar_hd.h's element functions.
__global__ void leaky_fwd_k(const float *x, float *out, long long n, int kind,
                            double a, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = leaky_elem(kind, a, x[i], out[i], add);
  }
}

__global__ void leaky_bwd_k(const float *og, const float *x, float *out,
                            long long n, int kind, double a, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = leaky_grad_elem(kind, a, og[i], x[i], out[i], add);
  }
}

// prelu (a gamma input, a dgamma output) and rrelu (random slopes) have
// no kernel here: the rows' accepts decline them, so libmxc runs them on
// the CPU; a direct call gets MXC_ERR_UNSUPPORTED.
bool leaky_form_ok(const LeakyParam *p, bool bwd, char *why, size_t why_len) {
  if (p->act_type != LK_PRELU && p->act_type != LK_RRELU) return true;
  snprintf(why, why_len,
           "%s: act_type %s has no GPU kernel (leaky, elu, selu and gelu "
           "do)",
           bwd ? "_backward_LeakyReLU" : "LeakyReLU",
           p->act_type == LK_PRELU ? "prelu" : "rrelu");
  return false;
}

int leaky_run(const mxc__gpu_call *c, bool bwd, char *why, size_t why_len) {
  const char *op = bwd ? "_backward_LeakyReLU" : "LeakyReLU";
  const LeakyParam *p = (const LeakyParam *)c->param;
  if (!p) {
    snprintf(why, why_len, "%s: no parameters", op);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (!leaky_form_ok(p, bwd, why, why_len)) return MXC_ERR_UNSUPPORTED;
  int n_in = bwd ? 3 : 1;
  bool fits = c->n_in == n_in && c->n_out == 1;
  for (int i = 0; fits && i < n_in; ++i) {
    fits = c->in[i].size == c->out[0].size &&
           c->in[i].dtype == MXC_DTYPE_FLOAT32;
  }
  if (!fits || c->out[0].dtype != MXC_DTYPE_FLOAT32) {
    snprintf(why, why_len,
             "%s: %d float32 input(s) of the output's size expected", op,
             n_in);
    return MXC_ERR_SHAPE;
  }
  long long n = (long long)c->out[0].size;
  if (c->req[0] == MXC__GPU_REQ_NULL || n == 0) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  int add = c->req[0] == MXC__GPU_REQ_ADD;
  // _backward_LeakyReLU's inputs: (ograd, data, output).
  if (bwd) {
    leaky_bwd_k<<<MXC__CUDA_GRID(n)>>>((const float *)c->in[0].ptr,
                                        (const float *)c->in[1].ptr,
                                        (float *)c->out[0].ptr, n,
                                        p->act_type, p->slope, add);
  } else {
    leaky_fwd_k<<<MXC__CUDA_GRID(n)>>>((const float *)c->in[0].ptr,
                                        (float *)c->out[0].ptr, n,
                                        p->act_type, p->slope, add);
  }
  return mxc__cuda_finish(op, why, why_len);
}

// hard_sigmoid and quadratic (float32): one grid-stride kernel over a
// functor of (ograd or 0, x, old output, add) -> new output, scalar_hd.h's
// element functions inside.
template <class F>
__global__ void map_k(F f, const float *g, const float *x, float *out,
                      long long n, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = f(g ? g[i] : 0.f, x[i], out[i], add);
  }
}

struct HsF {
  HsParam p;
  bool bwd;
  __device__ float operator()(float g, float x, float o, int add) const {
    return bwd ? hs_grad_elem(p.alpha, p.beta, g, x, o, add)
               : hs_elem(p.alpha, p.beta, x, o, add);
  }
};

struct QuadF {
  QuadParam p;
  bool bwd;
  __device__ float operator()(float g, float x, float o, int add) const {
    return bwd ? quad_grad_elem(p, g, x, o, add) : quad_elem(p, x, o, add);
  }
};

// Forward: (data) -> out; backward: (ograd, data) -> ddata; float32
// arrays of one size.
template <class F>
int map_run(const mxc__gpu_call *c, F f, const char *op, char *why,
            size_t why_len) {
  int n_in = f.bwd ? 2 : 1;
  bool fits = c->param && c->n_in == n_in && c->n_out == 1 &&
              c->out[0].dtype == MXC_DTYPE_FLOAT32;
  for (int i = 0; fits && i < n_in; ++i) {
    fits = c->in[i].size == c->out[0].size &&
           c->in[i].dtype == MXC_DTYPE_FLOAT32;
  }
  if (!fits) {
    snprintf(why, why_len,
             "%s: %d float32 input(s) of the output's size, the parameters "
             "and one float32 output expected",
             op, n_in);
    return MXC_ERR_SHAPE;
  }
  long long n = (long long)c->out[0].size;
  if (c->req[0] == MXC__GPU_REQ_NULL || n == 0) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  map_k<F><<<MXC__CUDA_GRID(n)>>>(
      f, f.bwd ? (const float *)c->in[0].ptr : nullptr,
      (const float *)c->in[n_in - 1].ptr, (float *)c->out[0].ptr, n,
      c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish(op, why, why_len);
}

template <class F, class P>
int map_op(const mxc__gpu_call *c, bool bwd, const char *op, char *why,
           size_t why_len) {
  F f = {};
  if (c->param) f.p = *(const P *)c->param;
  f.bwd = bwd;
  return map_run(c, f, op, why, why_len);
}

}  // namespace

// One extern "C" run function per row: its kind, the launch template and
// its extra template arguments, inputs, outputs, whether the scalar
// parameter is read, the operator's name.
#define MXC__BIN_RUN(kind, name, L, EXTRA, n_in, n_out, param, opname)     \
  extern "C" int mxc__cuda_bin_##kind##_##name(const mxc__gpu_call *c,     \
                                               char *why, size_t why_len) { \
    static const launch_fn k[3] = {                                        \
        L<B_##name, MXC_DTYPE_FLOAT32 EXTRA>,                              \
        L<B_##name, MXC_DTYPE_FLOAT16 EXTRA>,                              \
        L<B_##name, MXC_DTYPE_BFLOAT16 EXTRA>};                            \
    return run(c, n_in, n_out, param, opname, k, why, why_len);            \
  }
#define MXC__NO_EXTRA
#define MXC__FWD_EXTRA , false
#define MXC__REV_EXTRA , true
#define SC(name, stem)                                                  \
  MXC__BIN_RUN(sc, name, launch_sc, MXC__FWD_EXTRA, 1, 1, true,        \
               "_" #stem "_scalar")
#define SCB(name, stem)                                                 \
  MXC__BIN_RUN(scb, name, launch_scb, MXC__FWD_EXTRA, 2, 1, true,      \
               "_backward__" #stem "_scalar")
#define RSC(name, stem)                                                 \
  MXC__BIN_RUN(rsc, name, launch_sc, MXC__REV_EXTRA, 1, 1, true,       \
               "_r" #stem "_scalar")
#define RSCB(name, stem)                                                \
  MXC__BIN_RUN(rscb, name, launch_scb, MXC__REV_EXTRA, 2, 1, true,     \
               "_backward__r" #stem "_scalar")
#define EW(name, stem) \
  MXC__BIN_RUN(ew, name, launch_ew, MXC__NO_EXTRA, 2, 1, false, #name)
#define EWB(name, stem)                                                 \
  MXC__BIN_RUN(ewb, name, launch_ewb, MXC__NO_EXTRA, 3, 2, false,      \
               "_backward_" #name)
MXC__CUDA_SCALAR_ALL(SC)
MXC__CUDA_SCALAR_GRAD(SCB)
MXC__CUDA_SCALAR_REV(RSC)
MXC__CUDA_SCALAR_REV(RSCB)
MXC__CUDA_SAME_FWD(EW)
MXC__CUDA_SAME_GRAD(EWB)

extern "C" int mxc__cuda_clip(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  static const launch_fn k[3] = {launch_clip<MXC_DTYPE_FLOAT32>,
                                 launch_clip<MXC_DTYPE_FLOAT16>,
                                 launch_clip<MXC_DTYPE_BFLOAT16>};
  return run(c, 1, 1, true, "clip", k, why, why_len);
}

extern "C" int mxc__cuda_clip_bwd(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  static const launch_fn k[3] = {launch_clip_bwd<MXC_DTYPE_FLOAT32>,
                                 launch_clip_bwd<MXC_DTYPE_FLOAT16>,
                                 launch_clip_bwd<MXC_DTYPE_BFLOAT16>};
  return run(c, 2, 1, true, "_backward_clip", k, why, why_len);
}

extern "C" int mxc__cuda_leaky_relu(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  return leaky_run(c, false, why, why_len);
}

extern "C" int mxc__cuda_leaky_relu_bwd(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  return leaky_run(c, true, why, why_len);
}

// The rows' accepts: the act_type alone decides (prelu and rrelu go to
// the CPU).
extern "C" int mxc__cuda_leaky_relu_accepts(const mxc__gpu_call *c,
                                            char *why, size_t why_len) {
  const LeakyParam *p = (const LeakyParam *)c->param;
  return !p || leaky_form_ok(p, false, why, why_len);
}

extern "C" int mxc__cuda_leaky_relu_bwd_accepts(const mxc__gpu_call *c,
                                                char *why, size_t why_len) {
  const LeakyParam *p = (const LeakyParam *)c->param;
  return !p || leaky_form_ok(p, true, why, why_len);
}

extern "C" int mxc__cuda_hard_sigmoid(const mxc__gpu_call *c, char *why,
                                      size_t why_len) {
  return map_op<HsF, HsParam>(c, false, "hard_sigmoid", why, why_len);
}

extern "C" int mxc__cuda_hard_sigmoid_bwd(const mxc__gpu_call *c, char *why,
                                          size_t why_len) {
  return map_op<HsF, HsParam>(c, true, "_backward_hard_sigmoid", why,
                              why_len);
}

extern "C" int mxc__cuda_quadratic(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  return map_op<QuadF, QuadParam>(c, false, "quadratic", why, why_len);
}

extern "C" int mxc__cuda_quadratic_bwd(const mxc__gpu_call *c, char *why,
                                       size_t why_len) {
  return map_op<QuadF, QuadParam>(c, true, "_backward_quadratic", why,
                                  why_len);
}
