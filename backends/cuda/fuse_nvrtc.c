/* NVRTC, opened on first use (fuse_nvrtc.h). */
#include "backends/cuda/fuse_nvrtc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/dynlib.h"
#include "mxc/mxc.h"

/* nvrtc.h's C interface, declared here so that no CUDA header is needed:
 * nvrtcResult is an enum (int), NVRTC_SUCCESS 0, nvrtcProgram a pointer. */
typedef int nv_result;
typedef struct nv_program_s *nv_program;
typedef const char *(*nv_error_string_fn)(nv_result);
typedef nv_result (*nv_version_fn)(int *, int *);
typedef nv_result (*nv_num_archs_fn)(int *);
typedef nv_result (*nv_archs_fn)(int *);
typedef nv_result (*nv_create_fn)(nv_program *, const char *, const char *,
                                  int, const char *const *,
                                  const char *const *);
typedef nv_result (*nv_destroy_fn)(nv_program *);
typedef nv_result (*nv_compile_fn)(nv_program, int, const char *const *);
typedef nv_result (*nv_size_fn)(nv_program, size_t *);
typedef nv_result (*nv_get_fn)(nv_program, char *);

enum {
  F_ERROR_STRING,
  F_VERSION,
  F_NUM_ARCHS,
  F_ARCHS,
  F_CREATE,
  F_DESTROY,
  F_COMPILE,
  F_LOG_SIZE,
  F_LOG,
  F_CUBIN_SIZE,
  F_CUBIN,
  F_PTX_SIZE,
  F_PTX
};

static const char *const k_symbols[] = {
    "nvrtcGetErrorString",    "nvrtcVersion",       "nvrtcGetNumSupportedArchs",
    "nvrtcGetSupportedArchs", "nvrtcCreateProgram", "nvrtcDestroyProgram",
    "nvrtcCompileProgram",    "nvrtcGetProgramLogSize", "nvrtcGetProgramLog",
    "nvrtcGetCUBINSize",      "nvrtcGetCUBIN",      "nvrtcGetPTXSize",
    "nvrtcGetPTX",            NULL};
static void *g_fns[sizeof k_symbols / sizeof k_symbols[0]];
static const char *g_files[] = {"libnvrtc.so.13", NULL};

