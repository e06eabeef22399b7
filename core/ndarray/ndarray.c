#include "core/ndarray/ndarray.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/dtype.h"
#include "core/base/error.h"

/* ---- chunks ---------------------------------------------------------- */

static int chunk_new(size_t nbytes, mxc__device dev, mxc__chunk **out) {
  mxc__engine *eng;
  MXC_FORWARD_IF_ERROR(mxc__engine_default(&eng));
  mxc__chunk *c = mxc__calloc(1, sizeof *c);
  MXC_RETURN_ERROR_IF(!c, MXC_ERR_OOM, "out of memory creating an array");
  int rc = mxc__engine_new_var(eng, &c->var);
  if (rc != MXC_OK) {
    mxc__free(c);
    return rc;
  }
  pthread_mutex_init(&c->alloc_lock, NULL);
  atomic_init(&c->refs, 1);
  atomic_init(&c->allocated, 0);
  c->nbytes = nbytes;
  c->dev = dev;
  c->stype = MXC_STYPE_DEFAULT;
  c->engine = eng;
  *out = c;
  return MXC_OK;
}

/* Runs after every pushed use of the chunk's variable has finished. */
static void chunk_destroy(void *arg) {
  mxc__chunk *c = arg;
  if (c->ext_ptr) {
    if (c->ext_free) c->ext_free(c->ext_arg);
  } else {
    mxc__storage_free(&c->block);
  }
  mxc__sparse_destroy(c->sparse);
  pthread_mutex_destroy(&c->alloc_lock);
  mxc__free(c);
}

void mxc__chunk_retain(mxc__chunk *c) {
  /* Only the holder of a reference may take another: at zero the
   * deletion is already on its way and cannot be called back. */
  int was = atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
  MXC__ASSERT_MSG(was > 0, "chunk retained after its last release");
  (void)was;
}

void mxc__chunk_release(mxc__chunk *c) {
  int was = atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel);
  MXC__ASSERT_MSG(was > 0, "chunk released more often than retained");
  if (was == 1) {
    /* Never fails or allocates: deletion is reserved with the variable. */
    mxc__engine_delete_var(c->engine, c->var, chunk_destroy, c);
  }
}

static int chunk_alloc(mxc__chunk *c) {
  if (atomic_load_explicit(&c->allocated, memory_order_acquire)) {
    return MXC_OK;
  }
  pthread_mutex_lock(&c->alloc_lock);
  int rc = MXC_OK;
  if (!atomic_load_explicit(&c->allocated, memory_order_relaxed)) {
    rc = mxc__storage_alloc(c->dev, c->nbytes, &c->block);
    if (rc == MXC_OK) {
      atomic_store_explicit(&c->allocated, 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&c->alloc_lock);
  return rc;
}

/* ---- views ----------------------------------------------------------- */

static int view_new(mxc__chunk *c, const mxc__shape *shape, int dtype,
                    size_t offset, mxc__ndarray **out) {
  /* Callers validated the range: a dense view lies inside its chunk. */
  MXC__ASSERT(c->stype != MXC_STYPE_DEFAULT ||
              offset + (size_t)mxc__shape_size(shape) *
                               mxc__dtype_size(dtype) <=
                  c->nbytes);
  mxc__ndarray *a = mxc__malloc(sizeof *a);
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_OOM, "out of memory creating an array view");
  a->chunk = c;
  a->shape = *shape;
  a->dtype = dtype;
  a->stype = c->stype;
  a->offset = offset;
  a->ag = NULL;
  a->fmt = 0; /* MXC__FMT_PLAIN */
  *out = a;
  return MXC_OK;
}

int mxc__ndarray_create(const mxc__shape *shape, int dtype, mxc__device dev,
                        int delay_alloc, mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(mxc__dtype_check(dtype, "dtype"));
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev.type, dev.id, "device"));
  /* Whatever produced the shape (a user, a file, inference for an element
   * count only), its byte size for this dtype is checked here, the one
   * place every dense array is made. */
  MXC_FORWARD_IF_ERROR(
      mxc__shape_check(shape, mxc__dtype_size(dtype), "array shape"));
  size_t nbytes = (size_t)mxc__shape_size(shape) * mxc__dtype_size(dtype);
  mxc__chunk *c;
  MXC_FORWARD_IF_ERROR(chunk_new(nbytes, dev, &c));
  int rc = delay_alloc ? MXC_OK : chunk_alloc(c);
  mxc__ndarray *a = NULL;
  if (rc == MXC_OK) rc = view_new(c, shape, dtype, 0, &a);
  if (rc != MXC_OK) {
    mxc__chunk_release(c);
    return rc;
  }
  *out = a;
  return MXC_OK;
}

