#include "core/graph/graph.h"

#include <stdint.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"

int mxc__graph_node_outputs(const mxc__node *n) {
  return n->op ? mxc__op_num_outputs(n->op, n->param) : 1;
}

/* ---- pointer -> id table (open addressing, capacity a power of two at
 * least twice the node count, so probes stay short and never fill up) ---- */

static size_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static int hash_find_slot(const mxc__graph *g, const mxc__node *n) {
  size_t mask = (size_t)g->hash_cap - 1;
  size_t i = hash_ptr(n) & mask;
  while (g->hash_keys[i] && g->hash_keys[i] != n) i = (i + 1) & mask;
  return (int)i;
}

int mxc__graph_node_id(const mxc__graph *g, const mxc__node *n) {
  if (!n || g->hash_cap == 0) return -1;
  int s = hash_find_slot(g, n);
  return g->hash_keys[s] ? g->hash_vals[s] : -1;
}

int mxc__graph_entry_id(const mxc__graph *g, mxc__entry e) {
  int id = mxc__graph_node_id(g, e.node);
  if (id < 0 || e.index < 0 ||
      e.index >= g->entry_ptr[id + 1] - g->entry_ptr[id]) {
    return -1;
  }
  return g->entry_ptr[id] + e.index;
}

int mxc__graph_entry_node(const mxc__graph *g, int e) {
  MXC__ASSERT(e >= 0 && e < g->n_entries);
  int lo = 0, hi = g->n_nodes - 1;
  while (lo < hi) { /* last node with entry_ptr[node] <= e */
    int mid = (lo + hi + 1) / 2;
    if (g->entry_ptr[mid] <= e) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  MXC__ASSERT(g->entry_ptr[lo] <= e && e < g->entry_ptr[lo + 1]);
  return lo;
}

/* ---- building ---- */

/* Growable node list plus the id table, filled in post-order by an
 * explicit-stack DFS (graphs from long unrolled networks are deep enough
 * to make recursion a hazard). */
typedef struct builder {
  mxc__graph *g;
  int cap;
} builder;

static int grow_table(mxc__graph *g, int need) {
  if (g->hash_cap >= 2 * need) return MXC_OK;
  int cap = g->hash_cap ? g->hash_cap : 64;
  while (cap < 2 * need) cap *= 2;
  mxc__node **keys = mxc__calloc((size_t)cap, sizeof *keys);
  int *vals = mxc__calloc((size_t)cap, sizeof *vals);
  if (!keys || !vals) {
    mxc__free(keys);
    mxc__free(vals);
    return mxc__error_set(MXC_ERR_OOM, "out of memory indexing a graph");
  }
  mxc__graph tmp = *g;
  tmp.hash_cap = cap;
  tmp.hash_keys = keys;
  tmp.hash_vals = vals;
  for (int i = 0; i < g->hash_cap; ++i) {
    if (!g->hash_keys[i]) continue;
    int s = hash_find_slot(&tmp, g->hash_keys[i]);
    keys[s] = g->hash_keys[i];
    vals[s] = g->hash_vals[i];
  }
  mxc__free(g->hash_keys);
  mxc__free(g->hash_vals);
  g->hash_cap = cap;
  g->hash_keys = keys;
  g->hash_vals = vals;
  return MXC_OK;
}

static int add_node(builder *b, mxc__node *n) {
  mxc__graph *g = b->g;
  if (g->n_nodes == b->cap) {
    int cap = b->cap ? 2 * b->cap : 32;
    mxc__node **nodes = mxc__realloc(g->nodes, sizeof *nodes * (size_t)cap);
    MXC_RETURN_ERROR_IF(!nodes, MXC_ERR_OOM, "out of memory indexing a graph");
    g->nodes = nodes;
    b->cap = cap;
  }
  MXC_FORWARD_IF_ERROR(grow_table(g, g->n_nodes + 1));
  int s = hash_find_slot(g, n);
  MXC__ASSERT_MSG(g->hash_keys[s] == NULL, "node indexed twice");
  g->hash_keys[s] = n;
  g->hash_vals[s] = g->n_nodes;
  mxc__node_retain(n);
  g->nodes[g->n_nodes++] = n;
  return MXC_OK;
}

typedef struct frame {
  mxc__node *node;
  int next_input;
} frame;

/* Visits everything `root` depends on, appending nodes after their inputs.
 * A node is "seen" once it is in the table; nodes on the stack are not
 * yet in it, and a node reached again while on the stack would be a cycle,
 * which immutable, reference-counted nodes cannot form. */
static int visit(builder *b, mxc__node *root, frame **stack, int *stack_cap) {
  if (mxc__graph_node_id(b->g, root) >= 0) return MXC_OK;
  int top = 0;
  (*stack)[top].node = root;
  (*stack)[top].next_input = 0;
  while (top >= 0) {
    frame *f = &(*stack)[top];
    if (f->next_input < f->node->n_inputs) {
      mxc__node *in = f->node->inputs[f->next_input++].node;
      if (mxc__graph_node_id(b->g, in) >= 0) continue;
      if (top + 1 == *stack_cap) {
        int cap = *stack_cap * 2;
        frame *s = mxc__realloc(*stack, sizeof *s * (size_t)cap);
        MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "out of memory indexing a graph");
        *stack = s;
        *stack_cap = cap;
      }
      ++top;
      (*stack)[top].node = in;
      (*stack)[top].next_input = 0;
      continue;
    }
    /* A node may be reached twice on the stack through two paths before
     * either finishes; only the first to finish is added. */
    if (mxc__graph_node_id(b->g, f->node) < 0) {
      MXC_FORWARD_IF_ERROR(add_node(b, f->node));
    }
    --top;
  }
  return MXC_OK;
}

