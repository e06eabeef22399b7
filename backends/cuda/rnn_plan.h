/* What the cuDNN RNN kernels (dnn_rnn.c) hand to cuDNN for mxc's RNN
 * operator, computed by plain C with no CUDA call so that it is
 * host-tested (tests/gpu/test_cuda_rnn_plan.cc runs a naive RNN that
 * follows cuDNN's documented equations with the weights placed as this
 * plan says, and compares it with mxc's CPU operator).
 *
 * The risky part is the parameter layout. mxc's packed vector
 * (ops/linalg/rnn_param.h) holds every weight first (per layer, per
 * direction: i2h (G*H, in) then h2h (G*H, H)), then every bias (i2h
 * (G*H), h2h (G*H)). cuDNN keeps one matrix (H, in) or (H, H), row-major,
 * and one bias (H) per (pseudo-layer, linLayerID), at addresses that
 * cudnnGetRNNWeightParams gives: pseudo-layer l*D + d, linLayerID
 * 0..G-1 the input matrices of the gates, G..2G-1 the recurrent ones, in
 * cuDNN's gate order (LSTM i, f, c', o; GRU r, z, h'), which is mxc's
 * (i, f, g, o; r, z, n). With CUDNN_RNN_DOUBLE_BIAS each linLayerID has
 * its own bias: mxc's i2h bias goes with the input matrix, its h2h bias
 * with the recurrent one; GRU's h' uses them as mxc does
 * (tanh(W x + b_W + r (R h + b_R))).
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_RNN_PLAN_H_
#define MXC_BACKENDS_CUDA_RNN_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "ops/linalg/rnn_param.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One call: geometry, cuDNN's sizes and the arrays' positions. */
typedef struct mxc__rnn_plan {
  mxc__rnn_geom g;
  int cell_mode;     /* cudnnRNNMode_t: mxc's mode (rnn_param.h) */
  int bidirectional; /* cudnnDirectionMode_t */
  int lstm;
  int64_t n_params;      /* elements of mxc's packed vector */
  int n_mats;            /* (pseudo-layer, linLayerID) pairs: L*D*2G */
  int64_t n_x, n_y, n_h; /* elements of data, out, one state array */
  /* Forward: inputs data 0, parameters 1, state 2, state_cell 3 (LSTM);
   * outputs out 0, then hy and cy when state_outputs (n_states_out). */
  int n_states_out;
  /* _backward_RNN: its first n_vis inputs are the gradients of out, hy,
   * cy; the forward's inputs start at in_fwd; outputs ddata, dparameters,
   * dstate, dstate_cell (LSTM). */
  int n_vis, in_fwd;
} mxc__rnn_plan;

/* One cuDNN matrix and its bias, as a slice of mxc's packed vector. */
typedef struct mxc__rnn_mat {
  int pseudo_layer; /* l*D + d */
  int lin_id;       /* cuDNN's linLayerID */
  int64_t w_off;    /* the (rows, cols) row-major matrix in mxc's vector */
  int64_t rows, cols;
  int64_t b_off; /* its bias (rows) in mxc's vector */
} mxc__rnn_mat;

/* The plan of a call of RNN or _backward_RNN with
 * parameters param (the operator's parsed struct), data dims (T, N, I)
 * and the call's training flag. MXC_ERR_UNSUPPORTED with the reason in
 * why for what the cuDNN kernels do not do as the CPU does: dropout in
 * training (mxc's masks come from its own random stream; a backward
 * call's is_train is its forward's: without training the CPU's masks
 * are all ones, which is what no dropout computes), sequence_length,
 * LSTM state clipping, sizes beyond cuDNN's int. */
int mxc__rnn_plan_make(const void *param, const int64_t *data_dims,
                       int is_train, mxc__rnn_plan *out, char *why, size_t len);

/* Why a call with these parameters cannot go to cuDNN whatever its
 * shapes (what mxc__rnn_plan_make refuses before looking at them), or
 * NULL. */
const char *mxc__rnn_plan_refusal(const void *param, int is_train);

/* The index of the input data among a call's inputs: 0 for RNN, the
 * number of visible outputs of the forward for _backward_RNN (1). */
int mxc__rnn_plan_data_input(const void *param, int backward);

/* Matrix k (0 <= k < n_mats): unit u = k / (2G) (pseudo-layer), then
 * linLayerID k % (2G). */
mxc__rnn_mat mxc__rnn_plan_mat(const mxc__rnn_plan *pl, int k);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_RNN_PLAN_H_ */
