/* The dependency engine: schedules functions over variables.
 *
 * The engine knows nothing of arrays. A variable stands for a resource
 * (the storage of an array, a temp buffer); a function declares which
 * variables it reads and which it writes, and the engine runs it once
 * every earlier conflicting function has finished:
 *  - two functions that share a variable, at least one writing it, run in
 *    push order;
 *  - readers of the same version of a variable run concurrently.
 *
 * Errors: a function that fails poisons the variables it writes. Functions
 * pushed later that read or write a poisoned variable are skipped (their
 * free_fn still runs) and poison their own write variables with the same
 * error. mxc__engine_wait_var reports and clears the poison of one
 * variable; mxc__engine_wait_all reports the first failure since the
 * previous wait_all and clears every poison. The engine stays usable.
 *
 * Thread-safety: every function may be called from any thread, including
 * from inside a running engine function (nested push). Waiting (wait_var,
 * wait_all, set_num_workers) is refused with MXC_ERR_REENTRANT from inside
 * an engine function, its free_fn or a deletion callback, and on a worker
 * thread: the wait could need the very worker or function that waits (a
 * deadlock in any dependency engine), and whether it does depends on
 * timing, so it is refused always, in both kinds.
 *
 * Kinds: MXC__ENGINE_NAIVE runs each function synchronously in the pushing
 * thread (for debugging; pushes are serialized by one lock).
 * MXC__ENGINE_THREADED runs them on per-device worker pools: the CPU's,
 * and per GPU (on its first push) MXC_GPU_WORKERS compute workers
 * (default 2) and one copy worker, each owning a GPU stream. A GPU
 * worker records an event after each function and goes on; the
 * function completes (its free_fn runs, its dependents become ready) on
 * the worker's completer thread once the event is reached (flight.c).
 * Where the plug-in has no events, or MXC_GPU_EVENTS=0, the worker
 * waits for its stream after each function instead (blocking that worker
 * only, never the CPU workers).
 * A GPU function that depends on such a function of the same GPU (its
 * write) starts once that one is on its stream, behind a stream wait
 * for its event, without waiting for the host to see it complete;
 * MXC_GPU_STREAM_WAIT=0 (read when a GPU's pools are made) turns that
 * off (core/engine/var.c, "Stream waits" in internal.h). */
#ifndef MXC_CORE_ENGINE_ENGINE_H_
#define MXC_CORE_ENGINE_ENGINE_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/device.h"

typedef struct mxc__engine mxc__engine;
typedef struct mxc__var mxc__var;
/* A function being run; handed to the function itself. */
typedef struct mxc__exec mxc__exec;

enum { MXC__ENGINE_NAIVE = 0, MXC__ENGINE_THREADED = 1 };

/* Synchronous function: returns MXC_OK or an MXC_ERR_* code. On failure it
 * may attach a message with mxc__exec_set_error. */
typedef int (*mxc__sync_fn)(void *arg, mxc__exec *ex);

/* Asynchronous function: starts work and returns; the work calls
 * mxc__exec_complete(ex, ...) exactly once, from any thread. Dependent
 * functions run only after that call. */
typedef void (*mxc__async_fn)(void *arg, mxc__exec *ex);

/* Releases `arg` after the function ran or was skipped. For an async
 * function that is once it has both returned and called
 * mxc__exec_complete, in either order. */
typedef void (*mxc__free_fn)(void *arg);

typedef struct mxc__push_args {
  mxc__sync_fn sync_fn;   /* exactly one of sync_fn / async_fn is set */
  mxc__async_fn async_fn;
  void *arg;
  mxc__free_fn free_fn;   /* may be NULL */
  mxc__var *const *reads; /* may contain duplicates and writes; deduped */
  int n_reads;
  mxc__var *const *writes;
  int n_writes;
  int priority;           /* higher runs earlier among ready work */
  const char *name;       /* not copied: must stay valid until free_fn */
  /* Where it runs. MXC_DEVICE_CPU: the CPU workers. MXC_DEVICE_GPU id:
   * that GPU's workers (created on its first push), each with a stream of
   * its own (core/base/gpu.h): the function's GPU work (kernels through
   * mxc__gpu_launch, mxc__gpu_copy) is enqueued there, and the function
   * counts as done (dependents run, waits return) only once that stream
   * has finished it; an asynchronous GPU error fails the function like
   * a returned one. */
  mxc__device dev;
  /* Nonzero for a GPU: run on the GPU's copy worker (copies between host
   * and device or devices) instead of its compute workers, so that copies
   * overlap kernels. Ignored for the CPU. */
  int copy;
  /* Nonzero: when every variable is free at push time, a synchronous
   * function runs in the calling thread before push returns, instead of
   * being handed to a worker. For callers that wait for the function right
   * away (host copies): the hand-off to a worker and back costs tens of
   * microseconds on a busy machine, the copy itself nanoseconds. Work that
   * becomes ready when it finishes still goes to the workers. Ignored for
   * async functions and GPU devices (their work needs a worker's stream);
   * the naive engine always runs in the caller. */
  int run_here;
} mxc__push_args;

/* Creates an engine. num_workers: CPU worker threads (>= 1) for the
 * threaded kind; ignored by the naive kind. */
