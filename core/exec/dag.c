/* The bound DAG: the symbol's outputs plus the gradient entries of the
 * arguments with a request, indexed (fused or not), with the entry ids of
 * arguments, gradients and head gradients, and the execution order.
 *
 * Binding indexes the unfused DAG first, infers storage types on it, and
 * indexes again with fusion only when every entry is dense (fused kernels
 * read dense blobs), so the heads are made once and indexed up to twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/exec/executor.h"
#include "core/fuse/fuse.h"
#include "core/graph/gradient.h"

static int oom(const char *fn) {
  return mxc__error_set(MXC_ERR_OOM, "%s: out of memory binding", fn);
}

/* Zeroed array of n elements of size sz (at least one). */
static void *zalloc(size_t n, size_t sz) { return mxc__calloc(n ? n : 1, sz); }

void mxc__exec_dag_free(const mxc__executor *ex, mxc__exec_dag *d) {
  for (int i = 0; d->heads && i < d->n_heads; ++i) {
    mxc__node_release(d->heads[i].node);
  }
  for (int j = 0; d->hg && j < ex->n_outputs; ++j) {
    mxc__node_release(d->hg[j]);
  }
  mxc__free(d->heads);
  mxc__free(d->hg);
  mxc__free(d->gpos);
  memset(d, 0, sizeof *d);
}

/* Head-gradient variables and the gradient entries of the arguments with
 * a request, appended to d->heads after the outputs. */
static int gradient_heads(mxc__executor *ex, const mxc__graph *gf,
                          mxc__exec_dag *d, const char *fn) {
  int n_out = ex->n_outputs;
  mxc__entry *hge = zalloc((size_t)n_out, sizeof *hge);
  mxc__entry *wrt = zalloc((size_t)ex->n_args, sizeof *wrt);
  mxc__entry *res = zalloc((size_t)ex->n_args, sizeof *res);
  int rc = (hge && wrt && res) ? MXC_OK : oom(fn);
  for (int j = 0; rc == MXC_OK && j < n_out; ++j) {
    char name[64];
    snprintf(name, sizeof name, "_head_grad%d", j);
    rc = mxc__node_variable(name, &d->hg[j]);
    if (rc == MXC_OK) hge[j] = (mxc__entry){d->hg[j], 0};
  }
  int n_wrt = 0;
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL) continue;
    wrt[n_wrt++] = (mxc__entry){gf->nodes[gf->args[i]], 0};
  }
  if (rc == MXC_OK) {
    rc = mxc__gradient_build(ex->sym->outputs, hge, n_out, wrt, n_wrt, res);
  }
  int w = 0;
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL) continue;
    if (res[w].node) {
      d->gpos[i] = d->n_heads;
      d->heads[d->n_heads++] = res[w]; /* the reference moves */
    }
    ++w;
  }
  mxc__free(hge);
  mxc__free(wrt);
  mxc__free(res);
  return rc;
}

int mxc__exec_dag_make(mxc__executor *ex, const mxc__graph *gf,
                       mxc__exec_dag *d, const char *fn) {
  int n_out = ex->n_outputs, need_grad = 0;
  for (int i = 0; i < ex->n_args; ++i) need_grad |= ex->grad_req[i] != 0;
  memset(d, 0, sizeof *d);
  d->heads = zalloc((size_t)(n_out + ex->n_args), sizeof *d->heads);
  d->hg = zalloc((size_t)n_out, sizeof *d->hg);
  d->gpos = zalloc((size_t)ex->n_args, sizeof *d->gpos);
  if (!d->heads || !d->hg || !d->gpos) return oom(fn);
  for (int i = 0; i < ex->n_args; ++i) d->gpos[i] = -1;
  for (int j = 0; j < n_out; ++j) {
    d->heads[j] =
        mxc__entry_ref(ex->sym->outputs[j].node, ex->sym->outputs[j].index);
  }
  d->n_heads = n_out;
  return need_grad ? gradient_heads(ex, gf, d, fn) : MXC_OK;
}

/* Entry ids of the arguments and auxiliary states in the full graph
 * (fusion keeps variables, so each is there; the inference passes may
 * leave some out, which then get -1). */
static int map_vars(mxc__executor *ex, const mxc__graph *gf, const char *fn) {
  for (int i = 0; i < ex->n_args + ex->n_aux; ++i) {
    int is_arg = i < ex->n_args;
    int nid = is_arg ? gf->args[i] : gf->aux[i - ex->n_args];
    int e = mxc__graph_entry_id(ex->g, (mxc__entry){gf->nodes[nid], 0});
    MXC_RETURN_ERROR_IF(e < 0 && !mxc__infer_passes_changed(&ex->passes),
                        MXC_ERR_INTERNAL,
                        "%s: variable '%s' is missing from the bound graph", fn,
                        gf->nodes[nid]->name);
    if (is_arg) {
      ex->arg_entry[i] = e;
    } else {
      ex->aux_entry[i - ex->n_args] = e;
    }
  }
  return MXC_OK;
}

