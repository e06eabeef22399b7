/* Engine-ordered operations on whole sparse arrays: copies, and the
 * synchronous reads behind the C API (check_format, nnz, data and aux).
 *
 * Every function here reaches the blocks of a sparse array only from work
 * pushed on the array's variable (see ndarray.h). The synchronous reads
 * push a read, wait for it, and carry their result and any error message
 * back in a struct on the caller's stack: the work may run in another
 * thread (error messages are thread-local), and a failed check must not
 * poison the array. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/ndarray/ndarray.h"

/* ---- copies ---------------------------------------------------------- */

typedef struct copy_args {
  mxc__ndarray src, dst; /* view structs; pending work keeps the chunks */
} copy_args;

/* The GPU id of a's memory, or MXC__GPU_HOST. */
static int gpu_of(const mxc__ndarray *a) {
  return a->chunk->dev.type == MXC_DEVICE_GPU ? a->chunk->dev.id
                                               : MXC__GPU_HOST;
}

/* Index block s (of src's index dtype, n entries, on src_gpu) into d (of
 * dst's, on dst_gpu): straight when the dtypes agree, else converted on
 * the host. */
static int copy_index(const mxc__dense_view *s, int src_gpu,
                      const mxc__dense_view *d, int dst_gpu) {
  size_t n = (size_t)s->shape.dims[0];
  if (s->dtype == d->dtype) {
    return mxc__gpu_copy(d->ptr, dst_gpu, s->ptr, src_gpu,
                         n * mxc__dtype_size(s->dtype));
  }
  void *hs = mxc__malloc(n * 8 + 1), *hd = mxc__malloc(n * 8 + 1);
  int rc = hs && hd ? MXC_OK : MXC_ERR_OOM;
  size_t sbytes = n * mxc__dtype_size(s->dtype);
  if (rc == MXC_OK && src_gpu == MXC__GPU_HOST) {
    memcpy(hs, s->ptr, sbytes);
  } else if (rc == MXC_OK) {
    rc = mxc__gpu_copy(hs, MXC__GPU_HOST, s->ptr, src_gpu, sbytes);
  }
  mxc__dense_view vs = *s, vd = *d;
  vs.ptr = hs, vd.ptr = hd;
  for (size_t i = 0; rc == MXC_OK && i < n; ++i) {
    mxc__sparse_idx_set(&vd, (int64_t)i, mxc__sparse_idx_get(&vs, (int64_t)i));
  }
  if (rc == MXC_OK) {
    rc = mxc__gpu_copy(d->ptr, dst_gpu, hd, MXC__GPU_HOST,
                       n * mxc__dtype_size(d->dtype));
  }
  mxc__free(hs);
  mxc__free(hd);
  if (rc == MXC_ERR_OOM) {
    return mxc__error_set(rc, "copy: out of memory converting %zu indices", n);
  }
  return rc;
}

/* mxc__sparse_copy_now with a GPU on either side: blocks through the
 * plug-in's synchronous copies. A CPU source is checked first, so that a
 * GPU array is always well-formed (its kernels cannot check it). */
static int copy_now_dev(const mxc__ndarray *src, const mxc__ndarray *dst) {
  int sg = gpu_of(src), dg = gpu_of(dst);
  if (sg == MXC__GPU_HOST) {
    MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(src, "copy"));
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(dst, mxc__sparse_nnz(src)));
  mxc__dense_view sd = mxc__sparse_data(src), dd = mxc__sparse_data(dst);
  MXC_FORWARD_IF_ERROR(mxc__gpu_copy(
      dd.ptr, dg, sd.ptr, sg,
      (size_t)mxc__shape_size(&sd.shape) * mxc__dtype_size(src->dtype)));
  for (int k = 0; k < mxc__sparse_n_aux(src->stype); ++k) {
    mxc__dense_view s = mxc__sparse_aux(src, k), d = mxc__sparse_aux(dst, k);
    MXC_FORWARD_IF_ERROR(copy_index(&s, sg, &d, dg));
  }
  mxc__sparse_set_valid(dst);
  return MXC_OK;
}

int mxc__sparse_copy_now(const mxc__ndarray *src, const mxc__ndarray *dst) {
  if (gpu_of(src) != MXC__GPU_HOST || gpu_of(dst) != MXC__GPU_HOST) {
    return copy_now_dev(src, dst);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(dst, mxc__sparse_nnz(src)));
  mxc__dense_view sd = mxc__sparse_data(src), dd = mxc__sparse_data(dst);
  size_t nbytes =
      (size_t)mxc__shape_size(&sd.shape) * mxc__dtype_size(src->dtype);
  if (nbytes) memcpy(dd.ptr, sd.ptr, nbytes);
  for (int k = 0; k < mxc__sparse_n_aux(src->stype); ++k) {
    mxc__dense_view s = mxc__sparse_aux(src, k), d = mxc__sparse_aux(dst, k);
    for (int64_t i = 0; i < s.shape.dims[0]; ++i) {
      mxc__sparse_idx_set(&d, i, mxc__sparse_idx_get(&s, i));
    }
  }
  /* Valid when the source was: the check covers values, not the index
   * dtype, and a valid source's indices fit dst (its extents fit them). */
  if (atomic_load(&src->chunk->sparse->valid)) mxc__sparse_set_valid(dst);
  return MXC_OK;
}

