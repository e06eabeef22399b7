/* RNN: MXNet's fused recurrent operator (vanilla relu/tanh, LSTM, GRU;
 * multi-layer, bidirectional), with MXNet's packed parameter vector.
 *
 * Layout (T the sequence length, N the batch, I the input size, H
 * state_size, L num_layers, D 2 when bidirectional else 1, G the gates
 * per unit: 1, 4 for LSTM in the order i, f, g, o, 3 for GRU in the order
 * r, z, n):
 *   data (T, N, I); state and state_cell (L*D, N, H), index l*D + d;
 *   parameters (P,): first every weight, layer by layer and direction by
 *   direction, i2h (G*H, in_l) then h2h (G*H, H), in_l = I for layer 0
 *   and D*H above; then every bias in the same order, i2h (G*H) then
 *   h2h (G*H). This is the order MXNet's Gluon layers concatenate their
 *   parameters in, and the gate order of its documentation; it is also
 *   cuDNN's and torch's (the tests repack torch's weights into it).
 *   out (T, N, D*H); with state_outputs also hy and, for LSTM, cy
 *   (L*D, N, H): the states after each row's last step.
 * GRU follows MXNet's (and cuDNN's) definition: the reset gate multiplies
 * the recurrent projection including its bias,
 * n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h.
 *
 * Training: p is the dropout on each layer's output except the last
 * one. The forward keeps everything the gradient needs in a hidden last
 * output (the "reserve": gate activations, states, dropout masks), so
 * the backward never recomputes the forward. Sequence lengths
 * (use_sequence_length): steps past a row's length output 0 and leave its
 * state unchanged, the reverse direction starts at each row's last
 * valid step (what cuDNN does for padded batches; MXNet offers this only
 * on GPUs). lstm_state_clip_min/max clip the cell state after each step;
 * a clipped cell passes no gradient. projection_size (LSTMP) is not
 * implemented and rejected. */
#include <math.h>
#include <string.h>

#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"
#include "ops/linalg/rnn_param.h"

/* The struct and the packed vector's geometry live in rnn_param.h, which
 * the CUDA plug-in's cuDNN plan reads too. */
enum {
  RNN_RELU = MXC__RNN_RELU,
  RNN_TANH = MXC__RNN_TANH,
  RNN_LSTM = MXC__RNN_LSTM,
  RNN_GRU = MXC__RNN_GRU
};
static const char *const k_modes[] = {"rnn_relu", "rnn_tanh", "lstm", "gru",
                                      NULL};

typedef mxc__rnn_param rnn_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(rnn_param, state_size, MXC__P_INT, NULL, 1, 1e15,
                     "Size of the hidden state (H)."),
    MXC__PARAM_RANGE(rnn_param, num_layers, MXC__P_INT, NULL, 1, 1e6,
                     "Number of stacked layers."),
    MXC__PARAM(rnn_param, bidirectional, MXC__P_BOOL, "false",
               "Run every layer in both directions and concatenate."),
    MXC__PARAM_ENUM(rnn_param, mode, NULL, k_modes,
                    "Cell: rnn_relu, rnn_tanh, lstm or gru."),
    MXC__PARAM_RANGE(rnn_param, p, MXC__P_FLOAT, "0", 0, 1,
                     "Dropout on the output of every layer but the last, "
                     "in training only; below 1."),
    MXC__PARAM(rnn_param, state_outputs, MXC__P_BOOL, "false",
               "Also return the final states (hy, and cy for LSTM)."),
    MXC__PARAM(rnn_param, projection_size, MXC__P_OPT_INT, "None",
               "LSTM projection size (LSTMP): not implemented, must be "
               "None."),
    MXC__PARAM(rnn_param, use_sequence_length, MXC__P_BOOL, "false",
               "Take a last input sequence_length (N,) of valid steps per "
               "row."),
    MXC__PARAM(rnn_param, lstm_state_clip_min, MXC__P_OPT_FLOAT, "None",
               "Lower bound of the LSTM cell state (with the upper one)."),
    MXC__PARAM(rnn_param, lstm_state_clip_max, MXC__P_OPT_FLOAT, "None",
               "Upper bound of the LSTM cell state (with the lower one)."),
    MXC__PARAM(rnn_param, lstm_state_clip_nan, MXC__P_BOOL, "false",
               "With clipping: a NaN cell state becomes the lower bound."),
};

