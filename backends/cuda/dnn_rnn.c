/* mxc's RNN and _backward_RNN on cuDNN 9's RNN API (dnn_rnn.h).
 *
 * Per call: mxc's packed parameters are copied (device to device) into
 * cuDNN's weight space at the addresses cudnnGetRNNWeightParams gives
 * for each (pseudo-layer, linLayerID) of rnn_plan.h; the results are
 * computed into workspace buffers and then written to the outputs in
 * their modes (ADD through cudnnAddTensor). The weight gradient is
 * accumulated by cuDNN (CUDNN_WGRAD_MODE_ADD) into a weight-space buffer
 * that starts as zeros, or as the current dparameters in ADD mode, and
 * is copied back per the plan.
 *
 * The RNN functions live in libcudnn_adv.so.9, which libcudnn.so.9 opens
 * on first use: they are resolved here from libcudnn.so.9 (or
 * MXC_CUDNN_LIBRARY) by a dynlib of their own, so that the other cuDNN
 * kernels (and the fake cuDNN of the tests, which lacks them) are not
 * affected; a missing libcudnn_adv.so.9 is cuDNN's
 * SUBLIBRARY_UNAVAILABLE, which dnn_lib.c's message turns into what to
 * install. */
#include "backends/cuda/dnn_rnn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/dnn_lib.h"
#include "backends/cuda/dynlib.h"
#include "backends/cuda/rnn_plan.h"

_Static_assert(MXC__RNN_RELU == (int)CUDNN_RNN_RELU &&
                   MXC__RNN_TANH == (int)CUDNN_RNN_TANH &&
                   MXC__RNN_LSTM == (int)CUDNN_LSTM &&
                   MXC__RNN_GRU == (int)CUDNN_GRU,
               "mxc's RNN modes are cudnnRNNMode_t's values");

/* ---- the RNN functions, opened on first use ---- */

#define RNN_FNS(X)                 \
  X(cudnnCreateRNNDescriptor)      \
  X(cudnnDestroyRNNDescriptor)     \
  X(cudnnSetRNNDescriptor_v8)      \
  X(cudnnCreateRNNDataDescriptor)  \
  X(cudnnDestroyRNNDataDescriptor) \
  X(cudnnSetRNNDataDescriptor)     \
  X(cudnnGetRNNWeightSpaceSize)    \
  X(cudnnGetRNNWeightParams)       \
  X(cudnnGetRNNTempSpaceSizes)     \
  X(cudnnRNNForward)               \
  X(cudnnRNNBackwardData_v8)       \
  X(cudnnRNNBackwardWeights_v8)    \
  X(cudnnCreateDropoutDescriptor)  \
  X(cudnnDestroyDropoutDescriptor) \
  X(cudnnSetDropoutDescriptor)     \
  X(cudnnGetTensorNdDescriptor)

enum {
#define IDX(name) RF_##name,
  RNN_FNS(IDX)
#undef IDX
      RF_COUNT
};

static void *g_fns[RF_COUNT];
static const char *const k_symbols[] = {
#define NAME(name) #name,
    RNN_FNS(NAME)
#undef NAME
        NULL};
static const char *k_files[] = {"libcudnn.so.9", NULL};

#define RN(name) ((__typeof__(&name))g_fns[RF_##name])

