/* "dist_sync": the MPI plug-in, loaded once, and the communication
 * thread (docs/kvstore.md).
 *
 * One thread per process calls MPI (MPI_THREAD_FUNNELED): it initialises
 * MPI, runs every collective and finalises MPI at exit. Stores push their
 * collectives as asynchronous engine work: when the work's arrays are
 * ready, an engine worker sums the process's values into the collective's
 * buffer and queues it; the thread runs it and completes the work.
 *
 * Order: MPI needs every rank to start the same collectives in the same
 * order, while the engine makes work ready in an order that varies
 * between ranks. So each collective gets a sequence number when the
 * caller pushes it (under one lock, in the caller's program order, which
 * is the same on every rank), and the thread runs them strictly in that
 * order, holding back those that became ready early. Fusion is decided at
 * push time too (the keys of one push call, in their order), never by
 * what happens to be ready.
 *
 * Watchdog: a collective that has not finished after MXC_KVSTORE_TIMEOUT
 * seconds (default 300) means a worker died or stopped calling the store;
 * the process then logs which collective waited, and which ranks it
 * waits for as far as it can know, and aborts the job
 * (MPI_Abort), so that no job hangs forever. A worker that exits or
 * crashes makes mpirun end the others at once. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>
#include <stddef.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/plugin.h"
#include "core/base/log.h"
#include "core/kvstore/internal.h"
#include "core/kvstore/mpi_plugin.h"

#define STATUS_MAX 768
#define WHY_MAX 512

/* A collective, queued for the thread. */
typedef struct dist_req dist_req;
struct dist_req {
  uint64_t seq;
  void (*run)(dist_req *r); /* on the thread */
  const char *name;         /* for the watchdog's message */
  dist_req *next;
};

static struct {
  const mxc__mpi_plugin *p; /* NULL: dist_sync cannot be used */
  int rank, size;
  char status[STATUS_MAX]; /* why not */
  pthread_t thread;
  pthread_mutex_t lock; /* queue, next, stop */
  pthread_cond_t cv;
  dist_req *queue; /* sorted by seq */
  uint64_t next;   /* the seq the thread runs next */
  int stop;        /* at exit: stop now */
  int stores;      /* live dist_sync stores */
  int ended;       /* the thread was stopped and MPI finalized */
  pthread_mutex_t seq_lock; /* issued, and pushes that take a number */
  uint64_t issued;
  /* Watchdog: when the running collective started (0: none), and its
   * name (copied: the request is freed once it ran). */
  struct timespec started;
  uint64_t running;
  char running_name[200];
  double timeout_s;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .cv = PTHREAD_COND_INITIALIZER,
       .seq_lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* ---- loading ---- */

static const char *launcher_env(void) {
  static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                                      "PMI_RANK", "PMI_SIZE"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if (getenv(names[i])) return names[i];
  }
  return NULL;
}

/* dlsym returns an object pointer; POSIX guarantees the conversion to
 * the entry's function type. */
static const void *call_entry(void *sym) {
  mxc__mpi_plugin_entry_fn entry;
  *(void **)&entry = sym;
  return entry();
}

/* Global symbols: Open MPI's own components dlopen libmpi's symbols. A
 * loaded plug-in stays: MPI cannot be initialised twice. */
static const mxc__plugin_spec k_spec = {
    .library = "the MPI plug-in",
    .kind = "MPI",
    .package = "libmxc-mpi1",
    .env = "MXC_MPI_PLUGIN",
    .file = MXC__MPI_PLUGIN_FILE,
    .entry = MXC__MPI_PLUGIN_ENTRY,
    .abi = MXC__MPI_PLUGIN_ABI,
    .size = sizeof(mxc__mpi_plugin),
    .version_offset = offsetof(mxc__mpi_plugin, mxc_version),
    .version = MXC__MPI_MXC_VERSION,
    .dl_flags = RTLD_GLOBAL,
    .call_entry = call_entry,
};

/* The plug-in's table, or NULL with g.status saying why. */
static const mxc__mpi_plugin *open_library(void) {
  return mxc__plugin_open(&k_spec, mxc__plugin_path(&k_spec), g.status,
                          sizeof g.status);
}

