/* The fake GPU plug-in's NCCL table (core/base/nccl_plugin.h), so that
 * the KVStore's NCCL path runs on machines without GPUs: across the ranks
 * of a real MPI job (tests/kvstore:test_dist_np*), or in one process with
 * a single-rank job (tests/kvstore:test_kvstore_gpu).
 *
 * How it reduces: rank 0's "unique id" names a shared memory file that
 * it creates; every rank maps it in comm_init. An allreduce goes through
 * it in chunks: each rank copies its chunk out of fake device memory
 * (through the fake's own copy, which alone may touch it) into its slot,
 * a barrier, every rank sums the slots in rank order (so every rank gets
 * the same bits, as NCCL promises for one communicator), a barrier, and
 * the sum is copied into the receiving device array and, if asked, into
 * host memory. The barriers give up after 60 s (a test must not hang).
 *
 * Modes (MXC_FAKE_NCCL): unset or "ok"; "missing" (open fails as without
 * libnccl.so.2); "old" (open fails as with NCCL 2.3); "init_fail" (rank
 * 1's comm_init fails, after the others could complete theirs);
 * "async_error" (every allreduce fails as after a peer's failure). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/base/gpu_plugin.h"
#include "core/base/nccl_plugin.h"

#define MAX_RANKS 8
#define SLOT (64 << 10) /* bytes per rank and chunk */
#define TIMEOUT_S 60

typedef struct shm_hdr {
  atomic_int arrived;
  atomic_int count; /* at the barrier */
  atomic_uint gen;  /* barriers passed */
} shm_hdr;

#define SHM_BYTES (4096 + (size_t)MAX_RANKS * SLOT)

typedef struct fcomm {
  char *base; /* SHM_BYTES, the header first */
  int nranks, rank, dev;
} fcomm;

static atomic_int g_allreduces;
static atomic_int g_files;

static int mode_is(const char *m) {
  const char *v = getenv("MXC_FAKE_NCCL");
  return v && strcmp(v, m) == 0;
}

static int fake_open(char *version, size_t len, char *why, size_t why_len) {
  if (mode_is("missing")) {
    snprintf(why, why_len,
             "NCCL could not be loaded (libnccl.so.2: cannot open shared "
             "object file: No such file or directory); install NVIDIA's "
             "NCCL 2 (fake)");
    return MXC_ERR_UNSUPPORTED;
  }
  if (mode_is("old")) {
    snprintf(why, why_len, "NCCL 2.3.7 (libnccl.so.2) is not NCCL 2.4 or a "
             "later 2.x, which the plug-in needs (fake)");
    return MXC_ERR_UNSUPPORTED;
  }
  snprintf(version, len, "NCCL 2.99.0 (fake)");
  return MXC_OK;
}

static shm_hdr *hdr(fcomm *c) { return (shm_hdr *)c->base; }

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void nap(void) {
  struct timespec t = {0, 50000};
  nanosleep(&t, NULL);
}

/* Every rank of c; 0 after TIMEOUT_S. */
static int barrier(fcomm *c) {
  shm_hdr *h = hdr(c);
  unsigned gen = atomic_load(&h->gen);
  if (atomic_fetch_add(&h->count, 1) == c->nranks - 1) {
    atomic_store(&h->count, 0);
    atomic_fetch_add(&h->gen, 1);
    return 1;
  }
  double t0 = now_s();
  while (atomic_load(&h->gen) == gen) {
    if (now_s() - t0 > TIMEOUT_S) return 0;
    nap();
  }
  return 1;
}

static int fake_unique_id(unsigned char *id, char *why, size_t why_len) {
  char path[MXC__NCCL_ID_BYTES];
  snprintf(path, sizeof path, "/dev/shm/mxc-fake-nccl-%d-%d", (int)getpid(),
           atomic_fetch_add(&g_files, 1));
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)SHM_BYTES) != 0) {
    snprintf(why, why_len, "fake NCCL: %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return MXC_ERR_INTERNAL;
  }
  close(fd);
  memset(id, 0, MXC__NCCL_ID_BYTES);
  memcpy(id, path, strlen(path));
  return MXC_OK;
}

/* Maps the id's file; every rank arrives, then rank 0 removes the name. */
static int join(fcomm *c, const unsigned char *id, char *why, size_t len) {
  char path[MXC__NCCL_ID_BYTES + 1] = "";
  memcpy(path, id, MXC__NCCL_ID_BYTES);
  int fd = open(path, O_RDWR);
  void *p = fd >= 0 ? mmap(NULL, SHM_BYTES, PROT_READ | PROT_WRITE,
                           MAP_SHARED, fd, 0)
                    : MAP_FAILED;
  if (fd >= 0) close(fd);
  if (p == MAP_FAILED) {
    snprintf(why, len, "fake NCCL: %s: %s", path, strerror(errno));
    return MXC_ERR_INTERNAL;
  }
  c->base = p;
  atomic_fetch_add(&hdr(c)->arrived, 1);
  double t0 = now_s();
  while (atomic_load(&hdr(c)->arrived) < c->nranks) {
    if (now_s() - t0 > TIMEOUT_S) {
      snprintf(why, len, "fake NCCL: not every rank joined in %d s",
               TIMEOUT_S);
      return MXC_ERR_INTERNAL;
    }
    nap();
  }
  if (c->rank == 0) unlink(path);
  return MXC_OK;
}

