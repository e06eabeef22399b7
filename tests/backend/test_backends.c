/* Test backends, registered like real ones: from a constructor, before
 * the registry is built. "testcpu" (CPU, priority 10) attaches an
 * elemwise_add for float32 only and a relu for every dense call; "testgpu"
 * (GPU) attaches relu only, so the supports query has a device with
 * partial coverage. The kernels compute with naive loops and count their
 * calls; ctx_prepare stamps the stream the kernel then checks. */
#include "tests/backend/test_backends.h"

#include <stdatomic.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/backend.h"
#include "core/op/format.h"

static atomic_int g_add_calls, g_relu_calls;
static int g_stream_token;

static int prepare(mxc__opctx *ctx) {
  ctx->stream = &g_stream_token;
  return MXC_OK;
}

static int add_f32(const mxc__op *op, const mxc__opctx *ctx,
                   const void *param, const mxc__blob *in, int n_in,
                   const mxc__blob *out, int n_out, const mxc__req *req) {
  MXC_RETURN_ERROR_IF(ctx->stream != &g_stream_token, MXC_ERR_INTERNAL,
                      "test backend: ctx_prepare did not run");
  const float *a = in[0].ptr, *b = in[1].ptr;
  float *y = out[0].ptr;
  int64_t n = mxc__shape_size(&out[0].shape);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = req[0] == MXC__REQ_ADD ? y[i] + a[i] + b[i] : a[i] + b[i];
  }
  atomic_fetch_add(&g_add_calls, 1);
  return MXC_OK;
}

static int relu_f32(const mxc__op *op, const mxc__opctx *ctx,
                    const void *param, const mxc__blob *in, int n_in,
                    const mxc__blob *out, int n_out, const mxc__req *req) {
  const float *x = in[0].ptr;
  float *y = out[0].ptr;
  int64_t n = mxc__shape_size(&out[0].shape);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  atomic_fetch_add(&g_relu_calls, 1);
  return MXC_OK;
}

/* float32 everywhere, all dense. */
static int only_f32(const mxc__op *op, const void *param,
                    const mxc__call_types *t) {
  for (int i = 0; i < t->n_in; ++i) {
    if (t->in_dtypes[i] != MXC_DTYPE_FLOAT32) return 0;
    if (t->in_stypes && t->in_stypes[i] > 0) return 0;
  }
  return 1;
}

static int attach_cpu(mxc__registry *r);
static int attach_gpu(mxc__registry *r);

static const mxc__backend k_testcpu = {
    .name = "testcpu",
    .dev_type = MXC_DEVICE_CPU,
    .priority = 10,
    .attach = attach_cpu,
    .ctx_prepare = prepare,
};

static const mxc__backend k_testgpu = {
    .name = "testgpu",
    .dev_type = MXC_DEVICE_GPU,
    .priority = 10,
    .attach = attach_gpu,
};

static int attach_cpu(mxc__registry *r) {
  mxc__kernel add = {.backend = &k_testcpu, .supports = only_f32,
                     .compute = add_f32};
  mxc__kernel relu = {.backend = &k_testcpu, .supports = only_f32,
                      .compute = relu_f32};
  MXC_FORWARD_IF_ERROR(mxc__registry_attach_kernel(r, "elemwise_add", &add));
  return mxc__registry_attach_kernel(r, "relu", &relu);
}

static int attach_gpu(mxc__registry *r) {
  mxc__kernel relu = {.backend = &k_testgpu, .compute = relu_f32};
  return mxc__registry_attach_kernel(r, "relu", &relu);
}

/* What went wrong while registering (checked by the tests: a constructor
 * cannot fail loudly). */
static int g_register_rc = MXC_OK;

__attribute__((constructor)) static void register_test_backends(void) {
  g_register_rc = mxc__backend_register(&k_testcpu);
  if (g_register_rc == MXC_OK) g_register_rc = mxc__backend_register(&k_testgpu);
}

int tb_register_rc(void) { return g_register_rc; }
int tb_add_calls(void) { return atomic_load(&g_add_calls); }
int tb_relu_calls(void) { return atomic_load(&g_relu_calls); }

int tb_register_late(void) {
  static const mxc__backend late = {.name = "late",
                                    .dev_type = MXC_DEVICE_CPU};
  return mxc__backend_register(&late);
}

/* Kernel i of op name: its backend's name, or NULL. */
const char *tb_kernel_backend(const char *name, int i) {
  const mxc__op *op = mxc__op_find(name);
  const mxc__kernel *k = op ? mxc__op_kernel_at(op, i) : NULL;
  return k ? k->backend->name : NULL;
}