/* ---- the thread ---- */

/* The next request in seq order, or NULL when stopping. */
static dist_req *next_request(void) {
  pthread_mutex_lock(&g.lock);
  while (!g.stop && !(g.queue && g.queue->seq == g.next)) {
    pthread_cond_wait(&g.cv, &g.lock);
  }
  dist_req *r = NULL;
  if (g.queue && g.queue->seq == g.next) {
    r = g.queue;
    g.queue = r->next;
    g.running = r->seq + 1;
    snprintf(g.running_name, sizeof g.running_name, "%s",
             r->name ? r->name : "kvstore collective");
    clock_gettime(CLOCK_MONOTONIC, &g.started);
  }
  pthread_mutex_unlock(&g.lock);
  return r;
}

static void finished_request(void) {
  pthread_mutex_lock(&g.lock);
  g.running = 0;
  g.next++;
  pthread_mutex_unlock(&g.lock);
}

static double seconds_since(const struct timespec *t) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t->tv_sec) +
         (double)(now.tv_nsec - t->tv_nsec) * 1e-9;
}

/* Which ranks may be at fault, as far as a waiting rank can tell: a
 * collective ends only once every rank joined it, and a rank blocked in
 * MPI cannot ask the others where they are. With 2 ranks it is the other
 * one; with more, any of the others (a rank that is itself stuck in
 * another collective prints its own line with another number). */
static void suspects(char *buf, size_t len) {
  if (g.size == 2) {
    snprintf(buf, len, "rank %d", 1 - g.rank);
  } else {
    snprintf(buf, len, "at least one of the other %d ranks (not rank %d)",
             g.size - 1, g.rank);
  }
}

static void timed_out(uint64_t seq, const char *name, double waited) {
  char who[96];
  suspects(who, sizeof who);
  fprintf(stderr,
          "mxc kvstore: rank %d of %d: collective #%" PRIu64 " (%s) has "
          "waited %.0f s (MXC_KVSTORE_TIMEOUT=%.0f): %s has not joined "
          "it: it died, failed, hangs, stopped calling the kvstore, or "
          "waits in another collective (its own watchdog then names that "
          "one); rank %d is alive and waiting; aborting the job\n",
          g.rank, g.size, seq, name, waited, g.timeout_s, who, g.rank);
  g.p->abort(3);
  _exit(3);
}

/* Aborts the job when one collective runs past the timeout. */
static void *watchdog(void *arg) {
  (void)arg;
  for (;;) {
    sleep(1);
    char name[sizeof g.running_name];
    pthread_mutex_lock(&g.lock);
    uint64_t running = g.running;
    double waited = running ? seconds_since(&g.started) : 0;
    int stop = g.stop;
    memcpy(name, g.running_name, sizeof name);
    pthread_mutex_unlock(&g.lock);
    if (stop) return NULL;
    if (running && waited > g.timeout_s) timed_out(running - 1, name, waited);
  }
}

/* Runs requests until the stop request (run NULL, queued when the last
 * store is freed) or the exit flag, then finalizes MPI. */
static void *comm_main(void *arg) {
  (void)arg;
  for (dist_req *r; (r = next_request()) != NULL && r->run;) {
    r->run(r);
    finished_request();
  }
  /* The communicator goes before MPI does; at exit (stop) without
   * waiting for peers that may be gone. */
  pthread_mutex_lock(&g.lock);
  int at_exit = g.stop;
  pthread_mutex_unlock(&g.lock);
  mxc__kv_nccl_end(at_exit);
  g.p->finalize();
  return NULL;
}

/* Started once: MPI is initialised on the thread itself (FUNNELED). */
typedef struct start_args {
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int done, rc;
  char why[WHY_MAX];
} start_args;

static void *comm_start(void *arg) {
  start_args *a = arg;
  int rank = 0, size = 0;
  int rc = g.p->init(&rank, &size, a->why, sizeof a->why);
  g.rank = rank;
  g.size = size;
  pthread_mutex_lock(&a->lock);
  a->rc = rc;
  a->done = 1;
  pthread_cond_signal(&a->cv);
  pthread_mutex_unlock(&a->lock);
  return rc == MXC_OK ? comm_main(NULL) : NULL;
}

