/* The per-element code of the GPU's where kernels (index.cu), for the
 * device (nvcc) and the host (C++ tests) from one text, following
 * ops/indexing/where.c and util.c's mxc__idx_move: each condition element
 * governs `inner` consecutive elements (1, or a row when the condition is
 * 1-D); a write moves the stored bits; an add is `d += s` in float for
 * float32 and, for the half types, mxc__blob_get/set's double sum rounded
 * to float and then to the dtype. The gradient clears both outputs
 * (write) and adds ograd where selected, so a write gives +0 + ograd.
 * Also the fills (zeros_like, ones_like, _zeros, _ones, _full).
 * tests/gpu:test_cuda_bcast_plan runs these against the CPU bitwise.
 *
 * C++ only (templates over half_hd.h's MxcElem). Thread-safety: pure
 * functions. */
#ifndef MXC_BACKENDS_CUDA_INDEX_HD_H_
#define MXC_BACKENDS_CUDA_INDEX_HD_H_

#include <stdint.h>

#include "backends/cuda/half_hd.h"
#include "core/op/param.h"

#ifdef __CUDACC__
#define MXC__IDX_HD __host__ __device__ __forceinline__
#else
#define MXC__IDX_HD inline
#endif

namespace mxc_idx {

/* d + s as mxc__idx_move's add. */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T add(typename MxcElem<DT>::T d,
                                         typename MxcElem<DT>::T s) {
  typedef MxcElem<DT> E;
  if (DT == MXC_DTYPE_FLOAT32) return E::store(E::load(d) + E::load(s));
  double v = (double)E::load(d) + (double)E::load(s);
  return E::store((float)v);
}

/* where's output element: x or y by the condition, moved or added. */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T where_elem(bool c,
                                                typename MxcElem<DT>::T x,
                                                typename MxcElem<DT>::T y,
                                                typename MxcElem<DT>::T out,
                                                int is_add) {
  typename MxcElem<DT>::T v = c ? x : y;
  return is_add ? add<DT>(out, v) : v;
}

/* One gradient element (dx with sel = c, dy with sel = !c): ograd added
 * to the old value (add) or to +0 (write) where selected; else the old
 * value (add) or +0 (write). */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T where_grad_elem(
    bool sel, typename MxcElem<DT>::T og, typename MxcElem<DT>::T out,
    int is_add) {
  typename MxcElem<DT>::T base = is_add ? out : MxcElem<DT>::store(0.f);
  return sel ? add<DT>(base, og) : base;
}

/* mxc__idx_fill's element (zeros_like, ones_like, _zeros, _ones,
 * _full): v rounded to float, then to the dtype (write); the old value
 * plus v in double, rounded likewise (add). */
template <int DT>
MXC__IDX_HD typename MxcElem<DT>::T fill_elem(double v,
                                               typename MxcElem<DT>::T out,
                                               int is_add) {
  typedef MxcElem<DT> E;
  double r = is_add ? (double)E::load(out) + v : v;
  return E::store((float)r);
}

/* Mirror of ops/indexing/init.c's private fill_param (_full's value). */
struct FillParam {
  mxc__tuple shape;
  int dtype;
  double value;
};

}  // namespace mxc_idx

#endif /* MXC_BACKENDS_CUDA_INDEX_HD_H_ */
