/* DLPack import of malformed tensors: every field of a DLManagedTensor
 * (device, ndim, dtype code/bits/lanes, shape, strides, byte offset, data
 * pointer) from the input. Checked beyond survival:
 *  - a refused tensor is never released (its deleter is not called);
 *  - an accepted tensor is released exactly once, after the array is
 *    freed (abort otherwise; LSan reports one never released);
 *  - an accepted tensor's data is read only when the harness, computing
 *    the extent independently, knows its buffer covers it. */
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

#define BUF_BYTES 4096
#define MAX_DIMS 12

typedef struct owned {
  DLManagedTensor t;
  int64_t shape[MAX_DIMS];
  int64_t strides[MAX_DIMS];
  uint8_t buf[BUF_BYTES];
  int deleted;
} owned;

static void release(DLManagedTensor *t) {
  owned *o = t->manager_ctx;
  if (o->deleted++) {
    fprintf(stderr, "fuzz_dlpack: deleter called twice\n");
    abort();
  }
  free(o);
}

/* Mostly small values, sometimes any 64-bit value. */
static int64_t extent(fz_bytes *b) {
  uint8_t k = fz_u8(b);
  if (k < 200) return k % 8;
  return (int64_t)((uint64_t)fz_u32(b) << 32 | fz_u32(b));
}

static void fill(fz_bytes *b, owned *o) {
  static const int devs[] = {kDLCPU, kDLCUDA, kDLCUDAHost, kDLExtDev, 0, 99};
  DLTensor *d = &o->t.dl_tensor;
  d->device.device_type = (DLDeviceType)devs[fz_pick(b, 6)];
  d->device.device_id = (int32_t)fz_u8(b) - 2;
  d->ndim = (int32_t)fz_pick(b, MAX_DIMS + 3) - 2;
  if (fz_u8(b) == 255) d->ndim = (int32_t)fz_u32(b);
  d->dtype.code = fz_u8(b) % 7;
  d->dtype.bits = fz_u8(b);
  d->dtype.lanes = (uint16_t)(fz_u8(b) < 230 ? 1 : fz_u8(b));
  for (int i = 0; i < MAX_DIMS; ++i) o->shape[i] = extent(b);
  uint8_t flags = fz_u8(b);
  for (int i = 0; i < MAX_DIMS; ++i) o->strides[i] = extent(b);
  d->shape = (flags & 1) ? NULL : o->shape;
  d->strides = (flags & 2) ? o->strides : NULL;
  d->byte_offset = (flags & 4) ? (uint64_t)extent(b) : 0;
  d->data = (flags & 8) ? NULL : o->buf;
  o->t.manager_ctx = o;
  o->t.deleter = release;
}

/* Bytes the harness's buffer must hold for a compact tensor, or -1 when
 * they do not fit in it (then the data is not read). */
static int64_t needed(const DLTensor *d) {
  int64_t n = (d->dtype.bits + 7) / 8 * (int64_t)d->dtype.lanes;
  for (int i = 0; i < d->ndim && i < MAX_DIMS; ++i) {
    if (d->shape[i] < 0 || (d->shape[i] && n > BUF_BYTES / d->shape[i]))
      return -1;
    n *= d->shape[i];
  }
  return d->byte_offset <= BUF_BYTES && n <= BUF_BYTES - (int64_t)d->byte_offset
             ? n + (int64_t)d->byte_offset
             : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  owned *o = calloc(1, sizeof *o);
  if (!o) return 0;
  fill(&in, o);
  mxc_ndarray a = NULL;
  if (mxc_ndarray_from_dlpack(&o->t, &a) != MXC_OK) {
    if (o->deleted) {
      fprintf(stderr, "fuzz_dlpack: a refused tensor was released\n");
      abort();
    }
    free(o);
    return 0;
  }
  if (o->t.dl_tensor.data && o->t.dl_tensor.shape &&
      needed(&o->t.dl_tensor) >= 0)
    fz_touch(a);
  mxc_ndarray_free(a); /* the deleter frees o, now or after pending work */
  mxc_wait_all();
  return 0;
}
