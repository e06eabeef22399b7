/* The LibSVM iterator: one file, options (feature count, batch, index
 * base, then the part: fz_iter_parts) from the input's first bytes, then
 * the CSR batches read. */
#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  /* Feature counts from 0 (invalid) up to 2^31, CSR arrays stay small. */
  int64_t features = (int64_t)(fz_u32(&in) >> 1);
  int64_t batch = 1 + fz_pick(&in, 8);
  uint8_t flags = fz_u8(&in);
  uint8_t parts = fz_u8(&in);
  mxc_data_iter it = NULL;
  if (mxc_data_iter_libsvm_create(fz_file(0, in.p, in.n), features, batch,
                                  flags & 1, (flags >> 1) % 3,
                                  &it) != MXC_OK)
    return 0;
  fz_iter_parts(it, parts);
  fz_iter_drain(it, 64);
  mxc_data_iter_free(it);
  return 0;
}
