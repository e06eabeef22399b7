/* The recurrent layers "lstm" and "gru": Gluon's rnn.LSTM / rnn.GRU over
 * the fused RNN operator (ops/linalg/rnn.c).
 *
 * Parameters are Gluon's, one array per unit and kind, named
 * "<block>_{l,r}<layer>_{i2h,h2h}_{weight,bias}" (l: forward, r: the
 * reverse direction), declared layer by layer and direction by direction
 * in the order i2h_weight, h2h_weight, i2h_bias, h2h_bias, with shapes
 * (G*H, in), (G*H, H), (G*H,), (G*H,) (G = 4 gates for LSTM, 3 for GRU).
 * Keeping them separate (rather than one packed vector) gives them
 * Gluon's names and shapes in saved and exported files and per-matrix
 * initializers; the forward pass packs them into the operator's single
 * vector (every weight, then every bias, Gluon's _forward_kernel order)
 * with Reshape and Concat, which autograd differentiates like any call.
 *
 * The begin states are zeros of shape (L*D, N, H). They are made from the
 * input by operators (a slice of one step and one feature, zeros_like,
 * broadcast_to), not as arrays of a fixed batch size, so that the same
 * graph serves any batch size once exported, and MXNet (which has all
 * these operators) loads it. Gluon's own export uses _zeros with an
 * unknown batch extent and _rnn_param_concat instead; the parameter names
 * and values are the same.
 *
 * One description of the forward pass (rnn_program) runs either on arrays
 * (the imperative forward, recorded by autograd when the thread records)
 * or on symbols (the graph that hybridize binds and export writes), so
 * the two cannot drift apart. Layout NTC adds a SwapAxis on each side. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/symbol.h"
#include "core/nn/internal.h"

const char *const mxc__nn_rnn_keys[] = {
    "hidden_size",            "num_layers",
    "layout",                 "dropout",
    "bidirectional",          "input_size",
    "i2h_weight_initializer", "h2h_weight_initializer",
    "i2h_bias_initializer",   "h2h_bias_initializer",
    NULL};

/* The geometry a block's configuration fixes (setup checked it). */
typedef struct rnn_cfg {
  int64_t H, L, D, G, I; /* I: 0 until known */
  int ntc;
} rnn_cfg;

static int cfg_of(const mxc__block *b, rnn_cfg *c) {
  int bidir = 0;
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "hidden_size", 0, 1, INT32_MAX, &c->H));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_int(b, "num_layers", 1, 1, 4096, &c->L));
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "input_size", 0, 0, INT32_MAX, &c->I));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "bidirectional", 0, &bidir));
  const char *layout = mxc__nn_cfg(b, "layout", "TNC");
  MXC_RETURN_ERROR_IF(strcmp(layout, "TNC") && strcmp(layout, "NTC"),
                      MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': layout is '%s'; expected TNC or NTC",
                      b->name, layout);
  c->ntc = !strcmp(layout, "NTC");
  c->D = bidir ? 2 : 1;
  c->G = !strcmp(b->kind->name, "lstm") ? 4 : 3;
  return MXC_OK;
}

/* Shape of parameter k (0 i2h_weight, 1 h2h_weight, 2 i2h_bias,
 * 3 h2h_bias) of a unit of layer l, for input size I (0: unknown). */
static mxc__shape unit_param_shape(const rnn_cfg *c, int64_t l, int k,
                                   int64_t I) {
  int64_t in = l == 0 ? I : c->D * c->H;
  mxc__shape s = {k < 2 ? 2 : 1, {c->G * c->H, k == 0 ? in : c->H}};
  return s;
}

static int declare_params(mxc__block *b, const rnn_cfg *c) {
  static const char *const what[] = {"i2h_weight", "h2h_weight", "i2h_bias",
                                     "h2h_bias"};
  static const char *const init_key[] = {
      "i2h_weight_initializer", "h2h_weight_initializer",
      "i2h_bias_initializer", "h2h_bias_initializer"};
  for (int64_t l = 0; l < c->L; ++l) {
    for (int64_t d = 0; d < c->D; ++d) {
      for (int k = 0; k < 4; ++k) {
        char name[64];
        snprintf(name, sizeof name, "%c%lld_%s", d ? 'r' : 'l', (long long)l,
                 what[k]);
        mxc__shape s = unit_param_shape(c, l, k, c->I);
        const char *init = mxc__nn_cfg(b, init_key[k], k < 2 ? NULL : "zeros");
        MXC_FORWARD_IF_ERROR(
            mxc__nn_param_declare(b, name, s.ndim, s.dims, 0, init));
      }
    }
  }
  return MXC_OK;
}

