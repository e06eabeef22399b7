#include "tests/gpu/graph_gpu_check.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/cuda/dnn_plan.h"
#include "backends/cuda/fuse_gen.h"
#include "core/base/alloc.h"
#include "core/base/handle.h"
#include "core/exec/executor.h"
#include "core/graph/infer.h"
#include "core/op/backend.h"

#define MAX_ARGS 64

static void append(char *out, size_t len, const char *fmt, ...) {
  size_t used = strlen(out);
  if (used + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out + used, len - used, fmt, ap);
  va_end(ap);
}

static int is(const mxc__node *n, const char *fwd) {
  char bwd[64];
  snprintf(bwd, sizeof bwd, "_backward_%s", fwd);
  return strcmp(n->op->name, fwd) == 0 || strcmp(n->op->name, bwd) == 0;
}

/* The data's shape: a forward's input 0, a backward's output 0 (the data
 * gradient, shaped like the data). */
static const mxc__shape *data_shape(const mxc__executor *ex, int nid) {
  const mxc__graph *g = ex->g;
  int bwd = strncmp(g->nodes[nid]->op->name, "_backward_", 10) == 0;
  int e = bwd ? g->entry_ptr[nid] : g->in_entries[g->in_ptr[nid]];
  return &ex->shapes[e];
}

/* MXC_OK, or the plan's refusal in why, for the operators whose GPU
 * kernels refuse some calls before touching the device. */
static int plan_ok(const mxc__executor *ex, int nid, char *why, size_t len) {
  const mxc__node *n = ex->g->nodes[nid];
  const mxc__shape *d = data_shape(ex, nid);
  if (is(n, "Convolution")) {
    mxc__dnn_conv_plan p;
    return mxc__dnn_conv_plan_make(n->param, d->dims, d->ndim, NULL, &p, why,
                                   len);
  }
  if (is(n, "Pooling")) {
    mxc__dnn_pool_plan p;
    return mxc__dnn_pool_plan_make(n->param, d->dims, d->ndim, NULL, &p, why,
                                   len);
  }
  if (is(n, "BatchNorm")) {
    mxc__dnn_bn_plan p;
    return mxc__dnn_bn_plan_make(n->param, d->dims, d->ndim, 1, &p, why, len);
  }
  if (strcmp(n->op->name, "_fused_elemwise") == 0) {
    mxc__fuse_plan p;
    return mxc__fuse_plan_make(n->param, &p, why, len);
  }
  return MXC_OK;
}

/* 1 when a GPU kernel takes the node's dtypes. */
static int has_kernel(const mxc__executor *ex, int nid) {
  const mxc__graph *g = ex->g;
  int in_dt[MAX_ARGS], out_dt[MAX_ARGS];
  int n_in = g->in_ptr[nid + 1] - g->in_ptr[nid];
  int n_out = g->entry_ptr[nid + 1] - g->entry_ptr[nid];
  if (n_in > MAX_ARGS || n_out > MAX_ARGS) return 0;
  for (int k = 0; k < n_in; ++k) {
    in_dt[k] = ex->dtypes[g->in_entries[g->in_ptr[nid] + k]];
  }
  for (int k = 0; k < n_out; ++k) out_dt[k] = ex->dtypes[g->entry_ptr[nid] + k];
  mxc__call_types t = {in_dt, NULL, n_in, out_dt, NULL, n_out};
  return mxc__op_kernel(g->nodes[nid]->op, MXC_DEVICE_GPU, g->nodes[nid]->param,
                        &t) != NULL;
}

/* The nodes of ex the GPU would not run (graph_gpu_check.h). */
static int unsupported(const mxc__executor *ex, char *out, size_t out_len,
                       int *n_nodes) {
  int bad = 0;
  if (out_len) out[0] = '\0';
  *n_nodes = ex->n_fwd + ex->n_bwd;
  for (int i = 0; i < *n_nodes; ++i) {
    int nid = ex->order[i];
    const mxc__node *n = ex->g->nodes[nid];
    char why[512] = "no GPU kernel for these dtypes";
    if (has_kernel(ex, nid) && plan_ok(ex, nid, why, sizeof why) == MXC_OK) {
      continue;
    }
    append(out, out_len, "%s (%s): %s\n", n->name, n->op->name, why);
    ++bad;
  }
  return bad;
}

int mxct_gpu_graph_unsupported(mxc_symbol sym, int n_shapes,
                               const char *const *names, const int *ndims,
                               const int64_t *dims, int n_reqs,
                               const char *const *req_names, const int *reqs,
                               int flags, int as_gpu, char *out,
                               size_t out_len, int *n_nodes) {
  const char *fn = "mxct_gpu_graph_unsupported";
  void *s = NULL;
  mxc__shape *shapes = NULL;
  mxc__executor *ex = NULL;
  int rc = mxc__handle_get((uintptr_t)sym, MXC__HANDLE_SYMBOL, "sym", &s);
  if (rc == MXC_OK) {
    rc = mxc__shapes_from_dims(fn, n_shapes, ndims, dims, &shapes);
  }
  if (rc == MXC_OK) {
    mxc__device cpu = {MXC_DEVICE_CPU, 0};
    rc = mxc__executor_simple_bind(
        s, cpu, n_shapes, names, shapes, NULL, MXC_REQ_WRITE, n_reqs,
        req_names, reqs, flags | (as_gpu ? MXC__BIND_GRAPH_OF_GPU : 0), &ex);
  }
  int bad = rc == MXC_OK ? unsupported(ex, out, out_len, n_nodes) : -1;
  mxc__executor_free(ex);
  mxc__free(shapes);
  return bad;
}
