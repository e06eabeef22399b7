/* mxcb: the binding layer every SWIG-generated binding wraps.
 *
 * Why a layer between SWIG and mxc.h: the C API reports failure through an
 * int return and hands results back through out-parameters, which SWIG
 * would surface in Java, Go and R as status codes and one-element arrays.
 * Each function here instead RETURNS its result and, on failure, returns a
 * sentinel (NULL handle, -1, 0) and records the failure in the calling
 * thread's mxcb__failed flag; mxc_last_error()/mxc_last_error_code() hold
 * the message and code (they are thread-local too). bindings/swig/mxc.i
 * turns the flag into the language's error mechanism (a Java exception,
 * an R condition); Go checks the sentinel and fetches the error on the
 * same OS thread (runtime.LockOSThread), see bindings/go.
 *
 * This file is not part of libmxc: it is compiled into each binding's own
 * wrapper (the SWIG output includes it), every function is static, and it
 * only calls the public mxc_* API. No function here keeps state across
 * calls except the thread-local failure flag, so every function is as
 * thread-safe as the mxc function it calls.
 *
 * Multi-argument conventions the per-language typemap files implement
 * (the parameter NAMES are the contract, see mxc.i):
 *   (const mxc_ndarray *HANDLES, int N_HANDLES)  arrays of array handles
 *   (const mxc_symbol *SYMBOLS, int N_SYMBOLS)   arrays of symbol handles
 *   (const char *const *KV, int N_KV)            2*n strings: k0,v0,k1,v1..
 *   (const char *const *NAMES, int N_NAMES)      n strings
 *   (const int64_t *DIMS, int NDIM)              a shape
 *   (const void *BYTES, int64_t N_BYTES)         host memory to read
 *   (void *BYTES_OUT, int64_t N_BYTES_OUT)       host memory to fill
 *   (const void *DATA, int64_t N_DATA)           a byte array to read
 *   (void *DATA_OUT, int64_t N_DATA_OUT)         a byte array to fill
 *   (const float *FLOATS, int N_FLOATS)          a float array to read
 *   (float *FLOATS_OUT, int N_FLOATS_OUT)        a float array to fill
 * BYTES are bulk memory (Java: a direct ByteBuffer, read in place); DATA
 * and FLOATS the language's plain arrays (Java: byte[] and float[]).
 */
#ifndef MXC_BINDINGS_MXCB_H_
#define MXC_BINDINGS_MXCB_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mxc/mxc.h>

/* SWIG reads this file for the declarations it wraps; the state below is
 * C only. */
#ifndef SWIG
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define MXCB__TLS _Thread_local
#else
#define MXCB__TLS __thread
#endif

/* Nonzero after the calling thread's last mxcb call failed: the MXC_ERR_*
 * code. Reset at the start of every mxcb call that can fail. */
static MXCB__TLS int mxcb__failed;

/* The message of a failure detected here, before calling mxc (bad lengths
 * from a binding); static strings only. NULL when the failure came from
 * mxc, whose message mxc_last_error() holds. */
static MXCB__TLS const char *mxcb__message;
#endif /* SWIG */

/* Resets the per-call state; every mxcb function that can fail starts
 * with this. */
static inline void mxcb__begin(void) {
  mxcb__failed = 0;
  mxcb__message = NULL;
}

/* Records the outcome of an mxc call; returns 1 when it failed. */
static inline int mxcb__check(int rc) {
  mxcb__failed = rc;
  return rc != MXC_OK;
}

static inline void mxcb__fail_msg(int code, const char *message) {
  mxcb__failed = code;
  mxcb__message = message;
}

/* The MXC_ERR_* code of the calling thread's last mxcb call (0: it
 * succeeded) and its message. */
static inline int mxcb_last_code(void) { return mxcb__failed; }
static inline const char *mxcb_last_message(void) {
  if (mxcb__failed == 0) return "";
  return mxcb__message != NULL ? mxcb__message : mxc_last_error();
}
static inline const char *mxcb_error_name(int code) {
  return mxc_error_name(code);
}

/* ---- library --------------------------------------------------------- */

static inline int mxcb_version(void) { return mxc_version(); }
static inline const char *mxcb_version_string(void) { return mxc_version_string(); }

static inline void mxcb_random_seed(int64_t seed) {
  mxcb__begin();
  mxcb__check(mxc_random_seed((uint64_t)seed));
}

static inline void mxcb_set_num_threads(int n) {
  mxcb__begin();
  mxcb__check(mxc_set_num_threads(n));
}

/* Waits for all pushed work; reports the first asynchronous failure. */
static inline void mxcb_wait_all(void) {
  mxcb__begin();
  mxcb__check(mxc_wait_all());
}

/* Returns the previous mode (0/1), -1 on failure. */
static inline int mxcb_set_training(int is_train) {
  int prev = 0;
  mxcb__begin();
  return mxcb__check(mxc_set_training(is_train, &prev)) ? -1 : prev;
}

static inline int mxcb_set_recording(int recording) {
  int prev = 0;
  mxcb__begin();
  return mxcb__check(mxc_autograd_set_recording(recording, &prev)) ? -1 : prev;
}

/* A CPU allocator statistic (MXC_STORAGE_*), -1 on failure. */
static inline int64_t mxcb_storage_stat(int stat) {
  int64_t v = 0;
  mxcb__begin();
  return mxcb__check(mxc_storage_stat(MXC_DEVICE_CPU, 0, stat, &v)) ? -1 : v;
}

static inline int mxcb_dtype_size(int dtype) { return mxc_dtype_size(dtype); }

/* ---- arrays ------------------------------------------------------------ */

/* A new dense array on device (dev_type MXC_DEVICE_*, dev_id), contents
 * unspecified until written. A GPU that cannot be used fails with
 * MXC_ERR_UNSUPPORTED and mxc's reason. */
static inline mxc_ndarray mxcb_ndarray_create_on(const int64_t *DIMS, int NDIM,
                                                 int dtype, int dev_type,
                                                 int dev_id) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  if (mxcb__check(mxc_ndarray_create(DIMS, NDIM, dtype, dev_type, dev_id, 0,
                                     &out)))
    return NULL;
  return out;
}

/* A new dense CPU array (contents unspecified until written). */
static inline mxc_ndarray mxcb_ndarray_create(const int64_t *DIMS, int NDIM,
                                       int dtype) {
  return mxcb_ndarray_create_on(DIMS, NDIM, dtype, MXC_DEVICE_CPU, 0);
}

/* The array's device type (MXC_DEVICE_*), -1 on failure. */
static inline int mxcb_ndarray_device_type(mxc_ndarray a) {
  int t = 0, id = 0;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_device(a, &t, &id)) ? -1 : t;
}

/* The array's device id, -1 on failure. */
static inline int mxcb_ndarray_device_id(mxc_ndarray a) {
  int t = 0, id = 0;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_device(a, &t, &id)) ? -1 : id;
}

/* How many devices of dev_type this process can use (0 GPUs without the
 * plug-in, a driver or a GPU: not a failure), -1 on failure. */
static inline int mxcb_device_count(int dev_type) {
  int n = 0;
  mxcb__begin();
  return mxcb__check(mxc_device_count(dev_type, &n)) ? -1 : n;
}

/* Fails (MXC_ERR_UNSUPPORTED with the reason) when the device cannot be
 * used; returns nothing. */
