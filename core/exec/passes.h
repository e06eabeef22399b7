/* Inference graph passes: rewrites of the forward graph made at bind time
 * for executors that compute no gradient (docs/inference-passes.md).
 *
 * Three rewrites, in one walk of the forward graph in topological order:
 *  1. identity removal: Dropout (mode "training": the identity at
 *     inference), _copy / identity and BlockGrad / stop_gradient are
 *     bypassed, their readers read their input instead. A node whose
 *     output is a head stays, so every output the user reads keeps its
 *     own array. Nodes no head needs any more (the bypassed ones, the
 *     layers BatchNorm was folded into) are dropped when the result is
 *     indexed, since indexing keeps only what the heads depend on;
 *  2. BatchNorm folding: BatchNorm reading the only consumer edge of a
 *     Convolution or FullyConnected output, with its parameters, its
 *     moving statistics and the layer's weight and bias all bound arrays
 *     (variables), becomes that layer with a folded weight and bias
 *     (new variables; mxc__bn_fold says how the executor fills them);
 *  3. fusion: an activation (Activation relu/sigmoid/tanh/softrelu, or the
 *     relu/sigmoid/tanh operators) of a Convolution or FullyConnected
 *     output, and an addition (elemwise_add / _Plus, broadcast_add of
 *     equal shapes) of a Convolution output and another value, become
 *     _FusedConvolution / _FusedFullyConnected (ops/linalg), so that
 *     relu(BN(conv(x)) + shortcut) ends as one _FusedConvolution with
 *     with_sum and act_type relu.
 * A value is fused away only when the node reading it is its only
 * consumer and it is not a head: nothing else can observe it. Fusion
 * applies to float32 and float64 values only (the fused kernels' types).
 *
 * They run before element-wise fusion (core/fuse): an add + relu pair
 * would otherwise become one _fused_elemwise node and hide the
 * convolution's residual pattern. */
#ifndef MXC_CORE_EXEC_PASSES_H_
#define MXC_CORE_EXEC_PASSES_H_

#include <stdint.h>

#include "core/graph/graph.h"
#include "core/ndarray/ndarray.h"

/* Sources of a fold, by role. */
enum {
  MXC__FOLD_WEIGHT,
  MXC__FOLD_BIAS, /* -1 in src when the layer has no bias */
  MXC__FOLD_GAMMA,
  MXC__FOLD_BETA,
  MXC__FOLD_MEAN,
  MXC__FOLD_VAR,
  MXC__FOLD_N_SRC
};

/* One BatchNorm folded into the layer before it. With s[c] = gamma[c]
 * (1 with fix_gamma) / sqrt(var[c] + eps), the layer's new weight is
 * weight[c, ...] * s[c] and its new bias (bias[c] - mean[c]) * s[c] +
 * beta[c], c indexing output channels (the weight's axis 0). */
typedef struct mxc__bn_fold {
  /* Made by the pass. */
  mxc__node *weight, *bias;   /* the new variables (one reference each) */
  int src[MXC__FOLD_N_SRC];   /* node ids of the sources in the forward
                                 graph (all variables) */
  double eps;
  int fix_gamma;
  /* Filled by the executor (core/exec/fold.c). */
  const mxc__ndarray *in[MXC__FOLD_N_SRC]; /* bound arrays (borrowed) */
  mxc__ndarray *out_w, *out_b;             /* owned */
  uint64_t seen[MXC__FOLD_N_SRC];          /* write versions used last */
  int done;                                /* computed at least once */
} mxc__bn_fold;

typedef struct mxc__infer_passes {
  int n_removed; /* identity-like nodes bypassed */
  int n_folded;  /* BatchNorms folded */
  int n_fused;   /* activations and sums fused into _Fused* nodes */
  int n_folds;
  mxc__bn_fold *folds; /* n_folded of them */
} mxc__infer_passes;

/* Runs the passes over gf (a forward graph) whose entries have the given
 * shapes and dtypes (inferred from the bound arrays; unknown ones make
 * the passes skip what needs them). out_heads[0..gf->n_heads) receive
 * entries (new references) computing the heads of gf. On failure nothing
 * leaks and out_heads and *out are untouched. */
int mxc__infer_passes_run(const mxc__graph *gf, const mxc__shape *shapes,
                          const int *dtypes, mxc__entry *out_heads,
                          mxc__infer_passes *out);

/* Releases what a run made and the executor filled in. */
void mxc__infer_passes_free(mxc__infer_passes *p);

/* 1 when the passes changed anything. */
int mxc__infer_passes_changed(const mxc__infer_passes *p);

#endif /* MXC_CORE_EXEC_PASSES_H_ */
