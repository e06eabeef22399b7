#include "ops/invoke.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/log.h"
#include "core/resource/temp_space.h"

static _Thread_local int tls_training;

int mxc__set_training(int is_train) {
  int prev = tls_training;
  tls_training = is_train ? 1 : 0;
  return prev;
}

int mxc__is_training(void) { return tls_training; }

/* ---- temporary spaces: a few per process, each guarded by an engine
 * variable that every user writes, so users of one space are serialized and
 * users of different spaces run in parallel. ---- */

#define N_TEMP 4
static mxc__temp_space *g_temp[N_TEMP];
static mxc__var *g_temp_var[N_TEMP];
static pthread_mutex_t g_temp_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint g_temp_next;

static int temp_get(mxc__engine *e, mxc__device dev, int *out) {
  int i = (int)(atomic_fetch_add(&g_temp_next, 1) % N_TEMP);
  pthread_mutex_lock(&g_temp_lock);
  int rc = MXC_OK;
  if (!g_temp[i]) {
    mxc__temp_space *t = NULL;
    mxc__var *v = NULL;
    rc = mxc__temp_space_create(dev, &t);
    if (rc == MXC_OK) rc = mxc__engine_new_var(e, &v);
    if (rc == MXC_OK) {
      /* Temp contents mean nothing between operators: a failed operator
       * must not make the next user of this space fail. */
      mxc__engine_var_set_scratch(v);
      g_temp[i] = t;
      g_temp_var[i] = v;
    } else {
      mxc__temp_space_destroy(t);
    }
  }
  pthread_mutex_unlock(&g_temp_lock);
  if (rc == MXC_OK) *out = i;
  return rc;
}

int mxc__opctx_temp(const mxc__opctx *ctx, size_t nbytes, void **out) {
  MXC_RETURN_ERROR_IF(!ctx->temp, MXC_ERR_INTERNAL,
                      "operator asked for temp space it did not declare");
  return mxc__temp_space_request(ctx->temp, nbytes, out);
}

/* ---- the pushed record ---- */

typedef struct invoke_rec {
  const mxc__op *op;
  void *param;
  int n_in, n_out;
  mxc__blob *in, *out;
  mxc__req *req;
  /* Sparse dispatch: copies of the input then output view structs (the
   * engine keeps their chunks alive while this record is pending); NULL
   * for dense dispatch. */
  mxc__ndarray *arrs;
  mxc__opctx ctx;
} invoke_rec;

static int run_rec(void *arg, mxc__exec *ex) {
  invoke_rec *r = arg;
  int rc;
  if (r->arrs) {
    rc = mxc__op_compute_sparse(r->op)(r->op, &r->ctx, r->param, r->arrs,
                                       r->n_in, r->arrs + r->n_in, r->n_out,
                                       r->req);
  } else {
    rc = r->op->compute(r->op, &r->ctx, r->param, r->in, r->n_in, r->out,
                        r->n_out, r->req);
  }
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

static void free_rec(void *arg) { mxc__free(arg); }

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

static int rec_new(const mxc__op *op, const void *param, int n_in, int n_out,
                   int sparse, invoke_rec **out) {
  size_t psz = align8(op->param_size);
  size_t asz = sparse ? sizeof(mxc__ndarray) * (size_t)(n_in + n_out) : 0;
  size_t sz = align8(sizeof(invoke_rec)) + psz +
              sizeof(mxc__blob) * (size_t)(n_in + n_out) + asz +
              sizeof(mxc__req) * (size_t)n_out;
  char *m = mxc__malloc(sz);
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM, "operator '%s': out of memory",
                      op->name);
  invoke_rec *r = (invoke_rec *)m;
  memset(r, 0, sizeof *r);
  m += align8(sizeof(invoke_rec));
  r->param = m;
  if (op->param_size) memcpy(r->param, param, op->param_size);
  m += psz;
  r->in = (mxc__blob *)m;
  r->out = r->in + n_in;
  r->arrs = sparse ? (mxc__ndarray *)(r->out + n_out) : NULL;
  r->req = (mxc__req *)((char *)(r->out + n_out) + asz);
  r->op = op;
  r->n_in = n_in;
  r->n_out = n_out;
  *out = r;
  return MXC_OK;
}

