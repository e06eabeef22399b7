/* Training checkpoints: one file (mxc__ndarray_save's format) with every
 * parameter ("param:NAME"), every optimizer state ("state:NAME:K"), the
 * progress ("fit:progress", int64: epochs done, updates done, the random
 * stream's seed and position, epochs without improvement) and
 * "fit:values" (float64: the schedule's base rate, the best monitored
 * value). A run resumed from it continues exactly as the uninterrupted
 * run would (same updates, same random numbers). */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/ndarray/io.h"
#include "core/nn/fit.h"
#include "core/nn/internal.h"
#include "core/resource/random.h"


/* Names and arrays being written: entries own their names. */
typedef struct ckpt {
  int n, cap;
  char **names;
  mxc__ndarray **arrays;
  int *owned; /* 1: the array was made here (free it) */
} ckpt;

static void ckpt_free(ckpt *c) {
  for (int i = 0; i < c->n; ++i) {
    mxc__free(c->names[i]);
    if (c->owned[i]) mxc__ndarray_free(c->arrays[i]);
  }
  mxc__free(c->names);
  mxc__free(c->arrays);
  mxc__free(c->owned);
}

static int ckpt_add(ckpt *c, char *name, mxc__ndarray *a, int owned) {
  if (!name) {
    if (owned) mxc__ndarray_free(a);
    return mxc__error_set(MXC_ERR_OOM, "checkpoint: out of memory");
  }
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 16;
    char **n = mxc__realloc(c->names, (size_t)cap * sizeof *n);
    if (n) c->names = n;
    mxc__ndarray **a2 = n ? mxc__realloc(c->arrays, (size_t)cap * sizeof *a2) : NULL;
    if (a2) c->arrays = a2;
    int *o = a2 ? mxc__realloc(c->owned, (size_t)cap * sizeof *o) : NULL;
    if (o) c->owned = o;
    if (!o) {
      mxc__free(name);
      if (owned) mxc__ndarray_free(a);
      return mxc__error_set(MXC_ERR_OOM, "checkpoint: out of memory");
    }
    c->cap = cap;
  }
  c->names[c->n] = name;
  c->arrays[c->n] = a;
  c->owned[c->n++] = owned;
  return MXC_OK;
}

static char *join(const char *a, const char *b, int k) {
  size_t len = strlen(a) + strlen(b) + 16;
  char *s = mxc__malloc(len);
  if (!s) return NULL;
  if (k < 0) snprintf(s, len, "%s%s", a, b);
  else snprintf(s, len, "%s%s:%d", a, b, k);
  return s;
}

/* A new host-filled 1-d array of n values of dtype. */
static int small_array(int dtype, const void *v, int n, mxc__ndarray **out) {
  mxc__shape s = {1, {n}};
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&s, dtype, cpu, 0, out));
  int rc = mxc__ndarray_copy_from_host(*out, v, (size_t)n * 8);
  if (rc != MXC_OK) mxc__ndarray_free(*out);
  return rc;
}

/* Trainable parameters (those with optimizer states), in order. */
static int trainable(mxc__nn_param **ps, int n, mxc__nn_param **out) {
  int k = 0;
  for (int i = 0; i < n; ++i) {
    if (!ps[i]->aux) out[k++] = ps[i];
  }
  return k;
}

static int add_params(ckpt *c, mxc__optimizer *o, mxc__nn_param **ps,
                      int n, mxc__nn_param **tr) {
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!ps[i]->data, MXC_ERR_INVALID_ARGUMENT,
                        "checkpoint: parameter '%s' is not made yet",
                        ps[i]->name);
    MXC_FORWARD_IF_ERROR(ckpt_add(c, join("param:", ps[i]->name, -1),
                                  ps[i]->data, 0));
  }
  MXC_FORWARD_IF_ERROR(mxc__optimizer_prepare(o));
  int nt = trainable(ps, n, tr);
  for (int i = 0; i < nt; ++i) {
    for (int k = 0; k < mxc__optimizer_n_states(o); ++k) {
      MXC_FORWARD_IF_ERROR(ckpt_add(c, join("state:", tr[i]->name, k),
                                    mxc__optimizer_state(o, i, k), 0));
    }
  }
  return MXC_OK;
}

static int add_progress(ckpt *c, mxc__fit *f) {
  int64_t p[5];
  double v[2];
  mxc__fit_progress(f, p, v, 1);
  mxc__ndarray *a = NULL, *b = NULL;
  MXC_FORWARD_IF_ERROR(small_array(MXC_DTYPE_INT64, p, 5, &a));
  MXC_FORWARD_IF_ERROR(ckpt_add(c, mxc__strdup("fit:progress"), a, 1));
  MXC_FORWARD_IF_ERROR(small_array(MXC_DTYPE_FLOAT64, v, 2, &b));
  return ckpt_add(c, mxc__strdup("fit:values"), b, 1);
}

int mxc__fit_save_parts(mxc__fit *f, mxc__block *net, mxc__optimizer *o,
                        const char *path) {
  mxc__nn_param **ps = NULL, **tr = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__block_collect(net, &ps, &n));
  tr = mxc__calloc(n ? (size_t)n : 1, sizeof *tr);
  ckpt c = {0};
  int rc = tr ? add_params(&c, o, ps, n, tr)
              : mxc__error_set(MXC_ERR_OOM, "checkpoint: out of memory");
  if (rc == MXC_OK) rc = add_progress(&c, f);
  if (rc == MXC_OK) {
    rc = mxc__ndarray_save(path, c.arrays, (const char *const *)c.names, c.n);
  }
  ckpt_free(&c);
  mxc__free(tr);
  mxc__free(ps);
  return rc;
}

