/* fit() through a KVStore (see fit_dist.h). The store holds one key per
 * parameter, "fit:NAME": initialised with the parameter (so that it
 * becomes rank 0's everywhere), then used without an updater as the sum
 * of the workers' gradients, which is pulled back into the gradient
 * buffer for the fit's own optimizer. Keeping the optimizer in the fit
 * (not the store) keeps checkpoints, schedules and states as without a
 * store. One more key, "fit:go", carries the agreement on going on. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/nn/fit_dist.h"

#define GO_KEY "fit:go"

struct mxc__fit_dist {
  mxc__kvstore *kv;
  int rank, workers;
  int n_keys;  /* parameters (auxiliary states too) once set up; 0 before */
  char **keys; /* "fit:NAME", in mxc__block_collect order */
  mxc__ndarray *go; /* int32 (1): this worker's answer, then the count */
};

int mxc__fit_dist_new(mxc__kvstore *kv, mxc__fit_dist **out) {
  mxc__fit_dist *d = mxc__calloc(1, sizeof *d);
  MXC_RETURN_ERROR_IF(!d, MXC_ERR_OOM, "fit: out of memory");
  mxc__kvstore_retain(kv);
  d->kv = kv;
  d->rank = mxc__kvstore_rank(kv);
  d->workers = mxc__kvstore_num_workers(kv);
  *out = d;
  return MXC_OK;
}

static void free_keys(mxc__fit_dist *d) {
  for (int i = 0; i < d->n_keys; ++i) mxc__free(d->keys[i]);
  mxc__free(d->keys);
  d->keys = NULL;
  d->n_keys = 0;
}

void mxc__fit_dist_free(mxc__fit_dist *d) {
  if (!d) return;
  free_keys(d);
  mxc__ndarray_free(d->go);
  mxc__kvstore_free(d->kv);
  mxc__free(d);
}

int mxc__fit_dist_rank(const mxc__fit_dist *d) { return d ? d->rank : 0; }
int mxc__fit_dist_workers(const mxc__fit_dist *d) { return d ? d->workers : 1; }

int mxc__fit_dist_shard(const mxc__fit_dist *d, mxc__iter *train) {
  if (!d || d->workers == 1) return MXC_OK;
  int rc = mxc__iter_set_parts(train, d->workers, d->rank);
  if (rc != MXC_OK) mxc__error_prefix("fit: sharding the training data");
  return rc;
}

/* ---- agreement ---- */

static int make_go(mxc__fit_dist *d) {
  mxc__shape one = {.ndim = 1, .dims = {1}};
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&one, MXC_DTYPE_INT32, cpu, 0,
                                           &d->go));
  const char *key = GO_KEY;
  mxc__kv_keys keys = {.strs = &key};
  int rc = mxc__ndarray_copy_from_host(d->go, &(int32_t){0}, 4);
  if (rc == MXC_OK) rc = mxc__kvstore_init(d->kv, 1, keys, &d->go);
  if (rc != MXC_OK) {
    mxc__ndarray_free(d->go);
    d->go = NULL;
  }
  return rc;
}

int mxc__fit_dist_agree(mxc__fit_dist *d, int mine, int *all) {
  *all = mine != 0;
  if (!d || d->workers == 1) return MXC_OK;
  if (!d->go) MXC_FORWARD_IF_ERROR(make_go(d));
  int32_t v = mine != 0;
  const char *key = GO_KEY;
  mxc__kv_keys keys = {.strs = &key};
  MXC_FORWARD_IF_ERROR(mxc__ndarray_copy_from_host(d->go, &v, sizeof v));
  MXC_FORWARD_IF_ERROR(mxc__kvstore_pushpull(d->kv, 1, keys, &d->go, &d->go, 0));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_copy_to_host(d->go, &v, sizeof v));
  *all = v == d->workers;
  return MXC_OK;
}

/* ---- gradients ---- */

