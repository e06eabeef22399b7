// LayerNorm, L2Normalization, Dropout, argmax, argmin, the Sequence
// operators, sort, argsort, topk, Pad, Crop and their gradients (nn3.h):
// one thread
// per group (the
// normalizations' statistics and outputs, an argmax group), per parameter
// (LayerNorm's dgamma, dbeta) or per element (Dropout, Sequence*, the
// sorts' ranks, Pad, Crop), each running nn3_plan.h's, sort_plan.h's or
// pad_plan.h's function in
// the CPU's order, which the host test runs against the CPU. -fmad=false
// (nvcc.bzl).
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/nn3.h"
#include "backends/cuda/nn3_plan.h"
#include "backends/cuda/pad_plan.h"
#include "backends/cuda/sort_plan.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

__global__ void ln_fwd_kernel(mxc__ln_plan q, const float *x, const float *gm,
                              const float *bt, float *y, float *mean, float *sd,
                              long long groups) {
  GRID_LOOP(groups) mxc__ln_fwd(&q, x, gm, bt, y, mean, sd, i);
}

__global__ void ln_dx_kernel(mxc__ln_plan q, const float *og, const float *x,
                             const float *gm, const float *mean,
                             const float *sd, float *dx, long long groups) {
  GRID_LOOP(groups) mxc__ln_dx(&q, og, x, gm, mean, sd, dx, i);
}

__global__ void ln_dgb_kernel(mxc__ln_plan q, const float *og, const float *x,
                              const float *mean, const float *sd, float *dg,
                              float *db) {
  GRID_LOOP(q.l.n) mxc__ln_dgb(&q, og, x, mean, sd, dg, db, i);
}

__global__ void l2n_fwd_kernel(mxc__l2n_plan q, const float *x, float *y,
                               float *norm, long long groups) {
  GRID_LOOP(groups) mxc__l2n_fwd(&q, x, y, norm, i);
}

__global__ void l2n_dx_kernel(mxc__l2n_plan q, const float *og, const float *y,
                              const float *norm, float *dx, long long groups) {
  GRID_LOOP(groups) mxc__l2n_dx(&q, og, y, norm, dx, i);
}

__global__ void drop_kernel(mxc__drop_plan q, const float *x, float *y,
                            float *mask, long long n) {
  GRID_LOOP(n) mxc__drop_fwd(&q, x, y, mask, i);
}

// _backward_Dropout: ograd * mask in float, as the CPU.
__global__ void mul_kernel(const float *g, const float *mask, float *dx,
                           int add, long long n) {
  GRID_LOOP(n) mxc__nn3_put(dx, i, g[i] * mask[i], add);
}

__global__ void argx_kernel(mxc__argx_plan q, const float *x, float *out,
                            long long n) {
  GRID_LOOP(n) mxc__argx_one(&q, x, out, i);
}

__global__ void seq_map_kernel(mxc__seqk_plan q, const float *src,
                               const float *lens, float fill, float *out,
                               long long n) {
  GRID_LOOP(n) mxc__seqk_map(&q, src, lens, fill, out, i);
}

__global__ void seq_last_kernel(mxc__seqk_plan q, const float *x,
                                const float *lens, float *out, long long n) {
  GRID_LOOP(n) mxc__seqk_last(&q, x, lens, out, i);
}

__global__ void seq_last_bwd_kernel(mxc__seqk_plan q, const float *og,
                                    const float *lens, float *dx, long long n) {
  GRID_LOOP(n) mxc__seqk_last_bwd(&q, og, lens, dx, i);
}

__global__ void fill_kernel(float *out, float v, long long n) {
  GRID_LOOP(n) out[i] = v;
}

const float *in_f(const mxc__gpu_call *c, int i) {
  return (const float *)c->in[i].ptr;
}
float *out_f(const mxc__gpu_call *c, int i) {
  return i < c->n_out ? (float *)c->out[i].ptr : nullptr;
}

