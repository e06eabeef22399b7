/* Checkpoints: a symbol file and a params file named after a prefix and
 * an epoch, the parameters told apart by their "arg:"/"aux:" prefixes. */
#include "core/graph/checkpoint.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"

/* *out = PREFIX + suffix formatted with epoch (a new string). */
static int make_path(const char *prefix, const char *fmt, int epoch,
                     char **out) {
  size_t n = strlen(prefix) + 32;
  char *p = mxc__malloc(n);
  MXC_RETURN_ERROR_IF(!p, MXC_ERR_OOM, "checkpoint: out of memory");
  snprintf(p, n, fmt, prefix, epoch);
  *out = p;
  return MXC_OK;
}

static int check_args(const char *prefix, int epoch, const char *fn) {
  MXC_RETURN_ERROR_IF(!prefix || !*prefix, MXC_ERR_INVALID_ARGUMENT,
                      "%s: prefix is NULL or empty", fn);
  MXC_RETURN_ERROR_IF(epoch < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: epoch is %d; expected >= 0", fn, epoch);
  return MXC_OK;
}

/* ---- load ---- */

static mxc__ndarray_list *list_new(int cap) {
  mxc__ndarray_list *l = mxc__calloc(1, sizeof *l);
  if (!l) return NULL;
  l->arrays = mxc__calloc((size_t)cap + 1, sizeof *l->arrays);
  l->names = mxc__calloc((size_t)cap + 1, sizeof *l->names);
  if (!l->arrays || !l->names) {
    mxc__ndarray_list_free(l);
    return NULL;
  }
  return l;
}

/* Moves every array of all into args or aux by its name's prefix; the
 * arrays and stripped names change owner, so all is left empty. */
static int split(mxc__ndarray_list *all, mxc__ndarray_list *args,
                 mxc__ndarray_list *aux) {
  for (int i = 0; i < all->n; ++i) {
    const char *nm = all->names[i];
    int is_aux = strncmp(nm, "aux:", 4) == 0;
    int skip = (is_aux || strncmp(nm, "arg:", 4) == 0) ? 4 : 0;
    char *stripped = mxc__strdup(nm + skip);
    MXC_RETURN_ERROR_IF(!stripped, MXC_ERR_OOM, "checkpoint: out of memory");
    mxc__ndarray_list *to = is_aux ? aux : args;
    to->arrays[to->n] = all->arrays[i];
    to->names[to->n++] = stripped;
    all->arrays[i] = NULL;
  }
  return MXC_OK;
}

int mxc__checkpoint_split(mxc__ndarray_list *all, mxc__ndarray_list **args,
                          mxc__ndarray_list **aux) {
  mxc__ndarray_list *a = list_new(all->n), *x = list_new(all->n);
  int rc = (a && x) ? split(all, a, x)
                    : mxc__error_set(MXC_ERR_OOM, "checkpoint: out of memory");
  if (rc != MXC_OK) {
    mxc__ndarray_list_free(a);
    mxc__ndarray_list_free(x);
    return rc;
  }
  *args = a;
  *aux = x;
  return MXC_OK;
}

static int load_params(const char *path, mxc__ndarray_list **args,
                       mxc__ndarray_list **aux) {
  mxc__ndarray_list *all = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_load(path, &all));
  int rc = mxc__checkpoint_split(all, args, aux);
  mxc__ndarray_list_free(all);
  return rc;
}

int mxc__checkpoint_load(const char *prefix, int epoch, mxc__symbol **sym,
                         mxc__ndarray_list **args, mxc__ndarray_list **aux) {
  MXC_FORWARD_IF_ERROR(check_args(prefix, epoch, "mxc_checkpoint_load"));
  char *json = NULL, *params = NULL;
  mxc__symbol *s = NULL;
  int rc = make_path(prefix, "%s-symbol.json", 0, &json);
  if (rc == MXC_OK) rc = make_path(prefix, "%s-%04d.params", epoch, &params);
  if (rc == MXC_OK) rc = mxc__symbol_load(json, &s);
  if (rc == MXC_OK) rc = load_params(params, args, aux);
  if (rc == MXC_OK) {
    *sym = s;
  } else {
    mxc__symbol_free(s);
  }
  mxc__free(json);
  mxc__free(params);
  return rc;
}