static int make_keys(mxc__fit_dist *d, mxc__nn_param **ps, int n) {
  d->keys = mxc__calloc(n ? (size_t)n : 1, sizeof *d->keys);
  MXC_RETURN_ERROR_IF(!d->keys, MXC_ERR_OOM, "fit: out of memory");
  for (d->n_keys = 0; d->n_keys < n; d->n_keys++) {
    size_t len = strlen(ps[d->n_keys]->name) + 5;
    char *k = mxc__malloc(len);
    MXC_RETURN_ERROR_IF(!k, MXC_ERR_OOM, "fit: out of memory");
    snprintf(k, len, "fit:%s", ps[d->n_keys]->name);
    d->keys[d->n_keys] = k;
  }
  return MXC_OK;
}

/* The store's keys, each initialised with its parameter (rank 0's value
 * in a job), pulled back so that every worker starts from rank 0's
 * parameters. A failure leaves no keys here (those initialised stay in
 * the store: a later run fails naming them). */
static int set_up(mxc__fit_dist *d, mxc__nn_param **ps, int n) {
  MXC_RETURN_ERROR_IF(mxc__kvstore_has_updater(d->kv),
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: the kvstore has an optimizer or updater, which "
                      "would update the summed gradients; the fit steps its "
                      "own optimizer: give it a store without one");
  mxc__ndarray **data = mxc__calloc(n ? (size_t)n : 1, sizeof *data);
  int rc = data ? make_keys(d, ps, n)
                : mxc__error_set(MXC_ERR_OOM, "fit: out of memory");
  for (int i = 0; i < n && rc == MXC_OK; ++i) data[i] = ps[i]->data;
  mxc__kv_keys keys = {.strs = (const char *const *)d->keys};
  if (rc == MXC_OK) rc = mxc__kvstore_init(d->kv, n, keys, data);
  if (rc == MXC_OK) rc = mxc__kvstore_pull(d->kv, n, keys, data, 0);
  mxc__free(data);
  if (rc != MXC_OK) {
    free_keys(d);
    mxc__error_prefix("fit: setting up the kvstore");
  }
  return rc;
}

static int check_same(const mxc__fit_dist *d, mxc__nn_param **ps, int n) {
  int same = n == d->n_keys;
  for (int i = 0; i < n && same; ++i) same = !strcmp(d->keys[i] + 4, ps[i]->name);
  MXC_RETURN_ERROR_IF(!same, MXC_ERR_INVALID_ARGUMENT,
                      "fit: the network has other parameters (%d) than when "
                      "its kvstore keys were made (%d)",
                      n, d->n_keys);
  return MXC_OK;
}

/* pushpull of every gradient, in place, the last parameters first:
 * backward writes the last layers' gradients first, and the store runs
 * collectives in the order they are pushed (the same on every rank), so
 * this order lets the first collectives run while backward goes on
 * through the first layers (docs/kvstore.md, "Priorities"). */
static int push_grads(mxc__fit_dist *d, mxc__nn_param **ps, int n) {
  const char **keys = mxc__calloc(n ? (size_t)n : 1, sizeof *keys);
  mxc__ndarray **grads = mxc__calloc(n ? (size_t)n : 1, sizeof *grads);
  int m = 0, rc = MXC_OK;
  if (!keys || !grads) rc = mxc__error_set(MXC_ERR_OOM, "fit: out of memory");
  for (int i = n - 1; i >= 0 && rc == MXC_OK; --i) {
    if (ps[i]->aux || !ps[i]->grad) continue;
    keys[m] = d->keys[i];
    grads[m++] = ps[i]->grad;
  }
  mxc__kv_keys k = {.strs = keys};
  if (rc == MXC_OK && m) rc = mxc__kvstore_pushpull(d->kv, m, k, grads, grads, 0);
  mxc__free(keys);
  mxc__free(grads);
  return rc;
}

int mxc__fit_dist_sum_grads(mxc__fit_dist *d, mxc__block *net) {
  if (!d) return MXC_OK;
  mxc__nn_param **ps = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__block_collect(net, &ps, &n));
  int rc = d->n_keys ? check_same(d, ps, n) : set_up(d, ps, n);
  if (rc == MXC_OK) rc = push_grads(d, ps, n);
  mxc__free(ps);
  return rc;
}