int mxc__engine_create(int kind, int num_workers, mxc__engine **out);

/* Waits for all work, stops the workers and frees the engine. Every
 * variable must have been deleted (mxc__engine_delete_var) before. */
void mxc__engine_destroy(mxc__engine *e);

/* The process-wide engine, created on first use: kind from MXC_ENGINE
 * ("naive" or "threaded", default threaded), workers from MXC_NUM_THREADS
 * (default: number of online CPUs). */
int mxc__engine_default(mxc__engine **out);

int mxc__engine_kind(const mxc__engine *e);

/* Changes the number of CPU workers (1..1024) after waiting for all work. */
int mxc__engine_set_num_workers(mxc__engine *e, int n);
int mxc__engine_num_workers(const mxc__engine *e);

/* A new variable. MXC_ERR_OOM possible. */
int mxc__engine_new_var(mxc__engine *e, mxc__var **out);

/* Marks v as a scratch variable: it orders the functions that use it like
 * any variable, but never carries a failure. A failed writer does not
 * poison it, so later users do not inherit that failure through it. For
 * resources whose contents mean nothing between uses (temp space): without
 * this, one failed operator would make every later operator sharing the
 * resource fail until the next wait_all. Call before v is first used in a
 * push (not synchronized with running work). */
void mxc__engine_var_set_scratch(mxc__var *v);

/* Write versions, so that a consumer can cache something derived from a
 * variable's data (the oneDNN backend keeps weights reordered into its
 * layouts): every variable gets a process-unique stamp when it is made
 * and a new one whenever a write to it is pushed (mxc__engine_push) or
 * waited for (mxc__engine_wait_var for writing, before a synchronous
 * write). Two reads with the same nonzero stamp see the same data,
 * provided the callers respect the engine's ordering. 0 means "unknown":
 * the variable's memory is written behind the engine's back (shared
 * through DLPack), and nothing may be cached from it. Thread-safe. */
uint64_t mxc__engine_var_version(const mxc__var *v);
/* Marks v's memory as shared outside the engine: its version is 0 from
 * now on. */
void mxc__engine_var_set_external(mxc__var *v);

/* Process-wide counts, for tests and diagnostics: *stream_waits, waits
 * enqueued on a GPU stream for a dependency granted early;
 * *host_grants, dependencies of GPU functions granted after the host saw
 * the one before complete (or a CPU function, a wait, a deletion). Only
 * grow; any thread. */
void mxc__engine_gpu_edges(long long *stream_waits, long long *host_grants);

/* Schedules deletion of v after all work pushed on it so far: then
 * on_deleted(arg) runs (if not NULL; e.g. to free the storage v guards)
 * and v is freed. Never fails and never allocates (the deletion's record
 * is reserved when the variable is made). v must not be used by the
 * caller afterwards. */
void mxc__engine_delete_var(mxc__engine *e, mxc__var *v,
                            void (*on_deleted)(void *), void *arg);

/* Pushes a function (see mxc__push_args). Returns at once (the naive
 * engine runs it first). On failure (MXC_ERR_OOM, bad arguments) nothing
 * is scheduled and free_fn is not called. */
int mxc__engine_push(mxc__engine *e, const mxc__push_args *a);

/* Waits until all work pushed so far that writes v (for_write = 0), or that
 * reads or writes v (for_write = 1 or MXC__WAIT_ALL_WORK), has finished.
 * for_write = 1 also says the caller writes v next, outside the engine,
 * so v gets a new write version; MXC__WAIT_ALL_WORK waits as long without
 * that (a synchronous read waiting for its own pushed copy). If v is
 * poisoned, returns the failure's code with the message "operator 'NAME'
 * failed: ..." and clears the poison. Never allocates. */
#define MXC__WAIT_ALL_WORK 2
int mxc__engine_wait_var(mxc__engine *e, mxc__var *v, int for_write);

/* Waits until all work pushed (by any thread) before the call has finished.
 * Returns the first failure since the previous wait_all (with its
 * message) and clears all poison. Work pushed from inside that work counts
 * too; work other threads push meanwhile does not delay the return. Also
 * frees the engine's cached op records and runs deferred handle
 * destructors (mxc__handle_reclaim), so that an idle engine's allocations
 * return to their baseline (leak checks rely on it). */
int mxc__engine_wait_all(mxc__engine *e);

/* MXC_ERR_REENTRANT naming fn when the calling thread may not wait for
 * engine work (see "Thread-safety" above); else MXC_OK. */
int mxc__engine_check_may_wait(const char *fn);

/* Inside a synchronous function: message for the failure it returns. */
void mxc__exec_set_error(mxc__exec *ex, const char *msg);

/* Ends an asynchronous function with code (MXC_OK or an error) and an
 * optional message (copied). */
void mxc__exec_complete(mxc__exec *ex, int code, const char *msg);

/* The name the function was pushed with. */
const char *mxc__exec_name(const mxc__exec *ex);

/* Counters for tests and benchmarks. */
int64_t mxc__engine_pending(const mxc__engine *e); /* pushed, not finished */

#endif /* MXC_CORE_ENGINE_ENGINE_H_ */
