/* Operator invocation as a hostile caller would make it: an operator
 * chosen by index or by a fuzzed name, fuzzed parameter keys and values
 * (mostly the operator's own keys, values mostly from a table of edge
 * cases: zero, negative and huge extents, NaN, odd tuples), 0..8 inputs of
 * any dtype with small shapes (zero-size dimensions included) filled with
 * input bytes, in training mode or not, optionally recorded by autograd
 * and differentiated. Outputs and gradients are read back to the host, so
 * a kernel writing past an allocation its shape inference undersized is
 * caught by ASan. */
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

#define MAX_PARAMS 5
#define MAX_ARRAYS 8
#define STR_MAX 40

static const char *const k_values[] = {
    "0", "1", "-1", "2", "3", "-2", "4", "64", "100000", "2147483647",
    "2147483648", "-2147483649", "9223372036854775807",
    "-9223372036854775808", "4294967296", "0.5", "1e-30", "1e30", "-1e30",
    "nan", "inf", "-inf", "None", "True", "False", "()", "(0,)", "(1,)",
    "(2,3)", "(1,1)", "(2,2)", "(0,-1)", "(-1,)", "(-1,2)", "(-2,)",
    "(-3,-3)", "(3,-4,-1,2)", "(1,2,3)", "(0,0,0,0)",
    "(4294967296,4294967296)", "(2147483647,2147483647)",
    "(9223372036854775807,)", "(100000,100000,100000)", "[1,2]", "(1,,2)",
    "float32", "float64", "float16", "int8", "uint8", "int32", "int64",
    "bool", "bfloat16", "max", "avg", "sum", "relu", "sigmoid", "tanh",
    "valid", "full", "instance", "channel", "batch", "null", "clip", "wrap",
    "raise", "csr", "row_sparse", "default", "",
};
#define N_VALUES ((uint32_t)(sizeof k_values / sizeof k_values[0]))

static const int k_dtypes[] = {
    MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16,
    MXC_DTYPE_UINT8,   MXC_DTYPE_INT32,   MXC_DTYPE_INT8,
    MXC_DTYPE_INT64,   MXC_DTYPE_BOOL,    MXC_DTYPE_BFLOAT16,
};

typedef struct call {
  mxc_op op;
  int n_params;
  const char *keys[MAX_PARAMS];
  const char *vals[MAX_PARAMS];
  char key_buf[MAX_PARAMS][STR_MAX + 1];
  char val_buf[MAX_PARAMS][STR_MAX + 1];
  int n_in, n_out;
  mxc_ndarray in[MAX_ARRAYS];
  mxc_ndarray out[MAX_ARRAYS];
} call;

static int pick_op(fz_bytes *b, call *c) {
  int count = 0;
  mxc_op_count(&count);
  if (fz_u8(b) < 240) return mxc_op_at((int)fz_pick(b, (uint32_t)count), &c->op);
  char name[STR_MAX + 1];
  return mxc_op_find(fz_str(b, name, STR_MAX), &c->op);
}

static void pick_params(fz_bytes *b, call *c) {
  int np = 0;
  mxc_op_num_params(c->op, &np);
  c->n_params = (int)fz_pick(b, MAX_PARAMS + 1);
  for (int i = 0; i < c->n_params; ++i) {
    c->keys[i] = c->key_buf[i];
    if (np > 0 && fz_u8(b) < 220)
      mxc_op_param(c->op, (int)fz_pick(b, (uint32_t)np), &c->keys[i], NULL,
                   NULL, NULL);
    else
      fz_str(b, c->key_buf[i], STR_MAX);
    c->vals[i] = fz_u8(b) < 170 ? k_values[fz_pick(b, N_VALUES)]
                                : fz_str(b, c->val_buf[i], STR_MAX);
  }
}

/* A new dense array of a fuzzed dtype and small shape, filled with input
 * bytes (NaN, infinities, extreme integers included). */