static inline void mxcb_device_check(int dev_type, int dev_id) {
  mxcb__begin();
  mxcb__check(mxc_device_check(dev_type, dev_id));
}

/* Frees a handle; NULL is accepted. Never fails. */
static inline void mxcb_ndarray_free(mxc_ndarray a) { mxc_ndarray_free(a); }

/* -1 on failure. */
static inline int mxcb_ndarray_ndim(mxc_ndarray a) {
  int nd = 0;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_shape(a, &nd, NULL)) ? -1 : nd;
}

/* Extent of dimension i, -1 on failure (i out of range included). */
static inline int64_t mxcb_ndarray_dim(mxc_ndarray a, int i) {
  int nd = 0;
  const int64_t *shape = NULL;
  mxcb__begin();
  if (mxcb__check(mxc_ndarray_shape(a, &nd, &shape))) return -1;
  if (i < 0 || i >= nd) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                   "dimension index out of range (expected 0 <= i < ndim)");
    return -1;
  }
  return shape[i];
}

static inline int64_t mxcb_ndarray_size(mxc_ndarray a) {
  int64_t n = 0;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_size(a, &n)) ? -1 : n;
}

static inline int mxcb_ndarray_dtype(mxc_ndarray a) {
  int d = 0;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_dtype(a, &d)) ? -1 : d;
}

static inline int mxcb_ndarray_stype(mxc_ndarray a) {
  int s = 0;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_stype(a, &s)) ? -1 : s;
}

/* Copies N_BYTES (== size * dtype size) of host memory into a; waits. */
static inline void mxcb_ndarray_copy_from(mxc_ndarray a, const void *BYTES,
                                   int64_t N_BYTES) {
  mxcb__begin();
  if (N_BYTES < 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "byte count must be >= 0");
    return;
  }
  mxcb__check(mxc_ndarray_copy_from_host(a, BYTES, (size_t)N_BYTES));
}

/* Copies a into N_BYTES_OUT (== size * dtype size) of host memory; waits
 * and reports failures of pending work on a. */
static inline void mxcb_ndarray_copy_to(mxc_ndarray a, void *BYTES_OUT,
                                 int64_t N_BYTES_OUT) {
  mxcb__begin();
  if (N_BYTES_OUT < 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "byte count must be >= 0");
    return;
  }
  mxcb__check(mxc_ndarray_copy_to_host(a, BYTES_OUT, (size_t)N_BYTES_OUT));
}

/* Asynchronous copy src -> dst (same shape and dtype). */
static inline void mxcb_ndarray_copy(mxc_ndarray src, mxc_ndarray dst) {
  mxcb__begin();
  mxcb__check(mxc_ndarray_copy(src, dst));
}

static inline mxc_ndarray mxcb_ndarray_reshape(mxc_ndarray a, const int64_t *DIMS,
                                        int NDIM) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_reshape(a, DIMS, NDIM, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_ndarray_slice(mxc_ndarray a, int64_t begin,
                                      int64_t end) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_slice(a, begin, end, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_ndarray_at(mxc_ndarray a, int64_t index) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_at(a, index, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_ndarray_detach(mxc_ndarray a) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_ndarray_detach(a, &out)) ? NULL : out;
}

static inline void mxcb_ndarray_wait_to_read(mxc_ndarray a) {
  mxcb__begin();
  mxcb__check(mxc_ndarray_wait_to_read(a));
}

/* ---- operators ----------------------------------------------------------- */

static inline int mxcb_op_count(void) {
  int n = 0;
  mxcb__begin();
  return mxcb__check(mxc_op_count(&n)) ? -1 : n;
}

static inline mxc_op mxcb_op_at(int index) {
  mxc_op op = NULL;
  mxcb__begin();
  return mxcb__check(mxc_op_at(index, &op)) ? NULL : op;
}

/* Operator handles are static (never freed). */
static inline mxc_op mxcb_op_find(const char *name) {
  mxc_op op = NULL;
  mxcb__begin();
  return mxcb__check(mxc_op_find(name, &op)) ? NULL : op;
}

static inline const char *mxcb_op_name(mxc_op op) {
  const char *s = NULL;
  mxcb__begin();
  return mxcb__check(mxc_op_name(op, &s)) ? NULL : s;
}

/* Splits KV (k0, v0, k1, v1, ...) into the keys/values the C API takes:
 * the even and odd elements. Returns 0 and fails when N_KV is odd or too
 * large for the stack buffers. */
#define MXCB__MAX_PARAMS 64
static inline int mxcb__split_kv(const char *const *KV, int N_KV, const char **keys,
                          const char **vals) {
  int i;
  if (N_KV < 0 || N_KV % 2 != 0 || N_KV / 2 > MXCB__MAX_PARAMS) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                   "parameters must come as key/value pairs "
                   "(an even count, at most 64 pairs)");
    return 0;
  }
  for (i = 0; i < N_KV / 2; i++) {
    keys[i] = KV[2 * i];
    vals[i] = KV[2 * i + 1];
  }
  return 1;
}

/* Number of visible outputs for these parameters, -1 on failure. */
static inline int mxcb_op_num_outputs(mxc_op op, const char *const *KV, int N_KV) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  int n = 0;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return -1;
  return mxcb__check(mxc_op_num_outputs(op, keys, vals, N_KV / 2, &n)) ? -1
                                                                       : n;
}

/* Invokes a single-visible-output operator. out == NULL: returns a new
 * array owned by the caller. out != NULL: writes into out and returns
 * NULL (also on success; check mxcb_last_code()). Operators with more
 * outputs: mxcb_op_invoke_multi. */
static inline mxc_ndarray mxcb_op_invoke(mxc_op op, const char *const *KV, int N_KV,
                                  const mxc_ndarray *HANDLES, int N_HANDLES,
                                  mxc_ndarray out) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxc_ndarray slot = out;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  if (mxcb__check(mxc_op_invoke(op, keys, vals, N_KV / 2, HANDLES, N_HANDLES,
                                &slot, 1, NULL)))
    return NULL;
  return out != NULL ? NULL : slot;
}

/* The outputs of one call, owned by the list until taken. */
typedef struct mxcb_outputs mxcb_outputs;
#ifndef SWIG
struct mxcb_outputs {
  int n;
  mxc_ndarray *arrays;
};
#endif

static inline void mxcb_outputs_free(mxcb_outputs *o) {
  int i;
  if (o == NULL) return;
  for (i = 0; i < o->n; i++) mxc_ndarray_free(o->arrays[i]);
  free(o->arrays);
  free(o);
}

static inline mxcb_outputs *mxcb_op_invoke_multi(mxc_op op, const char *const *KV,
                                          int N_KV, const mxc_ndarray *HANDLES,
                                          int N_HANDLES) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxcb_outputs *o;
  int n = 0;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  if (mxcb__check(mxc_op_num_outputs(op, keys, vals, N_KV / 2, &n)))
    return NULL;
  o = (mxcb_outputs *)calloc(1, sizeof *o);
  if (o != NULL && n > 0)
    o->arrays = (mxc_ndarray *)calloc((size_t)n, sizeof *o->arrays);
  if (o == NULL || (n > 0 && o->arrays == NULL)) {
    free(o);
    mxcb__fail_msg(MXC_ERR_OOM, "out of memory for the output list");
    return NULL;
  }
  if (mxcb__check(mxc_op_invoke(op, keys, vals, N_KV / 2, HANDLES, N_HANDLES,
                                o->arrays, n, NULL))) {
    mxcb_outputs_free(o);
    return NULL;
  }
  o->n = n;
  return o;
}

