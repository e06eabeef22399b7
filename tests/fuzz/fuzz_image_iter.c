/* The image record iterator: a .rec file of image records from the
 * input, the data shape, batch size, threads and augmentation switches
 * from its first bytes; with flag 32 a mean_img file cut from the input
 * (an NDArray list, loaded and checked against data_shape), with flag 64
 * a part (mxc_data_iter_set_parts, from one byte as fz_iter_parts); every
 * batch of two epochs is read back. */
#include <stdio.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  uint8_t f = fz_u8(&in);
  char shape[32], batch[8], threads[8], aug[8];
  snprintf(shape, sizeof shape, "%d,%u,%u", (f & 1) ? 3 : 1,
           1 + fz_pick(&in, 24), 1 + fz_pick(&in, 24));
  snprintf(batch, sizeof batch, "%u", 1 + fz_pick(&in, 5));
  snprintf(threads, sizeof threads, "%u", 1 + fz_pick(&in, 3));
  snprintf(aug, sizeof aug, "%d", (f >> 1) & 1);
  uint8_t parts = (f & 64) ? fz_u8(&in) : 0;
  const char *mean = "";
  if (f & 32) {
    fz_bytes m = fz_split(&in);
    mean = fz_file(1, m.p, m.n);
  }
  const char *path = fz_file(0, in.p, in.n);
  const char *k[] = {"path_imgrec", "data_shape", "batch_size",
                     "preprocess_threads", "rand_crop", "rand_mirror",
                     "resize", "max_rotate_angle", "brightness", "shuffle",
                     "mean_img"};
  const char *v[] = {path, shape, batch, threads, aug, aug,
                     (f & 4) ? "20" : "-1", (f & 8) ? "30" : "0",
                     (f & 16) ? "0.5" : "0", aug, mean};
  mxc_data_iter it = NULL;
  if (mxc_data_iter_image_record_create(11, k, v, &it) != MXC_OK) return 0;
  fz_iter_parts(it, parts);
  fz_iter_drain(it, 8);
  mxc_data_iter_free(it);
  return 0;
}
