/* Hybridized blocks: the block's symbol (export.c), or for blocks holding
 * a user block the graph traced from a forward pass (trace.c), bound once
 * per input shape to an executor over the block's own parameter arrays (shared, so
 * optimizer steps and loads are seen), and run through it (fusion, memory
 * plan, the inference passes) whenever the thread does not record.
 * Recorded forward passes run imperatively: autograd differentiates the
 * operators one by one, so training a hybridized block by hand works as
 * before. fit() trains through the executor instead: the graph bound a
 * second time with the parameters' gradient buffers as its gradient
 * arrays runs the training forward pass; its output is handed to the
 * loss as a marked autograd variable, and the gradient the loss's
 * backward pass leaves in it is the head gradient of the executor's
 * backward pass, which writes the parameters' gradients.
 * The binding is dropped and made again when the input's shape, dtype or
 * device changes, when a parameter array was replaced (initialize with
 * force) or when the block tree changed (blocks added); a traced graph is
 * traced again then, so a new batch size gets a new trace. */
#include <string.h>

#include "core/autograd/autograd.h"
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/exec/executor.h"
#include "core/graph/symbol.h"
#include "core/nn/internal.h"
#include "core/resource/training.h"

struct mxc__nn_hybrid {
  mxc__symbol *sym; /* the bound graph (export reads a traced one) */
  mxc__executor *ex;
  /* Training (fit): the graph bound again with gradients written into the
   * parameters' gradient buffers; made at the first training step. */
  mxc__executor *tex;
  mxc__ndarray *data; /* the bound input, copied into at each forward */
  int n_params, n_blocks;
  mxc__chunk **chunks; /* each parameter's storage at bind time */
};

void mxc__nn_hybrid_free(mxc__nn_hybrid *h) {
  if (!h) return;
  mxc__symbol_free(h->sym);
  mxc__executor_free(h->ex);
  mxc__executor_free(h->tex);
  mxc__ndarray_free(h->data);
  mxc__free(h->chunks);
  mxc__free(h);
}

static int count_blocks(const mxc__block *b) {
  int n = 1;
  for (int i = 0; i < b->n_children; ++i) n += count_blocks(b->children[i]);
  return n;
}

/* 1 when h was bound for this input and these very parameter arrays. */
static int still_fits(const mxc__nn_hybrid *h, const mxc__ndarray *x,
                      mxc__nn_param **ps, int n, int n_blocks) {
  if (!h || n != h->n_params || n_blocks != h->n_blocks) return 0;
  if (!mxc__shape_equal(&x->shape, &h->data->shape) ||
      x->dtype != h->data->dtype ||
      memcmp(&x->chunk->dev, &h->data->chunk->dev, sizeof x->chunk->dev)) {
    return 0;
  }
  for (int i = 0; i < n; ++i) {
    if (!ps[i]->data || ps[i]->data->chunk != h->chunks[i]) return 0;
  }
  return 1;
}

/* The array named name: "data" or a parameter. */
static mxc__ndarray *array_named(const char *name, mxc__ndarray *data,
                                 mxc__nn_param **ps, int n) {
  if (!strcmp(name, "data")) return data;
  for (int i = 0; i < n; ++i) {
    if (!strcmp(ps[i]->name, name)) return ps[i]->data;
  }
  return NULL;
}

/* The arrays of list's names (arguments or auxiliary states). */
static int arrays_of(const mxc__str_list *l, mxc__ndarray *data,
                     mxc__nn_param **ps, int n, mxc__ndarray ***out) {
  mxc__ndarray **a = mxc__calloc(l->n ? (size_t)l->n : 1, sizeof *a);
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_OOM, "hybridize: out of memory");
  for (int i = 0; i < l->n; ++i) {
    a[i] = array_named(l->items[i], data, ps, n);
    if (!a[i]) {
      mxc__free(a);
      return mxc__error_set(MXC_ERR_INTERNAL,
                            "hybridize: the graph's input '%s' is not a "
                            "parameter of the block",
                            l->items[i]);
    }
  }
  *out = a;
  return MXC_OK;
}

/* The gradient buffers of list's names (NULL for "data") and their
 * requests. */
