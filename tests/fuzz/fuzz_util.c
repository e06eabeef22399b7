#include "tests/fuzz/fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mxc/mxc.h"

uint8_t fz_u8(fz_bytes *b) {
  if (b->n == 0) return 0;
  uint8_t v = *b->p++;
  b->n--;
  return v;
}

uint32_t fz_u32(fz_bytes *b) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | fz_u8(b);
  return v;
}

uint32_t fz_pick(fz_bytes *b, uint32_t n) {
  return n > 256 ? fz_u32(b) % n : fz_u8(b) % n;
}

const char *fz_str(fz_bytes *b, char *buf, size_t max) {
  size_t len = fz_u8(b);
  if (len > max) len = max;
  if (len > b->n) len = b->n;
  memcpy(buf, b->p, len);
  buf[len] = '\0';
  b->p += len;
  b->n -= len;
  return buf;
}

fz_bytes fz_split(fz_bytes *b) {
  size_t len = (size_t)fz_u8(b) << 8;
  len |= fz_u8(b);
  if (len > b->n) len = b->n;
  fz_bytes first = {b->p, len};
  b->p += len;
  b->n -= len;
  return first;
}

#define FZ_SLOTS 4

const char *fz_file(int slot, const uint8_t *data, size_t size) {
  static int fds[FZ_SLOTS] = {-1, -1, -1, -1};
  static char paths[FZ_SLOTS][64];
  if (slot < 0 || slot >= FZ_SLOTS) abort();
  if (fds[slot] < 0) {
    fds[slot] = memfd_create("mxc-fuzz", 0);
    if (fds[slot] < 0) {
      perror("fuzz: memfd_create");
      abort();
    }
    snprintf(paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fds[slot]);
  }
  if (ftruncate(fds[slot], 0) != 0) abort();
  if (size && pwrite(fds[slot], data, size, 0) != (ssize_t)size) abort();
  return paths[slot];
}

void fz_touch(mxc_ndarray arr) {
  int64_t n = 0;
  int dtype = 0;
  if (!arr || mxc_ndarray_size(arr, &n) != MXC_OK || n > (1 << 22) ||
      mxc_ndarray_dtype(arr, &dtype) != MXC_OK)
    return;
  size_t bytes = (size_t)n * (size_t)mxc_dtype_size(dtype);
  void *buf = malloc(bytes ? bytes : 1);
  if (buf) mxc_ndarray_copy_to_host(arr, buf, bytes);
  free(buf);
}

static void read_batch(mxc_data_iter it) {
  mxc_ndarray d = NULL, l = NULL;
  int64_t pad = 0;
  mxc_data_iter_pad(it, &pad);
  if (mxc_data_iter_data(it, &d) == MXC_OK) fz_touch(d);
  if (mxc_data_iter_label(it, &l) == MXC_OK) fz_touch(l);
  mxc_ndarray_free(d);
  mxc_ndarray_free(l);
}

void fz_iter_parts(mxc_data_iter it, uint8_t v) {
  if (v) (void)mxc_data_iter_set_parts(it, (v >> 4) - 1, (v & 15) - 1);
}

void fz_iter_drain(mxc_data_iter it, int max_batches) {
  int more = 0;
  for (int b = 0; b < max_batches; ++b) {
    if (mxc_data_iter_next(it, &more) != MXC_OK || !more) break;
    read_batch(it);
  }
  int64_t n = 0;
  mxc_data_iter_num_examples(it, &n);
  if (mxc_data_iter_reset(it) == MXC_OK &&
      mxc_data_iter_next(it, &more) == MXC_OK && more)
    read_batch(it);
}

static void quiet(int level, const char *msg, void *user) {
  (void)level;
  (void)msg;
  (void)user;
}

void fz_init(void) {
  static int done;
  if (done) return;
  done = 1;
  mxc_set_log_callback(quiet, NULL);
}
