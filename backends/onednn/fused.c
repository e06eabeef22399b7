/* oneDNN kernels of the inference passes' fused operators
 * (ops/linalg/fused.c): the convolution and inner-product builders with
 * post-ops, a sum then an activation, compute exactly what the fused
 * operators mean, out = act(layer(x) + sum), in one pass over the output
 * instead of three. What oneDNN cannot take runs the reference kernel. */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"
#include "core/base/shape.h"
#include "ops/linalg/linalg.h"

/* The post-ops of a fused call; 0 when its activation has no oneDNN
 * counterpart. The sum, when there is one, is the last input. */
static int post_of(const mxc__op *op, const void *param, const mxc__blob *in,
                   int n_in, mxc__dnnl_post *post) {
  const char *act = mxc__dnnl_param_enum(op, param, "act_type");
  int with_sum = 0;
  (void)mxc__dnnl_param_bool(op, param, "with_sum", &with_sum);
  post->act = !act || strcmp(act, "none") == 0 ? MXC__DNNL_ACT_NONE
                                                : mxc__dnnl_act_of_name(act);
  post->sum = with_sum ? &in[n_in - 1] : NULL;
  return post->act >= 0;
}

/* Channels-last arguments of _FusedConvolution: data, output, and the
 * sum (its last input, after the weight and the bias if any). */
static unsigned fconv_fmt_ok(const mxc__op *op, const void *param,
                             int is_out, int i) {
  const mxc__fused_conv_param *p = param;
  int sum = !is_out && p->with_sum && i == (p->conv.no_bias ? 2 : 3);
  return i == 0 || sum ? MXC__DNNL_FMTS : 0;
}

static int fconv_kernel(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  mxc__dnnl_post post;
  const mxc__fused_conv_param *p = param;
  int rc = post_of(op, param, in, n_in, &post)
               ? mxc__dnnl_conv_forward(op, ctx, &p->conv, in, out, req[0],
                                        &post)
               : MXC_ERR_UNSUPPORTED;
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

static int ffc_kernel(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__fused_fc_param *p = param;
  int64_t h = in[1].shape.dims[0];
  int64_t batch = h > 0 ? mxc__shape_size(&out[0].shape) / h : 0;
  int64_t k = batch > 0 ? mxc__shape_size(&in[0].shape) / batch : 0;
  mxc__dnnl_post post;
  int rc = post_of(op, param, in, n_in, &post)
               ? mxc__dnnl_inner_product(op, ctx, &in[0], &in[1],
                                         p->fc.no_bias ? NULL : &in[2], batch,
                                         k, &out[0], req[0], &post)
               : MXC_ERR_UNSUPPORTED;
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

int mxc__dnnl_attach_fused(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = mxc__dnnl_conv_supports,
                   .compute = fconv_kernel,
                   .fmt_ok = fconv_fmt_ok};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "_FusedConvolution", &k));
  k.fmt_ok = NULL;
  k.supports = mxc__dnnl_fc_supports;
  k.compute = ffc_kernel;
  return mxc__registry_attach_kernel(r, "_FusedFullyConnected", &k);
}
