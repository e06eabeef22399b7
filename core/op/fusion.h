/* The contract between element-wise fusion (core/fuse, a graph pass) and
 * the operator that runs fused nodes (ops/fused, a family): one node that
 * evaluates a chain or tree of element-wise operators tile by tile, so
 * intermediate values stay in cache-sized buffers instead of whole arrays.
 * The family plugs in with mxc__registry_set_fusible; without it (a build
 * without ops/fused) the pass fuses nothing.
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
#ifndef MXC_CORE_OP_FUSION_H_
#define MXC_CORE_OP_FUSION_H_

#include "core/op/op.h"

#define MXC__FUSED_OP_NAME "_fused_elemwise"
#define MXC__FUSED_MAX_INSTR 64
/* External inputs of one program: wide sums fuse into a few nodes
 * instead of one. (This once also kept pushes under 64 variables, the most
 * locks ThreadSanitizer's deadlock detector tracks; the engine no longer
 * holds a lock per variable for wide pushes, see core/engine/internal.h.) */
#define MXC__FUSED_MAX_INPUTS 32

/* Answers whether op may appear in a program (see mxc__op_fusible). */
typedef int (*mxc__fusible_fn)(const mxc__op *op);

/* Called by the fused family at registration; MXC_ERR_INTERNAL when a
 * predicate was already set. */
int mxc__registry_set_fusible(mxc__registry *r, mxc__fusible_fn fusible);

/* 1 when op may appear in a program: an element-wise operator with one
 * output and up to 3 inputs of the output's shape and dtype, without
 * auxiliary states, resources, sparse kernels or mutated inputs, that the
 * fused family can evaluate (unary operators and their _backward_ forms,
 * same-shape binary operators, scalar forms and their _backward_ forms,
 * Activation, clip, _copy, BlockGrad). 0 for every operator when no fused
 * operator is registered. */
int mxc__op_fusible(const mxc__op *op);

/* 1 when a parameter value can be written into a program unchanged (none
 * of the separator characters "(),;=", no control characters). */
int mxc__fused_value_ok(const char *val);

#endif /* MXC_CORE_OP_FUSION_H_ */