static mxc__cuda_dynlib g_nvrtc = {
    .what = "NVRTC (the CUDA run-time compiler, for fused element-wise "
            "kernels)",
    .install = "NVIDIA's NVRTC for CUDA 13 (the CUDA repository's "
               "cuda-nvrtc-13-0 package, or pip's nvidia-cuda-nvrtc wheel)",
    .files = g_files,
    .symbols = k_symbols,
    .fns = g_fns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_once(void) {
  const char *env = getenv("MXC_NVRTC_LIBRARY");
  if (env && *env) g_files[0] = env;
}

int mxc__fuse_nvrtc_load(char *why, size_t why_len) {
  pthread_once(&g_once, init_once);
  return mxc__cuda_dynlib_load(&g_nvrtc, why, why_len);
}

#define FN(i, type) ((type)g_fns[i])

int mxc__fuse_nvrtc_version(char *buf, size_t len) {
  int rc = mxc__fuse_nvrtc_load(buf, len);
  if (rc != MXC_OK) return rc;
  int major = 0, minor = 0;
  (void)FN(F_VERSION, nv_version_fn)(&major, &minor);
  snprintf(buf, len, "NVRTC %d.%d", major, minor);
  return MXC_OK;
}

/* The architecture to compile for: cc itself when NVRTC knows it (*cubin
 * 1), else the newest it knows below cc (PTX), or 0 when none. */
static int pick_arch(int cc, int *cubin) {
  int n = 0;
  if (FN(F_NUM_ARCHS, nv_num_archs_fn)(&n) != 0 || n <= 0 || n > 256) {
    return 0;
  }
  int archs[256];
  if (FN(F_ARCHS, nv_archs_fn)(archs) != 0) return 0;
  int best = 0;
  for (int i = 0; i < n; ++i) {
    if (archs[i] == cc) {
      *cubin = 1;
      return cc;
    }
    if (archs[i] < cc && archs[i] > best) best = archs[i];
  }
  *cubin = 0;
  return best;
}

static int nv_fail(char *why, size_t len, const char *what, nv_result r) {
  snprintf(why, len, "NVRTC %s: %s", what,
           FN(F_ERROR_STRING, nv_error_string_fn)(r));
  return MXC_ERR_INTERNAL;
}

/* NVRTC's log of a failed compilation into why (cut to len). */
static int compile_fail(nv_program prog, char *why, size_t len) {
  size_t n = 0;
  char *log = NULL;
  if (FN(F_LOG_SIZE, nv_size_fn)(prog, &n) == 0 && n) log = malloc(n);
  if (log && FN(F_LOG, nv_get_fn)(prog, log) != 0) log[0] = '\0';
  snprintf(why, len, "NVRTC could not compile the fused kernel: %s",
           log ? log : "(no log)");
  free(log);
  return MXC_ERR_INTERNAL;
}

/* The compiled image of prog into *img. */
static int take_image(nv_program prog, int cubin, mxc__fuse_image *img,
                      char *why, size_t len) {
  size_t n = 0;
  nv_result r = cubin ? FN(F_CUBIN_SIZE, nv_size_fn)(prog, &n)
                      : FN(F_PTX_SIZE, nv_size_fn)(prog, &n);
  if (r != 0) return nv_fail(why, len, "image size", r);
  img->data = malloc(n ? n : 1);
  if (!img->data) {
    snprintf(why, len, "out of memory for a %zu-byte fused kernel image", n);
    return MXC_ERR_OOM;
  }
  r = cubin ? FN(F_CUBIN, nv_get_fn)(prog, img->data)
            : FN(F_PTX, nv_get_fn)(prog, img->data);
  if (r != 0) {
    mxc__fuse_image_free(img);
    return nv_fail(why, len, "image", r);
  }
  img->size = n;
  img->is_ptx = !cubin;
  return MXC_OK;
}

static int compile_arch(const char *text, int arch, int cubin,
                        mxc__fuse_image *img, char *why, size_t len) {
  nv_program prog = NULL;
  nv_result r = FN(F_CREATE, nv_create_fn)(&prog, text, "mxc_fused.cu", 0,
                                           NULL, NULL);
  if (r != 0) return nv_fail(why, len, "nvrtcCreateProgram", r);
  char arch_opt[48];
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s_%d",
           cubin ? "sm" : "compute", arch);
  const char *opts[] = {arch_opt, "--fmad=false", "--prec-div=true",
                        "--prec-sqrt=true", "--ftz=false", "-std=c++17"};
  r = FN(F_COMPILE, nv_compile_fn)(prog, (int)(sizeof opts / sizeof opts[0]),
                                   opts);
  int rc = r == 0 ? take_image(prog, cubin, img, why, len)
                  : compile_fail(prog, why, len);
  img->arch = arch;
  (void)FN(F_DESTROY, nv_destroy_fn)(&prog);
  return rc;
}

int mxc__fuse_nvrtc_compile(const char *text, int cc, mxc__fuse_image *img,
                            char *why, size_t why_len) {
  memset(img, 0, sizeof *img);
  int rc = mxc__fuse_nvrtc_load(why, why_len);
  if (rc != MXC_OK) return rc;
  int cubin = 0, arch = pick_arch(cc, &cubin);
  if (!arch) {
    snprintf(why, why_len,
             "this NVRTC compiles for no architecture up to compute "
             "capability %d.%d; install the NVRTC of the plug-in's CUDA",
             cc / 10, cc % 10);
    return MXC_ERR_UNSUPPORTED;
  }
  return compile_arch(text, arch, cubin, img, why, why_len);
}

void mxc__fuse_image_free(mxc__fuse_image *img) {
  free(img->data);
  img->data = NULL;
  img->size = 0;
}
