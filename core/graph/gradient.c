#include "core/graph/gradient.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/graph.h"

/* Gradient contributions per forward entry, as singly linked lists in one
 * growable pool. Every pooled entry owns one node reference, released when
 * the pass ends: the backward nodes built from them hold their own. */
typedef struct pass {
  const mxc__graph *g;
  int *first;      /* per forward entry: pool index of first contribution */
  int *next;       /* per pool slot */
  mxc__entry *val; /* per pool slot */
  int n, cap;
} pass;

static int pool_push(pass *p, mxc__entry e, int list) {
  if (p->n == p->cap) {
    int cap = p->cap ? 2 * p->cap : 64;
    int *nx = mxc__realloc(p->next, sizeof *nx * (size_t)cap);
    if (nx) p->next = nx;
    mxc__entry *v = nx ? mxc__realloc(p->val, sizeof *v * (size_t)cap) : NULL;
    if (v) p->val = v;
    if (!v) {
      mxc__node_release(e.node);
      return mxc__error_set(MXC_ERR_OOM, "out of memory building gradients");
    }
    p->cap = cap;
  }
  p->val[p->n] = e;
  p->next[p->n] = list < 0 ? -1 : p->first[list];
  if (list >= 0) p->first[list] = p->n;
  p->n++;
  return MXC_OK;
}

/* Adds contribution e (owned reference) to forward entry id. */
static int contribute(pass *p, int id, mxc__entry e) {
  return pool_push(p, e, id);
}

/* Keeps a reference alive until the pass ends (not on any list). */
static int keep(pass *p, mxc__entry e) { return pool_push(p, e, -1); }

/* *out = (new reference) the sum of entry id's contributions, or {NULL, 0}
 * when it has none. */
static int sum_contributions(pass *p, int id, const char *name,
                             mxc__entry *out) {
  int n = 0;
  for (int s = p->first[id]; s >= 0; s = p->next[s]) ++n;
  if (n == 0) {
    out->node = NULL;
    out->index = 0;
    return MXC_OK;
  }
  if (n == 1) {
    mxc__entry e = p->val[p->first[id]];
    *out = mxc__entry_ref(e.node, e.index);
    return MXC_OK;
  }
  mxc__entry *ins = mxc__malloc(sizeof *ins * (size_t)n);
  MXC_RETURN_ERROR_IF(!ins, MXC_ERR_OOM, "out of memory building gradients");
  int k = 0;
  for (int s = p->first[id]; s >= 0; s = p->next[s]) ins[k++] = p->val[s];
  char num[16], nm[256];
  snprintf(num, sizeof num, "%d", n);
  snprintf(nm, sizeof nm, "%s_grad_sum", name);
  const char *key = "num_args", *val = num;
  mxc__node *sum = NULL;
  int rc = n == 2 ? mxc__node_op("elemwise_add", NULL, NULL, 0, ins, 2, nm,
                                 &sum)
                  : mxc__node_op("add_n", &key, &val, 1, ins, n, nm, &sum);
  mxc__free(ins);
  MXC_FORWARD_IF_ERROR(rc);
  out->node = sum;
  out->index = 0;
  return MXC_OK;
}

static int node_has_ograd(const pass *p, int nid) {
  const mxc__graph *g = p->g;
  for (int e = g->entry_ptr[nid]; e < g->entry_ptr[nid + 1]; ++e) {
    if (p->first[e] >= 0) return 1;
  }
  return 0;
}

/* Output gradients of node nid for its visible outputs: sums of
 * contributions, zeros_like for outputs that got none. Each entry of
 * ograd is kept alive by the pool. */
static int gather_ograds(pass *p, int nid, mxc__entry *ograd, int n_vis) {
  const mxc__graph *g = p->g;
  mxc__node *n = g->nodes[nid];
  for (int j = 0; j < n_vis; ++j) {
    mxc__entry e;
    MXC_FORWARD_IF_ERROR(
        sum_contributions(p, g->entry_ptr[nid] + j, n->name, &e));
    if (!e.node) {
      char nm[256];
      snprintf(nm, sizeof nm, "%s_zero_grad%d", n->name, j);
      mxc__entry src = {n, j};
      mxc__node *z = NULL;
      MXC_FORWARD_IF_ERROR(
          mxc__node_op("zeros_like", NULL, NULL, 0, &src, 1, nm, &z));
      e.node = z;
      e.index = 0;
    }
    MXC_FORWARD_IF_ERROR(keep(p, e));
    ograd[j] = e;
  }
  return MXC_OK;
}

