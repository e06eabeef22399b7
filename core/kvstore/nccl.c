/* NCCL for the GPU values of "dist_sync" pushes (docs/kvstore.md, "NCCL").
 *
 * Where the calls live: NCCL is driven by the CUDA plug-in's second table
 * (core/base/nccl_plugin.h), which opens libnccl.so.2 itself. This file
 * decides which pushes use it and sets it up across the job; dist.c runs
 * the collectives, in their sequence, on the communication thread.
 *
 * The choice is made per push call, from facts that are the same on every
 * rank of an SPMD program: the store is dist_sync, every value of the call
 * is on one GPU, and no key appears twice. The first such call sets NCCL
 * up, as one request of the communication thread that every rank runs at
 * the same point of the sequence:
 *   1. each rank says whether it can use NCCL (MXC_KVSTORE_NCCL is not
 *      0, the plug-in has the table, libnccl opens): a sum over the ranks;
 *   2. if all can, rank 0's ncclGetUniqueId goes to every rank (a sum in
 *      which the other ranks add zeros);
 *   3. every rank makes its communicator on the values' GPU, and a last
 *      sum says whether all succeeded (else every rank frees its own).
 * So every rank ends with NCCL on, or every rank with NCCL off and the
 * same reason, logged once: then GPU values are staged through host
 * memory and summed over MPI as before. With MXC_KVSTORE_NCCL=1 a call
 * that NCCL cannot take is MXC_ERR_UNSUPPORTED instead. The steps run as
 * a collective of the sequence, so the watchdog (dist.c) also bounds a
 * rank that never joins the setup. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <stddef.h>

#include "core/base/error.h"
#include "core/base/log.h"
#include "core/base/gpu_plugin.h"
#include "core/base/nccl_plugin.h"
#include "core/base/plugin.h"
#include "core/kvstore/internal.h"

#define WHY_LEN 400 /* a reason from the plug-in */
#define ID_WORDS (MXC__NCCL_ID_BYTES / 8)

enum { OFF = -1, UNDECIDED = 0, ON = 1 };

