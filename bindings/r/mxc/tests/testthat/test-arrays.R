test_that("numeric, integer and logical data round-trip through each dtype", {
  x <- array(c(-3.5, 0, 1.25, 2, 1e6, -7), c(2, 3))
  for (dt in c("float32", "float64")) {
    a <- mx_array(x, dt)
    expect_equal(as.array(a), x)
    expect_type(as.array(a), "double")
  }
  i <- array(c(-4L, 0L, 7L, 100000L, 3L, 9L), c(3, 2))
  for (dt in c("int32", "int64", "float64", "float32")) {
    expect_equal(as.array(mx_array(i, dt)), i + 0)
  }
  expect_identical(as.array(mx_array(i, "int32")), i)
  l <- c(TRUE, FALSE, TRUE)
  expect_identical(as.vector(mx_array(l, "bool")), l)
  expect_identical(as.vector(mx_array(l, "int32")), c(1L, 0L, 1L))
  expect_identical(as.vector(mx_array(l)), c(1, 0, 1))
  expect_identical(as.vector(mx_array(l, "float64")), c(1, 0, 1))
  expect_identical(as.vector(mx_array(i, "float32")), as.vector(i) + 0)
  expect_identical(as.vector(mx_array(c(1, 255), "uint8")), c(1L, 255L))
  expect_identical(as.vector(mx_array(c(-128, 127), "int8")), c(-128L, 127L))
  # float32 rounds to single precision.
  expect_equal(as.vector(mx_array(1 / 3)), 1 / 3, tolerance = 1e-7)
  expect_false(as.vector(mx_array(1 / 3)) == 1 / 3)
  expect_true(is.nan(as.vector(mx_array(NA_real_))))
})

test_that("the layout rule: same element at the same index", {
  x <- array(seq_len(2 * 3 * 4) + 0.5, c(2, 3, 4))
  a <- mx_array(x)
  expect_identical(dim(a), c(2L, 3L, 4L))
  expect_identical(length(a), 24L)
  y <- as.array(a)
  for (i in 1:2) for (j in 1:3) for (k in 1:4) expect_equal(y[i, j, k], x[i, j, k])
  # mxc is row-major: its flat data runs along the last index first.
  flat <- as.vector(mx_invoke("Reshape", a, params = list(shape = 24)))
  expect_equal(flat, as.vector(aperm(x)))
  # as.vector() follows R (column-major), like as.vector(as.array(a)).
  expect_equal(as.vector(a), as.vector(x))
  # Vectors are one-dimensional arrays.
  expect_identical(dim(mx_array(1:5)), 5L)
  # Slicing the first axis matches R's x[i, , ].
  s <- mx_invoke("slice_axis", a, params = list(axis = 0, begin = 1, end = 2))
  expect_equal(as.array(s)[1, , ], x[2, , ])
})

test_that("zeros, ones, assign, print and format", {
  z <- mx_zeros(c(2, 3), "float64")
  expect_equal(as.array(z), matrix(0, 2, 3))
  expect_equal(as.array(mx_ones(4)), array(1, 4))
  m <- matrix(1:6, 2)
  mx_assign(z, m)
  expect_equal(as.array(z), m + 0)
  mx_assign(z, mx_array(m * 2, "float64"))
  expect_equal(as.array(z), m * 2)
  expect_output(print(z), "<mx_ndarray float64 \\(2,3\\)>")
  expect_output(print(z), "row-major")
  expect_equal(format(mx_zeros(c(1, 1), "int32")), "<mx_ndarray int32 (1,1)>")
  mx_assign(z, 1:6) # a plain vector fills in row-major order
  expect_equal(as.array(z), matrix(1:6, 2, byrow = TRUE))
  expect_error(mx_assign(z, 1:5), "dim")
  expect_error(mx_assign(z, matrix(1:6, 3)), "dim")
  expect_error(mx_array(1, "complex64"), "unknown dtype")
  expect_error(mx_array("a"), "numeric or logical")
  expect_error(mx_array(factor("a")), "numeric or logical")
})

test_that("explicit free is idempotent and the finalizer then does nothing", {
  a <- mx_array(1:3)
  expect_false(mx_is_freed(a))
  mx_free(a)
  expect_true(mx_is_freed(a))
  mx_free(a)
  expect_output(print(a), "freed")
  rm(a)
  gc()
  b <- mx_array(1:3)
  expect_equal(as.vector(b), c(1, 2, 3))
})