/* 1 for the one caller that ends the thread (marks it ended). */
static int take_end(void) {
  pthread_mutex_lock(&g.lock);
  int mine = !g.ended;
  g.ended = 1;
  pthread_mutex_unlock(&g.lock);
  return mine;
}

/* At exit, with stores still alive: stop at once (pending collectives
 * are abandoned; a program waits for its work before exiting). */
static void shutdown_at_exit(void) {
  if (!take_end()) return;
  pthread_mutex_lock(&g.lock);
  g.stop = 1;
  pthread_cond_broadcast(&g.cv);
  pthread_mutex_unlock(&g.lock);
  pthread_join(g.thread, NULL);
}

static double timeout_from_env(void) {
  const char *s = getenv("MXC_KVSTORE_TIMEOUT");
  char *end = NULL;
  double t = s ? strtod(s, &end) : 0;
  return s && end != s && t > 0 ? t : 300.0;
}

static int start_thread(void) {
  start_args a = {.lock = PTHREAD_MUTEX_INITIALIZER,
                  .cv = PTHREAD_COND_INITIALIZER};
  if (pthread_create(&g.thread, NULL, comm_start, &a) != 0) {
    snprintf(g.status, sizeof g.status, "the communication thread could "
             "not be started");
    return 0;
  }
  pthread_mutex_lock(&a.lock);
  while (!a.done) pthread_cond_wait(&a.cv, &a.lock);
  pthread_mutex_unlock(&a.lock);
  if (a.rc != MXC_OK) {
    pthread_join(g.thread, NULL);
    snprintf(g.status, sizeof g.status, "MPI could not start: %s", a.why);
    return 0;
  }
  return 1;
}

/* MXC_KVSTORE_FUSION_BYTES: keys of one push, in order and of one dtype,
 * are packed into one collective while their bytes fit (default 16 MiB;
 * 0 turns fusion off). Read once, when the plug-in is loaded. */
static int64_t g_fusion_bytes;

static int64_t fusion_bytes_from_env(void) {
  const char *s = getenv("MXC_KVSTORE_FUSION_BYTES");
  char *end = NULL;
  long long v = s ? strtoll(s, &end, 10) : -1;
  return s && end != s && *end == '\0' && v >= 0 ? (int64_t)v
                                                 : (int64_t)16 << 20;
}


static void load(void) {
  const char *env = launcher_env();
  if (!env) {
    snprintf(g.status, sizeof g.status,
             "this process was not started by an MPI launcher (none of "
             "OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK is set): run it "
             "with mpirun -np N (or srun --mpi=pmix)");
    return;
  }
  const mxc__mpi_plugin *p = open_library();
  if (!p) return;
  g.p = p;
  g.timeout_s = timeout_from_env();
  g_fusion_bytes = fusion_bytes_from_env();
  if (!start_thread()) {
    g.p = NULL;
    return;
  }
  pthread_t dog;
  if (pthread_create(&dog, NULL, watchdog, NULL) == 0) pthread_detach(dog);
  atexit(shutdown_at_exit);
}

int mxc__kv_dist_open(int *rank, int *size) {
  pthread_once(&g_once, load);
  MXC_RETURN_ERROR_IF(!g.p, MXC_ERR_UNSUPPORTED,
                      "type \"dist_sync\" cannot be used: %s", g.status);
  pthread_mutex_lock(&g.lock);
  int ended = g.ended;
  if (!ended) g.stores++;
  pthread_mutex_unlock(&g.lock);
  MXC_RETURN_ERROR_IF(ended, MXC_ERR_UNSUPPORTED,
                      "type \"dist_sync\" cannot be used: MPI was finalized "
                      "when the process's last dist_sync store was freed, "
                      "and MPI starts once per process (keep one store)");
  *rank = g.rank;
  *size = g.size;
  return MXC_OK;
}

static void enqueue(dist_req *r);

/* The last store: the thread runs what was pushed, then finalizes MPI;
 * waits for it (every worker frees its last store, as MPI_Finalize
 * expects of every rank). */
