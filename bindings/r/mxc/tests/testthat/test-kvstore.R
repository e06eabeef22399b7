# The KVStore in one process ("local"): sums against R's own sums, the
# optimizer by name against sgd's formula written here, errors naming the
# key, and "dist_sync" refused outside an MPI job. The 2-rank job is
# bindings/r/tests/kvstore_dist.R (run_tests.sh runs it under mpirun).

catch <- function(expr) tryCatch(expr, mxc_error = function(e) e)

test_that("push sums the values of a key and pull copies them out", {
  kv <- mx_kvstore()
  expect_equal(mx_kvstore_type(kv), "local")
  expect_equal(mx_kvstore_rank(kv), 0L)
  expect_equal(mx_kvstore_num_workers(kv), 1L)
  a <- c(1.5, -2, 3); b <- c(0.25, 4, -1); c3 <- c(10, 20, 30)
  mx_kvstore_init(kv, c("w", "v"), list(mx_zeros(3), mx_zeros(2)))
  mx_kvstore_push(kv, c("w", "w", "w"),
                  list(mx_array(a), mx_array(b), mx_array(c3)))
  out <- mx_zeros(3)
  mx_kvstore_pull(kv, "w", out)
  expect_equal(as.vector(out), a + b + c3)
  x <- mx_array(c(7, 8))
  mx_kvstore_pushpull(kv, "v", x)
  expect_equal(as.vector(x), c(7, 8))
  # Numeric keys are int keys: another name space than "3".
  mx_kvstore_init(kv, 3, mx_array(c(5, 6)))
  y <- mx_zeros(2)
  mx_kvstore_pull(kv, 3L, y)
  expect_equal(as.vector(y), c(5, 6))
  e <- tryCatch(mx_kvstore_pull(kv, "3", y), mxc_error = function(e) e)
  expect_equal(e$name, "MXC_ERR_NOT_FOUND")
  mx_barrier_ok <- mx_kvstore_barrier(kv)
  expect_identical(mx_barrier_ok, kv)
  expect_output(print(kv), "mx_kvstore local: rank 0 of 1")
  mx_free(kv)
  expect_true(mx_is_freed(kv))
})

test_that("an optimizer by name updates the stored value from the sum", {
  kv <- mx_kvstore("local", optimizer = "sgd_update", lr = 0.5, wd = 0.1)
  w0 <- c(1, -2, 4)
  mx_kvstore_init(kv, "w", mx_array(w0))
  g1 <- c(0.5, 1, -1); g2 <- c(1, 1, 1)
  mx_kvstore_push(kv, c("w", "w"), list(mx_array(g1), mx_array(g2)))
  w <- mx_zeros(3)
  mx_kvstore_pull(kv, "w", w)
  # sgd_update: w - lr * (grad + wd * w), grad the pushed sum.
  expect_equal(as.vector(w), w0 - 0.5 * ((g1 + g2) + 0.1 * w0),
               tolerance = 1e-6)
  mx_kvstore_set_optimizer(kv, "sgd_mom_update", lr = 0.1, momentum = 0.9)
  e <- catch(mx_kvstore_set_optimizer(kv, "no_such_update"))
  expect_s3_class(e, "mxc_error")
  mx_free(kv)
})

test_that("invalid use is an mxc_error naming the key", {
  kv <- mx_kvstore()
  e <- catch(mx_kvstore_push(kv, "never", mx_zeros(2)))
  expect_s3_class(e, "mxc_error")
  expect_equal(e$name, "MXC_ERR_NOT_FOUND")
  expect_match(conditionMessage(e), "key 'never'")
  mx_kvstore_init(kv, "w", mx_zeros(2))
  e <- catch(mx_kvstore_push(kv, "w", mx_zeros(3)))
  expect_equal(e$name, "MXC_ERR_SHAPE")
  expect_error(mx_kvstore_push(kv, c("w", "w"), mx_zeros(2)), "2 keys for 1")
  expect_error(mx_kvstore_push(kv, "w", 1:2), "mx_ndarray")
  expect_error(mx_kvstore_rank(42), "mx_kvstore")
  e <- catch(mx_kvstore("nonsense"))
  expect_equal(e$name, "MXC_ERR_INVALID_ARGUMENT")
  mx_free(kv)
  e <- catch(mx_kvstore_rank(kv))
  expect_s3_class(e, "mxc_error")
})

test_that("dist_sync outside an MPI job says why", {
  if (nzchar(Sys.getenv("OMPI_COMM_WORLD_SIZE")) ||
      nzchar(Sys.getenv("PMIX_RANK")) || nzchar(Sys.getenv("PMI_RANK")))
    skip("started by an MPI launcher")
  e <- catch(mx_kvstore("dist_sync"))
  expect_equal(e$name, "MXC_ERR_UNSUPPORTED")
  expect_match(conditionMessage(e), "not started by an MPI launcher")
})

