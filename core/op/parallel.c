/* The kernel thread pool (see parallel.h).
 *
 * State machine, all under g.mu except the chunk counter and the error
 * flag of a job:
 *   idle:  cur == NULL, busy == 0.
 *   open:  a caller has published cur (a job on its own stack), bumped
 *          gen and woken the helpers; up to `wanted` helpers join it
 *          (joined, active count them).
 *   closing: the caller, done with its own share, sets cur = NULL (no
 *          more joins) and waits until active == 0; only then does the
 *          job (and its stack frame) go away and busy return to 0.
 * Helpers are detached and live as long as the process; they sleep on
 * work_cv between jobs. Every access to a job's fields other than `next`
 * and `failed` happens under g.mu or before publication / after the
 * close handshake, so the hand-over is race-free (ThreadSanitizer checks
 * this in tests/fuse). */
#include "core/op/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "core/base/error.h"
#include "core/engine/engine.h"

#define MAX_HELPERS 63

typedef struct job {
  mxc__parallel_fn fn;
  void *arg;
  int64_t n, grain, n_chunks;
  atomic_int_fast64_t next; /* next chunk to take */
  atomic_int failed;        /* set once a chunk failed: skip the rest */
  int rc;                   /* first failure (under g.mu) */
  char msg[MXC__ERROR_MAX];
} job;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* helpers wait here for a job */
  pthread_cond_t done_cv; /* the caller waits here for active == 0 */
  pthread_cond_t free_cv; /* mxc__parallel_claim_wait waits for busy == 0 */
  int n_helpers;          /* started */
  int busy;               /* a caller owns the pool */
  job *cur;               /* the open job, or NULL */
  uint64_t gen;           /* bumped per job, so a helper joins each once */
  int wanted, joined, active;
} g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
       PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, 0,
       0, 0, 0};

/* Takes chunks until none are left (or one failed). */
static void run_chunks(job *j) {
  for (;;) {
    if (atomic_load_explicit(&j->failed, memory_order_relaxed)) return;
    int64_t c = atomic_fetch_add(&j->next, 1);
    if (c >= j->n_chunks) return;
    int64_t b = c * j->grain;
    int64_t e = b + j->grain < j->n ? b + j->grain : j->n;
    int rc = j->fn(j->arg, b, e);
    if (rc != MXC_OK) {
      pthread_mutex_lock(&g.mu);
      if (j->rc == MXC_OK) {
        j->rc = rc;
        snprintf(j->msg, sizeof j->msg, "%s", mxc__error_msg());
      }
      pthread_mutex_unlock(&g.mu);
      atomic_store(&j->failed, 1);
      return;
    }
  }
}

static void *helper_main(void *unused) {
  (void)unused;
  uint64_t seen = 0;
  pthread_mutex_lock(&g.mu);
  for (;;) {
    while (!(g.cur && g.gen != seen && g.joined < g.wanted)) {
      pthread_cond_wait(&g.work_cv, &g.mu);
    }
    seen = g.gen;
    g.joined++;
    g.active++;
    job *j = g.cur;
    pthread_mutex_unlock(&g.mu);
    run_chunks(j);
    pthread_mutex_lock(&g.mu);
    if (--g.active == 0) pthread_cond_signal(&g.done_cv);
  }
  return NULL; /* unreachable */
}

/* Starts helpers up to `want` (under g.mu). A failure to start one is not
 * an error: the loop simply runs on fewer threads. */
static void grow_locked(int want) {
  if (want > MAX_HELPERS) want = MAX_HELPERS;
  while (g.n_helpers < want) {
    pthread_t t;
    if (pthread_create(&t, NULL, helper_main, NULL) != 0) return;
    pthread_detach(t);
    g.n_helpers++;
  }
}

int mxc__parallel_for(int64_t n, int64_t grain, int max_threads,
                      mxc__parallel_fn fn, void *arg) {
  if (n <= 0) return MXC_OK;
  if (grain < 1) grain = 1;
  job j;
  j.fn = fn;
  j.arg = arg;
  j.n = n;
  j.grain = grain;
  j.n_chunks = (n - 1) / grain + 1;
  atomic_init(&j.next, 0);
  atomic_init(&j.failed, 0);
  j.rc = MXC_OK;
  j.msg[0] = '\0';
  int helpers = max_threads - 1;
  if (helpers > j.n_chunks - 1) helpers = (int)(j.n_chunks - 1);
  if (helpers <= 0) return fn(arg, 0, n); /* one thread: one call */

  pthread_mutex_lock(&g.mu);
  if (g.busy) { /* someone else's loop: run ours alone */
    pthread_mutex_unlock(&g.mu);
    run_chunks(&j);
  } else {
    grow_locked(helpers);
    g.busy = 1;
    g.cur = &j;
    g.gen++;
    g.wanted = helpers < g.n_helpers ? helpers : g.n_helpers;
    g.joined = 0;
    pthread_cond_broadcast(&g.work_cv);
    pthread_mutex_unlock(&g.mu);

    run_chunks(&j);

    pthread_mutex_lock(&g.mu);
    g.cur = NULL;
    while (g.active > 0) pthread_cond_wait(&g.done_cv, &g.mu);
    g.busy = 0;
    pthread_cond_broadcast(&g.free_cv);
    pthread_mutex_unlock(&g.mu);
  }
  /* After the close handshake (or alone) j.rc is stable. */
  if (j.rc != MXC_OK) return mxc__error_set_raw(j.rc, j.msg);
  return MXC_OK;
}

int mxc__parallel_threads(void) {
  mxc__engine *e = NULL;
  if (mxc__engine_default(&e) != MXC_OK) return 1;
  int n = mxc__engine_num_workers(e);
  return n < 1 ? 1 : n;
}

int mxc__parallel_claim(int want) {
  int cap = mxc__parallel_threads();
  if (want > cap) want = cap;
  if (want <= 1) return 1;
  pthread_mutex_lock(&g.mu);
  int granted = g.busy ? 1 : want;
  if (granted > 1) g.busy = 1;
  pthread_mutex_unlock(&g.mu);
  return granted;
}

int mxc__parallel_claim_wait(void) {
  int n = mxc__parallel_threads();
  if (n <= 1) return 1;
  pthread_mutex_lock(&g.mu);
  while (g.busy) pthread_cond_wait(&g.free_cv, &g.mu);
  g.busy = 1;
  pthread_mutex_unlock(&g.mu);
  return n;
}

void mxc__parallel_release(int granted) {
  if (granted <= 1) return;
  pthread_mutex_lock(&g.mu);
  g.busy = 0;
  pthread_cond_broadcast(&g.free_cv);
  pthread_mutex_unlock(&g.mu);
}
