/* Array files: every format mxc_ndarray_load reads (docs/ndarray-format.md),
 * from the bytes of one file. A loaded list is walked (names, shapes) and
 * each dense array read back to the host, so a header that lies about the
 * data size is caught by ASan rather than only at parse time. */
#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  mxc_ndarray_list list = NULL;
  if (mxc_ndarray_load(fz_file(0, data, size), &list) != MXC_OK) return 0;
  int n = 0;
  mxc_ndarray_list_size(list, &n);
  for (int i = 0; i < n; ++i) {
    const char *name = NULL;
    mxc_ndarray a = NULL;
    mxc_ndarray_list_name(list, i, &name);
    if (mxc_ndarray_list_get(list, i, &a) != MXC_OK) continue;
    fz_touch(a);
    mxc_ndarray_free(a);
  }
  mxc_ndarray_list_free(list);
  return 0;
}
