# A million arrays created and dropped without mx_free(), and without
# calling gc(): their finalizers must free the native memory as R's
# garbage collector runs on its own, so resident memory stays flat.
#
#   Rscript bindings/r/tests/million.R [N]    (mxc installed; N = 1e6)
#
# Measures VmRSS after a warm-up of N/10 arrays (R's heap and mxc's
# allocator caches at their working size) and then every N/10 arrays and
# after a final gc(). Fails when the peak or the end exceeds the warm-up
# value by 64 MiB. Why 64 MiB: far above the noise seen here (R's heap
# growing its GC thresholds, malloc caching: about 10 MiB), far below a
# leak: a live array costs about 1 KiB (mxc handle, 16-byte buffer and
# bookkeeping, R external pointer and finalizer weak reference; 200k kept
# alive here took 198 MiB), so a million leaked arrays would hold about
# 1 GiB and a leak of even one array in 16 would fail the test.
suppressPackageStartupMessages(library(mxc))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
limit_mib <- 64

rss_mib <- function() {
  line <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}

x <- c(1, 2, 3, 4)
step <- max(1, n %/% 10)
for (i in seq_len(step)) a <- mx_array(x)
mx_wait_all()
base <- rss_mib()
peak <- base
t0 <- Sys.time()
for (i in seq_len(n)) {
  a <- mx_array(x)
  if (i %% step == 0) {
    peak <- max(peak, rss_mib())
    cat(sprintf("arrays=%d rss_mib=%.1f\n", i, rss_mib()))
  }
}
rm(a)
invisible(gc())
mx_wait_all()
end <- rss_mib()
cat(sprintf("n=%d warmup_rss_mib=%.1f peak_rss_mib=%.1f end_rss_mib=%.1f seconds=%.1f\n",
            n, base, peak, end,
            as.numeric(Sys.time() - t0, units = "secs")))
if (nzchar(Sys.getenv("MXC_SANITIZER"))) {
  # --config=asan/tsan (bindings/r/run_tests.sh): ASan keeps freed memory
  # in its quarantine (256 MiB) and both keep shadow memory, so RSS cannot
  # stay flat; LeakSanitizer checks for leaks at exit instead.
  cat("SKIPPED the resident-memory bound: sanitizer build\n")
} else if (peak - base > limit_mib || end - base > limit_mib) {
  cat(sprintf("FAIL: resident memory grew by more than %d MiB\n", limit_mib))
  quit(status = 1)
}
cat("PASS\n")
