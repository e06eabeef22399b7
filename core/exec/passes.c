/* Inference graph passes (see passes.h).
 *
 * One walk over the indexed forward graph in topological order builds the
 * rewritten DAG: map[e] is the entry of the new DAG that computes old
 * entry e (one reference each). Each operator node either disappears
 * (its outputs mapped onto other entries) or gets a node in the new DAG:
 * itself when its inputs are unchanged, a copy reading the new inputs, or
 * a fused node replacing it and the node it reads.
 *
 * Consumer counts: a bypassed identity node hands its readers to its
 * input, so the counts live on representatives: rep[e] is the old entry
 * whose value e carries and uses[rep] the number of readers (heads
 * included) that value has in the new DAG. A value may be fused into its
 * reader only when uses[rep] == 1.
 *
 * Operator parameters are read from the nodes' parameter strings, with
 * the operator's own defaults (mxc__param_def), and parsed by
 * mxc__param_parse, so they mean exactly what the operator reads: this
 * layer does not see the operator families' parameter structs. */
#include "core/exec/passes.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/strbuf.h"
#include "core/fuse/fuse.h"
#include "core/op/param.h"

typedef struct known_ops {
  const mxc__op *conv, *fc, *fconv, *ffc, *bn, *act, *dropout, *copy, *block,
      *add, *badd, *relu, *sigmoid, *tanh;
} known_ops;

typedef struct pass_state {
  const mxc__graph *g;
  const mxc__shape *shapes;
  const int *dtypes;
  known_ops op;
  mxc__entry *map; /* per old entry */
  int *rep;        /* per old entry */
  int *uses;       /* per old entry (meaningful on representatives) */
  uint8_t *head;   /* per old entry: a head of gf */
  mxc__infer_passes *out;
} pass_state;

static int oom(void) {
  return mxc__error_set(MXC_ERR_OOM, "inference passes: out of memory");
}

static void find_ops(known_ops *k) {
  k->conv = mxc__op_find("Convolution");
  k->fc = mxc__op_find("FullyConnected");
  k->fconv = mxc__op_find("_FusedConvolution");
  k->ffc = mxc__op_find("_FusedFullyConnected");
  k->bn = mxc__op_find("BatchNorm");
  k->act = mxc__op_find("Activation");
  k->dropout = mxc__op_find("Dropout");
  k->copy = mxc__op_find("_copy");
  k->block = mxc__op_find("BlockGrad");
  k->add = mxc__op_find("elemwise_add");
  k->badd = mxc__op_find("broadcast_add");
  k->relu = mxc__op_find("relu");
  k->sigmoid = mxc__op_find("sigmoid");
  k->tanh = mxc__op_find("tanh");
}

/* ---- parameters ---- */

/* Parameter key of node n as a string: the node's own, else the
 * operator's default; NULL when neither exists. */
static const char *param_str(const mxc__node *n, const char *key) {
  for (int i = 0; i < n->n_attrs; ++i) {
    if (strcmp(n->keys[i], key) == 0) return n->vals[i];
  }
  for (int i = 0; n->op->params && i < n->op->n_params; ++i) {
    if (strcmp(n->op->params[i].name, key) == 0) return n->op->params[i].def;
  }
  return NULL;
}

/* Parses parameter key of n as type ty into out (int64_t, double or int
 * as mxc__param_parse stores them). 0 when absent or malformed: the pass
 * then leaves the node alone (binding reports real errors later). */
static int param_get(const mxc__node *n, const char *key, mxc__param_type ty,
                     void *out) {
  const char *v = param_str(n, key);
  if (!v) return 0;
  mxc__param_def d = {key, ty, 0, NULL, "", 1, 0, NULL};
  if (mxc__param_parse(n->op->name, &d, 1, &key, &v, 1, out) != MXC_OK) {
    mxc__error_clear();
    return 0;
  }
  return 1;
}

static int param_is(const mxc__node *n, const char *key, const char *want) {
  const char *v = param_str(n, key);
  return v && strcmp(v, want) == 0;
}

static int param_bool(const mxc__node *n, const char *key, int *out) {
  return param_get(n, key, MXC__P_BOOL, out);
}

/* ---- graph helpers ---- */

static int n_outputs(const pass_state *s, int nid) {
  return s->g->entry_ptr[nid + 1] - s->g->entry_ptr[nid];
}

static int in_entry(const pass_state *s, int nid, int k) {
  return s->g->in_entries[s->g->in_ptr[nid] + k];
}

