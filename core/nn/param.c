/* Parameters: declaration with deferred extents, creation and
 * initialization at the first forward pass, and saving / loading by name
 * (see nn.h). */
#include <stdio.h>
#include <string.h>

#include "core/autograd/autograd.h"
#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/ndarray/io.h"
#include "core/nn/internal.h"
#include "core/train/init.h"

int mxc__nn_param_declare(mxc__block *b, const char *what, int ndim,
                          const int64_t *dims, int aux, const char *init) {
  mxc__nn_param *ps =
      mxc__realloc(b->params, (size_t)(b->n_params + 1) * sizeof *ps);
  MXC_RETURN_ERROR_IF(!ps, MXC_ERR_OOM, "block '%s': out of memory", b->name);
  b->params = ps;
  mxc__nn_param *p = &ps[b->n_params];
  memset(p, 0, sizeof *p);
  p->aux = aux;
  p->shape.ndim = ndim;
  for (int i = 0; i < ndim; ++i) p->shape.dims[i] = dims[i];
  size_t len = strlen(b->name) + strlen(what) + 2;
  p->name = mxc__malloc(len);
  p->init = init ? mxc__strdup(init) : NULL;
  if (!p->name || (init && !p->init)) {
    mxc__free(p->name);
    mxc__free(p->init);
    return mxc__error_set(MXC_ERR_OOM, "block '%s': out of memory", b->name);
  }
  snprintf(p->name, len, "%s_%s", b->name, what);
  b->n_params++;
  return MXC_OK;
}

/* Gives p arrays of `shape` on dev (values unset) and, unless it is an
 * auxiliary state, a zero gradient buffer, marking it as a variable. */
static int param_make(mxc__nn_param *p, const mxc__shape *shape, int dtype,
                      mxc__device dev) {
  mxc__ndarray *d = NULL, *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(shape, dtype, dev, 0, &d));
  int rc = MXC_OK;
  if (!p->aux) {
    rc = mxc__ndarray_create(shape, dtype, dev, 0, &g);
    if (rc == MXC_OK) rc = mxc__init_array(g, "zeros", NULL, NULL, 0);
    mxc__req req = MXC__REQ_WRITE;
    if (rc == MXC_OK) rc = mxc__autograd_mark(1, &d, &req, &g);
  }
  if (rc != MXC_OK) {
    mxc__ndarray_free(d);
    mxc__ndarray_free(g);
    return rc;
  }
  p->data = d;
  p->grad = g;
  return MXC_OK;
}

/* Fills p's new array with its initializer or the block's default. */
static int param_fill(mxc__block *b, mxc__nn_param *p) {
  if (p->init) return mxc__init_array(p->data, p->init, NULL, NULL, 0);
  MXC_RETURN_ERROR_IF(!b->init.method, MXC_ERR_INVALID_ARGUMENT,
                      "parameter '%s' is not initialized: initialize the "
                      "block before its first forward pass",
                      p->name);
  return mxc__init_array(p->data, b->init.method,
                         (const char *const *)b->init.keys,
                         (const char *const *)b->init.vals, b->init.n);
}

/* "(2,0,3)"-style text of s for messages. */
static const char *shape_text(const mxc__shape *s, char *buf, size_t n) {
  return mxc__shape_str(s, buf, n);
}

/* The extents of want that are known (non-zero) equal have's. */
static int shape_fits(const mxc__shape *want, const mxc__shape *have) {
  if (want->ndim != have->ndim) return 0;
  for (int i = 0; i < want->ndim; ++i) {
    if (want->dims[i] && want->dims[i] != have->dims[i]) return 0;
  }
  return 1;
}

int mxc__nn_param_ready(mxc__block *b, int i, const mxc__shape *shape,
                        const mxc__ndarray *like) {
  mxc__nn_param *p = &b->params[i];
  char w[96], h[96];
  MXC_RETURN_ERROR_IF(!shape_fits(&p->shape, shape), MXC_ERR_SHAPE,
                      "parameter '%s' has shape %s; the input needs %s",
                      p->name, shape_text(&p->shape, w, sizeof w),
                      shape_text(shape, h, sizeof h));
  if (p->data) {
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&p->data->shape, shape),
                        MXC_ERR_SHAPE,
                        "parameter '%s' has shape %s; the input needs %s",
                        p->name, shape_text(&p->data->shape, w, sizeof w),
                        shape_text(shape, h, sizeof h));
    return MXC_OK;
  }
  MXC_FORWARD_IF_ERROR(mxc__shape_check(shape, 4, p->name));
  int dtype = like->dtype == MXC_DTYPE_FLOAT64 ? MXC_DTYPE_FLOAT64
                                               : MXC_DTYPE_FLOAT32;
  MXC_FORWARD_IF_ERROR(param_make(p, shape, dtype, like->chunk->dev));
  int rc = param_fill(b, p);
  if (rc != MXC_OK) {
    mxc__ndarray_free(p->data);
    mxc__ndarray_free(p->grad);
    p->data = p->grad = NULL;
    mxc__error_prefix(p->name);
  }
  return rc;
}

