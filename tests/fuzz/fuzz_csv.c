/* The CSV iterator: a data file and an optional label file cut from one
 * input, options (columns, batch, header, label column, then the part:
 * fz_iter_parts) from its first bytes, then the batches read to the host,
 * twice (after a reset). */
#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  int64_t cols = fz_pick(&in, 9);
  int64_t batch = 1 + fz_pick(&in, 8);
  uint8_t flags = fz_u8(&in);
  int64_t label_col = (int64_t)fz_pick(&in, 6) - 2; /* -2 is invalid */
  uint8_t parts = fz_u8(&in);
  fz_bytes first = fz_split(&in);
  const char *dpath = fz_file(0, first.p, first.n);
  const char *lpath = (flags & 2) ? fz_file(1, in.p, in.n) : NULL;
  mxc_data_iter it = NULL;
  if (mxc_data_iter_csv_create(dpath, lpath, cols, batch, flags & 1,
                               label_col, (flags >> 2) % 3, &it) != MXC_OK)
    return 0;
  fz_iter_parts(it, parts);
  fz_iter_drain(it, 64);
  mxc_data_iter_free(it);
  return 0;
}
