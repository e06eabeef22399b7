/* demo: the main job for now. Uses only the public API (<mxc/mxc.h>):
 * creates arrays, pushes a user function that computes y = a*x + y on the
 * engine from several threads' worth of work, uses views, saves and loads
 * the result, and prints what happened. Exit status 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"

#define CHECK(call)                                                        \
  do {                                                                     \
    int rc_ = (call);                                                      \
    if (rc_ != MXC_OK) {                                                   \
      fprintf(stderr, "demo: %s failed: %s: %s\n", #call,                  \
              mxc_error_name(rc_), mxc_last_error());                      \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

/* y += a * x over the whole arrays; a is the user data. */
static int axpy(void *user_data, mxc_opctx ctx) {
  float a = *(const float *)user_data;
  void *x, *y;
  size_t nx, ny;
  int rc = mxc_opctx_data(ctx, 0, &x, &nx);
  if (rc == MXC_OK) rc = mxc_opctx_data(ctx, 1, &y, &ny);
  if (rc != MXC_OK) return rc;
  if (nx != ny) {
    mxc_opctx_set_error(ctx, "x and y differ in size");
    return MXC_ERR_SHAPE;
  }
  for (size_t i = 0; i < nx / sizeof(float); ++i) {
    ((float *)y)[i] += a * ((const float *)x)[i];
  }
  return MXC_OK;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "demo_arrays.mxc";
  int naive = 0, threads = 0;
  CHECK(mxc_engine_is_naive(&naive));
  CHECK(mxc_get_num_threads(&threads));
  printf("mxc %s, %s engine, %d worker thread(s)\n", mxc_version_string(),
         naive ? "naive" : "threaded", threads);

  enum { ROWS = 256, COLS = 1024 };
  int64_t shape[2] = {ROWS, COLS};
  mxc_ndarray x, y;
  CHECK(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &x));
  CHECK(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 1,
                           &y));
  float *host = malloc(sizeof(float) * ROWS * COLS);
  for (int i = 0; i < ROWS * COLS; ++i) host[i] = (float)(i % 7);
  CHECK(mxc_ndarray_copy_from_host(x, host, sizeof(float) * ROWS * COLS));
  memset(host, 0, sizeof(float) * ROWS * COLS);
  CHECK(mxc_ndarray_copy_from_host(y, host, sizeof(float) * ROWS * COLS));

  /* 100 steps on each of 4 row blocks: independent blocks run in
   * parallel; steps on one block run in order. */
  static const float a = 0.5f;
  for (int step = 0; step < 100; ++step) {
    for (int b = 0; b < 4; ++b) {
      mxc_ndarray xs, ys;
      CHECK(mxc_ndarray_slice(x, b * ROWS / 4, (b + 1) * ROWS / 4, &xs));
      CHECK(mxc_ndarray_slice(y, b * ROWS / 4, (b + 1) * ROWS / 4, &ys));
      CHECK(mxc_engine_push(axpy, (void *)&a, NULL, &xs, 1, &ys, 1, 0,
                            "axpy"));
      mxc_ndarray_free(xs); /* the pushed work keeps the storage alive */
      mxc_ndarray_free(ys);
    }
  }
  CHECK(mxc_wait_all());

  const char *names[2] = {"x", "y"};
  mxc_ndarray both[2] = {x, y};
  CHECK(mxc_ndarray_save(path, both, names, 2));
  mxc_ndarray_list list;
  CHECK(mxc_ndarray_load(path, &list));
  mxc_ndarray y2;
  CHECK(mxc_ndarray_list_get(list, 1, &y2));
  CHECK(mxc_ndarray_copy_to_host(y2, host, sizeof(float) * ROWS * COLS));
  int bad = 0;
  for (int i = 0; i < ROWS * COLS; ++i) {
    float want = 100 * a * (float)(i % 7);
    if (host[i] != want) bad++;
  }
  int64_t peak = 0;
  CHECK(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_PEAK_IN_USE, &peak));
  printf("400 pushes done; y[6] = %g (expected %g); %d mismatches\n", host[6],
         100 * a * 6, bad);
  printf("saved and reloaded '%s'; peak storage %lld bytes\n", path,
         (long long)peak);
  mxc_ndarray_free(y2);
  mxc_ndarray_list_free(list);
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  free(host);
  return bad ? 1 : 0;
}
