/* Layers (core/nn): handle conversion and argument checks, and the
 * trampoline that runs a user block's forward function on public
 * handles. */
#include <string.h>

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/nn/fit.h"
#include "core/nn/nn.h"

static int api_block(mxc_block h, const char *what, mxc__block **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_BLOCK, what, &p));
  *out = p;
  return MXC_OK;
}

static void block_dtor(void *b) { mxc__block_release(b); }

/* A new handle holding one reference of b (dropped on failure), in the
 * calling thread's scope (core/base/scope.h). */
static int wrap_block(mxc__block *b, mxc_block *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_BLOCK, b, block_dtor, 0, &h);
  if (rc != MXC_OK) {
    mxc__block_release(b);
    return rc;
  }
  *out = (mxc_block)h;
  return MXC_OK;
}

static int api_optimizer(mxc_optimizer h, const char *what,
                         mxc__optimizer **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_OPTIMIZER, what, &p));
  *out = p;
  return MXC_OK;
}

static void optimizer_dtor(void *o) { mxc__optimizer_free(o); }

/* Prefixes the message of a failed core call with the API function. */
static int named(int rc, const char *fn) {
  if (rc != MXC_OK) mxc__error_prefix(fn);
  return rc;
}

int mxc_block_create(const char *kind, const char *name,
                     const char *const *keys, const char *const *vals, int n,
                     mxc_block *out) {
  API_GUARD();
  static const char fn[] = "mxc_block_create";
  API_CHECK_OUT(out, fn, "out");
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(
      named(mxc__block_create(kind, name, n, keys, vals, &b), fn));
  return wrap_block(b, out);
}

/* ---- user blocks ---- */

typedef struct user_block {
  mxc_block_forward_fn fn;
  void *user_data;
  mxc_free_fn free_fn;
} user_block;

static void user_block_free(void *p) {
  user_block *u = p;
  if (u->free_fn) u->free_fn(u->user_data);
  mxc__free(u);
}

/* Lends in[0..n) to the caller as handles (the same objects, so their
 * autograd histories go along). */
static int lend_arrays(mxc__ndarray *const *in, int n, mxc_ndarray *h) {
  for (int i = 0; i < n; ++i) {
    uintptr_t v;
    int rc = mxc__handle_new(MXC__HANDLE_NDARRAY, in[i], &v);
    if (rc != MXC_OK) return rc;
    h[i] = (mxc_ndarray)v;
  }
  return MXC_OK;
}

/* Takes lent handles back without freeing their objects. */
static void take_back(mxc_ndarray *h, int n) {
  void *obj;
  for (int i = 0; i < n; ++i) {
    if (h[i]) {
      (void)mxc__handle_release((uintptr_t)h[i], MXC__HANDLE_NDARRAY,
                                "user block input", &obj);
    }
  }
}

/* The user's output handle becomes the internal array it names. */
static int take_output(mxc_ndarray h, mxc__ndarray **out) {
  void *obj = NULL;
  int rc = mxc__handle_release((uintptr_t)h, MXC__HANDLE_NDARRAY,
                               "the forward function's output", &obj);
  if (rc != MXC_OK) return rc;
  *out = obj;
  return MXC_OK;
}

/* The caller's function, with its own message when it set one
 * (mxc_set_last_error, or a failing mxc call) and a plain one otherwise:
 * cleared first so that an older failure is never reported as its. */
static int call_user(user_block *u, mxc_block me, int n_in,
                     const mxc_ndarray *h, mxc_ndarray *y) {
  mxc__error_clear();
  int rc = u->fn(u->user_data, me, n_in, h, y);
  if (rc != MXC_OK && mxc__error_code() != rc) {
    mxc__error_set(rc, "the forward function returned %d (%s)", rc,
                   mxc_error_name(rc));
  }
  return rc;
}