static int rnn_param_check(const char *op_name, void *param) {
  rnn_param *p = param;
  MXC_RETURN_ERROR_IF(p->projection_size.has, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': projection_size is not supported "
                      "(expected None)",
                      op_name);
  MXC_RETURN_ERROR_IF(!(p->p < 1), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': p must be in [0, 1) (got %g)", op_name,
                      p->p);
  int lo = !isnan(p->lstm_state_clip_min), hi = !isnan(p->lstm_state_clip_max);
  MXC_RETURN_ERROR_IF(lo != hi, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': lstm_state_clip_min and "
                      "lstm_state_clip_max go together (got only one)",
                      op_name);
  MXC_RETURN_ERROR_IF(lo && (p->mode != RNN_LSTM ||
                             !(p->lstm_state_clip_min <=
                               p->lstm_state_clip_max)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': state clipping needs mode 'lstm' and "
                      "lstm_state_clip_min <= lstm_state_clip_max",
                      op_name);
  return MXC_OK;
}

/* ---- inputs and outputs ---- */

static int is_lstm(const void *param) {
  return ((const rnn_param *)param)->mode == RNN_LSTM;
}
static int rnn_num_inputs(const void *param) {
  return 3 + is_lstm(param) + ((const rnn_param *)param)->use_sequence_length;
}
/* Inputs that get a gradient (all but sequence_length). */
static int rnn_num_grads(const void *param) { return 3 + is_lstm(param); }
static int rnn_num_states_out(const void *param) {
  return ((const rnn_param *)param)->state_outputs ? 1 + is_lstm(param) : 0;
}
/* out, the final states, and the hidden reserve. */
static int rnn_num_outputs(const void *param) {
  return 2 + rnn_num_states_out(param);
}
static int rnn_num_visible(const void *param) {
  return rnn_num_outputs(param) - 1;
}
static int rnn_bwd_num_inputs(const void *param) {
  return rnn_num_outputs(param) - 1 + rnn_num_inputs(param) +
         rnn_num_outputs(param);
}

static const char *const k_names[] = {"data", "parameters", "state",
                                      "state_cell", "sequence_length", NULL};
static const char *const k_out_names[] = {"output", "state_output",
                                          "statecell_output", NULL};

static const char *rnn_input_name(const void *param, int i) {
  if (i < 0 || i >= rnn_num_inputs(param)) return "?";
  if (i == 3 && !is_lstm(param)) return "sequence_length";
  return k_names[i];
}

static const char *rnn_bwd_input_name(const void *param, int i) {
  int nv = rnn_num_outputs(param) - 1, ni = rnn_num_inputs(param);
  if (i < nv) return "ograd";
  if (i < nv + ni) return rnn_input_name(param, i - nv);
  return "output";
}

/* ---- geometry ---- */

typedef mxc__rnn_geom rnn_geom;

static void geom_of(const rnn_param *p, const mxc__shape *data, rnn_geom *g) {
  *g = mxc__rnn_geom_of(p, data->dims);
}

static int64_t layer_in(const rnn_geom *g, int64_t l) {
  return mxc__rnn_layer_in(g, l);
}

/* a*b + c*d, MXC_ERR_SHAPE on overflow. */
static int muladd(const char *op, int64_t a, int64_t b, int64_t c, int64_t d,
                  int64_t *out) {
  int64_t x = 0, y = 0;
  int ok = mxc__mul_i64(a, b, &x) && mxc__mul_i64(c, d, &y) &&
           mxc__add_i64(x, y, out);
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_SHAPE,
                      "operator '%s': parameter or workspace size "
                      "overflows int64",
                      op);
  return MXC_OK;
}

/* Elements of the packed parameter vector. */
static int param_count(const char *op, const rnn_geom *g, int64_t *out) {
  int64_t gh = 0, per = 0, total = 0;
  MXC_FORWARD_IF_ERROR(muladd(op, g->G, g->H, 0, 0, &gh));
  for (int64_t l = 0; l < g->L; ++l) {
    /* weights gh*(in + H) and two biases, per direction */
    MXC_FORWARD_IF_ERROR(muladd(op, gh, layer_in(g, l), gh, g->H + 2, &per));
    MXC_FORWARD_IF_ERROR(muladd(op, per, g->D, total, 1, &total));
  }
  *out = total;
  return MXC_OK;
}

/* Per unit (layer, direction): gates (T,N,G*H), states (T,N,H), and for
 * LSTM the cells, for GRU the recurrent n projections (T,N,H). Per layer
 * above the first: its input after dropout and the mask (T,N,D*H). */
static int64_t unit_size(const rnn_geom *g) {
  return g->T * g->N * g->H * (g->G + 2); /* vanilla leaves cells unused */
}

