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
  # Numeric keys are their decimal text.
  mx_kvstore_init(kv, 3, mx_array(c(5, 6)))
  y <- mx_zeros(2)
  mx_kvstore_pull(kv, "3", y)
  expect_equal(as.vector(y), c(5, 6))
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