static int user_forward(void *p, mxc__block *self, int n_in,
                        mxc__ndarray *const *in, mxc__ndarray **out) {
  user_block *u = p;
  mxc_ndarray *h = mxc__calloc((size_t)n_in, sizeof *h);
  MXC_RETURN_ERROR_IF(!h, MXC_ERR_OOM, "forward: out of memory");
  mxc_block me = NULL;
  mxc__block_retain(self);
  int rc = wrap_block(self, &me);
  if (rc == MXC_OK) rc = lend_arrays(in, n_in, h);
  mxc_ndarray y = NULL;
  if (rc == MXC_OK) rc = call_user(u, me, n_in, h, &y);
  take_back(h, n_in);
  mxc__free(h);
  mxc_block_free(me);
  if (rc == MXC_OK && y) rc = take_output(y, out);
  return rc;
}

int mxc_block_create_user(const char *name, mxc_block_forward_fn fn,
                          void *user_data, mxc_free_fn free_fn,
                          mxc_block *out) {
  API_GUARD();
  static const char fn_name[] = "mxc_block_create_user";
  int rc = out ? MXC_OK
               : mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                                "%s: out-parameter 'out' is NULL", fn_name);
  if (rc == MXC_OK && !fn) {
    rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT, "%s: fn is NULL", fn_name);
  }
  user_block *u = rc == MXC_OK ? mxc__calloc(1, sizeof *u) : NULL;
  if (rc == MXC_OK && !u) {
    rc = mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn_name);
  }
  if (rc != MXC_OK) {
    if (free_fn) free_fn(user_data); /* as documented: also on failure */
    return rc;
  }
  *u = (user_block){fn, user_data, free_fn};
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(named(
      mxc__block_create_user(name, user_forward, u, user_block_free, &b),
      fn_name));
  return wrap_block(b, out);
}

void mxc_block_free(mxc_block block) {
  API_GUARD();
  if (!block) return;
  (void)mxc__handle_free((uintptr_t)block, MXC__HANDLE_BLOCK,
                         "mxc_block_free: block", block_dtor);
}

int mxc_block_add(mxc_block block, mxc_block child) {
  API_GUARD();
  mxc__block *b = NULL, *c = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_add: block", &b));
  MXC_FORWARD_IF_ERROR(api_block(child, "mxc_block_add: child", &c));
  return named(mxc__block_add(b, c), "mxc_block_add");
}

int mxc_block_num_children(mxc_block block, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_block_num_children", "out");
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_num_children: block", &b));
  *out = b->n_children;
  return MXC_OK;
}

int mxc_block_child(mxc_block block, int index, mxc_block *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_block_child", "out");
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_child: block", &b));
  MXC_RETURN_ERROR_IF(index < 0 || index >= b->n_children,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_block_child: index is %d; block '%s' has %d "
                      "children",
                      index, b->name, b->n_children);
  mxc__block_retain(b->children[index]);
  return wrap_block(b->children[index], out);
}

int mxc_block_name(mxc_block block, const char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_block_name", "out");
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_name: block", &b));
  *out = b->name;
  return MXC_OK;
}

int mxc_block_initialize(mxc_block block, const char *method,
                         const char *const *keys, const char *const *vals,
                         int n, int force) {
  API_GUARD();
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_initialize: block", &b));
  return named(mxc__block_initialize(b, method, n, keys, vals, force),
               "mxc_block_initialize");
}

int mxc_block_forward(mxc_block block, int n_in, const mxc_ndarray *in,
                      mxc_ndarray *out) {
  API_GUARD();
  static const char fn[] = "mxc_block_forward";
  API_CHECK_OUT(out, fn, "out");
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_forward: block", &b));
  MXC_RETURN_ERROR_IF(n_in < 1 || n_in > 64 || !in, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_in is %d with in %s; expected 1 to 64 inputs",
                      fn, n_in, in ? "non-NULL" : "NULL");
  mxc__ndarray *x[64];
  for (int i = 0; i < n_in; ++i) {
    MXC_FORWARD_IF_ERROR(api_array(in[i], "mxc_block_forward: in[i]", &x[i]));
  }
  mxc__ndarray *y = NULL;
  MXC_FORWARD_IF_ERROR(named(mxc__block_forward(b, n_in, x, &y), fn));
  return api_wrap_array(y, out);
}