static int reserve_count(const char *op, const rnn_geom *g, int64_t *out) {
  int64_t tnh = 0, unit = 0, units = 0, layer = 0;
  MXC_FORWARD_IF_ERROR(muladd(op, g->T, g->N, 0, 0, &tnh));
  MXC_FORWARD_IF_ERROR(muladd(op, tnh, g->H * (g->G + 2), 0, 0, &unit));
  MXC_FORWARD_IF_ERROR(muladd(op, unit, g->L * g->D, 0, 0, &units));
  MXC_FORWARD_IF_ERROR(muladd(op, tnh, 2 * g->D * g->H, 0, 0, &layer));
  return muladd(op, layer, g->L - 1, units, 1, out);
}

typedef mxc__rnn_unit_params unit_params;

static unit_params unit_offsets(const rnn_geom *g, int64_t l, int64_t d) {
  return mxc__rnn_unit_offsets(g, l, d);
}

/* ---- shape and type inference ---- */

static int rnn_infer_shape(const mxc__op *op, const void *param,
                           mxc__shape *in, int n_in, mxc__shape *out,
                           int n_out) {
  const rnn_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  MXC_RETURN_ERROR_IF(in[0].ndim != 3, MXC_ERR_SHAPE,
                      "operator '%s': data must be (T, N, C) (got %d axes)",
                      op->name, in[0].ndim);
  rnn_geom g;
  geom_of(p, &in[0], &g);
  int64_t np = 0, nr = 0;
  MXC_FORWARD_IF_ERROR(param_count(op->name, &g, &np));
  MXC_FORWARD_IF_ERROR(reserve_count(op->name, &g, &nr));
  mxc__shape ps = {1, {np}}, st = {3, {g.L * g.D, g.N, g.H}};
  mxc__shape os = {3, {g.T, g.N, g.D * g.H}}, rs = {1, {nr}};
  mxc__shape ls = {1, {g.N}};
  MXC_FORWARD_IF_ERROR(
      mxc__linalg_assign_shape(op, param, &in[1], &ps, "input 1 ('parameters')"));
  for (int i = 2; i < rnn_num_grads(param); ++i) {
    MXC_FORWARD_IF_ERROR(
        mxc__linalg_assign_shape(op, param, &in[i], &st, "a state input"));
  }
  if (p->use_sequence_length) {
    MXC_FORWARD_IF_ERROR(mxc__linalg_assign_shape(
        op, param, &in[n_in - 1], &ls, "input 'sequence_length'"));
  }
  MXC_FORWARD_IF_ERROR(
      mxc__linalg_assign_shape(op, param, &out[0], &os, "output"));
  for (int i = 1; i < n_out - 1; ++i) {
    MXC_FORWARD_IF_ERROR(
        mxc__linalg_assign_shape(op, param, &out[i], &st, "a state output"));
  }
  return mxc__linalg_assign_shape(op, param, &out[n_out - 1], &rs, "reserve");
}

/* Backward: (ograds, inputs, outputs) -> gradients of the inputs but
 * sequence_length. */
static int rnn_bwd_infer_shape(const mxc__op *op, const void *param,
                               mxc__shape *in, int n_in, mxc__shape *out,
                               int n_out) {
  int nv = rnn_num_outputs(param) - 1, ni = rnn_num_inputs(param);
  MXC_RETURN_ERROR_IF(n_in != nv + ni + nv + 1, MXC_ERR_SHAPE,
                      "operator '%s': expected %d inputs (got %d)", op->name,
                      nv + ni + nv + 1, n_in);
  MXC_FORWARD_IF_ERROR(
      rnn_infer_shape(op, param, in + nv, ni, in + nv + ni, nv + 1));
  for (int i = 0; i < nv; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__linalg_assign_shape(op, param, &in[i],
                                                  &in[nv + ni + i], "ograd"));
  }
  for (int i = 0; i < n_out; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__linalg_assign_shape(op, param, &out[i],
                                                  &in[nv + i], "a gradient"));
  }
  return MXC_OK;
}

/* Every slot float32 or float64 and equal, except sequence_length
 * (skip), which may have any numeric dtype. */
static int unify_types(const mxc__op *op, int *in, int n_in, int skip,
                       int *out, int n_out) {
  int dt = -1;
  for (int i = 0; i < n_in && dt < 0; ++i) {
    if (i != skip) dt = in[i];
  }
  for (int i = 0; i < n_out && dt < 0; ++i) dt = out[i];
  if (dt < 0) return MXC_OK;
  if (dt != MXC_DTYPE_FLOAT32 && dt != MXC_DTYPE_FLOAT64) {
    return mxc__unsupported_dtype(op->name, dt, "float32 or float64");
  }
  for (int i = 0; i < n_in + n_out; ++i) {
    int *t = i < n_in ? &in[i] : &out[i - n_in];
    if (i == skip) continue;
    MXC_RETURN_ERROR_IF(*t >= 0 && *t != dt, MXC_ERR_DTYPE,
                        "operator '%s': every array but sequence_length "
                        "must have one dtype (got %s and %s)",
                        op->name, mxc__dtype_name(dt), mxc__dtype_name(*t));
    *t = dt;
  }
  return MXC_OK;
}