void mxc__kv_dist_close(void) {
  static dist_req stop_req = {
      .name = "MPI_Finalize, as the last dist_sync store was freed"};
  /* run NULL: the stop */
  pthread_mutex_lock(&g.lock);
  int last = --g.stores == 0 && !g.ended;
  pthread_mutex_unlock(&g.lock);
  if (!last || !take_end()) return;
  pthread_mutex_lock(&g.seq_lock);
  stop_req.seq = g.issued++;
  enqueue(&stop_req);
  pthread_mutex_unlock(&g.seq_lock);
  pthread_join(g.thread, NULL);
  /* MPI_Finalize returned: the stop is no collective left waiting, and
   * the watchdog ends (a process may live on long after its store). */
  pthread_mutex_lock(&g.lock);
  g.running = 0;
  g.stop = 1;
  pthread_mutex_unlock(&g.lock);
}

/* Queues r (seq set) in seq order. */
static void enqueue(dist_req *r) {
  pthread_mutex_lock(&g.lock);
  dist_req **p = &g.queue;
  while (*p && (*p)->seq < r->seq) p = &(*p)->next;
  r->next = *p;
  *p = r;
  if (g.queue->seq == g.next) pthread_cond_signal(&g.cv);
  pthread_mutex_unlock(&g.lock);
}

/* ---- collectives over arrays: a bucket ---- */

/* BUCKET_NCCL: one key with one GPU value, summed on the GPUs by NCCL
 * (nccl.c); the sum goes to a GPU array (the pushpull's output, or a
 * temporary) and from there to the stored array in host memory. */
enum { BUCKET_ALLREDUCE, BUCKET_BROADCAST, BUCKET_NCCL };

/* One collective over the arrays of one or more keys. Per key k: its
 * values views[first[k] .. first[k] + n_vals[k]) then its destination
 * views[first[k] + n_vals[k]]. A bucket of one key works in the
 * destination's memory; a fused one in a buffer of its own. */
typedef struct bucket {
  dist_req req; /* first: the thread hands back &req */
  int kind, dtype, n_keys, n_views;
  int64_t total; /* elements */
  mxc__ndarray **views;
  int *first, *n_vals;
  char *has_also; /* key k's group has an also view after its dst */
  const char *src; /* the ring's input: buf, or a key's one value */
  char *buf;
  mxc__ndarray *recv; /* BUCKET_NCCL without a GPU output: the sum */
  mxc__exec *ex;
  char name[200];
} bucket;

static mxc__ndarray *dst_of(const bucket *b, int k) {
  return b->views[b->first[k] + b->n_vals[k]];
}

static mxc__ndarray *also_of(const bucket *b, int k) {
  return b->has_also[k] ? b->views[b->first[k] + b->n_vals[k] + 1] : NULL;
}

static void *also_ptr(const bucket *b, int k) {
  mxc__ndarray *a = also_of(b, k);
  return a ? mxc__ndarray_ptr(a) : NULL;
}

static int fused(const bucket *b) { return b->n_keys > 1; }

static void bucket_free(void *arg) {
  bucket *b = arg;
  if (fused(b)) mxc__free(b->buf); /* NULL once run */
  for (int i = 0; i < b->n_views; ++i) mxc__ndarray_free(b->views[i]);
  if (b->recv) mxc__ndarray_free(b->recv);
  mxc__free(b->views);
  mxc__free(b->first);
  mxc__free(b->n_vals);
  mxc__free(b->has_also);
  mxc__free(b);
}

/* Unpacks a fused buffer into the destinations (and the also outputs). */
static void unpack(bucket *b) {
  size_t off = 0;
  for (int k = 0; k < b->n_keys; ++k) {
    mxc__ndarray *d = dst_of(b, k);
    memcpy(mxc__ndarray_ptr(d), b->buf + off, mxc__ndarray_nbytes(d));
    void *also = also_ptr(b, k);
    if (also) memcpy(also, b->buf + off, mxc__ndarray_nbytes(d));
    off += mxc__ndarray_nbytes(d);
  }
}

/* The NCCL bucket's collective: the value, into recv, then a copy into
 * the key's destination in host memory. */
