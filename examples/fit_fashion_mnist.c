/* fit_fashion_mnist: the MLP and LeNet of train_fashion_mnist written with
 * the layer API and fit() (<mxc/mxc.h> only, linked against libmxc.so.1):
 * the same layers, initializer, optimizer and learning-rate steps as the
 * executor version (fmnist.c), in a page.
 *
 *   fit_fashion_mnist [--model mlp|lenet] [--epochs N] [--seed S]
 *       [--data-dir DIR] [--batches-per-epoch N] [--require-goal]
 *       [--export PREFIX]
 *
 * fit() shows its progress line on a terminal; one line per epoch goes to
 * stdout, then final_test_accuracy=... and whether the goal (MLP: >= 87.5%
 * after 10 epochs; LeNet: >= 88% after 2) was met. --export writes the
 * trained network as an MXNet checkpoint (PREFIX-symbol.json,
 * PREFIX-0000.params). Exit status: 0, 1 on an error, 2 on bad usage, 3
 * with --require-goal when the goal was missed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mxc/mxc.h"

#define CHECK(call)                                                     \
  do {                                                                  \
    int rc_ = (call);                                                   \
    if (rc_ != MXC_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, mxc_last_error());     \
      exit(1);                                                          \
    }                                                                   \
  } while (0)

/* A layer: kind and up to 4 key/value pairs. */
static mxc_block layer(const char *kind, const char *name, const char *k0,
                       const char *v0, const char *k1, const char *v1) {
  const char *keys[2] = {k0, k1}, *vals[2] = {v0, v1};
  mxc_block b = NULL;
  CHECK(mxc_block_create(kind, name, keys, vals, k1 ? 2 : k0 ? 1 : 0, &b));
  return b;
}

static void add(mxc_block net, mxc_block child) {
  CHECK(mxc_block_add(net, child));
  mxc_block_free(child);
}

static mxc_block mlp(void) {
  mxc_block net = layer("sequential", "mlp", NULL, NULL, NULL, NULL);
  add(net, layer("dense", "fc1", "units", "512", "activation", "relu"));
  add(net, layer("dense", "fc2", "units", "256", "activation", "relu"));
  add(net, layer("dense", "fc3", "units", "10", NULL, NULL));
  return net;
}

static mxc_block lenet(void) {
  mxc_block net = layer("sequential", "lenet", NULL, NULL, NULL, NULL);
  add(net, layer("conv2d", "conv1", "channels", "20", "kernel_size", "5"));
  add(net, layer("activation", "tanh1", "activation", "tanh", NULL, NULL));
  add(net, layer("maxpool2d", "pool1", "pool_size", "2", NULL, NULL));
  add(net, layer("conv2d", "conv2", "channels", "50", "kernel_size", "5"));
  add(net, layer("activation", "tanh2", "activation", "tanh", NULL, NULL));
  add(net, layer("maxpool2d", "pool2", "pool_size", "2", NULL, NULL));
  add(net, layer("flatten", "flatten", NULL, NULL, NULL, NULL));
  add(net, layer("dense", "fc1", "units", "500", "activation", "tanh"));
  add(net, layer("dense", "fc2", "units", "10", NULL, NULL));
  return net;
}

static mxc_data_iter idx(const char *dir, const char *part, int train,
                         int flat, unsigned long long seed) {
  char img[1024], lab[1024];
  snprintf(img, sizeof img, "%s/%s-images-idx%d-ubyte.gz", dir, part, 3);
  snprintf(lab, sizeof lab, "%s/%s-labels-idx1-ubyte.gz", dir, part);
  if (access(img, R_OK) != 0) img[strlen(img) - 3] = '\0';
  if (access(lab, R_OK) != 0) lab[strlen(lab) - 3] = '\0';
  mxc_data_iter it = NULL;
  CHECK(mxc_data_iter_idx_create(img, lab, 128, train, seed, flat, 1,
                                 train ? MXC_LAST_BATCH_DISCARD
                                       : MXC_LAST_BATCH_PAD,
                                 &it));
  return it;
}