static inline int mxcb_outputs_size(mxcb_outputs *o) { return o == NULL ? 0 : o->n; }

/* Transfers the i-th array to the caller (a second take returns NULL). */
static inline mxc_ndarray mxcb_outputs_take(mxcb_outputs *o, int i) {
  mxc_ndarray a;
  mxcb__begin();
  if (o == NULL || i < 0 || i >= o->n) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "output index out of range");
    return NULL;
  }
  a = o->arrays[i];
  o->arrays[i] = NULL;
  return a;
}

/* ---- autograd ------------------------------------------------------------ */

/* Marks var for differentiation with gradient buffer grad and request req
 * (MXC_REQ_WRITE/ADD/NULL). */
static inline void mxcb_autograd_mark(mxc_ndarray var, mxc_ndarray grad, int req) {
  mxcb__begin();
  mxcb__check(mxc_autograd_mark_variables(1, &var, &req, &grad));
}

/* Backward from heads with ones as head gradients. */
static inline void mxcb_autograd_backward(const mxc_ndarray *HANDLES, int N_HANDLES,
                                   int retain_graph) {
  mxcb__begin();
  mxcb__check(
      mxc_autograd_backward(N_HANDLES, HANDLES, NULL, retain_graph));
}

static inline mxc_ndarray mxcb_autograd_grad(mxc_ndarray a) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_autograd_get_grad(a, &out)) ? NULL : out;
}

/* ---- initializers and metrics -------------------------------------------- */

static inline void mxcb_init_array(mxc_ndarray a, const char *method,
                            const char *const *KV, int N_KV) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return;
  mxcb__check(mxc_init_array(a, method, keys, vals, N_KV / 2));
}

/* Correct predictions (argmax of pred rows == label), -1 on failure. */
static inline int64_t mxcb_metric_correct(mxc_ndarray pred, mxc_ndarray label) {
  int64_t correct = 0, count = 0;
  mxcb__begin();
  return mxcb__check(mxc_metric_accuracy(pred, label, &correct, &count))
             ? -1
             : correct;
}

/* ---- strings lists ------------------------------------------------------- */

static inline void mxcb_str_list_free(mxc_str_list l) { mxc_str_list_free(l); }
static inline int mxcb_str_list_size(mxc_str_list l) {
  int n = 0;
  mxcb__begin();
  return mxcb__check(mxc_str_list_size(l, &n)) ? -1 : n;
}
static inline const char *mxcb_str_list_get(mxc_str_list l, int i) {
  const char *s = NULL;
  mxcb__begin();
  return mxcb__check(mxc_str_list_get(l, i, &s)) ? NULL : s;
}

/* ---- symbols ------------------------------------------------------------- */

static inline void mxcb_symbol_free(mxc_symbol s) { mxc_symbol_free(s); }

static inline mxc_symbol mxcb_symbol_variable(const char *name) {
  mxc_symbol out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_symbol_variable(name, &out)) ? NULL : out;
}

/* Operator node: parameters KV, node name (NULL/"" = automatic), inputs
 * given positionally. */
static inline mxc_symbol mxcb_symbol_op(mxc_op op, const char *const *KV, int N_KV,
                                 const char *name, const mxc_symbol *SYMBOLS,
                                 int N_SYMBOLS) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxc_symbol out = NULL;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  if (name != NULL && name[0] == '\0') name = NULL;
  return mxcb__check(mxc_symbol_create(op, keys, vals, N_KV / 2, name, NULL,
                                       SYMBOLS, N_SYMBOLS, &out))
             ? NULL
             : out;
}

static inline mxc_symbol mxcb_symbol_group(const mxc_symbol *SYMBOLS, int N_SYMBOLS) {
  mxc_symbol out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_symbol_group(SYMBOLS, N_SYMBOLS, &out)) ? NULL : out;
}

static inline mxc_symbol mxcb_symbol_from_json(const char *json) {
  mxc_symbol out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_symbol_from_json(json, &out)) ? NULL : out;
}

/* A new string: bindings free it with mxc_string_free (mxc.i's newfree). */
static inline char *mxcb_symbol_to_json(mxc_symbol s) {
  char *out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_symbol_to_json(s, &out)) ? NULL : out;
}

static inline mxc_str_list mxcb_symbol_list_arguments(mxc_symbol s) {
  mxc_str_list out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_symbol_list_arguments(s, &out)) ? NULL : out;
}

static inline mxc_str_list mxcb_symbol_list_outputs(mxc_symbol s) {
  mxc_str_list out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_symbol_list_outputs(s, &out)) ? NULL : out;
}

/* ---- executors ----------------------------------------------------------- */

static inline void mxcb_executor_free(mxc_executor e) { mxc_executor_free(e); }

/* Parses "(2,3)" / "2,3" / "[2, 3]" into dims; returns ndim or -1. */
static inline int mxcb__parse_shape(const char *s, int64_t *dims, int max) {
  int nd = 0;
  while (*s != '\0') {
    char *end;
    long long v;
    if (*s == '(' || *s == ')' || *s == '[' || *s == ']' || *s == ',' ||
        *s == ' ') {
      s++;
      continue;
    }
    v = strtoll(s, &end, 10);
    if (end == s || v < 0 || nd >= max) return -1;
    dims[nd++] = (int64_t)v;
    s = end;
  }
  return nd;
}

/* simple_bind on device (dev_type, dev_id). KV: argument name, shape
 * string ("(128,784)") pairs; every argument gets gradient request
 * default_req. */
static inline mxc_executor mxcb_executor_simple_bind_on(
    mxc_symbol s, const char *const *KV, int N_KV, int default_req,
    int dev_type, int dev_id) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  int ndims[MXCB__MAX_PARAMS];
  int64_t dims[MXCB__MAX_PARAMS * MXC_MAX_NDIM];
  int i, total = 0;
  mxc_executor out = NULL;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  for (i = 0; i < N_KV / 2; i++) {
    int nd = mxcb__parse_shape(vals[i], dims + total, MXC_MAX_NDIM);
    if (nd < 0) {
      mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                     "bad shape string (expected e.g. \"(128,784)\")");
      return NULL;
    }
    ndims[i] = nd;
    total += nd;
  }
  return mxcb__check(mxc_executor_simple_bind(
             s, dev_type, dev_id, N_KV / 2, keys, ndims, dims, NULL,
             default_req, 0, NULL, NULL, MXC_BIND_DEFAULT, &out))
             ? NULL
             : out;
}

/* simple_bind on the CPU (see mxcb_executor_simple_bind_on). */
static inline mxc_executor mxcb_executor_simple_bind(mxc_symbol s,
                                              const char *const *KV, int N_KV,
                                              int default_req) {
  return mxcb_executor_simple_bind_on(s, KV, N_KV, default_req,
                                      MXC_DEVICE_CPU, 0);
}

static inline void mxcb_executor_forward(mxc_executor e, int is_train) {
  mxcb__begin();
  mxcb__check(mxc_executor_forward(e, is_train));
}

