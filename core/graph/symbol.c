/* Building symbols: variables, operator application with automatic names
 * and implicit variables, composition, copies, groups. Queries (names,
 * lists, attributes) live in symbol_query.c. */
#include "core/graph/symbol.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/graph.h"

int mxc__symbol_new(const mxc__entry *outs, int n, mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(n < 1, MXC_ERR_INVALID_ARGUMENT,
                      "a symbol needs at least one output; got %d", n);
  mxc__symbol *s = mxc__calloc(1, sizeof *s);
  mxc__entry *e = mxc__calloc((size_t)n, sizeof *e);
  if (!s || !e) {
    mxc__free(s);
    mxc__free(e);
    return mxc__error_set(MXC_ERR_OOM, "out of memory creating a symbol");
  }
  for (int i = 0; i < n; ++i) e[i] = mxc__entry_ref(outs[i].node, outs[i].index);
  s->n_outputs = n;
  s->outputs = e;
  *out = s;
  return MXC_OK;
}

void mxc__symbol_free(mxc__symbol *s) {
  if (!s) return;
  for (int i = 0; i < s->n_outputs; ++i) mxc__node_release(s->outputs[i].node);
  mxc__free(s->outputs);
  mxc__free(s);
}

/* ---- automatic names ---- */

/* One counter per lower-cased operator name, process-wide, as MXNet's
 * NameManager: "fullyconnected0", "fullyconnected1". Keys are the static
 * names of registered descriptors, so the table never allocates; it has
 * room for twice the registry's capacity, and would fall back to one
 * shared counter if it ever filled up. */
#define NAME_SLOTS 2048
static struct {
  const char *op_name;
  long long next;
} g_names[NAME_SLOTS];
static int g_names_used;
static long long g_names_overflow;
static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;

static long long next_counter(const char *op_name) {
  uint32_t h = 2166136261u;
  for (const char *c = op_name; *c; ++c) {
    h = (h ^ (unsigned char)tolower((unsigned char)*c)) * 16777619u;
  }
  pthread_mutex_lock(&g_names_lock);
  uint32_t i = h & (NAME_SLOTS - 1);
  while (g_names[i].op_name && strcasecmp(g_names[i].op_name, op_name)) {
    i = (i + 1) & (NAME_SLOTS - 1);
  }
  long long v;
  if (g_names[i].op_name) {
    v = g_names[i].next++;
  } else if (g_names_used < NAME_SLOTS / 2) {
    g_names[i].op_name = op_name;
    g_names_used++;
    v = g_names[i].next++;
  } else {
    v = g_names_overflow++;
  }
  pthread_mutex_unlock(&g_names_lock);
  return v;
}

static int auto_name(const mxc__op *op, char **out) {
  long long k = next_counter(op->name);
  size_t len = strlen(op->name) + 24;
  char *s = mxc__malloc(len);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "out of memory naming a node");
  size_t i = 0;
  for (; op->name[i]; ++i) s[i] = (char)tolower((unsigned char)op->name[i]);
  snprintf(s + i, len - i, "%lld", k);
  *out = s;
  return MXC_OK;
}

/* ---- variables ---- */

static int set_uattrs(mxc__node *n, const char *const *keys,
                      const char *const *vals, int count) {
  for (int i = 0; i < count; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__node_set_uattr(n, keys[i], vals[i]));
  }
  return MXC_OK;
}

static int check_kv(const char *fn, const char *const *keys,
                    const char *const *vals, int n) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: attribute count is %d; expected >= 0", fn, n);
  MXC_RETURN_ERROR_IF(n > 0 && (!keys || !vals), MXC_ERR_INVALID_ARGUMENT,
                      "%s: keys or vals is NULL but the count is %d", fn, n);
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!keys[i] || !vals[i], MXC_ERR_INVALID_ARGUMENT,
                        "%s: key or value %d is NULL", fn, i);
  }
  return MXC_OK;
}

int mxc__symbol_variable(const char *name, const char *const *keys,
                         const char *const *vals, int n, mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(!name || !*name, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_variable: name is NULL or empty; a "
                      "variable needs a name");
  MXC_FORWARD_IF_ERROR(check_kv("mxc_symbol_variable", keys, vals, n));
  mxc__node *v = NULL;
  MXC_FORWARD_IF_ERROR(mxc__node_variable(name, &v));
  int rc = set_uattrs(v, keys, vals, n);
  mxc__entry e = {v, 0};
  if (rc == MXC_OK) rc = mxc__symbol_new(&e, 1, out);
  mxc__node_release(v);
  return rc;
}

