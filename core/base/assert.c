#include "core/base/assert.h"

#include <stdio.h>
#include <stdlib.h>

void mxc__assert_fail(const char *file, int line, const char *cond,
                      const char *msg) {
  /* One fprintf: the line stays whole when engine threads fail together. */
  fprintf(stderr, "%s:%d: mxc internal assertion failed: %s%s%s\n", file,
          line, cond, msg ? ": " : "", msg ? msg : "");
  fflush(stderr);
  abort();
}

int mxc__asserts_enabled(void) {
#if defined(MXC_ASSERTS)
  return 1;
#else
  return 0;
#endif
}
