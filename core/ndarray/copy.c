/* Copies between arrays and host memory, ordered by the engine. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/ndarray/ndarray.h"
#include "core/profiler/profiler.h"

typedef struct copy_args {
  void *dst;
  const void *src;
  size_t nbytes;
  int dst_gpu, src_gpu; /* GPU ids, or MXC__GPU_HOST */
} copy_args;

/* The GPU id of a's memory, or MXC__GPU_HOST. */
static int gpu_of(const mxc__ndarray *a) {
  return a->chunk->dev.type == MXC_DEVICE_GPU ? a->chunk->dev.id
                                               : MXC__GPU_HOST;
}

/* memmove: src and dst may be overlapping views of one chunk. Device
 * memory goes through the plug-in, which the host must never touch. */
static int copy_bytes(const copy_args *c) {
  if (c->dst_gpu != MXC__GPU_HOST || c->src_gpu != MXC__GPU_HOST) {
    return mxc__gpu_copy(c->dst, c->dst_gpu, c->src, c->src_gpu, c->nbytes);
  }
  if (c->nbytes) memmove(c->dst, c->src, c->nbytes);
  return MXC_OK;
}

/* The copy as a span of the thread that runs it, with its size. */
static int copy_profiled(const copy_args *c, const mxc__exec *ex) {
  int64_t t0 = mxc__prof_now();
  int rc = copy_bytes(c);
  char bytes[32];
  snprintf(bytes, sizeof bytes, "%zu", c->nbytes);
  mxc__prof_span(MXC__PROF_COPY, mxc__exec_name(ex), t0, "bytes", bytes);
  return rc;
}

static int copy_fn(void *arg, mxc__exec *ex) {
  copy_args *c = arg;
  int rc = mxc__prof_on(MXC__PROF_COPY) ? copy_profiled(c, ex) : copy_bytes(c);
  /* The message lives in this worker's error slot: hand it to the engine,
   * which reports it at the waiter's next wait. */
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

static int check_nbytes(const mxc__ndarray *a, size_t nbytes,
                        const void *host, const char *what) {
  /* A sparse array's layout is known only under the engine: its parts are
   * read with mxc__sparse_part_sync instead. */
  MXC_RETURN_ERROR_IF(a->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "%s: the array is sparse (storage type %d); host "
                      "copies take dense arrays (read the parts of a sparse "
                      "array, or cast_storage it to dense)",
                      what, a->stype);
  size_t want = mxc__ndarray_nbytes(a);
  char buf[160];
  MXC_RETURN_ERROR_IF(nbytes != want, MXC_ERR_SHAPE,
                      "%s: nbytes is %zu but the array %s of %s holds %zu "
                      "bytes",
                      what, nbytes, mxc__shape_str(&a->shape, buf, sizeof buf),
                      mxc__dtype_name(a->dtype), want);
  MXC_RETURN_ERROR_IF(host == NULL && nbytes > 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: host pointer is NULL for %zu bytes", what, nbytes);
  return MXC_OK;
}

/* The device whose workers run a copy: a copy involving a GPU runs on
 * that GPU's copy worker (the destination's, or the source's for a copy
 * to the host: the side mxc__gpu_copy enqueues on), asynchronously on its
 * stream; a host copy on the CPU workers. */
static mxc__device copy_device(const mxc__ndarray *read,
                               const mxc__ndarray *write) {
  if (write && write->chunk->dev.type == MXC_DEVICE_GPU) {
    return write->chunk->dev;
  }
  if (read && read->chunk->dev.type == MXC_DEVICE_GPU) return read->chunk->dev;
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  return cpu;
}

/* host: run on the CPU workers whatever the arrays' devices
 * (mxc__ndarray_push_host). */
static int push_impl(mxc__sync_fn fn, void *arg, mxc__free_fn free_fn,
                     const mxc__ndarray *read, const mxc__ndarray *write,
                     int priority, const char *name, int run_here, int host) {
  const mxc__ndarray *on = write ? write : read;
  mxc__var *rv = read ? mxc__ndarray_var(read) : NULL;
  mxc__var *wv = write ? mxc__ndarray_var(write) : NULL;
  mxc__push_args p;
  memset(&p, 0, sizeof p);
  p.sync_fn = fn;
  p.arg = arg;
  p.free_fn = free_fn;
  p.reads = read ? &rv : NULL;
  p.n_reads = read ? 1 : 0;
  p.writes = write ? &wv : NULL;
  p.n_writes = write ? 1 : 0;
  p.priority = priority;
  p.name = name;
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  p.dev = host ? cpu : fn == copy_fn ? copy_device(read, write)
                                     : on->chunk->dev;
  p.copy = fn == copy_fn && p.dev.type == MXC_DEVICE_GPU;
  p.run_here = run_here;
  return mxc__engine_push(mxc__ndarray_engine(on), &p);
}

int mxc__ndarray_push(mxc__sync_fn fn, void *arg, mxc__free_fn free_fn,
                      const mxc__ndarray *read, const mxc__ndarray *write,
                      int priority, const char *name) {
  /* Pushed host code (fills, initializers, sparse work) touches the
   * arrays' memory: device memory is not its to read. Operators reach a
   * GPU through their kernels (mxc__op_invoke). */
  for (int i = 0; i < 2; ++i) {
    const mxc__ndarray *a = i ? write : read;
    MXC_RETURN_ERROR_IF(fn != copy_fn && a &&
                            a->chunk->dev.type == MXC_DEVICE_GPU,
                        MXC_ERR_UNSUPPORTED,
                        "'%s' runs on the host and cannot take an array on "
                        "gpu(%d) yet",
                        name ? name : "work", a->chunk->dev.id);
  }
  return push_impl(fn, arg, free_fn, read, write, priority, name, 0, 0);
}

int mxc__ndarray_push_host(mxc__sync_fn fn, void *arg, mxc__free_fn free_fn,
                           const mxc__ndarray *read, const mxc__ndarray *write,
                           int priority, const char *name) {
  return push_impl(fn, arg, free_fn, read, write, priority, name, 0, 1);
}

/* Pushes one copy with arguments on the caller's stack and waits for it:
 * the wait covers the pushed function (for a GPU, until its stream has
 * done the copy), so the stack outlives its use. A host copy runs in
 * this thread when the array is free (run_here); a GPU copy on the GPU's
 * copy worker. */
static int push_and_wait(const mxc__ndarray *a, copy_args *args, int writes,
                         const char *name) {
  /* Priority 1: a caller is blocked on it. */
  MXC_FORWARD_IF_ERROR(push_impl(copy_fn, args, NULL, writes ? NULL : a,
                                 writes ? a : NULL, 1, name, 1, 0));
  /* Waits for the copy itself (a read when copying to the host); the
   * write, if any, was versioned when it was pushed. */
  return mxc__engine_wait_var(mxc__ndarray_engine(a), mxc__ndarray_var(a),
                              MXC__WAIT_ALL_WORK);
}

int mxc__ndarray_copy_from_host(const mxc__ndarray *a, const void *src,
                                size_t nbytes) {
  MXC_FORWARD_IF_ERROR(check_nbytes(a, nbytes, src, "copy_from_host"));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(a));
  copy_args args = {mxc__ndarray_ptr(a), src, nbytes, gpu_of(a),
                    MXC__GPU_HOST};
  return push_and_wait(a, &args, 1, "copy_from_host");
}

int mxc__ndarray_copy_to_host(const mxc__ndarray *a, void *dst,
                              size_t nbytes) {
  MXC_FORWARD_IF_ERROR(check_nbytes(a, nbytes, dst, "copy_to_host"));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(a));
  copy_args args = {dst, mxc__ndarray_ptr(a), nbytes, MXC__GPU_HOST,
                    gpu_of(a)};
  return push_and_wait(a, &args, 0, "copy_to_host");
}