static int collect_nodes(builder *b, const mxc__entry *heads, int n_heads) {
  int stack_cap = 64;
  frame *stack = mxc__malloc(sizeof *stack * (size_t)stack_cap);
  MXC_RETURN_ERROR_IF(!stack, MXC_ERR_OOM, "out of memory indexing a graph");
  int rc = MXC_OK;
  for (int i = 0; rc == MXC_OK && i < n_heads; ++i) {
    rc = visit(b, heads[i].node, &stack, &stack_cap);
  }
  mxc__free(stack);
  return rc;
}

static int alloc_ints(int **p, int n) {
  *p = mxc__calloc((size_t)(n > 0 ? n : 1), sizeof(int));
  return *p ? MXC_OK
            : mxc__error_set(MXC_ERR_OOM, "out of memory indexing a graph");
}

/* Entry ids, input lists and consumer counts. */
static int index_entries(mxc__graph *g, const mxc__entry *heads,
                         int n_heads) {
  MXC_FORWARD_IF_ERROR(alloc_ints(&g->entry_ptr, g->n_nodes + 1));
  MXC_FORWARD_IF_ERROR(alloc_ints(&g->in_ptr, g->n_nodes + 1));
  for (int i = 0; i < g->n_nodes; ++i) {
    g->entry_ptr[i + 1] = g->entry_ptr[i] + mxc__graph_node_outputs(g->nodes[i]);
    g->in_ptr[i + 1] = g->in_ptr[i] + g->nodes[i]->n_inputs;
  }
  g->n_entries = g->entry_ptr[g->n_nodes];
  MXC_FORWARD_IF_ERROR(alloc_ints(&g->in_entries, g->in_ptr[g->n_nodes]));
  MXC_FORWARD_IF_ERROR(alloc_ints(&g->n_consumers, g->n_entries));
  MXC_FORWARD_IF_ERROR(alloc_ints(&g->heads, n_heads));
  for (int i = 0; i < g->n_nodes; ++i) {
    const mxc__node *n = g->nodes[i];
    for (int k = 0; k < n->n_inputs; ++k) {
      int e = mxc__graph_entry_id(g, n->inputs[k]);
      MXC_RETURN_ERROR_IF(e < 0, MXC_ERR_INVALID_ARGUMENT,
                          "node '%s' input %d refers to output %d of '%s', "
                          "which has fewer outputs",
                          n->name, k, n->inputs[k].index,
                          n->inputs[k].node->name);
      /* Post-order: the passes rely on inputs coming from earlier nodes. */
      MXC__ASSERT(mxc__graph_entry_node(g, e) < i);
      g->in_entries[g->in_ptr[i] + k] = e;
      g->n_consumers[e]++;
    }
  }
  for (int i = 0; i < n_heads; ++i) {
    int e = mxc__graph_entry_id(g, heads[i]);
    MXC_RETURN_ERROR_IF(e < 0, MXC_ERR_INVALID_ARGUMENT,
                        "graph output %d refers to output %d of '%s', which "
                        "has fewer outputs",
                        i, heads[i].index, heads[i].node->name);
    g->heads[i] = e;
    g->n_consumers[e]++;
  }
  g->n_heads = n_heads;
  return MXC_OK;
}

