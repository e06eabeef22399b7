/* Scalar forms: _<stem>_scalar computes f(x, scalar) and, for the
 * non-commutative operators, _r<stem>_scalar computes f(scalar, x)
 * (_rminus_scalar is scalar - x). The scalar is converted to x's dtype
 * first (integers truncate), as MXNet does, and becomes a stride-0 operand
 * of one row. */
#include "ops/binary/binary.h"

static const mxc__op k_fwd[MXC__BIN_COUNT];
static const mxc__op k_bwd[MXC__BIN_COUNT];
static const mxc__op k_rfwd[MXC__BIN_COUNT];
static const mxc__op k_rbwd[MXC__BIN_COUNT];

/* Which operator a descriptor computes, and whether it is reversed. */
static int impl_of(const mxc__op *op, int *rev) {
  const mxc__op *const tables[4] = {k_fwd, k_bwd, k_rfwd, k_rbwd};
  for (int t = 0; t < 4; ++t) {
    if (op >= tables[t] && op < tables[t] + MXC__BIN_COUNT) {
      *rev = t >= 2;
      return (int)(op - tables[t]);
    }
  }
  *rev = 0;
  return 0; /* unreachable: compute is only reached through these tables */
}

static int sc_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  int rev = 0;
  int k = impl_of(op, &rev);
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  return mxc__bin_check_dtype(op->name, mxc__bin_impls[k].flags, in[0],
                              op->hidden);
}

static int sc_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int rev = 0;
  const mxc__bin_impl *k = &mxc__bin_impls[impl_of(op, &rev)];
  const mxc__bin_scalar_param *p = param;
  mxc__bin_scalar s;
  mxc__bin_scalar_set(in[0].dtype, p->scalar, &s);
  int64_t n = mxc__shape_size(&in[0].shape);
  int add = req[0] == MXC__REQ_ADD;
  if (rev) {
    mxc__bin_row(k, in[0].dtype, s.bytes, 0, in[0].ptr, 1, out[0].ptr, n, add);
  } else {
    mxc__bin_row(k, in[0].dtype, in[0].ptr, 1, s.bytes, 0, out[0].ptr, n, add);
  }
  return MXC_OK;
}

/* _backward__<stem>_scalar: inputs (ograd, data), output ddata. */
static int sc_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int rev = 0;
  const mxc__bin_impl *k = &mxc__bin_impls[impl_of(op, &rev)];
  const mxc__bin_scalar_param *p = param;
  int dt = in[0].dtype;
  mxc__bin_scalar s;
  mxc__bin_scalar_set(dt, p->scalar, &s);
  int64_t n = mxc__shape_size(&in[0].shape);
  int add = req[0] == MXC__REQ_ADD;
  if (rev) {
    mxc__bin_grad_row(k, dt, in[0].ptr, s.bytes, 0, in[1].ptr, 1, NULL,
                      out[0].ptr, n, 0, add);
  } else {
    mxc__bin_grad_row(k, dt, in[0].ptr, in[1].ptr, 1, s.bytes, 0,
                      out[0].ptr, NULL, n, add, 0);
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const mxc__param_def k_params[] = {
    MXC__PARAM(mxc__bin_scalar_param, scalar, MXC__P_FLOAT, NULL,
               "The scalar operand (converted to the input's dtype)."),
};
static const char *const k_in_names[] = {"data", NULL};
static const char *const k_bwd_in_names[] = {"ograd", "data", NULL};
static const int k_inplace[][2] = {{0, 0}};

/* Fields shared by the four tables. */
#define COMMON                                          \
  MXC__PARAMS_OF(mxc__bin_scalar_param, k_params),      \
  .n_outputs = 1, .infer_shape = mxc__infer_shape_same, \
  .infer_type = sc_type, MXC__INPLACE(k_inplace), .elementwise = 1

#define FWD(nm, opname, doc_, flags)                                        \
  [MXC__BIN_##nm] = {                                                       \
      .name = opname,                                                       \
      .doc = doc_,                                                          \
      COMMON,                                                               \
      .n_inputs = 1,                                                        \
      .input_names = k_in_names,                                            \
      .compute = sc_forward,                                                \
      .gradient = ((flags)&MXC__BIN_GRAD) ? mxc__grad_use_in : mxc__grad_none, \
      .backward_uses_inputs = ((flags)&MXC__BIN_GRAD) ? 1 : 0,              \
  },
#define BWD(nm, opname, flags)                      \
  [MXC__BIN_##nm] = {                               \
      MXC__BACKWARD(opname),                        \
      COMMON,                                       \
      .n_inputs = 2,                                \
      .input_names = k_bwd_in_names,                \
      .compute = sc_backward,                       \
  },

#define FWD_DESC(nm, stem, f, da, db, flags, doc_, ...) \
  FWD(nm, "_" #stem "_scalar", doc_ " With a = data, b = scalar.", flags)
#define BWD_DESC(nm, stem, f, da, db, flags, doc_, ...) \
  BWD(nm, "_" #stem "_scalar", flags)
#define RFWD_DESC(nm, stem, f, da, db, flags, doc_, ...) \
  FWD(nm, "_r" #stem "_scalar", doc_ " With a = scalar, b = data.", flags)
#define RBWD_DESC(nm, stem, f, da, db, flags, doc_, ...) \
  BWD(nm, "_r" #stem "_scalar", flags)

static const mxc__op k_fwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(FWD_DESC)};
static const mxc__op k_bwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(BWD_DESC)};
static const mxc__op k_rfwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(RFWD_DESC)};
static const mxc__op k_rbwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(RBWD_DESC)};

/* Every operator gets the scalar form; reversed forms only where order
 * matters (MXC__BIN_REV); backward operators only where differentiable. */
int mxc__bin_register_scalar(mxc__registry *r) {
  for (int i = 0; i < MXC__BIN_COUNT; ++i) {
    int flags = mxc__bin_impls[i].flags;
    int grad = flags & MXC__BIN_GRAD;
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
    if (grad) MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
    if (!(flags & MXC__BIN_REV)) continue;
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_rfwd[i]));
    if (grad) MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_rbwd[i]));
  }
  return MXC_OK;
}
