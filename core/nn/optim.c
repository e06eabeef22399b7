/* Optimizers: the registry's update operators applied to every parameter
 * of a block that has a gradient, with the operator's state inputs kept
 * per parameter (see nn.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/nn/internal.h"
#include "core/op/invoke.h"
#include "core/train/init.h"

struct mxc__optimizer {
  atomic_int refs;
  mxc__block *block;
  const mxc__op *op;
  int n_states; /* operator inputs after weight and grad */
  /* The caller's parameter strings other than lr and rescale_grad. */
  int n;
  char **keys, **vals;
  double lr, rescale;
  /* States of the trainable parameters in mxc__block_collect order
   * (n_params * n_states), made at the first step. */
  int n_params;
  mxc__ndarray **states;
};

static void free_kv(mxc__optimizer *o) {
  for (int i = 0; i < o->n; ++i) {
    mxc__free(o->keys[i]);
    mxc__free(o->vals[i]);
  }
  mxc__free(o->keys);
  mxc__free(o->vals);
}

static void drop_states(mxc__optimizer *o);

void mxc__optimizer_retain(mxc__optimizer *o) { atomic_fetch_add(&o->refs, 1); }

void mxc__optimizer_free(mxc__optimizer *o) {
  if (!o || atomic_fetch_sub(&o->refs, 1) != 1) return;
  drop_states(o);
  free_kv(o);
  mxc__block_release(o->block);
  mxc__free(o);
}

/* A finite double from s, or MXC_ERR_INVALID_ARGUMENT naming key. */
static int parse_double(const char *key, const char *s, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  MXC_RETURN_ERROR_IF(end == s || *end || v != v || v - v != 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "optimizer: %s is '%s'; expected a finite number", key,
                      s);
  *out = v;
  return MXC_OK;
}

/* Keeps lr and rescale_grad apart (they change per step), copies the rest. */
static int take_params(mxc__optimizer *o, int n, const char *const *keys,
                       const char *const *vals) {
  o->keys = mxc__calloc(n ? (size_t)n : 1, sizeof *o->keys);
  o->vals = mxc__calloc(n ? (size_t)n : 1, sizeof *o->vals);
  MXC_RETURN_ERROR_IF(!o->keys || !o->vals, MXC_ERR_OOM,
                      "optimizer: out of memory");
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!keys[i] || !vals[i], MXC_ERR_INVALID_ARGUMENT,
                        "optimizer: keys[%d] or vals[%d] is NULL", i, i);
    if (!strcmp(keys[i], "lr")) {
      MXC_FORWARD_IF_ERROR(parse_double("lr", vals[i], &o->lr));
      continue;
    }
    if (!strcmp(keys[i], "rescale_grad")) {
      MXC_FORWARD_IF_ERROR(parse_double("rescale_grad", vals[i], &o->rescale));
      continue;
    }
    o->keys[o->n] = mxc__strdup(keys[i]);
    o->vals[o->n] = mxc__strdup(vals[i]);
    o->n++;
    MXC_RETURN_ERROR_IF(!o->keys[o->n - 1] || !o->vals[o->n - 1], MXC_ERR_OOM,
                        "optimizer: out of memory");
  }
  return MXC_OK;
}

/* The operator's parameters for one step: the caller's, lr and
 * rescale_grad / batch_size. *out parsed (mxc__free it). */
static int step_params(const mxc__optimizer *o, double rescale, void **out) {
  const char *k[64], *v[64];
  char lr[40], rs[40];
  MXC_RETURN_ERROR_IF(o->n > 62, MXC_ERR_INVALID_ARGUMENT,
                      "optimizer: %d parameters; expected at most 62", o->n);
  for (int i = 0; i < o->n; ++i) k[i] = o->keys[i], v[i] = o->vals[i];
  snprintf(lr, sizeof lr, "%.17g", o->lr);
  snprintf(rs, sizeof rs, "%.17g", rescale);
  k[o->n] = "lr", v[o->n] = lr;
  k[o->n + 1] = "rescale_grad", v[o->n + 1] = rs;
  int rc = mxc__op_parse_params(o->op, k, v, o->n + 2, out);
  if (rc != MXC_OK) mxc__error_prefix("optimizer");
  return rc;
}

/* An update operator: "<name>_update" with weight and grad first. */
static int find_update_op(const char *name, const mxc__op **out) {
  size_t len = name ? strlen(name) : 0;
  MXC_RETURN_ERROR_IF(len < 8 || strcmp(name + len - 7, "_update") ||
                          !strncmp(name, "mp_", 3),
                      MXC_ERR_INVALID_ARGUMENT,
                      "optimizer: '%s' is not an update operator; expected "
                      "e.g. sgd_update, sgd_mom_update, adam_update, "
                      "rmsprop_update",
                      name ? name : "(null)");
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(name, out));
  return MXC_OK;
}