static int rnn_infer_type(const mxc__op *op, const void *param, int *in,
                          int n_in, int *out, int n_out) {
  int skip = ((const rnn_param *)param)->use_sequence_length ? n_in - 1 : -1;
  return unify_types(op, in, n_in, skip, out, n_out);
}

static int rnn_bwd_infer_type(const mxc__op *op, const void *param, int *in,
                              int n_in, int *out, int n_out) {
  int nv = rnn_num_outputs(param) - 1, ni = rnn_num_inputs(param);
  int skip = ((const rnn_param *)param)->use_sequence_length ? nv + ni - 1 : -1;
  return unify_types(op, in, n_in, skip, out, n_out);
}

/* ---- kernels ---- */

/* One time step of one unit, for the typed kernels of rnn_cell.h. */
typedef struct rnn_step {
  int64_t n, hid;
  int mode, relu, clip, clip_nan;
  double clip_lo, clip_hi;
  const unsigned char *valid; /* (n) step inside the row's sequence; NULL: all */
  const void *hh;             /* (n, G*hid): h_{t-1} W_h^T */
  const void *hprev, *cprev;  /* (n, hid) previous state; cprev LSTM only */
  const void *bhn;            /* GRU: the h2h bias of the n gate */
  void *gates;                /* forward: pre-activations in, activations out */
  const void *act;            /* backward: the forward's activations */
  void *h, *c;                /* (n, hid) state and LSTM cell / GRU hn */
  void *dh, *dc;              /* backward: state gradients, updated */
  void *dgx, *dgh;            /* backward: (n, G*hid) gate gradients */
} rnn_step;

#define RT float
#define RNN_FN(name) name##_f32
#include "ops/linalg/rnn_cell.h"
#undef RT
#undef RNN_FN
#define RT double
#define RNN_FN(name) name##_f64
#include "ops/linalg/rnn_cell.h"
#undef RT
#undef RNN_FN

