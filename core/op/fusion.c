/* The syntax half of the fusion contract (core/op/fusion.h); the
 * fusible predicate lives with the registry (registry.c). */
#include "core/op/fusion.h"

#include <string.h>

int mxc__fused_value_ok(const char *val) {
  for (const char *c = val; *c; ++c) {
    if (strchr("(),;=", *c) || (unsigned char)*c < 0x20) return 0;
  }
  return 1;
}
