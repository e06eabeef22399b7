/* The predictor API from outside bytes: symbol JSON and params bytes as
 * mxc_predictor_create takes them (no files), with an input shape and an
 * output choice from the input; then set input, forward, outputs read
 * back, a reshape to another batch and a clone run too.
 *
 * Input: a flags byte (bit 0-1: batch 1..4 for the reshape; bit 2: choose
 * the output "fc" by name; bit 3: input dtype float64), an ndim byte
 * (0..4) and ndim extent bytes (0..15) of the input "data", then a 16-bit
 * length and the JSON, then the params bytes (MXNet's or mxc's format). */
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

/* Sets every input to ones, runs, reads every output back. */
static void run(mxc_predictor p, size_t input_bytes) {
  unsigned char *x = calloc(input_bytes ? input_bytes : 1, 1);
  if (!x) return;
  memset(x, 0x3f, input_bytes);
  if (mxc_predictor_set_input(p, "data", x, input_bytes) == MXC_OK &&
      mxc_predictor_forward(p) == MXC_OK) {
    int n = 0;
    mxc_predictor_num_outputs(p, &n);
    for (int i = 0; i < n; ++i) {
      mxc_ndarray out = NULL;
      if (mxc_predictor_output(p, i, &out) == MXC_OK) fz_touch(out);
      mxc_ndarray_free(out);
    }
  }
  free(x);
}

static size_t bytes_of(const int64_t *dims, int ndim, int dtype) {
  size_t n = (size_t)mxc_dtype_size(dtype);
  for (int i = 0; i < ndim; ++i) n *= (size_t)dims[i];
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes in = {data, size};
  uint8_t flags = fz_u8(&in);
  int ndim = (int)fz_pick(&in, 5);
  int64_t dims[4] = {0};
  for (int i = 0; i < ndim; ++i) dims[i] = fz_pick(&in, 16);
  fz_bytes json = fz_split(&in);
  char *text = malloc(json.n + 1);
  if (!text) return 0;
  memcpy(text, json.p, json.n);
  text[json.n] = '\0';
  const char *names[] = {"data"}, *outs[] = {"fc"};
  int dtype = (flags & 8) ? MXC_DTYPE_FLOAT64 : MXC_DTYPE_FLOAT32;
  mxc_predictor p = NULL, r = NULL, c = NULL;
  if (mxc_predictor_create(text, in.p, in.n, MXC_DEVICE_CPU, 0, 1, names,
                           &ndim, dims, &dtype, (flags & 4) ? 1 : 0, outs,
                           &p) == MXC_OK) {
    run(p, bytes_of(dims, ndim, dtype));
    if (ndim > 0) {
      dims[0] = 1 + (flags & 3);
      if (mxc_predictor_reshape(p, 1, names, &ndim, dims, &r) == MXC_OK)
        run(r, bytes_of(dims, ndim, dtype));
    }
    if (mxc_predictor_clone(p, &c) == MXC_OK) mxc_predictor_free(p);
    else c = p;
    mxc_wait_all();
    mxc_predictor_free(r);
    mxc_predictor_free(c);
  }
  free(text);
  return 0;
}
