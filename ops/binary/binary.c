/* Same-shape forms of the binary operators (add, sub, ..., logical_xor;
 * MXNet's elemwise_add etc. as aliases), their _backward_ operators, and
 * the family's registration function. One row covers the whole array. */
#include "ops/families.h"
#include "ops/binary/binary.h"

static const mxc__op k_fwd[MXC__BIN_COUNT];
static const mxc__op k_bwd[MXC__BIN_COUNT];

static int impl_of(const mxc__op *op) {
  if (op >= k_fwd && op < k_fwd + MXC__BIN_COUNT) return (int)(op - k_fwd);
  return (int)(op - k_bwd);
}

static int ew_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  return mxc__bin_check_dtype(op->name, mxc__bin_impls[impl_of(op)].flags,
                              in[0], op->hidden);
}

static int ew_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  mxc__bin_row(&mxc__bin_impls[impl_of(op)], in[0].dtype, in[0].ptr, 1,
               in[1].ptr, 1, out[0].ptr, mxc__shape_size(&out[0].shape),
               req[0] == MXC__REQ_ADD);
  return MXC_OK;
}

/* _backward_<name>: inputs (ograd, lhs, rhs), outputs (dlhs, drhs). */
static int ew_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  void *ga = req[0] != MXC__REQ_NULL ? out[0].ptr : NULL;
  void *gb = req[1] != MXC__REQ_NULL ? out[1].ptr : NULL;
  mxc__bin_grad_row(&mxc__bin_impls[impl_of(op)], in[0].dtype, in[0].ptr,
                    in[1].ptr, 1, in[2].ptr, 1, ga, gb,
                    mxc__shape_size(&in[0].shape), req[0] == MXC__REQ_ADD,
                    req[1] == MXC__REQ_ADD);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_in_names[] = {"lhs", "rhs", NULL};
static const char *const k_bwd_in_names[] = {"ograd", "lhs", "rhs", NULL};
static const int k_inplace[][2] = {{0, 0}, {1, 0}};

#define ALIASES(name, stem, f, da, db, flags, doc, ...) \
  static const char *const k_alias_##name[] = {__VA_ARGS__, NULL};
MXC__BINARY_OPS(ALIASES)
#undef ALIASES

#define FWD_DESC(nm, stem, f, da, db, flags, doc_, ...)                     \
  [MXC__BIN_##nm] = {                                                       \
      .name = #nm,                                                          \
      .aliases = k_alias_##nm,                                              \
      .doc = doc_ " Operands lhs (a) and rhs (b) have the same shape.",     \
      .n_inputs = 2,                                                        \
      .input_names = k_in_names,                                            \
      .n_outputs = 1,                                                       \
      .infer_shape = mxc__infer_shape_same,                                 \
      .infer_type = ew_type,                                                \
      .compute = ew_forward,                                                \
      .elementwise = 1,                                                     \
      .gradient = ((flags)&MXC__BIN_GRAD) ? mxc__grad_use_in : mxc__grad_none, \
      MXC__INPLACE(k_inplace),                                              \
      .backward_uses_inputs = ((flags)&MXC__BIN_GRAD) ? 3 : 0,              \
  },
#define BWD_DESC(nm, stem, f, da, db, flags, doc_, ...) \
  [MXC__BIN_##nm] = {                                   \
      MXC__BACKWARD(#nm),                               \
      .n_inputs = 3,                                    \
      .input_names = k_bwd_in_names,                    \
      .n_outputs = 2,                                   \
      .infer_shape = mxc__infer_shape_same,             \
      .infer_type = ew_type,                            \
      .compute = ew_backward,                           \
      .elementwise = 1,                                 \
  },

static const mxc__op k_fwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(FWD_DESC)};
static const mxc__op k_bwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(BWD_DESC)};

int mxc__ops_register_binary(mxc__registry *r) {
  for (int i = 0; i < MXC__BIN_COUNT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
    if (mxc__bin_impls[i].flags & MXC__BIN_GRAD) {
      MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
    }
  }
  MXC_FORWARD_IF_ERROR(mxc__bin_register_scalar(r));
  MXC_FORWARD_IF_ERROR(mxc__bin_register_broadcast(r));
  MXC_FORWARD_IF_ERROR(mxc__bin_register_misc(r));
  return mxc__bin_register_legacy(r);
}
