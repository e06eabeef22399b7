/* Channels-last values inside executors (core/op/op.h, MXC__FMT_*).
 *
 * oneDNN's fastest CPU convolutions read and write channels-last data; a
 * plain (N, C, H, W) value costs a reorder on the way in and out of every
 * convolution, which for a ResNet at batch 1 was a third of oneDNN's time.
 * So at bind, a value is kept channels-last when the kernel producing it
 * and the kernel of every node reading it say they take it so (fmt_ok).
 * Kernels are those push time will pick: the choice of mxc__op_kernel is a
 * function of the operator, parameters and types, all fixed at bind.
 *
 * Element-wise kernels take any format for all their arguments at once
 * (MXC__FMT_TIED): a tied group gets the formats every member allows.
 *
 * Only values nobody outside the executor reads qualify: never a bound
 * array, an output or a gradient the executor hands out;
 * the monitor is shown plain copies (run.c). Values whose layouts coincide
 * (one channel, or one spatial position) stay plain. MXC_CHANNELS_LAST=0
 * in the environment keeps every value plain (for comparisons).
 *
 * With MXC_BIND_BF16, on CPUs that compute bfloat16 natively (AVX512_BF16
 * or AMX), values whose kernels all take it are kept channels-last in
 * bfloat16: half the bytes, and oneDNN's bfloat16 convolutions, at the
 * price of bfloat16 rounding (8 significant bits) of those values. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/cpu.h"
#include "core/base/error.h"
#include "core/exec/executor.h"
#include "core/op/backend.h"
#include "core/op/format.h"

static int wanted(void) {
  const char *e = getenv("MXC_CHANNELS_LAST");
  return !(e && strcmp(e, "0") == 0);
}

/* The kernel push time picks for node nid (NULL: none). */
static const mxc__kernel *node_kernel(const mxc__executor *ex, int nid,
                                      int *dt) {
  const mxc__graph *g = ex->g;
  const mxc__node *n = g->nodes[nid];
  int n_in = n->n_inputs, n_out = g->entry_ptr[nid + 1] - g->entry_ptr[nid];
  for (int k = 0; k < n_in; ++k) {
    dt[k] = ex->dtypes[g->in_entries[g->in_ptr[nid] + k]];
  }
  for (int j = 0; j < n_out; ++j) {
    dt[n_in + j] = ex->dtypes[g->entry_ptr[nid] + j];
  }
  mxc__call_types t = {dt, NULL, n_in, dt + n_in, NULL, n_out, NULL};
  return mxc__op_kernel(n->op, MXC_DEVICE_CPU, n->param, &t);
}

/* Whether entry e could be channels-last at all: planned, not one the
 * executor hands out (a head, a gradient it copies into an argument's
 * array, a head gradient it fills), read by someone, float32 with 3 to 5
 * axes whose layouts differ. */
static int candidate(const mxc__executor *ex, const uint8_t *keep, int e) {
  const mxc__shape *s = &ex->shapes[e];
  if (!ex->plan || ex->plan->buf[e] < 0 || keep[e] ||
      ex->g->n_consumers[e] == 0 || ex->dtypes[e] != MXC_DTYPE_FLOAT32 ||
      s->ndim < 3 || s->ndim > 5) {
    return 0;
  }
  mxc__blob b = {NULL, *s, ex->dtypes[e], ex->dev, MXC__FMT_CHANNELS_LAST};
  return mxc__fmt_differs(&b);
}

/* The formats besides PLAIN node n's kernel k takes for an argument. */
static unsigned fmt_ok(const mxc__kernel *k, const mxc__node *n, int is_out,
                       int i) {
  return k && k->fmt_ok ? k->fmt_ok(n->op, n->param, is_out, i) : 0;
}

/* ok[e] = the formats candidate e's producer can write. */
static void mark_producers(const mxc__executor *ex, const uint8_t *keep,
                           const mxc__kernel **ks, unsigned *ok) {
  const mxc__graph *g = ex->g;
  for (int nid = 0; nid < g->n_nodes; ++nid) {
    if (!g->nodes[nid]->op) continue;
    for (int e = g->entry_ptr[nid]; e < g->entry_ptr[nid + 1]; ++e) {
      unsigned m = fmt_ok(ks[nid], g->nodes[nid], 1, e - g->entry_ptr[nid]);
      ok[e] = candidate(ex, keep, e) ? m & ~MXC__FMT_TIED : 0;
    }
  }
}

/* Keeps in ok[e] the formats every reader of e takes. */
static void check_readers(const mxc__executor *ex, const mxc__kernel **ks,
                          unsigned *ok) {
  const mxc__graph *g = ex->g;
  for (int nid = 0; nid < g->n_nodes; ++nid) {
    if (!g->nodes[nid]->op) continue;
    for (int k = 0; k < g->nodes[nid]->n_inputs; ++k) {
      int e = g->in_entries[g->in_ptr[nid] + k];
      ok[e] &= fmt_ok(ks[nid], g->nodes[nid], 0, k);
    }
  }
}

/* Entry of node nid's argument a: inputs first, then outputs. */
static int arg_entry(const mxc__graph *g, int nid, int a) {
  int n_in = g->nodes[nid]->n_inputs;
  return a < n_in ? g->in_entries[g->in_ptr[nid] + a]
                  : g->entry_ptr[nid] + a - n_in;
}

/* Tied arguments of node nid (MXC__FMT_TIED) get the formats all of them
 * allow, none when their shapes differ. 1 when a mask changed. */
