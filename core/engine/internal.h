/* Internals of the dependency engine, shared by its source files.
 *
 * Files:
 *   engine.c    public entry points: argument checks, dispatch by kind, the
 *               default engine, mxc__exec_* functions
 *   failure.c   refcounted error records, the error epoch, poisoning
 *   var.c       variables and their dependency queues
 *   op.c        op records (free-list cache) and deduplicated dep lists
 *   readyq.c    the priority ready queue of a worker pool
 *   pool.c      per-device worker pools (threads, sleeping, resizing)
 *   flight.c    GPU operations in flight: completion through events
 *   threaded.c  the threaded engine: push, completion, waits, deletion
 *   naive.c     the naive engine
 *
 * Lock ordering (a thread holding a lock only ever takes locks listed
 * after it):
 *   1. naive_mu            (naive engine only; recursive)
 *   2. resize_mu           (set_num_workers / destroy)
 *   3. gen_mu              (waiting for generations to drain)
 *   4. wide_mu             (threaded push; see "Pushing many variables")
 *   4b. gpu_mu             (threaded push: creating a GPU's pools; held
 *                          by nothing else, holds nothing of the engine
 *                          but the new pools' own)
 *   5. var->mu             several at once only in ascending address order
 *                          (push); everywhere else at most one
 *   6. cache_mu, pool->mu, err_mu, mu, flight->mu   leaves: nothing is
 *                          taken under them
 * Engine callbacks (functions, free_fn, on_deleted) always run with no
 * engine lock held, except naive_mu in the naive engine. */
#ifndef MXC_CORE_ENGINE_INTERNAL_H_
#define MXC_CORE_ENGINE_INTERNAL_H_

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/base/gpu.h"
#include "core/engine/engine.h"

/* ---- error records (failure.c) ---------------------------------------- */

/* An operator failure, shared by every variable it poisons. */
typedef struct mxc__failure {
  atomic_int refs; /* < 0: a static fallback record, never freed */
  int code;        /* MXC_ERR_*, always in 1..MXC_ERR_OPERATOR */
  const char *msg; /* "operator 'NAME' failed: ..." */
} mxc__failure;

/* ---- variables and dependency entries (var.c) ------------------------- */

enum {
  MXC__DEP_OP = 0,     /* owner: mxc__op */
  MXC__DEP_DELETE = 1, /* owner: the variable being deleted */
  MXC__DEP_WAIT = 2    /* owner: a waiter on a waiting thread's stack */
};

/* One use of one variable by an op, a deletion or a waiter. While not yet
 * granted it sits in the variable's pending FIFO; once granted it is out of
 * every queue until released, and `next` links local grant lists. */
typedef struct mxc__dep {
  struct mxc__dep *next;
  struct mxc__var *var;
  void *owner;
  unsigned char write;
  unsigned char kind;
  uint32_t ticket; /* the var's append count when queued: push order */
  /* Granted early (see "Stream waits" at struct mxc__var): the event the
   * op's stream waits for before its function runs; NULL otherwise. Set
   * under var->mu before the grant is counted, read by the op's worker
   * and finish, cleared by finish. */
  void *wait_ev;
  /* Links the var's early group (var->early), then the promoted list. */
  struct mxc__dep *early_next;
} mxc__dep;

/* A new write version for v (a push or a wait that writes it). */
void mxc__var_bump(mxc__var *v);