int tb_supported(const char *name, int dev_type, int dtype, int stype) {
  const mxc__op *op = mxc__op_find(name);
  if (!op) return -1;
  int n_in = mxc__op_num_inputs(op, NULL);
  int dt[3] = {dtype, dtype, dtype}, st[3] = {stype, stype, stype};
  mxc__call_types t = {dt, st, n_in, dt, NULL, 1, NULL};
  return mxc__op_supported(op, dev_type, NULL, &t);
}

/* Every CPU kernel of a non-reference backend against the reference
 * kernel on the same float32 inputs (element-wise operators of 1 or 2
 * inputs: what the test backends attach), the way test-backend-ops
 * style checks will cover oneDNN. Returns the number of kernels compared,
 * or -1 with *worst set when some result differs. */
static double run_pair(const mxc__op *op, const mxc__kernel *k,
                       const void *param, int n_in) {
  enum { N = 21 };
  float x[2][N], y_ref[N], y_k[N];
  for (int j = 0; j < N; ++j) {
    x[0][j] = (float)(j % 7) - 3.25f;
    x[1][j] = (float)(j % 5) * 0.5f - 1.0f;
  }
  mxc__shape sh = {2, {3, 7}};
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  mxc__blob in[2] = {{x[0], sh, MXC_DTYPE_FLOAT32, cpu, MXC__FMT_PLAIN},
                     {x[1], sh, MXC_DTYPE_FLOAT32, cpu, MXC__FMT_PLAIN}};
  mxc__blob oref = {y_ref, sh, MXC_DTYPE_FLOAT32, cpu, MXC__FMT_PLAIN};
  mxc__blob ok = {y_k, sh, MXC_DTYPE_FLOAT32, cpu, MXC__FMT_PLAIN};
  mxc__req req = MXC__REQ_WRITE;
  mxc__opctx ctx = {0};
  ctx.dev = cpu;
  ctx.num_threads = 1;
  if (op->compute(op, &ctx, param, in, n_in, &oref, 1, &req) != MXC_OK) {
    return 1e30;
  }
  if (k->backend->ctx_prepare && k->backend->ctx_prepare(&ctx) != MXC_OK) {
    return 1e30;
  }
  if (k->compute(op, &ctx, param, in, n_in, &ok, 1, &req) != MXC_OK) {
    return 1e30;
  }
  double worst = 0;
  for (int j = 0; j < N; ++j) {
    double d = y_ref[j] > y_k[j] ? y_ref[j] - y_k[j] : y_k[j] - y_ref[j];
    if (d > worst) worst = d;
  }
  return worst;
}

int tb_compare_all(double *worst) {
  int compared = 0;
  *worst = 0;
  for (int i = 0; i < mxc__op_count(); ++i) {
    const mxc__op *op = mxc__op_at(i);
    const mxc__kernel *k;
    for (int j = 0; (k = mxc__op_kernel_at(op, j)) != NULL; ++j) {
      /* Real backends (oneDNN) have their own comparisons (tests/onednn). */
      if (k->backend == &mxc__backend_cpu_ref ||
          k->backend->dev_type != MXC_DEVICE_CPU ||
          strncmp(k->backend->name, "test", 4) != 0) {
        continue;
      }
      void *param = NULL;
      int n_in = mxc__op_num_inputs(op, NULL);
      if (n_in < 1 || n_in > 2 || op->resources ||
          mxc__op_parse_params(op, NULL, NULL, 0, &param) != MXC_OK) {
        return -1; /* a kernel this harness cannot drive yet */
      }
      double d = run_pair(op, k, param, n_in);
      mxc__free(param);
      if (d > *worst) *worst = d;
      ++compared;
    }
  }
  return *worst > 0 ? -1 : compared;
}

/* ---- channels-last values ---- */

/* Where plain element (n, c, s) lives in channels-last order. */
static int64_t cl_index(int64_t n, int64_t c, int64_t s, int64_t C,
                        int64_t S) {
  return (n * S + s) * C + c;
}

static void ncs_dims(int ndim, const int64_t *dims, int64_t *N, int64_t *C,
                     int64_t *S) {
  *N = dims[0];
  *C = dims[1];
  *S = 1;
  for (int i = 2; i < ndim; ++i) *S *= dims[i];
}

