/* Indexed graphs: the flat, numbered view of a DAG of core/op/node.h nodes
 * that passes (inference, memory planning, fusion, execution) work on.
 *
 * A graph is built from head entries (a symbol's outputs, or forward
 * outputs plus gradient entries). Nodes are numbered in depth-first
 * post-order (each node after its inputs, inputs visited in order), the
 * order MXNet's DFSVisit gives, so argument lists match MXNet's. Each
 * output of each node is an entry with a dense id:
 *   entry id of (node i, output j) = entry_ptr[i] + j,
 * where a variable has 1 output and an operator node all of its outputs,
 * hidden ones included (mxc__op_num_outputs).
 *
 * Invariants relied on by the passes:
 *  - for every node i and input k, the producing node of in_entries[...]
 *    has an id < i;
 *  - args and aux partition the variable nodes; a variable is aux when
 *    any operator uses it as one of its last n_aux inputs;
 *  - n_consumers[e] counts inputs reading entry e plus 1 for each head
 *    equal to e.
 *
 * A graph holds one reference on each node and is immutable after
 * building; any number of threads may read it. */
#ifndef MXC_CORE_GRAPH_GRAPH_H_
#define MXC_CORE_GRAPH_GRAPH_H_

#include "core/op/node.h"

typedef struct mxc__graph {
  int n_nodes;
  mxc__node **nodes; /* topological order; one reference each */
  int *entry_ptr;    /* n_nodes + 1 */
  int n_entries;
  int *in_ptr;       /* n_nodes + 1: inputs of node i are */
  int *in_entries;   /* in_entries[in_ptr[i] .. in_ptr[i+1]) (entry ids) */
  int n_heads;
  int *heads;        /* entry ids */
  int *n_consumers;  /* per entry */
  int n_args;
  int *args;         /* node ids of argument variables, in order */
  int n_aux;
  int *aux;          /* node ids of auxiliary-state variables, in order */
  /* private: pointer -> id lookup */
  int hash_cap;
  mxc__node **hash_keys;
  int *hash_vals;
} mxc__graph;

/* Builds the graph of everything head entries depend on. Entries must
 * name existing outputs (MXC_ERR_INVALID_ARGUMENT otherwise). */
int mxc__graph_build(const mxc__entry *heads, int n_heads, mxc__graph **out);
void mxc__graph_free(mxc__graph *g); /* accepts NULL */

/* Id of node n in g, or -1. */
int mxc__graph_node_id(const mxc__graph *g, const mxc__node *n);
/* Entry id of e in g, or -1. */
int mxc__graph_entry_id(const mxc__graph *g, mxc__entry e);
/* Outputs a node has in the graph (1 for variables). */
int mxc__graph_node_outputs(const mxc__node *n);
/* Node id owning entry id e (binary search over entry_ptr). */
int mxc__graph_entry_node(const mxc__graph *g, int e);

#endif /* MXC_CORE_GRAPH_GRAPH_H_ */
