/* GPU benchmarks (issue 17): mxc on gpu(0) next to the library it calls,
 * measured in the same run. Prints name=value lines:
 *   gpu_name                  the card (cudaGetDeviceProperties)
 *   dot4096_gpu_ms            mxc "dot" of two 4096x4096 float32 arrays on
 *                             gpu(0): mxc_op_invoke to wait, median of REPS
 *   dot4096_cublas_ms         cublasSgemm_v2 on the same sizes, called
 *                             directly, to its stream's completion (each
 *                             mxc call also ends with a synchronize)
 *   dot4096_ratio_vs_cublas   cublas_ms / gpu_ms (goal >= 0.95: mxc's
 *                             dispatch costs under 5% of the product)
 *   dot4096_gpu_tflops        2 * 4096^3 / gpu time
 *   dot4096_max_abs_diff      between the two results (the same cuBLAS
 *                             call, so 0 is expected)
 * Both use cuBLAS's default math (float32, no TF32). Without a usable GPU
 * it prints one line, "bench_gpu: SKIPPED: ...", and exits 0. cuBLAS is
 * opened like the plug-in does (libcublas.so.13, or MXC_CUBLAS_LIBRARY).
 * The fused element-wise chain's figures (fused_chain_*) come from
 * gpu_fused.c, the ResNet-50 training step's (resnet50_train_gpu_*) from
 * gpu_resnet.c.
 *
 * Usage: gpu [--resnet-only] [--cpu] [ResNet-50 options of gpu_resnet.h]
 *   --resnet-only  only the ResNet-50 step
 *   --cpu          only the ResNet-50 step, on the CPU (the smoke test of
 *                  tests/bench runs the same code path there, small)
 * The ResNet-50 peer: the Python of MXC_BENCH_TORCH_PYTHON (--python),
 * the script MXC_BENCH_GPU_RESNET_SCRIPT (--torch-script, default
 * bench/gpu_resnet_torch.py), the graph MXC_BENCH_GPU_RESNET_SYMBOL
 * (--symbol, default bench/resnet50_train-symbol.json: both as bazel run
 * finds them). Exit status 1 when mxc and PyTorch disagree. */
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gpu_fused.h"
#include "bench/gpu_resnet.h"
#include "mxc/mxc.h"

#define BENCH_NAME "bench_gpu"
#include "bench/bench_util.h"

#define N 4096
#define REPS 15

typedef struct blas {
  __typeof__(&cublasCreate_v2) create;
  __typeof__(&cublasSetMathMode) math;
  __typeof__(&cublasSgemm_v2) sgemm;
  cublasHandle_t h;
} blas;

static void cuda_check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s failed: %s\n", BENCH_NAME, what,
            cudaGetErrorString(e));
    exit(1);
  }
}

static void *sym(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "%s: cuBLAS has no %s\n", BENCH_NAME, name);
    exit(1);
  }
  return f;
}

static void open_cublas(blas *b) {
  const char *file = getenv("MXC_CUBLAS_LIBRARY");
  if (!file || !*file) file = "libcublas.so.13";
  void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "%s: cannot open %s: %s\n", BENCH_NAME, file, dlerror());
    exit(1);
  }
  b->create = (__typeof__(b->create))sym(lib, "cublasCreate_v2");
  b->math = (__typeof__(b->math))sym(lib, "cublasSetMathMode");
  b->sgemm = (__typeof__(b->sgemm))sym(lib, "cublasSgemm_v2");
  if (b->create(&b->h) != CUBLAS_STATUS_SUCCESS ||
      b->math(b->h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "%s: cuBLAS could not be initialised\n", BENCH_NAME);
    exit(1);
  }
}

static void fill(float *p, int64_t n, unsigned seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
}

/* A gpu(0) array holding v. */
static mxc_ndarray gpu_array(const float *v) {
  int64_t shape[2] = {N, N};
  mxc_ndarray a = NULL;
  check(
      mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_GPU, 0, 0, &a),
      "create on gpu(0)");
  if (v) check(mxc_ndarray_copy_from_host(a, v, (size_t)N * N * 4), "copy");
  return a;
}

/* The inputs on gpu(0) twice: mxc's arrays and plain device buffers. */
typedef struct operands {
  mxc_ndarray a, b, c;
  float *da, *db, *dc;
} operands;

static void make_operands(operands *o, float *ha, float *hb) {
  size_t bytes = (size_t)N * N * sizeof(float);
  o->a = gpu_array(ha);
  o->b = gpu_array(hb);
  o->c = gpu_array(NULL);
  cuda_check(cudaSetDevice(0), "cudaSetDevice");
  cuda_check(cudaMalloc((void **)&o->da, bytes), "cudaMalloc");
  cuda_check(cudaMalloc((void **)&o->db, bytes), "cudaMalloc");
  cuda_check(cudaMalloc((void **)&o->dc, bytes), "cudaMalloc");
  cuda_check(cudaMemcpy(o->da, ha, bytes, cudaMemcpyHostToDevice), "copy");
  cuda_check(cudaMemcpy(o->db, hb, bytes, cudaMemcpyHostToDevice), "copy");
}

