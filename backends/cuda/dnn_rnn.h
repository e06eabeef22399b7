/* The plug-in's cuDNN RNN kernels (dnn_rnn.c): mxc's RNN operator and
 * _backward_RNN through cuDNN 9's RNN API (cudnnRNNForward,
 * cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8), float32, every
 * mode (rnn_relu, rnn_tanh, lstm, gru), layers, bidirectional,
 * state_outputs. The parameter layout comes from rnn_plan.h
 * (host-tested). Listed in plugin.c's table by MXC__CUDA_RNN_ROWS.
 *
 * cuDNN's reserve space cannot travel through the operator's hidden
 * output (mxc's reserve has its own size and layout, which the CPU
 * backward reads): _backward_RNN recomputes the forward in training mode
 * to get it, and RNN on the GPU leaves the hidden output unwritten.
 *
 * Thread-safety: the kernels may run on several threads at once; each
 * (thread, device) keeps its own descriptors, cached for the last shape;
 * the buffers are dnn_lib.h's per-device workspace, held for the call. */
#ifndef MXC_BACKENDS_CUDA_DNN_RNN_H_
#define MXC_BACKENDS_CUDA_DNN_RNN_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RNN: inputs (data, parameters, state[, state_cell]), outputs (out[,
 * hy[, cy]], reserve). */
int mxc__cuda_rnn_forward(const mxc__gpu_call *c, char *why, size_t why_len);
/* _backward_RNN: inputs (dout[, dhy[, dcy]], data, parameters, state[,
 * state_cell], out[, hy[, cy]], reserve), outputs (ddata, dparameters,
 * dstate[, dstate_cell]), each in its own write mode. */
int mxc__cuda_rnn_backward(const mxc__gpu_call *c, char *why, size_t why_len);

/* The rows' accepts (accepts.h): what the plan refuses (dropout in
 * training, use_sequence_length, LSTM state clipping, sizes beyond
 * cuDNN's int) runs on the CPU instead. */
int mxc__cuda_rnn_accepts(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_rnn_bwd_accepts(const mxc__gpu_call *c, char *why,
                              size_t why_len);

#define MXC__CUDA_RNN_ROWS              \
  {"RNN", NULL, mxc__cuda_rnn_forward}, \
      {"_backward_RNN", NULL, mxc__cuda_rnn_backward},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_DNN_RNN_H_ */