int mxc__ndarray_create_external(const mxc__shape *shape, int dtype,
                                 mxc__device dev, void *ptr,
                                 void (*ext_free)(void *), void *ext_arg,
                                 mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(mxc__dtype_check(dtype, "dtype"));
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev.type, dev.id, "device"));
  /* Whatever produced the shape (a user, a file, inference for an element
   * count only), its byte size for this dtype is checked here, the one
   * place every dense array is made. */
  MXC_FORWARD_IF_ERROR(
      mxc__shape_check(shape, mxc__dtype_size(dtype), "array shape"));
  size_t nbytes = (size_t)mxc__shape_size(shape) * mxc__dtype_size(dtype);
  MXC_RETURN_ERROR_IF(ptr == NULL && nbytes > 0, MXC_ERR_INVALID_ARGUMENT,
                      "external data pointer is NULL for %zu bytes", nbytes);
  mxc__chunk *c;
  MXC_FORWARD_IF_ERROR(chunk_new(nbytes, dev, &c));
  mxc__ndarray *a;
  int rc = view_new(c, shape, dtype, 0, &a);
  if (rc != MXC_OK) {
    mxc__chunk_release(c); /* ext_ptr unset: the caller keeps the memory */
    return rc;
  }
  /* A non-NULL marker even for zero bytes keeps "external" recognizable. */
  c->ext_ptr = ptr ? ptr : (void *)c;
  c->ext_free = ext_free;
  c->ext_arg = ext_arg;
  atomic_store_explicit(&c->allocated, 1, memory_order_release);
  *out = a;
  return MXC_OK;
}

/* Set once by core/autograd; atomic because arrays are freed from any
 * thread. */
static void (*_Atomic g_ag_release)(void *);

void mxc__ndarray_set_ag_release(void (*fn)(void *ag)) {
  atomic_store(&g_ag_release, fn);
}

void mxc__ndarray_free(mxc__ndarray *a) {
  if (!a) return;
  if (a->ag) {
    void (*fn)(void *) = atomic_load(&g_ag_release);
    if (fn) fn(a->ag);
  }
  mxc__chunk_release(a->chunk);
  mxc__free(a);
}

static int view_of(const mxc__ndarray *a, const mxc__shape *shape,
                   size_t offset, mxc__ndarray **out) {
  int rc = view_new(a->chunk, shape, a->dtype, offset, out);
  if (rc == MXC_OK) mxc__chunk_retain(a->chunk);
  return rc;
}

int mxc__ndarray_clone_view(const mxc__ndarray *a, mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(view_of(a, &a->shape, a->offset, out));
  (*out)->fmt = a->fmt; /* the same bytes, laid out the same way */
  return MXC_OK;
}

/* Bytes of one row along axis 0. */
static size_t row_bytes(const mxc__ndarray *a) {
  size_t n = mxc__dtype_size(a->dtype);
  for (int i = 1; i < a->shape.ndim; ++i) n *= (size_t)a->shape.dims[i];
  return n;
}

/* Slices and reshapes index dense storage; sparse arrays have none. */
static int check_dense(const mxc__ndarray *a, const char *what) {
  MXC_RETURN_ERROR_IF(a->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "%s: the array is sparse (storage type %d); only dense "
                      "arrays have this view (cast_storage first)",
                      what, a->stype);
  return MXC_OK;
}

int mxc__ndarray_slice(const mxc__ndarray *a, int64_t begin, int64_t end,
                       mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(check_dense(a, "slice"));
  MXC_RETURN_ERROR_IF(a->shape.ndim == 0, MXC_ERR_SHAPE,
                      "slice: the array is a scalar (0-d); slicing needs at "
                      "least one dimension");
  int64_t rows = a->shape.dims[0];
  MXC_RETURN_ERROR_IF(begin < 0 || end < begin || end > rows, MXC_ERR_SHAPE,
                      "slice: range [%lld, %lld) is invalid for axis 0 of "
                      "length %lld; expected 0 <= begin <= end <= %lld",
                      (long long)begin, (long long)end, (long long)rows,
                      (long long)rows);
  mxc__shape s = a->shape;
  s.dims[0] = end - begin;
  return view_of(a, &s, a->offset + (size_t)begin * row_bytes(a), out);
}

