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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/base/log.h"
#include "core/base/shape.h"
#include "core/ndarray/ndarray.h"
#include "core/op/backend.h"

/* A dense row of the plug-in and its accepts function (NULL: none). */
typedef struct gpu_row {
  const mxc__gpu_kernel *k;
  mxc__gpu_accepts_fn accepts;
} gpu_row;

/* The plug-in's kernels sorted by operator name (bsearch per call): set
 * once in attach, read-only afterwards. */
static gpu_row *g_sorted;
static int g_n;

static int by_name(const void *a, const void *b) {
  const gpu_row *x = a, *y = b;
  return strcmp(x->k->op, y->k->op);
}

static const gpu_row *row_of(const mxc__op *op) {
  mxc__gpu_kernel key = {op->name, NULL, NULL};
  gpu_row kr = {&key, NULL};
  return bsearch(&kr, g_sorted, (size_t)g_n, sizeof *g_sorted, by_name);
}

static const mxc__gpu_kernel *kernel_of(const mxc__op *op) {
  const gpu_row *r = row_of(op);
  return r ? r->k : NULL;
}

/* The plug-in's kernels for sparse arrays (mxc__gpu_sparse_kernel), in
 * table order: set once in attach, read-only afterwards. */
static const mxc__gpu_sparse_kernel *g_sparse;
static int g_ns;

static int all_dense(const int *stypes, int n) {
  for (int i = 0; stypes && i < n; ++i) {
    if (stypes[i] != MXC_STYPE_DEFAULT && stypes[i] != -1) return 0;
  }
  return 1;
}

#define MAX_ARGS 64

/* The call's inputs then outputs (dtypes, or storage types with NULL
 * meaning dense) in out[]; 0 when there are more than MAX_ARGS. */
static int join(const int *in, int n_in, const int *o, int n_out, int dflt,
                int *out) {
  if (n_in + n_out > MAX_ARGS) return 0;
  for (int i = 0; i < n_in; ++i) out[i] = in ? in[i] : dflt;
  for (int i = 0; i < n_out; ++i) out[n_in + i] = o ? o[i] : dflt;
  return 1;
}

/* The row's dtype check (NULL: float32 everywhere). */
static int dtypes_ok(const mxc__gpu_kernel *k, const int *dt, int n_in,
                     int n_out) {
  if (!k->supports) {
    for (int i = 0; i < n_in + n_out; ++i) {
      if (dt[i] != MXC_DTYPE_FLOAT32 && dt[i] != -1) return 0;
    }
    return 1;
  }
  return k->supports(dt, n_in, n_out);
}

/* The first sparse row of op that takes these storage types and dtypes,
 * or NULL. */
static const mxc__gpu_sparse_kernel *sparse_of(const mxc__op *op,
                                               const int *st, const int *dt,
                                               int n_in, int n_out) {
  for (int i = 0; i < g_ns; ++i) {
    const mxc__gpu_sparse_kernel *sk = &g_sparse[i];
    if (strcmp(sk->k.op, op->name) == 0 && sk->stypes(st, n_in, n_out) &&
        dtypes_ok(&sk->k, dt, n_in, n_out)) {
      return sk;
    }
  }
  return NULL;
}

static void to_array(const mxc__blob *b, mxc__gpu_array *a);

/* The call as a row's accepts sees it: no device pointers; shapes, write
 * modes, device and training mode as far as the caller knows them
 * (ndim, size and dev -1 where not). */
static void describe(const mxc__call_types *t, const void *param,
                     const int *dt, mxc__gpu_array *arr, int *reqs,
                     mxc__gpu_call *c) {
  const mxc__call_info *info = t->info;
  for (int i = 0; i < t->n_in + t->n_out; ++i) {
    const mxc__shape *sh = NULL;
    if (info && info->in_shapes && info->out_shapes) {
      sh = i < t->n_in ? &info->in_shapes[i] : &info->out_shapes[i - t->n_in];
    }
    mxc__blob b = {0};
    if (sh) b.shape = *sh;
    b.dtype = dt[i];
    to_array(&b, &arr[i]);
    if (!sh) arr[i].ndim = -1, arr[i].size = -1;
  }
  for (int j = 0; j < t->n_out; ++j) {
    reqs[j] = info && info->req ? (int)info->req[j] : MXC__GPU_REQ_WRITE;
  }
  memset(c, 0, sizeof *c);
  c->dev = info ? info->dev_id : -1;
  c->param = param;
  c->in = arr;
  c->n_in = t->n_in;
  c->out = arr + t->n_in;
  c->n_out = t->n_out;
  c->req = reqs;
  c->is_train = info ? info->is_train : 0;
}

