/* RecordIO: a .rec file and an optional .idx cut from one input. Every
 * record is read (and parsed as an image record), every indexed key read,
 * and the records read are written again by mxc's writer and read back:
 * they must round-trip exactly (abort otherwise, a finding). */
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

#define MAX_RECORDS 256

static void unpack(mxc_recordio r, int64_t n) {
  const void *d;
  int64_t size, id, id2, off;
  float labels[4];
  int nl;
  if (mxc_recordio_data(r, &d, &size) != MXC_OK || size != n) abort();
  (void)mxc_recordio_unpack_image(d, size, labels, 4, &nl, &id, &id2, &off);
}

/* Writes record i of src to w. */
static void copy_record(mxc_recordio src, mxc_recordio w) {
  const void *d;
  int64_t n;
  if (mxc_recordio_data(src, &d, &n) != MXC_OK) abort();
  if (mxc_recordio_write(w, d, n) != MXC_OK) abort();
}

/* Reads the file sequentially, copying each record into w (may be NULL);
 * returns how many were read. */
static int read_all(mxc_recordio r, mxc_recordio w) {
  int count = 0;
  int64_t n;
  while (count < MAX_RECORDS && mxc_recordio_read(r, &n) == MXC_OK && n >= 0) {
    unpack(r, n);
    if (w) copy_record(r, w);
    count++;
  }
  return count;
}

static void read_keys(mxc_recordio r) {
  int64_t nk = 0, key, n;
  if (mxc_recordio_num_keys(r, &nk) != MXC_OK) abort();
  for (int64_t i = 0; i < nk && i < 64; ++i) {
    if (mxc_recordio_key(r, i, &key) != MXC_OK) abort();
    if (mxc_recordio_read_key(r, key, &n) == MXC_OK) unpack(r, n);
  }
}

/* The copy holds the same records as the source's first `count`. */
static void compare(const char *src_path, const char *copy_path, int count) {
  mxc_recordio a = NULL, b = NULL;
  if (mxc_recordio_open(src_path, NULL, "r", &a) != MXC_OK) abort();
  if (mxc_recordio_open(copy_path, NULL, "r", &b) != MXC_OK) abort();
  for (int i = 0; i < count; ++i) {
    const void *da, *db;
    int64_t na, nb;
    if (mxc_recordio_read(a, &na) != MXC_OK ||
        mxc_recordio_read(b, &nb) != MXC_OK || na != nb || na < 0)
      abort();
    mxc_recordio_data(a, &da, &na);
    mxc_recordio_data(b, &db, &nb);
    if (na && memcmp(da, db, (size_t)na) != 0) abort();
  }
  int64_t n;
  if (mxc_recordio_read(b, &n) != MXC_OK || n != -1) abort();
  mxc_recordio_free(a);
  mxc_recordio_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  uint8_t flags = fz_u8(&in);
  fz_bytes rec = fz_split(&in);
  const char *rpath = fz_file(0, rec.p, rec.n);
  const char *ipath = (flags & 1) ? fz_file(1, in.p, in.n) : NULL;
  const char *wpath = fz_file(2, NULL, 0);
  mxc_recordio r = NULL, w = NULL;
  if (mxc_recordio_open(rpath, ipath, "r", &r) != MXC_OK) return 0;
  if (mxc_recordio_open(wpath, NULL, "w", &w) != MXC_OK) abort();
  int count = read_all(r, w);
  if (mxc_recordio_flush(w) != MXC_OK) abort();
  mxc_recordio_free(w);
  read_keys(r);
  mxc_recordio_free(r);
  compare(rpath, wpath, count);
  return 0;
}