static int fake_comm_init(const unsigned char *id, int nranks, int rank,
                          int dev, void **out, char *why, size_t why_len) {
  *out = NULL;
  fcomm *c = calloc(1, sizeof *c);
  if (!c || nranks > MAX_RANKS) {
    free(c);
    snprintf(why, why_len, "fake NCCL: at most %d ranks", MAX_RANKS);
    return MXC_ERR_UNSUPPORTED;
  }
  *c = (fcomm){.nranks = nranks, .rank = rank, .dev = dev};
  int rc = join(c, id, why, why_len);
  if (rc == MXC_OK && mode_is("init_fail") && rank == 1) {
    snprintf(why, why_len, "ncclCommInitRank: unhandled system error "
             "(fake, rank 1 only)");
    rc = MXC_ERR_INTERNAL;
  }
  if (rc != MXC_OK) {
    if (c->base) munmap(c->base, SHM_BYTES);
    free(c);
    return rc;
  }
  *out = c;
  return MXC_OK;
}

static size_t dtype_bytes(int dtype) {
  return dtype == MXC_DTYPE_FLOAT32 || dtype == MXC_DTYPE_INT32 ? 4 : 8;
}

#define SUM_SLOTS(T, ADD)                                             \
  do {                                                                \
    T *o = out;                                                       \
    for (size_t i = 0; i < n; ++i) o[i] = ((const T *)slots[0])[i];   \
    for (int r = 1; r < nranks; ++r) {                                \
      const T *s = (const T *)slots[r];                               \
      for (size_t i = 0; i < n; ++i) o[i] = ADD(o[i], s[i]);          \
    }                                                                 \
  } while (0)
#define ADD_F(a, b) ((a) + (b))
#define ADD_U32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_U64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))

/* out = slot 0 + slot 1 + ... (n elements), integers wrapping around as
 * a GPU's do. */
static void sum_slots(void *out, char *const *slots, int nranks, size_t n,
                      int dtype) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: SUM_SLOTS(float, ADD_F); break;
    case MXC_DTYPE_FLOAT64: SUM_SLOTS(double, ADD_F); break;
    case MXC_DTYPE_INT32: SUM_SLOTS(int32_t, ADD_U32); break;
    default: SUM_SLOTS(int64_t, ADD_U64); break;
  }
}

/* One chunk of bytes at off. */
static int chunk(fcomm *c, const char *send, char *recv, char *host,
                 size_t off, size_t bytes, int dtype, char *out, char *why,
                 size_t len) {
  const mxc__gpu_plugin *t = mxc_gpu_plugin_v2();
  char *slots[MAX_RANKS];
  for (int r = 0; r < c->nranks; ++r) slots[r] = c->base + 4096 + r * SLOT;
  int rc = t->copy(slots[c->rank], MXC__GPU_HOST, send + off, c->dev, bytes,
                   why, len);
  if (rc != MXC_OK) return rc;
  if (!barrier(c)) goto timeout;
  sum_slots(out, slots, c->nranks, bytes / dtype_bytes(dtype), dtype);
  if (!barrier(c)) goto timeout;
  rc = t->copy(recv + off, c->dev, out, MXC__GPU_HOST, bytes, why, len);
  if (rc == MXC_OK && host) memcpy(host + off, out, bytes);
  return rc;
timeout:
  snprintf(why, len, "fake NCCL: rank %d waited %d s for the others",
           c->rank, TIMEOUT_S);
  return MXC_ERR_INTERNAL;
}

static int fake_allreduce(void *cm, const void *send, void *recv,
                          int64_t count, int dtype, void *host, char *why,
                          size_t why_len) {
  fcomm *c = cm;
  atomic_fetch_add(&g_allreduces, 1);
  if (mode_is("async_error")) {
    snprintf(why, why_len, "ncclAllReduce: remote process exited or there "
             "was a network error (ncclResult_t 6) (fake)");
    return MXC_ERR_INTERNAL;
  }
  static __thread char out[SLOT];
  size_t total = (size_t)count * dtype_bytes(dtype);
  for (size_t off = 0; off < total; off += SLOT) {
    size_t bytes = total - off < SLOT ? total - off : SLOT;
    int rc = chunk(c, send, recv, host, off, bytes, dtype, out, why,
                   why_len);
    if (rc != MXC_OK) return rc;
  }
  return MXC_OK;
}

static void fake_comm_destroy(void *cm, int abort) {
  (void)abort;
  fcomm *c = cm;
  if (!c) return;
  munmap(c->base, SHM_BYTES);
  free(c);
}

static const mxc__nccl_plugin k_table = {
    .abi = MXC__NCCL_PLUGIN_ABI,
    .size = sizeof(mxc__nccl_plugin),
    .mxc_version = MXC__NCCL_MXC_VERSION,
    .open = fake_open,
    .unique_id = fake_unique_id,
    .comm_init = fake_comm_init,
    .allreduce = fake_allreduce,
    .comm_destroy = fake_comm_destroy,
};

const mxc__nccl_plugin *mxc_nccl_plugin_v1(void) { return &k_table; }

/* For the tests: allreduces run through this table in this process. */
MXC_API int mxc_fake_nccl_allreduces(void);
int mxc_fake_nccl_allreduces(void) { return atomic_load(&g_allreduces); }
