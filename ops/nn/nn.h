/* Internal header of the neural-network family (ops/nn): layers
 * (Activation, LeakyReLU, BatchNorm, LayerNorm, L2Normalization, Dropout,
 * Embedding, UpSampling) and losses (SoftmaxOutput, softmax_cross_entropy,
 * the regression outputs).
 *
 * Kernels handle float32 and float64 with typed loops written once through
 * MXC__FLOAT_TYPED; sums over many elements (statistics, norms, softmax
 * denominators) accumulate in double for both. */
#ifndef MXC_OPS_NN_NN_H_
#define MXC_OPS_NN_NN_H_

#include "core/op/common.h"

/* BatchNorm's parameters (batch_norm.c), here for the GPU plug-in's
 * kernels, which read them (backends/cuda). */
typedef struct mxc__bn_param {
  double eps, momentum;
  int fix_gamma, use_global_stats, output_mean_var, cudnn_off;
  int64_t axis;
} mxc__bn_param;

/* SoftmaxOutput's parameters (softmax_loss.c), here for the GPU
 * plug-in's kernels, which read them (backends/cuda/so_plan.c).
 * normalization: MXC__SO_NORM_*. */
enum { MXC__SO_NORM_NULL, MXC__SO_NORM_BATCH, MXC__SO_NORM_VALID };
typedef struct mxc__so_param {
  double grad_scale, ignore_label, smooth_alpha;
  int multi_output, use_ignore, preserve_shape, normalization, out_grad;
} mxc__so_param;

/* A tensor seen as (outer, n, inner) around one axis: element
 * (o, j, k) is at (o * n + j) * inner + k. Normalizations reduce over j
 * (LayerNorm, softmax) or over o and k (BatchNorm). */
typedef struct mxc__nn_layout {
  int64_t outer, n, inner;
} mxc__nn_layout;

mxc__nn_layout mxc__nn_split(const mxc__shape *s, int axis);

/* *out = axis normalized to 0..ndim-1 (negative counts from the end);
 * MXC_ERR_INVALID_ARGUMENT naming the operator, the parameter and the
 * data shape when out of range. */
int mxc__nn_axis(const char *op_name, const char *param_name, int64_t axis,
                 const mxc__shape *data, int *out);

/* The shape (n). */
mxc__shape mxc__nn_shape1(int64_t n);

/* Fills *slot with want when unknown (ndim -1); otherwise checks that it
 * equals want: MXC_ERR_SHAPE "operator 'op': <what> has shape (..);
 * expected (..) (<why>)". */
int mxc__nn_assign_shape(const char *op_name, mxc__shape *slot,
                         const mxc__shape *want, const char *what,
                         const char *why);

/* infer_type for operators whose inputs and outputs all share one dtype,
 * float32 or float64. */
int mxc__nn_type_float(const mxc__op *op, const void *param, int *in, int n_in,
                       int *out, int n_out);

/* Error unless dt is float32 or float64 (or unknown, -1). */
int mxc__nn_check_float(const char *op_name, int dt, const char *what);

/* Reads a label (any numeric dtype) as a class index: -1 when it is not
 * an integer in [0, n) (NaN included), so callers treat it as "no
 * class". */
int64_t mxc__nn_class_of(const mxc__blob *label, int64_t i, int64_t n);

/* Registration of each file's descriptors (register.c calls them). */
int mxc__nn_register_activation(mxc__registry *r);
int mxc__nn_register_batch_norm(mxc__registry *r);
int mxc__nn_register_layer_norm(mxc__registry *r);
int mxc__nn_register_softmax_activation(mxc__registry *r);
int mxc__nn_register_l2_norm(mxc__registry *r);
int mxc__nn_register_dropout(mxc__registry *r);
int mxc__nn_register_embedding(mxc__registry *r);
int mxc__nn_register_upsampling(mxc__registry *r);
int mxc__nn_register_softmax_loss(mxc__registry *r);
int mxc__nn_register_regression(mxc__registry *r);
int mxc__nn_register_lrn(mxc__registry *r);
int mxc__nn_register_group_norm(mxc__registry *r);
int mxc__nn_register_make_loss(mxc__registry *r);
int mxc__nn_register_pointwise(mxc__registry *r);
int mxc__nn_register_sequence(mxc__registry *r);
int mxc__nn_register_resize(mxc__registry *r);
int mxc__nn_register_all_finite(mxc__registry *r);

#endif /* MXC_OPS_NN_NN_H_ */
