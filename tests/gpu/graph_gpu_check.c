#include "tests/gpu/graph_gpu_check.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* 1 when a GPU kernel takes the node's dtypes, and its row's accepts the
 * parameters and shapes (training mode; no device: nothing compiled);
 * else 0 with the row's reason in why when it declined. */
static int has_kernel(const mxc__executor *ex, int nid, char *why,
                      size_t len) {
  const mxc__graph *g = ex->g;
  int in_dt[MAX_ARGS], out_dt[MAX_ARGS];
  mxc__shape in_sh[MAX_ARGS], out_sh[MAX_ARGS];
  int n_in = g->in_ptr[nid + 1] - g->in_ptr[nid];
  int n_out = g->entry_ptr[nid + 1] - g->entry_ptr[nid];
  if (n_in > MAX_ARGS || n_out > MAX_ARGS) return 0;
  for (int k = 0; k < n_in; ++k) {
    int e = g->in_entries[g->in_ptr[nid] + k];
    in_dt[k] = ex->dtypes[e];
    in_sh[k] = ex->shapes[e];
  }
  for (int k = 0; k < n_out; ++k) {
    out_dt[k] = ex->dtypes[g->entry_ptr[nid] + k];
    out_sh[k] = ex->shapes[g->entry_ptr[nid] + k];
  }
  mxc__call_info info = {in_sh, out_sh, NULL, -1, 1, why, len};
  mxc__call_types t = {in_dt, NULL, n_in, out_dt, NULL, n_out, &info};
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
    char why[512] = "";
    if (has_kernel(ex, nid, why, sizeof why)) continue;
    if (!why[0]) snprintf(why, sizeof why, "no GPU kernel for these dtypes");
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