struct mxc__var {
  /* Guards everything below. */
  pthread_mutex_t mu;
  /* Not yet granted, in push order. Invariant whenever mu is free: the head
   * (if any) cannot be granted now, i.e. it is a writer while a reader or
   * writer holds the variable, or a reader while a writer holds it. */
  mxc__dep *head, *tail;
  int readers;      /* granted readers not yet released */
  int writer;       /* 1 while a granted writer is not yet released */
  uint32_t tickets; /* appends so far (wraps; compared as serials) */
  /* Poison: set under mu; also read without mu as a cheap "maybe
   * poisoned" hint (NULL is by far the common case). The failure counts
   * only while err_epoch equals the engine's epoch, and, once a reading
   * wait_var has reported it (has_clear), only for uses queued before
   * that wait (ticket before clear_ticket): readers of one version may
   * run in any order, but the wait must clear the poison for the readers
   * pushed after it and not for those pushed before. */
  _Atomic(mxc__failure *) err;
  uint64_t err_epoch;
  int scratch; /* never poisoned (mxc__engine_var_set_scratch) */
  /* Write version (mxc__engine_var_version); 0 once external. */
  _Atomic uint64_t version;
  atomic_int external;
  int wide_mark; /* a wide push is queuing here ("Pushing many variables") */
  uint32_t clear_ticket;
  int has_clear;
  /* The deletion record, reserved at creation so that deleting never
   * allocates. */
  mxc__dep del;
  void (*on_deleted)(void *);
  void *del_arg;
  int del_gen; /* generation the deletion is counted in */
  /* Stream waits. A GPU operation whose write of v is enqueued on its
   * stream with an event recorded after it (flight.c) "device-releases"
   * v: rel_ev is that event while it still holds v as writer. The head
   * of the queue may then be granted early if it is a synchronous GPU
   * operation of the same device whose pool allows it: it leaves the
   * queue into the early group (one writer, or readers), its stream
   * waits for rel_ev before its function runs, and it is finished only
   * once the holder's host-side release promotes the group to holders
   * (then it checks the poison it could not check before running).
   * Waits, deletions and CPU work are never granted early: they still
   * wait for the host-side release. An early writer that device-releases
   * before its promotion leaves its event in early_ev, which becomes
   * rel_ev when it is promoted. */
  void *rel_ev;
  int rel_dev;
  mxc__dep *early; /* the early group, linked by early_next */
  int early_n;
  int early_write;
  void *early_ev;
  int early_dev;
};

/* ---- the function being run ------------------------------------------- */

struct mxc__exec {
  mxc__engine *engine;
  const char *name;
  mxc__failure *err;  /* owned reference; the op's failure if any */
  uint64_t err_epoch; /* when skipped: the epoch of the inherited failure */
  int code;           /* MXC_OK or the raw code the function returned */
  int skipped;
};

/* ---- op records (op.c) ------------------------------------------------ */

#define MXC__OP_INLINE_DEPS 4

typedef struct mxc__op {
  mxc__exec ex; /* first member: an mxc__exec * is an mxc__op * */
  /* Grants still missing, plus one held by the pusher until every dep is
   * queued. The op is ready when it drops to zero. */
  atomic_int wait;
  /* Async ops end when both async_fn has returned and mxc__exec_complete
   * was called, in either order: whichever comes second finishes the op,
   * so arg (and free_fn) outlive the running async_fn. */
  atomic_int async_parts;
  /* Parts still missing before the op may be finished: 1 for its own
   * completion, plus one per dep granted early and not yet promoted
   * (var.c, "Stream waits"). Whoever drops it to zero finishes it. */
  atomic_int fin_hold;
  int n_deps;
  int priority;
  int gen;        /* generation (0/1) the op is counted in */
  mxc__dep *deps; /* inline_deps, or a heap array for larger ops */
  mxc__sync_fn sync_fn;
  mxc__async_fn async_fn;
  void *arg;
  mxc__free_fn free_fn;
  struct mxc__pool *pool;
  /* Ready-queue links: FIFO next / heap sibling, heap child; the op cache
   * also uses next. */
  struct mxc__op *next, *child;
  uint64_t seq; /* ready-queue tie break: FIFO among equal priorities */
  mxc__dep inline_deps[MXC__OP_INLINE_DEPS];
} mxc__op;

/* ---- ready queue (readyq.c) ------------------------------------------- */

/* Priority 0 ops (the common case) in an O(1) FIFO; any other priority in
 * an intrusive pairing heap ordered by (priority desc, seq asc). Nothing
 * here allocates, so dispatching can never fail. Not thread-safe: the pool
 * guards it with pool->mu. */
typedef struct mxc__readyq {
  mxc__op *fifo_head, *fifo_tail;
  mxc__op *heap;
  uint64_t seq;
} mxc__readyq;

void mxc__readyq_push(mxc__readyq *q, mxc__op *op);
mxc__op *mxc__readyq_pop(mxc__readyq *q); /* NULL when empty */