/* ---- operator application ---- */

/* Working state of mxc__symbol_create: split attributes, input slots and
 * the variables created for missing inputs (owned here). */
typedef struct creation {
  const char **pk, **pv, **uk, **uv; /* parameters / user attributes */
  int np, nu;
  void *param;
  int n_in;
  mxc__entry *ins;
  mxc__node **made; /* per slot: variable created here, or NULL */
  char *name;       /* the node's name (owned) */
  char num_args[16]; /* filled-in count of a variadic operator */
} creation;

static void creation_free(creation *c) {
  mxc__free(c->pk);
  mxc__free(c->param);
  for (int i = 0; c->made && i < c->n_in; ++i) mxc__node_release(c->made[i]);
  mxc__free(c->made);
  mxc__free(c->ins);
  mxc__free(c->name);
}

/* Keys starting with "__" are graph attributes ("__lr_mult__"), not
 * operator parameters. */
static int split_attrs(creation *c, const char *const *keys,
                       const char *const *vals, int n) {
  /* One spare parameter slot for add_variadic_count. */
  c->pk = mxc__calloc((size_t)(4 * (n + 1)), sizeof(char *));
  MXC_RETURN_ERROR_IF(!c->pk, MXC_ERR_OOM, "out of memory creating a symbol");
  c->pv = c->pk + n + 1;
  c->uk = c->pv + n + 1;
  c->uv = c->uk + n + 1;
  for (int i = 0; i < n; ++i) {
    if (strncmp(keys[i], "__", 2) == 0) {
      c->uk[c->nu] = keys[i];
      c->uv[c->nu++] = vals[i];
    } else {
      c->pk[c->np] = keys[i];
      c->pv[c->np++] = vals[i];
    }
  }
  return MXC_OK;
}

/* Variadic operators (add_n, Concat, ...) count their inputs in a
 * "num_args" parameter; when it is not given, the inputs passed here are
 * the count, as in MXNet's front ends. */
static void add_variadic_count(creation *c, const mxc__op *op, int n_inputs) {
  if (!op->num_inputs || n_inputs <= 0) return;
  int has = 0;
  for (int i = 0; i < op->n_params; ++i) {
    if (strcmp(op->params[i].name, "num_args") == 0) has = 1;
  }
  for (int i = 0; i < c->np; ++i) {
    if (strcmp(c->pk[i], "num_args") == 0) has = 0;
  }
  if (!has) return;
  snprintf(c->num_args, sizeof c->num_args, "%d", n_inputs);
  c->pk[c->np] = "num_args";
  c->pv[c->np++] = c->num_args;
}

/* Places the given inputs into operator input slots. */
static int place_inputs(creation *c, const mxc__op *op,
                        const char *const *input_names,
                        mxc__symbol *const *inputs, int n_inputs) {
  MXC_RETURN_ERROR_IF(n_inputs > c->n_in, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s' (node '%s'): got %d inputs; it takes "
                      "%d with these parameters",
                      op->name, c->name, n_inputs, c->n_in);
  for (int i = 0; i < n_inputs; ++i) {
    MXC_RETURN_ERROR_IF(!inputs[i], MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s' (node '%s'): input %d is NULL",
                        op->name, c->name, i);
    int slot = i;
    if (input_names) {
      MXC_RETURN_ERROR_IF(!input_names[i], MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s' (node '%s'): input name %d is NULL",
                          op->name, c->name, i);
      slot = 0;
      while (slot < c->n_in &&
             strcmp(mxc__op_input_name(op, c->param, slot), input_names[i])) {
        ++slot;
      }
      MXC_RETURN_ERROR_IF(slot == c->n_in, MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s' (node '%s') has no input named '%s' "
                          "with these parameters",
                          op->name, c->name, input_names[i]);
      MXC_RETURN_ERROR_IF(c->ins[slot].node != NULL, MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s' (node '%s'): input '%s' is given "
                          "twice",
                          op->name, c->name, input_names[i]);
    }
    MXC_RETURN_ERROR_IF(inputs[i]->n_outputs != 1, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s' (node '%s'): input '%s' is a symbol "
                        "with %d outputs; expected one",
                        op->name, c->name,
                        mxc__op_input_name(op, c->param, slot),
                        inputs[i]->n_outputs);
    c->ins[slot] = inputs[i]->outputs[0];
  }
  return MXC_OK;
}

