/* Aggregate statistics over the recorded events: per span name (within
 * its category) calls and total / min / max / mean time, with the bytes
 * allocated while that operator was being invoked; per counter its
 * samples, maximum and last value; allocations per operator charged.
 * Written as a readable table or as JSON. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/profiler/profiler.h"

enum { ROW_SPAN = 0, ROW_COUNTER = 1, ROW_ALLOC = 2 };

typedef struct row {
  int kind, cat;
  char name[MXC__PROF_NAME_MAX];
  int64_t n;          /* calls, samples or allocations */
  int64_t total;      /* ns (spans) or bytes (allocations) */
  int64_t min, max;   /* ns (spans) or values (counters) */
  int64_t last, last_ts;
} row;

/* Rows and an open-addressing index over them (slots hold index + 1). */
typedef struct table {
  row *rows;
  int n, cap;
  int *slots;
  int n_slots; /* a power of two, at least twice n */
  int64_t events;
  int oom;
} table;

static uint32_t hash_key(int kind, int cat, const char *name) {
  uint32_t h = 2166136261u ^ (uint32_t)(kind * 31 + cat);
  for (const unsigned char *p = (const unsigned char *)name; *p; ++p) {
    h = (h ^ *p) * 16777619u;
  }
  return h;
}

static int slot_of(const table *t, int kind, int cat, const char *name) {
  uint32_t mask = (uint32_t)t->n_slots - 1;
  for (uint32_t i = hash_key(kind, cat, name) & mask;; i = (i + 1) & mask) {
    int k = t->slots[i];
    if (k == 0) return (int)i;
    const row *r = &t->rows[k - 1];
    if (r->kind == kind && r->cat == cat && !strcmp(r->name, name)) {
      return (int)i;
    }
  }
}

/* Doubles the rows and the index; 0 on OOM. */
static int grow(table *t) {
  int cap = t->cap ? t->cap * 2 : 64;
  row *rows = mxc__realloc(t->rows, sizeof *rows * (size_t)cap);
  if (!rows) return 0;
  t->rows = rows;
  t->cap = cap;
  int *slots = mxc__calloc((size_t)cap * 2, sizeof *slots);
  if (!slots) return 0;
  mxc__free(t->slots);
  t->slots = slots;
  t->n_slots = cap * 2;
  for (int k = 0; k < t->n; ++k) {
    const row *r = &t->rows[k];
    t->slots[slot_of(t, r->kind, r->cat, r->name)] = k + 1;
  }
  return 1;
}

/* The row for the key, made on first use; NULL on OOM. */
static row *row_get(table *t, int kind, int cat, const char *name) {
  if (t->n_slots) {
    int k = t->slots[slot_of(t, kind, cat, name)];
    if (k) return &t->rows[k - 1];
  }
  if (t->n == t->cap && !grow(t)) return NULL;
  row *r = &t->rows[t->n];
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->cat = cat;
  memcpy(r->name, name, strlen(name) + 1);
  r->min = INT64_MAX;
  r->max = INT64_MIN;
  t->slots[slot_of(t, kind, cat, name)] = ++t->n;
  return r;
}

static void add_sample(row *r, int64_t v, int64_t ts) {
  r->n++;
  r->total += v;
  if (v < r->min) r->min = v;
  if (v > r->max) r->max = v;
  if (r->n == 1 || ts >= r->last_ts) {
    r->last = v;
    r->last_ts = ts;
  }
}

/* The operator an allocation was charged to ("" when none). */
static const char *charged_to(const mxc__prof_event *ev) {
  const char *sep = strchr(ev->detail, '\x1f');
  return sep ? sep + 1 : "";
}

static void add_event(void *ctx, int tid, const char *track,
                      const mxc__prof_event *ev) {
  (void)tid;
  (void)track;
  table *t = ctx;
  t->events++;
  if (t->oom || ev->ph == 'i') return;
  int kind = ev->ph == 'X' ? ROW_SPAN : ROW_COUNTER;
  row *r = row_get(t, kind, ev->cat, ev->name);
  if (r) add_sample(r, ev->value, ev->ts);
  if (r && ev->bytes > 0) {
    r = row_get(t, ROW_ALLOC, 0, charged_to(ev));
    if (r) add_sample(r, ev->bytes, ev->ts);
  }
  if (!r) t->oom = 1;
}

static int64_t alloc_bytes(table *t, const char *name) {
  if (!t->n_slots) return 0;
  int k = t->slots[slot_of(t, ROW_ALLOC, 0, name)];
  return k ? t->rows[k - 1].total : 0;
}