/* ---- worker pools (pool.c) -------------------------------------------- */

typedef struct mxc__worker {
  struct mxc__pool *pool;
  int idx;
  pthread_t tid;
  /* A GPU pool's worker: its own stream (mxc__gpu_stream_create), made
   * before the thread starts and destroyed after it is joined. Every
   * function it runs enqueues its GPU work there; the function counts as
   * done once an event recorded after it is reached (flight), or, where
   * no event can be had, once the worker's wait for its stream returned.
   * NULL on the CPU. */
  void *stream;
  /* Its operations in flight and their completer thread (flight.c);
   * NULL on the CPU and where the plug-in has no events. */
  struct mxc__flight *flight;
} mxc__worker;

/* ---- GPU operations in flight (flight.c) ------------------------------ */

/* Operations one GPU worker may have in flight before it waits. */
#define MXC__FLIGHT_MAX 128

typedef struct mxc__flight mxc__flight;

/* Starts w's completer (w->flight; left NULL where the plug-in has no
 * events). The caller then starts w's thread. */
int mxc__flight_start(mxc__worker *w);
/* After w's thread is joined: lets the completer finish what is left,
 * joins it, frees its events. */
void mxc__flight_stop(mxc__worker *w);
/* On w's thread, after op's function enqueued its work on w's stream:
 * records an event and hands op to the completer (1), which finishes it
 * once the event is reached: op may be gone on return. 0: no event could
 * be made or recorded (op untouched, the caller waits for the stream). */
int mxc__flight_add(mxc__worker *w, struct mxc__op *op);

/* Lanes of a GPU: compute workers, and one copy worker for copies between
 * host and device or devices (mxc__push_args.copy). */
enum { MXC__LANE_COMPUTE = 0, MXC__LANE_COPY = 1, MXC__LANES = 2 };

typedef struct mxc__pool {
  mxc__engine *engine;
  mxc__device dev;
  int lane; /* MXC__LANE_*; the CPU pool is a compute lane */
  pthread_mutex_t mu; /* guards q, n_sleeping */
  pthread_cond_t cv;
  mxc__readyq q;
  int n_sleeping;
  /* Ops in q; written under mu, read without it as a hint (by spinning
   * workers, and to decide whether to run a successor inline). */
  atomic_int n_queued;
  atomic_int target;     /* workers with idx >= target leave */
  /* A GPU pool whose ops may be granted early behind an event
   * (MXC_GPU_STREAM_WAIT, read when the pool is made); 0 on the CPU. */
  int stream_wait;
  mxc__worker **workers; /* under the engine's resize_mu */
  int n_workers;
} mxc__pool;

int mxc__pool_create(mxc__engine *e, mxc__device dev, int lane, int n,
                     mxc__pool **out);
/* Stops and joins every worker, frees the pool. The queue must be empty. */
void mxc__pool_destroy(mxc__pool *p);
/* Starts or stops workers; on failure the pool keeps its old size. */
int mxc__pool_resize(mxc__pool *p, int n);
/* Queues n ready ops linked by next (all of this pool). */
void mxc__pool_submit(mxc__pool *p, mxc__op *first, int n);
/* The worker running on this thread, or NULL. */
mxc__worker *mxc__pool_current_worker(void);

/* ---- the engine -------------------------------------------------------- */

/* Pushing many variables. Two pushes that share variables must queue in
 * the same relative order on every one of them (else each could wait for
 * the other: a deadlock). A push of at most MXC__PUSH_LOCK_ALL_MAX
 * distinct variables gets that by holding all their locks at once while
 * it queues, taken in ascending address order. A wider push (a Concat of
 * 1000 arrays) holds wide_mu, which serializes wide pushes, and queues on
 * its variables one at a time, marking each (wide_mark) until it has
 * queued on all of them. A narrow push that finds one of its variables
 * marked, with all its locks held, queues nothing, lets go and queues
 * again under wide_mu, after the wide push: so it never queues between
 * two of a wide push's deps, and small pushes pay no shared lock (the
 * check reads lines they hold anyway). Holders of var->mu other than
 * push (release, wait_var, delete_var) touch one variable, so they cannot
 * order two pushes. Holding a thousand locks at once would work too, but
 * ThreadSanitizer's deadlock detector aborts beyond 64 held locks. */