#define RNN_CALL(dt, fn, ...)                                   \
  ((dt) == MXC_DTYPE_FLOAT32 ? fn##_f32(__VA_ARGS__) : fn##_f64(__VA_ARGS__))

static void step_fwd(int dt, const rnn_step *s) {
  if (s->mode == RNN_LSTM) {
    RNN_CALL(dt, lstm_fwd, s);
  } else if (s->mode == RNN_GRU) {
    RNN_CALL(dt, gru_fwd, s);
  } else {
    RNN_CALL(dt, vanilla_fwd, s);
  }
}

static void step_bwd(int dt, const rnn_step *s) {
  if (s->mode == RNN_LSTM) {
    RNN_CALL(dt, lstm_bwd, s);
  } else if (s->mode == RNN_GRU) {
    RNN_CALL(dt, gru_bwd, s);
  } else {
    RNN_CALL(dt, vanilla_bwd, s);
  }
}

/* Everything one forward or backward call works with. Byte pointers;
 * AT(p, i) is element i. */
typedef struct rnn_run {
  const rnn_param *p;
  rnn_geom g;
  int dt;
  size_t es;
  char *data, *w, *h0, *c0, *res;
  int64_t *lens;        /* NULL: every row has T steps */
  unsigned char *valid; /* (N) scratch */
  char *hh;             /* forward scratch (N, G*H) */
  /* backward */
  char *dhy, *dcy;      /* given state gradients or NULL */
  char *dgx, *dgh, *dh, *dc, *dw, *dh0, *dc0;
} rnn_run;

#define AT(p, i) ((p) + (size_t)(i) * r->es)

static int64_t unit_index(const rnn_run *r, int64_t l, int64_t d) {
  return l * r->g.D + d;
}
static char *unit_gates(const rnn_run *r, int64_t l, int64_t d) {
  return AT(r->res, unit_index(r, l, d) * unit_size(&r->g));
}
static char *unit_hs(const rnn_run *r, int64_t l, int64_t d) {
  return AT(unit_gates(r, l, d), r->g.T * r->g.N * r->g.G * r->g.H);
}
static char *unit_cs(const rnn_run *r, int64_t l, int64_t d) {
  return AT(unit_hs(r, l, d), r->g.T * r->g.N * r->g.H);
}
/* Layer l >= 1: its input after dropout, and the dropout mask. */
static char *layer_xin(const rnn_run *r, int64_t l) {
  const rnn_geom *g = &r->g;
  int64_t tnd = g->T * g->N * g->D * g->H;
  return AT(r->res, g->L * g->D * unit_size(g) + (l - 1) * 2 * tnd);
}
static char *layer_mask(const rnn_run *r, int64_t l) {
  return AT(layer_xin(r, l), r->g.T * r->g.N * r->g.D * r->g.H);
}

/* Rows still inside their sequence at step t; NULL without lengths. */
static const unsigned char *step_valid(const rnn_run *r, int64_t t) {
  if (!r->lens) return NULL;
  for (int64_t n = 0; n < r->g.N; ++n) r->valid[n] = t < r->lens[n];
  return r->valid;
}

/* The state before processing step k (0-based in the unit's direction). */
static void prev_state(const rnn_run *r, int64_t l, int64_t d, int64_t k,
                       const void **h, const void **c) {
  const rnn_geom *g = &r->g;
  int64_t nh = g->N * g->H, tp = d ? g->T - k : k - 1;
  int lstm = g->mode == RNN_LSTM;
  if (k == 0) {
    *h = AT(r->h0, unit_index(r, l, d) * nh);
    *c = lstm ? AT(r->c0, unit_index(r, l, d) * nh) : NULL;
  } else {
    *h = AT(unit_hs(r, l, d), tp * nh);
    *c = lstm ? AT(unit_cs(r, l, d), tp * nh) : NULL;
  }
}

static rnn_step step_base(const rnn_run *r, const unit_params *up) {
  rnn_step s;
  memset(&s, 0, sizeof s);
  s.n = r->g.N;
  s.hid = r->g.H;
  s.mode = r->g.mode;
  s.relu = r->g.mode == RNN_RELU;
  s.clip = !isnan(r->p->lstm_state_clip_min);
  s.clip_nan = r->p->lstm_state_clip_nan;
  s.clip_lo = r->p->lstm_state_clip_min;
  s.clip_hi = r->p->lstm_state_clip_max;
  s.bhn = AT(r->w, up->bh + 2 * r->g.H);
  return s;
}

/* Input projections of every step at once, then the recurrence. */
static void unit_fwd(const rnn_run *r, int64_t l, int64_t d, const char *x) {
  const rnn_geom *g = &r->g;
  int64_t gh = g->G * g->H, in = layer_in(g, l), tn = g->T * g->N;
  int64_t nh = g->N * g->H;
  unit_params up = unit_offsets(g, l, d);
  char *gates = unit_gates(r, l, d), *hs = unit_hs(r, l, d);
  char *cs = unit_cs(r, l, d);
  mxc__gemm(r->dt, 0, 1, tn, gh, in, x, in, AT(r->w, up.wi), in, 0, gates, gh);
  RNN_CALL(r->dt, add_bias, gates, tn, gh, gh, AT(r->w, up.bi));
  /* GRU's h2h bias of n sits inside r (W_hn h + b_hn): added per step */
  int64_t nbh = g->mode == RNN_GRU ? 2 * g->H : gh;
  RNN_CALL(r->dt, add_bias, gates, tn, gh, nbh, AT(r->w, up.bh));
  rnn_step s = step_base(r, &up);
  for (int64_t k = 0; k < g->T; ++k) {
    int64_t t = d ? g->T - 1 - k : k;
    prev_state(r, l, d, k, &s.hprev, &s.cprev);
    mxc__gemm(r->dt, 0, 1, g->N, gh, g->H, s.hprev, g->H, AT(r->w, up.wh),
              g->H, 0, r->hh, gh);
    s.hh = r->hh;
    s.gates = AT(gates, t * g->N * gh);
    s.h = AT(hs, t * nh);
    s.c = AT(cs, t * nh);
    s.valid = step_valid(r, t);
    step_fwd(r->dt, &s);
  }
}

/* The unit's final state (after its last step, or the initial one for
 * an empty sequence). */
static const char *final_state(const rnn_run *r, int64_t l, int64_t d,
                               int cell) {
  const void *h = NULL, *c = NULL;
  prev_state(r, l, d, r->g.T, &h, &c);
  return cell ? c : h;
}

/* Layer l's output y (T, N, D*H); then the next layer's input. */
static void layer_fwd(const rnn_run *r, const mxc__opctx *ctx, int64_t l,
                      char *y) {
  const rnn_geom *g = &r->g;
  const char *x = l == 0 ? r->data : layer_xin(r, l);
  for (int64_t d = 0; d < g->D; ++d) {
    unit_fwd(r, l, d, x);
    RNN_CALL(r->dt, scatter, g, (int)d, r->lens, unit_hs(r, l, d), y);
  }
  if (l + 1 == g->L) return;
  int64_t n = g->T * g->N * g->D * g->H;
  int active = ctx->is_train && r->p->p > 0;
  RNN_CALL(r->dt, dropout, &ctx->rng, l * n, r->p->p, active, y, n,
           layer_mask(r, l + 1), layer_xin(r, l + 1));
}

/* Reads and checks sequence_length into r->lens. */
static int read_lens(const mxc__op *op, rnn_run *r, const mxc__blob *b) {
  for (int64_t n = 0; n < r->g.N; ++n) {
    double v = mxc__blob_get(b, n);
    MXC_RETURN_ERROR_IF(!(v >= 0 && v <= (double)r->g.T && v == floor(v)),
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': sequence_length[%lld] = %g is not a "
                        "whole number of steps in [0, %lld]",
                        op->name, (long long)n, v, (long long)r->g.T);
    r->lens[n] = (int64_t)v;
  }
  return MXC_OK;
}

/* Common setup from the forward inputs (data, parameters, states,
 * sequence_length) and the reserve. Takes `extra` bytes of temp space
 * after the lengths; *tail points at them. */
static int run_init(const mxc__op *op, const mxc__opctx *ctx,
                    const rnn_param *p, const mxc__blob *in, char *res,
                    size_t extra, rnn_run *r, char **tail) {
  memset(r, 0, sizeof *r);
  r->p = p;
  geom_of(p, &in[0].shape, &r->g);
  r->dt = in[0].dtype;
  r->es = mxc__dtype_size(r->dt);
  r->data = in[0].ptr;
  r->w = in[1].ptr;
  r->h0 = in[2].ptr;
  r->c0 = p->mode == RNN_LSTM ? in[3].ptr : NULL;
  r->res = res;
  size_t nl = (size_t)r->g.N * sizeof(int64_t);
  char *tmp = NULL;
  /* At least one byte: an empty batch (N = 0) without extra space would
   * leave tmp NULL, and the offsets below from NULL are undefined
   * (fuzz_block, regress_rnn_empty_batch_temp). */
  size_t need = nl + extra + (size_t)r->g.N + 1;
  MXC_FORWARD_IF_ERROR(mxc__opctx_temp(ctx, need, (void **)&tmp));
  *tail = tmp + nl;
  r->valid = (unsigned char *)tmp + nl + extra;
  if (!p->use_sequence_length) return MXC_OK;
  r->lens = (int64_t *)tmp;
  return read_lens(op, r, &in[rnn_num_inputs(p) - 1]);
}

/* Writes each unit's final state (cell: LSTM cell) into dst with req. */
static void write_final(const rnn_run *r, int cell, const mxc__blob *dst,
                        mxc__req req) {
  int64_t nh = r->g.N * r->g.H;
  for (int64_t l = 0; l < r->g.L; ++l) {
    for (int64_t d = 0; d < r->g.D; ++d) {
      char *o = AT((char *)dst->ptr, unit_index(r, l, d) * nh);
      RNN_CALL(r->dt, assign, o, final_state(r, l, d, cell), nh, req);
    }
  }
}

static int rnn_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_in;
  const rnn_param *p = param;
  rnn_geom g;
  geom_of(p, &in[0].shape, &g);
  size_t es = mxc__dtype_size(in[0].dtype);
  size_t nhh = (size_t)(g.N * g.G * g.H), ny = (size_t)(g.T * g.N * g.D * g.H);
  rnn_run rr, *r = &rr;
  char *tail = NULL;
  MXC_FORWARD_IF_ERROR(run_init(op, ctx, p, in, out[n_out - 1].ptr,
                                (nhh + ny) * es, r, &tail));
  r->hh = tail;
  char *y = AT(tail, nhh);
  for (int64_t l = 0; l < g.L; ++l) layer_fwd(r, ctx, l, y);
  if (req[0] != MXC__REQ_NULL) {
    RNN_CALL(r->dt, assign, out[0].ptr, y, (int64_t)ny, req[0]);
  }
  for (int i = 1; i < n_out - 1; ++i) {
    if (req[i] != MXC__REQ_NULL) write_final(r, i == 2, &out[i], req[i]);
  }
  return MXC_OK;
}

