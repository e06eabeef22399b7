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
 * backward_source_id) load too, upgraded as MXNet upgrades them
 * (json_legacy.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/file.h"
#include "core/graph/graph.h"
#include "core/graph/json_legacy.h"
#include "core/graph/json_parse.h"
#include "core/base/strbuf.h"
#include "core/graph/symbol.h"

#define FN_TO "mxc_symbol_to_json"
#define FN_FROM "mxc_symbol_from_json"

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
                   MXC__MXNET_VERSION);
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
  int version; /* the file's mxnet_version */
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
static void split_attrs(const loader *L, const mxc__jval *node,
                        const mxc__op *op, const char **pk, const char **pv,
                        int *np, const char **uk, const char **uv, int *nu) {
  static const char *const k_keys[] = {"attrs", "param", "attr"};
  const mxc__json *j = L->j;
  *np = *nu = 0;
  for (int i = 0; i < 3; ++i) {
    const mxc__jval *o = mxc__json_get(j, node, k_keys[i]);
    for (const mxc__jval *c = o ? mxc__json_next(j, o, NULL) : NULL; c;
         c = mxc__json_next(j, o, c)) {
      if (op && mxc__legacy_drops_param(op->name, c->key, c->str,
                                        L->version)) {
        continue;
      }
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

/* A node's attributes split into parameters and user attributes. */
typedef struct split {
  const char **pk, **pv, **uk, **uv;
  int np, nu;
} split;

/* Inputs a file older than 0.9.0 omits (json_legacy.h): the count the
 * operator takes with these parameters when above the file's n_in. A
 * parameter error is left for mxc__node_op to report. */
static int legacy_input_count(const loader *L, const mxc__op *op,
                              const split *sp, int n_in) {
  void *param = NULL;
  if (!op || L->version >= MXC__MXNET_V0_9_0 ||
      mxc__op_parse_params(op, sp->pk, sp->pv, sp->np, &param) != MXC_OK) {
    return n_in;
  }
  int want = mxc__op_num_inputs(op, param);
  mxc__free(param);
  return want > n_in && want <= MXC__OP_MAX_ARITY ? want : n_in;
}

/* ins[n_in..n_want) as new variables (made[] holds them). */
static int legacy_fill(const mxc__op *op, const char *name, const split *sp,
                       mxc__entry *ins, int n_in, int n_want,
                       mxc__node **made) {
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__op_parse_params(op, sp->pk, sp->pv, sp->np, &param));
  int rc = mxc__legacy_missing_inputs(op, param, name, sp->uk, sp->uv,
                                      sp->nu, n_in, n_want, ins, made);
  mxc__free(param);
  return rc;
}

/* Creates node i from its JSON object, given the attributes split; ins
 * has room for n_want entries (more than the file lists when an old file
 * omits inputs), made[] for the variables created for those. */
static int make_node(loader *L, const mxc__jval *node, int i,
                     const mxc__op *desc, const char *name, const split *sp,
                     mxc__entry *ins, int n_want, mxc__node **made,
                     mxc__node **out) {
  const mxc__jval *inv = mxc__json_get(L->j, node, "inputs");
  int n_in = inv ? inv->n : 0;
  if (!desc) {
    MXC_RETURN_ERROR_IF(n_in > 0, MXC_ERR_INVALID_ARGUMENT,
                        FN_FROM ": node %d ('%s') is a variable with inputs",
                        i, name);
    return mxc__node_variable(name, out);
  }
  if (n_in > 0) MXC_FORWARD_IF_ERROR(load_inputs(L, inv, i, ins));
  int rc = MXC_OK;
  if (n_want > n_in) rc = legacy_fill(desc, name, sp, ins, n_in, n_want, made);
  if (rc == MXC_OK) {
    rc = mxc__node_op(desc->name, sp->pk, sp->pv, sp->np, ins, n_want, name,
                      out);
  }
  if (rc != MXC_OK) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, FN_FROM ": node %d ('%.100s')", i, name);
    mxc__error_prefix(prefix);
  }
  return rc;
}

/* The user attributes of a new node: as the file has them, or upgraded
 * for a file older than the version mxc writes. */
