/* Profiler state and configuration, event helpers, user ranges and the
 * MXC_PROFILER_AUTOSTART switch (see profiler.h). */
#include "core/profiler/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/alloc.h"
#include "core/base/file.h"

atomic_uint mxc__prof_mask;

/* Everything but the engine's own spans, which repeat each operator's. */
#define DEFAULT_CATS                                                      \
  (MXC__PROF_OPERATOR | MXC__PROF_EXECUTOR | MXC__PROF_WAIT |             \
   MXC__PROF_COPY | MXC__PROF_MEMORY | MXC__PROF_IO | MXC__PROF_USER)
#define ALL_CATS ((1u << MXC__PROF_NUM_CATS) - 1u)
#define PATH_MAX_LEN 4096

/* Guards the configuration, the state and the origin. */
static pthread_mutex_t g_ctl = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_cats = DEFAULT_CATS;
static int g_state = MXC_PROFILER_STOP;
static char g_filename[PATH_MAX_LEN] = "profile.json";
static int64_t g_origin;

static const char *const k_cat_names[MXC__PROF_NUM_CATS] = {
    "operator", "executor", "engine", "wait",
    "copy",     "memory",   "io",     "user"};

/* Config keys, each switching categories. */
static const struct {
  const char *key;
  unsigned cats;
} k_switches[] = {
    {"profile_all", ALL_CATS},
    {"profile_imperative", MXC__PROF_OPERATOR},
    {"profile_symbolic", MXC__PROF_EXECUTOR},
    {"profile_engine", MXC__PROF_ENGINE},
    {"profile_wait", MXC__PROF_WAIT},
    {"profile_copy", MXC__PROF_COPY},
    {"profile_memory", MXC__PROF_MEMORY},
    {"profile_io", MXC__PROF_IO},
    {"profile_user", MXC__PROF_USER},
};

const char *mxc__prof_cat_name(unsigned cat) {
  for (int i = 0; i < MXC__PROF_NUM_CATS; ++i) {
    if (cat == 1u << i) return k_cat_names[i];
  }
  return "unknown";
}

int64_t mxc__prof_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t mxc__prof_origin(void) {
  pthread_mutex_lock(&g_ctl);
  int64_t o = g_origin;
  pthread_mutex_unlock(&g_ctl);
  return o;
}

/* ---- events -------------------------------------------------------------- */

