/* Running a cached primitive on the plain arrays a kernel sees
 * (onednn.h): reorders into and out of the layouts the primitive chose,
 * write modes, and the thread budget around the calls. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"
#include "core/op/format.h"

#define MAX_ARGS 12

int mxc__dnnl_md_dims(const mxc__op *op, int ndims, const int64_t *dims,
                      dnnl_memory_desc_t *md) {
  MXC_RETURN_ERROR_IF(ndims < 1 || ndims > DNNL_MAX_NDIMS, MXC_ERR_UNSUPPORTED,
                      "operator '%s' (oneDNN backend): %d axes, expected 1 "
                      "to %d",
                      op->name, ndims, DNNL_MAX_NDIMS);
  dnnl_dims_t d, strides;
  int64_t s = 1;
  for (int i = ndims - 1; i >= 0; --i) {
    d[i] = dims[i];
    strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1; /* bounded by the shape invariant */
  }
  return mxc__dnnl_check(
      dnnl_memory_desc_init_by_strides(md, ndims, d, dnnl_f32, strides), op,
      "dnnl_memory_desc_init_by_strides");
}

int mxc__dnnl_md_plain(const mxc__op *op, const mxc__shape *s,
                       dnnl_memory_desc_t *md) {
  return mxc__dnnl_md_dims(op, s->ndim, s->dims, md);
}

/* Channels-last (N, C, spatial...): C varies fastest, then the spatial
 * axes from the last, then N; elements of type dt. */
static int md_channels_last(const mxc__op *op, const mxc__shape *s,
                            dnnl_data_type_t dt, dnnl_memory_desc_t *md) {
  MXC_RETURN_ERROR_IF(s->ndim < 3 || s->ndim > 5, MXC_ERR_INTERNAL,
                      "operator '%s' (oneDNN backend): a channels-last array "
                      "of %d axes",
                      op->name, s->ndim);
  dnnl_dims_t d, strides;
  int64_t acc = s->dims[1] > 0 ? s->dims[1] : 1;
  strides[1] = 1;
  for (int i = s->ndim - 1; i >= 2; --i) {
    strides[i] = acc;
    acc *= s->dims[i] > 0 ? s->dims[i] : 1; /* bounded by the shape */
  }
  strides[0] = acc;
  for (int i = 0; i < s->ndim; ++i) d[i] = s->dims[i];
  return mxc__dnnl_check(
      dnnl_memory_desc_init_by_strides(md, s->ndim, d, dt, strides), op,
      "dnnl_memory_desc_init_by_strides");
}

int mxc__dnnl_md_fmt(const mxc__op *op, const mxc__shape *s, int fmt,
                     dnnl_memory_desc_t *md) {
  switch (fmt) {
    case MXC__FMT_CHANNELS_LAST:
      return md_channels_last(op, s, dnnl_f32, md);
    case MXC__FMT_CHANNELS_LAST_BF16:
      return md_channels_last(op, s, dnnl_bf16, md);
    default:
      return mxc__dnnl_md_plain(op, s, md);
  }
}

unsigned mxc__dnnl_fmt_data(const mxc__op *op, const void *param, int is_out,
                            int i) {
  (void)op;
  (void)param;
  (void)is_out;
  return i == 0 ? MXC__DNNL_FMTS : 0;
}

/* attr (or none) in user scratchpad mode (see scratch_run). */
static int user_pad_attr(const mxc__op *op, const_dnnl_primitive_attr_t attr,
                         dnnl_primitive_attr_t *out) {
  *out = NULL;
  dnnl_status_t st = attr ? dnnl_primitive_attr_clone(out, attr)
                          : dnnl_primitive_attr_create(out);
  if (st == dnnl_success) {
    st = dnnl_primitive_attr_set_scratchpad_mode(*out,
                                                 dnnl_scratchpad_mode_user);
  }
  if (st != dnnl_success && *out) dnnl_primitive_attr_destroy(*out);
  return mxc__dnnl_check(st, op, "dnnl_primitive_attr (scratchpad mode)");
}

/* ---- reorders (cached like every primitive) ---- */

