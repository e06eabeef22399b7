/* Tracing a block's forward pass into a graph, for blocks that have no
 * symbol of their own (user blocks, containers holding one): the forward
 * pass runs once on a copy of the input, recorded by autograd in
 * inference mode (so BatchNorm's statistics do not move and Dropout draws
 * nothing), and the recorded calls become the graph
 * (mxc__autograd_trace). The copy of the input becomes the variable
 * "data", each parameter array a variable named as the parameter with
 * its __shape__ and __dtype__ (as export.c names them), and anything else
 * the pass used -- an array made inside it, or the result of an operator
 * autograd does not record -- is refused: a graph cannot hold it.
 *
 * Like any trace, the graph is what this one pass did: control flow that
 * depends on values, or shapes computed from the batch size, are frozen
 * (hybrid.c traces again when the input's shape changes). */
#include <string.h>

#include "core/autograd/autograd.h"
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/symbol.h"
#include "core/nn/internal.h"
#include "core/resource/training.h"

/* What var_of needs: the block, the traced input, its parameters and the
 * variable node made for each (index n: the input), made once. */
typedef struct var_ctx {
  const mxc__block *b;
  const mxc__ndarray *data;
  mxc__nn_param **ps;
  int n;
  mxc__node **made; /* n + 1 */
} var_ctx;

static int same_array(const mxc__ndarray *a, const mxc__ndarray *v) {
  return a && a->chunk == v->chunk && a->offset == v->offset &&
         mxc__shape_equal(&a->shape, &v->shape);
}

/* The index of v's array: a parameter, n for the input, -1 if neither. */
static int index_of(const var_ctx *c, const mxc__ndarray *v) {
  if (same_array(c->data, v)) return c->n;
  for (int i = 0; i < c->n; ++i) {
    if (same_array(c->ps[i]->data, v)) return i;
  }
  return -1;
}

/* The variable node of index i, made by the symbol functions. */
static int make_var(const var_ctx *c, int i, mxc__node **out) {
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(i == c->n ? mxc__symbol_variable("data", NULL, NULL,
                                                        0, &s)
                                 : mxc__nn_param_var(c->ps[i], &s));
  *out = s->outputs[0].node;
  mxc__node_retain(*out);
  mxc__symbol_free(s);
  return MXC_OK;
}

static int var_of(void *user, const mxc__ndarray *value, mxc__node **out) {
  var_ctx *c = user;
  int i = index_of(c, value);
  MXC_RETURN_ERROR_IF(i < 0, MXC_ERR_UNSUPPORTED,
                      "hybridize '%s': the forward pass used an array that "
                      "is neither its input nor a parameter of the block or "
                      "its children (an array made inside the forward "
                      "function, a block not added with mxc_block_add, or "
                      "the result of an operator without a gradient); a "
                      "traced graph cannot hold it",
                      c->b->name);
  if (!c->made[i]) MXC_FORWARD_IF_ERROR(make_var(c, i, &c->made[i]));
  mxc__node_retain(c->made[i]);
  *out = c->made[i];
  return MXC_OK;
}

/* A copy of x marked as an autograd variable (its gradient is never
 * written: MXC__REQ_NULL), so every call depending on it is recorded. */
static int marked_copy(const mxc__ndarray *x, mxc__ndarray **xin,
                       mxc__ndarray **grad) {
  mxc__device dev = x->chunk->dev;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&x->shape, x->dtype, dev, 0, xin));
  int rc = mxc__ndarray_create(&x->shape, x->dtype, dev, 0, grad);
  if (rc == MXC_OK) rc = mxc__ndarray_copy(x, *xin);
  mxc__req req = MXC__REQ_NULL;
  if (rc == MXC_OK) rc = mxc__autograd_mark(1, xin, &req, grad);
  return rc;
}

/* The forward pass recorded in inference mode; flags restored after. */
static int recorded_forward(mxc__block *b, mxc__ndarray *xin,
                            mxc__ndarray **y) {
  int rec = mxc__autograd_set_recording(1);
  int train = mxc__set_training(0);
  int rc = mxc__block_forward(b, 1, &xin, y);
  mxc__set_training(train);
  mxc__autograd_set_recording(rec);
  return rc;
}

static int trace_with(mxc__block *b, var_ctx *c, mxc__ndarray **xin,
                      mxc__ndarray **grad, mxc__ndarray **y,
                      mxc__symbol **out) {
  MXC_FORWARD_IF_ERROR(marked_copy(c->data, xin, grad));
  c->data = *xin;
  MXC_FORWARD_IF_ERROR(recorded_forward(b, *xin, y));
  return mxc__autograd_trace(1, y, b->name, var_of, c, out);
}

int mxc__nn_trace(mxc__block *b, const mxc__ndarray *x, mxc__symbol **out) {
  var_ctx c = {b, x, NULL, 0, NULL};
  MXC_FORWARD_IF_ERROR(mxc__block_collect(b, &c.ps, &c.n));
  c.made = mxc__calloc((size_t)c.n + 1, sizeof *c.made);
  mxc__ndarray *xin = NULL, *grad = NULL, *y = NULL;
  int rc = c.made ? trace_with(b, &c, &xin, &grad, &y, out)
                  : mxc__error_set(MXC_ERR_OOM, "hybridize: out of memory");
  for (int i = 0; c.made && i <= c.n; ++i) mxc__node_release(c.made[i]);
  mxc__free(c.made);
  mxc__free(c.ps);
  mxc__ndarray_free(y);
  mxc__ndarray_free(xin);
  mxc__ndarray_free(grad);
  return rc;
}
