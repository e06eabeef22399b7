/* Symbols as Apache MXNet 1.x (NNVM) JSON:
 *
 *   {"nodes": [{"op": "null", "name": "data", "inputs": []},
 *              {"op": "FullyConnected", "name": "fc1",
 *               "attrs": {"num_hidden": "128"},
 *               "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}],
 *    "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4],
 *    "heads": [[3, 0, 0]], "attrs": {"mxnet_version": ["int", 10900]}}
 *
 * Nodes are written in the indexed graph's order (depth-first post-order,
 * as MXNet), so node and entry numbers line up with MXNet's files:
 * node_row_ptr counts every output, hidden ones included (BatchNorm: 3).
 * An operator node's "attrs" holds its parameter strings and user
 * attributes together, keys sorted (as MXNet's std::map); loading splits
 * them again: keys in the operator's parameter table are parameters, all
 * others (dunder keys such as "__lr_mult__", and parameters this build
 * does not know, such as "cudnn_tune") are kept as user attributes and
 * written back. 0.x files ("param" / "attr", two-number inputs,
 * backward_source_id) load too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/file.h"
#include "core/graph/graph.h"
#include "core/graph/json_parse.h"
#include "core/base/strbuf.h"
#include "core/graph/symbol.h"

#define FN_TO "mxc_symbol_to_json"
#define FN_FROM "mxc_symbol_from_json"
#define MXNET_VERSION 10900

/* ---- writing ---- */

static void put_str(mxc__sbuf *b, const char *s) {
  mxc__sbuf_add(b, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
    if (*c == '"' || *c == '\\') {
      char esc[2] = {'\\', (char)*c};
      mxc__sbuf_addn(b, esc, 2);
    } else if (*c < 0x20) {
      mxc__sbuf_printf(b, "\\u%04x", *c);
    } else {
      mxc__sbuf_addn(b, (const char *)c, 1);
    }
  }
  mxc__sbuf_add(b, "\"");
}

typedef struct kv {
  const char *k, *v;
} kv;

static int kv_cmp(const void *a, const void *b) {
  return strcmp(((const kv *)a)->k, ((const kv *)b)->k);
}

/* "attrs": parameter strings and user attributes, sorted by key; scratch
 * holds at least n_attrs + n_uattrs pairs. */
static void put_attrs(mxc__sbuf *b, const mxc__node *n, kv *scratch) {
  int m = 0;
  for (int i = 0; i < n->n_attrs; ++i) {
    scratch[m].k = n->keys[i];
    scratch[m++].v = n->vals[i];
  }
  for (int i = 0; i < n->n_uattrs; ++i) {
    scratch[m].k = n->ukeys[i];
    scratch[m++].v = n->uvals[i];
  }
  if (m == 0) return;
  qsort(scratch, (size_t)m, sizeof *scratch, kv_cmp);
  mxc__sbuf_add(b, "      \"attrs\": {\n");
  for (int i = 0; i < m; ++i) {
    mxc__sbuf_add(b, "        ");
    put_str(b, scratch[i].k);
    mxc__sbuf_add(b, ": ");
    put_str(b, scratch[i].v);
    mxc__sbuf_add(b, i + 1 < m ? ",\n" : "\n");
  }
  mxc__sbuf_add(b, "      },\n");
}

static void put_node(mxc__sbuf *b, const mxc__graph *g, int i, kv *scratch) {
  const mxc__node *n = g->nodes[i];
  mxc__sbuf_add(b, "    {\n      \"op\": ");
  put_str(b, n->op ? n->op->name : "null");
  mxc__sbuf_add(b, ",\n      \"name\": ");
  put_str(b, n->name);
  mxc__sbuf_add(b, ",\n");
  put_attrs(b, n, scratch);
  mxc__sbuf_add(b, "      \"inputs\": [");
  for (int k = 0; k < n->n_inputs; ++k) {
    int e = g->in_entries[g->in_ptr[i] + k];
    int src = mxc__graph_entry_node(g, e);
    mxc__sbuf_printf(b, "%s[%d, %d, 0]", k ? ", " : "", src,
                     e - g->entry_ptr[src]);
  }
  mxc__sbuf_add(b, "]\n    }");
}