typedef struct reorder_req {
  const mxc__op *op;
  const dnnl_memory_desc_t *src, *dst;
  int add;
} reorder_req;

/* oneDNN's primitive objects hold locks of its own global primitive cache
 * (a primitive made for a key another thread is making waits on it).
 * Creating and destroying them one at a time costs nothing (primitives
 * are made once per shape and cached) and gives ThreadSanitizer, which
 * does not see oneDNN's own synchronisation, the order between a
 * creation in one thread and a destruction in another: without it,
 * tests/nn:test_fit reported a race on such a lock about 1 run in 12. */
static pthread_mutex_t g_prim_mu = PTHREAD_MUTEX_INITIALIZER;

static dnnl_status_t prim_create_locked(dnnl_primitive_t *out,
                                        const_dnnl_primitive_desc_t pd) {
  pthread_mutex_lock(&g_prim_mu);
  dnnl_status_t st = dnnl_primitive_create(out, pd);
  pthread_mutex_unlock(&g_prim_mu);
  return st;
}

void mxc__dnnl_prim_destroy(dnnl_primitive_t p) {
  pthread_mutex_lock(&g_prim_mu);
  dnnl_primitive_destroy(p);
  pthread_mutex_unlock(&g_prim_mu);
}

static int build_reorder(void *arg, dnnl_primitive_t *out) {
  const reorder_req *q = arg;
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  mxc__dnnl_post sum = {MXC__DNNL_ACT_NONE, NULL};
  mxc__blob unused;
  if (q->add) sum.sum = &unused; /* only its presence matters here */
  dnnl_primitive_attr_t attr;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attr_post(q->op, &sum, &attr));
  dnnl_primitive_attr_t a;
  int rc = user_pad_attr(q->op, attr, &a);
  dnnl_primitive_attr_destroy(attr);
  if (rc != MXC_OK) return rc;
  attr = a;
  dnnl_primitive_desc_t pd = NULL;
  rc = mxc__dnnl_check(
      dnnl_reorder_primitive_desc_create(&pd, q->src, eng, q->dst, eng, attr),
      q->op, "dnnl_reorder_primitive_desc_create");
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(prim_create_locked(out, pd), q->op,
                         "dnnl_primitive_create (reorder)");
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  return rc;
}

int mxc__dnnl_pd_create(const mxc__op *op, const void *desc,
                        const_dnnl_primitive_attr_t attr,
                        const_dnnl_primitive_desc_t hint, const char *what,
                        dnnl_primitive_desc_t *out) {
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  dnnl_primitive_attr_t a;
  MXC_FORWARD_IF_ERROR(user_pad_attr(op, attr, &a));
  dnnl_status_t st = dnnl_primitive_desc_create(out, desc, a, eng, hint);
  dnnl_primitive_attr_destroy(a);
  if (st == dnnl_success) return MXC_OK;
  *out = NULL;
  char call[128];
  snprintf(call, sizeof call, "dnnl_primitive_desc_create (%s)", what);
  return mxc__dnnl_check(st, op, call);
}

int mxc__dnnl_prim_create(const mxc__op *op, const void *desc,
                          const_dnnl_primitive_attr_t attr,
                          const_dnnl_primitive_desc_t hint, const char *what,
                          dnnl_primitive_t *out) {
  dnnl_primitive_desc_t pd;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_pd_create(op, desc, attr, hint, what, &pd));
  dnnl_status_t st = prim_create_locked(out, pd);
  dnnl_primitive_desc_destroy(pd);
  if (st == dnnl_success) return MXC_OK;
  char call[128];
  snprintf(call, sizeof call, "dnnl_primitive_create (%s)", what);
  return mxc__dnnl_check(st, op, call);
}

static int make_mem(const mxc__op *op, const dnnl_memory_desc_t *md,
                    void *ptr, dnnl_memory_t *out) {
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  return mxc__dnnl_check(dnnl_memory_create(out, md, eng, ptr), op,
                         "dnnl_memory_create");
}

uint64_t mxc__dnnl_version(const mxc__opctx *ctx, int i) {
  return ctx && ctx->in_versions ? ctx->in_versions[i] : 0;
}

