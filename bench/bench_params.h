/* The trained parameters of a bound executor, and SGD with momentum over
 * them: what the training benchmarks (bench/data's CNN, bench/train's
 * ResNet step) share. Failures end the program (bench_util.h's check). */
#ifndef MXC_BENCH_BENCH_PARAMS_H_
#define MXC_BENCH_BENCH_PARAMS_H_

#include "mxc/mxc.h"

typedef struct bench_params {
  int n;
  char **names;
  mxc_ndarray *w, *g, *mom; /* weight, gradient, momentum per parameter */
  mxc_op sgd;               /* sgd_mom_update */
} bench_params;

/* Every argument of sym (bound as ex) but "data" and "softmax_label", with
 * zero momenta. init_weights: Xavier weights and zero biases from mxc's
 * seeded generators; otherwise the executor's values stay (loaded ones). */
void bench_params_collect(bench_params *p, mxc_executor ex, mxc_symbol sym,
                          int init_weights);

/* w += mom = momentum mom - lr rescale grad, for every parameter
 * (asynchronous, like any operator call). */
void bench_params_sgd(const bench_params *p, double lr, double momentum,
                      double rescale);

void bench_params_free(bench_params *p);

#endif /* MXC_BENCH_BENCH_PARAMS_H_ */
