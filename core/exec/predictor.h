/* Predictors: inference from an exported model (mxc.h, "Predictors").
 *
 * A predictor is an executor bound for inference (no gradients) over a
 * set of weights that several predictors share. The weights (the symbol
 * with the chosen outputs, and its parameter arrays on the device) are
 * immutable once made and reference counted, so predictors made from
 * them by clone or reshape may live and run on different threads: each
 * owns its executor, input arrays and outputs, and only reads the shared
 * arrays (the engine orders those reads like any other).
 *
 * Binding (mxc__predictor_new): shapes are inferred from the given input
 * shapes and the parameters' shapes. Every argument of the symbol is then
 * an input (a new zero array of the given shape and dtype), a parameter
 * (the shared array), or, when its name ends in "label" (MXNet's loss
 * heads, which inference does not read), a zero float32 array; any other
 * argument, and any auxiliary state missing from the parameters, is
 * MXC_ERR_NOT_FOUND naming it. Parameters the symbol does not use are
 * ignored (a checkpoint may hold more than the chosen outputs need).
 *
 * Thread-safety: one predictor must not be used by two threads at once;
 * the weights may be shared by any number of predictors on any threads. */
#ifndef MXC_CORE_EXEC_PREDICTOR_H_
#define MXC_CORE_EXEC_PREDICTOR_H_

#include <stddef.h>

#include "core/base/device.h"
#include "core/base/shape.h"
#include "core/exec/executor.h"
#include "core/graph/symbol.h"
#include "core/ndarray/io.h"

typedef struct mxc__pred_weights mxc__pred_weights;

/* What to bind: n inputs by name with their shapes and dtypes (dtypes
 * NULL: float32). */
typedef struct mxc__pred_inputs {
  int n;
  const char *const *names;
  const mxc__shape *shapes;
  const int *dtypes;
} mxc__pred_inputs;

typedef struct mxc__predictor {
  mxc__pred_weights *w; /* one reference */
  int n_inputs;
  char **input_names;   /* owned */
  mxc__shape *input_shapes;
  int *input_dtypes;
  mxc__ndarray **inputs; /* owned views of the executor's input arrays */
  mxc__executor *ex;
} mxc__predictor;

/* Weights from MXNet JSON text and a parameter list in memory (MXNet's
 * .params format or mxc's array format, told apart by the first bytes;
 * names with "arg:"/"aux:" prefixes or none), on device dev. n_out output
 * names choose the outputs (each an output of the graph or of any inner
 * node, "fc1_output" or "fc1"); n_out == 0: the symbol's outputs. */
int mxc__pred_weights_from_bytes(const char *json, const void *params,
                                 size_t n_params, mxc__device dev, int n_out,
                                 const char *const *out_names,
                                 mxc__pred_weights **out);

/* The same from a checkpoint (mxc_checkpoint_load's files). */
int mxc__pred_weights_from_checkpoint(const char *prefix, int epoch,
                                      mxc__device dev, int n_out,
                                      const char *const *out_names,
                                      mxc__pred_weights **out);

void mxc__pred_weights_release(mxc__pred_weights *w); /* accepts NULL */

/* A new predictor over w (which gains a reference) for the inputs in. */
int mxc__predictor_new(mxc__pred_weights *w, const mxc__pred_inputs *in,
                       const char *fn, mxc__predictor **out);

/* A new predictor sharing p's weights, with p's inputs except the n named
 * ones, which take shapes[i] (n == 0: a clone). */
int mxc__predictor_reshape(const mxc__predictor *p, int n,
                           const char *const *names, const mxc__shape *shapes,
                           mxc__predictor **out);

void mxc__predictor_free(mxc__predictor *p); /* accepts NULL */

/* Copies nbytes (exactly the input's size) from host memory into the
 * named input; waits until done. */
int mxc__predictor_set_input(mxc__predictor *p, const char *name,
                             const void *data, size_t nbytes);

/* Copies arr (same shape and dtype, dense) into the named input;
 * asynchronous, ordered by the engine before the next forward. */
int mxc__predictor_set_input_array(mxc__predictor *p, const char *name,
                                   const mxc__ndarray *arr);

int mxc__predictor_forward(mxc__predictor *p);

/* *out = output index (0 <= index < p->ex->n_outputs), borrowed. */
int mxc__predictor_output(const mxc__predictor *p, int index, const char *fn,
                          const mxc__ndarray **out);

/* Copies output index into host memory of exactly its byte size, after
 * waiting for the forward that writes it. */
int mxc__predictor_get_output(const mxc__predictor *p, int index, void *data,
                              size_t nbytes);

#endif /* MXC_CORE_EXEC_PREDICTOR_H_ */