/* Backward with ones as head gradients (loss outputs ignore them). */
static inline void mxcb_executor_backward(mxc_executor e) {
  mxcb__begin();
  mxcb__check(mxc_executor_backward(e, 0, NULL));
}

static inline int mxcb_executor_num_outputs(mxc_executor e) {
  int n = 0;
  mxcb__begin();
  return mxcb__check(mxc_executor_num_outputs(e, &n)) ? -1 : n;
}

static inline mxc_ndarray mxcb_executor_output(mxc_executor e, int i) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_executor_output(e, i, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_executor_arg(mxc_executor e, const char *name) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_executor_arg(e, name, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_executor_grad(mxc_executor e, const char *name) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_executor_grad(e, name, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_executor_aux(mxc_executor e, const char *name) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_executor_aux(e, name, &out)) ? NULL : out;
}

/* ---- data iterators ------------------------------------------------------ */

static inline void mxcb_data_iter_free(mxc_data_iter it) { mxc_data_iter_free(it); }

/* IDX files (MNIST/Fashion-MNIST), flat float32 batches scaled to [0,1],
 * last batch padded. */
static inline mxc_data_iter mxcb_data_iter_idx(const char *images, const char *labels,
                                        int64_t batch_size, int shuffle,
                                        int64_t seed) {
  mxc_data_iter out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_data_iter_idx_create(images, labels, batch_size,
                                              shuffle, (uint64_t)seed, 1, 1,
                                              MXC_LAST_BATCH_PAD, &out))
             ? NULL
             : out;
}

/* As mxcb_data_iter_idx with the layout chosen: flat != 0 gives (batch,
 * rows * cols), else (batch, 1, rows, cols); discard_last != 0 drops an
 * incomplete last batch (training), else pads it (evaluation). */
static inline mxc_data_iter mxcb_data_iter_idx_layout(const char *images,
                                                      const char *labels,
                                                      int64_t batch_size,
                                                      int shuffle, int64_t seed,
                                                      int flat,
                                                      int discard_last) {
  mxc_data_iter out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_data_iter_idx_create(
             images, labels, batch_size, shuffle, (uint64_t)seed, flat, 1,
             discard_last ? MXC_LAST_BATCH_DISCARD : MXC_LAST_BATCH_PAD, &out))
             ? NULL
             : out;
}

/* CSV data rows with labels in a second CSV file (labels NULL or "":
 * none; Go cannot pass NULL),
 * every row's field count taken from the first, no header; last batch
 * padded. */
static inline mxc_data_iter mxcb_data_iter_csv(const char *data,
                                               const char *labels,
                                               int64_t batch_size) {
  mxc_data_iter out = NULL;
  mxcb__begin();
  if (labels != NULL && labels[0] == '\0') labels = NULL;
  return mxcb__check(mxc_data_iter_csv_create(data, labels, 0, batch_size, 0,
                                              -1, MXC_LAST_BATCH_PAD, &out))
             ? NULL
             : out;
}

/* 1 when a batch is ready, 0 at the end of the epoch, -1 on failure. */
static inline int mxcb_data_iter_next(mxc_data_iter it) {
  int has = 0;
  mxcb__begin();
  return mxcb__check(mxc_data_iter_next(it, &has)) ? -1 : has;
}

static inline mxc_ndarray mxcb_data_iter_data(mxc_data_iter it) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_data_iter_data(it, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_data_iter_label(mxc_data_iter it) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_data_iter_label(it, &out)) ? NULL : out;
}

static inline void mxcb_data_iter_reset(mxc_data_iter it) {
  mxcb__begin();
  mxcb__check(mxc_data_iter_reset(it));
}

/* *out of the current batch: how many trailing examples are padding; -1
 * on failure (no current batch). */
static inline int64_t mxcb_data_iter_pad(mxc_data_iter it) {
  int64_t pad = 0;
  mxcb__begin();
  return mxcb__check(mxc_data_iter_pad(it, &pad)) ? -1 : pad;
}

/* The number of examples, -1 on failure (text iterators before the end of
 * their first epoch). */
static inline int64_t mxcb_data_iter_num_examples(mxc_data_iter it) {
  int64_t n = 0;
  mxcb__begin();
  return mxcb__check(mxc_data_iter_num_examples(it, &n)) ? -1 : n;
}

/* From now on reads only part part_index of num_parts (mxc_data_iter_set_parts:
 * which examples a part holds depends on the kind of iterator). Void, as
 * reset: a failure (bad part, or a call after the epoch's first next) is
 * left in the flag and the part stays as it was. */
static inline void mxcb_data_iter_set_parts(mxc_data_iter it, int64_t num_parts,
                                            int64_t part_index) {
  mxcb__begin();
  mxcb__check(mxc_data_iter_set_parts(it, num_parts, part_index));
}

/* MXNet's ImageRecordIter over a .rec of image records: KV holds its
 * parameters by name (path_imgrec, data_shape, batch_size, ...; see
 * mxc_data_iter_image_record_create), copied. */
static inline mxc_data_iter mxcb_data_iter_image_record(const char *const *KV,
                                                        int N_KV) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxc_data_iter out = NULL;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  return mxcb__check(mxc_data_iter_image_record_create(N_KV / 2, keys, vals,
                                                       &out))
             ? NULL
             : out;
}

/* ---- RecordIO (.rec + .idx) and images (mxc_recordio_*, mxc_image_*) ---- */

/* One handle per thread at a time, as mxc_recordio. Byte and float
 * arguments use the DATA / DATA_OUT / FLOATS / FLOATS_OUT conventions
 * (plain language arrays, unlike BYTES' buffers: records are small and
 * come one at a time). */
static inline void mxcb_recordio_free(mxc_recordio r) { mxc_recordio_free(r); }

/* mode "r" or "w"; idx_path NULL or "" for no index. */
static inline mxc_recordio mxcb_recordio_open(const char *path,
                                              const char *idx_path,
                                              const char *mode) {
  mxc_recordio out = NULL;
  mxcb__begin();
  if (idx_path != NULL && idx_path[0] == '\0') idx_path = NULL;
  return mxcb__check(mxc_recordio_open(path, idx_path, mode, &out)) ? NULL
                                                                   : out;
}

/* The next record's size (it becomes the current record); -1 at the end
 * of the file and on failure (check the flag). */
static inline int64_t mxcb_recordio_read(mxc_recordio r) {
  int64_t n = -1;
  mxcb__begin();
  return mxcb__check(mxc_recordio_read(r, &n)) ? -1 : n;
}

/* The size of the record the index lists under key; -1 on failure
 * (MXC_ERR_NOT_FOUND for an unknown key). */
static inline int64_t mxcb_recordio_read_key(mxc_recordio r, int64_t key) {
  int64_t n = -1;
  mxcb__begin();
  return mxcb__check(mxc_recordio_read_key(r, key, &n)) ? -1 : n;
}

/* Copies the current record into DATA_OUT (at least its size). */
static inline void mxcb_recordio_copy(mxc_recordio r, void *DATA_OUT,
                                      int64_t N_DATA_OUT) {
  mxcb__begin();
  mxcb__check(mxc_recordio_copy(r, DATA_OUT, N_DATA_OUT));
}

/* Appends DATA as one record; key >= 0 also writes its index line
 * (writers opened with an index), key < 0 none. */
