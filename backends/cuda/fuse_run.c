/* The _fused_elemwise kernel row (fuse.h): plan, text, cached compile,
 * launch. */
#include "backends/cuda/fuse.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/fuse_cache.h"
#include "backends/cuda/fuse_gen.h"
#include "backends/cuda/fuse_nvrtc.h"

#define CACHE_CAP 256

/* A compiled program loaded for one device. */
typedef struct fused_kernel {
  cudaLibrary_t lib;
  cudaKernel_t kernel;
} fused_kernel;

static int device_cc(int dev, int *cc, char *why, size_t len) {
  int major = 0, minor = 0;
  cudaError_t e =
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e == cudaSuccess) {
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  }
  if (e != cudaSuccess) {
    return mxc__cuda_rt_fail(why, len, "cudaDeviceGetAttribute", e);
  }
  *cc = major * 10 + minor;
  return MXC_OK;
}

/* The image into a library and its kernel. */
static int load_image(const mxc__fuse_image *img, fused_kernel *k, char *why,
                      size_t len) {
  cudaError_t e =
      cudaLibraryLoadData(&k->lib, img->data, NULL, NULL, 0, NULL, NULL, 0);
  if (e != cudaSuccess) {
    return mxc__cuda_rt_fail(why, len, "cudaLibraryLoadData (fused kernel)",
                             e);
  }
  e = cudaLibraryGetKernel(&k->kernel, k->lib, MXC__FUSE_KERNEL);
  if (e != cudaSuccess) {
    (void)cudaLibraryUnload(k->lib);
    return mxc__cuda_rt_fail(why, len, "cudaLibraryGetKernel", e);
  }
  return MXC_OK;
}

/* The cache's compile function: text for gpu(dev) (its current device). */
static int compile(void *ctx, const char *text, int dev, void **value,
                   char *why, size_t len) {
  (void)ctx;
  int cc = 0;
  int rc = device_cc(dev, &cc, why, len);
  mxc__fuse_image img = {0};
  if (rc == MXC_OK) rc = mxc__fuse_nvrtc_compile(text, cc, &img, why, len);
  fused_kernel *k = rc == MXC_OK ? malloc(sizeof *k) : NULL;
  if (rc == MXC_OK && !k) {
    snprintf(why, len, "out of memory for a fused kernel");
    rc = MXC_ERR_OOM;
  }
  if (rc == MXC_OK) rc = load_image(&img, k, why, len);
  mxc__fuse_image_free(&img);
  if (rc != MXC_OK) {
    free(k);
    return rc;
  }
  *value = k;
  return MXC_OK;
}

static void free_kernel(void *ctx, void *value) {
  (void)ctx;
  fused_kernel *k = value;
  (void)cudaLibraryUnload(k->lib);
  free(k);
}

static mxc__fuse_cache g_cache = {
    .compile = compile,
    .free_value = free_kernel,
    .cap = CACHE_CAP,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
};