/* The new DAG reads old entry e from the node reading it only. */
static int exclusive(const pass_state *s, int e) {
  int r = s->rep[e];
  return s->uses[r] == 1 && !s->head[r];
}

static int float_entry(const pass_state *s, int e) {
  return s->dtypes[e] == MXC_DTYPE_FLOAT32 || s->dtypes[e] == MXC_DTYPE_FLOAT64;
}

/* Outputs of nid other than output 0 that someone reads. */
static int extra_outputs_used(const pass_state *s, int nid) {
  for (int j = 1; j < n_outputs(s, nid); ++j) {
    if (s->g->n_consumers[s->g->entry_ptr[nid] + j] > 0) return 1;
  }
  return 0;
}

/* ---- new nodes ---- */

/* Parameter strings of a node being made: a copy of another node's with
 * some keys set. Values are borrowed (from nodes or literals). */
typedef struct kv_list {
  int n;
  const char **keys, **vals;
} kv_list;

static int kv_from(const mxc__node *n, kv_list *kv) {
  kv->n = n->n_attrs;
  kv->keys = mxc__malloc(sizeof(char *) * (size_t)(n->n_attrs + 3));
  kv->vals = mxc__malloc(sizeof(char *) * (size_t)(n->n_attrs + 3));
  if (!kv->keys || !kv->vals) return oom();
  for (int i = 0; i < n->n_attrs; ++i) {
    kv->keys[i] = n->keys[i];
    kv->vals[i] = n->vals[i];
  }
  return MXC_OK;
}

/* Sets key (at most 3 new keys per list, see kv_from). */
static void kv_set(kv_list *kv, const char *key, const char *val) {
  for (int i = 0; i < kv->n; ++i) {
    if (strcmp(kv->keys[i], key) == 0) {
      kv->vals[i] = val;
      return;
    }
  }
  kv->keys[kv->n] = key;
  kv->vals[kv->n++] = val;
}

static void kv_free(kv_list *kv) {
  mxc__free(kv->keys);
  mxc__free(kv->vals);
}

/* What a new node replaces, for debug output: the names of the nodes
 * (those `like` replaced, then `last`), under MXC__FUSE_ATTR_NODES. */
static int note_replaced(mxc__node *n, const mxc__node *like,
                         const mxc__node *last) {
  const char *prev = mxc__node_get_uattr(like, MXC__FUSE_ATTR_NODES);
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  mxc__sbuf_printf(&b, "%s,%s", prev ? prev : like->name, last->name);
  char *names = NULL;
  MXC_FORWARD_IF_ERROR(mxc__sbuf_finish(&b, "inference passes", &names));
  int rc = mxc__node_set_uattr(n, MXC__FUSE_ATTR_NODES, names);
  mxc__free(names);
  return rc;
}

/* A node of operator op_name with kv's parameters and inputs ins,
 * replacing `like` and `last` (named after last, whose value it gives). */
static int make_node(const char *op_name, const kv_list *kv,
                     const mxc__entry *ins, int n_ins, const mxc__node *like,
                     const mxc__node *last, mxc__node **out) {
  mxc__node *n = NULL;
  int rc = mxc__node_op(op_name, kv->keys, kv->vals, kv->n, ins, n_ins,
                        last->name, &n);
  if (rc == MXC_OK) rc = note_replaced(n, like, last);
  if (rc != MXC_OK) {
    mxc__node_release(n);
    return rc;
  }
  *out = n;
  return MXC_OK;
}

/* Maps every output of old node nid to the same output of n (taking
 * references) and makes each its own representative. */
static void map_outputs(pass_state *s, int nid, mxc__node *n) {
  for (int j = 0; j < n_outputs(s, nid); ++j) {
    int e = s->g->entry_ptr[nid] + j;
    s->map[e] = mxc__entry_ref(n, j);
  }
}

/* Node nid unchanged but for its inputs (those of the new DAG). */
static int remake(pass_state *s, int nid) {
  const mxc__node *n = s->g->nodes[nid];
  int same = 1;
  for (int k = 0; k < n->n_inputs; ++k) {
    same &= s->map[in_entry(s, nid, k)].node == n->inputs[k].node &&
            s->map[in_entry(s, nid, k)].index == n->inputs[k].index;
  }
  if (same) {
    map_outputs(s, nid, s->g->nodes[nid]);
    return MXC_OK;
  }
  mxc__entry *ins = mxc__malloc(sizeof *ins * (size_t)(n->n_inputs + 1));
  if (!ins) return oom();
  for (int k = 0; k < n->n_inputs; ++k) ins[k] = s->map[in_entry(s, nid, k)];
  mxc__node *c = NULL;
  int rc = mxc__node_op_parsed(n->op, n->param, (const char *const *)n->keys,
                               (const char *const *)n->vals, n->n_attrs, ins,
                               n->n_inputs, n->name, &c);
  for (int a = 0; rc == MXC_OK && a < n->n_uattrs; ++a) {
    rc = mxc__node_set_uattr(c, n->ukeys[a], n->uvals[a]);
  }
  mxc__free(ins);
  if (rc == MXC_OK) map_outputs(s, nid, c);
  mxc__node_release(c); /* map_outputs took its own references */
  return rc;
}