static void put_graph(mxc__sbuf *b, const mxc__graph *g, kv *scratch) {
  mxc__sbuf_add(b, "{\n  \"nodes\": [\n");
  for (int i = 0; i < g->n_nodes; ++i) {
    put_node(b, g, i, scratch);
    mxc__sbuf_add(b, i + 1 < g->n_nodes ? ",\n" : "\n");
  }
  mxc__sbuf_add(b, "  ],\n  \"arg_nodes\": [");
  int first = 1;
  for (int i = 0; i < g->n_nodes; ++i) {
    if (g->nodes[i]->op) continue;
    mxc__sbuf_printf(b, "%s%d", first ? "" : ", ", i);
    first = 0;
  }
  mxc__sbuf_add(b, "],\n  \"node_row_ptr\": [");
  for (int i = 0; i <= g->n_nodes; ++i) {
    mxc__sbuf_printf(b, "%s%d", i ? ", " : "", g->entry_ptr[i]);
  }
  mxc__sbuf_add(b, "],\n  \"heads\": [");
  for (int h = 0; h < g->n_heads; ++h) {
    int src = mxc__graph_entry_node(g, g->heads[h]);
    mxc__sbuf_printf(b, "%s[%d, %d, 0]", h ? ", " : "", src,
                     g->heads[h] - g->entry_ptr[src]);
  }
  mxc__sbuf_printf(b,
                   "],\n  \"attrs\": {\"mxnet_version\": [\"int\", %d]}\n}\n",
                   MXNET_VERSION);
}

int mxc__symbol_to_json(const mxc__symbol *s, char **out) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(s->outputs, s->n_outputs, &g));
  int max_kv = 1;
  for (int i = 0; i < g->n_nodes; ++i) {
    int m = g->nodes[i]->n_attrs + g->nodes[i]->n_uattrs;
    if (m > max_kv) max_kv = m;
  }
  kv *scratch = mxc__malloc(sizeof *scratch * (size_t)max_kv);
  int rc;
  if (!scratch) {
    rc = mxc__error_set(MXC_ERR_OOM, FN_TO ": out of memory");
  } else {
    mxc__sbuf b;
    mxc__sbuf_init(&b);
    put_graph(&b, g, scratch);
    rc = mxc__sbuf_finish(&b, FN_TO, out);
  }
  mxc__free(scratch);
  mxc__graph_free(g);
  return rc;
}

/* ---- reading ---- */

typedef struct loader {
  const mxc__json *j;
  mxc__node **made; /* one reference per loaded node */
  int n_made;
} loader;

/* A non-negative integral JSON number below `limit`. */
static int json_index(const mxc__jval *v, int limit, int *out) {
  if (!v || v->type != MXC__J_NUM || v->num < 0 || v->num >= limit ||
      v->num != (double)(int)v->num) {
    return 0;
  }
  *out = (int)v->num;
  return 1;
}

/* [node, output] or [node, output, version] referring to a loaded node. */
static int load_entry(loader *L, const mxc__jval *v, const char *where,
                      int at, mxc__entry *out) {
  int id = -1, idx = -1;
  const mxc__jval *a = v->type == MXC__J_ARR ? mxc__json_next(L->j, v, NULL)
                                             : NULL;
  const mxc__jval *b = a ? mxc__json_next(L->j, v, a) : NULL;
  MXC_RETURN_ERROR_IF(!a || !b || v->n > 3, MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": %s at byte %zu: expected [node, output] or "
                      "[node, output, version]",
                      where, v->pos);
  MXC_RETURN_ERROR_IF(!json_index(a, L->n_made, &id), MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": %s at byte %zu: node index must be one of "
                      "the %d nodes before %s",
                      where, a->pos, L->n_made, at >= 0 ? "this one" : "it");
  int n_out = mxc__graph_node_outputs(L->made[id]);
  MXC_RETURN_ERROR_IF(!json_index(b, n_out, &idx), MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": %s at byte %zu: node %d ('%s') has %d "
                      "outputs",
                      where, b->pos, id, L->made[id]->name, n_out);
  out->node = L->made[id];
  out->index = idx;
  return MXC_OK;
}

