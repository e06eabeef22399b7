#include "core/base/dtype.h"

#include <string.h>

#include "core/base/error.h"

typedef struct {
  int code;
  size_t size;
  const char *name;
} dtype_info;

/* Indexed by dtype code; gaps (codes mxc does not support) have size 0. */
static const dtype_info k_dtypes[] = {
    [MXC_DTYPE_FLOAT32] = {MXC_DTYPE_FLOAT32, 4, "float32"},
    [MXC_DTYPE_FLOAT64] = {MXC_DTYPE_FLOAT64, 8, "float64"},
    [MXC_DTYPE_FLOAT16] = {MXC_DTYPE_FLOAT16, 2, "float16"},
    [MXC_DTYPE_UINT8] = {MXC_DTYPE_UINT8, 1, "uint8"},
    [MXC_DTYPE_INT32] = {MXC_DTYPE_INT32, 4, "int32"},
    [MXC_DTYPE_INT8] = {MXC_DTYPE_INT8, 1, "int8"},
    [MXC_DTYPE_INT64] = {MXC_DTYPE_INT64, 8, "int64"},
    [MXC_DTYPE_BOOL] = {MXC_DTYPE_BOOL, 1, "bool"},
    [MXC_DTYPE_BFLOAT16] = {MXC_DTYPE_BFLOAT16, 2, "bfloat16"},
};
#define N_DTYPES ((int)(sizeof k_dtypes / sizeof k_dtypes[0]))

_Static_assert(N_DTYPES == MXC_DTYPE_BFLOAT16 + 1,
               "dtype table must cover every MXC_DTYPE_* code");

size_t mxc__dtype_size(int dtype) {
  if (dtype < 0 || dtype >= N_DTYPES) return 0;
  return k_dtypes[dtype].size;
}

const char *mxc__dtype_name(int dtype) {
  if (dtype < 0 || dtype >= N_DTYPES || k_dtypes[dtype].size == 0) {
    return NULL;
  }
  return k_dtypes[dtype].name;
}

int mxc__dtype_check(int dtype, const char *what) {
  MXC_RETURN_ERROR_IF(
      mxc__dtype_size(dtype) == 0, MXC_ERR_DTYPE,
      "%s: unknown dtype %d; expected one of float32 (0), float64 (1), "
      "float16 (2), uint8 (3), int32 (4), int8 (5), int64 (6), bool (7), "
      "bfloat16 (12)",
      what, dtype);
  return MXC_OK;
}

const char *const mxc__stype_names[] = {
    [MXC_STYPE_DEFAULT] = "default",
    [MXC_STYPE_ROW_SPARSE] = "row_sparse",
    [MXC_STYPE_CSR] = "csr",
    [MXC_STYPE_CSR + 1] = NULL,
};

const char *mxc__stype_name(int stype) {
  if (stype < MXC_STYPE_DEFAULT || stype > MXC_STYPE_CSR) return "unknown";
  return mxc__stype_names[stype];
}

int mxc__stype_parse(const char *name) {
  for (int st = MXC_STYPE_DEFAULT; st <= MXC_STYPE_CSR; ++st) {
    if (strcmp(name, mxc__stype_names[st]) == 0) return st;
  }
  return -1;
}