int mxc__nn_rnn_setup(mxc__block *b) {
  MXC_RETURN_ERROR_IF(!mxc__nn_cfg(b, "hidden_size", NULL),
                      MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': hidden_size is required", b->name);
  rnn_cfg c;
  MXC_FORWARD_IF_ERROR(cfg_of(b, &c));
  MXC_FORWARD_IF_ERROR(declare_params(b, &c));
  char h[24], l[24], d[2] = {c.D == 2 ? '1' : '0', 0};
  snprintf(h, sizeof h, "%lld", (long long)c.H);
  snprintf(l, sizeof l, "%lld", (long long)c.L);
  const char *k[] = {"state_size", "num_layers", "bidirectional", "mode",
                     "p"};
  const char *v[] = {h, l, d, b->kind->name, mxc__nn_cfg(b, "dropout", "0")};
  return mxc__nn_set_op(b, "RNN", 5, k, v);
}

/* ---- one forward pass on arrays or symbols ---- */

typedef union rnn_val {
  mxc__ndarray *a;
  mxc__symbol *s;
} rnn_val;

/* Where values go: arrays (imperative) or symbols (a graph), and every
 * value made so far, dropped together at the end. */
typedef struct rnn_emit {
  const mxc__block *b;
  int symbolic;
  int n_made, cap;
  rnn_val *made;
} rnn_emit;

static void emit_drop(rnn_emit *e, rnn_val v) {
  if (e->symbolic) {
    mxc__symbol_free(v.s);
  } else {
    mxc__ndarray_free(v.a);
  }
}

static void emit_clear(rnn_emit *e) {
  for (int i = 0; i < e->n_made; ++i) emit_drop(e, e->made[i]);
  mxc__free(e->made);
}

/* Keeps v to drop at the end (dropped now if that fails). */
static int emit_keep(rnn_emit *e, rnn_val v) {
  if (e->n_made == e->cap) {
    int cap = e->cap ? 2 * e->cap : 16;
    rnn_val *m = mxc__realloc(e->made, (size_t)cap * sizeof *m);
    if (!m) {
      emit_drop(e, v);
      return mxc__error_set(MXC_ERR_OOM, "forward '%s': out of memory",
                            e->b->name);
    }
    e->made = m;
    e->cap = cap;
  }
  e->made[e->n_made++] = v;
  return MXC_OK;
}

/* Operator op on in[0..n_in) with n parameter strings; the node of a graph
 * is named "<block>_<tag>". *out is kept by e (borrowed by the caller). */
static int emit_op(rnn_emit *e, const char *op, const char *tag, int n,
                   const char *const *k, const char *const *v, int n_in,
                   const rnn_val *in, rnn_val *out) {
  const mxc__op *o = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(op, &o));
  void **ptrs = mxc__calloc((size_t)n_in, sizeof *ptrs);
  MXC_RETURN_ERROR_IF(!ptrs, MXC_ERR_OOM, "forward '%s': out of memory",
                      e->b->name);
  int rc = MXC_OK;
  if (e->symbolic) {
    mxc__symbol **s = (mxc__symbol **)ptrs;
    for (int i = 0; i < n_in; ++i) s[i] = in[i].s;
    char name[256];
    snprintf(name, sizeof name, "%s_%s", e->b->name, tag);
    out->s = NULL;
    rc = mxc__symbol_create(o, k, v, n, name, NULL, s, n_in, &out->s);
  } else {
    mxc__ndarray **a = (mxc__ndarray **)ptrs;
    for (int i = 0; i < n_in; ++i) a[i] = in[i].a;
    out->a = NULL;
    rc = mxc__nn_call_op(o, n, k, v, n_in, a, &out->a);
  }
  mxc__free(ptrs);
  return rc == MXC_OK ? emit_keep(e, *out) : rc;
}