/* Starting state gradients of unit u: the given dhy/dcy or zero. */
static void init_state_grad(const rnn_run *r, int64_t u) {
  size_t nb = (size_t)(r->g.N * r->g.H) * r->es;
  int64_t nh = r->g.N * r->g.H;
  if (r->dhy) {
    memcpy(r->dh, AT(r->dhy, u * nh), nb);
  } else {
    memset(r->dh, 0, nb);
  }
  if (r->dcy) {
    memcpy(r->dc, AT(r->dcy, u * nh), nb);
  } else {
    memset(r->dc, 0, nb);
  }
}

/* The recurrence backwards through unit (l, d): gate gradients of every
 * step into dgx/dgh, dWh accumulated per step, and the gradients of the
 * initial states. dy is the layer's output gradient (T, N, D*H). */
static void unit_bwd_steps(const rnn_run *r, int64_t l, int64_t d,
                           const unit_params *up, const char *dy) {
  const rnn_geom *g = &r->g;
  int64_t gh = g->G * g->H, nh = g->N * g->H, u = unit_index(r, l, d);
  char *gates = unit_gates(r, l, d), *cs = unit_cs(r, l, d);
  char *dgh = g->mode == RNN_GRU ? r->dgh : r->dgx;
  init_state_grad(r, u);
  rnn_step s = step_base(r, up);
  s.dh = r->dh;
  s.dc = r->dc;
  for (int64_t k = g->T - 1; k >= 0; --k) {
    int64_t t = d ? g->T - 1 - k : k;
    prev_state(r, l, d, k, &s.hprev, &s.cprev);
    s.valid = step_valid(r, t);
    RNN_CALL(r->dt, gather, g, (int)d, t, s.valid, dy, r->dh);
    s.act = AT(gates, t * g->N * gh);
    s.c = AT(cs, t * nh);
    s.dgx = AT(r->dgx, t * g->N * gh);
    s.dgh = AT(dgh, t * g->N * gh);
    step_bwd(r->dt, &s);
    mxc__gemm(r->dt, 0, 0, g->N, g->H, gh, s.dgh, gh, AT(r->w, up->wh), g->H,
              1, r->dh, g->H);
    mxc__gemm(r->dt, 1, 0, gh, g->H, g->N, s.dgh, gh, s.hprev, g->H, 1,
              AT(r->dw, up->wh), g->H);
  }
  memcpy(AT(r->dh0, u * nh), r->dh, (size_t)nh * r->es);
  memcpy(AT(r->dc0, u * nh), r->dc, (size_t)nh * r->es);
}