#define MXC__PUSH_LOCK_ALL_MAX 32

#define MXC__OP_CACHE_MAX 1024

struct mxc__engine {
  int kind;
  atomic_int num_workers;

  /* Failures (failure.c). err_mu guards first_err and epoch changes. */
  pthread_mutex_t err_mu;
  atomic_uint_least64_t epoch;
  mxc__failure *first_err; /* first failure of the current epoch */

  pthread_mutexattr_t var_mu_attr;

  /* Naive engine. */
  pthread_mutex_t naive_mu; /* recursive: nested pushes */
  int naive_depth;          /* pushes running (nested); under naive_mu */
  mxc__dep *naive_deferred; /* deletions asked for while depth > 0 */

  /* Threaded engine. */
  pthread_mutex_t resize_mu;
  pthread_mutex_t wide_mu; /* see "Pushing many variables" */
  mxc__pool *cpu; /* the one pool for MXC_DEVICE_CPU */
  /* Per GPU and lane, created on the first push there (under gpu_mu;
   * read without it once set), destroyed with the engine. */
  _Atomic(mxc__pool *) gpu[MXC__MAX_GPUS][MXC__LANES];
  pthread_mutex_t gpu_mu;
  /* Op record recycling (op.c). */
  pthread_mutex_t cache_mu; /* guards cache */
  mxc__op *cache;
  _Atomic(mxc__op *) returned; /* lock-free stack of finished records */
  atomic_int n_returned;       /* records in it (see op.c) */

  /* mu/cv: threads waiting for a generation to drain (wait_all), waiters
   * of wait_var, and the naive engine's async completions. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_int n_waiters; /* threads waiting for a generation to drain */

  /* Work (ops and deletions) is counted in one of two generations: the
   * one `gen` selects when it is pushed. wait_all flips `gen` and waits
   * for the old generation to drain (finished == pushed), so work pushed
   * meanwhile by other threads cannot starve it (work pushed from inside
   * a running op joins that op's generation instead, so wait_all also
   * waits for what earlier work spawns). gen_mu serializes the flips and
   * waits. */
  pthread_mutex_t gen_mu;
  atomic_uint gen;
  /* Counters on their own cache lines: pushing threads write one, the
   * workers the other. */
  alignas(64) atomic_llong pushed[2];
  alignas(64) atomic_llong finished[2];
  alignas(64) char pad_;
};

/* failure.c */
int mxc__failure_code(int raw); /* raw code -> 1..MXC_ERR_OPERATOR */
const char *mxc__failure_code_name(int code);
/* "operator 'NAME' failed: DETAIL" (DETAIL: msg, or the code's name).
 * Never fails: on OOM returns a static record without the name. */
mxc__failure *mxc__failure_new(const char *name, int raw_code, const char *msg);
void mxc__failure_ref(mxc__failure *f);
void mxc__failure_unref(mxc__failure *f);
/* Sets the calling thread's error message from f; returns f->code. */
int mxc__failure_report(const mxc__failure *f);
/* An op that ran and failed: completes ex->err (default message, code) and
 * records it as first failure of the epoch if there is none. Returns the
 * epoch it belongs to. */
uint64_t mxc__failure_commit(mxc__engine *e, mxc__exec *ex);
/* If *err is NULL and v carries a failure that counts for a use queued
 * with `ticket` (naive engine: any ticket), stores a new reference in *err
 * and its epoch in *epoch. The caller holds v (a granted use). */
void mxc__var_check_poison(mxc__engine *e, mxc__var *v, uint32_t ticket,
                           mxc__failure **err, uint64_t *epoch);
/* Poisons v with f (a new reference) of the given epoch; the caller holds
 * v for writing. */
void mxc__var_poison(mxc__var *v, mxc__failure *f, uint64_t epoch);
/* After a successful write to v: whatever failure v still carries counts
 * for no later use (else the writer would have been skipped); drop it. */
void mxc__var_drop_stale(mxc__var *v);
/* wait_var's report: returns the failure that counts for the granted
 * waiter dep d (a reference) or NULL, and clears it for later uses. d is
 * NULL in the naive engine. */
