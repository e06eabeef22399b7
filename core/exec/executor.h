/* Executors: a symbol bound to arrays, run node by node on the engine.
 *
 * Binding builds one DAG for forward and backward: the symbol's outputs,
 * plus (when some argument wants a gradient) one head-gradient variable
 * per output and the gradient entries mxc__gradient_build makes for those
 * arguments. The DAG is fused (core/fuse, unless MXC_BIND_NO_FUSION),
 * indexed, its shapes and dtypes inferred from the bound arrays, and its
 * intermediate values planned into shared buffers (core/exec/plan.h,
 * unless MXC_BIND_NO_MEMORY_PLAN).
 *
 * Forward nodes are those the symbol's outputs depend on; the others are
 * backward nodes. forward() pushes the forward nodes in topological order,
 * one engine operation each (mxc__op_invoke with every output given), so
 * independent branches run in parallel; backward() pushes the rest and
 * then delivers gradients to arguments whose gradient could not be
 * written in place (copy or add, zeros for an argument no gradient
 * reaches).
 *
 * Ownership: an executor holds its own references to every array (views
 * cloned from the caller's) and to the symbol's nodes. Thread-safety: calls
 * on one executor must not overlap; distinct executors are independent,
 * also when they share arrays (the engine orders the accesses). */
#ifndef MXC_CORE_EXEC_EXECUTOR_H_
#define MXC_CORE_EXEC_EXECUTOR_H_

#include <stdint.h>

#include "core/base/device.h"
#include "core/base/shape.h"
#include "core/exec/passes.h"
#include "core/exec/plan.h"
#include "core/graph/graph.h"
#include "core/graph/symbol.h"
#include "core/ndarray/ndarray.h"
#include "mxc/mxc.h"
#include "core/op/op.h"

/* An internal bind flag, beside MXC_BIND_*: the public bind functions
 * refuse it. The executor makes the graph a GPU executor makes (every
 * device-dependent choice of binding, mxc__exec_graph_dev_type, taken as
 * for MXC_DEVICE_GPU) while its arrays and kernels stay on its own
 * device: tests/gpu's ResNet-50 check binds that graph on the CPU to ask
 * the CUDA plug-in which nodes it would run, without a GPU and without
 * changing the environment. */
#define MXC__BIND_GRAPH_OF_GPU (1 << 30)

typedef struct mxc__executor {
  mxc__device dev;
  int flags;        /* MXC_BIND_*, MXC__BIND_GRAPH_OF_GPU */
  mxc__symbol *sym; /* the bound symbol (own references), for reshape */
  mxc__graph *g;    /* forward + backward DAG, after fusion */
  int n_fused;      /* fused nodes the fusion pass created */
  int n_outputs;    /* g->heads[0..n_outputs) are the symbol's outputs */

  /* Arguments and auxiliary states in list_arguments /
   * list_auxiliary_states order. Names are borrowed from the nodes. */
  int n_args, n_aux;
  const char **arg_names, **aux_names;
  int *arg_entry, *aux_entry; /* entry ids in g */
  int *grad_req;              /* per argument: MXC__REQ_NULL/WRITE/ADD */
  int *grad_entry;            /* per argument: gradient entry, or -1 */
  uint8_t *grad_direct;       /* per argument: written by its producer */
  mxc__ndarray **grads;       /* per argument: owned view, or NULL */
  int *hgrad_entry;           /* per output: head-gradient entry, or -1 */
  /* The bound arrays: n_args arguments then n_aux auxiliary states (owned
   * views). arg_entry / aux_entry are -1 for those the inference passes
   * made the graph stop reading (folded BatchNorm parameters); the
   * arrays are still the executor's, found by name, saved and loaded. */
  mxc__ndarray **bound;

  /* Inference passes (passes.h; all zero when they did not run). */
  mxc__infer_passes passes;
  struct mxc__executor *twin; /* unoptimised, for training forwards */
  int fwd_twin;               /* the last forward ran on the twin */

  /* Per entry of g. */
  mxc__shape *shapes;
  int *dtypes;
  int *stypes;         /* MXC_STYPE_* (core/exec/stype.c) */
  mxc__ndarray **vals; /* owned view holding each entry's value */
  mxc__req *reqs;      /* write mode of each entry's producer */

  /* Per node of g: MXC__GRAPH_* (core/graph/infer.h), the kernel choice
   * of storage inference. */
  int8_t *dispatch;
  /* Some entry is sparse or some node falls back: the graph is then not
   * fused (fused kernels read dense blobs). */
  int any_sparse;

  /* Operator nodes in execution order: forward first, then backward. */
  int n_fwd, n_bwd;
  int *order;

  mxc__plan *plan;
  mxc__ndarray **bufs; /* plan->n_bufs planned buffers (owned) */

  int fwd_train; /* the last forward ran with is_train != 0 */
  mxc_monitor_fn monitor;
  void *monitor_data;
} mxc__executor;