static double time_mxc(mxc_op dot, operands *o) {
  mxc_ndarray in[2] = {o->a, o->b};
  double t0 = now_s();
  check(mxc_op_invoke(dot, NULL, NULL, 0, in, 2, &o->c, 1, NULL), "dot");
  check(mxc_ndarray_wait_to_read(o->c), "wait");
  return now_s() - t0;
}

/* Row-major C = A B as mxc's plan passes it: column-major C^T = B^T A^T. */
static double time_cublas(blas *b, operands *o) {
  const float one = 1.f, zero = 0.f;
  double t0 = now_s();
  if (b->sgemm(b->h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, o->db, N, o->da,
               N, &zero, o->dc, N) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "%s: cublasSgemm_v2 failed\n", BENCH_NAME);
    exit(1);
  }
  cuda_check(cudaStreamSynchronize(0), "cublasSgemm_v2");
  return now_s() - t0;
}

static double max_diff(operands *o, float *h1, float *h2) {
  size_t bytes = (size_t)N * N * sizeof(float);
  check(mxc_ndarray_copy_to_host(o->c, h1, bytes), "copy to host");
  cuda_check(cudaMemcpy(h2, o->dc, bytes, cudaMemcpyDeviceToHost), "copy");
  double d = 0;
  for (int64_t i = 0; i < (int64_t)N * N; ++i) {
    d = fmax(d, fabs((double)h1[i] - h2[i]));
  }
  return d;
}

static void print_name(void) {
  struct cudaDeviceProp p;
  cuda_check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  printf("gpu_name=%s\n", p.name);
}

static void bench_dot(void) {
  blas b;
  open_cublas(&b);
  float *ha = malloc((size_t)N * N * 4), *hb = malloc((size_t)N * N * 4);
  if (!ha || !hb) exit(1);
  fill(ha, (int64_t)N * N, 1);
  fill(hb, (int64_t)N * N, 2);
  operands o;
  make_operands(&o, ha, hb);
  mxc_op dot = NULL;
  check(mxc_op_find("dot", &dot), "find dot");
  double tm[REPS], tc[REPS];
  for (int i = 0; i < 3; ++i) time_mxc(dot, &o), time_cublas(&b, &o);
  /* Interleaved: both see the same clocks and temperature. */
  for (int i = 0; i < REPS; ++i) {
    tm[i] = time_mxc(dot, &o);
    tc[i] = time_cublas(&b, &o);
  }
  double gm = bench_median(tm, REPS), gc = bench_median(tc, REPS);
  printf("dot4096_gpu_ms=%.3f\n", gm * 1e3);
  printf("dot4096_cublas_ms=%.3f\n", gc * 1e3);
  printf("dot4096_ratio_vs_cublas=%.3f\n", gc / gm);
  printf("dot4096_gpu_tflops=%.2f\n", 2.0 * N * N * (double)N / gm * 1e-12);
  printf("dot4096_max_abs_diff=%g\n", max_diff(&o, ha, hb));
  mxc_ndarray_free(o.a), mxc_ndarray_free(o.b), mxc_ndarray_free(o.c);
  cudaFree(o.da), cudaFree(o.db), cudaFree(o.dc);
  free(ha), free(hb);
}

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v && *v ? v : fallback;
}

/* Options into o; *resnet_only set by --resnet-only and --cpu. */
static void parse(int argc, char **argv, r50_opts *o, int *resnet_only) {
  r50_opts_init(o);
  o->python = getenv("MXC_BENCH_TORCH_PYTHON");
  o->torch_script = env_or("MXC_BENCH_GPU_RESNET_SCRIPT", o->torch_script);
  o->symbol = env_or("MXC_BENCH_GPU_RESNET_SYMBOL",
                     "bench/resnet50_train-symbol.json");
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--resnet-only") == 0) {
      *resnet_only = 1;
      continue;
    }
    int r = r50_parse(o, argc, argv, &i);
    if (r == 0) fprintf(stderr, "%s: unknown option %s\n", BENCH_NAME, argv[i]);
    if (r <= 0) exit(2);
  }
  if (o->dev_type == MXC_DEVICE_CPU) *resnet_only = 1;
}

int main(int argc, char **argv) {
  r50_opts r50;
  int resnet_only = 0;
  parse(argc, argv, &r50, &resnet_only);
  if (r50.dev_type == MXC_DEVICE_CPU) return bench_gpu_resnet50(&r50);
  int n = 0;
  check(mxc_device_count(MXC_DEVICE_GPU, &n), "mxc_device_count");
  if (n == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    printf("bench_gpu: SKIPPED: no usable GPU (%s)\n", mxc_last_error());
    return 0;
  }
  print_name();
  if (!resnet_only) {
    printf("goal: dot4096_ratio_vs_cublas >= 0.95 (H100)\n");
    bench_dot();
    printf("goal: fused_chain_ratio_vs_torch <= 0.5 (H100)\n");
    bench_gpu_fused_chain();
  }
  printf("goal: resnet50_train_gpu_ratio_vs_torch <= 1.0 (H100)\n");
  fflush(stdout);
  return bench_gpu_resnet50(&r50);
}
