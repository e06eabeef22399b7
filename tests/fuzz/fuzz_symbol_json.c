/* Symbol JSON, and what a model file reaches after parsing: shape and type
 * inference, simple_bind (shapes from the variables' __shape__ attributes,
 * as in a saved model), a training forward, backward and the outputs read
 * back. Parsing alone is the easy part; the graph passes and kernels
 * behind them are where a crafted model file does damage.
 *
 * One property is checked, not just survival: a graph mxc accepted must
 * serialise to JSON that mxc accepts again (abort otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

/* Elements of all inferred arguments, outputs and auxiliary states, or -1
 * when inference fails. Binding is skipped above a budget, so that a
 * valid but enormous model does not turn into an out-of-memory report. */
static int64_t inferred_elements(mxc_symbol sym) {
  mxc_infer inf = NULL;
  if (mxc_symbol_infer_shape(sym, 0, NULL, NULL, NULL, 0, &inf) != MXC_OK)
    return -1;
  int64_t total = 0;
  for (int g = MXC_INFER_ARGS; g <= MXC_INFER_AUX; ++g) {
    int n = 0;
    mxc_infer_count(inf, g, &n);
    for (int i = 0; i < n; ++i) {
      int ndim = 0;
      int64_t dims[MXC_MAX_NDIM];
      if (mxc_infer_shape(inf, g, i, &ndim, dims) != MXC_OK) continue;
      int64_t e = 1;
      for (int d = 0; d < ndim && e >= 0; ++d)
        e = dims[d] > 0 && e > INT64_MAX / dims[d] ? -1 : e * dims[d];
      total = e < 0 || total > INT64_MAX - e ? INT64_MAX : total + e;
    }
  }
  mxc_infer_free(inf);
  return total;
}

static void run(mxc_symbol sym) {
  mxc_infer types = NULL;
  if (mxc_symbol_infer_type(sym, 0, NULL, NULL, 1, &types) == MXC_OK)
    mxc_infer_free(types);
  int64_t elems = inferred_elements(sym);
  if (elems < 0 || elems > (1 << 22)) return;
  mxc_executor ex = NULL;
  if (mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 0, NULL, NULL, NULL,
                               NULL, MXC_REQ_WRITE, 0, NULL, NULL,
                               MXC_BIND_DEFAULT, &ex) != MXC_OK)
    return;
  if (mxc_executor_forward(ex, 1) == MXC_OK) mxc_executor_backward(ex, 0, NULL);
  int n = 0;
  mxc_executor_num_outputs(ex, &n);
  for (int i = 0; i < n; ++i) {
    mxc_ndarray out = NULL;
    if (mxc_executor_output(ex, i, &out) == MXC_OK) fz_touch(out);
    mxc_ndarray_free(out);
  }
  mxc_wait_all();
  mxc_executor_free(ex);
}

static void check_round_trip(mxc_symbol sym) {
  char *json = NULL;
  if (mxc_symbol_to_json(sym, &json) != MXC_OK) return;
  mxc_symbol again = NULL;
  if (mxc_symbol_from_json(json, &again) != MXC_OK) {
    fprintf(stderr, "fuzz_symbol_json: mxc wrote JSON it cannot read: %s\n%s\n",
            mxc_last_error(), json);
    abort();
  }
  mxc_symbol_free(again);
  mxc_string_free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  mxc_symbol sym = NULL;
  if (mxc_symbol_from_json(text, &sym) == MXC_OK) {
    check_round_trip(sym);
    run(sym);
    mxc_symbol_free(sym);
  }
  free(text);
  mxc_wait_all();
  return 0;
}
