/* Questions about symbols: entry names, argument / output / auxiliary
 * lists, selecting outputs by name, and attributes. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/graph.h"
#include "core/graph/symbol.h"

void mxc__str_list_free(mxc__str_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; ++i) mxc__free(l->items[i]);
  mxc__free(l->items);
  mxc__free(l);
}

/* An empty list with room for n strings. */
static int list_new(int n, mxc__str_list **out) {
  mxc__str_list *l = mxc__calloc(1, sizeof *l);
  char **items = mxc__calloc((size_t)(n > 0 ? n : 1), sizeof *items);
  if (!l || !items) {
    mxc__free(l);
    mxc__free(items);
    return mxc__error_set(MXC_ERR_OOM, "out of memory listing names");
  }
  l->items = items;
  *out = l;
  return MXC_OK;
}

static int list_add(mxc__str_list *l, const char *s) {
  char *c = mxc__strdup(s);
  MXC_RETURN_ERROR_IF(!c, MXC_ERR_OOM, "out of memory listing names");
  l->items[l->n++] = c;
  return MXC_OK;
}

/* ---- entry names ---- */

int mxc__entry_name(mxc__entry e, char **out) {
  const mxc__node *n = e.node;
  if (!n->op) {
    char *s = mxc__strdup(n->name);
    MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "out of memory naming an output");
    *out = s;
    return MXC_OK;
  }
  int vis = mxc__op_num_visible_outputs(n->op, n->param);
  const char *oname = NULL;
  char num[32];
  if (vis == 1 && e.index == 0) {
    oname = "output";
  } else {
    const char *const *names = n->op->output_names;
    for (int i = 0; names && names[i] && !oname; ++i) {
      if (i == e.index) oname = names[i];
    }
    if (!oname) {
      snprintf(num, sizeof num, "output%d", e.index);
      oname = num;
    }
  }
  /* As MXNet: an unnamed node's outputs are named by the output alone. */
  size_t len = strlen(n->name) + strlen(oname) + 2;
  char *s = mxc__malloc(len);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "out of memory naming an output");
  snprintf(s, len, "%s%s%s", n->name, *n->name ? "_" : "", oname);
  *out = s;
  return MXC_OK;
}

/* ---- lists ---- */

static int list_vars(const mxc__symbol *s, int aux, mxc__str_list **out) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(s->outputs, s->n_outputs, &g));
  int n = aux ? g->n_aux : g->n_args;
  const int *ids = aux ? g->aux : g->args;
  mxc__str_list *l = NULL;
  int rc = list_new(n, &l);
  for (int i = 0; rc == MXC_OK && i < n; ++i) {
    rc = list_add(l, g->nodes[ids[i]]->name);
  }
  mxc__graph_free(g);
  if (rc != MXC_OK) {
    mxc__str_list_free(l);
    return rc;
  }
  *out = l;
  return MXC_OK;
}

int mxc__symbol_list_arguments(const mxc__symbol *s, mxc__str_list **out) {
  return list_vars(s, 0, out);
}

int mxc__symbol_list_aux(const mxc__symbol *s, mxc__str_list **out) {
  return list_vars(s, 1, out);
}

int mxc__symbol_list_outputs(const mxc__symbol *s, mxc__str_list **out) {
  mxc__str_list *l = NULL;
  MXC_FORWARD_IF_ERROR(list_new(s->n_outputs, &l));
  for (int i = 0; i < s->n_outputs; ++i) {
    char *name = NULL;
    int rc = mxc__entry_name(s->outputs[i], &name);
    if (rc != MXC_OK) {
      mxc__str_list_free(l);
      return rc;
    }
    l->items[l->n++] = name;
  }
  *out = l;
  return MXC_OK;
}

