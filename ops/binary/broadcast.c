/* Broadcast forms (broadcast_add, ...) with numpy's rules: shapes align at
 * their trailing axes, a missing or extent-1 axis stretches to the other
 * operand's extent, any other mismatch is an error naming both shapes.
 *
 * Both operands are walked with element strides that are 0 on stretched
 * axes. Output axes of extent 1 are dropped and neighbouring axes merged
 * wherever both operands stay contiguous across them, so that same-shape
 * and scalar-like operands become a single row and e.g. (32,64,28,28) +
 * (1,64,1,1) becomes 2048 rows of 784 against one bias value each. The
 * innermost remaining axis always has operand strides 0 or 1, which is
 * what the row kernels take.
 *
 * Gradients sum over the stretched axes: partial derivatives are computed
 * row by row in chunks and accumulated into float64 buffers of the input
 * shapes (temporary space), then written with the request's mode. */
#include <string.h>

#include "core/op/parallel.h"
#include "ops/binary/binary.h"

/* ---- shapes ---- */

static int broadcast_shape(const mxc__op *op, const mxc__shape *a,
                           const mxc__shape *b, mxc__shape *out) {
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  mxc__shape s;
  s.ndim = nd;
  for (int i = 0; i < nd; ++i) {
    int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    int64_t ea = ia >= 0 ? a->dims[ia] : 1, eb = ib >= 0 ? b->dims[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      char s1[160], s2[160];
      return mxc__error_set(
          MXC_ERR_SHAPE,
          "operator '%s': shapes %s (lhs) and %s (rhs) cannot be broadcast "
          "together: axis %d of lhs has extent %lld but axis %d of rhs has "
          "extent %lld (trailing axes must match or be 1)",
          op->name, mxc__shape_str(a, s1, sizeof s1),
          mxc__shape_str(b, s2, sizeof s2), ia, (long long)ea, ib,
          (long long)eb);
    }
    s.dims[i] = ea == 1 ? eb : ea;
  }
  *out = s;
  return MXC_OK;
}

static int check_shape(const mxc__op *op, const char *what,
                       const mxc__shape *got, const mxc__shape *want) {
  char s1[160], s2[160];
  MXC_RETURN_ERROR_IF(got->ndim >= 0 && !mxc__shape_equal(got, want),
                      MXC_ERR_SHAPE, "operator '%s': %s has shape %s; "
                      "expected %s",
                      op->name, what, mxc__shape_str(got, s1, sizeof s1),
                      mxc__shape_str(want, s2, sizeof s2));
  return MXC_OK;
}

static int bc_infer_shape(const mxc__op *op, const void *param,
                          mxc__shape *in, int n_in, mxc__shape *out,
                          int n_out) {
  (void)param, (void)n_in, (void)n_out;
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(broadcast_shape(op, &in[0], &in[1], &s));
  MXC_FORWARD_IF_ERROR(check_shape(op, "output 0", &out[0], &s));
  out[0] = s;
  return MXC_OK;
}

/* Backward: inputs (ograd, lhs, rhs); the gradients take the inputs'
 * shapes. */
