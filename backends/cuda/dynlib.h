/* Libraries of the CUDA toolkit that the plug-in opens on first use
 * (cuBLAS, cuDNN, cuSPARSE, NVRTC, NCCL), instead of linking them.
 *
 * Why: the plug-in must load on any machine with the NVIDIA driver, and
 * each of these libraries is large and installed separately (NVIDIA's
 * packages, or the lib folders of the nvidia-* Python wheels). Linked,
 * a missing cuDNN would make the whole plug-in fail to load, element-wise
 * kernels and copies included, with only the dynamic loader's message.
 * Opened here, only the kernels that need the library fail, each with a
 * message naming the library, the file looked for and what to install.
 *
 * A library is described by a static mxc__cuda_dynlib: the file names to
 * try in order, the symbols the plug-in calls and an array that receives
 * their addresses. mxc__cuda_dynlib_load opens it once; a failure is
 * remembered (the same message every time, no retry: the process's
 * library path does not change).
 *
 * Thread-safety: mxc__cuda_dynlib_load may be called from any thread at
 * the same time; after it returned MXC_OK, fns[] is read-only. */
#ifndef MXC_BACKENDS_CUDA_DYNLIB_H_
#define MXC_BACKENDS_CUDA_DYNLIB_H_

#include <pthread.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MXC__CUDA_DYNLIB_WHY 512

typedef struct mxc__cuda_dynlib {
  const char *what;           /* for messages: "cuBLAS" */
  const char *install;        /* what to install: "NVIDIA's cuBLAS 13 ..." */
  const char *const *files;   /* NULL-terminated, tried in order */
  const char *const *symbols; /* NULL-terminated */
  void **fns;                 /* receives one address per symbol */
  /* State, zero-initialised but for mu (PTHREAD_MUTEX_INITIALIZER). */
  pthread_mutex_t mu;
  int state; /* 0 not tried, 1 loaded, -1 failed */
  void *handle;
  char why[MXC__CUDA_DYNLIB_WHY];
} mxc__cuda_dynlib;

/* Opens lib (the first time) and resolves every symbol. MXC_OK, or
 * MXC_ERR_UNSUPPORTED with the reason in why (at most why_len bytes):
 * which file was not found and what to install, or which symbol the
 * file lacks (an older version). The library stays open for the life of
 * the process. */
int mxc__cuda_dynlib_load(mxc__cuda_dynlib *lib, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_DYNLIB_H_ */