static inline void mxcb_recordio_write(mxc_recordio r, int64_t key,
                                       const void *DATA, int64_t N_DATA) {
  mxcb__begin();
  if (key < 0) {
    mxcb__check(mxc_recordio_write(r, DATA, N_DATA));
    return;
  }
  mxcb__check(mxc_recordio_write_key(r, key, DATA, N_DATA));
}

static inline void mxcb_recordio_flush(mxc_recordio r) {
  mxcb__begin();
  mxcb__check(mxc_recordio_flush(r));
}

/* The index's keys: how many (-1 on failure), and key i. */
static inline int64_t mxcb_recordio_num_keys(mxc_recordio r) {
  int64_t n = 0;
  mxcb__begin();
  return mxcb__check(mxc_recordio_num_keys(r, &n)) ? -1 : n;
}

static inline int64_t mxcb_recordio_key(mxc_recordio r, int64_t i) {
  int64_t k = 0;
  mxcb__begin();
  return mxcb__check(mxc_recordio_key(r, i, &k)) ? -1 : k;
}

/* The byte offset of the next record (readers) or of the end (writers). */
static inline int64_t mxcb_recordio_tell(mxc_recordio r) {
  int64_t pos = 0;
  mxcb__begin();
  return mxcb__check(mxc_recordio_tell(r, &pos)) ? -1 : pos;
}

static inline void mxcb_recordio_seek(mxc_recordio r, int64_t pos) {
  mxcb__begin();
  mxcb__check(mxc_recordio_seek(r, pos));
}

/* An image record (im2rec's layout) of the labels FLOATS, id, id2 (uint64
 * bits) and the image DATA, written into DATA_OUT; returns its size, -1
 * on failure. An empty DATA_OUT only asks for the size (no failure). */
static inline int64_t mxcb_recordio_pack_image(const float *FLOATS,
                                               int N_FLOATS, int64_t id,
                                               int64_t id2, const void *DATA,
                                               int64_t N_DATA, void *DATA_OUT,
                                               int64_t N_DATA_OUT) {
  int64_t need = -1;
  int rc;
  mxcb__begin();
  rc = mxc_recordio_pack_image(FLOATS, N_FLOATS, id, id2, DATA, N_DATA,
                               DATA_OUT, N_DATA_OUT, &need);
  if (N_DATA_OUT == 0 && need > 0) return need; /* the size query */
  return mxcb__check(rc) ? -1 : need;
}

/* The header of the image record DATA: returns its number of labels (-1
 * on failure) and writes the first of them into FLOATS_OUT (as many as
 * fit; empty: none); *out (int64_t[3]) = id, id2, the image's offset. */
static inline int mxcb__unpack_image(const void *DATA, int64_t N_DATA,
                                     float *labels, int max, int64_t *out) {
  int n = -1;
  mxcb__begin();
  return mxcb__check(mxc_recordio_unpack_image(DATA, N_DATA, labels, max, &n,
                                               &out[0], &out[1], &out[2]))
             ? -1
             : n;
}

static inline int mxcb_recordio_image_labels(const void *DATA, int64_t N_DATA,
                                             float *FLOATS_OUT,
                                             int N_FLOATS_OUT) {
  int64_t f[3];
  return mxcb__unpack_image(DATA, N_DATA, FLOATS_OUT, N_FLOATS_OUT, f);
}

/* field 0: id, 1: id2 (uint64 bits), 2: where the image starts; -1 on
 * failure. */
static inline int64_t mxcb_recordio_image_field(const void *DATA,
                                                int64_t N_DATA, int field) {
  int64_t f[3];
  if (field < 0 || field > 2) {
    mxcb__begin();
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                   "field must be 0 (id), 1 (id2) or 2 (image offset)");
    return -1;
  }
  return mxcb__unpack_image(DATA, N_DATA, NULL, 0, f) < 0 ? -1 : f[field];
}

/* A JPEG or PNG image (DATA) as a new (channels, height, width) array of
 * dtype MXC_DTYPE_UINT8 or MXC_DTYPE_FLOAT32; channels 1 or 3. */
static inline mxc_ndarray mxcb_image_decode(const void *DATA, int64_t N_DATA,
                                            int channels, int dtype) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_image_decode(DATA, N_DATA, channels, dtype, &out))
             ? NULL
             : out;
}

/* ---- checkpoints (MXNet's PREFIX-symbol.json + PREFIX-EEEE.params) ---- */

/* A loaded checkpoint: the symbol and the argument (group 0) and
 * auxiliary-state (group 1) lists, owned here until taken or freed. */
typedef struct mxcb_checkpoint mxcb_checkpoint;
#ifndef SWIG
struct mxcb_checkpoint {
  mxc_symbol sym;
  mxc_ndarray_list lists[2];
};
#endif

static inline void mxcb_checkpoint_free(mxcb_checkpoint *c) {
  if (c == NULL) return;
  mxc_symbol_free(c->sym);
  mxc_ndarray_list_free(c->lists[0]);
  mxc_ndarray_list_free(c->lists[1]);
  free(c);
}

static inline mxcb_checkpoint *mxcb_checkpoint_load(const char *prefix,
                                                    int epoch) {
  mxcb_checkpoint *c;
  mxcb__begin();
  c = (mxcb_checkpoint *)calloc(1, sizeof *c);
  if (c == NULL) {
    mxcb__fail_msg(MXC_ERR_OOM, "out of memory for the checkpoint");
    return NULL;
  }
  if (mxcb__check(mxc_checkpoint_load(prefix, epoch, &c->sym, &c->lists[0],
                                      &c->lists[1]))) {
    free(c);
    return NULL;
  }
  return c;
}

/* Transfers the symbol to the caller (a second take is an error). */
static inline mxc_symbol mxcb_checkpoint_take_symbol(mxcb_checkpoint *c) {
  mxc_symbol s;
  mxcb__begin();
  if (c == NULL || c->sym == NULL) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "the symbol was already taken");
    return NULL;
  }
  s = c->sym;
  c->sym = NULL;
  return s;
}

static inline int mxcb__checkpoint_group(mxcb_checkpoint *c, int group) {
  if (c != NULL && (group == 0 || group == 1)) return 1;
  mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                 "group must be 0 (arguments) or 1 (auxiliary states)");
  return 0;
}

static inline int mxcb_checkpoint_size(mxcb_checkpoint *c, int group) {
  int n = 0;
  mxcb__begin();
  if (!mxcb__checkpoint_group(c, group)) return -1;
  return mxcb__check(mxc_ndarray_list_size(c->lists[group], &n)) ? -1 : n;
}

/* Borrowed: valid while c lives. */
static inline const char *mxcb_checkpoint_name(mxcb_checkpoint *c, int group,
                                               int i) {
  const char *out = NULL;
  mxcb__begin();
  if (!mxcb__checkpoint_group(c, group)) return NULL;
  return mxcb__check(mxc_ndarray_list_name(c->lists[group], i, &out)) ? NULL
                                                                       : out;
}

static inline mxc_ndarray mxcb_checkpoint_array(mxcb_checkpoint *c, int group,
                                                int i) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  if (!mxcb__checkpoint_group(c, group)) return NULL;
  return mxcb__check(mxc_ndarray_list_get(c->lists[group], i, &out)) ? NULL
                                                                     : out;
}

/* The first N_HANDLES - n_aux arrays (and names) are arguments, the last
 * n_aux auxiliary states; names without arg:/aux: prefixes. */
