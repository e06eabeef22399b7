/* Blocks: creation from a kind and configuration strings, reference
 * counting, children, the default initializer, forward and the depth-first
 * list of parameters (see nn.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/nn/internal.h"

/* Process-wide counts behind automatic names ("dense0", "dense1", ...). */
static atomic_int g_name_count;

static void free_strs(char **s, int n) {
  for (int i = 0; s && i < n; ++i) mxc__free(s[i]);
  mxc__free(s);
}

/* *out = copies of s[0..n) (n may be 0). */
static int dup_strs(const char *const *s, int n, char ***out) {
  char **d = mxc__calloc(n > 0 ? (size_t)n : 1, sizeof *d);
  MXC_RETURN_ERROR_IF(!d, MXC_ERR_OOM, "block: out of memory");
  for (int i = 0; i < n; ++i) {
    d[i] = mxc__strdup(s[i]);
    if (!d[i]) {
      free_strs(d, i);
      return mxc__error_set(MXC_ERR_OOM, "block: out of memory");
    }
  }
  *out = d;
  return MXC_OK;
}

static void init_clear(mxc__nn_init *in) {
  mxc__free(in->method);
  free_strs(in->keys, in->n);
  free_strs(in->vals, in->n);
  memset(in, 0, sizeof *in);
}

static int init_set(mxc__nn_init *in, const char *method, int n,
                    const char *const *keys, const char *const *vals) {
  mxc__nn_init t = {mxc__strdup(method), n, NULL, NULL};
  int rc = t.method ? MXC_OK
                    : mxc__error_set(MXC_ERR_OOM, "initialize: out of memory");
  if (rc == MXC_OK) rc = dup_strs(keys, n, &t.keys);
  if (rc == MXC_OK) rc = dup_strs(vals, n, &t.vals);
  if (rc != MXC_OK) {
    init_clear(&t);
    return rc;
  }
  init_clear(in);
  *in = t;
  return MXC_OK;
}

static void param_clear(mxc__nn_param *p) {
  mxc__free(p->name);
  mxc__free(p->init);
  mxc__ndarray_free(p->data);
  mxc__ndarray_free(p->grad);
}

static void block_destroy(mxc__block *b) {
  for (int i = 0; i < b->n_params; ++i) param_clear(&b->params[i]);
  mxc__free(b->params);
  for (int i = 0; i < b->n_children; ++i) mxc__block_release(b->children[i]);
  mxc__free(b->children);
  free_strs(b->cfg_keys, b->n_cfg);
  free_strs(b->cfg_vals, b->n_cfg);
  free_strs(b->op_keys, b->n_op);
  free_strs(b->op_vals, b->n_op);
  init_clear(&b->init);
  mxc__nn_hybrid_free(b->hybrid);
  if (b->user_free) b->user_free(b->user);
  mxc__free(b->name);
  mxc__free(b);
}

void mxc__block_retain(mxc__block *b) { atomic_fetch_add(&b->refs, 1); }

void mxc__block_release(mxc__block *b) {
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) block_destroy(b);
}

/* A new block with a name: `name`, else `kind` and the next count. */
static int block_new(const char *kind, const char *name, mxc__block **out) {
  mxc__block *b = mxc__calloc(1, sizeof *b);
  MXC_RETURN_ERROR_IF(!b, MXC_ERR_OOM, "block: out of memory");
  atomic_init(&b->refs, 1);
  if (name && *name) {
    b->name = mxc__strdup(name);
  } else {
    char buf[96];
    snprintf(buf, sizeof buf, "%s%d", kind,
             atomic_fetch_add(&g_name_count, 1));
    b->name = mxc__strdup(buf);
  }
  if (!b->name) {
    mxc__free(b);
    return mxc__error_set(MXC_ERR_OOM, "block: out of memory");
  }
  *out = b;
  return MXC_OK;
}

