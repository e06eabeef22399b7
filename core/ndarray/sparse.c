/* Sparse arrays: CSR and row_sparse storage (see ndarray.h).
 *
 * A sparse array is an ordinary chunk (engine variable, reference count,
 * views) whose own block is empty; chunk->sparse holds the values and aux
 * blocks. Kernels replace those blocks with mxc__sparse_alloc while they
 * hold write access to the chunk's variable, so every block pointer is
 * read only under engine ordering and never cached across pushes. */
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/ndarray/ndarray.h"

int mxc__sparse_n_aux(int stype) {
  return stype == MXC_STYPE_CSR ? 2 : stype == MXC_STYPE_ROW_SPARSE ? 1 : 0;
}

static mxc__sparse *sp_of(const mxc__ndarray *a) { return a->chunk->sparse; }

/* Elements of one stored entry: 1 (csr) or the product of the trailing
 * extents (row_sparse). */
static int64_t entry_elems(int stype, const mxc__shape *s) {
  int64_t n = 1;
  if (stype == MXC_STYPE_ROW_SPARSE) {
    for (int i = 1; i < s->ndim; ++i) n *= s->dims[i];
  }
  return n;
}

/* Most entries an array of this shape can store. */
static int64_t max_nnz(int stype, const mxc__shape *s) {
  return stype == MXC_STYPE_CSR ? s->dims[0] * s->dims[1] : s->dims[0];
}

/* Element counts of aux `which` for nnz entries. */
static int64_t aux_len(int stype, const mxc__shape *s, int which, int64_t nnz) {
  return stype == MXC_STYPE_CSR && which == 0 ? s->dims[0] + 1 : nnz;
}

static int check_layout(int stype, const mxc__shape *shape, int dtype,
                        int index_dtype, const char *what) {
  MXC_FORWARD_IF_ERROR(mxc__dtype_check(dtype, "dtype"));
  MXC_FORWARD_IF_ERROR(
      mxc__shape_check(shape, mxc__dtype_size(dtype), what));
  MXC_RETURN_ERROR_IF(stype != MXC_STYPE_CSR && stype != MXC_STYPE_ROW_SPARSE,
                      MXC_ERR_STYPE,
                      "%s: storage type %d is not sparse; expected "
                      "MXC_STYPE_CSR or MXC_STYPE_ROW_SPARSE",
                      what, stype);
  MXC_RETURN_ERROR_IF(stype == MXC_STYPE_CSR && shape->ndim != 2, MXC_ERR_SHAPE,
                      "%s: a csr array has 2 dimensions (rows, cols); got "
                      "%d",
                      what, shape->ndim);
  MXC_RETURN_ERROR_IF(shape->ndim < 1, MXC_ERR_SHAPE,
                      "%s: a row_sparse array needs at least 1 dimension",
                      what);
  MXC_RETURN_ERROR_IF(
      index_dtype != MXC_DTYPE_INT32 && index_dtype != MXC_DTYPE_INT64,
      MXC_ERR_DTYPE,
      "%s: index dtype %d is not supported; expected MXC_DTYPE_INT32 or "
      "MXC_DTYPE_INT64",
      what, index_dtype);
  /* int32 indices must hold every row and column index (indptr values,
   * bounded by nnz, are checked by check_nnz). */
  int64_t biggest = shape->dims[0];
  if (stype == MXC_STYPE_CSR && shape->dims[1] > biggest) {
    biggest = shape->dims[1];
  }
  MXC_RETURN_ERROR_IF(index_dtype == MXC_DTYPE_INT32 && biggest > INT32_MAX,
                      MXC_ERR_SHAPE,
                      "%s: extent %lld does not fit int32 indices; use "
                      "MXC_DTYPE_INT64",
                      what, (long long)biggest);
  return MXC_OK;
}