/* Exchanges the sequence and batch axes (layout NTC). */
static int emit_swap(rnn_emit *e, const char *tag, rnn_val x, rnn_val *out) {
  const char *k[] = {"dim1", "dim2"}, *v[] = {"0", "1"};
  return emit_op(e, "SwapAxis", tag, 2, k, v, 1, &x, out);
}

/* The parameters packed into the operator's vector: every weight, then
 * every bias, unit by unit (layer, then direction), i2h before h2h. */
static int emit_pack(rnn_emit *e, int n_params, const rnn_val *params,
                     rnn_val *out) {
  rnn_val *flat = mxc__calloc((size_t)n_params, sizeof *flat);
  MXC_RETURN_ERROR_IF(!flat, MXC_ERR_OOM, "forward '%s': out of memory",
                      e->b->name);
  const char *rk[] = {"shape"}, *rv[] = {"(-1,)"};
  int rc = MXC_OK, units = n_params / 4;
  for (int i = 0; i < n_params && rc == MXC_OK; ++i) {
    int t = i / (2 * units), u = (i / 2) % units, g = i % 2;
    int from = u * 4 + t * 2 + g;
    char tag[96];
    snprintf(tag, sizeof tag, "%s_flat", e->b->params[from].name +
                                             strlen(e->b->name) + 1);
    rc = emit_op(e, "Reshape", tag, 1, rk, rv, 1, &params[from], &flat[i]);
  }
  char na[24];
  snprintf(na, sizeof na, "%d", n_params);
  const char *ck[] = {"dim", "num_args"}, *cv[] = {"0", na};
  if (rc == MXC_OK) {
    rc = emit_op(e, "Concat", "params", 2, ck, cv, n_params, flat, out);
  }
  mxc__free(flat);
  return rc;
}

/* Zeros (L*D, N, H) like x (T, N, I): one step and one feature of x,
 * zeroed and broadcast, so the batch extent follows the input. */
static int emit_zero_state(rnn_emit *e, const rnn_cfg *c, rnn_val x,
                           rnn_val *out) {
  const char *sk[] = {"axis", "begin", "end"};
  const char *s0[] = {"0", "0", "1"}, *s2[] = {"2", "0", "1"};
  rnn_val step, one, z;
  MXC_FORWARD_IF_ERROR(emit_op(e, "slice_axis", "state_step", 3, sk, s0, 1,
                               &x, &step));
  MXC_FORWARD_IF_ERROR(emit_op(e, "slice_axis", "state_feature", 3, sk, s2,
                               1, &step, &one));
  MXC_FORWARD_IF_ERROR(emit_op(e, "zeros_like", "state_zeros", 0, NULL, NULL,
                               1, &one, &z));
  char shape[96];
  snprintf(shape, sizeof shape, "(%lld,0,%lld)", (long long)(c->L * c->D),
           (long long)c->H);
  const char *bk[] = {"shape"}, *bv[] = {shape};
  return emit_op(e, "broadcast_to", "begin_state", 1, bk, bv, 1, &z, out);
}

/* The whole pass on data (layout as configured) and the block's
 * parameters in declaration order; *out kept by e. */
static int rnn_program(rnn_emit *e, const rnn_cfg *c, rnn_val data,
                       const rnn_val *params, rnn_val *out) {
  const mxc__block *b = e->b;
  rnn_val x = data, packed, st, y;
  if (c->ntc) MXC_FORWARD_IF_ERROR(emit_swap(e, "swap_in", data, &x));
  MXC_FORWARD_IF_ERROR(emit_pack(e, b->n_params, params, &packed));
  MXC_FORWARD_IF_ERROR(emit_zero_state(e, c, x, &st));
  rnn_val in[4] = {x, packed, st, st};
  MXC_FORWARD_IF_ERROR(emit_op(e, "RNN", "fwd", b->n_op,
                               (const char *const *)b->op_keys,
                               (const char *const *)b->op_vals,
                               c->G == 4 ? 4 : 3, in, &y));
  if (!c->ntc) {
    *out = y;
    return MXC_OK;
  }
  return emit_swap(e, "swap_out", y, out);
}