/* *out = parameter index of block (bounds checked). */
static int param_at(mxc_block block, int index, const char *fn,
                    mxc__nn_param **out) {
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, fn, &b));
  mxc__nn_param **ps = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__block_collect(b, &ps, &n));
  mxc__nn_param *p = index >= 0 && index < n ? ps[index] : NULL;
  mxc__free(ps);
  MXC_RETURN_ERROR_IF(!p, MXC_ERR_INVALID_ARGUMENT,
                      "%s: index is %d; block '%s' has %d parameters", fn,
                      index, b->name, n);
  *out = p;
  return MXC_OK;
}

int mxc_block_num_params(mxc_block block, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_block_num_params", "out");
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_num_params: block", &b));
  mxc__nn_param **ps = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__block_collect(b, &ps, &n));
  mxc__free(ps);
  *out = n;
  return MXC_OK;
}

int mxc_block_param_name(mxc_block block, int index, const char **out_name) {
  API_GUARD();
  API_CHECK_OUT(out_name, "mxc_block_param_name", "out_name");
  mxc__nn_param *p = NULL;
  MXC_FORWARD_IF_ERROR(param_at(block, index, "mxc_block_param_name", &p));
  *out_name = p->name;
  return MXC_OK;
}

/* A new handle on a view of a (p's data or gradient). */
static int param_view(const mxc__nn_param *p, const mxc__ndarray *a,
                      const char *fn, mxc_ndarray *out) {
  MXC_RETURN_ERROR_IF(!p->data, MXC_ERR_INVALID_ARGUMENT,
                      "%s: parameter '%s' is not made yet (run a forward "
                      "pass first)",
                      fn, p->name);
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_NOT_FOUND,
                      "%s: parameter '%s' is an auxiliary state without a "
                      "gradient",
                      fn, p->name);
  mxc__ndarray *v = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(a, &v));
  return api_wrap_array(v, out);
}

int mxc_block_param(mxc_block block, int index, mxc_ndarray *out) {
  API_GUARD();
  static const char fn[] = "mxc_block_param";
  API_CHECK_OUT(out, fn, "out");
  mxc__nn_param *p = NULL;
  MXC_FORWARD_IF_ERROR(param_at(block, index, fn, &p));
  return param_view(p, p->data, fn, out);
}

int mxc_block_param_grad(mxc_block block, int index, mxc_ndarray *out) {
  API_GUARD();
  static const char fn[] = "mxc_block_param_grad";
  API_CHECK_OUT(out, fn, "out");
  mxc__nn_param *p = NULL;
  MXC_FORWARD_IF_ERROR(param_at(block, index, fn, &p));
  return param_view(p, p->grad, fn, out);
}