/* Splits variables into arguments and auxiliary states. */
static int classify_vars(mxc__graph *g) {
  int *is_aux = NULL;
  MXC_FORWARD_IF_ERROR(alloc_ints(&is_aux, g->n_nodes));
  for (int i = 0; i < g->n_nodes; ++i) {
    const mxc__node *n = g->nodes[i];
    if (!n->op || n->op->n_aux == 0) continue;
    for (int k = n->n_inputs - n->op->n_aux; k < n->n_inputs; ++k) {
      if (k < 0) continue;
      int id = mxc__graph_node_id(g, n->inputs[k].node);
      if (!g->nodes[id]->op) is_aux[id] = 1;
    }
  }
  int rc = alloc_ints(&g->args, g->n_nodes);
  if (rc == MXC_OK) rc = alloc_ints(&g->aux, g->n_nodes);
  for (int i = 0; rc == MXC_OK && i < g->n_nodes; ++i) {
    if (g->nodes[i]->op) continue;
    if (is_aux[i]) {
      g->aux[g->n_aux++] = i;
    } else {
      g->args[g->n_args++] = i;
    }
  }
  mxc__free(is_aux);
  return rc;
}

int mxc__graph_build(const mxc__entry *heads, int n_heads, mxc__graph **out) {
  MXC_RETURN_ERROR_IF(n_heads < 0 || (n_heads > 0 && !heads),
                      MXC_ERR_INVALID_ARGUMENT, "graph: bad head list");
  for (int i = 0; i < n_heads; ++i) {
    MXC_RETURN_ERROR_IF(!heads[i].node, MXC_ERR_INVALID_ARGUMENT,
                        "graph: output %d is NULL", i);
  }
  mxc__graph *g = mxc__calloc(1, sizeof *g);
  MXC_RETURN_ERROR_IF(!g, MXC_ERR_OOM, "out of memory indexing a graph");
  builder b = {g, 0};
  int rc = collect_nodes(&b, heads, n_heads);
  if (rc == MXC_OK) rc = index_entries(g, heads, n_heads);
  if (rc == MXC_OK) rc = classify_vars(g);
  if (rc != MXC_OK) {
    mxc__graph_free(g);
    return rc;
  }
  *out = g;
  return MXC_OK;
}

void mxc__graph_free(mxc__graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_nodes; ++i) mxc__node_release(g->nodes[i]);
  mxc__free(g->nodes);
  mxc__free(g->entry_ptr);
  mxc__free(g->in_ptr);
  mxc__free(g->in_entries);
  mxc__free(g->heads);
  mxc__free(g->n_consumers);
  mxc__free(g->args);
  mxc__free(g->aux);
  mxc__free(g->hash_keys);
  mxc__free(g->hash_vals);
  mxc__free(g);
}
