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

/* ---- fused nodes off the CPU ----
 * A device's fused kernel (the CUDA plug-in's run-time compiled one)
 * may not compile every program: its row declines those by their
 * parameters (core/base/gpu_plugin.h, accepts). The fusion pass asks
 * before it fuses for that device (mxc__fused_program_on), and a fused
 * node whose program the device's kernel still declines when it runs
 * (its compiler failed, or the graph was saved fused) runs instruction
 * by instruction on that device instead (mxc__op_run_unfused), each
 * instruction with its own kernel choice, device fallback included. */

/* Runs the call of a fused node (op, param: its parsed program) one
 * instruction at a time through mxc__op_invoke on the call's arrays
 * (intermediate results in new arrays of the call's device); contract of
 * mxc__op_invoke. Set by the fused family. */
typedef int (*mxc__unfused_fn)(const mxc__op *op, const void *param,
                               struct mxc__ndarray *const *in, int n_in,
                               struct mxc__ndarray **out, int n_out,
                               const mxc__req *req);

/* Called by the fused family at registration; MXC_ERR_INTERNAL when set
 * twice. */
int mxc__registry_set_unfused(mxc__registry *r, mxc__unfused_fn fn);

/* 1 when op is the fused operator and its family can run it unfused. */
int mxc__op_has_unfused(const mxc__op *op);

/* The family's unfused run of a call on dev whose kernel there declined
 * (why, "" when there was none), logged once per (program, device) as
 * one MXC_LOG_WARNING line (MXC_DEVICE_FALLBACK_LOG=0 silences it).
 * Contract of mxc__op_invoke. */
int mxc__op_run_unfused(const mxc__op *op, const void *param,
                        struct mxc__ndarray *const *in, int n_in,
                        struct mxc__ndarray **out, int n_out,
                        const mxc__req *req, mxc__device dev,
                        const char *why);

/* 1 when the fused kernel of device type dev_type takes the program of
 * num_inputs inputs (judged by the parameters alone, before shapes or a
 * device are known): always on the CPU; 0 when no kernel there takes
 * it, or the program does not parse. Never fails (errors are cleared). */
int mxc__fused_program_on(int dev_type, const char *program, int num_inputs);

/* 1 when a parameter value can be written into a program unchanged (none
 * of the separator characters "(),;=", no control characters). */
int mxc__fused_value_ok(const char *val);

#endif /* MXC_CORE_OP_FUSION_H_ */