/* Missing inputs become variables "<node>_<input name>". */
static int fill_missing(creation *c, const mxc__op *op) {
  for (int k = 0; k < c->n_in; ++k) {
    if (c->ins[k].node) continue;
    const char *in = mxc__op_input_name(op, c->param, k);
    size_t len = strlen(c->name) + strlen(in) + 2;
    char *vn = mxc__malloc(len);
    MXC_RETURN_ERROR_IF(!vn, MXC_ERR_OOM, "out of memory creating a symbol");
    snprintf(vn, len, "%s_%s", c->name, in);
    int rc = mxc__node_variable(vn, &c->made[k]);
    mxc__free(vn);
    MXC_FORWARD_IF_ERROR(rc);
    c->ins[k].node = c->made[k];
    c->ins[k].index = 0;
  }
  return MXC_OK;
}

/* Output entries a user sees of an operator node. */
static int visible_outputs(const mxc__node *n) {
  return mxc__op_num_visible_outputs(n->op, n->param);
}

static int create_node(creation *c, const mxc__op *op, mxc__symbol **out) {
  mxc__node *n = NULL;
  MXC_FORWARD_IF_ERROR(mxc__node_op(op->name, c->pk, c->pv, c->np, c->ins,
                                    c->n_in, c->name, &n));
  int rc = set_uattrs(n, c->uk, c->uv, c->nu);
  int n_vis = visible_outputs(n);
  mxc__entry *outs = rc == MXC_OK ? mxc__calloc((size_t)n_vis, sizeof *outs)
                                  : NULL;
  if (rc == MXC_OK && !outs) {
    rc = mxc__error_set(MXC_ERR_OOM, "out of memory creating a symbol");
  }
  for (int j = 0; rc == MXC_OK && j < n_vis; ++j) {
    outs[j].node = n;
    outs[j].index = j;
  }
  if (rc == MXC_OK) rc = mxc__symbol_new(outs, n_vis, out);
  mxc__free(outs);
  mxc__node_release(n);
  return rc;
}

int mxc__symbol_create(const mxc__op *op, const char *const *keys,
                       const char *const *vals, int n_params,
                       const char *name, const char *const *input_names,
                       mxc__symbol *const *inputs, int n_inputs,
                       mxc__symbol **out) {
  MXC_FORWARD_IF_ERROR(check_kv("mxc_symbol_create", keys, vals, n_params));
  MXC_RETURN_ERROR_IF(n_inputs < 0 || (n_inputs > 0 && !inputs),
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_create: %d inputs with inputs %s",
                      n_inputs, inputs ? "given" : "NULL");
  MXC_RETURN_ERROR_IF(name && !*name, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_create: name is empty; give a name or "
                      "NULL for an automatic one");
  creation c;
  memset(&c, 0, sizeof c);
  int rc = split_attrs(&c, keys, vals, n_params);
  if (rc == MXC_OK) add_variadic_count(&c, op, n_inputs);
  if (rc == MXC_OK) {
    rc = mxc__op_parse_params(op, c.pk, c.pv, c.np, &c.param);
  }
  if (rc == MXC_OK) {
    c.name = name ? mxc__strdup(name) : NULL;
    rc = name ? (c.name ? MXC_OK
                        : mxc__error_set(MXC_ERR_OOM, "out of memory"))
              : auto_name(op, &c.name);
  }
  if (rc == MXC_OK) {
    c.n_in = mxc__op_num_inputs(op, c.param);
    size_t n = (size_t)(c.n_in > 0 ? c.n_in : 1);
    c.ins = mxc__calloc(n, sizeof *c.ins);
    c.made = mxc__calloc(n, sizeof *c.made);
    if (!c.ins || !c.made) {
      rc = mxc__error_set(MXC_ERR_OOM, "out of memory creating a symbol");
    }
  }
  if (rc == MXC_OK) rc = place_inputs(&c, op, input_names, inputs, n_inputs);
  if (rc == MXC_OK) rc = fill_missing(&c, op);
  if (rc == MXC_OK) rc = create_node(&c, op, out);
  creation_free(&c);
  return rc;
}

/* ---- rebuilding: composition and copies ---- */

/* A copy of node n with inputs ins (n->n_inputs entries), same name,
 * parameters and user attributes. */