/* ---- load ---- */

static const mxc__ndarray *find(const mxc__ndarray_list *l, const char *name) {
  for (int i = 0; i < l->n; ++i) {
    if (!strcmp(l->names[i], name)) return l->arrays[i];
  }
  return NULL;
}

/* The entry `name` (owned; freed here) of l: with like, like's shape and
 * dtype; else with n > 0, n values of dtype (1-d); else any dense float
 * array. */
static int entry(const char *path, const mxc__ndarray_list *l, char *name,
                 const mxc__ndarray *like, int dtype, int n,
                 const mxc__ndarray **out) {
  const mxc__ndarray *a = name ? find(l, name) : NULL;
  int ok = a && a->stype == MXC_STYPE_DEFAULT;
  if (ok && like) {
    ok = mxc__shape_equal(&a->shape, &like->shape) && a->dtype == like->dtype;
  } else if (ok && n > 0) {
    ok = a->shape.ndim == 1 && a->shape.dims[0] == n && a->dtype == dtype;
  } else if (ok) {
    ok = a->dtype == MXC_DTYPE_FLOAT32 || a->dtype == MXC_DTYPE_FLOAT64;
  }
  int rc = ok ? MXC_OK
              : mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                               "checkpoint '%s': '%s' is %s; it does not fit "
                               "this network and optimizer",
                               path, name ? name : "(out of memory)",
                               a ? "of another shape or dtype" : "missing");
  mxc__free(name);
  if (rc == MXC_OK) *out = a;
  return rc;
}

/* Checks every entry the network needs before anything changes:
 * src[0..n) the parameters', then nt * ns optimizer states. */
static int check_all(const char *path, const mxc__ndarray_list *l,
                     mxc__nn_param **ps, int n, int ns,
                     const mxc__ndarray **src) {
  int t = 0;
  for (int i = 0; i < n; ++i) {
    MXC_FORWARD_IF_ERROR(entry(path, l, join("param:", ps[i]->name, -1),
                               ps[i]->data, 0, 0, &src[i]));
  }
  for (int i = 0; i < n; ++i) {
    if (ps[i]->aux) continue;
    for (int k = 0; k < ns; ++k, ++t) {
      MXC_FORWARD_IF_ERROR(entry(path, l, join("state:", ps[i]->name, k),
                                 src[i], 0, 0, &src[n + t]));
    }
  }
  return MXC_OK;
}

/* Copies every checked entry into the network and optimizer. */
static int apply_all(mxc__optimizer *o, mxc__nn_param **ps, int n, int ns,
                     const mxc__ndarray **src) {
  for (int i = 0; i < n; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__nn_param_assign(ps[i], src[i]));
  }
  MXC_FORWARD_IF_ERROR(mxc__optimizer_prepare(o));
  int t = 0;
  for (int i = 0; i < n; ++i) {
    if (ps[i]->aux) continue;
    for (int k = 0; k < ns; ++k, ++t) {
      MXC_FORWARD_IF_ERROR(
          mxc__ndarray_copy(src[n + t], mxc__optimizer_state(o, t / ns, k)));
    }
  }
  return MXC_OK;
}

static int read_progress(const char *path, const mxc__ndarray_list *l,
                         int64_t *p, double *v) {
  const mxc__ndarray *a = NULL, *b = NULL;
  MXC_FORWARD_IF_ERROR(entry(path, l, mxc__strdup("fit:progress"), NULL,
                             MXC_DTYPE_INT64, 5, &a));
  MXC_FORWARD_IF_ERROR(entry(path, l, mxc__strdup("fit:values"), NULL,
                             MXC_DTYPE_FLOAT64, 2, &b));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_copy_to_host(a, p, 5 * 8));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_copy_to_host(b, v, 2 * 8));
  MXC_RETURN_ERROR_IF(p[0] < 0 || p[0] > 2147483647 || p[1] < 0 || p[4] < 0 ||
                          p[4] > 2147483647,
                      MXC_ERR_INVALID_ARGUMENT,
                      "checkpoint '%s': fit:progress holds negative or huge "
                      "counts",
                      path);
  return MXC_OK;
}

int mxc__fit_load_parts(mxc__fit *f, mxc__block *net, mxc__optimizer *o,
                        const char *path) {
  mxc__ndarray_list *l = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_load(path, &l));
  mxc__nn_param **ps = NULL;
  int n = 0, ns = mxc__optimizer_n_states(o);
  int rc = mxc__block_collect(net, &ps, &n);
  const mxc__ndarray **src =
      rc == MXC_OK ? mxc__calloc((size_t)n * (size_t)(ns + 1) + 1, sizeof *src)
                   : NULL;
  if (rc == MXC_OK && !src) rc = mxc__error_set(MXC_ERR_OOM, "checkpoint: out of memory");
  int64_t p[5];
  double v[2];
  if (rc == MXC_OK) rc = check_all(path, l, ps, n, ns, src);
  if (rc == MXC_OK) rc = read_progress(path, l, p, v);
  if (rc == MXC_OK) rc = apply_all(o, ps, n, ns, src);
  if (rc == MXC_OK) mxc__fit_progress(f, p, v, 0);
  mxc__free(src);
  mxc__free(ps);
  mxc__ndarray_list_free(l);
  return rc;
}
