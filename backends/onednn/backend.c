/* The oneDNN backend: registration, engine and streams, errors, the
 * switch, the thread budget and the post-op attribute (onednn.h). */
#include <oneapi/dnnl/dnnl_debug.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"
#include "core/op/parallel.h"

/* libgomp's per-thread team size: declared here rather than through
 * <omp.h>, which clang (the fuzz build) does not ship; libdnnl links
 * libgomp, the OpenMP runtime Debian built oneDNN with. */
void omp_set_num_threads(int n);

/* ---- switch ---- */

static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static int g_enabled = 1;

static void read_env(void) {
  const char *v = getenv("MXC_ONEDNN");
  g_enabled = !(v && strcmp(v, "0") == 0);
}

int mxc__dnnl_enabled(void) {
  pthread_once(&g_env_once, read_env);
  return g_enabled;
}

/* ---- errors ---- */

int mxc__dnnl_check(dnnl_status_t st, const mxc__op *op, const char *call) {
  if (MXC__LIKELY(st == dnnl_success)) return MXC_OK;
  int code = st == dnnl_out_of_memory   ? MXC_ERR_OOM
             : st == dnnl_unimplemented ? MXC_ERR_UNSUPPORTED
                                        : MXC_ERR_INTERNAL;
  return mxc__error_set(code, "operator '%s' (oneDNN backend): %s failed: %s",
                        op ? op->name : "?", call, dnnl_status2str(st));
}

/* ---- engine and streams ---- */

static pthread_once_t g_engine_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t g_engine;
static dnnl_status_t g_engine_st = dnnl_success;
static pthread_key_t g_stream_key;

static void destroy_stream(void *s) { dnnl_stream_destroy(s); }

static void create_engine(void) {
  g_engine_st = dnnl_engine_create(&g_engine, dnnl_cpu, 0);
  if (pthread_key_create(&g_stream_key, destroy_stream) != 0) {
    g_engine_st = dnnl_out_of_memory;
  }
}

int mxc__dnnl_engine(dnnl_engine_t *out) {
  pthread_once(&g_engine_once, create_engine);
  *out = g_engine;
  return mxc__dnnl_check(g_engine_st, NULL, "dnnl_engine_create");
}

int mxc__dnnl_stream(dnnl_stream_t *out) {
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  dnnl_stream_t s = pthread_getspecific(g_stream_key);
  if (!s) {
    MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
        dnnl_stream_create(&s, eng, dnnl_stream_default_flags), NULL,
        "dnnl_stream_create"));
    if (pthread_setspecific(g_stream_key, s) != 0) {
      dnnl_stream_destroy(s);
      return mxc__error_set(MXC_ERR_OOM, "oneDNN backend: no room to keep "
                                         "this thread's stream");
    }
  }
  *out = s;
  return MXC_OK;
}

/* ---- thread budget ---- */

static _Thread_local int t_nthr = 1;

/* Every call runs with the whole kernel pool, waiting for it when another
 * kernel holds it, so that:
 *  - the team size is always the same: oneDNN's results (a convolution's
 *    weight gradient, a batch norm's sums) depend on how many threads
 *    split them, and a run must not depend on timing (training resumed
 *    from a checkpoint matches an uninterrupted one bit for bit:
 *    tests/fit);
 *  - the cores are never oversubscribed.
 * It also kept two threads from sharing a cached primitive's
 * library-managed scratchpad (seen as wrong results in tests/predict's
 * threaded predictors); scratchpads are now the caller's, one per call
 * (run.c), which a later change could use to let primitives overlap.
 * Returns the claim, for mxc__dnnl_threads_end. */
int mxc__dnnl_threads_begin(void) {
  int granted = mxc__parallel_claim_wait();
#ifdef MXC_SANITIZER_TSAN
  int n = 1; /* TSan cannot see libgomp's barriers: one thread, no team */
#else
  int n = granted;
#endif
  omp_set_num_threads(n);
  t_nthr = n;
  return granted;
}

void mxc__dnnl_threads_end(int granted) {
  t_nthr = 1;
  omp_set_num_threads(1);
  mxc__parallel_release(granted);
}

int mxc__dnnl_threads_current(void) { return t_nthr; }

/* ---- post-ops ---- */

