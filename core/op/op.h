/* Operator descriptors: one per operator, used by the imperative path
 * (core/op/invoke.c) and by the symbolic executor (core/graph).
 *
 * Kernels see plain blobs (pointer, shape, dtype, device) and never touch
 * the engine; core/op/invoke.c does the scheduling. Sparse kernels are the one
 * exception: they see arrays (see "Storage types and dispatch" below). */
#ifndef MXC_CORE_OP_OP_H_
#define MXC_CORE_OP_OP_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/device.h"
#include "core/base/shape.h"
#include "core/resource/random.h"
#include "core/op/param.h"

/* The most inputs or outputs one operator call may have. Not a design
 * cap: operators take as many as memory allows (MXNet has no limit, and
 * unrolled sequence models concatenate or split hundreds of arrays). It
 * is a sanity bound against absurd counts (a corrupt num_args, a negative
 * count cast to unsigned) and keeps every byte size computed from a count
 * far from overflowing. Every place that validates a count uses it. */
#define MXC__OP_MAX_ARITY (1 << 20)

/* Output write modes. */
typedef enum mxc__req {
  MXC__REQ_NULL = 0,    /* do not write this output */
  MXC__REQ_WRITE = 1,   /* overwrite */
  MXC__REQ_INPLACE = 2, /* overwrite; the output shares memory with an
                           input (declared in inplace pairs) */
  MXC__REQ_ADD = 3      /* accumulate: out += result (gradients) */
} mxc__req;

/* How a dense array's elements lie in memory (mxc__blob.fmt).
 *
 * PLAIN is row-major over the shape: what every kernel reads and every
 * user sees. CHANNELS_LAST applies to arrays of 3 to 5 axes (N, C,
 * spatial...): the same elements and bytes, stored as (N, spatial..., C),
 * the layout oneDNN's fastest CPU convolutions read and write.
 * CHANNELS_LAST_BF16 is that order with each element stored as bfloat16
 * (the array's dtype stays float32; the values fill the first half of its
 * bytes): what MXC_BIND_BF16 keeps between oneDNN nodes. Only an
 * executor's internal values are ever other than PLAIN, chosen at bind
 * (core/exec/format.c) for values whose producer and every reader run a
 * kernel that says it takes that argument so (mxc__kernel.fmt_ok); users,
 * monitors and every other kernel see PLAIN. */
enum {
  MXC__FMT_PLAIN = 0,
  MXC__FMT_CHANNELS_LAST = 1,
  MXC__FMT_CHANNELS_LAST_BF16 = 2
};

/* What a kernel sees of an array. */
typedef struct mxc__blob {
  void *ptr;
  mxc__shape shape;
  int dtype;
  mxc__device dev;
  int fmt; /* MXC__FMT_*; PLAIN unless the kernel's fmt_ok allowed more */
} mxc__blob;

/* Resources an operator asks for (bit flags). */
enum {
  MXC__RES_TEMP = 1,   /* temporary workspace, via mxc__opctx_temp */
  MXC__RES_RANDOM = 2  /* random numbers, via ctx->rng */
};

/* Everything a kernel gets besides its arrays. */
typedef struct mxc__opctx {
  int is_train;
  mxc__device dev;
  /* MXC__RES_RANDOM: counters reserved at push time for this call. Kernels
   * number the values they draw 0.. and take value i from the slice, so
   * results do not depend on threading. */
  mxc__rng_slice rng;
  struct mxc__temp_space *temp; /* MXC__RES_TEMP */
  int num_threads;              /* threads the kernel may use */
  /* The device's stream (a GPU backend's ctx_prepare sets it, see
   * core/op/backend.h); NULL on the CPU. */
  void *stream;
  /* Per input: the write version of its array when the call was pushed
   * (mxc__ndarray_version; 0 unknown), so that a kernel may cache what it
   * derives from an input (oneDNN's reordered weights) and notice when
   * the data changed. NULL: no versions known (direct kernel calls). */
  const uint64_t *in_versions;
} mxc__opctx;

/* Temporary workspace for this call (MXC__RES_TEMP): valid until the
 * kernel returns. */
int mxc__opctx_temp(const mxc__opctx *ctx, size_t nbytes, void **out);

struct mxc__node;
struct mxc__entry;
typedef struct mxc__op mxc__op;

