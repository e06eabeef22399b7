/* C helpers for the fusion tests: the node and graph internals are C11
 * (stdatomic), so the C++ tests reach them through these functions. Node
 * pointers are opaque here; entries mirror mxc__entry. */
#ifndef MXC_TESTS_FUSE_FUSE_SHIM_H_
#define MXC_TESTS_FUSE_FUSE_SHIM_H_

#include <stdint.h>

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mxct_node mxct_node;
typedef struct mxct_entry {
  mxct_node *node;
  int index;
} mxct_entry;

/* New nodes (one reference, mxct_release) or NULL with the error in
 * mxc_last_error(). mxct_op: keys/vals may be NULL when n_params is 0. */
mxct_node *mxct_var(const char *name);
mxct_node *mxct_op(const char *op, const char *const *keys,
                   const char *const *vals, int n_params,
                   const mxct_entry *inputs, int n_inputs, const char *name);
void mxct_release(mxct_node *n);
void mxct_release_entries(const mxct_entry *e, int n);

/* mxc__fuse_graph / mxc__gradient_build. */
int mxct_fuse(const mxct_entry *heads, int n, mxct_entry *out, int *n_fused);
/* mxc__fuse_graph_for: fused nodes for device type dev_type. */
int mxct_fuse_for(const mxct_entry *heads, int n, int dev_type,
                  mxct_entry *out, int *n_fused);
int mxct_gradient(const mxct_entry *heads, const mxct_entry *head_grads,
                  int n_heads, const mxct_entry *wrt, int n_wrt,
                  mxct_entry *out);

/* The DAG of the heads in topological order: returns the node count and
 * stores up to cap borrowed node pointers; -1 on error. */
int mxct_nodes(const mxct_entry *heads, int n, mxct_node **out, int cap);
const char *mxct_node_op(const mxct_node *n); /* NULL for variables */
const char *mxct_node_name(const mxct_node *n);
int mxct_node_n_inputs(const mxct_node *n);
mxct_entry mxct_node_input(const mxct_node *n, int k);
/* Parameter string / user attribute, or NULL. */
const char *mxct_node_param(const mxct_node *n, const char *key);
const char *mxct_node_uattr(const mxct_node *n, const char *key);

/* Evaluates the heads by invoking each operator node in topological order
 * (mxc__op_invoke), variables bound to vals (by node). outs[i]: a new
 * array for head i (mxc_ndarray_free). MXC_OK or an error. */
int mxct_eval(const mxct_entry *heads, int n_heads, mxct_node *const *vars,
              const mxc_ndarray *vals, int n_vars, mxc_ndarray *outs);

/* Allocation accounting and fault injection (core/base/alloc.h). */
int64_t mxct_alloc_live(void);
void mxct_fault_arm(int64_t n);
int mxct_fault_fired(void);

/* The attribute key fused nodes carry (MXC__FUSE_ATTR_NODES). */
const char *mxct_fuse_attr(void);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_FUSE_FUSE_SHIM_H_ */