static int node_copy(const mxc__node *n, const mxc__entry *ins,
                     mxc__node **out) {
  mxc__node *c = NULL;
  if (n->op) {
    MXC_FORWARD_IF_ERROR(
        mxc__node_op_like(n->op->name, n, ins, n->n_inputs, &c));
  } else {
    MXC_FORWARD_IF_ERROR(mxc__node_variable(n->name, &c));
  }
  int rc = set_uattrs(c, (const char *const *)n->ukeys,
                      (const char *const *)n->uvals, n->n_uattrs);
  if (rc != MXC_OK) {
    mxc__node_release(c);
    return rc;
  }
  *out = c;
  return MXC_OK;
}

/* Whether node i's inputs all map to themselves. */
static int inputs_unchanged(const mxc__graph *g, const mxc__entry *map,
                            int i) {
  const mxc__node *n = g->nodes[i];
  for (int k = 0; k < n->n_inputs; ++k) {
    int id = mxc__graph_node_id(g, n->inputs[k].node);
    if (map[id].node != n->inputs[k].node || map[id].index != 0) return 0;
  }
  return 1;
}

/* map[i]: what graph node i becomes, as an entry whose index is added to
 * the output index (variables replaced by another symbol's output map to
 * that output). owned[i]: map[i].node is a new node referenced here.
 * repl: per node, a replacement entry for variables or {NULL, 0}. */
static int remap_node(const mxc__graph *g, const mxc__entry *repl,
                      int copy_all, mxc__entry *map, int *owned, int i,
                      mxc__entry *scratch) {
  const mxc__node *n = g->nodes[i];
  map[i].node = (mxc__node *)n;
  map[i].index = 0;
  if (!n->op && repl[i].node) {
    map[i] = repl[i];
    return MXC_OK;
  }
  if (!copy_all && (!n->op || inputs_unchanged(g, map, i))) return MXC_OK;
  for (int k = 0; k < n->n_inputs; ++k) {
    int id = mxc__graph_node_id(g, n->inputs[k].node);
    scratch[k].node = map[id].node;
    scratch[k].index = map[id].index + n->inputs[k].index;
  }
  MXC_FORWARD_IF_ERROR(node_copy(n, scratch, &map[i].node));
  owned[i] = 1;
  return MXC_OK;
}

static int rebuild(const mxc__symbol *s, const mxc__graph *g,
                   const mxc__entry *repl, int copy_all, mxc__symbol **out) {
  int max_in = 1;
  for (int i = 0; i < g->n_nodes; ++i) {
    if (g->nodes[i]->n_inputs > max_in) max_in = g->nodes[i]->n_inputs;
  }
  size_t nn = (size_t)g->n_nodes;
  mxc__entry *map = mxc__calloc(nn, sizeof *map);
  int *owned = mxc__calloc(nn, sizeof *owned);
  mxc__entry *scratch = mxc__calloc((size_t)max_in, sizeof *scratch);
  mxc__entry *outs = mxc__calloc((size_t)s->n_outputs, sizeof *outs);
  int rc = map && owned && scratch && outs
               ? MXC_OK
               : mxc__error_set(MXC_ERR_OOM, "out of memory rebuilding a "
                                             "symbol");
  for (int i = 0; rc == MXC_OK && i < g->n_nodes; ++i) {
    rc = remap_node(g, repl, copy_all, map, owned, i, scratch);
  }
  for (int j = 0; rc == MXC_OK && j < s->n_outputs; ++j) {
    int id = mxc__graph_node_id(g, s->outputs[j].node);
    outs[j].node = map[id].node;
    outs[j].index = map[id].index + s->outputs[j].index;
  }
  if (rc == MXC_OK) rc = mxc__symbol_new(outs, s->n_outputs, out);
  for (int i = 0; owned && i < g->n_nodes; ++i) {
    if (owned[i]) mxc__node_release(map[i].node);
  }
  mxc__free(map);
  mxc__free(owned);
  mxc__free(scratch);
  mxc__free(outs);
  return rc;
}

int mxc__symbol_copy(const mxc__symbol *s, mxc__symbol **out) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(s->outputs, s->n_outputs, &g));
  mxc__entry *repl = mxc__calloc((size_t)g->n_nodes, sizeof *repl);
  int rc = repl ? rebuild(s, g, repl, 1, out)
                : mxc__error_set(MXC_ERR_OOM, "out of memory copying a "
                                              "symbol");
  mxc__free(repl);
  mxc__graph_free(g);
  return rc;
}

