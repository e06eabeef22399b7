/* Writes a trace with every kind of event for check_trace.py: caller
 * threads with nested ranges around operator calls, engine workers
 * running big calls, the engine's own spans (nesting the operators'),
 * an executor with a planned graph, copies, waits, memory counters,
 * markers and counters. Usage: trace_gen TRACE.json STATS.json */
#include <mxc/mxc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(expr)                                                   \
  do {                                                                \
    if ((expr) != MXC_OK) {                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,  \
              mxc_last_error());                                      \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

static mxc_op g_add, g_act;
static mxc_ndarray g_big;

static mxc_ndarray add(mxc_ndarray a, mxc_ndarray b) {
  mxc_ndarray in[2] = {a, b}, out[1] = {NULL};
  CHECK(mxc_op_invoke(g_add, NULL, NULL, 0, in, 2, out, 1, NULL));
  return out[0];
}

static void *caller(void *arg) {
  (void)arg;
  for (int i = 0; i < 20; ++i) {
    CHECK(mxc_profiler_range_begin("outer"));
    CHECK(mxc_profiler_range_begin("inner"));
    mxc_ndarray_free(add(g_big, g_big));
    CHECK(mxc_profiler_range_end());
    CHECK(mxc_profiler_mark("step done"));
    CHECK(mxc_profiler_counter("step", i));
    CHECK(mxc_profiler_range_end());
  }
  return NULL;
}

static void run_executor(void) {
  mxc_symbol x = NULL, y = NULL, z = NULL;
  CHECK(mxc_symbol_variable("x", &x));
  const char *k[] = {"act_type"}, *v[] = {"tanh"};
  CHECK(mxc_symbol_create(g_act, k, v, 1, "act1", NULL, &x, 1, &y));
  CHECK(mxc_symbol_create(g_act, k, v, 1, "act2", NULL, &y, 1, &z));
  const char *names[] = {"x"};
  int ndims[] = {2};
  int64_t dims[] = {32, 32};
  mxc_executor ex = NULL;
  CHECK(mxc_executor_simple_bind(z, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                                 NULL, MXC_REQ_WRITE, 0, NULL, NULL,
                                 MXC_BIND_NO_FUSION, &ex));
  for (int i = 0; i < 3; ++i) {
    CHECK(mxc_executor_forward(ex, 1));
    CHECK(mxc_executor_backward(ex, 0, NULL));
  }
  CHECK(mxc_wait_all());
  mxc_executor_free(ex);
  mxc_symbol_free(z);
  mxc_symbol_free(y);
  mxc_symbol_free(x);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s TRACE.json STATS.json\n", argv[0]);
    return 2;
  }
  CHECK(mxc_op_find("elemwise_add", &g_add));
  CHECK(mxc_op_find("Activation", &g_act));
  CHECK(mxc_profiler_set_config("filename", argv[1]));
  CHECK(mxc_profiler_set_config("profile_all", "1"));
  CHECK(mxc_profiler_set_state(MXC_PROFILER_RUN));
  int64_t shape[2] = {64, 64};
  CHECK(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &g_big));
  static float host[64 * 64];
  CHECK(mxc_ndarray_copy_from_host(g_big, host, sizeof host));
  pthread_t th[3];
  for (int i = 0; i < 3; ++i) pthread_create(&th[i], NULL, caller, NULL);
  caller(NULL);
  for (int i = 0; i < 3; ++i) pthread_join(th[i], NULL);
  run_executor();
  CHECK(mxc_ndarray_copy_to_host(g_big, host, sizeof host));
  mxc_ndarray_free(g_big);
  CHECK(mxc_wait_all());
  char *stats = NULL;
  CHECK(mxc_profiler_stats(MXC_PROFILER_JSON, 0, &stats));
  FILE *f = fopen(argv[2], "w");
  if (!f || fputs(stats, f) < 0 || fclose(f) != 0) {
    perror(argv[2]);
    return 1;
  }
  mxc_string_free(stats);
  CHECK(mxc_profiler_dump(1));
  return 0;
}
