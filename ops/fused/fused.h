/* The `_fused_elemwise` operator: one node that evaluates a chain or tree
 * of element-wise operators tile by tile, so intermediate values stay in
 * cache-sized buffers instead of whole arrays. core/fuse builds such nodes
 * from graphs; this header is what it needs to know.
 *
 * Parameters (strings, so fused nodes are ordinary nodes that JSON can
 * save and load):
 *   num_inputs  number of external inputs (1..MXC__FUSED_MAX_INPUTS)
 *   program     instructions separated by ';', each
 *                 <operator>(<arg>,...[,<key>=<value>...])
 *               where an arg is i<k> (external input k) or r<k> (the
 *               result of instruction k, which must come earlier), and the
 *               key/value pairs are the operator's own parameters, e.g.
 *                 "_mul_scalar(i0,scalar=2);negative(r0);exp(r1)"
 *               The last instruction's result is the output. Every input
 *               and every result but the last must be used. Values must
 *               not contain any of "(),;=".
 * Inputs and the output share one shape and one dtype. */
#ifndef MXC_OPS_FUSED_FUSED_H_
#define MXC_OPS_FUSED_FUSED_H_

#include "ops/op.h"

#define MXC__FUSED_OP_NAME "_fused_elemwise"
#define MXC__FUSED_MAX_INSTR 64
/* External inputs of one program. Kept well under the 64 of invoke: the
 * engine holds one lock per array of a push at once, and ThreadSanitizer's
 * deadlock detector aborts beyond 64 held locks; wide sums fuse into a
 * few nodes instead of one. */
#define MXC__FUSED_MAX_INPUTS 32

/* 1 when op may appear in a program: an element-wise operator with one
 * output and up to 3 inputs of the output's shape and dtype, without
 * auxiliary states, resources, sparse kernels or mutated inputs (unary
 * operators and their _backward_ forms, same-shape binary operators,
 * scalar forms and their _backward_ forms, Activation, clip, _copy,
 * BlockGrad and the backward operators among these). */
int mxc__fused_is_fusible(const mxc__op *op);

/* 1 when a parameter value can be written into a program unchanged (none
 * of the separator characters "(),;=", no control characters). */
int mxc__fused_value_ok(const char *val);

#endif /* MXC_OPS_FUSED_FUSED_H_ */
