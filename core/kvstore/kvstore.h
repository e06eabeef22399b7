/* The KVStore: parameter synchronisation beside the engine, with MXNet's
 * model (docs/kvstore.md).
 *
 * A store maps keys (int64 or string; the two are separate name spaces)
 * to arrays it owns. init copies a value in; push sums the values given
 * for a key (several per key: one per device) and either stores the sum
 * or hands it to the store's updater (an update operator of the registry
 * chosen by name, or a callback), which updates the stored array; pull
 * copies the stored array out. Types: "local" sums within the process;
 * "dist_sync" also sums across the processes of an MPI job (dist.c).
 *
 * Every data movement is asynchronous engine work over the arrays'
 * variables: a push reads its values and writes the stored array (or the
 * key's merge buffer), a pull reads the stored array and writes the
 * outputs, an optimizer update is an ordinary operator call. So a push
 * may follow the backward pass that produces its gradients without a
 * wait, and a pull is ordered before whatever reads its outputs. Work of
 * a call carries the call's priority (higher runs first among ready
 * work). A failure inside the work poisons what it writes, and the next
 * wait on those arrays reports it; the work is named after the key
 * ("kvstore push key 'w'").
 *
 * Sums are taken in a fixed order: the values of a key in the order the
 * caller listed them, element by element, so the same inputs always give
 * bit-identical results.
 *
 * Errors that the call can see (unknown key, push before init, shapes or
 * dtypes that differ from the stored array, unknown optimizer or bad
 * parameter) are returned before anything is pushed: a failing call
 * changes nothing.
 *
 * Thread-safety: every function may be called from any thread; calls on
 * one store are serialised by its lock. The updater callback runs in the
 * thread that pushes, outside the lock (it may call the store). */
#ifndef MXC_CORE_KVSTORE_KVSTORE_H_
#define MXC_CORE_KVSTORE_KVSTORE_H_

#include <stdint.h>

#include "core/ndarray/ndarray.h"

typedef struct mxc__kvstore mxc__kvstore;

/* One key: a string (str non-NULL) or an integer (str NULL, num). */
typedef struct mxc__kv_key {
  const char *str;
  int64_t num;
} mxc__kv_key;

/* The keys of a call: exactly one of ints / strs is non-NULL. */
typedef struct mxc__kv_keys {
  const int64_t *ints;
  const char *const *strs;
} mxc__kv_keys;

/* Updater callback: updates `local` (the stored array) from `recv` (the
 * summed values of this push), usually by invoking operators, which the
 * engine orders after the sum. Returns MXC_OK or an error code with the
 * thread's message set. The arrays are the store's: borrowed for the
 * call. */
typedef int (*mxc__kv_updater_fn)(void *ud, const mxc__kv_key *key,
                                  mxc__ndarray *recv, mxc__ndarray *local);

/* A new store of `type` ("local" or "dist_sync"). */
int mxc__kvstore_create(const char *type, mxc__kvstore **out);
/* Drops a reference (create gives the first); the last frees the store
 * and its arrays (the engine releases their storage once pending work
 * finished). Accepts NULL. The process's last dist_sync store also ends
 * MPI (mxc__kv_dist_close: waits). */
void mxc__kvstore_free(mxc__kvstore *kv);
/* One more reference (a fit training through the store holds one). */
void mxc__kvstore_retain(mxc__kvstore *kv);

const char *mxc__kvstore_type(const mxc__kvstore *kv);
int mxc__kvstore_rank(const mxc__kvstore *kv);
int mxc__kvstore_num_workers(const mxc__kvstore *kv);
/* 1 when pushes run an updater (an optimizer or a callback). */
int mxc__kvstore_has_updater(mxc__kvstore *kv);
/* Waits until every worker reached the barrier (local: returns at once). */
int mxc__kvstore_barrier(mxc__kvstore *kv);

/* Stores copies of vals[i] under keys[i] (n >= 1; keys distinct and not
 * yet initialised; dense arrays of a dtype the store sums). "dist_sync":
 * waits for every rank's init and fails on every rank when the keys,
 * shapes or dtypes differ between ranks (agree.c). */
int mxc__kvstore_init(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *vals);
/* Pushes vals[i] for keys[i]; values of one key are summed in order. */
int mxc__kvstore_push(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *vals, int priority);
/* Copies the stored array of keys[i] into outs[i]. */
int mxc__kvstore_pull(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *outs, int priority);
/* push(keys, vals) then pull(keys, outs); outs may be vals. */
int mxc__kvstore_pushpull(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                          mxc__ndarray *const *vals,
                          mxc__ndarray *const *outs, int priority);

/* Makes the update operator `name` of the registry the store's updater
 * (its inputs weight, grad, then states, which start at zero per key),
 * with parameters parsed now. Replaces any updater. */
int mxc__kvstore_set_optimizer(mxc__kvstore *kv, const char *name,
                               const char *const *keys,
                               const char *const *vals, int n);
/* Makes fn(ud, ...) the updater (fn NULL: none; pushes store the sum).
 * Replaces any optimizer. ud_free (may be NULL) is called with ud when
 * the updater is replaced or the store freed; a push running the old
 * updater in another thread may still be using ud then (the C API
 * retires it through the handle guard). */
int mxc__kvstore_set_updater(mxc__kvstore *kv, mxc__kv_updater_fn fn,
                             void *ud, void (*ud_free)(void *));

/* "key 'w'" or "key 3", for messages. */
void mxc__kv_key_str(const mxc__kv_key *k, char *buf, size_t len);

#endif /* MXC_CORE_KVSTORE_KVSTORE_H_ */
