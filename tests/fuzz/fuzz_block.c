/* Layers and training loops as a hostile caller would use them: a block
 * kind chosen by index (or a fuzzed name) with fuzzed configuration keys
 * and values (mostly the
 * kinds' own keys, values from a table of edge cases), a fuzzed
 * initializer, a forward pass on one or two inputs of small shapes (zero
 * extents included) filled with input bytes, optionally recorded and
 * differentiated and followed by an optimizer step, the block hybridized
 * behind a user block (traced), a parameter file
 * made of input bytes loaded into the block, and a fit with fuzzed keys
 * loading that file as a training checkpoint. Every failure must be an
 * error code; outputs and gradients are read back so that an undersized
 * allocation is caught by ASan. */
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

#define STR_MAX 24
#define MAX_KV 5

static const char *const k_kinds[] = {
    "dense", "conv1d", "conv2d", "maxpool1d", "maxpool2d", "avgpool2d",
    "global_maxpool2d", "global_avgpool1d", "batchnorm", "layernorm",
    "dropout", "activation", "flatten", "embedding", "lstm", "gru",
    "sequential",
    "softmax_cross_entropy_loss", "l2_loss", "l1_loss",
    "sigmoid_binary_cross_entropy_loss"};
#define N_KINDS ((uint32_t)(sizeof k_kinds / sizeof k_kinds[0]))

static const char *const k_keys[] = {
    "units", "activation", "use_bias", "flatten", "in_units", "channels",
    "kernel_size", "strides", "padding", "dilation", "groups", "in_channels",
    "pool_size", "ceil_mode", "count_include_pad", "axis", "epsilon",
    "momentum", "scale", "center", "use_global_stats", "rate", "axes",
    "input_dim", "output_dim", "sparse_label", "from_logits", "weight",
    "weight_initializer", "bias_initializer", "from_sigmoid", "hidden_size",
    "num_layers", "layout", "bidirectional", "dropout", "input_size"};
#define N_KEYS ((uint32_t)(sizeof k_keys / sizeof k_keys[0]))

static const char *const k_values[] = {
    "0", "1", "-1", "2", "3", "4", "7", "2147483647", "2147483648",
    "-2147483649", "9223372036854775807", "0.5", "1e30", "nan", "inf", "",
    "()", "(1,)", "(2,3)", "(1,1)", "(0,0)", "(-1,2)", "(2,2,2)", "[1,2]",
    "(1,,2)", "relu", "tanh", "swish", "None", "true", "False", "zeros",
    "ones", "xavier", "msra", "nonsense", "TNC", "NTC"};
#define N_VALUES ((uint32_t)(sizeof k_values / sizeof k_values[0]))

static const char *const k_inits[] = {"uniform", "normal", "xavier", "msra",
                                      "zeros", "constant", "bogus"};
#define N_INITS ((uint32_t)(sizeof k_inits / sizeof k_inits[0]))

static const char *const k_opts[] = {"sgd_update", "sgd_mom_update",
                                     "adam_update", "rmsprop_update",
                                     "relu", "ftrl_update"};
#define N_OPTS ((uint32_t)(sizeof k_opts / sizeof k_opts[0]))

static mxc_block make_block(fz_bytes *b) {
  char name[STR_MAX + 1], kbuf[MAX_KV][STR_MAX + 1];
  const char *kind = fz_u8(b) < 250 ? k_kinds[fz_pick(b, N_KINDS)]
                                    : fz_str(b, name, STR_MAX);
  const char *keys[MAX_KV], *vals[MAX_KV];
  int n = (int)fz_pick(b, MAX_KV + 1);
  for (int i = 0; i < n; ++i) {
    keys[i] = fz_u8(b) < 250 ? k_keys[fz_pick(b, N_KEYS)]
                             : fz_str(b, kbuf[i], STR_MAX);
    vals[i] = k_values[fz_pick(b, N_VALUES)];
  }
  mxc_block blk = NULL;
  if (mxc_block_create(kind, NULL, keys, vals, n, &blk) != MXC_OK) return NULL;
  return blk;
}

static mxc_ndarray make_input(fz_bytes *b) {
  int ndim = 1 + (int)fz_pick(b, 4);
  int64_t dims[4];
  for (int i = 0; i < ndim; ++i) dims[i] = fz_pick(b, 6);
  mxc_ndarray a = NULL;
  if (mxc_ndarray_create(dims, ndim, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                         &a) != MXC_OK) {
    return NULL;
  }
  int64_t size = 0;
  mxc_ndarray_size(a, &size);
  float v[1296];
  for (int64_t i = 0; i < size && i < 1296; ++i) {
    v[i] = (float)(int8_t)fz_u8(b) / 16.0f;
  }
  mxc_ndarray_copy_from_host(a, v, (size_t)size * sizeof(float));
  return a;
}