/* ---- save / load ---- */

int mxc__block_save(mxc__block *b, const char *path) {
  mxc__nn_param **ps = NULL;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__block_collect(b, &ps, &n));
  mxc__ndarray **arrays = mxc__calloc(n ? (size_t)n : 1, sizeof *arrays);
  const char **names = mxc__calloc(n ? (size_t)n : 1, sizeof *names);
  int rc = arrays && names ? MXC_OK
                           : mxc__error_set(MXC_ERR_OOM, "save: out of memory");
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    if (!ps[i]->data) {
      rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "save '%s': parameter '%s' is not initialized yet "
                          "(run a forward pass first)",
                          path, ps[i]->name);
    }
    arrays[i] = ps[i]->data;
    names[i] = ps[i]->name;
  }
  if (rc == MXC_OK) rc = mxc__ndarray_save(path, arrays, names, n);
  mxc__free(arrays);
  mxc__free(names);
  mxc__free(ps);
  return rc;
}

/* The index of name in list, or -1. */
static int list_find(const mxc__ndarray_list *l, const char *name) {
  for (int i = 0; i < l->n; ++i) {
    if (!strcmp(l->names[i], name)) return i;
  }
  return -1;
}

/* Every parameter is in the file with a fitting shape and a float dtype. */
static int check_file(const char *path, mxc__nn_param **ps, int n,
                      const mxc__ndarray_list *l, int *idx) {
  char w[96], h[96];
  for (int i = 0; i < n; ++i) {
    idx[i] = list_find(l, ps[i]->name);
    MXC_RETURN_ERROR_IF(idx[i] < 0, MXC_ERR_NOT_FOUND,
                        "load '%s': parameter '%s' is not in the file", path,
                        ps[i]->name);
    const mxc__ndarray *a = l->arrays[idx[i]];
    const mxc__shape *want = ps[i]->data ? &ps[i]->data->shape : &ps[i]->shape;
    MXC_RETURN_ERROR_IF(!shape_fits(want, &a->shape) ||
                            a->stype != MXC_STYPE_DEFAULT,
                        MXC_ERR_SHAPE,
                        "load '%s': parameter '%s' is %s in the file; the "
                        "block has %s (dense)",
                        path, ps[i]->name, shape_text(&a->shape, h, sizeof h),
                        shape_text(want, w, sizeof w));
    int dt = ps[i]->data ? ps[i]->data->dtype : a->dtype;
    MXC_RETURN_ERROR_IF(
        a->dtype != dt ||
            (dt != MXC_DTYPE_FLOAT32 && dt != MXC_DTYPE_FLOAT64),
        MXC_ERR_DTYPE,
        "load '%s': parameter '%s' is %s in the file; expected %s", path,
        ps[i]->name, mxc__dtype_name(a->dtype),
        ps[i]->data ? mxc__dtype_name(dt) : "float32 or float64");
  }
  return MXC_OK;
}

int mxc__nn_param_assign(mxc__nn_param *p, const mxc__ndarray *src) {
  if (!p->data) {
    MXC_FORWARD_IF_ERROR(
        param_make(p, &src->shape, src->dtype, src->chunk->dev));
  }
  return mxc__ndarray_copy(src, p->data);
}

int mxc__block_load(mxc__block *b, const char *path) {
  mxc__ndarray_list *l = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_load(path, &l));
  mxc__nn_param **ps = NULL;
  int n = 0, rc = mxc__block_collect(b, &ps, &n);
  int *idx = rc == MXC_OK ? mxc__calloc(n ? (size_t)n : 1, sizeof *idx) : NULL;
  if (rc == MXC_OK && !idx) rc = mxc__error_set(MXC_ERR_OOM, "load: out of memory");
  if (rc == MXC_OK) rc = check_file(path, ps, n, l, idx);
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    rc = mxc__nn_param_assign(ps[i], l->arrays[idx[i]]);
  }
  mxc__free(idx);
  mxc__free(ps);
  mxc__ndarray_list_free(l);
  return rc;
}