/* ---- 1. identity removal ---- */

static int is_identity(const pass_state *s, const mxc__node *n) {
  const known_ops *k = &s->op;
  if (n->op == k->copy || n->op == k->block) return 1;
  return n->op == k->dropout && param_is(n, "mode", "training");
}

static int try_identity(pass_state *s, int nid) {
  const mxc__node *n = s->g->nodes[nid];
  int out = s->g->entry_ptr[nid];
  if (!is_identity(s, n) || s->head[out] || extra_outputs_used(s, nid)) {
    return 0;
  }
  int in = in_entry(s, nid, 0), r = s->rep[in];
  s->map[out] = mxc__entry_ref(s->map[in].node, s->map[in].index);
  s->rep[out] = r;
  s->uses[r] += s->g->n_consumers[out] - 1;
  s->out->n_removed++;
  return 1;
}

/* ---- 2. BatchNorm folding ---- */

/* Node id in gf of the variable new-DAG entry e reads, or -1. */
static int var_id(const pass_state *s, mxc__entry e) {
  if (e.node->op) return -1;
  return mxc__graph_node_id(s->g, e.node);
}

/* The layer's channel axis in its output: 1 for a convolution, the last
 * one for FullyConnected (1 unless flatten is false). */
static int channel_axis(const pass_state *s, const mxc__node *layer, int e) {
  return layer->op == s->op.conv ? 1 : s->shapes[e].ndim - 1;
}

/* Whether BatchNorm node nid may fold into the layer producing its data;
 * fills f->src, eps and fix_gamma. */
static int foldable(const pass_state *s, int nid, mxc__bn_fold *f) {
  const mxc__node *bn = s->g->nodes[nid];
  int e0 = in_entry(s, nid, 0);
  const mxc__node *layer = s->map[e0].node;
  if (bn->op != s->op.bn || !layer->op || s->map[e0].index != 0 ||
      (layer->op != s->op.conv && layer->op != s->op.fc) || !exclusive(s, e0) ||
      extra_outputs_used(s, nid) || s->shapes[e0].ndim < 2) {
    return 0;
  }
  int64_t axis = 0;
  if (!param_get(bn, "axis", MXC__P_INT, &axis) ||
      !param_get(bn, "eps", MXC__P_FLOAT, &f->eps) ||
      !param_bool(bn, "fix_gamma", &f->fix_gamma)) {
    return 0;
  }
  if (axis < 0) axis += s->shapes[e0].ndim;
  if (axis != channel_axis(s, layer, e0)) return 0;
  int no_bias = 0;
  if (!param_bool(layer, "no_bias", &no_bias)) return 0;
  f->src[MXC__FOLD_WEIGHT] = var_id(s, layer->inputs[1]);
  f->src[MXC__FOLD_BIAS] = no_bias ? -1 : var_id(s, layer->inputs[2]);
  for (int k = 1; k <= 4; ++k) {
    f->src[MXC__FOLD_BIAS + k] = var_id(s, s->map[in_entry(s, nid, k)]);
  }
  int dt = s->dtypes[e0];
  for (int r = 0; r < MXC__FOLD_N_SRC; ++r) {
    if (r == MXC__FOLD_BIAS && no_bias) continue;
    int v = f->src[r];
    if (v < 0 || s->dtypes[s->g->entry_ptr[v]] != dt) return 0;
  }
  return float_entry(s, e0);
}

/* A variable named after the layer for a folded array. */
static int fold_var(const mxc__node *layer, const char *what,
                    mxc__node **out) {
  char name[320];
  snprintf(name, sizeof name, "%s_bnfold_%s", layer->name, what);
  return mxc__node_variable(name, out);
}