static inline void mxcb_checkpoint_save(const char *prefix, int epoch,
                                        mxc_symbol sym,
                                        const mxc_ndarray *HANDLES,
                                        int N_HANDLES,
                                        const char *const *NAMES, int N_NAMES,
                                        int n_aux) {
  int n_args = N_HANDLES - n_aux;
  mxcb__begin();
  if (N_NAMES != N_HANDLES || n_aux < 0 || n_args < 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                   "one name per array, and n_aux within the arrays");
    return;
  }
  mxcb__check(mxc_checkpoint_save(prefix, epoch, sym, n_args, NAMES, HANDLES,
                                  n_aux, NAMES + n_args, HANDLES + n_args));
}

/* ---- predictors (mxc_predictor_*) ---------------------------------------- */

/* What a predictor is created or reshaped for, built one input (and
 * output) at a time, since the conventions above carry one shape per
 * call: up to MXCB_PRED_MAX inputs and outputs. */
#define MXCB_PRED_MAX 64
typedef struct mxcb_predictor_spec mxcb_predictor_spec;
#ifndef SWIG
struct mxcb_predictor_spec {
  int n_in, n_out, n_dims;
  char *names[MXCB_PRED_MAX], *outs[MXCB_PRED_MAX];
  int ndims[MXCB_PRED_MAX], dtypes[MXCB_PRED_MAX];
  int64_t dims[MXCB_PRED_MAX * MXC_MAX_NDIM];
};
#endif

static inline void mxcb_predictor_spec_free(mxcb_predictor_spec *s) {
  int i;
  if (s == NULL) return;
  for (i = 0; i < s->n_in; ++i) free(s->names[i]);
  for (i = 0; i < s->n_out; ++i) free(s->outs[i]);
  free(s);
}

static inline mxcb_predictor_spec *mxcb_predictor_spec_new(void) {
  mxcb_predictor_spec *s;
  mxcb__begin();
  s = (mxcb_predictor_spec *)calloc(1, sizeof *s);
  if (s == NULL) mxcb__fail_msg(MXC_ERR_OOM, "out of memory for a spec");
  return s;
}

static inline char *mxcb__strdup(const char *v) {
  char *c = v ? (char *)malloc(strlen(v) + 1) : NULL;
  if (c != NULL) strcpy(c, v);
  return c;
}

/* Adds an input: its name, shape and dtype (MXC_DTYPE_*). */
static inline void mxcb_predictor_spec_input(mxcb_predictor_spec *s,
                                             const char *name,
                                             const int64_t *DIMS, int NDIM,
                                             int dtype) {
  mxcb__begin();
  if (s == NULL || name == NULL || s->n_in == MXCB_PRED_MAX ||
      NDIM > MXC_MAX_NDIM) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                   "a named input with at most 8 dimensions, 64 inputs");
    return;
  }
  s->names[s->n_in] = mxcb__strdup(name);
  if (s->names[s->n_in] == NULL) {
    mxcb__fail_msg(MXC_ERR_OOM, "out of memory for a spec");
    return;
  }
  if (NDIM > 0) memcpy(s->dims + s->n_dims, DIMS, (size_t)NDIM * 8);
  s->n_dims += NDIM;
  s->ndims[s->n_in] = NDIM;
  s->dtypes[s->n_in++] = dtype;
}

/* Adds an output to compute, by name (none: the graph's outputs). */
static inline void mxcb_predictor_spec_output(mxcb_predictor_spec *s,
                                              const char *name) {
  mxcb__begin();
  if (s == NULL || name == NULL || s->n_out == MXCB_PRED_MAX) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "a named output, 64 at most");
    return;
  }
  s->outs[s->n_out] = mxcb__strdup(name);
  if (s->outs[s->n_out] == NULL) {
    mxcb__fail_msg(MXC_ERR_OOM, "out of memory for a spec");
    return;
  }
  s->n_out++;
}

static inline void mxcb_predictor_free(mxc_predictor p) {
  mxc_predictor_free(p);
}

/* From JSON text and the bytes of a params file. */
static inline mxc_predictor mxcb_predictor_create(mxcb_predictor_spec *s,
                                                  const char *json,
                                                  const void *BYTES,
                                                  int64_t N_BYTES) {
  mxc_predictor out = NULL;
  mxcb__begin();
  if (s == NULL || N_BYTES < 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "a spec and params bytes");
    return NULL;
  }
  return mxcb__check(mxc_predictor_create(
             json, BYTES, (size_t)N_BYTES, MXC_DEVICE_CPU, 0, s->n_in,
             (const char *const *)s->names, s->ndims, s->dims, s->dtypes,
             s->n_out, (const char *const *)s->outs, &out))
             ? NULL
             : out;
}

/* From PREFIX-symbol.json and PREFIX-EEEE.params. */
static inline mxc_predictor mxcb_predictor_load(mxcb_predictor_spec *s,
                                                const char *prefix,
                                                int epoch) {
  mxc_predictor out = NULL;
  mxcb__begin();
  if (s == NULL) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "a spec");
    return NULL;
  }
  return mxcb__check(mxc_predictor_create_from_checkpoint(
             prefix, epoch, MXC_DEVICE_CPU, 0, s->n_in,
             (const char *const *)s->names, s->ndims, s->dims, s->dtypes,
             s->n_out, (const char *const *)s->outs, &out))
             ? NULL
             : out;
}

static inline mxc_predictor mxcb_predictor_clone(mxc_predictor p) {
  mxc_predictor out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_predictor_clone(p, &out)) ? NULL : out;
}

/* The spec's inputs take their new shapes (dtypes are p's). */
static inline mxc_predictor mxcb_predictor_reshape(mxc_predictor p,
                                                   mxcb_predictor_spec *s) {
  mxc_predictor out = NULL;
  mxcb__begin();
  if (s == NULL) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "a spec");
    return NULL;
  }
  return mxcb__check(mxc_predictor_reshape(p, s->n_in,
                                           (const char *const *)s->names,
                                           s->ndims, s->dims, &out))
             ? NULL
             : out;
}

static inline void mxcb_predictor_set_input(mxc_predictor p, const char *name,
                                            const void *BYTES,
                                            int64_t N_BYTES) {
  mxcb__begin();
  if (N_BYTES < 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "negative byte count");
    return;
  }
  mxcb__check(mxc_predictor_set_input(p, name, BYTES, (size_t)N_BYTES));
}

static inline void mxcb_predictor_set_input_array(mxc_predictor p,
                                                  const char *name,
                                                  mxc_ndarray a) {
  mxcb__begin();
  mxcb__check(mxc_predictor_set_input_array(p, name, a));
}

static inline void mxcb_predictor_forward(mxc_predictor p) {
  mxcb__begin();
  mxcb__check(mxc_predictor_forward(p));
}

static inline int mxcb_predictor_num_outputs(mxc_predictor p) {
  int n = 0;
  mxcb__begin();
  return mxcb__check(mxc_predictor_num_outputs(p, &n)) ? -1 : n;
}

/* A new array handle on output i (the latest forward's values: copy them
 * out before the next forward). */
static inline mxc_ndarray mxcb_predictor_output(mxc_predictor p, int i) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_predictor_output(p, i, &out)) ? NULL : out;
}

/* ---- the profiler ---- */

