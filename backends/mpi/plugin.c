/* The MPI plug-in, libmxc_mpi.so.1: the table of core/kvstore/mpi_plugin.h
 * over MPI (Debian's Open MPI 4.1).
 *
 * The sum is mxc's own ring, not MPI_Allreduce: MPI leaves the order in
 * which an allreduce adds the ranks' values to the implementation, and
 * with recursive doubling or Rabenseifner's algorithm each rank adds them
 * in its own order, so floating-point sums may differ in the last bit
 * between ranks, and parameters drift apart over many steps. In the ring,
 * each of the n chunks of the buffer is summed on one rank only, in the
 * order c, c+1, ..., c+n-1 (mod n) of ranks, for chunk c; the all-gather
 * then copies the finished chunks. Every rank thus holds the same bits,
 * and the order depends on count and n alone. Each rank sends and
 * receives 2 (n-1)/n of the buffer, as a bandwidth-optimal allreduce
 * does. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kvstore/mpi_plugin.h"

/* One communicator of our own: the job's other MPI users never see our
 * messages. */
static MPI_Comm g_comm = MPI_COMM_NULL;
static int g_rank, g_size;

#define PIECE_BYTES ((int64_t)1 << 30) /* MPI counts are int */

static int mpi_failed(int err, const char *what, char *why, size_t why_len) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS) {
    snprintf(msg, sizeof msg, "MPI error %d", err);
  }
  snprintf(why, why_len, "%s failed on rank %d of %d: %s", what, g_rank,
           g_size, msg);
  return MXC_ERR_IO;
}

static const char *library(void) {
  static char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) return "MPI";
  char *nl = strchr(v, '\n');
  if (nl) *nl = '\0';
  return v;
}

static int init(int *rank, int *size, char *why, size_t why_len) {
  int provided = 0, err = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED,
                                          &provided);
  if (err != MPI_SUCCESS) {
    mpi_failed(err, "MPI_Init_thread", why, why_len);
    return MXC_ERR_UNSUPPORTED;
  }
  if (provided < MPI_THREAD_FUNNELED) {
    snprintf(why, why_len,
             "MPI provides thread level %d; the kvstore needs "
             "MPI_THREAD_FUNNELED (%d)",
             provided, MPI_THREAD_FUNNELED);
    return MXC_ERR_UNSUPPORTED;
  }
  /* Errors come back as codes (and become messages) instead of
   * aborting the job from inside MPI. */
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  MPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(g_comm, &g_rank);
  MPI_Comm_size(g_comm, &g_size);
  *rank = g_rank;
  *size = g_size;
  return MXC_OK;
}

/* ---- the ring ---- */

/* dst[i] = x[i] + y[i]: this rank's value first, the received one second
 * (IEEE addition is commutative, so the bits do not depend on it). dst
 * may be x. */
typedef void (*add_fn)(void *dst, const void *x, const void *y, int64_t n);

static void add_f32(void *d, const void *x, const void *y, int64_t n) {
  float *o = d;
  const float *a = x, *b = y;
  for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
}
static void add_f64(void *d, const void *x, const void *y, int64_t n) {
  double *o = d;
  const double *a = x, *b = y;
  for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
}
/* Integers wrap around, as the local sums do. */
static void add_i32(void *d, const void *x, const void *y, int64_t n) {
  uint32_t *o = d;
  const uint32_t *a = x, *b = y;
  for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
}
static void add_i64(void *d, const void *x, const void *y, int64_t n) {
  uint64_t *o = d;
  const uint64_t *a = x, *b = y;
  for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
}

static int dtype_ops(int dtype, size_t *esz, add_fn *add, MPI_Datatype *t) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: *esz = 4, *add = add_f32, *t = MPI_FLOAT; break;
    case MXC_DTYPE_FLOAT64: *esz = 8, *add = add_f64, *t = MPI_DOUBLE; break;
    case MXC_DTYPE_INT32: *esz = 4, *add = add_i32, *t = MPI_INT32_T; break;
    case MXC_DTYPE_INT64: *esz = 8, *add = add_i64, *t = MPI_INT64_T; break;
    default: return 0;
  }
  return 1;
}

/* Chunk c of count elements split in g_size: [begin, end). */
static int64_t chunk_begin(int64_t count, int c) {
  return count / g_size * c + (c < count % g_size ? c : count % g_size);
}
static int64_t chunk_len(int64_t count, int c) {
  return count / g_size + (c < count % g_size ? 1 : 0);
}

/* Sends sbuf (sbytes) to the right neighbour while receiving rbytes from
 * the left one, in pieces MPI's int counts can express. Both sides cut
 * the same chunk the same way, so the pieces match. Every step makes at
 * least one exchange, empty chunks included: a step skipped on one side
 * would let the neighbour's empty receive match the next step's data. */
