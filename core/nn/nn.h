/* Layers (Gluon's model): blocks with named parameters, run imperatively
 * with autograd, and optimizers that update them with the registry's
 * update operators. The internal half of the "Layers" section of mxc.h.
 *
 * A block is a kind (dense, conv2d, batchnorm, sequential, a loss, a user
 * block...) with its configuration strings, its own parameters and its
 * child blocks. Parameters are declared when the block is made, with
 * extents that may be unknown (0) until the first forward pass sees the
 * input (deferred initialization, as in Gluon): the first forward creates
 * each array on the input's device, fills it with its initializer
 * (core/train/init.h) and marks it as an autograd variable with a gradient
 * buffer (request write), so a forward pass recorded with autograd and a
 * backward pass fill every parameter's gradient.
 *
 * Every operator call goes through mxc__imperative_invoke, so it is
 * recorded when the calling thread records; the training flag
 * (core/resource/training.h) selects Dropout's and BatchNorm's training
 * behaviour, as for any operator call.
 *
 * Blocks are reference counted: a parent holds a reference on each child,
 * so a child may be shared and freed by its creator independently.
 * Thread-safety: a block (and the blocks below it) is used by one thread
 * at a time; references may be dropped from any thread. */
#ifndef MXC_CORE_NN_NN_H_
#define MXC_CORE_NN_NN_H_

#include <stdatomic.h>
#include <stdint.h>

#include "core/ndarray/ndarray.h"
#include "core/op/op.h"

typedef struct mxc__block mxc__block;

/* A user block's forward: reads in[0..n_in) and sets *out to a new array
 * (owned by the caller afterwards). Returns MXC_OK or an error code with
 * the thread's message set. */
typedef int (*mxc__block_fn)(void *user, mxc__block *self, int n_in,
                             mxc__ndarray *const *in, mxc__ndarray **out);

/* One parameter. */
typedef struct mxc__nn_param {
  char *name;       /* "<block name>_<what>", e.g. "dense0_weight" */
  mxc__shape shape; /* extents 0 are unknown until the first forward */
  int aux;          /* 1: state the operator updates (no gradient) */
  char *init;       /* initializer method; NULL: the block's default */
  mxc__ndarray *data; /* NULL until the first forward */
  mxc__ndarray *grad; /* NULL for aux states and before initialization */
} mxc__nn_param;

/* An initializer: method and parameter strings (all owned). */
typedef struct mxc__nn_init {
  char *method;
  int n;
  char **keys, **vals;
} mxc__nn_init;

typedef struct mxc__nn_kind mxc__nn_kind;

struct mxc__block {
  atomic_int refs;
  const mxc__nn_kind *kind;
  char *name;
  /* Configuration as given (owned), validated by the kind's setup. */
  int n_cfg;
  char **cfg_keys, **cfg_vals;
  /* The main operator and its parameter strings (owned), from setup. */
  const mxc__op *op;
  int n_op;
  char **op_keys, **op_vals;
  const char *act; /* an activation after the operator, or NULL (static) */
  int n_params;
  mxc__nn_param *params;
  int n_children, cap_children;
  mxc__block **children;
  mxc__nn_init init; /* method NULL until mxc__block_initialize */
  /* Hybridized: forward passes not recorded run through an executor. */
  int hybridize;
  struct mxc__nn_hybrid *hybrid; /* the binding, NULL until used */
  /* User blocks only. */
  mxc__block_fn fn;
  void *user;
  void (*user_free)(void *);
};

/* ---- blocks (core/nn/block.c) ---- */

/* A new block of the built-in kind `kind` ("dense", "conv2d", "sequential",
 * "softmax_cross_entropy_loss", ...; mxc.h lists them and their keys).
 * name: the prefix of its parameters' names (NULL or "": the kind's name
 * and a process-wide count, "dense0", "dense1", ...). Unknown kinds and
 * keys, and values the kind or its operator refuses, are
 * MXC_ERR_INVALID_ARGUMENT naming them. */
int mxc__block_create(const char *kind, const char *name, int n,
                      const char *const *keys, const char *const *vals,
                      mxc__block **out);

