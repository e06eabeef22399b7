/* "dist_sync" init: the ranks agree on what each key is.
 *
 * An init broadcasts rank 0's arrays into every rank's stored arrays.
 * The broadcast moves bytes, so a key that is 2x3 on one rank and 3x2 on
 * another, or float32 against int32, would pass unnoticed (and a
 * different byte count would end in an MPI error far from its cause).
 * So before anything is broadcast every rank describes its keys, the
 * descriptions are gathered on every rank, and every rank reaches the
 * same verdict from the same data: all ranks return an error, or none
 * does, and no rank is left waiting in a collective the others skipped.
 *
 * Two exchanges, both tiny: a header per rank (its own checks' result,
 * its number of keys, a hash of its descriptions); only when the hashes
 * differ, the descriptions themselves, to name the first key that
 * differs. Push and pull need no exchange: they are checked against the
 * stored array, which now has the same shape and dtype on every rank. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/kvstore/internal.h"

enum { H_OK, H_N, H_HASH, H_LEN };
enum { D_KIND, D_KEY, D_DTYPE, D_NDIM, D_DIMS, D_LEN = D_DIMS + MXC_MAX_NDIM };

/* FNV-1a over bytes: the same on every rank (no seed, no pointers). */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}
#define FNV_START 14695981039346656037ull

/* d[0 .. D_LEN) = key i's description. String keys travel as a hash:
 * enough to tell them apart. */
static void describe(mxc__kv_keys keys, mxc__ndarray *const *vals, int i,
                     int64_t *d) {
  memset(d, 0, D_LEN * sizeof *d);
  const char *s = keys.strs ? keys.strs[i] : NULL;
  d[D_KIND] = s != NULL;
  d[D_KEY] = s ? (int64_t)fnv(FNV_START, s, strlen(s)) : keys.ints[i];
  d[D_DTYPE] = vals[i]->dtype;
  d[D_NDIM] = vals[i]->shape.ndim;
  for (int k = 0; k < vals[i]->shape.ndim; ++k) {
    d[D_DIMS + k] = vals[i]->shape.dims[k];
  }
}

/* *out = the n descriptions (allocated), or NULL when n == 0. */
static int describe_all(int n, mxc__kv_keys keys, mxc__ndarray *const *vals,
                        int64_t **out) {
  *out = NULL;
  if (n == 0) return MXC_OK;
  int64_t *d = mxc__calloc((size_t)n * D_LEN, sizeof *d);
  MXC_RETURN_ERROR_IF(!d, MXC_ERR_OOM, "init: out of memory for %d keys", n);
  for (int i = 0; i < n; ++i) describe(keys, vals, i, d + (size_t)i * D_LEN);
  *out = d;
  return MXC_OK;
}

/* "2x3 float32", from a description. */
static void desc_str(const int64_t *d, char *buf, size_t len) {
  mxc__shape s = {.ndim = (int)d[D_NDIM]};
  for (int k = 0; k < s.ndim && k < MXC_MAX_NDIM; ++k) {
    s.dims[k] = d[D_DIMS + k];
  }
  char sh[128];
  const char *dt = mxc__dtype_name((int)d[D_DTYPE]);
  snprintf(buf, len, "%s %s", mxc__shape_str(&s, sh, sizeof sh),
           dt ? dt : "(unknown dtype)");
}

/* The error for argument i: here = this rank's description, there =
 * rank r's. */
static int differs(mxc__kv_keys keys, int i, const int64_t *here,
                   const int64_t *there, int r) {
  char what[160], a[192], b[192];
  mxc__kv_key k = {keys.strs ? keys.strs[i] : NULL,
                   keys.ints ? keys.ints[i] : 0};
  mxc__kv_key_str(&k, what, sizeof what);
  if (here[D_KIND] != there[D_KIND] || here[D_KEY] != there[D_KEY]) {
    return mxc__error_set(
        MXC_ERR_INVALID_ARGUMENT,
        "init across the job: argument %d is %s on this rank and %s on "
        "rank %d; every worker must init the same keys in the same order",
        i, what, there[D_KIND] ? "another string key" : "another key", r);
  }
  desc_str(here, a, sizeof a);
  desc_str(there, b, sizeof b);
  return mxc__error_set(
      here[D_DTYPE] != there[D_DTYPE] ? MXC_ERR_DTYPE : MXC_ERR_SHAPE,
      "init across the job: %s is %s on this rank and %s on rank %d; every "
      "worker must init a key with the same shape and dtype",
      what, a, b, r);
}

