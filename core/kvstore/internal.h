/* What the files of core/kvstore share: the store's layout and the engine
 * work it pushes. */
#ifndef MXC_CORE_KVSTORE_INTERNAL_H_
#define MXC_CORE_KVSTORE_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "core/kvstore/kvstore.h"
#include "core/op/op.h"

/* One key's arrays, all of the stored array's shape and dtype. */
typedef struct mxc__kv_entry {
  mxc__kv_key key;       /* str owned by the entry */
  mxc__ndarray *stored;  /* the value pull returns */
  mxc__ndarray *merge;   /* a push's sum before the update (delay-allocated) */
  mxc__ndarray **states; /* the optimizer's states, zeros at first */
  int n_states;
} mxc__kv_entry;

struct mxc__kvstore {
  atomic_int refs;  /* the handle's, and a fit's using the store */
  const char *type; /* static */
  int dist;         /* 1: "dist_sync", sums across the MPI job */
  int rank, size;
  pthread_mutex_t lock;
  mxc__kv_entry **entries; /* in init order */
  int n_entries, cap_entries;
  /* At most one updater: an update operator with parsed parameters, or a
   * callback. */
  const mxc__op *opt;
  void *opt_param;
  mxc__kv_updater_fn updater;
  void *updater_ud;
  void (*updater_ud_free)(void *);
};

/* One key's share of a push: its values (in order) and where the sum
 * goes. */
typedef struct mxc__kv_group {
  mxc__kv_entry *e;
  mxc__ndarray *const *vals;
  int n;
  const mxc__ndarray *dst;
  /* NULL, or a pushpull's output that gets the sum too, written by the
   * collective itself in place of a pull's copy (dist_sync without an
   * updater; kvstore.c decides). */
  const mxc__ndarray *also;
  /* 1: the values are on the NCCL communicator's GPU and are summed
   * there (nccl.c); the group is a collective of its own. */
  int nccl;
} mxc__kv_group;

/* ---- dist_sync (dist.c) ---- */

/* Loads the MPI plug-in and starts the communication thread, once per
 * process: *rank, *size of the job, or MXC_ERR_UNSUPPORTED saying why
 * not (the same reason on every later call). */
int mxc__kv_dist_open(int *rank, int *size);
/* A dist_sync store was freed: the last one ends the communication
 * thread after the collectives pushed so far and finalizes MPI (later
 * dist_sync stores are refused). Waits for it. */
void mxc__kv_dist_close(void);
/* Pushes the groups' collectives (sums over the job, into each dst),
 * fused in buckets, with the next sequence numbers. */
int mxc__kv_dist_push(const mxc__kv_group *gs, int n, int priority);
/* dst = rank 0's gr->vals[0] (an init). */
int mxc__kv_dist_broadcast(const mxc__kv_group *gr);
/* Waits for every rank (in sequence with the collectives). */
int mxc__kv_dist_barrier(void);
/* *all = every rank's len int64s, rank r's at all[r * len] (allocated;
 * mxc__free it), in sequence with the collectives; waits for it. */
int mxc__kv_dist_allgather(const int64_t *mine, int64_t len, int64_t **all);
/* An init's agreement across the job (agree.c): every rank describes its
 * n keys (key, dtype, shape) and local_rc (its own checks' result), and
 * every rank returns the same verdict: local_rc where it failed here, an
 * error naming the rank whose init failed, or the first key whose
 * description differs, with both descriptions. */
int mxc__kv_dist_agree_init(const mxc__kvstore *kv, int n,
                            mxc__kv_keys keys, mxc__ndarray *const *vals,
                            int local_rc);

/* Runs fn(arg, why, why_len) on the communication thread, in sequence
 * with the collectives (after those pushed before), and waits for it:
 * its result, with "what: why" as the message on failure. */
int mxc__kv_dist_call(int (*fn)(void *arg, char *why, size_t why_len),
                      void *arg, const char *what);
/* On the communication thread only (a function of mxc__kv_dist_call):
 * buf (count int64) becomes the sum over the ranks, the same bits on
 * every rank. */
int mxc__kv_dist_sum_here(int64_t *buf, int64_t count, char *why,
                          size_t why_len);

/* ---- NCCL for GPU values (nccl.c) ---- */