/* The row's accepts function (NULL takes every call): 0 with the reason
 * in the caller's buffer when it declines. */
static int row_accepts(mxc__gpu_accepts_fn accepts, const mxc__call_types *t,
                       const void *param, const int *dt) {
  if (!accepts) return 1;
  mxc__gpu_array arr[MAX_ARGS];
  int reqs[MAX_ARGS];
  mxc__gpu_call c;
  describe(t, param, dt, arr, reqs, &c);
  char why[512] = "";
  if (accepts(&c, why, sizeof why)) return 1;
  if (t->info && t->info->why && t->info->why_len) {
    snprintf(t->info->why, t->info->why_len, "%s",
             why[0] ? why : "the GPU kernel declines these parameters");
  }
  return 0;
}

/* The plug-in decides by dtypes, and for calls with sparse arrays by
 * storage types (its sparse rows); a dense row with an accepts function
 * then by the parameters and shapes. */
static int supports(const mxc__op *op, const void *param,
                    const mxc__call_types *t) {
  int dt[MAX_ARGS] = {0}, st[MAX_ARGS] = {0};
  if (!join(t->in_dtypes, t->n_in, t->out_dtypes, t->n_out, -1, dt)) return 0;
  if (!all_dense(t->in_stypes, t->n_in) ||
      !all_dense(t->out_stypes, t->n_out)) {
    join(t->in_stypes, t->n_in, t->out_stypes, t->n_out, MXC_STYPE_DEFAULT,
         st);
    return sparse_of(op, st, dt, t->n_in, t->n_out) != NULL;
  }
  const gpu_row *r = row_of(op);
  return r && dtypes_ok(r->k, dt, t->n_in, t->n_out) &&
         row_accepts(r->accepts, t, param, dt);
}

