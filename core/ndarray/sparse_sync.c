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
#include "core/ndarray/ndarray.h"

/* ---- copies ---------------------------------------------------------- */

typedef struct copy_args {
  mxc__ndarray src, dst; /* view structs; pending work keeps the chunks */
} copy_args;

int mxc__sparse_copy_now(const mxc__ndarray *src, const mxc__ndarray *dst) {
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
  int rc =
      mxc__ndarray_push(copy_fn, args, free_args, src, dst, 0, "copy_sparse");
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
      mxc__ndarray_push(read_fn, r, NULL, a, NULL, 1, "sparse_read"));
  MXC_FORWARD_IF_ERROR(
      mxc__engine_wait_var(mxc__ndarray_engine(a), mxc__ndarray_var(a), 1));
  if (r->rc != MXC_OK) return mxc__error_set_raw(r->rc, r->msg);
  return MXC_OK;
}

static int check_body(read_args *r) {
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
  if (nbytes) memcpy(mxc__ndarray_ptr(d), v.ptr, nbytes);
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