static int set_uattrs(const loader *L, mxc__node *n, const split *sp) {
  if (L->version < MXC__MXNET_VERSION) {
    return mxc__legacy_set_uattrs(n, sp->uk, sp->uv, sp->nu, L->version);
  }
  for (int k = 0; k < sp->nu; ++k) {
    MXC_FORWARD_IF_ERROR(mxc__node_set_uattr(n, sp->uk[k], sp->uv[k]));
  }
  return MXC_OK;
}

/* Checks a node object's "op", "name" and "inputs" members and finds its
 * operator (*desc NULL for a variable). */
static int node_header(const loader *L, const mxc__jval *node, int i,
                       const mxc__op **desc) {
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
  const mxc__jval *inv = mxc__json_get(j, node, "inputs");
  MXC_RETURN_ERROR_IF(inv && inv->type != MXC__J_ARR,
                      MXC_ERR_INVALID_ARGUMENT,
                      FN_FROM ": node %d: \"inputs\" at byte %zu is not an "
                      "array",
                      i, inv->pos);
  MXC_FORWARD_IF_ERROR(check_unsupported(j, node, i));
  *desc = NULL;
  if (strcmp(op->str, "null") == 0) return MXC_OK;
  int rc = mxc__op_lookup(op->str, desc);
  if (rc != MXC_OK) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, FN_FROM ": node %d ('%.100s')", i,
             name->str);
    mxc__error_prefix(prefix);
  }
  return rc;
}

/* Loads node i once its operator is known; sp's arrays have room for
 * every attribute of the node. */
static int load_node_with(loader *L, const mxc__jval *node, int i,
                          const mxc__op *desc, split *sp) {
  const char *name = mxc__json_get(L->j, node, "name")->str;
  split_attrs(L, node, desc, sp->pk, sp->pv, &sp->np, sp->uk, sp->uv,
              &sp->nu);
  for (int k = 0; L->version < MXC__MXNET_VERSION && k < sp->nu; ++k) {
    size_t plen = 0; /* "lr_mult" -> "__lr_mult__" before any copy */
    const char *up = mxc__legacy_hidden_key(sp->uk[k], &plen);
    if (up && plen == 0) sp->uk[k] = up;
  }
  const mxc__jval *inv = mxc__json_get(L->j, node, "inputs");
  int n_in = inv ? inv->n : 0;
  int n_want = legacy_input_count(L, desc, sp, n_in);
  mxc__entry *ins = mxc__calloc((size_t)n_want + 1, sizeof *ins);
  mxc__node **made = mxc__calloc((size_t)n_want + 1, sizeof *made);
  mxc__node *n = NULL;
  int rc = ins && made ? MXC_OK
                       : mxc__error_set(MXC_ERR_OOM, FN_FROM ": out of memory");
  if (rc == MXC_OK) {
    rc = make_node(L, node, i, desc, name, sp, ins, n_want, made, &n);
  }
  if (rc == MXC_OK) rc = set_uattrs(L, n, sp);
  for (int k = 0; made && k < n_want; ++k) mxc__node_release(made[k]);
  mxc__free(made);
  mxc__free(ins);
  if (rc != MXC_OK) {
    mxc__node_release(n);
    return rc;
  }
  L->made[L->n_made++] = n;
  return MXC_OK;
}

static int load_node(loader *L, const mxc__jval *node, int i) {
  const mxc__op *desc = NULL;
  MXC_FORWARD_IF_ERROR(node_header(L, node, i, &desc));
  int n_attrs;
  MXC_FORWARD_IF_ERROR(count_attrs(L->j, node, &n_attrs));
  /* 4 string arrays, each with room for every attribute. */
  const char **block = mxc__malloc(sizeof(char *) * (4 * (size_t)n_attrs + 1));
  MXC_RETURN_ERROR_IF(!block, MXC_ERR_OOM, FN_FROM ": out of memory");
  split sp = {block, block + n_attrs, block + 2 * n_attrs,
              block + 3 * n_attrs, 0, 0};
  int rc = load_node_with(L, node, i, desc, &sp);
  mxc__free(block);
  return rc;
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
  loader L = {j, NULL, 0, mxc__json_mxnet_version(j)};
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