int tb_fmt_mismatches(int ndim, const int64_t *dims) {
  int64_t N, C, S;
  ncs_dims(ndim, dims, &N, &C, &S);
  int64_t total = N * C * S;
  float *cl = mxc__calloc((size_t)total, sizeof *cl);
  float *plain = mxc__calloc((size_t)total, sizeof *plain);
  mxc__blob b = {cl, {ndim, {0}}, MXC_DTYPE_FLOAT32, {MXC_DEVICE_CPU, 0},
                 MXC__FMT_CHANNELS_LAST};
  for (int i = 0; i < ndim; ++i) b.shape.dims[i] = dims[i];
  for (int64_t i = 0; i < total; ++i) plain[i] = (float)i;
  mxc__fmt_from_plain(plain, &b);
  int bad = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s)
        bad += cl[cl_index(n, c, s, C, S)] != (float)((n * C + c) * S + s);
  memset(plain, 0, (size_t)total * sizeof *plain);
  mxc__fmt_to_plain(&b, plain);
  for (int64_t i = 0; i < total; ++i) bad += plain[i] != (float)i;
  mxc__free(cl);
  mxc__free(plain);
  return bad;
}

/* A plain-only kernel: out = 2 * in (+ out with req add), and it checks
 * that it got plain blobs. */
static int twice(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                 const mxc__blob *in, int n_in, const mxc__blob *out,
                 int n_out, const mxc__req *req) {
  if (in[0].fmt != MXC__FMT_PLAIN || out[0].fmt != MXC__FMT_PLAIN) {
    return mxc__error_set(MXC_ERR_INTERNAL, "twice: not plain");
  }
  int64_t n = mxc__shape_size(&in[0].shape);
  const float *x = in[0].ptr;
  float *y = out[0].ptr;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = 2 * x[i] + (req[0] == MXC__REQ_ADD ? y[i] : 0);
  }
  return MXC_OK;
}

int tb_fmt_compute_mismatches(void) {
  enum { N = 2, C = 3, H = 4, W = 5, T = N * C * H * W };
  float x[T], y[T], xp[T];
  for (int i = 0; i < T; ++i) xp[i] = (float)i;
  mxc__blob in = {x, {4, {N, C, H, W}}, MXC_DTYPE_FLOAT32,
                  {MXC_DEVICE_CPU, 0}, MXC__FMT_CHANNELS_LAST};
  mxc__blob out = in;
  out.ptr = y;
  mxc__fmt_from_plain(xp, &in);
  for (int i = 0; i < T; ++i) y[i] = 1000; /* every element, any layout */
  mxc__req req = MXC__REQ_ADD;
  const mxc__op *op = mxc__op_find("relu");
  if (!op || mxc__fmt_compute(twice, op, NULL, NULL, &in, 1, &out, 1,
                              &req) != MXC_OK) {
    return -1;
  }
  float yp[T];
  mxc__fmt_to_plain(&out, yp);
  int bad = 0;
  for (int i = 0; i < T; ++i) bad += yp[i] != 2 * (float)i + 1000;
  return bad;
}

int tb_fmt_bf16_mismatches(void) {
  enum { N = 2, C = 3, S = 4, T = N * C * S };
  float plain[T], back[T];
  uint16_t cl[2 * T]; /* a float32 array's bytes */
  for (int i = 0; i < T; ++i) plain[i] = (float)(i - 7);
  mxc__blob b = {cl, {3, {N, C, S}}, MXC_DTYPE_FLOAT32, {MXC_DEVICE_CPU, 0},
                 MXC__FMT_CHANNELS_LAST_BF16};
  mxc__fmt_from_plain(plain, &b);
  int bad = 0;
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int s = 0; s < S; ++s) {
        float want = plain[(n * C + c) * S + s];
        uint32_t u = (uint32_t)cl[cl_index(n, c, s, C, S)] << 16;
        float got;
        memcpy(&got, &u, sizeof got);
        bad += got != want;
      }
  mxc__fmt_to_plain(&b, back);
  for (int i = 0; i < T; ++i) bad += back[i] != plain[i];
  /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even (1);
   * 1 + 3 * 2^-9 rounds up; 1 + 2^-9 down. */
  const float in[3] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-9f, 1.0f + 0x1p-9f};
  const float want[3] = {1.0f, 1.0f + 0x1p-7f, 1.0f};
  for (int k = 0; k < 3; ++k) {
    float p3[3] = {in[k], in[k], in[k]}, r3[3];
    mxc__blob t = {cl, {3, {1, 1, 3}}, MXC_DTYPE_FLOAT32,
                   {MXC_DEVICE_CPU, 0}, MXC__FMT_CHANNELS_LAST_BF16};
    mxc__fmt_from_plain(p3, &t);
    mxc__fmt_to_plain(&t, r3);
    bad += r3[0] != want[k];
  }
  return bad;
}
