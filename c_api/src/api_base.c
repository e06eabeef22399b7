/* Version, features, errors, library-wide settings. */
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "core/base/device.h"
#include "core/base/dtype.h"
#include "core/engine/engine.h"
#include "core/op/op.h"
#include "core/resource/random.h"

int mxc_version(void) { return MXC_VERSION_NUMBER; }

#define STR2(x) #x
#define STR(x) STR2(x)
const char *mxc_version_string(void) {
  return STR(MXC_VERSION_MAJOR) "." STR(MXC_VERSION_MINOR) "." STR(
      MXC_VERSION_PATCH);
}

typedef struct feature {
  const char *name;
  int enabled;
} feature;

static const feature k_features[] = {
    {"CPU", 1},
    {"CUDA", 0}, /* run time: the plug-in loaded and sees a GPU */
    {"OPENBLAS", 0}, /* added by the linalg family: see feature_value */
    /* The GEMM float32 products use in this process, one of the three
     * (chosen at run time: ops/linalg/gemm_choice.h). */
    {"GEMM_OPENBLAS", 0},
    {"GEMM_ONEDNN", 0},
    {"GEMM_PORTABLE", 0},
    {"ONEDNN", 0},   /* added by the oneDNN backend unless MXC_ONEDNN=0 */
    {"DLPACK", 1},
    {"THREADED_ENGINE", 1},
#ifdef MXC_SANITIZER_ASAN
    {"ASAN", 1},
#else
    {"ASAN", 0},
#endif
#ifdef MXC_SANITIZER_TSAN
    {"TSAN", 1},
#else
    {"TSAN", 0},
#endif
#ifdef MXC_DEBUG
    {"DEBUG", 1},
#else
    {"DEBUG", 0},
#endif
};
#define N_FEATURES ((int)(sizeof k_features / sizeof k_features[0]))

int mxc_feature_count(void) { return N_FEATURES; }

const char *mxc_feature_name(int index) {
  if (index < 0 || index >= N_FEATURES) return NULL;
  return k_features[index].name;
}

/* Features plug-ins provide are asked of the registry; CUDA of the GPU
 * plug-in's loader (asking loads it). */
static int feature_value(const feature *f) {
  if (strcmp(f->name, "CUDA") == 0) return mxc__have_cuda();
  return f->enabled || mxc__op_feature(f->name);
}

int mxc_feature_enabled(const char *name, int *out_enabled) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_feature_enabled: name is NULL");
  API_CHECK_OUT(out_enabled, "mxc_feature_enabled", "out_enabled");
  for (int i = 0; i < N_FEATURES; ++i) {
    if (strcmp(k_features[i].name, name) == 0) {
      *out_enabled = feature_value(&k_features[i]);
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_NOT_FOUND,
                        "mxc_feature_enabled: unknown feature '%s'; see "
                        "mxc_feature_name for the list",
                        name);
}

int mxc_device_count(int dev_type, int *out_count) {
  API_CHECK_OUT(out_count, "mxc_device_count", "out_count");
  return mxc__device_count(dev_type, out_count);
}

int mxc_device_check(int dev_type, int dev_id) {
  return mxc__device_check(dev_type, dev_id, "mxc_device_check");
}

const char *mxc_last_error(void) { return mxc__error_msg(); }
int mxc_last_error_code(void) { return mxc__error_code(); }

int mxc_set_last_error(int code, const char *message) {
  MXC_RETURN_ERROR_IF(code < 0, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_set_last_error: code %d is not an error code; "
                      "expected MXC_OK or a positive MXC_ERR_* code",
                      code);
  if (code == MXC_OK) {
    mxc__error_clear();
    return MXC_OK;
  }
  /* Through a copy: message may be mxc_last_error()'s own buffer. */
  char copy[MXC__ERROR_MAX];
  snprintf(copy, sizeof copy, "%s", message ? message : "");
  return mxc__error_set_raw(code, copy);
}

static const char *const k_error_names[] = {
    [MXC_OK] = "MXC_OK",
    [MXC_ERR_INVALID_ARGUMENT] = "MXC_ERR_INVALID_ARGUMENT",
    [MXC_ERR_INVALID_HANDLE] = "MXC_ERR_INVALID_HANDLE",
    [MXC_ERR_SHAPE] = "MXC_ERR_SHAPE",
    [MXC_ERR_DTYPE] = "MXC_ERR_DTYPE",
    [MXC_ERR_STYPE] = "MXC_ERR_STYPE",
    [MXC_ERR_OOM] = "MXC_ERR_OOM",
    [MXC_ERR_NOT_FOUND] = "MXC_ERR_NOT_FOUND",
    [MXC_ERR_IO] = "MXC_ERR_IO",
    [MXC_ERR_UNSUPPORTED] = "MXC_ERR_UNSUPPORTED",
    [MXC_ERR_INTERNAL] = "MXC_ERR_INTERNAL",
    [MXC_ERR_OPERATOR] = "MXC_ERR_OPERATOR",
    [MXC_ERR_REENTRANT] = "MXC_ERR_REENTRANT",
};
_Static_assert(sizeof k_error_names / sizeof k_error_names[0] ==
                   MXC_ERR_REENTRANT + 1,
               "every error code needs a name");

const char *mxc_error_name(int code) {
  if (code < 0 || code > MXC_ERR_REENTRANT) return "MXC_ERR_UNKNOWN";
  return k_error_names[code];
}

int mxc_dtype_size(int dtype) { return (int)mxc__dtype_size(dtype); }
const char *mxc_dtype_name(int dtype) { return mxc__dtype_name(dtype); }

int mxc_random_seed(uint64_t seed) {
  mxc__random_seed(seed);
  return MXC_OK;
}

int mxc_set_num_threads(int num_threads) {
  MXC_RETURN_ERROR_IF(num_threads < 1 || num_threads > 1024,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_set_num_threads: %d is out of range; expected "
                      "1..1024",
                      num_threads);
  MXC_FORWARD_IF_ERROR(mxc__engine_check_may_wait("mxc_set_num_threads"));
  mxc__engine *e = NULL;
  MXC_FORWARD_IF_ERROR(mxc__engine_default(&e));
  return mxc__engine_set_num_workers(e, num_threads);
}

int mxc_get_num_threads(int *out) {
  API_CHECK_OUT(out, "mxc_get_num_threads", "out");
  mxc__engine *e = NULL;
  MXC_FORWARD_IF_ERROR(mxc__engine_default(&e));
  *out = mxc__engine_num_workers(e);
  return MXC_OK;
}

int mxc_engine_is_naive(int *out) {
  API_CHECK_OUT(out, "mxc_engine_is_naive", "out");
  mxc__engine *e = NULL;
  MXC_FORWARD_IF_ERROR(mxc__engine_default(&e));
  *out = mxc__engine_kind(e) == MXC__ENGINE_NAIVE;
  return MXC_OK;
}

int mxc_wait_all(void) {
  MXC_FORWARD_IF_ERROR(mxc__engine_check_may_wait("mxc_wait_all"));
  mxc__engine *e = NULL;
  MXC_FORWARD_IF_ERROR(mxc__engine_default(&e));
  return mxc__engine_wait_all(e);
}