static inline void mxcb_profiler_set_config(const char *key,
                                            const char *value) {
  mxcb__begin();
  mxcb__check(mxc_profiler_set_config(key, value));
}

/* state: MXC_PROFILER_STOP / _RUN / _PAUSE. */
static inline void mxcb_profiler_set_state(int state) {
  mxcb__begin();
  mxcb__check(mxc_profiler_set_state(state));
}

static inline int mxcb_profiler_get_state(void) {
  int out = -1;
  mxcb__begin();
  return mxcb__check(mxc_profiler_get_state(&out)) ? -1 : out;
}

static inline void mxcb_profiler_dump(int finished) {
  mxcb__begin();
  mxcb__check(mxc_profiler_dump(finished));
}

/* New strings: bindings free them with mxc_string_free (newfree). */
static inline char *mxcb_profiler_dumps(void) {
  char *out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_profiler_dumps(&out)) ? NULL : out;
}

/* format: MXC_PROFILER_TABLE or MXC_PROFILER_JSON. */
static inline char *mxcb_profiler_stats(int format, int reset) {
  char *out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_profiler_stats(format, reset, &out)) ? NULL : out;
}

static inline void mxcb_profiler_range_begin(const char *name) {
  mxcb__begin();
  mxcb__check(mxc_profiler_range_begin(name));
}

static inline void mxcb_profiler_range_end(void) {
  mxcb__begin();
  mxcb__check(mxc_profiler_range_end());
}

static inline void mxcb_profiler_mark(const char *name) {
  mxcb__begin();
  mxcb__check(mxc_profiler_mark(name));
}

static inline void mxcb_profiler_counter(const char *name, int64_t value) {
  mxcb__begin();
  mxcb__check(mxc_profiler_counter(name, value));
}

/* ---- KVStore (mxc_kvstore_*) ----------------------------------------- */

/* String keys (NAMES), one per array (HANDLES); the C API's int keys and
 * the updater callback are left to C and Python. A store is used from
 * any thread, as mxc_kvstore. */
static inline void mxcb_kvstore_free(mxc_kvstore kv) { mxc_kvstore_free(kv); }

/* "local" or "dist_sync"; NULL on failure. */
static inline mxc_kvstore mxcb_kvstore_create(const char *type) {
  mxc_kvstore out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_kvstore_create(type, &out)) ? NULL : out;
}

/* A static string, "" on failure. */
static inline const char *mxcb_kvstore_type(mxc_kvstore kv) {
  const char *out = "";
  mxcb__begin();
  return mxcb__check(mxc_kvstore_type(kv, &out)) ? "" : out;
}

/* -1 on failure. */
static inline int mxcb_kvstore_rank(mxc_kvstore kv) {
  int out = -1;
  mxcb__begin();
  return mxcb__check(mxc_kvstore_rank(kv, &out)) ? -1 : out;
}

static inline int mxcb_kvstore_num_workers(mxc_kvstore kv) {
  int out = -1;
  mxcb__begin();
  return mxcb__check(mxc_kvstore_num_workers(kv, &out)) ? -1 : out;
}

static inline void mxcb_kvstore_barrier(mxc_kvstore kv) {
  mxcb__begin();
  mxcb__check(mxc_kvstore_barrier(kv));
}

/* Fails unless there is one key per array. */
static inline int mxcb__kv_counts(int n_names, int n_handles) {
  if (n_names != n_handles || n_names < 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                   "kvstore: the number of keys and of arrays differ");
    return 0;
  }
  return 1;
}

static inline void mxcb_kvstore_init(mxc_kvstore kv, const char *const *NAMES,
                                     int N_NAMES, const mxc_ndarray *HANDLES,
                                     int N_HANDLES) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_NAMES, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_init(kv, N_NAMES, NULL, NAMES, HANDLES));
}

static inline void mxcb_kvstore_push(mxc_kvstore kv, const char *const *NAMES,
                                     int N_NAMES, const mxc_ndarray *HANDLES,
                                     int N_HANDLES, int priority) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_NAMES, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_push(kv, N_NAMES, NULL, NAMES, HANDLES, priority));
}

static inline void mxcb_kvstore_pull(mxc_kvstore kv, const char *const *NAMES,
                                     int N_NAMES, const mxc_ndarray *HANDLES,
                                     int N_HANDLES, int priority) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_NAMES, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_pull(kv, N_NAMES, NULL, NAMES, HANDLES, priority));
}

/* In place: each array is pushed and then receives the result. */
static inline void mxcb_kvstore_pushpull(mxc_kvstore kv,
                                         const char *const *NAMES, int N_NAMES,
                                         const mxc_ndarray *HANDLES,
                                         int N_HANDLES, int priority) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_NAMES, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_pushpull(kv, N_NAMES, NULL, NAMES, HANDLES,
                                   HANDLES, priority));
}

/* KV: the operator's parameters (k0, v0, k1, v1, ...). */
static inline void mxcb_kvstore_set_optimizer(mxc_kvstore kv, const char *name,
                                              const char *const *KV,
                                              int N_KV) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return;
  mxcb__check(mxc_kvstore_set_optimizer(kv, name, keys, vals, N_KV / 2));
}

/* ---- memory scopes (mxc_scope_*, mxc_handle_*) --------------------------- */

/* A scope of the calling thread (end it on the same thread). Java and Go
 * pass handles as their raw value (int64); R passes its array objects. */
static inline mxc_scope mxcb_scope_begin(void) {
  mxc_scope out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_scope_begin(&out)) ? NULL : out;
}

static inline void mxcb_scope_end(mxc_scope s) {
  mxcb__begin();
  mxcb__check(mxc_scope_end(s));
}

/* Moves handle (its raw value) to the enclosing scope, or (detach) out
 * of every scope. */
static inline void mxcb_scope_keep(int64_t handle, int detach) {
  const void *h = (const void *)(intptr_t)handle;
  mxcb__begin();
  mxcb__check(detach ? mxc_scope_detach(h) : mxc_scope_keep(h));
}

static inline void mxcb_scope_keep_array(mxc_ndarray a, int detach) {
  mxcb_scope_keep((int64_t)(intptr_t)a, detach);
}

/* Moves a to the enclosing scope only if it is registered in s (a value
 * made inside s, not one made before it): what R's with_scope does with
 * its value. */
static inline void mxcb_scope_keep_if_in(mxc_ndarray a, mxc_scope s) {
  mxc_scope in = NULL;
  mxcb__begin();
  if (mxcb__check(mxc_handle_scope(a, &in)) || in != s) return;
  mxcb__check(mxc_scope_keep(a));
}

/* Live handles / bytes of scope s (NULL: the whole process). */
static inline int64_t mxcb_scope_handles(mxc_scope s) {
  int64_t n = -1;
  mxcb__begin();
  return mxcb__check(mxc_scope_stats(s, &n, NULL)) ? -1 : n;
}

static inline int64_t mxcb_scope_bytes(mxc_scope s) {
  int64_t b = -1;
  mxcb__begin();
  return mxcb__check(mxc_scope_stats(s, NULL, &b)) ? -1 : b;
}

static inline char *mxcb_handle_dump(mxc_scope s) {
  char *out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_handle_dump(s, &out)) ? NULL : out;
}

static inline void mxcb_handle_debug_set(int enabled) {
  mxcb__begin();
  mxcb__check(mxc_handle_debug_set(enabled));
}

