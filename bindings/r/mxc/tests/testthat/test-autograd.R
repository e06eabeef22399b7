test_that("gradients match the analytic ones", {
  x <- c(1.5, -2, 3)
  v <- mx_array(x, "float64")
  mx_mark_variables(v)
  mx_record(y <- mx_invoke("sum", v * v))
  mx_backward(y)
  expect_equal(as.vector(mx_grad(v)), 2 * x)

  # loss = mean((X w - t)^2): d/dw = 2/n X^T (X w - t)
  set.seed(2)
  X <- matrix(rnorm(12), 4, 3)
  w0 <- matrix(rnorm(3), 3, 1)
  t0 <- matrix(rnorm(4), 4, 1)
  w <- mx_array(w0, "float64")
  mx_mark_variables(list(w))
  mx_record({
    r <- mx_invoke("dot", mx_array(X, "float64"), w) - mx_array(t0, "float64")
    loss <- mx_invoke("mean", r * r)
  })
  mx_backward(loss)
  expect_equal(as.vector(loss), mean((X %*% w0 - t0)^2))
  expect_equal(as.array(mx_grad(w)), 2 / 4 * t(X) %*% (X %*% w0 - t0))
})

test_that("recording is restored after mx_record, also on error", {
  v <- mx_array(1:2, "float64")
  mx_mark_variables(v)
  expect_error(mx_record(stop("boom")), "boom")
  y <- mx_invoke("sum", v * v) # not recorded
  expect_error(mx_backward(y), class = "mxc_error")
})