/* Binds sym. args: n_args arrays in list_arguments order; grads: NULL or
 * one slot per argument (NULL slots: no gradient array); reqs: NULL
 * (MXC_REQ_WRITE where grads gives an array) or one MXC_REQ_* per
 * argument; aux: n_aux arrays. The executor clones its own views of all
 * arrays. `fn` names the caller in messages. */
int mxc__executor_bind(const mxc__symbol *sym, mxc__device dev,
                       mxc__ndarray *const *args, int n_args,
                       mxc__ndarray *const *grads, const int *reqs,
                       mxc__ndarray *const *aux, int n_aux, int flags,
                       const char *fn, mxc__executor **out);

/* Binds sym allocating zero arrays: shapes[0..n_shapes) of the named
 * arguments (others inferred; "__shape__" attributes count), dtypes NULL
 * or one per name ("__dtype__" attributes, then inference, then float32
 * for the rest). Requests: default_req, except req_names[i] -> reqs[i].
 * Every array starts as zeros, as mxc.h promises, auxiliary states
 * included: MXNet starts BatchNorm's moving variance at 1, so callers that
 * run inference before training set it themselves (the training example
 * initializes every parameter and state explicitly). */
int mxc__executor_simple_bind(const mxc__symbol *sym, mxc__device dev,
                              int n_shapes, const char *const *names,
                              const mxc__shape *shapes, const int *dtypes,
                              int default_req, int n_reqs,
                              const char *const *req_names, const int *reqs,
                              int flags, mxc__executor **out);

void mxc__executor_free(mxc__executor *ex); /* accepts NULL */

/* The device type whose graph ex makes: the one the passes of binding
 * decide by (BatchNorm-relu fusion, the inference passes, channel-last
 * formats: CPU only). ex->dev's, or MXC_DEVICE_GPU under
 * MXC__BIND_GRAPH_OF_GPU. */
static inline int mxc__exec_graph_dev_type(const mxc__executor *ex) {
  return (ex->flags & MXC__BIND_GRAPH_OF_GPU) ? MXC_DEVICE_GPU : ex->dev.type;
}

/* Pushes the forward nodes (see mxc.h for is_train). With a monitor set,
 * waits for each node and reports its outputs; the first failure seen
 * there is returned. */
int mxc__executor_forward(mxc__executor *ex, int is_train);

/* head_grads: n == 0 (ones) or n == n_outputs arrays shaped like the
 * outputs. Needs a preceding training forward. */
int mxc__executor_backward(mxc__executor *ex, int n,
                           mxc__ndarray *const *head_grads);

/* Borrowed arrays (valid while ex lives): output i; argument, gradient and
 * auxiliary state by name (MXC_ERR_NOT_FOUND naming it otherwise). */
mxc__ndarray *mxc__executor_output(const mxc__executor *ex, int i);
int mxc__executor_find(const mxc__executor *ex, int group, const char *name,
                       const char *fn, mxc__ndarray **out);
#define MXC__EXEC_ARG 0
#define MXC__EXEC_GRAD 1
#define MXC__EXEC_AUX 2

/* New shapes for some arguments (see mxc_executor_reshape). */
int mxc__executor_reshape(const mxc__executor *ex, int n,
                          const char *const *names, const mxc__shape *shapes,
                          mxc__executor **out);

/* MXC_ERR_REENTRANT naming fn when the calling thread is inside ex's
 * monitor callback (forward, backward, free and set_monitor of ex are
 * refused there: ex is in the middle of running). */
int mxc__executor_check_not_monitoring(const mxc__executor *ex,
                                       const char *fn);

int mxc__executor_set_monitor(mxc__executor *ex, mxc_monitor_fn fn,
                              void *user_data);

/* Planned and one-buffer-per-value bytes of intermediate values. */
void mxc__executor_memory(const mxc__executor *ex, int64_t *planned,
                          int64_t *unshared);

/* *out = a new string (mxc__free) describing the bound graph. */
int mxc__executor_debug_str(const mxc__executor *ex, char **out);

int mxc__executor_save_params(const mxc__executor *ex, const char *path,
                              int n_exclude, const char *const *exclude);
int mxc__executor_load_params(mxc__executor *ex, const char *path,
                              int allow_extra);

/* Pushes a write of `value` into every element of dense array a (zero
 * gradients, ones as head gradients, zero-initialized arrays). name: a
 * static string naming the work in errors. */
int mxc__exec_fill(const mxc__ndarray *a, double value, const char *name);

/* ---- sparse entries (core/exec/stype.c) ----
 *
 * Storage types of a binding: arguments and auxiliary states have their
 * arrays' types; a gradient array is written by its producer directly
 * (grad_direct) when nothing else reads its entry and the producer runs
 * only in backward, and then the entry has the array's type; everything
 * else is what storage inference of the graph gives. Sparse entries are
 * never planned: each has its own sparse array, (re)allocated by the
 * kernel that writes it. Every node runs through mxc__op_invoke, which
 * picks the sparse kernel or falls back to dense temporaries. */