/* Shape inference. in[0..n_in) and out[0..n_out) hold known shapes or
 * ndim == -1 for unknown. The function fills what it can deduce (outputs
 * from inputs, and, for operators with parameters, the shapes of weights
 * from data, so that graphs can be bound from input shapes only) and
 * returns MXC_ERR_SHAPE with a message naming the inputs and shapes when
 * they are inconsistent. It may leave shapes unknown when it lacks
 * information (the graph pass calls again). */
typedef int (*mxc__infer_shape_fn)(const mxc__op *op, const void *param,
                                   mxc__shape *in, int n_in, mxc__shape *out,
                                   int n_out);

/* Type inference: same protocol with dtypes (-1 unknown); MXC_ERR_DTYPE on
 * conflict. */
typedef int (*mxc__infer_type_fn)(const mxc__op *op, const void *param,
                                  int *in, int n_in, int *out, int n_out);

/* Dense compute. op is the descriptor being run (families share compute
 * functions and pick their variant from it). req[i] is the write mode of
 * out[i]. Returns MXC_OK or an error (with a message naming op). */
typedef int (*mxc__compute_fn)(const mxc__op *op, const mxc__opctx *ctx,
                               const void *param,
                               const mxc__blob *in, int n_in,
                               const mxc__blob *out, int n_out,
                               const mxc__req *req);

/* ---- Storage types and dispatch ----
 *
 * An operator without infer_stype is dense only: `compute` runs on blobs;
 * sparse inputs or given outputs go through invoke's storage fallback
 * (core/op/invoke.h).
 *
 * infer_stype decides, from the storage types of the inputs (in[i], all
 * known) and of the given outputs (out[i], or -1 when invoke creates the
 * output), the storage type of every output and which kernel runs:
 * *dispatch = MXC__DISPATCH_DENSE runs `compute` (every input and output
 * must then be dense), MXC__DISPATCH_SPARSE runs `compute_sparse`. It
 * returns MXC_ERR_STYPE naming the operator for combinations it does not
 * support (invoke then falls back to `compute` through dense temporaries,
 * see core/op/invoke.h).
 *
 * compute_sparse gets the arrays themselves, as view structs valid during
 * the call, because the sizes of sparse data are known only at run time:
 *  - dense arrays among them are allocated; mxc__ndarray_ptr gives data;
 *  - sparse inputs are read through mxc__sparse_data/aux/nnz, after
 *    mxc__sparse_require_valid (arrays from host buffers are unchecked);
 *  - a sparse output is (re)allocated by the kernel with mxc__sparse_alloc
 *    for the nnz it computes, filled completely, then marked with
 *    mxc__sparse_set_valid. Its previous blocks are freed by that call, so
 *    a sparse output never shares storage with an input (no in-place pairs)
 *    and its write mode is MXC__REQ_WRITE or MXC__REQ_NULL only (invoke
 *    refuses others).
 * The call runs under the engine with read access to every input's
 * variable and write access to every output's; the kernel must not push,
 * wait, or keep pointers past its return. Invoke creates missing sparse
 * outputs empty with int64 indices. */
enum { MXC__DISPATCH_DENSE = 0, MXC__DISPATCH_SPARSE = 1 };

typedef int (*mxc__infer_stype_fn)(const mxc__op *op, const void *param,
                                   const int *in, int n_in, int *out,
                                   int n_out, int *dispatch);

/* Arrays by struct tag: this header stays includable from C++ tests,
 * which cannot include core/ndarray/ndarray.h (C11 atomics). */
struct mxc__ndarray;
typedef int (*mxc__compute_sparse_fn)(const mxc__op *op,
                                      const mxc__opctx *ctx,
                                      const void *param,
                                      const struct mxc__ndarray *in,
                                      int n_in,
                                      const struct mxc__ndarray *out,
                                      int n_out, const mxc__req *req);

/* Builds the gradient: given the forward node and entries for the output
 * gradients (one per output), sets igrad[i] for each input to a new entry
 * computing d(loss)/d(input i), or to {NULL, 0} when the input gets no
 * gradient (integer inputs, labels) or a zero one. Created nodes are owned
 * by the entries (one reference each). See core/op/node.h. */
typedef int (*mxc__gradient_fn)(const struct mxc__node *fwd,
                                const struct mxc__entry *ograd,
                                struct mxc__entry *igrad);

/* Counts that depend on parameters (variadic operators, optional
 * inputs such as no_bias). */
