# A short version of bindings/r/tests/million.R (run by the Bazel test with
# a million arrays): arrays dropped without mx_free() are freed by their
# finalizers, so resident memory stays flat.

rss_mib <- function() {
  line <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}

test_that("dropped arrays are freed by the garbage collector", {
  skip_if_not(file.exists("/proc/self/status"), "no /proc/self/status")
  # ASan's quarantine and the sanitizers' shadow memory grow RSS by design.
  skip_if(nzchar(Sys.getenv("MXC_SANITIZER")), "sanitizer build: RSS is not flat")
  n <- as.integer(Sys.getenv("MXC_R_LEAK_ITERS", "40000"))
  x <- c(1, 2, 3, 4)
  for (i in seq_len(n %/% 4)) a <- mx_array(x) # warm-up
  gc()
  before <- rss_mib()
  for (i in seq_len(n)) a <- mx_array(x) + 1
  gc()
  mx_wait_all()
  # Each round leaks nothing; 64 MiB is far above the noise (R's heap
  # growth, allocator caching) yet far below what n unreleased arrays of
  # mxc (several hundred bytes each, with their outputs) would hold.
  expect_lt(rss_mib() - before, 64)
})
