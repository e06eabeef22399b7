/* The KVStore (core/kvstore/kvstore.h): handle conversion and argument
 * checks. Core messages name the key and what was wrong; the prefix adds
 * the function the caller called. */
#include <stdio.h>

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/kvstore/kvstore.h"

#define API_KV_MAX_ARRAYS (1 << 20) /* arrays of one call */

static int api_kv(mxc_kvstore h, const char *what, mxc__kvstore **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_KVSTORE, what, &p));
  *out = p;
  return MXC_OK;
}

static void dtor_kv(void *p) { mxc__kvstore_free(p); }

int mxc_kvstore_create(const char *type, mxc_kvstore *out) {
  API_GUARD();
  const char *fn = "mxc_kvstore_create";
  API_CHECK_OUT(out, fn, "out");
  mxc__kvstore *kv;
  int rc = mxc__kvstore_create(type, &kv);
  if (rc != MXC_OK) {
    mxc__error_prefix(fn);
    return rc;
  }
  uintptr_t h;
  /* Owned: a scope open on this thread frees the store at its end. */
  rc = mxc__handle_new_owned(MXC__HANDLE_KVSTORE, kv, dtor_kv, 0, &h);
  if (rc != MXC_OK) {
    mxc__kvstore_free(kv);
    return rc;
  }
  *out = (mxc_kvstore)h;
  return MXC_OK;
}

void mxc_kvstore_free(mxc_kvstore kv) {
  API_GUARD();
  if (!kv) return;
  (void)mxc__handle_free((uintptr_t)kv, MXC__HANDLE_KVSTORE,
                         "mxc_kvstore_free: kv", dtor_kv);
}

int mxc_kvstore_type(mxc_kvstore kv, const char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_kvstore_type", "out");
  mxc__kvstore *k;
  MXC_FORWARD_IF_ERROR(api_kv(kv, "mxc_kvstore_type: kv", &k));
  *out = mxc__kvstore_type(k);
  return MXC_OK;
}

int mxc_kvstore_rank(mxc_kvstore kv, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_kvstore_rank", "out");
  mxc__kvstore *k;
  MXC_FORWARD_IF_ERROR(api_kv(kv, "mxc_kvstore_rank: kv", &k));
  *out = mxc__kvstore_rank(k);
  return MXC_OK;
}

int mxc_kvstore_num_workers(mxc_kvstore kv, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_kvstore_num_workers", "out");
  mxc__kvstore *k;
  MXC_FORWARD_IF_ERROR(api_kv(kv, "mxc_kvstore_num_workers: kv", &k));
  *out = mxc__kvstore_num_workers(k);
  return MXC_OK;
}

int mxc_kvstore_barrier(mxc_kvstore kv) {
  API_GUARD();
  mxc__kvstore *k;
  MXC_FORWARD_IF_ERROR(api_kv(kv, "mxc_kvstore_barrier: kv", &k));
  int rc = mxc__kvstore_barrier(k);
  if (rc != MXC_OK) mxc__error_prefix("mxc_kvstore_barrier");
  return rc;
}

/* ---- arrays and keys of a call ---- */

static int check_keys(int n, const int64_t *int_keys,
                      const char *const *str_keys, const void *arrays,
                      const char *fn) {
  MXC_RETURN_ERROR_IF(n < 0 || n > API_KV_MAX_ARRAYS, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d; expected 0 <= n <= %d", fn, n,
                      API_KV_MAX_ARRAYS);
  MXC_RETURN_ERROR_IF(n > 0 && !arrays, MXC_ERR_INVALID_ARGUMENT,
                      "%s: the arrays are NULL for n = %d", fn, n);
  MXC_RETURN_ERROR_IF(n > 0 && !int_keys == !str_keys,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: int_keys and str_keys are both %s; expected "
                      "exactly one of them",
                      fn, int_keys ? "set" : "NULL");
  return MXC_OK;
}