static void to_array(const mxc__blob *b, mxc__gpu_array *a) {
  a->ptr = b->ptr;
  a->ndim = b->shape.ndim;
  a->size = mxc__shape_size(&b->shape);
  for (int d = 0; d < b->shape.ndim; ++d) a->dims[d] = b->shape.dims[d];
  a->dtype = b->dtype;
  a->stype = MXC_STYPE_DEFAULT;
  a->index_dtype = 0;
  a->nnz = 0;
  a->aux[0] = a->aux[1] = NULL;
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

/* An array of a sparse call: dense arrays as in dense calls, a CSR
 * array with its parts (core/base/gpu_plugin.h). GPU CSR arrays are
 * checked when they are made (core/ndarray/sparse.c), never here: their
 * indices are in device memory. */
static int to_sparse_array(const mxc__op *op, const mxc__ndarray *x,
                           mxc__gpu_array *a) {
  mxc__blob b = {0};
  b.ptr = x->stype == MXC_STYPE_DEFAULT ? mxc__ndarray_ptr(x) : NULL;
  b.shape = x->shape;
  b.dtype = x->dtype;
  to_array(&b, a);
  if (x->stype == MXC_STYPE_DEFAULT) return MXC_OK;
  MXC_RETURN_ERROR_IF(!atomic_load(&x->chunk->sparse->valid),
                      MXC_ERR_INTERNAL,
                      "operator '%s': a %s array on gpu(%d) was never "
                      "checked",
                      op->name, mxc__stype_name(x->stype),
                      x->chunk->dev.id);
  a->stype = x->stype;
  a->ptr = mxc__sparse_data(x).ptr;
  a->index_dtype = mxc__sparse_index_dtype(x);
  a->nnz = mxc__sparse_nnz(x);
  for (int k = 0; k < mxc__sparse_n_aux(x->stype); ++k) {
    a->aux[k] = mxc__sparse_aux(x, k).ptr;
  }
  return MXC_OK;
}

/* Runs a call with sparse arrays (invoke's sparse dispatch on a GPU): the
 * sparse row that supports says it takes the call. */
static int compute_sparse(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__ndarray *in, int n_in,
                          const mxc__ndarray *out, int n_out,
                          const mxc__req *req) {
  int st[MAX_ARGS] = {0}, dt[MAX_ARGS] = {0};
  MXC_RETURN_ERROR_IF(n_in + n_out > MAX_ARGS, MXC_ERR_INTERNAL,
                      "operator '%s': too many arrays for a GPU kernel",
                      op->name);
  for (int i = 0; i < n_in + n_out; ++i) {
    const mxc__ndarray *x = i < n_in ? &in[i] : &out[i - n_in];
    st[i] = x->stype, dt[i] = x->dtype;
  }
  const mxc__gpu_sparse_kernel *sk = sparse_of(op, st, dt, n_in, n_out);
  MXC_RETURN_ERROR_IF(!sk, MXC_ERR_INTERNAL,
                      "operator '%s': no GPU kernel for these storage "
                      "types, but one was picked",
                      op->name);
  mxc__gpu_array arr[MAX_ARGS];
  int reqs[MAX_ARGS];
  for (int i = 0; i < n_in + n_out; ++i) {
    const mxc__ndarray *x = i < n_in ? &in[i] : &out[i - n_in];
    MXC_FORWARD_IF_ERROR(to_sparse_array(op, x, &arr[i]));
  }
  for (int i = 0; i < n_out; ++i) {
    reqs[i] = req ? (int)req[i] : MXC__GPU_REQ_WRITE;
  }
  mxc__gpu_call c = {ctx->dev.id, param, arr,  n_in,
                     arr + n_in,  n_out, reqs, ctx->is_train,
                     rng_of(&ctx->rng)};
  return run_call(op, &sk->k, &c);
}

extern const mxc__backend mxc__backend_cuda;

static void attach_one(mxc__registry *r, const char *name,
                       const mxc__kernel *k) {
  /* A kernel that cannot attach (an operator this build lacks) costs
   * that kernel, not the registry: failing here would take every
   * operator down, CPU ones included. */
  if (mxc__registry_attach_kernel(r, name, k) != MXC_OK) {
    mxc__log(MXC_LOG_WARNING, "GPU kernel of '%s' not attached: %s", name,
             mxc__error_msg());
    mxc__error_clear();
  }
}

/* The plug-in's sparse rows (a table that has them); an operator with no
 * dense row gets the backend's kernel here (one kernel per operator and
 * backend: supports and compute_sparse pick the row). */
static void attach_sparse(mxc__registry *r, const mxc__gpu_plugin *p,
                          const mxc__kernel *k) {
  size_t end = offsetof(mxc__gpu_plugin, n_sparse_kernels) + sizeof(int);
  if (p->size < end || !p->sparse_kernels || p->n_sparse_kernels <= 0) return;
  g_sparse = p->sparse_kernels;
  g_ns = p->n_sparse_kernels;
  for (int i = 0; i < g_ns; ++i) {
    mxc__op probe = {0};
    probe.name = g_sparse[i].k.op;
    int seen = kernel_of(&probe) != NULL;
    for (int j = 0; j < i && !seen; ++j) {
      seen = strcmp(g_sparse[j].k.op, probe.name) == 0;
    }
    if (!seen) attach_one(r, probe.name, k);
  }
}

/* The table's accepts functions onto their rows (a table whose size
 * covers them). An entry naming no row is reported, not fatal. */
static void attach_accepts(const mxc__gpu_plugin *p) {
  size_t end = offsetof(mxc__gpu_plugin, n_accepts) + sizeof(int);
  if (p->size < end || !p->accepts) return;
  for (int i = 0; i < p->n_accepts; ++i) {
    mxc__op probe = {0};
    probe.name = p->accepts[i].op;
    gpu_row *r = (gpu_row *)row_of(&probe);
    if (r) {
      r->accepts = p->accepts[i].accepts;
    } else {
      mxc__log(MXC_LOG_WARNING, "GPU plug-in: accepts of '%s', which has "
               "no kernel row", probe.name);
    }
  }
}

static int attach(mxc__registry *r) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  if (!p || p->n_kernels <= 0) return MXC_OK; /* no plug-in: no kernels */
  g_sorted = mxc__calloc_permanent((size_t)p->n_kernels, sizeof *g_sorted);
  MXC_RETURN_ERROR_IF(!g_sorted, MXC_ERR_OOM,
                      "GPU backend: out of memory for the kernel table");
  for (int i = 0; i < p->n_kernels; ++i) g_sorted[i].k = &p->kernels[i];
  qsort(g_sorted, (size_t)p->n_kernels, sizeof *g_sorted, by_name);
  g_n = p->n_kernels;
  attach_accepts(p);
  mxc__kernel k = {.backend = &mxc__backend_cuda,
                   .supports = supports,
                   .compute = compute,
                   .compute_sparse = compute_sparse};
  for (int i = 0; i < g_n; ++i) attach_one(r, g_sorted[i].k->op, &k);
  attach_sparse(r, p, &k);
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