/* Attribute objects of a node: "attrs" (1.x), "param" and "attr" (0.x). */
static int count_attrs(const mxc__json *j, const mxc__jval *node, int *n) {
  static const char *const k_keys[] = {"attrs", "param", "attr"};
  *n = 0;
  for (int i = 0; i < 3; ++i) {
    const mxc__jval *o = mxc__json_get(j, node, k_keys[i]);
    if (!o) continue;
    MXC_RETURN_ERROR_IF(o->type != MXC__J_OBJ, MXC_ERR_INVALID_ARGUMENT,
                        FN_FROM ": \"%s\" at byte %zu is not an object",
                        k_keys[i], o->pos);
    for (const mxc__jval *c = mxc__json_next(j, o, NULL); c;
         c = mxc__json_next(j, o, c)) {
      MXC_RETURN_ERROR_IF(c->type != MXC__J_STR, MXC_ERR_INVALID_ARGUMENT,
                          FN_FROM ": attribute \"%s\" at byte %zu is not a "
                          "string",
                          c->key, c->pos);
      (*n)++;
    }
  }
  return MXC_OK;
}

/* Operators that parse their own free-form parameters (Custom) take
 * every key but the "__" graph attributes. */
static int is_param(const mxc__op *op, const char *key) {
  if (op && op->parse_params) return strncmp(key, "__", 2) != 0;
  for (int i = 0; op && i < op->n_params; ++i) {
    if (strcmp(op->params[i].name, key) == 0) return 1;
  }
  return 0;
}

/* Splits a node's attributes into parameters (pk/pv) and user attributes
 * (uk/uv); each array holds room for every attribute. */
static void split_attrs(const mxc__json *j, const mxc__jval *node,
                        const mxc__op *op, const char **pk, const char **pv,
                        int *np, const char **uk, const char **uv, int *nu) {
  static const char *const k_keys[] = {"attrs", "param", "attr"};
  *np = *nu = 0;
  for (int i = 0; i < 3; ++i) {
    const mxc__jval *o = mxc__json_get(j, node, k_keys[i]);
    for (const mxc__jval *c = o ? mxc__json_next(j, o, NULL) : NULL; c;
         c = mxc__json_next(j, o, c)) {
      if (is_param(op, c->key)) {
        pk[*np] = c->key;
        pv[(*np)++] = c->str;
      } else {
        uk[*nu] = c->key;
        uv[(*nu)++] = c->str;
      }
    }
  }
}

/* Rejects graph features mxc does not have. */
static int check_unsupported(const mxc__json *j, const mxc__jval *node,
                             int i) {
  static const char *const k_keys[] = {"control_deps", "subgraphs"};
  for (int k = 0; k < 2; ++k) {
    const mxc__jval *v = mxc__json_get(j, node, k_keys[k]);
    MXC_RETURN_ERROR_IF(v && !(v->type == MXC__J_ARR && v->n == 0),
                        MXC_ERR_UNSUPPORTED,
                        FN_FROM ": node %d has non-empty \"%s\" (byte %zu); "
                        "mxc graphs have none",
                        i, k_keys[k], v->pos);
  }
  return MXC_OK;
}

/* The inputs of node i as entries (borrowed from L->made). */
static int load_inputs(loader *L, const mxc__jval *ins, int i,
                       mxc__entry *out) {
  int k = 0;
  char where[64];
  for (const mxc__jval *c = mxc__json_next(L->j, ins, NULL); c;
       c = mxc__json_next(L->j, ins, c), ++k) {
    snprintf(where, sizeof where, "node %d input %d", i, k);
    MXC_FORWARD_IF_ERROR(load_entry(L, c, where, i, &out[k]));
  }
  return MXC_OK;
}