int mxc_block_save_params(mxc_block block, const char *path) {
  API_GUARD();
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_save_params: block", &b));
  MXC_RETURN_ERROR_IF(!path || !*path, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_block_save_params: path is NULL or empty");
  return named(mxc__block_save(b, path), "mxc_block_save_params");
}

int mxc_block_load_params(mxc_block block, const char *path) {
  API_GUARD();
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_load_params: block", &b));
  MXC_RETURN_ERROR_IF(!path || !*path, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_block_load_params: path is NULL or empty");
  return named(mxc__block_load(b, path), "mxc_block_load_params");
}

int mxc_block_hybridize(mxc_block block, int active) {
  API_GUARD();
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_hybridize: block", &b));
  return named(mxc__block_hybridize(b, active), "mxc_block_hybridize");
}

int mxc_block_export(mxc_block block, const char *prefix, int epoch) {
  API_GUARD();
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_block_export: block", &b));
  MXC_RETURN_ERROR_IF(!prefix || !*prefix || epoch < 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_block_export: prefix is %s and epoch %d; expected "
                      "a non-empty prefix and epoch >= 0",
                      prefix ? (*prefix ? "given" : "empty") : "NULL", epoch);
  return named(mxc__block_export(b, prefix, epoch), "mxc_block_export");
}

/* ---- optimizers ---- */

int mxc_optimizer_create(mxc_block block, const char *update_op,
                         const char *const *keys, const char *const *vals,
                         int n, mxc_optimizer *out) {
  API_GUARD();
  static const char fn[] = "mxc_optimizer_create";
  API_CHECK_OUT(out, fn, "out");
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(api_block(block, "mxc_optimizer_create: block", &b));
  mxc__optimizer *o = NULL;
  MXC_FORWARD_IF_ERROR(
      named(mxc__optimizer_create(b, update_op, n, keys, vals, &o), fn));
  uintptr_t h;
  int rc =
      mxc__handle_new_owned(MXC__HANDLE_OPTIMIZER, o, optimizer_dtor, 0, &h);
  if (rc != MXC_OK) {
    mxc__optimizer_free(o);
    return rc;
  }
  *out = (mxc_optimizer)h;
  return MXC_OK;
}

void mxc_optimizer_free(mxc_optimizer opt) {
  API_GUARD();
  if (!opt) return;
  (void)mxc__handle_free((uintptr_t)opt, MXC__HANDLE_OPTIMIZER,
                         "mxc_optimizer_free: opt", optimizer_dtor);
}

int mxc_optimizer_step(mxc_optimizer opt, int64_t batch_size) {
  API_GUARD();
  mxc__optimizer *o = NULL;
  MXC_FORWARD_IF_ERROR(api_optimizer(opt, "mxc_optimizer_step: opt", &o));
  return named(mxc__optimizer_step(o, batch_size), "mxc_optimizer_step");
}

int mxc_optimizer_set_lr(mxc_optimizer opt, double lr) {
  API_GUARD();
  mxc__optimizer *o = NULL;
  MXC_FORWARD_IF_ERROR(api_optimizer(opt, "mxc_optimizer_set_lr: opt", &o));
  return named(mxc__optimizer_set_lr(o, lr), "mxc_optimizer_set_lr");
}

int mxc_optimizer_get_lr(mxc_optimizer opt, double *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_optimizer_get_lr", "out");
  mxc__optimizer *o = NULL;
  MXC_FORWARD_IF_ERROR(api_optimizer(opt, "mxc_optimizer_get_lr: opt", &o));
  *out = mxc__optimizer_lr(o);
  return MXC_OK;
}

/* ---- fit ---- */

static int api_fit(mxc_fit h, const char *what, mxc__fit **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(mxc__handle_get((uintptr_t)h, MXC__HANDLE_FIT, what, &p));
  *out = p;
  return MXC_OK;
}

static void fit_dtor(void *f) { mxc__fit_free(f); }

int mxc_fit_create(mxc_block net, mxc_block loss, mxc_optimizer opt,
                   const char *const *keys, const char *const *vals, int n,
                   mxc_fit *out) {
  API_GUARD();
  static const char fn[] = "mxc_fit_create";
  API_CHECK_OUT(out, fn, "out");
  mxc__block *b = NULL, *l = NULL;
  mxc__optimizer *o = NULL;
  MXC_FORWARD_IF_ERROR(api_block(net, "mxc_fit_create: net", &b));
  MXC_FORWARD_IF_ERROR(api_block(loss, "mxc_fit_create: loss", &l));
  MXC_FORWARD_IF_ERROR(api_optimizer(opt, "mxc_fit_create: opt", &o));
  mxc__fit *f = NULL;
  MXC_FORWARD_IF_ERROR(named(mxc__fit_create(b, l, o, n, keys, vals, &f), fn));
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_FIT, f, fit_dtor, 0, &h);
  if (rc != MXC_OK) {
    mxc__fit_free(f);
    return rc;
  }
  *out = (mxc_fit)h;
  return MXC_OK;
}

void mxc_fit_free(mxc_fit fit) {
  API_GUARD();
  if (!fit) return;
  (void)mxc__handle_free((uintptr_t)fit, MXC__HANDLE_FIT, "mxc_fit_free: fit",
                         fit_dtor);
}

typedef struct fit_listener {
  mxc_fit_listener_fn fn;
  void *user_data;
  mxc_free_fn free_fn;
} fit_listener;

static void fit_listener_free(void *p) {
  fit_listener *l = p;
  if (l->free_fn) l->free_fn(l->user_data);
  mxc__free(l);
}

/* Lends the fit to the listener as a handle for the call. */
static int fit_listener_call(void *p, int event, mxc__fit *f) {
  fit_listener *l = p;
  uintptr_t h;
  MXC_FORWARD_IF_ERROR(mxc__handle_new(MXC__HANDLE_FIT, f, &h));
  int rc = l->fn(l->user_data, event, (mxc_fit)h);
  void *obj;
  (void)mxc__handle_release(h, MXC__HANDLE_FIT, "listener", &obj);
  return rc;
}

int mxc_fit_add_listener(mxc_fit fit, mxc_fit_listener_fn fn, void *user_data,
                         mxc_free_fn free_fn) {
  API_GUARD();
  static const char name[] = "mxc_fit_add_listener";
  mxc__fit *f = NULL;
  int rc = api_fit(fit, "mxc_fit_add_listener: fit", &f);
  if (rc == MXC_OK && !fn) {
    rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT, "%s: fn is NULL", name);
  }
  fit_listener *l = rc == MXC_OK ? mxc__calloc(1, sizeof *l) : NULL;
  if (rc == MXC_OK && !l) rc = mxc__error_set(MXC_ERR_OOM, "%s: out of memory", name);
  if (rc != MXC_OK) {
    if (free_fn) free_fn(user_data); /* as documented */
    return rc;
  }
  *l = (fit_listener){fn, user_data, free_fn};
  return named(mxc__fit_add_listener(f, fit_listener_call, l, fit_listener_free),
               name);
}

