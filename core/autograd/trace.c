/* Tracing: the calls recorded behind some arrays as a symbol, which is
 * how a user block's forward pass (any C code calling operators) becomes
 * a graph for the executor (core/nn hybridize and export), as Gluon's
 * hybrid_forward traces with symbols and MXNet's autograd.get_symbol
 * reads a recorded history.
 *
 * Each recorded call becomes an operator node with the call's parsed
 * parameters and strings; each variable history node (a marked variable
 * or a constant input) becomes whatever node the caller's var_of gives
 * for its value, so the caller names inputs and parameters and refuses
 * values it does not know. The walk holds the history lock, so histories
 * cannot be freed under it; it recurses once per recorded call on a path,
 * which the forward pass that recorded them bounds. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/autograd/autograd.h"
#include "core/autograd/internal.h"
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/symbol.h"

/* The history nodes copied so far and their copies (one reference each). */
typedef struct trace {
  int n, cap, n_ops;
  mxc__ag_node **from;
  mxc__node **to;
  const char *prefix;
  mxc__autograd_var_fn var_of;
  void *user;
} trace;

static void trace_clear(trace *t) {
  for (int i = 0; i < t->n; ++i) mxc__node_release(t->to[i]);
  mxc__free(t->from);
  mxc__free(t->to);
}

static mxc__node *trace_find(const trace *t, const mxc__ag_node *h) {
  for (int i = 0; i < t->n; ++i) {
    if (t->from[i] == h) return t->to[i];
  }
  return NULL;
}

/* Remembers h -> copy (the trace takes over the caller's reference). */
static int trace_put(trace *t, mxc__ag_node *h, mxc__node *copy) {
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 16;
    mxc__ag_node **f = mxc__realloc(t->from, (size_t)cap * sizeof *f);
    if (f) t->from = f;
    mxc__node **c = f ? mxc__realloc(t->to, (size_t)cap * sizeof *c) : NULL;
    if (!c) {
      mxc__node_release(copy);
      return mxc__error_set(MXC_ERR_OOM, "trace: out of memory");
    }
    t->to = c;
    t->cap = cap;
  }
  t->from[t->n] = h;
  t->to[t->n++] = copy;
  return MXC_OK;
}

/* "<prefix>_<operator in lower case><k>": unique within the trace. */
static void op_name(trace *t, const mxc__op *op, char *buf, size_t size) {
  int at = snprintf(buf, size, "%s_", t->prefix);
  for (const char *c = op->name; *c && at + 1 < (int)size; ++c) {
    buf[at++] = (char)tolower((unsigned char)*c);
  }
  buf[at < (int)size ? at : (int)size - 1] = '\0';
  size_t len = strlen(buf);
  snprintf(buf + len, size - len, "%d", t->n_ops++);
}

static int copy_node(trace *t, mxc__ag_node *h, mxc__node **out);

/* A copy of the recorded call h over copies of its inputs. */
static int copy_call(trace *t, mxc__ag_node *h, mxc__node **out) {
  const mxc__node *n = h->node;
  MXC_RETURN_ERROR_IF(h->freed, MXC_ERR_INVALID_ARGUMENT,
                      "trace: the history of a call to '%s' was freed by a "
                      "backward pass",
                      n->op->name);
  mxc__entry small[16];
  mxc__entry *ents =
      n->n_inputs <= 16 ? small
                        : mxc__malloc(sizeof *ents * (size_t)n->n_inputs);
  MXC_RETURN_ERROR_IF(!ents, MXC_ERR_OOM, "trace: out of memory");
  int rc = MXC_OK;
  for (int k = 0; k < n->n_inputs && rc == MXC_OK; ++k) {
    ents[k].index = n->inputs[k].index;
    rc = copy_node(t, h->inputs[k], &ents[k].node);
  }
  char name[256];
  op_name(t, n->op, name, sizeof name);
  if (rc == MXC_OK) {
    rc = mxc__node_op_parsed(n->op, n->param, (const char *const *)n->keys,
                             (const char *const *)n->vals, n->n_attrs, ents,
                             n->n_inputs, name, out);
  }
  if (ents != small) mxc__free(ents);
  return rc;
}

/* *out = the copy of h (borrowed: the trace holds it). */
static int copy_node(trace *t, mxc__ag_node *h, mxc__node **out) {
  mxc__node *c = trace_find(t, h);
  if (c) {
    *out = c;
    return MXC_OK;
  }
  MXC_FORWARD_IF_ERROR(h->node->op ? copy_call(t, h, &c)
                                   : t->var_of(t->user, &h->vals[0], &c));
  MXC_FORWARD_IF_ERROR(trace_put(t, h, c));
  *out = c;
  return MXC_OK;
}

/* The symbol over the heads' entries, under the history lock. */
static int trace_heads(trace *t, int n, mxc__ndarray *const *heads,
                       mxc__entry *ents) {
  for (int i = 0; i < n; ++i) {
    mxc__ag_link *l = mxc__ag_link_of(heads[i]);
    MXC_RETURN_ERROR_IF(!l, MXC_ERR_INVALID_ARGUMENT,
                        "trace: output %d has no recorded history (it does "
                        "not depend on the traced inputs)",
                        i);
    ents[i].index = l->index;
    MXC_FORWARD_IF_ERROR(copy_node(t, l->owner, &ents[i].node));
  }
  return MXC_OK;
}

int mxc__autograd_trace(int n, mxc__ndarray *const *heads,
                        const char *prefix, mxc__autograd_var_fn var_of,
                        void *user, struct mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(n < 1 || n > 64, MXC_ERR_INVALID_ARGUMENT,
                      "trace: %d outputs; expected 1 to 64", n);
  trace t = {0, 0, 0, NULL, NULL, prefix, var_of, user};
  mxc__entry ents[64];
  mxc__ag_lock();
  int rc = trace_heads(&t, n, heads, ents);
  mxc__ag_unlock();
  if (rc == MXC_OK) rc = mxc__symbol_new(ents, n, out);
  trace_clear(&t);
  return rc;
}
