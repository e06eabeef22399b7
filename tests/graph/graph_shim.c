#include "graph_shim.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/handle.h"
#include "core/graph/gradient.h"
#include "core/graph/graph.h"
#include "core/graph/infer.h"
#include "core/graph/symbol.h"

static void add(char *report, size_t len, const char *fmt, ...) {
  size_t used = strlen(report);
  if (used + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(report + used, len - used, fmt, ap);
  va_end(ap);
}

static int sym_of(mxc_symbol h, mxc__symbol **out) {
  void *p;
  int rc = mxc__handle_get((uintptr_t)h, MXC__HANDLE_SYMBOL, "shim", &p);
  if (rc == MXC_OK) *out = p;
  return rc;
}

int mxct_parse_shape_attr(const char *s, int *ndim, int64_t *dims) {
  mxc__shape sh;
  if (!mxc__parse_shape_attr(s, &sh)) return 0;
  *ndim = sh.ndim;
  for (int i = 0; i < sh.ndim; ++i) dims[i] = sh.dims[i];
  return 1;
}

static mxc__shape make_shape(int ndim, const int64_t *dims) {
  mxc__shape s;
  memset(&s, 0, sizeof s);
  s.ndim = ndim;
  for (int i = 0; i < ndim; ++i) s.dims[i] = dims[i];
  return s;
}

int mxct_infer_from_output(mxc_symbol sym, int ndim, const int64_t *dims,
                           char *report, size_t len) {
  report[0] = '\0';
  mxc__symbol *s;
  int rc = sym_of(sym, &s);
  mxc__graph *g = NULL;
  if (rc == MXC_OK) rc = mxc__graph_build(s->outputs, 1, &g);
  if (rc != MXC_OK) return rc;
  mxc__shape *sh = mxc__malloc(sizeof *sh * (size_t)g->n_entries);
  for (int e = 0; e < g->n_entries; ++e) sh[e].ndim = -1;
  mxc__shape want = make_shape(ndim, dims);
  sh[g->heads[0]] = want;
  rc = mxc__graph_infer_shape(g, sh);
  for (int e = 0; rc == MXC_OK && e < g->n_entries; ++e) {
    if (!mxc__shape_equal(&sh[e], &want)) add(report, len, "entry %d; ", e);
  }
  mxc__free(sh);
  mxc__graph_free(g);
  return rc;
}

/* Gradients of every argument of s; *heads: outputs then gradients. */
static int build_full(const mxc__symbol *s, const mxc__graph *fg,
                      mxc__entry *hg, mxc__entry *wrt, mxc__entry *grads) {
  for (int i = 0; i < fg->n_args; ++i) {
    wrt[i].node = fg->nodes[fg->args[i]];
    wrt[i].index = 0;
  }
  for (int i = 0; i < s->n_outputs; ++i) {
    int rc = mxc__node_variable("head_grad", &hg[i].node);
    if (rc != MXC_OK) return rc;
    hg[i].index = 0;
  }
  return mxc__gradient_build(s->outputs, hg, s->n_outputs, wrt, fg->n_args,
                             grads);
}

static void check_known(const mxc__graph *g, const mxc__shape *sh,
                        const int *dt, char *report, size_t len) {
  for (int i = 0; i < g->n_nodes; ++i) {
    const mxc__node *n = g->nodes[i];
    for (int e = g->entry_ptr[i]; e < g->entry_ptr[i + 1]; ++e) {
      if (sh[e].ndim < 0 || dt[e] < 0) {
        add(report, len, "%s of node '%s' (%s) output %d unknown; ",
            sh[e].ndim < 0 ? "shape" : "dtype", n->name,
            n->op ? n->op->name : "variable", e - g->entry_ptr[i]);
      }
    }
  }
}

static int infer_all(const mxc__graph *g, const char *data,
                     const mxc__shape *given, mxc__shape *sh, int *dt,
                     int *st) {
  for (int e = 0; e < g->n_entries; ++e) {
    sh[e].ndim = -1;
    dt[e] = -1;
    st[e] = -1;
  }
  const char *names[] = {data};
  int f32 = MXC_DTYPE_FLOAT32;
  int rc = mxc__graph_set_args(g, "shim", 1, names, given, sizeof *given, sh);
  if (rc == MXC_OK) rc = mxc__graph_set_args(g, "shim", 1, names, &f32,
                                             sizeof f32, dt);
  if (rc == MXC_OK) rc = mxc__graph_infer_shape(g, sh);
  if (rc == MXC_OK) rc = mxc__graph_infer_type(g, dt);
  if (rc == MXC_OK) rc = mxc__graph_infer_stype(g, st);
  return rc;
}

int mxct_check_full_graph(mxc_symbol sym, const char *data, int ndim,
                          const int64_t *dims, char *report, size_t len) {
  report[0] = '\0';
  mxc__symbol *s;
  int rc = sym_of(sym, &s);
  mxc__graph *fg = NULL, *g = NULL;
  if (rc == MXC_OK) rc = mxc__graph_build(s->outputs, s->n_outputs, &fg);
  if (rc != MXC_OK) return rc;
  int nh = s->n_outputs, na = fg->n_args;
  mxc__entry *hg = mxc__calloc((size_t)nh, sizeof *hg);
  mxc__entry *wrt = mxc__calloc((size_t)na, sizeof *wrt);
  mxc__entry *grads = mxc__calloc((size_t)na, sizeof *grads);
  mxc__entry *heads = mxc__calloc((size_t)(nh + na), sizeof *heads);
  rc = build_full(s, fg, hg, wrt, grads);
  int n_heads = 0;
  for (int i = 0; i < nh; ++i) heads[n_heads++] = s->outputs[i];
  for (int i = 0; rc == MXC_OK && i < na; ++i) {
    if (grads[i].node) heads[n_heads++] = grads[i];
  }
  if (rc == MXC_OK) rc = mxc__graph_build(heads, n_heads, &g);
  if (rc == MXC_OK) {
    mxc__shape given = make_shape(ndim, dims);
    mxc__shape *sh = mxc__malloc(sizeof *sh * (size_t)g->n_entries);
    int *dt = mxc__malloc(sizeof *dt * (size_t)g->n_entries);
    int *st = mxc__malloc(sizeof *st * (size_t)g->n_entries);
    rc = infer_all(g, data, &given, sh, dt, st);
    if (rc == MXC_OK) check_known(g, sh, dt, report, len);
    for (int i = 0; rc == MXC_OK && i < na; ++i) {
      if (!grads[i].node) continue;
      int ge = mxc__graph_entry_id(g, grads[i]);
      int ae = mxc__graph_entry_id(g, wrt[i]);
      if (!mxc__shape_equal(&sh[ge], &sh[ae])) {
        add(report, len, "gradient of '%s' has a different shape; ",
            wrt[i].node->name);
      }
    }
    mxc__free(sh);
    mxc__free(dt);
    mxc__free(st);
  }
  mxc__graph_free(g);
  for (int i = 0; i < na; ++i) mxc__node_release(grads[i].node);
  for (int i = 0; i < nh; ++i) mxc__node_release(hg[i].node);
  mxc__free(hg);
  mxc__free(wrt);
  mxc__free(grads);
  mxc__free(heads);
  mxc__graph_free(fg);
  return rc;
}

void mxct_backward_ops_without_infer(char *report, size_t len, int *checked) {
  report[0] = '\0';
  *checked = 0;
  for (int i = 0; i < mxc__op_count(); ++i) {
    const mxc__op *op = mxc__op_at(i);
    if (!op->infer_shape) add(report, len, "%s ", op->name);
    char name[160];
    snprintf(name, sizeof name, "_backward_%s", op->name);
    const mxc__op *b = mxc__op_find(name);
    if (!b) continue;
    ++*checked;
    if (!b->infer_shape) add(report, len, "%s ", name);
  }
}