static int run_nccl(bucket *b, char *why, size_t len) {
  return mxc__kv_nccl_allreduce(b->src, b->buf, b->total, b->dtype,
                                mxc__ndarray_ptr(dst_of(b, 0)), why, len);
}

static void run_bucket(dist_req *r) {
  bucket *b = (bucket *)r;
  char why[WHY_MAX] = "";
  int rc =
      b->kind == BUCKET_NCCL ? run_nccl(b, why, sizeof why)
      : b->kind == BUCKET_BROADCAST
          ? g.p->broadcast(b->buf,
                           b->total * (int64_t)mxc__dtype_size(b->dtype), 0,
                           why, sizeof why)
          : g.p->allreduce(b->src, b->buf, fused(b) ? NULL : also_ptr(b, 0),
                           b->total, b->dtype, why, sizeof why);
  if (rc == MXC_OK && fused(b)) unpack(b);
  if (fused(b)) mxc__free(b->buf);
  b->buf = NULL;
  mxc__exec_complete(b->ex, rc, rc == MXC_OK ? NULL : why);
}

/* Sums n values into region, in order, 64 at a time (the running sum
 * is the first source of the next batch: the same order as one pass). */
static void sum_values(bucket *b, int k, char *region, int64_t count) {
  mxc__ndarray *const *vals = b->views + b->first[k];
  int n = b->n_vals[k];
  const void *srcs[64];
  for (int done = 0, first = 1; done < n; first = 0) {
    int m = 0;
    if (!first) srcs[m++] = region;
    while (m < 64 && done < n) srcs[m++] = mxc__ndarray_ptr(vals[done++]);
    mxc__kv_sum_raw(region, srcs, m, count, b->dtype);
  }
}

/* The process's share: each key's values summed into its region. */
static void sum_locally(bucket *b) {
  size_t off = 0;
  for (int k = 0; k < b->n_keys; ++k) {
    mxc__ndarray *d = dst_of(b, k);
    char *region = fused(b) ? b->buf + off : mxc__ndarray_ptr(d);
    sum_values(b, k, region, mxc__ndarray_size(d));
    off += mxc__ndarray_nbytes(d);
  }
}

/* A lone key with one value (a process with one device, the common
 * case): the ring reads the value itself, and writes the sum into the
 * key's destination, without first copying the value there (a 64 MiB
 * key's copy cost a third of the allreduce's time, bench/dist). */
static int one_value(const bucket *b) {
  return b->kind != BUCKET_BROADCAST && !fused(b) && b->n_vals[0] == 1;
}

/* The engine function: runs on a worker once the arrays are ready. It
 * cannot fail: a fused bucket's buffer was allocated when it was pushed
 * (bucket_new), because this rank's collective must happen once it has a
 * sequence number, or the other ranks wait for it. */
static void bucket_ready(void *arg, mxc__exec *ex) {
  bucket *b = arg;
  b->ex = ex;
  if (b->kind == BUCKET_NCCL) {
    /* The values' writers are complete (the engine syncs a GPU worker's
     * stream before its work counts as done), so NCCL's own stream may
     * read them. */
    b->src = mxc__ndarray_ptr(b->views[0]);
    b->buf = mxc__ndarray_ptr(b->recv ? b->recv : also_of(b, 0));
    enqueue(&b->req);
    return;
  }
  if (!fused(b)) b->buf = mxc__ndarray_ptr(dst_of(b, 0));
  b->src = b->buf;
  if (one_value(b)) {
    b->src = mxc__ndarray_ptr(b->views[0]);
  } else {
    sum_locally(b);
  }
  enqueue(&b->req);
}

/* ---- making buckets (in the pushing thread) ---- */

static int64_t group_bytes(const mxc__kv_group *gr) {
  return (int64_t)mxc__ndarray_nbytes(gr->dst);
}

/* How many groups from gs[0] go into one bucket (>= 1). */
static int bucket_span(const mxc__kv_group *gs, int n) {
  if (gs[0].nccl) return 1; /* NCCL buckets are never fused (yet) */
  int64_t limit = g_fusion_bytes, bytes = group_bytes(&gs[0]);
  int k = 1;
  while (k < n && gs[k].dst->dtype == gs[0].dst->dtype &&
         bytes + group_bytes(&gs[k]) <= limit) {
    bytes += group_bytes(&gs[k++]);
  }
  return bytes > limit ? 1 : k;
}