/* ---- validation and inference ---- */

static int check_counts(const mxc__op *op, const void *param, int n_in,
                        int n_out, int *n_total_out) {
  int want_in = mxc__op_num_inputs(op, param);
  int want_out = mxc__op_num_outputs(op, param);
  int visible = op->n_visible_outputs ? op->n_visible_outputs : want_out;
  MXC_RETURN_ERROR_IF(n_in != want_in, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': got %d inputs; expected %d", op->name,
                      n_in, want_in);
  MXC_RETURN_ERROR_IF(n_out != want_out && n_out != visible,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': got %d outputs; expected %d", op->name,
                      n_out, visible);
  *n_total_out = want_out;
  return MXC_OK;
}

/* Runs shape and type inference; all outputs must end up known. */
static int infer(const mxc__op *op, const void *param,
                 mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                 int n_out, mxc__shape *oshape, int *otype) {
  mxc__shape ishape[64];
  int itype[64];
  MXC_RETURN_ERROR_IF(n_in > 64 || n_out > 64, MXC_ERR_UNSUPPORTED,
                      "operator '%s': more than 64 inputs or outputs",
                      op->name);
  for (int i = 0; i < n_in; ++i) {
    ishape[i] = in[i]->shape;
    itype[i] = in[i]->dtype;
  }
  for (int i = 0; i < n_out; ++i) {
    oshape[i].ndim = -1;
    otype[i] = -1;
    if (out[i]) {
      oshape[i] = out[i]->shape;
      otype[i] = out[i]->dtype;
    }
  }
  MXC_FORWARD_IF_ERROR(op->infer_shape(op, param, ishape, n_in, oshape, n_out));
  if (op->infer_type) {
    MXC_FORWARD_IF_ERROR(op->infer_type(op, param, itype, n_in, otype, n_out));
  } else {
    for (int i = 0; i < n_out; ++i) {
      if (otype[i] < 0 && n_in > 0) otype[i] = itype[0];
    }
    for (int i = 1; i < n_in; ++i) {
      MXC_RETURN_ERROR_IF(itype[i] != itype[0], MXC_ERR_DTYPE,
                          "operator '%s': input %d ('%s') is %s but input 0 "
                          "is %s; inputs must share a dtype",
                          op->name, i, mxc__op_input_name(op, param, i),
                          mxc__dtype_name(itype[i]), mxc__dtype_name(itype[0]));
    }
  }
  char b1[160], b2[160];
  for (int i = 0; i < n_out; ++i) {
    MXC_RETURN_ERROR_IF(oshape[i].ndim < 0 || otype[i] < 0, MXC_ERR_INTERNAL,
                        "operator '%s': could not infer output %d", op->name,
                        i);
    if (!out[i]) continue;
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&oshape[i], &out[i]->shape),
                        MXC_ERR_SHAPE,
                        "operator '%s': output %d has shape %s; expected %s",
                        op->name, i,
                        mxc__shape_str(&out[i]->shape, b1, sizeof b1),
                        mxc__shape_str(&oshape[i], b2, sizeof b2));
    MXC_RETURN_ERROR_IF(otype[i] != out[i]->dtype, MXC_ERR_DTYPE,
                        "operator '%s': output %d is %s; expected %s",
                        op->name, i, mxc__dtype_name(out[i]->dtype),
                        mxc__dtype_name(otype[i]));
  }
  return MXC_OK;
}

/* Sparse arrays have no dense data: their blob pointer is NULL (sparse
 * kernels use the arrays). */
static void blob_of(const mxc__ndarray *a, mxc__blob *b) {
  b->ptr = a->stype == MXC_STYPE_DEFAULT ? mxc__ndarray_ptr(a) : NULL;
  b->shape = a->shape;
  b->dtype = a->dtype;
  b->dev = a->chunk->dev;
}

/* Storage types of the outputs and the kernel to run (see op.h). given[i]
 * is the caller's output i or NULL; req as passed to mxc__op_invoke. */