/* Unit (l, d): parameter gradients and dx (T*N, in) += its input
 * gradient. */
static void unit_bwd(const rnn_run *r, int64_t l, int64_t d, const char *x,
                     const char *dy, char *dx) {
  const rnn_geom *g = &r->g;
  int64_t gh = g->G * g->H, in = layer_in(g, l), tn = g->T * g->N;
  unit_params up = unit_offsets(g, l, d);
  unit_bwd_steps(r, l, d, &up, dy);
  char *dgh = g->mode == RNN_GRU ? r->dgh : r->dgx;
  mxc__gemm(r->dt, 1, 0, gh, in, tn, r->dgx, gh, x, in, 1, AT(r->dw, up.wi),
            in);
  RNN_CALL(r->dt, add_colsum, AT(r->dw, up.bi), r->dgx, tn, gh);
  RNN_CALL(r->dt, add_colsum, AT(r->dw, up.bh), dgh, tn, gh);
  mxc__gemm(r->dt, 0, 0, tn, in, gh, r->dgx, gh, AT(r->w, up.wi), in, 1, dx,
            in);
}

/* Byte sizes of the backward's scratch, in elements of the dtype. */
typedef struct bwd_sizes {
  int64_t dg, nh, cur, next, dw, states;
} bwd_sizes;

static bwd_sizes bwd_sizes_of(const rnn_geom *g, int64_t np) {
  bwd_sizes z;
  int64_t tn = g->T * g->N, dh = g->D * g->H;
  z.dg = tn * g->G * g->H;
  z.nh = g->N * g->H;
  z.cur = tn * dh;
  z.next = tn * (g->I > dh ? g->I : dh);
  z.dw = np;
  z.states = g->L * g->D * z.nh;
  return z;
}

/* Carves the backward's scratch; returns cur and next (layer output and
 * input gradients). */
static void bwd_carve(rnn_run *r, const bwd_sizes *z, char *p, char **cur,
                      char **next) {
  r->dgx = p;
  r->dgh = AT(r->dgx, z->dg);
  r->dh = AT(r->dgh, z->dg);
  r->dc = AT(r->dh, z->nh);
  r->dw = AT(r->dc, z->nh);
  r->dh0 = AT(r->dw, z->dw);
  r->dc0 = AT(r->dh0, z->states);
  *cur = AT(r->dc0, z->states);
  *next = AT(*cur, z->cur);
}