static int bucket_alloc(const mxc__kv_group *gs, int n, bucket **out) {
  int views = n;
  for (int k = 0; k < n; ++k) views += gs[k].n + (gs[k].also != NULL);
  bucket *b = mxc__calloc(1, sizeof *b);
  if (b) {
    b->views = mxc__calloc((size_t)views, sizeof *b->views);
    b->first = mxc__calloc((size_t)n, sizeof *b->first);
    b->n_vals = mxc__calloc((size_t)n, sizeof *b->n_vals);
    b->has_also = mxc__calloc((size_t)n, 1);
  }
  if (!b || !b->views || !b->first || !b->n_vals || !b->has_also) {
    if (b) bucket_free(b);
    return mxc__error_set(MXC_ERR_OOM, "out of memory for a collective");
  }
  b->n_keys = n;
  *out = b;
  return MXC_OK;
}

static int take_view(bucket *b, const mxc__ndarray *a) {
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(a));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(a, &b->views[b->n_views]));
  b->n_views++;
  return MXC_OK;
}

static void bucket_name(bucket *b, const mxc__kv_group *gs, int n) {
  char key[128];
  mxc__kv_key_str(&gs[0].e->key, key, sizeof key);
  const char *verb = b->kind == BUCKET_BROADCAST ? "broadcast"
                     : b->kind == BUCKET_NCCL    ? "NCCL allreduce"
                                                 : "allreduce";
  if (n == 1) {
    snprintf(b->name, sizeof b->name, "kvstore %s %s", verb, key);
  } else {
    snprintf(b->name, sizeof b->name, "kvstore %s of %d keys from %s", verb,
             n, key);
  }
}

/* A fused bucket's buffer, allocated now rather than when the values
 * are ready: out of memory is then an error of the push call on this
 * rank, before the collective has a sequence number, and the job stays
 * in step (the other ranks' collective waits for this rank to push
 * again, or for the watchdog). */
static int fusion_buffer(bucket *b) {
  size_t bytes = (size_t)b->total * mxc__dtype_size(b->dtype);
  b->buf = mxc__malloc(bytes);
  MXC_RETURN_ERROR_IF(!b->buf, MXC_ERR_OOM,
                      "%s: out of memory for a fusion buffer of %zu bytes "
                      "(MXC_KVSTORE_FUSION_BYTES=%" PRId64 "); nothing was "
                      "pushed",
                      b->name, bytes, g_fusion_bytes);
  return MXC_OK;
}

/* Where an NCCL bucket's sum goes: the pushpull's GPU output (also),
 * else a GPU array of its own, allocated now for the same reason as a
 * fusion buffer. */
static int nccl_recv(bucket *b) {
  if (also_of(b, 0)) return MXC_OK;
  const mxc__ndarray *v = b->views[0];
  int rc = mxc__ndarray_create(&v->shape, v->dtype, v->chunk->dev, 0,
                               &b->recv);
  if (rc != MXC_OK) mxc__error_prefix(b->name);
  return rc;
}

static int bucket_new(const mxc__kv_group *gs, int n, int kind,
                      bucket **out) {
  bucket *b = NULL;
  MXC_FORWARD_IF_ERROR(bucket_alloc(gs, n, &b));
  b->kind = kind;
  b->dtype = gs[0].dst->dtype;
  b->req.run = run_bucket;
  b->req.name = b->name;
  bucket_name(b, gs, n);
  int rc = MXC_OK;
  for (int k = 0; k < n && rc == MXC_OK; ++k) {
    b->first[k] = b->n_views;
    b->n_vals[k] = gs[k].n;
    b->total += mxc__ndarray_size(gs[k].dst);
    for (int i = 0; i < gs[k].n && rc == MXC_OK; ++i) {
      rc = take_view(b, gs[k].vals[i]);
    }
    if (rc == MXC_OK) rc = take_view(b, gs[k].dst);
    if (rc == MXC_OK && gs[k].also) {
      rc = take_view(b, gs[k].also);
      b->has_also[k] = rc == MXC_OK;
    }
  }
  if (rc == MXC_OK && fused(b)) rc = fusion_buffer(b);
  if (rc == MXC_OK && kind == BUCKET_NCCL) rc = nccl_recv(b);
  if (rc != MXC_OK) {
    bucket_free(b);
    return rc;
  }
  *out = b;
  return MXC_OK;
}