/* nnz in 0..(most the shape can store), and within int32 indices. */
static int check_nnz(int stype, const mxc__shape *shape, int index_dtype,
                     int64_t nnz, int code, const char *what) {
  int64_t cap = max_nnz(stype, shape);
  MXC_RETURN_ERROR_IF(nnz < 0 || nnz > cap, code,
                      "%s: nnz is %lld; expected 0..%lld for this shape", what,
                      (long long)nnz, (long long)cap);
  MXC_RETURN_ERROR_IF(index_dtype == MXC_DTYPE_INT32 && nnz > INT32_MAX,
                      MXC_ERR_SHAPE,
                      "%s: nnz %lld does not fit int32 indices; use "
                      "MXC_DTYPE_INT64",
                      what, (long long)nnz);
  return MXC_OK;
}

/* ---- blocks ---------------------------------------------------------- */

typedef struct blocks {
  mxc__storage_block data, aux[2];
} blocks;

static void blocks_free(blocks *b) {
  mxc__storage_free(&b->data);
  mxc__storage_free(&b->aux[0]);
  mxc__storage_free(&b->aux[1]);
}

/* Bytes of `count` elements of es bytes each, checked: the shape
 * invariant bounds the values block, but not CSR's indptr (rows + 1
 * indices of a (2^62, 0) int8 array). */
static int block_bytes(int64_t count, size_t es, const char *name,
                       size_t *out) {
  int64_t bytes;
  MXC_RETURN_ERROR_IF(count < 0 || !mxc__mul_i64(count, (int64_t)es, &bytes),
                      MXC_ERR_SHAPE,
                      "sparse array: the %s block (%lld elements of %zu "
                      "bytes) is too large",
                      name, (long long)count, es);
  *out = (size_t)bytes;
  return MXC_OK;
}

/* Bytes of the values block and of the aux blocks for nnz entries. */
static int blocks_bytes(int stype, const mxc__shape *s, int dtype,
                        int index_dtype, int64_t nnz, size_t *data,
                        size_t aux[2]) {
  int64_t elems;
  MXC_RETURN_ERROR_IF(!mxc__mul_i64(nnz, entry_elems(stype, s), &elems),
                      MXC_ERR_SHAPE,
                      "sparse array: %lld entries are too many for its shape",
                      (long long)nnz);
  MXC_FORWARD_IF_ERROR(
      block_bytes(elems, mxc__dtype_size(dtype), "values", data));
  aux[0] = aux[1] = 0;
  for (int k = 0; k < mxc__sparse_n_aux(stype); ++k) {
    MXC_FORWARD_IF_ERROR(block_bytes(aux_len(stype, s, k, nnz),
                                     mxc__dtype_size(index_dtype), "index",
                                     &aux[k]));
  }
  return MXC_OK;
}

/* New blocks for nnz entries; on failure nothing is held. */
static int blocks_alloc(int stype, const mxc__shape *s, int dtype,
                        int index_dtype, mxc__device dev, int64_t nnz,
                        blocks *out) {
  blocks b;
  memset(&b, 0, sizeof b);
  size_t dbytes, abytes[2];
  MXC_FORWARD_IF_ERROR(
      blocks_bytes(stype, s, dtype, index_dtype, nnz, &dbytes, abytes));
  int rc = mxc__storage_alloc(dev, dbytes, &b.data);
  for (int k = 0; k < mxc__sparse_n_aux(stype) && rc == MXC_OK; ++k) {
    rc = mxc__storage_alloc(dev, abytes[k], &b.aux[k]);
  }
  if (rc != MXC_OK) {
    blocks_free(&b);
    return rc;
  }
  *out = b;
  return MXC_OK;
}

void mxc__sparse_destroy(mxc__sparse *sp) {
  if (!sp) return;
  mxc__storage_free(&sp->data);
  mxc__storage_free(&sp->aux[0]);
  mxc__storage_free(&sp->aux[1]);
  mxc__free(sp);
}

/* ---- creation -------------------------------------------------------- */

