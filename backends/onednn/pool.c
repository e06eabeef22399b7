/* Pooling forward on oneDNN (onednn.h): max and avg (count_include_pad
 * both ways), 1-D to 3-D, global or windowed with the valid (floor)
 * convention, on plain channel-first arrays.
 *
 * Declined (the reference runs): sum and lp pooling, the full and same
 * conventions, and, at run time, windows that oneDNN would place
 * differently. Under the valid convention every window ends inside the
 * padded input, so the reference's divisor with count_include_pad (the
 * window clipped to the padded input) is the whole kernel, as oneDNN's
 * avg_include_padding divides; the right padding that gives the same
 * output, (o - 1) * stride + kernel - in - pad, must not be negative, and
 * padding must be smaller than the kernel (no window wholly in the
 * padding, which the reference and oneDNN treat differently). */
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/op/format.h"
#include "core/base/alloc.h"
#include "core/base/error.h"

typedef struct pool_call {
  const mxc__op *op;
  int nsp, alg;
  dnnl_memory_desc_t src, dst;
  dnnl_dims_t strides, kernel, pad_l, pad_r;
} pool_call;

static int pool_alg(const mxc__op *op, const void *param) {
  const char *type = mxc__dnnl_param_enum(op, param, "pool_type");
  int cip = 0;
  if (!type || !mxc__dnnl_param_bool(op, param, "count_include_pad", &cip)) {
    return -1;
  }
  if (!strcmp(type, "max")) return dnnl_pooling_max;
  if (!strcmp(type, "avg")) {
    return cip ? dnnl_pooling_avg_include_padding
               : dnnl_pooling_avg_exclude_padding;
  }
  return -1;
}

/* Window geometry along spatial axis i; 0 when oneDNN cannot match. */
static int axis(pool_call *c, const mxc__tuple *k, const mxc__tuple *s,
                const mxc__tuple *pad, int global, const mxc__shape *x,
                const mxc__shape *y, int i) {
  int64_t in = x->dims[2 + i], o = y->dims[2 + i];
  c->kernel[i] = global ? in : k->d[i];
  c->strides[i] = global ? 1 : s->d[i];
  c->pad_l[i] = global ? 0 : pad->d[i];
  c->pad_r[i] = (o - 1) * c->strides[i] + c->kernel[i] - in - c->pad_l[i];
  return c->pad_r[i] >= 0 && c->pad_l[i] < c->kernel[i] &&
         c->pad_r[i] < c->kernel[i];
}

/* The output's format as the primitive is told it: an output whose two
 * layouts coincide (global pooling's one position) is described in the
 * data's, so that the primitive sees one format throughout. */
static int out_fmt(const mxc__blob *x, const mxc__blob *y) {
  mxc__blob cl = *y;
  cl.fmt = MXC__FMT_CHANNELS_LAST;
  int same = y->fmt == MXC__FMT_PLAIN && x->fmt == MXC__FMT_CHANNELS_LAST;
  return same && !mxc__fmt_differs(&cl) ? x->fmt : y->fmt;
}

static int plan(const mxc__op *op, const void *param, const mxc__blob *in,
                const mxc__blob *out, pool_call *c) {
  const mxc__tuple *k = mxc__dnnl_param(op, param, "kernel", MXC__P_TUPLE);
  const mxc__tuple *s = mxc__dnnl_param(op, param, "stride", MXC__P_TUPLE);
  const mxc__tuple *pad = mxc__dnnl_param(op, param, "pad", MXC__P_TUPLE);
  int global = 0;
  (void)mxc__dnnl_param_bool(op, param, "global_pool", &global);
  const mxc__shape *x = &in[0].shape, *y = &out[0].shape;
  c->op = op;
  c->nsp = x->ndim - 2;
  c->alg = pool_alg(op, param);
  if (!k || !s || !pad || c->alg < 0 || c->nsp < 1 || c->nsp > 3 ||
      y->ndim != x->ndim || mxc__shape_size(y) == 0 ||
      (!global && k->ndim != c->nsp)) {
    return MXC_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < c->nsp; ++i) {
    if (!axis(c, k, s, pad, global, x, y, i)) return MXC_ERR_UNSUPPORTED;
  }
  MXC_FORWARD_IF_ERROR(mxc__dnnl_md_fmt(op, x, in[0].fmt, &c->src));
  return mxc__dnnl_md_fmt(op, y, out_fmt(&in[0], &out[0]), &c->dst);
}