static int try_fold(pass_state *s, int nid, int *done) {
  mxc__bn_fold f;
  memset(&f, 0, sizeof f);
  *done = 0;
  if (!foldable(s, nid, &f)) return MXC_OK;
  const mxc__node *bn = s->g->nodes[nid];
  const mxc__node *layer = s->map[in_entry(s, nid, 0)].node;
  kv_list kv = {0, NULL, NULL};
  mxc__node *n = NULL;
  int rc = fold_var(layer, "weight", &f.weight);
  if (rc == MXC_OK) rc = fold_var(layer, "bias", &f.bias);
  if (rc == MXC_OK) rc = kv_from(layer, &kv);
  if (rc == MXC_OK) {
    kv_set(&kv, "no_bias", "False");
    mxc__entry ins[3] = {layer->inputs[0], {f.weight, 0}, {f.bias, 0}};
    rc = make_node(layer->op->name, &kv, ins, 3, layer, bn, &n);
  }
  kv_free(&kv);
  if (rc != MXC_OK) {
    mxc__node_release(f.weight);
    mxc__node_release(f.bias);
    return rc;
  }
  /* Output 0 only: BatchNorm's hidden mean/var have no reader (checked)
   * and the layer has no such outputs. */
  s->map[s->g->entry_ptr[nid]] = mxc__entry_ref(n, 0);
  mxc__node_release(n);
  s->out->folds[s->out->n_folds++] = f;
  s->out->n_folded++;
  *done = 1;
  return MXC_OK;
}

/* ---- 3. fusion ---- */

/* The act_type of an activation node the fused kernels compute, or NULL. */
static const char *activation_of(const pass_state *s, const mxc__node *n) {
  const known_ops *k = &s->op;
  if (n->op && n->op == k->relu) return "relu";
  if (n->op && n->op == k->sigmoid) return "sigmoid";
  if (n->op && n->op == k->tanh) return "tanh";
  if (!n->op || n->op != k->act) return NULL;
  static const char *const fusible[] = {"relu", "sigmoid", "tanh", "softrelu"};
  for (int i = 0; i < 4; ++i) {
    if (param_is(n, "act_type", fusible[i])) return fusible[i];
  }
  return NULL;
}

/* A linear node of the new DAG an activation may join: Convolution,
 * FullyConnected, or a fused one without an activation yet. */
static int linear_node(const pass_state *s, mxc__entry e) {
  const mxc__op *op = e.node->op;
  if (!op || e.index != 0) return 0;
  if (op == s->op.conv || op == s->op.fc) return 1;
  return (op == s->op.fconv || op == s->op.ffc) &&
         param_is(e.node, "act_type", "none");
}

static const char *fused_name(const pass_state *s, const mxc__op *op) {
  return op == s->op.conv || op == s->op.fconv ? "_FusedConvolution"
                                               : "_FusedFullyConnected";
}

/* Replaces old node nid (reading the layer's output) by a fused node:
 * the layer's parameters and inputs, plus key=val, plus `extra` as one
 * more input when its node is set. */
static int fuse_into(pass_state *s, int nid, mxc__node *layer,
                     const char *key, const char *val, mxc__entry extra) {
  kv_list kv = {0, NULL, NULL};
  int n_in = layer->n_inputs;
  mxc__entry *ins = mxc__malloc(sizeof *ins * (size_t)(n_in + 1));
  int rc = ins ? kv_from(layer, &kv) : oom();
  mxc__node *n = NULL;
  if (rc == MXC_OK) {
    memcpy(ins, layer->inputs, sizeof *ins * (size_t)n_in);
    if (extra.node) ins[n_in++] = extra;
    kv_set(&kv, key, val);
    rc = make_node(fused_name(s, layer->op), &kv, ins, n_in, layer,
                   s->g->nodes[nid], &n);
  }
  kv_free(&kv);
  mxc__free(ins);
  if (rc != MXC_OK) return rc;
  map_outputs(s, nid, n);
  mxc__node_release(n);
  s->out->n_fused++;
  return MXC_OK;
}

static int try_fuse_act(pass_state *s, int nid, int *done) {
  const char *act = activation_of(s, s->g->nodes[nid]);
  int e = act ? in_entry(s, nid, 0) : -1;
  *done = act && linear_node(s, s->map[e]) && exclusive(s, e) &&
          float_entry(s, e) && !extra_outputs_used(s, nid);
  if (!*done) return MXC_OK;
  mxc__entry none = {NULL, 0};
  return fuse_into(s, nid, s->map[e].node, "act_type", act, none);
}

/* A convolution output an addition may take as its sum-accumulating
 * layer: a plain Convolution, or a fused one with neither sum nor
 * activation. */