/* Forward nodes (what the outputs depend on) in topological order, then
 * the backward nodes. *fwd_mask (caller frees) marks forward node ids. */
static int make_order(mxc__executor *ex, uint8_t **fwd_mask, const char *fn) {
  const mxc__graph *g = ex->g;
  uint8_t *fwd = zalloc((size_t)g->n_nodes, 1);
  ex->order = zalloc((size_t)g->n_nodes, sizeof(int));
  if (!fwd || !ex->order) {
    mxc__free(fwd);
    return oom(fn);
  }
  for (int j = 0; j < ex->n_outputs; ++j) {
    fwd[mxc__graph_entry_node(g, g->heads[j])] = 1;
  }
  for (int nid = g->n_nodes - 1; nid >= 0; --nid) {
    if (!fwd[nid]) continue;
    for (int k = g->in_ptr[nid]; k < g->in_ptr[nid + 1]; ++k) {
      fwd[mxc__graph_entry_node(g, g->in_entries[k])] = 1;
    }
  }
  int k = 0;
  for (int pass = 1; pass >= 0; --pass) {
    for (int nid = 0; nid < g->n_nodes; ++nid) {
      if (g->nodes[nid]->op && fwd[nid] == pass) ex->order[k++] = nid;
    }
    if (pass) ex->n_fwd = k;
  }
  ex->n_bwd = k - ex->n_fwd;
  *fwd_mask = fwd;
  return MXC_OK;
}

/* Releases the n entries' references and zeroes them. */
static void release_entries(mxc__entry *e, int n) {
  for (int i = 0; e && i < n; ++i) mxc__node_release(e[i].node);
  if (e) memset(e, 0, sizeof *e * (size_t)n);
}

/* Whether BatchNorm-relu fusion runs: on CPU executors (its fused
 * operator has CPU kernels only; a CPU bind of a GPU executor's graph,
 * MXC__BIND_GRAPH_OF_GPU, has none), unless MXC_FUSE_BN_RELU=0 in the
 * environment (for comparisons, as MXC_CHANNELS_LAST=0). */
static int bn_relu_wanted(const mxc__executor *ex) {
  const char *e = getenv("MXC_FUSE_BN_RELU");
  return mxc__exec_graph_dev_type(ex) == MXC_DEVICE_CPU &&
         !(e && strcmp(e, "0") == 0);
}

/* BatchNorm-relu fusion where wanted, element-wise fusion, then ex->g
 * from the result. */
static int fuse_and_build(mxc__executor *ex, const mxc__exec_dag *d,
                          const char *fn) {
  int n = d->n_heads, n_bnr = 0;
  mxc__entry *bnr = zalloc((size_t)n, sizeof *bnr);
  mxc__entry *fused = zalloc((size_t)n, sizeof *fused);
  int rc = bnr && fused ? MXC_OK : oom(fn);
  int cpu = bn_relu_wanted(ex);
  if (rc == MXC_OK && cpu) rc = mxc__fuse_bn_relu(d->heads, n, bnr, &n_bnr);
  if (rc == MXC_OK) {
    rc = mxc__fuse_graph_for(cpu ? bnr : d->heads, n,
                             mxc__exec_graph_dev_type(ex), fused,
                             &ex->n_fused);
  }
  if (rc == MXC_OK) {
    ex->n_fused += n_bnr;
    rc = mxc__graph_build(fused, n, &ex->g);
    release_entries(fused, n);
  }
  release_entries(bnr, n);
  mxc__free(fused);
  mxc__free(bnr);
  return rc;
}

int mxc__exec_index(mxc__executor *ex, const mxc__graph *gf,
                    const mxc__exec_dag *d, int fuse, uint8_t **fwd,
                    const char *fn) {
  mxc__graph_free(ex->g);
  mxc__free(ex->order);
  ex->g = NULL;
  ex->order = NULL;
  ex->n_fused = 0;
  int rc;
  if (fuse) {
    rc = fuse_and_build(ex, d, fn);
  } else {
    rc = mxc__graph_build(d->heads, d->n_heads, &ex->g);
  }
  if (rc != MXC_OK) return rc;
  for (int i = 0; i < ex->n_args; ++i) {
    ex->grad_entry[i] = d->gpos[i] >= 0 ? ex->g->heads[d->gpos[i]] : -1;
  }
  for (int j = 0; j < ex->n_outputs; ++j) {
    ex->hgrad_entry[j] =
        d->hg[j] ? mxc__graph_entry_id(ex->g, (mxc__entry){d->hg[j], 0}) : -1;
  }
  MXC_FORWARD_IF_ERROR(map_vars(ex, gf, fn));
  MXC_FORWARD_IF_ERROR(make_order(ex, fwd, fn));
  mxc__exec_mark_direct(ex, *fwd);
  return MXC_OK;
}