/* *out = a new list of the internal arrays of hs[0..n) (mxc__free it). */
static int api_arrays(const mxc_ndarray *hs, int n, const char *fn,
                      const char *name, mxc__ndarray ***out) {
  mxc__ndarray **a = mxc__calloc(n ? (size_t)n : 1, sizeof *a);
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_OOM, "%s: out of memory for %d arrays", fn,
                      n);
  for (int i = 0; i < n; ++i) {
    char what[96];
    snprintf(what, sizeof what, "%s: %s[%d]", fn, name, i);
    int rc = api_array(hs[i], what, &a[i]);
    if (rc != MXC_OK) {
      mxc__free(a);
      return rc;
    }
  }
  *out = a;
  return MXC_OK;
}

/* The store, the keys and the internal arrays of a call. */
static int api_call(mxc_kvstore kv, int n, const int64_t *int_keys,
                    const char *const *str_keys, const mxc_ndarray *hs,
                    const char *fn, mxc__kvstore **out_kv,
                    mxc__ndarray ***out_arrays) {
  char what[64];
  snprintf(what, sizeof what, "%s: kv", fn);
  MXC_FORWARD_IF_ERROR(api_kv(kv, what, out_kv));
  MXC_FORWARD_IF_ERROR(check_keys(n, int_keys, str_keys, hs, fn));
  return api_arrays(hs, n, fn, "arrays", out_arrays);
}

static mxc__kv_keys keys_of(const int64_t *int_keys,
                            const char *const *str_keys) {
  mxc__kv_keys k = {str_keys ? NULL : int_keys, str_keys};
  return k;
}

/* rc, with fn prefixed to the message on failure. */
static int prefixed(int rc, const char *fn) {
  if (rc != MXC_OK) mxc__error_prefix(fn);
  return rc;
}

int mxc_kvstore_init(mxc_kvstore kv, int n, const int64_t *int_keys,
                     const char *const *str_keys, const mxc_ndarray *vals) {
  API_GUARD();
  const char *fn = "mxc_kvstore_init";
  mxc__kvstore *k;
  mxc__ndarray **v;
  MXC_FORWARD_IF_ERROR(api_call(kv, n, int_keys, str_keys, vals, fn, &k, &v));
  int rc = mxc__kvstore_init(k, n, keys_of(int_keys, str_keys), v);
  mxc__free(v);
  return prefixed(rc, fn);
}

int mxc_kvstore_push(mxc_kvstore kv, int n, const int64_t *int_keys,
                     const char *const *str_keys, const mxc_ndarray *vals,
                     int priority) {
  API_GUARD();
  const char *fn = "mxc_kvstore_push";
  mxc__kvstore *k;
  mxc__ndarray **v;
  MXC_FORWARD_IF_ERROR(api_call(kv, n, int_keys, str_keys, vals, fn, &k, &v));
  int rc = mxc__kvstore_push(k, n, keys_of(int_keys, str_keys), v, priority);
  mxc__free(v);
  return prefixed(rc, fn);
}

int mxc_kvstore_pull(mxc_kvstore kv, int n, const int64_t *int_keys,
                     const char *const *str_keys, const mxc_ndarray *outs,
                     int priority) {
  API_GUARD();
  const char *fn = "mxc_kvstore_pull";
  mxc__kvstore *k;
  mxc__ndarray **o;
  MXC_FORWARD_IF_ERROR(api_call(kv, n, int_keys, str_keys, outs, fn, &k, &o));
  int rc = mxc__kvstore_pull(k, n, keys_of(int_keys, str_keys), o, priority);
  mxc__free(o);
  return prefixed(rc, fn);
}