typedef int (*mxc__count_fn)(const void *param);
/* Name of input/output i for these parameters (static string). */
typedef const char *(*mxc__name_fn)(const void *param, int i);

struct mxc__op {
  const char *name;
  const char *const *aliases; /* NULL-terminated, or NULL */
  const char *doc;

  const mxc__param_def *params;
  int n_params;
  size_t param_size; /* bytes of the parameter struct */
  /* Cross-field checks after parsing; NULL if none. */
  int (*param_check)(const char *op_name, void *param);
  /* Parses the key/value strings itself instead of mxc__param_parse
   * with `params` (which then only documents them): for Custom, whose
   * keys besides op_type are free-form and go to user callbacks. Same
   * contract as mxc__param_parse (out is param_size zeroed bytes; keys
   * starting with "__" are graph attributes to ignore); NULL for every
   * other operator. */
  int (*parse_params)(const mxc__op *op, const char *const *keys,
                      const char *const *vals, int n, void *out);

  /* Inputs: fixed count, or num_inputs(param) when set. Names: fixed list
   * (input_names) or input_name(param, i). Auxiliary states (BatchNorm's
   * moving mean/var) are the last n_aux inputs: they are read and updated
   * in place, and never get gradients. */
  int n_inputs;
  mxc__count_fn num_inputs;
  const char *const *input_names;
  mxc__name_fn input_name;
  int n_aux;

  int n_outputs;
  mxc__count_fn num_outputs;
  /* Outputs a user sees (e.g. BatchNorm computes mean/var as hidden extra
   * outputs); 0 means all. */
  int n_visible_outputs;
  /* Visible outputs when the count depends on parameters (BatchNorm's
   * output_mean_var shows mean and var, RNN's state_outputs hy and cy);
   * NULL: n_visible_outputs. It
   * decides what callers see (invoke's output count, a symbol's outputs).
   * Read through mxc__op_num_visible_outputs. */
  mxc__count_fn num_visible_outputs;
  /* Outputs whose gradients the gradient builders gather and hand to the
   * backward operator: a prefix of the visible ones; 0 means all visible
   * (RNN's hy and cy have gradients). BatchNorm and LayerNorm set 1: the
   * mean and var that output_mean_var shows get no gradient, as in MXNet.
   * Read through mxc__op_num_grad_outputs. */
  int n_grad_outputs;
  const char *const *output_names;

  mxc__infer_shape_fn infer_shape;
  mxc__infer_type_fn infer_type; /* NULL: all inputs/outputs share a dtype */
  mxc__compute_fn compute;
  /* Both NULL for dense-only operators; see "Storage types and
   * dispatch". */
  mxc__infer_stype_fn infer_stype;
  mxc__compute_sparse_fn compute_sparse;

  mxc__gradient_fn gradient; /* NULL: not differentiable */

  /* In-place pairs {input, output}: output may reuse input's memory. */
  const int (*inplace)[2];
  int n_inplace;
  /* One more pair whose input depends on the parameters (NULL: none):
   * the input that output `out` may reuse, or -1. The planner treats it
   * like the pairs above. */
  int (*inplace_input)(const void *param, int out);

  /* Inputs (by bit) whose values a kernel modifies in place although they
   * are inputs (optimizer states, aux states); invoke treats them as
   * written. The masks below cover inputs 0..31 only, by design: operators
   * that mutate or keep inputs have few of them, and inputs from 32 on
   * (variadic operators) never have a bit (read them through
   * mxc__op_mutates_input, core/op/arity.h). */
  uint32_t mutate_inputs;

  /* What the gradient reads, so the executor can free the rest early:
   * bit i of backward_uses_inputs = forward input i, of
   * backward_uses_outputs = forward output i. */
  uint32_t backward_uses_inputs;
  uint32_t backward_uses_outputs;

  int resources;  /* MXC__RES_* */
  int hidden;     /* 1 for internal operators (_backward_*), not listed */
  /* 1 for element-wise maps: every input and output has one shape and
   * output element i depends only on the inputs' elements i, the same
   * computation whatever the element order. Such kernels run unchanged
   * on channels-last values whose arguments all share that format (the
   * reference kernel's fmt_ok, registry.c), and _fused_elemwise may fuse
   * the one-output ones (ops/fused/program.c). */
  int elementwise;
};

/* Helpers for descriptors. */
int mxc__op_num_inputs(const mxc__op *op, const void *param);
int mxc__op_num_outputs(const mxc__op *op, const void *param);
/* The outputs a user sees: a prefix of the num_outputs outputs (the rest
 * are hidden ones a gradient reads). */