/* ---- save ---- */

static int check_group(int n, const char *const *names,
                       mxc__ndarray *const *arrs, const char *what) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_checkpoint_save: n_%s is %d; expected >= 0", what,
                      n);
  MXC_RETURN_ERROR_IF(n > 0 && (!names || !arrs), MXC_ERR_INVALID_ARGUMENT,
                      "mxc_checkpoint_save: %s names or arrays are NULL but "
                      "n_%s is %d",
                      what, what, n);
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!names[i], MXC_ERR_INVALID_ARGUMENT,
                        "mxc_checkpoint_save: %s name %d is NULL", what, i);
  }
  return MXC_OK;
}

/* names[k] = "arg:"/"aux:" + the given name, arrs[k] = the array. */
static int add_group(int n, const char *const *in_names,
                     mxc__ndarray *const *in, const char *tag, char **names,
                     mxc__ndarray **arrs, int *k) {
  for (int i = 0; i < n; ++i) {
    size_t len = strlen(in_names[i]) + 5;
    names[*k] = mxc__malloc(len);
    MXC_RETURN_ERROR_IF(!names[*k], MXC_ERR_OOM, "checkpoint: out of memory");
    snprintf(names[*k], len, "%s%s", tag, in_names[i]);
    arrs[(*k)++] = in[i];
  }
  return MXC_OK;
}

static int save_params(const char *path, int n_args,
                       const char *const *arg_names, mxc__ndarray *const *args,
                       int n_aux, const char *const *aux_names,
                       mxc__ndarray *const *aux) {
  size_t cap = (size_t)n_args + (size_t)n_aux + 1;
  char **names = mxc__calloc(cap, sizeof *names);
  mxc__ndarray **arrs = mxc__calloc(cap, sizeof *arrs);
  int k = 0;
  int rc = (names && arrs)
               ? MXC_OK
               : mxc__error_set(MXC_ERR_OOM, "checkpoint: out of memory");
  if (rc == MXC_OK) {
    rc = add_group(n_args, arg_names, args, "arg:", names, arrs, &k);
  }
  if (rc == MXC_OK) {
    rc = add_group(n_aux, aux_names, aux, "aux:", names, arrs, &k);
  }
  if (rc == MXC_OK) {
    rc = mxc__ndarray_save_format(path, arrs, (const char *const *)names, k,
                                  MXC_FILE_FORMAT_MXNET);
  }
  for (int i = 0; names && i < k; ++i) mxc__free(names[i]);
  mxc__free(names);
  mxc__free(arrs);
  return rc;
}

int mxc__checkpoint_save(const char *prefix, int epoch, const mxc__symbol *sym,
                         int n_args, const char *const *arg_names,
                         mxc__ndarray *const *args, int n_aux,
                         const char *const *aux_names,
                         mxc__ndarray *const *aux) {
  MXC_FORWARD_IF_ERROR(check_args(prefix, epoch, "mxc_checkpoint_save"));
  MXC_FORWARD_IF_ERROR(check_group(n_args, arg_names, args, "args"));
  MXC_FORWARD_IF_ERROR(check_group(n_aux, aux_names, aux, "aux"));
  char *json = NULL, *params = NULL;
  int rc = make_path(prefix, "%s-symbol.json", 0, &json);
  if (rc == MXC_OK) rc = make_path(prefix, "%s-%04d.params", epoch, &params);
  if (rc == MXC_OK) {
    rc = save_params(params, n_args, arg_names, args, n_aux, aux_names, aux);
  }
  if (rc == MXC_OK) rc = mxc__symbol_save(sym, json);
  mxc__free(json);
  mxc__free(params);
  return rc;
}