int mxc__dnnl_act_alg(int act) {
  switch (act) {
    case MXC__DNNL_ACT_RELU: return dnnl_eltwise_relu;
    case MXC__DNNL_ACT_SIGMOID: return dnnl_eltwise_logistic;
    case MXC__DNNL_ACT_TANH: return dnnl_eltwise_tanh;
    case MXC__DNNL_ACT_SOFTRELU: return dnnl_eltwise_soft_relu;
    default: return -1;
  }
}

int mxc__dnnl_act_of_name(const char *name) {
  static const char *const names[] = {"relu", "sigmoid", "tanh", "softrelu"};
  static const int acts[] = {MXC__DNNL_ACT_RELU, MXC__DNNL_ACT_SIGMOID,
                             MXC__DNNL_ACT_TANH, MXC__DNNL_ACT_SOFTRELU};
  for (int i = 0; name && i < 4; ++i) {
    if (!strcmp(name, names[i])) return acts[i];
  }
  return -1;
}

static int append_post(const mxc__op *op, dnnl_post_ops_t po,
                       const mxc__dnnl_post *post) {
  int rc = MXC_OK;
  if (post->sum) {
    MXC__DNNL_TRY(rc, op, dnnl_post_ops_append_sum(po, 1.0f), fail);
  }
  if (post->act != MXC__DNNL_ACT_NONE) {
    int alg = mxc__dnnl_act_alg(post->act);
    MXC_RETURN_ERROR_IF(alg < 0, MXC_ERR_INTERNAL,
                        "operator '%s': unknown post-op activation %d",
                        op->name, post->act);
    MXC__DNNL_TRY(rc, op,
                  dnnl_post_ops_append_eltwise(po, 1.0f, alg, 0.0f, 0.0f),
                  fail);
  }
fail:
  return rc;
}

int mxc__dnnl_attr_post(const mxc__op *op, const mxc__dnnl_post *post,
                        dnnl_primitive_attr_t *out) {
  int rc = MXC_OK;
  dnnl_post_ops_t po = NULL;
  *out = NULL;
  MXC__DNNL_TRY(rc, op, dnnl_primitive_attr_create(out), fail);
  if (!post || (!post->sum && post->act == MXC__DNNL_ACT_NONE)) return rc;
  MXC__DNNL_TRY(rc, op, dnnl_post_ops_create(&po), fail);
  rc = append_post(op, po, post);
  if (rc != MXC_OK) goto fail;
  MXC__DNNL_TRY(rc, op, dnnl_primitive_attr_set_post_ops(*out, po), fail);
  dnnl_post_ops_destroy(po);
  return rc;
fail:
  if (po) dnnl_post_ops_destroy(po);
  if (*out) dnnl_primitive_attr_destroy(*out);
  *out = NULL;
  return rc;
}

/* ---- supports ---- */

int mxc__dnnl_all_f32(const mxc__call_types *t) {
  if (!mxc__dnnl_enabled()) return 0;
  for (int i = 0; i < t->n_in; ++i) {
    if (t->in_dtypes[i] != MXC_DTYPE_FLOAT32) return 0;
    if (t->in_stypes && t->in_stypes[i] != MXC_STYPE_DEFAULT) return 0;
  }
  for (int i = 0; i < t->n_out; ++i) {
    if (t->out_dtypes[i] >= 0 && t->out_dtypes[i] != MXC_DTYPE_FLOAT32) {
      return 0;
    }
    if (t->out_stypes && t->out_stypes[i] > 0) return 0;
  }
  return 1;
}

/* ---- registration ---- */

static int attach(mxc__registry *r) {
  if (mxc__dnnl_enabled()) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add_feature(r, "ONEDNN"));
  }
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attach_conv(r));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attach_fc(r));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attach_pool(r));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attach_softmax(r));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attach_fused(r));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_attach_ln(r));
  return mxc__dnnl_attach_bn(r);
}

const mxc__backend mxc__backend_onednn = {
    .name = "onednn",
    .dev_type = MXC_DEVICE_CPU,
    .priority = 10,
    .attach = attach,
};

/* A constructor cannot report failure; a registry built without the
 * backend runs the reference kernels, which is correct, only slower. */
__attribute__((constructor)) static void register_onednn(void) {
  if (mxc__backend_register(&mxc__backend_onednn) != MXC_OK) {
    mxc__error_clear();
  }
}