/* Runs node nid's gradient function and distributes the input gradients. */
static int backprop_node(pass *p, int nid) {
  const mxc__graph *g = p->g;
  mxc__node *n = g->nodes[nid];
  if (!n->op || !n->op->gradient || !node_has_ograd(p, nid)) return MXC_OK;
  int n_vis = mxc__op_num_grad_outputs(n->op, n->param);
  mxc__entry *ograd = mxc__calloc((size_t)n_vis + 1, sizeof *ograd);
  mxc__entry *igrad = mxc__calloc((size_t)n->n_inputs + 1, sizeof *igrad);
  int rc = (ograd && igrad)
               ? MXC_OK
               : mxc__error_set(MXC_ERR_OOM, "out of memory building gradients");
  if (rc == MXC_OK) rc = gather_ograds(p, nid, ograd, n_vis);
  if (rc == MXC_OK) rc = n->op->gradient(n, ograd, igrad);
  int first_aux = n->n_inputs - n->op->n_aux;
  for (int k = 0; igrad && k < n->n_inputs; ++k) {
    if (!igrad[k].node) continue;
    if (rc != MXC_OK || k >= first_aux) {
      mxc__node_release(igrad[k].node);
      continue;
    }
    rc = contribute(p, g->in_entries[g->in_ptr[nid] + k], igrad[k]);
  }
  mxc__free(ograd);
  mxc__free(igrad);
  return rc;
}

static int run_pass(pass *p, const mxc__entry *heads,
                    const mxc__entry *head_grads, int n_heads,
                    const mxc__entry *wrt, int n_wrt, mxc__entry *res) {
  const mxc__graph *g = p->g;
  p->first = mxc__malloc(sizeof(int) * (size_t)(g->n_entries + 1));
  MXC_RETURN_ERROR_IF(!p->first, MXC_ERR_OOM,
                      "out of memory building gradients");
  for (int e = 0; e < g->n_entries; ++e) p->first[e] = -1;
  for (int i = 0; i < n_heads; ++i) {
    MXC_FORWARD_IF_ERROR(contribute(
        p, g->heads[i], mxc__entry_ref(head_grads[i].node, head_grads[i].index)));
  }
  for (int nid = g->n_nodes - 1; nid >= 0; --nid) {
    MXC_FORWARD_IF_ERROR(backprop_node(p, nid));
  }
  for (int i = 0; i < n_wrt; ++i) {
    int id = mxc__graph_entry_id(g, wrt[i]);
    if (id < 0) continue; /* not reachable from the heads: no gradient */
    MXC_FORWARD_IF_ERROR(sum_contributions(p, id, wrt[i].node->name, &res[i]));
  }
  return MXC_OK;
}

int mxc__gradient_build(const mxc__entry *heads,
                        const mxc__entry *head_grads, int n_heads,
                        const mxc__entry *wrt, int n_wrt, mxc__entry *out) {
  MXC_RETURN_ERROR_IF(n_heads < 1 || !heads || !head_grads,
                      MXC_ERR_INVALID_ARGUMENT,
                      "gradient: need at least one head and its gradient");
  MXC_RETURN_ERROR_IF(n_wrt < 0 || (n_wrt > 0 && (!wrt || !out)),
                      MXC_ERR_INVALID_ARGUMENT, "gradient: bad wrt list");
  for (int i = 0; i < n_heads; ++i) {
    MXC_RETURN_ERROR_IF(!head_grads[i].node, MXC_ERR_INVALID_ARGUMENT,
                        "gradient: head %d has no gradient entry", i);
  }
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(heads, n_heads, &g));
  pass p;
  memset(&p, 0, sizeof p);
  p.g = g;
  mxc__entry *res = mxc__calloc((size_t)n_wrt + 1, sizeof *res);
  int rc = res ? MXC_OK
               : mxc__error_set(MXC_ERR_OOM, "out of memory building gradients");
  if (rc == MXC_OK) rc = run_pass(&p, heads, head_grads, n_heads, wrt, n_wrt, res);
  for (int i = 0; i < p.n; ++i) mxc__node_release(p.val[i].node);
  if (rc == MXC_OK) {
    memcpy(out, res, sizeof *res * (size_t)n_wrt);
  } else if (res) {
    for (int i = 0; i < n_wrt; ++i) mxc__node_release(res[i].node);
  }
  mxc__free(res);
  mxc__free(p.first);
  mxc__free(p.next);
  mxc__free(p.val);
  mxc__graph_free(g);
  return rc;
}