int mxc__ndarray_at(const mxc__ndarray *a, int64_t index, mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(check_dense(a, "at"));
  MXC_RETURN_ERROR_IF(a->shape.ndim == 0, MXC_ERR_SHAPE,
                      "at: the array is a scalar (0-d); indexing needs at "
                      "least one dimension");
  int64_t rows = a->shape.dims[0];
  MXC_RETURN_ERROR_IF(index < 0 || index >= rows, MXC_ERR_SHAPE,
                      "at: index %lld is out of range for axis 0 of length "
                      "%lld",
                      (long long)index, (long long)rows);
  mxc__shape s;
  s.ndim = a->shape.ndim - 1;
  for (int i = 0; i < s.ndim; ++i) s.dims[i] = a->shape.dims[i + 1];
  return view_of(a, &s, a->offset + (size_t)index * row_bytes(a), out);
}

int mxc__ndarray_reshape(const mxc__ndarray *a, const int64_t *dims, int ndim,
                         mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(check_dense(a, "reshape"));
  MXC_RETURN_ERROR_IF(ndim < 0 || ndim > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "reshape: ndim %d is out of range; expected 0..%d",
                      ndim, MXC_MAX_NDIM);
  MXC_RETURN_ERROR_IF(ndim > 0 && !dims, MXC_ERR_INVALID_ARGUMENT,
                      "reshape: shape is NULL but ndim is %d", ndim);
  int64_t tmp[MXC_MAX_NDIM];
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < ndim; ++i) {
    tmp[i] = dims[i];
    if (dims[i] == -1) {
      MXC_RETURN_ERROR_IF(infer >= 0, MXC_ERR_SHAPE,
                          "reshape: more than one extent is -1 (axes %d and "
                          "%d); at most one can be inferred",
                          infer, i);
      infer = i;
    } else if (dims[i] >= 0) {
      if (!mxc__mul_i64(known, dims[i], &known)) known = -1;
    }
  }
  int64_t size = mxc__ndarray_size(a);
  char buf[160];
  if (infer >= 0) {
    MXC_RETURN_ERROR_IF(known <= 0 || size % known != 0, MXC_ERR_SHAPE,
                        "reshape: cannot infer axis %d: %lld elements do not "
                        "divide into the other extents",
                        infer, (long long)size);
    tmp[infer] = size / known;
  }
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(tmp, ndim, 1, "reshape", &s));
  MXC_RETURN_ERROR_IF(mxc__shape_size(&s) != size, MXC_ERR_SHAPE,
                      "reshape: new shape %s has %lld elements; the array "
                      "has %lld",
                      mxc__shape_str(&s, buf, sizeof buf),
                      (long long)mxc__shape_size(&s), (long long)size);
  return view_of(a, &s, a->offset, out);
}

/* ---- accessors ------------------------------------------------------- */

int64_t mxc__ndarray_size(const mxc__ndarray *a) {
  return mxc__shape_size(&a->shape);
}

size_t mxc__ndarray_nbytes(const mxc__ndarray *a) {
  return (size_t)mxc__ndarray_size(a) * mxc__dtype_size(a->dtype);
}

int mxc__ndarray_ensure_alloc(const mxc__ndarray *a) {
  return chunk_alloc(a->chunk);
}

void *mxc__ndarray_ptr(const mxc__ndarray *a) {
  const mxc__chunk *c = a->chunk;
  char *base = c->ext_ptr ? c->ext_ptr : c->block.ptr;
  return base + a->offset;
}

mxc__var *mxc__ndarray_var(const mxc__ndarray *a) { return a->chunk->var; }

mxc__engine *mxc__ndarray_engine(const mxc__ndarray *a) {
  return a->chunk->engine;
}

uint64_t mxc__ndarray_version(const mxc__ndarray *a) {
  if (a->chunk->ext_ptr) return 0; /* imported: its owner may write it */
  return mxc__engine_var_version(a->chunk->var);
}