/* Creates node i from its JSON object, given the attributes split. */
static int make_node(loader *L, const mxc__jval *node, int i, const char *op,
                     const char *name, const char **pk, const char **pv,
                     int np, mxc__entry *ins, mxc__node **out) {
  const mxc__jval *inv = mxc__json_get(L->j, node, "inputs");
  MXC_RETURN_ERROR_IF(inv && inv->type != MXC__J_ARR,
                      MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": node %d: \"inputs\" at byte %zu is not an "
                      "array",
                      i, inv->pos);
  int n_in = inv ? inv->n : 0;
  if (strcmp(op, "null") == 0) {
    MXC_RETURN_ERROR_IF(n_in > 0, MXC_ERR_INVALID_ARGUMENT,
                        FN_FROM ": node %d ('%s') is a variable with inputs",
                        i, name);
    return mxc__node_variable(name, out);
  }
  if (n_in > 0) MXC_FORWARD_IF_ERROR(load_inputs(L, inv, i, ins));
  int rc = mxc__node_op(op, pk, pv, np, ins, n_in, name, out);
  if (rc != MXC_OK) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, FN_FROM ": node %d ('%.100s')", i, name);
    mxc__error_prefix(prefix);
  }
  return rc;
}

static int load_node(loader *L, const mxc__jval *node, int i) {
  const mxc__json *j = L->j;
  MXC_RETURN_ERROR_IF(node->type != MXC__J_OBJ, MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": node %d at byte %zu is not an object", i,
                      node->pos);
  const mxc__jval *op = mxc__json_get(j, node, "op");
  const mxc__jval *name = mxc__json_get(j, node, "name");
  MXC_RETURN_ERROR_IF(!op || op->type != MXC__J_STR || !name ||
                          name->type != MXC__J_STR,
                      MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": node %d at byte %zu needs string \"op\" and "
                      "\"name\" members",
                      i, node->pos);
  MXC_FORWARD_IF_ERROR(check_unsupported(j, node, i));
  const mxc__op *desc = NULL;
  if (strcmp(op->str, "null") != 0) {
    int rc = mxc__op_lookup(op->str, &desc);
    if (rc != MXC_OK) {
      char prefix[160];
      snprintf(prefix, sizeof prefix, FN_FROM ": node %d ('%.100s')", i,
               name->str);
      mxc__error_prefix(prefix);
      return rc;
    }
  }
  int n_attrs;
  MXC_FORWARD_IF_ERROR(count_attrs(j, node, &n_attrs));
  const mxc__jval *inv = mxc__json_get(j, node, "inputs");
  int n_in = inv && inv->type == MXC__J_ARR ? inv->n : 0;
  /* One block: 4 string arrays for attributes, then the input entries. */
  size_t strs = sizeof(char *) * 4 * (size_t)n_attrs;
  char *block = mxc__malloc(strs + sizeof(mxc__entry) * (size_t)n_in + 1);
  MXC_RETURN_ERROR_IF(!block, MXC_ERR_OOM, FN_FROM ": out of memory");
  const char **pk = (const char **)(void *)block, **pv = pk + n_attrs;
  const char **uk = pv + n_attrs, **uv = uk + n_attrs;
  mxc__entry *ins = (mxc__entry *)(void *)(block + strs);
  int np, nu;
  split_attrs(j, node, desc, pk, pv, &np, uk, uv, &nu);
  mxc__node *n = NULL;
  int rc = make_node(L, node, i, op->str, name->str, pk, pv, np, ins, &n);
  for (int k = 0; rc == MXC_OK && k < nu; ++k) {
    rc = mxc__node_set_uattr(n, uk[k], uv[k]);
  }
  mxc__free(block);
  if (rc != MXC_OK) {
    mxc__node_release(n);
    return rc;
  }
  L->made[L->n_made++] = n;
  return MXC_OK;
}

static int load_heads(loader *L, const mxc__jval *heads, mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(!heads || heads->type != MXC__J_ARR || heads->n < 1,
                      MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": \"heads\" must be a non-empty array of "
                      "[node, output, version] entries");
  mxc__entry *e = mxc__calloc((size_t)heads->n, sizeof *e);
  MXC_RETURN_ERROR_IF(!e, MXC_ERR_OOM, FN_FROM ": out of memory");
  int k = 0, rc = MXC_OK;
  char where[32];
  for (const mxc__jval *c = mxc__json_next(L->j, heads, NULL);
       c && rc == MXC_OK; c = mxc__json_next(L->j, heads, c), ++k) {
    snprintf(where, sizeof where, "head %d", k);
    rc = load_entry(L, c, where, -1, &e[k]);
  }
  if (rc == MXC_OK) rc = mxc__symbol_new(e, heads->n, out);
  mxc__free(e);
  return rc;
}