static int grads_of(const mxc__str_list *l, mxc__nn_param **ps, int n,
                    mxc__ndarray ***grads, int **reqs) {
  size_t k = l->n ? (size_t)l->n : 1;
  *grads = mxc__calloc(k, sizeof **grads);
  *reqs = mxc__calloc(k, sizeof **reqs);
  MXC_RETURN_ERROR_IF(!*grads || !*reqs, MXC_ERR_OOM,
                      "hybridize: out of memory");
  for (int i = 0; i < l->n; ++i) {
    for (int j = 0; j < n && !(*grads)[i]; ++j) {
      if (!strcmp(ps[j]->name, l->items[i])) (*grads)[i] = ps[j]->grad;
    }
    (*reqs)[i] = (*grads)[i] ? MXC__REQ_WRITE : MXC__REQ_NULL;
  }
  return MXC_OK;
}

/* Binds h->sym over h->data and the parameters: *out = the inference
 * executor, or (train) one writing the parameters' gradient buffers. */
static int bind_sym(mxc__nn_hybrid *h, mxc__nn_param **ps, int n, int train,
                    mxc__executor **out) {
  mxc__str_list *an = NULL, *xn = NULL;
  mxc__ndarray **args = NULL, **aux = NULL, **grads = NULL;
  int *reqs = NULL;
  int rc = mxc__symbol_list_arguments(h->sym, &an);
  if (rc == MXC_OK) rc = mxc__symbol_list_aux(h->sym, &xn);
  if (rc == MXC_OK) rc = arrays_of(an, h->data, ps, n, &args);
  if (rc == MXC_OK) rc = arrays_of(xn, h->data, ps, n, &aux);
  if (rc == MXC_OK && train) rc = grads_of(an, ps, n, &grads, &reqs);
  if (rc == MXC_OK) {
    rc = mxc__executor_bind(h->sym, h->data->chunk->dev, args, an->n, grads,
                            reqs, aux, xn->n, 0, "hybridize", out);
  }
  mxc__free(args);
  mxc__free(aux);
  mxc__free(grads);
  mxc__free(reqs);
  mxc__str_list_free(an);
  mxc__str_list_free(xn);
  return rc;
}

/* A new binding of b for inputs like x. */
static int hybrid_bind(mxc__block *b, const mxc__ndarray *x,
                       mxc__nn_param **ps, int n, mxc__nn_hybrid **out) {
  mxc__nn_hybrid *h = mxc__calloc(1, sizeof *h);
  MXC_RETURN_ERROR_IF(!h, MXC_ERR_OOM, "hybridize: out of memory");
  h->n_params = n;
  h->n_blocks = count_blocks(b);
  h->chunks = mxc__calloc(n ? (size_t)n : 1, sizeof *h->chunks);
  int rc = h->chunks ? MXC_OK
                     : mxc__error_set(MXC_ERR_OOM, "hybridize: out of memory");
  for (int i = 0; i < n && rc == MXC_OK; ++i) h->chunks[i] = ps[i]->data->chunk;
  if (rc == MXC_OK) {
    rc = mxc__ndarray_create(&x->shape, x->dtype, x->chunk->dev, 0, &h->data);
  }
  if (rc == MXC_OK) {
    rc = mxc__block_first_unsymbolic(b) ? mxc__nn_trace(b, x, &h->sym)
                                        : mxc__block_symbol(b, &h->sym);
  }
  if (rc == MXC_OK) rc = bind_sym(h, ps, n, 0, &h->ex);
  if (rc != MXC_OK) {
    mxc__nn_hybrid_free(h);
    return rc;
  }
  *out = h;
  return MXC_OK;
}

/* Copies x in, runs ex, copies the output out (a new array, so the next
 * forward does not overwrite it). */
static int hybrid_run(mxc__nn_hybrid *h, mxc__executor *ex, int is_train,
                      const mxc__ndarray *x, mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(mxc__ndarray_copy(x, h->data));
  MXC_FORWARD_IF_ERROR(mxc__executor_forward(ex, is_train));
  const mxc__ndarray *o = mxc__executor_output(ex, 0);
  mxc__ndarray *y = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__ndarray_create(&o->shape, o->dtype, o->chunk->dev, 0, &y));
  int rc = mxc__ndarray_copy(o, y);
  if (rc != MXC_OK) {
    mxc__ndarray_free(y);
    return rc;
  }
  *out = y;
  return MXC_OK;
}

