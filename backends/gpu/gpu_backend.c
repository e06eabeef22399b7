/* The GPU backend, host side: the CUDA plug-in's kernels
 * (core/base/gpu_plugin.h) attached to their operators as backend "cuda"
 * for MXC_DEVICE_GPU, and the adapter that turns a call's blobs into the
 * plug-in's arrays.
 *
 * The plug-in's table is read when the registry is built, which loads the
 * library (dlopen) but not the CUDA runtime: a machine without the plug-in
 * pays one failed dlopen; one without a GPU never opens the driver. The
 * kernels only ever run on arrays of a GPU that mxc__gpu_check accepted
 * (creating an array there made that check). */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/base/log.h"
#include "core/base/shape.h"
#include "core/op/backend.h"

/* The plug-in's kernels sorted by operator name (bsearch per call): set
 * once in attach, read-only afterwards. */
static const mxc__gpu_kernel **g_sorted;
static int g_n;

static int by_name(const void *a, const void *b) {
  const mxc__gpu_kernel *const *x = a, *const *y = b;
  return strcmp((*x)->op, (*y)->op);
}

static const mxc__gpu_kernel *kernel_of(const mxc__op *op) {
  mxc__gpu_kernel key = {op->name, NULL, NULL};
  const mxc__gpu_kernel *kp = &key;
  const mxc__gpu_kernel **hit =
      bsearch(&kp, g_sorted, (size_t)g_n, sizeof *g_sorted, by_name);
  return hit ? *hit : NULL;
}

static int all_dense(const int *stypes, int n) {
  for (int i = 0; stypes && i < n; ++i) {
    if (stypes[i] != MXC_STYPE_DEFAULT && stypes[i] != -1) return 0;
  }
  return 1;
}

/* The plug-in decides by dtypes; sparse calls never reach a GPU (sparse
 * arrays live on the CPU). */
static int supports(const mxc__op *op, const void *param,
                    const mxc__call_types *t) {
  (void)param;
  const mxc__gpu_kernel *k = kernel_of(op);
  if (!k || !all_dense(t->in_stypes, t->n_in) ||
      !all_dense(t->out_stypes, t->n_out)) {
    return 0;
  }
  int dt[64];
  if (t->n_in + t->n_out > (int)(sizeof dt / sizeof dt[0])) return 0;
  for (int i = 0; i < t->n_in; ++i) dt[i] = t->in_dtypes[i];
  for (int i = 0; i < t->n_out; ++i) dt[t->n_in + i] = t->out_dtypes[i];
  if (!k->supports) {
    for (int i = 0; i < t->n_in + t->n_out; ++i) {
      if (dt[i] != MXC_DTYPE_FLOAT32 && dt[i] != -1) return 0;
    }
    return 1;
  }
  return k->supports(dt, t->n_in, t->n_out);
}

static void to_array(const mxc__blob *b, mxc__gpu_array *a) {
  a->ptr = b->ptr;
  a->ndim = b->shape.ndim;
  a->size = mxc__shape_size(&b->shape);
  for (int d = 0; d < b->shape.ndim; ++d) a->dims[d] = b->shape.dims[d];
  a->dtype = b->dtype;
}

/* The slice reserved at push time (MXC__RES_RANDOM; zero otherwise): the
 * plug-in's samplers draw the numbers the CPU kernel would from it. */
static mxc__gpu_rng rng_of(const mxc__rng_slice *s) {
  mxc__gpu_rng r = {{s->key[0], s->key[1]}, s->block, s->n_blocks};
  return r;
}

/* mxc__req and the plug-in's MXC__GPU_REQ_* are the same numbers. */
_Static_assert(MXC__REQ_WRITE == MXC__GPU_REQ_WRITE &&
                   MXC__REQ_ADD == MXC__GPU_REQ_ADD &&
                   MXC__REQ_INPLACE == MXC__GPU_REQ_INPLACE &&
                   MXC__REQ_NULL == MXC__GPU_REQ_NULL,
               "write modes differ");

/* On the engine's GPU workers the kernel is enqueued on the worker's
 * stream; the operation counts as done once an event recorded after it
 * is reached (an asynchronous failure surfaces there, named by the
 * engine: core/engine/flight.c). */
static int run_call(const mxc__op *op, const mxc__gpu_kernel *k,
                    mxc__gpu_call *c) {
  char why[512] = "";
  int rc = mxc__gpu_launch(k, c, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "operator '%s' on gpu(%d): %s",
                      op->name, c->dev, why);
  return MXC_OK;
}

static int compute(const mxc__op *op, const mxc__opctx *ctx,
                   const void *param, const mxc__blob *in, int n_in,
                   const mxc__blob *out, int n_out, const mxc__req *req) {
  const mxc__gpu_kernel *k = kernel_of(op);
  MXC_RETURN_ERROR_IF(!k, MXC_ERR_INTERNAL,
                      "operator '%s': no GPU kernel, but it was picked",
                      op->name);
  size_t n = (size_t)(n_in + n_out);
  mxc__gpu_array *arr = mxc__malloc(n * sizeof *arr + (size_t)n_out * sizeof(int));
  MXC_RETURN_ERROR_IF(!arr, MXC_ERR_OOM, "operator '%s': out of memory",
                      op->name);
  int *reqs = (int *)(arr + n);
  for (int i = 0; i < n_in; ++i) to_array(&in[i], &arr[i]);
  for (int i = 0; i < n_out; ++i) {
    to_array(&out[i], &arr[n_in + i]);
    reqs[i] = req ? (int)req[i] : MXC__GPU_REQ_WRITE;
  }
  mxc__gpu_call c = {ctx->dev.id, param, arr,  n_in,
                     arr + n_in,  n_out, reqs, ctx->is_train,
                     rng_of(&ctx->rng)};
  int rc = run_call(op, k, &c);
  mxc__free(arr);
  return rc;
}

extern const mxc__backend mxc__backend_cuda;

static int attach(mxc__registry *r) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  if (!p || p->n_kernels <= 0) return MXC_OK; /* no plug-in: no kernels */
  g_sorted = mxc__calloc_permanent((size_t)p->n_kernels, sizeof *g_sorted);
  MXC_RETURN_ERROR_IF(!g_sorted, MXC_ERR_OOM,
                      "GPU backend: out of memory for the kernel table");
  for (int i = 0; i < p->n_kernels; ++i) g_sorted[i] = &p->kernels[i];
  qsort(g_sorted, (size_t)p->n_kernels, sizeof *g_sorted, by_name);
  g_n = p->n_kernels;
  mxc__kernel k = {
      .backend = &mxc__backend_cuda, .supports = supports, .compute = compute};
  for (int i = 0; i < g_n; ++i) {
    /* A kernel that cannot attach (an operator this build lacks) costs
     * that kernel, not the registry: failing here would take every
     * operator down, CPU ones included. */
    if (mxc__registry_attach_kernel(r, g_sorted[i]->op, &k) != MXC_OK) {
      mxc__log(MXC_LOG_WARNING, "GPU kernel of '%s' not attached: %s",
               g_sorted[i]->op, mxc__error_msg());
      mxc__error_clear();
    }
  }
  return MXC_OK;
}

const mxc__backend mxc__backend_cuda = {
    .name = "cuda",
    .dev_type = MXC_DEVICE_GPU,
    .priority = 10,
    .attach = attach,
};

/* A constructor cannot report failure; without the backend every GPU call
 * is refused by name, as without a plug-in. */
__attribute__((constructor)) static void register_cuda(void) {
  if (mxc__backend_register(&mxc__backend_cuda) != MXC_OK) {
    mxc__error_clear();
  }
}
