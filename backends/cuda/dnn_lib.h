/* cuDNN inside the plug-in, shared by its cuDNN kernels (dnn_conv.c,
 * dnn_norm.c; implemented in dnn_lib.c): the functions resolved from
 * libcudnn.so.9 on first use (DN(name) calls one with its prototype's
 * type), the calling thread's handle per device, one cached workspace
 * per device, descriptors and error messages. Internal to the plug-in.
 *
 * Thread-safety: mxc__cudnn_begin may run on many threads at once; each
 * gets its own handle. A workspace is used only with its mutex held, for
 * a whole call (kernels synchronize before releasing it). */
#ifndef MXC_BACKENDS_CUDA_DNN_LIB_H_
#define MXC_BACKENDS_CUDA_DNN_LIB_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <pthread.h>
#include <stddef.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/dnn_fns.h"
#include "backends/cuda/dnn_plan.h"

enum {
#define MXC__CUDNN_IDX(name) FN_##name,
  MXC__CUDNN_FNS(MXC__CUDNN_IDX)
#undef MXC__CUDNN_IDX
      MXC__CUDNN_FN_COUNT
};

/* Their addresses, valid once mxc__cudnn_begin returned MXC_OK. */
extern void *mxc__cudnn_fns[MXC__CUDNN_FN_COUNT];

/* The resolved function `name`, with its prototype's type. */
#define DN(name) ((__typeof__(&name))mxc__cudnn_fns[FN_##name])

/* Returns from the calling function (which has `why` and `len`) with the
 * message of a failed cuDNN call. */
#define DN_TRY(call, what)                        \
  do {                                            \
    cudnnStatus_t s_ = (call);                    \
    if (s_ != CUDNN_STATUS_SUCCESS)               \
      return mxc__cudnn_fail(why, len, what, s_); \
  } while (0)

/* Devices with handles and workspaces: ids 0 to 63 (cuda_rt.h). */
#define MXC__CUDNN_MAX_DEVICES MXC__CUDA_MAX_DEVICES

typedef struct mxc__cudnn_ws {
  pthread_mutex_t mu; /* held for a whole call: the buffer is in use */
  void *ptr;
  size_t bytes;
} mxc__cudnn_ws;

/* cuDNN opened (MXC_ERR_UNSUPPORTED naming it and what to install when it
 * cannot be), device dev current, the calling thread's handle for it in
 * *h (created on first use, destroyed when the thread exits). */
int mxc__cudnn_begin(int dev, cudnnHandle_t *h, char *why, size_t len);

/* Device dev's workspace (after mxc__cudnn_begin for dev). */
mxc__cudnn_ws *mxc__cudnn_workspace(int dev);

/* Grows w (its mutex held, its device current) to at least bytes. */
int mxc__cudnn_ws_reserve(mxc__cudnn_ws *w, size_t bytes, char *why,
                          size_t len);

/* A tensor descriptor of t's nbdims dims and strides, of cuDNN data type
 * dt (MXC__DNN_DT_*, dnn_plan.h), into *d (created even when setting it
 * fails: the caller destroys it). */
int mxc__cudnn_tensor_desc(int nbdims, const mxc__dnn_tensor *t, int dt,
                           cudnnTensorDescriptor_t *d, char *why, size_t len);

/* The message of a failed cuDNN call; MXC_ERR_UNSUPPORTED for cuDNN's
 * NOT_SUPPORTED family, MXC_ERR_INTERNAL otherwise. */
int mxc__cudnn_fail(char *why, size_t len, const char *what, cudnnStatus_t s);

#endif /* MXC_BACKENDS_CUDA_DNN_LIB_H_ */