/* A sparse array over blocks b (taken over on success). */
static int sparse_new(int stype, const mxc__shape *shape, int dtype,
                      int index_dtype, mxc__device dev, int64_t nnz,
                      const blocks *b, int valid, mxc__ndarray **out) {
  mxc__sparse *sp = mxc__calloc(1, sizeof *sp);
  MXC_RETURN_ERROR_IF(!sp, MXC_ERR_OOM, "out of memory creating a %s array",
                      mxc__stype_name(stype));
  /* A delayed dense array never touches its block: turn its chunk into a
   * sparse one before anyone else can see it. */
  mxc__ndarray *a;
  int rc = mxc__ndarray_create(shape, dtype, dev, 1, &a);
  if (rc != MXC_OK) {
    mxc__free(sp);
    return rc;
  }
  sp->index_dtype = index_dtype;
  sp->nnz = nnz;
  sp->data = b->data;
  sp->aux[0] = b->aux[0];
  sp->aux[1] = b->aux[1];
  atomic_init(&sp->valid, valid);
  a->chunk->sparse = sp;
  a->chunk->stype = stype;
  a->chunk->nbytes = 0;
  atomic_store_explicit(&a->chunk->allocated, 1, memory_order_release);
  a->stype = stype;
  *out = a;
  return MXC_OK;
}

/* Sparse storage is host code (formats are checked and walked on the
 * CPU). CSR arrays may live on a GPU for its sparse kernels (dot through
 * cuSPARSE): their blocks are checked on the host before they go there,
 * so a GPU CSR array is always well-formed (valid), and nothing reads
 * them on the host. row_sparse arrays stay on the CPU. */
static int sparse_device_check(int stype, mxc__device dev) {
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev.type, dev.id, "device"));
  MXC_RETURN_ERROR_IF(dev.type == MXC_DEVICE_GPU && stype != MXC_STYPE_CSR,
                      MXC_ERR_UNSUPPORTED,
                      "device: row_sparse arrays live on the CPU in this "
                      "release, not gpu(%d) (csr arrays may be on a GPU); "
                      "create it on the CPU, or use a dense array on the GPU",
                      dev.id);
  return MXC_OK;
}

/* Copies host blocks h into device blocks d of the same sizes on gpu(id),
 * synchronously (the calling thread has no stream). */
static int upload(const blocks *h, blocks *d, int id) {
  int rc = mxc__gpu_copy(d->data.ptr, id, h->data.ptr, MXC__GPU_HOST,
                         h->data.size);
  for (int k = 0; k < 2 && rc == MXC_OK; ++k) {
    if (h->aux[k].size) {
      rc = mxc__gpu_copy(d->aux[k].ptr, id, h->aux[k].ptr, MXC__GPU_HOST,
                         h->aux[k].size);
    }
  }
  return rc;
}

/* A GPU array holding the contents of h, a checked CPU array (valid). */
static int to_device(const mxc__ndarray *h, mxc__device dev,
                     mxc__ndarray **out) {
  const mxc__sparse *hs = sp_of(h);
  blocks hb = {hs->data, {hs->aux[0], hs->aux[1]}}, db;
  MXC_FORWARD_IF_ERROR(blocks_alloc(h->stype, &h->shape, h->dtype,
                                    hs->index_dtype, dev, hs->nnz, &db));
  int rc = upload(&hb, &db, dev.id);
  if (rc == MXC_OK) {
    rc = sparse_new(h->stype, &h->shape, h->dtype, hs->index_dtype, dev,
                    hs->nnz, &db, 1, out);
  }
  if (rc != MXC_OK) blocks_free(&db);
  return rc;
}

/* An empty CSR array's indptr (zeros) on gpu(id), from a host buffer. */
static int zero_on_device(mxc__storage_block *blk, int id) {
  void *z = mxc__calloc(1, blk->size ? blk->size : 1);
  MXC_RETURN_ERROR_IF(!z, MXC_ERR_OOM,
                      "out of memory for the indptr of an empty csr array");
  int rc = mxc__gpu_copy(blk->ptr, id, z, MXC__GPU_HOST, blk->size);
  mxc__free(z);
  return rc;
}