/* Sets grad_direct for the current graph and fwd mask. */
void mxc__exec_mark_direct(mxc__executor *ex, const uint8_t *fwd);
/* Fills ex->stypes / ex->dispatch / ex->any_sparse for ex->g from the
 * bound arrays and ex->grads. */
int mxc__exec_infer_stypes(mxc__executor *ex, mxc__ndarray *const *args,
                           mxc__ndarray *const *aux, const char *fn);
/* Makes the missing gradient arrays of mxc__executor_bind_alloc (zeros;
 * *made = how many). */
int mxc__exec_alloc_grads(mxc__executor *ex, const mxc__graph *gf,
                          mxc__ndarray *const *args, int *made,
                          const char *fn);
/* Storage-type rules of bound arrays: auxiliary states dense, arguments
 * agreeing with their "__storage_type__", no MXC_REQ_ADD into a sparse
 * gradient. */
int mxc__exec_check_stypes(const mxc__executor *ex, const mxc__graph *gf,
                           mxc__ndarray *const *args,
                           mxc__ndarray *const *grads,
                           mxc__ndarray *const *aux, const char *fn);
/* A new empty array for entry e of its storage type. */
int mxc__exec_new_entry(const mxc__executor *ex, int e, mxc__ndarray **out);
/* Delivers a gradient entry whose storage type differs from the gradient
 * array's, or that is sparse: a cast or sparse copy (req write, or add
 * into a dense array). */
int mxc__exec_deliver_sparse(mxc__ndarray *src, mxc__ndarray *dst,
                             mxc__req req);
/* Pushes "every element zero" into a dense or sparse array. */
int mxc__exec_zero(const mxc__ndarray *a, const char *name);
/* The heads of the bound DAG (core/exec/dag.c): the symbol's outputs,
 * then the gradient entries of the arguments with a request. */
typedef struct mxc__exec_dag {
  mxc__entry *heads; /* one reference each */
  int n_heads;
  mxc__node **hg; /* per output: head-gradient variable, or NULL */
  int *gpos;      /* per argument: position of its gradient in heads, -1 */
} mxc__exec_dag;

int mxc__exec_dag_make(mxc__executor *ex, const mxc__graph *gf,
                       mxc__exec_dag *d, const char *fn);
void mxc__exec_dag_free(const mxc__executor *ex, mxc__exec_dag *d);
/* (Re)builds ex->g from d, fused or not, with the gradient, head-gradient
 * and variable entry ids, the execution order (*fwd: forward node mask,
 * caller frees) and grad_direct. */
int mxc__exec_index(mxc__executor *ex, const mxc__graph *gf,
                    const mxc__exec_dag *d, int fuse, uint8_t **fwd,
                    const char *fn);

/* ---- value formats (core/exec/format.c) ----
 *
 * Marks channels-last (core/op/op.h) the internal values of a dense CPU
 * executor whose producing and reading kernels all take them so; after
 * bind_arrays. bf16_ok: an inference executor MXC_BIND_BF16 applies to
 * (bfloat16 values then where kernels take them). Does nothing with
 * MXC_BIND_NO_ONEDNN or MXC_CHANNELS_LAST=0 in the environment. */
int mxc__exec_formats_choose(mxc__executor *ex, int bf16_ok);

/* ---- inference passes at run time (core/exec/infer_run.c) ---- */

/* Gives each fold its bound source arrays and new folded arrays. */
int mxc__exec_folds_bind(mxc__executor *ex, const mxc__graph *gf,
                         const char *fn);
/* Entry id in ex->g of fold i's folded weight (bias == 0) or bias. */
int mxc__exec_fold_entry(const mxc__executor *ex, int i, int bias);
/* Before an inference forward: recomputes folds whose sources changed. */
int mxc__exec_folds_update(mxc__executor *ex);
/* The executor for training forwards of a pass-rewritten ex (borrowed;
 * made on first use, freed with ex). */
int mxc__exec_twin(mxc__executor *ex, mxc__executor **out);

/* mxc__executor_bind, but with alloc_grads != 0 a NULL gradient slot of
 * an argument with a request gets a zero array made by the executor, of
 * the storage type "__grad_stype__" gives, else the one storage inference
 * gives its gradient entry (dense where no gradient reaches). */
int mxc__executor_bind_alloc(const mxc__symbol *sym, mxc__device dev,
                             mxc__ndarray *const *args, int n_args,
                             mxc__ndarray *const *grads, const int *reqs,
                             mxc__ndarray *const *aux, int n_aux, int flags,
                             int alloc_grads, const char *fn,
                             mxc__executor **out);

/* Name under which a node's output is reported ("fc1_output",
 * "bn1_mean", "fc1_backward_output0"); written into buf. */
const char *mxc__executor_entry_name(const mxc__executor *ex, int entry,
                                     char *buf, size_t len);

#endif /* MXC_CORE_EXEC_EXECUTOR_H_ */
