/* The cuDNN RNN plan (rnn_plan.h). */
#include "backends/cuda/rnn_plan.h"

#include <math.h>
#include <stdio.h>

#include "mxc/mxc.h"

const char *mxc__rnn_plan_refusal(const void *param, int is_train) {
  const mxc__rnn_param *p = param;
  if (p->use_sequence_length)
    return "use_sequence_length is not supported by the cuDNN RNN kernel";
  if (!isnan(p->lstm_state_clip_min))
    return "LSTM state clipping is not supported by the cuDNN RNN kernel "
           "(cuDNN's clipping and its gradient are not checked against "
           "mxc's, whose clipped cell passes no gradient)";
  if (p->p > 0 && is_train)
    return "dropout (p > 0) in training: mxc's masks come from its own "
           "random stream, which cuDNN's dropout does not reproduce";
  if (p->projection_size.has) return "projection_size is not supported";
  return NULL;
}

/* Every count cuDNN takes as an int fits one, and so do the products
 * the kernel sizes buffers with. */
static int fits_int(const mxc__rnn_geom *g) {
  const int64_t big = 0x7fffffff;
  int64_t wide = g->I > g->D * g->H ? g->I : g->D * g->H;
  return g->T <= big && g->N <= big && wide <= big && g->L * g->D <= big &&
         g->G * g->H <= big && g->T * g->N <= big / (wide ? wide : 1) &&
         g->L * g->D * g->N <= big / (g->H ? g->H : 1);
}

static int64_t param_total(const mxc__rnn_geom *g) {
  mxc__rnn_unit_params u = mxc__rnn_unit_offsets(g, g->L - 1, g->D - 1);
  return u.bh + g->G * g->H;
}

static void io_of(const mxc__rnn_param *p, mxc__rnn_plan *pl) {
  pl->lstm = p->mode == MXC__RNN_LSTM;
  pl->n_states_out = p->state_outputs ? 1 + pl->lstm : 0;
  pl->n_vis = 1 + pl->n_states_out;
  pl->in_fwd = pl->n_vis;
}

int mxc__rnn_plan_data_input(const void *param, int backward) {
  mxc__rnn_plan pl;
  io_of(param, &pl);
  return backward ? pl.in_fwd : 0;
}

int mxc__rnn_plan_make(const void *param, const int64_t *data_dims,
                       int is_train, mxc__rnn_plan *out, char *why,
                       size_t len) {
  const mxc__rnn_param *p = param;
  const char *no = mxc__rnn_plan_refusal(p, is_train);
  if (no) {
    snprintf(why, len, "%s", no);
    return MXC_ERR_UNSUPPORTED;
  }
  mxc__rnn_plan *pl = out;
  pl->g = mxc__rnn_geom_of(p, data_dims);
  if (!fits_int(&pl->g)) {
    snprintf(why, len, "RNN sizes beyond cuDNN's int (T %lld, N %lld)",
             (long long)pl->g.T, (long long)pl->g.N);
    return MXC_ERR_UNSUPPORTED;
  }
  pl->cell_mode = p->mode;
  pl->bidirectional = p->bidirectional != 0;
  pl->n_params = param_total(&pl->g);
  pl->n_mats = (int)(pl->g.L * pl->g.D * 2 * pl->g.G);
  pl->n_x = pl->g.T * pl->g.N * pl->g.I;
  pl->n_y = pl->g.T * pl->g.N * pl->g.D * pl->g.H;
  pl->n_h = pl->g.L * pl->g.D * pl->g.N * pl->g.H;
  io_of(p, pl);
  return MXC_OK;
}

mxc__rnn_mat mxc__rnn_plan_mat(const mxc__rnn_plan *pl, int k) {
  const mxc__rnn_geom *g = &pl->g;
  int per = (int)(2 * g->G), unit = k / per, id = k % per;
  int64_t l = unit / g->D, d = unit % g->D, H = g->H;
  mxc__rnn_unit_params u = mxc__rnn_unit_offsets(g, l, d);
  int rec = id >= g->G;
  int64_t gate = rec ? id - g->G : id;
  int64_t cols = rec ? H : mxc__rnn_layer_in(g, l);
  mxc__rnn_mat m;
  m.pseudo_layer = unit;
  m.lin_id = id;
  m.rows = H;
  m.cols = cols;
  m.w_off = (rec ? u.wh : u.wi) + gate * H * cols;
  m.b_off = (rec ? u.bh : u.bi) + gate * H;
  return m;
}