int mxc__op_num_visible_outputs(const mxc__op *op, const void *param);
/* The outputs whose gradients a backward operator takes (n_grad_outputs). */
int mxc__op_num_grad_outputs(const mxc__op *op, const void *param);
/* Runs op's shape inference (nothing to do without infer_shape) and
 * checks every shape it leaves known, inputs and outputs, against the
 * shape invariant of core/base/shape.h for one-byte elements (array
 * creation checks the byte size for the real dtype). Operators compute
 * extents with checked arithmetic, but a product that is representable
 * extent by extent may still overflow as a whole (tile, Concat, one_hot,
 * a reshape target): this is the one place that catches it, for invoke
 * and for the graph passes alike, so later code (mxc__shape_size, strides,
 * allocation) never sees such a shape. MXC_ERR_SHAPE names the operator
 * and the input or output. */
int mxc__op_infer_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out);
/* Inputs the descriptor declares, for catalogs: the length of its name
 * list or its fixed count; 1 with *variadic = 1 for variadic operators
 * (num_inputs without per-input names). */
int mxc__op_declared_inputs(const mxc__op *op, int *variadic);
const char *mxc__op_input_name(const mxc__op *op, const void *param, int i);

/* ---- registry ---- */

/* The operator with this name or alias, or NULL. Thread-safe; the registry
 * is built on first use and never changes afterwards. */
const mxc__op *mxc__op_find(const char *name);
/* MXC_OK and *out, or MXC_ERR_NOT_FOUND naming the operator. */
int mxc__op_lookup(const char *name, const mxc__op **out);
/* All public (non-hidden) operators, sorted by name. */
int mxc__op_count(void);
const mxc__op *mxc__op_at(int index);
/* 1 when op points at a registered descriptor. */
int mxc__op_is_registered(const mxc__op *op);

/* Parses parameters into a new struct (mxc__free it). */
int mxc__op_parse_params(const mxc__op *op, const char *const *keys,
                         const char *const *vals, int n, void **out);

/* Registration, called by the family registration functions listed in
 * core/op/registry.c. Descriptors must live for the whole process (static).
 * Returns MXC_ERR_INTERNAL on a duplicate name. */
typedef struct mxc__registry mxc__registry;
int mxc__registry_add(mxc__registry *r, const mxc__op *op);

/* Adds `alias` (static) as one more name of the operator registered as
 * `target` earlier, for names a family gives operators of another one
 * (MXNet's legacy names such as _Plus or _MulScalar). MXC_ERR_INTERNAL
 * when target is unknown or alias is taken. */
int mxc__registry_add_alias(mxc__registry *r, const char *alias,
                            const char *target);

/* Attaches sparse kernels to an operator another family registered
 * earlier (the sparse family registers last and gives elemwise_add, dot,
 * sum, ... their sparse paths without touching those families' files).
 * Descriptors stay const: the pair is kept on the operator's reference
 * CPU kernel (core/op/backend.h) and read through mxc__op_infer_stype /
 * mxc__op_compute_sparse, which every caller uses instead of the
 * descriptor fields. Attached functions are
 * consulted only for calls with a sparse input or given output: an
 * all-dense call runs the dense kernel without them, so they must give
 * dense outputs for dense inputs (invoke relies on it). MXC_ERR_INTERNAL
 * when the operator is unknown, already has storage functions, or the
 * table is full. */
int mxc__registry_attach_stype(mxc__registry *r, const char *name,
                               mxc__infer_stype_fn infer_stype,
                               mxc__compute_sparse_fn compute_sparse);

/* Records a build feature a plug-in provides (mxc_feature_name lists
 * them: the linalg family adds "OPENBLAS" when its products go there).
 * name must be static. MXC_ERR_INTERNAL when the table is full. */
int mxc__registry_add_feature(mxc__registry *r, const char *name);
/* 1 when a family or backend added the feature. */
int mxc__op_feature(const char *name);

/* The operator's storage-type functions: its descriptor's own, or those
 * attached with mxc__registry_attach_stype; NULL for dense-only
 * operators. */
mxc__infer_stype_fn mxc__op_infer_stype(const mxc__op *op);
mxc__compute_sparse_fn mxc__op_compute_sparse(const mxc__op *op);

#endif /* MXC_CORE_OP_OP_H_ */
