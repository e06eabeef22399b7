/* The storage fallback of mxc__op_invoke (core/op/fallback.h) and its
 * one-line log. */
#include "core/op/fallback.h"

#include "core/op/cast_storage.h"

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
#include "core/op/arity.h"
#include "core/op/invoke.h"
#include "core/op/registry_internal.h"

/* Used when the operator has no storage functions, or infer_stype / the
 * checks after it answer MXC_ERR_STYPE. */

#define FB_SLOTS 1024 /* distinct cases remembered; then no more lines */

static pthread_mutex_t g_fb_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_fb_seen[FB_SLOTS]; /* hashes of logged cases; 0 = free */
static int g_fb_count;
static atomic_int g_fb_enabled = -1; /* -1: environment not read yet */
/* The device fallback's switches (device_fallback.c): its log, and the
 * fallback itself (MXC_DEVICE_FALLBACK=0 refuses such calls). */
static atomic_int g_dev_log_enabled = -1;
static atomic_int g_dev_enabled = -1;

void mxc__fallback_log_reset(void) {
  pthread_mutex_lock(&g_fb_lock);
  memset(g_fb_seen, 0, sizeof g_fb_seen);
  g_fb_count = 0;
  atomic_store(&g_fb_enabled, -1);
  atomic_store(&g_dev_log_enabled, -1);
  atomic_store(&g_dev_enabled, -1);
  pthread_mutex_unlock(&g_fb_lock);
}

/* 1 unless the environment variable `name` is "0"; read once per reset
 * into *cache. */
static int env_switch(atomic_int *cache, const char *name) {
  int e = atomic_load(cache);
  if (e < 0) {
    const char *v = getenv(name);
    e = !(v && strcmp(v, "0") == 0);
    atomic_store(cache, e);
  }
  return e;
}

static int fb_log_enabled(void) {
  return env_switch(&g_fb_enabled, "MXC_STORAGE_FALLBACK_LOG");
}

int mxc__device_fallback_enabled(void) {
  return env_switch(&g_dev_enabled, "MXC_DEVICE_FALLBACK");
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* 1 when the case hashed to h is new (and now remembered): the caller
 * logs it. Linear probing; a full table answers 0, so the log stays
 * bounded. One table for both fallbacks' cases (their hashes start
 * apart). */
