/* Checkpoints as an MXNet user loads them: PREFIX-symbol.json and
 * PREFIX-0000.params cut from one input (a 16-bit length, the JSON, the
 * params in either format), read by mxc_checkpoint_load, then bound with
 * the loaded arguments' shapes, the parameters copied in by
 * mxc_executor_load_params, and run forward. The files live in a private
 * directory under $TMPDIR (/dev/shm where it exists: no disk traffic),
 * removed at exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

static char g_dir[256];

static void remove_dir(void) {
  char path[320];
  snprintf(path, sizeof path, "%s/m-symbol.json", g_dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/m-0000.params", g_dir);
  unlink(path);
  rmdir(g_dir);
}

static const char *prefix(void) {
  static char p[300];
  if (!g_dir[0]) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/mxc-fuzz-XXXXXX", base);
    if (!mkdtemp(g_dir)) abort();
    atexit(remove_dir);
    snprintf(p, sizeof p, "%s/m", g_dir);
  }
  return p;
}

static void write_file(const char *name, const uint8_t *data, size_t n) {
  char path[320];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (n && fwrite(data, 1, n, f) != n) abort();
  fclose(f);
}

/* Binds with the shapes of the loaded arguments, loads the parameters
 * into the executor from the file and runs a forward. */
static void bind_and_run(mxc_symbol sym, mxc_ndarray_list args) {
  enum { MAX_ARGS = 64 };
  const char *names[MAX_ARGS];
  int ndims[MAX_ARGS], n = 0, k = 0;
  int64_t dims[MAX_ARGS * MXC_MAX_NDIM];
  mxc_ndarray_list_size(args, &n);
  for (int i = 0; i < n && i < MAX_ARGS; ++i) {
    mxc_ndarray a = NULL;
    const int64_t *shape = NULL;
    if (mxc_ndarray_list_name(args, i, &names[i]) != MXC_OK ||
        mxc_ndarray_list_get(args, i, &a) != MXC_OK)
      return;
    mxc_ndarray_shape(a, &ndims[i], &shape);
    memcpy(dims + k, shape, (size_t)ndims[i] * sizeof *dims);
    k += ndims[i];
    mxc_ndarray_free(a);
  }
  mxc_executor ex = NULL;
  if (mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, n < MAX_ARGS ? n : MAX_ARGS,
                               names, ndims, dims, NULL, MXC_REQ_NULL, 0,
                               NULL, NULL, MXC_BIND_DEFAULT, &ex) != MXC_OK)
    return;
  char params[320];
  snprintf(params, sizeof params, "%s-0000.params", prefix());
  if (mxc_executor_load_params(ex, params, 1) == MXC_OK &&
      mxc_executor_forward(ex, 0) == MXC_OK) {
    mxc_ndarray out = NULL;
    if (mxc_executor_output(ex, 0, &out) == MXC_OK) fz_touch(out);
    mxc_ndarray_free(out);
  }
  mxc_wait_all();
  mxc_executor_free(ex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  const char *p = prefix();
  fz_bytes in = {data, size};
  fz_bytes json = fz_split(&in);
  write_file("m-symbol.json", json.p, json.n);
  write_file("m-0000.params", in.p, in.n);
  mxc_symbol sym = NULL;
  mxc_ndarray_list args = NULL, aux = NULL;
  if (mxc_checkpoint_load(p, 0, &sym, &args, &aux) != MXC_OK) return 0;
  bind_and_run(sym, args);
  mxc_ndarray_list_free(args);
  mxc_ndarray_list_free(aux);
  mxc_symbol_free(sym);
  return 0;
}
