/* Graphviz DOT export: one vertex per node (variables as ovals labelled
 * with their name, operators as boxes labelled with name, operator and
 * the parameter strings they were made with), one edge per input from the
 * producing node to the consumer, labelled with the entry's shape
 * ("128x784") when argument shapes are given and inference finds it. */
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/graph.h"
#include "core/graph/infer.h"
#include "core/base/strbuf.h"
#include "core/graph/symbol.h"

/* Text inside a DOT double-quoted string. */
static void put_escaped(mxc__sbuf *b, const char *s) {
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') {
      char esc[2] = {'\\', *s};
      mxc__sbuf_addn(b, esc, 2);
    } else if (*s == '\n') {
      mxc__sbuf_add(b, "\\n");
    } else {
      mxc__sbuf_addn(b, s, 1);
    }
  }
}

static void put_vertex(mxc__sbuf *b, const mxc__node *n, int id) {
  mxc__sbuf_printf(b, "  n%d [label=\"", id);
  put_escaped(b, n->name);
  if (!n->op) {
    mxc__sbuf_add(b, "\", shape=oval];\n");
    return;
  }
  mxc__sbuf_add(b, "\\n");
  put_escaped(b, n->op->name);
  for (int i = 0; i < n->n_attrs; ++i) {
    mxc__sbuf_add(b, "\\n");
    put_escaped(b, n->keys[i]);
    mxc__sbuf_add(b, "=");
    put_escaped(b, n->vals[i]);
  }
  mxc__sbuf_add(b, "\", shape=box];\n");
}

static void put_edges(mxc__sbuf *b, const mxc__graph *g, int i,
                      const mxc__shape *shapes) {
  for (int k = g->in_ptr[i]; k < g->in_ptr[i + 1]; ++k) {
    int e = g->in_entries[k];
    mxc__sbuf_printf(b, "  n%d -> n%d", mxc__graph_entry_node(g, e), i);
    const mxc__shape *s = shapes ? &shapes[e] : NULL;
    if (s && s->ndim >= 0) {
      mxc__sbuf_add(b, " [label=\"");
      if (s->ndim == 0) mxc__sbuf_add(b, "scalar");
      for (int d = 0; d < s->ndim; ++d) {
        mxc__sbuf_printf(b, "%s%lld", d ? "x" : "", (long long)s->dims[d]);
      }
      mxc__sbuf_add(b, "\"]");
    }
    mxc__sbuf_add(b, ";\n");
  }
}

/* Per-entry shapes of g from the given argument shapes (partial). */
static int entry_shapes(const mxc__graph *g, int n, const char *const *names,
                        const mxc__shape *shapes, mxc__shape **out) {
  mxc__shape *es = mxc__malloc(sizeof *es * (size_t)g->n_entries);
  MXC_RETURN_ERROR_IF(!es, MXC_ERR_OOM, "mxc_symbol_to_dot: out of memory");
  for (int e = 0; e < g->n_entries; ++e) es[e].ndim = -1;
  int rc = mxc__graph_set_args(g, "mxc_symbol_to_dot", n, names, shapes,
                               sizeof *es, es);
  if (rc == MXC_OK) rc = mxc__graph_infer_shape(g, es);
  if (rc != MXC_OK) {
    mxc__free(es);
    return rc;
  }
  *out = es;
  return MXC_OK;
}

int mxc__symbol_to_dot(const mxc__symbol *s, int n, const char *const *names,
                       const mxc__shape *shapes, char **out) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(s->outputs, s->n_outputs, &g));
  mxc__shape *es = NULL;
  int rc = shapes ? entry_shapes(g, n, names, shapes, &es) : MXC_OK;
  if (rc == MXC_OK) {
    mxc__sbuf b;
    mxc__sbuf_init(&b);
    mxc__sbuf_add(&b, "digraph mxc {\n  node [fontsize=10];\n");
    for (int i = 0; i < g->n_nodes; ++i) put_vertex(&b, g->nodes[i], i);
    for (int i = 0; i < g->n_nodes; ++i) put_edges(&b, g, i, es);
    mxc__sbuf_add(&b, "}\n");
    rc = mxc__sbuf_finish(&b, "mxc_symbol_to_dot", out);
  }
  mxc__free(es);
  mxc__graph_free(g);
  return rc;
}