static struct {
  pthread_mutex_t lock; /* the setup: one caller runs it */
  atomic_int state;     /* OFF, UNDECIDED or ON */
  int dev;              /* the communicator's GPU */
  const mxc__nccl_plugin *p;
  void *comm;
  char version[64];
  char why[1024]; /* OFF: why (holds a WHY_LEN reason) */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* MXC_KVSTORE_NCCL: "0" off, "1" required, else (unset) where it works.
 * Read at each use, so a program (or test) may change it between calls;
 * the setup reads it once. */
static int wanted(void) {
  const char *v = getenv("MXC_KVSTORE_NCCL");
  return v && strcmp(v, "0") == 0 ? 0 : v && strcmp(v, "1") == 0 ? 2 : 1;
}

/* ---- the plug-in's table ---- */

static const void *call_entry(void *sym) {
  mxc__nccl_plugin_entry_fn entry;
  *(void **)&entry = sym;
  return entry();
}

/* The file the GPU loader opened (dlopen hands back the loaded one). */
static const mxc__plugin_spec k_spec = {
    .library = "the CUDA plug-in",
    .kind = "NCCL",
    .package = "libmxc-cuda1",
    .env = "MXC_CUDA_PLUGIN",
    .file = MXC__GPU_PLUGIN_FILE,
    .entry = MXC__NCCL_PLUGIN_ENTRY,
    .abi = MXC__NCCL_PLUGIN_ABI,
    .size = sizeof(mxc__nccl_plugin),
    .version_offset = offsetof(mxc__nccl_plugin, mxc_version),
    .version = MXC__NCCL_MXC_VERSION,
    .dl_flags = RTLD_LOCAL,
    .call_entry = call_entry,
};

/* The table with NCCL opened, or NULL with why set. */
static const mxc__nccl_plugin *open_table(char *why, size_t len) {
  const mxc__nccl_plugin *p =
      mxc__plugin_open(&k_spec, mxc__plugin_path(&k_spec), why, len);
  if (p && p->open(g.version, sizeof g.version, why, len) != MXC_OK) p = NULL;
  return p;
}

/* ---- the setup, on the communication thread ---- */

typedef struct setup {
  int rank, size, dev;
  int can;                /* this rank can use NCCL */
  char mine[WHY_LEN];     /* why not, here */
  unsigned char id[MXC__NCCL_ID_BYTES];
} setup;

/* Step 1: is every rank able? buf: [ranks unable, ranks with it off]. */
static int all_able(setup *s, int *go, char *why, size_t len) {
  int64_t buf[2] = {!s->can, !s->can && wanted() == 0};
  MXC_FORWARD_IF_ERROR(mxc__kv_dist_sum_here(buf, 2, why, len));
  *go = buf[0] == 0;
  if (*go) return MXC_OK;
  if (buf[1] > 0) {
    snprintf(g.why, sizeof g.why, "MXC_KVSTORE_NCCL=0 on %lld rank(s)",
             (long long)buf[1]);
  } else if (!s->can) {
    snprintf(g.why, sizeof g.why, "%s; NCCL is unusable on %lld rank(s)",
             s->mine, (long long)buf[0]);
  } else {
    snprintf(g.why, sizeof g.why, "NCCL is unusable on %lld other rank(s)",
             (long long)buf[0]);
  }
  return MXC_OK;
}

/* Step 2: rank 0's id on every rank (a sum in which the others add
 * zeros: rank 0's bytes exactly). */
static int share_id(setup *s, int *go, char *why, size_t len) {
  int64_t buf[ID_WORDS + 1] = {0};
  if (s->rank == 0) {
    int rc = g.p->unique_id(s->id, s->mine, sizeof s->mine);
    if (rc == MXC_OK) memcpy(buf, s->id, sizeof s->id);
    buf[ID_WORDS] = rc != MXC_OK;
  }
  MXC_FORWARD_IF_ERROR(mxc__kv_dist_sum_here(buf, ID_WORDS + 1, why, len));
  memcpy(s->id, buf, sizeof s->id);
  *go = buf[ID_WORDS] == 0;
  if (!*go) {
    snprintf(g.why, sizeof g.why, "ncclGetUniqueId failed on rank 0%s%s",
             s->rank == 0 ? ": " : "", s->rank == 0 ? s->mine : "");
  }
  return MXC_OK;
}

/* Step 3: a communicator on every rank, or on none. */
static int all_joined(setup *s, int *go, char *why, size_t len) {
  void *comm = NULL;
  int rc = g.p->comm_init(s->id, s->size, s->rank, s->dev, &comm, s->mine,
                          sizeof s->mine);
  int64_t failed = rc != MXC_OK;
  MXC_FORWARD_IF_ERROR(mxc__kv_dist_sum_here(&failed, 1, why, len));
  *go = failed == 0;
  if (*go) {
    g.comm = comm;
    return MXC_OK;
  }
  g.p->comm_destroy(comm, 1);
  if (rc != MXC_OK) {
    snprintf(g.why, sizeof g.why,
             "the NCCL communicator could not be made here: %s (failed on "
             "%lld rank(s))",
             s->mine, (long long)failed);
  } else {
    snprintf(g.why, sizeof g.why,
             "the NCCL communicator could not be made on %lld other "
             "rank(s)",
             (long long)failed);
  }
  return MXC_OK;
}

/* An MPI failure during the setup turns NCCL off too (and fails the
 * call that asked for it). */
static int run_setup(void *arg, char *why, size_t len) {
  setup *s = arg;
  int go = 1;
  int rc = all_able(s, &go, why, len);
  if (rc == MXC_OK && go) rc = share_id(s, &go, why, len);
  if (rc == MXC_OK && go) rc = all_joined(s, &go, why, len);
  if (rc != MXC_OK) snprintf(g.why, sizeof g.why, "its setup failed: %s", why);
  atomic_store(&g.state, rc == MXC_OK && go ? ON : OFF);
  return rc;
}

static void log_choice(const mxc__kvstore *kv) {
  if (atomic_load(&g.state) == ON) {
    mxc__log(MXC_LOG_INFO,
             "kvstore: rank %d of %d sums the GPU values of dist_sync pushes "
             "on gpu(%d) with %s",
             kv->rank, kv->size, g.dev, g.version);
  } else {
    mxc__log(MXC_LOG_WARNING,
             "kvstore: rank %d of %d: NCCL is not used (%s); GPU values are "
             "copied to host memory and summed over MPI",
             kv->rank, kv->size, g.why);
  }
}

/* The setup, once per process, from the first call that qualifies. */
static int set_up(const mxc__kvstore *kv, int dev) {
  setup s = {.rank = kv->rank, .size = kv->size, .dev = dev};
  g.dev = dev;
  if (wanted() == 0) {
    snprintf(s.mine, sizeof s.mine, "MXC_KVSTORE_NCCL=0");
  } else {
    g.p = open_table(s.mine, sizeof s.mine);
    s.can = g.p != NULL;
  }
  int rc = mxc__kv_dist_call(run_setup, &s, "NCCL setup");
  log_choice(kv);
  return rc;
}

/* ---- the choice per call ---- */

/* The GPU every value is on, or -1. */
static int common_gpu(int n, mxc__ndarray *const *vals) {
  int dev = -1;
  for (int i = 0; i < n; ++i) {
    if (!mxc__kv_on_gpu(vals[i])) return -1;
    int d = vals[i]->chunk->dev.id;
    if (dev >= 0 && d != dev) return -1;
    dev = d;
  }
  return dev;
}

static int same_key(mxc__kv_keys keys, int i, int j) {
  if (keys.ints) return keys.ints[i] == keys.ints[j];
  return keys.strs[i] && keys.strs[j] && strcmp(keys.strs[i], keys.strs[j]) == 0;
}

/* 1 when a key appears twice (its values would be summed first). */
static int repeats_a_key(int n, mxc__kv_keys keys) {
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (same_key(keys, i, j)) return 1;
    }
  }
  return 0;
}