/* Every key must be one the kind accepts, and given once. */
static int check_keys(const mxc__nn_kind *k, int n, const char *const *keys,
                      const char *const *vals) {
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!keys[i] || !vals[i], MXC_ERR_INVALID_ARGUMENT,
                        "block '%s': keys[%d] or vals[%d] is NULL", k->name,
                        i, i);
    int known = 0;
    for (int j = 0; k->keys && k->keys[j]; ++j) {
      known = known || !strcmp(keys[i], k->keys[j]);
    }
    MXC_RETURN_ERROR_IF(!known, MXC_ERR_INVALID_ARGUMENT,
                        "block '%s': unknown key '%s'", k->name, keys[i]);
    for (int j = 0; j < i; ++j) {
      MXC_RETURN_ERROR_IF(!strcmp(keys[i], keys[j]), MXC_ERR_INVALID_ARGUMENT,
                          "block '%s': key '%s' given twice", k->name,
                          keys[i]);
    }
  }
  return MXC_OK;
}

int mxc__block_create(const char *kind, const char *name, int n,
                      const char *const *keys, const char *const *vals,
                      mxc__block **out) {
  const mxc__nn_kind *k = kind ? mxc__nn_kind_find(kind) : NULL;
  MXC_RETURN_ERROR_IF(!k, MXC_ERR_INVALID_ARGUMENT,
                      "unknown block kind '%s'; expected one of: %s",
                      kind ? kind : "(null)", mxc__nn_kind_names());
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': n is %d with keys or vals NULL", kind, n);
  MXC_FORWARD_IF_ERROR(check_keys(k, n, keys, vals));
  mxc__block *b = NULL;
  MXC_FORWARD_IF_ERROR(block_new(k->name, name, &b));
  b->kind = k;
  b->n_cfg = n; /* free_strs accepts a NULL array of n */
  int rc = dup_strs(keys, n, &b->cfg_keys);
  if (rc == MXC_OK) rc = dup_strs(vals, n, &b->cfg_vals);
  if (rc == MXC_OK && k->setup) rc = k->setup(b);
  if (rc != MXC_OK) {
    block_destroy(b);
    return rc;
  }
  *out = b;
  return MXC_OK;
}

int mxc__block_create_user(const char *name, mxc__block_fn fn, void *user,
                           void (*user_free)(void *), mxc__block **out) {
  mxc__block *b = NULL;
  int rc = block_new("block", name, &b);
  if (rc != MXC_OK) {
    if (user_free) user_free(user);
    return rc;
  }
  b->fn = fn;
  b->user = user;
  b->user_free = user_free;
  *out = b;
  return MXC_OK;
}

/* 1 when child is b or one of b's descendants. */
static int contains(const mxc__block *b, const mxc__block *child) {
  if (b == child) return 1;
  for (int i = 0; i < b->n_children; ++i) {
    if (contains(b->children[i], child)) return 1;
  }
  return 0;
}

int mxc__block_add(mxc__block *b, mxc__block *child) {
  MXC_RETURN_ERROR_IF(!b->fn && strcmp(b->kind->name, "sequential"),
                      MXC_ERR_INVALID_ARGUMENT,
                      "block '%s' is a %s: only sequential and user blocks "
                      "have children",
                      b->name, b->kind->name);
  MXC_RETURN_ERROR_IF(contains(child, b), MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': adding '%s' would make a cycle", b->name,
                      child->name);
  if (b->n_children == b->cap_children) {
    int cap = b->cap_children ? 2 * b->cap_children : 4;
    mxc__block **c = mxc__realloc(b->children, (size_t)cap * sizeof *c);
    MXC_RETURN_ERROR_IF(!c, MXC_ERR_OOM, "block '%s': out of memory",
                        b->name);
    b->children = c;
    b->cap_children = cap;
  }
  mxc__block_retain(child);
  b->children[b->n_children++] = child;
  return MXC_OK;
}

/* Drops parameter arrays so that the next forward fills them again. */
static void reset_params(mxc__block *b) {
  for (int i = 0; i < b->n_params; ++i) {
    mxc__ndarray_free(b->params[i].data);
    mxc__ndarray_free(b->params[i].grad);
    b->params[i].data = b->params[i].grad = NULL;
  }
}