static mxc__cuda_dynlib k_lib = {
    .what = "cuDNN 9's RNN functions",
    .install =
        "cuDNN 9 for CUDA 13 with its libcudnn_adv.so.9 (NVIDIA's "
        "cudnn9-cuda-13 package, or the nvidia-cudnn-cu13 Python wheel, "
        "whose nvidia/cudnn/lib folder then goes on LD_LIBRARY_PATH)",
    .files = k_files,
    .symbols = k_symbols,
    .fns = g_fns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t g_files_once = PTHREAD_ONCE_INIT;

/* The file dnn_lib.c opens (MXC_CUDNN_LIBRARY, read once, or
 * libcudnn.so.9). */
static void pick_files(void) {
  const char *f = getenv("MXC_CUDNN_LIBRARY");
  if (f && *f) k_files[0] = f;
}

/* cuDNN opened with its RNN functions, device dev current, the thread's
 * handle in *h. */
static int rnn_begin(int dev, cudnnHandle_t *h, char *why, size_t len) {
  int rc = mxc__cudnn_begin(dev, h, why, len);
  if (rc != MXC_OK) return rc;
  (void)pthread_once(&g_files_once, pick_files);
  return mxc__cuda_dynlib_load(&k_lib, why, len);
}

/* ---- per (thread, device): descriptors, cached for the last shape ---- */

typedef struct rnn_descs {
  cudnnRNNDescriptor_t rnn;
  cudnnDropoutDescriptor_t drop;
  cudnnRNNDataDescriptor_t xd, yd;
  cudnnTensorDescriptor_t hd, md, bd, vd;
  int64_t key[8]; /* mode, bidirectional, T, N, I, H, L; key[7] 1: set */
  int *lens;      /* host: every row's length (T) */
  int64_t lens_n;
  size_t wbytes, work[2], res[2]; /* [0] inference, [1] training */
} rnn_descs;

static int descs_create(void *obj, int dev, char *why, size_t len) {
  (void)dev;
  rnn_descs *k = obj;
  DN_TRY(RN(cudnnCreateRNNDescriptor)(&k->rnn), "cudnnCreateRNNDescriptor");
  DN_TRY(RN(cudnnCreateDropoutDescriptor)(&k->drop),
         "cudnnCreateDropoutDescriptor");
  DN_TRY(RN(cudnnCreateRNNDataDescriptor)(&k->xd),
         "cudnnCreateRNNDataDescriptor");
  DN_TRY(RN(cudnnCreateRNNDataDescriptor)(&k->yd),
         "cudnnCreateRNNDataDescriptor");
  cudnnTensorDescriptor_t *t[] = {&k->hd, &k->md, &k->bd, &k->vd};
  for (int i = 0; i < 4; ++i) {
    DN_TRY(DN(cudnnCreateTensorDescriptor)(t[i]),
           "cudnnCreateTensorDescriptor");
  }
  return MXC_OK;
}

/* At thread exit; also after a failed create (the slot is then dropped),
 * so every handle may still be NULL. */
static void descs_destroy(void *obj, int dev) {
  (void)dev;
  rnn_descs *k = obj;
  if (k->rnn) (void)RN(cudnnDestroyRNNDescriptor)(k->rnn);
  if (k->drop) (void)RN(cudnnDestroyDropoutDescriptor)(k->drop);
  if (k->xd) (void)RN(cudnnDestroyRNNDataDescriptor)(k->xd);
  if (k->yd) (void)RN(cudnnDestroyRNNDataDescriptor)(k->yd);
  cudnnTensorDescriptor_t t[] = {k->hd, k->md, k->bd, k->vd};
  for (int i = 0; i < 4; ++i) {
    if (t[i]) (void)DN(cudnnDestroyTensorDescriptor)(t[i]);
  }
  free(k->lens);
  memset(k, 0, sizeof *k);
}

/* create must leave nothing behind on failure (cuda_rt.h). */
static int descs_create_all(void *obj, int dev, char *why, size_t len) {
  int rc = descs_create(obj, dev, why, len);
  if (rc != MXC_OK) descs_destroy(obj, dev);
  return rc;
}

static const mxc__cuda_tls_lib k_descs_lib = {
    .name = "cuDNN RNN",
    .size = sizeof(rnn_descs),
    .create = descs_create_all,
    .destroy = descs_destroy,
    .bind = NULL,
};

/* Every row has T steps: the packed layout is then mxc's (T, N, C). */
static int set_data_desc(rnn_descs *k, cudnnRNNDataDescriptor_t d,
                         const mxc__rnn_geom *g, int64_t vec, char *why,
                         size_t len) {
  DN_TRY(RN(cudnnSetRNNDataDescriptor)(
             d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
             (int)g->T, (int)g->N, (int)vec, k->lens, NULL),
         "cudnnSetRNNDataDescriptor");
  return MXC_OK;
}

static int set_lens(rnn_descs *k, const mxc__rnn_geom *g, char *why,
                    size_t len) {
  if (k->lens_n < g->N) {
    int *p = realloc(k->lens, (size_t)g->N * sizeof(int));
    if (!p) {
      snprintf(why, len, "cuDNN RNN: no host memory for %lld lengths",
               (long long)g->N);
      return MXC_ERR_OOM;
    }
    k->lens = p;
    k->lens_n = g->N;
  }
  for (int64_t n = 0; n < g->N; ++n) k->lens[n] = (int)g->T;
  return MXC_OK;
}

/* The RNN descriptor: float32 with FMA math (no TF32, whose ~1e-3 error
 * the conformance tolerance would not take), two biases per gate as
 * mxc's parameters have, no dropout (the plan refuses it in training). */
static int set_rnn_desc(rnn_descs *k, cudnnHandle_t h, const mxc__rnn_plan *pl,
                        char *why, size_t len) {
  const mxc__rnn_geom *g = &pl->g;
  DN_TRY(RN(cudnnSetDropoutDescriptor)(k->drop, h, 0.f, NULL, 0, 0),
         "cudnnSetDropoutDescriptor");
  DN_TRY(RN(cudnnSetRNNDescriptor_v8)(
             k->rnn, CUDNN_RNN_ALGO_STANDARD, (cudnnRNNMode_t)pl->cell_mode,
             CUDNN_RNN_DOUBLE_BIAS,
             pl->bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
             CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
             CUDNN_FMA_MATH, (int32_t)g->I, (int32_t)g->H, (int32_t)g->H,
             (int32_t)g->L, k->drop, CUDNN_RNN_PADDED_IO_DISABLED),
         "cudnnSetRNNDescriptor_v8");
  return MXC_OK;
}

/* hx, cx, hy, cy, their gradients: (L*D, N, H), compact. */
static int set_state_desc(rnn_descs *k, const mxc__rnn_geom *g, char *why,
                          size_t len) {
  int dims[3] = {(int)(g->L * g->D), (int)g->N, (int)g->H};
  int strides[3] = {(int)(g->N * g->H), (int)g->H, 1};
  DN_TRY(
      DN(cudnnSetTensorNdDescriptor)(k->hd, CUDNN_DATA_FLOAT, 3, dims, strides),
      "cudnnSetTensorNdDescriptor");
  return MXC_OK;
}

static int query_sizes(rnn_descs *k, cudnnHandle_t h, char *why, size_t len) {
  DN_TRY(RN(cudnnGetRNNWeightSpaceSize)(h, k->rnn, &k->wbytes),
         "cudnnGetRNNWeightSpaceSize");
  static const cudnnForwardMode_t modes[2] = {CUDNN_FWD_MODE_INFERENCE,
                                              CUDNN_FWD_MODE_TRAINING};
  for (int i = 0; i < 2; ++i) {
    DN_TRY(RN(cudnnGetRNNTempSpaceSizes)(h, k->rnn, modes[i], k->xd,
                                         &k->work[i], &k->res[i]),
           "cudnnGetRNNTempSpaceSizes");
  }
  return MXC_OK;
}

/* Sets the descriptors for the plan's shape unless they already are. */
static int descs_for(rnn_descs *k, cudnnHandle_t h, const mxc__rnn_plan *pl,
                     char *why, size_t len) {
  const mxc__rnn_geom *g = &pl->g;
  int64_t key[8] = {
      pl->cell_mode, pl->bidirectional, g->T, g->N, g->I, g->H, g->L, 1};
  if (memcmp(key, k->key, sizeof key) == 0) return MXC_OK;
  k->key[7] = 0; /* unset until every step succeeded */
  int rc = set_lens(k, g, why, len);
  if (rc == MXC_OK) rc = set_rnn_desc(k, h, pl, why, len);
  if (rc == MXC_OK) rc = set_data_desc(k, k->xd, g, g->I, why, len);
  if (rc == MXC_OK) rc = set_data_desc(k, k->yd, g, g->D * g->H, why, len);
  if (rc == MXC_OK) rc = set_state_desc(k, g, why, len);
  if (rc == MXC_OK) rc = query_sizes(k, h, why, len);
  if (rc == MXC_OK) memcpy(k->key, key, sizeof key);
  return rc;
}

/* ---- one call ---- */

/* Workspace buffers, in order; 256-byte aligned. */
enum {
  B_W,
  B_DW,
  B_RES,
  B_WORK,
  B_Y,
  B_HY,
  B_CY,
  B_DX,
  B_DHX,
  B_DCX,
  B_LENS,
  B_COUNT
};

typedef struct rnn_call {
  const mxc__gpu_call *c;
  mxc__rnn_plan pl;
  cudnnHandle_t h;
  rnn_descs *k;
  mxc__cudnn_ws *ws; /* locked */
  int train;
  size_t bytes[B_COUNT];
  char *buf[B_COUNT];
} rnn_call;

static size_t up256(size_t n) { return (n + 255) / 256 * 256; }

/* Sizes of the buffers this call needs (backward: the weight gradient
 * and the input gradients too). */
static void call_sizes(rnn_call *r, int backward) {
  const mxc__rnn_plan *pl = &r->pl;
  size_t f = sizeof(float);
  memset(r->bytes, 0, sizeof r->bytes);
  r->bytes[B_W] = r->k->wbytes;
  r->bytes[B_RES] = r->k->res[r->train];
  r->bytes[B_WORK] = r->k->work[r->train];
  r->bytes[B_Y] = (size_t)pl->n_y * f;
  r->bytes[B_HY] = r->bytes[B_CY] = (size_t)pl->n_h * f;
  r->bytes[B_LENS] = (size_t)pl->g.N * sizeof(int32_t);
  if (!backward) return;
  r->bytes[B_DW] = r->k->wbytes;
  r->bytes[B_DX] = (size_t)pl->n_x * f;
  r->bytes[B_DHX] = r->bytes[B_DCX] = (size_t)pl->n_h * f;
}

/* Locks the device's workspace, grows it and carves the buffers. */
static int carve(rnn_call *r, char *why, size_t len) {
  size_t total = 0;
  for (int i = 0; i < B_COUNT; ++i) total += up256(r->bytes[i]);
  r->ws = mxc__cudnn_workspace(r->c->dev);
  pthread_mutex_lock(&r->ws->mu);
  int rc = mxc__cudnn_ws_reserve(r->ws, total ? total : 256, why, len);
  char *p = r->ws->ptr;
  for (int i = 0; rc == MXC_OK && i < B_COUNT; ++i) {
    r->buf[i] = r->bytes[i] ? p : NULL;
    p += up256(r->bytes[i]);
  }
  return rc;
}

static int rt_try(cudaError_t e, const char *what, char *why, size_t len) {
  return e == cudaSuccess ? MXC_OK : mxc__cuda_rt_fail(why, len, what, e);
}

/* Opens everything for a call whose plan r->pl is made; on failure with
 * r->ws set, the caller still releases it (call_end). */
static int call_begin(rnn_call *r, int backward, char *why, size_t len) {
  int rc = rnn_begin(r->c->dev, &r->h, why, len);
  void *obj = NULL;
  if (rc == MXC_OK)
    rc = mxc__cuda_tls_slot(&k_descs_lib, r->c->dev, &obj, why, len);
  if (rc != MXC_OK) return rc;
  r->k = obj;
  /* an empty sequence or batch only copies states (cuDNN takes neither) */
  if (r->pl.g.T == 0 || r->pl.g.N == 0) return MXC_OK;
  if ((rc = descs_for(r->k, r->h, &r->pl, why, len)) != MXC_OK) return rc;
  call_sizes(r, backward);
  if ((rc = carve(r, why, len)) != MXC_OK) return rc;
  /* every row has T steps; cuDNN reads the lengths from the device */
  return rt_try(cudaMemcpyAsync(r->buf[B_LENS], r->k->lens, r->bytes[B_LENS],
                                cudaMemcpyHostToDevice, mxc__cuda_stream()),
                "cudaMemcpyAsync (sequence lengths)", why, len);
}

/* Waits for the call's work while the workspace is held (it is shared
 * by the device's streams), then releases it. A call that held none (an
 * empty sequence or batch: copies only) ends as every kernel does. */
static int call_end(rnn_call *r, int rc, char *why, size_t len) {
  if (!r->ws)
    return rc == MXC_OK ? mxc__cuda_finish("cuDNN RNN", why, len) : rc;
  rc = mxc__cuda_wait(rc, "cuDNN RNN", why, len);
  pthread_mutex_unlock(&r->ws->mu);
  return rc;
}

/* The (pseudo-layer, linLayerID) matrix and bias addresses inside the
 * weight-space buffer space, checked against the plan's sizes. */
static int mat_addr(rnn_call *r, const mxc__rnn_mat *m, char *space, char **w,
                    char **b, char *why, size_t len) {
  void *wa = NULL, *ba = NULL;
  DN_TRY(RN(cudnnGetRNNWeightParams)(r->h, r->k->rnn, m->pseudo_layer,
                                     r->k->wbytes, space, m->lin_id, r->k->md,
                                     &wa, r->k->bd, &ba),
         "cudnnGetRNNWeightParams");
  cudnnTensorDescriptor_t d[2] = {r->k->md, r->k->bd};
  int64_t want[2] = {m->rows * m->cols, m->rows};
  for (int i = 0; i < 2; ++i) {
    cudnnDataType_t dt;
    int nb = 0, dims[8], st[8];
    DN_TRY(RN(cudnnGetTensorNdDescriptor)(d[i], 8, &dt, &nb, dims, st),
           "cudnnGetTensorNdDescriptor");
    int64_t n = 1;
    for (int j = 0; j < nb; ++j) n *= dims[j];
    if (n != want[i]) {
      snprintf(why, len,
               "cuDNN RNN: pseudo-layer %d linLayerID %d has a %s of %lld "
               "elements; the plan expects %lld",
               m->pseudo_layer, m->lin_id, i ? "bias" : "matrix", (long long)n,
               (long long)want[i]);
      return MXC_ERR_INTERNAL;
    }
  }
  *w = wa;
  *b = ba;
  return MXC_OK;
}

/* Copies between mxc's packed vector and a weight-space buffer, matrix by
 * matrix (to_space 1: into cuDNN's layout). */
static int weights_copy(rnn_call *r, char *space, char *packed, int to_space,
                        char *why, size_t len) {
  size_t f = sizeof(float);
  cudaStream_t s = mxc__cuda_stream();
  for (int k = 0; k < r->pl.n_mats; ++k) {
    mxc__rnn_mat m = mxc__rnn_plan_mat(&r->pl, k);
    char *w = NULL, *b = NULL;
    int rc = mat_addr(r, &m, space, &w, &b, why, len);
    if (rc != MXC_OK) return rc;
    char *pw = packed + (size_t)m.w_off * f, *pb = packed + (size_t)m.b_off * f;
    size_t nw = (size_t)(m.rows * m.cols) * f, nb = (size_t)m.rows * f;
    enum cudaMemcpyKind kd = cudaMemcpyDeviceToDevice;
    cudaError_t e = to_space ? cudaMemcpyAsync(w, pw, nw, kd, s)
                             : cudaMemcpyAsync(pw, w, nw, kd, s);
    if (e == cudaSuccess)
      e = to_space ? cudaMemcpyAsync(b, pb, nb, kd, s)
                   : cudaMemcpyAsync(pb, b, nb, kd, s);
    if (e != cudaSuccess)
      return mxc__cuda_rt_fail(why, len, "cudaMemcpyAsync", e);
  }
  return MXC_OK;
}

/* The weight space from mxc's parameters (zeros first: cuDNN may keep
 * padding between the matrices). */
static int load_weights(rnn_call *r, const void *params, char *why,
                        size_t len) {
  int rc =
      rt_try(cudaMemsetAsync(r->buf[B_W], 0, r->k->wbytes, mxc__cuda_stream()),
             "cudaMemsetAsync", why, len);
  if (rc != MXC_OK) return rc;
  return weights_copy(r, r->buf[B_W], (char *)params, 1, why, len);
}

/* dst (n floats) (req) src; src NULL is zeros. */
static int put(rnn_call *r, void *dst, const void *src, int64_t n, int req,
               char *why, size_t len) {
  if (req == MXC__GPU_REQ_NULL || n == 0) return MXC_OK;
  cudaStream_t s = mxc__cuda_stream();
  size_t nb = (size_t)n * sizeof(float);
  if (req != MXC__GPU_REQ_ADD) {
    cudaError_t e =
        src ? cudaMemcpyAsync(dst, src, nb, cudaMemcpyDeviceToDevice, s)
            : cudaMemsetAsync(dst, 0, nb, s);
    return rt_try(e, "cudaMemcpyAsync", why, len);
  }
  if (!src) return MXC_OK;
  int dims[4] = {1, (int)n, 1, 1}, st[4] = {(int)n, 1, 1, 1};
  const float one = 1.f;
  DN_TRY(
      DN(cudnnSetTensorNdDescriptor)(r->k->vd, CUDNN_DATA_FLOAT, 4, dims, st),
      "cudnnSetTensorNdDescriptor");
  DN_TRY(DN(cudnnAddTensor)(r->h, &one, r->k->vd, src, &one, r->k->vd, dst),
         "cudnnAddTensor");
  return MXC_OK;
}

/* cudnnRNNForward into the workspace's y, hy, cy. */
static int run_forward(rnn_call *r, const mxc__gpu_array *in, char *why,
                       size_t len) {
  const void *cx = r->pl.lstm ? in[3].ptr : NULL;
  DN_TRY(RN(cudnnRNNForward)(
             r->h, r->k->rnn,
             r->train ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
             (const int32_t *)r->buf[B_LENS], r->k->xd, in[0].ptr, r->k->yd,
             r->buf[B_Y], r->k->hd, in[2].ptr, r->buf[B_HY], r->k->hd, cx,
             r->pl.lstm ? r->buf[B_CY] : NULL, r->k->wbytes, r->buf[B_W],
             r->bytes[B_WORK], r->buf[B_WORK], r->bytes[B_RES], r->buf[B_RES]),
         "cudnnRNNForward");
  return MXC_OK;
}

/* An empty sequence or batch (cuDNN takes neither): the final states are
 * the initial ones. */
static int forward_empty(rnn_call *r, char *why, size_t len) {
  const mxc__gpu_call *c = r->c;
  int rc = put(r, c->out[0].ptr, NULL, r->pl.n_y, c->req[0], why, len);
  for (int i = 1; rc == MXC_OK && i <= r->pl.n_states_out; ++i)
    rc =
        put(r, c->out[i].ptr, c->in[1 + i].ptr, r->pl.n_h, c->req[i], why, len);
  return rc;
}

static int forward_body(rnn_call *r, char *why, size_t len) {
  const mxc__gpu_call *c = r->c;
  if (r->pl.g.T == 0 || r->pl.g.N == 0) return forward_empty(r, why, len);
  int rc = load_weights(r, c->in[1].ptr, why, len);
  if (rc == MXC_OK) rc = run_forward(r, c->in, why, len);
  if (rc == MXC_OK)
    rc = put(r, c->out[0].ptr, r->buf[B_Y], r->pl.n_y, c->req[0], why, len);
  const char *st[2] = {r->buf[B_HY], r->buf[B_CY]};
  for (int i = 1; rc == MXC_OK && i <= r->pl.n_states_out; ++i)
    rc = put(r, c->out[i].ptr, st[i - 1], r->pl.n_h, c->req[i], why, len);
  return rc;
}

int mxc__cuda_rnn_forward(const mxc__gpu_call *c, char *why, size_t len) {
  rnn_call r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.train = 0; /* no dropout (the plan's refusal): inference computes it */
  int rc =
      mxc__rnn_plan_make(c->param, c->in[0].dims, c->is_train, &r.pl, why, len);
  if (rc != MXC_OK) return rc;
  rc = call_begin(&r, 0, why, len);
  if (rc == MXC_OK) rc = forward_body(&r, why, len);
  return call_end(&r, rc, why, len);
}

/* ---- backward ---- */

/* cuDNN's input gradients into the workspace's dx, dhx, dcx. */
static int run_bwd_data(rnn_call *r, const mxc__gpu_array *fin, char *why,
                        size_t len) {
  const mxc__gpu_call *c = r->c;
  const void *dhy = r->pl.n_vis > 1 ? c->in[1].ptr : NULL;
  const void *dcy = r->pl.n_vis > 2 ? c->in[2].ptr : NULL;
  const void *cx = r->pl.lstm ? fin[3].ptr : NULL;
  DN_TRY(RN(cudnnRNNBackwardData_v8)(
             r->h, r->k->rnn, (const int32_t *)r->buf[B_LENS], r->k->yd,
             r->buf[B_Y], c->in[0].ptr, r->k->xd, r->buf[B_DX], r->k->hd,
             fin[2].ptr, dhy, r->buf[B_DHX], r->k->hd, cx, dcy,
             r->pl.lstm ? r->buf[B_DCX] : NULL, r->k->wbytes, r->buf[B_W],
             r->bytes[B_WORK], r->buf[B_WORK], r->bytes[B_RES], r->buf[B_RES]),
         "cudnnRNNBackwardData_v8");
  return MXC_OK;
}

/* The weight gradient: cuDNN adds into B_DW, which holds zeros or (ADD)
 * the current dparameters; then back into mxc's layout. */
static int run_bwd_weights(rnn_call *r, const mxc__gpu_array *fin, char *why,
                           size_t len) {
  const mxc__gpu_call *c = r->c;
  int req = c->req[1];
  if (req == MXC__GPU_REQ_NULL) return MXC_OK;
  int rc =
      rt_try(cudaMemsetAsync(r->buf[B_DW], 0, r->k->wbytes, mxc__cuda_stream()),
             "cudaMemsetAsync", why, len);
  if (rc == MXC_OK && req == MXC__GPU_REQ_ADD)
    rc = weights_copy(r, r->buf[B_DW], c->out[1].ptr, 1, why, len);
  if (rc != MXC_OK) return rc;
  DN_TRY(RN(cudnnRNNBackwardWeights_v8)(
             r->h, r->k->rnn, CUDNN_WGRAD_MODE_ADD,
             (const int32_t *)r->buf[B_LENS], r->k->xd, fin[0].ptr, r->k->hd,
             fin[2].ptr, r->k->yd, r->buf[B_Y], r->k->wbytes, r->buf[B_DW],
             r->bytes[B_WORK], r->buf[B_WORK], r->bytes[B_RES], r->buf[B_RES]),
         "cudnnRNNBackwardWeights_v8");
  return weights_copy(r, r->buf[B_DW], c->out[1].ptr, 0, why, len);
}

/* Empty sequence or batch: no input or weight gradient; the initial
 * states' gradients are those of the final ones. */
static int backward_empty(rnn_call *r, char *why, size_t len) {
  const mxc__gpu_call *c = r->c;
  int rc = put(r, c->out[0].ptr, NULL, r->pl.n_x, c->req[0], why, len);
  if (rc == MXC_OK)
    rc = put(r, c->out[1].ptr, NULL, r->pl.n_params, c->req[1], why, len);
  for (int i = 0; rc == MXC_OK && i < 1 + r->pl.lstm; ++i) {
    const void *src = r->pl.n_vis > 1 + i ? c->in[1 + i].ptr : NULL;
    rc = put(r, c->out[2 + i].ptr, src, r->pl.n_h, c->req[2 + i], why, len);
  }
  return rc;
}

static int backward_body(rnn_call *r, char *why, size_t len) {
  const mxc__gpu_call *c = r->c;
  const mxc__gpu_array *fin = c->in + r->pl.in_fwd;
  if (r->pl.g.T == 0 || r->pl.g.N == 0) return backward_empty(r, why, len);
  /* cuDNN's reserve space is not mxc's hidden output: recompute it */
  int rc = load_weights(r, fin[1].ptr, why, len);
  if (rc == MXC_OK) rc = run_forward(r, fin, why, len);
  if (rc == MXC_OK) rc = run_bwd_data(r, fin, why, len);
  if (rc == MXC_OK) rc = run_bwd_weights(r, fin, why, len);
  if (rc == MXC_OK)
    rc = put(r, c->out[0].ptr, r->buf[B_DX], r->pl.n_x, c->req[0], why, len);
  const char *st[2] = {r->buf[B_DHX], r->buf[B_DCX]};
  for (int i = 0; rc == MXC_OK && i < 1 + r->pl.lstm; ++i)
    rc = put(r, c->out[2 + i].ptr, st[i], r->pl.n_h, c->req[2 + i], why, len);
  return rc;
}

int mxc__cuda_rnn_backward(const mxc__gpu_call *c, char *why, size_t len) {
  rnn_call r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.train = 1; /* the reserve space the backward needs */
  const mxc__gpu_array *data = c->in + mxc__rnn_plan_data_input(c->param, 1);
  int rc =
      mxc__rnn_plan_make(c->param, data->dims, c->is_train, &r.pl, why, len);
  if (rc != MXC_OK) return rc;
  rc = call_begin(&r, 1, why, len);
  if (rc == MXC_OK) rc = backward_body(&r, why, len);
  return call_end(&r, rc, why, len);
}

/* ---- accepts (accepts.h) ---- */

/* A query from a graph pass has no shapes: the parameters alone decide
 * then; with shapes, the whole plan does, as run would. */
static int rnn_accepts(const mxc__gpu_call *c, int backward, char *why,
                       size_t len) {
  if (!mxc__gpu_call_has_shapes(c)) {
    const char *no = mxc__rnn_plan_refusal(c->param, c->is_train);
    if (no) snprintf(why, len, "%s", no);
    return no == NULL;
  }
  int d = mxc__rnn_plan_data_input(c->param, backward);
  if (d >= c->n_in) return 1; /* run reports the malformed call */
  mxc__rnn_plan pl;
  return mxc__rnn_plan_make(c->param, c->in[d].dims, c->is_train, &pl, why,
                            len) == MXC_OK;
}

int mxc__cuda_rnn_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return rnn_accepts(c, 0, why, len);
}

int mxc__cuda_rnn_bwd_accepts(const mxc__gpu_call *c, char *why, size_t len) {
  return rnn_accepts(c, 1, why, len);
}
