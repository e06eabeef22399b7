# Predictors and checkpoints on the model scripts/make_predictor_model.py
# writes (its numpy forward is the reference; the Bazel test points
# MXC_PREDICTOR_MODEL at the files of //tests/predict:model), and the real
# Fashion-MNIST model of the shared mxnet-models directory
# (MXC_MXNET_MODELS; skipped when absent).

catch <- function(expr) tryCatch(expr, mxc_error = function(e) e)

model <- function() {
  d <- Sys.getenv("MXC_PREDICTOR_MODEL")
  if (!nzchar(d) || !file.exists(file.path(d, "meta.txt")))
    skip("MXC_PREDICTOR_MODEL does not name the predictor test model")
  meta <- scan(file.path(d, "meta.txt"), quiet = TRUE)
  f32 <- function(f) readBin(file.path(d, f), "numeric", n = 1e6, size = 4,
                             endian = "little")
  list(prefix = file.path(d, "model"), batch = meta[1], shape = meta[2:4],
       classes = meta[5], x = f32("input.f32"), want = f32("expected.f32"))
}

# Rows of the numpy output (row-major on disk) as a batch x classes matrix.
rows <- function(m, i) {
  matrix(m$want, ncol = m$classes, byrow = TRUE)[i, , drop = FALSE]
}

text <- function(f) readChar(f, file.size(f), useBytes = TRUE)

image <- function(m, i) {
  n <- prod(m$shape)
  m$x[((i - 1) * n + 1):(i * n)]
}

test_that("a checkpoint predictor matches the numpy forward", {
  m <- model()
  p <- mx_predictor(m$prefix, 0, list(data = c(m$batch, m$shape)))
  expect_s3_class(p, "mx_predictor")
  expect_identical(mx_predictor_num_outputs(p), 1L)
  y <- mx_predict(p, m$x)
  expect_equal(dim(y), c(m$batch, m$classes))
  expect_equal(y, rows(m, seq_len(m$batch)), tolerance = 1e-5)
  mx_free(p)
  expect_true(mx_is_freed(p))
  expect_identical(catch(mx_predictor_forward(p))$name,
                   "MXC_ERR_INVALID_HANDLE")
})

test_that("bytes, named outputs, reshape and clone", {
  m <- model()
  json <- text(paste0(m$prefix, "-symbol.json"))
  f <- paste0(m$prefix, "-0000.params")
  params <- readBin(f, "raw", file.size(f))
  p <- mx_predictor_from_json(json, params, list(data = c(m$batch, m$shape)),
                              outputs = c("fc", "softmax"))
  mx_predictor_forward(p, data = mx_array(array(0, c(m$batch, m$shape))))
  mx_predictor_forward(p, data = m$x)
  expect_identical(mx_predictor_num_outputs(p), 2L)
  expect_equal(mx_predictor_output(p, 2), rows(m, seq_len(m$batch)), tolerance = 1e-5)
  one <- mx_predictor_reshape(p, list(data = c(1, m$shape)))
  other <- mx_predictor_clone(one)
  for (i in seq_len(m$batch)) {
    q <- if (i %% 2) one else other
    # Output 2 is the softmax (mx_predict would give output 1, "fc").
    mx_predictor_forward(q, data = image(m, i))
    expect_equal(mx_predictor_output(q, 2), rows(m, i), tolerance = 1e-5)
  }
})

test_that("bad input raises mxc_error", {
  m <- model()
  e <- catch(mx_predictor(m$prefix, 0, list(image = c(1, m$shape))))
  expect_identical(e$name, "MXC_ERR_NOT_FOUND")
  e <- catch(mx_predictor(m$prefix, 0, list(data = c(1, 2, 6, 6))))
  expect_identical(e$name, "MXC_ERR_SHAPE")
  e <- catch(mx_predictor(paste0(m$prefix, "x"), 0, list(data = c(1, m$shape))))
  expect_identical(e$name, "MXC_ERR_IO")
  f <- paste0(m$prefix, "-0000.params")
  json <- text(paste0(m$prefix, "-symbol.json"))
  cut <- readBin(f, "raw", file.size(f) - 7)
  e <- catch(mx_predictor_from_json(json, cut, list(data = c(1, m$shape))))
  expect_identical(e$name, "MXC_ERR_IO")
  expect_match(conditionMessage(e), "offset")
  expect_error(mx_predictor(m$prefix, 0, list()), "named list")
  p <- mx_predictor(m$prefix, 0, list(data = c(1, m$shape)))
  expect_error(mx_predict(p, m$x), "dst has shape")
  expect_error(mx_predictor_forward(p, label = 1), "not an input")
  expect_identical(catch(mx_predictor_output(p, 5))$name,
                   "MXC_ERR_INVALID_ARGUMENT")
})

