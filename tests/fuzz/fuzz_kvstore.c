/* The KVStore as a hostile caller would use it: an optimizer chosen from
 * the update operators or by a fuzzed name, fuzzed parameter keys and
 * values, string and int keys (fuzzed strings, repeats, unknown keys),
 * arrays of several dtypes and shapes (some not the key's), and a
 * sequence of init, push, pull and pushpull calls with updates. Every
 * call either works or returns an error; pulled arrays are read back. */
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

#define STR_MAX 24
#define MAX_CALL 4

static const char *const k_opts[] = {
    "sgd_update",    "sgd_mom_update", "nag_mom_update",     "adam_update",
    "rmsprop_update", "rmspropalex_update", "adagrad_update", "ftrl_update",
    "signsgd_update", "signum_update",  "mp_sgd_update",      "relu",
};
static const char *const k_keys[] = {"lr", "wd", "momentum", "rescale_grad",
                                     "clip_gradient", "beta1", "epsilon"};
static const char *const k_vals[] = {"0.1", "0", "-1", "1e30", "nan", "x",
                                     "", "0.9", "2"};
static const int k_dtypes[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64,
                               MXC_DTYPE_INT32, MXC_DTYPE_FLOAT16};

static void set_optimizer(fz_bytes *b, mxc_kvstore kv) {
  char name[STR_MAX + 1], kb[3][STR_MAX + 1], vb[3][STR_MAX + 1];
  const char *opt = fz_u8(b) < 220 ? k_opts[fz_pick(b, 12)]
                                   : fz_str(b, name, STR_MAX);
  const char *keys[3], *vals[3];
  int n = (int)fz_pick(b, 4);
  for (int i = 0; i < n; ++i) {
    keys[i] = fz_u8(b) < 200 ? k_keys[fz_pick(b, 7)] : fz_str(b, kb[i], STR_MAX);
    vals[i] = fz_u8(b) < 200 ? k_vals[fz_pick(b, 9)] : fz_str(b, vb[i], STR_MAX);
  }
  mxc_kvstore_set_optimizer(kv, opt, keys, vals, n);
}

/* An array of a small shape and one of a few dtypes, filled with bytes. */
static mxc_ndarray array(fz_bytes *b) {
  int64_t dims[2] = {1 + (int64_t)fz_pick(b, 3), 1 + (int64_t)fz_pick(b, 3)};
  int dtype = k_dtypes[fz_pick(b, 4)];
  mxc_ndarray a = NULL;
  if (mxc_ndarray_create(dims, 1 + (int)fz_pick(b, 2), dtype, MXC_DEVICE_CPU,
                         0, 0, &a) != MXC_OK) {
    return NULL;
  }
  int64_t n = 0;
  mxc_ndarray_size(a, &n);
  uint8_t buf[9 * 8];
  for (size_t i = 0; i < sizeof buf; ++i) buf[i] = fz_u8(b);
  size_t esz = dtype == MXC_DTYPE_FLOAT64 ? 8 : dtype == MXC_DTYPE_FLOAT16 ? 2 : 4;
  mxc_ndarray_copy_from_host(a, buf, (size_t)n * esz);
  return a;
}

typedef struct args {
  int n, str;
  int64_t ints[MAX_CALL];
  const char *strs[MAX_CALL];
  char buf[MAX_CALL][STR_MAX + 1];
  mxc_ndarray arrs[MAX_CALL], outs[MAX_CALL];
} args;

static void make_args(fz_bytes *b, args *a) {
  memset(a, 0, sizeof *a);
  a->n = (int)fz_pick(b, MAX_CALL + 1);
  a->str = fz_u8(b) & 1;
  for (int i = 0; i < a->n; ++i) {
    a->ints[i] = (int64_t)fz_pick(b, 4) - 1;
    a->strs[i] = fz_str(b, a->buf[i], STR_MAX);
    a->arrs[i] = array(b);
    a->outs[i] = fz_u8(b) < 128 ? a->arrs[i] : array(b);
  }
}

static void free_args(args *a) {
  for (int i = 0; i < a->n; ++i) {
    if (a->outs[i] != a->arrs[i]) mxc_ndarray_free(a->outs[i]);
    mxc_ndarray_free(a->arrs[i]);
  }
}

static void one_call(fz_bytes *b, mxc_kvstore kv) {
  args a;
  make_args(b, &a);
  const int64_t *ik = a.str ? NULL : a.ints;
  const char *const *sk = a.str ? a.strs : NULL;
  int prio = (int)fz_u8(b) - 128;
  switch (fz_pick(b, 5)) {
    case 0: mxc_kvstore_init(kv, a.n, ik, sk, a.arrs); break;
    case 1: mxc_kvstore_push(kv, a.n, ik, sk, a.arrs, prio); break;
    case 2: mxc_kvstore_pull(kv, a.n, ik, sk, a.outs, prio); break;
    case 3: mxc_kvstore_pushpull(kv, a.n, ik, sk, a.arrs, a.outs, prio); break;
    default: set_optimizer(b, kv); break;
  }
  for (int i = 0; i < a.n; ++i) fz_touch(a.outs[i]);
  free_args(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes b = {data, size};
  mxc_kvstore kv = NULL;
  if (mxc_kvstore_create(fz_u8(&b) < 250 ? "local" : "dist_sync", &kv) !=
      MXC_OK) {
    return 0;
  }
  for (int i = 0; i < 8 && b.n > 0; ++i) one_call(&b, kv);
  mxc_wait_all();
  mxc_kvstore_free(kv);
  return 0;
}
