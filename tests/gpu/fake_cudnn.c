/* A fake libcudnn.so.9 for tests/gpu:test_cuda_dnn_unavailable_*: every
 * symbol the plug-in resolves (backends/cuda/dnn_fns.h), with
 * cudnnGetVersion answering cuDNN 8.9.2 (the version check must refuse
 * it) and every other function failing (none is reached: the check comes
 * first). */
#include <stddef.h>

#include "backends/cuda/dnn_fns.h"

/* Exported although the build hides symbols by default. */
#define EXPORT __attribute__((visibility("default")))

EXPORT size_t cudnnGetVersion(void);
size_t cudnnGetVersion(void) { return 8902; }

/* CUDNN_STATUS_INTERNAL_ERROR; never called. */
#define STUB(name)        \
  EXPORT int name(void); \
  int name(void) { return 4000; }
MXC__CUDNN_FNS_REST(STUB)
#undef STUB