static void pool_key(const pool_call *c, const char *what, mxc__dnnl_key *k);
static int run_train(const pool_call *c, uint64_t version,
                     const mxc__blob *in, const mxc__blob *out, mxc__req req);

static int build(void *arg, dnnl_primitive_t *out) {
  const pool_call *c = arg;
  dnnl_pooling_desc_t d;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_pooling_forward_desc_init(&d, dnnl_forward_inference, c->alg,
                                     &c->src, &c->dst, c->strides, c->kernel,
                                     c->pad_l, c->pad_r),
      c->op, "dnnl_pooling_forward_desc_init"));
  return mxc__dnnl_prim_create(c->op, &d, NULL, NULL, "pooling", out);
}

static int run(const pool_call *c, const mxc__blob *in, const mxc__blob *out,
               mxc__req req) {
  mxc__dnnl_key k;
  pool_key(c, "pool_fwd", &k);
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build, (void *)c, &p));
  mxc__dnnl_arg a[2] = {
      {DNNL_ARG_SRC, c->src, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DST, c->dst, out[0].ptr, 1, req, NULL, 0},
  };
  int rc = mxc__dnnl_run(c->op, p, a, 2);
  mxc__dnnl_cache_put(p);
  return rc;
}

static int pool_kernel(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  pool_call c;
  memset(&c, 0, sizeof c);
  int rc = plan(op, param, in, out, &c);
  if (rc == MXC_OK) {
    /* Training max pooling keeps its workspace for the backward. */
    uint64_t v = mxc__dnnl_version(ctx, 0);
    int keep = ctx && ctx->is_train && c.alg == dnnl_pooling_max && v != 0 &&
               mxc__dnnl_pool_ws_wanted();
    int nthr = mxc__dnnl_threads_begin();
    rc = keep ? run_train(&c, v, in, out, req[0]) : run(&c, in, out, req[0]);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* ---- _backward_Pooling: (ograd, data) -> ddata ----
 *
 * Max pooling's gradient goes to each window's maximum, which oneDNN
 * records in a workspace while running the forward for training. A
 * training forward keeps its workspace for the backward (pool_ws.c); a
 * backward that finds none (a forward in inference mode or on the
 * reference kernel, data written since, another layout) runs that
 * forward again on data, as the reference rescans the windows. Average
 * pooling needs no workspace. */

static int fwd_train_desc(const pool_call *c, dnnl_pooling_desc_t *d) {
  return mxc__dnnl_check(
      dnnl_pooling_forward_desc_init(d, dnnl_forward_training, c->alg,
                                     &c->src, &c->dst, c->strides, c->kernel,
                                     c->pad_l, c->pad_r),
      c->op, "dnnl_pooling_forward_desc_init");
}

static int build_fwd_train(void *arg, dnnl_primitive_t *out) {
  const pool_call *c = arg;
  dnnl_pooling_desc_t d;
  MXC_FORWARD_IF_ERROR(fwd_train_desc(c, &d));
  return mxc__dnnl_prim_create(c->op, &d, NULL, NULL,
                               "pooling forward training", out);
}

static int build_bwd(void *arg, dnnl_primitive_t *out) {
  const pool_call *c = arg;
  dnnl_pooling_desc_t fd, bd;
  MXC_FORWARD_IF_ERROR(fwd_train_desc(c, &fd));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_pooling_backward_desc_init(&bd, c->alg, &c->src, &c->dst,
                                      c->strides, c->kernel, c->pad_l,
                                      c->pad_r),
      c->op, "dnnl_pooling_backward_desc_init"));
  dnnl_primitive_desc_t hint;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_pd_create(c->op, &fd, NULL, NULL,
                                           "pooling forward hint", &hint));
  int rc = mxc__dnnl_prim_create(c->op, &bd, NULL, hint, "pooling backward",
                                 out);
  dnnl_primitive_desc_destroy(hint);
  return rc;
}

