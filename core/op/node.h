/* Graph nodes, as far as gradient functions need them.
 *
 * A node is an operator application (op, parsed parameters, the parameter
 * strings it was made from, input entries) or a variable (op == NULL). An
 * entry names one output of a node. Gradient functions build backward
 * nodes out of the forward node's inputs ({input node, index}), its outputs
 * ({fwd, i}) and the output-gradient entries they are given. core/graph
 * builds symbols on the same structure; core/op/grad_eval.c evaluates gradient
 * nodes imperatively.
 *
 * Nodes are reference counted: each entry held in a node's inputs, and
 * each entry handed out by a gradient function, owns one reference.
 * Thread-safety: nodes are immutable after creation; references may be
 * taken and dropped from any thread. */
#ifndef MXC_CORE_OP_NODE_H_
#define MXC_CORE_OP_NODE_H_

#include <stdatomic.h>

#include "core/op/op.h"

typedef struct mxc__node mxc__node;

typedef struct mxc__entry {
  mxc__node *node;
  int index;
} mxc__entry;

struct mxc__node {
  atomic_int refs;
  const mxc__op *op; /* NULL: a variable */
  void *param;       /* parsed parameters (owned); NULL for variables */
  int n_attrs;       /* the parameter strings, as given (owned) */
  char **keys;
  char **vals;
  char *name;        /* owned; may be "" */
  int n_inputs;
  mxc__entry *inputs; /* each holds a reference */
  /* User attributes ("__shape__", "__lr_mult__", "ctx_group", ...): kept
   * apart from operator parameters, saved to JSON as attrs. The one
   * mutable part of a node: mxc__node_set_uattr must not run while
   * another thread reads the node. */
  int n_uattrs;
  char **ukeys; /* owned */
  char **uvals; /* owned */
  /* private: links nodes being freed, so that releasing a long chain
   * needs no recursion */
  struct mxc__node *free_next;
};

/* A variable node named `name`. */
int mxc__node_variable(const char *name, mxc__node **out);

/* An operator node. Parses the parameters (errors name the operator and
 * key), checks the input count, and takes a reference on each input. */
int mxc__node_op(const char *op_name, const char *const *keys,
                 const char *const *vals, int n_attrs,
                 const mxc__entry *inputs, int n_inputs, const char *name,
                 mxc__node **out);

/* The same from parameters already parsed from keys/vals (param_size
 * bytes of op's parameter struct, copied: parameter structs are flat,
 * see core/op/param.h), so a caller that has parsed them does not parse
 * twice. */
int mxc__node_op_parsed(const mxc__op *op, const void *param,
                        const char *const *keys, const char *const *vals,
                        int n_attrs, const mxc__entry *inputs, int n_inputs,
                        const char *name, mxc__node **out);

/* An operator node with the same parameter strings as `like` (how a
 * backward node gets its forward node's parameters). */
int mxc__node_op_like(const char *op_name, const mxc__node *like,
                      const mxc__entry *inputs, int n_inputs,
                      mxc__node **out);

/* Sets (adds or replaces) user attribute key. MXC_ERR_OOM possible; the
 * node is unchanged on failure. */
int mxc__node_set_uattr(mxc__node *n, const char *key, const char *val);
/* The value of user attribute key, or NULL. Valid until it is set again
 * or the node is freed. */
const char *mxc__node_get_uattr(const mxc__node *n, const char *key);

void mxc__node_retain(mxc__node *n);
void mxc__node_release(mxc__node *n); /* accepts NULL */

/* {n, i} with a new reference on n. */
mxc__entry mxc__entry_ref(mxc__node *n, int i);

/* Common gradient builders (descriptor `gradient` fields):
 * one backward node named op->name prefixed by "_backward_" taking
 *   use_none: (ograd...)
 *   use_in:   (ograd..., inputs...)
 *   use_out:  (ograd..., outputs...)
 *   use_in_out: (ograd..., inputs..., outputs...)
 * whose outputs are the input gradients in order. */
int mxc__grad_use_none(const mxc__node *fwd, const mxc__entry *ograd,
                       mxc__entry *igrad);
int mxc__grad_use_in(const mxc__node *fwd, const mxc__entry *ograd,
                     mxc__entry *igrad);
int mxc__grad_use_out(const mxc__node *fwd, const mxc__entry *ograd,
                      mxc__entry *igrad);
int mxc__grad_use_in_out(const mxc__node *fwd, const mxc__entry *ograd,
                         mxc__entry *igrad);
/* One backward node `name` over ins[0..n_ins) (borrowed entries: the node
 * takes its own references) with the forward node's parameter strings;
 * igrad[i] = output grad_of[i] of that node, or no gradient where
 * grad_of[i] < 0. grad_of has fwd->n_inputs entries. For gradients the
 * use_* shapes above do not fit (a backward taking some inputs only, or
 * giving gradients to some inputs only). */
int mxc__grad_node_pick(const mxc__node *fwd, const char *name,
                        const mxc__entry *ins, int n_ins, const int *grad_of,
                        mxc__entry *igrad);
/* Gradient is zero / absent for every input (BlockGrad, argmax, ...). */
int mxc__grad_none(const mxc__node *fwd, const mxc__entry *ograd,
                   mxc__entry *igrad);

#endif /* MXC_CORE_OP_NODE_H_ */
