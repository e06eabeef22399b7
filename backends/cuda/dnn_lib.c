/* cuDNN for the plug-in's kernels (dnn_lib.h): the library opened on
 * first use, one handle per (thread, device), one cached workspace per
 * device, descriptors and messages shared by dnn_conv.c and dnn_norm.c.
 *
 * cuDNN's headers give the types only: every function is called through
 * an address resolved from libcudnn.so.9 by dynlib.h, so the plug-in has
 * no link-time dependency on cuDNN. (The legacy API is marked deprecated
 * in cuDNN 9's headers; BUILD turns that warning off for these files.) */
#include "backends/cuda/dnn_lib.h"

#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/dynlib.h"

/* ---- cuDNN, opened on first use ---- */

static const char *const k_symbols[] = {
#define NAME(name) #name,
    MXC__CUDNN_FNS(NAME)
#undef NAME
        NULL};
static const char *const k_files[] = {"libcudnn.so.9", NULL};
void *mxc__cudnn_fns[MXC__CUDNN_FN_COUNT];

static mxc__cuda_dynlib k_cudnn = {
    .what = "cuDNN 9",
    .install =
        "cuDNN 9 for CUDA 13 (NVIDIA's cudnn9-cuda-13 package, or the "
        "nvidia-cudnn-cu13 Python wheel, whose nvidia/cudnn/lib folder "
        "then goes on LD_LIBRARY_PATH)",
    .files = k_files,
    .symbols = k_symbols,
    .fns = mxc__cudnn_fns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

/* The environment variable MXC_CUDNN_LIBRARY, read once, names another
 * file to open instead (a cuDNN 9 installed elsewhere; the tests point it
 * at a missing file and at libraries that are not cuDNN 9). */
static pthread_once_t g_files_once = PTHREAD_ONCE_INIT;
static const char *g_env_files[2];

static void pick_files(void) {
  const char *f = getenv("MXC_CUDNN_LIBRARY");
  if (f && *f) {
    g_env_files[0] = f;
    k_cudnn.files = g_env_files;
  }
}

/* Opens cuDNN and checks that it is a 9.x (the ABI of the header).
 * cudnnGetVersion encodes 8.x as major*1000 + minor*100 + patch and 9.x
 * as major*10000 + minor*100 + patch. */
static int cudnn_load(char *why, size_t len) {
  (void)pthread_once(&g_files_once, pick_files);
  int rc = mxc__cuda_dynlib_load(&k_cudnn, why, len);
  if (rc != MXC_OK) return rc;
  size_t v = DN(cudnnGetVersion)();
  size_t major = v >= 10000 ? v / 10000 : v / 1000;
  size_t minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
  if (major != CUDNN_MAJOR) {
    snprintf(why, len,
             "cuDNN %zu.%zu was loaded (%s); the plug-in was built for "
             "cuDNN %d: install %s",
             major, minor, k_cudnn.files[0], CUDNN_MAJOR, k_cudnn.install);
    return MXC_ERR_UNSUPPORTED;
  }
  return MXC_OK;
}

/* cuDNN 9's NOT_SUPPORTED family (3000..3999) is MXC_ERR_UNSUPPORTED: a
 * shape or layout it has no kernel for, an old driver, or one of its
 * sub-libraries (libcudnn_cnn.so.9, ...), which libcudnn.so.9 opens on
 * first use, missing; the latter says what to install. */
int mxc__cudnn_fail(char *why, size_t len, const char *what, cudnnStatus_t s) {
  int missing = s == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE;
  snprintf(why, len, "%s: %s%s%s", what, DN(cudnnGetErrorString)(s),
           missing ? "; install " : "", missing ? k_cudnn.install : "");
  return (int)s / 1000 == 3 ? MXC_ERR_UNSUPPORTED : MXC_ERR_INTERNAL;
}

/* ---- one handle per (thread, device) (cuda_rt.h) ---- */

typedef struct dnn_ctx {
  cudnnHandle_t h;
} dnn_ctx;

static int ctx_create(void *obj, int dev, char *why, size_t len) {
  (void)dev;
  dnn_ctx *k = obj;
  cudnnStatus_t s = DN(cudnnCreate)(&k->h);
  if (s == CUDNN_STATUS_SUCCESS) return MXC_OK;
  k->h = NULL;
  return mxc__cudnn_fail(why, len, "cudnnCreate", s);
}

/* At thread exit: cuDNN handles may not be shared by threads running at
 * the same time, so each engine worker has its own. */
static void ctx_destroy(void *obj, int dev) {
  (void)dev;
  (void)DN(cudnnDestroy)(((dnn_ctx *)obj)->h);
}

/* The handle is this thread's; the stream is the call's. */
static int ctx_bind(void *obj, cudaStream_t st, char *why, size_t len) {
  DN_TRY(DN(cudnnSetStream)(((dnn_ctx *)obj)->h, st), "cudnnSetStream");
  return MXC_OK;
}

static const mxc__cuda_tls_lib k_ctx_lib = {
    .name = "cuDNN",
    .size = sizeof(dnn_ctx),
    .create = ctx_create,
    .destroy = ctx_destroy,
    .bind = ctx_bind,
};

/* ---- one cached workspace per device ---- */

static mxc__cudnn_ws g_ws[MXC__CUDNN_MAX_DEVICES];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_once(void) {
  for (int i = 0; i < MXC__CUDNN_MAX_DEVICES; ++i)
    pthread_mutex_init(&g_ws[i].mu, NULL);
}

/* Grows device dev's workspace (its mutex held) to at least bytes. */
int mxc__cudnn_ws_reserve(mxc__cudnn_ws *w, size_t bytes, char *why,
                          size_t len) {
  if (bytes <= w->bytes) return MXC_OK;
  if (w->ptr) (void)cudaFree(w->ptr);
  w->ptr = NULL;
  w->bytes = 0;
  cudaError_t e = cudaMalloc(&w->ptr, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    w->ptr = NULL;
    snprintf(why, len, "cuDNN workspace of %zu bytes: %s", bytes,
             cudaGetErrorString(e));
    return MXC_ERR_OOM;
  }
  w->bytes = bytes;
  return MXC_OK;
}

mxc__cudnn_ws *mxc__cudnn_workspace(int dev) { return &g_ws[dev]; }

/* ---- shared by the kernels ---- */

/* dnn_plan.h names cuDNN's data types without its header. */
_Static_assert((int)MXC__DNN_DT_FLOAT == (int)CUDNN_DATA_FLOAT &&
                   (int)MXC__DNN_DT_HALF == (int)CUDNN_DATA_HALF &&
                   (int)MXC__DNN_DT_BFLOAT16 == (int)CUDNN_DATA_BFLOAT16,
               "dnn_plan.h's MXC__DNN_DT_* are cudnnDataType_t's values");

int mxc__cudnn_tensor_desc(int nbdims, const mxc__dnn_tensor *t, int dt,
                           cudnnTensorDescriptor_t *d, char *why, size_t len) {
  DN_TRY(DN(cudnnCreateTensorDescriptor)(d), "cudnnCreateTensorDescriptor");
  DN_TRY(DN(cudnnSetTensorNdDescriptor)(*d, (cudnnDataType_t)dt, nbdims,
                                        t->dims, t->strides),
         "cudnnSetTensorNdDescriptor");
  return MXC_OK;
}

/* cuDNN opened, device dev current, the thread's handle for it in *h,
 * bound to the call's stream. */
int mxc__cudnn_begin(int dev, cudnnHandle_t *h, char *why, size_t len) {
  if (dev < 0 || dev >= MXC__CUDNN_MAX_DEVICES) {
    snprintf(why, len,
             "cuDNN kernels: gpu(%d) is beyond the %d devices "
             "they keep handles for",
             dev, MXC__CUDNN_MAX_DEVICES);
    return MXC_ERR_UNSUPPORTED;
  }
  int rc = cudnn_load(why, len);
  if (rc != MXC_OK) return rc;
  (void)pthread_once(&g_once, init_once);
  void *obj = NULL;
  rc = mxc__cuda_use_device(dev, why, len);
  if (rc == MXC_OK) rc = mxc__cuda_tls_slot(&k_ctx_lib, dev, &obj, why, len);
  if (rc == MXC_OK) *h = ((dnn_ctx *)obj)->h;
  return rc;
}