/* The geometry alone: what a kept workspace is looked up by (the thread
 * count may differ between forward and backward; the workspace's layout
 * is compared on its own). */
static void geometry_key(const pool_call *c, const char *what,
                         mxc__dnnl_key *k) {
  mxc__dnnl_key_init(k, what);
  mxc__dnnl_key_md(k, &c->src);
  mxc__dnnl_key_md(k, &c->dst);
  mxc__dnnl_key_i64(k, c->alg);
  size_t n = sizeof(int64_t) * (size_t)c->nsp;
  mxc__dnnl_key_bytes(k, c->strides, n);
  mxc__dnnl_key_bytes(k, c->kernel, n);
  mxc__dnnl_key_bytes(k, c->pad_l, n);
  mxc__dnnl_key_bytes(k, c->pad_r, n);
}

static void pool_key(const pool_call *c, const char *what, mxc__dnnl_key *k) {
  geometry_key(c, what, k);
  mxc__dnnl_key_i64(k, mxc__dnnl_threads_current());
}

/* Max pooling forward for training of data x into y (NULL with
 * MXC__REQ_NULL: dropped) and a new workspace *ws (the caller's; NULL
 * on error). */
static int fwd_train(const pool_call *c, void *x, void *y, mxc__req req,
                     dnnl_memory_t *ws) {
  *ws = NULL;
  mxc__dnnl_key k;
  pool_key(c, "pool_fwd_train", &k);
  mxc__dnnl_prim *p;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build_fwd_train, (void *)c,
                                           &p));
  dnnl_memory_desc_t md = *dnnl_primitive_desc_query_md(
      mxc__dnnl_prim_pd(p), dnnl_query_workspace_md, 0);
  void *buf = NULL;
  int rc = mxc__dnnl_pool_ws_new(c->op, &md, ws);
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(dnnl_memory_get_data_handle(*ws, &buf), c->op,
                         "dnnl_memory_get_data_handle");
  }
  mxc__dnnl_arg a[3] = {
      {DNNL_ARG_SRC, c->src, x, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DST, c->dst, y, 1, req, NULL, 0},
      {DNNL_ARG_WORKSPACE, md, buf, 1, MXC__REQ_WRITE, NULL, 0},
  };
  if (rc == MXC_OK) rc = mxc__dnnl_run(c->op, p, a, 3);
  mxc__dnnl_cache_put(p);
  if (rc != MXC_OK && *ws) {
    dnnl_memory_destroy(*ws);
    *ws = NULL;
  }
  return rc;
}

/* A training forward of max pooling on data of write version `version`:
 * the output, and the workspace kept for the backward. */
static int run_train(const pool_call *c, uint64_t version,
                     const mxc__blob *in, const mxc__blob *out,
                     mxc__req req) {
  dnnl_memory_t ws;
  MXC_FORWARD_IF_ERROR(fwd_train(c, in[0].ptr, out[0].ptr, req, &ws));
  mxc__dnnl_key k;
  geometry_key(c, "pool_ws", &k);
  mxc__dnnl_pool_ws_keep(&k, in[0].ptr, version, ws);
  return MXC_OK;
}

/* The workspace of max pooling data x (write version `version`) as the
 * backward primitive bwd wants it: the one its training forward kept,
 * else computed now. *ws is the caller's to destroy. */
static int workspace(const pool_call *c, uint64_t version, void *x,
                     const mxc__dnnl_prim *bwd, dnnl_memory_t *ws) {
  const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(
      mxc__dnnl_prim_pd(bwd), dnnl_query_workspace_md, 0);
  mxc__dnnl_key k;
  geometry_key(c, "pool_ws", &k);
  *ws = want ? mxc__dnnl_pool_ws_take(&k, x, version, want) : NULL;
  if (*ws) return MXC_OK;
  return fwd_train(c, x, NULL, MXC__REQ_NULL, ws);
}

