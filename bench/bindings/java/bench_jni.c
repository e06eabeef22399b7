/* Bench-only JNI function: the C side of the Java invoke benchmark, run in
 * the same process as the Java loop (same library instance, same engine
 * threads, same machine state) so the difference is the binding's cost.
 *
 * The loop is the one InvokeBench.java runs through org.mxc:
 * elemwise_add of two float32 arrays of 4 elements, a new output each
 * call, freed each call, mxc_wait_all every 1000 calls. */
#include <jni.h>
#include <stdint.h>
#include <time.h>

#include <mxc/mxc.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Microseconds per call over n calls; -1 when a call fails. */
JNIEXPORT jdouble JNICALL Java_org_mxc_bench_InvokeBench_cInvokeUs(JNIEnv *env,
                                                                  jclass cls,
                                                                  jint n) {
  static const float a_data[4] = {1, 2, 3, 4}, b_data[4] = {5, 6, 7, 8};
  const int64_t shape[1] = {4};
  mxc_op op = NULL;
  mxc_ndarray in[2] = {NULL, NULL};
  double t0, t1;
  int ok = 1;
  (void)env;
  (void)cls;
  if (mxc_op_find("elemwise_add", &op) != MXC_OK) return -1;
  for (int i = 0; i < 2 && ok; i++) {
    ok = mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                            &in[i]) == MXC_OK &&
         mxc_ndarray_copy_from_host(in[i], i == 0 ? a_data : b_data,
                                    sizeof a_data) == MXC_OK;
  }
  t0 = now_us();
  for (jint i = 0; i < n && ok; i++) {
    mxc_ndarray out = NULL;
    ok = mxc_op_invoke(op, NULL, NULL, 0, in, 2, &out, 1, NULL) == MXC_OK;
    mxc_ndarray_free(out);
    if ((i + 1) % 1000 == 0) ok = ok && mxc_wait_all() == MXC_OK;
  }
  ok = ok && mxc_wait_all() == MXC_OK;
  t1 = now_us();
  mxc_ndarray_free(in[0]);
  mxc_ndarray_free(in[1]);
  return ok && n > 0 ? (t1 - t0) / n : -1;
}
