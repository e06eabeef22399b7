# Every failure in C arrives as a condition of class mxc_error carrying the
# C message, the MXC_ERR_* code and its name; none crashes the session.

catch <- function(expr) tryCatch(expr, mxc_error = function(e) e)

test_that("errors carry the C message and code", {
  a <- mx_array(1:6)
  e <- catch(mx_invoke("no_such_operator", a))
  expect_s3_class(e, c("mxc_error", "error", "condition"))
  expect_match(conditionMessage(e), "unknown operator 'no_such_operator'")
  expect_identical(e$code, 7L)
  expect_identical(e$name, "MXC_ERR_NOT_FOUND")

  e <- catch(mx_array(1:6) + mx_array(1:4))
  expect_s3_class(e, "mxc_error")
  expect_identical(e$name, "MXC_ERR_SHAPE")
  expect_match(conditionMessage(e), "cannot be broadcast")

  e <- catch(mx_invoke("elemwise_add", mx_array(1:6), mx_array(1:4)))
  expect_identical(e$name, "MXC_ERR_SHAPE")

  e <- catch(mx_invoke("sum", a, params = list(axis = "not-an-axis")))
  expect_identical(e$name, "MXC_ERR_INVALID_ARGUMENT")
  expect_match(conditionMessage(e), "parameter 'axis'")
  e <- catch(mx_invoke("sum", a, params = list(no_such_param = 1)))
  expect_s3_class(e, "mxc_error")

  e <- catch(mx_invoke("elemwise_add", a))
  expect_s3_class(e, "mxc_error")
})

test_that("freed, missing and wrong handles are errors, not crashes", {
  a <- mx_array(1:3)
  mx_free(a)
  e <- catch(as.array(a))
  expect_identical(e$name, "MXC_ERR_INVALID_HANDLE")
  expect_match(conditionMessage(e), "freed")
  expect_s3_class(catch(a + 1), "mxc_error")
  expect_s3_class(catch(mx_invoke("exp", a)), "mxc_error")
  expect_s3_class(catch(dim(a)), "mxc_error")

  b <- mx_array(1:3)
  expect_identical(catch(mx_invoke("exp", 42))$name, "MXC_ERR_INVALID_HANDLE")
  expect_identical(catch(mx_invoke("exp", "x"))$name, "MXC_ERR_INVALID_HANDLE")
  expect_identical(catch(mx_invoke("exp", NULL))$name, "MXC_ERR_INVALID_HANDLE")
  s <- mx_symbol_variable("s")
  expect_identical(catch(mx_invoke("exp", s))$name, "MXC_ERR_INVALID_HANDLE")
  expect_identical(catch(mx_forward(b))$name, "MXC_ERR_INVALID_HANDLE")
  expect_error(mx_grad(s), "mx_ndarray")
  e <- catch(mx_grad(b)) # not marked for autograd
  expect_s3_class(e, "mxc_error")
})

test_that("bad sizes, shapes, dtypes and files are errors", {
  a <- mx_zeros(c(2, 3))
  # The low-level copy checks the length against the array's size.
  e <- catch(.Call(mxc:::C_R_swig_r_ndarray_from_r, a, c(1, 2, 3)))
  expect_identical(e$name, "MXC_ERR_SHAPE")
  e <- catch(.Call(mxc:::C_R_swig_ndarray_copy_from, a, raw(5)))
  expect_s3_class(e, "mxc_error")
  e <- catch(.Call(mxc:::C_R_swig_ndarray_copy_to, a, raw(3)))
  expect_s3_class(e, "mxc_error")
  expect_s3_class(catch(mx_zeros(c(2, -1))), "mxc_error")
  expect_s3_class(catch(mx_zeros(c(2, NA))), "mxc_error")
  expect_s3_class(catch(mx_zeros(1:40)), "mxc_error")
  expect_s3_class(catch(mx_array(NA, "int32")), "mxc_error")
  expect_s3_class(catch(.Call(mxc:::C_R_swig_ndarray_dim, a, integer(0), FALSE)),
                  "mxc_error")
  expect_s3_class(catch(.Call(mxc:::C_R_swig_ndarray_dim, a, 7L, FALSE)),
                  "mxc_error")
  e <- catch(mx_data_iter_idx(file.path(tempdir(), "missing-images"),
                              file.path(tempdir(), "missing-labels")))
  expect_identical(e$name, "MXC_ERR_IO")
  expect_s3_class(catch(mx_simple_bind(mx_symbol_variable("x"),
                                       list(x = c(2, 3), y = c(1)))),
                  "mxc_error")
  expect_s3_class(catch(mx_initialize(mx_zeros(3), "no_such_method")),
                  "mxc_error")
  expect_error(mx_invoke("sum", a, params = list(1)), "named list")
})