static void copy_trunc(char *dst, size_t cap, const char *src) {
  size_t n = strnlen(src, cap - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

void mxc__prof_event_init(mxc__prof_event *ev, unsigned cat, char ph,
                          const char *name, int64_t ts) {
  ev->ts = ts;
  ev->value = 0;
  ev->bytes = 0;
  ev->cat = (unsigned char)__builtin_ctz(cat);
  ev->ph = ph;
  copy_trunc(ev->name, sizeof ev->name, name ? name : "(unnamed)");
  ev->detail[0] = '\0';
}

void mxc__prof_detail_add(mxc__prof_event *ev, const char *key,
                          const char *value) {
  size_t len = strlen(ev->detail);
  /* Separator, key, '\x1f', value: as much as fits. */
  int n = snprintf(ev->detail + len, sizeof ev->detail - len, "%s%s\x1f%s",
                   len ? "\x1e" : "", key, value);
  if (n < 0) ev->detail[len] = '\0';
}

void mxc__prof_span(unsigned cat, const char *name, int64_t t0,
                    const char *key, const char *value) {
  mxc__prof_event ev;
  mxc__prof_event_init(&ev, cat, 'X', name, t0);
  ev.value = mxc__prof_now() - t0;
  if (key) mxc__prof_detail_add(&ev, key, value);
  mxc__prof_record(&ev);
}

void mxc__prof_instant(unsigned cat, const char *name) {
  mxc__prof_event ev;
  mxc__prof_event_init(&ev, cat, 'i', name, mxc__prof_now());
  mxc__prof_record(&ev);
}

void mxc__prof_counter(unsigned cat, const char *name, int64_t value,
                       int64_t bytes, const char *attrib) {
  mxc__prof_event ev;
  mxc__prof_event_init(&ev, cat, 'C', name, mxc__prof_now());
  ev.value = value;
  ev.bytes = bytes;
  if (attrib) mxc__prof_detail_add(&ev, "operator", attrib);
  mxc__prof_record(&ev);
}

static _Thread_local const char *tls_attrib;

static _Thread_local const char *tls_node;

void mxc__prof_set_attrib(const char *label) { tls_attrib = label; }
const char *mxc__prof_attrib(void) { return tls_attrib; }
void mxc__prof_set_node(const char *node) { tls_node = node; }
const char *mxc__prof_node(void) { return tls_node; }

/* ---- configuration and state ----------------------------------------------- */

static int parse_bool(const char *key, const char *value, int *out) {
  if (!strcmp(value, "1") || !strcmp(value, "true")) {
    *out = 1;
  } else if (!strcmp(value, "0") || !strcmp(value, "false")) {
    *out = 0;
  } else {
    return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "profiler config '%s': value is \"%s\"; expected "
                          "\"1\", \"0\", \"true\" or \"false\"",
                          key, value);
  }
  return MXC_OK;
}

static void apply_mask_locked(void) {
  unsigned m = g_state == MXC_PROFILER_RUN ? g_cats : 0;
  atomic_store_explicit(&mxc__prof_mask, m, memory_order_relaxed);
}

static int set_filename(const char *value) {
  MXC_RETURN_ERROR_IF(value[0] == '\0' || strlen(value) >= PATH_MAX_LEN,
                      MXC_ERR_INVALID_ARGUMENT,
                      "profiler config 'filename': expected a path of 1 to "
                      "%d bytes, got %zu bytes",
                      PATH_MAX_LEN - 1, strlen(value));
  pthread_mutex_lock(&g_ctl);
  memcpy(g_filename, value, strlen(value) + 1);
  pthread_mutex_unlock(&g_ctl);
  return MXC_OK;
}

int mxc__prof_set_config(const char *key, const char *value) {
  if (!strcmp(key, "filename")) return set_filename(value);
  for (size_t i = 0; i < sizeof k_switches / sizeof k_switches[0]; ++i) {
    if (strcmp(key, k_switches[i].key) != 0) continue;
    int on = 0;
    MXC_FORWARD_IF_ERROR(parse_bool(key, value, &on));
    pthread_mutex_lock(&g_ctl);
    g_cats = on ? g_cats | k_switches[i].cats : g_cats & ~k_switches[i].cats;
    apply_mask_locked();
    pthread_mutex_unlock(&g_ctl);
    return MXC_OK;
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "profiler config: unknown key '%s'; expected "
                        "filename, profile_all, profile_imperative, "
                        "profile_symbolic, profile_engine, profile_wait, "
                        "profile_copy, profile_memory, profile_io or "
                        "profile_user",
                        key);
}

int mxc__prof_set_state(int state) {
  MXC_RETURN_ERROR_IF(state < MXC_PROFILER_STOP || state > MXC_PROFILER_PAUSE,
                      MXC_ERR_INVALID_ARGUMENT,
                      "profiler state is %d; expected MXC_PROFILER_STOP (0), "
                      "MXC_PROFILER_RUN (1) or MXC_PROFILER_PAUSE (2)",
                      state);
  pthread_mutex_lock(&g_ctl);
  /* A run that follows a stop is a new session: earlier events go. */
  if (state == MXC_PROFILER_RUN && g_state == MXC_PROFILER_STOP) {
    mxc__prof_clear();
    g_origin = mxc__prof_now();
  }
  g_state = state;
  apply_mask_locked();
  pthread_mutex_unlock(&g_ctl);
  return MXC_OK;
}

int mxc__prof_state(void) {
  pthread_mutex_lock(&g_ctl);
  int s = g_state;
  pthread_mutex_unlock(&g_ctl);
  return s;
}

/* ---- output ---------------------------------------------------------------- */

int mxc__prof_trace(char **out) {
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  mxc__prof_write_trace(&b, mxc__prof_origin());
  return mxc__sbuf_finish(&b, "profiler trace", out);
}

int mxc__prof_stats(int json, int reset, char **out) {
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  int rc = mxc__prof_write_stats(&b, json);
  if (rc != MXC_OK) {
    mxc__sbuf_free(&b);
    return rc;
  }
  rc = mxc__sbuf_finish(&b, "profiler statistics", out);
  if (rc == MXC_OK && reset) mxc__prof_clear();
  return rc;
}

int mxc__prof_dump(int finished) {
  char path[PATH_MAX_LEN];
  pthread_mutex_lock(&g_ctl);
  memcpy(path, g_filename, sizeof path);
  pthread_mutex_unlock(&g_ctl);
  if (finished) MXC_FORWARD_IF_ERROR(mxc__prof_set_state(MXC_PROFILER_PAUSE));
  char *text = NULL;
  MXC_FORWARD_IF_ERROR(mxc__prof_trace(&text));
  int rc = mxc__file_replace_text(path, text);
  mxc__free(text);
  if (rc == MXC_OK && finished) {
    pthread_mutex_lock(&g_ctl);
    g_state = MXC_PROFILER_STOP;
    apply_mask_locked();
    mxc__prof_clear();
    pthread_mutex_unlock(&g_ctl);
  }
  return rc;
}

/* ---- user ranges -------------------------------------------------------------- */

#define RANGE_DEPTH 16

static _Thread_local struct {
  int depth;
  int64_t t0[RANGE_DEPTH];
  char name[RANGE_DEPTH][MXC__PROF_NAME_MAX];
} tls_ranges;

int mxc__prof_range_begin(const char *name) {
  int d = tls_ranges.depth;
  MXC_RETURN_ERROR_IF(d >= RANGE_DEPTH, MXC_ERR_INVALID_ARGUMENT,
                      "profiler range '%s': %d ranges are open on this "
                      "thread already; at most %d may nest (end one first)",
                      name, d, RANGE_DEPTH);
  copy_trunc(tls_ranges.name[d], MXC__PROF_NAME_MAX, name);
  tls_ranges.t0[d] = mxc__prof_now();
  tls_ranges.depth = d + 1;
  return MXC_OK;
}

int mxc__prof_range_end(void) {
  int d = tls_ranges.depth;
  MXC_RETURN_ERROR_IF(d == 0, MXC_ERR_INVALID_ARGUMENT,
                      "profiler range end: no range is open on this thread "
                      "(ranges begin and end on the same thread)");
  tls_ranges.depth = --d;
  if (mxc__prof_on(MXC__PROF_USER)) {
    mxc__prof_span(MXC__PROF_USER, tls_ranges.name[d], tls_ranges.t0[d], NULL,
                   NULL);
  }
  return MXC_OK;
}

void mxc__prof_user_mark(const char *name) {
  if (mxc__prof_on(MXC__PROF_USER)) mxc__prof_instant(MXC__PROF_USER, name);
}

void mxc__prof_user_counter(const char *name, int64_t value) {
  if (mxc__prof_on(MXC__PROF_USER)) {
    mxc__prof_counter(MXC__PROF_USER, name, value, 0, NULL);
  }
}

/* ---- MXC_PROFILER_AUTOSTART ------------------------------------------------------ */

static void autostart_dump(void) {
  if (mxc__prof_dump(1) != MXC_OK) {
    /* At exit there is no caller to return the failure to. */
    fprintf(stderr, "mxc: MXC_PROFILER_AUTOSTART: writing the profile "
                    "failed: %s\n",
            mxc__error_msg());
  }
}

/* Profiles a whole program without touching its code: with
 * MXC_PROFILER_AUTOSTART=1 the profiler runs from library load and the
 * trace goes to MXC_PROFILER_FILENAME (default profile.json) at exit. */
__attribute__((constructor)) static void autostart(void) {
  const char *on = getenv("MXC_PROFILER_AUTOSTART");
  if (!on || strcmp(on, "1") != 0) return;
  const char *file = getenv("MXC_PROFILER_FILENAME");
  if (file && set_filename(file) != MXC_OK) {
    fprintf(stderr, "mxc: MXC_PROFILER_FILENAME: %s\n", mxc__error_msg());
    return;
  }
  if (mxc__prof_set_state(MXC_PROFILER_RUN) == MXC_OK) atexit(autostart_dump);
}
