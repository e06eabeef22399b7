# The MLP and LeNet of examples/fit_fashion_mnist.c in R, with layers and
# mx_setup() |> mx_fit(): the same layers, initializer, optimizer and
# learning-rate steps, the same one line per epoch and the same goals
# (MLP: test accuracy >= 87.5% after 10 epochs; LeNet: >= 88% after 2).
#
#   Rscript examples/r/fit_fashion_mnist.R [--model mlp|lenet] [--epochs N]
#       [--batches-per-epoch N] [--data DIR] [--export PREFIX]
#       [--require-goal]
#
# Without the data set (Debian: dataset-fashion-mnist) it prints SKIP.
# Exit status 3 with --require-goal when the goal was missed.
suppressPackageStartupMessages(library(mxc))

args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  i <- match(name, args)
  if (is.na(i)) default else args[[i + 1L]]
}
model <- opt("--model", "mlp")
dir <- opt("--data", "/usr/share/datasets/fashion-mnist")
is_mlp <- model == "mlp"
goal_epochs <- if (is_mlp) 10 else 2
epochs <- as.numeric(opt("--epochs", goal_epochs))
if (!file.exists(file.path(dir, "train-images-idx3-ubyte.gz"))) {
  cat("SKIP: Fashion-MNIST not found in", dir, "\n")
  quit(status = 0)
}
idx <- function(part, train) {
  mx_data_iter_idx(file.path(dir, paste0(part, "-images-idx3-ubyte.gz")),
                   file.path(dir, paste0(part, "-labels-idx1-ubyte.gz")),
                   batch_size = 128, shuffle = train, seed = if (train) 1 else 0,
                   flat = is_mlp, last_batch = if (train) "discard" else "pad")
}

mx_seed(1)
net <- if (is_mlp) {
  mx_sequential(mx_dense(512, activation = "relu", name = "fc1"),
                mx_dense(256, activation = "relu", name = "fc2"),
                mx_dense(10, name = "fc3"), name = "mlp")
} else {
  mx_sequential(mx_conv2d(20, kernel_size = 5, name = "conv1"),
                mx_activation("tanh", name = "tanh1"),
                mx_maxpool2d(2, name = "pool1"),
                mx_conv2d(50, kernel_size = 5, name = "conv2"),
                mx_activation("tanh", name = "tanh2"),
                mx_maxpool2d(2, name = "pool2"),
                mx_flatten(name = "flatten"),
                mx_dense(500, activation = "tanh", name = "fc1"),
                mx_dense(10, name = "fc2"), name = "lenet")
}
# A tenth of the rate for the last epochs (468 batches per epoch).
drop_at <- (goal_epochs - if (is_mlp) 2 else 1) * 468
print_epoch <- mx_callback(on_epoch_end = function(ctx) {
  v <- ctx$values
  cat(sprintf("epoch=%d train_loss=%.4f train_accuracy=%.4f test_accuracy=%.4f\n",
              as.integer(v[["epoch"]]), v[["train_loss"]],
              v[["train_accuracy"]], v[["val_accuracy"]]))
})

fitted <- net |>
  mx_setup(loss = "softmax_cross_entropy_loss",
           optimizer = mx_optim("sgd", lr = if (is_mlp) 0.1 else 0.05,
                                momentum = 0.9)) |>
  mx_fit(idx("train", TRUE), epochs = epochs, valid = idx("t10k", FALSE),
         batches_per_epoch = as.numeric(opt("--batches-per-epoch", 0)),
         callbacks = list(print_epoch,
                          mx_cb_lr_schedule("multifactor", steps = drop_at,
                                            factor = 0.1)))

acc <- mx_fit_values(fitted)[["val_accuracy"]]
goal <- if (is_mlp) 0.875 else 0.88
met <- acc >= goal && epochs >= goal_epochs
cat(sprintf("final_test_accuracy=%.4f goal=%.3f goal_met=%s\n", acc, goal,
            if (met) "yes" else "no"))
prefix <- opt("--export", NULL)
if (!is.null(prefix)) mx_export(fitted, prefix)
if ("--require-goal" %in% args && !met) quit(status = 3)
