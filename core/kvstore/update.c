/* The store's updater: an update operator of the registry chosen by name
 * (sgd_update, adam_update, ...), with per-key states, or a callback. */
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/kvstore/internal.h"
#include "core/op/invoke.h"

/* The operators a store can run: inputs (weight, grad, states...) with a
 * fixed count, one output (the weight, in place) and every state updated
 * in place. States start at zero, as MXNet's optimizers create them;
 * multi-precision updates (a float32 master copy "weight32", which must
 * start as the weight) are not among them. */
static int check_update_op(const mxc__op *op) {
  int n = op->n_inputs, ok = !op->num_inputs && n >= 2 && n <= 32 &&
                             mxc__op_num_outputs(op, NULL) == 1 &&
                             op->input_names;
  for (int i = 0; ok && i < n; ++i) {
    const char *name = op->input_names[i];
    ok = (i == 0 && strcmp(name, "weight") == 0) ||
         (i == 1 && strcmp(name, "grad") == 0) ||
         (i >= 2 && (op->mutate_inputs & (1u << i)) &&
          strcmp(name, "weight32") != 0);
  }
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_INVALID_ARGUMENT,
                      "optimizer '%s' is not an update operator the store "
                      "can run: expected inputs (weight, grad, states "
                      "updated in place and starting at zero) and one "
                      "output, as sgd_update, sgd_mom_update, adam_update",
                      op->name);
  return MXC_OK;
}

static int find_update_op(const char *name, const mxc__op **out) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "optimizer name is NULL");
  const mxc__op *op = mxc__op_find(name);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_NOT_FOUND,
                      "optimizer '%s' is not an operator of the registry; "
                      "expected an update operator such as sgd_update, "
                      "sgd_mom_update, adam_update",
                      name);
  MXC_FORWARD_IF_ERROR(check_update_op(op));
  *out = op;
  return MXC_OK;
}

static int check_params(const char *const *keys, const char *const *vals,
                        int n) {
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "n_params is %d with keys %s and vals %s", n,
                      keys ? "set" : "NULL", vals ? "set" : "NULL");
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!keys[i] || !vals[i], MXC_ERR_INVALID_ARGUMENT,
                        "parameter %d has a NULL %s", i,
                        keys[i] ? "value" : "key");
  }
  return MXC_OK;
}

/* ---- states ---- */

static void free_list(mxc__ndarray **s, int n) {
  for (int i = 0; s && i < n; ++i) mxc__ndarray_free(s[i]);
  mxc__free(s);
}

void mxc__kv_free_states(mxc__kv_entry *e) {
  free_list(e->states, e->n_states);
  e->states = NULL;
  e->n_states = 0;
}

/* *out = op's n_inputs - 2 new zero arrays shaped like e's. */
static int new_states(const mxc__op *op, const mxc__kv_entry *e,
                      mxc__ndarray ***out) {
  int n = op->n_inputs - 2;
  mxc__ndarray **s = mxc__calloc(n ? (size_t)n : 1, sizeof *s);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "out of memory for optimizer states");
  const mxc__ndarray *w = e->stored;
  int rc = MXC_OK;
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    rc = mxc__ndarray_create(&w->shape, w->dtype, w->chunk->dev, 0, &s[i]);
    if (rc == MXC_OK) rc = mxc__kv_push_zero(s[i]);
  }
  if (rc != MXC_OK) {
    free_list(s, n);
    return rc;
  }
  *out = s;
  return MXC_OK;
}

static void install_states(mxc__kv_entry *e, mxc__ndarray **s, int n) {
  mxc__kv_free_states(e);
  e->states = s;
  e->n_states = n;
}

int mxc__kv_make_states(const mxc__kvstore *kv, mxc__kv_entry *e) {
  mxc__ndarray **s = NULL;
  MXC_FORWARD_IF_ERROR(new_states(kv->opt, e, &s));
  install_states(e, s, kv->opt->n_inputs - 2);
  return MXC_OK;
}

/* New states for every key, made before any is replaced: a failure
 * leaves the store as it was. */
static int states_for_all(const mxc__kvstore *kv, const mxc__op *op,
                          mxc__ndarray ****out) {
  int n = kv->n_entries;
  mxc__ndarray ***all = mxc__calloc(n ? (size_t)n : 1, sizeof *all);
  MXC_RETURN_ERROR_IF(!all, MXC_ERR_OOM, "out of memory for states");
  int rc = MXC_OK;
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    rc = new_states(op, kv->entries[i], &all[i]);
  }
  if (rc != MXC_OK) {
    for (int i = 0; i < n; ++i) free_list(all[i], op->n_inputs - 2);
    mxc__free(all);
    return rc;
  }
  *out = all;
  return MXC_OK;
}

/* ---- setting the updater ---- */

void mxc__kv_clear_updater(mxc__kvstore *kv) {
  for (int i = 0; i < kv->n_entries; ++i) {
    mxc__kv_free_states(kv->entries[i]);
  }
  mxc__free(kv->opt_param);
  kv->opt = NULL;
  kv->opt_param = NULL;
  if (kv->updater_ud_free) kv->updater_ud_free(kv->updater_ud);
  kv->updater = NULL;
  kv->updater_ud = NULL;
  kv->updater_ud_free = NULL;
}

static void install_optimizer(mxc__kvstore *kv, const mxc__op *op,
                              void *param, mxc__ndarray ***states) {
  mxc__kv_clear_updater(kv);
  for (int i = 0; i < kv->n_entries; ++i) {
    install_states(kv->entries[i], states[i], op->n_inputs - 2);
  }
  kv->opt = op;
  kv->opt_param = param;
}

int mxc__kvstore_set_optimizer(mxc__kvstore *kv, const char *name,
                               const char *const *keys,
                               const char *const *vals, int n) {
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(find_update_op(name, &op));
  MXC_FORWARD_IF_ERROR(check_params(keys, vals, n));
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_parse_params(op, keys, vals, n, &param));
  pthread_mutex_lock(&kv->lock);
  mxc__ndarray ***states = NULL;
  int rc = states_for_all(kv, op, &states);
  if (rc == MXC_OK) {
    install_optimizer(kv, op, param, states);
    mxc__free(states);
  }
  pthread_mutex_unlock(&kv->lock);
  if (rc != MXC_OK) mxc__free(param);
  return rc;
}

int mxc__kvstore_set_updater(mxc__kvstore *kv, mxc__kv_updater_fn fn,
                             void *ud, void (*ud_free)(void *)) {
  pthread_mutex_lock(&kv->lock);
  mxc__kv_clear_updater(kv);
  kv->updater = fn;
  kv->updater_ud = ud;
  kv->updater_ud_free = ud_free;
  pthread_mutex_unlock(&kv->lock);
  return MXC_OK;
}

/* ---- running the optimizer ---- */

int mxc__kv_apply_optimizer(const mxc__kvstore *kv, mxc__kv_entry *e) {
  mxc__ndarray *in[32];
  int n = kv->opt->n_inputs;
  in[0] = e->stored;
  in[1] = e->merge;
  for (int i = 2; i < n; ++i) in[i] = e->states[i - 2];
  mxc__ndarray *out[1] = {e->stored};
  return mxc__op_invoke(kv->opt, kv->opt_param, in, n, out, 1, NULL);
}
