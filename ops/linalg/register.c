/* Registration of the family: the matrix products (dot, batch_dot,
 * FullyConnected), the spatial operators (Convolution, Deconvolution,
 * Pooling), the batched linalg_* operators (la_ops.c) and the fused
 * recurrent operator (RNN). */
#include "core/base/error.h"
#include "ops/families.h"
#include "ops/linalg/gemm_choice.h"
#include "ops/linalg/la.h"
#include "ops/linalg/linalg.h"

/* The GEMM chosen for this process's float32 products (gemm_choice.h):
 * one of GEMM_OPENBLAS, GEMM_ONEDNN, GEMM_PORTABLE. */
static int add_gemm_feature(mxc__registry *r) {
  static const char *const k_names[] = {"GEMM_PORTABLE", "GEMM_OPENBLAS",
                                        "GEMM_ONEDNN"};
  return mxc__registry_add_feature(r, k_names[mxc__gemm_current()->f32]);
}

int mxc__ops_register_linalg(mxc__registry *r) {
  if (mxc__linalg_uses_openblas()) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add_feature(r, "OPENBLAS"));
  }
  MXC_FORWARD_IF_ERROR(add_gemm_feature(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_dot(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_fc(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_convolution(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_deconvolution(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_la(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_pooling(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_fused(r));
  return mxc__linalg_register_rnn(r);
}
