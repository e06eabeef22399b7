/* The plug-in's LayerNorm, L2Normalization, Dropout, argmax, argmin,
 * SequenceMask, SequenceLast, SequenceReverse, sort, argsort, topk, Pad,
 * Crop and their gradients (nn3.cu over nn3_plan.h, sort_plan.h and
 * pad_plan.h), float32, with the hidden outputs the CPU operators
 * have (LayerNorm's mean and std, L2Normalization's norm, Dropout's
 * mask). */
#ifndef MXC_BACKENDS_CUDA_NN3_H_
#define MXC_BACKENDS_CUDA_NN3_H_

#include <stddef.h>

#include "backends/cuda/samp.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (the CPU operator's inputs and outputs, float32) on
 * gpu(c->dev), on the call's stream, ending with mxc__cuda_finish; each
 * output in its own write mode. MXC_ERR_INVALID_ARGUMENT for a call of
 * the wrong arity; SequenceLast and its gradient: the CPU's error for a
 * length outside 1..T (they read the lengths back to check them).
 * Thread-safety: any thread (no state). */
int mxc__cuda_layer_norm(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_layer_norm_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_l2_norm(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_l2_norm_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_dropout(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_dropout_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_argmax(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_argmin(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_seq_mask(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_seq_mask_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_seq_last(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_seq_last_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_seq_reverse(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_seq_reverse_bwd(const mxc__gpu_call *c, char *why, size_t n);
/* sort, argsort, topk (float32 indices) and the gradients of sort and
 * topk: rows of up to MXC__SORTK_MAX_LEN (sort_plan.h) elements, longer
 * ones MXC_ERR_UNSUPPORTED. */
int mxc__cuda_sort(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_argsort(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_topk(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_sort_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_topk_bwd(const mxc__gpu_call *c, char *why, size_t n);
/* Their rows' accepts (accepts.h): rows beyond the limit run on the CPU. */
int mxc__cuda_sort_accepts(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_argsort_accepts(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_topk_accepts(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_sort_bwd_accepts(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_topk_bwd_accepts(const mxc__gpu_call *c, char *why, size_t n);
/* Pad (constant, edge, reflect), Crop and their gradients (pad_plan.h). */
int mxc__cuda_pad(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_pad_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_crop(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_crop_bwd(const mxc__gpu_call *c, char *why, size_t n);

/* The kernel table's rows (plugin.c): float32 only (supports NULL; the
 * sequence lengths too), with samp.h's. */
#define MXC__CUDA_NN3_ROWS                                                    \
  {"LayerNorm", NULL, mxc__cuda_layer_norm},                                  \
      {"_backward_LayerNorm", NULL, mxc__cuda_layer_norm_bwd},                \
      {"L2Normalization", NULL, mxc__cuda_l2_norm},                           \
      {"_backward_L2Normalization", NULL, mxc__cuda_l2_norm_bwd},             \
      {"Dropout", NULL, mxc__cuda_dropout},                                   \
      {"_backward_Dropout", NULL, mxc__cuda_dropout_bwd},                     \
      {"argmax", NULL, mxc__cuda_argmax}, {"argmin", NULL, mxc__cuda_argmin}, \
      {"SequenceMask", NULL, mxc__cuda_seq_mask},                             \
      {"_backward_SequenceMask", NULL, mxc__cuda_seq_mask_bwd},               \
      {"SequenceLast", NULL, mxc__cuda_seq_last},                             \
      {"_backward_SequenceLast", NULL, mxc__cuda_seq_last_bwd},               \
      {"SequenceReverse", NULL, mxc__cuda_seq_reverse},                       \
      {"_backward_SequenceReverse", NULL, mxc__cuda_seq_reverse_bwd},         \
      {"sort", NULL, mxc__cuda_sort}, {"argsort", NULL, mxc__cuda_argsort},   \
      {"topk", NULL, mxc__cuda_topk},                                         \
      {"_backward_sort", NULL, mxc__cuda_sort_bwd},                           \
      {"_backward_topk", NULL, mxc__cuda_topk_bwd},                           \
      {"Pad", NULL, mxc__cuda_pad},                                           \
      {"_backward_Pad", NULL, mxc__cuda_pad_bwd},                             \
      {"Crop", NULL, mxc__cuda_crop},                                         \
      {"_backward_Crop", NULL, mxc__cuda_crop_bwd}, MXC__CUDA_SAMP_ROWS

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_NN3_H_ */