int mxc__dnnl_tmp(const mxc__op *op, size_t bytes, const char *what,
                  mxc__storage_block *out) {
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  MXC_RETURN_ERROR_IF(mxc__storage_alloc(cpu, bytes, out) != MXC_OK,
                      MXC_ERR_OOM,
                      "operator '%s' (oneDNN backend): out of memory for a "
                      "%zu-byte %s",
                      op->name, bytes, what);
  return MXC_OK;
}

/* Executes p with args (room for one more) and a scratchpad of its own.
 *
 * Every primitive is made in user scratchpad mode. oneDNN's own
 * ("library") scratchpad is a buffer per thread that a primitive sized
 * on the thread that made it, and reads on whichever thread runs it: a
 * primitive made on one engine worker and run on another overflowed the
 * second's smaller buffer (fuzz_block's SEGV in JIT code; Winograd
 * convolutions, whose scratchpads are megabytes, crashed ResNet-18 with
 * two workers when they were tried). A scratchpad per call
 * is the caller's memory, so this cannot happen, and two calls of one
 * primitive no longer share one. */
static int scratch_run(const mxc__op *op, const mxc__dnnl_prim *p,
                       dnnl_stream_t s, int n, dnnl_exec_arg_t *args) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(
      mxc__dnnl_prim_pd(p), dnnl_query_scratchpad_md, 0);
  size_t bytes = md ? dnnl_memory_desc_get_size(md) : 0;
  mxc__storage_block buf = {0};
  dnnl_memory_t mem = NULL;
  int rc = MXC_OK;
  if (bytes) {
    MXC_FORWARD_IF_ERROR(mxc__dnnl_tmp(op, bytes, "scratchpad", &buf));
    rc = make_mem(op, md, buf.ptr, &mem);
    args[n].arg = DNNL_ARG_SCRATCHPAD;
    args[n++].memory = mem;
  }
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(
        dnnl_primitive_execute(mxc__dnnl_prim_get(p), s, n, args), op,
        "dnnl_primitive_execute");
  }
  if (mem) dnnl_memory_destroy(mem);
  mxc__storage_free(&buf);
  return rc;
}

int mxc__dnnl_reorder(const mxc__op *op, const dnnl_memory_desc_t *smd,
                      void *src, const dnnl_memory_desc_t *dmd, void *dst,
                      int add) {
  mxc__dnnl_key k;
  mxc__dnnl_key_init(&k, add ? "reorder+sum" : "reorder");
  mxc__dnnl_key_md(&k, smd);
  mxc__dnnl_key_md(&k, dmd);
  mxc__dnnl_key_i64(&k, mxc__dnnl_threads_current());
  reorder_req q = {op, smd, dmd, add};
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build_reorder, &q, &p));
  dnnl_memory_t ms = NULL, md = NULL;
  dnnl_stream_t s;
  int rc = mxc__dnnl_stream(&s);
  if (rc == MXC_OK) rc = make_mem(op, smd, src, &ms);
  if (rc == MXC_OK) rc = make_mem(op, dmd, dst, &md);
  if (rc == MXC_OK) {
    dnnl_exec_arg_t a[3] = {{DNNL_ARG_FROM, ms}, {DNNL_ARG_TO, md}};
    rc = scratch_run(op, p, s, 2, a);
  }
  if (ms) dnnl_memory_destroy(ms);
  if (md) dnnl_memory_destroy(md);
  mxc__dnnl_cache_put(p);
  return rc;
}

/* ---- execution ---- */

typedef struct run_state {
  int n;
  dnnl_exec_arg_t exec[MAX_ARGS + 1]; /* + the scratchpad */
  /* a temporary in the primitive's layout (ptr NULL: none) */
  mxc__storage_block tmp[MAX_ARGS];
  mxc__dnnl_wref w[MAX_ARGS]; /* held reordered weights (mem NULL: none) */
  dnnl_memory_desc_t want[MAX_ARGS];
} run_state;

/* Memory for argument i: the user's array when the primitive takes its
 * layout and (outputs) it may be overwritten; else a temporary, filled
 * from the user's array for inputs. */
