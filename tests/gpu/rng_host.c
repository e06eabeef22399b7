/* The fake plug-in's random kernels: rng_host.h. */
#include "tests/gpu/rng_host.h"

#include <stdio.h>

/* Threads of the pretend grid: fewer than most calls' blocks, so a thread
 * computes several (the grid-stride loop), run in reverse order. */
#define FAKE_THREADS 3

int mxct_rng_fake_run(int kind, const mxc__gpu_call *c,
                      mxct_rng_host_fn host_of, char *why, size_t why_len) {
  if (c->n_out != 1) {
    snprintf(why, why_len, "fake random kernel: %d outputs", c->n_out);
    return MXC_ERR_INTERNAL;
  }
  mxc__rng_plan p;
  int rc = mxc__rng_plan_make(kind, c->param, &c->out[0], c->req[0], &c->rng,
                              &p, why, why_len);
  if (rc != MXC_OK || p.n_blocks == 0) return rc;
  void *out = host_of(&c->out[0], c->dev);
  if (!out) {
    snprintf(why, why_len, "fake GPU: the output is not on gpu(%d)", c->dev);
    return MXC_ERR_INTERNAL;
  }
  for (int t = FAKE_THREADS - 1; t >= 0; --t) {
    mxc__rng_plan_thread(&p, t, FAKE_THREADS, out);
  }
  return MXC_OK;
}
