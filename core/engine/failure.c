/* Operator failures: refcounted records, poisoning of variables, and the
 * error epoch.
 *
 * Clearing every poison in wait_all must be O(1): wait_all bumps
 * e->epoch, and a variable's failure counts only while the epoch it was
 * tagged with is the current one. Stale records stay attached until the
 * variable is poisoned again, cleared by wait_var, or deleted. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/engine/internal.h"

static const char *const k_code_names[] = {
    "MXC_OK",
    "MXC_ERR_INVALID_ARGUMENT",
    "MXC_ERR_INVALID_HANDLE",
    "MXC_ERR_SHAPE",
    "MXC_ERR_DTYPE",
    "MXC_ERR_STYPE",
    "MXC_ERR_OOM",
    "MXC_ERR_NOT_FOUND",
    "MXC_ERR_IO",
    "MXC_ERR_UNSUPPORTED",
    "MXC_ERR_INTERNAL",
    "MXC_ERR_OPERATOR",
    "MXC_ERR_REENTRANT",
};

#define N_CODES ((int)(sizeof k_code_names / sizeof k_code_names[0]))

int mxc__failure_code(int raw) {
  return (raw >= 1 && raw < N_CODES) ? raw : MXC_ERR_OPERATOR;
}

const char *mxc__failure_code_name(int code) {
  return (code >= 0 && code < N_CODES) ? k_code_names[code] : "MXC_ERR_UNKNOWN";
}

/* When a failure record cannot be allocated, one of these stands in: the
 * code survives, the operator's name and message do not. refs < 0 marks
 * them as static. */
#define FALLBACK(c) \
  { -1, c, "operator failed: " #c " (details lost: out of memory)" }
static mxc__failure g_fallback[N_CODES] = {
    FALLBACK(MXC_ERR_OPERATOR),
    FALLBACK(MXC_ERR_INVALID_ARGUMENT),
    FALLBACK(MXC_ERR_INVALID_HANDLE),
    FALLBACK(MXC_ERR_SHAPE),
    FALLBACK(MXC_ERR_DTYPE),
    FALLBACK(MXC_ERR_STYPE),
    FALLBACK(MXC_ERR_OOM),
    FALLBACK(MXC_ERR_NOT_FOUND),
    FALLBACK(MXC_ERR_IO),
    FALLBACK(MXC_ERR_UNSUPPORTED),
    FALLBACK(MXC_ERR_INTERNAL),
    FALLBACK(MXC_ERR_OPERATOR),
    FALLBACK(MXC_ERR_REENTRANT),
};

mxc__failure *mxc__failure_new(const char *name, int raw_code,
                               const char *msg) {
  int code = mxc__failure_code(raw_code);
  char detail[64];
  if (msg == NULL) {
    if (raw_code == code) {
      snprintf(detail, sizeof detail, "%s", mxc__failure_code_name(code));
    } else {
      snprintf(detail, sizeof detail, "MXC_ERR_UNKNOWN (code %d)", raw_code);
    }
    msg = detail;
  }
  const char *fmt = "operator '%s' failed: %s";
  int len = snprintf(NULL, 0, fmt, name, msg);
  if (len < 0) len = 0;
  if (len > MXC__ERROR_MAX - 1) len = MXC__ERROR_MAX - 1;
  mxc__failure *f = mxc__malloc(sizeof *f + (size_t)len + 1);
  if (f == NULL) return &g_fallback[code];
  char *text = (char *)(f + 1);
  snprintf(text, (size_t)len + 1, fmt, name, msg);
  atomic_init(&f->refs, 1);
  f->code = code;
  f->msg = text;
  return f;
}

void mxc__failure_ref(mxc__failure *f) {
  if (atomic_load_explicit(&f->refs, memory_order_relaxed) >= 0) {
    /* Only a holder of a reference may take another. */
    int was = atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
    MXC__ASSERT_MSG(was > 0, "failure record referenced after its release");
    (void)was;
  }
}

void mxc__failure_unref(mxc__failure *f) {
  if (f == NULL) return;
  if (atomic_load_explicit(&f->refs, memory_order_relaxed) < 0) return;
  int was = atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel);
  MXC__ASSERT_MSG(was > 0, "failure record released too often");
  if (was == 1) {
    mxc__free(f);
  }
}

int mxc__failure_report(const mxc__failure *f) {
  return mxc__error_set_raw(f->code, f->msg);
}