/* The first (argument, rank) whose description differs from this
 * rank's: gathered descriptions all[r * n * D_LEN ...]. */
static int compare(int n, mxc__kv_keys keys, const int64_t *mine,
                   const int64_t *all, int size) {
  for (int i = 0; i < n; ++i) {
    const int64_t *here = mine + (size_t)i * D_LEN;
    for (int r = 0; r < size; ++r) {
      const int64_t *there = all + ((size_t)r * n + i) * D_LEN;
      if (memcmp(here, there, D_LEN * sizeof *here) != 0) {
        return differs(keys, i, here, there, r);
      }
    }
  }
  /* Equal hashes of different data, or equal data of different hashes:
   * neither happens, but the verdict must still be an error on every
   * rank alike. */
  return mxc__error_set(MXC_ERR_INTERNAL, "init across the job: the key "
                        "descriptions' hashes differ but the descriptions "
                        "do not");
}

/* The verdict from the headers alone, or -1 when the descriptions must
 * be gathered (the hashes differ). MXC_OK when all agree. */
static int verdict_from_headers(const int64_t *h, int size, int me, int n,
                                int local_rc) {
  if (local_rc != MXC_OK) return local_rc; /* its own message stands */
  for (int r = 0; r < size; ++r) {
    MXC_RETURN_ERROR_IF(!h[r * H_LEN + H_OK], MXC_ERR_INVALID_ARGUMENT,
                        "init across the job: rank %d's init failed (its "
                        "own error says why); nothing was initialised",
                        r);
  }
  for (int r = 0; r < size; ++r) {
    MXC_RETURN_ERROR_IF(h[r * H_LEN + H_N] != n, MXC_ERR_INVALID_ARGUMENT,
                        "init across the job: n = %d on this rank (%d) "
                        "and n = %" PRId64 " on rank %d; every worker must "
                        "init the same keys in the same order",
                        n, me, h[r * H_LEN + H_N], r);
  }
  for (int r = 0; r < size; ++r) {
    if (h[r * H_LEN + H_HASH] != h[me * H_LEN + H_HASH]) return -1;
  }
  return MXC_OK;
}

static int gather_and_compare(int n, mxc__kv_keys keys, const int64_t *mine,
                              int size) {
  int64_t *all = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__kv_dist_allgather(mine, (int64_t)n * D_LEN, &all));
  int rc = compare(n, keys, mine, all, size);
  mxc__free(all);
  return rc;
}

int mxc__kv_dist_agree_init(const mxc__kvstore *kv, int n,
                            mxc__kv_keys keys, mxc__ndarray *const *vals,
                            int local_rc) {
  int64_t *mine = NULL;
  /* Out of memory here is this rank's failure, told to the others in
   * the header like any other. */
  if (local_rc == MXC_OK) local_rc = describe_all(n, keys, vals, &mine);
  int ok = local_rc == MXC_OK;
  uint64_t hash = mine ? fnv(FNV_START, mine, (size_t)n * D_LEN * 8) : 0;
  int64_t header[H_LEN] = {ok, ok ? n : 0, (int64_t)hash};
  int64_t *h = NULL;
  int rc = mxc__kv_dist_allgather(header, H_LEN, &h);
  if (rc == MXC_OK) {
    rc = verdict_from_headers(h, kv->size, kv->rank, n, local_rc);
    mxc__free(h);
  }
  if (rc == -1) rc = gather_and_compare(n, keys, mine, kv->size);
  mxc__free(mine);
  return rc;
}
