/* The IDX iterator (Fashion-MNIST's format, plain or gzip'ed): an images
 * file and a labels file cut from one input, iterator options from its
 * first bytes, then the batches read to the host. */
#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  int64_t batch = 1 + fz_pick(&in, 16);
  uint8_t flags = fz_u8(&in);
  fz_bytes images = fz_split(&in);
  const char *ipath = fz_file(0, images.p, images.n);
  const char *lpath = fz_file(1, in.p, in.n);
  mxc_data_iter it = NULL;
  /* last_batch 2 is out of range on purpose: arguments are fuzzed too. */
  if (mxc_data_iter_idx_create(ipath, lpath, batch, flags & 1, flags >> 5,
                               (flags >> 1) & 1, (flags >> 2) & 1,
                               (flags >> 3) % 3, &it) != MXC_OK)
    return 0;
  fz_iter_drain(it, 64);
  mxc_data_iter_free(it);
  return 0;
}