static int prepare_arg(const mxc__op *op, const_dnnl_primitive_desc_t pd,
                       const mxc__dnnl_arg *a, run_state *st, int i) {
  const dnnl_memory_desc_t *want =
      dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, a->arg);
  MXC_RETURN_ERROR_IF(!want, MXC_ERR_INTERNAL,
                      "operator '%s' (oneDNN backend): the primitive has no "
                      "argument %d",
                      op->name, a->arg);
  st->want[i] = *want;
  int discard = a->is_out && a->req == MXC__REQ_NULL;
  int direct = dnnl_memory_desc_equal(want, &a->md) && !discard &&
               !(a->is_out && a->req == MXC__REQ_ADD);
  void *ptr = a->ptr;
  if (!direct && !a->is_out && a->version) {
    MXC_FORWARD_IF_ERROR(mxc__dnnl_weights_get(op, &a->md, a->ptr,
                                               a->version, want, &st->w[i]));
    void *buf = NULL;
    MXC_FORWARD_IF_ERROR(
        mxc__dnnl_check(dnnl_memory_get_data_handle(st->w[i].mem, &buf), op,
                        "dnnl_memory_get_data_handle"));
    st->exec[i].arg = a->arg;
    return make_mem(op, want, buf, &st->exec[i].memory);
  }
  if (!direct) {
    MXC_FORWARD_IF_ERROR(mxc__dnnl_tmp(op, dnnl_memory_desc_get_size(want),
                                       "reordered array", &st->tmp[i]));
    ptr = st->tmp[i].ptr;
  }
  const void *src = a->is_out ? a->init : a->ptr;
  if (src && !direct) {
    MXC_FORWARD_IF_ERROR(
        mxc__dnnl_reorder(op, &a->md, (void *)src, want, ptr, 0));
  } else if (src && a->is_out && src != ptr) {
    memcpy(ptr, src, dnnl_memory_desc_get_size(want));
  }
  st->exec[i].arg = a->arg;
  return make_mem(op, want, ptr, &st->exec[i].memory);
}

static int finish_outputs(const mxc__op *op, const mxc__dnnl_arg *args,
                          run_state *st) {
  for (int i = 0; i < st->n; ++i) {
    if (!args[i].is_out || !st->tmp[i].ptr || args[i].req == MXC__REQ_NULL) {
      continue;
    }
    MXC_FORWARD_IF_ERROR(mxc__dnnl_reorder(op, &st->want[i], st->tmp[i].ptr,
                                           &args[i].md, args[i].ptr,
                                           args[i].req == MXC__REQ_ADD));
  }
  return MXC_OK;
}

static void release_state(run_state *st) {
  for (int i = 0; i < st->n; ++i) {
    if (st->exec[i].memory) dnnl_memory_destroy(st->exec[i].memory);
    mxc__storage_free(&st->tmp[i]);
    mxc__dnnl_weights_put(&st->w[i]);
  }
}

int mxc__dnnl_run(const mxc__op *op, const mxc__dnnl_prim *p,
                  const mxc__dnnl_arg *args, int n_args) {
  MXC_RETURN_ERROR_IF(n_args > MAX_ARGS, MXC_ERR_INTERNAL,
                      "operator '%s' (oneDNN backend): %d arguments",
                      op->name, n_args);
  run_state st;
  memset(&st, 0, sizeof st);
  st.n = n_args;
  dnnl_stream_t s;
  int rc = mxc__dnnl_stream(&s);
  for (int i = 0; i < n_args && rc == MXC_OK; ++i) {
    rc = prepare_arg(op, mxc__dnnl_prim_pd(p), &args[i], &st, i);
  }
  if (rc == MXC_OK) rc = scratch_run(op, p, s, n_args, st.exec);
  if (rc == MXC_OK) rc = finish_outputs(op, args, &st);
  release_state(&st);
  return rc;
}

int mxc__dnnl_reference(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  mxc__error_clear();
  return mxc__fmt_compute(op->compute, op, ctx, param, in, n_in, out, n_out,
                          req);
}
