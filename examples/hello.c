/* The smallest complete mxc program: adds two arrays with an operator and
 * prints the result. It is what an installed libmxc-dev must be able to
 * build with nothing but
 *
 *   cc hello.c $(pkg-config --cflags --libs mxc)
 *
 * Output (one line per fact, so scripts can check it):
 *   mxc_version_string=1.0.0
 *   mxc_version=10000
 *   header_version=10000
 *   sum=11 22 33 44 55 66
 */
#include <mxc/mxc.h>
#include <stdio.h>

/* Every mxc call returns MXC_OK or an error code; the message says why. */
#define CHECK(call)                                                        \
  do {                                                                     \
    int rc_ = (call);                                                      \
    if (rc_ != MXC_OK) {                                                   \
      fprintf(stderr, "hello: %s failed: %s: %s\n", #call,                 \
              mxc_error_name(rc_), mxc_last_error());                      \
      return 1;                                                            \
    }                                                                      \
  } while (0)

/* Runs the example; the arrays are freed by main whatever happens. */
static int run(mxc_ndarray arrays[3]) {
  const int64_t shape[2] = {2, 3};
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const float b[6] = {10, 20, 30, 40, 50, 60};
  float sum[6];
  mxc_op add;
  int i;

  CHECK(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &arrays[0]));
  CHECK(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &arrays[1]));
  CHECK(mxc_ndarray_copy_from_host(arrays[0], a, sizeof a));
  CHECK(mxc_ndarray_copy_from_host(arrays[1], b, sizeof b));

  /* Operator handles are static: look one up once, use it from anywhere. */
  CHECK(mxc_op_find("elemwise_add", &add));
  /* A NULL output slot receives a new array that this program owns. */
  CHECK(mxc_op_invoke(add, NULL, NULL, 0, arrays, 2, &arrays[2], 1, NULL));
  /* The addition runs asynchronously; copying out waits for it. */
  CHECK(mxc_ndarray_copy_to_host(arrays[2], sum, sizeof sum));

  printf("sum=");
  for (i = 0; i < 6; i++) printf(i ? " %g" : "%g", (double)sum[i]);
  printf("\n");
  return 0;
}

int main(void) {
  mxc_ndarray arrays[3] = {NULL, NULL, NULL};
  int rc, i;

  printf("mxc_version_string=%s\n", mxc_version_string());
  printf("mxc_version=%d\n", mxc_version());
  printf("header_version=%d\n", MXC_VERSION_NUMBER);
  /* A program built against 1.x runs with any later 1.y (packaging/ABI.md). */
  if (mxc_version() / 10000 != MXC_VERSION_MAJOR ||
      mxc_version() < MXC_VERSION_NUMBER) {
    fprintf(stderr, "hello: built for %d, loaded %d\n", MXC_VERSION_NUMBER,
            mxc_version());
    return 1;
  }
  rc = run(arrays);
  for (i = 0; i < 3; i++) mxc_ndarray_free(arrays[i]); /* NULL is fine */
  return rc;
}
