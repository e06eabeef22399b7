# Trains a 784-128-10 multilayer perceptron on Fashion-MNIST with the mxc
# R package: a symbolic graph bound by mx_simple_bind, SGD with momentum
# (sgd_mom_update writing the weights in place), batches of 128 from the
# IDX iterator. Prints the training loss every 100 batches and the test
# accuracy at the end.
#
#   Rscript examples/r/mlp.R [--batches N] [--data DIR] [--check]
#
# --batches: stop after N batches (default: 3 epochs); --data: the
# directory holding the *-idx?-ubyte.gz files (default
# /usr/share/datasets/fashion-mnist, Debian package dataset-fashion-mnist);
# --check: exit with status 1 unless the loss fell and the test accuracy
# beats 0.7 (used by the tests). Without the data set it prints SKIP and
# exits 0.
suppressPackageStartupMessages(library(mxc))

args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  i <- match(name, args)
  if (is.na(i)) default else args[[i + 1L]]
}
data_dir <- opt("--data", "/usr/share/datasets/fashion-mnist")
max_batches <- as.numeric(opt("--batches", Inf))
check <- "--check" %in% args
batch <- 128
files <- file.path(data_dir, c("train-images-idx3-ubyte.gz",
                               "train-labels-idx1-ubyte.gz",
                               "t10k-images-idx3-ubyte.gz",
                               "t10k-labels-idx1-ubyte.gz"))
if (!all(file.exists(files))) {
  cat("SKIP: Fashion-MNIST not found in", data_dir,
      "(Debian: apt-get install dataset-fashion-mnist)\n")
  quit(status = 0)
}

# The network: data -> FC(128) -> relu -> FC(10) -> SoftmaxOutput(label).
fc <- function(x, n, name)
  mx_symbol_op("FullyConnected", x, params = list(num_hidden = n), name = name)
net <- mx_symbol_op(
  "SoftmaxOutput",
  fc(mx_symbol_op("Activation", fc(mx_symbol_variable("data"), 128, "fc1"),
                  params = list(act_type = "relu"), name = "relu1"),
     10, "fc2"),
  mx_symbol_variable("softmax_label"), name = "softmax")
ex <- mx_simple_bind(net, list(data = c(batch, 784), softmax_label = batch))

mx_seed(42)
weights <- c("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")
params <- lapply(weights, function(w) mx_exec_arg(ex, w))
grads <- lapply(weights, function(w) mx_exec_grad(ex, w))
moms <- lapply(params, function(p) mx_zeros(dim(p)))
for (i in seq_along(params))
  mx_initialize(params[[i]], if (grepl("bias", weights[i])) "zeros" else "xavier")
data_arg <- mx_exec_arg(ex, "data")
label_arg <- mx_exec_arg(ex, "softmax_label")
# SoftmaxOutput's gradient is per sample; rescale_grad averages it.
sgd <- list(lr = 0.1, momentum = 0.9, wd = 1e-4, rescale_grad = 1 / batch)

cross_entropy <- function(prob, label) {
  p <- as.array(prob)
  -mean(log(pmax(p[cbind(seq_len(nrow(p)), as.vector(label) + 1)], 1e-12)))
}

train <- mx_data_iter_idx(files[1], files[2], batch, shuffle = TRUE, seed = 1)
losses <- numeric(0)
n <- 0
t0 <- Sys.time()
for (epoch in 1:3) {
  mx_iter_reset(train)
  while (n < max_batches && mx_iter_next(train)) {
    mx_assign(data_arg, mx_iter_data(train))
    mx_assign(label_arg, mx_iter_label(train))
    out <- mx_forward(ex, is_train = TRUE)[[1]]
    mx_backward_exec(ex)
    for (i in seq_along(params))
      mx_invoke("sgd_mom_update", params[[i]], grads[[i]], moms[[i]],
                params = sgd, out = params[[i]])
    n <- n + 1
    losses[n] <- cross_entropy(out, label_arg)
    if (n %% 100 == 0)
      cat(sprintf("batch %d  loss %.4f\n", n, mean(losses[(n - 99):n])))
  }
  if (n >= max_batches) break
}
secs <- as.numeric(Sys.time() - t0, units = "secs")

# The last test batch is padded: count only the file's samples (the label
# file's header holds their number).
con <- gzfile(files[4], "rb")
n_test <- readBin(con, "integer", 2, size = 4, endian = "big")[2]
close(con)
test <- mx_data_iter_idx(files[3], files[4], batch)
correct <- 0
total <- 0
while (mx_iter_next(test)) {
  mx_assign(data_arg, mx_iter_data(test))
  out <- mx_forward(ex, is_train = FALSE)[[1]]
  valid <- seq_len(min(batch, n_test - total))
  pred <- max.col(as.array(out), ties.method = "first") - 1
  correct <- correct + sum(pred[valid] == as.vector(mx_iter_label(test))[valid])
  total <- total + length(valid)
}
acc <- correct / total
k <- min(50, n %/% 2)
first <- mean(losses[1:k])
last <- mean(losses[(n - k + 1):n])
cat(sprintf("batches %d  %.1f s  loss first %d: %.4f  last %d: %.4f  test accuracy %.4f\n",
            n, secs, k, first, k, last, acc))
if (check && !(last < 0.7 * first && acc > 0.7)) {
  cat("FAIL: expected the loss to fall by 30% and test accuracy > 0.7\n")
  quit(status = 1)
}