static int conv_for_sum(const pass_state *s, int e) {
  mxc__entry m = s->map[e];
  if (!linear_node(s, m) || !exclusive(s, e) || !float_entry(s, e)) return 0;
  if (m.node->op == s->op.fc || m.node->op == s->op.ffc) return 0;
  return m.node->op == s->op.conv || param_is(m.node, "with_sum", "false");
}

static int try_fuse_sum(pass_state *s, int nid, int *done) {
  const mxc__node *n = s->g->nodes[nid];
  *done = 0;
  if (!n->op || (n->op != s->op.add && n->op != s->op.badd)) return MXC_OK;
  int a = in_entry(s, nid, 0), b = in_entry(s, nid, 1);
  if (!mxc__shape_equal(&s->shapes[a], &s->shapes[b]) ||
      s->shapes[a].ndim < 0 || s->dtypes[a] != s->dtypes[b]) {
    return MXC_OK;
  }
  int side = conv_for_sum(s, a) ? a : conv_for_sum(s, b) ? b : -1;
  if (side < 0) return MXC_OK;
  *done = 1;
  return fuse_into(s, nid, s->map[side].node, "with_sum", "True",
                   s->map[side == a ? b : a]);
}

/* ---- the walk ---- */

static int visit(pass_state *s, int nid) {
  const mxc__node *n = s->g->nodes[nid];
  if (!n->op) {
    s->map[s->g->entry_ptr[nid]] = mxc__entry_ref(s->g->nodes[nid], 0);
    return MXC_OK;
  }
  if (try_identity(s, nid)) return MXC_OK;
  int done = 0;
  MXC_FORWARD_IF_ERROR(try_fold(s, nid, &done));
  if (!done) MXC_FORWARD_IF_ERROR(try_fuse_act(s, nid, &done));
  if (!done) MXC_FORWARD_IF_ERROR(try_fuse_sum(s, nid, &done));
  return done ? MXC_OK : remake(s, nid);
}

static void state_free(pass_state *s) {
  for (int e = 0; s->map && e < s->g->n_entries; ++e) {
    mxc__node_release(s->map[e].node);
  }
  mxc__free(s->map);
  mxc__free(s->rep);
  mxc__free(s->uses);
  mxc__free(s->head);
}

static int state_init(pass_state *s, const mxc__graph *g) {
  size_t n = (size_t)g->n_entries + 1;
  s->map = mxc__calloc(n, sizeof *s->map);
  s->rep = mxc__malloc(n * sizeof *s->rep);
  s->uses = mxc__malloc(n * sizeof *s->uses);
  s->head = mxc__calloc(n, 1);
  if (!s->map || !s->rep || !s->uses || !s->head) return oom();
  for (int e = 0; e < g->n_entries; ++e) {
    s->rep[e] = e;
    s->uses[e] = g->n_consumers[e];
  }
  for (int h = 0; h < g->n_heads; ++h) s->head[g->heads[h]] = 1;
  find_ops(&s->op);
  return MXC_OK;
}

void mxc__infer_passes_free(mxc__infer_passes *p) {
  for (int i = 0; p->folds && i < p->n_folds; ++i) {
    mxc__node_release(p->folds[i].weight);
    mxc__node_release(p->folds[i].bias);
    mxc__ndarray_free(p->folds[i].out_w);
    mxc__ndarray_free(p->folds[i].out_b);
  }
  mxc__free(p->folds);
  memset(p, 0, sizeof *p);
}

int mxc__infer_passes_changed(const mxc__infer_passes *p) {
  return p->n_removed + p->n_folded + p->n_fused > 0;
}

int mxc__infer_passes_run(const mxc__graph *gf, const mxc__shape *shapes,
                          const int *dtypes, mxc__entry *out_heads,
                          mxc__infer_passes *out) {
  pass_state s;
  memset(&s, 0, sizeof s);
  s.g = gf;
  s.shapes = shapes;
  s.dtypes = dtypes;
  mxc__infer_passes res;
  memset(&res, 0, sizeof res);
  s.out = &res;
  int rc = state_init(&s, gf);
  if (rc == MXC_OK) {
    res.folds = mxc__calloc((size_t)gf->n_nodes + 1, sizeof *res.folds);
    if (!res.folds) rc = oom();
  }
  for (int i = 0; rc == MXC_OK && i < gf->n_nodes; ++i) rc = visit(&s, i);
  if (rc == MXC_OK) {
    for (int h = 0; h < gf->n_heads; ++h) {
      mxc__entry m = s.map[gf->heads[h]];
      out_heads[h] = mxc__entry_ref(m.node, m.index);
    }
    *out = res;
  } else {
    mxc__infer_passes_free(&res);
  }
  state_free(&s);
  return rc;
}
