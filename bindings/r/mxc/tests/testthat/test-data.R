# Writes a tiny IDX data set (the MNIST file format) and iterates over it.
write_idx <- function(path, magic, dims, bytes) {
  con <- file(path, "wb")
  on.exit(close(con))
  writeBin(as.integer(magic), con, size = 4, endian = "big")
  writeBin(as.integer(dims), con, size = 4, endian = "big")
  writeBin(as.raw(bytes), con)
}

test_that("the IDX iterator gives batches of scaled images and labels", {
  dir <- tempfile("idx")
  dir.create(dir)
  imgs <- file.path(dir, "images-idx3-ubyte")
  labs <- file.path(dir, "labels-idx1-ubyte")
  pix <- rep(c(0, 255, 51), length.out = 5 * 2 * 2)
  write_idx(imgs, 0x803, c(5, 2, 2), pix)
  write_idx(labs, 0x801, 5, 0:4)
  it <- mx_data_iter_idx(imgs, labs, batch_size = 2)
  expect_output(print(it), "mx_data_iter")
  batches <- 0
  while (mx_iter_next(it)) {
    batches <- batches + 1
    d <- mx_iter_data(it)
    expect_identical(dim(d), c(2L, 4L))
    if (batches == 1) {
      expect_equal(as.array(d), matrix(pix[1:8] / 255, 2, byrow = TRUE),
                   tolerance = 1e-6)
      expect_equal(as.vector(mx_iter_label(it)), c(0, 1))
    }
  }
  expect_equal(batches, 3)
  mx_iter_reset(it)
  expect_true(mx_iter_next(it))
  mx_free(it)
  expect_s3_class(tryCatch(mx_iter_next(it), mxc_error = function(e) e),
                  "mxc_error")
})
