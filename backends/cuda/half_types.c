#include "backends/cuda/half_types.h"

#include "mxc/mxc.h"

int mxc__half_slot(int dt) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32: return MXC__HALF_SLOT_F32;
    case MXC_DTYPE_FLOAT16: return MXC__HALF_SLOT_F16;
    case MXC_DTYPE_BFLOAT16: return MXC__HALF_SLOT_BF16;
    default: return -1;
  }
}

int mxc__half_supports_same(const int *dtypes, int n_in, int n_out) {
  int seen = -1;
  for (int i = 0; i < n_in + n_out; ++i) {
    if (dtypes[i] == -1) continue;
    if (mxc__half_slot(dtypes[i]) < 0) return 0;
    if (seen != -1 && dtypes[i] != seen) return 0;
    seen = dtypes[i];
  }
  return 1;
}

int mxc__cast_slot(int dt) {
  return dt == MXC_DTYPE_FLOAT64 ? 3 : mxc__half_slot(dt);
}

int mxc__half_supports_cast(const int *dtypes, int n_in, int n_out) {
  if (n_in < 1 || n_out < 1) return 0;
  int in = dtypes[0], out = dtypes[n_in];
  return (in == -1 || mxc__cast_slot(in) >= 0) &&
         (out == -1 || mxc__cast_slot(out) >= 0);
}
