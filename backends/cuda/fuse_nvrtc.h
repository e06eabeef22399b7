/* NVRTC for run-time fused kernels: kernel text (fuse_gen.h) -> a device
 * image for one compute capability.
 *
 * NVRTC (libnvrtc.so.13) is opened on first use through dynlib.h, never
 * linked: the plug-in loads without it, and only fused programs fail, with
 * a message naming the library and what to install. MXC_NVRTC_LIBRARY,
 * read once, names the file to open instead (the tests name a missing one
 * to check that message). Plain C with its own declarations of the few
 * NVRTC functions it calls (their C ABI is stable): no CUDA header, so it
 * builds and its host test runs on every machine, and NVRTC itself needs
 * no GPU.
 *
 * Options: --gpu-architecture=sm_XX for the device when this NVRTC knows that
 * architecture (a CUBIN: machine code, nothing left for the driver to
 * compile), else compute_YY PTX for the newest architecture it knows below
 * the device (the driver compiles PTX for newer GPUs); --fmad=false (no
 * multiply-add contraction: results round as the CPU's), and IEEE
 * division, square root and denormals stated explicitly.
 *
 * Thread-safety: any thread; NVRTC programs are per call. */
#ifndef MXC_BACKENDS_CUDA_FUSE_NVRTC_H_
#define MXC_BACKENDS_CUDA_FUSE_NVRTC_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled image: CUBIN (is_ptx 0) or NUL-terminated PTX (is_ptx 1). */
typedef struct mxc__fuse_image {
  char *data; /* malloc'ed; mxc__fuse_image_free releases it */
  size_t size;
  int is_ptx;
  int arch; /* the architecture compiled for: 90 for sm_90/compute_90 */
} mxc__fuse_image;

/* Compiles text (NUL-terminated) for compute capability cc (major*10 +
 * minor) into *img. MXC_OK; MXC_ERR_UNSUPPORTED when NVRTC cannot be
 * loaded or knows no architecture <= cc (why: the dynlib message, or
 * which); MXC_ERR_INTERNAL when the text does not compile (why: NVRTC's
 * log, cut to why_len); MXC_ERR_OOM. Nothing to free on failure. */
int mxc__fuse_nvrtc_compile(const char *text, int cc, mxc__fuse_image *img,
                            char *why, size_t why_len);

void mxc__fuse_image_free(mxc__fuse_image *img);

/* Opens NVRTC (the first time): MXC_OK, or MXC_ERR_UNSUPPORTED with the
 * dynlib message (which file, what to install) in why. */
int mxc__fuse_nvrtc_load(char *why, size_t why_len);

/* "NVRTC MAJOR.MINOR" of the loaded library into buf, or the reason it
 * cannot be loaded; MXC_OK or MXC_ERR_UNSUPPORTED. */
int mxc__fuse_nvrtc_version(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_FUSE_NVRTC_H_ */