/* Kind, category, then the largest total first, then by name. */
static int row_cmp(const void *pa, const void *pb) {
  const row *a = pa, *b = pb;
  if (a->kind != b->kind) return a->kind - b->kind;
  if (a->cat != b->cat) return a->cat - b->cat;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* ---- the table ------------------------------------------------------------- */

static double ms(int64_t ns) { return (double)ns / 1e6; }

static void text_section(mxc__sbuf *b, const row *r, const row *prev) {
  if (prev && prev->kind == r->kind && prev->cat == r->cat) return;
  if (r->kind == ROW_SPAN) {
    mxc__sbuf_printf(b, "\n%-40s %8s %12s %10s %10s %10s %14s\n",
                     mxc__prof_cat_name(1u << r->cat), "Calls", "Total (ms)",
                     "Min (ms)", "Max (ms)", "Mean (ms)", "Alloc (bytes)");
  } else if (r->kind == ROW_COUNTER) {
    mxc__sbuf_printf(b, "\n%-40s %8s %14s %14s\n", "counters", "Samples",
                     "Max", "Last");
  } else {
    mxc__sbuf_printf(b, "\n%-40s %8s %14s\n", "allocations by operator",
                     "Count", "Bytes");
  }
}

static void text_row(mxc__sbuf *b, table *t, const row *r) {
  const char *name = r->name[0] ? r->name : "(outside operators)";
  if (r->kind == ROW_SPAN) {
    mxc__sbuf_printf(b, "  %-38s %8" PRId64 " %12.3f %10.3f %10.3f %10.3f "
                        "%14" PRId64 "\n",
                     name, r->n, ms(r->total), ms(r->min), ms(r->max),
                     ms(r->total) / (double)r->n, alloc_bytes(t, r->name));
  } else if (r->kind == ROW_COUNTER) {
    mxc__sbuf_printf(b, "  %-38s %8" PRId64 " %14" PRId64 " %14" PRId64 "\n",
                     name, r->n, r->max, r->last);
  } else {
    mxc__sbuf_printf(b, "  %-38s %8" PRId64 " %14" PRId64 "\n", name, r->n,
                     r->total);
  }
}

static void write_text(mxc__sbuf *b, table *t) {
  mxc__sbuf_printf(b, "Profile statistics: %" PRId64 " events (%" PRId64
                      " dropped)\n",
                   t->events, mxc__prof_dropped());
  for (int k = 0; k < t->n; ++k) {
    text_section(b, &t->rows[k], k ? &t->rows[k - 1] : NULL);
    text_row(b, t, &t->rows[k]);
  }
}

/* ---- JSON ---------------------------------------------------------------------- */

/* Names come from operators and callers: escape what JSON requires. */
static void json_str(mxc__sbuf *b, const char *s) {
  mxc__sbuf_add(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    if (*p == '"' || *p == '\\') {
      mxc__sbuf_printf(b, "\\%c", *p);
    } else if (*p < 0x20 || *p >= 0x80) {
      /* Non-ASCII bytes as code points U+0080..U+00FF: valid JSON even
       * when truncation cut a character. */
      mxc__sbuf_printf(b, "\\u%04x", *p);
    } else {
      mxc__sbuf_addn(b, (const char *)p, 1);
    }
  }
  mxc__sbuf_add(b, "\"");
}

static const char *const k_groups[] = {"spans", "counters", "allocations"};

static void json_row(mxc__sbuf *b, table *t, const row *r) {
  json_str(b, r->name);
  if (r->kind == ROW_SPAN) {
    mxc__sbuf_printf(b, ":{\"calls\":%" PRId64 ",\"total_ns\":%" PRId64
                        ",\"min_ns\":%" PRId64 ",\"max_ns\":%" PRId64
                        ",\"mean_ns\":%.1f,\"alloc_bytes\":%" PRId64 "}",
                     r->n, r->total, r->min, r->max,
                     (double)r->total / (double)r->n, alloc_bytes(t, r->name));
  } else if (r->kind == ROW_COUNTER) {
    mxc__sbuf_printf(b, ":{\"samples\":%" PRId64 ",\"max\":%" PRId64
                        ",\"last\":%" PRId64 "}",
                     r->n, r->max, r->last);
  } else {
    mxc__sbuf_printf(b, ":{\"count\":%" PRId64 ",\"bytes\":%" PRId64 "}",
                     r->n, r->total);
  }
}

/* "group":{...}; spans are further grouped by category. */
static void json_group(mxc__sbuf *b, table *t, int kind) {
  mxc__sbuf_printf(b, ",\"%s\":{", k_groups[kind]);
  int cat = -1, first = 1;
  for (int k = 0; k < t->n; ++k) {
    const row *r = &t->rows[k];
    if (r->kind != kind) continue;
    if (kind == ROW_SPAN && r->cat != cat) {
      mxc__sbuf_printf(b, "%s\"%s\":{", cat < 0 ? "" : "},",
                       mxc__prof_cat_name(1u << r->cat));
      cat = r->cat;
      first = 1;
    }
    if (!first) mxc__sbuf_add(b, ",");
    json_row(b, t, r);
    first = 0;
  }
  mxc__sbuf_add(b, cat >= 0 ? "}}" : "}");
}

static void write_json(mxc__sbuf *b, table *t) {
  mxc__sbuf_printf(b, "{\"events\":%" PRId64 ",\"dropped\":%" PRId64,
                   t->events, mxc__prof_dropped());
  for (int kind = ROW_SPAN; kind <= ROW_ALLOC; ++kind) json_group(b, t, kind);
  mxc__sbuf_add(b, "}\n");
}

int mxc__prof_write_stats(mxc__sbuf *b, int json) {
  table t;
  memset(&t, 0, sizeof t);
  mxc__prof_visit(NULL, add_event, &t);
  int rc = MXC_OK;
  if (t.oom) {
    rc = mxc__error_set(MXC_ERR_OOM,
                        "profiler statistics: out of memory for %d rows",
                        t.n);
  } else {
    /* Sorting moves rows: alloc_bytes looks them up again, so rebuild
     * the index after. */
    /* No rows: t.rows is NULL, and qsort's pointer must not be. */
    if (t.n > 0) qsort(t.rows, (size_t)t.n, sizeof *t.rows, row_cmp);
    for (int i = 0; i < t.n_slots; ++i) t.slots[i] = 0;
    for (int k = 0; k < t.n; ++k) {
      const row *r = &t.rows[k];
      t.slots[slot_of(&t, r->kind, r->cat, r->name)] = k + 1;
    }
    if (json) {
      write_json(b, &t);
    } else {
      write_text(b, &t);
    }
  }
  mxc__free(t.rows);
  mxc__free(t.slots);
  return rc;
}