/* Records a forward pass, differentiates it and takes an optimizer step. */
static void train_step(mxc_block blk, fz_bytes *b, int n_in, mxc_ndarray *in) {
  mxc_autograd_set_recording(1, NULL);
  mxc_ndarray y = NULL;
  int rc = mxc_block_forward(blk, n_in, in, &y);
  mxc_autograd_set_recording(0, NULL);
  if (rc != MXC_OK) return;
  if (mxc_autograd_backward(1, &y, NULL, 0) == MXC_OK) {
    mxc_optimizer opt = NULL;
    const char *k[] = {"lr"}, *v[] = {k_values[fz_pick(b, N_VALUES)]};
    if (mxc_optimizer_create(blk, k_opts[fz_pick(b, N_OPTS)], k, v, 1,
                             &opt) == MXC_OK) {
      mxc_optimizer_step(opt, 1 + fz_pick(b, 4));
      mxc_optimizer_free(opt);
    }
  }
  fz_touch(y);
  mxc_ndarray_free(y);
}

static const char *const k_fit_keys[] = {
    "epochs", "progress", "lr_scheduler", "factor", "step", "steps",
    "max_update", "final_lr", "early_stopping_patience", "monitor",
    "early_stopping_min_delta", "checkpoint_period", "shard_by_rank"};
#define N_FIT_KEYS ((uint32_t)(sizeof k_fit_keys / sizeof k_fit_keys[0]))

/* A fit of blk with fuzzed keys loading the file as a checkpoint. */
static void fit_checkpoint(mxc_block blk, fz_bytes *b, const char *path) {
  mxc_block loss = NULL;
  mxc_optimizer opt = NULL;
  mxc_fit fit = NULL;
  const char *keys[3], *vals[3];
  int n = (int)fz_pick(b, 4);
  for (int i = 0; i < n; ++i) {
    keys[i] = k_fit_keys[fz_pick(b, N_FIT_KEYS)];
    vals[i] = k_values[fz_pick(b, N_VALUES)];
  }
  if (mxc_block_create("l2_loss", NULL, NULL, NULL, 0, &loss) == MXC_OK &&
      mxc_optimizer_create(blk, k_opts[fz_pick(b, N_OPTS)], NULL, NULL, 0,
                           &opt) == MXC_OK &&
      mxc_fit_create(blk, loss, opt, keys, vals, n, &fit) == MXC_OK) {
    mxc_fit_load_checkpoint(fit, path);
    double v = 0;
    mxc_fit_value(fit, "epoch", &v);
  }
  mxc_fit_free(fit);
  mxc_optimizer_free(opt);
  mxc_block_free(loss);
}

static int run_child(void *user, mxc_block self, int n_in,
                     const mxc_ndarray *in, mxc_ndarray *out) {
  (void)user;
  mxc_block c = NULL;
  int rc = mxc_block_child(self, 0, &c);
  if (rc == MXC_OK) rc = mxc_block_forward(c, n_in, in, out);
  mxc_block_free(c);
  return rc;
}

/* blk behind a hybridized user block: the first forward pass makes the
 * parameters, the second traces the user function and binds the graph. */
static void hybrid_pass(mxc_block blk, int n_in, mxc_ndarray *in) {
  mxc_block u = NULL;
  if (mxc_block_create_user(NULL, run_child, NULL, NULL, &u) != MXC_OK) return;
  if (mxc_block_add(u, blk) == MXC_OK && mxc_block_hybridize(u, 1) == MXC_OK) {
    for (int i = 0; i < 2; ++i) {
      mxc_ndarray y = NULL;
      if (mxc_block_forward(u, n_in, in, &y) == MXC_OK) fz_touch(y);
      mxc_ndarray_free(y);
    }
  }
  mxc_block_free(u);
}

static void read_params(mxc_block blk) {
  int n = 0;
  mxc_block_num_params(blk, &n);
  for (int i = 0; i < n; ++i) {
    mxc_ndarray p = NULL, g = NULL;
    if (mxc_block_param(blk, i, &p) == MXC_OK) fz_touch(p);
    if (mxc_block_param_grad(blk, i, &g) == MXC_OK) fz_touch(g);
    mxc_ndarray_free(p);
    mxc_ndarray_free(g);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  fz_bytes all = {data, size};
  fz_bytes b = fz_split(&all); /* the rest is a parameter file */
  mxc_block blk = make_block(&b);
  if (!blk) return 0;
  mxc_block_initialize(blk, k_inits[fz_pick(&b, N_INITS)], NULL, NULL, 0,
                       fz_u8(&b) & 1);
  uint8_t flags = fz_u8(&b);
  mxc_set_training(flags & 1, NULL);
  mxc_ndarray in[2] = {make_input(&b), make_input(&b)};
  int n_in = 1 + (int)((flags >> 1) & 1);
  if (in[0] && in[1]) {
    if (flags & 4) {
      train_step(blk, &b, n_in, in);
    } else {
      mxc_ndarray y = NULL;
      if (mxc_block_forward(blk, n_in, in, &y) == MXC_OK) fz_touch(y);
      mxc_ndarray_free(y);
    }
  }
  if ((flags & 32) && in[0] && in[1]) hybrid_pass(blk, n_in, in);
  if (flags & 8) mxc_block_load_params(blk, fz_file(0, all.p, all.n));
  if (flags & 16) fit_checkpoint(blk, &b, fz_file(0, all.p, all.n));
  read_params(blk);
  mxc_set_training(0, NULL);
  mxc_ndarray_free(in[0]);
  mxc_ndarray_free(in[1]);
  mxc_block_free(blk);
  mxc_wait_all();
  return 0;
}
