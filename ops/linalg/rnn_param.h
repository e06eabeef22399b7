/* RNN's parameter struct and the geometry of its packed parameter
 * vector, shared by the CPU operator (ops/linalg/rnn.c) and the CUDA
 * plug-in's cuDNN plan (backends/cuda/rnn_plan.c), so that both read one
 * definition of where each layer's weights and biases lie (the layout is
 * described at the top of rnn.c). Header-only: the plug-in links nothing
 * of libmxc.
 *
 * Thread-safety: pure functions. */
#ifndef MXC_OPS_LINALG_RNN_PARAM_H_
#define MXC_OPS_LINALG_RNN_PARAM_H_

#include <stdint.h>

#include "core/op/param.h"

/* Modes, in k_modes' order; also cuDNN's cudnnRNNMode_t values
 * (CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU), which the
 * plug-in checks at compile time. */
enum { MXC__RNN_RELU, MXC__RNN_TANH, MXC__RNN_LSTM, MXC__RNN_GRU };

typedef struct mxc__rnn_param {
  int64_t state_size, num_layers;
  int bidirectional, mode, state_outputs, use_sequence_length;
  int lstm_state_clip_nan;
  double p, lstm_state_clip_min, lstm_state_clip_max;
  mxc__opt_int projection_size;
} mxc__rnn_param;

/* T steps, N rows, I input size, H state size, L layers, D directions,
 * G gates per unit. */
typedef struct mxc__rnn_geom {
  int64_t T, N, I, H, L, D, G;
  int mode;
} mxc__rnn_geom;

/* The geometry of data (T, N, I) under p. */
static inline mxc__rnn_geom mxc__rnn_geom_of(const mxc__rnn_param *p,
                                             const int64_t *data_dims) {
  static const int64_t gates[] = {1, 1, 4, 3};
  mxc__rnn_geom g;
  g.T = data_dims[0];
  g.N = data_dims[1];
  g.I = data_dims[2];
  g.H = p->state_size;
  g.L = p->num_layers;
  g.D = p->bidirectional ? 2 : 1;
  g.G = gates[p->mode];
  g.mode = p->mode;
  return g;
}

/* Input size of layer l: the data's for the first, both directions'
 * outputs above. */
static inline int64_t mxc__rnn_layer_in(const mxc__rnn_geom *g, int64_t l) {
  return l == 0 ? g->I : g->D * g->H;
}

/* Offsets (elements) of unit (l, d)'s i2h weight (G*H, in_l), h2h weight
 * (G*H, H), i2h bias (G*H) and h2h bias (G*H) in the packed vector. */
typedef struct mxc__rnn_unit_params {
  int64_t wi, wh, bi, bh;
} mxc__rnn_unit_params;

static inline mxc__rnn_unit_params mxc__rnn_unit_offsets(const mxc__rnn_geom *g,
                                                         int64_t l, int64_t d) {
  int64_t gh = g->G * g->H, w = 0, wall = 0;
  for (int64_t k = 0; k < g->L; ++k) {
    int64_t per = gh * (mxc__rnn_layer_in(g, k) + g->H);
    if (k < l) w += per * g->D;
    wall += per * g->D;
  }
  w += d * gh * (mxc__rnn_layer_in(g, l) + g->H);
  int64_t b = wall + (l * g->D + d) * 2 * gh;
  mxc__rnn_unit_params u = {w, w + gh * mxc__rnn_layer_in(g, l), b, b + gh};
  return u;
}

#endif /* MXC_OPS_LINALG_RNN_PARAM_H_ */