static int seen_first_time(uint64_t h) {
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

/* The storage fallback's case: operator, input and output storage types. */
static int fb_first_time(const mxc__op *op, const int *ist, int n_in,
                         const int *ost, int n_out) {
  uint64_t h = fnv(14695981039346656037ull, op->name, strlen(op->name) + 1);
  h = fnv(h, ist, sizeof *ist * (size_t)n_in);
  h = fnv(h, "|", 1);
  h = fnv(h, ost, sizeof *ost * (size_t)n_out);
  return seen_first_time(h);
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

static void app_stypes(char *buf, size_t len, size_t *pos, const int *st,
                       int n) {
  app(buf, len, pos, "(");
  for (int i = 0; i < n; ++i) {
    app(buf, len, pos, "%s%s", i ? ", " : "", mxc__stype_name(st[i]));
  }
  app(buf, len, pos, ")");
}

/* ", params {a=1, b=(2, 3)}" as room allows. */
static void app_params(char *buf, size_t len, size_t *pos, const mxc__op *op,
                       const void *param) {
  app(buf, len, pos, ", params {");
  for (int i = 0; i < op->n_params; ++i) {
    const mxc__param_def *d = &op->params[i];
    app(buf, len, pos, "%s%s=", i ? ", " : "", d->name);
    app_value(buf, len, pos, d, (const char *)param + d->offset);
  }
  app(buf, len, pos, "}");
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
  app_params(buf, len, &pos, op, param);
  int sparse_in = 0;
  for (int i = 0; i < n_in; ++i) sparse_in |= ist[i] != MXC_STYPE_DEFAULT;
  app(buf, len, &pos, ": %s%s",
      sparse_in ? "inputs converted to dense" : "dense kernel on dense inputs",
      cast_back ? ", results cast back to sparse" : "");
  mxc__log(MXC_LOG_WARNING, "%s", buf);
}

static void app_dtypes(char *buf, size_t len, size_t *pos, const int *dt,
                       int n) {
  app(buf, len, pos, "(");
  for (int i = 0; i < n; ++i) {
    app(buf, len, pos, "%s%s", i ? ", " : "", mxc__dtype_name(dt[i]));
  }
  app(buf, len, pos, ")");
}

/* The device fallback's case: operator, dtypes and device (a tag keeps
 * its hashes apart from the storage fallback's). */
static int dev_first_time(const mxc__op *op, const int *itype, int n_in,
                          const int *otype, int n_out, mxc__device dev) {
  uint64_t h = fnv(14695981039346656037ull, "device|", 7);
  h = fnv(h, op->name, strlen(op->name) + 1);
  h = fnv(h, itype, sizeof *itype * (size_t)n_in);
  h = fnv(h, "|", 1);
  h = fnv(h, otype, sizeof *otype * (size_t)n_out);
  h = fnv(h, &dev, sizeof dev);
  return seen_first_time(h);
}

static int dev_log_enabled(void) {
  return env_switch(&g_dev_log_enabled, "MXC_DEVICE_FALLBACK_LOG");
}

void mxc__device_fallback_log(const mxc__op *op, const void *param,
                              const int *itype, int n_in, const int *otype,
                              int n_out, mxc__device dev, const char *why) {
  if (!dev_log_enabled() ||
      !dev_first_time(op, itype, n_in, otype, n_out, dev)) {
    return;
  }
  char buf[MXC__LOG_MAX];
  size_t pos = 0, len = sizeof buf;
  app(buf, len, &pos, "device fallback: operator '%s' ", op->name);
  app_dtypes(buf, len, &pos, itype, n_in);
  app(buf, len, &pos, " -> ");
  app_dtypes(buf, len, &pos, otype, n_out);
  app(buf, len, &pos, " on gpu(%d)", dev.id);
  app_params(buf, len, &pos, op, param);
  if (why && why[0]) {
    app(buf, len, &pos, ": its kernel there declines the call (%s)", why);
  } else {
    app(buf, len, &pos, ": no kernel there");
  }
  app(buf, len, &pos, "; inputs copied to the CPU, run by the CPU kernel, "
                      "outputs copied back");
  mxc__log(MXC_LOG_WARNING, "%s", buf);
}

/* The unfused run's case: the program (the fused node's parameters as
 * written) and the device; the line names why the kernel declined. */
int mxc__op_run_unfused(const mxc__op *op, const void *param,
                        struct mxc__ndarray *const *in, int n_in,
                        struct mxc__ndarray **out, int n_out,
                        const mxc__req *req, mxc__device dev,
                        const char *why) {
  int rc = mxc__registry_run_unfused(op, param, in, n_in, out, n_out, req);
  if (rc != MXC_OK || !dev_log_enabled()) return rc;
  char prog[MXC__LOG_MAX];
  size_t ppos = 0;
  app_params(prog, sizeof prog, &ppos, op, param);
  uint64_t h = fnv(14695981039346656037ull, "unfused|", 8);
  h = fnv(h, prog, ppos);
  h = fnv(h, &dev, sizeof dev);
  if (!seen_first_time(h)) return rc;
  mxc__log(MXC_LOG_WARNING,
           "fused node on %s(%d)%s: its kernel there declines it (%s); its "
           "instructions run one by one, each with its own kernel",
           dev.type == MXC_DEVICE_GPU ? "gpu" : "cpu", dev.id, prog,
           why && why[0] ? why : "no kernel");
  return rc;
}

int mxc__op_has_sparse(mxc__ndarray *const *in, int n_in,
                      mxc__ndarray *const *given, int n_total) {
  for (int i = 0; i < n_in; ++i) {
    if (in[i]->stype != MXC_STYPE_DEFAULT) return 1;
  }
  for (int i = 0; i < n_total; ++i) {
    if (given[i] && given[i]->stype != MXC_STYPE_DEFAULT) return 1;
  }
  return 0;
}


/* Dense stand-ins of one call: din/dout are the arrays the dense kernel
 * sees; tmp_* mark the temporaries made here (freed at the end). */
typedef struct fb_call {
  mxc__ndarray **din, **dout;
  char *tmp_in, *tmp_out;
  mxc__req *dreq;
  int *ist, *ost; /* the caller's storage types, for the log line */
} fb_call;

/* One zeroed heap block for the arrays of c (a cold path: always the
 * heap, whatever the arity). */
static int fb_alloc(const mxc__op *op, fb_call *c, int n_in, int n_out) {
  size_t ni = (size_t)n_in, no = (size_t)n_out;
  size_t bytes = sizeof(mxc__ndarray *) * (ni + no) + sizeof(mxc__req) * no +
                 sizeof(int) * (ni + no) + ni + no;
  char *m = mxc__calloc(1, bytes ? bytes : 1);
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM,
                      "operator '%s': out of memory for the storage "
                      "fallback of a call with %d inputs and %d outputs",
                      op->name, n_in, n_out);
  c->din = (mxc__ndarray **)m;
  c->dout = c->din + ni;
  c->dreq = (mxc__req *)(c->dout + no);
  c->ist = (int *)(c->dreq + no);
  c->ost = c->ist + ni;
  c->tmp_in = (char *)(c->ost + no);
  c->tmp_out = c->tmp_in + ni;
  return MXC_OK;
}

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
static int fb_prepare(fb_call *c, mxc__ndarray *const *in,
                      int n_in, mxc__ndarray **out, int n_out,
                      const mxc__req *req) {
  for (int i = 0; i < n_in; ++i) {
    c->din[i] = in[i];
    if (in[i]->stype == MXC_STYPE_DEFAULT) continue;
    c->din[i] = NULL;
    MXC_FORWARD_IF_ERROR(
        mxc__op_cast_storage(in[i], MXC_STYPE_DEFAULT, NULL, &c->din[i]));
    c->tmp_in[i] = 1;
  }
  for (int j = 0; j < n_out; ++j) {
    c->dout[j] = out[j];
    c->dreq[j] = req ? req[j] : MXC__REQ_WRITE;
    if (!out[j] || out[j]->stype == MXC_STYPE_DEFAULT) continue;
    c->dout[j] = NULL;
    if (c->dreq[j] == MXC__REQ_ADD) {
      MXC_FORWARD_IF_ERROR(
          mxc__op_cast_storage(out[j], MXC_STYPE_DEFAULT, NULL,
                               &c->dout[j]));
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
static int fb_finish(const mxc__op *op, fb_call *c,
                     mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                     int n_out, int *cast_back) {
  for (int j = 0; j < n_out; ++j) {
    if (!c->tmp_out[j] || c->dreq[j] == MXC__REQ_NULL) continue;
    mxc__ndarray *dst = out[j];
    MXC_FORWARD_IF_ERROR(
        mxc__op_cast_storage(c->dout[j], dst->stype, NULL, &dst));
    *cast_back = 1;
  }
  for (int i = 0; i < n_in; ++i) {
    if (!c->tmp_in[i] || !mxc__op_mutates_input(op, i)) continue;
    mxc__ndarray *dst = in[i];
    MXC_FORWARD_IF_ERROR(
        mxc__op_cast_storage(c->din[i], dst->stype, NULL, &dst));
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
__attribute__((cold, noinline)) int mxc__op_fallback(
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
  fb_call c;
  memset(&c, 0, sizeof c);
  MXC_FORWARD_IF_ERROR(fb_alloc(op, &c, n_in, n_out));
  for (int i = 0; i < n_in; ++i) c.ist[i] = in[i]->stype;
  for (int j = 0; j < n_out; ++j) {
    c.ost[j] = out[j] ? out[j]->stype : MXC_STYPE_DEFAULT;
  }
  int cast_back = 0;
  int rc = fb_prepare(&c, in, n_in, out, n_out, req);
  if (rc == MXC_OK) {
    rc = mxc__op_invoke(op, param, c.din, n_in, c.dout, n_out, c.dreq);
  }
  if (rc == MXC_OK) {
    rc = fb_finish(op, &c, in, n_in, out, n_out, &cast_back);
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
  if (rc == MXC_OK) fb_log(op, param, c.ist, n_in, c.ost, n_out, cast_back);
  mxc__free(c.din); /* the block of every array of c */
  return rc;
}