/* _backward_RNN: inputs (dout[, dhy[, dcy]], data, parameters, state
 * [, state_cell][, sequence_length], out[, hy[, cy]], reserve); outputs
 * (ddata, dparameters, dstate[, dstate_cell]). */
static int rnn_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const rnn_param *p = param;
  int nv = rnn_num_outputs(p) - 1;
  rnn_geom g;
  geom_of(p, &in[nv].shape, &g);
  int64_t np = mxc__shape_size(&in[nv + 1].shape);
  bwd_sizes z = bwd_sizes_of(&g, np);
  size_t es = mxc__dtype_size(in[0].dtype);
  size_t extra = (size_t)(2 * z.dg + 2 * z.nh + z.dw + 2 * z.states + z.cur +
                          z.next) * es;
  rnn_run rr, *r = &rr;
  char *tail = NULL, *cur = NULL, *next = NULL;
  MXC_FORWARD_IF_ERROR(
      run_init(op, ctx, p, in + nv, in[n_in - 1].ptr, extra, r, &tail));
  r->dhy = nv > 1 ? in[1].ptr : NULL;
  r->dcy = nv > 2 ? in[2].ptr : NULL;
  bwd_carve(r, &z, tail, &cur, &next);
  memset(r->dw, 0, (size_t)np * es);
  memcpy(cur, in[0].ptr, (size_t)z.cur * es);
  for (int64_t l = g.L - 1; l >= 0; --l) {
    const char *x = l == 0 ? r->data : layer_xin(r, l);
    memset(next, 0, (size_t)(g.T * g.N * layer_in(&g, l)) * es);
    for (int64_t d = 0; d < g.D; ++d) unit_bwd(r, l, d, x, cur, next);
    if (l > 0) RNN_CALL(r->dt, mul, next, layer_mask(r, l), z.cur, cur);
  }
  const char *src[4] = {next, r->dw, r->dh0, r->dc0};
  for (int i = 0; i < n_out; ++i) {
    if (req[i] == MXC__REQ_NULL) continue;
    RNN_CALL(r->dt, assign, out[i].ptr, src[i], mxc__shape_size(&out[i].shape),
             req[i]);
  }
  return MXC_OK;
}

/* The gradient node (mxc__grad_use_in_out); sequence_length gets none. */
static int rnn_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                        mxc__entry *igrad) {
  MXC_FORWARD_IF_ERROR(mxc__grad_use_in_out(fwd, ograd, igrad));
  int ng = rnn_num_grads(fwd->param);
  for (int i = ng; i < fwd->n_inputs; ++i) {
    mxc__node_release(igrad[i].node);
    igrad[i].node = NULL;
    igrad[i].index = 0;
  }
  return MXC_OK;
}

#define RNN_PARAMS MXC__PARAMS_OF(rnn_param, k_params), \
  .param_check = rnn_param_check

static const mxc__op k_rnn = {
    .name = "RNN",
    .doc = "Fused multi-layer recurrent network (rnn_relu, rnn_tanh, lstm, "
           "gru) over data (T, N, C) with MXNet's packed parameters; out "
           "(T, N, D*state_size) and, with state_outputs, the final states.",
    RNN_PARAMS,
    .num_inputs = rnn_num_inputs,
    .input_names = k_names,
    .input_name = rnn_input_name,
    .num_outputs = rnn_num_outputs,
    .num_visible_outputs = rnn_num_visible,
    .output_names = k_out_names,
    .infer_shape = rnn_infer_shape,
    .infer_type = rnn_infer_type,
    .compute = rnn_forward,
    .gradient = rnn_gradient,
    .backward_uses_inputs = 0xff,
    .backward_uses_outputs = 0xff,
    .resources = MXC__RES_TEMP | MXC__RES_RANDOM,
};

static const mxc__op k_rnn_bwd = {
    .name = "_backward_RNN",
    .doc = "Gradient of RNN.",
    RNN_PARAMS,
    .num_inputs = rnn_bwd_num_inputs,
    .input_name = rnn_bwd_input_name,
    .num_outputs = rnn_num_grads,
    .infer_shape = rnn_bwd_infer_shape,
    .infer_type = rnn_bwd_infer_type,
    .compute = rnn_backward,
    .resources = MXC__RES_TEMP,
    .hidden = 1,
};

int mxc__linalg_register_rnn(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_rnn));
  return mxc__registry_add(r, &k_rnn_bwd);
}
