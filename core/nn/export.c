/* Export of a block as an MXNet checkpoint: PREFIX-symbol.json with one
 * input "data", and PREFIX-EEEE.params with "arg:" / "aux:" names, as
 * Gluon's HybridBlock.export writes them. Built-in layers and sequential
 * blocks map to symbols directly (each layer is its operator with its
 * parameter strings, named "<block>_fwd", plus "<block>_<act>_fwd" for an
 * activation; parameters are variables named as in the block, with their
 * __shape__ and __dtype__). User blocks (and containers holding one) have
 * no symbol of their own: their graph is traced from a forward pass
 * (trace.c), so they export the graph their hybridized binding traced
 * (hybrid.c). Losses have none. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/checkpoint.h"
#include "core/nn/internal.h"

int mxc__nn_param_var(const mxc__nn_param *p, mxc__symbol **out) {
  char shape[128], dtype[16];
  mxc__shape_str(&p->data->shape, shape, sizeof shape);
  snprintf(dtype, sizeof dtype, "%d", p->data->dtype);
  const char *k[] = {"__shape__", "__dtype__"}, *v[] = {shape, dtype};
  return mxc__symbol_variable(p->name, k, v, 2, out);
}

/* in -> the block's operator on (in, parameters...), named name_fwd. */
static int layer_sym(const mxc__block *b, mxc__symbol *in, mxc__symbol **out) {
  mxc__symbol *args[8] = {in};
  int rc = MXC_OK, n = 1;
  for (int i = 0; i < b->n_params && rc == MXC_OK; ++i) {
    MXC_RETURN_ERROR_IF(!b->params[i].data, MXC_ERR_INVALID_ARGUMENT,
                        "export: parameter '%s' is not made yet (run a "
                        "forward pass first)",
                        b->params[i].name);
    rc = mxc__nn_param_var(&b->params[i], &args[n]);
    if (rc == MXC_OK) n++;
  }
  char name[256];
  snprintf(name, sizeof name, "%s_fwd", b->name);
  if (rc == MXC_OK) {
    rc = mxc__symbol_create(b->op, (const char *const *)b->op_keys,
                            (const char *const *)b->op_vals, b->n_op, name,
                            NULL, args, n, out);
  }
  for (int i = 1; i < n; ++i) mxc__symbol_free(args[i]);
  return rc;
}

static int act_sym(const mxc__block *b, mxc__symbol *in, mxc__symbol **out) {
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup("Activation", &op));
  char name[256];
  snprintf(name, sizeof name, "%s_%s_fwd", b->name, b->act);
  const char *k[] = {"act_type"}, *v[] = {b->act};
  return mxc__symbol_create(op, k, v, 1, name, NULL, &in, 1, out);
}

/* The symbol of b applied to in (borrowed); *out new. */
static int block_sym(const mxc__block *b, mxc__symbol *in, mxc__symbol **out);

static int sequential_sym(const mxc__block *b, mxc__symbol *in,
                          mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(b->n_children == 0, MXC_ERR_INVALID_ARGUMENT,
                      "export: the sequential block '%s' is empty", b->name);
  mxc__symbol *cur = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_copy(in, &cur));
  for (int i = 0; i < b->n_children; ++i) {
    mxc__symbol *next = NULL;
    int rc = block_sym(b->children[i], cur, &next);
    mxc__symbol_free(cur);
    MXC_FORWARD_IF_ERROR(rc);
    cur = next;
  }
  *out = cur;
  return MXC_OK;
}

static int block_sym(const mxc__block *b, mxc__symbol *in, mxc__symbol **out) {
  if (!b->fn && !strcmp(b->kind->name, "sequential")) {
    return sequential_sym(b, in, out);
  }
  if (!b->fn && b->kind->symbol) return b->kind->symbol(b, in, out);
  MXC_RETURN_ERROR_IF(b->fn || b->kind->n_in != 1 || !b->op,
                      MXC_ERR_UNSUPPORTED,
                      "export: block '%s' is a %s, which cannot be exported "
                      "yet (built-in layers and sequential blocks can)",
                      b->name, b->fn ? "user block" : b->kind->name);
  if (!b->act) return layer_sym(b, in, out);
  mxc__symbol *y = NULL;
  MXC_FORWARD_IF_ERROR(layer_sym(b, in, &y));
  int rc = act_sym(b, y, out);
  mxc__symbol_free(y);
  return rc;
}

const mxc__block *mxc__block_first_unsymbolic(const mxc__block *b) {
  if (!b->fn && !strcmp(b->kind->name, "sequential")) {
    for (int i = 0; i < b->n_children; ++i) {
      const mxc__block *u = mxc__block_first_unsymbolic(b->children[i]);
      if (u) return u;
    }
    return NULL;
  }
  return b->fn || b->kind->n_in != 1 || !b->op ? b : NULL;
}

int mxc__block_check_symbolic(const mxc__block *b) {
  const mxc__block *u = mxc__block_first_unsymbolic(b);
  if (!u) return MXC_OK;
  return mxc__error_set(MXC_ERR_UNSUPPORTED,
                        "block '%s' is a %s, which has no symbol of its own "
                        "(built-in layers and sequential blocks have)",
                        u->name, u->fn ? "user block" : u->kind->name);
}

int mxc__block_symbol(mxc__block *b, mxc__symbol **out) {
  mxc__symbol *data = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_variable("data", NULL, NULL, 0, &data));
  int rc = block_sym(b, data, out);
  mxc__symbol_free(data);
  return rc;
}

/* Splits ps[0..n) into arguments and auxiliary states (names, arrays). */
static void split_params(mxc__nn_param **ps, int n, const char **names,
                         mxc__ndarray **arrays, int *n_args) {
  int a = 0, x = n;
  for (int i = 0; i < n; ++i) {
    int at = ps[i]->aux ? --x : a++;
    names[at] = ps[i]->name;
    arrays[at] = ps[i]->data;
  }
  *n_args = a;
}

int mxc__block_export(mxc__block *b, const char *prefix, int epoch) {
  mxc__symbol *sym = NULL;
  MXC_FORWARD_IF_ERROR(mxc__nn_hybrid_symbol(b, &sym));
  mxc__nn_param **ps = NULL;
  int n = 0, n_args = 0, rc = mxc__block_collect(b, &ps, &n);
  const char **names = mxc__calloc(n ? (size_t)n : 1, sizeof *names);
  mxc__ndarray **arrays = mxc__calloc(n ? (size_t)n : 1, sizeof *arrays);
  if (rc == MXC_OK && (!names || !arrays)) {
    rc = mxc__error_set(MXC_ERR_OOM, "export: out of memory");
  }
  if (rc == MXC_OK) {
    split_params(ps, n, names, arrays, &n_args);
    rc = mxc__checkpoint_save(prefix, epoch, sym, n_args, names, arrays,
                              n - n_args, names + n_args, arrays + n_args);
  }
  mxc__free(names);
  mxc__free(arrays);
  mxc__free(ps);
  mxc__symbol_free(sym);
  return rc;
}
