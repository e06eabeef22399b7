/* Imperative autograd: recording operator calls on arrays and computing
 * gradients of the recorded history (the internal half of the "Imperative
 * autograd" section of mxc.h).
 *
 * Model. Every array view may carry autograd information (the `ag` field
 * of mxc__ndarray): a link to a history node, which is either
 *  - a marked variable: an core/op/node.h variable node, the variable's value
 *    and its gradient buffer and request; or
 *  - a recorded call: an core/op/node.h operator node with the call's
 *    parameter strings, whose inputs are the history nodes of the call's
 *    inputs (a fresh, unmarked variable node for an input without
 *    history: a constant), together with views of every output of the
 *    call, hidden ones included (BatchNorm's saved mean and variance), and
 *    the training mode at record time.
 * A history node keeps its input history nodes alive, so the whole
 * recorded graph reachable from an array lives as long as the array (or
 * until a backward pass with retain_graph == 0 frees it). Saved values are
 * views sharing the arrays' storage: overwriting an array whose value a
 * history saved (writing into it with another operator) makes later
 * gradients through that history wrong, as in MXNet. A recorded call may
 * not write into an array that has a history, nor accumulate into an
 * output (MXC__REQ_ADD): both are refused before anything runs.
 *
 * Only calls with an input that has a history are recorded (others have
 * nothing to differentiate), and only for operators with a gradient
 * function; results of calls not recorded carry no history.
 *
 * Backward builds gradient nodes with the gradient pass
 * (core/graph/gradient.h) and runs them with mxc__op_invoke in
 * topological order, binding forward entries to the saved values.
 *
 * Thread-safety: the recording flag is per thread. History links of arrays
 * and the mutable parts of history nodes (gradient buffers, freed state)
 * are guarded by one process-wide mutex, so arrays and histories may be
 * shared between threads; values are ordered by the engine as usual. */
#ifndef MXC_CORE_AUTOGRAD_AUTOGRAD_H_
#define MXC_CORE_AUTOGRAD_AUTOGRAD_H_

#include "core/ndarray/ndarray.h"
#include "core/op/node.h"
#include "core/op/op.h"

/* The calling thread's recording flag (one thread-local load: every
 * imperative call checks it). */
int mxc__autograd_is_recording(void);

/* Sets the calling thread's recording flag; returns the previous one. */
int mxc__autograd_set_recording(int recording);

/* mxc__op_invoke (same arguments and contract), recording the call when
 * recording is on in this thread, an input has a history and op has a
 * gradient. keys/vals/n_params are the parameter strings `param` was
 * parsed from (the history node keeps a copy). Extra errors when the call
 * is to be recorded: an output slot given with MXC__REQ_ADD, or a given
 * output array that has a history (MXC_ERR_INVALID_ARGUMENT). Recording
 * never fails after the operator has been pushed: everything it needs is
 * allocated first. */
int mxc__autograd_invoke(const mxc__op *op, const void *param,
                         const char *const *keys, const char *const *vals,
                         int n_params, mxc__ndarray *const *in, int n_in,
                         mxc__ndarray **out, int n_out, const mxc__req *req);

/* The imperative call as the C API makes it: parses op's parameter
 * strings once, then runs mxc__autograd_invoke when this thread records
 * and mxc__op_invoke otherwise (same contract). n_params may be 0 with
 * keys/vals NULL. */
int mxc__imperative_invoke(const mxc__op *op, const char *const *keys,
                           const char *const *vals, int n_params,
                           mxc__ndarray *const *in, int n_in,
                           mxc__ndarray **out, int n_out,
                           const mxc__req *req);

/* Marks vars[0..n) as variables whose gradients go to grads[i] with
 * reqs[i] (MXC__REQ_NULL, _WRITE or _ADD; reqs NULL: all WRITE). Shapes
 * and dtypes must match (MXC_ERR_SHAPE / MXC_ERR_DTYPE). Vars may be of
 * any storage type; grads dense or row_sparse (csr: MXC_ERR_STYPE). A
 * row_sparse buffer with MXC__REQ_WRITE is written by the operator that
 * computes the gradient (its sparse kernel, or the storage fallback);
 * with MXC__REQ_ADD the gradient is added through a dense copy and cast
 * back. A var already marked keeps its history node and gets the new
 * buffer and request (histories recorded earlier use them too); any other
 * var becomes a new leaf (its earlier history, if any, is dropped). Keeps
 * its own references to the grads. All or nothing. */
int mxc__autograd_mark(int n, mxc__ndarray *const *vars, const mxc__req *reqs,
                       mxc__ndarray *const *grads);

/* Gradients of heads[0..n) (each with a history) with respect to every
 * marked variable they depend on. head_grads: NULL or n entries, NULL
 * entries meaning ones. retain_graph == 0 frees the saved values of every
 * recorded call reachable from the heads afterwards. Pushes the work and
 * returns. */
int mxc__autograd_backward(int n, mxc__ndarray *const *heads,
                           mxc__ndarray *const *head_grads, int retain_graph);

/* *out = a new view of a's gradient buffer; MXC_ERR_NOT_FOUND when a is
 * not a marked variable. */
int mxc__autograd_get_grad(const mxc__ndarray *a, mxc__ndarray **out);

/* *out = a new view of a's values without history. */
int mxc__autograd_detach(const mxc__ndarray *a, mxc__ndarray **out);

/* ---- tracing (trace.c) ---- */

/* Gives the graph node standing for a variable history node whose value
 * is `value` (a marked variable, or a constant input of a recorded call):
 * *out = a node with one reference for the caller, or an error (a value
 * the caller does not know). Called with the history lock held: it must
 * not call into autograd. */
typedef int (*mxc__autograd_var_fn)(void *user, const mxc__ndarray *value,
                                    mxc__node **out);

/* The calls recorded behind heads[0..n) (1 to 64 arrays, each with a
 * history) as a symbol with one output per head: each recorded call an
 * operator node named "<prefix>_<operator in lower case><k>" with the
 * call's parameters, each variable or constant what var_of gives for its
 * value (once per history node). A head without history, or a history
 * freed by a backward pass, is MXC_ERR_INVALID_ARGUMENT. *out new. */
struct mxc__symbol;
int mxc__autograd_trace(int n, mxc__ndarray *const *heads,
                        const char *prefix, mxc__autograd_var_fn var_of,
                        void *user, struct mxc__symbol **out);

#endif /* MXC_CORE_AUTOGRAD_AUTOGRAD_H_ */