/* A user block: fn computes its forward pass (from its children or any
 * operators); user_free(user) runs when the block is destroyed (also when
 * this call fails). */
int mxc__block_create_user(const char *name, mxc__block_fn fn, void *user,
                           void (*user_free)(void *), mxc__block **out);

void mxc__block_retain(mxc__block *b);
void mxc__block_release(mxc__block *b); /* accepts NULL */

/* Appends child (one more reference) to a sequential or user block. */
int mxc__block_add(mxc__block *b, mxc__block *child);

/* The default initializer of every parameter of b and its descendants
 * that has no initializer of its own; arrays already made are refilled
 * (force == 1) or kept (force == 0). */
int mxc__block_initialize(mxc__block *b, const char *method, int n,
                          const char *const *keys, const char *const *vals,
                          int force);

/* Forward pass on in[0..n_in) (the count the kind takes); *out new. */
int mxc__block_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                       mxc__ndarray **out);

/* Every parameter of b and its descendants, depth first (b's own first):
 * *out = a new array of n borrowed pointers (mxc__free it). */
int mxc__block_collect(mxc__block *b, mxc__nn_param ***out, int *n);

/* ---- parameters (core/nn/param.c) ---- */

/* Declares parameter `what` of b with the given extents (0: unknown) and
 * initializer (NULL: the block's default). */
int mxc__nn_param_declare(mxc__block *b, const char *what, int ndim,
                          const int64_t *dims, int aux, const char *init);

/* Makes b's parameter i ready for a forward pass with the given shape:
 * on first use creates, initializes and marks it on `like`'s device;
 * afterwards checks that the shape is the same. */
int mxc__nn_param_ready(mxc__block *b, int i, const mxc__shape *shape,
                        const mxc__ndarray *like);

/* Copies src into p's array, making it (shape and dtype of src, marked
 * for gradients unless auxiliary) when p has none yet. */
int mxc__nn_param_assign(mxc__nn_param *p, const mxc__ndarray *src);

/* Saves / loads every parameter of b by name (mxc__ndarray_save format).
 * Load checks names and shapes of all before copying anything; a
 * parameter not yet made is created from the file's shape. */
int mxc__block_save(mxc__block *b, const char *path);
int mxc__block_load(mxc__block *b, const char *path);

/* ---- export (core/nn/export.c) ---- */

/* The symbol of b on one input "data" (built-in layers and sequential
 * blocks whose parameters are made; MXC_ERR_UNSUPPORTED naming a user
 * block or loss). *out new. */
struct mxc__symbol;
int mxc__block_symbol(mxc__block *b, struct mxc__symbol **out);

/* MXC_OK when b has a symbol (built-in layers and sequential blocks of
 * them), else MXC_ERR_UNSUPPORTED naming the first block that has none. */
int mxc__block_check_symbolic(const mxc__block *b);
/* The first block of b (depth first) without a symbol, or NULL. */
const mxc__block *mxc__block_first_unsymbolic(const mxc__block *b);

/* Writes PREFIX-symbol.json and PREFIX-EEEE.params (epoch >= 0; MXNet's
 * format, "arg:" / "aux:" names) that MXNet and mxc's predictor load:
 * the block's symbol, or for a block holding a user block the graph its
 * hybridized binding traced (mxc__nn_hybrid_symbol). */
int mxc__block_export(mxc__block *b, const char *prefix, int epoch);

/* ---- tracing (core/nn/trace.c) ---- */

/* The graph of b's forward pass on one input like x (input "data",
 * parameters as in export), traced by running the pass once, recorded, in
 * inference mode. MXC_ERR_UNSUPPORTED when the pass used an array that is
 * neither x nor a parameter of b. Parameters must be made. *out new. */
int mxc__nn_trace(mxc__block *b, const mxc__ndarray *x,
                  struct mxc__symbol **out);

/* ---- hybridize (core/nn/hybrid.c) ---- */

typedef struct mxc__nn_hybrid mxc__nn_hybrid;