int mxc__ndarray_create_sparse(int stype, const mxc__shape *shape, int dtype,
                               int index_dtype, mxc__device dev,
                               mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(
      check_layout(stype, shape, dtype, index_dtype, "create sparse array"));
  MXC_FORWARD_IF_ERROR(sparse_device_check(stype, dev));
  blocks b;
  MXC_FORWARD_IF_ERROR(
      blocks_alloc(stype, shape, dtype, index_dtype, dev, 0, &b));
  int rc = MXC_OK;
  if (stype == MXC_STYPE_CSR && dev.type == MXC_DEVICE_GPU) {
    rc = zero_on_device(&b.aux[0], dev.id);
  } else if (stype == MXC_STYPE_CSR) {
    memset(b.aux[0].ptr, 0, b.aux[0].size); /* every row empty */
  }
  if (rc == MXC_OK) {
    rc = sparse_new(stype, shape, dtype, index_dtype, dev, 0, &b, 1, out);
  }
  if (rc != MXC_OK) blocks_free(&b);
  return rc;
}

static int check_buf(const void *p, size_t nbytes, const char *what,
                     const char *name) {
  MXC_RETURN_ERROR_IF(p == NULL && nbytes > 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: %s is NULL but must hold %zu bytes", what, name,
                      nbytes);
  return MXC_OK;
}

/* Shared by both host constructors: aux[k] copied from host[k]. */
static int create_host(int stype, const mxc__shape *shape, int dtype,
                       int index_dtype, mxc__device dev, const void *data,
                       const void *const *host, int64_t nnz, const char *what,
                       mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(check_layout(stype, shape, dtype, index_dtype, what));
  MXC_FORWARD_IF_ERROR(sparse_device_check(stype, dev));
  MXC_FORWARD_IF_ERROR(check_nnz(stype, shape, index_dtype, nnz,
                                 MXC_ERR_INVALID_ARGUMENT, what));
  blocks b;
  size_t dbytes, abytes[2];
  MXC_FORWARD_IF_ERROR(
      blocks_bytes(stype, shape, dtype, index_dtype, nnz, &dbytes, abytes));
  MXC_FORWARD_IF_ERROR(check_buf(data, dbytes, what, "data"));
  int n_aux = mxc__sparse_n_aux(stype);
  static const char *const k_csr[] = {"indptr", "indices"};
  for (int k = 0; k < n_aux; ++k) {
    MXC_FORWARD_IF_ERROR(check_buf(
        host[k], abytes[k], what,
        stype == MXC_STYPE_CSR ? k_csr[k] : "row_idx"));
  }
  MXC_FORWARD_IF_ERROR(
      blocks_alloc(stype, shape, dtype, index_dtype, dev, nnz, &b));
  if (dbytes) memcpy(b.data.ptr, data, dbytes);
  for (int k = 0; k < n_aux; ++k) {
    if (b.aux[k].size) memcpy(b.aux[k].ptr, host[k], b.aux[k].size);
  }
  int rc = sparse_new(stype, shape, dtype, index_dtype, dev, nnz, &b, 0, out);
  if (rc != MXC_OK) blocks_free(&b);
  return rc;
}

int mxc__ndarray_create_csr_host(const mxc__shape *shape, int dtype,
                                 int index_dtype, mxc__device dev,
                                 const void *data, const void *indptr,
                                 const void *indices, int64_t nnz,
                                 mxc__ndarray **out) {
  /* No indptr to copy: every row is empty, which is what a new sparse
   * array holds. */
  if (nnz == 0 && !indptr) {
    return mxc__ndarray_create_sparse(MXC_STYPE_CSR, shape, dtype,
                                      index_dtype, dev, out);
  }
  const void *host[2] = {indptr, indices};
  if (dev.type != MXC_DEVICE_GPU) {
    return create_host(MXC_STYPE_CSR, shape, dtype, index_dtype, dev, data,
                       host, nnz, "create csr", out);
  }
  /* On a GPU: made and fully checked on the host first (see
   * sparse_device_check), then uploaded. */
  MXC_FORWARD_IF_ERROR(sparse_device_check(MXC_STYPE_CSR, dev));
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  mxc__ndarray *h = NULL;
  MXC_FORWARD_IF_ERROR(create_host(MXC_STYPE_CSR, shape, dtype, index_dtype,
                                   cpu, data, host, nnz, "create csr", &h));
  int rc = mxc__sparse_check(h, 1, "create csr");
  if (rc == MXC_OK) rc = to_device(h, dev, out);
  mxc__ndarray_free(h);
  return rc;
}