static mxc_ndarray make_input(fz_bytes *b) {
  int64_t shape[4];
  int ndim = (int)fz_pick(b, 5);
  for (int d = 0; d < ndim; ++d) shape[d] = fz_pick(b, 7);
  int dtype = k_dtypes[fz_pick(b, sizeof k_dtypes / sizeof k_dtypes[0])];
  mxc_ndarray a = NULL;
  if (mxc_ndarray_create(shape, ndim, dtype, MXC_DEVICE_CPU, 0, 0, &a) !=
      MXC_OK)
    return NULL;
  int64_t n = 0;
  mxc_ndarray_size(a, &n);
  size_t bytes = (size_t)n * (size_t)mxc_dtype_size(dtype);
  uint8_t *buf = calloc(bytes ? bytes : 1, 1);
  for (size_t i = 0; buf && i < bytes; ++i) buf[i] = fz_u8(b);
  if (buf) mxc_ndarray_copy_from_host(a, buf, bytes);
  free(buf);
  return a;
}

/* A new array shaped and typed like a (NULL when a is NULL). */
static mxc_ndarray like(mxc_ndarray a) {
  int ndim = 0, dtype = 0;
  const int64_t *shape = NULL;
  mxc_ndarray out = NULL;
  if (a && mxc_ndarray_shape(a, &ndim, &shape) == MXC_OK &&
      mxc_ndarray_dtype(a, &dtype) == MXC_OK)
    mxc_ndarray_create(shape, ndim, dtype, MXC_DEVICE_CPU, 0, 0, &out);
  return out;
}

/* Records the call, then backward from its first output into gradient
 * buffers of every input; the gradients are read back. */
static void differentiate(call *c) {
  mxc_ndarray grads[MAX_ARRAYS] = {NULL};
  for (int i = 0; i < c->n_in; ++i) grads[i] = like(c->in[i]);
  if (mxc_autograd_mark_variables(c->n_in, c->in, NULL, grads) == MXC_OK &&
      mxc_autograd_set_recording(1, NULL) == MXC_OK) {
    int rc = mxc_op_invoke(c->op, c->keys, c->vals, c->n_params, c->in,
                           c->n_in, c->out, c->n_out, NULL);
    mxc_autograd_set_recording(0, NULL);
    if (rc == MXC_OK && c->n_out > 0)
      mxc_autograd_backward(1, c->out, NULL, 0);
  }
  for (int i = 0; i < c->n_in; ++i) {
    fz_touch(grads[i]);
    mxc_ndarray_free(grads[i]);
  }
}

/* out= that is also an input: output 0 becomes a new handle on input k's
 * memory, which invoke computes through a temporary (core/op/alias.c). */
static void alias_output(fz_bytes *b, call *c) {
  mxc_ndarray src = c->in[fz_pick(b, (uint32_t)c->n_in)];
  int ndim = 0;
  const int64_t *shape = NULL;
  if (src && mxc_ndarray_shape(src, &ndim, &shape) == MXC_OK)
    mxc_ndarray_reshape(src, shape, ndim, &c->out[0]);
}

static void invoke(fz_bytes *b, call *c) {
  if (mxc_op_num_inputs(c->op, c->keys, c->vals, c->n_params, &c->n_in) !=
      MXC_OK)
    c->n_in = (int)fz_pick(b, 4);
  if (mxc_op_num_outputs(c->op, c->keys, c->vals, c->n_params, &c->n_out) !=
          MXC_OK ||
      c->n_in > MAX_ARRAYS || c->n_out > MAX_ARRAYS)
    return;
  for (int i = 0; i < c->n_in; ++i) c->in[i] = make_input(b);
  uint8_t mode = fz_u8(b);
  if ((mode & 4) && c->n_in > 0 && c->n_out > 0) alias_output(b, c);
  mxc_set_training(mode & 1, NULL);
  if (mode & 2)
    differentiate(c);
  else
    mxc_op_invoke(c->op, c->keys, c->vals, c->n_params, c->in, c->n_in,
                  c->out, c->n_out, NULL);
  mxc_set_training(0, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  call *c = calloc(1, sizeof *c);
  if (!c) return 0;
  if (pick_op(&in, c) == MXC_OK) {
    pick_params(&in, c);
    invoke(&in, c);
  }
  for (int i = 0; i < MAX_ARRAYS; ++i) {
    fz_touch(c->out[i]);
    mxc_ndarray_free(c->out[i]);
    mxc_ndarray_free(c->in[i]);
  }
  mxc_wait_all();
  free(c);
  return 0;
}