static int print_epoch(void *unused, int event, mxc_fit fit) {
  (void)unused;
  if (event != MXC_FIT_EPOCH_END) return MXC_OK;
  double e = 0, loss = 0, acc = 0, val = 0;
  mxc_fit_value(fit, "epoch", &e);
  mxc_fit_value(fit, "train_loss", &loss);
  mxc_fit_value(fit, "train_accuracy", &acc);
  mxc_fit_value(fit, "val_accuracy", &val);
  printf("epoch=%d train_loss=%.4f train_accuracy=%.4f test_accuracy=%.4f\n",
         (int)e, loss, acc, val);
  fflush(stdout);
  return MXC_OK;
}

int main(int argc, char **argv) {
  const char *model = "mlp", *dir = "/usr/share/datasets/fashion-mnist";
  const char *batches = "0", *export_prefix = NULL;
  int epochs = -1, require_goal = 0;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--require-goal")) { require_goal = 1; continue; }
    if (!v) { fprintf(stderr, "usage: see the comment of fit_fashion_mnist.c\n"); return 2; }
    if (!strcmp(a, "--model")) model = v;
    else if (!strcmp(a, "--epochs")) epochs = atoi(v);
    else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--data-dir")) dir = v;
    else if (!strcmp(a, "--batches-per-epoch")) batches = v;
    else if (!strcmp(a, "--export")) export_prefix = v;
    else { fprintf(stderr, "unknown option %s\n", a); return 2; }
    ++i;
  }
  int is_mlp = !strcmp(model, "mlp");
  if (!is_mlp && strcmp(model, "lenet")) { fprintf(stderr, "--model mlp or lenet\n"); return 2; }
  int goal_epochs = is_mlp ? 10 : 2;
  if (epochs < 0) epochs = goal_epochs;

  CHECK(mxc_random_seed(seed));
  mxc_block net = is_mlp ? mlp() : lenet();
  CHECK(mxc_block_initialize(net, "xavier", NULL, NULL, 0, 0));
  mxc_block loss = layer("softmax_cross_entropy_loss", "loss", NULL, NULL, NULL, NULL);
  const char *ok[] = {"lr", "momentum"}, *ov[] = {is_mlp ? "0.1" : "0.05", "0.9"};
  mxc_optimizer opt = NULL;
  CHECK(mxc_optimizer_create(net, "sgd_mom_update", ok, ov, 2, &opt));
  /* A tenth of the rate for the last epochs, as train_fashion_mnist. */
  char steps[32], n_epochs[16];
  snprintf(steps, sizeof steps, "(%d)", (goal_epochs - (is_mlp ? 2 : 1)) * 468);
  snprintf(n_epochs, sizeof n_epochs, "%d", epochs);
  const char *fk[] = {"epochs", "lr_scheduler", "steps", "factor", "batches_per_epoch"};
  const char *fv[] = {n_epochs, "multifactor", steps, "0.1", batches};
  mxc_fit fit = NULL;
  CHECK(mxc_fit_create(net, loss, opt, fk, fv, 5, &fit));
  CHECK(mxc_fit_add_listener(fit, print_epoch, NULL, NULL));
  mxc_data_iter train = idx(dir, "train", 1, is_mlp, seed);
  mxc_data_iter test = idx(dir, "t10k", 0, is_mlp, 0);
  CHECK(mxc_fit_run(fit, train, test));
  double acc = 0;
  CHECK(mxc_fit_value(fit, "val_accuracy", &acc));
  double goal = is_mlp ? 0.875 : 0.88;
  int met = acc >= goal && epochs >= goal_epochs;
  printf("final_test_accuracy=%.4f goal=%.3f goal_met=%s\n", acc, goal,
         met ? "yes" : "no");
  if (export_prefix) CHECK(mxc_block_export(net, export_prefix, 0));
  mxc_data_iter_free(train);
  mxc_data_iter_free(test);
  mxc_fit_free(fit);
  mxc_optimizer_free(opt);
  mxc_block_free(loss);
  mxc_block_free(net);
  return require_goal && !met ? 3 : 0;
}
