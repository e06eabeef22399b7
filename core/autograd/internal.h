/* History nodes shared by recording (record.c) and backward (backward.c).
 * See autograd.h for the model. */
#ifndef MXC_CORE_AUTOGRAD_INTERNAL_H_
#define MXC_CORE_AUTOGRAD_INTERNAL_H_

#include <stdatomic.h>

#include "core/ndarray/ndarray.h"
#include "core/op/node.h"

typedef struct mxc__ag_node mxc__ag_node;

/* What an array's `ag` field points at: output `index` of `owner`. A link
 * set in an array holds one reference on its owner. */
typedef struct mxc__ag_link {
  mxc__ag_node *owner;
  int index;
} mxc__ag_link;

/* One history node (a recorded call or a variable), allocated as one
 * block with its arrays.
 *
 * Saved values are plain copies of views that hold one chunk reference
 * each (chunk NULL: nothing saved). They are not separate allocations, so
 * a record is committed after its operator was pushed without anything
 * that could fail; their `ag` is always NULL (a saved value never points
 * back into the history, so references form no cycle).
 *
 * Invariants: inputs[k]->node == node->inputs[k].node while not freed;
 * `freed`, `inputs` after creation, `grad` and `req` change only under
 * mxc__ag_lock. */
struct mxc__ag_node {
  atomic_int refs;     /* array links + consumers' inputs + temporary holds */
  mxc__node *node;     /* one reference */
  int n_out;           /* 1 for variables */
  mxc__ndarray *vals;  /* n_out saved values */
  mxc__ag_link *links; /* n_out */
  int n_in;
  mxc__ag_node **inputs; /* n_in references (NULL once freed) */
  int is_train;          /* training mode when recorded */
  int freed;             /* saved values released (retain_graph == 0) */
  int marked;            /* a marked variable: grad and req are set */
  mxc__ndarray grad;     /* saved view of the gradient buffer */
  int req;               /* mxc__req */
  mxc__ag_node *next;    /* work list while destroying */
};

/* A node with room for n_out values and n_in inputs, one reference (the
 * caller's), node NULL, everything else zero. MXC_ERR_OOM possible. */
int mxc__ag_node_new(int n_out, int n_in, mxc__ag_node **out);
void mxc__ag_node_ref(mxc__ag_node *n);
/* Drops one reference; destroys nodes whose count reaches zero, walking
 * long chains without recursion. Accepts NULL. Takes no lock. */
void mxc__ag_node_unref(mxc__ag_node *n);

/* Saved values: *dst = a view like src holding its own chunk reference
 * (ag NULL); release drops it (accepts chunk NULL) and clears dst. */
void mxc__ag_save(mxc__ndarray *dst, const mxc__ndarray *src);
void mxc__ag_unsave(mxc__ndarray *v);

/* Releases a recorded node's saved values and inputs, marking it freed
 * (variables keep theirs). Call under mxc__ag_lock. */
void mxc__ag_node_free_history(mxc__ag_node *n);

/* The process-wide lock guarding array links and node state. */
void mxc__ag_lock(void);
void mxc__ag_unlock(void);

/* The link of a's history, or NULL; call under mxc__ag_lock. */
static inline mxc__ag_link *mxc__ag_link_of(const mxc__ndarray *a) {
  return (mxc__ag_link *)a->ag;
}

#endif /* MXC_CORE_AUTOGRAD_INTERNAL_H_ */