static inline int mxcb_handle_debug_enabled(void) {
  int out = 0;
  mxcb__begin();
  return mxcb__check(mxc_handle_debug_enabled(&out)) ? 0 : out;
}

static inline void mxcb_handle_tag_set(const char *tag) {
  mxcb__begin();
  mxcb__check(mxc_handle_tag_set(tag));
}

/* Tags one handle (its raw value) with the caller's location. */
static inline void mxcb_handle_tag(int64_t handle, const char *tag) {
  mxcb__begin();
  mxcb__check(mxc_handle_tag((const void *)(intptr_t)handle, tag));
}

/* ---- layers, optimizers, fit (mxc_block_*, mxc_optimizer_*, mxc_fit_*) -- */
/* KV everywhere below: configuration strings (k0, v0, k1, v1, ...) as
 * mxc_block_create, mxc_optimizer_create and mxc_fit_create take them.
 * Listeners (callbacks into the language) are per language: see
 * mxc_java.i and cmxc.swig. */

static inline void mxcb_block_free(mxc_block b) { mxc_block_free(b); }

static inline mxc_block mxcb_block_create(const char *kind, const char *name,
                                          const char *const *KV, int N_KV) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxc_block out = NULL;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  return mxcb__check(mxc_block_create(kind, name, keys, vals, N_KV / 2, &out))
             ? NULL
             : out;
}

static inline void mxcb_block_add(mxc_block b, mxc_block child) {
  mxcb__begin();
  mxcb__check(mxc_block_add(b, child));
}

/* -1 on failure. */
static inline int mxcb_block_num_children(mxc_block b) {
  int n = 0;
  mxcb__begin();
  return mxcb__check(mxc_block_num_children(b, &n)) ? -1 : n;
}

/* A new handle on child i. */
static inline mxc_block mxcb_block_child(mxc_block b, int i) {
  mxc_block out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_block_child(b, i, &out)) ? NULL : out;
}

/* Borrowed; the language copies it. */
static inline const char *mxcb_block_name(mxc_block b) {
  const char *s = NULL;
  mxcb__begin();
  return mxcb__check(mxc_block_name(b, &s)) ? NULL : s;
}

static inline void mxcb_block_initialize(mxc_block b, const char *method,
                                         const char *const *KV, int N_KV,
                                         int force) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return;
  mxcb__check(mxc_block_initialize(b, method, keys, vals, N_KV / 2, force));
}

/* A new array: the forward pass on HANDLES. */
static inline mxc_ndarray mxcb_block_forward(mxc_block b,
                                             const mxc_ndarray *HANDLES,
                                             int N_HANDLES) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_block_forward(b, N_HANDLES, HANDLES, &out)) ? NULL
                                                                     : out;
}

static inline int mxcb_block_num_params(mxc_block b) {
  int n = 0;
  mxcb__begin();
  return mxcb__check(mxc_block_num_params(b, &n)) ? -1 : n;
}

static inline const char *mxcb_block_param_name(mxc_block b, int i) {
  const char *s = NULL;
  mxcb__begin();
  return mxcb__check(mxc_block_param_name(b, i, &s)) ? NULL : s;
}

/* New handles on parameter i's values / gradient buffer. */
static inline mxc_ndarray mxcb_block_param(mxc_block b, int i) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_block_param(b, i, &out)) ? NULL : out;
}

static inline mxc_ndarray mxcb_block_param_grad(mxc_block b, int i) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_block_param_grad(b, i, &out)) ? NULL : out;
}

static inline void mxcb_block_save_params(mxc_block b, const char *path) {
  mxcb__begin();
  mxcb__check(mxc_block_save_params(b, path));
}

static inline void mxcb_block_load_params(mxc_block b, const char *path) {
  mxcb__begin();
  mxcb__check(mxc_block_load_params(b, path));
}

static inline void mxcb_block_hybridize(mxc_block b, int active) {
  mxcb__begin();
  mxcb__check(mxc_block_hybridize(b, active));
}

static inline void mxcb_block_export(mxc_block b, const char *prefix,
                                     int epoch) {
  mxcb__begin();
  mxcb__check(mxc_block_export(b, prefix, epoch));
}

static inline void mxcb_optimizer_free(mxc_optimizer o) {
  mxc_optimizer_free(o);
}

static inline mxc_optimizer mxcb_optimizer_create(mxc_block b,
                                                  const char *update_op,
                                                  const char *const *KV,
                                                  int N_KV) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxc_optimizer out = NULL;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  return mxcb__check(mxc_optimizer_create(b, update_op, keys, vals, N_KV / 2,
                                          &out))
             ? NULL
             : out;
}

static inline void mxcb_optimizer_step(mxc_optimizer o, int64_t batch_size) {
  mxcb__begin();
  mxcb__check(mxc_optimizer_step(o, batch_size));
}

static inline void mxcb_optimizer_set_lr(mxc_optimizer o, double lr) {
  mxcb__begin();
  mxcb__check(mxc_optimizer_set_lr(o, lr));
}

/* -1 on failure (a rate is never negative). */
static inline double mxcb_optimizer_get_lr(mxc_optimizer o) {
  double lr = -1;
  mxcb__begin();
  return mxcb__check(mxc_optimizer_get_lr(o, &lr)) ? -1 : lr;
}

static inline void mxcb_fit_free(mxc_fit f) { mxc_fit_free(f); }

static inline mxc_fit mxcb_fit_create(mxc_block net, mxc_block loss,
                                      mxc_optimizer opt,
                                      const char *const *KV, int N_KV) {
  const char *keys[MXCB__MAX_PARAMS], *vals[MXCB__MAX_PARAMS];
  mxc_fit out = NULL;
  mxcb__begin();
  if (!mxcb__split_kv(KV, N_KV, keys, vals)) return NULL;
  return mxcb__check(mxc_fit_create(net, loss, opt, keys, vals, N_KV / 2,
                                    &out))
             ? NULL
             : out;
}

/* val may be NULL (no validation). */
static inline void mxcb_fit_run(mxc_fit f, mxc_data_iter train,
                                mxc_data_iter val) {
  mxcb__begin();
  mxcb__check(mxc_fit_run(f, train, val));
}

/* A value of the run (see mxc_fit_value); NaN on failure. */
static inline double mxcb_fit_value(mxc_fit f, const char *name) {
  double v = 0;
  mxcb__begin();
  return mxcb__check(mxc_fit_value(f, name, &v)) ? (double)NAN : v;
}

static inline void mxcb_fit_stop(mxc_fit f) {
  mxcb__begin();
  mxcb__check(mxc_fit_stop(f));
}

static inline void mxcb_fit_save_checkpoint(mxc_fit f, const char *path) {
  mxcb__begin();
  mxcb__check(mxc_fit_save_checkpoint(f, path));
}

static inline void mxcb_fit_load_checkpoint(mxc_fit f, const char *path) {
  mxcb__begin();
  mxcb__check(mxc_fit_load_checkpoint(f, path));
}

/* Trains through kv (mxc_fit_set_kvstore: the fit holds its own reference,
 * so the caller may free kv); kv NULL trains alone again. */
static inline void mxcb_fit_set_kvstore(mxc_fit f, mxc_kvstore kv) {
  mxcb__begin();
  mxcb__check(mxc_fit_set_kvstore(f, kv));
}

#endif /* MXC_BINDINGS_MXCB_H_ */