static int infer_stypes(const mxc__op *op, const void *param,
                        mxc__ndarray *const *in, int n_in,
                        mxc__ndarray *const *given, int n_total,
                        const mxc__req *req, int n_out, int *ostype,
                        int *dispatch) {
  *dispatch = MXC__DISPATCH_DENSE;
  if (!op->infer_stype) {
    /* Kernels attached by the sparse family serve sparse arrays only, so
     * an all-dense call skips the registry lookup and storage inference:
     * the hot path of small dense operators stays as it was. */
    int any = 0; /* MXC_STYPE_DEFAULT is 0 */
    for (int i = 0; i < n_in; ++i) any |= in[i]->stype;
    for (int i = 0; i < n_total; ++i) any |= given[i] ? given[i]->stype : 0;
    if (MXC__LIKELY(!any)) {
      for (int i = 0; i < n_total; ++i) ostype[i] = MXC_STYPE_DEFAULT;
      return MXC_OK;
    }
  }
  mxc__infer_stype_fn infer_st = mxc__op_infer_stype(op);
  if (!infer_st) {
    for (int i = 0; i < n_in; ++i) {
      MXC_RETURN_ERROR_IF(in[i]->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                          "operator '%s': input %d is sparse; this operator "
                          "takes dense arrays",
                          op->name, i);
    }
    for (int i = 0; i < n_total; ++i) {
      MXC_RETURN_ERROR_IF(given[i] && given[i]->stype != MXC_STYPE_DEFAULT,
                          MXC_ERR_STYPE,
                          "operator '%s': output %d is sparse; this "
                          "operator produces dense arrays",
                          op->name, i);
      ostype[i] = MXC_STYPE_DEFAULT;
    }
    return MXC_OK;
  }
  /* Runs on every call of an operator with its own storage functions,
   * dense ones included, and on sparse calls of the others: one pass each
   * way, and dense outputs skip the checks. */
  int ist[64];
  int any_sparse = 0; /* MXC_STYPE_DEFAULT is 0 */
  for (int i = 0; i < n_in; ++i) any_sparse |= ist[i] = in[i]->stype;
  for (int i = 0; i < n_total; ++i) ostype[i] = given[i] ? given[i]->stype : -1;
  MXC_FORWARD_IF_ERROR(
      infer_st(op, param, ist, n_in, ostype, n_total, dispatch));
  for (int i = 0; i < n_total; ++i) {
    int st = ostype[i];
    int gst = given[i] ? given[i]->stype : st;
    if (MXC__LIKELY(st == MXC_STYPE_DEFAULT && gst == st)) continue;
    MXC_RETURN_ERROR_IF(st < MXC_STYPE_DEFAULT || st > MXC_STYPE_CSR ||
                            gst != st,
                        MXC_ERR_STYPE,
                        "operator '%s': output %d has storage type %d; "
                        "expected %d",
                        op->name, i, given[i] ? given[i]->stype : -1, st);
    any_sparse = 1;
    int rq = req && i < n_out ? (int)req[i] : MXC__REQ_WRITE;
    MXC_RETURN_ERROR_IF(rq != MXC__REQ_WRITE && rq != MXC__REQ_NULL,
                        MXC_ERR_STYPE,
                        "operator '%s': output %d is sparse; its write mode "
                        "must be write or null (got %d)",
                        op->name, i, rq);
  }
  MXC_RETURN_ERROR_IF(*dispatch == MXC__DISPATCH_DENSE && any_sparse,
                      MXC_ERR_INTERNAL,
                      "operator '%s': storage inference chose the dense "
                      "kernel for sparse arrays",
                      op->name);
  return MXC_OK;
}

/* ---- storage fallback ----
 *
 * An operator without a kernel for the storage types of a call (no
 * storage functions, or infer_stype / the checks after it answer
 * MXC_ERR_STYPE) still runs when some array is sparse: sparse inputs are
 * cast to dense temporaries, the dense kernel runs into dense arrays, and
 * results meant for sparse given outputs (and sparse inputs the operator
 * updates in place) are cast back. Everything is pushed, nothing waited
 * for: temporaries are freed at once and live until their work is done.
 * Each distinct case (operator, input and output storage types) is logged
 * once; MXC_STORAGE_FALLBACK_LOG=0 silences the log. */

