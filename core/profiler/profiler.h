/* The profiler: timed events from every layer, written as a Chrome trace
 * (chrome://tracing, Perfetto) or summed per operator.
 *
 * Recording. Each thread appends events to its own buffer, registered
 * once (under a lock) on the thread's first event; an append takes no
 * lock: the writer fills the slot, then publishes the new count with a
 * release store, and readers (dump, stats) read up to the count they
 * load with acquire. Buffers grow by linked blocks, so a reader never
 * sees a slot move. A dump may run while other threads record.
 *
 * Hooks. Every layer asks mxc__prof_on(categories) before doing any
 * profiling work: one relaxed load of a global mask and one branch,
 * predicted not taken. The mask is 0 unless the profiler runs, so a
 * build with the profiler compiled in but off pays that branch only.
 *
 * Names and details are copied into the event (truncated to fit), so
 * nothing recorded needs to outlive the call that recorded it. */
#ifndef MXC_CORE_PROFILER_PROFILER_H_
#define MXC_CORE_PROFILER_PROFILER_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "core/base/strbuf.h"

/* Categories: each is a bit of the mask and a "cat" of the trace. */
enum {
  MXC__PROF_OPERATOR = 1u << 0, /* imperative operator runs */
  MXC__PROF_EXECUTOR = 1u << 1, /* executor (symbolic) node runs */
  MXC__PROF_ENGINE = 1u << 2,   /* every function the engine runs */
  MXC__PROF_WAIT = 1u << 3,     /* threads blocked in engine waits */
  MXC__PROF_COPY = 1u << 4,     /* array copies */
  MXC__PROF_MEMORY = 1u << 5,   /* storage allocations (counters) */
  MXC__PROF_IO = 1u << 6,       /* data iterator batches */
  MXC__PROF_USER = 1u << 7,     /* ranges, markers, counters of the user */
  MXC__PROF_NUM_CATS = 8
};

/* The categories recording now (0 unless running). Read it through
 * mxc__prof_on only. */
extern atomic_uint mxc__prof_mask;

static inline int mxc__prof_on(unsigned cats) {
  return MXC__UNLIKELY(
      (atomic_load_explicit(&mxc__prof_mask, memory_order_relaxed) & cats) !=
      0);
}

/* The category's name in the trace ("operator", ...); cat is one bit. */
const char *mxc__prof_cat_name(unsigned cat);

/* Nanoseconds on CLOCK_MONOTONIC. */
int64_t mxc__prof_now(void);

/* ---- events ----------------------------------------------------------- */

#define MXC__PROF_NAME_MAX 48
#define MXC__PROF_DETAIL_MAX 160

/* One event. Detail holds "key\x1fvalue" pairs separated by "\x1e"
 * (mxc__prof_detail_add), written as the event's args. */
typedef struct mxc__prof_event {
  int64_t ts;    /* ns: start (spans) or time (instants, counters) */
  int64_t value; /* X: duration in ns; C: the counter's value */
  int64_t bytes; /* memory counters: bytes this change allocated (< 0 freed) */
  unsigned char cat; /* one MXC__PROF_* bit, as its index */
  char ph;           /* 'X' span, 'i' instant, 'C' counter */
  char name[MXC__PROF_NAME_MAX];
  char detail[MXC__PROF_DETAIL_MAX];
} mxc__prof_event;

/* Appends "key=value" to ev's detail (truncated when full). */
void mxc__prof_detail_add(mxc__prof_event *ev, const char *key,
                          const char *value);

/* Fills ev's common fields; name is copied (truncated). */
void mxc__prof_event_init(mxc__prof_event *ev, unsigned cat, char ph,
                          const char *name, int64_t ts);

/* Records ev in the calling thread's buffer. Returns 0 when it was
 * dropped: out of memory (counted, reported in the dump). */
int mxc__prof_record(const mxc__prof_event *ev);

/* Records a span [t0, now) of category cat named name, with optional
 * detail pair (key may be NULL). */
void mxc__prof_span(unsigned cat, const char *name, int64_t t0,
                    const char *key, const char *value);

/* Records an instant event. */
void mxc__prof_instant(unsigned cat, const char *name);

/* Records counter `name` at value; bytes: see mxc__prof_event; attrib:
 * what the change is charged to in the statistics (NULL: nothing). */
void mxc__prof_counter(unsigned cat, const char *name, int64_t value,
                       int64_t bytes, const char *attrib);

/* ---- the calling thread ----------------------------------------------- */

/* Names the calling thread's track ("engine cpu worker 2"); copied. Cheap
 * and allocation-free: the name is kept until the thread's buffer is
 * made, so threads that never record cost nothing. */
void mxc__prof_thread_name(const char *name);

/* What allocations on this thread are charged to (the operator being
 * invoked), or NULL. Not copied: valid until reset. */
void mxc__prof_set_attrib(const char *label);
const char *mxc__prof_attrib(void);

/* The executor node whose operator the calling thread is invoking, or
 * NULL (imperative calls). Not copied: valid until reset. */
void mxc__prof_set_node(const char *node);
const char *mxc__prof_node(void);

/* ---- control (the C API forwards here) --------------------------------- */

/* States: MXC_PROFILER_STOP, _RUN, _PAUSE (mxc.h). */

int mxc__prof_set_config(const char *key, const char *value);
int mxc__prof_set_state(int state);
int mxc__prof_state(void);

/* Writes the trace to the configured file (atomically replaced).
 * finished: also stops the profiler and discards the events. */
int mxc__prof_dump(int finished);

/* *out = the trace JSON (mxc__free it). */
int mxc__prof_trace(char **out);

/* *out = per-name statistics, as a table (json == 0) or JSON (mxc__free
 * it). reset: discard the events afterwards. */
int mxc__prof_stats(int json, int reset, char **out);

/* User ranges: begin pushes onto the calling thread's stack (always, so
 * that pairs stay balanced whatever the state); end pops the innermost
 * and records it as a span if user events are on. */
int mxc__prof_range_begin(const char *name);
int mxc__prof_range_end(void);

/* A marker and a counter value of the caller, if user events are on. */
void mxc__prof_user_mark(const char *name);
void mxc__prof_user_counter(const char *name, int64_t value);

/* ---- internal: buffers (buffer.c), for the writers ----------------------- */

typedef struct mxc__prof_buf mxc__prof_buf;

/* Under the registry lock (one snapshot): calls track(ctx, tid, name)
 * once per registered buffer (track may be NULL), then fn on every
 * unread event of every buffer, buffer by buffer. */
typedef void (*mxc__prof_track_fn)(void *ctx, int tid, const char *track);
typedef void (*mxc__prof_visit_fn)(void *ctx, int tid, const char *track,
                                   const mxc__prof_event *ev);
void mxc__prof_visit(mxc__prof_track_fn track, mxc__prof_visit_fn fn,
                     void *ctx);
/* Marks everything recorded so far as read and frees the blocks (and the
 * buffers of threads that exited) that no thread writes any more. */
void mxc__prof_clear(void);
/* Events dropped for lack of memory since the last clear. */
int64_t mxc__prof_dropped(void);

/* ---- internal: writers --------------------------------------------------- */

/* Appends the trace JSON to b (trace.c). */
void mxc__prof_write_trace(mxc__sbuf *b, int64_t t0);
/* Appends the statistics (stats.c). */
int mxc__prof_write_stats(mxc__sbuf *b, int json);
/* The time origin of the trace (the first start). */
int64_t mxc__prof_origin(void);

#endif /* MXC_CORE_PROFILER_PROFILER_H_ */