/* How the values of a push call reach the collectives: *use 0, staged
 * through host memory and summed over MPI; 1, summed on their GPU by NCCL
 * (a dist_sync store, every value on one GPU, each key once). The first
 * call that qualifies sets NCCL up across the job (a collective; waits)
 * or decides, on every rank alike, to stage (logged). MXC_ERR_UNSUPPORTED
 * when MXC_KVSTORE_NCCL=1 and NCCL cannot take the call. */
int mxc__kv_nccl_route(const mxc__kvstore *kv, int n, mxc__kv_keys keys,
                       mxc__ndarray *const *vals, int *use);
/* 1 when out (a pushpull's output) may be written by an NCCL collective
 * itself: an array on the communicator's GPU. */
int mxc__kv_nccl_direct_ok(const mxc__ndarray *out);
/* On the communication thread: recv = the sum over the ranks of send
 * (device memory), then host = recv (host memory, or NULL). */
int mxc__kv_nccl_allreduce(const void *send, void *recv, int64_t count,
                           int dtype, void *host, char *why, size_t why_len);
/* On the communication thread, before MPI_Finalize: frees the
 * communicator (abort 1: without waiting for the peers). */
void mxc__kv_nccl_end(int abort);

/* The entry of key k, or NULL. Called with the lock held. */
mxc__kv_entry *mxc__kv_find(const mxc__kvstore *kv, const mxc__kv_key *k);

/* (Re)creates the optimizer's states of e (kv->opt set), zero-filled.
 * On failure e keeps its old states. */
int mxc__kv_make_states(const mxc__kvstore *kv, mxc__kv_entry *e);
void mxc__kv_free_states(mxc__kv_entry *e);
/* Drops the optimizer (and every key's states) or the callback (calling
 * its ud_free). Called with the lock held, or by free. */
void mxc__kv_clear_updater(mxc__kvstore *kv);

/* Runs kv's optimizer on e: stored updated from merge and the states
 * (pushed as an operator call). */
int mxc__kv_apply_optimizer(const mxc__kvstore *kv, mxc__kv_entry *e);

/* Pushes dst = vals[0] + vals[1] + ... (in that order) as one engine
 * function reading the values and writing dst; `what` names the key in
 * the function's name. */
int mxc__kv_push_sum(mxc__ndarray *const *vals, int n,
                     const mxc__ndarray *dst, int priority, const char *what);
/* Pushes a copy src -> dst (same shape and dtype). */
int mxc__kv_push_copy(const mxc__ndarray *src, const mxc__ndarray *dst,
                      int priority, const char *what);

/* dst = srcs[0] + ... + srcs[n-1] (n >= 1; count elements of dtype), in
 * that order; dst may not overlap a source other than srcs[0]. */
void mxc__kv_sum_raw(void *dst, const void *const *srcs, int n,
                     int64_t count, int dtype);

/* Pushes a write of zeros over dst. */
int mxc__kv_push_zero(const mxc__ndarray *dst);

/* ---- GPU values (stage.c) ---- */

/* 1 when a is an array on a GPU. */
int mxc__kv_on_gpu(const mxc__ndarray *a);

/* A call's values with every GPU array replaced by a host copy of it. */
typedef struct mxc__kv_staged {
  mxc__ndarray **vals; /* the call's own list when no value is on a GPU */
  mxc__ndarray **temps; /* [n]: the host copies made (NULL: none) */
  int n;
} mxc__kv_staged;

/* Fills s for vals[0..n) (NULL entries pass through, for the checks that
 * follow), pushing the copies; on failure nothing is held. */
int mxc__kv_stage(int n, mxc__ndarray *const *vals, mxc__kv_staged *s);
/* Drops the host copies (work pushed over them keeps its references). */
void mxc__kv_staged_free(mxc__kv_staged *s);

/* A pull's copy of the stored array src into dst: host work into a host
 * array (mxc__kv_push_copy, with priority), an engine copy into a GPU
 * array. */
int mxc__kv_copy_out(const mxc__ndarray *src, const mxc__ndarray *dst,
                     int priority, const char *what);

/* MXC_OK when the store can hold arrays of this dtype (the sums are
 * written for a few types), else MXC_ERR_UNSUPPORTED naming `what`. */
int mxc__kv_check_dtype(int dtype, const char *what);

#endif /* MXC_CORE_KVSTORE_INTERNAL_H_ */