static int tie_node(const mxc__executor *ex, const mxc__kernel *k, int nid,
                    unsigned *ok) {
  const mxc__graph *g = ex->g;
  const mxc__node *n = g->nodes[nid];
  int n_in = n->n_inputs, n_args = n_in + g->entry_ptr[nid + 1] -
                                   g->entry_ptr[nid];
  unsigned common = ~0u;
  int first = -1;
  for (int a = 0; a < n_args; ++a) {
    if (!(fmt_ok(k, n, a >= n_in, a < n_in ? a : a - n_in) & MXC__FMT_TIED)) {
      continue;
    }
    int e = arg_entry(g, nid, a);
    if (first < 0) first = e;
    common &= ok[e];
    if (!mxc__shape_equal(&ex->shapes[e], &ex->shapes[first])) common = 0;
  }
  int changed = 0;
  for (int a = 0; first >= 0 && a < n_args; ++a) {
    if (!(fmt_ok(k, n, a >= n_in, a < n_in ? a : a - n_in) & MXC__FMT_TIED)) {
      continue;
    }
    int e = arg_entry(g, nid, a);
    changed |= ok[e] != common;
    ok[e] = common;
  }
  return changed;
}

/* Masks only shrink, so this ends; at the end every tied group agrees. */
static void resolve_ties(const mxc__executor *ex, const mxc__kernel **ks,
                         unsigned *ok) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (int nid = 0; nid < ex->g->n_nodes; ++nid) {
      if (ks[nid] && ks[nid]->fmt_ok) changed |= tie_node(ex, ks[nid], nid, ok);
    }
  }
}

/* bfloat16 values only in inference executors and where the CPU
 * computes in bfloat16 natively: elsewhere oneDNN would emulate it,
 * slower than float32. */
static int bf16_wanted(const mxc__executor *ex, int bf16_ok) {
  const mxc__cpu_info *cpu = mxc__cpu_host();
  return bf16_ok && (ex->flags & MXC_BIND_BF16) &&
         (cpu->features & (MXC__CPU_AVX512_BF16 | MXC__CPU_AMX_BF16));
}

static int pick(unsigned ok, int bf16) {
  if (bf16 && (ok & (1u << MXC__FMT_CHANNELS_LAST_BF16))) {
    return MXC__FMT_CHANNELS_LAST_BF16;
  }
  return ok & (1u << MXC__FMT_CHANNELS_LAST) ? MXC__FMT_CHANNELS_LAST
                                             : MXC__FMT_PLAIN;
}

/* The kernels of every operator node (NULL for variables). */
static int all_kernels(const mxc__executor *ex, const mxc__kernel **ks) {
  const mxc__graph *g = ex->g;
  int max_args = 0;
  for (int nid = 0; nid < g->n_nodes; ++nid) {
    int a = g->nodes[nid]->n_inputs + g->entry_ptr[nid + 1] - g->entry_ptr[nid];
    if (a > max_args) max_args = a;
  }
  int *dt = mxc__calloc((size_t)max_args + 1, sizeof *dt);
  MXC_RETURN_ERROR_IF(!dt, MXC_ERR_OOM, "binding: out of memory");
  for (int nid = 0; nid < g->n_nodes; ++nid) {
    ks[nid] = g->nodes[nid]->op ? node_kernel(ex, nid, dt) : NULL;
  }
  mxc__free(dt);
  return MXC_OK;
}

/* Entries the executor hands out: heads, gradients copied into the
 * arguments' arrays, head gradients. */
static void mark_kept(const mxc__executor *ex, uint8_t *keep) {
  const mxc__graph *g = ex->g;
  for (int j = 0; j < g->n_heads; ++j) keep[g->heads[j]] = 1;
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_entry && ex->grad_entry[i] >= 0) keep[ex->grad_entry[i]] = 1;
  }
  for (int j = 0; j < ex->n_outputs; ++j) {
    if (ex->hgrad_entry && ex->hgrad_entry[j] >= 0) {
      keep[ex->hgrad_entry[j]] = 1;
    }
  }
}

int mxc__exec_formats_choose(mxc__executor *ex, int bf16_ok) {
  const mxc__graph *g = ex->g;
  if (!wanted() || mxc__exec_graph_dev_type(ex) != MXC_DEVICE_CPU ||
      ex->any_sparse ||
      (ex->flags & MXC_BIND_NO_ONEDNN) || !mxc__op_have_backend_kernels()) {
    return MXC_OK;
  }
  const mxc__kernel **ks = mxc__calloc((size_t)g->n_nodes, sizeof *ks);
  unsigned *ok = mxc__calloc((size_t)g->n_entries, sizeof *ok);
  uint8_t *keep = mxc__calloc((size_t)g->n_entries, 1);
  int rc = ks && ok && keep ? MXC_OK : MXC_ERR_OOM;
  if (rc != MXC_OK) mxc__error_set(rc, "binding: out of memory");
  if (rc == MXC_OK) rc = all_kernels(ex, ks);
  if (rc == MXC_OK) {
    mark_kept(ex, keep);
    mark_producers(ex, keep, ks, ok);
    check_readers(ex, ks, ok);
    resolve_ties(ex, ks, ok);
    int bf16 = bf16_wanted(ex, bf16_ok);
    for (int e = 0; e < g->n_entries; ++e) {
      if (ok[e]) ex->vals[e]->fmt = pick(ok[e], bf16);
    }
  }
  mxc__free(ks);
  mxc__free(ok);
  mxc__free(keep);
  return rc;
}