static int bc_bwd_infer_shape(const mxc__op *op, const void *param,
                              mxc__shape *in, int n_in, mxc__shape *out,
                              int n_out) {
  (void)param, (void)n_in, (void)n_out;
  for (int i = 0; i < 2; ++i) {
    if (in[i + 1].ndim < 0) continue;
    MXC_FORWARD_IF_ERROR(check_shape(op, i ? "output 1" : "output 0",
                                     &out[i], &in[i + 1]));
    out[i] = in[i + 1];
  }
  if (in[1].ndim < 0 || in[2].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(broadcast_shape(op, &in[1], &in[2], &s));
  return check_shape(op, "input 0 (ograd)", &in[0], &s);
}

/* ---- iteration ---- */

typedef struct layout {
  int nd; /* axes after dropping and merging; >= 1 */
  int64_t ext[MXC_MAX_NDIM];
  int64_t sa[MXC_MAX_NDIM], sb[MXC_MAX_NDIM]; /* element strides */
} layout;

/* Contiguous element strides of `s` aligned to the last nd axes of the
 * output, 0 on axes where s has extent 1 or no axis. */
static void aligned_strides(const mxc__shape *s, int nd, int64_t *st) {
  int64_t run = 1;
  for (int i = nd - 1; i >= 0; --i) {
    int j = i - (nd - s->ndim);
    int64_t e = j >= 0 ? s->dims[j] : 1;
    st[i] = e == 1 ? 0 : run;
    run *= e;
  }
}

static void layout_make(const mxc__shape *a, const mxc__shape *b,
                        const mxc__shape *out, layout *l) {
  int64_t sa[MXC_MAX_NDIM] = {0}, sb[MXC_MAX_NDIM] = {0};
  aligned_strides(a, out->ndim, sa);
  aligned_strides(b, out->ndim, sb);
  /* Walk from the innermost axis; the kept axes are stored innermost
   * first and reversed at the end. */
  int k = 0;
  for (int i = out->ndim - 1; i >= 0; --i) {
    int64_t e = out->dims[i];
    if (e == 1) continue;
    if (k > 0 && sa[i] == l->sa[k - 1] * l->ext[k - 1] &&
        sb[i] == l->sb[k - 1] * l->ext[k - 1]) {
      l->ext[k - 1] *= e; /* contiguous across both: merge */
      continue;
    }
    l->ext[k] = e;
    l->sa[k] = sa[i];
    l->sb[k] = sb[i];
    ++k;
  }
  if (k == 0) { /* one element */
    l->ext[0] = 1;
    l->sa[0] = l->sb[0] = 0;
    k = 1;
  }
  for (int i = 0; i < k / 2; ++i) {
    int j = k - 1 - i;
    int64_t t;
    t = l->ext[i], l->ext[i] = l->ext[j], l->ext[j] = t;
    t = l->sa[i], l->sa[i] = l->sa[j], l->sa[j] = t;
    t = l->sb[i], l->sb[i] = l->sb[j], l->sb[j] = t;
  }
  l->nd = k;
}

/* One innermost run: element offsets of its first a, b and output
 * elements, its length and the operands' strides along it (0 or 1). */
typedef void (*row_fn)(void *ctx, int64_t ia, int64_t ib, int64_t io,
                       int64_t n, int64_t sa, int64_t sb);

/* Rows of a layout: every axis but the innermost. */
static int64_t layout_rows(const layout *l) {
  int64_t rows = 1;
  for (int d = 0; d < l->nd - 1; ++d) rows *= l->ext[d];
  return rows;
}

/* Calls fn for rows [r0, r1), in output order. */
static void for_rows_range(const layout *l, int64_t r0, int64_t r1, row_fn fn,
                           void *ctx) {
  int inner = l->nd - 1;
  int64_t n = l->ext[inner];
  int64_t idx[MXC_MAX_NDIM] = {0};
  int64_t ia = 0, ib = 0, rem = r0;
  for (int d = inner - 1; d >= 0; --d) { /* position of row r0 */
    idx[d] = rem % l->ext[d];
    rem /= l->ext[d];
    ia += idx[d] * l->sa[d];
    ib += idx[d] * l->sb[d];
  }
  for (int64_t r = r0; r < r1; ++r) {
    fn(ctx, ia, ib, r * n, n, l->sa[inner], l->sb[inner]);
    /* odometer over the outer axes */
    for (int d = inner - 1; d >= 0; --d) {
      ia += l->sa[d];
      ib += l->sb[d];
      if (++idx[d] < l->ext[d]) break;
      ia -= l->sa[d] * l->ext[d];
      ib -= l->sb[d] * l->ext[d];
      idx[d] = 0;
    }
  }
}

/* Calls fn for every row, in output order. The output must be nonempty. */
static void for_rows(const layout *l, row_fn fn, void *ctx) {
  for_rows_range(l, 0, layout_rows(l), fn, ctx);
}

/* ---- forward ---- */

static mxc__op k_fwd[MXC__BIN_COUNT];
static const mxc__op k_bwd[MXC__BIN_COUNT];

static int impl_of(const mxc__op *op) {
  if (op >= k_fwd && op < k_fwd + MXC__BIN_COUNT) return (int)(op - k_fwd);
  return (int)(op - k_bwd);
}

static int bc_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  return mxc__bin_check_dtype(op->name, mxc__bin_impls[impl_of(op)].flags,
                              in[0], op->hidden);
}

typedef struct fwd_ctx {
  const mxc__bin_impl *k;
  int dtype, add;
  const void *a, *b;
  void *out;
} fwd_ctx;

