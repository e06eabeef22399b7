/* Custom operators: registration of user callbacks (core/op/custom.h);
 * the operator that runs them is "Custom" (ops/custom). */
#include "api_internal.h"
#include "core/op/custom.h"

int mxc_custom_op_register(const char *name, const mxc_custom_op_def *def) {
  return mxc__custom_register(name, def);
}

int mxc_custom_op_unregister(const char *name) {
  return mxc__custom_unregister(name);
}