int mxc_fit_run(mxc_fit fit, mxc_data_iter train, mxc_data_iter val) {
  API_GUARD();
  mxc__fit *f = NULL;
  void *t = NULL, *v = NULL;
  MXC_FORWARD_IF_ERROR(api_fit(fit, "mxc_fit_run: fit", &f));
  MXC_FORWARD_IF_ERROR(mxc__handle_get((uintptr_t)train, MXC__HANDLE_DATA_ITER,
                                       "mxc_fit_run: train", &t));
  if (val) {
    MXC_FORWARD_IF_ERROR(mxc__handle_get((uintptr_t)val, MXC__HANDLE_DATA_ITER,
                                         "mxc_fit_run: val", &v));
  }
  return named(mxc__fit_run(f, t, v), "mxc_fit_run");
}

int mxc_fit_set_kvstore(mxc_fit fit, mxc_kvstore kv) {
  API_GUARD();
  mxc__fit *f = NULL;
  void *k = NULL;
  MXC_FORWARD_IF_ERROR(api_fit(fit, "mxc_fit_set_kvstore: fit", &f));
  if (kv) {
    MXC_FORWARD_IF_ERROR(mxc__handle_get((uintptr_t)kv, MXC__HANDLE_KVSTORE,
                                         "mxc_fit_set_kvstore: kv", &k));
  }
  return named(mxc__fit_set_kvstore(f, k), "mxc_fit_set_kvstore");
}

int mxc_fit_value(mxc_fit fit, const char *name, double *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_fit_value", "out");
  mxc__fit *f = NULL;
  MXC_FORWARD_IF_ERROR(api_fit(fit, "mxc_fit_value: fit", &f));
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_fit_value: name is NULL");
  return named(mxc__fit_value(f, name, out), "mxc_fit_value");
}

int mxc_fit_stop(mxc_fit fit) {
  API_GUARD();
  mxc__fit *f = NULL;
  MXC_FORWARD_IF_ERROR(api_fit(fit, "mxc_fit_stop: fit", &f));
  mxc__fit_stop(f);
  return MXC_OK;
}

int mxc_fit_save_checkpoint(mxc_fit fit, const char *path) {
  API_GUARD();
  mxc__fit *f = NULL;
  MXC_FORWARD_IF_ERROR(api_fit(fit, "mxc_fit_save_checkpoint: fit", &f));
  MXC_RETURN_ERROR_IF(!path || !*path, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_fit_save_checkpoint: path is NULL or empty");
  return named(mxc__fit_save(f, path), "mxc_fit_save_checkpoint");
}

int mxc_fit_load_checkpoint(mxc_fit fit, const char *path) {
  API_GUARD();
  mxc__fit *f = NULL;
  MXC_FORWARD_IF_ERROR(api_fit(fit, "mxc_fit_load_checkpoint: fit", &f));
  MXC_RETURN_ERROR_IF(!path || !*path, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_fit_load_checkpoint: path is NULL or empty");
  return named(mxc__fit_load(f, path), "mxc_fit_load_checkpoint");
}
