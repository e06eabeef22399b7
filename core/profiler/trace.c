/* The Chrome trace event format (the JSON object form): what
 * chrome://tracing and Perfetto (ui.perfetto.dev) open.
 *
 * One process; one track (tid) per recording thread, named by a
 * "thread_name" metadata event. Spans are complete events ("X", ts and
 * dur in microseconds with nanosecond digits), so a track's spans nest
 * exactly as the calls did; markers are instant events ("i", thread
 * scope); counters ("C") carry their value in args. */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "core/profiler/profiler.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int utf8_len(const unsigned char *s) {
  int n = s[0] < 0x80 ? 1 : s[0] >= 0xF0 && s[0] < 0xF5 ? 4
                        : s[0] >= 0xE0                  ? 3
                        : s[0] >= 0xC2                  ? 2
                                                        : 0;
  for (int i = 1; i < n; ++i) {
    if ((s[i] & 0xC0) != 0x80) return 0;
  }
  return n;
}

/* A JSON string. Names are truncated byte-wise when recorded, which may
 * cut a character: invalid UTF-8 becomes '?'. */
static void add_str(mxc__sbuf *b, const char *s) {
  mxc__sbuf_add(b, "\"");
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int n = utf8_len(p);
    if (n == 0) {
      mxc__sbuf_add(b, "?");
      p++;
    } else if (*p == '"' || *p == '\\') {
      mxc__sbuf_printf(b, "\\%c", *p++);
    } else if (*p < 0x20) {
      mxc__sbuf_printf(b, "\\u%04x", *p++);
    } else {
      mxc__sbuf_addn(b, (const char *)p, (size_t)n);
      p += n;
    }
  }
  mxc__sbuf_add(b, "\"");
}

/* Nanoseconds as microseconds with three decimals, exactly. */
static void add_us(mxc__sbuf *b, int64_t ns) {
  const char *sign = ns < 0 ? "-" : "";
  uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  mxc__sbuf_printf(b, "%s%" PRIu64 ".%03u", sign, a / 1000,
                   (unsigned)(a % 1000));
}

/* The detail pairs as JSON members (no braces). */
static void add_detail(mxc__sbuf *b, const char *detail) {
  char tmp[MXC__PROF_DETAIL_MAX];
  memcpy(tmp, detail, sizeof tmp);
  tmp[sizeof tmp - 1] = '\0';
  char *save = NULL;
  int first = 1;
  for (char *pair = strtok_r(tmp, "\x1e", &save); pair;
       pair = strtok_r(NULL, "\x1e", &save)) {
    char *sep = strchr(pair, '\x1f');
    if (!sep) continue; /* cut short by truncation */
    *sep = '\0';
    mxc__sbuf_add(b, first ? "" : ",");
    add_str(b, pair);
    mxc__sbuf_add(b, ":");
    add_str(b, sep + 1);
    first = 0;
  }
}

typedef struct trace_ctx {
  mxc__sbuf *b;
  int64_t t0;
  long pid;
} trace_ctx;

static void add_head(trace_ctx *c, int tid, const mxc__prof_event *ev) {
  mxc__sbuf *b = c->b;
  mxc__sbuf_add(b, ",\n{\"name\":");
  add_str(b, ev->name);
  mxc__sbuf_printf(b, ",\"cat\":\"%s\",\"ph\":\"%c\",\"pid\":%ld,\"tid\":%d,"
                      "\"ts\":",
                   mxc__prof_cat_name(1u << ev->cat), ev->ph, c->pid, tid);
  add_us(b, ev->ts - c->t0);
}

static void add_event(void *ctx, int tid, const char *track,
                      const mxc__prof_event *ev) {
  (void)track;
  trace_ctx *c = ctx;
  mxc__sbuf *b = c->b;
  add_head(c, tid, ev);
  if (ev->ph == 'X') {
    mxc__sbuf_add(b, ",\"dur\":");
    add_us(b, ev->value);
  } else if (ev->ph == 'i') {
    mxc__sbuf_add(b, ",\"s\":\"t\"");
  }
  mxc__sbuf_add(b, ",\"args\":{");
  if (ev->ph == 'C') {
    mxc__sbuf_printf(b, "\"%s\":%" PRId64,
                     ev->cat == __builtin_ctz(MXC__PROF_MEMORY)
                         ? "bytes_in_use"
                         : "value",
                     ev->value);
  } else {
    add_detail(b, ev->detail);
  }
  mxc__sbuf_add(b, "}}");
}

static void add_track(void *ctx, int tid, const char *name) {
  trace_ctx *c = ctx;
  mxc__sbuf_printf(c->b,
                   ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,"
                   "\"tid\":%d,\"args\":{\"name\":",
                   c->pid, tid);
  add_str(c->b, name);
  mxc__sbuf_printf(c->b,
                   "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\","
                   "\"pid\":%ld,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                   c->pid, tid, tid);
}

void mxc__prof_write_trace(mxc__sbuf *b, int64_t t0) {
  trace_ctx c = {b, t0, (long)getpid()};
  mxc__sbuf_printf(b,
                   "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":"
                   "\"M\",\"pid\":%ld,\"tid\":0,\"args\":{\"name\":\"mxc\"}}",
                   c.pid);
  mxc__prof_visit(add_track, add_event, &c);
  mxc__sbuf_printf(b,
                   "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{"
                   "\"dropped_events\":%" PRId64 "}}\n",
                   mxc__prof_dropped());
}