static int load_graph(const mxc__json *j, mxc__symbol **out) {
  const mxc__jval *root = &j->v[0];
  const mxc__jval *nodes = mxc__json_get(j, root, "nodes");
  MXC_RETURN_ERROR_IF(!nodes || nodes->type != MXC__J_ARR,
                      MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": expected an object with a \"nodes\" array "
                      "(MXNet symbol JSON)");
  loader L = {j, NULL, 0};
  L.made = mxc__calloc((size_t)(nodes->n > 0 ? nodes->n : 1), sizeof *L.made);
  MXC_RETURN_ERROR_IF(!L.made, MXC_ERR_OOM, FN_FROM ": out of memory");
  int rc = MXC_OK, i = 0;
  for (const mxc__jval *c = mxc__json_next(j, nodes, NULL); c && rc == MXC_OK;
       c = mxc__json_next(j, nodes, c), ++i) {
    rc = load_node(&L, c, i);
  }
  if (rc == MXC_OK) rc = load_heads(&L, mxc__json_get(j, root, "heads"), out);
  for (int k = 0; k < L.n_made; ++k) mxc__node_release(L.made[k]);
  mxc__free(L.made);
  return rc;
}

int mxc__symbol_from_json(const char *json, mxc__symbol **out) {
  mxc__json j;
  MXC_FORWARD_IF_ERROR(mxc__json_parse(FN_FROM, json, &j));
  int rc = load_graph(&j, out);
  mxc__json_free(&j);
  return rc;
}

/* ---- files ---- */

int mxc__symbol_save(const mxc__symbol *s, const char *path) {
  char *text = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_to_json(s, &text));
  int rc = mxc__file_replace_text(path, text);
  mxc__free(text);
  return rc;
}

/* Reads a whole file into a new NUL-terminated buffer. */
static int read_all(const char *path, char **out) {
  mxc__file *f = NULL;
  MXC_FORWARD_IF_ERROR(mxc__file_open_read(path, &f));
  uint64_t size = 0;
  int rc = mxc__file_size(f, &size);
  char *buf = NULL;
  if (rc == MXC_OK) {
    buf = size < (uint64_t)1 << 40 ? mxc__malloc((size_t)size + 1) : NULL;
    if (!buf) {
      rc = mxc__error_set(MXC_ERR_OOM,
                          "mxc_symbol_load '%s': out of memory for %llu "
                          "bytes",
                          path, (unsigned long long)size);
    }
  }
  size_t got = 0;
  if (rc == MXC_OK) rc = mxc__file_read(f, buf, (size_t)size, &got);
  if (rc == MXC_OK && got != size) {
    rc = mxc__error_set(MXC_ERR_IO,
                        "mxc_symbol_load '%s': read %zu of %llu bytes", path,
                        got, (unsigned long long)size);
  }
  mxc__file_close(f);
  if (rc == MXC_OK && memchr(buf, '\0', got)) {
    rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "mxc_symbol_load '%s': the file contains a NUL byte; "
                        "expected JSON text",
                        path);
  }
  if (rc != MXC_OK) {
    mxc__free(buf);
    return rc;
  }
  buf[got] = '\0';
  *out = buf;
  return MXC_OK;
}

int mxc__symbol_load(const char *path, mxc__symbol **out) {
  char *text = NULL;
  MXC_FORWARD_IF_ERROR(read_all(path, &text));
  int rc = mxc__symbol_from_json(text, out);
  if (rc != MXC_OK) {
    char prefix[MXC__ERROR_MAX / 2];
    snprintf(prefix, sizeof prefix, "mxc_symbol_load '%s'", path);
    mxc__error_prefix(prefix);
  }
  mxc__free(text);
  return rc;
}
