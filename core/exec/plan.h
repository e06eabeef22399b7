/* Memory plan of a bound graph: which buffer holds each intermediate value.
 *
 * The planner walks operator nodes in execution order. An entry's buffer
 * returns to a free pool after its last consumer has run; a new output
 * takes the best-fitting free buffer (the smallest one that is large
 * enough, else the largest one, grown), or a new buffer when the pool is
 * empty. Where an operator declares an in-place pair {input, output}, the
 * output takes over the input's buffer outright when this node is the
 * input's last consumer.
 *
 * Entries marked external (arguments, auxiliary states, outputs, gradient
 * arrays, head gradients) are not planned: they live in arrays of their
 * own and are never shared, so the planner can neither hand their memory
 * to another value nor write an in-place result into them.
 *
 * Because the plan spans forward and backward nodes, forward values read by
 * backward nodes stay live until those nodes run; running only the forward
 * prefix of the order is safe too, as every prefix of a valid plan is one.
 *
 * Invariant: at any point of the order, each buffer holds at most one live
 * entry; buffers are reused only between entries whose lifetimes do not
 * overlap, and the engine orders the reuse through the buffer's single
 * variable (all views of one buffer share it). */
#ifndef MXC_CORE_EXEC_PLAN_H_
#define MXC_CORE_EXEC_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/graph/graph.h"

typedef struct mxc__plan {
  int n_entries;
  int *buf;         /* per entry: buffer index, -1 for external entries */
  uint8_t *inplace; /* per entry: 1 when it reuses an input's buffer */
  int n_bufs;
  size_t *buf_bytes;      /* per buffer: bytes it must hold */
  /* Sums, saturating at INT64_MAX (huge graphs can plan more than int64
   * bytes before any allocation fails). */
  int64_t planned_bytes;  /* sum of buf_bytes */
  int64_t unshared_bytes; /* sum of nbytes over planned entries */
} mxc__plan;

/* Plans the entries of g. order: n_order node ids in execution order
 * (variables may be included and are skipped); every operator node whose
 * outputs are planned must appear in it. nbytes: per entry. external: per
 * entry, 1 for entries not to plan. share == 0 gives every planned entry a
 * buffer of its own (no reuse, no in-place). On success *out is a new plan
 * (mxc__plan_free). */
int mxc__plan_build(const mxc__graph *g, const int *order, int n_order,
                    const size_t *nbytes, const uint8_t *external, int share,
                    mxc__plan **out);

void mxc__plan_free(mxc__plan *p); /* accepts NULL */

#endif /* MXC_CORE_EXEC_PLAN_H_ */