mxc__failure *mxc__var_take_poison(mxc__engine *e, mxc__var *v,
                                   const mxc__dep *d);
/* Ends the epoch: returns the first failure (a reference) or NULL, and
 * makes every existing poison stale. */
mxc__failure *mxc__engine_next_epoch(mxc__engine *e);

/* var.c */
int mxc__var_new(mxc__engine *e, mxc__var **out);
void mxc__var_free(mxc__var *v);
/* With v->mu held: queues d; returns 1 if it was granted at once (maybe
 * early: d->wait_ev set). */
int mxc__var_append(mxc__var *v, mxc__dep *d);
/* Takes v->mu, releases the granted dep d and prepends every dep granted
 * as a result to *granted, and every early dep promoted to a holder to
 * *promoted (linked by early_next: the caller drops their ops' fin_hold). */
void mxc__var_release(mxc__var *v, const mxc__dep *d, mxc__dep **granted,
                      mxc__dep **promoted);
/* Takes v->mu: d, a write of v by a GPU op of device dev, is enqueued
 * before event ev; grants early what may start behind it (prepended to
 * *granted). */
void mxc__var_dev_release(mxc__var *v, mxc__dep *d, void *ev, int dev,
                          mxc__dep **granted);

/* op.c */
mxc__op *mxc__op_get(mxc__engine *e, int n_deps);
/* Returns a record for reuse; any thread, lock-free. */
void mxc__op_put(mxc__engine *e, mxc__op *op);
/* Frees every cached record. */
void mxc__op_cache_clear(mxc__engine *e);
/* Fills deps with the deduplicated uses of a (a var in both lists is a
 * write), sorted by variable address; returns how many. deps must hold
 * n_reads + n_writes entries. */
int mxc__deps_build(const mxc__push_args *a, mxc__dep *deps, void *owner);

/* threaded.c */
/* Bracket engine callbacks (functions, free_fns, deletions) the calling
 * thread runs, for mxc__engine_check_may_wait: used by the naive engine
 * and the threaded engine's deletions; the threaded engine's functions
 * are known from mxc__thr_in_fn. (Functions, not a shared thread-local
 * variable: an extern TLS symbol would leave the library.) */
void mxc__engine_cb_enter(void);
void mxc__engine_cb_leave(void);
int mxc__thr_in_fn(void);

int mxc__thr_init(mxc__engine *e, int num_workers);
void mxc__thr_fini(mxc__engine *e);
int mxc__thr_push(mxc__engine *e, const mxc__push_args *a);
int mxc__thr_wait_var(mxc__engine *e, mxc__var *v, int for_write);
int mxc__thr_wait_all(mxc__engine *e);
/* Waits for all work pushed before the call, and what it spawns. */
void mxc__thr_drain(mxc__engine *e);
void mxc__thr_delete_var(mxc__engine *e, mxc__var *v);
void mxc__thr_complete(mxc__exec *ex);
int mxc__thr_set_num_workers(mxc__engine *e, int n);
/* Runs a ready op on worker w; returns a successor to run next, or NULL. */
mxc__op *mxc__thr_run(mxc__op *op, mxc__worker *w);
/* A completer (flight.c): op's GPU work is over; rc is the result of its
 * event (the reason as the thread's error). Fails op by its name on
 * error (unless its function failed first), then finishes it. */
void mxc__thr_gpu_done(mxc__op *op, int rc);
/* On op's worker, once event ev is recorded after op's work and before
 * op is handed to its completer: device-releases op's writes (var.c,
 * "Stream waits") and queues what that grants. */
void mxc__thr_gpu_enqueued(mxc__op *op, void *ev);

/* naive.c */
void mxc__naive_fini(mxc__engine *e);
int mxc__naive_push(mxc__engine *e, const mxc__push_args *a);
int mxc__naive_wait_var(mxc__engine *e, mxc__var *v);
int mxc__naive_wait_all(mxc__engine *e);
void mxc__naive_delete_var(mxc__engine *e, mxc__var *v);
void mxc__naive_complete(mxc__exec *ex);

#endif /* MXC_CORE_ENGINE_INTERNAL_H_ */
