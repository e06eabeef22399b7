/* fmnist: see fmnist.h. Only the public API is used; memory of this file's
 * own (names, handle arrays) comes from the C library, as in any user
 * program. */
#include "fmnist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------- */

static _Thread_local char g_err[1024];

const char *fm_last_error(void) { return g_err; }

/* Records a problem found here; returns rc. */
static int fail(int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof g_err, fmt, ap);
  va_end(ap);
  return rc;
}

/* Records a failed mxc call (`what`) with mxc's own message; returns rc. */
static int mx_fail(int rc, const char *what) {
  return fail(rc, "%s failed: %s: %s", what, mxc_error_name(rc),
              mxc_last_error());
}

/* Runs an mxc call; on failure records it and jumps to `done` with rc set.
 * Functions using it declare `int rc = MXC_OK;` and a `done:` label that
 * releases what they hold. */
#define MX(call)                       \
  do {                                 \
    rc = (call);                       \
    if (rc != MXC_OK) {                \
      mx_fail(rc, #call);              \
      goto done;                       \
    }                                  \
  } while (0)

/* As MX for functions with nothing to release. */
#define MX_RET(call)                          \
  do {                                        \
    int rc_ = (call);                         \
    if (rc_ != MXC_OK) return mx_fail(rc_, #call); \
  } while (0)

/* ---- the network ---------------------------------------------------------- */

#define DATA_NAME "data"
#define LABEL_NAME "softmax_label"

struct fm_net {
  fm_model model;
  int64_t batch;
  int data_ndim;
  int64_t data_dims[4];
  mxc_symbol sym;
  mxc_executor ex;
  mxc_ndarray data, label, out; /* the executor's input and output arrays */
  mxc_op sgd;
  int n_params;
  char **names;           /* parameter names (arguments but data/label) */
  mxc_ndarray *weights;   /* the executor's argument arrays */
  mxc_ndarray *grads;     /* their gradients */
  mxc_ndarray *moms;      /* momentum buffers, owned here */
  /* Data parallelism (fm_net_set_kvstore): gradients are summed over the
   * store's workers before each update, which scales them by 1 /
   * global_batch. kv NULL: alone, global_batch = batch. */
  mxc_kvstore kv;
  int64_t global_batch;
};

int fm_model_parse(const char *name, fm_model *out) {
  if (name != NULL && strcmp(name, "mlp") == 0) {
    *out = FM_MLP;
  } else if (name != NULL && strcmp(name, "lenet") == 0) {
    *out = FM_LENET;
  } else {
    return fail(MXC_ERR_INVALID_ARGUMENT,
                "unknown model '%s'; expected 'mlp' or 'lenet'",
                name ? name : "(null)");
  }
  return MXC_OK;
}

const char *fm_model_name(fm_model model) {
  return model == FM_MLP ? "mlp" : "lenet";
}

void fm_net_data_shape(const fm_net *net, int *out_ndim, int64_t dims[4]) {
  *out_ndim = net->data_ndim;
  memcpy(dims, net->data_dims, sizeof net->data_dims);
}

void fm_net_params(const fm_net *net, int *out_n, const char *const **names,
                   const mxc_ndarray **arrays) {
  *out_n = net->n_params;
  *names = (const char *const *)net->names;
  *arrays = net->weights;
}

mxc_executor fm_net_executor(const fm_net *net) { return net->ex; }

mxc_symbol fm_net_symbol(const fm_net *net) { return net->sym; }

/* ---- building the symbols ------------------------------------------------- */

/* *cur = op(*cur [, extra]) named `name`, with parameters kv (n_kv
 * key/value pairs, flattened). The operator's other inputs (weights,
 * biases) become variables "<name>_<input>". Consumes *cur: on success it
 * is freed and replaced; on failure it is left for the caller to free. */
static int apply(const char *op_name, const char *name,
                 const char *const *kv, int n_kv, mxc_symbol *cur,
                 mxc_symbol extra) {
  const char *keys[8], *vals[8];
  for (int i = 0; i < n_kv; ++i) {
    keys[i] = kv[2 * i];
    vals[i] = kv[2 * i + 1];
  }
  mxc_op op = NULL;
  MX_RET(mxc_op_find(op_name, &op));
  mxc_symbol in[2] = {*cur, extra};
  mxc_symbol next = NULL;
  int rc = mxc_symbol_create(op, keys, vals, n_kv, name, NULL, in,
                             extra ? 2 : 1, &next);
  if (rc != MXC_OK) {
    return fail(rc, "mxc_symbol_create(%s '%s') failed: %s: %s", op_name,
                name, mxc_error_name(rc), mxc_last_error());
  }
  mxc_symbol_free(*cur);
  *cur = next;
  return MXC_OK;
}

static int fc(const char *name, const char *hidden, mxc_symbol *cur) {
  const char *kv[] = {"num_hidden", hidden};
  return apply("FullyConnected", name, kv, 1, cur, NULL);
}

static int act(const char *name, const char *type, mxc_symbol *cur) {
  const char *kv[] = {"act_type", type};
  return apply("Activation", name, kv, 1, cur, NULL);
}

static int conv(const char *name, const char *filters, mxc_symbol *cur) {
  const char *kv[] = {"kernel", "(5,5)", "num_filter", filters};
  return apply("Convolution", name, kv, 2, cur, NULL);
}

static int maxpool(const char *name, mxc_symbol *cur) {
  const char *kv[] = {"pool_type", "max", "kernel", "(2,2)", "stride", "(2,2)"};
  return apply("Pooling", name, kv, 3, cur, NULL);
}

/* The layers between data and the 10 class scores. */
static int body(fm_model model, mxc_symbol *cur) {
  int rc = MXC_OK;
  if (model == FM_MLP) {
    if (rc == MXC_OK) rc = fc("fc1", "512", cur);
    if (rc == MXC_OK) rc = act("relu1", "relu", cur);
    if (rc == MXC_OK) rc = fc("fc2", "256", cur);
    if (rc == MXC_OK) rc = act("relu2", "relu", cur);
    if (rc == MXC_OK) rc = fc("fc3", "10", cur);
    return rc;
  }
  if (rc == MXC_OK) rc = conv("conv1", "20", cur);
  if (rc == MXC_OK) rc = act("tanh1", "tanh", cur);
  if (rc == MXC_OK) rc = maxpool("pool1", cur);
  if (rc == MXC_OK) rc = conv("conv2", "50", cur);
  if (rc == MXC_OK) rc = act("tanh2", "tanh", cur);
  if (rc == MXC_OK) rc = maxpool("pool2", cur);
  if (rc == MXC_OK) rc = apply("Flatten", "flatten", NULL, 0, cur, NULL);
  if (rc == MXC_OK) rc = fc("fc1", "500", cur);
  if (rc == MXC_OK) rc = act("tanh3", "tanh", cur);
  if (rc == MXC_OK) rc = fc("fc2", "10", cur);
  return rc;
}

/* The whole network: body, then SoftmaxOutput against the label. */
static int build_symbol(fm_model model, mxc_symbol *out) {
  int rc = MXC_OK;
  mxc_symbol cur = NULL, label = NULL;
  MX(mxc_symbol_variable(DATA_NAME, &cur));
  MX(mxc_symbol_variable(LABEL_NAME, &label));
  rc = body(model, &cur);
  if (rc == MXC_OK) rc = apply("SoftmaxOutput", "softmax", NULL, 0, &cur, label);
  if (rc == MXC_OK) {
    *out = cur;
    cur = NULL;
  }
done:
  mxc_symbol_free(cur);
  mxc_symbol_free(label);
  return rc;
}

/* ---- binding -------------------------------------------------------------- */

/* Finds sgd_mom_update and checks that it takes every parameter fm_net_step
 * passes, so a renamed parameter is reported here rather than as a
 * confusing failure in the middle of training. */
static int find_sgd(mxc_op *out) {
  static const char *const wanted[] = {"lr", "momentum", "wd", "rescale_grad",
                                       "clip_gradient"};
  mxc_op op = NULL;
  int n = 0;
  MX_RET(mxc_op_find("sgd_mom_update", &op));
  MX_RET(mxc_op_num_params(op, &n));
  for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; ++w) {
    int found = 0;
    for (int i = 0; i < n && !found; ++i) {
      const char *name = NULL;
      MX_RET(mxc_op_param(op, i, &name, NULL, NULL, NULL));
      found = strcmp(name, wanted[w]) == 0;
    }
    if (!found) {
      return fail(MXC_ERR_NOT_FOUND,
                  "operator sgd_mom_update has no parameter '%s'", wanted[w]);
    }
  }
  *out = op;
  return MXC_OK;
}

/* Executor, with gradients for every argument but data and label. */
static int bind(fm_net *net) {
  const char *names[2] = {DATA_NAME, LABEL_NAME};
  int ndims[2] = {net->data_ndim, 1};
  int64_t dims[5];
  memcpy(dims, net->data_dims, (size_t)net->data_ndim * sizeof(int64_t));
  dims[net->data_ndim] = net->batch;
  int reqs[2] = {MXC_REQ_NULL, MXC_REQ_NULL};
  MX_RET(mxc_executor_simple_bind(net->sym, MXC_DEVICE_CPU, 0, 2, names, ndims,
                                  dims, NULL, MXC_REQ_WRITE, 2, names, reqs,
                                  MXC_BIND_DEFAULT, &net->ex));
  MX_RET(mxc_executor_arg(net->ex, DATA_NAME, &net->data));
  MX_RET(mxc_executor_arg(net->ex, LABEL_NAME, &net->label));
  MX_RET(mxc_executor_output(net->ex, 0, &net->out));
  return MXC_OK;
}

/* Parameter names, arrays, gradients and fresh momentum buffers. */
static int collect_params(fm_net *net) {
  int rc = MXC_OK, n_args = 0;
  mxc_str_list args = NULL;
  MX(mxc_symbol_list_arguments(net->sym, &args));
  MX(mxc_str_list_size(args, &n_args));
  net->names = calloc((size_t)n_args, sizeof(char *));
  net->weights = calloc((size_t)n_args, sizeof(mxc_ndarray));
  net->grads = calloc((size_t)n_args, sizeof(mxc_ndarray));
  net->moms = calloc((size_t)n_args, sizeof(mxc_ndarray));
  if (!net->names || !net->weights || !net->grads || !net->moms) {
    rc = fail(MXC_ERR_OOM, "out of memory for %d parameters", n_args);
    goto done;
  }
  for (int i = 0; i < n_args; ++i) {
    const char *name = NULL;
    MX(mxc_str_list_get(args, i, &name));
    if (strcmp(name, DATA_NAME) == 0 || strcmp(name, LABEL_NAME) == 0) {
      continue;
    }
    int k = net->n_params;
    net->names[k] = strdup(name);
    if (net->names[k] == NULL) {
      rc = fail(MXC_ERR_OOM, "out of memory for a parameter name");
      goto done;
    }
    net->n_params++; /* from here on fm_net_free releases slot k */
    MX(mxc_executor_arg(net->ex, name, &net->weights[k]));
    MX(mxc_executor_grad(net->ex, name, &net->grads[k]));
    int ndim = 0;
    const int64_t *shape = NULL;
    MX(mxc_ndarray_shape(net->weights[k], &ndim, &shape));
    MX(mxc_ndarray_create(shape, ndim, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                          &net->moms[k]));
    MX(mxc_init_array(net->moms[k], "zeros", NULL, NULL, 0));
  }
done:
  mxc_str_list_free(args);
  return rc;
}

int fm_net_create(fm_model model, int64_t batch_size, fm_net **out) {
  if (batch_size <= 0) {
    return fail(MXC_ERR_INVALID_ARGUMENT, "batch size %lld; expected > 0",
                (long long)batch_size);
  }
  fm_net *net = calloc(1, sizeof *net);
  if (net == NULL) return fail(MXC_ERR_OOM, "out of memory for the network");
  net->model = model;
  net->batch = batch_size;
  net->global_batch = batch_size;
  net->data_dims[0] = batch_size;
  if (model == FM_MLP) {
    net->data_ndim = 2;
    net->data_dims[1] = 784;
  } else {
    net->data_ndim = 4;
    net->data_dims[1] = 1;
    net->data_dims[2] = net->data_dims[3] = 28;
  }
  int rc = find_sgd(&net->sgd);
  if (rc == MXC_OK) rc = build_symbol(model, &net->sym);
  if (rc == MXC_OK) rc = bind(net);
  if (rc == MXC_OK) rc = collect_params(net);
  if (rc != MXC_OK) {
    fm_net_free(net);
    return rc;
  }
  *out = net;
  return MXC_OK;
}

void fm_net_free(fm_net *net) {
  if (net == NULL) return;
  for (int i = 0; i < net->n_params; ++i) {
    free(net->names[i]);
    mxc_ndarray_free(net->weights[i]);
    mxc_ndarray_free(net->grads[i]);
    mxc_ndarray_free(net->moms[i]);
  }
  free(net->names);
  free(net->weights);
  free(net->grads);
  free(net->moms);
  mxc_ndarray_free(net->data);
  mxc_ndarray_free(net->label);
  mxc_ndarray_free(net->out);
  mxc_executor_free(net->ex);
  mxc_symbol_free(net->sym);
  free(net);
}

/* ---- initialization, training, evaluation --------------------------------- */

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int fm_net_init(fm_net *net, uint64_t seed) {
  static const char *const xk[] = {"rnd_type", "factor_type", "magnitude"};
  static const char *const xv[] = {"uniform", "avg", "3"};
  MX_RET(mxc_random_seed(seed));
  /* In list_arguments order, so the same seed always gives every
   * parameter the same values. */
  for (int i = 0; i < net->n_params; ++i) {
    if (ends_with(net->names[i], "_weight")) {
      MX_RET(mxc_init_array(net->weights[i], "xavier", xk, xv, 3));
    } else {
      MX_RET(mxc_init_array(net->weights[i], "zeros", NULL, NULL, 0));
    }
    MX_RET(mxc_init_array(net->moms[i], "zeros", NULL, NULL, 0));
  }
  return MXC_OK;
}

/* Copies a batch into the executor's input arrays (asynchronously: the
 * engine orders the copies after the previous step's reads). data may
 * have any shape with the right element count. */
static int feed(fm_net *net, mxc_ndarray data, mxc_ndarray label) {
  int rc = MXC_OK;
  mxc_ndarray view = NULL;
  MX(mxc_ndarray_reshape(data, net->data_dims, net->data_ndim, &view));
  MX(mxc_ndarray_copy(view, net->data));
  MX(mxc_ndarray_copy(label, net->label));
done:
  mxc_ndarray_free(view);
  return rc;
}

static int update(fm_net *net, const fm_opt *opt) {
  char v[5][32];
  snprintf(v[0], sizeof v[0], "%.17g", opt->lr);
  snprintf(v[1], sizeof v[1], "%.17g", opt->momentum);
  snprintf(v[2], sizeof v[2], "%.17g", opt->wd);
  snprintf(v[3], sizeof v[3], "%.17g", 1.0 / (double)net->global_batch);
  snprintf(v[4], sizeof v[4], "%.17g", opt->clip_gradient);
  const char *keys[5] = {"lr", "momentum", "wd", "rescale_grad",
                         "clip_gradient"};
  const char *vals[5] = {v[0], v[1], v[2], v[3], v[4]};
  for (int i = 0; i < net->n_params; ++i) {
    /* In place: the weight is also the output; the momentum buffer is
     * updated as a mutable input. */
    mxc_ndarray in[3] = {net->weights[i], net->grads[i], net->moms[i]};
    mxc_ndarray out[1] = {net->weights[i]};
    int rc = mxc_op_invoke(net->sgd, keys, vals, 5, in, 3, out, 1, NULL);
    if (rc != MXC_OK) {
      return fail(rc, "sgd_mom_update of '%s' failed: %s: %s", net->names[i],
                  mxc_error_name(rc), mxc_last_error());
    }
  }
  return MXC_OK;
}

int fm_net_set_kvstore(fm_net *net, mxc_kvstore kv, int64_t global_batch) {
  if (global_batch < net->batch) {
    return fail(MXC_ERR_INVALID_ARGUMENT,
                "global batch %lld is smaller than the batch %lld",
                (long long)global_batch, (long long)net->batch);
  }
  const char *const *keys = (const char *const *)net->names;
  /* Every worker starts from the first worker's parameters (init of a
   * dist_sync store broadcasts them) and momenta of zero. */
  MX_RET(mxc_kvstore_init(kv, net->n_params, NULL, keys, net->weights));
  MX_RET(mxc_kvstore_pull(kv, net->n_params, NULL, keys, net->weights, 0));
  for (int i = 0; i < net->n_params; ++i) {
    MX_RET(mxc_init_array(net->moms[i], "zeros", NULL, NULL, 0));
  }
  net->kv = kv;
  net->global_batch = global_batch;
  return MXC_OK;
}

/* The gradients summed over the workers, in place: one pushpull of every
 * parameter (the store fuses the small ones into few collectives), the
 * last parameters first: backward writes them first, and the store runs
 * collectives in the order they are pushed, so they start while backward
 * goes on (docs/kvstore.md, "Priorities"). */
static int sum_gradients(fm_net *net) {
  if (net->kv == NULL) return MXC_OK;
  enum { MAX_KEYS = 64 };
  const char *keys[MAX_KEYS];
  mxc_ndarray grads[MAX_KEYS];
  int n = net->n_params;
  if (n > MAX_KEYS) {
    return fail(MXC_ERR_UNSUPPORTED, "%d parameters; the example sums at "
                "most %d", n, MAX_KEYS);
  }
  for (int i = 0; i < n; ++i) {
    keys[i] = net->names[n - 1 - i];
    grads[i] = net->grads[n - 1 - i];
  }
  MX_RET(mxc_kvstore_pushpull(net->kv, n, NULL, keys, grads, grads, 0));
  return MXC_OK;
}

int fm_net_step(fm_net *net, mxc_ndarray data, mxc_ndarray label,
                const fm_opt *opt, fm_stats *stats) {
  int rc = feed(net, data, label);
  if (rc != MXC_OK) return rc;
  MX_RET(mxc_executor_forward(net->ex, 1));
  MX_RET(mxc_executor_backward(net->ex, 0, NULL));
  rc = sum_gradients(net);
  if (rc == MXC_OK) rc = update(net, opt);
  if (rc != MXC_OK || stats == NULL) return rc;
  /* Everything is pushed; measuring now waits for the forward output only,
   * while the backward pass and the updates run on the engine. */
  double loss = 0;
  int64_t correct = 0, count = 0, n = 0;
  MX_RET(mxc_metric_cross_entropy(net->out, net->label, 1e-12, &loss, &n));
  MX_RET(mxc_metric_accuracy(net->out, net->label, &correct, &count));
  stats->loss_sum += loss;
  stats->correct += correct;
  stats->count += count;
  return MXC_OK;
}

int fm_net_eval(fm_net *net, mxc_ndarray data, mxc_ndarray label,
                int64_t n_valid, int64_t *correct) {
  if (n_valid < 0 || n_valid > net->batch) {
    return fail(MXC_ERR_INVALID_ARGUMENT,
                "fm_net_eval: %lld valid rows; expected 0..%lld",
                (long long)n_valid, (long long)net->batch);
  }
  int rc = feed(net, data, label);
  if (rc != MXC_OK) return rc;
  mxc_ndarray out = NULL, lab = NULL;
  int64_t ok = 0, count = 0;
  MX(mxc_executor_forward(net->ex, 0));
  MX(mxc_ndarray_slice(net->out, 0, n_valid, &out));
  MX(mxc_ndarray_slice(net->label, 0, n_valid, &lab));
  MX(mxc_metric_accuracy(out, lab, &ok, &count));
  *correct += ok;
done:
  mxc_ndarray_free(out);
  mxc_ndarray_free(lab);
  return rc;
}

/* ---- checkpoints ----------------------------------------------------------- */

int fm_net_save(fm_net *net, const char *path, const int64_t *progress,
                int n_progress) {
  int rc = MXC_OK, n = 2 * net->n_params + 1;
  mxc_ndarray prog = NULL;
  mxc_ndarray *arrays = calloc((size_t)n, sizeof(mxc_ndarray));
  char **names = calloc((size_t)n, sizeof(char *));
  if (arrays == NULL || names == NULL) {
    rc = fail(MXC_ERR_OOM, "out of memory saving '%s'", path);
    goto done;
  }
  for (int i = 0; i < net->n_params; ++i) {
    size_t len = strlen(net->names[i]) + 5;
    names[2 * i] = malloc(len);
    names[2 * i + 1] = malloc(len);
    if (names[2 * i] == NULL || names[2 * i + 1] == NULL) {
      rc = fail(MXC_ERR_OOM, "out of memory saving '%s'", path);
      goto done;
    }
    snprintf(names[2 * i], len, "arg:%s", net->names[i]);
    snprintf(names[2 * i + 1], len, "mom:%s", net->names[i]);
    arrays[2 * i] = net->weights[i];
    arrays[2 * i + 1] = net->moms[i];
  }
  int64_t len = n_progress;
  MX(mxc_ndarray_create(&len, 1, MXC_DTYPE_INT64, MXC_DEVICE_CPU, 0, 0, &prog));
  MX(mxc_ndarray_copy_from_host(prog, progress,
                                (size_t)n_progress * sizeof(int64_t)));
  arrays[n - 1] = prog;
  names[n - 1] = strdup("progress");
  if (names[n - 1] == NULL) {
    rc = fail(MXC_ERR_OOM, "out of memory saving '%s'", path);
    goto done;
  }
  MX(mxc_ndarray_save(path, arrays, (const char *const *)names, n));
done:
  if (names != NULL) {
    for (int i = 0; i < n; ++i) free(names[i]);
  }
  free(names);
  free(arrays);
  mxc_ndarray_free(prog);
  return rc;
}

/* Index of `name` in a loaded list, or -1. */
static int list_find(mxc_ndarray_list list, int n, const char *name) {
  for (int i = 0; i < n; ++i) {
    const char *s = NULL;
    if (mxc_ndarray_list_name(list, i, &s) == MXC_OK && strcmp(s, name) == 0) {
      return i;
    }
  }
  return -1;
}

/* Checks that entry `name` of list exists and has the shape of like;
 * *out = a handle on it (caller frees) or NULL when like is NULL. */
static int list_check(mxc_ndarray_list list, int n, const char *path,
                      const char *name, mxc_ndarray like, mxc_ndarray *out) {
  int idx = list_find(list, n, name);
  if (idx < 0) {
    return fail(MXC_ERR_NOT_FOUND, "checkpoint '%s' has no '%s'", path, name);
  }
  mxc_ndarray a = NULL;
  int nd_a = 0, nd_b = 0;
  const int64_t *sa = NULL, *sb = NULL;
  MX_RET(mxc_ndarray_list_get(list, idx, &a));
  int rc = mxc_ndarray_shape(a, &nd_a, &sa);
  if (rc == MXC_OK) rc = mxc_ndarray_shape(like, &nd_b, &sb);
  if (rc != MXC_OK) {
    mxc_ndarray_free(a);
    return mx_fail(rc, "mxc_ndarray_shape");
  }
  if (nd_a != nd_b || memcmp(sa, sb, (size_t)nd_a * sizeof(int64_t)) != 0) {
    mxc_ndarray_free(a);
    return fail(MXC_ERR_SHAPE,
                "checkpoint '%s': '%s' is shaped unlike the network's "
                "(a checkpoint of another model?)",
                path, name);
  }
  *out = a;
  return MXC_OK;
}

int fm_net_load(fm_net *net, const char *path, int64_t *out_progress,
                int n_progress) {
  int rc = MXC_OK, n = 0;
  mxc_ndarray_list list = NULL;
  mxc_ndarray prog = NULL;
  mxc_ndarray *moms = calloc((size_t)net->n_params + 1, sizeof(mxc_ndarray));
  if (moms == NULL) return fail(MXC_ERR_OOM, "out of memory loading '%s'", path);
  MX(mxc_ndarray_load(path, &list));
  MX(mxc_ndarray_list_size(list, &n));
  /* Check everything before changing anything. */
  for (int i = 0; i < net->n_params && rc == MXC_OK; ++i) {
    char name[256];
    mxc_ndarray arg = NULL;
    snprintf(name, sizeof name, "arg:%s", net->names[i]);
    rc = list_check(list, n, path, name, net->weights[i], &arg);
    mxc_ndarray_free(arg);
    snprintf(name, sizeof name, "mom:%s", net->names[i]);
    if (rc == MXC_OK) rc = list_check(list, n, path, name, net->moms[i], &moms[i]);
  }
  if (rc != MXC_OK) goto done;
  int idx = list_find(list, n, "progress");
  int64_t len = 0;
  int dtype = -1;
  if (idx >= 0) MX(mxc_ndarray_list_get(list, idx, &prog));
  if (prog != NULL) MX(mxc_ndarray_size(prog, &len));
  if (prog != NULL) MX(mxc_ndarray_dtype(prog, &dtype));
  if (len != n_progress || dtype != MXC_DTYPE_INT64) {
    rc = fail(MXC_ERR_NOT_FOUND,
              "checkpoint '%s' has no int64 'progress' of %d values", path,
              n_progress);
    goto done;
  }
  /* The parameters through the executor's own loader ("mom:" and
   * "progress" are not arguments: allow_extra), then the momenta. */
  MX(mxc_executor_load_params(net->ex, path, 1));
  for (int i = 0; i < net->n_params; ++i) {
    MX(mxc_ndarray_copy(moms[i], net->moms[i]));
  }
  MX(mxc_ndarray_copy_to_host(prog, out_progress,
                              (size_t)n_progress * sizeof(int64_t)));
done:
  for (int i = 0; i < net->n_params; ++i) mxc_ndarray_free(moms[i]);
  free(moms);
  mxc_ndarray_free(prog);
  mxc_ndarray_list_free(list);
  return rc;
}