static int shift(const char *sbuf, int64_t sbytes, char *rbuf, int64_t rbytes,
                 char *why, size_t why_len) {
  int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  for (int64_t off = 0; off == 0 || off < sbytes || off < rbytes;
       off += PIECE_BYTES) {
    int64_t s = sbytes - off, r = rbytes - off;
    s = s < 0 ? 0 : s > PIECE_BYTES ? PIECE_BYTES : s;
    r = r < 0 ? 0 : r > PIECE_BYTES ? PIECE_BYTES : r;
    int err = MPI_Sendrecv(sbuf + (s ? off : 0), (int)s, MPI_BYTE, right, 7,
                           rbuf + (r ? off : 0), (int)r, MPI_BYTE, left, 7,
                           g_comm, MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS) {
      return mpi_failed(err, "MPI_Sendrecv (ring allreduce)", why, why_len);
    }
  }
  return MXC_OK;
}

/* The ring reads this rank's values from src and writes the sums into buf
 * (src may be buf): a reduce-scatter step adds src's chunk and the
 * received piece straight into buf, and every chunk of buf is written
 * once, by that add or by the all-gather, so the caller needs no copy of
 * its values into buf first. `also` gets each finished piece too, copied
 * while it is in cache: a pushpull's output without a pull's second pass
 * over the whole buffer. */
typedef struct ring {
  const char *src;
  char *buf, *tmp;
  char *also; /* NULL, or a second destination (see deliver) */
  int64_t count;
  size_t esz;
  add_fn add;
} ring;

/* Segments of a reduce-scatter step: the received piece is added while
 * it is still in cache (a whole chunk of a 64 MiB buffer is not, and the
 * add then read it back from memory). Every rank makes the same number
 * of exchanges per step, sized by the largest chunk (chunk 0), so the
 * neighbours' calls pair up even where one side's piece is empty. The
 * order of the additions, element by element, is unchanged. */
#define SEGMENT_BYTES ((int64_t)64 << 10)

static int64_t n_segments(const ring *g, int64_t *seg_elems) {
  *seg_elems = SEGMENT_BYTES / (int64_t)g->esz;
  int64_t most = chunk_len(g->count, 0);
  return most == 0 ? 1 : (most + *seg_elems - 1) / *seg_elems;
}

/* Elements [k * seg, (k + 1) * seg) of a chunk of len, clipped. */
static int64_t piece(int64_t len, int64_t seg, int64_t k, int64_t *off) {
  *off = k * seg < len ? k * seg : len;
  int64_t n = len - *off;
  return n < seg ? n : seg;
}

/* Step s sends chunk sc (this rank's own values at step 0, from src;
 * after that the partial sum it received and added at step s - 1, in
 * buf) and receives chunk rc_, which no step has written yet: its sum is
 * src's chunk plus the received piece. */
/* bytes of buf at off are final: copied to also (if any). Every read of
 * src at off came before (a chunk's src is read when it is received in
 * the reduce-scatter, or sent at its first step), so also may be src. */
static void deliver(const ring *g, int64_t off, int64_t bytes) {
  if (g->also && bytes) memcpy(g->also + off, g->buf + off, (size_t)bytes);
}

static int reduce_step(const ring *g, int s, int sc, int rc_, char *why,
                       size_t why_len) {
  int64_t seg, nseg = n_segments(g, &seg), esz = (int64_t)g->esz;
  int64_t slen = chunk_len(g->count, sc), rlen = chunk_len(g->count, rc_);
  const char *sbase =
      (s == 0 ? g->src : g->buf) + chunk_begin(g->count, sc) * esz;
  int64_t rbegin = chunk_begin(g->count, rc_) * esz;
  for (int64_t k = 0; k < nseg; ++k) {
    int64_t so, ro, sn = piece(slen, seg, k, &so),
                    rn = piece(rlen, seg, k, &ro);
    int rc = shift(sbase + so * esz, sn * esz, g->tmp, rn * esz, why, why_len);
    if (rc != MXC_OK) return rc;
    g->add(g->buf + rbegin + ro * esz, g->src + rbegin + ro * esz, g->tmp, rn);
    if (s == g_size - 2) deliver(g, rbegin + ro * esz, rn * esz);
  }
  return MXC_OK;
}

