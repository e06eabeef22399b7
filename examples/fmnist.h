/* fmnist: the two Fashion-MNIST classifiers of examples/train_fashion_mnist
 * (an MLP and LeNet), built, bound, initialized, trained, evaluated and
 * checkpointed through the public C API only (<mxc/mxc.h>). Shared by the
 * example, bench/train and tests/fit so that all three exercise the same
 * code.
 *
 * Errors: every function returning int gives MXC_OK or an MXC_ERR_* code;
 * fm_last_error() then says what failed (the mxc call and
 * mxc_last_error(), or a problem found here such as a checkpoint that does
 * not fit the model). Like an mxc executor, one fm_net must not be used
 * from two threads at once; fm_last_error() is per thread. */
#ifndef MXC_EXAMPLES_FMNIST_H_
#define MXC_EXAMPLES_FMNIST_H_

#include <stdint.h>

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fm_model { FM_MLP = 0, FM_LENET = 1 } fm_model;

/* "mlp" or "lenet" -> *out; MXC_ERR_INVALID_ARGUMENT otherwise. */
int fm_model_parse(const char *name, fm_model *out);
const char *fm_model_name(fm_model model);

/* SGD with momentum (the sgd_mom_update operator). The gradient of
 * SoftmaxOutput is summed over the batch, so the update multiplies it by
 * 1 / batch_size (rescale_grad); clip_gradient < 0 means no clipping. */
typedef struct fm_opt {
  double lr, momentum, wd, clip_gradient;
} fm_opt;

/* Running sums over training batches: cross-entropy, correct predictions
 * and examples seen. */
typedef struct fm_stats {
  double loss_sum;
  int64_t correct, count;
} fm_stats;

/* A bound network: its symbol, executor, parameters, their gradients and
 * momentum buffers. */
typedef struct fm_net fm_net;

/* Builds the model's symbol (inputs "data" and "softmax_label"; output the
 * class probabilities) and binds it for batch_size examples on the CPU.
 * Parameters, gradients and momenta start as zeros: call fm_net_init or
 * fm_net_load next. *out: free with fm_net_free. */
int fm_net_create(fm_model model, int64_t batch_size, fm_net **out);
void fm_net_free(fm_net *net);

/* The data shape the network takes: (batch, 784) for the MLP, (batch, 1,
 * 28, 28) for LeNet; *out_ndim and dims[0..ndim). */
void fm_net_data_shape(const fm_net *net, int *out_ndim, int64_t dims[4]);

/* Seeds mxc's generators with seed and fills the weights with Xavier
 * values (uniform, magnitude 3, averaged fans: scale = sqrt(6 / (fan_in +
 * fan_out))); biases and momenta become zeros. */
int fm_net_init(fm_net *net, uint64_t seed);

/* Data-parallel training through kv (borrowed; it must outlive net's
 * use): the parameters become keys of kv (named as the arguments) and
 * take the first worker's values; every step sums the gradients over the
 * workers (mxc_kvstore_pushpull) before the update, which scales them by
 * 1 / global_batch (the batches of all workers together). Call after
 * fm_net_init or fm_net_load, before training. */
int fm_net_set_kvstore(fm_net *net, mxc_kvstore kv, int64_t global_batch);

/* One training step on a batch: data shaped as fm_net_data_shape gives (or
 * any shape with as many elements), label (batch). Forward, backward,
 * sgd_mom_update of every parameter. With stats non-NULL, also measures
 * the batch's cross-entropy and accuracy from the forward output (this
 * waits for the forward pass only; backward and updates keep running). */
int fm_net_step(fm_net *net, mxc_ndarray data, mxc_ndarray label,
                const fm_opt *opt, fm_stats *stats);

/* Forward pass in inference mode on a batch; adds to *correct the number
 * of the first n_valid rows (the rest is padding) classified right. */
int fm_net_eval(fm_net *net, mxc_ndarray data, mxc_ndarray label,
                int64_t n_valid, int64_t *correct);

/* Parameters, in list_arguments order (data and label excluded):
 * *out_n names and arrays, borrowed from net (valid until fm_net_free). */
void fm_net_params(const fm_net *net, int *out_n, const char *const **names,
                   const mxc_ndarray **arrays);

/* The executor, borrowed (valid until fm_net_free): for monitors, debug
 * strings and memory figures. */
mxc_executor fm_net_executor(const fm_net *net);

/* The network's symbol (with its loss head), borrowed (valid until
 * fm_net_free): for drawing the graph (mxc_symbol_to_dot). */
mxc_symbol fm_net_symbol(const fm_net *net);

/* Checkpoints: one file in the mxc_ndarray_save format holding the
 * parameters as "arg:<name>" (so mxc_executor_load_params reads it like a
 * file of mxc_executor_save_params), the momentum buffers as
 * "mom:<name>" and "progress", an int64 array of n_progress counters of
 * the caller's (the example stores epochs and batches done). Written
 * atomically: a reader sees the old file or the complete new one.
 * fm_net_load copies everything into net and *out_progress (n_progress
 * values, which must match the file's); a file that is missing any
 * parameter or momentum of net, or has other shapes, is an error and
 * leaves net unchanged as far as the checks go (shapes and names are
 * checked before anything is copied). */
int fm_net_save(fm_net *net, const char *path, const int64_t *progress,
                int n_progress);
int fm_net_load(fm_net *net, const char *path, int64_t *out_progress,
                int n_progress);

/* The message of the last failed fm_ call in this thread ("" if none). */
const char *fm_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MXC_EXAMPLES_FMNIST_H_ */