static void fwd_row(void *arg, int64_t ia, int64_t ib, int64_t io, int64_t n,
                    int64_t sa, int64_t sb) {
  const fwd_ctx *c = arg;
  mxc__bin_row(c->k, c->dtype, mxc__bin_at(c->a, c->dtype, ia), sa,
               mxc__bin_at(c->b, c->dtype, ib), sb,
               mxc__bin_at(c->out, c->dtype, io), n, c->add);
}

/* Many short rows (a row broadcast against a matrix) are split over the
 * kernel pool by rows: each output element is written by one row, so
 * the result does not depend on the split. Rows of at least
 * MXC__PAR_MIN_ELEMS split themselves (mxc__bin_row). */
typedef struct rows_job {
  const layout *l;
  row_fn fn;
  void *ctx;
} rows_job;

static int rows_part(void *arg, int64_t r0, int64_t r1) {
  const rows_job *j = arg;
  for_rows_range(j->l, r0, r1, j->fn, j->ctx);
  return MXC_OK;
}

static void par_rows(const layout *l, row_fn fn, void *ctx) {
  int64_t rows = layout_rows(l), n = l->ext[l->nd - 1];
  if (rows < 2 || n >= MXC__PAR_MIN_ELEMS ||
      (double)rows * (double)n < (double)MXC__PAR_MIN_ELEMS) {
    for_rows(l, fn, ctx);
    return;
  }
  rows_job j = {l, fn, ctx};
  int64_t grain = (MXC__PAR_GRAIN_ELEMS + n - 1) / n;
  /* rows_part cannot fail, so neither can the loop. */
  (void)mxc__parallel_for(rows, grain, mxc__parallel_threads(), rows_part, &j);
}

static int bc_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL || mxc__shape_size(&out[0].shape) == 0) {
    return MXC_OK;
  }
  layout l;
  layout_make(&in[0].shape, &in[1].shape, &out[0].shape, &l);
  fwd_ctx c = {&mxc__bin_impls[impl_of(op)], in[0].dtype,
               req[0] == MXC__REQ_ADD, in[0].ptr, in[1].ptr, out[0].ptr};
  par_rows(&l, fwd_row, &c);
  return MXC_OK;
}

/* ---- backward ---- */

typedef struct bwd_ctx {
  const mxc__bin_impl *k;
  int dtype;
  const void *og, *a, *b;
  double *acc_a, *acc_b; /* NULL: gradient not wanted */
} bwd_ctx;

/* Adds a chunk of partials into an input's accumulator: element-wise
 * where the input advances along the row, summed where it stays put. */
static void accumulate(double *acc, int64_t at, int64_t s, const double *d,
                       int64_t m) {
  if (s) {
    for (int64_t j = 0; j < m; ++j) acc[at + j] += d[j];
  } else {
    double sum = 0;
    for (int64_t j = 0; j < m; ++j) sum += d[j];
    acc[at] += sum;
  }
}

static void bwd_row(void *arg, int64_t ia, int64_t ib, int64_t io, int64_t n,
                    int64_t sa, int64_t sb) {
  const bwd_ctx *c = arg;
  double da[MXC__BIN_CHUNK], db[MXC__BIN_CHUNK];
  for (int64_t off = 0; off < n; off += MXC__BIN_CHUNK) {
    int64_t m = n - off < MXC__BIN_CHUNK ? n - off : MXC__BIN_CHUNK;
    mxc__bin_grad_chunk(c->k, c->dtype, mxc__bin_at(c->og, c->dtype, io + off),
                        mxc__bin_at(c->a, c->dtype, ia + off * sa), sa,
                        mxc__bin_at(c->b, c->dtype, ib + off * sb), sb,
                        c->acc_a ? da : NULL, c->acc_b ? db : NULL, m);
    if (c->acc_a) accumulate(c->acc_a, ia + off * sa, sa, da, m);
    if (c->acc_b) accumulate(c->acc_b, ib + off * sb, sb, db, m);
  }
}

/* Writes an accumulator into a gradient with its write mode. */
static void store_acc(const mxc__blob *g, const double *acc, int add) {
  int64_t n = mxc__shape_size(&g->shape);
  for (int64_t i = 0; i < n; ++i) {
    double v = acc[i];
    if (add) v += mxc__blob_get(g, i);
    mxc__blob_set(g, i, v);
  }
}

/* _backward_broadcast_<name>: inputs (ograd, lhs, rhs), outputs (dlhs,
 * drhs) in the inputs' shapes. */
