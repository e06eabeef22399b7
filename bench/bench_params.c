#include "bench/bench_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"

static void out_of_memory(void) {
  fprintf(stderr, "%s: out of memory for the parameter table\n", BENCH_NAME);
  exit(1);
}

static void add(bench_params *p, mxc_executor ex, const char *name,
                int init_weights) {
  int k = p->n++;
  p->names[k] = strdup(name);
  if (!p->names[k]) out_of_memory();
  check(mxc_executor_arg(ex, name, &p->w[k]), "mxc_executor_arg");
  check(mxc_executor_grad(ex, name, &p->g[k]), "mxc_executor_grad");
  int ndim = 0;
  const int64_t *shape = NULL;
  check(mxc_ndarray_shape(p->w[k], &ndim, &shape), "mxc_ndarray_shape");
  check(mxc_ndarray_create(shape, ndim, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &p->mom[k]),
        "mxc_ndarray_create");
  check(mxc_init_array(p->mom[k], "zeros", NULL, NULL, 0), "zeros");
  if (init_weights) {
    check(mxc_init_array(p->w[k], ndim > 1 ? "xavier" : "zeros", NULL, NULL, 0),
          name);
  }
}

void bench_params_collect(bench_params *p, mxc_executor ex, mxc_symbol sym,
                          int init_weights) {
  memset(p, 0, sizeof *p);
  mxc_str_list args = NULL;
  int n = 0;
  check(mxc_symbol_list_arguments(sym, &args), "list_arguments");
  check(mxc_str_list_size(args, &n), "mxc_str_list_size");
  p->names = calloc((size_t)n + 1, sizeof *p->names);
  p->w = calloc((size_t)n + 1, sizeof *p->w);
  p->g = calloc((size_t)n + 1, sizeof *p->g);
  p->mom = calloc((size_t)n + 1, sizeof *p->mom);
  if (!p->names || !p->w || !p->g || !p->mom) out_of_memory();
  for (int i = 0; i < n; ++i) {
    const char *name = NULL;
    check(mxc_str_list_get(args, i, &name), "mxc_str_list_get");
    if (strcmp(name, "data") != 0 && strcmp(name, "softmax_label") != 0) {
      add(p, ex, name, init_weights);
    }
  }
  mxc_str_list_free(args);
  check(mxc_op_find("sgd_mom_update", &p->sgd), "mxc_op_find");
}

void bench_params_sgd(const bench_params *p, double lr, double momentum,
                      double rescale) {
  char v[3][32];
  snprintf(v[0], sizeof v[0], "%.17g", lr);
  snprintf(v[1], sizeof v[1], "%.17g", momentum);
  snprintf(v[2], sizeof v[2], "%.17g", rescale);
  const char *keys[4] = {"lr", "momentum", "wd", "rescale_grad"};
  const char *vals[4] = {v[0], v[1], "0", v[2]};
  for (int i = 0; i < p->n; ++i) {
    mxc_ndarray in[3] = {p->w[i], p->g[i], p->mom[i]}, out[1] = {p->w[i]};
    check(mxc_op_invoke(p->sgd, keys, vals, 4, in, 3, out, 1, NULL),
          p->names[i]);
  }
}

void bench_params_free(bench_params *p) {
  for (int i = 0; i < p->n; ++i) {
    free(p->names[i]);
    mxc_ndarray_free(p->w[i]);
    mxc_ndarray_free(p->g[i]);
    mxc_ndarray_free(p->mom[i]);
  }
  free(p->names);
  free(p->w);
  free(p->g);
  free(p->mom);
  memset(p, 0, sizeof *p);
}
