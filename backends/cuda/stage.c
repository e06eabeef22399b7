/* Staged copies of pageable host memory (stage.h). */
#include "backends/cuda/stage.h"

#include <string.h>

#include "mxc/mxc.h"

/* Waits until slot s may be written (its last DMA is done). */
static int claim(mxc__stage *st, int s) {
  if (!st->busy[s]) return MXC_OK;
  int rc = st->wait(st->ctx, s);
  if (rc == MXC_OK) st->busy[s] = 0;
  return rc;
}

static size_t chunk_at(const mxc__stage *st, size_t off, size_t n) {
  return n - off < st->chunk ? n - off : st->chunk;
}

int mxc__stage_to_device(mxc__stage *st, void *dst, const void *src, size_t n) {
  int rc = MXC_OK;
  for (size_t off = 0, i = 0; rc == MXC_OK && off < n; ++i) {
    int s = (int)(i & 1u);
    size_t len = chunk_at(st, off, n);
    rc = claim(st, s);
    if (rc != MXC_OK) break;
    memcpy(st->slot[s], (const char *)src + off, len);
    rc = st->dma(st->ctx, (char *)dst + off, st->slot[s], len, 1);
    if (rc == MXC_OK) rc = st->mark(st->ctx, s);
    st->busy[s] = 1; /* even when marking failed: wait before reuse */
    off += len;
  }
  return rc;
}

/* Copies the chunk that slot s received (after its mark) to the host. */
static int drain_chunk(mxc__stage *st, int s, void *dst, size_t len) {
  int rc = claim(st, s);
  if (rc == MXC_OK) memcpy(dst, st->slot[s], len);
  return rc;
}

int mxc__stage_to_host(mxc__stage *st, void *dst, const void *src, size_t n) {
  int rc = MXC_OK;
  size_t prev_off = 0, prev_len = 0;
  for (size_t off = 0, i = 0; rc == MXC_OK && off < n; ++i) {
    int s = (int)(i & 1u);
    size_t len = chunk_at(st, off, n);
    rc = claim(st, s);
    if (rc == MXC_OK)
      rc = st->dma(st->ctx, st->slot[s], (const char *)src + off, len, 0);
    if (rc == MXC_OK) rc = st->mark(st->ctx, s);
    st->busy[s] = 1;
    /* The chunk before this one, while this one's DMA runs. */
    if (rc == MXC_OK && prev_len > 0) {
      rc = drain_chunk(st, s ^ 1, (char *)dst + prev_off, prev_len);
    }
    prev_off = off;
    prev_len = len;
    off += len;
  }
  if (rc == MXC_OK && prev_len > 0) {
    int last = (int)(((n + st->chunk - 1) / st->chunk - 1) & 1u);
    rc = drain_chunk(st, last, (char *)dst + prev_off, prev_len);
  }
  return rc;
}

int mxc__stage_drain(mxc__stage *st) {
  int rc0 = claim(st, 0);
  int rc1 = claim(st, 1);
  return rc0 != MXC_OK ? rc0 : rc1;
}