int mxc__ndarray_host_bytes(const mxc__ndarray *a, const void **out,
                            void **owned) {
  *owned = NULL;
  if (a->chunk->dev.type != MXC_DEVICE_GPU) {
    *out = mxc__ndarray_ptr(a);
    return MXC_OK;
  }
  size_t n = mxc__ndarray_nbytes(a);
  void *buf = mxc__malloc(n ? n : 1);
  MXC_RETURN_ERROR_IF(!buf, MXC_ERR_OOM,
                      "out of memory for a host copy of %zu bytes", n);
  int rc = mxc__ndarray_copy_to_host(a, buf, n);
  if (rc != MXC_OK) {
    mxc__free(buf);
    return rc;
  }
  *out = *owned = buf;
  return MXC_OK;
}

static void free_args(void *arg) { mxc__free(arg); }

int mxc__copy_check(const mxc__ndarray *src, const mxc__ndarray *dst) {
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&src->shape, &dst->shape),
                      MXC_ERR_SHAPE,
                      "copy: source shape %s differs from destination shape "
                      "%s",
                      mxc__shape_str(&src->shape, b1, sizeof b1),
                      mxc__shape_str(&dst->shape, b2, sizeof b2));
  MXC_RETURN_ERROR_IF(src->dtype != dst->dtype, MXC_ERR_DTYPE,
                      "copy: source dtype %s differs from destination dtype "
                      "%s; cast explicitly",
                      mxc__dtype_name(src->dtype), mxc__dtype_name(dst->dtype));
  return MXC_OK;
}

/* name: the engine's name of the copy (failures are reported under it),
 * copied behind the arguments; NULL for "copy". */
static int copy_impl(const mxc__ndarray *src, const mxc__ndarray *dst,
                     const char *name) {
  if (src->stype != MXC_STYPE_DEFAULT || dst->stype != MXC_STYPE_DEFAULT) {
    return mxc__sparse_copy(src, dst);
  }
  MXC_FORWARD_IF_ERROR(mxc__copy_check(src, dst));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(src));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(dst));
  size_t nlen = name ? strlen(name) + 1 : 0;
  copy_args *args = mxc__malloc(sizeof *args + nlen);
  MXC_RETURN_ERROR_IF(!args, MXC_ERR_OOM, "copy: out of memory");
  args->dst = mxc__ndarray_ptr(dst);
  args->src = mxc__ndarray_ptr(src);
  args->nbytes = mxc__ndarray_nbytes(src);
  args->dst_gpu = gpu_of(dst);
  args->src_gpu = gpu_of(src);
  const char *as = "copy";
  if (name) as = memcpy(args + 1, name, nlen); /* lives until free_args */
  int rc = mxc__ndarray_push(copy_fn, args, free_args, src, dst, 0, as);
  if (rc != MXC_OK) mxc__free(args);
  return rc;
}

int mxc__ndarray_copy(const mxc__ndarray *src, const mxc__ndarray *dst) {
  return copy_impl(src, dst, NULL);
}

int mxc__ndarray_copy_named(const mxc__ndarray *src, const mxc__ndarray *dst,
                            const char *name) {
  return copy_impl(src, dst, name);
}

int mxc__ndarray_wait(const mxc__ndarray *a, int for_write) {
  return mxc__engine_wait_var(mxc__ndarray_engine(a), mxc__ndarray_var(a),
                              for_write);
}
