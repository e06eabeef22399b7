# User-composed blocks (mx_user_block): the forward pass against R's own
# arithmetic on the children's parameters, fit() learning through one,
# hybridized against imperative (the trace runs on R's thread, inside the
# forward call), and errors in forward as mxc_errors after which the
# block still works.

catch <- function(expr) tryCatch(expr, mxc_error = function(e) e)

# x + fc(x), fc a Dense(4) child reached through mx_children(self);
# calls counts the R function's runs.
residual <- function(name, counter = new.env()) {
  counter$calls <- 0
  b <- mx_user_block(function(self, x) {
    counter$calls <- counter$calls + 1
    fc <- mx_children(self)[[1]]
    mx_block_forward(fc, x) + x
  }, mx_dense(4, name = paste0(name, "fc")), name = name)
  mx_block_init(b, "uniform", list(scale = 0.5))
  b
}

# Rows of x (n x 4) times t(W) plus bias plus x, in R's doubles.
by_hand <- function(b, x) {
  p <- lapply(mx_params(b), as.array)
  w <- p[[1]]
  x %*% t(w) + matrix(p[[2]], nrow(x), 4, byrow = TRUE) + x
}

test_that("forward equals a hand computation from the children's parameters", {
  counter <- new.env()
  b <- residual("ures", counter)
  set.seed(1)
  x <- matrix(rnorm(12), 3, 4)
  y <- as.array(mx_block_forward(b, mx_array(x)))
  expect_equal(names(mx_params(b)), c("uresfc_weight", "uresfc_bias"))
  expect_equal(y, by_hand(b, x), tolerance = 1e-5)
  expect_equal(counter$calls, 1)
  expect_length(mx_children(b), 1L)
  expect_s3_class(mx_children(b)[[1]], "mx_block")
})

test_that("hybridized output equals imperative; the graph runs without R", {
  counter <- new.env()
  b <- residual("hres", counter)
  set.seed(2)
  x <- mx_array(matrix(rnorm(20), 5, 4))
  y0 <- as.array(mx_block_forward(b, x))
  mx_hybridize(b)
  y1 <- as.array(mx_block_forward(b, x))  # traced: forward runs in R
  traced <- counter$calls
  y2 <- as.array(mx_block_forward(b, x))  # the bound graph
  expect_equal(y1, y0, tolerance = 1e-5)
  expect_equal(y2, y0, tolerance = 1e-5)
  expect_gte(traced, 2)
  expect_equal(counter$calls, traced)
  expect_equal(y2, by_hand(b, as.array(x)), tolerance = 1e-5)
})

make_blobs <- function(n, seed, name) {
  set.seed(seed)
  y <- rep(0:2, length.out = n)
  x <- matrix(rnorm(n * 4, sd = 0.7), n, 4)
  x[cbind(seq_len(n), y + 1)] <- x[cbind(seq_len(n), y + 1)] + 3
  xf <- file.path(tempdir(), paste0(name, "-ux.csv"))
  yf <- file.path(tempdir(), paste0(name, "-uy.csv"))
  write.table(x, xf, sep = ",", row.names = FALSE, col.names = FALSE)
  write.table(y, yf, sep = ",", row.names = FALSE, col.names = FALSE)
  mx_data_iter_csv(xf, yf, batch_size = 16)
}

# fc2(fc1(x)) with the children captured by the R function; fail_at:
# the call that stops.
classifier <- function(fail_at = 0) {
  fc1 <- mx_dense(16, activation = "relu", name = "ufc1")
  fc2 <- mx_dense(3, name = "ufc2")
  n <- 0
  mx_user_block(function(self, x) {
    n <<- n + 1
    if (n == fail_at) stop("forward failed on purpose at call ", n)
    mx_block_forward(fc2, mx_block_forward(fc1, x))
  }, fc1, fc2, name = "unet")
}

test_that("fit() learns through a user block", {
  mx_seed(5)
  m <- classifier() |>
    mx_setup(optimizer = mx_optim("sgd", lr = 0.1, momentum = 0.9)) |>
    mx_fit(make_blobs(240, 1, "train"), epochs = 4,
           valid = make_blobs(120, 2, "valid"))
  expect_gt(m$history$val_accuracy[4], 0.95)
})

test_that("an error in forward is a clear mxc_error; the block works after", {
  mode <- "error"
  b <- mx_user_block(function(self, x) {
    if (mode == "error") stop("forward failed on purpose")
    if (mode == "input") return(x)
    if (mode == "value") return(42)
    x + x
  }, name = "failing")
  x <- mx_array(c(1, -2, 3))
  e <- catch(mx_block_forward(b, x))
  expect_s3_class(e, "mxc_error")
  expect_equal(e$name, "MXC_ERR_OPERATOR")
  expect_match(conditionMessage(e), "user block 'failing'")
  expect_match(conditionMessage(e), "failed on purpose")
  mode <- "input"
  expect_match(conditionMessage(catch(mx_block_forward(b, x))), "its inputs")
  mode <- "value"
  expect_match(conditionMessage(catch(mx_block_forward(b, x))),
               "must return an mx_ndarray")
  mode <- "ok"
  expect_equal(as.vector(mx_block_forward(b, x)), c(2, -4, 6))
  expect_false(mx_is_freed(x))
  # A later unrelated failure carries its own message.
  e <- catch(mx_kvstore_pull(mx_kvstore(), "none", x))
  expect_false(grepl("on purpose", conditionMessage(e)))
  expect_error(mx_user_block(3), "function")
})

test_that("an error in forward inside fit() ends it with the message", {
  mx_seed(5)
  m <- classifier(fail_at = 5) |> mx_setup()
  e <- catch(mx_fit(m, make_blobs(240, 1, "train"), epochs = 2))
  expect_s3_class(e, "mxc_error")
  expect_match(conditionMessage(e), "user block 'unet'")
  expect_match(conditionMessage(e), "failed on purpose at call 5")
  # The net still trains afterwards.
  m <- mx_fit(m, make_blobs(240, 1, "train"), epochs = 1)
  expect_s3_class(m, "mx_model")
})