uint64_t mxc__failure_commit(mxc__engine *e, mxc__exec *ex) {
  if (ex->err == NULL) {
    ex->err = mxc__failure_new(ex->name, ex->code, NULL);
  } else if (atomic_load_explicit(&ex->err->refs, memory_order_relaxed) >= 0) {
    /* Made by mxc__exec_set_error before the code was known; still owned
     * by this op alone, so writing the code is race-free. */
    ex->err->code = mxc__failure_code(ex->code);
  }
  pthread_mutex_lock(&e->err_mu);
  uint64_t epoch = atomic_load_explicit(&e->epoch, memory_order_relaxed);
  if (e->first_err == NULL) {
    mxc__failure_ref(ex->err);
    e->first_err = ex->err;
  }
  pthread_mutex_unlock(&e->err_mu);
  return epoch;
}

/* Serial-number order: a was queued before b (within 2^31 appends). */
static int ticket_before(uint32_t a, uint32_t b) {
  return (int32_t)(a - b) < 0;
}

/* With v->mu held: does v's failure count for a use with this ticket? */
static int poison_counts(mxc__engine *e, const mxc__var *v, uint32_t ticket) {
  return atomic_load_explicit(&v->err, memory_order_relaxed) != NULL &&
         v->err_epoch ==
             atomic_load_explicit(&e->epoch, memory_order_acquire) &&
         (!v->has_clear || ticket_before(ticket, v->clear_ticket));
}

void mxc__var_check_poison(mxc__engine *e, mxc__var *v, uint32_t ticket,
                           mxc__failure **err, uint64_t *epoch) {
  /* The hint is exact enough: the last poisoning of v happened before the
   * caller was granted v (ordered through v->mu), so it is visible. */
  if (*err != NULL ||
      atomic_load_explicit(&v->err, memory_order_relaxed) == NULL) {
    return;
  }
  pthread_mutex_lock(&v->mu);
  if (poison_counts(e, v, ticket)) {
    mxc__failure *f = atomic_load_explicit(&v->err, memory_order_relaxed);
    mxc__failure_ref(f);
    *err = f;
    *epoch = v->err_epoch;
  }
  pthread_mutex_unlock(&v->mu);
}

void mxc__var_poison(mxc__var *v, mxc__failure *f, uint64_t epoch) {
  /* Set before the first push and never changed: no lock needed. */
  if (v->scratch) return;
  mxc__failure_ref(f);
  pthread_mutex_lock(&v->mu);
  mxc__failure *old = atomic_load_explicit(&v->err, memory_order_relaxed);
  atomic_store_explicit(&v->err, f, memory_order_relaxed);
  v->err_epoch = epoch;
  v->has_clear = 0;
  pthread_mutex_unlock(&v->mu);
  mxc__failure_unref(old);
}

void mxc__var_drop_stale(mxc__var *v) {
  if (atomic_load_explicit(&v->err, memory_order_relaxed) == NULL) return;
  pthread_mutex_lock(&v->mu);
  mxc__failure *f = atomic_load_explicit(&v->err, memory_order_relaxed);
  atomic_store_explicit(&v->err, NULL, memory_order_relaxed);
  v->has_clear = 0;
  pthread_mutex_unlock(&v->mu);
  mxc__failure_unref(f);
}

mxc__failure *mxc__var_take_poison(mxc__engine *e, mxc__var *v,
                                   const mxc__dep *d) {
  if (atomic_load_explicit(&v->err, memory_order_relaxed) == NULL) {
    return NULL;
  }
  mxc__failure *drop = NULL, *out = NULL;
  pthread_mutex_lock(&v->mu);
  mxc__failure *f = atomic_load_explicit(&v->err, memory_order_relaxed);
  int counts = poison_counts(e, v, d ? d->ticket : 0);
  if (d == NULL || d->write) {
    /* Nobody else holds v: detach the record. */
    atomic_store_explicit(&v->err, NULL, memory_order_relaxed);
    v->has_clear = 0;
    if (counts) {
      out = f; /* the var's reference moves to the caller */
    } else {
      drop = f;
    }
  } else if (counts) {
    /* Readers queued before this wait may still be about to check: keep
     * the record, mark where the poison ends. */
    v->has_clear = 1;
    v->clear_ticket = d->ticket;
    mxc__failure_ref(f);
    out = f;
  }
  pthread_mutex_unlock(&v->mu);
  mxc__failure_unref(drop);
  return out;
}

mxc__failure *mxc__engine_next_epoch(mxc__engine *e) {
  pthread_mutex_lock(&e->err_mu);
  mxc__failure *f = e->first_err;
  e->first_err = NULL;
  atomic_fetch_add_explicit(&e->epoch, 1, memory_order_release);
  pthread_mutex_unlock(&e->err_mu);
  return f;
}
