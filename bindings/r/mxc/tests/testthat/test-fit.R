# Layers, models and fit() from R: scopes free every block, optimizer and
# fit; fit reaches an accuracy goal on small synthetic data; a resumed run
# equals an uninterrupted one bit for bit; hybridized == imperative;
# export -> predictor; callbacks that fail give a clean R error and leak
# nothing; bad arguments are R errors naming them. The data: 600 points
# in 8 dimensions, labelled by the largest of three fixed linear scores
# (separable, so a small MLP learns it), as CSV files read by mxc.

# Twice: a fit's finalizer releases its R listener, which holds the
# model's blocks until the next collection.
live <- function() {
  gc()
  gc()
  mx_memory_stats()$handles
}

make_data <- function(n, seed) {
  set.seed(seed)
  x <- matrix(rnorm(n * 8), n, 8)
  w <- matrix(c(1, -1, 0.5, 0, 2, -0.5, 1, 0,
                -1, 0.5, 1, 1, -1, 0, 0.5, 1,
                0, 1, -1, -1, 0.5, 1, -1, 0.5), 8, 3)
  list(x = x, y = max.col(x %*% w) - 1)
}

write_data <- function(d, name) {
  xf <- file.path(tempdir(), paste0(name, "-x.csv"))
  yf <- file.path(tempdir(), paste0(name, "-y.csv"))
  write.table(d$x, xf, sep = ",", row.names = FALSE, col.names = FALSE)
  write.table(d$y, yf, sep = ",", row.names = FALSE, col.names = FALSE)
  c(xf, yf)
}

train_files <- write_data(make_data(600, 1), "train")
valid_files <- write_data(make_data(200, 2), "valid")
iter <- function(files, last = "pad") {
  mx_data_iter_csv(files[1], files[2], batch_size = 50, last_batch = last)
}

model <- function(seed = 7, lr = 0.2) {
  mx_seed(seed)
  mx_sequential(mx_dense(32, activation = "relu", name = "fc1"),
                mx_dense(3, name = "fc2")) |>
    mx_setup(loss = "softmax_cross_entropy_loss",
             optimizer = mx_optim("sgd", lr = lr, momentum = 0.9))
}

params_of <- function(m) lapply(mx_params(m), as.array)

test_that("fit reaches the accuracy goal and keeps a history", {
  seen <- 0
  cb <- mx_callback(on_batch_end = function(ctx) seen <<- seen + 1)
  m <- model() |> mx_fit(iter(train_files), epochs = 8,
                         valid = iter(valid_files), callbacks = list(cb))
  expect_s3_class(m, "mx_model")
  expect_equal(nrow(m$history), 8)
  expect_equal(seen, 8 * 12)
  expect_lt(m$history$train_loss[8], m$history$train_loss[1] / 2)
  expect_gt(m$history$val_accuracy[8], 0.9)
  expect_gt(mx_fit_values(m)[["val_accuracy"]], 0.9)
  # predict() on new rows agrees with the labels as well
  d <- make_data(100, 3)
  p <- as.array(predict(m, mx_array(d$x)))
  expect_gt(mean(max.col(p) - 1 == d$y), 0.85)
})

test_that("a scope frees every block, optimizer and fit", {
  before <- live()
  kept <- with_scope({
    m <- model() |> mx_fit(iter(train_files), epochs = 1)
    mx_hybridize(m)
    mx_block_forward(m$net, mx_array(matrix(0, 2, 8)))
    mx_dense(4)  # the value survives the scope
  })
  expect_s3_class(kept, "mx_block")
  expect_equal(live(), before + 1)
  mx_free(kept)
  expect_equal(live(), before)
  # Dropped without mx_free: R's finalizers free them.
  local({
    model() |> mx_fit(iter(train_files), epochs = 1)
    NULL
  })
  expect_equal(live(), before)
})

test_that("a resumed run equals the uninterrupted one bit for bit", {
  prefix <- file.path(tempdir(), "resume")
  full <- model() |> mx_fit(iter(train_files, "discard"), epochs = 4)
  model() |> mx_fit(iter(train_files, "discard"), epochs = 2,
                    callbacks = list(mx_cb_checkpoint(prefix)))
  ckpt <- sprintf("%s-0002.fit", prefix)
  expect_true(file.exists(ckpt))
  resumed <- model(seed = 99) |>
    mx_fit(iter(train_files, "discard"), epochs = 4, resume = ckpt)
  expect_identical(params_of(resumed), params_of(full))
  expect_identical(resumed$history$train_loss, full$history$train_loss[3:4])
})

test_that("a local kvstore trains as without one, bit for bit", {
  # A "local" store of one worker trains as without a store (mxc.h): the
  # same seeded run gives the same parameters, whether the store is given
  # by type or as an mx_kvstore. A store that changed the updates (the
  # gradients not summed once, the batch size not the global one) would
  # differ.
  alone <- model() |> mx_fit(iter(train_files), epochs = 2)
  by_type <- model() |> mx_fit(iter(train_files), epochs = 2, kvstore = "local")
  kv <- mx_kvstore("local")
  by_store <- model() |> mx_fit(iter(train_files), epochs = 2, kvstore = kv)
  expect_identical(params_of(by_type), params_of(alone))
  expect_identical(params_of(by_store), params_of(alone))
  # A store serves one fit: a second fit's first step fails.
  expect_error(model() |> mx_fit(iter(train_files), kvstore = kv))
  expect_equal(mx_fit_values(by_type)[["num_workers"]], 1)
  expect_equal(mx_fit_values(by_type)[["rank"]], 0)
  expect_identical(by_type$history$train_loss, alone$history$train_loss)
  expect_error(model() |> mx_fit(iter(train_files), kvstore = "no_such_store"),
               "no_such_store")
  expect_error(model() |> mx_fit(iter(train_files), kvstore = 3), "kvstore")
})

