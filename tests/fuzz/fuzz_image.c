/* Image decoding (mxc_image_decode): JPEG or PNG bytes, the channel count
 * and dtype from the first byte; a decoded image is read back, so a
 * buffer sized wrong for what the codec wrote is an ASan report. The
 * codecs themselves are Debian's (not instrumented); what is fuzzed is
 * mxc's use of them: size checks, conversions, error paths. */
#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  uint8_t flags = fz_u8(&in);
  int channels = (flags & 1) ? 3 : 1;
  int dtype = (flags & 2) ? MXC_DTYPE_FLOAT32 : MXC_DTYPE_UINT8;
  mxc_ndarray a = NULL;
  if (mxc_image_decode(in.p, (int64_t)in.n, channels, dtype, &a) == MXC_OK) {
    fz_touch(a);
    mxc_ndarray_free(a);
  }
  return 0;
}
