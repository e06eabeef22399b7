/* Shape, dtype and storage-type inference.
 *
 * Two levels:
 *  - over an indexed graph (core/graph/graph.h), one value per entry id:
 *    what the executor uses on its forward+backward graph;
 *  - over a symbol, with argument values given by name or position and
 *    results grouped as arguments / outputs / auxiliary states: what the
 *    C API's mxc_symbol_infer_* return.
 *
 * Graph passes take an array of n_entries values, each known or unknown
 * (shape ndim == -1, dtype/stype -1), and fill in what the operators can
 * deduce. Variables whose entry is still unknown take their "__shape__" /
 * "__dtype__" / "__storage_type__" user attribute first. Incomplete results
 * are not an error at this level: callers decide what must be known.
 *
 * Shapes and dtypes: operator inference functions are run forward then
 * backward over the nodes until a sweep changes nothing, so that weights
 * get shapes from data (forward) and inputs from known outputs (backward).
 * Every sweep that continues turns at least one unknown value known, so
 * the loop ends. On an inconsistency the error (MXC_ERR_SHAPE /
 * MXC_ERR_DTYPE, or the operator's own code) names the node, its operator,
 * the input or output and both values:
 *   infer_shape: node 'fc1' (FullyConnected) input 'weight': shape (10,5)
 *   conflicts with inferred (10,784)
 * and the values array is then partly updated (callers discard it).
 *
 * Operators without infer_shape leave their entries alone. Operators
 * without infer_type make all inputs and outputs share one dtype.
 *
 * Storage types: one topological sweep (storage types flow forward only).
 * Variables take the caller's value, else "__storage_type__" ("default",
 * "row_sparse", "csr" or the MXC_STYPE_* number; anything else is
 * MXC_ERR_STYPE naming the variable), else dense. Each operator node runs
 * its infer_stype (core/op/op.h) on its input types and the types already
 * fixed for its outputs (an entry the caller set, such as a gradient
 * written straight into a bound row_sparse array), which chooses the dense
 * or the sparse kernel. A node is a *fallback* node when its operator has
 * no storage functions, or its infer_stype returns MXC_ERR_STYPE, while
 * some input or fixed output is sparse: it runs the dense kernel on dense
 * temporaries (core/op/invoke.c converts), so its unfixed outputs are dense.
 * Errors name the node: a fixed output the operator's choice contradicts,
 * MXC_ERR_STYPE for all-dense inputs, any other error of the operator.
 *
 * Thread-safety: the graph is only read; callers own the arrays. */
#ifndef MXC_CORE_GRAPH_INFER_H_
#define MXC_CORE_GRAPH_INFER_H_

#include <stdint.h>

#include "core/base/shape.h"
#include "core/graph/graph.h"
#include "core/graph/symbol.h"

/* shapes[0..g->n_entries). */
int mxc__graph_infer_shape(const mxc__graph *g, mxc__shape *shapes);
/* dtypes[0..g->n_entries): MXC_DTYPE_* or -1. */
int mxc__graph_infer_type(const mxc__graph *g, int *dtypes);
/* stypes[0..g->n_entries): MXC_STYPE_* or -1; on success all are known
 * (unknown variables default to dense). */
int mxc__graph_infer_stype(const mxc__graph *g, int *stypes);

/* Per-node kernel choice of storage inference. DENSE and SPARSE equal
 * MXC__DISPATCH_DENSE / MXC__DISPATCH_SPARSE. */
#define MXC__GRAPH_VARIABLE (-1)
#define MXC__GRAPH_DENSE 0
#define MXC__GRAPH_SPARSE 1
#define MXC__GRAPH_FALLBACK 2

/* mxc__graph_infer_stype that also records, when dispatch is non-NULL,
 * the choice for each node (dispatch[0..g->n_nodes)). */
int mxc__graph_infer_stype_dispatch(const mxc__graph *g, int *stypes,
                                    int8_t *dispatch);

/* A variable's storage-type attribute `key` ("__storage_type__",
 * "__grad_stype__"): 0 when absent, 1 and *out when valid, -1 when it is
 * not a storage type. */
int mxc__stype_attr(const mxc__node *var, const char *key, int *out);

/* Parses a "__shape__" value such as "(128,784)" or "[2, 3]". Returns 1
 * and *out for a fully known shape; 0 when the text is not a shape, has
 * more than MXC_MAX_NDIM axes, or has a zero / negative (unknown) extent
 * (a partly known shape cannot be represented, so it counts as unknown). */
int mxc__parse_shape_attr(const char *s, mxc__shape *out);

/* ---- symbol level ---- */

/* Groups of a result, as MXC_INFER_ARGS / OUTPUTS / AUX. */
#define MXC__INFER_GROUPS 3

/* What an inference over a symbol found, per group in the order of
 * list_arguments / list_outputs / list_auxiliary_states. `kind` says which
 * pass produced it; shape results have vals NULL, the others shapes NULL. */
typedef enum mxc__infer_kind {
  MXC__INFER_SHAPE = 0,
  MXC__INFER_TYPE = 1,
  MXC__INFER_STYPE = 2
} mxc__infer_kind;

typedef struct mxc__infer_result {
  mxc__infer_kind kind;
  int n[MXC__INFER_GROUPS];
  mxc__shape *shapes[MXC__INFER_GROUPS]; /* MXC__INFER_SHAPE */
  int *vals[MXC__INFER_GROUPS];          /* dtypes or stypes */
} mxc__infer_result;

void mxc__infer_result_free(mxc__infer_result *r); /* accepts NULL */

/* Sets the values of some variables of g before a graph pass: names
 * non-NULL gives them by name (every variable with that name, argument or
 * auxiliary state; MXC_ERR_NOT_FOUND for a name that matches none),
 * otherwise the first n arguments in order (MXC_ERR_INVALID_ARGUMENT when
 * n exceeds the argument count). `fn` names the caller in messages.
 * shapes or vals (the one used) holds n values; elem_size says which:
 * values are copied with memcpy from ((char *)src + i * elem_size). */
int mxc__graph_set_args(const mxc__graph *g, const char *fn, int n,
                        const char *const *names, const void *src,
                        size_t elem_size, void *dst);

/* Converts the C API's shape lists (n shapes; shape i has ndims[i] axes,
 * its extents taken in turn from dims) into a new array of n shapes
 * (mxc__free it; at least one element is allocated). ndims[i] must be in
 * 0..MXC_MAX_NDIM and extents >= 0 (MXC_ERR_INVALID_ARGUMENT naming `fn`
 * and the index otherwise). */
int mxc__shapes_from_dims(const char *fn, int n, const int *ndims,
                          const int64_t *dims, mxc__shape **out);

/* Inference over symbol s from n given argument values (see
 * mxc__graph_set_args). partial == 0: everything must be known, otherwise
 * MXC_ERR_SHAPE / MXC_ERR_DTYPE names the first argument, auxiliary state
 * or output left unknown. On success *out is a new result. */
int mxc__symbol_infer_shape(const mxc__symbol *s, int n,
                            const char *const *names,
                            const mxc__shape *shapes, int partial,
                            mxc__infer_result **out);
int mxc__symbol_infer_type(const mxc__symbol *s, int n,
                           const char *const *names, const int *dtypes,
                           int partial, mxc__infer_result **out);
int mxc__symbol_infer_stype(const mxc__symbol *s, int n,
                            const char *const *names, const int *stypes,
                            mxc__infer_result **out);

#endif /* MXC_CORE_GRAPH_INFER_H_ */
