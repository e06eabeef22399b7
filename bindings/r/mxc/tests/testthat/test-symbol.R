test_that("an executor's forward and backward match R", {
  data <- mx_symbol_variable("data")
  fc <- mx_symbol_op("FullyConnected", data, params = list(num_hidden = 3),
                     name = "fc")
  expect_equal(mx_symbol_arguments(fc), c("data", "fc_weight", "fc_bias"))
  expect_length(mx_symbol_outputs(fc), 1)
  json <- mx_symbol_to_json(fc)
  expect_match(json, "FullyConnected")
  fc2 <- mx_symbol_from_json(json)
  expect_equal(mx_symbol_arguments(fc2), mx_symbol_arguments(fc))
  expect_output(print(fc), "mx_symbol")

  ex <- mx_simple_bind(fc, list(data = c(4, 2)))
  set.seed(3)
  x <- matrix(rnorm(8), 4, 2)
  w <- matrix(rnorm(6), 3, 2)
  b <- rnorm(3)
  mx_assign(mx_exec_arg(ex, "data"), x)
  mx_assign(mx_exec_arg(ex, "fc_weight"), w)
  mx_assign(mx_exec_arg(ex, "fc_bias"), b)
  out <- mx_forward(ex, is_train = TRUE)
  expect_length(out, 1)
  expect_equal(as.array(out[[1]]), x %*% t(w) + matrix(b, 4, 3, byrow = TRUE),
               tolerance = 1e-6)
  mx_backward_exec(ex)
  g <- matrix(1, 4, 3) # head gradient: ones
  expect_equal(as.array(mx_exec_grad(ex, "fc_weight")), t(g) %*% x,
               tolerance = 1e-6)
  expect_equal(as.vector(mx_exec_grad(ex, "fc_bias")), colSums(g))
  expect_equal(as.array(mx_exec_outputs(ex)[[1]]), as.array(out[[1]]))
  grp <- mx_symbol_group(fc, data)
  expect_length(mx_symbol_outputs(grp), 2)
  mx_free(ex)
  mx_free(ex)
  expect_error(mx_forward(ex), class = "mxc_error")
})

test_that("auxiliary states follow BatchNorm's moving average", {
  data <- mx_symbol_variable("data")
  bn <- mx_symbol_op("BatchNorm", data, params = list(momentum = 0.25),
                     name = "bn")
  ex <- mx_simple_bind(bn, list(data = c(4, 3)), grad_req = "null")
  x <- matrix(as.numeric(1:12), 4, 3, byrow = TRUE)
  mx_assign(mx_exec_arg(ex, "data"), x)
  mx_assign(mx_exec_arg(ex, "bn_gamma"), c(1, 1, 1))
  mx_forward(ex, is_train = TRUE)
  # moving = 0 * momentum + batch mean * (1 - momentum); starts at 0
  expect_equal(as.vector(mx_exec_aux(ex, "bn_moving_mean")),
               colMeans(x) * (1 - 0.25), tolerance = 1e-6)
  expect_error(mx_exec_aux(ex, "bn_no_such_state"), class = "mxc_error")
  mx_free(ex)
})
