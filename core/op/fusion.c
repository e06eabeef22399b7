/* The syntax half of the fusion contract (core/op/fusion.h); the
 * fusible predicate lives with the registry (registry.c). */
#include "core/op/fusion.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/backend.h"

int mxc__fused_value_ok(const char *val) {
  for (const char *c = val; *c; ++c) {
    if (strchr("(),;=", *c) || (unsigned char)*c < 0x20) return 0;
  }
  return 1;
}

/* Why ask the kernel itself: only the device's fused kernel knows which
 * operators and parameter forms its generator emits (the CUDA plug-in's
 * row declines the rest by the parsed program), and libmxc never names a
 * plug-in function. Dtypes are not known yet (-1). */
int mxc__fused_program_on(int dev_type, const char *program, int num_inputs) {
  if (dev_type == MXC_DEVICE_CPU) return 1;
  const mxc__op *op = mxc__op_find(MXC__FUSED_OP_NAME);
  if (!op || num_inputs < 1 || num_inputs > MXC__FUSED_MAX_INPUTS) return 0;
  char num[16];
  snprintf(num, sizeof num, "%d", num_inputs);
  const char *keys[2] = {"num_inputs", "program"};
  const char *vals[2] = {num, program};
  void *param = NULL;
  if (mxc__op_parse_params(op, keys, vals, 2, &param) != MXC_OK) {
    mxc__error_clear();
    return 0;
  }
  int dt[MXC__FUSED_MAX_INPUTS + 1];
  for (int i = 0; i <= num_inputs; ++i) dt[i] = -1;
  mxc__call_info info = {NULL, NULL, NULL, -1, 0, NULL, 0};
  mxc__call_types t = {dt, NULL, num_inputs, dt + num_inputs, NULL, 1, &info};
  int ok = mxc__op_kernel(op, dev_type, param, &t) != NULL;
  mxc__free(param);
  return ok;
}