/* Pushes b with the next sequence number: reads the values, writes the
 * destinations and the also outputs (an also that is one of the values
 * counts as written: the engine merges the two). */
static int bucket_push(bucket *b, int priority) {
  mxc__var **vars = mxc__calloc((size_t)b->n_views, sizeof *vars);
  MXC_RETURN_ERROR_IF(!vars, MXC_ERR_OOM, "%s: out of memory", b->name);
  int nr = 0, nw = b->n_views;
  for (int k = 0; k < b->n_keys; ++k) {
    for (int i = 0; i < b->n_vals[k]; ++i) {
      vars[nr++] = mxc__ndarray_var(b->views[b->first[k] + i]);
    }
    vars[--nw] = mxc__ndarray_var(dst_of(b, k));
    if (b->has_also[k]) vars[--nw] = mxc__ndarray_var(also_of(b, k));
  }
  const mxc__ndarray *d0 = dst_of(b, 0);
  mxc__push_args p = {.async_fn = bucket_ready, .arg = b,
                      .free_fn = bucket_free, .reads = vars, .n_reads = nr,
                      .writes = vars + nr, .n_writes = b->n_views - nr,
                      .priority = priority, .name = b->name,
                      .dev = d0->chunk->dev};
  pthread_mutex_lock(&g.seq_lock);
  b->req.seq = g.issued;
  int rc = mxc__engine_push(mxc__ndarray_engine(d0), &p);
  if (rc == MXC_OK) g.issued++;
  pthread_mutex_unlock(&g.seq_lock);
  mxc__free(vars);
  return rc;
}

static int push_span(const mxc__kv_group *gs, int n, int kind,
                     int priority) {
  bucket *b = NULL;
  MXC_FORWARD_IF_ERROR(bucket_new(gs, n, kind, &b));
  int rc = bucket_push(b, priority);
  if (rc != MXC_OK) bucket_free(b);
  return rc;
}

/* The buckets of a push: gs[first[i] .. first[i] + span[i]) each. */
typedef struct bucket_plan {
  int n;
  int *first, *span;
  bucket **b;
} bucket_plan;

static void plan_free(bucket_plan *p, int from) {
  for (int i = from; i < p->n; ++i) {
    if (p->b[i]) bucket_free(p->b[i]);
  }
  mxc__free(p->first);
  mxc__free(p->span);
  mxc__free(p->b);
}

static int plan_new(const mxc__kv_group *gs, int n, bucket_plan *p) {
  size_t m = n ? (size_t)n : 1;
  *p = (bucket_plan){0};
  p->first = mxc__calloc(m, sizeof *p->first);
  p->span = mxc__calloc(m, sizeof *p->span);
  p->b = mxc__calloc(m, sizeof *p->b);
  if (!p->first || !p->span || !p->b) {
    plan_free(p, 0);
    return mxc__error_set(MXC_ERR_OOM, "kvstore push: out of memory");
  }
  for (int i = 0; i < n; i += p->span[p->n], p->n++) {
    p->first[p->n] = i;
    p->span[p->n] = bucket_span(gs + i, n - i);
  }
  return MXC_OK;
}

/* Every bucket (and fusion buffer) is made before the first is pushed,
 * so that running out of memory pushes nothing and the ranks stay in
 * step. Only the engine's own push failing part way (itself out of
 * memory) leaves earlier collectives of the call pushed. */