int mxc__optimizer_create(mxc__block *b, const char *update_op, int n,
                          const char *const *keys, const char *const *vals,
                          mxc__optimizer **out) {
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "optimizer: n is %d with keys or vals NULL", n);
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(find_update_op(update_op, &op));
  mxc__optimizer *o = mxc__calloc(1, sizeof *o);
  MXC_RETURN_ERROR_IF(!o, MXC_ERR_OOM, "optimizer: out of memory");
  atomic_init(&o->refs, 1);
  o->op = op;
  o->lr = 0.01;
  o->rescale = 1;
  mxc__block_retain(b);
  o->block = b;
  void *param = NULL;
  int rc = take_params(o, n, keys, vals);
  if (rc == MXC_OK) rc = step_params(o, 1, &param);
  if (rc == MXC_OK) o->n_states = mxc__op_num_inputs(op, param) - 2;
  mxc__free(param);
  if (rc != MXC_OK) {
    mxc__optimizer_free(o);
    return rc;
  }
  *out = o;
  return MXC_OK;
}

static void drop_states(mxc__optimizer *o) {
  for (int i = 0; i < o->n_params * o->n_states; ++i) {
    mxc__ndarray_free(o->states[i]);
  }
  mxc__free(o->states);
  o->states = NULL;
  o->n_params = 0;
}

/* Zero states for the trainable parameters ps[0..n). */
static int fill_states(mxc__optimizer *o, mxc__nn_param **ps, int n) {
  int total = n * o->n_states;
  o->states = mxc__calloc(total ? (size_t)total : 1, sizeof *o->states);
  MXC_RETURN_ERROR_IF(!o->states, MXC_ERR_OOM, "optimizer: out of memory");
  o->n_params = n;
  for (int i = 0; i < total; ++i) {
    const mxc__ndarray *w = ps[i / o->n_states]->data;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&w->shape, w->dtype,
                                             w->chunk->dev, 0, &o->states[i]));
    MXC_FORWARD_IF_ERROR(mxc__init_array(o->states[i], "zeros", NULL, NULL, 0));
  }
  return MXC_OK;
}

/* The parameters with gradients (aux states left out), all initialized. */
static int trainable(mxc__optimizer *o, mxc__nn_param ***out, int *n) {
  mxc__nn_param **ps = NULL;
  int all = 0, k = 0;
  MXC_FORWARD_IF_ERROR(mxc__block_collect(o->block, &ps, &all));
  for (int i = 0; i < all; ++i) {
    if (ps[i]->aux) continue;
    if (!ps[i]->data) {
      int rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                              "optimizer: parameter '%s' is not initialized "
                              "yet (run a forward pass first)",
                              ps[i]->name);
      mxc__free(ps);
      return rc;
    }
    ps[k++] = ps[i];
  }
  *out = ps;
  *n = k;
  return MXC_OK;
}

static int update_one(mxc__optimizer *o, const void *param,
                      mxc__nn_param *p, int index) {
  mxc__ndarray *in[16] = {p->data, p->grad};
  for (int s = 0; s < o->n_states && s < 14; ++s) {
    in[2 + s] = o->states[index * o->n_states + s];
  }
  mxc__ndarray *out[1] = {p->data};
  int rc = mxc__op_invoke(o->op, param, in, 2 + o->n_states, out, 1, NULL);
  if (rc != MXC_OK) mxc__error_prefix(p->name);
  return rc;
}

int mxc__optimizer_step(mxc__optimizer *o, int64_t batch_size) {
  MXC_RETURN_ERROR_IF(batch_size < 1, MXC_ERR_INVALID_ARGUMENT,
                      "optimizer step: batch_size is %lld; expected >= 1",
                      (long long)batch_size);
  MXC_RETURN_ERROR_IF(o->n_states > 14, MXC_ERR_UNSUPPORTED,
                      "optimizer: %d states; at most 14 supported",
                      o->n_states);
  mxc__nn_param **ps = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(trainable(o, &ps, &n));
  int rc = MXC_OK;
  if (!o->states) {
    rc = fill_states(o, ps, n);
    if (rc != MXC_OK) drop_states(o); /* the next step tries again */
  }
  if (rc == MXC_OK && n != o->n_params) {
    rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "optimizer: the block has %d trainable parameters; "
                        "it had %d at the first step",
                        n, o->n_params);
  }
  void *param = NULL;
  if (rc == MXC_OK) rc = step_params(o, o->rescale / (double)batch_size, &param);
  for (int i = 0; i < n && rc == MXC_OK; ++i) rc = update_one(o, param, ps[i], i);
  mxc__free(param);
  mxc__free(ps);
  return rc;
}

int mxc__optimizer_set_lr(mxc__optimizer *o, double lr) {
  MXC_RETURN_ERROR_IF(lr != lr || lr - lr != 0 || lr < 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "optimizer: lr is %g; expected a finite number >= 0",
                      lr);
  o->lr = lr;
  return MXC_OK;
}

double mxc__optimizer_lr(const mxc__optimizer *o) { return o->lr; }

int mxc__optimizer_prepare(mxc__optimizer *o) {
  if (o->states) return MXC_OK;
  mxc__nn_param **ps = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(trainable(o, &ps, &n));
  int rc = fill_states(o, ps, n);
  if (rc != MXC_OK) drop_states(o);
  mxc__free(ps);
  return rc;
}

int mxc__optimizer_n_states(const mxc__optimizer *o) { return o->n_states; }

mxc__ndarray *mxc__optimizer_state(const mxc__optimizer *o, int i, int k) {
  return o->states ? o->states[i * o->n_states + k] : NULL;
}

mxc__block *mxc__optimizer_block(const mxc__optimizer *o) { return o->block; }
