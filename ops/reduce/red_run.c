/* Running a reduction over the kernel pool (see mxc__red_run in
 * reduce_impl.h).
 *
 * Determinism. Floating-point addition is not associative, so a split
 * that followed the thread count would make sums differ in their last
 * bits between machines and between MXC_NUM_THREADS settings. Both splits
 * here are fixed by the plan: slices of a kept outer dimension give every
 * output exactly the serial order of operations, and the ranges of a
 * reduced outer dimension are mxc__red_parts(p) in number whatever the
 * thread count, their partials merged in range order. Threads only decide
 * who computes which range. */
#include "core/op/parallel.h"
#include "ops/reduce/reduce_impl.h"

/* At most this many partial accumulators: enough ranges to keep 16 cores
 * busy on a full reduction, few enough that merging them is negligible. */
#define RED_MAX_PARTS 16

int64_t mxc__red_parts(const mxc__red_plan *p) {
  if (p->n_in < MXC__PAR_MIN_ELEMS || p->ostr[0] != 0) return 1;
  int64_t parts = p->n_in / MXC__PAR_GRAIN_ELEMS;
  if (parts > RED_MAX_PARTS) parts = RED_MAX_PARTS;
  if (parts > p->dim[0]) parts = p->dim[0];
  /* Each part costs n_out accumulators: keep them within a quarter of
   * the input's element count. */
  if (parts > p->n_red / 4) parts = p->n_red / 4;
  return parts < 1 ? 1 : parts;
}

typedef struct red_job {
  const mxc__red_kernel *k;
  const mxc__red_plan *p;
  const char *x;
  size_t es;
  const mxc__blob *out;
  char *acc;
  mxc__req req;
  int64_t parts, slice; /* slice: input elements per index of dim 0 */
} red_job;

/* The plan of indices [i0, i1) of the outermost merged dimension. */
static mxc__red_plan sub_plan(const red_job *j, int64_t i0, int64_t i1) {
  mxc__red_plan s = *j->p;
  s.dim[0] = i1 - i0;
  s.n_in = j->slice * (i1 - i0);
  if (j->p->ostr[0] != 0) {
    s.n_out = j->p->ostr[0] * (i1 - i0);
  } else {
    s.n_red = j->p->n_red / j->p->dim[0] * (i1 - i0);
  }
  return s;
}

static const char *input_at(const red_job *j, int64_t i0) {
  return j->x + (size_t)(i0 * j->slice) * j->es;
}

/* Kept outer dimension: slices [i0, i1) own outputs [o0, o0 + n_out). */
static int kept_range(void *arg, int64_t i0, int64_t i1) {
  const red_job *j = arg;
  mxc__red_plan s = sub_plan(j, i0, i1);
  int64_t o0 = i0 * j->p->ostr[0];
  j->k->acc(&s, input_at(j, i0), j->acc + (size_t)o0 * 8);
  j->k->fin(j->p, j->acc, j->out, o0, s.n_out, j->req);
  return MXC_OK;
}

/* Reduced outer dimension: part q accumulates its range into its own
 * array of partials. */
static int part_range(void *arg, int64_t q0, int64_t q1) {
  const red_job *j = arg;
  int64_t d0 = j->p->dim[0];
  for (int64_t q = q0; q < q1; ++q) {
    int64_t i0 = q * d0 / j->parts, i1 = (q + 1) * d0 / j->parts;
    mxc__red_plan s = sub_plan(j, i0, i1);
    j->k->acc(&s, input_at(j, i0), j->acc + (size_t)(q * j->p->n_out) * 8);
  }
  return MXC_OK;
}

/* Outputs [o0, o1): partials merged in part order, then finished. */
static int merge_range(void *arg, int64_t o0, int64_t o1) {
  const red_job *j = arg;
  char *first = j->acc + (size_t)o0 * 8;
  for (int64_t q = 1; q < j->parts; ++q) {
    j->k->comb(first, j->acc + (size_t)(q * j->p->n_out + o0) * 8, o1 - o0);
  }
  j->k->fin(j->p, j->acc, j->out, o0, o1 - o0, j->req);
  return MXC_OK;
}

void mxc__red_run(const mxc__red_kernel *k, const mxc__red_plan *p,
                  const void *x, size_t es, const mxc__blob *out, void *acc,
                  mxc__req req) {
  red_job j = {k, p, x, es, out, acc, req, mxc__red_parts(p), 0};
  j.slice = p->dim[0] ? p->n_in / p->dim[0] : 0;
  int threads = mxc__parallel_threads();
  /* The range functions cannot fail, so neither can the loops. */
  if (j.parts > 1) {
    (void)mxc__parallel_for(j.parts, 1, threads, part_range, &j);
    (void)mxc__parallel_for(p->n_out, MXC__PAR_GRAIN_ELEMS, threads,
                            merge_range, &j);
  } else if (p->n_in >= MXC__PAR_MIN_ELEMS && p->ostr[0] != 0 &&
             j.slice > 0) {
    int64_t grain = (MXC__PAR_GRAIN_ELEMS + j.slice - 1) / j.slice;
    (void)mxc__parallel_for(p->dim[0], grain, threads, kept_range, &j);
  } else {
    k->acc(p, x, acc);
    k->fin(p, acc, out, 0, p->n_out, req);
  }
}