int mxc__kv_dist_push(const mxc__kv_group *gs, int n, int priority) {
  bucket_plan p;
  MXC_FORWARD_IF_ERROR(plan_new(gs, n, &p));
  int rc = MXC_OK;
  for (int i = 0; i < p.n && rc == MXC_OK; ++i) {
    int kind = gs[p.first[i]].nccl ? BUCKET_NCCL : BUCKET_ALLREDUCE;
    rc = bucket_new(gs + p.first[i], p.span[i], kind, &p.b[i]);
  }
  int pushed = 0;
  while (rc == MXC_OK && pushed < p.n) {
    rc = bucket_push(p.b[pushed], priority);
    if (rc == MXC_OK) pushed++;
  }
  plan_free(&p, pushed); /* the engine owns the pushed ones */
  return rc;
}

int mxc__kv_dist_broadcast(const mxc__kv_group *gr) {
  return push_span(gr, 1, BUCKET_BROADCAST, 0);
}

/* ---- synchronous collectives: barrier, allgather ---- */

/* A collective the calling thread waits for. buf NULL: a barrier; else
 * an allreduce of count int64 over buf. */
typedef struct sync_req {
  dist_req req;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int done, rc;
  int64_t *buf, count;
  /* mxc__kv_dist_call's function, run in place of the above */
  int (*fn)(void *arg, char *why, size_t why_len);
  void *fn_arg;
  char name[64];
  char why[WHY_MAX];
} sync_req;

static void run_sync(dist_req *r) {
  sync_req *s = (sync_req *)r;
  int rc = s->fn    ? s->fn(s->fn_arg, s->why, sizeof s->why)
           : s->buf ? g.p->allreduce(s->buf, s->buf, NULL, s->count,
                                   MXC_DTYPE_INT64, s->why, sizeof s->why)
                  : g.p->barrier(s->why, sizeof s->why);
  pthread_mutex_lock(&s->lock);
  s->rc = rc;
  s->done = 1;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->lock);
}

/* Runs s with the next sequence number (after the collectives pushed
 * before it) and waits for it. */
static int run_and_wait(sync_req *s, const char *what) {
  MXC_FORWARD_IF_ERROR(mxc__engine_check_may_wait(what));
  s->req.run = run_sync;
  snprintf(s->name, sizeof s->name, "kvstore %s", what);
  s->req.name = s->name;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cv, NULL);
  pthread_mutex_lock(&g.seq_lock);
  s->req.seq = g.issued++;
  enqueue(&s->req);
  pthread_mutex_unlock(&g.seq_lock);
  pthread_mutex_lock(&s->lock);
  while (!s->done) pthread_cond_wait(&s->cv, &s->lock);
  pthread_mutex_unlock(&s->lock);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cv);
  MXC_RETURN_ERROR_IF(s->rc != MXC_OK, s->rc, "%s: %s", what, s->why);
  return MXC_OK;
}

int mxc__kv_dist_barrier(void) {
  sync_req s = {0};
  return run_and_wait(&s, "barrier");
}

/* An allgather as a sum: each rank writes its part into its own slot of
 * a zeroed buffer, and the sum of one value and zeros is that value
 * exactly. (The plug-in's table has no allgather; these exchanges are a
 * few bytes per key, once per init.) */
int mxc__kv_dist_allgather(const int64_t *mine, int64_t len, int64_t **all) {
  int64_t *buf = mxc__calloc((size_t)(len * g.size), sizeof *buf);
  MXC_RETURN_ERROR_IF(!buf, MXC_ERR_OOM,
                      "out of memory for %" PRId64 " descriptions", len);
  memcpy(buf + len * g.rank, mine, (size_t)len * sizeof *buf);
  sync_req s = {.buf = buf, .count = len * g.size};
  int rc = run_and_wait(&s, "init check");
  if (rc != MXC_OK) {
    mxc__free(buf);
    return rc;
  }
  *all = buf;
  return MXC_OK;
}

int mxc__kv_dist_call(int (*fn)(void *arg, char *why, size_t why_len),
                      void *arg, const char *what) {
  sync_req s = {.fn = fn, .fn_arg = arg};
  return run_and_wait(&s, what);
}

int mxc__kv_dist_sum_here(int64_t *buf, int64_t count, char *why,
                          size_t why_len) {
  return g.p->allreduce(buf, buf, NULL, count, MXC_DTYPE_INT64, why,
                        why_len);
}