test_that("checkpoints load and save", {
  m <- model()
  ck <- mx_checkpoint_load(m$prefix, 0)
  expect_s3_class(ck$symbol, "mx_symbol")
  expect_true("bn_moving_var" %in% names(ck$aux_params))
  expect_equal(dim(ck$arg_params$conv_weight), c(4, 3, 3, 3))
  prefix <- file.path(tempdir(), "again")
  mx_checkpoint_save(prefix, 5, ck$symbol, ck$arg_params, ck$aux_params)
  p <- mx_predictor(prefix, 5, list(data = c(m$batch, m$shape)))
  expect_equal(mx_predict(p, m$x), rows(m, seq_len(m$batch)), tolerance = 1e-5)
  expect_identical(catch(mx_checkpoint_load(prefix, 6))$name, "MXC_ERR_IO")
})

test_that("the real Fashion-MNIST model reaches its known accuracy", {
  dir <- Sys.getenv("MXC_MXNET_MODELS")
  data <- Sys.getenv("MXC_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")
  img <- file.path(data, "t10k-images-idx3-ubyte.gz")
  prefix <- file.path(dir, "mentalblood_fashion-mnist")
  if (!nzchar(dir) || !file.exists(paste0(prefix, "-symbol.json")) ||
      !file.exists(img))
    skip("shared mxnet-models or Fashion-MNIST not found")
  batch <- 1000
  p <- mx_predictor(prefix, 39, list(data = c(batch, 1, 28, 28)))
  it <- mx_data_iter_idx(img, sub("images-idx3", "labels-idx1", img), batch)
  correct <- 0
  total <- 0
  while (mx_iter_next(it)) {
    # Rows of the (batch, 784) batch, in row-major order.
    x <- (as.vector(t(as.array(mx_iter_data(it)))) - 0.2860) / 0.3530
    probs <- mx_predict(p, x)
    labels <- as.vector(mx_iter_label(it))
    correct <- correct + sum(max.col(probs, ties.method = "first") - 1 == labels)
    total <- total + batch
  }
  expect_equal(total, 10000)
  expect_equal(correct / total, 0.868, tolerance = 0.005 / 0.868)
})

# R serves from many processes, not threads: callr workers each load the
# model (inside with_scope, so each request's arrays are freed at once)
# and answer requests; every answer must equal the in-process one.
test_that("callr workers serve the model concurrently", {
  skip_if_not_installed("callr")
  skip_if(nzchar(Sys.getenv("MXC_SANITIZER")), "sanitizer build: no subprocesses")
  m <- model()
  p <- mx_predictor(m$prefix, 0, list(data = c(1, m$shape)))
  ref <- lapply(seq_len(m$batch), function(i) mx_predict(p, image(m, i)))
  mx_free(p)
  serve <- function(prefix, shape, images) {
    library(mxc)
    p <- mx_predictor(prefix, 0, list(data = c(1, shape)))
    lapply(images, function(x) with_scope(mx_predict(p, x)))
  }
  images <- lapply(seq_len(m$batch), function(i) image(m, i))
  workers <- lapply(1:3, function(w) callr::r_bg(
    serve, args = list(m$prefix, m$shape, rep(images, 5)),
    libpath = .libPaths()))
  for (w in workers) {
    w$wait(60000)
    got <- w$get_result()
    expect_length(got, 5 * m$batch)
    for (k in seq_along(got)) {
      expect_identical(got[[k]], ref[[(k - 1) %% m$batch + 1]])
    }
  }
})