int mxc__block_initialize(mxc__block *b, const char *method, int n,
                          const char *const *keys, const char *const *vals,
                          int force) {
  MXC_RETURN_ERROR_IF(!method || !*method, MXC_ERR_INVALID_ARGUMENT,
                      "initialize '%s': method is NULL or empty", b->name);
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "initialize '%s': n is %d with keys or vals NULL",
                      b->name, n);
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!keys[i] || !vals[i], MXC_ERR_INVALID_ARGUMENT,
                        "initialize '%s': keys[%d] or vals[%d] is NULL",
                        b->name, i, i);
  }
  MXC_FORWARD_IF_ERROR(init_set(&b->init, method, n, keys, vals));
  if (force) reset_params(b);
  for (int i = 0; i < b->n_children; ++i) {
    MXC_FORWARD_IF_ERROR(
        mxc__block_initialize(b->children[i], method, n, keys, vals, force));
  }
  return MXC_OK;
}

int mxc__block_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                       mxc__ndarray **out) {
  int want = b->fn ? -1 : b->kind->n_in;
  MXC_RETURN_ERROR_IF(n_in < 1 || (want > 0 && n_in != want),
                      MXC_ERR_INVALID_ARGUMENT,
                      "forward '%s': %d inputs given; expected %d", b->name,
                      n_in, want > 0 ? want : 1);
  for (int i = 0; i < n_in; ++i) {
    MXC_RETURN_ERROR_IF(!in[i], MXC_ERR_INVALID_ARGUMENT,
                        "forward '%s': input %d is NULL", b->name, i);
  }
  mxc__ndarray *y = NULL;
  int rc = mxc__nn_hybrid_wanted(b, n_in) ? mxc__nn_hybrid_forward(b, in[0], &y)
           : b->fn ? b->fn(b->user, b, n_in, in, &y)
                   : b->kind->forward(b, n_in, in, &y);
  if (rc == MXC_OK && !y) {
    rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "forward '%s': the forward function returned no "
                        "output",
                        b->name);
  }
  if (rc != MXC_OK) return rc;
  *out = y;
  return MXC_OK;
}

static int count_params(const mxc__block *b) {
  int n = b->n_params;
  for (int i = 0; i < b->n_children; ++i) n += count_params(b->children[i]);
  return n;
}

static void fill_params(mxc__block *b, mxc__nn_param **list, int *at) {
  for (int i = 0; i < b->n_params; ++i) list[(*at)++] = &b->params[i];
  for (int i = 0; i < b->n_children; ++i) {
    fill_params(b->children[i], list, at);
  }
}

int mxc__block_collect(mxc__block *b, mxc__nn_param ***out, int *n) {
  int total = count_params(b), at = 0;
  mxc__nn_param **list = mxc__calloc(total ? (size_t)total : 1, sizeof *list);
  MXC_RETURN_ERROR_IF(!list, MXC_ERR_OOM, "block '%s': out of memory",
                      b->name);
  fill_params(b, list, &at);
  *out = list;
  *n = total;
  return MXC_OK;
}

/* ---- configuration ---- */

const char *mxc__nn_cfg(const mxc__block *b, const char *key,
                        const char *dflt) {
  for (int i = 0; i < b->n_cfg; ++i) {
    if (!strcmp(b->cfg_keys[i], key)) return b->cfg_vals[i];
  }
  return dflt;
}

int mxc__nn_cfg_int(const mxc__block *b, const char *key, int64_t dflt,
                    int64_t lo, int64_t hi, int64_t *out) {
  const char *s = mxc__nn_cfg(b, key, NULL);
  if (!s) {
    *out = dflt;
    return MXC_OK;
  }
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  MXC_RETURN_ERROR_IF(end == s || *end || v < lo || v > hi,
                      MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': %s is '%s'; expected an integer in "
                      "[%lld, %lld]",
                      b->name, key, s, (long long)lo, (long long)hi);
  *out = v;
  return MXC_OK;
}

int mxc__nn_cfg_bool(const mxc__block *b, const char *key, int dflt,
                     int *out) {
  const char *s = mxc__nn_cfg(b, key, NULL);
  if (!s) {
    *out = dflt;
    return MXC_OK;
  }
  int t = !strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "True");
  int f = !strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "False");
  MXC_RETURN_ERROR_IF(!t && !f, MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': %s is '%s'; expected 1, 0, true or false",
                      b->name, key, s);
  *out = t;
  return MXC_OK;
}