int mxc__ndarray_create_rsp_host(const mxc__shape *shape, int dtype,
                                 int index_dtype, mxc__device dev,
                                 const void *data, const void *row_idx,
                                 int64_t nnz, mxc__ndarray **out) {
  const void *host[1] = {row_idx};
  return create_host(MXC_STYPE_ROW_SPARSE, shape, dtype, index_dtype, dev, data,
                     host, nnz, "create row_sparse", out);
}

/* ---- kernel-side access ---------------------------------------------- */

int mxc__sparse_alloc(const mxc__ndarray *a, int64_t nnz) {
  mxc__sparse *sp = sp_of(a);
  MXC_FORWARD_IF_ERROR(check_nnz(a->stype, &a->shape, sp->index_dtype, nnz,
                                 MXC_ERR_INTERNAL, "sparse_alloc"));
  blocks b;
  MXC_FORWARD_IF_ERROR(blocks_alloc(a->stype, &a->shape, a->dtype,
                                    sp->index_dtype, a->chunk->dev, nnz, &b));
  mxc__storage_free(&sp->data);
  mxc__storage_free(&sp->aux[0]);
  mxc__storage_free(&sp->aux[1]);
  sp->data = b.data;
  sp->aux[0] = b.aux[0];
  sp->aux[1] = b.aux[1];
  sp->nnz = nnz;
  /* Not valid until the kernel has filled it (mxc__sparse_set_valid). */
  atomic_store(&sp->valid, 0);
  return MXC_OK;
}

void mxc__sparse_set_valid(const mxc__ndarray *a) {
  atomic_store(&sp_of(a)->valid, 1);
}

int64_t mxc__sparse_nnz(const mxc__ndarray *a) { return sp_of(a)->nnz; }

int mxc__sparse_index_dtype(const mxc__ndarray *a) {
  return sp_of(a)->index_dtype;
}

mxc__dense_view mxc__sparse_data(const mxc__ndarray *a) {
  mxc__dense_view v;
  v.ptr = sp_of(a)->data.ptr;
  v.dtype = a->dtype;
  v.shape = a->shape;
  v.shape.dims[0] = sp_of(a)->nnz;
  if (a->stype == MXC_STYPE_CSR) v.shape.ndim = 1;
  return v;
}

mxc__dense_view mxc__sparse_aux(const mxc__ndarray *a, int which) {
  mxc__dense_view v;
  v.ptr = sp_of(a)->aux[which].ptr;
  v.dtype = sp_of(a)->index_dtype;
  v.shape.ndim = 1;
  v.shape.dims[0] = aux_len(a->stype, &a->shape, which, sp_of(a)->nnz);
  return v;
}

int64_t mxc__sparse_idx_get(const mxc__dense_view *v, int64_t i) {
  return v->dtype == MXC_DTYPE_INT32 ? ((const int32_t *)v->ptr)[i]
                                     : ((const int64_t *)v->ptr)[i];
}

void mxc__sparse_idx_set(const mxc__dense_view *v, int64_t i, int64_t x) {
  if (v->dtype == MXC_DTYPE_INT32) {
    ((int32_t *)v->ptr)[i] = (int32_t)x;
  } else {
    ((int64_t *)v->ptr)[i] = x;
  }
}

/* ---- format checks --------------------------------------------------- */