/* Turns hybridization of b on (MXC_ERR_UNSUPPORTED for losses, which
 * take two inputs) or off; either way drops the current binding. Blocks
 * with a symbol bind it; others (user blocks, containers of one) bind the
 * graph traced from their first hybridized forward pass. */
int mxc__block_hybridize(mxc__block *b, int active);
/* b's graph: its symbol, else a copy of the graph its binding traced;
 * MXC_ERR_UNSUPPORTED naming the block when there is neither (not
 * hybridized, or no hybridized forward pass yet). *out new. */
int mxc__nn_hybrid_symbol(mxc__block *b, struct mxc__symbol **out);
/* 1 when b is hybridized, takes n_in == 1 input and its parameters are
 * made (its graph can be bound). */
int mxc__nn_hybrid_ready(mxc__block *b, int n_in);
/* 1 when b's next forward on n_in inputs goes through its executor:
 * ready and not recording. */
int mxc__nn_hybrid_wanted(mxc__block *b, int n_in);
/* A training step through the executor (fit on a ready block): the
 * training forward pass on x with gradients bound to the parameters'
 * gradient buffers; *out = a new copy of the output marked as an autograd
 * variable (the loss is recorded on it). After the loss's backward pass
 * filled out's gradient, mxc__nn_hybrid_backward runs the executor's
 * backward pass with it, writing every parameter's gradient. */
int mxc__nn_hybrid_train_forward(mxc__block *b, const mxc__ndarray *x,
                                 mxc__ndarray **out);
int mxc__nn_hybrid_backward(mxc__block *b, const mxc__ndarray *out);
/* The forward pass through the executor, bound (again) if needed. */
int mxc__nn_hybrid_forward(mxc__block *b, const mxc__ndarray *x,
                           mxc__ndarray **out);
void mxc__nn_hybrid_free(mxc__nn_hybrid *h); /* accepts NULL */

/* ---- operator calls (core/nn/call.c) ---- */

/* Calls the operator `op` (by name) on in[0..n_in) with n parameter
 * strings; *out = its first output, new. */
int mxc__nn_call(const char *op, int n, const char *const *keys,
                 const char *const *vals, int n_in, mxc__ndarray *const *in,
                 mxc__ndarray **out);

/* The same with a found operator. */
int mxc__nn_call_op(const mxc__op *op, int n, const char *const *keys,
                    const char *const *vals, int n_in,
                    mxc__ndarray *const *in, mxc__ndarray **out);

/* ---- optimizers (core/nn/optim.c) ---- */

typedef struct mxc__optimizer mxc__optimizer;

/* An optimizer updating the parameters of b with the registry's update
 * operator update_op (sgd_update, sgd_mom_update, adam_update, ...): its
 * inputs after (weight, grad) are per-parameter states, made as zeros at
 * the first step. The parameter strings are the operator's (lr, wd,
 * momentum, ...); rescale_grad is multiplied by 1 / batch_size at each
 * step. Holds a reference on b. */
int mxc__optimizer_create(mxc__block *b, const char *update_op, int n,
                          const char *const *keys, const char *const *vals,
                          mxc__optimizer **out);
/* Optimizers are reference counted (a fit holds one): free drops one
 * reference. */
void mxc__optimizer_retain(mxc__optimizer *o);
void mxc__optimizer_free(mxc__optimizer *o); /* accepts NULL */

/* One update of every parameter with a gradient. */
int mxc__optimizer_step(mxc__optimizer *o, int64_t batch_size);

int mxc__optimizer_set_lr(mxc__optimizer *o, double lr);
double mxc__optimizer_lr(const mxc__optimizer *o);

/* Makes the states now (parameters must be made): checkpoints load into
 * them. */
int mxc__optimizer_prepare(mxc__optimizer *o);
int mxc__optimizer_n_states(const mxc__optimizer *o);
/* State k of trainable parameter i (in mxc__block_collect order, aux
 * states left out), borrowed; NULL before the first step / prepare. */
mxc__ndarray *mxc__optimizer_state(const mxc__optimizer *o, int i, int k);
mxc__block *mxc__optimizer_block(const mxc__optimizer *o); /* borrowed */

#endif /* MXC_CORE_NN_NN_H_ */