/* The workspace argument of a backward: ws's layout and memory. */
static int ws_arg(const mxc__op *op, dnnl_memory_t ws, mxc__dnnl_arg *a) {
  const dnnl_memory_desc_t *md = NULL;
  void *buf = NULL;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_memory_get_memory_desc(ws, &md), op, "dnnl_memory_get_memory_desc"));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(dnnl_memory_get_data_handle(ws, &buf),
                                       op, "dnnl_memory_get_data_handle"));
  *a = (mxc__dnnl_arg){DNNL_ARG_WORKSPACE, *md, buf, 0, MXC__REQ_WRITE,
                       NULL, 0};
  return MXC_OK;
}

static int run_bwd(const pool_call *c, uint64_t version, const mxc__blob *in,
                   const mxc__blob *out, mxc__req req) {
  int max = c->alg == dnnl_pooling_max;
  mxc__dnnl_key k;
  pool_key(c, "pool_bwd", &k);
  mxc__dnnl_prim *p = NULL;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_cache_get(&k, build_bwd, (void *)c, &p));
  dnnl_memory_t ws = NULL;
  int rc = max ? workspace(c, version, in[1].ptr, p, &ws) : MXC_OK;
  mxc__dnnl_arg a[3] = {
      {DNNL_ARG_DIFF_DST, c->dst, in[0].ptr, 0, MXC__REQ_WRITE, NULL, 0},
      {DNNL_ARG_DIFF_SRC, c->src, out[0].ptr, 1, req, NULL, 0},
  };
  /* ddata in its own format */
  if (rc == MXC_OK) {
    rc = mxc__dnnl_md_fmt(c->op, &out[0].shape, out[0].fmt, &a[1].md);
  }
  if (rc == MXC_OK && max) rc = ws_arg(c->op, ws, &a[2]);
  if (rc == MXC_OK) rc = mxc__dnnl_run(c->op, p, a, max ? 3 : 2);
  mxc__dnnl_cache_put(p);
  if (ws) dnnl_memory_destroy(ws);
  return rc;
}

static int pool_bwd_kernel(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  pool_call c;
  memset(&c, 0, sizeof c);
  /* The geometry of the forward: data in[1] to an output like ograd. */
  int rc = plan(op, param, &in[1], &in[0], &c);
  if (rc == MXC_OK) {
    int nthr = mxc__dnnl_threads_begin();
    rc = run_bwd(&c, mxc__dnnl_version(ctx, 1), in, out, req[0]);
    mxc__dnnl_threads_end(nthr);
  }
  if (rc == MXC_ERR_UNSUPPORTED) {
    return mxc__dnnl_reference(op, ctx, param, in, n_in, out, n_out, req);
  }
  return rc;
}

/* _backward_Pooling's ograd, data, output (when given) and ddata. */
static unsigned pool_bwd_fmt_ok(const mxc__op *op, const void *param,
                                int is_out, int i) {
  (void)op;
  (void)param;
  return (is_out ? i == 0 : i <= 2) ? 1u << MXC__FMT_CHANNELS_LAST : 0;
}

static int pool_supports(const mxc__op *op, const void *param,
                         const mxc__call_types *t) {
  if (!param || !mxc__dnnl_all_f32(t) || pool_alg(op, param) < 0) return 0;
  const char *conv = mxc__dnnl_param_enum(op, param, "pooling_convention");
  const char *layout = mxc__dnnl_param_enum(op, param, "layout");
  int global = 0;
  (void)mxc__dnnl_param_bool(op, param, "global_pool", &global);
  return conv && layout && (global || !strcmp(conv, "valid")) &&
         (!strcmp(layout, "None") || !strncmp(layout, "NC", 2));
}

int mxc__dnnl_attach_pool(mxc__registry *r) {
  mxc__kernel k = {.backend = &mxc__backend_onednn,
                   .supports = pool_supports,
                   .compute = pool_kernel,
                   .fmt_ok = mxc__dnnl_fmt_data};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "Pooling", &k));
  k.compute = pool_bwd_kernel;
  k.fmt_ok = pool_bwd_fmt_ok;
  return mxc__registry_attach_kernel(r, "_backward_Pooling", &k);
}