/* 1 when every parameter of b has been made. */
static int all_made(mxc__nn_param **ps, int n) {
  for (int i = 0; i < n; ++i) {
    if (!ps[i]->data) return 0;
  }
  return 1;
}

/* b->hybrid bound for inputs like x (again if needed), with the training
 * executor too when train. */
static int ensure_bound(mxc__block *b, const mxc__ndarray *x, int train) {
  mxc__nn_param **ps = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__block_collect(b, &ps, &n));
  int rc = MXC_OK;
  if (!still_fits(b->hybrid, x, ps, n, count_blocks(b))) {
    mxc__nn_hybrid_free(b->hybrid);
    b->hybrid = NULL;
    rc = hybrid_bind(b, x, ps, n, &b->hybrid);
  }
  if (rc == MXC_OK && train && !b->hybrid->tex) {
    rc = bind_sym(b->hybrid, ps, n, 1, &b->hybrid->tex);
  }
  mxc__free(ps);
  return rc;
}

int mxc__nn_hybrid_forward(mxc__block *b, const mxc__ndarray *x,
                           mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(ensure_bound(b, x, 0));
  return hybrid_run(b->hybrid, b->hybrid->ex, mxc__is_training(), x, out);
}

int mxc__nn_hybrid_train_forward(mxc__block *b, const mxc__ndarray *x,
                                 mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(ensure_bound(b, x, 1));
  mxc__ndarray *y = NULL, *g = NULL;
  MXC_FORWARD_IF_ERROR(hybrid_run(b->hybrid, b->hybrid->tex, 1, x, &y));
  int rc = mxc__ndarray_create(&y->shape, y->dtype, y->chunk->dev, 0, &g);
  if (rc == MXC_OK) rc = mxc__autograd_mark(1, &y, NULL, &g);
  mxc__ndarray_free(g); /* the mark holds its own reference */
  if (rc != MXC_OK) {
    mxc__ndarray_free(y);
    return rc;
  }
  *out = y;
  return MXC_OK;
}

int mxc__nn_hybrid_backward(mxc__block *b, const mxc__ndarray *out) {
  MXC_RETURN_ERROR_IF(!b->hybrid || !b->hybrid->tex, MXC_ERR_INVALID_ARGUMENT,
                      "hybridize '%s': backward without a training forward",
                      b->name);
  mxc__ndarray *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__autograd_get_grad(out, &g));
  int rc = mxc__executor_backward(b->hybrid->tex, 1, &g);
  mxc__ndarray_free(g);
  return rc;
}

int mxc__nn_hybrid_ready(mxc__block *b, int n_in) {
  if (!b->hybridize || n_in != 1) return 0;
  mxc__nn_param **ps = NULL;
  int n = 0;
  if (mxc__block_collect(b, &ps, &n) != MXC_OK) return 0;
  int made = all_made(ps, n);
  mxc__free(ps);
  return made; /* the first forward pass makes the parameters */
}

int mxc__nn_hybrid_wanted(mxc__block *b, int n_in) {
  return !mxc__autograd_is_recording() && mxc__nn_hybrid_ready(b, n_in);
}

int mxc__block_hybridize(mxc__block *b, int active) {
  /* Losses are refused now rather than left imperative at each forward
   * (hybridized forward passes take one input). */
  MXC_RETURN_ERROR_IF(active && !b->fn && b->kind->n_in > 1,
                      MXC_ERR_UNSUPPORTED,
                      "hybridize: block '%s' is a %s, which takes %d inputs; "
                      "hybridized blocks take one",
                      b->name, b->kind->name, b->kind->n_in);
  b->hybridize = active != 0;
  mxc__nn_hybrid_free(b->hybrid);
  b->hybrid = NULL;
  return MXC_OK;
}

int mxc__nn_hybrid_symbol(mxc__block *b, mxc__symbol **out) {
  const mxc__block *u = mxc__block_first_unsymbolic(b);
  if (!u) return mxc__block_symbol(b, out);
  MXC_RETURN_ERROR_IF(!b->hybrid, MXC_ERR_UNSUPPORTED,
                      "block '%s' has no graph: '%s' is a %s, whose graph is "
                      "traced from a forward pass (hybridize '%s' and run a "
                      "forward pass first)",
                      b->name, u->name, u->fn ? "user block" : u->kind->name,
                      b->name);
  return mxc__symbol_copy(b->hybrid->sym, out);
}