// n_in inputs (data, the first array read, at index `data` with at least
// min_ndim axes) and 1 to max_out outputs.
int check_args(const mxc__gpu_call *c, const char *op, int n_in, int max_out,
               int data, int min_ndim, char *why, size_t why_len) {
  if (c->n_in != n_in || c->n_out < 1 || c->n_out > max_out) {
    snprintf(why, why_len, "%s: %d inputs, %d outputs; expected %d and 1 to %d",
             op, c->n_in, c->n_out, n_in, max_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (c->in[data].ndim < min_ndim) {
    snprintf(why, why_len, "%s: data has %d axes; expected at least %d", op,
             c->in[data].ndim, min_ndim);
    return MXC_ERR_SHAPE;
  }
  return MXC_OK;
}

// check_args, then the device.
int check(const mxc__gpu_call *c, const char *op, int n_in, int max_out,
          int data, int min_ndim, char *why, size_t why_len) {
  int rc = check_args(c, op, n_in, max_out, data, min_ndim, why, why_len);
  return rc != MXC_OK ? rc : mxc__cuda_use_device(c->dev, why, why_len);
}

bool on(const mxc__gpu_call *c, int k) {
  return k < c->n_out && c->req[k] != MXC__GPU_REQ_NULL;
}

}  // namespace

// LayerNorm: (data, gamma, beta) -> (output, mean, std).
extern "C" int mxc__cuda_layer_norm(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  int rc = check(c, "LayerNorm", 3, 3, 0, 1, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__ln_plan q = mxc__ln_plan_make((const mxc__ln_param *)c->param, &c->in[0],
                                     c->req, c->n_out);
  long long groups = q.l.outer * q.l.inner;
  if (groups > 0) {
    ln_fwd_kernel<<<MXC__CUDA_GRID(groups)>>>(q, in_f(c, 0), in_f(c, 1),
                                              in_f(c, 2), out_f(c, 0),
                                              out_f(c, 1), out_f(c, 2), groups);
  }
  return mxc__cuda_finish("LayerNorm kernel", why, why_len);
}

// (ograd, data, gamma, beta, output, mean, std) -> (ddata, dgamma, dbeta).
extern "C" int mxc__cuda_layer_norm_bwd(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  int rc = check(c, "_backward_LayerNorm", 7, 3, 1, 1, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__ln_plan q = mxc__ln_plan_make((const mxc__ln_param *)c->param, &c->in[1],
                                     c->req, c->n_out);
  long long groups = q.l.outer * q.l.inner;
  if (q.m.on[0] && groups > 0) {
    ln_dx_kernel<<<MXC__CUDA_GRID(groups)>>>(q, in_f(c, 0), in_f(c, 1),
                                             in_f(c, 2), in_f(c, 5), in_f(c, 6),
                                             out_f(c, 0), groups);
  }
  if ((q.m.on[1] || q.m.on[2]) && q.l.n > 0) {
    ln_dgb_kernel<<<MXC__CUDA_GRID(q.l.n)>>>(q, in_f(c, 0), in_f(c, 1),
                                             in_f(c, 5), in_f(c, 6),
                                             out_f(c, 1), out_f(c, 2));
  }
  return mxc__cuda_finish("LayerNorm gradient kernel", why, why_len);
}

// L2Normalization: data (N, C, ...) -> (output, norm).
extern "C" int mxc__cuda_l2_norm(const mxc__gpu_call *c, char *why,
                                 size_t why_len) {
  int rc = check(c, "L2Normalization", 1, 2, 0, 2, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__l2n_plan q = mxc__l2n_plan_make((const mxc__l2n_param *)c->param,
                                       &c->in[0], c->req, c->n_out);
  long long groups = q.l.outer * q.l.inner;
  if (groups > 0 && (q.m.on[0] || q.m.on[1])) {
    l2n_fwd_kernel<<<MXC__CUDA_GRID(groups)>>>(q, in_f(c, 0), out_f(c, 0),
                                               out_f(c, 1), groups);
  }
  return mxc__cuda_finish("L2Normalization kernel", why, why_len);
}

// (ograd, data, output, norm) -> ddata.
extern "C" int mxc__cuda_l2_norm_bwd(const mxc__gpu_call *c, char *why,
                                     size_t why_len) {
  int rc = check(c, "_backward_L2Normalization", 4, 1, 1, 2, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__l2n_plan q = mxc__l2n_plan_make((const mxc__l2n_param *)c->param,
                                       &c->in[1], c->req, c->n_out);
  long long groups = q.l.outer * q.l.inner;
  if (groups > 0 && q.m.on[0]) {
    l2n_dx_kernel<<<MXC__CUDA_GRID(groups)>>>(q, in_f(c, 0), in_f(c, 2),
                                              in_f(c, 3), out_f(c, 0), groups);
  }
  return mxc__cuda_finish("L2Normalization gradient kernel", why, why_len);
}

// Dropout: data -> (output, mask), the mask drawn from the call's slice.
extern "C" int mxc__cuda_dropout(const mxc__gpu_call *c, char *why,
                                 size_t why_len) {
  int rc = check(c, "Dropout", 1, 2, 0, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__drop_plan q =
      mxc__drop_plan_make((const mxc__drop_param *)c->param, &c->in[0],
                          c->is_train, &c->rng, c->req, c->n_out);
  long long n = c->in[0].size;
  // Values 0..n-1 take 2 words each: the slice the CPU's check asks for.
  if (q.active && (uint64_t)n > 2 * c->rng.n_blocks) {
    snprintf(why, why_len,
             "Dropout: the call's random slice holds %llu blocks; %lld "
             "values need %llu",
             (unsigned long long)c->rng.n_blocks, n,
             (unsigned long long)((n + 1) / 2));
    return MXC_ERR_INTERNAL;
  }
  if (n > 0 && (q.m.on[0] || q.m.on[1])) {
    drop_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), out_f(c, 1),
                                       n);
  }
  return mxc__cuda_finish("Dropout kernel", why, why_len);
}

// (ograd, mask) -> ograd * mask.
extern "C" int mxc__cuda_dropout_bwd(const mxc__gpu_call *c, char *why,
                                     size_t why_len) {
  int rc = check(c, "_backward_Dropout", 2, 1, 0, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  long long n = c->in[0].size;
  if (n > 0 && on(c, 0)) {
    mul_kernel<<<MXC__CUDA_GRID(n)>>>(in_f(c, 0), in_f(c, 1), out_f(c, 0),
                                      c->req[0] == MXC__GPU_REQ_ADD, n);
  }
  return mxc__cuda_finish("Dropout gradient kernel", why, why_len);
}

namespace {

int run_argx(const mxc__gpu_call *c, int is_max, char *why, size_t why_len) {
  const char *op = is_max ? "argmax" : "argmin";
  int rc = check(c, op, 1, 1, 0, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__argx_plan q = mxc__argx_plan_make((const mxc__arg_param *)c->param,
                                         is_max, &c->in[0], c->req[0]);
  long long n = c->out[0].size;
  if (n > 0 && on(c, 0) && q.l.n > 0) {
    argx_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), n);
  }
  return mxc__cuda_finish("argmax kernel", why, why_len);
}

// The CPU's error for a SequenceLast length outside 1..T: the lengths are
// read back (a synchronisation of the call's stream; B values).
int check_last(const mxc__gpu_call *c, const char *op, const float *lens,
               int64_t nb, int64_t t, char *why, size_t why_len) {
  if (!lens || nb == 0) return MXC_OK;
  std::vector<float> h((size_t)nb);
  cudaError_t e = cudaMemcpyAsync(h.data(), lens, (size_t)nb * sizeof(float),
                                  cudaMemcpyDeviceToHost, mxc__cuda_stream());
  if (e == cudaSuccess) e = cudaStreamSynchronize(mxc__cuda_stream());
  if (e != cudaSuccess) {
    return mxc__cuda_rt_fail(why, why_len, "SequenceLast's lengths", e);
  }
  for (int64_t b = 0; b < nb; ++b) {
    double v = h[(size_t)b];
    if (!(v >= 1 && v <= (double)t)) {
      snprintf(why, why_len,
               "operator '%s': sequence_length[%lld] = %g is outside "
               "1..%lld (the time extent)",
               op, (long long)b, v, (long long)t);
      return MXC_ERR_INVALID_ARGUMENT;
    }
  }
  return MXC_OK;
}

const char *const k_seq_names[] = {"SequenceMask", "SequenceLast",
                                   "SequenceReverse"};

// Forward: (data[, lengths]) -> output.
int run_seq(const mxc__gpu_call *c, int kind, char *why, size_t why_len) {
  const mxc__seq_param *p = (const mxc__seq_param *)c->param;
  const char *op = k_seq_names[kind];
  int n_in = p->use_sequence_length ? 2 : 1;
  int rc = check(c, op, n_in, 1, 0, 2, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__seqk_plan q =
      mxc__seqk_plan_make(p, kind, &c->in[0], n_in > 1, c->req[0]);
  const float *lens = n_in > 1 ? in_f(c, 1) : nullptr;
  if (kind == MXC__SEQ_LAST) {
    rc = check_last(c, op, lens, q.g.b, q.g.t, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  long long n = c->out[0].size;
  if (n > 0 && on(c, 0)) {
    if (kind == MXC__SEQ_LAST) {
      seq_last_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), lens, out_f(c, 0),
                                             n);
    } else {
      seq_map_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), lens, q.value,
                                            out_f(c, 0), n);
    }
  }
  return mxc__cuda_finish("Sequence kernel", why, why_len);
}

// Gradient: (ograd, data[, lengths]) -> (ddata[, dlengths = 0]).
int run_seq_bwd(const mxc__gpu_call *c, int kind, char *why, size_t why_len) {
  const mxc__seq_param *p = (const mxc__seq_param *)c->param;
  const char *op = k_seq_names[kind];
  int n_len = p->use_sequence_length ? 1 : 0;
  int rc = check(c, op, 2 + n_len, 1 + n_len, 1, 2, why, why_len);
  if (rc != MXC_OK) return rc;
  if (c->n_out > 1 && on(c, 1) && c->req[1] != MXC__GPU_REQ_ADD &&
      c->out[1].size > 0) {
    fill_kernel<<<MXC__CUDA_GRID(c->out[1].size)>>>(out_f(c, 1), 0.f,
                                                    c->out[1].size);
  }
  mxc__seqk_plan q =
      mxc__seqk_plan_make(p, kind, &c->in[1], n_len > 0, c->req[0]);
  const float *lens = n_len ? in_f(c, 2) : nullptr;
  if (kind == MXC__SEQ_LAST) {
    rc = check_last(c, op, lens, q.g.b, q.g.t, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  long long n = c->out[0].size;
  if (n > 0 && on(c, 0)) {
    if (kind == MXC__SEQ_LAST) {
      seq_last_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), lens,
                                                 out_f(c, 0), n);
    } else {
      seq_map_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), lens, 0.f,
                                            out_f(c, 0), n);
    }
  }
  return mxc__cuda_finish("Sequence gradient kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_argmax(const mxc__gpu_call *c, char *why, size_t n) {
  return run_argx(c, 1, why, n);
}
extern "C" int mxc__cuda_argmin(const mxc__gpu_call *c, char *why, size_t n) {
  return run_argx(c, 0, why, n);
}
extern "C" int mxc__cuda_seq_mask(const mxc__gpu_call *c, char *why, size_t n) {
  return run_seq(c, MXC__SEQ_MASK, why, n);
}
extern "C" int mxc__cuda_seq_mask_bwd(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return run_seq_bwd(c, MXC__SEQ_MASK, why, n);
}
extern "C" int mxc__cuda_seq_last(const mxc__gpu_call *c, char *why, size_t n) {
  return run_seq(c, MXC__SEQ_LAST, why, n);
}
extern "C" int mxc__cuda_seq_last_bwd(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return run_seq_bwd(c, MXC__SEQ_LAST, why, n);
}
extern "C" int mxc__cuda_seq_reverse(const mxc__gpu_call *c, char *why,
                                     size_t n) {
  return run_seq(c, MXC__SEQ_REVERSE, why, n);
}
extern "C" int mxc__cuda_seq_reverse_bwd(const mxc__gpu_call *c, char *why,
                                         size_t n) {
  return run_seq_bwd(c, MXC__SEQ_REVERSE, why, n);
}

namespace {

__global__ void sort_kernel(mxc__sortk_plan q, const float *x, float *o0,
                            float *o1, long long n) {
  GRID_LOOP(n) mxc__sortk_fwd(&q, x, o0, o1, i);
}

__global__ void sort_bwd_kernel(mxc__sortk_plan q, const float *og,
                                const float *x, float *dx, long long n) {
  GRID_LOOP(n) mxc__sortk_bwd(&q, og, x, dx, i);
}

const char *const k_sort_names[] = {"sort", "argsort", "topk"};

int sort_len_ok(const mxc__sortk_plan &q, const char *op, char *why,
                size_t why_len) {
  if (q.len <= MXC__SORTK_MAX_LEN) return MXC_OK;
  snprintf(why, why_len,
           "%s on the GPU orders rows of up to %d elements (one thread per "
           "element ranks it against its row); this call's rows have %lld",
           op, MXC__SORTK_MAX_LEN, (long long)q.len);
  return MXC_ERR_UNSUPPORTED;
}

// data -> values | indices | mask | (values, indices).
int run_sort(const mxc__gpu_call *c, int kind, char *why, size_t why_len) {
  const char *op = k_sort_names[kind];
  int rc = check_args(c, op, 1, 2, 0, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__sortk_plan q = mxc__sortk_plan_make(
      kind, (const mxc__sort_param *)c->param, &c->in[0], c->req, c->n_out);
  // The row limit first: a refused call is refused on any machine.
  if ((rc = sort_len_ok(q, op, why, why_len)) != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  long long n = c->in[0].size;
  if (n > 0 && (q.on[0] || q.on[1])) {
    sort_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), out_f(c, 1),
                                       n);
  }
  return mxc__cuda_finish("sort kernel", why, why_len);
}

// (ograd[, ograd_indices], data) -> ddata.
int run_sort_bwd(const mxc__gpu_call *c, int kind, char *why, size_t why_len) {
  const char *op = kind == MXC__SORT_SORT ? "_backward_sort" : "_backward_topk";
  if (c->n_in < 2 || c->n_in > 3) {
    snprintf(why, why_len, "%s: %d inputs; expected 2 or 3", op, c->n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int d = c->n_in - 1;
  int rc = check(c, op, c->n_in, 1, d, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__sortk_plan q = mxc__sortk_plan_make(
      kind, (const mxc__sort_param *)c->param, &c->in[d], c->req, c->n_out);
  if ((rc = sort_len_ok(q, op, why, why_len)) != MXC_OK) return rc;
  long long n = c->in[d].size;
  if (n > 0 && q.on[0]) {
    sort_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), in_f(c, d),
                                           out_f(c, 0), n);
  }
  return mxc__cuda_finish("sort gradient kernel", why, why_len);
}

// The rows' accepts (accepts.h): a call whose rows are beyond the limit
// runs on the CPU. data: the input that holds the rows.
int sort_accepts(const mxc__gpu_call *c, int kind, int data, char *why,
                 size_t why_len) {
  if (!mxc__gpu_call_has_shapes(c) || !c->param || data < 0 ||
      data >= c->n_in) {
    return 1;
  }
  mxc__sortk_plan q = mxc__sortk_plan_make(
      kind, (const mxc__sort_param *)c->param, &c->in[data], c->req, c->n_out);
  return sort_len_ok(q, k_sort_names[kind], why, why_len) == MXC_OK;
}

}  // namespace

extern "C" int mxc__cuda_sort_accepts(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return sort_accepts(c, MXC__SORT_SORT, 0, why, n);
}
extern "C" int mxc__cuda_argsort_accepts(const mxc__gpu_call *c, char *why,
                                         size_t n) {
  return sort_accepts(c, MXC__SORT_ARGSORT, 0, why, n);
}
extern "C" int mxc__cuda_topk_accepts(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return sort_accepts(c, MXC__SORT_TOPK, 0, why, n);
}
extern "C" int mxc__cuda_sort_bwd_accepts(const mxc__gpu_call *c, char *why,
                                          size_t n) {
  return sort_accepts(c, MXC__SORT_SORT, c->n_in - 1, why, n);
}
extern "C" int mxc__cuda_topk_bwd_accepts(const mxc__gpu_call *c, char *why,
                                          size_t n) {
  return sort_accepts(c, MXC__SORT_TOPK, c->n_in - 1, why, n);
}

extern "C" int mxc__cuda_sort(const mxc__gpu_call *c, char *why, size_t n) {
  return run_sort(c, MXC__SORT_SORT, why, n);
}
extern "C" int mxc__cuda_argsort(const mxc__gpu_call *c, char *why, size_t n) {
  return run_sort(c, MXC__SORT_ARGSORT, why, n);
}
extern "C" int mxc__cuda_topk(const mxc__gpu_call *c, char *why, size_t n) {
  return run_sort(c, MXC__SORT_TOPK, why, n);
}
extern "C" int mxc__cuda_sort_bwd(const mxc__gpu_call *c, char *why, size_t n) {
  return run_sort_bwd(c, MXC__SORT_SORT, why, n);
}
extern "C" int mxc__cuda_topk_bwd(const mxc__gpu_call *c, char *why, size_t n) {
  return run_sort_bwd(c, MXC__SORT_TOPK, why, n);
}

namespace {

__global__ void pad_kernel(mxc__padk_plan q, const float *x, float *y,
                           long long n) {
  GRID_LOOP(n) mxc__padk_fwd(&q, x, y, i);
}

__global__ void pad_bwd_kernel(mxc__padk_plan q, const float *og, float *dx,
                               long long n) {
  GRID_LOOP(n) mxc__padk_bwd(&q, og, dx, i);
}

__global__ void crop_kernel(mxc__cropk_plan q, const float *x, float *y,
                            long long n) {
  GRID_LOOP(n) mxc__cropk_fwd(&q, x, y, i);
}

__global__ void crop_bwd_kernel(mxc__cropk_plan q, const float *og, float *dx,
                                long long n) {
  GRID_LOOP(n) mxc__cropk_bwd(&q, og, dx, i);
}

// Pad: data -> output; _backward_Pad (bwd): (ograd, data) -> ddata.
int run_pad(const mxc__gpu_call *c, int bwd, char *why, size_t why_len) {
  const char *op = bwd ? "_backward_Pad" : "Pad";
  int rc = check(c, op, 1 + bwd, 1, bwd, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__padk_plan q = mxc__padk_plan_make((const mxc__pad_param *)c->param,
                                         &c->in[bwd], c->req[0]);
  long long n = c->out[0].size;
  if (n > 0 && on(c, 0)) {
    if (bwd) {
      pad_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), n);
    } else {
      pad_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), n);
    }
  }
  return mxc__cuda_finish("Pad kernel", why, why_len);
}

// Crop: (data[, crop_like]) -> output; _backward_Crop: (ograd, data[,
// crop_like]) -> ddata. data (N, C, H, W).
int run_crop(const mxc__gpu_call *c, int bwd, char *why, size_t why_len) {
  const char *op = bwd ? "_backward_Crop" : "Crop";
  const mxc__crop_param *p = (const mxc__crop_param *)c->param;
  int like = p->num_args > 1;
  int rc = check(c, op, 1 + bwd + like, 1, bwd, 4, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__cropk_plan q = mxc__cropk_plan_make(
      p, &c->in[bwd], like ? &c->in[bwd + 1] : nullptr, c->req[0]);
  long long n = c->out[0].size;
  if (n > 0 && on(c, 0)) {
    if (bwd) {
      crop_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), n);
    } else {
      crop_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), n);
    }
  }
  return mxc__cuda_finish("Crop kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_pad(const mxc__gpu_call *c, char *why, size_t n) {
  return run_pad(c, 0, why, n);
}
extern "C" int mxc__cuda_pad_bwd(const mxc__gpu_call *c, char *why, size_t n) {
  return run_pad(c, 1, why, n);
}
extern "C" int mxc__cuda_crop(const mxc__gpu_call *c, char *why, size_t n) {
  return run_crop(c, 0, why, n);
}
extern "C" int mxc__cuda_crop_bwd(const mxc__gpu_call *c, char *why, size_t n) {
  return run_crop(c, 1, why, n);
}