/* Takes v out of e's list: the caller owns it now. */
static void emit_take(rnn_emit *e, rnn_val v) {
  for (int i = e->n_made - 1; i >= 0; --i) {
    if (e->made[i].a == v.a) {
      e->made[i] = e->made[--e->n_made];
      return;
    }
  }
}

/* ---- the imperative forward ---- */

/* Makes every parameter ready for input size I (deferred extents). */
static int params_ready(mxc__block *b, const rnn_cfg *c, int64_t I,
                        const mxc__ndarray *like) {
  for (int i = 0; i < b->n_params; ++i) {
    int64_t l = i / (4 * c->D);
    mxc__shape s = unit_param_shape(c, l, i % 4, I);
    MXC_FORWARD_IF_ERROR(mxc__nn_param_ready(b, i, &s, like));
  }
  return MXC_OK;
}

int mxc__nn_rnn_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                        mxc__ndarray **out) {
  (void)n_in;
  rnn_cfg c;
  MXC_FORWARD_IF_ERROR(cfg_of(b, &c));
  const mxc__shape *x = &in[0]->shape;
  MXC_RETURN_ERROR_IF(x->ndim != 3, MXC_ERR_SHAPE,
                      "forward '%s': the input has %d axes; expected 3 (%s)",
                      b->name, x->ndim,
                      c.ntc ? "batch, sequence, features: layout NTC"
                            : "sequence, batch, features: layout TNC");
  /* The begin state is sliced from the first step and feature. */
  int64_t steps = x->dims[c.ntc ? 1 : 0];
  MXC_RETURN_ERROR_IF(steps < 1 || x->dims[2] < 1, MXC_ERR_SHAPE,
                      "forward '%s': the input has %lld steps and %lld "
                      "features; expected at least 1 of each",
                      b->name, (long long)steps, (long long)x->dims[2]);
  MXC_FORWARD_IF_ERROR(params_ready(b, &c, x->dims[2], in[0]));
  rnn_val *ps = mxc__calloc((size_t)b->n_params, sizeof *ps);
  MXC_RETURN_ERROR_IF(!ps, MXC_ERR_OOM, "forward '%s': out of memory",
                      b->name);
  for (int i = 0; i < b->n_params; ++i) ps[i].a = b->params[i].data;
  rnn_emit e = {b, 0, 0, 0, NULL};
  rnn_val data = {.a = in[0]}, y = {NULL};
  int rc = rnn_program(&e, &c, data, ps, &y);
  if (rc == MXC_OK) {
    emit_take(&e, y);
    *out = y.a;
  }
  emit_clear(&e);
  mxc__free(ps);
  return rc;
}

/* ---- the graph ---- */

static int param_vars(const mxc__block *b, rnn_emit *e, rnn_val *ps) {
  for (int i = 0; i < b->n_params; ++i) {
    MXC_RETURN_ERROR_IF(!b->params[i].data, MXC_ERR_INVALID_ARGUMENT,
                        "export: parameter '%s' is not made yet (run a "
                        "forward pass first)",
                        b->params[i].name);
    MXC_FORWARD_IF_ERROR(mxc__nn_param_var(&b->params[i], &ps[i].s));
    MXC_FORWARD_IF_ERROR(emit_keep(e, ps[i]));
  }
  return MXC_OK;
}

int mxc__nn_rnn_symbol(const mxc__block *b, mxc__symbol *in,
                       mxc__symbol **out) {
  rnn_cfg c;
  MXC_FORWARD_IF_ERROR(cfg_of(b, &c));
  rnn_val *ps = mxc__calloc((size_t)b->n_params, sizeof *ps);
  MXC_RETURN_ERROR_IF(!ps, MXC_ERR_OOM, "export '%s': out of memory",
                      b->name);
  rnn_emit e = {b, 1, 0, 0, NULL};
  rnn_val data = {.s = in}, y = {NULL};
  int rc = param_vars(b, &e, ps);
  if (rc == MXC_OK) rc = rnn_program(&e, &c, data, ps, &y);
  if (rc == MXC_OK) {
    emit_take(&e, y);
    *out = y.s;
  }
  emit_clear(&e);
  mxc__free(ps);
  return rc;
}