test_that("hybridized and imperative outputs are equal", {
  m <- model() |> mx_fit(iter(train_files), epochs = 2)
  x <- mx_array(make_data(20, 4)$x)
  y0 <- as.array(predict(m, x))
  mx_hybridize(m)
  expect_equal(as.array(predict(m, x)), y0, tolerance = 1e-5)
  # fit trains a hybridized net through the executor: the same losses up
  # to float reordering.
  h <- model() |> mx_hybridize() |>
    mx_fit(iter(train_files), epochs = 2, valid = iter(valid_files))
  i <- model() |> mx_fit(iter(train_files), epochs = 2, valid = iter(valid_files))
  expect_equal(h$history$train_loss, i$history$train_loss, tolerance = 1e-5)
  expect_equal(h$history$val_loss, i$history$val_loss, tolerance = 1e-5)
  expect_equal(params_of(h), params_of(i), tolerance = 1e-4)
})

test_that("export loads in the predictor with the same outputs", {
  m <- model() |> mx_fit(iter(train_files), epochs = 1)
  x <- make_data(5, 5)$x
  prefix <- file.path(tempdir(), "exported")
  mx_export(m, prefix, epoch = 3)
  p <- mx_predictor(prefix, 3, list(data = c(5, 8)))
  expect_equal(as.array(mx_predict(p, x)), as.array(predict(m, mx_array(x))),
               tolerance = 1e-5)
})

test_that("fit's options: early stopping, schedules, CSV, TensorBoard", {
  csv <- file.path(tempdir(), "log.csv")
  tb <- file.path(tempdir(), "tb")
  lrs <- numeric()
  cb <- mx_callback(on_epoch_end = function(ctx) lrs <<- c(lrs, ctx$values[["lr"]]))
  m <- model() |> mx_fit(
    iter(train_files), epochs = 6, valid = iter(valid_files),
    callbacks = list(cb, mx_cb_csv(csv), mx_cb_tensorboard(tb),
                     mx_cb_lr_schedule("factor", factor = 0.5, step = 12),
                     mx_cb_early_stopping(patience = 1, min_delta = 100)))
  expect_equal(nrow(m$history), 2)  # no epoch improves by 100
  expect_equal(lrs, c(0.2, 0.1))  # halved every 12 updates (an epoch)
  log <- read.csv(csv)
  expect_equal(nrow(log), 2)
  expect_equal(log$train_loss, m$history$train_loss, tolerance = 1e-6)
  expect_length(list.files(tb, pattern = "^events\\.out\\.tfevents\\."), 1)
  # ctx$stop() ends the run after the current batch
  s <- model() |> mx_fit(iter(train_files), epochs = 5, callbacks = list(
    mx_callback(on_batch_end = function(ctx) if (ctx$batch >= 3) ctx$stop())))
  expect_equal(mx_fit_values(s)[["num_update"]], 3)
})

test_that("a failing callback is a clean R error and leaks nothing", {
  before <- live()
  boom <- mx_callback(on_epoch_end = function(ctx) stop("boom in a callback"))
  expect_error(with_scope(model() |> mx_fit(iter(train_files), epochs = 3,
                                            callbacks = list(boom))),
               "boom in a callback")
  # The condition itself comes back, class and all.
  mine <- mx_callback(on_batch_end = function(ctx)
    stop(structure(class = c("my_condition", "error", "condition"),
                   list(message = "mine", call = NULL))))
  expect_error(model() |> mx_fit(iter(train_files), callbacks = list(mine)),
               class = "my_condition")
  expect_equal(live(), before)
})

test_that("bad arguments are R errors naming them", {
  expect_error(mx_dense("a"), "units")
  expect_error(mx_dense(0), "units")
  expect_error(mx_conv2d(2, kernel_size = "x"), "kernel_size", class = "mxc_error")
  expect_error(mx_layer("densy"), "densy", class = "mxc_error")
  expect_error(mx_optim("sgdd"), "unknown optimizer 'sgdd'")
  expect_error(mx_optim("sgd", lr = list(1)), "parameter value")
  expect_error(mx_sequential(mx_dense(2), 3), "child 2")
  net <- mx_sequential(mx_dense(3))
  expect_error(mx_setup(net, metrics = "f1"), "metrics")
  expect_error(mx_setup(net, loss = "l3_loss"), "l3_loss", class = "mxc_error")
  expect_error(mx_setup(net, optimizer = "sgd"), "optimizer")
  expect_error(mx_setup(5), "net")
  m <- mx_setup(net)
  expect_error(mx_fit(net, iter(train_files)), "model")
  expect_error(mx_fit(m, 5), "train")
  expect_error(mx_fit(m, iter(train_files), epochs = 0), "epochs")
  expect_error(mx_fit(m, iter(train_files), valid = "v"), "valid")
  expect_error(mx_fit(m, iter(train_files), callbacks = list(1)), "callbacks\\[\\[1\\]\\]")
  expect_error(mx_fit(m, iter(train_files), callbacks = list(
    mx_cb_early_stopping(monitor = "val_f1"))), "val_f1", class = "mxc_error")
  expect_error(mx_callback(on_epoch_end = 1), "on_epoch_end")
  expect_error(mx_export(mx_sequential(mx_dense(2)), file.path(tempdir(), "x")),
               class = "mxc_error")  # no forward pass made the parameters
  expect_error(mx_block_forward(net, 1), "input 1")
})