/* Fills repl (per node of g) from the compose arguments. */
static int compose_targets(const mxc__graph *g, const char *const *names,
                           mxc__symbol *const *args, int n,
                           mxc__entry *repl) {
  MXC_RETURN_ERROR_IF(!names && n > g->n_args, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_compose: %d arguments given positionally "
                      "but the symbol has %d",
                      n, g->n_args);
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!args[i], MXC_ERR_INVALID_ARGUMENT,
                        "mxc_symbol_compose: args[%d] is NULL", i);
    MXC_RETURN_ERROR_IF(args[i]->n_outputs != 1, MXC_ERR_INVALID_ARGUMENT,
                        "mxc_symbol_compose: args[%d] has %d outputs; "
                        "expected one",
                        i, args[i]->n_outputs);
    if (!names) {
      repl[g->args[i]] = args[i]->outputs[0];
      continue;
    }
    MXC_RETURN_ERROR_IF(!names[i], MXC_ERR_INVALID_ARGUMENT,
                        "mxc_symbol_compose: names[%d] is NULL", i);
    int found = 0;
    for (int v = 0; v < g->n_nodes; ++v) {
      const mxc__node *nd = g->nodes[v];
      if (nd->op || strcmp(nd->name, names[i]) != 0) continue;
      MXC_RETURN_ERROR_IF(repl[v].node != NULL, MXC_ERR_INVALID_ARGUMENT,
                          "mxc_symbol_compose: '%s' is given twice",
                          names[i]);
      repl[v] = args[i]->outputs[0];
      found = 1;
    }
    MXC_RETURN_ERROR_IF(!found, MXC_ERR_NOT_FOUND,
                        "mxc_symbol_compose: '%s' is not an argument of the "
                        "symbol",
                        names[i]);
  }
  return MXC_OK;
}

int mxc__symbol_compose(const mxc__symbol *s, const char *const *names,
                        mxc__symbol *const *args, int n, mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && !args), MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_compose: %d arguments with args %s", n,
                      args ? "given" : "NULL");
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(s->outputs, s->n_outputs, &g));
  mxc__entry *repl = mxc__calloc((size_t)g->n_nodes, sizeof *repl);
  int rc = repl ? compose_targets(g, names, args, n, repl)
                : mxc__error_set(MXC_ERR_OOM, "out of memory composing a "
                                              "symbol");
  if (rc == MXC_OK) rc = rebuild(s, g, repl, 0, out);
  mxc__free(repl);
  mxc__graph_free(g);
  return rc;
}

/* ---- groups and single outputs ---- */

int mxc__symbol_group(mxc__symbol *const *syms, int n, mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(n < 1 || !syms, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_group: needs at least one symbol (n is "
                      "%d, syms %s)",
                      n, syms ? "given" : "NULL");
  int total = 0;
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!syms[i], MXC_ERR_INVALID_ARGUMENT,
                        "mxc_symbol_group: syms[%d] is NULL", i);
    total += syms[i]->n_outputs;
  }
  mxc__entry *outs = mxc__calloc((size_t)total, sizeof *outs);
  MXC_RETURN_ERROR_IF(!outs, MXC_ERR_OOM, "out of memory grouping symbols");
  int k = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < syms[i]->n_outputs; ++j) outs[k++] = syms[i]->outputs[j];
  }
  int rc = mxc__symbol_new(outs, total, out);
  mxc__free(outs);
  return rc;
}

int mxc__symbol_output(const mxc__symbol *s, int index, mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(index < 0 || index >= s->n_outputs,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_output: index %d is out of range; the "
                      "symbol has %d outputs",
                      index, s->n_outputs);
  return mxc__symbol_new(&s->outputs[index], 1, out);
}

int mxc__symbol_internals(const mxc__symbol *s, mxc__symbol **out) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(s->outputs, s->n_outputs, &g));
  int total = 0;
  for (int i = 0; i < g->n_nodes; ++i) {
    total += g->nodes[i]->op ? visible_outputs(g->nodes[i]) : 1;
  }
  mxc__entry *outs = mxc__calloc((size_t)total, sizeof *outs);
  int rc = outs ? MXC_OK
                : mxc__error_set(MXC_ERR_OOM, "out of memory listing "
                                              "internals");
  int k = 0;
  for (int i = 0; rc == MXC_OK && i < g->n_nodes; ++i) {
    mxc__node *n = g->nodes[i];
    int m = n->op ? visible_outputs(n) : 1;
    for (int j = 0; j < m; ++j) {
      outs[k].node = n;
      outs[k++].index = j;
    }
  }
  if (rc == MXC_OK) rc = mxc__symbol_new(outs, total, out);
  mxc__free(outs);
  mxc__graph_free(g);
  return rc;
}