#define FB_SLOTS 1024 /* distinct cases remembered; then no more lines */

static pthread_mutex_t g_fb_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_fb_seen[FB_SLOTS]; /* hashes of logged cases; 0 = free */
static int g_fb_count;
static atomic_int g_fb_enabled = -1; /* -1: environment not read yet */

void mxc__fallback_log_reset(void) {
  pthread_mutex_lock(&g_fb_lock);
  memset(g_fb_seen, 0, sizeof g_fb_seen);
  g_fb_count = 0;
  atomic_store(&g_fb_enabled, -1);
  pthread_mutex_unlock(&g_fb_lock);
}

static int fb_log_enabled(void) {
  int e = atomic_load(&g_fb_enabled);
  if (e < 0) {
    const char *v = getenv("MXC_STORAGE_FALLBACK_LOG");
    e = !(v && strcmp(v, "0") == 0);
    atomic_store(&g_fb_enabled, e);
  }
  return e;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* 1 when the case is new (and now remembered): the caller logs it. Linear
 * probing; a full table answers 0, so the log stays bounded. */
static int fb_first_time(const mxc__op *op, const int *ist, int n_in,
                         const int *ost, int n_out) {
  uint64_t h = fnv(14695981039346656037ull, op->name, strlen(op->name) + 1);
  h = fnv(h, ist, sizeof *ist * (size_t)n_in);
  h = fnv(h, "|", 1);
  h = fnv(h, ost, sizeof *ost * (size_t)n_out);
  if (!h) h = 1;
  int fresh = 0;
  pthread_mutex_lock(&g_fb_lock);
  for (uint64_t i = 0; i < FB_SLOTS && g_fb_count < FB_SLOTS; ++i) {
    uint64_t *s = &g_fb_seen[(h + i) % FB_SLOTS];
    if (*s == h) break;
    if (*s == 0) {
      *s = h;
      ++g_fb_count;
      fresh = 1;
      break;
    }
  }
  pthread_mutex_unlock(&g_fb_lock);
  return fresh;
}

/* snprintf at buf + *pos, never past len (output is cut when full). */
static void app(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    MXC__PRINTF(4, 5);
static void app(char *buf, size_t len, size_t *pos, const char *fmt, ...) {
  if (*pos + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
  va_end(ap);
  if (n > 0) *pos = *pos + (size_t)n < len ? *pos + (size_t)n : len - 1;
}

/* One parameter's parsed value, as it would be written. */
static void app_value(char *buf, size_t len, size_t *pos,
                      const mxc__param_def *d, const char *f) {
  int iv;
  double dv;
  switch (d->type) {
    case MXC__P_INT: {
      int64_t v;
      memcpy(&v, f, sizeof v);
      app(buf, len, pos, "%lld", (long long)v);
      return;
    }
    case MXC__P_FLOAT:
    case MXC__P_OPT_FLOAT:
      memcpy(&dv, f, sizeof dv);
      if (d->type == MXC__P_OPT_FLOAT && dv != dv) {
        app(buf, len, pos, "None");
      } else {
        app(buf, len, pos, "%g", dv);
      }
      return;
    case MXC__P_BOOL:
      memcpy(&iv, f, sizeof iv);
      app(buf, len, pos, "%s", iv ? "true" : "false");
      return;
    case MXC__P_ENUM:
      memcpy(&iv, f, sizeof iv);
      app(buf, len, pos, "%s", d->choices ? d->choices[iv] : "?");
      return;
    case MXC__P_DTYPE:
      memcpy(&iv, f, sizeof iv);
      app(buf, len, pos, "%s", iv < 0 ? "None" : mxc__dtype_name(iv));
      return;
    case MXC__P_OPT_INT: {
      mxc__opt_int v;
      memcpy(&v, f, sizeof v);
      if (v.has) {
        app(buf, len, pos, "%lld", (long long)v.v);
      } else {
        app(buf, len, pos, "None");
      }
      return;
    }
    case MXC__P_TUPLE: {
      mxc__tuple t;
      memcpy(&t, f, sizeof t);
      if (t.ndim < 0) {
        app(buf, len, pos, "None");
        return;
      }
      app(buf, len, pos, "(");
      for (int i = 0; i < t.ndim && i < MXC__TUPLE_MAX; ++i) {
        if (t.d[i] == MXC__TUPLE_NONE) {
          app(buf, len, pos, i ? ", None" : "None");
        } else {
          app(buf, len, pos, i ? ", %lld" : "%lld", (long long)t.d[i]);
        }
      }
      app(buf, len, pos, t.ndim == 1 ? ",)" : ")");
      return;
    }
    case MXC__P_STRING:
      app(buf, len, pos, "'%.64s'", f);
      return;
    default:
      app(buf, len, pos, "?");
      return;
  }
}

static const char *stype_name(int st) {
  return st == MXC_STYPE_CSR          ? "csr"
         : st == MXC_STYPE_ROW_SPARSE ? "row_sparse"
                                      : "default";
}

static void app_stypes(char *buf, size_t len, size_t *pos, const int *st,
                       int n) {
  app(buf, len, pos, "(");
  for (int i = 0; i < n; ++i) {
    app(buf, len, pos, "%s%s", i ? ", " : "", stype_name(st[i]));
  }
  app(buf, len, pos, ")");
}

static void fb_log(const mxc__op *op, const void *param, const int *ist,
                   int n_in, const int *ost, int n_out, int cast_back) {
  if (!fb_log_enabled() || !fb_first_time(op, ist, n_in, ost, n_out)) return;
  char buf[MXC__LOG_MAX];
  size_t pos = 0, len = sizeof buf;
  app(buf, len, &pos, "storage fallback: operator '%s' ", op->name);
  app_stypes(buf, len, &pos, ist, n_in);
  app(buf, len, &pos, " -> ");
  app_stypes(buf, len, &pos, ost, n_out);
  app(buf, len, &pos, ", params {");
  for (int i = 0; i < op->n_params; ++i) {
    const mxc__param_def *d = &op->params[i];
    app(buf, len, &pos, "%s%s=", i ? ", " : "", d->name);
    app_value(buf, len, &pos, d, (const char *)param + d->offset);
  }
  int sparse_in = 0;
  for (int i = 0; i < n_in; ++i) sparse_in |= ist[i] != MXC_STYPE_DEFAULT;
  app(buf, len, &pos, "}: %s%s",
      sparse_in ? "inputs converted to dense" : "dense kernel on dense inputs",
      cast_back ? ", results cast back to sparse" : "");
  mxc__log(MXC_LOG_WARNING, "%s", buf);
}

static int has_sparse(mxc__ndarray *const *in, int n_in,
                      mxc__ndarray *const *given, int n_total) {
  for (int i = 0; i < n_in; ++i) {
    if (in[i]->stype != MXC_STYPE_DEFAULT) return 1;
  }
  for (int i = 0; i < n_total; ++i) {
    if (given[i] && given[i]->stype != MXC_STYPE_DEFAULT) return 1;
  }
  return 0;
}

/* cast_storage(src) into *dst (NULL: a new array) as stype, pushed. */
static int fb_cast(const mxc__op *cast, mxc__ndarray *src, int stype,
                   mxc__ndarray **dst) {
  static const char *const k_names[] = {"default", "row_sparse", "csr"};
  _Alignas(16) unsigned char pbuf[64];
  MXC_RETURN_ERROR_IF(cast->param_size > sizeof pbuf, MXC_ERR_INTERNAL,
                      "storage fallback: cast_storage parameters too large");
  const char *key = "stype", *val = k_names[stype];
  MXC_FORWARD_IF_ERROR(mxc__param_parse(cast->name, cast->params,
                                        cast->n_params, &key, &val, 1, pbuf));
  return mxc__op_invoke(cast, pbuf, &src, 1, dst, 1, NULL);
}

/* Dense stand-ins of one call: din/dout are the arrays the dense kernel
 * sees; tmp_* mark the temporaries made here (freed at the end). */
typedef struct fb_call {
  mxc__ndarray *din[64], *dout[64];
  char tmp_in[64], tmp_out[64];
  mxc__req dreq[64];
} fb_call;

static void fb_free(fb_call *c, int n_in, int n_out) {
  for (int i = 0; i < n_in; ++i) {
    if (c->tmp_in[i]) mxc__ndarray_free(c->din[i]);
  }
  for (int j = 0; j < n_out; ++j) {
    if (c->tmp_out[j]) mxc__ndarray_free(c->dout[j]);
  }
}

/* Dense inputs and outputs for the kernel: casts of sparse inputs; for a
 * sparse given output, a new array (written, or left alone for req null)
 * or, for req add, a dense copy of its current values to add into. */
static int fb_prepare(const mxc__op *cast, fb_call *c, mxc__ndarray *const *in,
                      int n_in, mxc__ndarray **out, int n_out,
                      const mxc__req *req) {
  for (int i = 0; i < n_in; ++i) {
    c->din[i] = in[i];
    if (in[i]->stype == MXC_STYPE_DEFAULT) continue;
    c->din[i] = NULL;
    MXC_FORWARD_IF_ERROR(
        fb_cast(cast, in[i], MXC_STYPE_DEFAULT, &c->din[i]));
    c->tmp_in[i] = 1;
  }
  for (int j = 0; j < n_out; ++j) {
    c->dout[j] = out[j];
    c->dreq[j] = req ? req[j] : MXC__REQ_WRITE;
    if (!out[j] || out[j]->stype == MXC_STYPE_DEFAULT) continue;
    c->dout[j] = NULL;
    if (c->dreq[j] == MXC__REQ_ADD) {
      MXC_FORWARD_IF_ERROR(
          fb_cast(cast, out[j], MXC_STYPE_DEFAULT, &c->dout[j]));
    } else if (c->dreq[j] == MXC__REQ_INPLACE) {
      c->dreq[j] = MXC__REQ_WRITE; /* a fresh array shares nothing */
    }
    c->tmp_out[j] = 1; /* a new array receives it when still NULL */
  }
  return MXC_OK;
}

/* Casts results back: into sparse given outputs, and into sparse inputs
 * the operator updates in place (optimizer states). *cast_back = 1 when
 * something was cast. */
static int fb_finish(const mxc__op *op, const mxc__op *cast, fb_call *c,
                     mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                     int n_out, int *cast_back) {
  for (int j = 0; j < n_out; ++j) {
    if (!c->tmp_out[j] || c->dreq[j] == MXC__REQ_NULL) continue;
    mxc__ndarray *dst = out[j];
    MXC_FORWARD_IF_ERROR(fb_cast(cast, c->dout[j], dst->stype, &dst));
    *cast_back = 1;
  }
  for (int i = 0; i < n_in && i < 32; ++i) {
    if (!c->tmp_in[i] || !(op->mutate_inputs >> i & 1)) continue;
    mxc__ndarray *dst = in[i];
    MXC_FORWARD_IF_ERROR(fb_cast(cast, c->din[i], dst->stype, &dst));
    *cast_back = 1;
  }
  return MXC_OK;
}

/* The fallback for a call whose shapes and dtypes were checked. Outputs
 * invoke creates are dense. On failure, out is untouched; given outputs
 * may have been written when a cast back failed after the kernel was
 * pushed (allocation failure only). Cold and out of line, so that
 * mxc__op_invoke's frame and code stay as they were for dense calls
 * (invoke_tiny_add_us in bench/ops). */
__attribute__((cold, noinline)) static int fallback(
    const mxc__op *op, const void *param, mxc__ndarray *const *in, int n_in,
    mxc__ndarray **out, int n_out, const mxc__req *req) {
  const mxc__op *cast = mxc__op_find("cast_storage");
  /* cast_storage itself defines the conversions: a storage error there
   * (a given output of another type than stype asks) stays an error. */
  if (op == cast) return MXC_ERR_STYPE;
  MXC_RETURN_ERROR_IF(!cast, MXC_ERR_STYPE,
                      "operator '%s': has no kernel for sparse arrays and "
                      "cast_storage is not in this build",
                      op->name);
  int ist[64], ost[64];
  for (int i = 0; i < n_in; ++i) ist[i] = in[i]->stype;
  for (int j = 0; j < n_out; ++j) {
    ost[j] = out[j] ? out[j]->stype : MXC_STYPE_DEFAULT;
  }
  fb_call c;
  memset(&c, 0, sizeof c);
  int cast_back = 0;
  int rc = fb_prepare(cast, &c, in, n_in, out, n_out, req);
  if (rc == MXC_OK) {
    rc = mxc__op_invoke(op, param, c.din, n_in, c.dout, n_out, c.dreq);
  }
  if (rc == MXC_OK) {
    rc = fb_finish(op, cast, &c, in, n_in, out, n_out, &cast_back);
  }
  for (int j = 0; j < n_out; ++j) {
    if (out[j] || !c.dout[j]) continue;
    if (rc == MXC_OK) {
      out[j] = c.dout[j];
    } else {
      mxc__ndarray_free(c.dout[j]);
    }
  }
  fb_free(&c, n_in, n_out);
  if (rc == MXC_OK) fb_log(op, param, ist, n_in, ost, n_out, cast_back);
  return rc;
}

/* ---- invoke ---- */

typedef struct plan {
  mxc__ndarray *outs[64]; /* given or created */
  int created[64];
  mxc__var *reads[64];
  mxc__var *writes[129];
  int n_reads, n_writes;
} plan;

static void plan_drop_created(plan *p, int n_out) {
  for (int i = 0; i < n_out; ++i) {
    if (p->created[i]) mxc__ndarray_free(p->outs[i]);
  }
}

static int make_outputs(const mxc__op *op, mxc__ndarray **out, int n_out,
                        int n_total, const mxc__shape *oshape,
                        const int *otype, const int *ostype, mxc__device dev,
                        plan *p) {
  for (int i = 0; i < n_total; ++i) {
    mxc__ndarray *given = i < n_out ? out[i] : NULL;
    if (given) {
      p->outs[i] = given;
      continue;
    }
    int rc = ostype[i] == MXC_STYPE_DEFAULT
                 ? mxc__ndarray_create(&oshape[i], otype[i], dev, 1,
                                       &p->outs[i])
                 : mxc__ndarray_create_sparse(ostype[i], &oshape[i],
                                              otype[i], MXC_DTYPE_INT64, dev,
                                              &p->outs[i]);
    if (rc != MXC_OK) return rc;
    p->created[i] = 1;
  }
  for (int i = 0; i < n_total; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(p->outs[i]));
  }
  (void)op;
  return MXC_OK;
}

/* Calls whose arrays hold at most this many elements in all run in the
 * calling thread when their arrays are free (run_here): their kernel takes
 * about as long as handing the work to an engine worker and waking it
 * (~1 us), so running them in place is several times faster (a tiny
 * elemwise_add: ~1.1 us -> ~0.4 us per call) and they stay ordered by the
 * engine like any other call. Bigger calls stay asynchronous, so that the
 * caller can go on pushing while they run. */
#define SMALL_CALL_ELEMS 4096

static int small_call(mxc__ndarray *const *in, int n_in,
                      const mxc__shape *oshape, int n_total) {
  int64_t n = 0;
  for (int i = 0; i < n_in; ++i) n += mxc__shape_size(&in[i]->shape);
  for (int i = 0; i < n_total; ++i) n += mxc__shape_size(&oshape[i]);
  return n <= SMALL_CALL_ELEMS;
}

int mxc__op_invoke(const mxc__op *op, const void *param,
                   mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                   int n_out, const mxc__req *req) {
  int n_total = 0;
  MXC_FORWARD_IF_ERROR(check_counts(op, param, n_in, n_out, &n_total));
  mxc__device dev = {MXC_DEVICE_CPU, 0};
  for (int i = 0; i < n_in; ++i) {
    MXC_RETURN_ERROR_IF(!in[i], MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': input %d is NULL", op->name, i);
    if (i == 0) dev = in[0]->chunk->dev;
  }
  mxc__shape oshape[64];
  int otype[64];
  /* Only the first n_total entries are used: clearing 64 of each on every
   * call showed up in profiles of tiny operators. */
  mxc__ndarray *given[64];
  for (int i = 0; i < n_total && i < 64; ++i) {
    given[i] = i < n_out ? out[i] : NULL;
  }
  MXC_FORWARD_IF_ERROR(infer(op, param, in, n_in, given, n_total, oshape,
                             otype));
  int ostype[64], dispatch;
  int st_rc = infer_stypes(op, param, in, n_in, given, n_total, req, n_out,
                           ostype, &dispatch);
  if (MXC__UNLIKELY(st_rc != MXC_OK)) {
    /* No kernel for these storage types: run the dense one through dense
     * temporaries (dense-only calls never get here). */
    if (st_rc == MXC_ERR_STYPE && op->compute &&
        has_sparse(in, n_in, given, n_total)) {
      return fallback(op, param, in, n_in, out, n_out, req);
    }
    return st_rc;
  }
  plan p;
  p.n_reads = p.n_writes = 0;
  for (int i = 0; i < n_total; ++i) p.created[i] = 0;
  int rc = make_outputs(op, out, n_out, n_total, oshape, otype, ostype, dev,
                        &p);
  invoke_rec *r = NULL;
  int sparse = dispatch == MXC__DISPATCH_SPARSE;
  if (rc == MXC_OK) rc = rec_new(op, param, n_in, n_total, sparse, &r);
  if (rc != MXC_OK) {
    plan_drop_created(&p, n_total);
    return rc;
  }
  mxc__engine *eng = mxc__ndarray_engine(p.outs[0] ? p.outs[0] : in[0]);
  for (int i = 0; i < n_in; ++i) {
    if (rc == MXC_OK) rc = mxc__ndarray_ensure_alloc(in[i]);
    blob_of(in[i], &r->in[i]);
    if (sparse) {
      r->arrs[i] = *in[i];
      r->arrs[i].ag = NULL;
    }
    if (i < 32 && (op->mutate_inputs >> i & 1)) {
      p.writes[p.n_writes++] = mxc__ndarray_var(in[i]);
    } else {
      p.reads[p.n_reads++] = mxc__ndarray_var(in[i]);
    }
  }
  for (int i = 0; i < n_total; ++i) {
    blob_of(p.outs[i], &r->out[i]);
    if (sparse) {
      r->arrs[n_in + i] = *p.outs[i];
      r->arrs[n_in + i].ag = NULL;
    }
    r->req[i] = req && i < n_out ? req[i] : MXC__REQ_WRITE;
    if (r->req[i] != MXC__REQ_NULL) {
      p.writes[p.n_writes++] = mxc__ndarray_var(p.outs[i]);
    }
  }
  r->ctx.is_train = tls_training;
  r->ctx.dev = dev;
  r->ctx.num_threads = 1;
  if (op->resources & MXC__RES_RANDOM) {
    int64_t n = 0;
    for (int i = 0; i < n_total; ++i) n += mxc__shape_size(&oshape[i]);
    for (int i = 0; i < n_in; ++i) n += mxc__shape_size(&in[i]->shape);
    r->ctx.rng = mxc__random_reserve(n + 1, 4);
  }
  int t = -1;
  if (rc == MXC_OK && (op->resources & MXC__RES_TEMP)) {
    rc = temp_get(eng, dev, &t);
    if (rc == MXC_OK) {
      r->ctx.temp = g_temp[t];
      p.writes[p.n_writes++] = g_temp_var[t];
    }
  }
  mxc__push_args a;
  memset(&a, 0, sizeof a);
  a.sync_fn = run_rec;
  a.arg = r;
  a.free_fn = free_rec;
  a.reads = p.reads;
  a.n_reads = p.n_reads;
  a.writes = p.writes;
  a.n_writes = p.n_writes;
  a.name = op->name;
  a.dev = dev;
  a.run_here = !sparse && small_call(in, n_in, oshape, n_total);
  if (rc == MXC_OK) rc = mxc__engine_push(eng, &a);
  if (rc != MXC_OK) {
    mxc__free(r);
    plan_drop_created(&p, n_total);
    return rc;
  }
  /* Hand out created visible outputs; drop created hidden ones (pending
   * work keeps their storage alive). */
  for (int i = 0; i < n_total; ++i) {
    if (i < n_out && !out[i]) {
      out[i] = p.outs[i];
    } else if (p.created[i]) {
      mxc__ndarray_free(p.outs[i]);
    }
  }
  return MXC_OK;
}
