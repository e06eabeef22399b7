# Arrays and executors on GPUs, copies between devices, and the error for
# a GPU that cannot be used. The GPU cases skip when mxc sees no GPU; the
# Bazel test runs them on the fake plug-in (tests/gpu/fake_plugin.c: two
# GPUs whose memory the host cannot read, so a path that read device
# memory on the host would crash here).

skip_without_gpus <- function(n) {
  have <- mx_num_gpus()
  if (have < n) skip(paste0("needs ", n, " GPU(s); mxc sees ", have))
}

test_that("device values", {
  expect_equal(format(mx_gpu(1)), "gpu(1)")
  expect_equal(format(mx_cpu()), "cpu(0)")
  expect_output(print(mx_gpu(0)), "gpu\\(0\\)")
  expect_error(mx_gpu(-1), "device id")
  expect_identical(mx_device(mx_zeros(2)), mx_cpu())
  expect_error(mx_array(1, device = "gpu"), "mx_gpu")
})

test_that("arrays go gpu(0) -> gpu(1) -> cpu unchanged", {
  skip_without_gpus(2)
  x <- matrix(c(-2, -1.5, 0, 0.25, 3, 8.5), 2, 3)
  g0 <- mx_array(x, device = mx_gpu(0))
  expect_identical(mx_device(g0), mx_gpu(0))
  g1 <- mx_copyto(g0, mx_gpu(1))
  expect_identical(mx_device(g1), mx_gpu(1))
  expect_equal(dim(g1), c(2L, 3L))
  h <- mx_copyto(g1, mx_cpu())
  expect_identical(mx_device(h), mx_cpu())
  expect_identical(as.array(h), x)
  expect_identical(as.array(g1), x) # a read copies to the host
})

test_that("zeros and ones on a GPU", {
  skip_without_gpus(1)
  z <- mx_zeros(c(2, 2), "float64", device = mx_gpu(0))
  expect_identical(mx_device(z), mx_gpu(0))
  expect_identical(as.array(z), matrix(0, 2, 2))
  o <- mx_ones(3, device = mx_gpu(1))
  expect_identical(as.vector(o), c(1, 1, 1))
  mx_assign(z, mx_array(matrix(1:4, 2, 2), "float64"))
  expect_identical(as.array(z), matrix(as.double(1:4), 2, 2))
})

test_that("element-wise operators run on the GPU", {
  skip_without_gpus(1)
  a <- mx_array(c(-1.5, 0, 2, 3.25), device = mx_gpu(0))
  b <- mx_array(c(0.5, -4, 1, 0.75), device = mx_gpu(0))
  s <- mx_invoke("elemwise_add", a, b)
  expect_identical(mx_device(s), mx_gpu(0))
  # Expected values worked out by hand.
  expect_identical(as.vector(s), c(-1, -4, 3, 4))
  expect_identical(as.vector(mx_invoke("relu", a)), c(0, 0, 2, 3.25))
})

test_that("an executor bound on a GPU", {
  skip_without_gpus(2)
  data <- mx_symbol_variable("data")
  net <- mx_symbol_op("relu", data, name = "r")
  ex <- mx_simple_bind(net, list(data = c(2, 3)), grad_req = "null",
                       device = mx_gpu(1))
  d <- mx_exec_arg(ex, "data")
  expect_identical(mx_device(d), mx_gpu(1))
  expect_identical(as.array(d), matrix(0, 2, 3)) # simple_bind's zeros
  x <- matrix(c(-3, 1, -0.5, 2, 0, 4), 2, 3)
  mx_assign(d, x)
  out <- mx_forward(ex)[[1]]
  expect_identical(mx_device(out), mx_gpu(1))
  expect_identical(as.array(out), pmax(x, 0))
})

test_that("a GPU that cannot be used is an mxc_error", {
  n <- mx_num_gpus()
  missing <- mx_gpu(n + 5)
  e <- tryCatch(mx_array(1:2, device = missing), mxc_error = function(e) e)
  expect_s3_class(e, "mxc_error")
  expect_identical(e$name, "MXC_ERR_UNSUPPORTED")
  expect_error(mx_device_check(missing), class = "mxc_error")
  expect_error(mx_copyto(mx_array(1), missing), class = "mxc_error")
  if (n > 0) expect_identical(mx_device_check(mx_gpu(0)), mx_gpu(0))
})