static int reduce_scatter(const ring *g, char *why, size_t why_len) {
  for (int s = 0; s < g_size - 1; ++s) {
    int sc = (g_rank - s + 2 * g_size) % g_size;
    int rc_ = (g_rank - s - 1 + 2 * g_size) % g_size;
    int rc = reduce_step(g, s, sc, rc_, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  return MXC_OK;
}

/* One all-gather step, in the reduce-scatter's segments, so that each
 * received piece is copied to also while in cache. Always segmented, with
 * or without also: the exchanges must pair up with the neighbours', whose
 * calls may differ in also (a push and a pull on one rank, a pushpull on
 * another). */
static int gather_step(const ring *g, int sc, int rc_, char *why,
                       size_t why_len) {
  int64_t esz = (int64_t)g->esz, seg, nseg = n_segments(g, &seg);
  int64_t slen = chunk_len(g->count, sc), rlen = chunk_len(g->count, rc_);
  int64_t sbegin = chunk_begin(g->count, sc) * esz;
  int64_t rbegin = chunk_begin(g->count, rc_) * esz;
  for (int64_t k = 0; k < nseg; ++k) {
    int64_t so, ro, sn = piece(slen, seg, k, &so), rn = piece(rlen, seg, k, &ro);
    int rc = shift(g->buf + sbegin + so * esz, sn * esz,
                   g->buf + rbegin + ro * esz, rn * esz, why, why_len);
    if (rc != MXC_OK) return rc;
    deliver(g, rbegin + ro * esz, rn * esz);
  }
  return MXC_OK;
}

static int all_gather(const ring *g, char *why, size_t why_len) {
  for (int s = 0; s < g_size - 1; ++s) {
    int sc = (g_rank + 1 - s + 2 * g_size) % g_size;
    int rc_ = (g_rank - s + 2 * g_size) % g_size;
    int rc = gather_step(g, sc, rc_, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  return MXC_OK;
}

static int allreduce(const void *src, void *buf, void *also, int64_t count,
                     int dtype, char *why, size_t why_len) {
  ring g = {.src = src, .buf = buf, .also = also, .count = count};
  MPI_Datatype t;
  if (!dtype_ops(dtype, &g.esz, &g.add, &t)) {
    snprintf(why, why_len, "allreduce of dtype %d", dtype);
    return MXC_ERR_UNSUPPORTED;
  }
  if (g_size == 1 || count == 0) {
    if (src != buf) memcpy(buf, src, (size_t)count * g.esz);
    deliver(&g, 0, count * (int64_t)g.esz);
    return MXC_OK;
  }
  int64_t seg, most = chunk_len(count, 0);
  (void)n_segments(&g, &seg);
  g.tmp = malloc((size_t)(most < seg ? most : seg) * g.esz);
  if (!g.tmp) {
    snprintf(why, why_len, "out of memory for the ring's chunk");
    return MXC_ERR_OOM;
  }
  int rc = reduce_scatter(&g, why, why_len);
  if (rc == MXC_OK) rc = all_gather(&g, why, why_len);
  free(g.tmp);
  return rc;
}

static int allreduce_mpi(void *buf, int64_t count, int dtype, char *why,
                         size_t why_len) {
  size_t esz;
  add_fn add;
  MPI_Datatype t;
  if (!dtype_ops(dtype, &esz, &add, &t) || count > INT_MAX) {
    snprintf(why, why_len, "MPI_Allreduce of %lld elements of dtype %d",
             (long long)count, dtype);
    return MXC_ERR_UNSUPPORTED;
  }
  int err = MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, t, MPI_SUM, g_comm);
  return err == MPI_SUCCESS ? MXC_OK
                            : mpi_failed(err, "MPI_Allreduce", why, why_len);
}

static int broadcast(void *buf, int64_t nbytes, int root, char *why,
                     size_t why_len) {
  for (int64_t off = 0; off < nbytes; off += PIECE_BYTES) {
    int64_t n = nbytes - off > PIECE_BYTES ? PIECE_BYTES : nbytes - off;
    int err = MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, g_comm);
    if (err != MPI_SUCCESS) return mpi_failed(err, "MPI_Bcast", why, why_len);
  }
  return MXC_OK;
}

static int barrier(char *why, size_t why_len) {
  int err = MPI_Barrier(g_comm);
  return err == MPI_SUCCESS ? MXC_OK
                            : mpi_failed(err, "MPI_Barrier", why, why_len);
}

static void abort_job(int code) {
  MPI_Abort(g_comm != MPI_COMM_NULL ? g_comm : MPI_COMM_WORLD, code);
}

static void finalize(void) {
  if (g_comm != MPI_COMM_NULL) MPI_Comm_free(&g_comm);
  MPI_Finalize();
}

const mxc__mpi_plugin *mxc_mpi_plugin_v1(void) {
  static const mxc__mpi_plugin k_table = {
      .abi = MXC__MPI_PLUGIN_ABI,
      .size = sizeof(mxc__mpi_plugin),
      .mxc_version = MXC__MPI_MXC_VERSION,
      .library = library,
      .init = init,
      .allreduce = allreduce,
      .allreduce_mpi = allreduce_mpi,
      .broadcast = broadcast,
      .barrier = barrier,
      .abort = abort_job,
      .finalize = finalize,
  };
  return &k_table;
}