int mxc__symbol_output_by_name(const mxc__symbol *s, const char *name,
                               mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_output_by_name: name is NULL");
  for (int i = 0; i < s->n_outputs; ++i) {
    char *oname = NULL;
    MXC_FORWARD_IF_ERROR(mxc__entry_name(s->outputs[i], &oname));
    int match = strcmp(oname, name) == 0;
    mxc__free(oname);
    if (match) return mxc__symbol_new(&s->outputs[i], 1, out);
  }
  return mxc__error_set(MXC_ERR_NOT_FOUND,
                        "mxc_symbol_output_by_name: the symbol has no output "
                        "named '%s' (mxc_symbol_list_outputs lists them)",
                        name);
}

int mxc__symbol_name(const mxc__symbol *s, char **out) {
  MXC_RETURN_ERROR_IF(s->n_outputs != 1, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_name: the symbol has %d outputs; only a "
                      "single-output symbol has a name",
                      s->n_outputs);
  char *c = mxc__strdup(s->outputs[0].node->name);
  MXC_RETURN_ERROR_IF(!c, MXC_ERR_OOM, "mxc_symbol_name: out of memory");
  *out = c;
  return MXC_OK;
}

/* ---- attributes ---- */

static int single_node(const mxc__symbol *s, const char *fn,
                       mxc__node **out) {
  MXC_RETURN_ERROR_IF(s->n_outputs != 1, MXC_ERR_INVALID_ARGUMENT,
                      "%s: the symbol has %d outputs; attributes belong to "
                      "the node of a single-output symbol",
                      fn, s->n_outputs);
  *out = s->outputs[0].node;
  return MXC_OK;
}

int mxc__symbol_set_attr(const mxc__symbol *s, const char *key,
                         const char *val) {
  MXC_RETURN_ERROR_IF(!key || !*key || !val, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_set_attr: key is NULL or empty, or val is "
                      "NULL");
  mxc__node *n = NULL;
  MXC_FORWARD_IF_ERROR(single_node(s, "mxc_symbol_set_attr", &n));
  for (int i = 0; n->op && i < n->op->n_params; ++i) {
    MXC_RETURN_ERROR_IF(strcmp(n->op->params[i].name, key) == 0,
                        MXC_ERR_INVALID_ARGUMENT,
                        "mxc_symbol_set_attr: '%s' is a parameter of "
                        "operator '%s' (node '%s'); parameters are fixed "
                        "when the node is created",
                        key, n->op->name, n->name);
  }
  return mxc__node_set_uattr(n, key, val);
}

int mxc__symbol_get_attr(const mxc__symbol *s, const char *key, char **out) {
  MXC_RETURN_ERROR_IF(!key, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_get_attr: key is NULL");
  mxc__node *n = NULL;
  MXC_FORWARD_IF_ERROR(single_node(s, "mxc_symbol_get_attr", &n));
  const char *v = mxc__node_get_uattr(n, key);
  for (int i = 0; !v && i < n->n_attrs; ++i) {
    if (strcmp(n->keys[i], key) == 0) v = n->vals[i];
  }
  if (!v) {
    *out = NULL;
    return MXC_OK;
  }
  char *c = mxc__strdup(v);
  MXC_RETURN_ERROR_IF(!c, MXC_ERR_OOM, "mxc_symbol_get_attr: out of memory");
  *out = c;
  return MXC_OK;
}

int mxc__symbol_attr_keys(const mxc__symbol *s, mxc__str_list **out) {
  mxc__node *n = NULL;
  MXC_FORWARD_IF_ERROR(single_node(s, "mxc_symbol_attr_keys", &n));
  mxc__str_list *l = NULL;
  MXC_FORWARD_IF_ERROR(list_new(n->n_attrs + n->n_uattrs, &l));
  int rc = MXC_OK;
  for (int i = 0; rc == MXC_OK && i < n->n_attrs; ++i) {
    rc = list_add(l, n->keys[i]);
  }
  for (int i = 0; rc == MXC_OK && i < n->n_uattrs; ++i) {
    rc = list_add(l, n->ukeys[i]);
  }
  if (rc != MXC_OK) {
    mxc__str_list_free(l);
    return rc;
  }
  *out = l;
  return MXC_OK;
}