static int copy_fn(void *arg, mxc__exec *ex) {
  copy_args *c = arg;
  int rc = mxc__sparse_copy_now(&c->src, &c->dst);
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

static void free_args(void *arg) { mxc__free(arg); }

int mxc__sparse_copy(const mxc__ndarray *src, const mxc__ndarray *dst) {
  MXC_RETURN_ERROR_IF(src->stype != dst->stype, MXC_ERR_STYPE,
                      "copy: source storage type %d differs from destination "
                      "storage type %d; use cast_storage",
                      src->stype, dst->stype);
  MXC_FORWARD_IF_ERROR(mxc__copy_check(src, dst));
  if (src->chunk == dst->chunk) return MXC_OK; /* views of one array */
  copy_args *args = mxc__malloc(sizeof *args);
  MXC_RETURN_ERROR_IF(!args, MXC_ERR_OOM, "copy: out of memory");
  args->src = *src;
  args->dst = *dst;
  args->src.ag = args->dst.ag = NULL;
  int rc = mxc__ndarray_push_host(copy_fn, args, free_args, src, dst, 0,
                                  "copy_sparse");
  if (rc != MXC_OK) mxc__free(args);
  return rc;
}

/* ---- synchronous reads ----------------------------------------------- */

typedef struct read_args {
  mxc__ndarray a;
  int full;          /* check */
  int part;          /* part_sync */
  int64_t nnz;       /* nnz_sync */
  mxc__ndarray *out; /* part_sync */
  int (*body)(struct read_args *r);
  int rc;
  char msg[MXC__ERROR_MAX];
} read_args;

static int read_fn(void *arg, mxc__exec *ex) {
  (void)ex;
  read_args *r = arg;
  r->rc = r->body(r);
  if (r->rc != MXC_OK) snprintf(r->msg, sizeof r->msg, "%s", mxc__error_msg());
  return MXC_OK; /* a failed read does not poison the array */
}

/* Pushes r->body as a read of a (priority 1: the caller is blocked) and
 * waits; the wait covers the pushed work, so r on the stack outlives it. */
static int run_read(const mxc__ndarray *a, read_args *r) {
  r->a = *a;
  r->a.ag = NULL;
  r->rc = MXC_OK;
  r->msg[0] = '\0';
  MXC_FORWARD_IF_ERROR(
      mxc__ndarray_push_host(read_fn, r, NULL, a, NULL, 1, "sparse_read"));
  MXC_FORWARD_IF_ERROR(
      mxc__engine_wait_var(mxc__ndarray_engine(a), mxc__ndarray_var(a), 1));
  if (r->rc != MXC_OK) return mxc__error_set_raw(r->rc, r->msg);
  return MXC_OK;
}

/* A GPU CSR array was checked on its way there (sparse.c) and is never
 * written by host code: nothing to read back. */
static int check_body(read_args *r) {
  if (gpu_of(&r->a) != MXC__GPU_HOST) {
    MXC_RETURN_ERROR_IF(!atomic_load(&r->a.chunk->sparse->valid),
                        MXC_ERR_INTERNAL,
                        "check_format: a csr array on gpu(%d) was never "
                        "checked",
                        r->a.chunk->dev.id);
    return MXC_OK;
  }
  return mxc__sparse_check(&r->a, r->full, "check_format");
}

int mxc__sparse_check_sync(const mxc__ndarray *a, int full) {
  read_args r;
  r.full = full;
  r.body = check_body;
  return run_read(a, &r);
}

static int nnz_body(read_args *r) {
  r->nnz = mxc__sparse_nnz(&r->a);
  return MXC_OK;
}

int mxc__sparse_nnz_sync(const mxc__ndarray *a, int64_t *out) {
  read_args r;
  r.body = nnz_body;
  MXC_FORWARD_IF_ERROR(run_read(a, &r));
  *out = r.nnz;
  return MXC_OK;
}

/* Creates the dense copy inside the read, where the sizes are known. */
static int part_body(read_args *r) {
  mxc__dense_view v =
      r->part < 0 ? mxc__sparse_data(&r->a) : mxc__sparse_aux(&r->a, r->part);
  mxc__ndarray *d;
  MXC_FORWARD_IF_ERROR(
      mxc__ndarray_create(&v.shape, v.dtype, r->a.chunk->dev, 0, &d));
  size_t nbytes = mxc__ndarray_nbytes(d);
  int g = gpu_of(&r->a), rc = MXC_OK;
  if (g != MXC__GPU_HOST) {
    rc = mxc__gpu_copy(mxc__ndarray_ptr(d), g, v.ptr, g, nbytes);
  } else if (nbytes) {
    memcpy(mxc__ndarray_ptr(d), v.ptr, nbytes);
  }
  if (rc != MXC_OK) {
    mxc__ndarray_free(d);
    return rc;
  }
  r->out = d;
  return MXC_OK;
}

int mxc__sparse_part_sync(const mxc__ndarray *a, int part, mxc__ndarray **out) {
  MXC_RETURN_ERROR_IF(part < -1 || part >= mxc__sparse_n_aux(a->stype),
                      MXC_ERR_INVALID_ARGUMENT,
                      "sparse part %d is out of range; expected -1 (data) "
                      "or 0..%d",
                      part, mxc__sparse_n_aux(a->stype) - 1);
  read_args r;
  r.part = part;
  r.out = NULL;
  r.body = part_body;
  int rc = run_read(a, &r);
  if (rc != MXC_OK) {
    /* A failure pushed by another thread after our read can be reported
     * although the read ran. */
    mxc__ndarray_free(r.out);
    return rc;
  }
  *out = r.out;
  return MXC_OK;
}