test_that("int keys sum like string keys, in their own name space", {
  kv <- mx_kvstore()
  a <- c(1.5, -2, 3); b <- c(0.25, 4, -1); c3 <- c(10, 20, 30)
  mx_kvstore_init(kv, c(7, 8), list(mx_zeros(3), mx_zeros(3)))
  mx_kvstore_init(kv, "7", mx_array(c(9, 9, 9)))
  vals <- list(mx_array(a), mx_array(b), mx_array(c3))
  mx_kvstore_push(kv, c(7, 7, 7), vals)
  mx_kvstore_push(kv, c("7", "7", "7"), vals)
  by_int <- mx_zeros(3); by_str <- mx_zeros(3)
  mx_kvstore_pull(kv, 7, by_int)
  mx_kvstore_pull(kv, "7", by_str)
  expect_equal(as.vector(by_int), a + b + c3)
  expect_equal(as.vector(by_str), a + b + c3)
  x <- mx_array(c(1, 2, 3))
  mx_kvstore_pushpull(kv, 8L, x)
  expect_equal(as.vector(x), c(1, 2, 3))
  e <- catch(mx_kvstore_pull(kv, 9, x))
  expect_equal(e$name, "MXC_ERR_NOT_FOUND")
  e <- catch(mx_kvstore_pull(kv, 7.5, x))
  expect_equal(e$name, "MXC_ERR_INVALID_ARGUMENT")
  expect_match(conditionMessage(e), "whole numbers")
  mx_free(kv)
})

test_that("an R updater (w - lr * g by R's arithmetic) equals sgd_update", {
  by_r <- mx_kvstore()
  by_op <- mx_kvstore("local", optimizer = "sgd_update", lr = 0.25)
  seen <- list()
  mx_kvstore_set_updater(by_r, function(key, grad, weight) {
    seen[[length(seen) + 1L]] <<- key
    mx_assign(weight, as.vector(weight) - 0.25 * as.vector(grad))
  })
  set.seed(3)
  w0 <- rnorm(20)
  for (kv in list(by_r, by_op)) {
    mx_kvstore_init(kv, 5, mx_array(w0))
    mx_kvstore_init(kv, "w", mx_array(w0))
  }
  for (step in 1:3) {
    g1 <- rnorm(20); g2 <- rnorm(20)
    for (kv in list(by_r, by_op)) {
      mx_kvstore_push(kv, c(5, 5), list(mx_array(g1), mx_array(g2)))
      mx_kvstore_push(kv, "w", mx_array(g1))
    }
  }
  for (key in list(5, "w")) {
    a <- mx_zeros(20); b <- mx_zeros(20)
    mx_kvstore_pull(by_r, key, a)
    mx_kvstore_pull(by_op, key, b)
    expect_equal(as.vector(a), as.vector(b), tolerance = 1e-6)
  }
  expect_equal(seen, rep(list(5, "w"), 3))
  mx_free(by_r)
  mx_free(by_op)
})

test_that("an error in the R updater fails that push, naming the key", {
  kv <- mx_kvstore()
  fail <- TRUE
  mx_kvstore_set_updater(kv, function(key, grad, weight) {
    if (fail) stop("updater failed on purpose")
    mx_assign(weight, as.vector(grad) * 2)
  })
  mx_kvstore_init(kv, 4, mx_zeros(2))
  e <- catch(mx_kvstore_push(kv, 4, mx_ones(2)))
  expect_s3_class(e, "mxc_error")
  expect_equal(e$name, "MXC_ERR_OPERATOR")
  # mxc's prefixes, then the R error (mxc_set_last_error): the key once.
  expect_match(conditionMessage(e), "key 4: kvstore updater: .*failed on purpose")
  expect_false(grepl("key 4.*key 4", conditionMessage(e)))
  fail <- FALSE
  x <- mx_ones(2)
  mx_kvstore_pushpull(kv, 4, x)
  expect_equal(as.vector(x), c(2, 2))
  # A later unrelated failure carries its own message.
  e <- catch(mx_kvstore_pull(kv, "none", x))
  expect_false(grepl("on purpose", conditionMessage(e)))
  # Removed: the push stores the sum.
  mx_kvstore_set_updater(kv, NULL)
  mx_kvstore_pushpull(kv, 4, x)
  expect_equal(as.vector(x), c(2, 2))
  expect_error(mx_kvstore_set_updater(kv, 3), "function")
  mx_free(kv)
})