static int bc_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)param, (void)n_in, (void)n_out;
  const mxc__bin_impl *k = &mxc__bin_impls[impl_of(op)];
  int dt = in[0].dtype;
  int want_a = req[0] != MXC__REQ_NULL, want_b = req[1] != MXC__REQ_NULL;
  if (mxc__shape_equal(&in[1].shape, &in[2].shape)) { /* nothing stretched */
    mxc__bin_grad_row(k, dt, in[0].ptr, in[1].ptr, 1, in[2].ptr, 1,
                      want_a ? out[0].ptr : NULL, want_b ? out[1].ptr : NULL,
                      mxc__shape_size(&in[0].shape), req[0] == MXC__REQ_ADD,
                      req[1] == MXC__REQ_ADD);
    return MXC_OK;
  }
  int64_t na = want_a ? mxc__shape_size(&in[1].shape) : 0;
  int64_t nb = want_b ? mxc__shape_size(&in[2].shape) : 0;
  double *acc = NULL;
  size_t bytes = (size_t)(na + nb + 1) * sizeof(double);
  MXC_FORWARD_IF_ERROR(mxc__opctx_temp(ctx, bytes, (void **)&acc));
  memset(acc, 0, bytes);
  bwd_ctx c = {k,   dt, in[0].ptr, in[1].ptr, in[2].ptr, want_a ? acc : NULL,
               want_b ? acc + na : NULL};
  if (mxc__shape_size(&in[0].shape) > 0) {
    layout l;
    layout_make(&in[1].shape, &in[2].shape, &in[0].shape, &l);
    for_rows(&l, bwd_row, &c);
  }
  if (want_a) store_acc(&out[0], c.acc_a, req[0] == MXC__REQ_ADD);
  if (want_b) store_acc(&out[1], c.acc_b, req[1] == MXC__REQ_ADD);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_in_names[] = {"lhs", "rhs", NULL};
static const char *const k_bwd_in_names[] = {"ograd", "lhs", "rhs", NULL};

#define FWD_DESC(nm, stem, f, da, db, flags, doc_, ...)                     \
  [MXC__BIN_##nm] = {                                                       \
      .name = "broadcast_" #nm,                                             \
      .doc = doc_ " Operands lhs (a) and rhs (b) broadcast against each "   \
                  "other with numpy's rules.",                              \
      .n_inputs = 2,                                                        \
      .input_names = k_in_names,                                            \
      .n_outputs = 1,                                                       \
      .infer_shape = bc_infer_shape,                                        \
      .infer_type = bc_type,                                                \
      .compute = bc_forward,                                                \
      .gradient = ((flags)&MXC__BIN_GRAD) ? mxc__grad_use_in : mxc__grad_none, \
      .backward_uses_inputs = ((flags)&MXC__BIN_GRAD) ? 3 : 0,              \
  },
#define BWD_DESC(nm, stem, f, da, db, flags, doc_, ...) \
  [MXC__BIN_##nm] = {                                   \
      MXC__BACKWARD("broadcast_" #nm),                  \
      .n_inputs = 3,                                    \
      .input_names = k_bwd_in_names,                    \
      .n_outputs = 2,                                   \
      .infer_shape = bc_bwd_infer_shape,                \
      .infer_type = bc_type,                            \
      .compute = bc_backward,                           \
      .resources = MXC__RES_TEMP,                       \
  },
/* MXNet's other spelling, broadcast_<stem>, where the stem differs. */
#define STEM_ALIAS(nm, stem, f, da, db, flags, doc_, ...) \
  [MXC__BIN_##nm] = {"broadcast_" #stem, NULL},

/* Not const: registration adds the stem aliases. */
static mxc__op k_fwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(FWD_DESC)};
static const mxc__op k_bwd[MXC__BIN_COUNT] = {MXC__BINARY_OPS(BWD_DESC)};
static const char *const k_stem_alias[MXC__BIN_COUNT][2] = {
    MXC__BINARY_OPS(STEM_ALIAS)};

int mxc__bin_register_broadcast(mxc__registry *r) {
  for (int i = 0; i < MXC__BIN_COUNT; ++i) {
    const mxc__bin_impl *k = &mxc__bin_impls[i];
    /* broadcast_plus, broadcast_minus: the stem alias where the stem
     * differs from the name (registration runs once, before any lookup). */
    if (strcmp(k->name, k->stem) != 0) k_fwd[i].aliases = k_stem_alias[i];
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
    if (k->flags & MXC__BIN_GRAD) {
      MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
    }
  }
  return MXC_OK;
}
