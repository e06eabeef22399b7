/* C shim for the executor tests: what the C++ reference evaluator needs
 * from internal headers (C11 atomics make them unusable from C++). */
#ifndef MXC_TESTS_EXEC_EXEC_SHIM_H_
#define MXC_TESTS_EXEC_EXEC_SHIM_H_

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The nodes of a symbol in topological order (inputs first). */
typedef struct mxct_walk mxct_walk;

int mxct_walk_new(mxc_symbol sym, mxct_walk **out);
void mxct_walk_free(mxct_walk *w);
int mxct_walk_size(const mxct_walk *w);
/* Operator name, or NULL for a variable. */
const char *mxct_walk_op(const mxct_walk *w, int i);
const char *mxct_walk_name(const mxct_walk *w, int i);
int mxct_walk_n_attrs(const mxct_walk *w, int i);
const char *const *mxct_walk_keys(const mxct_walk *w, int i);
const char *const *mxct_walk_vals(const mxct_walk *w, int i);
int mxct_walk_n_inputs(const mxct_walk *w, int i);
/* Input k of node i is output *out_index of node *out_node. */
void mxct_walk_input(const mxct_walk *w, int i, int k, int *out_node,
                     int *out_index);
/* All outputs (hidden ones included) and the visible ones. */
int mxct_walk_n_outputs(const mxct_walk *w, int i);
int mxct_walk_n_visible(const mxct_walk *w, int i);
int mxct_walk_differentiable(const mxct_walk *w, int i);
int mxct_walk_n_heads(const mxct_walk *w);
void mxct_walk_head(const mxct_walk *w, int j, int *out_node, int *out_index);

/* Invokes node i's operator with its parameters on `in` in training mode
 * is_train, making all outputs (hidden included) as new handles. */
int mxct_walk_invoke(const mxct_walk *w, int i, const mxc_ndarray *in,
                     mxc_ndarray *out, int is_train);

/* The operator's imperative gradient (mxc__grad_eval) for node i: in and
 * out as the forward call, ograd one per visible output; igrad[k] a new
 * handle or NULL. */
int mxct_walk_grad(const mxct_walk *w, int i, const mxc_ndarray *in,
                   const mxc_ndarray *out, const mxc_ndarray *ograd,
                   mxc_ndarray *igrad, int is_train);

/* The array's write version (mxc__ndarray_version), -1 for a bad
 * handle. */
long long mxct_write_version(mxc_ndarray a);

/* Leak counters and fault injection (core/base/alloc.h, handle.h). */
long long mxct_alloc_live(void);
long long mxct_handle_live(void);
void mxct_fault_arm(long long n);
int mxct_fault_fired(void);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_EXEC_EXEC_SHIM_H_ */
