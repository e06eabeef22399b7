# The R binding's KVStore across the ranks of an MPI job (run_tests.sh
# runs it with mpirun -np 2): init takes rank 0's value, pushpull sums
# over the ranks (integers: exact), and 20 steps of an optimizer chosen by
# name leave the same bytes on every rank, and an int key goes through an
# R updater. Stops with an error (nonzero
# status) on the first failure.
library(mxc)

check <- function(ok, what) if (!isTRUE(ok)) stop(what, call. = FALSE)

kv <- mx_kvstore("dist_sync")
rank <- mx_kvstore_rank(kv)
n <- mx_kvstore_num_workers(kv)
check(n == as.integer(Sys.getenv("MXC_TEST_NP", "2")), "num_workers")

w <- mx_array(rep(rank + 1, 4))
mx_kvstore_init(kv, "w", w)
mx_kvstore_pull(kv, "w", w)
check(all(as.vector(w) == 1), "init takes rank 0's value")

g <- mx_array((0:5) * (rank + 1))
mx_kvstore_init(kv, "g", mx_zeros(6))
mx_kvstore_pushpull(kv, "g", g)
check(all(as.vector(g) == (0:5) * n * (n + 1) / 2), "pushpull sums the ranks")

mx_kvstore_set_optimizer(kv, "adam_update", lr = 0.01, rescale_grad = 0.5)
set.seed(100 + rank)
p <- mx_array(rnorm(1000))
mx_kvstore_init(kv, "p", p)
for (i in 1:20) mx_kvstore_push(kv, "p", mx_array(rnorm(1000)))
mx_kvstore_pull(kv, "p", p)
mine <- writeBin(as.vector(p), raw(), size = 4)
base <- file.path(Sys.getenv("TEST_TMPDIR", tempdir()), "r_kv_")
writeBin(mine, paste0(base, rank))
mx_kvstore_barrier(kv)
if (rank == 0) {
  for (r in seq_len(n - 1)) {
    theirs <- readBin(paste0(base, r), "raw", n = length(mine) + 1)
    check(identical(theirs, mine), paste("rank", r, "holds other bytes"))
  }
}
mx_kvstore_barrier(kv)

# An int key through an R updater (w - 0.5 g by R's arithmetic): rank 0's
# value minus half the sum over the ranks, on every rank.
mx_kvstore_set_updater(kv, function(key, grad, weight)
  mx_assign(weight, as.vector(weight) - 0.5 * as.vector(grad)))
q <- mx_array(c(10 * (rank + 1), 3))
mx_kvstore_init(kv, 7, q)
mx_kvstore_push(kv, 7, mx_array(c(rank + 1, 2)))
mx_kvstore_pull(kv, 7, q)
check(all(as.vector(q) == c(10 - 0.5 * n * (n + 1) / 2, 3 - n)),
      "int key through the R updater")
mx_free(kv)
cat(sprintf("rank %d of %d: ok\n", rank, n))