int mxc_kvstore_pushpull(mxc_kvstore kv, int n, const int64_t *int_keys,
                         const char *const *str_keys, const mxc_ndarray *vals,
                         const mxc_ndarray *outs, int priority) {
  API_GUARD();
  const char *fn = "mxc_kvstore_pushpull";
  mxc__kvstore *k;
  mxc__ndarray **v, **o;
  MXC_FORWARD_IF_ERROR(api_call(kv, n, int_keys, str_keys, vals, fn, &k, &v));
  int rc = check_keys(n, int_keys, str_keys, outs, fn);
  if (rc == MXC_OK) rc = api_arrays(outs, n, fn, "outs", &o);
  if (rc != MXC_OK) {
    mxc__free(v);
    return rc;
  }
  rc = mxc__kvstore_pushpull(k, n, keys_of(int_keys, str_keys), v, o,
                             priority);
  mxc__free(v);
  mxc__free(o);
  return prefixed(rc, fn);
}

int mxc_kvstore_set_optimizer(mxc_kvstore kv, const char *name,
                              const char *const *keys,
                              const char *const *vals, int n_params) {
  API_GUARD();
  const char *fn = "mxc_kvstore_set_optimizer";
  mxc__kvstore *k;
  MXC_FORWARD_IF_ERROR(api_kv(kv, "mxc_kvstore_set_optimizer: kv", &k));
  return prefixed(mxc__kvstore_set_optimizer(k, name, keys, vals, n_params),
                  fn);
}

/* ---- the updater callback ---- */

/* The caller's function behind the core's callback. Retired through the
 * handle guard when replaced: a push in another thread may be calling it
 * (every push runs inside a guard). */
typedef struct api_updater {
  mxc_kvstore_updater_fn fn;
  void *ud;
  mxc_free_fn free_fn; /* NULL: the caller keeps ud */
  mxc__retire_node retire;
} api_updater;

/* Runs once no guard that could be calling fn is left (the retirement's
 * promise), which is what mxc_kvstore_set_updater_ex promises free_fn. */
static void updater_dtor(void *p) {
  api_updater *u = p;
  if (u->free_fn) u->free_fn(u->ud);
  mxc__free(u);
}

static void updater_retire(void *p) {
  api_updater *u = p;
  mxc__handle_retire(&u->retire, u, updater_dtor);
}

/* Handles over the store's arrays for the call; freed afterwards. */
static int call_updater(void *p, const mxc__kv_key *key, mxc__ndarray *recv,
                        mxc__ndarray *local) {
  api_updater *u = p;
  mxc__ndarray *r = NULL, *l = NULL;
  mxc_ndarray hr = NULL, hl = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(recv, &r));
  MXC_FORWARD_IF_ERROR(api_wrap_array(r, &hr));
  int rc = mxc__ndarray_clone_view(local, &l);
  if (rc == MXC_OK) rc = api_wrap_array(l, &hl);
  if (rc == MXC_OK) rc = u->fn(key->str, key->num, hr, hl, u->ud);
  mxc_ndarray_free(hr);
  mxc_ndarray_free(hl);
  return rc;
}

int mxc_kvstore_set_updater(mxc_kvstore kv, mxc_kvstore_updater_fn fn,
                            void *user_data) {
  return mxc_kvstore_set_updater_ex(kv, fn, user_data, NULL);
}

int mxc_kvstore_set_updater_ex(mxc_kvstore kv, mxc_kvstore_updater_fn fn,
                               void *user_data, mxc_free_fn free_fn) {
  API_GUARD();
  mxc__kvstore *k;
  api_updater *u = NULL;
  int rc = api_kv(kv, "mxc_kvstore_set_updater: kv", &k);
  if (rc == MXC_OK && !fn) rc = mxc__kvstore_set_updater(k, NULL, NULL, NULL);
  if (rc != MXC_OK || !fn) {
    if (free_fn) free_fn(user_data); /* removed, or never taken */
    return rc;
  }
  u = mxc__calloc(1, sizeof *u);
  if (!u) {
    if (free_fn) free_fn(user_data);
    return mxc__error_set(MXC_ERR_OOM,
                          "mxc_kvstore_set_updater: out of memory");
  }
  *u = (api_updater){.fn = fn, .ud = user_data, .free_fn = free_fn};
  return mxc__kvstore_set_updater(k, call_updater, u, updater_retire);
}