/* The call's arrays against the plan: every input of the output's size. */
static int check_call(const mxc__gpu_call *c, const mxc__fuse_plan *p,
                      char *why, size_t len) {
  if (c->n_out != 1 || c->n_in != p->n_inputs) {
    snprintf(why, len, "%d inputs and %d outputs; the program takes %d and "
             "gives 1", c->n_in, c->n_out, p->n_inputs);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < c->n_in; ++i) {
    if (c->in[i].size != c->out[0].size) {
      snprintf(why, len, "input %d has %lld elements, the output %lld", i,
               (long long)c->in[i].size, (long long)c->out[0].size);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

static int launch(const mxc__gpu_call *c, const fused_kernel *k, char *why,
                  size_t len) {
  long long n = c->out[0].size;
  int add = c->req[0] == MXC__GPU_REQ_ADD;
  void *out = c->out[0].ptr;
  const void *in[MXC__FUSED_MAX_INPUTS];
  void *args[3 + MXC__FUSED_MAX_INPUTS] = {&n, &add, &out};
  for (int i = 0; i < c->n_in; ++i) {
    in[i] = c->in[i].ptr;
    args[3 + i] = &in[i];
  }
  dim3 grid = {mxc__cuda_grid_blocks(n), 1, 1};
  dim3 block = {MXC__CUDA_THREADS, 1, 1};
  cudaError_t e = cudaLaunchKernel((const void *)k->kernel, grid, block, args,
                                   0, mxc__cuda_stream());
  if (e != cudaSuccess) {
    return mxc__cuda_rt_fail(why, len, "launching the fused kernel", e);
  }
  return mxc__cuda_finish("fused kernel", why, len);
}

/* Compiled (or cached) and launched. */
static int run_text(const mxc__gpu_call *c, const char *text, char *why,
                    size_t len) {
  int rc = mxc__cuda_use_device(c->dev, why, len);
  mxc__fuse_entry *e = NULL;
  if (rc == MXC_OK) rc = mxc__fuse_cache_get(&g_cache, text, c->dev, &e, why, len);
  if (rc != MXC_OK) return rc;
  rc = launch(c, mxc__fuse_cache_value(e), why, len);
  mxc__fuse_cache_release(&g_cache, e);
  return rc;
}

int mxc__cuda_fused(const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__fuse_plan p;
  int rc = mxc__fuse_plan_make(c->param, &p, why, why_len);
  if (rc == MXC_OK) rc = check_call(c, &p, why, why_len);
  if (rc != MXC_OK) return rc;
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  /* NVRTC before the device: its absence is the same answer everywhere. */
  rc = mxc__fuse_nvrtc_load(why, why_len);
  if (rc != MXC_OK) return rc;
  char *text = mxc__fuse_text(&p);
  if (!text) {
    snprintf(why, why_len, "out of memory for the fused kernel's text");
    return MXC_ERR_OOM;
  }
  rc = run_text(c, text, why, why_len);
  free(text);
  return rc;
}

/* ---- the row's accepts: compile before the call is pushed ----
 * A program the generator has no code for, or one that NVRTC cannot
 * compile or the runtime cannot load here (NVRTC missing, a compile
 * error), is declined on the pushing thread, so that libmxc runs the
 * program instruction by instruction (core/op/fusion.h) instead of the
 * step failing on the engine's worker. The compiled kernel stays in the
 * cache for the run. Programs that compiled are remembered (by plan and
 * device) so that later pushes skip the text and the cache lookup. */

#define MEMO_SLOTS 512

static pthread_mutex_t g_memo_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_memo[MEMO_SLOTS]; /* hashes of compiled (plan, dev) */

static uint64_t plan_hash(const mxc__fuse_plan *p, int dev) {
  uint64_t h = 14695981039346656037ull;
  const unsigned char *b = (const unsigned char *)p;
  size_t n = offsetof(mxc__fuse_plan, steps) +
             sizeof p->steps[0] * (size_t)p->n_steps;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  h = (h ^ (uint64_t)(unsigned)dev) * 1099511628211ull;
  return h ? h : 1;
}

/* 1 when h is remembered; with add, remembers it (a full table forgets
 * nothing and adds nothing: later calls just compile-check again). */
static int memo(uint64_t h, int add) {
  int hit = 0;
  pthread_mutex_lock(&g_memo_mu);
  for (size_t i = 0; i < MEMO_SLOTS; ++i) {
    uint64_t *s = &g_memo[(h + i) % MEMO_SLOTS];
    if (*s == h) hit = 1;
    if (*s == h || *s == 0) {
      if (add && *s == 0) *s = h;
      break;
    }
  }
  pthread_mutex_unlock(&g_memo_mu);
  return hit;
}

/* Compiled (or found in the cache) for gpu(dev): MXC_OK, or the reason.
 * The calling thread's current device is restored (a user's thread). */
static int compile_check(const mxc__fuse_plan *p, int dev, char *why,
                         size_t len) {
  int rc = mxc__fuse_nvrtc_load(why, len);
  if (rc != MXC_OK) return rc;
  char *text = mxc__fuse_text(p);
  if (!text) {
    snprintf(why, len, "out of memory for the fused kernel's text");
    return MXC_ERR_OOM;
  }
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
  rc = mxc__cuda_use_device(dev, why, len);
  mxc__fuse_entry *e = NULL;
  if (rc == MXC_OK) rc = mxc__fuse_cache_get(&g_cache, text, dev, &e, why, len);
  if (rc == MXC_OK) mxc__fuse_cache_release(&g_cache, e);
  if (prev >= 0 && prev != dev) (void)cudaSetDevice(prev);
  free(text);
  return rc;
}

int mxc__cuda_fused_accepts(const mxc__gpu_call *c, char *why,
                            size_t why_len) {
  mxc__fuse_plan p;
  int rc = mxc__fuse_plan_make(c->param, &p, why, why_len);
  if (rc != MXC_OK) return rc != MXC_ERR_UNSUPPORTED;
  if (c->dev < 0 || !mxc__gpu_call_has_shapes(c)) return 1;
  uint64_t h = plan_hash(&p, c->dev);
  if (memo(h, 0)) return 1;
  char msg[1024] = "";
  rc = compile_check(&p, c->dev, msg, sizeof msg);
  if (rc != MXC_OK) {
    snprintf(why, why_len, "the fused kernel cannot be built here: %s", msg);
    return 0;
  }
  memo(h, 1);
  return 1;
}