static int check_csr(const mxc__ndarray *a, int full, const char *what) {
  mxc__dense_view ip = mxc__sparse_aux(a, 0);
  mxc__dense_view ix = mxc__sparse_aux(a, 1);
  int64_t rows = a->shape.dims[0], cols = a->shape.dims[1];
  int64_t nnz = mxc__sparse_nnz(a);
  int64_t first = mxc__sparse_idx_get(&ip, 0);
  MXC_RETURN_ERROR_IF(first != 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: csr indptr[0] is %lld; expected 0", what,
                      (long long)first);
  if (full) {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t lo = mxc__sparse_idx_get(&ip, r);
      int64_t hi = mxc__sparse_idx_get(&ip, r + 1);
      MXC_RETURN_ERROR_IF(hi < lo, MXC_ERR_INVALID_ARGUMENT,
                          "%s: csr indptr[%lld] = %lld is less than "
                          "indptr[%lld] = %lld; indptr must be non-decreasing",
                          what, (long long)(r + 1), (long long)hi, (long long)r,
                          (long long)lo);
      MXC_RETURN_ERROR_IF(hi > nnz, MXC_ERR_INVALID_ARGUMENT,
                          "%s: csr indptr[%lld] = %lld exceeds nnz %lld", what,
                          (long long)(r + 1), (long long)hi, (long long)nnz);
    }
  }
  int64_t last = mxc__sparse_idx_get(&ip, rows);
  MXC_RETURN_ERROR_IF(last != nnz, MXC_ERR_INVALID_ARGUMENT,
                      "%s: csr indptr[%lld] (the last) is %lld; expected "
                      "nnz = %lld",
                      what, (long long)rows, (long long)last, (long long)nnz);
  if (!full) return MXC_OK;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t lo = mxc__sparse_idx_get(&ip, r);
    int64_t hi = mxc__sparse_idx_get(&ip, r + 1);
    for (int64_t j = lo; j < hi; ++j) {
      int64_t c = mxc__sparse_idx_get(&ix, j);
      MXC_RETURN_ERROR_IF(c < 0 || c >= cols, MXC_ERR_INVALID_ARGUMENT,
                          "%s: csr indices[%lld] = %lld (row %lld) is out "
                          "of range [0, %lld)",
                          what, (long long)j, (long long)c, (long long)r,
                          (long long)cols);
      int64_t prev = j > lo ? mxc__sparse_idx_get(&ix, j - 1) : -1;
      MXC_RETURN_ERROR_IF(c <= prev, MXC_ERR_INVALID_ARGUMENT,
                          "%s: csr indices[%lld] = %lld (row %lld) is not "
                          "greater than indices[%lld] = %lld; column indices "
                          "must be strictly increasing within a row",
                          what, (long long)j, (long long)c, (long long)r,
                          (long long)(j - 1), (long long)prev);
    }
  }
  return MXC_OK;
}

static int check_rsp(const mxc__ndarray *a, int full, const char *what) {
  if (!full) return MXC_OK; /* sizes hold by construction */
  mxc__dense_view ix = mxc__sparse_aux(a, 0);
  int64_t rows = a->shape.dims[0];
  for (int64_t j = 0; j < ix.shape.dims[0]; ++j) {
    int64_t r = mxc__sparse_idx_get(&ix, j);
    MXC_RETURN_ERROR_IF(r < 0 || r >= rows, MXC_ERR_INVALID_ARGUMENT,
                        "%s: row_sparse indices[%lld] = %lld is out of range "
                        "[0, %lld)",
                        what, (long long)j, (long long)r, (long long)rows);
    int64_t prev = j > 0 ? mxc__sparse_idx_get(&ix, j - 1) : -1;
    MXC_RETURN_ERROR_IF(r <= prev, MXC_ERR_INVALID_ARGUMENT,
                        "%s: row_sparse indices[%lld] = %lld is not greater "
                        "than indices[%lld] = %lld; row indices must be "
                        "strictly increasing",
                        what, (long long)j, (long long)r, (long long)(j - 1),
                        (long long)prev);
  }
  return MXC_OK;
}

int mxc__sparse_check(const mxc__ndarray *a, int full, const char *what) {
  int rc = a->stype == MXC_STYPE_CSR ? check_csr(a, full, what)
                                     : check_rsp(a, full, what);
  if (rc == MXC_OK && full) atomic_store(&sp_of(a)->valid, 1);
  return rc;
}

int mxc__sparse_require_valid(const mxc__ndarray *a, const char *what) {
  if (atomic_load(&sp_of(a)->valid)) return MXC_OK;
  return mxc__sparse_check(a, 1, what);
}