static int refuse(int dev) {
  if (atomic_load(&g.state) == ON) {
    return mxc__error_set(
        MXC_ERR_UNSUPPORTED,
        "push with MXC_KVSTORE_NCCL=1: the values are on gpu(%d), and "
        "NCCL's communicator is on gpu(%d) (one GPU per process)",
        dev, g.dev);
  }
  return mxc__error_set(MXC_ERR_UNSUPPORTED,
                        "push with MXC_KVSTORE_NCCL=1: NCCL cannot be used: "
                        "%s",
                        g.why);
}

int mxc__kv_nccl_route(const mxc__kvstore *kv, int n, mxc__kv_keys keys,
                       mxc__ndarray *const *vals, int *use) {
  *use = 0;
  int dev = kv->dist && n > 0 && vals ? common_gpu(n, vals) : -1;
  if (dev < 0 || (!keys.ints && !keys.strs) || repeats_a_key(n, keys)) {
    return MXC_OK; /* the host path, which also reports bad arguments */
  }
  int rc = MXC_OK;
  pthread_mutex_lock(&g.lock);
  if (atomic_load(&g.state) == UNDECIDED) rc = set_up(kv, dev);
  pthread_mutex_unlock(&g.lock);
  MXC_FORWARD_IF_ERROR(rc);
  *use = atomic_load(&g.state) == ON && dev == g.dev;
  return *use || wanted() != 2 ? MXC_OK : refuse(dev);
}

int mxc__kv_nccl_direct_ok(const mxc__ndarray *out) {
  return atomic_load(&g.state) == ON && mxc__kv_on_gpu(out) &&
         out->chunk->dev.id == g.dev;
}

/* ---- on the communication thread ---- */

int mxc__kv_nccl_allreduce(const void *send, void *recv, int64_t count,
                           int dtype, void *host, char *why, size_t why_len) {
  if (count == 0) return MXC_OK;
  return g.p->allreduce(g.comm, send, recv, count, dtype, host, why,
                        why_len);
}

void mxc__kv_nccl_end(int abort) {
  if (atomic_load(&g.state) != ON) return;
  g.p->comm_destroy(g.comm, abort);
  g.comm = NULL;
  snprintf(g.why, sizeof g.why, "MPI was finalized");
  atomic_store(&g.state, OFF);
}
