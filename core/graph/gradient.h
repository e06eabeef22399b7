/* The gradient pass: builds backward nodes for a DAG from the operators'
 * gradient functions (core/op/op.h `gradient`). Used by the executor (symbolic
 * graphs) and by imperative autograd (recorded graphs) alike.
 *
 * Contributions of several consumers to one entry are summed with add_n
 * (elemwise_add for two). An operator reached by gradients but whose
 * other visible outputs got none receives zeros_like of those outputs.
 * Operators without a gradient function stop the flow: their inputs get no
 * gradient from them. Auxiliary inputs never get gradients. */
#ifndef MXC_CORE_GRAPH_GRADIENT_H_
#define MXC_CORE_GRAPH_GRADIENT_H_

#include "core/op/node.h"

/* heads[0..n_heads): entries whose gradients are given by head_grads
 * (entries of variables or of any node; one per head). wrt[0..n_wrt):
 * entries to differentiate with respect to (usually variables).
 * On success out[i] is a new entry (one reference, release with
 * mxc__node_release(out[i].node)) computing d/d wrt[i], or {NULL, 0} when
 * no gradient reaches wrt[i] (the caller treats it as zero). A wrt entry
 * that is itself a head gets its head gradient (summed with the other
 * contributions). On failure out is untouched and nothing leaks. */
int mxc__gradient_build(const mxc__entry *heads,
                        const mxc__entry *head_grads, int n_heads,
                        const mxc__entry *wrt, int n_wrt, mxc__entry *out);

#endif /* MXC_CORE_GRAPH_GRADIENT_H_ */
